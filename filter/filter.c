/*
 * libsimcrawl's filter (<simcrawl.h>): a page in, a verdict out. One check runs the page
 * pipeline of filter/pipeline.h (extract, tokens, template blocks, features, simhash)
 * outside any lock, then takes the one decision of filter/decide.h (shared with `simcrawl
 * crawl` and `simcrawl dedup`) under its write lock: the same id already indexed (its
 * stored decision, NEW), the same payload bytes as an indexed page (XXH3-128 of the bytes
 * as the payload key: EXACT_DUPLICATE), a page within k (dedup_index_nearest:
 * NEAR_DUPLICATE), or new: added to the index (dedup/index.c, Manku et al.'s permuted
 * tables), to the id and payload maps, to the host's template counts, and, in the
 * decision's hook, appended to the journal (filter/journal.c) before check() returns. A
 * near-duplicate of a young host counts its template blocks too (FILTER_DECIDE_LEARN_NEAR):
 * its learn record is appended first (hook_learning), so that a replay counts it again.
 *
 * Durability: INDEX is loaded (dedup_index_load), then INDEX.journal replayed; on close,
 * and when the journal grows past a bound, the state is compacted: the payload hashes to
 * INDEX.payloads (written and renamed first), the index with its templates to INDEX
 * (dedup_index_save: atomic rename), then the journal is truncated to its header. A kill
 * between those steps leaves journal records whose ids INDEX already holds: replay skips
 * them (idempotent by id). INDEX.lock (dedup_lock_acquire) is held from open to close.
 * The library never prints: warnings go to the options' log callback.
 */
#include "filter/simcrawl.h"
#include "filter/decide.h"
#include "filter/filter_int.h"
#include "filter/pipeline.h"
#include "filter/redisidx.h"
#include "dedup/minhash.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define STR2(x) #x
#define STR(x) STR2(x)
#define VERSION_STRING                                                                             \
    STR(SIMCRAWL_VERSION_MAJOR) "." STR(SIMCRAWL_VERSION_MINOR) "." STR(SIMCRAWL_VERSION_PATCH)

#define DEFAULT_MAX_BYTES ((size_t)64 * 1024 * 1024)
#define DEFAULT_LOCK_WAIT 30.0
#define DEFAULT_JOURNAL_MAX ((uint64_t)64 * 1024 * 1024)
#define DESIGN_DOCS (1u << 20) /* the table design of a new index is chosen for ~1M pages */
#define PAYLOADS_MAGIC "SIMCPAYL"
#define LOG_MAX 512

enum fsync_mode { FSYNC_NO = 0, FSYNC_INTERVAL, FSYNC_ALWAYS };

/* ---- version, errors ---- */

const char *simcrawl_version(void)
{
    return VERSION_STRING;
}

unsigned simcrawl_fingerprint_version(void)
{
    return DEDUP_FINGERPRINT_VERSION;
}

const char *simcrawl_strerror(int code)
{
    switch (code) {
    case SIMCRAWL_NEW:
        return "new";
    case SIMCRAWL_NEAR_DUPLICATE:
        return "near-duplicate";
    case SIMCRAWL_EXACT_DUPLICATE:
        return "exact duplicate";
    case SIMCRAWL_TOO_SHORT:
        return "too little text to fingerprint";
    case SIMCRAWL_NOT_HTML:
        return "not an html page";
    case SIMCRAWL_ENOMEM:
        return "out of memory";
    case SIMCRAWL_EINVAL:
        return "invalid argument";
    case SIMCRAWL_EIO:
        return "cannot read or write the index or its journal";
    case SIMCRAWL_ELOCKED:
        return "the index file is locked by another process";
    case SIMCRAWL_EVERSION:
        return "the index file is of another format or fingerprint version";
    case SIMCRAWL_ECORRUPT:
        return "the index file is damaged";
    case SIMCRAWL_ETOOLARGE:
        return "the page is over the size cap";
    case SIMCRAWL_EMISMATCH:
        return "k differs from the index file's k";
    case SIMCRAWL_ECLOSED:
        return "the filter cannot take more pages (a write failed)";
    case SIMCRAWL_EMETHOD:
        return "the index or its journal is of the other method";
    default:
        return "unknown code";
    }
}

static int from_dedup(enum dedup_code c)
{
    switch (c) {
    case DEDUP_OK:
        return 0;
    case DEDUP_ENOMEM:
        return SIMCRAWL_ENOMEM;
    case DEDUP_EINVAL:
        return SIMCRAWL_EINVAL;
    case DEDUP_ETOOSHORT:
        return SIMCRAWL_TOO_SHORT;
    case DEDUP_ETOOLARGE:
        return SIMCRAWL_ETOOLARGE;
    case DEDUP_EIO:
        return SIMCRAWL_EIO;
    case DEDUP_EVERSION:
        return SIMCRAWL_EVERSION;
    case DEDUP_ELOCKED:
        return SIMCRAWL_ELOCKED;
    case DEDUP_EFORMAT:
    case DEDUP_ETRUNCATED:
    case DEDUP_ECHECKSUM:
        return SIMCRAWL_ECORRUPT;
    }
    return SIMCRAWL_EIO;
}

/* ---- options ---- */

struct simcrawl_options {
    unsigned k;
    int minhash;      /* the method: 0 simhash, 1 minhash */
    double threshold; /* minhash: the Jaccard estimate of a near-duplicate; 0: the file's */
    enum fsync_mode fsync;
    double lock_wait;
    int templates;
    size_t max_bytes;
    uint64_t journal_max;
    void (*log)(void *userdata, const char *message);
    void *log_userdata;
    int probe_lines;            /* LINES_OFF, LINES_ON, LINES_AUTO */
    uint64_t probe_lines_min;   /* fingerprints */
    uint64_t probe_lines_bytes; /* auto's cap; 0: a quarter of physical memory */
};

enum { LINES_OFF = 0, LINES_ON, LINES_AUTO };
#define LINES_MIN_DEFAULT ((uint64_t)1 << 21)

static const struct simcrawl_options defaults = {
    .k = DEDUP_K_DEFAULT,
    .fsync = FSYNC_INTERVAL,
    .lock_wait = DEFAULT_LOCK_WAIT,
    .templates = 1,
    .max_bytes = DEFAULT_MAX_BYTES,
    .journal_max = DEFAULT_JOURNAL_MAX,
    .probe_lines = LINES_OFF,
    .probe_lines_min = LINES_MIN_DEFAULT,
};

struct simcrawl_options *simcrawl_options_new(void)
{
    struct simcrawl_options *o = malloc(sizeof *o);
    if (o)
        *o = defaults;
    return o;
}

void simcrawl_options_free(struct simcrawl_options *o)
{
    free(o);
}

int simcrawl_options_set_k(struct simcrawl_options *o, unsigned k)
{
    if (!o || k > DEDUP_K_MAX)
        return SIMCRAWL_EINVAL;
    o->k = k;
    return 0;
}

int simcrawl_options_set_method(struct simcrawl_options *o, const char *method)
{
    if (!o || !method)
        return SIMCRAWL_EINVAL;
    if (strcmp(method, "simhash") == 0)
        o->minhash = 0;
    else if (strcmp(method, "minhash") == 0)
        o->minhash = 1;
    else
        return SIMCRAWL_EINVAL;
    return 0;
}

int simcrawl_options_set_threshold(struct simcrawl_options *o, double jaccard)
{
    if (!o || !(jaccard >= 0 && jaccard <= 1))
        return SIMCRAWL_EINVAL;
    o->threshold = jaccard;
    return 0;
}

int simcrawl_options_set_fsync(struct simcrawl_options *o, const char *mode)
{
    if (!o || !mode)
        return SIMCRAWL_EINVAL;
    if (strcmp(mode, "always") == 0)
        o->fsync = FSYNC_ALWAYS;
    else if (strcmp(mode, "interval") == 0)
        o->fsync = FSYNC_INTERVAL;
    else if (strcmp(mode, "no") == 0)
        o->fsync = FSYNC_NO;
    else
        return SIMCRAWL_EINVAL;
    return 0;
}

int simcrawl_options_set_lock_wait(struct simcrawl_options *o, double seconds)
{
    if (!o || !(seconds >= 0) || seconds > 1e6)
        return SIMCRAWL_EINVAL;
    o->lock_wait = seconds;
    return 0;
}

int simcrawl_options_set_templates(struct simcrawl_options *o, int on)
{
    if (!o || (on != 0 && on != 1))
        return SIMCRAWL_EINVAL;
    o->templates = on;
    return 0;
}

int simcrawl_options_set_max_bytes(struct simcrawl_options *o, size_t bytes)
{
    if (!o || bytes == 0 || bytes > (size_t)INT32_MAX - 16)
        return SIMCRAWL_EINVAL;
    o->max_bytes = bytes;
    return 0;
}

int simcrawl_options_set_log(struct simcrawl_options *o,
                             void (*cb)(void *userdata, const char *message), void *userdata)
{
    if (!o)
        return SIMCRAWL_EINVAL;
    o->log = cb;
    o->log_userdata = userdata;
    return 0;
}

int simcrawl_options_set_probe_lines(struct simcrawl_options *o, const char *mode)
{
    if (!o || !mode)
        return SIMCRAWL_EINVAL;
    if (strcmp(mode, "off") == 0)
        o->probe_lines = LINES_OFF;
    else if (strcmp(mode, "on") == 0)
        o->probe_lines = LINES_ON;
    else if (strcmp(mode, "auto") == 0)
        o->probe_lines = LINES_AUTO;
    else
        return SIMCRAWL_EINVAL;
    return 0;
}

int simcrawl_options_set_probe_lines_min(struct simcrawl_options *o, uint64_t fingerprints)
{
    if (!o || fingerprints > UINT32_MAX - 1)
        return SIMCRAWL_EINVAL;
    o->probe_lines_min = fingerprints;
    return 0;
}

int simcrawl_options_set_probe_lines_max_bytes(struct simcrawl_options *o, uint64_t bytes)
{
    if (!o)
        return SIMCRAWL_EINVAL;
    o->probe_lines_bytes = bytes;
    return 0;
}

int simcrawl_options_set_journal_max(struct simcrawl_options *o, uint64_t bytes)
{
    if (!o || bytes < FJ_HEADER_BYTES)
        return SIMCRAWL_EINVAL;
    o->journal_max = bytes;
    return 0;
}

/* ---- matches ---- */

