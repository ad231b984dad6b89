# Command-line tests of --method minhash (compare, pairs, clusters, query, index add|stats)
# and of query --top for both methods (sourced by tests/cli_test.sh). Real pages:
# tests/data/fingerprint/page1.html and its edited copy page1-edit.html (Jaccard of their
# 5-word shingles 0.95), other.html (unrelated), and the extractor fixtures.
MH=$TMP/mh
mkdir -p "$MH/site"
FP=tests/data/fingerprint
cp "$FP/page1.html" "$MH/site/a.html"
cp "$FP/page1-edit.html" "$MH/site/b.html"
cp "$FP/other.html" "$MH/site/c.html"
cp tests/data/extract/001.html "$MH/site/d.html"
cp tests/data/extract/002.html "$MH/site/e.html"

# compare: exact and estimated Jaccard of the k-shingle sets, and the verdict
expect_status 0 "compare minhash" -- "$SIMCRAWL" compare --method minhash "$FP/page1.html" "$FP/page1-edit.html"
expect_grep '^minhash_jaccard: 0\.954887$' "$TMP/out" "exact Jaccard of the 5-word shingles"
expect_grep '^minhash_estimate: 0\.9' "$TMP/out" "the estimate near it"
expect_grep '^verdict: near-duplicate$' "$TMP/out" "near-duplicate at 0.8"
expect_grep '^threshold: 0.8$' "$TMP/out" "default threshold 0.8"
expect_status 0 "compare minhash high threshold" -- "$SIMCRAWL" compare --method minhash --threshold 0.99 "$FP/page1.html" "$FP/page1-edit.html"
expect_grep '^verdict: different$' "$TMP/out" "different at 0.99"
expect_status 0 "compare minhash json" -- "$SIMCRAWL" compare --json --method minhash "$FP/page1.html" "$FP/other.html"
expect_grep '"minhash_jaccard":0.0,' "$TMP/out" "unrelated pages share no 5-word shingle"
expect_grep '"verdict":"different"' "$TMP/out" "unrelated pages are different"
expect_status 0 "compare minhash same page" -- "$SIMCRAWL" compare --method minhash "$FP/page1.html" "$FP/page1.html"
expect_grep '^verdict: identical$' "$TMP/out" "same page identical"
expect_grep '^minhash_estimate: 1.000000$' "$TMP/out" "same page estimate 1"
expect_status 0 "compare --shingle-words 1" -- "$SIMCRAWL" compare --method minhash --shingle-words 1 "$FP/page1.html" "$FP/other.html"
expect_grep '^shingle_words: 1$' "$TMP/out" "k recorded"
if grep -q '^minhash_jaccard: 0.000000$' "$TMP/out"; then bad "single words of two English pages overlap"; else ok; fi

# bad --threshold and mixed options: exit 1, the option named
for t in 0 1.5 -0.2 abc 0.8x "" nan; do
    expect_status 1 "compare --threshold '$t'" -- "$SIMCRAWL" compare --method minhash --threshold "$t" "$FP/page1.html" "$FP/other.html"
    expect_grep "threshold" "$TMP/err" "bad threshold '$t' named"
