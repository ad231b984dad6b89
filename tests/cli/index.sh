# Command-line tests of pairs, clusters, query and index (sourced by tests/cli_test.sh).
IX=$TMP/ix
mkdir -p "$IX/site/sub"
# fingerprint lists: a-b 3, b-c 3 (a-c 6), d far, e identical to a
cat >"$IX/l.txt" <<'LIST'
# a comment line and a blank line are skipped

0000000000000000 a.html
0000000000000007 b.html
000000000000003f c.html
ffffffffffffffff d.html
0000000000000000  e <&> "x".html
LIST

expect_status 0 "pairs text" -- "$SIMCRAWL" pairs --fingerprints "$IX/l.txt"
printf '3\ta.html\tb.html\n0\ta.html\te <&> "x".html\n3\tb.html\tc.html\n3\tb.html\te <&> "x".html\n' >"$IX/want"
if cmp -s "$IX/want" "$TMP/out"; then ok; else bad "pairs text output: $(cat "$TMP/out")"; fi
expect_status 0 "pairs jsonl k=1" -- "$SIMCRAWL" pairs --k 1 --format jsonl --fingerprints "$IX/l.txt"
expect_grep '^{"a": "a.html", "b": "e <&> \\"x\\".html", "distance": 0}$' "$TMP/out" "pairs jsonl line"
if [ "$(wc -l <"$TMP/out")" = 1 ]; then ok; else bad "pairs --k 1: one pair expected"; fi
expect_status 0 "pairs --k=0 form" -- "$SIMCRAWL" pairs --k=0 --fingerprints="$IX/l.txt"
if [ "$(wc -l <"$TMP/out")" = 1 ]; then ok; else bad "pairs --k=0: one pair expected"; fi

# usage errors: exit 1
expect_status 1 "pairs --k 8" -- "$SIMCRAWL" pairs --k 8 --fingerprints "$IX/l.txt"
expect_grep "0 to 7" "$TMP/err" "k range named"
expect_status 1 "pairs --k x" -- "$SIMCRAWL" pairs --k x --fingerprints "$IX/l.txt"
expect_status 1 "pairs bad format" -- "$SIMCRAWL" pairs --format xml --fingerprints "$IX/l.txt"
expect_status 1 "pairs no input" -- "$SIMCRAWL" pairs
expect_status 1 "pairs unknown option" -- "$SIMCRAWL" pairs --frobnicate x
expect_status 1 "stdin twice" -- "$SIMCRAWL" pairs --fingerprints - -
expect_status 0 "pairs --help" -- "$SIMCRAWL" pairs --help
expect_grep "DISTANCE<TAB>A<TAB>B" "$TMP/out" "pairs --help documents the text format"

# bad input: exit 2, file and line named, the rest still compared
printf '0000000000000000 a\nnot a fingerprint\n000000000000000g b\n0000000000000001\n0000000000000001 a\n0000000000000003 c\n' >"$IX/bad.txt"
expect_status 2 "malformed lines" -- "$SIMCRAWL" pairs --fingerprints "$IX/bad.txt"
expect_grep "bad.txt:2: expected 16 hex digits" "$TMP/err" "malformed line named"
expect_grep "bad.txt:3:" "$TMP/err" "bad hex digit line named"
expect_grep "bad.txt:4: missing id" "$TMP/err" "missing id named"
expect_grep "bad.txt:5: duplicate id 'a'" "$TMP/err" "duplicate id named"
expect_grep "^2	a	c$" "$TMP/out" "good lines still compared"
: >"$IX/empty.txt"
expect_status 2 "empty list" -- "$SIMCRAWL" pairs --fingerprints "$IX/empty.txt"
expect_grep "no documents" "$TMP/err" "empty input explained"
expect_status 2 "missing list" -- "$SIMCRAWL" pairs --fingerprints "$IX/nope.txt"
expect_grep "nope.txt" "$TMP/err" "missing list named"
head -c 3000 /dev/urandom >"$IX/binary.txt"
expect_status 2 "binary list" -- "$SIMCRAWL" pairs --fingerprints "$IX/binary.txt"
# a list read from standard input, and the escaped form of 'simcrawl fingerprint'
printf '\\0000000000000000  new\\nline\n0000000000000000 plain\n' >"$IX/esc.txt"
expect_status 0 "escaped ids from stdin" -- sh -c "\"$SIMCRAWL\" pairs --fingerprints - <\"$IX/esc.txt\""
expect_grep '^0	new\\x0aline	plain$' "$TMP/out" "escaped id read back, control char shown as \\xHH"

