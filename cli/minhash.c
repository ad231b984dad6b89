/*
 * `--method minhash` for pairs, clusters, query, index add|stats and compare
 * (cli/minhash.h). Pages go through the same INPUT iterator as the simhash path
 * (cli/inputs.c: files, directories, WARC files, -; templates learned over the inputs or
 * read from the index), with fp_opts.keep_tokens set so that each document arrives with
 * the token string that was fingerprinted; its MinHash signature (dedup/minhash.h,
 * docs/MINHASH.md) is computed here and added to an LSH index (b x r chosen from the
 * threshold). --fingerprints FILE is a MinHash signature list (docs/MINHASH.md, "Signature
 * lists", written by `simcrawl fingerprint --method minhash`), read here (mh_list) and
 * handed over as the iterator's own documents. Output records: pairs {"a","b","jaccard"}
 * (the signatures' estimate), clusters with each member's estimate against its
 * representative (text, jsonl, or the html report of cli/report_html.c), query matches
 * most similar first.
 */
#include "cli/minhash.h"
#include "cli/cli.h"
#include "cli/report_html.h"

#include <ctype.h>
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cli_parse_threshold(const char *s, double *out)
{
    char *end;
    if (!*s || *s == ' ')
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (*end || errno || !(v > 0 && v <= 1))
        return -1;
    *out = v;
    return 0;
}

enum dedup_method cli_file_method(const char *path)
{
    char head[8];
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0)
        return DEDUP_METHOD_UNKNOWN;
    ssize_t n = read(fd, head, sizeof head);
    close(fd);
    return n == 8 ? dedup_file_method(head, 8) : DEDUP_METHOD_UNKNOWN;
}

int cli_mh_params(const char *cmd, const struct cli_mh_opts *o, struct dedup_lsh_params *p)
{
    if (dedup_lsh_params_default(o->threshold, p) != DEDUP_OK)
        return cli_usage_error(cmd, "--threshold %g is out of range", o->threshold);
    if (o->shingle_words)
        p->k = (unsigned)o->shingle_words;
    if (o->num_perm) {
        p->h = (unsigned)o->num_perm;
        if (dedup_lsh_optimal(p->threshold, p->h, DEDUP_LSH_FP_WEIGHT, DEDUP_LSH_FN_WEIGHT, &p->b,
                              &p->r) != DEDUP_OK)
            return cli_usage_error(cmd, "no bands for --num-perm %u", p->h);
    }
    return CLI_OK;
}

static const char *code_words(enum dedup_code rc)
{
    return cli_index_strerror(rc);
}

int cli_mh_load(const char *cmd, const char *path, int missing_ok, struct dedup_lsh **out,
                int *missing)
{
    struct dedup_file_error err;
    *out = NULL;
    if (missing)
        *missing = 0;
    enum dedup_code rc = dedup_lsh_load(path, out, &err);
    if (rc == DEDUP_OK)
        return CLI_OK;
    if (rc == DEDUP_EIO && err.os_error == ENOENT && missing_ok) {
        if (missing)
            *missing = 1;
        return CLI_OK;
    }
    if (rc == DEDUP_EFORMAT && cli_file_method(path) == DEDUP_METHOD_SIMHASH)
        cli_error(cmd,
                  "index %s holds simhash fingerprints (made without --method minhash): "
                  "use it without --method minhash, or build a minhash index",
                  path);
    else if (rc == DEDUP_EIO && err.os_error)
        cli_error(cmd, "cannot load index %s: %s: %s", path, err.what, strerror(err.os_error));
    else if (rc == DEDUP_EIO || rc == DEDUP_ENOMEM)
        cli_error(cmd, "cannot load index %s: %s", path, err.what);
    else
        cli_error(cmd, "cannot load index %s: %s at byte offset %llu (%s)", path, err.what,
                  (unsigned long long)err.offset, code_words(rc));
    return CLI_RUNTIME;
}

static int mh_save(const char *cmd, struct dedup_lsh *l, const char *path)
{
    struct dedup_file_error err;
    enum dedup_code rc = dedup_lsh_save(l, path, &err);
    if (rc == DEDUP_OK)
        return CLI_OK;
    if (err.os_error)
        cli_error(cmd, "cannot save index %s: %s: %s", path, err.what, strerror(err.os_error));
    else
        cli_error(cmd, "cannot save index %s: %s", path, err.what);
    return CLI_RUNTIME;
}

/* The signature of doc into sig: a signature list's own (checked against l's size), or
 * computed from the page's token string. */
static enum dedup_code doc_signature(const struct dedup_lsh *l, const struct cli_doc *doc,
                                     uint32_t *sig)
{
    unsigned h = dedup_lsh_get_params(l)->h;
    if (doc->sig) {
        if (doc->sig_h != h)
            return DEDUP_EINVAL;
        memcpy(sig, doc->sig, h * sizeof *sig);
        return DEDUP_OK;
    }
    if (!doc->tokens)
        return DEDUP_EINVAL;
    return dedup_minhash_signature(dedup_lsh_minhash(l), doc->tokens, doc->tokens_len, sig, NULL);
}

