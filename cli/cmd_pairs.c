/*
 * simcrawl pairs [--k N] [--format text|jsonl] [--index FILE] [--fingerprints FILE] INPUT...
 *
 * Every pair of documents within Hamming distance k (README.md, "simcrawl pairs"), each pair once,
 * a before b in input order, sorted by (a, b). The fingerprints go into a block-permuted
 * table index (dedup/index.c) whose design is chosen for their number, and
 * dedup_index_pairs() lists the pairs using both cores.
 * With --index FILE the saved index's documents come first (they are "earlier"), only the
 * pairs involving a new input are printed, and the new inputs are added to FILE.
 * With --from-index FILE the pairs are those of a saved index's documents alone: the file
 * is mapped and only read (no INPUT, no text re-read, nothing saved).
 * Output is written through a 1 MiB stdout buffer with a small JSON string escaper of our
 * own (cli_put_json_string): one line per pair at millions of lines a second.
 *
 * Lists alone (no INPUT: the batch case of millions of lines) take a faster road: each
 * line goes straight into the index (no staging copy; the index is made first and its
 * design set once the number of documents is known, dedup_index_set_design), and the
 * duplicate-id check is one batch over the index's ids at the end instead of a 128-bit
 * hash set probed at random per line: each id is hashed once (XXH3-64) as it is read, the
 * hashes are split by their top bits into cache-sized buckets, and within a bucket a small table
 * finds equal hashes, whose ids are then compared byte for byte (so a hash collision is never taken
 * for a duplicate). The later documents of a repeated id are named (list and line, kept as a short
 * map of where the line numbering jumps) and dropped. Both cores share the reading of a large list
 * file (read_list_split: each part parsed straight into the index's own arrays, nothing copied
 * afterwards) and every phase of the check.
 */
#define _GNU_SOURCE /* madvise(MADV_POPULATE_WRITE) under -D_POSIX_C_SOURCE */
#include "cli/cli.h"
#include "cli/inputs.h"
#include "cli/minhash.h"

#include <errno.h>
#include <fcntl.h>
#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define CMD "pairs"

/* SIMCRAWL_PROFILE set (and not empty): each phase's end on stderr, wall and CPU seconds
 * (all threads) since the command started and the calling thread's CPU seconds: "simcrawl
 * pairs: profile PHASE wall W cpu C main thread M". The main thread does every serial
 * step, so on a loaded machine M is the steadier measure of the critical path. */
static void profile_mark(const char *phase)
{
    static int on = -1;
    static struct timespec w0, c0;
    if (on < 0) {
        const char *e = getenv("SIMCRAWL_PROFILE");
        on = e && *e;
        clock_gettime(CLOCK_MONOTONIC, &w0);
        clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c0);
    }
    if (!on || !phase)
        return;
    struct timespec w, c, m;
    clock_gettime(CLOCK_MONOTONIC, &w);
    clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &c);
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &m);
    fprintf(stderr, "simcrawl " CMD ": profile %s wall %.3f cpu %.3f main thread %.3f\n", phase,
            (double)(w.tv_sec - w0.tv_sec) + (double)(w.tv_nsec - w0.tv_nsec) / 1e9,
            (double)(c.tv_sec - c0.tv_sec) + (double)(c.tv_nsec - c0.tv_nsec) / 1e9,
            (double)m.tv_sec + (double)m.tv_nsec / 1e9);
}

/* A finished run leaves its index, staged documents and inputs (about 850 MB at 10M
 * documents) to the process exit, as many command-line tools do: the exit unmaps them in
 * any case, and freeing them first took 0.05-0.08 CPU s (0.05-0.18 s wall) at 10M. Under
 * AddressSanitizer (make asan) everything is freed, so its leak check sees every run. */
#if defined(__SANITIZE_ADDRESS__)
#define PAIRS_FREE_AT_EXIT 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer) || __has_feature(leak_sanitizer)
#define PAIRS_FREE_AT_EXIT 1
#endif
#endif
#ifndef PAIRS_FREE_AT_EXIT
#define PAIRS_FREE_AT_EXIT 0
#endif

static void usage(FILE *out)
{
    fprintf(out,
            "usage: simcrawl pairs [options] INPUT...\n"
            "       simcrawl pairs [--k N] [--format text|jsonl] --from-index FILE\n"
            "\n"
            "Prints every pair of documents whose fingerprints are within Hamming distance k,\n"
            "each pair once, the earlier input first, sorted by input order.\n"
            "INPUT is an HTML file, a directory (walked in name order for *.html, *.htm,\n"
            "*.warc, *.warc.gz), a WARC file (each HTML response record; the id is its\n"
            "WARC-Target-URI) or - (a page on standard input); other ids are the paths.\n"
            "\n"
            "options:\n"
            "  --k N                 the largest distance, 0..7 (default 3)\n"
            "  --method simhash|minhash\n"
            "                        simhash (default): fingerprints within --k;\n"
            "                        minhash: pairs whose estimated Jaccard similarity of\n"
            "                        their word-shingle sets is >= --threshold (MinHash\n"
            "                        signatures, LSH bands; docs/MINHASH.md); text output\n"
            "                        is JACCARD<TAB>A<TAB>B, jsonl {\"a\", \"b\", \"jaccard\"}\n"
            "  --threshold J         minhash: the Jaccard threshold, above 0 and at most 1\n"
            "                        (default 0.8; with --index: the index's)\n"
            "  --shingle-words N     minhash: words per shingle, 1..32 (default 5)\n"
            "  --num-perm N          minhash: values per signature, 1..1024 (default 128)\n"
            "  --format text|jsonl   text (default): DISTANCE<TAB>A<TAB>B per line;\n"
            "                        jsonl: {\"a\": A, \"b\": B, \"distance\": D} per line\n"
            "  --fingerprints FILE   also read precomputed fingerprints: lines \"HEX ID\"\n"
            "                        (16 hex digits, spaces, the id; the output of\n"
            "                        'simcrawl fingerprint'); - is standard input; repeatable.\n"
            "                        Lists are read before the INPUTs. With --method\n"
            "                        minhash: a MinHash signature list ('simcrawl\n"
            "                        fingerprint --method minhash', docs/MINHASH.md)\n"
            "  --index FILE          compare with a saved index too (its documents count as\n"
            "                        earlier), print only pairs with a new input, then add the\n"
            "                        new inputs to FILE (made if missing); --k defaults to\n"
            "                        the index's k when that is smaller than 3; the\n"
            "                        index's template table is extended and saved with it\n"
            "  --from-index FILE     all pairs of the documents of a saved index, read from\n"
            "                        FILE alone (no INPUT; the file is only read, not\n"
            "                        locked or changed); --k defaults to the index's k\n"
            "                        when that is smaller than 3\n"
            "  --lock-wait SECONDS   with --index: how long to wait while another writer\n"
            "                        holds FILE.lock (default %ld; 0: fail at once, exit 2)\n"
            "  --max-depth N         skip elements nested deeper than N (default 256);\n"
            "                        a page cut so is named on stderr. It changes the\n"
            "                        fingerprints: keep it the same for one index\n"
            "  --no-templates        fingerprint the whole main text of each page; by default\n"
            "                        text blocks on >= 3 pages and >= 20%% of the pages of\n"
            "                        one host (files: of all the inputs) are the site's\n"
            "                        template and left out (two passes over the inputs;\n"
            "                        docs/FINGERPRINT.md, Template blocks)\n"
            "  --quiet               no counts of skipped documents on stderr\n"
            "  -h, --help            this help\n"
            "  --                    end of options\n"
            "\n"
            "In text output, control characters and backslashes in ids are written as \\xHH\n"
            "and \\\\. A second document with an id already seen is skipped (the first is\n"
            "kept).\n"
            "exit status: 0 success, 1 usage error, 2 some input could not be read or\n"
            "fingerprinted (named on stderr; the others are still compared), or an error\n"
            "(the --index FILE stayed locked by another writer, ...).\n"
            "environment: SIMCRAWL_PROFILE=1 says on stderr when each phase ended (wall\n"
            "and CPU seconds since the start, all threads and the main thread's).\n",
            CLI_LOCK_WAIT_DEFAULT);
}

