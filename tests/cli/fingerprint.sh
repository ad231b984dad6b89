# simcrawl fingerprint / compare: output formats, exit codes, '--', stdin, errors.
# Sourced by tests/cli_test.sh (helpers expect_status, expect_grep; $SIMCRAWL, $TMP).
FPD=tests/data/fingerprint
HEX16='[0-9a-f]\{16\}'

# one line per input, "16hex  PATH", in input order
expect_status 0 "fingerprint two pages" -- "$SIMCRAWL" fingerprint $FPD/page1.html $FPD/other.html
expect_grep "^$HEX16  $FPD/page1.html\$" "$TMP/out" "fingerprint line format"
if [ "$(wc -l <"$TMP/out")" = 2 ] && sed -n 2p "$TMP/out" | grep -q "  $FPD/other.html\$"; then ok; else bad "fingerprint: one line per input, in order"; fi
if [ ! -s "$TMP/err" ]; then ok; else bad "fingerprint: nothing on stderr on success"; fi

# --text: the fox sentence has the golden vector of docs/FINGERPRINT.md (vectors.txt)
expect_status 0 "fingerprint --text" -- "$SIMCRAWL" fingerprint --text $FPD/fox.txt
expect_grep "^470f22e9ebde271a  $FPD/fox.txt\$" "$TMP/out" "--text gives the golden fingerprint (vectors.txt)"

# stdin ("-") gives the same fingerprint as the file
"$SIMCRAWL" fingerprint $FPD/page1.html | cut -c1-16 >"$TMP/fp_file"
"$SIMCRAWL" fingerprint - <$FPD/page1.html >"$TMP/fp_stdin"
expect_grep "^$(cat "$TMP/fp_file")  -\$" "$TMP/fp_stdin" "stdin is read for -"

# boilerplate does not count: the edited copy (changed menu, one added line) is within 3
"$SIMCRAWL" fingerprint $FPD/page1-edit.html | cut -c1-16 >"$TMP/fp_edit"
if [ "$(cat "$TMP/fp_file")" != "$(cat "$TMP/fp_edit")" ]; then ok; else bad "edited page has its own fingerprint"; fi

# too little text: named on stderr, no line, the other inputs go on; it is an answer
# about the page, not a failed run: exit 0 (unreadable inputs give 2, below)
expect_status 0 "fingerprint with a too-short page" -- "$SIMCRAWL" fingerprint $FPD/short.html $FPD/page1.html
expect_grep "^simcrawl fingerprint: $FPD/short.html: too little text to fingerprint (2 words)\$" "$TMP/err" "too-short message"
expect_grep "  $FPD/page1.html\$" "$TMP/out" "other inputs still fingerprinted"
if ! grep -q "short.html" "$TMP/out"; then ok; else bad "no line for a too-short page"; fi
# ... and the same for the INPUTs of pairs (neardup-score checks its exit status)
expect_status 0 "pairs with a too-short page" -- "$SIMCRAWL" pairs $FPD/short.html $FPD/page1.html $FPD/page1-edit.html
expect_grep "^simcrawl pairs: $FPD/short.html: too little text to fingerprint (2 words)\$" "$TMP/err" "pairs names the too-short page"
expect_status 2 "pairs: a missing file among too-short ones" -- "$SIMCRAWL" pairs $FPD/short.html "$TMP/no-such-file.html"

# errors name the file
expect_status 2 "missing file" -- "$SIMCRAWL" fingerprint "$TMP/no-such-file.html"
expect_grep "no-such-file.html: No such file or directory" "$TMP/err" "missing file named"
expect_status 2 "directory" -- "$SIMCRAWL" fingerprint "$TMP"
expect_grep ": is a directory" "$TMP/err" "directory refused"
: >"$TMP/empty.html"
expect_status 0 "empty file" -- "$SIMCRAWL" fingerprint "$TMP/empty.html"
expect_grep "empty.html: " "$TMP/err" "empty file named"
if [ ! -s "$TMP/out" ]; then ok; else bad "no line for an empty file"; fi
expect_status 2 "a missing file among too-short ones" -- "$SIMCRAWL" fingerprint $FPD/short.html "$TMP/no-such-file.html"
printf 'the quick \377\376 brown fox jumps' >"$TMP/bad.txt"
expect_status 2 "invalid UTF-8 with --text" -- "$SIMCRAWL" fingerprint --text "$TMP/bad.txt"
expect_grep "bad.txt: invalid UTF-8 at byte offset 10" "$TMP/err" "invalid UTF-8 offset"
head -c 3000 /bin/sh >"$TMP/binary.html"
expect_status 2 "binary input" -- "$SIMCRAWL" fingerprint "$TMP/binary.html"
expect_grep "binary.html: " "$TMP/err" "binary file named"

