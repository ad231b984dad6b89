/*
 * The writers' lock of an index file (dedup.h, "the writers' lock"; docs/INDEX-FORMAT.md,
 * "Writing"). A writer of X holds an exclusive flock(2) on X.lock from before it loads X
 * until after it has renamed its new X (and X.digests) into place, so read-modify-write
 * cycles of two processes never overlap and no run's documents are lost.
 *
 * Why flock(2) on a separate lock file: X is replaced by rename() at every save, so a lock
 * on X's inode would be on a file that is no longer the index once the first writer saves
 * (the next writer opens the new inode and is not stopped). flock, like OFD locks (and
 * unlike classic fcntl locks), belongs to the open file description, so closing another
 * descriptor of the file elsewhere in the process does not drop it, and the kernel drops
 * it when the process ends, however it ends (kill -9 included): no stale lock to clean.
 * It is also what flock(1) takes, so a script can hold the lock (`flock X.lock cp X ...`).
 * A busy lock is polled (LOCK_NB, 5 ms growing to 100 ms) until the deadline: no signals,
 * no process-wide state.
 */
#define _DEFAULT_SOURCE /* flock() (sys/file.h) under -D_POSIX_C_SOURCE */
#include "dedup/dedup_int.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/file.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

struct dedup_lock {
    int fd;
};

static double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec * 1e3 + (double)ts.tv_nsec / 1e6;
}

static void sleep_ms(unsigned ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)(ms % 1000) * 1000000L};
    while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
        ;
}

/* The pid the holder wrote into the lock file, or 0. */
static long holder_pid(int fd)
{
    char buf[32];
    ssize_t n = pread(fd, buf, sizeof buf - 1, 0);
    if (n <= 0)
        return 0;
    buf[n] = '\0';
    char *end;
    long pid = strtol(buf, &end, 10);
    return pid > 0 && (*end == '\n' || *end == '\0') ? pid : 0;
}

/* "1" or more decimal digits, and nothing else. */
static int all_digits(const char *s)
{
    if (!*s)
        return 0;
    for (; *s; s++)
        if (*s < '0' || *s > '9')
            return 0;
    return 1;
}

/* Is name (a directory entry) a temporary file of the index whose file name is base? */
static int is_leftover(const char *name, const char *base, size_t blen)
{
    static const char *const with_pid[] = {".tmp.", ".digests.tmp."};
    if (strncmp(name, base, blen) != 0)
        return 0;
    const char *rest = name + blen;
    for (size_t i = 0; i < sizeof with_pid / sizeof with_pid[0]; i++) {
        size_t n = strlen(with_pid[i]);
        if (strncmp(rest, with_pid[i], n) == 0 && all_digits(rest + n))
            return 1;
    }
    return strcmp(rest, ".digests.tmp") == 0; /* the name before the pid was added */
}

/*
 * Removes the temporary files a killed writer of index_path left behind. Safe only while
 * holding the lock: every writer holds it while its temporary files exist. Best effort: a
 * file that cannot be removed is left (the next save writes its own name anyway).
 */
static unsigned remove_leftovers(const char *index_path)
{
    const char *slash = strrchr(index_path, '/');
    const char *base = slash ? slash + 1 : index_path;
    size_t blen = strlen(base);
    char *dir = NULL;
    if (slash) {
        size_t dlen = slash == index_path ? 1 : (size_t)(slash - index_path);
        dir = malloc(dlen + 1);
        if (!dir)
            return 0;
        memcpy(dir, index_path, dlen);
        dir[dlen] = '\0';
    }
    unsigned removed = 0;
    DIR *d = opendir(dir ? dir : ".");
    free(dir);
    if (!d)
        return 0;
    const struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        struct stat st;
        if (!is_leftover(e->d_name, base, blen))
            continue;
        if (fstatat(dirfd(d), e->d_name, &st, AT_SYMLINK_NOFOLLOW) != 0 || !S_ISREG(st.st_mode))
            continue;
        if (unlinkat(dirfd(d), e->d_name, 0) == 0)
            removed++;
    }
    closedir(d);
    return removed;
}

enum dedup_code dedup_lock_acquire(const char *index_path, unsigned long wait_ms,
                                   dedup_lock_wait_fn on_wait, void *userdata,
                                   struct dedup_lock **out, unsigned *removed,
                                   struct dedup_file_error *err)
{
    struct dedup_file_error dummy;
    enum dedup_code rc;
    struct dedup_lock *l = NULL;
    char *path = NULL;
    int fd = -1;
    if (!err)
        err = &dummy;
    *err = (struct dedup_file_error){0, "", 0};
    *out = NULL;
    if (removed)
        *removed = 0;
    size_t plen = strlen(index_path) + sizeof ".lock";
    path = malloc(plen);
    l = malloc(sizeof *l);
    if (!path || !l) {
        rc = DEDUP_ENOMEM;
        err->what = "out of memory";
        goto fail;
    }
    snprintf(path, plen, "%s.lock", index_path);
    /* O_CLOEXEC: a program this process starts must not inherit (and so keep) the lock */
    fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0666);
    if (fd < 0) {
        rc = DEDUP_EIO;
        err->os_error = errno;
        err->what = "cannot open the lock file";
        goto fail;
    }
    double deadline = now_ms() + (double)wait_ms;
    unsigned pause = 5;
    int told = 0;
    for (;;) {
        if (flock(fd, LOCK_EX | LOCK_NB) == 0)
            break;
        if (errno == EINTR)
            continue;
        if (errno != EWOULDBLOCK) {
            rc = DEDUP_EIO;
            err->os_error = errno;
            err->what = "cannot lock the lock file";
            goto fail;
        }
        double left = deadline - now_ms();
        if (left <= 0) {
            rc = DEDUP_ELOCKED;
            err->what = "locked by another writer";
            goto fail;
        }
        if (!told && on_wait)
            on_wait(userdata, path, holder_pid(fd));
        told = 1;
        sleep_ms(left < pause ? (unsigned)left + 1 : pause);
        if (pause < 100)
            pause *= 2;
    }
    /* who holds it, for the message of a writer that has to wait (a hint only: cleared on
     * release; a process that takes the lock otherwise, e.g. flock(1), writes nothing) */
    char pid[24];
    int n = snprintf(pid, sizeof pid, "%ld\n", (long)getpid());
    if (ftruncate(fd, 0) == 0 && pwrite(fd, pid, (size_t)n, 0) < 0) {
        /* not needed for the lock itself */
    }
    unsigned r = remove_leftovers(index_path);
    if (removed)
        *removed = r;
    l->fd = fd;
    *out = l;
    free(path);
    return DEDUP_OK;
fail:
    if (fd >= 0)
        close(fd);
    free(path);
    free(l);
    return rc;
}

void dedup_lock_release(struct dedup_lock *l)
{
    if (!l)
        return;
    /* The lock file stays. Deleting it would let two writers in at once: a writer waiting
     * on the old inode gets its lock after the unlink, while a third opens (creates) a new
     * X.lock and locks that one. A lock file that is never deleted has one inode. */
    if (ftruncate(l->fd, 0) != 0) {
        /* the pid is a hint for waiters' messages only */
    }
    close(l->fd); /* drops the flock: this was the only descriptor of this open file */
    free(l);
}
