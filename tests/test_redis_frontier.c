/*
 * The shared frontier's scripts (crawler/redis_frontier.c) against a redis-server started
 * by the suite on 127.0.0.1 (tests/testredis.h): a URL is queued once whoever sends it;
 * one worker at a time holds a host; a completion needs the worker's own token; a host
 * waits for its next allowed time; expired leases come back to the queue, a worker's own
 * at once when it opens again; meta and counters are committed with the completions.
 * The whole crawl with workers killed is tests/tools/crawl_redis.py (tests/cli).
 */
#include <CUnit/CUnit.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>
#include <xxhash.h>

#include "crawler/crawl.h"
#include "tests/testredis.h"
#include "tests/testutil.h"

static struct test_redis srv;
static int srv_up;

static int suite_init(void)
{
    srv_up = test_redis_start(&srv, 0) == 0;
    return 0; /* each test fails on its own when the server is missing */
}

static int suite_clean(void)
{
    test_redis_stop(&srv, 0);
    return 0;
}

static void flush(void)
{
    const char *argv[1] = {"FLUSHALL"};
    CU_ASSERT(test_redis_cmd(&srv, 1, argv) >= 1);
}

/* a worker opened with o (NULL when it cannot be, said on stderr) */
static struct crawl_redis *open_opts(const struct crawl_redis_opts *o)
{
    struct crawl_redis *r = NULL;
    char err[512];
    if (crawl_redis_open(o, &r, err, sizeof err) != CRAWL_OK)
        fprintf(stderr, "crawl_redis_open: %s\n", err);
    return r;
}

static struct crawl_redis *worker(const char *name, double lease_time)
{
    struct crawl_redis_opts o = {
        .url = srv.url, .worker = name, .lease_time = lease_time, .host_lease_time = -1};
    return open_opts(&o);
}

