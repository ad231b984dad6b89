# simcrawl crawl --method minhash [--threshold J] (issue 16): the crawl's near-duplicate
# decision by the estimated Jaccard similarity of word 5-shingles (docs/MINHASH.md), its
# log fields, --state resume with the kept pages' signatures, and the usage errors.
# Against a loopback python3 http.server (127.0.0.1, a random free port) holding a page
# a, b (a with 4 words changed: estimate 0.9453), c (a with 20 words changed: 0.5859) and
# an unrelated d. Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
CM=$TMP/crawl_minhash
mkdir -p "$CM/site"
python3 - "$CM/site" <<'PY'
import os, random, sys
d = sys.argv[1]
r = random.Random(5)
words = ["w%d" % i for i in range(3000)]
base = [r.choice(words) for _ in range(400)]
def page(title, ws):
    return ("<html><head><title>%s</title></head><body><h1>%s</h1><p>%s</p></body></html>\n"
            % (title, title, " ".join(ws)))
b = list(base)
for i in range(0, 400, 100):
    b[i] = "changed%d" % i
c = list(base)
for i in range(0, 400, 20):
    c[i] = "other%d" % i
files = {"a.html": page("Alpha", base), "b.html": page("Alpha", b), "c.html": page("Alpha", c),
         "d.html": page("Delta", [r.choice(words) for _ in range(400)]),
         "index.html": "<html><body><p>pages</p>" + "".join(
             '<a href="%s">%s</a> ' % (x, x) for x in ["a.html", "b.html", "c.html", "d.html"])
         + "</body></html>\n"}
for name, text in files.items():
    open(os.path.join(d, name), "w").write(text)
PY
http_serve "$CM/site" "$CM/server.log"
cm_server=$http_pid
cm_port=$http_port
cm_seed="http://127.0.0.1:$cm_port/index.html"
# one connection: the pages are fetched in link order (index, a, b, c, d), and one worker
# decides them in that order (with two, b could be decided before a, under load, and a
# logged as b's near-duplicate); --no-templates: the signatures of the whole main texts,
# as `compare` makes them
cm_crawl() { timeout 60 "$SIMCRAWL" crawl --delay 0 --concurrency 1 --per-host 1 --workers 1 \
    --no-templates "$@"; }
# the decision of URL's line in LOG ("new", "near-duplicate", ...)
cm_decision() { sed -n "s|.*\"url\":\"http://127.0.0.1:$cm_port/$2\".*\"decision\":\"\([a-z-]*\)\".*|\1|p" "$1"; }
if [ -z "$cm_port" ]; then
    bad "crawl --method minhash: the loopback server did not start: $(cat "$CM/server.log")"
