# simcrawl serve --method minhash (docs/HTTP-API.md): the options and [serve] keys (a bad
# method or threshold, --threshold without minhash, --k with it); a minhash service on an
# index file: new, near-duplicate with its similarity and jaccard (the signatures'
# estimate), exact duplicate, idempotent by id; /v1/stats and /metrics name the method and
# threshold; NDJSON fingerprints and GET /v1/neighbors refused with what to do instead;
# POST /v1/neighbors with a page, most similar first; DELETE; a restart keeps the pages;
# the index refused by a simhash service and with another threshold, and a simhash index
# by a minhash service, each with its reason (exit 2). On 127.0.0.1 only
# (tests/serve_lib.sh). Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
. tests/serve_lib.sh

# ---- options, config ----
expect_status 0 "serve --help" -- "$SIMCRAWL" serve --help
for o in --method --threshold; do
    expect_grep "^  $o" "$TMP/out" "serve --help lists $o"
done
expect_status 1 "serve --method jaccard" -- "$SIMCRAWL" serve --method jaccard
expect_grep "\-\-method: simhash or minhash, got 'jaccard'" "$TMP/err" "bad --method names the choices"
for t in 0 1.5 -0.2 abc; do
    expect_status 1 "serve --threshold $t" -- "$SIMCRAWL" serve --method minhash --threshold "$t"
    expect_grep "\-\-threshold: a Jaccard similarity" "$TMP/err" "bad --threshold $t named"
done
expect_status 1 "serve --threshold without minhash" -- "$SIMCRAWL" serve --threshold 0.9
expect_grep "is the minhash method's" "$TMP/err" "--threshold without --method minhash: why"
expect_status 1 "serve --k with minhash" -- "$SIMCRAWL" serve --method minhash --k 2
expect_grep "is the simhash method's" "$TMP/err" "--k with --method minhash: why"
printf '[serve]\nmethod = minhash\nthreshold = 2\n' >"$SV/mh-bad.conf"
expect_status 1 "serve config threshold = 2" -- "$SIMCRAWL" serve --config "$SV/mh-bad.conf"
expect_grep "mh-bad.conf:3: --threshold" "$TMP/err" "serve config: bad threshold, file and line"

python3 - "$SV" <<'EOP'
import sys
sys.path.insert(0, "tests")
from pagegen import para, page
d = sys.argv[1]
a = [para(60, s) for s in (101, 102, 103, 104, 105)]
edit = list(a)
edit[2] = edit[2].replace("river", "harbor", 1).replace("museum", "garden", 1)
far = list(a)
far[1] = para(60, 301)
far[3] = para(60, 302)
def put(name, text):
    with open("%s/%s" % (d, name), "wb") as f:
        f.write(text.encode("utf-8"))
put("mh-a.html", page("Alpha", a))
put("mh-a-edit.html", page("Alpha", edit))
put("mh-a-far.html", page("Alpha", far))
put("mh-b.html", page("Beta", [para(60, s) for s in (111, 112, 113, 114, 115)]))
put("mh-short.html", page("Stub", ["two words"]))
EOP
html='Content-Type: text/html; charset=utf-8'
X=$SV/mh.idx

# ---- a minhash service on an index file, its threshold from the config ----
printf '[serve]\nmethod = minhash\nthreshold = 0.7\n' >"$SV/mh.conf"
if ! sv_start mh --config "$SV/mh.conf" --index "$X" --fsync always; then
    bad "serve --method minhash: did not start: $(head -c 400 "$SV/mh.err")"
