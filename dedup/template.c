/*
 * Site templates (docs/FINGERPRINT.md, "Template blocks", API in dedup/dedup.h): per host key, a
 * bounded count of the distinct documents that contain each text block (the token string
 * of one paragraph of the main text, keyed by XXH3-64 with DEDUP_TEMPLATE_SEED), and the
 * number of documents counted. A block on >= DEDUP_TEMPLATE_MIN_DOCS documents and on
 * >= DEDUP_TEMPLATE_MIN_SHARE percent of its host's is a template block (Bar-Yossef and
 * Rajagopalan, WWW 2002: "pagelets" shared by many pages of a site; Yi, Liu and Li, KDD
 * 2003, site style trees). Also the serialised form saved in the index file (docs/
 * INDEX-FORMAT.md, the template section), written canonically (hosts by key, blocks by
 * hash) so that equal tables give equal bytes, and parsed trusting nothing.
 *
 * HOW IT WORKS (bounds and determinism). Each host has an open-addressing table of
 * (hash, count) (hash 0 = empty slot, linear probing, at most half full) and the hosts are
 * found through a second such table of host indexes. Every decision that drops data
 * depends only on the table's contents, never on addresses, time or hash-table layout:
 *  - a host at DEDUP_TEMPLATE_HOST_MAX_ENTRIES blocks drops every block of count <= c,
 *    c = 1, 2, ..., until at most half the cap is left (lossy counting, Manku and Motwani
 *    2002: a block that stays is on at least c documents more than the ones it lost);
 *  - at DEDUP_TEMPLATE_MAX_ENTRIES blocks in all, every host does the same with one c
 *    until at most half the total cap is left;
 *  - a new host past DEDUP_TEMPLATE_MAX_HOSTS replaces the host with the fewest
 *    documents, ties broken by the smaller key (bytes, then length).
 * Each sweep costs O(entries) and frees half the cap, so counting stays amortised O(1) per
 * block; it drops in place (host_drop), allocating nothing. Every allocation a count needs
 * is made first (dedup_templates_reserve: the seen set, a spare host, the table sized for
 * the document, the eviction histogram) and only capacity grows there, so out of memory
 * leaves the table as it was and a caller can reserve before an index add it pairs with. A block
 * whose count was dropped starts again at 1: a real template (on nearly every page) climbs back
 * past any threshold within a few pages.
 */
#include "dedup/dedup_int.h"

#include <assert.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

struct tpl_entry {
    uint64_t hash; /* 0: empty */
    uint32_t count;
};

struct tpl_host {
    char key[DEDUP_TEMPLATE_MAX_KEY + 1];
    size_t key_len;
    uint64_t docs;
    struct tpl_entry *slot;
    size_t mask; /* slots - 1; 0 with slot NULL before the first block */
    size_t n;
};

struct dedup_templates {
    struct tpl_host **hosts; /* nhosts, in order of arrival (order does not leak out) */
    size_t nhosts, cap_hosts;
    uint32_t *host_slot; /* host index + 1, 0 = empty; host_mask + 1 slots */
    size_t host_mask;
    size_t total;   /* block entries of all hosts */
    uint64_t *seen; /* (host, document) hashes counted; 0 = empty */
    size_t seen_mask, nseen;
    /* made by dedup_templates_reserve() so that the count after it allocates nothing: */
    struct tpl_host *spare; /* the next new host, its table sized; NULL when none made */
    size_t *hist;           /* TPL_HIST counts, for evictions; NULL until one may come */
};

uint64_t dedup_template_block_hash(const char *tokens, size_t len)
{
    uint64_t h = XXH3_64bits_withSeed(tokens, len, DEDUP_TEMPLATE_SEED);
    return h ? h : 1;
}

static uint64_t key_hash(const char *key, size_t len)
{
    return XXH3_64bits_withSeed(key, len, DEDUP_TEMPLATE_SEED);
}

/* Spreads a 64-bit hash over the table (the block hashes are XXH3 already; the mix keeps
 * a forged file's chosen hashes from all landing in one run). */
static size_t slot_of(uint64_t h, size_t mask)
{
    h ^= h >> 29;
    h *= 0xbf58476d1ce4e5b9ull;
    h ^= h >> 32;
    return (size_t)h & mask;
}

struct dedup_templates *dedup_templates_new(void)
{
    return calloc(1, sizeof(struct dedup_templates));
}

