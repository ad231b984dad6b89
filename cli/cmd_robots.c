/*
 * `simcrawl robots [-v] ROBOTS_FILE USER_AGENT URL`: what the crawler would decide for URL
 * under that robots.txt and user agent, the way Google's reference tool robots_main does
 * (so conformance suites can drive it): prints "allowed" or "disallowed" and exits 0 or 1.
 * Since 1 means "disallowed" here, usage errors and unreadable files exit 2 (unlike the
 * other commands). -v names the deciding rule and its line and notes on stderr which group
 * applied and what was ignored. ROBOTS_FILE "-" is stdin; URL is a full URL (its path and
 * query are used) or a path. The parser is crawler/robots.c (RFC 9309).
 */
#include "cli/cli.h"
#include "crawler/crawl.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define ROBOTS_EXIT_ALLOWED 0
#define ROBOTS_EXIT_DISALLOWED 1
#define ROBOTS_EXIT_ERROR 2

static void usage(FILE *out)
{
    fprintf(out, "usage: simcrawl robots [-v] ROBOTS_FILE USER_AGENT URL\n\n"
                 "Prints 'allowed' or 'disallowed': may USER_AGENT fetch URL under ROBOTS_FILE\n"
                 "(RFC 9309: longest match wins, Allow wins ties, '*' and '$' wildcards).\n"
                 "ROBOTS_FILE may be '-' (stdin); URL is a full URL or a path. USER_AGENT is a\n"
                 "product token or a whole User-Agent string (its leading [A-Za-z_-] letters).\n\n"
                 "  -v, --verbose   name the rule that decided and its line number\n"
                 "  -h, --help      this text\n\n"
                 "exit status: 0 allowed, 1 disallowed, 2 usage error or unreadable file.\n");
}

/* Reads up to keep bytes of f into *buf and counts the rest into *total. */
static int read_capped(FILE *f, size_t keep, char **buf, size_t *len, size_t *total)
{
    char *b = malloc(keep ? keep : 1);
    if (!b)
        return -1;
    size_t n = 0, t = 0;
    char skip[65536];
    for (;;) {
        size_t got;
        if (n < keep) {
            got = fread(b + n, 1, keep - n, f);
            n += got;
        } else {
            got = fread(skip, 1, sizeof skip, f);
        }
        t += got;
        if (got == 0)
            break;
    }
    if (ferror(f)) {
        free(b);
        return -1;
    }
    *buf = b;
    *len = n;
    *total = t;
    return 0;
}

static const struct option longopts[] = {
    {"verbose", no_argument, NULL, 'v'}, {"help", no_argument, NULL, 'h'}, {NULL, 0, NULL, 0}};

int cmd_robots(int argc, char **argv)
{
    int verbose = 0;
    struct cli_getopt g;
    cli_getopt_init(&g, "robots", argc, argv, "hv", longopts, usage);
    for (int c; (c = cli_getopt_next(&g)) != CLI_GETOPT_END;) {
        if (c == CLI_GETOPT_HELP)
            return CLI_OK;
        if (c != 'v')
            return ROBOTS_EXIT_ERROR; /* CLI_GETOPT_ERROR: said why */
        verbose = 1;
    }
    int i = g.optind;
    if (argc - i != 3)
        return cli_usage_error("robots", "expected ROBOTS_FILE USER_AGENT URL, got %d argument%s",
                               argc - i, argc - i == 1 ? "" : "s"),
               ROBOTS_EXIT_ERROR;
    const char *file = argv[i], *agent = argv[i + 1], *url = argv[i + 2];

    struct crawl_robots_opts opts;
    crawl_robots_opts_init(&opts);
    FILE *f = strcmp(file, "-") == 0 ? stdin : fopen(file, "rb");
    if (!f) {
        cli_error("robots", "cannot open %s: %s", file, strerror(errno));
        return ROBOTS_EXIT_ERROR;
    }
    char *text = NULL;
    size_t len = 0, total = 0;
    /* one byte past the cap lets the parser see whether the cut falls on a line end */
    int rd = read_capped(f, opts.max_bytes + 1, &text, &len, &total);
    int rerr = errno;
    if (f != stdin)
        fclose(f);
    if (rd != 0) {
        cli_error("robots", "cannot read %s: %s", file, rerr ? strerror(rerr) : "read error");
        return ROBOTS_EXIT_ERROR;
    }

    struct crawl_robots *r = NULL;
    enum crawl_code rc = crawl_robots_parse(text, len, agent, &opts, &r);
    free(text);
    if (rc == CRAWL_EINVAL)
        return cli_usage_error("robots",
                               "user agent '%s' has no product token (it must start with "
                               "a letter, '-' or '_')",
                               agent),
               ROBOTS_EXIT_ERROR;
    if (rc != CRAWL_OK) {
        cli_error("robots", "cannot parse %s: %s", file, crawl_strerror(rc));
        return ROBOTS_EXIT_ERROR;
    }

    size_t plen;
    const char *path = crawl_robots_url_path(url, &plen);
    struct crawl_robots_decision d;
    int allowed = crawl_robots_allowed(r, path, plen, &d);
    if (!verbose) {
        puts(allowed ? "allowed" : "disallowed");
    } else {
        const struct crawl_robots_info *in = crawl_robots_info(r);
        if (d.reason == CRAWL_ROBOTS_BY_RULE)
            printf("%s by line %u: %s\n", allowed ? "allowed" : "disallowed", d.line, d.rule);
        else if (d.reason == CRAWL_ROBOTS_ROBOTS_TXT)
            printf("allowed: /robots.txt is always allowed\n");
        else
            printf("allowed: no rule matched\n");
        size_t toklen = strspn(agent, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz-_");
        fprintf(stderr, "simcrawl robots: %s: %u lines, %zu rules apply (%s group), %zu sitemaps\n",
                file, in->lines, in->rules, in->specific_group ? "the user agent's" : "the '*'",
                crawl_robots_sitemap_count(r));
        if (in->specific_group)
            fprintf(stderr, "simcrawl robots: user agent token '%.*s'\n", (int)toklen, agent);
        if (total > len || in->bytes_ignored)
            fprintf(stderr,
                    "simcrawl robots: %s: %zu bytes, only the first %zu parsed (limit %zu)\n", file,
                    total, len - in->bytes_ignored, opts.max_bytes);
        if (in->rules_ignored)
            fprintf(stderr, "simcrawl robots: %s: %zu rules beyond the limit ignored\n", file,
                    in->rules_ignored);
        if (crawl_robots_crawl_delay(r) > 0)
            fprintf(stderr, "simcrawl robots: crawl-delay %g s\n", crawl_robots_crawl_delay(r));
    }
    crawl_robots_free(r);
    return allowed ? ROBOTS_EXIT_ALLOWED : ROBOTS_EXIT_DISALLOWED;
}
