#!/usr/bin/env python3
"""A shared crawl decides as a single crawl does (issue 17): site templates, revisit
records and --max-pages with `simcrawl crawl --redis` (tests/cli/crawl_redis_same.sh).

Everything on 127.0.0.1: a redis-server of its own (a random free port, a temporary dir,
--save "") and a site of --hosts virtual hosts, one port each, robots.txt asking for
Crawl-delay --crawl-delay. Every page of the site carries the same big template in its
main text (a menu paragraph of 200 words and a footer): without template blocks left out,
pages with a few words of their own are near-duplicates of each other. The first pages a
host serves have long texts of their own (so that the template is learned before the
short pages come); the others 10 words. Page N of host h is copied byte for byte as
/c/N.html on host h+1 for a few N: planted exact duplicates, fetched by whichever worker
holds the other host. Page 0 of each host asks for a requisite, /r/0.png, whose payload is
byte for byte the host's last page (fetched deeper, later: a payload first archived without
a fingerprint, then met again as a page with one: an exact duplicate, in both crawls).

Runs one in-process crawl (no Redis) and --workers workers on one Redis, and checks:
  - the same pages are kept (--page-requisites): every distinct page new in both, of each
    original and its copy (or requisite) exactly one new and the other an exact duplicate,
    no near-duplicate in either;
  - with --no-templates-control, the same shared crawl with --no-templates drops pages as
    near-duplicates (the template is big enough to matter: the check above can fail);
  - every exact duplicate of the shared crawl is a revisit record whose WARC-Refers-To,
    -Refers-To-Target-URI and -Refers-To-Date are the response record of the copy kept,
    in whichever worker's WARC that is; at least one such pair across two workers;
  - with --max-pages N: a shared crawl of N pages in all (the transfers logged by all the
    workers together: exactly N), every worker exiting 0.
Exit 0 when all hold; otherwise the failures on stderr.
"""
import json
import os
import random
import subprocess
import sys
import threading

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from crawl_redis import crawl_args, free_port, serve, start_redis, warc_fields  # noqa: E402

MENU = " ".join("menu%03d" % i for i in range(200))
FOOT = "Copyright the example project all rights reserved terms of use privacy policy"
WORDS = ["w%03d" % i for i in range(800)]
LONG_PAGES = 3  # the first pages of a host: long texts of their own


class Site:
    def __init__(self, hosts, pages):
        self.hosts, self.pages = hosts, pages
        self.ports = []

    def copies(self):
        """N of host h copied as /c/N.html on host h+1"""
        return [n for n in range(LONG_PAGES, self.pages) if n % 3 == 1]

    def own(self, h, n):
        r = random.Random(h * 7919 + n * 104729 + 5)
        k = 150 if n < LONG_PAGES else 10
        return " ".join(r.choice(WORDS) for _ in range(k))

    def body(self, h, n):
        port = self.ports
        links = ['<a href="/p/%d.html">page %d</a>' % (c, c)
                 for c in (2 * n + 1, 2 * n + 2) if c < self.pages]
        if n == 0:
            prev = (h - 1) % self.hosts
            links += ['<a href="http://127.0.0.1:%d/p/0.html">next</a>'
                      % port[(h + 1) % self.hosts]]
            links += ['<a href="/c/%d.html">copy</a>' % m for m in self.copies()
                      if prev != h]
            links += ['<a href="/x/%d.html">not for robots</a>' % m for m in range(2)]
            links += ['<img src="/r/0.png" alt="">']
        return ('<html><head><title>Host %d page %d</title></head><body><div class="content">'
                '<p>%s</p><p>%s</p><p>%s</p></div><ul><li>%s</li></ul></body></html>\n'
                % (h, n, MENU, self.own(h, n), FOOT, "</li><li>".join(links))).encode()

    def page(self, h, path):
        if path.startswith("/p/") and path.endswith(".html"):
            n = int(path[3:-5])
            return self.body(h, n) if 0 <= n < self.pages else None
        if path.startswith("/c/") and path.endswith(".html"):
            n = int(path[3:-5])
            prev = (h - 1) % self.hosts
            return self.body(prev, n) if n in self.copies() and prev != h else None
        if path == "/r/0.png":  # the last page's payload, met first as a requisite
            return self.body(h, self.pages - 1)
        return None

    def group(self, url):
        """the distinct content a URL holds: (host, page)"""
        port, path = url[len("http://127.0.0.1:"):].split("/", 1)
        h = self.ports.index(int(port))
        if path.startswith("r/"):
            return (h, self.pages - 1)
        n = int(path[2:-5])
        return ((h - 1) % self.hosts, n) if path.startswith("c/") else (h, n)


