/*
 * simcrawl dedup [--k N] [--index FILE] [--lock-wait SECONDS] [--warc-out FILE] [--log FILE]
 *                [--min-size BYTES] [--max-block BYTES] [--max-depth N] [--quiet] INPUT...
 *
 * The dedup filter for fetched archives: streams WARC files (.warc, .warc.gz), HTML files
 * and directories, in command-line order, and keeps the first page of every near-duplicate
 * group. Each HTML response (cli_warc_classify) is fingerprinted and decided by the one
 * decision of filter/decide.h over the index (Manku et al.): within k of a kept page it is a
 * `near-duplicate` (not written); with the same payload digest as a kept page an `exact-duplicate`
 * (written as a revisit record, profile identical-payload-digest, pointing at the original);
 * otherwise `new` (kept, added to the index). Every other record — warcinfo, requests, metadata,
 * images, redirects, small pages — is `passed` through byte for byte; request and metadata records
 * concurrent to a dropped response are `dropped` with it; damaged records are `error`.
 * --index FILE loads an earlier run's index (if the file exists), dedups against it, and
 * saves it back with this run's pages added; FILE.digests beside it keeps the payload
 * digests of the kept pages, so exact duplicates of earlier runs become revisits too; the
 * index lock (cli_index_lock) is held from loading both to saving both, and the two carry
 * one generation, checked and repaired on load ("HOW IT WORKS" above kept_load). Memory: one
 * block (max-block) at a time, the index, and one digest entry per kept page (capped).
 */
#include "cli/cli.h"
#include "cli/digests.h"
#include "cli/inputs.h"
#include "cli/minhash.h"
#include "cli/walk.h"
#include "cli/warc_page.h"
#include "cli/pipeline.h"
#include "crawler/crawl.h"
#include "dedup/dedup.h"
#include "filter/decide.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#define CMD "dedup"
#define PENDING_MAX (1024u * 1024) /* a request record held back for its response */
#define DROPPED_RING 16u           /* dropped responses remembered for their metadata */
#define ID_MAX 256u                /* record ids longer than this are not matched */
/* The smallest --max-block: a cap below 4 KiB would skip nearly every HTML response record
 * (the HTTP head alone is often half a KiB), so a lower value is refused as a mistake. */
#define MAX_BLOCK_MIN 4096u
#define INDEX_EXPECTED_DOCS (1u << 22) /* sizes the table design of a new index */

/* A kept page, for exact-duplicate revisits: what the decision (filter/decide.h) keeps
 * with its payload digest (the key) as metadata, "fp | gen | RECORD-ID\0URI\0DATE\0", and
 * the view of it that kept_view() gives (pointers into that metadata). */
struct kept {
    uint64_t fp;
    uint64_t gen; /* the pair generation of the save that first wrote it (0: older files) */
    const char *record_id, *uri, *date;
};

struct dd {
    unsigned k;
    size_t min_size, max_block;
    int quiet;
    int no_templates; /* --no-templates */
    /* --method minhash (docs/MINHASH.md): the decision (filter/decide.h) over an LSH index
     * of the kept pages' signatures instead of idx (NULL then): near-duplicates by the
     * Jaccard estimate, exact duplicates, templates (the LSH index's table) and the kept
     * pages' digests as for the simhash; --index FILE is then a minhash index */
    struct dedup_lsh *lsh;
    uint32_t *sig;
    double threshold;
    struct dedup_lsh_matches mm;
    struct dedup_index *idx;
    struct crawl_warc_writer *w;
    FILE *log;
    struct filter_fp_opts fp_opts;
    /* the decision over idx: kept pages by payload digest, nearest, add, templates */
    struct filter_decide *decide;
    struct filter_decide_result dr; /* the last decision (an exact duplicate's metadata) */
    char *meta;                     /* a kept page's metadata being built */
    size_t meta_cap;
    struct cli_digests_cap cap; /* the payload digests remembered (cli/digests.h) */
    /* the pair (FILE + FILE.digests): the generation this run saves, and the index
     * documents [nodig_from, nodig_to) whose digests were lost (digests older than the
     * index), their fingerprints sorted: a page with one of them may be an exact duplicate
     * (minhash: a page whose signature equals one of theirs) */
    uint64_t gen;
    uint32_t nodig_from, nodig_to;
    uint64_t *nodig_fp;
    size_t n_nodig_fp;
    uint64_t n_nodig_kept; /* pages kept in full for that reason */
    /* a request record waiting for its response */
    int pending;
    char *pend_header, *pend_block;
    size_t pend_header_len, pend_block_len;
    char pend_id[ID_MAX], pend_conc[ID_MAX], pend_uri[2048];
    uint64_t pend_offset;
    /* responses dropped lately, for their concurrent records */
    char dropped[DROPPED_RING][ID_MAX];
    unsigned dropped_next;
    /* where we are */
    const char *file;
    int status;
    /* counts */
    uint64_t records, n_new, n_near, n_exact, n_passed, n_dropped, n_errors;
    uint64_t bytes_done; /* input bytes of finished files */
    struct crawl_warc_reader *cur_reader;
    /* the reader's last damage report, held until we know which record it belongs to */
    int damage_held;
    uint64_t damage_offset;
    char damage_what[512];
    double t0, last_progress;
    int tty;
};

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void usage(FILE *out)
{
    fprintf(out,
            "usage: simcrawl dedup [options] INPUT...\n"
            "\n"
            "Streams WARC files (.warc, .warc.gz), HTML files and directories in order and keeps\n"
            "the first page of every near-duplicate group. Decisions per record: new (kept,\n"
            "indexed), near-duplicate (within k of a kept page: not written), exact-duplicate\n"
            "(same payload as a kept page: written as a revisit record), passed (not an HTML\n"
            "page, or below --min-size: copied unchanged), dropped (request/metadata of a\n"
            "dropped response), error (damaged record: reported, not written). Pages are\n"
            "HTML response records and HTML resource records (no HTTP exchange).\n"
            "A directory is walked for .html, .htm, .warc and .warc.gz files (sorted by name);\n"
            "'-' reads a WARC (plain or gzip) from standard input.\n"
            "\n"
            "options:\n"
            "  --k N              Hamming distance for near-duplicates, 0..%d (default %d)\n"
            "  --method simhash|minhash\n"
            "                     minhash: a page is a near-duplicate of the most similar\n"
            "                     kept page whose estimated Jaccard similarity of word\n"
            "                     shingles is >= --threshold (docs/MINHASH.md; logged as\n"
            "                     \"jaccard\"); with --index FILE, FILE is a minhash index\n"
            "                     (docs/MINHASH.md: made by the first such run, or by\n"
            "                     index add --method minhash)\n"
            "  --threshold J      minhash: the Jaccard threshold, above 0 and at most 1\n"
            "                     (default 0.8, or the --index's)\n"
            "  --index FILE       dedup against this saved index too, and save it back with\n"
            "                     the pages kept in this run (created when missing); the\n"
            "                     payload digests of kept pages go to FILE.digests, so exact\n"
            "                     duplicates of earlier runs become revisit records too.\n"
            "                     FILE.lock is held for the whole run (a second writer of\n"
            "                     FILE waits, see --lock-wait)\n"
            "  --lock-wait SECONDS  how long to wait while another writer holds FILE.lock\n"
            "                     (default %ld; 0: fail at once, exit 2)\n"
            "  --warc-out FILE    write the deduplicated WARC (.warc.gz: gzip per record;\n"
            "                     .warc: plain; written as FILE.open, renamed when complete;\n"
            "                     past 1 GB a new file: NAME-00001.warc.gz, -00002...)\n"
            "  --log FILE         one JSON line per record: uri, record_id, file, offset,\n"
            "                     decision, fingerprint, duplicate_of, distance ('-': stdout)\n"
            "  --min-size BYTES   smaller bodies are not near-duplicate candidates (default %u)\n"
            "  --max-block BYTES  largest record block held in memory (default %u); larger\n"
            "                     records are streamed through as passed\n"
            "  --max-depth N      skip elements nested deeper than N (default %u), with their\n"
            "                     text: a page cut is named on stderr (file, offset, URI)\n"
            "                     and logged \"truncated\":\"depth\"; keep N the same for\n"
            "                     the runs that share one --index\n"
            "  --no-templates     fingerprint whole main texts; by default each host's\n"
            "                     template blocks (on >= 3 and >= 20%% of its counted pages:\n"
            "                     its kept pages, and its near-duplicates while it has fewer\n"
            "                     than %u; learned as pages arrive, saved in the --index)\n"
            "                     are left out\n"
            "  --quiet            no summary or progress on stderr\n"
            "  -h, --help         this help\n"
            "\n"
            "exit status: 0 done (damaged records are reported and skipped), 1 usage error,\n"
            "2 an input could not be read, an output could not be written, or the --index\n"
            "FILE stayed locked by another writer.\n",
            DEDUP_K_MAX, DEDUP_K_DEFAULT, CLI_LOCK_WAIT_DEFAULT, CLI_WARC_MIN_SIZE_DEFAULT,
            CRAWL_WARC_DEFAULT_MAX_BLOCK, EXTRACT_DEFAULT_MAX_DEPTH, DEDUP_TEMPLATE_YOUNG_DOCS);
}

/* ---- the log ---- */

struct logrec {
    const char *uri, *record_id, *type;
    uint64_t offset;
    int has_offset;
    const char *decision;
    int has_fp;
    uint64_t fp;
    const char *duplicate_of;
    int distance;   /* -1: none */
    double jaccard; /* --method minhash: the estimate against duplicate_of, when >= 0 */
    int has_jaccard;
    const char *reason, *error;
    const char *truncated; /* "depth": the extractor's depth cap cut the page */
};

