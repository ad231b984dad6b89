#ifndef SIMCRAWL_H
#define SIMCRAWL_H
/*
 * libsimcrawl: a near-duplicate filter for web crawlers. A crawler hands it a page (the
 * bytes it fetched, their Content-Type and URL) and learns, before it enqueues the page's
 * links, whether the page is new, a near-duplicate of a page seen before (its 64-bit
 * simhash within Hamming distance k of that page's: Charikar 2002; Manku, Jain and Das
 * Sarma, WWW 2007), an exact duplicate (the same payload bytes), too short to judge, or
 * not HTML. The fingerprint is specified in docs/FINGERPRINT.md; the index file in
 * docs/INDEX-FORMAT.md.
 *
 *   #include <simcrawl.h>          cc app.c $(pkg-config --cflags --libs simcrawl)
 *
 *   struct simcrawl_filter *f;
 *   int rc = simcrawl_filter_open(&f, "site.idx", 3);          // 0 or SIMCRAWL_E...
 *   struct simcrawl_match *m = simcrawl_match_new();
 *   int d = simcrawl_filter_check(f, url, body, body_len, content_type, m);
 *   if (d == SIMCRAWL_NEW) enqueue_links(...);
 *   else if (d == SIMCRAWL_NEAR_DUPLICATE) log(url, simcrawl_match_duplicate_of(m));
 *   else if (d < 0) warn(simcrawl_strerror(d));
 *   simcrawl_match_free(m);
 *   rc = simcrawl_filter_close(f);                               // saves the index
 *
 * This header is the manual: ownership, threading and errors are written beside every
 * function. Only simcrawl_* and SIMCRAWL_* names are exported. The library never prints
 * (warnings go to the log callback of the options) and never changes process-wide state:
 * no curl_global_init(), no xmlGcMemSetup() (a host such as wget2, or a Python process
 * using lxml, owns those); it only calls xmlInitParser(), which libxml2 makes idempotent
 * and which every libxml2 user needs before threads parse.
 *
 * The API and ABI contract: what is declared here does not change; functions, options,
 * decisions and error codes are only ever added (the SONAME stays libsimcrawl.so.0; the
 * symbol versions are in filter/libsimcrawl.map).
 */
#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define SIMCRAWL_VERSION_MAJOR 0
#define SIMCRAWL_VERSION_MINOR 4
#define SIMCRAWL_VERSION_PATCH 0
/* "0.4.0": the same string as SIMCRAWL_VERSION_MAJOR.MINOR.PATCH and `simcrawl --version`.
 * Static storage; thread-safe. */
const char *simcrawl_version(void);

/* The docs/FINGERPRINT.md version this library computes (3). Index files record it; a
 * file of another version is refused with SIMCRAWL_EVERSION (rebuild it). Thread-safe. */
unsigned simcrawl_fingerprint_version(void);

/* What simcrawl_filter_check() decided about a page. Values fixed, only ever appended. */
enum simcrawl_decision {
    SIMCRAWL_NEW = 0,             /* not within k of any page: added to the index */
    SIMCRAWL_NEAR_DUPLICATE = 1,  /* within k of an indexed page (simcrawl_match_*) */
    SIMCRAWL_EXACT_DUPLICATE = 2, /* the same payload bytes as an indexed page */
    SIMCRAWL_TOO_SHORT = 3,       /* too little main text to fingerprint: never a
                                   * duplicate of anything, not added */
    SIMCRAWL_NOT_HTML = 4,        /* not an HTML page (binary, another content type) */
};

