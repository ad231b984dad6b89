/*
 * simcrawl fingerprint [--text] [--idf FILE] [--idf-out FILE] [--] FILE...|-
 * (options before or after the FILEs)
 *
 * Prints the 64-bit simhash (docs/FINGERPRINT.md) of each input page as one line
 * "16HEX  PATH", like sha256sum: 16 lower-case hex digits, two spaces, the path as given
 * ("-" for standard input). A path holding a newline or a backslash is printed with those
 * escaped ("\n", "\\") and the line starts with a backslash, as GNU coreutils does.
 * An input without a fingerprint gets a diagnostic on stderr and no line; the others go on.
 * A page with too little text (empty, no main text, fewer than DEDUP_MIN_TOKENS words) is
 * an answer about that page, not a failure of the run: the exit status stays 0, so that
 * scripts fingerprinting a whole site (../shared/tools/neardup-score) get every other
 * line. An input that cannot be read or is not a page (binary, over the size cap, bad
 * UTF-8 with --text) makes the exit status 2.
 * --idf-out counts, over the inputs, how many contain each shingle and writes an IDF file
 * (docs/FINGERPRINT.md section 5) that --idf reads back.
 * --method minhash prints a MinHash signature list instead (docs/MINHASH.md, "Signature
 * lists"; cli/minhash.c): a header line, then "SIGNATURE  PATH" lines, the same escaping.
 */
#include "cli/cli.h"
#include "cli/minhash.h"
#include "cli/pipeline.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "fingerprint"

static void usage(FILE *out)
{
    fprintf(out,
            "usage: simcrawl fingerprint [options] FILE...|-\n"
            "\n"
            "Prints the 64-bit simhash of the main text of each page, one line per input:\n"
            "16 lower-case hex digits, two spaces, the path (like sha256sum).\n"
            "Specification: docs/FINGERPRINT.md (version %d).\n"
            "\n"
            "options:\n"
            "  --text          inputs are plain UTF-8 text, not HTML\n"
            "  --idf FILE      weight shingles by inverse document frequency from FILE\n"
            "  --idf-out FILE  count document frequencies over the inputs, write an IDF file\n"
            "  --max-depth N   skip elements nested deeper than N (default 256);\n"
            "                  a page cut so is named on stderr. It changes the\n"
            "                  fingerprints: keep it the same for one index\n"
            "  --method simhash|minhash  minhash: print a MinHash signature list instead\n"
            "                  (docs/MINHASH.md, Signature lists): a header line '# simcrawl\n"
            "                  minhash signatures 3 shingle-words=K num-perm=H seed=HEX',\n"
            "                  then per page H comma-separated 8-digit hex values, two\n"
            "                  spaces, the path; pairs, clusters, query and index add\n"
            "                  --method minhash read it with --fingerprints FILE\n"
            "  --shingle-words N  minhash: words per shingle (default 5)\n"
            "  --num-perm N    minhash: values per signature (default 128)\n"
            "  --no-templates  fingerprint the whole main text of each page; by default text\n"
            "                  blocks on >= 3 of the inputs and >= 20%% of them are the\n"
            "                  site's template and are left out (the inputs are read twice;\n"
            "                  docs/FINGERPRINT.md, Template blocks). pairs, clusters over the\n"
            "                  same inputs in the same order use the same fingerprints.\n"
            "  -h, --help      this help\n"
            "  --              end of options (a FILE may then start with '-')\n"
            "\n"
            "An input without a fingerprint is named on stderr with the reason and gets no\n"
            "line; the others go on.\n"
            "exit status: 0 every input was read (pages with too little text to fingerprint\n"
            "are reported but are not errors), 1 usage error, 2 some input could not be read\n"
            "or is not a page (binary, too large, invalid UTF-8 with --text).\n",
            DEDUP_FINGERPRINT_VERSION);
}

/* Prints "HEX  path" as sha256sum does: "\" first when path holds '\n' or '\\', those
 * escaped. hex: the fingerprint, or a MinHash signature's written form. */
static void print_line(const char *hex, const char *path)
{
    if (!strpbrk(path, "\n\\")) {
        printf("%s  %s\n", hex, path);
        return;
    }
    printf("\\%s  ", hex);
    for (const char *p = path; *p; p++) {
        if (*p == '\n')
            fputs("\\n", stdout);
        else if (*p == '\\')
            fputs("\\\\", stdout);
        else
            putchar(*p);
    }
    putchar('\n');
}

/* cli_fingerprint_file(), except that standard input is read once (*data) and kept for
 * the second pass. */
