/*
 * The near-duplicate index on Redis (filter/redisidx.h): the block-permuted tables of
 * dedup/index.c (Manku, Jain and Das Sarma, WWW 2007, section 3) as Redis hashes, shared
 * by every client of one Redis, with hiredis (Debian's libhiredis 0.14: one primary reached
 * directly; it has no Redis Cluster support, and the check needs multi-key transactions).
 * The keys are written out in docs/REDIS-INDEX.md.
 *
 * HOW IT WORKS
 *
 * Buckets. A design of dedup/index.c (dedup_design_choose for the expected size) gives T
 * tables, each keyed on some bits of the fingerprint (dedup_design_keymasks): two
 * fingerprints within k agree on every key bit of at least one table. Table t's bucket of
 * fp is the value of the bucket_bits most significant key bits of table t (a prefix of
 * the permuted key; bucket_bits <= the shortest key, so the property holds for the
 * prefix too), and is the Redis hash PREFIX:b:t:HEX of fingerprint -> document number.
 * bucket_bits is chosen for ~16 fingerprints a bucket at the expected size, so buckets
 * stay small listpacks (8-byte integers both sides) and a check reads ~16 T candidates.
 * The candidates of fp are the union of its T buckets; distances are computed here.
 *
 * Documents are numbered by INCRBY PREFIX:seq (in the order their check read the index:
 * ties go to the lower number, the page added first). PREFIX:d:HEX(doc >> 6) maps doc ->
 * "FPHEX16 ID"; PREFIX:i:HEX(shard of id) maps id -> "DOC FPHEX16 [PAYLOADHEX]";
 * PREFIX:p:HEX(shard of key) maps a payload key -> doc; PREFIX:count counts documents.
 *
 * The check (optimistic, like Redis' own WATCH examples): round trip 1 pipelines, for each
 * page, WATCH of its T buckets, its id shard and its payload and metadata shards, then HGET
 * of the id, the key and its metadata and HGETALL of the T buckets, and one INCRBY of the sequence
 * for the batch. The decision is taken here, page by page (a page near an earlier NEW page of the
 * same batch is NEAR to it). Round trip 2 is one MULTI/EXEC holding the adds of the NEW pages and
 * the HGET of the documents named as originals; EXEC fails (a nil reply) when any watched
 * key was written since the WATCH, i.e. when another client added to a candidate bucket,
 * so two clients can never both keep two near-duplicates: the check then runs again. A
 * batch where nothing needs EXEC (only known ids, or a dry run) sends UNWATCH in front of
 * the next command instead of waiting for it. Why not a Lua script: Lua 5.1 numbers are
 * doubles (a 64-bit fingerprint does not fit; comparing would mean string arithmetic on
 * the server), and the server, which all workers share, would compute every distance;
 * here it only reads and writes small hashes (docs/REDIS-INDEX.md has the figures).
 *
 * Faults. Every reply is checked for its type and shape; a key of the wrong type
 * (WRONGTYPE) or of the wrong shape is REDISIDX_ECORRUPT naming the key; a lost
 * connection, a timeout or an error reply is REDISIDX_EIO naming the URL. After any error
 * inside a pipeline the connection is dropped (its replies are out of step) and the next
 * call connects again (and checks the meta record again).
 *
 * Scripts (the template counts' learn, a payload's claim, the old keys' sweep) go as
 * EVALSHA of their SHA-1, computed here, and as EVAL of their text when Redis answers
 * NOSCRIPT; inside a check's MULTI, where NOSCRIPT would only show in EXEC's reply after
 * the adds ran, as EVAL until this connection has run the script once (call_script,
 * learn_run, check_relearn). A payload claimed without a fingerprint is decided in one
 * script by its id and payload key as the check decides (CLAIM_LUA). An index written by
 * the older template counting has its per-host ts: sets swept by the opens that follow,
 * a bounded part each (old_keys_sweep).
 *
 * A lost connection (refused, closed, timed out, LOADING) is waited out: transact()
 * connects again with a backoff and runs the operation again, for retry= seconds (URL,
 * default 30). A check whose EXEC was written but whose reply was lost records which pages
 * it was adding (pend); its next run finds them by id and answers NEW, added, as the lost
 * reply would have: nothing is added twice (docs/REDIS-INDEX.md, "A Redis that goes away").
 */
#include "filter/redisidx.h"
#include "dedup/dedup.h"

#include <errno.h>
#include <hiredis.h>
#include <pthread.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/time.h>
#include <openssl/evp.h>
#include <time.h>
#include <xxhash.h>

#define META_FORMAT 1u
#define META_TAG "simcrawl-redisidx/"
#define DEFAULT_PREFIX "simcrawl"
#define DEFAULT_EXPECT ((uint64_t)1 << 20)
#define DEFAULT_TIMEOUT 5.0
#define DEFAULT_RETRIES 100u
#define DEFAULT_RETRY_TIME 30.0 /* s a lost connection is tried again (URL: retry=) */
#define RETRY_FIRST_WAIT 0.05   /* s before the first attempt to connect again; doubled */
#define RETRY_MAX_WAIT 1.0      /* s at most between two attempts */
#define PREFIX_MAX 64
#define BUCKET_TARGET_BITS 4          /* ~16 fingerprints a bucket at the expected size */
#define BUCKET_MAX_ENTRIES (1u << 20) /* cap on one bucket's entries read back */
#define DOC_SHARD_SHIFT 6             /* 64 documents a PREFIX:d: hash */
#define KEY_MAX 160                   /* one key name */
#define ERR_MAX 512
#define BATCH_MAX 4096     /* pages of one check_many pipeline */
#define SWEEP_COUNT "1000" /* hash table slots one SCAN step of the old keys' sweep visits */
#define SWEEP_LEASE "300"  /* s the sweeper holds PREFIX:tsclean before another may sweep */
#define SWEEP_BUDGET 1.0   /* s one open sweeps at most (then the next open goes on) */

/* The Lua scripts (below: LEARN_LUA, CLAIM_LUA, SWEEP_LUA), sent by their SHA-1. */
enum script { SC_LEARN, SC_CLAIM, SC_SWEEP, SC_N };

struct redisidx {
    pthread_mutex_t mu;
    char *url;
    char host[256];
    int port;
    char *unix_path;
    int db;
    char prefix[PREFIX_MAX + 1];
    char *user, *pass;
    struct timeval tv;
    uint64_t expect;
    unsigned max_retries;
    double retry_time;   /* s a lost connection is tried again (0: not at all) */
    double sweep_budget; /* s the open's sweep of old keys takes at most */

    redisContext *c;
    unsigned discard;   /* replies still to read and drop (a lazy UNWATCH) */
    unsigned loaded;    /* bit s: this connection ran script s (EVALSHA may go inside MULTI) */
    char sha[SC_N][41]; /* the scripts' SHA-1, lower-case hex, as EVALSHA names them */
    char *meta;         /* the meta record as read at open */
    size_t meta_len;

    unsigned k, bucket_bits, shard_bits;
    int k_zero;  /* k 0 asked for (not "the index's") */
    int created; /* this client made the meta record (a new index) */
    struct dedup_design design;
    uint8_t bpos[DEDUP_MAX_TABLES][64]; /* per table: the bucket bits, most significant first */

    uint64_t checks, round_trips, conflicts, reconnects;
    uint64_t rng; /* backoff() */
    int lost;     /* the last failure was the connection's (refused, closed, timed out,
                   * LOADING): worth connecting again, within retry_time */
    /* an EXEC written whose reply was not read (the connection went): its adds may be in
     * Redis. pend[i]: page i of the batch was being added (pend_n pages); pend_del: a
     * delete. The check run again finds them by id (check_once, delete_once). */
    size_t pend_n;
    int pend_del;
    unsigned char pend[BATCH_MAX];
    int (*sent_hook)(void *userdata, const char *what);
    void *sent_userdata;
    char err[ERR_MAX];
};

static void sent(struct redisidx *ix, const char *what);
static enum redisidx_code call_script(struct redisidx *ix, enum script s, int argc,
                                      const char **argv, size_t *lens, const char *what,
                                      redisReply **out);
static int scripts_sha(struct redisidx *ix);
static double mono_now(void);

const char *redisidx_strerror(enum redisidx_code c)
{
    switch (c) {
    case REDISIDX_OK:
        return "ok";
    case REDISIDX_ENOMEM:
        return "out of memory";
    case REDISIDX_EINVAL:
        return "invalid argument";
    case REDISIDX_EIO:
        return "redis connection or command failed";
    case REDISIDX_EVERSION:
        return "the redis index is of another format or fingerprint version";
    case REDISIDX_EMISMATCH:
        return "k differs from the redis index's k";
    case REDISIDX_EMETHOD:
        return "the method is not supported on redis";
    case REDISIDX_ECORRUPT:
        return "a key of the redis index is damaged";
    case REDISIDX_ECONFLICT:
        return "too many conflicting transactions";
    case REDISIDX_ETOOLARGE:
        return "an id or payload key is over its cap";
    }
    return "unknown code";
}

__attribute__((format(printf, 3, 4))) static enum redisidx_code
fail(struct redisidx *ix, enum redisidx_code code, const char *fmt, ...)
{
    int n = snprintf(ix->err, sizeof ix->err, "%s: ", ix->url ? ix->url : "redis");
    if (n < 0 || (size_t)n >= sizeof ix->err)
        n = 0;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(ix->err + n, sizeof ix->err - (size_t)n, fmt, ap);
    va_end(ap);
    return code;
}

static void rfree(void *reply)
{
    if (reply)
        freeReplyObject(reply);
}

static void drop(struct redisidx *ix)
{
    if (ix->c)
        redisFree(ix->c);
    ix->c = NULL;
    ix->discard = 0;
    ix->loaded = 0;
}

/* ---- the URL ---- */

static int hexval(int ch)
{
    if (ch >= '0' && ch <= '9')
        return ch - '0';
    if (ch >= 'a' && ch <= 'f')
        return ch - 'a' + 10;
    if (ch >= 'A' && ch <= 'F')
        return ch - 'A' + 10;
    return -1;
}

/* A %-decoded copy of s[0..len) (caller frees), or NULL (bad escape, NUL, no memory). */
static char *pct_decode(const char *s, size_t len)
{
    char *o = malloc(len + 1), *w = o;
    if (!o)
        return NULL;
    for (size_t i = 0; i < len; i++) {
        int ch = (unsigned char)s[i];
        if (ch == '%') {
            int hi = i + 1 < len ? hexval(s[i + 1]) : -1;
            int lo = i + 2 < len ? hexval(s[i + 2]) : -1;
            if (hi < 0 || lo < 0 || (hi == 0 && lo == 0)) {
                free(o);
                return NULL;
            }
            ch = hi * 16 + lo;
            i += 2;
        }
        *w++ = (char)ch;
    }
    *w = '\0';
    return o;
}

static int parse_uint(const char *s, size_t len, uint64_t max, uint64_t *out)
{
    uint64_t v = 0;
    if (!len)
        return -1;
    for (size_t i = 0; i < len; i++) {
        if (s[i] < '0' || s[i] > '9')
            return -1;
        unsigned d = (unsigned)(s[i] - '0');
        if (v > (max - d) / 10)
            return -1;
        v = v * 10 + d;
    }
    *out = v;
    return 0;
}

static enum redisidx_code parse_query(struct redisidx *ix, const char *q)
{
    while (q && *q) {
        const char *amp = strchr(q, '&');
        size_t len = amp ? (size_t)(amp - q) : strlen(q);
        const char *eq = memchr(q, '=', len);
        if (!eq)
            return fail(ix, REDISIDX_EINVAL, "bad parameter '%.*s' (expected NAME=VALUE)", (int)len,
                        q);
        size_t nlen = (size_t)(eq - q), vlen = len - nlen - 1;
        const char *v = eq + 1;
        uint64_t u;
        if (nlen == 6 && !memcmp(q, "prefix", 6)) {
            if (!vlen || vlen > PREFIX_MAX)
                return fail(ix, REDISIDX_EINVAL, "prefix must be 1 to %d characters", PREFIX_MAX);
            for (size_t i = 0; i < vlen; i++) {
                unsigned char ch = (unsigned char)v[i];
                if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') ||
                      (ch >= '0' && ch <= '9') || ch == '_' || ch == '-' || ch == '.' || ch == ':'))
                    return fail(ix, REDISIDX_EINVAL,
                                "prefix '%.*s': only letters, digits and _ - . : allowed",
                                (int)vlen, v);
            }
            memcpy(ix->prefix, v, vlen);
            ix->prefix[vlen] = '\0';
        } else if (nlen == 7 && !memcmp(q, "timeout", 7)) {
            char buf[32];
            char *end;
            if (vlen == 0 || vlen >= sizeof buf)
                return fail(ix, REDISIDX_EINVAL, "bad timeout '%.*s'", (int)vlen, v);
            memcpy(buf, v, vlen);
            buf[vlen] = '\0';
            double t = strtod(buf, &end);
            if (*end || !(t > 0 && t <= 3600))
                return fail(ix, REDISIDX_EINVAL, "bad timeout '%s' (seconds, 0 to 3600)", buf);
            ix->tv.tv_sec = (time_t)t;
            ix->tv.tv_usec = (suseconds_t)((t - (double)(time_t)t) * 1e6);
        } else if (nlen == 5 && !memcmp(q, "retry", 5)) {
            char buf[32];
            char *end;
            if (vlen == 0 || vlen >= sizeof buf)
                return fail(ix, REDISIDX_EINVAL, "bad retry '%.*s'", (int)vlen, v);
            memcpy(buf, v, vlen);
            buf[vlen] = '\0';
            double t = strtod(buf, &end);
            if (*end || !(t >= 0 && t <= 3600))
                return fail(ix, REDISIDX_EINVAL, "bad retry '%s' (seconds, 0 to 3600)", buf);
            ix->retry_time = t;
        } else if (nlen == 6 && !memcmp(q, "expect", 6)) {
            if (parse_uint(v, vlen, (uint64_t)1 << 40, &u) != 0 || u == 0)
                return fail(ix, REDISIDX_EINVAL, "bad expect '%.*s' (1 to 2^40)", (int)vlen, v);
            ix->expect = u;
        } else if (nlen == 2 && !memcmp(q, "db", 2)) {
            if (parse_uint(v, vlen, 1u << 20, &u) != 0)
                return fail(ix, REDISIDX_EINVAL, "bad db '%.*s'", (int)vlen, v);
            ix->db = (int)u;
        } else {
            return fail(ix, REDISIDX_EINVAL,
                        "unknown parameter '%.*s' (prefix, timeout, retry, expect, db)", (int)nlen,
                        q);
        }
        q = amp ? amp + 1 : NULL;
    }
    return REDISIDX_OK;
}

/* redis://[[USER]:PASS@]HOST[:PORT][/DB][?QUERY] or unix:///PATH[?QUERY] */
static enum redisidx_code parse_url(struct redisidx *ix, const char *url)
{
    const char *q = strchr(url, '?');
    size_t blen = q ? (size_t)(q - url) : strlen(url);
    if (!strncmp(url, "unix://", 7)) {
        const char *p = url + 7;
        size_t plen = blen - 7;
        if (plen < 2 || p[0] != '/')
            return fail(ix, REDISIDX_EINVAL, "expected unix:///PATH/TO/SOCKET");
        ix->unix_path = pct_decode(p, plen);
        if (!ix->unix_path)
            return fail(ix, REDISIDX_EINVAL, "bad %%-escape in the socket path");
        return parse_query(ix, q ? q + 1 : NULL);
    }
    if (strncmp(url, "redis://", 8) != 0)
        return fail(ix, REDISIDX_EINVAL, "expected redis://HOST[:PORT][/DB] or unix:///PATH");
    const char *p = url + 8, *end = url + blen;
    const char *slash = memchr(p, '/', (size_t)(end - p));
    const char *auth_end = NULL;
    for (const char *s = p; s < (slash ? slash : end); s++)
        if (*s == '@')
            auth_end = s;
    if (auth_end) {
        const char *colon = memchr(p, ':', (size_t)(auth_end - p));
        if (!colon)
            return fail(ix, REDISIDX_EINVAL, "expected [USER]:PASSWORD@ before the host");
        if (colon > p && !(ix->user = pct_decode(p, (size_t)(colon - p))))
            return fail(ix, REDISIDX_EINVAL, "bad user name");
        if (!(ix->pass = pct_decode(colon + 1, (size_t)(auth_end - colon - 1))))
            return fail(ix, REDISIDX_EINVAL, "bad password");
        p = auth_end + 1;
    }
    const char *hend = slash ? slash : end;
    const char *colon = NULL;
    if (p < hend && *p == '[') { /* [IPv6] */
        const char *rb = memchr(p, ']', (size_t)(hend - p));
        if (!rb)
            return fail(ix, REDISIDX_EINVAL, "unclosed '[' in the host");
        if ((size_t)(rb - p - 1) >= sizeof ix->host)
            return fail(ix, REDISIDX_EINVAL, "host name too long");
        memcpy(ix->host, p + 1, (size_t)(rb - p - 1));
        ix->host[rb - p - 1] = '\0';
        if (rb + 1 < hend && rb[1] != ':')
            return fail(ix, REDISIDX_EINVAL, "bad host");
        colon = rb + 1 < hend ? rb + 1 : NULL;
    } else {
        colon = memchr(p, ':', (size_t)(hend - p));
        const char *he = colon ? colon : hend;
        if ((size_t)(he - p) >= sizeof ix->host)
            return fail(ix, REDISIDX_EINVAL, "host name too long");
        memcpy(ix->host, p, (size_t)(he - p));
        ix->host[he - p] = '\0';
    }
    if (!ix->host[0])
        snprintf(ix->host, sizeof ix->host, "127.0.0.1");
    ix->port = 6379;
    if (colon) {
        uint64_t port;
        if (parse_uint(colon + 1, (size_t)(hend - colon - 1), 65535, &port) != 0 || !port)
            return fail(ix, REDISIDX_EINVAL, "bad port '%.*s'", (int)(hend - colon - 1), colon + 1);
        ix->port = (int)port;
    }
    if (slash && slash + 1 < end) {
        uint64_t db;
        if (parse_uint(slash + 1, (size_t)(end - slash - 1), 1u << 20, &db) != 0)
            return fail(ix, REDISIDX_EINVAL, "bad database number '%.*s'", (int)(end - slash - 1),
                        slash + 1);
        ix->db = (int)db;
    }
    return parse_query(ix, q ? q + 1 : NULL);
}

