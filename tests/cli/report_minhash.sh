# clusters --method minhash --format html (issue 16): the cluster report over MinHash
# signatures (cli/report_html.c): the estimated Jaccard of each member (and the exact one,
# the texts being at hand) instead of the distance, the histogram over similarity with the
# threshold marked; checked in the bytes and in headless Chromium's DOM. Then MinHash
# signature lists (docs/MINHASH.md, "Signature lists"): fingerprint --method minhash writes
# one, --fingerprints reads it for pairs, clusters (html too), index add and query, and
# hostile lists are refused or reported by file and line. Sourced by tests/cli_test.sh.
RM="$TMP/report_minhash"
mkdir -p "$RM/site/sub"
python3 tests/tools/report_site.py pages "$RM/site"
case $SIMCRAWL in /*) RMBIN=$SIMCRAWL ;; *) RMBIN=$PWD/$SIMCRAWL ;; esac
expect_status 0 "minhash report: clusters --method minhash --format html" -- sh -c \
    'cd "$1" && SOURCE_DATE_EPOCH=1764115200 "$2" clusters --method minhash --format html --no-templates site' \
    sh "$RM" "$RMBIN"
cp "$TMP/out" "$RM/report.html"
expect_grep "MinHash signatures (128 values over 5-word shingles" "$RM/report.html" "minhash report: the method"
expect_grep "estimated Jaccard similarity <b class=\"k\">&ge; 0.8</b>" "$RM/report.html" "minhash report: the threshold"
expect_grep "MinHash LSH: 14 bands of 9 rows" "$RM/report.html" "minhash report: the bands"
expect_grep "<tr class=\"k\"><td class=\"d\">0.80&ndash;0.85</td>.*&larr; threshold" "$RM/report.html" \
    "minhash report: the histogram marks the threshold's bin"
expect_grep "<th class=\"d\">Jaccard</th>" "$RM/report.html" "minhash report: a Jaccard column, not distance"
if grep -q "Hamming" "$RM/report.html"; then bad "minhash report: speaks of Hamming distance"; else ok; fi
# the exact Jaccard shown for the edited copy is compare's (the same token strings)
"$SIMCRAWL" compare --method minhash --no-templates "$RM/site/guide.html" "$RM/site/sub/guide-v2.html" >"$RM/cmp" 2>&1 ||
    "$SIMCRAWL" compare --method minhash "$RM/site/guide.html" "$RM/site/sub/guide-v2.html" >"$RM/cmp" 2>&1
ex=$(sed -n 's/^minhash_jaccard: \([0-9.]*\)$/\1/p' "$RM/cmp" | awk '{ printf "%.3f", $1 }')
es=$(sed -n 's/^minhash_estimate: \([0-9.]*\)$/\1/p' "$RM/cmp" | awk '{ printf "%.3f", $1 }')
expect_grep "estimated Jaccard similarity\">$es</span><br><span class=\"note jexact\"[^>]*>exact $ex<" \
    "$RM/report.html" "minhash report: v2's estimate $es and exact Jaccard $ex, as compare gives them"
(cd "$RM" && SOURCE_DATE_EPOCH=1764115200 "$RMBIN" clusters --method minhash --format html --no-templates site >"$RM/again.html" 2>/dev/null)
if cmp -s "$RM/report.html" "$RM/again.html"; then ok; else bad "minhash report: not the same bytes twice"; fi

. tests/cli/lib/report_dom.sh
if report_dom "$RM" "minhash report"; then
    PYTHONPATH=tests/tools python3 - "$RM" >"$RM/dom.check" 2>&1 <<'PYEOF'
import os, sys, urllib.parse
from report_dom import done, parse, want
d = sys.argv[1]
p = parse(os.path.join(d, 'dom.html'))
want(p.sections == ['c1'], 'one cluster section: %r' % p.sections)
want(p.ids.get('n-docs') == '8', 'documents 8: %r' % p.ids)
want(p.ids.get('n-exact') == '1' and p.ids.get('n-near') == '1', 'one exact copy, one near: %r' % p.ids)
want(p.ids.get('n-skipped') == '1' and p.skipped == 1, 'one page not fingerprinted')
want(sorted(p.badges) == ['exact', 'near', 'rep'], 'badges %r' % p.badges)
est = [float(c.split()[0]) for c in p.cells]
want(len(est) == 3 and est[0] == 1.0 and est[1] == 1.0 and 0.8 <= est[2] < 1.0,
     'members most similar first, estimates %r' % p.cells)
want('k' in p.hist, 'a histogram row marks the threshold: %r' % p.hist)
want(len(p.links) == 3, 'three member links: %r' % p.links)
for h in p.links:
    want(os.path.isfile(os.path.join(d, urllib.parse.unquote(h))), 'relative link that resolves: %s' % h)
done()
PYEOF
    if grep -q '^dom ok$' "$RM/dom.check"; then ok; else bad "minhash report in chromium: $(cat "$RM/dom.check")"; fi
fi

# ---- signature lists ----
L=$RM/sigs.txt
expect_status 0 "fingerprint --method minhash" -- sh -c 'cd "$1" && "$2" fingerprint --method minhash --no-templates site/*.html site/sub/*.html' sh "$RM" "$RMBIN"
cp "$TMP/out" "$L"
expect_grep "^# simcrawl minhash signatures 3 shingle-words=5 num-perm=128 seed=73696d6d6e683031$" "$L" \
    "the list's header names version, k, h and seed"
expect_grep "^[0-9a-f]\{8\}\(,[0-9a-f]\{8\}\)\{127\}  site/guide.html$" "$L" "a line: 128 values, two spaces, the path"
expect_grep "stub.html: " "$TMP/err" "a page without a signature is named"
[ "$(grep -vc '^#' "$L")" = 8 ] && ok || bad "signature list: 8 lines wanted: $(grep -vc '^#' "$L")"
# the list gives the pages' pairs and clusters
(cd "$RM" && "$RMBIN" pairs --method minhash --no-templates site/*.html site/sub/*.html >"$RM/pairs.pages" 2>/dev/null)
(cd "$RM" && "$RMBIN" pairs --method minhash --fingerprints sigs.txt >"$RM/pairs.list" 2>"$RM/pairs.err")
if [ -s "$RM/pairs.list" ] && cmp -s "$RM/pairs.pages" "$RM/pairs.list"; then ok; else
    bad "pairs from the signature list differ from the pages': $(head -c 300 "$RM/pairs.list") / $(head -c 300 "$RM/pairs.err")"; fi
expect_status 0 "clusters html from a signature list" -- "$SIMCRAWL" clusters --method minhash --format html --fingerprints "$L"
expect_grep "<section class=\"cluster\" id=\"c1\">" "$TMP/out" "a cluster from the list in the report"
if grep -q "class=\"note jexact\"" "$TMP/out"; then bad "list report: an exact Jaccard without texts"; else ok; fi
expect_status 0 "index add --method minhash --fingerprints" -- "$SIMCRAWL" index add --method minhash --fingerprints "$L" "$RM/l.idx"
expect_grep "made with 8 documents" "$TMP/err" "the list's documents indexed"
expect_status 0 "query the list's index" -- "$SIMCRAWL" query --method minhash --index "$RM/l.idx" --no-templates "$RM/site/sub/guide-v2.html"
expect_grep "site/guide.html" "$TMP/out" "a page finds the list's near-duplicate"
# hostile lists: named by file and line, the good lines still read
{ sed -n 1p "$L"; sed -n 2p "$L"; echo "zz,00  bad"; sed -n 3p "$L" | sed 's/,[0-9a-f]*  /  /'; sed -n 4p "$L" | sed 's/  .*//'; sed -n 5p "$L"; sed -n 5p "$L"; } >"$RM/bad.txt"
expect_status 2 "a damaged signature list" -- "$SIMCRAWL" pairs --method minhash --fingerprints "$RM/bad.txt"
expect_grep "bad.txt:3: malformed signature" "$TMP/err" "a bad value: file and line"
expect_grep "bad.txt:4: malformed signature: fewer values" "$TMP/err" "too few values: file and line"
expect_grep "bad.txt:5: no space between the signature and the id" "$TMP/err" "no id: file and line"
expect_grep "bad.txt:7: duplicate id" "$TMP/err" "a repeated id: file and line"
sed 's/num-perm=128/num-perm=64/' "$L" >"$RM/h64.txt"
expect_status 2 "a list of other parameters" -- "$SIMCRAWL" pairs --method minhash --fingerprints "$RM/h64.txt"
expect_grep "h64.txt:1: signatures of --shingle-words 5 --num-perm 64" "$TMP/err" "other parameters named"
(cd "$RM" && "$RMBIN" fingerprint site/guide.html >"$RM/simhash.txt" 2>/dev/null)
expect_status 2 "a simhash list with --method minhash" -- "$SIMCRAWL" pairs --method minhash --fingerprints "$RM/simhash.txt"
expect_grep "simhash.txt:1: a simhash fingerprint list" "$TMP/err" "a simhash list named as one"
expect_status 1 "fingerprint --num-perm without minhash" -- "$SIMCRAWL" fingerprint --num-perm 64 "$RM/site/guide.html"
expect_status 1 "fingerprint --method minhash --idf" -- "$SIMCRAWL" fingerprint --method minhash --idf x "$RM/site/guide.html"
expect_status 0 "fingerprint --help" -- "$SIMCRAWL" fingerprint --help
expect_grep "\-\-method simhash|minhash" "$TMP/out" "fingerprint --help lists --method"
