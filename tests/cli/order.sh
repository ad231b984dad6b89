# One command line (issue 18): options before or after the operands in every command (GNU
# getopt_long order, cli/options.c), "--" ends the options, long options spelled out in
# full; --quiet means no progress and no summary on stderr; the crawl's summary in the
# user's words, its internals behind --verbose, its progress line on a terminal.
# Sourced by tests/cli_test.sh (helpers ok, bad, expect_status, expect_grep; $TMP).
OR=$TMP/order
mkdir -p "$OR/site"
P=tests/demo/site/articles
cp "$P/owl.html" "$P/heron.html" "$P/wren.html" "$OR/site/"
cp tests/demo/site/mirror/articles/owl.html "$OR/site/owl-mirror.html"

# same_run DESCRIPTION -- "CMD1" -- "CMD2": both exit alike and print the same stdout
same_run() {
    what=$1; a=$3; b=$5
    sh -c "$a" >"$OR/a.out" 2>"$OR/a.err"; sa=$?
    sh -c "$b" >"$OR/b.out" 2>"$OR/b.err"; sb=$?
    if [ "$sa" = "$sb" ] && cmp -s "$OR/a.out" "$OR/b.out" && [ -s "$OR/a.out" ]; then ok; else
        bad "$what: '$a' (exit $sa) and '$b' (exit $sb) differ: $(head -c 200 "$OR/a.out") | $(head -c 200 "$OR/b.out") | $(head -c 200 "$OR/b.err")"
    fi
}
S=$SIMCRAWL
D=$OR/site
# every command, options first and options last
same_run "compare: --json after A B" -- "$S compare --json $D/owl.html $D/heron.html" -- "$S compare $D/owl.html $D/heron.html --json"
expect_grep '"verdict":"different"' "$OR/b.out" "compare A B --json prints JSON"
same_run "compare: options around the operands" -- "$S compare --k 5 --json $D/owl.html $D/owl-mirror.html" -- "$S compare $D/owl.html --k=5 $D/owl-mirror.html --json"
same_run "compare --method minhash after A B" -- "$S compare --method minhash --threshold 0.5 $D/owl.html $D/owl-mirror.html" -- "$S compare $D/owl.html $D/owl-mirror.html --method minhash --threshold=0.5"
same_run "fingerprint: --text after FILE" -- "$S fingerprint --text $D/owl.html" -- "$S fingerprint $D/owl.html --text"
if sh -c "$S fingerprint $D/owl.html" | cmp -s - "$OR/b.out"; then bad "fingerprint F --text: the same as HTML"; else ok; fi
same_run "fingerprint: options between FILEs" -- "$S fingerprint --no-templates --max-depth 300 $D/owl.html $D/heron.html" -- "$S fingerprint $D/owl.html --no-templates $D/heron.html --max-depth=300"
same_run "extract: --links after FILE" -- "$S extract --links --max-links 3 $D/owl.html" -- "$S extract $D/owl.html --links --max-links 3"
same_run "robots: -v after the operands" -- "$S robots -v tests/data/robots/rfc9309-example.txt otherbot /images/logo.gif" -- "$S robots tests/data/robots/rfc9309-example.txt otherbot /images/logo.gif -v"
expect_grep "^disallowed by line" "$OR/b.out" "robots ... -v: the rule named"
same_run "dedup: options after the INPUT" -- "$S dedup --quiet --k 3 --log - $D" -- "$S dedup $D --log - --k 3 --quiet"
if [ -s "$OR/b.err" ]; then bad "dedup DIR --quiet: stderr not empty: $(head -c 200 "$OR/b.err")"; else ok; fi
same_run "pairs: options after the INPUT" -- "$S pairs --format jsonl --k 7 $D" -- "$S pairs $D --k 7 --format jsonl"
same_run "pairs --method minhash after the INPUT" -- "$S pairs --method minhash --threshold 0.3 $D" -- "$S pairs $D --method minhash --threshold 0.3"
same_run "clusters: options after the INPUT" -- "$S clusters --format jsonl $D" -- "$S clusters $D --format=jsonl"
expect_status 0 "index add: options after FILE and INPUT" -- "$S" index add "$OR/x.idx" "$D" --k 3 --quiet
if [ -s "$TMP/err" ]; then bad "index add --quiet: stderr not empty: $(head -c 200 "$TMP/err")"; else ok; fi
same_run "index stats: --format after FILE" -- "$S index stats --format jsonl $OR/x.idx" -- "$S index stats $OR/x.idx --format jsonl"
same_run "query: --index after the PAGE" -- "$S query --index $OR/x.idx --k 3 $D/owl-mirror.html" -- "$S query $D/owl-mirror.html --index $OR/x.idx --k 3"
expect_grep "owl.html" "$OR/b.out" "query PAGE --index X finds the original"
expect_status 1 "serve: an operand" -- "$S" serve --quiet stray
expect_grep "unexpected argument 'stray' (serve takes options only)" "$TMP/err" "serve names a stray operand"

