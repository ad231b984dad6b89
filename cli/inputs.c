/*
 * The INPUT iterator of cli/inputs.h: HTML files, WARC files (cli/inputs_warc.c),
 * directories walked recursively in byte order of the names (*.html, *.htm, *.warc,
 * *.warc.gz) by cli/walk.c (links followed as find -L does, each directory entered once,
 * a loop named and skipped), "-" for one page on standard input, and --fingerprints
 * lists of "HEX ID" lines, read line by line with a capped line buffer so a list of any
 * size streams in constant memory. Lines in the escaped form `simcrawl fingerprint`
 * prints for odd paths ("\HEX  PATH" with \n and \\) are read back as such.
 *
 * Duplicate ids are found with a set of XXH3-128 hashes of the ids (16 bytes an id, no
 * copy of the strings; a false "duplicate" would need a 128-bit collision).
 * Every diagnostic names the file and, for lists, the line; the run goes on.
 */
#include "cli/inputs.h"

#include "cli/cli.h"
#include "cli/inputs_warc.h"
#include "cli/minhash.h"
#include "cli/walk.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* ---- the id set ---- */

struct cli_idset {
    XXH128_hash_t *slot; /* {0, 0} = empty */
    size_t mask, n;
};

static XXH128_hash_t id_hash(const char *id, size_t len)
{
    XXH128_hash_t h = XXH3_128bits(id, len);
    if (h.low64 == 0 && h.high64 == 0)
        h.low64 = 1;
    return h;
}

/* The slot of h in s (linear probing from h & mask): h's own, or the empty one where it
 * would go. s->slot is allocated and never full. */
static size_t idset_slot(const struct cli_idset *s, XXH128_hash_t h)
{
    size_t j = (size_t)h.low64 & s->mask;
    while ((s->slot[j].low64 || s->slot[j].high64) && !XXH128_isEqual(s->slot[j], h))
        j = (j + 1) & s->mask;
    return j;
}

/* Inserts h into *sp (made on first use); returns 1 if it was new, 0 if present, -1 when
 * out of memory / over cap. */
static int idset_insert_into(struct cli_idset **sp, XXH128_hash_t h)
{
    struct cli_idset *s = *sp;
    if (!s) {
        s = calloc(1, sizeof *s);
        if (!s)
            return -1;
        *sp = s;
    }
    if ((s->n + 1) * 2 > s->mask + 1 || !s->slot) {
        size_t size = s->slot ? (s->mask + 1) * 2 : 1024;
        if (s->n >= CLI_IDSET_MAX)
            return -1;
        XXH128_hash_t *ns = calloc(size, sizeof *ns);
        if (!ns)
            return -1;
        for (size_t i = 0; s->slot && i <= s->mask; i++) {
            if (!s->slot[i].low64 && !s->slot[i].high64)
                continue;
            size_t j = (size_t)s->slot[i].low64 & (size - 1);
            while (ns[j].low64 || ns[j].high64)
                j = (j + 1) & (size - 1);
            ns[j] = s->slot[i];
        }
        free(s->slot);
        s->slot = ns;
        s->mask = size - 1;
    }
    size_t j = idset_slot(s, h);
    if (s->slot[j].low64 || s->slot[j].high64)
        return 0;
    s->slot[j] = h;
    s->n++;
    return 1;
}

static int idset_insert(struct cli_inputs *in, XXH128_hash_t h)
{
    return idset_insert_into(&in->ids, h);
}

/* Whether h is in s (NULL: empty). */
static int idset_has(const struct cli_idset *s, XXH128_hash_t h)
{
    if (!s || !s->slot)
        return 0;
    size_t j = idset_slot(s, h);
    return s->slot[j].low64 || s->slot[j].high64;
}

void cli_inputs_init(struct cli_inputs *in, const char *cmd)
{
    memset(in, 0, sizeof *in);
    in->cmd = cmd;
    in->check_duplicates = 1;
}

void cli_inputs_release(struct cli_inputs *in)
{
    if (in->ids) {
        free(in->ids->slot);
        free(in->ids);
        in->ids = NULL;
    }
    if (in->index_ids) {
        free(in->index_ids->slot);
        free(in->index_ids);
        in->index_ids = NULL;
    }
    free(in->stdin_data);
    in->stdin_data = NULL;
}

int cli_inputs_mark_id(struct cli_inputs *in, const char *id, size_t len)
{
    return idset_insert_into(&in->index_ids, id_hash(id, len)) < 0 ? -1 : 0;
}

int cli_inputs_mark_index(struct cli_inputs *in, const struct dedup_index *idx)
{
    for (uint32_t d = 0; d < dedup_index_doc_count(idx); d++) {
        size_t len;
        const char *id = dedup_index_id(idx, d, &len);
        if (cli_inputs_mark_id(in, id, len) != 0) {
            cli_error(in->cmd, "out of memory remembering the ids of the index");
            return -1;
        }
    }
    return 0;
}