else
    ok
    expect_grep "^simcrawl serve: listening on 127\.0\.0\.1:$SV_PORT, index $X (0 documents, minhash, threshold 0.7)\$" \
        "$SV/mh.err" "serve --method minhash: the listening line names the method and threshold"
    expect_http 200 "minhash: a new page" -H "$html" --data-binary @"$SV/mh-a.html" "$SV_URL/v1/check?id=https://site.example/a"
    expect_json "minhash new: no similarity" 'd["decision"] == "new" and d["added"] is True and d["similarity"] is None and d["jaccard"] is None and d["distance"] is None'
    expect_http 200 "minhash: a near-duplicate" -H "$html" --data-binary @"$SV/mh-a-edit.html" "$SV_URL/v1/check?id=https://site.example/a-edit"
    expect_json "minhash near-duplicate: of which page, the estimate" 'd["decision"] == "near-duplicate" and d["duplicate_of"] == "https://site.example/a" and 0.7 <= d["similarity"] < 1 and d["jaccard"] == d["similarity"] and d["distance"] is None and d["added"] is False'
    expect_http 200 "minhash: an exact duplicate" -H "$html" --data-binary @"$SV/mh-a.html" "$SV_URL/v1/check?id=https://mirror.example/a"
    expect_json "minhash exact duplicate: similarity 1" 'd["decision"] == "exact-duplicate" and d["duplicate_of"] == "https://site.example/a" and d["similarity"] == 1 and d["jaccard"] == 1'
    expect_http 200 "minhash: another page" -H "$html" --data-binary @"$SV/mh-b.html" "$SV_URL/v1/check?id=https://site.example/b"
    expect_json "minhash: an unrelated page is new" 'd["decision"] == "new" and d["added"] is True'
    expect_http 200 "minhash: too short" -H "$html" --data-binary @"$SV/mh-short.html" "$SV_URL/v1/check?id=https://site.example/stub"
    expect_json "minhash: too little text" 'd["decision"] == "too-little-text" and d["added"] is False'
    expect_http 200 "minhash: the same id again" -H "$html" --data-binary @"$SV/mh-b.html" "$SV_URL/v1/check?id=https://site.example/a"
    expect_json "minhash: same id, stored decision" 'd["decision"] == "new" and d["added"] is False'
    expect_http 200 "minhash: a dry run" -H "$html" --data-binary @"$SV/mh-a-far.html" "$SV_URL/v1/check?id=https://site.example/far&insert=false"
    expect_json "minhash dry run: decided, not added" 'd["added"] is False and d["decision"] in ("new", "near-duplicate")'

    # what needs a simhash is refused with what to do instead
    printf '{"id":"x","fingerprint":"0123456789abcdef"}\n' >"$SV/mh.ndjson"
    expect_http 400 "minhash: NDJSON fingerprints" -H 'Content-Type: application/x-ndjson' --data-binary @"$SV/mh.ndjson" "$SV_URL/v1/check"
    expect_error "minhash: NDJSON fingerprints"
    expect_grep "minhash method, which checks pages" "$SV/body" "minhash: NDJSON refused, why"
    expect_http 400 "minhash: GET neighbors" "$SV_URL/v1/neighbors?fingerprint=0123456789abcdef"
    expect_grep "POST the page to /v1/neighbors" "$SV/body" "minhash: GET neighbors refused, what instead"

    # neighbours of a page: most similar first, the threshold said
    expect_http 200 "minhash: POST neighbors" -H "$html" --data-binary @"$SV/mh-a-edit.html" "$SV_URL/v1/neighbors"
    expect_json "minhash neighbors: a, at its estimate" 'd["threshold"] == 0.7 and [x["id"] for x in d["neighbors"]] == ["https://site.example/a"] and 0.7 <= d["neighbors"][0]["similarity"] < 1'
    expect_http 200 "minhash: POST neighbors threshold 0.1" -H "$html" --data-binary @"$SV/mh-a-far.html" "$SV_URL/v1/neighbors?threshold=0.1&limit=5"
    expect_json "minhash neighbors at 0.1: sorted, b not among them" 'd["threshold"] == 0.1 and all(d["neighbors"][i]["similarity"] >= d["neighbors"][i + 1]["similarity"] for i in range(len(d["neighbors"]) - 1)) and "https://site.example/b" not in [x["id"] for x in d["neighbors"]]'
    expect_http 400 "minhash: neighbors threshold 2" -H "$html" --data-binary @"$SV/mh-a.html" "$SV_URL/v1/neighbors?threshold=2"
    expect_http 200 "minhash: neighbors of a short page" -H "$html" --data-binary @"$SV/mh-short.html" "$SV_URL/v1/neighbors"
    expect_json "minhash: neighbors of a short page: none, why" 'd["neighbors"] == [] and d["decision"] == "too-little-text"'

    expect_http 200 "minhash stats" "$SV_URL/v1/stats"
    expect_json "minhash stats: method, threshold, documents" 'd["method"] == "minhash" and d["threshold"] == 0.7 and d["k"] is None and d["documents"] == 2'
    expect_http 200 "minhash metrics" "$SV_URL/metrics"
    expect_grep '^simcrawl_info{.*method="minhash"} 1$' "$SV/body" "minhash metrics: the method"
    expect_grep '^simcrawl_threshold 0.7$' "$SV/body" "minhash metrics: the threshold"

    # delete: a forgotten, the edit is then new
    expect_http 200 "minhash: delete a" -X DELETE "$SV_URL/v1/documents/https:%2F%2Fsite.example%2Fa"
    expect_http 200 "minhash: the edit after the delete" -H "$html" --data-binary @"$SV/mh-a-edit.html" "$SV_URL/v1/check?id=https://site.example/a-edit"
    expect_json "minhash: the edit is new once a is deleted" 'd["decision"] == "new" and d["added"] is True'
    sv_stop
    [ "$SV_STATUS" = 0 ] && ok || bad "minhash service: exit $SV_STATUS after SIGTERM"
