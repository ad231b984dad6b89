# WARC files of another writer, and ours read by another reader: webrecorder's warcio.js
# (npm warcio, fetched by make test-deps into .cache/npm; tests/tools/warcio_warc.mjs)
# writes WARC/1.1 archives, gzip per record and plain, with what other tools write and
# wget does not: sha256 digests in hex, WARC-Date with milliseconds, chunked and gzip
# content-coded responses, resource records holding pages (warcit, browser captures), a
# metadata record, a revisit of its own. simcrawl dedup must read every record, decide the
# planted near-duplicates, exact copies (of a response and of a resource) and originals,
# fingerprint each page as `simcrawl fingerprint` does the same bytes in a file, and write
# an archive that warcio.js parses with every digest right (a revisit's payload digest
# equal to its original's). Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP);
# WARCIO_JS is warcio's bundled dist/index.all.js.
WW=$TMP/warc_warcio
mkdir -p "$WW/pages"
if [ -z "${WARCIO_JS:-}" ]; then
    WARCIO_JS=$(ls -d .cache/npm/warcio-*/index.all.js 2>/dev/null | tail -n 1)
fi
. tests/cli/lib/npm_vendored.sh
ww_have=no
npm_vendored warc_warcio.sh warcio.js warcio "WARCs of another writer are not checked" \
    "${WARCIO_JS:+$(dirname "$WARCIO_JS")}" "$(basename "${WARCIO_JS:-index.all.js}")" && ww_have=yes
if [ "$ww_have" = yes ] && ! command -v node >/dev/null 2>&1; then
    ww_have=no
    bad "warc_warcio.sh: npm is installed but node is not (warcio.js runs in node)"
fi
if [ "$ww_have" = yes ]; then
# the pages: six of generated text, each with a near-duplicate (one word added), and three
# real manual pages (git's, from tests/data); the manifest says which record holds which
python3 - "$WW" <<'PY'
import gzip, json, os, sys
sys.path.insert(0, "tests")
from pagegen import para, page
d = sys.argv[1]
pages = {}
for i in range(6):
    base = [para(60, 10 * i + j) for j in range(4)]
    near = base[:]
    near[3] += " stream"
    pages["p%d.html" % i] = page("Page %d" % i, base)
    pages["p%d-near.html" % i] = page("Page %d" % i, near)
for f in ("git-diff", "git-log", "git-show"):
    pages[f + ".html"] = gzip.open("tests/data/crawl_shared/%s.html.gz" % f).read().decode()
for name, text in pages.items():
    open(os.path.join(d, "pages", name), "w").write(text)
B = "http://example.test/"
f = lambda n: os.path.join(d, "pages", n)
m = []
for i in range(6):
    for suffix, extra in (("", {}), ("-near", {"chunked": i % 2 == 0, "gzip_body": i % 3 == 0})):
        u = B + "p%d%s.html" % (i, suffix)
        m.append({"type": "request", "url": u})
        m.append(dict({"type": "response", "url": u, "file": f("p%d%s.html" % (i, suffix))}, **extra))
m.append({"type": "response", "url": B + "copy-of-p1.html", "file": f("p1.html")})
m.append({"type": "resource", "url": B + "git-diff.html", "file": f("git-diff.html"),
          "content_type": "text/html; charset=utf-8"})
for g in ("git-log", "git-show"):
    m.append({"type": "response", "url": B + g + ".html", "file": f(g + ".html"), "chunked": True})
m.append({"type": "metadata", "url": B + "p0.html", "text": "outlink: %sp1.html L a/@href\r\n" % B})
m.append({"type": "revisit", "url": B + "p2-again.html", "refers_to_url": B + "p2.html",
          "refers_to_date": "2026-11-01T12:00:05Z"})
m.append({"type": "resource", "url": B + "copy-of-git-diff.html", "file": f("git-diff.html"),
          "content_type": "text/html"})