/* Errors are negative; values fixed, only ever appended. */
enum simcrawl_error {
    SIMCRAWL_ENOMEM = -1,    /* out of memory; the filter stays usable */
    SIMCRAWL_EINVAL = -2,    /* invalid argument (NULL where an object is needed, k > 7, ...) */
    SIMCRAWL_EIO = -3,       /* reading or writing the index or its journal failed */
    SIMCRAWL_ELOCKED = -4,   /* another process holds the index's writer lock */
    SIMCRAWL_EVERSION = -5,  /* the index file is of another format or fingerprint version */
    SIMCRAWL_ECORRUPT = -6,  /* the index file is damaged (checksum, structure) */
    SIMCRAWL_ETOOLARGE = -7, /* the page is over the size cap (options: max_bytes) */
    SIMCRAWL_EMISMATCH = -8, /* k differs from the index file's k */
    SIMCRAWL_ECLOSED = -9,   /* the filter could not take more pages (a previous write
                              * failed; close it and open it again) */
    SIMCRAWL_EMETHOD = -10,  /* the index file or journal is of the other method (simhash,
                              * minhash), or the call needs the other method (0.4) */
};

/* A lower-case English description of a decision (>= 0) or error (< 0): "near-duplicate",
 * "the index file is locked by another process". Static storage; never NULL (unknown codes
 * give "unknown code"). Thread-safe. */
const char *simcrawl_strerror(int code);

/*
 * The fingerprint of one page: page[0..len) the HTML bytes as fetched (borrowed for the
 * call), content_type NULL or the HTTP Content-Type value (its charset is used, e.g.
 * "text/html; charset=iso-8859-1"). The whole main text is fingerprinted (no site
 * templates: those are learned by a filter). Returns 0 with *fingerprint set,
 * SIMCRAWL_TOO_SHORT or SIMCRAWL_NOT_HTML (*fingerprint untouched), or a negative error.
 * Stateless; thread-safe.
 */
int simcrawl_fingerprint(const void *page, size_t len, const char *content_type,
                         uint64_t *fingerprint);

/* ---- options ---- */

/* Options for a filter; opaque, so that new ones never break the ABI. Caller frees with
 * simcrawl_options_free() (NULL-safe). Returns NULL when out of memory. The filter copies
 * what it needs at open: the options may be freed right after. */
struct simcrawl_options;
struct simcrawl_options *simcrawl_options_new(void);
void simcrawl_options_free(struct simcrawl_options *o);

/* Each setter returns 0, or SIMCRAWL_EINVAL (o NULL or the value out of range) and leaves
 * the option as it was. */
int simcrawl_options_set_k(struct simcrawl_options *o,
                           unsigned k); /* 0..7; default 3;
                                         * 0 with an existing index: the file's k */
/* The near-duplicate method (0.4): "simhash" (the default: a page within Hamming distance
 * k of an indexed page's 64-bit simhash) or "minhash" (an indexed page whose estimated
 * Jaccard similarity of word shingles is >= the threshold: MinHash signatures searched by
 * LSH bands, docs/MINHASH.md; k is then not used). An index file and its journal record
 * their method: opening one of the other method is SIMCRAWL_EMETHOD. */
int simcrawl_options_set_method(struct simcrawl_options *o, const char *method);
/* The minhash method's threshold: a page whose estimated Jaccard similarity with an indexed
 * page is >= jaccard is its near-duplicate. 0..1; default 0 (with an existing index: the
 * file's; for a new one 0.8). Another value than the file's is SIMCRAWL_EMISMATCH (the LSH
 * bands are chosen for it). Not used by the simhash method. (0.4) */
int simcrawl_options_set_threshold(struct simcrawl_options *o, double jaccard);
/* When the journal is fsync()ed: "always" (before check() returns: a power cut loses
 * nothing reported), "interval" (at most once a second: a power cut may lose the last
 * second), "no" (the kernel decides). Every mode write()s before check() returns, so a
 * kill -9 of the process loses nothing in any mode. Default "interval". */
int simcrawl_options_set_fsync(struct simcrawl_options *o, const char *mode);
/* How long simcrawl_filter_open() waits for another process's writer lock; default 30 s;
 * 0: fail at once with SIMCRAWL_ELOCKED. */
