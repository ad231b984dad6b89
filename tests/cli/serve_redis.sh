# simcrawl serve --index redis://...: two services on one Redis share one index (a page
# checked on one is a duplicate on the other: exact, near, the same id again, NDJSON
# fingerprints, neighbours, a delete seen by the other, the count); the prefix keeps two
# indexes apart; k from the index; the minhash method refused; a Redis that is not there
# or goes away for longer than retry=: a clear error naming the URL, then the service
# works again once Redis is back; a Redis restarted under a request (its data saved): the
# request waits, connects again and is answered, nothing lost or added twice. A
# redis-server of its own on 127.0.0.1 (tests/redis_lib.sh), stopped after.
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
. tests/serve_lib.sh
. tests/redis_lib.sh
trap 'sv_cleanup; rd_cleanup; rm -rf "$TMP"' EXIT

python3 - "$SV" <<'EOP'
import sys
sys.path.insert(0, "tests")
from pagegen import para, page
d = sys.argv[1]
a = [para(60, s) for s in (1, 2, 3, 4, 5)]
edit = list(a)
edit[2] = edit[2].replace("river", "harbor", 1).replace("museum", "garden", 1)
def put(name, text):
    with open("%s/%s" % (d, name), "wb") as f:
        f.write(text.encode("utf-8"))
put("ra.html", page("Alpha", a))
put("ra-edit.html", page("Alpha", edit))
put("rb.html", page("Beta", [para(60, s) for s in (11, 12, 13, 14, 15)]))
EOP
html='Content-Type: text/html; charset=utf-8'
nd='Content-Type: application/x-ndjson'

expect_status 0 "serve --help names the redis index" -- "$SIMCRAWL" serve --help
expect_grep "redis://HOST\[:PORT\]" "$TMP/out" "serve --help: --index redis://"

if ! rd_start; then
    bad "serve_redis: cannot start redis-server on 127.0.0.1"