struct simcrawl_match {
    uint64_t fp;
    unsigned distance;
    int minhash; /* filled by a MinHash filter: similarity is jaccard */
    double jaccard;
    uint32_t *sig; /* the page's signature (sig_h values; 0: none) */
    unsigned sig_h, sig_cap;
    int added; /* the check added the page */
    int has_dup;
    char *dup;
    size_t dup_cap;
    unsigned want; /* SIMCRAWL_MATCH_TEXT | SIMCRAWL_MATCH_LINKS */
    int has_text;  /* text[0..text_len) holds the last page's main text */
    char *text;
    size_t text_len, text_cap;
    char *links; /* the links' URLs, each NUL-terminated, back to back */
    size_t links_len, links_cap;
    size_t *link_off; /* n_links offsets into links */
    size_t n_links, link_off_cap;
};

struct simcrawl_match *simcrawl_match_new(void)
{
    return calloc(1, sizeof(struct simcrawl_match));
}

void simcrawl_match_free(struct simcrawl_match *m)
{
    if (!m)
        return;
    free(m->dup);
    free(m->sig);
    free(m->text);
    free(m->links);
    free(m->link_off);
    free(m);
}

int simcrawl_match_want(struct simcrawl_match *m, unsigned flags)
{
    if (!m || (flags & ~(unsigned)(SIMCRAWL_MATCH_TEXT | SIMCRAWL_MATCH_LINKS)))
        return SIMCRAWL_EINVAL;
    m->want = flags;
    return 0;
}

const char *simcrawl_match_text(const struct simcrawl_match *m, size_t *len)
{
    if (len)
        *len = m && m->has_text ? m->text_len : 0;
    return m && m->has_text ? m->text : NULL;
}

size_t simcrawl_match_link_count(const struct simcrawl_match *m)
{
    return m ? m->n_links : 0;
}

const char *simcrawl_match_link(const struct simcrawl_match *m, size_t i)
{
    return m && i < m->n_links ? m->links + m->link_off[i] : NULL;
}

/* Grows *buf (capacity *cap) to hold need bytes; 0 or -1 when out of memory. */
static int grow_to(void **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 256;
    while (c < need)
        c *= 2;
    void *p = realloc(*buf, c);
    if (!p)
        return -1;
    *buf = p;
    *cap = c;
    return 0;
}

/* Copies what m asked for (simcrawl_match_want) out of the parsed page doc: its main text
 * and its links' URLs. SIMCRAWL_ENOMEM leaves m without them. */
static int match_set_doc(struct simcrawl_match *m, const struct extract_doc *doc)
{
    if (!m || !doc || !m->want)
        return 0;
    if (m->want & SIMCRAWL_MATCH_TEXT) {
        size_t len = 0;
        const char *t = extract_doc_text(doc, &len);
        if (grow_to((void **)&m->text, &m->text_cap, len + 1) != 0)
            return SIMCRAWL_ENOMEM;
        memcpy(m->text, t, len);
        m->text[len] = '\0';
        m->text_len = len;
        m->has_text = 1;
    }
    if (m->want & SIMCRAWL_MATCH_LINKS) {
        size_t n = extract_doc_link_count(doc);
        if (grow_to((void **)&m->link_off, &m->link_off_cap, (n + 1) * sizeof *m->link_off) != 0)
            return SIMCRAWL_ENOMEM;
        m->links_len = 0;
        for (size_t i = 0; i < n; i++) {
            const char *u = extract_doc_link(doc, i)->url;
            size_t ul = strlen(u) + 1;
            if (grow_to((void **)&m->links, &m->links_cap, m->links_len + ul) != 0) {
                m->n_links = 0;
                return SIMCRAWL_ENOMEM;
            }
            memcpy(m->links + m->links_len, u, ul);
            m->link_off[i] = m->links_len;
            m->links_len += ul;
        }
        m->n_links = n;
    }
    return 0;
}

uint64_t simcrawl_match_fingerprint(const struct simcrawl_match *m)
{
    return m ? m->fp : 0;
}

const char *simcrawl_match_duplicate_of(const struct simcrawl_match *m)
{
    return m && m->has_dup ? m->dup : NULL;
}

int simcrawl_match_added(const struct simcrawl_match *m)
{
    return m ? m->added : 0;
}

unsigned simcrawl_match_distance(const struct simcrawl_match *m)
{
    return m && m->has_dup ? m->distance : 0;
}

double simcrawl_match_similarity(const struct simcrawl_match *m)
{
    if (!m || !m->has_dup)
        return 0.0;
    return m->minhash ? m->jaccard : 1.0 - (double)m->distance / 64.0;
}

const uint32_t *simcrawl_match_signature(const struct simcrawl_match *m, size_t *h)
{
    if (h)
        *h = m ? m->sig_h : 0;
    return m && m->sig_h ? m->sig : NULL;
}

static void match_reset(struct simcrawl_match *m, uint64_t fp)
{
    if (!m)
        return;
    m->fp = fp;
    m->distance = 0;
    m->jaccard = 0;
    m->sig_h = 0;
    m->added = 0;
    m->has_dup = 0;
    m->has_text = 0;
    m->n_links = 0;
}

/* Copies id into m as the page duplicated; SIMCRAWL_ENOMEM leaves m without one. */
static int match_set_dup(struct simcrawl_match *m, const char *id, size_t len, unsigned d)
{
    if (!m)
        return 0;
    if (len + 1 > m->dup_cap) {
        char *n = realloc(m->dup, len + 1);
        if (!n)
            return SIMCRAWL_ENOMEM;
        m->dup = n;
        m->dup_cap = len + 1;
    }
    memcpy(m->dup, id, len);
    m->dup[len] = '\0';
    m->has_dup = 1;
    m->distance = d;
    return 0;
}

/* Copies the page's signature into m; SIMCRAWL_ENOMEM leaves m without one. */
static int match_set_sig(struct simcrawl_match *m, const uint32_t *sig, unsigned h)
{
    if (!m)
        return 0;
    if (h > m->sig_cap) {
        uint32_t *n = realloc(m->sig, h * sizeof *n);
        if (!n)
            return SIMCRAWL_ENOMEM;
        m->sig = n;
        m->sig_cap = h;
    }
    memcpy(m->sig, sig, h * sizeof *sig);
    m->sig_h = h;
    return 0;
}

/* ---- the page's verdict before the index: fingerprint or why not ---- */

/* 1 when content_type names an HTML (or XHTML) page, or says nothing (NULL, empty). */
static int html_type(const char *ct)
{
    if (!ct)
        return 1;
    while (*ct == ' ' || *ct == '\t')
        ct++;
    size_t n = strcspn(ct, "; \t");
    if (n == 0)
        return 1;
    static const char *const ok[] = {"text/html", "application/xhtml+xml", NULL};
    for (int i = 0; ok[i]; i++)
        if (strlen(ok[i]) == n && strncasecmp(ct, ok[i], n) == 0)
            return 1;
    return 0;
}

/* The decision (>= 0) or error a pipeline failure stands for. */
static int from_pipeline(const struct filter_fp_result *r)
{
    if (filter_fp_result_too_little_text(r))
        return SIMCRAWL_TOO_SHORT;
    if (r->stage == FILTER_FP_EXTRACT || r->stage == FILTER_FP_TOKENS) {
        switch (r->extract_code) {
        case EXTRACT_ENOMEM:
            return SIMCRAWL_ENOMEM;
        case EXTRACT_ETOOLARGE:
            return SIMCRAWL_ETOOLARGE;
        case EXTRACT_EBINARY:
        case EXTRACT_EPARSE:
            return SIMCRAWL_NOT_HTML;
        default:
            return SIMCRAWL_EINVAL;
        }
    }
    return from_dedup(r->dedup_code);
}

int simcrawl_fingerprint(const void *page, size_t len, const char *content_type,
                         uint64_t *fingerprint)
{
    if ((!page && len) || !fingerprint)
        return SIMCRAWL_EINVAL;
    if (!html_type(content_type))
        return SIMCRAWL_NOT_HTML;
    if (len > DEFAULT_MAX_BYTES)
        return SIMCRAWL_ETOOLARGE;
    struct filter_fp_opts o = {0};
    o.max_bytes = DEFAULT_MAX_BYTES;
    struct filter_fp_result r;
    int rc = filter_fingerprint_page(page ? page : "", len, content_type, NULL, &o, &r);
    int out = rc == 0 ? 0 : from_pipeline(&r);
    if (rc == 0)
        *fingerprint = r.fingerprint;
    filter_fp_result_release(&r);
    return out;
}

/* ---- the filter ---- */

struct simcrawl_filter {
    struct simcrawl_options o;
    char *path, *journal_path, *payloads_path;
    struct dedup_lock *lock;
    int jfd;
    _Atomic uint64_t journal_bytes; /* its size (read unlocked by journal_bytes()) */
    uint64_t journal_next;          /* compact when journal_bytes passes it */
    /* fsync "interval": the syncer thread fdatasync()s the journal at most once a second,
     * within about a second of a write (dirty, under sync_mu) */
    pthread_t syncer;
    int has_syncer, dirty, stop;
    pthread_mutex_t sync_mu;
    pthread_cond_t sync_cv;
    struct dedup_index *idx;
    unsigned k;
    /* the MinHash method: the LSH index instead of idx (swapped by a compaction under the
     * decision's write lock) and its hasher, which check() uses outside any lock */
    int minhash;
    struct dedup_lsh *lsh;
    struct dedup_minhash *mh;
    double threshold;
    /* the decision (filter/decide.h) over idx, with its lock: ids, payload keys (the
     * XXH3-128 below, 16 bytes), nearest, add, templates; the hooks below run under its
     * write lock */
    struct filter_decide *decide;
    XXH128_hash_t *payload; /* per document, for INDEX.payloads; {0, 0}: unknown */
    size_t payload_cap;
    uint8_t *rec; /* the record being written (under the write lock) */
    size_t rec_cap;
    _Atomic uint64_t count;
    _Atomic int broken;    /* a journal write failed: ECLOSED from now on (read unlocked) */
    struct fr_pool *redis; /* index_path a Redis URL: the index is there (none of the above
                            * but o, k and count is used) */
};

static void logf_(const struct simcrawl_filter *f, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));

/* The index on Redis (index_path redis://... or unix://...): the functions below the
 * neighbours'. */
struct hood;
static int redis_open(struct simcrawl_filter *f, const char *url);
static uint64_t redis_count(struct simcrawl_filter *f);
static int redis_check_page(struct simcrawl_filter *f, const char *id, size_t id_len,
                            const void *page, size_t len, const char *content_type, unsigned flags,
                            struct simcrawl_match *m);
