/*
 * All pairs within Hamming distance k (Manku, Jain, Das Sarma, WWW 2007, section 3, the
 * batch case): after compaction every table is sorted by its permuted fingerprint, so the
 * fingerprints sharing a key form a run; each run is checked pair by pair.
 *
 * HOW IT WORKS. A pair differing in bits d is kept only by the first table whose key bits
 * are all zero in d (ix_first_table), so each pair of distinct fingerprints comes out once
 * with no set of pairs seen, and the tables can be scanned independently: the tables are
 * shared out among threads, each collects its pairs of positions in table 0, and the
 * collected pairs are sorted. Documents are expanded last: for each document a in order,
 * the later documents with the same fingerprint (distance 0) and those of the neighbouring
 * fingerprints are gathered, sorted and reported, so the output is in (a, b) order and its
 * memory is one document's neighbours, however many pairs the identical pages make.
 *
 * WHERE THE TIME GOES (perf record, `bench_index --profile 10000000 2`, 10M fingerprints,
 * 10 tables, both threads, AMD EPYC 2 cores, a shared VM; issue 19). Before: 9.3-13.3 CPU s
 * a run, of which page faults of fresh arrays (the kernel's fault path 23%, page clearing
 * and tables ~7%), building the 9 permuted tables (ix_permute_sort 24%, insertion sorts
 * 4%, directories 3.5%), realloc copies of the document arrays (memmove 6%), the record
 * sort and merge of the compaction (9%), the per-document expansion (5%), the runs scan
 * (3.5%) and a table-0 lookup per candidate (ix_main_find 2.3%). Faulting fresh memory
 * one page at a time is the dearest thing on this machine: 512 MiB take 4.6-5.4 s touched
 * page by page, 0.3-0.5 s prefaulted in one call (then 1.0 s to fill). What changed:
 * tables beyond 0 are never stored for all pairs of a fresh index (one buffer, streamed,
 * below), a table's bucket is split once more by a counting pass and checked without
 * sorting it, the compaction sorts two arrays in a parallel scatter, candidates' positions
 * are looked up in prefetched batches, document pairs come from one sort of the distinct
 * pairs crossed with their lists, the document arrays grow by mremap, and large blocks are
 * prefaulted (index.c, "memory"). After: 2.0-3.5 CPU s a run at load 7-20 (the spread is
 * the neighbours'); the table passes (count, scatter, sub-bucket check: ~45%) and the
 * compaction (~10%) are what is left, each split between both threads.
 * At 1M (perf, `bench_index --profile 1000000 1`, perf19f): the first write to fresh
 * pages is most of what is left: this VM charges ~10 us a 4 KiB page on first write
 * (3 s a GB, prefaulted or not; a page written before costs nothing), and the samples
 * sit on the first stores into each array: the adds' document arrays (18%), the
 * compaction's scatter and fold (22%), the streamed tables' buffer (14%). So the
 * compaction writes no tail array until the tables are done, then writes the tails
 * into the buffer's pages (index.c, ix_tails_finish), and a caller's finished arrays
 * can be handed over for reuse (dedup_index_give_scratch: simcrawl pairs gives its
 * duplicate-id check's). The run's pair checks are eight at a time with AVX-512 where
 * the CPU has it (near_avx512: 12% -> 7% of a 1M run). Then (pairs19l) the large blocks
 * ask for transparent huge pages (index.c, ix_huge_advise): a fresh 2 MiB page costs about
 * what one fresh 4 KiB page does once the host has the memory, and a 1M run took 0.74x
 * main's CPU (0.60-0.83, 7 alternating rounds; docs/BENCHMARKS.md).
 */
#include "dedup/index_int.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define IX_THREADS_MAX_PAIRS 16u /* = IX_THREADS_MAX of index.c */

struct pairs_job {
    const struct dedup_index *idx;
    unsigned k;
    uint64_t *out[DEDUP_MAX_TABLES];
    size_t n[DEDUP_MAX_TABLES];
    enum dedup_code rc[DEDUP_MAX_TABLES];
};

static int push_pair(struct pairs_job *j, unsigned t, size_t *cap, uint32_t x, uint32_t y)
{
    if (j->n[t] == *cap) {
        if (*cap >= DEDUP_PAIRS_MAX_DISTINCT) {
            j->rc[t] = DEDUP_ETOOLARGE;
            return -1;
        }
        size_t nc = *cap ? *cap * 2 : 1024;
        uint64_t *nv = realloc(j->out[t], nc * sizeof *nv);
        if (!nv) {
            j->rc[t] = DEDUP_ENOMEM;
            return -1;
        }
        j->out[t] = nv;
        *cap = nc;
    }
    uint32_t lo = x < y ? x : y, hi = x < y ? y : x;
    j->out[t][j->n[t]++] = (uint64_t)lo << 32 | hi;
    return 0;
}

IX_HOT static void pairs_table(void *arg, unsigned t)
{
    struct pairs_job *j = arg;
    const struct dedup_index *idx = j->idx;
    const struct ix_perm *p = &idx->perm[t];
    const uint64_t *v = idx->tab[t];
    unsigned kb = p->key_bits, k = j->k;
    uint32_t n = idx->nmain;
    size_t cap = 0;
    for (uint32_t i = 0; i < n;) {
        uint64_t key = ix_top(v[i], kb);
        uint32_t e = i + 1;
        while (e < n && ix_top(v[e], kb) == key)
            e++;
        for (uint32_t x = i; x + 1 < e; x++) {
            uint64_t vx = v[x];
            for (uint32_t y = x + 1; y < e; y++) {
                if ((unsigned)__builtin_popcountll(vx ^ v[y]) > k)
                    continue;
                uint64_t ox = t ? ix_unpermute(p, vx) : vx;
                uint64_t oy = t ? ix_unpermute(p, v[y]) : v[y];
                if (ix_first_table(idx, ox ^ oy) != t)
                    continue;
                uint32_t px = t ? ix_main_find(idx, ox) : x;
                uint32_t py = t ? ix_main_find(idx, oy) : y;
                if (px == IX_NONE || py == IX_NONE || px == py)
                    continue; /* only in a forged file */
                if (push_pair(j, t, &cap, px, py) != 0)
                    return;
            }
        }
        i = e;
    }
}