/* A JSON string of s; bytes that are not valid UTF-8 become U+FFFD. */
static json_t *jstr(const char *s)
{
    json_t *j = json_string(s);
    if (j)
        return j;
    size_t n = strlen(s);
    char *t = malloc(n * 3 + 1);
    if (!t)
        return json_string("");
    size_t o = 0;
    const unsigned char *u = (const unsigned char *)s;
    for (size_t i = 0; i < n;) {
        size_t len = u[i] < 0x80         ? 1
                     : (u[i] >> 5) == 6  ? 2
                     : (u[i] >> 4) == 14 ? 3
                     : (u[i] >> 3) == 30 ? 4
                                         : 0;
        int ok = len > 0 && i + len <= n;
        for (size_t k = 1; ok && k < len; k++)
            ok = (u[i + k] & 0xc0) == 0x80;
        if (ok) {
            memcpy(t + o, s + i, len);
            o += len;
            i += len;
        } else {
            memcpy(t + o, "\xef\xbf\xbd", 3);
            o += 3;
            i++;
        }
    }
    t[o] = '\0';
    j = json_string(t); /* overlong forms etc. that jansson still refuses: give up on them */
    free(t);
    return j ? j : json_string("");
}

static void log_line(struct dd *d, const struct logrec *l)
{
    if (!d->log)
        return;
    json_t *o = json_object();
    if (!o)
        return;
    if (l->uri)
        json_object_set_new(o, "uri", jstr(l->uri));
    if (l->record_id && *l->record_id)
        json_object_set_new(o, "record_id", jstr(l->record_id));
    if (l->type && *l->type)
        json_object_set_new(o, "type", jstr(l->type));
    json_object_set_new(o, "file", jstr(d->file));
    if (l->has_offset)
        json_object_set_new(o, "offset", json_integer((json_int_t)l->offset));
    json_object_set_new(o, "decision", json_string(l->decision));
    if (l->has_fp) {
        char hex[17];
        dedup_fingerprint_format(l->fp, hex);
        json_object_set_new(o, "fingerprint", json_string(hex));
    }
    if (l->duplicate_of)
        json_object_set_new(o, "duplicate_of", jstr(l->duplicate_of));
    if (l->distance >= 0)
        json_object_set_new(o, "distance", json_integer(l->distance));
    if (l->has_jaccard)
        json_object_set_new(o, "jaccard", json_real(l->jaccard));
    if (l->reason && *l->reason)
        json_object_set_new(o, "reason", jstr(l->reason));
    if (l->error && *l->error)
        json_object_set_new(o, "error", jstr(l->error));
    if (l->truncated)
        json_object_set_new(o, "truncated", json_string(l->truncated));
    char *s = json_dumps(o, JSON_COMPACT);
    if (s) {
        fputs(s, d->log);
        fputc('\n', d->log);
        free(s);
    }
    json_decref(o);
}

/* ---- kept pages by payload digest ---- */

/* The kept page of metadata meta[0..len) (borrowed: pointers into meta). */
static struct kept kept_view(const void *meta, size_t len)
{
    struct kept k = {0, 0, "", "", ""};
    const char *m = meta;
    if (len < 16 + 3)
        return k;
    memcpy(&k.fp, m, 8);
    memcpy(&k.gen, m + 8, 8);
    k.record_id = m + 16;
    k.uri = k.record_id + strlen(k.record_id) + 1;
    k.date = k.uri + strlen(k.uri) + 1;
    return k;
}

/* Builds the metadata of a kept page into d->meta; its length, or 0 when out of memory. */
static size_t kept_meta(struct dd *d, uint64_t fp, const char *id, const char *uri,
                        const char *date, uint64_t gen)
{
    size_t il = strlen(id) + 1, ul = strlen(uri) + 1, dl = strlen(date) + 1;
    size_t len = 16 + il + ul + dl;
    if (len > d->meta_cap) {
        char *n = realloc(d->meta, len);
        if (!n)
            return 0;
        d->meta = n;
        d->meta_cap = len;
    }
    memcpy(d->meta, &fp, 8);
    memcpy(d->meta + 8, &gen, 8);
    memcpy(d->meta + 16, id, il);
    memcpy(d->meta + 16 + il, uri, ul);
    memcpy(d->meta + 16 + il + ul, date, dl);
    return len;
}

/* What a kept page not remembered (past CLI_DIGESTS_MAX) loses. */
#define DEDUP_DIGESTS_LOST                                                                         \
    "exact duplicates of pages kept from now on are decided near-duplicate (by their "             \
    "fingerprint), and --index FILE.digests does not list them"

/* What remembering a kept page came to: 0, or -1 when out of memory (the page is then
 * simply not remembered). Past CLI_DIGESTS_MAX pages, said once (cli/digests.h). */
static int kept_stored(struct dd *d, enum filter_decide_stored s)
{
    return cli_digests_stored(&d->cap, s);
}

/* A kept page of an earlier run (FILE.digests). 0, or -1 when out of memory. */
static int kept_add(struct dd *d, const char *digest, uint64_t fp, const char *id, const char *uri,
                    const char *date, uint64_t gen)
{
    size_t len = kept_meta(d, fp, id, uri, date, gen);
    if (!len)
        return -1;
    return kept_stored(
        d, filter_decide_remember(d->decide, digest, strlen(digest), UINT32_MAX, d->meta, len));
}

static void kept_free(struct dd *d)
{
    filter_decide_free(d->decide);
    d->decide = NULL;
    filter_decide_result_release(&d->dr);
    free(d->meta);
    d->meta = NULL;
    free(d->nodig_fp);
    d->nodig_fp = NULL;
}

/*
 * The kept pages of earlier runs, beside the index: FILE.digests, a text file
 * "# simcrawl dedup digests 2", then the header lines "# index-documents N" (the document
 * count of the FILE saved with it), "# generation G" and, when some are lost,
 * "# no-digest-documents A B", then one line per kept page,
 * "DIGEST<TAB>FINGERPRINT<TAB>WARC-DATE<TAB>RECORD-ID<TAB>URI<TAB>GENERATION" (record id "-"
 * for an HTML file input), so a later run writes revisit records pointing at the first
 * capture. Version 1 (no generation lines, five fields) is still read.
 */
#define DIGESTS_MAGIC "# simcrawl dedup digests 2"
#define DIGESTS_MAGIC_V1 "# simcrawl dedup digests 1"
#define DIGESTS_LINE_MAX 16384u
#define DIGESTS_DOCS "# index-documents "
#define DIGESTS_GEN "# generation "
#define DIGESTS_NODIG "# no-digest-documents "
/*
 * HOW IT WORKS: the pair FILE + FILE.digests as one unit (issue 12, item 3).
 *
 * Two files cannot be renamed at once, so the pair carries a generation instead: every
 * save by dedup numbers itself G = max(index generation, digests generation) + 1 and
 * writes G into both files (FILE's header, format version 4; the digests' "# generation"
 * line), and every digest line carries the generation of the save that first wrote it.
 * The digests are renamed into place first, FILE second, so the only states a kill can
 * leave are (with the lock held throughout, nobody else writes in between):
 *
 *   digests G-1, index G-1   killed before the digests' rename: the old pair, consistent.
 *   digests G,   index G-1   killed between the renames: the digests are one save ahead.
 *                            Repair: drop the lines of generation > the index's (exactly
 *                            the killed run's pages, whose documents the index never got;
 *                            a later exact duplicate must not become a revisit of them).
 *   digests G,   index G     saved: consistent.
 *
 * Digests OLDER than the index (generation below the index's, or missing while the index
 * has a generation) cannot come from a kill under this order: a digests file restored from
 * a backup, deleted, or left by a version that renamed FILE first. Payload digests cannot
 * be rebuilt from the index (it holds fingerprints and ids only), so the index documents
 * saved since, [N, count), are marked as having lost their digests ("# no-digest-documents",
 * kept across saves): a page whose fingerprint is one of theirs may be an exact duplicate
 * whose revisit cannot be written, so it is kept in full ("new") rather than dropped as a
 * near-duplicate at distance 0: a duplicate capture costs space, a dropped one loses data.
 * Each repair is said once on stderr. index add and pairs --index keep the generation
 * (their documents simply have no digest, as before). A version-1 digests file keeps the
 * older check: its document count above the index's drops the digests of URIs the index
 * does not hold.
 */

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

/* The pair's index, whichever the method: its documents, ids and pair generation. */
static uint32_t pair_docs(const struct dd *d)
{
    return d->lsh ? dedup_lsh_doc_count(d->lsh) : dedup_index_doc_count(d->idx);
}

static const char *pair_id(const struct dd *d, uint32_t doc, size_t *len)
{
    return d->lsh ? dedup_lsh_id(d->lsh, doc, len) : dedup_index_id(d->idx, doc, len);
}

static uint64_t pair_generation(const struct dd *d)
{
    return d->lsh ? dedup_lsh_pair_generation(d->lsh) : dedup_index_pair_generation(d->idx);
}

/* The sorted XXH3 hashes of the index's ids (caller frees), or NULL when out of memory. */
static uint64_t *index_id_hashes(const struct dd *d, size_t *n)
{
    *n = pair_docs(d);
    uint64_t *h = malloc((*n ? *n : 1) * sizeof *h);
    if (!h)
        return NULL;
    for (size_t i = 0; i < *n; i++) {
        size_t len;
        const char *id = pair_id(d, (uint32_t)i, &len);
        h[i] = XXH3_64bits(id, len);
    }
    qsort(h, *n, sizeof *h, cmp_u64);
    return h;
}

