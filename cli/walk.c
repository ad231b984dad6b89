/*
 * The directory walker of cli/walk.h. Directories are read whole (names sorted in byte
 * order, so the order of documents is the same on every file system), then entered
 * depth-first. Entries are stat()ed, so symbolic links are followed as find -L does; a
 * dangling link is skipped silently, as it was before links to directories were
 * followed.
 *
 * HOW IT WORKS: every directory entered goes into a set keyed by (st_dev, st_ino) (open
 * addressing, linear probing, doubled at half load, capped at CLI_WALK_MAX_DIRS). An entry
 * is "active" while the directory is being walked, i.e. it is an ancestor of the current
 * one, and records its depth; the stack of paths of the active directories names the
 * target of a loop. A directory found active again is a loop (find -L's "file system loop
 * detected"); found inactive, it was walked already by another way (a second link to it):
 * either way it is not entered again, so every directory is entered once and the set
 * holds one slot per distinct directory. POSIX: directories are identified by
 * (st_dev, st_ino) (XBD 4.6, "File Hierarchy"; nftw(3) FTW_PHYS without it loops).
 */
#include "cli/walk.h"

#include "cli/cli.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

struct dirkey {
    dev_t dev;
    ino_t ino;
    unsigned used;   /* 0 = empty slot */
    unsigned active; /* being walked: an ancestor of the current directory */
    unsigned depth;  /* its depth while active (an index into walk.stack) */
};

struct walk {
    const char *cmd;
    const struct cli_walk_ops *ops;
    void *userdata;
    struct dirkey *slot;
    size_t mask, n;
    const char *stack[CLI_WALK_MAX_DEPTH + 1]; /* paths of the active directories */
};

static size_t key_hash(dev_t dev, ino_t ino)
{
    uint64_t h = (uint64_t)ino * 0x9E3779B97F4A7C15ull ^ (uint64_t)dev * 0xC2B2AE3D27D4EB4Full;
    return (size_t)(h ^ (h >> 29));
}

static struct dirkey *key_find(struct walk *w, dev_t dev, ino_t ino)
{
    size_t j = key_hash(dev, ino) & w->mask;
    while (w->slot[j].used) {
        if (w->slot[j].dev == dev && w->slot[j].ino == ino)
            return &w->slot[j];
        j = (j + 1) & w->mask;
    }
    return &w->slot[j];
}

enum enter { ENTER_NEW, ENTER_LOOP, ENTER_SEEN, ENTER_FULL, ENTER_NOMEM };

/* Looks the directory st up; a new one is inserted active at depth (*k). */
static enum enter key_enter(struct walk *w, const struct stat *st, unsigned depth,
                            struct dirkey **k)
{
    if (!w->slot || (w->n + 1) * 2 > w->mask + 1) {
        if (w->n >= CLI_WALK_MAX_DIRS)
            return ENTER_FULL;
        size_t size = w->slot ? (w->mask + 1) * 2 : 64;
        struct dirkey *ns = calloc(size, sizeof *ns);
        if (!ns)
            return ENTER_NOMEM;
        struct dirkey *old = w->slot;
        size_t old_size = old ? w->mask + 1 : 0;
        w->slot = ns;
        w->mask = size - 1;
        for (size_t i = 0; i < old_size; i++)
            if (old[i].used)
                *key_find(w, old[i].dev, old[i].ino) = old[i];
        free(old);
    }
    struct dirkey *e = key_find(w, st->st_dev, st->st_ino);
    *k = e;
    if (e->used)
        return e->active ? ENTER_LOOP : ENTER_SEEN;
    e->used = 1;
    e->dev = st->st_dev;
    e->ino = st->st_ino;
    e->active = 1;
    e->depth = depth;
    w->n++;
    return ENTER_NEW;
}

