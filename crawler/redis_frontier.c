/*
 * The shared frontier on Redis (`simcrawl crawl --redis URL --worker-name NAME`): several
 * crawl processes, on one machine or many, crawl one site set together. Redis 7 holds the
 * seen set, the per-host queues, the leases of the URLs in flight, the hosts' politeness
 * and robots.txt readings, the counters of the whole crawl, and each worker's committed
 * WARC and log ends. hiredis (0.14, Debian) talks to it; every change that must not be
 * split by a kill is one Lua script (EVALSHA), which Redis runs atomically.
 *
 * SHARDS: the frontier is spread over B hash tags (B fixed when the crawl starts, kept in
 * T:shards; T = "simcrawl{f0}"), a host's shard b = XXH3(origin) mod B, so that a proxy
 * that shards by tag (nutcracker/twemproxy: docs/SCALE-OUT.md) routes each script to the
 * node holding its keys. The keys of a host and of the leases of its URLs are under its
 * shard's tag S (B = 1: T itself; else "simcrawl{fB.HHHHHHHH}", H a hash of "fB", which
 * spreads the tags over a proxy's ring), the crawl's under T, and a worker's under T with
 * its name (B = 1) or under its own tag W = "simcrawl{w:NAME}" (B > 1, the names in
 * brackets). ORIGIN is the host's origin ("http://example.org:80"):
 *   T:shards      the crawl's B (a crawl without it, begun before: B = 1)
 *   T:workers     SET   (B > 1) the workers' names, whose counters are summed
 *   S:s:ORIGIN    SET   the host's seen URLs (8-byte crawl_hash64, binary)
 *   S:q:ORIGIN    LIST  the host's queued URLs, "DEPTH HOPS\nREFERRER\nURL", FIFO
 *   S:h:ORIGIN    HASH  delay (s), next (ms, wall clock: not asked before), lease (the
 *                       token holding the host), rs/rb/rt (robots.txt status, body, time),
 *                       rv (--max-pages: how many of the first URLs of its queue hold a
 *                       page budget share, handed back by a reap or a release)
 *   S:rvh, S:rv   SET, string: the shard's hosts with such URLs; how many URLs they are
 *   S:ready       ZSET  the shard's hosts with queued URLs that no worker holds, by next
 *   S:dl          ZSET  the shard's lease tokens by deadline (ms)
 *   S:lease       HASH  token -> "WORKER\nORIGIN\nENTRY" (the URL in flight)
 *   S:tok         the last token the shard gave (a token is a shard's: the worker keeps
 *                 the shard with it)
 *   S:v           URLs ever queued in the shard (the finish check's version)
 *   S:wl:NAME     SET   the worker's lease tokens in the shard
 *   S:mark        HASH  (B > 1) token -> "C T0 BY NEXT DELAY FETCHED": marked for commit C
 *   T:stats       HASH  counters of the whole crawl (every worker's commits add to them)
 *                       [W:stats: the worker's part]
 *   T:budget      the crawl's page budget used: URLs leased and not given back, less those
 *                 completed without a request (--max-pages counts the whole crawl) [B > 1:
 *                 S:budget, each shard's]
 *   T:bg, T:br    HASH  (B > 1, --max-pages) shard -> page budget granted to it, and
 *                       given back by it as T knows it (both only grow)
 *   S:bq, S:br    (B > 1, --max-pages) the budget the shard was granted (T:bg's as it
 *                 knows it) and has given back
 *   T:w:NAME      HASH  the worker's meta: its WARC and log ends, its own counters, cseq
 *                       [W:w]
 *   T:wp:NAME     LIST  the worker's page records (crawl_state_page_add) [W:wp]
 *   W:apply       HASH  (B > 1) commit number -> "SHARD TOKEN ...": committed, maybe not
 *                       applied
 *
 * THE SCRIPTS name one tag as their one key (numkeys 1; the others are made from it
 * inside) and go as EVALSHA of their SHA-1, computed here, or EVAL of their text when the
 * node answers
 * NOSCRIPT (new, restarted, flushed): never SCRIPT LOAD, MULTI or WATCH, which nutcracker
 * cannot route and answers by closing the connection; no SELECT through a proxy (db 0).
 * The same code runs against one redis-server and through nutcracker. enqueue, acquire,
 * renew, reap and release run shard by shard, pipelined (one round trip for all the
 * shards they concern: pipeline()). The commit is one script on one shard (COMMIT_LUA);
 * over more, where no script sees both the URLs of several shards and the worker's ends,
 * four steps (MARK_LUA: the commit over shards), a reaper resolving the marks of a worker
 * killed between them (RESOLVE_LUA), its restart applying what it committed (apply_left).
 *
 * HOW IT WORKS. enqueue: SADD to the host's seen set and, only when new, RPUSH to its
 * queue and ZADD the host to ready unless a worker holds it: one script, so a kill can
 * neither lose a URL between the seen check and the push nor queue it twice. acquire:
 * takes hosts whose next time has come off ready, pops one URL of each and leases it (a
 * token, a deadline, the owner): the host is held by that token (not in ready) until the
 * URL is completed or its lease expires, so one worker at a time asks a host, and the
 * host's next time (the end of the last transfer plus the delay, Crawl-delay included)
 * is written when the URL is completed: politeness holds across workers (a lease given
 * back unfinished, whose request may have just reached the host, makes the host wait a
 * delay from then). commit: after
 * the worker has flushed its WARC and log, one script checks that every token it
 * completes is still its own (a worker whose lease expired and was given to another
 * cannot complete the URL again: the commit fails whole and the worker stops, its
 * uncommitted records cut off on its restart), marks them done, writes the hosts' next
 * times, puts hosts with more URLs back in ready (or keeps a host and leases its next URL
 * while the worker's host lease, --host-lease-time, lasts), and writes the worker's WARC
 * and log ends and counters: the pages and the file ends that hold their records are
 * committed together, as with --state (state.c). renew: the worker pushes the deadlines
 * of its leases on while it works on them. reap: any worker gives the URLs of expired
 * leases back to their queues (a killed worker's URLs go to the others). release: a
 * worker starting (or stopping cleanly) gives its own leases back at once.
 *
 * THE PAGE BUDGET (--max-pages, the whole crawl's). Every lease adds one to P:budget; a
 * commit takes off the URLs completed without a request (robots.txt disallowed, a host
 * given up), so P:budget is the requests made by committed pages plus the URLs in flight:
 * the single crawl's count of requests started. acquire (and a commit keeping a host)
 * leases no more than the budget left, in the same script that reserves it, so that the
 * workers together never start more than --max-pages requests. A lease given back (reap,
 * release, the give-back of a lost answer's leases) keeps its share: its URL goes back to
 * the front of its host's queue holding it (the host's rv, S:rvh, S:rv), and its next
 * lease takes that share instead of a new one; acquire leases such URLs first, whatever
 * budget is left, and counts them with the leases outstanding (the crawl is not finished
 * while one waits). So a killed worker's request that was never committed is made again,
 * as a resumed --state crawl makes it, before the budget goes to anything new: the page
 * it may have kept in the shared index (near-duplicates dropped against it meanwhile) is
 * archived whatever the budget.
 * Over B > 1 shards no script sees every shard's count: each shard counts its own
 * (S:budget, as above) and leases within the budget it was granted, S:bq - S:br - S:budget;
 * T grants it from the pool, --max-pages less what the shards hold (T:bg - T:br), and a
 * shard gives back at once what is left after its acquire. Both transfers are cumulative
 * counts that only grow, merged as a maximum on the other side (the next call carries
 * them), so a grant or a give-back a kill or a lost answer cut in two is completed by the
 * next worker's call, a call sent twice grants at most a surplus the shard gives back,
 * and no worker holds a part of the budget of its own: a killed worker's leases, reaped,
 * keep their shares in their shards, for whichever worker leases their URLs next
 * (BUDGET_LUA, crawl_redis_acquire).
 *
 * A LOST CONNECTION (Redis restarted, a network cut, a timeout, LOADING, a proxy's node
 * gone): run_cmd()
 * connects again with a backoff and sends the command again, for retry_time at most. On
 * each reconnect the leases Redis gave this worker in replies it never read are given back
 * (REAP with the worker's own tokens kept); a commit carries the worker's commit number
 * (P:w:NAME cseq), so one already made answers {1} and changes nothing; enqueue and renew
 * are idempotent. Nothing is done twice, and with AOF (appendfsync always) nothing
 * acknowledged is lost.
 *
 * Times in Redis are wall-clock ms: workers on several machines need synchronised clocks
 * (NTP), as any shared politeness does; over shards the commit's margin (within it of
 * each other) too.
 */
#include "crawler/crawl.h"

#include <errno.h>
#include <hiredis.h>
#include <openssl/evp.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/time.h>
#include <time.h>
#include <xxhash.h>

#define P "simcrawl" /* the prefix of every key */
/* the hash tag of the frontier's keys: every key a script touches is under it, and the
 * script names it as its one key (KEYS[1]), so that a proxy (nutcracker) routes the script
 * to the node holding them all */
#define T P "{f0}"
#define RETRY_FIRST_WAIT 0.05 /* s before the first attempt to connect again; doubled */
#define RETRY_MAX_WAIT 1.0    /* s at most between two attempts */

/* ---- the scripts ---- */

/* KEYS[1]: the host's shard tag. ARGV: the URL's hash, its queue entry, its origin. 1:
 * queued, 0: seen before. A URL queued counts in the shard's version (:v), which the
 * finish check reads (crawl_redis_acquire) */
static const char ENQUEUE_LUA[] =
    "local p, o = KEYS[1], ARGV[3]\n"
    "if redis.call('SADD', p .. ':s:' .. o, ARGV[1]) == 0 then return 0 end\n"
    "redis.call('RPUSH', p .. ':q:' .. o, ARGV[2])\n"
    "redis.call('INCR', p .. ':v')\n"
    "local hk = p .. ':h:' .. o\n"
    "if redis.call('HEXISTS', hk, 'lease') == 0 then\n"
    "  local nx = tonumber(redis.call('HGET', hk, 'next') or '0')\n"
    "  redis.call('ZADD', p .. ':ready', 'NX', nx, o)\n"
    "end\n"
    "return 1\n";

/* lease(P, worker, origin, now_ms, lease_ms): the next URL of origin leased to worker,
 * {token, origin, entry, delay, rs, rb, rt}, or nil when its queue is empty. It takes a
 * page budget share: the one it holds (handed back by a reap: rv) or a new one */
#define LEASE_FN                                                                                   \
    "local function lease(p, w, o, now, lms)\n"                                                    \
    "  local hk = p .. ':h:' .. o\n"                                                               \
    "  local e = redis.call('LPOP', p .. ':q:' .. o)\n"                                            \
    "  if not e then redis.call('HDEL', hk, 'lease') return nil end\n"                             \
    "  local t = tostring(redis.call('INCR', p .. ':tok'))\n"                                      \
    "  local rv = tonumber(redis.call('HGET', hk, 'rv') or '0')\n"                                 \
    "  if rv > 1 then redis.call('HINCRBY', hk, 'rv', -1)\n"                                       \
    "  elseif rv == 1 then\n"                                                                      \
    "    redis.call('HDEL', hk, 'rv')\n"                                                           \
    "    redis.call('SREM', p .. ':rvh', o)\n"                                                     \
    "  end\n"                                                                                      \
    "  if rv > 0 then redis.call('DECR', p .. ':rv') else redis.call('INCR', p .. ':budget') "     \
    "end\n"                                                                                        \
    "  redis.call('HSET', p .. ':lease', t, w .. '\\n' .. o .. '\\n' .. e)\n"                      \
    "  redis.call('ZADD', p .. ':dl', now + lms, t)\n"                                             \
    "  redis.call('SADD', p .. ':wl:' .. w, t)\n"                                                  \
    "  redis.call('HSET', hk, 'lease', t)\n"                                                       \
    "  local h = redis.call('HMGET', hk, 'delay', 'rs', 'rb', 'rt')\n"                             \
    "  return {t, o, e, h[1] or '', h[2] or '', h[3] or '', h[4] or ''}\n"                         \
    "end\n"

/* left(P, m): the page budget left (m 0: no budget, -1; m -1: the shard's share of it,
 * granted less given back). budget(P, a): m of the budget argument a: "0" none, the crawl's
 * --max-pages (B = 1), or "G" and the budget T granted the shard (B > 1: S:bq raised to it;
 * -1) */
#define LEFT_FN                                                                                    \
    "local function left(p, m)\n"                                                                  \
    "  if m == 0 then return -1 end\n"                                                             \
    "  if m < 0 then\n"                                                                            \
    "    m = tonumber(redis.call('GET', p .. ':bq') or '0') -\n"                                   \
    "        tonumber(redis.call('GET', p .. ':br') or '0')\n"                                     \
    "  end\n"                                                                                      \
    "  local u = tonumber(redis.call('GET', p .. ':budget') or '0')\n"                             \
    "  if u >= m then return 0 end\n"                                                              \
    "  return m - u\n"                                                                             \
    "end\n"                                                                                        \
    "local function budget(p, a)\n"                                                                \
    "  if string.sub(a, 1, 1) ~= 'G' then return tonumber(a) end\n"                                \
    "  local g = tonumber(string.sub(a, 2))\n"                                                     \
    "  if g > tonumber(redis.call('GET', p .. ':bq') or '0') then\n"                               \
    "    redis.call('SET', p .. ':bq', g)\n"                                                       \
    "  end\n"                                                                                      \
    "  return -1\n"                                                                                \
    "end\n"

/* KEYS[1]: the shard's tag. ARGV: worker, now_ms, lease_ms, max, the budget (budget():
 * "0" none). The hosts whose first URL holds a budget share (S:rvh) are leased first,
 * whatever budget is left. Returns {leases, the shard's first ready time, its leases
 * outstanding and URLs queued holding a share, page budget left (-1: none; over shards
 * the budget it has given back, S:br, after giving back what it did not lease), its
 * version (URLs ever queued in it), the first ready time of a host whose first URL holds
 * a share (what can be leased with the budget spent)}. max 0: the shard's state only. */
static const char ACQUIRE_LUA[] = LEASE_FN LEFT_FN
    "local p, w, now, lms = KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])\n"
    "local mp, max = budget(p, ARGV[5]), tonumber(ARGV[4])\n"
    "local out = {}\n"
    "if max > 0 and redis.call('SCARD', p .. ':rvh') > 0 then\n"
    "  for _, o in ipairs(redis.call('SMEMBERS', p .. ':rvh')) do\n"
    "    local s = redis.call('ZSCORE', p .. ':ready', o)\n"
    "    if #out < max and s and tonumber(s) <= now then\n"
    "      redis.call('ZREM', p .. ':ready', o)\n"
    "      local l = lease(p, w, o, now, lms)\n"
    "      if l then out[#out + 1] = l end\n"
    "    end\n"
    "  end\n"
    "  max = max - #out\n"
    "end\n"
    "local b = left(p, mp)\n"
    "if b >= 0 and b < max then max = b end\n"
    "if max > 0 then\n"
    "  local hosts = redis.call('ZRANGEBYSCORE', p .. ':ready', '-inf', now, 'LIMIT', 0, max)\n"
    "  for _, o in ipairs(hosts) do\n"
    "    redis.call('ZREM', p .. ':ready', o)\n"
    "    local l = lease(p, w, o, now, lms)\n"
    "    if l then out[#out + 1] = l end\n"
    "  end\n"
    "end\n"
    "local first = redis.call('ZRANGE', p .. ':ready', 0, 0, 'WITHSCORES')[2] or ''\n"
    "local frv = ''\n"
    "for _, o in ipairs(redis.call('SMEMBERS', p .. ':rvh')) do\n"
    "  local s = redis.call('ZSCORE', p .. ':ready', o)\n"
    "  if s and (frv == '' or tonumber(s) < tonumber(frv)) then frv = s end\n"
    "end\n"
    "local l = left(p, mp)\n"
    "if mp < 0 then\n"
    "  if l > 0 then redis.call('INCRBY', p .. ':br', l) end\n"
    "  l = tonumber(redis.call('GET', p .. ':br') or '0')\n"
    "end\n"
    "local busy = redis.call('ZCARD', p .. ':dl') + tonumber(redis.call('GET', p .. ':rv') or "
    "'0')\n"
    "return {out, first, busy, l,\n"
    "        tonumber(redis.call('GET', p .. ':v') or '0'), frv}\n";