/* A diagnostic about an input: printed in pass 2 only (pass 1 reads the same inputs). */
static void input_note(struct cli_inputs *in, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void input_note(struct cli_inputs *in, const char *fmt, ...)
{
    if (in->counting)
        return;
    char msg[4096];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    cli_error(in->cmd, "%s", msg);
}

/* Hands one document to the callback after the duplicate check. A repeated id is an
 * error, except for a WARC capture (capture = 1), where it is a later capture of a URI
 * already read: skipped and counted in recaptures. */
static int deliver_doc(struct cli_inputs *in, int capture, const char *where,
                       const struct cli_doc *d, cli_doc_fn fn, void *userdata)
{
    if (in->check_duplicates) {
        XXH128_hash_t h = id_hash(d->id, d->id_len);
        if (idset_has(in->index_ids, h)) {
            in->already++; /* added by an earlier run: counted, said once at the end */
            return 0;
        }
        int r = idset_insert(in, h);
        if (r < 0) {
            cli_error(in->cmd, "out of memory remembering ids");
            return -1;
        }
        if (r == 0 && capture) {
            in->recaptures++; /* the URI's first capture is its document */
            return 0;
        }
        if (r == 0) {
            char at[CLI_MESSAGE_MAX];
            if (!where && d->list) {
                /* a list line: named only when there is something to say */
                snprintf(at, sizeof at, "%s:%zu", d->list, d->line);
                where = at;
            }
            input_note(in, "%s: duplicate id '%s': the first document with it is kept", where,
                       d->id);
            in->failed++;
            return 0;
        }
    }
    in->docs++;
    return fn(userdata, d) ? -1 : 0;
}

static int deliver(struct cli_inputs *in, const char *where, const struct cli_doc *d, cli_doc_fn fn,
                   void *userdata)
{
    return deliver_doc(in, 0, where, d, fn, userdata);
}

int cli_inputs_deliver(struct cli_inputs *in, const struct cli_doc *d, cli_doc_fn fn,
                       void *userdata)
{
    return deliver(in, NULL, d, fn, userdata);
}

static int deliver_capture(struct cli_inputs *in, const char *where, const struct cli_doc *d,
                           cli_doc_fn fn, void *userdata)
{
    return deliver_doc(in, 1, where, d, fn, userdata);
}

/* ---- kinds of files ---- */

void cli_doc_page(struct cli_doc *d, const char *id, const char *host,
                  const struct filter_fp_result *res)
{
    *d = (struct cli_doc){.id = id,
                          .id_len = strlen(id),
                          .fp = res->fingerprint,
                          .host = host,
                          .blocks = res->blocks,
                          .n_blocks = res->n_blocks,
                          .doc_hash = res->doc_hash,
                          .tokens = res->tokens,
                          .tokens_len = res->tokens_len};
    if (res->doc) {
        d->title = extract_doc_title(res->doc);
        d->text = extract_doc_text(res->doc, &d->text_len);
    }
}

void cli_inputs_skipped(const struct cli_inputs *in, const char *id, const char *reason)
{
    if (in->skip && !in->counting)
        in->skip(in->skip_userdata, id, reason);
}

/* The page options of in for a page of host (pass 1: blocks only; pass 2: templates). */
void cli_inputs_page_opts(const struct cli_inputs *in, const char *host, struct filter_fp_opts *o)
{
    *o = in->fp_opts;
    o->host = host;
    if (in->counting) {
        o->blocks_only = 1;
        o->keep_blocks = 1;
    } else if (in->templates) {
        o->templates = in->templates;
    }
}

static int input_html(struct cli_inputs *in, const char *path, cli_doc_fn fn, void *userdata)
{
    struct filter_fp_result res;
    struct filter_fp_opts o;
    int rc = 0, got;
    cli_inputs_page_opts(in, "", &o);
    if (strcmp(path, "-") == 0 && (in->learn || in->stdin_read)) {
        /* read once: pass 1 keeps standard input for pass 2 */
        if (!in->stdin_read) {
            char err[CLI_MESSAGE_MAX];
            in->stdin_read = 1;
            if (cli_read_file(path, o.max_bytes, &in->stdin_data, &in->stdin_len, err,
                              sizeof err) != 0)
                in->stdin_data = NULL;
        }
        if (in->stdin_data) {
            got = filter_fingerprint_page(in->stdin_data, in->stdin_len, NULL, NULL, &o, &res);
        } else {
            memset(&res, 0, sizeof res);
            res.stage = FILTER_FP_READ;
            snprintf(res.message, sizeof res.message, "cannot read standard input");
            got = -1;
        }
    } else {
        got = cli_fingerprint_file(path, &o, &res);
    }
    if (!in->counting) /* a cut page is named once, in pass 2 */
        cli_warn_cut(in->cmd, path, res.truncated, &res.cuts, EXTRACT_CUT_DEPTH, "--max-depth");
    if (got != 0) {
        input_note(in, "%s: %s", path, res.message);
        if (!filter_fp_result_too_little_text(&res) && !in->counting)
            in->failed++; /* too little text is an answer about the page, not a failure */
        cli_inputs_skipped(in, path, res.message);
    } else {
        struct cli_doc d;
        cli_doc_page(&d, path, "", &res);
        rc = deliver(in, path, &d, fn, userdata);
    }
    filter_fp_result_release(&res);
    return rc;
}

/* What a file is read as, by the end of its name (case-insensitive). In a directory walk
 * only these are read; named on the command line, any other file is read as HTML.
 * WARC files go to cli/inputs_warc.c with this file's deliver_capture() (duplicate check,
 * recaptures, counts). */
struct input_kind {
    const char *suffix;
    int (*run)(struct cli_inputs *in, const char *path, cli_doc_fn fn, void *userdata);
};

static int input_warc(struct cli_inputs *in, const char *path, cli_doc_fn fn, void *userdata)
{
    return cli_inputs_warc(in, path, fn, userdata, deliver_capture);
}

static const struct input_kind kinds[] = {
    {".html", input_html},
    {".htm", input_html},
    {".warc", input_warc},
    {".warc.gz", input_warc},
};

static const struct input_kind *kind_of(const char *name)
{
    size_t n = strlen(name);
    for (size_t i = 0; i < sizeof kinds / sizeof kinds[0]; i++) {
        size_t s = strlen(kinds[i].suffix);
        if (n > s && strcasecmp(name + n - s, kinds[i].suffix) == 0)
            return &kinds[i];
    }
    return NULL;
}

/* The directory walk (cli/walk.c): files of the kinds above, diagnostics through
 * input_note (quiet in pass 1); a loop or an unreadable directory counts in failed. */
struct walk_ctx {
    struct cli_inputs *in;
    cli_doc_fn fn;
    void *userdata;
};

static int walk_file(void *userdata, const char *path, const char *name)
{
    struct walk_ctx *c = userdata;
    const struct input_kind *k = kind_of(name);
    return k ? k->run(c->in, path, c->fn, c->userdata) : 0;
}

static void walk_skip(void *userdata, const char *path, const char *what, int failed)
{
    struct walk_ctx *c = userdata;
    input_note(c->in, "%s: %s", path, what);
    if (failed)
        c->in->failed++;
}

int cli_inputs_path(struct cli_inputs *in, const char *path, cli_doc_fn fn, void *userdata)
{
    struct stat st;
    if (strcmp(path, "-") != 0 && stat(path, &st) == 0 && S_ISDIR(st.st_mode)) {
        static const struct cli_walk_ops ops = {walk_file, walk_skip};
        struct walk_ctx c = {in, fn, userdata};
        return cli_walk(in->cmd, path, &ops, &c);
    }
    const struct input_kind *k = kind_of(path);
    return k ? k->run(in, path, fn, userdata) : input_html(in, path, fn, userdata);
}

/* ---- --fingerprints lists (parsed by dedup_fplist_*) ---- */

#define CLI_LIST_CHUNK ((size_t)1 << 20)

void cli_inputs_list_warn(struct cli_inputs *in, const char *name, unsigned *warned, size_t line,
                          const char *what)
{
    in->failed++;
    if (*warned < CLI_INPUT_WARN_MAX)
        cli_error(in->cmd, "%s:%zu: %s", name, line, what);
    else if (*warned == CLI_INPUT_WARN_MAX)
        cli_error(in->cmd, "%s: more malformed lines; not shown", name);
    if (*warned <= CLI_INPUT_WARN_MAX)
        (*warned)++;
}

void cli_list_warn(void *userdata, size_t line, const char *what)
{
    struct cli_list_ctx *c = userdata;
    cli_inputs_list_warn(c->in, c->name, &c->warned, line, what);
}

int cli_list_entry(void *userdata, uint64_t fp, const char *id, size_t id_len, size_t line)
{
    struct cli_list_ctx *c = userdata;
    if (id_len > DEDUP_INDEX_MAX_ID_BYTES) {
        cli_list_warn(c, line, "id longer than 65536 bytes");
        return 0;
    }
    /* the duplicate diagnostic names the list and the line (deliver_doc) */
    struct cli_doc d = {id, id_len, fp,   NULL, NULL,    0,    0,    NULL,
                        0,  NULL,   NULL, 0,    c->name, line, NULL, 0};
    return deliver(c->in, NULL, &d, c->fn, c->userdata) ? 1 : 0;
}

int cli_inputs_fplist_stream(struct cli_inputs *in, FILE *f, const char *name, cli_doc_fn fn,
                             void *userdata)
{
    struct cli_list_ctx c = {in, name, 0, fn, userdata};
    struct dedup_fplist *p = dedup_fplist_new();
    int rc = 0;
    if (!p) {
        cli_error(in->cmd, "%s: out of memory", name);
        return -1;
    }
    /* large chunks parsed in place: one pass over the bytes, no copy of whole lines */
    char *chunk = malloc(CLI_LIST_CHUNK);
    if (!chunk) {
        dedup_fplist_free(p);
        cli_error(in->cmd, "%s: out of memory", name);
        return -1;
    }
    size_t got;
    while (rc == 0 && (got = fread(chunk, 1, CLI_LIST_CHUNK, f)) > 0)
        rc = dedup_fplist_feed_inplace(p, chunk, got, cli_list_entry, cli_list_warn, &c);
    free(chunk);
    if (rc == 0 && ferror(f)) {
        cli_error(in->cmd, "%s: read error: %s", name, strerror(errno));
        in->failed++;
    } else if (rc == 0) {
        rc = dedup_fplist_finish(p, cli_list_entry, cli_list_warn, &c);
    }
    dedup_fplist_free(p);
    return rc ? -1 : 0;
}

int cli_inputs_fplist(struct cli_inputs *in, const char *path, cli_doc_fn fn, void *userdata)
{
    int is_stdin = strcmp(path, "-") == 0;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    if (!f) {
        cli_error(in->cmd, "cannot open fingerprint list %s: %s", path, strerror(errno));
        in->failed++;
        return 0;
    }
    struct stat st;
    if (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode)) {
        cli_error(in->cmd, "fingerprint list %s: is a directory", path);
        in->failed++;
        if (!is_stdin)
            fclose(f);
        return 0;
    }
    int rc = cli_inputs_fplist_stream(in, f, is_stdin ? "(standard input)" : path, fn, userdata);
    if (!is_stdin)
        fclose(f);
    return rc;
}