static int read_and_run(const char *path, const struct filter_fp_opts *o, char **data, size_t *len,
                        int *read_done, struct filter_fp_result *res)
{
    if (strcmp(path, "-") != 0)
        return cli_fingerprint_file(path, o, res);
    if (!*read_done) {
        char err[CLI_MESSAGE_MAX];
        *read_done = 1;
        if (cli_read_file(path, o->max_bytes, data, len, err, sizeof err) != 0) {
            memset(res, 0, sizeof *res);
            res->stage = FILTER_FP_READ;
            snprintf(res->message, sizeof res->message, "%s", err);
            *data = NULL;
            return -1;
        }
    }
    if (!*data) {
        memset(res, 0, sizeof *res);
        res->stage = FILTER_FP_READ;
        snprintf(res->message, sizeof res->message, "cannot read standard input");
        return -1;
    }
    return filter_fingerprint_page(*data, *len, NULL, NULL, o, res);
}

enum { OPT_TEXT = 256, OPT_NO_TEMPLATES, OPT_MAX_DEPTH, OPT_IDF, OPT_IDF_OUT, OPT_MH };
static const struct option longopts[] = {{"text", no_argument, NULL, OPT_TEXT},
                                         {"no-templates", no_argument, NULL, OPT_NO_TEMPLATES},
                                         {"max-depth", required_argument, NULL, OPT_MAX_DEPTH},
                                         {"idf", required_argument, NULL, OPT_IDF},
                                         {"idf-out", required_argument, NULL, OPT_IDF_OUT},
                                         {"method", required_argument, NULL, OPT_MH},
                                         {"shingle-words", required_argument, NULL, OPT_MH},
                                         {"num-perm", required_argument, NULL, OPT_MH},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

/* One run of the command: its options, what it loaded, and standard input read once. */
struct fp_run {
    struct filter_fp_opts opts;
    struct cli_mh_fp mf; /* --method minhash */
    const char *idf_path, *idf_out_path;
    int no_templates;
    struct dedup_idf *idf, *counted; /* --idf as loaded, --idf-out's counts */
    struct dedup_templates *tpl;
    char *in_data; /* standard input, read once for both passes */
    size_t in_len;
    int in_read;
};

/* The options into r; *first the first input. CLI_OK, or the exit status (said why;
 * CLI_OK with *first = -1 after --help). */
static int parse_args(struct fp_run *r, int argc, char **argv, int *first)
{
    struct cli_getopt g;
    *first = -1;
    cli_getopt_init(&g, CMD, argc, argv, "h", longopts, usage);
    for (int c; (c = cli_getopt_next(&g)) != CLI_GETOPT_END;) {
        const char *v = g.value;
        long d;
        switch (c) {
        case CLI_GETOPT_HELP:
            return CLI_OK;
        case OPT_TEXT:
            r->opts.text = 1;
            break;
        case OPT_NO_TEMPLATES:
            r->no_templates = 1;
            break;
        case OPT_MAX_DEPTH:
            if (!v)
                return cli_usage_error(CMD, "%s needs a value", g.name);
            if (cli_parse_cap(CMD, g.name, v, (long)EXTRACT_MAX_DEPTH_LIMIT, &d) != 0)
                return CLI_USAGE;
            r->opts.max_depth = (unsigned)d;
            break;
        case OPT_MH:
            if (!v)
                return cli_usage_error(CMD, "%s needs a value", g.name);
            if (cli_mh_fp_option(CMD, g.name, v, &r->mf) != CLI_OK)
                return CLI_USAGE;
            break;
        case OPT_IDF:
        case OPT_IDF_OUT:
            if (!v)
                return cli_usage_error(CMD, "%s needs a FILE", g.name);
            *(c == OPT_IDF ? &r->idf_path : &r->idf_out_path) = v;
            break;
        default: /* CLI_GETOPT_ERROR: said why */
            return CLI_USAGE;
        }
    }
    if (g.optind >= argc)
        return cli_usage_error(CMD, "no input (give FILE... or - for standard input)");
    int stdin_uses = 0;
    for (int k = g.optind; k < argc; k++)
        stdin_uses += strcmp(argv[k], "-") == 0;
    if (stdin_uses > 1)
        return cli_usage_error(CMD, "standard input ('-') can be read only once");
    if (r->mf.o.minhash && (r->idf_path || r->idf_out_path))
        return cli_usage_error(CMD, "--idf and --idf-out weight the simhash's features; "
                                    "--method minhash takes none");
    *first = g.optind;
    return CLI_OK;
}

/* --idf loaded into the options, --idf-out's counter made: CLI_OK or CLI_RUNTIME (said). */
static int open_idf(struct fp_run *r)
{
    if (r->idf_path) {
        r->idf = cli_idf_load(CMD, r->idf_path);
        if (!r->idf)
            return CLI_RUNTIME;
        r->opts.idf = r->idf;
    }
    if (r->idf_out_path) {
        r->counted = dedup_idf_new();
        if (!r->counted) {
            cli_error(CMD, "out of memory");
            return CLI_RUNTIME;
        }
        r->opts.keep_features = 1;
    }
    return CLI_OK;
}

/* Pass 1: the collection's template blocks (docs/FINGERPRINT.md, "Template blocks") over
 * paths[0..n), into the options. CLI_OK or CLI_RUNTIME (said); a page that fails here is
 * reported by pass 2. */
static int learn_templates(struct fp_run *r, char **paths, int n)
{
    r->tpl = dedup_templates_new();
    if (!r->tpl) {
        cli_error(CMD, "out of memory");
        return CLI_RUNTIME;
    }
    struct filter_fp_opts o1 = r->opts;
    o1.blocks_only = 1;
    o1.keep_blocks = 1;
    for (int k = 0; k < n; k++) {
        struct filter_fp_result res;
        int got = read_and_run(paths[k], &o1, &r->in_data, &r->in_len, &r->in_read, &res);
        enum dedup_code rc = DEDUP_OK;
        if (got == 0 && res.n_blocks)
            rc = dedup_templates_add_doc(r->tpl, "", 0, res.doc_hash, res.blocks, res.n_blocks,
                                         NULL);
        filter_fp_result_release(&res);
        if (rc != DEDUP_OK) {
            cli_error(CMD, "%s: cannot count its blocks: %s", paths[k], dedup_strerror(rc));
            return CLI_RUNTIME;
        }
    }
    r->opts.templates = r->tpl;
    return CLI_OK;
}

/* Pass 2: one line for each of paths[0..n) that has a fingerprint (or signature), the
 * others said on stderr. CLI_OK, or CLI_RUNTIME when one failed other than by too little
 * text. */
static int fingerprint_inputs(struct fp_run *r, char **paths, int n)
{
    int status = CLI_OK;
    for (int i = 0; i < n; i++) {
        struct filter_fp_result res;
        int got = read_and_run(paths[i], &r->opts, &r->in_data, &r->in_len, &r->in_read, &res);
        cli_warn_cut(CMD, paths[i], res.truncated, &res.cuts, EXTRACT_CUT_DEPTH, "--max-depth");
        if (got != 0) {
            cli_error(CMD, "%s: %s", paths[i], res.message);
            if (!filter_fp_result_too_little_text(&res))
                status = CLI_RUNTIME;
        } else if (r->mf.o.minhash) {
            const char *sig =
                cli_mh_fp_signature(CMD, &r->mf, paths[i], res.tokens, res.tokens_len);
            if (sig)
                print_line(sig, paths[i]);
            else
                status = CLI_RUNTIME;
        } else {
            char hex[17];
            dedup_fingerprint_format(res.fingerprint, hex);
            print_line(hex, paths[i]);
            enum dedup_code rc =
                r->counted ? dedup_idf_add_doc(r->counted, res.features) : DEDUP_OK;
            if (rc != DEDUP_OK) {
                cli_error(CMD, "%s: cannot count for --idf-out: %s", paths[i], dedup_strerror(rc));
                status = CLI_RUNTIME;
            }
        }
        filter_fp_result_release(&res);
    }
    return status;
}

/* --idf-out: the counts written. CLI_OK or CLI_RUNTIME (said). */
static int write_idf(const struct fp_run *r)
{
    FILE *out = fopen(r->idf_out_path, "w");
    if (!out) {
        cli_error(CMD, "cannot write idf file %s: %s", r->idf_out_path, strerror(errno));
        return CLI_RUNTIME;
    }
    enum dedup_code rc = dedup_idf_write(r->counted, out);
    if (fclose(out) != 0 && rc == DEDUP_OK)
        rc = DEDUP_EIO;
    if (rc != DEDUP_OK) {
        cli_error(CMD, "cannot write idf file %s: %s", r->idf_out_path,
                  rc == DEDUP_EIO ? strerror(errno) : dedup_strerror(rc));
        return CLI_RUNTIME;
    }
    return CLI_OK;
}

int cmd_fingerprint(int argc, char **argv)
{
    struct fp_run r = {0};
    int first, status = parse_args(&r, argc, argv, &first);
    if (status != CLI_OK || first < 0)
        return status;
    char **paths = argv + first;
    int n = argc - first;
    if ((status = open_idf(&r)) != CLI_OK ||
        (!r.no_templates && (status = learn_templates(&r, paths, n)) != CLI_OK))
        goto done;
    r.opts.keep_tokens = r.mf.o.minhash; /* the signature's input */
    if ((status = cli_mh_fp_begin(CMD, &r.mf)) != CLI_OK)
        goto done;
    status = fingerprint_inputs(&r, paths, n);
    if (r.counted && write_idf(&r) != CLI_OK)
        status = CLI_RUNTIME;
done:
    cli_mh_fp_release(&r.mf);
    dedup_templates_free(r.tpl);
    free(r.in_data);
    dedup_idf_free(r.idf);
    dedup_idf_free(r.counted);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(CMD, "write error: %s", strerror(errno));
        status = CLI_RUNTIME;
    }
    return status;
}