/* the owner check: the lease of token t is worker w's */
#define OWNED_FN                                                                                   \
    "local function owned(p, w, t)\n"                                                              \
    "  local v = redis.call('HGET', p .. ':lease', t)\n"                                           \
    "  if not v then return nil end\n"                                                             \
    "  if string.sub(v, 1, #w + 1) ~= w .. '\\n' then return nil end\n"                            \
    "  return v\n"                                                                                 \
    "end\n"

/* complete(P, w, t, next_ms, delay, fetched, keep, now, lease_ms, max_pages): token t's
 * URL done (its lease, mark and deadline gone; fetched "0": no request, its page budget
 * given back), its host's next time and delay written, and the host back to ready, or,
 * keep true and budget left (or its next URL holding a share), kept with its next URL leased
 * (returned, as lease()) */
#define COMPLETE_FN                                                                                \
    "local function complete(p, w, t, nx, d, f, keep, now, lms, mp)\n"                             \
    "  local v = redis.call('HGET', p .. ':lease', t)\n"                                           \
    "  local a = string.find(v, '\\n', 1, true)\n"                                                 \
    "  local b = string.find(v, '\\n', a + 1, true)\n"                                             \
    "  local o = string.sub(v, a + 1, b - 1)\n"                                                    \
    "  if f == '0' then redis.call('DECR', p .. ':budget') end\n"                                  \
    "  redis.call('HDEL', p .. ':lease', t)\n"                                                     \
    "  redis.call('HDEL', p .. ':mark', t)\n"                                                      \
    "  redis.call('ZREM', p .. ':dl', t)\n"                                                        \
    "  redis.call('SREM', p .. ':wl:' .. w, t)\n"                                                  \
    "  local hk = p .. ':h:' .. o\n"                                                               \
    "  redis.call('HSET', hk, 'next', nx, 'delay', d)\n"                                           \
    "  if keep and (left(p, mp) ~= 0 or redis.call('HEXISTS', hk, 'rv') == 1) then\n"              \
    "    local l = lease(p, w, o, now, lms)\n"                                                     \
    "    if l then return l end\n"                                                                 \
    "  end\n"                                                                                      \
    "  redis.call('HDEL', hk, 'lease')\n"                                                          \
    "  if redis.call('LLEN', p .. ':q:' .. o) > 0 then\n"                                          \
    "    redis.call('ZADD', p .. ':ready', nx, o)\n"                                               \
    "  end\n"                                                                                      \
    "  return nil\n"                                                                               \
    "end\n"

/* KEYS[1]: T. ARGV: worker, now_ms, lease_ms, cseq, max_pages, n,
 *       [token, next_ms, delay, keep, fetched] * n, m, [key, value] * m, s, [key, delta] * s,
 *       g, [page] * g.
 * The commit of a crawl on one shard (B = 1): the completions and the worker's ends in
 * one script. cseq: the worker's commit number; the commit already made with it (its
 * reply lost with the connection) answers {1} and does nothing again. fetched "0": the URL
 * was completed without a request (its page budget given back). */
static const char COMMIT_LUA[] = LEASE_FN OWNED_FN LEFT_FN COMPLETE_FN
    "local p, w, now, lms = KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])\n"
    "if redis.call('HGET', p .. ':w:' .. w, 'cseq') == ARGV[4] then return {1, {}} end\n"
    "local mp, n = tonumber(ARGV[5]), tonumber(ARGV[6])\n"
    "for i = 0, n - 1 do\n"
    "  local t = ARGV[7 + 5 * i]\n"
    "  if not owned(p, w, t) then return {-1, t} end\n"
    "end\n"
    "for i = 0, n - 1 do\n"
    "  if ARGV[11 + 5 * i] == '0' then redis.call('DECR', p .. ':budget') end\n"
    "end\n"
    "local out = {}\n"
    "for i = 0, n - 1 do\n"
    "  local j = 7 + 5 * i\n"
    "  local l = complete(p, w, ARGV[j], ARGV[j + 1], ARGV[j + 2], '1', ARGV[j + 3] == '1',\n"
    "                     now, lms, mp)\n"
    "  if l then out[#out + 1] = l end\n"
    "end\n"
    "local k = 7 + 5 * n\n"
    "local m = tonumber(ARGV[k]); k = k + 1\n"
    "if m > 0 then\n"
    "  redis.call('HSET', p .. ':w:' .. w, unpack(ARGV, k, k + 2 * m - 1)); k = k + 2 * m\n"
    "end\n"
    "local s = tonumber(ARGV[k]); k = k + 1\n"
    "for i = 1, s do redis.call('HINCRBY', p .. ':stats', ARGV[k], ARGV[k + 1]); k = k + 2 end\n"
    "local g = tonumber(ARGV[k]); k = k + 1\n"
    "for i = 1, g do redis.call('RPUSH', p .. ':wp:' .. w, ARGV[k]); k = k + 1 end\n"
    "redis.call('HSET', p .. ':w:' .. w, 'cseq', ARGV[4])\n"
    "return {0, out}\n";

/* THE COMMIT OVER SHARDS (B > 1): four steps, each safe to send again.
 * 1. MARK, per shard: KEYS[1]: the shard's tag. ARGV: worker, "C T0 BY" (the commit
 *    number, when it began and the time its commit point must be made by, ms), then
 *    [token, next_ms, delay, fetched] * n. Every token still the worker's, each is marked
 *    (S:mark token -> "C T0 BY NEXT DELAY FETCHED"): 0; else the first that is not, and
 *    nothing marked. */
static const char MARK_LUA[] = OWNED_FN
    "local p, w = KEYS[1], ARGV[1]\n"
    "for i = 3, #ARGV, 4 do\n"
    "  if not owned(p, w, ARGV[i]) then return ARGV[i] end\n"
    "end\n"
    "for i = 3, #ARGV, 4 do\n"
    "  redis.call('HSET', p .. ':mark', ARGV[i],\n"
    "             ARGV[2] .. ' ' .. ARGV[i + 1] .. ' ' .. ARGV[i + 2] .. ' ' .. ARGV[i + 3])\n"
    "end\n"
    "return 0\n";

/* 2. THE COMMIT POINT, on the worker's tag W: KEYS[1]: W. ARGV: C, BY + the margin (ms),
 *    the commit number applied before ("" none: its list forgotten), the list of the
 *    group ("SHARD TOKEN ..."), m, [key, value] * m, s, [key, delta] * s, g, [page] * g.
 *    1: made already (cseq = C); -1: too late (the server's clock past the bound: a
 *    reaper may be resolving the marks, nothing written); 0: written, cseq = C. */
static const char COMMITW_LUA[] =
    "local p, c = KEYS[1], ARGV[1]\n"
    "if redis.call('HGET', p .. ':w', 'cseq') == c then return 1 end\n"
    "local tm = redis.call('TIME')\n"
    "if tonumber(tm[1]) * 1000 + math.floor(tonumber(tm[2]) / 1000) > tonumber(ARGV[2]) then\n"
    "  return -1\n"
    "end\n"
    "if ARGV[3] ~= '' then redis.call('HDEL', p .. ':apply', ARGV[3]) end\n"
    "redis.call('HSET', p .. ':apply', c, ARGV[4])\n"
    "local k = 5\n"
    "local m = tonumber(ARGV[k]); k = k + 1\n"
    "if m > 0 then\n"
    "  redis.call('HSET', p .. ':w', unpack(ARGV, k, k + 2 * m - 1)); k = k + 2 * m\n"
    "end\n"
    "local s = tonumber(ARGV[k]); k = k + 1\n"
    "for i = 1, s do redis.call('HINCRBY', p .. ':stats', ARGV[k], ARGV[k + 1]); k = k + 2 end\n"
    "local g = tonumber(ARGV[k]); k = k + 1\n"
    "for i = 1, g do redis.call('RPUSH', p .. ':wp', ARGV[k]); k = k + 1 end\n"
    "redis.call('HSET', p .. ':w', 'cseq', c)\n"
    "return 0\n";

/* mark(P, t): token t's mark split {c, t0, by, next, delay, fetched}, or nil */
#define MARK_FN                                                                                    \
    "local function mark(p, t)\n"                                                                  \
    "  local m = redis.call('HGET', p .. ':mark', t)\n"                                            \
    "  if not m then return nil end\n"                                                             \
    "  local f = {}\n"                                                                             \
    "  for x in string.gmatch(m, '%S+') do f[#f + 1] = x end\n"                                    \
    "  return f\n"                                                                                 \
    "end\n"

/* 3. APPLY, per shard: KEYS[1]: the shard's tag. ARGV: worker, now_ms, lease_ms,
 *    the budget (budget()), C, [token, keep] * n. The tokens still the worker's and marked with a
 *    commit number up to C are completed as marked (the others were already); the hosts
 *    kept come back with their next URL leased: returns them (as lease()).
 * 4. The list is forgotten by the next commit point (its third argument), or by the
 *    restart, which applies every list left first (crawl_redis_open). */
static const char APPLY_LUA[] = LEASE_FN OWNED_FN LEFT_FN COMPLETE_FN MARK_FN
    "local p, w, now, lms = KEYS[1], ARGV[1], tonumber(ARGV[2]), tonumber(ARGV[3])\n"
    "local mp, c = budget(p, ARGV[4]), tonumber(ARGV[5])\n"
    "local out = {}\n"
    "for i = 6, #ARGV, 2 do\n"
    "  local t = ARGV[i]\n"
    "  local f = mark(p, t)\n"
    "  if f and tonumber(f[1]) <= c and owned(p, w, t) then\n"
    "    local l = complete(p, w, t, f[4], f[5], f[6], ARGV[i + 1] == '1', now, lms, mp)\n"
    "    if l then out[#out + 1] = l end\n"
    "  end\n"
    "end\n"
    "return out\n";

/* KEYS[1]: T. ARGV: worker, deadline_ms, tokens...: returns the first token no longer ours,
 * or 0 */
static const char RENEW_LUA[] =
    OWNED_FN "local p, w = KEYS[1], ARGV[1]\n"
             "for i = 3, #ARGV do\n"
             "  if not owned(p, w, ARGV[i]) then return ARGV[i] end\n"
             "  redis.call('ZADD', p .. ':dl', 'XX', ARGV[2], ARGV[i])\n"
             "end\n"
             "return 0\n";

/* requeue(P, t, v, now, unseen): the URL of token t (its lease v) back to the front of its
 * queue, holding its lease's page budget share (rv), and the host back to ready, the
 * lease and any mark gone. unseen: its worker
 * never saw it (no request made: the host keeps its next time); else its request may
 * have reached the host just now: the host waits a delay from now. */
#define REQUEUE_FN                                                                                 \
    "local function requeue(p, t, v, now, unseen)\n"                                               \
    "  local a = string.find(v, '\\n', 1, true)\n"                                                 \
    "  local b = string.find(v, '\\n', a + 1, true)\n"                                             \
    "  local w, o, e = string.sub(v, 1, a - 1), string.sub(v, a + 1, b - 1), string.sub(v, b + "   \
    "1)\n"                                                                                         \
    "  redis.call('LPUSH', p .. ':q:' .. o, e)\n"                                                  \
    "  local hk = p .. ':h:' .. o\n"                                                               \
    "  if redis.call('HGET', hk, 'lease') == t then\n"                                             \
    "    redis.call('HDEL', hk, 'lease')\n"                                                        \
    "    local nx = tonumber(redis.call('HGET', hk, 'next') or '0')\n"                             \
    "    local d = tonumber(redis.call('HGET', hk, 'delay') or '0')\n"                             \
    "    if not unseen and nx < now + d * 1000 then nx = now + d * 1000 end\n"                     \
    "    redis.call('HSET', hk, 'next', string.format('%d', nx))\n"                                \
    "    redis.call('ZADD', p .. ':ready', nx, o)\n"                                               \
    "  end\n"                                                                                      \
    "  redis.call('HDEL', p .. ':lease', t)\n"                                                     \
    "  redis.call('HDEL', p .. ':mark', t)\n"                                                      \
    "  redis.call('ZREM', p .. ':dl', t)\n"                                                        \
    "  redis.call('SREM', p .. ':wl:' .. w, t)\n"                                                  \
    "  redis.call('HINCRBY', hk, 'rv', 1)\n"                                                       \
    "  redis.call('SADD', p .. ':rvh', o)\n"                                                       \
    "  redis.call('INCR', p .. ':rv')\n"                                                           \
    "end\n"

/* KEYS[1]: the shard's tag. ARGV: now_ms, worker ("": the expired leases of anyone),
 * limit, [token to keep]...
 * The leased URLs (of worker: all its leases but those kept, which the worker holds: after
 * a reconnect, the leases of a reply it lost) go back to the front of their queues, their
 * hosts back to ready. limit "unseen": the leases given back were never seen by their
 * worker (no request was made: the host keeps its next time). An expired lease marked
 * for a commit (MARK_LUA) is not given back: once past its commit's bound by the margin
 * again (BY + (BY - T0)), it is returned for the reaper to resolve (RESOLVE_LUA); a
 * worker's own marked leases are given back (its restart applied its commits first).
 * Returns {how many given back, token, worker, its mark's "C T0 BY", ...}. */
static const char REAP_LUA[] = MARK_FN REQUEUE_FN
    "local p, now, who = KEYS[1], tonumber(ARGV[1]), ARGV[2]\n"
    "local toks\n"
    "local keep = {}\n"
    "local unseen = ARGV[3] == 'unseen'\n"
    "for i = 4, #ARGV do keep[ARGV[i]] = true end\n"
    "if who == '' then\n"
    "  toks = redis.call('ZRANGEBYSCORE', p .. ':dl', '-inf', now, 'LIMIT', 0, ARGV[3])\n"
    "else\n"
    "  toks = redis.call('SMEMBERS', p .. ':wl:' .. who)\n"
    "end\n"
    "local out = {0}\n"
    "for _, t in ipairs(toks) do\n"
    "  local v = nil\n"
    "  if not keep[t] then v = redis.call('HGET', p .. ':lease', t) end\n"
    "  local f = nil\n"
    "  if v and who == '' then f = mark(p, t) end\n"
    "  if f then\n"
    "    local by = tonumber(f[3])\n"
    "    if now >= by + (by - tonumber(f[2])) then\n"
    "      out[#out + 1] = t\n"
    "      out[#out + 1] = string.sub(v, 1, string.find(v, '\\n', 1, true) - 1)\n"
    "      out[#out + 1] = f[1] .. ' ' .. f[2] .. ' ' .. f[3]\n"
    "    end\n"
    "  elseif v then\n"
    "    requeue(p, t, v, now, unseen)\n"
    "    out[1] = out[1] + 1\n"
    "  elseif not keep[t] then\n"
    "    redis.call('ZREM', p .. ':dl', t)\n"
    "    if who ~= '' then redis.call('SREM', p .. ':wl:' .. who, t) end\n"
    "  end\n"
    "end\n"
    "return out\n";

