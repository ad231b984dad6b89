# The report of a crawl killed or stopped and resumed (issue 18): the state keeps each
# page's main text (packed, in its texts table, committed with the page's record), so the
# report written by the run that resumes has the word diffs of the pages the earlier runs
# decided, and equals the report of the same crawl run uninterrupted (compared byte for
# byte, the date fixed by SOURCE_DATE_EPOCH). `clusters --format html STATE_DIR` has them
# too. A state made before the texts were kept (no texts table) says the texts are not at
# hand; a damaged text is named. Against a directory served on 127.0.0.1
# (tests/tools/dir_server.py): 12 guides, each with a near copy (two words changed) and
# an exact copy, linked from an index page. Sourced by tests/cli_test.sh (helpers,
# $SIMCRAWL, $TMP).
RR=$TMP/crawl_report_resume
mkdir -p "$RR/site"
python3 - "$RR/site" <<'PYEOF'
import random, sys
d = sys.argv[1]; r = random.Random(1818)
words = ['w%03d' % i for i in range(800)]
page = '<html><head><title>%s</title></head><body><main><h1>%s</h1><p>%s</p></main></body></html>\n'
links = []
for i in range(12):
    text = [r.choice(words) for _ in range(300)]
    near = list(text); near[40] = 'changed%d' % i; near[200] = 'altered%d' % i
    # the near copy's <title> says v2, its heading (the page's name) is the guide's
    for name, t, title in (('g%d.html' % i, text, 'Guide %d' % i), ('g%d-v2.html' % i, near, 'Guide %d v2' % i),
                           ('g%d-copy.html' % i, text, 'Guide %d' % i)):
        open('%s/%s' % (d, name), 'w').write(page % (title, 'Guide %d' % i, ' '.join(t)))
        links.append('<a href="%s">%s</a>' % (name, name))