# clusters
expect_status 0 "clusters text" -- "$SIMCRAWL" clusters --fingerprints "$IX/l.txt"
expect_grep "^cluster 1: 4 documents$" "$TMP/out" "cluster size"
expect_grep "^  0	a.html$" "$TMP/out" "representative first at distance 0"
expect_grep "^  6	c.html$" "$TMP/out" "member farther than k through b"
expect_status 0 "clusters jsonl" -- "$SIMCRAWL" clusters --format jsonl --fingerprints "$IX/l.txt"
expect_grep '^{"cluster": 1, "size": 4, "representative": "a.html", "members": \[{"id": "a.html", "distance": 0}' "$TMP/out" "clusters jsonl"
expect_status 0 "clusters html" -- "$SIMCRAWL" clusters --format html --fingerprints "$IX/l.txt"
expect_grep "<!DOCTYPE html>" "$TMP/out" "html page"
expect_grep "e &lt;&amp;&gt; &quot;x&quot;.html" "$TMP/out" "ids escaped in html"
if grep -qi -e "<script" -e "src=" -e "<link" "$TMP/out"; then bad "html report loads resources"; else ok; fi
SOURCE_DATE_EPOCH=86400 "$SIMCRAWL" clusters --format html --fingerprints "$IX/l.txt" >"$IX/r1.html" 2>/dev/null
SOURCE_DATE_EPOCH=86400 "$SIMCRAWL" clusters --format html --fingerprints "$IX/l.txt" >"$IX/r2.html" 2>/dev/null
if cmp -s "$IX/r1.html" "$IX/r2.html"; then ok; else bad "clusters output not deterministic"; fi

# index add / stats / query
expect_status 0 "index add new" -- "$SIMCRAWL" index add "$IX/x.idx" --fingerprints "$IX/l.txt"
expect_status 0 "index stats" -- "$SIMCRAWL" index stats "$IX/x.idx"
expect_grep "^documents: 5$" "$TMP/out" "stats documents"
expect_grep "^distinct fingerprints: 4$" "$TMP/out" "stats distinct"
expect_grep "^design: 4 tables" "$TMP/out" "stats design"
expect_grep "^bucket sizes: min" "$TMP/out" "stats buckets"
expect_status 0 "index stats jsonl" -- "$SIMCRAWL" index stats --format jsonl "$IX/x.idx"
expect_grep '"documents": 5' "$TMP/out" "stats jsonl"
printf '0000000000000001 f.html\n0000000000000000 a.html\n' >"$IX/more.txt"
# an id the index already has is not a failure: said once, with a count (issue 18)
expect_status 0 "index add again (an id already there is skipped)" -- "$SIMCRAWL" index add "$IX/x.idx" --fingerprints "$IX/more.txt"
expect_grep "1 document already in the index (the same id, added before) skipped" "$TMP/err" "ids already there counted once"
if grep -q "duplicate id" "$TMP/err"; then bad "an id already in the index warned per id"; else ok; fi
expect_status 0 "stats after add" -- "$SIMCRAWL" index stats "$IX/x.idx"
expect_grep "^documents: 6$" "$TMP/out" "reopened index grew by one"
printf '0000000000000001 q1\nf0f0f0f0f0f0f0f0 q2\n' >"$IX/q.txt"
expect_status 0 "query text" -- "$SIMCRAWL" query --index "$IX/x.idx" --fingerprints "$IX/q.txt"
printf 'q1\t0\tf.html\nq1\t1\ta.html\nq1\t1\te <&> "x".html\nq1\t2\tb.html\n' >"$IX/want"
if cmp -s "$IX/want" "$TMP/out"; then ok; else bad "query text output: $(cat "$TMP/out")"; fi
expect_status 0 "query jsonl" -- "$SIMCRAWL" query --format jsonl --k 0 --index "$IX/x.idx" --fingerprints "$IX/q.txt"
expect_grep '^{"page": "q1", "fingerprint": "0000000000000001", "matches": \[{"id": "f.html", "distance": 0}\]}$' "$TMP/out" "query jsonl"
expect_grep '^{"page": "q2", "fingerprint": "f0f0f0f0f0f0f0f0", "matches": \[\]}$' "$TMP/out" "query jsonl without match"
expect_status 1 "query without --index" -- "$SIMCRAWL" query --fingerprints "$IX/q.txt"
expect_status 2 "query missing index" -- "$SIMCRAWL" query --index "$IX/none.idx" --fingerprints "$IX/q.txt"
expect_grep "none.idx" "$TMP/err" "missing index named"
expect_status 0 "index with k=1" -- "$SIMCRAWL" index add --k 1 "$IX/k1.idx" --fingerprints "$IX/l.txt"
expect_status 1 "query k above the index's" -- "$SIMCRAWL" query --k 3 --index "$IX/k1.idx" --fingerprints "$IX/q.txt"
expect_status 1 "index add with other k" -- "$SIMCRAWL" index add --k 2 "$IX/k1.idx"
expect_status 0 "index add --tables 10" -- "$SIMCRAWL" index add --tables 10 "$IX/t10.idx" --fingerprints "$IX/l.txt"
expect_status 0 "stats of 10 tables" -- "$SIMCRAWL" index stats "$IX/t10.idx"
expect_grep "^design: 10 tables: 5 blocks" "$TMP/out" "10-table design"
expect_status 1 "index add --tables 5" -- "$SIMCRAWL" index add --tables 5 "$IX/t5.idx"
expect_status 1 "index no subcommand" -- "$SIMCRAWL" index
expect_status 1 "index bad subcommand" -- "$SIMCRAWL" index drop x

