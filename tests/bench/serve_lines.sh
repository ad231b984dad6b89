#!/bin/sh
# serve with and without --probe-lines on a 10M index, alternating processes
# (docs/BENCHMARKS.md, "Issue 19: the probe's lines as an option (probe19k)"):
#   sh tests/bench/serve_lines.sh DIR      (DIR: 2 GB free; ./simcrawl built)
# Loopback only: each service listens on 127.0.0.1 and a port the kernel picks.
set -e
D=${1:?usage: serve_lines.sh DIR}
S=$PWD/simcrawl
B=$PWD/tests/bench/serve_lines.py
mkdir -p "$D"
[ -f "$D/q39.ndjson" ] || python3 "$B" gen "$D"
[ -f "$D/big.idx" ] || /usr/bin/time -v "$S" index add "$D/big.idx" --tables 10 --fingerprints "$D/big.fp"
for r in 1 2; do
    for mode in off on; do
        "$S" serve --listen 127.0.0.1:0 --index "$D/big.idx" --fsync no --threads 1 \
            --probe-lines $mode 2>"$D/serve.$r.$mode.err" &
        P=$!
        for _ in $(seq 600); do grep -q listening "$D/serve.$r.$mode.err" && break; sleep 0.2; done
        PORT=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\),.*/\1/p' "$D/serve.$r.$mode.err")
        echo "=== $r $mode $(date -u +%H:%M:%S) load $(cut -d' ' -f1-3 /proc/loadavg)"
        python3 "$B" run "$D" "$PORT" "$P" $mode
        kill -TERM $P
        wait $P
    done
done