/* One page into the index (userdata: struct mh_run). */
struct mh_run {
    const char *cmd;
    struct dedup_lsh *lsh;
    uint32_t *sig;
    unsigned long failed;
};

static int mh_add(void *userdata, const struct cli_doc *doc)
{
    struct mh_run *r = userdata;
    enum dedup_code rc = doc_signature(r->lsh, doc, r->sig);
    if (rc != DEDUP_OK) {
        cli_error(r->cmd, "%s: %s", doc->id, dedup_strerror(rc));
        r->failed++;
        return 0;
    }
    rc = dedup_lsh_add(r->lsh, r->sig, doc->id, doc->id_len, NULL);
    if (rc != DEDUP_OK) {
        cli_error(r->cmd, "%s: cannot add to the index: %s", doc->id, dedup_strerror(rc));
        return 1;
    }
    return 0;
}

/* ---- signature lists (docs/MINHASH.md, "Signature lists") ---- */

#define LIST_MAGIC "# simcrawl minhash signatures "
#define LIST_LINE_MAX (9u * DEDUP_MINHASH_H_MAX + 2u * DEDUP_INDEX_MAX_ID_BYTES + 64u)

void cli_mh_format_signature(const uint32_t *sig, unsigned h, char *out)
{
    static const char hex[] = "0123456789abcdef";
    for (unsigned i = 0; i < h; i++) {
        for (int j = 0; j < 8; j++)
            *out++ = hex[(sig[i] >> (28 - 4 * j)) & 15];
        *out++ = i + 1 < h ? ',' : '\0';
    }
}

void cli_mh_list_header(FILE *out, unsigned k, unsigned h, uint64_t seed)
{
    fprintf(out, "%s%d shingle-words=%u num-perm=%u seed=%016llx\n", LIST_MAGIC,
            DEDUP_MINHASH_VERSION, k, h, (unsigned long long)seed);
}

/* One line's diagnostic, at most CLI_INPUT_WARN_MAX of them per list. */
static void list_bad(struct cli_inputs *in, const char *name, size_t line, unsigned *warned,
                     const char *what)
{
    cli_inputs_list_warn(in, name, warned, line, what);
}

/* Parses the header line s against p: 0, or -1 after saying why (name: the list). */
static int list_header(struct cli_inputs *in, const char *name, const char *s,
                       const struct dedup_lsh_params *p)
{
    unsigned v, k, h;
    unsigned long long seed;
    int end = -1;
    if (strncmp(s, LIST_MAGIC, strlen(LIST_MAGIC)) != 0) {
        size_t n = 0;
        while (n < 17 && isxdigit((unsigned char)s[n]))
            n++;
        if (n == 16 && (s[16] == ' ' || s[16] == '\t'))
            cli_error(in->cmd,
                      "%s:1: a simhash fingerprint list (16-digit fingerprints), "
                      "not MinHash signatures: make them with simcrawl fingerprint "
                      "--method minhash, or use the list without --method minhash",
                      name);
        else
            cli_error(in->cmd,
                      "%s:1: not a MinHash signature list (its first line is not "
                      "'%s...', docs/MINHASH.md)",
                      name, LIST_MAGIC);
        return -1;
    }
    if (sscanf(s + strlen(LIST_MAGIC), "%u shingle-words=%u num-perm=%u seed=%16llx%n", &v, &k, &h,
               &seed, &end) != 4 ||
        end < 0 || s[strlen(LIST_MAGIC) + (size_t)end]) {
        cli_error(in->cmd,
                  "%s:1: malformed header (want '%s%d shingle-words=K num-perm=H "
                  "seed=16HEX')",
                  name, LIST_MAGIC, DEDUP_MINHASH_VERSION);
        return -1;
    }
    if (v != DEDUP_MINHASH_VERSION) {
        cli_error(in->cmd,
                  "%s:1: signatures of docs/MINHASH.md version %u, not %d: make them "
                  "again with this simcrawl",
                  name, v, DEDUP_MINHASH_VERSION);
        return -1;
    }
    if (k != p->k || h != p->h || seed != p->seed) {
        cli_error(in->cmd,
                  "%s:1: signatures of --shingle-words %u --num-perm %u (seed "
                  "%016llx), not the run's %u, %u (seed %016llx): give the same "
                  "--shingle-words and --num-perm",
                  name, k, h, seed, p->k, p->h, (unsigned long long)p->seed);
        return -1;
    }
    return 0;
}

