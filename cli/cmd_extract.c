/*
 * cmd_extract.c: `simcrawl extract [--text|--json|--links] [--base-url URL]
 * [--content-type CT] [--max-bytes N] [--max-links N] [--max-depth N] FILE|-` -- the main
 * text of one page (extract/).
 *
 * --text (default) prints the main-content blocks separated by blank lines; --json prints
 * one JSON object (jansson) with title, heading, lang, charset, text, links, canonical, base and
 * meta robots; --links prints one line per link, URL TAB anchor text. The input is read
 * whole, up to --max-bytes (default 64 MiB): larger input is an error, not a truncation.
 * The extractor's caps (--max-links, --max-depth) do cut: each cut is one warning on stderr
 * and, with --json, the "truncated" list.
 * Exit status: 0 (also for a page without main text, with a warning on stderr), 1 usage,
 * 2 the input cannot be read or is not HTML (binary, too large).
 */
#include "cli/cli.h"
#include "cli/pipeline.h"
#include "extract/extract.h"

#include <errno.h>
#include <jansson.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CMD "extract"

enum mode { MODE_TEXT, MODE_JSON, MODE_LINKS };

static void usage(FILE *out)
{
    fprintf(out,
            "usage: simcrawl extract [--text|--json|--links] [--base-url URL]\n"
            "                        [--content-type CT] [--max-bytes N] [--max-links N]\n"
            "                        [--max-depth N] FILE|-\n\n"
            "Prints the main text of one HTML page (FILE, or - for standard input), without\n"
            "navigation, sidebars, footers, forms, ads and scripts (readers' comments below\n"
            "an article are kept: they are the page's own text).\n\n"
            "  --text             the main text, blocks separated by blank lines (default)\n"
            "  --json             one JSON object: title, heading (the page's own, as the\n"
            "                     text keeps it: its name in the fingerprint), lang, charset,\n"
            "                     text, canonical, base, robots {noindex, nofollow}, links\n"
            "                     [{url, anchor, nofollow, in_main}]\n"
            "  --links            one line per link: URL, a TAB, the anchor text; links are\n"
            "                     resolved against <base href> / --base-url, fragments removed,\n"
            "                     only http(s) (or relative ones when there is no base URL)\n"
            "  --base-url URL     the page's own URL, for resolving relative links\n"
            "  --content-type CT  the HTTP Content-Type header, for its charset\n"
            "  --max-bytes N      refuse larger input (default %u)\n"
            "  --max-links N      keep the first N links, drop the rest (default %u)\n"
            "  --max-depth N      skip elements nested deeper than N, with their text and\n"
            "                     links (default %u; --max-nesting is the same)\n"
            "  --help             this help\n\n"
            "The charset comes from a byte order mark, --content-type, <meta charset>, else\n"
            "UTF-8 if valid, else windows-1252; the output is always UTF-8.\n"
            "Exit status: 0 success, also for an empty page or one without main text (a\n"
            "warning on stderr says so and the output is empty); 1 usage error; 2 the input\n"
            "cannot be read, is binary, or is over --max-bytes. A page cut by --max-links or\n"
            "--max-depth is still printed, with one warning on stderr for each cap.\n",
            (unsigned)EXTRACT_DEFAULT_MAX_BYTES, (unsigned)EXTRACT_DEFAULT_MAX_LINKS,
            (unsigned)EXTRACT_DEFAULT_MAX_DEPTH);
}

/* Reads all of f, at most max bytes: 0 ok, 1 too large, -1 read error (errno). */
static int read_all(FILE *f, size_t max, char **out, size_t *out_len)
{
    size_t cap = 65536, len = 0;
    char *buf = malloc(cap);
    if (!buf)
        return -1;
    for (;;) {
        if (len == cap) {
            if (cap > max) {
                free(buf);
                return 1;
            }
            size_t nc = cap * 2;
            if (nc > max + 1)
                nc = max + 1;
            if (nc <= cap) {
                free(buf);
                return 1;
            }
            char *nb = realloc(buf, nc);
            if (!nb) {
                free(buf);
                errno = ENOMEM;
                return -1;
            }
            buf = nb;
            cap = nc;
        }
        size_t n = fread(buf + len, 1, cap - len, f);
        len += n;
        if (len > max) {
            free(buf);
            return 1;
        }
        if (n == 0) {
            if (ferror(f)) {
                int e = errno;
                free(buf);
                errno = e ? e : EIO;
                return -1;
            }
            break;
        }
    }
    *out = buf;
    *out_len = len;
    return 0;
}