/* ---- replies ---- */

/* Writes one command into the output buffer (sent with the next read). */
static enum redisidx_code put(struct redisidx *ix, int argc, const char **argv, const size_t *lens)
{
    if (redisAppendCommandArgv(ix->c, argc, argv, lens) != REDIS_OK) {
        enum redisidx_code rc =
            fail(ix, ix->c->err == REDIS_ERR_OOM ? REDISIDX_ENOMEM : REDISIDX_EIO,
                 "cannot send a command: %s", ix->c->errstr);
        ix->lost = rc == REDISIDX_EIO;
        drop(ix);
        return rc;
    }
    return REDISIDX_OK;
}

static enum redisidx_code put_str(struct redisidx *ix, int argc, ...)
{
    const char *argv[8];
    size_t lens[8];
    va_list ap;
    va_start(ap, argc);
    for (int i = 0; i < argc && i < 8; i++) {
        argv[i] = va_arg(ap, const char *);
        lens[i] = strlen(argv[i]);
    }
    va_end(ap);
    return put(ix, argc, argv, lens);
}

/* Reads the next reply (after those to discard). An error reply is returned as a reply. */
static enum redisidx_code get(struct redisidx *ix, redisReply **out)
{
    void *r = NULL;
    *out = NULL;
    if (!ix->c) { /* dropped by the test hook (sent()) */
        ix->lost = 1;
        return fail(ix, REDISIDX_EIO, "connection lost: closed");
    }
    while (ix->discard) {
        if (redisGetReply(ix->c, &r) != REDIS_OK)
            goto lost;
        rfree(r);
        r = NULL;
        ix->discard--;
    }
    if (redisGetReply(ix->c, &r) != REDIS_OK)
        goto lost;
    *out = r;
    return REDISIDX_OK;
lost:;
    enum redisidx_code rc;
    if (ix->c->err == REDIS_ERR_OOM)
        rc = fail(ix, REDISIDX_ENOMEM, "out of memory reading a reply");
    else if (ix->c->err == REDIS_ERR_PROTOCOL)
        rc = fail(ix, REDISIDX_ECORRUPT, "not the redis protocol: %s", ix->c->errstr);
    else {
        rc = fail(ix, REDISIDX_EIO, "connection lost: %s",
                  ix->c->errstr[0] ? ix->c->errstr : "closed");
        ix->lost = 1;
    }
    drop(ix);
    return rc;
}

/* An error reply for key (NULL: none) as a code: WRONGTYPE is a damaged key. */
static enum redisidx_code reply_error(struct redisidx *ix, const redisReply *r, const char *what,
                                      const char *key)
{
    if (!strncmp(r->str, "WRONGTYPE", 9))
        return fail(ix, REDISIDX_ECORRUPT, "key %s holds a value of the wrong type (%s)",
                    key ? key : "?", what);
    if (!strncmp(r->str, "LOADING", 7) || !strncmp(r->str, "BUSY ", 5))
        ix->lost = 1; /* restarted, reading its data back, or running a long script (the
                       * template caps' sweep over all hosts): wait for it as for a restart */
    return fail(ix, REDISIDX_EIO, "%s%s%s: %s", what, key ? " " : "", key ? key : "", r->str);
}

/* Expects a reply of type (a status, "QUEUED" and "OK" being statuses); 0 or an error. */
static enum redisidx_code expect_type(struct redisidx *ix, const redisReply *r, int type,
                                      const char *what, const char *key)
{
    if (r->type == REDIS_REPLY_ERROR)
        return reply_error(ix, r, what, key);
    if (r->type != type)
        return fail(ix, REDISIDX_ECORRUPT, "%s%s%s: unexpected reply of type %d", what,
                    key ? " " : "", key ? key : "", r->type);
    return REDISIDX_OK;
}

/* ---- keys ---- */

static void key_bucket(const struct redisidx *ix, unsigned t, uint64_t fp, char *out)
{
    uint64_t v = 0;
    for (unsigned i = 0; i < ix->bucket_bits; i++)
        v = v << 1 | ((fp >> ix->bpos[t][i]) & 1u);
    snprintf(out, KEY_MAX, "%s:b:%u:%0*llx", ix->prefix, t, (int)((ix->bucket_bits + 3) / 4),
             (unsigned long long)v);
}

static uint64_t shard_of(const struct redisidx *ix, const void *s, size_t len)
{
    return ix->shard_bits ? XXH3_64bits(s, len) >> (64 - ix->shard_bits) : 0;
}

static void key_id(const struct redisidx *ix, const char *id, size_t len, char *out)
{
    snprintf(out, KEY_MAX, "%s:i:%llx", ix->prefix, (unsigned long long)shard_of(ix, id, len));
}

static void key_pay(const struct redisidx *ix, const void *key, size_t len, char *out)
{
    snprintf(out, KEY_MAX, "%s:p:%llx", ix->prefix, (unsigned long long)shard_of(ix, key, len));
}

/* The metadata stored with a payload key (PREFIX:m:, the payload key's shard). */
static void key_meta(const struct redisidx *ix, const void *key, size_t len, char *out)
{
    snprintf(out, KEY_MAX, "%s:m:%llx", ix->prefix, (unsigned long long)shard_of(ix, key, len));
}

/* The ids that claimed payload keys without a fingerprint (PREFIX:c:, the key's shard). */
static void key_claim(const struct redisidx *ix, const void *key, size_t len, char *out)
{
    snprintf(out, KEY_MAX, "%s:c:%llx", ix->prefix, (unsigned long long)shard_of(ix, key, len));
}

/* A host's template counts (PREFIX:t:), by the XXH3-64 of the host key. */
static void key_tpl(const struct redisidx *ix, const char *what, const char *host, size_t len,
                    char *out)
{
    snprintf(out, KEY_MAX, "%s:%s:%016llx", ix->prefix, what,
             (unsigned long long)XXH3_64bits(host, len));
}

static void key_doc(const struct redisidx *ix, uint64_t doc, char *out)
{
    snprintf(out, KEY_MAX, "%s:d:%llx", ix->prefix, (unsigned long long)(doc >> DOC_SHARD_SHIFT));
}

static void key_named(const struct redisidx *ix, const char *name, char *out)
{
    snprintf(out, KEY_MAX, "%s:%s", ix->prefix, name);
}

/* ---- the meta record ---- */

static int meta_format(const struct redisidx *ix, char *out, size_t len)
{
    int n = snprintf(out, len,
                     META_TAG "%u method=simhash fingerprint=%u k=%u levels=%u blocks=%u,%u "
                              "bucket_bits=%u shard_bits=%u",
                     META_FORMAT, (unsigned)DEDUP_FINGERPRINT_VERSION, ix->k, ix->design.levels,
                     ix->design.blocks[0], ix->design.blocks[1], ix->bucket_bits, ix->shard_bits);
    return n > 0 && (size_t)n < len ? n : -1;
}

/* Fills the design, bucket positions and shard bits from a design and sizes. */
static enum redisidx_code layout_set(struct redisidx *ix, const struct dedup_design *d,
                                     unsigned bucket_bits, unsigned shard_bits)
{
    uint64_t masks[DEDUP_MAX_TABLES];
    enum dedup_code dc = dedup_design_keymasks(d, masks);
    if (dc == DEDUP_ENOMEM)
        return fail(ix, REDISIDX_ENOMEM, "out of memory");
    if (dc != DEDUP_OK)
        return fail(ix, REDISIDX_ECORRUPT, "key %s:meta: not a valid table design", ix->prefix);
    ix->design = *d;
    ix->design.key_bits_min = 64;
    ix->design.key_bits_max = 0;
    for (unsigned t = 0; t < d->tables; t++) {
        unsigned kb = (unsigned)__builtin_popcountll(masks[t]);
        if (kb < ix->design.key_bits_min)
            ix->design.key_bits_min = kb;
        if (kb > ix->design.key_bits_max)
            ix->design.key_bits_max = kb;
    }
    for (unsigned t = 0; t < d->tables; t++) {
        unsigned have = 0;
        for (int b = 63; b >= 0 && have < bucket_bits; b--)
            if (masks[t] >> b & 1u)
                ix->bpos[t][have++] = (uint8_t)b;
        if (have < bucket_bits)
            return fail(ix, REDISIDX_ECORRUPT,
                        "key %s:meta: bucket_bits %u over table %u's %u key bits", ix->prefix,
                        bucket_bits, t, have);
    }
    ix->bucket_bits = bucket_bits;
    ix->shard_bits = shard_bits;
    return REDISIDX_OK;
}

static unsigned log2_floor(uint64_t v)
{
    unsigned b = 0;
    while (v >>= 1)
        b++;
    return b;
}

/* The layout of a new index of k for ix->expect fingerprints. */
static enum redisidx_code layout_new(struct redisidx *ix, unsigned k)
{
    struct dedup_design d;
    enum dedup_code dc = dedup_design_choose(k, ix->expect, 0, &d);
    if (dc != DEDUP_OK)
        return fail(ix, dc == DEDUP_ENOMEM ? REDISIDX_ENOMEM : REDISIDX_EINVAL,
                    "no table design for k %u", k);
    unsigned lg = log2_floor(ix->expect);
    unsigned bb = lg > BUCKET_TARGET_BITS + 1 ? lg - BUCKET_TARGET_BITS : 1;
    if (bb > d.key_bits_min)
        bb = d.key_bits_min;
    if (bb < 1)
        bb = 1;
    unsigned sb = lg > 6 ? lg - 6 : 0; /* ~64 ids a shard */
    if (sb > 24)
        sb = 24;
    ix->k = k;
    return layout_set(ix, &d, bb, sb);
}

/* Parses a meta record s[0..len) into ix (k, design, bits). */
static enum redisidx_code meta_parse(struct redisidx *ix, const char *s, size_t len)
{
    char buf[256], method[16];
    unsigned fmt, fpv, k, levels, b0, b1, bb, sb;
    int used = -1;
    if (len >= sizeof buf || memchr(s, '\0', len))
        return fail(ix, REDISIDX_ECORRUPT, "key %s:meta is not a meta record (%zu bytes)",
                    ix->prefix, len);
    memcpy(buf, s, len);
    buf[len] = '\0';
    if (strncmp(buf, META_TAG, strlen(META_TAG)) != 0)
        return fail(ix, REDISIDX_ECORRUPT, "key %s:meta is not a simcrawl index ('%.40s')",
                    ix->prefix, buf);
    if (sscanf(buf + strlen(META_TAG), "%u", &fmt) == 1 && fmt != META_FORMAT)
        return fail(ix, REDISIDX_EVERSION, "key %s:meta: index format %u, this is format %u",
                    ix->prefix, fmt, META_FORMAT);
    if (sscanf(buf,
               META_TAG "%u method=%15s fingerprint=%u k=%u levels=%u blocks=%u,%u "
                        "bucket_bits=%u shard_bits=%u%n",
               &fmt, method, &fpv, &k, &levels, &b0, &b1, &bb, &sb, &used) != 9 ||
        used != (int)len)
        return fail(ix, REDISIDX_ECORRUPT, "key %s:meta is damaged: '%s'", ix->prefix, buf);
    if (strcmp(method, "simhash") != 0)
        return fail(ix, REDISIDX_EMETHOD,
                    "key %s:meta: a %s index; only simhash is "
                    "supported on redis",
                    ix->prefix, method);
    if (fpv != DEDUP_FINGERPRINT_VERSION)
        return fail(ix, REDISIDX_EVERSION,
                    "key %s:meta: fingerprint version %u, this build computes version %u "
                    "(rebuild the index under another prefix)",
                    ix->prefix, fpv, (unsigned)DEDUP_FINGERPRINT_VERSION);
    if (k > DEDUP_K_MAX || levels < 1 || levels > 2 || b0 > 64 || b1 > 64 || bb < 1 || bb > 64 ||
        sb > 24)
        return fail(ix, REDISIDX_ECORRUPT, "key %s:meta is damaged: '%s'", ix->prefix, buf);
    struct dedup_design d = {.k = k, .levels = levels, .blocks = {b0, b1}};
    /* the number of tables of this shape: the design for that many tables must be it */
    uint64_t masks[DEDUP_MAX_TABLES];
    unsigned tables = 0;
    for (unsigned t = 1; t <= DEDUP_MAX_TABLES && !tables; t++) {
        d.tables = t;
        if (dedup_design_keymasks(&d, masks) == DEDUP_OK)
            tables = t;
    }
    if (!tables)
        return fail(ix, REDISIDX_ECORRUPT, "key %s:meta: blocks %u,%u is no design for k %u",
                    ix->prefix, b0, b1, k);
    d.tables = tables;
    ix->k = k;
    return layout_set(ix, &d, bb, sb);
}

/* ---- connecting ---- */

static enum redisidx_code simple(struct redisidx *ix, redisReply **r, int argc, const char **argv,
                                 const size_t *lens, const char *what)
{
    enum redisidx_code rc = put(ix, argc, argv, lens);
    if (rc == REDISIDX_OK)
        rc = get(ix, r);
    if (rc == REDISIDX_OK)
        ix->round_trips++;
    (void)what;
    return rc;
}

/* Reads PREFIX:meta; creates it when missing (k_want, or the default). */
static enum redisidx_code meta_ensure(struct redisidx *ix, unsigned k_want, int create)
{
    char key[KEY_MAX], mine[256];
    key_named(ix, "meta", key);
    for (int attempt = 0; attempt < 3; attempt++) {
        redisReply *r = NULL;
        const char *argv[5] = {"GET", key};
        size_t lens[5] = {3, strlen(key)};
        enum redisidx_code rc = simple(ix, &r, 2, argv, lens, "GET");
        if (rc != REDISIDX_OK)
            return rc;
        if (r->type == REDIS_REPLY_STRING) {
            if (ix->meta) { /* a reconnect: the same index? */
                int same = r->len == ix->meta_len && !memcmp(r->str, ix->meta, r->len);
                rfree(r);
                if (!same)
                    return fail(ix, REDISIDX_ECORRUPT, "key %s changed while the index was open",
                                key);
                return REDISIDX_OK;
            }
            rc = meta_parse(ix, r->str, r->len);
            if (rc == REDISIDX_OK && !(ix->meta = malloc(r->len + 1)))
                rc = fail(ix, REDISIDX_ENOMEM, "out of memory");
            if (rc == REDISIDX_OK) {
                memcpy(ix->meta, r->str, r->len);
                ix->meta_len = r->len;
            }
            rfree(r);
            if (rc == REDISIDX_OK && (k_want || ix->k_zero) && k_want != ix->k)
                rc = fail(ix, REDISIDX_EMISMATCH, "the index has k %u, not %u", ix->k, k_want);
            return rc;
        }
        if (r->type != REDIS_REPLY_NIL) {
            rc = expect_type(ix, r, REDIS_REPLY_STRING, "GET", key);
            rfree(r);
            return rc;
        }
        rfree(r);
        if (!create && !ix->meta)
            return fail(ix, REDISIDX_ECORRUPT, "no index under prefix '%s' (no key %s)", ix->prefix,
                        key);
        if (!create)
            return fail(ix, REDISIDX_ECORRUPT, "key %s is gone (the index was deleted)", key);
        rc = layout_new(ix, k_want || ix->k_zero ? k_want : DEDUP_K_DEFAULT);
        int n = rc == REDISIDX_OK ? meta_format(ix, mine, sizeof mine) : 0;
        if (rc != REDISIDX_OK)
            return rc;
        const char *sargv[4] = {"SET", key, mine, "NX"};
        size_t slens[4] = {3, strlen(key), (size_t)n, 2};
        rc = simple(ix, &r, 4, sargv, slens, "SET");
        if (rc != REDISIDX_OK)
            return rc;
        if (r->type == REDIS_REPLY_ERROR) {
            rc = reply_error(ix, r, "SET", key);
            rfree(r);
            return rc;
        }
        ix->created = r->type == REDIS_REPLY_STATUS;
        rfree(r); /* OK, or nil: another client made it first; read it */
    }
    return fail(ix, REDISIDX_ECORRUPT, "key %s: cannot create or read it", key);
}

/* One SCAN step from cursor (updated: "0" when done) over the keys matching pat, and
 * SWEEP_LUA on those found (*swept: how many went). */
