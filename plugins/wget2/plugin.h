#ifndef WGET2_PLUGIN_H
#define WGET2_PLUGIN_H
/*
 * simcrawl as a wget2 plugin: the part that knows nothing of wget2 (plugin.c, on the
 * public <simcrawl.h> only). wget2_api.c is the one file that calls wget2's plugin API;
 * it turns wget2's callbacks into these calls, so a port to wget2 2.x names changes that
 * file alone.
 *
 *   initializer   -> sc_wget2_new()
 *   option cb     -> sc_wget2_option()      (before any download)
 *   post-processor-> sc_wget2_page()        (many threads at once)
 *   finalizer     -> sc_wget2_finish()      (once, after the last download)
 */
#include <stddef.h>
#include <stdio.h>

struct sc_wget2;

/* A new plugin state with the defaults (in-memory index, k 3, no log, files removed).
 * NULL when out of memory. Freed by sc_wget2_finish(). */
struct sc_wget2 *sc_wget2_new(void);

/*
 * One --plugin-opt=simcrawl.NAME[=VALUE]: index=FILE, k=N, log=FILE, keep[=yes|no], help.
 * "help" prints the options to help_out. Returns 0, or -1 after printing on stderr what is
 * wrong ("simcrawl: k must be 0..7, not 9"); wget2 then stops with its own error line.
 */
int sc_wget2_option(struct sc_wget2 *p, const char *name, const char *value, FILE *help_out);

/*
 * One downloaded file: url (the id checked), local_file (NULL when wget2 wrote none:
 * --spider, -O with -r), data[0..len) its bytes (borrowed), content_type the response's
 * Content-Type when known, else NULL (the bytes are sniffed). data may be NULL when
 * content_type is known and not HTML (sc_wget2_is_html_type()). Thread-safe.
 * Returns 1 when wget2 should go on with the file (scan it for links), 0 when not: the
 * page was a near or exact duplicate (its file is removed unless keep is set).
 */
int sc_wget2_page(struct sc_wget2 *p, const char *url, const char *local_file, const void *data,
                  size_t len, const char *content_type);

/* 1 when content_type (an HTTP Content-Type value) is HTML: text/html or XHTML. */
int sc_wget2_is_html_type(const char *content_type);

/* 1 when url names a robots.txt (passed to wget2 untouched, never checked). */
int sc_wget2_is_robots(const char *url);

/* Closes the filter (saving the index), prints the one-line summary on stderr, closes the
 * log and frees p. NULL-safe. Returns 0, or -1 when the index could not be saved or the
 * log written (said on stderr). No summary after help or a refused option: wget2 then
 * exits without downloading. */
int sc_wget2_finish(struct sc_wget2 *p);

#endif /* WGET2_PLUGIN_H */
