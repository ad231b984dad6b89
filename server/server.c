/*
 * The service's HTTP side (server/server.h): libmicrohttpd 0.9.75 with its own thread
 * pool, each worker thread running an epoll loop (MHD_USE_EPOLL_INTERNAL_THREAD and
 * MHD_OPTION_THREAD_POOL_SIZE), in front of one libsimcrawl filter that every request
 * shares (its check is atomic and thread-safe). What an endpoint answers is api.c's
 * business; this file moves bytes between libmicrohttpd and it, enforces the caps, counts,
 * logs, and stops cleanly.
 *
 * HOW IT WORKS (one request)
 *  1. on_uri (MHD_OPTION_URI_LOG_CALLBACK), as soon as the request line is in: the
 *     request's context is made with the raw target (path and query still percent-
 *     encoded: api.c decodes them, so that "%2F" in an id stays a slash of the id), the
 *     connection moves to its HEADERS phase (conns.c) and the request counts as in flight.
 *  2. on_access, first call, the headers in: the connection moves to BODY (unless the
 *     reaper cut it first); server__api_begin() decides everything that needs no body
 *     (token, path, method, Content-Type, Content-Length, query). An answer then is
 *     queued before the body is read, and libmicrohttpd closes the connection after it
 *     rather than read an upload nobody wants.
 *  3. on_access, next calls: the body, into a buffer capped at --max-body (413 past it).
 *  4. on_access, last call: server__api_handle() answers, the reply is queued.
 *     Every reply is queued by queue(), which first moves the connection to RESPONDING:
 *     when the reaper cut it first, its 408 is the answer and the reply is dropped.
 *  5. on_completed: counted in the metrics, written to the access log, freed; the
 *     connection is IDLE again (kept alive for the next request).
 * Stopping (server_stop): the listening socket is closed (MHD_quiesce_daemon), requests
 * in flight are waited for, up to the timeout (one that begins meanwhile on a kept-alive
 * connection gets 503 and the connection is closed), then the daemon is stopped and the
 * filter closed, which saves the index.
 */
#include "server/server_int.h"
#include "filter/simcrawl.h"

#include <microhttpd.h>

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CONN_MEMORY ((size_t)64 * 1024) /* per connection: request line, headers, buffers */
#define LOG_BURST 5                     /* libmicrohttpd messages a second, at most */
#define ACCESS_TARGET_MAX 2048          /* bytes of a target in the access log */
/* libmicrohttpd's idle timeout is --timeout + REAPER_FIRST seconds: conns.c's deadlines
 * (--timeout) fire first and answer 408; libmicrohttpd's closes only a connection stalled
 * while an answer is sent, which conns.c leaves alone */
#define REAPER_FIRST 1u
#define STOP_POLL_NS 10000000L /* how often server_stop() looks at in_flight */
/* a body's buffer is made this large at once when Content-Length says so, then grows as
 * bytes arrive: a client that declares 64 MiB and sends nothing holds 1 MiB */
#define RESERVE_MAX ((size_t)1 << 20)
/* body bytes read and dropped past the cap, to answer 413 rather than cut the connection */
#define DISCARD_MAX(max_body) ((max_body) > ((size_t)1 << 20) ? (max_body) : ((size_t)1 << 20))

struct server {
    struct MHD_Daemon *d;
    struct simcrawl_filter *f;
    struct server_api api;
    struct server_metrics metrics;
    struct server_conns *conns;
    atomic_uint in_flight; /* requests from on_uri to on_completed */
    atomic_int stopping;
    atomic_int started; /* the daemon is up (last_mhd_error no longer written) */
    struct sockaddr_storage addr;
    socklen_t addr_len;
    unsigned short port;
    unsigned timeout;
    size_t max_body;
    char *token, *index_path;
    int access_log_fd;
    void (*log)(void *userdata, const char *message);
    void *log_userdata;
    atomic_uint_fast64_t log_second; /* the second LOG_BURST counts in */
    atomic_uint log_count, log_dropped;
    char last_mhd_error[256]; /* while starting: why libmicrohttpd could not */
};