int cli_mh_list_line(char *s, unsigned h, uint32_t *sig, char **id, size_t *id_len,
                     const char **what)
{
    int escaped = *s == '\\';
    char *p = s + escaped;
    for (unsigned i = 0; i < h; i++) {
        uint32_t v = 0;
        for (int j = 0; j < 8; j++, p++) {
            int c = (unsigned char)*p, d = c >= '0' && c <= '9'   ? c - '0'
                                           : c >= 'a' && c <= 'f' ? c - 'a' + 10
                                                                  : -1;
            if (d < 0) {
                *what = "malformed signature: want comma-separated 8-digit lower-case hex "
                        "values, as many as the header's num-perm";
                return -1;
            }
            v = v << 4 | (uint32_t)d;
        }
        sig[i] = v;
        if (i + 1 < h && *p++ != ',') {
            *what = "malformed signature: fewer values than the header's num-perm";
            return -1;
        }
    }
    if (*p != ' ' && *p != '\t') {
        *what = *p == ',' ? "more signature values than the header's num-perm"
                          : "no space between the signature and the id";
        return -1;
    }
    while (*p == ' ' || *p == '\t')
        p++;
    char *o = p, *q = p;
    for (; *q; q++) {
        if (escaped && *q == '\\') {
            if (q[1] != 'n' && q[1] != '\\') {
                *what = "bad escape in the id (only \\n and \\\\)";
                return -1;
            }
            *o++ = q[1] == 'n' ? '\n' : '\\';
            q++;
        } else {
            *o++ = *q;
        }
    }
    *o = '\0';
    *id = p;
    *id_len = (size_t)(o - p);
    if (!*id_len) {
        *what = "no id after the signature";
        return -1;
    }
    if (*id_len > DEDUP_INDEX_MAX_ID_BYTES) {
        *what = "id longer than 65536 bytes";
        return -1;
    }
    return 0;
}

/* Reads the signature list at path ("-": standard input) for an index of parameters p,
 * each line handed to fn as a document with its signature. A list that cannot be read or
 * does not fit p is said and counted in in->failed; a bad line too, and the reading goes
 * on. 0, or -1 if fn stopped. */
static int mh_list(struct cli_inputs *in, const char *path, const struct dedup_lsh_params *p,
                   cli_doc_fn fn, void *userdata)
{
    int is_stdin = strcmp(path, "-") == 0;
    const char *name = is_stdin ? "(standard input)" : path;
    FILE *f = is_stdin ? stdin : fopen(path, "rb");
    struct stat st;
    if (!f || (fstat(fileno(f), &st) == 0 && S_ISDIR(st.st_mode))) {
        cli_error(in->cmd, "cannot read signature list %s: %s", name,
                  f ? "is a directory" : strerror(errno));
        in->failed++;
        if (f && !is_stdin)
            fclose(f);
        return 0;
    }
    uint32_t *sig = malloc(p->h * sizeof *sig);
    char *line = NULL;
    size_t cap = 0, lineno = 0;
    unsigned warned = 0;
    ssize_t n;
    int rc = 0;
    if (!sig) {
        cli_error(in->cmd, "out of memory");
        rc = -1;
    }
    while (rc == 0 && (n = getline(&line, &cap, f)) > 0) {
        lineno++;
        if (line[n - 1] == '\n')
            line[--n] = '\0';
        if (n && line[n - 1] == '\r')
            line[--n] = '\0';
        if ((size_t)n != strlen(line)) {
            list_bad(in, name, lineno, &warned, "a NUL byte in the line");
            continue;
        }
        if (lineno == 1) {
            if (list_header(in, name, line, p) != 0) {
                in->failed++;
                break;
            }
            continue;
        }
        if (!*line || *line == '#')
            continue;
        if ((size_t)n > LIST_LINE_MAX) {
            list_bad(in, name, lineno, &warned, "line too long");
            continue;
        }
        char *id;
        size_t id_len;
        const char *what;
        if (cli_mh_list_line(line, p->h, sig, &id, &id_len, &what) != 0) {
            list_bad(in, name, lineno, &warned, what);
            continue;
        }
        struct cli_doc d = {0};
        d.id = id;
        d.id_len = id_len;
        d.list = name;
        d.line = lineno;
        d.sig = sig;
        d.sig_h = p->h;
        if (cli_inputs_deliver(in, &d, fn, userdata) != 0)
            rc = -1;
    }
    if (rc == 0 && ferror(f)) {
        cli_error(in->cmd, "cannot read signature list %s: %s", name, strerror(errno));
        in->failed++;
    } else if (rc == 0 && lineno == 0) {
        cli_error(in->cmd, "%s: empty, not a MinHash signature list", name);
        in->failed++;
    }
    free(line);
    free(sig);
    if (!is_stdin)
        fclose(f);
    return rc;
}

/* cli_inputs_run() for a minhash run over an index of parameters p: the signature lists
 * first, then the INPUTs, in command-line order. 0, or -1. */
static int mh_inputs_run(struct cli_inputs *in, const struct cli_args *a,
                         const struct dedup_lsh_params *p, char **paths, int npaths, cli_doc_fn fn,
                         void *userdata)
{
    for (int i = 0; i < a->nfplists; i++)
        if (mh_list(in, a->fplists[i], p, fn, userdata) != 0)
            return -1;
    return cli_inputs_run(in, NULL, 0, paths, npaths, fn, userdata);
}

/* ---- fingerprint --method minhash ---- */