/* 0, or -1 on a value that is not a whole number 0..max. */
static int parse_u64(const char *s, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9' || v > (max - (uint64_t)(*s - '0')) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

/* The fingerprints of the documents whose digests were lost, sorted (d->nodig_fp). */
static int nodig_prepare(struct dd *d)
{
    uint32_t count = pair_docs(d);
    if (d->nodig_to > count)
        d->nodig_to = count;
    if (d->nodig_from >= d->nodig_to) {
        d->nodig_from = d->nodig_to = 0;
        return 0;
    }
    if (d->lsh)
        return 0; /* minhash: the documents' own signatures are compared (nodig_match) */
    d->n_nodig_fp = d->nodig_to - d->nodig_from;
    d->nodig_fp = malloc(d->n_nodig_fp * sizeof *d->nodig_fp);
    if (!d->nodig_fp)
        return -1;
    for (size_t i = 0; i < d->n_nodig_fp; i++)
        d->nodig_fp[i] = dedup_index_fingerprint(d->idx, d->nodig_from + (uint32_t)i);
    qsort(d->nodig_fp, d->n_nodig_fp, sizeof *d->nodig_fp, cmp_u64);
    return 0;
}

/* What reading FILE.digests carries from line to line (kept_load). */
struct digests_load {
    const char *path;
    int version;    /* 2, 1 (five fields, no generations), 0 before the first line */
    uint64_t igen;  /* the index's pair generation */
    uint64_t dgen;  /* the digests' ("# generation") */
    uint64_t ndocs; /* "# index-documents" */
    int have_docs;  /* that line was read */
    uint32_t count; /* the index's documents */
    uint64_t *ids;  /* version 1 with digests newer than the index: the URI filter */
    size_t nids;
    unsigned long dropped, lineno, bad;
};

/* Malformed or unknown lines are named, the first few of them (then only skipped). */
#define DIGESTS_BAD_SAID 5

/* A "# ..." header line of FILE.digests. 0, or -1 out of memory (said). */
static int digests_header(struct dd *d, struct digests_load *dl, char *line)
{
    uint64_t a, b;
    char *sp;
    if (strncmp(line, DIGESTS_DOCS, strlen(DIGESTS_DOCS)) == 0 &&
        parse_u64(line + strlen(DIGESTS_DOCS), DEDUP_INDEX_MAX_DOCS, &a) == 0) {
        dl->ndocs = a;
        dl->have_docs = 1;
        if (dl->version == 1 && a > dl->count && !(dl->ids = index_id_hashes(d, &dl->nids))) {
            cli_error(CMD, "%s: out of memory", dl->path);
            return -1;
        }
    } else if (dl->version == 2 && strncmp(line, DIGESTS_GEN, strlen(DIGESTS_GEN)) == 0 &&
               parse_u64(line + strlen(DIGESTS_GEN), UINT64_MAX - 1, &a) == 0) {
        dl->dgen = a;
    } else if (dl->version == 2 && strncmp(line, DIGESTS_NODIG, strlen(DIGESTS_NODIG)) == 0 &&
               (sp = strchr(line + strlen(DIGESTS_NODIG), ' ')) != NULL) {
        *sp = '\0';
        if (parse_u64(line + strlen(DIGESTS_NODIG), DEDUP_INDEX_MAX_DOCS, &a) == 0 &&
            parse_u64(sp + 1, DEDUP_INDEX_MAX_DOCS, &b) == 0 && a < b) {
            d->nodig_from = (uint32_t)a;
            d->nodig_to = (uint32_t)b;
        }
    } else if (dl->bad++ < DIGESTS_BAD_SAID) {
        cli_error(CMD, "%s:%lu: unknown header line skipped", dl->path, dl->lineno);
    }
    return 0;
}

/* A kept page's line of FILE.digests (n bytes), remembered unless malformed (named),
 * written by a save whose index never got into place or (version 1) of a URI the index
 * does not hold (dropped). 0, or -1 out of memory (said). */
static int digests_entry(struct dd *d, struct digests_load *dl, char *line, size_t n)
{
    char *field[6];
    int nf = dl->version == 2 ? 6 : 5, k = 0;
    char *p = line;
    for (; k < nf && p; k++) {
        field[k] = p;
        p = k < nf - 1 ? strchr(p, '\t') : NULL;
        if (p)
            *p++ = '\0';
    }
    uint64_t fp, gen = 0;
    if (n > DIGESTS_LINE_MAX || k != nf || strncmp(field[0], "sha1:", 5) != 0 ||
        strlen(field[0]) >= CRAWL_DIGEST_SIZE ||
        dedup_fingerprint_parse(field[1], strlen(field[1]), &fp) != DEDUP_OK ||
        (nf == 6 && parse_u64(field[5], UINT64_MAX - 1, &gen) != 0)) {
        if (dl->bad++ < DIGESTS_BAD_SAID)
            cli_error(CMD, "%s:%lu: malformed line skipped", dl->path, dl->lineno);
        return 0;
    }
    if (dl->version == 2 && dl->dgen > dl->igen && gen > dl->igen) {
        dl->dropped++; /* written by a save whose index never got into place */
        return 0;
    }
    if (dl->ids) {
        uint64_t h = XXH3_64bits(field[4], strlen(field[4]));
        if (!bsearch(&h, dl->ids, dl->nids, sizeof h, cmp_u64)) {
            dl->dropped++;
            return 0;
        }
    }
    if (kept_add(d, field[0], fp, strcmp(field[3], "-") == 0 ? "" : field[3], field[4], field[2],
                 gen) != 0) {
        cli_error(CMD, "%s: out of memory", dl->path);
        return -1;
    }
    return 0;
}

/* FILE.digests read line by line from f. 0, or -1 after a diagnostic (not a digests file,
 * out of memory, a read error). */
static int digests_read(struct dd *d, struct digests_load *dl, FILE *f)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t n;
    int rc = 0;
    while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
        dl->lineno++;
        if (line[n - 1] == '\n')
            line[--n] = '\0';
        if (dl->lineno == 1) {
            dl->version =
                strcmp(line, DIGESTS_MAGIC) == 0 ? 2 : strcmp(line, DIGESTS_MAGIC_V1) == 0;
            if (!dl->version) {
                cli_error(CMD, "%s: not a simcrawl digests file (first line)", dl->path);
                rc = -1;
            }
        } else if (line[0] == '#') {
            rc = digests_header(d, dl, line);
        } else {
            rc = digests_entry(d, dl, line, (size_t)n);
        }
    }
    if (rc == 0 && ferror(f)) {
        cli_error(CMD, "cannot read %s: %s", dl->path, strerror(errno));
        rc = -1;
    }
    free(line);
    return rc;
}

/* The repairs of a pair out of step ("HOW IT WORKS" above), each said once: digests newer
 * than the index (their extra pages dropped), or older or missing (found: whether the file
 * was there), the documents saved since marked as having lost their digests. */
static void digests_repair(struct dd *d, const struct digests_load *dl, int found,
                           const char *index_path)
{
    const char *path = dl->path;
    unsigned long long dgen = dl->dgen, igen = dl->igen;
    if (dl->version == 1 && dl->ids)
        cli_error(CMD,
                  "%s is newer than %s (a run was stopped between saving the two): "
                  "dropped the digests of %lu pages the index does not hold",
                  path, index_path, dl->dropped);
    if (dl->version == 2 && dgen > igen)
        cli_error(CMD,
                  "%s is newer than %s (generation %llu, the index's %llu: a run was "
                  "killed between saving the two): dropped the digests of %lu pages of that "
                  "run",
                  path, index_path, dgen, igen, dl->dropped);
    if (igen == 0 || (found && !(dl->version == 2 && dgen < igen)))
        return;
    /* older digests: the documents saved since have lost theirs */
    uint32_t count = dl->count;
    uint32_t from = !found ? 0 : dl->have_docs && dl->ndocs < count ? (uint32_t)dl->ndocs : count;
    if (from >= count) {
        cli_error(CMD,
                  "%s is older than %s (generation %llu, the index's %llu); no "
                  "document was added since: nothing is lost",
                  path, index_path, dgen, igen);
        return;
    }
    if (d->nodig_from < d->nodig_to && d->nodig_from < from)
        from = d->nodig_from;
    d->nodig_from = from;
    d->nodig_to = count;
    cli_error(CMD,
              "%s is %s %s (generation %llu, the index's %llu): the payload "
              "digests of documents %u..%u are lost; a page with the %s of "
              "one of them is kept in full, not decided near-duplicate",
              path, found ? "older than" : "missing beside", index_path, dgen, igen, from,
              count - 1, d->lsh ? "signature" : "fingerprint");
}

/* 0, or -1 after a diagnostic (unreadable or not a digests file). A missing file is fine
 * (repaired as digests older than the index when the index has a generation). Sets d->gen
 * to the generation this run saves. index_path names d->idx (FILE) in the diagnostics. */
static int kept_load(struct dd *d, const char *path, const char *index_path)
{
    struct digests_load dl = {.path = path, .igen = pair_generation(d), .count = pair_docs(d)};
    FILE *f = fopen(path, "r");
    if (!f && errno != ENOENT) {
        cli_error(CMD, "cannot read %s: %s", path, strerror(errno));
        return -1;
    }
    int rc = f ? digests_read(d, &dl, f) : 0;
    if (rc == 0)
        digests_repair(d, &dl, f != NULL, index_path);
    if (rc == 0 && nodig_prepare(d) != 0) {
        cli_error(CMD, "%s: out of memory", path);
        rc = -1;
    }
    d->gen = (dl.dgen > dl.igen ? dl.dgen : dl.igen) + 1;
    free(dl.ids);
    if (f)
        fclose(f);
    return rc;
}