else
    expect_status 0 "crawl --method minhash" -- cm_crawl --method minhash --log "$CM/a.jsonl" \
        --warc "$CM/a.warc.gz" "$cm_seed"
    expect_grep "kept 4 new pages; dropped 1 near-duplicate and 0 exact duplicates" "$TMP/err" "minhash crawl: b dropped"
    # the log line of the dropped page: its original, the estimate (as compare gives it), no
    # Hamming distance
    expect_grep "\"url\":\"http://127.0.0.1:$cm_port/b.html\".*\"decision\":\"near-duplicate\",.*\"duplicate_of\":\"http://127.0.0.1:$cm_port/a.html\",\"jaccard\":0.9453,\"similarity\":0.9453" \
        "$CM/a.jsonl" "minhash crawl: b's jaccard and similarity logged"
    grep '"b.html"\|/b.html' "$CM/a.jsonl" | grep -q '"distance"' && bad "minhash crawl: a distance logged" || ok
    "$SIMCRAWL" compare --method minhash "$CM/site/a.html" "$CM/site/b.html" >"$CM/cmp" 2>&1
    expect_grep "^minhash_estimate: 0.945312" "$CM/cmp" "compare agrees with the crawl's estimate"
    [ "$(cm_decision "$CM/a.jsonl" c.html)" = new ] && ok || bad "minhash crawl: c (J 0.59) not new"
    grep '/c.html' "$CM/a.jsonl" | grep -q '"jaccard"' && bad "minhash crawl: a new page has a jaccard" || ok
    # a higher threshold keeps b; the simhash crawl of the same site is unchanged
    expect_status 0 "crawl --method minhash --threshold 0.95" -- cm_crawl --method minhash \
        --threshold 0.95 --log "$CM/b.jsonl" "$cm_seed"
    [ "$(cm_decision "$CM/b.jsonl" b.html)" = new ] && ok || bad "minhash crawl at 0.95: b not new"
    expect_status 0 "crawl (simhash)" -- cm_crawl --log "$CM/s.jsonl" "$cm_seed"
    expect_grep "/b.html\".*\"decision\":\"near-duplicate\",.*\"distance\":3" "$CM/s.jsonl" \
        "the simhash crawl logs the distance"
    grep -q '"jaccard"\|"similarity"' "$CM/s.jsonl" && bad "simhash crawl: jaccard logged" || ok
    # a config file's method and threshold
    printf '[crawl]\nmethod = minhash\nthreshold = 0.95\n' >"$CM/mh.conf"
    expect_status 0 "crawl minhash from a config file" -- cm_crawl --config "$CM/mh.conf" \
        --log "$CM/c.jsonl" "$cm_seed"
    [ "$(cm_decision "$CM/c.jsonl" b.html)" = new ] && ok || bad "config threshold 0.95: b not new"

    # --state: stopped after index and a, resumed: b is a near-duplicate of a, whose
    # signature came back from the state
    expect_status 0 "crawl --method minhash --state, 2 pages" -- cm_crawl --method minhash \
        --max-pages 2 --state "$CM/st" --log "$CM/r.jsonl" "$cm_seed"
    [ "$(cm_decision "$CM/r.jsonl" a.html)" = new ] && [ -z "$(cm_decision "$CM/r.jsonl" b.html)" ] &&
        ok || bad "crawl --state, first run: a new, b not fetched: $(cat "$CM/r.jsonl")"
    expect_status 1 "resume a minhash crawl without --method minhash" -- cm_crawl --state "$CM/st" \
        --log "$CM/r.jsonl" "$cm_seed"
    expect_grep "was started with --method minhash --threshold 0.8, not simhash" "$TMP/err" \
        "the other method is refused on resume"
    expect_status 1 "resume a minhash crawl with another threshold" -- cm_crawl --method minhash \
        --threshold 0.9 --state "$CM/st" --log "$CM/r.jsonl" "$cm_seed"
    expect_grep "not minhash --threshold 0.9" "$TMP/err" "another threshold is refused on resume"
    expect_status 0 "resume the minhash crawl" -- cm_crawl --method minhash --state "$CM/st" \
        --log "$CM/r.jsonl" "$cm_seed"
    expect_grep "/b.html\".*\"decision\":\"near-duplicate\",.*\"duplicate_of\":\"http://127.0.0.1:$cm_port/a.html\",\"jaccard\":0.9453" \
        "$CM/r.jsonl" "resumed: b is a near-duplicate of a (its signature from the state)"
    expect_grep "kept 4 new pages; dropped 1 near-duplicate" "$TMP/err" "resumed: the summary covers both runs"
    # a simhash crawl's state is not resumed as minhash
    expect_status 0 "crawl --state (simhash), 2 pages" -- cm_crawl --max-pages 2 \
        --state "$CM/st2" --log "$CM/r2.jsonl" "$cm_seed"
    expect_status 1 "resume a simhash crawl with --method minhash" -- cm_crawl --method minhash \
        --state "$CM/st2" --log "$CM/r2.jsonl" "$cm_seed"
    expect_grep "was started with --method simhash, not minhash --threshold 0.8" "$TMP/err" \
        "a simhash crawl is not resumed as minhash"
fi
http_stop "$cm_server"

# usage errors, before any transfer
expect_status 1 "crawl --method nosuch" -- "$SIMCRAWL" crawl --method nosuch http://127.0.0.1:1/
expect_grep "\-\-method: simhash or minhash, got 'nosuch'" "$TMP/err" "bad --method named"
expect_status 1 "crawl --threshold 0" -- "$SIMCRAWL" crawl --method minhash --threshold 0 http://127.0.0.1:1/
expect_grep "\-\-threshold: a Jaccard similarity" "$TMP/err" "bad --threshold named"
expect_status 1 "crawl --threshold 1.5" -- "$SIMCRAWL" crawl --method minhash --threshold 1.5 http://127.0.0.1:1/
expect_status 1 "crawl --threshold without minhash" -- "$SIMCRAWL" crawl --threshold 0.9 http://127.0.0.1:1/
expect_grep "\-\-threshold is the minhash method's" "$TMP/err" "--threshold with simhash refused"
expect_status 1 "crawl --k with minhash" -- "$SIMCRAWL" crawl --method minhash --k 2 http://127.0.0.1:1/
expect_grep "\-\-k is the simhash method's" "$TMP/err" "--k with minhash refused"
expect_status 0 "crawl --help lists --method" -- "$SIMCRAWL" crawl --help
expect_grep "\-\-method simhash|minhash" "$TMP/out" "crawl --help lists --method"
expect_grep "\-\-threshold J" "$TMP/out" "crawl --help lists --threshold"
# the shipped config's k (simhash's) does not stop a minhash crawl (it goes as far as the
# fetch: port 1 refuses at once, no retry)
expect_status 2 "shipped config with --method minhash" -- timeout 20 "$SIMCRAWL" crawl --quiet \
    --config config/simcrawl.conf --method minhash --unreachable-retries 0 http://127.0.0.1:1/
expect_grep "no page could be fetched" "$TMP/err" "a config file's k is not a usage error with minhash"