/* One request (libmicrohttpd's con_cls), from on_uri to on_completed. */
struct request {
    struct server_conn *conn;
    char *target;
    size_t target_len;
    double start;
    int begun, late;
    int keep_body;      /* a POST: the body is read into body */
    uint64_t discarded; /* body bytes not kept */
    unsigned status;    /* the answer's, once queued */
    enum server_endpoint endpoint;
    struct server_buf body;
    char method[16];
    char client[INET6_ADDRSTRLEN];
};

const char *server_strerror(enum server_code code)
{
    switch (code) {
    case SERVER_OK:
        return "success";
    case SERVER_ENOMEM:
        return "out of memory";
    case SERVER_EINVAL:
        return "an option is out of range";
    case SERVER_EADDR:
        return "the listen address is not ADDR:PORT";
    case SERVER_ELOOPBACK:
        return "a non-loopback address needs a token";
    case SERVER_EFILTER:
        return "the index could not be opened";
    case SERVER_ELISTEN:
        return "cannot listen";
    case SERVER_ESAVE:
        return "the index could not be saved";
    case SERVER_ETHREAD:
        return "a thread could not be started";
    }
    return "unknown code";
}

void server_opts_init(struct server_opts *o)
{
    memset(o, 0, sizeof *o);
    o->listen = SERVER_LISTEN_DEFAULT;
    o->k = 3;
    o->lock_wait = 30;
    o->max_body = SERVER_MAX_BODY_DEFAULT;
    o->max_connections = SERVER_MAX_CONNECTIONS_DEFAULT;
    o->timeout = SERVER_TIMEOUT_DEFAULT;
    o->access_log_fd = -1;
}

static void warn(struct server *s, const char *msg)
{
    if (s->log)
        s->log(s->log_userdata, msg);
}

/* api.c's 5xx messages */
static void api_log(void *userdata, const char *msg)
{
    warn(userdata, msg);
}

/* Messages libmicrohttpd writes about one request that went wrong: the client has its
 * answer (or left), /metrics counts it; the operator's log need not repeat it. */
static const char *const per_request_messages[] = {
    "Error processing request",            /* it answered 400, 413, 414, 431 itself */
    "Application reported internal error", /* we closed it: cut, over the cap */
    "Connection socket is closed",         /* the client left, or the reaper cut it */
};

/*
 * libmicrohttpd's messages (MHD_USE_ERROR_LOG) to the log callback, at most LOG_BURST a
 * second (a flood of bad clients must not flood stderr), the rest counted and said once.
 * While starting, the last one is kept: it says why the daemon could not listen.
 */
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
    __attribute__((format(printf, 2, 0)));
static void on_mhd_log(void *cls, const char *fmt, va_list ap)
{
    struct server *s = cls;
    char msg[300];
    int n = snprintf(msg, sizeof msg, "libmicrohttpd: ");
    vsnprintf(msg + n, sizeof msg - (size_t)n, fmt, ap);
    size_t len = strlen(msg);
    while (len > 0 && (msg[len - 1] == '\n' || msg[len - 1] == '\r' || msg[len - 1] == ' '))
        msg[--len] = '\0';
    if (!atomic_load(&s->started))
        snprintf(s->last_mhd_error, sizeof s->last_mhd_error, "%s", msg + n);
    for (size_t i = 0; i < sizeof per_request_messages / sizeof *per_request_messages; i++)
        if (strncmp(msg + n, per_request_messages[i], strlen(per_request_messages[i])) == 0)
            return;
    uint64_t sec = (uint64_t)server__now();
    uint64_t was = atomic_load(&s->log_second);
    if (was != sec && atomic_compare_exchange_strong(&s->log_second, &was, sec)) {
        unsigned dropped = atomic_exchange(&s->log_dropped, 0);
        atomic_store(&s->log_count, 0);
        if (dropped) {
            char note[96];
            snprintf(note, sizeof note, "libmicrohttpd: %u more messages not shown", dropped);
            warn(s, note);
        }
    }
    if (atomic_fetch_add(&s->log_count, 1) >= LOG_BURST) {
        atomic_fetch_add(&s->log_dropped, 1);
        return;
    }
    warn(s, msg);
}

/* ---- connections and requests ---- */

