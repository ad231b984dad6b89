/*
 * simcrawl serve [--config FILE] [--listen ADDR:PORT] [--index FILE] [--k N]
 *                [--token-file FILE] [options]
 *
 * The HTTP dedup service (server/, docs/HTTP-API.md): crawlers in any language, on any
 * number of machines, check pages against one shared, durable index. This command is the
 * wiring: options from the [serve] section of a config file (cli/config.c) and the command
 * line, which wins; the bearer token read from its file; then server_start(), one line on
 * stderr once listening (with the real port, so that --listen 127.0.0.1:0 can be used by
 * scripts), and a wait for SIGINT or SIGTERM, which stops the service cleanly: no new
 * connection, requests in flight finished, the index saved, exit 0.
 *
 * Signals are taken with sigwait() in the main thread: they are blocked before the
 * server's threads start (which inherit the mask), so no handler runs inside
 * libmicrohttpd or libsimcrawl. SIGPIPE is ignored (a client that goes away is a closed
 * connection, not a dead service).
 */
#include "cli/cli.h"
#include "cli/inputs.h"
#include "cli/minhash.h"
#include "server/server.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define CMD "serve"
#define VALUES_MAX 32 /* settings copied from config files */

struct options {
    struct server_opts so;
    int k_given;
    int threshold_given;
    int lines_max_given;
    const char *token_file, *access_log;
    int quiet;
    char *owned[VALUES_MAX]; /* strings copied from config files */
    size_t n_owned;
};

static void usage(FILE *out)
{
    fprintf(out,
            "usage: simcrawl serve [--config FILE] [--listen ADDR:PORT] [--index FILE] [--k N]\n"
            "                      [--token-file FILE] [options]\n"
            "\n"
            "Serves the near-duplicate filter over HTTP (docs/HTTP-API.md): POST /v1/check\n"
            "(a page, or NDJSON fingerprints), POST /v1/fingerprint, GET /v1/neighbors,\n"
            "DELETE /v1/documents/ID, GET /v1/stats, /healthz, /metrics. One line on stderr\n"
            "once listening; SIGINT or SIGTERM stops it: no new connection, the requests in\n"
            "flight finished, the index saved, exit 0.\n"
            "\n"
            "options (each but --config, --quiet and --help is also a key of the [serve]\n"
            "section of a config file: listen = 127.0.0.1:8080; the command line wins):\n"
            "  --config FILE          read options from an INI file first\n"
            "  --listen ADDR:PORT     where to listen (default %s); IPv4, [IPv6] or\n"
            "                         localhost; port 0: a free port, printed on stderr.\n"
            "                         Without --token-file only loopback addresses\n"
            "                         (127.0.0.0/8, ::1) are allowed\n"
            "  --index FILE           the index, loaded if it exists, kept on disk (every\n"
            "                         page answered added is journaled first: a kill -9\n"
            "                         loses none); default: in memory. Or an index on\n"
            "                         Redis, shared by every serve, crawl and program on\n"
            "                         it: redis://HOST[:PORT][/DB][?prefix=NAME] or\n"
            "                         unix:///PATH[?db=N&prefix=NAME] (docs/REDIS-INDEX.md)\n"
            "  --k N                  near-duplicate Hamming distance, 0..7 (default 3, or\n"
            "                         the index's); the simhash method's knob\n"
            "  --method simhash|minhash  the near-duplicate method (default simhash):\n"
            "                         minhash keeps MinHash signatures of word shingles in\n"
            "                         an LSH index (docs/MINHASH.md); an index of the other\n"
            "                         method is refused\n"
            "  --threshold J          minhash: a near-duplicate's estimated Jaccard\n"
            "                         similarity, 0 < J <= 1 (default 0.8, or the index's)\n"
            "  --fsync always|interval|no  when the journal is fsync'ed (default interval):\n"
            "                         what a power cut may lose\n"
            "  --lock-wait SECONDS    wait for another writer's index lock (default 30)\n"
            "  --token-file FILE      a file of one line, the bearer token every request must\n"
            "                         send (Authorization: Bearer TOKEN)\n"
            "  --max-body BYTES       a request body at most (default 67108864; 413 over it)\n"
            "  --threads N            worker threads (default 0: one per CPU)\n"
            "  --max-connections N    connections at once (default %u)\n"
            "  --timeout SECONDS      idle connections are closed after it; a request's\n"
            "                         headers must arrive within it and its body at %.0f\n"
            "                         bytes/s after it, or 408 (default %u)\n"
            "  --access-log FILE      one line per request: time, client, request, status,\n"
            "                         seconds ('-': stderr; default none)\n"
            "  --probe-lines off|on|auto  memory for speed (default off): each table of the\n"
            "                         index again as cache lines, so that a check reads one\n"
            "                         line a table, not two in a row: 1.2-1.6x the queries/s\n"
            "                         against 10M fingerprints, for 8 bytes a table and 4\n"
            "                         more a slot, 1.25-2.5 slots a fingerprint (10 tables:\n"
            "                         105-210 bytes a fingerprint, 1.41 GB at 10M), built in\n"
            "                         memory once the index has answered a quarter as many\n"
            "                         checks as it holds (a pause of ~4 CPU s at 10M), again\n"
            "                         after merges; never saved. on: for an index of at\n"
            "                         least --probe-lines-min fingerprints whose keys are\n"
            "                         long enough (made by `index add` for millions; a new\n"
            "                         index of serve's has 16-bit keys: none); auto: as on\n"
            "                         while they fit in --probe-lines-max-bytes. Not for\n"
            "                         --method minhash nor an index on Redis. GET /v1/stats\n"
            "                         says their state and bytes (docs/HTTP-API.md)\n"
            "  --probe-lines-min N    fingerprints an index holds for lines (default 2097152)\n"
            "  --probe-lines-max-bytes BYTES  auto: the most memory for lines (default: a\n"
            "                         quarter of physical memory)\n"
            "  --quiet                no line when listening and stopping\n"
            "exit status: 0 stopped by SIGINT/SIGTERM, 1 usage (also a non-loopback --listen\n"
            "without --token-file), 2 runtime (index, address in use, save).\n",
            SERVER_LISTEN_DEFAULT, SERVER_MAX_CONNECTIONS_DEFAULT, SERVER_MIN_UPLOAD_RATE,
            SERVER_TIMEOUT_DEFAULT);
}

