#!/usr/bin/env python3
"""Kill campaign for the index + digests pair (issue 12 item 3; `make stress`).

Each of RUNS rounds starts `simcrawl dedup --index X --warc-out ...` over a generated WARC
(PAGES new pages and exact copies of pages of earlier rounds), kills it with SIGKILL at a
random time between 0.2 and 1.3 times the length of a normal run (a running mean), so
that some kills land in the save at the end, most in the reading, some after the exit, then checks with a
normal run and tests/stress/pairkit.py that:
  - the run opens the pair (exit 0) and never reports digests older than the index;
  - exact copies of pages of every earlier committed round are exact duplicates;
  - the pair passes the strict check (same generation, digests and documents match, no
    temporary file left);
  - the killed round's pages are all in the pair or none (the round committed or not),
    and the index holds exactly the documents of the committed rounds: nothing lost
    beyond the killed run's own pages.
Prints the figures at the end; exits 1 on any failure.
"""
import argparse
import os
import random
import re
import shutil
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import pairkit  # noqa: E402


def write_warc(path, parts):
    """parts: [(prefix, page numbers)]"""
    with open(path, "wb") as f:
        for prefix, nums in parts:
            for n in nums:
                f.write(pairkit.record("http://example.com/%s/%d" % (prefix, n),
                                       pairkit.page(n), pairkit.rid(prefix, n)))


def check(path, prefixes, batch):
    env = dict(os.environ, PAIRKIT_BATCH=str(batch))
    p = subprocess.run([sys.executable, os.path.join(HERE, "pairkit.py"), "check", path] +
                       prefixes, capture_output=True, text=True, env=env)
    return p.returncode, p.stdout, p.stderr


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--simcrawl", default="./simcrawl")
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--pages", type=int, default=400, help="new pages per round")
    ap.add_argument("--seed", type=int, default=1)
    ap.add_argument("--dir", default=None, help="work directory (default: a temporary one)")
    a = ap.parse_args()
    rng = random.Random(a.seed)
    work = a.dir or tempfile.mkdtemp(prefix="simcrawl-stress-")
    os.makedirs(work, exist_ok=True)
    x = os.path.join(work, "x.idx")
    sim = a.simcrawl
    fig = dict(runs=0, killed=0, finished=0, before_save=0, during_save=0, tmp_left=0,
               digests_ahead=0, after_commit=0, repairs=0, tmp_cleanups=0, failures=0)
    failures = []
    t_start = time.time()

    # round 0: the base, never killed
    write_warc(os.path.join(work, "r0.warc"), [("r0", range(a.pages))])
    t0 = time.time()
    subprocess.run([sim, "dedup", "--quiet", "--index", x, os.path.join(work, "r0.warc")],
                   check=True)
    normal = time.time() - t0
    committed = {0: list(range(a.pages))}  # round -> its page numbers
    docs = a.pages

    for r in range(1, a.runs + 1):
        fig["runs"] += 1
        nums = list(range(r * 100000, r * 100000 + a.pages))
        old = rng.sample(sorted(committed), min(3, len(committed)))
        copies = [n for k in old for n in rng.sample(committed[k], min(10, len(committed[k])))]
        warc = os.path.join(work, "run.warc")
        write_warc(warc, [("r%d" % r, nums), ("c%d" % r, copies)])
        delay = rng.uniform(0.2 * normal, 1.3 * normal)
        t0 = time.time()
        p = subprocess.Popen([sim, "dedup", "--quiet", "--index", x, "--warc-out",
                              os.path.join(work, "run.out.warc"), warc],
                             stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            p.wait(timeout=delay)
        except subprocess.TimeoutExpired:
            p.send_signal(signal.SIGKILL)
            p.wait()
        if p.returncode == -signal.SIGKILL:
            fig["killed"] += 1
        elif p.returncode == 0:
            fig["finished"] += 1
            normal = 0.8 * normal + 0.2 * (time.time() - t0)
        else:
            failures.append("round %d: exit %s" % (r, p.returncode))
        leftovers = [n for n in os.listdir(work) if n.startswith("x.idx.tmp") or
                     n.startswith("x.idx.digests.tmp")]

        # the next open: a normal run with exact copies of committed pages
        vr = [k for k in rng.sample(sorted(committed), min(3, len(committed)))]
        vnums = [n for k in vr for n in rng.sample(committed[k], min(10, len(committed[k])))]
        vwarc = os.path.join(work, "verify.warc")
        write_warc(vwarc, [("v%d" % r, vnums)])
        v = subprocess.run([sim, "dedup", "--index", x, "--log",
                            os.path.join(work, "verify.jsonl"), vwarc],
                           capture_output=True, text=True)
        err = v.stderr
        if v.returncode != 0:
            failures.append("round %d: verify run exit %d: %s" % (r, v.returncode, err[:300]))
        if "is newer than" in err:
            fig["repairs"] += 1
        if "temporary file" in err:
            fig["tmp_cleanups"] += 1
        if "is older than" in err or "is missing beside" in err:
            failures.append("round %d: digests older than the index: %s" % (r, err[:300]))
        m = re.search(r"(\d+) new, (\d+) near-duplicate, (\d+) exact-duplicate", err)
        if not m or (int(m.group(1)), int(m.group(2)), int(m.group(3))) != (0, 0, len(vnums)):
            failures.append("round %d: exact copies of committed pages: %s, want 0 new, "
                            "0 near, %d exact" % (r, m.group(0) if m else err[:200], len(vnums)))
        rc, out, cerr = check(x, ["r%d" % r], a.pages)
        if rc != 0:
            failures.append("round %d: pair check: %s" % (r, cerr.strip()[:300]))
        state = out.split("\n")[0].split(" ", 1)[1] if out.startswith("r") else "?"
        if state == "all":
            committed[r] = nums
            docs += a.pages
        elif state != "none":
            failures.append("round %d: the round's pages are %s in the pair" % (r, state))
        mm = re.search(r"ok documents=(\d+)", out)
        if mm and int(mm.group(1)) != docs:
            failures.append("round %d: %s documents, want %d (the committed rounds')"
                            % (r, mm.group(1), docs))
        if p.returncode == -signal.SIGKILL:
            if state == "all":
                fig["after_commit"] += 1
                fig["during_save"] += 1
            elif leftovers or "is newer than" in err:
                fig["during_save"] += 1
                fig["tmp_left"] += bool(leftovers)
                fig["digests_ahead"] += "is newer than" in err
            else:
                fig["before_save"] += 1
        if a.runs >= 20 and r % (a.runs // 10) == 0:
            print("stress: round %d/%d, %d failures so far" % (r, a.runs, len(failures)),
                  file=sys.stderr)

    fig["failures"] = len(failures)
    for f in failures[:20]:
        print("FAIL: %s" % f, file=sys.stderr)
    print("stress: %(runs)d runs of dedup --index: %(killed)d killed with SIGKILL, "
          "%(finished)d finished first" % fig)
    print("stress: kills before the save (reading): %(before_save)d; during the save: "
          "%(during_save)d (after the index's rename %(after_commit)d; before it: "
          "temporary files left %(tmp_left)d, digests one save ahead %(digests_ahead)d, "
          "both possible at once)" % fig)
    print("stress: repairs on the next open: %(repairs)d newer digests dropped, "
          "%(tmp_cleanups)d temporary-file cleanups; failures: %(failures)d" % fig)
    print("stress: %d documents in the end (%d rounds committed), %.0f s; %s"
          % (docs, len(committed), time.time() - t_start, work))
    if not a.dir and not failures:
        shutil.rmtree(work)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
