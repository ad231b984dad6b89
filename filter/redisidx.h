#ifndef FILTER_REDISIDX_H
#define FILTER_REDISIDX_H
/*
 * The near-duplicate index on Redis: the block-permuted tables of dedup/index.c (Manku,
 * Jain and Das Sarma, WWW 2007) kept as Redis keys, so that many processes on many
 * machines (crawl workers, `simcrawl serve` instances, programs on libsimcrawl) share one
 * index and take exact, atomic decisions: of two near-duplicate pages checked at the same
 * moment by two clients, exactly one is NEW. The same decisions, pairs and duplicate_of
 * as the in-process index on the same pages in the same order.
 *
 * HOW THE CRAWL CALLS IT (crawl --redis URL, one struct redisidx per worker thread):
 *
 *   struct redisidx *ix; char err[256];
 *   struct redisidx_opts o = {.k = 3};                      // 0: the index's k
 *   if (redisidx_open(url, &o, &ix, err, sizeof err) != REDISIDX_OK) die(err);
 *   ...for each fetched HTML page: fingerprint it (filter/pipeline.h), then
 *   struct redisidx_page p = {.id = url, .id_len = strlen(url), .fp = fp,
 *                             .key = sha1, .key_len = 20};   // key optional (exact dups)
 *   struct redisidx_result r = {0};                          // reused, released once
 *   enum redisidx_code c = redisidx_check(ix, &p, &r);
 *   if (c != REDISIDX_OK) warn("%s", redisidx_errmsg(ix));   // names the URL; the next
 *                                                            // call reconnects
 *   else if (r.verdict == REDISIDX_NEW) enqueue its links;   // r.added: this call added it
 *   else log near-duplicate of r.dup_id at r.distance (REDISIDX_NEAR) or exact (EXACT);
 *   redisidx_result_release(&r); redisidx_close(ix);
 *
 * A page checked again (a worker restarted after a kill) is idempotent by id: KNOWN_ID
 * with the decision stored for it, nothing added. redisidx_lookup() asks "id or payload
 * known?" without a fingerprint (before fetching or parsing).
 *
 * The URL: redis://HOST[:PORT][/DB][?prefix=NAME&timeout=SECONDS&retry=SECONDS&expect=N],
 * or unix:///PATH[?db=DB&prefix=NAME...]. prefix (default "simcrawl") namespaces every key:
 * several crawls share one Redis with different prefixes. expect (default 1048576): the
 * number of fingerprints the index is made for (its table design and bucket size; used
 * only when the index is created). timeout (default 5): connect and command timeout.
 * retry (default 30, 0 to 3600): once open, how long a call whose connection is lost
 * (Redis restarted or failed over, a network cut, a timeout, LOADING) connects again,
 * backing off from 50 ms to 1 s, before it fails with REDISIDX_EIO naming the URL. A
 * check whose EXEC reply was lost is run again and finds its own adds by id (NEW, added
 * 1: nothing is added twice, no decision changes); redisidx_open() itself does not wait.
 *
 * Keys (all under PREFIX:, written out in docs/REDIS-INDEX.md): a meta record (format,
 * method, k, fingerprint version, design, bucket bits: opening an index of another k,
 * method or fingerprint version is an error), one hash per (table, bucket) of fingerprint
 * -> document number, the documents (number -> fingerprint, id), the ids (id ->
 * number, fingerprint, decision), the payload keys (key -> number), a counter. An index
 * written by the older template counting has its per-host ts: sets unlinked once, by the
 * first redisidx_open() (not no_create) that finds it unswept: SCAN in steps.
 *
 * Atomicity (HOW IT WORKS in redisidx.c): one pipelined round trip WATCHes the candidate
 * buckets and reads them with the id and payload; distances are computed here; a NEW page
 * is added in MULTI/EXEC, which fails when another client wrote to one of those buckets
 * meanwhile: then the check runs again (up to max_retries).
 *
 * Threading: a struct redisidx is one connection; calls on one are serialised by its
 * mutex (thread-safe, not parallel): open one per thread for parallel checks. Errors are
 * codes (enum redisidx_code) with a message (redisidx_errmsg: lower-case, naming the URL
 * and what was wrong). A connection lost for longer than retry is REDISIDX_EIO; the next
 * call connects again (and waits again).
 */