struct out_ctx {
    struct dedup_index *idx;
    int jsonl;
    int oom; /* print_pair_array ran out of memory */
};

/* Whether id needs no escaping in either format (printable ASCII, no quote or backslash):
 * then a line is assembled in a buffer and written with one fwrite. */
static int plain_id(const char *id, size_t len)
{
    unsigned char bad = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)id[i];
        bad |= (unsigned char)(c < 0x20 || c >= 0x7f || c == '"' || c == '\\');
    }
    return !bad;
}

static size_t put_uint(char *p, unsigned v)
{
    char t[12];
    size_t n = 0;
    do {
        t[n++] = (char)('0' + v % 10);
        v /= 10;
    } while (v);
    for (size_t i = 0; i < n; i++)
        p[i] = t[n - 1 - i];
    return n;
}

#define LINE_FAST_MAX 4000 /* ids up to this long together take the one-fwrite road */

/* Pair (a, b)'s line assembled at p (room for LINE_FAST_MAX + 64 bytes) when both ids are
 * plain (plain_id) and together at most LINE_FAST_MAX bytes long: its length; else 0, and
 * put_line_escaped writes it. */
static size_t format_plain(char *p, int jsonl, const char *ia, size_t la, const char *ib, size_t lb,
                           unsigned distance)
{
    if (la + lb > LINE_FAST_MAX || !plain_id(ia, la) || !plain_id(ib, lb))
        return 0;
    char *s = p;
    if (jsonl) {
#define PUT_LIT(lit) (memcpy(p, lit, sizeof lit - 1), p += sizeof lit - 1)
        PUT_LIT("{\"a\": \"");
        memcpy(p, ia, la);
        p += la;
        PUT_LIT("\", \"b\": \"");
        memcpy(p, ib, lb);
        p += lb;
        PUT_LIT("\", \"distance\": ");
#undef PUT_LIT
        p += put_uint(p, distance);
        *p++ = '}';
    } else {
        p += put_uint(p, distance);
        *p++ = '\t';
        memcpy(p, ia, la);
        p += la;
        *p++ = '\t';
        memcpy(p, ib, lb);
        p += lb;
    }
    *p++ = '\n';
    return (size_t)(p - s);
}

/* The line of a pair whose ids need escaping (JSON string, or \xHH in text). */
static void put_line_escaped(FILE *out, int jsonl, const char *ia, size_t la, const char *ib,
                             size_t lb, unsigned distance)
{
    char value[12];
    snprintf(value, sizeof value, "%u", distance);
    cli_put_pair_line(out, jsonl, ia, la, ib, lb, "distance", value);
}

static int print_pair(void *userdata, uint32_t a, uint32_t b, unsigned distance)
{
    struct out_ctx *o = userdata;
    size_t la, lb;
    const char *ia = dedup_index_id(o->idx, a, &la), *ib = dedup_index_id(o->idx, b, &lb);
    char line[LINE_FAST_MAX + 64];
    size_t n = format_plain(line, o->jsonl, ia, la, ib, lb, distance);
    if (n)
        fwrite(line, 1, n, stdout);
    else
        put_line_escaped(stdout, o->jsonl, ia, la, ib, lb, distance);
    return ferror(stdout) ? 1 : 0;
}

/* ---- the pairs formatted on several threads, written in order ----
 *
 * When the engine hands the sorted pairs over as one array (dedup_index_pairs_array), the
 * array is cut into blocks of OUT_BLOCK pairs; worker u formats blocks u, u + W, u + 2W...
 * into ring slots (block i into slot i % slots, once block i - slots is written) and the
 * calling thread writes the slots to stdout in block order: the bytes are those print_pair
 * writes pair after pair. A block first gathers each pair's ids and distance (reads at
 * random in the id arrays, independent of each other so the core overlaps them), then
 * formats the lines with the ids ahead prefetched. Lines with ids to escape go through
 * put_line_escaped into a memory stream of the block and are copied from it. */
#define OUT_BLOCK 8192u
#define OUT_WORKERS_MAX 8u
#define OUT_SLOTS_MAX (2 * OUT_WORKERS_MAX)

struct out_buf {
    char *p;
    size_t len, cap;
};

struct out_item {
    const char *ia, *ib;
    size_t la, lb;
    unsigned distance;
};

struct out_par {
    const struct dedup_index *idx;
    const uint64_t *pairs;
    size_t n, nblocks;
    int jsonl;
    unsigned workers, slots;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    struct out_buf slot[OUT_SLOTS_MAX];
    size_t ready[OUT_SLOTS_MAX]; /* the block formatted in the slot + 1; 0: none */
    size_t written;              /* blocks written to stdout */
    int failed;                  /* out of memory or a write error: every thread stops */
};

static int out_reserve(struct out_buf *b, size_t more)
{
    if (more <= b->cap - b->len)
        return 0;
    size_t cap = b->cap ? b->cap : (size_t)1 << 20;
    while (cap - b->len < more)
        cap *= 2;
    char *p = realloc(b->p, cap);
    if (!p)
        return -1;
    b->p = p;
    b->cap = cap;
    return 0;
}

/* The line of an item with ids to escape, appended to b through a memory stream. */
static int out_escaped(struct out_buf *b, int jsonl, const struct out_item *it)
{
    char *text = NULL;
    size_t len = 0;
    FILE *ms = open_memstream(&text, &len);
    if (!ms)
        return -1;
    put_line_escaped(ms, jsonl, it->ia, it->la, it->ib, it->lb, it->distance);
    int bad = ferror(ms);
    if (fclose(ms) != 0 || bad || out_reserve(b, len) != 0) {
        free(text);
        return -1;
    }
    memcpy(b->p + b->len, text, len);
    b->len += len;
    free(text);
    return 0;
}

