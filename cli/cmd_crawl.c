/*
 * simcrawl crawl [--config FILE] [options] SEED...
 *
 * The crawler: wires crawler/'s loop (crawl_run: frontier, politeness, robots.txt, the
 * libcurl multi fetcher) to the page pipeline. Each fetched HTML page goes through
 * process() on a worker thread: extract + fingerprint (filter/pipeline.h; the page is parsed
 * once, its document kept for the links), then the one decision of filter/decide.h, under
 * its lock: the exact-duplicate check (SHA-1 payload digest, as WARC-Payload-Digest), the
 * near-duplicate lookup in the permuted-table index (dedup_index_nearest within k; with
 * --method minhash the LSH index of the kept pages' MinHash signatures, a near-duplicate's
 * estimated Jaccard >= --threshold), the index add; then the WARC write. A near-duplicate is
 * logged, not archived, and its links are not enqueued; an exact duplicate is archived as a revisit
 * record; meta robots noindex pages are not archived but their links are followed; rel=nofollow
 * links and pages with meta robots nofollow are not expanded. With --topic, each link's priority is
 * 0.4 x the relevance of the linking page + 0.6 x that of the anchor text and the URL's
 * words (cosine of token bags against the topic, tokens as docs/FINGERPRINT.md, the topic's
 * phrases weighted above its words: topic_cosine), and the
 * frontier serves the best first.
 *
 * Options come from the [crawl] section of config/simcrawl.conf-style INI files (--config,
 * cli/config.c) and the command line, which wins. The log is JSON Lines (jansson), one object per
 * URL, as README.md ("simcrawl crawl") shows; the summary goes to stderr in the user's words (its
 * internals with --verbose); a progress line is drawn only when stderr is a terminal;
 * --quiet prints neither. SIGINT/SIGTERM stop the crawl cleanly (crawl_stop()).
 */
#include "cli/cli.h"
#include "cli/digests.h"
#include "cli/crawl_report.h"
#include "cli/pipeline.h"
#include "cli/requisites.h"
#include "crawler/crawl.h"
#include "dedup/dedup.h"
#include "extract/extract.h"
#include "cli/minhash.h"
#include "filter/decide.h"
#include "filter/redisidx.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <pthread.h>
#include <signal.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <stddef.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

static void usage(FILE *out);
#define CMD "crawl"
#define SEEDS_MAX 100000u /* seed URLs at most */
#define SEED_LINE_MAX 8192u
#define TOPIC_MAX_BYTES (64u * 1024) /* --topic / --topic-file */
/* --warc-gzip-level's default: ISA-L's fastest level, which keeps the WARC's compression at
 * 6% of the crawl's CPU (crawler/warc_write.c has the figures of the three compressors). */
#define WARC_GZIP_LEVEL_DEFAULT 1
/* A verdict's error words: "not fingerprinted: " and the like before the parser's
 * FILTER_MESSAGE_MAX-byte reason. */
#define VERDICT_MESSAGE_MAX 300
/* Pages a crawl without --max-pages sizes its index's table design for (dedup_design_choose's
 * cost model picks the permuted tables for about this many fingerprints; the index holds
 * more, each probe then reads longer runs of candidates). */
#define INDEX_EXPECTED_PAGES 1000000u
/* Seeds named in the --report (the report's argument list is an int count). */
#define REPORT_SEEDS_MAX 1000000u
/* What an archived page not remembered (past CLI_DIGESTS_MAX) loses. */
#define CRAWL_DIGESTS_LOST                                                                         \
    "exact duplicates of pages archived from now on are decided near-duplicate (by their "         \
    "fingerprint) and get no revisit record"

/* ---- options ---- */

struct options {
    struct crawl_opts co;
    long k;
    int k_given;      /* --k on the command line (a config file's k is simhash's) */
    int minhash;      /* --method minhash */
    double threshold; /* --threshold J (minhash) */
    int threshold_given;
    const char *warc, *log;
    const char *report; /* --report FILE */
    int warc_gzip_level;
    const char *topic, *topic_file;
    double min_relevance;
    int quiet;   /* --quiet: no progress line, no summary */
    int verbose; /* --verbose: the summary's internals too */
    int no_templates;
    int page_requisites;  /* --page-requisites */
    unsigned max_nesting; /* --max-nesting: extract_opts.max_depth */
    const char **seeds;
    size_t n_seeds;
    const char *seeds_file;
    const char *state;                  /* --state DIR */
    int overwrite;                      /* --overwrite */
    int durable;                        /* --durable */
    const char *redis;                  /* --redis URL: the shared frontier */
    const char *redis_index;            /* --redis-index URL (NULL: the frontier's) */
    const char *worker_name;            /* --worker-name NAME */
    double lease_time, host_lease_time; /* --lease-time, --host-lease-time (0: defaults) */
    double redis_retry;                 /* --redis-retry (0: the default; < 0: none) */
    unsigned frontier_shards;           /* --frontier-shards (0: the crawl's) */
    char label[512]; /* where the state is, for messages: DIR or URL (worker NAME) */
    char *owned[64]; /* strings copied from config files */
    size_t n_owned;
};

static const char *keep(struct options *o, const char *v)
{
    if (o->n_owned >= sizeof o->owned / sizeof o->owned[0])
        return NULL;
    char *c = strdup(v);
    if (c)
        o->owned[o->n_owned++] = c;
    return c;
}

/* A notice of the crawl's state (resumed, finished, nothing kept, a state migrated): said
 * on stderr as "simcrawl crawl: ...", but not with --quiet, which leaves only errors. */