static void host_free(struct tpl_host *h)
{
    if (h) {
        free(h->slot);
        free(h);
    }
}

void dedup_templates_free(struct dedup_templates *t)
{
    if (!t)
        return;
    for (size_t i = 0; i < t->nhosts; i++)
        host_free(t->hosts[i]);
    free(t->hosts);
    free(t->host_slot);
    free(t->seen);
    host_free(t->spare);
    free(t->hist);
    free(t);
}

/* ---- hosts ---- */

static int key_cmp(const char *a, size_t al, const char *b, size_t bl)
{
    int c = memcmp(a, b, al < bl ? al : bl);
    if (c)
        return c;
    return al < bl ? -1 : al > bl;
}

static long host_find(const struct dedup_templates *t, const char *key, size_t len)
{
    if (!t || !t->host_slot)
        return -1;
    for (size_t j = slot_of(key_hash(key, len), t->host_mask);; j = (j + 1) & t->host_mask) {
        uint32_t s = t->host_slot[j];
        if (!s)
            return -1;
        const struct tpl_host *h = t->hosts[s - 1];
        if (h->key_len == len && memcmp(h->key, key, len) == 0)
            return (long)(s - 1);
    }
}

/* Rebuilds the host index table with room for `want` hosts. 0, or -1 (t unchanged). */
static int host_index_build(struct dedup_templates *t, size_t want)
{
    size_t size = 64;
    while (size < want * 2)
        size *= 2;
    uint32_t *ns = calloc(size, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < t->nhosts; i++) {
        const struct tpl_host *h = t->hosts[i];
        size_t j = slot_of(key_hash(h->key, h->key_len), size - 1);
        while (ns[j])
            j = (j + 1) & (size - 1);
        ns[j] = (uint32_t)(i + 1);
    }
    free(t->host_slot);
    t->host_slot = ns;
    t->host_mask = size - 1;
    return 0;
}

/* Removes host i (the last one takes its place); the host index is rebuilt in place, in
 * the slots it has (no allocation). */
static void host_remove(struct dedup_templates *t, size_t i)
{
    t->total -= t->hosts[i]->n;
    host_free(t->hosts[i]);
    t->hosts[i] = t->hosts[--t->nhosts];
    t->hosts[t->nhosts] = NULL;
    memset(t->host_slot, 0, (t->host_mask + 1) * sizeof *t->host_slot);
    for (size_t k = 0; k < t->nhosts; k++) {
        const struct tpl_host *h = t->hosts[k];
        size_t j = slot_of(key_hash(h->key, h->key_len), t->host_mask);
        while (t->host_slot[j])
            j = (j + 1) & t->host_mask;
        t->host_slot[j] = (uint32_t)(k + 1);
    }
}

/* Room for one more host: the hosts array and the host index (0, or -1 with t unchanged).
 * After it host_get() of a new key allocates nothing when t->spare is made. */
static int host_room(struct dedup_templates *t)
{
    if (t->nhosts == t->cap_hosts) {
        size_t cap = t->cap_hosts ? t->cap_hosts * 2 : 16;
        struct tpl_host **nh = realloc(t->hosts, cap * sizeof *nh);
        if (!nh)
            return -1;
        t->hosts = nh;
        t->cap_hosts = cap;
    }
    if (!t->host_slot || (t->nhosts + 1) * 2 > t->host_mask + 1)
        return host_index_build(t, t->nhosts + 1);
    return 0;
}

/* The host for key, made when missing (from t->spare when reserved). NULL when out of
 * memory (t unchanged). */
static struct tpl_host *host_get(struct dedup_templates *t, const char *key, size_t len)
{
    long i = host_find(t, key, len);
    if (i >= 0)
        return t->hosts[i];
    /* every allocation first, so that a failure changes nothing */
    if (host_room(t) != 0)
        return NULL;
    struct tpl_host *h = t->spare;
    if (h)
        t->spare = NULL;
    else if (!(h = calloc(1, sizeof *h)))
        return NULL;
    if (t->nhosts >= DEDUP_TEMPLATE_MAX_HOSTS) {
        size_t victim = 0;
        for (size_t k = 1; k < t->nhosts; k++) {
            const struct tpl_host *a = t->hosts[k], *b = t->hosts[victim];
            if (a->docs < b->docs ||
                (a->docs == b->docs && key_cmp(a->key, a->key_len, b->key, b->key_len) < 0))
                victim = k;
        }
        host_remove(t, victim);
    }
    memcpy(h->key, key, len);
    h->key_len = len;
    t->hosts[t->nhosts++] = h;
    size_t j = slot_of(key_hash(key, len), t->host_mask);
    while (t->host_slot[j])
        j = (j + 1) & t->host_mask;
    t->host_slot[j] = (uint32_t)t->nhosts;
    return h;
}