/* Block i of the pairs formatted into b (emptied first). 0, or -1 out of memory. */
static int out_format(const struct out_par *o, size_t i, struct out_buf *b, struct out_item *it)
{
    size_t lo = i * OUT_BLOCK, hi = lo + OUT_BLOCK < o->n ? lo + OUT_BLOCK : o->n;
    b->len = 0;
    for (size_t x = lo; x < hi; x++) {
        uint32_t a = (uint32_t)(o->pairs[x] >> 32), d = (uint32_t)o->pairs[x];
        struct out_item *t = &it[x - lo];
        t->ia = dedup_index_id(o->idx, a, &t->la);
        t->ib = dedup_index_id(o->idx, d, &t->lb);
        t->distance =
            dedup_distance(dedup_index_fingerprint(o->idx, a), dedup_index_fingerprint(o->idx, d));
    }
    for (size_t x = 0; x < hi - lo; x++) {
        if (x + 8 < hi - lo)
            __builtin_prefetch(it[x + 8].ib);
        const struct out_item *t = &it[x];
        if (out_reserve(b, LINE_FAST_MAX + 64) != 0)
            return -1;
        size_t n = format_plain(b->p + b->len, o->jsonl, t->ia, t->la, t->ib, t->lb, t->distance);
        b->len += n;
        if (!n && out_escaped(b, o->jsonl, t) != 0)
            return -1;
    }
    return 0;
}

static void out_worker(struct out_par *o, unsigned u)
{
    struct out_item *it = malloc(OUT_BLOCK * sizeof *it);
    if (!it) {
        pthread_mutex_lock(&o->mu);
        o->failed = 1;
        pthread_cond_broadcast(&o->cv);
        pthread_mutex_unlock(&o->mu);
        return;
    }
    for (size_t i = u; i < o->nblocks; i += o->workers) {
        unsigned s = (unsigned)(i % o->slots);
        pthread_mutex_lock(&o->mu);
        while (!o->failed && i >= o->written + o->slots)
            pthread_cond_wait(&o->cv, &o->mu);
        int stop = o->failed;
        pthread_mutex_unlock(&o->mu);
        if (stop)
            break;
        int bad = out_format(o, i, &o->slot[s], it);
        pthread_mutex_lock(&o->mu);
        if (bad)
            o->failed = 1;
        o->ready[s] = i + 1;
        pthread_cond_broadcast(&o->cv);
        pthread_mutex_unlock(&o->mu);
        if (bad)
            break;
    }
    free(it);
}

struct out_thread {
    struct out_par *o;
    unsigned u;
};

static void *out_thread_main(void *arg)
{
    struct out_thread *t = arg;
    out_worker(t->o, t->u);
    return NULL;
}

/* The writer: the calling thread writes the blocks in order as the workers finish them. */
static int out_write_all(struct out_par *o)
{
    for (size_t i = 0; i < o->nblocks; i++) {
        unsigned s = (unsigned)(i % o->slots);
        pthread_mutex_lock(&o->mu);
        while (!o->failed && o->ready[s] != i + 1)
            pthread_cond_wait(&o->cv, &o->mu);
        int stop = o->failed;
        pthread_mutex_unlock(&o->mu);
        if (stop)
            return 1;
        int bad = fwrite(o->slot[s].p, 1, o->slot[s].len, stdout) != o->slot[s].len;
        pthread_mutex_lock(&o->mu);
        if (bad)
            o->failed = 1;
        else
            o->written = i + 1;
        pthread_cond_broadcast(&o->cv);
        pthread_mutex_unlock(&o->mu);
        if (bad)
            return 1;
    }
    return 0;
}

/* dedup_pair_array_fn: the sorted pairs formatted on cli_threads() workers and written in
 * order (one thread: formatted and written block by block). Non-zero on a write error or
 * out of memory (said by the caller). */
static int print_pair_array(void *userdata, const uint64_t *pairs, size_t n)
{
    struct out_ctx *c = userdata;
    profile_mark("pairs found");
    struct out_par *o = calloc(1, sizeof *o);
    if (!o) {
        c->oom = 1;
        return 1;
    }
    *o = (struct out_par){.idx = c->idx, .pairs = pairs, .n = n, .jsonl = c->jsonl};
    o->nblocks = (n + OUT_BLOCK - 1) / OUT_BLOCK;
    unsigned w = cli_threads();
    o->workers = w > OUT_WORKERS_MAX ? OUT_WORKERS_MAX : w;
    if ((size_t)o->workers > o->nblocks)
        o->workers = o->nblocks > 1 ? (unsigned)o->nblocks : 1;
    int r = 0;
    if (o->workers < 2) {
        struct out_item *it = malloc(OUT_BLOCK * sizeof *it);
        r = !it;
        for (size_t i = 0; !r && i < o->nblocks; i++)
            r = out_format(o, i, &o->slot[0], it) != 0 ||
                fwrite(o->slot[0].p, 1, o->slot[0].len, stdout) != o->slot[0].len;
        free(it);
    } else {
        o->slots = 2 * o->workers;
        pthread_mutex_init(&o->mu, NULL);
        pthread_cond_init(&o->cv, NULL);
        pthread_t th[OUT_WORKERS_MAX];
        struct out_thread arg[OUT_WORKERS_MAX];
        unsigned started = 0;
        for (unsigned u = 0; u < o->workers; u++) {
            arg[u] = (struct out_thread){o, u};
            if (pthread_create(&th[u], NULL, out_thread_main, &arg[u]) != 0)
                break;
            started++;
        }
        if (started < o->workers) { /* a worker could not start: its blocks never come */
            pthread_mutex_lock(&o->mu);
            o->failed = 1;
            pthread_cond_broadcast(&o->cv);
            pthread_mutex_unlock(&o->mu);
            r = 1;
        } else {
            r = out_write_all(o);
        }
        for (unsigned u = 0; u < started; u++)
            pthread_join(th[u], NULL);
        pthread_cond_destroy(&o->cv);
        pthread_mutex_destroy(&o->mu);
    }
    for (unsigned s = 0; s < OUT_SLOTS_MAX; s++)
        free(o->slot[s].p);
    c->oom = r && !ferror(stdout); /* not a write error: memory */
    free(o);
    return r || ferror(stdout) ? 1 : 0;
}

/* ---- lists alone: straight into the index, one batch duplicate check ---- */

/* From document `doc` on, documents are on consecutive lines from list:line. */
struct line_mark {
    uint32_t doc;
    const char *list;
    size_t line;
};

struct list_sink {
    struct dedup_index *idx;
    struct line_mark *marks;
    size_t nmarks, capmarks;
    const char *last_list;
    size_t last_line;
    uint64_t *h; /* h[d]: XXH3-64 of document d's id, hashed as it is read (d >= the
                  * documents before the lists), for the duplicate-id check */
    size_t hcap; /* entries allocated */
    int h_nomem; /* a growth failed: the check hashes the ids itself */
};

/* Room in s->h for documents [0, n). 0, or -1 out of memory. */
static int sink_hash_room(struct list_sink *s, size_t n)
{
    if (n <= s->hcap)
        return 0;
    size_t cap = s->hcap ? s->hcap : 65536;
    while (cap < n)
        cap *= 2;
    uint64_t *h = realloc(s->h, cap * sizeof *h);
    if (!h)
        return -1;
    s->h = h;
    s->hcap = cap;
    return 0;
}

