#ifndef SERVER_SERVER_H
#define SERVER_SERVER_H
/*
 * server: the HTTP dedup service behind `simcrawl serve` (docs/HTTP-API.md is the
 * contract). One durable libsimcrawl filter shared by every request, served by
 * libmicrohttpd's thread pool (epoll, one event loop per worker thread). Crawlers in any
 * language, on any number of machines, check pages or precomputed fingerprints against
 * that one index, look up neighbours, forget documents, and read stats and Prometheus
 * metrics. Needs only <simcrawl.h> (simcrawl_* functions, nothing internal) and
 * libmicrohttpd; changes no process-wide state (signals are the program's).
 *
 *   struct server_opts o;
 *   server_opts_init(&o);
 *   o.index_path = "site.idx";
 *   struct server *s;
 *   struct server_result r;
 *   if (server_start(&s, &o, &r) != SERVER_OK) { print r.detail; }
 *   ... wait for SIGTERM ...
 *   server_stop(s, &r);   // stops listening, finishes requests in flight, saves the index
 */
#include <stddef.h>
#include <stdint.h>

/* ==== errors ==== (0 is OK; codes only ever appended) */
enum server_code {
    SERVER_OK = 0,
    SERVER_ENOMEM,    /* out of memory */
    SERVER_EINVAL,    /* an option out of range (detail names it) */
    SERVER_EADDR,     /* the listen address is not ADDR:PORT */
    SERVER_ELOOPBACK, /* a non-loopback address without a token */
    SERVER_EFILTER,   /* the filter could not be opened (filter_code, detail) */
    SERVER_ELISTEN,   /* libmicrohttpd could not listen (address in use, ...) */
    SERVER_ESAVE,     /* closing the filter failed: the index was not saved */
    SERVER_ETHREAD,   /* a thread could not be started */
};

/* A short lower-case description of code: "the listen address is not ADDR:PORT". */
const char *server_strerror(enum server_code code);

/* Defaults and limits (docs/HTTP-API.md, "Limits"); each is an option of simcrawl serve. */
#define SERVER_LISTEN_DEFAULT "127.0.0.1:8470"
#define SERVER_MAX_BODY_DEFAULT ((size_t)64 * 1024 * 1024) /* --max-body: a request body */
#define SERVER_MAX_BODY_LIMIT ((size_t)1 << 30)
#define SERVER_TIMEOUT_DEFAULT 30u /* --timeout: seconds, see below */
#define SERVER_TIMEOUT_MAX 3600u
#define SERVER_MAX_CONNECTIONS_DEFAULT 512u /* --max-connections */
#define SERVER_MAX_CONNECTIONS_LIMIT 65536u
#define SERVER_THREADS_MAX 256u        /* --threads (0: one per CPU) */
#define SERVER_TOKEN_MAX 4096u         /* bytes of a bearer token */
#define SERVER_MIN_UPLOAD_RATE 16384.0 /* bytes/s a body must keep up after --timeout */

struct server_opts {
    const char *listen;             /* "ADDR:PORT" (IPv4, [IPv6] or localhost; port 0: any free
                                     * port, see server_port()); NULL: SERVER_LISTEN_DEFAULT */
    const char *index_path;         /* the filter's index file; NULL: in memory */
    unsigned k;                     /* the filter's k, 0..7 (0 with an existing index: its k) */
    const char *method;             /* "simhash" or "minhash"; NULL: simhash */
    double threshold;               /* minhash: the Jaccard estimate of a near-duplicate, 0..1
                                     * (0: the index's, or 0.8 for a new one) */
    const char *fsync;              /* "always", "interval", "no"; NULL: the library's default */
    double lock_wait;               /* seconds to wait for the index's writer lock */
    const char *token;              /* bearer token every request must carry; NULL: none, and
                                     * then only loopback addresses may be listened on */
    size_t max_body;                /* bytes of a request body at most (413 over it) */
    unsigned threads;               /* libmicrohttpd worker threads; 0: one per CPU */
    unsigned max_connections;       /* connections at once; more wait to be accepted */
    unsigned timeout;               /* seconds: an idle connection is closed, a request's
                                     * headers must arrive within it, its body at a rate of at
                                     * least SERVER_MIN_UPLOAD_RATE after it (408 otherwise) */
    int access_log_fd;              /* one line per request written here; -1: none */
    const char *probe_lines;        /* the probe's lines: "off", "on", "auto"; NULL: off
                                     * (simcrawl_options_set_probe_lines) */
    uint64_t probe_lines_min;       /* fingerprints for lines; 0: the library's default */
    uint64_t probe_lines_max_bytes; /* "auto"'s cap; 0: a quarter of physical memory */
    /* warnings (the filter's, libmicrohttpd's, rate-limited): a lower-case message
     * without a newline, from any thread; NULL: dropped */
    void (*log)(void *userdata, const char *message);
    void *log_userdata;
};

/* Fills o with the defaults above (no token, in memory, access log off). */
void server_opts_init(struct server_opts *o);

/* Why server_start() or server_stop() failed: the library's code when the filter was at
 * fault (a negative SIMCRAWL_E... code, 0 otherwise) and a lower-case sentence. */
struct server_result {
    int filter_code;
    char detail[512];
    uint64_t documents, requests; /* server_stop(): the index's documents when it was
                                   * closed, and the requests answered in all */
};

struct server;

/*
 * Opens the filter and starts listening. On success returns SERVER_OK with *out (stop it
 * with server_stop()); on failure a code, *out = NULL, and res (may be NULL) says why.
 */
int server_start(struct server **out, const struct server_opts *o, struct server_result *res)
    __attribute__((warn_unused_result));

/* The port listened on (the kernel's choice for port 0). */
unsigned short server_port(const struct server *s);
/* "127.0.0.1:8470" or "[::1]:8470": the address listened on, with the real port. */
void server_address(const struct server *s, char *buf, size_t size);
/* The documents in the filter, and its k. Thread-safe. */
uint64_t server_documents(const struct server *s);
unsigned server_k(const struct server *s);
/* The filter's method ("simhash", "minhash") and its threshold (0 for simhash). */
const char *server_method(const struct server *s);
double server_threshold(const struct server *s);
/* Requests answered so far, and requests in flight (headers received, not yet done). */
uint64_t server_requests(const struct server *s);
unsigned server_in_flight(const struct server *s);

/*
 * Stops: the listening socket is closed at once (new connections are refused), requests
 * already in flight are finished (for up to the timeout; a request that starts on a
 * kept-alive connection meanwhile gets 503), then every connection is closed, the worker
 * threads joined and the filter closed, which saves the index. Always frees s; returns
 * SERVER_OK, or SERVER_ESAVE with res saying why the index could not be saved.
 */
int server_stop(struct server *s, struct server_result *res);

#endif
