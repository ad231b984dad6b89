# The cluster report (clusters --format html, cli/report_html.c): what it says, checked in
# the bytes and in a real browser (headless Chromium renders it; the DOM it builds is
# asserted on: clusters, links that resolve, exact and near marks, word diffs, the pages
# not fingerprinted). Sourced by tests/cli_test.sh (helpers ok, bad, expect_status,
# expect_grep; $TMP).
RP="$TMP/report"
mkdir -p "$RP/site/sub"
python3 - "$RP/site" <<'PYEOF'
import random, sys
d = sys.argv[1]; r = random.Random(11)
words = ['w%03d' % i for i in range(500)]
page = '<html><head><title>%s</title></head><body><nav>Home | Docs | About</nav><main><h1>%s</h1><p>%s</p></main></body></html>\n'
def w(n): return ' '.join(r.choice(words) for _ in range(n))
guide = w(400)
open(d + '/guide.html', 'w').write(page % ('User guide', 'User guide', guide))
open(d + '/sub/guide copy.html', 'w').write(page % ('User guide', 'User guide', guide))  # exact
g = guide.split(); g[50] = 'changed'; g[300:301] = ['two', 'inserted']
open(d + '/sub/guide-v2.html', 'w').write(page % ('User guide (v2)', 'User guide', ' '.join(g)))
open(d + '/z<b>&"odd".html', 'w').write(page % ('&lt;Odd &amp; "title"&gt;', 'User guide', guide + ' one more'))
for i in range(5):
    open(d + '/other%d.html' % i, 'w').write(page % ('Other %d' % i, 'Other', w(300)))
open(d + '/stub.html', 'w').write('<html><head><title>Stub</title></head><body><p>hi</p></body></html>')
PYEOF
# run where the report is kept, with a relative INPUT: its links are then relative too
case $SIMCRAWL in /*) RPBIN=$SIMCRAWL ;; *) RPBIN=$PWD/$SIMCRAWL ;; esac
expect_status 0 "report: clusters --format html" -- sh -c \
    'cd "$1" && SOURCE_DATE_EPOCH=1764115200 "$2" clusters --format html site' sh "$RP" "$RPBIN"
cp "$TMP/out" "$RP/report.html"
expect_grep "analysed 2025-11-26 00:00 UTC by simcrawl" "$RP/report.html" "report: the date (SOURCE_DATE_EPOCH)"
expect_grep "within Hamming distance <b class=\"k\">k = 3</b>" "$RP/report.html" "report: method and k"
expect_grep "<tr class=\"k\"><td class=\"d\">3</td>" "$RP/report.html" "report: the histogram marks k"
expect_grep "&lt;Odd &amp; &quot;title&quot;&gt;" "$RP/report.html" "report: titles escaped"
if grep -q '<Odd\|<b>&' "$RP/report.html"; then bad "report: raw markup from a page"; else ok; fi
expect_grep 'href="site/z%3Cb%3E%26%22odd%22.html"' "$RP/report.html" "report: file links relative, percent-encoded"
# the same inputs and date give the same bytes
(cd "$RP" && SOURCE_DATE_EPOCH=1764115200 "$RPBIN" clusters --format html site >"$RP/again.html" 2>/dev/null)
if cmp -s "$RP/report.html" "$RP/again.html"; then ok; else bad "report: not the same bytes twice"; fi
# an id with a scheme other than http(s)/ftp/file never becomes a link
printf '0000000000000000 javascript:alert(1)\n0000000000000001 http://example.test/a?b=1&c=2\n' >"$RP/l.txt"
expect_status 0 "report: --fingerprints" -- "$SIMCRAWL" clusters --format html --fingerprints "$RP/l.txt"
if grep -qi 'href="javascript' "$TMP/out"; then bad "report: a javascript: link"; else ok; fi
expect_grep 'href="http://example.test/a?b=1&amp;c=2"' "$TMP/out" "report: URL ids are links"

# In a real browser. Chromium is installed by make test (Makefile TEST_DEB_PKGS).
if command -v chromium >/dev/null 2>&1; then
    (cd "$RP" && timeout 120 chromium --headless --no-sandbox --disable-gpu \
        --user-data-dir="$RP/profile" --dump-dom "file://$RP/report.html" >"$RP/dom.html" 2>"$RP/chromium.err")
    if [ -s "$RP/dom.html" ]; then ok; else bad "report: chromium rendered nothing: $(tail -c 300 "$RP/chromium.err")"; fi
    python3 - "$RP" >"$RP/dom.check" 2>&1 <<'PYEOF'
import os, sys, urllib.parse
from html.parser import HTMLParser
d = sys.argv[1]
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.sections = []; s.links = []; s.badges = []; s.details = 0
        s.ids = {}; s.cur = None; s.skipped = 0; s.dels = s.ins = 0
    def handle_starttag(s, t, a):
        a = dict(a); c = a.get('class', '') or ''
        if t == 'section' and 'cluster' in c: s.sections.append(a.get('id'))
        if t == 'a' and 'doc' in c.split(): s.links.append(a.get('href'))
        if t == 'span' and 'badge' in c: s.badges.append(c.split()[1])
        if t == 'nav': s.innav = 1
        if t == 'details' and not getattr(s, 'innav', 0): s.details += 1
        if t == 'del': s.dels += 1
        if t == 'ins': s.ins += 1
        if t == 'tr' and c == 'skipped': s.skipped += 1
        if t == 'td' and a.get('id'): s.cur = a['id']
    def handle_endtag(s, t):
        if t == 'nav': s.innav = 0
    def handle_data(s, data):
        if s.cur: s.ids[s.cur] = data.strip(); s.cur = None
p = P(); p.feed(open(os.path.join(d, 'dom.html'), encoding='utf-8').read())
errors = []
def want(cond, what):
    if not cond: errors.append(what)
want(p.sections == ['c1'], 'one cluster section: %r' % p.sections)
want(p.ids.get('n-docs') == '9', 'documents 9: %r' % p.ids)
want(p.ids.get('n-clusters') == '1', 'clusters 1')
want(p.ids.get('n-exact') == '1' and p.ids.get('n-near') == '2', 'one exact copy, two near: %r' % p.ids)
want(p.ids.get('n-skipped') == '1' and p.skipped == 1, 'one page not fingerprinted')
want(sorted(p.badges) == ['exact', 'near', 'near', 'rep'], 'badges %r' % p.badges)
want(p.ids.get('n-in-clusters') == '4', 'four documents in the cluster')
want(p.details == 2 and p.dels >= 1 and p.ins >= 2, 'word diffs of the two near members: %d %d %d' % (p.details, p.dels, p.ins))
want(len(p.links) == 4, 'four member links: %r' % p.links)
for h in p.links:
    want(not h.startswith('file:') and os.path.isfile(os.path.join(d, urllib.parse.unquote(h))),
         'relative link that resolves: %s' % h)
print('\n'.join(errors) if errors else 'dom ok')
PYEOF
    if grep -q '^dom ok$' "$RP/dom.check"; then ok; else bad "report in chromium: $(cat "$RP/dom.check")"; fi
    (cd "$RP" && timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$RP/profile" --window-size=1100,900 --screenshot="$RP/shot.png" \
        "file://$RP/report.html" >/dev/null 2>&1)
    if [ "$(head -c 4 "$RP/shot.png" 2>/dev/null | od -An -c | tr -d ' ')" = "211PNG" ] &&
        [ "$(wc -c <"$RP/shot.png")" -gt 10000 ]; then ok; else bad "report: no screenshot from chromium"; fi
else
    bad "report: chromium is not installed (make test installs it: apt-get install chromium)"
fi
