# simcrawl crawl --report FILE and simcrawl clusters over a crawl's log or state (issue
# 18): the cluster report of what a crawl dropped and why, from the crawl's own decisions.
# Against a directory served on 127.0.0.1 (tests/tools/dir_server.py): a guide page, an
# exact copy of it, a near copy (two words changed), a page too short to fingerprint, a
# dead link; checked in the bytes, in the clusters of the log and of the state, and in a
# real browser (headless Chromium's DOM, as tests/cli/report.sh). Sourced by
# tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
CR=$TMP/crawl_report
mkdir -p "$CR/site/docs"
python3 - "$CR/site" <<'PYEOF'
import random, sys
d = sys.argv[1]; r = random.Random(18)
words = ['w%03d' % i for i in range(500)]
page = '<html><head><title>%s</title></head><body><main><h1>%s</h1><p>%s</p></main>%s</body></html>\n'
def w(n): return ' '.join(r.choice(words) for _ in range(n))
guide = w(400)
links = ''.join('<a href="%s">%s</a> ' % (u, u) for u in
                ('docs/guide.html', 'docs/copy.html', 'docs/guide-v2.html', 'docs/stub.html',
                 'docs/gone.html', 'docs/other.html', 'docs/notes.txt'))
open(d + '/index.html', 'w').write(page % ('Home', 'Home', w(300), links))
open(d + '/docs/guide.html', 'w').write(page % ('User guide', 'User guide', guide, ''))
open(d + '/docs/copy.html', 'w').write(page % ('User guide', 'User guide', guide, ''))
g = guide.split(); g[50] = 'changed'; g[300] = 'altered'
open(d + '/docs/guide-v2.html', 'w').write(page % ('User guide (v2)', 'User guide', ' '.join(g), ''))
open(d + '/docs/other.html', 'w').write(page % ('Other', 'Other', w(300), ''))
open(d + '/docs/notes.txt', 'w').write('plain text, not a page\n')
open(d + '/docs/stub.html', 'w').write('<html><head><title>Stub</title></head><body><p>hi</p></body></html>\n')
PYEOF
python3 tests/tools/dir_server.py --dir "$CR/site" --port-file "$CR/port" &
cr_srv=$!
i=0
while [ ! -f "$CR/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
cr_base="http://127.0.0.1:$(cat "$CR/port")"
# one worker: the guide is decided before its copies (the order of the links)
cr_crawl() { timeout 60 "$SIMCRAWL" crawl --quiet --delay 0 --robots no --workers 1 "$@"; }

# neither --warc nor --log: the report alone
expect_status 0 "crawl --report alone" -- cr_crawl --report "$CR/report.html" "$cr_base/"
if grep -q "neither --warc nor --log" "$TMP/err"; then bad "crawl --report: warned that nothing is kept"; else ok; fi
expect_grep "<section class=\"cluster\" id=\"c1\">" "$CR/report.html" "crawl --report: a cluster"
expect_grep "href=\"$cr_base/docs/guide.html\"" "$CR/report.html" "crawl --report: the kept page linked"
expect_grep "User guide (v2)" "$CR/report.html" "crawl --report: the near copy's title"
expect_grep "$cr_base/docs/stub.html" "$CR/report.html" "crawl --report: the stub listed"
expect_grep "error: http status 404" "$CR/report.html" "crawl --report: the dead link listed with its reason"

# the log's clusters and the state's are the crawl's: the same as the report's
expect_status 0 "crawl --log --state --report" -- cr_crawl --log "$CR/crawl.jsonl" \
    --state "$CR/st" --report "$CR/report2.html" "$cr_base/"
expect_grep '"title":"User guide (v2)"' "$CR/crawl.jsonl" "the log has the pages' titles"
# DESIGN.md's log fields: "error" only for errors, "reason" why a URL was filtered
expect_grep '"decision":"filtered","reason":"not html: text/plain"' "$CR/crawl.jsonl" \
    "a filtered URL's line says why in reason"
expect_grep '"decision":"error","error":"http status 404"' "$CR/crawl.jsonl" "an error's line says it in error"
expect_status 0 "clusters over a crawl log" -- "$SIMCRAWL" clusters "$CR/crawl.jsonl"
cp "$TMP/out" "$CR/log.txt"
printf 'cluster 1: 3 documents\n  0\t%s/docs/guide.html\n  0\t%s/docs/copy.html\n' "$cr_base" "$cr_base" >"$CR/want.txt"
head -3 "$CR/log.txt" | cmp -s - "$CR/want.txt" && ok || bad "clusters over a crawl log: $(cat "$CR/log.txt")"
grep -q "^  [1-3]	$cr_base/docs/guide-v2.html\$" "$CR/log.txt" && ok || bad "clusters over a log: the near copy: $(cat "$CR/log.txt")"
[ "$(grep -c '^cluster' "$CR/log.txt")" = 1 ] && ok || bad "clusters over a crawl log: one cluster"
expect_status 0 "clusters over a crawl state" -- "$SIMCRAWL" clusters "$CR/st"
cmp -s "$TMP/out" "$CR/log.txt" && ok || bad "clusters over the state differ from the log's: $(cat "$TMP/out")"
expect_status 0 "clusters --format jsonl over a crawl log" -- "$SIMCRAWL" clusters --format jsonl "$CR/crawl.jsonl"
expect_grep "\"representative\": \"$cr_base/docs/guide.html\"" "$TMP/out" "clusters jsonl: the kept page represents"
expect_status 1 "clusters over a log and pages" -- "$SIMCRAWL" clusters "$CR/crawl.jsonl" "$CR/site"
expect_grep "is not a crawl log or state" "$TMP/err" "mixed inputs are refused"
printf '{"url":"x","decision":"new"}\nnot json\n' >"$CR/bad.jsonl"
expect_status 2 "clusters over a damaged log" -- "$SIMCRAWL" clusters "$CR/bad.jsonl"
expect_grep "bad.jsonl:2: not a crawl log line" "$TMP/err" "a damaged log line is named"
# a fingerprint is 16 hex digits (strtoull took "-000000000000001" for ffffffffffffffff and
# made b a near-duplicate at distance 1), a distance 0..64: other lines are damaged ones
printf '%s\n' '{"url":"a","decision":"new","fingerprint":"-000000000000001"}' \
    '{"url":"b","decision":"near-duplicate","duplicate_of":"a","distance":1,"fingerprint":"fffffffffffffffe"}' \
    '{"url":"c","decision":"new","fingerprint":" 00000000000000f"}' \
    '{"url":"d","decision":"new","fingerprint":"000000000000000f","distance":2147483648}' >"$CR/signed.jsonl"
expect_status 2 "clusters over a log with signed fingerprints" -- "$SIMCRAWL" clusters "$CR/signed.jsonl"
expect_grep "signed.jsonl:1: not a crawl log line (the fingerprint is not 16 hex digits)" "$TMP/err" \
    "a signed fingerprint is named"
expect_grep "signed.jsonl:3: not a crawl log line (the fingerprint is not 16 hex digits)" "$TMP/err" \
    "a fingerprint with a space is named"
expect_grep "signed.jsonl:4: not a crawl log line (the distance is not a whole number from 0 to 64)" \
    "$TMP/err" "a distance out of range is named"
# a finished --state crawl run again writes the report of the whole crawl
rm -f "$CR/report2.html"
expect_status 0 "crawl --state finished, --report" -- cr_crawl --log "$CR/crawl.jsonl" \
    --state "$CR/st" --report "$CR/report2.html" "$cr_base/"
expect_grep "id=\"n-clusters\">1<" "$CR/report2.html" "the report of a finished crawl from its state"
expect_status 0 "crawl --help" -- "$SIMCRAWL" crawl --help
expect_grep "\-\-report FILE" "$TMP/out" "crawl --help lists --report"

if command -v chromium >/dev/null 2>&1; then
    (cd "$CR" && timeout 120 chromium --headless --no-sandbox --disable-gpu \
        --user-data-dir="$CR/profile" --dump-dom "file://$CR/report.html" >"$CR/dom.html" 2>"$CR/chromium.err")
    if [ -s "$CR/dom.html" ]; then ok; else bad "crawl report: chromium rendered nothing: $(tail -c 300 "$CR/chromium.err")"; fi
    python3 - "$CR" "$cr_base" >"$CR/dom.check" 2>&1 <<'PYEOF'
import os, sys
from html.parser import HTMLParser
d, base = sys.argv[1], sys.argv[2]
class P(HTMLParser):
    def __init__(s):
        super().__init__(); s.sections = []; s.links = []; s.badges = []; s.details = 0
        s.ids = {}; s.cur = None; s.skipped = []; s.dels = s.ins = 0; s.skip_td = 0
    def handle_starttag(s, t, a):
        a = dict(a); c = a.get('class', '') or ''
        if t == 'section' and 'cluster' in c: s.sections.append(a.get('id'))
        if t == 'a' and 'doc' in c.split(): s.links.append(a.get('href'))
        if t == 'span' and 'badge' in c: s.badges.append(c.split()[1])
        if t == 'nav': s.innav = 1
        if t == 'details' and not getattr(s, 'innav', 0): s.details += 1
        if t == 'del': s.dels += 1
        if t == 'ins': s.ins += 1
        if t == 'tr' and c == 'skipped': s.skip_td = 1
        if t == 'a' and s.skip_td: s.skipped.append(a.get('href')); s.skip_td = 0
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
want(p.ids.get('n-docs') == '5', 'documents 5 (index, guide, copy, v2, other): %r' % p.ids)
want(p.ids.get('n-exact') == '1' and p.ids.get('n-near') == '1', 'one exact copy, one near: %r' % p.ids)
want(sorted(p.badges) == ['exact', 'near', 'rep'], 'badges %r' % p.badges)
want(p.links == [base + '/docs/guide.html', base + '/docs/copy.html', base + '/docs/guide-v2.html'],
     'members nearest first, linked: %r' % p.links)
want(p.details == 1 and p.dels >= 2 and p.ins >= 2, 'the word diff of the near copy: %d %d %d' % (p.details, p.dels, p.ins))
want(p.ids.get('n-skipped') == '2' and sorted(p.skipped) == [base + '/docs/gone.html', base + '/docs/stub.html'],
     'the stub and the dead link not fingerprinted: %r %r' % (p.ids.get('n-skipped'), p.skipped))
print('\n'.join(errors) if errors else 'dom ok')
PYEOF
    if grep -q '^dom ok$' "$CR/dom.check"; then ok; else bad "crawl report in chromium: $(cat "$CR/dom.check")"; fi
else
    bad "crawl report: chromium is not installed (make test installs it: apt-get install chromium)"
fi
kill "$cr_srv" 2>/dev/null
wait "$cr_srv" 2>/dev/null