int cli_mh_option(const char *cmd, const char *opt, const char *v, struct cli_mh_opts *o)
{
    if (strcmp(opt, "--method") == 0) {
        if (strcmp(v, "simhash") != 0 && strcmp(v, "minhash") != 0)
            return cli_usage_error(cmd, "--method must be simhash or minhash, not '%s'", v);
        o->minhash = v[0] == 'm';
    } else if (strcmp(opt, "--threshold") == 0) {
        if (cli_parse_threshold(v, &o->threshold) != 0)
            return cli_usage_error(cmd,
                                   "--threshold must be a Jaccard similarity above 0 and at "
                                   "most 1 (e.g. 0.8), not '%s'",
                                   v);
        o->threshold_set = 1;
    } else if (strcmp(opt, "--shingle-words") == 0) {
        if (cli_parse_long(v, 1, DEDUP_MINHASH_K_MAX, &o->shingle_words) != 0)
            return cli_usage_error(cmd,
                                   "--shingle-words must be a whole number from 1 to %u, not '%s'",
                                   DEDUP_MINHASH_K_MAX, v);
    } else {
        if (cli_parse_long(v, 1, DEDUP_MINHASH_H_MAX, &o->num_perm) != 0)
            return cli_usage_error(cmd, "--num-perm must be a whole number from 1 to %u, not '%s'",
                                   DEDUP_MINHASH_H_MAX, v);
    }
    return CLI_OK;
}

int cli_mh_check(const char *cmd, const struct cli_mh_opts *o, int k_set, const char *hint)
{
    if (o->minhash && k_set)
        return cli_usage_error(cmd, "--k is the simhash distance; --method minhash takes "
                                    "--threshold J instead");
    if (!o->minhash && (o->threshold_set || o->shingle_words || o->num_perm))
        return cli_usage_error(cmd,
                               "--threshold, --shingle-words and --num-perm apply to "
                               "--method minhash%s",
                               hint);
    return CLI_OK;
}

int cli_mh_fp_option(const char *cmd, const char *opt, const char *v, struct cli_mh_fp *f)
{
    return cli_mh_option(cmd, opt, v, &f->o);
}

int cli_mh_fp_begin(const char *cmd, struct cli_mh_fp *f)
{
    const struct cli_mh_opts *o = &f->o;
    if (!o->minhash)
        return (o->shingle_words || o->num_perm)
                   ? cli_usage_error(cmd, "--shingle-words and --num-perm are "
                                          "--method minhash's")
                   : CLI_OK;
    unsigned k = o->shingle_words ? (unsigned)o->shingle_words : DEDUP_MINHASH_K_DEFAULT;
    unsigned h = o->num_perm ? (unsigned)o->num_perm : DEDUP_MINHASH_H_DEFAULT;
    f->sig = malloc(h * sizeof *f->sig);
    f->text = malloc(9 * (size_t)h);
    if (!f->sig || !f->text || dedup_minhash_new(k, h, DEDUP_MINHASH_SEED, &f->mh) != DEDUP_OK) {
        cli_error(cmd, "out of memory");
        return CLI_RUNTIME;
    }
    cli_mh_list_header(stdout, k, h, DEDUP_MINHASH_SEED);
    return CLI_OK;
}

const char *cli_mh_fp_signature(const char *cmd, struct cli_mh_fp *f, const char *path,
                                const char *tokens, size_t len)
{
    enum dedup_code rc =
        tokens ? dedup_minhash_signature(f->mh, tokens, len, f->sig, NULL) : DEDUP_EINVAL;
    if (rc != DEDUP_OK) {
        cli_error(cmd, "%s: no MinHash signature: %s", path, dedup_strerror(rc));
        return NULL;
    }
    cli_mh_format_signature(f->sig, dedup_minhash_h(f->mh), f->text);
    return f->text;
}

void cli_mh_fp_release(struct cli_mh_fp *f)
{
    dedup_minhash_free(f->mh);
    free(f->sig);
    free(f->text);
    f->mh = NULL;
    f->sig = NULL;
    f->text = NULL;
}

/* Sets up in for a minhash run: token strings kept, templates learned into t (or used
 * read-only with learn = 0). */
static void mh_inputs(struct cli_inputs *in, const char *cmd, const struct cli_args *a,
                      struct dedup_templates *t, int learn)
{
    cli_inputs_init(in, cmd);
    in->fp_opts.max_depth = (unsigned)a->max_depth;
    in->fp_opts.keep_tokens = 1;
    in->quiet = a->quiet;
    if (!a->no_templates && t)
        cli_inputs_use_templates(in, t, learn);
}

static int check_stdout(const char *cmd)
{
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(cmd, "write error: %s", strerror(errno));
        return CLI_RUNTIME;
    }
    return CLI_OK;
}

/* ---- pairs ---- */

struct pair_out {
    struct dedup_lsh *lsh;
    int jsonl;
};

static int print_pair(void *userdata, uint32_t a, uint32_t b, double jaccard)
{
    struct pair_out *o = userdata;
    size_t la, lb;
    const char *ia = dedup_lsh_id(o->lsh, a, &la), *ib = dedup_lsh_id(o->lsh, b, &lb);
    char value[32];
    snprintf(value, sizeof value, "%.4f", jaccard);
    cli_put_pair_line(stdout, o->jsonl, ia, la, ib, lb, "jaccard", value);
    return ferror(stdout) ? 1 : 0;
}

/* The index of a run: loaded from a->index (when given and present) or new from a's
 * parameters. A given --threshold different from a loaded index's is used for the
 * verification; the banding stays the index's. */
