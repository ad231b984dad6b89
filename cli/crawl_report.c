/*
 * The clusters of what a crawl dropped (cli/crawl_report.h): the crawl's own decisions
 * read back as near-duplicate clusters, for `crawl --report FILE` and `simcrawl clusters
 * LOG|STATE_DIR`.
 *
 * HOW IT WORKS. Every page the crawl decided about is added in crawl order: its URL,
 * decision, fingerprint, duplicate_of, distance and title in memory, its main text in an
 * unlinked temporary file. Building the clusters: the kept pages (decision new) are found
 * by URL through an open-addressing table; each duplicate whose duplicate_of is a kept page
 * is a pair (kept, duplicate). Every duplicate points at a kept page (the crawl looks a
 * page up only against pages it kept), so each cluster is a star around one kept page.
 * The documents are numbered kept pages first (crawl order), duplicates after, so that
 * dedup_clusters_from_pairs() makes the kept page each cluster's representative (the
 * lowest number) whatever order two workers' records came in. A duplicate with no
 * fingerprint of its own (an exact copy of a page too short to fingerprint) takes its
 * representative's, so its distance is 0. Pages whose kept page is not held (a log cut
 * short) are listed as not fingerprinted with the reason.
 * The state record (cli_crawl_report_blob) is written by the crawl with --state for every
 * page, committed with the page, so that the report of a resumed crawl, and `clusters
 * STATE_DIR`, cover the whole crawl; with it the page's main text, packed, in the state's
 * texts table (crawl_state_page_add_text; up to CLI_CRAWL_REPORT_STATE_TEXTS packed bytes
 * in all), so that its word diffs are those of the uninterrupted crawl. A clustered page
 * whose text the state does not hold (over that cap, a state older than the texts, a
 * damaged one) is counted by why, and the report's header says how many.
 */
#include "cli/crawl_report.h"

#include "cli/cli.h"
#include "cli/inputs.h"
#include "crawler/crawl.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define NONE SIZE_MAX
#define BLOB_MAGIC 0x31524353u /* "SCR1" */

struct cr_page {
    uint64_t fp;
    size_t url, dup, title, reason; /* arena offsets, NONE when absent */
    uint64_t text_off;              /* in the text file */
    size_t text_len;                /* NONE: no text */
    int distance;
    unsigned char decision, has_fp;
    unsigned char text_status; /* without a text: why (enum crawl_text_status) */
};

struct cli_crawl_report {
    const char *cmd;
    char *arena;
    size_t arena_len, arena_cap;
    struct cr_page *pages;
    size_t n, cap;
    uint64_t over_cap; /* pages past CLI_CRAWL_REPORT_MAX_PAGES: counted only */
    FILE *texts;       /* NULL until the first text */
    uint64_t texts_len;
    int texts_failed;
    unsigned long texts_damaged; /* state records whose text does not unpack */
};

struct cli_crawl_report *cli_crawl_report_new(const char *cmd)
{
    struct cli_crawl_report *r = calloc(1, sizeof *r);
    if (r)
        r->cmd = cmd;
    return r;
}

void cli_crawl_report_free(struct cli_crawl_report *r)
{
    if (!r)
        return;
    if (r->texts)
        fclose(r->texts);
    free(r->arena);
    free(r->pages);
    free(r);
}

/* s (NULL: NONE) into the arena, cut to max bytes; the offset, or -1 out of memory. */
static int arena_put(struct cli_crawl_report *r, const char *s, size_t max, size_t *off)
{
    *off = NONE;
    if (!s)
        return 0;
    size_t len = strlen(s);
    if (len > max) {
        len = max;
        while (len > 0 && ((unsigned char)s[len] & 0xc0) == 0x80)
            len--; /* a UTF-8 character boundary */
    }
    if (r->arena_len + len + 1 > r->arena_cap) {
        size_t cap = r->arena_cap ? r->arena_cap : 65536;
        while (cap < r->arena_len + len + 1)
            cap *= 2;
        char *a = realloc(r->arena, cap);
        if (!a)
            return -1;
        r->arena = a;
        r->arena_cap = cap;
    }
    memcpy(r->arena + r->arena_len, s, len);
    r->arena[r->arena_len + len] = '\0';
    *off = r->arena_len;
    r->arena_len += len + 1;
    return 0;
}

