# simcrawl crawl --page-requisites (issue 18): the images, stylesheets (and what they
# import), scripts and icons of kept pages are fetched through the same frontier and
# archived once by payload, so that the WARC replays. Against a directory served on
# 127.0.0.1 (tests/tools/dir_server.py); the WARC is checked as a replay tool's index would
# read it (tests/tools/warc_replay_check.py: its own HTML and CSS parsing). Sourced by
# tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
PR=$TMP/requisites
mkdir -p "$PR/site/docs" "$PR/site/static/img"
python3 - "$PR/site" <<'PYEOF'
import os, struct, sys, zlib
os.chdir(sys.argv[1])
def png(w, h, color):
    raw = b''.join(b'\x00' + bytes(color) * w for _ in range(h))
    def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) +
            chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
for name, (w, c) in {'logo': (4, (200, 30, 30)), 'small': (2, (0, 0, 200)), 'large': (8, (0, 200, 0)),
                     'bg': (3, (9, 9, 9)), 'inline': (5, (1, 2, 3)), 'fancy': (6, (4, 5, 6))}.items():
    open('static/img/%s.png' % name, 'wb').write(png(w, w, c))
open('static/img/logo-copy.png', 'wb').write(png(4, 4, (200, 30, 30)))  # the same bytes: a revisit
open('favicon.ico', 'wb').write(png(1, 1, (7, 7, 7)))
open('static/site.css', 'w').write('@import "more.css";\nbody { background: url(img/bg.png) }\n'
                                   '/* url(img/commented.png) */\n')
open('static/more.css', 'w').write('h1 { background-image: url("img/fancy.png"); }\n')
open('static/app.js', 'w').write('console.log("hi");\n')
head = ('<head><title>%s</title><link rel="stylesheet" href="../static/site.css">'
        '<link rel="icon" href="/favicon.ico"><script src="../static/app.js"></script>'
        '<style>.x{background:url(../static/img/inline.png)}</style></head>')
def page(title, words, body):
    return '<html>%s<body><h1>%s</h1>%s<p>%s</p></body></html>\n' % (head % title, title, body, words)
open('docs/index.html', 'w').write(page('Docs', ' '.join('word%d' % i for i in range(300)),
    '<img src="../static/img/logo.png" srcset="../static/img/small.png 1x, ../static/img/large.png 2x">'
    '<a href="two.html">two</a> <a href="three.html">three</a>'))
open('docs/two.html', 'w').write(page('Two', ' '.join('other%d' % i for i in range(300)),
    '<img src="../static/img/logo-copy.png"><img src="data:image/png;base64,AAAA">'))
open('docs/three.html', 'w').write(page('Three', ' '.join('third%d' % i for i in range(300)),
    '<div style="background: url(\'../static/img/large.png\')"></div>'))
open('robots.txt', 'w').write('User-agent: *\nDisallow: /static/img/large.png\n')
PYEOF
python3 tests/tools/dir_server.py --dir "$PR/site" --port-file "$PR/port" --log "$PR/requests.log" &
pr_srv=$!
i=0
while [ ! -f "$PR/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
pr_base="http://127.0.0.1:$(cat "$PR/port")"
pr_crawl() { timeout 60 "$SIMCRAWL" crawl --quiet --delay 0 --concurrency 4 --per-host 2 "$@"; }

# --no-parent: the pages under /docs/ only, their requisites wherever they are; stopped
# after 5 requests and resumed (--state), so that the copy of the logo meets the original's
# payload digest from the state, not from memory
expect_status 0 "crawl -p, 5 requests" -- pr_crawl --robots no --no-parent -p --max-pages 5 \
    --state "$PR/st" --warc "$PR/c.warc.gz" --log "$PR/c.jsonl" "$pr_base/docs/"
# (not --quiet: the summary counts the requisites)
expect_status 0 "crawl -p resumed" -- timeout 60 "$SIMCRAWL" crawl --delay 0 --concurrency 4 \
    --per-host 2 --robots no --no-parent -p --state "$PR/st" --warc "$PR/c.warc.gz" \
    --log "$PR/c.jsonl" "$pr_base/docs/"
expect_grep "page requisites: [0-9]* fetched" "$TMP/err" "the summary counts the requisites"
python3 tests/tools/warc_replay_check.py "$PR/c.warc.gz" >"$PR/replay.out" 2>&1
if grep -q "^replay ok: 3 pages, [0-9]* requisites, 13 responses, 1 revisits" "$PR/replay.out"; then ok
else bad "crawl -p: the WARC does not replay: $(head -c 600 "$PR/replay.out")"; fi
dups=$(grep -v '^/robots.txt' "$PR/requests.log" | sort | uniq -d | wc -l)
[ "$dups" = 0 ] && ok || bad "crawl -p: $dups URLs requested twice"
expect_grep '"url":"[^"]*/static/img/fancy.png".*"referrer":"[^"]*/static/more.css".*"requisite":true' \
    "$PR/c.jsonl" "crawl -p: what a stylesheet imports is a requisite, found on it"
expect_grep '"url":"[^"]*/static/img/logo-copy.png".*"decision":"exact-duplicate".*"duplicate_of":"[^"]*/static/img/logo.png"' \
    "$PR/c.jsonl" "crawl -p: a copy of an archived image is an exact duplicate"
if grep -q 'commented.png\|data:image' "$PR/c.jsonl"; then bad "crawl -p: a URL from a CSS comment or data:"; else ok; fi
# clusters over the log leave the requisites out
expect_status 0 "clusters over a log with requisites" -- "$SIMCRAWL" clusters --format jsonl "$PR/c.jsonl"
if grep -q "png\|css" "$TMP/out"; then bad "clusters over a log: a requisite clustered"; else ok; fi
# without -p: no requisite fetched, and the WARC does not replay (the check can fail)
expect_status 0 "crawl without -p" -- pr_crawl --robots no --warc "$PR/n.warc.gz" "$pr_base/docs/"
if python3 tests/tools/warc_replay_check.py "$PR/n.warc.gz" >/dev/null 2>&1; then
    bad "the replay check passes a WARC without requisites"; else ok; fi
# robots.txt is obeyed for requisites too; the config key
printf '[crawl]\npage-requisites = yes\n' >"$PR/p.conf"
expect_status 0 "crawl page-requisites = yes, robots.txt" -- pr_crawl --config "$PR/p.conf" \
    --log "$PR/r.jsonl" "$pr_base/docs/"
expect_grep '"url":"[^"]*/static/img/large.png".*"decision":"robots-disallowed"' "$PR/r.jsonl" \
    "crawl -p: a requisite robots.txt disallows is not fetched"
expect_grep '"url":"[^"]*/static/img/small.png".*"requisite":true' "$PR/r.jsonl" "crawl -p: srcset"
expect_status 0 "crawl --help" -- "$SIMCRAWL" crawl --help
expect_grep "\-\-page-requisites" "$TMP/out" "crawl --help lists --page-requisites"
kill "$pr_srv" 2>/dev/null
wait "$pr_srv" 2>/dev/null
