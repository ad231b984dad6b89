# Ctrl-C and SIGTERM (issue 15): the crawl stops cleanly (transfers in flight end, the WARC,
# the log and the state complete), says so, then dies by that signal, so the shell sees
# 130 / 143 and a script's `crawl ... && next` stops (it used to exit 0, which a script
# takes for a finished crawl); the same command resumes and ends with 0. Against
# tests/tools/site_server.py on 127.0.0.1, 150 pages at --delay 0.05 (the signal
# comes after 30 log lines). Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
SG=$TMP/crawl_signal
mkdir -p "$SG"
python3 tests/tools/site_server.py --pages 150 --log "$SG/requests.log" --port-file "$SG/port" &
sg_srv=$!
i=0
while [ ! -f "$SG/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
sg_seed="http://127.0.0.1:$(cat "$SG/port")/p/0.html"

# sg_stop SIGNAL NAME: a --state crawl stopped by SIGNAL once its log has 30 lines; sets
# sg_status to the shell's $? for it
sg_stop() {
    "$SIMCRAWL" crawl --delay 0.05 --state "$SG/st-$2" --warc "$SG/$2.warc.gz" \
        --log "$SG/$2.jsonl" "$sg_seed" 2>"$SG/$2.err" &
    sg_pid=$!
    i=0
    while [ "$(cat "$SG/$2.jsonl" 2>/dev/null | wc -l)" -lt 30 ] && [ $i -lt 600 ]; do
        sleep 0.05
        i=$((i + 1))
    done
    kill -s "$1" "$sg_pid"
    wait "$sg_pid"
    sg_status=$?
}

sg_stop INT int
[ "$sg_status" = 130 ] && ok || bad "crawl stopped by SIGINT: shell status $sg_status, want 130 (died by SIGINT): $(tail -c 300 "$SG/int.err")"
expect_grep "stopped by a signal: in-flight transfers ended, files complete" "$SG/int.err" \
    "SIGINT: the crawl says it stopped cleanly"
expect_grep "^crawl stopped: " "$SG/int.err" "SIGINT: the summary says stopped"
n=$(wc -l <"$SG/int.jsonl")
python3 -c 'import json, sys; [json.loads(l) for l in open(sys.argv[1])]' "$SG/int.jsonl" &&
    ok || bad "SIGINT: a torn log line"
python3 -c 'import gzip, sys; gzip.open(sys.argv[1]).read()' "$SG/int.warc.gz" &&
    ok || bad "SIGINT: the WARC is not whole"
[ "$n" -lt 150 ] && ok || bad "SIGINT: the crawl was not stopped ($n log lines)"
expect_status 0 "crawl --state after SIGINT resumes to the end" -- timeout 120 "$SIMCRAWL" crawl \
    --concurrency 4 --per-host 4 \
    --delay 0 --state "$SG/st-int" --warc "$SG/int.warc.gz" --log "$SG/int.jsonl" "$sg_seed"
expect_grep "resuming the crawl in $SG/st-int" "$TMP/err" "after SIGINT: resumed"
urls=$(sed 's/.*"url":"\([^"]*\)".*/\1/' "$SG/int.jsonl" | sort | uniq -d | wc -l)
[ "$urls" = 0 ] && ok || bad "after SIGINT: $urls URLs logged twice"

sg_stop TERM term
[ "$sg_status" = 143 ] && ok || bad "crawl stopped by SIGTERM: shell status $sg_status, want 143: $(tail -c 300 "$SG/term.err")"
expect_grep "stopped by a signal" "$SG/term.err" "SIGTERM: the crawl says it stopped cleanly"

kill "$sg_srv" 2>/dev/null
wait "$sg_srv" 2>/dev/null