else
    ok
    R="$RD_URL/0?prefix=serve1&retry=1"
    sv_start one --index "$R" && A_URL=$SV_URL && A_PID=$SV_PID
    expect_grep "listening on 127\.0\.0\.1:[0-9]*, index $R (0 documents, k 3)" "$SV/one.err" \
        "serve one on redis: listening, the URL, k 3"
    sv_start two --index "$R" && B_URL=$SV_URL && B_PID=$SV_PID
    expect_grep "listening on .*, index $R" "$SV/two.err" "serve two on the same redis index"

    expect_http 200 "one: a new page" -H "$html" --data-binary @"$SV/ra.html" "$A_URL/v1/check?id=https://r.example/a"
    expect_json "one: new" 'd["decision"] == "new" and d["duplicate_of"] is None'
    fp=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$SV/body")
    expect_http 200 "two: the same bytes" -H "$html" --data-binary @"$SV/ra.html" "$B_URL/v1/check?id=https://mirror.example/a"
    expect_json "two: an exact duplicate of one's page" 'd["decision"] == "exact-duplicate" and d["duplicate_of"] == "https://r.example/a"'
    expect_http 200 "two: an edited copy" -H "$html" --data-binary @"$SV/ra-edit.html" "$B_URL/v1/check?id=https://r.example/a-edit"
    expect_json "two: a near-duplicate of one's page" 'd["decision"] == "near-duplicate" and d["duplicate_of"] == "https://r.example/a" and 0 < d["distance"] <= 3'
    expect_http 200 "two: one's id again" -H "$html" --data-binary @"$SV/ra.html" "$B_URL/v1/check?id=https://r.example/a"
    expect_json "two: the same id is new (idempotent by id)" 'd["decision"] == "new"'
    expect_http 200 "two: another page, dry run" -H "$html" --data-binary @"$SV/rb.html" "$B_URL/v1/check?id=https://r.example/b&insert=false"
    expect_json "two: dry run new" 'd["decision"] == "new"'
    expect_http 200 "one: stats" "$A_URL/v1/stats"
    expect_json "one: 1 document (the dry run added none)" 'd["documents"] == 1'
    # NDJSON fingerprints: one's page's fingerprint with one bit flipped, on two
    fp2=$(python3 -c 'import sys; print("%016x" % (int(sys.argv[1], 16) ^ 1))' "$fp")
    printf '{"id":"fp-1","fingerprint":"%s"}\n' "$fp2" >"$SV/r.ndjson"
    expect_http 200 "two: ndjson" -H "$nd" --data-binary @"$SV/r.ndjson" "$B_URL/v1/check"
    expect_json "two: the fingerprint is a near-duplicate of one's page" 'd["decision"] == "near-duplicate" and d["distance"] == 1'
    expect_http 200 "one: neighbors" "$A_URL/v1/neighbors?fingerprint=$fp2&k=2"
    expect_json "one: neighbors finds the page" '[n["id"] for n in d["neighbors"]] == ["https://r.example/a"]'
    expect_http 200 "one: metrics" "$A_URL/metrics"
    expect_grep "^simcrawl_documents 1\$" "$SV/body" "one: /metrics counts the redis index's documents"
    # a delete on one is seen by two
    expect_http 200 "one: delete" -X DELETE "$A_URL/v1/documents/https%3A%2F%2Fr.example%2Fa"
    expect_http 200 "two: the edited copy again" -H "$html" --data-binary @"$SV/ra-edit.html" "$B_URL/v1/check?id=https://r.example/a-edit"
    expect_json "two: new once one deleted its original" 'd["decision"] == "new"'
    # the keys are under the prefix
    expect_status 0 "redis-cli keys" -- rd_cli --scan --pattern 'serve1:*'
    expect_grep "^serve1:meta\$" "$TMP/out" "the meta record under the prefix"
    expect_grep "^serve1:b:0:" "$TMP/out" "buckets under the prefix"

    # Redis goes away (for longer than retry=1): a clear error naming the URL; back: the
    # service answers again
    rd_cli shutdown nosave >/dev/null 2>&1
    wait "$RD_PID" 2>/dev/null
    expect_http 500 "one: redis gone" -H "$html" --data-binary @"$SV/rb.html" "$A_URL/v1/check?id=https://r.example/b"
    expect_grep "redis://127.0.0.1:$RD_PORT" "$SV/one.err" "one: the log names the redis URL"
    redis-server --port "$RD_PORT" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$RD_DIR" --logfile "$RD_DIR/redis.log" --daemonize no >/dev/null 2>&1 &
    RD_PID=$!
    for _ in $(seq 100); do rd_cli ping 2>/dev/null | grep -q PONG && break; sleep 0.1; done
    expect_http 500 "one: redis back, but empty: the index is gone" -H "$html" --data-binary @"$SV/rb.html" "$A_URL/v1/check?id=https://r.example/b"
    expect_grep "is gone" "$SV/one.err" "one: says the index was deleted"
    SV_PID=$A_PID; sv_stop
    expect_status 0 "serve one stopped" -- test "$SV_STATUS" = 0
    SV_PID=$B_PID; sv_stop

    # Redis restarted (its data saved) while a request waits: answered once it is back
    sv_start three --index "$RD_URL/0?prefix=serve2&retry=20" && C_URL=$SV_URL && C_PID=$SV_PID
    expect_http 200 "three: a new page" -H "$html" --data-binary @"$SV/ra.html" "$C_URL/v1/check?id=https://r.example/a"
    rd_cli shutdown save >/dev/null 2>&1
    wait "$RD_PID" 2>/dev/null
    (sleep 1; exec redis-server --port "$RD_PORT" --bind 127.0.0.1 --save '' --appendonly no \
        --dir "$RD_DIR" --logfile "$RD_DIR/redis.log" --daemonize no >/dev/null 2>&1) &
    RD_PID=$!
    expect_http 200 "three: redis down for 1 s under the request" -H "$html" --data-binary @"$SV/rb.html" "$C_URL/v1/check?id=https://r.example/b"
    expect_json "three: new, once Redis is back" 'd["decision"] == "new"'
    expect_http 200 "three: an edited copy of the page checked before the restart" -H "$html" --data-binary @"$SV/ra-edit.html" "$C_URL/v1/check?id=https://r.example/a-edit"
    expect_json "three: a near-duplicate of it (the index survived)" 'd["decision"] == "near-duplicate" and d["duplicate_of"] == "https://r.example/a"'
    expect_http 200 "three: stats" "$C_URL/v1/stats"
    expect_json "three: 2 documents" 'd["documents"] == 2'
    SV_PID=$C_PID; sv_stop
    expect_status 0 "serve three stopped" -- test "$SV_STATUS" = 0

    # k from the index, another prefix, the minhash method, a Redis not there
    sv_start k5 --index "$RD_URL?prefix=k5" --k 5 && SV_PID_K5=$SV_PID
    SV_PID=$SV_PID_K5; sv_stop
    sv_start k5b --index "$RD_URL?prefix=k5"
    expect_grep "index $RD_URL?prefix=k5 (0 documents, k 5)" "$SV/k5b.err" "serve: k from the redis index"
    sv_stop
    expect_status 0 "index stats on redis" -- "$SIMCRAWL" index stats "$RD_URL?prefix=k5"
    expect_grep "^documents: 0\$" "$TMP/out" "index stats on redis: documents"
    expect_grep "^k: 5\$" "$TMP/out" "index stats on redis: k"
    expect_status 0 "index stats --format jsonl on redis" -- "$SIMCRAWL" index stats --format jsonl "$RD_URL?prefix=k5"
    expect_json "index stats jsonl on redis" 'd["documents"] == 0 and d["k"] == 5 and d["tables"] >= 1' "$TMP/out"
    expect_status 2 "index stats of a prefix with no index" -- "$SIMCRAWL" index stats "$RD_URL?prefix=nothing"
    expect_grep "no index under prefix 'nothing'" "$TMP/err" "index stats: no index there, not made"
    expect_status 0 "redis-cli exists" -- rd_cli exists nothing:meta
    expect_grep "^0\$" "$TMP/out" "index stats made no index"
    expect_status 2 "serve --k 3 on a k 5 redis index" -- timeout 20 "$SIMCRAWL" serve --listen 127.0.0.1:0 --index "$RD_URL?prefix=k5" --k 3
    expect_grep "k 5" "$TMP/err" "serve: the k mismatch says the index's k"
    expect_status 2 "serve --method minhash on redis" -- timeout 20 "$SIMCRAWL" serve --listen 127.0.0.1:0 --index "$RD_URL?prefix=mh" --method minhash
    expect_grep "not supported on redis" "$TMP/err" "serve: minhash on redis is refused, saying why"
    rd_stop
    expect_status 2 "serve on a redis not there" -- timeout 20 "$SIMCRAWL" serve --listen 127.0.0.1:0 --index "$RD_URL?timeout=1"
    expect_grep "$RD_URL.*cannot connect" "$TMP/err" "serve: the URL and why"
fi
