#ifndef SERVER_SERVER_INT_H
#define SERVER_SERVER_INT_H
/*
 * Shared inside server/ only (and by tests/fuzz/fuzz_serve_request.c):
 *   buf.c      growing buffers with a cap, and the JSON they write
 *   parse.c    what a request is made of: the target's path and query, percent-decoding,
 *              ids, fingerprints in hex, NDJSON lines, the Authorization header, the
 *              Content-Type, the --listen address. Plain functions, no libmicrohttpd type.
 *   api.c      the endpoints: a request (method, target, headers, body) in, a reply
 *              (status, JSON) out, on the filter. No libmicrohttpd type either.
 *   metrics.c  request counters and the latency histogram (C11 atomics, no lock)
 *   conns.c    the connection deadlines that cut slow clients (slowloris)
 *   server.c   libmicrohttpd: the daemon, its callbacks, start and stop
 * Their functions are server__ (libuv's uv__ tier): server_ is server.h's API only.
 */
#include "server/server.h"

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct simcrawl_filter;

/* ==== buffers (buf.c) ==== */

/* A growing byte buffer that never holds more than max bytes: an append past the cap (or
 * out of memory) sets failed, keeps what was there and makes every later append a no-op,
 * so that a writer checks once at the end. p is NUL-terminated whenever it is not NULL. */
struct server_buf {
    char *p;
    size_t len, cap, max;
    int failed; /* 0, or SERVER_BUF_FULL / SERVER_BUF_NOMEM */
};
enum { SERVER_BUF_FULL = 1, SERVER_BUF_NOMEM = 2 };

void server__buf_init(struct server_buf *b, size_t max);
void server__buf_release(struct server_buf *b);
/* Makes room for n more bytes now (one allocation for a body of known length). */
void server__buf_reserve(struct server_buf *b, size_t n);
void server__buf_add(struct server_buf *b, const void *s, size_t n);
void server__buf_puts(struct server_buf *b, const char *s);
void server__buf_printf(struct server_buf *b, const char *fmt, ...)
    __attribute__((format(printf, 2, 3)));
/* A JSON string: s[0..n) in quotes, with ", \ and control characters escaped; a byte
 * that is not part of well-formed UTF-8 becomes U+FFFD (ids are valid UTF-8 already;
 * this keeps an error message that quotes a request's bytes valid JSON). */
void server__buf_json_str(struct server_buf *b, const char *s, size_t n);
/* A fingerprint as JSON: "16 lower-case hex digits". */
void server__buf_json_fp(struct server_buf *b, uint64_t fp);
/* Hands the bytes over: returns p (caller frees; NULL when empty) and its length. */
char *server__buf_take(struct server_buf *b, size_t *len);

/* ==== parsing (parse.c) ==== */

#define SERVER_ID_MAX_BYTES 65536u /* an id, in bytes (the library's cap) */

/* Percent-decodes s[0..n) into out (room for n + 1 bytes; NUL-terminated): %XX becomes
 * the byte XX, and with plus_is_space a '+' becomes a space (a query string, as HTML
 * forms, curl --data-urlencode and Python's urlencode write it). Returns the decoded
 * length, or -1 for a '%' not followed by two hex digits. */
long server__pct_decode(const char *s, size_t n, int plus_is_space, char *out);

/* The length of the well-formed UTF-8 sequence (RFC 3629 section 4) at s[0..n), n > 0;
 * 0 when there is none. */
size_t server__utf8_seq(const unsigned char *s, size_t n);
/* 1 when s[0..n) is well-formed UTF-8 (no overlong form, no surrogate, <= U+10FFFF). */
int server__utf8_valid(const char *s, size_t n);

/* Exactly 16 hex digits (either case) -> *fp. Returns 0, or -1. */
int server__hex16(const char *s, size_t n, uint64_t *fp);

/* Why id[0..n) cannot be a document id ("is empty", "contains a NUL byte", "is not valid
 * UTF-8", "is longer than 65536 bytes"), or NULL when it can. */
const char *server__id_problem(const char *id, size_t n);

/* Splits a request target "path?query" (either part may be empty). */
void server__target_split(const char *target, size_t n, const char **path, size_t *path_len,
                          const char **query, size_t *query_len);

