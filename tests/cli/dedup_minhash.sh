# simcrawl dedup --method minhash --index FILE (issue 16): FILE is a minhash index
# (SIMCRMHX, docs/MINHASH.md) and FILE.digests the kept pages' payload digests, one pair
# with one generation as for the simhash (cmd_dedup.c, "HOW IT WORKS"): a second run over
# a second archive finds the near- and exact duplicates of the first; the other method's
# index is an error naming it; digests one save ahead or lost are repaired as for the
# simhash. WARCs written here (uncompressed response records). Sourced by tests/cli_test.sh.
DM=$TMP/dedup_minhash
mkdir -p "$DM"
FP=tests/data/fingerprint
python3 - "$DM" "$FP" tests/data/extract <<'PY'
import sys
d, fp, ex = sys.argv[1:]
def rec(n, uri, path):
    body = open(path, "rb").read()
    http = (b"HTTP/1.1 200 OK\r\nContent-Type: text/html; charset=utf-8\r\n"
            b"Content-Length: %d\r\n\r\n" % len(body)) + body
    head = ("WARC/1.0\r\nWARC-Type: response\r\nWARC-Target-URI: %s\r\n"
            "WARC-Date: 2026-11-26T00:00:0%dZ\r\n"
            "WARC-Record-ID: <urn:uuid:00000000-0000-4000-8000-%012d>\r\n"
            "Content-Type: application/http;msgtype=response\r\nContent-Length: %d\r\n\r\n"
            % (uri, n, n, len(http))).encode()
    return head + http + b"\r\n\r\n"
archives = {"one.warc": [("http://x.test/a", fp + "/page1.html"), ("http://x.test/o", fp + "/other.html")],
            "two.warc": [("http://y.test/b", fp + "/page1-edit.html"), ("http://y.test/c", fp + "/page1.html"),
                         ("http://y.test/d", ex + "/001.html")],
            "three.warc": [("http://z.test/e", ex + "/002.html"), ("http://z.test/f", fp + "/other.html")]}
n = 0
for name, recs in archives.items():
    with open("%s/%s" % (d, name), "wb") as f:
        for uri, path in recs:
            n += 1
            f.write(rec(n, uri, path))
PY
expect_status 0 "dedup minhash --index, first archive" -- "$SIMCRAWL" dedup --method minhash \
    --index "$DM/m.idx" --log "$DM/one.jsonl" "$DM/one.warc"
expect_grep "2 new, 0 near-duplicate" "$TMP/err" "first archive: both pages new"
expect_status 0 "index stats of dedup's minhash index" -- "$SIMCRAWL" index stats "$DM/m.idx"
expect_grep "^method: minhash" "$TMP/out" "dedup saved a minhash index"
expect_grep "^documents: 2$" "$TMP/out" "with the first archive's pages"
expect_grep "^# generation 1$" "$DM/m.idx.digests" "the digests carry the pair's generation"
expect_status 0 "dedup minhash --index, second archive" -- "$SIMCRAWL" dedup --method minhash \
    --index "$DM/m.idx" --log "$DM/two.jsonl" --warc-out "$DM/two-out.warc.gz" "$DM/two.warc"
expect_grep "1 new, 1 near-duplicate, 1 exact-duplicate" "$TMP/err" "second archive: duplicates of the first found"
expect_grep '"uri":"http://y.test/b".*"decision":"near-duplicate".*"duplicate_of":"http://x.test/a","jaccard":0.9453125' \
    "$DM/two.jsonl" "the edited page is a near-duplicate of the first run's page, with its estimate"
expect_grep '"uri":"http://y.test/c".*"decision":"exact-duplicate".*"duplicate_of":"http://x.test/a"' \
    "$DM/two.jsonl" "the copy is an exact duplicate through FILE.digests"
expect_grep "WARC-Refers-To-Target-URI: http://x.test/a" "$(gzip -dc "$DM/two-out.warc.gz" >"$DM/two-out.warc"; echo "$DM/two-out.warc")" \
    "the revisit record points at the first run's capture"
expect_status 0 "index stats after the second run" -- "$SIMCRAWL" index stats "$DM/m.idx"
expect_grep "^documents: 3$" "$TMP/out" "the second run's new page added"
# a query --method minhash against dedup's index finds the kept page
expect_status 0 "query the dedup index" -- "$SIMCRAWL" query --method minhash --index "$DM/m.idx" "$FP/page1-edit.html"
expect_grep "http://x.test/a" "$TMP/out" "dedup's index answers queries"
# the other method: a clear error either way, nothing written
cp "$DM/m.idx" "$DM/m.idx.before"
expect_status 2 "dedup (simhash) with a minhash index" -- "$SIMCRAWL" dedup --index "$DM/m.idx" "$DM/three.warc"
expect_grep "a minhash index, not a simhash index (use --method minhash)" "$TMP/err" "simhash dedup names the index's method"
cmp -s "$DM/m.idx" "$DM/m.idx.before" && ok || bad "a refused run changed the index"
expect_status 0 "dedup (simhash) --index" -- "$SIMCRAWL" dedup --index "$DM/s.idx" "$DM/one.warc"
expect_status 2 "dedup minhash with a simhash index" -- "$SIMCRAWL" dedup --method minhash --index "$DM/s.idx" "$DM/two.warc"
expect_grep "index $DM/s.idx holds simhash fingerprints (made without --method minhash)" "$TMP/err" \
    "minhash dedup names the simhash index"
# killed between the two renames (the digests saved, the index not): the old index with the
# new digests; the next run drops the killed run's digests and says so
cp "$DM/m.idx" "$DM/m.idx.gen2"
expect_status 0 "dedup minhash --index, third archive" -- "$SIMCRAWL" dedup --method minhash \
    --index "$DM/m.idx" --log "$DM/three.jsonl" "$DM/three.warc"
expect_grep '"uri":"http://z.test/f".*"decision":"exact-duplicate".*"duplicate_of":"http://x.test/o"' \
    "$DM/three.jsonl" "third run: an exact duplicate of the first"
cp "$DM/m.idx.gen2" "$DM/m.idx"
expect_status 0 "dedup minhash --index after a kill between the renames" -- "$SIMCRAWL" dedup \
    --method minhash --index "$DM/m.idx" --log "$DM/three2.jsonl" "$DM/three.warc"
expect_grep "m.idx.digests is newer than $DM/m.idx (generation 3, the index's 2" "$TMP/err" \
    "digests one save ahead are repaired, said"
expect_grep '"uri":"http://z.test/e".*"decision":"new"' "$DM/three2.jsonl" "the killed run's page is new again"
# digests lost: a page whose signature is an index document's is kept in full
rm "$DM/m.idx.digests"
expect_status 0 "dedup minhash --index without its digests" -- "$SIMCRAWL" dedup --method minhash \
    --index "$DM/m.idx" --log "$DM/three3.jsonl" "$DM/three.warc"
expect_grep "the payload digests of documents 0..3 are lost; a page with the signature" "$TMP/err" \
    "lost digests said"
expect_grep '"uri":"http://z.test/f".*"decision":"new".*kept in full' "$DM/three3.jsonl" \
    "a page that may be an exact duplicate is kept in full"