/* Pass 1: counts one page's blocks into in->templates (userdata: in). */
static int count_page(void *userdata, const struct cli_doc *doc)
{
    struct cli_inputs *in = userdata;
    if (!doc->n_blocks)
        return 0;
    enum dedup_code rc = dedup_templates_add_doc(in->templates, doc->host, strlen(doc->host),
                                                 doc->doc_hash, doc->blocks, doc->n_blocks, NULL);
    if (rc != DEDUP_OK) {
        cli_error(in->cmd, "cannot count the blocks of %s: %s", doc->id, dedup_strerror(rc));
        return 1;
    }
    return 0;
}

/* A copy of in's id set (NULL for none); -1 when out of memory. */
static int idset_copy(const struct cli_idset *s, struct cli_idset **out)
{
    *out = NULL;
    if (!s)
        return 0;
    struct cli_idset *c = calloc(1, sizeof *c);
    if (!c)
        return -1;
    *c = *s;
    if (s->slot) {
        c->slot = malloc((s->mask + 1) * sizeof *c->slot);
        if (!c->slot) {
            free(c);
            return -1;
        }
        memcpy(c->slot, s->slot, (s->mask + 1) * sizeof *c->slot);
    }
    *out = c;
    return 0;
}

static void idset_free(struct cli_idset *s)
{
    if (s) {
        free(s->slot);
        free(s);
    }
}