def log_lines(path):
    if not os.path.exists(path):
        return []
    return [json.loads(x) for x in open(path)
            if not json.loads(x)["url"].endswith("/robots.txt")]


def single(a, d, seeds):
    os.makedirs(d, exist_ok=True)
    cmd = [a.simcrawl, "crawl", "--quiet", "--delay", "0", "--concurrency", "4",
           "--page-requisites",
           "--warc", os.path.join(d, "out.warc.gz"), "--log", os.path.join(d, "out.jsonl")]
    rc = subprocess.run(cmd + seeds, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                        timeout=a.timeout)
    if rc.returncode != 0:
        return None, "the single crawl exited %d: %s" % (rc.returncode, rc.stderr[-400:])
    return log_lines(os.path.join(d, "out.jsonl")), None


def shared(a, d, seeds, extra):
    """the workers on a Redis of their own: ({worker: log lines}, {worker: WARC fields},
    failure or None)"""
    os.makedirs(d, exist_ok=True)
    rport = free_port()
    redis = start_redis(d, rport, False)
    procs = {}
    try:
        for w in range(a.workers):
            cmd = [a.simcrawl, "crawl", "--quiet", "--redis", "redis://127.0.0.1:%d" % rport,
                   "--worker-name", "w%d" % w, "--warc", os.path.join(d, "out.warc.gz"),
                   "--log", os.path.join(d, "out.jsonl"), "--delay", "0",
                   "--concurrency", "4", "--host-lease-time", "0.2"] + extra + seeds
            err = open(os.path.join(d, "w%d.err" % w), "w")
            procs[w] = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
        fail = None
        for w, p in procs.items():
            try:
                if p.wait(timeout=a.timeout) != 0:
                    fail = "worker w%d exit %d: %s" % (
                        w, p.returncode, open(os.path.join(d, "w%d.err" % w)).read()[-400:])
            except subprocess.TimeoutExpired:
                fail = "worker w%d did not finish in %.0f s" % (w, a.timeout)
    finally:
        for p in procs.values():
            if p.poll() is None:
                p.kill()
                p.wait()
        redis.kill()
        redis.wait()
    logs = {w: log_lines(os.path.join(d, "out-w%d.jsonl" % w)) for w in procs}
    warcs = {}
    for w in procs:
        path = os.path.join(d, "out-w%d.warc.gz" % w)
        warcs[w] = warc_fields(path) if os.path.exists(path) else []
    return logs, warcs, fail


def kept_groups(site, lines, what, fails):
    """checks one crawl's decisions; returns the sorted groups kept"""
    kept = [site.group(o["url"]) for o in lines if o["decision"] == "new"]
    robots = sum(1 for o in lines if o["decision"] == "robots-disallowed")
    if robots != 2 * site.hosts:
        fails.append("%s: %d URLs disallowed by robots.txt, %d planted"
                     % (what, robots, 2 * site.hosts))
    near = [o["url"] for o in lines if o["decision"] == "near-duplicate"]
    if near:
        fails.append("%s: %d distinct pages dropped as near-duplicates: %s (of %s)"
                     % (what, len(near), near[:3],
                        [o.get("duplicate_of") for o in lines if o["url"] in near[:3]]))
    twice = sorted(g for g in set(kept) if kept.count(g) > 1)
    if twice:
        fails.append("%s: %d pages kept twice (an original and its copy): %s"
                     % (what, len(twice), twice[:3]))
    return sorted(set(kept))


def check_revisits(logs, warcs, fails):
    """every exact duplicate a revisit of the response kept; returns the pairs across
    workers"""
    resp = {}
    for w, recs in warcs.items():
        for f in recs:
            if f.get("warc-type") == "response":
                resp[f["warc-record-id"]] = (w, f)
    by_uri = {f["warc-target-uri"]: (w, f) for w, f in resp.values()}
    revisits = {}
    for w, recs in warcs.items():
        for f in recs:
            if f.get("warc-type") == "revisit":
                revisits[f["warc-target-uri"]] = (w, f)
    across = 0
    for w, lines in logs.items():
        for o in lines:
            if o["decision"] != "exact-duplicate":
                continue
            if o["url"] not in revisits:
                fails.append("exact duplicate %s (worker w%d) has no revisit record" % (o["url"], w))
                continue
            rw, f = revisits[o["url"]]
            ref = resp.get(f.get("warc-refers-to"))
            orig = by_uri.get(o.get("duplicate_of"))
            if not ref or not orig or ref[1] is not orig[1]:
                fails.append("revisit of %s refers to %s, not the response of %s"
                             % (o["url"], f.get("warc-refers-to"), o.get("duplicate_of")))
                continue
            of = orig[1]
            if (f.get("warc-refers-to-target-uri") != of["warc-target-uri"] or
                    f.get("warc-refers-to-date") != of["warc-date"] or
                    f.get("warc-payload-digest") != of["warc-payload-digest"]):
                fails.append("revisit of %s: target URI, date or digest differ from %s's "
                             "response" % (o["url"], of["warc-target-uri"]))
            across += rw != orig[0]
    return across


