# libsimcrawl's durability under kill -9 (issue 13): tests/tools/filter_driver checks
# generated pages into a filter on an index file, printing each decision as check()
# returns; it is killed with SIGKILL at a random moment (during checks, journal writes or
# the compactions it makes every 16 KiB of journal) in 20 runs, each run going on from
# the index the last one left. After each kill, the driver reopens the index (replaying
# the journal) and probes every page ever reported new with a page of two words: an
# indexed id answers its stored decision (0, new), a lost one too-short (3). The index
# holds every page reported new, and at most one more per run (added and journaled, its
# line not yet printed when the kill came). A few seconds in all.
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP); FILTER_DRIVER is the driver.
FILTER_DRIVER=${FILTER_DRIVER:-build/filter_driver}
FK=$TMP/filter_kill
mkdir -p "$FK"
X=$FK/k.idx
: >"$FK/new.all"
run=0
killed=0
from=0
while [ $run -lt 20 ]; do
    run=$((run + 1))
    "$FILTER_DRIVER" "$X" $from 6000 >"$FK/out" 2>"$FK/err" &
    pid=$!
    sleep "$(awk -v s="$run$$" 'BEGIN { srand(s); printf "%.3f", 0.02 + rand() * 0.3 }')"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    st=$?
    [ "$st" = 137 ] && killed=$((killed + 1))
    # the pages reported new in this run (whole lines only: a line cut by the kill is not
    # a report), added to those of the earlier runs
    awk 'NF == 2 && $1 ~ /^[0-9]+$/ && $2 == "0" { print $1 }' "$FK/out" >>"$FK/new.all"
    reported=$(sort -u "$FK/new.all" | wc -l)
    "$FILTER_DRIVER" "$X" probe <"$FK/new.all" >"$FK/probe" 2>"$FK/probe.err"
    lost=$(awk 'NF == 2 && $1 ~ /^[0-9]+$/ && $2 != "0"' "$FK/probe" | wc -l)
    count=$(awk '$1 == "count" { print $2 }' "$FK/probe")
    # a page added and journaled whose line the kill cut is in the index unreported: at
    # most one per run (the next run checks it first and reports its stored decision)
    if [ "$lost" = 0 ] && [ -n "$count" ] && [ "$count" -ge "$reported" ] &&
        [ "$count" -le $((reported + run)) ]; then
        ok
    else
        bad "filter kill run $run (exit $st): $lost of $reported pages reported new are lost; the index holds ${count:-?}; $(head -c 300 "$FK/probe.err")"
    fi
    if grep -q 'dropped' "$FK/probe.err"; then torn=$((${torn:-0} + 1)); fi
    # the next run goes on with new pages (and the last ones again: idempotent by id)
    last=$(awk 'NF == 2 && $1 ~ /^[0-9]+$/ { n = $1 } END { print n + 0 }' "$FK/out")
    [ "$last" -gt "$from" ] && from=$last
done
[ "$killed" -ge 10 ] && ok || bad "filter kill: only $killed of 20 runs were killed mid-way (the driver finished first)"
echo "filter kill: 20 runs, $killed killed mid-run, $(sort -u "$FK/new.all" | wc -l) pages reported new, all kept; ${torn:-0} torn journal tails dropped" >&2
