# simcrawl serve, the HTTP dedup service (docs/HTTP-API.md): every endpoint as a client
# sees it, with curl on 127.0.0.1 (tests/serve_lib.sh). Options and config ([serve]);
# the refusal of a non-loopback address without a token (the refusal only: nothing but
# 127.0.0.1 is ever bound); POST /v1/check with a page (every decision string, the
# charset of the Content-Type honoured, idempotent by id, insert=false), with NDJSON
# fingerprints (answers in order, blank lines skipped, a bad line refused with its number
# and nothing added); /v1/fingerprint; /v1/neighbors (nearest first, k, limit); DELETE
# /v1/documents/ID then the page again; /v1/stats and /metrics numbers; /healthz; the
# access log; a second service on the same index (locked) and on a port in use; a
# restart keeps the documents; the examples of docs/HTTP-API.md and the README, run as
# written (tests/doc_examples.py). Bad requests, tokens, slow clients, SIGTERM in flight:
# tests/cli/serve_bad.sh; kill -9 under load: tests/cli/serve_kill.sh.
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
. tests/serve_lib.sh

# ---- options, config, refusals (no service started) ----
expect_status 0 "serve --help" -- "$SIMCRAWL" serve --help
for o in --listen --index --k --token-file --max-body --fsync --threads --max-connections \
    --timeout --access-log --quiet; do
    expect_grep "^  $o" "$TMP/out" "serve --help lists $o"
done
expect_status 0 "simcrawl --help" -- "$SIMCRAWL" --help
expect_grep "^  serve " "$TMP/out" "simcrawl --help lists serve"
expect_status 1 "serve --k 9" -- "$SIMCRAWL" serve --k 9
expect_grep "\-\-k: a Hamming distance" "$TMP/err" "bad --k names the option"
expect_status 1 "serve --fsync sometimes" -- "$SIMCRAWL" serve --fsync sometimes
expect_status 1 "serve --timeout 0" -- "$SIMCRAWL" serve --timeout 0
expect_status 1 "serve unknown option" -- "$SIMCRAWL" serve --no-such 1
expect_status 1 "serve operand" -- "$SIMCRAWL" serve page.html
expect_status 1 "serve --listen not ADDR:PORT" -- "$SIMCRAWL" serve --listen 127.0.0.1
expect_grep "not ADDR:PORT" "$TMP/err" "bad --listen says what it wants"
expect_status 1 "serve --listen port over 65535" -- "$SIMCRAWL" serve --listen 127.0.0.1:65536
# non-loopback without a token: refused before anything is bound (exit 1, the reason)
for a in 0.0.0.0:0 192.0.2.1:0 '[::]:0' '[2001:db8::1]:0' 128.0.0.1:0; do
    expect_status 1 "serve --listen $a without a token" -- timeout 20 "$SIMCRAWL" serve --listen "$a"
    expect_grep "refusing to listen on .* without a token" "$TMP/err" "--listen $a without a token: why"
done
# token files that are not one
: >"$SV/empty.token"
expect_status 1 "serve --token-file empty" -- "$SIMCRAWL" serve --token-file "$SV/empty.token"
expect_grep "token file .*empty.token is empty" "$TMP/err" "empty token file named"
expect_status 1 "serve --token-file missing" -- "$SIMCRAWL" serve --token-file "$SV/none.token"
expect_grep "cannot read token file" "$TMP/err" "missing token file named"
printf 'two words\n' >"$SV/space.token"
expect_status 1 "serve --token-file with a space" -- "$SIMCRAWL" serve --token-file "$SV/space.token"
printf 'a\nb\n' >"$SV/lines.token"
expect_status 1 "serve --token-file of two lines" -- "$SIMCRAWL" serve --token-file "$SV/lines.token"
# config: [serve] keys checked with file and line; [crawl] and [serve] in one file serve
# both commands (config/simcrawl.conf itself)
printf '[serve]\nk = 2\ntimout = 3\n' >"$SV/typo.conf"
expect_status 1 "serve config unknown key" -- "$SIMCRAWL" serve --config "$SV/typo.conf"
expect_grep "typo.conf:3: unknown key 'timout'" "$TMP/err" "serve config: unknown key, file and line"
printf '[serve]\nthreads = many\n' >"$SV/bad.conf"
expect_status 1 "serve config bad value" -- "$SIMCRAWL" serve --config "$SV/bad.conf"
expect_grep "bad.conf:2: --threads" "$TMP/err" "serve config: bad value, file, line and key"
printf '[serve]\nk = 1\n[srve]\n' >"$SV/sec.conf"
expect_status 1 "serve config unknown section" -- "$SIMCRAWL" serve --config "$SV/sec.conf"
expect_grep "sec.conf:3: unknown section \[srve\]" "$TMP/err" "serve config: unknown section named"
expect_status 0 "serve --config config/simcrawl.conf" -- "$SIMCRAWL" serve --config config/simcrawl.conf --help
expect_status 0 "crawl --config config/simcrawl.conf (with [serve])" -- \
    "$SIMCRAWL" crawl --config config/simcrawl.conf --help