done
expect_status 1 "pairs --threshold 2" -- "$SIMCRAWL" pairs --method minhash --threshold 2 "$MH/site"
expect_grep "above 0 and at most 1" "$TMP/err" "threshold range named"
expect_status 1 "pairs --threshold without minhash" -- "$SIMCRAWL" pairs --threshold 0.8 "$MH/site"
expect_grep "apply to --method minhash" "$TMP/err" "threshold needs minhash"
expect_status 1 "pairs --k with minhash" -- "$SIMCRAWL" pairs --method minhash --k 3 "$MH/site"
expect_status 1 "bad --method" -- "$SIMCRAWL" pairs --method lsh "$MH/site"
expect_grep "simhash or minhash" "$TMP/err" "methods named"
expect_status 1 "--num-perm 0" -- "$SIMCRAWL" pairs --method minhash --num-perm 0 "$MH/site"
expect_status 1 "--shingle-words 33" -- "$SIMCRAWL" pairs --method minhash --shingle-words 33 "$MH/site"
printf '0000000000000000 x\n' >"$MH/l.txt"
expect_status 2 "minhash with a simhash --fingerprints list" -- "$SIMCRAWL" pairs --method minhash --fingerprints "$MH/l.txt"
expect_grep "l.txt:1: a simhash fingerprint list" "$TMP/err" "simhash fingerprint lists refused, named"
printf '# simcrawl minhash signatures 3 garbage\n' >"$MH/l.txt"
expect_status 2 "a minhash list with a malformed header" -- "$SIMCRAWL" pairs --method minhash --fingerprints "$MH/l.txt"
mh_version=$("$SIMCRAWL" fingerprint --method minhash "$FP/page1.html" 2>/dev/null | sed -n '1s/^# simcrawl minhash signatures \([0-9]*\) .*/\1/p')
expect_grep "l.txt:1: malformed header (want '# simcrawl minhash signatures ${mh_version:-none} shingle-words=K" "$TMP/err" "malformed minhash header named, with the version this simcrawl writes"

# pairs: {"a","b","jaccard"}, each pair once
expect_status 0 "pairs minhash jsonl" -- "$SIMCRAWL" pairs --method minhash --format jsonl "$MH/site"
expect_grep "^{\"a\": \"$MH/site/a.html\", \"b\": \"$MH/site/b.html\", \"jaccard\": 0\.9[0-9]*}\$" "$TMP/out" "the edited pair"
if [ "$(wc -l <"$TMP/out")" = 1 ]; then ok; else bad "pairs minhash: one pair expected: $(cat "$TMP/out")"; fi
expect_status 0 "pairs minhash text" -- "$SIMCRAWL" pairs --method minhash "$MH/site"
expect_grep "^0\.9[0-9]*	$MH/site/a.html	$MH/site/b.html\$" "$TMP/out" "text pair line"
expect_status 0 "pairs --help" -- "$SIMCRAWL" pairs --help
expect_grep "method" "$TMP/out" "pairs --help documents --method"
expect_grep "threshold" "$TMP/out" "pairs --help documents --threshold"

# clusters
expect_status 0 "clusters minhash" -- "$SIMCRAWL" clusters --method minhash --format jsonl "$MH/site"
expect_grep "\"size\": 2, \"representative\": \"$MH/site/a.html\"" "$TMP/out" "one cluster of two"
expect_grep "\"jaccard\": 1.0000}, {\"id\": \"$MH/site/b.html\"" "$TMP/out" "members with their estimate"
# clusters --method minhash --format html: tests/cli/report_minhash.sh

