#!/usr/bin/env python3
"""Several `simcrawl crawl --redis` workers on one crawl, killed with SIGKILL and
restarted, checked against the site (issue 17; tests/cli/crawl_redis.sh runs a short one,
`make stress` the campaign).

Everything on 127.0.0.1: a redis-server of its own (a random free port, a temporary dir,
--save ""; with --redis-restarts, appendonly yes and appendfsync always) and a generated
site of --hosts virtual hosts, one port each (http://127.0.0.1:PORT is an origin of its
own to the crawler: its own queue, politeness and robots.txt), every request logged with
the time it was read. robots.txt asks for Crawl-delay: --crawl-delay. Page N of a host
links pages 2N+1 and 2N+2 of it and, now and then, a page of the next host; a leaf page
of each host has a planted near-duplicate on the next host (the same heading and text,
other bytes), and two of them a byte-for-byte copy there (an exact duplicate: a revisit
record of the other), so which copy is kept depends on which worker fetches first.

With --shards N, the frontier is on N redis-servers behind a nutcracker (twemproxy; its
configuration as tests/tools/redis_shards.py makes it: hash tags "{}", ketama), the
workers' --redis naming the proxy, and the near-duplicate index on a redis-server of its
own reached directly (--redis-index): the same checks. --redis-restarts then restarts the
node holding the frontier's keys.

With --redis-restarts, redis-server is killed with SIGKILL mid-crawl and started again in
place --redis-down seconds later: the workers connect again (crawl --redis-retry) and go
on; with --no-worker-errors, a worker that exits with an error (instead of reconnecting)
is a failure, not restarted.

With --max-pages N, the workers share a page budget of N: the union of the logs is N of
the site's URLs (each once, all fetched), the checks that need the whole site (the planted
duplicates found) left out. With --restart-late, a killed worker is started again only
once the others have exited 0: they must have finished the crawl without it (its leases
reaped, their URLs leased by the others with the budget shares they keep), and its late start,
which cuts its files back to its last commit, makes no request.

Checks, after every worker has exited 0:
  - the union of the logs is the site: every URL once, in one worker's log (with
    --max-pages N: N URLs of the site, each once);
  - the WARCs hold one response record per URL logged new, each URL once in all of them,
    and every revisit record refers to a response record in one of them;
  - per host, from an answer to the next request: --crawl-delay or more, across workers;
  - no two kept pages within k bits; every near-duplicate has a kept page within k whose
    response is in the WARCs (with --max-pages too: a page kept by a killed worker is
    fetched again and archived before the budget is spent);
  - URLs requested more than once are at most the URLs the killed workers held leases of
    (read from Redis right after each kill: transfers in flight and pages decided but not
    yet committed).
Exit 0 when all hold; otherwise the failures on stderr.
"""
import argparse
import ctypes
import gzip
import http.server
import json
import os
import random
import signal
import socket
import socketserver
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import redis_shards  # noqa: E402

WORDS = ["%s%s" % (a, b) for a in "ka ko ri mu sa te no ha ya lo be di fu".split()
         for b in "rin tal mos ven dur pok lis gam sor".split()]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