printf '[serve]\nlisten = 0.0.0.0:8470\nk = nine\n' >"$SV/crawl-skips.conf"
expect_status 0 "crawl skips the [serve] section" -- "$SIMCRAWL" crawl --config "$SV/crawl-skips.conf" --help

# ---- the pages ----
python3 - "$SV" <<'EOP'
import sys
sys.path.insert(0, "tests")
from pagegen import para, page
d = sys.argv[1]
a = [para(60, s) for s in (1, 2, 3, 4, 5)]
edit = list(a)
edit[2] = edit[2].replace("river", "harbor", 1).replace("museum", "garden", 1)
def put(name, text, enc="utf-8"):
    with open("%s/%s" % (d, name), "wb") as f:
        f.write(text.encode(enc))
put("a.html", page("Alpha", a))
put("a-edit.html", page("Alpha", edit))
put("b.html", page("Beta", [para(60, s) for s in (11, 12, 13, 14, 15)]))
put("c.html", page("Gamma", [para(60, s) for s in (21, 22, 23, 24, 25)]))
put("short.html", page("Stub", ["two words"]))
# the same accented page in UTF-8 and in ISO-8859-1 (its Content-Type says which)
acc = [p.replace("e", "\u00e9").replace("a", "\u00e0") for p in [para(60, s) for s in (31, 32, 33)]]
put("acc-utf8.html", page("Acc\u00e8s", acc))
put("acc-latin1.html", page("Acc\u00e8s", acc), "iso-8859-1")
EOP
html='Content-Type: text/html; charset=utf-8'
nd='Content-Type: application/x-ndjson'

# ---- a service on an index file ----
X=$SV/main.idx
if ! sv_start main --index "$X" --fsync always --access-log "$SV/access.log"; then
    bad "serve: did not start: $(head -c 400 "$SV/main.err")"
