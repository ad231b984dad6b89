/*
 * The filter's journal codec (filter/filter_int.h): INDEX.journal is append-only; each
 * page that simcrawl_filter_check() reports new is one record, and each page
 * simcrawl_filter_delete() forgets another, written with write() before the call returns,
 * and replayed in order on open after the index file is loaded.
 *
 * Layout, little-endian:
 *     header  "SIMCJRNL" | u32 version (4) | u32 k
 *     record  u32 body length B | u32 kind | u64 XXH3_64bits(body) | body[B]
 *     add (kind 0)
 *             u64 fingerprint | u64 payload XXH3-128 low | u64 high | u64 doc hash |
 *             u32 id length | u32 host length | u32 blocks | u32 0 |
 *             id | host | u64 block hash[blocks]
 *     delete (kind 1)
 *             u32 id length | u32 0 | id
 *     learn (kind 3, versions 4 and 5): an add record's body with fingerprint and payload
 *             zero: a near-duplicate whose template blocks were counted (its host young)
 *     MinHash add (kind 2, MinHash journals only)
 *             u64 seed | u32 shingle words k | u32 signature values h |
 *             u64 payload XXH3-128 low | u64 high | u64 doc hash |
 *             u32 id length | u32 host length | u32 blocks | u32 0 |
 *             id | host | u32 signature[h] | u64 block hash[blocks]
 * A MinHash filter's journal (docs/MINHASH.md: a signature per page, not a simhash) has
 * version 3 and "MH" (0x4d48) where a simhash journal has k, so that each method, and
 * libsimcrawl 0.3, refuses the other's journal at open. Its add records carry the
 * signature's parameters: a replay into a filter of other parameters is refused.
 * Version 1 (libsimcrawl 0.2) had add records only, the kind field always 0; version 2
 * (and a MinHash journal's 3) no learn records: they are read as they are, and their
 * header is rewritten to version 4 (5) at open, so that a libsimcrawl that knows no learn
 * record refuses the journal rather than drop it and what follows as a torn tail.
 * A kill -9 during a write leaves at most one record cut short at the end; a power cut
 * without fsync may leave garbage there. Both end the scan: the records before it are
 * kept, the rest is reported (the filter drops it with a warning and truncates the file).
 */
#include "filter/filter_int.h"
#include "dedup/dedup.h"
#include "dedup/minhash.h"

#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

/* An add record's body: the method's head (simhash: the fingerprint; minhash: the
 * signature's seed, k and h), then the fields both share (payload hash, doc hash, the id,
 * host and block counts, a zero), then id, host, the signature (minhash) and the blocks. */
#define SH_HEAD 8u
#define MH_HEAD 16u
#define ADD_SHARED 40u
#define BODY_FIXED (SH_HEAD + ADD_SHARED)
#define MH_FIXED (MH_HEAD + ADD_SHARED)
#define DELETE_FIXED 8u

static void put32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

static uint64_t get64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}

void fj_header(uint8_t out[FJ_HEADER_BYTES], unsigned k)
{
    memcpy(out, FJ_MAGIC, 8);
    put32(out + 8, FJ_VERSION);
    put32(out + 12, k);
}

void fj_header_minhash(uint8_t out[FJ_HEADER_BYTES])
{
    memcpy(out, FJ_MAGIC, 8);
    put32(out + 8, FJ_VERSION_MINHASH);
    put32(out + 12, FJ_MINHASH_TAG);
}

int fj_version_minhash(unsigned v)
{
    return v == FJ_VERSION_MINHASH || v == FJ_VERSION_MINHASH_OLD;
}

enum dedup_code fj_header_check(const uint8_t *data, size_t len, unsigned *k, unsigned *version)
{
    if (len < FJ_HEADER_BYTES || memcmp(data, FJ_MAGIC, 8) != 0)
        return DEDUP_EFORMAT;
    uint32_t v = get32(data + FJ_VERSION_OFFSET);
    if (fj_version_minhash(v) && get32(data + 12) == FJ_MINHASH_TAG) {
        *k = 0;
        if (version)
            *version = v;
        return DEDUP_OK;
    }
    if (v < 1 || v > FJ_VERSION || fj_version_minhash(v) || get32(data + 12) > DEDUP_K_MAX)
        return DEDUP_EVERSION;
    *k = get32(data + 12);
    if (version)
        *version = v;
    return DEDUP_OK;
}

/* Room for need bytes in *buf. */
static int reserve(uint8_t **buf, size_t *cap, size_t need)
{
    if (need <= *cap)
        return 0;
    uint8_t *nb = realloc(*buf, need);
    if (!nb)
        return -1;
    *buf = nb;
    *cap = need;
    return 0;
}

