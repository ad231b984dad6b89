#ifndef FILTER_DECIDE_H
#define FILTER_DECIDE_H
/*
 * The one decision, internal to libsimcrawl and shared by `simcrawl crawl` (its process()
 * callback), `simcrawl dedup` and the filter of <simcrawl.h>: given a page that went
 * through the pipeline (filter/pipeline.h), is it
 *   - a page whose id is indexed already (only with by_id: the library's filter),
 *   - an exact duplicate (its payload key, an opaque byte string the caller derives from
 *     the payload: a SHA-1 digest for the WARC writers, XXH3-128 for the library, is
 *     known; the caller's metadata stored with the key comes back: the original's URI,
 *     WARC record id and date for a revisit record),
 *   - a near-duplicate (dedup_index_nearest within k; or with the MinHash method, an
 *     indexed page whose signature's Jaccard estimate is >= the threshold, dedup_lsh_query),
 *   - or new: added to the index, its payload key remembered, its template blocks counted?
 *
 * The locking rule, here and nowhere else: a filter_decide holds one rwlock. Lookups that
 * change nothing (filter_decide_lookup, filter_decide_mark, filter_decide_foreach) take it
 * for reading; whatever decides or adds (filter_decide_page, filter_decide_add,
 * filter_decide_remember, filter_decide_set_meta) takes it for writing, so check-and-add is
 * atomic: of two near-duplicate pages decided at the same moment exactly one is new. The
 * caller's hooks run under the write lock. The index is borrowed: while a filter_decide
 * uses it, nothing else may touch it (the caller may read it once no thread decides).
 *
 * Return conventions inside filter/ (this header, pipeline.h, filter_int.h; the public
 * simcrawl.h keeps its own: a decision >= 0 or a negative SIMCRAWL_E... code):
 *  - a call whose failures are the dedup library's (the index, the maps, the journal
 *    codec) returns enum dedup_code and gives its results through out-parameters; "found"
 *    and "deleted" are int out-flags beside DEDUP_OK (filter_decide_lookup);
 *  - a call whose failure may come from more than one place returns 0 or -1 and its
 *    result struct says which: the caller's hooks (filter_decide_page, filter_decide_delete:
 *    res->code or res->hook_code), extract or dedup (filter_fingerprint_page: out->stage
 *    with that library's code);
 *  - the Redis pool of the filter (fr_*, filter_int.h) answers for simcrawl.h and speaks its
 *    codes (0 or a negative SIMCRAWL_E...); redisidx.h has its own enum redisidx_code;
 *  - a call that cannot fail returns its value: a count, what was stored
 *    (filter_decide_remember), or 1/0 for a yes/no question.
 */
#include <stddef.h>
#include <stdint.h>

#include "dedup/dedup.h"
#include "dedup/minhash.h"

struct filter_decide;
struct filter_decide_page;

enum filter_verdict {
    FILTER_VERDICT_NEW = 0,         /* fingerprinted, not within k: added (see add_code) */
    FILTER_VERDICT_NEAR,            /* within k of doc, at distance */
    FILTER_VERDICT_EXACT,           /* the payload key is known: meta, and doc when indexed */
    FILTER_VERDICT_KNOWN_ID,        /* by_id: the id is indexed already (doc) */
    FILTER_VERDICT_UNFINGERPRINTED, /* no fingerprint and not an exact duplicate: not added */
    FILTER_VERDICT_NOINDEX,         /* FILTER_DECIDE_NOINDEX: nothing looked up or learned */
};

/* filter_decide_page.flags */
#define FILTER_DECIDE_NOINDEX 1u       /* meta robots noindex: decide nothing, learn nothing */
#define FILTER_DECIDE_KEEP 2u          /* no near-duplicate lookup: a fingerprinted page is new */
#define FILTER_DECIDE_REMEMBER_UNFP 4u /* remember the payload key of an unfingerprinted page */
#define FILTER_DECIDE_LEARN_SHORT                                                                  \
    8u /* count the template blocks of a page with too little                                      \
        * text (even an exact duplicate: the doc hash makes a                                      \
        * repeat count nothing) */
#define FILTER_DECIDE_LEARN_UNFP                                                                   \
    16u /* count those of any page not fingerprinted that is not                                   \
         * an exact duplicate (too much text, say: the crawler                                     \
         * archives it as new) */