/* One line of FILE.digests for a kept page (filter_decide_foreach). */
static void kept_line(void *userdata, const void *key, size_t key_len, uint32_t doc,
                      const void *meta, size_t meta_len)
{
    FILE *f = userdata;
    struct kept k = kept_view(meta, meta_len);
    (void)doc;
    if (strpbrk(k.uri, "\t\n") || strpbrk(k.record_id, "\t\n") || strpbrk(k.date, "\t\n"))
        return; /* cannot be written on one line: not remembered */
    char hex[17];
    dedup_fingerprint_format(k.fp, hex);
    fprintf(f, "%.*s\t%s\t%s\t%s\t%s\t%llu\n", (int)key_len, (const char *)key, hex,
            *k.date ? k.date : "-", *k.record_id ? k.record_id : "-", k.uri,
            (unsigned long long)k.gen);
}

/* Writes the table to path (path.tmp.PID, fsync, renamed over, fsync of the directory),
 * with generation d->gen. The caller holds the index lock. 0, or -1 after a diagnostic. */
static int kept_save(struct dd *d, const char *path)
{
    size_t tl = strlen(path) + 32;
    char *tmp = malloc(tl);
    if (!tmp)
        return -1;
    /* PATH.tmp.PID: a name the next holder of the index lock removes if we are killed */
    snprintf(tmp, tl, "%s.tmp.%ld", path, (long)getpid());
    dedup_crash_point("digests-before-write");
    FILE *f = fopen(tmp, "w");
    if (!f) {
        cli_error(CMD, "cannot write %s: %s", tmp, strerror(errno));
        free(tmp);
        return -1;
    }
    fprintf(f, "%s\n%s%u\n%s%llu\n", DIGESTS_MAGIC, DIGESTS_DOCS, pair_docs(d), DIGESTS_GEN,
            (unsigned long long)d->gen);
    if (d->nodig_from < d->nodig_to)
        fprintf(f, "%s%u %u\n", DIGESTS_NODIG, d->nodig_from, d->nodig_to);
    if (getenv("SIMCRAWL_CRASH_AT")) {
        fflush(f); /* a temporary file cut short */
        dedup_crash_point("digests-partial-write");
    }
    filter_decide_foreach(d->decide, kept_line, f);
    int bad = ferror(f) != 0 || fflush(f) != 0 || fsync(fileno(f)) != 0;
    if (fclose(f) != 0)
        bad = 1;
    if (!bad)
        dedup_crash_point("digests-after-fsync");
    if (bad || rename(tmp, path) != 0) {
        cli_error(CMD, "cannot write %s: %s", path, strerror(errno));
        unlink(tmp);
        free(tmp);
        return -1;
    }
    free(tmp);
    dedup_crash_point("digests-after-rename");
    int derr = 0;
    if (dedup_fsync_dir(path, &derr) != DEDUP_OK) {
        cli_error(CMD, "cannot fsync the directory of %s: %s", path, strerror(derr));
        return -1;
    }
    dedup_crash_point("digests-saved");
    return 0;
}

/* ---- output ---- */

static void out_failed(struct dd *d, enum crawl_code rc)
{
    const char *why = crawl_warc_writer_error(d->w);
    cli_error(CMD, "cannot write %s: %s", crawl_warc_writer_path(d->w),
              *why ? why : crawl_strerror(rc));
    d->status = CLI_RUNTIME;
}

/* Writes the held request and logs it as passed (or drops it). */
static void pending_resolve(struct dd *d, int drop)
{
    if (!d->pending)
        return;
    d->pending = 0;
    struct logrec l = {.uri = d->pend_uri,
                       .record_id = d->pend_id,
                       .type = "request",
                       .offset = d->pend_offset,
                       .has_offset = 1,
                       .distance = -1};
    if (drop) {
        l.decision = "dropped";
        l.reason = "request of a near-duplicate";
        d->n_dropped++;
    } else {
        l.decision = "passed";
        d->n_passed++;
        if (d->w) {
            enum crawl_code rc = crawl_warc_write_raw(d->w, d->pend_header, d->pend_header_len,
                                                      d->pend_block, d->pend_block_len);
            if (rc != CRAWL_OK)
                out_failed(d, rc);
        }
    }
    log_line(d, &l);
}

/* Holds a request record back until we know whether its response is kept.
 * Returns 1 when held, 0 when it should be handled right away. */
static int pending_hold(struct dd *d, struct crawl_warc_reader *r,
                        const struct crawl_warc_record *rec)
{
    if (rec->content_length > PENDING_MAX || strlen(rec->record_id) >= ID_MAX ||
        strlen(rec->concurrent_to) >= ID_MAX)
        return 0;
    const char *b;
    size_t bl;
    if (crawl_warc_block(r, &b, &bl) != CRAWL_OK)
        return 0;
    char *h = malloc(rec->header_len + 1), *bb = malloc(bl + 1);
    if (!h || !bb) {
        free(h);
        free(bb);
        return 0;
    }
    memcpy(h, rec->header, rec->header_len);
    memcpy(bb, b, bl);
    free(d->pend_header);
    free(d->pend_block);
    d->pend_header = h;
    d->pend_header_len = rec->header_len;
    d->pend_block = bb;
    d->pend_block_len = bl;
    snprintf(d->pend_id, sizeof d->pend_id, "%s", rec->record_id);
    snprintf(d->pend_conc, sizeof d->pend_conc, "%s", rec->concurrent_to);
    snprintf(d->pend_uri, sizeof d->pend_uri, "%s", rec->target_uri);
    d->pend_offset = rec->offset;
    d->pending = 1;
    return 1;
}

/* Is the held request the partner of response rec? */
static int pending_matches(const struct dd *d, const struct crawl_warc_record *rec)
{
    if (!d->pending)
        return 0;
    if (*rec->concurrent_to && strcmp(rec->concurrent_to, d->pend_id) == 0)
        return 1;
    if (*d->pend_conc && strcmp(d->pend_conc, rec->record_id) == 0)
        return 1;
    /* wget names neither on the request; the request just before, same URI */
    return !*d->pend_conc && strcmp(d->pend_uri, rec->target_uri) == 0;
}

static int was_dropped(const struct dd *d, const char *id)
{
    if (!*id)
        return 0;
    for (unsigned i = 0; i < DROPPED_RING; i++)
        if (strcmp(d->dropped[i], id) == 0)
            return 1;
    return 0;
}

static void copy_through(struct dd *d, struct crawl_warc_reader *r,
                         const struct crawl_warc_record *rec)
{
    if (!d->w)
        return;
    enum crawl_code rc = crawl_warc_writer_copy(d->w, r, rec);
    if (rc == CRAWL_EIO || rc == CRAWL_ENOMEM || rc == CRAWL_EINVAL)
        out_failed(d, rc);
    /* a damaged block (reported by the reader) is simply not copied */
}

static int is_damage(enum crawl_code rc)
{
    return rc == CRAWL_ETRUNCATED || rc == CRAWL_EFORMAT || rc == CRAWL_EGZIP;
}

/*
 * A block over --max-block, read as it streams: copied to the output when there is one
 * (the writer takes it back unless it proves whole), read through otherwise, so either way
 * its length, gzip members and WARC-Block-Digest are checked before the record is decided.
 * Returns CRAWL_OK, a damage code (reported by the reader), or another failure (reported
 * here).
 */
static enum crawl_code stream_through(struct dd *d, struct crawl_warc_reader *r,
                                      const struct crawl_warc_record *rec)
{
    enum crawl_code rc;
    if (d->w) {
        rc = crawl_warc_writer_copy(d->w, r, rec);
        if (rc != CRAWL_OK && !is_damage(rc))
            out_failed(d, rc);
        return rc;
    }
    char buf[64 * 1024];
    size_t n;
    while ((rc = crawl_warc_read(r, buf, sizeof buf, &n)) == CRAWL_OK && n > 0)
        ;
    if (rc != CRAWL_OK && !is_damage(rc)) {
        cli_error(CMD, "%s: %s", d->file, rc == CRAWL_EIO ? strerror(errno) : crawl_strerror(rc));
        d->status = CLI_RUNTIME;
    }
    return rc;
}

/* ---- the decisions ---- */

/* Seconds between two progress lines on a terminal: twice a second reads as live without
 * the redraws costing anything next to the records' work. */
#define PROGRESS_INTERVAL 0.5

static void progress(struct dd *d, int force)
{
    if (!d->tty || d->quiet)
        return;
    double t = now_s();
    if (!force && t - d->last_progress < PROGRESS_INTERVAL)
        return;
    d->last_progress = t;
    uint64_t bytes = d->bytes_done + (d->cur_reader ? crawl_warc_reader_pos(d->cur_reader) : 0);
    fprintf(stderr, "\rdedup: %llu records, %.1f MB, %llu new, %llu near-dup, %llu exact-dup   ",
            (unsigned long long)d->records, (double)bytes / 1e6, (unsigned long long)d->n_new,
            (unsigned long long)d->n_near, (unsigned long long)d->n_exact);
}

/* A failure to count a page's blocks into the template table: reported, not fatal. */
static void blocks_failed(struct dd *d, enum dedup_code rc)
{
    if (rc == DEDUP_OK)
        return;
    cli_error(CMD, "cannot count template blocks: %s", dedup_strerror(rc));
    d->status = CLI_RUNTIME;
}

/* An exact duplicate of the kept page in d->dr's metadata: logged with its fingerprint. */
static const char *exact_duplicate(struct dd *d, struct logrec *l, struct kept *exact)
{
    *exact = kept_view(d->dr.meta, d->dr.meta_len);
    l->has_fp = 1;
    l->fp = exact->fp;
    l->duplicate_of = exact->uri;
    l->distance = 0;
    d->n_exact++;
    return "exact-duplicate";
}

/* --method minhash with documents whose digests were lost: *hit 1 when d->sig equals the
 * signature of one of them (estimate 1: maybe an exact duplicate whose revisit cannot be
 * written). DEDUP_OK or the query's failure. */
