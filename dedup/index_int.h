#ifndef DEDUP_INDEX_INT_H
#define DEDUP_INDEX_INT_H
/*
 * Internal to dedup/: the layout of the block-permuted index, shared by index.c (design,
 * permutations, sorting, adds, queries, compaction), pairs.c (all pairs), cluster.c
 * (union-find) and indexfile.c (save/load). Tests and benchmarks may include it for
 * white-box checks; nothing outside dedup/ and tests/ should. Its functions are ix_ (and
 * dedup__ for those of dedup_int.h): dedup_ is dedup.h's API only. They return as the API
 * does (the conventions in dedup.h, after enum dedup_code).
 */
#include "dedup/dedup.h"

#include <stdatomic.h>
#include <stdbool.h>
#include <string.h>

#define IX_NONE UINT32_MAX  /* end of a document list / no slot */
#define IX_DIR_BITS_MAX 28u /* cap on directory bits (2^28 + 1 offsets per table) */
#ifndef IX_DELTA_MIN
#define IX_DELTA_MIN 4096u /* the delta merges into the main tables past ... */
#endif
#ifndef IX_DELTA_FRACTION
#define IX_DELTA_FRACTION 2u /* ... max(IX_DELTA_MIN, main / IX_DELTA_FRACTION) */
#endif
#ifndef IX_DELTA_PER
/* the delta's buckets: 2^IX_DELTA_PER..2^(IX_DELTA_PER + 1) entries a bucket when the delta
 * is full (more where the design's shortest key caps the buckets' bits); 3 before perf19i,
 * whose rounds measured 1 and 2 at 0.93x its CPU time (docs/BENCHMARKS.md) */
#define IX_DELTA_PER 2u
#endif
#define IX_COMPACT_ABSORB                                                                          \
    64u /* a merge takes up to this many pending documents into the                                \
         * delta first (index.c, ix_compact) */
#define IX_ID_BYTES_MAX ((uint64_t)1 << 40) /* cap on all id bytes of an index */
#ifndef IX_LINES_MIN
#define IX_LINES_MIN (1u << 21) /* the probe's lines for a main of this many fingerprints */
#endif
#ifndef IX_LINES_PER
#define IX_LINES_PER 4u /* lines once a main answered a quarter as many queries as it holds */
#endif
#define IX_LINE_SLOTS 8u  /* slots of a line bucket: 64 bytes */
#define IX_SCRATCH_MAX 4u /* scratch blocks an index holds (dedup_index_give_scratch) */

/* One run of bits moved by a permutation: bits [src, src + width) go to [dst, dst + width)
 * (bit 0 = least significant). */
struct ix_seg {
    uint64_t mask; /* (1 << width) - 1 */
    uint8_t src, dst, width;
};

/* The bit permutation of one table: the key blocks first (most significant), then the
 * others. keymask: the key bits in the original (unpermuted) fingerprint. The segments
 * grouped by how far they move: group g rotates the bits rmask[g] of x left by rot[g]
 * (an AND, a rotation and an OR a group, against four operations a segment: ix_permute
 * runs once a table on every probe). */
struct ix_perm {
    struct ix_seg seg[64];
    unsigned nseg;
    unsigned key_bits;
    uint64_t keymask;
    uint64_t keyhi; /* the key bits of a permuted value: its top key_bits */
    uint64_t rmask[64];
    uint8_t rot[64];
    unsigned nrot;
    /* 1: the key bits and the other bits each keep their order (a one-level design), so
     * perm_t(x) = pext(x, keymask) << (64 - key_bits) | pext(x, ~keymask), two BMI2
     * instructions; set only where the CPU has a fast PEXT (ix_pext_fast) */
    bool pext;
};

/* A growable array of permuted fingerprints: one delta bucket. One block holds cap
 * permuted fingerprints, then cap heads (the first document of each: a delta slot's head
 * never changes), so a match in the delta needs no lookup of its slot; table 0's buckets
 * hold the slots instead (fp -> slot: index.c, delta_find). */
struct ix_vec {
    uint64_t *v;
    uint32_t n, cap;
};
static inline uint32_t *ix_vec_heads(const struct ix_vec *v)
{
    return (uint32_t *)(v->v + v->cap);
}

/* Where the delta buckets' blocks come from: blocks of 4 << c entries (class c), cut from
 * large chunks and kept on a free list per class when a bucket outgrows them; a merge
 * (the delta cleared) makes every block free again and keeps the chunks, whose pages are
 * written already, for the next delta (freed with the index). malloc, realloc and free of
 * every bucket's array were a tenth of the online pattern's instructions, and each merge
 * freed 2^dd_bits arrays a table one by one (docs/BENCHMARKS.md, perf19g). */