static const char *str_at(const struct cli_crawl_report *r, size_t off)
{
    return off == NONE ? NULL : r->arena + off;
}

/* An unlinked temporary file under $TMPDIR (or /tmp) for the texts. */
static FILE *texts_open(const struct cli_crawl_report *r)
{
    const char *dir = getenv("TMPDIR");
    char path[4096];
    snprintf(path, sizeof path, "%s/simcrawl-report-XXXXXX", dir && *dir ? dir : "/tmp");
    int fd = mkstemp(path);
    if (fd < 0) {
        cli_error(r->cmd, "cannot create a temporary file for the report's texts in %s: %s",
                  dir && *dir ? dir : "/tmp", strerror(errno));
        return NULL;
    }
    unlink(path);
    FILE *f = fdopen(fd, "w+");
    if (!f)
        close(fd);
    return f;
}

int cli_crawl_report_add(struct cli_crawl_report *r, const struct cli_crawl_page *p)
{
    int page = p->decision == CRAWL_DECISION_NEW || p->decision == CRAWL_DECISION_NEAR_DUPLICATE ||
               p->decision == CRAWL_DECISION_EXACT_DUPLICATE;
    if (!page && p->decision != CRAWL_DECISION_ERROR &&
        !(p->decision == CRAWL_DECISION_FILTERED && p->processed))
        return 0;
    if (r->n >= CLI_CRAWL_REPORT_MAX_PAGES) {
        if (r->over_cap++ == 0)
            cli_error(r->cmd,
                      "the report holds %u pages at most: %s and later pages are left "
                      "out of it",
                      CLI_CRAWL_REPORT_MAX_PAGES, p->url);
        return 0;
    }
    if (r->n == r->cap) {
        size_t cap = r->cap ? r->cap * 2 : 1024;
        struct cr_page *v = realloc(r->pages, cap * sizeof *v);
        if (!v)
            goto oom;
        r->pages = v;
        r->cap = cap;
    }
    struct cr_page *g = &r->pages[r->n];
    memset(g, 0, sizeof *g);
    g->decision = (unsigned char)p->decision;
    g->has_fp = p->has_fp != 0;
    g->fp = p->fp;
    g->distance = p->distance;
    g->text_len = NONE;
    g->text_status = (unsigned char)(p->text ? CRAWL_TEXT_KEPT : p->text_status);
    if (arena_put(r, p->url, CRAWL_URL_MAX, &g->url) != 0 ||
        arena_put(r, p->duplicate_of, CRAWL_URL_MAX, &g->dup) != 0 ||
        arena_put(r, p->title && *p->title ? p->title : NULL, CLI_HTML_TITLE_MAX, &g->title) != 0 ||
        arena_put(r, p->reason, 400, &g->reason) != 0)
        goto oom;
    if (page && p->text && !r->texts_failed) {
        size_t len =
            p->text_len > CLI_CRAWL_REPORT_MAX_TEXT ? CLI_CRAWL_REPORT_MAX_TEXT : p->text_len;
        if (!r->texts && !(r->texts = texts_open(r)))
            r->texts_failed = 1;
        if (r->texts && fwrite(p->text, 1, len, r->texts) != len) {
            cli_error(r->cmd, "cannot write the report's texts: %s", strerror(errno));
            r->texts_failed = 1;
        } else if (r->texts) {
            g->text_off = r->texts_len;
            g->text_len = len;
            r->texts_len += len;
        }
    }
    r->n++;
    return 0;
oom:
    cli_error(r->cmd, "out of memory keeping the crawl's pages for the report");
    return -1;
}

/* ---- the state record ---- */

struct blob_head {
    uint32_t magic, decision;
    uint32_t has_fp, processed;
    int32_t distance, pad;
    uint64_t fp;
    uint32_t url_len, dup_len, title_len, reason_len;
};