static enum redisidx_code sweep_step(struct redisidx *ix, char *cursor, size_t cursor_len,
                                     const char *pat, size_t *swept)
{
    const char *argv[6] = {"SCAN", cursor, "MATCH", pat, "COUNT", SWEEP_COUNT};
    size_t lens[6] = {4, strlen(cursor), 5, strlen(pat), 5, strlen(SWEEP_COUNT)};
    redisReply *r = NULL, *x = NULL;
    enum redisidx_code rc = simple(ix, &r, 6, argv, lens, "SCAN");
    if (rc == REDISIDX_OK)
        rc = expect_type(ix, r, REDIS_REPLY_ARRAY, "SCAN", NULL);
    if (rc == REDISIDX_OK &&
        (r->elements != 2 || r->element[0]->type != REDIS_REPLY_STRING ||
         r->element[0]->len >= cursor_len || r->element[1]->type != REDIS_REPLY_ARRAY))
        rc = fail(ix, REDISIDX_ECORRUPT, "SCAN: an unexpected reply");
    const redisReply *keys = rc == REDISIDX_OK ? r->element[1] : NULL;
    const char **kv = NULL;
    size_t *kl = NULL;
    if (keys && keys->elements) {
        size_t n = keys->elements, argc = n + 3;
        char nk[24];
        snprintf(nk, sizeof nk, "%zu", n);
        kv = malloc(argc * sizeof *kv);
        kl = malloc(argc * sizeof *kl);
        if (!kv || !kl)
            rc = fail(ix, REDISIDX_ENOMEM, "out of memory");
        for (size_t i = 0; i < n && rc == REDISIDX_OK; i++) {
            if (keys->element[i]->type != REDIS_REPLY_STRING)
                rc = fail(ix, REDISIDX_ECORRUPT, "SCAN: an unexpected reply");
            else {
                kv[3 + i] = keys->element[i]->str;
                kl[3 + i] = keys->element[i]->len;
            }
        }
        if (rc == REDISIDX_OK) {
            kv[2] = nk;
            kl[2] = strlen(nk);
            rc = call_script(ix, SC_SWEEP, (int)argc, kv, kl, "sweep", &x);
        }
        if (rc == REDISIDX_OK)
            rc = expect_type(ix, x, REDIS_REPLY_INTEGER, "EVALSHA", NULL);
        if (rc == REDISIDX_OK)
            *swept += (size_t)x->integer;
    }
    if (rc == REDISIDX_OK)
        snprintf(cursor, cursor_len, "%.*s", (int)r->element[0]->len, r->element[0]->str);
    free(kv);
    free(kl);
    rfree(r);
    rfree(x);
    return rc;
}

/* The SCAN cursor kept in key (a number) into out[0..len) ("": none), or an error. */
static enum redisidx_code sweep_get(struct redisidx *ix, const char *key, char *out, size_t len)
{
    const char *argv[2] = {"GET", key};
    size_t lens[2] = {3, strlen(key)};
    redisReply *r = NULL;
    enum redisidx_code rc = simple(ix, &r, 2, argv, lens, "GET");
    out[0] = '\0';
    if (rc == REDISIDX_OK && r->type != REDIS_REPLY_NIL &&
        (rc = expect_type(ix, r, REDIS_REPLY_STRING, "GET", key)) == REDISIDX_OK) {
        if (r->len >= len || !r->len || strspn(r->str, "0123456789") != r->len)
            rc = fail(ix, REDISIDX_ECORRUPT, "key %s: not a SCAN cursor", key);
        else
            snprintf(out, len, "%.*s", (int)r->len, r->str);
    }
    rfree(r);
    return rc;
}

/* Runs argv[0..argc) (a SET or DEL of the sweep's keys), its reply not an error. */
static enum redisidx_code sweep_cmd(struct redisidx *ix, int argc, const char **argv)
{
    size_t lens[6];
    for (int i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    redisReply *r = NULL;
    enum redisidx_code rc = simple(ix, &r, argc, argv, lens, argv[0]);
    if (rc == REDISIDX_OK && r->type == REDIS_REPLY_ERROR)
        rc = reply_error(ix, r, argv[0], argv[1]);
    rfree(r);
    return rc;
}

/*
 * The per-host ts: sets of the older template counting (before the caps, every host's
 * documents counted were PREFIX:ts:HEX16, a set of up to 1M members each; now PREFIX:tseen
 * holds them for all hosts), which nothing reads or deletes any more: unlinked by the
 * clients that open the index until it is swept. SET NX of PREFIX:tsclean ("sweeping",
 * expiring after SWEEP_LEASE s: a sweeper that dies is replaced) makes one client at a
 * time the sweeper, while the others go on; it SCANs from the cursor kept in
 * PREFIX:tscursor in steps of SWEEP_COUNT (MATCH the old names: Redis is never held for
 * long), runs SWEEP_LUA on the keys of each step (sets only), and stops after
 * SWEEP_BUDGET s (so an open never waits long: the next open goes on from the cursor
 * kept) or at the end (PREFIX:tsclean 1, for good). A new index is made with it set.
 */
static enum redisidx_code old_keys_sweep(struct redisidx *ix)
{
    char key[KEY_MAX], ckey[KEY_MAX], pat[KEY_MAX + 96], cursor[32];
    key_named(ix, "tsclean", key);
    key_named(ix, "tscursor", ckey);
    const char *argv[6] = {"SET", key, ix->created ? "1" : "sweeping", "NX", "EX", SWEEP_LEASE};
    size_t lens[6] = {3, strlen(key), strlen(argv[2]), 2, 2, strlen(SWEEP_LEASE)};
    redisReply *r = NULL;
    enum redisidx_code rc = simple(ix, &r, ix->created ? 4 : 6, argv, lens, "SET");
    int mine = rc == REDISIDX_OK && r->type == REDIS_REPLY_STATUS;
    if (rc == REDISIDX_OK && r->type != REDIS_REPLY_NIL)
        rc = expect_type(ix, r, REDIS_REPLY_STATUS, "SET", key);
    rfree(r);
    if (rc != REDISIDX_OK || !mine || ix->created)
        return rc; /* swept (or being swept), or nothing to sweep */
    if ((rc = sweep_get(ix, ckey, cursor, sizeof cursor)) != REDISIDX_OK)
        return rc;
    int n = snprintf(pat, sizeof pat, "%s:ts:", ix->prefix);
    for (int i = 0; i < 16; i++)
        n += snprintf(pat + n, sizeof pat - (size_t)n, "[0-9a-f]");
    size_t swept = 0;
    double until = mono_now() + ix->sweep_budget;
    if (!cursor[0])
        snprintf(cursor, sizeof cursor, "0");
    do
        rc = sweep_step(ix, cursor, sizeof cursor, pat, &swept);
    while (rc == REDISIDX_OK && strcmp(cursor, "0") != 0 && mono_now() < until);
    if (rc != REDISIDX_OK)
        return rc;
    if (strcmp(cursor, "0") != 0) { /* the next open goes on from here */
        const char *keep[3] = {"SET", ckey, cursor}, *free_[2] = {"DEL", key};
        if ((rc = sweep_cmd(ix, 3, keep)) == REDISIDX_OK)
            rc = sweep_cmd(ix, 2, free_);
        return rc;
    }
    const char *done[3] = {"SET", key, "1"}, *gone[2] = {"DEL", ckey};
    if ((rc = sweep_cmd(ix, 3, done)) == REDISIDX_OK)
        rc = sweep_cmd(ix, 2, gone);
    return rc;
}

static enum redisidx_code connect_(struct redisidx *ix, int create)
{
    if (ix->c)
        return REDISIDX_OK;
    ix->discard = 0;
    if (ix->unix_path)
        ix->c = redisConnectUnixWithTimeout(ix->unix_path, ix->tv);
    else
        ix->c = redisConnectWithTimeout(ix->host, ix->port, ix->tv);
    if (!ix->c)
        return fail(ix, REDISIDX_ENOMEM, "out of memory connecting");
    if (ix->c->err) {
        enum redisidx_code rc = fail(ix, REDISIDX_EIO, "cannot connect: %s", ix->c->errstr);
        ix->lost = 1;
        drop(ix);
        return rc;
    }
    if (redisSetTimeout(ix->c, ix->tv) != REDIS_OK) {
        enum redisidx_code rc = fail(ix, REDISIDX_EIO, "cannot set the timeout: %s", ix->c->errstr);
        drop(ix);
        return rc;
    }
    redisReply *r = NULL;
    enum redisidx_code rc = REDISIDX_OK;
    if (ix->pass) {
        const char *argv[3] = {"AUTH", ix->user ? ix->user : ix->pass, ix->pass};
        size_t lens[3] = {4, strlen(argv[1]), strlen(ix->pass)};
        rc = simple(ix, &r, ix->user ? 3 : 2, argv, lens, "AUTH");
        if (rc == REDISIDX_OK)
            rc = expect_type(ix, r, REDIS_REPLY_STATUS, "AUTH", NULL);
        rfree(r);
        r = NULL;
    }
    if (rc == REDISIDX_OK && ix->db) {
        char db[16];
        snprintf(db, sizeof db, "%d", ix->db);
        const char *argv[2] = {"SELECT", db};
        size_t lens[2] = {6, strlen(db)};
        rc = simple(ix, &r, 2, argv, lens, "SELECT");
        if (rc == REDISIDX_OK)
            rc = expect_type(ix, r, REDIS_REPLY_STATUS, "SELECT", NULL);
        rfree(r);
    }
    int first = !ix->meta;
    if (rc == REDISIDX_OK)
        rc = meta_ensure(ix, ix->k, create);
    if (rc == REDISIDX_OK && first && create)
        rc = old_keys_sweep(ix);
    if (rc != REDISIDX_OK)
        drop(ix);
    return rc;
}

enum redisidx_code redisidx_open(const char *url, const struct redisidx_opts *o,
                                 struct redisidx **out, char *err, size_t errlen)
{
    enum redisidx_code rc;
    if (err && errlen)
        err[0] = '\0';
    if (!out)
        return REDISIDX_EINVAL;
    *out = NULL;
    if (!url) {
        if (err && errlen)
            snprintf(err, errlen, "no redis url");
        return REDISIDX_EINVAL;
    }
    struct redisidx *ix = calloc(1, sizeof *ix);
    if (!ix)
        return REDISIDX_ENOMEM;
    if (pthread_mutex_init(&ix->mu, NULL) != 0) {
        free(ix);
        return REDISIDX_ENOMEM;
    }
    snprintf(ix->prefix, sizeof ix->prefix, "%s", DEFAULT_PREFIX);
    ix->expect = DEFAULT_EXPECT;
    ix->rng = (uint64_t)(uintptr_t)ix ^ (uint64_t)time(NULL);
    ix->tv.tv_sec = (time_t)DEFAULT_TIMEOUT;
    ix->max_retries = o && o->max_retries ? o->max_retries : DEFAULT_RETRIES;
    ix->retry_time = DEFAULT_RETRY_TIME;
    ix->sweep_budget = o && o->sweep_budget > 0 ? o->sweep_budget : SWEEP_BUDGET;
    /* the URL in messages, without a password */
    const char *at = strchr(url, '@');
    const char *q = strchr(url, '?');
    if (at && (!q || at < q) && !strncmp(url, "redis://", 8)) {
        size_t n = strlen(url) - (size_t)(at + 1 - url) + 8 + 1;
        ix->url = malloc(n);
        if (ix->url)
            snprintf(ix->url, n, "redis://%s", at + 1);
    } else
        ix->url = strdup(url);
    if (!ix->url) {
        rc = REDISIDX_ENOMEM;
        goto out;
    }
    if (o && o->k > DEDUP_K_MAX) {
        rc = fail(ix, REDISIDX_EINVAL, "k %u is over %d", o->k, DEDUP_K_MAX);
        goto out;
    }
    if (o && o->method && strcmp(o->method, "simhash") != 0) {
        rc = fail(ix, strcmp(o->method, "minhash") == 0 ? REDISIDX_EMETHOD : REDISIDX_EINVAL,
                  "the %s method is not supported on redis (only simhash)", o->method);
        goto out;
    }
    rc = parse_url(ix, url);
    if (rc != REDISIDX_OK)
        goto out;
    if (scripts_sha(ix) != 0) {
        rc = fail(ix, REDISIDX_ENOMEM, "cannot compute the scripts' SHA-1 (libcrypto)");
        goto out;
    }
    ix->k = o ? o->k : 0;
    ix->k_zero = o && o->k_zero && !o->k;
    rc = connect_(ix, !(o && o->no_create));
out:
    if (rc != REDISIDX_OK) {
        if (err && errlen)
            snprintf(err, errlen, "%s", ix->err[0] ? ix->err : redisidx_strerror(rc));
        redisidx_close(ix);
        return rc;
    }
    ix->err[0] = '\0';
    *out = ix;
    return REDISIDX_OK;
}

void redisidx_close(struct redisidx *ix)
{
    if (!ix)
        return;
    drop(ix);
    pthread_mutex_destroy(&ix->mu);
    free(ix->url);
    free(ix->unix_path);
    free(ix->user);
    free(ix->pass);
    free(ix->meta);
    free(ix);
}

const char *redisidx_errmsg(const struct redisidx *ix)
{
    return ix ? ix->err : "";
}

unsigned redisidx_k(const struct redisidx *ix)
{
    return ix->k;
}

const char *redisidx_url(const struct redisidx *ix)
{
    return ix->url;
}

void redisidx_result_release(struct redisidx_result *r)
{
    if (!r)
        return;
    free(r->dup_id);
    free(r->meta);
    memset(r, 0, sizeof *r);
}

/* Copies data[0..len) into *buf (grown to *cap), NUL-terminated; *out_len = len. */
static enum redisidx_code result_copy(struct redisidx *ix, char **buf, size_t *cap, size_t *out_len,
                                      const void *data, size_t len)
{
    if (*cap < len + 1) {
        char *n = realloc(*buf, len + 1);
        if (!n)
            return fail(ix, REDISIDX_ENOMEM, "out of memory");
        *buf = n;
        *cap = len + 1;
    }
    memcpy(*buf, data, len);
    (*buf)[len] = '\0';
    *out_len = len;
    return REDISIDX_OK;
}

static enum redisidx_code result_dup(struct redisidx *ix, struct redisidx_result *r, const char *id,
                                     size_t len)
{
    return result_copy(ix, &r->dup_id, &r->dup_cap, &r->dup_id_len, id, len);
}

static void result_reset(struct redisidx_result *r)
{
    r->verdict = REDISIDX_UNKNOWN;
    r->added = 0;
    r->fp = 0;
    r->distance = 0;
    if (r->dup_id)
        r->dup_id[0] = '\0';
    r->dup_id_len = 0;
    r->meta_len = 0;
}

static enum redisidx_code result_meta(struct redisidx *ix, struct redisidx_result *r,
                                      const void *meta, size_t len)
{
    char *m = r->meta;
    enum redisidx_code rc = result_copy(ix, &m, &r->meta_cap, &r->meta_len, meta, len);
    r->meta = m;
    return rc;
}

/* ---- parsing stored values ---- */

static int parse_i64(const char *s, size_t len, int64_t *out)
{
    char buf[24];
    char *end;
    if (!len || len >= sizeof buf)
        return -1;
    memcpy(buf, s, len);
    buf[len] = '\0';
    errno = 0;
    long long v = strtoll(buf, &end, 10);
    if (errno || *end || end == buf)
        return -1;
    *out = v;
    return 0;
}

static int parse_hex64(const char *s, size_t len, uint64_t *out)
{
    uint64_t v = 0;
    if (len != 16)
        return -1;
    for (size_t i = 0; i < 16; i++) {
        int h = hexval((unsigned char)s[i]);
        if (h < 0)
            return -1;
        v = v << 4 | (unsigned)h;
    }
    *out = v;
    return 0;
}

/* An id record "DOC FPHEX16[ PAYLOADHEX]": doc and fp. */
static int parse_idrec(const char *s, size_t len, uint64_t *doc, uint64_t *fp)
{
    const char *sp = memchr(s, ' ', len);
    int64_t d;
    if (!sp || parse_i64(s, (size_t)(sp - s), &d) != 0 || d < 1)
        return -1;
    size_t rest = len - (size_t)(sp + 1 - s);
    if (rest < 16 || parse_hex64(sp + 1, 16, fp) != 0 || (rest > 16 && sp[17] != ' '))
        return -1;
    *doc = (uint64_t)d;
    return 0;
}

/* A document record "FPHEX16 ID": fp and the id's bytes. */
static int parse_docrec(const char *s, size_t len, uint64_t *fp, const char **id, size_t *id_len)
{
    if (len < 18 || s[16] != ' ' || parse_hex64(s, 16, fp) != 0)
        return -1;
    *id = s + 17;
    *id_len = len - 17;
    return 0;
}

static char *hex_of(const void *p, size_t n, char *out)
{
    static const char digits[] = "0123456789abcdef";
    const unsigned char *b = p;
    for (size_t i = 0; i < n; i++) {
        out[2 * i] = digits[b[i] >> 4];
        out[2 * i + 1] = digits[b[i] & 15];
    }
    out[2 * n] = '\0';
    return out;
}

/* ---- the check ---- */

/* Per page of a batch: where its replies are, and what was decided. */
struct pstate {
    redisReply *id_r, *pay_r, *meta_r;
    redisReply **bucket_r; /* T */
    uint64_t doc;          /* the number it gets when NEW */
    int new_in_batch;      /* NEW and added by this batch */
    int want_doc;          /* its answer needs the document want (EXEC reply index) */
    uint64_t want;
    size_t exec_at;
    size_t learn_at; /* its template blocks' learn in EXEC's reply (SIZE_MAX: none) */
};

static int page_args_ok(struct redisidx *ix, const struct redisidx_page *p, enum redisidx_code *rc)
{
    if (!p->id || !p->id_len || memchr(p->id, '\0', p->id_len)) {
        *rc = fail(ix, REDISIDX_EINVAL, "an empty id or an id with a NUL byte");
        return 0;
    }
    if (p->id_len > REDISIDX_MAX_ID_BYTES) {
        *rc = fail(ix, REDISIDX_ETOOLARGE, "an id of %zu bytes (at most %u)", p->id_len,
                   REDISIDX_MAX_ID_BYTES);
        return 0;
    }
    if (p->key && (!p->key_len || p->key_len > REDISIDX_MAX_KEY_BYTES)) {
        *rc = fail(ix, REDISIDX_ETOOLARGE, "a payload key of %zu bytes (1 to %u)", p->key_len,
                   REDISIDX_MAX_KEY_BYTES);
        return 0;
    }
    if (p->meta_len > REDISIDX_MAX_META_BYTES) {
        *rc = fail(ix, REDISIDX_ETOOLARGE, "payload metadata of %zu bytes (at most %u)",
                   p->meta_len, REDISIDX_MAX_META_BYTES);
        return 0;
    }
    if (p->n_blocks && (!p->blocks || p->host_len > DEDUP_TEMPLATE_MAX_KEY)) {
        *rc = fail(ix, REDISIDX_EINVAL,
                   "template blocks without their host key (or a key "
                   "over %u bytes)",
                   DEDUP_TEMPLATE_MAX_KEY);
        return 0;
    }
    return 1;
}

/* Walks one bucket reply r (HGETALL of key: fingerprint -> document pairs), checked
 * whole (an array of pairs, at most BUCKET_MAX_ENTRIES, each two decimal integers, the
 * document 1 or more): fn(userdata, fingerprint, document, distance) for every entry
 * within k of fp; fn's nonzero answer stops the walk as out of memory. 0 or an error. */
static enum redisidx_code
bucket_walk(struct redisidx *ix, const redisReply *r, const char *key, uint64_t fp, unsigned k,
            int (*fn)(void *userdata, uint64_t c, uint64_t doc, unsigned d), void *userdata)
{
    enum redisidx_code rc = expect_type(ix, r, REDIS_REPLY_ARRAY, "HGETALL", key);
    if (rc != REDISIDX_OK)
        return rc;
    if (r->elements % 2 || r->elements / 2 > BUCKET_MAX_ENTRIES)
        return fail(ix, REDISIDX_ECORRUPT, "key %s: a bucket of %zu elements", key, r->elements);
    for (size_t i = 0; i < r->elements; i += 2) {
        const redisReply *f = r->element[i], *v = r->element[i + 1];
        int64_t sf, sd;
        if (f->type != REDIS_REPLY_STRING || v->type != REDIS_REPLY_STRING ||
            parse_i64(f->str, f->len, &sf) != 0 || parse_i64(v->str, v->len, &sd) != 0 || sd < 1)
            return fail(ix, REDISIDX_ECORRUPT,
                        "key %s: entry %zu is not a fingerprint -> document pair", key, i / 2);
        unsigned d = (unsigned)__builtin_popcountll((uint64_t)sf ^ fp);
        if (d <= k && fn(userdata, (uint64_t)sf, (uint64_t)sd, d) != 0)
            return fail(ix, REDISIDX_ENOMEM, "out of memory");
    }
    return REDISIDX_OK;
}

/* The nearest candidate of a check (ties: the lowest document). */
struct best {
    unsigned d;
    uint64_t doc, fp;
    int found;
};

/* Candidate (c, doc, d) taken when nearer than b's: 1 when taken. */
static int best_better(struct best *b, uint64_t c, uint64_t doc, unsigned d)
{
    if (b->found && (d > b->d || (d == b->d && doc >= b->doc)))
        return 0;
    *b = (struct best){.d = d, .doc = doc, .fp = c, .found = 1};
    return 1;
}

/* bucket_walk's callback for a check: the nearest into b. */
static int best_take(void *userdata, uint64_t c, uint64_t doc, unsigned d)
{
    best_better(userdata, c, doc, d);
    return 0;
}

/* The metadata stored with p's payload key (reply r of HGET PREFIX:m:), into res: for an
 * EXACT page (idrec NULL) the original's; for a KNOWN_ID page (idrec its id record) only
 * when the id was stored with this same payload key (its own capture). */
static enum redisidx_code stored_meta(struct redisidx *ix, const struct redisidx_page *p,
                                      const redisReply *r, const redisReply *idrec,
                                      struct redisidx_result *res)
{
    if (!p->key || !r || r->type == REDIS_REPLY_NIL)
        return REDISIDX_OK;
    if (r->type != REDIS_REPLY_STRING) {
        char key[KEY_MAX];
        key_meta(ix, p->key, p->key_len, key);
        return expect_type(ix, r, REDIS_REPLY_STRING, "HGET", key);
    }
    if (idrec) {
        char hex[2 * REDISIDX_MAX_KEY_BYTES + 2] = " ";
        hex_of(p->key, p->key_len, hex + 1);
        size_t hl = strlen(hex);
        if (idrec->len <= hl || memcmp(idrec->str + idrec->len - hl, hex, hl) != 0)
            return REDISIDX_OK;
    }
    return result_meta(ix, res, r->str, r->len);
}

/*
 * Counting one document's template blocks for its host: dedup_templates_add_doc()'s rule
 * and its caps, in Redis, step for step (dedup/template.c, HOW IT WORKS), so that the
 * counts and so the marks are the in-process table's after the same documents in the same
 * order, and Redis holds no more than that table would:
 *   KEYS[1] the host's counts (field "docs": documents counted; a block's key in
 *           hexadecimal: documents that hold it), KEYS[2] the documents counted (of every
 *           host: the hashes of (host, document), 16 hex digits), KEYS[3] the hosts by
 *           documents counted (ZSET: member the host key, score its docs), KEYS[4] host key ->
 *           its counts' key name, KEYS[5] the block entries of all hosts;
 *   ARGV: the host key, the (host, document) hash ("": none), the caps (blocks a host,
 *         blocks in all, hosts, documents remembered), the young bound (0: none), then the
 *         block keys (repeats count once; the client sends at most half a host's cap, as a
 *         document counts).
 * 0. With a young bound Y (a near-duplicate's blocks, FILTER_DECIDE_LEARN_NEAR), a host
 *    with Y documents counted or more counts nothing (0), the document not remembered.
 * 1. A document counted before is not counted again (0): counting is idempotent, so a check
 *    sent again after a lost reply changes nothing. The set is emptied when full.
 * 2. A new host past the host cap replaces the host with the fewest documents, ties the
 *    smallest key: the ZSET's first member (Redis orders equal scores by memcmp, then
 *    length: the in-process key_cmp()).
 * 3. A host whose blocks would pass its cap drops every block of count <= c for the
 *    smallest c that leaves at most half the cap (lossy counting, counts of 4095 and more
 *    counted together and c = 4094 at most, else all go: evict_threshold()).
 * 4. When the blocks of all hosts would pass the total cap, other hosts go whole, fewest
 *    documents first (ties: the smallest key), until the document's blocks fit. Here
 *    alone Redis differs from the in-process table, which drops the blocks of count <= c
 *    of every host for one c (all_evict()): that is a pass over up to 2M blocks inside
 *    one script, measured at 27.5 s of a blocked Redis at load 12 (3-5 s when quiet),
 *    stalling every client; dropping a host is one UNLINK. The decisions are the same
 *    until the total first reaches its cap (docs/REDIS-INDEX.md).
 * 5. The blocks are counted, the host's docs and its score raised, the total kept.
 */
static const char LEARN_LUA[] =
    "local host, nb = ARGV[1], #ARGV - 7\n"
    "local hcap, tcap = tonumber(ARGV[3]), tonumber(ARGV[4])\n"
    "local maxh, maxs = tonumber(ARGV[5]), tonumber(ARGV[6])\n"
    "local young = tonumber(ARGV[7])\n"
    "if young > 0 and tonumber(redis.call('HGET', KEYS[1], 'docs') or '0') >= young then\n"
    "  return 0\n"
    "end\n"
    "if ARGV[2] ~= '' then\n"
    "  if redis.call('SCARD', KEYS[2]) >= maxs then redis.call('DEL', KEYS[2]) end\n"
    "  if redis.call('SADD', KEYS[2], ARGV[2]) == 0 then return 0 end\n"
    "end\n"
    "local function entries(key)\n"
    "  local n = redis.call('HLEN', key)\n"
    "  if redis.call('HEXISTS', key, 'docs') == 1 then n = n - 1 end\n"
    "  return n\n"
    "end\n"
    "local function gone(v)\n"
    "  local vk, n = redis.call('HGET', KEYS[4], v), 0\n"
    "  if vk then n = entries(vk) redis.call('UNLINK', vk) end\n"
    "  redis.call('ZREM', KEYS[3], v) redis.call('HDEL', KEYS[4], v)\n"
    "  return n\n"
    "end\n"
    "local function hist_add(key, hist)\n"
    "  local all = redis.call('HGETALL', key)\n"
    "  for i = 1, #all, 2 do\n"
    "    if all[i] ~= 'docs' then\n"
    "      local c = math.min(tonumber(all[i + 1]), 4095)\n"
    "      hist[c] = (hist[c] or 0) + 1\n"
    "    end\n"
    "  end\n"
    "end\n"
    "local function threshold(hist, n, keep)\n"
    "  local dropped = 0\n"
    "  for c = 1, 4094 do\n"
    "    dropped = dropped + (hist[c] or 0)\n"
    "    if n - dropped <= keep then return c end\n"
    "  end\n"
    "  return 4294967295\n"
    "end\n"
    "local function drop(key, c)\n"
    "  local all, d = redis.call('HGETALL', key), 0\n"
    "  for i = 1, #all, 2 do\n"
    "    if all[i] ~= 'docs' and tonumber(all[i + 1]) <= c then\n"
    "      redis.call('HDEL', key, all[i]) d = d + 1\n"
    "    end\n"
    "  end\n"
    "  return d\n"
    "end\n"
    "local total = tonumber(redis.call('GET', KEYS[5]) or '0')\n"
    "if not redis.call('ZSCORE', KEYS[3], host) then\n"
    "  if redis.call('ZCARD', KEYS[3]) >= maxh then\n"
    "    total = total - gone(redis.call('ZRANGE', KEYS[3], 0, 0)[1])\n"
    "  end\n"
    "  total = total + entries(KEYS[1])\n"
    "  redis.call('ZADD', KEYS[3], tonumber(redis.call('HGET', KEYS[1], 'docs') or '0'), host)\n"
    "  redis.call('HSET', KEYS[4], host, KEYS[1])\n"
    "end\n"
    "local n = entries(KEYS[1])\n"
    "if n + nb > hcap then\n"
    "  local hist = {}\n"
    "  hist_add(KEYS[1], hist)\n"
    "  local d = drop(KEYS[1], threshold(hist, n, hcap / 2))\n"
    "  total = total - d\n"
    "end\n"
    "while total + nb > tcap do\n"
    "  local vs = redis.call('ZRANGE', KEYS[3], 0, 1)\n"
    "  local v = vs[1] == host and vs[2] or vs[1]\n"
    "  if not v then break end\n"
    "  total = total - gone(v)\n"
    "end\n"
    "local seen = {}\n"
    "for i = 8, #ARGV do\n"
    "  if not seen[ARGV[i]] then\n"
    "    seen[ARGV[i]] = true\n"
    "    if redis.call('HINCRBY', KEYS[1], ARGV[i], 1) == 1 then total = total + 1 end\n"
    "  end\n"
    "end\n"
    "redis.call('ZADD', KEYS[3], redis.call('HINCRBY', KEYS[1], 'docs', 1), host)\n"
    "redis.call('SET', KEYS[5], total)\n"
    "return 1\n";

/* The member of PREFIX:tseen for a document of host: dedup/template.c's seen hash. */
static uint64_t tpl_seen_hash(const char *host, size_t host_len, uint64_t doc_hash)
{
    uint64_t x = XXH3_64bits_withSeed(&doc_hash, sizeof doc_hash,
                                      XXH3_64bits_withSeed(host, host_len, DEDUP_TEMPLATE_SEED));
    return x ? x : 1;
}

/*
 * Claiming a payload without a fingerprint (redisidx_payload_claim), as the check decides
 * by id and payload key, in one script so that nothing comes between the look and the
 * write:
 *   KEYS[1] the id's shard (i:), KEYS[2] the payload key's shard (p:), KEYS[3] its
 *   metadata shard (m:), KEYS[4] its claims' shard (c:: key -> the id that claimed it);
 *   ARGV: the id, the payload key, the metadata, the prefix (the original's document key
 *   PREFIX:d:HEX is named from its number, as key_doc() does).
 * 1. The id indexed (by a check): {'i', its record, the key's metadata}: KNOWN_ID.
 * 2. The payload indexed with a page (however it was added: with metadata or not):
 *    {'p', its document number, its document record, the metadata}: EXACT of that page.
 * 3. The payload claimed before: {'m', the metadata, 1 when this id claimed it}: EXACT,
 *    or the id's own claim (KNOWN_ID: idempotent by id).
 * 4. Else the metadata and the id stored: {'n'}: NEW.
 */
static const char CLAIM_LUA[] =
    "local rec = redis.call('HGET', KEYS[1], ARGV[1])\n"
    "if rec then return {'i', rec, redis.call('HGET', KEYS[3], ARGV[2])} end\n"
    "local doc = redis.call('HGET', KEYS[2], ARGV[2])\n"
    "if doc then\n"
    "  local dk = ARGV[4] .. ':d:' .. string.format('%x', math.floor((tonumber(doc) or 0) / 64))\n"
    "  return {'p', doc, redis.call('HGET', dk, doc), redis.call('HGET', KEYS[3], ARGV[2])}\n"
    "end\n"
    "local m = redis.call('HGET', KEYS[3], ARGV[2])\n"
    "if m then\n"
    "  return {'m', m, redis.call('HGET', KEYS[4], ARGV[2]) == ARGV[1] and 1 or 0}\n"
    "end\n"
    "redis.call('HSET', KEYS[3], ARGV[2], ARGV[3])\n"
    "redis.call('HSET', KEYS[4], ARGV[2], ARGV[1])\n"
    "return {'n'}\n";

/* Of the keys named (found by SCAN), the sets are unlinked: the per-host ts: sets of the
 * older template counting (old_keys_sweep). Returns how many. */
static const char SWEEP_LUA[] = "local n = 0\n"
                                "for _, k in ipairs(KEYS) do\n"
                                "  if redis.call('TYPE', k).ok == 'set' then\n"
                                "    redis.call('UNLINK', k) n = n + 1\n"
                                "  end\n"
                                "end\n"
                                "return n\n";

static const char *const SCRIPTS[SC_N] = {LEARN_LUA, CLAIM_LUA, SWEEP_LUA};

/* The SHA-1 of every script, as EVALSHA names it (lower-case hex): 0, or -1. */
static int scripts_sha(struct redisidx *ix)
{
    for (int s = 0; s < SC_N; s++) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        if (EVP_Digest(SCRIPTS[s], strlen(SCRIPTS[s]), md, &len, EVP_sha1(), NULL) != 1 ||
            len != 20)
            return -1;
        hex_of(md, 20, ix->sha[s]);
    }
    return 0;
}