static enum dedup_code nodig_match(struct dd *d, int *hit)
{
    *hit = 0;
    enum dedup_code c = dedup_lsh_query(d->lsh, d->sig, 1.0, 0, &d->mm, NULL);
    for (size_t i = 0; c == DEDUP_OK && i < d->mm.n; i++)
        if (d->mm.v[i].doc >= d->nodig_from && d->mm.v[i].doc < d->nodig_to)
            *hit = 1;
    return c;
}

/* The page fingerprinted (no base URL: the fingerprint is over the text, resolving links
 * would be wasted) with its host's template table as it is now (docs/FINGERPRINT.md,
 * "Template blocks"; its blocks are counted only when it is not a duplicate, so a mirror
 * never makes its own text a template); a page the depth cap cut is named once, with the
 * record (file, offset, URI). Returns filter_fingerprint_page's 0 or -1 (*res set). */
static int fingerprint_record(struct dd *d, const char *body, size_t len, const char *ctype,
                              const char *uri, const char *host, struct logrec *l,
                              struct filter_fp_result *res)
{
    struct filter_fp_opts o = d->fp_opts;
    if (d->lsh)
        o.keep_tokens = 1; /* the token string, for the signature */
    if (!d->no_templates) {
        o.mark = filter_decide_mark;
        o.mark_userdata = d->decide;
        o.host = host;
        o.keep_blocks = 1;
    }
    int got = filter_fingerprint_page(body, len, ctype, NULL, &o, res);
    if (res->truncated & EXTRACT_CUT_DEPTH) {
        char name[CLI_MESSAGE_MAX];
        if (l->has_offset)
            snprintf(name, sizeof name, "%s: offset %llu: %s", d->file,
                     (unsigned long long)l->offset, uri);
        else
            snprintf(name, sizeof name, "%s", uri);
        if (!d->quiet && d->tty)
            fputc('\n', stderr);
        cli_warn_cut(CMD, name, res->truncated, &res->cuts, EXTRACT_CUT_DEPTH, "--max-depth");
        l->truncated = "depth";
    }
    return got;
}

/* A fingerprinted page's part of the decision's input: its kept-page metadata (none when
 * out of memory: not remembered), and FILTER_DECIDE_KEEP when its fingerprint is one of
 * an index document whose digest was lost (kept_load: maybe an exact duplicate, kept). */
static void fingerprinted_input(struct dd *d, const struct filter_fp_result *res,
                                const char *record_id, const char *uri, const char *date,
                                struct filter_decide_page *p, struct logrec *l,
                                char reason[CLI_MESSAGE_MAX])
{
    p->meta_len = kept_meta(d, res->fingerprint, record_id, uri, date, d->gen);
    p->meta = d->meta;
    if (!p->meta_len) {
        p->key = NULL;
        p->key_len = 0;
    }
    l->has_fp = 1;
    l->fp = res->fingerprint;
    uint64_t fp = res->fingerprint;
    if (d->n_nodig_fp && bsearch(&fp, d->nodig_fp, d->n_nodig_fp, sizeof fp, cmp_u64)) {
        snprintf(reason, CLI_MESSAGE_MAX,
                 "the fingerprint of an index document whose "
                 "payload digest was lost: kept in full");
        d->n_nodig_kept++;
        p->flags |= FILTER_DECIDE_KEEP;
        /* most likely that document again, whose blocks were counted when it was added:
         * not counted twice (the table's memory of exact copies is not saved) */
        p->blocks = NULL;
        p->n_blocks = 0;
    }
}

/* --method minhash: the page's signature into the decision's input (the decision looks
 * it up in the LSH index), kept in full when it is one of an index document whose digest
 * was lost. 0, or -1 when the lookup failed (said). */
static int signature_input(struct dd *d, const struct filter_fp_result *res, const char *uri,
                           struct filter_decide_page *p, char reason[CLI_MESSAGE_MAX])
{
    int nodig = 0;
    enum dedup_code mc = dedup_minhash_signature(dedup_lsh_minhash(d->lsh), res->tokens,
                                                 res->tokens_len, d->sig, NULL);
    if (mc == DEDUP_OK && d->nodig_from < d->nodig_to)
        mc = nodig_match(d, &nodig);
    if (mc != DEDUP_OK) {
        cli_error(CMD, "%s: minhash lookup failed: %s", uri, dedup_strerror(mc));
        return -1;
    }
    p->sig = d->sig;
    if (nodig) {
        snprintf(reason, CLI_MESSAGE_MAX,
                 "the signature of an index document whose "
                 "payload digest was lost: kept in full");
        d->n_nodig_kept++;
        p->flags |= FILTER_DECIDE_KEEP;
        p->blocks = NULL; /* not counted twice: fingerprinted_input() */
        p->n_blocks = 0;
    }
    return 0;
}

/* What d->dr's verdict comes to, counted and logged: exact, near duplicate, new (added and
 * remembered; a failure said) or passed (not fingerprinted). Returns the decision's name. */
static const char *decided(struct dd *d, const struct filter_decide_page *p, const char *uri,
                           struct logrec *l, struct kept *exact)
{
    blocks_failed(d, d->dr.template_code);
    switch (d->dr.verdict) {
    case FILTER_VERDICT_EXACT:
        return exact_duplicate(d, l, exact);
    case FILTER_VERDICT_NEAR:
        l->duplicate_of = d->dr.dup_id;
        if (d->lsh) {
            l->jaccard = d->dr.jaccard;
            l->has_jaccard = 1;
        } else {
            l->distance = (int)d->dr.distance;
        }
        d->n_near++;
        return "near-duplicate";
    case FILTER_VERDICT_NEW:
        break;
    default: /* not fingerprinted */
        d->n_passed++;
        return "passed";
    }
    if (d->dr.add_code != DEDUP_OK) {
        cli_error(CMD, "cannot add %s to the index: %s", uri, dedup_strerror(d->dr.add_code));
        d->status = CLI_RUNTIME;
    }
    if (kept_stored(d, p->key ? d->dr.stored : FILTER_STORED_ENOMEM) != 0) {
        cli_error(CMD, "out of memory remembering kept pages");
        d->status = CLI_RUNTIME;
    }
    d->n_new++;
    return "new";
}

/* A page that could not be decided (said): passed through, the run's status 2. Returns
 * "passed". */
static const char *undecided(struct dd *d)
{
    d->status = CLI_RUNTIME;
    d->n_passed++;
    return "passed";
}

/*
 * A page (WARC response or HTML file), decided by filter/decide.h: exact duplicate by
 * payload digest (asked before the pipeline: a repeat costs no extraction), near duplicate
 * by the index, or new. ids: record_id ("" for files), uri (the index id), date.
 * Returns the decision; *exact the original when exact (exact->uri NULL otherwise; borrowed
 * until the next page).
 */
static const char *decide_page(struct dd *d, const char *body, size_t len, const char *ctype,
                               const char *uri, const char *record_id, const char *date,
                               const char *digest, struct logrec *l, char reason[CLI_MESSAGE_MAX],
                               struct kept *exact)
{
    exact->uri = NULL;
    struct filter_decide_page p = {0};
    p.id = uri;
    p.id_len = strlen(uri);
    p.key = digest;
    p.key_len = strlen(digest);
    int known;
    enum dedup_code lc = filter_decide_lookup(d->decide, &p, &d->dr, &known);
    if (lc == DEDUP_OK && known)
        return exact_duplicate(d, l, exact);
    if (lc != DEDUP_OK) {
        cli_error(CMD, "out of memory");
        return undecided(d);
    }
    char host[DEDUP_TEMPLATE_MAX_KEY + 1];
    filter_url_host_key(uri, host); /* "" for files */
    struct filter_fp_result res;
    int got = fingerprint_record(d, body, len, ctype, uri, host, l, &res);
    p.has_fp = got == 0;
    p.fp = res.fingerprint;
    p.too_little_text = got != 0 && filter_fp_result_too_little_text(&res);
    p.host = host;
    p.host_len = strlen(host);
    p.doc_hash = res.doc_hash;
    p.blocks = res.blocks;
    p.n_blocks = res.n_blocks;
    /* too little text: not a duplicate of anything; a near-duplicate on a young host:
     * its blocks count too (docs/FINGERPRINT.md, "Where T comes from") */
    p.flags = FILTER_DECIDE_LEARN_SHORT | FILTER_DECIDE_LEARN_NEAR;
    if (got == 0)
        fingerprinted_input(d, &res, record_id, uri, date, &p, l, reason);
    else
        snprintf(reason, CLI_MESSAGE_MAX, "%s", res.message);
    if (got == 0 && d->lsh && signature_input(d, &res, uri, &p, reason) != 0) {
        filter_fp_result_release(&res);
        return undecided(d);
    }
    int rc = filter_decide_page(d->decide, &p, &d->dr);
    filter_fp_result_release(&res);
    if (rc != 0) {
        cli_error(CMD, "index lookup failed: %s", dedup_strerror(d->dr.code));
        return undecided(d);
    }
    return decided(d, &p, uri, l, exact);
}

/* Logs the held damage report as a line of its own. */
static void damage_flush(struct dd *d)
{
    if (!d->damage_held)
        return;
    d->damage_held = 0;
    struct logrec l = {.offset = d->damage_offset,
                       .has_offset = 1,
                       .decision = "error",
                       .error = d->damage_what,
                       .distance = -1};
    log_line(d, &l);
}

static void on_damage(void *ud, uint64_t offset, enum crawl_code code, const char *what)
{
    struct dd *d = ud;
    (void)code;
    d->n_errors++;
    if (!d->quiet) {
        if (d->tty)
            fputc('\n', stderr);
        cli_error(CMD, "%s: offset %llu: %s", d->file, (unsigned long long)offset, what);
    }
    damage_flush(d);
    d->damage_held = 1;
    d->damage_offset = offset;
    snprintf(d->damage_what, sizeof d->damage_what, "%s", what);
}