else
    ok
    expect_grep "^simcrawl serve: listening on 127\.0\.0\.1:$SV_PORT, index $X (0 documents, k 3)\$" \
        "$SV/main.err" "serve: the listening line names the port, the index, documents and k"
    expect_http 200 "healthz" "$SV_URL/healthz"
    expect_json "healthz body" 'd == {"status": "ok"}'

    # /v1/check with pages: every decision string
    expect_http 200 "check a new page" -H "$html" --data-binary @"$SV/a.html" "$SV_URL/v1/check?id=https://site.example/a"
    expect_json "new page: the answer" 'd["id"] == "https://site.example/a" and d["decision"] == "new" and len(d["fingerprint"]) == 16 and d["duplicate_of"] is None and d["distance"] is None and d["added"] is True'
    fp_a=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$SV/body")
    expect_grep '^Content-Type: application/json' "$SV/headers" "check answers application/json"
    expect_http 200 "check a near-duplicate" -H "$html" --data-binary @"$SV/a-edit.html" "$SV_URL/v1/check?id=https://site.example/a-edit"
    expect_json "near-duplicate: of which page, how far" 'd["decision"] == "near-duplicate" and d["duplicate_of"] == "https://site.example/a" and 1 <= d["distance"] <= 3 and d["added"] is False'
    expect_http 200 "check an exact duplicate" -H "$html" --data-binary @"$SV/a.html" "$SV_URL/v1/check?id=https://mirror.example/a"
    expect_json "exact duplicate" 'd["decision"] == "exact-duplicate" and d["duplicate_of"] == "https://site.example/a" and d["distance"] == 0 and d["fingerprint"] == "'"$fp_a"'"'
    expect_http 200 "check a short page" -H "$html" --data-binary @"$SV/short.html" "$SV_URL/v1/check?id=https://site.example/stub"
    expect_json "too little text" 'd["decision"] == "too-little-text" and d["fingerprint"] is None and d["added"] is False'
    expect_http 200 "check a PNG" -H 'Content-Type: image/png' --data-binary @"$SV/a.html" "$SV_URL/v1/check?id=https://site.example/logo.png"
    expect_json "not html: filtered" 'd["decision"] == "filtered" and d["reason"] == "not html" and d["fingerprint"] is None'
    # idempotent by id: the same id again is its stored decision, nothing added
    expect_http 200 "check the same id again" -H "$html" --data-binary @"$SV/a.html" "$SV_URL/v1/check?id=https://site.example/a"
    expect_json "same id again: new, not added again" 'd["decision"] == "new" and d["added"] is False'
    # an id with reserved characters, percent-encoded by curl --url-query (the README's form)
    expect_http 200 "check with --url-query" -H "$html" --data-binary @"$SV/b.html" \
        --url-query "id=https://site.example/b?x=1&y=a b+c" "$SV_URL/v1/check"
    expect_json "the id decoded whole" 'd["id"] == "https://site.example/b?x=1&y=a b+c" and d["added"] is True'
    # insert=false: decided, not added
    expect_http 200 "check insert=false" -H "$html" --data-binary @"$SV/c.html" "$SV_URL/v1/check?id=https://site.example/c&insert=false"
    expect_json "insert=false: new, not added" 'd["decision"] == "new" and d["added"] is False'
    fp_c=$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["fingerprint"])' "$SV/body")
    expect_http 200 "neighbors of the page checked with insert=false" "$SV_URL/v1/neighbors?fingerprint=$fp_c&k=0"
    expect_json "insert=false: not in the index" 'd["neighbors"] == []'
    expect_http 200 "check it again, inserting" -H "$html" --data-binary @"$SV/c.html" "$SV_URL/v1/check?id=https://site.example/c"
    expect_json "then added" 'd["decision"] == "new" and d["added"] is True'
    # the charset of the Content-Type is the page's: the same text in two encodings
    expect_http 200 "fingerprint, UTF-8" -H "$html" --data-binary @"$SV/acc-utf8.html" "$SV_URL/v1/fingerprint"
    cp "$SV/body" "$SV/acc-utf8.json"
    expect_http 200 "fingerprint, ISO-8859-1" -H 'Content-Type: text/html; charset=iso-8859-1' --data-binary @"$SV/acc-latin1.html" "$SV_URL/v1/fingerprint"
    expect_json "charset honoured: same fingerprint in both encodings" 'd == json.load(open("'"$SV/acc-utf8.json"'"))'
    expect_http 200 "fingerprint, the ISO-8859-1 bytes said to be KOI8-R" -H 'Content-Type: text/html; charset=koi8-r' --data-binary @"$SV/acc-latin1.html" "$SV_URL/v1/fingerprint"
    expect_json "charset honoured: another charset, another fingerprint" 'd != json.load(open("'"$SV/acc-utf8.json"'"))'

    # /v1/fingerprint: the library's fingerprint, as the fingerprint command prints it
    expect_http 200 "fingerprint of a page" -H 'Content-Type: text/html' --data-binary @tests/data/fingerprint/page1.html "$SV_URL/v1/fingerprint"
    want=$("$SIMCRAWL" fingerprint --no-templates tests/data/fingerprint/page1.html | cut -c1-16)
    expect_json "fingerprint equals simcrawl fingerprint's ($want)" 'd == {"fingerprint": "'"$want"'"}'
    expect_http 200 "fingerprint of a short page" -H 'Content-Type: text/html' --data-binary @"$SV/short.html" "$SV_URL/v1/fingerprint"
    expect_json "fingerprint of a short page: the decision" 'd == {"fingerprint": None, "decision": "too-little-text"}'
    expect_http 200 "fingerprint of a PNG" -H 'Content-Type: image/png' --data-binary @"$SV/a.html" "$SV_URL/v1/fingerprint"
    expect_json "fingerprint of a PNG: filtered" 'd == {"fingerprint": None, "decision": "filtered", "reason": "not html"}'
    expect_http 200 "stats after pages" "$SV_URL/v1/stats"
    expect_json "stats: documents a, b, c; k 3" 'd["documents"] == 3 and d["k"] == 3'

    # NDJSON: precomputed fingerprints, answers in order, blank lines skipped
    printf '%s\n\n%s\r\n  %s\n%s' \
        '{"id":"fp-1","fingerprint":"00000000000000ff"}' \
        '{"fingerprint":"00000000000000fe", "id":"fp-2"}' \
        '{"id":"dir/fp-3","fingerprint":"FF00000000000000"}' \
        '{"id":"fp-1","fingerprint":"0000000000000000"}' >"$SV/bulk.ndjson"
    expect_http 200 "bulk check" -H "$nd" --data-binary @"$SV/bulk.ndjson" "$SV_URL/v1/check"
    expect_grep '^Content-Type: application/x-ndjson' "$SV/headers" "bulk answers application/x-ndjson"
    python3 -c 'import json,sys; print(json.dumps([json.loads(l) for l in open(sys.argv[1])]))' "$SV/body" >"$SV/bulk.json"
    expect_json "bulk: one answer per line, in order" '[x["id"] for x in d] == ["fp-1", "fp-2", "dir/fp-3", "fp-1"] and [x["decision"] for x in d] == ["new", "near-duplicate", "new", "new"] and [x["added"] for x in d] == [True, False, True, False] and d[1]["duplicate_of"] == "fp-1" and d[1]["distance"] == 1 and d[2]["fingerprint"] == "ff00000000000000"' "$SV/bulk.json"
    # a bad line: 400 naming it, and nothing of the batch added
    printf '%s\n%s\n%s\n%s\n' \
        '{"id":"nb-1","fingerprint":"1111111111111111"}' \
        '{"id":"nb-2","fingerprint":"2222222222222222"}' \
        '{"id":"nb-3","fingerprint":"33333333333333zz"}' \
        '{"id":"nb-4","fingerprint":"4444444444444444"}' >"$SV/badline.ndjson"
    expect_http 400 "bulk with a bad line" -H "$nd" --data-binary @"$SV/badline.ndjson" "$SV_URL/v1/check"
    expect_json "bulk bad line: named, nothing checked" 'd["error"].startswith("line 3: fingerprint is not 16 hex digits")'
    for f in 1111111111111111 2222222222222222 4444444444444444; do
        expect_http 200 "neighbors of a line before/after the bad one" "$SV_URL/v1/neighbors?fingerprint=$f&k=0"
        expect_json "bulk bad line: $f not added" 'd["neighbors"] == []'
    done
    n=0
    for line in '{"id":"x"}' '{"fingerprint":"1111111111111111"}' '{"id":"","fingerprint":"1111111111111111"}' \
        '{"id":7,"fingerprint":"1111111111111111"}' '{"id":"x","fingerprint":"111111111111111"}' \
        '{"id":"x","fingerprint":"1111111111111111","extra":1}' '["x","1111111111111111"]' \
        '{"id":"x","fingerprint":"1111111111111111"} x' '{"id":"x\u0000y","fingerprint":"1111111111111111"}' \
        '{"id":"x","id":"y","fingerprint":"1111111111111111"}' 'not json'; do
        n=$((n + 1))
        printf '{"id":"ok","fingerprint":"5555555555555555"}\n%s\n' "$line" >"$SV/bad$n.ndjson"
        expect_http 400 "bulk bad line $line" -H "$nd" --data-binary @"$SV/bad$n.ndjson" "$SV_URL/v1/check"
        expect_json "bulk bad line $line: line 2 named" 'd["error"].startswith("line 2: ")'
    done
    expect_http 200 "neighbors of the good line before bad ones" "$SV_URL/v1/neighbors?fingerprint=5555555555555555&k=0"
    expect_json "bad lines: the good line before them never added" 'd["neighbors"] == []'
    printf '%s\n' '{"id":"dry","fingerprint":"6666666666666666"}' >"$SV/dry.ndjson"
    expect_http 200 "bulk insert=false" -H "$nd" --data-binary @"$SV/dry.ndjson" "$SV_URL/v1/check?insert=false"
    expect_json "bulk insert=false: new, not added" 'd["decision"] == "new" and d["added"] is False'
    expect_http 200 "neighbors after bulk insert=false" "$SV_URL/v1/neighbors?fingerprint=6666666666666666&k=0"
    expect_json "bulk insert=false: not in the index" 'd["neighbors"] == []'
    expect_http 200 "bulk of nothing" -H "$nd" --data-binary '' "$SV_URL/v1/check"
    expect_grep '^Content-Length: 0' "$SV/headers" "bulk of nothing: no answer lines"

    # /v1/neighbors: nearest first (ties: the first added), k, limit. Three pages more
    # than k apart from each other, at distances 1, 3 and 3 of 0f00000000000000
    printf '%s\n' '{"id":"n1","fingerprint":"0f00000000000001"}' '{"id":"n3a","fingerprint":"0f0000000000000e"}' \
        '{"id":"n3b","fingerprint":"0f00000000000070"}' >"$SV/hood.ndjson"
    expect_http 200 "bulk for neighbors" -H "$nd" --data-binary @"$SV/hood.ndjson" "$SV_URL/v1/check"
    expect_grep '"id":"n3b","decision":"new"' "$SV/body" "neighbors: the three pages added"
    expect_http 200 "neighbors" "$SV_URL/v1/neighbors?fingerprint=0f00000000000000"
    expect_json "neighbors: nearest first, with fingerprint and distance" '[(x["id"], x["fingerprint"], x["distance"]) for x in d["neighbors"]] == [("n1", "0f00000000000001", 1), ("n3a", "0f0000000000000e", 3), ("n3b", "0f00000000000070", 3)] and d["k"] == 3 and d["fingerprint"] == "0f00000000000000"'
    expect_http 200 "neighbors k=1, upper-case hex" "$SV_URL/v1/neighbors?fingerprint=0F00000000000000&k=1"
    expect_json "neighbors k=1" '[x["id"] for x in d["neighbors"]] == ["n1"] and d["k"] == 1'
    expect_http 200 "neighbors limit=2" "$SV_URL/v1/neighbors?fingerprint=0f00000000000000&limit=2"
    expect_json "neighbors limit=2: the two nearest" '[x["id"] for x in d["neighbors"]] == ["n1", "n3a"]'
    expect_http 200 "neighbors k=0 of nothing" "$SV_URL/v1/neighbors?fingerprint=0f00000000000000&k=0"
    expect_json "neighbors k=0: none" 'd["neighbors"] == []'
    expect_http 400 "neighbors k over the index's" "$SV_URL/v1/neighbors?fingerprint=0f00000000000000&k=4"
    expect_json "neighbors k over: why" '"over the index" in d["error"]'
    expect_http 400 "neighbors bad hex" "$SV_URL/v1/neighbors?fingerprint=0f0000000000000g"
    expect_error "neighbors bad hex"
    expect_http 400 "neighbors without fingerprint" "$SV_URL/v1/neighbors"
    expect_error "neighbors without fingerprint"
    expect_http 400 "neighbors limit=0" "$SV_URL/v1/neighbors?fingerprint=0f00000000000000&limit=0"
    expect_http 400 "neighbors unknown parameter" "$SV_URL/v1/neighbors?fingerprint=0f00000000000000&top=2"

    # DELETE /v1/documents/ID (the id percent-encoded), then the page again
    enc=$(python3 -c 'import urllib.parse; print(urllib.parse.quote("https://site.example/a", safe=""))')
    expect_http 200 "delete a document" -X DELETE "$SV_URL/v1/documents/$enc"
    expect_json "deleted" 'd == {"id": "https://site.example/a", "deleted": True}'
    expect_http 404 "delete it again" -X DELETE "$SV_URL/v1/documents/$enc"
    expect_error "delete unknown id"
    expect_http 200 "the near-duplicate, after its original was deleted" -H "$html" --data-binary @"$SV/a-edit.html" "$SV_URL/v1/check?id=https://site.example/a-edit"
    expect_json "after delete: the near-duplicate is new" 'd["decision"] == "new" and d["added"] is True'
    expect_http 200 "the deleted page again" -H "$html" --data-binary @"$SV/a.html" "$SV_URL/v1/check?id=https://site.example/a"
    expect_json "after delete: the page is a near-duplicate of the copy kept meanwhile" 'd["decision"] == "near-duplicate" and d["duplicate_of"] == "https://site.example/a-edit"'
    expect_http 200 "delete an id with a slash, unencoded" -X DELETE "$SV_URL/v1/documents/dir/fp-3"
    expect_json "deleted dir/fp-3" 'd == {"id": "dir/fp-3", "deleted": True}'
    expect_http 400 "delete with a bad escape" -X DELETE "$SV_URL/v1/documents/a%2"
    expect_error "delete with a bad escape"
    expect_http 400 "delete with a query (an unencoded ?)" -X DELETE "$SV_URL/v1/documents/https://x/?a=1"
    expect_http 400 "delete of an empty id" -X DELETE "$SV_URL/v1/documents/"

    # stats and metrics: the numbers agree
    expect_http 200 "stats" "$SV_URL/v1/stats"
    # a, b, c, fp-1, dir/fp-3, n1, n3a, n3b; a and dir/fp-3 deleted; a-edit new since: 7
    expect_json "stats numbers" 'd["documents"] == 7 and d["k"] == 3 and d["index"] == "'"$X"'" and d["fingerprint_version"] == 12 and d["journal_bytes"] > 0 and d["requests"] >= 50 and d["uptime_seconds"] > 0 and d["version"] == "'"$("$SIMCRAWL" --version | cut -d' ' -f2)"'"'
    expect_http 200 "metrics" "$SV_URL/metrics"
    expect_grep '^Content-Type: text/plain; version=0.0.4' "$SV/headers" "metrics: Prometheus text format 0.0.4"
    python3 - "$SV/body" >"$SV/metrics.check" 2>&1 <<'EOP'