/* ---- blocks of one host ---- */

static struct tpl_entry *entry_find(const struct tpl_host *h, uint64_t hash)
{
    if (!h->slot)
        return NULL;
    for (size_t j = slot_of(hash, h->mask);; j = (j + 1) & h->mask) {
        if (h->slot[j].hash == hash)
            return &h->slot[j];
        if (!h->slot[j].hash)
            return NULL;
    }
}

/* Re-inserts the entries of h into a table of `size` slots. 0, or -1 (h unchanged). */
static int host_rehash(struct tpl_host *h, size_t size)
{
    struct tpl_entry *ns = calloc(size, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; h->slot && i <= h->mask; i++) {
        const struct tpl_entry *e = &h->slot[i];
        if (!e->hash)
            continue;
        size_t j = slot_of(e->hash, size - 1);
        while (ns[j].hash)
            j = (j + 1) & (size - 1);
        ns[j] = *e;
    }
    free(h->slot);
    h->slot = ns;
    h->mask = size - 1;
    return 0;
}

/*
 * Drops h's entries of count <= drop in place (no allocation); returns how many. The walk
 * starts after a slot that was empty before (the table is at most half full), so no probe
 * run crosses its start: each entry left is taken out and put back at the first free slot
 * from its home, which is never past where it was, and the runs stay whole.
 */
static size_t host_drop(struct tpl_host *h, uint32_t drop)
{
    if (!h->slot)
        return 0;
    size_t start = 0, dropped = 0;
    while (h->slot[start].hash)
        start++;
    for (size_t i = 1; i <= h->mask; i++) {
        size_t j = (start + i) & h->mask;
        struct tpl_entry e = h->slot[j];
        if (!e.hash)
            continue;
        h->slot[j] = (struct tpl_entry){0, 0};
        if (e.count <= drop) {
            dropped++;
            continue;
        }
        size_t k = slot_of(e.hash, h->mask);
        while (h->slot[k].hash)
            k = (k + 1) & h->mask;
        h->slot[k] = e;
    }
    h->n -= dropped;
    return dropped;
}

#define TPL_HIST 4096u /* eviction thresholds are chosen among counts 1..4095 */

/* Adds h's counts to hist[TPL_HIST] (counts >= TPL_HIST share the last bucket). */
static void host_hist(const struct tpl_host *h, size_t *hist)
{
    for (size_t i = 0; h->slot && i <= h->mask; i++)
        if (h->slot[i].hash)
            hist[h->slot[i].count < TPL_HIST ? h->slot[i].count : TPL_HIST - 1]++;
}

/* The smallest c such that dropping every count <= c leaves at most keep of n entries
 * (UINT32_MAX, dropping all, when even c = TPL_HIST - 2 leaves too many). */
static uint32_t evict_threshold(const size_t *hist, size_t n, size_t keep)
{
    size_t dropped = 0;
    for (uint32_t c = 1; c < TPL_HIST - 1; c++) {
        dropped += hist[c];
        if (n - dropped <= keep)
            return c;
    }
    return UINT32_MAX;
}

/* Drops h's blocks of count <= c for the smallest c that leaves at most `keep`; in place,
 * with t->hist (made by dedup_templates_reserve()). */
static void host_evict(struct dedup_templates *t, struct tpl_host *h, size_t keep)
{
    memset(t->hist, 0, TPL_HIST * sizeof *t->hist);
    host_hist(h, t->hist);
    t->total -= host_drop(h, evict_threshold(t->hist, h->n, keep));
}

/* The same over all hosts with one c, until at most `keep` entries are left in all. */
static void all_evict(struct dedup_templates *t, size_t keep)
{
    memset(t->hist, 0, TPL_HIST * sizeof *t->hist);
    for (size_t i = 0; i < t->nhosts; i++)
        host_hist(t->hosts[i], t->hist);
    uint32_t c = evict_threshold(t->hist, t->total, keep);
    for (size_t i = 0; i < t->nhosts; i++)
        t->total -= host_drop(t->hosts[i], c);
}