#define FILTER_DECIDE_NO_ADD                                                                       \
    32u /* decide, add nothing: a page within k of none is                                         \
         * NEW with added 0 (a dry run) */
#define FILTER_DECIDE_LEARN_NEAR                                                                   \
    64u /* count the template blocks of a page decided NEAR while                                  \
         * its host is young (fewer than DEDUP_TEMPLATE_YOUNG_DOCS                                 \
         * documents counted; not an exact copy of one counted:                                    \
         * res->learned); never with NO_ADD */

/* Hooks, all called under the write lock with userdata; a non-zero return is the caller's
 * error code, handed back in filter_decide_result.hook_code. */
struct filter_decide_hooks {
    int (*start)(void *userdata); /* before anything is decided */
    int (*reserve)(void *userdata, uint32_t docs, const struct filter_decide_page *p);
    /* before page p is added: room for docs documents and
     * whatever the added hook needs for p, so that it cannot
     * run out of memory; non-zero: nothing added */
    /* after a page was added as document doc (filter_decide_page only, not _add) */
    int (*added)(void *userdata, uint32_t doc, const struct filter_decide_page *p);
    void *userdata;
    /* before document doc (id[0..id_len)) is deleted (filter_decide_delete with hooks);
     * non-zero: nothing deleted */
    int (*deleting)(void *userdata, uint32_t doc, const char *id, size_t id_len);
    /* before the template blocks of page p, decided NEAR, are counted (LEARN_NEAR: a
     * journal's learn record); non-zero: not counted, the decision fails */
    int (*learning)(void *userdata, const struct filter_decide_page *p);
};

struct filter_decide_opts {
    struct dedup_index *index; /* borrowed: valid until filter_decide_free(); NULL with lsh */
    unsigned k;                /* near-duplicates within k */
    /* or the MinHash method (dedup/minhash.h): pages carry a signature (sig) and a
     * near-duplicate is an indexed page whose estimate is >= threshold. Borrowed like
     * index; set exactly one of the two. */
    struct dedup_lsh *lsh;
    double threshold;
    int templates;       /* mark and learn with the index's template table */
    int by_id;           /* an id already indexed decides KNOWN_ID */
    size_t max_payloads; /* payload keys remembered at most; 0: no cap */
    struct filter_decide_hooks hooks;
};

/* One page, all borrowed for the call. */
struct filter_decide_page {
    const char *id; /* the index id (URL, file name, caller's id) */
    size_t id_len;
    const void *key; /* payload key, or NULL: no exact-duplicate lookup, none kept */
    size_t key_len;
    const void *meta; /* stored with the key when the page is remembered */
    size_t meta_len;
    int has_fp; /* the pipeline fingerprinted it (fp; with lsh, sig) */
    uint64_t fp;
    const uint32_t *sig; /* with lsh: the MinHash signature, h values */
    int too_little_text; /* filter_fp_result_too_little_text() */
    const char *host;    /* template host key and blocks (filter_fp_opts.keep_blocks) */
    size_t host_len;
    uint64_t doc_hash;
    const uint64_t *blocks;
    size_t n_blocks;
    unsigned flags; /* FILTER_DECIDE_* */
};

/* Whether the payload key of a page was remembered. */
enum filter_decide_stored {
    FILTER_STORED_NONE = 0, /* nothing to remember (not new, no key) */
    FILTER_STORED_YES,
    FILTER_STORED_FULL,   /* max_payloads reached: not remembered */
    FILTER_STORED_ENOMEM, /* out of memory: not remembered */
};

/* The outcome. Zero-initialise once; release with filter_decide_result_release(); reusing
 * it for the next call is fine (buffers are kept). */
