# simcrawl crawl --quiet (issue 18): no progress, no summary and none of the crawl's state
# notices ("resuming ...", "crawl complete", the nothing-will-be-kept note, a state brought
# to the current schema, the page requisites and shared-crawl lines of the summary); errors
# are still said, with their exit status. Against a generated site on 127.0.0.1
# (tests/tools/site_server.py). Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
CQ=$TMP/crawl_quiet
mkdir -p "$CQ"
python3 tests/tools/site_server.py --pages 60 --log "$CQ/requests.log" --port-file "$CQ/port" &
cq_srv=$!
i=0
while [ ! -f "$CQ/port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
cq_seed="http://127.0.0.1:$(cat "$CQ/port")/p/0.html"
cq_crawl() { timeout 60 "$SIMCRAWL" crawl --delay 0 --concurrency 4 --per-host 4 "$@"; }
# stderr must be empty: each run's words, if any, named
cq_silent() {
    if [ -s "$TMP/err" ]; then bad "crawl --quiet, $1: said '$(head -c 300 "$TMP/err")'"; else ok; fi
}

# nothing kept: the note is a notice
expect_status 0 "crawl --quiet with neither --warc nor --log" -- cq_crawl --quiet --max-pages 3 "$cq_seed"
cq_silent "nothing kept"
expect_status 0 "crawl with neither --warc nor --log" -- cq_crawl --max-pages 3 "$cq_seed"
expect_grep "nothing of the crawl will be kept" "$TMP/err" "without --quiet the note is said"
# --state: stopped by --max-pages, the same again (complete), resumed, finished
expect_status 0 "crawl --quiet --state, 10 pages" -- cq_crawl --quiet --max-pages 10 \
    --state "$CQ/st" --warc "$CQ/a.warc.gz" --log "$CQ/a.jsonl" "$cq_seed"
cq_silent "a first run"
expect_status 0 "crawl --quiet --state, 10 pages again" -- cq_crawl --quiet --max-pages 10 \
    --state "$CQ/st" --warc "$CQ/a.warc.gz" --log "$CQ/a.jsonl" "$cq_seed"
cq_silent "a crawl complete at its --max-pages"
expect_status 0 "crawl --quiet --state resumed" -- cq_crawl --quiet --state "$CQ/st" \
    --warc "$CQ/a.warc.gz" --log "$CQ/a.jsonl" "$cq_seed"
cq_silent "a resumed crawl"
[ "$(wc -l <"$CQ/a.jsonl")" -gt 10 ] && ok || bad "crawl --quiet --state: the resumed run crawled nothing"
expect_status 0 "crawl --quiet --state finished" -- cq_crawl --quiet --state "$CQ/st" \
    --warc "$CQ/a.warc.gz" --log "$CQ/a.jsonl" "$cq_seed"
cq_silent "a finished crawl"
expect_status 0 "crawl --state finished, without --quiet" -- cq_crawl --state "$CQ/st" \
    --warc "$CQ/a.warc.gz" --log "$CQ/a.jsonl" "$cq_seed"
expect_grep "^crawl complete: the crawl in $CQ/st is finished" "$TMP/err" "without --quiet a finished crawl says so"
# a state of schema 1, brought to the current one without a word
expect_status 0 "crawl --quiet --state, 5 pages for the schema 1 state" -- cq_crawl --quiet \
    --max-pages 5 --state "$CQ/v1" "$cq_seed"
python3 - "$CQ/v1/state.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("ALTER TABLE urls DROP COLUMN ref; UPDATE urls SET state = 0 WHERE state = 5;"
                 "UPDATE meta SET value = 1 WHERE key = 'schema';")
db.close()
PY
expect_status 0 "crawl --quiet resumes a schema 1 state" -- cq_crawl --quiet --state "$CQ/v1" "$cq_seed"
cq_silent "a migrated state"
# -p: the requisites line belongs to the summary
expect_status 0 "crawl --quiet -p" -- cq_crawl --quiet -p --max-pages 3 --log "$CQ/p.jsonl" "$cq_seed"
cq_silent "with -p"
# errors are still said, with their exit status
expect_status 1 "crawl --quiet --state with another --warc" -- cq_crawl --quiet --state "$CQ/st" \
    --warc "$CQ/b.warc.gz" --log "$CQ/a.jsonl" "$cq_seed"
expect_grep "writes --warc '$CQ/a.warc.gz', not '$CQ/b.warc.gz'" "$TMP/err" "crawl --quiet: a usage error is said"
kill "$cq_srv" 2>/dev/null
wait "$cq_srv" 2>/dev/null
expect_status 2 "crawl --quiet, the site down" -- cq_crawl --quiet --robots no "$cq_seed"
expect_grep "no page could be fetched: $cq_seed: " "$TMP/err" "crawl --quiet: a runtime error is said"
expect_status 1 "crawl --quiet over an existing log" -- cq_crawl --quiet --log "$CQ/a.jsonl" "$cq_seed"
expect_grep "a.jsonl exists: give --overwrite" "$TMP/err" "crawl --quiet: a refusal is said"