int cli_crawl_report_blob(const struct cli_crawl_page *p, unsigned char **out, size_t *len)
{
    const char *s[4] = {p->url, p->duplicate_of, p->title, p->reason};
    uint32_t l[4];
    for (int i = 0; i < 4; i++) {
        size_t n = s[i] ? strlen(s[i]) : 0;
        size_t max = i == 2 ? CLI_HTML_TITLE_MAX : i == 3 ? 400 : CRAWL_URL_MAX;
        if (n > max) {
            n = max;
            while (n > 0 && ((unsigned char)s[i][n] & 0xc0) == 0x80)
                n--;
        }
        l[i] = (uint32_t)n;
    }
    struct blob_head h = {.magic = BLOB_MAGIC,
                          .decision = (uint32_t)p->decision,
                          .has_fp = p->has_fp != 0,
                          .processed = p->processed != 0,
                          .distance = p->distance,
                          .fp = p->fp,
                          .url_len = l[0],
                          .dup_len = l[1],
                          .title_len = l[2],
                          .reason_len = l[3]};
    *len = sizeof h + l[0] + l[1] + l[2] + l[3];
    unsigned char *b = malloc(*len), *q = b;
    if (!b)
        return -1;
    memcpy(q, &h, sizeof h);
    q += sizeof h;
    for (int i = 0; i < 4; i++) {
        if (l[i])
            memcpy(q, s[i], l[i]);
        q += l[i];
    }
    *out = b;
    return 0;
}

int cli_crawl_report_is_blob(const void *data, size_t len)
{
    uint32_t magic;
    if (len < sizeof(struct blob_head))
        return 0;
    memcpy(&magic, data, sizeof magic);
    return magic == BLOB_MAGIC;
}

int cli_crawl_report_add_blob(struct cli_crawl_report *r, const void *data, size_t len)
{
    return cli_crawl_report_add_blob_text(r, data, len, CRAWL_TEXT_NONE, NULL, 0);
}

int cli_crawl_report_add_blob_text(struct cli_crawl_report *r, const void *data, size_t len,
                                   int text_status, const char *text, size_t text_len)
{
    struct blob_head h;
    if (!cli_crawl_report_is_blob(data, len))
        return 1;
    memcpy(&h, data, sizeof h);
    size_t l[4] = {h.url_len, h.dup_len, h.title_len, h.reason_len};
    if (len != sizeof h + l[0] + l[1] + l[2] + l[3] || l[0] == 0)
        return 1;
    char *s[4] = {NULL, NULL, NULL, NULL};
    const unsigned char *q = (const unsigned char *)data + sizeof h;
    int rc = 0;
    for (int i = 0; i < 4 && rc == 0; i++) {
        if (l[i] && memchr(q, '\0', l[i]))
            rc = 1;
        else if (l[i] && !(s[i] = strndup((const char *)q, l[i])))
            rc = -1;
        q += l[i];
    }
    if (rc == 0) {
        struct cli_crawl_page p = {.url = s[0],
                                   .decision = (int)h.decision,
                                   .processed = (int)h.processed,
                                   .has_fp = (int)h.has_fp,
                                   .fp = h.fp,
                                   .duplicate_of = s[1],
                                   .distance = h.distance,
                                   .title = s[2],
                                   .text = text,
                                   .text_len = text_len,
                                   .text_status = text_status,
                                   .reason = s[3]};
        rc = cli_crawl_report_add(r, &p);
    }
    for (int i = 0; i < 4; i++)
        free(s[i]);
    return rc;
}

/* ---- loading a log or a state ---- */

int cli_crawl_input(const char *path)
{
    struct stat st;
    if (stat(path, &st) != 0)
        return 0;
    if (S_ISDIR(st.st_mode)) {
        char db[4200];
        snprintf(db, sizeof db, "%s/state.db", path);
        return stat(db, &st) == 0 && S_ISREG(st.st_mode) ? 2 : 0;
    }
    if (!S_ISREG(st.st_mode))
        return 0;
    size_t n = strlen(path);
    if ((n > 6 && strcmp(path + n - 6, ".jsonl") == 0) ||
        (n > 7 && strcmp(path + n - 7, ".ndjson") == 0))
        return 1;
    FILE *f = fopen(path, "rb");
    int c = f ? fgetc(f) : EOF;
    if (f)
        fclose(f);
    return c == '{' ? 1 : 0;
}

static int decision_of(const char *s)
{
    for (int d = CRAWL_DECISION_NEW; d <= CRAWL_DECISION_ERROR; d++)
        if (strcmp(s, crawl_decision_name((enum crawl_decision)d)) == 0)
            return d;
    return -1;
}

static const char *jtext(json_t *o, const char *key)
{
    return json_string_value(json_object_get(o, key));
}

