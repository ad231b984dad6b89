#!/bin/sh
# Crawl state benchmark (docs/BENCHMARKS.md "## Crawl state", issue 15): a generated site of
# PAGES pages (tests/tools/site_server.py --bench: each page links 3 children, 8 pages of
# the next level and 2 neighbours, so the frontier grows much faster than it drains, with
# planted near- and exact duplicates) written to /dev/shm and served by nginx on
# 127.0.0.1; crawled with no delay and 8 connections, WARC and log, in memory and with
# --state (a new state each time), alternately RUNS times: medians of wall time, CPU and
# peak RSS. Then the memory as the frontier grows, on a wide site (--fanout 100): both
# modes stopped at --max-pages 2,000 / 4,000 / 8,000, peak RSS against the URLs seen by
# then; the slope is the bytes each URL costs; and --state with --seen-memory 4 MiB (a
# table of 196,608 URLs, then a Bloom filter of 2 MiB), where the seen set stops growing.
# Usage: sh tests/bench/bench_state.sh [RUNS] [PAGES]   (BUILD as in tests/bench/run.sh)
# RUNS 0: the memory section only. GROW: its --max-pages (each page adds 100 URLs seen;
# the wide site is made large enough), GROW_MODES: which of its crawls, e.g.
#   GROW="4000 8000 16000 32000" GROW_MODES=state4m sh tests/bench/bench_state.sh 0
set -eu
RUNS=${1:-3}
PAGES=${2:-300000}
GROW=${GROW:-2000 4000 8000}
GROW_MODES=${GROW_MODES:-mem state state4m topic topicst}
BUILD=${BUILD:-build}
SIMCRAWL=${SIMCRAWL:-$BUILD/simcrawl}
. tests/nginx.sh
W=$(mktemp -d /dev/shm/bench_state.XXXXXX)
trap 'nginx_stop; rm -rf "$W"' EXIT
if [ "$RUNS" -gt 0 ]; then
python3 tests/tools/site_server.py --pages "$PAGES" --bench --write "$W/site"
PORT=$(free_port)
nginx_start "$W/nginx" "$PORT" "
    access_log off;
    keepalive_requests 100000;
    types { text/html html; text/plain txt; }
    server { listen 127.0.0.1:$PORT; root $W/site; }" || {
    echo "bench_state: nginx did not start: $(cat "$W/nginx/nginx.out")" >&2; exit 1; }
SEED="http://127.0.0.1:$PORT/p/0.html"
fi

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# run OUT CMD...: "wall cpu maxrss_kb seen queued" of CMD appended to OUT (the URLs from
# its --verbose summary on stderr: "seen set: N URLs"; queued: the state's count, or 0)
run() {
    python3 -c '
import os, re, sys, time, subprocess
t = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
err = p.stderr.read().decode()
_, status, ru = os.wait4(p.pid, 0)
m = re.search(r"seen set: (\d+) URLs", err)
f = re.search(r"crawl (?:done|stopped): (\d+) pages fetched", err)
with open(sys.argv[1], "a") as out:
    out.write("%.3f %.3f %d %s %s\n" % (time.monotonic() - t, ru.ru_utime + ru.ru_stime,
              ru.ru_maxrss, m.group(1) if m else 0, f.group(1) if f else 0))
' "$@"
}
col() { awk -v c="$1" '{print $c}' "$2" | median; }
CRAWL="$SIMCRAWL crawl --verbose --delay 0 --concurrency 8 --per-host 8 --overwrite"

if [ "$RUNS" -gt 0 ]; then

: >"$W/mem.t"; : >"$W/state.t"
for r in $(seq "$RUNS"); do
    run "$W/mem.t" $CRAWL --warc "$W/mem.warc.gz" --log "$W/mem.jsonl" "$SEED"
    rm -rf "$W/st"
    run "$W/state.t" $CRAWL --state "$W/st" --warc "$W/st.warc.gz" --log "$W/st.jsonl" "$SEED"
done
echo "crawl of a generated site of $PAGES pages over nginx on loopback, $RUNS runs each, medians:"
for m in mem state; do
    wall=$(col 1 "$W/$m.t"); cpu=$(col 2 "$W/$m.t"); rss=$(col 3 "$W/$m.t"); pages=$(col 5 "$W/$m.t")
    printf '  %-34s %8s s wall %8s s CPU %8.0f pages/s  peak RSS %6.1f MB\n' \
        "$([ $m = mem ] && echo "in memory (WARC+log)" || echo "--state (WARC+log)")" \
        "$wall" "$cpu" "$(echo "$pages $wall" | awk '{print $1 / $2}')" \
        "$(echo "$rss" | awk '{print $1 / 1024}')"