/* ---- the seen documents ---- */

/* Room for one more (host, document) hash. 0, or -1 when out of memory (t unchanged). */
static int seen_room(struct dedup_templates *t)
{
    if (t->nseen >= DEDUP_TEMPLATE_MAX_SEEN)
        return 0; /* the next insert starts again empty */
    if (t->seen && (t->nseen + 1) * 2 <= t->seen_mask + 1)
        return 0;
    size_t size = t->seen ? (t->seen_mask + 1) * 2 : 1024;
    uint64_t *ns = calloc(size, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; t->seen && i <= t->seen_mask; i++) {
        if (!t->seen[i])
            continue;
        size_t j = slot_of(t->seen[i], size - 1);
        while (ns[j])
            j = (j + 1) & (size - 1);
        ns[j] = t->seen[i];
    }
    free(t->seen);
    t->seen = ns;
    t->seen_mask = size - 1;
    return 0;
}

/* 1 if x was new (now remembered), 0 if present. After seen_room(): no allocation. */
static int seen_insert(struct dedup_templates *t, uint64_t x)
{
    if (!x)
        x = 1;
    if (t->nseen >= DEDUP_TEMPLATE_MAX_SEEN) {
        memset(t->seen, 0, (t->seen_mask + 1) * sizeof *t->seen); /* start again */
        t->nseen = 0;
    }
    size_t j = slot_of(x, t->seen_mask);
    while (t->seen[j]) {
        if (t->seen[j] == x)
            return 0;
        j = (j + 1) & t->seen_mask;
    }
    t->seen[j] = x;
    t->nseen++;
    return 1;
}

/* 1 if x is remembered. */
static int seen_has(const struct dedup_templates *t, uint64_t x)
{
    if (!x)
        x = 1;
    if (!t->seen || t->nseen >= DEDUP_TEMPLATE_MAX_SEEN)
        return 0; /* none, or the next insert starts again empty */
    for (size_t j = slot_of(x, t->seen_mask); t->seen[j]; j = (j + 1) & t->seen_mask)
        if (t->seen[j] == x)
            return 1;
    return 0;
}

/* The entry by which a host's table remembers a near-duplicate it counted (whole-text hash
 * doc): a key no token string has (another seed), of count 1, saved with the table, so
 * that the same near-duplicate fed again after a restart (a WARC deduplicated again
 * against a saved index) does not count again. Never a template: no page has the block. */
static uint64_t near_key(uint64_t doc)
{
    uint64_t h = XXH3_64bits_withSeed(&doc, sizeof doc, DEDUP_TEMPLATE_SEED ^ 0x6e656172ull);
    return h ? h : 1;
}

static int near_counted(const struct dedup_templates *t, const char *host, size_t host_len,
                        uint64_t doc)
{
    long i = host_find(t, host, host_len);
    return doc && i >= 0 && entry_find(t->hosts[i], near_key(doc)) != NULL;
}

int dedup_templates_would_count(const struct dedup_templates *t, const char *host, size_t host_len,
                                uint64_t doc)
{
    if (!t || !doc || host_len > DEDUP_TEMPLATE_MAX_KEY)
        return t != NULL && host_len <= DEDUP_TEMPLATE_MAX_KEY;
    return !seen_has(t, XXH3_64bits_withSeed(&doc, sizeof doc, key_hash(host, host_len))) &&
           !near_counted(t, host, host_len, doc);
}

/* ---- counting ---- */

/* The blocks of one document that are counted: at most half a host's cap. */
static size_t doc_room(size_t n)
{
    return n < DEDUP_TEMPLATE_HOST_MAX_ENTRIES / 2 ? n : DEDUP_TEMPLATE_HOST_MAX_ENTRIES / 2;
}

/* The slots a table needs for `need` entries, at least `size` (a power of two). */
static size_t table_size(size_t need, size_t size)
{
    while (need * 2 > size)
        size *= 2;
    return size;
}