static int mh_open(const char *cmd, const struct cli_args *a, const char *path,
                   struct dedup_lsh **out, int *missing)
{
    struct dedup_lsh_params p;
    *out = NULL;
    if (missing)
        *missing = 1;
    if (path) {
        int st = cli_mh_load(cmd, path, 1, out, missing);
        if (st != CLI_OK)
            return st;
        if (*out) {
            const struct dedup_lsh_params *ip = dedup_lsh_get_params(*out);
            if ((a->mh.shingle_words && (unsigned)a->mh.shingle_words != ip->k) ||
                (a->mh.num_perm && (unsigned)a->mh.num_perm != ip->h)) {
                /* said before the free: ip points into *out */
                int usage = cli_usage_error(cmd,
                                            "index %s was made with --shingle-words %u "
                                            "--num-perm %u",
                                            path, ip->k, ip->h);
                dedup_lsh_free(*out);
                *out = NULL;
                return usage;
            }
            return CLI_OK;
        }
    }
    int st = cli_mh_params(cmd, &a->mh, &p);
    if (st != CLI_OK)
        return st;
    if (dedup_lsh_new(&p, out) != DEDUP_OK) {
        cli_error(cmd, "out of memory");
        return CLI_RUNTIME;
    }
    return CLI_OK;
}

static int mark_ids(struct cli_inputs *in, const struct dedup_lsh *l)
{
    for (uint32_t d = 0; d < dedup_lsh_doc_count(l); d++) {
        size_t len;
        const char *id = dedup_lsh_id(l, d, &len);
        if (cli_inputs_mark_id(in, id, len) != 0) {
            cli_error(in->cmd, "out of memory remembering ids");
            return -1;
        }
    }
    return 0;
}

int cli_mh_pairs(const struct cli_args *a)
{
    const char *cmd = "pairs";
    struct cli_inputs in;
    struct dedup_lsh *l = NULL;
    struct dedup_lock *lock = NULL;
    uint32_t *sig = NULL;
    int status = CLI_OK;
    cli_inputs_init(&in, cmd);
    if (a->index) {
        status = cli_index_lock(cmd, a->index, a->lock_wait, &lock);
        if (status != CLI_OK)
            goto done;
    }
    status = mh_open(cmd, a, a->index, &l, NULL);
    if (status != CLI_OK)
        goto done;
    double t =
        a->mh.threshold_set || !a->index ? a->mh.threshold : dedup_lsh_get_params(l)->threshold;
    uint32_t old = dedup_lsh_doc_count(l);
    cli_inputs_release(&in);
    mh_inputs(&in, cmd, a, dedup_lsh_templates(l), 1);
    if (old && mark_ids(&in, l) != 0) {
        status = CLI_RUNTIME;
        goto done;
    }
    sig = malloc(dedup_lsh_get_params(l)->h * sizeof *sig);
    if (!sig) {
        cli_error(cmd, "out of memory");
        status = CLI_RUNTIME;
        goto done;
    }
    struct mh_run r = {cmd, l, sig, 0};
    if (mh_inputs_run(&in, a, dedup_lsh_get_params(l), a->paths, a->npaths, mh_add, &r) != 0) {
        status = CLI_RUNTIME;
        goto done;
    }
    if (dedup_lsh_doc_count(l) == 0) {
        cli_error(cmd, "no documents to compare: the inputs held no pages");
        status = CLI_RUNTIME;
        goto done;
    }
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    struct pair_out o = {l, strcmp(a->format, "jsonl") == 0};
    int stopped = 0;
    dedup_lsh_set_threads(l, cli_threads()); /* the band scan on every core */
    enum dedup_code rc = dedup_lsh_pairs(l, t, old, print_pair, &o, &stopped, NULL);
    if (rc != DEDUP_OK) {
        cli_error(cmd, "cannot list the pairs: %s", dedup_strerror(rc));
        status = CLI_RUNTIME;
        goto done;
    }
    status = check_stdout(cmd);
    if (status == CLI_OK && stopped)
        status = CLI_RUNTIME;
    if (status == CLI_OK && a->index)
        status = mh_save(cmd, l, a->index);
    if (status == CLI_OK && (in.failed || r.failed))
        status = CLI_RUNTIME;
done:
    fflush(stdout);
    free(sig);
    dedup_lock_release(lock);
    dedup_lsh_free(l);
    cli_inputs_release(&in);
    return status;
}

/* ---- clusters ---- */

/* --format html: each document added to the index, then (in the same order, so that the
 * report's documents are the index's) its title and texts to the report. */
struct mh_report_run {
    struct mh_run *run;
    struct cli_report *report;
};

static int add_and_report(void *userdata, const struct cli_doc *doc)
{
    struct mh_report_run *h = userdata;
    uint32_t before = dedup_lsh_doc_count(h->run->lsh);
    int rc = mh_add(h->run, doc);
    if (rc == 0 && dedup_lsh_doc_count(h->run->lsh) > before)
        rc = cli_report_doc(h->report, doc);
    return rc;
}

