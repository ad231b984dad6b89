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
expect_grep "bad.conf:2: --per-host" "$TMP/err" "bad config value names the file, line and key"
# config files that are not one (issue 12 item 6): exit 1, the file and line named
mkdir -p "$TMP/conf.d"
expect_status 1 "crawl --config DIR" -- "$SIMCRAWL" crawl --config "$TMP/conf.d" --help
expect_grep "config file $TMP/conf.d is a directory" "$TMP/err" "--config DIR says why"
expect_status 1 "crawl --config /dev/zero" -- timeout 20 "$SIMCRAWL" crawl --config /dev/zero --help
expect_grep "config file /dev/zero is not a regular file" "$TMP/err" "--config /dev/zero says why"
head -c 1100000 /dev/zero | tr '\0' '#' >"$TMP/big.conf"
expect_status 1 "crawl --config over the size cap" -- "$SIMCRAWL" crawl --config "$TMP/big.conf" --help
expect_grep "big.conf is larger than 1048576 bytes" "$TMP/err" "oversized config names the cap"
printf '[crawl]\nper-host = 2\n[crwal]\ndelay = 0\n' >"$TMP/sec.conf"
expect_status 1 "crawl config unknown section" -- "$SIMCRAWL" crawl --config "$TMP/sec.conf" --help
expect_grep "sec.conf:3: unknown section \[crwal\]" "$TMP/err" "unknown section: file and line named"
printf '[crawl]\nper-host = 2\n\n[other]\n' >"$TMP/sec2.conf"
expect_status 1 "crawl config unknown empty section" -- "$SIMCRAWL" crawl --config "$TMP/sec2.conf" --help
expect_grep "sec2.conf:4: unknown section \[other\]" "$TMP/err" "unknown empty section named"
printf '[crawl]\nper-host = 2\ndealy = 0\n' >"$TMP/key.conf"
expect_status 1 "crawl config unknown key" -- "$SIMCRAWL" crawl --config "$TMP/key.conf" --help
expect_grep "key.conf:3: unknown key 'dealy'" "$TMP/err" "unknown key: file and line named"
printf '\357\273\277[crawl]\nper-host = 2\n' >"$TMP/bom.conf"
expect_status 0 "crawl config with a byte order mark" -- "$SIMCRAWL" crawl --config "$TMP/bom.conf" --help
# a seeds file starting with a UTF-8 byte order mark keeps its first seed (port 1 on
# 127.0.0.1: refused at once, the seed is logged)
printf '\357\273\277http://127.0.0.1:1/first\nhttp://127.0.0.1:1/second\n' >"$TMP/bom-seeds.txt"
expect_status 2 "crawl seeds file with a byte order mark (every seed refused)" -- timeout 20 \
    "$SIMCRAWL" crawl --delay 0 --robots-backoff 0.1 --log "$TMP/bom-seeds.jsonl" \
    --seeds "$TMP/bom-seeds.txt"
# every seed failed (issue 15): the reason on stderr, exit 2, the errors counted by cause
expect_grep "no page could be fetched: http://127.0.0.1:1/first: host unreachable: robots.txt: " \
    "$TMP/err" "a crawl whose seeds all fail says why"
expect_grep "errors by cause: 2 host unreachable: robots.txt: " "$TMP/err" \
    "the summary counts the errors by cause"
expect_grep '"url":"http://127.0.0.1:1/first"' "$TMP/bom-seeds.jsonl" "first seed after a BOM kept"
expect_grep '"url":"http://127.0.0.1:1/second"' "$TMP/bom-seeds.jsonl" "second seed kept"
# robots.txt of a refused host (issue 12 item 5): 1 + 3 tries (0.1, 0.2, 0.4 s apart), then
# every URL of the host is an error that says so
expect_grep '"url":"http://127.0.0.1:1/second".*"decision":"error".*host unreachable: robots.txt: .* (4 attempts in [0-9]* s)' \
    "$TMP/bom-seeds.jsonl" "refused host: its URLs are errors after the retries"
# the robots.txt outage options (issue 12 item 5)
expect_status 0 "crawl --help" -- "$SIMCRAWL" crawl --help
expect_grep "\-\-robots-outage SECONDS" "$TMP/out" "crawl --help lists --robots-outage"
expect_grep "\-\-robots-backoff SECONDS" "$TMP/out" "crawl --help lists --robots-backoff"
expect_grep "\-\-unreachable-retries N" "$TMP/out" "crawl --help lists --unreachable-retries"
expect_status 1 "crawl --robots-outage 0" -- "$SIMCRAWL" crawl --robots-outage 0 http://127.0.0.1:1/
expect_grep "\-\-robots-outage: seconds" "$TMP/err" "bad --robots-outage names the option"
expect_status 1 "crawl --unreachable-retries -1" -- "$SIMCRAWL" crawl --unreachable-retries -1 http://127.0.0.1:1/
printf '[crawl]\nrobots-outage = 60\nrobots-backoff = 0.5\nunreachable-retries = 0\n' >"$TMP/outage.conf"
expect_status 0 "crawl config robots outage keys" -- "$SIMCRAWL" crawl --config "$TMP/outage.conf" --help
expect_status 1 "crawl only bad seeds" -- "$SIMCRAWL" crawl ftp://example.org/ mailto:x@y
expect_grep "not an http(s) URL, skipped: ftp://example.org/" "$TMP/err" "bad seed is named"
expect_status 1 "crawl missing seeds file" -- "$SIMCRAWL" crawl --seeds "$TMP/none.txt"
expect_grep "cannot open seeds file" "$TMP/err" "missing seeds file is named"
expect_status 1 "crawl --topic and --topic-file" -- "$SIMCRAWL" crawl --topic a --topic-file x http://127.0.0.1:1/
expect_status 0 "the shipped config parses" -- "$SIMCRAWL" crawl --config config/simcrawl.conf --help