enum dedup_code dedup_templates_reserve(struct dedup_templates *t, const char *host,
                                        size_t host_len, size_t n)
{
    if (!t || host_len > DEDUP_TEMPLATE_MAX_KEY || (host_len && !host))
        return DEDUP_EINVAL;
    size_t room = doc_room(n);
    if (seen_room(t) != 0)
        return DEDUP_ENOMEM;
    long i = host_find(t, host, host_len);
    struct tpl_host *h;
    if (i >= 0) {
        h = t->hosts[i];
    } else {
        if (host_room(t) != 0)
            return DEDUP_ENOMEM;
        if (!t->spare && !(t->spare = calloc(1, sizeof *t->spare)))
            return DEDUP_ENOMEM;
        h = t->spare;
    }
    /* an eviction (at a cap) takes the histogram; it only ever shrinks the tables */
    if ((h->n + room > DEDUP_TEMPLATE_HOST_MAX_ENTRIES ||
         t->total + room > DEDUP_TEMPLATE_MAX_ENTRIES) &&
        !t->hist && !(t->hist = malloc(TPL_HIST * sizeof *t->hist)))
        return DEDUP_ENOMEM;
    /* the entries after the count: at most h->n + room, and at most the host's cap (past
     * it the host is evicted down to half the cap first) */
    size_t need = h->n + room < DEDUP_TEMPLATE_HOST_MAX_ENTRIES ? h->n + room
                                                                : DEDUP_TEMPLATE_HOST_MAX_ENTRIES;
    size_t size = table_size(need, h->slot ? h->mask + 1 : 16);
    if ((!h->slot || size != h->mask + 1) && host_rehash(h, size) != 0)
        return DEDUP_ENOMEM;
    return DEDUP_OK;
}

enum dedup_code dedup_templates_add_doc(struct dedup_templates *t, const char *host,
                                        size_t host_len, uint64_t doc, const uint64_t *blocks,
                                        size_t n, int *counted)
{
    if (counted)
        *counted = 0;
    if (n && !blocks)
        return DEDUP_EINVAL;
    /* every allocation first: what follows cannot fail, so a failure changes nothing */
    enum dedup_code rc = dedup_templates_reserve(t, host, host_len, n);
    if (rc != DEDUP_OK)
        return rc;
    if (doc && !seen_insert(t, XXH3_64bits_withSeed(&doc, sizeof doc, key_hash(host, host_len))))
        return DEDUP_OK; /* an exact copy of a document counted before */
    struct tpl_host *h = host_get(t, host, host_len);
    assert(h); /* reserved: host_room() and t->spare */
    size_t room = doc_room(n);
    if (h->n + room > DEDUP_TEMPLATE_HOST_MAX_ENTRIES)
        host_evict(t, h, DEDUP_TEMPLATE_HOST_MAX_ENTRIES / 2);
    if (t->total + room > DEDUP_TEMPLATE_MAX_ENTRIES)
        all_evict(t, DEDUP_TEMPLATE_MAX_ENTRIES / 2);
    assert(h->slot && (h->n + room) * 2 <= h->mask + 1); /* reserved */
    /* A block is raised once per document however often it occurs in it: the first
     * occurrence raises it and sets the count's high bit, which the second loop clears.
     * (A document counts at most its first DEDUP_TEMPLATE_HOST_MAX_ENTRIES / 2 blocks.) */
    for (size_t i = 0; i < n && i < room; i++) {
        uint64_t b = blocks[i] ? blocks[i] : 1;
        size_t j = slot_of(b, h->mask);
        while (h->slot[j].hash && h->slot[j].hash != b)
            j = (j + 1) & h->mask;
        if (!h->slot[j].hash) {
            h->slot[j].hash = b;
            h->slot[j].count = 0;
            h->n++;
            t->total++;
        }
        if (!(h->slot[j].count & 0x80000000u)) {
            uint32_t c = h->slot[j].count;
            h->slot[j].count = (c < 0x7fffffffu ? c + 1 : c) | 0x80000000u;
        }
    }
    for (size_t i = 0; i < n && i < room; i++) {
        struct tpl_entry *e = entry_find(h, blocks[i] ? blocks[i] : 1);
        e->count &= 0x7fffffffu;
    }
    h->docs++;
    if (counted)
        *counted = 1;
    return DEDUP_OK;
}