static int encode_delete(const struct fj_rec *r, uint8_t **buf, size_t *cap, size_t *len)
{
    if (r->id_len > FJ_BODY_MAX - DELETE_FIXED)
        return -1;
    size_t body = DELETE_FIXED + r->id_len, need = FJ_RECORD_HEAD + body;
    if (reserve(buf, cap, need) != 0)
        return -1;
    uint8_t *p = *buf, *b = p + FJ_RECORD_HEAD;
    put32(b, (uint32_t)r->id_len);
    put32(b + 4, 0);
    memcpy(b + DELETE_FIXED, r->id, r->id_len);
    put32(p, (uint32_t)body);
    put32(p + 4, FJ_DELETE);
    put64(p + 8, XXH3_64bits(b, body));
    *len = need;
    return 0;
}

/* The body bytes of an add record of either method, or 0 when r is over the caps. */
static size_t add_body_bytes(const struct fj_rec *r)
{
    int mh = r->kind == FJ_ADD_MINHASH;
    if (r->n_blocks > FJ_BLOCKS_MAX || r->id_len > FJ_BODY_MAX || r->host_len > FJ_BODY_MAX ||
        (mh && (r->sig_h == 0 || r->sig_h > DEDUP_MINHASH_H_MAX || !r->sig)))
        return 0;
    size_t head = mh ? MH_HEAD : SH_HEAD, sig_bytes = mh ? 4 * (size_t)r->sig_h : 0;
    size_t body = head + ADD_SHARED + r->id_len + r->host_len + sig_bytes + 8 * r->n_blocks;
    return body > FJ_BODY_MAX ? 0 : body;
}

enum dedup_code fj_reserve(const struct fj_rec *r, uint8_t **buf, size_t *cap)
{
    if (r->kind == FJ_DELETE && r->id_len > FJ_BODY_MAX - DELETE_FIXED)
        return DEDUP_ETOOLARGE;
    size_t body = r->kind == FJ_DELETE ? DELETE_FIXED + r->id_len : add_body_bytes(r);
    if (!body)
        return DEDUP_ETOOLARGE;
    return reserve(buf, cap, FJ_RECORD_HEAD + body) != 0 ? DEDUP_ENOMEM : DEDUP_OK;
}

/* An add record of either method (r->kind FJ_ADD or FJ_ADD_MINHASH). */
static int encode_add(const struct fj_rec *r, uint8_t **buf, size_t *cap, size_t *len)
{
    int mh = r->kind == FJ_ADD_MINHASH;
    size_t head = mh ? MH_HEAD : SH_HEAD;
    size_t body = add_body_bytes(r);
    if (!body)
        return -1;
    size_t need = FJ_RECORD_HEAD + body;
    if (reserve(buf, cap, need) != 0)
        return -1;
    uint8_t *p = *buf, *b = p + FJ_RECORD_HEAD;
    if (mh) {
        put64(b, r->sig_seed);
        put32(b + 8, r->sig_k);
        put32(b + 12, r->sig_h);
    } else {
        put64(b, r->fp);
    }
    uint8_t *c = b + head;
    put64(c, r->payload_lo);
    put64(c + 8, r->payload_hi);
    put64(c + 16, r->doc_hash);
    put32(c + 24, (uint32_t)r->id_len);
    put32(c + 28, (uint32_t)r->host_len);
    put32(c + 32, (uint32_t)r->n_blocks);
    put32(c + 36, 0);
    uint8_t *q = c + ADD_SHARED;
    memcpy(q, r->id, r->id_len);
    q += r->id_len;
    if (r->host_len)
        memcpy(q, r->host, r->host_len);
    q += r->host_len;
    for (unsigned i = 0; mh && i < r->sig_h; i++, q += 4)
        put32(q, r->sig[i]);
    for (size_t i = 0; i < r->n_blocks; i++, q += 8)
        put64(q, r->blocks[i]);
    put32(p, (uint32_t)body);
    put32(p + 4, mh ? FJ_ADD_MINHASH : r->kind == FJ_LEARN ? FJ_LEARN : FJ_ADD);
    put64(p + 8, XXH3_64bits(b, body));
    *len = need;
    return 0;
}

enum dedup_code fj_encode(const struct fj_rec *r, uint8_t **buf, size_t *cap, size_t *len)
{
    enum dedup_code rc = fj_reserve(r, buf, cap); /* the caps, then the room */
    if (rc != DEDUP_OK)
        return rc;
    int e = r->kind == FJ_DELETE ? encode_delete(r, buf, cap, len) : encode_add(r, buf, cap, len);
    return e != 0 ? DEDUP_ENOMEM : DEDUP_OK; /* not reached: the room is reserved */
}

/* A delete record's body: 0 with r filled, or -1 (malformed). */
static int decode_delete(const uint8_t *b, uint32_t blen, struct fj_rec *r)
{
    memset(r, 0, sizeof *r);
    r->kind = FJ_DELETE;
    r->id_len = get32(b);
    if ((uint64_t)DELETE_FIXED + r->id_len != blen || r->id_len == 0 || get32(b + 4) != 0 ||
        memchr(b + DELETE_FIXED, 0, r->id_len))
        return -1;
    r->id = (const char *)b + DELETE_FIXED;
    return 0;
}