#include <stddef.h>
#include <stdint.h>

enum redisidx_code {
    REDISIDX_OK = 0,
    REDISIDX_ENOMEM,    /* out of memory; the object stays usable */
    REDISIDX_EINVAL,    /* a bad argument or URL */
    REDISIDX_EIO,       /* cannot connect, connection lost, timeout, or a Redis error
                         * reply (OOM, READONLY, ...): the next call reconnects */
    REDISIDX_EVERSION,  /* the index in Redis is of another format or fingerprint version */
    REDISIDX_EMISMATCH, /* k differs from the index's k */
    REDISIDX_EMETHOD,   /* a method the Redis index does not support (minhash), or an index
                         * of another method */
    REDISIDX_ECORRUPT,  /* a key of the index holds something of the wrong type or shape
                         * (the message names the key) */
    REDISIDX_ECONFLICT, /* max_retries transactions in a row lost to other clients */
    REDISIDX_ETOOLARGE, /* an id or payload key over its cap */
};

/* A lower-case description of c. Static storage. */
const char *redisidx_strerror(enum redisidx_code c);

struct redisidx_opts {
    unsigned k;           /* 0..7; 0: the index's (3 for a new one) */
    const char *method;   /* NULL or "simhash"; "minhash": REDISIDX_EMETHOD */
    unsigned max_retries; /* 0: 100 */
    int k_zero;           /* 1: k 0 is meant (identical fingerprints only), not "the
                           * index's" */
    int no_create;        /* 1: an index that is not there is an error (ECORRUPT "no
                           * index"), not made (stats, tools that only read) */
    double sweep_budget;  /* s this open sweeps old keys at most (0: 1 s; at least one
                           * SCAN step; docs/REDIS-INDEX.md) */
};

struct redisidx;

/*
 * Connects to url, checks (or, when PREFIX:meta does not exist, creates atomically) the
 * index's meta record. REDISIDX_OK with *out (caller frees with redisidx_close()), or a
 * code with *out NULL and a message in err[0..errlen) (err may be NULL).
 */
enum redisidx_code redisidx_open(const char *url, const struct redisidx_opts *o,
                                 struct redisidx **out, char *err, size_t errlen)
    __attribute__((warn_unused_result));
void redisidx_close(struct redisidx *ix); /* NULL-safe */

/* The message of the last error on ix (lower-case, no newline; "" when none). Borrowed:
 * valid until the next call on ix (copy it when other threads share ix). */
const char *redisidx_errmsg(const struct redisidx *ix);

unsigned redisidx_k(const struct redisidx *ix);
/* The URL as given to open (borrowed, valid until close). */
const char *redisidx_url(const struct redisidx *ix);

enum redisidx_verdict {
    REDISIDX_NEW = 0,  /* within k of nothing: added (added 1), or NO_ADD (added 0) */
    REDISIDX_NEAR,     /* within k of dup_id (fp, distance: the nearest; ties: the page
                        * added first) */
    REDISIDX_EXACT,    /* the payload key is known: dup_id's (fp its fingerprint) */
    REDISIDX_KNOWN_ID, /* the id is indexed already (fp its stored fingerprint) */
    REDISIDX_UNKNOWN,  /* redisidx_lookup() only: neither id nor payload known */
};

/* redisidx_page.flags */
#define REDISIDX_NO_ADD 1u /* decide, add nothing (a dry run) */

#define REDISIDX_MAX_ID_BYTES 65536u   /* cap on an id */
#define REDISIDX_MAX_KEY_BYTES 64u     /* cap on a payload key */
#define REDISIDX_MAX_META_BYTES 16384u /* cap on the metadata stored with a payload key */

/* One page, borrowed for the call. */
struct redisidx_page {
    const char *id; /* id[0..id_len): the URL (or any string without NUL) */
    size_t id_len;
    uint64_t fp;     /* its simhash (docs/FINGERPRINT.md) */
    const void *key; /* payload key (a digest of the payload) or NULL: no exact lookup */
    size_t key_len;
    unsigned flags; /* REDISIDX_NO_ADD */
    /* stored with the payload key when the page is added (HSETNX, in its transaction) and
     * handed back with EXACT to the pages that copy it (a crawler's revisit reference:
     * the original's record id, date and URI), or NULL */
    const void *meta;
    size_t meta_len;
    /* site templates: when the page is added, its template blocks are counted for host
     * (redisidx_template_learn(), in the same transaction), or n_blocks 0 */
    const char *host;
    size_t host_len;
    uint64_t doc_hash;
    const uint64_t *blocks;
    size_t n_blocks;
};