#define IX_SLAB_CLASSES 28u
struct ix_chunk {
    char *p;
    size_t size;
};
struct ix_slab {
    struct ix_chunk *chunk; /* nchunks chunks (room for cap_chunks), cur the one cut */
    size_t nchunks, cap_chunks, cur;
    char *at, *end;              /* what is left of chunk cur */
    void *free[IX_SLAB_CLASSES]; /* a list through each block's first 8 bytes */
};

struct dedup_index {
    struct dedup_design design;
    struct ix_perm perm[DEDUP_MAX_TABLES];
    unsigned ntables;

    /* documents, in the order added */
    uint32_t ndocs, cap_docs;
    uint64_t *doc_fp;   /* fingerprint of each document */
    uint32_t *doc_next; /* next document with the same fingerprint, or IX_NONE */
    uint64_t *id_off;   /* ndocs + 1 offsets into id_bytes; id i ends with a NUL */
    char *id_bytes;
    uint64_t id_len, id_cap;
    uint64_t fp_bytes, next_bytes, off_bytes; /* allocated sizes (arr_resize) */
    uint64_t pf_docs, pf_ids; /* documents / id bytes prefaulted so far (docs_reserve) */
    bool docs_owned;          /* false while doc_fp..id_bytes point into a mapped file */
    uint32_t absorbed;        /* documents [absorbed, ndocs) are pending: in no table yet */
    bool span_open;           /* a span is open: the adds keep below span_doc / span_id */
    uint64_t span_doc, span_id;

    /* the main tables: nmain distinct fingerprints, table t sorted by perm_t(fp);
     * table 0 is the identity permutation, so tab[0] is the sorted distinct fingerprints
     * and head/tail (parallel to tab[0]) are the first/last document of each */
    uint32_t nmain;
    uint64_t *tab[DEDUP_MAX_TABLES];
    uint32_t *dir[DEDUP_MAX_TABLES]; /* (1 << dir_bits) + 1 offsets each */
    unsigned dir_bits;
    uint32_t *head, *tail;
    bool main_owned; /* false while tab/dir/head point into a mapped file */
    bool tail_owned; /* tail is copied separately (appends write it) */
    /* between the compaction of a fresh index for all pairs and the end of its streamed
     * tables (ix_tails_finish), tail is NULL: tail_buf is the tables' buffer, whose pages
     * become the tails, and tail_fix the (position, document) of each tail that is not
     * its head */
    void *tail_buf;
    uint32_t *tail_fix;
    size_t ntail_fix;
    bool lazy; /* only table 0 (and dir[0]) is built: all pairs of a fresh index
                * needs no other table (pairs.c streams them); queries, stats and
                * saves build them first (ix_tables_ready) */

    /* the delta: distinct fingerprints not in the main tables, absorbed one by one;
     * slot s has dfp/dhead/dtail; dbucket[t][b] holds perm_t(fp) and the head of the slots
     * whose top dd_bits are b, table 0 fp and the slot itself (index.c, delta_find) */
    uint32_t ndelta, cap_delta;
    uint64_t *dfp;
    uint32_t *dhead, *dtail;
    unsigned dd_bits;
    struct ix_vec *dbucket[DEDUP_MAX_TABLES];
    struct ix_slab dslab; /* the blocks of dbucket's vectors */
    unsigned delta_per;   /* IX_DELTA_PER (benchmarks set others) */

    /* The last one-call query's probe, kept for the add that usually follows it: its
     * fingerprint qc_fp, that fingerprint permuted for every table (qc_pq) and the fact that
     * the probe found no exact match, so qc_fp is in neither the main tables nor the delta.
     * absorb_one uses it for document qc_doc (the first pending document after the query)
     * while nothing was absorbed since: no lookup in table 0 or the delta's hash, no
     * permutation (index.c, absorb_one). main_free and delta_clear (a merge) turn it off. */
    bool qc_on;
    uint32_t qc_doc;
    uint64_t qc_fp;
    uint64_t qc_pq[DEDUP_MAX_TABLES];

