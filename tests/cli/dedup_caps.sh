# simcrawl dedup --max-depth N (issue 12 item 6): the extractor's nesting cap, as in the
# other fingerprinting commands. A WARC holding a deeply nested page: under a lowered cap
# the page is named once on stderr (file, offset, URI, option), logged "truncated":"depth",
# and its fingerprint differs from the default run's; a bad value is exit 1.
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
DC=$TMP/dedup_caps
mkdir -p "$DC"
python3 - "$DC/deep.warc" <<'PY'
import sys
words = "alpha beta gamma delta river stone cloud forest harbor lamp".split()
shallow = " ".join("%s%d" % (words[i % 10], i) for i in range(120))
deep = " ".join("%s%d" % (words[i % 7], i + 500) for i in range(120))
html = ("<html><head><title>deep</title></head><body><p>%s</p>%s<p>%s</p>%s</body></html>"
        % (shallow, "<div>" * 40, deep, "</div>" * 40))
body = ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s"
        % (len(html), html)).encode()
def rec(rid, uri, block, typ="response", ct="application/http; msgtype=response"):
    h = ("WARC/1.1\r\nWARC-Type: %s\r\nWARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-%012d>\r\n"
         "WARC-Date: 2024-01-01T00:00:00Z\r\n%sContent-Type: %s\r\nContent-Length: %d\r\n\r\n"
         % (typ, rid, "WARC-Target-URI: %s\r\n" % uri if uri else "", ct, len(block))).encode()
    return h + block + b"\r\n\r\n"
info = rec(1, None, b"software: test\r\n", "warcinfo", "application/warc-fields")
open(sys.argv[1], "wb").write(info + rec(2, "http://example.com/deep", body))
print(len(info), file=open(sys.argv[1] + ".off", "w"))
PY
dc_off=$(cat "$DC/deep.warc.off")
expect_status 0 "dedup --max-depth 20" -- "$SIMCRAWL" dedup --max-depth 20 --log "$DC/cut.log" "$DC/deep.warc"
expect_grep "^simcrawl dedup: [^ ]*deep.warc: offset $dc_off: http://example.com/deep: [0-9]* elements nested deeper than 20 skipped, with [0-9]* bytes of text (--max-depth)$" \
    "$TMP/err" "dedup names the cut record and the option"
[ "$(grep -c 'nested deeper' "$TMP/err")" = 1 ] && ok || bad "dedup: one warning for the cut page"
expect_grep '/deep",.*"decision":"new",.*"truncated":"depth"' "$DC/cut.log" "dedup logs the cut page truncated"
expect_status 0 "dedup default depth" -- "$SIMCRAWL" dedup --log "$DC/full.log" "$DC/deep.warc"
if grep -q 'nested deeper' "$TMP/err"; then bad "dedup: no warning under the default depth"; else ok; fi
if grep -q truncated "$DC/full.log"; then bad "dedup: not truncated under the default depth"; else ok; fi
dc_cut=$(sed -n 's/.*"fingerprint":"\([0-9a-f]*\)".*/\1/p' "$DC/cut.log")
dc_full=$(sed -n 's/.*"fingerprint":"\([0-9a-f]*\)".*/\1/p' "$DC/full.log")
if [ -n "$dc_cut" ] && [ -n "$dc_full" ] && [ "$dc_cut" != "$dc_full" ]; then ok; else
    bad "dedup: the cut text is fingerprinted (cut '$dc_cut', full '$dc_full')"; fi
# an HTML file input is named by its path
python3 -c 'import sys; d = open(sys.argv[1], "rb").read(); open(sys.argv[2], "wb").write(d[d.index(b"<html>"):d.rindex(b"</html>") + 7])' \
    "$DC/deep.warc" "$DC/deep.html"
expect_status 0 "dedup --max-depth 20 (HTML file)" -- "$SIMCRAWL" dedup --max-depth 20 "$DC/deep.html"
expect_grep "^simcrawl dedup: [^ ]*deep.html: [0-9]* elements nested deeper than 20 skipped" "$TMP/err" "dedup names the cut HTML file"
expect_status 1 "dedup --max-depth 0" -- "$SIMCRAWL" dedup --max-depth 0 "$DC/deep.warc"
expect_grep "max-depth wants a number from 1 to 1000000, not '0'" "$TMP/err" "dedup: bad --max-depth named"
expect_status 1 "dedup --max-depth x" -- "$SIMCRAWL" dedup --max-depth x "$DC/deep.warc"
expect_status 1 "dedup --max-depth 1000001" -- "$SIMCRAWL" dedup --max-depth 1000001 "$DC/deep.warc"
expect_status 1 "dedup --max-depth without value" -- "$SIMCRAWL" dedup --max-depth
expect_status 0 "dedup --help" -- "$SIMCRAWL" dedup --help
expect_grep "^  --max-depth N " "$TMP/out" "dedup --help names --max-depth"
