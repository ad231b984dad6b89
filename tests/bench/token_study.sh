#!/bin/sh
# The token rule's joins (docs/FINGERPRINT.md section 2, rule 3; issue 11), measured by
# variant with one build: simcrawl built with -DDEDUP_BENCH_SEEDS reads
# SIMCRAWL_BENCH_JOINS (extract/tokens.c), a sum of
#   1 "->" and "::" between word characters, 2 "~" before a word (a destructor),
#   4 "." between word characters not both digits, 8 "." between two digits too,
#   16 a line's leading section number ("2.1.3. Title") is no token (rec11i);
# 0 is version 6's rule (every punctuation character separates), 3 is version 7's (what a
# build without the switch does); 7 and 15 add the "." joins version 7 left out.
# For each variant: ../shared/tools/falsedrop-score -v over every site of
# tests/bench/sites.sh at draw 0, then tests/bench/weight_study.py --schemes v6 (the
# weights of versions 6 and 7 are the same) over the release pairs (run.sh's
# RELEASE_PAIRS and HELDOUT_PAIRS) and the same sites: expected recall, expected false
# pairs, and the observed figures of draws 0-3. Needs python3-numpy and python3-scipy.
#   sh tests/bench/token_study.sh [VARIANT...]     (default: 0 3 7 15)
# Output in $OUT (default /tmp/simcrawl-token-study): fd-VARIANT.txt, ws-VARIANT.txt.
# About 4 minutes of falsedrop-score and 30 of weight_study (15 with the references of the
# first variant reused) a variant on 2 cores shared with other work (2026-11-27, AMD EPYC).
set -e
OUT=${OUT:-/tmp/simcrawl-token-study}
BIN=build/bench-seed/simcrawl
make --no-print-directory BUILD=build/bench-seed OPT="-O2 -DDEDUP_BENCH_SEEDS" "$BIN" >/dev/null
mkdir -p "$OUT"
sites=$(sh tests/bench/sites.sh 2>/dev/null)
variants=${*:-0 3 7 15}
refs=
for v in $variants; do
    echo "== SIMCRAWL_BENCH_JOINS=$v =="
    SIMCRAWL_BENCH_JOINS=$v SIMCRAWL_BENCH_SEED=0 ../shared/tools/falsedrop-score -v --bin "$BIN" \
        --sites "$sites" --max-wrong 1000000 >"$OUT/fd-$v.txt" || true
    tail -n 1 "$OUT/fd-$v.txt"
    SIMCRAWL_BENCH_JOINS=$v "${PYTHON:-/usr/bin/python3}" tests/bench/weight_study.py --bin "$BIN" \
        --work "$OUT/work-$v" ${refs:+--refs-from "$refs"} --sites "$sites" --schemes v6 \
        --verbose >"$OUT/ws-$v.txt"
    refs=${refs:-$OUT/work-$v}
    grep -E 'check:|E\[recall\]|^  sites:' "$OUT/ws-$v.txt"
done