int simcrawl_options_set_lock_wait(struct simcrawl_options *o, double seconds);
/* Site templates (docs/FINGERPRINT.md, "Template blocks"): learned per host as pages are
 * checked, saved with the index. Default on (1). */
int simcrawl_options_set_templates(struct simcrawl_options *o, int on);
/* The largest page accepted, in bytes (default 64 MiB): a larger one is
 * SIMCRAWL_ETOOLARGE, never truncated. */
int simcrawl_options_set_max_bytes(struct simcrawl_options *o, size_t bytes);
/* Where warnings go (a torn journal record dropped at open, a compaction that failed and
 * will be retried): cb(userdata, message) with a lower-case message without a newline,
 * called from the thread that hit the condition. NULL: warnings are dropped. The library
 * itself never prints. */
int simcrawl_options_set_log(struct simcrawl_options *o,
                             void (*cb)(void *userdata, const char *message), void *userdata);
/* The journal size (bytes, header included; at least 16) past which a check() compacts
 * it into the index file (then truncates it); default 64 MiB. Smaller: shorter replays
 * at open, more index saves. */
int simcrawl_options_set_journal_max(struct simcrawl_options *o, uint64_t bytes);

/*
 * The probe's lines (after 0.4.0): memory for speed in a long-running process that checks
 * one page at a time against a large index (docs/HTTP-API.md, "The probe's lines").
 * Each table of the index is kept again as cache lines addressed by the fingerprint's top
 * bits, so a check reads one line a table instead of two in a row. Measured at 10M
 * fingerprints (docs/BENCHMARKS.md, probe19k): one call a query 1.24x as fast at the
 * median on a loaded machine, 1.3-1.6x on a quiet one, for 8 bytes a table and 4 more a
 * slot, 1.25-2.5 slots a fingerprint: at 10 tables 105-210 bytes a fingerprint (141 at
 * 10M: 1.41 GB beside the index's 1.2 GB), and a pause of a few CPU seconds to build them
 * (at 10M) in the check that does. Built only in this process's memory, never saved;
 * rebuilt after the index's merges, once the index has answered a quarter as many checks
 * as it holds. mode:
 *   "off"  (the default) never;
 *   "on"   for an index of at least min fingerprints (probe_lines_min) whose table design
 *          has keys long enough for them (an index made for millions of pages: `simcrawl
 *          index add --fingerprints` of a large list, or `--tables 10`; a filter's own new
 *          index is designed for about 1M pages, whose 16-bit keys are too short);
 *   "auto" as "on", and only while the lines' bytes are at most probe_lines_max_bytes
 *          (default: a quarter of the machine's physical memory, read at open).
 * Only for the simhash method on an index file or in memory: "on" with the minhash method
 * or an index on Redis fails the open with SIMCRAWL_EINVAL (and a message to the log
 * callback); "auto" is then off. simcrawl_filter_probe_lines() reports their state.
 */
int simcrawl_options_set_probe_lines(struct simcrawl_options *o, const char *mode);
/* The least fingerprints an index holds for lines ("on", "auto"); default 2097152 (2^21:
 * below it the index mostly stays in the caches). */
int simcrawl_options_set_probe_lines_min(struct simcrawl_options *o, uint64_t fingerprints);
/* "auto": the most bytes the lines may take; 0 (the default): a quarter of physical memory. */
int simcrawl_options_set_probe_lines_max_bytes(struct simcrawl_options *o, uint64_t bytes);

/* ---- the filter ---- */