/* A damaged record: one "error" line, with the reader's words when it reported it. */
static void log_damaged(struct dd *d, struct logrec *l, const char *fallback)
{
    l->decision = "error";
    l->error = fallback;
    if (d->damage_held && d->damage_offset == l->offset) {
        l->error = d->damage_what;
        d->damage_held = 0;
    }
    damage_flush(d);
    log_line(d, l);
}

/* A decided response's records: a near-duplicate dropped (its request and metadata with
 * it), an exact duplicate written as a revisit of the original, a new page copied; each
 * logged. */
static void write_decided(struct dd *d, struct crawl_warc_reader *r,
                          const struct crawl_warc_record *rec, const struct cli_warc_page *pg,
                          const struct logrec *l, const struct kept *orig)
{
    if (strcmp(l->decision, "near-duplicate") == 0) {
        pending_resolve(d, 1);
        snprintf(d->dropped[d->dropped_next], ID_MAX, "%s", rec->record_id);
        d->dropped_next = (d->dropped_next + 1) % DROPPED_RING;
        log_line(d, l);
        return;
    }
    pending_resolve(d, 0);
    log_line(d, l);
    if (!orig->uri) {
        copy_through(d, r, rec);
        return;
    }
    if (!d->w)
        return;
    struct crawl_warc_revisit v = {.uri = rec->target_uri,
                                   .ip = *rec->ip_address ? rec->ip_address : NULL,
                                   .date = *rec->date ? rec->date : NULL,
                                   .head = pg->block,
                                   /* a resource record has no HTTP head */
                                   .head_len = pg->msg ? crawl_http_head_len(pg->msg) : 0,
                                   .payload_digest = pg->payload_digest,
                                   .refers_to = orig->record_id,
                                   .refers_to_uri = orig->uri,
                                   .refers_to_date = orig->date};
    enum crawl_code rc = crawl_warc_write_revisit(d->w, &v, NULL);
    if (rc == CRAWL_EINVAL) /* a field we cannot repeat safely: keep the record */
        copy_through(d, r, rec);
    else if (rc != CRAWL_OK)
        out_failed(d, rc);
}

/* A response record, or a resource record (cli_warc_classify): a page decided
 * (decide_page) and written as it came to; anything
 * else (not HTML, small, too large to hold: streamed) passed through; a damaged one
 * logged as an error. */
static void handle_response(struct dd *d, struct crawl_warc_reader *r,
                            const struct crawl_warc_record *rec)
{
    struct cli_warc_page pg;
    char reason[CLI_MESSAGE_MAX] = "";
    struct logrec l = {.uri = rec->target_uri,
                       .record_id = rec->record_id,
                       .type = rec->type,
                       .offset = rec->offset,
                       .has_offset = 1,
                       .distance = -1,
                       .reason = reason};
    if (cli_warc_classify(r, rec, d->min_size, &pg) != 0) {
        cli_error(CMD, "%s: out of memory", d->file);
        d->status = CLI_RUNTIME;
        cli_warc_page_release(&pg);
        return;
    }
    int partner = pending_matches(d, rec);
    if (d->pending && !partner)
        pending_resolve(d, 0);
    if (pg.kind == CLI_WARC_DAMAGED) {
        pending_resolve(d, 0);
        log_damaged(d, &l, pg.why);
        cli_warc_page_release(&pg);
        return;
    }
    if (pg.kind == CLI_WARC_OTHER && rec->content_length > d->max_block) {
        pending_resolve(d, 0);
        enum crawl_code rc = stream_through(d, r, rec);
        if (is_damage(rc)) {
            log_damaged(d, &l, crawl_strerror(rc));
        } else if (rc == CRAWL_OK) {
            snprintf(reason, sizeof reason, "%s", pg.why);
            l.decision = "passed";
            d->n_passed++;
            log_line(d, &l);
        }
        cli_warc_page_release(&pg);
        return;
    }
    if (pg.kind == CLI_WARC_OTHER) {
        pending_resolve(d, 0);
        snprintf(reason, sizeof reason, "%s", pg.why);
        l.decision = "passed";
        d->n_passed++;
        log_line(d, &l);
        copy_through(d, r, rec);
        cli_warc_page_release(&pg);
        return;
    }
    struct kept orig;
    l.decision = decide_page(d, pg.body, pg.body_len, pg.content_type, rec->target_uri,
                             rec->record_id, rec->date, pg.payload_digest, &l, reason, &orig);
    write_decided(d, r, rec, &pg, &l, &orig);
    cli_warc_page_release(&pg);
}

/* A record that is not a response: a request held back for its response, a request or
 * metadata of a dropped near-duplicate dropped with it, anything else passed through
 * (streamed when larger than --max-block); a damaged one logged as an error. */
static void handle_other(struct dd *d, struct crawl_warc_reader *r,
                         const struct crawl_warc_record *rec)
{
    struct logrec l = {.uri = rec->target_uri,
                       .record_id = rec->record_id,
                       .type = rec->type,
                       .offset = rec->offset,
                       .has_offset = 1,
                       .distance = -1};
    int request = strcmp(rec->type, "request") == 0;
    pending_resolve(d, 0);
    if (was_dropped(d, rec->concurrent_to)) {
        l.decision = "dropped";
        l.reason = request ? "request of a near-duplicate" : "concurrent to a near-duplicate";
        d->n_dropped++;
        log_line(d, &l);
        return;
    }
    if (request && pending_hold(d, r, rec))
        return;
    enum crawl_code brc = CRAWL_OK;
    if (rec->content_length > d->max_block) {
        brc = stream_through(d, r, rec);
        if (is_damage(brc)) {
            log_damaged(d, &l, crawl_strerror(brc));
        } else if (brc == CRAWL_OK) {
            l.decision = "passed";
            d->n_passed++;
            log_line(d, &l);
        }
        return;
    }
    const char *b;
    size_t bl;
    brc = crawl_warc_block(r, &b, &bl);
    if (is_damage(brc)) {
        log_damaged(d, &l, crawl_strerror(brc));
        return;
    }
    l.decision = "passed";
    d->n_passed++;
    log_line(d, &l);
    copy_through(d, r, rec);
}

/* A WARC input (a file or '-'), record by record; an input that cannot be opened or read
 * to its end makes the status 2 (said). */
static void run_warc(struct dd *d, const char *path)
{
    struct crawl_warc_opts o = {d->max_block, on_damage, d};
    struct crawl_warc_reader *r;
    enum crawl_code rc = crawl_warc_reader_open(path, &o, &r);
    if (rc != CRAWL_OK) {
        cli_error(CMD, "cannot open %s: %s", path,
                  rc == CRAWL_EIO ? strerror(errno) : crawl_strerror(rc));
        d->status = CLI_RUNTIME;
        return;
    }
    d->cur_reader = r;
    const struct crawl_warc_record *rec;
    while ((rc = crawl_warc_next(r, &rec)) == CRAWL_OK) {
        /* a damage report ahead of this record (read-ahead into a later gzip member) waits
         * for its record, so that record gets one line */
        if (d->damage_held && d->damage_offset < rec->offset)
            damage_flush(d);
        d->records++;
        progress(d, 0);
        if (strcmp(rec->type, "response") == 0 || strcmp(rec->type, "resource") == 0)
            handle_response(d, r, rec);
        else
            handle_other(d, r, rec);
    }
    pending_resolve(d, 0);
    damage_flush(d);
    if (rc != CRAWL_EOF) {
        cli_error(CMD, "%s: %s", path, rc == CRAWL_EIO ? strerror(errno) : crawl_strerror(rc));
        d->status = CLI_RUNTIME;
    }
    d->bytes_done += crawl_warc_reader_pos(r);
    d->cur_reader = NULL;
    crawl_warc_reader_free(r);
}

static void run_html(struct dd *d, const char *path)
{
    char *data, err[CLI_MESSAGE_MAX], reason[CLI_MESSAGE_MAX] = "";
    size_t len;
    d->records++;
    progress(d, 0);
    struct logrec l = {.uri = path, .distance = -1, .reason = reason};
    if (cli_read_file(path, d->max_block, &data, &len, err, sizeof err) != 0) {
        cli_error(CMD, "cannot read %s: %s", path, err);
        d->status = CLI_RUNTIME;
        d->n_errors++;
        l.decision = "error";
        l.error = err;
        log_line(d, &l);
        return;
    }
    d->bytes_done += len;
    if (len < d->min_size) {
        snprintf(reason, sizeof reason, "body of %zu bytes is below the size floor %zu", len,
                 d->min_size);
        l.decision = "passed";
        d->n_passed++;
    } else {
        char digest[CRAWL_DIGEST_SIZE];
        if (crawl_digest_sha1(data, len, digest) != CRAWL_OK)
            digest[0] = '\0';
        struct kept orig;
        l.decision = decide_page(d, data, len, NULL, path, "", "", digest, &l, reason, &orig);
    }
    log_line(d, &l);
    free(data);
}

static int looks_like_warc(const char *path)
{
    if (cli_is_warc_name(path))
        return 1;
    FILE *f = fopen(path, "rb");
    if (!f)
        return 0;
    unsigned char b[5] = {0};
    size_t n = fread(b, 1, 5, f);
    fclose(f);
    return (n >= 2 && b[0] == 0x1f && b[1] == 0x8b) || (n == 5 && memcmp(b, "WARC/", 5) == 0);
}

static void run_path(struct dd *d, const char *path);

/* The directory walk (cli/walk.c): *.html, *.htm and WARC names; a skipped directory
 * (a loop, unreadable, nested too deep) makes the exit status 2, as an unreadable file
 * does. */