int cli_mh_clusters(const struct cli_args *a)
{
    const char *cmd = "clusters";
    struct cli_inputs in;
    struct dedup_lsh *l = NULL;
    struct dedup_clusters *c = NULL;
    struct cli_report *report = NULL;
    uint32_t *sig = NULL;
    int status = CLI_OK;
    int html = strcmp(a->format, "html") == 0;
    status = mh_open(cmd, a, NULL, &l, NULL);
    if (status != CLI_OK)
        return status;
    mh_inputs(&in, cmd, a, dedup_lsh_templates(l), 1);
    unsigned h = dedup_lsh_get_params(l)->h;
    sig = malloc(h * sizeof *sig);
    struct mh_run r = {cmd, l, sig, 0};
    struct mh_report_run hr = {&r, NULL};
    if (html) {
        if (!(report = cli_report_new(cmd))) {
            cli_error(cmd, "out of memory");
            status = CLI_RUNTIME;
            goto done;
        }
        cli_report_inputs(report, a->fplists, a->nfplists, a->paths, a->npaths);
        in.fp_opts.keep_doc = 1; /* titles and main texts for the report */
        in.skip = cli_report_skip;
        in.skip_userdata = report;
        hr.report = report;
    }
    if (!sig || mh_inputs_run(&in, a, dedup_lsh_get_params(l), a->paths, a->npaths,
                              html ? add_and_report : mh_add, html ? (void *)&hr : &r) != 0) {
        if (!sig)
            cli_error(cmd, "out of memory");
        status = CLI_RUNTIME;
        goto done;
    }
    if (dedup_lsh_doc_count(l) == 0) {
        cli_error(cmd, "no documents to cluster: the inputs held no pages");
        status = CLI_RUNTIME;
        goto done;
    }
    dedup_lsh_set_threads(l, cli_threads());
    enum dedup_code rc = dedup_lsh_clusters(l, a->mh.threshold, &c);
    if (rc != DEDUP_OK) {
        cli_error(cmd, "cannot cluster: %s", dedup_strerror(rc));
        status = CLI_RUNTIME;
        goto done;
    }
    static char obuf[1 << 20];
    setvbuf(stdout, obuf, _IOFBF, sizeof obuf);
    int jsonl = strcmp(a->format, "jsonl") == 0;
    if (html)
        cli_report_write_minhash(stdout, report, l, c, a->mh.threshold);
    for (size_t i = 0; !html && i < dedup_clusters_count(c); i++) {
        size_t n = dedup_clusters_size(c, i), len;
        uint32_t rep = dedup_clusters_member(c, i, 0);
        const uint32_t *rs = dedup_lsh_signature(l, rep);
        const char *id = dedup_lsh_id(l, rep, &len);
        if (jsonl) {
            printf("{\"cluster\": %zu, \"size\": %zu, \"representative\": ", i + 1, n);
            cli_put_json_string(stdout, id, len);
            fputs(", \"members\": [", stdout);
        } else {
            printf("cluster %zu: %zu documents\n", i + 1, n);
        }
        for (size_t j = 0; j < n; j++) {
            uint32_t m = dedup_clusters_member(c, i, j);
            double e = dedup_minhash_estimate(rs, dedup_lsh_signature(l, m), h);
            id = dedup_lsh_id(l, m, &len);
            if (jsonl) {
                fputs(j ? ", {\"id\": " : "{\"id\": ", stdout);
                cli_put_json_string(stdout, id, len);
                printf(", \"jaccard\": %.4f}", e);
            } else {
                printf("  %.4f\t", e);
                cli_put_text_id(stdout, id, len);
                putchar('\n');
            }
        }
        if (jsonl)
            fputs("]}\n", stdout);
    }
    status = check_stdout(cmd);
    if (status == CLI_OK && (in.failed || r.failed))
        status = CLI_RUNTIME;
done:
    free(sig);
    cli_report_free(report);
    dedup_clusters_free(c);
    dedup_lsh_free(l);
    cli_inputs_release(&in);
    return status;
}

/* ---- query ---- */

struct mh_query {
    struct dedup_lsh *lsh;
    uint32_t *sig;
    double threshold;
    size_t top;
    int jsonl;
    unsigned long failed;
    struct dedup_lsh_matches m;
};

static int query_one(void *userdata, const struct cli_doc *doc)
{
    struct mh_query *q = userdata;
    const char *cmd = "query";
    enum dedup_code rc = doc_signature(q->lsh, doc, q->sig);
    if (rc == DEDUP_OK)
        rc = dedup_lsh_query(q->lsh, q->sig, q->threshold, q->top, &q->m, NULL);
    if (rc != DEDUP_OK) {
        cli_error(cmd, "%s: %s", doc->id, dedup_strerror(rc));
        q->failed++;
        return rc == DEDUP_ENOMEM;
    }
    if (q->jsonl) {
        fputs("{\"page\": ", stdout);
        cli_put_json_string(stdout, doc->id, doc->id_len);
        fputs(", \"matches\": [", stdout);
    }
    for (size_t i = 0; i < q->m.n; i++) {
        size_t len;
        const char *id = dedup_lsh_id(q->lsh, q->m.v[i].doc, &len);
        if (q->jsonl) {
            fputs(i ? ", {\"id\": " : "{\"id\": ", stdout);
            cli_put_json_string(stdout, id, len);
            printf(", \"jaccard\": %.4f}", q->m.v[i].jaccard);
        } else {
            cli_put_text_id(stdout, doc->id, doc->id_len);
            printf("\t%.4f\t", q->m.v[i].jaccard);
            cli_put_text_id(stdout, id, len);
            putchar('\n');
        }
    }
    if (q->jsonl) {
        fputs("]", stdout);
        if (q->top)
            printf(", \"top\": %zu, \"found\": %zu", q->top, q->m.n);
        fputs("}\n", stdout);
    }
    if (q->top && q->m.n < q->top)
        cli_error(cmd, "%s: %zu of --top %zu: only %zu indexed document%s at Jaccard >= %g",
                  doc->id, q->m.n, q->top, q->m.n, q->m.n == 1 ? "" : "s", q->threshold);
    return ferror(stdout) ? 1 : 0;
}

