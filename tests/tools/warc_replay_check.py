#!/usr/bin/env python3
"""The replay check of a crawl's WARC (tests/cli/crawl_requisites.sh): reads the WARC as a
replay tool's index would (pywb, ReplayWeb.page: URI -> response, revisits resolved through
WARC-Refers-To-Target-URI), and for every archived HTML page finds its requisites with an
implementation of its own (html.parser, a CSS regex: not simcrawl's) and checks that each
one replays: a response record with its URI, or a revisit whose original is one; that
every payload is archived in one response record only (a copy is a revisit); and that each
response's Content-Type is the one its file name gives. Prints what fails; exit 1 if any.

    warc_replay_check.py CRAWL.warc.gz
"""
import gzip
import hashlib
import base64
import mimetypes
import re
import sys
from html.parser import HTMLParser
from urllib.parse import urljoin, urldefrag


def records(path):
    data = gzip.open(path).read() if path.endswith(".gz") else open(path, "rb").read()
    i = 0
    while i < len(data):
        end = data.index(b"\r\n\r\n", i)
        head = data[i:end].decode("utf-8", "replace").split("\r\n")
        fields = {}
        for line in head[1:]:
            k, _, v = line.partition(":")
            fields[k.strip().lower()] = v.strip()
        n = int(fields["content-length"])
        block = data[end + 4:end + 4 + n]
        yield fields, block
        i = end + 4 + n + 4


def http_split(block):
    head, _, body = block.partition(b"\r\n\r\n")
    lines = head.decode("latin-1").split("\r\n")
    hdr = {}
    for line in lines[1:]:
        k, _, v = line.partition(":")
        hdr[k.strip().lower()] = v.strip()
    return lines[0], hdr, body


class Requisites(HTMLParser):
    def __init__(self, base):
        super().__init__()
        self.base, self.urls, self.in_style = base, [], False

    def add(self, u):
        u = u.strip()
        if u and not u.startswith(("data:", "#", "javascript:")):
            self.urls.append(urldefrag(urljoin(self.base, u))[0])

    def css(self, text):
        for m in re.finditer(r'url\(\s*["\']?([^"\')]+)["\']?\s*\)|@import\s+["\']([^"\']+)["\']', re.sub(r"/\*.*?\*/", "", text, flags=re.S)):
            self.add(m.group(1) or m.group(2))

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if tag == "base" and a.get("href"):
            self.base = urljoin(self.base, a["href"])
        if tag in ("img", "source", "script", "embed", "audio", "video", "track") and a.get("src"):
            self.add(a["src"])
        if tag in ("img", "source") and a.get("srcset"):
            for cand in a["srcset"].split(","):
                if cand.strip():
                    self.add(cand.split()[0])
        if tag == "video" and a.get("poster"):
            self.add(a["poster"])
        if tag == "link" and a.get("href") and set((a.get("rel") or "").lower().split()) & {
                "stylesheet", "icon", "apple-touch-icon", "preload", "modulepreload"}:
            self.add(a["href"])
        if tag == "style":
            self.in_style = True
        if a.get("style"):
            self.css(a["style"])

    def handle_endtag(self, tag):
        if tag == "style":
            self.in_style = False

    def handle_data(self, data):
        if self.in_style:
            self.css(data)


def main():
    responses, revisits, payloads, errors = {}, {}, {}, []
    for f, block in records(sys.argv[1]):
        uri = f.get("warc-target-uri", "").strip("<>")
        if f.get("warc-type") == "response":
            status, hdr, body = http_split(block)
            responses[uri] = (hdr, body)
            digest = "sha1:" + base64.b32encode(hashlib.sha1(body).digest()).decode()
            if f.get("warc-payload-digest") != digest:
                errors.append("%s: payload digest %s, computed %s" % (uri, f.get("warc-payload-digest"), digest))
            payloads.setdefault(digest, []).append(uri)
        elif f.get("warc-type") == "revisit":
            revisits[uri] = f.get("warc-refers-to-target-uri", "").strip("<>")
    def replays(u):
        return u in responses or revisits.get(u) in responses
    pages = checked = 0
    for uri, (hdr, body) in responses.items():
        ct = hdr.get("content-type", "")
        want = mimetypes.guess_type(urldefrag(uri)[0].split("?")[0])[0]
        if want and not ct.startswith(want) and not (want == "text/html" and ct.startswith("text/html")):
            errors.append("%s: Content-Type %r, want %r" % (uri, ct, want))
        if ct.startswith("text/css"):
            p = Requisites(uri)
            p.css(body.decode("utf-8", "replace"))
        elif ct.startswith("text/html"):
            pages += 1
            p = Requisites(uri)
            p.feed(body.decode("utf-8", "replace"))
        else:
            continue
        for u in p.urls:
            checked += 1
            if not replays(u):
                errors.append("%s: requisite %s does not replay" % (uri, u))
    for d, uris in payloads.items():
        if len(uris) > 1:
            errors.append("payload %s archived %d times: %s" % (d, len(uris), uris))
    for u, orig in revisits.items():
        if orig not in responses:
            errors.append("revisit %s refers to %s, not archived" % (u, orig))
    print("\n".join(errors) if errors else "replay ok: %d pages, %d requisites, %d responses, %d revisits"
          % (pages, checked, len(responses), len(revisits)))
    return 1 if errors else 0


if __name__ == "__main__":
    sys.exit(main())