# '--' ends options: a file named like an option
cp $FPD/page1.html "$TMP/--text"
expect_status 0 "-- ends options" -- "$SIMCRAWL" fingerprint -- "$TMP/--text"
expect_grep "^$(cat "$TMP/fp_file")  $TMP/--text\$" "$TMP/out" "file after -- read as HTML"

# usage errors exit 1
expect_status 1 "no input" -- "$SIMCRAWL" fingerprint
expect_grep "try 'simcrawl fingerprint --help'" "$TMP/err" "usage hint"
expect_status 1 "unknown option" -- "$SIMCRAWL" fingerprint --frobnicate $FPD/page1.html
expect_status 1 "stdin twice" -- "$SIMCRAWL" fingerprint - -
expect_status 1 "--idf without file" -- "$SIMCRAWL" fingerprint --idf
expect_status 0 "fingerprint --help" -- "$SIMCRAWL" fingerprint --help
expect_grep "^usage: simcrawl fingerprint" "$TMP/out" "help text"

# --idf-out writes an IDF file that --idf reads back; a bad one names its line
expect_status 0 "--idf-out" -- "$SIMCRAWL" fingerprint --idf-out "$TMP/idf.txt" $FPD/page1.html $FPD/page1-edit.html $FPD/other.html
expect_grep "^# simcrawl idf 1\$" "$TMP/idf.txt" "idf file header"
expect_grep "^# docs 3\$" "$TMP/idf.txt" "idf file counts the documents"
expect_grep "^$HEX16	2\$" "$TMP/idf.txt" "idf file entries"
expect_status 0 "--idf" -- "$SIMCRAWL" fingerprint --idf "$TMP/idf.txt" $FPD/page1.html
expect_grep "^$HEX16  $FPD/page1.html\$" "$TMP/out" "fingerprint with --idf"
printf '# simcrawl idf 1\n# docs 2\n00000000000000ff\t3\n' >"$TMP/bad-idf.txt"
expect_status 2 "bad idf file" -- "$SIMCRAWL" fingerprint --idf "$TMP/bad-idf.txt" $FPD/page1.html
expect_grep "bad-idf.txt:3: document frequency must be between 1 and the document count" "$TMP/err" "bad idf line named"
expect_status 2 "missing idf file" -- "$SIMCRAWL" fingerprint --idf "$TMP/nope.txt" $FPD/page1.html
expect_grep "cannot read idf file" "$TMP/err" "missing idf file"

# compare: key: value lines, exit 0 whatever the verdict
expect_status 0 "compare near-duplicate" -- "$SIMCRAWL" compare $FPD/page1.html $FPD/page1-edit.html
for key in a b fingerprint_a fingerprint_b words_a words_b shingles_a shingles_b distance \
    simhash_similarity cosine jaccard k verdict; do
    expect_grep "^$key: " "$TMP/out" "compare prints $key"