int cli_mh_query(const struct cli_args *a)
{
    const char *cmd = "query";
    struct cli_inputs in;
    struct mh_query q = {0};
    int status = CLI_OK;
    cli_inputs_init(&in, cmd);
    status = cli_mh_load(cmd, a->index, 0, &q.lsh, NULL);
    if (status != CLI_OK)
        goto done;
    const struct dedup_lsh_params *p = dedup_lsh_get_params(q.lsh);
    if ((a->mh.shingle_words && (unsigned)a->mh.shingle_words != p->k) ||
        (a->mh.num_perm && (unsigned)a->mh.num_perm != p->h)) {
        status = cli_usage_error(cmd, "index %s was made with --shingle-words %u --num-perm %u",
                                 a->index, p->k, p->h);
        goto done;
    }
    q.threshold = a->mh.threshold_set ? a->mh.threshold : p->threshold;
    q.top = (size_t)a->top;
    q.jsonl = strcmp(a->format, "jsonl") == 0;
    q.sig = malloc(p->h * sizeof *q.sig);
    if (!q.sig) {
        cli_error(cmd, "out of memory");
        status = CLI_RUNTIME;
        goto done;
    }
    cli_inputs_release(&in);
    mh_inputs(&in, cmd, a, dedup_lsh_templates(q.lsh), 0);
    in.check_duplicates = 0;
    if (mh_inputs_run(&in, a, p, a->paths, a->npaths, query_one, &q) != 0) {
        status = CLI_RUNTIME;
        goto done;
    }
    status = check_stdout(cmd);
    if (status == CLI_OK && (in.failed || q.failed))
        status = CLI_RUNTIME;
done:
    free(q.sig);
    dedup_lsh_matches_release(&q.m);
    dedup_lsh_free(q.lsh);
    cli_inputs_release(&in);
    return status;
}

/* ---- index add | stats ---- */

int cli_mh_index_add(const struct cli_args *a)
{
    const char *cmd = "index";
    const char *file = a->paths[0];
    struct cli_inputs in;
    struct dedup_lsh *l = NULL;
    struct dedup_lock *lock = NULL;
    uint32_t *sig = NULL;
    int missing = 0;
    int status = CLI_OK;
    cli_inputs_init(&in, cmd);
    status = cli_index_lock(cmd, file, a->lock_wait, &lock);
    if (status == CLI_OK)
        status = mh_open(cmd, a, file, &l, &missing);
    if (status != CLI_OK)
        goto done;
    if (!missing && a->mh.threshold_set && a->mh.threshold != dedup_lsh_get_params(l)->threshold) {
        status = cli_usage_error(cmd,
                                 "index %s was made for --threshold %g; its bands are "
                                 "chosen for it",
                                 file, dedup_lsh_get_params(l)->threshold);
        goto done;
    }
    uint32_t before = dedup_lsh_doc_count(l);
    cli_inputs_release(&in);
    mh_inputs(&in, cmd, a, dedup_lsh_templates(l), 1);
    if (mark_ids(&in, l) != 0) {
        status = CLI_RUNTIME;
        goto done;
    }
    sig = malloc(dedup_lsh_get_params(l)->h * sizeof *sig);
    struct mh_run r = {cmd, l, sig, 0};
    if (!sig || mh_inputs_run(&in, a, dedup_lsh_get_params(l), a->paths + 1, a->npaths - 1, mh_add,
                              &r) != 0) {
        if (!sig)
            cli_error(cmd, "out of memory");
        status = CLI_RUNTIME;
        goto done;
    }
    status = mh_save(cmd, l, file);
    if (status != CLI_OK)
        goto done;
    const struct dedup_lsh_params *p = dedup_lsh_get_params(l);
    if (!a->quiet)
        fprintf(stderr,
                "simcrawl index: %s: %s %u documents, now %u (minhash: %u-word "
                "shingles, %u values, %u bands x %u rows, threshold %g)\n",
                file, missing ? "made with" : "added", dedup_lsh_doc_count(l) - before,
                dedup_lsh_doc_count(l), p->k, p->h, p->b, p->r, p->threshold);
    if (in.failed || r.failed)
        status = CLI_RUNTIME;
done:
    free(sig);
    dedup_lock_release(lock);
    dedup_lsh_free(l);
    cli_inputs_release(&in);
    return status;
}