done
echo "$(col 1 "$W/state.t") $(col 1 "$W/mem.t")" |
    awk '{printf "  --state / in memory, wall time: %.3f (%+.1f%%)\n", $1 / $2, ($1 / $2 - 1) * 100}'
# each round's ratio (round r: the r-th in-memory run against the r-th --state run)
paste -d' ' "$W/state.t" "$W/mem.t" | awk '{w = $1 / $6; c = $2 / $7; printf "  round %d: --state / in memory, wall %.3f, CPU %.3f\n", NR, w, c
    if (NR == 1 || w < wl) wl = w; if (NR == 1 || w > wh) wh = w; if (NR == 1 || c < cl) cl = c; if (NR == 1 || c > ch) ch = c}
    END {printf "  range of the rounds: wall %.3f-%.3f, CPU %.3f-%.3f\n", wl, wh, cl, ch}'
echo "$(col 2 "$W/state.t") $(col 2 "$W/mem.t")" |
    awk '{printf "  --state / in memory, CPU time (medians): %.3f (%+.1f%%)\n", $1 / $2, ($1 / $2 - 1) * 100}'
echo "  load average at the end: $(cut -d' ' -f1-3 /proc/loadavg)"
echo "  state on disk after the crawl: $(du -sm "$W/st" | cut -f1) MB for $(col 4 "$W/state.t") URLs"
fi

# memory as the frontier grows: a wide site (every page links 100 pages further down), so
# the URLs seen grow a hundredfold faster than the pages fetched; peak RSS at 2,000,
# 4,000 and 8,000 pages, in memory and with --state; the slope is what one more URL seen
# (queued or fetched) costs, the pages' own cost being small at these counts
WIDE=$(for n in $GROW; do echo "$n"; done | sort -n | awk '{m = $1} END {m = int(m * 1.25); print m < 10000 ? 10000 : m}')
python3 tests/tools/site_server.py --pages "$WIDE" --fanout 100 --write "$W/wide"
PORT2=$(free_port)
NGINX_PID1=$NGINX_PID
nginx_start "$W/nginx2" "$PORT2" "
    access_log off;
    keepalive_requests 100000;
    types { text/html html; text/plain txt; }
    server { listen 127.0.0.1:$PORT2; root $W/wide; }" || {
    echo "bench_state: nginx did not start: $(cat "$W/nginx2/nginx.out")" >&2; exit 1; }
echo "peak RSS as the frontier grows (a site whose pages link 100 pages each; URLs seen = fetched + queued):"
for m in $GROW_MODES; do
    : >"$W/grow.$m"
    for n in $GROW; do
        rm -rf "$W/st"
        case $m in
        mem) extra= ;;
        state) extra="--state $W/st" ;;
        state4m) extra="--state $W/st --seen-memory 4194304" ;;
        topic) extra="--topic page" ;; # best-first: in memory, every queued URL held
        topicst) extra="--topic page --state $W/st" ;; # best-first: a window a host
        esac
        # shellcheck disable=SC2086
        run "$W/grow.$m" $CRAWL --max-pages $n $extra --log "$W/g.jsonl" "http://127.0.0.1:$PORT2/p/0.html"
    done
    awk -v m="$m" '{printf "  %-9s --max-pages %6d: %8d URLs seen, peak RSS %6.1f MB (%.1f bytes a URL)\n", m, $5, $4, $3 / 1024, $3 * 1024 / $4}' "$W/grow.$m"
    awk -v m="$m" 'NR == 1 {u = $4; r = $3} END {printf "  %-9s slope: %.1f MB per million URLs seen (%.0f bytes a URL)\n", m, ($3 - r) / 1024 / (($4 - u) / 1e6), ($3 - r) * 1024 / ($4 - u)}' "$W/grow.$m"
    # past the first points: the slope between the last two (0 when memory is bounded)
    awk -v m="$m" '{pu = u; pr = r; u = $4; r = $3} END {if (NR > 2) printf "  %-9s slope between the last two: %.1f MB per million URLs seen (%.0f bytes a URL)\n", m, (r - pr) / 1024 / ((u - pu) / 1e6), (r - pr) * 1024 / (u - pu)}' "$W/grow.$m"
done
nginx_stop
NGINX_PID=$NGINX_PID1
