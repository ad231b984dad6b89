#!/usr/bin/env python3
"""Tools for the kill tests of the index + digests pair (issue 12 item 3).

  pairkit.py warc OUT PREFIX FROM TO [COPY_PREFIX COPY_FROM COPY_TO]
      writes a plain WARC of response records: pages FROM..TO-1 at
      http://example.com/PREFIX/N (page N's text depends on N only), then exact copies of
      pages COPY_FROM..COPY_TO-1 (the same payload) at http://example.com/COPY_PREFIX/N.
  pairkit.py check INDEX [PREFIX...]
      the strict pair check, from the files' bytes (docs/INDEX-FORMAT.md, not simcrawl's
      code): INDEX is format version 5, INDEX.digests format 2; both carry the same
      generation; every digest's URI is an index document and every index document has a
      digest (an index written only by dedup); no digest line is of a later generation; no
      temporary file (INDEX.tmp.*, INDEX.digests.tmp*) is left. For each PREFIX, prints
      "PREFIX all", "PREFIX none" or "PREFIX partial K/N" (documents under
      http://example.com/PREFIX/ in the index, of the digests' pages with that prefix or
      the index's). Prints "ok documents=D generation=G" and exits 0, or the faults on
      stderr and exits 1.
"""
import base64
import hashlib
import os
import random
import struct
import sys

WORDS = ("alpha bravo charlie delta echo foxtrot golf hotel india juliet kilo lima mike "
         "november oscar papa quebec romeo sierra tango uniform victor whiskey xray yankee "
         "zulu river stone cloud forest harbor lamp").split()


def page(n):
    r = random.Random(n * 7919 + 17)
    text = " ".join(r.choice(WORDS) + str(r.randrange(10000)) for _ in range(220))
    html = "<html><head><title>page %d</title></head><body><p>%s</p></body></html>" % (n, text)
    return ("HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n\r\n%s"
            % (len(html), html)).encode()


def record(uri, body, rid):
    dig = "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()
    h = ("WARC/1.1\r\nWARC-Type: response\r\n"
         "WARC-Record-ID: <urn:uuid:%s>\r\n"
         "WARC-Date: 2024-01-01T00:00:00Z\r\nWARC-Target-URI: %s\r\n"
         "Content-Type: application/http; msgtype=response\r\nWARC-Block-Digest: %s\r\n"
         "Content-Length: %d\r\n\r\n" % (rid, uri, dig, len(body))).encode()
    return h + body + b"\r\n\r\n"


def rid(prefix, n):
    h = hashlib.sha1(("%s/%d" % (prefix, n)).encode()).hexdigest()
    return "%s-%s-4%s-8%s-%s" % (h[:8], h[8:12], h[12:15], h[15:18], h[18:30])


def cmd_warc(a):
    out, prefix, lo, hi = a[0], a[1], int(a[2]), int(a[3])
    with open(out, "wb") as f:
        for n in range(lo, hi):
            f.write(record("http://example.com/%s/%d" % (prefix, n), page(n), rid(prefix, n)))
        if len(a) >= 7:
            cp, clo, chi = a[4], int(a[5]), int(a[6])
            for n in range(clo, chi):
                f.write(record("http://example.com/%s/%d" % (cp, n), page(n), rid(cp, n)))
    return 0


def read_index(path):
    b = open(path, "rb").read()
    if b[:8] != b"SIMCRIDX":
        raise ValueError("not an index file")
    version, = struct.unpack_from("<I", b, 8)
    if version != 5:
        raise ValueError("format version %d, want 5" % version)
    docs, = struct.unpack_from("<Q", b, 40)
    id_bytes, = struct.unpack_from("<Q", b, 56)
    size, = struct.unpack_from("<Q", b, 64)
    gen, = struct.unpack_from("<Q", b, 96)
    if size != len(b):
        raise ValueError("size field %d, file %d bytes" % (size, len(b)))
    align = lambda x: (x + 7) & ~7
    o = 128 + docs * 8
    o = align(o + docs * 4)
    offs = struct.unpack_from("<%dQ" % (docs + 1), b, o)
    ids = o + (docs + 1) * 8
    if offs[docs] != id_bytes:
        raise ValueError("id offsets")
    return gen, [b[ids + offs[i]:ids + offs[i + 1] - 1].decode() for i in range(docs)]


def read_digests(path):
    lines = open(path, encoding="utf-8").read().split("\n")
    if lines[0] != "# simcrawl dedup digests 2":
        raise ValueError("first line %r" % lines[0][:40])
    gen, docs, uris, gens = None, None, [], []
    for ln in lines[1:]:
        if not ln:
            continue
        if ln.startswith("# generation "):
            gen = int(ln.split()[2])
        elif ln.startswith("# index-documents "):
            docs = int(ln.split()[2])
        elif ln.startswith("#"):
            raise ValueError("header line %r" % ln)
        else:
            f = ln.split("\t")
            if len(f) != 6:
                raise ValueError("line with %d fields" % len(f))
            uris.append(f[4])
            gens.append(int(f[5]))
    return gen, docs, uris, gens


def cmd_check(a):
    path, prefixes = a[0], a[1:]
    faults = []
    try:
        igen, ids = read_index(path)
        dgen, ddocs, uris, gens = read_digests(path + ".digests")
    except (OSError, ValueError, struct.error) as e:
        print("pair check: %s" % e, file=sys.stderr)
        return 1
    if igen != dgen:
        faults.append("generation: index %d, digests %s" % (igen, dgen))
    if ddocs != len(ids):
        faults.append("index-documents %s, the index holds %d" % (ddocs, len(ids)))
    later = sum(1 for g in gens if g > dgen)
    if later:
        faults.append("%d digest lines of a later generation than %s" % (later, dgen))
    si, su = set(ids), set(uris)
    if len(si) != len(ids) or len(su) != len(uris):
        faults.append("repeated ids (%d of %d) or digest URIs (%d of %d)"
                      % (len(si), len(ids), len(su), len(uris)))
    for what, s in (("digests without a document", su - si),
                    ("documents without a digest", si - su)):
        if s:
            faults.append("%d %s, e.g. %s" % (len(s), what, sorted(s)[0]))
    d = os.path.dirname(path) or "."
    base = os.path.basename(path)
    for name in os.listdir(d):
        if name.startswith(base + ".tmp") or name.startswith(base + ".digests.tmp"):
            faults.append("temporary file left: %s" % name)
    for p in prefixes:
        pre = "http://example.com/%s/" % p
        have = sum(1 for i in ids if i.startswith(pre))
        seen = len({u for u in list(si | su) if u.startswith(pre)})
        if have == 0:
            print("%s none" % p)
        elif have == seen and have == int(os.environ.get("PAIRKIT_BATCH", have)):
            print("%s all" % p)
        else:
            print("%s partial %d/%s" % (p, have, os.environ.get("PAIRKIT_BATCH", seen)))
    for f in faults:
        print("pair check: %s: %s" % (path, f), file=sys.stderr)
    if not faults:
        print("ok documents=%d generation=%d" % (len(ids), igen))
    return 1 if faults else 0


if __name__ == "__main__":
    if len(sys.argv) < 3 or sys.argv[1] not in ("warc", "check"):
        print(__doc__, file=sys.stderr)
        sys.exit(2)
    sys.exit({"warc": cmd_warc, "check": cmd_check}[sys.argv[1]](sys.argv[2:]))
