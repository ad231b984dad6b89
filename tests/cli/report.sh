# The cluster report (clusters --format html, cli/report_html.c): what it says, checked in
# the bytes and in a real browser (headless Chromium renders it; the DOM it builds is
# asserted on: clusters, links that resolve, exact and near marks, word diffs, the pages
# not fingerprinted). Sourced by tests/cli_test.sh (helpers ok, bad, expect_status,
# expect_grep; $TMP).
RP="$TMP/report"
mkdir -p "$RP/site/sub"
python3 tests/tools/report_site.py pages "$RP/site" --odd
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
. tests/cli/lib/report_dom.sh
if report_dom "$RP" "report"; then
    PYTHONPATH=tests/tools python3 - "$RP" >"$RP/dom.check" 2>&1 <<'PYEOF'
import os, sys, urllib.parse
from report_dom import done, parse, want
d = sys.argv[1]
p = parse(os.path.join(d, 'dom.html'))
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
done()
PYEOF
    if grep -q '^dom ok$' "$RP/dom.check"; then ok; else bad "report in chromium: $(cat "$RP/dom.check")"; fi
    (cd "$RP" && timeout 120 chromium --headless --no-sandbox --disable-gpu --hide-scrollbars \
        --user-data-dir="$RP/profile" --window-size=1100,900 --screenshot="$RP/shot.png" \
        "file://$RP/report.html" >/dev/null 2>&1)
    if [ "$(head -c 4 "$RP/shot.png" 2>/dev/null | od -An -c | tr -d ' ')" = "211PNG" ] &&
        [ "$(wc -c <"$RP/shot.png")" -gt 10000 ]; then ok; else bad "report: no screenshot from chromium"; fi
fi