import re, sys
text = open(sys.argv[1]).read()
samples, types = {}, {}
for line in text.splitlines():
    if line.startswith("# TYPE "):
        _, _, name, kind = line.split()
        types[name] = kind
    elif line and not line.startswith("#"):
        name, value = line.rsplit(" ", 1)
        samples[name] = float(value)
problems = []
if samples.get("simcrawl_documents") != 7:
    problems.append("simcrawl_documents %s, want 7" % samples.get("simcrawl_documents"))
for name, kind in (("simcrawl_documents", "gauge"), ("simcrawl_requests_total", "counter"),
                   ("simcrawl_request_duration_seconds", "histogram"), ("simcrawl_journal_bytes", "gauge")):
    if types.get(name) != kind or "# HELP %s " % name not in text:
        problems.append("no HELP/TYPE %s for %s" % (kind, name))
checks = samples.get('simcrawl_requests_total{endpoint="check",code="200"}', 0)
if checks != 11:
    problems.append("check 200s: %s, want 11" % checks)
if samples.get('simcrawl_requests_total{endpoint="check_bulk",code="400"}', 0) != 12:
    problems.append("check_bulk 400s: %s, want 12" % samples.get('simcrawl_requests_total{endpoint="check_bulk",code="400"}'))
buckets = [(k, v) for k, v in samples.items() if k.startswith("simcrawl_request_duration_seconds_bucket")]
inf = samples.get('simcrawl_request_duration_seconds_bucket{le="+Inf"}')
if inf is None or inf != samples.get("simcrawl_request_duration_seconds_count"):
    problems.append("+Inf bucket %s != count %s" % (inf, samples.get("simcrawl_request_duration_seconds_count")))