static int sink_add(void *userdata, const struct cli_doc *doc)
{
    struct list_sink *s = userdata;
    uint32_t d = dedup_index_doc_count(s->idx);
    if (doc->list != s->last_list || doc->line != s->last_line + 1) {
        if (s->nmarks == s->capmarks) {
            size_t cap = s->capmarks ? s->capmarks * 2 : 64;
            struct line_mark *nm = realloc(s->marks, cap * sizeof *nm);
            if (!nm) {
                cli_error(CMD, "out of memory reading the inputs");
                return 1;
            }
            s->marks = nm;
            s->capmarks = cap;
        }
        s->marks[s->nmarks++] = (struct line_mark){d, doc->list, doc->line};
    }
    s->last_list = doc->list;
    s->last_line = doc->line;
    enum dedup_code rc = dedup_index_add(s->idx, doc->fp, doc->id, doc->id_len, NULL);
    if (rc != DEDUP_OK) {
        cli_error(CMD, "cannot add '%s' to the index: %s", doc->id, dedup_strerror(rc));
        return 1;
    }
    if (!s->h_nomem && sink_hash_room(s, (size_t)d + 1) != 0)
        s->h_nomem = 1; /* then find_duplicate_ids hashes every id */
    if (!s->h_nomem)
        s->h[d] = XXH3_64bits(doc->id, doc->id_len); /* the id is in cache now */
    return 0;
}

/* Where document d (added from a list) came from. */
static const struct line_mark *sink_where(const struct list_sink *s, uint32_t d, size_t *line)
{
    size_t lo = 0, hi = s->nmarks;
    while (hi - lo > 1) {
        size_t mid = lo + (hi - lo) / 2;
        if (s->marks[mid].doc <= d)
            lo = mid;
        else
            hi = mid;
    }
    if (!s->nmarks || s->marks[lo].doc > d)
        return NULL;
    *line = s->marks[lo].line + (d - s->marks[lo].doc);
    return &s->marks[lo];
}

/* ---- a list file read by two threads ----
 *
 * A regular file of at least LIST_SPLIT_MIN bytes is cut at the first line start after
 * LIST_CUT_PERCENT of it. The caller reads the first part as the stream reader does (each entry
 * straight into the index through sink_add); a second thread reads the second part at the same
 * time straight into the index's own arrays too, into a span above the first part's room
 * (dedup_index_span_open): where the first part's documents and id bytes can end at most is
 * known before either starts, from one pass over the first part's line lengths (list_bounds:
 * a line of L bytes holds at most one document, whose id takes at most L - 16 bytes with its
 * NUL; for a list of well-formed lines this is exact, so the span closes where the first part
 * ended and nothing is copied; otherwise the span is moved down over the gap when it closes).
 * The second part's diagnostics and line marks are kept aside and said with the first part's
 * line count added, so the output, the messages and their order are those of one reader. Each
 * part is read with pread in 1 MiB chunks parsed in place (dedup_fplist_feed_inplace). */
#define LIST_SPLIT_MIN ((size_t)8 << 20)
#define LIST_CUT_PERCENT 46
#define LIST_CHUNK ((size_t)1 << 20)
#define LIST_MIN_LINE 18u /* the shortest line with a document: 16 digits, a space, an id */

struct batch_err {
    size_t line;
    const char *what;
};

/* One part of a list file: [from, to) (to = -1: to the end of the file). */
struct list_part {
    int fd;
    off_t from, to;
    size_t lines;   /* lines read: the parser's line count at the end, less one */
    int read_errno; /* a failed pread */
    int stopped;    /* the entry callback stopped the reading */
};

/* The second part: its span of the index, where its line numbering jumps, its first
 * malformed lines. */
struct list_batch {
    struct dedup_index_span span;
    uint64_t *h;             /* the sink's id hashes: h[document number] */
    struct line_mark *marks; /* doc: within the span; line: within the part */
    size_t nmarks, capmarks, last_line;
    struct batch_err errs[CLI_INPUT_WARN_MAX + 1];
    size_t nerrs, more_errs;
    int oom;
};

static void batch_warn(void *userdata, size_t line, const char *what)
{
    struct list_batch *b = userdata;
    if (b->nerrs < CLI_INPUT_WARN_MAX + 1)
        b->errs[b->nerrs++] = (struct batch_err){line, what};
    else
        b->more_errs++;
}

static int batch_entry(void *userdata, uint64_t fp, const char *id, size_t id_len, size_t line)
{
    struct list_batch *b = userdata;
    if (id_len > DEDUP_INDEX_MAX_ID_BYTES) {
        batch_warn(b, line, "id longer than 65536 bytes"); /* as cli_list_entry says */
        return 0;
    }
    if (b->nmarks == 0 || line != b->last_line + 1) {
        if (b->nmarks == b->capmarks) {
            size_t cap = b->capmarks ? b->capmarks * 2 : 64;
            struct line_mark *nm = realloc(b->marks, cap * sizeof *nm);
            if (!nm) {
                b->oom = 1;
                return 1;
            }
            b->marks = nm;
            b->capmarks = cap;
        }
        b->marks[b->nmarks++] = (struct line_mark){(uint32_t)b->span.n, NULL, line};
    }
    b->last_line = line;
    if (dedup_index_span_add(&b->span, fp, id, id_len) != DEDUP_OK) {
        b->oom = 1; /* not within the room reserved (cannot happen): refused, not overrun */
        return 1;
    }
    b->h[b->span.first + b->span.n - 1] = XXH3_64bits(id, id_len);
    return 0;
}

/* Reads part pt through a parser of its own (lines numbered from 1 in the part). */
static void read_part(struct list_part *pt, dedup_fplist_fn fn, dedup_fplist_error_fn err,
                      void *userdata)
{
    struct dedup_fplist *p = dedup_fplist_new();
    char *chunk = malloc(LIST_CHUNK);
    if (!p || !chunk) {
        pt->read_errno = ENOMEM;
        goto done;
    }
    for (off_t at = pt->from; pt->to < 0 || at < pt->to;) {
        size_t want = LIST_CHUNK;
        if (pt->to >= 0 && (off_t)want > pt->to - at)
            want = (size_t)(pt->to - at);
        ssize_t got = pread(pt->fd, chunk, want, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got < 0) {
            pt->read_errno = errno;
            goto done;
        }
        if (got == 0)
            break;
        at += got;
        if (dedup_fplist_feed_inplace(p, chunk, (size_t)got, fn, err, userdata) != 0) {
            pt->stopped = 1;
            goto done;
        }
    }
    if (dedup_fplist_finish(p, fn, err, userdata) != 0)
        pt->stopped = 1;
    pt->lines = dedup_fplist_line(p) - 1;
done:
    free(chunk);
    dedup_fplist_free(p);
}

/* Upper bounds of the documents and id bytes (each id's length + 1) the lines of [0, to) can
 * give (to is a line start): a line of L bytes without its newline holds a document only
 * when L >= LIST_MIN_LINE, and its id then takes at most L - 16 bytes with its NUL (16 hex
 * digits and a space at least before it; a CR or an escape only shortens it). 0, or an
 * errno value. */
