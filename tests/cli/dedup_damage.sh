# simcrawl dedup on damaged WARCs (issue 12 item 2): a record whose Content-Length is
# far beyond --max-block with a short body, in plain, per-record gzip and whole-file gzip
# framings; a streamed record whose WARC-Block-Digest does not match; a gzip member whose
# CRC fails. Good records before and after each. The output must pass a strict checker
# (lengths up to CRLF CRLF, gzip CRCs, sha1 block digests), the damaged record must be
# logged once as error with file and offset, and every record after it must be read.
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
DW=$TMP/dedup_damage
mkdir -p "$DW"
python3 - "$DW" <<'PY'
import base64, gzip, hashlib, os, random, sys
out = sys.argv[1]
def rec(i, cl=None, body=None, flip=False, nwords=150):
    if body is None:
        r = random.Random(i)
        words = "alpha beta gamma delta river stone cloud forest harbor lamp".split()
        text = " ".join(r.choice(words) + str(r.randrange(1000)) for _ in range(nwords))
        html = "<html><head><title>p%d</title></head><body><p>%s</p></body></html>" % (i, text)
        body = ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s"
                % (len(html), html)).encode()
    dig = "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()
    if flip:  # the block changes after its digest was taken
        body = body[:100] + bytes([body[100] ^ 1]) + body[101:]
    h = ("WARC/1.1\r\nWARC-Type: response\r\n"
         "WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-%012d>\r\n"
         "WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: http://example.com/p%d\r\n"
         "Content-Type: application/http; msgtype=response\r\nWARC-Block-Digest: %s\r\n"
         "Content-Length: %d\r\n\r\n" % (i, i, dig, len(body) if cl is None else cl)).encode()
    return h + body + b"\r\n\r\n"
def write(name, parts, framing, bad):
    """framing: plain, members, whole; bad: index of the damaged record"""
    if framing == "plain":
        data = b"".join(parts)
        off = sum(len(p) for p in parts[:bad])
    elif framing == "whole":
        data = gzip.compress(b"".join(parts))
        off = sum(len(p) for p in parts[:bad])  # whole-file gzip: the stream offset
    else:
        mem = [bytearray(gzip.compress(p)) for p in parts]
        if isinstance(framing, tuple):  # ("crc", k): flip a byte of member k's CRC32
            mem[framing[1]][-8] ^= 0x01
        data = b"".join(bytes(m) for m in mem)
        off = sum(len(m) for m in mem[:bad])
    open(os.path.join(out, name), "wb").write(data)
    open(os.path.join(out, name + ".off"), "w").write("%d\n" % off)
# 100,000,000 bytes announced (over the default --max-block of 64 MiB), 1.5 kB there
long_cl = [rec(i) for i in range(3)] + [rec(3, cl=100000000)] + [rec(i) for i in range(4, 8)]
write("long.warc", long_cl, "plain", 3)
write("long-members.warc.gz", long_cl, "members", 3)
write("long-whole.warc.gz", long_cl, "whole", 3)
# with --max-block 4096 record 3 (6 kB) streams; its block digest is wrong
digest = [rec(i) for i in range(3)] + [rec(3, flip=True, nwords=800)] + [rec(i) for i in range(4, 8)]
write("digest.warc", digest, "plain", 3)
write("digest.warc.gz", digest, "members", 3)
write("crc.warc.gz", [rec(i) for i in range(8)], ("crc", 3), 3)
PY
cat >"$DW/check.py" <<'PY'
# Strict WARC check: every record's Content-Length reaches exactly a CRLF CRLF, gzip
# members inflate with valid CRCs, sha1 WARC-Block-Digests match. Prints the target URIs.
import base64, hashlib, sys, zlib
raw = open(sys.argv[1], "rb").read()
if raw[:2] == b"\x1f\x8b":
    data, rest = b"", raw
    while rest:
        d = zlib.decompressobj(31)
        data += d.decompress(rest)  # raises on a bad CRC
        if not d.eof:
            sys.exit("gzip member truncated")
        rest = d.unused_data
else:
    data = raw
pos = 0
while pos < len(data):
    end = data.find(b"\r\n\r\n", pos)
    if not data.startswith(b"WARC/1.", pos) or end < 0:
        sys.exit("no record header at %d" % pos)
    fields = {}
    for line in data[pos:end].split(b"\r\n")[1:]:
        k, _, v = line.partition(b":")
        fields[k.strip().lower().decode()] = v.strip().decode()
    cl = int(fields["content-length"])
    block = data[end + 4:end + 4 + cl]
    if len(block) != cl or data[end + 4 + cl:end + 8 + cl] != b"\r\n\r\n":
        sys.exit("record at %d: Content-Length %d does not end at CRLF CRLF" % (pos, cl))
    dig = fields.get("warc-block-digest", "")
    if dig.lower().startswith("sha1:") and \
            base64.b32encode(hashlib.sha1(block).digest()).decode() != dig[5:].upper():
        sys.exit("record at %d: WARC-Block-Digest does not match" % pos)
    if "warc-target-uri" in fields:
        print(fields["warc-target-uri"])
    pos = end + 8 + cl