static int redis_check_fp(struct simcrawl_filter *f, const char *id, size_t id_len, uint64_t fp,
                          unsigned flags, struct simcrawl_match *m);
static int redis_delete(struct simcrawl_filter *f, const char *id, size_t id_len);
static int redis_neighbors(struct simcrawl_filter *f, uint64_t fp, unsigned k, size_t max,
                           struct hood *h);

/* Documents in the index (deleted ones too, until a compaction). */
static uint32_t f_docs(const struct simcrawl_filter *f)
{
    return f->minhash ? dedup_lsh_doc_count(f->lsh) : dedup_index_doc_count(f->idx);
}

static const char *method_name(int minhash)
{
    return minhash ? "minhash" : "simhash";
}
static void logf_(const struct simcrawl_filter *f, const char *fmt, ...)
{
    if (!f->o.log)
        return;
    char buf[LOG_MAX];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    f->o.log(f->o.log_userdata, buf);
}

/* The payload key of the decision: the 16 bytes of the XXH3-128 hash. */
static void payload_bytes(XXH128_hash_t h, unsigned char key[16])
{
    memcpy(key, &h.low64, 8);
    memcpy(key + 8, &h.high64, 8);
}

/* Makes room for document doc's payload slot. */
static int payload_reserve(struct simcrawl_filter *f, size_t n)
{
    if (n <= f->payload_cap)
        return 0;
    size_t ncap = f->payload_cap ? f->payload_cap : 1024;
    while (ncap < n)
        ncap *= 2;
    XXH128_hash_t *np = realloc(f->payload, ncap * sizeof *np);
    if (!np)
        return -1;
    memset(np + f->payload_cap, 0, (ncap - f->payload_cap) * sizeof *np);
    f->payload = np;
    f->payload_cap = ncap;
    return 0;
}

/* A page's template blocks could not be counted: a warning (templates are a heuristic, the
 * page is in). */
static void blocks_failed(const struct simcrawl_filter *f, enum dedup_code dc, const char *id,
                          size_t id_len)
{
    if (dc != DEDUP_OK)
        logf_(f, "cannot count the template blocks of %.*s: %s", (int)id_len, id,
              dedup_strerror(dc));
}

/* write() all of buf[0..len) at the journal's end. 0 or an errno value. */
static int write_all(int fd, const uint8_t *buf, size_t len)
{
    while (len) {
        ssize_t w = write(fd, buf, len);
        if (w < 0) {
            if (errno == EINTR)
                continue;
            return errno;
        }
        buf += w;
        len -= (size_t)w;
    }
    return 0;
}

/* ---- the payloads file: INDEX.payloads ---- */
/*
 * "SIMCPAYL" | u32 1 | u32 0 | u64 documents N | u64 XXH3_64bits(hashes) | N x (u64 low,
 * u64 high), little-endian (written on little-endian hosts as memory, checked on load):
 * the XXH3-128 payload hash of each indexed document, by document number; {0, 0} for a
 * document added without one (by `simcrawl index add`). Written and renamed before the
 * index at each compaction, so it never describes fewer documents than INDEX.
 */
static int payloads_save(struct simcrawl_filter *f)
{
    uint32_t n = f_docs(f);
    char tmp[4096];
    int fd = -1, err = 0;
    if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", f->payloads_path) >= sizeof tmp)
        return ENAMETOOLONG;
    uint8_t head[32];
    memcpy(head, PAYLOADS_MAGIC, 8);
    uint32_t v = 1, z = 0;
    uint64_t nn = n, sum = XXH3_64bits(f->payload ? (const void *)f->payload : "",
                                       (size_t)n * sizeof *f->payload);
    memcpy(head + 8, &v, 4);
    memcpy(head + 12, &z, 4);
    memcpy(head + 16, &nn, 8);
    memcpy(head + 24, &sum, 8);
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0)
        return errno;
    err = write_all(fd, head, sizeof head);
    if (!err && n)
        err = write_all(fd, (const uint8_t *)f->payload, (size_t)n * sizeof *f->payload);
    if (!err && f->o.fsync != FSYNC_NO && fsync(fd) != 0)
        err = errno;
    if (close(fd) != 0 && !err)
        err = errno;
    if (!err && rename(tmp, f->payloads_path) != 0)
        err = errno;
    if (err)
        unlink(tmp);
    return err;
}

/* Loads INDEX.payloads into f->payload for the loaded index's documents (the file may
 * describe more: a kill between its rename and the index's). Missing: none known. */
static int payloads_load(struct simcrawl_filter *f)
{
    uint32_t n = f_docs(f);
    int rc = 0;
    FILE *fp = fopen(f->payloads_path, "rb");
    if (!fp)
        return errno == ENOENT ? 0 : SIMCRAWL_EIO;
    uint8_t head[32];
    uint64_t nn, sum;
    uint32_t v;
    if (fread(head, 1, sizeof head, fp) != sizeof head || memcmp(head, PAYLOADS_MAGIC, 8) != 0)
        goto corrupt;
    memcpy(&v, head + 8, 4);
    memcpy(&nn, head + 16, 8);
    memcpy(&sum, head + 24, 8);
    if (v != 1 || nn > DEDUP_INDEX_MAX_DOCS)
        goto corrupt;
    size_t bytes = (size_t)nn * sizeof(XXH128_hash_t);
    if (payload_reserve(f, nn > n ? (size_t)nn : n) != 0) {
        rc = SIMCRAWL_ENOMEM;
        goto done;
    }
    if (bytes && fread(f->payload, 1, bytes, fp) != bytes)
        goto corrupt;
    if (XXH3_64bits(f->payload, bytes) != sum)
        goto corrupt;
    if (nn > n) /* documents INDEX never got: their journal records bring them back */
        memset(f->payload + n, 0, (size_t)(nn - n) * sizeof *f->payload);
    goto done;
corrupt:
    if (f->payload)
        memset(f->payload, 0, f->payload_cap * sizeof *f->payload);
    logf_(f, "%s is damaged: exact duplicates of the pages indexed before are not known",
          f->payloads_path);
done:
    fclose(fp);
    return rc;
}

/* The payload keys of the loaded index's documents, for the decision (its id map it builds
 * itself): the first document of a payload is its page. */
static int maps_build(struct simcrawl_filter *f)
{
    uint32_t n = f_docs(f);
    if (payload_reserve(f, n ? n : 1) != 0)
        return SIMCRAWL_ENOMEM;
    for (uint32_t d = 0; d < n; d++) {
        if (!f->payload[d].low64 && !f->payload[d].high64)
            continue;
        unsigned char key[16];
        payload_bytes(f->payload[d], key);
        if (filter_decide_remember(f->decide, key, sizeof key, d, NULL, 0) == FILTER_STORED_ENOMEM)
            return SIMCRAWL_ENOMEM;
    }
    atomic_store(&f->count, n);
    return 0;
}

/* Deleted documents dropped for good (filter_decide_rebuild_locked): the index is the
 * decision's new one, the payload hashes renumbered with it. Under the write lock (or at
 * close). 0 or SIMCRAWL_ENOMEM (nothing changed). */
static int rebuild(struct simcrawl_filter *f)
{
    uint32_t *map, n, live;
    if (f->minhash) {
        struct dedup_lsh *nl, *ol;
        if (filter_decide_rebuild_lsh_locked(f->decide, &nl, &ol, &map) != DEDUP_OK)
            return SIMCRAWL_ENOMEM;
        if (!nl)
            return 0;
        n = dedup_lsh_doc_count(ol);
        live = dedup_lsh_doc_count(nl);
        f->lsh = nl;
        dedup_lsh_free(ol);
    } else {
        struct dedup_index *ni, *oi;
        if (filter_decide_rebuild_locked(f->decide, &ni, &oi, &map) != DEDUP_OK)
            return SIMCRAWL_ENOMEM;
        if (!ni)
            return 0;
        n = dedup_index_doc_count(oi);
        live = dedup_index_doc_count(ni);
        f->idx = ni;
        dedup_index_free(oi);
    }
    for (uint32_t doc = 0; doc < n; doc++) /* map[doc] <= doc, increasing: in place */
        if (map[doc] != UINT32_MAX)
            f->payload[map[doc]] = f->payload[doc];
    memset(f->payload + live, 0, (size_t)(n - live) * sizeof *f->payload);
    free(map);
    atomic_store(&f->count, live);
    return 0;
}

/*
 * Compaction: deleted documents dropped, payloads, then the index (atomic rename), then
 * the journal back to its header. Under the write lock (or at close). 0 or a negative
 * error (the journal is then kept as it is: nothing is lost, the next compaction tries
 * again).
 */
static int compact(struct simcrawl_filter *f)
{
    int e = rebuild(f);
    if (e) {
        logf_(f, "cannot drop the deleted pages from %s: out of memory", f->path);
        return e;
    }
    e = payloads_save(f);
    if (e) {
        logf_(f, "cannot write %s: %s", f->payloads_path, strerror(e));
        return SIMCRAWL_EIO;
    }
    struct dedup_file_error ferr = {0};
    enum dedup_code dc = f->minhash ? dedup_lsh_save(f->lsh, f->path, &ferr)
                                    : dedup_index_save(f->idx, f->path, &ferr);
    if (dc != DEDUP_OK) {
        logf_(f, "cannot save %s: %s%s%s", f->path, dedup_strerror(dc), ferr.os_error ? ": " : "",
              ferr.os_error ? strerror(ferr.os_error) : "");
        return from_dedup(dc);
    }
    if (ftruncate(f->jfd, FJ_HEADER_BYTES) != 0) {
        logf_(f, "cannot truncate %s: %s", f->journal_path, strerror(errno));
        return SIMCRAWL_EIO;
    }
    if (f->o.fsync != FSYNC_NO)
        (void)fdatasync(f->jfd);
    f->journal_bytes = FJ_HEADER_BYTES;
    f->journal_next = f->o.journal_max;
    return 0;
}

struct replay {
    struct simcrawl_filter *f;
    uint64_t added, skipped;
    int err;
};

/* A delete record: the page forgotten again (no journal record: it is one). */
static int replay_delete(struct replay *rp, const struct fj_rec *r)
{
    struct filter_decide_result dr = {0};
    int deleted;
    int d = filter_decide_delete(rp->f->decide, r->id, r->id_len, 0, &dr, &deleted);
    filter_decide_result_release(&dr);
    if (d != 0) {
        rp->err = SIMCRAWL_ENOMEM;
        return 1;
    }
    if (deleted)
        atomic_fetch_sub(&rp->f->count, 1);
    return 0;
}

/* What the template table counts of a replayed page: its host, its whole text's hash and
 * its blocks, as record r (an add or a learn record) holds them. */