/* One name=value pair of a query string, both still percent-encoded. */
struct server_param {
    const char *name, *value;
    size_t name_len, value_len;
    int has_value; /* "name" alone: 0 */
};
/* The next pair of query[*pos..n) (empty pairs, as in "a=1&&b=2", skipped): returns 1 and
 * moves *pos past it, or 0 at the end. */
int server__query_next(const char *query, size_t n, size_t *pos, struct server_param *p);

/* The endpoints (and a label for everything else), as /metrics counts them. */
enum server_endpoint {
    SERVER_EP_CHECK,       /* POST /v1/check, a page */
    SERVER_EP_CHECK_BULK,  /* POST /v1/check, NDJSON fingerprints */
    SERVER_EP_FINGERPRINT, /* POST /v1/fingerprint */
    SERVER_EP_NEIGHBORS,   /* GET /v1/neighbors */
    SERVER_EP_DOCUMENTS,   /* DELETE /v1/documents/ID */
    SERVER_EP_STATS,       /* GET /v1/stats */
    SERVER_EP_HEALTHZ,     /* GET /healthz */
    SERVER_EP_METRICS,     /* GET /metrics */
    SERVER_EP_OTHER,       /* an unknown path, or refused before routing (401) */
    SERVER_EP_COUNT
};
/* The label of e in /metrics: "check", "check_bulk", "fingerprint", ... */
const char *server__endpoint_name(enum server_endpoint e);

/* The endpoint of a (raw) path; for /v1/documents/ID, *rest is ID still percent-encoded.
 * SERVER_EP_CHECK stands for both kinds of /v1/check. */
enum server_endpoint server__route(const char *path, size_t n, const char **rest, size_t *rest_len);

/* What a request body is, by its Content-Type header (NULL: none). */
enum server__body_kind {
    SERVER_BODY_NONE,   /* no Content-Type */
    SERVER_BODY_PAGE,   /* a page: text/html and any type not below (the library decides
                         * what is HTML, as for a crawler's response) */
    SERVER_BODY_NDJSON, /* application/x-ndjson */
    SERVER_BODY_FORM,   /* application/x-www-form-urlencoded, multipart/form-data (curl
                         * -d and -F): the page would arrive mangled */
    SERVER_BODY_JSON,   /* application/json: one document, not lines */
};
enum server__body_kind server__body_kind(const char *content_type);

/* 1 when the Authorization header value is "Bearer TOKEN" with token[0..token_len)
 * (the scheme's case ignored); its time depends on token_len only, not on where the
 * first difference is. */
int server__bearer_ok(const char *header, const char *token, size_t token_len);

/*
 * One line of a bulk check: a JSON object with exactly the members "id" (a non-empty
 * string, a valid id) and "fingerprint" (a string of 16 hex digits), in any order,
 * surrounded by any JSON whitespace. Returns 0 with *id (caller frees; NUL-terminated)
 * and *fp, or -1 with why (lower-case, e.g. "fingerprint is not 16 hex digits").
 */
int server__ndjson_line(const char *line, size_t n, char **id, uint64_t *fp, char *why,
                        size_t why_size);

/* "ADDR:PORT" (a dotted IPv4 address, [IPv6], or localhost; a port 0..65535) into *ss.
 * Returns 0, or -1. */
int server__parse_listen(const char *s, struct sockaddr_storage *ss, socklen_t *len);
/* 1 for 127.0.0.0/8, ::1 and ::ffff:127.0.0.0/104. */
int server__addr_is_loopback(const struct sockaddr *sa);

/* ==== metrics (metrics.c) ==== */

#define SERVER_LATENCY_BUCKETS 14 /* histogram buckets before +Inf */
#define SERVER_STATUS_SLOTS 16    /* status codes counted apart (and "other") */

struct server_metrics {
    atomic_uint_fast64_t requests[SERVER_EP_COUNT][SERVER_STATUS_SLOTS];
    atomic_uint_fast64_t buckets[SERVER_LATENCY_BUCKETS + 1]; /* not cumulative */
    atomic_uint_fast64_t sum_ns, count;
};

void server__metrics_init(struct server_metrics *m);
/* One request answered with status after seconds. Lock-free. */
void server__metrics_record(struct server_metrics *m, enum server_endpoint e, unsigned status,
                            double seconds);