int cli_mh_index_stats(const struct cli_args *a, const char *file)
{
    const char *cmd = "index";
    struct dedup_lsh *l = NULL;
    struct stat fst;
    int status = cli_mh_load(cmd, file, 0, &l, NULL);
    if (status != CLI_OK)
        return status;
    if (stat(file, &fst) != 0) {
        cli_error(cmd, "%s: %s", file, strerror(errno));
        dedup_lsh_free(l);
        return CLI_RUNTIME;
    }
    const struct dedup_lsh_params *p = dedup_lsh_get_params(l);
    struct dedup_lsh_stats s;
    dedup_lsh_stats(l, &s);
    struct dedup_templates *t = dedup_lsh_templates(l);
    double per_doc = s.docs ? (double)fst.st_size / (double)s.docs : 0;
    if (strcmp(a->format, "jsonl") == 0) {
        printf("{\"file\": ");
        cli_put_json_string(stdout, file, strlen(file));
        printf(", \"method\": \"minhash\", \"format_version\": %u, \"spec_version\": %u, "
               "\"bytes\": %lld, \"documents\": %llu, \"shingle_words\": %u, \"num_perm\": %u, "
               "\"bands\": %u, \"rows\": %u, \"threshold\": %g, \"seed\": \"%016llx\", "
               "\"buckets\": %llu, \"shared_buckets\": %llu, \"bucket_max\": %llu, "
               "\"file_bytes_per_document\": %.2f}\n",
               DEDUP_LSH_FORMAT_VERSION, DEDUP_MINHASH_VERSION, (long long)fst.st_size,
               (unsigned long long)s.docs, p->k, p->h, p->b, p->r, p->threshold,
               (unsigned long long)p->seed, (unsigned long long)s.buckets,
               (unsigned long long)s.shared, (unsigned long long)s.bucket_max, per_doc);
    } else {
        printf("file: %s\n", file);
        printf("method: minhash\n");
        printf("format version: %u (docs/MINHASH.md version %u)\n", DEDUP_LSH_FORMAT_VERSION,
               DEDUP_MINHASH_VERSION);
        printf("size: %lld bytes\n", (long long)fst.st_size);
        printf("documents: %llu\n", (unsigned long long)s.docs);
        printf("shingles: %u words\n", p->k);
        printf("signature: %u values (seed %016llx)\n", p->h, (unsigned long long)p->seed);
        printf("bands: %u x %u rows (threshold %g: P(candidate) %.3f at J = threshold, "
               "%.4f at J = threshold + 0.1)\n",
               p->b, p->r, p->threshold, dedup_lsh_probability(p->threshold, p->b, p->r),
               dedup_lsh_probability(fmin(1.0, p->threshold + 0.1), p->b, p->r));
        printf("buckets: %llu, shared by 2 or more documents: %llu, largest: %llu\n",
               (unsigned long long)s.buckets, (unsigned long long)s.shared,
               (unsigned long long)s.bucket_max);
        printf("file bytes per document: %.2f (signatures, ids)\n", per_doc);
        printf("template hosts: %zu, blocks counted: %zu, template blocks: %zu\n",
               t ? dedup_templates_host_count(t) : 0, t ? dedup_templates_entry_count(t) : 0,
               t ? dedup_templates_template_count(t) : 0);
    }
    status = check_stdout(cmd);
    dedup_lsh_free(l);
    return status;
}

/* ---- compare ---- */

int cli_mh_compare(const char *cmd, const struct dedup_lsh_params *p, const char *ta, size_t la,
                   const char *tb, size_t lb, struct cli_mh_compare *out)
{
    struct dedup_minhash *mh = NULL;
    uint64_t *sa = NULL, *sb = NULL;
    uint32_t *ga = NULL, *gb = NULL;
    size_t na = 0, nb = 0;
    int status = CLI_RUNTIME;
    enum dedup_code rc = dedup_minhash_new(p->k, p->h, p->seed, &mh);
    if (rc == DEDUP_OK)
        rc = dedup_minhash_shingle_set(mh, ta, la, &sa, &na);
    if (rc == DEDUP_OK)
        rc = dedup_minhash_shingle_set(mh, tb, lb, &sb, &nb);
    if (rc != DEDUP_OK) {
        cli_error(cmd, "cannot compute the shingles: %s", dedup_strerror(rc));
        goto done;
    }
    ga = malloc(p->h * sizeof *ga);
    gb = malloc(p->h * sizeof *gb);
    if (!ga || !gb) {
        cli_error(cmd, "out of memory");
        goto done;
    }
    dedup_minhash_signature_hashes(mh, sa, na, ga);
    dedup_minhash_signature_hashes(mh, sb, nb, gb);
    out->exact = dedup_minhash_jaccard_sets(sa, na, sb, nb);
    out->estimate = dedup_minhash_estimate(ga, gb, p->h);
    out->shingles_a = na;
    out->shingles_b = nb;
    status = CLI_OK;
done:
    free(sa);
    free(sb);
    free(ga);
    free(gb);
    dedup_minhash_free(mh);
    return status;
}