index = page % ('Index', 'Index', ' '.join(r.choice(words) for _ in range(200)))
open(d + '/index.html', 'w').write(index.replace('</main>', '</main>' + ' '.join(links)))
PYEOF
python3 tests/tools/dir_server.py --dir "$RR/site" --port-file "$RR/port" &
rr_srv=$!
i=0
while [ ! -f "$RR/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
rr_seed="http://127.0.0.1:$(cat "$RR/port")/index.html"
# one transfer at a time, 20 ms apart: the same order in every run, a group commit every
# 0.1 s (several in a crawl)
rr_crawl() {
    SOURCE_DATE_EPOCH=1790000000 timeout 60 "$SIMCRAWL" crawl --quiet --delay 0.02 \
        --robots no --workers 1 --concurrency 1 "$@" "$rr_seed"
}

expect_status 0 "crawl --state --report, uninterrupted" -- rr_crawl --state "$RR/st0" \
    --report "$RR/whole.html"
[ "$(grep -c '<section class="cluster"' "$RR/whole.html")" = 12 ] && ok ||
    bad "crawl report: 12 clusters, got $(grep -c '<section class="cluster"' "$RR/whole.html")"
[ "$(grep -c '% of words shared' "$RR/whole.html")" -ge 6 ] && ok ||
    bad "crawl report: the word diffs of the near copies"

# killed after its third group commit, then resumed with --report
SIMCRAWL_CRASH_AT=crawl-commit-done:3 rr_crawl --state "$RR/st1" --report "$RR/killed.html" \
    >"$TMP/out" 2>"$TMP/err"
got=$?
[ "$got" = 137 ] && ok || bad "crawl killed at its third commit: exit $got, want 137"
[ ! -f "$RR/killed.html" ] && ok || bad "a killed crawl wrote a report"
python3 -c 'import sqlite3, sys; n = sqlite3.connect(sys.argv[1]).execute("SELECT count(*) FROM texts WHERE z IS NOT NULL").fetchone()[0]; sys.exit(0 if 0 < n < 37 else "texts committed before the kill: %d" % n)' "$RR/st1/state.db" &&
    ok || bad "the killed crawl committed some pages' texts"
expect_status 0 "crawl --state --report, resumed after a kill" -- rr_crawl --state "$RR/st1" \
    --report "$RR/resumed.html"
cmp -s "$RR/whole.html" "$RR/resumed.html" && ok ||
    bad "the report of a crawl killed and resumed differs from the uninterrupted one's: $(diff "$RR/whole.html" "$RR/resumed.html" | head -c 600)"

# stopped by --max-pages, then resumed: the same
expect_status 0 "crawl --state, stopped after 10 pages" -- rr_crawl --max-pages 10 \
    --state "$RR/st2" --report "$RR/part.html"
expect_status 0 "crawl --state --report, resumed after a stop" -- rr_crawl --state "$RR/st2" \
    --report "$RR/stopped.html"
cmp -s "$RR/whole.html" "$RR/stopped.html" && ok ||
    bad "the report of a crawl stopped and resumed differs: $(diff "$RR/whole.html" "$RR/stopped.html" | head -c 600)"

# clusters over the state: the word diffs, from the state alone
SOURCE_DATE_EPOCH=1790000000 "$SIMCRAWL" clusters --format html "$RR/st1" >"$RR/st1.html" 2>"$TMP/err" &&
    ok || bad "clusters --format html over a state: $(head -c 300 "$TMP/err")"
[ "$(grep -c '<details><summary>' "$RR/st1.html")" = "$(grep -c '<details><summary>' "$RR/whole.html")" ] &&
    ok || bad "clusters over the state: not every word diff of the crawl's report"
if grep -q "not at hand" "$RR/st1.html"; then bad "clusters over a state with texts: 'not at hand'"; else ok; fi

# a state made before the texts were kept: resumed, its earlier pages have no text and the
# report says so; its later pages have theirs
expect_status 0 "crawl --state, 10 pages for the older state" -- rr_crawl --max-pages 10 \
    --state "$RR/old"
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.executescript("DROP TABLE texts; DELETE FROM meta WHERE key = '"'texts.from'"';")' "$RR/old/state.db"
expect_status 0 "crawl --state --report, an older state resumed" -- rr_crawl --state "$RR/old" \
    --report "$RR/old.html"
expect_grep "are not at hand: the crawl&#39;s state holds none" "$RR/old.html" \
    "the report of an older state says the texts are not at hand"
[ "$(grep -c '<details><summary>' "$RR/old.html")" -ge 1 ] && ok ||
    bad "the report of an older state: the later pages' word diffs"
[ "$(grep -c '<section class="cluster"' "$RR/old.html")" = 12 ] && ok ||
    bad "the report of an older state: 12 clusters"

# a damaged text is named (state and record), and its page shows no word diff
python3 -c 'import sqlite3, sys; db = sqlite3.connect(sys.argv[1]); db.execute("UPDATE texts SET z = x'"'00112233'"' WHERE seq = (SELECT max(seq) FROM texts WHERE z IS NOT NULL)"); db.commit()' "$RR/st1/state.db"
expect_status 0 "clusters over a state with a damaged text" -- "$SIMCRAWL" clusters --format html "$RR/st1"
expect_grep "1 page texts in the crawl state do not unpack (the last: $RR/st1/state.db: the text of page record [0-9]* does not unpack" \
    "$TMP/err" "a damaged text is named"
expect_grep "are damaged in the crawl&#39;s state" "$TMP/out" "the report says a text is damaged"
# a report that cannot be written is said before the crawl, not after it
expect_status 2 "crawl --report in a missing directory" -- rr_crawl --report "$RR/no/such/r.html"
expect_grep "cannot create report $RR/no/such/r.html: No such file or directory" "$TMP/err" \
    "a report that cannot be created is named with why"
kill "$rr_srv" 2>/dev/null
wait "$rr_srv" 2>/dev/null
