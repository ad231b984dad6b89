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

#endif