/*
 * A filter: a shared, durable near-duplicate index.
 *
 * index_path NULL: in memory only. Otherwise the index file is loaded if it exists (made
 * on close if not) and kept on disk: each page reported new is appended to the journal
 * index_path + ".journal" (a record with a checksum) with write() before check()
 * returns, so a kill -9 loses nothing check() reported; the journal is replayed on open
 * (a torn last record is dropped with a warning to the log callback) and compacted into
 * the index file on close and when it grows large. The file is locked for writing
 * (flock: a lock never outlives its process) from open to close; a second writer waits up
 * to lock_wait, then gets SIMCRAWL_ELOCKED. k must equal the file's k (0: take the
 * file's; SIMCRAWL_EMISMATCH otherwise).
 *
 * On success returns 0 and *out (caller closes with simcrawl_filter_close()); on failure
 * a negative error and *out = NULL. open_opts with o NULL is open with the defaults.
 */
struct simcrawl_filter;
int simcrawl_filter_open(struct simcrawl_filter **out, const char *index_path, unsigned k);
int simcrawl_filter_open_opts(struct simcrawl_filter **out, const char *index_path,
                              const struct simcrawl_options *o);

/* Saves the index (with index_path), releases the lock and frees f: always frees f, even
 * when the save fails; returns 0 or the first error met. NULL-safe (returns 0). Must not
 * race other calls on f. */
int simcrawl_filter_close(struct simcrawl_filter *f);

/* The number of pages in the index (those reported new, and those loaded). Thread-safe. */
uint64_t simcrawl_filter_count(const struct simcrawl_filter *f);

/* The result of one check, for the caller to read: the fingerprint, and for a duplicate
 * the id of the page it duplicates, the distance and the similarity. Caller frees with
 * simcrawl_match_free() (NULL-safe); NULL when out of memory. One thread at a time uses
 * a match; reuse it across calls. */
struct simcrawl_match;
struct simcrawl_match *simcrawl_match_new(void);
void simcrawl_match_free(struct simcrawl_match *m);

/*
 * Checks one page and adds it when new. Atomic: callable from many threads at once (two
 * threads checking near-duplicates of each other at the same moment: exactly one gets
 * SIMCRAWL_NEW). Extraction runs outside the lock; only the lookup and the add are
 * serialised.
 *
 * id: copied; the page's URL when there is one (its host keys the site templates), else
 * any string. Idempotent by id: an id already in the index returns the decision stored for
 * it and adds nothing, so a page checked again after a crash is never a duplicate of
 * itself. page[0..len), content_type: as simcrawl_fingerprint(). match: NULL, or filled
 * in (valid until the next call with it).
 *
 * Returns a decision (enum simcrawl_decision, >= 0) or a negative error (the page is then
 * not added).
 */
int simcrawl_filter_check(struct simcrawl_filter *f, const char *id, const void *page, size_t len,
                          const char *content_type, struct simcrawl_match *match);

/* What else check() keeps in m, on request (nothing by default: it costs a copy):
 * SIMCRAWL_MATCH_TEXT the page's main text, SIMCRAWL_MATCH_LINKS the URLs of its links
 * (resolved against the id as the page's URL and its <base href>). They are there for the
 * pages check() parses: NEW, NEAR_DUPLICATE and TOO_SHORT; not for an exact duplicate or
 * an id already in the index (decided before parsing), NOT_HTML or an error. Returns 0,
 * or SIMCRAWL_EINVAL for m NULL or an unknown flag. */
#define SIMCRAWL_MATCH_TEXT 1u
#define SIMCRAWL_MATCH_LINKS 2u
int simcrawl_match_want(struct simcrawl_match *m, unsigned flags);
/* The page's main text (UTF-8, blocks separated by "\n\n", NUL-terminated), its length in
 * *len (len may be NULL); NULL when not asked for or not parsed. Borrowed: valid until the
 * next call with m. */
const char *simcrawl_match_text(const struct simcrawl_match *m, size_t *len);
/* The number of links of the page, and the URL of link i (i < count; NULL otherwise), in
 * page order, repeats kept; 0 when not asked for or not parsed. Borrowed: valid until the
 * next call with m. */
size_t simcrawl_match_link_count(const struct simcrawl_match *m);
const char *simcrawl_match_link(const struct simcrawl_match *m, size_t i);

