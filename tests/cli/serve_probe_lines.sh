# simcrawl serve --probe-lines (issue 19, docs/HTTP-API.md "The probe's lines"): the
# option, its config key and refusals; then two services on copies of one index of 6,000
# fingerprints (made by index add --tables 10: keys long enough for lines), one with the
# lines on (--probe-lines-min 1, so that a small index has them) and one without, given
# the same requests: dry-run checks until the first has built its lines (/v1/stats says
# so, with their bytes; /metrics too), then NDJSON batches that add (past a merge of the
# adds into the main tables), near-duplicates of indexed and of new pages, and DELETE
# /v1/documents/ID between them: every answer the same. Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
. tests/serve_lib.sh

# ---- the option (no service started) ----
expect_status 0 "serve --help" -- "$SIMCRAWL" serve --help
for o in --probe-lines --probe-lines-min --probe-lines-max-bytes; do
    expect_grep "^  $o" "$TMP/out" "serve --help lists $o"
done
expect_grep "105-210 bytes a fingerprint" "$TMP/out" "serve --help states the lines' memory"
expect_status 1 "serve --probe-lines sometimes" -- "$SIMCRAWL" serve --probe-lines sometimes
expect_grep "\-\-probe-lines: off, on or auto, got 'sometimes'" "$TMP/err" "bad --probe-lines says what it wants"
expect_status 1 "serve --probe-lines on --method minhash" -- "$SIMCRAWL" serve --probe-lines on --method minhash
expect_grep "probe-lines on is for a simhash index in this process's memory, not for --method minhash" \
    "$TMP/err" "--probe-lines on with minhash: refused, and why"
expect_status 1 "serve --probe-lines on with a Redis index" -- \
    "$SIMCRAWL" serve --probe-lines on --index redis://127.0.0.1:1
expect_grep "not for an index on Redis" "$TMP/err" "--probe-lines on with Redis: refused, and why"
expect_status 1 "serve --probe-lines-max-bytes without auto" -- \
    "$SIMCRAWL" serve --probe-lines on --probe-lines-max-bytes 1000
expect_grep "probe-lines-max-bytes is the cap of --probe-lines auto" "$TMP/err" "a cap without auto: refused"
printf '[serve]\nprobe-lines = maybe\n' >"$SV/lines.conf"
expect_status 1 "serve config probe-lines = maybe" -- "$SIMCRAWL" serve --config "$SV/lines.conf"
expect_grep "lines.conf:2: --probe-lines" "$TMP/err" "serve config: bad probe-lines, file and line"

# ---- one index, two services ----
python3 - "$SV" <<'EOP'
import random, sys, json
d = sys.argv[1]
r = random.Random(19)
fps = [r.getrandbits(64) for _ in range(6000)]
with open(d + "/lines.fp", "w") as f:
    for i, v in enumerate(fps):
        f.write("%016x doc-%d\n" % (v, i))
def flip(v, n):
    for _ in range(n):
        v ^= 1 << r.randrange(64)
    return v
# dry runs: half near an indexed page, half random
with open(d + "/warm.ndjson", "w") as f:
    for i in range(3000):
        v = flip(fps[r.randrange(6000)], r.randrange(6)) if i % 2 else r.getrandbits(64)
        f.write(json.dumps({"id": "w-%d" % i, "fingerprint": "%016x" % v}) + "\n")
# batches that add: new pages, pages near indexed ones, pages near pages of the batch
new = []
for b in range(3):
    with open(d + "/batch%d.ndjson" % b, "w") as f:
        for i in range(2500):
            k = r.randrange(3)
            if k == 0 or not new:
                v = r.getrandbits(64)
            elif k == 1:
                v = flip(fps[r.randrange(6000)], r.randrange(6))
            else:
                v = flip(new[r.randrange(len(new))], r.randrange(6))
            new.append(v)
            f.write(json.dumps({"id": "b%d-%d" % (b, i), "fingerprint": "%016x" % v}) + "\n")
# what DELETE forgets between the batches
with open(d + "/deletes.txt", "w") as f:
    for i in r.sample(range(6000), 120):
        f.write("doc-%d\n" % i)
EOP
expect_status 0 "index add the 6,000 fingerprints" -- \
    "$SIMCRAWL" index add "$SV/lines.idx" --tables 10 --fingerprints "$SV/lines.fp"
cp "$SV/lines.idx" "$SV/on.idx"
cp "$SV/lines.idx" "$SV/off.idx"
nd='Content-Type: application/x-ndjson'
if ! sv_start lines_on --index "$SV/on.idx" --probe-lines on --probe-lines-min 1; then
    bad "serve --probe-lines on: did not start: $(head -c 400 "$SV/lines_on.err")"