/* KEYS[1]: the shard's tag. ARGV: now_ms, [token, worker, its mark's "C T0 BY", the
 * worker's cseq as read after the reap found it] * n. A lease still marked so (not marked
 * again since by a commit that began again): completed as marked when the worker's
 * commit point was made (cseq >= C), else given back (its records were never committed).
 * Returns how many were resolved. */
static const char RESOLVE_LUA[] = LEASE_FN OWNED_FN LEFT_FN COMPLETE_FN MARK_FN REQUEUE_FN
    "local p, now = KEYS[1], tonumber(ARGV[1])\n"
    "local n = 0\n"
    "for i = 2, #ARGV, 4 do\n"
    "  local t, w, c = ARGV[i], ARGV[i + 1], ARGV[i + 2]\n"
    "  local f = mark(p, t)\n"
    "  local v = owned(p, w, t)\n"
    "  if f and v and f[1] .. ' ' .. f[2] .. ' ' .. f[3] == c then\n"
    "    if tonumber(ARGV[i + 3]) >= tonumber(f[1]) then\n"
    "      complete(p, w, t, f[4], f[5], f[6], false, now, 0, 0)\n"
    "    else\n"
    "      requeue(p, t, v, now, false)\n"
    "    end\n"
    "    n = n + 1\n"
    "  end\n"
    "end\n"
    "return n\n";

/* KEYS[1]: T (shard 0's tag). ARGV: the shard count a new crawl takes. Returns the
 * crawl's: fixed when it starts (T:shards). A crawl begun before the shard count was kept
 * (its keys under T, a count of none) is on one shard, T: its count is 1. */
static const char LAYOUT_LUA[] =
    "local p = KEYS[1]\n"
    "local v = redis.call('GET', p .. ':shards')\n"
    "if v then return v end\n"
    "v = ARGV[1]\n"
    "if redis.call('EXISTS', p .. ':tok', p .. ':stats', p .. ':ready', p .. ':dl') > 0 then\n"
    "  v = '1'\n"
    "end\n"
    "redis.call('SET', p .. ':shards', v)\n"
    "return v\n";

/* THE PAGE BUDGET OVER SHARDS (B > 1, --max-pages): KEYS[1]: T. ARGV: max_pages, B, then
 * per shard [the budget it has given back as the caller last read it (S:br), the budget
 * the caller wants granted to it]. T:br is raised to what the caller read; the pool,
 * max_pages less what the shards were granted and have not given back, is granted in
 * shard order up to each want (T:bg). Returns {T:bg of each shard, the pool left}: the
 * shards' acquire and apply raise their S:bq to it. */
static const char BUDGET_LUA[] = "local p, mp, n = KEYS[1], tonumber(ARGV[1]), tonumber(ARGV[2])\n"
                                 "local function load(k)\n"
                                 "  local t, h = {}, redis.call('HGETALL', k)\n"
                                 "  for i = 1, #h, 2 do t[h[i]] = tonumber(h[i + 1]) end\n"
                                 "  return t\n"
                                 "end\n"
                                 "local g, r = load(p .. ':bg'), load(p .. ':br')\n"
                                 "local held = 0\n"
                                 "for b = 0, n - 1 do\n"
                                 "  local k, x = tostring(b), tonumber(ARGV[3 + 2 * b])\n"
                                 "  if x > (r[k] or 0) then\n"
                                 "    r[k] = x\n"
                                 "    redis.call('HSET', p .. ':br', k, x)\n"
                                 "  end\n"
                                 "  held = held + (g[k] or 0) - (r[k] or 0)\n"
                                 "end\n"
                                 "local pool = mp - held\n"
                                 "if pool < 0 then pool = 0 end\n"
                                 "local out = {}\n"
                                 "for b = 0, n - 1 do\n"
                                 "  local k = tostring(b)\n"
                                 "  local x = math.min(tonumber(ARGV[4 + 2 * b]), pool)\n"
                                 "  if x > 0 then\n"
                                 "    g[k] = (g[k] or 0) + x\n"
                                 "    pool = pool - x\n"
                                 "    redis.call('HSET', p .. ':bg', k, g[k])\n"
                                 "  end\n"
                                 "  out[b + 1] = g[k] or 0\n"
                                 "end\n"
                                 "out[n + 1] = pool\n"
                                 "return out\n";

enum {
    SC_ENQUEUE,
    SC_ACQUIRE,
    SC_COMMIT,
    SC_RENEW,
    SC_REAP,
    SC_LAYOUT,
    SC_MARK,
    SC_COMMITW,
    SC_APPLY,
    SC_RESOLVE,
    SC_BUDGET,
    SC_N
};
static const char *const SCRIPT_NAMES[SC_N] = {"enqueue", "acquire", "commit", "renew",
                                               "reap",    "layout",  "mark",   "commit",
                                               "apply",   "resolve", "budget"};
static const char *const SCRIPTS[SC_N] = {ENQUEUE_LUA, ACQUIRE_LUA, COMMIT_LUA, RENEW_LUA,
                                          REAP_LUA,    LAYOUT_LUA,  MARK_LUA,   COMMITW_LUA,
                                          APPLY_LUA,   RESOLVE_LUA, BUDGET_LUA};

/* ---- the worker's side ---- */

/* A URL this worker holds the lease of. */
struct lease {
    char token[24];
    unsigned shard; /* the host's shard: the token is that shard's */
    uint64_t hash;  /* crawl_hash64 of the URL */
    char *origin;
    double host_since; /* when the worker took the host (wall s): the host lease */
    int decided;       /* completed, waiting for the commit */
    int fetched;       /* a request was made for it (crawl_redis_fetching) */
    double next_wall, delay;
};

/* An argument list being built: pieces copied into one growing buffer. */
struct args {
    size_t n, cap;
    size_t *off, *len;
    char *buf;
    size_t used, bcap;
    int oom;
};

/* What this worker knows of a shard of the frontier, from its last acquire there. */
struct shard {
    char tag[48];    /* "simcrawl{fB.HASH}" (B = 1: "simcrawl{f0}"): its keys' prefix and tag */
    double hint;     /* wall s of its first ready host (-1: none waits) */
    double hint_rv;  /* ... of its first ready host whose next URL holds a budget share */
    double asked;    /* monotonic s of the last acquire there (-1: never) */
    int64_t dl;      /* its leases outstanding, every worker's */
    int64_t version; /* URLs ever queued in it */
    int64_t granted; /* --max-pages over shards: the budget T granted it (T:bg), as last read */
    int64_t back;    /* and that it gave back (S:br), as last read */
};

/* A pipelined call's progress (pipeline()). */
enum { PC_SEND, PC_EVAL, PC_DONE };

struct crawl_redis {
    redisContext *ctx; /* NULL: lost, connected again by the next command */
    unsigned n_shards; /* B: fixed when the crawl starts (T:shards) */
    struct shard *shards;
    char url[256];
    char host[200];
    int port, db;
    char worker[CRAWL_REDIS_MAX_NAME + 1];
    double lease_time, host_lease_time;
    long max_pages;      /* the crawl's page budget (0: none) */
    int64_t budget_left; /* as the last acquire found it (-1: no budget) */
    double retry_time;   /* s a lost connection is tried again */
    int64_t cseq;        /* the worker's last commit number (its meta's cseq) */
    int64_t forget;      /* B > 1: the commit applied whose list the next one forgets */
    char wtag[CRAWL_REDIS_MAX_NAME + 16]; /* B > 1: "simcrawl{w:NAME}", the worker's keys */
    uint64_t reconnects;
    int (*sent_hook)(void *userdata, const char *what);
    void *sent_userdata;
    char sha[SC_N][41];
    struct lease *leases;
    size_t n_leases, cap_leases;
    struct args meta, stats, pages; /* waiting for the commit: key value, key delta, blob */
    size_t n_meta, n_stats, n_pages;
    uint64_t calls; /* commands sent (a script call counts one) */
    uint64_t evals; /* of them, EVALs after a NOSCRIPT */
    uint64_t commits;
    int64_t released; /* own leases given back when opened */
    void (*crash)(const char *name);
    char error[512];
};

__attribute__((format(printf, 2, 3))) static void rd_err(struct crawl_redis *r, const char *fmt,
                                                         ...);
static void rd_err(struct crawl_redis *r, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(r->error, sizeof r->error, fmt, ap);
    va_end(ap);
}

static double wall_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

static void args_reset(struct args *a)
{
    a->n = 0;
    a->used = 0;
    a->oom = 0;
}

static void args_release(struct args *a)
{
    free(a->off);
    free(a->len);
    free(a->buf);
    memset(a, 0, sizeof *a);
}

static void args_add(struct args *a, const void *data, size_t len)
{
    if (a->oom)
        return;
    if (a->n == a->cap) {
        size_t cap = a->cap ? a->cap * 2 : 32;
        size_t *o = realloc(a->off, cap * sizeof *o);
        if (o)
            a->off = o;
        size_t *l = realloc(a->len, cap * sizeof *l);
        if (l)
            a->len = l;
        if (!o || !l) {
            a->oom = 1;
            return;
        }
        a->cap = cap;
    }
    if (len + 1 > a->bcap - a->used) {
        size_t cap = a->bcap ? a->bcap : 1024;
        while (len + 1 > cap - a->used)
            cap *= 2;
        char *b = realloc(a->buf, cap);
        if (!b) {
            a->oom = 1;
            return;
        }
        a->buf = b;
        a->bcap = cap;
    }
    if (len)
        memcpy(a->buf + a->used, data, len);
    a->buf[a->used + len] = '\0';
    a->off[a->n] = a->used;
    a->len[a->n++] = len;
    a->used += len + 1;
}

static void args_str(struct args *a, const char *s)
{
    args_add(a, s, strlen(s));
}

__attribute__((format(printf, 2, 3))) static void args_fmt(struct args *a, const char *fmt, ...);
static void args_fmt(struct args *a, const char *fmt, ...)
{
    char tmp[64];
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(tmp, sizeof tmp, fmt, ap);
    va_end(ap);
    args_add(a, tmp, n < 0 ? 0 : (size_t)n < sizeof tmp ? (size_t)n : sizeof tmp - 1);
}

/* Appends every piece of b to a. */
static void args_cat(struct args *a, const struct args *b)
{
    for (size_t i = 0; i < b->n; i++)
        args_add(a, b->buf + b->off[i], b->len[i]);
}

/* Appends the host key TAG:WHAT:ORIGIN (tag: its shard's; what "h", "q" or "s"; origin =
 * o[0..olen)). */
static void args_host_key(struct args *a, const char *tag, const char *what, const char *o,
                          size_t olen)
{
    size_t pl = strlen(tag) + strlen(what) + 2;
    char *k = malloc(pl + olen);
    if (!k) {
        a->oom = 1;
        return;
    }
    snprintf(k, pl + 1, "%s:%s:", tag, what);
    memcpy(k + pl, o, olen);
    args_add(a, k, pl + olen);
    free(k);
}

static void drop(struct crawl_redis *r)
{
    if (r->ctx)
        redisFree(r->ctx);
    r->ctx = NULL;
}

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/*
 * After a lost connection (r->error says how; the connection is dropped): 1 after a pause
 * while r->retry_time is not spent since the first loss (*since, monotonic s; < 0: none
 * yet): 50 ms doubled each time up to 1 s, with jitter, as Redis's own clients back off;
 * 0 when it is spent, r->error then saying how long it was tried.
 */
static int retry_wait(struct crawl_redis *r, double *since, unsigned *waits)
{
    drop(r);
    double now = mono_now();
    if (*since < 0)
        *since = now;
    double left = r->retry_time - (now - *since);
    if (left <= 0) {
        size_t n = strlen(r->error);
        if (r->retry_time > 0 && n < sizeof r->error)
            snprintf(r->error + n, sizeof r->error - n,
                     " (connecting again for %.1f s, --redis-retry %g)", now - *since,
                     r->retry_time);
        return 0;
    }
    double w = RETRY_FIRST_WAIT * (double)(1u << (*waits < 5 ? *waits : 5));
    if (w > RETRY_MAX_WAIT)
        w = RETRY_MAX_WAIT;
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    w *= 0.5 + (double)(ts.tv_nsec % 1000) / 2000.0; /* 50% to 100% of it */
    if (w > left)
        w = left;
    (*waits)++;
    ts.tv_sec = (time_t)w;
    ts.tv_nsec = (long)((w - (double)(time_t)w) * 1e9);
    nanosleep(&ts, NULL);
    return 1;
}

/* Writes what is queued on the connection; 0, or -1 (lost). */
static int flush(struct crawl_redis *r)
{
    int done = 0;
    while (!done)
        if (redisBufferWrite(r->ctx, &done) != REDIS_OK)
            return -1;
    return 0;
}

/* The test hook (crawl_redis_set_sent_hook): 1 when it has the reply lost. */
static int sent(struct crawl_redis *r, const char *what)
{
    return r->sent_hook && r->sent_hook(r->sent_userdata, what);
}

static void lost(struct crawl_redis *r)
{
    rd_err(r, "%s: connection lost: %s", r->url,
           r->ctx && r->ctx->errstr[0] ? r->ctx->errstr : "closed");
}

/*
 * An error reply that says the server is not there rather than that the command was
 * wrong: LOADING (a restarted Redis reading its data), or a proxy's word that it lost the
 * node behind it. nutcracker answers "ERR " and the socket error's text (refused, reset,
 * timed out, a broken pipe), or "ERR unknown" when the node closed the connection without
 * one (errno 0: the node killed mid-command); the command may have run there or not. Both
 * are taken as a lost connection: connected again, the command sent again (each is safe
 * to send twice). The proxy's words are matched whole: Redis's own "ERR unknown command"
 * is a wrong command, not a lost node.
 */
static int is_gone(const redisReply *rep)
{
    static const char *const gone[] = {"ERR unknown",
                                       "ERR Connection refused",
                                       "ERR Connection reset by peer",
                                       "ERR Connection timed out",
                                       "ERR Broken pipe",
                                       "ERR No route to host",
                                       "ERR Network is unreachable",
                                       "ERR Host is unreachable"};
    if (!rep || rep->type != REDIS_REPLY_ERROR)
        return 0;
    if (strncmp(rep->str, "LOADING", 7) == 0)
        return 1;
    for (size_t i = 0; i < sizeof gone / sizeof *gone; i++)
        if (rep->len == strlen(gone[i]) && memcmp(rep->str, gone[i], rep->len) == 0)
            return 1;
    return 0;
}

/* One command on the connection as it is (no retry); NULL when the connection is lost
 * (r->error says so; *oom set when it was memory). A reply of is_gone() counts as lost. what:
 * the command's name for the test hook (NULL: the caller calls it). */