static int print_json(const struct extract_doc *doc)
{
    size_t text_len = 0;
    const char *text = doc ? extract_doc_text(doc, &text_len) : "";
    json_t *o = json_object();
    json_t *links = json_array();
    json_t *robots = json_object();
    if (!o || !links || !robots)
        goto nomem;
    int bad = 0;
    bad |= json_object_set_new(o, "title", json_string(doc ? extract_doc_title(doc) : ""));
    bad |= json_object_set_new(o, "heading", json_string(doc ? extract_doc_heading(doc) : ""));
    bad |= json_object_set_new(o, "lang", json_string(doc ? extract_doc_lang(doc) : ""));
    bad |= json_object_set_new(o, "charset", json_string(doc ? extract_doc_charset(doc) : ""));
    bad |= json_object_set_new(o, "text", json_stringn(text, text_len));
    bad |= json_object_set_new(o, "canonical", json_string(doc ? extract_doc_canonical(doc) : ""));
    bad |= json_object_set_new(o, "base", json_string(doc ? extract_doc_base(doc) : ""));
    bad |= json_object_set_new(robots, "noindex", json_boolean(doc && extract_doc_noindex(doc)));
    bad |= json_object_set_new(robots, "nofollow", json_boolean(doc && extract_doc_nofollow(doc)));
    size_t n = doc ? extract_doc_link_count(doc) : 0;
    for (size_t i = 0; i < n && !bad; i++) {
        const struct extract_link *l = extract_doc_link(doc, i);
        json_t *jl = json_pack("{s:s, s:s, s:b, s:b}", "url", l->url, "anchor", l->anchor,
                               "nofollow", (int)l->nofollow, "in_main", (int)l->in_main);
        bad |= !jl || json_array_append_new(links, jl);
    }
    bad |= json_object_set_new(o, "links", links);
    links = NULL;
    bad |= json_object_set_new(o, "robots", robots);
    robots = NULL;
    unsigned cut = doc ? extract_doc_truncated(doc, NULL) : 0;
    json_t *tr = json_array();
    if (tr && (cut & EXTRACT_CUT_LINKS))
        bad |= json_array_append_new(tr, json_string("links"));
    if (tr && (cut & EXTRACT_CUT_DEPTH))
        bad |= json_array_append_new(tr, json_string("depth"));
    bad |= json_object_set_new(o, "truncated", tr);
    if (bad)
        goto nomem;
    int rc = json_dumpf(o, stdout, JSON_COMPACT | JSON_PRESERVE_ORDER);
    json_decref(o);
    if (rc != 0)
        return -1;
    putchar('\n');
    return 0;
nomem:
    json_decref(o);
    json_decref(links);
    json_decref(robots);
    return -1;
}

enum {
    OPT_TEXT = 256,
    OPT_JSON,
    OPT_LINKS,
    OPT_MAX_LINKS,
    OPT_MAX_DEPTH,
    OPT_BASE_URL,
    OPT_CONTENT_TYPE,
    OPT_MAX_BYTES
};
static const struct option longopts[] = {
    {"text", no_argument, NULL, OPT_TEXT},
    {"json", no_argument, NULL, OPT_JSON},
    {"links", no_argument, NULL, OPT_LINKS},
    {"max-links", required_argument, NULL, OPT_MAX_LINKS},
    {"max-depth", required_argument, NULL, OPT_MAX_DEPTH},
    {"max-nesting", required_argument, NULL, OPT_MAX_DEPTH},
    {"base-url", required_argument, NULL, OPT_BASE_URL},
    {"content-type", required_argument, NULL, OPT_CONTENT_TYPE},
    {"max-bytes", required_argument, NULL, OPT_MAX_BYTES},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

/* The options into *mode and *opts, the page into *path. CLI_OK (*path NULL after
 * --help), or the exit status after saying why. */
static int parse_args(int argc, char **argv, enum mode *mode, struct extract_opts *opts,
                      const char **path)
{
    long max_bytes = (long)EXTRACT_DEFAULT_MAX_BYTES;
    long max_links = (long)EXTRACT_DEFAULT_MAX_LINKS, max_depth = (long)EXTRACT_DEFAULT_MAX_DEPTH;
    struct cli_getopt g;
    *path = NULL;
    cli_getopt_init(&g, CMD, argc, argv, "h", longopts, usage);
    for (int c; (c = cli_getopt_next(&g)) != CLI_GETOPT_END;) {
        const char *v = g.value;
        if (c >= OPT_MAX_LINKS && !v)
            return cli_usage_error(CMD, "%s needs a value", g.name);
        switch (c) {
        case CLI_GETOPT_HELP:
            return CLI_OK;
        case OPT_TEXT:
            *mode = MODE_TEXT;
            break;
        case OPT_JSON:
            *mode = MODE_JSON;
            break;
        case OPT_LINKS:
            *mode = MODE_LINKS;
            break;
        case OPT_MAX_LINKS:
        case OPT_MAX_DEPTH:
            if (cli_parse_cap(CMD, g.name, v,
                              c == OPT_MAX_LINKS ? CLI_MAX_LINKS_LIMIT
                                                 : (long)EXTRACT_MAX_DEPTH_LIMIT,
                              c == OPT_MAX_LINKS ? &max_links : &max_depth) != 0)
                return CLI_USAGE;
            break;
        case OPT_BASE_URL:
            opts->base_url = v;
            break;
        case OPT_CONTENT_TYPE:
            opts->content_type = v;
            break;
        case OPT_MAX_BYTES:
            if (cli_parse_long(
                    v, 1, (long)(SIZE_MAX / 8 > (size_t)LONG_MAX ? LONG_MAX : (long)(SIZE_MAX / 8)),
                    &max_bytes) != 0)
                return cli_usage_error(CMD,
                                       "--max-bytes wants a positive number of bytes, "
                                       "not '%s'",
                                       v);
            break;
        default: /* CLI_GETOPT_ERROR: said why */
            return CLI_USAGE;
        }
    }
    int i = g.optind;
    if (i >= argc)
        return cli_usage_error(CMD, "which page? give a FILE, or - for standard input");
    if (i + 1 < argc)
        return cli_usage_error(CMD, "one page at a time: unexpected '%s'", argv[i + 1]);
    *path = argv[i];
    opts->max_bytes = (size_t)max_bytes;
    opts->max_links = (size_t)max_links;
    opts->max_depth = (unsigned)max_depth;
    return CLI_OK;
}

/* The page at path ("-": standard input, named "(stdin)"), at most max_bytes, into *html
 * (caller frees) and *len. CLI_OK, or CLI_RUNTIME after saying why. */
static int read_page(const char *path, const char *name, size_t max_bytes, char **html, size_t *len)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "rb");
    if (!f) {
        cli_error(CMD, "cannot open %s: %s", path, strerror(errno));
        return CLI_RUNTIME;
    }
    int r = read_all(f, max_bytes, html, len);
    int read_errno = errno;
    if (f != stdin)
        fclose(f);
    if (r == 1) {
        cli_error(CMD, "%s: input is too large (over %zu bytes; see --max-bytes)", name, max_bytes);
        return CLI_RUNTIME;
    }
    if (r != 0) {
        cli_error(CMD, "cannot read %s: %s", name, strerror(read_errno));
        return CLI_RUNTIME;
    }
    return CLI_OK;
}