json.dump(m, open(os.path.join(d, "manifest.json"), "w"))
PY
"$SIMCRAWL" fingerprint --no-templates "$WW"/pages/*.html >"$WW/files.fp" 2>"$WW/fp.err" ||
    bad "warc_warcio.sh: fingerprint of the pages failed: $(head -c 300 "$WW/fp.err")"
for ww_kind in gz plain; do
    if [ "$ww_kind" = gz ]; then in=$WW/in.warc.gz gzopt=--gzip; else in=$WW/in.warc gzopt=; fi
    # shellcheck disable=SC2086
    if ! node tests/tools/warcio_warc.mjs write "$WARCIO_JS" "$in" "$WW/manifest.json" $gzopt 2>"$WW/w.err"; then
        bad "warc_warcio.sh: warcio.js could not write $in: $(head -c 300 "$WW/w.err")"
        continue
    fi
    # warcio's own reading of what it wrote (the check's baseline)
    node tests/tools/warcio_warc.mjs check "$WARCIO_JS" "$in" >"$WW/in.check" 2>"$WW/c.err" && ok ||
        bad "warc_warcio.sh ($ww_kind): warcio.js does not read back its own $in: $(head -c 300 "$WW/c.err")"
    out=$WW/out-$ww_kind.warc.gz
    expect_status 0 "dedup a warcio.js WARC ($ww_kind)" -- "$SIMCRAWL" dedup --quiet \
        --log "$WW/log-$ww_kind.jsonl" --warc-out "$out" "$in"
    expect_status 0 "dedup --no-templates a warcio.js WARC ($ww_kind)" -- "$SIMCRAWL" dedup \
        --quiet --no-templates --log "$WW/nt-$ww_kind.jsonl" "$in"
    node tests/tools/warcio_warc.mjs check "$WARCIO_JS" "$out" >"$WW/out-$ww_kind.check" 2>"$WW/c.err" && ok ||
        bad "warc_warcio.sh ($ww_kind): warcio.js finds simcrawl's output WARC wrong: $(head -c 300 "$WW/c.err")"
    if python3 - "$WW/log-$ww_kind.jsonl" "$WW/nt-$ww_kind.jsonl" "$WW/files.fp" \
        "$WW/out-$ww_kind.check" <<'PY'; then ok; else bad "warc_warcio.sh ($ww_kind): the decisions or the output are wrong (above)"; fi
import json, os, sys
B = "http://example.test/"
log = [json.loads(l) for l in open(sys.argv[1])]
nt = [json.loads(l) for l in open(sys.argv[2])]
files = {os.path.basename(l.split()[1]): l.split()[0] for l in open(sys.argv[3])}
out = [json.loads(l) for l in open(sys.argv[4])]
bad = []
def page(recs, uri):
    got = [o for o in recs if o["uri"] == uri and o["type"] in ("response", "resource")]
    return got[0] if len(got) == 1 else {"decision": "%d records" % len(got)}
want = {}
for i in range(6):
    want["p%d.html" % i] = ("new", None)
    want["p%d-near.html" % i] = ("near-duplicate", "p%d.html" % i)
want.update({"copy-of-p1.html": ("exact-duplicate", "p1.html"), "git-diff.html": ("new", None),
             "copy-of-git-diff.html": ("exact-duplicate", "git-diff.html"),
             "git-log.html": ("new", None), "git-show.html": ("new", None)})
for name, (decision, of) in want.items():
    o = page(log, B + name)
    if o["decision"] != decision or (of and o.get("duplicate_of") != B + of):
        bad.append("%s: %s of %s, want %s of %s" % (name, o["decision"], o.get("duplicate_of"), decision, of))
# without templates a page's fingerprint is its bytes' alone: the same as the file's
for name in want:
    fp = page(nt, B + name).get("fingerprint")
    src = name.replace("copy-of-", "")
    if fp != files[src]:
        bad.append("%s: fingerprint %s from the WARC, %s from the file" % (name, fp, files[src]))
for o in log:
    if o["decision"] == "error":
        bad.append("record at %s: error %s" % (o.get("offset"), o.get("error")))
    if o["type"] == "request" and "-near" in o["uri"] and o["decision"] != "dropped":
        bad.append("the request of %s: %s" % (o["uri"], o["decision"]))
    if o["type"] in ("metadata", "warcinfo", "revisit") and o["decision"] != "passed":
        bad.append("the %s record of %s: %s" % (o["type"], o["uri"], o["decision"]))
# the output: no near-duplicate, each exact copy a revisit naming its original's record
uris = [o["uri"] for o in out]
for name, (decision, of) in want.items():
    recs = [o for o in out if o["uri"] == B + name and o["type"] in ("response", "resource", "revisit")]
    if decision == "near-duplicate" and recs:
        bad.append("%s: in the output" % name)
    if decision == "new" and [o["type"] for o in recs] not in (["response"], ["resource"]):
        bad.append("%s: %s in the output" % (name, [o["type"] for o in recs]))
    if decision == "exact-duplicate":
        orig = [o for o in out if o["uri"] == B + of and o["type"] in ("response", "resource")]
        if len(recs) != 1 or recs[0]["type"] != "revisit" or not orig or recs[0]["refers_to"] != orig[0]["id"] \
                or recs[0]["payload_digest"] != "ok":
            bad.append("%s: %s, want a revisit of %s" % (name, recs, orig[:1]))
if bad:
    sys.exit("\n".join(bad[:10]))
PY
    # and simcrawl reads its own output again: nothing damaged, the revisits passed
    expect_status 0 "dedup reads its output of a warcio.js WARC ($ww_kind)" -- "$SIMCRAWL" dedup \
        --quiet --log "$WW/again-$ww_kind.jsonl" "$out"
    [ "$(grep -c '"decision":"error"' "$WW/again-$ww_kind.jsonl")" = 0 ] && ok ||
        bad "warc_warcio.sh ($ww_kind): errors reading the output again"
done
# pairs over the WARC: the resource pages are pages too (the INPUT iterator's WARC kind)
expect_status 0 "pairs over a warcio.js WARC" -- "$SIMCRAWL" pairs --k 0 "$WW/in.warc.gz"
expect_grep "copy-of-git-diff.html" "$TMP/out" "pairs finds the copy of a resource record"
fi
# hostile resource records (no warcio.js needed): one cut short is an error naming the file
# and the offset, the run goes on (exit 0, as for any damaged record); one of another media
# type is passed, saying which
python3 - "$WW" <<'PY'
import sys
d = sys.argv[1]
body = b"<html><head><title>r</title></head><body><p>a page archived as a resource record</p></body></html>\n"
def rec(ct, b):
    return (b"WARC/1.1\r\nWARC-Type: resource\r\nWARC-Target-URI: http://example.test/r.html\r\n"
            b"WARC-Date: 2026-11-01T12:00:00Z\r\nWARC-Record-ID: <urn:uuid:0b5e6a8e-7e1f-4a36-9d5c-2f9f0e8a1c11>\r\n"
            b"Content-Type: " + ct + b"\r\nContent-Length: " + str(len(b)).encode() + b"\r\n\r\n" + b + b"\r\n\r\n")
open(d + "/cut.warc", "wb").write(rec(b"text/html", body)[:250])
open(d + "/png.warc", "wb").write(rec(b"image/png", body))
PY
expect_status 0 "dedup of a resource record cut short" -- "$SIMCRAWL" dedup --log - "$WW/cut.warc"
expect_grep '"type":"resource","file":"[^"]*cut.warc","offset":0,"decision":"error","error":"record at offset 0 is truncated' \
    "$TMP/out" "a resource record cut short is an error at its offset"
expect_grep "cut.warc: offset 0: record at offset 0 is truncated" "$TMP/err" "and said on stderr"
expect_status 0 "dedup of an image resource record" -- "$SIMCRAWL" dedup --log - "$WW/png.warc"
expect_grep '"decision":"passed","reason":"resource not html (image/png)"' "$TMP/out" \
    "a resource record of another media type is passed"