    /* The probe's lines (index.c, "HOW IT WORKS: the lines"): table t's entries again,
     * in 2^line_bits buckets of IX_LINE_SLOTS slots (one cache line) by their top
     * line_bits, so a query reads one line a table whose address its key gives, instead of
     * a directory line and then a bucket line. line_end[t]: the slots in use of line[t]
     * (line_cap[t] allocated); line_head: the head of each slot of table 0 (head_cap).
     * Built by the query of a main of at least lines_min fingerprints that has answered
     * nmain / lines_per queries (query_ready); they hold the main tables while line_of is tab[0]
     * (NULL: none) and line_of_n nmain. A merge leaves the blocks (their pages are written) for the
     * next build; freed with the index; never saved. */
    uint64_t *line[DEDUP_MAX_TABLES];
    size_t line_end[DEDUP_MAX_TABLES], line_cap[DEDUP_MAX_TABLES];
    uint32_t *line_head;
    size_t head_cap;
    unsigned line_bits;
    const uint64_t *line_of;
    uint32_t line_of_n;
    uint32_t lines_min;       /* UINT32_MAX (never) from ix_new; IX_LINES_MIN once turned on
                               * (dedup_index_set_probe_lines); tests set 0 (always) */
    uint32_t lines_min_on;    /* lines_min while turned on: IX_LINES_MIN, or the caller's
                               * (dedup_index_set_probe_lines_limits) */
    uint64_t lines_max_bytes; /* no lines whose bytes (lines_bytes_for) pass this; 0: no cap */
    uint32_t lines_per; /* built once the main answered nmain / lines_per queries (0: at once) */
    uint64_t asked;     /* queries the main answered since it was built (main_free resets) */
    bool lines_paused;  /* tests and benchmarks: the lines kept as they are but not used */

    /* the site template table saved with the index (NULL until asked for or loaded) */
    struct dedup_templates *templates;

    /* the pair generation (header offset 96): the generation of the
     * FILE.digests saved with this index by dedup; 0 = none. Loaded and saved unchanged
     * unless dedup_index_set_pair_generation() sets it. */
    uint64_t pair_gen;

    /* blocks handed over by dedup_index_give_scratch(), their pages written already:
     * the next compaction and all pairs take their working arrays from them before fresh
     * memory (ix_scratch_take) */
    void *scratch[IX_SCRATCH_MAX];
    size_t scratch_bytes[IX_SCRATCH_MAX];

    /* a mapped file, a file read into a block of its own or borrowed memory, which the
     * arrays may point into (ix_unmap) */
    void *map;
    size_t map_len;
    bool map_is_mmap; /* mapped: munmap */
    bool map_is_heap; /* read: free */
};

/* The hot loops (probes, all-pairs runs) are built twice on x86-64, with and without the
 * POPCNT instruction, and the CPU picks at load time (GCC function multiversioning): the
 * portable build would otherwise call libgcc's table-driven popcount, ~5x slower. */
#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#define IX_HOT __attribute__((target_clones("popcnt", "default")))
#else
#define IX_HOT
#endif

static inline uint64_t ix_rotl(uint64_t x, unsigned r)
{
    return (x << (r & 63)) | (x >> ((64 - r) & 63)); /* one ROL instruction */
}

/* Whether this CPU has BMI2 with a fast PEXT/PDEP (not AMD's before Zen 3, where they are
 * microcode taking tens to hundreds of cycles); computed once. */
bool ix_pext_fast(void);

/* Whether this CPU scans the query's buckets 8 entries at a time (AVX-512 with VPOPCNTDQ:
 * index.c, scan_main_wide); computed once. ix_probe_wide: the probes' choice, -1 until the
 * first query sets it from ix_wide_fast (a test may set 0, the scalar scan, or 1 where
 * ix_wide_fast holds). */
bool ix_wide_fast(void);
extern _Atomic int ix_probe_wide;

/* perm_t(x) and its inverse: with p->pext two PEXTs (PDEPs) in inline assembly, so that any
 * function may inline them (the flag is set only where the CPU has the instructions),
 * else one AND, rotation and OR a rotation group. */
