# simcrawl crawl --state (issue 15): a crawl that survives kill -9 and resumes. Against a
# generated site on 127.0.0.1 (tests/tools/site_server.py, every request logged):
# a stopped crawl resumes and its second run fetches only what the first did not commit,
# a finished crawl says so and exits 0, the WARC and the log refuse to be overwritten
# without --overwrite, another --warc than the state's is refused; then the kill test
# (tests/tools/crawl_kill.py): runs killed at each named crash point and at random times,
# resumed to the end, must archive what an uninterrupted crawl archives, each URL once.
# `make stress` runs 20 of those. Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
CS=$TMP/crawl_state
mkdir -p "$CS"
python3 tests/tools/site_server.py --pages 400 --log "$CS/requests.log" --port-file "$CS/port" &
cs_srv=$!
i=0
while [ ! -f "$CS/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
cs_seed="http://127.0.0.1:$(cat "$CS/port")/p/0.html"
# 180 s: a bound, not a goal (a resumed 401-page crawl passed 60 s once at load 13)
cs_crawl() { timeout 180 "$SIMCRAWL" crawl --verbose --delay 0 --concurrency 4 --per-host 4 "$@"; }

# stopped by --max-pages: the same command without it goes on from there
expect_status 0 "crawl --state, first 100 pages" -- cs_crawl --max-pages 100 --state "$CS/st" \
    --warc "$CS/a.warc.gz" --log "$CS/a.jsonl" "$cs_seed"
n1=$(wc -l <"$CS/requests.log")
expect_status 1 "crawl --state with another --warc" -- cs_crawl --state "$CS/st" \
    --warc "$CS/b.warc.gz" --log "$CS/a.jsonl" "$cs_seed"
expect_grep "writes --warc '$CS/a.warc.gz', not '$CS/b.warc.gz'" "$TMP/err" "another --warc is named"
expect_status 0 "crawl --state, the same --max-pages again" -- cs_crawl --max-pages 100 \
    --state "$CS/st" --warc "$CS/a.warc.gz" --log "$CS/a.jsonl" "$cs_seed"
expect_grep "crawl complete: the crawl in $CS/st is finished (100 pages" "$TMP/err" \
    "a crawl that reached its --max-pages says so"
expect_status 0 "crawl --state resumes" -- cs_crawl --state "$CS/st" --warc "$CS/a.warc.gz" \
    --log "$CS/a.jsonl" "$cs_seed"
expect_grep "resuming the crawl in $CS/st: 100 pages fetched so far" "$TMP/err" "resume says where it is"
expect_grep "crawl done: 401 pages fetched" "$TMP/err" "the summary covers the whole crawl"
expect_grep "errors by cause: 1 http status 404" "$TMP/err" "the errors by cause cover the whole crawl"
n2=$(wc -l <"$CS/requests.log")
[ $((n2 - n1)) = 301 ] && ok || bad "crawl --state: the second run made $((n2 - n1)) requests, want 301 (robots.txt kept)"
dups=$(sort "$CS/requests.log" | uniq -d | wc -l)
[ "$dups" = 0 ] && ok || bad "crawl --state: $dups URLs requested twice after a clean stop"
lines=$(wc -l <"$CS/a.jsonl"); urls=$(sed 's/.*"url":"\([^"]*\)".*/\1/' "$CS/a.jsonl" | sort -u | wc -l)
[ "$lines" = 403 ] && [ "$urls" = 403 ] && ok || bad "crawl --state log: $lines lines, $urls URLs, want 403 each"
# every line carries its referrer (the seed none), across the resume too: a page that was
# decided new (its links followed) and that links the URL
if python3 - "$CS/a.jsonl" "$cs_seed" <<'PY'
import json, re, sys, urllib.request
lines = [json.loads(l) for l in open(sys.argv[1])]
seed = sys.argv[2]
new = {o["url"] for o in lines if o["decision"] == "new"}
bad = [o["url"] for o in lines if (o["url"] == seed) == ("referrer" in o)]
bad += [o["url"] for o in lines if o.get("referrer") and o["referrer"] not in new]
for o in lines[150:160] + lines[-5:]:  # after the resume: the referrer links the URL
    page = urllib.request.urlopen(o["referrer"]).read().decode()
    path = "/" + o["url"].split("/", 3)[3]
    if 'href="%s"' % path not in page:
        bad.append("%s not linked by %s" % (o["url"], o["referrer"]))
sys.exit("referrers wrong: %s" % bad[:3] if bad else 0)
PY
then ok; else bad "crawl --state log: referrers"; fi
expect_status 0 "crawl --state on a finished crawl" -- cs_crawl --state "$CS/st" \
    --warc "$CS/a.warc.gz" --log "$CS/a.jsonl" "$cs_seed"
expect_grep "crawl complete: the crawl in $CS/st is finished (401 pages fetched" "$TMP/err" \
    "a finished crawl says so"
# the seen set within --seen-memory (4096 bytes: a table of 192 URLs, a filter of 4096
# bytes; the rest looked up in the state): stopped and resumed, each URL requested and
# logged once, every URL seen in the log (which copies of the planted duplicates are kept,
# and so how many URLs are reached, depends on the order of the fetches: crawl_kill.py)
n3=$(wc -l <"$CS/requests.log")
expect_status 0 "crawl --state --seen-memory 4096, 100 pages" -- cs_crawl --max-pages 100 \
    --seen-memory 4096 --state "$CS/small" --log "$CS/small.jsonl" "$cs_seed"
expect_status 0 "crawl --state --seen-memory 4096 resumes" -- cs_crawl --seen-memory 4096 \
    --state "$CS/small" --log "$CS/small.jsonl" "$cs_seed"
lines=$(wc -l <"$CS/small.jsonl"); urls=$(sed 's/.*"url":"\([^"]*\)".*/\1/' "$CS/small.jsonl" | sort -u | wc -l)
[ "$lines" -gt 300 ] && [ "$lines" = "$urls" ] && ok || bad "crawl --seen-memory 4096: $lines lines, $urls URLs"
expect_grep "seen set: $lines URLs in [0-9]\{4\} bytes" "$TMP/err" "a bounded seen set: every URL, under 10,000 bytes"
again=$(tail -n +$((n3 + 1)) "$CS/requests.log" | grep -v '^/robots.txt$' | sort | uniq -d | wc -l)
[ "$again" = 0 ] && ok || bad "crawl --seen-memory 4096: $again URLs requested twice"
expect_status 1 "crawl --seen-memory 100" -- cs_crawl --seen-memory 100 --state "$CS/x" "$cs_seed"
expect_grep "\-\-seen-memory: bytes, 4096 to" "$TMP/err" "a too small --seen-memory names the range"
# a state of the previous schema (1: no referrers, no leases) is brought to this one and
# resumed; a state of a later schema is refused, naming both versions
expect_status 0 "crawl --state, 20 pages for the schema 1 state" -- cs_crawl --max-pages 20 \
    --state "$CS/v1" --log "$CS/v1.jsonl" "$cs_seed"
python3 - "$CS/v1/state.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("ALTER TABLE urls DROP COLUMN ref; UPDATE urls SET state = 0 WHERE state = 5;"
                 "UPDATE meta SET value = 1 WHERE key = 'schema';")
