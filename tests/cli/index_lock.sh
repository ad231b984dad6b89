# The writers' lock of an index file (issue 12, items 1 and 3; sourced by tests/cli_test.sh):
# two writers at once lose nothing, a held lock with --lock-wait 0 is exit 2 naming the
# file, a writer waits for a lock that is released, readers need no lock, and a killed
# writer's temporary files are removed by the next writer. A few seconds in all.
LK=$TMP/lock
mkdir -p "$LK"
# three lists of distinct random fingerprints: 6,000 already indexed, 30,000 per writer
python3 - "$LK" <<'PY'
import random, sys
d = sys.argv[1]
for name, n in (("base", 6000), ("one", 30000), ("two", 30000), ("more", 100)):
    r = random.Random(name)
    with open("%s/%s.txt" % (d, name), "w") as f:
        for i in range(n):
            f.write("%016x %s-%d\n" % (r.getrandbits(64), name, i))
PY
# hold_lock FILE: holds FILE's flock from a python3 process until $LK/release exists
# (at most 20 s); returns once the lock is held.
hold_lock() {
    rm -f "$LK/held" "$LK/release"
    python3 - "$1" "$LK" <<'PY' &
import fcntl, os, sys, time
f = open(sys.argv[1], "a")
fcntl.flock(f, fcntl.LOCK_EX)
open(os.path.join(sys.argv[2], "held"), "w").close()
end = time.time() + 20
while time.time() < end and not os.path.exists(os.path.join(sys.argv[2], "release")):
    time.sleep(0.02)
PY
    holder=$!
    n=0
    while [ ! -e "$LK/held" ] && [ $n -lt 500 ]; do sleep 0.01; n=$((n + 1)); done
}
release_lock() { touch "$LK/release"; wait "$holder"; }

# (a) two index add processes at once: both exit 0, no document lost
X=$LK/x.idx
expect_status 0 "lock: base index" -- "$SIMCRAWL" index add "$X" --fingerprints "$LK/base.txt"
"$SIMCRAWL" index add "$X" --fingerprints "$LK/one.txt" 2>"$LK/err1" & p1=$!
"$SIMCRAWL" index add "$X" --fingerprints "$LK/two.txt" 2>"$LK/err2" & p2=$!
wait $p1; s1=$?
wait $p2; s2=$?
if [ $s1 = 0 ] && [ $s2 = 0 ]; then ok; else bad "lock: concurrent adds exit $s1 and $s2: $(cat "$LK/err1" "$LK/err2")"; fi
expect_status 0 "lock: stats after concurrent adds" -- "$SIMCRAWL" index stats "$X"
expect_grep "^documents: 66000$" "$TMP/out" "lock: concurrent adds keep every document (6000 + 30000 + 30000)"
[ -e "$X.lock" ] && ok || bad "lock: $X.lock not left beside the index"

# (b) --lock-wait 0 while another process holds the lock: exit 2, the file named
hold_lock "$X.lock"
expect_status 2 "lock: index add --lock-wait 0 while held" -- \
    "$SIMCRAWL" index add "$X" --lock-wait 0 --fingerprints "$LK/base.txt"
expect_grep "^simcrawl index: $X is locked by another writer (waited 0 s)$" "$TMP/err" "lock: index add names the locked file"
expect_status 2 "lock: pairs --index --lock-wait 0 while held" -- \
    "$SIMCRAWL" pairs --index "$X" --lock-wait 0 --fingerprints "$LK/base.txt"
expect_grep "^simcrawl pairs: $X is locked by another writer (waited 0 s)$" "$TMP/err" "lock: pairs names the locked file"
printf '<html><body><p>%s</p></body></html>\n' "one two three four five six seven eight" >"$LK/p.html"
expect_status 2 "lock: dedup --index --lock-wait 0 while held" -- \
    "$SIMCRAWL" dedup --quiet --index "$X" --lock-wait 0 "$LK/p.html"
expect_grep "^simcrawl dedup: $X is locked by another writer (waited 0 s)$" "$TMP/err" "lock: dedup names the locked file"
# readers take no lock
expect_status 0 "lock: index stats while a writer holds the lock" -- "$SIMCRAWL" index stats "$X"
expect_status 0 "lock: query --index while a writer holds the lock" -- "$SIMCRAWL" query --index "$X" "$LK/p.html"
# the default waits: released once it says it waits (not after a fixed time, which a
# loaded machine under make asan outran), the add goes through and said so once
(n=0; until grep -q "waiting up to" "$TMP/err" 2>/dev/null || [ $n -ge 2000 ]; do
     sleep 0.01; n=$((n + 1)); done; touch "$LK/release") &