static int is_noscript(const redisReply *r)
{
    return r && r->type == REDIS_REPLY_ERROR && !strncmp(r->str, "NOSCRIPT", 8);
}

/* Queues a call of script s: argv[0..1] filled in here (EVALSHA and its SHA-1, or with
 * evalit EVAL and its text), the rest the caller's. */
static enum redisidx_code put_script(struct redisidx *ix, enum script s, int evalit, int argc,
                                     const char **argv, size_t *lens)
{
    argv[0] = evalit ? "EVAL" : "EVALSHA";
    lens[0] = strlen(argv[0]);
    argv[1] = evalit ? SCRIPTS[s] : ix->sha[s];
    lens[1] = strlen(argv[1]);
    return put(ix, argc, argv, lens);
}

/*
 * One call of script s (argv[0..1] filled in here), its reply into *out: EVALSHA of the
 * SHA-1 computed here, and EVAL of the text when the server does not have it (NOSCRIPT:
 * new, restarted, flushed), which leaves it there for the next EVALSHA; as Redis's own
 * clients do, and as crawler/redis_frontier.c does. Never SCRIPT LOAD. what: the test
 * hook's name for it, told once the script is known to have been sent to a server that
 * has it.
 */
static enum redisidx_code call_script(struct redisidx *ix, enum script s, int argc,
                                      const char **argv, size_t *lens, const char *what,
                                      redisReply **out)
{
    enum redisidx_code rc = REDISIDX_OK;
    *out = NULL;
    for (int evalit = 0; evalit < 2 && rc == REDISIDX_OK; evalit++) {
        rfree(*out);
        *out = NULL;
        rc = put_script(ix, s, evalit, argc, argv, lens);
        if (rc == REDISIDX_OK && (evalit || (ix->loaded >> s & 1u)))
            sent(ix, what);
        ix->round_trips++;
        if (rc == REDISIDX_OK)
            rc = get(ix, out);
        if (rc == REDISIDX_OK && !is_noscript(*out))
            break;
    }
    if (rc == REDISIDX_OK && (*out)->type != REDIS_REPLY_ERROR)
        ix->loaded |= 1u << s;
    return rc;
}

/* Queues the call that counts one document's template blocks (LEARN_LUA): EVALSHA, or
 * with evalit EVAL of its text. */
