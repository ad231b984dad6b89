#ifndef CLI_WALK_H
#define CLI_WALK_H
/*
 * The one directory walker of the command line (pairs, clusters, query, index add and
 * dedup; cli/walk.c). A directory is walked recursively, in byte order of the names,
 * following symbolic links as find -L does, and every directory is entered once by
 * (st_dev, st_ino): a link back to a directory being walked (`ln -s . l`, `ln -s .. up`)
 * is a loop, named once and skipped; a second way to a directory already walked is
 * skipped with a note. The walk always ends and its memory grows with the number of
 * distinct directories only.
 *
 * Why follow links (find -L, grep -R, rsync -L) rather than not (find -P, git, which
 * records a link as a link, and wget -r, which never meets one): INPUT names documents to
 * read, not a tree to copy, and corpora are often assembled from links to crawl outputs
 * (ln -s /data/crawl-2024 corpus/): a walk that skipped them would silently read nothing
 * of them. Following is safe here because every directory is entered once by
 * (st_dev, st_ino), which is how find -L and GNU grep -R detect their loops too.
 * Out of memory ends the walk with a diagnostic; no name is ever dropped silently.
 */
#define CLI_WALK_MAX_DEPTH 64u       /* cap on directory nesting */
#define CLI_WALK_MAX_DIRS (1u << 22) /* cap on distinct directories remembered in one walk */

struct cli_walk_ops {
    /* A regular file (links followed); name is its last component. Borrowed strings, valid
     * during the call. Returns 0 to go on, non-zero to stop the walk. */
    int (*file)(void *userdata, const char *path, const char *name);
    /* Something skipped: path and what happened ("directory loop (the same directory as
     * D), skipped"). failed: 1 when the input counts as failed (loops, unreadable
     * directories, nesting over the cap), 0 for a directory already read by another way. */
    void (*skip)(void *userdata, const char *path, const char *what, int failed);
};

/* Walks dir. 0 at the end; -1 when ops->file stopped the walk or memory ran out (then the
 * diagnostic "simcrawl CMD: DIR: out of memory ..." is printed under cmd). */
int cli_walk(const char *cmd, const char *dir, const struct cli_walk_ops *ops, void *userdata);

#endif