static const char *keep(struct options *o, const char *v)
{
    if (o->n_owned >= VALUES_MAX)
        return NULL;
    char *c = strdup(v);
    if (c)
        o->owned[o->n_owned++] = c;
    return c;
}

/* Applies one option (name without "--"). Returns 0, or -1 after printing why. */
static int set_option(struct options *o, const char *name, const char *v, const char *where)
{
    long n;
    struct server_opts *so = &o->so;
#define BAD(what)                                                                                  \
    do {                                                                                           \
        cli_usage_error(CMD, "%s%s--%s: %s, got '%s'", where ? where : "", where ? ": " : "",      \
                        name, what, v);                                                            \
        return -1;                                                                                 \
    } while (0)
    if (strcmp(name, "listen") == 0) {
        if (!*v)
            BAD("ADDR:PORT");
        so->listen = v;
    } else if (strcmp(name, "index") == 0) {
        so->index_path = *v ? v : NULL;
    } else if (strcmp(name, "k") == 0) {
        if (cli_parse_long(v, 0, 7, &n))
            BAD("a Hamming distance from 0 to 7");
        so->k = (unsigned)n;
        o->k_given = 1;
    } else if (strcmp(name, "method") == 0) {
        if (strcmp(v, "simhash") != 0 && strcmp(v, "minhash") != 0)
            BAD("simhash or minhash");
        so->method = v;
    } else if (strcmp(name, "threshold") == 0) {
        if (cli_parse_threshold(v, &so->threshold) != 0)
            BAD("a Jaccard similarity, 0 < J <= 1");
        o->threshold_given = 1;
    } else if (strcmp(name, "fsync") == 0) {
        if (strcmp(v, "always") != 0 && strcmp(v, "interval") != 0 && strcmp(v, "no") != 0)
            BAD("always, interval or no");
        so->fsync = v;
    } else if (strcmp(name, "lock-wait") == 0) {
        if (cli_parse_long(v, 0, CLI_LOCK_WAIT_MAX, &n))
            BAD("a whole number of seconds");
        so->lock_wait = (double)n;
    } else if (strcmp(name, "token-file") == 0) {
        o->token_file = *v ? v : NULL;
    } else if (strcmp(name, "max-body") == 0) {
        if (cli_parse_long(v, 1, (long)SERVER_MAX_BODY_LIMIT, &n))
            BAD("bytes, 1 to 1073741824");
        so->max_body = (size_t)n;
    } else if (strcmp(name, "threads") == 0) {
        if (cli_parse_long(v, 0, SERVER_THREADS_MAX, &n))
            BAD("0 (one per CPU) to 256 threads");
        so->threads = (unsigned)n;
    } else if (strcmp(name, "max-connections") == 0) {
        if (cli_parse_long(v, 1, SERVER_MAX_CONNECTIONS_LIMIT, &n))
            BAD("1 to 65536 connections");
        so->max_connections = (unsigned)n;
    } else if (strcmp(name, "timeout") == 0) {
        if (cli_parse_long(v, 1, SERVER_TIMEOUT_MAX, &n))
            BAD("whole seconds, 1 to 3600");
        so->timeout = (unsigned)n;
    } else if (strcmp(name, "access-log") == 0) {
        o->access_log = *v ? v : NULL;
    } else if (strcmp(name, "probe-lines") == 0) {
        if (strcmp(v, "off") != 0 && strcmp(v, "on") != 0 && strcmp(v, "auto") != 0)
            BAD("off, on or auto");
        so->probe_lines = v;
    } else if (strcmp(name, "probe-lines-min") == 0) {
        if (cli_parse_long(v, 1, (long)UINT32_MAX - 1, &n))
            BAD("fingerprints, 1 to 4294967294");
        so->probe_lines_min = (uint64_t)n;
    } else if (strcmp(name, "probe-lines-max-bytes") == 0) {
        if (cli_parse_long(v, 1, LONG_MAX, &n))
            BAD("bytes, at least 1");
        so->probe_lines_max_bytes = (uint64_t)n;
        o->lines_max_given = 1;
    } else {
        cli_unknown_key(CMD, where, name, usage);
        return -1;
    }
#undef BAD
    return 0;
}