enum dedup_code dedup_templates_add_near(struct dedup_templates *t, const char *host,
                                         size_t host_len, uint64_t doc, const uint64_t *blocks,
                                         size_t n, int *counted)
{
    if (counted)
        *counted = 0;
    if (n && !blocks)
        return DEDUP_EINVAL;
    enum dedup_code rc = dedup_templates_reserve(t, host, host_len, n + 1);
    if (rc != DEDUP_OK)
        return rc;
    if (near_counted(t, host, host_len, doc))
        return DEDUP_OK; /* counted before, in this run or a saved one */
    int c = 0;
    rc = dedup_templates_add_doc(t, host, host_len, doc, blocks, n, &c);
    if (rc != DEDUP_OK || !c)
        return rc;
    if (counted)
        *counted = 1;
    struct tpl_host *h = t->hosts[host_find(t, host, host_len)];
    uint64_t key = near_key(doc);
    /* room was reserved for n + 1; at a cap the marker is left out (it may count again) */
    if (!doc || h->n >= DEDUP_TEMPLATE_HOST_MAX_ENTRIES || t->total >= DEDUP_TEMPLATE_MAX_ENTRIES ||
        (h->n + 1) * 2 > h->mask + 1 || entry_find(h, key))
        return DEDUP_OK;
    size_t j = slot_of(key, h->mask);
    while (h->slot[j].hash)
        j = (j + 1) & h->mask;
    h->slot[j].hash = key;
    h->slot[j].count = 1;
    h->n++;
    t->total++;
    return DEDUP_OK;
}

static int is_candidate(uint64_t docs, uint32_t count)
{
    return count >= DEDUP_TEMPLATE_MIN_DOCS &&
           (uint64_t)count * 100 >= docs * (uint64_t)DEDUP_TEMPLATE_MIN_SHARE;
}

static int is_template(const struct tpl_host *h, uint32_t count)
{
    return is_candidate(h->docs, count);
}

/* Of the candidates is_tpl[0..n), the runs that hold DEDUP_TEMPLATE_MIN_TOKENS tokens stay
 * marked, the others are cleared. Returns the blocks left marked. */
static size_t mark_runs(const uint32_t *n_tokens, size_t n, unsigned char *is_tpl)
{
    size_t marked = 0;
    for (size_t k = 0; k < n;) {
        if (!is_tpl[k]) {
            k++;
            continue;
        }
        size_t end = k;
        uint64_t tokens = 0;
        while (end < n && is_tpl[end])
            tokens += n_tokens[end++];
        int drop = tokens >= DEDUP_TEMPLATE_MIN_TOKENS;
        if (drop)
            marked += end - k;
        for (; k < end; k++)
            is_tpl[k] = (unsigned char)drop;
    }
    return marked;
}

size_t dedup_templates_mark(const struct dedup_templates *t, const char *host, size_t host_len,
                            const uint64_t *blocks, const uint32_t *n_tokens, size_t n,
                            unsigned char *is_tpl)
{
    long i = host_len <= DEDUP_TEMPLATE_MAX_KEY ? host_find(t, host, host_len) : -1;
    const struct tpl_host *h = i >= 0 ? t->hosts[i] : NULL;
    for (size_t k = 0; k < n; k++) {
        const struct tpl_entry *e = h ? entry_find(h, blocks[k] ? blocks[k] : 1) : NULL;
        is_tpl[k] = e && is_template(h, e->count);
    }
    return mark_runs(n_tokens, n, is_tpl);
}

size_t dedup_templates_mark_counts(uint64_t docs, const uint32_t *counts, const uint32_t *n_tokens,
                                   size_t n, unsigned char *is_tpl)
{
    for (size_t k = 0; k < n; k++)
        is_tpl[k] = (unsigned char)is_candidate(docs, counts[k]);
    return mark_runs(n_tokens, n, is_tpl);
}

size_t dedup_templates_host_count(const struct dedup_templates *t)
{
    return t ? t->nhosts : 0;
}

size_t dedup_templates_entry_count(const struct dedup_templates *t)
{
    return t ? t->total : 0;
}

uint64_t dedup_templates_docs(const struct dedup_templates *t, const char *host, size_t host_len)
{
    long i = host_len <= DEDUP_TEMPLATE_MAX_KEY ? host_find(t, host, host_len) : -1;
    return i >= 0 ? t->hosts[i]->docs : 0;
}

uint32_t dedup_templates_block_count(const struct dedup_templates *t, const char *host,
                                     size_t host_len, uint64_t block)
{
    long i = host_len <= DEDUP_TEMPLATE_MAX_KEY ? host_find(t, host, host_len) : -1;
    const struct tpl_entry *e = i >= 0 ? entry_find(t->hosts[i], block ? block : 1) : NULL;
    return e ? e->count : 0;
}

