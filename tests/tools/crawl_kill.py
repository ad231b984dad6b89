#!/usr/bin/env python3
"""The crawl kill test (issue 15): `simcrawl crawl --state DIR` killed with SIGKILL at named
crash points (SIMCRAWL_CRASH_AT=POINT:N) and at random moments, then run again until it
ends, must leave what an uninterrupted crawl of the same site leaves:
  - the WARC holds the same URLs as the uninterrupted crawl's, each once (responses and
    revisits, read back from the gzip members);
  - the log holds every URL once, each line whole JSON;
  - no URL committed as done before a kill is requested again after it (the server logs
    every request; the committed URLs are read from DIR/state.db after each kill), so
    only the URLs in flight or in the uncommitted group are fetched twice;
  - a run on the finished state says the crawl is complete and exits 0.

    crawl_kill.py --simcrawl BIN --runs N [--pages P] [--points a,b] [--seed S] [--keep DIR]

Runs alternate: the first len(points) runs each kill at one crash point (the Nth pass, N
random), the others kill at random times (1 to 3 kills a run). Exit status 0 when every
run passes. Used by tests/cli/crawl_kill.sh (make test: a few runs) and `make stress`.
"""
import argparse
import collections
import gzip
import json
import os
import random
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
POINTS = ["crawl-started", "crawl-warc-appended", "crawl-log-written", "crawl-before-commit",
          "crawl-commit-begin", "crawl-commit-done"]


def path_of(url):
    """the path of an http URL (the port differs from run to run)"""
    p = url.split("/", 3)
    return "/" + p[3] if len(p) > 3 else "/"


def warc_records(path):
    """(type, target URI) of every record of a gzip-per-record WARC"""
    out = []
    with gzip.open(path, "rb") as f:
        while True:
            line = f.readline()
            if not line:
                break
            if line.strip() == b"":
                continue
            if not line.startswith(b"WARC/"):
                raise ValueError("%s: not a WARC record: %r" % (path, line[:40]))
            h = {}
            while True:
                line = f.readline()
                if line in (b"\r\n", b"\n", b""):
                    break
                k, _, v = line.decode("utf-8", "replace").partition(":")
                h[k.strip().lower()] = v.strip()
            n = int(h.get("content-length", "0"))
            block = f.read(n)
            if len(block) != n:
                raise ValueError("%s: record cut short" % path)
            out.append((h.get("warc-type", ""), path_of(h.get("warc-target-uri", ""))))
    return out


def warc_files(d, name):
    base = os.path.join(d, name)
    files = [base] + sorted(os.path.join(d, f) for f in os.listdir(d)
                            if f.startswith("out-") and f.endswith(".warc.gz"))
    return [f for f in files if os.path.exists(f)]


def summary_of(d):
    """(Counter of response URIs, Counter of revisit URIs, Counter of log URLs)"""
    resp, rev = collections.Counter(), collections.Counter()
    for f in warc_files(d, "out.warc.gz"):
        for t, u in warc_records(f):
            if t == "response":
                resp[u] += 1
            elif t == "revisit":
                rev[u] += 1
    logged = collections.Counter()
    with open(os.path.join(d, "log.jsonl"), "rb") as f:
        for i, line in enumerate(f):
            try:
                logged[path_of(json.loads(line)["url"])] += 1
            except (ValueError, KeyError):
                raise AssertionError("log line %d is not whole JSON: %r" % (i + 1, line[:80]))
    return resp, rev, logged


class Server:
    def __init__(self, work, pages):
        self.log = os.path.join(work, "requests.log")
        port_file = os.path.join(work, "port")
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "site_server.py"),
                                   "--pages", str(pages), "--log", self.log,
                                   "--port-file", port_file])
        for _ in range(200):
            if os.path.exists(port_file):
                break
            time.sleep(0.02)
        with open(port_file) as f:
            self.port = int(f.read())

    def requests(self):
        with open(self.log) as f:
            return [l.rstrip("\n") for l in f]

    def stop(self):
        self.p.terminate()
        self.p.wait()


def crawl_cmd(a, d, port, state=True):
    cmd = [a.simcrawl, "crawl", "--quiet", "--delay", "0", "--concurrency", "4",
           "--per-host", "4", "--workers", "2", "--warc", os.path.join(d, "out.warc.gz"),
           "--log", os.path.join(d, "log.jsonl")]
    if state:
        cmd += ["--state", os.path.join(d, "state")]
    return cmd + ["http://127.0.0.1:%d/p/0.html" % port]


def committed_paths(d):
    """the paths of the URLs committed as decided (not queued) in d's state"""
    db = os.path.join(d, "state", "state.db")
    if not os.path.exists(db):
        return set()
    # read a copy: the reader must not checkpoint, recover or otherwise touch the
    # state the next run resumes from
    tmp = tempfile.mkdtemp(prefix="crawl_kill_db.")
    for suffix in ("", "-wal"):
        if os.path.exists(db + suffix):
            shutil.copyfile(db + suffix, os.path.join(tmp, "state.db" + suffix))
    c = sqlite3.connect(os.path.join(tmp, "state.db"))
    try:
        rows = c.execute("SELECT url FROM urls WHERE state != 0").fetchall()
    except sqlite3.OperationalError:
        rows = []  # killed before its schema was committed
    finally:
        c.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return set(path_of(u) for (u,) in rows)


