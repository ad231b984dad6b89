#!/bin/sh
# WARC dedup benchmark (docs/BENCHMARKS.md "## WARC dedup"): what the WARC layer costs.
# A real site — the python3.11-doc HTML served by `python3 -m http.server` on 127.0.0.1 and
# fetched with `wget -r --warc-file` (one gzip member per record, pages, images, CSS, JS) —
# cached in $CACHE/warc/. hyperfine then times, in one run:
#   zcat              decompressing the WARC alone (the floor for any gzip WARC reader)
#   fingerprint       `simcrawl fingerprint` over the same HTML pages as plain files
#   dedup             `simcrawl dedup` over the .warc.gz (read, parse HTTP, fingerprint, index)
#   dedup --warc-out  the same, writing the deduplicated .warc.gz
# and prints medians, records/s, MB/s and the ratio against fingerprint (goal: <= 1.25).
# Usage: BUILD=build CACHE=~/.cache/simcrawl-dev sh tests/bench/bench_warc.sh [RUNS]
set -e
BUILD=${BUILD:-build}
CACHE=${CACHE:-$HOME/.cache/simcrawl-dev}
RUNS=${1:-5}
SIMCRAWL=$BUILD/simcrawl
command -v hyperfine >/dev/null || { echo "bench_warc: needs hyperfine (apt-get install hyperfine)" >&2; exit 1; }
command -v wget >/dev/null || { echo "bench_warc: needs wget" >&2; exit 1; }

PKG=python3.11-doc
if [ ! -d "$CACHE/$PKG" ]; then
    mkdir -p "$CACHE"
    (cd "$CACHE" && { apt-get download "$PKG" >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get download "$PKG" >/dev/null; }; } &&
        dpkg -x "$CACHE/$PKG"_*.deb "$CACHE/$PKG") >&2
fi
SITE=$CACHE/$PKG/usr/share/doc/python3.11/html
W=$CACHE/warc
WARC=$W/pydoc.warc.gz
if [ ! -s "$WARC" ] || [ ! -d "$W/files" ]; then
    rm -rf "$W"
    mkdir -p "$W"
    . "$(dirname "$0")/../lib/http_serve.sh"
    http_serve "$SITE" "$W/server.log"
    port=$http_port
    [ -n "$port" ] || { http_stop "$http_pid"; echo "bench_warc: http.server did not start" >&2; exit 1; }
    echo "bench_warc: crawling the python3.11-doc site on 127.0.0.1:$port with wget (once, ~1 min)" >&2
    (cd "$W" && wget -q -r -l inf --no-parent -e robots=off --no-http-keep-alive --timeout=10 \
        --tries=1 -P files --warc-file=pydoc "http://127.0.0.1:$port/index.html") || true
    http_stop "$http_pid" || true
    [ -s "$WARC" ] || { echo "bench_warc: wget wrote no WARC" >&2; exit 1; }
fi
find "$W/files" -name '*.html' | sort >"$W/html.lst"
pages=$(wc -l <"$W/html.lst")
html_mb=$(xargs -a "$W/html.lst" cat | wc -c | awk '{printf "%.1f", $1 / 1e6}')
gz_mb=$(wc -c <"$WARC" | awk '{printf "%.1f", $1 / 1e6}')
raw_mb=$(gzip -dc "$WARC" | wc -c | awk '{printf "%.1f", $1 / 1e6}')
records=$("$SIMCRAWL" dedup "$WARC" 2>&1 | sed -n 's/^dedup: \([0-9]*\) records.*/\1/p')
OUT=$(mktemp -d)
hyperfine --style basic --runs "$RUNS" --warmup 1 --export-json "$OUT/h.json" \
    -n zcat "gzip -dc '$WARC' >/dev/null" \
    -n fingerprint "xargs -a '$W/html.lst' '$SIMCRAWL' fingerprint -- >/dev/null 2>&1 || true" \
    -n dedup "'$SIMCRAWL' dedup --quiet '$WARC'" \
    -n dedup-warc-out "'$SIMCRAWL' dedup --quiet --warc-out '$OUT/out.warc.gz' '$WARC'" >&2
python3 - "$OUT/h.json" "$records" "$pages" "$gz_mb" "$raw_mb" "$html_mb" <<'PY'
import json, sys
res = {r["command"]: r for r in json.load(open(sys.argv[1]))["results"]}
records, pages = int(sys.argv[2]), int(sys.argv[3])
gz_mb, raw_mb, html_mb = map(float, sys.argv[4:7])
fp = res["fingerprint"]["median"]
print("== WARC dedup: python3.11-doc via wget: %d records (%d HTML pages), %.1f MB .warc.gz, "
      "%.1f MB uncompressed, %.1f MB of HTML ==" % (records, pages, gz_mb, raw_mb, html_mb))
cpu = {n: r["user"] + r["system"] for n, r in res.items()}  # hyperfine: means over the runs
print("%-16s %9s %10s %12s %10s %9s %9s %9s" % ("command", "median s", "records/s", "MB/s (.gz)",
      "MB/s (raw)", "vs fp", "cpu s", "cpu vs fp"))
for name in ["zcat", "fingerprint", "dedup", "dedup-warc-out"]:
    m = res[name]["median"]
    recs = "%.0f" % (records / m) if name != "fingerprint" else "%.0f pg" % (pages / m)
    print("%-16s %9.3f %10s %12.1f %10.1f %8.2fx %9.3f %8.2fx" % (name, m, recs, gz_mb / m,
          raw_mb / m, m / fp, cpu[name], cpu[name] / cpu["fingerprint"]))
print("WARC layer cost (dedup / fingerprint - 1): %+.0f%% wall (median), %+.0f%% cpu (user+sys); "
      "goal <= +25%%" % ((res["dedup"]["median"] / fp - 1) * 100,
                         (cpu["dedup"] / cpu["fingerprint"] - 1) * 100))
PY
rm -rf "$OUT"
