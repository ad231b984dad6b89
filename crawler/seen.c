/*
 * The seen set: every canonical URL the crawl has ever queued, as a 64-bit hash in an
 * open-addressing table (linear probing), so a million URLs cost 8 bytes each at full
 * load and between 10.7 and 21.3 bytes each in practice (the table doubles when it is
 * 3/4 full; crawl_seen_bytes() says exactly how much is in use).
 *
 * The hash is SipHash-2-4 (Aumasson and Bernstein, "SipHash: a fast short-input PRF",
 * INDOCRYPT 2012), with the reference implementation's test key 00 01 .. 0f; it is checked
 * against the paper's test vectors in tests/test_url.c. A 64-bit hash makes a false "seen"
 * (two URLs sharing a hash) a birthday event: with n URLs the chance of any collision is
 * about n^2 / 2^65, i.e. 2.7e-8 for a million URLs and 2.7e-4 for a hundred million; a
 * collision makes the crawler skip one URL, never crash. Hash value 0 marks an empty slot,
 * so a URL hashing to 0 is stored as 1 (one more collision pair, of probability 2^-64).
 *
 * With a state on disk the set is bounded (crawl.c, "the seen set with a state"): the
 * table is capped, and when full its hashes go into a Bloom filter of fixed size (Bloom,
 * "Space/time trade-offs in hash coding with allowable errors", CACM 1970) and it starts
 * empty again; a hash the filter may hold is looked up in the state's URL table, so the
 * filter saves lookups and never decides (Heritrix's BloomUriUniqFilter decides on the
 * filter alone and skips a URL on a false positive; its BdbUriUniqFilter asks the
 * database for every URL). The k bit positions come from the one 64-bit hash by double
 * hashing (Kirsch and Mitzenmacher, "Less hashing, same performance", ESA 2006).
 */
#include "crawler/crawl.h"

#include <stdlib.h>
#include <string.h>

#define ROTL(x, b) (uint64_t)(((x) << (b)) | ((x) >> (64 - (b))))
#define SIPROUND                                                                                   \
    do {                                                                                           \
        v0 += v1;                                                                                  \
        v1 = ROTL(v1, 13);                                                                         \
        v1 ^= v0;                                                                                  \
        v0 = ROTL(v0, 32);                                                                         \
        v2 += v3;                                                                                  \
        v3 = ROTL(v3, 16);                                                                         \
        v3 ^= v2;                                                                                  \
        v0 += v3;                                                                                  \
        v3 = ROTL(v3, 21);                                                                         \
        v3 ^= v0;                                                                                  \
        v2 += v1;                                                                                  \
        v1 = ROTL(v1, 17);                                                                         \
        v1 ^= v2;                                                                                  \
        v2 = ROTL(v2, 32);                                                                         \
    } while (0)

static uint64_t load_le64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = (v << 8) | p[i];
    return v;
}

uint64_t crawl_siphash24(const uint8_t key[16], const void *data, size_t len)
{
    const uint8_t *in = data;
    uint64_t k0 = load_le64(key), k1 = load_le64(key + 8);
    uint64_t v0 = 0x736f6d6570736575ULL ^ k0;
    uint64_t v1 = 0x646f72616e646f6dULL ^ k1;
    uint64_t v2 = 0x6c7967656e657261ULL ^ k0;
    uint64_t v3 = 0x7465646279746573ULL ^ k1;
    size_t full = len - (len % 8);
    for (size_t i = 0; i < full; i += 8) {
        uint64_t m = load_le64(in + i);
        v3 ^= m;
        SIPROUND;
        SIPROUND;
        v0 ^= m;
    }
    uint64_t b = (uint64_t)len << 56;
    for (size_t i = 0; i < len % 8; i++)
        b |= (uint64_t)in[full + i] << (8 * i);
    v3 ^= b;
    SIPROUND;
    SIPROUND;
    v0 ^= b;
    v2 ^= 0xff;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    SIPROUND;
    return v0 ^ v1 ^ v2 ^ v3;
}

static const uint8_t URL_KEY[16] = {0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15};

uint64_t crawl_hash64(const void *data, size_t len)
{
    return crawl_siphash24(URL_KEY, data, len);
}

struct crawl_seen {
    uint64_t *slots; /* 0 = empty */
    size_t mask;     /* capacity - 1 (capacity a power of two) */
    size_t count;
    size_t max_entries;
};

#define SEEN_MIN_CAPACITY 1024u

enum crawl_code crawl_seen_new(size_t max_entries, struct crawl_seen **out)
{
    *out = NULL;
    struct crawl_seen *s = calloc(1, sizeof *s);
    if (!s)
        return CRAWL_ENOMEM;
    /* a small cap gets a small table: the one that holds max_entries at 3/4 load */
    size_t cap = 16;
    while (cap < SEEN_MIN_CAPACITY && max_entries && cap / 4 * 3 < max_entries)
        cap *= 2;
    if (!max_entries)
        cap = SEEN_MIN_CAPACITY;
    s->slots = calloc(cap, sizeof *s->slots);
    if (!s->slots) {
        free(s);
        return CRAWL_ENOMEM;
    }
    s->mask = cap - 1;
    s->max_entries = max_entries ? max_entries : CRAWL_SEEN_DEFAULT_MAX;
    *out = s;
    return CRAWL_OK;
}

