#!/bin/sh
# The first pages of a host in a crawl (issue 11; docs/BENCHMARKS.md, "Young hosts in
# streams"): a generated site on python3's http.server at 127.0.0.1 (a random free port, no
# robots.txt): index.html and p01..p14.html are each a 600-word menu paragraph that the
# extractor keeps, 6 words of their own and a footer; then long.html (the menu, 100 sentences
# of its own, a date line) and copy/long.html, its mirror with the date changed. Crawled with
# --concurrency 1 --workers 1 (link order, decided in that order), with and without
# --no-templates; prints each crawl's decisions of the 15 short pages and of the mirror.
# The site is tests/data/young_host/gen.py's (14 short pages, links after the content).
# Every short page dropped as a near-duplicate is a false drop (their own words differ; the
# menu is the site's template).
#   SIMCRAWL=build/simcrawl sh tests/bench/young_host_crawl.sh
set -e
SIMCRAWL=${SIMCRAWL:-build/simcrawl}
DIR=$(mktemp -d)
. "$(dirname "$0")/../lib/http_serve.sh"
http_pid=
trap 'http_stop "$http_pid"; rm -rf "$DIR"' EXIT
trap 'exit 2' INT TERM
python3 "$(dirname "$0")/../data/young_host/gen.py" --short 14 --links list "$DIR/site"
http_serve "$DIR/site" "$DIR/httpd.log"
port=$http_port
[ -n "$port" ] || { echo "young_host_crawl: http.server did not start: $(cat "$DIR/httpd.log")" >&2; exit 1; }
base=http://127.0.0.1:$port
for mode in templates no-templates; do
    opt=
    [ "$mode" = no-templates ] && opt=--no-templates
    timeout 120 "$SIMCRAWL" crawl --quiet $opt --delay 0 --concurrency 1 --workers 1 \
        --log "$DIR/$mode.jsonl" "$base/index.html"
    short=$(grep -E "\"url\":\"$base/(index|p[0-9][0-9])\.html\"" "$DIR/$mode.jsonl" |
        grep -c '"decision":"near-duplicate"' || true)
    mirror=$(grep "\"url\":\"$base/copy/long.html\"" "$DIR/$mode.jsonl" |
        grep -o '"decision":"[a-z-]*"' || true)
    echo "$mode: $short of 15 short pages dropped as near-duplicates; copy/long.html $mirror"
done
