/*
 * simcrawl inside wget2: the options, the decision about each downloaded file, the JSON
 * Lines log and the summary, on the public <simcrawl.h> only (wget2_api.c does the
 * wget2 side; see plugin.h).
 *
 * Each file wget2 hands over is checked with simcrawl_filter_check(), its URL as the id,
 * unless it is a robots.txt (passed untouched) or plainly not HTML: wget2 1.99.1 does not
 * give plugins the response's Content-Type, so when wget2_api.c could not learn it (from
 * the user.mime_type attribute that `wget2 --xattr` writes) the first bytes are sniffed
 * with the HTML patterns of the WHATWG MIME Sniffing standard (section 7.1, "identifying
 * a resource with an unknown MIME type"). A near or exact duplicate is logged, its file
 * removed (unless keep) and 0 is returned, so wget2 does not scan it for links: the
 * pages only it links to are never fetched.
 *
 * Threads: wget2 calls sc_wget2_page() from its download threads. The filter is opened on
 * the first page (the options are all known by then) under p->lock; checks run in
 * parallel (the filter is thread-safe); counters and log lines are taken under p->lock.
 */
#include "plugins/wget2/plugin.h"

#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include <simcrawl.h>

#define NAME "simcrawl"

enum { N_DECISIONS = 5 }; /* SIMCRAWL_NEW .. SIMCRAWL_NOT_HTML */

struct sc_wget2 {
    /* options: set before the first page, read-only after */
    char *index_path; /* NULL: in memory */
    unsigned k;
    int k_set;
    int keep;
    int help_only;  /* help was asked for: wget2 exits without downloading */
    int bad_option; /* an option was refused: wget2 exits without downloading */
    char *log_path;
    FILE *log;

    pthread_mutex_t lock;      /* the fields below */
    struct simcrawl_filter *f; /* opened by the first page */
    int open_tried;
    int open_error; /* the open failed: pages pass unchecked */
    unsigned long long decisions[N_DECISIONS];
    unsigned long long errors;  /* checks that returned an error */
    unsigned long long removed; /* duplicate files removed */
    int log_failed;
};

static void warn_cb(void *userdata, const char *message)
{
    (void)userdata;
    fprintf(stderr, NAME ": warning: %s\n", message);
}

struct sc_wget2 *sc_wget2_new(void)
{
    struct sc_wget2 *p = calloc(1, sizeof *p);
    if (!p)
        return NULL;
    p->k = 3;
    if (pthread_mutex_init(&p->lock, NULL) != 0) {
        free(p);
        return NULL;
    }
    return p;
}

/* ---- options ---- */

static void print_help(FILE *out)
{
    fprintf(
        out,
        "  --plugin-opt=simcrawl.index=FILE  the near-duplicate index, loaded if it exists\n"
        "                                    and saved at the end (default: in memory only)\n"
        "  --plugin-opt=simcrawl.k=N         Hamming distance that makes a near-duplicate,\n"
        "                                    0..7 (default 3; 0 with an existing index: its k)\n"
        "  --plugin-opt=simcrawl.log=FILE    append one JSON line per page checked: url,\n"
        "                                    decision, fingerprint, duplicate_of, distance\n"
        "  --plugin-opt=simcrawl.keep        keep the files of duplicates (default: removed)\n"
        "  --plugin-opt=simcrawl.help        this help\n"
        "  Every HTML page is checked (its URL is its id); a near-duplicate or exact\n"
        "  duplicate is logged, its file removed and its links not followed. robots.txt\n"
        "  and files that are not HTML pass untouched. A summary goes to stderr at exit.\n");
}

static int set_string(char **field, const char *name, const char *value)
{
    if (!value || !*value) {
        fprintf(stderr, NAME ": option %s needs a value (%s=FILE)\n", name, name);
        return -1;
    }
    char *copy = strdup(value);
    if (!copy) {
        fprintf(stderr, NAME ": out of memory\n");
        return -1;
    }
    free(*field);
    *field = copy;
    return 0;
}