/* The outcome. Zero-initialise once; reuse; release with redisidx_result_release(). */
struct redisidx_result {
    enum redisidx_verdict verdict;
    int added;         /* NEW: 1 when this call added the page */
    uint64_t fp;       /* NEAR, EXACT, KNOWN_ID: the original's (KNOWN_ID: the id's) */
    unsigned distance; /* NEAR */
    char *dup_id;      /* NEAR, EXACT: the original's id, NUL-terminated, owned by the
                        * result; NULL otherwise */
    size_t dup_id_len;
    size_t dup_cap;
    /* EXACT: the meta stored with the original's payload key; KNOWN_ID: the meta stored
     * when this id was added with this same payload key; meta_len 0 when none. Owned by
     * the result, NUL-terminated after meta_len bytes. */
    void *meta;
    size_t meta_len, meta_cap;
};
void redisidx_result_release(struct redisidx_result *r);

/*
 * The decision, atomic across every client of the index: the id known (KNOWN_ID), the
 * payload key known (EXACT), a page within k (NEAR), or NEW: added (its buckets, its
 * document, its id, its payload key, the counter) in one transaction. Two round trips for
 * a NEW page (read, then MULTI/EXEC), two for NEAR and EXACT (the original's id), one for
 * KNOWN_ID. REDISIDX_OK with r filled, or an error (nothing added; see errmsg).
 */
enum redisidx_code redisidx_check(struct redisidx *ix, const struct redisidx_page *p,
                                  struct redisidx_result *r) __attribute__((warn_unused_result));

/*
 * The same for n pages in one pipeline (a batch: checks/s over a network): decided in
 * order, as n calls of redisidx_check() would be (a page near an earlier NEW page of the
 * batch is NEAR to it), in about two round trips for the whole batch, atomic as a whole
 * (a conflict retries the batch). r[0..n) as redisidx_check() fills r.
 */
enum redisidx_code redisidx_check_many(struct redisidx *ix, const struct redisidx_page *p, size_t n,
                                       struct redisidx_result *r)
    __attribute__((warn_unused_result));

/* Without a fingerprint: KNOWN_ID (the id), EXACT (p->key), or UNKNOWN. Reads only. */
enum redisidx_code redisidx_lookup(struct redisidx *ix, const struct redisidx_page *p,
                                   struct redisidx_result *r) __attribute__((warn_unused_result));

/*
 * A payload without a fingerprint (a page with too little text, an image, a stylesheet)
 * of the page id, decided as redisidx_check() decides by id and payload key, atomically
 * (one script): the id indexed: KNOWN_ID (r->meta as redisidx_check() gives it); the key
 * indexed with a page, however that page was added (with metadata or without, by a check
 * or a batch): EXACT with r->dup_id and r->fp the page's and r->meta its metadata, if any;
 * the key claimed before: EXACT with r->meta the metadata stored then (no r->dup_id: the
 * metadata names the original), or KNOWN_ID with it when this id made that claim
 * (idempotent by id: a page claimed again after a crash gets its own decision back); else
 * NEW, added 1: meta (may be NULL when meta_len is 0) and the id stored with the key.
 * Nothing is indexed. One round trip (two the first time a Redis is asked: the script).
 */
enum redisidx_code redisidx_payload_claim(struct redisidx *ix, const char *id, size_t id_len,
                                          const void *key, size_t key_len, const void *meta,
                                          size_t meta_len, struct redisidx_result *r)
    __attribute__((warn_unused_result));