static int name_cmp(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void skip(struct walk *w, const char *path, int failed, const char *fmt, ...)
    __attribute__((format(printf, 4, 5)));
static void skip(struct walk *w, const char *path, int failed, const char *fmt, ...)
{
    char what[4096 + 64];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    w->ops->skip(w->userdata, path, what, failed);
}

/* Reads the names of dir, sorted; 0, 1 when it cannot be read (reported), -1 no memory. */
static int list_dir(struct walk *w, const char *dir, char ***out, size_t *count)
{
    *out = NULL;
    *count = 0;
    DIR *d = opendir(dir);
    if (!d) {
        skip(w, dir, 1, "cannot read directory: %s", strerror(errno));
        return 1;
    }
    char **names = NULL;
    size_t n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n == cap) {
            size_t nc = cap ? cap * 2 : 64;
            char **nn = realloc(names, nc * sizeof *nn);
            if (!nn)
                goto fail;
            names = nn;
            cap = nc;
        }
        names[n] = strdup(e->d_name);
        if (!names[n])
            goto fail;
        n++;
    }
    closedir(d);
    if (n)
        qsort(names, n, sizeof *names, name_cmp);
    *out = names;
    *count = n;
    return 0;
fail:
    closedir(d);
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return -1;
}

/* Walks dir (already entered in the set at depth). 0, or -1 (stopped / out of memory). */
static int walk_dir(struct walk *w, const char *dir, unsigned depth)
{
    char **names;
    size_t n;
    int rc = list_dir(w, dir, &names, &n);
    if (rc != 0) {
        if (rc < 0)
            cli_error(w->cmd, "%s: out of memory listing the directory", dir);
        return rc < 0 ? -1 : 0;
    }
    w->stack[depth] = dir;
    size_t dlen = strlen(dir);
    int slash = dlen > 0 && dir[dlen - 1] == '/';
    for (size_t i = 0; i < n && rc == 0; i++) {
        size_t plen = dlen + strlen(names[i]) + 2;
        char *path = malloc(plen);
        if (!path) {
            cli_error(w->cmd, "%s: out of memory", dir);
            rc = -1;
            break;
        }
        snprintf(path, plen, "%s%s%s", dir, slash ? "" : "/", names[i]);
        struct stat st;
        if (stat(path, &st) != 0) {
            int err = errno;
            if (lstat(path, &st) != 0 || !S_ISLNK(st.st_mode)) /* a dangling link: skipped */
                skip(w, path, 1, "%s", strerror(err));
        } else if (S_ISDIR(st.st_mode)) {
            struct dirkey *k = NULL;
            if (depth + 1 > CLI_WALK_MAX_DEPTH) {
                skip(w, path, 1, "directories nested deeper than %u: not read", CLI_WALK_MAX_DEPTH);
                free(path);
                continue;
            }
            switch (key_enter(w, &st, depth + 1, &k)) {
            case ENTER_NEW:
                rc = walk_dir(w, path, depth + 1);
                k = key_find(w, st.st_dev, st.st_ino); /* the set may have grown */
                k->active = 0;
                break;
            case ENTER_LOOP:
                skip(w, path, 1, "directory loop (the same directory as %s), skipped",
                     w->stack[k->depth]);
                break;
            case ENTER_SEEN:
                skip(w, path, 0, "the same directory as one already read, skipped");
                break;
            case ENTER_FULL:
                skip(w, path, 1, "more than %u directories in one walk: not read",
                     CLI_WALK_MAX_DIRS);
                break;
            case ENTER_NOMEM:
                cli_error(w->cmd, "%s: out of memory remembering directories", path);
                rc = -1;
                break;
            }
        } else if (S_ISREG(st.st_mode)) {
            if (w->ops->file(w->userdata, path, names[i]) != 0)
                rc = -1;
        }
        free(path);
    }
    for (size_t i = 0; i < n; i++)
        free(names[i]);
    free(names);
    return rc;
}

int cli_walk(const char *cmd, const char *dir, const struct cli_walk_ops *ops, void *userdata)
{
    struct walk w;
    memset(&w, 0, sizeof w);
    w.cmd = cmd;
    w.ops = ops;
    w.userdata = userdata;
    struct stat st;
    struct dirkey *k;
    int rc = 0;
    if (stat(dir, &st) != 0) {
        skip(&w, dir, 1, "cannot read directory: %s", strerror(errno));
        return 0;
    }
    switch (key_enter(&w, &st, 0, &k)) {
    case ENTER_NEW:
        rc = walk_dir(&w, dir, 0);
        break;
    default: /* an empty set takes its first directory unless memory is short */
        cli_error(cmd, "%s: out of memory remembering directories", dir);
        rc = -1;
        break;
    }
    free(w.slot);
    return rc;
}