class Site:
    """hosts x pages, and on each host copies of some leaves of the previous host"""

    def __init__(self, hosts, pages):
        self.hosts, self.pages = hosts, pages
        self.ports = []

    def text(self, h, n):
        r = random.Random(h * 100003 + n * 7919 + 17)
        words = [r.choice(WORDS) + str(r.randrange(500)) for _ in range(150)]
        return "".join("<p>%s.</p>" % " ".join(words[i:i + 30]) for i in range(0, 150, 30))

    def exact_of(self, h):
        """leaves of host h (not near-duplicated) copied byte for byte, as /e/N.html, on
        host h+1"""
        first_leaf = self.pages // 2
        return [n for n in range(first_leaf, self.pages) if n % 4 == 3][:2]

    def dup_of(self, h):
        """the leaves of host h copied, as /d/N.html, on host h+1"""
        first_leaf = self.pages // 2
        return [n for n in range(first_leaf, self.pages) if n % 4 == 1]

    def urls(self):
        out = set()
        for h, port in enumerate(self.ports):
            for n in range(self.pages):
                out.add("http://127.0.0.1:%d/p/%d.html" % (port, n))
            prev = (h - 1) % self.hosts
            for n in self.dup_of(prev):
                out.add("http://127.0.0.1:%d/d/%d.html" % (port, n))
            for n in self.exact_of(prev):
                out.add("http://127.0.0.1:%d/e/%d.html" % (port, n))
        return out

    def page(self, h, path):
        port = self.ports
        if path.startswith("/p/") and path.endswith(".html"):
            n = int(path[3:-5])
            if not 0 <= n < self.pages:
                return None
            links = ['<a href="/p/%d.html">page %d</a>' % (c, c)
                     for c in (2 * n + 1, 2 * n + 2) if c < self.pages]
            nxt = (h + 1) % self.hosts
            if n % 5 == 2:  # a link to the next host
                links.append('<a href="http://127.0.0.1:%d/p/%d.html">there</a>'
                             % (port[nxt], n))
            if n == 0:  # the copies hang on the root, which is never a duplicate
                links += ['<a href="/d/%d.html">copy</a>' % m
                          for m in self.dup_of((h - 1) % self.hosts)]
                links += ['<a href="/e/%d.html">exact copy</a>' % m
                          for m in self.exact_of((h - 1) % self.hosts)]
            return ("<html><head><title>Host %d page %d</title></head><body><h1>Host %d "
                    "page %d</h1>%s<ul><li>%s</li></ul></body></html>\n"
                    % (h, n, h, n, self.text(h, n), "</li><li>".join(links))).encode()
        if path.startswith("/e/") and path.endswith(".html"):
            n = int(path[3:-5])
            prev = (h - 1) % self.hosts
            if n not in self.exact_of(prev) or prev == h:
                return None
            return self.page(prev, "/p/%d.html" % n)  # the same bytes: an exact duplicate
        if path.startswith("/d/") and path.endswith(".html"):
            n = int(path[3:-5])
            prev = (h - 1) % self.hosts
            if n not in self.dup_of(prev):
                return None
            # the previous host's leaf n: its heading and text, other bytes around them
            return ("<html><head><title>A copy</title></head><body><h1>Host %d page %d</h1>"
                    "%s<p class=footer>copied here</p></body></html>\n"
                    % (prev, n, self.text(prev, n))).encode()
        return None


def serve(site, delay, log, lock, disallow=None, accept=None):
    """site's hosts on ports of their own; robots.txt asks for Crawl-delay delay (and
    disallows the path prefix disallow); every request logged in log. accept(port, ports
    taken): whether a port the kernel gave is taken (else another is asked for)"""
    servers = []
    h = 0
    while h < site.hosts:
        class H(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"
            host = h

            def log_message(self, *args):
                pass

            def do_GET(self):
                entry = [self.host, time.time(), self.path, self.client_address[1], None]
                with lock:
                    log.append(entry)
                if self.path == "/robots.txt":
                    body = ("User-agent: *\n%sCrawl-delay: %g\n"
                            % ("Disallow: %s\n" % disallow if disallow else "", delay)).encode()
                    ctype = "text/plain"
                else:
                    body = site.page(self.host, self.path)
                    ctype = "text/html; charset=utf-8"
                if body is None:
                    self.send_response(404)
                    body = b"not here"
                else:
                    self.send_response(200)
                self.send_header("Content-Type", ctype)
                self.send_header("Content-Length", str(len(body)))
                entry[4] = time.time()  # the answer leaves after this
                self.end_headers()
                self.wfile.write(body)

        class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
            daemon_threads = True
            allow_reuse_address = True

            def handle_error(self, request, client_address):
                pass

        srv = S(("127.0.0.1", 0), H)
        if accept and not accept(srv.server_address[1], site.ports):
            srv.server_close()
            continue
        site.ports.append(srv.server_address[1])
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        h += 1
    return servers


def xxh3(text):
    """XXH3_64bits of text (libxxhash, as redis_frontier.c hashes)"""
    lib = ctypes.CDLL("libxxhash.so.0")
    lib.XXH3_64bits.restype = ctypes.c_uint64
    lib.XXH3_64bits.argtypes = [ctypes.c_char_p, ctypes.c_size_t]
    b = text.encode()
    return lib.XXH3_64bits(b, len(b))


def shard_of(origin, shards):
    """a host's frontier shard: XXH3 of its origin modulo the shard count"""
    return xxh3(origin) % shards if shards > 1 else 0


def shard_tag(b, shards):
    """shard b's hash tag (redis_frontier.c's layout())"""
    return "f0" if shards == 1 else "f%d.%08x" % (b, xxh3("f%d" % b) & 0xffffffff)


def covering(node_of_tag, shards, hosts):
    """accept() for serve(): ports whose hosts' shards put frontier keys on every node
    (a port is refused only while more nodes are left without a host than hosts to come)"""
    nodes = set(n for n in node_of_tag if n is not None)

    def accept(port, taken):
        covered = set(node_of_tag[shard_of("http://127.0.0.1:%d" % p, shards)] for p in taken)
        mine = node_of_tag[shard_of("http://127.0.0.1:%d" % port, shards)]
        left = nodes - covered
        return mine in left or hosts - len(taken) > len(left)
    return accept


def start_redis(d, port, durable):
    args = ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
            "--dir", d, "--logfile", os.path.join(d, "redis.log")]
    if durable:
        args += ["--appendonly", "yes", "--appendfsync", "always"]
    p = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return p
        except OSError:
            time.sleep(0.02)
    p.kill()
    sys.exit("redis-server did not start on port %d" % port)