def main():
    ap = crawl_args(hosts=4, pages=16, crawl_delay=0.05, timeout=100)
    ap.add_argument("--max-pages", type=int, default=0)
    ap.add_argument("--frontier-shards", type=int, default=0,
                    help="with --max-pages: its check again over this many shard tags")
    ap.add_argument("--no-templates-control", action="store_true")
    a = ap.parse_args()
    site = Site(a.hosts, a.pages)
    servers = serve(site, a.crawl_delay, [], threading.Lock(), disallow="/x/")
    seeds = ["http://127.0.0.1:%d/p/0.html" % site.ports[0]]
    fails = []
    try:
        one, err = single(a, os.path.join(a.dir, "single"), seeds)
        if err:
            fails.append(err)
        logs, warcs, err = shared(a, os.path.join(a.dir, "shared"), seeds, ["--page-requisites"])
        if err:
            fails.append(err)
        all_lines = [o for lines in logs.values() for o in lines]
        g1 = kept_groups(site, one or [], "single crawl", fails)
        g2 = kept_groups(site, all_lines, "shared crawl", fails)
        want = sorted({site.group("http://127.0.0.1:%d/p/%d.html" % (p, n))
                       for p in site.ports for n in range(a.pages)})
        if g1 != want or g2 != want:
            fails.append("pages kept: %d by the single crawl, %d by the shared one, %d distinct "
                         "in the site (missing from the shared crawl: %s)"
                         % (len(g1), len(g2), len(want), sorted(set(want) - set(g2))[:4]))
        exact = sum(1 for o in all_lines if o["decision"] == "exact-duplicate")
        planted = (len(site.copies()) + 1) * a.hosts  # the copies, the requisites' pages
        exact1 = sum(1 for o in one or [] if o["decision"] == "exact-duplicate")
        if exact1 != planted:
            fails.append("single crawl: %d exact duplicates, %d planted" % (exact1, planted))
        if exact != planted:
            fails.append("shared crawl: %d exact duplicates, %d planted" % (exact, planted))
        across = check_revisits(logs, warcs, fails)
        if across == 0:
            fails.append("no revisit refers to another worker's record (%d exact duplicates)"
                         % exact)
        control = 0
        if a.no_templates_control:
            logs_c, _, err = shared(a, os.path.join(a.dir, "control"), seeds, ["--no-templates"])
            if err:
                fails.append("--no-templates: " + err)
            control = sum(1 for lines in logs_c.values() for o in lines
                          if o["decision"] == "near-duplicate")
            if control == 0:
                fails.append("--no-templates: no page dropped as a near-duplicate: the "
                             "template does not matter, the check above cannot fail")
        fetched_max = 0
        for shards in ([1, a.frontier_shards] if a.frontier_shards > 1 else [1]):
            if not a.max_pages:
                break
            logs_m, _, err = shared(a, os.path.join(a.dir, "max%d" % shards), seeds,
                                    ["--max-pages", str(a.max_pages),
                                     "--frontier-shards", str(shards)])
            if err:
                fails.append("--max-pages, %d shards: %s" % (shards, err))
            per = {w: sum(1 for o in lines if o.get("status", 0) > 0) for w, lines in logs_m.items()}
            fetched_max = sum(per.values())
            if fetched_max != a.max_pages:
                fails.append("--max-pages %d, %d shards: %d pages fetched by the workers "
                             "together (%s)" % (a.max_pages, shards, fetched_max, per))
    finally:
        for s in servers:
            s.shutdown()
    print("crawl_redis_same: %d workers, %d hosts, %d pages kept by both crawls, %d exact "
          "duplicates as revisits (%d across workers), %d near-duplicates with "
          "--no-templates, %d pages with --max-pages %d"
          % (a.workers, a.hosts, len(g2), exact, across, control, fetched_max, a.max_pages))
    for f in fails:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