static void on_connection(void *cls, struct MHD_Connection *c, void **socket_context,
                          enum MHD_ConnectionNotificationCode code)
{
    struct server *s = cls;
    if (code == MHD_CONNECTION_NOTIFY_STARTED) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
        *socket_context = ci ? server__conns_add(s->conns, ci->connect_fd) : NULL;
    } else if (code == MHD_CONNECTION_NOTIFY_CLOSED) {
        server__conns_remove(s->conns, *socket_context);
        *socket_context = NULL;
    }
}

static struct server_conn *conn_of(struct MHD_Connection *c)
{
    const union MHD_ConnectionInfo *ci =
        MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
    return ci ? ci->socket_context : NULL;
}

static void *on_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
    struct server *s = cls;
    struct request *rq = calloc(1, sizeof *rq);
    if (!rq)
        return NULL;
    rq->target_len = strlen(uri);
    rq->target = malloc(rq->target_len + 1);
    if (!rq->target) {
        free(rq);
        return NULL;
    }
    memcpy(rq->target, uri, rq->target_len + 1);
    rq->start = server__now();
    rq->conn = conn_of(c);
    rq->late = atomic_load(&s->stopping);
    rq->endpoint = SERVER_EP_OTHER;
    (void)server__conn_phase(rq->conn, SERVER_PHASE_HEADERS);
    if (s->access_log_fd >= 0) {
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(c, MHD_CONNECTION_INFO_CLIENT_ADDRESS);
        const struct sockaddr *sa = ci ? ci->client_addr : NULL;
        if (sa && sa->sa_family == AF_INET)
            inet_ntop(AF_INET, &((const struct sockaddr_in *)sa)->sin_addr, rq->client,
                      sizeof rq->client);
        else if (sa && sa->sa_family == AF_INET6)
            inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)sa)->sin6_addr, rq->client,
                      sizeof rq->client);
    }
    atomic_fetch_add(&s->in_flight, 1);
    return rq;
}

/* One access log line: TIME CLIENT "METHOD TARGET" STATUS SECONDS (one write(), which
 * O_APPEND keeps whole among the threads' lines). */
static void access_log(struct server *s, const struct request *rq, double seconds)
{
    char line[ACCESS_TARGET_MAX + 256], when[32];
    time_t t = time(NULL);
    struct tm tm;
    gmtime_r(&t, &tm);
    strftime(when, sizeof when, "%Y-%m-%dT%H:%M:%SZ", &tm);
    int n = snprintf(line, sizeof line, "%s %s \"%s ", when, rq->client[0] ? rq->client : "-",
                     rq->method[0] ? rq->method : "-");
    size_t len = (size_t)n;
    for (size_t i = 0; i < rq->target_len && i < ACCESS_TARGET_MAX; i++) {
        unsigned char ch = (unsigned char)rq->target[i];
        line[len++] = ch > 0x20 && ch < 0x7f && ch != '"' ? (char)ch : '?';
    }
    len += (size_t)snprintf(line + len, sizeof line - len, "\" %u %.6f\n", rq->status, seconds);
    ssize_t w = write(s->access_log_fd, line, len);
    (void)w; /* a full disk must not stop the service */
}

static void on_completed(void *cls, struct MHD_Connection *c, void **con_cls,
                         enum MHD_RequestTerminationCode toe)
{
    struct server *s = cls;
    struct request *rq = *con_cls;
    (void)c;
    (void)toe;
    if (!rq)
        return;
    *con_cls = NULL;
    double seconds = server__now() - rq->start;
    if (!rq->status && server__conn_was_cut(rq->conn))
        rq->status = 408; /* the reaper's answer */
    if (rq->status) {
        server__metrics_record(&s->metrics, rq->endpoint, rq->status, seconds);
        if (s->access_log_fd >= 0)
            access_log(s, rq, seconds);
    }
    (void)server__conn_phase(rq->conn, SERVER_PHASE_IDLE);
    server__buf_release(&rq->body);
    free(rq->target);
    free(rq);
    atomic_fetch_sub(&s->in_flight, 1);
}

/* Queues rep (taking its body); MHD_NO when libmicrohttpd could not, or when the reaper
 * cut the connection first (its 408 is then the answer; conns.c). */