def leased(port, worker, shards):
    """how many URLs worker holds the lease of (its lease sets in Redis, one a shard); 4,
    a worker's transfers, when Redis does not answer (restarted just then)"""
    try:
        cmds = "".join("SCARD simcrawl{%s}:wl:%s\n" % (shard_tag(b, shards), worker)
                       for b in range(shards))
        out = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port)], input=cmds,
                             capture_output=True, text=True, timeout=5).stdout.split()
        if len(out) != shards:
            return 4
        return sum(int(x) for x in out)
    except (OSError, ValueError, subprocess.TimeoutExpired):
        return 4


def clients(port):
    """connections redis-server at port has (the asking redis-cli's included); 0 when it
    does not answer"""
    try:
        out = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port), "INFO",
                              "clients"], capture_output=True, text=True, timeout=5).stdout
        return int(out.split("connected_clients:")[1].split()[0])
    except (OSError, IndexError, ValueError, subprocess.TimeoutExpired):
        return 0


def warc_fields(path):
    """the header fields (lower-case names) of each record of a .warc.gz (one gzip member
    per record)"""
    out = []
    with gzip.open(path, "rb") as f:
        data = f.read()
    pos = 0
    while pos < len(data):
        end = data.index(b"\r\n\r\n", pos)
        fields = {}
        for line in data[pos:end].decode("utf-8", "replace").split("\r\n")[1:]:
            k, _, v = line.partition(":")
            fields[k.strip().lower()] = v.strip()
        out.append(fields)
        pos = end + 4 + int(fields["content-length"]) + 4
    return out


def hamming(a, b):
    return bin(a ^ b).count("1")


def crawl_args(hosts, pages, crawl_delay, timeout):
    """The options every shared-crawl check takes (this file's and crawl_redis_same.py's),
    with each check's defaults for the site's size, its Crawl-delay and the time limit."""
    ap = argparse.ArgumentParser()
    ap.add_argument("--simcrawl", default="./simcrawl")
    ap.add_argument("--dir", required=True)
    ap.add_argument("--workers", type=int, default=3)
    ap.add_argument("--hosts", type=int, default=hosts)
    ap.add_argument("--pages", type=int, default=pages)
    ap.add_argument("--crawl-delay", type=float, default=crawl_delay)
    ap.add_argument("--timeout", type=float, default=timeout)
    return ap