/* Why a log line's object o (NULL: je says why) is not a crawl log line, or NULL when it
 * is one: an object with a url, a known decision, and where they are given a fingerprint
 * of exactly 16 hex digits (strtoull would take a sign or spaces) and a distance 0..64. */
static const char *line_fault(const json_t *o, const json_error_t *je, const char *url, int d)
{
    if (!o)
        return je->text;
    if (!json_is_object(o) || !url || !*url || d < 0)
        return "no url or decision";
    const json_t *fp = json_object_get(o, "fingerprint"), *dist = json_object_get(o, "distance");
    uint64_t v;
    if (fp &&
        (!json_is_string(fp) ||
         dedup_fingerprint_parse(json_string_value(fp), json_string_length(fp), &v) != DEDUP_OK))
        return "the fingerprint is not 16 hex digits";
    if (dist &&
        (!json_is_integer(dist) || json_integer_value(dist) < 0 || json_integer_value(dist) > 64))
        return "the distance is not a whole number from 0 to 64";
    return NULL;
}

static int load_log(struct cli_crawl_report *r, const char *path)
{
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error(r->cmd, "cannot open crawl log %s: %s", path, strerror(errno));
        return CLI_RUNTIME;
    }
    int status = CLI_OK;
    char *line = NULL;
    size_t cap = 0;
    ssize_t got;
    unsigned long lineno = 0, bad = 0;
    while ((got = getline(&line, &cap, f)) > 0) {
        lineno++;
        json_error_t je;
        json_t *o = json_loadb(line, (size_t)got, 0, &je);
        const char *url = o ? jtext(o, "url") : NULL;
        const char *dec = o ? jtext(o, "decision") : NULL;
        int d = dec ? decision_of(dec) : -1;
        if (o && json_is_true(json_object_get(o, "requisite"))) {
            json_decref(o); /* an image, a stylesheet: not a page (--page-requisites) */
            continue;
        }
        const char *why = line_fault(o, &je, url, d);
        if (why) {
            if (bad++ < 5)
                cli_error(r->cmd, "%s:%lu: not a crawl log line (%s), skipped", path, lineno, why);
            json_decref(o);
            status = CLI_RUNTIME;
            continue;
        }
        struct cli_crawl_page p = {.url = url,
                                   .decision = d,
                                   .distance = -1,
                                   .processed = json_object_get(o, "links_found") != NULL,
                                   .duplicate_of = jtext(o, "duplicate_of"),
                                   .title = jtext(o, "title"),
                                   .reason =
                                       jtext(o, "error") ? jtext(o, "error") : jtext(o, "reason")};
        const char *hex = jtext(o, "fingerprint");
        p.has_fp = hex && dedup_fingerprint_parse(hex, strlen(hex), &p.fp) == DEDUP_OK;
        json_t *dist = json_object_get(o, "distance");
        if (dist)
            p.distance = (int)json_integer_value(dist);
        int rc = cli_crawl_report_add(r, &p);
        json_decref(o);
        if (rc != 0) {
            status = CLI_RUNTIME;
            break;
        }
    }
    if (bad > 5)
        cli_error(r->cmd, "%s: %lu lines in all that are not crawl log lines", path, bad);
    if (ferror(f)) {
        cli_error(r->cmd, "cannot read crawl log %s: %s", path, strerror(errno));
        status = CLI_RUNTIME;
    }
    free(line);
    fclose(f);
    return status;
}

static int load_blob(void *userdata, const void *data, size_t len, enum crawl_text_status st,
                     const char *text, size_t text_len)
{
    struct cli_crawl_report *r = userdata;
    if (st == CRAWL_TEXT_DAMAGED && cli_crawl_report_is_blob(data, len))
        r->texts_damaged++;
    int rc = cli_crawl_report_add_blob_text(r, data, len, (int)st, text, text_len);
    return rc < 0 ? -1 : 0; /* the decision's own records are not the report's */
}

int cli_crawl_report_from_state(struct cli_crawl_report *r, struct crawl_state *s)
{
    unsigned long damaged = r->texts_damaged;
    enum crawl_code rc = crawl_state_foreach_page_text(s, load_blob, r);
    if (rc == CRAWL_OK && r->texts_damaged > damaged)
        cli_error(r->cmd,
                  "%lu page texts in the crawl state do not unpack (the last: %s); "
                  "their pages show no word diff",
                  r->texts_damaged - damaged, crawl_state_error(s));
    return (int)rc;
}