values = [v for _, v in buckets]
if values != sorted(values) or len(values) < 10:
    problems.append("buckets not cumulative: %s" % values)
total = sum(v for k, v in samples.items() if k.startswith("simcrawl_requests_total"))
if total != inf:
    problems.append("requests_total sum %s != histogram count %s" % (total, inf))
print("ok" if not problems else "; ".join(problems))
EOP
    expect_grep '^ok$' "$SV/metrics.check" "metrics: numbers agree with what was asked"

    # a second service on the same index: its lock is taken (exit 2 at once with lock-wait 0)
    expect_status 2 "a second service on a locked index" -- timeout 20 "$SIMCRAWL" serve \
        --listen 127.0.0.1:0 --index "$X" --lock-wait 0
    expect_grep "cannot open the index .*main.idx: .*lock" "$TMP/err" "locked index named"
    # a port in use (the running service's)
    expect_status 2 "serve on a port in use" -- timeout 20 "$SIMCRAWL" serve --listen "127.0.0.1:$SV_PORT"
    expect_grep "cannot listen on 127.0.0.1:$SV_PORT" "$TMP/err" "port in use: says so"

    sv_stop
    [ "$SV_STATUS" = 0 ] && ok || bad "serve: SIGTERM: exit $SV_STATUS, want 0: $(tail -c 300 "$SV/main.err")"
    expect_grep "^simcrawl serve: stopped after [0-9]* requests; index saved: $X (7 documents)" "$SV/main.err" "serve: stop line"
    # the access log: one line per request answered
    reqs=$(sed -n 's/^simcrawl serve: stopped after \([0-9]*\) requests.*/\1/p' "$SV/main.err")
    lines=$(wc -l <"$SV/access.log")
    [ -n "$reqs" ] && [ "$lines" = "$reqs" ] && ok || bad "access log: $lines lines for ${reqs:-?} requests"
    expect_grep '^[0-9-]*T[0-9:]*Z 127\.0\.0\.1 "POST /v1/check?id=https://site\.example/a" 200 [0-9.]*$' "$SV/access.log" "access log line"

    # a restart on the same index keeps every document, and its k
    if sv_start restart --index "$X"; then
        expect_grep "index $X (7 documents, k 3)" "$SV/restart.err" "restart: the documents are back"
        expect_http 200 "restart: a page checked before" -H "$html" --data-binary @"$SV/b.html" --url-query "id=https://site.example/b?x=1&y=a b+c" "$SV_URL/v1/check"
        expect_json "restart: its stored decision, not added again" 'd["decision"] == "new" and d["added"] is False'
        sv_stop
        [ "$SV_STATUS" = 0 ] && ok || bad "restart: exit $SV_STATUS"
    else
        bad "serve restart: did not start: $(head -c 300 "$SV/restart.err")"
    fi
