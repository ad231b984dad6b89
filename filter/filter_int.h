#ifndef FILTER_FILTER_INT_H
#define FILTER_FILTER_INT_H
/*
 * Shared inside filter/ only: the journal's record codec (filter/journal.c), used by the
 * filter (filter/filter.c) to append one record per page reported new (and one per page
 * deleted) and to replay them at open. Return conventions: filter/decide.h's (the codec
 * returns enum dedup_code; the Redis pool, simcrawl.h's codes).
 */
#include <stddef.h>
#include <stdint.h>

#include "dedup/dedup.h"

/* The journal file: a 16-byte header, then records (filter/journal.c says how). */
#define FJ_MAGIC "SIMCJRNL"
#define FJ_VERSION 4u         /* 1: add records only; 2: no learn records (both read, upgraded) */
#define FJ_VERSION_MINHASH 5u /* a MinHash filter's journal (kind 2 adds) */
#define FJ_VERSION_MINHASH_OLD 3u /* the same without learn records (read, upgraded) */
#define FJ_MINHASH_TAG 0x4d48u    /* "MH": its header's last field */
#define FJ_HEADER_BYTES 16u
#define FJ_RECORD_HEAD 16u              /* u32 body length, u32 0, u64 XXH3 of the body */
#define FJ_BODY_MAX (64u * 1024 * 1024) /* cap on one record's body */
#define FJ_BLOCKS_MAX (1u << 22)        /* cap on template blocks in one record */

/* What one record holds: everything the filter's state needs to replay a page reported
 * new. Pointers are borrowed (encode) or point into the scanner's memory (decode: valid
 * during the callback only). */
enum fj_kind {
    FJ_ADD = 0,         /* a page reported new: every field below */
    FJ_DELETE = 1,      /* a page deleted: id only (the other fields zero) */
    FJ_ADD_MINHASH = 2, /* a page reported new by a MinHash filter: sig instead of fp */
    FJ_LEARN = 3,       /* a near-duplicate's template blocks counted (LEARN_NEAR): id,
                         * doc hash, host and blocks (fp and payload zero) */
};

struct fj_rec {
    enum fj_kind kind;
    uint64_t fp;                     /* the simhash */
    uint64_t payload_lo, payload_hi; /* XXH3-128 of the payload bytes */
    uint64_t doc_hash;               /* template doc hash (dedup_templates_add_doc), 0 = none */
    const char *id;                  /* id[0..id_len), no NUL inside */
    size_t id_len;
    const char *host; /* host key[0..host_len) of the template table */
    size_t host_len;
    const uint64_t *blocks; /* block hashes counted for the host; n_blocks 0: none */
    size_t n_blocks;
    /* FJ_ADD_MINHASH: the signature sig[0..sig_h) and the parameters it was made with */
    const uint32_t *sig;
    unsigned sig_h, sig_k;
    uint64_t sig_seed;
};

/* Writes the 16-byte journal header for k into out (a simhash filter's, version 4). */
void fj_header(uint8_t out[FJ_HEADER_BYTES], unsigned k);
/* The header of a MinHash filter's journal (version 5, FJ_MINHASH_TAG). */
void fj_header_minhash(uint8_t out[FJ_HEADER_BYTES]);
/* Checks a header: DEDUP_OK with *k (0..DEDUP_K_MAX) and *version (1, 2 or 4: version 1
 * journals hold add records only, version 2 no learn records, and both are read as they
 * are; 3 or 5: a MinHash filter's, *k 0: fj_version_minhash());
 * DEDUP_EFORMAT (not a journal), DEDUP_EVERSION (a version or k this code does not read).
 * version may be NULL. */
DEDUP_WARN_UNUSED enum dedup_code fj_header_check(const uint8_t *data, size_t len, unsigned *k,
                                                  unsigned *version);
/* 1 when a journal of version v (fj_header_check) is a MinHash filter's. */
int fj_version_minhash(unsigned v);
/* The offset and bytes of the header's version field (an upgrade rewrites it). */
#define FJ_VERSION_OFFSET 8u

/* Encodes r as one record into *buf (grown with realloc; *cap its size); *len the record's
 * bytes. DEDUP_ETOOLARGE (over FJ_BODY_MAX or FJ_BLOCKS_MAX), DEDUP_ENOMEM; *buf unchanged
 * then. */
DEDUP_WARN_UNUSED enum dedup_code fj_encode(const struct fj_rec *r, uint8_t **buf, size_t *cap,
                                            size_t *len);
/* Grows *buf so that fj_encode(r, ...) needs no allocation. DEDUP_ENOMEM, DEDUP_ETOOLARGE
 * (r is over the caps: fj_encode would fail whatever the memory). */
DEDUP_WARN_UNUSED enum dedup_code fj_reserve(const struct fj_rec *r, uint8_t **buf, size_t *cap);

/*
 * Walks the records of data[0..len) (after the header): fn(userdata, rec) for each whole
 * record with a good checksum, in order; a non-zero return from fn stops, passed back in
 * *stopped (0 when none stopped). *good: bytes of whole good records (from data). When the
 * records end early (a record cut short, a bad checksum or a malformed body: a torn tail)
 * *why says what (static string), else *why = NULL. DEDUP_OK, or DEDUP_ENOMEM.
 */
DEDUP_WARN_UNUSED enum dedup_code fj_scan(const uint8_t *data, size_t len,
                                          int (*fn)(void *userdata, const struct fj_rec *r),
                                          void *userdata, int *stopped, size_t *good,
                                          const char **why);

/*
 * The filter's connections to a Redis index (filter/filter_redis.c): simcrawl_filter_open
 * with an index_path redis://... or unix://... (filter/redisidx.h) keeps its index there.
 * A pool: each call takes a connection of its own (made when none is free, up to
 * FR_MAX_CONNS; then it waits), so that threads check in parallel.
 */
#define FR_MAX_CONNS 16
struct redisidx;
struct fr_pool;
/* 1 when path is a Redis URL (redis:// or unix://). */
int fr_is_url(const char *path);
/* Opens the first connection (and so checks or makes the index's meta record): 0 with *out,
 * or a SIMCRAWL_E... code with the message in err[0..errlen). k 0: the index's. */
int fr_open(struct fr_pool **out, const char *url, unsigned k, char *err, size_t errlen);
void fr_close(struct fr_pool *p); /* NULL-safe; no connection may be taken */
unsigned fr_k(const struct fr_pool *p);
/* A connection for one call (return it with fr_give), or NULL with a code and message. */
struct redisidx *fr_take(struct fr_pool *p, int *code, char *err, size_t errlen);
void fr_give(struct fr_pool *p, struct redisidx *ix);
/* A redisidx code as a SIMCRAWL_E... code. */
int fr_code(int redisidx_code);

#endif
