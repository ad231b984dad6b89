#!/usr/bin/env python3
"""A generated site on 127.0.0.1 for the crawl kill tests (tests/cli/crawl_kill.sh,
tests/stress/crawl_kill_campaign.py) and the crawl benchmark: PAGES pages /p/N.html, the
same bytes for the same N on every run (stable links, planted duplicates), and a log of
every request, one "PATH" line each, written before the answer.

    site_server.py --pages 3000 --log requests.log --port-file port [--bench]
    site_server.py --pages 300000 --bench --write DIR   (the files, for nginx)
--fanout F: page N links F*N+1..F*N+F and nothing else (the frontier grows F-fold per
   page fetched: the memory benchmark).

Page N links its children 3N+1..3N+3 and, when page N+1 is a planted duplicate (whose links
a crawler does not follow), that page's children too: a tree where every page is reached,
and no chain of links reaches a page before its level does, so a crawl that runs ahead of
its decisions still meets the pages level by level; page 0 also links /private/N (robots.txt disallows /private/) and
/gone (404). Every 10th page (N % 10 == 9) is a near-duplicate of page N // 20 (its heading and
text, with links of its own: within k of it, never of another copy only; that page is two levels shallower, so crawled long before), every 50th
(N % 50 == 25) an exact duplicate of page N // 50's bytes (a revisit record); the
original is the page below when that one is itself a duplicate, so that which page of a
pair is kept never depends on the order of two fetches in flight together. The port is written to
--port-file once the server listens (a random free port).
--bench: each page also links N+1, N/2 and 8 pages of the next level down a second time,
   and pages are shorter (a frontier that grows faster than it drains, as on a real site).
"""
import argparse
import http.server
import os
import random
import socketserver
import sys
import threading
import time

WORDS = ["%s%s" % (a, b) for a in ("ka ko ri mu sa te no ha ya lo be di fu gi "
                                     "jo ne pu qi va wo xe zu").split()
         for b in ("rin tal mos ven dur pok lis gam sor fet nib hux").split()]


def body_words(n, count):
    r = random.Random(n * 7919 + 17)
    return [r.choice(WORDS) + str(r.randrange(400)) for _ in range(count)]


def is_duplicate(n):
    """planted: a near-duplicate (n % 10 == 9) or an exact one (n % 50 == 25)"""
    return n % 10 == 9 or n % 50 == 25


def original(m):
    """the page a planted duplicate copies: one that is itself no duplicate"""
    while is_duplicate(m):
        m -= 1
    return m