static redisReply *send_read(struct crawl_redis *r, size_t argc, const char **argv,
                             const size_t *lens, const char *what, int *oom)
{
    *oom = 0;
    r->calls++;
    if (redisAppendCommandArgv(r->ctx, (int)argc, argv, lens) != REDIS_OK) {
        *oom = 1;
        rd_err(r, "out of memory");
        return NULL;
    }
    if (flush(r) != 0) {
        lost(r);
        return NULL;
    }
    void *v = NULL;
    if (what && sent(r, what)) {
        rd_err(r, "%s: connection lost: closed", r->url);
        return NULL;
    }
    if (redisGetReply(r->ctx, &v) != REDIS_OK || !v) {
        *oom = r->ctx->err == REDIS_ERR_OOM;
        lost(r);
        return NULL;
    }
    redisReply *rep = v;
    if (is_gone(rep)) {
        rd_err(r, "%s: %.*s", r->url, (int)rep->len, rep->str);
        freeReplyObject(rep);
        return NULL;
    }
    return rep;
}

static int is_noscript(const redisReply *rep)
{
    return rep && rep->type == REDIS_REPLY_ERROR && strncmp(rep->str, "NOSCRIPT", 8) == 0;
}

/* Sets argv[0..1], lens[0..1] to "EVALSHA SHA" of script (evalit: "EVAL BODY"). */
static void script_head(const struct crawl_redis *r, int script, int evalit, const char **argv,
                        size_t *lens)
{
    argv[0] = evalit ? "EVAL" : "EVALSHA";
    lens[0] = strlen(argv[0]);
    argv[1] = evalit ? SCRIPTS[script] : r->sha[script];
    lens[1] = strlen(argv[1]);
}

/*
 * One script call on the connection as it is (no retry): EVALSHA of the SHA-1 computed
 * here, and EVAL of the script when the server does not have it (NOSCRIPT: new, restarted,
 * flushed, or another node behind a proxy), which leaves it there for the next EVALSHA.
 * No SCRIPT LOAD: a proxy (nutcracker) cannot route it and closes the connection.
 * argv, lens: the call's pieces, [0] and [1] filled in here.
 */
static redisReply *send_script(struct crawl_redis *r, int script, size_t argc, const char **argv,
                               size_t *lens, const char *what, int *oom)
{
    script_head(r, script, 0, argv, lens);
    redisReply *rep = send_read(r, argc, argv, lens, NULL, oom);
    if (rep && !is_noscript(rep) && sent(r, what)) { /* the hook once the script ran */
        freeReplyObject(rep);
        rd_err(r, "%s: connection lost: closed", r->url);
        return NULL;
    }
    if (!is_noscript(rep))
        return rep;
    freeReplyObject(rep);
    r->evals++;
    script_head(r, script, 1, argv, lens);
    return send_read(r, argc, argv, lens, what, oom);
}

static enum crawl_code reconnect(struct crawl_redis *r);

/* Runs a command of a's pieces (script >= 0: that script, a made by eval_begin); the reply
 * (caller frees) or NULL with r->error set. A lost connection is made again (reconnect)
 * and the command sent again, for r->retry_time at most: every command sent through here
 * is one whose repetition does nothing twice (the scripts are idempotent, or check the
 * worker's commit number). */
static redisReply *run_cmd(struct crawl_redis *r, const struct args *a, int script)
{
    if (a->oom) {
        rd_err(r, "out of memory");
        return NULL;
    }
    const char **argv = malloc((a->n ? a->n : 1) * sizeof *argv);
    size_t *lens = malloc((a->n ? a->n : 1) * sizeof *lens);
    if (!argv || !lens) {
        free(argv);
        free(lens);
        rd_err(r, "out of memory");
        return NULL;
    }
    for (size_t i = 0; i < a->n; i++) {
        argv[i] = a->buf + a->off[i];
        lens[i] = a->len[i];
    }
    const char *what = script >= 0 ? SCRIPT_NAMES[script] : argv[0];
    double since = -1;
    unsigned waits = 0;
    redisReply *rep = NULL;
    for (;;) {
        if (!r->ctx && reconnect(r) != CRAWL_OK) {
            if (retry_wait(r, &since, &waits))
                continue;
            break;
        }
        int oom;
        rep = script >= 0 ? send_script(r, script, a->n, argv, lens, what, &oom)
                          : send_read(r, a->n, argv, lens, what, &oom);
        if (rep || oom || !retry_wait(r, &since, &waits))
            break;
    }
    free(argv);
    free(lens);
    if (!rep)
        return NULL;
    if (rep->type == REDIS_REPLY_ERROR) {
        rd_err(r, "%s: %.*s", r->url, (int)rep->len, rep->str);
        freeReplyObject(rep);
        return NULL;
    }
    return rep;
}

static redisReply *run_args(struct crawl_redis *r, const struct args *a)
{
    return run_cmd(r, a, -1);
}

/* run_args for a command whose answer says nothing (a's pieces released): CRAWL_OK, or
 * CRAWL_EIO (r->error says why). */
static enum crawl_code run_done(struct crawl_redis *r, struct args *a)
{
    redisReply *rep = run_args(r, a);
    args_release(a);
    if (!rep)
        return CRAWL_EIO;
    freeReplyObject(rep);
    return CRAWL_OK;
}

/* The SHA-1 of every script, as EVALSHA names it (lower-case hex): 0, or -1. */
static int script_shas(struct crawl_redis *r)
{
    for (int i = 0; i < SC_N; i++) {
        unsigned char md[EVP_MAX_MD_SIZE];
        unsigned int len = 0;
        if (EVP_Digest(SCRIPTS[i], strlen(SCRIPTS[i]), md, &len, EVP_sha1(), NULL) != 1 ||
            len != 20)
            return -1;
        for (unsigned k = 0; k < 20; k++)
            snprintf(r->sha[i] + 2 * k, 3, "%02x", md[k]);
    }
    return 0;
}

/* The script with a's pieces as its arguments (a made by eval_begin). */
static redisReply *eval(struct crawl_redis *r, int script, struct args *a)
{
    return run_cmd(r, a, script);
}

/* A script call's first pieces: the command and the script (filled in when sent), one
 * key: the tag its keys are named from (T, or a shard's). */
static void eval_begin(struct args *a, const char *tag)
{
    args_reset(a);
    args_str(a, "EVALSHA");
    args_str(a, "");
    args_str(a, "1");
    args_str(a, tag);
}

/* The shard of a host: XXH3 of its origin modulo the crawl's shard count. */
static unsigned shard_of(const struct crawl_redis *r, const char *origin, size_t len)
{
    return r->n_shards > 1 ? (unsigned)(XXH3_64bits(origin, len) % r->n_shards) : 0;
}

/* One call of a pipeline (pipeline()): its pieces, made by eval_begin with its tag. */
struct pcall {
    struct args a;
    unsigned char state; /* PC_SEND, PC_EVAL (NOSCRIPT: the script's text next), PC_DONE */
};

typedef int (*reply_fn)(void *userdata, size_t i, const redisReply *rep);

static void pcalls_free(struct pcall *c, size_t n)
{
    for (size_t i = 0; c && i < n; i++)
        args_release(&c[i].a);
    free(c);
}

/* Writes the calls not answered yet (EVALSHA, or EVAL for those answered NOSCRIPT) on the
 * connection: how many, or -1 (out of memory: r->error says so, the connection dropped). */
static long pipeline_write(struct crawl_redis *r, int script, struct pcall *c, size_t n)
{
    size_t most = 0;
    for (size_t i = 0; i < n; i++)
        most = c[i].a.n > most ? c[i].a.n : most;
    const char **argv = malloc((most ? most : 1) * sizeof *argv);
    size_t *lens = malloc((most ? most : 1) * sizeof *lens);
    long sent_n = 0;
    for (size_t i = 0; argv && lens && sent_n >= 0 && i < n; i++) {
        if (c[i].state == PC_DONE)
            continue;
        for (size_t k = 0; k < c[i].a.n && !c[i].a.oom; k++) {
            argv[k] = c[i].a.buf + c[i].a.off[k];
            lens[k] = c[i].a.len[k];
        }
        script_head(r, script, c[i].state == PC_EVAL, argv, lens);
        if (c[i].a.oom || redisAppendCommandArgv(r->ctx, (int)c[i].a.n, argv, lens) != REDIS_OK)
            sent_n = -1;
        else
            sent_n++;
        r->evals += c[i].state == PC_EVAL;
    }
    if (!argv || !lens)
        sent_n = -1;
    free(argv);
    free(lens);
    if (sent_n < 0) {
        rd_err(r, "out of memory");
        drop(r); /* commands half queued */
        return -1;
    }
    r->calls += (uint64_t)sent_n;
    return sent_n;
}

/*
 * One round of the calls not answered yet: all written, then every answer read (one
 * round trip whatever their number). 1 when the connection is lost (a read failed, the
 * test hook, a proxy's node gone: r->error says how). Answers read whole are handed to
 * fn(userdata, i, reply) at once and their calls are done (the leases they carry are then
 * the worker's, kept by a reconnect); after a failed read or the hook none is (the
 * calls go again after the reconnect, each safe to send twice: what a lost acquire leased
 * is given back by the reconnect). A call answered NOSCRIPT goes again as EVAL. 0
 * otherwise, *rc saying how it went (an error answer, fn failing).
 */
static int pipeline_round(struct crawl_redis *r, int script, struct pcall *c, size_t n,
                          const char *what, reply_fn fn, void *userdata, enum crawl_code *rc)
{
    *rc = CRAWL_OK;
    long sent_n = pipeline_write(r, script, c, n);
    if (sent_n < 0) {
        *rc = CRAWL_ENOMEM;
        return 0;
    }
    if (flush(r) != 0) {
        lost(r);
        return 1;
    }
    redisReply **reps = calloc(n ? n : 1, sizeof *reps);
    if (!reps) {
        rd_err(r, "out of memory");
        drop(r); /* answers unread */
        *rc = CRAWL_ENOMEM;
        return 0;
    }
    int gone = 0, noscript = 0, failed = 0;
    for (size_t i = 0; i < n && !failed; i++) { /* every answer is read, whatever happened */
        if (c[i].state == PC_DONE)
            continue;
        if (redisGetReply(r->ctx, (void **)&reps[i]) != REDIS_OK || !reps[i]) {
            reps[i] = NULL;
            failed = 1;
        } else if (is_gone(reps[i])) {
            if (!gone)
                rd_err(r, "%s: %.*s", r->url, (int)reps[i]->len, reps[i]->str);
            gone = 1;
        } else {
            noscript |= is_noscript(reps[i]);
        }
    }
    /* the test hook, once the scripts ran: their answers lost */
    if (!failed && !gone && !noscript && sent_n > 0 && sent(r, what)) {
        rd_err(r, "%s: connection lost: closed", r->url);
        failed = 2;
    }
    if (failed == 1)
        lost(r);
    for (size_t i = 0; i < n; i++) {
        redisReply *rep = reps[i];
        if (!rep)
            continue;
        if (failed || is_gone(rep)) {
            /* sent again */
        } else if (is_noscript(rep)) {
            c[i].state = PC_EVAL;
        } else if (rep->type == REDIS_REPLY_ERROR) {
            c[i].state = PC_DONE;
            if (*rc == CRAWL_OK)
                rd_err(r, "%s: %.*s", r->url, (int)rep->len, rep->str);
            *rc = CRAWL_EIO;
        } else {
            c[i].state = PC_DONE;
            int e = fn ? fn(userdata, i, rep) : 0;
            if (e && *rc == CRAWL_OK)
                *rc = e < 0 ? CRAWL_ENOMEM : CRAWL_EFORMAT;
        }
        freeReplyObject(rep);
    }
    free(reps);
    return failed || gone;
}

/*
 * Runs the calls c[0..n) of script, pipelined (pipeline_round), until every one is
 * answered: a lost connection is made again and the calls not answered sent again for
 * r->retry_time at most (retry 0: not at all, CRAWL_EIO at once). fn(userdata, i, reply)
 * for each answer.
 */
static enum crawl_code pipeline(struct crawl_redis *r, int script, struct pcall *c, size_t n,
                                const char *what, reply_fn fn, void *userdata, int retry)
{
    double since = -1;
    unsigned waits = 0;
    for (int evals = 0;;) {
        if (!r->ctx && (!retry || reconnect(r) != CRAWL_OK)) {
            if (retry && retry_wait(r, &since, &waits))
                continue;
            return CRAWL_EIO;
        }
        enum crawl_code rc;
        if (pipeline_round(r, script, c, n, what, fn, userdata, &rc)) {
            if (retry && retry_wait(r, &since, &waits))
                continue;
            drop(r);
            return CRAWL_EIO;
        }
        size_t left = 0;
        for (size_t i = 0; i < n; i++)
            left += c[i].state != PC_DONE;
        if (rc != CRAWL_OK || left == 0)
            return rc;
        /* answered NOSCRIPT (a node without the script): sent again as EVAL, which leaves
         * the script there; an EVAL answered NOSCRIPT is the server's error */
        if (evals++) {
            rd_err(r, "%s: the %s script is refused (NOSCRIPT after EVAL)", r->url,
                   SCRIPT_NAMES[script]);
            return CRAWL_EIO;
        }
    }
}

/* Calls of script, one per shard (c[b] to shard b; *out: caller frees with pcalls_free),
 * each begun with the shard's tag. */
static struct pcall *shard_calls(struct crawl_redis *r)
{
    struct pcall *c = calloc(r->n_shards, sizeof *c);
    if (!c) {
        rd_err(r, "out of memory");
        return NULL;
    }
    for (unsigned b = 0; b < r->n_shards; b++)
        eval_begin(&c[b].a, r->shards[b].tag);
    return c;
}

/* ---- open, close ---- */

