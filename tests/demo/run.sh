#!/bin/sh
# `make demo`: crawl the bundled demo site (tests/demo/site, a field guide with a mirrored
# section, printer-friendly copies, re-posted articles and exact copies) on 127.0.0.1 with
# a random free port, offline, and write under demo-out/: the WARC of the kept pages, the
# JSON Lines crawl log and the HTML cluster report of what the crawl dropped (--report).
# Needs python3 (its http.server serves the site). SIMCRAWL selects the binary.
set -eu
SIMCRAWL=${SIMCRAWL:-./simcrawl}
SITE=tests/demo/site
OUT=demo-out
command -v python3 >/dev/null || { echo "demo: needs python3 to serve the site" >&2; exit 2; }
[ -x "$SIMCRAWL" ] || { echo "demo: no $SIMCRAWL; run make first" >&2; exit 2; }
rm -rf "$OUT"
mkdir -p "$OUT"

# The server on a port the kernel picks (tests/lib/http_serve.sh); it has said it listens.
. "$(dirname "$0")/../lib/http_serve.sh"
http_serve "$SITE" "$OUT/server.log"
trap 'http_stop "$http_pid" || true' EXIT
trap 'exit 130' INT TERM
[ -n "$http_port" ] || { echo "demo: the site server did not start: $(cat "$OUT/server.log")" >&2; exit 1; }
PORT=$http_port
SEED="http://127.0.0.1:$PORT/index.html"
echo "demo: serving $SITE at http://127.0.0.1:$PORT/ ; crawling from $SEED" >&2

# A short delay: the site is ours and on loopback. One connection and one worker make the
# order (breadth-first) and so which copy is kept first the same on every run.
"$SIMCRAWL" crawl --delay 0.02 --per-host 1 --workers 1 \
    --warc "$OUT/crawl.warc.gz" --log "$OUT/crawl.jsonl" --report "$OUT/clusters.html" "$SEED"

# The same clusters as text, from the crawl's log (its duplicate_of decisions).
"$SIMCRAWL" clusters "$OUT/crawl.jsonl" >"$OUT/clusters.txt"

python3 - "$OUT/crawl.jsonl" <<'PY'
import collections, json, sys
rows = [json.loads(l) for l in open(sys.argv[1])]
count = collections.Counter(r["decision"] for r in rows)
print("demo: %d URLs: %s" % (len(rows), ", ".join("%s %d" % kv for kv in sorted(count.items()))))
for r in rows:
    if r["decision"] in ("near-duplicate", "exact-duplicate"):
        print("  %-15s %s\n  %15s of %s (distance %s)" % (r["decision"], r["url"], "", r.get("duplicate_of"), r.get("distance")))
PY
echo "demo: WARC      $OUT/crawl.warc.gz"
echo "demo: log       $OUT/crawl.jsonl"
echo "demo: clusters  $OUT/clusters.html (text: $OUT/clusters.txt)"