/* A key of the [serve] section of a config file. */
static int on_config(void *userdata, const char *name, const char *value, const char *where)
{
    struct options *o = userdata;
    const char *v = keep(o, value);
    if (!v) {
        cli_error(CMD, "%s: more than %d settings", where, VALUES_MAX);
        return -1;
    }
    return set_option(o, name, v, where);
}

/*
 * The bearer token: the one line of path, its line end ("\n" or "\r\n") stripped. It
 * must be 1 to SERVER_TOKEN_MAX bytes of visible ASCII (RFC 6750's b64token is a subset:
 * whatever a client can put in a header unchanged). Returns it (caller frees), or NULL
 * after saying why. A token file others can read gets a warning, as ssh does.
 */
static char *read_token(const char *path)
{
    char *tok = NULL;
    FILE *f = fopen(path, "r");
    if (!f) {
        cli_error(CMD, "cannot read token file %s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        cli_error(CMD, "token file %s is not a regular file", path);
        goto fail;
    }
    if (st.st_mode & (S_IRGRP | S_IROTH))
        cli_error(CMD, "warning: token file %s is readable by others (chmod 600 it)", path);
    tok = calloc(1, SERVER_TOKEN_MAX + 3);
    if (!tok)
        goto fail;
    size_t n = fread(tok, 1, SERVER_TOKEN_MAX + 2, f);
    if (ferror(f)) {
        cli_error(CMD, "cannot read token file %s: %s", path, strerror(errno));
        goto fail;
    }
    if (n > 0 && tok[n - 1] == '\n')
        tok[--n] = '\0';
    if (n > 0 && tok[n - 1] == '\r')
        tok[--n] = '\0';
    if (n == 0) {
        cli_error(CMD, "token file %s is empty", path);
        goto fail;
    }
    if (n > SERVER_TOKEN_MAX || fgetc(f) != EOF) {
        cli_error(CMD, "token file %s: the token is longer than %u bytes", path, SERVER_TOKEN_MAX);
        goto fail;
    }
    for (size_t i = 0; i < n; i++)
        if ((unsigned char)tok[i] <= 0x20 || (unsigned char)tok[i] >= 0x7f) {
            cli_error(CMD,
                      "token file %s: the token must be one line of visible ASCII "
                      "characters (byte %zu is not)",
                      path, i + 1);
            goto fail;
        }
    fclose(f);
    return tok;
fail:
    free(tok);
    fclose(f);
    return NULL;
}

static void warn_stderr(void *userdata, const char *message)
{
    (void)userdata;
    fprintf(stderr, "simcrawl serve: warning: %s\n", message);
}

/* The command line's options: those of set_option() (each also a config key) by name,
 * --config, --quiet and --help. */
enum { OPT_SET = 256, OPT_CONFIG };
static const struct option longopts[] = {
    {"config", required_argument, NULL, OPT_CONFIG},
    {"listen", required_argument, NULL, OPT_SET},
    {"index", required_argument, NULL, OPT_SET},
    {"k", required_argument, NULL, OPT_SET},
    {"method", required_argument, NULL, OPT_SET},
    {"threshold", required_argument, NULL, OPT_SET},
    {"fsync", required_argument, NULL, OPT_SET},
    {"lock-wait", required_argument, NULL, OPT_SET},
    {"token-file", required_argument, NULL, OPT_SET},
    {"max-body", required_argument, NULL, OPT_SET},
    {"threads", required_argument, NULL, OPT_SET},
    {"max-connections", required_argument, NULL, OPT_SET},
    {"timeout", required_argument, NULL, OPT_SET},
    {"access-log", required_argument, NULL, OPT_SET},
    {"probe-lines", required_argument, NULL, OPT_SET},
    {"probe-lines-min", required_argument, NULL, OPT_SET},
    {"probe-lines-max-bytes", required_argument, NULL, OPT_SET},
    {"quiet", no_argument, NULL, 'q'},
    {"help", no_argument, NULL, 'h'},
    {NULL, 0, NULL, 0}};

/* Options from --config files (a first pass), then the command line. CLI_OK, -1 after
 * --help, or an exit status. */
static int parse_args(struct options *o, int argc, char **argv)
{
    struct cli_getopt g;
    cli_getopt_init(&g, CMD, argc, argv, "hq", longopts, usage);
    for (int c; (c = cli_getopt_next(&g)) != CLI_GETOPT_END;) {
        if (c == CLI_GETOPT_HELP)
            return -1;
        if (c == CLI_GETOPT_ERROR)
            return CLI_USAGE;
        if (!g.value && g.opt && g.opt->has_arg == required_argument)
            /* said now: this pass moves operands after the options, where the second
             * would take one for the missing value */
            return cli_usage_error(CMD, "option '%s' needs a value", g.name);
        if (c == OPT_CONFIG && cli_config_load(CMD, g.value, "serve", on_config, o) != 0)
            return CLI_USAGE;
    }
    cli_getopt_init(&g, CMD, argc, argv, "hq", longopts, usage);
    for (int c; (c = cli_getopt_next(&g)) != CLI_GETOPT_END;) {
        if (c == 'q')
            o->quiet = 1;
        else if (c == OPT_SET && set_option(o, g.opt->name, g.value, NULL) != 0)
            return CLI_USAGE;
    }
    if (g.optind < argc)
        return cli_usage_error(CMD, "unexpected argument '%s' (serve takes options only)",
                               argv[g.optind]);
    return CLI_OK;
}

/* The access log's descriptor: 0, or -1 after saying why. */
static int open_access_log(struct options *o)
{
    if (!o->access_log)
        return 0;
    if (strcmp(o->access_log, "-") == 0) {
        o->so.access_log_fd = STDERR_FILENO;
        return 0;
    }
    o->so.access_log_fd = open(o->access_log, O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0644);
    if (o->so.access_log_fd < 0) {
        cli_error(CMD, "cannot open access log %s: %s", o->access_log, strerror(errno));
        return -1;
    }
    return 0;
}

static const char *signal_name(int sig)
{
    return sig == SIGINT ? "SIGINT" : sig == SIGTERM ? "SIGTERM" : "signal";
}

/* Serves until SIGINT or SIGTERM. */
static int serve(struct options *o, const sigset_t *stop)
{
    struct server *s;
    struct server_result res;
    int rc = server_start(&s, &o->so, &res);
    if (rc != SERVER_OK) {
        cli_error(CMD, "%s", res.detail[0] ? res.detail : server_strerror(rc));
        return rc == SERVER_ELOOPBACK || rc == SERVER_EADDR || rc == SERVER_EINVAL ? CLI_USAGE
                                                                                   : CLI_RUNTIME;
    }
    char addr[80];
    server_address(s, addr, sizeof addr);
    uint64_t docs = server_documents(s);
    if (!o->quiet) {
        char how[64];
        if (strcmp(server_method(s), "minhash") == 0)
            snprintf(how, sizeof how, "minhash, threshold %g", server_threshold(s));
        else
            snprintf(how, sizeof how, "k %u", server_k(s));
        const char *lines = o->so.probe_lines; /* "off" when not given: cmd_serve */
        fprintf(stderr, "simcrawl serve: listening on %s, %s%s (%llu document%s, %s%s%s)%s\n", addr,
                o->so.index_path ? "index " : "in memory", o->so.index_path ? o->so.index_path : "",
                (unsigned long long)docs, docs == 1 ? "" : "s", how,
                strcmp(lines, "off") ? ", probe lines " : "", strcmp(lines, "off") ? lines : "",
                o->so.token ? ", bearer token required" : "");
    }
    int sig = 0;
    while (sigwait(stop, &sig) != 0)
        ;
    unsigned busy = server_in_flight(s);
    if (!o->quiet)
        fprintf(stderr, "simcrawl serve: %s: stopping (%u request%s in flight)\n", signal_name(sig),
                busy, busy == 1 ? "" : "s");
    rc = server_stop(s, &res);
    if (rc != SERVER_OK) {
        cli_error(CMD, "%s", res.detail);
        return CLI_RUNTIME;
    }
    if (!o->quiet)
        fprintf(stderr, "simcrawl serve: stopped after %llu request%s; %s%s (%llu document%s)\n",
                (unsigned long long)res.requests, res.requests == 1 ? "" : "s",
                o->so.index_path ? "index saved: " : "in memory, not saved",
                o->so.index_path ? o->so.index_path : "", (unsigned long long)res.documents,
                res.documents == 1 ? "" : "s");
    return CLI_OK;
}

int cmd_serve(int argc, char **argv)
{
    struct options o;
    memset(&o, 0, sizeof o);
    server_opts_init(&o.so);
    o.so.lock_wait = (double)CLI_LOCK_WAIT_DEFAULT;
    o.so.log = warn_stderr;
    char *token = NULL;
    int status = parse_args(&o, argc, argv);
    if (status != CLI_OK) {
        status = status < 0 ? CLI_OK : status; /* --help */
        goto done;
    }
    status = CLI_USAGE;
    if (o.token_file && !(token = read_token(o.token_file)))
        goto done;
    o.so.token = token;
    int minhash = o.so.method && strcmp(o.so.method, "minhash") == 0;
    if (o.threshold_given && !minhash) {
        cli_usage_error(CMD, "--threshold is the minhash method's (--method minhash); the "
                             "simhash method's knob is --k");
        goto done;
    }
    if (o.k_given && minhash) {
        cli_usage_error(CMD, "--k is the simhash method's; the minhash method's knob is "
                             "--threshold");
        goto done;
    }
    if (!o.so.probe_lines)
        o.so.probe_lines = "off"; /* the default, spelled out for the checks and the banner */
    const char *lines = o.so.probe_lines;
    int redis = cli_is_redis_url(o.so.index_path);
    if (strcmp(lines, "on") == 0 && (minhash || redis)) {
        cli_usage_error(CMD,
                        "--probe-lines on is for a simhash index in this process's memory, "
                        "not %s (the lines are the in-memory tables' own)",
                        minhash ? "for --method minhash" : "for an index on Redis");
        goto done;
    }
    if (o.lines_max_given && strcmp(lines, "auto") != 0) {
        cli_usage_error(CMD, "--probe-lines-max-bytes is the cap of --probe-lines auto");
        goto done;
    }
    struct stat st;
    if (!o.k_given) /* an existing index (a file, or any on Redis): its k */
        o.so.k = o.so.index_path && (redis || stat(o.so.index_path, &st) == 0) ? 0 : 3;
    if (open_access_log(&o) != 0)
        goto done;
    sigset_t stop;
    sigemptyset(&stop);
    sigaddset(&stop, SIGINT);
    sigaddset(&stop, SIGTERM);
    pthread_sigmask(SIG_BLOCK, &stop, NULL); /* before any thread starts */
    signal(SIGPIPE, SIG_IGN);
    status = serve(&o, &stop);
done:
    if (o.so.access_log_fd > STDERR_FILENO)
        close(o.so.access_log_fd);
    free(token);
    for (size_t i = 0; i < o.n_owned; i++)
        free(o.owned[i]);
    return status;
}