class Site:
    def __init__(self, pages, bench, fanout=0):
        self.pages = pages
        self.bench = bench
        self.fanout = fanout
        self.cache = {}

    def text(self, n):
        """the main text of page n (before duplicates are planted)"""
        words = body_words(n, 60 if self.bench else 180)
        paras = [" ".join(words[i:i + 30]) for i in range(0, len(words), 30)]
        return "".join("<p>%s.</p>" % p for p in paras)

    def page(self, n):
        if n in self.cache:
            return self.cache[n]
        if n % 50 == 25:
            b = self.page(original(n // 50))  # exact duplicate: the same bytes
            self.cache[n] = b
            return b
        title = n
        if n % 10 == 9:  # near-duplicate: the main text and heading of the original
            title = original(n // 20)
            main = self.text(title)
        else:
            main = self.text(n)
        if self.fanout:  # wide: links to fanout pages each, most of them never fetched
            nav = " ".join('<a href="/p/%d.html">%d</a>' % (self.fanout * n + 1 + k, k)
                           for k in range(self.fanout))
            return ("<html><head><title>Page %d</title></head><body><h1>Page %d</h1>%s"
                    "<p>%s</p></body></html>\n" % (n, n, self.text(n), nav)).encode()
        links = [c for c in (3 * n + 1, 3 * n + 2, 3 * n + 3) if c < self.pages]
        if n + 1 < self.pages and is_duplicate(n + 1) and not is_duplicate(n):
            # a duplicate's links are not followed: its children hang on its sibling too
            links += [c for c in (3 * n + 4, 3 * n + 5, 3 * n + 6) if c < self.pages]
        if self.bench:
            links += [c for c in (n + 1, n // 2) if c < self.pages]
            links += [(3 * n + 4 + k) % self.pages for k in range(8)]
        extra = ""
        if n == 0:
            extra = ('<a href="/private/1.html">p1</a> <a href="/private/2.html">p2</a> '
                     '<a href="/gone">gone</a>')
        nav = " ".join('<a href="/p/%d.html">page %d</a>' % (c, c) for c in links)
        html = ("<html><head><title>Page %d</title></head><body><h1>Page %d</h1>%s"
                "<ul><li>%s</li></ul>%s</body></html>\n" % (title, title, main, nav, extra))
        b = html.encode()
        if len(self.cache) < 100000 and not self.bench:
            self.cache[n] = b
        return b


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--pages", type=int, default=3000)
    ap.add_argument("--log")
    ap.add_argument("--port-file")
    ap.add_argument("--crawl-delay", type=float, default=0, metavar="S",
                    help="robots.txt asks for Crawl-delay: S (served only, not --write)")
    ap.add_argument("--times-log", metavar="FILE",
                    help="also log each request as 'WALLCLOCK PATH' (seconds, when it was "
                         "read; crawl_kill.py compares them with the crawl's commits)")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--write", metavar="DIR", help="write the site's files to DIR and exit")
    ap.add_argument("--fanout", type=int, default=0,
                    help="page N links pages F*N+1..F*N+F only (a frontier that outgrows "
                         "the crawl: the memory benchmark)")
    ap.add_argument("--conns-file", metavar="FILE",
                    help="keep in FILE the number of connections open now (crawl_kill.py "
                         "waits for 0 after a kill: a request the killed crawler sent can be "
                         "read, and logged, after the kill)")
    ap.add_argument("--slow-connections", type=float, default=0, metavar="S",
                    help="the 2nd to 4th connections wait S seconds before their first "
                         "request is read (what a loaded machine does to a crawl: one "
                         "connection runs ahead down one branch; crawl_kill.py)")
    a = ap.parse_args()
    site = Site(a.pages, a.bench, a.fanout)
    if a.write:  # the same bytes as files, for nginx (tests/bench/bench_state.sh)
        os.makedirs(os.path.join(a.write, "p"), exist_ok=True)
        with open(os.path.join(a.write, "robots.txt"), "w") as f:
            f.write("User-agent: *\nDisallow: /private/\n")
        for n in range(a.pages):
            with open(os.path.join(a.write, "p", "%d.html" % n), "wb") as f:
                f.write(site.page(n))
        return 0
    if not a.log or not a.port_file:
        ap.error("--log and --port-file are needed to serve")
    log = open(a.log, "a", buffering=1)
    tlog = open(a.times_log, "a", buffering=1) if a.times_log else None
    lock = threading.Lock()
    conns = [0]  # connections taken so far
    open_conns = [0]  # connections open now (--conns-file)

    def write_conns():  # under lock
        if a.conns_file:
            with open(a.conns_file + ".tmp", "w") as f:
                f.write("%d\n" % open_conns[0])
            os.replace(a.conns_file + ".tmp", a.conns_file)

    class H(http.server.BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"
        disable_nagle_algorithm = True

        def log_message(self, *args):
            pass

        def send(self, code, body, ctype="text/html; charset=utf-8"):
            self.send_response(code)
            self.send_header("Content-Type", ctype)
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def setup(self):
            super().setup()
            # --slow-connections: connections 2 to 4 are taken late (a loaded machine)
            with lock:
                conns[0] += 1
                n = conns[0]
                open_conns[0] += 1
                write_conns()
            if a.slow_connections > 0 and 2 <= n <= 4:
                time.sleep(a.slow_connections)

        def finish(self):
            try:
                super().finish()
            finally:
                with lock:
                    open_conns[0] -= 1
                    write_conns()

        def do_GET(self):
            with lock:
                log.write(self.path + "\n")
                if tlog:
                    tlog.write("%.6f %s\n" % (time.time(), self.path))
            p = self.path
            if p == "/robots.txt":
                robots = "User-agent: *\nDisallow: /private/\n"
                if a.crawl_delay > 0:
                    robots += "Crawl-delay: %g\n" % a.crawl_delay
                return self.send(200, robots.encode(), "text/plain")
            if p.startswith("/p/") and p.endswith(".html"):
                try:
                    n = int(p[3:-5])
                except ValueError:
                    n = -1
                if 0 <= n < site.pages:
                    return self.send(200, site.page(n))
            return self.send(404, b"<html><body>not here</body></html>")

    class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
        daemon_threads = True
        allow_reuse_address = True
        request_queue_size = 128

        def handle_error(self, request, client_address):
            pass  # a crawler killed mid-transfer resets its connections: not news

    srv = S(("127.0.0.1", 0), H)
    tmp = a.port_file + ".tmp"
    with open(tmp, "w") as f:
        f.write(str(srv.server_address[1]))
    os.rename(tmp, a.port_file)
    try:
        srv.serve_forever()
    except KeyboardInterrupt:
        pass
    return 0


if __name__ == "__main__":
    sys.exit(main())