/* Requests recorded so far. */
uint64_t server__metrics_total(struct server_metrics *m);
/* The request counters and the latency histogram in Prometheus text format 0.0.4. */
void server__metrics_write(struct server_metrics *m, struct server_buf *b);

/* ==== the endpoints (api.c) ==== */

/* What the endpoints work with; fixed from start to stop. */
struct server_api {
    struct simcrawl_filter *f;
    const char *token; /* NULL: no Authorization needed */
    size_t token_len;
    size_t max_body;
    const char *index_path; /* NULL: in memory */
    double started;         /* server__now() at start */
    struct server_metrics *metrics;
    /* a server error (5xx) worth telling the operator: a lower-case message */
    void (*log)(void *userdata, const char *message);
    void *log_userdata;
};

/* A request as the endpoints see it. */
struct server_request {
    const char *method;
    const char *target; /* raw: path and query, percent-encoded */
    size_t target_len;
    const char *content_type;  /* NULL: none */
    const char *authorization; /* NULL: none */
    int has_length;            /* a Content-Length header came */
    uint64_t length;           /* its value */
    const char *body;          /* NULL before the body is read */
    size_t body_len;
};

/* An answer: status, headers and a body (JSON unless the endpoint says otherwise). */
struct server_reply {
    unsigned status;
    enum server_endpoint endpoint;
    const char *content_type; /* static */
    const char *allow;        /* static; a 405's Allow header */
    int authenticate;         /* a 401: send WWW-Authenticate: Bearer */
    int close;                /* close the connection after it */
    char *body;               /* caller frees (server__reply_release) */
    size_t len;
};
void server__reply_release(struct server_reply *r);
/* Sets r to status with {"error": MESSAGE}. */
void server__reply_error(struct server_reply *r, unsigned status, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

/*
 * The checks made as soon as the headers are in: authorization (401), path (404),
 * method (405), Content-Type (415), Content-Length over max_body (413). Returns 1 with
 * *out the final answer, or 0 when the body should be read (out->endpoint set) and
 * server__api_handle() called with it.
 */
int server__api_begin(const struct server_api *a, const struct server_request *r,
                      struct server_reply *out);
/* The answer to a whole request (r->body read, at most max_body bytes). */
void server__api_handle(const struct server_api *a, const struct server_request *r,
                        struct server_reply *out);

/* CLOCK_MONOTONIC in seconds. */
double server__now(void);

/* ==== slow clients (conns.c) ==== */

/* Where a connection is (each change is one atomic store or compare-and-swap). */
enum server_phase {
    SERVER_PHASE_IDLE,       /* between requests, or before the request line */
    SERVER_PHASE_HEADERS,    /* the request line is in; headers arriving */
    SERVER_PHASE_BODY,       /* headers in; the body arriving */
    SERVER_PHASE_RESPONDING, /* the whole request in: being answered */
    SERVER_PHASE_CUT,        /* too slow: cut by the reaper (408 sent when it could be) */
};
struct server_conns;
struct server_conn;

/* Starts the reaper thread, which cuts a connection idle, or in its headers, for more
 * than timeout seconds, or whose body arrives slower than SERVER_MIN_UPLOAD_RATE after
 * the first timeout seconds. Returns 0, or -1 (ENOMEM or no thread). */
int server__conns_start(struct server_conns **out, unsigned timeout);
/* Stops the reaper thread and frees c (every connection removed first). NULL-safe. */
void server__conns_stop(struct server_conns *c);
/* A connection opened on socket fd (NULL when out of memory: it is then never cut). */
struct server_conn *server__conns_add(struct server_conns *c, int fd);
/* The connection is closing: forget it (before its socket is closed). NULL-safe. */
void server__conns_remove(struct server_conns *c, struct server_conn *conn);
/* Moves conn to phase (now); returns 0, or -1 when the reaper cut it already. NULL-safe
 * (returns 0). */
int server__conn_phase(struct server_conn *conn, enum server_phase phase);
/* n more body bytes arrived. NULL-safe. */
void server__conn_body(struct server_conn *conn, size_t n);
/* 1 when the reaper cut conn. NULL-safe (0). */
int server__conn_was_cut(struct server_conn *conn);

#endif