#if defined(__x86_64__) && defined(__GNUC__)
#define IX_HAVE_PEXT 1
static inline uint64_t ix_pext(uint64_t x, uint64_t m)
{
    uint64_t r;
    __asm__("pextq %2, %1, %0" : "=r"(r) : "r"(x), "rm"(m));
    return r;
}
static inline uint64_t ix_pdep(uint64_t x, uint64_t m)
{
    uint64_t r;
    __asm__("pdepq %2, %1, %0" : "=r"(r) : "r"(x), "rm"(m));
    return r;
}
#endif
static inline uint64_t ix_permute(const struct ix_perm *p, uint64_t x)
{
#ifdef IX_HAVE_PEXT
    if (p->pext)
        return ix_pext(x, p->keymask) << (64 - p->key_bits) | ix_pext(x, ~p->keymask);
#endif
    uint64_t y = 0;
    for (unsigned g = 0, n = p->nrot; g < n; g++)
        y |= ix_rotl(x & p->rmask[g], p->rot[g]);
    return y;
}
static inline uint64_t ix_unpermute(const struct ix_perm *p, uint64_t y)
{
#ifdef IX_HAVE_PEXT
    if (p->pext)
        return ix_pdep(y >> (64 - p->key_bits), p->keymask) | ix_pdep(y, ~p->keymask);
#endif
    uint64_t x = 0;
    for (unsigned g = 0, n = p->nrot; g < n; g++)
        x |= ix_rotl(y & ix_rotl(p->rmask[g], p->rot[g]), (64 - p->rot[g]) & 63);
    return x;
}

/* The first table whose key bits all agree for a pair differing in bits d, or ntables
 * when none does (then the pair is farther apart than the design's k). */
static inline unsigned ix_first_table(const struct dedup_index *idx, uint64_t d)
{
    unsigned t = 0;
    while (t < idx->ntables && (d & idx->perm[t].keymask) != 0)
        t++;
    return t;
}

/* Top `bits` bits of x (0 when bits == 0). */
static inline uint64_t ix_top(uint64_t x, unsigned bits)
{
    return bits ? x >> (64 - bits) : 0;
}

/* The same for bits < 64, without the test (two shifts): the probe takes 8 a query (each
 * table's directory entry and delta bucket); ix_top's test was 7% of the online pattern's
 * instructions (docs/BENCHMARKS.md, perf19i). */
static inline uint64_t ix_top_below64(uint64_t x, unsigned bits)
{
    return (x >> 1) >> (63 - bits);
}

/* Runs fn(arg, tid, team) on up to `threads` threads (tid 0 is the caller) that may
 * meet at ix_team_sync(team); returns how many ran (1 when no thread could be started). */
struct ix_team;
unsigned ix_team_run(unsigned threads, void (*fn)(void *arg, unsigned tid, struct ix_team *team),
                     void *arg);
unsigned ix_team_size(const struct ix_team *team);
void ix_team_sync(struct ix_team *team); /* a barrier of every thread of the team */

/* The counting pass of a radix digit: c[d] (d = 0..mask) is where digit d of the keys
 * a[0..n) starts, (a[i] >> sh) & mask, when they are scattered by it in order; c[mask + 1]
 * = n. c has room for mask + 2 counts; n < 2^32. ix_sort_bucket, the compaction's
 * buckets (index.c) and the streamed tables' sub-buckets (pairs.c) scatter with it. */
static inline void ix_digit_starts(const uint64_t *a, size_t n, unsigned sh, size_t mask,
                                   uint32_t *c)
{
    memset(c, 0, sizeof *c * (mask + 2));
    for (size_t i = 0; i < n; i++)
        c[((a[i] >> sh) & mask) + 1]++;
    for (size_t d = 1; d <= mask + 1; d++)
        c[d] += c[d - 1];
}

/* Blocks from IX_HUGE_MIN bytes on ask for transparent huge pages and start at a 2 MiB
 * boundary (index.c, "memory"); -DIX_HUGE_MIN=0 turns both off. */
#ifndef IX_HUGE_MIN
#define IX_HUGE_MIN (4UL << 20) /* 4 MiB; no cast: #if reads it */
#endif
#define IX_HUGE_PAGE ((size_t)2 << 20) /* the size of a transparent huge page on x86-64 */

/* An array of `bytes` (from IX_HUGE_MIN on at a 2 MiB boundary, in huge pages), prefaulted
 * in one call when large (one fault per page taken in the kernel: far cheaper on a VM);
 * freed with free(). */
void *ix_big_alloc(size_t bytes);
/* Transparent huge pages asked for on [p, p + bytes) when it is large (index.c, "memory"). */
void ix_huge_advise(void *p, size_t bytes);
/* A block of at least bytes: the smallest given scratch block of at most most bytes, else
 * ix_big_alloc(bytes). Freed with free(). */
void *ix_scratch_take(struct dedup_index *idx, size_t bytes, size_t most);
/* bytes for a block the caller keeps (shrunk later): a scratch block at most half again as
 * large, so a larger one stays for a temporary array */