/* Grows *blocks to n entries. */
static int blocks_room(uint64_t **blocks, size_t *cap, size_t n)
{
    if (n <= *cap)
        return 0;
    uint64_t *nb = realloc(*blocks, n * sizeof *nb);
    if (!nb)
        return -1;
    *blocks = nb;
    *cap = n;
    return 0;
}

/* An add record's body of either method (kind): 0 with r filled (a minhash signature in
 * *sig, DEDUP_MINHASH_H_MAX values; the blocks in *blocks), 1 malformed, -1 out of
 * memory. */
static int scan_add(const uint8_t *b, uint32_t blen, uint32_t kind, struct fj_rec *r,
                    uint64_t **blocks, size_t *blocks_cap, uint32_t **sig)
{
    int mh = kind == FJ_ADD_MINHASH;
    uint32_t head = mh ? MH_HEAD : SH_HEAD, fixed = head + ADD_SHARED;
    memset(r, 0, sizeof *r);
    r->kind = (enum fj_kind)kind;
    if (mh) {
        r->sig_seed = get64(b);
        r->sig_k = get32(b + 8);
        r->sig_h = get32(b + 12);
    } else {
        r->fp = get64(b);
    }
    const uint8_t *c = b + head;
    r->payload_lo = get64(c);
    r->payload_hi = get64(c + 8);
    r->doc_hash = get64(c + 16);
    r->id_len = get32(c + 24);
    r->host_len = get32(c + 28);
    r->n_blocks = get32(c + 32);
    uint64_t sig_bytes = mh ? 4 * (uint64_t)r->sig_h : 0;
    if (r->n_blocks > FJ_BLOCKS_MAX ||
        (mh && (r->sig_h == 0 || r->sig_h > DEDUP_MINHASH_H_MAX || r->sig_k == 0 ||
                r->sig_k > DEDUP_MINHASH_K_MAX)) ||
        (uint64_t)fixed + r->id_len + r->host_len + sig_bytes + 8 * (uint64_t)r->n_blocks != blen ||
        r->id_len == 0 || memchr(b + fixed, 0, r->id_len) || get32(c + 36) != 0)
        return 1;
    r->id = (const char *)b + fixed;
    r->host = r->id + r->id_len;
    if (mh && !*sig && !(*sig = malloc(DEDUP_MINHASH_H_MAX * sizeof **sig)))
        return -1;
    if (blocks_room(blocks, blocks_cap, r->n_blocks) != 0)
        return -1;
    const uint8_t *q = b + fixed + r->id_len + r->host_len;
    for (unsigned i = 0; mh && i < r->sig_h; i++, q += 4)
        (*sig)[i] = get32(q);
    for (size_t i = 0; i < r->n_blocks; i++, q += 8)
        (*blocks)[i] = get64(q);
    r->sig = mh ? *sig : NULL;
    r->blocks = *blocks;
    return 0;
}

enum dedup_code fj_scan(const uint8_t *data, size_t len,
                        int (*fn)(void *userdata, const struct fj_rec *r), void *userdata,
                        int *stopped, size_t *good, const char **why)
{
    int rc = 0;
    *stopped = 0;
    size_t off = 0;
    uint64_t *blocks = NULL;
    size_t blocks_cap = 0;
    uint32_t *sig = NULL;
    *why = NULL;
    while (off < len) {
        if (len - off < FJ_RECORD_HEAD) {
            *why = "a record header cut short";
            break;
        }
        const uint8_t *h = data + off;
        uint32_t blen = get32(h), kind = get32(h + 4);
        uint32_t fixed = kind == FJ_ADD || kind == FJ_LEARN ? BODY_FIXED
                         : kind == FJ_DELETE                ? DELETE_FIXED
                                                            : MH_FIXED;
        if (kind > FJ_LEARN || blen < fixed || blen > FJ_BODY_MAX) {
            *why = "a record with a bad length";
            break;
        }
        if (len - off - FJ_RECORD_HEAD < blen) {
            *why = "a record cut short";
            break;
        }
        const uint8_t *b = h + FJ_RECORD_HEAD;
        if (XXH3_64bits(b, blen) != get64(h + 8)) {
            *why = "a record whose checksum does not match";
            break;
        }
        struct fj_rec r;
        rc = kind == FJ_DELETE ? decode_delete(b, blen, &r) != 0
                               : scan_add(b, blen, kind, &r, &blocks, &blocks_cap, &sig);
        if (rc > 0) {
            *why = "a malformed record";
            rc = 0;
            break;
        }
        if (rc < 0)
            goto done;
        *stopped = fn(userdata, &r);
        if (*stopped != 0)
            goto done;
        off += FJ_RECORD_HEAD + blen;
    }
done:
    *good = off;
    free(blocks);
    free(sig);
    return rc < 0 ? DEDUP_ENOMEM : DEDUP_OK;
}