int cli_inputs_run(struct cli_inputs *in, char **fplists, int nfplists, char **paths, int npaths,
                   cli_doc_fn fn, void *userdata)
{
    if (in->learn && in->templates && npaths > 0) {
        /* pass 1: the same walk and the same duplicate-id rule, counting instead of
         * delivering, quietly; counters are restored for pass 2 */
        struct cli_idset *saved;
        if (idset_copy(in->ids, &saved) != 0) {
            cli_error(in->cmd, "out of memory remembering ids");
            return -1;
        }
        unsigned long docs = in->docs, failed = in->failed, recaptures = in->recaptures,
                      already = in->already;
        in->counting = 1;
        int rc = 0;
        for (int i = 0; i < npaths && rc == 0; i++)
            rc = cli_inputs_path(in, paths[i], count_page, in);
        in->counting = 0;
        idset_free(in->ids);
        in->ids = saved;
        in->docs = docs;
        in->failed = failed;
        in->recaptures = recaptures;
        in->already = already;
        if (rc != 0)
            return -1;
    }
    for (int i = 0; i < nfplists; i++)
        if (cli_inputs_fplist(in, fplists[i], fn, userdata) != 0)
            return -1;
    for (int i = 0; i < npaths; i++)
        if (cli_inputs_path(in, paths[i], fn, userdata) != 0)
            return -1;
    if (in->already && !in->quiet)
        fprintf(stderr,
                "simcrawl %s: %lu document%s already in the index (the same id%s, added "
                "before) skipped\n",
                in->cmd, in->already, in->already == 1 ? "" : "s", in->already == 1 ? "" : "s");
    if (in->recaptures && !in->quiet)
        fprintf(stderr,
                "simcrawl %s: %lu later WARC capture%s of URIs already read skipped (the first "
                "capture of a URI is its document)\n",
                in->cmd, in->recaptures, in->recaptures == 1 ? "" : "s");
    return 0;
}

