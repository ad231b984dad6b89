# simcrawl robots: prints allowed/disallowed, exit 0/1; usage errors exit 2 (1 is taken).
RB=tests/data/robots
expect_status 0 "robots --help" -- "$SIMCRAWL" robots --help
expect_grep "exit status: 0 allowed, 1 disallowed, 2 usage error" "$TMP/out" "robots --help names the exit codes"

expect_status 0 "robots: allowed" -- "$SIMCRAWL" robots $RB/rfc9309-example.txt foobot http://example.com/example/page.html
expect_grep "^allowed$" "$TMP/out" "robots prints allowed"
expect_status 1 "robots: disallowed" -- "$SIMCRAWL" robots $RB/rfc9309-example.txt foobot https://example.com/other
expect_grep "^disallowed$" "$TMP/out" "robots prints disallowed"
expect_status 1 "robots: '*' group, path only" -- "$SIMCRAWL" robots $RB/rfc9309-example.txt otherbot /images/a.gif
expect_status 0 "robots: '\$' anchors" -- "$SIMCRAWL" robots $RB/rfc9309-example.txt otherbot "/images/a.gif?x=1"
expect_status 0 "robots: empty group allows all" -- "$SIMCRAWL" robots $RB/rfc9309-example.txt quxbot /example/x
expect_status 0 "robots: fragment ignored" -- "$SIMCRAWL" robots $RB/rfc9309-example.txt barbot "http://e.com/example/other.html#/example/page.html"

expect_status 1 "robots -v: disallowed" -- "$SIMCRAWL" robots -v $RB/bom-crlf.txt "simcrawl/0.1 (+https://x)" http://e.com/private/x
expect_grep "^disallowed by line 3: Disallow: /private$" "$TMP/out" "robots -v names rule and line"
expect_grep "crawl-delay 2 s" "$TMP/err" "robots -v notes the crawl-delay"
expect_status 0 "robots -v: allowed by rule" -- "$SIMCRAWL" robots -v $RB/bom-crlf.txt SimCrawl /private/ok/1
expect_grep "^allowed by line 4: Allow: /private/ok$" "$TMP/out" "robots -v names the Allow"
expect_status 0 "robots -v: no match" -- "$SIMCRAWL" robots -v $RB/bom-crlf.txt simcrawl /public
expect_grep "^allowed: no rule matched$" "$TMP/out" "robots -v says no rule matched"
expect_status 0 "robots: /robots.txt always allowed" -- "$SIMCRAWL" robots -v $RB/rfc9309-example.txt foobot /robots.txt
expect_grep "always allowed" "$TMP/out" "robots -v explains /robots.txt"

printf 'User-agent: *\nDisallow: /x\n' > "$TMP/robots.txt"
expect_status 1 "robots: stdin" -- sh -c "\"$SIMCRAWL\" robots - b /x/y < \"$TMP/robots.txt\""
expect_status 0 "robots: empty file allows" -- "$SIMCRAWL" robots /dev/null b /x

# a 600 KiB robots.txt: the tail beyond 512 KiB is ignored and -v says so
awk 'BEGIN { print "User-agent: *"; for (i = 0; i < 20000; i++) printf "Disallow: /filler/%08d/x\n", i; print "Disallow: /tail" }' > "$TMP/big.txt"
expect_status 0 "robots: tail of a big file ignored" -- "$SIMCRAWL" robots -v "$TMP/big.txt" b /tail
expect_grep "only the first" "$TMP/err" "robots -v reports the ignored tail"
expect_status 1 "robots: head of a big file applies" -- "$SIMCRAWL" robots "$TMP/big.txt" b /filler/00000010/x

# binary junk is not an error: no rules
head -c 20000 /dev/urandom > "$TMP/junk.bin" 2>/dev/null || printf '\001\002\377' > "$TMP/junk.bin"
expect_status 0 "robots: binary input" -- "$SIMCRAWL" robots "$TMP/junk.bin" b /x

expect_status 2 "robots: missing arguments" -- "$SIMCRAWL" robots $RB/rfc9309-example.txt foobot
expect_grep "expected ROBOTS_FILE USER_AGENT URL" "$TMP/err" "robots names the missing arguments"
expect_status 2 "robots: unknown option" -- "$SIMCRAWL" robots --bogus a b c
expect_status 2 "robots: no product token" -- "$SIMCRAWL" robots $RB/rfc9309-example.txt "/1.0" /x
expect_grep "no product token" "$TMP/err" "robots explains a bad user agent"
expect_status 2 "robots: missing file" -- "$SIMCRAWL" robots "$TMP/no-such-file" b /x
expect_grep "cannot open $TMP/no-such-file" "$TMP/err" "robots names the missing file"