static enum MHD_Result queue(struct request *rq, struct MHD_Connection *c, struct server_reply *rep)
{
    if (rq && server__conn_phase(rq->conn, SERVER_PHASE_RESPONDING) != 0) {
        server__reply_release(rep);
        return MHD_NO;
    }
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(rep->len, rep->body, MHD_RESPMEM_MUST_FREE);
    if (!resp) {
        server__reply_release(rep);
        return MHD_NO;
    }
    rep->body = NULL;
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CONTENT_TYPE, rep->content_type);
    MHD_add_response_header(resp, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
    if (rep->allow)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_ALLOW, rep->allow);
    if (rep->authenticate)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_WWW_AUTHENTICATE, "Bearer");
    if (rep->close)
        MHD_add_response_header(resp, MHD_HTTP_HEADER_CONNECTION, "close");
    enum MHD_Result r = MHD_queue_response(c, rep->status, resp);
    MHD_destroy_response(resp);
    if (rq) {
        rq->status = rep->status;
        rq->endpoint = rep->endpoint;
    }
    return r;
}

static enum MHD_Result queue_error(struct request *rq, struct MHD_Connection *c, unsigned status,
                                   const char *msg, int close)
{
    struct server_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.endpoint = rq ? rq->endpoint : SERVER_EP_OTHER;
    server__reply_error(&rep, status, "%s", msg);
    rep.close = close;
    return queue(rq, c, &rep);
}

/* The request as api.c sees it (body not yet). 0, or -1 for a bad Content-Length. */
static int request_head(struct request *rq, struct MHD_Connection *c, const char *method,
                        struct server_request *hr)
{
    memset(hr, 0, sizeof *hr);
    hr->method = method;
    hr->target = rq->target;
    hr->target_len = rq->target_len;
    hr->content_type =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_TYPE);
    hr->authorization =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_AUTHORIZATION);
    const char *cl =
        MHD_lookup_connection_value(c, MHD_HEADER_KIND, MHD_HTTP_HEADER_CONTENT_LENGTH);
    if (cl) {
        char *end;
        size_t n = strlen(cl);
        if (n == 0 || n > 19 || strspn(cl, "0123456789") != n)
            return -1;
        hr->has_length = 1;
        hr->length = strtoull(cl, &end, 10);
    }
    return 0;
}

/* on_access's first call: the headers are in. */
static enum MHD_Result on_begin(struct server *s, struct request *rq, struct MHD_Connection *c,
                                const char *method)
{
    rq->begun = 1;
    snprintf(rq->method, sizeof rq->method, "%s", method);
    if (server__conn_phase(rq->conn, SERVER_PHASE_BODY) != 0)
        return MHD_NO; /* cut by the reaper while the headers came */
    if (rq->late)
        return queue_error(rq, c, 503, "the service is stopping", 1);
    struct server_request hr;
    if (request_head(rq, c, method, &hr) != 0)
        return queue_error(rq, c, 400, "Content-Length is not a number", 1);
    struct server_reply rep;
    if (server__api_begin(&s->api, &hr, &rep) != 0)
        return queue(rq, c, &rep);
    rq->endpoint = rep.endpoint;
    rq->keep_body = strcmp(method, "POST") == 0;
    server__buf_init(&rq->body, s->max_body);
    if (rq->keep_body && hr.has_length) /* what arrives is allocated, not what is said */
        server__buf_reserve(&rq->body, hr.length < RESERVE_MAX ? (size_t)hr.length : RESERVE_MAX);
    return MHD_YES;
}

/*
 * on_access's middle calls: n bytes of the body. A body without Content-Length (chunked)
 * can pass the cap only here, and libmicrohttpd 0.9.75 cannot answer before the body is
 * read: the rest is read and dropped so that the last call answers 413, up to
 * DISCARD_MAX(max_body) bytes more, past which the connection is closed without an
 * answer (MHD_NO). Bodies of methods that take none are dropped alike.
 */
static enum MHD_Result on_data(struct server *s, struct request *rq, const char *data, size_t n)
{
    server__conn_body(rq->conn, n);
    if (rq->keep_body && !rq->body.failed)
        server__buf_add(&rq->body, data, n);
    if (!rq->keep_body || rq->body.failed) {
        rq->discarded += n;
        if (rq->discarded > DISCARD_MAX(s->max_body))
            return MHD_NO;
    }
    return MHD_YES;
}