static int load_state(struct cli_crawl_report *r, const char *dir)
{
    struct crawl_state *s = NULL;
    int created = 0;
    char err[700];
    if (crawl_state_open(dir, 0, &s, &created, err, sizeof err) != CRAWL_OK) {
        cli_error(r->cmd, "%s", err);
        return CLI_RUNTIME;
    }
    int status = CLI_OK;
    if (cli_crawl_report_from_state(r, s) != CRAWL_OK) {
        cli_error(r->cmd, "cannot read the crawl state %s: %s", dir, crawl_state_error(s));
        status = CLI_RUNTIME;
    }
    crawl_state_close(s);
    return status;
}

int cli_crawl_report_load(struct cli_crawl_report *r, const char *path)
{
    switch (cli_crawl_input(path)) {
    case 1:
        return load_log(r, path);
    case 2:
        return load_state(r, path);
    default:
        cli_error(r->cmd, "%s is neither a crawl log nor a crawl state directory", path);
        return CLI_RUNTIME;
    }
}

/* ---- the clusters ---- */

static uint64_t fnv1a(const char *s)
{
    uint64_t h = 14695981039346656037ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The kept pages by URL: slots hold page number + 1 (0 empty). */
struct url_map {
    size_t *slot;
    size_t mask;
};

static int map_build(const struct cli_crawl_report *r, struct url_map *m)
{
    size_t kept = 0, slots = 16;
    for (size_t i = 0; i < r->n; i++)
        kept += r->pages[i].decision == CRAWL_DECISION_NEW;
    while (slots < 2 * kept + 2)
        slots *= 2;
    m->slot = calloc(slots, sizeof *m->slot);
    if (!m->slot)
        return -1;
    m->mask = slots - 1;
    for (size_t i = 0; i < r->n; i++) {
        if (r->pages[i].decision != CRAWL_DECISION_NEW)
            continue;
        const char *u = str_at(r, r->pages[i].url);
        size_t j = (size_t)fnv1a(u) & m->mask;
        while (m->slot[j] && strcmp(str_at(r, r->pages[m->slot[j] - 1].url), u) != 0)
            j = (j + 1) & m->mask;
        if (!m->slot[j]) /* a URL twice (two logs): the first */
            m->slot[j] = i + 1;
    }
    return 0;
}

static size_t map_find(const struct cli_crawl_report *r, const struct url_map *m, const char *u)
{
    if (!u)
        return NONE;
    size_t j = (size_t)fnv1a(u) & m->mask;
    for (; m->slot[j]; j = (j + 1) & m->mask)
        if (strcmp(str_at(r, r->pages[m->slot[j] - 1].url), u) == 0)
            return m->slot[j] - 1;
    return NONE;
}

/* The text of page g read back into *buf (grown as needed); NULL when none. */
static const char *read_text(struct cli_crawl_report *r, const struct cr_page *g, char **buf,
                             size_t *cap)
{
    if (g->text_len == NONE || !r->texts)
        return NULL;
    if (g->text_len + 1 > *cap) {
        char *b = realloc(*buf, g->text_len + 1);
        if (!b)
            return NULL;
        *buf = b;
        *cap = g->text_len + 1;
    }
    if (fseeko(r->texts, (off_t)g->text_off, SEEK_SET) != 0 ||
        fread(*buf, 1, g->text_len, r->texts) != g->text_len)
        return NULL;
    (*buf)[g->text_len] = '\0';
    return *buf;
}

/* The header's notes on the clustered pages (clustered[i]) whose texts the state did not
 * hold: their members show no word diff. 0, or -1 out of memory. */
static int texts_notes(const struct cli_crawl_report *r, const unsigned char *clustered,
                       struct cli_report *html)
{
    unsigned long n[CRAWL_TEXT_DAMAGED + 1] = {0};
    for (size_t i = 0; i < r->n; i++)
        if (clustered[i] && r->pages[i].text_len == NONE &&
            r->pages[i].text_status <= CRAWL_TEXT_DAMAGED)
            n[r->pages[i].text_status]++;
    char note[400];
    if (n[CRAWL_TEXT_BEFORE]) {
        snprintf(note, sizeof note,
                 "The texts of %lu pages in clusters are not at hand: the crawl's state holds "
                 "none for the runs that decided them (an earlier simcrawl made them, or "
                 "--redis), so their members show no word diff.",
                 n[CRAWL_TEXT_BEFORE]);
        if (cli_report_note(html, note) != 0)
            return -1;
    }
    if (n[CRAWL_TEXT_OVER_CAP]) {
        snprintf(note, sizeof note,
                 "The texts of %lu pages in clusters were not kept in the crawl's state, whose "
                 "texts had reached their cap of %llu MiB packed: their members show no word "
                 "diff.",
                 n[CRAWL_TEXT_OVER_CAP], CLI_CRAWL_REPORT_STATE_TEXTS >> 20);
        if (cli_report_note(html, note) != 0)
            return -1;
    }
    if (n[CRAWL_TEXT_DAMAGED]) {
        snprintf(note, sizeof note,
                 "The texts of %lu pages in clusters are damaged in the crawl's state: their "
                 "members show no word diff.",
                 n[CRAWL_TEXT_DAMAGED]);
        if (cli_report_note(html, note) != 0)
            return -1;
    }
    return 0;
}

int cli_crawl_report_clusters(struct cli_crawl_report *r, unsigned k, struct cli_report *html,
                              struct dedup_index **idx, struct dedup_clusters **c)
{
    *idx = NULL;
    *c = NULL;
    struct url_map m = {0};
    size_t *rep = malloc((r->n ? r->n : 1) * sizeof *rep);       /* page -> its kept page */
    uint32_t *doc = malloc((r->n ? r->n : 1) * sizeof *doc);     /* page -> document + 1 */
    uint32_t *order = malloc((r->n ? r->n : 1) * sizeof *order); /* document -> page */
    unsigned char *has_dup = calloc(r->n ? r->n : 1, 1);
    uint64_t *pairs = NULL;
    char *buf = NULL;
    size_t bufcap = 0, npairs = 0;
    uint32_t ndocs = 0;
    int status = CLI_RUNTIME;
    if (!rep || !doc || !order || !has_dup || map_build(r, &m) != 0)
        goto oom;
    for (size_t i = 0; i < r->n; i++) {
        const struct cr_page *g = &r->pages[i];
        rep[i] = NONE;
        doc[i] = 0;
        if (g->decision == CRAWL_DECISION_NEAR_DUPLICATE ||
            g->decision == CRAWL_DECISION_EXACT_DUPLICATE) {
            rep[i] = map_find(r, &m, str_at(r, g->dup));
            if (rep[i] != NONE) {
                has_dup[rep[i]] = 1;
                npairs++;
            }
        }
    }
    /* the documents: kept pages first, then their duplicates */
    for (int pass = 0; pass < 2; pass++)
        for (size_t i = 0; i < r->n; i++) {
            const struct cr_page *g = &r->pages[i];
            int in = pass == 0 ? g->decision == CRAWL_DECISION_NEW && (g->has_fp || has_dup[i])
                               : rep[i] != NONE;
            if (in) {
                order[ndocs] = (uint32_t)i;
                doc[i] = ++ndocs;
            }
        }
    pairs = malloc((npairs ? npairs : 1) * sizeof *pairs);
    if (!pairs)
        goto oom;
    npairs = 0;
    for (size_t i = 0; i < r->n; i++)
        if (rep[i] != NONE)
            pairs[npairs++] = (uint64_t)(doc[rep[i]] - 1) << 32 | (doc[i] - 1);
    if (cli_index_create(r->cmd, k, ndocs, 0, idx) != CLI_OK)
        goto done;
    for (uint32_t d = 0; d < ndocs; d++) {
        size_t i = order[d];
        const struct cr_page *g = &r->pages[i];
        uint64_t fp = g->has_fp                                   ? g->fp
                      : rep[i] != NONE && r->pages[rep[i]].has_fp ? r->pages[rep[i]].fp
                                                                  : 0;
        const char *url = str_at(r, g->url);
        enum dedup_code dc = dedup_index_add(*idx, fp, url, strlen(url), NULL);
        if (dc != DEDUP_OK) {
            cli_error(r->cmd, "cannot index %s: %s", url, dedup_strerror(dc));
            goto done;
        }
        if (html) {
            int clustered = rep[i] != NONE || has_dup[i];
            const char *text = clustered ? read_text(r, g, &buf, &bufcap) : NULL;
            struct cli_doc cd = {.id = url,
                                 .id_len = strlen(url),
                                 .fp = fp,
                                 .title = str_at(r, g->title),
                                 .text = text,
                                 .text_len = text ? g->text_len : 0};
            if (cli_report_doc(html, &cd) != 0)
                goto done;
        }
    }
    if (html) {
        for (size_t i = 0; i < r->n; i++)
            has_dup[i] = has_dup[i] || rep[i] != NONE; /* now: the page is clustered */
        if (texts_notes(r, has_dup, html) != 0)
            goto done;
    }
    if (html)
        for (size_t i = 0; i < r->n; i++) {
            const struct cr_page *g = &r->pages[i];
            if (doc[i])
                continue;
            char why[600];
            const char *reason = str_at(r, g->reason);
            if (g->decision == CRAWL_DECISION_NEAR_DUPLICATE ||
                g->decision == CRAWL_DECISION_EXACT_DUPLICATE)
                snprintf(why, sizeof why, "%s of %.400s, which the report does not hold",
                         crawl_decision_name((enum crawl_decision)g->decision),
                         str_at(r, g->dup) ? str_at(r, g->dup) : "?");
            else
                snprintf(why, sizeof why, "%s%s%.500s",
                         crawl_decision_name((enum crawl_decision)g->decision), reason ? ": " : "",
                         reason ? reason : "");
            cli_report_skip(html, str_at(r, g->url), why);
        }
    enum dedup_code dc = dedup_clusters_from_pairs(ndocs, pairs, npairs, c);
    if (dc != DEDUP_OK) {
        cli_error(r->cmd, "cannot cluster: %s", dedup_strerror(dc));
        goto done;
    }
    status = CLI_OK;
    goto done;
oom:
    cli_error(r->cmd, "out of memory building the clusters of the crawl");
done:
    if (status != CLI_OK) {
        dedup_index_free(*idx);
        *idx = NULL;
    }
    free(m.slot);
    free(rep);
    free(doc);
    free(order);
    free(has_dup);
    free(pairs);
    free(buf);
    return status;
}

int cli_crawl_report_check_path(const char *cmd, const char *path)
{
    char tmp[4200];
    struct stat st;
    if (stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        cli_error(cmd, "cannot create report %s: %s", path, strerror(EISDIR));
        return CLI_RUNTIME;
    }
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    FILE *f = fopen(tmp, "w");
    if (!f) {
        cli_error(cmd, "cannot create report %s: %s", path, strerror(errno));
        return CLI_RUNTIME;
    }
    fclose(f);
    unlink(tmp);
    return CLI_OK;
}

int cli_crawl_report_write(struct cli_crawl_report *r, const char *path, unsigned k, char **inputs,
                           int ninputs)
{
    struct cli_report *html = cli_report_new(r->cmd);
    struct dedup_index *idx = NULL;
    struct dedup_clusters *c = NULL;
    char tmp[4200];
    FILE *out = NULL;
    int status = CLI_RUNTIME;
    if (!html) {
        cli_error(r->cmd, "out of memory");
        return CLI_RUNTIME;
    }
    cli_report_inputs(html, NULL, 0, inputs, ninputs);
    if (cli_crawl_report_clusters(r, k, html, &idx, &c) != CLI_OK)
        goto done;
    snprintf(tmp, sizeof tmp, "%s.tmp", path);
    out = fopen(tmp, "w");
    if (!out) {
        cli_error(r->cmd, "cannot create report %s (written as %s first): %s", path, tmp,
                  strerror(errno));
        goto done;
    }
    cli_report_write(out, html, idx, c, k);
    int werr = ferror(out);
    if (fclose(out) != 0 || werr) {
        cli_error(r->cmd, "cannot write report %s: %s", tmp, strerror(errno));
        unlink(tmp);
        goto done;
    }
    if (rename(tmp, path) != 0) {
        cli_error(r->cmd, "cannot rename %s to %s: %s", tmp, path, strerror(errno));
        unlink(tmp);
        goto done;
    }
    status = CLI_OK;
done:
    dedup_clusters_free(c);
    dedup_index_free(idx);
    cli_report_free(html);
    return status;
}