static int list_bounds(int fd, off_t to, uint64_t *docs, uint64_t *bytes)
{
    char *buf = malloc(LIST_CHUNK);
    uint64_t d = 0, b = 0;
    size_t carry = 0; /* the bytes of a line begun in an earlier chunk */
    if (!buf)
        return ENOMEM;
    for (off_t at = 0; at < to;) {
        size_t want = (off_t)LIST_CHUNK < to - at ? LIST_CHUNK : (size_t)(to - at);
        ssize_t got = pread(fd, buf, want, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0) {
            int e = got < 0 ? errno : EIO; /* cut short: the file shrank */
            free(buf);
            return e;
        }
        at += got;
        const char *p = buf, *end = buf + got;
        for (const char *nl; (nl = memchr(p, '\n', (size_t)(end - p))) != NULL; p = nl + 1) {
            size_t len = carry + (size_t)(nl - p);
            carry = 0;
            if (len >= LIST_MIN_LINE) {
                d++;
                b += len - 16;
            }
        }
        carry += (size_t)(end - p);
    }
    if (carry >= LIST_MIN_LINE) { /* cannot happen: to is a line start */
        d++;
        b += carry - 16;
    }
    free(buf);
    *docs = d;
    *bytes = b;
    return 0;
}

struct part_job {
    struct list_part part;
    struct list_batch batch;
};

static void *second_part(void *arg)
{
    struct part_job *j = arg;
    read_part(&j->part, batch_entry, batch_warn, &j->batch);
    return NULL;
}

/* The cut: the start of the first line after LIST_CUT_PERCENT of [0, size); 0 when none. */
static off_t list_cut(int fd, off_t size)
{
    char buf[4096];
    for (off_t at = size / 100 * LIST_CUT_PERCENT; at < size;) {
        ssize_t got = pread(fd, buf, sizeof buf, at);
        if (got < 0 && errno == EINTR)
            continue;
        if (got <= 0)
            return 0;
        const char *nl = memchr(buf, '\n', (size_t)got);
        if (nl)
            return at + (nl - buf) + 1 < size ? at + (nl - buf) + 1 : 0;
        at += got;
    }
    return 0;
}

/* The second part's diagnostics said, its marks added to the sink's, its span closed into
 * the index (drop: closed empty, after a failure). CLI_OK or the exit status. */
static int close_batch(struct cli_inputs *in, struct list_sink *s, struct cli_list_ctx *c,
                       struct part_job *j, int drop)
{
    struct list_batch *b = &j->batch;
    if (drop) {
        dedup_index_span_drop(s->idx, &b->span); /* its documents are not taken */
        return CLI_OK;
    }
    size_t base_line = j->part.lines; /* set by the caller: the first part's lines */
    for (size_t i = 0; i < b->nerrs; i++)
        cli_list_warn(c, base_line + b->errs[i].line, b->errs[i].what);
    for (size_t i = 0; i < b->more_errs; i++)
        cli_list_warn(c, 0, ""); /* past CLI_INPUT_WARN_MAX: counted only */
    uint32_t base = dedup_index_doc_count(s->idx);
    int oom = 0;
    for (size_t i = 0; i < b->nmarks && !oom; i++) {
        if (s->nmarks == s->capmarks) {
            size_t cap = s->capmarks ? s->capmarks * 2 : 64;
            struct line_mark *nm = realloc(s->marks, cap * sizeof *nm);
            if (!nm) {
                oom = 1;
                break;
            }
            s->marks = nm;
            s->capmarks = cap;
        }
        s->marks[s->nmarks++] =
            (struct line_mark){base + b->marks[i].doc, c->name, base_line + b->marks[i].line};
    }
    if (oom) {
        dedup_index_span_drop(s->idx, &b->span);
        cli_error(CMD, "out of memory reading the inputs");
        return CLI_RUNTIME;
    }
    size_t n = b->span.n;
    if (n) {
        s->last_list = c->name;
        s->last_line = base_line + b->last_line;
    }
    if (n && b->span.first != base) /* the span moves down over the gap: its hashes too */
        memmove(s->h + base, s->h + b->span.first, n * sizeof *s->h);
    enum dedup_code rc = dedup_index_span_close(s->idx, &b->span);
    if (rc != DEDUP_OK) {
        cli_error(CMD, "cannot add the documents of %s to the index: %s", c->name,
                  dedup_strerror(rc));
        return CLI_RUNTIME;
    }
    in->docs += n;
    return CLI_OK;
}

/* List `path` into the index on two threads. -1 when it is not for this road (not a large
 * regular file, one core, no thread): the caller reads it as a stream. Else CLI_OK or the
 * exit status (a read error is said and counted as the stream reader does). */
static int read_list_split(struct cli_inputs *in, struct list_sink *s, const char *path)
{
    if (strcmp(path, "-") == 0 || cli_threads() < 2)
        return -1;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0)
        return -1; /* the stream reader says why */
    if (fstat(fd, &st) != 0 || !S_ISREG(st.st_mode) || (size_t)st.st_size < LIST_SPLIT_MIN) {
        close(fd);
        return -1;
    }
    off_t cut = list_cut(fd, st.st_size);
    uint64_t docs1 = 0, bytes1 = 0;
    if (cut == 0 || list_bounds(fd, cut, &docs1, &bytes1) != 0) {
        close(fd);
        return -1; /* the stream reader reads it (and says what fails) */
    }
    struct part_job *j = calloc(1, sizeof *j);
    if (!j) {
        close(fd);
        return -1;
    }
    uint64_t bytes = (uint64_t)(st.st_size - cut);
    j->part = (struct list_part){fd, cut, -1, 0, 0, 0};
    pthread_t th;
    uint64_t room = dedup_index_doc_count(s->idx) + docs1 + bytes / LIST_MIN_LINE + 1;
    if (s->h_nomem || room > SIZE_MAX / sizeof *s->h || sink_hash_room(s, (size_t)room) != 0 ||
        dedup_index_span_open(s->idx, docs1, bytes1, bytes / LIST_MIN_LINE + 1, bytes + 1,
                              &j->batch.span) != DEDUP_OK) {
        free(j);
        close(fd);
        return -1;
    }
    if (pthread_create(&th, NULL, second_part, j) != 0) {
        dedup_index_span_drop(s->idx, &j->batch.span); /* nothing in it */
        free(j);
        close(fd);
        return -1;
    }
    j->batch.h = s->h; /* not moved while the span is open: sink_add stays below it */
    struct cli_list_ctx c = {in, path, 0, sink_add, s};
    struct list_part first = {fd, 0, cut, 0, 0, 0};
    read_part(&first, cli_list_entry, cli_list_warn, &c);
    pthread_join(th, NULL);
    int status = CLI_OK;
    if (first.stopped) {
        status = CLI_RUNTIME; /* sink_add said why */
        (void)close_batch(in, s, &c, j, 1);
    } else if (first.read_errno || j->part.read_errno || j->batch.oom) {
        int e = first.read_errno ? first.read_errno : j->part.read_errno;
        (void)close_batch(in, s, &c, j, 1);
        if (j->batch.oom || e == ENOMEM) {
            cli_error(CMD, "%s: out of memory", path);
            status = CLI_RUNTIME;
        } else {
            cli_error(CMD, "%s: read error: %s", path, strerror(e));
            in->failed++;
        }
    } else {
        j->part.lines = first.lines;
        status = close_batch(in, s, &c, j, 0);
    }
    free(j->batch.marks);
    free(j);
    close(fd);
    return status;
}