# damaged index files: exit 2, file and offset named
head -c 100 "$IX/x.idx" >"$IX/trunc.idx"
expect_status 2 "truncated index" -- "$SIMCRAWL" index stats "$IX/trunc.idx"
expect_grep "trunc.idx.*truncated" "$TMP/err" "truncated index explained"
size=$(wc -c <"$IX/x.idx")
head -c $((size - 8)) "$IX/x.idx" >"$IX/trunc2.idx"
expect_status 2 "index truncated in the body" -- "$SIMCRAWL" query --index "$IX/trunc2.idx" --fingerprints "$IX/q.txt"
expect_grep "offset" "$TMP/err" "offset named"
cp "$IX/x.idx" "$IX/flip.idx"
printf 'X' | dd of="$IX/flip.idx" bs=1 seek=200 conv=notrunc 2>/dev/null
expect_status 2 "damaged index" -- "$SIMCRAWL" index stats "$IX/flip.idx"
expect_grep "checksum" "$TMP/err" "checksum mismatch explained"
cp "$IX/x.idx" "$IX/v6.idx"
printf '\006' | dd of="$IX/v6.idx" bs=1 seek=8 conv=notrunc 2>/dev/null
expect_status 2 "other version" -- "$SIMCRAWL" index stats "$IX/v6.idx"
expect_grep "version" "$TMP/err" "version explained"
for v in 1 4; do
    cp "$IX/x.idx" "$IX/v$v.idx"
    printf "\\00$v" | dd of="$IX/v$v.idx" bs=1 seek=8 conv=notrunc 2>/dev/null
    expect_status 2 "version $v index (older fingerprints)" -- "$SIMCRAWL" index stats "$IX/v$v.idx"
    expect_grep "rebuild the index" "$TMP/err" "version $v: rebuild explained"
done
expect_status 2 "not an index" -- "$SIMCRAWL" index stats "$IX/l.txt"
expect_grep "not a simcrawl index" "$TMP/err" "wrong file type explained"

# pairs --index: only pairs with a new input, then they are added
rm -f "$IX/p.idx"
expect_status 0 "pairs --index first" -- "$SIMCRAWL" pairs --index "$IX/p.idx" --fingerprints "$IX/l.txt"
if [ "$(wc -l <"$TMP/out")" = 4 ]; then ok; else bad "pairs --index first run: 4 pairs"; fi
printf '0000000000000003 g.html\n' >"$IX/g.txt"
expect_status 0 "pairs --index second" -- "$SIMCRAWL" pairs --index "$IX/p.idx" --fingerprints "$IX/g.txt"
printf '2\ta.html\tg.html\n1\tb.html\tg.html\n2\te <&> "x".html\tg.html\n' >"$IX/want"
if cmp -s "$IX/want" "$TMP/out"; then ok; else bad "pairs --index output: $(cat "$TMP/out")"; fi