size_t dedup_templates_template_count(const struct dedup_templates *t)
{
    size_t n = 0;
    for (size_t i = 0; t && i < t->nhosts; i++) {
        const struct tpl_host *h = t->hosts[i];
        for (size_t j = 0; h->slot && j <= h->mask; j++)
            n += h->slot[j].hash && is_template(h, h->slot[j].count);
    }
    return n;
}

/* ---- the serialised form (docs/INDEX-FORMAT.md, "Template section") ---- */

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static int host_ptr_cmp(const void *a, const void *b)
{
    const struct tpl_host *x = *(const struct tpl_host *const *)a;
    const struct tpl_host *y = *(const struct tpl_host *const *)b;
    return key_cmp(x->key, x->key_len, y->key, y->key_len);
}

static int entry_cmp(const void *a, const void *b)
{
    uint64_t x = ((const struct tpl_entry *)a)->hash, y = ((const struct tpl_entry *)b)->hash;
    return x < y ? -1 : x > y;
}

#define TPL_HEAD 16u  /* u32 hosts, u32 zero, u64 entries */
#define TPL_HOST 16u  /* u64 docs, u32 key length, u32 entries */
#define TPL_ENTRY 16u /* u64 hash, u32 count, u32 zero */

enum dedup_code dedup_templates_serialize(const struct dedup_templates *t, uint8_t **out,
                                          size_t *len)
{
    *out = NULL;
    *len = 0;
    size_t nh = t ? t->nhosts : 0, keys = 0;
    for (size_t i = 0; i < nh; i++)
        keys += t->hosts[i]->key_len;
    size_t total = t ? t->total : 0;
    size_t size = TPL_HEAD + nh * TPL_HOST + ((keys + 7) & ~(size_t)7) + total * TPL_ENTRY;
    uint8_t *p = calloc(1, size);
    struct tpl_host **order = nh ? malloc(nh * sizeof *order) : NULL;
    struct tpl_entry *tmp = NULL;
    if (!p || (nh && !order))
        goto oom;
    if (nh) { /* qsort and memcpy want non-NULL pointers even for 0 elements */
        memcpy(order, t->hosts, nh * sizeof *order);
        qsort(order, nh, sizeof *order, host_ptr_cmp);
    }
    wr32(p, (uint32_t)nh);
    wr64(p + 8, total);
    uint8_t *ph = p + TPL_HEAD, *pk = ph + nh * TPL_HOST;
    uint8_t *pe = pk + ((keys + 7) & ~(size_t)7);
    for (size_t i = 0; i < nh; i++) {
        const struct tpl_host *h = order[i];
        wr64(ph + i * TPL_HOST, h->docs);
        wr32(ph + i * TPL_HOST + 8, (uint32_t)h->key_len);
        wr32(ph + i * TPL_HOST + 12, (uint32_t)h->n);
        memcpy(pk, h->key, h->key_len);
        pk += h->key_len;
        free(tmp);
        tmp = malloc((h->n ? h->n : 1) * sizeof *tmp);
        if (!tmp)
            goto oom;
        size_t m = 0;
        for (size_t j = 0; h->slot && j <= h->mask; j++)
            if (h->slot[j].hash)
                tmp[m++] = h->slot[j];
        qsort(tmp, m, sizeof *tmp, entry_cmp);
        for (size_t j = 0; j < m; j++, pe += TPL_ENTRY) {
            wr64(pe, tmp[j].hash);
            wr32(pe + 8, tmp[j].count);
        }
    }
    free(tmp);
    free(order);
    *out = p;
    *len = size;
    return DEDUP_OK;
oom:
    free(tmp);
    free(order);
    free(p);
    return DEDUP_ENOMEM;
}

#define PFAIL DEDUP_PARSE_FAIL

