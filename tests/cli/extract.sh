# simcrawl extract: text, json, links, stdin, errors (sourced by tests/cli_test.sh)
X=tests/data/extract
expect_status 0 "extract --help" -- "$SIMCRAWL" extract --help
expect_grep "usage: simcrawl extract" "$TMP/out" "extract --help prints usage"
expect_grep "URL, a TAB, the anchor" "$TMP/out" "extract --help describes --links"
expect_status 0 "extract --text" -- "$SIMCRAWL" extract $X/001.html
if cmp -s "$TMP/out" $X/001.txt; then ok; else bad "extract --text differs from $X/001.txt"; fi
expect_status 0 "extract default is --text" -- "$SIMCRAWL" extract --text $X/002.html
expect_grep "voted 7 to 2" "$TMP/out" "extract text has the article"
if grep -q "Most read" "$TMP/out"; then bad "extract text has the sidebar"; else ok; fi
expect_status 0 "extract from stdin" -- sh -c "\"$SIMCRAWL\" extract - < $X/003.html"
expect_grep "Simple lexical analysis" "$TMP/out" "extract - reads stdin"
expect_status 0 "extract --json" -- "$SIMCRAWL" extract --json --base-url https://herald.example/news/x $X/002.html
expect_grep '"title":"City council approves new bike lanes - The Riverside Herald"' "$TMP/out" "json title"
expect_grep '"heading":"City council approves new bike lanes"' "$TMP/out" "json heading: the page's own, not the title"
expect_grep '"canonical":"https://herald.example/news/2024/05/bike-lanes"' "$TMP/out" "json canonical"
expect_grep '"robots":{"noindex":false,"nofollow":false}' "$TMP/out" "json robots"
expect_grep '"lang":"en"' "$TMP/out" "json lang"
expect_grep '"charset":"UTF-8"' "$TMP/out" "json charset"
expect_grep '{"url":"https://herald.example/news/parking","anchor":"Downtown parking rates to rise","nofollow":false,"in_main":false}' "$TMP/out" "json links"
if [ "$(wc -l < "$TMP/out")" = 1 ]; then ok; else bad "extract --json is one line"; fi
expect_status 0 "extract --links" -- "$SIMCRAWL" extract --links --base-url http://lakeside.example/club/ $X/009.html
expect_grep "^http://lakeside.example/club/layouts.html	Our layouts$" "$TMP/out" "links: URL TAB anchor"
if grep -q mailto "$TMP/out"; then bad "links lists mailto:"; else ok; fi
expect_status 0 "extract --content-type" -- "$SIMCRAWL" extract --content-type "text/html; charset=windows-1251" $X/007.html
expect_grep "Как выбрать чайник" "$TMP/out" "content-type charset honoured"
# bad input: empty warns and exits 0; binary, missing, too large exit 2; usage exits 1
: > "$TMP/empty.html"
expect_status 0 "extract empty file" -- "$SIMCRAWL" extract "$TMP/empty.html"
expect_grep "empty.html: input is empty" "$TMP/err" "empty file warning names the file"
printf '\211PNG\r\n\032\n\000\000\000\rIHDR' > "$TMP/img.html"
expect_status 2 "extract binary" -- "$SIMCRAWL" extract "$TMP/img.html"
expect_grep "simcrawl extract: .*img.html: input is binary, not html" "$TMP/err" "binary error message"
expect_status 2 "extract missing file" -- "$SIMCRAWL" extract "$TMP/no-such.html"
expect_grep "cannot open .*no-such.html" "$TMP/err" "missing file message"
head -c 300 /dev/zero | tr '\0' 'a' > "$TMP/big.html"
expect_status 2 "extract over --max-bytes" -- "$SIMCRAWL" extract --max-bytes 100 "$TMP/big.html"
expect_grep "input is too large (over 100 bytes" "$TMP/err" "too large message"
expect_status 0 "extract under --max-bytes" -- "$SIMCRAWL" extract --max-bytes 1000 "$TMP/big.html"
# one 200 MB line: refused at the default 64 MiB cap without reading it all
expect_status 2 "extract 200 MB line" -- sh -c "head -c 209715200 /dev/zero | tr '\\000' x | \"$SIMCRAWL\" extract -"
expect_grep "(stdin): input is too large (over 67108864 bytes" "$TMP/err" "200 MB line is too large"
expect_status 1 "extract no file" -- "$SIMCRAWL" extract
expect_status 1 "extract bad option" -- "$SIMCRAWL" extract --bogus x.html
expect_grep "unknown option '--bogus'" "$TMP/err" "bad option named"
expect_status 1 "extract two files" -- "$SIMCRAWL" extract a.html b.html
expect_status 1 "extract bad --max-bytes" -- "$SIMCRAWL" extract --max-bytes -5 x.html
# the caps that cut a page are options, and a cut is one warning naming the file and the cap
python3 -c "
print('<p>a few words of text</p>')
for i in range(30): print('<a href=\"/p%d\">p%d</a>' % (i, i))" > "$TMP/links30.html"
expect_status 0 "extract --max-links 10" -- "$SIMCRAWL" extract --links --base-url http://h.example/ --max-links 10 "$TMP/links30.html"
if [ "$(wc -l < "$TMP/out")" = 10 ]; then ok; else bad "--max-links 10 keeps 10 links"; fi
expect_grep "^simcrawl extract: .*links30.html: links after the 10th dropped (20 of them; --max-links)$" "$TMP/err" "--max-links warning"
if [ "$(wc -l < "$TMP/err")" = 1 ]; then ok; else bad "one warning for the link cap"; fi
expect_status 0 "extract --json --max-links 10" -- "$SIMCRAWL" extract --json --max-links 10 "$TMP/links30.html"
expect_grep '"truncated":\["links"\]' "$TMP/out" "json truncated links"
expect_status 0 "extract default link cap" -- "$SIMCRAWL" extract --links "$TMP/links30.html"
if [ -s "$TMP/err" ]; then bad "no warning under the link cap"; else ok; fi
python3 -c "print('<p>shallow words here</p>' + '<div>' * 40 + '<p>deep words</p>' + '</div>' * 40)" > "$TMP/deep.html"
expect_status 0 "extract --max-depth 20" -- "$SIMCRAWL" extract --max-depth 20 "$TMP/deep.html"
if grep -q "deep words" "$TMP/out"; then bad "--max-depth 20 keeps the deep text"; else ok; fi
expect_grep "^simcrawl extract: .*deep.html: [0-9]* elements nested deeper than 20 skipped, with 10 bytes of text (--max-depth)$" "$TMP/err" "--max-depth warning"
expect_status 0 "extract --json --max-depth 20" -- "$SIMCRAWL" extract --json --max-depth 20 "$TMP/deep.html"
expect_grep '"truncated":\["depth"\]' "$TMP/out" "json truncated depth"
expect_status 0 "extract default depth" -- "$SIMCRAWL" extract "$TMP/deep.html"
expect_grep "deep words" "$TMP/out" "the default depth keeps the text"
expect_status 1 "extract --max-links 0" -- "$SIMCRAWL" extract --max-links 0 "$TMP/deep.html"
expect_grep "max-links wants a number from 1 to" "$TMP/err" "bad --max-links named"
expect_status 1 "extract --max-links x" -- "$SIMCRAWL" extract --max-links x "$TMP/deep.html"
expect_status 1 "extract --max-depth -1" -- "$SIMCRAWL" extract --max-depth -1 "$TMP/deep.html"
expect_status 1 "extract --max-depth 2000000" -- "$SIMCRAWL" extract --max-depth 2000000 "$TMP/deep.html"
expect_status 1 "extract --max-depth without a value" -- "$SIMCRAWL" extract "$TMP/deep.html" --max-depth
expect_status 0 "extract --help" -- "$SIMCRAWL" extract --help
expect_grep "max-links N .*default 100000" "$TMP/out" "--help names --max-links and its default"
expect_grep "max-depth N .*skip elements" "$TMP/out" "--help names --max-depth"