db.close()
PY
expect_status 0 "crawl --state resumes a schema 1 state" -- cs_crawl --state "$CS/v1" \
    --log "$CS/v1.jsonl" "$cs_seed"
expect_grep "state of schema 1 brought to the current schema" "$TMP/err" "the migration is said"
expect_grep "crawl done: 401 pages fetched" "$TMP/err" "the migrated crawl goes to its end"
[ "$(grep -c '"referrer"' "$CS/v1.jsonl")" -gt 300 ] && ok || bad "crawl --state: no referrers after a migration"
# schema 2 (the referrer kept as its hash, the hash UNIQUE in the table): a state of it, made
# from this one as schema 2 laid it out, resumes with each queued URL's referrer as it was
expect_status 0 "crawl --state, 40 pages for the schema 2 state" -- cs_crawl --max-pages 40 \
    --state "$CS/v2" --log "$CS/v2.jsonl" "$cs_seed"
python3 - "$CS/v2/state.db" <<'PY'
import sqlite3, sys
db = sqlite3.connect(sys.argv[1])
db.executescript("""
CREATE TABLE urls_v2(id INTEGER PRIMARY KEY, hash INTEGER NOT NULL UNIQUE, host INTEGER NOT NULL,
  url TEXT NOT NULL, depth INTEGER, hops INTEGER, prio REAL, state INTEGER NOT NULL,
  decision INTEGER, ref INTEGER);
INSERT INTO urls_v2 SELECT u.id, u.hash, u.host, u.url, u.depth, u.hops, u.prio, u.state,
  u.decision, r.hash FROM urls u LEFT JOIN urls r ON r.id = u.ref;
DROP TABLE urls; ALTER TABLE urls_v2 RENAME TO urls;
CREATE INDEX urls_queued ON urls(host, id) WHERE state = 0;
UPDATE meta SET value = 2 WHERE key = 'schema';""")
db.close()
PY
expect_status 0 "crawl --state resumes a schema 2 state" -- cs_crawl --state "$CS/v2" \
    --log "$CS/v2.jsonl" "$cs_seed"