static int name_ok(const char *s)
{
    size_t n = strlen(s);
    if (n == 0 || n > CRAWL_REDIS_MAX_NAME)
        return 0;
    for (size_t i = 0; i < n; i++) {
        char ch = s[i];
        if (!((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9') ||
              ch == '-' || ch == '_' || ch == '.'))
            return 0;
    }
    return 1;
}

enum crawl_code crawl_redis_parse_url(const char *url, char *host, size_t host_cap, int *port,
                                      int *db)
{
    const char *s = url;
    if (strncmp(s, "redis://", 8) != 0)
        return CRAWL_EURL;
    s += 8;
    const char *end = s + strcspn(s, ":/");
    if (end == s || (size_t)(end - s) >= host_cap)
        return CRAWL_EURL;
    memcpy(host, s, (size_t)(end - s));
    host[end - s] = '\0';
    *port = 6379;
    *db = 0;
    s = end;
    if (*s == ':') {
        char *e;
        errno = 0;
        long p = strtol(s + 1, &e, 10);
        if (e == s + 1 || errno || p < 1 || p > 65535)
            return CRAWL_EURL;
        *port = (int)p;
        s = e;
    }
    if (*s == '/' && s[1]) {
        char *e;
        errno = 0;
        long d = strtol(s + 1, &e, 10);
        if (e == s + 1 || *e || errno || d < 0 || d > 1000000)
            return CRAWL_EURL;
        *db = (int)d;
        s = e;
    } else if (*s == '/') {
        s++;
    }
    return *s ? CRAWL_EURL : CRAWL_OK;
}

/* Connects to r->host:port (no retry) and selects the database. */
static enum crawl_code connect_once(struct crawl_redis *r)
{
    struct timeval tv = {5, 0};
    drop(r);
    r->ctx = redisConnectWithTimeout(r->host, r->port, tv);
    if (!r->ctx || r->ctx->err) {
        rd_err(r, "cannot connect to %s: %s", r->url, r->ctx ? r->ctx->errstr : "out of memory");
        drop(r);
        return CRAWL_EIO;
    }
    struct timeval cmd_tv = {30, 0}; /* a command with no answer for this long: Redis is gone */
    redisSetTimeout(r->ctx, cmd_tv);
    if (r->db) {
        r->calls++;
        redisReply *rep = redisCommand(r->ctx, "SELECT %d", r->db);
        int ok = rep && rep->type == REDIS_REPLY_STATUS;
        if (!ok)
            rd_err(r, "%s: cannot select database %d: %s", r->url, r->db,
                   rep && rep->type == REDIS_REPLY_ERROR ? rep->str : r->ctx->errstr);
        if (rep)
            freeReplyObject(rep);
        if (!ok) {
            drop(r);
            return CRAWL_EIO;
        }
    }
    return CRAWL_OK;
}

/*
 * Connects again after a loss, then gives back the leases Redis holds for this worker
 * that the worker does not know of: those of a reply the connection took (an acquire, or
 * a commit's kept hosts). The worker's own leases stay its own. No retry (run_args's).
 */
static enum crawl_code reconnect(struct crawl_redis *r)
{
    if (connect_once(r) != CRAWL_OK)
        return CRAWL_EIO;
    if (r->n_shards == 0) { /* still opening: no lease yet */
        r->reconnects++;
        return CRAWL_OK;
    }
    struct pcall *c = shard_calls(r);
    if (!c) {
        drop(r);
        return CRAWL_ENOMEM;
    }
    char now[24];
    snprintf(now, sizeof now, "%lld", (long long)(wall_now() * 1000));
    for (unsigned b = 0; b < r->n_shards; b++) {
        args_str(&c[b].a, now);
        args_str(&c[b].a, r->worker);
        args_str(&c[b].a, "unseen");
    }
    for (size_t i = 0; i < r->n_leases; i++)
        args_str(&c[r->leases[i].shard].a, r->leases[i].token);
    enum crawl_code rc = pipeline(r, SC_REAP, c, r->n_shards, "reconcile", NULL, NULL, 0);
    pcalls_free(c, r->n_shards);
    if (rc != CRAWL_OK) {
        drop(r);
        return rc;
    }
    r->reconnects++;
    return CRAWL_OK;
}

/* A crawl of simcrawl 0.4.0 and before (keys "simcrawl:stats", "simcrawl:ready", without
 * the tag T) in this database is not resumed under the new keys, which would crawl it
 * again from the seeds beside the old one: CRAWL_EFORMAT, said. CRAWL_OK when there is none. */
static enum crawl_code older_layout(struct crawl_redis *r)
{
    static const char *const old_keys[] = {P ":stats", P ":ready"};
    for (size_t i = 0; i < sizeof old_keys / sizeof old_keys[0]; i++) {
        struct args a = {0};
        args_str(&a, "EXISTS");
        args_str(&a, old_keys[i]);
        redisReply *rep = run_args(r, &a);
        args_release(&a);
        if (!rep)
            return CRAWL_EIO;
        int there = rep->type == REDIS_REPLY_INTEGER && rep->integer > 0;
        freeReplyObject(rep);
        if (there) {
            rd_err(r,
                   "%s holds a crawl of an older simcrawl (key %s): this one keeps its "
                   "keys under %s and would start that crawl again; finish it with the "
                   "simcrawl that began it, or delete its keys (DEL, FLUSHDB) to start anew",
                   r->url, old_keys[i], T);
            return CRAWL_EFORMAT;
        }
    }
    return CRAWL_OK;
}

/* The crawl's shard count (T:shards: fixed when the crawl starts, with the count this
 * worker was given or the default) and the shards' tags. A worker given another count
 * than the crawl's refuses: CRAWL_EINVAL, both named. */
static enum crawl_code layout(struct crawl_redis *r, unsigned want)
{
    struct args a = {0};
    eval_begin(&a, T);
    args_fmt(&a, "%u", want ? want : CRAWL_REDIS_SHARDS);
    redisReply *rep = eval(r, SC_LAYOUT, &a);
    args_release(&a);
    if (!rep)
        return CRAWL_EIO;
    char *end = NULL;
    unsigned long b = rep->type == REDIS_REPLY_STRING ? strtoul(rep->str, &end, 10) : 0;
    int ok = end && end != rep->str && !*end && b >= 1 && b <= CRAWL_REDIS_MAX_SHARDS;
    if (!ok)
        rd_err(r, "%s: the crawl's shard count (%s:shards) is not a number of 1 to %d: %.40s",
               r->url, T, CRAWL_REDIS_MAX_SHARDS, rep->type == REDIS_REPLY_STRING ? rep->str : "");
    freeReplyObject(rep);
    if (!ok)
        return CRAWL_EFORMAT;
    if (want && b != want) {
        rd_err(r,
               "%s holds a crawl whose frontier is spread over %lu shard%s (fixed when it "
               "started); this worker was started with %u: start it with %lu, or none",
               r->url, b, b == 1 ? "" : "s", want, b);
        return CRAWL_EINVAL;
    }
    if (!(r->shards = calloc(b, sizeof *r->shards))) {
        rd_err(r, "out of memory");
        return CRAWL_ENOMEM;
    }
    r->n_shards = (unsigned)b;
    for (unsigned i = 0; i < r->n_shards; i++) {
        if (r->n_shards == 1) {
            snprintf(r->shards[i].tag, sizeof r->shards[i].tag, "%s", T);
        } else {
            /* "f3" and "f4" differ in a last byte: a proxy's FNV-1a (nutcracker's
             * fnv1a_64, low 32 bits on the ketama ring) puts such tags side by side, on
             * one node; a hash of the name after it spreads them */
            char name[16];
            int len = snprintf(name, sizeof name, "f%u", i);
            snprintf(r->shards[i].tag, sizeof r->shards[i].tag, P "{%s.%08x}", name,
                     (unsigned)(XXH3_64bits(name, (size_t)len) & 0xffffffffu));
        }
        r->shards[i].hint = -1;
        r->shards[i].hint_rv = -1;
        r->shards[i].asked = -1;
    }
    return CRAWL_OK;
}

/* Split "SHARD TOKEN ..." (a commit point's list) into the APPLY calls c[shard]. */
static int list_to_calls(struct crawl_redis *r, const char *list, size_t len, struct pcall *c)
{
    char *l = strndup(list, len), *save = NULL;
    if (!l)
        return -1;
    int bad = 0;
    for (char *b = strtok_r(l, " ", &save); b && !bad; b = strtok_r(NULL, " ", &save)) {
        char *t = strtok_r(NULL, " ", &save), *end = NULL;
        unsigned long sh = strtoul(b, &end, 10);
        if (!t || *end || sh >= r->n_shards) {
            bad = 1;
            break;
        }
        args_str(&c[sh].a, t);
        args_str(&c[sh].a, "0");
        c[sh].state = PC_SEND;
    }
    free(l);
    return bad;
}

/*
 * B > 1, at the start: the lists of the commits whose point was made but that were not
 * all applied (W:apply: a kill between the commit point and the apply) applied now, then
 * forgotten; before the release, which gives the worker's other leases back.
 */
static enum crawl_code apply_left(struct crawl_redis *r)
{
    char key[CRAWL_REDIS_MAX_NAME + 32];
    snprintf(key, sizeof key, "%s:apply", r->wtag);
    struct args a = {0};
    args_str(&a, "HGETALL");
    args_str(&a, key);
    redisReply *rep = run_args(r, &a);
    args_release(&a);
    if (!rep)
        return CRAWL_EIO;
    enum crawl_code rc = CRAWL_OK;
    struct pcall *c = rep->type == REDIS_REPLY_ARRAY && rep->elements ? shard_calls(r) : NULL;
    if (c) {
        for (unsigned b = 0; b < r->n_shards; b++) {
            args_str(&c[b].a, r->worker);
            args_fmt(&c[b].a, "%lld", (long long)(wall_now() * 1000));
            args_fmt(&c[b].a, "%lld", (long long)(r->lease_time * 1000));
            args_str(&c[b].a, "0");
            args_fmt(&c[b].a, "%lld", (long long)r->cseq);
            c[b].state = PC_DONE;
        }
        args_str(&a, "HDEL");
        args_str(&a, key);
        for (size_t i = 0; rc == CRAWL_OK && i + 1 < rep->elements; i += 2) {
            if (list_to_calls(r, rep->element[i + 1]->str ? rep->element[i + 1]->str : "",
                              rep->element[i + 1]->len, c) != 0) {
                rd_err(r, "%s: a commit's list of a strange shape in %s", r->url, key);
                rc = CRAWL_EFORMAT;
            }
            args_add(&a, rep->element[i]->str ? rep->element[i]->str : "", rep->element[i]->len);
        }
        if (rc == CRAWL_OK)
            rc = pipeline(r, SC_APPLY, c, r->n_shards, "apply", NULL, NULL, 1);
        redisReply *del = rc == CRAWL_OK ? run_args(r, &a) : NULL;
        if (rc == CRAWL_OK && !del)
            rc = CRAWL_EIO;
        if (del)
            freeReplyObject(del);
        args_release(&a);
        pcalls_free(c, r->n_shards);
    } else if (rep->type == REDIS_REPLY_ARRAY && rep->elements) {
        rc = CRAWL_ENOMEM;
    }
    freeReplyObject(rep);
    return rc;
}

/* B > 1: the worker's tag, and its name in T:workers (whose counters are summed). */
static enum crawl_code worker_join(struct crawl_redis *r)
{
    snprintf(r->wtag, sizeof r->wtag, P "{w:%s}", r->worker);
    struct args a = {0};
    args_str(&a, "SADD");
    args_str(&a, T ":workers");
    args_str(&a, r->worker);
    return run_done(r, &a);
}

enum crawl_code crawl_redis_open(const struct crawl_redis_opts *opts, struct crawl_redis **out,
                                 char *err, size_t errlen)
{
    *out = NULL;
    struct crawl_redis *r = calloc(1, sizeof *r);
    if (!r)
        return CRAWL_ENOMEM;
    enum crawl_code rc = CRAWL_EINVAL;
    snprintf(r->url, sizeof r->url, "%s", opts->url ? opts->url : "");
    if (!opts->url ||
        crawl_redis_parse_url(opts->url, r->host, sizeof r->host, &r->port, &r->db) != CRAWL_OK) {
        rd_err(r, "bad Redis URL '%.200s': expected redis://HOST:PORT[/DB]",
               opts->url ? opts->url : "");
        goto fail;
    }
    if (!opts->worker || !name_ok(opts->worker)) {
        rd_err(r, "bad worker name '%.80s': 1 to %d letters, digits, '-', '_' or '.'",
               opts->worker ? opts->worker : "", CRAWL_REDIS_MAX_NAME);
        goto fail;
    }
    snprintf(r->worker, sizeof r->worker, "%s", opts->worker);
    r->lease_time = opts->lease_time > 0 ? opts->lease_time : CRAWL_REDIS_LEASE_TIME;
    r->budget_left = -1;
    r->host_lease_time = opts->host_lease_time > 0   ? opts->host_lease_time
                         : opts->host_lease_time < 0 ? 0
                                                     : CRAWL_REDIS_HOST_LEASE_TIME;
    r->retry_time = opts->retry_time > 0   ? opts->retry_time
                    : opts->retry_time < 0 ? 0
                                           : CRAWL_REDIS_RETRY_TIME;
    rc = CRAWL_ENOMEM;
    if (script_shas(r) != 0) {
        rd_err(r, "cannot compute the scripts' SHA-1");
        goto fail;
    }
    rc = CRAWL_EIO;
    if (connect_once(r) != CRAWL_OK) /* not there at the start: said at once */
        goto fail;
    rc = older_layout(r);
    if (rc == CRAWL_OK && opts->shards > CRAWL_REDIS_MAX_SHARDS) {
        rd_err(r, "bad shard count %u: 1 to %d", opts->shards, CRAWL_REDIS_MAX_SHARDS);
        rc = CRAWL_EINVAL;
    }
    if (rc == CRAWL_OK)
        rc = layout(r, opts->shards);
    if (rc == CRAWL_OK && r->n_shards > 1)
        rc = worker_join(r);
    if (rc != CRAWL_OK)
        goto fail;
    rc = CRAWL_EIO;
    /* the last commit this worker made (a commit sent again after a lost reply is known) */
    int found = 0;
    if (crawl_redis_meta_int(r, "cseq", &r->cseq, &found) != CRAWL_OK)
        goto fail;
    /* over shards: the commits made and not applied, applied before the release */
    if (r->n_shards > 1 && (rc = apply_left(r)) != CRAWL_OK)
        goto fail;
    rc = CRAWL_EIO;
    /* this worker's leases of an earlier run come back at once */
    size_t n = 0;
    if (crawl_redis_release(r, &n) != CRAWL_OK)
        goto fail;
    r->released = (int64_t)n;
    *out = r;
    return CRAWL_OK;
fail:
    if (err && errlen)
        snprintf(err, errlen, "%s", r->error);
    crawl_redis_free(r);
    return rc;
}

void crawl_redis_free(struct crawl_redis *r)
{
    if (!r)
        return;
    if (r->ctx)
        redisFree(r->ctx);
    for (size_t i = 0; i < r->n_leases; i++)
        free(r->leases[i].origin);
    free(r->leases);
    free(r->shards);
    args_release(&r->meta);
    args_release(&r->stats);
    args_release(&r->pages);
    free(r);
}

const char *crawl_redis_error(const struct crawl_redis *r)
{
    return r->error;
}

int64_t crawl_redis_released(const struct crawl_redis *r)
{
    return r->released;
}

double crawl_redis_lease_time(const struct crawl_redis *r)
{
    return r->lease_time;
}

uint64_t crawl_redis_calls(const struct crawl_redis *r)
{
    return r->calls;
}

uint64_t crawl_redis_reconnects(const struct crawl_redis *r)
{
    return r->reconnects;
}

uint64_t crawl_redis_evals(const struct crawl_redis *r)
{
    return r->evals;
}

void crawl_redis_set_sent_hook(struct crawl_redis *r, int (*fn)(void *userdata, const char *what),
                               void *userdata)
{
    r->sent_hook = fn;
    r->sent_userdata = userdata;
}

void crawl_redis_set_crash_hook(struct crawl_redis *r, void (*fn)(const char *name))
{
    r->crash = fn;
}

static void crash(struct crawl_redis *r, const char *name)
{
    if (r->crash)
        r->crash(name);
}

/* ---- the worker's meta ---- */

/* The worker's key WHAT ("w": its meta, "wp": its page records, "stats": the crawl's
 * counters it adds to): on a crawl of one shard under T with its name (the layout from
 * before the shards), else under its own tag W, where the commit point writes them. */
static void worker_key(const struct crawl_redis *r, char *buf, size_t cap, const char *what)
{
    if (r->n_shards > 1)
        snprintf(buf, cap, "%s:%s", r->wtag, what);
    else if (strcmp(what, "stats") == 0)
        snprintf(buf, cap, T ":stats");
    else
        snprintf(buf, cap, T ":%s:%s", what, r->worker);
}

static redisReply *meta_get(struct crawl_redis *r, const char *key)
{
    struct args a = {0};
    char k[CRAWL_REDIS_MAX_NAME + 32];
    worker_key(r, k, sizeof k, "w");
    args_str(&a, "HGET");
    args_str(&a, k);
    args_str(&a, key);
    redisReply *rep = run_args(r, &a);
    args_release(&a);
    return rep;
}

enum crawl_code crawl_redis_meta_int(struct crawl_redis *r, const char *key, int64_t *v, int *found)
{
    *found = 0;
    redisReply *rep = meta_get(r, key);
    if (!rep)
        return CRAWL_EIO;
    if (rep->type == REDIS_REPLY_STRING) {
        *v = strtoll(rep->str, NULL, 10);
        *found = 1;
    }
    freeReplyObject(rep);
    return CRAWL_OK;
}

enum crawl_code crawl_redis_meta_text(struct crawl_redis *r, const char *key, char **v)
{
    *v = NULL;
    redisReply *rep = meta_get(r, key);
    if (!rep)
        return CRAWL_EIO;
    enum crawl_code rc = CRAWL_OK;
    if (rep->type == REDIS_REPLY_STRING && !(*v = strndup(rep->str, rep->len)))
        rc = CRAWL_ENOMEM;
    freeReplyObject(rep);
    return rc;
}

enum crawl_code crawl_redis_set_meta_text(struct crawl_redis *r, const char *key, const char *v)
{
    args_str(&r->meta, key);
    args_str(&r->meta, v);
    r->n_meta++;
    return r->meta.oom ? CRAWL_ENOMEM : CRAWL_OK;
}

enum crawl_code crawl_redis_set_meta_int(struct crawl_redis *r, const char *key, int64_t v)
{
    char t[24];
    snprintf(t, sizeof t, "%lld", (long long)v);
    return crawl_redis_set_meta_text(r, key, t);
}

enum crawl_code crawl_redis_stats_add(struct crawl_redis *r, const char *key, int64_t delta)
{
    if (delta == 0)
        return CRAWL_OK;
    args_str(&r->stats, key);
    args_fmt(&r->stats, "%lld", (long long)delta);
    r->n_stats++;
    return r->stats.oom ? CRAWL_ENOMEM : CRAWL_OK;
}

/* HGET of hash's field, as a number added to *v (none: 0). */
static enum crawl_code hget_add(struct crawl_redis *r, const char *hash, const char *field,
                                int64_t *v)
{
    struct args a = {0};
    args_str(&a, "HGET");
    args_str(&a, hash);
    args_str(&a, field);
    redisReply *rep = run_args(r, &a);
    args_release(&a);
    if (!rep)
        return CRAWL_EIO;
    if (rep->type == REDIS_REPLY_STRING)
        *v += strtoll(rep->str, NULL, 10);
    freeReplyObject(rep);
    return CRAWL_OK;
}

enum crawl_code crawl_redis_stats_get(struct crawl_redis *r, const char *key, int64_t *v)
{
    *v = 0;
    if (r->n_shards == 1)
        return hget_add(r, T ":stats", key, v);
    /* over shards every worker's commit point adds to its own: summed (T:workers) */
    struct args a = {0};
    args_str(&a, "SMEMBERS");
    args_str(&a, T ":workers");
    redisReply *rep = run_args(r, &a);
    args_release(&a);
    if (!rep)
        return CRAWL_EIO;
    enum crawl_code rc = CRAWL_OK;
    for (size_t i = 0; rc == CRAWL_OK && rep->type == REDIS_REPLY_ARRAY && i < rep->elements; i++) {
        char k[CRAWL_REDIS_MAX_NAME + 32];
        snprintf(k, sizeof k, P "{w:%.*s}:stats", (int)rep->element[i]->len,
                 rep->element[i]->str ? rep->element[i]->str : "");
        rc = hget_add(r, k, key, v);
    }
    freeReplyObject(rep);
    return rc;
}

enum crawl_code crawl_redis_page_add(struct crawl_redis *r, const void *data, size_t len)
{
    args_add(&r->pages, data, len);
    r->n_pages++;
    return r->pages.oom ? CRAWL_ENOMEM : CRAWL_OK;
}

enum crawl_code crawl_redis_foreach_page(struct crawl_redis *r,
                                         int (*fn)(void *userdata, const void *data, size_t len),
                                         void *userdata)
{
    char key[CRAWL_REDIS_MAX_NAME + 32];
    worker_key(r, key, sizeof key, "wp");
    for (long start = 0;; start += 1000) {
        struct args a = {0};
        args_str(&a, "LRANGE");
        args_str(&a, key);
        args_fmt(&a, "%ld", start);
        args_fmt(&a, "%ld", start + 999);
        redisReply *rep = run_args(r, &a);
        args_release(&a);
        if (!rep || rep->type != REDIS_REPLY_ARRAY) {
            if (rep) /* else r->error says why */
                rd_err(r, "%s: cannot read the page records: not a list", r->url);
            if (rep)
                freeReplyObject(rep);
            return CRAWL_EIO;
        }
        size_t n = rep->elements;
        for (size_t i = 0; i < n; i++) {
            int e = fn(userdata, rep->element[i]->str, rep->element[i]->len);
            if (e != 0) {
                rd_err(r, "%s: a page record cannot be replayed", r->url);
                freeReplyObject(rep);
                return e < 0 ? CRAWL_ENOMEM : CRAWL_EFORMAT;
            }
        }
        freeReplyObject(rep);
        if (n < 1000)
            return CRAWL_OK;
    }
}

size_t crawl_redis_pending(const struct crawl_redis *r)
{
    size_t n = r->n_meta + r->n_stats + r->n_pages;
    for (size_t i = 0; i < r->n_leases; i++)
        n += (size_t)r->leases[i].decided;
    return n;
}

/* ---- the frontier ---- */

/* The enqueue script's call for one URL into a (reset first), to its host's shard. */
static void enqueue_args(struct crawl_redis *r, struct args *a, const char *url, size_t origin_len,
                         unsigned depth, unsigned hops, const char *referrer)
{
    uint64_t h = crawl_hash64(url, strlen(url));
    unsigned char hb[8];
    for (int i = 0; i < 8; i++)
        hb[i] = (unsigned char)(h >> (56 - 8 * i));
    eval_begin(a, r->shards[shard_of(r, url, origin_len)].tag);
    args_add(a, hb, 8);
    char head[48];
    snprintf(head, sizeof head, "%u %u\n", depth, hops);
    size_t rl = referrer ? strlen(referrer) : 0, ul = strlen(url), hl = strlen(head);
    char *entry = malloc(hl + rl + 1 + ul + 1);
    if (!entry) {
        a->oom = 1;
        return;
    }
    memcpy(entry, head, hl);
    if (rl)
        memcpy(entry + hl, referrer, rl);
    entry[hl + rl] = '\n';
    memcpy(entry + hl + rl + 1, url, ul);
    args_add(a, entry, hl + rl + 1 + ul);
    free(entry);
    args_add(a, url, origin_len);
}

static int enqueue_reply(void *userdata, size_t i, const redisReply *rep)
{
    struct crawl_redis_link *links = userdata;
    links[i].added = rep->type == REDIS_REPLY_INTEGER && rep->integer == 1;
    return 0;
}

enum crawl_code crawl_redis_enqueue_many(struct crawl_redis *r, struct crawl_redis_link *links,
                                         size_t n, unsigned depth, const char *referrer)
{
    for (size_t i = 0; i < n; i++)
        links[i].added = 0;
    struct pcall *c = calloc(n ? n : 1, sizeof *c);
    if (!c) {
        rd_err(r, "out of memory");
        return CRAWL_ENOMEM;
    }
    /* pipelined: the scripts sent, then their answers read (one round trip). Those not
     * answered are sent again after a lost connection: a URL queued by the lost round is
     * seen, not queued twice (its added stays 0) */
    for (size_t i = 0; i < n; i++)
        enqueue_args(r, &c[i].a, links[i].url, links[i].origin_len, depth, links[i].hops, referrer);
    enum crawl_code rc = pipeline(r, SC_ENQUEUE, c, n, "enqueue", enqueue_reply, links, 1);
    pcalls_free(c, n);
    return rc;
}

enum crawl_code crawl_redis_enqueue(struct crawl_redis *r, const char *url, size_t origin_len,
                                    unsigned depth, unsigned hops, const char *referrer, int *added)
{
    struct crawl_redis_link l = {.url = url, .origin_len = origin_len, .hops = hops};
    enum crawl_code rc = crawl_redis_enqueue_many(r, &l, 1, depth, referrer);
    *added = l.added;
    return rc;
}

static const char *rep_str(const redisReply *e)
{
    return e && e->type == REDIS_REPLY_STRING ? e->str : "";
}

/* One lease from a script's answer {token, origin, entry, delay, rs, rb, rt}: kept in
 * r->leases and handed to fn. host_since: when the worker took the host. */
static enum crawl_code take_lease(struct crawl_redis *r, const redisReply *l, unsigned shard,
                                  double host_since,
                                  int (*fn)(void *userdata, const struct crawl_redis_lease *l),
                                  void *userdata)
{
    if (l->type != REDIS_REPLY_ARRAY || l->elements != 7) {
        rd_err(r, "%s: a lease answer of a strange shape", r->url);
        return CRAWL_EFORMAT;
    }
    const char *tok = rep_str(l->element[0]), *origin = rep_str(l->element[1]);
    const char *entry = rep_str(l->element[2]);
    /* entry: "DEPTH HOPS\nREFERRER\nURL" */
    unsigned depth = 0, hops = 0;
    const char *nl1 = strchr(entry, '\n');
    const char *nl2 = nl1 ? strchr(nl1 + 1, '\n') : NULL;
    if (!nl2 || sscanf(entry, "%u %u", &depth, &hops) != 2 || strlen(tok) >= 24) {
        rd_err(r, "%s: a queued URL of a strange shape: %.100s", r->url, entry);
        return CRAWL_EFORMAT;
    }
    char *ref = nl2 > nl1 + 1 ? strndup(nl1 + 1, (size_t)(nl2 - nl1 - 1)) : NULL;
    const char *url = nl2 + 1;
    if (r->n_leases == r->cap_leases) {
        size_t cap = r->cap_leases ? r->cap_leases * 2 : 64;
        struct lease *v = realloc(r->leases, cap * sizeof *v);
        if (!v) {
            free(ref);
            return CRAWL_ENOMEM;
        }
        r->leases = v;
        r->cap_leases = cap;
    }
    struct lease *ls = &r->leases[r->n_leases];
    memset(ls, 0, sizeof *ls);
    snprintf(ls->token, sizeof ls->token, "%s", tok);
    ls->shard = shard;
    ls->hash = crawl_hash64(url, strlen(url));
    ls->host_since = host_since;
    if (!(ls->origin = strdup(origin)) || (nl2 > nl1 + 1 && !ref)) {
        free(ls->origin);
        free(ref);
        return CRAWL_ENOMEM;
    }
    r->n_leases++;
    struct crawl_redis_lease cl = {
        .origin = origin,
        .url = url,
        .referrer = ref,
        .depth = depth,
        .hops = hops,
        .delay = strtod(rep_str(l->element[3]), NULL),
        .robots_status = (int)strtol(rep_str(l->element[4]), NULL, 10),
        .robots_body = rep_str(l->element[5]),
        .robots_len = l->element[5]->type == REDIS_REPLY_STRING ? l->element[5]->len : 0,
        .robots_time = strtod(rep_str(l->element[6]), NULL),
    };
    int e = fn(userdata, &cl);
    free(ref);
    return e ? CRAWL_ENOMEM : CRAWL_OK;
}

/* An acquire round in progress (acquire_reply). */
struct acq {
    struct crawl_redis *r;
    const unsigned *shard; /* call i went to shard shard[i] */
    const size_t *quota;   /* and asked for this many */
    double now;            /* wall s */
    double mono;
    int (*fn)(void *userdata, const struct crawl_redis_lease *l);
    void *userdata;
    size_t n;
    int changed; /* a shard's version moved since its last answer, or it is not empty */
    int busy;    /* a shard holds leases */
};

/* An acquire answer {leases, first ready, leases outstanding, budget left, version}: its
 * leases taken, what it says of its shard kept. */
static int acquire_reply(void *userdata, size_t i, const redisReply *rep)
{
    struct acq *q = userdata;
    struct crawl_redis *r = q->r;
    struct shard *sh = &r->shards[q->shard[i]];
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 6 ||
        rep->element[0]->type != REDIS_REPLY_ARRAY) {
        rd_err(r, "%s: an acquire answer of a strange shape", r->url);
        return 1;
    }
    size_t got = 0;
    for (size_t k = 0; k < rep->element[0]->elements; k++) {
        enum crawl_code rc =
            take_lease(r, rep->element[0]->element[k], q->shard[i], q->now, q->fn, q->userdata);
        if (rc != CRAWL_OK)
            return rc == CRAWL_ENOMEM ? -1 : 1;
        got++;
    }
    q->n += got;
    const char *first = rep_str(rep->element[1]);
    int64_t version = rep->element[4]->type == REDIS_REPLY_INTEGER ? rep->element[4]->integer : 0;
    int64_t dl = rep->element[2]->type == REDIS_REPLY_INTEGER ? rep->element[2]->integer : 0;
    q->changed |= version != sh->version || dl > 0 || *first;
    q->busy |= dl > 0;
    sh->version = version;
    sh->dl = dl;
    sh->asked = q->mono;
    /* a shard that gave all it was asked for may have more ready: asked again at once */
    sh->hint = q->quota[i] > 0 && got == q->quota[i] ? q->now : *first ? atof(first) / 1000 : -1;
    const char *frv = rep_str(rep->element[5]);
    sh->hint_rv = q->quota[i] > 0 && got == q->quota[i] ? q->now : *frv ? atof(frv) / 1000 : -1;
    int64_t b = rep->element[3]->type == REDIS_REPLY_INTEGER ? rep->element[3]->integer : -1;
    if (r->n_shards == 1)
        r->budget_left = b;
    else if (b > sh->back)
        sh->back = b; /* over shards: what it gave back (told to T by the next budget call) */
    return 0;
}