PY
# dedup_damaged NAME OUT [OPTIONS...]: runs dedup on $DW/NAME and checks output and log;
# with dd_pipe=1 the WARC comes from a pipe on standard input (cat NAME | dedup ... -),
# which cannot be read again: the reader keeps a streamed block's bytes to rescan them
dedup_damaged() {
    dn=$1; dout=$2; shift 2
    if [ "${dd_pipe:-0}" = 1 ]; then
        expect_status 0 "dedup damaged $dn from a pipe" -- sh -c \
            'f=$1; shift; cat "$f" | "$@" -' sh "$DW/$dn" "$SIMCRAWL" dedup "$@" \
            --log "$DW/$dn.log" --warc-out "$DW/$dout"
        dfile=-
    else
        expect_status 0 "dedup damaged $dn" -- "$SIMCRAWL" dedup "$@" --log "$DW/$dn.log" \
            --warc-out "$DW/$dout" "$DW/$dn"
        dfile=$dn
    fi
    doff=$(cat "$DW/$dn.off")
    if python3 "$DW/check.py" "$DW/$dout" >"$DW/$dn.uris" 2>"$DW/$dn.check"; then ok; else
        bad "dedup $dn: output fails the strict check: $(cat "$DW/$dn.check")"; fi
    if grep -q "/p3\$" "$DW/$dn.uris"; then bad "dedup $dn: damaged record written"; else ok; fi
    [ "$(grep -c '/p[0-24-7]$' "$DW/$dn.uris")" = 7 ] && ok ||
        bad "dedup $dn: want the 7 good records in the output, got $(tr '\n' ' ' <"$DW/$dn.uris")"
    [ "$(grep -c '"decision":"error"' "$DW/$dn.log")" = 1 ] && ok ||
        bad "dedup $dn: want exactly one error line: $(grep error "$DW/$dn.log")"
    expect_grep "\"file\":\"[^\"]*$dfile\",\"offset\":$doff,\"decision\":\"error\",\"error\":\"." \
        "$DW/$dn.log" "dedup $dn: error logged with file and offset $doff"
    [ "$(grep -c '/p[4-7]",.*"decision":"new"' "$DW/$dn.log")" = 4 ] && ok ||
        bad "dedup $dn: the 4 records after the damaged one not all read"
    if grep -q '/p3",.*"decision":"\(new\|passed\)' "$DW/$dn.log"; then
        bad "dedup $dn: damaged record also logged as good"; else ok; fi
    expect_grep "$dfile: offset $doff: " "$TMP/err" "dedup $dn: damage on stderr with offset"
    expect_grep " 7 new, .* 1 errors" "$TMP/err" "dedup $dn: summary"
}
dedup_damaged long.warc long.out.warc.gz
dedup_damaged long.warc long.out.warc
dedup_damaged long-members.warc.gz long-members.out.warc.gz
dedup_damaged long-whole.warc.gz long-whole.out.warc.gz
dedup_damaged long-whole.warc.gz long-whole-small.out.warc.gz --max-block 4096
dedup_damaged digest.warc digest.out.warc.gz --max-block 4096
dedup_damaged digest.warc.gz digest.out.warc --max-block 4096
dedup_damaged crc.warc.gz crc.out.warc.gz
# the same from a pipe (standard input): the records a too-long Content-Length swallowed
# are found again in the streamed block's bytes kept aside (a temporary file)
dd_pipe=1
dedup_damaged long.warc long.pipe.out.warc.gz
dedup_damaged long.warc long.pipe.out.warc
dedup_damaged long-members.warc.gz long-members.pipe.out.warc.gz
dedup_damaged long-whole.warc.gz long-whole.pipe.out.warc.gz
dedup_damaged long-whole.warc.gz long-whole-small.pipe.out.warc.gz --max-block 4096
dedup_damaged digest.warc digest.pipe.out.warc.gz --max-block 4096
dedup_damaged digest.warc.gz digest.pipe.out.warc --max-block 4096
dedup_damaged crc.warc.gz crc.pipe.out.warc.gz
dd_pipe=0
# without --warc-out the decisions are the same
expect_status 0 "dedup damaged, no output" -- "$SIMCRAWL" dedup --log "$DW/noout.log" "$DW/long.warc"
[ "$(grep -c '"decision":"error"' "$DW/noout.log")" = 1 ] && ok || bad "dedup without --warc-out: want one error"
[ "$(grep -c '"decision":"new"' "$DW/noout.log")" = 7 ] && ok || bad "dedup without --warc-out: want 7 new"
# the CRC-damaged page is not indexed: pairs over it finds no page p3
expect_status 0 "pairs on a CRC-damaged WARC" -- "$SIMCRAWL" dedup --index "$DW/crc.idx" "$DW/crc.warc.gz"
if grep -aq "example.com/p3" "$DW/crc.idx"; then bad "dedup: CRC-damaged page indexed"; else ok; fi
