# A shared crawl (crawl --redis) decides as a single crawl does (issue 17):
# tests/tools/crawl_redis_same.py starts its own redis-server and a site of 4 virtual hosts
# on 127.0.0.1 whose pages share a big template (a 200-word menu and a footer) beside 10
# words of their own, with byte-for-byte copies of pages planted on the next host, and
# checks that 3 workers keep the same pages as one in-process crawl (none dropped as a
# near-duplicate: the template counts are shared in Redis), that the same shared crawl
# with --no-templates does drop some (so the first check can fail), that every exact
# duplicate is a revisit record of the response kept, in whichever worker's WARC (at least
# one across workers; with --page-requisites, a page whose payload was archived first as a
# requisite is an exact duplicate in both crawls), and that --max-pages 20 makes 20 requests in all, robots.txt's
# disallowed URLs not counted, on one shard tag and over 4 (--frontier-shards: the budget
# reserved on {f0} before the per-shard leases).
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
if command -v redis-server >/dev/null; then
    if timeout 200 python3 tests/tools/crawl_redis_same.py --simcrawl "$SIMCRAWL" \
        --dir "$TMP/crawl_redis_same" --workers 3 --hosts 4 --pages 16 --max-pages 20 \
        --frontier-shards 4 \
        --no-templates-control >"$TMP/out" 2>"$TMP/err"; then
        ok
    else
        bad "crawl --redis decides as a single crawl: $(head -c 800 "$TMP/err")"
    fi
else
    bad "crawl --redis: no redis-server (apt-get install redis-server)"
fi