# "--" ends the options: a file named --quiet
mkdir -p "$OR/dash"
cp "$D/owl.html" "$OR/dash/--quiet"
case $S in /*) SB=$S ;; *) SB=$PWD/$S ;; esac
expect_status 0 "fingerprint -- --quiet" -- sh -c "cd '$OR/dash' && '$SB' fingerprint -- --quiet"
expect_grep "^[0-9a-f]\{16\}  --quiet$" "$TMP/out" "fingerprint -- --quiet: the file named --quiet"
expect_status 0 "dedup --quiet -- --quiet" -- sh -c "cd '$OR/dash' && '$SB' dedup --quiet --log - -- --quiet"
expect_grep '"decision":"new"' "$TMP/out" "dedup -- --quiet reads the file named --quiet"
expect_status 1 "dedup --quiet alone: no input" -- sh -c "cd '$OR/dash' && '$SB' dedup --quiet"
expect_grep "no input" "$TMP/err" "dedup --quiet is an option, not a file"
expect_status 2 "compare A -- --json: a file named --json" -- "$S" compare "$D/owl.html" -- --json
expect_grep "\-\-json: " "$TMP/err" "compare -- --json: --json is an input"

# long options are spelled out in full; a flag takes no value; a value is checked
expect_status 1 "an abbreviated option" -- "$S" crawl --del 1 http://127.0.0.1:1/
expect_grep "unknown option '--del' (did you mean --delay?)" "$TMP/err" "a prefix: the option it abbreviates"
expect_status 1 "an ambiguous prefix" -- "$S" crawl --max 1 http://127.0.0.1:1/
expect_grep "unknown option '--max'" "$TMP/err" "an ambiguous prefix is unknown"
expect_status 1 "a value for a flag" -- "$S" dedup --quiet=1 "$D"
expect_grep "option '--quiet' takes no value" "$TMP/err" "--quiet=1: takes no value"
expect_status 1 "a value missing after the operands" -- "$S" crawl http://127.0.0.1:1/ --k
expect_grep "option '--k' needs a value" "$TMP/err" "crawl SEED --k: the value is missing, not the seed"
expect_status 1 "pairs: --k last" -- "$S" pairs "$D" --k
expect_grep "\-\-k needs a value" "$TMP/err" "pairs DIR --k: needs a value"
expect_status 1 "an unknown short option" -- "$S" fingerprint -x "$D/owl.html"
expect_grep "unknown option '-x'" "$TMP/err" "-x named"
expect_status 2 "an unknown short option inside a group" -- "$S" robots --verbose -xv a b c
expect_grep "unknown option '-x'" "$TMP/err" "-xv after a long option: -x named"

# every option a command's --help lists is in the option table its parser reads (a new
# option added to the help but not to the table would be "unknown"): the help's "--NAME"
# words against the {"NAME", ...} entries of the command's file (cli/inputs.c holds the
# table of pairs, clusters, query and index); one sample of each is run below
for c in compare fingerprint extract robots dedup crawl serve pairs clusters query index; do
    case $c in pairs | clusters | query | index) src=cli/inputs.c ;; *) src=cli/cmd_$c.c ;; esac
    # the options a help line starts with ("  --k N", "  -q, --quiet"), not those its
    # prose mentions (clusters: "crawl --log")
    names=$("$S" "$c" --help | grep -oE -- '^ +(-[a-zA-Z0-9], )?--[a-z][a-z0-9-]*' |
        grep -oE -- '--[a-z][a-z0-9-]*' | sort -u)
    [ -n "$names" ] || bad "$c --help lists no options"
    missing=
    for n in $names; do
        grep -q "{\"${n#--}\", \(no\|required\|optional\)_argument" "$src" || missing="$missing $n"
    done
    [ -z "$missing" ] && ok || bad "$c: in --help, not in the option table of $src:$missing"
done
mkdir -p "$OR/scratch"
for c in "crawl --unreachable-time=x" "serve --max-connections=x" "dedup --max-block=x" "query --top=x" \
    "extract --content-type" "index add --lock-wait=x"; do
    # shellcheck disable=SC2086
    (cd "$OR/scratch" && "$SB" $c) >"$OR/h.out" 2>"$OR/h.err"
    if [ $? = 1 ] && ! grep -q "unknown option" "$OR/h.err"; then ok; else bad "$c: $(head -c 200 "$OR/h.err")"; fi
done

# the crawl: --quiet is silent on stderr, the summary speaks to users, --verbose adds the
# internals, a terminal gets the progress line (script(1) gives the crawl a pty)
python3 tests/tools/site_server.py --pages 60 --log "$OR/requests.log" --port-file "$OR/port" &
or_srv=$!
i=0
while [ ! -f "$OR/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
or_seed="http://127.0.0.1:$(cat "$OR/port")/p/0.html"
expect_status 0 "crawl SEED --quiet" -- timeout 60 "$S" crawl "$or_seed" --delay 0 --log "$OR/q.jsonl" --quiet
if [ -s "$TMP/err" ]; then bad "crawl --quiet: stderr not empty: $(head -c 300 "$TMP/err")"; else ok; fi
[ "$(wc -l <"$OR/q.jsonl")" -gt 50 ] && ok || bad "crawl SEED --quiet --log: the log after the seed was not written"
expect_status 0 "crawl: the summary" -- timeout 60 "$S" crawl --delay 0 --log "$OR/s.jsonl" --warc "$OR/s.warc.gz" "$or_seed"
new=$(grep -c '"decision":"new"' "$OR/s.jsonl"); near=$(grep -c '"decision":"near-duplicate"' "$OR/s.jsonl")
exact=$(grep -c '"decision":"exact-duplicate"' "$OR/s.jsonl")
expect_grep "^crawl done: [0-9]* pages fetched in [0-9.]* s ([0-9.]* pages/s), [0-9.]* kB received$" "$TMP/err" "summary: pages, time, bytes"
expect_grep "^  kept $new new pages; dropped $near near-duplicates and $exact exact duplicate.* (archived as revisits)$" "$TMP/err" "summary: kept and dropped, as in the log"
expect_grep "^  skipped 0 filtered (not HTML, too large or out of scope), [1-9] disallowed by robots.txt$" "$TMP/err" "summary: skipped"
expect_grep "^  errors by cause: 1 http status 404$" "$TMP/err" "summary: errors by cause"
cp "$TMP/err" "$OR/summary.txt"
expect_grep "^  links: [1-9][0-9]* queued; not followed: [0-9]* only on duplicate pages, 0 out of scope; 0 redirects$" "$TMP/err" "summary: links not followed"
if grep -q "seen set\|commits\|parse+fingerprint" "$TMP/err"; then bad "crawl summary shows internals without --verbose"; else ok; fi
expect_status 0 "crawl --verbose" -- timeout 60 "$S" crawl --delay 0 --log "$OR/v.jsonl" "$or_seed" --verbose
expect_grep "^  seen set: [0-9]* URLs in [0-9]* bytes" "$TMP/err" "--verbose: the seen set"
expect_grep "^  parse+fingerprint [0-9.]* s over the workers" "$TMP/err" "--verbose: time in the workers"
if command -v script >/dev/null 2>&1; then
    # one connection, 20 ms apart: over a second, so the line is drawn (every 0.5 s)
    script -qec "timeout 60 '$SB' crawl --delay 0.02 --log '$OR/p.jsonl' '$or_seed'" /dev/null >"$OR/tty.out" 2>&1
    tr '\r' '\n' <"$OR/tty.out" >"$OR/tty.txt"
    expect_grep "^[0-9.]* s  [0-9]* pages ([0-9.]*/s)  [0-9.]* [k]*B  dups [0-9]*  errors [0-9]*  queue [0-9]*  active [0-9]*" "$OR/tty.txt" "a terminal gets the progress line: time, pages, bytes, errors"
    expect_grep "crawl done: " "$OR/tty.txt" "a terminal gets the summary too"
    script -qec "timeout 60 '$SB' crawl --quiet --delay 0.02 --log '$OR/p2.jsonl' '$or_seed'" /dev/null >"$OR/tty2.out" 2>&1
    if [ -s "$OR/tty2.out" ]; then bad "crawl --quiet on a terminal printed: $(head -c 200 "$OR/tty2.out" | tr '\r' '|')"; else ok; fi
fi
kill "$or_srv" 2>/dev/null
wait "$or_srv" 2>/dev/null