/* ---- output helpers ---- */

size_t cli_utf8_seq_len(const unsigned char *s, size_t n)
{
    unsigned char c = s[0];
    size_t len;
    unsigned char lo = 0x80, hi = 0xbf;
    if (c >= 0xc2 && c <= 0xdf)
        len = 2;
    else if (c >= 0xe0 && c <= 0xef) {
        len = 3;
        if (c == 0xe0)
            lo = 0xa0;
        else if (c == 0xed)
            hi = 0x9f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4;
        if (c == 0xf0)
            lo = 0x90;
        else if (c == 0xf4)
            hi = 0x8f;
    } else
        return 0;
    if (n < len || s[1] < lo || s[1] > hi)
        return 0;
    for (size_t i = 2; i < len; i++)
        if (s[i] < 0x80 || s[i] > 0xbf)
            return 0;
    return len;
}

void cli_put_json_string(FILE *out, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t run = 0;
    putc('"', out);
    for (size_t i = 0; i < len;) {
        unsigned char c = s[i];
        if (c >= 0x20 && c != '"' && c != '\\' && c < 0x80) {
            i++;
            run++;
            continue;
        }
        size_t u = c >= 0x80 ? cli_utf8_seq_len(s + i, len - i) : 0;
        if (u) {
            i += u;
            run += u;
            continue;
        }
        if (run)
            fwrite(s + i - run, 1, run, out);
        run = 0;
        if (c == '"' || c == '\\') {
            putc('\\', out);
            putc(c, out);
        } else if (c < 0x20) {
            fprintf(out, "\\u%04x", c);
        } else {
            fputs("\\ufffd", out);
        }
        i++;
    }
    if (run)
        fwrite(s + len - run, 1, run, out);
    putc('"', out);
}

void cli_put_text_id(FILE *out, const char *str, size_t len)
{
    const unsigned char *s = (const unsigned char *)str;
    size_t run = 0;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = s[i];
        if (c >= 0x20 && c != 0x7f && c != '\\') {
            run++;
            continue;
        }
        if (run)
            fwrite(s + i - run, 1, run, out);
        run = 0;
        if (c == '\\')
            fputs("\\\\", out);
        else
            fprintf(out, "\\x%02x", c);
    }
    if (run)
        fwrite(s + len - run, 1, run, out);
}

void cli_put_pair_line(FILE *out, int jsonl, const char *ia, size_t la, const char *ib, size_t lb,
                       const char *name, const char *value)
{
    if (jsonl) {
        fputs("{\"a\": ", out);
        cli_put_json_string(out, ia, la);
        fputs(", \"b\": ", out);
        cli_put_json_string(out, ib, lb);
        fprintf(out, ", \"%s\": %s}\n", name, value);
    } else {
        fputs(value, out);
        putc('\t', out);
        cli_put_text_id(out, ia, la);
        putc('\t', out);
        cli_put_text_id(out, ib, lb);
        putc('\n', out);
    }
}

void cli_inputs_use_templates(struct cli_inputs *in, struct dedup_templates *t, int learn)
{
    in->templates = t;
    in->learn = learn && t;
}

int cli_inputs_learn_templates(struct cli_inputs *in, struct dedup_index *idx,
                               struct dedup_templates **own)
{
    struct dedup_templates *t = idx ? dedup_index_templates(idx) : (*own = dedup_templates_new());
    if (!t) {
        cli_error(in->cmd, "out of memory");
        return CLI_RUNTIME;
    }
    cli_inputs_use_templates(in, t, 1);
    return CLI_OK;
}

unsigned cli_threads(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        n = 1;
    if (n > 8)
        n = 8;
    return (unsigned)n;
}

/* ---- arguments ---- */

/* The options of cli_args_parse(), each with the CLI_ARG_* bit that allows it (0: every
 * command's). */
