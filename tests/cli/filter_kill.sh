# libsimcrawl's durability under kill -9 (issue 13): tests/tools/filter_driver checks
# generated pages into a filter on an index file, printing each decision as check()
# returns; it is killed with SIGKILL at a random moment (during checks, journal writes or
# the compactions it makes every 16 KiB of journal) in 20 runs, each run going on from
# the index the last one left. After each kill, the driver reopens the index (replaying
# the journal) and probes every page ever reported new with a page of two words: an
# indexed id answers its stored decision (0, new), a lost one too-short (3). The driver
# also deletes every seventh page it adds, right after: a page whose delete was reported
# must be gone, one whose delete had begun ("d I" printed, "D I 1" not) may be either.
# The index holds every page reported new and not deleted, and at most one more per run
# (added and journaled, its line not yet printed when the kill came). A few seconds.
# Twice: with the simhash method, then the minhash method (its journal records carry the
# signatures: filter_driver --method minhash).
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP); FILTER_DRIVER is the driver.
FILTER_DRIVER=${FILTER_DRIVER:-build/filter_driver}
for fk_method in simhash minhash; do
torn=0
FK=$TMP/filter_kill_$fk_method
mkdir -p "$FK"
X=$FK/k.idx
: >"$FK/new.all"
: >"$FK/events"
run=0
killed=0
from=0
while [ $run -lt 20 ]; do
    run=$((run + 1))
    "$FILTER_DRIVER" --method "$fk_method" "$X" $from 6000 >"$FK/out" 2>"$FK/err" &
    pid=$!
    # odd runs: the kill comes after the driver's first decision (under load the random
    # delay alone can end a run before the reopen is over, and then no check is killed);
    # even runs: from the start, so kills during the reopen and the replay stay covered
    if [ $((run % 2)) = 1 ]; then
        w=0
        while [ ! -s "$FK/out" ] && [ $w -lt 1000 ] && kill -0 $pid 2>/dev/null; do
            sleep 0.01
            w=$((w + 1))
        done
    fi
    sleep "$(awk -v s="$run$$" 'BEGIN { srand(s); printf "%.3f", 0.02 + rand() * 0.3 }')"
    kill -9 $pid 2>/dev/null
    wait $pid 2>/dev/null
    st=$?
    [ "$st" = 137 ] && killed=$((killed + 1))
    # the pages reported new in this run (whole lines only: a line cut by the kill is not
    # a report), added to those of the earlier runs
    awk 'NF == 2 && $1 ~ /^[0-9]+$/ && $2 == "0" { print $1 }' "$FK/out" >>"$FK/new.all"
    # each page's last word, in order over all runs: present (reported new), maybe (its
    # delete begun), absent (its delete reported); a page re-added later is present again
    awk '(NF == 2 && $1 ~ /^[0-9]+$/ && $2 == "0") || ($1 == "d" && NF == 2) ||
         ($1 == "D" && NF == 3 && $3 == "1")' "$FK/out" >>"$FK/events"
    awk '$1 ~ /^[0-9]+$/ { s[$1] = "present" } $1 == "d" { s[$2] = "maybe" }
         $1 == "D" { s[$2] = "absent" } END { for (i in s) print i, s[i] }' "$FK/events" \
        | sort -n >"$FK/state"
    reported=$(awk '$2 == "present"' "$FK/state" | wc -l)
    maybe=$(awk '$2 == "maybe"' "$FK/state" | wc -l)
    deleted=$(awk '$2 == "absent"' "$FK/state" | wc -l)
    awk '{ print $1 }' "$FK/state" | "$FILTER_DRIVER" --method "$fk_method" "$X" probe >"$FK/probe" 2>"$FK/probe.err"
    wrong=$(awk 'NR == FNR { s[$1] = $2; next }
                 NF == 2 && $1 ~ /^[0-9]+$/ && ((s[$1] == "present" && $2 != "0") ||
                                                (s[$1] == "absent" && $2 == "0"))' \
                "$FK/state" "$FK/probe" | wc -l)
    count=$(awk '$1 == "count" { print $2 }' "$FK/probe")
    # a page added and journaled whose line the kill cut is in the index unreported: at
    # most one per run (the next run checks it first and reports its stored decision)
    if [ "$wrong" = 0 ] && [ -n "$count" ] && [ "$count" -ge "$reported" ] &&
        [ "$count" -le $((reported + maybe + run)) ]; then
        ok
    else
        bad "filter kill ($fk_method) run $run (exit $st): $wrong of $reported pages reported new and $deleted reported deleted are wrong; the index holds ${count:-?}; $(head -c 300 "$FK/probe.err")"
    fi
    if grep -q 'dropped' "$FK/probe.err"; then torn=$((torn + 1)); fi
    # the next run goes on with new pages (and the last ones again: idempotent by id)
    last=$(awk 'NF == 2 && $1 ~ /^[0-9]+$/ { n = $1 } END { print n + 0 }' "$FK/out")
    [ "$last" -gt "$from" ] && from=$last
done
[ "$killed" -ge 10 ] && ok || bad "filter kill ($fk_method): only $killed of 20 runs were killed mid-way (the driver finished first)"
# a campaign in which no page was ever reported new checked nothing: the kills all came
# before the first decision
nnew=$(sort -u "$FK/new.all" | wc -l)
[ "$nnew" -ge 100 ] && ok || bad "filter kill ($fk_method): only $nnew pages reported new over 20 runs: the kills came before the driver decided anything, so nothing was checked"
echo "filter kill ($fk_method): 20 runs, $killed killed mid-run, $nnew pages reported new, $(grep -c '^D' "$FK/events") deletes reported; all kept or gone as reported; $torn torn journal tails dropped" >&2
done
