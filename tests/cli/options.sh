# One command line (issue 18): a mistyped option is answered with the nearest one the
# command's --help lists (cli/options.c), for options, --name=value and config keys.
# Sourced by tests/cli_test.sh (helpers ok, bad, expect_status, expect_grep; $TMP).
for c in "pairs --formt jsonl x|--format" "clusters --fromat html x|--format" \
         "fingerprint --txt x|--text" "dedup --quite x|--quiet" "extract --link x|--links" \
         "compare --jsn a b|--json" "query --idnex x y|--index" "index add --lock-wiat 3 x y|--lock-wait" \
         "crawl --dleay 1 http://127.0.0.1:1/|--delay" "crawl --concurency=2 http://127.0.0.1:1/|--concurrency" \
         "serve --listn 127.0.0.1:0|--listen" "robots --verbos a b c|--verbose"; do
    args=${c%|*}; want=${c#*|}
    # shellcheck disable=SC2086
    "$SIMCRAWL" $args >"$TMP/out" 2>"$TMP/err"
    st=$?
    if [ "$st" = 1 ] || { [ "$st" = 2 ] && [ "${args%% *}" = robots ]; }; then ok; else bad "$args: exit $st"; fi
    expect_grep "(did you mean $want?)" "$TMP/err" "$args suggests $want"
done
# nothing near: no suggestion, still the --help hint
expect_status 1 "far typo" -- "$SIMCRAWL" pairs --zzzzzz x
if grep -q "did you mean" "$TMP/err"; then bad "a far typo got a suggestion: $(cat "$TMP/err")"; else ok; fi
expect_grep "try 'simcrawl pairs --help'" "$TMP/err" "far typo: the --help hint"
printf '[crawl]\ndelai = 1\n' >"$TMP/typo.conf"
expect_status 1 "config key typo" -- "$SIMCRAWL" crawl --config "$TMP/typo.conf" http://127.0.0.1:1/
expect_grep "typo.conf:2: unknown key 'delai' (did you mean delay?)" "$TMP/err" "config key suggestion"
# --version after any command (before "--"); --k is 0..7 in compare as everywhere
for c in pairs clusters compare fingerprint extract dedup crawl serve index query robots; do
    expect_status 0 "$c --version" -- "$SIMCRAWL" $c --version
    expect_grep "^simcrawl [0-9]*\.[0-9]*\.[0-9]*$" "$TMP/out" "$c --version prints the version"
done
expect_status 1 "compare --k 8" -- "$SIMCRAWL" compare --k 8 a b
expect_grep "from 0 to 7" "$TMP/err" "compare's --k range is every command's"
# and said in the words of pairs, clusters, query and index
expect_grep "^simcrawl compare: --k must be a whole number from 0 to 7, not '8'$" "$TMP/err" \
    "compare's --k message is the other commands'"
expect_status 1 "pairs --k 8" -- "$SIMCRAWL" pairs --k 8 a
expect_grep "^simcrawl pairs: --k must be a whole number from 0 to 7, not '8'$" "$TMP/err" \
    "pairs' --k message"
expect_status 1 "dedup --k 8" -- "$SIMCRAWL" dedup --k 8 a
expect_grep "^simcrawl dedup: --k must be a whole number from 0 to 7, not '8'$" "$TMP/err" \
    "dedup's --k message is pairs'"
# crawl: a seed without a scheme is http:// (as wget); --warc NAME without an extension
# writes NAME.warc.gz; a WARC that cannot be created says why (port 1: refused at once)
mkdir -p "$TMP/wg"
case $SIMCRAWL in /*) WGBIN=$SIMCRAWL ;; *) WGBIN=$PWD/$SIMCRAWL ;; esac
expect_status 2 "crawl: seed without a scheme" -- sh -c "cd '$TMP/wg' && '$WGBIN' crawl --robots no --timeout 5 --warc out --log l.jsonl 127.0.0.1:1/x"
expect_grep '"url":"http://127.0.0.1:1/x"' "$TMP/wg/l.jsonl" "the seed taken as http://"
if [ -s "$TMP/wg/out.warc.gz" ] && [ ! -e "$TMP/wg/out" ]; then ok; else bad "--warc out did not write out.warc.gz: $(ls "$TMP/wg")"; fi
expect_status 2 "crawl: WARC in a missing folder" -- "$SIMCRAWL" crawl --robots no --warc /nonexistent/dir/x.warc.gz http://127.0.0.1:1/
expect_grep "cannot create /nonexistent/dir/x.warc.gz: No such file or directory" "$TMP/err" "why the WARC cannot be created"
# a seed with another scheme is skipped, never taken as a host ("mailto:x@y" is not http://mailto:x@y)
expect_status 1 "crawl: mailto seed" -- "$SIMCRAWL" crawl mailto:x@y
expect_grep "not an http(s) URL, skipped: mailto:x@y" "$TMP/err" "mailto seed skipped as it is"
# every command's --help: exit 0, and each option starts its own line (a description whose
# string lost its "\n" runs the next option into it: "...minhash)  --threshold J")
for c in extract fingerprint compare query index pairs clusters dedup crawl serve robots; do
    "$SIMCRAWL" $c --help >"$TMP/out" 2>&1
    st=$?
    glued=$(grep -E '[^ ]  +--[a-z]' "$TMP/out" | head -n 1)
    [ "$st" = 0 ] && [ -z "$glued" ] && ok || bad "$c --help: exit $st; an option run into the line before: $glued"
done