#define DUP_BITS 11u
#define DUP_THREADS 2u /* the hashing, scatter and bucket phases are split between two */

/* A slot of a bucket's table: the hash's low 32 bits and the entry's place in the bucket
 * + 1 (0 = empty); 8 bytes, so a bucket's table stays in the core's cache. */
struct dup_slot {
    uint32_t tag;
    uint32_t at1;
};

static int u32_cmp(const void *x, const void *y)
{
    uint32_t a = *(const uint32_t *)x, b = *(const uint32_t *)y;
    return a < b ? -1 : a > b;
}

/* malloc of a large array with its pages faulted in one call (one fault per page taken
 * one at a time costs ~10-40 us on this project's VM: half the faults of a 1M-line run) */
static void *big_alloc(size_t bytes)
{
    void *p = malloc(bytes ? bytes : 1);
#ifdef MADV_POPULATE_WRITE
    if (p && bytes >= ((size_t)1 << 20)) {
        uintptr_t a = ((uintptr_t)p + 4095) & ~(uintptr_t)4095;
        uintptr_t e = ((uintptr_t)p + bytes) & ~(uintptr_t)4095;
        if (e > a)
            (void)madvise((void *)a, e - a, MADV_POPULATE_WRITE); /* advice: may fail */
    }
#endif
    return p;
}

/* The duplicate-id check's shared state: thread u hashes documents [lo_u, hi_u) into h and
 * counts them per bucket in cnt[u], scatters them into bh/bd (bucket b: thread 0's
 * documents, then thread 1's, so document order holds within a bucket), then checks the
 * buckets b with b % threads == u with its own table and list of duplicates. */
struct dup_job {
    const struct dedup_index *idx;
    uint32_t n, from;
    uint32_t hashed; /* h[d] given for d >= hashed (the readers hashed the ids) */
    unsigned threads;
    uint64_t *h, *bh;
    uint32_t *bd;
    size_t *cnt[DUP_THREADS]; /* (1 << DUP_BITS) + 1 each */
    size_t *end;              /* bucket b is bh[end[b], end[b + 1]) */
    pthread_barrier_t bar;
    struct {
        uint32_t *dups;
        size_t n, cap;
        int oom;
    } out[DUP_THREADS];
};

static int dup_push(struct dup_job *j, unsigned u, uint32_t d)
{
    if (j->out[u].n == j->out[u].cap) {
        size_t cap = j->out[u].cap ? j->out[u].cap * 2 : 64;
        uint32_t *nd = realloc(j->out[u].dups, cap * sizeof *nd);
        if (!nd)
            return -1;
        j->out[u].dups = nd;
        j->out[u].cap = cap;
    }
    j->out[u].dups[j->out[u].n++] = d;
    return 0;
}

/* The buckets of thread u: a small open-addressing table a bucket finds equal hashes,
 * whose ids are then compared byte for byte (a hash collision is never a duplicate). */
static void dup_buckets(struct dup_job *j, unsigned u)
{
    const size_t nb = (size_t)1 << DUP_BITS;
    size_t maxb = 0;
    for (size_t b = u; b < nb; b += j->threads)
        if (j->end[b + 1] - j->end[b] > maxb)
            maxb = j->end[b + 1] - j->end[b];
    size_t tsize = 16;
    while (tsize < 2 * maxb)
        tsize *= 2;
    struct dup_slot *tab = malloc(tsize * sizeof *tab);
    if (!tab) {
        j->out[u].oom = 1;
        return;
    }
    const uint64_t *bh = j->bh;
    const uint32_t *bd = j->bd;
    for (size_t b = u; b < nb; b += j->threads) {
        size_t lo = j->end[b], hi = j->end[b + 1];
        size_t m = 16;
        while (m < 2 * (hi - lo))
            m *= 2;
        memset(tab, 0, m * sizeof *tab);
        for (size_t i = lo; i < hi; i++) {
            uint32_t tag = (uint32_t)bh[i];
            size_t s = (size_t)(bh[i] >> 32) & (m - 1);
            int dup = 0;
            for (; tab[s].at1; s = (s + 1) & (m - 1)) {
                size_t e = lo + tab[s].at1 - 1;
                if (tab[s].tag != tag || bh[e] != bh[i])
                    continue;
                size_t la, lb;
                const char *ia = dedup_index_id(j->idx, bd[e], &la);
                const char *ib = dedup_index_id(j->idx, bd[i], &lb);
                if (la == lb && memcmp(ia, ib, la) == 0) {
                    dup = 1;
                    break;
                }
            }
            if (!dup) {
                tab[s] = (struct dup_slot){tag, (uint32_t)(i - lo + 1)};
                continue;
            }
            if (bd[i] < j->from)
                continue; /* two equal ids already in the saved index: kept as they are */
            if (dup_push(j, u, bd[i]) != 0) {
                j->out[u].oom = 1;
                break;
            }
        }
    }
    free(tab);
}

static void dup_sync(struct dup_job *j)
{
    if (j->threads > 1)
        pthread_barrier_wait(&j->bar);
}

/* Thread u's part: hash and count, (thread 0: the bucket bounds), scatter, buckets. */
static void dup_run(struct dup_job *j, unsigned u)
{
    const size_t nb = (size_t)1 << DUP_BITS;
    uint32_t lo = (uint32_t)((uint64_t)j->n * u / j->threads);
    uint32_t hi = (uint32_t)((uint64_t)j->n * (u + 1) / j->threads);
    size_t *c = j->cnt[u];
    for (uint32_t d = lo; d < hi; d++) {
        if (d < j->hashed) {
            size_t len;
            const char *id = dedup_index_id(j->idx, d, &len);
            j->h[d] = XXH3_64bits(id, len);
        }
        c[(j->h[d] >> (64 - DUP_BITS)) + 1]++;
    }
    dup_sync(j);
    if (u == 0) {
        j->end[0] = 0;
        for (size_t b = 1; b <= nb; b++) {
            size_t sum = 0;
            for (unsigned v = 0; v < j->threads; v++)
                sum += j->cnt[v][b];
            j->end[b] = j->end[b - 1] + sum;
        }
    }
    dup_sync(j);
    size_t *next = malloc(nb * sizeof *next);
    if (!next) {
        j->out[u].oom = 1;
    } else {
        for (size_t b = 0; b < nb; b++) {
            next[b] = j->end[b];
            for (unsigned v = 0; v < u; v++)
                next[b] += j->cnt[v][b + 1];
        }
        for (uint32_t d = lo; d < hi; d++) { /* in document order: the first is kept */
            size_t p = next[j->h[d] >> (64 - DUP_BITS)]++;
            j->bh[p] = j->h[d];
            j->bd[p] = d;
        }
        free(next);
    }
    dup_sync(j);
    for (unsigned v = 0; v < j->threads; v++)
        if (j->out[v].oom)
            return;
    dup_buckets(j, u);
}

static void *dup_thread(void *arg)
{
    dup_run(arg, 1);
    return NULL;
}

