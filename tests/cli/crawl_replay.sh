# The WARC of crawl --page-requisites replays in ReplayWeb.page (issue 18): a site on
# 127.0.0.1 (a page with an image, a stylesheet that @imports another and sets a background
# image with url(), a script that writes into the DOM; a second page whose image is a copy
# of the first's, archived as a revisit record) is crawled with -p, the site's server is
# stopped, and the page is replayed by ReplayWeb.page (npm package replaywebpage, vendored
# by make test-deps; its service worker is wabac.js) in headless Chromium
# (tests/tools/rwp_replay.py). The replayed page must show the archived text, the script's
# element, the colour of the imported stylesheet and the image, every requisite answered by
# the archive, none asked of the site. The same page from a crawl without -p is replayed
# beside it and must show none of them (the check can fail). Sourced by tests/cli_test.sh
# (helpers, $SIMCRAWL, $TMP); RWP_DIR is where make test-deps unpacked ReplayWeb.page.
# REPLAY_ROUNDS=N (make stress) runs it N times, every second round with the -p crawl
# stopped after 3 pages and resumed from --state (the WARC continued, the revisit found
# through the state's digests).
if [ -z "${RWP_DIR:-}" ]; then
    RWP_DIR=$(ls -d .cache/npm/replaywebpage-* 2>/dev/null | tail -n 1)
fi
. tests/cli/lib/npm_vendored.sh
ry_have=no
npm_vendored crawl_replay.sh ReplayWeb.page replaywebpage \
    "the replay of the crawl's WARC in it is not checked" "$RWP_DIR" sw.js ui.js && ry_have=yes
if [ "$ry_have" = yes ] && ! command -v chromium >/dev/null 2>&1; then
    ry_have=no
    bad "crawl_replay.sh: chromium is not installed (make test installs it: apt-get install chromium)"