expect_grep "state of schema 2 brought to the current schema$" "$TMP/err" "the migration from 2 is said"
expect_grep "crawl done: 401 pages fetched" "$TMP/err" "the crawl migrated from 2 goes to its end"
if python3 - "$CS/v2.jsonl" "$cs_seed" "$CS/v2/state.db" <<'PY'
import json, sqlite3, sys, urllib.request
lines = [json.loads(l) for l in open(sys.argv[1])]
bad = [o["url"] for o in lines if (o["url"] == sys.argv[2]) == ("referrer" in o)]
for o in lines[40:80]:  # queued before the migration, fetched after it: the referrer links it
    page = urllib.request.urlopen(o["referrer"]).read().decode()
    if 'href="/%s"' % o["url"].split("/", 3)[3] not in page:
        bad.append("%s not linked by %s" % (o["url"], o["referrer"]))
db = sqlite3.connect(sys.argv[3])
if db.execute("SELECT count(*) FROM urls u LEFT JOIN urls r ON r.id = u.ref "
              "WHERE u.ref IS NOT NULL AND r.id IS NULL").fetchone()[0]:
    bad.append("a ref that is no row id")
sys.exit("schema 2 migrated wrong: %s" % bad[:3] if bad else 0)
PY
then ok; else bad "crawl --state: referrers after a migration from schema 2"; fi
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("UPDATE meta SET value = 4 WHERE key = '"'schema'"'"); db.commit()' "$CS/v1/state.db"
expect_status 2 "crawl --state on a state of a later schema" -- cs_crawl --state "$CS/v1" \
    --log "$CS/v1.jsonl" "$cs_seed"
expect_grep "state schema version 4, this simcrawl reads versions 1 to 3" "$TMP/err" \
    "a later schema is refused with both versions"
# a focused crawl keeps its state too (the order across a resume: test_crawl.c
# test_loop_focused_state_resume); another topic cannot go on with its priorities
expect_status 0 "crawl --topic --state, 30 pages" -- cs_crawl --max-pages 30 --topic "page" \
    --state "$CS/focus" --log "$CS/focus.jsonl" "$cs_seed"
expect_status 1 "crawl --state resumed with another --topic" -- cs_crawl --topic "other words" \
    --state "$CS/focus" --log "$CS/focus.jsonl" "$cs_seed"
expect_grep "the crawl in $CS/focus has the topic 'page', not 'other words'" "$TMP/err" \
    "another topic is refused"
expect_status 0 "crawl --topic --state resumes" -- cs_crawl --topic "page" --state "$CS/focus" \
    --log "$CS/focus.jsonl" "$cs_seed"
