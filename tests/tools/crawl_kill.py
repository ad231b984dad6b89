#!/usr/bin/env python3
"""The crawl kill test (issue 15): `simcrawl crawl --state DIR` killed with SIGKILL at named
crash points (SIMCRAWL_CRASH_AT=POINT:N) and at random moments, then run again until it
ends, must leave what an uninterrupted crawl of the same site that kept the same copies
of the planted near-duplicates leaves:
  - the log holds every URL once, each line whole JSON, and exactly the URLs an
    uninterrupted crawl making the same near-duplicate decisions reaches: the site's link
    closure from the seed through the pages decided new (a kill must lose no URL);
  - the decisions are right: of each planted group of copies (site_server.py) exactly one
    page is new and the others are duplicates of a page of their group, every other page
    is new (an index rebuilt wrongly on resume would keep two, or none);
  - the WARC holds a response for each page decided new and a revisit for each exact
    duplicate, each once (read back from the gzip members);
  - no URL committed as done before a kill is requested again after it (the server logs
    every request; the committed URLs are read from DIR/state.db after each kill), and
    every URL requested again after a kill was in flight at it: leased in the committed
    state (its transfer started before the last commit, its result not committed), or
    first requested after the last commit (the uncommitted group: the server logs when
    each request came, the state when its last commit was made, both wall clock); every
    URL leased at a kill is requested again (none is lost);
  - a run on the finished state says the crawl is complete and exits 0.

    crawl_kill.py --simcrawl BIN --runs N [--pages P] [--points a,b] [--seed S] [--keep DIR]
                  [--slow-connections S] [--crawl-args ARGS] [--first-simcrawl OLD]

Runs alternate: the first len(points) runs each kill at one crash point (the Nth pass, N
random), the others kill at random times (1 to 3 kills a run). Exit status 0 when every
run passes.

Which page of a planted pair is kept depends on which is decided first, and that is timing:
the crawl fetches at about 3000 pages/s, so when the server is slow to take one new
connection (a loaded machine: 50 ms is enough) the connection already open runs three or
four levels down one branch, reaches a copy before its original and keeps the copy. An
uninterrupted crawl without --state does the same (logged 2031 URLs of 3003, the original's
subtree unreached). So the runs are not compared with the reference crawl's choices but
checked against the site itself for the choices they made; the reference crawl must pass
the same checks (it validates the model), and a run that chose otherwise than it is only
reported. Used by tests/cli/crawl_state.sh (make test: a few runs) and `make stress`.
"""
import argparse
import collections
import gzip
import json
import os
import random
import re
import shutil
import signal
import sqlite3
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import site_server  # noqa: E402  (the pages, their links and planted copies)
LEASED = 5  # crawler/crawl.h CRAWL_URL_LEASED
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
    """(Counter of response URIs, Counter of revisit URIs, Counter of log URLs,
    {path: (decision, duplicate_of path or None)} of the log)"""
    resp, rev = collections.Counter(), collections.Counter()
    for f in warc_files(d, "out.warc.gz"):
        for t, u in warc_records(f):
            if t == "response":
                resp[u] += 1
            elif t == "revisit":
                rev[u] += 1
    logged = collections.Counter()
    decided = {}
    with open(os.path.join(d, "log.jsonl"), "rb") as f:
        for i, line in enumerate(f):
            try:
                o = json.loads(line)
                u = path_of(o["url"])
                logged[u] += 1
                dup = o.get("duplicate_of")
                decided[u] = (o["decision"], path_of(dup) if dup else None)
            except (ValueError, KeyError):
                raise AssertionError("log line %d is not whole JSON: %r" % (i + 1, line[:80]))
    return resp, rev, logged, decided


LINK = re.compile(rb'href="([^"]+)"')


def page_number(path):
    if path.startswith("/p/") and path.endswith(".html"):
        try:
            return int(path[3:-5])
        except ValueError:
            pass
    return None