# index add, stats, query --top, pairs --index
expect_status 0 "index add minhash" -- "$SIMCRAWL" index add --method minhash "$MH/m.idx" "$MH/site/a.html" "$MH/site/c.html" "$MH/site/d.html"
expect_grep "minhash: 5-word shingles, 128 values, 14 bands x 9 rows, threshold 0.8" "$TMP/err" "parameters reported"
expect_status 0 "index stats minhash" -- "$SIMCRAWL" index stats "$MH/m.idx"
expect_grep "^method: minhash$" "$TMP/out" "stats names the method"
expect_grep "^documents: 3$" "$TMP/out" "stats documents"
expect_grep "^bands: 14 x 9 rows" "$TMP/out" "stats bands"
expect_status 0 "index stats minhash jsonl" -- "$SIMCRAWL" index stats --format jsonl "$MH/m.idx"
expect_grep '"method": "minhash"' "$TMP/out" "jsonl stats method"
expect_status 0 "query minhash" -- "$SIMCRAWL" query --method minhash --index "$MH/m.idx" "$MH/site/b.html"
expect_grep "^$MH/site/b.html	0\.9[0-9]*	$MH/site/a.html\$" "$TMP/out" "query finds the original"
expect_status 0 "query minhash --top 2" -- "$SIMCRAWL" query --method minhash --index "$MH/m.idx" --top 2 --format jsonl "$MH/site/b.html"
expect_grep '"top": 2, "found": 1}' "$TMP/out" "found fewer than --top"
expect_grep "1 of --top 2" "$TMP/err" "fewer than --top said on stderr"
expect_status 0 "query minhash low threshold" -- "$SIMCRAWL" query --method minhash --index "$MH/m.idx" --threshold 0.01 --top 5 "$MH/site/a.html"
expect_grep "^$MH/site/a.html	1.0000	$MH/site/a.html\$" "$TMP/out" "nearest first"
# adding again: ids already there are skipped; b joins
expect_status 0 "index add minhash again" -- "$SIMCRAWL" index add --method minhash "$MH/m.idx" "$MH/site/b.html" "$MH/site/e.html"
expect_grep "added 2 documents, now 5" "$TMP/err" "second add"
expect_status 0 "index add an id already there" -- "$SIMCRAWL" index add --method minhash "$MH/m.idx" "$MH/site/b.html"
expect_grep "1 document already in the index (the same id, added before) skipped" "$TMP/err" "id already there counted once"
expect_status 1 "index add other threshold" -- "$SIMCRAWL" index add --method minhash --threshold 0.5 "$MH/m.idx" "$MH/site/e.html"
expect_grep "made for --threshold 0.8" "$TMP/err" "threshold of the index named"
# other shingling than the index's: refused, naming the index's own parameters (they were
# read after the index was freed: garbage numbers, or a crash under ASan)
expect_status 1 "index add other --num-perm" -- "$SIMCRAWL" index add --method minhash --num-perm 64 "$MH/m.idx" "$MH/site/e.html"
expect_grep "^simcrawl index: index $MH/m.idx was made with --shingle-words 5 --num-perm 128$" "$TMP/err" \
    "another --num-perm: the index's --shingle-words and --num-perm named"
# (a copy of c: a third copy of a.html would make a's blocks the collection's template)
cp "$FP/other.html" "$MH/c2.html"
expect_status 0 "pairs --index minhash" -- "$SIMCRAWL" pairs --method minhash --index "$MH/m.idx" --format jsonl "$MH/c2.html"
if [ "$(wc -l <"$TMP/out")" = 1 ]; then ok; else bad "pairs --index: the new page pairs with c: $(cat "$TMP/out")"; fi
expect_grep "^{\"a\": \"$MH/site/c.html\", \"b\": \"$MH/c2.html\", \"jaccard\": 1.0000}" "$TMP/out" "copy found at 1.0"
expect_status 0 "index stats after pairs --index" -- "$SIMCRAWL" index stats "$MH/m.idx"
expect_grep "^documents: 6$" "$TMP/out" "pairs --index added the page"

# the other method's index: a clear error both ways
expect_status 0 "simhash index" -- "$SIMCRAWL" index add "$MH/s.idx" "$MH/site/a.html" "$MH/site/c.html"
expect_status 2 "minhash query on a simhash index" -- "$SIMCRAWL" query --method minhash --index "$MH/s.idx" "$MH/site/b.html"
expect_grep "holds simhash fingerprints" "$TMP/err" "simhash index named"
expect_status 2 "simhash query on a minhash index" -- "$SIMCRAWL" query --index "$MH/m.idx" "$MH/site/b.html"
expect_grep "a minhash index, not a simhash index (use --method minhash)" "$TMP/err" "minhash index named"
expect_status 2 "simhash add to a minhash index" -- "$SIMCRAWL" index add "$MH/m.idx" "$MH/site/e.html"
expect_grep "use --method minhash" "$TMP/err" "add names the method"
expect_status 2 "minhash add to a simhash index" -- "$SIMCRAWL" index add --method minhash "$MH/s.idx" "$MH/site/e.html"
expect_grep "holds simhash fingerprints" "$TMP/err" "add names the simhash index"

