#!/bin/sh
# The first pages of a host in a crawl (issue 11; docs/BENCHMARKS.md, "Young hosts in
# streams"): a generated site on python3's http.server at 127.0.0.1 (a random free port, no
# robots.txt): index.html and p01..p14.html are each a 600-word menu paragraph that the
# extractor keeps, 6 words of their own and a footer; then long.html (the menu, 100 sentences
# of its own, a date line) and copy/long.html, its mirror with the date changed. Crawled with
# --concurrency 1 (link order), with and without --no-templates; prints each crawl's
# decisions of the 15 short pages and of the mirror. Every short page dropped as a
# near-duplicate is a false drop (their own words differ; the menu is the site's template).
#   SIMCRAWL=build/simcrawl sh tests/bench/young_host_crawl.sh
set -e
SIMCRAWL=${SIMCRAWL:-build/simcrawl}
DIR=$(mktemp -d)
HTTPD=
trap '[ -n "$HTTPD" ] && kill "$HTTPD" 2>/dev/null; rm -rf "$DIR"' EXIT
trap 'exit 2' INT TERM
mkdir -p "$DIR/site/copy"
python3 - "$DIR/site" <<'PY'
import os, random, sys
root = sys.argv[1]
menu = " ".join("menu%03d" % i for i in range(600))
words = ["w%03d" % i for i in range(800)]
foot = "Copyright the example project all rights reserved terms of use privacy policy"
def page(name, own, links=(), extra=""):
    body = " ".join(random.Random(name).choice(words) for _ in range(own))
    if own > 100:  # sentences of 12 words, one paragraph each
        r = random.Random(name)
        body = "</p><p>".join(" ".join("x%04d" % r.randrange(5000) for _ in range(12)) + "."
                              for _ in range(own // 12))
    ul = "".join('<li><a href="%s">%s</a></li>' % (l, l) for l in links)
    with open(os.path.join(root, name), "w") as f:
        f.write('<html><head><title>%s</title></head><body><div class="content"><p>%s</p>'
                '<p>%s</p>%s<p>%s</p></div><ul>%s</ul></body></html>\n'
                % (name, menu, body, extra, foot, ul))
pages = ["p%02d.html" % n for n in range(1, 15)]
page("index.html", 6, pages + ["long.html", "copy/long.html"])
for p in pages:
    page(p, 6)
page("long.html", 1200, extra="<p>Page generated on 2026-11-27 at 07:00.</p>")
body = open(os.path.join(root, "long.html")).read()
open(os.path.join(root, "copy/long.html"), "w").write(body.replace("2026-11-27", "2026-11-28"))
PY
. "$(dirname "$0")/../lib/http_serve.sh"
http_serve "$DIR/site" "$DIR/httpd.log"
HTTPD=$http_pid
port=$http_port
[ -n "$port" ] || { echo "young_host_crawl: http.server did not start: $(cat "$DIR/httpd.log")" >&2; exit 1; }
base=http://127.0.0.1:$port
for mode in templates no-templates; do
    opt=
    [ "$mode" = no-templates ] && opt=--no-templates
    timeout 120 "$SIMCRAWL" crawl --quiet $opt --delay 0 --concurrency 1 \
        --log "$DIR/$mode.jsonl" "$base/index.html"
    short=$(grep -E "\"url\":\"$base/(index|p[0-9][0-9])\.html\"" "$DIR/$mode.jsonl" |
        grep -c '"decision":"near-duplicate"' || true)
    mirror=$(grep "\"url\":\"$base/copy/long.html\"" "$DIR/$mode.jsonl" |
        grep -o '"decision":"[a-z-]*"' || true)
    echo "$mode: $short of 15 short pages dropped as near-duplicates; copy/long.html $mirror"
done