/* --max-pages over shards: the budget is granted to the shards by T (BUDGET_LUA) */
static int budgeted(const struct crawl_redis *r)
{
    return r->n_shards > 1 && r->max_pages > 0;
}

/* The budget argument of shard b's acquire and apply (LEFT_FN's budget()): "0" none, the
 * crawl's --max-pages on one shard, over more "G" and what T granted the shard. */
static void args_budget(const struct crawl_redis *r, struct args *a, unsigned b)
{
    if (budgeted(r))
        args_fmt(a, "G%lld", (long long)r->shards[b].granted);
    else
        args_fmt(a, "%ld", r->n_shards == 1 ? r->max_pages : 0);
}

/* --max-pages over shards: one call of BUDGET_LUA on T, which learns what the shards gave
 * back (as this worker last read it) and grants want[b] (NULL: none) to shard b from the
 * pool; each shard's grant (T:bg) kept for its next acquire or apply, the pool left in
 * r->budget_left. A call sent again after a lost answer may grant twice: the shard gives
 * the surplus back. */
static enum crawl_code budget_call(struct crawl_redis *r, const size_t *want)
{
    struct args a = {0};
    eval_begin(&a, T);
    args_fmt(&a, "%ld", r->max_pages);
    args_fmt(&a, "%u", r->n_shards);
    for (unsigned b = 0; b < r->n_shards; b++) {
        args_fmt(&a, "%lld", (long long)r->shards[b].back);
        args_fmt(&a, "%zu", want ? want[b] : 0);
    }
    redisReply *rep = eval(r, SC_BUDGET, &a);
    args_release(&a);
    if (!rep)
        return CRAWL_EIO;
    enum crawl_code rc = CRAWL_OK;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != (size_t)r->n_shards + 1) {
        rd_err(r, "%s: a budget answer of a strange shape", r->url);
        rc = CRAWL_EFORMAT;
    } else {
        for (size_t i = 0; i <= r->n_shards; i++)
            if (rep->element[i]->type != REDIS_REPLY_INTEGER) {
                rd_err(r, "%s: a budget answer of a strange shape", r->url);
                rc = CRAWL_EFORMAT;
            }
        for (unsigned b = 0; rc == CRAWL_OK && b < r->n_shards; b++)
            if (rep->element[b]->integer > r->shards[b].granted)
                r->shards[b].granted = rep->element[b]->integer;
        if (rc == CRAWL_OK)
            r->budget_left = rep->element[r->n_shards]->integer;
    }
    freeReplyObject(rep);
    return rc;
}