/* The page's fingerprint (0 when the decision was TOO_SHORT or NOT_HTML). With the minhash
 * method: the page's own simhash when check() parsed it (NEW, NEAR_DUPLICATE), else 0. */
uint64_t simcrawl_match_fingerprint(const struct simcrawl_match *m);
/* The id of the page this one duplicates; NULL when it was not a duplicate. Borrowed:
 * valid until the next call with m. */
const char *simcrawl_match_duplicate_of(const struct simcrawl_match *m);
/* The Hamming distance to that page (0 for an exact duplicate; 0 when not a duplicate). */
unsigned simcrawl_match_distance(const struct simcrawl_match *m);
/* The similarity to that page: with the simhash method 1 - distance / 64, with the minhash
 * method the estimated Jaccard similarity of the two signatures (1.0 for an exact
 * duplicate, 0 when not a duplicate). */
double simcrawl_match_similarity(const struct simcrawl_match *m);

/* ---- more ways to check, forget and look up (0.3) ---- */

/* Flags of simcrawl_filter_check_flags() and simcrawl_filter_check_fingerprint(). */
#define SIMCRAWL_CHECK_NO_ADD                                                                      \
    1u /* decide, but add nothing: a page that would be NEW is                                     \
        * reported NEW and is not in the index afterwards (a                                       \
        * dry run: the service's insert=false) */

/* simcrawl_filter_check() with flags (0: the same call). */
int simcrawl_filter_check_flags(struct simcrawl_filter *f, const char *id, const void *page,
                                size_t len, const char *content_type, unsigned flags,
                                struct simcrawl_match *match);

/*
 * Checks a fingerprint computed elsewhere (simcrawl_fingerprint(), another process, a
 * `simcrawl fingerprint` list) and adds it under id when new: the same atomic,
 * idempotent-by-id decision as simcrawl_filter_check() without the page, so without
 * exact-duplicate detection and without site templates. Returns SIMCRAWL_NEW,
 * SIMCRAWL_NEAR_DUPLICATE (match says of which page) or a negative error. Thread-safe.
 */
int simcrawl_filter_check_fingerprint(struct simcrawl_filter *f, const char *id,
                                      uint64_t fingerprint, unsigned flags,
                                      struct simcrawl_match *match);

/*
 * Forgets the page indexed under id: it is no longer anybody's original, the same id may
 * be checked (and added) again, and its payload is no longer an exact duplicate's. Durable
 * like an add (a journal record written before the call returns; the index file drops
 * the page at the next compaction). What the site templates learned from the page stays.
 * Returns 1 when the page was there, 0 when no page has that id, or a negative error.
 * Thread-safe.
 */
int simcrawl_filter_delete(struct simcrawl_filter *f, const char *id);

/*
 * Problem 2: every indexed page within Hamming distance k (<= the filter's k) of
 * fingerprint, nearest first (ties: the page added first), at most max of them (0: all).
 * cb(userdata, id, fingerprint, distance) is called for each, outside the filter's locks
 * (id borrowed for the call); a non-zero return from cb stops the walk. Returns the number
 * of pages passed to cb, or a negative error (SIMCRAWL_EINVAL for k over the filter's).
 * Thread-safe.
 */
int simcrawl_filter_neighbors(struct simcrawl_filter *f, uint64_t fingerprint, unsigned k,
                              size_t max,
                              int (*cb)(void *userdata, const char *id, uint64_t fingerprint,
                                        unsigned distance),
                              void *userdata);

/* 1 when the check that filled m added the page to the index (a NEW page; 0 for a page
 * whose id was indexed already, and with SIMCRAWL_CHECK_NO_ADD). */
int simcrawl_match_added(const struct simcrawl_match *m);

/* The filter's k (the largest distance it answers; 0 for a minhash filter). Thread-safe. */
unsigned simcrawl_filter_k(const struct simcrawl_filter *f);