#define IX_SCRATCH_KEEP(bytes) ((bytes) + (bytes) / 2)
/* The tails of a fresh index compacted for all pairs, made in tail_buf's pages (nothing
 * if they are made already): ix_distinct_pairs calls it after the streamed tables. */
void ix_tails_finish(struct dedup_index *idx);
/* Frees the scratch blocks not taken. */
void ix_scratch_release(struct dedup_index *idx);

/* Builds tables 1.. of a lazy index (threads: how many build at once). */
DEDUP_WARN_UNUSED enum dedup_code ix_tables_ready(struct dedup_index *idx, unsigned threads);

/* The top `bits` of the permuted value: one shift when the permutation's first run of
 * bits is that wide. */
static inline uint64_t ix_perm_top(const struct ix_perm *p, uint64_t x, unsigned bits)
{
    const struct ix_seg *s = &p->seg[0];
    if (s->width >= bits && s->dst + s->width == 64)
        return (x >> (s->src + s->width - bits)) & (((uint64_t)1 << bits) - 1);
    return ix_top(ix_permute(p, x), bits);
}

/* Sorts a[0..n) (entries that already share every bit above `shift`) in place, with
 * scr[0..n) as scratch: one counting pass over the next digit, then insertion sorts.
 * scr may be NULL (then in place, slower). */
void ix_sort_bucket(uint64_t *a, size_t n, unsigned shift, uint64_t *scr);

/* Builds the permutations of design d into idx (perm, ntables). DEDUP_EINVAL if invalid. */
DEDUP_WARN_UNUSED enum dedup_code ix_design_build(struct dedup_index *idx,
                                                  const struct dedup_design *d);
/* Sorts a[0..n) ascending, in place. */
void ix_sort_u64(uint64_t *a, size_t n);
/* The same for entries that all share their bits from hi up. */
void ix_sort_u64_below(uint64_t *a, size_t n, unsigned hi);
/* dst[0..n) = the permuted src[0..n), sorted. */
void ix_permute_sort(const struct ix_perm *p, const uint64_t *src, size_t n, uint64_t *dst);
/* Position of fp in tab[0], or IX_NONE. */
uint32_t ix_main_find(const struct dedup_index *idx, uint64_t fp);
/* Directory bits for n distinct fingerprints under idx's design. */
unsigned ix_dir_bits_for(const struct dedup_index *idx, uint64_t n);
/* Fills dir[(1 << bits) + 1] for sorted v[0..n). */
void ix_dir_fill(uint32_t *dir, unsigned bits, const uint64_t *v, uint32_t n);
/* Merges the delta and the pending documents into the main tables. */
DEDUP_WARN_UNUSED enum dedup_code ix_compact(struct dedup_index *idx, unsigned threads);
/* Runs fn(arg, i) for every i in [0, n) on up to `threads` threads (in the caller when 1),
 * also when a thread cannot be started (the caller runs its share). Returns how many
 * threads ran (1: the caller alone). */
unsigned ix_parallel(unsigned threads, unsigned n, void (*fn)(void *arg, unsigned i), void *arg);
/* An empty index with design d (no documents). */
DEDUP_WARN_UNUSED enum dedup_code ix_new(const struct dedup_design *d, struct dedup_index **out);

/* Releases the mapped file or borrowed memory idx points into (indexfile.c). */
void ix_unmap(struct dedup_index *idx);

/* The position in tab[0] of each document's fingerprint (main only, after compaction);
 * caller frees. NULL when out of memory. */
uint32_t *ix_doc_positions(const struct dedup_index *idx);

/* The pairs (x, y), x < y, of s[0..n) (n <= 64) within Hamming distance k, as x << 16 | y
 * in out (room for n * (n - 1) / 2), in (x, y) order; returns their count. pick: the
 * fastest this CPU runs (AVX-512 VPOPCNTDQ or one POPCNT a pair), scalar: the latter. */
typedef size_t (*ix_near_fn)(const uint64_t *s, size_t n, unsigned k, uint32_t *out);
ix_near_fn ix_near_pick(void);
size_t ix_near_pairs_scalar(const uint64_t *s, size_t n, unsigned k, uint32_t *out);

/* Distinct-fingerprint pairs within k in the main tables (positions in tab[0], lo < hi),
 * sorted; caller frees *pairs, then the scratch blocks left (ix_scratch_release). Used by
 * pairs and clusters. */
DEDUP_WARN_UNUSED enum dedup_code ix_distinct_pairs(struct dedup_index *idx, unsigned k,
                                                    unsigned threads, uint64_t **pairs,
                                                    size_t *npairs);

#endif