struct filter_decide_result {
    enum filter_verdict verdict;
    uint32_t doc; /* NEW: the page's document; NEAR, KNOWN_ID: the original's;
                   * EXACT: the original's, or UINT32_MAX when not indexed */
    int has_doc;
    unsigned distance; /* NEAR (simhash) */
    double jaccard;    /* NEAR with lsh: the signatures' Jaccard estimate */
    uint64_t fp;       /* the original's fingerprint when has_doc (NEAR, EXACT, KNOWN_ID) */
    char *dup_id;      /* NEAR, EXACT with has_doc: the original's id, owned by the
                        * result (NUL-terminated), dup_id_len bytes */
    size_t dup_id_len;
    void *meta; /* EXACT: a copy of the stored metadata, owned by the result */
    size_t meta_len;
    enum filter_decide_stored stored;
    enum dedup_code add_code;      /* NEW: DEDUP_OK, or why the index add failed (then
                                    * nothing of the page was kept) */
    enum dedup_code template_code; /* DEDUP_OK, or why its blocks could not be counted
                                    * (never DEDUP_ENOMEM for a page added: room is
                                    * reserved before the add, which fails instead) */
    enum dedup_code code;          /* filter_decide_page() -1: the lookup's failure */
    int hook_code;                 /* filter_decide_page() -1: a hook's non-zero return */
    int added;                     /* NEW: 1 when the page was added by this call */
    int learned;                   /* NEAR with LEARN_NEAR: 1 when its blocks were counted */
    size_t dup_cap, meta_cap;
};

/* A new decision over opts->index (and, with opts->templates, its template table, made
 * now). *out: caller frees with filter_decide_free(). DEDUP_OK or DEDUP_ENOMEM. */
enum dedup_code filter_decide_new(const struct filter_decide_opts *opts, struct filter_decide **out)
    __attribute__((warn_unused_result));
/* Frees d (not the index). NULL-safe. */
void filter_decide_free(struct filter_decide *d);

/*
 * Read lock: the page's id (by_id) or payload key already known? *found = 1 with
 * res->verdict KNOWN_ID or EXACT, 0 when neither. DEDUP_ENOMEM copying the answer (also
 * in res->code; *found 0). No fingerprint needed: callers ask before running the pipeline.
 */
enum dedup_code filter_decide_lookup(struct filter_decide *d, const struct filter_decide_page *p,
                                     struct filter_decide_result *res, int *found)
    __attribute__((warn_unused_result));

/*
 * Write lock: the decision, in this order: the start hook; NOINDEX; the id (by_id); the
 * payload key (EXACT); no fingerprint (UNFINGERPRINTED; its key remembered with
 * REMEMBER_UNFP); KEEP or nothing within k (NEW: reserve hook, index add, key remembered
 * with meta, template blocks counted, added hook); else NEAR (its blocks counted as
 * LEARN_NEAR says, after the learning hook). The template blocks of a
 * page not fingerprinted are counted as LEARN_SHORT and LEARN_UNFP say. Returns 0 with res filled,
 * or -1: the lookup failed (res->code), out of memory copying the answer (res->code DEDUP_ENOMEM)
 * or a hook failed (res->hook_code; after the added hook the page is in).
 */
int filter_decide_page(struct filter_decide *d, const struct filter_decide_page *p,
                       struct filter_decide_result *res) __attribute__((warn_unused_result));

/* Write lock: adds p as new without any lookup (a journal's replay): index, id, payload
 * key, template blocks (res->template_code); the reserve hook, not the added one.
 * DEDUP_OK (with *doc), or the failure with nothing added. */
enum dedup_code filter_decide_add(struct filter_decide *d, const struct filter_decide_page *p,
                                  uint32_t *doc, enum dedup_code *template_code)
    __attribute__((warn_unused_result));

/* Write lock: counts the template blocks of p as a NEAR page's were counted
 * (res->learned) without deciding anything: a journal's or a saved state's replay of a
 * near-duplicate's blocks. DEDUP_OK, or the table's failure (nothing counted). */
enum dedup_code filter_decide_learn(struct filter_decide *d, const struct filter_decide_page *p)
    __attribute__((warn_unused_result));

/* Write lock: remembers key with meta for document doc (UINT32_MAX: not indexed), unless
 * the key is known already (the first stays). Loading a saved state. */
enum filter_decide_stored filter_decide_remember(struct filter_decide *d, const void *key,
                                                 size_t key_len, uint32_t doc, const void *meta,
                                                 size_t meta_len);

/* Write lock: replaces the metadata stored with key (the WARC record id is known only
 * once the record is written). DEDUP_OK, DEDUP_EINVAL (key not known), DEDUP_ENOMEM. */
enum dedup_code filter_decide_set_meta(struct filter_decide *d, const void *key, size_t key_len,
                                       const void *meta, size_t meta_len);

/* Read lock: fn(userdata, key, key_len, doc, meta, meta_len) for every remembered key in
 * the order remembered (pointers valid during the call). */