void crawl_seen_free(struct crawl_seen *s)
{
    if (!s)
        return;
    free(s->slots);
    free(s);
}

/* Spreads the hash over the table index: the low bits of SipHash are already uniform,
 * so the index is just h & mask. */
static size_t slot_of(const struct crawl_seen *s, uint64_t h)
{
    return (size_t)h & s->mask;
}

static enum crawl_code grow(struct crawl_seen *s)
{
    size_t cap = (s->mask + 1) * 2;
    uint64_t *slots = calloc(cap, sizeof *slots);
    if (!slots)
        return CRAWL_ENOMEM;
    uint64_t *old = s->slots;
    size_t old_cap = s->mask + 1;
    s->slots = slots;
    s->mask = cap - 1;
    for (size_t i = 0; i < old_cap; i++) {
        if (!old[i])
            continue;
        size_t j = slot_of(s, old[i]);
        while (s->slots[j])
            j = (j + 1) & s->mask;
        s->slots[j] = old[i];
    }
    free(old);
    return CRAWL_OK;
}

enum crawl_code crawl_seen_add(struct crawl_seen *s, uint64_t h, int *added)
{
    *added = 0;
    if (h == 0)
        h = 1;
    size_t j = slot_of(s, h);
    while (s->slots[j]) {
        if (s->slots[j] == h)
            return CRAWL_OK;
        j = (j + 1) & s->mask;
    }
    if (s->count >= s->max_entries)
        return CRAWL_ETOOLARGE;
    if ((s->count + 1) * 4 > (s->mask + 1) * 3) {
        enum crawl_code rc = grow(s);
        if (rc != CRAWL_OK)
            return rc;
        j = slot_of(s, h);
        while (s->slots[j])
            j = (j + 1) & s->mask;
    }
    s->slots[j] = h;
    s->count++;
    *added = 1;
    return CRAWL_OK;
}

int crawl_seen_contains(const struct crawl_seen *s, uint64_t h)
{
    if (h == 0)
        h = 1;
    size_t j = slot_of(s, h);
    while (s->slots[j]) {
        if (s->slots[j] == h)
            return 1;
        j = (j + 1) & s->mask;
    }
    return 0;
}

size_t crawl_seen_count(const struct crawl_seen *s)
{
    return s->count;
}

size_t crawl_seen_bytes(const struct crawl_seen *s)
{
    return sizeof *s + (s->mask + 1) * sizeof *s->slots;
}

void crawl_seen_clear(struct crawl_seen *s)
{
    memset(s->slots, 0, (s->mask + 1) * sizeof *s->slots);
    s->count = 0;
}

/* ---- the Bloom filter ---- */

#define BLOOM_K 5 /* bits per hash: near the best for 8 to 16 bits per entry */

struct crawl_bloom {
    uint64_t *words;
    uint64_t mask; /* bits - 1 (bits a power of two) */
    size_t n;
};

enum crawl_code crawl_bloom_new(size_t bytes, struct crawl_bloom **out)
{
    *out = NULL;
    size_t want = 4096;
    while (want * 2 <= bytes && want < ((size_t)1 << 40))
        want *= 2;
    struct crawl_bloom *b = calloc(1, sizeof *b);
    if (!b)
        return CRAWL_ENOMEM;
    b->words = calloc(want / 8, sizeof *b->words);
    if (!b->words) {
        free(b);
        return CRAWL_ENOMEM;
    }
    b->mask = (uint64_t)want * 8 - 1;
    *out = b;
    return CRAWL_OK;
}

void crawl_bloom_free(struct crawl_bloom *b)
{
    if (!b)
        return;
    free(b->words);
    free(b);
}

static uint64_t bloom_step(uint64_t h)
{
    return ROTL(h, 32) * 0x9e3779b97f4a7c15ULL | 1; /* odd: the k positions differ */
}

void crawl_bloom_add(struct crawl_bloom *b, uint64_t h)
{
    uint64_t step = bloom_step(h);
    for (int i = 0; i < BLOOM_K; i++, h += step)
        b->words[(h & b->mask) >> 6] |= (uint64_t)1 << (h & 63);
    b->n++;
}

int crawl_bloom_maybe(const struct crawl_bloom *b, uint64_t h)
{
    uint64_t step = bloom_step(h);
    for (int i = 0; i < BLOOM_K; i++, h += step)
        if (!(b->words[(h & b->mask) >> 6] & ((uint64_t)1 << (h & 63))))
            return 0;
    return 1;
}

size_t crawl_bloom_count(const struct crawl_bloom *b)
{
    return b->n;
}

size_t crawl_bloom_bytes(const struct crawl_bloom *b)
{
    return sizeof *b + (size_t)((b->mask + 1) / 8);
}

void crawl_seen_spill(struct crawl_seen *s, struct crawl_bloom *b)
{
    for (size_t i = 0; i <= s->mask; i++)
        if (s->slots[i])
            crawl_bloom_add(b, s->slots[i]);
    crawl_seen_clear(s);
}