static enum redisidx_code put_learn(struct redisidx *ix, const char *host, size_t host_len,
                                    uint64_t doc_hash, const uint64_t *blocks, size_t n,
                                    uint64_t young, int evalit)
{
    enum { FIXED = 15 };
    if (n > DEDUP_TEMPLATE_HOST_MAX_ENTRIES / 2)
        n = DEDUP_TEMPLATE_HOST_MAX_ENTRIES / 2; /* what a document counts at most */
    size_t argc = FIXED + n;
    const char **argv = malloc(argc * sizeof *argv);
    size_t *lens = malloc(argc * sizeof *lens);
    char(*hex)[17] = malloc((n + 1) * sizeof *hex);
    char tk[KEY_MAX], sk[KEY_MAX], hk[KEY_MAX], kk[KEY_MAX], nk[KEY_MAX];
    char caps[5][24];
    enum redisidx_code rc = REDISIDX_OK;
    if (!argv || !lens || !hex) {
        rc = fail(ix, REDISIDX_ENOMEM, "out of memory");
        goto out;
    }
    host = host ? host : "";
    key_tpl(ix, "t", host, host_len, tk);
    key_named(ix, "tseen", sk);
    key_named(ix, "thosts", hk);
    key_named(ix, "tkeys", kk);
    key_named(ix, "tentries", nk);
    snprintf(caps[0], sizeof caps[0], "%u", DEDUP_TEMPLATE_HOST_MAX_ENTRIES);
    snprintf(caps[1], sizeof caps[1], "%u", DEDUP_TEMPLATE_MAX_ENTRIES);
    snprintf(caps[2], sizeof caps[2], "%u", DEDUP_TEMPLATE_MAX_HOSTS);
    snprintf(caps[3], sizeof caps[3], "%u", DEDUP_TEMPLATE_MAX_SEEN);
    snprintf(caps[4], sizeof caps[4], "%llu", (unsigned long long)young);
    if (doc_hash)
        snprintf(hex[n], sizeof hex[n], "%016llx",
                 (unsigned long long)tpl_seen_hash(host, host_len, doc_hash));
    else
        hex[n][0] = '\0';
    const char *fixed[FIXED] = {NULL, NULL,   "5",     tk,      sk,      hk,      kk,     nk,
                                host, hex[n], caps[0], caps[1], caps[2], caps[3], caps[4]};
    for (size_t i = 2; i < FIXED; i++) {
        argv[i] = fixed[i];
        lens[i] = strlen(fixed[i]);
    }
    lens[8] = host_len;
    for (size_t i = 0; i < n; i++) {
        snprintf(hex[i], sizeof hex[i], "%016llx", (unsigned long long)(blocks[i] ? blocks[i] : 1));
        argv[FIXED + i] = hex[i];
        lens[FIXED + i] = 16;
    }
    rc = put_script(ix, SC_LEARN, evalit, (int)argc, argv, lens);
out:
    free(argv);
    free(lens);
    free(hex);
    return rc;
}

/*
 * Counts docs[0..n) in one pipeline: EVALSHA each (the first as EVAL when this connection
 * has not run the script: Redis runs a pipeline in order, so the others find it); those
 * answered NOSCRIPT (the script flushed, or a server that never had it) are sent once more,
 * the first as EVAL. A NOSCRIPT ran nothing, so nothing is counted twice.
 */
static enum redisidx_code learn_run(struct redisidx *ix, const struct redisidx_tpl_doc *docs,
                                    size_t n)
{
    unsigned char *todo = malloc(n ? n : 1);
    if (!todo)
        return fail(ix, REDISIDX_ENOMEM, "out of memory");
    memset(todo, 1, n);
    enum redisidx_code rc = REDISIDX_OK;
    for (int pass = 0; pass < 2 && rc == REDISIDX_OK; pass++) {
        int evalit = pass || !(ix->loaded >> SC_LEARN & 1u);
        size_t again = 0;
        for (size_t i = 0; i < n && rc == REDISIDX_OK; i++)
            if (todo[i]) {
                rc = put_learn(ix, docs[i].host ? docs[i].host : "", docs[i].host_len,
                               docs[i].doc_hash, docs[i].blocks, docs[i].n, docs[i].young, evalit);
                evalit = 0;
            }
        ix->round_trips++;
        for (size_t i = 0; i < n && rc == REDISIDX_OK; i++) {
            if (!todo[i])
                continue;
            redisReply *r = NULL;
            char tk[KEY_MAX];
            key_tpl(ix, "t", docs[i].host ? docs[i].host : "", docs[i].host_len, tk);
            rc = get(ix, &r);
            todo[i] = rc == REDISIDX_OK && pass == 0 && is_noscript(r);
            again += todo[i];
            if (rc == REDISIDX_OK && !todo[i])
                rc = expect_type(ix, r, REDIS_REPLY_INTEGER, "EVALSHA", tk);
            rfree(r);
        }
        if (rc == REDISIDX_OK && again < n)
            ix->loaded |= 1u << SC_LEARN;
        if (!again)
            break;
    }
    free(todo);
    return rc;
}

/* The adds of one NEW page into the open MULTI: buckets, document, id, payload, its
 * template blocks (*learn_at: where the learn's reply is in EXEC's; SIZE_MAX: none), count. */
static enum redisidx_code queue_add(struct redisidx *ix, const struct redisidx_page *p,
                                    uint64_t doc, size_t *queued, size_t *learn_at)
{
    *learn_at = SIZE_MAX;
    char key[KEY_MAX], fpdec[24], docdec[24], fphex[17];
    enum redisidx_code rc = REDISIDX_OK;
    snprintf(fpdec, sizeof fpdec, "%lld", (long long)(int64_t)p->fp);
    snprintf(docdec, sizeof docdec, "%llu", (unsigned long long)doc);
    snprintf(fphex, sizeof fphex, "%016llx", (unsigned long long)p->fp);
    for (unsigned t = 0; rc == REDISIDX_OK && t < ix->design.tables; t++) {
        key_bucket(ix, t, p->fp, key);
        const char *argv[4] = {"HSET", key, fpdec, docdec};
        size_t lens[4] = {4, strlen(key), strlen(fpdec), strlen(docdec)};
        rc = put(ix, 4, argv, lens);
        (*queued)++;
    }
    if (rc != REDISIDX_OK)
        return rc;
    /* the document: "FPHEX16 ID" */
    char *rec = malloc(17 + p->id_len);
    if (!rec)
        return fail(ix, REDISIDX_ENOMEM, "out of memory");
    memcpy(rec, fphex, 16);
    rec[16] = ' ';
    memcpy(rec + 17, p->id, p->id_len);
    key_doc(ix, doc, key);
    {
        const char *argv[4] = {"HSET", key, docdec, rec};
        size_t lens[4] = {4, strlen(key), strlen(docdec), 17 + p->id_len};
        rc = put(ix, 4, argv, lens);
        (*queued)++;
    }
    free(rec);
    if (rc != REDISIDX_OK)
        return rc;
    /* the id: "DOC FPHEX16[ PAYLOADHEX]" */
    char idrec[24 + 17 + 2 * REDISIDX_MAX_KEY_BYTES + 2];
    char payhex[2 * REDISIDX_MAX_KEY_BYTES + 1] = "";
    if (p->key)
        hex_of(p->key, p->key_len, payhex);
    snprintf(idrec, sizeof idrec, "%s %s%s%s", docdec, fphex, p->key ? " " : "", payhex);
    key_id(ix, p->id, p->id_len, key);
    {
        const char *argv[4] = {"HSET", key, p->id, idrec};
        size_t lens[4] = {4, strlen(key), p->id_len, strlen(idrec)};
        rc = put(ix, 4, argv, lens);
        (*queued)++;
    }
    if (rc == REDISIDX_OK && p->key) {
        key_pay(ix, p->key, p->key_len, key);
        const char *argv[4] = {"HSET", key, p->key, docdec};
        size_t lens[4] = {4, strlen(key), p->key_len, strlen(docdec)};
        rc = put(ix, 4, argv, lens);
        (*queued)++;
    }
    if (rc == REDISIDX_OK && p->key && p->meta) {
        key_meta(ix, p->key, p->key_len, key);
        const char *argv[4] = {"HSETNX", key, p->key, p->meta};
        size_t lens[4] = {6, strlen(key), p->key_len, p->meta_len};
        rc = put(ix, 4, argv, lens);
        (*queued)++;
    }
    if (rc == REDISIDX_OK && p->n_blocks) { /* EVAL until this connection has run it */
        *learn_at = *queued;
        rc = put_learn(ix, p->host, p->host_len, p->doc_hash, p->blocks, p->n_blocks, 0,
                       !(ix->loaded >> SC_LEARN & 1u));
        (*queued)++;
    }
    if (rc == REDISIDX_OK) {
        key_named(ix, "count", key);
        rc = put_str(ix, 2, "INCR", key);
        (*queued)++;
    }
    return rc;
}

/* One attempt at deciding a batch (check_once): the pages, their replies and decisions. */
struct check {
    const struct redisidx_page *p;
    size_t n;
    struct redisidx_result *r;
    int read_only;
    unsigned T;
    struct pstate *ps;
    redisReply **br; /* n * T bucket replies */
    redisReply *seq_r, *exec_r;
    char (*wkeys)[KEY_MAX]; /* T + 3: the keys one WATCH names */
    uint64_t first_doc;     /* the number of the batch's first NEW page */
    size_t exec_n;          /* commands queued in MULTI */
};

/* Queues WATCH of page i's buckets, its id shard, its payload and metadata shards. */
static enum redisidx_code check_put_watch(struct redisidx *ix, struct check *ck, size_t i)
{
    const struct redisidx_page *p = &ck->p[i];
    const char *argv[DEDUP_MAX_TABLES + 4];
    size_t lens[DEDUP_MAX_TABLES + 4];
    int argc = 0;
    argv[argc] = "WATCH";
    lens[argc++] = 5;
    for (unsigned t = 0; t < ck->T; t++) {
        key_bucket(ix, t, p->fp, ck->wkeys[t]);
        argv[argc] = ck->wkeys[t];
        lens[argc] = strlen(ck->wkeys[t]);
        argc++;
    }
    key_id(ix, p->id, p->id_len, ck->wkeys[ck->T]);
    argv[argc] = ck->wkeys[ck->T];
    lens[argc] = strlen(ck->wkeys[ck->T]);
    argc++;
    if (p->key) { /* the payload's document and its metadata */
        key_pay(ix, p->key, p->key_len, ck->wkeys[ck->T + 1]);
        argv[argc] = ck->wkeys[ck->T + 1];
        lens[argc] = strlen(ck->wkeys[ck->T + 1]);
        argc++;
        key_meta(ix, p->key, p->key_len, ck->wkeys[ck->T + 2]);
        argv[argc] = ck->wkeys[ck->T + 2];
        lens[argc] = strlen(ck->wkeys[ck->T + 2]);
        argc++;
    }
    return put(ix, argc, argv, lens);
}

/* Queues HGET of field[0..len) in the hash key. */
static enum redisidx_code put_hget(struct redisidx *ix, const char *key, const void *field,
                                   size_t len)
{
    const char *argv[3] = {"HGET", key, field};
    size_t lens[3] = {4, strlen(key), len};
    return put(ix, 3, argv, lens);
}

/* Queues page i's reads: its id, payload key and metadata, its T buckets. */
static enum redisidx_code check_put_reads(struct redisidx *ix, struct check *ck, size_t i)
{
    const struct redisidx_page *p = &ck->p[i];
    char key[KEY_MAX];
    key_id(ix, p->id, p->id_len, key);
    enum redisidx_code rc = put_hget(ix, key, p->id, p->id_len);
    if (rc == REDISIDX_OK && p->key) {
        key_pay(ix, p->key, p->key_len, key);
        rc = put_hget(ix, key, p->key, p->key_len);
    }
    if (rc == REDISIDX_OK && p->key) { /* after the key: written with it, read after */
        key_meta(ix, p->key, p->key_len, key);
        rc = put_hget(ix, key, p->key, p->key_len);
    }
    for (unsigned t = 0; rc == REDISIDX_OK && t < ck->T; t++) {
        key_bucket(ix, t, p->fp, key);
        rc = put_str(ix, 2, "HGETALL", key);
    }
    return rc;
}

/* Round trip 1, sent: per page WATCH (unless read-only) and reads, then INCRBY of the
 * sequence for the batch. */
static enum redisidx_code check_send_reads(struct redisidx *ix, struct check *ck)
{
    enum redisidx_code rc = REDISIDX_OK;
    for (size_t i = 0; i < ck->n && rc == REDISIDX_OK; i++) {
        ck->ps[i].bucket_r = ck->br + i * ck->T;
        if (!ck->read_only)
            rc = check_put_watch(ix, ck, i);
        if (rc == REDISIDX_OK)
            rc = check_put_reads(ix, ck, i);
    }
    if (rc == REDISIDX_OK && !ck->read_only) {
        char key[KEY_MAX], nb[24];
        key_named(ix, "seq", key);
        snprintf(nb, sizeof nb, "%zu", ck->n);
        rc = put_str(ix, 3, "INCRBY", key, nb);
    }
    if (rc == REDISIDX_OK)
        ix->round_trips++;
    return rc;
}

/* Round trip 1, read: the replies in the order sent; the batch's first document number. */
static enum redisidx_code check_get_reads(struct redisidx *ix, struct check *ck)
{
    enum redisidx_code rc = REDISIDX_OK;
    for (size_t i = 0; i < ck->n; i++) {
        struct pstate *s = &ck->ps[i];
        if (!ck->read_only) {
            redisReply *w = NULL;
            rc = get(ix, &w);
            if (rc == REDISIDX_OK)
                rc = expect_type(ix, w, REDIS_REPLY_STATUS, "WATCH", NULL);
            rfree(w);
            if (rc != REDISIDX_OK)
                return rc;
        }
        if ((rc = get(ix, &s->id_r)) != REDISIDX_OK)
            return rc;
        if (ck->p[i].key && (rc = get(ix, &s->pay_r)) != REDISIDX_OK)
            return rc;
        if (ck->p[i].key && (rc = get(ix, &s->meta_r)) != REDISIDX_OK)
            return rc;
        for (unsigned t = 0; t < ck->T; t++)
            if ((rc = get(ix, &s->bucket_r[t])) != REDISIDX_OK)
                return rc;
    }
    ck->first_doc = 0;
    if (ck->read_only)
        return REDISIDX_OK;
    char key[KEY_MAX];
    if ((rc = get(ix, &ck->seq_r)) != REDISIDX_OK)
        return rc;
    key_named(ix, "seq", key);
    if ((rc = expect_type(ix, ck->seq_r, REDIS_REPLY_INTEGER, "INCRBY", key)) != REDISIDX_OK)
        return rc;
    if (ck->seq_r->integer < (long long)ck->n)
        return fail(ix, REDISIDX_ECORRUPT, "key %s: sequence %lld", key, ck->seq_r->integer);
    ck->first_doc = (uint64_t)ck->seq_r->integer - ck->n + 1;
    return REDISIDX_OK;
}

/* A reply x of HGET in key: 1 a value (a string), 0 none (nil), -1 anything else (*rc
 * the error, the key named). */
static int hget_found(struct redisidx *ix, const redisReply *x, const char *key,
                      enum redisidx_code *rc)
{
    if (x->type == REDIS_REPLY_STRING)
        return 1;
    if (x->type == REDIS_REPLY_NIL)
        return 0;
    *rc = expect_type(ix, x, REDIS_REPLY_STRING, "HGET", key);
    return -1;
}

/* The first page before i of the batch that the batch adds and that has page i's id
 * (by_key 0) or payload key (1); ck->n when none. */
static size_t batch_same(const struct check *ck, size_t i, int by_key)
{
    const struct redisidx_page *p = &ck->p[i];
    const void *b = by_key ? p->key : p->id;
    size_t len = by_key ? p->key_len : p->id_len;
    for (size_t j = 0; j < i; j++) {
        const struct redisidx_page *q = &ck->p[j];
        const void *qb = by_key ? q->key : q->id;
        if (ck->ps[j].new_in_batch && qb && (by_key ? q->key_len : q->id_len) == len &&
            !memcmp(qb, b, len))
            return j;
    }
    return ck->n;
}

/* Page i by its id: KNOWN_ID (or NEW, added, when this call's lost EXEC added it), also
 * when an earlier page of the batch added the id. *done 1 when decided. */
static enum redisidx_code decide_by_id(struct redisidx *ix, struct check *ck, size_t i, int *done)
{
    const struct redisidx_page *p = &ck->p[i];
    struct redisidx_result *res = &ck->r[i];
    const redisReply *x = ck->ps[i].id_r;
    char key[KEY_MAX];
    enum redisidx_code rc = REDISIDX_OK;
    key_id(ix, p->id, p->id_len, key);
    int found = hget_found(ix, x, key, &rc);
    size_t j = found ? ck->n : batch_same(ck, i, 0);
    *done = found != 0 || j < ck->n;
    if (found < 0)
        return rc;
    if (j < ck->n) {
        res->verdict = REDISIDX_KNOWN_ID;
        res->fp = ck->p[j].fp;
        return REDISIDX_OK;
    }
    if (!found)
        return REDISIDX_OK;
    uint64_t doc, fp;
    if (parse_idrec(x->str, x->len, &doc, &fp) != 0)
        return fail(ix, REDISIDX_ECORRUPT, "key %s: the record of id '%.*s' is damaged", key,
                    (int)(p->id_len > 200 ? 200 : p->id_len), p->id);
    res->verdict = REDISIDX_KNOWN_ID;
    res->fp = fp;
    if ((rc = stored_meta(ix, p, ck->ps[i].meta_r, x, res)) != REDISIDX_OK)
        return rc;
    if (i < ix->pend_n && ix->pend[i] && fp == p->fp) {
        /* added by this call's EXEC whose reply the lost connection took */
        res->verdict = REDISIDX_NEW;
        res->added = 1;
        res->fp = 0;
    }
    return REDISIDX_OK;
}

/* Page i by its payload key: EXACT of the page stored with it (its document read in round
 * trip 2), of a payload claimed without a fingerprint, or of an earlier page of the batch.
 * *done 1 when decided. */
