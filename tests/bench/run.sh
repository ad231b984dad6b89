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
