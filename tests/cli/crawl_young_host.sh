# simcrawl crawl: the first pages of a host are not dropped as near-duplicates of each
# other for the menu they share before the template table knows it (docs/FINGERPRINT.md,
# "Where T comes from", Streams: a young host's page is a near-duplicate only when it is one
# also without the blocks it shares with the host's earlier pages). A generated site on
# python3's http.server at 127.0.0.1 (a random free port, no robots.txt): index.html and
# p01..p14.html are each a 600-word menu paragraph that the extractor keeps, 6 words of
# their own and a footer (many within distance 3 of each other by the menu alone: p01.html
# of index.html; a crawl that fingerprints every page with the menu, --no-templates, drops
# most of them), then long.html (the menu, 100 sentences of its own, a date line)
# and copy/long.html, its mirror with the date changed. --concurrency 1: the pages come in
# link order, so the mirror comes once the host has counted 16 pages (no longer young). The
# log must mark index and p01..p14 new, long.html new and copy/long.html a near-duplicate
# of it; the same crawl with --no-templates drops p01 (so the first check can fail).
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
YH=$TMP/crawl_young_host
YH_HTTPD=
trap '[ -n "$YH_HTTPD" ] && kill "$YH_HTTPD" 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 2' INT TERM
mkdir -p "$YH/site/copy"
python3 - "$YH/site" <<'EOF'
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
open(os.path.join(root, "copy/long.html"), "w").write(
    body.replace("2026-11-27", "2026-11-28"))
EOF
yh_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server --bind 127.0.0.1 --directory "$YH/site" "$yh_port" >"$YH/httpd.log" 2>&1 &
YH_HTTPD=$!
yh_up=
for _ in $(seq 50); do
    if python3 -c "import socket; socket.create_connection(('127.0.0.1', $yh_port), 1).close()" 2>/dev/null; then
        yh_up=1
        break
    fi
    kill -0 "$YH_HTTPD" 2>/dev/null || break
    sleep 0.1
done
if [ -z "$yh_up" ]; then
    bad "crawl_young_host: http.server did not start: $(head -c 300 "$YH/httpd.log")"
else
    yh_base=http://127.0.0.1:$yh_port
    expect_status 0 "crawl_young_host: crawl ends" -- timeout 120 "$SIMCRAWL" crawl --quiet \
        --delay 0 --concurrency 1 --log "$YH/log.jsonl" "$yh_base/index.html"
    yh_new=0
    for p in index p01 p02 p03 p04 p05 p06 p07 p08 p09 p10 p11 p12 p13 p14 long; do
        if grep "\"url\":\"$yh_base/$p.html\"" "$YH/log.jsonl" | grep -q '"decision":"new"'; then
            yh_new=$((yh_new + 1))
        else
            bad "crawl_young_host: $p.html has 6 words of its own under the menu, yet is not new: $(grep "/$p.html\"" "$YH/log.jsonl" | head -c 400)"
        fi
    done
    [ "$yh_new" = 16 ] && ok
    if grep "\"url\":\"$yh_base/copy/long.html\"" "$YH/log.jsonl" |
        grep '"decision":"near-duplicate"' | grep -q "\"duplicate_of\":\"$yh_base/long.html\""; then
        ok
    else
        bad "crawl_young_host: the mirror copy/long.html is not a near-duplicate of long.html: $(grep 'long.html' "$YH/log.jsonl" | head -c 600)"
    fi
    # the control: fingerprinted with the menu, the second page goes
    expect_status 0 "crawl_young_host: crawl --no-templates ends" -- timeout 120 "$SIMCRAWL" \
        crawl --quiet --no-templates --delay 0 --concurrency 1 --log "$YH/nt.jsonl" \
        "$yh_base/index.html"
    if grep "\"url\":\"$yh_base/p01.html\"" "$YH/nt.jsonl" | grep -q '"decision":"near-duplicate"'; then
        ok
    else
        bad "crawl_young_host: with --no-templates p01.html is not dropped (the menu does not make the pages alike: the test cannot fail): $(grep '/p01.html"' "$YH/nt.jsonl" | head -c 400)"
    fi
fi
if [ -n "$YH_HTTPD" ]; then
    kill "$YH_HTTPD" 2>/dev/null
    wait "$YH_HTTPD" 2>/dev/null
    YH_HTTPD=
fi
trap 'rm -rf "$TMP"' EXIT
trap - INT TERM