expect_status 0 "lock: index add waits for the lock" -- "$SIMCRAWL" index add "$X" --lock-wait 10 "$LK/p.html"
wait "$holder"
if [ "$(grep -c "^simcrawl index: $X is locked by another writer.*; waiting up to 10 s" "$TMP/err")" = 1 ]; then ok; else bad "lock: no single waiting message: $(cat "$TMP/err")"; fi
expect_status 1 "lock: --lock-wait takes seconds" -- "$SIMCRAWL" index add "$X" --lock-wait soon "$LK/p.html"

# (c) temporary files a killed writer left are removed by the next writer; others stay
touch "$X.tmp.12345" "$X.digests.tmp.12345" "$X.digests.tmp" "$X.tmp.notapid" "$LK/y.idx.tmp.12345"
expect_status 0 "lock: add after a killed writer" -- "$SIMCRAWL" index add "$X" --fingerprints "$LK/more.txt"
expect_grep "removed 3 temporary files left by a writer that was stopped" "$TMP/err" "lock: leftovers named"
[ ! -e "$X.tmp.12345" ] && [ ! -e "$X.digests.tmp.12345" ] && [ ! -e "$X.digests.tmp" ] && ok ||
    bad "lock: leftover temporary files not removed: $(ls "$LK")"
[ -e "$X.tmp.notapid" ] && [ -e "$LK/y.idx.tmp.12345" ] && ok || bad "lock: files of no writer of $X removed"
# a writer killed with -9 while it holds the lock: the kernel drops the lock
printf '<html><body><p>%s</p></body></html>\n' "nine ten eleven twelve thirteen fourteen" >"$LK/p2.html"
mkfifo "$LK/fifo"
"$SIMCRAWL" index add "$X" --fingerprints "$LK/fifo" 2>/dev/null & victim=$!
exec 8<>"$LK/fifo" # read-write: never blocks; the writer holds the lock, waits for input
n=0
while [ ! -s "$X.lock" ] && [ $n -lt 500 ]; do sleep 0.01; n=$((n + 1)); done
kill -9 $victim
wait $victim 2>/dev/null
exec 8>&-
expect_status 0 "lock: add after a writer killed with -9 holding the lock" -- \
    "$SIMCRAWL" index add "$X" --lock-wait 0 "$LK/p2.html"

# dedup --index: FILE.digests is saved before FILE, with the index's document count; a run
# killed between the two renames (simulated: the old FILE put back) leaves digests newer
# than the index, and the next run drops the digests of pages the index does not hold
# instead of making exact duplicates of pages whose run never finished
P=$LK/p.idx
printf '<html><body><p>%s</p></body></html>\n' "alpha bravo charlie delta echo foxtrot golf hotel" >"$LK/d1.html"
printf '<html><body><p>%s</p></body></html>\n' "india juliet kilo lima mike november oscar papa" >"$LK/d2.html"
cp "$LK/d2.html" "$LK/d2copy.html"
expect_status 0 "pair: dedup run 1" -- "$SIMCRAWL" dedup --quiet --k 0 --min-size 0 --index "$P" "$LK/d1.html"
expect_grep "^# index-documents 1$" "$P.digests" "pair: digests record the index's document count"
cp "$P" "$LK/p.idx.before"
expect_status 0 "pair: dedup run 2" -- "$SIMCRAWL" dedup --quiet --k 0 --min-size 0 --index "$P" "$LK/d2.html"
cp "$LK/p.idx.before" "$P" # killed after renaming the digests, before renaming the index
expect_status 0 "pair: dedup after a kill between the renames" -- \
    "$SIMCRAWL" dedup --quiet --k 0 --min-size 0 --index "$P" --log "$LK/pair.jsonl" "$LK/d2copy.html"
expect_grep "p.idx.digests is newer than .*p.idx (generation 2, the index's 1: a run was killed between saving the two): dropped the digests of 1 pages of that run" \
    "$TMP/err" "pair: the repair is named"
expect_grep '"decision":"new"' "$LK/pair.jsonl" "pair: no exact duplicate of a page of the unfinished run"
expect_grep "^# index-documents 2$" "$P.digests" "pair: consistent again"