/* The documents d >= from whose id equals that of an earlier document, ascending (caller
 * frees *out). 0, or -1 when out of memory. Each id is hashed once (XXH3-64), the hashes
 * are split by their top bits into cache-sized buckets, and equal hashes within a bucket
 * are compared as ids; both cores share every phase (dup_job). pre (NULL: none) holds the
 * hashes of the documents from `from` on, made as they were read (the ids were in cache
 * then); those before are hashed here (pre has room for them). */
static int find_duplicate_ids(struct dedup_index *idx, uint32_t from, uint64_t *pre, uint32_t **out,
                              size_t *nout, int *pre_taken)
{
    const size_t nb = (size_t)1 << DUP_BITS;
    struct dup_job *j = calloc(1, sizeof *j);
    int rc = -1, started = 0, checked = 0;
    *pre_taken = 0;
    pthread_t th;
    *out = NULL;
    *nout = 0;
    if (!j)
        return -1;
    j->idx = idx;
    j->n = dedup_index_doc_count(idx);
    j->from = from;
    j->threads = cli_threads() > 1 && j->n >= 65536 ? DUP_THREADS : 1;
    if (j->n - from == 0) {
        rc = 0;
        goto done;
    }
    j->end = calloc(nb + 1, sizeof *j->end);
    for (unsigned u = 0; u < j->threads; u++)
        j->cnt[u] = calloc(nb + 1, sizeof *j->cnt[u]);
    j->hashed = pre ? from : j->n;
    j->h = pre ? pre : big_alloc((size_t)j->n * sizeof *j->h);
    j->bh = big_alloc((size_t)j->n * sizeof *j->bh);
    j->bd = big_alloc((size_t)j->n * sizeof *j->bd);
    if (!j->end || !j->cnt[0] || !j->cnt[j->threads - 1] || !j->h || !j->bh || !j->bd)
        goto done;
    if (j->threads > 1) {
        if (pthread_barrier_init(&j->bar, NULL, 2) != 0)
            j->threads = 1;
        else if (pthread_create(&th, NULL, dup_thread, j) != 0) {
            pthread_barrier_destroy(&j->bar);
            j->threads = 1; /* the caller alone (cnt[1] unused) */
        } else
            started = 1;
    }
    dup_run(j, 0);
    if (started) {
        pthread_join(th, NULL);
        pthread_barrier_destroy(&j->bar);
    }
    size_t total = 0;
    for (unsigned u = 0; u < j->threads; u++) {
        if (j->out[u].oom)
            goto done;
        total += j->out[u].n;
    }
    uint32_t *dups = malloc((total ? total : 1) * sizeof *dups);
    if (!dups)
        goto done;
    size_t o = 0;
    for (unsigned u = 0; u < j->threads; u++) {
        if (j->out[u].n)
            memcpy(dups + o, j->out[u].dups, j->out[u].n * sizeof *dups);
        o += j->out[u].n;
    }
    if (total > 1)
        qsort(dups, total, sizeof *dups, u32_cmp);
    *out = dups;
    *nout = total;
    rc = 0;
    checked = 1;
done:
    free(j->end);
    for (unsigned u = 0; u < DUP_THREADS; u++) {
        free(j->cnt[u]);
        free(j->out[u].dups);
    }
    if (checked) {
        /* every page written: the index's compaction and streamed tables take them
         * instead of fresh pages (0.2 GB at 10M documents) */
        dedup_index_give_scratch(idx, j->bh, (size_t)j->n * sizeof *j->bh);
        dedup_index_give_scratch(idx, j->bd, (size_t)j->n * sizeof *j->bd);
        dedup_index_give_scratch(idx, j->h, (size_t)j->n * sizeof *j->h);
        *pre_taken = pre != NULL;
    } else {
        if (!pre)
            free(j->h);
        free(j->bh);
        free(j->bd);
    }
    free(j);
    return rc;
}

/* Reports the duplicates (list:line, as the per-line check does) and drops them. */
static int drop_duplicates(struct cli_inputs *in, struct dedup_index *idx, struct list_sink *s,
                           uint32_t from)
{
    uint32_t *dups;
    size_t n;
    uint64_t *pre = s->h_nomem || s->hcap < dedup_index_doc_count(idx) ? NULL : s->h;
    int pre_taken;
    int frc = find_duplicate_ids(idx, from, pre, &dups, &n, &pre_taken);
    if (pre_taken) {
        s->h = NULL; /* the index's now */
        s->hcap = 0;
    }
    if (frc != 0) {
        cli_error(CMD, "out of memory checking the ids");
        return CLI_RUNTIME;
    }
    for (size_t i = 0; i < n; i++) {
        size_t line = 0, len;
        const struct line_mark *m = sink_where(s, dups[i], &line);
        const char *id = dedup_index_id(idx, dups[i], &len);
        if (m)
            cli_error(CMD, "%s:%zu: duplicate id '%s': the first document with it is kept", m->list,
                      line, id);
        else
            cli_error(CMD, "duplicate id '%s': the first document with it is kept", id);
    }
    in->failed += n;
    enum dedup_code rc = dedup_index_drop_pending(idx, dups, n);
    free(dups);
    if (rc != DEDUP_OK) {
        cli_error(CMD, "cannot drop the duplicate ids: %s", dedup_strerror(rc));
        return CLI_RUNTIME;
    }
    return CLI_OK;
}

/* Prints every pair of idx within k (documents from min_b on) on stdout. */
static int print_pairs(struct dedup_index *idx, unsigned k, uint32_t min_b, int jsonl)
{
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    struct out_ctx o = {idx, jsonl, 0};
    int stopped = 0;
    enum dedup_code rc = dedup_index_pairs_array(idx, k, cli_threads(), min_b, print_pair_array,
                                                 print_pair, &o, &stopped);
    if (rc != DEDUP_OK || o.oom) {
        cli_error(CMD, "cannot list the pairs: %s", dedup_strerror(o.oom ? DEDUP_ENOMEM : rc));
        return CLI_RUNTIME;
    }
    if (fflush(stdout) != 0 || ferror(stdout) || stopped) {
        cli_error(CMD, "write error: %s", strerror(errno));
        return CLI_RUNTIME;
    }
    return CLI_OK;
}

static int pairs_of_index(const struct cli_args *a, const char *file)
{
    struct dedup_index *idx = NULL;
    if (a->npaths || a->nfplists || a->index)
        return cli_usage_error(CMD, "--from-index takes no INPUT, --fingerprints or --index");
    int status = cli_index_load(CMD, file, 0, &idx, NULL);
    if (status != CLI_OK)
        return status;
    long k = a->k;
    if (!a->k_set && (unsigned)k > dedup_index_k(idx))
        k = dedup_index_k(idx);
    if ((unsigned)k > dedup_index_k(idx))
        status = cli_usage_error(CMD, "index %s answers k <= %u only, not --k %ld", file,
                                 dedup_index_k(idx), k);
    else
        status = print_pairs(idx, (unsigned)k, 0, strcmp(a->format, "jsonl") == 0);
    dedup_index_free(idx);
    return status;
}