/* on_access's last call: the whole request is in. */
static enum MHD_Result on_end(struct server *s, struct request *rq, struct MHD_Connection *c,
                              const char *method)
{
    if (server__conn_phase(rq->conn, SERVER_PHASE_RESPONDING) != 0)
        return MHD_NO; /* cut by the reaper */
    if (rq->keep_body && rq->body.failed == SERVER_BUF_FULL) {
        char msg[160];
        snprintf(msg, sizeof msg, "the body is over the limit of %zu bytes (--max-body)",
                 s->max_body);
        return queue_error(rq, c, 413, msg, 1);
    }
    if (rq->keep_body && rq->body.failed)
        return queue_error(rq, c, 503, "out of memory", 1);
    struct server_request hr;
    if (request_head(rq, c, method, &hr) != 0)
        return queue_error(rq, c, 400, "Content-Length is not a number", 1);
    hr.body = rq->body.p ? rq->body.p : "";
    hr.body_len = rq->body.len;
    struct server_reply rep;
    memset(&rep, 0, sizeof rep);
    rep.endpoint = rq->endpoint;
    server__api_handle(&s->api, &hr, &rep);
    server__buf_release(&rq->body);
    return queue(rq, c, &rep);
}

static enum MHD_Result on_access(void *cls, struct MHD_Connection *c, const char *url,
                                 const char *method, const char *version, const char *data,
                                 size_t *size, void **con_cls)
{
    struct server *s = cls;
    struct request *rq = *con_cls;
    (void)url; /* decoded by libmicrohttpd: rq->target is the raw one */
    (void)version;
    if (!rq)
        return queue_error(NULL, c, 503, "out of memory", 1);
    if (!rq->begun)
        return on_begin(s, rq, c, method);
    if (*size) {
        enum MHD_Result r = on_data(s, rq, data, *size);
        *size = 0;
        return r;
    }
    return on_end(s, rq, c, method);
}

/* ---- start and stop ---- */

static void result(struct server_result *res, int filter_code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void result(struct server_result *res, int filter_code, const char *fmt, ...)
{
    if (!res)
        return;
    res->documents = res->requests = 0;
    res->filter_code = filter_code;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(res->detail, sizeof res->detail, fmt, ap);
    va_end(ap);
}

/* The options that need no resource; SERVER_OK or a code with res filled in. */
static int check_opts(struct server *s, const struct server_opts *o, struct server_result *res)
{
    const char *listen = o->listen ? o->listen : SERVER_LISTEN_DEFAULT;
    if (server__parse_listen(listen, &s->addr, &s->addr_len) != 0) {
        result(res, 0,
               "--listen %s: not ADDR:PORT (127.0.0.1:8470, [::1]:8470, "
               "0.0.0.0:8470; port 0: any free port)",
               listen);
        return SERVER_EADDR;
    }
    if (!o->token && !server__addr_is_loopback((struct sockaddr *)&s->addr)) {
        result(res, 0,
               "refusing to listen on %s without a token: anyone who can reach it "
               "could add and delete documents. Give --token-file FILE (clients "
               "then send Authorization: Bearer TOKEN), or listen on 127.0.0.1",
               listen);
        return SERVER_ELOOPBACK;
    }
    if (o->k > 7 || o->max_body == 0 || o->max_body > SERVER_MAX_BODY_LIMIT || o->timeout == 0 ||
        o->timeout > SERVER_TIMEOUT_MAX || o->threads > SERVER_THREADS_MAX ||
        o->max_connections == 0 || o->max_connections > SERVER_MAX_CONNECTIONS_LIMIT ||
        (o->token && (!*o->token || strlen(o->token) > SERVER_TOKEN_MAX))) {
        result(res, 0, "an option is out of range");
        return SERVER_EINVAL;
    }
    return SERVER_OK;
}

static void filter_log(void *userdata, const char *msg)
{
    warn(userdata, msg);
}

static int open_filter(struct server *s, const struct server_opts *o, struct server_result *res)
{
    struct simcrawl_options *fo = simcrawl_options_new();
    if (!fo) {
        result(res, SIMCRAWL_ENOMEM, "out of memory");
        return SERVER_ENOMEM;
    }
    int rc = simcrawl_options_set_k(fo, o->k);
    if (rc == 0 && o->fsync)
        rc = simcrawl_options_set_fsync(fo, o->fsync);
    if (rc == 0 && o->method)
        rc = simcrawl_options_set_method(fo, o->method);
    if (rc == 0)
        rc = simcrawl_options_set_threshold(fo, o->threshold);
    if (rc == 0)
        rc = simcrawl_options_set_lock_wait(fo, o->lock_wait);
    if (rc == 0)
        rc = simcrawl_options_set_max_bytes(fo, o->max_body);
    if (rc == 0)
        rc = simcrawl_options_set_log(fo, filter_log, s);
    if (rc == 0 && o->probe_lines)
        rc = simcrawl_options_set_probe_lines(fo, o->probe_lines);
    if (rc == 0 && o->probe_lines_min)
        rc = simcrawl_options_set_probe_lines_min(fo, o->probe_lines_min);
    if (rc == 0)
        rc = simcrawl_options_set_probe_lines_max_bytes(fo, o->probe_lines_max_bytes);
    if (rc == 0)
        rc = simcrawl_filter_open_opts(&s->f, o->index_path, fo);
    simcrawl_options_free(fo);
    if (rc != 0) {
        result(res, rc, "cannot open the index %s: %s", o->index_path ? o->index_path : "(memory)",
               simcrawl_strerror(rc));
        return SERVER_EFILTER;
    }
    return SERVER_OK;
}

static unsigned cpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n < 1 ? 1 : n > (long)SERVER_THREADS_MAX ? SERVER_THREADS_MAX : (unsigned)n;
}