def main():
    ap = crawl_args(hosts=6, pages=24, crawl_delay=0.1, timeout=120)
    ap.add_argument("--kills", type=int, default=1)
    ap.add_argument("--redis-restarts", type=int, default=0)
    ap.add_argument("--shards", type=int, default=0,
                    help="the frontier on this many redis-servers behind nutcracker, the "
                         "index on a redis-server of its own (0: all on one redis-server)")
    ap.add_argument("--redis-down", type=float, default=0.5,
                    help="seconds redis-server stays down at a restart")
    ap.add_argument("--no-worker-errors", action="store_true",
                    help="a worker that exits with an error fails the run (not restarted)")
    ap.add_argument("--lease-time", type=float, default=3)
    ap.add_argument("--frontier-shards", type=int, default=0,
                    help="the workers' --frontier-shards (0: 16 with --shards, else 1)")
    ap.add_argument("--max-pages", type=int, default=0,
                    help="the workers' --max-pages: the crawl's page budget, shared")
    ap.add_argument("--restart-late", action="store_true",
                    help="a killed worker started again only after the others exited 0")
    ap.add_argument("--k", type=int, default=3)
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--write", action="store_true",
                    help="write the site's files to DIR/hN/ for the hosts served on --ports "
                         "(nginx: tests/bench/bench_redis.sh) and exit; no Crawl-delay")
    ap.add_argument("--ports", help="with --write: the hosts' ports, comma separated")
    a = ap.parse_args()
    if not a.frontier_shards:
        a.frontier_shards = 16 if a.shards else 1
    rnd = random.Random(a.seed)
    os.makedirs(a.dir, exist_ok=True)
    site = Site(a.hosts, a.pages)
    if a.write:
        site.ports = [int(p) for p in a.ports.split(",")]
        site.hosts = a.hosts = len(site.ports)
        for h in range(a.hosts):
            for sub in ("p", "d", "e"):
                os.makedirs(os.path.join(a.dir, "h%d" % h, sub), exist_ok=True)
            with open(os.path.join(a.dir, "h%d" % h, "robots.txt"), "w") as f:
                f.write("User-agent: *\nDisallow: /private/\n")
        for u in site.urls():
            port, path = u[len("http://127.0.0.1:"):].split("/", 1)
            h = site.ports.index(int(port))
            with open(os.path.join(a.dir, "h%d" % h, path), "wb") as f:
                f.write(site.page(h, "/" + path))
        return 0
    log, lock = [], threading.Lock()
    rport = free_port()
    redis = start_redis(a.dir, rport, a.redis_restarts > 0)
    shards = None
    fport = rport  # the frontier's: the proxy with --shards
    accept = None
    if a.shards:
        try:
            shards = redis_shards.Shards(a.shards, a.dir, durable=a.redis_restarts > 0)
            # the hosts chosen so that the frontier is on every node (checked at the end)
            tags = shards.tag_nodes([shard_tag(b, a.frontier_shards)
                                     for b in range(a.frontier_shards)])
            accept = covering(tags, a.frontier_shards, a.hosts)
        except BaseException:
            redis.kill()
            if shards:
                shards.stop()
            raise
        fport = shards.proxy
    servers = serve(site, a.crawl_delay, log, lock, accept=accept)
    seeds = ["http://127.0.0.1:%d/p/0.html" % p for p in site.ports]
    fails = []

    def start(w):
        cmd = [a.simcrawl, "crawl", "--quiet", "--redis", "redis://127.0.0.1:%d" % fport,
               "--worker-name", "w%d" % w, "--warc", os.path.join(a.dir, "out.warc.gz"),
               "--log", os.path.join(a.dir, "out.jsonl"), "--delay", "0", "--k", str(a.k),
               "--lease-time", str(a.lease_time), "--concurrency", "4",
               "--frontier-shards", str(a.frontier_shards)] + seeds
        if shards:
            cmd[5:5] = ["--redis-index", "redis://127.0.0.1:%d" % rport]
        if a.max_pages:
            cmd[5:5] = ["--max-pages", str(a.max_pages)]
        err = open(os.path.join(a.dir, "w%d.err" % w), "a")
        return subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)

    procs = {w: start(w) for w in range(a.workers)}
    kills = restarts = redis_restarts = 0
    kill_times = []
    late, late_at = set(), None
    leased_at_kills = 0
    deadline = time.time() + a.timeout
    expected = len(site.urls())
    if a.max_pages:
        expected = min(expected, a.max_pages)
    try:
        while time.time() < deadline:
            time.sleep(0.05)
            with lock:
                done = len(log)
            # a kill at a random moment once the crawl is going, spread over it
            if kills < a.kills and done > expected * (kills + 1) / (a.kills + 2) * rnd.uniform(0.5, 1.0):
                alive = [w for w, p in procs.items() if p.poll() is None]
                if alive:
                    w = rnd.choice(alive)
                    time.sleep(rnd.uniform(0, 0.2))
                    procs[w].send_signal(signal.SIGKILL)
                    kill_times.append(time.time())
                    procs[w].wait()
                    kills += 1
                    leased_at_kills += leased(fport, "w%d" % w, a.frontier_shards)
                    if a.restart_late:
                        late.add(w)
                    else:
                        procs[w] = start(w)  # the same name: takes over its files
            # redis-server killed once every live worker has connected (its frontier and its
            # index: 2 connections): a worker still opening (just restarted after a kill)
            # finds no server and says so at once, by design, which is not what this tests.
            # Behind nutcracker the node's restart is answered by the proxy, not refused
            alive = sum(1 for p in procs.values() if p.poll() is None)
            if (redis_restarts < a.redis_restarts and kills >= a.kills // 2 and
                    done > expected / 2 and (shards or clients(rport) >= 2 * alive + 1)):
                if shards:  # the node holding the frontier's keys
                    sizes = shards.dbsizes()
                    shards.restart(sizes.index(max(sizes)), a.redis_down)
                else:
                    redis.send_signal(signal.SIGKILL)
                    redis.wait()
                    time.sleep(a.redis_down)  # the workers find it gone and keep trying
                    redis = start_redis(a.dir, rport, True)
                redis_restarts += 1
            exited = {w: p.poll() for w, p in procs.items()}
            if a.no_worker_errors and any(rc not in (None, 0) for w, rc in exited.items()
                                          if w not in late):
                fails.append("a worker exited with an error instead of connecting again")
                break
            for w, rc in exited.items():
                if w in late:
                    continue
                if rc not in (None, 0) and restarts < 10 * (a.kills + a.redis_restarts + 1):
                    restarts += 1  # lost Redis under it, or a lease: restarted by name
                    procs[w] = start(w)
            if late and all(p.poll() == 0 for w, p in procs.items() if w not in late):
                late_at = time.time()  # the others are done: the killed ones start again
                for w in late:
                    procs[w] = start(w)
                late = set()
            if not late and all(p.poll() == 0 for p in procs.values()):
                break
        else:
            fails.append("the workers did not finish in %.0f s" % a.timeout)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        redis.kill()
        redis.wait()
        if shards:
            spread = shards.count_keys("simcrawl{f*")
            if a.frontier_shards > 1 and min(spread) == 0:
                fails.append("the frontier's keys are not on every node: %s" % spread)
            shards.stop()
        for s in servers:
            s.shutdown()
    for w in range(a.workers):
        if procs[w].returncode != 0:
            with open(os.path.join(a.dir, "w%d.err" % w)) as f:
                fails.append("worker w%d exit %s: %s" % (w, procs[w].returncode, f.read()[-600:]))

    if late_at is not None:
        with lock:
            after = [p for h, t, p, port, tw in log if t >= late_at]
        if after:
            fails.append("the workers started late made %d requests (%s): the others did not "
                         "finish the crawl without them" % (len(after), after[:3]))
    # the logs: the site, each URL once
    lines = []
    for w in range(a.workers):
        path = os.path.join(a.dir, "out-w%d.jsonl" % w)
        if os.path.exists(path):
            lines += [json.loads(l) for l in open(path)]
    urls = [o["url"] for o in lines if not o["url"].endswith("/robots.txt")]
    want = site.urls()
    twice = sorted(u for u in set(urls) if urls.count(u) > 1)
    if twice:
        fails.append("%d URLs logged twice: %s" % (len(twice), twice[:3]))
    if a.max_pages:
        fetched = [o["url"] for o in lines
                   if not o["url"].endswith("/robots.txt") and o.get("status", 0) > 0]
        if len(fetched) != min(a.max_pages, len(want)) or not set(urls) <= want:
            fails.append("--max-pages %d: %d URLs fetched in the logs, %d not of the site (%s)"
                         % (a.max_pages, len(fetched), len(set(urls) - want),
                            sorted(set(urls) - want)[:3]))
    elif set(urls) != want:
        fails.append("logs: %d URLs missing (%s), %d not of the site (%s)"
                     % (len(want - set(urls)), sorted(want - set(urls))[:3],
                        len(set(urls) - want), sorted(set(urls) - want)[:3]))
    # the WARCs: one response per URL decided new, none twice
    recs = []
    for w in range(a.workers):
        path = os.path.join(a.dir, "out-w%d.warc.gz" % w)
        if os.path.exists(path):
            recs += [f for f in warc_fields(path) if f.get("warc-type") in ("response", "revisit")]
    # a revisit refers to a response record that is there (in any worker's WARC), even
    # when the original's worker was killed before its commit and fetched the page again
    ids = {f["warc-record-id"] for f in recs if f["warc-type"] == "response"}
    dangling = [f["warc-target-uri"] for f in recs
                if f["warc-type"] == "revisit" and f.get("warc-refers-to") not in ids]
    if dangling:
        fails.append("%d revisit records refer to no response record: %s"
                     % (len(dangling), dangling[:3]))
    recs = [(f["warc-type"], f["warc-target-uri"]) for f in recs]
    resp = [u for t, u in recs if t == "response"]
    new = {o["url"] for o in lines if o["decision"] == "new"}
    exact = {o["url"] for o in lines if o["decision"] == "exact-duplicate"}
    archived = [u for t, u in recs]
    rtwice = sorted(u for u in set(archived) if archived.count(u) > 1)
    if rtwice:
        fails.append("%d URLs archived twice: %s" % (len(rtwice), rtwice[:3]))
    if set(resp) != new:
        fails.append("WARCs: %d responses of URLs not logged new, %d new URLs not archived"
                     % (len(set(resp) - new), len(new - set(resp))))
    if {u for t, u in recs if t == "revisit"} != exact:
        fails.append("WARCs: revisit records of URLs not logged exact-duplicate, or exact "
                     "duplicates without one")
    planted = sum(len(site.exact_of(h)) for h in range(a.hosts))
    if len(exact) != planted and not a.max_pages:
        fails.append("%d exact duplicates logged, %d planted" % (len(exact), planted))
    # politeness across workers: per host, arrivals --crawl-delay apart
    # (a request is read after it was sent, an answer sent after the time taken before
    # writing it: the gap from that time to the next request's reading is no more than
    # the crawler's own, whatever the server's threads were doing)
    by_host = {}
    for h, t, p, port, tw in log:
        by_host.setdefault(h, []).append((t, p, port, tw if tw is not None else t))
    worst = None
    for h, ts in by_host.items():
        ts.sort()
        for x, y in zip(ts, ts[1:]):
            gap = y[0] - x[3]
            if gap < a.crawl_delay - 0.002 and (worst is None or gap < worst[0]):
                worst = (gap, h, x, y)
    if worst:
        near_kill = [k for k in kill_times if abs(k - worst[2][0]) < 1]
        fails.append("host %d asked twice %.3f s apart (Crawl-delay %g): %s from client port "
                     "%d, then %s from %d%s" % (worst[1], worst[0], a.crawl_delay, worst[2][1],
                                                worst[2][2], worst[3][1], worst[3][2],
                                                ", %.3f s after a kill" % (worst[3][0] - near_kill[0])
                                                if near_kill else ""))
    # near-duplicates: no two kept pages within k, every dropped one near a kept one that is
    # archived (a response in the union of the WARCs). With --max-pages too: a page kept by
    # a worker killed before its commit stays in the shared index, its URL, reaped, keeps
    # its share of the budget and is leased again before anything new, so it is archived
    kept = [(int(o["fingerprint"], 16), o["url"]) for o in lines
            if o["decision"] == "new" and "fingerprint" in o]
    for i in range(len(kept)):
        for j in range(i + 1, len(kept)):
            if hamming(kept[i][0], kept[j][0]) <= a.k:
                fails.append("kept pages within k: %s and %s" % (kept[i][1], kept[j][1]))
    in_warcs = set(resp)
    orphans = [o["url"] for o in lines if o["decision"] == "near-duplicate" and
               not any(hamming(int(o["fingerprint"], 16), k) <= a.k
                       for k, u in kept if u in in_warcs)]
    if orphans:
        fails.append("%d near-duplicates without a kept page within k in the WARCs (%s)"
                     % (len(orphans), orphans[:3]))
    near = sum(1 for o in lines if o["decision"] == "near-duplicate")
    if near == 0 and not a.max_pages:
        fails.append("no near-duplicate found (%d planted)" % sum(
            len(site.dup_of(h)) for h in range(a.hosts)))
    # requested more than once: only URLs a killed worker held the lease of (fetched or
    # decided, not committed), 4 a worker restarted after an error (its transfers)
    paths = {}
    for h, t, p, port, tw in log:
        if p != "/robots.txt":
            paths[(h, p)] = paths.get((h, p), 0) + 1
    again = sum(n - 1 for n in paths.values() if n > 1)
    if again > leased_at_kills + 4 * restarts:
        fails.append("%d requests repeated, more than the %d URLs leased by the workers "
                     "killed (%d kills) and the transfers of %d restarts"
                     % (again, leased_at_kills, kills, restarts))
    print("crawl_redis: %s%d workers, %d hosts, %d URLs%s, %d kills, %d restarts after an error, "
          "%d redis-server restarts, %d requests (%d repeated, %d URLs leased by the killed "
          "workers), %d near-duplicates%s"
          % ("%d shards behind nutcracker (frontier keys a node: %s), " % (a.shards, spread)
             if a.shards else "",
             a.workers, a.hosts, len(want),
             " (--max-pages %d: %d logged)" % (a.max_pages, len(set(urls))) if a.max_pages else "",
             kills, restarts, redis_restarts, len(log), again,
             leased_at_kills,
             near, ""))
    for f in fails:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