fi

# the other method, another threshold: refused at start (exit 2), with the reason
expect_status 2 "simhash service on a minhash index" -- timeout 20 "$SIMCRAWL" serve --listen 127.0.0.1:0 --index "$X"
expect_grep "mh.idx is a minhash index; it cannot be opened with the simhash method" "$TMP/err" "simhash on a minhash index: the log says why"
expect_grep "of the other method" "$TMP/err" "simhash on a minhash index: the error"
expect_status 2 "minhash service, another threshold" -- timeout 20 "$SIMCRAWL" serve --listen 127.0.0.1:0 --index "$X" --method minhash --threshold 0.9
expect_grep "mh.idx was made with threshold 0.7, not 0.9" "$TMP/err" "another threshold: the log says why"

# a restart keeps the pages (threshold from the index)
if ! sv_start mh2 --index "$X" --method minhash; then
    bad "serve --method minhash again: did not start: $(head -c 400 "$SV/mh2.err")"
else
    ok
    expect_grep "(2 documents, minhash, threshold 0.7)" "$SV/mh2.err" "minhash restart: documents and the index's threshold"
    expect_http 200 "minhash restart: an exact duplicate of b" -H "$html" --data-binary @"$SV/mh-b.html" "$SV_URL/v1/check?id=https://mirror.example/b"
    expect_json "minhash restart: b still there" 'd["decision"] == "exact-duplicate" and d["duplicate_of"] == "https://site.example/b"'
    sv_stop
fi

# a simhash index, a minhash service; POST /v1/neighbors to a simhash service
S=$SV/sim-for-mh.idx
if ! sv_start sim --index "$S"; then
    bad "serve (simhash): did not start: $(head -c 400 "$SV/sim.err")"
else
    ok
    expect_http 200 "simhash: a page" -H "$html" --data-binary @"$SV/mh-a.html" "$SV_URL/v1/check?id=https://site.example/a"
    expect_http 200 "simhash: a near-duplicate" -H "$html" --data-binary @"$SV/mh-a-edit.html" "$SV_URL/v1/check?id=https://site.example/a-edit"
    expect_json "simhash near-duplicate: similarity 1 - d/64, no jaccard" 'd["decision"] == "near-duplicate" and d["similarity"] == 1 - d["distance"] / 64 and "jaccard" not in d'
    expect_http 400 "simhash: POST neighbors" -H "$html" --data-binary @"$SV/mh-a.html" "$SV_URL/v1/neighbors"
    expect_grep "uses the simhash method" "$SV/body" "simhash: POST neighbors refused, why"
    expect_http 200 "simhash stats" "$SV_URL/v1/stats"
    expect_json "simhash stats: the method" 'd["method"] == "simhash" and d["threshold"] is None and d["k"] == 3'
    sv_stop
fi
expect_status 2 "minhash service on a simhash index" -- timeout 20 "$SIMCRAWL" serve --listen 127.0.0.1:0 --index "$S" --method minhash
expect_grep "sim-for-mh.idx is a simhash index; it cannot be opened with the minhash method" "$TMP/err" "minhash on a simhash index: why"