/* The bytes of the journal now (0 for a filter in memory): what a restart replays.
 * Thread-safe. */
uint64_t simcrawl_filter_journal_bytes(const struct simcrawl_filter *f);

/*
 * The probe's lines now (simcrawl_options_set_probe_lines): returns 1 when they are built
 * and serve the checks, 0 when not (off, or not built: see *state), or SIMCRAWL_EINVAL for
 * f NULL. *state (may be NULL): a static lower-case word: "off", "built", "small" (the
 * index holds fewer fingerprints than probe_lines_min), "warming" (due once the index has
 * answered a quarter as many checks as it holds), "over-cap" (they would take more than
 * *max_bytes), "short-keys" (the index's table design cannot have them). *bytes (may be
 * NULL): the memory their blocks hold now (kept between a merge and the next build);
 * *need (may be NULL): the bytes lines of the index as it is take; *max_bytes (may be
 * NULL): the cap ("auto"; 0: none). Thread-safe.
 */
int simcrawl_filter_probe_lines(struct simcrawl_filter *f, const char **state, uint64_t *bytes,
                                uint64_t *need, uint64_t *max_bytes);

/* ---- the minhash method (0.4) ---- */

/* The filter's method: "simhash" or "minhash" (static storage). Thread-safe. */
const char *simcrawl_filter_method(const struct simcrawl_filter *f);
/* The minhash filter's threshold (the index file's when it had one); 0 for simhash. */
double simcrawl_filter_threshold(const struct simcrawl_filter *f);
/* The values h of the minhash filter's signatures (the index file's; 128 for a new one);
 * 0 for simhash. Thread-safe. */
size_t simcrawl_filter_signature_size(const struct simcrawl_filter *f);

/* The page's MinHash signature, filled by a minhash filter's check() for a page it parsed
 * (NEW, NEAR_DUPLICATE): *h (may be NULL) values; NULL (and *h 0) otherwise. Borrowed:
 * valid until the next call with m. */
const uint32_t *simcrawl_match_signature(const struct simcrawl_match *m, size_t *h);

/*
 * The MinHash signature of a page as a minhash filter's check() computes it (the page's
 * main text without its host's template blocks as the filter knows them, url's host
 * keying the templates; url NULL: no templates), into sig[0..h) (h the filter's, 128 by
 * default), nothing added or looked up. Returns 0, SIMCRAWL_TOO_SHORT, SIMCRAWL_NOT_HTML
 * or a negative error (SIMCRAWL_EMETHOD for a simhash filter, SIMCRAWL_EINVAL for another
 * h). Thread-safe.
 */
int simcrawl_filter_signature(struct simcrawl_filter *f, const char *url, const void *page,
                              size_t len, const char *content_type, uint32_t *sig, size_t h);

/*
 * Problem 2 for the minhash method: every indexed page whose estimated Jaccard similarity
 * with sig[0..h) (a signature of this filter's: simcrawl_filter_signature(),
 * simcrawl_match_signature()) is >= threshold (0..1; pages are found through the
 * LSH bands, chosen for the filter's threshold: below it some are missed), most similar
 * first (ties: the page added first), at most max (0: all). cb(userdata, id, similarity)
 * is called for each outside the filter's locks (id borrowed for the call); a non-zero
 * return stops the walk. Returns the number passed to cb or a negative error
 * (SIMCRAWL_EMETHOD for a simhash filter, SIMCRAWL_EINVAL for h other than the filter's).
 * simcrawl_filter_check_fingerprint() and simcrawl_filter_neighbors() of a minhash filter
 * return SIMCRAWL_EMETHOD. Thread-safe.
 */
int simcrawl_filter_neighbors_signature(
    struct simcrawl_filter *f, const uint32_t *sig, size_t h, double threshold, size_t max,
    int (*cb)(void *userdata, const char *id, double similarity), void *userdata);

#ifdef __cplusplus
}
#endif
#endif /* SIMCRAWL_H */