done
expect_grep "^verdict: near-duplicate\$" "$TMP/out" "edited copy is a near-duplicate"
expect_grep "^k: 3\$" "$TMP/out" "default k is 3"
expect_status 0 "compare different" -- "$SIMCRAWL" compare $FPD/page1.html $FPD/other.html
expect_grep "^verdict: different\$" "$TMP/out" "other page is different"
# unrelated pages share only common words ("the", "of"): few shared shingles (words)
if awk '/^jaccard: /{j=$2} /^cosine: /{c=$2} END{exit !(j > 0 && j < 0.2 && c < 0.5)}' "$TMP/out"; then ok; else bad "unrelated pages: jaccard < 0.2, cosine < 0.5"; fi
expect_status 0 "compare identical" -- "$SIMCRAWL" compare $FPD/page1.html - <$FPD/page1.html
expect_grep "^verdict: identical\$" "$TMP/out" "same page is identical"
expect_grep "^distance: 0\$" "$TMP/out" "identical distance"
expect_grep "^cosine: 1.000000\$" "$TMP/out" "identical cosine"
expect_status 0 "compare --k 0" -- "$SIMCRAWL" compare --k 0 $FPD/page1.html $FPD/page1-edit.html
expect_grep "^verdict: different\$" "$TMP/out" "k 0 makes the edit different"
expect_status 0 "compare --json" -- "$SIMCRAWL" compare --json $FPD/page1.html $FPD/other.html
expect_grep '^{"a":.*"distance":[0-9]*,.*"verdict":"different"}$' "$TMP/out" "compare json object"
expect_status 1 "compare one input" -- "$SIMCRAWL" compare $FPD/page1.html
expect_status 1 "compare bad k" -- "$SIMCRAWL" compare --k 65 $FPD/page1.html $FPD/other.html
expect_status 2 "compare too-short input" -- "$SIMCRAWL" compare $FPD/page1.html $FPD/short.html
expect_grep "^simcrawl compare: $FPD/short.html: too little text to fingerprint" "$TMP/err" "compare names the failing input"
if [ ! -s "$TMP/out" ]; then ok; else bad "compare prints nothing when an input fails"; fi
# the extractor's depth cap (issue 12 item 6): an option of every fingerprinting command;
# a page it cuts is named once on stderr; a bad value is exit 1
python3 -c "print('<p>shallow words are here and there and everywhere in this page of text</p>' + '<div>' * 40 + '<p>deep words</p>' + '</div>' * 40)" > "$TMP/fpdeep.html"
expect_status 0 "fingerprint --max-depth 20" -- "$SIMCRAWL" fingerprint --max-depth 20 "$TMP/fpdeep.html"
expect_grep "^simcrawl fingerprint: .*fpdeep.html: [0-9]* elements nested deeper than 20 skipped, with 10 bytes of text (--max-depth)$" "$TMP/err" "fingerprint names the cut page"
if [ "$(wc -l < "$TMP/err")" = 1 ]; then ok; else bad "fingerprint: one warning for the cut page"; fi
cut_fp=$(cut -c1-16 "$TMP/out")
expect_status 0 "fingerprint default depth" -- "$SIMCRAWL" fingerprint "$TMP/fpdeep.html"
if [ -s "$TMP/err" ]; then bad "fingerprint: no warning under the default depth"; else ok; fi
if [ "$(cut -c1-16 "$TMP/out")" != "$cut_fp" ]; then ok; else bad "the cut text is not fingerprinted"; fi
expect_status 1 "fingerprint --max-depth 0" -- "$SIMCRAWL" fingerprint --max-depth 0 "$TMP/fpdeep.html"
expect_status 1 "fingerprint --max-depth x" -- "$SIMCRAWL" fingerprint --max-depth x "$TMP/fpdeep.html"
cp "$TMP/fpdeep.html" "$TMP/fpdeep2.html"
expect_status 0 "pairs --max-depth 20" -- "$SIMCRAWL" pairs --max-depth 20 "$TMP/fpdeep.html" "$TMP/fpdeep2.html"
expect_grep "^simcrawl pairs: .*fpdeep2.html: [0-9]* elements nested deeper than 20 skipped" "$TMP/err" "pairs names the cut page"
if [ "$(grep -c 'nested deeper' "$TMP/err")" = 2 ]; then ok; else bad "pairs: one warning a cut page (not again in the template pass)"; fi
expect_status 1 "pairs --max-depth 0" -- "$SIMCRAWL" pairs --max-depth 0 "$TMP/fpdeep.html"
expect_grep "max-depth wants a number from 1 to 1000000" "$TMP/err" "pairs: bad --max-depth named"
expect_status 1 "clusters --max-depth -3" -- "$SIMCRAWL" clusters --max-depth -3 "$TMP/fpdeep.html"
expect_status 0 "clusters --max-depth 20" -- "$SIMCRAWL" clusters --max-depth 20 "$TMP/fpdeep.html"
expect_grep "nested deeper than 20" "$TMP/err" "clusters names the cut page"
expect_status 0 "index add --max-depth 20" -- "$SIMCRAWL" index add "$TMP/fpdeep.idx" --max-depth 20 "$TMP/fpdeep.html"
expect_grep "nested deeper than 20" "$TMP/err" "index add names the cut page"

# The page's name (docs/FINGERPRINT.md section 6): two class pages that share every line
# but their heading (tests/data/name: avltree and rbtree, within 2 bits by their text
# alone) are two pages; another fetch of one with a sentence edited is its near-duplicate.
expect_status 0 "pairs over two pages of different names" -- "$SIMCRAWL" pairs --no-templates tests/data/name
if [ "$(cat "$TMP/out")" = "$(printf '1\ttests/data/name/avltree-refetch.html\ttests/data/name/avltree.html')" ]; then ok; else bad "pairs: pages of different names paired, or the refetch not: $(cat "$TMP/out")"; fi
expect_status 0 "extract --json names the heading" -- "$SIMCRAWL" extract --json tests/data/name/rbtree.html
expect_grep '"heading":"Class template rbtree"' "$TMP/out" "the heading of tests/data/name/rbtree.html"
expect_status 0 "compare two pages of different names" -- "$SIMCRAWL" compare tests/data/name/avltree.html tests/data/name/rbtree.html
expect_grep "^names: different$" "$TMP/out" "compare: names different"
expect_grep "^verdict: different$" "$TMP/out" "compare: pages of different names are different"
expect_status 0 "compare a page and its refetch" -- "$SIMCRAWL" compare --json tests/data/name/avltree.html tests/data/name/avltree-refetch.html
expect_grep '"names":"same","distance":1,' "$TMP/out" "compare --json: names same"
expect_grep '"verdict":"near-duplicate"' "$TMP/out" "compare --json: the refetch is a near-duplicate"