enum {
    ARG_K = 256,
    ARG_FORMAT,
    ARG_INDEX,
    ARG_TABLES,
    ARG_FINGERPRINTS,
    ARG_LOCK_WAIT,
    ARG_MAX_DEPTH,
    ARG_METHOD,
    ARG_THRESHOLD,
    ARG_SHINGLE_WORDS,
    ARG_NUM_PERM,
    ARG_TOP,
    ARG_NO_TEMPLATES,
    ARG_QUIET,
    ARG_FROM_INDEX
};
static const struct {
    struct option opt;
    unsigned allowed_by;
} arg_options[] = {
    {{"k", required_argument, NULL, ARG_K}, 0},
    {{"format", required_argument, NULL, ARG_FORMAT}, CLI_ARG_FORMAT},
    {{"index", required_argument, NULL, ARG_INDEX}, CLI_ARG_INDEX},
    {{"tables", required_argument, NULL, ARG_TABLES}, CLI_ARG_TABLES},
    {{"fingerprints", required_argument, NULL, ARG_FINGERPRINTS}, 0},
    {{"lock-wait", required_argument, NULL, ARG_LOCK_WAIT}, CLI_ARG_LOCK_WAIT},
    {{"max-depth", required_argument, NULL, ARG_MAX_DEPTH}, CLI_ARG_MAX_DEPTH},
    {{"method", required_argument, NULL, ARG_METHOD}, CLI_ARG_METHOD},
    {{"threshold", required_argument, NULL, ARG_THRESHOLD}, CLI_ARG_METHOD},
    {{"shingle-words", required_argument, NULL, ARG_SHINGLE_WORDS}, CLI_ARG_METHOD},
    {{"num-perm", required_argument, NULL, ARG_NUM_PERM}, CLI_ARG_METHOD},
    {{"top", required_argument, NULL, ARG_TOP}, CLI_ARG_TOP},
    {{"no-templates", no_argument, NULL, ARG_NO_TEMPLATES}, CLI_ARG_TEMPLATES},
    {{"quiet", no_argument, NULL, ARG_QUIET}, CLI_ARG_QUIET},
    {{"from-index", required_argument, NULL, ARG_FROM_INDEX}, CLI_ARG_FROM_INDEX},
    {{"help", no_argument, NULL, 'h'}, 0},
};
#define N_ARG_OPTIONS (sizeof arg_options / sizeof arg_options[0])

/* One option c with its value into a (formats: --format's names; *stdin_uses counts
 * "-"). CLI_OK, or CLI_USAGE after a diagnostic. */
static int apply_arg(const char *cmd, int c, const char *value, const char *name,
                     const char *const *formats, struct cli_args *a, int *stdin_uses)
{
    switch (c) {
    case ARG_NO_TEMPLATES:
        a->no_templates = 1;
        break;
    case ARG_QUIET:
        a->quiet = 1;
        break;
    case ARG_K:
        if (cli_parse_long(value, 0, DEDUP_K_MAX, &a->k) != 0)
            return cli_usage_error(cmd, "--k must be a whole number from 0 to %d, not '%s'",
                                   DEDUP_K_MAX, value);
        a->k_set = 1;
        break;
    case ARG_FORMAT: {
        int ok = 0;
        for (const char *const *f = formats; f && *f; f++)
            ok |= strcmp(*f, value) == 0;
        if (!ok)
            return cli_usage_error(cmd, "unknown --format '%s'", value);
        a->format = value;
        break;
    }
    case ARG_INDEX:
        a->index = value;
        break;
    case ARG_FROM_INDEX:
        a->from_index = value;
        break;
    case ARG_TABLES:
        if (cli_parse_long(value, 1, DEDUP_MAX_TABLES, &a->tables) != 0)
            return cli_usage_error(cmd, "--tables must be a whole number from 1 to %d",
                                   DEDUP_MAX_TABLES);
        break;
    case ARG_LOCK_WAIT:
        if (cli_parse_long(value, 0, CLI_LOCK_WAIT_MAX, &a->lock_wait) != 0)
            return cli_usage_error(cmd,
                                   "--lock-wait must be a whole number of seconds "
                                   "from 0 to %ld, not '%s'",
                                   CLI_LOCK_WAIT_MAX, value);
        break;
    case ARG_MAX_DEPTH:
        if (cli_parse_cap(cmd, "--max-depth", value, (long)EXTRACT_MAX_DEPTH_LIMIT,
                          &a->max_depth) != 0)
            return CLI_USAGE;
        break;
    case ARG_METHOD:
    case ARG_THRESHOLD:
    case ARG_SHINGLE_WORDS:
    case ARG_NUM_PERM:
        if (cli_mh_option(cmd, name, value, &a->mh) != CLI_OK)
            return CLI_USAGE;
        break;
    case ARG_TOP:
        if (cli_parse_long(value, 1, CLI_TOP_MAX, &a->top) != 0)
            return cli_usage_error(cmd,
                                   "--top must be a whole number from 1 to %ld, "
                                   "not '%s'",
                                   CLI_TOP_MAX, value);
        break;
    default: /* ARG_FINGERPRINTS */
        *stdin_uses += strcmp(value, "-") == 0;
        a->fplists[a->nfplists++] = (char *)value;
        break;
    }
    return CLI_OK;
}