def one_run(a, rnd, n, point, ref, work):
    d = os.path.join(work, "run%d" % n)
    os.makedirs(d)
    srv = Server(d, a.pages)
    kills = 0
    problems = []
    try:
        cmd = crawl_cmd(a, d, srv.port)
        planned = 1 if point else rnd.randint(1, 3)
        marks = []
        for attempt in range(planned + 10):
            env = dict(os.environ)
            if point and attempt == 0:
                # pages pass the first points once each, commits happen every 0.1 s
                nth = {"crawl-started": 1, "crawl-warc-appended": rnd.randint(1, a.pages // 2),
                       "crawl-log-written": rnd.randint(1, a.pages // 2)}.get(point, rnd.randint(1, 3))
                env["SIMCRAWL_CRASH_AT"] = "%s:%d" % (point, nth)
            p = subprocess.Popen(cmd, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            if not point and attempt < planned:
                time.sleep(rnd.uniform(0.05, a.kill_within) * a.ref_seconds)
                if p.poll() is None:
                    p.send_signal(signal.SIGKILL)
            try:
                _, err = p.communicate(timeout=120)
            except subprocess.TimeoutExpired:
                p.kill()
                problems.append("run timed out")
                break
            if p.returncode == -signal.SIGKILL:
                kills += 1
                # what the next processes request must not have been committed
                marks.append((len(srv.requests()), committed_paths(d)))
                continue
            if p.returncode != 0:
                problems.append("exit %d: %s" % (p.returncode, err.decode()[-300:]))
            break
        # a finished crawl says so
        r = subprocess.run(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        if r.returncode != 0 or b"complete" not in r.stderr:
            problems.append("run on a finished state: exit %d, %r" % (r.returncode, r.stderr[-200:]))
        reqs = srv.requests()
        for mark, done in marks:
            again = sorted(set(p for p in reqs[mark:] if p in done and p != "/robots.txt"))
            if again:
                problems.append("%d URLs committed before a kill requested again: %s"
                                % (len(again), again[:5]))
        twice = sum(c - 1 for p, c in collections.Counter(reqs).items()
                    if c > 1 and p != "/robots.txt")
        resp, rev, logged = summary_of(d)
        r_resp, r_rev, r_logged = ref
        if set(resp) != set(r_resp):
            problems.append("WARC URLs differ: %d missing %s, %d extra %s" % (
                len(set(r_resp) - set(resp)), sorted(set(r_resp) - set(resp))[:3],
                len(set(resp) - set(r_resp)), sorted(set(resp) - set(r_resp))[:3]))
        dup = [u for u, c in resp.items() if c > 1] + [u for u, c in rev.items() if c > 1]
        if dup:
            problems.append("%d URLs archived more than once: %s" % (len(dup), dup[:3]))
        if set(rev) != set(r_rev):
            problems.append("revisit records differ: %d vs %d" % (len(rev), len(r_rev)))
        if set(logged) != set(r_logged):
            problems.append("logged URLs differ: %d vs %d" % (len(logged), len(r_logged)))
        ltwice = [u for u, c in logged.items() if c > 1]
        if ltwice:
            problems.append("%d URLs logged twice: %s" % (len(ltwice), ltwice[:3]))
        what = "crash point %s" % point if point else "random kills"
        print("crawl_kill: run %d (%s): %d kill%s, %d pages archived, %d requests repeated%s"
              % (n, what, kills, "" if kills == 1 else "s", len(resp), twice,
                 "" if not problems else ": FAILED\n  " + "\n  ".join(problems)))
    finally:
        srv.stop()
    return not problems


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--simcrawl", required=True)
    ap.add_argument("--runs", type=int, default=4)
    ap.add_argument("--pages", type=int, default=1000)
    ap.add_argument("--points", default=",".join(POINTS))
    ap.add_argument("--seed", type=int, default=None)
    ap.add_argument("--keep", default=None)
    ap.add_argument("--kill-within", type=float, default=0.9,
                    help="random kills come within this share of an uninterrupted crawl's time")
    a = ap.parse_args()
    a.simcrawl = os.path.abspath(a.simcrawl)
    seed = a.seed if a.seed is not None else random.randrange(1 << 30)
    rnd = random.Random(seed)
    work = a.keep or tempfile.mkdtemp(prefix="crawl_kill.")
    os.makedirs(work, exist_ok=True)
    print("crawl_kill: seed %d, %d pages, %d runs, in %s" % (seed, a.pages, a.runs, work))
    # the uninterrupted crawl
    d = os.path.join(work, "reference")
    os.makedirs(d)
    srv = Server(d, a.pages)
    try:
        t0 = time.time()
        r = subprocess.run(crawl_cmd(a, d, srv.port, state=False), stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE, timeout=300)
        a.ref_seconds = time.time() - t0
    finally:
        srv.stop()
    if r.returncode != 0:
        print("crawl_kill: the reference crawl failed: %s" % r.stderr.decode()[-300:])
        return 1
    ref = summary_of(d)
    points = [p for p in a.points.split(",") if p]
    ok = 0
    for n in range(a.runs):
        point = points[n] if n < len(points) else None
        ok += one_run(a, rnd, n, point, ref, work)
    print("crawl_kill: %d of %d runs pass (seed %d)" % (ok, a.runs, seed))
    if ok == a.runs and not a.keep:
        shutil.rmtree(work, ignore_errors=True)
    return 0 if ok == a.runs else 1


if __name__ == "__main__":
    sys.exit(main())