static int walk_file(void *userdata, const char *path, const char *name)
{
    size_t nl = strlen(name);
    int html = (nl > 5 && strcasecmp(name + nl - 5, ".html") == 0) ||
               (nl > 4 && strcasecmp(name + nl - 4, ".htm") == 0);
    if (html || cli_is_warc_name(name))
        run_path(userdata, path);
    return 0;
}

static void walk_skip(void *userdata, const char *path, const char *what, int failed)
{
    struct dd *d = userdata;
    cli_error(CMD, "%s: %s", path, what);
    if (failed)
        d->status = CLI_RUNTIME;
}

static void run_path(struct dd *d, const char *path)
{
    struct stat st;
    if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        static const struct cli_walk_ops ops = {walk_file, walk_skip};
        if (cli_walk(CMD, path, &ops, d) != 0)
            d->status = CLI_RUNTIME; /* out of memory: printed */
        return;
    }
    d->file = path;
    if (strcmp(path, "-") == 0 || looks_like_warc(path))
        run_warc(d, path);
    else
        run_html(d, path);
}

/* ---- options and the run ---- */

static int parse_size(const char *s, size_t *out)
{
    long v;
    if (cli_parse_long(s, 0, 1L << 40, &v) != 0)
        return -1;
    *out = (size_t)v;
    return 0;
}

enum {
    OPT_QUIET = 256,
    OPT_NO_TEMPLATES,
    OPT_K,
    OPT_INDEX,
    OPT_WARC_OUT,
    OPT_LOG,
    OPT_MIN_SIZE,
    OPT_MAX_BLOCK,
    OPT_LOCK_WAIT,
    OPT_MAX_DEPTH,
    OPT_METHOD,
    OPT_THRESHOLD
};
static const struct option longopts[] = {{"quiet", no_argument, NULL, OPT_QUIET},
                                         {"no-templates", no_argument, NULL, OPT_NO_TEMPLATES},
                                         {"k", required_argument, NULL, OPT_K},
                                         {"index", required_argument, NULL, OPT_INDEX},
                                         {"warc-out", required_argument, NULL, OPT_WARC_OUT},
                                         {"log", required_argument, NULL, OPT_LOG},
                                         {"min-size", required_argument, NULL, OPT_MIN_SIZE},
                                         {"max-block", required_argument, NULL, OPT_MAX_BLOCK},
                                         {"lock-wait", required_argument, NULL, OPT_LOCK_WAIT},
                                         {"max-depth", required_argument, NULL, OPT_MAX_DEPTH},
                                         {"method", required_argument, NULL, OPT_METHOD},
                                         {"threshold", required_argument, NULL, OPT_THRESHOLD},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};
static void pair_free(struct dd *d)
{
    dedup_index_free(d->idx);
    dedup_lsh_free(d->lsh);
    d->idx = NULL;
    d->lsh = NULL;
}

/* The simhash method: index_path's index when it exists (it must answer up to d->k), else
 * a new one sized for INDEX_EXPECTED_DOCS. CLI_OK, or the status after saying why (d's
 * index freed). */
static int simhash_open(struct dd *d, const char *index_path)
{
    struct stat st;
    if (index_path && stat(index_path, &st) == 0) {
        struct dedup_file_error fe = {0};
        enum dedup_code c = dedup_index_load(index_path, 0, &d->idx, &fe);
        if (c != DEDUP_OK) {
            cli_error(CMD, "cannot load index %s: %s%s%s", index_path, dedup_strerror(c),
                      fe.what && *fe.what ? ": " : "", fe.what ? fe.what : "");
            return CLI_RUNTIME;
        }
        if (dedup_index_k(d->idx) < d->k) {
            cli_error(CMD, "index %s answers queries up to k=%u, not %u", index_path,
                      dedup_index_k(d->idx), d->k);
            pair_free(d);
            return CLI_USAGE;
        }
        return CLI_OK;
    }
    struct dedup_design des;
    enum dedup_code c = dedup_design_choose(d->k, INDEX_EXPECTED_DOCS, 0, &des);
    if (c == DEDUP_OK)
        c = dedup_index_new(&des, &d->idx);
    if (c != DEDUP_OK) {
        cli_error(CMD, "cannot create the index: %s", dedup_strerror(c));
        return CLI_RUNTIME;
    }
    return CLI_OK;
}

/* --method minhash: the LSH index, index_path's when it exists (a simhash index there is
 * an error naming the method), else new for d->threshold. A --threshold given with an
 * existing index is used for the verification, its bands stay the index's (as pairs
 * --index); without one, the index's threshold. CLI_OK, or the status after saying why. */
static int minhash_open(struct dd *d, const char *index_path, int threshold_set)
{
    int missing = 1;
    if (index_path) {
        int st = cli_mh_load(CMD, index_path, 1, &d->lsh, &missing);
        if (st != CLI_OK)
            return st;
    }
    if (!missing) {
        if (!threshold_set)
            d->threshold = dedup_lsh_get_params(d->lsh)->threshold;
        return CLI_OK;
    }
    struct dedup_lsh_params mp;
    if (dedup_lsh_params_default(d->threshold, &mp) != DEDUP_OK ||
        dedup_lsh_new(&mp, &d->lsh) != DEDUP_OK) {
        cli_error(CMD, "out of memory");
        return CLI_RUNTIME;
    }
    return CLI_OK;
}

/* What the steps of cmd_dedup share: the run (struct dd), the options that are not the
 * run's, the index lock and the digests file's name. */
struct dedup_cmd {
    struct dd d;
    const char *index_path, *warc_out, *log_path;
    long lock_wait;
    int minhash, threshold_set, k_set;
    int first_input, n_inputs; /* argv[first_input .. n_inputs): the inputs */
    struct dedup_lock *lock;   /* --index: held from loading the pair to saving it */
    char *digests_path;        /* --index FILE's FILE.digests */
};

/* --method, --threshold and --lock-wait (set_option's others). CLI_OK, or the exit
 * status after saying why. */
static int set_method_option(struct dedup_cmd *cmd, int c, const char *v)
{
    switch (c) {
    case OPT_METHOD:
        if (strcmp(v, "simhash") != 0 && strcmp(v, "minhash") != 0)
            return cli_usage_error(CMD, "--method must be simhash or minhash, not '%s'", v);
        cmd->minhash = strcmp(v, "minhash") == 0;
        return CLI_OK;
    case OPT_THRESHOLD:
        if (cli_parse_threshold(v, &cmd->d.threshold) != 0)
            return cli_usage_error(CMD,
                                   "--threshold must be a Jaccard similarity above 0 "
                                   "and at most 1 (e.g. 0.8), not '%s'",
                                   v);
        cmd->threshold_set = 1;
        return CLI_OK;
    case OPT_LOCK_WAIT:
        if (cli_parse_long(v, 0, CLI_LOCK_WAIT_MAX, &cmd->lock_wait) != 0)
            return cli_usage_error(CMD,
                                   "--lock-wait must be a whole number of seconds "
                                   "from 0 to %ld, not '%s'",
                                   CLI_LOCK_WAIT_MAX, v);
        return CLI_OK;
    default: /* CLI_GETOPT_ERROR: said why */
        return CLI_USAGE;
    }
}

/* Applies one option (c, its value v). CLI_OK, or the exit status after saying why. */
static int set_option(struct dedup_cmd *cmd, int c, const char *v)
{
    struct dd *d = &cmd->d;
    long kv;
    switch (c) {
    case OPT_QUIET:
        d->quiet = 1;
        break;
    case OPT_NO_TEMPLATES:
        d->no_templates = 1;
        break;
    case OPT_K:
        if (cli_parse_long(v, 0, DEDUP_K_MAX, &kv) != 0)
            return cli_usage_error(CMD, "--k must be a whole number from 0 to %d, not '%s'",
                                   DEDUP_K_MAX, v);
        d->k = (unsigned)kv;
        cmd->k_set = 1;
        break;
    case OPT_INDEX:
        cmd->index_path = v;
        break;
    case OPT_WARC_OUT:
        cmd->warc_out = v;
        break;
    case OPT_LOG:
        cmd->log_path = v;
        break;
    case OPT_MIN_SIZE:
        if (parse_size(v, &d->min_size) != 0)
            return cli_usage_error(CMD, "--min-size must be a number of bytes, not '%s'", v);
        break;
    case OPT_MAX_BLOCK:
        if (parse_size(v, &d->max_block) != 0 || d->max_block < MAX_BLOCK_MIN)
            return cli_usage_error(CMD, "--max-block must be at least %u bytes, not '%s'",
                                   MAX_BLOCK_MIN, v);
        break;
    case OPT_MAX_DEPTH:
        if (cli_parse_cap(CMD, "--max-depth", v, (long)EXTRACT_MAX_DEPTH_LIMIT, &kv) != 0)
            return CLI_USAGE;
        d->fp_opts.max_depth = (unsigned)kv;
        break;
    default:
        return set_method_option(cmd, c, v);
    }
    return CLI_OK;
}

/* The command line: the options, then the inputs checked (one at least, '-' once, no
 * knob of the other method). 0, or -1 with cmd->d.status set (--help: CLI_OK). */
