#!/bin/sh
# `make bench`: every benchmark of docs/BENCHMARKS.md, in sequence, each against its peer
# in the same run. Each section below builds what it needs and prints its own table.
# BUILD selects the build dir (default build); the doc packages are cached in
# ~/.cache/simcrawl-dev (fetched with apt-get download when absent).
set -e
BUILD=${BUILD:-build}
export BUILD
CACHE=${SIMCRAWL_CACHE:-$HOME/.cache/simcrawl-dev}
export CACHE

# doc_site PACKAGE: unpack a Debian doc package into $CACHE once; prints its folder.
doc_site() {
    if [ ! -d "$CACHE/$1" ]; then
        mkdir -p "$CACHE"
        (cd "$CACHE" && { apt-get download "$1" >/dev/null 2>&1 ||
            { apt-get update -qq && apt-get download "$1" >/dev/null; }; } &&
            dpkg -x "$CACHE/$1"_*.deb "$CACHE/$1") >&2
    fi
    echo "$CACHE/$1"
}

# ---- sections (one per benchmark; keep each self-contained) ----

# ---- simhash (docs/BENCHMARKS.md "## Simhash") ----
# The accumulation kernel against the literal per-bit loop on the same features in memory,
# then `simcrawl fingerprint` over the python3.11-doc pages (median of 5 runs).
make --no-print-directory BUILD="$BUILD" "$BUILD/simcrawl" "$BUILD/bench/bench_simhash" >/dev/null
echo "== simhash =="
"$BUILD/bench/bench_simhash" --runs 5
PYDOC=$(doc_site python3.11-doc)/usr/share/doc/python3.11/html
find "$PYDOC" -name '*.html' | sort >"$BUILD/bench/pydoc.lst"
pages=$(wc -l <"$BUILD/bench/pydoc.lst")
mb=$(xargs -a "$BUILD/bench/pydoc.lst" cat | wc -c | awk '{printf "%.1f", $1 / 1e6}')
for r in 1 2 3 4 5; do
    t0=$(date +%s.%N)
    xargs -a "$BUILD/bench/pydoc.lst" "$BUILD/simcrawl" fingerprint -- >/dev/null 2>&1 || true
    t1=$(date +%s.%N)
    echo "$t0 $t1" | awk '{printf "%.3f\n", $2 - $1}'
done | sort -n | sed -n 3p | awk -v p="$pages" -v mb="$mb" \
    '{printf "simcrawl fingerprint, python3.11-doc: %d pages, %s MB: %.2f s, %.0f pages/s, %.1f MB/s\n", p, mb, $1, p / $1, mb / $1}'

# ---- extraction pipeline (docs/BENCHMARKS.md "## Extraction pipeline") ----
# The python3.11-doc pages held in memory: libxml2's tree parser alone (htmlReadMemory +
# xmlFreeDoc) against extract_doc_parse, and against the whole pipeline (extract, tokens,
# shingle features, simhash), interleaved in one run, median of 5 runs.
make --no-print-directory BUILD="$BUILD" "$BUILD/bench/bench_pipeline" >/dev/null
echo "== extraction pipeline =="
find "$(doc_site python3.11-doc)/usr/share/doc/python3.11/html" -name '*.html' | sort \
    >"$BUILD/bench/pipeline.lst"
"$BUILD/bench/bench_pipeline" --runs 5 "$BUILD/bench/pipeline.lst"

# ---- WARC dedup (docs/BENCHMARKS.md "## WARC dedup") ----
# `simcrawl dedup` over a wget .warc.gz of the python3.11-doc site (made once on loopback,
# cached) against `simcrawl fingerprint` over the same pages as plain files and against
# zcat alone, one hyperfine run, medians of 5 (hyperfine's own output: $BUILD/bench/warc.log).
make --no-print-directory BUILD="$BUILD" "$BUILD/simcrawl" >/dev/null
mkdir -p "$BUILD/bench"
BUILD="$BUILD" CACHE="$CACHE" sh tests/bench/bench_warc.sh 5 2>"$BUILD/bench/warc.log"