/* What mode asks for of the parsed page, on standard output: CLI_OK or CLI_RUNTIME. */
static int print_doc(enum mode mode, const struct extract_doc *doc, const char *name)
{
    size_t text_len = 0;
    const char *text = extract_doc_text(doc, &text_len);
    if (text_len == 0 && mode != MODE_LINKS)
        cli_error(CMD, "warning: %s: no main text found", name);
    switch (mode) {
    case MODE_TEXT:
        if (text_len > 0) {
            fwrite(text, 1, text_len, stdout);
            putchar('\n');
        }
        break;
    case MODE_JSON:
        if (print_json(doc) != 0) {
            cli_error(CMD, "%s: out of memory writing json", name);
            return CLI_RUNTIME;
        }
        break;
    case MODE_LINKS:
        for (size_t k = 0; k < extract_doc_link_count(doc); k++) {
            const struct extract_link *l = extract_doc_link(doc, k);
            printf("%s\t%s\n", l->url, l->anchor);
        }
        break;
    }
    return CLI_OK;
}

int cmd_extract(int argc, char **argv)
{
    enum mode mode = MODE_TEXT;
    struct extract_opts opts;
    memset(&opts, 0, sizeof opts);
    const char *path;
    int status = parse_args(argc, argv, &mode, &opts, &path);
    if (status != CLI_OK || !path)
        return status;
    const char *name = strcmp(path, "-") == 0 ? "(stdin)" : path;
    char *html = NULL;
    size_t len = 0;
    if ((status = read_page(path, name, opts.max_bytes, &html, &len)) != CLI_OK)
        return status;

    struct extract_doc *doc = NULL;
    enum extract_code rc = extract_doc_parse(html, len, &opts, &doc);
    free(html);
    if (rc == EXTRACT_EEMPTY || rc == EXTRACT_ENOTEXT) {
        cli_error(CMD, "warning: %s: %s", name, extract_strerror(rc));
        if (mode == MODE_JSON && print_json(NULL) != 0)
            status = CLI_RUNTIME;
    } else if (rc != EXTRACT_OK) {
        cli_error(CMD, "%s: %s", name, extract_strerror(rc));
        return CLI_RUNTIME;
    } else {
        cli_warn_cuts(CMD, name, doc, "--max-depth");
        status = print_doc(mode, doc, name);
    }
    extract_doc_free(doc);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        cli_error(CMD, "cannot write output: %s", strerror(errno));
        return CLI_RUNTIME;
    }
    return status;
}