fi
ry_round() {
RY=$TMP/replay$1
mkdir -p "$RY/site/static"
python3 - "$RY/site" <<'PYEOF'
import os, struct, sys, zlib
os.chdir(sys.argv[1])
def png(w, h, color):
    raw = b''.join(b'\x00' + bytes(color) * w for _ in range(h))
    def chunk(t, d): return struct.pack('>I', len(d)) + t + d + struct.pack('>I', zlib.crc32(t + d) & 0xffffffff)
    return (b'\x89PNG\r\n\x1a\n' + chunk(b'IHDR', struct.pack('>IIBBBBB', w, h, 8, 2, 0, 0, 0)) +
            chunk(b'IDAT', zlib.compress(raw)) + chunk(b'IEND', b''))
open('static/logo.png', 'wb').write(png(37, 23, (200, 30, 30)))
open('static/logo-copy.png', 'wb').write(png(37, 23, (200, 30, 30)))  # same bytes: a revisit
open('static/bg.png', 'wb').write(png(5, 5, (9, 9, 9)))
open('static/site.css', 'w').write('@import "more.css";\nbody { background-image: url(bg.png) }\n')
open('static/more.css', 'w').write('h1 { color: rgb(12, 34, 56); }\n')
open('static/app.js', 'w').write(
    'document.addEventListener("DOMContentLoaded", function () {\n'
    '  var p = document.createElement("p");\n  p.id = "fromjs";\n'
    '  p.textContent = "written by the archived script";\n  document.body.appendChild(p);\n});\n')
def page(title, words, body):
    return ('<!doctype html><html><head><title>%s</title><link rel="stylesheet" href="static/site.css">'
            '<script src="static/app.js"></script></head><body><h1>%s</h1>%s<p>%s</p></body></html>\n'
            % (title, title, body, words))
open('index.html', 'w').write(page('Archived heading', ' '.join('alpha%d' % i for i in range(300)),
    '<img src="static/logo.png"><a href="two.html">two</a>'))
open('two.html', 'w').write(page('Second page', ' '.join('beta%d' % i for i in range(300)),
    '<img src="static/logo-copy.png">'))
PYEOF
python3 tests/tools/dir_server.py --dir "$RY/site" --port-file "$RY/port" --log "$RY/requests.log" &
ry_srv=$!
i=0
while [ ! -f "$RY/port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
ry_base="http://127.0.0.1:$(cat "$RY/port")"
if [ $(($1 % 2)) = 0 ]; then
    expect_status 0 "crawl -p for the replay, 3 pages" -- timeout 60 "$SIMCRAWL" crawl --quiet \
        --delay 0 --robots no -p --max-pages 3 --state "$RY/st" --warc "$RY/c.warc.gz" "$ry_base/"
    expect_status 0 "crawl -p for the replay, resumed" -- timeout 60 "$SIMCRAWL" crawl --quiet \
        --delay 0 --robots no -p --state "$RY/st" --warc "$RY/c.warc.gz" "$ry_base/"
else
    expect_status 0 "crawl -p for the replay" -- timeout 60 "$SIMCRAWL" crawl --quiet --delay 0 \
        --robots no -p --warc "$RY/c.warc.gz" "$ry_base/"
fi
expect_status 0 "crawl without -p for the replay" -- timeout 60 "$SIMCRAWL" crawl --quiet \
    --delay 0 --robots no --warc "$RY/n.warc.gz" "$ry_base/"
kill "$ry_srv" 2>/dev/null
wait "$ry_srv" 2>/dev/null
# The site is down: whatever the replay shows comes from the WARC. Its port is taken over by
# a tripwire (an empty directory served, every request logged) that must hear nothing.
mkdir "$RY/empty"
python3 tests/tools/dir_server.py --dir "$RY/empty" --port "${ry_base##*:}" \
    --port-file "$RY/trip.port" --log "$RY/tripwire.log" &
ry_trip=$!
i=0
while [ ! -f "$RY/trip.port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
: >>"$RY/tripwire.log"
if timeout 120 python3 tests/tools/rwp_replay.py --rwp "$RWP_DIR" --live "$ry_base" --timeout 90 \
        --page "$RY/c.warc.gz" "$ry_base/" --page "$RY/c.warc.gz" "$ry_base/two.html" \
        --page "$RY/n.warc.gz" "$ry_base/" >"$RY/replay.json" 2>"$RY/replay.err"; then
    ok
    python3 - "$RY/replay.json" "$ry_base" >"$RY/replay.check" 2>&1 <<'PYEOF'
import json, sys
full, two, bare = json.load(open(sys.argv[1]))
base = sys.argv[2]
problems = []
def want(cond, what, page):
    if not cond:
        problems.append('%s (%s): %s' % (page['url'], 'with -p' if page is not bare else 'without -p', what))
def answered(page, path):
    """The status the service worker gave the replay of base+path, None if not asked."""
    for r in page['requests']:
        if r.get('url', '').endswith('mp_/' + base + path) and r.get('from_service_worker'):
            return r.get('status')
    return None
for page, h1, word, img in ((full, 'Archived heading', 'alpha299', 'logo.png'),
                            (two, 'Second page', 'beta299', 'logo-copy.png')):
    want(page['h1'] == h1, 'heading %r' % page['h1'], page)
    want(word in page['text'], 'the archived text is not shown', page)
    want(page['fromjs'] == 'written by the archived script', 'the script did not run: %r' % page['fromjs'], page)
    want(page['h1_color'] == 'rgb(12, 34, 56)', 'h1 colour %r, not the @imported stylesheet\'s' % page['h1_color'], page)
    want(page['img_natural_width'] == 37 and page['img_natural_height'] == 23,
         'image %sx%s' % (page['img_natural_width'], page['img_natural_height']), page)
    want('/static/bg.png' in (page['body_background'] or ''), 'body background %r' % page['body_background'], page)
    for path in ('/static/site.css', '/static/more.css', '/static/app.js', '/static/bg.png', '/static/' + img):
        want(answered(page, path) == 200, '%s answered %s by the archive' % (path, answered(page, path)), page)
for page in (full, two, bare):
    want(page['live_requests'] == [], 'asked the live site: %s' % page['live_requests'], page)
    want(page['location'].endswith('mp_/' + page['url']), 'replayed %s' % page['location'], page)
# without -p the page is archived, its requisites are not, and the replay shows it
want(bare['h1'] == 'Archived heading' and 'alpha299' in bare['text'], 'the page itself is not shown', bare)
want(bare['fromjs'] is None, 'the script ran', bare)
want(bare['img_natural_width'] == 0, 'the image was shown', bare)
want(bare['h1_color'] != 'rgb(12, 34, 56)', 'the stylesheet applied', bare)
want(answered(bare, '/static/logo.png') == 404, 'logo.png answered %s' % answered(bare, '/static/logo.png'), bare)
print('\n'.join(problems) if problems else 'replay ok')
PYEOF
    if grep -q '^replay ok$' "$RY/replay.check"; then ok
    else bad "crawl -p in ReplayWeb.page (round $1): $(head -c 1500 "$RY/replay.check")"; fi
else
    bad "crawl -p in ReplayWeb.page (round $1): the replay did not load: $(grep -v dbus "$RY/replay.err" | head -c 1200)"
fi
[ -f "$RY/trip.port" ] && [ ! -s "$RY/tripwire.log" ] && ok ||
    bad "crawl -p replay: the live site's port was asked: $(head -c 300 "$RY/tripwire.log")"
kill "$ry_trip" 2>/dev/null
wait "$ry_trip" 2>/dev/null
}
if [ "$ry_have" = yes ]; then
    ry_r=1
    while [ $ry_r -le "${REPLAY_ROUNDS:-1}" ]; do
        ry_round $ry_r
        ry_r=$((ry_r + 1))
    done
fi
