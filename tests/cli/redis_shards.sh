# Redis shards behind nutcracker (twemproxy), the ground the sharded frontier's design
# stands on (docs/SCALE-OUT.md, "Sharding"): tests/tools/redis_shards.py starts 3
# redis-servers and a nutcracker with a generated configuration (hash fnv1a_64, ketama,
# hash_tag "{}") on random free ports of 127.0.0.1, checks that a script whose keys share
# one tag runs through the proxy (EVAL; EVALSHA once loaded on the node) on the one node
# the tag hashes to, that SCRIPT LOAD, MULTI and WATCH are refused, and that many tags
# spread over every node; then stops everything.
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
if command -v nutcracker >/dev/null && command -v redis-server >/dev/null; then
    if timeout 60 python3 tests/tools/redis_shards.py --check --nodes 3 --dir "$TMP" \
        >"$TMP/out" 2>"$TMP/err"; then
        ok
    else
        bad "redis shards behind nutcracker: $(head -c 600 "$TMP/err")"
    fi
else
    bad "redis shards: no nutcracker or redis-server (apt-get install nutcracker redis-server)"
fi