static void notice(const struct options *o, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
static void notice(const struct options *o, const char *fmt, ...)
{
    if (o->quiet)
        return;
    va_list ap;
    va_start(ap, fmt);
    cli_verror(CMD, fmt, ap);
    va_end(ap);
}

static int parse_double(const char *s, double min, double max, double *out)
{
    char *end;
    if (!s || !*s)
        return -1;
    errno = 0;
    double v = strtod(s, &end);
    if (errno || *end || !(v >= min && v <= max))
        return -1;
    *out = v;
    return 0;
}

/* --method simhash|minhash and --threshold J (issue 16): 0, or -1 for a bad value. */
static int method_option(struct options *o, const char *name, const char *v)
{
    if (name[0] == 't') {
        if (cli_parse_threshold(v, &o->threshold) != 0)
            return -1;
        o->threshold_given = 1;
    } else if (strcmp(v, "simhash") == 0 || strcmp(v, "minhash") == 0) {
        o->minhash = v[0] == 'm';
    } else {
        return -1;
    }
    return 0;
}

/*
 * The options as a table (every one is also a key of the config file's [crawl] section;
 * cmdline_only() names the options that are not):
 * the name, how its value is read, where it goes (an offset into struct options; the
 * crawl_opts ones are at offsetof(struct options, co.FIELD)), the accepted range and the
 * words of the error for a value outside it. set_option() is one loop over it.
 */
enum opt_kind {
    OPT_STRING,   /* const char *; "" unsets it (NULL) */
    OPT_NONEMPTY, /* const char *; "" is an error */
    OPT_INT,      /* an integer in [min, max] into a field of type `field` */
    OPT_REAL,     /* a double in [min, max] */
    OPT_YESNO,    /* yes/on/1 or no/off/0 into an int (1 / 0) */
    OPT_NOYES,    /* the same, inverted (robots: yes means ignore_robots 0) */
    OPT_SCOPE,    /* host, domain or any */
    OPT_K,        /* --k: also marks k_given when from the command line */
    OPT_METHOD,   /* --method and --threshold: method_option() */
};

enum opt_field { F_LONG, F_INT, F_UNSIGNED, F_SIZE };

/* Flags: 0 given means "no value" to the library, whose 0 is the default. */
#define OPT_ZERO_IS_NONE 1u

struct opt_spec {
    const char *name;
    enum opt_kind kind;
    size_t offset;
    enum opt_field field; /* OPT_INT only */
    double min, max;
    const char *bad; /* "--NAME: BAD, got 'VALUE'" */
    unsigned flags;
};

#define CO(f) offsetof(struct options, co.f)
#define OP(f) offsetof(struct options, f)
static const struct opt_spec opt_specs[] = {
    {"max-pages", OPT_INT, CO(max_pages), F_LONG, 0, 1000000000L, "a number of pages (0: no limit)",
     0},
    {"max-depth", OPT_INT, CO(max_depth), F_LONG, -1, 1000000L, "a depth (-1: no limit)", 0},
    {"concurrency", OPT_INT, CO(concurrency), F_UNSIGNED, 1, 1024, "1 to 1024 connections", 0},
    {"per-host", OPT_INT, CO(per_host), F_UNSIGNED, 1, 64, "1 to 64 connections", 0},
    {"delay", OPT_REAL, CO(delay), 0, 0, 3600, "seconds, 0 to 3600", 0},
    {"max-delay", OPT_REAL, CO(max_delay), 0, 0.001, 86400, "seconds", 0},
    {"scope", OPT_SCOPE, CO(scope), 0, 0, 0, "host, domain or any", 0},
    {"include", OPT_STRING, CO(include), 0, 0, 0, NULL, 0},
    {"exclude", OPT_STRING, CO(exclude), 0, 0, 0, NULL, 0},
    {"topic", OPT_STRING, OP(topic), 0, 0, 0, NULL, 0},
    {"topic-file", OPT_STRING, OP(topic_file), 0, 0, 0, NULL, 0},
    {"min-relevance", OPT_REAL, OP(min_relevance), 0, 0, 1, "a relevance from 0 to 1", 0},
    {"k", OPT_K, OP(k), F_LONG, 0, DEDUP_K_MAX, "a Hamming distance from 0 to 7", 0},
    {"method", OPT_METHOD, 0, 0, 0, 0, "simhash or minhash", 0},
    {"threshold", OPT_METHOD, 0, 0, 0, 0, "a Jaccard similarity, more than 0 and at most 1", 0},
    {"warc", OPT_STRING, OP(warc), 0, 0, 0, NULL, 0},
    {"warc-gzip-level", OPT_INT, OP(warc_gzip_level), F_INT, 1, 9,
     "a zlib level from 1 (fast) to 9 (small)", 0},
    {"log", OPT_STRING, OP(log), 0, 0, 0, NULL, 0},
    {"report", OPT_STRING, OP(report), 0, 0, 0, NULL, 0},
    {"user-agent", OPT_NONEMPTY, CO(user_agent), 0, 0, 0, "a non-empty string", 0},
    {"ca-file", OPT_STRING, CO(ca_file), 0, 0, 0, NULL, 0},
    {"max-body", OPT_INT, CO(max_body), F_SIZE, 1024, 1L << 30, "bytes, 1024 to 1073741824", 0},
    {"max-memory", OPT_INT, CO(max_memory), F_SIZE, 1L << 20, (double)(1L << 40),
     "bytes, 1048576 to 1099511627776", 0},
    {"seen-memory", OPT_INT, CO(seen_memory), F_SIZE, 4096, (double)(1L << 40),
     "bytes, 4096 to 1099511627776", 0},
    {"max-links", OPT_INT, CO(max_links), F_SIZE, 1, CLI_MAX_LINKS_LIMIT,
     "links kept from one page, 1 to 100000000", 0},
    {"max-nesting", OPT_INT, OP(max_nesting), F_UNSIGNED, 1, EXTRACT_MAX_DEPTH_LIMIT,
     "an element nesting depth, 1 to 1000000", 0},
    {"timeout", OPT_REAL, CO(timeout), 0, 0.1, 3600, "seconds, 0.1 to 3600", 0},
    {"connect-timeout", OPT_REAL, CO(connect_timeout), 0, 0.1, 600, "seconds, 0.1 to 600", 0},
    {"workers", OPT_INT, CO(workers), F_UNSIGNED, 0, CRAWL_MAX_WORKERS,
     "0 (one per CPU) to 64 threads", 0},
    {"robots", OPT_NOYES, CO(ignore_robots), 0, 0, 0, "yes or no", 0},
    {"robots-outage", OPT_REAL, CO(robots_outage), 0, 0.1, 30 * 86400.0, "seconds, 0.1 to 2592000",
     0},
    {"robots-backoff", OPT_REAL, CO(robots_backoff), 0, 0.01, 3600, "seconds, 0.01 to 3600", 0},
    {"unreachable-retries", OPT_INT, CO(unreachable_retries), F_INT, 0, 100, "0 to 100 retries",
     OPT_ZERO_IS_NONE},
    {"unreachable-time", OPT_REAL, CO(unreachable_time), 0, 0.1, 3600, "seconds, 0.1 to 3600", 0},
    {"seeds", OPT_STRING, OP(seeds_file), 0, 0, 0, NULL, 0},
    {"state", OPT_STRING, OP(state), 0, 0, 0, NULL, 0},
    {"redis", OPT_STRING, OP(redis), 0, 0, 0, NULL, 0},
    {"redis-index", OPT_STRING, OP(redis_index), 0, 0, 0, NULL, 0},
    {"worker-name", OPT_STRING, OP(worker_name), 0, 0, 0, NULL, 0},
    {"lease-time", OPT_REAL, OP(lease_time), 0, 0.5, 3600, "seconds, 0.5 to 3600", 0},
    {"redis-retry", OPT_REAL, OP(redis_retry), 0, 0, 3600, "seconds, 0 to 3600 (0: fail at once)",
     OPT_ZERO_IS_NONE},
    {"frontier-shards", OPT_INT, OP(frontier_shards), F_UNSIGNED, 1, CRAWL_REDIS_MAX_SHARDS,
     "1 to 1024 shards", 0},
    {"host-lease-time", OPT_REAL, OP(host_lease_time), 0, 0, 3600,
     "seconds, 0 to 3600 (0: one URL a turn)", OPT_ZERO_IS_NONE},
    {"overwrite", OPT_YESNO, OP(overwrite), 0, 0, 0, "yes or no", 0},
    {"durable", OPT_YESNO, OP(durable), 0, 0, 0, "yes or no", 0},
    {"no-parent", OPT_YESNO, CO(no_parent), 0, 0, 0, "yes or no", 0},
    {"page-requisites", OPT_YESNO, OP(page_requisites), 0, 0, 0, "yes or no", 0},
    {"no-templates", OPT_YESNO, OP(no_templates), 0, 0, 0, "yes or no", 0},
};
#undef CO
#undef OP

/* yes/on/1: 1, no/off/0: 0, anything else -1 */
static int parse_yes_no(const char *v)
{
    if (strcmp(v, "yes") == 0 || strcmp(v, "on") == 0 || strcmp(v, "1") == 0)
        return 1;
    if (strcmp(v, "no") == 0 || strcmp(v, "off") == 0 || strcmp(v, "0") == 0)
        return 0;
    return -1;
}

/* Stores n into the integer field at p of type f. */
static void store_int(void *p, enum opt_field f, long n)
{
    switch (f) {
    case F_LONG:
        *(long *)p = n;
        break;
    case F_INT:
        *(int *)p = (int)n;
        break;
    case F_UNSIGNED:
        *(unsigned *)p = (unsigned)n;
        break;
    case F_SIZE:
        *(size_t *)p = (size_t)n;
        break;
    }
}

/* Applies v to the option of spec s. 0, or -1 for a value it does not take. */
static int apply_option(struct options *o, const struct opt_spec *s, const char *v,
                        const char *where)
{
    void *field = (char *)o + s->offset;
    long n;
    double d;
    int yes;
    switch (s->kind) {
    case OPT_STRING:
        *(const char **)field = *v ? v : NULL;
        return 0;
    case OPT_NONEMPTY:
        if (!*v)
            return -1;
        *(const char **)field = v;
        return 0;
    case OPT_INT:
    case OPT_K:
        if (cli_parse_long(v, (long)s->min, (long)s->max, &n))
            return -1;
        store_int(field, s->field, (s->flags & OPT_ZERO_IS_NONE) && n == 0 ? -1 : n);
        if (s->kind == OPT_K) /* a config file's k is simhash's (issue 16) */
            o->k_given |= where == NULL;
        return 0;
    case OPT_REAL:
        if (parse_double(v, s->min, s->max, &d))
            return -1;
        *(double *)field = (s->flags & OPT_ZERO_IS_NONE) && !(d > 0) ? -1 : d;
        return 0;
    case OPT_YESNO:
    case OPT_NOYES:
        if ((yes = parse_yes_no(v)) < 0)
            return -1;
        *(int *)field = s->kind == OPT_YESNO ? yes : !yes;
        return 0;
    case OPT_SCOPE:
        if (strcmp(v, "host") == 0)
            *(enum crawl_scope *)field = CRAWL_SCOPE_HOST;
        else if (strcmp(v, "domain") == 0)
            *(enum crawl_scope *)field = CRAWL_SCOPE_DOMAIN;
        else if (strcmp(v, "any") == 0)
            *(enum crawl_scope *)field = CRAWL_SCOPE_ANY;
        else
            return -1;
        return 0;
    case OPT_METHOD:
        return method_option(o, s->name, v);
    }
    return -1;
}

/* Applies one option (name without "--"). Returns 0, or -1 after printing why. */
static int set_option(struct options *o, const char *name, const char *v, const char *where)
{
    for (size_t i = 0; i < sizeof opt_specs / sizeof opt_specs[0]; i++) {
        if (strcmp(name, opt_specs[i].name) != 0)
            continue;
        if (apply_option(o, &opt_specs[i], v, where) == 0)
            return 0;
        cli_usage_error(CMD, "%s%s--%s: %s, got '%s'", where ? where : "", where ? ": " : "", name,
                        opt_specs[i].bad, v);
        return -1;
    }
    cli_unknown_key(CMD, where, name, usage);
    return -1;
}

/* A key of the [crawl] section of a config file (cli_config_load). */
static int on_config(void *userdata, const char *name, const char *value, const char *where)
{
    struct options *o = userdata;
    const char *v = keep(o, value);
    if (!v) {
        cli_error(CMD, "%s: more than %zu settings", where, sizeof o->owned / sizeof o->owned[0]);
        return -1;
    }
    return set_option(o, name, v, where);
}

/* crawl --help, part 1: the command, config files, the seeds, limits and scope. */
static void usage_what(FILE *out)
{
    fprintf(out,
            "usage: simcrawl crawl [--config FILE] [options] SEED...\n\n"
            "Crawls from the seed URLs, politely, dropping near-duplicate pages (within k of a\n"
            "page already kept) and the links only they lead to. Writes a WARC and a JSON Lines\n"
            "log of every URL; prints a summary on stderr. A SEED without a scheme is taken\n"
            "as http:// (example.org/docs/, localhost:8080/), as wget does.\n\n"
            "options (each but --config, --quiet, --verbose and --help is also a key of the\n"
            "[crawl] section of a config file, as in config/simcrawl.conf: delay = 2,\n"
            "no-templates = yes; the command line wins):\n"
            "  --config FILE          read options from an INI file first\n"
            "  --seeds FILE           more seed URLs, one a line, # comments\n"
            "  --max-pages N          page requests at most (0: no limit; default 0); with\n"
            "                         --redis, of all the workers together\n"
            "  --max-depth N          links from a seed at most (-1: no limit; default -1)\n"
            "  --concurrency N        transfers and connections in all (default 16)\n"
            "  --per-host N           connections to one host (default 1)\n"
            "  --delay SECONDS        between requests to one host (default 1; robots.txt\n"
            "                         Crawl-delay raises it, up to --max-delay)\n"
            "  --max-delay SECONDS    the most a robots.txt Crawl-delay raises the delay to\n"
            "                         (default 30)\n"
            "  --scope host|domain|any  which links to follow: the seeds' hosts, their\n"
            "                         registrable domains (public suffix list), or any (host)\n"
            "  --no-parent            never ascend above a seed's directory (wget's -np): on\n"
            "                         a seed's host only URLs under it (/docs/ or\n"
            "                         /docs/index.html keep /docs/...; /docs keeps /); other\n"
            "                         hosts are left to --scope\n"
            "  -p, --page-requisites  also fetch and archive what kept pages need to render\n"
            "                         (wget's -p): images (src, srcset), stylesheets and what\n"
            "                         they import (url(), @import), scripts, icons; from any\n"
            "                         host (--scope, --include, --no-parent and --max-depth do\n"
            "                         not apply; --exclude and robots.txt do), politely, each\n"
            "                         once by payload (a copy is a revisit record); logged\n"
            "                         with \"requisite\":true\n"
            "  --include REGEX        only URLs matching this POSIX extended regex\n"
            "  --exclude REGEX        no URL matching this regex\n");
}

/* crawl --help, part 2: the near-duplicate decision, the topic and the outputs. */
static void usage_decisions(FILE *out)
{
    fprintf(out,
            "  --topic WORDS          focused crawl: the most relevant links first (two\n"
            "                         adjacent topic words are a phrase, weighted 6 times)\n"
            "  --topic-file FILE      the topic words from a file\n"
            "  --min-relevance X      do not expand pages less relevant than X (0..1)\n"
            "  --k N                  near-duplicate Hamming distance, 0..7 (default 3;\n"
            "                         the simhash method's knob)\n"
            "  --method simhash|minhash  the near-duplicate method (default simhash). minhash:\n"
            "                         MinHash signatures of word 5-shingles in an LSH index\n"
            "                         (docs/MINHASH.md); a near-duplicate's estimated Jaccard\n"
            "                         similarity with a kept page is at least --threshold;\n"
            "                         the log gives it as \"jaccard\" and \"similarity\"\n"
            "  --threshold J          minhash: 0 < J <= 1 (default 0.8)\n"
            "  --warc FILE            write kept pages to this WARC (.warc.gz: gzip; a name\n"
            "                         without .warc or .warc.gz gets .warc.gz, as wget)\n"
            "  --warc-gzip-level N    1 (fast, the default) to 9 (smallest)\n"
            "  --log FILE             the JSON Lines log ('-': stdout)\n"
            "  --report FILE          after the crawl, the HTML cluster report of what it\n"
            "                         dropped and why: each kept page with the pages dropped\n"
            "                         as its near or exact duplicates, distances, titles, a\n"
            "                         word diff; pages not fingerprinted and errors (with\n"
            "                         --state: the whole crawl, over every run)\n");
}

/* crawl --help, part 3: fetching: user agent, caps, timeouts, robots.txt, unreachable hosts. */
static void usage_fetching(FILE *out)
{
    fprintf(out,
            "  --user-agent STRING    (default \"%s\")\n"
            "  --ca-file FILE         PEM CA certificates to verify https servers with\n"
            "                         (default: the system's bundle)\n"
            "  --max-body BYTES       larger bodies are aborted, logged too large (10 MB)\n"
            "  --max-memory BYTES     response buffers and decoded bodies held at once, over\n"
            "                         all transfers and workers (default 268435456, 256 MiB);\n"
            "                         a transfer that finds no room waits (paused), one that\n"
            "                         alone is over it fails, logged with the budget\n"
            "  --max-links N          links kept from one page, the first N in document\n"
            "                         order (default 100000); the page's log line then says\n"
            "                         \"truncated\":\"links\" and stderr names the page\n"
            "  --max-nesting N        elements nested deeper than N are skipped with their\n"
            "                         text and links (default 256); \"truncated\":\"depth\"\n"
            "  --timeout SECONDS      one transfer at most (default 30)\n"
            "  --connect-timeout S    (default 10)\n"
            "  --workers N            parsing threads (0: one per CPU)\n"
            "  --robots yes|no        obey robots.txt (default yes)\n"
            "  --robots-outage SECONDS  robots.txt answering 5xx or 429 (RFC 9309: disallow\n"
            "                         all for the time being): the host's URLs are held and\n"
            "                         robots.txt fetched again with backoff; when it comes\n"
            "                         back they are crawled if it allows; after this long they\n"
            "                         are logged robots-disallowed (default 300)\n"
            "  --robots-backoff SECONDS  first robots.txt retry after a failure; the wait\n"
            "                         doubles, up to 60 s (default 1)\n"
            "  --unreachable-retries N  a host giving no answer at all to robots.txt (refused,\n"
            "                         no such name, TLS failure, timeout): retried N times\n"
            "                         with the same backoff, then its URLs are logged as\n"
            "                         errors (default 3: 1 + 2 + 4 s)\n"
            "  --unreachable-time SECONDS  ... or once this long has passed since its first\n"
            "                         attempt, whichever comes first: each attempt gets only\n"
            "                         the time left, even below --timeout and\n"
            "                         --connect-timeout (default 30)\n",
            CRAWL_DEFAULT_USER_AGENT);
}

/* crawl --help, part 4: the state, the shared crawl and the rest. */
static void usage_state(FILE *out)
{
    fprintf(out,
            "  --no-templates         fingerprint whole main texts; by default the blocks on\n"
            "                         >= 3 and >= 20%% of a host's counted pages (its new\n"
            "                         pages, and its near-duplicates while it has fewer than\n"
            "                         %u), learned as pages arrive, are the site's template\n"
            "                         and left out\n"
            "  --state DIR            keep the crawl's state in DIR (SQLite): the same command\n"
            "                         after a stop, a Ctrl-C or a kill -9 resumes the crawl\n"
            "                         (the WARC and the log cut back to their last committed\n"
            "                         record and continued); a finished crawl says so\n"
            "  --seen-memory BYTES    with --state: memory for the URLs seen (default\n"
            "                         33554432, 32 MiB): a table of the latest, a Bloom\n"
            "                         filter of the others backed by the state; the seen set\n"
            "                         stays within it however many URLs the crawl meets\n"
            "  --durable              with --state: fsync the WARC, the log and the state at\n"
            "                         each commit, so that a power cut loses nothing committed\n"
            "                         (a kill -9 loses nothing committed either way)\n"
            "  --redis redis://HOST:PORT[/DB]  a crawl shared by several workers (processes,\n"
            "                         on one machine or many): every worker started with the\n"
            "                         same URL crawls one frontier, seen set and politeness\n"
            "                         in Redis (no --state); needs --worker-name. The\n"
            "                         frontier's scripts name one hash tag each and go as\n"
            "                         EVALSHA/EVAL, so the URL may name a nutcracker\n"
            "                         (twemproxy) in front of Redis nodes; then give\n"
            "                         --redis-index\n"
            "  --redis-index redis://HOST:PORT[/DB]  with --redis: the shared near-duplicate\n"
            "                         index's Redis, reached directly (its checks use\n"
            "                         WATCH/MULTI, which a proxy refuses; default: --redis)\n"
            "  --worker-name NAME     this worker's name (letters, digits, '-', '_', '.'):\n"
            "                         its files are --warc and --log with \"-NAME\" put\n"
            "                         before the extension (crawl.warc.gz: crawl-NAME.warc.gz,\n"
            "                         crawl.jsonl: crawl-NAME.jsonl, log: log-NAME); started\n"
            "                         again with the same name it resumes them (cut back to\n"
            "                         its last committed record) and its leased URLs come\n"
            "                         back at once; it exits when the shared frontier is\n"
            "                         empty (or --max-pages spent) and no worker holds a\n"
            "                         lease. The workers decide as one crawl: one\n"
            "                         near-duplicate index, one template count per host and\n"
            "                         one payload map (a copy is a revisit of the record in\n"
            "                         whichever worker's WARC holds the original), in Redis\n"
            "  --lease-time SECONDS   a URL in flight stays this worker's this long unless\n"
            "                         renewed (it is, every quarter of it, while the worker\n"
            "                         lives): a killed worker's URLs go to the others after\n"
            "                         it (default 30)\n"
            "  --host-lease-time SECONDS  a worker keeps a host this long, taking its next\n"
            "                         URLs, before giving it back to the others (default\n"
            "                         10; 0: one URL a turn); one worker at a time asks a\n"
            "                         host, and the delay holds across workers\n"
            "  --frontier-shards N    with --redis: spread the shared frontier over N hash\n"
            "                         tags ({f0}..{fN-1}, a host's by a hash of its origin),\n"
            "                         so that a nutcracker in front of several Redis nodes\n"
            "                         spreads it over them (a few tags a node). Fixed when\n"
            "                         the crawl starts: a worker given another number than\n"
            "                         the crawl's is refused (default: the crawl's; a new\n"
            "                         crawl 1). Over N > 1 a commit takes three round trips\n"
            "                         instead of one; with --max-pages an acquire, and a\n"
            "                         commit keeping hosts, one more (the budget's grant)\n"
            "  --redis-retry SECONDS  a worker whose Redis goes away (restarted, a network\n"
            "                         cut) connects again, backing off from 50 ms to 1 s,\n"
            "                         for this long before it fails naming the URL (default\n"
            "                         30; 0: at once); nothing is lost or done twice\n"
            "  --overwrite            replace an existing WARC or log (refused otherwise)\n"
            "  --quiet, -q            no progress line and no summary (errors are still said)\n"
            "  --verbose, -v          the summary's internals too: seen set, robots.txt\n"
            "                         fetches, state commits, time in the workers, memory\n"
            "SIGINT (Ctrl-C) or SIGTERM stops the crawl cleanly: transfers in flight end, the\n"
            "WARC, the log and the state are complete, then simcrawl dies by that signal (a\n"
            "shell sees 130 or 143, so `crawl ... && next` stops); a second one at once.\n"
            "exit status: 0 done, 1 usage, 2 runtime.\n",
            DEDUP_TEMPLATE_YOUNG_DOCS);
}

static void usage(FILE *out)
{
    usage_what(out);
    usage_decisions(out);
    usage_fetching(out);
    usage_state(out);
}

/* ---- topic relevance ---- */

/*
 * HOW IT WORKS (topic phrases). A topic is a bag of words and of its phrases: every two
 * adjacent words of the topic text ("foreign key constraint": "foreign key", "key
 * constraint") is a phrase term, weighted TOPIC_PHRASE_WEIGHT, and a page's bag holds its
 * word pairs as well as its words (pairs hashed with XXH3, 64 bits); words are S-stemmed
 * on both sides (stem_tokens: "foreign keys" says "foreign key"). Relevance is the cosine
 * of the two bags: a page that says "foreign key" gains 6 for each time it does, on top of
 * the 1 for "foreign" and the 1 for "key", so pages about foreign keys rank above pages
 * about foreign data wrappers that only say "foreign" often. A topic of one word has no
 * phrase and scores as a bag of words. The weight was chosen on postgresql-doc-15 (1,169
 * pages), ranking its pages by relevance: with "foreign key constraint", of the top 10, 6
 * are about foreign keys and none about foreign data wrappers (a bag of words: 2 and 5);
 * with "logical replication", 6 on topic and none about physical replication (2 and 4);
 * without stemming, weights 2, 3, 4, 6, 8 gave 3, 5, 5, 6, 6 foreign-key pages and 8 the
 * best top 20 (10 vs 9 at 6, but the lowest scale). Relevances of several-word topics run
 * lower than a bag of words' for pages without the phrase (mind --min-relevance).
 */
#define TOPIC_PHRASE_WEIGHT 6.0

/* A link's priority in a focused crawl: LINK_PAGE_WEIGHT x the linking page's relevance +
 * LINK_ANCHOR_WEIGHT x the relevance of the link's anchor text and URL words. The anchor
 * weighs more since it speaks of the target, the page only of where the link was found;
 * with these weights the focused crawl of docs/BENCHMARKS.md ("Focused crawl vs
 * breadth-first", python3.11-doc, 60 pages) found 22 on-topic pages, breadth-first 6. */
#define LINK_PAGE_WEIGHT 0.4
#define LINK_ANCHOR_WEIGHT 0.6

struct topic {
    uint64_t *terms; /* XXH3 of each topic word (S-stemmed), low bit set, sorted, distinct */
    size_t n;
    uint64_t *phrases; /* the same of each pair of adjacent topic words ("a b") */
    size_t n_phrases;
};

/*
 * Harman's S stemmer (JASIS 1991), for the topic's matching only (fingerprints never see
 * it): "keys" and "key", "policies" and "policy" are one term, so a topic "foreign key"
 * matches an anchor "Foreign Keys". Rewrites the tokens of s (single spaces) in place:
 * -ies (not -eies, -aies) -> -y; -es (not -aes, -ees, -oes) -> -e; -s (not -us, -ss) -> -;
 * words of 3 bytes or fewer are kept. Returns the new length.
 */
static size_t stem_tokens(char *s, size_t len)
{
    size_t w = 0, r = 0;
    while (r < len) {
        size_t n = 0;
        while (r + n < len && s[r + n] != ' ')
            n++;
        char *t = s + r;
        size_t m = n;
#define ENDS(x) (m >= sizeof x - 1 && memcmp(t + m - (sizeof x - 1), x, sizeof x - 1) == 0)
        if (n > 3) {
            if (ENDS("ies") && !ENDS("eies") && !ENDS("aies")) {
                t[m - 3] = 'y';
                m -= 2;
            } else if (ENDS("es") && !ENDS("aes") && !ENDS("ees") && !ENDS("oes")) {
                m -= 1;
            } else if (ENDS("s") && !ENDS("us") && !ENDS("ss")) {
                m -= 1;
            }
        }
#undef ENDS
        memmove(s + w, t, m);
        w += m;
        r += n;
        if (r < len) { /* the space */
            s[w++] = ' ';
            r++;
        }
    }
    s[w] = '\0';
    return w;
}

/* Calls fn(userdata, hash, phrase) for each token of s[0..len) (single spaces) and, with
 * pairs, each pair of adjacent tokens (the bytes "a b", hashed as they lie in s). */
static void each_term(const char *s, size_t len, int pairs,
                      void (*fn)(void *userdata, uint64_t h, int phrase), void *userdata)
{
    const char *end = s + len, *prev = NULL;
    for (const char *a = s; a < end;) {
        const char *sp = memchr(a, ' ', (size_t)(end - a));
        const char *a_end = sp ? sp : end;
        if (a_end > a) {
            fn(userdata, XXH3_64bits(a, (size_t)(a_end - a)), 0);
            if (pairs && prev)
                fn(userdata, XXH3_64bits(prev, (size_t)(a_end - prev)), 1);
            prev = a;
        }
        a = a_end + 1;
    }
}

static int cmp_u64(const void *a, const void *b)
{
    uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;
    return x < y ? -1 : x > y;
}

struct topic_build {
    struct topic *t;
    size_t cap_terms, cap_phrases;
};

static void topic_add(void *userdata, uint64_t h, int phrase)
{
    struct topic_build *b = userdata;
    h |= 1; /* as the page's bag keys them (bag_add) */
    if (phrase && b->t->n_phrases < b->cap_phrases)
        b->t->phrases[b->t->n_phrases++] = h;
    else if (!phrase && b->t->n < b->cap_terms)
        b->t->terms[b->t->n++] = h;
}

/* Sorts v[0..*n) and keeps each value once. */
static void sort_distinct(uint64_t *v, size_t *n)
{
    qsort(v, *n, sizeof *v, cmp_u64);
    size_t k = 0;
    for (size_t i = 0; i < *n; i++)
        if (k == 0 || v[k - 1] != v[i])
            v[k++] = v[i];
    *n = k;
}

static int topic_init(struct topic *t, const char *text)
{
    size_t len = 0, n_tokens = 0;
    char *buf = NULL;
    memset(t, 0, sizeof *t);
    if (extract_tokens(text, strlen(text), &buf, &len, &n_tokens) != EXTRACT_OK)
        return -1;
    len = stem_tokens(buf, len);
    struct topic_build b = {t, n_tokens, n_tokens};
    t->terms = malloc((n_tokens + 1) * sizeof *t->terms);
    t->phrases = malloc((n_tokens + 1) * sizeof *t->phrases);
    if (!t->terms || !t->phrases) {
        free(buf);
        return -1;
    }
    each_term(buf, len, 1, topic_add, &b);
    free(buf);
    sort_distinct(t->terms, &t->n);
    sort_distinct(t->phrases, &t->n_phrases);
    return 0;
}

static void topic_release(struct topic *t)
{
    free(t->terms);
    free(t->phrases);
}

/* The smallest bag table (a power of two): the table is at least twice the terms, at most
 * half full, so a probe ends after a slot or two. */
#define BAG_MIN_SLOTS 16

/* A page's bag of terms: an open-addressing table of term hashes with their counts and
 * topic weights, and the running sums of the cosine (no sort: one pass, O(n)). */
struct bag_slot {
    uint64_t h;
    uint32_t count;
    float weight; /* in the topic: 1 (a word) or TOPIC_PHRASE_WEIGHT; 0 otherwise */
};

struct bag {
    const struct topic *t;
    struct bag_slot *slot;
    size_t mask;
    double dot, norm2;
};

static void bag_add(void *userdata, uint64_t h, int phrase)
{
    struct bag *b = userdata;
    h |= 1; /* 0 marks an empty slot */
    size_t i = (size_t)h & b->mask;
    while (b->slot[i].h && b->slot[i].h != h)
        i = (i + 1) & b->mask;
    struct bag_slot *e = &b->slot[i];
    if (!e->h) {
        e->h = h;
        const uint64_t *set = phrase ? b->t->phrases : b->t->terms;
        size_t n = phrase ? b->t->n_phrases : b->t->n;
        if (n && bsearch(&h, set, n, sizeof *set, cmp_u64))
            e->weight = phrase ? (float)TOPIC_PHRASE_WEIGHT : 1.0f;
    }
    b->norm2 += 2.0 * e->count + 1; /* (c + 1)^2 - c^2 */
    b->dot += e->weight;
    e->count++;
}

/*
 * Cosine between the topic (each word weight 1, each phrase TOPIC_PHRASE_WEIGHT) and the
 * bag of tokens s[0..n_tokens) and, when the topic has phrases, of their adjacent pairs
 * (frequencies), words S-stemmed on both sides: the topic terms' frequencies, weighted,
 * over |topic| * |bag|. s is modified (stemmed in place).
 */
static double topic_cosine(const struct topic *t, char *s, size_t n_tokens)
{
    if (t->n == 0 || n_tokens == 0)
        return 0;
    size_t len = stem_tokens(s, strlen(s));
    size_t terms = n_tokens * (t->n_phrases ? 2 : 1), slots = BAG_MIN_SLOTS;
    while (slots < 2 * terms)
        slots *= 2;
    struct bag b = {.t = t, .slot = calloc(slots, sizeof *b.slot), .mask = slots - 1};
    if (!b.slot)
        return 0;
    each_term(s, len, t->n_phrases > 0, bag_add, &b);
    free(b.slot);
    double tnorm2 = (double)t->n + TOPIC_PHRASE_WEIGHT * TOPIC_PHRASE_WEIGHT * (double)t->n_phrases;
    return b.norm2 > 0 ? b.dot / (sqrt(tnorm2) * sqrt(b.norm2)) : 0;
}

static double text_relevance(const struct topic *t, const char *text, size_t len)
{
    char *tok = NULL;
    size_t tlen = 0, n = 0;
    if (!len || extract_tokens(text, len, &tok, &tlen, &n) != EXTRACT_OK)
        return 0;
    double r = topic_cosine(t, tok, n);
    free(tok);
    return r;
}

/* ---- archived payloads, for exact duplicates ---- */

/* What the decision (filter/decide.h) keeps with an archived payload's SHA-1 digest, for
 * the revisit records of its exact duplicates: the response record's id (filled in once
 * written), the capture date, and the URI after them (NUL-terminated). */
struct kept_meta {
    char id[CRAWL_WARC_ID_SIZE];
    char date[24];
    char uri[];
};

/* A new kept_meta (caller frees with free()), *len its bytes; NULL when out of memory. */
static struct kept_meta *kept_meta_new(const char *id, const char *date, const char *uri,
                                       size_t *len)
{
    size_t ul = strlen(uri) + 1;
    struct kept_meta *m = malloc(sizeof *m + ul);
    if (!m)
        return NULL;
    snprintf(m->id, sizeof m->id, "%s", id);
    snprintf(m->date, sizeof m->date, "%s", date);
    memcpy(m->uri, uri, ul);
    *len = sizeof *m + ul;
    return m;
}

/* ---- errors by cause ---- */

#define ERROR_CAUSES_MAX 16
/* The bytes of one cause's words kept (with its NUL): the causes are the first words of
 * libcurl's and the crawler's errors ("host unreachable: robots.txt: Couldn't connect to
 * server" is 56 bytes), the rest is cut. */
#define ERROR_CAUSE_SIZE 96
/* One "N<TAB>cause" line of the state's "errors.causes": a 64-bit count's 20 digits, the
 * tab, the newline and the cause. */
#define ERROR_CAUSE_LINE (ERROR_CAUSE_SIZE + 32)

/* The cause of an error: its words without the counts and times that differ from URL to
 * URL ("host unreachable: robots.txt: Couldn't connect to server (4 attempts in 7 s)" ->
 * "host unreachable: robots.txt: Couldn't connect to server"). */
static void error_cause(const char *error, char *out, size_t cap)
{
    size_t n = strcspn(error, "(");
    const char *after = strstr(error, " after ");
    if (after && (size_t)(after - error) < n)
        n = (size_t)(after - error);
    while (n > 0 && (error[n - 1] == ' ' || error[n - 1] == ':' || error[n - 1] == ';'))
        n--;
    snprintf(out, cap, "%.*s", (int)n, error);
}

struct run;
static void count_cause(struct run *run, const char *cause, uint64_t n);
static char *causes_text(const struct run *run);

/* ---- a page's records, from process() to record() ---- */

/* What process() (a worker) hands to record() (the loop thread) through the verdict's
 * page_data: the WARC record(s) prepared, the payload's kept_meta to be completed with
 * the record id, and with --state the page's decision record (below). */
struct page_out {
    struct crawl_warc_prepared *prep;
    char digest[CRAWL_DIGEST_SIZE];
    struct kept_meta *meta; /* W_RESPONSE: the revisits' reference, id filled by record() */
    size_t meta_len;
    unsigned char *blob; /* --state: the decision record (page_blob_encode) */
    size_t blob_len, blob_meta_off;
    char *title; /* the page's title (the log, the report) */
    char *text;  /* --report: its main text */
    size_t text_len;
    struct crawl_text ztext; /* --state: the same packed for the state (page_state_text) */
    double jaccard;          /* minhash near-duplicate: the estimate for the log; -1 none */
    int near;                /* a near-duplicate's record: PAGE_BLOB_MAGIC_NEAR */
};

static void page_out_free(void *data)
{
    struct page_out *po = data;
    if (!po)
        return;
    crawl_warc_prepared_free(po->prep);
    free(po->meta);
    free(po->blob);
    free(po->title);
    free(po->text);
    crawl_text_release(&po->ztext);
    free(po);
}

/*
 * HOW IT WORKS (the near-duplicate index with --state). One fact, one home: the index,
 * the archived payloads' digests and the template counts live in memory during the run,
 * and in the state as one record per page decided new (the decision's input: id, payload
 * digest with its kept_meta, fingerprint, host, template blocks, flags), committed in the
 * same transaction as the page's URL and the WARC offset after its record. On resume the
 * records are replayed in commit order through filter_decide_page() with
 * FILTER_DECIDE_KEEP (added without a lookup: the page was decided new once), which
 * rebuilds the index, the digests and the template counts of exactly the committed pages.
 * A page decided but not committed at a kill is gone from all of them at once: it is
 * fetched again and decided again, never "duplicate of itself" (its first decision was
 * never durable), and its WARC record was cut off with the rest of the group. Records are
 * in host byte order: the state is local to the machine. A near-duplicate whose template
 * blocks were counted (its host young: FILTER_DECIDE_LEARN_NEAR) has a record too, with
 * its own magic and without payload key: replayed in the same order by counting its
 * blocks (filter_decide_learn), so a resumed crawl's table is the uninterrupted one's.
 * With --method minhash a record
 * ends with the page's signature (sig_h values; 0 in a simhash crawl's records, the
 * field was padding before).
 */
#define PAGE_BLOB_MAGIC 0x31504353u /* "SCP1" */
/* A near-duplicate whose template blocks were counted (its host young: LEARN_NEAR): the
 * same record without payload key and metadata, replayed by counting its blocks only
 * (filter_decide_learn). Its own magic, so that a simcrawl that knows no such record
 * refuses the state rather than add the page as new. */
#define PAGE_BLOB_MAGIC_NEAR 0x314e4353u /* "SCN1" */

struct page_blob_head {
    uint32_t magic, flags;
    uint32_t has_fp, too_little_text;
    uint64_t fp, doc_hash;
    uint32_t id_len, key_len, meta_len, host_len, n_blocks, sig_h;
};

static int page_blob_encode(const struct filter_decide_page *dp, unsigned sig_h,
                            struct page_out *po)
{
    struct filter_decide_page near;
    if (po->near) { /* counted, not kept: no payload key, metadata or signature */
        near = *dp;
        near.key = near.meta = NULL;
        near.key_len = near.meta_len = 0;
        near.sig = NULL;
        near.has_fp = 0; /* no signature follows (a minhash crawl's replay checks it) */
        dp = &near;
    }
    struct page_blob_head h = {.magic = po->near ? PAGE_BLOB_MAGIC_NEAR : PAGE_BLOB_MAGIC,
                               .flags = dp->flags,
                               .has_fp = (uint32_t)dp->has_fp,
                               .too_little_text = (uint32_t)dp->too_little_text,
                               .fp = dp->fp,
                               .doc_hash = dp->doc_hash,
                               .id_len = (uint32_t)dp->id_len,
                               .key_len = dp->key ? (uint32_t)dp->key_len : 0,
                               .meta_len = dp->key ? (uint32_t)dp->meta_len : 0,
                               .host_len = dp->host ? (uint32_t)dp->host_len : 0,
                               .n_blocks = dp->blocks ? (uint32_t)dp->n_blocks : 0,
                               .sig_h = dp->sig && dp->has_fp ? sig_h : 0};
    size_t len = sizeof h + h.id_len + h.key_len + h.meta_len + h.host_len +
                 8 * (size_t)h.n_blocks + 4 * (size_t)h.sig_h;
    unsigned char *b = malloc(len), *p = b;
    if (!b)
        return -1;
    memcpy(p, &h, sizeof h), p += sizeof h;
    memcpy(p, dp->id, h.id_len), p += h.id_len;
    if (h.key_len)
        memcpy(p, dp->key, h.key_len), p += h.key_len;
    po->blob_meta_off = (size_t)(p - b);
    if (h.meta_len)
        memcpy(p, dp->meta, h.meta_len), p += h.meta_len;
    if (h.host_len)
        memcpy(p, dp->host, h.host_len), p += h.host_len;
    if (h.n_blocks)
        memcpy(p, dp->blocks, 8 * (size_t)h.n_blocks), p += 8 * (size_t)h.n_blocks;
    if (h.sig_h)
        memcpy(p, dp->sig, 4 * (size_t)h.sig_h);
    po->blob = b;
    po->blob_len = len;
    return 0;
}

/* The replay's userdata: the decision, and the signature size of a minhash crawl (0:
 * simhash). */
struct page_replay {
    struct filter_decide *d;
    unsigned sig_h;
};

/* Replays one record into the decision (crawl_state_foreach_page; userdata a struct
 * page_replay): 0, -1 out of memory, 1 a record that is not one (a minhash crawl's
 * fingerprinted page without a signature of the run's size is not one:
 * state_method_check() refused the other method already). */
static int page_blob_replay(void *userdata, const void *data, size_t len)
{
    const struct page_replay *pr = userdata;
    struct filter_decide *d = pr->d;
    unsigned want_h = pr->sig_h;
    struct page_blob_head h;
    if (cli_crawl_report_is_blob(data, len))
        return 0; /* the report's record of a page (record_report) */
    if (len < sizeof h)
        return 1;
    memcpy(&h, data, sizeof h);
    const unsigned char *p = (const unsigned char *)data + sizeof h;
    if ((h.magic != PAGE_BLOB_MAGIC && h.magic != PAGE_BLOB_MAGIC_NEAR) ||
        len != sizeof h + (size_t)h.id_len + h.key_len + h.meta_len + h.host_len +
                   8 * (size_t)h.n_blocks + 4 * (size_t)h.sig_h ||
        (h.sig_h && h.sig_h != want_h) || (want_h && h.has_fp && !h.sig_h))
        return 1;
    struct filter_decide_page dp = {0};
    dp.id = (const char *)p, p += h.id_len;
    dp.id_len = h.id_len;
    if (h.key_len) {
        dp.key = p, p += h.key_len;
        dp.key_len = h.key_len;
        dp.meta = p, p += h.meta_len;
        dp.meta_len = h.meta_len;
    }
    if (h.host_len) {
        dp.host = (const char *)p, p += h.host_len;
        dp.host_len = h.host_len;
    }
    uint64_t *blocks = NULL;
    uint32_t sig[DEDUP_MINHASH_H_MAX];
    if (h.n_blocks) { /* aligned copies */
        blocks = malloc(8 * (size_t)h.n_blocks);
        if (!blocks)
            return -1;
        memcpy(blocks, p, 8 * (size_t)h.n_blocks);
        p += 8 * (size_t)h.n_blocks;
        dp.blocks = blocks;
        dp.n_blocks = h.n_blocks;
    }
    if (h.sig_h) {
        memcpy(sig, p, 4 * (size_t)h.sig_h);
        dp.sig = sig;
    }
    dp.has_fp = (int)h.has_fp;
    dp.fp = h.fp;
    dp.doc_hash = h.doc_hash;
    dp.too_little_text = (int)h.too_little_text;
    dp.flags = (h.flags & ~FILTER_DECIDE_NOINDEX) | FILTER_DECIDE_KEEP;
    struct filter_decide_result dr = {0};
    int rc;
    if (h.magic == PAGE_BLOB_MAGIC_NEAR) /* its blocks counted, as they were at the decision */
        rc = filter_decide_learn(d, &dp) == DEDUP_ENOMEM ? -1 : 0;
    else
        rc = filter_decide_page(d, &dp, &dr) == 0 ? 0 : -1;
    filter_decide_result_release(&dr);
    free(blocks);
    return rc;
}

/* ---- the run ---- */

struct run {
    struct options *o;
    struct topic topic;
    int focused;
    char *topic_text;          /* --topic or --topic-file's text (kept in the state's meta) */
    pthread_mutex_t warc_lock; /* warc, warc_records */
    struct dedup_index *index;
    struct dedup_lsh *lsh;          /* --method minhash: the LSH index instead of index */
    struct redisidx *ridx;          /* --redis: the near-duplicate index shared by the workers */
    struct filter_decide *decide;   /* the decision over index (its own lock), archived
                                     * payloads by SHA-1 digest with a kept_meta */
    struct cli_digests_cap digests; /* their cap, said once (cli/digests.h) */
    int templates;                  /* learn and leave out template blocks (not --no-templates) */
    struct crawl_warc_writer *warc;
    struct crawl_state *state; /* --state */
    int durable;               /* --durable: fsync the WARC and the log before each commit */
    FILE *log;
    int log_is_stdout;
    int progress;
    int failed; /* a fatal write error was reported */
    /* errors by cause, for the summary (kept in the state's meta with --state) */
    struct {
        char what[ERROR_CAUSE_SIZE];
        uint64_t n;
    } causes[ERROR_CAUSES_MAX];
    size_t n_causes;
    uint64_t causes_other;
    char first_error[400]; /* "URL: error" of this run's first error */
    uint64_t warc_records;
    struct cli_crawl_report *report; /* --report: every page decided, for the report */
    int report_failed;
    uint64_t commits; /* state commits of this run (the --verbose summary) */
};

static void iso_date(int64_t t, char out[24])
{
    time_t tt = (time_t)t;
    struct tm tm;
    gmtime_r(&tt, &tm);
    strftime(out, 24, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Links of the page with their priorities; none when meta robots nofollow. */
static int add_links(struct run *run, const struct extract_doc *doc, double page_rel,
                     struct crawl_verdict *v)
{
    if (extract_doc_nofollow(doc))
        return 0;
    size_t n = extract_doc_link_count(doc);
    for (size_t i = 0; i < n; i++) {
        const struct extract_link *l = extract_doc_link(doc, i);
        if (l->nofollow)
            continue;
        float prio = 0;
        if (run->focused) {
            /* the anchor text and the words of the URL (asyncio-task.html says asyncio) */
            size_t al = strlen(l->anchor), ul = strlen(l->url);
            char *both = malloc(al + ul + 2);
            if (!both)
                return -1;
            memcpy(both, l->anchor, al);
            both[al] = ' ';
            memcpy(both + al + 1, l->url, ul + 1);
            for (char *p = both + al + 1; *p; p++)
                if (*p == '/' || *p == '.' || *p == '-' || *p == '_' || *p == '?' || *p == '=' ||
                    *p == '&' || *p == ':')
                    *p = ' ';
            double a = text_relevance(&run->topic, both, al + ul + 1);
            free(both);
            prio = (float)(LINK_PAGE_WEIGHT * page_rel + LINK_ANCHOR_WEIGHT * a);
        }
        if (crawl_verdict_add_link(v, l->url, prio) != CRAWL_OK)
            return -1;
    }
    return 0;
}

/* Builds page's WARC record into *prep (no lock held; record() writes it): a revisit of the
 * record ref_id (with its URI and date) when ref_id is given, else the response (its record
 * id rec_id when not NULL: --redis chose it before). Returns 0, or -1 with the first failure
 * of the run said once. */
static int prepare_page_record(struct run *run, const struct crawl_page *page, const char *date,
                               const char *digest, const char *ref_id, const char *ref_uri,
                               const char *ref_date, const char *rec_id,
                               struct crawl_warc_prepared **prep)
{
    enum crawl_code wc;
    if (ref_id) {
        struct crawl_warc_revisit rv = {.uri = page->url,
                                        .ip = *page->ip ? page->ip : NULL,
                                        .date = date,
                                        .head = page->head,
                                        .head_len = page->head_len,
                                        .payload_digest = digest,
                                        .refers_to = ref_id,
                                        .refers_to_uri = ref_uri,
                                        .refers_to_date = ref_date};
        wc = crawl_warc_prepare_revisit(run->warc, &rv, prep);
    } else {
        struct crawl_warc_exchange x = {.uri = page->url,
                                        .ip = *page->ip ? page->ip : NULL,
                                        .date = date,
                                        .request = page->request,
                                        .request_len = page->request_len,
                                        .head = page->head,
                                        .head_len = page->head_len,
                                        .body = page->raw_body,
                                        .body_len = page->raw_len,
                                        .payload_digest = digest,
                                        .record_id = rec_id};
        wc = crawl_warc_prepare_response(run->warc, &x, prep);
    }
    if (wc == CRAWL_OK)
        return 0;
    if (!run->failed) {
        run->failed = 1;
        cli_error(CMD, "cannot write the WARC: %s", crawl_strerror(wc));
    }
    return -1;
}

/* What deciding a page came to, for its records and its log line. */
enum page_write { W_NONE, W_RESPONSE, W_REVISIT };
struct page_decision {
    enum page_write write;           /* the WARC record it gets */
    char ref_id[CRAWL_WARC_ID_SIZE]; /* W_REVISIT: the original's record id, URI (owned) */
    char ref_date[24];               /* and date */
    char *ref_uri;
    char rec_id[CRAWL_WARC_ID_SIZE]; /* --redis, W_RESPONSE: the response's record id and */
    char rec_date[24];               /* date, chosen before the decision ("": a new id) */
    double jaccard;                  /* minhash, a near-duplicate: the Jaccard estimate; -1 */
    int learned; /* a near-duplicate whose template blocks were counted (LEARN_NEAR) */
};

/* ---- --redis: revisits and site templates shared by the workers ---- */

/*
 * HOW IT WORKS (--redis). A page's payload digest is stored in the shared index with the
 * reference of its capture, "RECORD-ID\nDATE\nURI" (the response's WARC-Record-ID chosen
 * before the decision, crawl_warc_new_record_id()), in the same transaction that decides
 * the page new (redisidx_check(); redisidx_payload_claim() for a payload without a
 * fingerprint: a page with too little text, a requisite): HSETNX, so the first capture's
 * stays. An exact duplicate decided by any worker gets that reference back and is archived
 * as a revisit of the record in the other worker's WARC. A page fetched again after a kill
 * (its record cut off with its uncommitted group) finds its own reference (its URI) and
 * writes its response again with the same record id and date, so that a revisit another
 * worker wrote meanwhile still points at a record that exists. Site templates: the
 * pipeline's mark callback reads the host's block counts from Redis (shared_mark) and a
 * page added to the index counts its blocks in the same transaction (the counting rule of
 * dedup_templates_add_doc(), redisidx.c's LEARN_LUA); pages not fingerprinted count theirs
 * as the single crawl does (FILTER_DECIDE_LEARN_SHORT, _LEARN_UNFP): shared_learn.
 */

/* Says the shared index's failure, once. */
static void shared_index_failed(struct run *run)
{
    if (!run->failed) {
        run->failed = 1;
        cli_error(CMD, "the shared index: %s", redisidx_errmsg(run->ridx));
    }
}

/* The reference of page's capture, its record id and date chosen now into pd (caller
 * frees; *len its bytes); NULL when out of memory or without randomness (said). */
static char *shared_meta_new(struct run *run, const struct crawl_page *page,
                             struct page_decision *pd, size_t *len)
{
    if (crawl_warc_new_record_id(pd->rec_id) != CRAWL_OK) {
        if (!run->failed) {
            run->failed = 1;
            cli_error(CMD, "cannot make a WARC record id: no randomness");
        }
        return NULL;
    }
    iso_date(page->date, pd->rec_date);
    size_t n = strlen(pd->rec_id) + strlen(pd->rec_date) + strlen(page->url) + 3;
    char *m = malloc(n);
    if (m)
        *len = (size_t)snprintf(m, n, "%s\n%s\n%s", pd->rec_id, pd->rec_date, page->url);
    return m;
}

/*
 * The reference stored with a payload, meta[0..len), applied: a page's own capture (its
 * URI is url: decided before a kill, or by an attempt whose reply was lost) is written
 * again as that capture (pd's rec_id and rec_date); another page's makes url a revisit of
 * it, unless own_only (then nothing). 0, -1 when out of memory, 1 a reference that does
 * not parse (no revisit).
 */
static int shared_meta_apply(const char *meta, size_t len, const char *url, int own_only,
                             struct crawl_verdict *v, struct page_decision *pd)
{
    const char *a = memchr(meta, '\n', len);
    const char *b = a ? memchr(a + 1, '\n', len - (size_t)(a + 1 - meta)) : NULL;
    if (!b || (size_t)(a - meta) >= CRAWL_WARC_ID_SIZE || (size_t)(b - a - 1) >= 24 ||
        b + 1 == meta + len)
        return 1;
    const char *uri = b + 1;
    size_t ul = len - (size_t)(uri - meta);
    if (ul == strlen(url) && memcmp(uri, url, ul) == 0) {
        snprintf(pd->rec_id, sizeof pd->rec_id, "%.*s", (int)(a - meta), meta);
        snprintf(pd->rec_date, sizeof pd->rec_date, "%.*s", (int)(b - a - 1), a + 1);
        return 0;
    }
    if (own_only)
        return 0;
    free(pd->ref_uri);
    if (!(pd->ref_uri = strndup(uri, ul)))
        return -1;
    snprintf(pd->ref_id, sizeof pd->ref_id, "%.*s", (int)(a - meta), meta);
    snprintf(pd->ref_date, sizeof pd->ref_date, "%.*s", (int)(b - a - 1), a + 1);
    v->decision = CRAWL_DECISION_EXACT_DUPLICATE;
    v->expand = 0;
    v->distance = 0;
    pd->write = W_REVISIT;
    return crawl_verdict_set(&v->duplicate_of, pd->ref_uri) == CRAWL_OK ? 0 : -1;
}

/*
 * The shared index's answer r for the page at url, into v and pd: an exact duplicate with
 * a reference is a revisit of it (its own capture, decided before a kill: archived again);
 * one without (a page indexed without references, e.g. by a library caller) and a near
 * duplicate are logged, not archived; new, or known by its URL (decided new before a kill:
 * its capture again), a response. 0, or -1 out of memory.
 */
static int shared_apply(const struct redisidx_result *r, const char *url, struct crawl_verdict *v,
                        struct page_decision *pd)
{
    int a = 1;
    if (r->verdict == REDISIDX_EXACT && r->meta_len &&
        (a = shared_meta_apply(r->meta, r->meta_len, url, 0, v, pd)) <= 0) {
        if (a < 0) /* out of memory */
            return -1;
        if (pd->write != W_REVISIT) { /* its own capture: archived again */
            v->decision = CRAWL_DECISION_NEW;
            pd->write = W_RESPONSE;
        }
    } else if (r->verdict == REDISIDX_NEAR || r->verdict == REDISIDX_EXACT) {
        /* a duplicate without a reference (an index filled without them): logged */
        v->decision = r->verdict == REDISIDX_NEAR ? CRAWL_DECISION_NEAR_DUPLICATE
                                                  : CRAWL_DECISION_EXACT_DUPLICATE;
        v->expand = 0;
        v->distance = r->verdict == REDISIDX_NEAR ? (int)r->distance : 0;
        pd->write = W_NONE;
        if (crawl_verdict_set(&v->duplicate_of, r->dup_id ? r->dup_id : "") != CRAWL_OK)
            return -1;
    } else { /* NEW, or KNOWN_ID: decided new before a kill (its capture again) */
        v->decision = CRAWL_DECISION_NEW;
        pd->write = W_RESPONSE;
        if (r->verdict == REDISIDX_KNOWN_ID &&
            shared_meta_apply(r->meta, r->meta_len, url, 1, v, pd) < 0)
            return -1;
    }
    return 0;
}

/* A payload without a fingerprint (--redis), claimed by the page's URL: new (its
 * reference stored), its own claim or capture again (a kill), or an exact duplicate of
 * the capture whose reference is stored (shared_apply). 0, or -1 after saying why. */
static int shared_claim(struct run *run, const struct crawl_page *page, const char *digest,
                        struct crawl_verdict *v, struct page_decision *pd)
{
    size_t len = 0;
    char *meta = shared_meta_new(run, page, pd, &len);
    if (!meta)
        return -1;
    struct redisidx_result r = {0};
    int rc = 0;
    if (redisidx_payload_claim(run->ridx, page->url, strlen(page->url), digest, strlen(digest),
                               meta, len, &r) != REDISIDX_OK) {
        shared_index_failed(run);
        rc = -1;
    } else {
        rc = shared_apply(&r, page->url, v, pd);
    }
    redisidx_result_release(&r);
    free(meta);
    return rc;
}

/* The template blocks of a near-duplicate, counted as the single crawl counts them
 * (FILTER_DECIDE_LEARN_NEAR: while its host is young, unless an exact copy of a document
 * counted), the young check in the script that counts. Idempotent by the document's hash:
 * a page decided again after a kill counts once. 0, or -1. */
static int shared_learn_near(struct run *run, const struct filter_decide_page *dp)
{
    if (!run->templates || !dp->n_blocks)
        return 0;
    if (redisidx_template_learn_young(run->ridx, dp->host, dp->host_len, dp->doc_hash, dp->blocks,
                                      dp->n_blocks, DEDUP_TEMPLATE_YOUNG_DOCS) == REDISIDX_OK)
        return 0;
    shared_index_failed(run);
    return -1;
}

/* The template blocks of a page not fingerprinted, counted as the single crawl counts them
 * (one with too little text always, any other unless an exact duplicate). 0, or -1. */
static int shared_learn(struct run *run, const struct filter_decide_page *dp,
                        const struct crawl_verdict *v)
{
    if (!run->templates || !dp->n_blocks ||
        (!dp->too_little_text && v->decision == CRAWL_DECISION_EXACT_DUPLICATE))
        return 0;
    if (redisidx_template_learn(run->ridx, dp->host, dp->host_len, dp->doc_hash, dp->blocks,
                                dp->n_blocks) == REDISIDX_OK)
        return 0;
    shared_index_failed(run);
    return -1;
}

/* The pipeline's template marks from the counts in Redis (a filter_template_mark_fn;
 * userdata a struct shared_mark, whose failed says an error, said). */
struct shared_mark {
    struct run *run;
    int failed;
};

static size_t shared_mark(void *userdata, const char *host, size_t host_len, const uint64_t *blocks,
                          const uint32_t *n_tokens, size_t n, unsigned char *is_template)
{
    struct shared_mark *m = userdata;
    size_t marked = 0;
    if (redisidx_template_mark(m->run->ridx, host, host_len, blocks, n_tokens, n, is_template,
                               &marked) != REDISIDX_OK) {
        m->failed = 1;
        shared_index_failed(m->run);
    }
    return marked;
}

/*
 * A page requisite (--page-requisites): not extracted or fingerprinted; archived once by
 * its payload digest, as pages are (filter_decide_page with the digest only: a payload
 * archived before, page or requisite, makes it an exact duplicate, a revisit record); a
 * stylesheet's own requisites (url(), @import) are handed back to the crawler.
 */
static int process_requisite(struct run *run, const struct crawl_page *page,
                             struct crawl_verdict *v)
{
    char digest[CRAWL_DIGEST_SIZE], date[24], ref_id[CRAWL_WARC_ID_SIZE] = "";
    char ref_date[24] = "";
    char *ref_uri = NULL;
    size_t meta_len = 0;
    int rc = 0;
    v->expand = 0;
    iso_date(page->date, date);
    struct kept_meta *meta = kept_meta_new("", date, page->url, &meta_len);
    struct page_out *po = calloc(1, sizeof *po);
    if (!meta || !po || crawl_digest_sha1(page->raw_body, page->raw_len, digest) != CRAWL_OK)
        goto oom;
    struct filter_decide_page dp = {.id = page->url,
                                    .id_len = strlen(page->url),
                                    .key = digest,
                                    .key_len = strlen(digest),
                                    .meta = meta,
                                    .meta_len = meta_len,
                                    .flags = FILTER_DECIDE_REMEMBER_UNFP};
    struct filter_decide_result dr = {0};
    struct page_decision pd = {.write = W_NONE};
    if (run->ridx) { /* --redis: the payloads of every worker */
        if (shared_claim(run, page, digest, v, &pd) != 0)
            rc = -1;
        snprintf(ref_id, sizeof ref_id, "%s", pd.ref_id);
        snprintf(ref_date, sizeof ref_date, "%s", pd.ref_date);
        ref_uri = pd.ref_uri;
    } else if (filter_decide_page(run->decide, &dp, &dr) != 0) {
        filter_decide_result_release(&dr);
        goto oom;
    }
    int exact = run->ridx ? pd.write == W_REVISIT : dr.verdict == FILTER_VERDICT_EXACT;
    if (cli_digests_stored(&run->digests, dr.stored) != 0)
        rc = -1;
    if (exact && !run->ridx) {
        const struct kept_meta *k = dr.meta;
        v->decision = CRAWL_DECISION_EXACT_DUPLICATE;
        v->distance = 0;
        snprintf(ref_id, sizeof ref_id, "%s", k->id);
        snprintf(ref_date, sizeof ref_date, "%s", k->date);
        if (crawl_verdict_set(&v->duplicate_of, k->uri) != CRAWL_OK || !(ref_uri = strdup(k->uri)))
            rc = -1;
    }
    filter_decide_result_release(&dr);
    if (rc == 0 && run->warc &&
        prepare_page_record(run, page, *pd.rec_date ? pd.rec_date : date, digest,
                            exact ? ref_id : NULL, ref_uri, ref_date, *pd.rec_id ? pd.rec_id : NULL,
                            &po->prep) != 0)
        rc = -1;
    if (rc == 0 && !exact) { /* its revisits refer to this record; resumes replay the digest */
        snprintf(po->digest, sizeof po->digest, "%s", digest);
        po->meta = meta;
        po->meta_len = meta_len;
        meta = NULL;
        if (run->state && page_blob_encode(&dp, 0, po) != 0) /* no signature */
            rc = -1;
    }
    const char *ct = page->content_type ? page->content_type : "";
    if (rc == 0 && !exact && strncasecmp(ct, "text/css", 8) == 0 &&
        cli_css_requisites(page->body, page->body_len, page->url, v) != 0)
        rc = -1;
    v->page_data = po;
    free(ref_uri);
    free(meta);
    if (rc != 0 && !run->failed) {
        run->failed = 1;
        cli_error(CMD, "out of memory processing %s", page->url);
    }
    return rc;
oom:
    free(meta);
    free(po);
    if (!run->failed) {
        run->failed = 1;
        cli_error(CMD, "out of memory processing %s", page->url);
    }
    return -1;
}

/* With --state (not --redis), the page's main text packed into po for the state, where
 * the report of a resumed crawl and `clusters STATE_DIR` find it (record_report). Packed
 * here on the worker thread, not on the loop thread that stores it. 0, or -1 out of memory. */
static int page_state_text(const struct run *run, const char *text, size_t len, struct page_out *po)
{
    if (!run->state || crawl_state_redis(run->state))
        return 0;
    return crawl_text_pack(text, len, &po->ztext) == CRAWL_OK ? 0 : -1;
}

/* The page's title, and with --report its main text, into po (with --state also the text
 * packed). 0, or -1 out of memory. */
static int page_out_texts(const struct run *run, const struct extract_doc *doc, struct page_out *po)
{
    const char *title = extract_doc_title(doc);
    if (*title && !(po->title = strdup(title)))
        return -1;
    size_t len = 0;
    const char *text = extract_doc_text(doc, &len);
    if (len > CLI_CRAWL_REPORT_MAX_TEXT)
        len = CLI_CRAWL_REPORT_MAX_TEXT;
    if (run->report) {
        if (!(po->text = malloc(len + 1)))
            return -1;
        memcpy(po->text, text, len);
        po->text[len] = '\0';
        po->text_len = len;
    }
    return page_state_text(run, text, len, po);
}

/* --method minhash: the signature of the page's token string (after its template
 * blocks) into sig. 0, or -1 with the verdict's error set (the page is then not
 * fingerprinted: archived as new, never a near-duplicate), -2 out of memory. */
static int page_signature(struct run *run, const struct filter_fp_result *res, uint32_t *sig,
                          struct crawl_verdict *v)
{
    enum dedup_code sc = res->tokens
                             ? dedup_minhash_signature(dedup_lsh_minhash(run->lsh), res->tokens,
                                                       res->tokens_len, sig, NULL)
                             : DEDUP_EINVAL;
    if (sc == DEDUP_OK)
        return 0;
    char msg[100];
    snprintf(msg, sizeof msg, "no MinHash signature: %s", dedup_strerror(sc));
    v->has_fingerprint = 0;
    return crawl_verdict_set(&v->error, msg) == CRAWL_OK ? -1 : -2;
}

/*
 * --redis: the decision of the index shared by every worker (filter/redisidx.h): atomic
 * across workers (of two near-duplicates checked at once, one is new), idempotent by URL
 * (a page fetched again after a kill gets its own decision back: KNOWN_ID, new, written
 * again as the capture stored then). An exact duplicate is a revisit of the capture whose
 * reference the index keeps (HOW IT WORKS above); a page new here counts its template
 * blocks in the same transaction. 0, or -1 after saying why.
 */
static int shared_decide(struct run *run, const struct crawl_page *page,
                         const struct filter_decide_page *dp, const char *digest,
                         struct crawl_verdict *v, struct page_decision *pd)
{
    size_t meta_len = 0;
    char *meta = shared_meta_new(run, page, pd, &meta_len);
    if (!meta)
        return -1;
    struct redisidx_page p = {.id = page->url,
                              .id_len = strlen(page->url),
                              .fp = dp->fp,
                              .key = digest,
                              .key_len = strlen(digest),
                              .meta = meta,
                              .meta_len = meta_len,
                              .host = dp->host,
                              .host_len = dp->host_len,
                              .doc_hash = dp->doc_hash,
                              .blocks = dp->blocks,
                              .n_blocks = dp->n_blocks};
    struct redisidx_result r = {0};
    int rc = 0;
    if (redisidx_check(run->ridx, &p, &r) != REDISIDX_OK) {
        shared_index_failed(run);
        rc = -1;
    } else {
        rc = shared_apply(&r, page->url, v, pd);
    }
    redisidx_result_release(&r);
    free(meta);
    return rc;
}

/*
 * process()'s decision step: the decision (filter_decide_page, under the decision's write lock,
 * short; or the index shared by --redis workers when shared) and the verdict it gives:
 * noindex (filtered), exact duplicate (a revisit of the archived original), near
 * duplicate, or new (a response record). 0, or -1 when out of memory.
 */
static int decide_step(struct run *run, const struct crawl_page *page,
                       const struct filter_decide_page *dp, const char *digest, int shared,
                       struct crawl_verdict *v, struct page_decision *pd)
{
    struct filter_decide_result dr = {0};
    int rc = 0;
    if (shared) {
        if (shared_decide(run, page, dp, digest, v, pd) != 0 ||
            (v->decision == CRAWL_DECISION_NEAR_DUPLICATE && shared_learn_near(run, dp) != 0))
            rc = -1;
    } else if (run->ridx && dp->key && !(dp->flags & FILTER_DECIDE_NOINDEX)) { /* no fp */
        if (shared_claim(run, page, digest, v, pd) != 0 || shared_learn(run, dp, v) != 0)
            rc = -1;
    } else if (filter_decide_page(run->decide, dp, &dr) != 0) {
        rc = -1;
    } else if (dr.verdict == FILTER_VERDICT_NOINDEX) {
        v->decision = CRAWL_DECISION_FILTERED;
        if (crawl_verdict_set(&v->error, "meta robots noindex: not archived") != CRAWL_OK)
            rc = -1;
    } else if (dr.verdict == FILTER_VERDICT_EXACT) {
        const struct kept_meta *k = dr.meta;
        v->decision = CRAWL_DECISION_EXACT_DUPLICATE;
        v->expand = 0;
        v->distance = run->lsh ? -1 : 0; /* minhash: "similarity" 1 instead (record()) */
        if (crawl_verdict_set(&v->duplicate_of, k->uri) != CRAWL_OK)
            rc = -1;
        pd->ref_uri = strdup(k->uri);
        if (!pd->ref_uri)
            rc = -1;
        snprintf(pd->ref_id, sizeof pd->ref_id, "%s", k->id);
        snprintf(pd->ref_date, sizeof pd->ref_date, "%s", k->date);
        pd->write = W_REVISIT;
    } else if (dr.verdict == FILTER_VERDICT_NEAR) {
        v->decision = CRAWL_DECISION_NEAR_DUPLICATE;
        v->expand = 0;
        v->distance = run->lsh ? -1 : (int)dr.distance;
        pd->jaccard = run->lsh ? dr.jaccard : -1;
        pd->learned = dr.learned;
        if (crawl_verdict_set(&v->duplicate_of, dr.dup_id) != CRAWL_OK)
            rc = -1;
    } else { /* new, or not fingerprinted */
        v->decision = CRAWL_DECISION_NEW;
        if (dr.add_code != DEDUP_OK)
            rc = -1;
        pd->write = W_RESPONSE;
    }
    if (rc == 0 && dr.template_code == DEDUP_ENOMEM)
        rc = -1;
    if (cli_digests_stored(&run->digests, dr.stored) != 0)
        rc = -1;
    filter_decide_result_release(&dr);
    return rc;
}

/* What the steps of process() share about one page: its parse and fingerprint, the
 * facts the decision is made on, the decision, and the records' parts. */
struct page_work {
    const struct crawl_page *page;
    char host[DEDUP_TEMPLATE_MAX_KEY + 1]; /* the template key (run->templates) */
    struct filter_fp_result res;
    struct extract_doc *doc;           /* taken from res: the text, the links */
    int fp_ok;                         /* fingerprinted (and with --method minhash signed) */
    int mark_failed;                   /* --redis: the template counts could not be read */
    double page_rel;                   /* --topic: the page's relevance */
    uint32_t sig[DEDUP_MINHASH_H_MAX]; /* --method minhash: the page's signature */
    char digest[CRAWL_DIGEST_SIZE];    /* the payload's SHA-1, as WARC-Payload-Digest */
    int noindex;                       /* meta robots noindex */
    char date[24];                     /* the capture date (ISO 8601) */
    struct kept_meta *meta;            /* what the decision keeps with the digest */
    size_t meta_len;
    struct filter_decide_page dp; /* the decision's input */
    struct page_decision pd;      /* and what it came to */
};

/* The page parsed once and fingerprinted (filter_fingerprint_page; templates learned as
 * pages arrive, docs/FINGERPRINT.md "Template blocks"), the document kept for its links
 * also when its main text is too short to fingerprint (an index page). Returns whether it
 * was fingerprinted; w->doc NULL when it is not a page. */
static int page_parse(struct run *run, struct page_work *w)
{
    const struct crawl_page *page = w->page;
    struct filter_fp_opts fo = {0};
    fo.keep_doc = 1;
    fo.keep_tokens = run->focused || run->lsh; /* the topic's, the signature's input */
    fo.max_depth = run->o->max_nesting;
    fo.max_links = run->o->co.max_links;
    struct shared_mark sm = {.run = run};
    if (run->templates) {
        filter_url_host_key(page->url, w->host);
        fo.host = w->host;
        fo.mark = filter_decide_mark; /* under the decision's read lock */
        fo.mark_userdata = run->decide;
        if (run->ridx) { /* --redis: the counts of every worker */
            fo.mark = shared_mark;
            fo.mark_userdata = &sm;
        }
        fo.keep_blocks = 1;
    }
    int ok = filter_fingerprint_page(page->body, page->body_len, page->content_type, page->url, &fo,
                                     &w->res) == 0;
    w->doc = w->res.doc;
    w->res.doc = NULL;
    w->mark_failed = sm.failed;
    return ok;
}

/* The verdict of what is not a page (the parser's words why). 0, or -1 out of memory. */
static int not_a_page(struct crawl_verdict *v, const char *why)
{
    char msg[VERDICT_MESSAGE_MAX];
    v->decision = CRAWL_DECISION_FILTERED;
    v->expand = 0;
    snprintf(msg, sizeof msg, "not a page: %s", why);
    return crawl_verdict_set(&v->error, msg) == CRAWL_OK ? 0 : -1;
}

/* What the page's parse says in its verdict (caps that cut it, not fingerprinted and
 * why, the canonical URL, the relevance, the fingerprint, the signature) and the payload
 * digest. 0, or -1 out of memory. */
static int page_facts(struct run *run, struct page_work *w, struct crawl_verdict *v)
{
    int rc = 0;
    /* a cap cut the page: one line on stderr and the log's "truncated" field */
    unsigned cut = cli_warn_cuts(CMD, w->page->url, w->doc, "--max-nesting");
    if (cut & EXTRACT_CUT_LINKS)
        crawl_verdict_truncated(v, "links");
    if (cut & EXTRACT_CUT_DEPTH)
        crawl_verdict_truncated(v, "depth");
    if (!w->fp_ok) {
        char msg[VERDICT_MESSAGE_MAX];
        snprintf(msg, sizeof msg, "not fingerprinted: %s", w->res.message);
        if (crawl_verdict_set(&v->error, msg) != CRAWL_OK)
            rc = -1;
    }
    const char *canon = extract_doc_canonical(w->doc);
    if (*canon && crawl_verdict_set(&v->canonical, canon) != CRAWL_OK)
        rc = -1;
    if (run->focused) {
        w->page_rel = w->res.tokens ? topic_cosine(&run->topic, w->res.tokens, w->res.n_tokens) : 0;
        v->relevance = w->page_rel;
    }
    if (w->fp_ok) {
        v->has_fingerprint = 1;
        v->fingerprint = w->res.fingerprint;
    }
    int sr = w->fp_ok && run->lsh ? page_signature(run, &w->res, w->sig, v) : 0;
    if (sr != 0)
        w->fp_ok = 0;
    if (sr < -1)
        rc = -1;
    if (crawl_digest_sha1(w->page->raw_body, w->page->raw_len, w->digest) != CRAWL_OK)
        rc = -1;
    w->noindex = extract_doc_noindex(w->doc) != 0;
    return rc;
}

/* The decision's input for the page (filter/decide.h) into w->dp: its URL, payload digest
 * with the kept_meta of its revisits (none when rc says a step failed: no exact lookup,
 * nothing kept), fingerprint or signature, template blocks, flags. Returns rc, or -1 out
 * of memory. */
static int page_decide_input(struct run *run, struct page_work *w, int rc)
{
    const struct crawl_page *page = w->page;
    struct filter_decide_page *dp = &w->dp;
    iso_date(page->date, w->date);
    w->meta = kept_meta_new("", w->date, page->url, &w->meta_len);
    if (!w->meta)
        rc = -1;
    dp->id = page->url;
    dp->id_len = strlen(page->url);
    if (rc == 0) {
        dp->key = w->digest;
        dp->key_len = strlen(w->digest);
        dp->meta = w->meta;
        dp->meta_len = w->meta_len;
    }
    dp->has_fp = w->fp_ok;
    dp->fp = w->res.fingerprint;
    dp->sig = run->lsh ? w->sig : NULL;
    dp->too_little_text = !w->fp_ok && filter_fp_result_too_little_text(&w->res);
    if (run->templates) {
        dp->host = w->host;
        dp->host_len = strlen(w->host);
        dp->doc_hash = w->res.doc_hash;
        dp->blocks = w->res.blocks;
        dp->n_blocks = w->res.n_blocks;
    }
    /* noindex pages are not looked up; a page not fingerprinted is new unless its payload
     * was archived, and its digest is kept; template blocks are learned from new pages
     * (also those not fingerprinted), those with too little text (never a duplicate by
     * their text) and near-duplicates on a young host (docs/FINGERPRINT.md, "Where T comes
     * from") */
    dp->flags = (w->noindex ? FILTER_DECIDE_NOINDEX : 0) | FILTER_DECIDE_REMEMBER_UNFP |
                FILTER_DECIDE_LEARN_SHORT | FILTER_DECIDE_LEARN_UNFP | FILTER_DECIDE_LEARN_NEAR;
    return rc;
}

/*
 * What the page hands to record() as its page_data: the WARC record built here (ids,
 * digests, gzip: no lock held) and written by record() on the loop thread, in the order
 * the crawl commits its state, so that the WARC's committed offset is the end of the
 * committed pages' records (--state); the kept_meta its revisits will refer to; with
 * --state its decision record; the title and text; the Jaccard estimate. 0, or -1 out of
 * memory or a WARC failure (said).
 */
static int page_out_build(struct run *run, struct page_work *w, struct crawl_verdict *v)
{
    const struct page_decision *pd = &w->pd;
    int want_blob = run->state && !run->ridx &&
                    (v->decision == CRAWL_DECISION_NEW ||
                     (v->decision == CRAWL_DECISION_NEAR_DUPLICATE && pd->learned));
    int rc = 0;
    struct page_out *po = calloc(1, sizeof *po);
    if (!po)
        return -1;
    if (run->warc && (pd->write == W_REVISIT || pd->write == W_RESPONSE) &&
        prepare_page_record(run, w->page, *pd->rec_date ? pd->rec_date : w->date, w->digest,
                            pd->write == W_REVISIT ? pd->ref_id : NULL, pd->ref_uri, pd->ref_date,
                            *pd->rec_id ? pd->rec_id : NULL, &po->prep) != 0)
        rc = -1;
    if (rc == 0 && pd->write == W_RESPONSE) { /* its revisits refer to this record */
        snprintf(po->digest, sizeof po->digest, "%s", w->digest);
        po->meta = w->meta;
        po->meta_len = w->meta_len;
        w->meta = NULL;
    }
    po->near = v->decision == CRAWL_DECISION_NEAR_DUPLICATE;
    if (rc == 0 && want_blob &&
        page_blob_encode(&w->dp, run->lsh ? dedup_lsh_get_params(run->lsh)->h : 0, po) != 0)
        rc = -1;
    if (rc == 0 && page_out_texts(run, w->doc, po) != 0)
        rc = -1;
    po->jaccard = pd->jaccard;
    v->page_data = po;
    return rc;
}

/* The page's links handed to the crawler (counted, not enqueued, for duplicates) and
 * with --page-requisites a new page's requisites. 0, or -1 out of memory. */
static int page_expand(struct run *run, const struct page_work *w, struct crawl_verdict *v)
{
    if (v->decision != CRAWL_DECISION_NEW && v->decision != CRAWL_DECISION_FILTERED &&
        v->decision != CRAWL_DECISION_NEAR_DUPLICATE)
        return 0;
    if (add_links(run, w->doc, w->page_rel, v) != 0)
        return -1;
    if (run->o->page_requisites && v->decision == CRAWL_DECISION_NEW &&
        cli_html_requisites(w->page->body, w->page->body_len, w->page->url, v) != 0)
        return -1;
    return 0;
}

/* crawl_opts.process, on a worker thread: a fetched page parsed, fingerprinted, decided
 * and its records built. 0, or -1 out of memory or a write failure (said once). */
static int process(void *userdata, const struct crawl_page *page, struct crawl_verdict *v)
{
    struct run *run = userdata;
    if (page->requisite)
        return process_requisite(run, page, v);
    struct page_work w = {.page = page, .pd = {.write = W_NONE, .jaccard = -1}};
    w.fp_ok = page_parse(run, &w);
    int rc;
    if (!w.doc) {
        rc = not_a_page(v, w.res.message);
        filter_fp_result_release(&w.res);
        return rc;
    }
    rc = page_facts(run, &w, v);
    if (w.mark_failed) /* said */
        rc = -1;
    /* Decide (filter_decide_page: under the decision's write lock, short); build the WARC
     * records (gzip, SHA-1) with no lock held and only append them under run->warc_lock,
     * so that one page's compression holds up neither the lookups nor the writes of the
     * others. */
    rc = page_decide_input(run, &w, rc);
    if (decide_step(run, page, &w.dp, w.digest, run->ridx && w.fp_ok && !w.noindex && w.dp.key, v,
                    &w.pd) != 0)
        rc = -1;
    if (rc == 0) /* the title (log, report) and the jaccard (log) at least */
        rc = page_out_build(run, &w, v);
    free(w.pd.ref_uri);
    free(w.meta);
    if (rc != 0 && !run->failed) {
        run->failed = 1;
        cli_error(CMD, "out of memory processing %s", page->url);
    }
    /* --min-relevance: off-topic pages (not the seeds) are not expanded */
    if (run->focused && page->depth > 0 && w.page_rel < run->o->min_relevance)
        v->expand = 0;
    if (rc == 0)
        rc = page_expand(run, &w, v);
    extract_doc_free(w.doc);
    filter_fp_result_release(&w.res);
    return rc;
}

/* Before each commit of the state (the loop thread): the WARC and the log written out,
 * their ends put in meta, committed with the pages whose records they end with. */
static int before_commit(void *userdata)
{
    struct run *run = userdata;
    if (run->failed)
        return -1;
    if (run->warc) {
        struct crawl_warc_position pos;
        enum crawl_code wc = crawl_warc_writer_flush(run->warc, run->durable, &pos);
        if (wc != CRAWL_OK) {
            run->failed = 1;
            cli_error(CMD, "cannot write the WARC: %s", crawl_warc_writer_error(run->warc));
            return -1;
        }
        if (crawl_state_set_meta_int(run->state, "warc.seq", pos.seq) != CRAWL_OK ||
            crawl_state_set_meta_int(run->state, "warc.offset", (int64_t)pos.offset) != CRAWL_OK ||
            crawl_state_set_meta_int(run->state, "warc.records", (int64_t)pos.records) !=
                CRAWL_OK ||
            crawl_state_set_meta_text(run->state, "warc.info_id", pos.warcinfo_id) != CRAWL_OK)
            goto fail;
    }
    if (run->log && !run->log_is_stdout) {
        if (fflush(run->log) != 0 || (run->durable && fdatasync(fileno(run->log)) != 0)) {
            run->failed = 1;
            cli_error(CMD, "cannot write log %s: %s", run->o->log, strerror(errno));
            return -1;
        }
        off_t off = ftello(run->log);
        if (off < 0 || crawl_state_set_meta_int(run->state, "log.offset", (int64_t)off) != CRAWL_OK)
            goto fail;
    }
    char *ct = causes_text(run);
    if (!ct || crawl_state_set_meta_text(run->state, "errors.causes", ct) != CRAWL_OK) {
        free(ct);
        goto fail;
    }
    free(ct);
    dedup_crash_point("crawl-before-commit");
    run->commits++;
    return 0;
fail:
    run->failed = 1;
    cli_error(CMD, "cannot write the state: %s", crawl_state_error(run->state));
    return -1;
}

/* A page's records in the WARC and its decision record in the state, in log order. */
static void write_page(struct run *run, struct page_out *po)
{
    char id[CRAWL_WARC_ID_SIZE] = "";
    if (po->prep && !run->failed) {
        pthread_mutex_lock(&run->warc_lock);
        enum crawl_code wc = crawl_warc_prepared_append(run->warc, po->prep, id);
        if (wc == CRAWL_OK)
            run->warc_records++;
        pthread_mutex_unlock(&run->warc_lock);
        if (wc != CRAWL_OK) {
            run->failed = 1;
            cli_error(CMD, "cannot write the WARC: %s",
                      *crawl_warc_writer_error(run->warc) ? crawl_warc_writer_error(run->warc)
                                                          : crawl_strerror(wc));
            return;
        }
        dedup_crash_point("crawl-warc-appended");
    }
    if (po->meta && *id) {
        snprintf(po->meta->id, sizeof po->meta->id, "%s", id);
        (void)filter_decide_set_meta(run->decide, po->digest, strlen(po->digest), po->meta,
                                     po->meta_len);
    }
    if (po->blob && run->state) {
        if (*id && po->meta && po->blob_len >= po->blob_meta_off + CRAWL_WARC_ID_SIZE)
            memcpy(po->blob + po->blob_meta_off, id, CRAWL_WARC_ID_SIZE);
        if (crawl_state_page_add(run->state, po->blob, po->blob_len) != CRAWL_OK && !run->failed) {
            run->failed = 1;
            cli_error(CMD, "cannot write the state: %s", crawl_state_error(run->state));
        }
    }
}

static void count_cause(struct run *run, const char *cause, uint64_t n)
{
    for (size_t i = 0; i < run->n_causes; i++)
        if (strcmp(run->causes[i].what, cause) == 0) {
            run->causes[i].n += n;
            return;
        }
    if (run->n_causes == ERROR_CAUSES_MAX) {
        run->causes_other += n;
        return;
    }
    snprintf(run->causes[run->n_causes].what, sizeof run->causes[0].what, "%s", cause);
    run->causes[run->n_causes++].n = n;
}

/* The causes as "N<TAB>cause" lines (the state's meta "errors.causes"), or back. */
static char *causes_text(const struct run *run)
{
    size_t cap = (ERROR_CAUSES_MAX + 1) * ERROR_CAUSE_LINE, len = 0;
    char *t = malloc(cap);
    if (!t)
        return NULL;
    t[0] = '\0';
    for (size_t i = 0; i < run->n_causes; i++)
        len += (size_t)snprintf(t + len, cap - len, "%llu\t%s\n",
                                (unsigned long long)run->causes[i].n, run->causes[i].what);
    if (run->causes_other)
        snprintf(t + len, cap - len, "%llu\t\n", (unsigned long long)run->causes_other);
    return t;
}

static void causes_load(struct run *run, const char *t)
{
    while (t && *t) {
        char *end;
        unsigned long long n = strtoull(t, &end, 10);
        if (*end != '\t')
            break;
        const char *w = end + 1;
        size_t len = strcspn(w, "\n");
        char what[ERROR_CAUSE_SIZE];
        snprintf(what, sizeof what, "%.*s", (int)len, w);
        if (*what)
            count_cause(run, what, n);
        else
            run->causes_other += n;
        t = w + len + (w[len] == '\n');
    }
}

static json_t *jstr(const char *s)
{
    json_t *j = json_string(s);
    return j ? j : json_stringn("(invalid utf-8)", 15);
}

/* Now as RFC 3339 UTC with milliseconds, "2026-11-26T02:51:07.123Z", into buf. */
static const char *rfc3339_now(char *buf, size_t size)
{
    struct timespec ts;
    struct tm tm;
    clock_gettime(CLOCK_REALTIME, &ts);
    gmtime_r(&ts.tv_sec, &tm);
    size_t n = strftime(buf, size, "%Y-%m-%dT%H:%M:%S", &tm);
    snprintf(buf + n, size - n, ".%03ldZ", ts.tv_nsec / 1000000);
    return buf;
}

/* The report's record of r: in memory with --report, in the state with --state (committed
 * with the page, so that the report of a resumed crawl and `clusters STATE` see it). */
static void record_report(struct run *run, const struct crawl_record *r)
{
    const struct page_out *po = r->page_data;
    if (r->requisite)
        return; /* not a page: archived, never a near-duplicate */
    struct cli_crawl_page p = {.url = r->url,
                               .decision = (int)r->decision,
                               .processed = r->links_found >= 0,
                               .has_fp = r->has_fingerprint,
                               .fp = r->fingerprint,
                               .duplicate_of = r->duplicate_of,
                               .distance = r->distance,
                               .title = po ? po->title : NULL,
                               .text = po ? po->text : NULL,
                               .text_len = po ? po->text_len : 0,
                               .reason = r->error};
    if (run->report && !run->report_failed && cli_crawl_report_add(run->report, &p) != 0)
        run->report_failed = 1; /* said; no report (one short of pages would mislead) */
    int page = r->decision == CRAWL_DECISION_NEW || r->decision == CRAWL_DECISION_ERROR ||
               r->decision == CRAWL_DECISION_NEAR_DUPLICATE ||
               r->decision == CRAWL_DECISION_EXACT_DUPLICATE ||
               (r->decision == CRAWL_DECISION_FILTERED && p.processed);
    if (!run->state || !page || run->failed)
        return;
    unsigned char *blob = NULL;
    size_t len = 0;
    const struct crawl_text *text = /* a page's text, for its word diff (as the report's) */
        r->decision != CRAWL_DECISION_ERROR && r->decision != CRAWL_DECISION_FILTERED && po &&
                po->ztext.z
            ? &po->ztext
            : NULL;
    if (cli_crawl_report_blob(&p, &blob, &len) != 0 ||
        crawl_state_page_add_text(run->state, blob, len, text, CLI_CRAWL_REPORT_STATE_TEXTS) !=
            CRAWL_OK) {
        run->failed = 1;
        cli_error(CMD, "cannot write the state: %s",
                  blob ? crawl_state_error(run->state) : "out of memory");
    }
    free(blob);
}

/* --method minhash: how similar a dropped page is to the page it duplicates, "jaccard"
 * (the signatures' estimate; 1 for an exact duplicate) and "similarity" (the same number,
 * as the service's answer has it), rounded to 4 digits. */
static void log_similarity(const struct run *run, const struct crawl_record *r, json_t *o)
{
    const struct page_out *po = r->page_data;
    double j = -1;
    if (!run->lsh)
        return;
    if (r->decision == CRAWL_DECISION_EXACT_DUPLICATE)
        j = 1;
    else if (r->decision == CRAWL_DECISION_NEAR_DUPLICATE && po)
        j = po->jaccard;
    if (j < 0)
        return;
    j = round(j * 1e4) / 1e4;
    json_object_set_new(o, "jaccard", json_real(j));
    json_object_set_new(o, "similarity", json_real(j));
}

static void record(void *userdata, const struct crawl_record *r)
{
    struct run *run = userdata;
    if (r->page_data)
        write_page(run, r->page_data);
    record_report(run, r);
    if (r->decision == CRAWL_DECISION_ERROR) {
        char cause[ERROR_CAUSE_SIZE];
        error_cause(r->error ? r->error : "error", cause, sizeof cause);
        count_cause(run, *cause ? cause : "error", 1);
        if (!run->first_error[0])
            snprintf(run->first_error, sizeof run->first_error, "%.200s: %.190s", r->url,
                     r->error ? r->error : "error");
    }
    if (!run->log)
        return;
    json_t *o = json_object();
    if (!o)
        return;
    char when[40];
    json_object_set_new(o, "time", json_string(rfc3339_now(when, sizeof when)));
    json_object_set_new(o, "url", jstr(r->url));
    json_object_set_new(o, "status", json_integer(r->status));
    if (r->content_type)
        json_object_set_new(o, "content_type", jstr(r->content_type));
    if (r->size >= 0)
        json_object_set_new(o, "size", json_integer(r->size));
    if (r->referrer)
        json_object_set_new(o, "referrer", jstr(r->referrer));
    json_object_set_new(o, "depth", json_integer(r->depth));
    json_object_set_new(o, "decision", json_string(crawl_decision_name(r->decision)));
    if (r->page_data && ((const struct page_out *)r->page_data)->title)
        json_object_set_new(o, "title", jstr(((const struct page_out *)r->page_data)->title));
    if (r->has_fingerprint) {
        char hex[17];
        snprintf(hex, sizeof hex, "%016llx", (unsigned long long)r->fingerprint);
        json_object_set_new(o, "fingerprint", json_string(hex));
    }
    if (r->duplicate_of)
        json_object_set_new(o, "duplicate_of", jstr(r->duplicate_of));
    if (r->distance >= 0)
        json_object_set_new(o, "distance", json_integer(r->distance));
    log_similarity(run, r, o);
    if (r->links_found >= 0)
        json_object_set_new(o, "links_found", json_integer(r->links_found));
    if (r->links >= 0)
        json_object_set_new(o, "links", json_integer(r->links));
    if (r->error) /* the log: "error" only for errors, "reason" why filtered or disallowed */
        json_object_set_new(o, r->decision == CRAWL_DECISION_ERROR ? "error" : "reason",
                            jstr(r->error));
    if (!isnan(r->relevance))
        json_object_set_new(o, "relevance", json_real(round(r->relevance * 1e4) / 1e4));
    if (r->canonical)
        json_object_set_new(o, "canonical", jstr(r->canonical));
    if (r->location)
        json_object_set_new(o, "location", jstr(r->location));
    if (r->truncated)
        json_object_set_new(o, "truncated", json_string(r->truncated));
    if (r->requisite)
        json_object_set_new(o, "requisite", json_true());
    if (r->requisites >= 0)
        json_object_set_new(o, "requisites", json_integer(r->requisites));
    /* reals are rounded to 4 digits: 10 significant ones print them as they are */
    if (json_dumpf(o, run->log, JSON_COMPACT | JSON_REAL_PRECISION(10)) == 0)
        fputc('\n', run->log);
    json_decref(o);
    dedup_crash_point("crawl-log-written");
}

/* ---- what the user sees: the progress line and the summary (stderr) ---- */

/* A duration as people read it: "0.96 s", "2 min 05 s", "1 h 02 min". */
static void fmt_duration(double s, char *out, size_t cap)
{
    if (s < 60)
        snprintf(out, cap, "%.*f s", s < 10 ? 2 : 1, s);
    else if (s < 3600)
        snprintf(out, cap, "%d min %02d s", (int)(s / 60), (int)s % 60);
    else
        snprintf(out, cap, "%d h %02d min", (int)(s / 3600), (int)(s / 60) % 60);
}

/* Bytes in decimal units, as wget and curl print them: "812 B", "45.3 kB", "1.2 GB". */
static void fmt_bytes(uint64_t b, char *out, size_t cap)
{
    if (b < 1000)
        snprintf(out, cap, "%llu B", (unsigned long long)b);
    else if (b < 1000000)
        snprintf(out, cap, "%.1f kB", (double)b / 1e3);
    else if (b < 1000000000)
        snprintf(out, cap, "%.1f MB", (double)b / 1e6);
    else
        snprintf(out, cap, "%.2f GB", (double)b / 1e9);
}

/* "N thing" or "N things" */
#define PLURAL(n, one, many) (unsigned long long)(n), (n) == 1 ? (one) : (many)

/* The progress line, redrawn in place on a terminal (crawl_opts.progress, every 0.5 s):
 * elapsed time, pages and rate, bytes received, duplicates dropped, errors, the queue. */
static void progress(void *userdata, const struct crawl_stats *s)
{
    struct run *run = userdata;
    if (!run->progress)
        return;
    char t[32], b[32];
    fmt_duration(s->elapsed, t, sizeof t);
    fmt_bytes(s->bytes, b, sizeof b);
    fprintf(stderr,
            "\r%s  %llu pages (%.1f/s)  %s  dups %llu  errors %llu  queue %zu  "
            "active %u\033[K",
            t, (unsigned long long)s->fetched, s->elapsed > 0 ? (double)s->fetched / s->elapsed : 0,
            b, (unsigned long long)(s->near_duplicates + s->exact_duplicates),
            (unsigned long long)s->errors, s->queued, s->active);
}

/* The summary at the end (not with --quiet): what the crawl kept and dropped and why, in
 * the user's words; with --verbose also the internals (seen set, state commits, time in
 * the workers, peak memory). */
static void summary(const struct run *run, const struct crawl_stats *s, int stopped)
{
    if (run->o->quiet)
        return;
    if (run->progress)
        fputs("\r\033[K", stderr); /* the progress line gives way */
    char t[32], b[32];
    fmt_duration(s->elapsed, t, sizeof t);
    fmt_bytes(s->bytes, b, sizeof b);
    fprintf(stderr, "crawl %s: %llu page%s fetched in %s (%.1f pages/s), %s received\n",
            stopped ? "stopped" : "done", PLURAL(s->fetched, "", "s"), t,
            s->elapsed > 0 ? (double)s->fetched / s->elapsed : 0, b);
    fprintf(stderr,
            "  kept %llu new page%s; dropped %llu near-duplicate%s and %llu exact "
            "duplicate%s%s\n",
            PLURAL(s->new_pages, "", "s"), PLURAL(s->near_duplicates, "", "s"),
            PLURAL(s->exact_duplicates, "", "s"),
            s->exact_duplicates && run->warc ? " (archived as revisits)" : "");
    fprintf(stderr,
            "  skipped %llu filtered (not HTML, too large or out of scope), %llu "
            "disallowed by robots.txt\n",
            (unsigned long long)s->filtered, (unsigned long long)s->robots_disallowed);
    if (s->errors) {
        /* the causes, most first */
        size_t order[ERROR_CAUSES_MAX];
        for (size_t i = 0; i < run->n_causes; i++)
            order[i] = i;
        for (size_t i = 1; i < run->n_causes; i++)
            for (size_t j = i; j > 0 && run->causes[order[j]].n > run->causes[order[j - 1]].n;
                 j--) {
                size_t x = order[j];
                order[j] = order[j - 1];
                order[j - 1] = x;
            }
        fputs("  errors by cause:", stderr);
        for (size_t i = 0; i < run->n_causes; i++)
            fprintf(stderr, "%s %llu %s", i ? ";" : "", (unsigned long long)run->causes[order[i]].n,
                    run->causes[order[i]].what);
        if (run->causes_other)
            fprintf(stderr, "; %llu other", (unsigned long long)run->causes_other);
        fputc('\n', stderr);
    } else {
        fputs("  no errors\n", stderr);
    }
    fprintf(stderr,
            "  links: %llu queued; not followed: %llu only on duplicate pages, %llu out "
            "of scope; %llu redirect%s\n",
            (unsigned long long)s->links_enqueued, (unsigned long long)s->links_saved,
            (unsigned long long)s->links_out_of_scope, PLURAL(s->redirects, "", "s"));
    if (!run->o->verbose)
        return;
    struct rusage ru;
    getrusage(RUSAGE_SELF, &ru);
    fprintf(stderr,
            "  seen set: %zu URL%s in %zu bytes (%.1f bytes per URL); robots.txt "
            "fetched %llu; state commits %llu\n",
            s->seen, s->seen == 1 ? "" : "s", s->seen_bytes,
            s->seen ? (double)s->seen_bytes / (double)s->seen : 0.0,
            (unsigned long long)s->robots_fetched, (unsigned long long)run->commits);
    fprintf(stderr,
            "  parse+fingerprint %.2f s over the workers; response memory peak %zu of "
            "%zu bytes; process peak %.1f MB\n",
            s->process_seconds, s->mem_peak, s->mem_limit, (double)ru.ru_maxrss / 1024.0);
}

/* ---- signals ---- */

static struct crawl *volatile g_crawl;
static volatile sig_atomic_t g_stopped; /* the signal that stopped the crawl, or 0 */

/* The first SIGINT/SIGTERM stops the crawl cleanly; a second one, while the transfers in
 * flight end, kills at once (as Scrapy's second Ctrl-C does): the state and the files are
 * as after a kill -9, which resumes. */
static void on_signal(int sig)
{
    if (g_stopped) {
        signal(sig, SIG_DFL);
        raise(sig);
        return;
    }
    g_stopped = sig;
    if (g_crawl)
        crawl_stop(g_crawl);
}

/* A crawl stopped by a signal, its files closed, dies by that signal, as the program it
 * was would have without the handler: the shell that sent Ctrl-C then stops its script
 * (the parent sees WIFSIGNALED, not an exit status it would take for success). */
static void die_by_stopping_signal(void)
{
    if (!g_stopped)
        return;
    fflush(stdout);
    fflush(stderr);
    signal(g_stopped, SIG_DFL);
    raise(g_stopped);
}

/* ---- seeds ---- */

static int read_seeds(struct options *o, const char *path, char ***lines, size_t *n)
{
    FILE *f = strcmp(path, "-") == 0 ? stdin : fopen(path, "r");
    if (!f) {
        cli_error(CMD, "cannot open seeds file %s: %s", path, strerror(errno));
        return -1;
    }
    (void)o;
    char line[SEED_LINE_MAX + 2];
    unsigned lineno = 0;
    int rc = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        size_t len = strlen(line);
        if (len == sizeof line - 1 && line[len - 1] != '\n') {
            cli_error(CMD, "%s: line %u: longer than %u bytes", path, lineno, SEED_LINE_MAX);
            rc = -1;
            break;
        }
        char *s = line;
        if (lineno == 1 && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
            s += 3; /* a UTF-8 byte order mark (Windows editors write one) */
        while (*s == ' ' || *s == '\t')
            s++;
        char *e = s + strcspn(s, "#\r\n");
        while (e > s && (e[-1] == ' ' || e[-1] == '\t'))
            e--;
        *e = '\0';
        if (!*s)
            continue;
        if (*n >= SEEDS_MAX) {
            cli_error(CMD, "%s: more than %u seeds", path, SEEDS_MAX);
            rc = -1;
            break;
        }
        char **nl = realloc(*lines, (*n + 1) * sizeof *nl);
        char *copy = strdup(s);
        if (!nl || !copy) {
            free(copy);
            if (nl)
                *lines = nl;
            cli_error(CMD, "out of memory reading %s", path);
            rc = -1;
            break;
        }
        *lines = nl;
        (*lines)[(*n)++] = copy;
    }
    if (f != stdin)
        fclose(f);
    return rc;
}

/* ---- --state: resume, refuse to overwrite ---- */

static int state_warc_position(struct run *run, struct crawl_warc_position *pos);
static int log_resume(struct run *run, struct options *o);

/* A finished crawl's WARC and log as committed: cut to their committed ends, the WARC
 * renamed from .open (a kill after the last commit leaves it so). */
static int finish_files(struct run *run, struct options *o)
{
    if (o->warc) {
        struct crawl_warc_position pos;
        struct crawl_warc_writer *w = NULL;
        if (state_warc_position(run, &pos) != 0)
            return -1;
        struct crawl_warc_writer_opts wo = {0};
        enum crawl_code wc = crawl_warc_writer_resume(o->warc, &wo, &pos, &w);
        if (wc == CRAWL_OK)
            wc = crawl_warc_writer_close(w);
        if (wc != CRAWL_OK) {
            cli_error(CMD, "cannot finish WARC %s: %s", o->warc, crawl_strerror(wc));
            return -1;
        }
    }
    if (o->log && strcmp(o->log, "-") != 0) {
        if (log_resume(run, o) != 0)
            return -1;
        fclose(run->log);
        run->log = NULL;
    }
    return 0;
}

static void method_text(const struct run *run, char *out, size_t cap);

/* A resumed crawl's method and threshold must be the ones it was started with: 0, or -1
 * with *status set after saying why. */
static int state_method_check(struct run *run, const struct options *o, int *status)
{
    char *was = NULL, now[64];
    if (crawl_state_meta_text(run->state, "method", &was) != CRAWL_OK) {
        cli_error(CMD, "cannot read the state: %s", crawl_state_error(run->state));
        return -1;
    }
    method_text(run, now, sizeof now);
    int same = strcmp(was && *was ? was : "simhash", now) == 0;
    if (!same) {
        cli_usage_error(CMD,
                        "the crawl in %s was started with --method %.100s, not %s: give "
                        "the same options to resume it (or another --state DIR)",
                        o->state, was && *was ? was : "simhash", now);
        *status = CLI_USAGE;
    }
    free(was);
    return same ? 0 : -1;
}

/* Whether the state holds a crawl, and whether it is finished (then says so: *status 0,
 * returns 1). The files of a resumed crawl must be the ones it was writing. 0 to go on,
 * -1 (*status set) to stop. */
static int state_check(struct run *run, struct options *o, int *resuming, int *status)
{
    int64_t v = 0;
    int found = 0;
    if (crawl_state_meta_int(run->state, "started", &v, &found) != CRAWL_OK)
        goto fail;
    *resuming = found;
    if (!found)
        return 0;
    int64_t done = 0, fetched = 0, fnew = 0;
    int f1 = 0, f2 = 0, f3 = 0;
    if (crawl_state_meta_int(run->state, "complete", &done, &f1) != CRAWL_OK ||
        crawl_state_meta_int(run->state, "stats.fetched", &fetched, &f2) != CRAWL_OK ||
        crawl_state_meta_int(run->state, "stats.new_pages", &fnew, &f3) != CRAWL_OK)
        goto fail;
    if (f1 && done == 2) { /* stopped by --max-pages: a higher (or no) limit goes on */
        int64_t limit = 0;
        int fl = 0;
        if (crawl_state_meta_int(run->state, "complete.max_pages", &limit, &fl) != CRAWL_OK)
            goto fail;
        if (o->co.max_pages <= 0 || o->co.max_pages > limit) {
            if (crawl_state_set_meta_int(run->state, "complete", 0) != CRAWL_OK)
                goto fail;
            done = 0;
        }
    }
    /* the state's files, also for a finished crawl (whose files are finished below); the
     * topic orders a focused crawl: the queued URLs' priorities in the state are its
     * scores, so another topic cannot go on with them */
    static const char *const keys[3] = {"warc", "log", "topic"};
    static const char *const says[3] = {"writes --warc", "writes --log", "has the topic"};
    const char *given[3] = {o->warc, o->log, run->topic_text};
    for (int i = 0; i < 3; i++) {
        char *was = NULL;
        if (crawl_state_meta_text(run->state, keys[i], &was) != CRAWL_OK)
            goto fail;
        int same = strcmp(was ? was : "", given[i] ? given[i] : "") == 0;
        if (!same)
            cli_usage_error(CMD,
                            "the crawl in %s %s '%.200s', not '%.200s': give the same "
                            "options to resume it (or another --state DIR)",
                            o->label, says[i], was ? was : "", given[i] ? given[i] : "");
        free(was);
        if (!same) {
            *status = CLI_USAGE;
            return -1;
        }
    }
    if (f1 && done) {
        /* killed after its last commit: the files are finished from the committed ends */
        if (finish_files(run, o) != 0)
            return -1;
        if (!o->quiet)
            fprintf(stderr,
                    "crawl complete: the crawl in %s is finished (%lld pages fetched, "
                    "%lld new); nothing to do\n",
                    o->label, (long long)fetched, (long long)fnew);
        *status = CLI_OK;
        return 1;
    }
    return state_method_check(run, o, status);
fail:
    cli_error(CMD, "cannot read the state: %s", crawl_state_error(run->state));
    return -1;
}

static int state_warc_position(struct run *run, struct crawl_warc_position *pos)
{
    int64_t seq = 0, off = 0, recs = 0;
    int f1 = 0, f2 = 0, f3 = 0;
    char *id = NULL;
    memset(pos, 0, sizeof *pos);
    if (crawl_state_meta_int(run->state, "warc.seq", &seq, &f1) != CRAWL_OK ||
        crawl_state_meta_int(run->state, "warc.offset", &off, &f2) != CRAWL_OK ||
        crawl_state_meta_int(run->state, "warc.records", &recs, &f3) != CRAWL_OK ||
        crawl_state_meta_text(run->state, "warc.info_id", &id) != CRAWL_OK || !f1 || !f2 || !id) {
        free(id);
        cli_error(CMD, "cannot resume: the state has no committed WARC position");
        return -1;
    }
    pos->seq = (unsigned)seq;
    pos->offset = (uint64_t)off;
    pos->records = (uint64_t)recs;
    snprintf(pos->warcinfo_id, sizeof pos->warcinfo_id, "%s", id);
    free(id);
    return 0;
}

/* The log of a resumed crawl: cut back to its last committed line, then appended to. */
static int log_resume(struct run *run, struct options *o)
{
    int64_t off = 0;
    int found = 0;
    if (crawl_state_meta_int(run->state, "log.offset", &off, &found) != CRAWL_OK) {
        cli_error(CMD, "cannot read the state: %s", crawl_state_error(run->state));
        return -1;
    }
    run->log = fopen(o->log, "r+");
    if (!run->log && errno == ENOENT && off == 0)
        run->log = fopen(o->log, "w");
    if (!run->log) {
        cli_error(CMD, "cannot resume log file %s: %s", o->log, strerror(errno));
        return -1;
    }
    setvbuf(run->log, NULL, _IOLBF, 0); /* before any other operation on the stream */
    struct stat st;
    if (fstat(fileno(run->log), &st) != 0 || st.st_size < off) {
        cli_error(CMD, "cannot resume log file %s: shorter than its committed %lld bytes", o->log,
                  (long long)off);
        return -1;
    }
    if (ftruncate(fileno(run->log), (off_t)off) != 0 || fseeko(run->log, 0, SEEK_END) != 0) {
        cli_error(CMD, "cannot resume log file %s: %s", o->log, strerror(errno));
        return -1;
    }
    return 0;
}

/* Without --state (or for a new one), an existing WARC or log is not replaced unless
 * --overwrite: a crawl run twice must not silently lose the first one's files. */
static int refuse_overwrite(const struct options *o)
{
    const char *paths[3] = {o->warc, NULL, o->log && strcmp(o->log, "-") != 0 ? o->log : NULL};
    char open_name[4200];
    if (o->warc) {
        snprintf(open_name, sizeof open_name, "%s.open", o->warc);
        paths[1] = open_name;
    }
    for (int i = 0; i < 3; i++) {
        struct stat st;
        if (paths[i] && stat(paths[i], &st) == 0) {
            cli_usage_error(
                CMD, "%s exists: give --overwrite to replace it%s", paths[i],
                o->state || o->redis ? "" : ", or --state DIR for a crawl that can be resumed");
            return -1;
        }
    }
    return 0;
}

/* ---- --redis: a worker of a shared crawl ---- */

/* path with "-worker" put before its extension: ".warc.gz" or ".warc" for a WARC, the
 * last ".ext" of the file name for a log, or at the end when there is none. Caller frees. */
static char *worker_file(const char *path, const char *worker, int warc)
{
    size_t len = strlen(path), at = len;
    if (warc && len > 8 && strcmp(path + len - 8, ".warc.gz") == 0)
        at = len - 8;
    else if (warc && len > 5 && strcmp(path + len - 5, ".warc") == 0)
        at = len - 5;
    else if (!warc) {
        const char *slash = strrchr(path, '/');
        const char *dot = strrchr(slash ? slash + 1 : path, '.');
        if (dot && dot != (slash ? slash + 1 : path)) /* not a dot file's own name */
            at = (size_t)(dot - path);
    }
    size_t wl = strlen(worker);
    char *out = malloc(len + wl + 2);
    if (!out)
        return NULL;
    memcpy(out, path, at);
    out[at] = '-';
    memcpy(out + at + 1, worker, wl);
    memcpy(out + at + 1 + wl, path + at, len - at + 1);
    return out;
}

/* --redis and --worker-name: checked, and the worker's own WARC and log named. */
static int shared_options(struct options *o, char **warc, char **log)
{
    if (!o->redis || !o->worker_name)
        return cli_usage_error(CMD, "--redis and --worker-name go together: every worker "
                                    "of a shared crawl has a name of its own");
    if (o->state)
        return cli_usage_error(CMD, "--redis and --state exclude each other: the shared "
                                    "crawl's state is in Redis");
    if (o->topic || o->topic_file)
        return cli_usage_error(CMD, "--topic cannot be used with --redis: the shared "
                                    "frontier is in fetch order, not by priority");
    size_t nl = strspn(o->worker_name, "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
                                       "0123456789-_.");
    if (o->worker_name[nl] || nl > CRAWL_REDIS_MAX_NAME)
        return cli_usage_error(CMD,
                               "bad worker name '%.80s': 1 to %d letters, digits, '-', "
                               "'_' or '.'",
                               o->worker_name, CRAWL_REDIS_MAX_NAME);
    char host[256];
    int port, db;
    if (crawl_redis_parse_url(o->redis, host, sizeof host, &port, &db) != CRAWL_OK)
        return cli_usage_error(CMD, "bad --redis '%s': expected redis://HOST:PORT[/DB]", o->redis);
    if (o->redis_index &&
        crawl_redis_parse_url(o->redis_index, host, sizeof host, &port, &db) != CRAWL_OK)
        return cli_usage_error(CMD, "bad --redis-index '%s': expected redis://HOST:PORT[/DB]",
                               o->redis_index);
    if (o->warc) {
        if (!(*warc = worker_file(o->warc, o->worker_name, 1)))
            goto oom;
        o->warc = *warc;
    }
    if (o->log && strcmp(o->log, "-") != 0) {
        if (!(*log = worker_file(o->log, o->worker_name, 0)))
            goto oom;
        o->log = *log;
    }
    return CLI_OK;
oom:
    cli_error(CMD, "out of memory");
    return CLI_RUNTIME;
}

/* The near-duplicate index shared by the workers: in --redis-index (default: the frontier's
 * Redis), its keys under the prefix "simcrawl-index" (the frontier's are under "simcrawl").
 * 0, or -1 after saying why. */
static int shared_index_open(struct run *run, const struct options *o)
{
    char url[600];
    const char *at = o->redis_index ? o->redis_index : o->redis;
    snprintf(url, sizeof url, "%s%sprefix=simcrawl-index&retry=%g", at, strchr(at, '?') ? "&" : "?",
             o->redis_retry > 0   ? o->redis_retry
             : o->redis_retry < 0 ? 0
                                  : CRAWL_REDIS_RETRY_TIME);
    struct redisidx_opts ro = {.k = (unsigned)o->k};
    char err[512];
    if (redisidx_open(url, &ro, &run->ridx, err, sizeof err) != REDISIDX_OK) {
        cli_error(CMD, "cannot open the shared near-duplicate index: %s", err);
        return -1;
    }
    return 0;
}

/* The whole crawl's counters (every worker's commits), after this worker's summary. */
static void shared_summary(struct run *run)
{
    struct crawl_redis *r = crawl_state_redis(run->state);
    static const char *const keys[5] = {"stats.fetched", "stats.new_pages", "stats.near_duplicates",
                                        "stats.exact_duplicates", "stats.errors"};
    int64_t v[5] = {0};
    for (int i = 0; i < 5; i++)
        if (!r || crawl_redis_stats_get(r, keys[i], &v[i]) != CRAWL_OK)
            return;
    fprintf(stderr,
            "the whole crawl (all workers, committed): %lld pages fetched, %lld new, "
            "%lld near-duplicates, %lld exact duplicates, %lld errors; this worker "
            "sent %llu Redis commands\n",
            (long long)v[0], (long long)v[1], (long long)v[2], (long long)v[3], (long long)v[4],
            (unsigned long long)crawl_redis_calls(r));
}

/* ---- the warcinfo record ---- */

/* Appends " word" to t (cap bytes), the word's CR, LF and other controls made spaces;
 * 0, or -1 when it did not fit. */
static int add_word(char *t, size_t cap, const char *word)
{
    size_t len = strlen(t), wl = strlen(word);
    if (len + wl + 2 >= cap)
        return -1;
    if (len)
        t[len++] = ' ';
    for (size_t i = 0; i < wl; i++)
        t[len++] = (unsigned char)word[i] < 0x20 ? ' ' : word[i];
    t[len] = '\0';
    return 0;
}

/*
 * The warcinfo fields that say how the WARC was made (WARC 1.1 section 6.2: software is
 * the writer's; http-header-user-agent and robots are the spec's, the seeds and the
 * options ours): "http-header-user-agent: ...", "robots: obey|ignore", "simcrawl-seeds:
 * URL ..." (the first 4 KB of them, then "(N more)"), "simcrawl-options: ..." (the command
 * line without its seeds). Caller frees; NULL when out of memory.
 */
/* Whether a seed starts with a URI scheme, not with a host and port ("localhost:8080/",
 * "127.0.0.1:1/x" have none): crawl_url_scheme_len(), and no digit after the colon. */
static int has_scheme(const char *s)
{
    size_t n = crawl_url_scheme_len(s, strlen(s));
    return n > 0 && !(s[n] >= '0' && s[n] <= '9');
}

/* The bytes of the seeds, and of the options, that the warcinfo record shows: a WARC reader
 * sees how the crawl was started without a record of the size of a seeds file. */
#define WARCINFO_PART 4096

static char *warcinfo_fields(const struct options *o, int argc, char **argv, const char **seeds,
                             char **file_seeds, size_t n_file_seeds)
{
    char *t = malloc(4 * WARCINFO_PART);
    char *sd = calloc(1, WARCINFO_PART), *op = calloc(1, WARCINFO_PART);
    if (!t || !sd || !op) {
        free(t), free(sd), free(op);
        return NULL;
    }
    size_t n = o->n_seeds + n_file_seeds, shown = 0;
    for (; shown < n; shown++)
        if (add_word(sd, WARCINFO_PART - 32,
                     shown < o->n_seeds ? seeds[shown] : file_seeds[shown - o->n_seeds]) != 0)
            break;
    if (shown < n)
        snprintf(sd + strlen(sd), 32, " (%zu more)", n - shown);
    for (int i = 1; i < argc; i++) {
        int seed = 0; /* the command line parser kept the seeds' argv pointers */
        for (size_t k = 0; k < o->n_seeds && !seed; k++)
            seed = seeds[k] == argv[i];
        if (!seed && strcmp(argv[i], "--") != 0 && add_word(op, WARCINFO_PART, argv[i]) != 0)
            break;
    }
    snprintf(t, 4 * WARCINFO_PART,
             "http-header-user-agent: %s\r\nrobots: %s\r\nsimcrawl-seeds: %s\r\n"
             "simcrawl-options: %s\r\n",
             o->co.user_agent ? o->co.user_agent : CRAWL_DEFAULT_USER_AGENT,
             o->co.ignore_robots ? "ignore" : "obey", sd, op);
    for (char *p = t; *p; p++) /* a user agent with a line break in it */
        if ((*p == '\r' || *p == '\n') && !(p[0] == '\r' && p[1] == '\n') &&
            !(p[0] == '\n' && p > t && p[-1] == '\r'))
            *p = ' ';
    free(sd);
    free(op);
    return t;
}

/* ---- --report ---- */

/* The report of the crawl into --report: its inputs are the seeds. */
static int write_report(struct run *run, const struct options *o, const char **seeds,
                        char **file_seeds, size_t n_file_seeds)
{
    if (run->report_failed) {
        cli_error(CMD, "no report written: pages are missing from it (said above)");
        return CLI_RUNTIME;
    }
    size_t n = o->n_seeds + n_file_seeds;
    char **inputs = malloc((n ? n : 1) * sizeof *inputs);
    if (!inputs) {
        cli_error(CMD, "out of memory");
        return CLI_RUNTIME;
    }
    for (size_t i = 0; i < n; i++)
        inputs[i] = i < o->n_seeds ? (char *)seeds[i] : file_seeds[i - o->n_seeds];
    int status = cli_crawl_report_write(run->report, o->report, (unsigned)o->k, inputs,
                                        n > REPORT_SEEDS_MAX ? (int)REPORT_SEEDS_MAX : (int)n);
    free(inputs);
    return status;
}

/* A finished crawl's report from its state alone. */
static int report_from_state(struct run *run, const struct options *o, const char **seeds,
                             char **file_seeds, size_t n_file_seeds)
{
    if (cli_crawl_report_from_state(run->report, run->state) != CRAWL_OK) {
        cli_error(CMD, "cannot read the state: %s", crawl_state_error(run->state));
        return CLI_RUNTIME;
    }
    return write_report(run, o, seeds, file_seeds, n_file_seeds);
}

/* The near-duplicate index of the method (simhash: the permuted tables for k; minhash:
 * the LSH index, b x r chosen for the threshold) and the decision over it. CLI_OK,
 * CLI_USAGE (the other method's knob given) or CLI_RUNTIME, said. */
static int decide_setup(struct run *run, struct options *o)
{
    cli_digests_cap_init(&run->digests, CMD, CRAWL_DIGESTS_LOST, CLI_DIGESTS_MAX, o->quiet);
    struct filter_decide_opts dopts = {.templates = run->templates && !o->redis,
                                       .max_payloads = CLI_DIGESTS_MAX};
    if (o->minhash) {
        struct dedup_lsh_params p;
        if (o->k_given)
            return cli_usage_error(CMD, "--k is the simhash method's; the minhash method's "
                                        "knob is --threshold");
        if (dedup_lsh_params_default(o->threshold_given ? o->threshold
                                                        : DEDUP_MINHASH_THRESHOLD_DEFAULT,
                                     &p) != DEDUP_OK ||
            dedup_lsh_new(&p, &run->lsh) != DEDUP_OK) {
            cli_error(CMD, "cannot set up the minhash index");
            return CLI_RUNTIME;
        }
        dopts.lsh = run->lsh;
        dopts.threshold = p.threshold;
    } else {
        struct dedup_design design;
        uint64_t expect = o->co.max_pages > 0 ? (uint64_t)o->co.max_pages : INDEX_EXPECTED_PAGES;
        if (o->threshold_given)
            return cli_usage_error(CMD, "--threshold is the minhash method's (--method "
                                        "minhash); the simhash method's knob is --k");
        if (dedup_design_choose((unsigned)o->k, expect, 0, &design) != DEDUP_OK ||
            dedup_index_new(&design, &run->index) != DEDUP_OK) {
            cli_error(CMD, "cannot set up the index for k %ld", o->k);
            return CLI_RUNTIME;
        }
        dopts.index = run->index;
        dopts.k = (unsigned)o->k;
    }
    if (filter_decide_new(&dopts, &run->decide) != DEDUP_OK) {
        cli_error(CMD, "out of memory");
        return CLI_RUNTIME;
    }
    return CLI_OK;
}

/* The method as the state records it ("simhash", "minhash --threshold 0.8"): a crawl resumes only
 * with the method and threshold it was started with (its kept pages' signatures are in
 * the state). A state written before the method was recorded is a simhash crawl. */
static void method_text(const struct run *run, char *out, size_t cap)
{
    if (run->lsh)
        snprintf(out, cap, "minhash --threshold %.15g", dedup_lsh_get_params(run->lsh)->threshold);
    else
        snprintf(out, cap, "simhash");
}

static enum crawl_code state_method_save(struct run *run)
{
    char t[64];
    method_text(run, t, sizeof t);
    return crawl_state_set_meta_text(run->state, "method", t);
}

/* ---- the command ---- */

/* The command line's options: those of set_option() (each also a config key) by name,
 * and the flags. */
enum { OPT_SET = 256, OPT_CONFIG, OPT_FLAG, OPT_NO_TEMPLATES };
static const struct option longopts[] = {{"config", required_argument, NULL, OPT_CONFIG},
                                         {"seeds", required_argument, NULL, OPT_SET},
                                         {"max-pages", required_argument, NULL, OPT_SET},
                                         {"max-depth", required_argument, NULL, OPT_SET},
                                         {"concurrency", required_argument, NULL, OPT_SET},
                                         {"per-host", required_argument, NULL, OPT_SET},
                                         {"delay", required_argument, NULL, OPT_SET},
                                         {"max-delay", required_argument, NULL, OPT_SET},
                                         {"scope", required_argument, NULL, OPT_SET},
                                         {"include", required_argument, NULL, OPT_SET},
                                         {"exclude", required_argument, NULL, OPT_SET},
                                         {"topic", required_argument, NULL, OPT_SET},
                                         {"topic-file", required_argument, NULL, OPT_SET},
                                         {"min-relevance", required_argument, NULL, OPT_SET},
                                         {"k", required_argument, NULL, OPT_SET},
                                         {"warc", required_argument, NULL, OPT_SET},
                                         {"warc-gzip-level", required_argument, NULL, OPT_SET},
                                         {"log", required_argument, NULL, OPT_SET},
                                         {"user-agent", required_argument, NULL, OPT_SET},
                                         {"ca-file", required_argument, NULL, OPT_SET},
                                         {"max-body", required_argument, NULL, OPT_SET},
                                         {"max-memory", required_argument, NULL, OPT_SET},
                                         {"max-links", required_argument, NULL, OPT_SET},
                                         {"max-nesting", required_argument, NULL, OPT_SET},
                                         {"timeout", required_argument, NULL, OPT_SET},
                                         {"connect-timeout", required_argument, NULL, OPT_SET},
                                         {"workers", required_argument, NULL, OPT_SET},
                                         {"robots", required_argument, NULL, OPT_SET},
                                         {"robots-outage", required_argument, NULL, OPT_SET},
                                         {"robots-backoff", required_argument, NULL, OPT_SET},
                                         {"unreachable-retries", required_argument, NULL, OPT_SET},
                                         {"unreachable-time", required_argument, NULL, OPT_SET},
                                         {"state", required_argument, NULL, OPT_SET},
                                         {"seen-memory", required_argument, NULL, OPT_SET},
                                         {"overwrite", optional_argument, NULL, OPT_FLAG},
                                         {"durable", optional_argument, NULL, OPT_FLAG},
                                         {"no-parent", optional_argument, NULL, OPT_FLAG},
                                         {"page-requisites", optional_argument, NULL, OPT_FLAG},
                                         {"report", required_argument, NULL, OPT_SET},
                                         {"method", required_argument, NULL, OPT_SET},
                                         {"redis", required_argument, NULL, OPT_SET},
                                         {"redis-index", required_argument, NULL, OPT_SET},
                                         {"worker-name", required_argument, NULL, OPT_SET},
                                         {"lease-time", required_argument, NULL, OPT_SET},
                                         {"host-lease-time", required_argument, NULL, OPT_SET},
                                         {"frontier-shards", required_argument, NULL, OPT_SET},
                                         {"redis-retry", required_argument, NULL, OPT_SET},
                                         {"threshold", required_argument, NULL, OPT_SET},
                                         {"no-templates", no_argument, NULL, OPT_NO_TEMPLATES},
                                         {"quiet", no_argument, NULL, 'q'},
                                         {"verbose", no_argument, NULL, 'v'},
                                         {"help", no_argument, NULL, 'h'},
                                         {NULL, 0, NULL, 0}};

/* What the steps of cmd_crawl share: the options, the run, the seeds and the strings the
 * command owns, the crawler, and the exit status so far. */
struct crawl_cmd {
    struct options o;
    struct run run;
    int argc;
    char **argv;
    const char **seeds; /* the command line's (o.n_seeds of them, argv's pointers) */
    char **file_seeds;  /* --seeds FILE's (owned) */
    size_t n_file_seeds;
    char *warc_named;               /* --warc NAME given without .warc.gz */
    char *worker_warc, *worker_log; /* --worker-name's files */
    char *warcinfo;
    struct crawl *c;
    int resuming; /* --state or --redis: a crawl started before goes on */
    int status;   /* the exit status when a step stops */
};

/* The defaults of every option. 0, or -1 out of memory (said). */
static int crawl_cmd_init(struct crawl_cmd *cc, int argc, char **argv)
{
    memset(cc, 0, sizeof *cc);
    cc->o.k = DEDUP_K_DEFAULT;
    cc->o.warc_gzip_level = WARC_GZIP_LEVEL_DEFAULT;
    cc->o.co.delay = CRAWL_DEFAULT_DELAY;
    cc->o.co.max_depth = -1;
    cc->o.min_relevance = 0;
    cc->argc = argc;
    cc->argv = argv;
    cc->status = CLI_RUNTIME;
    pthread_mutex_init(&cc->run.warc_lock, NULL);
    cc->seeds = calloc((size_t)argc + 1, sizeof *cc->seeds);
    if (!cc->seeds) {
        cli_error(CMD, "out of memory");
        return -1;
    }
    return 0;
}

/* The --config files, first (cli_getopt's first pass), so that the command line wins.
 * 0, or -1 with cc->status set (--help: CLI_OK). */
static int load_config_files(struct crawl_cmd *cc)
{
    struct cli_getopt g;
    cli_getopt_init(&g, CMD, cc->argc, cc->argv, "hqvp", longopts, usage);
    for (int opt; (opt = cli_getopt_next(&g)) != CLI_GETOPT_END;) {
        if (opt == CLI_GETOPT_HELP || opt == CLI_GETOPT_ERROR) {
            cc->status = opt == CLI_GETOPT_HELP ? CLI_OK : CLI_USAGE;
            return -1;
        }
        if (!g.value && g.opt && g.opt->has_arg == required_argument) {
            /* said now: this pass moves the operands after the options, where the
             * second would take the first operand for the missing value */
            cc->status = cli_usage_error(CMD, "option '%s' needs a value", g.name);
            return -1;
        }
        if (opt == OPT_CONFIG && cli_config_load(CMD, g.value, "crawl", on_config, &cc->o) != 0) {
            cc->status = CLI_USAGE;
            return -1;
        }
    }
    return 0;
}

/* The command line's options over the config files', and its seeds. 0, or -1 with
 * cc->status set. */
static int parse_command_line(struct crawl_cmd *cc)
{
    struct options *o = &cc->o;
    struct cli_getopt g;
    cli_getopt_init(&g, CMD, cc->argc, cc->argv, "hqvp", longopts, usage);
    for (int opt; (opt = cli_getopt_next(&g)) != CLI_GETOPT_END;) {
        if (opt == 'q' || opt == 'v') {
            *(opt == 'q' ? &o->quiet : &o->verbose) = 1;
        } else if (opt == OPT_NO_TEMPLATES) {
            o->no_templates = 1;
        } else if (opt == 'p') {
            o->page_requisites = 1;
        } else if (opt == OPT_FLAG || opt == OPT_SET) {
            /* OPT_FLAG: --overwrite, --durable, --no-parent, --page-requisites;
             * "--overwrite=no" is set_option's, as in a file */
            const char *v = opt == OPT_FLAG && !g.value ? "yes" : g.value;
            if (set_option(o, g.opt->name, v, NULL) != 0) {
                cc->status = CLI_USAGE;
                return -1;
            }
        }
    }
    for (int i = g.optind; i < cc->argc; i++)
        cc->seeds[o->n_seeds++] = cc->argv[i];
    return 0;
}

/* --warc NAME without an extension writes NAME.warc.gz (wget's --warc-file). 0, or -1
 * out of memory (said). */
static int name_warc(struct crawl_cmd *cc)
{
    const char *warc = cc->o.warc;
    size_t wl = warc ? strlen(warc) : 0;
    if (!warc || (wl > 5 && strcmp(warc + wl - 5, ".warc") == 0) ||
        (wl > 8 && strcmp(warc + wl - 8, ".warc.gz") == 0))
        return 0;
    if (!(cc->warc_named = malloc(wl + sizeof ".warc.gz"))) {
        cli_error(CMD, "out of memory");
        return -1;
    }
    snprintf(cc->warc_named, wl + sizeof ".warc.gz", "%s.warc.gz", warc);
    cc->o.warc = cc->warc_named;
    return 0;
}

/* The options checked together: the seeds (--seeds FILE read), the WARC's name, a shared
 * crawl's options, the CA file, the topic. 0, or -1 with cc->status set. */
static int check_options(struct crawl_cmd *cc)
{
    struct options *o = &cc->o;
    if (o->seeds_file && read_seeds(o, o->seeds_file, &cc->file_seeds, &cc->n_file_seeds) != 0) {
        cc->status = CLI_USAGE;
        return -1;
    }
    if (o->n_seeds + cc->n_file_seeds == 0) {
        cc->status = cli_usage_error(CMD, "no seed URL (give SEED... or --seeds FILE)");
        return -1;
    }
    if (name_warc(cc) != 0)
        return -1;
    if (o->redis || o->worker_name) {
        int st = shared_options(o, &cc->worker_warc, &cc->worker_log);
        if (st != CLI_OK) {
            cc->status = st;
            return -1;
        }
    }
    snprintf(o->label, sizeof o->label, "%s", o->state ? o->state : "");
    if (o->co.ca_file) {
        /* libcurl would report a missing bundle on every transfer, as a page error */
        FILE *f = fopen(o->co.ca_file, "r");
        if (!f) {
            cc->status =
                cli_usage_error(CMD, "cannot read CA file %s: %s", o->co.ca_file, strerror(errno));
            return -1;
        }
        fclose(f);
    }
    if (o->topic && o->topic_file) {
        cc->status = cli_usage_error(CMD, "--topic and --topic-file exclude each other");
        return -1;
    }
    return 0;
}

/* --topic or --topic-file: the topic a focused crawl ranks its links by. 0, or -1 with
 * cc->status set. */
static int topic_setup(struct crawl_cmd *cc)
{
    const struct options *o = &cc->o;
    char *topic_text = NULL;
    if (o->topic_file) {
        size_t len;
        char err[256];
        if (cli_read_file(o->topic_file, TOPIC_MAX_BYTES, &topic_text, &len, err, sizeof err) !=
            0) {
            cli_error(CMD, "cannot read topic file %s: %s", o->topic_file, err);
            cc->status = CLI_USAGE;
            return -1;
        }
    } else if (o->topic) {
        topic_text = strdup(o->topic);
    }
    if (!topic_text)
        return 0;
    int ok = topic_init(&cc->run.topic, topic_text) == 0 && cc->run.topic.n > 0;
    cc->run.topic_text = topic_text;
    if (!ok) {
        cc->status = cli_usage_error(CMD, "the topic has no words");
        return -1;
    }
    cc->run.focused = 1;
    return 0;
}

/* The run's decision, its --report and the WARC's warcinfo fields. 0, or -1 with
 * cc->status set. */
static int run_setup(struct crawl_cmd *cc)
{
    struct run *run = &cc->run;
    struct options *o = &cc->o;
    run->o = o;
    /* --redis: the template counts are the workers' together, in Redis (shared_mark) */
    run->templates = !o->no_templates;
    if ((cc->status = decide_setup(run, o)) != CLI_OK)
        return -1;
    cc->status = CLI_RUNTIME;
    if (!o->warc && !o->log && !o->report)
        notice(o, "neither --warc nor --log given: nothing of the crawl will be kept "
                  "but the summary on stderr");
    if (o->report && !(run->report = cli_crawl_report_new(CMD))) {
        cli_error(CMD, "out of memory");
        return -1;
    }
    if (o->report && cli_crawl_report_check_path(CMD, o->report) != CLI_OK)
        return -1; /* said before the crawl, not after it */
    cc->warcinfo =
        warcinfo_fields(o, cc->argc, cc->argv, cc->seeds, cc->file_seeds, cc->n_file_seeds);
    return 0;
}

/* --redis: the shared frontier's state and the shared near-duplicate index. 0, or -1
 * with cc->status set. */
static int open_redis_state(struct crawl_cmd *cc)
{
    struct options *o = &cc->o;
    struct crawl_redis_opts ro = {.url = o->redis,
                                  .worker = o->worker_name,
                                  .lease_time = o->lease_time,
                                  .host_lease_time = o->host_lease_time,
                                  .retry_time = o->redis_retry,
                                  .shards = o->frontier_shards};
    struct crawl_redis *rd = NULL;
    char rerr[600];
    if (crawl_redis_open(&ro, &rd, rerr, sizeof rerr) != CRAWL_OK) {
        cli_error(CMD, "%s", rerr);
        return -1;
    }
    if (crawl_state_open_redis(rd, &cc->run.state) != CRAWL_OK) {
        crawl_redis_free(rd);
        cli_error(CMD, "out of memory");
        return -1;
    }
    snprintf(o->label, sizeof o->label, "%s (worker %s)", o->redis, o->worker_name);
    crawl_state_set_crash_hook(cc->run.state, dedup_crash_point);
    if (shared_index_open(&cc->run, o) != 0)
        return -1;
    return state_check(&cc->run, o, &cc->resuming, &cc->status) != 0 ? -1 : 0;
}

/* --state DIR: the crawl's state, created or opened; a finished crawl stops here (with
 * --report, its report from the state). 0, or -1 with cc->status set. */
static int open_local_state(struct crawl_cmd *cc)
{
    struct run *run = &cc->run;
    struct options *o = &cc->o;
    int created = 0;
    char serr[700];
    if (crawl_state_open(o->state, o->durable, &run->state, &created, serr, sizeof serr) !=
        CRAWL_OK) {
        cli_error(CMD, "%s", serr);
        return -1;
    }
    crawl_state_set_crash_hook(run->state, dedup_crash_point);
    if (crawl_state_migrated_from(run->state))
        notice(o, "%s: state of schema %d brought to the current schema%s", o->state,
               crawl_state_migrated_from(run->state),
               crawl_state_migrated_from(run->state) == 1
                   ? " (the URLs it had queued are logged without their referrer)"
                   : "");
    run->durable = o->durable;
    if (state_check(run, o, &cc->resuming, &cc->status) != 0) {
        if (cc->status == CLI_OK && run->report) /* finished: the report of the whole crawl */
            cc->status = report_from_state(run, o, cc->seeds, cc->file_seeds, cc->n_file_seeds);
        return -1;
    }
    if (!cc->resuming && !created)
        o->overwrite = 1; /* a run that died before its first commit: the files are ours */
    return 0;
}

/* The crawl's log: stdout, a resumed log or a new file. 0, or -1 (said). */
static int open_log(struct crawl_cmd *cc)
{
    struct run *run = &cc->run;
    const char *log = cc->o.log;
    if (!log)
        return 0;
    if (strcmp(log, "-") == 0) {
        run->log = stdout;
        run->log_is_stdout = 1;
        setvbuf(stdout, NULL, _IOLBF, 0);
    } else if (cc->resuming) {
        if (log_resume(run, &cc->o) != 0)
            return -1;
    } else {
        run->log = fopen(log, "w");
        if (!run->log) {
            cli_error(CMD, "cannot open log file %s: %s", log, strerror(errno));
            return -1;
        }
        /* flushed line by line: tail -f shows each URL as it is decided */
        setvbuf(run->log, NULL, _IOLBF, 0);
    }
    return 0;
}

/* The crawl's WARC: resumed from the state's committed position, or new. 0, or -1
 * (said). */
static int open_warc(struct crawl_cmd *cc)
{
    const struct options *o = &cc->o;
    if (!o->warc)
        return 0;
    struct crawl_warc_writer_opts wo = {0};
    wo.software = "simcrawl/" CLI_VERSION;
    wo.gzip_level = o->warc_gzip_level;
    wo.info = cc->warcinfo;
    enum crawl_code wc;
    if (cc->resuming) {
        struct crawl_warc_position pos;
        if (state_warc_position(&cc->run, &pos) != 0)
            return -1;
        wc = crawl_warc_writer_resume(o->warc, &wo, &pos, &cc->run.warc);
    } else {
        errno = 0;
        wc = crawl_warc_writer_open(o->warc, &wo, &cc->run.warc);
    }
    if (wc != CRAWL_OK) {
        /* an I/O error names the system's reason ("No such file or directory") */
        cli_error(CMD, "cannot %s %s: %s", cc->resuming ? "resume the WARC" : "create", o->warc,
                  wc == CRAWL_EIO && errno ? strerror(errno) : crawl_strerror(wc));
        return -1;
    }
    return 0;
}

/* The state (--redis or --state), then the log and the WARC (not over another crawl's
 * files without --overwrite). 0, or -1 with cc->status set. */
static int open_outputs(struct crawl_cmd *cc)
{
    struct options *o = &cc->o;
    /* --state: a crawl that was started before is resumed, a finished one says so */
    if (o->redis && open_redis_state(cc) != 0)
        return -1;
    if (!o->redis && o->state && open_local_state(cc) != 0)
        return -1;
    if (!cc->resuming && !o->overwrite && refuse_overwrite(o) != 0) {
        cc->status = CLI_USAGE;
        return -1;
    }
    return open_log(cc) != 0 || open_warc(cc) != 0 ? -1 : 0;
}

/* A resumed crawl's memory from its state: the errors by cause, the decision's index,
 * digests and templates (page_blob_replay), the report's pages. 0, or -1 (said). */
static int replay_state(struct crawl_cmd *cc)
{
    struct run *run = &cc->run;
    char *ct = NULL;
    if (crawl_state_meta_text(run->state, "errors.causes", &ct) == CRAWL_OK)
        causes_load(run, ct);
    free(ct);
    struct page_replay replay = {run->decide, run->lsh ? dedup_lsh_get_params(run->lsh)->h : 0};
    if (crawl_state_foreach_page(run->state, page_blob_replay, &replay) != CRAWL_OK ||
        (run->report && cli_crawl_report_from_state(run->report, run->state) != CRAWL_OK)) {
        cli_error(CMD, "cannot resume the crawl: %s", crawl_state_error(run->state));
        return -1;
    }
    return 0;
}

/* The crawler over the run's callbacks; a resumed crawl's frontier and counters back
 * from its state. 0, or -1 with cc->status set. */
static int create_crawler(struct crawl_cmd *cc)
{
    struct run *run = &cc->run;
    struct options *o = &cc->o;
    o->co.focused = run->focused;
    o->co.process = process;
    o->co.record = record;
    o->co.progress = progress;
    o->co.userdata = run;
    o->co.state = run->state;
    o->co.before_commit = run->state ? before_commit : NULL;
    o->co.page_data_free = page_out_free;
    char err[512];
    enum crawl_code code = crawl_new(&o->co, &cc->c, err, sizeof err);
    if (code != CRAWL_OK) {
        if (code == CRAWL_EINVAL)
            cc->status = cli_usage_error(CMD, "%s", err);
        else
            cli_error(CMD, "%s", *err ? err : crawl_strerror(code));
        return -1;
    }
    if (!cc->resuming)
        return 0;
    int r = 0;
    if (crawl_resume(cc->c, &r) != CRAWL_OK) {
        cli_error(CMD, "cannot resume the crawl: %s", crawl_state_error(run->state));
        return -1;
    }
    const struct crawl_stats *rs = crawl_get_stats(cc->c);
    notice(o, "resuming the crawl in %s: %llu pages fetched so far", o->label,
           (unsigned long long)rs->fetched);
    if (crawl_state_requeued(run->state) > 0)
        notice(o, "%lld URLs in flight when the last run ended are queued again",
               (long long)crawl_state_requeued(run->state));
    return 0;
}

/* The seeds queued, a seed without a scheme as http:// (as wget does); one that is not
 * an http(s) URL is said and skipped. 0, or -1 with cc->status set (none valid). */
static int add_seeds(struct crawl_cmd *cc)
{
    size_t good = 0, n_seeds = cc->o.n_seeds;
    for (size_t i = 0; i < n_seeds + cc->n_file_seeds; i++) {
        const char *s = i < n_seeds ? cc->seeds[i] : cc->file_seeds[i - n_seeds];
        char *with_scheme = NULL;
        if (!has_scheme(s)) {
            size_t len = strlen(s) + sizeof "http://";
            if ((with_scheme = malloc(len)) != NULL) {
                snprintf(with_scheme, len, "http://%s", s);
                s = with_scheme;
            }
        }
        enum crawl_code sc = crawl_add_seed(cc->c, s);
        if (sc == CRAWL_EURL) {
            cli_error(CMD, "not an http(s) URL, skipped: %s", s);
        } else if (sc != CRAWL_OK) {
            cli_error(CMD, "cannot add seed %s: %s", s, crawl_strerror(sc));
            free(with_scheme);
            return -1;
        } else {
            good++;
        }
        free(with_scheme);
    }
    if (good == 0) {
        cc->status = cli_usage_error(CMD, "no valid seed URL");
        return -1;
    }
    return 0;
}

/* A new crawl's start committed to its state, with the WARC's warcinfo and the seeds
 * queued, and the files and method it must be resumed with. 0, or -1 (said). */
static int commit_start(struct crawl_cmd *cc)
{
    struct run *run = &cc->run;
    const struct options *o = &cc->o;
    if (!run->state || cc->resuming)
        return 0;
    if (crawl_state_set_meta_int(run->state, "started", 1) != CRAWL_OK ||
        crawl_state_set_meta_text(run->state, "warc", o->warc ? o->warc : "") != CRAWL_OK ||
        crawl_state_set_meta_text(run->state, "log", o->log ? o->log : "") != CRAWL_OK ||
        crawl_state_set_meta_text(run->state, "topic", run->topic_text ? run->topic_text : "") !=
            CRAWL_OK ||
        state_method_save(run) != CRAWL_OK || before_commit(run) != 0 ||
        crawl_state_commit(run->state) != CRAWL_OK) {
        cli_error(CMD, "cannot write the state: %s", crawl_state_error(run->state));
        return -1;
    }
    return 0;
}

/* The crawl, SIGINT and SIGTERM stopping it cleanly (crawl_stop) while it runs. Returns
 * crawl_run's code. */
static enum crawl_code run_crawl(struct crawl *c)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    struct sigaction old_int, old_term;
    g_crawl = c;
    sigaction(SIGINT, &sa, &old_int);
    sigaction(SIGTERM, &sa, &old_term);
    enum crawl_code code = crawl_run(c);
    sigaction(SIGINT, &old_int, NULL);
    sigaction(SIGTERM, &old_term, NULL);
    g_crawl = NULL;
    return code;
}

/* After the crawl: its failure said, the summary, and a crawl that fetched nothing
 * failed with the first error's words. Returns the exit status. */
static int crawl_outcome(struct crawl_cmd *cc, enum crawl_code code)
{
    struct run *run = &cc->run;
    const struct options *o = &cc->o;
    int status = CLI_OK;
    if (code != CRAWL_OK) {
        if (!run->failed && crawl_state_redis(run->state) && *crawl_state_error(run->state))
            cli_error(CMD, "crawl failed: %s", crawl_state_error(run->state)); /* Redis's words */
        else if (!run->failed)
            cli_error(CMD, "crawl failed: %s", crawl_strerror(code));
        status = CLI_RUNTIME;
    }
    const struct crawl_stats *fs = crawl_get_stats(cc->c);
    summary(run, fs, g_stopped);
    if (o->page_requisites && !o->quiet) /* the summary's last line */
        fprintf(stderr, "  page requisites: %llu fetched of %llu queued\n",
                (unsigned long long)fs->requisites, (unsigned long long)fs->requisites_enqueued);
    if (o->redis && !o->quiet)
        shared_summary(run);
    if (status == CLI_OK && !g_stopped && fs->errors > 0 && fs->pages == 0 && fs->redirects == 0 &&
        fs->filtered == 0) {
        /* nothing could be fetched: say why, as wget and curl do, and fail */
        if (run->first_error[0])
            cli_error(CMD, "no page could be fetched: %s", run->first_error);
        else
            cli_error(CMD, "no page could be fetched (%llu errors)",
                      (unsigned long long)fs->errors);
        status = CLI_RUNTIME;
    }
    if (g_stopped)
        cli_error(CMD, "stopped by a signal: in-flight transfers ended, files complete");
    if (run->report && write_report(run, o, cc->seeds, cc->file_seeds, cc->n_file_seeds) != CLI_OK)
        status = CLI_RUNTIME;
    return status;
}

/* The crawler freed, the WARC finished and the log written out and closed. CLI_OK, or
 * CLI_RUNTIME when one could not be (said). */
static int close_outputs(struct crawl_cmd *cc)
{
    struct run *run = &cc->run;
    int status = CLI_OK;
    crawl_free(cc->c);
    cc->c = NULL;
    if (run->warc) {
        const char *path = crawl_warc_writer_path(run->warc);
        char pathbuf[4096];
        snprintf(pathbuf, sizeof pathbuf, "%s", path ? path : "");
        if (crawl_warc_writer_close(run->warc) != CRAWL_OK) {
            cli_error(CMD, "cannot finish WARC %s", pathbuf);
            status = CLI_RUNTIME;
        }
        run->warc = NULL;
    }
    if (run->log) {
        if (fflush(run->log) != 0 || ferror(run->log)) {
            cli_error(CMD, "cannot write log %s: %s", cc->o.log, strerror(errno));
            status = CLI_RUNTIME;
        }
        if (!run->log_is_stdout && fclose(run->log) != 0) {
            cli_error(CMD, "cannot close log %s: %s", cc->o.log, strerror(errno));
            status = CLI_RUNTIME;
        }
        run->log = NULL;
    }
    return status;
}

/* Everything else the command holds, freed. */
static void crawl_cmd_release(struct crawl_cmd *cc)
{
    struct run *run = &cc->run;
    crawl_state_close(run->state);
    cli_crawl_report_free(run->report);
    free(cc->worker_warc);
    free(cc->worker_log);
    free(cc->warcinfo);
    filter_decide_free(run->decide);
    redisidx_close(run->ridx);
    dedup_index_free(run->index);
    dedup_lsh_free(run->lsh);
    topic_release(&run->topic);
    free(run->topic_text);
    pthread_mutex_destroy(&run->warc_lock);
    for (size_t i = 0; i < cc->n_file_seeds; i++)
        free(cc->file_seeds[i]);
    free(cc->file_seeds);
    free(cc->seeds);
    free(cc->warc_named);
    for (size_t i = 0; i < cc->o.n_owned; i++)
        free(cc->o.owned[i]);
}

/* Everything up to the crawl, step by step: 0 to crawl, -1 with cc->status set. */
static int crawl_prepare(struct crawl_cmd *cc)
{
    if (load_config_files(cc) != 0 || parse_command_line(cc) != 0 || check_options(cc) != 0 ||
        topic_setup(cc) != 0 || run_setup(cc) != 0 || open_outputs(cc) != 0)
        return -1;
    if (cc->resuming && replay_state(cc) != 0)
        return -1;
    cc->run.progress = !cc->o.quiet && isatty(2);
    if (create_crawler(cc) != 0 || add_seeds(cc) != 0 || commit_start(cc) != 0)
        return -1;
    dedup_crash_point("crawl-started");
    return 0;
}

int cmd_crawl(int argc, char **argv)
{
    struct crawl_cmd cc;
    int status = CLI_RUNTIME;
    if (crawl_cmd_init(&cc, argc, argv) == 0) {
        status = crawl_prepare(&cc) == 0 ? crawl_outcome(&cc, run_crawl(cc.c)) : cc.status;
        if (close_outputs(&cc) != CLI_OK)
            status = CLI_RUNTIME;
    }
    crawl_cmd_release(&cc);
    if (status == CLI_OK)
        die_by_stopping_signal();
    return status;
}
