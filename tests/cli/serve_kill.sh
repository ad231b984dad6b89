# simcrawl serve's durability under kill -9 (docs/HTTP-API.md, "Durability"): with
# --fsync always, a client (tests/serve_client.py) posts NDJSON batches of new
# fingerprints on one keep-alive connection and records every id a 200 answered
# "added": true; the service is killed with SIGKILL at a random moment of the load; it is
# restarted at once on the same index (flock: the lock died with the process, so
# --lock-wait 0 must do), and every id ever acknowledged must be there (GET /v1/neighbors
# of its fingerprint at k 0 lists it), the index holding at most one batch more per run
# than was acknowledged (lines added and journaled whose answer the kill cut off). Each
# run goes on from the index the last one left (the restarted service is stopped with
# SIGTERM, which compacts the journal into the index); each run checks its own
# acknowledged adds, the last run all of them; each kill comes within 0.3 s after the
# run's first acknowledged batch, and the runs together must have acknowledged at least
# one add each. SERVE_KILL_RUNS runs (default 10, about a second each; make stress runs
# more).
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
. tests/serve_lib.sh
SK=$SV/kill
mkdir -p "$SK"
SK_RUNS=${SERVE_KILL_RUNS:-10}
SK_BATCH=8 # tests/serve_client.py's BATCH
X=$SK/k.idx
: >"$SK/acked"
run=0
killed=0
before=0
while [ $run -lt "$SK_RUNS" ]; do
    run=$((run + 1))
    if ! sv_start "kill$run" --index "$X" --fsync always --lock-wait 0; then
        bad "serve kill run $run: did not start: $(head -c 300 "$SV/kill$run.err")"
        break
    fi
    python3 tests/serve_client.py load "$SV_PORT" "$SK/acked" "$run$$" >"$SK/load.out" 2>"$SK/load.err" &
    lp=$!
    # the kill comes at a random moment after the first acknowledged batch of this run (a
    # kill before it, under a loaded machine's slow client start, would check nothing)
    i=0
    while [ "$(wc -l <"$SK/acked")" -le "$before" ] && kill -0 "$lp" 2>/dev/null && [ $i -lt 400 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    sleep "$(awk -v s="$run$$" 'BEGIN { srand(s); printf "%.3f", rand() * 0.3 }')"
    kill -0 "$lp" 2>/dev/null && killed=$((killed + 1))
    sv_kill
    wait "$lp"
    # at once, on the same index: the lock went with the killed process
    if ! sv_start "check$run" --index "$X" --lock-wait 0; then
        bad "serve kill run $run: restart: $(head -c 300 "$SV/check$run.err")"
        break
    fi
    # this run's acknowledged adds; at the last run every run's
    tail -n +$((before + 1)) "$SK/acked" >"$SK/acked.run"
    [ $run = "$SK_RUNS" ] && cp "$SK/acked" "$SK/acked.run"
    python3 tests/serve_client.py verify "$SV_PORT" "$SK/acked.run" >"$SK/verify.out" 2>&1
    acked=$(wc -l <"$SK/acked")
    checked=$(wc -l <"$SK/acked.run")
    docs=$(curl -s --max-time 10 "$SV_URL/v1/stats" | python3 -c 'import json,sys; print(json.load(sys.stdin)["documents"])' 2>/dev/null)
    sv_stop
    before=$acked
    if grep -q "^verified $checked lost 0\$" "$SK/verify.out" && [ -n "$docs" ] &&
        [ "$docs" -ge "$acked" ] && [ "$docs" -le $((acked + SK_BATCH * run)) ] && [ "$SV_STATUS" = 0 ]; then
        ok
    else
        bad "serve kill run $run: $(tail -n 1 "$SK/verify.out") of $checked acknowledged; the index holds ${docs:-?}; restarted service exit $SV_STATUS; $(head -c 200 "$SK/load.err")"
    fi
done
[ "$killed" -ge $((SK_RUNS / 2)) ] && ok || bad "serve kill: only $killed of $SK_RUNS runs were killed under load"
[ "$(wc -l <"$SK/acked")" -ge "$SK_RUNS" ] && ok ||
    bad "serve kill: only $(wc -l <"$SK/acked") adds were acknowledged in $SK_RUNS runs: the kills checked next to nothing"
echo "serve kill: $run of $SK_RUNS runs, $killed killed under load, $(wc -l <"$SK/acked") acknowledged adds checked" >&2