/* The options and the inputs together: CLI_OK, or CLI_USAGE after a diagnostic. */
static int check_args(const char *cmd, unsigned allowed, const struct cli_args *a, int stdin_uses)
{
    if (cli_mh_check(cmd, &a->mh, a->k_set, " (simhash takes --k N)") != CLI_OK)
        return CLI_USAGE;
    if (stdin_uses > 1)
        return cli_usage_error(cmd, "standard input ('-') can be read only once");
    if ((allowed & CLI_ARG_NEED_INPUT) && a->npaths == 0 && a->nfplists == 0 && !a->from_index)
        return cli_usage_error(cmd, "no input (give INPUT... or --fingerprints FILE)");
    return CLI_OK;
}

int cli_args_parse(const char *cmd, int argc, char **argv, unsigned allowed,
                   const char *const *formats, void (*usage)(FILE *out), struct cli_args *a)
{
    memset(a, 0, sizeof *a);
    a->k = DEDUP_K_DEFAULT;
    a->format = "text";
    a->lock_wait = CLI_LOCK_WAIT_DEFAULT;
    a->mh.threshold = DEDUP_MINHASH_THRESHOLD_DEFAULT;
    a->fplists = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *a->fplists);
    a->paths = malloc((size_t)(argc > 0 ? argc : 1) * sizeof *a->paths);
    if (!a->fplists || !a->paths) {
        cli_error(cmd, "out of memory");
        return CLI_USAGE;
    }
    struct option longopts[N_ARG_OPTIONS + 1];
    size_t n = 0;
    for (size_t i = 0; i < N_ARG_OPTIONS; i++)
        if ((arg_options[i].allowed_by & allowed) == arg_options[i].allowed_by)
            longopts[n++] = arg_options[i].opt;
    memset(&longopts[n], 0, sizeof longopts[n]);
    int stdin_uses = 0;
    struct cli_getopt g;
    cli_getopt_init(&g, cmd, argc, argv, "h", longopts, usage);
    for (int c; (c = cli_getopt_next(&g)) != CLI_GETOPT_END;) {
        if (c == CLI_GETOPT_HELP) {
            a->help = 1;
            return CLI_OK;
        }
        if (c == CLI_GETOPT_ERROR)
            return CLI_USAGE;
        if (g.opt && g.opt->has_arg == required_argument && !g.value)
            return cli_usage_error(cmd, "%s needs a value", g.name);
        if (apply_arg(cmd, c, g.value, g.name, formats, a, &stdin_uses) != CLI_OK)
            return CLI_USAGE;
    }
    for (int i = g.optind; i < argc; i++) {
        stdin_uses += strcmp(argv[i], "-") == 0;
        a->paths[a->npaths++] = argv[i];
    }
    return check_args(cmd, allowed, a, stdin_uses);
}

void cli_args_release(struct cli_args *a)
{
    free(a->fplists);
    free(a->paths);
    a->fplists = a->paths = NULL;
}

/* ---- staging ---- */

#define CLI_STAGE_MAX_DOCS DEDUP_INDEX_MAX_DOCS

int cli_stage_add(void *stage, const struct cli_doc *doc)
{
    struct cli_stage *s = stage;
    if (s->n + 1 >= s->cap) {
        if (s->n >= CLI_STAGE_MAX_DOCS) {
            cli_error(s->cmd, "more than %u documents", CLI_STAGE_MAX_DOCS);
            return 1;
        }
        size_t cap = s->cap ? s->cap * 2 : 4096;
        uint64_t *fp = realloc(s->fp, cap * sizeof *fp);
        if (!fp)
            goto oom;
        s->fp = fp;
        uint64_t *off = realloc(s->off, (cap + 1) * sizeof *off);
        if (!off)
            goto oom;
        s->off = off;
        if (!s->cap)
            s->off[0] = 0;
        s->cap = cap;
    }
    if (s->ids_len + doc->id_len + 1 > s->ids_cap) {
        size_t cap = s->ids_cap ? s->ids_cap : 65536;
        while (cap < s->ids_len + doc->id_len + 1)
            cap *= 2;
        char *ids = realloc(s->ids, cap);
        if (!ids)
            goto oom;
        s->ids = ids;
        s->ids_cap = cap;
    }
    memcpy(s->ids + s->ids_len, doc->id, doc->id_len);
    s->ids[s->ids_len + doc->id_len] = '\0';
    s->ids_len += doc->id_len + 1;
    s->fp[s->n++] = doc->fp;
    s->off[s->n] = s->ids_len;
    return 0;
oom:
    cli_error(s->cmd, "out of memory reading the inputs");
    return 1;
}

void cli_stage_release(struct cli_stage *s)
{
    free(s->fp);
    free(s->off);
    free(s->ids);
    memset(s, 0, sizeof *s);
}

/* ---- index files ---- */