/* ---- all pairs of a lazy index: each table streamed through one buffer ----
 *
 * HOW IT WORKS. After the first compaction of a fresh index only table 0 (the sorted
 * distinct fingerprints) exists; all pairs needs each other table only long enough to scan
 * its runs, so table t is built into one buffer shared by the threads and scanned bucket by
 * bucket while the bucket is still in cache, then the buffer takes the next table: n * 8
 * bytes in all instead of (tables - 1) * n * 8, and every page of it is touched once. The
 * phases of each table are split between the threads of a team: (1) each counts the top
 * STREAM_BITS bits of the permuted values of its share of table 0 (one shift: the top
 * bits are the start of the first key block), (2) after a barrier, scatters its share
 * into its own slice of every bucket, (3) after a barrier, sorts the buckets (every other
 * one: a few thousand entries each, in cache) and scans each bucket's runs of equal key
 * (the key is at least STREAM_BITS long, so a run never crosses a bucket). A pair found in
 * table t > 0 is kept as its two fingerprints; they are mapped to positions in table 0 at
 * the end, in batches whose directory and table reads are prefetched (a lookup per pair
 * while scanning would be two cache misses each). */
#define STREAM_BITS_MAX 10u

/* The run check (near_scalar, near_avx512 below; index_int.h). */
typedef ix_near_fn near_fn;

struct stream_out {
    uint64_t *pos; /* position pairs lo << 32 | hi (table 0) */
    size_t npos, cappos;
    uint64_t *val; /* fingerprint pairs x, y (tables > 0) */
    size_t nval, capval;
    uint32_t *valpos; /* their positions in table 0 (find_positions), by the same thread */
    enum dedup_code rc;
};

struct stream_job {
    const struct dedup_index *idx;
    unsigned k;
    near_fn near;
    uint64_t *buf;
    size_t end[1u << STREAM_BITS_MAX];
    size_t cnt[IX_THREADS_MAX_PAIRS][1u << STREAM_BITS_MAX];
    struct stream_out out[IX_THREADS_MAX_PAIRS];
};

static int grow_u64(uint64_t **v, size_t *cap, size_t need, enum dedup_code *rc)
{
    if (need <= *cap)
        return 0;
    if (need > 2 * DEDUP_PAIRS_MAX_DISTINCT) {
        *rc = DEDUP_ETOOLARGE;
        return -1;
    }
    size_t nc = *cap ? *cap * 2 : 1024;
    while (nc < need)
        nc *= 2;
    uint64_t *nv = realloc(*v, nc * sizeof *nv);
    if (!nv) {
        *rc = DEDUP_ENOMEM;
        return -1;
    }
    *v = nv;
    *cap = nc;
    return 0;
}

/* The pairs (x, y), x < y, of s[0..n) (n <= NEAR_MAX) within Hamming distance k, as
 * x << 16 | y in out (room for n * (n - 1) / 2), in (x, y) order; returns their count.
 * Most pairs of a run are far apart, so this check is most of the runs' work: on CPUs with
 * AVX-512 VPOPCNTDQ one instruction tests x against 8 later entries (near_avx512), else one
 * POPCNT a pair (near_scalar, also IX_HOT's clones). Picked once a call of all pairs
 * (ix_near_pick). */
#define NEAR_MAX 64u
#define NEAR_MIN 8u /* runs this short: inline scalar (the 10-table designs' 1-3) */

IX_HOT static size_t near_scalar(const uint64_t *s, size_t n, unsigned k, uint32_t *out)
{
    size_t o = 0;
    for (size_t x = 0; x + 1 < n; x++)
        for (size_t y = x + 1; y < n; y++)
            if ((unsigned)__builtin_popcountll(s[x] ^ s[y]) <= k)
                out[o++] = (uint32_t)x << 16 | (uint32_t)y;
    return o;
}

#if defined(__x86_64__) && defined(__GNUC__) && !defined(__clang__) && defined(__linux__)
#include <immintrin.h>
#define NEAR_AVX512 1

__attribute__((target("avx512f,avx512vpopcntdq"))) static size_t
near_avx512(const uint64_t *s, size_t n, unsigned k, uint32_t *out)
{
    size_t o = 0;
    const __m512i kk = _mm512_set1_epi64((long long)k);
    for (size_t x = 0; x + 1 < n; x++) {
        const __m512i vx = _mm512_set1_epi64((long long)s[x]);
        for (size_t y = x + 1; y < n; y += 8) {
            __mmask8 lanes = n - y >= 8 ? (__mmask8)0xff : (__mmask8)((1u << (n - y)) - 1);
            __m512i v = _mm512_maskz_loadu_epi64(lanes, s + y);
            __m512i pc = _mm512_popcnt_epi64(_mm512_xor_si512(v, vx));
            unsigned hit = _mm512_mask_cmple_epu64_mask(lanes, pc, kk);
            while (hit) {
                unsigned b = (unsigned)__builtin_ctz(hit);
                hit &= hit - 1;
                out[o++] = (uint32_t)x << 16 | (uint32_t)(y + b);
            }
        }
    }
    return o;
}
#endif

