#!/bin/sh
# wget2 plugin benchmark (docs/BENCHMARKS.md "## wget2 plugin"): the python3.11-doc HTML
# site served by nginx on 127.0.0.1 (random free port, a temporary nginx.conf, as in
# bench_crawl.sh), fetched by `wget2 -r` alone and by `wget2 -r` with the simcrawl plugin
# (index in memory; and with an index file, saved at exit), in turn, RUNS rounds: wall and
# CPU time (user + system, from wait4) of each, medians with the lowest and highest, and
# the plugin's cost as the median of the rounds' ratios (each round runs the three back to
# back, so a ratio compares runs made under the same load). The floor, also in each round:
# `simcrawl fingerprint --no-templates` (one pass) over the site's HTML files, two
# processes (the extraction and fingerprint work the plugin adds); the plugin's extra CPU
# (with it minus alone) is set against the floor's CPU. The plugin's own summary line of the last round is printed too.
# Usage: sh tests/bench/bench_wget2.sh [RUNS]   (BUILD, CACHE as in tests/bench/run.sh)
set -eu
RUNS=${1:-7}
BUILD=${BUILD:-build}
CACHE=${CACHE:-${SIMCRAWL_CACHE:-$HOME/.cache/simcrawl-dev}}
PLUGIN=${WGET2_PLUGIN:-$BUILD/plugins/wget2/libsimcrawl.so}
SIMCRAWL=${SIMCRAWL:-$BUILD/simcrawl}
BENCH_NAME=bench_wget2
. tests/bench/pydoc_site.sh # PYDOC served by nginx: W, PORT, SEED
[ -f "$PLUGIN" ] || { echo "bench_wget2: no plugin at $PLUGIN (make wget2-plugin)" >&2; exit 2; }

# run OUT ERR CMD...: runs CMD (stdout discarded, stderr to ERR) and appends "wall cpu" to
# OUT, CPU being user + system of CMD and what it waited for (wait4's rusage)
run() {
    python3 -c '
import os, sys, time, subprocess
t = time.monotonic()
with open(sys.argv[2], "w") as err:
    p = subprocess.Popen(sys.argv[3:], stdout=subprocess.DEVNULL, stderr=err)
    _, status, ru = os.wait4(p.pid, 0)
with open(sys.argv[1], "a") as f:
    f.write("%.3f %.3f\n" % (time.monotonic() - t, ru.ru_utime + ru.ru_stime))
' "$@"
}
# stats FILE COLUMN: "median (lowest-highest)"
stats() {
    awk -v c="$2" '{print $c}' "$1" | sort -n |
        awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
             printf "%.3f (%.3f-%.3f)", m, v[1], v[NR]}'
}
# ratios FILE: the rounds' wall-time ratios to wget2 alone, "median (lowest-highest)"
ratios() {
    paste -d ' ' "$1" "$W/alone.t" | awk '{print $1 / $3}' | sort -n |
        awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
             printf "%.2fx (%.2f-%.2f)", m, v[1], v[NR]}'
}

OPTS="--no-config -q -r -l inf --no-parent --max-threads=8"
find "$PYDOC" -name '*.html' | sort >"$W/html.lst"
HALF=$(( ($(wc -l <"$W/html.lst") + 1) / 2 ))
: >"$W/alone.t"; : >"$W/mem.t"; : >"$W/idx.t"; : >"$W/fp.t"
for r in $(seq "$RUNS"); do
    rm -rf "$W/out"
    run "$W/alone.t" "$W/alone.err" wget2 $OPTS -P "$W/out" "$SEED"
    alone_files=$(find "$W/out" -type f | wc -l)
    rm -rf "$W/out"
    run "$W/mem.t" "$W/mem.err" wget2 $OPTS -P "$W/out" --local-plugin="$PLUGIN" "$SEED"
    mem_files=$(find "$W/out" -type f | wc -l)
    rm -rf "$W/out" "$W/site.idx" "$W/site.idx.journal"
    run "$W/idx.t" "$W/idx.err" wget2 $OPTS -P "$W/out" --local-plugin="$PLUGIN" \
        --plugin-opt=simcrawl.index="$W/site.idx" "$SEED"
    run "$W/fp.t" "$W/fp.err" xargs -a "$W/html.lst" -P 2 -n "$HALF" "$SIMCRAWL" fingerprint --no-templates --
done
echo "wget2 -r of python3.11-doc over nginx on loopback, 8 threads, $RUNS rounds in turn;"
echo "wall / CPU user+sys in s, median (lowest-highest):"
printf '  %-40s %s / %s  (%s files)\n' "wget2 -r alone" "$(stats "$W/alone.t" 1)" "$(stats "$W/alone.t" 2)" "$alone_files"
printf '  %-40s %s / %s  (%s files)\n' "wget2 -r + simcrawl plugin, in memory" "$(stats "$W/mem.t" 1)" "$(stats "$W/mem.t" 2)" "$mem_files"
printf '  %-40s %s / %s\n' "wget2 -r + simcrawl plugin, index file" "$(stats "$W/idx.t" 1)" "$(stats "$W/idx.t" 2)"
printf '  %-40s %s / %s\n' "floor: simcrawl fingerprint, HTML, -P 2" "$(stats "$W/fp.t" 1)" "$(stats "$W/fp.t" 2)"
echo "  plugin / alone, median of the rounds' wall ratios (lowest-highest): in memory $(ratios "$W/mem.t"), index file $(ratios "$W/idx.t")"
paste -d ' ' "$W/mem.t" "$W/alone.t" "$W/fp.t" | awk '{print ($2 - $4) / $6}' | sort -n |
    awk '{v[NR] = $1} END {m = (NR % 2) ? v[(NR + 1) / 2] : (v[NR / 2] + v[NR / 2 + 1]) / 2
         printf "  the plugin'"'"'s extra CPU (in memory minus alone) / the floor'"'"'s CPU: %.2f (%.2f-%.2f)\n", m, v[1], v[NR]}'
echo "  the plugin's summary (last round, in memory): $(grep '^simcrawl:' "$W/mem.err" || echo none)"
