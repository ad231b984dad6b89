# simcrawl crawl --redis URL --worker-name NAME (issue 17): several workers, one crawl.
# The options are checked; then tests/tools/crawl_redis.py starts its own redis-server and
# a site of 6 virtual hosts (one port each, Crawl-delay 0.1 s, planted near-duplicates and
# byte-for-byte copies across hosts) on 127.0.0.1, runs 3 workers, kills one with SIGKILL at a random moment
# and restarts it by name, kills redis-server (appendonly, appendfsync always) once and
# starts it again 0.5 s later (the workers connect again: none may exit with an error),
# and checks the union of the WARCs and logs against the site, politeness across workers
# from the server's request times, the near-duplicate decisions, and that every exact
# duplicate is a revisit record referring to a response record in one of the WARCs; through
# nutcracker again with --max-pages 60, the worker killed started again only once the
# others are done (60 URLs in all, each once; its start makes no request); on one server with
# --max-pages 80 and two kills (every dropped page's kept neighbour archived). `make stress` runs
# it with 20 kills and a redis-server restart, then again through nutcracker.
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
CR=$TMP/crawl_redis
mkdir -p "$CR"
# tests/tools/crawl_redis.py in $CR/$1 (3 workers, 6 hosts of 24 pages, Crawl-delay 0.1 s,
# a worker's error a failure) with the arguments after $2, which names it in a failure
crawl_redis_run() {
    cr_dir=$1 cr_what=$2
    shift 2
    if timeout 120 python3 tests/tools/crawl_redis.py --simcrawl "$SIMCRAWL" --dir "$CR/$cr_dir" \
        --workers 3 --hosts 6 --pages 24 --crawl-delay 0.1 --no-worker-errors "$@" \
        >"$TMP/out" 2>"$TMP/err"; then
        ok
    else
        bad "$cr_what: $(head -c 600 "$TMP/err")"
    fi
}
expect_status 1 "crawl --redis without --worker-name" -- "$SIMCRAWL" crawl --quiet \
    --redis redis://127.0.0.1:1 http://127.0.0.1:1/
expect_grep "\-\-redis and \-\-worker-name go together" "$TMP/err" "--redis needs a worker name"
expect_status 1 "crawl --redis with --state" -- "$SIMCRAWL" crawl --quiet --state "$CR/st" \
    --redis redis://127.0.0.1:1 --worker-name a http://127.0.0.1:1/
expect_grep "\-\-redis and \-\-state exclude each other" "$TMP/err" "--redis and --state"
expect_status 1 "crawl --redis with a bad URL" -- "$SIMCRAWL" crawl --quiet \
    --redis http://127.0.0.1:1 --worker-name a http://127.0.0.1:1/
expect_grep "bad --redis 'http://127.0.0.1:1': expected redis://HOST:PORT\[/DB\]" "$TMP/err" \
    "a bad --redis URL is named"
expect_status 2 "crawl --redis, no server" -- "$SIMCRAWL" crawl --quiet \
    --redis redis://127.0.0.1:1 --worker-name a http://127.0.0.1:1/
expect_grep "cannot connect to redis://127.0.0.1:1: Connection refused" "$TMP/err" \
    "an unreachable Redis is named"
expect_status 1 "crawl --redis, a bad worker name" -- "$SIMCRAWL" crawl --quiet \
    --redis redis://127.0.0.1:1 --worker-name "a/b" http://127.0.0.1:1/
expect_grep "bad worker name 'a/b'" "$TMP/err" "a bad worker name is named"
if command -v redis-server >/dev/null; then
    crawl_redis_run run "crawl --redis, 3 workers, one killed" --kills 1 --redis-restarts 1
else
    bad "crawl --redis: no redis-server (apt-get install redis-server)"
fi
# --max-pages 80 on one redis-server, two workers killed: a URL whose lease a kill handed
# back keeps its share of the budget and is fetched again before anything new, so every
# near-duplicate dropped has its kept neighbour archived (the check is strict with a budget)
if command -v redis-server >/dev/null; then
    crawl_redis_run max "crawl --redis --max-pages 80, two workers killed" --kills 2 \
        --max-pages 80
fi
# --frontier-shards is the crawl's, fixed when it starts: another refused, both named
if command -v redis-server >/dev/null; then
    fs_port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
    mkdir -p "$CR/fs"
    redis-server --port "$fs_port" --bind 127.0.0.1 --save "" --dir "$CR/fs" \
        --logfile "$CR/fs/log" --daemonize yes --pidfile "$CR/fs/pid" >/dev/null
    for _ in 1 2 3 4 5 6 7 8 9 10; do
        redis-cli -p "$fs_port" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    expect_status 2 "crawl --redis --frontier-shards 4, a new crawl" -- "$SIMCRAWL" crawl \
        --quiet --redis "redis://127.0.0.1:$fs_port" --worker-name a --frontier-shards 4 \
        --unreachable-retries 0 --warc "$CR/fs/a.warc.gz" --log "$CR/fs/a.jsonl" \
        http://127.0.0.1:1/
    expect_grep "no page could be fetched" "$TMP/err" "the crawl of 4 shards ran"
    if [ "$(redis-cli -p "$fs_port" GET 'simcrawl{f0}:shards')" = 4 ]; then ok; else
        bad "the crawl's shard count is not kept in simcrawl{f0}:shards"; fi
    expect_status 2 "crawl --redis --frontier-shards 2 on a crawl of 4" -- "$SIMCRAWL" crawl \
        --quiet --redis "redis://127.0.0.1:$fs_port" --worker-name b --frontier-shards 2 \
        --warc "$CR/fs/b.warc.gz" --log "$CR/fs/b.jsonl" http://127.0.0.1:1/
    expect_grep "spread over 4 shards (fixed when it started); this worker was started with 2" \
        "$TMP/err" "another shard count is refused, both named"
    kill "$(cat "$CR/fs/pid")" 2>/dev/null
fi
# the same through nutcracker: the frontier on 3 redis-servers behind the proxy (--redis
# names it), the index on a redis-server of its own (--redis-index); a worker killed, the
# node holding the frontier killed and started again (the proxy answers "ERR Connection
# refused" meanwhile: the workers connect again and go on)
expect_status 1 "crawl --redis-index, a bad URL" -- "$SIMCRAWL" crawl --quiet \
    --redis redis://127.0.0.1:1 --redis-index http://x --worker-name a http://127.0.0.1:1/
expect_grep "bad --redis-index 'http://x': expected redis://HOST:PORT\[/DB\]" "$TMP/err" \
    "a bad --redis-index URL is named"
if command -v redis-server >/dev/null && command -v nutcracker >/dev/null; then
    crawl_redis_run shards "crawl --redis through nutcracker, 3 workers, one killed" \
        --kills 1 --redis-restarts 1 --shards 3 --frontier-shards 16
    # --max-pages over the 16 shard tags: the budget granted to the shards from {f0}; a
    # worker killed and started again only once the others are done: they finished the
    # crawl without it (its leases reaped gave their budget back), its start makes no
    # request; 60 of the site's URLs in the logs, each once
    crawl_redis_run shards-max "crawl --redis --max-pages 60 through nutcracker, one killed" \
        --kills 1 --restart-late --shards 3 --frontier-shards 16 --max-pages 60
else
    bad "crawl --redis through nutcracker: no nutcracker (apt-get install nutcracker)"
fi