static enum redisidx_code decide_by_key(struct redisidx *ix, struct check *ck, size_t i, int *done)
{
    const struct redisidx_page *p = &ck->p[i];
    struct redisidx_result *res = &ck->r[i];
    const redisReply *x = ck->ps[i].pay_r, *m = ck->ps[i].meta_r;
    char key[KEY_MAX];
    enum redisidx_code rc = REDISIDX_OK;
    key_pay(ix, p->key, p->key_len, key);
    int found = hget_found(ix, x, key, &rc);
    int claimed = !found && m && m->type == REDIS_REPLY_STRING;
    size_t j = found || claimed ? ck->n : batch_same(ck, i, 1);
    *done = found != 0 || claimed || j < ck->n;
    if (found < 0)
        return rc;
    if (found) {
        int64_t doc;
        if (parse_i64(x->str, x->len, &doc) != 0 || doc < 1)
            return fail(ix, REDISIDX_ECORRUPT, "key %s: a payload entry is damaged", key);
        res->verdict = REDISIDX_EXACT;
        ck->ps[i].want_doc = 1;
        ck->ps[i].want = (uint64_t)doc;
        return stored_meta(ix, p, m, NULL, res);
    }
    if (claimed) {
        /* stored without a fingerprint (redisidx_payload_claim): an exact duplicate
         * of that payload, as the in-process decision's (filter/decide.c known()) */
        res->verdict = REDISIDX_EXACT;
        return stored_meta(ix, p, m, NULL, res);
    }
    if (j == ck->n)
        return REDISIDX_OK;
    const struct redisidx_page *q = &ck->p[j];
    res->verdict = REDISIDX_EXACT;
    res->fp = q->fp;
    if ((rc = result_dup(ix, res, q->id, q->id_len)) != REDISIDX_OK)
        return rc;
    if (q->meta)
        rc = result_meta(ix, res, q->meta, q->meta_len);
    return rc;
}

/* Page i by its fingerprint: NEAR the nearest within k of its buckets' candidates and the
 * batch's NEW pages (ties: the lower document number), else NEW (added unless NO_ADD). */
static enum redisidx_code decide_by_fp(struct redisidx *ix, struct check *ck, size_t i)
{
    const struct redisidx_page *p = &ck->p[i];
    struct redisidx_result *res = &ck->r[i];
    char key[KEY_MAX];
    enum redisidx_code rc;
    struct best b = {0};
    for (unsigned t = 0; t < ck->T; t++) {
        key_bucket(ix, t, p->fp, key);
        rc = bucket_walk(ix, ck->ps[i].bucket_r[t], key, p->fp, ix->k, best_take, &b);
        if (rc != REDISIDX_OK)
            return rc;
    }
    size_t best_j = ck->n;
    for (size_t j = 0; j < i; j++) {
        if (!ck->ps[j].new_in_batch)
            continue;
        unsigned d = (unsigned)__builtin_popcountll(ck->p[j].fp ^ p->fp);
        if (d <= ix->k && best_better(&b, ck->p[j].fp, ck->ps[j].doc, d))
            best_j = j;
    }
    if (b.found) {
        res->verdict = REDISIDX_NEAR;
        res->distance = b.d;
        res->fp = b.fp;
        if (best_j < ck->n)
            return result_dup(ix, res, ck->p[best_j].id, ck->p[best_j].id_len);
        ck->ps[i].want_doc = 1;
        ck->ps[i].want = b.doc;
        return REDISIDX_OK;
    }
    res->verdict = REDISIDX_NEW;
    if (!(p->flags & REDISIDX_NO_ADD))
        ck->ps[i].new_in_batch = 1;
    return REDISIDX_OK;
}

/* The decisions, page by page in order (a lookup stops at the id and the payload key). */
static enum redisidx_code check_decide(struct redisidx *ix, struct check *ck)
{
    enum redisidx_code rc = REDISIDX_OK;
    for (size_t i = 0; i < ck->n; i++) {
        int done = 0;
        result_reset(&ck->r[i]);
        ck->ps[i].doc = ck->first_doc + i;
        if ((rc = decide_by_id(ix, ck, i, &done)) != REDISIDX_OK)
            return rc;
        if (done || (ck->read_only && !ck->p[i].key))
            continue; /* a lookup without a key: UNKNOWN */
        if (ck->p[i].key && (rc = decide_by_key(ix, ck, i, &done)) != REDISIDX_OK)
            return rc;
        if (done || ck->read_only)
            continue;
        if ((rc = decide_by_fp(ix, ck, i)) != REDISIDX_OK)
            return rc;
    }
    return REDISIDX_OK;
}

/* 1 when round trip 2 is needed: an original's document to read, or a page to add. */
static int check_needs_exec(const struct check *ck)
{
    for (size_t i = 0; i < ck->n; i++)
        if (ck->ps[i].want_doc || (!ck->read_only && ck->ps[i].new_in_batch))
            return 1;
    return 0;
}

/* Round trip 2, sent: MULTI, the originals' documents, the adds, EXEC. From here until
 * its reply is read, the adds may be done without this client knowing (ix->pend). */
static enum redisidx_code check_send_exec(struct redisidx *ix, struct check *ck)
{
    char key[KEY_MAX];
    enum redisidx_code rc = put_str(ix, 1, "MULTI");
    ck->exec_n = 0;
    for (size_t i = 0; i < ck->n && rc == REDISIDX_OK; i++) {
        if (!ck->ps[i].want_doc)
            continue;
        char docdec[24];
        key_doc(ix, ck->ps[i].want, key);
        snprintf(docdec, sizeof docdec, "%llu", (unsigned long long)ck->ps[i].want);
        ck->ps[i].exec_at = ck->exec_n++;
        rc = put_str(ix, 3, "HGET", key, docdec);
    }
    for (size_t i = 0; i < ck->n && rc == REDISIDX_OK; i++)
        if (ck->ps[i].new_in_batch)
            rc = queue_add(ix, &ck->p[i], ck->ps[i].doc, &ck->exec_n, &ck->ps[i].learn_at);
    if (rc == REDISIDX_OK)
        rc = put_str(ix, 1, "EXEC");
    if (rc != REDISIDX_OK)
        return rc;
    for (size_t i = 0; i < ck->n; i++)
        ix->pend[i] = (unsigned char)ck->ps[i].new_in_batch;
    ix->pend_n = ck->n;
    sent(ix, "EXEC");
    ix->round_trips++;
    return REDISIDX_OK;
}

/* After EXEC: a learn that ran leaves the script known on this connection. */
static enum redisidx_code check_learned(struct redisidx *ix, const struct check *ck)
{
    for (size_t i = 0; i < ck->n; i++)
        if (ck->ps[i].new_in_batch && ck->ps[i].learn_at != SIZE_MAX)
            ix->loaded |= 1u << SC_LEARN;
    return REDISIDX_OK;
}

/* After an EXEC whose learns were answered NOSCRIPT (the script flushed under a connection
 * that had run it: the pages were added, their blocks not counted): those learns again,
 * on their own (learn_run), before the call returns. */
static enum redisidx_code check_relearn(struct redisidx *ix, const struct check *ck)
{
    struct redisidx_tpl_doc *d = malloc(ck->n * sizeof *d);
    size_t m = 0;
    if (!d)
        return fail(ix, REDISIDX_ENOMEM, "out of memory");
    ix->loaded &= ~(1u << SC_LEARN);
    for (size_t i = 0; i < ck->n; i++) {
        const struct redisidx_page *p = &ck->p[i];
        if (ck->ps[i].new_in_batch && ck->ps[i].learn_at != SIZE_MAX &&
            is_noscript(ck->exec_r->element[ck->ps[i].learn_at]))
            d[m++] = (struct redisidx_tpl_doc){p->host,   p->host_len, p->doc_hash,
                                               p->blocks, p->n_blocks, 0};
    }
    enum redisidx_code rc = learn_run(ix, d, m);
    free(d);
    return rc;
}

/* Round trip 2, read: +OK and +QUEUED each, then EXEC's array (nil: ECONFLICT). */
static enum redisidx_code check_get_exec(struct redisidx *ix, struct check *ck)
{
    enum redisidx_code rc;
    for (size_t q = 0; q <= ck->exec_n; q++) {
        redisReply *s = NULL;
        rc = get(ix, &s);
        if (rc == REDISIDX_OK)
            rc = expect_type(ix, s, REDIS_REPLY_STATUS, q ? "queueing" : "MULTI", NULL);
        rfree(s);
        if (rc != REDISIDX_OK) {
            drop(ix); /* a transaction left open */
            return rc;
        }
    }
    if ((rc = get(ix, &ck->exec_r)) != REDISIDX_OK)
        return rc;
    ix->pend_n = 0; /* its fate is known */
    if (ck->exec_r->type == REDIS_REPLY_NIL)
        return REDISIDX_ECONFLICT; /* a watched key changed: try again */
    if ((rc = expect_type(ix, ck->exec_r, REDIS_REPLY_ARRAY, "EXEC", NULL)) != REDISIDX_OK)
        return rc;
    if (ck->exec_r->elements != ck->exec_n)
        return fail(ix, REDISIDX_ECORRUPT, "EXEC: %zu replies for %zu commands",
                    ck->exec_r->elements, ck->exec_n);
    int noscript = 0;
    for (size_t q = 0; q < ck->exec_n; q++) {
        const redisReply *e = ck->exec_r->element[q];
        if (is_noscript(e))
            noscript = 1; /* a learn: the script flushed since this connection ran it */
        else if (e->type == REDIS_REPLY_ERROR)
            return reply_error(ix, e, "EXEC", NULL);
    }
    return noscript ? check_relearn(ix, ck) : check_learned(ix, ck);
}

/* After EXEC: the pages added, and the originals' ids (and EXACT's fingerprints) from the
 * documents read. */
static enum redisidx_code check_answers(struct redisidx *ix, struct check *ck)
{
    enum redisidx_code rc;
    char key[KEY_MAX];
    for (size_t i = 0; i < ck->n; i++) {
        if (ck->ps[i].new_in_batch)
            ck->r[i].added = 1;
        if (!ck->ps[i].want_doc)
            continue;
        const redisReply *d = ck->exec_r->element[ck->ps[i].exec_at];
        const char *id;
        size_t id_len;
        uint64_t fp;
        key_doc(ix, ck->ps[i].want, key);
        if (d->type != REDIS_REPLY_STRING || parse_docrec(d->str, d->len, &fp, &id, &id_len))
            return fail(ix, REDISIDX_ECORRUPT, "key %s: document %llu is %s", key,
                        (unsigned long long)ck->ps[i].want,
                        d->type == REDIS_REPLY_NIL ? "missing" : "damaged");
        if (ck->r[i].verdict == REDISIDX_EXACT)
            ck->r[i].fp = fp;
        if ((rc = result_dup(ix, &ck->r[i], id, id_len)) != REDISIDX_OK)
            return rc;
    }
    return REDISIDX_OK;
}

/* Frees what the attempt holds. */
static void check_free(struct check *ck)
{
    if (ck->ps)
        for (size_t i = 0; i < ck->n; i++) {
            rfree(ck->ps[i].id_r);
            rfree(ck->ps[i].pay_r);
            rfree(ck->ps[i].meta_r);
        }
    if (ck->br)
        for (size_t i = 0; i < ck->n * ck->T; i++)
            rfree(ck->br[i]);
    rfree(ck->seq_r);
    rfree(ck->exec_r);
    free(ck->ps);
    free(ck->br);
    free(ck->wkeys);
}

/* One attempt at deciding p[0..n): REDISIDX_OK, REDISIDX_ECONFLICT (EXEC failed: try
 * again) or an error. */
static enum redisidx_code check_once(struct redisidx *ix, const struct redisidx_page *p, size_t n,
                                     struct redisidx_result *r, int read_only)
{
    unsigned T = ix->design.tables;
    struct check ck = {.p = p,
                       .n = n,
                       .r = r,
                       .read_only = read_only,
                       .T = T,
                       .ps = calloc(n, sizeof *ck.ps),
                       .br = calloc(n * T + 1, sizeof *ck.br),
                       .wkeys = malloc((T + 3) * sizeof *ck.wkeys)};
    enum redisidx_code rc = REDISIDX_OK;
    if (!ck.ps || !ck.br || !ck.wkeys)
        rc = fail(ix, REDISIDX_ENOMEM, "out of memory");
    if (rc == REDISIDX_OK)
        rc = check_send_reads(ix, &ck);
    if (rc == REDISIDX_OK)
        rc = check_get_reads(ix, &ck);
    if (rc == REDISIDX_OK)
        rc = check_decide(ix, &ck);
    if (rc == REDISIDX_OK && !check_needs_exec(&ck)) {
        if (!read_only) { /* sent in front of the next command */
            rc = put_str(ix, 1, "UNWATCH");
            if (rc == REDISIDX_OK)
                ix->discard++;
        }
    } else if (rc == REDISIDX_OK) {
        rc = check_send_exec(ix, &ck);
        if (rc == REDISIDX_OK)
            rc = check_get_exec(ix, &ck);
        if (rc == REDISIDX_OK)
            rc = check_answers(ix, &ck);
    }
    if (rc != REDISIDX_OK && rc != REDISIDX_ECONFLICT)
        drop(ix); /* replies may be out of step */
    check_free(&ck);
    return rc;
}

/* After a lost transaction: from the third on, a random pause of up to 0.1 ms per attempt
 * (1 ms at most), so that clients that keep colliding spread out. */
