/*
 * Deadlines for the service's connections, against clients that are slow on purpose
 * (slowloris: headers sent a byte at a time, each just before the idle timeout would
 * fire; its slow-body variant). libmicrohttpd's own timeout (MHD_OPTION_CONNECTION_TIMEOUT)
 * is an idle timeout: every byte resets it, so a client that drips forever holds its
 * connection, and a few hundred of them hold them all. Here a connection must instead
 *   - send a request's headers within --timeout seconds of opening, or of its previous
 *     request being answered (its request line included);
 *   - then send the body at SERVER_MIN_UPLOAD_RATE bytes per second or faster, after a
 *     first --timeout seconds of grace;
 * or it is cut: "408 Request Timeout" with {"error": ...} is written to it when a
 * request had begun (no byte of an answer was sent yet: the 408 is the whole answer),
 * and the socket is shut down, which libmicrohttpd sees as the client leaving. (An idle
 * connection is cut silently at the same deadline; libmicrohttpd's own timeout, set a
 * little longer by server.c, is left with the one case not watched here: an answer the
 * client does not read.)
 *
 * HOW IT WORKS
 * Each connection's phase and the time it entered it are one atomic word, (ms << 3) |
 * phase, changed by the worker thread that serves the connection (server__conn_phase,
 * a compare-and-swap) and by the reaper thread, which every REAP_INTERVAL_MS scans the
 * list and swaps an overdue connection's word to CUT. Whoever swaps first wins: a
 * request answered just as the reaper fires is either answered (the worker moved it to
 * RESPONDING before it queued its answer, and the reaper leaves RESPONDING alone) or cut
 * (the worker then sees CUT and drops it), never both, so the 408 never mixes with an
 * answer. The list
 * (guarded by one mutex, taken when a connection opens or closes and by the scan) keeps
 * the socket alive: libmicrohttpd tells us a connection closes before it closes the
 * socket, so the reaper never shuts down a descriptor that was reused.
 */
#include "server/server_int.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>

#define REAP_INTERVAL_MS 100 /* how often the reaper looks */
#define PHASE_BITS 3
#define PHASE_MASK ((1u << PHASE_BITS) - 1)

struct server_conn {
    int fd;
    _Atomic uint64_t state;    /* (ms since the start << PHASE_BITS) | phase */
    atomic_uint_fast64_t body; /* body bytes of the current request */
    struct server_conns *owner;
    struct server_conn *prev, *next;
};

struct server_conns {
    pthread_mutex_t lock; /* the list, and stopping */
    pthread_cond_t wake;
    struct server_conn *head;
    uint64_t timeout_ms;
    double epoch; /* server__now() at start: ms are counted from it */
    int stopping;
    pthread_t thread;
    char reply[512]; /* the 408 */
    size_t reply_len;
};

static uint64_t now_ms(const struct server_conns *c)
{
    double d = (server__now() - c->epoch) * 1000.0;
    return d > 0 ? (uint64_t)d : 0;
}

static uint64_t word(uint64_t ms, enum server_phase phase)
{
    return ms << PHASE_BITS | (uint64_t)phase;
}

/* Is the connection in word w overdue at now? */
static int overdue(const struct server_conns *c, const struct server_conn *conn, uint64_t w,
                   uint64_t now)
{
    enum server_phase phase = (enum server_phase)(w & PHASE_MASK);
    uint64_t since = w >> PHASE_BITS;
    if (phase == SERVER_PHASE_RESPONDING || phase == SERVER_PHASE_CUT || now < since)
        return 0;
    uint64_t allowed = c->timeout_ms;
    if (phase == SERVER_PHASE_BODY) {
        uint64_t bytes = atomic_load_explicit(&conn->body, memory_order_relaxed);
        allowed += (uint64_t)((double)bytes * 1000.0 / SERVER_MIN_UPLOAD_RATE);
    }
    return now - since > allowed;
}

/* One scan (the list locked). */
static void reap(struct server_conns *c)
{
    uint64_t now = now_ms(c);
    for (struct server_conn *conn = c->head; conn; conn = conn->next) {
        uint64_t w = atomic_load(&conn->state);
        if (!overdue(c, conn, w, now))
            continue;
        if (!atomic_compare_exchange_strong(&conn->state, &w, word(now, SERVER_PHASE_CUT)))
            continue; /* it moved on meanwhile: look again next time */
        enum server_phase was = (enum server_phase)(w & PHASE_MASK);
        if (was == SERVER_PHASE_HEADERS || was == SERVER_PHASE_BODY)
            (void)send(conn->fd, c->reply, c->reply_len, MSG_NOSIGNAL | MSG_DONTWAIT);
        shutdown(conn->fd, SHUT_RDWR);
    }
}

