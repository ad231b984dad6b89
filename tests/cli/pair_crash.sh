# dedup --index killed at every named crash point of its save (issue 12 item 3):
# SIMCRAWL_CRASH_AT=POINT makes the run kill itself with SIGKILL there. After each kill, a
# normal run must open the pair, repair it (said once on stderr), find the exact copies of
# earlier pages as exact duplicates, and leave a pair that passes the strict check of
# tests/stress/pairkit.py (same generation; every digest's document in the index and the
# reverse; no temporary file). The killed run's pages are in both files or in neither:
# in both only when the kill came after the index's rename (the commit point).
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
PC=$TMP/pair_crash
mkdir -p "$PC"
PK="python3 tests/stress/pairkit.py"
X=$PC/x.idx
$PK warc "$PC/base.warc" base 0 20
expect_status 0 "pair crash: first run" -- "$SIMCRAWL" dedup --index "$X" "$PC/base.warc"
i=0
for point in digests-before-write digests-partial-write digests-after-fsync digests-after-rename \
    digests-saved index-before-write index-partial-write index-after-fsync index-after-rename \
    index-saved pair-saved; do
    i=$((i + 1))
    lo=$((1000 * i)); hi=$((lo + 5))
    $PK warc "$PC/k$i.warc" "k$i" $lo $hi
    SIMCRAWL_CRASH_AT=$point "$SIMCRAWL" dedup --quiet --index "$X" --warc-out "$PC/k$i.out.warc" \
        "$PC/k$i.warc" >/dev/null 2>"$PC/k$i.err"
    st=$?
    [ "$st" = 137 ] && ok || bad "pair crash at $point: exit $st, want 137 (SIGKILL)"
    case $point in
    digests-partial-write | digests-after-fsync | index-partial-write | index-after-fsync)
        ls "$PC" | grep -q '^x\.idx\(\.digests\)\?\.tmp\.' && ok ||
            bad "pair crash at $point: no temporary file left by the kill" ;;
    esac
    # the next run: new pages, exact copies of the first run's pages and of the killed run's
    $PK warc "$PC/n$i.warc" "n$i" $((lo + 500)) $((lo + 505)) "c$i" 0 10
    $PK warc "$PC/ck$i.warc" "ck$i" 0 0 "ck$i" $lo $hi
    expect_status 0 "pair crash: run after a kill at $point" -- \
        "$SIMCRAWL" dedup --index "$X" --log "$PC/n$i.jsonl" "$PC/n$i.warc" "$PC/ck$i.warc"
    case $point in
    index-after-rename | index-saved | pair-saved) committed=1 ;;
    *) committed=0 ;;
    esac
    case $point in
    digests-after-rename | digests-saved | index-before-write | index-partial-write | index-after-fsync)
        expect_grep "x.idx.digests is newer than .*x.idx (generation [0-9]*, the index's [0-9]*: a run was killed between saving the two): dropped the digests of 5 pages of that run" \
            "$TMP/err" "pair crash at $point: repair named" ;;
    esac
    [ "$(grep -c 'is newer than\|is older than\|is missing beside' "$TMP/err")" -le 1 ] && ok ||
        bad "pair crash at $point: a repair reported more than once"
    if [ $committed = 1 ]; then
        expect_grep " 5 new, 0 near-duplicate, 15 exact-duplicate" "$TMP/err" "pair crash at $point: the killed run's pages are kept"
        want="k$i all"
    else
        expect_grep " 10 new, 0 near-duplicate, 10 exact-duplicate" "$TMP/err" "pair crash at $point: the killed run's pages are not"
        want="k$i none"
    fi
    [ "$(grep -c '/c'$i'/.*"decision":"exact-duplicate"' "$PC/n$i.jsonl")" = 10 ] && ok ||
        bad "pair crash at $point: exact copies of the first run's pages are not all exact duplicates"
    PAIRKIT_BATCH=5 $PK check "$X" "k$i" "n$i" "ck$i" >"$PC/check$i" 2>&1 && ok ||
        bad "pair crash at $point: strict pair check: $(cat "$PC/check$i")"
    expect_grep "^$want$" "$PC/check$i" "pair crash at $point: the killed run's pages in both files or neither"
done
expect_grep "^ok documents=130 generation=" "$PC/check11" "pair crash: documents and generation at the end"
# an unknown crash point name changes nothing
$PK warc "$PC/last.warc" last 90000 90003
SIMCRAWL_CRASH_AT=no-such-point "$SIMCRAWL" dedup --quiet --index "$X" "$PC/last.warc" >/dev/null 2>&1 &&
    ok || bad "pair crash: SIMCRAWL_CRASH_AT=no-such-point failed the run"
$PK check "$X" last >"$PC/check-last" 2>&1 && grep -q "^last all$" "$PC/check-last" && ok ||
    bad "pair crash: the run with an unknown crash point: $(cat "$PC/check-last")"
expect_status 0 "pair crash: index stats" -- "$SIMCRAWL" index stats "$X"
expect_grep "^pair generation: [1-9]" "$TMP/out" "pair crash: index stats shows the pair generation"