static double wall(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void pause_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

/* the leases handed out, by URL */
struct got {
    char urls[8][64];
    char refs[8][64];
    unsigned depth[8];
    int n;
};

static int take(void *userdata, const struct crawl_redis_lease *l)
{
    struct got *g = userdata;
    if (g->n < 8) {
        snprintf(g->urls[g->n], sizeof g->urls[0], "%s", l->url);
        snprintf(g->refs[g->n], sizeof g->refs[0], "%s", l->referrer ? l->referrer : "");
        g->depth[g->n++] = l->depth;
    }
    return 0;
}

static int enqueue(struct crawl_redis *r, const char *url, const char *ref)
{
    int added = -1;
    ASSERT_EQ(crawl_redis_enqueue(r, url, strlen("http://a.test"), 2, 0, ref, &added), CRAWL_OK);
    return added;
}

static void test_redis_frontier_enqueue_lease_complete(void)
{
    CU_ASSERT_FATAL(srv_up);
    flush();
    struct crawl_redis *a = worker("a", 30), *b = worker("b", 30);
    CU_ASSERT_FATAL(a && b);
    /* queued once, whoever sends it */
    ASSERT_EQ(enqueue(a, "http://a.test/1", "http://a.test/"), 1);
    ASSERT_EQ(enqueue(b, "http://a.test/1", NULL), 0);
    ASSERT_EQ(enqueue(b, "http://a.test/2", NULL), 1);
    struct crawl_redis_link links[2] = {{.url = "http://b.test/x", .origin_len = 13},
                                        {.url = "http://a.test/2", .origin_len = 13}};
    ASSERT_EQ(crawl_redis_enqueue_many(a, links, 2, 1, NULL), CRAWL_OK);
    ASSERT_EQ(links[0].added, 1);
    ASSERT_EQ(links[1].added, 0);
    /* one URL of each host; the other worker gets nothing while they are held */
    struct got g = {0};
    size_t n = 0;
    double next = 0;
    int64_t leases = 0;
    ASSERT_EQ(crawl_redis_acquire(a, 10, take, &g, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 2);
    ASSERT_EQ(leases, 2);
    int ai = strcmp(g.urls[0], "http://a.test/1") == 0 ? 0 : 1;
    CU_ASSERT_STRING_EQUAL(g.urls[ai], "http://a.test/1");
    CU_ASSERT_STRING_EQUAL(g.refs[ai], "http://a.test/");
    ASSERT_EQ(g.depth[ai], 2);
    CU_ASSERT_STRING_EQUAL(g.urls[1 - ai], "http://b.test/x");
    struct got gb = {0};
    ASSERT_EQ(crawl_redis_acquire(b, 10, take, &gb, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 0);
    CU_ASSERT(next < 0); /* no host waits: both are held */
    /* another worker cannot complete a's URL */
    ASSERT_EQ(crawl_redis_decided(b, "http://a.test/1", wall(), 1), CRAWL_EINVAL);
    /* a completes a.test/1 with its next time 0.3 s away, and its meta with it */
    double at = wall() + 0.3;
    ASSERT_EQ(crawl_redis_decided(a, "http://a.test/1", at, 0.3), CRAWL_OK);
    ASSERT_EQ(crawl_redis_set_meta_int(a, "warc.offset", 1234), CRAWL_OK);
    ASSERT_EQ(crawl_redis_stats_add(a, "stats.fetched", 1), CRAWL_OK);
    size_t kept = 0;
    ASSERT_EQ(crawl_redis_commit(a, 0, take, &g, &kept), CRAWL_OK);
    ASSERT_EQ(kept, 0);
    ASSERT_EQ(crawl_redis_outstanding(a), 1); /* b.test/x */
    int64_t v = 0;
    int found = 0;
    ASSERT_EQ(crawl_redis_meta_int(a, "warc.offset", &v, &found), CRAWL_OK);
    CU_ASSERT(found && v == 1234);
    ASSERT_EQ(crawl_redis_stats_get(b, "stats.fetched", &v), CRAWL_OK);
    ASSERT_EQ(v, 1);
    /* a.test waits for its next time, then goes to whoever asks */
    ASSERT_EQ(crawl_redis_acquire(b, 10, take, &gb, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 0);
    CU_ASSERT(fabs(next - at) < 0.01);
    pause_s(at - wall() + 0.02);
    ASSERT_EQ(crawl_redis_acquire(b, 10, take, &gb, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 1);
    CU_ASSERT_STRING_EQUAL(gb.urls[0], "http://a.test/2");
    crawl_redis_free(a);
    crawl_redis_free(b);
}

/* The scripts go as EVALSHA of a SHA-1 computed by the client, and as EVAL when the
 * server answers NOSCRIPT (never SCRIPT LOAD, which a proxy cannot route): the client's
 * SHA-1 is the server's (the next call of the script is an EVALSHA that runs), and a
 * server that lost its scripts gets them again, an enqueue pipeline answered NOSCRIPT in
 * part counting each URL once. Every key is under one hash tag, which is KEYS[1]. */
static void test_redis_frontier_scripts_by_sha(void)
{
    CU_ASSERT_FATAL(srv_up);
    flush();
    const char *sflush[2] = {"SCRIPT", "FLUSH"};
    CU_ASSERT(test_redis_cmd(&srv, 2, sflush) >= 0);
    struct crawl_redis *a = worker("a", 30);
    CU_ASSERT_FATAL(a != NULL);
    uint64_t e0 = crawl_redis_evals(a); /* the open: the layout and the reap scripts */
    ASSERT_EQ(e0, 2);
    ASSERT_EQ(enqueue(a, "http://a.test/1", NULL), 1);
    ASSERT_EQ(crawl_redis_evals(a), 3);
    uint64_t calls = crawl_redis_calls(a);
    ASSERT_EQ(enqueue(a, "http://a.test/2", NULL), 1);
    ASSERT_EQ(crawl_redis_evals(a), 3);         /* EVALSHA found it */
    ASSERT_EQ(crawl_redis_calls(a), calls + 1); /* one call */
    /* the server loses its scripts: a pipeline of 3, answered NOSCRIPT, sent again as EVAL */
    CU_ASSERT(test_redis_cmd(&srv, 2, sflush) >= 0);
    struct crawl_redis_link links[3] = {{.url = "http://a.test/3", .origin_len = 13},
                                        {.url = "http://a.test/1", .origin_len = 13},
                                        {.url = "http://b.test/1", .origin_len = 13}};
    ASSERT_EQ(crawl_redis_enqueue_many(a, links, 3, 1, NULL), CRAWL_OK);
    ASSERT_EQ(links[0].added, 1);
    ASSERT_EQ(links[1].added, 0);
    ASSERT_EQ(links[2].added, 1);
    ASSERT_EQ(crawl_redis_evals(a), 6);
    /* every key the scripts made is under the tag {f0} */
    const char *keys[4] = {"EVAL", "return #redis.call('KEYS', ARGV[1])", "0", "*"};
    long long nkeys = test_redis_cmd(&srv, 4, keys);
    const char *tagged[4] = {"EVAL", "return #redis.call('KEYS', ARGV[1])", "0", "simcrawl{f0}:*"};
    CU_ASSERT(nkeys >= 5); /* seen sets and queues of two hosts, ready */
    ASSERT_EQ(test_redis_cmd(&srv, 4, tagged), nkeys);
    struct got g = {0};
    size_t n = 0;
    double next = 0;
    int64_t leases = 0;
    ASSERT_EQ(crawl_redis_acquire(a, 10, take, &g, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 2);
    ASSERT_EQ(crawl_redis_evals(a), 7);
    crawl_redis_free(a);
}

/* A database holding a crawl of the older key layout (simcrawl:stats, no tag) is refused,
 * named, rather than crawled again from the seeds under the new keys. */
static void test_redis_frontier_older_layout_refused(void)
{
    CU_ASSERT_FATAL(srv_up);
    flush();
    const char *old[4] = {"HSET", "simcrawl:stats", "pages", "3"};
    CU_ASSERT(test_redis_cmd(&srv, 4, old) >= 0);
    struct crawl_redis_opts o = {.url = srv.url, .worker = "a"};
    struct crawl_redis *r = NULL;
    char err[512] = "";
    ASSERT_EQ(crawl_redis_open(&o, &r, err, sizeof err), CRAWL_EFORMAT);
    CU_ASSERT_PTR_NULL(r);
    CU_ASSERT(strstr(err, "holds a crawl of an older simcrawl (key simcrawl:stats)") != NULL);
    flush(); /* without it the same open works */
    ASSERT_EQ(crawl_redis_open(&o, &r, err, sizeof err), CRAWL_OK);
    crawl_redis_free(r);
}

static void test_redis_frontier_leases_come_back(void)
{
    CU_ASSERT_FATAL(srv_up);
    flush();
    struct crawl_redis *a = worker("a", 0.5), *b = worker("b", 30);
    CU_ASSERT_FATAL(a && b);
    ASSERT_EQ(enqueue(a, "http://a.test/1", NULL), 1);
    struct got g = {0}, gb = {0};
    size_t n = 0;
    double next;
    int64_t leases;
    ASSERT_EQ(crawl_redis_acquire(a, 10, take, &g, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 1);
    ASSERT_EQ(crawl_redis_renew(a), CRAWL_OK);
    /* a stalls past its lease: b reaps it and gets the URL */
    pause_s(0.6);
    size_t reaped = 0;
    ASSERT_EQ(crawl_redis_reap(b, &reaped), CRAWL_OK);
    ASSERT_EQ(reaped, 1);
    ASSERT_EQ(crawl_redis_acquire(b, 10, take, &gb, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 1);
    CU_ASSERT_STRING_EQUAL(gb.urls[0], "http://a.test/1");
    /* the late worker can neither renew nor complete it: its whole commit fails */
    ASSERT_EQ(crawl_redis_renew(a), CRAWL_EIO);
    CU_ASSERT(strstr(crawl_redis_error(a), "expired") != NULL);
    ASSERT_EQ(crawl_redis_decided(a, "http://a.test/1", wall(), 0), CRAWL_OK);
    ASSERT_EQ(crawl_redis_set_meta_int(a, "warc.offset", 99), CRAWL_OK);
    size_t kept;
    ASSERT_EQ(crawl_redis_commit(a, 0, take, &g, &kept), CRAWL_EIO);
    int64_t v = 0;
    int found = 1;
    ASSERT_EQ(crawl_redis_meta_int(a, "warc.offset", &v, &found), CRAWL_OK);
    ASSERT_EQ(found, 0); /* nothing of the group was written */
    crawl_redis_free(a);
    /* b is killed holding it (freed without a commit): started again as b, the URL is
     * queued at once */
    crawl_redis_free(b);
    b = worker("b", 30);
    CU_ASSERT_FATAL(b != NULL);
    ASSERT_EQ(crawl_redis_released(b), 1);
    struct got g2 = {0};
    ASSERT_EQ(crawl_redis_acquire(b, 10, take, &g2, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 1);
    CU_ASSERT_STRING_EQUAL(g2.urls[0], "http://a.test/1");
    crawl_redis_free(b);
}

static void test_redis_frontier_urls_and_names(void)
{
    char host[64];
    int port, db;
    ASSERT_EQ(crawl_redis_parse_url("redis://h.example:7000/3", host, sizeof host, &port, &db),
              CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(host, "h.example");
    ASSERT_EQ(port, 7000);
    ASSERT_EQ(db, 3);
    ASSERT_EQ(crawl_redis_parse_url("redis://127.0.0.1", host, sizeof host, &port, &db), CRAWL_OK);
    ASSERT_EQ(port, 6379);
    ASSERT_EQ(db, 0);
    ASSERT_EQ(crawl_redis_parse_url("http://x:1", host, sizeof host, &port, &db), CRAWL_EURL);
    ASSERT_EQ(crawl_redis_parse_url("redis://x:99999", host, sizeof host, &port, &db), CRAWL_EURL);
    ASSERT_EQ(crawl_redis_parse_url("redis://x:1/a", host, sizeof host, &port, &db), CRAWL_EURL);
    struct crawl_redis_opts o = {.url = "redis://127.0.0.1:1", .worker = "a b"};
    struct crawl_redis *r = NULL;
    char err[256];
    ASSERT_EQ(crawl_redis_open(&o, &r, err, sizeof err), CRAWL_EINVAL);
    CU_ASSERT(strstr(err, "bad worker name 'a b'") != NULL);
    o.worker = "a";
    ASSERT_EQ(crawl_redis_open(&o, &r, err, sizeof err), CRAWL_EIO);
    CU_ASSERT(strstr(err, "cannot connect to redis://127.0.0.1:1") != NULL);
}

/* ---- a Redis that goes away: connected again, nothing done twice, nothing lost ---- */

/* The sent hook: at the armed script, waits until Redis has run it (probe, an integer
 * command on another connection, answers want), kills the server (SIGKILL; appendfsync
 * always: the write is in the AOF), starts it again in place delay_ms later, and has the
 * reply lost (the worker's connection dropped unread). */
struct crash_at {
    struct test_redis *srv;
    const char *script;
    int fired;
    long delay_ms;
    const char *probe[3];
    int probe_n; /* 0: 3 */
    long long want;
};

static int crash_at_script(void *userdata, const char *what)
{
    struct crash_at *c = userdata;
    if (!c->script || strcmp(what, c->script) != 0)
        return 0;
    c->script = NULL;
    int pn = c->probe_n ? c->probe_n : 3;
    for (int i = 0; i < 400 && test_redis_cmd(c->srv, pn, c->probe) != c->want; i++)
        pause_s(0.005);
    c->fired = test_redis_cmd(c->srv, pn, c->probe) == c->want &&
               test_redis_crash_restart(c->srv, c->delay_ms) == 0;
    return 1;
}

static double mono(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static struct crawl_redis *worker_at(const char *url, const char *name, double host_lease,
                                     double retry)
{
    struct crawl_redis_opts o = {.url = url,
                                 .worker = name,
                                 .lease_time = 30,
                                 .host_lease_time = host_lease,
                                 .retry_time = retry};
    return open_opts(&o);
}

static void test_redis_frontier_reconnect(void)
{
    struct test_redis d = {.durable = 1};
    CU_ASSERT_FATAL(test_redis_start(&d, 0) == 0);
    struct crawl_redis *a = worker_at(d.url, "a", 10, 20), *b = worker_at(d.url, "b", -1, 20);
    CU_ASSERT_FATAL(a && b);
    int added = -1;
    ASSERT_EQ(crawl_redis_enqueue(a, "http://a.test/1", 13, 0, 0, NULL, &added), CRAWL_OK);
    ASSERT_EQ(crawl_redis_enqueue(a, "http://a.test/2", 13, 1, 0, NULL, &added), CRAWL_OK);
    ASSERT_EQ(crawl_redis_enqueue(a, "http://b.test/x", 13, 0, 0, NULL, &added), CRAWL_OK);
    struct got g = {0};
    size_t n = 0, kept = 9;
    double next = 0;
    int64_t leases = 0, v = 0;
    ASSERT_EQ(crawl_redis_acquire(a, 10, take, &g, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 2);
    /* the server dies once a's commit has run (a.test/1 done, a.test kept: a.test/2 leased
     * to a in the lost reply), down for 0.3 s: the commit is sent again, finds itself
     * made, and the lease of the lost reply goes back to the queue */
    struct crash_at cr = {.srv = &d,
                          .script = "commit",
                          .delay_ms = 300,
                          .probe = {"HEXISTS", "simcrawl{f0}:w:a", "cseq"},
                          .want = 1};
    crawl_redis_set_sent_hook(a, crash_at_script, &cr);
    ASSERT_EQ(crawl_redis_decided(a, "http://a.test/1", wall(), 0), CRAWL_OK);
    ASSERT_EQ(crawl_redis_set_meta_int(a, "warc.offset", 100), CRAWL_OK);
    ASSERT_EQ(crawl_redis_stats_add(a, "stats.fetched", 1), CRAWL_OK);
    double t0 = mono();
    ASSERT_EQ(crawl_redis_commit(a, 1, take, &g, &kept), CRAWL_OK);
    CU_ASSERT(cr.fired);
    CU_ASSERT(mono() - t0 >= 0.3);
    CU_ASSERT(crawl_redis_reconnects(a) >= 1);
    ASSERT_EQ(kept, 0);
    ASSERT_EQ(crawl_redis_held(a), 1); /* b.test/x */
    ASSERT_EQ(crawl_redis_stats_get(b, "stats.fetched", &v), CRAWL_OK);
    ASSERT_EQ(v, 1); /* counted once */
    int found = 0;
    ASSERT_EQ(crawl_redis_meta_int(a, "warc.offset", &v, &found), CRAWL_OK);
    CU_ASSERT(found && v == 100);
    const char *wl[2] = {"SCARD", "simcrawl{f0}:wl:a"};
    ASSERT_EQ(test_redis_cmd(&d, 2, wl), 1); /* no lease of a's that a does not know */
    /* a.test/2 is queued again; b (reconnected on its next call) gets it */
    struct got gb = {0};
    ASSERT_EQ(crawl_redis_acquire(b, 10, take, &gb, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 1);
    CU_ASSERT_STRING_EQUAL(gb.urls[0], "http://a.test/2");
    /* an acquire whose reply is lost: its leases go back, the acquire is made again */
    ASSERT_EQ(crawl_redis_enqueue(a, "http://c.test/1", 13, 0, 0, NULL, &added), CRAWL_OK);
    struct crash_at ca = {.srv = &d,
                          .script = "acquire",
                          .delay_ms = 100,
                          .probe = {"LLEN", "simcrawl{f0}:q:http://c.test"},
                          .probe_n = 2,
                          .want = 0};
    crawl_redis_set_sent_hook(a, crash_at_script, &ca);
    struct got g2 = {0};
    ASSERT_EQ(crawl_redis_acquire(a, 10, take, &g2, &n, &next, &leases), CRAWL_OK);
    CU_ASSERT(ca.fired);
    ASSERT_EQ(n, 1);
    CU_ASSERT_STRING_EQUAL(g2.urls[0], "http://c.test/1");
    ASSERT_EQ(crawl_redis_held(a), 2);
    ASSERT_EQ(test_redis_cmd(&d, 2, wl), 2);
    /* an enqueue pipeline whose replies are lost: queued once */
    struct crash_at ce = {.srv = &d,
                          .script = "enqueue",
                          .delay_ms = 100,
                          .probe = {"LLEN", "simcrawl{f0}:q:http://d.test"},
                          .probe_n = 2,
                          .want = 2};
    crawl_redis_set_sent_hook(a, crash_at_script, &ce);
    struct crawl_redis_link links[2] = {{.url = "http://d.test/1", .origin_len = 13},
                                        {.url = "http://d.test/2", .origin_len = 13}};
    ASSERT_EQ(crawl_redis_enqueue_many(a, links, 2, 1, NULL), CRAWL_OK);
    CU_ASSERT(ce.fired);
    const char *llen[2] = {"LLEN", "simcrawl{f0}:q:http://d.test"};
    ASSERT_EQ(test_redis_cmd(&d, 2, llen), 2);
    crawl_redis_set_sent_hook(a, NULL, NULL);
    crawl_redis_free(a);
    crawl_redis_free(b);
    /* a server that stays down: an error naming the URL within the bound */
    a = worker_at(d.url, "a", -1, 1);
    CU_ASSERT_FATAL(a != NULL);
    test_redis_kill(&d);
    t0 = mono();
    ASSERT_EQ(crawl_redis_stats_get(a, "stats.fetched", &v), CRAWL_EIO);
    double took = mono() - t0;
    CU_ASSERT(took >= 0.9 && took < 5);
    CU_ASSERT(strstr(crawl_redis_error(a), d.url) != NULL);
    CU_ASSERT(strstr(crawl_redis_error(a), "connecting again for") != NULL);
    crawl_redis_free(a);
    test_redis_stop(&d, 0);
}

/* A proxy's answers for a node it lost (nutcracker: "ERR unknown" when the node closed the
 * connection mid-command, "ERR Connection refused" while it is down) are a lost connection:
 * connected again, the command sent again. Redis's own "ERR unknown command" is not. */
static void test_redis_frontier_proxy_lost_node(void)
{
    CU_ASSERT_FATAL(srv_up);
    flush();
    struct test_relay x = {0};
    CU_ASSERT_FATAL(test_relay_start(&x, srv.port) == 0);
    struct crawl_redis *a = worker_at(x.url, "a", -1, 5);
    CU_ASSERT_FATAL(a != NULL);
    ASSERT_EQ(enqueue(a, "http://a.test/1", NULL), 1);
    struct got g = {0};
    size_t n = 0, kept = 9;
    double next = 0;
    int64_t leases = 0, v = 0;
    ASSERT_EQ(crawl_redis_acquire(a, 10, take, &g, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 1);
    static const char *const lost[] = {"-ERR unknown\r\n", "-ERR Connection refused\r\n",
                                       "-LOADING Redis is loading the dataset in memory\r\n"};
    for (size_t i = 0; i < sizeof lost / sizeof *lost; i++) {
        uint64_t before = crawl_redis_reconnects(a);
        char url[32];
        snprintf(url, sizeof url, "http://b.test/%zu", i);
        x.answer = lost[i];
        atomic_store(&x.poison, 1);
        ASSERT_EQ(enqueue(a, url, NULL), 1);
        ASSERT_EQ(atomic_load(&x.fired), (int)i + 1);
        CU_ASSERT(crawl_redis_reconnects(a) == before + 1);
    }
    const char *llen[2] = {"LLEN", "simcrawl{f0}:q:http://b.test"};
    ASSERT_EQ(test_redis_cmd(&srv, 2, llen), 3); /* each queued once */
    ASSERT_EQ(crawl_redis_decided(a, "http://a.test/1", wall(), 0), CRAWL_OK);
    ASSERT_EQ(crawl_redis_stats_add(a, "stats.fetched", 1), CRAWL_OK);
    x.answer = "-ERR unknown\r\n";
    atomic_store(&x.poison, 1);
    ASSERT_EQ(crawl_redis_commit(a, 0, take, &g, &kept), CRAWL_OK);
    ASSERT_EQ(atomic_load(&x.fired), 4);
    ASSERT_EQ(crawl_redis_stats_get(a, "stats.fetched", &v), CRAWL_OK);
    ASSERT_EQ(v, 1); /* counted once */
    ASSERT_EQ(crawl_redis_held(a), 0);
    /* a wrong command is an error of its own, named, not a connection to make again */
    uint64_t before = crawl_redis_reconnects(a);
    x.answer = "-ERR unknown command 'EVALSHA', with args beginning with: \r\n";
    atomic_store(&x.poison, 1);
    int added = -1;
    CU_ASSERT(crawl_redis_enqueue(a, "http://c.test/1", 13, 0, 0, NULL, &added) != CRAWL_OK);
    CU_ASSERT(strstr(crawl_redis_error(a), "unknown command") != NULL);
    CU_ASSERT(crawl_redis_reconnects(a) == before);
    crawl_redis_free(a);
    test_relay_stop(&x);
}

static struct crawl_redis *worker_shards(const char *name, unsigned shards, char *err,
                                         size_t errlen)
{
    struct crawl_redis_opts o = {
        .url = srv.url, .worker = name, .lease_time = 30, .host_lease_time = -1, .shards = shards};
    struct crawl_redis *r = NULL;
    if (crawl_redis_open(&o, &r, err, errlen) != CRAWL_OK)
        return NULL;
    return r;
}

/* The shard count is the crawl's, fixed when it starts: a worker given none takes it, one
 * given another is refused with both named; a crawl left by a simcrawl before the count
 * was kept (its keys under {f0}) is the one-shard case and resumes as such. */
static void test_redis_frontier_shard_count_fixed(void)
{
    CU_ASSERT_FATAL(srv_up);
    flush();
    char err[512] = "";
    struct crawl_redis *a = worker_shards("a", 4, err, sizeof err);
    CU_ASSERT_FATAL(a != NULL);
    ASSERT_EQ(crawl_redis_shards(a), 4);
    struct crawl_redis *b = worker_shards("b", 0, err, sizeof err);
    CU_ASSERT_FATAL(b != NULL);
    ASSERT_EQ(crawl_redis_shards(b), 4);
    CU_ASSERT_PTR_NULL(worker_shards("c", 2, err, sizeof err));
    CU_ASSERT(strstr(err, "spread over 4 shards") != NULL);
    CU_ASSERT(strstr(err, "started with 2") != NULL);
    CU_ASSERT_PTR_NULL(worker_shards("c", 5000, err, sizeof err));
    CU_ASSERT(strstr(err, "bad shard count 5000") != NULL);
    crawl_redis_free(a);
    crawl_redis_free(b);
    /* the keys of an earlier simcrawl's crawl, no count: one shard, resumed */
    flush();
    const char *tok[3] = {"SET", "simcrawl{f0}:tok", "7"};
    const char *q[3] = {"RPUSH", "simcrawl{f0}:q:http://a.test", "0 0\n\nhttp://a.test/1"};
    const char *rd[4] = {"ZADD", "simcrawl{f0}:ready", "0", "http://a.test"};
    CU_ASSERT(test_redis_cmd(&srv, 3, tok) >= 0);
    CU_ASSERT(test_redis_cmd(&srv, 3, q) >= 0);
    CU_ASSERT(test_redis_cmd(&srv, 4, rd) >= 0);
    CU_ASSERT_PTR_NULL(worker_shards("a", 8, err, sizeof err));
    CU_ASSERT(strstr(err, "spread over 1 shard ") != NULL);
    a = worker_shards("a", 0, err, sizeof err);
    CU_ASSERT_FATAL(a != NULL);
    ASSERT_EQ(crawl_redis_shards(a), 1);
    struct got g = {0};
    size_t n = 0;
    double next = 0;
    int64_t leases = 0;
    ASSERT_EQ(crawl_redis_acquire(a, 10, take, &g, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 1);
    CU_ASSERT_STRING_EQUAL(g.urls[0], "http://a.test/1");
    crawl_redis_free(a);
}

struct count {
    int n;
    char origins[64][32];
    char urls[64][40];
};

static int count_take(void *userdata, const struct crawl_redis_lease *l)
{
    struct count *c = userdata;
    if (c->n < 64) {
        snprintf(c->origins[c->n], sizeof c->origins[0], "%s", l->origin);
        snprintf(c->urls[c->n], sizeof c->urls[0], "%s", l->url);
    }
    c->n++;
    return 0;
}

static int count_sent(void *userdata, const char *what)
{
    int *acquires = userdata;
    *acquires += strcmp(what, "acquire") == 0;
    return 0;
}

/* Over 4 shards: a host's keys are under its shard's tag, the hosts spread over the four;
 * an acquire asks the shards in one round trip and leases one URL a host whatever its
 * shard; renew, reap and release work shard by shard; the crawl is finished only when
 * every shard is empty at one moment (a URL queued in a shard read empty before is seen). */
static void test_redis_frontier_sharded_acquire(void)
{
    CU_ASSERT_FATAL(srv_up);
    flush();
    char err[512] = "";
    struct crawl_redis *a = worker_shards("a", 4, err, sizeof err);
    struct crawl_redis_opts ob = {
        .url = srv.url, .worker = "b", .lease_time = 0.5, .host_lease_time = -1};
    struct crawl_redis *b = NULL;
    ASSERT_EQ(crawl_redis_open(&ob, &b, err, sizeof err), CRAWL_OK);
    CU_ASSERT_FATAL(a && b);
    ASSERT_EQ(crawl_redis_shards(b), 4);
    /* finished at the start: every shard empty */
    struct count c = {0};
    size_t n = 9;
    double next = 0;
    int64_t leases = 9;
    ASSERT_EQ(crawl_redis_acquire(a, 16, count_take, &c, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 0);
    CU_ASSERT(next < 0 && leases == 0);
    /* 32 hosts, 2 URLs each */
    struct crawl_redis_link links[64];
    char urls[64][40];
    for (int i = 0; i < 64; i++) {
        snprintf(urls[i], sizeof urls[i], "http://h%02d.test/%d", i / 2, i % 2);
        links[i] = (struct crawl_redis_link){.url = urls[i], .origin_len = 15};
    }
    ASSERT_EQ(crawl_redis_enqueue_many(b, links, 64, 0, NULL), CRAWL_OK);
    for (int i = 0; i < 64; i++)
        ASSERT_EQ(links[i].added, 1);
    /* every shard holds hosts, each host's keys under one tag */
    int per[4] = {0};
    for (int b4 = 0; b4 < 4; b4++) {
        char pat[32];
        snprintf(pat, sizeof pat, "simcrawl{f%d.*}:q:*", b4);
        const char *keys[4] = {"EVAL", "return #redis.call('KEYS', ARGV[1])", "0", pat};
        per[b4] = (int)test_redis_cmd(&srv, 4, keys);
        CU_ASSERT(per[b4] >= 1);
    }
    ASSERT_EQ(per[0] + per[1] + per[2] + per[3], 32);
    /* a's acquires lease one URL of every host, one round trip each (the sent hook fires
     * once a round); the hosts held, nothing more is ready */
    int rounds = 0, calls = 0;
    crawl_redis_set_sent_hook(a, count_sent, &calls);
    while (c.n < 32 && rounds < 20) {
        ASSERT_EQ(crawl_redis_acquire(a, 32 - (size_t)c.n, count_take, &c, &n, &next, &leases),
                  CRAWL_OK);
        rounds++;
    }
    ASSERT_EQ(c.n, 32);
    ASSERT_EQ(calls, rounds);
    ASSERT_EQ(leases, 32);
    for (int i = 0; i < 32; i++)
        for (int k = 0; k < i; k++)
            CU_ASSERT(strcmp(c.origins[i], c.origins[k]) != 0);
    struct count cb = {0};
    ASSERT_EQ(crawl_redis_acquire(b, 16, count_take, &cb, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 0);
    ASSERT_EQ(leases, 32);
    ASSERT_EQ(crawl_redis_renew(a), CRAWL_OK);
    /* a gives them back (a restart): b gets 8 of them, from the shards it asks */
    size_t back = 0;
    ASSERT_EQ(crawl_redis_release(a, &back), CRAWL_OK);
    ASSERT_EQ(back, 32);
    ASSERT_EQ(crawl_redis_held(a), 0);
    pause_s(CRAWL_REDIS_SHARD_REFRESH + 0.01); /* b asks every shard again */
    struct count cb2 = {0};
    ASSERT_EQ(crawl_redis_acquire(b, 8, count_take, &cb2, &n, &next, &leases), CRAWL_OK);
    CU_ASSERT(n >= 4); /* 2 asked of each shard, all of them ready (8 hosts at least) */
    for (int i = 0; i < 10 && cb2.n < 8; i++)
        ASSERT_EQ(crawl_redis_acquire(b, 8 - (size_t)cb2.n, count_take, &cb2, &n, &next, &leases),
                  CRAWL_OK);
    ASSERT_EQ(cb2.n, 8);
    ASSERT_EQ(crawl_redis_held(b), 8);
    /* b stalls past its 0.5 s lease: a reaps them in every shard */
    pause_s(0.6);
    size_t reaped = 0;
    ASSERT_EQ(crawl_redis_reap(a, &reaped), CRAWL_OK);
    ASSERT_EQ(reaped, 8);
    ASSERT_EQ(crawl_redis_renew(b), CRAWL_EIO);
    CU_ASSERT(strstr(crawl_redis_error(b), "expired") != NULL);
    crawl_redis_set_sent_hook(a, NULL, NULL);
    crawl_redis_free(a);
    crawl_redis_free(b);
}

/* The finish check over shards read at different times: a shard read empty, then given
 * a URL while the others are read, is not taken for empty (its version moved). */
static void test_redis_frontier_sharded_finish(void)
{
    CU_ASSERT_FATAL(srv_up);
    flush();
    char err[512] = "";
    struct crawl_redis *a = worker_shards("a", 8, err, sizeof err);
    struct crawl_redis *b = worker_shards("b", 8, err, sizeof err);
    CU_ASSERT_FATAL(a && b);
    struct count c = {0};
    size_t n = 9;
    double next = 0;
    int64_t leases = 9;
    ASSERT_EQ(crawl_redis_acquire(a, 4, count_take, &c, &n, &next, &leases), CRAWL_OK);
    CU_ASSERT(n == 0 && next < 0 && leases == 0); /* every shard empty: read twice */
    /* a URL in one shard: a's next acquire, within the refresh, asks one shard only; if
     * not that one, the confirmation finds the version moved */
    int added = 0;
    ASSERT_EQ(crawl_redis_enqueue(b, "http://x.test/1", 13, 0, 0, NULL, &added), CRAWL_OK);
    ASSERT_EQ(added, 1);
    ASSERT_EQ(crawl_redis_acquire(a, 4, count_take, &c, &n, &next, &leases), CRAWL_OK);
    CU_ASSERT(n == 1 || next >= 0);
    for (int i = 0; i < 20 && c.n == 0; i++) {
        pause_s(0.02);
        ASSERT_EQ(crawl_redis_acquire(a, 4, count_take, &c, &n, &next, &leases), CRAWL_OK);
    }
    ASSERT_EQ(c.n, 1);
    ASSERT_EQ(leases, 1);
    crawl_redis_free(a);
    crawl_redis_free(b);
}

/* The leases of a over B shards, all of them: acquired until n or 10 rounds. */
/* acquires until c holds want leases, 40 times at most (over shards a shard's give-back of
 * its page budget reaches T with the next call) */
static void acquire_upto(struct crawl_redis *r, struct count *c, int want)
{
    size_t n = 0;
    double next = 0;
    int64_t leases = 0;
    for (int i = 0; i < 40 && c->n < want; i++) {
        ASSERT_EQ(crawl_redis_acquire(r, (size_t)(want - c->n), count_take, c, &n, &next, &leases),
                  CRAWL_OK);
        if (c->n < want)
            pause_s(0.005);
    }
}

static void acquire_all(struct crawl_redis *r, struct count *c, int want)
{
    acquire_upto(r, c, want);
    ASSERT_EQ(c->n, want);
}

static struct crawl_redis *worker_sharded(const char *name, double lease_time, double host_lease)
{
    struct crawl_redis_opts o = {.url = srv.url,
                                 .worker = name,
                                 .lease_time = lease_time,
                                 .host_lease_time = host_lease,
                                 .shards = 4};
    return open_opts(&o);
}

/* n hosts h00..h(n-1), URLs /0 and /1 of each, queued by r */
static void enqueue_hosts(struct crawl_redis *r, int n)
{
    struct crawl_redis_link links[64];
    char urls[64][40];
    for (int i = 0; i < 2 * n && i < 64; i++) {
        snprintf(urls[i], sizeof urls[i], "http://h%02d.test/%d", i / 2, i % 2);
        links[i] = (struct crawl_redis_link){.url = urls[i], .origin_len = 15};
    }
    ASSERT_EQ(crawl_redis_enqueue_many(r, links, (size_t)(2 * n), 0, NULL), CRAWL_OK);
}

/* the URL "ORIGIN/0" of each lease taken */
static void decide_all(struct crawl_redis *r, const struct count *c, double next)
{
    for (int i = 0; i < c->n; i++) {
        char url[48];
        snprintf(url, sizeof url, "%s/0", c->origins[i]);
        ASSERT_EQ(crawl_redis_fetching(r, url), CRAWL_OK);
        ASSERT_EQ(crawl_redis_decided(r, url, next, 0.1), CRAWL_OK);
    }
}

static long long queued(const char *origin)
{
    /* the host's queue length, whatever its shard */
    char pat[64];
    snprintf(pat, sizeof pat, "simcrawl{f*}:q:%s", origin);
    const char *cmd[4] = {"EVAL",
                          "local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                          "n = n + redis.call('LLEN', k) end return n",
                          "0", pat};
    return test_redis_cmd(&srv, 4, cmd);
}

/* A commit over 4 shards: the group's URLs of every shard completed, the worker's meta,
 * counters and page records written on its own tag (summed over the workers when read),
 * the hosts kept with their next URL leased while the host lease runs. */
static void test_redis_frontier_sharded_commit(void)
{
    CU_ASSERT_FATAL(srv_up);
    flush();
    struct crawl_redis *a = worker_sharded("a", 30, 10), *b = worker_sharded("b", 30, -1);
    CU_ASSERT_FATAL(a && b);
    enqueue_hosts(a, 12);
    struct count c = {0};
    acquire_all(a, &c, 12);
    decide_all(a, &c, wall());
    ASSERT_EQ(crawl_redis_set_meta_int(a, "warc.offset", 777), CRAWL_OK);
    ASSERT_EQ(crawl_redis_stats_add(a, "stats.fetched", 12), CRAWL_OK);
    ASSERT_EQ(crawl_redis_page_add(a, "rec", 3), CRAWL_OK);
    struct count k = {0};
    size_t kept = 0;
    ASSERT_EQ(crawl_redis_commit(a, 1, count_take, &k, &kept), CRAWL_OK);
    ASSERT_EQ(kept, 12); /* every host kept: its /1 leased */
    ASSERT_EQ(crawl_redis_held(a), 12);
    ASSERT_EQ(crawl_redis_outstanding(a), 12);
    for (int i = 0; i < 12; i++)
        ASSERT_EQ(queued(c.origins[i]), 0);
    int64_t v = 0;
    int found = 0;
    ASSERT_EQ(crawl_redis_meta_int(a, "warc.offset", &v, &found), CRAWL_OK);
    CU_ASSERT(found && v == 777);
    ASSERT_EQ(crawl_redis_meta_int(a, "cseq", &v, &found), CRAWL_OK);
    ASSERT_EQ(v, 1);
    /* b's counters add to a's */
    ASSERT_EQ(crawl_redis_stats_add(b, "stats.fetched", 2), CRAWL_OK);
    ASSERT_EQ(crawl_redis_commit(b, 0, count_take, &k, &kept), CRAWL_OK);
    ASSERT_EQ(crawl_redis_stats_get(b, "stats.fetched", &v), CRAWL_OK);
    ASSERT_EQ(v, 14);
    const char *wkeys[4] = {"EVAL", "return #redis.call('KEYS', ARGV[1])", "0", "simcrawl{w:a}:*"};
    CU_ASSERT(test_redis_cmd(&srv, 4, wkeys) >= 3); /* w, wp, stats, apply */
    /* the second commit: the /1 URLs, hosts given back; the list of the first forgotten */
    struct count c1 = {0};
    for (int i = 0; i < 12; i++) {
        char url[48];
        snprintf(url, sizeof url, "%s/1", c.origins[i]);
        ASSERT_EQ(crawl_redis_decided(a, url, wall(), 0.1), CRAWL_OK);
    }
    ASSERT_EQ(crawl_redis_commit(a, 0, count_take, &c1, &kept), CRAWL_OK);
    ASSERT_EQ(kept, 0);
    ASSERT_EQ(crawl_redis_held(a), 0);
    const char *hlen[2] = {"HLEN", "simcrawl{w:a}:apply"};
    ASSERT_EQ(test_redis_cmd(&srv, 2, hlen), 1);
    /* nothing left: finished for b */
    size_t n = 9;
    double next = 0;
    int64_t leases = 9;
    pause_s(CRAWL_REDIS_SHARD_REFRESH + 0.01);
    ASSERT_EQ(crawl_redis_acquire(b, 4, count_take, &k, &n, &next, &leases), CRAWL_OK);
    CU_ASSERT(n == 0 && next < 0 && leases == 0);
    crawl_redis_free(a);
    crawl_redis_free(b);
}

/* the child's kill: dead at this crash point */
static const char *crash_want;
static void crash_point(const char *name)
{
    if (crash_want && strcmp(name, crash_want) == 0)
        _exit(0);
}

/* A worker killed at each step of the commit over shards (a child process dying at the
 * crash point), then either started again by name or left to a reaper: every URL of the
 * group ends either completed with its records committed (never queued again) or queued
 * again with them not committed. Never both, never neither. */
static void test_redis_frontier_sharded_commit_killed(void)
{
    CU_ASSERT_FATAL(srv_up);
    static const char *const points[] = {"redis-commit-begin", "redis-commit-marked",
                                         "redis-commit-done", "redis-commit-applied"};
    for (size_t p = 0; p < 4; p++)
        for (int restart = 0; restart < 2; restart++) {
            flush();
            struct crawl_redis *seed = worker_sharded("s", 30, -1);
            CU_ASSERT_FATAL(seed != NULL);
            enqueue_hosts(seed, 6);
            crawl_redis_free(seed);
            fflush(NULL);
            pid_t pid = fork();
            CU_ASSERT_FATAL(pid >= 0);
            if (pid == 0) {
                struct crawl_redis *a = worker_sharded("a", 0.3, -1);
                if (!a)
                    _exit(2);
                struct count c = {0};
                size_t n = 0;
                double next = 0;
                int64_t leases = 0;
                for (int i = 0; i < 30 && c.n < 6; i++)
                    if (crawl_redis_acquire(a, (size_t)(6 - c.n), count_take, &c, &n, &next,
                                            &leases) != CRAWL_OK)
                        _exit(3);
                for (int i = 0; i < c.n; i++) {
                    char url[48];
                    snprintf(url, sizeof url, "%s/0", c.origins[i]);
                    if (crawl_redis_fetching(a, url) != CRAWL_OK ||
                        crawl_redis_decided(a, url, wall(), 0) != CRAWL_OK)
                        _exit(4);
                }
                if (c.n != 6 || crawl_redis_set_meta_int(a, "warc.offset", 500) != CRAWL_OK)
                    _exit(5);
                crash_want = points[p];
                crawl_redis_set_crash_hook(a, crash_point);
                size_t kept = 0;
                _exit(crawl_redis_commit(a, 0, count_take, &c, &kept) == CRAWL_OK
                          ? 6 /* the crash point was not reached */
                          : 7);
            }
            int st = 0;
            CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
            ASSERT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
            int committed = p >= 2; /* the commit point was made */
            if (restart) {
                struct crawl_redis *a = worker_sharded("a", 0.3, -1);
                CU_ASSERT_FATAL(a != NULL);
                /* the restart applies a commit made, then gives the rest back */
                ASSERT_EQ(crawl_redis_released(a), committed ? 0 : 6);
                crawl_redis_free(a);
            } else {
                struct crawl_redis *b = worker_sharded("b", 30, -1);
                CU_ASSERT_FATAL(b != NULL);
                /* past the leases (0.3 s) and the marks' bound and margin (2 x 0.3 / 8) */
                pause_s(0.3 + 0.1 + 0.05);
                size_t reaped = 0, total = 0;
                for (int i = 0; i < 2; i++) {
                    ASSERT_EQ(crawl_redis_reap(b, &reaped), CRAWL_OK);
                    total += reaped;
                }
                /* the applied ones were completed by the worker itself */
                ASSERT_EQ(total, p == 3 ? 0 : 6);
                crawl_redis_free(b);
            }
            /* a's records: committed exactly when the commit point was made */
            const char *hget[3] = {"HGET", "simcrawl{w:a}:w", "cseq"};
            ASSERT_EQ(test_redis_cmd(&srv, 3, hget), committed ? 1 : 0);
            /* and the /0 URLs: queued again exactly when not */
            long long back = 0;
            for (int h = 0; h < 6; h++) {
                char origin[32];
                snprintf(origin, sizeof origin, "http://h%02d.test", h);
                back += queued(origin);
            }
            ASSERT_EQ(back, committed ? 6 : 12); /* the /1 URLs, and the /0 again */
            const char *marks[4] = {"EVAL", "return #redis.call('KEYS', ARGV[1])", "0",
                                    "simcrawl{f*}:mark"};
            ASSERT_EQ(test_redis_cmd(&srv, 4, marks), 0);
            const char *dl[4] = {"EVAL", "return #redis.call('KEYS', ARGV[1])", "0",
                                 "simcrawl{f*}:dl"};
            ASSERT_EQ(test_redis_cmd(&srv, 4, dl), 0);
        }
}

static int lose_once(void *userdata, const char *what)
{
    const char **want = userdata;
    if (*want && strcmp(what, *want) == 0) {
        *want = NULL;
        return 1;
    }
    return 0;
}

/* The answers of a mark, a commit point and an apply lost with the connection: sent
 * again, each does nothing twice (counters once, every lease once). */
static void test_redis_frontier_sharded_commit_lost_reply(void)
{
    CU_ASSERT_FATAL(srv_up);
    static const char *const steps[] = {"mark", "commit", "apply"};
    for (size_t i = 0; i < 3; i++) {
        flush();
        struct crawl_redis *a = worker_sharded("a", 30, 10);
        CU_ASSERT_FATAL(a != NULL);
        enqueue_hosts(a, 6);
        struct count c = {0};
        acquire_all(a, &c, 6);
        decide_all(a, &c, wall());
        ASSERT_EQ(crawl_redis_stats_add(a, "stats.fetched", 6), CRAWL_OK);
        const char *want = steps[i];
        crawl_redis_set_sent_hook(a, lose_once, &want);
        struct count k = {0};
        size_t kept = 0;
        ASSERT_EQ(crawl_redis_commit(a, 1, count_take, &k, &kept), CRAWL_OK);
        CU_ASSERT_PTR_NULL(want);
        CU_ASSERT(crawl_redis_reconnects(a) >= 1);
        int64_t v = 0;
        ASSERT_EQ(crawl_redis_stats_get(a, "stats.fetched", &v), CRAWL_OK);
        ASSERT_EQ(v, 6);
        /* what a holds is what Redis says it holds: the kept leases of a lost apply
         * answer went back to their queues */
        const char *wl[4] = {"EVAL",
                             "local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                             "n = n + redis.call('SCARD', k) end return n",
                             "0", "simcrawl{f*}:wl:a"};
        ASSERT_EQ(test_redis_cmd(&srv, 4, wl), (long long)crawl_redis_held(a));
        ASSERT_EQ(crawl_redis_held(a), i == 2 ? 0 : 6);
        crawl_redis_free(a);
    }
}

/* acquire_upto with the answer of the first call named what lost with the connection */
static void acquire_losing(struct crawl_redis *r, const char *what, struct count *c, int want)
{
    const char *lose = what;
    crawl_redis_set_sent_hook(r, lose_once, &lose);
    acquire_upto(r, c, want);
    CU_ASSERT_PTR_NULL(lose);
    CU_ASSERT(crawl_redis_reconnects(r) >= 1);
    crawl_redis_set_sent_hook(r, NULL, NULL);
}

/* the page budget the shards count used (S:budget: URLs leased and not given back, less
 * those completed without a request), summed */
static long long budget_used(void)
{
    const char *cmd[4] = {"EVAL",
                          "local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                          "n = n + tonumber(redis.call('GET', k)) end return n",
                          "0", "simcrawl{f*.*}:budget"};
    return test_redis_cmd(&srv, 4, cmd);
}

/* what T holds granted and not given back: the shards' use plus what they hold unused */
static long long budget_held(void)
{
    const char *cmd[4] = {"EVAL",
                          "local n = 0 for _, v in ipairs(redis.call('HVALS', KEYS[1] .. ':bg')) "
                          "do n = n + tonumber(v) end for _, v in ipairs(redis.call('HVALS', "
                          "KEYS[1] .. ':br')) do n = n - tonumber(v) end return n",
                          "1", "simcrawl{f0}"};
    return test_redis_cmd(&srv, 4, cmd);
}

/* completes the leases c[from..to), with a request or without */
static void complete_some(struct crawl_redis *r, const struct count *c, int from, int to,
                          int fetched)
{
    for (int i = from; i < to; i++) {
        if (fetched)
            ASSERT_EQ(crawl_redis_fetching(r, c->urls[i]), CRAWL_OK);
        ASSERT_EQ(crawl_redis_decided(r, c->urls[i], wall(), 0), CRAWL_OK);
    }
    size_t kept = 0;
    struct count k = {0};
    ASSERT_EQ(crawl_redis_commit(r, 0, count_take, &k, &kept), CRAWL_OK);
}

/* A budget freed in a shard whose queues are empty is given back and leased in others:
 * --max-pages 2, two hosts of shard s leased and completed without a request, then the
 * hosts of the other shards lease the 2. */
static void budget_moves(void)
{
    flush();
    struct crawl_redis *a = worker_sharded("a", 30, -1);
    CU_ASSERT_FATAL(a != NULL);
    crawl_redis_set_max_pages(a, 2);
    char urls[8][40];
    struct crawl_redis_link in_s[2], others[3];
    int ns = 0, no = 0;
    for (int h = 0; h < 64 && (ns < 2 || no < 3); h++) {
        char origin[32];
        int len = snprintf(origin, sizeof origin, "http://h%02d.test", h);
        int mine = XXH3_64bits(origin, (size_t)len) % 4 == 0;
        if (mine ? ns == 2 : no == 3)
            continue;
        char *u = urls[ns + no];
        snprintf(u, sizeof urls[0], "%s/0", origin);
        struct crawl_redis_link l = {.url = u, .origin_len = (size_t)len};
        if (mine)
            in_s[ns++] = l;
        else
            others[no++] = l;
    }
    ASSERT_EQ(crawl_redis_enqueue_many(a, in_s, 2, 0, NULL), CRAWL_OK);
    struct count c = {0};
    acquire_upto(a, &c, 2);
    ASSERT_EQ(c.n, 2);
    ASSERT_EQ(crawl_redis_enqueue_many(a, others, 3, 0, NULL), CRAWL_OK);
    complete_some(a, &c, 0, 2, 0);
    struct count k = {0};
    acquire_upto(a, &k, 3);
    ASSERT_EQ(k.n, 2);
    ASSERT_EQ(budget_used(), 2);
    ASSERT_EQ(budget_held(), 2);
    crawl_redis_free(a);
}

/* --max-pages over 4 shards: T grants the shards the budget, each leases within its own
 * and gives back what it did not lease. The workers together lease no more than the
 * budget; a URL completed without a request gives its share back; a worker killed and
 * never started again gives its leases' shares back when they are reaped; one killed
 * between the grant and its acquire, or whose grant's answer was lost, strands nothing;
 * a worker killed after its commit point settles that commit when started again. */
static void test_redis_frontier_sharded_budget(void)
{
    CU_ASSERT_FATAL(srv_up);
    flush();
    struct crawl_redis *a = worker_sharded("a", 30, -1), *b = worker_sharded("b", 0.3, -1);
    CU_ASSERT_FATAL(a && b);
    crawl_redis_set_max_pages(a, 10);
    crawl_redis_set_max_pages(b, 10);
    enqueue_hosts(a, 32);
    struct count ca = {0}, cb = {0};
    size_t n = 0;
    double next = 0;
    int64_t leases = 0;
    acquire_upto(a, &ca, 6);
    ASSERT_EQ(ca.n, 6);
    for (int i = 0; i < 20 && crawl_redis_budget_left(b) != 0; i++)
        ASSERT_EQ(crawl_redis_acquire(b, 16, count_take, &cb, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(cb.n, 4); /* 10 in all */
    ASSERT_EQ(crawl_redis_budget_left(b), 0);
    ASSERT_EQ(budget_used(), 10);
    ASSERT_EQ(budget_held(), 10);
    ASSERT_EQ(crawl_redis_acquire(a, 16, count_take, &ca, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(n, 0);
    /* a completes its 6: 4 with a request, 2 without (robots.txt): 2 come back, to b */
    complete_some(a, &ca, 0, 4, 1);
    complete_some(a, &ca, 4, 6, 0);
    ASSERT_EQ(budget_used(), 8);
    acquire_upto(b, &cb, 16);
    ASSERT_EQ(cb.n, 6);
    ASSERT_EQ(budget_used(), 10);
    /* b is killed holding 6 and never started again: a reaps them, and leases 6 */
    crawl_redis_free(b);
    pause_s(0.35);
    size_t reaped = 0;
    ASSERT_EQ(crawl_redis_reap(a, &reaped), CRAWL_OK);
    ASSERT_EQ(reaped, 6);
    /* a's 4 requests, and the 6 shares the reaped URLs keep for their next lease */
    ASSERT_EQ(budget_used(), 10);
    ca.n = 0;
    acquire_upto(a, &ca, 16);
    ASSERT_EQ(ca.n, 6);
    ASSERT_EQ(budget_used(), 10);
    /* a gives 6 back without a request; d, killed between T's grant and its acquire,
     * strands nothing: a leases the 6 */
    complete_some(a, &ca, 0, 6, 0);
    ASSERT_EQ(budget_used(), 4);
    fflush(NULL);
    pid_t pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        struct crawl_redis *d = worker_sharded("d", 30, -1);
        if (!d)
            _exit(2);
        crawl_redis_set_max_pages(d, 10);
        struct count cd = {0};
        crash_want = "redis-budget-granted";
        crawl_redis_set_crash_hook(d, crash_point);
        for (int i = 0; i < 20; i++)
            if (crawl_redis_acquire(d, 5, count_take, &cd, &n, &next, &leases) != CRAWL_OK)
                _exit(3);
        _exit(4);
    }
    int st = 0;
    CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
    ASSERT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
    ca.n = 0;
    acquire_upto(a, &ca, 16);
    ASSERT_EQ(ca.n, 6);
    ASSERT_EQ(budget_used(), 10);
    /* the answer of a grant lost with the connection: sent again, it may grant twice; the
     * shards give the surplus back and no more than the budget is leased */
    complete_some(a, &ca, 0, 3, 0);
    struct count c3 = {0};
    acquire_losing(a, "budget", &c3, 16);
    ASSERT_EQ(c3.n, 3);
    ASSERT_EQ(budget_used(), 10);
    ASSERT_EQ(crawl_redis_acquire(a, 16, count_take, &c3, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(budget_held(), 10); /* every surplus back in the pool */
    ASSERT_EQ(crawl_redis_release(a, &n), CRAWL_OK);
    ASSERT_EQ(n, 6);
    ASSERT_EQ(budget_used(), 10); /* released, the 6 keep their shares */
    crawl_redis_free(a);
    /* a worker killed after its commit point (before the apply): started again, the
     * commit applied (its URL without a request gives its share back), its leases given
     * back */
    fflush(NULL);
    pid = fork();
    CU_ASSERT_FATAL(pid >= 0);
    if (pid == 0) {
        struct crawl_redis *c = worker_sharded("c", 30, -1);
        if (!c)
            _exit(2);
        crawl_redis_set_max_pages(c, 10);
        struct count cc = {0};
        size_t m = 0;
        double nx = 0;
        int64_t ls = 0;
        for (int i = 0; i < 20 && cc.n < 5; i++)
            if (crawl_redis_acquire(c, (size_t)(5 - cc.n), count_take, &cc, &m, &nx, &ls) !=
                CRAWL_OK)
                _exit(3);
        if (cc.n != 5)
            _exit(4);
        for (int i = 0; i < 3; i++) /* 2 fetched, 1 not; 2 left held */
            if ((i < 2 && crawl_redis_fetching(c, cc.urls[i]) != CRAWL_OK) ||
                crawl_redis_decided(c, cc.urls[i], wall(), 0) != CRAWL_OK)
                _exit(5);
        crash_want = "redis-commit-done";
        crawl_redis_set_crash_hook(c, crash_point);
        size_t kk = 0;
        _exit(crawl_redis_commit(c, 0, count_take, &cc, &kk) == CRAWL_OK ? 6 : 7);
    }
    CU_ASSERT_FATAL(waitpid(pid, &st, 0) == pid);
    ASSERT_EQ(WIFEXITED(st) ? WEXITSTATUS(st) : -1, 0);
    ASSERT_EQ(budget_used(), 10); /* c's 5 leased with the shares the 6 released kept */
    struct crawl_redis *c = worker_sharded("c", 30, -1);
    CU_ASSERT_FATAL(c != NULL);
    ASSERT_EQ(crawl_redis_released(c), 2);
    /* the 2 requests of its commit, the URL it completed without one gave its share back,
     * the 2 it held and the one c never leased keep theirs */
    ASSERT_EQ(budget_used(), 4 + 2 + 3);
    crawl_redis_free(c);
    budget_moves();
}

/* one worker over `shards` shards (1: worker()) */
static struct crawl_redis *worker_n(const char *name, double lease_time, unsigned shards)
{
    if (shards == 1)
        return worker(name, lease_time);
    struct crawl_redis_opts o = {.url = srv.url,
                                 .worker = name,
                                 .lease_time = lease_time,
                                 .host_lease_time = -1,
                                 .shards = shards};
    return open_opts(&o);
}

/* A URL handed back by a reap keeps the page budget share its lease had, and is leased
 * again before anything new: its page may be in the shared index already (kept by a worker
 * killed before its commit, near-duplicates dropped against it), so it must be fetched and
 * archived again whatever else waits. --max-pages 2 over 1 and 4 shards: a leases x and y
 * and is killed; z, queued since and due first, is not leased, x and y are (the budget
 * spent), and the crawl is not finished while they wait; then it is. */
static void reap_keeps_share(unsigned shards)
{
    flush();
    struct crawl_redis *a = worker_n("a", 0.3, shards), *b = worker_n("b", 30, shards);
    CU_ASSERT_FATAL(a && b);
    crawl_redis_set_max_pages(a, 2);
    crawl_redis_set_max_pages(b, 2);
    struct crawl_redis_link xy[2] = {{.url = "http://x.test/1", .origin_len = 13},
                                     {.url = "http://y.test/1", .origin_len = 13}};
    ASSERT_EQ(crawl_redis_enqueue_many(a, xy, 2, 0, NULL), CRAWL_OK);
    struct count ca = {0}, cb = {0};
    acquire_upto(a, &ca, 2);
    ASSERT_EQ(ca.n, 2);
    for (int i = 0; i < 2; i++)
        ASSERT_EQ(crawl_redis_fetching(a, ca.urls[i]), CRAWL_OK);
    crawl_redis_free(a); /* killed holding both, nothing committed */
    struct crawl_redis_link z = {.url = "http://z.test/1", .origin_len = 13};
    ASSERT_EQ(crawl_redis_enqueue_many(b, &z, 1, 0, NULL), CRAWL_OK);
    pause_s(0.35);
    size_t reaped = 0;
    ASSERT_EQ(crawl_redis_reap(b, &reaped), CRAWL_OK);
    ASSERT_EQ(reaped, 2);
    size_t n = 0;
    double next = 0;
    int64_t leases = 0;
    if (shards == 1) { /* one at a time: the one left waiting keeps the crawl going */
        ASSERT_EQ(crawl_redis_acquire(b, 1, count_take, &cb, &n, &next, &leases), CRAWL_OK);
        ASSERT_EQ(n, 1);
        ASSERT_EQ(leases, 2);
    }
    acquire_upto(b, &cb, 3);
    ASSERT_EQ(cb.n, 2);
    for (int i = 0; i < cb.n && i < 2; i++)
        CU_ASSERT(strcmp(cb.urls[i], "http://z.test/1") != 0);
    ASSERT_EQ(crawl_redis_budget_left(b), 0);
    for (int i = 0; i < cb.n && i < 2; i++)
        ASSERT_EQ(crawl_redis_fetching(b, cb.urls[i]), CRAWL_OK);
    complete_some(b, &cb, 0, 2, 1);
    /* both archived with the 2 of the budget: finished, z never leased */
    struct count c2 = {0};
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(crawl_redis_acquire(b, 4, count_take, &c2, &n, &next, &leases), CRAWL_OK);
    ASSERT_EQ(c2.n, 0);
    ASSERT_EQ(leases, 0);
    ASSERT_EQ(crawl_redis_budget_left(b), 0);
    crawl_redis_free(b);
    /* an acquire's answer lost with the connection: the leases it gave go back holding
     * their shares, and the acquire sent again leases with those: --max-pages 1, 1 leased
     * and counted once */
    flush();
    struct crawl_redis *c = worker_n("c", 30, shards);
    CU_ASSERT_FATAL(c != NULL);
    crawl_redis_set_max_pages(c, 1);
    struct crawl_redis_link xz[2] = {{.url = "http://x.test/1", .origin_len = 13},
                                     {.url = "http://z.test/1", .origin_len = 13}};
    ASSERT_EQ(crawl_redis_enqueue_many(c, xz, 2, 0, NULL), CRAWL_OK);
    struct count cc = {0};
    acquire_losing(c, "acquire", &cc, 2);
    ASSERT_EQ(cc.n, 1);
    ASSERT_EQ(crawl_redis_held(c), 1);
    const char *used[4] = {"EVAL",
                           "local n = 0 for _, k in ipairs(redis.call('KEYS', ARGV[1])) do "
                           "n = n + tonumber(redis.call('GET', k)) end return n",
                           "0", "simcrawl{f*}:budget"};
    ASSERT_EQ(test_redis_cmd(&srv, 4, used), 1);
    crawl_redis_free(c);
}

static void test_redis_frontier_reap_keeps_share(void)
{
    CU_ASSERT_FATAL(srv_up);
    reap_keeps_share(1);
    reap_keeps_share(4);
}

extern void test_redis_frontier_register(void);
void test_redis_frontier_register(void)
{
    CU_pSuite s = CU_add_suite("redis_frontier", suite_init, suite_clean);
    CU_add_test(s, "test_redis_frontier_enqueue_lease_complete",
                test_redis_frontier_enqueue_lease_complete);
    CU_add_test(s, "test_redis_frontier_scripts_by_sha", test_redis_frontier_scripts_by_sha);
    CU_add_test(s, "test_redis_frontier_older_layout_refused",
                test_redis_frontier_older_layout_refused);
    CU_add_test(s, "test_redis_frontier_leases_come_back", test_redis_frontier_leases_come_back);
    CU_add_test(s, "test_redis_frontier_urls_and_names", test_redis_frontier_urls_and_names);
    CU_add_test(s, "test_redis_frontier_reconnect", test_redis_frontier_reconnect);
    CU_add_test(s, "test_redis_frontier_proxy_lost_node", test_redis_frontier_proxy_lost_node);
    CU_add_test(s, "test_redis_frontier_shard_count_fixed", test_redis_frontier_shard_count_fixed);
    CU_add_test(s, "test_redis_frontier_sharded_acquire", test_redis_frontier_sharded_acquire);
    CU_add_test(s, "test_redis_frontier_sharded_finish", test_redis_frontier_sharded_finish);
    CU_add_test(s, "test_redis_frontier_sharded_commit", test_redis_frontier_sharded_commit);
    CU_add_test(s, "test_redis_frontier_sharded_commit_killed",
                test_redis_frontier_sharded_commit_killed);
    CU_add_test(s, "test_redis_frontier_sharded_commit_lost_reply",
                test_redis_frontier_sharded_commit_lost_reply);
    CU_add_test(s, "test_redis_frontier_sharded_budget", test_redis_frontier_sharded_budget);
    CU_add_test(s, "test_redis_frontier_reap_keeps_share", test_redis_frontier_reap_keeps_share);
}