expect_grep "crawl done: 401 pages fetched" "$TMP/err" "the focused crawl goes to its end"
[ "$(sed 's/.*"url":"\([^"]*\)".*/\1/' "$CS/focus.jsonl" | sort | uniq -d | wc -l)" = 0 ] && ok ||
    bad "crawl --topic --state: a URL logged twice"
# without --state, existing files are not overwritten
expect_status 1 "crawl over an existing WARC" -- cs_crawl --max-pages 5 --warc "$CS/a.warc.gz" "$cs_seed"
expect_grep "a.warc.gz exists: give --overwrite to replace it, or --state DIR" "$TMP/err" \
    "an existing WARC is refused"
expect_status 1 "crawl over an existing log" -- cs_crawl --max-pages 5 --log "$CS/a.jsonl" "$cs_seed"
expect_status 0 "crawl --overwrite" -- cs_crawl --max-pages 5 --overwrite --log "$CS/a.jsonl" "$cs_seed"
[ "$(wc -l <"$CS/a.jsonl")" -le 8 ] && ok || bad "crawl --overwrite: the log was not replaced"
# a crawl that keeps nothing says so; the warcinfo record says how the WARC was made
expect_status 0 "crawl with neither --warc nor --log" -- cs_crawl --max-pages 2 "$cs_seed"
expect_grep "neither --warc nor --log given: nothing of the crawl will be kept" "$TMP/err" \
    "a crawl that keeps nothing warns"
expect_status 0 "crawl for the warcinfo record" -- cs_crawl --max-pages 2 --user-agent "cs-test/1.0" \
    --warc "$CS/info.warc.gz" "$cs_seed"
zcat "$CS/info.warc.gz" | head -c 4000 >"$CS/info.txt"
expect_grep "^software: simcrawl/" "$CS/info.txt" "warcinfo names the software"
expect_grep "^simcrawl-seeds: $cs_seed" "$CS/info.txt" "warcinfo names the seeds"
expect_grep "^simcrawl-options: --verbose --delay 0 --concurrency 4 --per-host 4 --max-pages 2 --user-agent cs-test/1.0 --warc $CS/info.warc.gz" \
    "$CS/info.txt" "warcinfo names the options"
expect_grep "^http-header-user-agent: cs-test/1.0" "$CS/info.txt" "warcinfo names the user agent"
# a seed answering 404 only: an error, the crawl fails with the reason
expect_status 2 "crawl of a 404 seed" -- cs_crawl "http://127.0.0.1:$(cat "$CS/port")/gone"
expect_grep "no page could be fetched: http://127.0.0.1:.*/gone: http status 404" "$TMP/err" \
    "a 404 seed: the reason on stderr"
kill "$cs_srv" 2>/dev/null
wait "$cs_srv" 2>/dev/null

# politeness carries over: robots.txt asks for Crawl-delay 0.4; a crawl stopped after 3
# pages and resumed keeps asking once per 0.4 s (its first request too, counted from the
# last of the first run), without fetching robots.txt again
python3 tests/tools/site_server.py --pages 400 --crawl-delay 0.4 --log "$CS/delay.log" \
    --times-log "$CS/delay.times" --port-file "$CS/dport" &
cs_dsrv=$!
i=0
while [ ! -f "$CS/dport" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
cs_dseed="http://127.0.0.1:$(cat "$CS/dport")/p/0.html"
expect_status 0 "crawl --state with Crawl-delay, 3 pages" -- cs_crawl --max-pages 3 \
    --state "$CS/delay" --log "$CS/delay.jsonl" "$cs_dseed"
expect_status 0 "crawl --state with Crawl-delay, resumed to 6 pages" -- cs_crawl --max-pages 6 \
    --state "$CS/delay" --log "$CS/delay.jsonl" "$cs_dseed"
if python3 - "$CS/delay.times" <<'PY'
import sys
reqs = [l.split() for l in open(sys.argv[1])]
paths = [p for _, p in reqs]
times = [float(t) for t, p in reqs if p != "/robots.txt"]
gaps = [b - a for a, b in zip(times, times[1:])]
bad = []
if paths.count("/robots.txt") != 1:
    bad.append("robots.txt fetched %d times" % paths.count("/robots.txt"))
if len(times) != 6 or min(gaps) < 0.37:
    bad.append("%d page requests, gaps %s" % (len(times), ["%.2f" % g for g in gaps]))
sys.exit("; ".join(bad) if bad else 0)
PY
then ok; else bad "crawl --state: Crawl-delay not kept across a resume"; fi
kill "$cs_dsrv" 2>/dev/null
wait "$cs_dsrv" 2>/dev/null

# the kill test: a run per crash point, two with random kills (seconds)
if python3 tests/tools/crawl_kill.py --simcrawl "$SIMCRAWL" --runs 8 --pages 600 >"$CS/kill.out" 2>&1; then
    ok
else
    bad "crawl kill test: $(grep -A3 'FAILED\|failed\|Error' "$CS/kill.out" | head -c 600)"
fi
# killed with a seen set of 4096 bytes: the URLs past its table are found in the state
if python3 tests/tools/crawl_kill.py --simcrawl "$SIMCRAWL" --runs 2 --pages 600 \
    --points crawl-log-written --crawl-args "--seen-memory 4096" >"$CS/kill_small.out" 2>&1; then
    ok
else
    bad "crawl kill test, --seen-memory 4096: $(grep -A3 'FAILED\|failed\|Error' "$CS/kill_small.out" | head -c 600)"
fi
# a focused crawl with a window of 8 URLs (crawl.c "windows"), killed: its URLs past the
# window are in the state only and come back best first
if SIMCRAWL_STATE_WINDOW=8 python3 tests/tools/crawl_kill.py --simcrawl "$SIMCRAWL" --runs 2 \
    --pages 600 --points crawl-commit-done --crawl-args "--topic page" >"$CS/kill_focus.out" 2>&1; then
    ok
else
    bad "crawl kill test, --topic, a window of 8: $(grep -A3 'FAILED\|failed\|Error' "$CS/kill_focus.out" | head -c 600)"
fi
# the same on a machine too loaded to take new connections at once: the runs' servers take
# connections 2 to 4 late, one connection runs down the first branch and the crawl keeps
# other copies than the reference crawl (2031 of 3003 URLs logged at 3000 pages, no kill
# needed; killed before its first request, the resumed process meets them); the run is
# checked against the site for the copies it kept, not failed. Whether the copies kept
# differ depends on timing (under make asan on a loaded machine they were the same once):
# the run must pass either way; which way it went is only said.
if python3 tests/tools/crawl_kill.py --simcrawl "$SIMCRAWL" --runs 1 --pages 600 \
    --points crawl-started --slow-connections 0.3 >"$CS/kill_slow.out" 2>&1; then
    ok
    grep -q "copies kept otherwise than by the reference crawl" "$CS/kill_slow.out" ||
        echo "note: crawl kill test, slow connections: this run kept the reference crawl's copies"
else
    bad "crawl kill test, slow connections: $(grep -A3 'FAILED\|failed\|Error' "$CS/kill_slow.out" | head -c 600)"
fi