static int parse_option(struct sc_wget2 *p, const char *name, const char *value, FILE *help_out)
{
    if (strcmp(name, "help") == 0) {
        print_help(help_out);
        p->help_only = 1;
        return 0;
    }
    if (strcmp(name, "index") == 0)
        return set_string(&p->index_path, name, value);
    if (strcmp(name, "k") == 0) {
        char *end = NULL;
        unsigned long k = 0;
        if (value && *value >= '0' && *value <= '9') {
            errno = 0;
            k = strtoul(value, &end, 10);
        }
        if (!end || *end || errno || k > 7) {
            fprintf(stderr, NAME ": k must be 0..7, not '%s'\n", value ? value : "");
            return -1;
        }
        p->k = (unsigned)k;
        p->k_set = 1;
        return 0;
    }
    if (strcmp(name, "keep") == 0) {
        if (!value || strcmp(value, "yes") == 0 || strcmp(value, "1") == 0 ||
            strcmp(value, "true") == 0)
            p->keep = 1;
        else if (strcmp(value, "no") == 0 || strcmp(value, "0") == 0 || strcmp(value, "false") == 0)
            p->keep = 0;
        else {
            fprintf(stderr, NAME ": keep takes yes or no, not '%s'\n", value);
            return -1;
        }
        return 0;
    }
    if (strcmp(name, "log") == 0) {
        if (set_string(&p->log_path, name, value) != 0)
            return -1;
        FILE *log = fopen(p->log_path, "a");
        if (!log) {
            fprintf(stderr, NAME ": cannot open log file %s: %s\n", p->log_path, strerror(errno));
            return -1;
        }
        if (p->log)
            fclose(p->log);
        p->log = log;
        return 0;
    }
    fprintf(stderr, NAME ": unknown option '%s' (--plugin-opt=" NAME ".help lists them)\n", name);
    return -1;
}

int sc_wget2_option(struct sc_wget2 *p, const char *name, const char *value, FILE *help_out)
{
    int rc = parse_option(p, name, value, help_out);
    if (rc != 0)
        p->bad_option = 1;
    return rc;
}

/* ---- pages ---- */

int sc_wget2_is_robots(const char *url)
{
    /* scheme://authority/robots.txt, without query or fragment (RFC 9309 section 2.3) */
    const char *s = strstr(url, "://");
    if (!s)
        return 0;
    const char *path = strchr(s + 3, '/');
    return path && strcmp(path, "/robots.txt") == 0;
}

/* The HTML patterns of WHATWG MIME Sniffing 7.1: after whitespace, one of these tags
 * (ASCII case-insensitive) followed by a tag-terminating byte, a space or '>'. */
