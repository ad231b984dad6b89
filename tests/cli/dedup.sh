# simcrawl dedup: a WARC written by wget against a loopback server (python3 http.server on
# 127.0.0.1, a random free port) holding a page, its near-duplicate, its exact copy, an
# unrelated page, a tiny page and an image; then --index across runs, damaged input, HTML
# file inputs and usage errors. Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
DD=$TMP/dedup
mkdir -p "$DD/site"
python3 - "$DD/site" <<'PY'
import sys, os
sys.path.insert(0, "tests")
from pagegen import para, page
d = sys.argv[1]
base = [para(60, i) for i in range(4)]
near = base[:]
near[3] = near[3].replace("river", "stream", 1) if "river" in near[3] else near[3] + " stream"
files = {"a.html": page("Alpha", base), "b.html": page("Alpha", near), "c.html": page("Alpha", base),
         "d.html": page("Delta", [para(60, 100 + i) for i in range(4)]),
         "small.html": "<html><body><p>tiny</p></body></html>\n",
         "index.html": "<html><body>" + "".join('<a href="%s">%s</a> ' % (x, x) for x in
                       ["a.html", "b.html", "c.html", "d.html", "small.html", "img.png"]) + "</body></html>\n"}
for name, text in files.items():
    open(os.path.join(d, name), "w").write(text)
open(os.path.join(d, "img.png"), "wb").write(b"\x89PNG\r\n\x1a\n" + bytes(range(256)) * 4)
PY
http_serve "$DD/site" "$DD/server.log"
dd_server=$http_pid
dd_port=$http_port
if [ -z "$dd_port" ]; then
    bad "dedup: the loopback server did not start: $(cat "$DD/server.log")"
else
    (cd "$DD" && wget -q -r -l 2 -e robots=off --no-http-keep-alive --no-verbose --timeout=10 \
        --tries=1 -P files --warc-file=site "http://127.0.0.1:$dd_port/" >/dev/null 2>&1)
fi
http_stop "$dd_server"

