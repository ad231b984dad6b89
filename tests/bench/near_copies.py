#!/usr/bin/env python3
"""Near-copies of one page in a stream (issue 11, branch stream11h): how many are dropped.

A host (files: one collection, host key "") gets LEAD distinct pages, then one page P, then
COPIES near-copies of P, each with its own date sentence ("Page generated on 2026-11-27 at
HH:MM.", as tests/bench/stream_falsedrop.py's mirrors: at the end of the last paragraph),
the way a session-id or calendar URL serves the same page with a changing line. Every copy
should be dropped (as a near- or exact duplicate). Counting the blocks of near-duplicates
(docs/FINGERPRINT.md, "Where T comes from") can make P's own text a template of a young
host after a few copies (c >= 3, share >= 20%), and a copy fingerprinted without it is no
longer a duplicate of P: this counts the copies kept.

Pages: LEAD pages of PARAS paragraphs of 40 random words each (seeded), P likewise; with
--menu M every page (P and its copies included) also has an M-word menu paragraph first.

  python3 tests/bench/near_copies.py --bin build/simcrawl --lead 0,1,5,10,20,50 --copies 30
Prints one line per LEAD: copies dropped of COPIES, and the first copy kept.
"""
import argparse
import json
import os
import random
import shutil
import subprocess
import sys
import tempfile

ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
ap.add_argument("--bin", default="build/simcrawl")
ap.add_argument("--lead", default="0,1,2,5,10,15,20,50",
                help="comma-separated numbers of distinct pages before P")
ap.add_argument("--copies", type=int, default=30)
ap.add_argument("--paras", type=int, default=3)
ap.add_argument("--menu", type=int, default=0, help="words of a menu paragraph on every page")
ap.add_argument("extra", nargs="*", help="more options of simcrawl dedup (after --)")
a = ap.parse_args()

WORDS = ["w%03d" % i for i in range(2000)]


def page(n, menu):
    r = random.Random(n * 7919 + 11)
    paras = [" ".join(r.choice(WORDS) for _ in range(40)) for _ in range(a.paras)]
    if menu:
        paras.insert(0, " ".join("menu%03d" % i for i in range(menu)))
    return "<html><head><title>Page %d</title></head><body><div class=\"content\">%s</div>" \
        "</body></html>\n" % (n, "".join("<p>%s</p>" % p for p in paras))


def copy_of(html, n):
    line = "Page generated on 2026-11-27 at %02d:%02d." % (n // 60 % 24, n % 60)
    i = html.rfind("</p>")
    return html[:i] + " " + line + html[i:]


tmp = tempfile.mkdtemp(prefix="near_copies.")
total = [0, 0]
try:
    for lead in [int(x) for x in a.lead.split(",") if x]:
        d = os.path.join(tmp, "lead%d" % lead)
        os.makedirs(d)
        files = []
        for n in range(lead + 1):
            f = os.path.join(d, "p%04d.html" % n)
            with open(f, "w") as out:
                out.write(page(n, a.menu))
            files.append(f)
        p = page(lead, a.menu)
        copies = []
        for n in range(a.copies):
            f = os.path.join(d, "p%04d.copy%03d.html" % (lead, n))
            with open(f, "w") as out:
                out.write(copy_of(p, n + 1))
            copies.append(f)
        r = subprocess.run([a.bin, "dedup", "--quiet", "--log", "-"] + a.extra + files + copies,
                           capture_output=True, text=True)
        if r.returncode != 0:
            sys.exit("dedup failed (%d): %s" % (r.returncode, r.stderr[-400:]))
        dec = {}
        for x in r.stdout.splitlines():
            if x.strip():
                rec = json.loads(x)
                dec[rec.get("uri") or rec.get("file")] = rec.get("decision")
        dropped = [dec.get(f) in ("near-duplicate", "exact-duplicate") for f in copies]
        first = dropped.index(False) + 1 if False in dropped else 0
        lead_kept = sum(1 for f in files if dec.get(f) == "new")
        print("lead %d (%d kept): copies dropped %d of %d%s" % (
            lead, lead_kept, sum(dropped), len(copies),
            ", first kept: copy %d" % first if first else ""))
        total[0] += sum(dropped)
        total[1] += len(copies)
    print("total: copies dropped %d of %d" % tuple(total))
finally:
    shutil.rmtree(tmp, ignore_errors=True)