static int start_daemon(struct server *s, const struct server_opts *o, struct server_result *res)
{
    unsigned threads = o->threads ? o->threads : cpus();
    unsigned flags = MHD_USE_EPOLL_INTERNAL_THREAD | MHD_USE_ERROR_LOG | MHD_USE_ITC;
    if (s->addr.ss_family == AF_INET6)
        flags |= MHD_USE_IPv6;
    /* a pool of one thread is no pool: the daemon's own thread serves (the option would
     * only draw a warning) */
    struct MHD_OptionItem pool[] = {{MHD_OPTION_THREAD_POOL_SIZE, (intptr_t)threads, NULL},
                                    {MHD_OPTION_END, 0, NULL}};
    if (threads <= 1)
        pool[0].option = MHD_OPTION_END;
    /* the logger first: libmicrohttpd uses it for what the later options say */
    s->d = MHD_start_daemon(
        flags, 0, NULL, NULL, on_access, s, MHD_OPTION_EXTERNAL_LOGGER, on_mhd_log, s,
        MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&s->addr, MHD_OPTION_ARRAY, pool,
        MHD_OPTION_CONNECTION_LIMIT, o->max_connections, MHD_OPTION_CONNECTION_TIMEOUT,
        o->timeout + REAPER_FIRST, MHD_OPTION_CONNECTION_MEMORY_LIMIT, CONN_MEMORY,
        MHD_OPTION_URI_LOG_CALLBACK, on_uri, s, MHD_OPTION_NOTIFY_CONNECTION, on_connection, s,
        MHD_OPTION_NOTIFY_COMPLETED, on_completed, s, MHD_OPTION_END);
    if (!s->d) {
        result(res, 0, "cannot listen on %s: %s", o->listen ? o->listen : SERVER_LISTEN_DEFAULT,
               s->last_mhd_error[0] ? s->last_mhd_error : "libmicrohttpd could not start");
        return SERVER_ELISTEN;
    }
    atomic_store(&s->started, 1);
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(s->d, MHD_DAEMON_INFO_BIND_PORT);
    s->port = di ? di->port : 0;
    return SERVER_OK;
}

/* Frees what start made (the daemon stopped first). */
static void server_free(struct server *s)
{
    server__conns_stop(s->conns);
    free(s->token);
    free(s->index_path);
    free(s);
}