else
    ON_PID=$SV_PID
    ON_URL=$SV_URL
    expect_grep "(6000 documents, k 3, probe lines on)" "$SV/lines_on.err" "the listening line says the lines are on"
    if ! sv_start lines_off --index "$SV/off.idx"; then
        bad "serve without --probe-lines: did not start: $(head -c 400 "$SV/lines_off.err")"
    else
        OFF_PID=$SV_PID
        OFF_URL=$SV_URL
        expect_http 200 "stats, lines on, before any check" "$ON_URL/v1/stats"
        expect_json "stats: lines not built yet (warming)" 'd["probe_lines"]["built"] is False and d["probe_lines"]["state"] == "warming" and d["probe_lines"]["need_bytes"] > 0'
        for u in "$ON_URL" "$OFF_URL"; do
            expect_http 200 "dry runs" -H "$nd" --data-binary @"$SV/warm.ndjson" "$u/v1/check?insert=false"
            cp "$SV/body" "$SV/warm.$(echo "$u" | tr -dc 0-9)"
        done
        if cmp -s "$SV/warm.$(echo "$ON_URL" | tr -dc 0-9)" "$SV/warm.$(echo "$OFF_URL" | tr -dc 0-9)"; then ok; else bad "dry runs: the answers with lines differ from those without"; fi
        expect_http 200 "stats, lines on, after the dry runs" "$ON_URL/v1/stats"
        expect_json "stats: the lines built, their bytes (8 * 10 + 4 a slot, 1.25-2.5 slots a fingerprint)" 'd["probe_lines"]["built"] is True and d["probe_lines"]["state"] == "built" and 6000 * 1.25 * 84 <= d["probe_lines"]["bytes"] <= 6000 * 2.5 * 84 + 16 * 84 and d["probe_lines"]["max_bytes"] == 0'
        expect_http 200 "metrics, lines on" "$ON_URL/metrics"
        expect_grep '^simcrawl_probe_lines_built{state="built"} 1$' "$SV/body" "metrics: the lines built"
        expect_grep '^simcrawl_probe_lines_bytes [1-9][0-9]*$' "$SV/body" "metrics: the lines' bytes"
        expect_http 200 "stats, lines off" "$OFF_URL/v1/stats"
        expect_json "stats: no lines" 'd["probe_lines"] == {"built": False, "state": "off", "bytes": 0, "need_bytes": d["probe_lines"]["need_bytes"], "max_bytes": 0}'
        expect_http 200 "metrics, lines off" "$OFF_URL/metrics"
        expect_grep '^simcrawl_probe_lines_built{state="off"} 0$' "$SV/body" "metrics: no lines"
        for b in 0 1 2; do
            for u in "$ON_URL" "$OFF_URL"; do
                expect_http 200 "batch $b" -H "$nd" --data-binary @"$SV/batch$b.ndjson" "$u/v1/check"
                cp "$SV/body" "$SV/batch$b.$(echo "$u" | tr -dc 0-9)"
            done
            if cmp -s "$SV/batch$b.$(echo "$ON_URL" | tr -dc 0-9)" "$SV/batch$b.$(echo "$OFF_URL" | tr -dc 0-9)"; then
                ok
            else
                bad "batch $b: the answers with lines differ from those without"
            fi
            [ "$b" = 2 ] && break
            # half the deletes after each of the first two batches
            for id in $(sed -n "$((b * 60 + 1)),$((b * 60 + 60))p" "$SV/deletes.txt"); do
                for u in "$ON_URL" "$OFF_URL"; do
                    curl -s --max-time 30 -o /dev/null -w '%{http_code}\n' -X DELETE \
                        "$u/v1/documents/$id" >>"$SV/deleted.codes"
                done
            done
        done
        deleted=$(grep -c '^200$' "$SV/deleted.codes")
        if [ "$deleted" = 240 ]; then ok; else bad "DELETE: $deleted of 240 answered 200"; fi
        near=$(grep -c '"near-duplicate"' "$SV/batch2.$(echo "$ON_URL" | tr -dc 0-9)")
        if [ "$near" -gt 300 ]; then ok; else bad "batch 2: only $near near-duplicates (the test needs many)"; fi
        expect_http 200 "stats after the batches" "$ON_URL/v1/stats"
        # past 4,096 adds the index merges them into its main tables: the lines of the old
        # main are then stale, and the answers after it show whether they were rebuilt
        expect_json "documents: 6000 + over 4096 new pages - 120 deleted (a merge)" 'd["documents"] > 6000 + 4096 - 120'
        ON_DOCS=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["documents"])' "$SV/body")
        expect_http 200 "stats after the batches, lines off" "$OFF_URL/v1/stats"
        expect_json "the same documents both ways" 'd["documents"] == '"$ON_DOCS"
        SV_PID=$OFF_PID
        sv_stop
    fi
    SV_PID=$ON_PID
    sv_stop
    if [ "$SV_STATUS" = 0 ]; then ok; else bad "serve --probe-lines on: exit $SV_STATUS"; fi
fi