/* Sends the acquire of the shards shard[0..k) (quota[i] URLs of each: 0 for the shard's
 * state only), pipelined: one round trip. */
static enum crawl_code acquire_round(struct crawl_redis *r, struct acq *q, size_t k)
{
    struct pcall *c = calloc(k ? k : 1, sizeof *c);
    if (!c) {
        rd_err(r, "out of memory");
        return CRAWL_ENOMEM;
    }
    for (size_t i = 0; i < k; i++) {
        eval_begin(&c[i].a, r->shards[q->shard[i]].tag);
        args_str(&c[i].a, r->worker);
        args_fmt(&c[i].a, "%lld", (long long)(q->now * 1000));
        args_fmt(&c[i].a, "%lld", (long long)(r->lease_time * 1000));
        args_fmt(&c[i].a, "%zu", q->quota[i]);
        args_budget(r, &c[i].a, q->shard[i]);
    }
    enum crawl_code rc = pipeline(r, SC_ACQUIRE, c, k, "acquire", acquire_reply, q, 1);
    pcalls_free(c, k);
    return rc;
}

/* When shard sh has something to lease (wall s, -1: nothing waits): its first ready host,
 * or with the page budget spent (as last read) its first ready host whose next URL holds a
 * share, the only ones it can lease then */
static double shard_hint(const struct crawl_redis *r, const struct shard *sh)
{
    return r->max_pages > 0 && r->budget_left == 0 ? sh->hint_rv : sh->hint;
}

/*
 * Which shards an acquire asks (order[0..k) of r->shards, *k), and for how many URLs
 * each (quota): those whose hint is due (their first ready host's time has come) and
 * those not asked for CRAWL_REDIS_SHARD_REFRESH (other workers queue URLs and give hosts
 * back at any time), at most max of them, the due first; and at least the one asked
 * longest ago. max is spread over them.
 */
static void acquire_plan(const struct crawl_redis *r, size_t max, double now, double mono,
                         unsigned *order, size_t *quota, size_t *k)
{
    size_t n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (unsigned b = 0; b < r->n_shards && n < (max ? max : 1); b++) {
            const struct shard *sh = &r->shards[b];
            double at = shard_hint(r, sh);
            int due = at >= 0 && at <= now;
            int stale = sh->asked < 0 || mono - sh->asked >= CRAWL_REDIS_SHARD_REFRESH;
            if (pass == 0 ? due : !due && stale)
                order[n++] = b;
        }
    if (n == 0) {
        unsigned oldest = 0;
        for (unsigned b = 1; b < r->n_shards; b++)
            if (r->shards[b].asked < r->shards[oldest].asked)
                oldest = b;
        order[n++] = oldest;
    }
    for (size_t i = 0; i < n; i++)
        quota[i] = max / n + (i < max % n);
    *k = n;
}

enum crawl_code crawl_redis_acquire(struct crawl_redis *r, size_t max,
                                    int (*fn)(void *userdata, const struct crawl_redis_lease *l),
                                    void *userdata, size_t *n, double *next_ready, int64_t *leases)
{
    *n = 0;
    *next_ready = -1;
    *leases = 0;
    unsigned *order = malloc(r->n_shards * sizeof *order);
    size_t *quota = malloc(r->n_shards * sizeof *quota);
    size_t *want = calloc(r->n_shards, sizeof *want);
    if (!order || !quota || !want) {
        free(order);
        free(quota);
        free(want);
        rd_err(r, "out of memory");
        return CRAWL_ENOMEM;
    }
    struct acq q = {.r = r,
                    .shard = order,
                    .quota = quota,
                    .now = wall_now(),
                    .mono = mono_now(),
                    .fn = fn,
                    .userdata = userdata};
    size_t k = 0;
    acquire_plan(r, max, q.now, q.mono, order, quota, &k);
    enum crawl_code rc = CRAWL_OK;
    if (budgeted(r)) { /* the shards asked are granted their quotas first, as the pool allows */
        for (size_t i = 0; i < k; i++)
            want[order[i]] = quota[i];
        rc = budget_call(r, want);
        crash(r, "redis-budget-granted");
    }
    if (rc == CRAWL_OK)
        rc = acquire_round(r, &q, k);
    /* the budget spent: nothing more is leased, whatever waits */
    int spent = budgeted(r) && r->budget_left == 0;
    int empty = rc == CRAWL_OK && q.n == 0;
    for (unsigned b = 0; empty && !spent && b < r->n_shards; b++)
        empty = r->shards[b].hint < 0 && r->shards[b].dl == 0;
    if (empty && r->n_shards > 1) {
        /* every shard was empty when last read, each at its own time: finished only if
         * none has had a URL queued since (its version), read again in one round after
         * the answers of the last: the shards were then all empty at one moment, and no
         * URL can be queued by a worker that holds no lease. The budget spent: finished
         * when no shard holds a lease (its URLs queued wait for nobody) and the pool is
         * still empty once T has learned what the shards gave back in this round (a
         * lease reaped or completed without a request gives its share back in its shard) */
        for (unsigned b = 0; b < r->n_shards; b++) {
            order[b] = b;
            quota[b] = 0;
        }
        q.changed = q.busy = 0;
        rc = acquire_round(r, &q, r->n_shards);
        if (rc == CRAWL_OK && spent && !q.busy)
            rc = budget_call(r, NULL);
        if (rc == CRAWL_OK && (spent ? q.busy || r->budget_left != 0 : q.changed))
            empty = 0;
    }
    free(order);
    free(quota);
    free(want);
    if (rc != CRAWL_OK)
        return rc;
    *n = q.n;
    if (empty)
        return CRAWL_OK;
    for (unsigned b = 0; b < r->n_shards; b++) {
        const struct shard *sh = &r->shards[b];
        *leases += sh->dl;
        double at = shard_hint(r, sh);
        if (r->n_shards > 1 && (at < 0 || at > q.now + CRAWL_REDIS_SHARD_REFRESH))
            at = q.now + CRAWL_REDIS_SHARD_REFRESH; /* asked again by then */
        if (at >= 0 && (*next_ready < 0 || at < *next_ready))
            *next_ready = at;
    }
    if (*next_ready < 0 && *leases == 0 && r->n_shards > 1)
        *next_ready = q.now; /* not finished: a shard changed since it was read */
    return CRAWL_OK;
}

static struct lease *find_lease(struct crawl_redis *r, uint64_t hash)
{
    for (size_t i = 0; i < r->n_leases; i++)
        if (r->leases[i].hash == hash && !r->leases[i].decided)
            return &r->leases[i];
    return NULL;
}

enum crawl_code crawl_redis_decided(struct crawl_redis *r, const char *url, double next_wall,
                                    double delay)
{
    struct lease *ls = find_lease(r, crawl_hash64(url, strlen(url)));
    if (!ls) {
        rd_err(r, "%s: no lease held for %.200s", r->url, url);
        return CRAWL_EINVAL;
    }
    ls->decided = 1;
    ls->next_wall = next_wall;
    ls->delay = delay;
    return CRAWL_OK;
}

enum crawl_code crawl_redis_fetching(struct crawl_redis *r, const char *url)
{
    struct lease *ls = find_lease(r, crawl_hash64(url, strlen(url)));
    if (!ls) {
        rd_err(r, "%s: no lease held for %.200s", r->url, url);
        return CRAWL_EINVAL;
    }
    ls->fetched = 1;
    return CRAWL_OK;
}

void crawl_redis_set_max_pages(struct crawl_redis *r, long max_pages)
{
    r->max_pages = max_pages > 0 ? max_pages : 0;
    r->budget_left = -1; /* not known until the next acquire */
}

int64_t crawl_redis_budget_left(const struct crawl_redis *r)
{
    return r->max_pages > 0 ? r->budget_left : -1;
}

size_t crawl_redis_outstanding(const struct crawl_redis *r)
{
    size_t n = 0;
    for (size_t i = 0; i < r->n_leases; i++)
        n += (size_t)!r->leases[i].decided;
    return n;
}

size_t crawl_redis_held(const struct crawl_redis *r)
{
    return r->n_leases;
}

/* The margin M of a commit over shards (s): its commit point is made within M of its
 * start (or not at all), and a reaper resolves its marks no sooner than M after that. */
static double commit_margin(const struct crawl_redis *r)
{
    double m = r->lease_time / 8;
    return m < CRAWL_REDIS_COMMIT_MARGIN ? m : CRAWL_REDIS_COMMIT_MARGIN;
}

static int mark_reply(void *userdata, size_t i, const redisReply *rep)
{
    (void)i;
    struct crawl_redis *r = userdata;
    if (rep->type == REDIS_REPLY_INTEGER && rep->integer == 0)
        return 0;
    rd_err(r,
           "%s: the lease of a URL this worker fetched (token %s of shard %zu) expired and "
           "went to another worker: nothing of this group is committed (a longer "
           "--lease-time, or a worker less loaded?)",
           r->url, rep_str(rep), i);
    return 1;
}

/* An apply round of a commit (apply_reply): the kept hosts' leases taken. */
struct applied {
    struct crawl_redis *r;
    double now;
    int (*fn)(void *userdata, const struct crawl_redis_lease *l);
    void *userdata;
    size_t kept;
};

static int apply_reply(void *userdata, size_t i, const redisReply *rep)
{
    struct applied *q = userdata;
    struct crawl_redis *r = q->r;
    if (rep->type != REDIS_REPLY_ARRAY) {
        rd_err(r, "%s: an apply answer of a strange shape", r->url);
        return 1;
    }
    for (size_t k = 0; k < rep->elements; k++) {
        const redisReply *l = rep->element[k];
        double since = q->now; /* the host lease runs on from when the worker took it */
        for (size_t j = 0; l->type == REDIS_REPLY_ARRAY && l->elements == 7 && j < r->n_leases; j++)
            if (r->leases[j].decided && strcmp(r->leases[j].origin, rep_str(l->element[1])) == 0)
                since = r->leases[j].host_since;
        if (!q->fn)
            continue;
        enum crawl_code rc = take_lease(r, l, (unsigned)i, since, q->fn, q->userdata);
        if (rc != CRAWL_OK)
            return rc == CRAWL_ENOMEM ? -1 : 1;
        q->kept++;
    }
    return 0;
}

/* A commit made: what waited for it (meta, counters, page records) gone, counted. */
static void commit_counted(struct crawl_redis *r)
{
    args_reset(&r->meta);
    args_reset(&r->stats);
    args_reset(&r->pages);
    r->n_meta = r->n_stats = r->n_pages = 0;
    r->commits++;
    r->cseq++;
}

/* The decided leases dropped (completed), the waiting meta, counters and pages with them. */
static void commit_made(struct crawl_redis *r)
{
    size_t w = 0;
    for (size_t i = 0; i < r->n_leases; i++) {
        if (r->leases[i].decided)
            free(r->leases[i].origin);
        else
            r->leases[w++] = r->leases[i];
    }
    r->n_leases = w;
    commit_counted(r);
}

/* The commit point's call: the list of the group ("SHARD TOKEN ...") and what waits. */
static void commitw_args(struct crawl_redis *r, struct args *a, int64_t c, double by)
{
    eval_begin(a, r->wtag);
    args_fmt(a, "%lld", (long long)c);
    args_fmt(a, "%lld", (long long)((by + commit_margin(r)) * 1000));
    if (r->forget > 0)
        args_fmt(a, "%lld", (long long)r->forget);
    else
        args_str(a, "");
    size_t len = 1;
    for (size_t i = 0; i < r->n_leases; i++)
        len += r->leases[i].decided ? strlen(r->leases[i].token) + 24 : 0;
    char *list = malloc(len);
    if (!list) {
        a->oom = 1;
        return;
    }
    size_t used = 0;
    list[0] = '\0';
    for (size_t i = 0; i < r->n_leases; i++)
        if (r->leases[i].decided)
            used += (size_t)snprintf(list + used, len - used, "%s%u %s", used ? " " : "",
                                     r->leases[i].shard, r->leases[i].token);
    args_add(a, list, used);
    free(list);
    args_fmt(a, "%zu", r->n_meta);
    args_cat(a, &r->meta);
    args_fmt(a, "%zu", r->n_stats);
    args_cat(a, &r->stats);
    args_fmt(a, "%zu", r->n_pages);
    args_cat(a, &r->pages);
}

/*
 * The commit over shards (MARK_LUA, COMMITW_LUA, APPLY_LUA): the decided leases marked
 * in their shards (one round trip), the commit point on the worker's tag within the
 * margin of the start (else nothing is committed: the marks are resolved as not made),
 * then the marks applied (one round trip), the hosts kept handed to fn. A kill after the
 * commit point leaves the list for the restart (apply_left) or a reaper (resolve).
 */
/* Steps 1 and 2 of a commit over shards: the decided leases marked (calls: the MARK calls
 * of every shard, made here) and the commit point made, both within the margin of the
 * start. *made: the commit point was made; 0 with CRAWL_OK: too late (Redis slow or away
 * meanwhile: begun again by the caller, the marks made again with a new bound, which
 * voids a reaper's judgement of the old ones). */
static enum crawl_code mark_and_point(struct crawl_redis *r, struct pcall *calls, int64_t c,
                                      double *t0, int *made)
{
    *made = 0;
    *t0 = wall_now();
    double by = *t0 + commit_margin(r);
    char head[80];
    snprintf(head, sizeof head, "%lld %lld %lld", (long long)c, (long long)(*t0 * 1000),
             (long long)(by * 1000));
    for (unsigned b = 0; b < r->n_shards; b++) {
        eval_begin(&calls[b].a, r->shards[b].tag);
        args_str(&calls[b].a, r->worker);
        args_str(&calls[b].a, head);
    }
    for (size_t i = 0; i < r->n_leases; i++) {
        const struct lease *ls = &r->leases[i];
        if (!ls->decided)
            continue;
        struct args *a = &calls[ls->shard].a;
        args_str(a, ls->token);
        args_fmt(a, "%lld", (long long)(ls->next_wall * 1000));
        args_fmt(a, "%.3f", ls->delay);
        args_str(a, ls->fetched ? "1" : "0");
    }
    for (unsigned b = 0; b < r->n_shards; b++) /* shards of none of the group: not asked */
        calls[b].state = calls[b].a.n > 6 ? PC_SEND : PC_DONE;
    enum crawl_code rc = pipeline(r, SC_MARK, calls, r->n_shards, "mark", mark_reply, r, 1);
    if (rc != CRAWL_OK)
        return rc == CRAWL_EFORMAT ? CRAWL_EIO : rc;
    crash(r, "redis-commit-marked");
    if (wall_now() > by)
        return CRAWL_OK;
    struct args a = {0};
    commitw_args(r, &a, c, by);
    redisReply *rep = eval(r, SC_COMMITW, &a);
    args_release(&a);
    if (!rep)
        return CRAWL_EIO;
    if (rep->type != REDIS_REPLY_INTEGER) {
        rd_err(r, "%s: a commit answer of a strange shape", r->url);
        rc = CRAWL_EFORMAT;
    }
    *made = rep->type == REDIS_REPLY_INTEGER && rep->integer >= 0;
    freeReplyObject(rep);
    return rc;
}