/*
 * Site templates shared by every client (docs/FINGERPRINT.md, "Template blocks"): the
 * counts of dedup_templates_add_doc() kept per host key in Redis (PREFIX:t: and others,
 * docs/REDIS-INDEX.md), so that every client leaves out the blocks one process would.
 * redisidx_template_mark(): is_template[0..n) for blocks[0..n) of a page of host (n_tokens
 * their token counts) by dedup_templates_mark_counts() over the counts read now (one
 * round trip), *marked (may be NULL) how many; on an error none is marked. A pipeline's
 * filter_template_mark_fn calls it. redisidx_template_learn(): counts one document
 * (doc_hash its whole token string's hash, 0: none), once: a document counted before for
 * the host is not counted again, so a call sent again after a lost reply does nothing
 * twice. A page added by redisidx_check() with n_blocks is counted in the check's own
 * transaction; this is for pages that are not indexed (too little text). The counts keep
 * the in-process table's caps (hosts, blocks a host, blocks of all hosts, documents
 * remembered: docs/REDIS-INDEX.md), so a site of many host names cannot grow them.
 */
enum redisidx_code redisidx_template_mark(struct redisidx *ix, const char *host, size_t host_len,
                                          const uint64_t *blocks, const uint32_t *n_tokens,
                                          size_t n, unsigned char *is_template, size_t *marked)
    __attribute__((warn_unused_result));
enum redisidx_code redisidx_template_learn(struct redisidx *ix, const char *host, size_t host_len,
                                           uint64_t doc_hash, const uint64_t *blocks, size_t n)
    __attribute__((warn_unused_result));
/* The same for a near-duplicate (filter/decide.h, FILTER_DECIDE_LEARN_NEAR): counted only
 * while the host has fewer than young documents counted (0: always), checked in the same
 * script as the count. */
enum redisidx_code redisidx_template_learn_young(struct redisidx *ix, const char *host,
                                                 size_t host_len, uint64_t doc_hash,
                                                 const uint64_t *blocks, size_t n, uint64_t young)
    __attribute__((warn_unused_result));

/* One document for redisidx_template_learn_many(), borrowed for the call. */
struct redisidx_tpl_doc {
    const char *host;
    size_t host_len;
    uint64_t doc_hash;
    const uint64_t *blocks;
    size_t n;
    uint64_t young; /* redisidx_template_learn_young()'s bound (0: none) */
};
/* redisidx_template_learn() of docs[0..n) in order, in one pipeline (one round trip; at
 * most 4096 documents a call): each document counted atomically, the batch not (a lost
 * connection retries the whole batch: documents with a doc_hash are not counted twice).
 * The caps (docs/REDIS-INDEX.md) hold after every document. */
enum redisidx_code redisidx_template_learn_many(struct redisidx *ix,
                                                const struct redisidx_tpl_doc *docs, size_t n)
    __attribute__((warn_unused_result));

/*
 * Problem 2: cb(userdata, id, fp, distance) for every indexed page within k (<= the
 * index's) of fp, nearest first (ties: added first), at most max (0: all); a non-zero
 * return from cb stops. *n (may be NULL) the number passed to cb.
 */
enum redisidx_code
redisidx_neighbors(struct redisidx *ix, uint64_t fp, unsigned k, size_t max,
                   int (*cb)(void *userdata, const char *id, uint64_t fp, unsigned distance),
                   void *userdata, size_t *n) __attribute__((warn_unused_result));

/* Forgets the page indexed under id (its buckets, document, id, payload key), atomically.
 * *deleted 1 when it was there, 0 when not. */
enum redisidx_code redisidx_delete(struct redisidx *ix, const char *id, size_t id_len, int *deleted)
    __attribute__((warn_unused_result));

struct redisidx_stats {
    uint64_t documents; /* pages in the index (all clients) */
    unsigned k, tables, bucket_bits, fingerprint_version;
    char design[96];      /* dedup_design_describe() of the index's design */
    uint64_t used_memory; /* INFO memory used_memory of the whole Redis, bytes */
    /* this struct redisidx's own counters since open */
    uint64_t checks, round_trips, conflicts, reconnects;
};
enum redisidx_code redisidx_stats(struct redisidx *ix, struct redisidx_stats *s)
    __attribute__((warn_unused_result));

/* For the tests: fn(userdata, "EXEC") once a transaction's EXEC is written to Redis and
 * before its reply is read ("claim": a payload claim's script, "sweep": a step of the old
 * keys' sweep); fn returning non-zero makes the connection lost there, the reply unread
 * (as when Redis or the network dies after running it). */
void redisidx_set_sent_hook(struct redisidx *ix, int (*fn)(void *userdata, const char *what),
                            void *userdata);

#endif /* FILTER_REDISIDX_H */
