# What crawl and dedup leave behind when one of their start-up steps fails (issue 20: the
# steps of cmd_crawl and cmd_dedup): the step's error, exit 2, no output of a later step
# created, and the --index lock released so that the next writer gets in at once.
# No network: each crawl stops before its first fetch (the seed's port is never opened).
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
SF=$TMP/startup_failures
mkdir -p "$SF"
printf '<html><head><title>p</title></head><body><p>%s</p></body></html>\n' \
    "$(seq 1 200 | sed 's/^/word/' | tr '\n' ' ')" > "$SF/p.html"

# dedup: the --log cannot be written: exit 2, named; neither the WARC nor the index made
expect_status 2 "dedup: --log in a missing directory" -- \
    "$SIMCRAWL" dedup --quiet --index "$SF/ix" --log "$SF/no/dir/x.log" \
    --warc-out "$SF/out.warc.gz" "$SF/p.html"
expect_grep "^simcrawl dedup: cannot write log $SF/no/dir/x.log: No such file or directory" \
    "$TMP/err" "dedup names the log it cannot write"
[ ! -e "$SF/ix" ] && [ ! -e "$SF/out.warc.gz" ] && [ ! -e "$SF/out.warc.gz.open" ] && ok ||
    bad "dedup: a failed --log left an index or a WARC: $(ls "$SF")"

# dedup: the --warc-out cannot be created: exit 2, named; the log it opened is closed (and
# empty), the index not saved, its lock free for the next writer at once
expect_status 2 "dedup: --warc-out in a missing directory" -- \
    "$SIMCRAWL" dedup --quiet --index "$SF/ix" --log "$SF/x.log" \
    --warc-out "$SF/no/dir/out.warc.gz" "$SF/p.html"
expect_grep "^simcrawl dedup: cannot write $SF/no/dir/out.warc.gz: No such file or directory" \
    "$TMP/err" "dedup names the WARC it cannot create"
[ -f "$SF/x.log" ] && [ ! -s "$SF/x.log" ] && [ ! -e "$SF/ix" ] && ok ||
    bad "dedup: a failed --warc-out: the log is not empty or the index was saved"
expect_status 0 "dedup: the lock is free after a failed start" -- \
    "$SIMCRAWL" dedup --quiet --index "$SF/ix" --lock-wait 0 --log "$SF/x.log" "$SF/p.html"
expect_grep '"decision":"new"' "$SF/x.log" "dedup after a failed start keeps the page"

# dedup: FILE.digests that is not one: exit 2, named, the index left as it was, unlocked
cp "$SF/ix" "$SF/ix.before"
echo "not a digests file" > "$SF/ix.digests"
expect_status 2 "dedup: a damaged FILE.digests" -- \
    "$SIMCRAWL" dedup --quiet --index "$SF/ix" --lock-wait 0 "$SF/p.html"
expect_grep "^simcrawl dedup: $SF/ix.digests: not a simcrawl digests file (first line)" \
    "$TMP/err" "dedup names the damaged digests file"
cmp -s "$SF/ix" "$SF/ix.before" && ok || bad "dedup: a damaged FILE.digests changed the index"
expect_status 2 "dedup: the lock is free after a damaged FILE.digests" -- \
    "$SIMCRAWL" dedup --quiet --index "$SF/ix" --lock-wait 0 "$SF/p.html"
expect_grep "not a simcrawl digests file" "$TMP/err" "dedup: the same error again, not a lock"

# crawl: the --log cannot be opened: exit 2, named, and no WARC created (opened after it)
expect_status 2 "crawl: --log in a missing directory" -- \
    "$SIMCRAWL" crawl --quiet --log "$SF/no/dir/c.log" --warc "$SF/c.warc.gz" \
    http://127.0.0.1:1/
expect_grep "^simcrawl crawl: cannot open log file $SF/no/dir/c.log: No such file or directory" \
    "$TMP/err" "crawl names the log it cannot open"
[ ! -e "$SF/c.warc.gz" ] && [ ! -e "$SF/c.warc.gz.open" ] && ok ||
    bad "crawl: a failed --log left a WARC"

# crawl --state: the --warc cannot be created: exit 2, and the state holds no started crawl
# (the same command with a good --warc then starts it, not resumes it; nothing answers on
# port 1, so that crawl ends in exit 2 too, saying so)
expect_status 2 "crawl --state: --warc in a missing directory" -- \
    "$SIMCRAWL" crawl --quiet --state "$SF/st" --warc "$SF/no/dir/c.warc.gz" http://127.0.0.1:1/
expect_grep "^simcrawl crawl: cannot create $SF/no/dir/c.warc.gz: No such file or directory" \
    "$TMP/err" "crawl names the WARC it cannot create"
expect_status 2 "crawl --state: a new crawl after a failed start" -- \
    "$SIMCRAWL" crawl --state "$SF/st" --max-pages 1 --robots no --timeout 2 \
    --connect-timeout 1 --warc "$SF/c2.warc.gz" http://127.0.0.1:1/
expect_grep "^simcrawl crawl: no page could be fetched: http://127.0.0.1:1/: " "$TMP/err" \
    "crawl --state: the new crawl ran"
if grep -q "resuming" "$TMP/err"; then bad "crawl --state: a failed start was resumed"; else ok; fi