fi

# ---- config: the [serve] section, the command line winning ----
printf '[crawl]\nk = 7\n[serve]\nk = 2\nlisten = 127.0.0.1:1\nthreads = 1\n' >"$SV/serve.conf"
if sv_start config --config "$SV/serve.conf"; then
    expect_grep "in memory (0 documents, k 2)" "$SV/config.err" "config: [serve]'s k, the command line's listen"
    expect_http 200 "config: serving" "$SV_URL/healthz"
    sv_stop
else
    bad "serve --config: did not start: $(head -c 300 "$SV/config.err")"
fi

# ---- the examples of docs/HTTP-API.md and of the README, run as written ----
for doc in docs/HTTP-API.md README.md; do
    D=$SV/doc-$(basename "$doc" .md)
    mkdir -p "$D"
    ln -s "$PWD/tests" "$D/tests"
    ln -s "$PWD/examples" "$D/examples"
    if SV_CWD=$D sv_start "doc-$(basename "$doc" .md)" --index site.idx; then
        if python3 tests/doc_examples.py "$doc" "$SV_URL" "$D" >"$SV/doc.out" 2>&1; then
            ok
        else
            bad "$doc: an example does not do what it shows: $(tail -n 5 "$SV/doc.out")"
        fi
        sv_stop
    else
        bad "serve for $doc: did not start"
    fi
done