# pairs --from-index: all pairs of a saved index's documents, the file only read
expect_status 0 "pairs --from-index" -- "$SIMCRAWL" pairs --from-index "$IX/p.idx"
printf '3\ta.html\tb.html\n0\ta.html\te <&> "x".html\n2\ta.html\tg.html\n3\tb.html\tc.html\n3\tb.html\te <&> "x".html\n1\tb.html\tg.html\n2\te <&> "x".html\tg.html\n' >"$IX/want"
if cmp -s "$IX/want" "$TMP/out"; then ok; else bad "pairs --from-index output: $(cat "$TMP/out")"; fi
cat "$IX/l.txt" "$IX/g.txt" >"$IX/lg.txt"
"$SIMCRAWL" pairs --fingerprints "$IX/lg.txt" >"$IX/lg.out" 2>/dev/null
if cmp -s "$IX/want" "$IX/lg.out"; then ok; else bad "--from-index differs from pairs of the same list"; fi
cp "$IX/p.idx" "$IX/p.before"
expect_status 0 "pairs --from-index=FILE --k 1 jsonl" -- "$SIMCRAWL" pairs --k 1 --format jsonl --from-index="$IX/p.idx"
if [ "$(wc -l <"$TMP/out")" = 2 ]; then ok; else bad "--from-index --k 1: two pairs expected"; fi
if cmp -s "$IX/p.idx" "$IX/p.before"; then ok; else bad "--from-index changed the file"; fi
expect_status 1 "--from-index with an INPUT" -- "$SIMCRAWL" pairs --from-index "$IX/p.idx" --fingerprints "$IX/g.txt"
expect_grep "takes no INPUT" "$TMP/err" "--from-index without inputs explained"
expect_status 1 "--from-index without a value" -- "$SIMCRAWL" pairs --from-index
expect_status 1 "--from-index above the index's k" -- "$SIMCRAWL" pairs --k 3 --from-index "$IX/k1.idx"
expect_status 2 "--from-index missing file" -- "$SIMCRAWL" pairs --from-index "$IX/none.idx"
expect_grep "none.idx" "$TMP/err" "missing index named"
expect_status 2 "--from-index of a damaged file" -- "$SIMCRAWL" pairs --from-index "$IX/flip.idx"
expect_grep "checksum" "$TMP/err" "damaged index explained"
expect_status 0 "pairs --help names --from-index" -- "$SIMCRAWL" pairs --help
expect_grep "from-index FILE" "$TMP/out" "--from-index in --help"
# duplicate ids across two lists (the batch check): the later one named by list and line
printf '# two\n\n0000000000000001 b.html\n0000000000000002 z.html\n' >"$IX/dup2.txt"
expect_status 2 "duplicate id across lists" -- "$SIMCRAWL" pairs --fingerprints "$IX/l.txt" --fingerprints "$IX/dup2.txt"
expect_grep "dup2.txt:3: duplicate id 'b.html'" "$TMP/err" "duplicate named by its list and line"
expect_grep "^1	a.html	z.html$" "$TMP/out" "the list after the duplicate still compared"
if grep -q "	b.html	b.html" "$TMP/out"; then bad "duplicate document kept"; else ok; fi

# HTML inputs: a directory walked in sorted order, identical pages are pairs at distance 0
page() {
    printf '<html><head><title>%s</title></head><body><main><p>%s</p></main></body></html>\n' "$1" "$2"
}
text="The quick brown fox jumps over the lazy dog while the cat sleeps on the warm mat near the old fireplace in the quiet house."
page one "$text" >"$IX/site/a.html"
page one "$text" >"$IX/site/sub/b.htm"
page three "Entirely different words about compilers, parsers, linkers and optimisation passes that share nothing at all with animals." >"$IX/site/c.html"
echo "not a page" >"$IX/site/notes.txt"
expect_status 0 "pairs over a directory" -- "$SIMCRAWL" pairs --k 0 "$IX/site"
expect_grep "^0	$IX/site/a.html	$IX/site/sub/b.htm$" "$TMP/out" "directory pairs, ids are paths"
if [ "$(wc -l <"$TMP/out")" = 1 ]; then ok; else bad "directory: exactly one pair expected"; fi
expect_status 0 "pairs with -- and file names" -- "$SIMCRAWL" pairs --format jsonl -- "$IX/site/a.html" "$IX/site/sub/b.htm"
expect_grep '"distance": 0}' "$TMP/out" "files after --"
expect_status 2 "missing html file" -- "$SIMCRAWL" pairs "$IX/site/a.html" "$IX/site/missing.html"
expect_grep "missing.html" "$TMP/err" "missing file named"

# ids that are not UTF-8 still give valid JSON and HTML (U+FFFD), and text shows them as is
printf '0000000000000000 bad\377id\n0000000000000001 ok\n' >"$IX/utf.txt"
expect_status 0 "pairs jsonl with a non-UTF-8 id" -- "$SIMCRAWL" pairs --format jsonl --fingerprints "$IX/utf.txt"
expect_grep '"a": "bad\\ufffdid"' "$TMP/out" "invalid byte as \\ufffd in JSON"
expect_status 0 "clusters html with a non-UTF-8 id" -- "$SIMCRAWL" clusters --format html --fingerprints "$IX/utf.txt"
expect_grep 'bad&#xfffd;id' "$TMP/out" "invalid byte as U+FFFD in HTML"
# index add run again over the same pages: one line with the count, exit 0
mkdir -p "$IX/again"
for i in 1 2 3; do
    printf '<html><body><main><p>page %s %s</p></main></body></html>\n' "$i" "$(seq -s ' ' 1 $((40 * i)))" >"$IX/again/p$i.html"
done
expect_status 0 "index add: first run" -- "$SIMCRAWL" index add "$IX/again.idx" "$IX/again"
expect_status 0 "index add: the same inputs again" -- "$SIMCRAWL" index add "$IX/again.idx" "$IX/again"
expect_grep "3 documents already in the index (the same ids, added before) skipped" "$TMP/err" "rerun: one line with the count"
expect_grep "added 0 documents, now 3" "$TMP/err" "rerun adds nothing"
