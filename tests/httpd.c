/*
 * The loopback HTTP/1.1 test server (see tests/httpd.h for the API): libmicrohttpd with
 * one thread per connection plus an internal listening thread, bound to 127.0.0.1 on a
 * port the kernel picks (port 0, read back with MHD_DAEMON_INFO_BIND_PORT).
 *
 * HOW IT WORKS
 * - The URI log callback runs when the request line arrives: it records the raw URI (with
 *   its undecoded path and query) and the time, in a per-request context (con_cls).
 * - The access handler logs the request with its headers on its first call, swallows any
 *   upload, and on the final call resolves the response: the first matching route, else
 *   the user's handler, else 404.
 * - Plain bodies are handed to MHD as a copied buffer. Faults and chunked bodies use a
 *   content-reader callback over our own copy of the body: DRIP returns one byte per call
 *   and sleeps in between, RESET returns half the body and then sets SO_LINGER {1, 0} on
 *   the socket and ends with an error (so the close sends a RST), ENDLESS repeats the body
 *   in chunked encoding up to a byte and time cap. HANG sleeps in the handler, then
 *   refuses the request (MHD closes the connection).
 * - Every sleep is cut into 10 ms naps that check h->stopping, so test_httpd_stop() ends
 *   all faults at once before MHD_stop_daemon() joins the connection threads.
 */
#include "tests/httpd.h"

#include <microhttpd.h>
#include <zlib.h>

#include <arpa/inet.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#define HTTPD_MAX_HEADERS 64       /* request headers logged per request */
#define HTTPD_BLOCK 4096           /* content-reader block size */
#define HTTPD_CONNECTION_LIMIT 256 /* simultaneous connections */

struct test_httpd {
    struct MHD_Daemon *daemon;
    unsigned short port;
    const struct test_route *routes;
    size_t nroutes;
    test_httpd_handler handler;
    void *userdata;
    atomic_int stopping;
    pthread_mutex_t lock; /* guards log, nlog, caplog, total */
    struct test_httpd_request **log;
    size_t nlog, caplog, total;
};

/* Per-request state (MHD's con_cls). */
struct req_ctx {
    char *uri;
    double time;
    int seen;                         /* the access handler ran once */
    struct test_httpd_request *owned; /* request not in the log (log full): freed here */
    struct test_httpd_request *req;   /* logged or owned */
};

/* The body of a callback response; owned by the MHD response, freed by stream_free. */
struct stream {
    struct test_httpd *h;
    char *body;
    size_t len;
    enum test_fault fault;
    unsigned interval_ms;
    int fd;
    double start;
};