/* One run of pairs over inputs (not --from-index, not minhash). */
struct pairs_run {
    struct cli_args a;
    struct cli_inputs in;
    struct cli_stage st;
    struct list_sink sink;
    struct dedup_index *idx;
    struct dedup_templates *own; /* the table until there is an index to hold it */
    struct dedup_lock *lock;
    int lists_only; /* --fingerprints lists only: added straight into the index */
    int made;       /* idx made here for lists, its design set once their count is known */
    uint32_t old_docs;
};

/* --index: locked (until after the save: a read-modify-write of the file) and loaded if it
 * exists, k checked against it, the inputs told its ids. CLI_OK or the exit status. */
static int open_index(struct pairs_run *r)
{
    int missing = 0;
    int status = cli_index_lock(CMD, r->a.index, r->a.lock_wait, &r->lock);
    if (status == CLI_OK)
        status = cli_index_load(CMD, r->a.index, 1, &r->idx, &missing);
    if (status != CLI_OK || !r->idx)
        return status;
    if (!r->a.k_set && (unsigned)r->a.k > dedup_index_k(r->idx))
        r->a.k = dedup_index_k(r->idx); /* default: the index's k when it is smaller */
    if ((unsigned)r->a.k > dedup_index_k(r->idx))
        return cli_usage_error(CMD, "index %s answers k <= %u only, not --k %ld", r->a.index,
                               dedup_index_k(r->idx), r->a.k);
    r->old_docs = dedup_index_doc_count(r->idx);
    if (!r->lists_only && cli_inputs_mark_index(&r->in, r->idx) != 0)
        return CLI_RUNTIME;
    return CLI_OK;
}

/* The inputs read: lists straight into the index (their ids checked in one batch), pages
 * and WARCs into the stage. r->st.n counts the new documents. CLI_OK or the exit status. */
static int read_inputs(struct pairs_run *r)
{
    if (!r->lists_only)
        return cli_inputs_run(&r->in, r->a.fplists, r->a.nfplists, r->a.paths, r->a.npaths,
                              cli_stage_add, &r->st) != 0
                   ? CLI_RUNTIME
                   : CLI_OK;
    r->in.check_duplicates = 0; /* checked in one batch below */
    r->sink.idx = r->idx;
    for (int i = 0; i < r->a.nfplists; i++) {
        int st = read_list_split(&r->in, &r->sink, r->a.fplists[i]);
        if (st < 0 && cli_inputs_fplist(&r->in, r->a.fplists[i], sink_add, &r->sink) != 0)
            return CLI_RUNTIME;
        if (st > 0)
            return st;
    }
    profile_mark("lists read");
    int status = drop_duplicates(&r->in, r->idx, &r->sink, r->old_docs);
    free(r->sink.h); /* the id hashes: not needed past the check */
    r->sink.h = NULL;
    r->sink.hcap = 0;
    profile_mark("duplicate ids");
    r->st.n = dedup_index_doc_count(r->idx) - r->old_docs;
    return status;
}

/* The index ready for the pairs: its design (made here) or itself (none given), the
 * learned templates, the staged documents added. CLI_OK or the exit status. */
static int finish_index(struct pairs_run *r)
{
    int status;
    if (r->made) {
        struct dedup_design d;
        enum dedup_code rc = dedup_design_choose((unsigned)r->a.k, r->st.n, 0, &d);
        if (rc == DEDUP_OK)
            rc = dedup_index_set_design(r->idx, &d);
        if (rc != DEDUP_OK) {
            cli_error(CMD, "cannot make an index: %s", dedup_strerror(rc));
            return CLI_RUNTIME;
        }
    }
    if (!r->idx &&
        (status = cli_index_create(CMD, (unsigned)r->a.k, r->st.n, 0, &r->idx)) != CLI_OK)
        return status;
    if (r->own) {
        dedup_index_set_templates(r->idx, r->own); /* saved with it (--index) */
        r->own = NULL;
    }
    if (!r->lists_only) {
        if ((status = cli_index_add_stage(CMD, r->idx, &r->st)) != CLI_OK)
            return status;
        cli_stage_release(&r->st);
    }
    return CLI_OK;
}

/* Every step of a run over inputs, up to the pairs printed and --index saved. */
static int run_pairs(struct pairs_run *r)
{
    int status;
    cli_inputs_init(&r->in, CMD);
    r->in.fp_opts.max_depth = (unsigned)r->a.max_depth;
    r->in.quiet = r->a.quiet;
    r->lists_only = r->a.npaths == 0;
    if (r->a.index && (status = open_index(r)) != CLI_OK)
        return status;
    if (r->lists_only && !r->idx) {
        /* made now, its design set once the number of documents is known */
        if ((status = cli_index_create(CMD, (unsigned)r->a.k, 0, 0, &r->idx)) != CLI_OK)
            return status;
        r->made = 1;
    }
    if (!r->a.no_templates && cli_inputs_learn_templates(&r->in, r->idx, &r->own) != CLI_OK)
        return CLI_RUNTIME;
    if ((status = read_inputs(r)) != CLI_OK)
        return status;
    if (r->st.n == 0 && r->old_docs == 0) {
        cli_error(CMD, "no documents to compare: the inputs held no pages or fingerprints");
        return CLI_RUNTIME;
    }
    if ((status = finish_index(r)) != CLI_OK)
        return status;
    profile_mark("index ready");
    status = print_pairs(r->idx, (unsigned)r->a.k, r->old_docs, strcmp(r->a.format, "jsonl") == 0);
    profile_mark("pairs written");
    if (status == CLI_OK && r->a.index)
        status = cli_index_save(CMD, r->idx, r->a.index);
    if (status == CLI_OK && r->in.failed)
        status = CLI_RUNTIME;
    return status;
}

int cmd_pairs(int argc, char **argv)
{
    static const char *const formats[] = {"text", "jsonl", NULL};
    struct pairs_run r;
    memset(&r, 0, sizeof r);
    r.st.cmd = CMD;
    profile_mark(NULL);
    int status = cli_args_parse(CMD, argc, argv,
                                CLI_ARG_FORMAT | CLI_ARG_INDEX | CLI_ARG_NEED_INPUT |
                                    CLI_ARG_TEMPLATES | CLI_ARG_MAX_DEPTH | CLI_ARG_LOCK_WAIT |
                                    CLI_ARG_METHOD | CLI_ARG_FROM_INDEX | CLI_ARG_QUIET,
                                formats, usage, &r.a);
    if (status != CLI_OK || r.a.help || r.a.mh.minhash || r.a.from_index) {
        if (status == CLI_OK && !r.a.help)
            status = r.a.mh.minhash ? cli_mh_pairs(&r.a) /* cli/minhash.c */
                                    : pairs_of_index(&r.a, r.a.from_index);
        cli_args_release(&r.a);
        return status;
    }
    status = run_pairs(&r);
    fflush(stdout);
    free(r.sink.marks);
    free(r.sink.h);
    dedup_lock_release(r.lock);
    dedup_templates_free(r.own);
    if (PAIRS_FREE_AT_EXIT || status != CLI_OK) {
        dedup_index_free(r.idx);
        cli_stage_release(&r.st);
        cli_inputs_release(&r.in);
    }
    cli_args_release(&r.a);
    profile_mark("done");
    return status;
}