void filter_decide_foreach(struct filter_decide *d,
                           void (*fn)(void *userdata, const void *key, size_t key_len, uint32_t doc,
                                      const void *meta, size_t meta_len),
                           void *userdata);

/* Payload keys remembered. */
size_t filter_decide_payload_count(struct filter_decide *d);

/* A filter_template_mark_fn (filter/pipeline.h) over the index's template table, under
 * the read lock; userdata is the filter_decide. */
size_t filter_decide_mark(void *userdata, const char *host, size_t host_len, const uint64_t *blocks,
                          const uint32_t *n_tokens, size_t n, unsigned char *is_template);

/*
 * Deletion (by_id only). A deleted document stays in the index, marked, until
 * filter_decide_rebuild_locked(): no lookup finds it (its id, its payload key, its
 * fingerprint), and its id may be added again as a new document.
 */

/* Write lock: deletes the document of id[0..id_len). With hooks, the start hook first,
 * then the deleting hook (non-zero: nothing deleted). 0 with *deleted 1 (res->doc, res->fp:
 * the document's) or 0 (no such id); -1 with res->code (DEDUP_EINVAL without by_id,
 * DEDUP_ENOMEM) or res->hook_code, *deleted 0. */
int filter_decide_delete(struct filter_decide *d, const char *id, size_t id_len, int hooks,
                         struct filter_decide_result *res, int *deleted)
    __attribute__((warn_unused_result));

/* Write lock (a query absorbs pending adds): fn(userdata, id, id_len, fp, distance) for
 * every live document within k of fp, nearest first (ties: the lower document number), at
 * most max (0: all), called under the lock (copy what you keep; do not call back into d).
 * DEDUP_OK, DEDUP_EINVAL (k over the index's), DEDUP_ETOOLARGE, DEDUP_ENOMEM. */
enum dedup_code filter_decide_neighbors(struct filter_decide *d, uint64_t fp, unsigned k,
                                        size_t max,
                                        void (*fn)(void *userdata, const char *id, size_t id_len,
                                                   uint64_t fp, unsigned distance),
                                        void *userdata) __attribute__((warn_unused_result));

/* Write lock: the MinHash neighbours (lsh only): fn(userdata, id, id_len, jaccard) for
 * every live document whose estimate with sig is >= threshold, most similar first (ties:
 * the lower document number), at most max (0: all), called under the lock. DEDUP_OK,
 * DEDUP_EINVAL (no lsh, threshold outside [0, 1]), DEDUP_ENOMEM. */
enum dedup_code filter_decide_neighbors_sig(struct filter_decide *d, const uint32_t *sig,
                                            double threshold, size_t max,
                                            void (*fn)(void *userdata, const char *id,
                                                       size_t id_len, double jaccard),
                                            void *userdata) __attribute__((warn_unused_result));

/* The state of the index's probe's lines (dedup_index_probe_lines; all zero for an LSH
 * index). Read lock. */
void filter_decide_probe_lines(struct filter_decide *d, struct dedup_lines_info *out);

/* Documents deleted and not yet rebuilt away. Read lock. */
uint32_t filter_decide_deleted_count(struct filter_decide *d);

/*
 * Drops the deleted documents for good: a new index of the live ones (the same design;
 * documents in their order, renumbered; the template table and pair generation moved
 * over), and the maps renumbered. No lock taken: call it from a hook (under the write
 * lock) or when no other thread uses d. On DEDUP_OK d uses *new_index from now on (the
 * caller owns it, as it owned the old one), *old_index is the old index (caller frees it)
 * and *old_to_new (caller frees; UINT32_MAX for a deleted document) maps numbers; all three
 * NULL when nothing was deleted. On error (DEDUP_ENOMEM) nothing changed.
 */
enum dedup_code filter_decide_rebuild_locked(struct filter_decide *d,
                                             struct dedup_index **new_index,
                                             struct dedup_index **old_index, uint32_t **old_to_new)
    __attribute__((warn_unused_result));
/* The same for a decision over an LSH index (a new one of the same parameters; the
 * template table moved over). */
enum dedup_code filter_decide_rebuild_lsh_locked(struct filter_decide *d,
                                                 struct dedup_lsh **new_lsh,
                                                 struct dedup_lsh **old_lsh, uint32_t **old_to_new)
    __attribute__((warn_unused_result));

/* Frees what res owns and zeroes it. NULL-safe. */
void filter_decide_result_release(struct filter_decide_result *res);

#endif