static void page_template_of(struct filter_decide_page *p, const struct fj_rec *r)
{
    p->host = r->host;
    p->host_len = r->host_len;
    p->doc_hash = r->doc_hash;
    p->blocks = r->blocks;
    p->n_blocks = r->n_blocks;
}

/* A learn record: a near-duplicate's template blocks counted again, in journal order. */
static int replay_learn(struct replay *rp, const struct fj_rec *r)
{
    struct filter_decide_page p = {0};
    p.id = r->id;
    p.id_len = r->id_len;
    page_template_of(&p, r);
    enum dedup_code c = filter_decide_learn(rp->f->decide, &p);
    if (c == DEDUP_ENOMEM) {
        rp->err = SIMCRAWL_ENOMEM;
        return 1;
    }
    blocks_failed(rp->f, c, r->id, r->id_len);
    return 0;
}

static int replay_one(void *ud, const struct fj_rec *r)
{
    struct replay *rp = ud;
    struct simcrawl_filter *f = rp->f;
    if (r->kind == FJ_DELETE)
        return replay_delete(rp, r);
    if (r->kind == FJ_LEARN)
        return replay_learn(rp, r);
    if ((r->kind == FJ_ADD_MINHASH) != f->minhash) {
        logf_(f, "%s: a %s record in a %s journal", f->journal_path,
              method_name(r->kind == FJ_ADD_MINHASH), method_name(f->minhash));
        rp->err = SIMCRAWL_ECORRUPT;
        return 1;
    }
    if (f->minhash && (r->sig_k != dedup_minhash_k(f->mh) || r->sig_h != dedup_minhash_h(f->mh) ||
                       r->sig_seed != dedup_minhash_seed(f->mh))) {
        logf_(f,
              "%s: a signature of %u-word shingles and %u values (seed %016llx), where "
              "the index has %u and %u (seed %016llx)",
              f->journal_path, r->sig_k, r->sig_h, (unsigned long long)r->sig_seed,
              dedup_minhash_k(f->mh), dedup_minhash_h(f->mh),
              (unsigned long long)dedup_minhash_seed(f->mh));
        rp->err = SIMCRAWL_EMISMATCH;
        return 1;
    }
    struct filter_decide_page p = {0};
    struct filter_decide_result dr = {0};
    p.id = r->id;
    p.id_len = r->id_len;
    int known;
    enum dedup_code lc = filter_decide_lookup(f->decide, &p, &dr, &known); /* by id only */
    filter_decide_result_release(&dr);
    if (lc != DEDUP_OK) {
        rp->err = SIMCRAWL_ENOMEM;
        return 1;
    }
    if (known) { /* saved in INDEX before a kill */
        rp->skipped++;
        return 0;
    }
    XXH128_hash_t pay = {r->payload_lo, r->payload_hi};
    unsigned char key[16];
    payload_bytes(pay, key);
    p.has_fp = 1;
    p.fp = r->fp;
    p.sig = r->sig;
    if (pay.low64 || pay.high64) {
        p.key = key;
        p.key_len = sizeof key;
    }
    page_template_of(&p, r);
    uint32_t doc;
    enum dedup_code tc;
    enum dedup_code dc = filter_decide_add(f->decide, &p, &doc, &tc);
    if (dc != DEDUP_OK) {
        rp->err = from_dedup(dc);
        return 1;
    }
    f->payload[doc] = pay; /* room made by the reserve hook */
    atomic_fetch_add(&f->count, 1);
    blocks_failed(f, tc, r->id, r->id_len);
    rp->added++;
    return 0;
}

/* Rewrites an older header as this version's (its records are read the same), so that
 * libsimcrawl 0.2, which knows no delete record, and 0.4, which knows no learn record,
 * refuse the journal rather than drop one (and what follows) as torn. Through a second
 * descriptor: pwrite() on the O_APPEND one would append. */
static int journal_upgrade(struct simcrawl_filter *f)
{
    unsigned ver = f->minhash ? FJ_VERSION_MINHASH : FJ_VERSION;
    uint8_t v[4] = {ver & 0xff, (ver >> 8) & 0xff, (ver >> 16) & 0xff, ver >> 24};
    int fd = open(f->journal_path, O_WRONLY | O_CLOEXEC);
    if (fd < 0)
        return -1;
    int rc = pwrite(fd, v, sizeof v, FJ_VERSION_OFFSET) == (ssize_t)sizeof v ? 0 : -1;
    if (rc == 0 && f->o.fsync != FSYNC_NO && fdatasync(fd) != 0)
        rc = -1;
    if (close(fd) != 0)
        rc = -1;
    return rc;
}