/*
 * The commit over shards (MARK_LUA, COMMITW_LUA, APPLY_LUA): the decided leases marked
 * in their shards (one round trip) and the commit point made on the worker's tag within
 * the margin of the start (else begun again, for r->retry_time at most); then the marks
 * applied (one round trip), the hosts kept handed to fn. A kill after the commit point
 * leaves the list for the restart (apply_left) or a reaper (resolve).
 */
static enum crawl_code commit_sharded(struct crawl_redis *r, int keep_hosts,
                                      int (*fn)(void *userdata, const struct crawl_redis_lease *l),
                                      void *userdata, size_t *kept)
{
    int64_t c = r->cseq + 1;
    struct pcall *calls = shard_calls(r);
    if (!calls)
        return CRAWL_ENOMEM;
    crash(r, "redis-commit-begin");
    double start = mono_now(), t0 = 0;
    int made = 0;
    enum crawl_code rc = CRAWL_OK;
    while (rc == CRAWL_OK && !made) {
        rc = mark_and_point(r, calls, c, &t0, &made);
        if (rc == CRAWL_OK && !made && mono_now() - start > r->retry_time) {
            rd_err(r,
                   "%s: the commit did not reach its commit point within its margin "
                   "(%.3f s) for %.1f s: nothing of this group is committed (Redis or this "
                   "worker too slow?)",
                   r->url, commit_margin(r), mono_now() - start);
            rc = CRAWL_EIO;
        }
    }
    if (rc == CRAWL_OK) {
        crash(r, "redis-commit-done");
        /* --max-pages: the shards of the hosts kept are granted a budget for their next
         * URLs first (what they do not lease is given back by their next acquire) */
        if (budgeted(r) && keep_hosts && r->host_lease_time > 0) {
            size_t *want = calloc(r->n_shards, sizeof *want);
            if (!want)
                rc = CRAWL_ENOMEM;
            for (size_t i = 0; want && i < r->n_leases; i++)
                want[r->leases[i].shard] +=
                    r->leases[i].decided && t0 - r->leases[i].host_since < r->host_lease_time;
            if (want)
                rc = budget_call(r, want);
            free(want);
        }
        for (unsigned b = 0; b < r->n_shards; b++) {
            int ask = calls[b].a.n > 6;
            eval_begin(&calls[b].a, r->shards[b].tag);
            args_str(&calls[b].a, r->worker);
            args_fmt(&calls[b].a, "%lld", (long long)(wall_now() * 1000));
            args_fmt(&calls[b].a, "%lld", (long long)(r->lease_time * 1000));
            args_budget(r, &calls[b].a, b);
            args_fmt(&calls[b].a, "%lld", (long long)c);
            calls[b].state = ask ? PC_SEND : PC_DONE;
        }
        for (size_t i = 0; i < r->n_leases; i++) {
            const struct lease *ls = &r->leases[i];
            if (!ls->decided)
                continue;
            int keep =
                keep_hosts && r->host_lease_time > 0 && t0 - ls->host_since < r->host_lease_time;
            args_str(&calls[ls->shard].a, ls->token);
            args_str(&calls[ls->shard].a, keep ? "1" : "0");
        }
        struct applied q = {.r = r, .now = t0, .fn = fn, .userdata = userdata};
        if (rc == CRAWL_OK)
            rc = pipeline(r, SC_APPLY, calls, r->n_shards, "apply", apply_reply, &q, 1);
        *kept = q.kept;
        if (rc == CRAWL_OK) {
            crash(r, "redis-commit-applied");
            r->forget = c;
            commit_made(r);
        }
    }
    pcalls_free(calls, r->n_shards);
    return rc;
}

enum crawl_code crawl_redis_commit(struct crawl_redis *r, int keep_hosts,
                                   int (*fn)(void *userdata, const struct crawl_redis_lease *l),
                                   void *userdata, size_t *kept)
{
    *kept = 0;
    if (r->n_shards > 1)
        return commit_sharded(r, keep_hosts, fn, userdata, kept);
    double now = wall_now();
    struct args a = {0};
    eval_begin(&a, T);
    args_str(&a, r->worker);
    args_fmt(&a, "%lld", (long long)(now * 1000));
    args_fmt(&a, "%lld", (long long)(r->lease_time * 1000));
    args_fmt(&a, "%lld", (long long)(r->cseq + 1));
    args_fmt(&a, "%ld", r->max_pages);
    size_t n = 0;
    for (size_t i = 0; i < r->n_leases; i++)
        n += (size_t)r->leases[i].decided;
    args_fmt(&a, "%zu", n);
    for (size_t i = 0; i < r->n_leases; i++) {
        struct lease *ls = &r->leases[i];
        if (!ls->decided)
            continue;
        int keep =
            keep_hosts && r->host_lease_time > 0 && now - ls->host_since < r->host_lease_time;
        args_str(&a, ls->token);
        args_fmt(&a, "%lld", (long long)(ls->next_wall * 1000));
        args_fmt(&a, "%.3f", ls->delay);
        args_str(&a, keep ? "1" : "0");
        args_str(&a, ls->fetched ? "1" : "0");
    }
    args_fmt(&a, "%zu", r->n_meta);
    args_cat(&a, &r->meta);
    args_fmt(&a, "%zu", r->n_stats);
    args_cat(&a, &r->stats);
    args_fmt(&a, "%zu", r->n_pages);
    args_cat(&a, &r->pages);
    crash(r, "redis-commit-begin");
    redisReply *rep = eval(r, SC_COMMIT, &a);
    args_release(&a);
    if (!rep)
        return CRAWL_EIO;
    crash(r, "redis-commit-done");
    enum crawl_code rc = CRAWL_OK;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements != 2 ||
        rep->element[0]->type != REDIS_REPLY_INTEGER) {
        rd_err(r, "%s: a commit answer of a strange shape", r->url);
        freeReplyObject(rep);
        return CRAWL_EFORMAT;
    }
    /* 1: made already, by this same call before its reply was lost (run_args sent it
     * again); the hosts it kept were given back by the reconnect */
    int again = rep->element[0]->integer == 1;
    if (rep->element[0]->integer != 0 && !again) {
        rd_err(r,
               "%s: the lease of a URL this worker fetched (token %s) expired and went to "
               "another worker: nothing of this group is committed (a longer --lease-time, "
               "or a worker less loaded?)",
               r->url, rep_str(rep->element[1]));
        freeReplyObject(rep);
        return CRAWL_EIO;
    }
    /* the decided leases are done; the hosts kept come back with their next URL leased */
    size_t w = 0;
    struct lease *gone = NULL;
    size_t n_gone = 0;
    if (n && !(gone = malloc(n * sizeof *gone))) {
        freeReplyObject(rep);
        return CRAWL_ENOMEM;
    }
    for (size_t i = 0; i < r->n_leases; i++) {
        if (r->leases[i].decided)
            gone[n_gone++] = r->leases[i];
        else
            r->leases[w++] = r->leases[i];
    }
    r->n_leases = w;
    const redisReply *out = rep->element[1];
    for (size_t i = 0;
         !again && out->type == REDIS_REPLY_ARRAY && i < out->elements && rc == CRAWL_OK; i++) {
        const redisReply *l = out->element[i];
        double since = now;
        if (l->type == REDIS_REPLY_ARRAY && l->elements == 7)
            for (size_t k = 0; k < n_gone; k++)
                if (strcmp(gone[k].origin, rep_str(l->element[1])) == 0)
                    since = gone[k].host_since;
        rc = take_lease(r, l, 0, since, fn, userdata);
        if (rc == CRAWL_OK)
            (*kept)++;
    }
    for (size_t k = 0; k < n_gone; k++)
        free(gone[k].origin);
    free(gone);
    freeReplyObject(rep);
    commit_counted(r);
    return rc;
}

uint64_t crawl_redis_commits(const struct crawl_redis *r)
{
    return r->commits;
}

unsigned crawl_redis_shards(const struct crawl_redis *r)
{
    return r->n_shards;
}

static int renew_reply(void *userdata, size_t i, const redisReply *rep)
{
    (void)i;
    struct crawl_redis *r = userdata;
    if (rep->type == REDIS_REPLY_STRING)
        rd_err(r,
               "%s: the lease of a URL this worker holds (token %s of shard %zu) expired and "
               "went to another worker (a longer --lease-time, or a worker less loaded?)",
               r->url, rep->str, i);
    return rep->type == REDIS_REPLY_STRING;
}

enum crawl_code crawl_redis_renew(struct crawl_redis *r)
{
    if (r->n_leases == 0)
        return CRAWL_OK;
    struct pcall *c = shard_calls(r);
    if (!c)
        return CRAWL_ENOMEM;
    char dl[24];
    snprintf(dl, sizeof dl, "%lld", (long long)((wall_now() + r->lease_time) * 1000));
    for (unsigned b = 0; b < r->n_shards; b++) {
        args_str(&c[b].a, r->worker);
        args_str(&c[b].a, dl);
    }
    for (size_t i = 0; i < r->n_leases; i++)
        args_str(&c[r->leases[i].shard].a, r->leases[i].token);
    for (unsigned b = 0; b < r->n_shards; b++) /* shards of none of its leases: not asked */
        c[b].state = c[b].a.n > 6 ? PC_SEND : PC_DONE;
    enum crawl_code rc = pipeline(r, SC_RENEW, c, r->n_shards, "renew", renew_reply, r, 1);
    pcalls_free(c, r->n_shards);
    return rc == CRAWL_EFORMAT ? CRAWL_EIO : rc;
}

/* A reap round: how many leases were given back, and the marked leases found past their
 * commit's bound, per shard: [token, worker, commit number] * n_marked[b] in marked[b]. */
struct reaped {
    struct crawl_redis *r;
    size_t n;
    struct args *marked;
    size_t *n_marked;
};

static int reap_reply(void *userdata, size_t i, const redisReply *rep)
{
    struct reaped *q = userdata;
    if (rep->type != REDIS_REPLY_ARRAY || rep->elements < 1 || (rep->elements - 1) % 3 ||
        rep->element[0]->type != REDIS_REPLY_INTEGER) {
        rd_err(q->r, "%s: a reap answer of a strange shape", q->r->url);
        return 1;
    }
    q->n += (size_t)rep->element[0]->integer;
    for (size_t k = 1; q->marked && k + 2 < rep->elements; k += 3) {
        for (size_t j = 0; j < 3; j++)
            args_str(&q->marked[i], rep_str(rep->element[k + j]));
        q->n_marked[i]++;
    }
    return 0;
}

static int count_reply(void *userdata, size_t i, const redisReply *rep)
{
    (void)i;
    size_t *n = userdata;
    if (rep->type == REDIS_REPLY_INTEGER && rep->integer > 0)
        *n += (size_t)rep->integer;
    return 0;
}

/* The marked leases a reap found past their commit's bound (q->marked): each worker's
 * commit number read on its own tag, then, in each shard, the lease completed when that
 * worker's commit point was made and given back when not (RESOLVE_LUA). The read comes
 * after the bound and the margin: a commit point made at all was made before it. */
static enum crawl_code resolve(struct crawl_redis *r, struct reaped *q, const char *now)
{
    size_t total = 0;
    for (unsigned b = 0; b < r->n_shards; b++)
        total += q->n_marked[b];
    if (total == 0)
        return CRAWL_OK;
    struct pcall *c = shard_calls(r);
    if (!c)
        return CRAWL_ENOMEM;
    enum crawl_code rc = CRAWL_OK;
    for (unsigned b = 0; rc == CRAWL_OK && b < r->n_shards; b++) {
        const struct args *m = &q->marked[b];
        args_str(&c[b].a, now);
        c[b].state = q->n_marked[b] ? PC_SEND : PC_DONE;
        for (size_t k = 0; rc == CRAWL_OK && k + 2 < m->n; k += 3) {
            char key[CRAWL_REDIS_MAX_NAME + 32];
            snprintf(key, sizeof key, P "{w:%s}:w", m->buf + m->off[k + 1]);
            int64_t cs = 0;
            rc = hget_add(r, key, "cseq", &cs);
            for (size_t j = 0; j < 3; j++)
                args_add(&c[b].a, m->buf + m->off[k + j], m->len[k + j]);
            args_fmt(&c[b].a, "%lld", (long long)cs);
        }
    }
    size_t n = 0;
    if (rc == CRAWL_OK)
        rc = pipeline(r, SC_RESOLVE, c, r->n_shards, "resolve", count_reply, &n, 1);
    q->n += n;
    pcalls_free(c, r->n_shards);
    return rc;
}

/* The reap script on every shard, pipelined: the expired leases of anyone (who "") or
 * all of worker who's; then the resolve of the marked leases it found. */
static enum crawl_code reap(struct crawl_redis *r, const char *who, size_t *n)
{
    *n = 0;
    struct pcall *c = shard_calls(r);
    struct reaped q = {.r = r,
                       .marked = calloc(r->n_shards, sizeof *q.marked),
                       .n_marked = calloc(r->n_shards, sizeof *q.n_marked)};
    enum crawl_code rc = CRAWL_ENOMEM;
    char now[24];
    snprintf(now, sizeof now, "%lld", (long long)(wall_now() * 1000));
    if (c && q.marked && q.n_marked) {
        for (unsigned b = 0; b < r->n_shards; b++) {
            args_str(&c[b].a, now);
            args_str(&c[b].a, who);
            args_str(&c[b].a, "1000");
        }
        rc = pipeline(r, SC_REAP, c, r->n_shards, "reap", reap_reply, &q, 1);
        if (rc == CRAWL_OK)
            rc = resolve(r, &q, now);
    } else {
        rd_err(r, "out of memory");
    }
    *n = q.n;
    pcalls_free(c, r->n_shards);
    for (unsigned b = 0; q.marked && b < r->n_shards; b++)
        args_release(&q.marked[b]);
    free(q.marked);
    free(q.n_marked);
    return rc;
}

enum crawl_code crawl_redis_reap(struct crawl_redis *r, size_t *n)
{
    return reap(r, "", n);
}

enum crawl_code crawl_redis_release(struct crawl_redis *r, size_t *n)
{
    enum crawl_code rc = reap(r, r->worker, n);
    if (rc == CRAWL_OK) {
        for (size_t i = 0; i < r->n_leases; i++)
            free(r->leases[i].origin);
        r->n_leases = 0;
    }
    return rc;
}

enum crawl_code crawl_redis_host_robots(struct crawl_redis *r, const char *origin, int status,
                                        const void *body, size_t len, double when, double delay)
{
    struct args a = {0};
    args_str(&a, "HSET");
    size_t ol = strlen(origin);
    args_host_key(&a, r->shards[shard_of(r, origin, ol)].tag, "h", origin, ol);
    args_str(&a, "rs");
    args_fmt(&a, "%d", status);
    args_str(&a, "rb");
    args_add(&a, body ? body : "", body ? len : 0);
    args_str(&a, "rt");
    args_fmt(&a, "%.3f", when);
    args_str(&a, "delay");
    args_fmt(&a, "%.3f", delay);
    return run_done(r, &a);
}