if [ -s "$DD/site.warc.gz" ]; then
    expect_status 0 "dedup a wget WARC" -- "$SIMCRAWL" dedup --log "$DD/log.jsonl" \
        --warc-out "$DD/out.warc.gz" "$DD/site.warc.gz"
    expect_grep "2 new, 1 near-duplicate, 1 exact-duplicate" "$TMP/err" "dedup summary counts"
    expect_grep '"uri":"http://127.0.0.1:[0-9]*/a.html".*"decision":"new","fingerprint":"[0-9a-f]\{16\}"' "$DD/log.jsonl" "first page kept"
    expect_grep '/b.html".*"type":"response".*"decision":"near-duplicate".*"duplicate_of":"http://127.0.0.1:[0-9]*/a.html","distance":[0-3]' "$DD/log.jsonl" "near-duplicate decided"
    expect_grep '/b.html".*"type":"request".*"decision":"dropped"' "$DD/log.jsonl" "request of a near-duplicate dropped"
    expect_grep '/c.html".*"type":"response".*"decision":"exact-duplicate".*"distance":0' "$DD/log.jsonl" "exact duplicate decided"
    expect_grep '/small.html".*"type":"response".*"decision":"passed".*size floor' "$DD/log.jsonl" "small page passed"
    expect_grep '/img.png".*"type":"response".*"decision":"passed".*not html' "$DD/log.jsonl" "image passed"
    expect_grep '"offset":[0-9]' "$DD/log.jsonl" "offsets logged"
    [ ! -e "$DD/out.warc.gz.open" ] && ok || bad "dedup: .open file left behind"
    gzip -dc "$DD/out.warc.gz" >"$DD/out.warc" 2>"$DD/gz.err" && ok || bad "dedup: output is not valid gzip: $(cat "$DD/gz.err")"
    # exactly one revisit (the exact copy); the near-duplicate is never disguised as one
    [ "$(grep -c "^WARC-Type: revisit" "$DD/out.warc")" = 1 ] && ok || bad "dedup: want exactly one revisit record"
    expect_grep "^WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest" "$DD/out.warc" "revisit profile"
    expect_grep "^WARC-Refers-To-Target-URI: http://127.0.0.1:[0-9]*/a.html" "$DD/out.warc" "revisit refers to the original"
    if grep -q "^GET /b.html" "$DD/out.warc"; then bad "dedup: near-duplicate request was written"; else ok; fi
    if grep -q "^WARC-Target-URI: <http://127.0.0.1:[0-9]*/b.html>" "$DD/out.warc"; then bad "dedup: near-duplicate was written"; else ok; fi
    # passed records are copied byte for byte: the image response is in both
    n_in=$(gzip -dc "$DD/site.warc.gz" | grep -c "^WARC-Type: ")
    n_out=$(grep -c "^WARC-Type: " "$DD/out.warc")
    # out = in + our warcinfo - b.html request and response
    [ "$n_out" = $((n_in - 1)) ] && ok || bad "dedup: $n_out records out of $n_in in (want $((n_in - 1)))"
    # the output reads back cleanly
    expect_status 0 "dedup reads its own output" -- "$SIMCRAWL" dedup --log "$DD/log2.jsonl" "$DD/out.warc.gz"
    expect_grep " 0 errors" "$TMP/err" "own output has no damage"

    # --index: a second run against the first run's index keeps nothing new
    expect_status 0 "dedup --index first run" -- "$SIMCRAWL" dedup --index "$DD/idx" "$DD/site.warc.gz"
    [ -s "$DD/idx" ] && ok || bad "dedup: --index file not written"
    expect_grep "^# simcrawl dedup digests 2" "$DD/idx.digests" "digests of kept pages saved beside the index"
    expect_status 0 "dedup --index second run" -- "$SIMCRAWL" dedup --index "$DD/idx" --log "$DD/log3.jsonl" \
        --warc-out "$DD/out3.warc.gz" "$DD/site.warc.gz"
    # pages seen in the first run come back as exact duplicates (revisits), b.html as near
    expect_grep " 0 new, 1 near-duplicate, 3 exact-duplicate, 13 passed, 1 dropped" "$TMP/err" "second run dedups against the saved index"
    expect_grep '/a.html".*"decision":"exact-duplicate".*"duplicate_of":"http://127.0.0.1:[0-9]*/a.html","distance":0' "$DD/log3.jsonl" "indexed page found again"
    [ "$(gzip -dc "$DD/out3.warc.gz" | grep -c "^WARC-Type: revisit")" = 3 ] && ok || bad "dedup: want 3 revisits against the first run"
    # digests lost beside an index saved with them: a page with the fingerprint of an index
    # document may be an exact duplicate whose revisit cannot be written: kept in full
    cp "$DD/idx" "$DD/idx.keep"
    rm "$DD/idx.digests"
    expect_status 0 "dedup --index without digests" -- "$SIMCRAWL" dedup --index "$DD/idx" --log "$DD/log4.jsonl" "$DD/site.warc.gz"
    expect_grep "idx.digests is missing beside .*idx (generation 0, the index's 2): the payload digests of documents 0..1 are lost" "$TMP/err" "lost digests named"
    expect_grep " 3 new, 0 near-duplicate, 1 exact-duplicate" "$TMP/err" "lost digests: pages at distance 0 kept in full"
    expect_grep "3 pages kept in full: the fingerprint of an index document whose payload digest was lost" "$TMP/err" "lost digests: counted"
    expect_grep '"decision":"new".*payload digest was lost' "$DD/log4.jsonl" "lost digests: the reason logged"
    # the window of lost digests is kept across saves; the pages kept in full are revisits now
    expect_grep "^# no-digest-documents 0 2$" "$DD/idx.digests" "lost digests: the documents recorded"
    expect_status 0 "dedup --index after lost digests" -- "$SIMCRAWL" dedup --index "$DD/idx" "$DD/site.warc.gz"
    expect_grep " 0 new, 0 near-duplicate, 4 exact-duplicate" "$TMP/err" "lost digests: repaired"
    # an index without a generation (format 3, or from index add) and no digests: near at 0
    "$SIMCRAWL" index add "$DD/idx0" "$DD/site/a.html" "$DD/site/d.html" >/dev/null 2>&1
    expect_status 0 "dedup --index of an index add index" -- "$SIMCRAWL" dedup --index "$DD/idx0" "$DD/site.warc.gz"
    expect_grep " 0 new, 4 near-duplicate, 0 exact-duplicate" "$TMP/err" "without digests: near-duplicates"
    printf 'not a digests file\n' >"$DD/idx.digests"
    expect_status 2 "dedup --index with a bad digests file" -- "$SIMCRAWL" dedup --index "$DD/idx" "$DD/site.warc.gz"
    expect_grep "not a simcrawl digests file" "$TMP/err" "bad digests file named"

    # pairs and clusters read WARC inputs; ids are the target URIs
    expect_status 0 "pairs on a WARC" -- "$SIMCRAWL" pairs --format jsonl "$DD/site.warc.gz"
    expect_grep '"a": *"http://127.0.0.1:[0-9]*/a.html", *"b": *"http://127.0.0.1:[0-9]*/c.html", *"distance": *0' "$TMP/out" "pairs: exact copy found in a WARC"
    expect_status 0 "clusters on a WARC" -- "$SIMCRAWL" clusters "$DD/site.warc.gz"
    expect_grep "http://127.0.0.1:[0-9]*/b.html" "$TMP/out" "clusters: near-duplicate in the cluster"
    # the same URIs captured twice (two crawls in one file): the first capture counts,
    # the run does not fail, the pairs are those of one copy
    cp "$TMP/out" "$DD/clusters1.txt"
    "$SIMCRAWL" pairs --format jsonl "$DD/site.warc.gz" >"$DD/pairs1.jsonl" 2>/dev/null
    cat "$DD/site.warc.gz" "$DD/site.warc.gz" >"$DD/twice.warc.gz"
    expect_status 0 "pairs on a WARC holding every capture twice" -- "$SIMCRAWL" pairs --format jsonl "$DD/twice.warc.gz"
    cmp -s "$TMP/out" "$DD/pairs1.jsonl" && ok || bad "pairs: a recaptured URI changed the pairs"
    expect_grep "later WARC captures of URIs already read skipped" "$TMP/err" "recaptures summarised"
    if grep -q "duplicate id" "$TMP/err"; then bad "recaptures reported as duplicate ids"; else ok; fi

    # damage: truncated, and garbage in front; reported with the offset, the run goes on
    size=$(wc -c <"$DD/site.warc.gz")
    head -c $((size * 2 / 3)) "$DD/site.warc.gz" >"$DD/trunc.warc.gz"
    expect_status 0 "dedup a truncated WARC" -- "$SIMCRAWL" dedup --log "$DD/log4.jsonl" "$DD/trunc.warc.gz"
    expect_grep "trunc.warc.gz: offset [0-9]*: .*truncated" "$TMP/err" "truncation reported with offset"
    expect_grep '"decision":"error"' "$DD/log4.jsonl" "truncation logged as error"
    { printf 'garbage before the first record\n'; gzip -dc "$DD/site.warc.gz"; } >"$DD/garbage.warc"
    expect_status 0 "dedup a plain WARC with garbage" -- "$SIMCRAWL" dedup "$DD/garbage.warc"
    expect_grep "garbage.warc: offset 0: .*garbage" "$TMP/err" "garbage reported"
    expect_grep "2 new, 1 near-duplicate, 1 exact-duplicate" "$TMP/err" "plain WARC after garbage read whole"