static int sniff_html(const unsigned char *b, size_t len)
{
    static const char *const tags[] = {
        "<!DOCTYPE HTML", "<HTML", "<HEAD",  "<SCRIPT", "<IFRAME", "<H1",   "<DIV", "<FONT",
        "<TABLE",         "<A",    "<STYLE", "<TITLE",  "<B",      "<BODY", "<BR",  "<P",
        "<!--",
    };
    size_t i = 0;
    if (len >= 3 && b[0] == 0xEF && b[1] == 0xBB && b[2] == 0xBF)
        i = 3; /* UTF-8 byte order mark */
    while (i < len && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\f' || b[i] == '\r'))
        i++;
    for (size_t t = 0; t < sizeof tags / sizeof tags[0]; t++) {
        size_t n = strlen(tags[t]), j;
        if (len - i <= n)
            continue;
        for (j = 0; j < n; j++) {
            unsigned char c = b[i + j];
            if (c >= 'a' && c <= 'z')
                c = (unsigned char)(c - 'a' + 'A');
            if (c != (unsigned char)tags[t][j])
                break;
        }
        if (j == n && (b[i + n] == ' ' || b[i + n] == '>'))
            return 1;
    }
    /* XHTML: an XML declaration, then an html element within the first kilobyte */
    if (len - i > 5 && memcmp(b + i, "<?xml", 5) == 0) {
        size_t end = len < 1024 ? len : 1024;
        for (size_t j = i; j + 5 <= end; j++)
            if (memcmp(b + j, "<html", 5) == 0)
                return 1;
    }
    return 0;
}

int sc_wget2_is_html_type(const char *ct)
{
    size_t n = strcspn(ct, ";");
    while (n > 0 && (ct[n - 1] == ' ' || ct[n - 1] == '\t'))
        n--;
    return (n == 9 && strncasecmp(ct, "text/html", 9) == 0) ||
           (n == 21 && strncasecmp(ct, "application/xhtml+xml", 21) == 0);
}

/* Opens the filter once, with the options as they are; p->lock held. */
static void open_filter(struct sc_wget2 *p)
{
    p->open_tried = 1;
    struct simcrawl_options *o = simcrawl_options_new();
    int rc = o ? 0 : SIMCRAWL_ENOMEM;
    /* without k: the existing index's own k, else the default */
    int take_files_k = !p->k_set && p->index_path && access(p->index_path, F_OK) == 0;
    if (rc == 0)
        rc = simcrawl_options_set_k(o, take_files_k ? 0 : p->k);
    if (rc == 0)
        rc = simcrawl_options_set_log(o, warn_cb, NULL);
    if (rc == 0)
        rc = simcrawl_filter_open_opts(&p->f, p->index_path, o);
    simcrawl_options_free(o);
    if (rc != 0) {
        p->open_error = 1;
        p->f = NULL;
        fprintf(stderr, NAME ": cannot open the index %s: %s; pages pass unchecked\n",
                p->index_path ? p->index_path : "(in memory)", simcrawl_strerror(rc));
    }
}

/* Appends s as a JSON string (quotes, escapes) to the log; p->lock held. */
static void log_string(FILE *out, const char *s)
{
    fputc('"', out);
    for (const unsigned char *c = (const unsigned char *)s; *c; c++) {
        if (*c == '"' || *c == '\\')
            fprintf(out, "\\%c", *c);
        else if (*c < 0x20)
            fprintf(out, "\\u%04x", *c);
        else
            fputc(*c, out);
    }
    fputc('"', out);
}

static const char *decision_name(int d)
{
    static const char *const names[N_DECISIONS] = {
        [SIMCRAWL_NEW] = "new",
        [SIMCRAWL_NEAR_DUPLICATE] = "near-duplicate",
        [SIMCRAWL_EXACT_DUPLICATE] = "exact-duplicate",
        [SIMCRAWL_TOO_SHORT] = "too-little-text", /* the crawl log's word */
        [SIMCRAWL_NOT_HTML] = "not-html",
    };
    return d >= 0 && d < N_DECISIONS ? names[d] : "error";
}

/* One log line, the crawl log's field names; p->lock held. */
static void log_page(struct sc_wget2 *p, const char *url, int d, const char *content_type,
                     size_t len, const struct simcrawl_match *m, int removed)
{
    if (!p->log || p->log_failed)
        return;
    FILE *out = p->log;
    fputs("{\"url\":", out);
    log_string(out, url);
    fprintf(out, ",\"decision\":\"%s\"", decision_name(d));
    if (content_type) {
        fputs(",\"content_type\":", out);
        log_string(out, content_type);
    }
    fprintf(out, ",\"size\":%zu", len);
    if (m && (d == SIMCRAWL_NEW || d == SIMCRAWL_NEAR_DUPLICATE || d == SIMCRAWL_EXACT_DUPLICATE))
        fprintf(out, ",\"fingerprint\":\"%016" PRIx64 "\"", simcrawl_match_fingerprint(m));
    if (m && simcrawl_match_duplicate_of(m)) {
        fputs(",\"duplicate_of\":", out);
        log_string(out, simcrawl_match_duplicate_of(m));
        fprintf(out, ",\"distance\":%u", simcrawl_match_distance(m));
    }
    if (d == SIMCRAWL_NEAR_DUPLICATE || d == SIMCRAWL_EXACT_DUPLICATE)
        fprintf(out, ",\"removed\":%s", removed ? "true" : "false");
    if (d < 0) {
        fputs(",\"error\":", out);
        log_string(out, simcrawl_strerror(d));
    }
    fputs("}\n", out);
    if (fflush(out) != 0 || ferror(out)) {
        p->log_failed = 1;
        fprintf(stderr, NAME ": cannot write the log %s: %s; logging stops\n", p->log_path,
                strerror(errno));
    }
}

int sc_wget2_page(struct sc_wget2 *p, const char *url, const char *local_file, const void *data,
                  size_t len, const char *content_type)
{
    if (sc_wget2_is_robots(url))
        return 1;
    int d;
    if (content_type ? !sc_wget2_is_html_type(content_type) : !sniff_html(data, len)) {
        d = SIMCRAWL_NOT_HTML; /* counted and logged, never handed to the filter */
        pthread_mutex_lock(&p->lock);
        p->decisions[d]++;
        log_page(p, url, d, content_type, len, NULL, 0);
        pthread_mutex_unlock(&p->lock);
        return 1;
    }

    pthread_mutex_lock(&p->lock);
    if (!p->open_tried)
        open_filter(p);
    struct simcrawl_filter *f = p->f;
    if (!f)
        p->errors++; /* the index could not be opened (said once): unchecked */
    pthread_mutex_unlock(&p->lock);
    if (!f)
        return 1;

    struct simcrawl_match *m = simcrawl_match_new();
    d = m ? simcrawl_filter_check(f, url, data, len, content_type, m) : SIMCRAWL_ENOMEM;
    int dup = d == SIMCRAWL_NEAR_DUPLICATE || d == SIMCRAWL_EXACT_DUPLICATE;
    int removed = 0, remove_errno = 0;
    if (dup && !p->keep && local_file) {
        if (unlink(local_file) == 0)
            removed = 1;
        else
            remove_errno = errno;
    }

    pthread_mutex_lock(&p->lock);
    if (d >= 0 && d < N_DECISIONS)
        p->decisions[d]++;
    else
        p->errors++;
    p->removed += (unsigned)removed;
    log_page(p, url, d, content_type, len, m, removed);
    pthread_mutex_unlock(&p->lock);

    if (remove_errno)
        fprintf(stderr, NAME ": cannot remove %s: %s\n", local_file, strerror(remove_errno));
    if (d < 0)
        fprintf(stderr, NAME ": %s: %s; the page passes unchecked\n", url, simcrawl_strerror(d));
    simcrawl_match_free(m);
    return dup ? 0 : 1;
}

int sc_wget2_finish(struct sc_wget2 *p)
{
    if (!p)
        return 0;
    int rc = 0;
    uint64_t indexed = p->f ? simcrawl_filter_count(p->f) : 0;
    int close_rc = simcrawl_filter_close(p->f);
    if (close_rc != 0) {
        rc = -1;
        fprintf(stderr, NAME ": cannot save the index %s: %s\n",
                p->index_path ? p->index_path : "(in memory)", simcrawl_strerror(close_rc));
    }
    if (!p->help_only && !p->bad_option) {
        const unsigned long long *n = p->decisions;
        unsigned long long checked = p->errors;
        for (int i = 0; i < N_DECISIONS; i++)
            checked += n[i];
        fprintf(stderr,
                NAME ": %llu pages checked: %llu new, %llu near-duplicates, %llu exact "
                     "duplicates, %llu too short, %llu not html, %llu errors; %llu files "
                     "removed; index %s: %" PRIu64 " pages\n",
                checked, n[SIMCRAWL_NEW], n[SIMCRAWL_NEAR_DUPLICATE], n[SIMCRAWL_EXACT_DUPLICATE],
                n[SIMCRAWL_TOO_SHORT], n[SIMCRAWL_NOT_HTML], p->errors, p->removed,
                p->index_path ? p->index_path : "in memory", indexed);
    }
    if (p->log && fclose(p->log) != 0 && !p->log_failed) {
        rc = -1;
        fprintf(stderr, NAME ": cannot write the log %s: %s\n", p->log_path, strerror(errno));
    }
    pthread_mutex_destroy(&p->lock);
    free(p->index_path);
    free(p->log_path);
    free(p);
    return rc;
}