/* Opens INDEX.journal (made with a header when missing or empty) and replays it. */
static int journal_open(struct simcrawl_filter *f)
{
    int rc = 0;
    uint8_t *data = NULL;
    f->jfd = open(f->journal_path, O_RDWR | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (f->jfd < 0) {
        logf_(f, "cannot open %s: %s", f->journal_path, strerror(errno));
        return SIMCRAWL_EIO;
    }
    struct stat st;
    if (fstat(f->jfd, &st) != 0)
        goto io;
    size_t len = (size_t)st.st_size, got = 0;
    if (len < FJ_HEADER_BYTES) { /* new, or killed while its header was written */
        uint8_t h[FJ_HEADER_BYTES];
        if (f->minhash)
            fj_header_minhash(h);
        else
            fj_header(h, f->k);
        if (ftruncate(f->jfd, 0) != 0 || write_all(f->jfd, h, sizeof h) != 0)
            goto io;
        f->journal_bytes = FJ_HEADER_BYTES;
        return 0;
    }
    data = malloc(len);
    if (!data) {
        rc = SIMCRAWL_ENOMEM;
        goto done;
    }
    while (got < len) {
        ssize_t r = pread(f->jfd, data + got, len - got, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            goto io;
        got += (size_t)r;
    }
    unsigned jk, jv;
    if (fj_header_check(data, len, &jk, &jv) != DEDUP_OK) {
        logf_(f, "%s is not a journal of this version", f->journal_path);
        rc = SIMCRAWL_EVERSION;
        goto done;
    }
    if (fj_version_minhash(jv) != f->minhash) {
        logf_(f, "%s is the journal of a %s filter, opened as a %s one", f->journal_path,
              method_name(fj_version_minhash(jv)), method_name(f->minhash));
        rc = SIMCRAWL_EMETHOD;
        goto done;
    }
    if (!f->minhash && jk != f->k) {
        rc = SIMCRAWL_EMISMATCH;
        goto done;
    }
    if (jv != (f->minhash ? FJ_VERSION_MINHASH : FJ_VERSION) && journal_upgrade(f) != 0)
        goto io;
    struct replay rp = {f, 0, 0, 0};
    size_t good;
    const char *why;
    int stopped;
    if (fj_scan(data + FJ_HEADER_BYTES, len - FJ_HEADER_BYTES, replay_one, &rp, &stopped, &good,
                &why) != DEDUP_OK) {
        rc = SIMCRAWL_ENOMEM;
        goto done;
    }
    if (stopped) {
        rc = rp.err;
        goto done;
    }
    if (why) {
        size_t at = FJ_HEADER_BYTES + good;
        logf_(f,
              "%s: dropped %zu bytes at offset %zu (%s): a record torn by a crash, "
              "whose page was never reported new; %llu pages replayed",
              f->journal_path, len - at, at, why, (unsigned long long)rp.added);
        if (ftruncate(f->jfd, (off_t)at) != 0)
            goto io;
        len = at;
    }
    f->journal_bytes = len;
    goto done;
io:
    logf_(f, "cannot read or write %s: %s", f->journal_path, strerror(errno));
    rc = SIMCRAWL_EIO;
done:
    free(data);
    return rc;
}

/*
 * HOW IT WORKS (fsync "interval"): check() sets dirty after its write() and, when it was
 * clean, signals; the syncer wakes, clears dirty, fdatasync()s (outside the mutex: writes go on
 * meanwhile), then waits out the rest of the second before it looks at dirty again. So a record is
 * on disk about a second after its write at the latest, with at most one fdatasync a second however
 * many threads write. close() stops the syncer before the compaction.
 */
static void *syncer_run(void *arg)
{
    struct simcrawl_filter *f = arg;
    pthread_mutex_lock(&f->sync_mu);
    while (!f->stop) {
        if (!f->dirty) {
            pthread_cond_wait(&f->sync_cv, &f->sync_mu);
            continue;
        }
        f->dirty = 0;
        pthread_mutex_unlock(&f->sync_mu);
        (void)fdatasync(f->jfd);
        struct timespec until;
        clock_gettime(CLOCK_REALTIME, &until);
        until.tv_sec += 1;
        pthread_mutex_lock(&f->sync_mu);
        while (!f->stop && pthread_cond_timedwait(&f->sync_cv, &f->sync_mu, &until) == 0)
            ;
    }
    pthread_mutex_unlock(&f->sync_mu);
    return NULL;
}

static void syncer_stop(struct simcrawl_filter *f)
{
    if (!f->has_syncer)
        return;
    pthread_mutex_lock(&f->sync_mu);
    f->stop = 1;
    pthread_cond_signal(&f->sync_cv);
    pthread_mutex_unlock(&f->sync_mu);
    pthread_join(f->syncer, NULL);
    f->has_syncer = 0;
    if (f->dirty && f->jfd >= 0)
        (void)fdatasync(f->jfd);
}

static void filter_free(struct simcrawl_filter *f)
{
    syncer_stop(f);
    pthread_mutex_destroy(&f->sync_mu);
    pthread_cond_destroy(&f->sync_cv);
    if (f->jfd >= 0)
        close(f->jfd);
    dedup_lock_release(f->lock);
    fr_close(f->redis);
    filter_decide_free(f->decide);
    dedup_index_free(f->idx);
    dedup_lsh_free(f->lsh);
    dedup_minhash_free(f->mh);
    free(f->payload);
    free(f->rec);
    free(f->path);
    free(f->journal_path);
    free(f->payloads_path);
    free(f);
}

static char *concat(const char *a, const char *b)
{
    size_t la = strlen(a), lb = strlen(b);
    char *s = malloc(la + lb + 1);
    if (s) {
        memcpy(s, a, la);
        memcpy(s + la, b, lb + 1);
    }
    return s;
}

/* ---- the decision's hooks: under its write lock ---- */

/* A journal write failed before: take no more pages. */
static int hook_start(void *userdata)
{
    struct simcrawl_filter *f = userdata;
    return f->broken ? SIMCRAWL_ECLOSED : 0;
}

/* The payload hash of a page (zero when it has no key). */
static XXH128_hash_t page_payload(const struct filter_decide_page *p)
{
    XXH128_hash_t pay = {0, 0};
    if (p->key) {
        memcpy(&pay.low64, p->key, 8);
        memcpy(&pay.high64, (const unsigned char *)p->key + 8, 8);
    }
    return pay;
}

/* The journal's add record of page p. */
static struct fj_rec add_record(const struct simcrawl_filter *f, const struct filter_decide_page *p)
{
    XXH128_hash_t pay = page_payload(p);
    struct fj_rec rec = {FJ_ADD,      p->fp,     pay.low64, pay.high64,  p->doc_hash,
                         p->id,       p->id_len, p->host,   p->host_len, p->blocks,
                         p->n_blocks, NULL,      0,         0,           0};
    if (f->minhash) {
        rec.kind = FJ_ADD_MINHASH;
        rec.sig = p->sig;
        rec.sig_h = dedup_minhash_h(f->mh);
        rec.sig_k = dedup_minhash_k(f->mh);
        rec.sig_seed = dedup_minhash_seed(f->mh);
    }
    return rec;
}

/* Before page p is added: room for its payload hash and its journal record, so that
 * hook_added, which runs once p is in the index, cannot run out of memory. */
static int hook_reserve(void *userdata, uint32_t docs, const struct filter_decide_page *p)
{
    struct simcrawl_filter *f = userdata;
    if (payload_reserve(f, docs) != 0)
        return SIMCRAWL_ENOMEM;
    if (f->jfd < 0)
        return 0;
    struct fj_rec rec = add_record(f, p);
    enum dedup_code r = fj_reserve(&rec, &f->rec, &f->rec_cap);
    return r == DEDUP_ENOMEM ? SIMCRAWL_ENOMEM : r != DEDUP_OK ? SIMCRAWL_ETOOLARGE : 0;
}

static int journal_append(struct simcrawl_filter *f, const struct fj_rec *rec);

/* A page checked new is in the index: its payload hash, and its journal record appended
 * (and synced as the fsync option says) before check() returns. */
static int hook_added(void *userdata, uint32_t doc, const struct filter_decide_page *p)
{
    struct simcrawl_filter *f = userdata;
    f->payload[doc] = page_payload(p);
    atomic_fetch_add(&f->count, 1);
    if (f->jfd < 0)
        return 0;
    struct fj_rec rec = add_record(f, p);
    int rc = journal_append(f, &rec);
    if (rc == 0 && f->journal_bytes > f->journal_next && compact(f) != 0)
        f->journal_next = f->journal_bytes + f->o.journal_max; /* retried later */
    return rc;
}

/* A near-duplicate's template blocks about to be counted (FILTER_DECIDE_LEARN_NEAR): its
 * learn record first, so that a replay counts them again in the same order. */
static int hook_learning(void *userdata, const struct filter_decide_page *p)
{
    struct simcrawl_filter *f = userdata;
    if (f->jfd < 0)
        return 0;
    struct fj_rec rec = {0};
    rec.kind = FJ_LEARN;
    rec.doc_hash = p->doc_hash;
    rec.id = p->id;
    rec.id_len = p->id_len;
    rec.host = p->host;
    rec.host_len = p->host_len;
    rec.blocks = p->blocks;
    rec.n_blocks = p->n_blocks;
    return journal_append(f, &rec);
}

/* A page about to be deleted: its journal record first (no compaction here: the page is
 * deleted after the hook returns, the next add or close compacts). */
static int hook_deleting(void *userdata, uint32_t doc, const char *id, size_t id_len)
{
    struct simcrawl_filter *f = userdata;
    (void)doc;
    if (f->jfd < 0)
        return 0;
    struct fj_rec rec = {0};
    rec.kind = FJ_DELETE;
    rec.id = id;
    rec.id_len = id_len;
    return journal_append(f, &rec);
}

/* Appends one record (and syncs it as the fsync option says) under the write lock; a
 * failed write stops the filter taking pages (ECLOSED from then on): what is in memory
 * could not be made durable. Encoding fails only before anything changed (an add's room
 * was made by hook_reserve; a delete's hook runs before the delete): ENOMEM then, and the
 * filter stays usable. 0 or a negative error. */
static int journal_append(struct simcrawl_filter *f, const struct fj_rec *rec)
{
    size_t rlen;
    if (fj_encode(rec, &f->rec, &f->rec_cap, &rlen) != DEDUP_OK)
        return SIMCRAWL_ENOMEM;
    int e = write_all(f->jfd, f->rec, rlen);
    if (e) {
        f->broken = 1;
        logf_(f, "cannot write %s: %s; the filter takes no more pages", f->journal_path,
              strerror(e));
        return SIMCRAWL_EIO;
    }
    f->journal_bytes += rlen;
    if (f->o.fsync == FSYNC_ALWAYS && fdatasync(f->jfd) != 0) {
        f->broken = 1;
        logf_(f, "cannot fsync %s: %s; the filter takes no more pages", f->journal_path,
              strerror(errno));
        return SIMCRAWL_EIO;
    }
    if (f->has_syncer) {
        /* only a clean-to-dirty change wakes the syncer: once dirty, it syncs at the end
         * of its second anyway (a signal per add cost 22% of the service's CPU per add:
         * docs/BENCHMARKS.md, "HTTP service") */
        pthread_mutex_lock(&f->sync_mu);
        if (!f->dirty) {
            f->dirty = 1;
            pthread_cond_signal(&f->sync_cv);
        }
        pthread_mutex_unlock(&f->sync_mu);
    }
    return 0;
}

/* The method of the index file at path by its magic; DEDUP_METHOD_UNKNOWN when there is
 * none or it is too short to say (its loader then says what is wrong). */
static enum dedup_method file_method(const char *path)
{
    uint8_t head[8];
    FILE *fp = fopen(path, "rb");
    if (!fp)
        return DEDUP_METHOD_UNKNOWN;
    size_t n = fread(head, 1, sizeof head, fp);
    fclose(fp);
    return dedup_file_method(head, n);
}

/*
 * The MinHash side of open: path's LSH index loaded (its parameters are the filter's: a
 * threshold asked for that differs from the file's is SIMCRAWL_EMISMATCH), or a new one
 * for the threshold asked for (0: DEDUP_MINHASH_THRESHOLD_DEFAULT) with the default
 * shingles, values and seed of docs/MINHASH.md; and the hasher check() uses. 0 or an error.
 */
static int lsh_open(struct simcrawl_filter *f, const char *path)
{
    f->minhash = 1;
    f->k = 0;
    if (path) {
        struct dedup_file_error ferr = {0};
        enum dedup_code dc = dedup_lsh_load(path, &f->lsh, &ferr);
        if (dc == DEDUP_EIO && ferr.os_error == ENOENT)
            f->lsh = NULL; /* made on close */
        else if (dc != DEDUP_OK) {
            logf_(f, "cannot load %s: %s%s%s", path,
                  ferr.what && *ferr.what ? ferr.what : dedup_strerror(dc),
                  ferr.os_error ? ": " : "", ferr.os_error ? strerror(ferr.os_error) : "");
            return from_dedup(dc);
        }
    }
    if (f->lsh) {
        const struct dedup_lsh_params *lp = dedup_lsh_get_params(f->lsh);
        if (f->o.threshold != 0 && fabs(f->o.threshold - lp->threshold) > 1e-9) {
            logf_(f, "%s was made with threshold %g, not %g", path, lp->threshold, f->o.threshold);
            return SIMCRAWL_EMISMATCH;
        }
    } else {
        struct dedup_lsh_params lp;
        double t = f->o.threshold != 0 ? f->o.threshold : DEDUP_MINHASH_THRESHOLD_DEFAULT;
        enum dedup_code dc = dedup_lsh_params_default(t, &lp);
        if (dc == DEDUP_OK)
            dc = dedup_lsh_new(&lp, &f->lsh);
        if (dc != DEDUP_OK)
            return from_dedup(dc);
    }
    const struct dedup_lsh_params *lp = dedup_lsh_get_params(f->lsh);
    f->threshold = lp->threshold;
    if (dedup_minhash_new(lp->k, lp->h, lp->seed, &f->mh) != DEDUP_OK)
        return SIMCRAWL_ENOMEM;
    return 0;
}

int simcrawl_filter_open(struct simcrawl_filter **out, const char *index_path, unsigned k)
{
    struct simcrawl_options o = defaults;
    if (k > DEDUP_K_MAX) {
        if (out)
            *out = NULL;
        return SIMCRAWL_EINVAL;
    }
    o.k = k;
    return simcrawl_filter_open_opts(out, index_path, &o);
}

/* The index of a filter on a file: its paths, the writers' lock, the method check, then
 * the minhash index (lsh_open) or the simhash index file, which may not exist yet (made on
 * close). *k is the options' k (0: any); for a simhash index it becomes the index's k, or
 * with no index file the journal's, or DEDUP_K_DEFAULT. Returns 0 or a SIMCRAWL_* code. */
static int open_file_index(struct simcrawl_filter *f, const char *index_path, unsigned *k)
{
    const struct simcrawl_options *o = &f->o;
    f->path = strdup(index_path);
    f->journal_path = concat(index_path, ".journal");
    f->payloads_path = concat(index_path, ".payloads");
    if (!f->path || !f->journal_path || !f->payloads_path)
        return SIMCRAWL_ENOMEM;
    struct dedup_file_error ferr = {0};
    unsigned long wait_ms = (unsigned long)(o->lock_wait * 1000.0);
    enum dedup_code dc = dedup_lock_acquire(index_path, wait_ms, NULL, NULL, &f->lock, NULL, &ferr);
    if (dc != DEDUP_OK)
        return from_dedup(dc);
    enum dedup_method fm = file_method(index_path);
    if (fm != DEDUP_METHOD_UNKNOWN && (fm == DEDUP_METHOD_MINHASH) != o->minhash) {
        logf_(f, "%s is a %s index; it cannot be opened with the %s method", index_path,
              method_name(fm == DEDUP_METHOD_MINHASH), method_name(o->minhash));
        return SIMCRAWL_EMETHOD;
    }
    if (o->minhash)
        return lsh_open(f, index_path);
    /* a filter answers many queries: the index in memory of its own (huge pages) */
    dc = dedup_index_load(index_path, DEDUP_INDEX_LOAD_OWN, &f->idx, &ferr);
    if (dc == DEDUP_EIO && ferr.os_error == ENOENT) {
        f->idx = NULL; /* made on close */
    } else if (dc != DEDUP_OK) {
        logf_(f, "cannot load %s: %s%s%s", index_path,
              ferr.what && *ferr.what ? ferr.what : dedup_strerror(dc), ferr.os_error ? ": " : "",
              ferr.os_error ? strerror(ferr.os_error) : "");
        return from_dedup(dc);
    } else if (*k != 0 && dedup_index_k(f->idx) != *k) {
        return SIMCRAWL_EMISMATCH;
    } else {
        *k = dedup_index_k(f->idx);
    }
    if (!f->idx && *k == 0) { /* no index yet: the journal's k, or the default */
        uint8_t h[FJ_HEADER_BYTES];
        FILE *jf = fopen(f->journal_path, "rb");
        unsigned jk = 0;
        if (jf && fread(h, 1, sizeof h, jf) == sizeof h &&
            fj_header_check(h, sizeof h, &jk, NULL) == DEDUP_OK)
            *k = jk;
        if (jf)
            fclose(jf);
        if (*k == 0)
            *k = DEDUP_K_DEFAULT;
    }
    return 0;
}

/* What a filter holds beside its index: the decision table (made now, and always: a
 * journal written with templates on replays its blocks whatever the option is now), the
 * payloads, the id maps, the journal and its syncer thread. Returns 0 or a SIMCRAWL_*
 * code. */
static int open_state(struct simcrawl_filter *f)
{
    int rc = 0;
    struct filter_decide_opts dopts = {.index = f->idx,
                                       .lsh = f->lsh,
                                       .threshold = f->threshold,
                                       .k = f->k,
                                       .templates = 1,
                                       .by_id = 1,
                                       .hooks = {.start = hook_start,
                                                 .reserve = hook_reserve,
                                                 .added = hook_added,
                                                 .deleting = hook_deleting,
                                                 .learning = hook_learning,
                                                 .userdata = f}};
    if (filter_decide_new(&dopts, &f->decide) != DEDUP_OK)
        return SIMCRAWL_ENOMEM;
    if (f->path) {
        rc = payloads_load(f);
        if (rc == 0) {
            char tmp[4096];
            if ((size_t)snprintf(tmp, sizeof tmp, "%s.tmp", f->payloads_path) < sizeof tmp)
                unlink(tmp); /* left by a killed compaction */
        }
    }
    if (rc == 0)
        rc = maps_build(f);
    if (rc == 0 && f->path)
        rc = journal_open(f);
    if (rc != 0)
        return rc;
    if (f->jfd >= 0 && f->o.fsync == FSYNC_INTERVAL) {
        if (pthread_create(&f->syncer, NULL, syncer_run, f) != 0)
            return SIMCRAWL_ENOMEM;
        f->has_syncer = 1;
    }
    return 0;
}

/* A quarter of the machine's physical memory: "auto"'s default cap on the probe's lines
 * (0 when the system does not say). */
static uint64_t quarter_of_memory(void)
{
    long pages = sysconf(_SC_PHYS_PAGES), size = sysconf(_SC_PAGESIZE);
    return pages > 0 && size > 0 ? (uint64_t)pages * (uint64_t)size / 4 : 0;
}

/* The options' probe's lines on f's index (simhash, in memory): on, or auto under its cap.
 * A rebuild of the index (deleted pages dropped) keeps them (copy_live in decide.c). */
static void probe_lines_apply(struct simcrawl_filter *f)
{
    const struct simcrawl_options *o = &f->o;
    if (o->probe_lines == LINES_OFF)
        return;
    uint64_t cap = 0;
    if (o->probe_lines == LINES_AUTO) {
        cap = o->probe_lines_bytes ? o->probe_lines_bytes : quarter_of_memory();
        if (!cap)
            return; /* no cap known: auto stays off */
    }
    dedup_index_set_probe_lines_limits(f->idx, o->probe_lines_min, cap);
    dedup_index_set_probe_lines(f->idx, 1);
}

int simcrawl_filter_probe_lines(struct simcrawl_filter *f, const char **state, uint64_t *bytes,
                                uint64_t *need, uint64_t *max_bytes)
{
    if (!f)
        return SIMCRAWL_EINVAL;
    struct dedup_lines_info li;
    memset(&li, 0, sizeof li);
    if (!f->redis && !f->minhash && f->decide)
        filter_decide_probe_lines(f->decide, &li);
    if (state)
        *state = dedup_lines_state_name(li.state);
    if (bytes)
        *bytes = li.bytes;
    if (need)
        *need = li.need_bytes;
    if (max_bytes)
        *max_bytes = li.max_bytes;
    return li.built ? 1 : 0;
}

/* Opens a filter: on Redis (redis_open), or on an index file (open_file_index) or in
 * memory, then its state (open_state). */
int simcrawl_filter_open_opts(struct simcrawl_filter **out, const char *index_path,
                              const struct simcrawl_options *o)
{
    int rc = 0;
    if (!out)
        return SIMCRAWL_EINVAL;
    *out = NULL;
    if (!o)
        o = &defaults;
    if (o->k > DEDUP_K_MAX || (index_path && !*index_path))
        return SIMCRAWL_EINVAL;
    struct simcrawl_filter *f = calloc(1, sizeof *f);
    if (!f)
        return SIMCRAWL_ENOMEM;
    f->o = *o;
    f->jfd = -1;
    f->journal_next = o->journal_max;
    if (pthread_mutex_init(&f->sync_mu, NULL) != 0) {
        free(f);
        return SIMCRAWL_ENOMEM;
    }
    if (pthread_cond_init(&f->sync_cv, NULL) != 0) {
        pthread_mutex_destroy(&f->sync_mu);
        free(f);
        return SIMCRAWL_ENOMEM;
    }
    unsigned k = o->k;
    if (o->probe_lines == LINES_ON && (o->minhash || fr_is_url(index_path))) {
        logf_(f, "the probe's lines are for a simhash index in this process's memory, not %s",
              o->minhash ? "for the minhash method" : "for an index on redis");
        rc = SIMCRAWL_EINVAL;
        goto fail;
    }
    if (fr_is_url(index_path)) {
        rc = redis_open(f, index_path);
        if (rc != 0)
            goto fail;
        *out = f;
        return 0;
    }
    if (index_path)
        rc = open_file_index(f, index_path, &k);
    else if (k == 0)
        k = DEDUP_K_DEFAULT;
    if (rc != 0)
        goto fail;
    if (o->minhash) {
        if (!index_path && (rc = lsh_open(f, NULL)) != 0)
            goto fail;
    } else {
        f->k = k;
        if (!f->idx) {
            struct dedup_design d;
            enum dedup_code dc = dedup_design_choose(k, DESIGN_DOCS, 0, &d);
            if (dc == DEDUP_OK)
                dc = dedup_index_new(&d, &f->idx);
            if (dc != DEDUP_OK) {
                rc = from_dedup(dc);
                goto fail;
            }
        }
    }
    if (f->idx)
        probe_lines_apply(f);
    rc = open_state(f);
    if (rc != 0)
        goto fail;
    *out = f;
    return 0;
fail:
    filter_free(f);
    return rc;
}

int simcrawl_filter_close(struct simcrawl_filter *f)
{
    if (!f)
        return 0;
    int rc = 0;
    syncer_stop(f);
    if (f->redis) {
        filter_free(f);
        return 0;
    }
    if (f->path && !f->broken)
        rc = compact(f);
    else if (f->broken)
        rc = SIMCRAWL_ECLOSED;
    filter_free(f);
    return rc;
}

uint64_t simcrawl_filter_count(const struct simcrawl_filter *f)
{
    if (f && f->redis)
        return redis_count((struct simcrawl_filter *)f);
    return f ? atomic_load(&((struct simcrawl_filter *)f)->count) : 0;
}

/* The decision's answer as the filter's: fills m, returns the decision (>= 0) or an error.
 * NEAR keeps the page's own fingerprint in m; the others name the original's. */
static int answer(const struct filter_decide_result *dr, struct simcrawl_match *m)
{
    switch (dr->verdict) {
    case FILTER_VERDICT_KNOWN_ID:
        match_reset(m, dr->fp);
        return SIMCRAWL_NEW;
    case FILTER_VERDICT_EXACT:
        match_reset(m, dr->fp);
        if (dr->has_doc && match_set_dup(m, dr->dup_id, dr->dup_id_len, 0) != 0)
            return SIMCRAWL_ENOMEM;
        if (m)
            m->jaccard = 1.0;
        return SIMCRAWL_EXACT_DUPLICATE;
    case FILTER_VERDICT_NEAR:
        if (match_set_dup(m, dr->dup_id, dr->dup_id_len, dr->distance) != 0)
            return SIMCRAWL_ENOMEM;
        if (m)
            m->jaccard = dr->jaccard;
        return SIMCRAWL_NEAR_DUPLICATE;
    case FILTER_VERDICT_NEW:
        if (m)
            m->added = dr->added;
        return dr->add_code == DEDUP_OK ? SIMCRAWL_NEW : from_dedup(dr->add_code);
    default:
        return SIMCRAWL_EINVAL; /* the filter sets no flag that gives another */
    }
}

/*
 * HOW IT WORKS (check): 1. outside any lock: the payload hash; 2. filter_decide_lookup
 * (read lock): the id or the payload already known (a page checked again costs no
 * extraction); 3. no lock: the pipeline, whose template marks take the read lock for the
 * table lookup only (filter_decide_mark); 4. filter_decide_page (write lock): known again
 * (another thread may have added it since step 2), then the nearest indexed page within k;
 * none: add it, and hook_added appends its journal record before the lock is released. Two
 * threads with near-duplicate pages serialise at step 4: the second finds the first.
 */
/* The arguments every check validates: 0 with *id_len, SIMCRAWL_EINVAL or
 * SIMCRAWL_ECLOSED. */
static int check_args(const struct simcrawl_filter *f, const char *id, unsigned flags,
                      size_t *id_len)
{
    if (!f || !id || !*id || (flags & ~SIMCRAWL_CHECK_NO_ADD))
        return SIMCRAWL_EINVAL;
    *id_len = strlen(id);
    if (*id_len > DEDUP_INDEX_MAX_ID_BYTES)
        return SIMCRAWL_EINVAL;
    return f->broken ? SIMCRAWL_ECLOSED : 0;
}

/* The error of a decision that returned -1: a hook's, or the lookup's. */
static int decide_error(const struct filter_decide_result *dr)
{
    return dr->hook_code ? dr->hook_code : from_dedup(dr->code);
}

int simcrawl_filter_check(struct simcrawl_filter *f, const char *id, const void *page, size_t len,
                          const char *content_type, struct simcrawl_match *m)
{
    return simcrawl_filter_check_flags(f, id, page, len, content_type, 0, m);
}

int simcrawl_filter_check_flags(struct simcrawl_filter *f, const char *id, const void *page,
                                size_t len, const char *content_type, unsigned flags,
                                struct simcrawl_match *m)
{
    size_t id_len;
    int bad = (!page && len) ? SIMCRAWL_EINVAL : check_args(f, id, flags, &id_len);
    if (bad)
        return bad;
    match_reset(m, 0);
    if (m)
        m->minhash = f->minhash;
    if (len > f->o.max_bytes)
        return SIMCRAWL_ETOOLARGE;
    if (!page)
        page = "";
    if (f->redis)
        return redis_check_page(f, id, id_len, page, len, content_type, flags, m);
    XXH128_hash_t pay = XXH3_128bits(page, len);
    if (pay.low64 == 0 && pay.high64 == 0)
        pay.low64 = 1; /* {0, 0} means unknown */
    unsigned char key[16];
    payload_bytes(pay, key);
    int dec;
    struct filter_decide_page p = {0};
    struct filter_decide_result dr = {0};
    struct filter_fp_result r = {0};
    p.id = id;
    p.id_len = id_len;
    int html = html_type(content_type);
    if (html) { /* another content type: no lookup by payload */
        p.key = key;
        p.key_len = sizeof key;
    }
    int known;
    enum dedup_code lc = filter_decide_lookup(f->decide, &p, &dr, &known);
    if (lc != DEDUP_OK || known) {
        dec = lc != DEDUP_OK ? SIMCRAWL_ENOMEM : answer(&dr, m);
        goto out;
    }
    if (!html) {
        dec = SIMCRAWL_NOT_HTML;
        goto out;
    }

    char host[DEDUP_TEMPLATE_MAX_KEY + 1] = "";
    struct filter_fp_opts o = {0};
    o.max_bytes = f->o.max_bytes;
    if (f->o.templates) {
        filter_url_host_key(id, host);
        o.host = host;
        o.mark = filter_decide_mark;
        o.mark_userdata = f->decide;
        o.keep_blocks = 1;
    }
    o.keep_doc = m && m->want;  /* the main text and links asked for */
    o.keep_tokens = f->minhash; /* the signature's input, after the template blocks */
    /* links resolve against the page's URL (the id); the fingerprint never depends on it */
    const char *base = m && (m->want & SIMCRAWL_MATCH_LINKS) ? id : NULL;
    if (filter_fingerprint_page(page, len, content_type, base, &o, &r) != 0) {
        dec = from_pipeline(&r);
        if (dec == SIMCRAWL_TOO_SHORT && match_set_doc(m, r.doc) != 0)
            dec = SIMCRAWL_ENOMEM;
        goto out;
    }
    match_reset(m, r.fingerprint);
    if (match_set_doc(m, r.doc) != 0) {
        dec = SIMCRAWL_ENOMEM;
        goto out;
    }
    uint32_t sig[DEDUP_MINHASH_H_MAX];
    if (f->minhash) {
        enum dedup_code sc = dedup_minhash_signature(f->mh, r.tokens, r.tokens_len, sig, NULL);
        if (sc != DEDUP_OK) {
            dec = from_dedup(sc);
            goto out;
        }
        if (match_set_sig(m, sig, dedup_minhash_h(f->mh)) != 0) {
            dec = SIMCRAWL_ENOMEM;
            goto out;
        }
        p.sig = sig;
    }
    p.has_fp = 1;
    p.fp = r.fingerprint;
    p.host = host;
    p.host_len = strlen(host);
    p.doc_hash = r.doc_hash;
    p.blocks = r.blocks;
    p.n_blocks = r.n_blocks;
    /* a near-duplicate on a young host counts its blocks too (docs/FINGERPRINT.md, "Where
     * T comes from"); its learn record is journaled first (hook_learning) */
    p.flags = FILTER_DECIDE_LEARN_NEAR;
    if (flags & SIMCRAWL_CHECK_NO_ADD)
        p.flags |= FILTER_DECIDE_NO_ADD;
    if (filter_decide_page(f->decide, &p, &dr) != 0)
        dec = decide_error(&dr);
    else
        dec = answer(&dr, m);
    blocks_failed(f, dr.template_code, id, id_len);
out:
    filter_decide_result_release(&dr);
    filter_fp_result_release(&r);
    return dec;
}

int simcrawl_filter_check_fingerprint(struct simcrawl_filter *f, const char *id,
                                      uint64_t fingerprint, unsigned flags,
                                      struct simcrawl_match *m)
{
    size_t id_len;
    int bad = check_args(f, id, flags, &id_len);
    if (bad)
        return bad;
    if (f->minhash)
        return SIMCRAWL_EMETHOD;
    match_reset(m, fingerprint);
    if (m)
        m->minhash = 0;
    if (f->redis)
        return redis_check_fp(f, id, id_len, fingerprint, flags, m);
    int dec;
    struct filter_decide_page p = {0};
    struct filter_decide_result dr = {0};
    p.id = id;
    p.id_len = id_len;
    p.has_fp = 1;
    p.fp = fingerprint;
    p.host = "";
    if (flags & SIMCRAWL_CHECK_NO_ADD)
        p.flags |= FILTER_DECIDE_NO_ADD;
    /* no payload, no template blocks: the id first (read lock), then the decision */
    int known;
    enum dedup_code lc = filter_decide_lookup(f->decide, &p, &dr, &known);
    if (lc != DEDUP_OK || known)
        dec = lc != DEDUP_OK ? SIMCRAWL_ENOMEM : answer(&dr, m);
    else if (filter_decide_page(f->decide, &p, &dr) != 0)
        dec = decide_error(&dr);
    else
        dec = answer(&dr, m);
    filter_decide_result_release(&dr);
    return dec;
}

int simcrawl_filter_delete(struct simcrawl_filter *f, const char *id)
{
    if (!f || !id || !*id)
        return SIMCRAWL_EINVAL;
    size_t id_len = strlen(id);
    if (id_len > DEDUP_INDEX_MAX_ID_BYTES)
        return 0; /* no page can have it */
    if (f->broken)
        return SIMCRAWL_ECLOSED;
    if (f->redis)
        return redis_delete(f, id, id_len);
    struct filter_decide_result dr = {0};
    int deleted;
    int rc = filter_decide_delete(f->decide, id, id_len, 1, &dr, &deleted);
    if (rc != 0)
        rc = decide_error(&dr);
    else if (deleted) {
        rc = 1;
        atomic_fetch_sub(&f->count, 1);
    }
    filter_decide_result_release(&dr);
    return rc;
}

/* The neighbours as the decision hands them over under its lock: ids copied back to
 * back, so that the caller's callback runs outside the lock. */
struct hood {
    char *ids;
    size_t ids_len, ids_cap;
    struct hood_one {
        size_t id_off;
        uint64_t fp;
        unsigned distance;
    } * v;
    size_t n, cap;
    int nomem;
};

static void hood_add(void *userdata, const char *id, size_t id_len, uint64_t fp, unsigned distance)
{
    struct hood *h = userdata;
    if (h->nomem)
        return;
    if (h->n == h->cap) {
        size_t nc = h->cap ? h->cap * 2 : 16;
        struct hood_one *nv = realloc(h->v, nc * sizeof *nv);
        if (!nv) {
            h->nomem = 1;
            return;
        }
        h->v = nv;
        h->cap = nc;
    }
    void *buf = h->ids;
    if (grow_to(&buf, &h->ids_cap, h->ids_len + id_len + 1) != 0) {
        h->nomem = 1;
        return;
    }
    h->ids = buf;
    memcpy(h->ids + h->ids_len, id, id_len);
    h->ids[h->ids_len + id_len] = '\0';
    h->v[h->n++] = (struct hood_one){h->ids_len, fp, distance};
    h->ids_len += id_len + 1;
}

int simcrawl_filter_neighbors(struct simcrawl_filter *f, uint64_t fingerprint, unsigned k,
                              size_t max,
                              int (*cb)(void *userdata, const char *id, uint64_t fingerprint,
                                        unsigned distance),
                              void *userdata)
{
    if (f && f->minhash)
        return SIMCRAWL_EMETHOD;
    if (!f || !cb || k > f->k)
        return SIMCRAWL_EINVAL;
    struct hood h = {0};
    int rc;
    if (f->redis) {
        rc = redis_neighbors(f, fingerprint, k, max, &h);
    } else {
        enum dedup_code c = filter_decide_neighbors(f->decide, fingerprint, k, max, hood_add, &h);
        rc = c != DEDUP_OK ? from_dedup(c) : h.nomem ? SIMCRAWL_ENOMEM : 0;
    }
    size_t given = 0;
    for (size_t i = 0; rc == 0 && i < h.n && given < (size_t)INT32_MAX; i++) {
        given++;
        if (cb(userdata, h.ids + h.v[i].id_off, h.v[i].fp, h.v[i].distance) != 0)
            break;
    }
    free(h.ids);
    free(h.v);
    return rc ? rc : (int)given;
}

/* ---- the index on Redis (filter/redisidx.h, through filter/filter_redis.c's pool) ----
 *
 * index_path redis://HOST:PORT[/DB][?prefix=NAME...] or unix:///PATH: no file, no journal,
 * no lock; every decision (id, payload key, nearest within k, add) is the Redis index's,
 * shared with every process on it and atomic across them. The minhash method is not
 * supported there (SIMCRAWL_EMETHOD). Site templates are not used (each process would
 * learn its own, and the fingerprint must not depend on which process saw a page): the
 * whole main text is fingerprinted, as simcrawl_fingerprint() does. Errors are logged with
 * the URL and what was wrong; a lost connection is SIMCRAWL_EIO and the next call
 * connects again.
 */
static int redis_open(struct simcrawl_filter *f, const char *url)
{
    char err[512];
    if (f->o.minhash) {
        logf_(f, "%s: the minhash method is not supported on redis (only simhash)", url);
        return SIMCRAWL_EMETHOD;
    }
    int rc = fr_open(&f->redis, url, f->o.k, err, sizeof err);
    if (rc != 0) {
        logf_(f, "%s", err);
        return rc;
    }
    f->k = fr_k(f->redis);
    f->o.templates = 0;
    return 0;
}

/* A connection of the pool, or NULL with *rc (logged). */
static struct redisidx *redis_take(struct simcrawl_filter *f, int *rc)
{
    char err[512];
    struct redisidx *ix = fr_take(f->redis, rc, err, sizeof err);
    if (!ix)
        logf_(f, "%s", err);
    return ix;
}

/* Gives ix back; a failed call's code c is logged with its message and returned. */
static int redis_done(struct simcrawl_filter *f, struct redisidx *ix, enum redisidx_code c)
{
    if (c != REDISIDX_OK)
        logf_(f, "%s", redisidx_errmsg(ix));
    fr_give(f->redis, ix);
    return fr_code(c);
}

static uint64_t redis_count(struct simcrawl_filter *f)
{
    int rc;
    struct redisidx_stats st;
    struct redisidx *ix = redis_take(f, &rc);
    if (!ix)
        return atomic_load(&f->count);
    if (redis_done(f, ix, redisidx_stats(ix, &st)) == 0)
        atomic_store(&f->count, st.documents);
    return atomic_load(&f->count); /* the last count known when Redis cannot say */
}

/* The Redis index's answer as the filter's (as answer() does for the in-process one). */
static int redis_answer(const struct redisidx_result *r, struct simcrawl_match *m)
{
    switch (r->verdict) {
    case REDISIDX_KNOWN_ID:
        match_reset(m, r->fp);
        return SIMCRAWL_NEW;
    case REDISIDX_EXACT:
        match_reset(m, r->fp);
        if (match_set_dup(m, r->dup_id, r->dup_id_len, 0) != 0)
            return SIMCRAWL_ENOMEM;
        if (m)
            m->jaccard = 1.0;
        return SIMCRAWL_EXACT_DUPLICATE;
    case REDISIDX_NEAR:
        if (match_set_dup(m, r->dup_id, r->dup_id_len, r->distance) != 0)
            return SIMCRAWL_ENOMEM;
        if (m)
            m->jaccard = 1.0 - r->distance / 64.0;
        return SIMCRAWL_NEAR_DUPLICATE;
    case REDISIDX_NEW:
        if (m)
            m->added = r->added;
        return SIMCRAWL_NEW;
    default:
        return SIMCRAWL_EINVAL;
    }
}

/* check() on Redis: the id or payload known (no parsing), else the pipeline (no
 * templates), then the Redis decision. */
static int redis_check_page(struct simcrawl_filter *f, const char *id, size_t id_len,
                            const void *page, size_t len, const char *content_type, unsigned flags,
                            struct simcrawl_match *m)
{
    int dec;
    XXH128_hash_t pay = XXH3_128bits(page, len);
    unsigned char key[16];
    payload_bytes(pay, key);
    int html = html_type(content_type);
    struct redisidx_page p = {.id = id, .id_len = id_len};
    if (html) { /* another content type: no lookup by payload */
        p.key = key;
        p.key_len = sizeof key;
    }
    if (flags & SIMCRAWL_CHECK_NO_ADD)
        p.flags |= REDISIDX_NO_ADD;
    struct redisidx_result r = {0};
    struct filter_fp_result fr = {0};
    struct redisidx *ix = redis_take(f, &dec);
    if (!ix)
        return dec;
    enum redisidx_code c = redisidx_lookup(ix, &p, &r);
    if (c != REDISIDX_OK || r.verdict != REDISIDX_UNKNOWN) {
        dec = redis_done(f, ix, c);
        if (dec == 0)
            dec = redis_answer(&r, m);
        goto out;
    }
    if (!html) {
        dec = redis_done(f, ix, REDISIDX_OK);
        if (dec == 0)
            dec = SIMCRAWL_NOT_HTML;
        goto out;
    }
    struct filter_fp_opts o = {0};
    o.max_bytes = f->o.max_bytes;
    o.keep_doc = m && m->want;
    const char *base = m && (m->want & SIMCRAWL_MATCH_LINKS) ? id : NULL;
    if (filter_fingerprint_page(page, len, content_type, base, &o, &fr) != 0) {
        dec = redis_done(f, ix, REDISIDX_OK);
        if (dec == 0)
            dec = from_pipeline(&fr);
        if (dec == SIMCRAWL_TOO_SHORT && match_set_doc(m, fr.doc) != 0)
            dec = SIMCRAWL_ENOMEM;
        goto out;
    }
    match_reset(m, fr.fingerprint);
    if (match_set_doc(m, fr.doc) != 0) {
        dec = redis_done(f, ix, REDISIDX_OK);
        dec = SIMCRAWL_ENOMEM;
        goto out;
    }
    p.fp = fr.fingerprint;
    dec = redis_done(f, ix, redisidx_check(ix, &p, &r));
    if (dec == 0)
        dec = redis_answer(&r, m);
out:
    redisidx_result_release(&r);
    filter_fp_result_release(&fr);
    return dec;
}

static int redis_check_fp(struct simcrawl_filter *f, const char *id, size_t id_len, uint64_t fp,
                          unsigned flags, struct simcrawl_match *m)
{
    int dec;
    struct redisidx_page p = {.id = id, .id_len = id_len, .fp = fp};
    if (flags & SIMCRAWL_CHECK_NO_ADD)
        p.flags |= REDISIDX_NO_ADD;
    struct redisidx_result r = {0};
    struct redisidx *ix = redis_take(f, &dec);
    if (!ix)
        return dec;
    dec = redis_done(f, ix, redisidx_check(ix, &p, &r));
    if (dec == 0)
        dec = redis_answer(&r, m);
    redisidx_result_release(&r);
    return dec;
}

static int redis_delete(struct simcrawl_filter *f, const char *id, size_t id_len)
{
    int rc, deleted = 0;
    struct redisidx *ix = redis_take(f, &rc);
    if (!ix)
        return rc;
    rc = redis_done(f, ix, redisidx_delete(ix, id, id_len, &deleted));
    return rc ? rc : deleted;
}

static int redis_hood(void *userdata, const char *id, uint64_t fp, unsigned distance)
{
    struct hood *h = userdata;
    hood_add(h, id, strlen(id), fp, distance);
    return h->nomem;
}

static int redis_neighbors(struct simcrawl_filter *f, uint64_t fp, unsigned k, size_t max,
                           struct hood *h)
{
    int rc;
    struct redisidx *ix = redis_take(f, &rc);
    if (!ix)
        return rc;
    rc = redis_done(f, ix, redisidx_neighbors(ix, fp, k, max, redis_hood, h, NULL));
    return rc ? rc : h->nomem ? SIMCRAWL_ENOMEM : 0;
}

unsigned simcrawl_filter_k(const struct simcrawl_filter *f)
{
    return f ? f->k : 0;
}

uint64_t simcrawl_filter_journal_bytes(const struct simcrawl_filter *f)
{
    return f && f->jfd >= 0 ? atomic_load(&((struct simcrawl_filter *)f)->journal_bytes) : 0;
}

const char *simcrawl_filter_method(const struct simcrawl_filter *f)
{
    return method_name(f && f->minhash);
}

double simcrawl_filter_threshold(const struct simcrawl_filter *f)
{
    return f && f->minhash ? f->threshold : 0.0;
}

size_t simcrawl_filter_signature_size(const struct simcrawl_filter *f)
{
    return f && f->minhash ? dedup_minhash_h(f->mh) : 0;
}

/* The MinHash neighbours as the decision hands them over under its lock (hood's ids; the
 * similarity in the distance's place would lose it: kept beside). */
struct mhood {
    struct hood h;
    double *sim;
    size_t sim_cap;
};

static void mhood_add(void *userdata, const char *id, size_t id_len, double jaccard)
{
    struct mhood *mh = userdata;
    size_t at = mh->h.n;
    hood_add(&mh->h, id, id_len, 0, 0);
    if (mh->h.nomem || mh->h.n == at)
        return;
    if (mh->h.n > mh->sim_cap) {
        void *buf = mh->sim;
        size_t bytes = mh->sim_cap * sizeof *mh->sim;
        if (grow_to(&buf, &bytes, mh->h.cap * sizeof *mh->sim) != 0) {
            mh->h.nomem = 1;
            return;
        }
        mh->sim = buf;
        mh->sim_cap = bytes / sizeof *mh->sim;
    }
    mh->sim[at] = jaccard;
}

int simcrawl_filter_neighbors_signature(
    struct simcrawl_filter *f, const uint32_t *sig, size_t h, double threshold, size_t max,
    int (*cb)(void *userdata, const char *id, double similarity), void *userdata)
{
    if (f && !f->minhash)
        return SIMCRAWL_EMETHOD;
    if (!f || !sig || !cb || h != dedup_minhash_h(f->mh) || !(threshold >= 0 && threshold <= 1))
        return SIMCRAWL_EINVAL;
    struct mhood mh = {0};
    enum dedup_code c = filter_decide_neighbors_sig(f->decide, sig, threshold, max, mhood_add, &mh);
    int rc = c != DEDUP_OK ? from_dedup(c) : mh.h.nomem ? SIMCRAWL_ENOMEM : 0;
    size_t given = 0;
    for (size_t i = 0; rc == 0 && i < mh.h.n && given < (size_t)INT32_MAX; i++) {
        given++;
        if (cb(userdata, mh.h.ids + mh.h.v[i].id_off, mh.sim[i]) != 0)
            break;
    }
    free(mh.h.ids);
    free(mh.h.v);
    free(mh.sim);
    return rc ? rc : (int)given;
}

int simcrawl_filter_signature(struct simcrawl_filter *f, const char *url, const void *page,
                              size_t len, const char *content_type, uint32_t *sig, size_t h)
{
    if (!f || (!page && len) || !sig)
        return SIMCRAWL_EINVAL;
    if (!f->minhash)
        return SIMCRAWL_EMETHOD;
    if (h != dedup_minhash_h(f->mh))
        return SIMCRAWL_EINVAL;
    if (len > f->o.max_bytes)
        return SIMCRAWL_ETOOLARGE;
    if (!html_type(content_type))
        return SIMCRAWL_NOT_HTML;
    char host[DEDUP_TEMPLATE_MAX_KEY + 1] = "";
    struct filter_fp_opts o = {0};
    o.max_bytes = f->o.max_bytes;
    o.keep_tokens = 1;
    if (f->o.templates && url) {
        filter_url_host_key(url, host);
        o.host = host;
        o.mark = filter_decide_mark;
        o.mark_userdata = f->decide;
    }
    struct filter_fp_result r;
    int rc = filter_fingerprint_page(page ? page : "", len, content_type, NULL, &o, &r);
    int out = rc != 0
                  ? from_pipeline(&r)
                  : from_dedup(dedup_minhash_signature(f->mh, r.tokens, r.tokens_len, sig, NULL));
    filter_fp_result_release(&r);
    return out;
}
