#!/bin/sh
# Crawl benchmark (docs/BENCHMARKS.md "## Crawl"): the python3.11-doc HTML site served by
# nginx on 127.0.0.1 (random free port, a temporary nginx.conf, run in the foreground in
# the background and killed after), crawled by `simcrawl crawl` (no delay, 8 connections)
# and by `wget2 -r` (8 threads), then crawled again without the WARC, then the floor:
# `simcrawl fingerprint` over the same files (the parse + fingerprint work the crawl must
# do), and under it libxml2 alone (bench_pipeline --sax-files: the same SAX parse with
# handlers that do nothing), both as two processes of half the pages each; the five in turn
# RUNS times; medians of wall time and of CPU time (user + system, children included, from
# wait4). The loop overhead is the crawl's CPU without the WARC
# beyond the floor's, as a share of the former. Then the focused-crawl comparison (--topic
# vs breadth-first at the same page budget, on-topic = the page's main text says a topic
# word >= ONTOPIC_MIN times).
# Usage: sh tests/bench/bench_crawl.sh [RUNS]   (BUILD, CACHE as in tests/bench/run.sh)
set -eu
RUNS=${1:-5}
BUILD=${BUILD:-build}
CACHE=${CACHE:-${SIMCRAWL_CACHE:-$HOME/.cache/simcrawl-dev}}
SIMCRAWL=${SIMCRAWL:-$BUILD/simcrawl}
BENCH_NAME=bench_crawl
. tests/bench/pydoc_site.sh # PYDOC served by nginx: W, PORT, SEED

median() { sort -n | awk '{v[NR] = $1} END {print (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2}'; }
# run OUT CMD...: runs CMD (output discarded) and appends "wall cpu maxrss_kb" to OUT, CPU
# being user + system time of CMD and every process it waited for (wait4's rusage)
run() {
    python3 -c '
import os, sys, time, subprocess
t = time.monotonic()
p = subprocess.Popen(sys.argv[2:], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
_, status, ru = os.wait4(p.pid, 0)
with open(sys.argv[1], "a") as f:
    f.write("%.3f %.3f %d\n" % (time.monotonic() - t, ru.ru_utime + ru.ru_stime, ru.ru_maxrss))
' "$@"
}
col() { awk -v c="$1" '{print $c}' "$2" | median; }

# Per run, in turn: the crawl with WARC + log, the same with --state (a new state each
# time: issue 15), wget2, the crawl with the log only, and the
# floor (the same pages through the same parse + fingerprint pipeline, no network, two
# processes for the two cores): all four under the same conditions.
find "$PYDOC" -name '*.html' | sort >"$W/html.lst"
HALF=$(( ($(wc -l <"$W/html.lst") + 1) / 2 )) # two processes of as many pages each
SAX=$BUILD/bench/bench_pipeline
[ -x "$SAX" ] || make --no-print-directory BUILD="$BUILD" "$SAX" >/dev/null
: >"$W/sim.t"; : >"$W/wget.t"; : >"$W/nowarc.t"; : >"$W/fp.t"; : >"$W/sax.t"; : >"$W/state.t"
for r in $(seq "$RUNS"); do
    run "$W/sim.t" "$SIMCRAWL" crawl --quiet --delay 0 --concurrency 8 --per-host 8 --overwrite \
        --warc "$W/crawl.warc.gz" --log "$W/crawl.jsonl" "$SEED"
    rm -rf "$W/state"
    run "$W/state.t" "$SIMCRAWL" crawl --quiet --delay 0 --concurrency 8 --per-host 8 --overwrite \
        --state "$W/state" --warc "$W/state.warc.gz" --log "$W/state.jsonl" "$SEED"
    rm -rf "$W/wget"
    run "$W/wget.t" wget2 -q -r -l inf --no-parent --max-threads=8 -P "$W/wget" "$SEED"
    run "$W/nowarc.t" "$SIMCRAWL" crawl --quiet --delay 0 --concurrency 8 --per-host 8 \
        --overwrite --log "$W/nowarc.jsonl" "$SEED"
    run "$W/fp.t" xargs -a "$W/html.lst" -P 2 -n "$HALF" "$SIMCRAWL" fingerprint --no-templates --
    run "$W/sax.t" xargs -a "$W/html.lst" -P 2 -n "$HALF" "$SAX" --sax-files --
done
pages=$(grep -c '"decision":"new"' "$W/crawl.jsonl" || true)
urls=$(wc -l <"$W/crawl.jsonl")
wfiles=$(find "$W/wget" -type f | wc -l)
whtml=$(find "$W/wget" -type f -name '*.html' | wc -l)
warc_mb=$(wc -c <"$W/crawl.warc.gz" | awk '{printf "%.1f", $1 / 1048576}')  # bytes written, not du (ext4 preallocation)
sim=$(col 1 "$W/sim.t"); sim_cpu=$(col 2 "$W/sim.t"); rss=$(col 3 "$W/sim.t")
wg=$(col 1 "$W/wget.t"); wg_cpu=$(col 2 "$W/wget.t")
st=$(col 1 "$W/state.t"); st_cpu=$(col 2 "$W/state.t"); st_rss=$(col 3 "$W/state.t")
nw=$(col 1 "$W/nowarc.t"); nw_cpu=$(col 2 "$W/nowarc.t")
fp=$(col 1 "$W/fp.t"); fp_cpu=$(col 2 "$W/fp.t")
sx=$(col 1 "$W/sax.t"); sx_cpu=$(col 2 "$W/sax.t")

echo "crawl of python3.11-doc over nginx on loopback, $RUNS runs, medians (wall / CPU user+sys):"
printf '  %-46s %7s s / %5s s  %s\n' "simcrawl crawl (8 conns, 2 workers, WARC+log)" "$sim" "$sim_cpu" \
    "($urls URLs, $pages new pages, WARC $warc_mb MB; peak RSS $(echo "$rss" | awk '{printf "%.1f", $1 / 1024}') MB)"
printf '  %-46s %7s s / %5s s  %s\n' "simcrawl crawl --state (WARC+log)" "$st" "$st_cpu" \
    "(peak RSS $(echo "$st_rss" | awk '{printf "%.1f", $1 / 1024}') MB)"
printf '  %-46s %7s s / %5s s  %s\n' "wget2 -r --max-threads=8" "$wg" "$wg_cpu" "($wfiles files, $whtml html)"
printf '  %-46s %7s s / %5s s\n' "simcrawl crawl, log only (no WARC)" "$nw" "$nw_cpu"
printf '  %-46s %7s s / %5s s\n' "floor: simcrawl fingerprint, same pages, -P 2" "$fp" "$fp_cpu"
printf '  %-46s %7s s / %5s s\n' "libxml2 alone: SAX parse, same pages, -P 2" "$sx" "$sx_cpu"
# Ratios to wget2 round by round (each round runs the four back to back, so a round's
# ratio compares runs made under the same load): the median of the rounds' ratios, with
# the lowest and highest, for the crawl with and without the WARC and for the floor.
ratios() {
    paste -d ' ' "$1" "$W/wget.t" | awk '{print $1 / $4}' | sort -n |
        awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
             printf "%.2fx (%.2f-%.2f)", m, v[1], v[NR]}'
}
echo "  simcrawl / wget2, median of the rounds' ratios (lowest-highest): with the WARC $(ratios "$W/sim.t"), with --state $(ratios "$W/state.t"), without the WARC $(ratios "$W/nowarc.t"); the floor $(ratios "$W/fp.t"); libxml2 alone $(ratios "$W/sax.t")"
echo "$sim $wg $nw $nw_cpu $fp_cpu" | awk '{printf "  ratio of the medians: %.2fx with the WARC, %.2fx without; loop overhead (CPU of the crawl without WARC beyond the floor'"'"'s): %.0f%%\n", $1 / $2, $3 / $2, ($4 - $5) / $4 * 100}'