int server_start(struct server **out, const struct server_opts *o, struct server_result *res)
{
    *out = NULL;
    result(res, 0, "%s", "");
    struct server *s = calloc(1, sizeof *s);
    if (!s) {
        result(res, 0, "out of memory");
        return SERVER_ENOMEM;
    }
    s->access_log_fd = o->access_log_fd;
    s->log = o->log;
    s->log_userdata = o->log_userdata;
    s->timeout = o->timeout;
    s->max_body = o->max_body;
    server__metrics_init(&s->metrics);
    atomic_init(&s->in_flight, 0);
    atomic_init(&s->stopping, 0);
    atomic_init(&s->started, 0);
    atomic_init(&s->log_second, 0);
    atomic_init(&s->log_count, 0);
    atomic_init(&s->log_dropped, 0);
    int rc = check_opts(s, o, res);
    if (rc != SERVER_OK)
        goto fail;
    rc = SERVER_ENOMEM;
    if ((o->token && !(s->token = strdup(o->token))) ||
        (o->index_path && !(s->index_path = strdup(o->index_path)))) {
        result(res, 0, "out of memory");
        goto fail;
    }
    if (server__conns_start(&s->conns, o->timeout) != 0) {
        result(res, 0, "cannot start the connection reaper thread");
        rc = SERVER_ETHREAD;
        goto fail;
    }
    if ((rc = open_filter(s, o, res)) != SERVER_OK)
        goto fail;
    s->api = (struct server_api){s->f,        s->token,      s->token ? strlen(s->token) : 0,
                                 o->max_body, s->index_path, server__now(),
                                 &s->metrics, api_log,       s};
    if ((rc = start_daemon(s, o, res)) != SERVER_OK)
        goto fail;
    *out = s;
    return SERVER_OK;
fail:
    (void)simcrawl_filter_close(s->f);
    server_free(s);
    return rc;
}

unsigned short server_port(const struct server *s)
{
    return s->port;
}

void server_address(const struct server *s, char *buf, size_t size)
{
    char host[INET6_ADDRSTRLEN] = "?";
    if (s->addr.ss_family == AF_INET6) {
        inet_ntop(AF_INET6, &((const struct sockaddr_in6 *)&s->addr)->sin6_addr, host, sizeof host);
        snprintf(buf, size, "[%s]:%u", host, (unsigned)s->port);
    } else {
        inet_ntop(AF_INET, &((const struct sockaddr_in *)&s->addr)->sin_addr, host, sizeof host);
        snprintf(buf, size, "%s:%u", host, (unsigned)s->port);
    }
}

uint64_t server_documents(const struct server *s)
{
    return simcrawl_filter_count(s->f);
}

const char *server_method(const struct server *s)
{
    return simcrawl_filter_method(s->f);
}

double server_threshold(const struct server *s)
{
    return simcrawl_filter_threshold(s->f);
}

unsigned server_k(const struct server *s)
{
    return simcrawl_filter_k(s->f);
}

uint64_t server_requests(const struct server *s)
{
    return server__metrics_total((struct server_metrics *)&s->metrics);
}

unsigned server_in_flight(const struct server *s)
{
    return atomic_load(&((struct server *)s)->in_flight);
}

int server_stop(struct server *s, struct server_result *res)
{
    result(res, 0, "%s", "");
    atomic_store(&s->stopping, 1);
    MHD_socket lfd = MHD_quiesce_daemon(s->d); /* no new connection from now on */
    if (lfd != MHD_INVALID_SOCKET)
        close(lfd);
    double deadline = server__now() + s->timeout;
    while (atomic_load(&s->in_flight) > 0 && server__now() < deadline) {
        struct timespec nap = {0, STOP_POLL_NS};
        nanosleep(&nap, NULL);
    }
    MHD_stop_daemon(s->d);
    uint64_t documents = simcrawl_filter_count(s->f);
    uint64_t requests = server__metrics_total(&s->metrics);
    int rc = simcrawl_filter_close(s->f);
    int code = SERVER_OK;
    if (rc != 0) {
        result(res, rc, "cannot save the index %s: %s", s->index_path ? s->index_path : "",
               simcrawl_strerror(rc));
        code = SERVER_ESAVE;
    }
    if (res) {
        res->documents = documents;
        res->requests = requests;
    }
    server_free(s);
    return code;
}