static void backoff(struct redisidx *ix, unsigned attempt)
{
    if (attempt < 2)
        return;
    uint64_t x = ix->rng += 0x9e3779b97f4a7c15ull; /* splitmix64, under ix->mu */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    unsigned cap = attempt < 10 ? attempt * 100u : 1000u; /* microseconds */
    struct timespec ts = {0, (long)(x % cap + 1) * 1000L};
    nanosleep(&ts, NULL);
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * After a failure: 1 when it was the connection's (ix->lost: refused, closed, timed out,
 * LOADING) and retry_time is not spent since the first such failure (*since, monotonic s;
 * < 0: none yet), after a pause (50 ms doubled each time up to 1 s, with jitter, as
 * Redis's own clients back off); 0 otherwise, the message then saying how long it was
 * tried. The connection is dropped either way.
 */
static int retry_wait(struct redisidx *ix, double *since, unsigned *waits)
{
    drop(ix);
    if (!ix->lost)
        return 0;
    double now = mono_now();
    if (*since < 0)
        *since = now;
    double left = ix->retry_time - (now - *since);
    if (left <= 0) {
        size_t n = strlen(ix->err);
        if (ix->retry_time > 0 && n < sizeof ix->err)
            snprintf(ix->err + n, sizeof ix->err - n, " (connecting again for %.1f s, retry=%g)",
                     now - *since, ix->retry_time);
        return 0;
    }
    double w = RETRY_FIRST_WAIT * (double)(1u << (*waits < 5 ? *waits : 5));
    if (w > RETRY_MAX_WAIT)
        w = RETRY_MAX_WAIT;
    uint64_t x = ix->rng += 0x9e3779b97f4a7c15ull; /* splitmix64, under ix->mu */
    x = (x ^ (x >> 30)) * 0xbf58476d1ce4e5b9ull;
    x = (x ^ (x >> 27)) * 0x94d049bb133111ebull;
    x ^= x >> 31;
    w *= 0.5 + (double)(x % 1000) / 2000.0; /* 50% to 100% of it */
    if (w > left)
        w = left;
    (*waits)++;
    struct timespec ts = {(time_t)w, (long)((w - (double)(time_t)w) * 1e9)};
    nanosleep(&ts, NULL);
    return 1;
}

/*
 * One operation, step(ix, arg), connected first if the connection was dropped. Made again
 * while another client wins the race (REDISIDX_ECONFLICT), at most ix->max_retries times
 * with a backoff between; and while the connection is lost (Redis restarted, a network
 * cut), for ix->retry_time at most (retry_wait). A step whose EXEC reply was lost leaves
 * ix->pend_n / pend_del set: its next run finds by id what was done. Under ix->mu.
 */
static enum redisidx_code transact(struct redisidx *ix,
                                   enum redisidx_code (*step)(struct redisidx *, void *), void *arg)
{
    enum redisidx_code rc;
    double since = -1;
    unsigned waits = 0;
    for (unsigned attempt = 0;;) {
        ix->lost = 0;
        if (!ix->c) {
            if ((rc = connect_(ix, 0)) != REDISIDX_OK) {
                if (retry_wait(ix, &since, &waits))
                    continue;
                return rc;
            }
            ix->reconnects++;
        }
        rc = step(ix, arg);
        if (rc != REDISIDX_OK && rc != REDISIDX_ECONFLICT && ix->lost) {
            if (retry_wait(ix, &since, &waits))
                continue;
            return rc;
        }
        if (rc != REDISIDX_ECONFLICT)
            return rc;
        ix->conflicts++;
        if (++attempt >= ix->max_retries)
            return fail(ix, REDISIDX_ECONFLICT, "%u transactions in a row lost to other clients",
                        ix->max_retries);
        backoff(ix, attempt - 1);
    }
}

/* Writes out what put() queued, then tells the test hook (redisidx_set_sent_hook), which
 * may have the connection lost there, its replies unread. */
static void sent(struct redisidx *ix, const char *what)
{
    if (!ix->sent_hook || !ix->c)
        return;
    int done = 0;
    while (!done)
        if (redisBufferWrite(ix->c, &done) != REDIS_OK)
            return; /* the read that follows reports it */
    if (ix->sent_hook(ix->sent_userdata, what))
        drop(ix);
}

void redisidx_set_sent_hook(struct redisidx *ix, int (*fn)(void *userdata, const char *what),
                            void *userdata)
{
    ix->sent_hook = fn;
    ix->sent_userdata = userdata;
}

struct check_args {
    const struct redisidx_page *p;
    size_t n;
    struct redisidx_result *r;
    int read_only;
};

static enum redisidx_code check_step(struct redisidx *ix, void *arg)
{
    struct check_args *a = arg;
    return check_once(ix, a->p, a->n, a->r, a->read_only);
}

static enum redisidx_code decide(struct redisidx *ix, const struct redisidx_page *p, size_t n,
                                 struct redisidx_result *r, int read_only)
{
    enum redisidx_code rc = REDISIDX_OK;
    if (!ix || !p || !r || !n)
        return REDISIDX_EINVAL;
    pthread_mutex_lock(&ix->mu);
    ix->err[0] = '\0';
    if (n > BATCH_MAX) {
        rc = fail(ix, REDISIDX_EINVAL, "a batch of %zu pages (at most %d)", n, BATCH_MAX);
        goto out;
    }
    for (size_t i = 0; i < n; i++)
        if (!page_args_ok(ix, &p[i], &rc))
            goto out;
    struct check_args a = {p, n, r, read_only};
    ix->pend_n = 0;
    rc = transact(ix, check_step, &a);
    ix->pend_n = 0;
    if (rc == REDISIDX_OK && !read_only)
        ix->checks += n;
out:
    pthread_mutex_unlock(&ix->mu);
    return rc;
}

enum redisidx_code redisidx_check(struct redisidx *ix, const struct redisidx_page *p,
                                  struct redisidx_result *r)
{
    return decide(ix, p, 1, r, 0);
}

enum redisidx_code redisidx_check_many(struct redisidx *ix, const struct redisidx_page *p, size_t n,
                                       struct redisidx_result *r)
{
    return decide(ix, p, n, r, 0);
}

enum redisidx_code redisidx_lookup(struct redisidx *ix, const struct redisidx_page *p,
                                   struct redisidx_result *r)
{
    return decide(ix, p, 1, r, 1);
}

/* ---- payloads without a fingerprint ---- */

struct claim_args {
    const char *id;
    const void *key, *meta;
    size_t id_len, key_len, meta_len;
    struct redisidx_result *r;
    int tried; /* an attempt of this call sent the script: its reply may have been lost */
};

/* CLAIM_LUA's 'i' answer: KNOWN_ID, the id's fingerprint, the metadata stored with this
 * payload key when the id was added with it (x: the id record, m: the metadata's reply). */
static enum redisidx_code claim_known(struct redisidx *ix, const struct claim_args *a,
                                      const redisReply *x, const redisReply *m)
{
    char ik[KEY_MAX];
    uint64_t doc;
    struct redisidx_page p = {.key = a->key, .key_len = a->key_len};
    key_id(ix, a->id, a->id_len, ik);
    if (x->type != REDIS_REPLY_STRING || parse_idrec(x->str, x->len, &doc, &a->r->fp) != 0)
        return fail(ix, REDISIDX_ECORRUPT, "key %s: the record of id '%.*s' is damaged", ik,
                    (int)(a->id_len > 200 ? 200 : a->id_len), a->id);
    a->r->verdict = REDISIDX_KNOWN_ID;
    return stored_meta(ix, &p, m, x, a->r);
}

/* CLAIM_LUA's 'p' answer: EXACT of the page indexed with the payload (doc: its number, d:
 * its document record, m: the metadata stored with the key, if any). */
static enum redisidx_code claim_exact(struct redisidx *ix, const struct claim_args *a,
                                      const redisReply *doc, const redisReply *d,
                                      const redisReply *m)
{
    char pk[KEY_MAX];
    int64_t n = 0;
    const char *id;
    size_t id_len;
    struct redisidx_page p = {.key = a->key, .key_len = a->key_len};
    key_pay(ix, a->key, a->key_len, pk);
    if (doc->type != REDIS_REPLY_STRING || parse_i64(doc->str, doc->len, &n) != 0 || n < 1)
        return fail(ix, REDISIDX_ECORRUPT, "key %s: a payload entry is damaged", pk);
    if (d->type != REDIS_REPLY_STRING || parse_docrec(d->str, d->len, &a->r->fp, &id, &id_len))
        return fail(ix, REDISIDX_ECORRUPT, "key %s: document %lld is %s", pk, (long long)n,
                    d->type == REDIS_REPLY_NIL ? "missing" : "damaged");
    a->r->verdict = REDISIDX_EXACT;
    enum redisidx_code rc = result_dup(ix, a->r, id, id_len);
    return rc == REDISIDX_OK ? stored_meta(ix, &p, m, NULL, a->r) : rc;
}

/* CLAIM_LUA's answer x into a->r (tried: an earlier attempt of the call sent it). */
static enum redisidx_code claim_answer(struct redisidx *ix, const struct claim_args *a,
                                       const redisReply *x, const char *mk, int tried)
{
    enum redisidx_code rc = expect_type(ix, x, REDIS_REPLY_ARRAY, "EVALSHA", mk);
    if (rc != REDISIDX_OK)
        return rc;
    static const size_t want[4] = {3, 4, 3, 1}; /* i p m n */
    const char *tags = "ipmn", *t;
    const redisReply *const *e = (const redisReply *const *)x->element;
    if (!x->elements || e[0]->type != REDIS_REPLY_STRING || e[0]->len != 1 || !e[0]->str[0] ||
        !(t = strchr(tags, e[0]->str[0])) || x->elements != want[t - tags])
        return fail(ix, REDISIDX_ECORRUPT, "the claim of a payload in %s: an unexpected answer",
                    mk);
    switch (*t) {
    case 'i':
        return claim_known(ix, a, e[1], e[2]);
    case 'p':
        return claim_exact(ix, a, e[1], e[2], e[3]);
    case 'm':
        if (e[1]->type != REDIS_REPLY_STRING || e[2]->type != REDIS_REPLY_INTEGER)
            return fail(ix, REDISIDX_ECORRUPT, "key %s: a damaged claim", mk);
        if (e[2]->integer && tried) { /* this call's own, its reply lost */
            a->r->verdict = REDISIDX_NEW;
            a->r->added = 1;
            return REDISIDX_OK;
        }
        /* this id's own claim (idempotent by id), or another's: EXACT */
        a->r->verdict = e[2]->integer ? REDISIDX_KNOWN_ID : REDISIDX_EXACT;
        return result_meta(ix, a->r, e[1]->str, e[1]->len);
    default:
        a->r->verdict = REDISIDX_NEW;
        a->r->added = 1;
        return REDISIDX_OK;
    }
}

static enum redisidx_code claim_step(struct redisidx *ix, void *arg)
{
    struct claim_args *a = arg;
    char ik[KEY_MAX], pk[KEY_MAX], mk[KEY_MAX], ck[KEY_MAX];
    redisReply *x = NULL;
    key_id(ix, a->id, a->id_len, ik);
    key_pay(ix, a->key, a->key_len, pk);
    key_meta(ix, a->key, a->key_len, mk);
    key_claim(ix, a->key, a->key_len, ck);
    const char *argv[11] = {NULL, NULL, "4", ik, pk, mk, ck, a->id, a->key, a->meta, ix->prefix};
    size_t lens[11] = {
        0,          0,         1,          strlen(ik),  strlen(pk),        strlen(mk),
        strlen(ck), a->id_len, a->key_len, a->meta_len, strlen(ix->prefix)};
    int tried = a->tried;
    a->tried = 1;
    result_reset(a->r);
    enum redisidx_code rc = call_script(ix, SC_CLAIM, 11, argv, lens, "claim", &x);
    if (rc == REDISIDX_OK)
        rc = claim_answer(ix, a, x, mk, tried);
    if (rc != REDISIDX_OK)
        drop(ix);
    rfree(x);
    return rc;
}

enum redisidx_code redisidx_payload_claim(struct redisidx *ix, const char *id, size_t id_len,
                                          const void *key, size_t key_len, const void *meta,
                                          size_t meta_len, struct redisidx_result *r)
{
    if (!ix || !id || !key || (!meta && meta_len) || !r)
        return REDISIDX_EINVAL;
    pthread_mutex_lock(&ix->mu);
    ix->err[0] = '\0';
    result_reset(r);
    enum redisidx_code rc = REDISIDX_OK;
    if (!id_len || memchr(id, '\0', id_len) || id_len > REDISIDX_MAX_ID_BYTES) {
        rc = fail(ix, id_len > REDISIDX_MAX_ID_BYTES ? REDISIDX_ETOOLARGE : REDISIDX_EINVAL,
                  "an id of %zu bytes (1 to %u, no NUL)", id_len, REDISIDX_MAX_ID_BYTES);
    } else if (!key_len || key_len > REDISIDX_MAX_KEY_BYTES || meta_len > REDISIDX_MAX_META_BYTES) {
        rc = fail(ix, REDISIDX_ETOOLARGE,
                  "a payload key of %zu bytes (1 to %u) or metadata of "
                  "%zu (at most %u)",
                  key_len, REDISIDX_MAX_KEY_BYTES, meta_len, REDISIDX_MAX_META_BYTES);
    } else {
        struct claim_args a = {id, key, meta ? meta : "", id_len, key_len, meta_len, r, 0};
        rc = transact(ix, claim_step, &a);
    }
    pthread_mutex_unlock(&ix->mu);
    return rc;
}

/* ---- site templates ---- */

struct tpl_args {
    const char *host;
    size_t host_len;
    uint64_t doc_hash, young;
    const uint64_t *blocks;
    const uint32_t *n_tokens;
    size_t n;
    unsigned char *is_template;
    size_t marked;
};

/* One HMGET of the host's document count and the blocks' counts; the marks from them. */
static enum redisidx_code mark_step(struct redisidx *ix, void *arg)
{
    struct tpl_args *a = arg;
    char tk[KEY_MAX];
    size_t argc = 3 + a->n;
    const char **argv = malloc(argc * sizeof *argv);
    size_t *lens = malloc(argc * sizeof *lens);
    char(*hex)[17] = malloc((a->n ? a->n : 1) * sizeof *hex);
    uint32_t *counts = malloc((a->n ? a->n : 1) * sizeof *counts);
    redisReply *r = NULL;
    enum redisidx_code rc = REDISIDX_OK;
    if (!argv || !lens || !hex || !counts) {
        rc = fail(ix, REDISIDX_ENOMEM, "out of memory");
        goto out;
    }
    key_tpl(ix, "t", a->host, a->host_len, tk);
    argv[0] = "HMGET";
    argv[1] = tk;
    argv[2] = "docs";
    for (size_t i = 0; i < a->n; i++) {
        uint64_t b = a->blocks[i] ? a->blocks[i] : 1;
        snprintf(hex[i], sizeof hex[i], "%016llx", (unsigned long long)b);
        argv[3 + i] = hex[i];
    }
    for (size_t i = 0; i < argc; i++)
        lens[i] = strlen(argv[i]);
    if ((rc = put(ix, (int)argc, argv, lens)) != REDISIDX_OK || (rc = get(ix, &r)) != REDISIDX_OK ||
        (rc = expect_type(ix, r, REDIS_REPLY_ARRAY, "HMGET", tk)) != REDISIDX_OK)
        goto out;
    if (r->elements != argc - 2) {
        rc = fail(ix, REDISIDX_ECORRUPT, "key %s: HMGET gave %zu values for %zu fields", tk,
                  r->elements, argc - 2);
        goto out;
    }
    uint64_t docs = 0;
    for (size_t i = 0; i < r->elements; i++) {
        const redisReply *v = r->element[i];
        int64_t c = 0;
        if (v->type != REDIS_REPLY_NIL &&
            (v->type != REDIS_REPLY_STRING || parse_i64(v->str, v->len, &c) != 0 || c < 0)) {
            rc = fail(ix, REDISIDX_ECORRUPT, "key %s: the count of %s is not a number", tk,
                      argv[2 + i]);
            goto out;
        }
        if (i == 0)
            docs = (uint64_t)c;
        else
            counts[i - 1] = c > UINT32_MAX ? UINT32_MAX : (uint32_t)c;
    }
    a->marked = dedup_templates_mark_counts(docs, counts, a->n_tokens, a->n, a->is_template);
out:
    if (rc != REDISIDX_OK)
        drop(ix);
    rfree(r);
    free(argv);
    free(lens);
    free(hex);
    free(counts);
    return rc;
}

static enum redisidx_code learn_step(struct redisidx *ix, void *arg)
{
    struct tpl_args *a = arg;
    struct redisidx_tpl_doc d = {a->host, a->host_len, a->doc_hash, a->blocks, a->n, a->young};
    enum redisidx_code rc = learn_run(ix, &d, 1);
    if (rc != REDISIDX_OK)
        drop(ix);
    return rc;
}

struct learn_many_args {
    const struct redisidx_tpl_doc *docs;
    size_t n;
};

/* Every document's learn in one pipeline (learn_run). */
static enum redisidx_code learn_many_step(struct redisidx *ix, void *arg)
{
    struct learn_many_args *a = arg;
    enum redisidx_code rc = learn_run(ix, a->docs, a->n);
    if (rc != REDISIDX_OK)
        drop(ix);
    return rc;
}

enum redisidx_code redisidx_template_learn_many(struct redisidx *ix,
                                                const struct redisidx_tpl_doc *docs, size_t n)
{
    if (!ix || (n && !docs))
        return REDISIDX_EINVAL;
    for (size_t i = 0; i < n; i++)
        if ((docs[i].n && !docs[i].blocks) || (docs[i].host_len && !docs[i].host))
            return REDISIDX_EINVAL;
    pthread_mutex_lock(&ix->mu);
    ix->err[0] = '\0';
    enum redisidx_code rc = REDISIDX_OK;
    for (size_t i = 0; i < n && rc == REDISIDX_OK; i++)
        if (docs[i].host_len > DEDUP_TEMPLATE_MAX_KEY)
            rc = fail(ix, REDISIDX_EINVAL, "a template host key of %zu bytes (at most %u)",
                      docs[i].host_len, DEDUP_TEMPLATE_MAX_KEY);
    if (rc == REDISIDX_OK && n > BATCH_MAX)
        rc = fail(ix, REDISIDX_EINVAL, "a batch of %zu documents (at most %d)", n, BATCH_MAX);
    if (rc == REDISIDX_OK && n) {
        struct learn_many_args a = {docs, n};
        rc = transact(ix, learn_many_step, &a);
    }
    pthread_mutex_unlock(&ix->mu);
    return rc;
}

/* Runs a template step under the lock, with the arguments checked. */
static enum redisidx_code tpl_run(struct redisidx *ix, struct tpl_args *a,
                                  enum redisidx_code (*step)(struct redisidx *, void *))
{
    if (!ix || (a->n && !a->blocks) || (a->host_len && !a->host))
        return REDISIDX_EINVAL;
    pthread_mutex_lock(&ix->mu);
    ix->err[0] = '\0';
    enum redisidx_code rc = REDISIDX_OK;
    if (a->host_len > DEDUP_TEMPLATE_MAX_KEY)
        rc = fail(ix, REDISIDX_EINVAL, "a template host key of %zu bytes (at most %u)", a->host_len,
                  DEDUP_TEMPLATE_MAX_KEY);
    else if (a->n)
        rc = transact(ix, step, a);
    pthread_mutex_unlock(&ix->mu);
    return rc;
}

enum redisidx_code redisidx_template_mark(struct redisidx *ix, const char *host, size_t host_len,
                                          const uint64_t *blocks, const uint32_t *n_tokens,
                                          size_t n, unsigned char *is_template, size_t *marked)
{
    struct tpl_args a = {.host = host ? host : "",
                         .host_len = host_len,
                         .blocks = blocks,
                         .n_tokens = n_tokens,
                         .n = n,
                         .is_template = is_template};
    if (n && (!n_tokens || !is_template))
        return REDISIDX_EINVAL;
    enum redisidx_code rc = tpl_run(ix, &a, mark_step);
    if (rc != REDISIDX_OK && n)
        memset(is_template, 0, n);
    if (marked)
        *marked = rc == REDISIDX_OK ? a.marked : 0;
    return rc;
}

enum redisidx_code redisidx_template_learn(struct redisidx *ix, const char *host, size_t host_len,
                                           uint64_t doc_hash, const uint64_t *blocks, size_t n)
{
    return redisidx_template_learn_young(ix, host, host_len, doc_hash, blocks, n, 0);
}

enum redisidx_code redisidx_template_learn_young(struct redisidx *ix, const char *host,
                                                 size_t host_len, uint64_t doc_hash,
                                                 const uint64_t *blocks, size_t n, uint64_t young)
{
    struct tpl_args a = {.host = host ? host : "",
                         .host_len = host_len,
                         .doc_hash = doc_hash,
                         .young = young,
                         .blocks = blocks,
                         .n = n};
    return tpl_run(ix, &a, learn_step);
}

/* ---- neighbours, delete, stats ---- */

struct cand {
    uint64_t doc, fp;
    unsigned d;
};

static int cand_cmp(const void *a, const void *b)
{
    const struct cand *x = a, *y = b;
    if (x->d != y->d)
        return x->d < y->d ? -1 : 1;
    return x->doc < y->doc ? -1 : x->doc > y->doc;
}

struct neighbors_args {
    uint64_t fp;
    unsigned k;
    size_t max;
    int (*cb)(void *userdata, const char *id, uint64_t fp, unsigned distance);
    void *userdata;
    size_t given;
};

/* The candidates of one neighbours query: within k, by document. */
struct cand_list {
    struct cand *v;
    size_t n, cap;
};

/* Round trip 1 of a neighbours query: HGETALL of fp's T buckets into br[0..T). */
static enum redisidx_code nb_read_buckets(struct redisidx *ix, uint64_t fp, redisReply **br)
{
    enum redisidx_code rc = REDISIDX_OK;
    char key[KEY_MAX];
    unsigned T = ix->design.tables;
    for (unsigned t = 0; t < T && rc == REDISIDX_OK; t++) {
        key_bucket(ix, t, fp, key);
        rc = put_str(ix, 2, "HGETALL", key);
    }
    ix->round_trips++;
    for (unsigned t = 0; t < T && rc == REDISIDX_OK; t++)
        rc = get(ix, &br[t]);
    return rc;
}

/* A candidate within k appended to a cand_list: 0, or -1 out of memory. */
static int cand_take(void *userdata, uint64_t c, uint64_t doc, unsigned d)
{
    struct cand_list *cl = userdata;
    if (cl->n == cl->cap) {
        size_t ncap = cl->cap ? cl->cap * 2 : 16;
        struct cand *nv = realloc(cl->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        cl->v = nv;
        cl->cap = ncap;
    }
    cl->v[cl->n++] = (struct cand){doc, c, d};
    return 0;
}

/* Sorts cl nearest first (ties: added first), one entry a document, at most max (0: all). */
static void nb_order(struct cand_list *cl, size_t max)
{
    if (cl->n)
        qsort(cl->v, cl->n, sizeof *cl->v, cand_cmp);
    size_t u = 0; /* one document found through several tables counts once */
    for (size_t i = 0; i < cl->n; i++)
        if (!u || cl->v[u - 1].doc != cl->v[i].doc || cl->v[u - 1].d != cl->v[i].d)
            cl->v[u++] = cl->v[i];
    cl->n = max && u > max ? max : u;
}

/* Round trip 2 of a neighbours query: the documents of cl[0..n) in one MULTI/EXEC, whose
 * array reply goes to *exec_r. */
static enum redisidx_code nb_read_docs(struct redisidx *ix, const struct cand_list *cl,
                                       redisReply **exec_r)
{
    char key[KEY_MAX];
    enum redisidx_code rc = put_str(ix, 1, "MULTI");
    for (size_t i = 0; i < cl->n && rc == REDISIDX_OK; i++) {
        char docdec[24];
        key_doc(ix, cl->v[i].doc, key);
        snprintf(docdec, sizeof docdec, "%llu", (unsigned long long)cl->v[i].doc);
        rc = put_str(ix, 3, "HGET", key, docdec);
    }
    if (rc == REDISIDX_OK)
        rc = put_str(ix, 1, "EXEC");
    ix->round_trips++;
    for (size_t q = 0; q <= cl->n && rc == REDISIDX_OK; q++) {
        redisReply *s = NULL;
        rc = get(ix, &s);
        if (rc == REDISIDX_OK)
            rc = expect_type(ix, s, REDIS_REPLY_STATUS, "MULTI", NULL);
        rfree(s);
    }
    if (rc == REDISIDX_OK)
        rc = get(ix, exec_r);
    if (rc == REDISIDX_OK)
        rc = expect_type(ix, *exec_r, REDIS_REPLY_ARRAY, "EXEC", NULL);
    if (rc == REDISIDX_OK && (*exec_r)->elements != cl->n)
        rc = fail(ix, REDISIDX_ECORRUPT, "EXEC: %zu replies for %zu commands", (*exec_r)->elements,
                  cl->n);
    return rc;
}

/* na->cb for each candidate whose document is still there (exec_r: their records), until
 * it asks to stop; na->given counts the calls. */
static enum redisidx_code nb_give(struct redisidx *ix, struct neighbors_args *na,
                                  const struct cand_list *cl, const redisReply *exec_r)
{
    char key[KEY_MAX];
    for (size_t i = 0; i < cl->n; i++) {
        const redisReply *d = exec_r->element[i];
        if (d->type == REDIS_REPLY_NIL)
            continue; /* deleted since */
        const char *id;
        size_t id_len;
        uint64_t dfp;
        key_doc(ix, cl->v[i].doc, key);
        if (d->type != REDIS_REPLY_STRING || parse_docrec(d->str, d->len, &dfp, &id, &id_len) ||
            dfp != cl->v[i].fp)
            return fail(ix, REDISIDX_ECORRUPT, "key %s: document %llu is damaged", key,
                        (unsigned long long)cl->v[i].doc);
        char *copy = malloc(id_len + 1);
        if (!copy)
            return fail(ix, REDISIDX_ENOMEM, "out of memory");
        memcpy(copy, id, id_len);
        copy[id_len] = '\0';
        na->given++;
        int stop = na->cb(na->userdata, copy, dfp, cl->v[i].d);
        free(copy);
        if (stop)
            break;
    }
    return REDISIDX_OK;
}

/* One attempt (transact): every network step comes before the first call of cb, so a
 * lost connection is retried without calling cb twice. */
static enum redisidx_code neighbors_step(struct redisidx *ix, void *arg)
{
    struct neighbors_args *na = arg;
    unsigned T = ix->design.tables;
    struct cand_list cl = {NULL, 0, 0};
    redisReply *exec_r = NULL;
    redisReply **br = calloc(T, sizeof *br);
    enum redisidx_code rc = REDISIDX_OK;
    na->given = 0;
    if (!br)
        rc = fail(ix, REDISIDX_ENOMEM, "out of memory");
    if (rc == REDISIDX_OK)
        rc = nb_read_buckets(ix, na->fp, br);
    for (unsigned t = 0; t < T && rc == REDISIDX_OK; t++) {
        char key[KEY_MAX];
        key_bucket(ix, t, na->fp, key);
        rc = bucket_walk(ix, br[t], key, na->fp, na->k, cand_take, &cl);
    }
    if (rc == REDISIDX_OK)
        nb_order(&cl, na->max);
    if (rc == REDISIDX_OK && cl.n)
        rc = nb_read_docs(ix, &cl, &exec_r);
    if (rc == REDISIDX_OK && cl.n)
        rc = nb_give(ix, na, &cl, exec_r);
    if (rc != REDISIDX_OK)
        drop(ix);
    if (br)
        for (unsigned t = 0; t < T; t++)
            rfree(br[t]);
    free(br);
    rfree(exec_r);
    free(cl.v);
    return rc;
}

enum redisidx_code redisidx_neighbors(struct redisidx *ix, uint64_t fp, unsigned k, size_t max,
                                      int (*cb)(void *userdata, const char *id, uint64_t fp,
                                                unsigned distance),
                                      void *userdata, size_t *n_out)
{
    if (n_out)
        *n_out = 0;
    if (!ix || !cb)
        return REDISIDX_EINVAL;
    pthread_mutex_lock(&ix->mu);
    ix->err[0] = '\0';
    enum redisidx_code rc;
    struct neighbors_args a = {fp, k, max, cb, userdata, 0};
    if (k > ix->k)
        rc = fail(ix, REDISIDX_EINVAL, "k %u is over the index's %u", k, ix->k);
    else
        rc = transact(ix, neighbors_step, &a);
    if (n_out)
        *n_out = a.given;
    pthread_mutex_unlock(&ix->mu);
    return rc;
}

/* What a delete reads of the page indexed under an id (its id record). */
struct del_page {
    const char *id;
    size_t id_len;
    char ikey[KEY_MAX]; /* its id shard */
    uint64_t doc, fp;
    unsigned char pay[REDISIDX_MAX_KEY_BYTES]; /* its payload key, pay_len bytes (0: none) */
    size_t pay_len;
};

/* Round trip 1 of a delete: WATCH of the id's shard and HGET of its record into *r. */
static enum redisidx_code del_read(struct redisidx *ix, const struct del_page *dp, redisReply **r)
{
    enum redisidx_code rc = put_str(ix, 2, "WATCH", dp->ikey);
    if (rc == REDISIDX_OK)
        rc = put_hget(ix, dp->ikey, dp->id, dp->id_len);
    ix->round_trips++;
    redisReply *w = NULL;
    if (rc == REDISIDX_OK)
        rc = get(ix, &w);
    if (rc == REDISIDX_OK)
        rc = expect_type(ix, w, REDIS_REPLY_STATUS, "WATCH", NULL);
    rfree(w);
    if (rc == REDISIDX_OK)
        rc = get(ix, r);
    return rc;
}

/* The id record r ("DOC FPHEX16[ PAYLOADHEX]") into dp: its document, fingerprint and
 * payload key. */
static enum redisidx_code del_parse(struct redisidx *ix, const redisReply *r, struct del_page *dp)
{
    enum redisidx_code rc = expect_type(ix, r, REDIS_REPLY_STRING, "HGET", dp->ikey);
    if (rc != REDISIDX_OK)
        return rc;
    if (parse_idrec(r->str, r->len, &dp->doc, &dp->fp) != 0)
        return fail(ix, REDISIDX_ECORRUPT, "key %s: the record of id '%.*s' is damaged", dp->ikey,
                    (int)(dp->id_len > 200 ? 200 : dp->id_len), dp->id);
    dp->pay_len = 0;
    const char *ph = memchr(r->str, ' ', r->len);
    ph = ph ? ph + 18 : NULL;
    if (!ph || ph >= r->str + r->len)
        return REDISIDX_OK;
    size_t hl = (size_t)(r->str + r->len - ph);
    if (hl % 2 || hl / 2 > sizeof dp->pay)
        rc = fail(ix, REDISIDX_ECORRUPT, "key %s: the record of id '%.*s' is damaged", dp->ikey,
                  (int)(dp->id_len > 200 ? 200 : dp->id_len), dp->id);
    for (size_t i = 0; rc == REDISIDX_OK && i < hl / 2; i++) {
        int hi = hexval((unsigned char)ph[2 * i]), lo = hexval((unsigned char)ph[2 * i + 1]);
        if (hi < 0 || lo < 0)
            rc = fail(ix, REDISIDX_ECORRUPT, "key %s: a damaged payload key", dp->ikey);
        dp->pay[i] = (unsigned char)(hi * 16 + lo);
    }
    dp->pay_len = hl / 2;
    return rc;
}

/* Queues HDEL of field[0..len) in the hash key. */
static enum redisidx_code put_hdel(struct redisidx *ix, const char *key, const void *field,
                                   size_t len)
{
    const char *argv[3] = {"HDEL", key, field};
    size_t lens[3] = {4, strlen(key), len};
    return put(ix, 3, argv, lens);
}

/* Round trip 2 of a delete, sent: MULTI, the HDELs of the page's buckets, document, id,
 * payload key and its metadata, DECR of the count, EXEC; *queued the commands in MULTI. */
static enum redisidx_code del_send(struct redisidx *ix, const struct del_page *dp, size_t *queued)
{
    char key[KEY_MAX], fpdec[24], docdec[24];
    snprintf(fpdec, sizeof fpdec, "%lld", (long long)(int64_t)dp->fp);
    snprintf(docdec, sizeof docdec, "%llu", (unsigned long long)dp->doc);
    size_t q = 0;
    enum redisidx_code rc = put_str(ix, 1, "MULTI");
    for (unsigned t = 0; rc == REDISIDX_OK && t < ix->design.tables; t++, q++) {
        key_bucket(ix, t, dp->fp, key);
        rc = put_str(ix, 3, "HDEL", key, fpdec);
    }
    if (rc == REDISIDX_OK) {
        key_doc(ix, dp->doc, key);
        rc = put_str(ix, 3, "HDEL", key, docdec);
        q++;
    }
    if (rc == REDISIDX_OK) {
        rc = put_hdel(ix, dp->ikey, dp->id, dp->id_len);
        q++;
    }
    if (rc == REDISIDX_OK && dp->pay_len) {
        key_pay(ix, dp->pay, dp->pay_len, key);
        rc = put_hdel(ix, key, dp->pay, dp->pay_len);
        q++;
    }
    if (rc == REDISIDX_OK && dp->pay_len) {
        key_meta(ix, dp->pay, dp->pay_len, key);
        rc = put_hdel(ix, key, dp->pay, dp->pay_len);
        q++;
    }
    if (rc == REDISIDX_OK) {
        key_named(ix, "count", key);
        rc = put_str(ix, 2, "DECR", key);
        q++;
    }
    if (rc == REDISIDX_OK)
        rc = put_str(ix, 1, "EXEC");
    if (rc == REDISIDX_OK) {
        ix->pend_del = 1;
        sent(ix, "EXEC");
    }
    ix->round_trips++;
    *queued = q;
    return rc;
}

/* Round trip 2 of a delete, read: +OK and q times +QUEUED, then EXEC's reply: *deleted 1,
 * or ECONFLICT (nil: the id's shard changed since the WATCH). */
static enum redisidx_code del_get(struct redisidx *ix, size_t q, int *deleted)
{
    enum redisidx_code rc = REDISIDX_OK;
    redisReply *r = NULL;
    for (size_t i = 0; i <= q && rc == REDISIDX_OK; i++) {
        rc = get(ix, &r);
        if (rc == REDISIDX_OK)
            rc = expect_type(ix, r, REDIS_REPLY_STATUS, "MULTI", NULL);
        rfree(r);
        r = NULL;
    }
    if (rc == REDISIDX_OK)
        rc = get(ix, &r);
    if (rc != REDISIDX_OK)
        return rc;
    ix->pend_del = 0;
    if (r->type == REDIS_REPLY_NIL)
        rc = REDISIDX_ECONFLICT;
    else if ((rc = expect_type(ix, r, REDIS_REPLY_ARRAY, "EXEC", NULL)) == REDISIDX_OK)
        *deleted = 1;
    rfree(r);
    return rc;
}

/* One attempt at deleting id: OK with *deleted, ECONFLICT, or an error. */
static enum redisidx_code delete_once(struct redisidx *ix, const char *id, size_t id_len,
                                      int *deleted)
{
    struct del_page dp = {.id = id, .id_len = id_len};
    redisReply *r = NULL;
    *deleted = 0;
    key_id(ix, id, id_len, dp.ikey);
    enum redisidx_code rc = del_read(ix, &dp, &r);
    if (rc != REDISIDX_OK)
        return rc;
    if (r->type == REDIS_REPLY_NIL) {
        rfree(r);
        rc = put_str(ix, 1, "UNWATCH");
        if (rc == REDISIDX_OK)
            ix->discard++;
        *deleted = ix->pend_del; /* gone by this call's EXEC whose reply was lost */
        return rc;
    }
    rc = del_parse(ix, r, &dp);
    rfree(r);
    size_t q = 0;
    if (rc == REDISIDX_OK)
        rc = del_send(ix, &dp, &q);
    if (rc == REDISIDX_OK)
        rc = del_get(ix, q, deleted);
    return rc;
}

struct delete_args {
    const char *id;
    size_t id_len;
    int *deleted;
};

/* One delete transaction; a failure other than a lost race drops the connection (the
 * next call connects again). */
static enum redisidx_code delete_step(struct redisidx *ix, void *arg)
{
    struct delete_args *a = arg;
    enum redisidx_code rc = delete_once(ix, a->id, a->id_len, a->deleted);
    if (rc != REDISIDX_OK && rc != REDISIDX_ECONFLICT)
        drop(ix);
    return rc;
}

enum redisidx_code redisidx_delete(struct redisidx *ix, const char *id, size_t id_len, int *deleted)
{
    if (!ix || !id || !id_len || !deleted)
        return REDISIDX_EINVAL;
    pthread_mutex_lock(&ix->mu);
    ix->err[0] = '\0';
    enum redisidx_code rc = REDISIDX_OK;
    *deleted = 0;
    if (id_len > REDISIDX_MAX_ID_BYTES)
        goto out; /* no page can have it */
    struct delete_args a = {id, id_len, deleted};
    ix->pend_del = 0;
    rc = transact(ix, delete_step, &a);
    ix->pend_del = 0;
out:
    pthread_mutex_unlock(&ix->mu);
    return rc;
}

static enum redisidx_code stats_step(struct redisidx *ix, void *arg)
{
    struct redisidx_stats *s = arg;
    memset(s, 0, sizeof *s);
    enum redisidx_code rc = REDISIDX_OK;
    redisReply *cr = NULL, *mr = NULL;
    char key[KEY_MAX];
    key_named(ix, "count", key);
    rc = put_str(ix, 2, "GET", key);
    if (rc == REDISIDX_OK)
        rc = put_str(ix, 2, "INFO", "memory");
    ix->round_trips++;
    if (rc == REDISIDX_OK)
        rc = get(ix, &cr);
    if (rc == REDISIDX_OK)
        rc = get(ix, &mr);
    if (rc != REDISIDX_OK)
        goto out;
    if (cr->type != REDIS_REPLY_NIL) {
        int64_t v;
        if ((rc = expect_type(ix, cr, REDIS_REPLY_STRING, "GET", key)) != REDISIDX_OK)
            goto out;
        if (parse_i64(cr->str, cr->len, &v) != 0 || v < 0) {
            rc = fail(ix, REDISIDX_ECORRUPT, "key %s: not a count", key);
            goto out;
        }
        s->documents = (uint64_t)v;
    }
    if ((rc = expect_type(ix, mr, REDIS_REPLY_STRING, "INFO", NULL)) != REDISIDX_OK)
        goto out;
    const char *um = strstr(mr->str, "\nused_memory:");
    if (um)
        s->used_memory = strtoull(um + 13, NULL, 10);
    s->k = ix->k;
    s->tables = ix->design.tables;
    s->bucket_bits = ix->bucket_bits;
    s->fingerprint_version = DEDUP_FINGERPRINT_VERSION;
    dedup_design_describe(&ix->design, s->design, sizeof s->design);
    s->checks = ix->checks;
    s->round_trips = ix->round_trips;
    s->conflicts = ix->conflicts;
    s->reconnects = ix->reconnects;
out:
    if (rc != REDISIDX_OK)
        drop(ix);
    rfree(cr);
    rfree(mr);
    return rc;
}

enum redisidx_code redisidx_stats(struct redisidx *ix, struct redisidx_stats *s)
{
    if (!ix || !s)
        return REDISIDX_EINVAL;
    pthread_mutex_lock(&ix->mu);
    ix->err[0] = '\0';
    enum redisidx_code rc = transact(ix, stats_step, s);
    pthread_mutex_unlock(&ix->mu);
    return rc;
}