# Focused crawl against breadth-first at the same page budget.
BUDGET=${BUDGET:-60}
TOPIC="asyncio coroutine await event loop"
ONTOPIC_MIN=${ONTOPIC_MIN:-5}
"$SIMCRAWL" crawl --quiet --delay 0 --concurrency 8 --per-host 8 --max-pages "$BUDGET" \
    --overwrite --log "$W/bfs.jsonl" "$SEED" 2>/dev/null
"$SIMCRAWL" crawl --quiet --delay 0 --concurrency 8 --per-host 8 --max-pages "$BUDGET" \
    --overwrite --topic "$TOPIC" --log "$W/focused.jsonl" "$SEED" 2>/dev/null
for mode in bfs focused; do
    python3 - "$W/$mode.jsonl" "$PYDOC" "$SIMCRAWL" "$ONTOPIC_MIN" "$mode" <<'PY'
import json, re, subprocess, sys, urllib.parse
log, root, simcrawl, need, mode = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
words = re.compile(r"\b(asyncio|coroutines?|await)\b", re.I)
on = fetched = 0
for line in open(log):
    r = json.loads(line)
    if r["status"] != 200 or r["decision"] not in ("new", "near-duplicate", "exact-duplicate"):
        continue
    fetched += 1
    path = root + urllib.parse.urlsplit(r["url"]).path
    text = subprocess.run([simcrawl, "extract", "--text", path], capture_output=True, text=True).stdout
    on += len(words.findall(text)) >= need
print("  %-9s %d pages fetched, %d on-topic (main text says asyncio/coroutine/await >= %d times)" % (mode, fetched, on, need))
PY
done