double test_httpd_clock(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* Sleeps ms milliseconds in 10 ms steps; returns 0 early when the server is stopping. */
static int nap(struct test_httpd *h, unsigned ms)
{
    while (ms > 0) {
        if (atomic_load(&h->stopping))
            return 0;
        unsigned step = ms < 10 ? ms : 10;
        struct timespec ts = {0, (long)step * 1000000L};
        nanosleep(&ts, NULL);
        ms -= step;
    }
    return !atomic_load(&h->stopping);
}

static void request_free(struct test_httpd_request *r)
{
    if (!r)
        return;
    for (size_t i = 0; i < r->nheaders; i++) {
        free(r->names[i]);
        free(r->values[i]);
    }
    free(r->names);
    free(r->values);
    free(r->method);
    free(r->path);
    free(r->query);
    free(r);
}

static enum MHD_Result collect_header(void *cls, enum MHD_ValueKind kind, const char *key,
                                      const char *value)
{
    (void)kind;
    struct test_httpd_request *r = cls;
    if (r->nheaders >= HTTPD_MAX_HEADERS)
        return MHD_NO;
    char *n = strdup(key ? key : "");
    char *v = strdup(value ? value : "");
    if (!n || !v) {
        free(n);
        free(v);
        return MHD_NO;
    }
    r->names[r->nheaders] = n;
    r->values[r->nheaders] = v;
    r->nheaders++;
    return MHD_YES;
}

static struct test_httpd_request *request_new(struct MHD_Connection *conn, const char *method,
                                              const char *uri, double t)
{
    struct test_httpd_request *r = calloc(1, sizeof *r);
    if (!r)
        return NULL;
    r->time = t;
    r->method = strdup(method ? method : "");
    const char *q = strchr(uri, '?');
    r->path = q ? strndup(uri, (size_t)(q - uri)) : strdup(uri);
    r->query = q ? strdup(q + 1) : NULL;
    r->names = calloc(HTTPD_MAX_HEADERS, sizeof *r->names);
    r->values = calloc(HTTPD_MAX_HEADERS, sizeof *r->values);
    if (!r->method || !r->path || (q && !r->query) || !r->names || !r->values) {
        request_free(r);
        return NULL;
    }
    MHD_get_connection_values(conn, MHD_HEADER_KIND, collect_header, r);
    return r;
}

/* Appends r to the log; returns 0 when logged (the log owns r), -1 when the log is full. */
static int log_append(struct test_httpd *h, struct test_httpd_request *r)
{
    int rc = -1;
    pthread_mutex_lock(&h->lock);
    h->total++;
    if (h->nlog < TEST_HTTPD_LOG_CAP) {
        if (h->nlog == h->caplog) {
            size_t ncap = h->caplog ? h->caplog * 2 : 64;
            struct test_httpd_request **nl = realloc(h->log, ncap * sizeof *nl);
            if (!nl)
                goto done;
            h->log = nl;
            h->caplog = ncap;
        }
        h->log[h->nlog++] = r;
        rc = 0;
    }
done:
    pthread_mutex_unlock(&h->lock);
    return rc;
}

static void *uri_logger(void *cls, const char *uri, struct MHD_Connection *conn)
{
    (void)cls;
    (void)conn;
    struct req_ctx *c = calloc(1, sizeof *c);
    if (!c)
        return NULL;
    c->time = test_httpd_clock();
    c->uri = strdup(uri ? uri : "/");
    if (!c->uri) {
        free(c);
        return NULL;
    }
    return c;
}

static void request_completed(void *cls, struct MHD_Connection *conn, void **con_cls,
                              enum MHD_RequestTerminationCode toe)
{
    (void)cls;
    (void)conn;
    (void)toe;
    struct req_ctx *c = *con_cls;
    if (!c)
        return;
    request_free(c->owned);
    free(c->uri);
    free(c);
    *con_cls = NULL;
}

static const struct test_route *route_find(const struct test_httpd *h, const char *path)
{
    for (size_t i = 0; i < h->nroutes; i++) {
        const struct test_route *rt = &h->routes[i];
        size_t n = strlen(rt->path);
        if ((rt->flags & TEST_ROUTE_PREFIX) ? strncmp(path, rt->path, n) == 0
                                            : strcmp(path, rt->path) == 0)
            return rt;
    }
    return NULL;
}

/* gzip-compresses (in, len) into a new buffer; NULL on failure. */
static char *gzip_body(const void *in, size_t len, size_t *outlen)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    if (deflateInit2(&zs, Z_DEFAULT_COMPRESSION, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
        Z_OK)
        return NULL;
    size_t cap = deflateBound(&zs, (uLong)len) + 64;
    char *out = malloc(cap);
    if (!out) {
        deflateEnd(&zs);
        return NULL;
    }
    zs.next_in = (Bytef *)(uintptr_t)in;
    zs.avail_in = (uInt)len;
    zs.next_out = (Bytef *)out;
    zs.avail_out = (uInt)cap;
    int rc = deflate(&zs, Z_FINISH);
    *outlen = zs.total_out;
    deflateEnd(&zs);
    if (rc != Z_STREAM_END) {
        free(out);
        return NULL;
    }
    return out;
}

static ssize_t stream_read(void *cls, uint64_t pos, char *buf, size_t max)
{
    struct stream *s = cls;
    if (max == 0)
        return 0;
    switch (s->fault) {
    case TEST_FAULT_DRIP:
        if (pos >= s->len)
            return MHD_CONTENT_READER_END_OF_STREAM;
        if (pos > 0 && !nap(s->h, s->interval_ms))
            return MHD_CONTENT_READER_END_WITH_ERROR;
        buf[0] = s->body[pos];
        return 1;
    case TEST_FAULT_RESET: {
        size_t half = s->len / 2;
        if (pos < half) {
            size_t n = half - (size_t)pos < max ? half - (size_t)pos : max;
            memcpy(buf, s->body + pos, n);
            return (ssize_t)n;
        }
        nap(s->h, 50); /* let the client read the first half */
        if (s->fd >= 0) {
            struct linger lg = {1, 0};
            setsockopt(s->fd, SOL_SOCKET, SO_LINGER, &lg, sizeof lg);
        }
        return MHD_CONTENT_READER_END_WITH_ERROR;
    }
    case TEST_FAULT_ENDLESS: {
        if (pos >= TEST_HTTPD_ENDLESS_MAX || atomic_load(&s->h->stopping) ||
            test_httpd_clock() - s->start > TEST_HTTPD_ENDLESS_SECONDS)
            return MHD_CONTENT_READER_END_OF_STREAM;
        const char *pat = s->len ? s->body : "x";
        size_t plen = s->len ? s->len : 1;
        for (size_t i = 0; i < max; i++)
            buf[i] = pat[(pos + i) % plen];
        return (ssize_t)max;
    }
    default: {
        if (pos >= s->len)
            return MHD_CONTENT_READER_END_OF_STREAM;
        size_t n = s->len - (size_t)pos < max ? s->len - (size_t)pos : max;
        memcpy(buf, s->body + pos, n);
        return (ssize_t)n;
    }
    }
}

static void stream_free(void *cls)
{
    struct stream *s = cls;
    free(s->body);
    free(s);
}

/* Adds the '\n'-separated "Name: value" lines of hdrs to resp. */
static void add_headers(struct MHD_Response *resp, const char *hdrs)
{
    while (hdrs && *hdrs) {
        const char *eol = strchr(hdrs, '\n');
        size_t n = eol ? (size_t)(eol - hdrs) : strlen(hdrs);
        char line[2048];
        if (n < sizeof line) {
            memcpy(line, hdrs, n);
            line[n] = '\0';
            if (n > 0 && line[n - 1] == '\r')
                line[n - 1] = '\0';
            char *colon = strchr(line, ':');
            if (colon) {
                *colon = '\0';
                char *v = colon + 1;
                while (*v == ' ' || *v == '\t')
                    v++;
                MHD_add_response_header(resp, line, v);
            }
        }
        hdrs = eol ? eol + 1 : NULL;
    }
}

static enum MHD_Result queue_plain(struct MHD_Connection *conn, unsigned status, const char *text)
{
    struct MHD_Response *resp =
        MHD_create_response_from_buffer(strlen(text), (void *)(uintptr_t)text,
                                        MHD_RESPMEM_PERSISTENT);
    if (!resp)
        return MHD_NO;
    MHD_add_response_header(resp, "Content-Type", "text/plain");
    enum MHD_Result rc = MHD_queue_response(conn, status, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result serve(struct test_httpd *h, struct MHD_Connection *conn,
                             const struct test_response *r)
{
    if (r->fault == TEST_FAULT_HANG) {
        nap(h, r->fault_ms ? r->fault_ms : TEST_HTTPD_HANG_DEFAULT_MS);
        return MHD_NO; /* MHD closes the connection without an answer */
    }
    const char *body = r->body ? r->body : "";
    size_t len = r->body ? r->body_len : 0;
    char *zbody = NULL;
    if (r->gzip) {
        zbody = gzip_body(body, len, &len);
        if (!zbody)
            return queue_plain(conn, 500, "test_httpd: gzip failed\n");
        body = zbody;
    }
    struct MHD_Response *resp;
    if (r->fault == TEST_FAULT_NONE && !r->chunked) {
        resp = MHD_create_response_from_buffer(len, (void *)(uintptr_t)body,
                                               MHD_RESPMEM_MUST_COPY);
    } else {
        struct stream *s = calloc(1, sizeof *s);
        if (!s) {
            free(zbody);
            return MHD_NO;
        }
        s->h = h;
        s->fault = r->fault;
        s->len = len;
        s->start = test_httpd_clock();
        s->interval_ms = r->fault_ms ? r->fault_ms : TEST_HTTPD_DRIP_DEFAULT_MS;
        s->body = malloc(len ? len : 1);
        if (!s->body) {
            free(s);
            free(zbody);
            return MHD_NO;
        }
        memcpy(s->body, body, len);
        const union MHD_ConnectionInfo *ci =
            MHD_get_connection_info(conn, MHD_CONNECTION_INFO_CONNECTION_FD);
        s->fd = ci ? ci->connect_fd : -1;
        uint64_t size = (r->fault == TEST_FAULT_ENDLESS || r->chunked) ? MHD_SIZE_UNKNOWN : len;
        resp = MHD_create_response_from_callback(size, HTTPD_BLOCK, stream_read, s, stream_free);
        if (!resp)
            stream_free(s);
    }
    free(zbody);
    if (!resp)
        return MHD_NO;
    if (r->content_type)
        MHD_add_response_header(resp, "Content-Type", r->content_type);
    if (r->gzip)
        MHD_add_response_header(resp, "Content-Encoding", "gzip");
    add_headers(resp, r->headers);
    enum MHD_Result rc = MHD_queue_response(conn, r->status ? (unsigned)r->status : 200u, resp);
    MHD_destroy_response(resp);
    return rc;
}

static enum MHD_Result access_handler(void *cls, struct MHD_Connection *conn, const char *url,
                                      const char *method, const char *version,
                                      const char *upload_data, size_t *upload_data_size,
                                      void **con_cls)
{
    (void)version;
    (void)upload_data;
    struct test_httpd *h = cls;
    struct req_ctx *c = *con_cls;
    if (!c)
        return MHD_NO; /* out of memory in uri_logger */
    if (!c->seen) {
        c->seen = 1;
        struct test_httpd_request *r = request_new(conn, method, c->uri ? c->uri : url, c->time);
        if (!r)
            return MHD_NO;
        if (log_append(h, r) != 0)
            c->owned = r;
        c->req = r;
        return MHD_YES;
    }
    if (*upload_data_size != 0) {
        *upload_data_size = 0; /* uploads are accepted and dropped */
        return MHD_YES;
    }
    const struct test_route *rt = route_find(h, c->req->path);
    if (rt)
        return serve(h, conn, &rt->response);
    if (h->handler) {
        struct test_response out;
        memset(&out, 0, sizeof out);
        if (h->handler(h->userdata, c->req, &out) == 0) {
            enum MHD_Result rc = serve(h, conn, &out);
            if (out.body_free)
                free((void *)(uintptr_t)out.body);
            return rc;
        }
    }
    return queue_plain(conn, 404, "not found\n");
}

struct test_httpd *test_httpd_start(const struct test_route *routes, size_t nroutes,
                                    test_httpd_handler handler, void *userdata)
{
    struct test_httpd *h = calloc(1, sizeof *h);
    if (!h) {
        fprintf(stderr, "test_httpd: out of memory\n");
        return NULL;
    }
    h->routes = routes;
    h->nroutes = nroutes;
    h->handler = handler;
    h->userdata = userdata;
    atomic_init(&h->stopping, 0);
    pthread_mutex_init(&h->lock, NULL);

    struct sockaddr_in sa;
    memset(&sa, 0, sizeof sa);
    sa.sin_family = AF_INET;
    sa.sin_port = htons(0);
    sa.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    h->daemon = MHD_start_daemon(
        MHD_USE_THREAD_PER_CONNECTION | MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL |
            MHD_USE_ITC,
        0, NULL, NULL, access_handler, h, MHD_OPTION_SOCK_ADDR, (struct sockaddr *)&sa,
        MHD_OPTION_URI_LOG_CALLBACK, uri_logger, h, MHD_OPTION_NOTIFY_COMPLETED,
        request_completed, h, MHD_OPTION_CONNECTION_LIMIT, (unsigned)HTTPD_CONNECTION_LIMIT,
        MHD_OPTION_CONNECTION_TIMEOUT, 60u, MHD_OPTION_END);
    if (!h->daemon) {
        fprintf(stderr, "test_httpd: cannot start the server on 127.0.0.1\n");
        pthread_mutex_destroy(&h->lock);
        free(h);
        return NULL;
    }
    const union MHD_DaemonInfo *di = MHD_get_daemon_info(h->daemon, MHD_DAEMON_INFO_BIND_PORT);
    h->port = di ? di->port : 0;
    if (h->port == 0) {
        fprintf(stderr, "test_httpd: cannot read back the bound port\n");
        test_httpd_stop(h);
        return NULL;
    }
    return h;
}

unsigned short test_httpd_port(const struct test_httpd *h)
{
    return h ? h->port : 0;
}

char *test_httpd_url(const struct test_httpd *h, const char *path, char *buf, size_t size)
{
    snprintf(buf, size, "http://127.0.0.1:%u%s", (unsigned)test_httpd_port(h), path ? path : "/");
    return buf;
}

void test_httpd_stop(struct test_httpd *h)
{
    if (!h)
        return;
    atomic_store(&h->stopping, 1);
    if (h->daemon)
        MHD_stop_daemon(h->daemon);
    for (size_t i = 0; i < h->nlog; i++)
        request_free(h->log[i]);
    free(h->log);
    pthread_mutex_destroy(&h->lock);
    free(h);
}

size_t test_httpd_total(const struct test_httpd *h)
{
    struct test_httpd *m = (struct test_httpd *)(uintptr_t)h;
    pthread_mutex_lock(&m->lock);
    size_t n = m->total;
    pthread_mutex_unlock(&m->lock);
    return n;
}

size_t test_httpd_count(const struct test_httpd *h, const char *path)
{
    return test_httpd_times(h, path, NULL, 0);
}

const struct test_httpd_request *test_httpd_request_at(const struct test_httpd *h, size_t i)
{
    struct test_httpd *m = (struct test_httpd *)(uintptr_t)h;
    pthread_mutex_lock(&m->lock);
    const struct test_httpd_request *r = i < m->nlog ? m->log[i] : NULL;
    pthread_mutex_unlock(&m->lock);
    return r;
}

size_t test_httpd_times(const struct test_httpd *h, const char *path, double *times, size_t max)
{
    struct test_httpd *m = (struct test_httpd *)(uintptr_t)h;
    size_t n = 0;
    pthread_mutex_lock(&m->lock);
    for (size_t i = 0; i < m->nlog; i++) {
        if (strcmp(m->log[i]->path, path) != 0)
            continue;
        if (times && n < max)
            times[n] = m->log[i]->time;
        n++;
    }
    pthread_mutex_unlock(&m->lock);
    return n;
}

const struct test_httpd_request *test_httpd_last(const struct test_httpd *h, const char *path)
{
    struct test_httpd *m = (struct test_httpd *)(uintptr_t)h;
    const struct test_httpd_request *r = NULL;
    pthread_mutex_lock(&m->lock);
    for (size_t i = m->nlog; i-- > 0;)
        if (strcmp(m->log[i]->path, path) == 0) {
            r = m->log[i];
            break;
        }
    pthread_mutex_unlock(&m->lock);
    return r;
}

const char *test_httpd_header(const struct test_httpd_request *req, const char *name)
{
    if (!req)
        return NULL;
    for (size_t i = 0; i < req->nheaders; i++)
        if (strcasecmp(req->names[i], name) == 0)
            return req->values[i];
    return NULL;
}
