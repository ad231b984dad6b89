# simcrawl crawl: usage errors and option parsing (no network: every case fails before
# a transfer starts). The crawling itself is tested in tests/test_crawl.c against
# loopback servers.
expect_status 0 "crawl --help" -- "$SIMCRAWL" crawl --help
expect_grep "usage: simcrawl crawl" "$TMP/out" "crawl --help prints usage"
expect_grep "\-\-per-host" "$TMP/out" "crawl --help lists --per-host"
expect_status 1 "crawl without seeds" -- "$SIMCRAWL" crawl
expect_grep "no seed URL" "$TMP/err" "crawl without seeds says why"
expect_status 1 "crawl --delay abc" -- "$SIMCRAWL" crawl --delay abc http://127.0.0.1:1/
expect_grep "\-\-delay: seconds" "$TMP/err" "bad --delay names the option"
expect_status 1 "crawl --scope bad" -- "$SIMCRAWL" crawl --scope planet http://127.0.0.1:1/
expect_status 1 "crawl --k 9" -- "$SIMCRAWL" crawl --k 9 http://127.0.0.1:1/
expect_status 1 "crawl bad --include regex" -- "$SIMCRAWL" crawl --include "(" http://127.0.0.1:1/
expect_grep "bad --include regex" "$TMP/err" "bad regex is named"
expect_status 1 "crawl unknown option" -- "$SIMCRAWL" crawl --no-such-option 1 http://127.0.0.1:1/
expect_status 1 "crawl missing config" -- "$SIMCRAWL" crawl --config "$TMP/none.conf" http://127.0.0.1:1/
expect_grep "cannot open config file" "$TMP/err" "missing config file is named"
printf '[crawl]\nper-host = many\n' >"$TMP/bad.conf"
expect_status 1 "crawl bad config value" -- "$SIMCRAWL" crawl --config "$TMP/bad.conf" http://127.0.0.1:1/
expect_grep "bad.conf: --per-host" "$TMP/err" "bad config value names the file and key"
expect_status 1 "crawl only bad seeds" -- "$SIMCRAWL" crawl ftp://example.org/ mailto:x@y
expect_grep "not an http(s) URL, skipped: ftp://example.org/" "$TMP/err" "bad seed is named"
expect_status 1 "crawl missing seeds file" -- "$SIMCRAWL" crawl --seeds "$TMP/none.txt"
expect_grep "cannot open seeds file" "$TMP/err" "missing seeds file is named"
expect_status 1 "crawl --topic and --topic-file" -- "$SIMCRAWL" crawl --topic a --topic-file x http://127.0.0.1:1/
expect_status 0 "the shipped config parses" -- "$SIMCRAWL" crawl --config config/simcrawl.conf --help