const char *cli_index_strerror(enum dedup_code code)
{
    switch (code) {
    case DEDUP_EVERSION:
        return "unsupported index format version";
    case DEDUP_ETRUNCATED:
        return "truncated index file";
    case DEDUP_ECHECKSUM:
        return "checksum mismatch (the file is damaged)";
    default:
        return dedup_strerror(code);
    }
}

int cli_index_load(const char *cmd, const char *path, int missing_ok, struct dedup_index **out,
                   int *missing)
{
    struct dedup_file_error err;
    *out = NULL;
    if (missing)
        *missing = 0;
    enum dedup_code rc = dedup_index_load(path, 0, out, &err);
    if (rc == DEDUP_OK)
        return CLI_OK;
    if (rc == DEDUP_EIO && err.os_error == ENOENT && missing_ok) {
        if (missing)
            *missing = 1;
        return CLI_OK;
    }
    if (rc == DEDUP_EIO && err.os_error)
        cli_error(cmd, "cannot load index %s: %s: %s", path, err.what, strerror(err.os_error));
    else if (rc == DEDUP_EIO || rc == DEDUP_ENOMEM)
        cli_error(cmd, "cannot load index %s: %s", path, err.what);
    else
        cli_error(cmd, "cannot load index %s: %s at byte offset %llu (%s)", path, err.what,
                  (unsigned long long)err.offset, cli_index_strerror(rc));
    return CLI_RUNTIME;
}

int cli_index_create(const char *cmd, unsigned k, uint64_t n, unsigned tables,
                     struct dedup_index **out)
{
    struct dedup_design d;
    enum dedup_code rc = dedup_design_choose(k, n, tables, &d);
    if (rc == DEDUP_EINVAL) {
        cli_error(cmd, "no table design for k=%u has %u tables", k, tables);
        return CLI_USAGE;
    }
    if (rc == DEDUP_OK)
        rc = dedup_index_new(&d, out);
    if (rc != DEDUP_OK) {
        cli_error(cmd, "cannot make an index: %s", dedup_strerror(rc));
        return CLI_RUNTIME;
    }
    return CLI_OK;
}

int cli_index_add_stage(const char *cmd, struct dedup_index *idx, const struct cli_stage *s)
{
    for (size_t i = 0; i < s->n; i++) {
        const char *id = s->ids + s->off[i];
        enum dedup_code rc =
            dedup_index_add(idx, s->fp[i], id, s->off[i + 1] - s->off[i] - 1, NULL);
        if (rc != DEDUP_OK) {
            cli_error(cmd, "cannot add '%s' to the index: %s", id, dedup_strerror(rc));
            return CLI_RUNTIME;
        }
    }
    return CLI_OK;
}

struct lock_wait_ctx {
    const char *cmd, *path;
    long wait_s;
};

static void say_waiting(void *userdata, const char *lock_path, long pid)
{
    const struct lock_wait_ctx *w = userdata;
    (void)lock_path;
    char who[40] = "";
    if (pid > 0)
        snprintf(who, sizeof who, " (pid %ld)", pid);
    cli_error(w->cmd, "%s is locked by another writer%s; waiting up to %ld s (--lock-wait)",
              w->path, who, w->wait_s);
}

int cli_index_lock(const char *cmd, const char *path, long wait_s, struct dedup_lock **out)
{
    struct dedup_file_error err;
    struct lock_wait_ctx w = {cmd, path, wait_s};
    unsigned removed = 0;
    enum dedup_code rc = dedup_lock_acquire(path, (unsigned long)wait_s * 1000ul, say_waiting, &w,
                                            out, &removed, &err);
    if (rc == DEDUP_ELOCKED) {
        cli_error(cmd, "%s is locked by another writer (waited %ld s)", path, wait_s);
        return CLI_RUNTIME;
    }
    if (rc == DEDUP_EIO && err.os_error) {
        cli_error(cmd, "cannot lock index %s: %s %s.lock: %s", path, err.what, path,
                  strerror(err.os_error));
        return CLI_RUNTIME;
    }
    if (rc != DEDUP_OK) {
        cli_error(cmd, "cannot lock index %s: %s", path, err.what);
        return CLI_RUNTIME;
    }
    if (removed)
        cli_error(cmd, "%s: removed %u temporary file%s left by a writer that was stopped", path,
                  removed, removed == 1 ? "" : "s");
    return CLI_OK;
}

int cli_index_save(const char *cmd, struct dedup_index *idx, const char *path)
{
    struct dedup_file_error err;
    enum dedup_code rc = dedup_index_save(idx, path, &err);
    if (rc == DEDUP_OK)
        return CLI_OK;
    if (err.os_error)
        cli_error(cmd, "cannot save index %s: %s: %s", path, err.what, strerror(err.os_error));
    else
        cli_error(cmd, "cannot save index %s: %s (%s)", path, err.what, dedup_strerror(rc));
    return CLI_RUNTIME;
}