size_t ix_near_pairs_scalar(const uint64_t *s, size_t n, unsigned k, uint32_t *out)
{
    return near_scalar(s, n, k, out);
}

ix_near_fn ix_near_pick(void)
{
#ifdef NEAR_AVX512
    __builtin_cpu_init();
    if (__builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vpopcntdq"))
        return near_avx512;
#endif
    return near_scalar;
}

/* The pairs within k among the runs of equal key of a[0..m) (sorted, table t, a[0] at
 * position base of table 0 when t == 0). */
/* Keeps the pair (x, y) of a (within k) if table t is its first table. 0, or -1 (o->rc). */
static int keep_pair(const struct dedup_index *idx, unsigned t, const uint64_t *a, size_t x,
                     size_t y, size_t base, struct stream_out *o)
{
    const struct ix_perm *p = &idx->perm[t];
    uint64_t d = a[x] ^ a[y];
    if (ix_first_table(idx, t ? ix_unpermute(p, d) : d) != t)
        return 0;
    if (t == 0) {
        if (grow_u64(&o->pos, &o->cappos, o->npos + 1, &o->rc) != 0)
            return -1;
        o->pos[o->npos++] = (uint64_t)(base + x) << 32 | (base + y);
    } else {
        if (grow_u64(&o->val, &o->capval, o->nval + 2, &o->rc) != 0)
            return -1;
        o->val[o->nval++] = ix_unpermute(p, a[x]);
        o->val[o->nval++] = ix_unpermute(p, a[y]);
    }
    return 0;
}

IX_HOT static void scan_runs(const struct dedup_index *idx, unsigned t, unsigned k,
                             const uint64_t *a, size_t m, size_t base, near_fn near,
                             struct stream_out *o)
{
    unsigned kb = idx->perm[t].key_bits;
    uint32_t hits[NEAR_MAX * (NEAR_MAX - 1) / 2];
    for (size_t i = 0; i < m && o->rc == DEDUP_OK;) {
        uint64_t key = ix_top(a[i], kb);
        size_t e = i + 1;
        while (e < m && ix_top(a[e], kb) == key)
            e++;
        if (e - i > NEAR_MIN && e - i <= NEAR_MAX) {
            size_t nh = near(a + i, e - i, k, hits);
            for (size_t h = 0; h < nh; h++)
                if (keep_pair(idx, t, a, i + (hits[h] >> 16), i + (hits[h] & 0xffff), base, o))
                    return;
        } else {
            for (size_t x = i; x + 1 < e; x++)
                for (size_t y = x + 1; y < e; y++)
                    if ((unsigned)__builtin_popcountll(a[x] ^ a[y]) <= k &&
                        keep_pair(idx, t, a, x, y, base, o) != 0)
                        return;
        }
        i = e;
    }
}

/* One bucket of table t > 0 (entries sharing their top 64 - shift bits, the key being
 * longer): instead of sorting it, one counting scatter on the next w key bits into scr
 * makes sub-buckets of about one entry each, and the pairs are the entries of a sub-bucket
 * with equal keys; a sub-bucket larger than SUB_SORT (many entries sharing those bits) is
 * sorted and scanned by runs, so no input makes the check quadratic in a large group of
 * different keys. */
#define SUB_SORT 24u
#define SUB_BITS_MAX 13u

IX_HOT static void stream_bucket(const struct dedup_index *idx, unsigned t, unsigned k, uint64_t *a,
                                 size_t m, unsigned shift, uint64_t *scr, near_fn near,
                                 struct stream_out *o)
{
    const struct ix_perm *p = &idx->perm[t];
    unsigned kb = p->key_bits, w = 1;
    while (w < SUB_BITS_MAX && ((size_t)1 << (w + 1)) <= m)
        w++;
    if (64 - shift + w > kb)
        w = kb > 64 - shift ? kb - (64 - shift) : 0;
    if (!scr || w == 0) {
        ix_sort_bucket(a, m, shift, scr);
        scan_runs(idx, t, k, a, m, 0, near, o);
        return;
    }
    unsigned sh2 = shift - w;
    size_t mask = ((size_t)1 << w) - 1;
    uint32_t c2[(1u << SUB_BITS_MAX) + 1];
    ix_digit_starts(a, m, sh2, mask, c2);
    for (size_t i = 0; i < m; i++)
        scr[c2[(a[i] >> sh2) & mask]++] = a[i];
    size_t l2 = 0;
    unsigned keyshift = 64 - kb;
    uint32_t hits[SUB_SORT * (SUB_SORT - 1) / 2];
    for (size_t d = 0; d <= mask && o->rc == DEDUP_OK; d++) {
        size_t e2 = c2[d], n2 = e2 - l2;
        const uint64_t *s = scr + l2;
        if (n2 > SUB_SORT) {
            ix_sort_u64_below(scr + l2, n2, sh2);
            scan_runs(idx, t, k, s, n2, 0, near, o);
        } else if (n2 > NEAR_MIN) {
            size_t nh = near(s, n2, k, hits);
            for (size_t h = 0; h < nh; h++) {
                size_t x = hits[h] >> 16, y = hits[h] & 0xffff;
                if (((s[x] ^ s[y]) >> keyshift) != 0)
                    continue; /* a different key */
                if (keep_pair(idx, t, s, x, y, 0, o) != 0)
                    return;
            }
        } else {
            for (size_t x = 0; x + 1 < n2; x++)
                for (size_t y = x + 1; y < n2; y++) {
                    uint64_t dd = s[x] ^ s[y];
                    if ((dd >> keyshift) == 0 && (unsigned)__builtin_popcountll(dd) <= k &&
                        keep_pair(idx, t, s, x, y, 0, o) != 0)
                        return;
                }
        }
        l2 = e2;
    }
}

static unsigned stream_bits(const struct ix_perm *p, uint32_t n)
{
    unsigned lg = 0, d;
    while (lg < 31 && ((uint64_t)1 << (lg + 1)) <= n)
        lg++;
    d = lg > 12 ? lg - 12 : 1; /* about 4096 entries a bucket */
    if (d > STREAM_BITS_MAX)
        d = STREAM_BITS_MAX;
    if (d > p->key_bits)
        d = p->key_bits;
    return d;
}

static void find_positions(const struct dedup_index *idx, const uint64_t *fp, size_t m,
                           uint32_t *out)
{
    enum { BATCH = 64 };
    const uint32_t *dir = idx->dir[0];
    const uint64_t *v = idx->tab[0];
    unsigned bits = idx->dir_bits;
    for (size_t s = 0; s < m; s += BATCH) {
        size_t e = s + BATCH < m ? s + BATCH : m;
        for (size_t i = s; i < e; i++)
            __builtin_prefetch(&dir[ix_top(fp[i], bits)]);
        for (size_t i = s; i < e; i++)
            __builtin_prefetch(&v[dir[ix_top(fp[i], bits)]]);
        for (size_t i = s; i < e; i++) {
            uint64_t b = ix_top(fp[i], bits);
            uint32_t l = dir[b], h = dir[b + 1];
            while (l < h) {
                uint32_t mid = l + (h - l) / 2;
                if (v[mid] < fp[i])
                    l = mid + 1;
                else
                    h = mid;
            }
            out[i] = l < dir[b + 1] && v[l] == fp[i] ? l : IX_NONE;
        }
    }
}

static void stream_run(void *arg, unsigned tid, struct ix_team *team)
{
    struct stream_job *j = arg;
    const struct dedup_index *idx = j->idx;
    struct stream_out *o = &j->out[tid];
    unsigned nt = ix_team_size(team);
    const uint64_t *v0 = idx->tab[0];
    uint32_t n = idx->nmain;
    size_t lo = (size_t)n * tid / nt, hi = (size_t)n * (tid + 1) / nt;
    uint64_t *scr = NULL;
    size_t capscr = 0;

    /* table 0 is sorted already: each thread scans its share, cut at run starts */
    {
        unsigned kb = idx->perm[0].key_bits;
        size_t a = lo, b = hi;
        while (a > 0 && a < n && ix_top(v0[a], kb) == ix_top(v0[a - 1], kb))
            a++;
        while (b > 0 && b < n && ix_top(v0[b], kb) == ix_top(v0[b - 1], kb))
            b++;
        if (a < b)
            scan_runs(idx, 0, j->k, v0 + a, b - a, a, j->near, o);
    }
    for (unsigned t = 1; t < idx->ntables; t++) {
        const struct ix_perm *p = &idx->perm[t];
        unsigned bits = stream_bits(p, n), shift = 64 - bits;
        size_t nb = (size_t)1 << bits, off[1u << STREAM_BITS_MAX];
        size_t *c = j->cnt[tid];
        memset(c, 0, nb * sizeof *c);
        for (size_t i = lo; i < hi; i++)
            c[ix_perm_top(p, v0[i], bits)]++;
        ix_team_sync(team);
        size_t acc = 0, maxb = 0;
        for (size_t b = 0; b < nb; b++) {
            size_t start = acc;
            for (unsigned u = 0; u < nt; u++) {
                if (u == tid)
                    off[b] = acc;
                acc += j->cnt[u][b];
            }
            if (acc - start > maxb)
                maxb = acc - start;
            if (tid == 0)
                j->end[b] = acc;
        }
        for (size_t i = lo; i < hi; i++) {
            uint64_t x = ix_permute(p, v0[i]);
            j->buf[off[x >> shift]++] = x;
        }
        ix_team_sync(team);
        if (maxb > capscr) {
            free(scr);
            capscr = maxb;
            scr = malloc(capscr * sizeof *scr); /* NULL: the in-place sort */
            if (!scr)
                capscr = 0;
        }
        for (size_t b = tid; b < nb; b += nt) {
            size_t s = b ? j->end[b - 1] : 0, m = j->end[b] - s;
            if (m < 2)
                continue;
            if (o->rc == DEDUP_OK)
                stream_bucket(idx, t, j->k, j->buf + s, m, shift, scr, j->near, o);
        }
    }
    free(scr);
    /* the fingerprint pairs' positions, each thread its own (no barrier needed: table 0
     * is only read) */
    if (o->rc == DEDUP_OK && o->nval) {
        o->valpos = malloc(o->nval * sizeof *o->valpos);
        if (o->valpos)
            find_positions(idx, o->val, o->nval, o->valpos);
        else
            o->rc = DEDUP_ENOMEM;
    }
}

/* out[i] = position of fp[i] in table 0 (IX_NONE when absent), in batches with the
 * directory and table reads prefetched. */
static enum dedup_code stream_pairs(struct dedup_index *idx, unsigned k, unsigned threads,
                                    uint64_t **pairs, size_t *npairs)
{
    enum dedup_code rc = DEDUP_ENOMEM;
    uint64_t *all = NULL;
    struct stream_job *j = calloc(1, sizeof *j);
    if (!j)
        return DEDUP_ENOMEM;
    j->idx = idx;
    j->k = k;
    j->near = ix_near_pick();
    if (threads > IX_THREADS_MAX_PAIRS)
        threads = IX_THREADS_MAX_PAIRS;
    if (idx->nmain < 65536)
        threads = 1;
    /* the buffer the compaction left for the tails (ix_tails_finish), else one */
    bool own_buf = !idx->tail_buf && idx->ntables > 1;
    j->buf = idx->tail_buf ? idx->tail_buf
             : own_buf     ? ix_scratch_take(idx, (size_t)idx->nmain * sizeof *j->buf, SIZE_MAX)
                           : NULL;
    if (idx->ntables > 1 && !j->buf)
        goto done;
    unsigned ran = ix_team_run(threads, stream_run, j);
    if (own_buf) /* written: the pairs' arrays below and the expansion's take it */
        dedup_index_give_scratch(idx, j->buf, (size_t)idx->nmain * sizeof *j->buf);
    j->buf = NULL;
    ix_tails_finish(idx);
    size_t total = 0;
    rc = DEDUP_OK;
    for (unsigned u = 0; u < ran; u++) {
        if (j->out[u].rc != DEDUP_OK && rc == DEDUP_OK)
            rc = j->out[u].rc;
        total += j->out[u].npos + j->out[u].nval / 2;
    }
    if (rc == DEDUP_OK && total > DEDUP_PAIRS_MAX_DISTINCT)
        rc = DEDUP_ETOOLARGE;
    if (rc != DEDUP_OK)
        goto done;
    rc = DEDUP_ENOMEM;
    all = ix_scratch_take(idx, (total ? total : 1) * sizeof *all, SIZE_MAX);
    if (!all)
        goto done;
    size_t o = 0;
    for (unsigned u = 0; u < ran; u++) {
        struct stream_out *so = &j->out[u];
        const uint32_t *posv = so->valpos;
        if (so->npos)
            memcpy(all + o, so->pos, so->npos * sizeof *all);
        o += so->npos;
        for (size_t i = 0; i + 1 < so->nval; i += 2) {
            uint32_t px = posv[i], py = posv[i + 1];
            if (px == IX_NONE || py == IX_NONE || px == py)
                continue;
            uint32_t a = px < py ? px : py, b = px < py ? py : px;
            all[o++] = (uint64_t)a << 32 | b;
        }
    }
    ix_sort_u64(all, o);
    *pairs = all;
    *npairs = o;
    all = NULL;
    rc = DEDUP_OK;
done:
    for (unsigned u = 0; u < IX_THREADS_MAX_PAIRS; u++) {
        free(j->out[u].pos);
        free(j->out[u].val);
        free(j->out[u].valpos);
    }
    free(j->buf);
    free(j);
    free(all);
    return rc;
}

enum dedup_code ix_distinct_pairs(struct dedup_index *idx, unsigned k, unsigned threads,
                                  uint64_t **pairs, size_t *npairs)
{
    struct pairs_job j;
    enum dedup_code rc;
    uint64_t *all = NULL;
    *pairs = NULL;
    *npairs = 0;
    if (k > idx->design.k)
        return DEDUP_EINVAL;
    /* a fresh index: build table 0 only and stream the others (stream_pairs) */
    if (!idx->nmain && !idx->ndelta && idx->ndocs > idx->absorbed)
        idx->lazy = true;
    rc = ix_compact(idx, threads);
    if (rc != DEDUP_OK) {
        if (!idx->nmain)
            idx->lazy = false;
        return rc;
    }
    if (idx->lazy) {
        rc = stream_pairs(idx, k, threads, pairs, npairs);
        ix_tails_finish(idx); /* if it stopped before the tables */
        return rc;
    }
    memset(&j, 0, sizeof j);
    j.idx = idx;
    j.k = k;
    (void)ix_parallel(threads, idx->ntables, pairs_table, &j);
    size_t total = 0;
    for (unsigned t = 0; t < idx->ntables; t++) {
        if (j.rc[t] != DEDUP_OK && rc == DEDUP_OK)
            rc = j.rc[t];
        total += j.n[t];
    }
    if (rc == DEDUP_OK && total > DEDUP_PAIRS_MAX_DISTINCT)
        rc = DEDUP_ETOOLARGE;
    if (rc != DEDUP_OK)
        goto done;
    all = malloc((total ? total : 1) * sizeof *all);
    if (!all) {
        rc = DEDUP_ENOMEM;
        goto done;
    }
    size_t o = 0;
    for (unsigned t = 0; t < idx->ntables; t++) {
        if (j.n[t])
            memcpy(all + o, j.out[t], j.n[t] * sizeof *all);
        o += j.n[t];
    }
    ix_sort_u64(all, total);
    *pairs = all;
    *npairs = total;
    all = NULL;
done:
    for (unsigned t = 0; t < idx->ntables; t++)
        free(j.out[t]);
    free(all);
    return rc;
}

uint32_t *ix_doc_positions(const struct dedup_index *idx)
{
    uint32_t *pos = malloc((idx->ndocs ? idx->ndocs : 1) * sizeof *pos);
    if (!pos)
        return NULL;
    for (uint32_t i = 0; i < idx->nmain; i++)
        for (uint32_t d = idx->head[i]; d != IX_NONE; d = idx->doc_next[d])
            pos[d] = i;
    return pos;
}

/* The position of each document that is in some pair (its fingerprint has a neighbour or
 * another document), IX_NONE for the others: the expansion skips those. */
static uint32_t *paired_positions(const struct dedup_index *idx, const uint32_t *off)
{
    uint32_t *pos = malloc((idx->ndocs ? idx->ndocs : 1) * sizeof *pos);
    if (!pos)
        return NULL;
    memset(pos, 0xff, (size_t)idx->ndocs * sizeof *pos);
    for (uint32_t i = 0; i < idx->nmain; i++)
        if (off[i] != off[i + 1] || idx->head[i] != idx->tail[i])
            for (uint32_t d = idx->head[i]; d != IX_NONE; d = idx->doc_next[d])
                pos[d] = i;
    return pos;
}

struct cand {
    uint32_t b;
    unsigned distance;
};

static int cand_cmp(const void *x, const void *y)
{
    const struct cand *a = x, *b = y;
    return a->b < b->b ? -1 : a->b > b->b;
}

/* What the expansion reads: the adjacency of distinct fingerprints and the position of
 * each paired document. */
struct expand {
    const struct dedup_index *idx;
    const uint32_t *off, *adj, *pos;
    uint32_t min_b;
};

/* One worker's state: its candidate buffer and where it stopped. */
struct expand_run {
    struct cand *cand;
    size_t capcand;
    uint32_t next_a; /* the first document not completely reported */
    int oom;
};

#define EXPAND_BUFFER_FULL 0x7fff0001 /* a buffer sink's "stop": not an error */

/* Reports the pairs (a, b) for a in [lo, hi) in order through fn; returns fn's non-zero
 * value (run->next_a is then the a being reported), or 0 (next_a = hi). */
static int expand_range(const struct expand *e, uint32_t lo, uint32_t hi, dedup_pair_fn fn,
                        void *userdata, struct expand_run *run)
{
    const struct dedup_index *idx = e->idx;
    const uint32_t *off = e->off, *adj = e->adj, *pos = e->pos;
    for (uint32_t a = lo; a < hi; a++) {
        uint32_t pa = pos[a];
        size_t ncand = 0;
        run->next_a = a;
        if (a + 16 < hi && pos[a + 16] != IX_NONE)
            __builtin_prefetch(&off[pos[a + 16]]); /* the lists ahead are random reads */
        if (pa == IX_NONE)
            continue;
        uint64_t fa = idx->doc_fp[a];
        for (uint32_t i = off[pa]; i <= off[pa + 1]; i++) {
            /* i == off[pa + 1] stands for a's own fingerprint (the later documents) */
            uint32_t d = i < off[pa + 1] ? idx->head[adj[i]] : idx->doc_next[a];
            for (; d != IX_NONE; d = idx->doc_next[d]) {
                if (d <= a || d < e->min_b)
                    continue;
                if (ncand == run->capcand) {
                    size_t nc = run->capcand ? run->capcand * 2 : 64;
                    struct cand *nv = realloc(run->cand, nc * sizeof *nv);
                    if (!nv) {
                        run->oom = 1;
                        return EXPAND_BUFFER_FULL;
                    }
                    run->cand = nv;
                    run->capcand = nc;
                }
                run->cand[ncand++] = (struct cand){d, dedup_distance(fa, idx->doc_fp[d])};
            }
        }
        if (ncand > 1)
            qsort(run->cand, ncand, sizeof *run->cand, cand_cmp);
        for (size_t i = 0; i < ncand; i++) {
            int r = fn(userdata, a, run->cand[i].b, run->cand[i].distance);
            if (r)
                return r;
        }
    }
    run->next_a = hi;
    return 0;
}

/* A second thread expands the upper half of the documents into a capped buffer of
 * (a, b, distance) while the caller reports the lower half; the buffer is then replayed,
 * and if it filled up (a huge group of identical pages), the rest is expanded here. */
#define EXPAND_BUFFER_MAX ((size_t)1 << 20) /* triples buffered by the second thread */

struct triple {
    uint32_t a, b, distance;
};

struct buffer_sink {
    struct triple *v;
    size_t n, cap, a_start; /* a_start: index where the current document's pairs begin */
    uint32_t cur_a;
};

static int buffer_push(void *userdata, uint32_t a, uint32_t b, unsigned distance)
{
    struct buffer_sink *s = userdata;
    if (a != s->cur_a || s->n == 0) {
        s->cur_a = a;
        s->a_start = s->n;
    }
    if (s->n == s->cap) {
        size_t nc = s->cap ? s->cap * 2 : 4096;
        struct triple *nv = nc <= EXPAND_BUFFER_MAX ? realloc(s->v, nc * sizeof *nv) : NULL;
        if (!nv) {
            s->n = s->a_start; /* drop the partial document: it is redone by the caller */
            return EXPAND_BUFFER_FULL;
        }
        s->v = nv;
        s->cap = nc;
    }
    s->v[s->n++] = (struct triple){a, b, distance};
    return 0;
}

struct upper_job {
    const struct expand *e;
    uint32_t lo, hi;
    struct buffer_sink sink;
    struct expand_run run;
};

static void *upper_half(void *arg)
{
    struct upper_job *j = arg;
    (void)expand_range(j->e, j->lo, j->hi, buffer_push, &j->sink, &j->run);
    return NULL;
}

/* The expansion of every document, in (a, b) order, on up to two threads. */
static int expand_all(const struct expand *e, unsigned threads, dedup_pair_fn fn, void *userdata,
                      int *oom)
{
    struct expand_run run = {NULL, 0, 0, 0};
    uint32_t n = e->idx->ndocs, mid = n / 2;
    struct upper_job j;
    memset(&j, 0, sizeof j);
    pthread_t th;
    int r = 0, started = threads > 1 && n > 1;
    if (started) {
        j.e = e;
        j.lo = mid;
        j.hi = n;
        started = pthread_create(&th, NULL, upper_half, &j) == 0;
    }
    uint32_t from = 0;
    if (started) {
        r = expand_range(e, 0, mid, fn, userdata, &run);
        pthread_join(th, NULL);
        /* replay what the other thread buffered, then go on where it stopped */
        for (size_t i = 0; r == 0 && !run.oom && i < j.sink.n; i++)
            r = fn(userdata, j.sink.v[i].a, j.sink.v[i].b, j.sink.v[i].distance);
        from = j.run.next_a;
        free(j.sink.v);
        free(j.run.cand);
    }
    if (r == 0 && !run.oom)
        r = expand_range(e, from, n, fn, userdata, &run);
    free(run.cand);
    *oom = run.oom;
    return run.oom ? 0 : r;
}

/* The document pairs straight from the distinct pairs when there are few enough of them
 * (at most EXPAND_DIRECT_MAX, 8 bytes each): each distinct pair crossed with its two
 * document lists, each fingerprint with several documents paired within its list, then
 * one sort of the packed (a, b). Far cheaper than the per-document expansion below, which
 * visits every document and follows lists at random, but its memory grows with the
 * pairs: past the cap (a few huge groups of identical pages) the expansion takes over.
 * Returns 1 when it did the work (*r: fn's value), 0 to fall back, -1 out of memory. */
#define EXPAND_DIRECT_MAX ((uint64_t)1 << 24)

static uint64_t list_len(const struct dedup_index *idx, uint32_t pos, uint64_t cap)
{
    if (idx->head[pos] == idx->tail[pos])
        return 1;
    uint64_t n = 0;
    for (uint32_t d = idx->head[pos]; d != IX_NONE && n <= cap; d = idx->doc_next[d])
        n++;
    return n;
}

/* The direct expansion's two passes split between threads: part i counts, then fills, the
 * document pairs of distinct pairs [np * i / parts, np * (i + 1) / parts) and of the
 * fingerprints [nmain * i / parts, ...) into its own stretch of v (after the parts before). */
#define EXPAND_PARTS_MAX 16u

struct direct_job {
    const struct dedup_index *idx;
    const uint64_t *pairs;
    size_t npairs;
    uint32_t min_b;
    unsigned parts;
    uint64_t count[EXPAND_PARTS_MAX]; /* > EXPAND_DIRECT_MAX: over the cap */
    uint64_t *v;
    size_t at[EXPAND_PARTS_MAX + 1]; /* part i fills v[at[i] .. at[i + 1]) at most */
    size_t filled[EXPAND_PARTS_MAX];
};

static void direct_bounds(const struct direct_job *j, unsigned i, size_t *plo, size_t *phi,
                          uint32_t *flo, uint32_t *fhi)
{
    *plo = (size_t)((uint64_t)j->npairs * i / j->parts);
    *phi = (size_t)((uint64_t)j->npairs * (i + 1) / j->parts);
    *flo = (uint32_t)((uint64_t)j->idx->nmain * i / j->parts);
    *fhi = (uint32_t)((uint64_t)j->idx->nmain * (i + 1) / j->parts);
}

static void direct_count(void *arg, unsigned part)
{
    struct direct_job *j = arg;
    const struct dedup_index *idx = j->idx;
    size_t plo, phi;
    uint32_t flo, fhi;
    direct_bounds(j, part, &plo, &phi, &flo, &fhi);
    uint64_t total = 0;
    for (size_t i = plo; i < phi && total <= EXPAND_DIRECT_MAX; i++) {
        if (i + 16 < phi) { /* the lists' heads and tails are random reads */
            __builtin_prefetch(&idx->head[(uint32_t)(j->pairs[i + 16] >> 32)]);
            __builtin_prefetch(&idx->tail[(uint32_t)(j->pairs[i + 16] >> 32)]);
            __builtin_prefetch(&idx->head[(uint32_t)j->pairs[i + 16]]);
            __builtin_prefetch(&idx->tail[(uint32_t)j->pairs[i + 16]]);
        }
        total += list_len(idx, (uint32_t)(j->pairs[i] >> 32), EXPAND_DIRECT_MAX) *
                 list_len(idx, (uint32_t)j->pairs[i], EXPAND_DIRECT_MAX);
    }
    for (uint32_t i = flo; i < fhi && total <= EXPAND_DIRECT_MAX; i++) {
        if (idx->head[i] == idx->tail[i])
            continue;
        uint64_t l = list_len(idx, i, EXPAND_DIRECT_MAX);
        total += l * (l - 1) / 2;
    }
    j->count[part] = total;
}

static void direct_fill(void *arg, unsigned part)
{
    struct direct_job *j = arg;
    const struct dedup_index *idx = j->idx;
    size_t plo, phi;
    uint32_t flo, fhi;
    direct_bounds(j, part, &plo, &phi, &flo, &fhi);
    uint64_t *v = j->v;
    size_t o = j->at[part];
    for (size_t i = plo; i < phi; i++) {
        uint32_t x = (uint32_t)(j->pairs[i] >> 32), y = (uint32_t)j->pairs[i];
        if (i + 16 < phi) {
            __builtin_prefetch(&idx->head[(uint32_t)(j->pairs[i + 16] >> 32)]);
            __builtin_prefetch(&idx->head[(uint32_t)j->pairs[i + 16]]);
        }
        for (uint32_t a = idx->head[x]; a != IX_NONE; a = idx->doc_next[a])
            for (uint32_t b = idx->head[y]; b != IX_NONE; b = idx->doc_next[b]) {
                uint32_t lo = a < b ? a : b, hi = a < b ? b : a;
                if (hi >= j->min_b)
                    v[o++] = (uint64_t)lo << 32 | hi;
            }
    }
    for (uint32_t i = flo; i < fhi; i++) {
        if (idx->head[i] == idx->tail[i])
            continue;
        /* a list is in document order: a before every later b */
        for (uint32_t a = idx->head[i]; a != IX_NONE; a = idx->doc_next[a])
            for (uint32_t b = idx->doc_next[a]; b != IX_NONE; b = idx->doc_next[b])
                if (b >= j->min_b)
                    v[o++] = (uint64_t)a << 32 | b;
    }
    j->filled[part] = o - j->at[part];
}

static int expand_direct(struct dedup_index *idx, const uint64_t *pairs, size_t npairs,
                         uint32_t min_b, unsigned threads, dedup_pair_array_fn array_fn,
                         dedup_pair_fn fn, void *userdata, int *r)
{
    struct direct_job j = {.idx = idx, .pairs = pairs, .npairs = npairs, .min_b = min_b};
    j.parts = threads < 1 ? 1 : threads > EXPAND_PARTS_MAX ? EXPAND_PARTS_MAX : threads;
    if (npairs + idx->nmain < 65536)
        j.parts = 1;
    (void)ix_parallel(j.parts, j.parts, direct_count, &j);
    uint64_t total = 0;
    for (unsigned i = 0; i < j.parts; i++) {
        j.at[i] = (size_t)total;
        total += j.count[i];
        if (total > EXPAND_DIRECT_MAX)
            return 0;
    }
    j.at[j.parts] = (size_t)total;
    uint64_t *v = ix_scratch_take(idx, (size_t)(total ? total : 1) * sizeof *v, SIZE_MAX);
    if (!v)
        return -1;
    j.v = v;
    (void)ix_parallel(j.parts, j.parts, direct_fill, &j);
    size_t o = j.filled[0]; /* the parts' pairs (those with b >= min_b) made contiguous */
    for (unsigned i = 1; i < j.parts; i++) {
        memmove(v + o, v + j.at[i], j.filled[i] * sizeof *v);
        o += j.filled[i];
    }
    ix_sort_u64(v, o);
    *r = 0;
    if (array_fn) {
        *r = array_fn(userdata, v, o);
        free(v);
        return 1;
    }
    for (size_t i = 0; i < o && *r == 0; i++) {
        /* b is a random document: its fingerprint, id offset and id bytes (which the
         * callback reads to print it) are fetched ahead, the offset first */
        if (i + 16 < o)
            __builtin_prefetch(&idx->id_off[(uint32_t)v[i + 16]]);
        if (i + 8 < o) {
            uint32_t bb = (uint32_t)v[i + 8];
            __builtin_prefetch(&idx->doc_fp[bb]);
            __builtin_prefetch(idx->id_bytes + idx->id_off[bb]);
        }
        uint32_t a = (uint32_t)(v[i] >> 32), b = (uint32_t)v[i];
        *r = fn(userdata, a, b, dedup_distance(idx->doc_fp[a], idx->doc_fp[b]));
    }
    free(v);
    return 1;
}

enum dedup_code dedup_index_pairs(struct dedup_index *idx, unsigned k, unsigned threads,
                                  uint32_t min_b, dedup_pair_fn fn, void *userdata, int *stopped)
{
    return dedup_index_pairs_array(idx, k, threads, min_b, NULL, fn, userdata, stopped);
}

enum dedup_code dedup_index_pairs_array(struct dedup_index *idx, unsigned k, unsigned threads,
                                        uint32_t min_b, dedup_pair_array_fn array_fn,
                                        dedup_pair_fn fn, void *userdata, int *stopped)
{
    uint64_t *pairs = NULL;
    size_t npairs = 0;
    uint32_t *off = NULL, *adj = NULL, *pos = NULL;
    if (stopped)
        *stopped = 0;
    enum dedup_code rc = ix_distinct_pairs(idx, k, threads, &pairs, &npairs);
    if (rc != DEDUP_OK) {
        ix_scratch_release(idx);
        return rc;
    }
    int fr = 0, done_direct =
                    expand_direct(idx, pairs, npairs, min_b, threads, array_fn, fn, userdata, &fr);
    ix_scratch_release(idx);
    if (done_direct != 0) {
        free(pairs);
        if (done_direct < 0)
            return DEDUP_ENOMEM;
        if (fr && stopped)
            *stopped = fr;
        return DEDUP_OK;
    }
    rc = DEDUP_ENOMEM;
    uint32_t n = idx->nmain;
    off = calloc((size_t)n + 1, sizeof *off);
    adj = malloc((npairs ? npairs * 2 : 1) * sizeof *adj);
    if (!off || !adj)
        goto done;
    /* adjacency lists of distinct fingerprints (CSR) */
    for (size_t i = 0; i < npairs; i++) {
        off[pairs[i] >> 32]++;
        off[(uint32_t)pairs[i]]++;
    }
    uint32_t acc = 0;
    for (uint32_t i = 0; i <= n; i++) {
        uint32_t c = i < n ? off[i] : 0;
        off[i] = acc;
        acc += c;
    }
    for (size_t i = 0; i < npairs; i++) {
        uint32_t x = (uint32_t)(pairs[i] >> 32), y = (uint32_t)pairs[i];
        adj[off[x]++] = y;
        adj[off[y]++] = x;
    }
    for (uint32_t i = n; i > 0; i--)
        off[i] = off[i - 1];
    off[0] = 0;
    free(pairs);
    pairs = NULL;
    pos = paired_positions(idx, off);
    if (!pos)
        goto done;

    struct expand e = {idx, off, adj, pos, min_b};
    int oom = 0;
    int r = expand_all(&e, threads, fn, userdata, &oom);
    if (oom)
        goto done;
    if (r && stopped)
        *stopped = r;
    rc = DEDUP_OK;
done:
    free(pairs);
    free(off);
    free(adj);
    free(pos);
    return rc;
}