def group_of(n):
    """the page whose main text page n carries (site_server.py plants the copies)"""
    if n % 50 == 25:
        return site_server.original(n // 50)
    if n % 10 == 9:
        return site_server.original(n // 20)
    return n


def model_problems(site, summary):
    """What in a crawl's WARC and log is not what the site and the crawl's own
    near-duplicate choices make of it (see the module's docstring)."""
    resp, rev, logged, decided = summary
    problems = []
    # the link closure from the seed through the pages decided new
    reach, todo = {"/p/0.html"}, ["/p/0.html"]
    while todo:
        u = todo.pop()
        n = page_number(u)
        if n is None or n >= site.pages or decided.get(u, ("",))[0] != "new":
            continue
        for m in LINK.finditer(site.page(n)):
            v = m.group(1).decode()
            if v not in reach:
                reach.add(v)
                todo.append(v)
    if set(logged) != reach:
        problems.append("logged URLs are not the link closure of the pages decided new: "
                        "%d logged, %d reached; %d never logged %s, %d logged unreached %s" % (
                            len(logged), len(reach), len(reach - set(logged)),
                            sorted(reach - set(logged))[:3], len(set(logged) - reach),
                            sorted(set(logged) - reach)[:3]))
    # the decisions: one page new in each group of copies, the others its duplicates
    groups = collections.defaultdict(list)
    for u, (dec, dup) in decided.items():
        n = page_number(u)
        if n is not None and n < site.pages:
            groups[group_of(n)].append((u, dec, dup))
    wrong = []
    for g, members in groups.items():
        new = [u for u, dec, _ in members if dec == "new"]
        if len(new) != 1:
            wrong.append("%d of %s new" % (len(new), sorted(u for u, _, _ in members)))
        for u, dec, dup in members:
            if dec in ("near-duplicate", "exact-duplicate") and (
                    page_number(dup or "") is None or group_of(page_number(dup)) != g):
                wrong.append("%s a duplicate of %s" % (u, dup))
            elif dec not in ("new", "near-duplicate", "exact-duplicate"):
                wrong.append("%s %s" % (u, dec))
    if wrong:
        problems.append("%d wrong decisions: %s" % (len(wrong), wrong[:3]))
    # the WARC: a response per page decided new, a revisit per exact duplicate
    want_resp = set(u for u, (dec, _) in decided.items() if dec == "new")
    want_rev = set(u for u, (dec, _) in decided.items() if dec == "exact-duplicate")
    if set(resp) != want_resp:
        problems.append("WARC responses are not the pages decided new: %d missing %s, %d extra %s"
                        % (len(want_resp - set(resp)), sorted(want_resp - set(resp))[:3],
                           len(set(resp) - want_resp), sorted(set(resp) - want_resp)[:3]))
    if set(rev) != want_rev:
        problems.append("WARC revisits are not the exact duplicates: %d missing %s, %d extra %s"
                        % (len(want_rev - set(rev)), sorted(want_rev - set(rev))[:3],
                           len(set(rev) - want_rev), sorted(set(rev) - want_rev)[:3]))
    return problems


class Server:
    def __init__(self, work, pages, slow=0.0):
        self.log = os.path.join(work, "requests.log")
        self.tlog = os.path.join(work, "requests.times")
        self.conns = os.path.join(work, "conns")
        port_file = os.path.join(work, "port")
        self.p = subprocess.Popen([sys.executable, os.path.join(HERE, "site_server.py"),
                                   "--pages", str(pages), "--log", self.log,
                                   "--times-log", self.tlog, "--conns-file", self.conns,
                                   "--port-file", port_file, "--slow-connections", str(slow)])
        for _ in range(200):
            if os.path.exists(port_file):
                break
            time.sleep(0.02)
        with open(port_file) as f:
            self.port = int(f.read())

    def requests(self):
        with open(self.log) as f:
            return [l.rstrip("\n") for l in f]

    def times(self):
        """when each request of requests() came (wall clock s), in the same order"""
        with open(self.tlog) as f:
            return [float(l.split(" ", 1)[0]) for l in f]

    def backlog(self):
        """connections the kernel completed and the server has not accepted yet (the
        listening socket's rx_queue in /proc/net/tcp), 0 when it cannot be read"""
        try:
            with open("/proc/net/tcp") as f:
                next(f)
                for line in f:
                    fields = line.split()
                    local, st, queues = fields[1], fields[3], fields[4]
                    if st == "0A" and int(local.split(":")[1], 16) == self.port:
                        return int(queues.split(":")[1], 16)
        except (OSError, ValueError, IndexError):
            pass
        return 0

    def settle(self, limit=10.0):
        """waits until the server has no connection open or waiting to be accepted
        (bounded): after a kill the handler of a request the killed crawler sent can still
        be reading it, and would log it after the mark, among the next process's
        requests, with a time before that process's commits"""
        end = time.time() + limit
        quiet = 0
        while time.time() < end:
            try:
                with open(self.conns) as f:
                    n = f.read().strip()
            except FileNotFoundError:
                n = "0"
            quiet = quiet + 1 if n in ("", "0") and self.backlog() == 0 else 0
            if quiet >= 2:
                return True
            time.sleep(0.01)
        return False

    def stop(self):
        self.p.terminate()
        self.p.wait()


def crawl_cmd(a, d, port, state=True):
    cmd = [a.simcrawl, "crawl", "--quiet", "--delay", "0", "--concurrency", "4",
           "--per-host", "4", "--workers", "2", "--warc", os.path.join(d, "out.warc.gz"),
           "--log", os.path.join(d, "log.jsonl")]
    if state:
        cmd += ["--state", os.path.join(d, "state")] + a.crawl_args.split()
    return cmd + ["http://127.0.0.1:%d/p/0.html" % port]


def committed_state(d):
    """(paths of the URLs committed as decided, paths of those committed as leased, wall
    clock s of the last commit or None) in d's state"""
    db = os.path.join(d, "state", "state.db")
    if not os.path.exists(db):
        return set(), set(), None
    # read a copy: the reader must not checkpoint, recover or otherwise touch the
    # state the next run resumes from
    tmp = tempfile.mkdtemp(prefix="crawl_kill_db.")
    for suffix in ("", "-wal"):
        if os.path.exists(db + suffix):
            shutil.copyfile(db + suffix, os.path.join(tmp, "state.db" + suffix))
    c = sqlite3.connect(os.path.join(tmp, "state.db"))
    try:
        rows = c.execute("SELECT url, state FROM urls WHERE state != 0").fetchall()
        t = c.execute("SELECT value FROM meta WHERE key = 'commit.wall_us'").fetchone()
    except sqlite3.OperationalError:
        rows, t = [], None  # killed before its schema was committed
    finally:
        c.close()
        shutil.rmtree(tmp, ignore_errors=True)
    return (set(path_of(u) for u, st in rows if st != LEASED),
            set(path_of(u) for u, st in rows if st == LEASED), t[0] / 1e6 if t else None)


def one_run(a, rnd, n, point, ref, work):
    d = os.path.join(work, "run%d" % n)
    os.makedirs(d)
    srv = Server(d, a.pages, a.slow_connections)
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
            # --first-simcrawl: the processes before the first kill are the older simcrawl's
            run = [a.first_simcrawl] + cmd[1:] if a.first_simcrawl and not kills else cmd
            p = subprocess.Popen(run, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
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
                if not srv.settle():
                    problems.append("the server kept a connection open 10 s after a kill")
                # what the next processes request must not have been committed
                marks.append((len(srv.requests()),) + committed_state(d))
                continue
            if p.returncode != 0:
                problems.append("exit %d: %s" % (p.returncode, err.decode()[-300:]))
            break
        # a finished crawl says so (not with --quiet, which leaves only errors)
        r = subprocess.run([c for c in cmd if c != "--quiet"], stdout=subprocess.DEVNULL,
                           stderr=subprocess.PIPE)
        if r.returncode != 0 or b"complete" not in r.stderr:
            problems.append("run on a finished state: exit %d, %r" % (r.returncode, r.stderr[-200:]))
        reqs, times = srv.requests(), srv.times()
        start = 0
        n_leased = n_after = 0  # repeated requests: leased at the last commit, started after it
        for mark, done, leased, commit_t in marks:
            after = set(p for p in reqs[mark:] if p != "/robots.txt")
            again = sorted(after & done)
            if again:
                problems.append("%d URLs committed before a kill requested again: %s"
                                % (len(again), again[:5]))
            # requested by the killed process and again later: in flight at the kill
            first = {}
            for i in range(start, mark):
                first.setdefault(reqs[i], times[i])
            stray = sorted(p for p in after & set(first) if p not in leased and
                           (commit_t is None or first[p] < commit_t))
            n_leased += len(after & set(first) & leased)
            n_after += len(after & set(first) - leased)
            if commit_t is not None and stray:
                problems.append("%d URLs requested again after a kill that were neither leased "
                                "at its last commit nor first requested after it: %s "
                                "(first requested %s s before the commit)"
                                % (len(stray), stray[:5],
                                   ["%.3f" % (commit_t - first[p]) for p in stray[:5]]))
            lost = sorted(leased - after)
            if lost:
                problems.append("%d URLs leased at a kill never requested again: %s"
                                % (len(lost), lost[:5]))
            start = mark
        twice = sum(c - 1 for p, c in collections.Counter(reqs).items()
                    if c > 1 and p != "/robots.txt")
        summary = summary_of(d)
        resp, rev, logged, decided = summary
        problems += model_problems(a.site, summary)
        dup = [u for u, c in resp.items() if c > 1] + [u for u, c in rev.items() if c > 1]
        if dup:
            problems.append("%d URLs archived more than once: %s" % (len(dup), dup[:3]))
        ltwice = [u for u, c in logged.items() if c > 1]
        if ltwice:
            problems.append("%d URLs logged twice: %s" % (len(ltwice), ltwice[:3]))
        # another order of fetches than the reference crawl's (see the docstring): said
        other = ""
        if set(resp) != set(ref[0]) or set(logged) != set(ref[2]):
            other = " (copies kept otherwise than by the reference crawl: %d URLs logged " \
                    "against %d)" % (len(logged), len(ref[2]))
        what = "crash point %s" % point if point else "random kills"
        print("crawl_kill: run %d (%s): %d kill%s, %d pages archived, %d requests repeated "
              "(%d leased at the last commit, %d started after it)%s%s"
              % (n, what, kills, "" if kills == 1 else "s", len(resp), twice, n_leased, n_after,
                 other,
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
    ap.add_argument("--slow-connections", type=float, default=0, metavar="S",
                    help="the runs' servers (not the reference's) take connections 2 to 4 "
                         "S seconds late: the runs keep other copies than the reference")
    ap.add_argument("--crawl-args", default="", metavar="ARGS",
                    help="more options for the runs' crawls (--state ones), e.g. "
                         "'--seen-memory 4096': a seen set spilled to its filter")
    ap.add_argument("--first-simcrawl", default=None, metavar="OLD",
                    help="each run's processes up to its first kill are OLD's (a simcrawl of "
                         "an earlier state schema), the rest BIN's: a state OLD wrote, "
                         "resumed (and migrated) by BIN")
    a = ap.parse_args()
    a.simcrawl = os.path.abspath(a.simcrawl)
    if a.first_simcrawl:
        a.first_simcrawl = os.path.abspath(a.first_simcrawl)
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
    a.site = site_server.Site(a.pages, False)
    bad = model_problems(a.site, ref)
    if bad:
        print("crawl_kill: the reference crawl does not pass the checks (the model of the "
              "site is wrong): %s" % "; ".join(bad))
        return 1
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
