/*
 * A throwaway redis-server for the tests: tests/testredis.h. The port is found by binding
 * a socket to 127.0.0.1:0 and closing it (a race with other processes is retried: a
 * server that fails to start is started again on another port).
 */
#define _DEFAULT_SOURCE /* mkdtemp */
#include "tests/testredis.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <hiredis.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

static int free_port(void)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    socklen_t len = sizeof a;
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s < 0)
        return -1;
    if (bind(s, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(s, (struct sockaddr *)&a, &len) != 0) {
        close(s);
        return -1;
    }
    close(s);
    return ntohs(a.sin_port);
}

static void sleep_ms(long ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static int answers(int port)
{
    struct timeval tv = {0, 200000};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", port, tv);
    int ok = 0;
    if (c && !c->err) {
        redisReply *r = redisCommand(c, "PING");
        ok = r && r->type == REDIS_REPLY_STATUS;
        if (r)
            freeReplyObject(r);
    }
    if (c)
        redisFree(c);
    return ok;
}

/* Forks redis-server on 127.0.0.1:port (after delay_ms in the child). The pid, or -1. */
static pid_t spawn(const struct test_redis *r, int port, long delay_ms)
{
    char ports[16], log[300];
    snprintf(ports, sizeof ports, "%d", port);
    snprintf(log, sizeof log, "%s/redis.log", r->dir);
    pid_t pid = fork();
    if (pid < 0)
        return -1;
    if (pid == 0) {
        /* the server dies with the test (a crashed runner leaves no server behind) and
         * holds none of its pipes */
        prctl(PR_SET_PDEATHSIG, SIGTERM);
        int fd = open("/dev/null", O_RDWR);
        if (fd >= 0) {
            dup2(fd, 0);
            dup2(fd, 1);
            dup2(fd, 2);
        }
        if (delay_ms > 0)
            sleep_ms(delay_ms);
        execlp("redis-server", "redis-server", "--port", ports, "--bind", "127.0.0.1", "--save", "",
               "--appendonly", r->durable ? "yes" : "no", "--appendfsync",
               r->durable ? "always" : "everysec", "--dir", r->dir, "--logfile", log, "--daemonize",
               "no", (char *)NULL);
        _exit(127);
    }
    return pid;
}

static int start_once(struct test_redis *r, int port)
{
    pid_t pid = spawn(r, port, 0);
    if (pid < 0)
        return -1;
    for (int i = 0; i < 100; i++) {
        int st;
        if (waitpid(pid, &st, WNOHANG) == pid)
            return -1; /* exited: the port was taken, or no redis-server */
        if (answers(port)) {
            r->pid = pid;
            r->port = port;
            snprintf(r->url, sizeof r->url, "redis://127.0.0.1:%d", port);
            return 0;
        }
        sleep_ms(50);
    }
    kill(pid, SIGKILL);
    waitpid(pid, NULL, 0);
    return -1;
}

int test_redis_start(struct test_redis *r, int port)
{
    if (!port || !r->dir[0]) {
        int durable = r->durable;
        memset(r, 0, sizeof *r);
        r->durable = durable;
        snprintf(r->dir, sizeof r->dir, "/tmp/simcrawl-redis-XXXXXX");
        if (!mkdtemp(r->dir)) {
            fprintf(stderr, "test_redis_start: mkdtemp: %s\n", strerror(errno));
            return -1;
        }
    }
    for (int attempt = 0; attempt < 5; attempt++) {
        int p = port ? port : free_port();
        if (p > 0 && start_once(r, p) == 0)
            return 0;
        if (port)
            sleep_ms(100); /* the old one's socket may linger a moment */
    }
    fprintf(stderr, "test_redis_start: cannot start redis-server on 127.0.0.1 (see %s)\n", r->dir);
    return -1;
}

void test_redis_kill(struct test_redis *r)
{
    if (r->pid > 0) {
        kill(r->pid, SIGKILL);
        waitpid(r->pid, NULL, 0);
        r->pid = 0;
    }
}

int test_redis_crash_restart(struct test_redis *r, long delay_ms)
{
    test_redis_kill(r);
    pid_t pid = spawn(r, r->port, delay_ms);
    if (pid < 0)
        return -1;
    r->pid = pid;
    return 0;
}

int test_redis_wait(struct test_redis *r)
{
    for (int i = 0; i < 100; i++) {
        if (answers(r->port))
            return 0;
        sleep_ms(50);
    }
    return -1;
}

void test_redis_stop(struct test_redis *r, int keep_dir)
{
    if (!r)
        return;
    if (r->pid > 0) {
        kill(r->pid, SIGTERM);
        int done = 0;
        for (int i = 0; i < 100 && !done; i++) {
            if (waitpid(r->pid, NULL, WNOHANG) == r->pid)
                done = 1;
            else
                sleep_ms(20);
        }
        if (!done) {
            kill(r->pid, SIGKILL);
            waitpid(r->pid, NULL, 0);
        }
        r->pid = 0;
    }
    if (!keep_dir && r->dir[0]) {
        DIR *d = opendir(r->dir);
        struct dirent *e;
        char path[600];
        while (d && (e = readdir(d))) {
            if (e->d_name[0] == '.')
                continue;
            snprintf(path, sizeof path, "%s/%s", r->dir, e->d_name);
            unlink(path);
        }
        if (d)
            closedir(d);
        rmdir(r->dir);
        r->dir[0] = '\0';
    }
}

long long test_redis_cmd(const struct test_redis *r, int argc, const char **argv)
{
    struct timeval tv = {2, 0};
    redisContext *c = redisConnectWithTimeout("127.0.0.1", r->port, tv);
    long long v = -1;
    if (c && !c->err) {
        redisReply *x = redisCommandArgv(c, argc, argv, NULL);
        if (x) {
            if (x->type == REDIS_REPLY_INTEGER)
                v = x->integer;
            else if (x->type == REDIS_REPLY_STATUS || x->type == REDIS_REPLY_STRING ||
                     x->type == REDIS_REPLY_ARRAY)
                v = 1;
            else if (x->type == REDIS_REPLY_NIL)
                v = 0;
            freeReplyObject(x);
        }
    }
    if (c)
        redisFree(c);
    return v;
}

/* the relay's connections: client and upstream sockets, pairs[i][0] and pairs[i][1] */
enum { RELAY_PAIRS = 16 };

static int connect_upstream(int port)
{
    int s = socket(AF_INET, SOCK_STREAM, 0);
    struct sockaddr_in a = {0};
    a.sin_family = AF_INET;
    a.sin_port = htons((unsigned short)port);
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    if (s >= 0 && connect(s, (struct sockaddr *)&a, sizeof a) != 0) {
        close(s);
        s = -1;
    }
    return s;
}

static void relay_accept(struct test_relay *x, int pairs[][2])
{
    int c = accept(x->lfd, NULL, NULL);
    if (c < 0)
        return;
    for (int i = 0; i < RELAY_PAIRS; i++)
        if (pairs[i][0] < 0) {
            pairs[i][1] = connect_upstream(x->upstream);
            if (pairs[i][1] >= 0) {
                pairs[i][0] = c;
                return;
            }
            break;
        }
    close(c);
}

/* Copies what one side has to the other (the client's chunk answered instead when it is
 * the poisoned one); 0, or -1 when either side is closed. */
static int relay_copy(struct test_relay *x, int from, int to, int from_client)
{
    char buf[65536];
    ssize_t n = read(from, buf, sizeof buf);
    if (n <= 0)
        return -1;
    if (from_client && atomic_load(&x->poison) > 0 && atomic_fetch_sub(&x->poison, 1) == 1) {
        atomic_fetch_add(&x->fired, 1);
        size_t len = strlen(x->answer);
        return write(from, x->answer, len) == (ssize_t)len ? 0 : -1;
    }
    for (ssize_t off = 0; off < n;) {
        ssize_t w = write(to, buf + off, (size_t)(n - off));
        if (w <= 0)
            return -1;
        off += w;
    }
    return 0;
}

static void *relay_run(void *arg)
{
    struct test_relay *x = arg;
    int pairs[RELAY_PAIRS][2];
    for (int i = 0; i < RELAY_PAIRS; i++)
        pairs[i][0] = pairs[i][1] = -1;
    for (;;) {
        struct pollfd p[2 + 2 * RELAY_PAIRS];
        int owner[2 + 2 * RELAY_PAIRS], np = 0;
        p[np++] = (struct pollfd){.fd = x->stop[0], .events = POLLIN};
        p[np++] = (struct pollfd){.fd = x->lfd, .events = POLLIN};
        for (int i = 0; i < RELAY_PAIRS; i++)
            for (int side = 0; side < 2 && pairs[i][0] >= 0; side++) {
                owner[np] = 2 * i + side;
                p[np++] = (struct pollfd){.fd = pairs[i][side], .events = POLLIN};
            }
        if (poll(p, (nfds_t)np, -1) < 0 && errno != EINTR)
            break;
        if (p[0].revents)
            break;
        if (p[1].revents & POLLIN)
            relay_accept(x, pairs);
        for (int k = 2; k < np; k++) {
            int i = owner[k] / 2, side = owner[k] % 2;
            if (!p[k].revents || pairs[i][0] < 0)
                continue;
            if (relay_copy(x, pairs[i][side], pairs[i][!side], side == 0) != 0) {
                close(pairs[i][0]);
                close(pairs[i][1]);
                pairs[i][0] = pairs[i][1] = -1;
            }
        }
    }
    for (int i = 0; i < RELAY_PAIRS; i++)
        if (pairs[i][0] >= 0) {
            close(pairs[i][0]);
            close(pairs[i][1]);
        }
    return NULL;
}

int test_relay_start(struct test_relay *x, int upstream)
{
    struct sockaddr_in a = {0};
    socklen_t len = sizeof a;
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    x->upstream = upstream;
    x->port = 0;
    x->stop[0] = x->stop[1] = -1;
    x->open = 1;
    x->lfd = socket(AF_INET, SOCK_STREAM, 0);
    if (x->lfd < 0 || bind(x->lfd, (struct sockaddr *)&a, sizeof a) != 0 ||
        getsockname(x->lfd, (struct sockaddr *)&a, &len) != 0 || listen(x->lfd, 16) != 0 ||
        pipe(x->stop) != 0) {
        fprintf(stderr, "test relay: %s\n", strerror(errno));
        test_relay_stop(x);
        return -1;
    }
    snprintf(x->url, sizeof x->url, "redis://127.0.0.1:%d", ntohs(a.sin_port));
    if (pthread_create(&x->thread, NULL, relay_run, x) != 0) {
        fprintf(stderr, "test relay: cannot start its thread\n");
        test_relay_stop(x);
        return -1;
    }
    x->port = ntohs(a.sin_port);
    return 0;
}

void test_relay_stop(struct test_relay *x)
{
    if (!x || !x->open)
        return;
    if (x->port && write(x->stop[1], "x", 1) == 1)
        pthread_join(x->thread, NULL);
    int fds[3] = {x->lfd, x->stop[0], x->stop[1]};
    for (int i = 0; i < 3; i++)
        if (fds[i] >= 0)
            close(fds[i]);
    x->open = 0;
    x->port = 0;
}