enum dedup_code dedup_templates_parse(const uint8_t *data, size_t len, struct dedup_templates **out,
                                      struct dedup_parse_error *err)
{
    struct dedup_parse_error dummy;
    enum dedup_code rc = DEDUP_OK;
    struct dedup_templates *t = NULL;
    if (!err)
        err = &dummy;
    *err = (struct dedup_parse_error){0, 0, ""};
    *out = NULL;
    if (len < TPL_HEAD)
        PFAIL(DEDUP_EFORMAT, 0, "template section shorter than its 16-byte head");
    uint64_t nh = rd32(data), total = rd64(data + 8);
    if (rd32(data + 4) != 0)
        PFAIL(DEDUP_EFORMAT, 4, "template section reserved field is not zero");
    if (nh > DEDUP_TEMPLATE_MAX_HOSTS)
        PFAIL(DEDUP_ETOOLARGE, 0, "template section has more hosts than the cap");
    if (total > DEDUP_TEMPLATE_MAX_ENTRIES)
        PFAIL(DEDUP_ETOOLARGE, 8, "template section has more blocks than the cap");
    if (len < TPL_HEAD + nh * TPL_HOST)
        PFAIL(DEDUP_EFORMAT, len, "template section ends inside its host records");
    uint64_t keys = 0, sum = 0;
    for (uint64_t i = 0; i < nh; i++) {
        const uint8_t *r = data + TPL_HEAD + i * TPL_HOST;
        if (rd32(r + 8) > DEDUP_TEMPLATE_MAX_KEY)
            PFAIL(DEDUP_EFORMAT, (size_t)(r + 8 - data), "host key longer than 255 bytes");
        if (rd32(r + 12) > DEDUP_TEMPLATE_HOST_MAX_ENTRIES)
            PFAIL(DEDUP_EFORMAT, (size_t)(r + 12 - data), "host has more blocks than the cap");
        if (rd64(r) == 0)
            PFAIL(DEDUP_EFORMAT, (size_t)(r - data), "host with no documents counted");
        keys += rd32(r + 8);
        sum += rd32(r + 12);
    }
    if (sum != total)
        PFAIL(DEDUP_EFORMAT, 8, "block count is not the sum of the hosts' blocks");
    uint64_t koff = TPL_HEAD + nh * TPL_HOST, eoff = koff + ((keys + 7) & ~(uint64_t)7);
    uint64_t end = eoff + total * TPL_ENTRY;
    if (len != end)
        PFAIL(DEDUP_EFORMAT, len < end ? len : end,
              "template section size does not match its counts");
    for (uint64_t k = koff + keys; k < eoff; k++)
        if (data[k])
            PFAIL(DEDUP_EFORMAT, (size_t)k, "template section padding is not zero");
    t = dedup_templates_new();
    if (!t)
        PFAIL(DEDUP_ENOMEM, 0, "out of memory");
    const char *prev = NULL;
    size_t prev_len = 0;
    uint64_t e = eoff;
    for (uint64_t i = 0; i < nh; i++) {
        const uint8_t *r = data + TPL_HEAD + i * TPL_HOST;
        uint64_t docs = rd64(r);
        uint32_t kl = rd32(r + 8), ne = rd32(r + 12);
        const char *key = (const char *)data + koff;
        if (prev && key_cmp(prev, prev_len, key, kl) >= 0)
            PFAIL(DEDUP_EFORMAT, (size_t)koff, "host keys are not in strictly increasing order");
        prev = key;
        prev_len = kl;
        koff += kl;
        struct tpl_host *h = host_get(t, key, kl);
        if (!h)
            PFAIL(DEDUP_ENOMEM, 0, "out of memory");
        h->docs = docs;
        if (host_rehash(h, table_size(ne, 16)) != 0)
            PFAIL(DEDUP_ENOMEM, 0, "out of memory");
        uint64_t last = 0;
        for (uint32_t j = 0; j < ne; j++, e += TPL_ENTRY) {
            uint64_t hash = rd64(data + e);
            uint32_t count = rd32(data + e + 8);
            if (hash <= last)
                PFAIL(DEDUP_EFORMAT, (size_t)e,
                      "block hashes of a host are not strictly increasing");
            if (count == 0 || count > 0x7fffffffu || count > docs)
                PFAIL(DEDUP_EFORMAT, (size_t)e + 8,
                      "block count is 0 or more than the host's documents");
            if (rd32(data + e + 12) != 0)
                PFAIL(DEDUP_EFORMAT, (size_t)e + 12, "block record reserved field is not zero");
            last = hash;
            size_t s = slot_of(hash, h->mask);
            while (h->slot[s].hash)
                s = (s + 1) & h->mask;
            h->slot[s].hash = hash;
            h->slot[s].count = count;
            h->n++;
            t->total++;
        }
    }
    *out = t;
    return DEDUP_OK;
fail:
    dedup_templates_free(t);
    return rc;
}