static int parse_command_line(struct dedup_cmd *cmd, int argc, char **argv)
{
    struct cli_getopt g;
    cli_getopt_init(&g, CMD, argc, argv, "h", longopts, usage);
    for (int c; (c = cli_getopt_next(&g)) != CLI_GETOPT_END;) {
        if (c == CLI_GETOPT_HELP)
            cmd->d.status = CLI_OK;
        else if (c >= OPT_K && !g.value)
            cmd->d.status = cli_usage_error(CMD, "%s needs a value", g.name);
        else
            cmd->d.status = set_option(cmd, c, g.value);
        if (c == CLI_GETOPT_HELP || cmd->d.status != CLI_OK)
            return -1;
    }
    cmd->first_input = g.optind;
    cmd->n_inputs = argc;
    if (g.optind >= argc)
        cmd->d.status =
            cli_usage_error(CMD, "no input (give WARC files, HTML files or directories)");
    else if (cmd->minhash && cmd->k_set)
        cmd->d.status = cli_usage_error(CMD, "--k is the simhash distance; --method minhash "
                                             "takes --threshold J instead");
    else if (!cmd->minhash && cmd->threshold_set)
        cmd->d.status = cli_usage_error(CMD, "--threshold applies to --method minhash");
    if (cmd->d.status != CLI_OK)
        return -1;
    int stdin_uses = 0;
    for (int k = g.optind; k < argc; k++)
        stdin_uses += strcmp(argv[k], "-") == 0;
    if (stdin_uses > 1) {
        cmd->d.status = cli_usage_error(CMD, "standard input ('-') can be read only once");
        return -1;
    }
    return 0;
}

/* The pair (--index FILE and FILE.digests) locked and loaded, or a new index, and the
 * decision over it. 0, or -1 with cmd->d.status set. */
static int open_pair(struct dedup_cmd *cmd)
{
    struct dd *d = &cmd->d;
    const char *index_path = cmd->index_path;
    /* the index and its digests: one writer at a time, from loading both to saving both */
    if (index_path && cli_index_lock(CMD, index_path, cmd->lock_wait, &cmd->lock) != CLI_OK) {
        d->status = CLI_RUNTIME;
        return -1;
    }
    /* the index: an earlier run's, or a new one */
    d->status = cmd->minhash ? minhash_open(d, index_path, cmd->threshold_set)
                             : simhash_open(d, index_path);
    if (d->status != CLI_OK)
        return -1;
    d->status = CLI_RUNTIME;
    cli_digests_cap_init(&d->cap, CMD, DEDUP_DIGESTS_LOST, CLI_DIGESTS_MAX, d->quiet);
    struct filter_decide_opts dopts = {.index = d->idx,
                                       .k = d->k,
                                       .lsh = d->lsh,
                                       .threshold = d->threshold,
                                       .templates = !d->no_templates,
                                       .max_payloads = CLI_DIGESTS_MAX};
    if (filter_decide_new(&dopts, &d->decide) != DEDUP_OK) {
        cli_error(CMD, "out of memory");
        return -1;
    }
    if (index_path) {
        size_t dl = strlen(index_path) + sizeof ".digests";
        cmd->digests_path = malloc(dl);
        if (cmd->digests_path)
            snprintf(cmd->digests_path, dl, "%s.digests", index_path);
        if (!cmd->digests_path || kept_load(d, cmd->digests_path, index_path) != 0)
            return -1;
    }
    d->status = CLI_OK;
    return 0;
}

/* The outputs: --log ('-': stdout) and --warc-out; with --method minhash the signature's
 * buffer (without it no input is read, the status says so). 0, or -1 with cmd->d.status
 * set. */
static int open_outputs(struct dedup_cmd *cmd)
{
    struct dd *d = &cmd->d;
    if (cmd->log_path) {
        d->log = strcmp(cmd->log_path, "-") == 0 ? stdout : fopen(cmd->log_path, "w");
        if (!d->log) {
            cli_error(CMD, "cannot write log %s: %s", cmd->log_path, strerror(errno));
            d->status = CLI_RUNTIME;
            return -1;
        }
    }
    if (cmd->warc_out) {
        struct crawl_warc_writer_opts wo = {.software = "simcrawl/" CLI_VERSION " dedup"};
        enum crawl_code c = crawl_warc_writer_open(cmd->warc_out, &wo, &d->w);
        if (c != CRAWL_OK) {
            cli_error(CMD, "cannot write %s: %s", cmd->warc_out,
                      c == CRAWL_EIO ? strerror(errno) : crawl_strerror(c));
            d->status = CLI_RUNTIME;
            return -1;
        }
    }
    if (cmd->minhash && !(d->sig = malloc(dedup_lsh_get_params(d->lsh)->h * sizeof *d->sig))) {
        cli_error(CMD, "out of memory");
        d->status = CLI_RUNTIME;
        cmd->n_inputs = cmd->first_input; /* no input: close what is open below */
    }
    return 0;
}

/* The inputs in command-line order, the progress line cleared after them. Returns the
 * seconds they took. */
static double dedup_inputs(struct dedup_cmd *cmd, char **argv)
{
    struct dd *d = &cmd->d;
    d->tty = isatty(2);
    d->t0 = now_s();
    for (int i = cmd->first_input; i < cmd->n_inputs; i++)
        run_path(d, argv[i]);
    double secs = now_s() - d->t0;
    if (d->tty && !d->quiet && d->last_progress > 0)
        fputs("\r\033[K", stderr); /* clear the progress line */
    return secs;
}

/* --index: the pair saved, digests first, then the index, both with generation d->gen:
 * a kill between the two renames leaves digests one generation ahead, which the next
 * load repairs (kept_load, "HOW IT WORKS"). 0, or -1 (said). */
static int save_pair(struct dedup_cmd *cmd)
{
    struct dd *d = &cmd->d;
    struct dedup_file_error fe = {0};
    if (d->lsh)
        dedup_lsh_set_pair_generation(d->lsh, d->gen);
    else
        dedup_index_set_pair_generation(d->idx, d->gen);
    if (kept_save(d, cmd->digests_path) != 0)
        return -1;
    enum dedup_code c = d->lsh ? dedup_lsh_save(d->lsh, cmd->index_path, &fe)
                               : dedup_index_save(d->idx, cmd->index_path, &fe);
    if (c != DEDUP_OK) {
        cli_error(CMD, "cannot save index %s: %s", cmd->index_path,
                  fe.os_error ? strerror(fe.os_error) : dedup_strerror(c));
        return -1;
    }
    return 0;
}

/* After the inputs: the WARC finished, the pair saved and unlocked, the log written out
 * and closed; a failure makes cmd->d.status CLI_RUNTIME (said). */
static void close_outputs(struct dedup_cmd *cmd)
{
    struct dd *d = &cmd->d;
    if (d->w) {
        enum crawl_code c = crawl_warc_writer_close(d->w);
        d->w = NULL;
        if (c != CRAWL_OK) {
            cli_error(CMD, "cannot finish %s: %s", cmd->warc_out, crawl_strerror(c));
            d->status = CLI_RUNTIME;
        }
    }
    if (cmd->index_path && save_pair(cmd) != 0)
        d->status = CLI_RUNTIME;
    dedup_crash_point("pair-saved");
    dedup_lock_release(cmd->lock); /* both files are in place (or the run failed) */
    cmd->lock = NULL;
    if (d->log) {
        int bad = ferror(d->log) || fflush(d->log) != 0;
        if (d->log != stdout && fclose(d->log) != 0)
            bad = 1;
        d->log = NULL;
        if (bad) {
            cli_error(CMD, "cannot write log %s: %s", cmd->log_path, strerror(errno));
            d->status = CLI_RUNTIME;
        }
    }
}

/* The summary on stderr (not with --quiet): the records by decision, bytes and speed. */
static void dedup_summary(const struct dd *d, double secs)
{
    if (d->quiet)
        return;
    double mb = (double)d->bytes_done / 1e6;
    fprintf(stderr,
            "dedup: %llu records, %.1f MB in %.2f s (%.1f MB/s, %.0f records/s): %llu new, "
            "%llu near-duplicate, %llu exact-duplicate, %llu passed, %llu dropped, %llu errors\n",
            (unsigned long long)d->records, mb, secs, secs > 0 ? mb / secs : 0.0,
            secs > 0 ? (double)d->records / secs : 0.0, (unsigned long long)d->n_new,
            (unsigned long long)d->n_near, (unsigned long long)d->n_exact,
            (unsigned long long)d->n_passed, (unsigned long long)d->n_dropped,
            (unsigned long long)d->n_errors);
    if (d->n_nodig_kept)
        fprintf(stderr,
                "dedup: %llu pages kept in full: the %s of an index "
                "document whose payload digest was lost\n",
                (unsigned long long)d->n_nodig_kept, d->lsh ? "signature" : "fingerprint");
}

/* Everything the command still holds, freed; a log left open by a failed start closed
 * and the index lock released. */
static void dedup_cmd_release(struct dedup_cmd *cmd)
{
    struct dd *d = &cmd->d;
    if (d->log && d->log != stdout)
        fclose(d->log);
    free(cmd->digests_path);
    free(d->pend_header);
    free(d->pend_block);
    kept_free(d);
    pair_free(d);
    dedup_lock_release(cmd->lock);
    dedup_lsh_matches_release(&d->mm);
    free(d->sig);
}

int cmd_dedup(int argc, char **argv)
{
    struct dedup_cmd cmd;
    memset(&cmd, 0, sizeof cmd);
    cmd.d.k = DEDUP_K_DEFAULT;
    cmd.d.min_size = CLI_WARC_MIN_SIZE_DEFAULT;
    cmd.d.max_block = CRAWL_WARC_DEFAULT_MAX_BLOCK;
    cmd.d.threshold = DEDUP_MINHASH_THRESHOLD_DEFAULT;
    cmd.d.status = CLI_OK;
    cmd.lock_wait = CLI_LOCK_WAIT_DEFAULT;
    if (parse_command_line(&cmd, argc, argv) == 0 && open_pair(&cmd) == 0 &&
        open_outputs(&cmd) == 0) {
        double secs = dedup_inputs(&cmd, argv);
        close_outputs(&cmd);
        dedup_summary(&cmd.d, secs);
    }
    dedup_cmd_release(&cmd);
    return cmd.d.status;
}