# damaged minhash index files: truncated, a flipped byte, garbage with the magic
head -c 100 "$MH/m.idx" >"$MH/cut.idx"
expect_status 2 "truncated minhash index" -- "$SIMCRAWL" query --method minhash --index "$MH/cut.idx" "$MH/site/b.html"
expect_grep "cut.idx: file shorter than its 128-byte header" "$TMP/err" "truncation named"
cp "$MH/m.idx" "$MH/flip.idx"
printf 'X' | dd of="$MH/flip.idx" bs=1 seek=300 conv=notrunc 2>/dev/null
expect_status 2 "flipped byte" -- "$SIMCRAWL" index stats "$MH/flip.idx"
expect_grep "checksum mismatch at byte offset 128" "$TMP/err" "body checksum named"
printf 'SIMCRMHXgarbage' >"$MH/junk.idx"
expect_status 2 "garbage after the magic" -- "$SIMCRAWL" query --method minhash --index "$MH/junk.idx" "$MH/site/b.html"
expect_grep "shorter than its 128-byte header" "$TMP/err" "short header named"
expect_status 2 "missing minhash index" -- "$SIMCRAWL" query --method minhash --index "$MH/none.idx" "$MH/site/b.html"
expect_grep "none.idx" "$TMP/err" "missing index named"

# query --top with simhash: the N nearest, and fewer than N said
expect_status 0 "simhash query --top 1" -- "$SIMCRAWL" query --index "$MH/s.idx" --top 1 "$MH/site/b.html"
if [ "$(wc -l <"$TMP/out")" = 1 ]; then ok; else bad "--top 1 gives one line: $(cat "$TMP/out")"; fi
expect_grep "a.html" "$TMP/out" "nearest is a.html"
expect_status 0 "simhash query --top 3" -- "$SIMCRAWL" query --index "$MH/s.idx" --top 3 --format jsonl "$MH/site/b.html"
expect_grep '"top": 3, "found": 1}' "$TMP/out" "found fewer than --top (simhash)"
expect_grep "1 of --top 3: only 1 indexed document within k = 3" "$TMP/err" "fewer said (simhash)"
expect_status 1 "query --top 0" -- "$SIMCRAWL" query --index "$MH/s.idx" --top 0 "$MH/site/b.html"
expect_status 0 "query --help" -- "$SIMCRAWL" query --help
expect_grep "top N" "$TMP/out" "query --help documents --top"

# dedup --method minhash: near-duplicates by the Jaccard estimate, logged with "jaccard"
expect_status 0 "dedup minhash" -- "$SIMCRAWL" dedup --method minhash --log - "$MH/site"
expect_grep "\"uri\":\"$MH/site/b.html\",\"file\":\"$MH/site/b.html\",\"decision\":\"near-duplicate\",\"fingerprint\":\"[0-9a-f]*\",\"duplicate_of\":\"$MH/site/a.html\",\"jaccard\":0\.9" "$TMP/out" "edited page dropped with its Jaccard"
if [ "$(grep -c '"decision":"new"' "$TMP/out")" = 4 ]; then ok; else bad "dedup minhash: 4 new pages expected: $(cat "$TMP/out")"; fi
expect_grep "4 new, 1 near-duplicate" "$TMP/err" "dedup summary"
expect_status 0 "dedup minhash high threshold" -- "$SIMCRAWL" dedup --method minhash --threshold 0.99 --log - "$MH/site"
if grep -q near-duplicate "$TMP/out"; then bad "at 0.99 the edited page is new"; else ok; fi
# dedup --method minhash --index: tests/cli/dedup_minhash.sh
expect_status 1 "dedup minhash --k" -- "$SIMCRAWL" dedup --method minhash --k 3 "$MH/site"
expect_status 1 "dedup --threshold 0" -- "$SIMCRAWL" dedup --method minhash --threshold 0 "$MH/site"
expect_status 1 "dedup --threshold without minhash" -- "$SIMCRAWL" dedup --threshold 0.5 "$MH/site"
