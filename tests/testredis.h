#ifndef TESTS_TESTREDIS_H
#define TESTS_TESTREDIS_H
/*
 * A throwaway redis-server for the tests (tests/testredis.c): started on 127.0.0.1 on a
 * free port (the kernel's choice for a socket bound to port 0), with a temporary
 * directory, no persistence ("--save ''", no AOF; durable: appendonly yes, appendfsync
 * always, so that a server killed and started again in place keeps every acknowledged
 * write), stopped (SIGTERM, then SIGKILL) and its directory removed by test_redis_stop().
 * Never any other address.
 */
#include <pthread.h>
#include <stdatomic.h>
#include <sys/types.h>

struct test_redis {
    pid_t pid;
    int port;
    char dir[256];
    char url[128]; /* redis://127.0.0.1:PORT */
    int durable;   /* set before test_redis_start(): AOF, appendfsync always */
};

/* Starts one (port 0: a free port; else that one, to restart a stopped server in place)
 * and waits until it answers PING (5 s at most). 0, or -1 (redis-server missing or not
 * answering: the message on stderr). */
int test_redis_start(struct test_redis *r, int port);
/* Kills it with SIGKILL (a crash; its directory and AOF stay), then starts it again in
 * place after delay_ms without waiting for it (the child sleeps, then runs redis-server:
 * forked from the calling thread, which must outlive it); test_redis_wait() waits. 0 or -1. */
int test_redis_crash_restart(struct test_redis *r, long delay_ms);
/* Waits until it answers PING (5 s at most): 0, or -1. */
int test_redis_wait(struct test_redis *r);
/* Kills it with SIGKILL, directory kept (test_redis_start(r, r->port) starts it again). */
void test_redis_kill(struct test_redis *r);
/* Stops it and removes its directory (keep_dir: leave the directory). NULL-safe, idempotent. */
void test_redis_stop(struct test_redis *r, int keep_dir);
/* Runs one command (argv strings) on it; returns the reply's integer, 1 for a status or
 * string reply, 0 for nil, -1 for an error reply or no connection. */
long long test_redis_cmd(const struct test_redis *r, int argc, const char **argv);

/*
 * A relay in front of a server, standing for a proxy such as nutcracker (twemproxy) that
 * answers for a node it lost: it listens on 127.0.0.1 (a free port; url names it), opens
 * a connection to 127.0.0.1:upstream for each client and copies bytes both ways, on a
 * thread of its own. With poison > 0, the poison-th chunk a client sends next is not
 * passed on: the relay writes `answer` (a whole RESP reply, e.g. "-ERR unknown\r\n",
 * nutcracker's word for a node that closed the connection mid-command) to the client
 * instead and counts it in fired.
 */
struct test_relay {
    int upstream;
    int port; /* set once the thread runs */
    char url[128];
    const char *answer;
    atomic_int poison;
    atomic_int fired;
    int open, lfd, stop[2];
    pthread_t thread;
};
/* 0, or -1 (message on stderr). */
int test_relay_start(struct test_relay *x, int upstream);
/* Stops the thread and closes every connection. NULL-safe, idempotent. */
void test_relay_stop(struct test_relay *x);

#endif