static void *reaper(void *arg)
{
    struct server_conns *c = arg;
    pthread_mutex_lock(&c->lock);
    while (!c->stopping) {
        reap(c);
        struct timespec ts;
        clock_gettime(CLOCK_REALTIME, &ts);
        ts.tv_nsec += REAP_INTERVAL_MS * 1000000L;
        if (ts.tv_nsec >= 1000000000L) {
            ts.tv_sec++;
            ts.tv_nsec -= 1000000000L;
        }
        pthread_cond_timedwait(&c->wake, &c->lock, &ts);
    }
    pthread_mutex_unlock(&c->lock);
    return NULL;
}

int server__conns_start(struct server_conns **out, unsigned timeout)
{
    struct server_conns *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!c)
        return -1;
    c->timeout_ms = (uint64_t)timeout * 1000;
    c->epoch = server__now();
    char body[160];
    int bn = snprintf(body, sizeof body,
                      "{\"error\":\"request not received in time: headers within %u s, "
                      "then the body at %.0f bytes/s (--timeout)\"}\n",
                      timeout, SERVER_MIN_UPLOAD_RATE);
    c->reply_len = (size_t)snprintf(c->reply, sizeof c->reply,
                                    "HTTP/1.1 408 Request Timeout\r\nConnection: close\r\n"
                                    "Content-Type: application/json\r\nContent-Length: %d\r\n"
                                    "\r\n%s",
                                    bn, body);
    pthread_mutex_init(&c->lock, NULL);
    pthread_cond_init(&c->wake, NULL);
    if (pthread_create(&c->thread, NULL, reaper, c) != 0) {
        pthread_cond_destroy(&c->wake);
        pthread_mutex_destroy(&c->lock);
        free(c);
        return -1;
    }
    *out = c;
    return 0;
}

void server__conns_stop(struct server_conns *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&c->lock);
    c->stopping = 1;
    pthread_cond_signal(&c->wake);
    pthread_mutex_unlock(&c->lock);
    pthread_join(c->thread, NULL);
    while (c->head) { /* none when the daemon stopped first */
        struct server_conn *n = c->head->next;
        free(c->head);
        c->head = n;
    }
    pthread_cond_destroy(&c->wake);
    pthread_mutex_destroy(&c->lock);
    free(c);
}

struct server_conn *server__conns_add(struct server_conns *c, int fd)
{
    struct server_conn *conn = calloc(1, sizeof *conn);
    if (!conn)
        return NULL;
    conn->fd = fd;
    conn->owner = c;
    atomic_init(&conn->state, word(now_ms(c), SERVER_PHASE_IDLE));
    atomic_init(&conn->body, 0);
    pthread_mutex_lock(&c->lock);
    conn->next = c->head;
    if (c->head)
        c->head->prev = conn;
    c->head = conn;
    pthread_mutex_unlock(&c->lock);
    return conn;
}

void server__conns_remove(struct server_conns *c, struct server_conn *conn)
{
    if (!conn)
        return;
    pthread_mutex_lock(&c->lock);
    if (conn->prev)
        conn->prev->next = conn->next;
    else
        c->head = conn->next;
    if (conn->next)
        conn->next->prev = conn->prev;
    pthread_mutex_unlock(&c->lock);
    free(conn);
}

int server__conn_phase(struct server_conn *conn, enum server_phase phase)
{
    if (!conn)
        return 0;
    uint64_t w = atomic_load(&conn->state);
    uint64_t now = now_ms(conn->owner);
    do {
        if ((w & PHASE_MASK) == SERVER_PHASE_CUT)
            return -1;
    } while (!atomic_compare_exchange_weak(&conn->state, &w, word(now, phase)));
    if (phase != SERVER_PHASE_BODY)
        atomic_store_explicit(&conn->body, 0, memory_order_relaxed);
    return 0;
}

void server__conn_body(struct server_conn *conn, size_t n)
{
    if (conn)
        atomic_fetch_add_explicit(&conn->body, n, memory_order_relaxed);
}

int server__conn_was_cut(struct server_conn *conn)
{
    return conn && (atomic_load(&conn->state) & PHASE_MASK) == SERVER_PHASE_CUT;
}