fi

# HTML files and directories
expect_status 0 "dedup HTML files" -- "$SIMCRAWL" dedup --log - "$DD/site/a.html" "$DD/site/b.html" "$DD/site/d.html"
expect_grep '"uri":"[^"]*/b.html","file":"[^"]*","decision":"near-duplicate"' "$TMP/out" "near-duplicate HTML file"
expect_status 0 "dedup a directory" -- "$SIMCRAWL" dedup --log - "$DD/site"
expect_grep '/c.html".*"decision":"exact-duplicate"' "$TMP/out" "exact duplicate in a directory walk"

# usage and runtime errors
expect_status 1 "dedup without input" -- "$SIMCRAWL" dedup
expect_status 1 "dedup --k 9" -- "$SIMCRAWL" dedup --k 9 "$DD/site/a.html"
expect_status 1 "dedup unknown option" -- "$SIMCRAWL" dedup --frobnicate "$DD/site/a.html"
expect_status 2 "dedup missing input" -- "$SIMCRAWL" dedup "$DD/no-such.warc.gz"
expect_grep "no-such.warc.gz" "$TMP/err" "missing input named"
expect_status 2 "dedup unwritable output" -- "$SIMCRAWL" dedup --warc-out /nonexistent/dir/x.warc.gz "$DD/site/a.html"
