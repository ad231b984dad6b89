#!/usr/bin/env python3
"""False drops in stream mode (issue 11, the first pages of a host): `simcrawl dedup` fed a
real site page by page, in several orders, and every page it drops as a near-duplicate judged
against the reference of ../shared/tools/falsedrop-score (word 3-shingle Jaccard of the
page's text after removing the lines on more than 30% of the site's pages; J < 0.5: a false
drop, a distinct page dropped with its links).

In a stream (crawl, dedup, the HTTP service, the plugins) a page is fingerprinted with its
host's template table as it is when the page arrives, so the first pages of a host are
fingerprinted with the template blocks the table does not know yet (docs/FINGERPRINT.md,
"Where T comes from"). The site's files are one host here (files are one collection, host
key ""), as a crawl of the site would be.

Orders: sorted (by path), shuffleN (random.Random(N).shuffle of the sorted list), shortest
(by file size, then path: short pages first, the worst case for a site whose short pages
are dominated by its menu), longest.

Generated sites (--synthetic MENU:OWN:PAGES[:PCT[:LEAD]]): short pages under a big menu the
extractor keeps, the case real sites rarely show (the reference: the menu line is on more
than 30% of the pages, so two pages are alike only by their own words).

Mirrors (--mirrors M): M pages of the ordered stream (drawn with a seed fixed by site and
order) are copied with a date sentence added ("Page generated on 2026-11-27 at HH:MM." at
the end of the last paragraph, or as a paragraph before </body>) and inserted in the
stream: half right after their original, half at a random later position. A mirror counts
as found when it is dropped as a near- or exact duplicate; the JSON lines give the pages
kept before each mirror not found (mirrors_lost_at). Mirror copies are written under --tmp
(default: a temporary directory, removed).

Prints per site and order: pages, near-duplicate drops, false drops (pages wrongly
dropped; -v names them), the positions of the false drops in the stream (the number of
pages kept before them; "after < 20 kept": among a site's first pages), mirrors found of
mirrors inserted; then the totals per order and in all. docs/BENCHMARKS.md, "Young hosts
in streams", has the figures.

  python3 tests/bench/stream_falsedrop.py --bin build/simcrawl \
      --sites "$(sh tests/bench/sites.sh 2>/dev/null)" --orders sorted,shuffle1,shortest
  extra options of dedup after --: ... -- --no-templates
"""
import argparse
import collections
import glob
import json
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

import fdref  # falsedrop-score's reference (tests/bench/fdref.py)

ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("--bin", default="build/simcrawl")
ap.add_argument("--cache", default=os.path.expanduser("~/.cache/simcrawl-dev"))
ap.add_argument("--sites", required=True, help="PKG:HTML_ROOT,... (tests/bench/sites.sh)")
ap.add_argument("--only", default="", help="comma-separated PKG names to keep of --sites")
ap.add_argument("--orders", default="sorted,shuffle1,shuffle2,shuffle3,shortest")
ap.add_argument("--mirrors", type=int, default=0, help="mirror copies inserted per site and order")
ap.add_argument("--tmp", default="", help="where mirror copies go (default: a temporary dir)")
ap.add_argument("-v", action="store_true", help="name every false drop")
ap.add_argument("--json", default="", help="append one JSON line per site and order here")
ap.add_argument("--synthetic", default="", help="MENU:OWN:PAGES[:PCT[:LEAD]],...: also a "
                "generated site of PAGES pages, each a MENU-word menu paragraph (the same on every "
                "page; on PCT%% of them, drawn with a fixed seed, default 100), OWN words of its "
                "own (random, seeded) and a footer, as tests/tools/crawl_redis_same.py serves; "
                "the first LEAD pages (default 0) have no menu and 200 words of their own")
ap.add_argument("--classify", action="store_true", help="each false drop classified "
                "(implies -v): (a) young, among a host's first 20 kept pages; (b) the same pair "
                "within k in collection mode (`fingerprint` over the site's files, T of the whole "
                "site); (c) the rest; with the lines the two pages share and on how many of the "
                "pages kept before (the stream's table then) and of the site they are")
ap.add_argument("extra", nargs="*", help="more options of simcrawl dedup (after --)")
a = ap.parse_args()
if a.classify:
    a.v = True


def mirror_html(data, tag):
    """data with one date line changed or added (tag: HH:MM)"""
    line = "Page generated on 2026-11-27 at %s." % tag
    i = data.lower().rfind("</p>")
    if i >= 0:
        return data[:i] + " " + line + data[i:]
    i = data.lower().rfind("</body>")
    if i >= 0:
        return data[:i] + "<p>" + line + "</p>" + data[i:]
    return data + "\n<p>" + line + "</p>\n"


def run_dedup(files):
    cmd = [a.bin, "dedup", "--quiet", "--log", "-"] + a.extra + files
    r = subprocess.run(cmd, capture_output=True, text=True)
    if r.returncode not in (0,):
        sys.exit("dedup failed (%d): %s" % (r.returncode, r.stderr[-400:]))
    return [json.loads(x) for x in r.stdout.splitlines() if x.strip()]


def extract_lines(f, cache):
    """the extracted main text's lines (the template table's blocks, roughly: lines with a
    word character), memoised"""
    if f not in cache:
        r = subprocess.run([a.bin, "extract", "--text", f], capture_output=True, text=True)
        cache[f] = frozenset(x.strip() for x in r.stdout.split("\n") if re.search(r"\w", x))
    return cache[f]


def collection_fps(files):
    """path -> fingerprint (int) in collection mode over files (T of the whole site)"""
    opts = [x for x in a.extra if x == "--no-templates"]
    r = subprocess.run([a.bin, "fingerprint"] + opts + list(files), capture_output=True,
                       text=True)
    out = {}
    for x in r.stdout.splitlines():
        if len(x) > 18 and x[16:18] == "  ":
            out[x[18:]] = int(x[:16], 16)
    return out


def is_tpl(c, d):
    return c >= 3 and 100 * c >= 20 * d


def classify(u, o, kept_files, files, cache, cfp):
    """(class, text lines): see --classify"""
    lu, lo = extract_lines(u, cache), extract_lines(o, cache)
    shared = lu & lo
    cd = None
    if u in cfp and o in cfp:
        cd = bin(cfp[u] ^ cfp[o]).count("1")
    nk = len(kept_files)
    if nk < 20:
        cls = "a"
    elif cd is not None and cd <= 3:
        cls = "b"
    else:
        cls = "c"
    rows = []
    wu = sum(len(x.split()) for x in lu)
    wo = sum(len(x.split()) for x in lo)
    ws = sum(len(x.split()) for x in shared)
    for x in sorted(shared, key=lambda x: -len(x.split()))[:4]:
        ck = sum(1 for f in kept_files if x in extract_lines(f, cache))
        ca = sum(1 for f in files if x in extract_lines(f, cache))
        rows.append("      shared %d words on %d of %d kept before%s, %d of %d pages%s: %.60s" % (
            len(x.split()), ck, nk, " (template then)" if is_tpl(ck, nk) else "", ca,
            len(files), " (template)" if is_tpl(ca, len(files)) else "", x))
    head = "    class (%s): collection distance %s; words %d and %d, %d in %d shared lines" % (
        cls, "none" if cd is None else cd, wu, wo, ws, len(shared))
    return cls, [head] + rows


def order_files(files, order, size):
    if order == "sorted":
        return list(files)
    if order.startswith("shuffle"):
        out = list(files)
        random.Random(int(order[7:] or 1)).shuffle(out)
        return out
    if order == "shortest":
        return sorted(files, key=lambda f: (size[f], f))
    if order == "longest":
        return sorted(files, key=lambda f: (-size[f], f))
    sys.exit("unknown order " + order)


sites = [x.split(":", 1) for x in a.sites.split(",") if x]
if a.only:
    keep = set(a.only.split(","))
    sites = [s for s in sites if s[0] in keep]
orders = a.orders.split(",")
tmp = a.tmp or tempfile.mkdtemp(prefix="stream_falsedrop.")


def synthetic_site(spec):
    """a generated site under tmp (its --cache is tmp): (name, sub)"""
    f = [int(x) for x in spec.split(":")]
    menu, own, pages = f[:3]
    pct = f[3] if len(f) > 3 else 100
    lead = f[4] if len(f) > 4 else 0
    name = "synthetic-%d-%d-%d-%d-%d" % (menu, own, pages, pct, lead)
    root = os.path.join(tmp, "sites", name, "html")
    os.makedirs(root, exist_ok=True)
    words = ["w%03d" % i for i in range(800)]
    mtext = " ".join("menu%03d" % i for i in range(menu))
    foot = "Copyright the example project all rights reserved terms of use privacy policy"
    for n in range(pages):
        r = random.Random(n * 104729 + 5)
        body = " ".join(r.choice(words) for _ in range(own))
        m = mtext if r.random() * 100 < pct else ""
        if n < lead:  # a home page and the like: no menu, a long text of its own
            m, body = "", " ".join("x%04d" % r.randrange(5000) for _ in range(200))
        with open(os.path.join(root, "p%04d.html" % n), "w") as out:
            out.write("<html><head><title>Page %d</title></head><body><div class=\"content\">"
                      "<p>%s</p><p>%s</p><p>%s</p></div></body></html>\n" % (n, m, body, foot))
    return name, "html"


if a.synthetic:
    synth = [synthetic_site(x) for x in a.synthetic.split(",") if x]
    sites += [(n, os.path.join(tmp, "sites", n, sub)) for n, sub in synth]
tot = collections.defaultdict(lambda: collections.Counter())
jout = open(a.json, "a") if a.json else None
for site, sub in sites:
    root = sub if os.path.isabs(sub) else os.path.join(a.cache, "sites", site, sub)
    if not os.path.isdir(root):
        print("%s: not unpacked (sh tests/bench/sites.sh)" % site)
        continue
    files = sorted(glob.glob(root + "/**/*.html", recursive=True))
    raw = {f: open(f, encoding="utf-8", errors="replace").read() for f in files}
    lines = {f: fdref.text_lines(raw[f]) for f in files}
    common = fdref.common_lines(lines)
    ref = {f: fdref.ref(lines[f], common) for f in files}
    size = {f: os.path.getsize(f) for f in files}
    mdir = os.path.join(tmp, site)
    xcache = {}
    cfp = None
    for order in orders:
        stream = order_files(files, order, size)
        mirrors = {}  # mirror path -> original
        if a.mirrors:
            os.makedirs(mdir, exist_ok=True)
            rng = random.Random("mirrors:" + site + ":" + order)
            picks = rng.sample(range(len(stream)), min(a.mirrors, len(stream)))
            plan = []
            for n, i in enumerate(sorted(picks)):
                f = stream[i]
                mp = os.path.join(mdir, "%s.m%d.html" % (order, n))
                with open(mp, "w", encoding="utf-8") as out:
                    out.write(mirror_html(raw[f], "%02d:%02d" % (n % 24, (7 * n) % 60)))
                mirrors[mp] = f
                ref[mp] = fdref.ref(fdref.read_lines(mp), common)
                early = n % 2 == 0
                at = i + 1 if early else rng.randrange(i + 1, len(stream) + 1)
                plan.append((at, n, mp))
            out_stream = list(stream)
            for at, n, mp in sorted(plan, reverse=True):
                out_stream.insert(at, mp)
            stream = out_stream
        log = run_dedup(stream)
        kept = 0
        c = collections.Counter()
        pos = []
        lost = []  # pages kept before each mirror not found
        wrong = []
        kept_files = []
        for rec in log:
            d = rec.get("decision")
            u = rec.get("uri") or rec.get("file")
            if u in mirrors:
                c["mirrors"] += 1
                if d in ("near-duplicate", "exact-duplicate"):
                    c["mirrors_found"] += 1
                else:
                    lost.append(kept)
                continue
            if d == "new":
                kept += 1
                kept_files.append(u)
            elif d == "near-duplicate":
                c["near"] += 1
                o = rec.get("duplicate_of")
                o = mirrors.get(o, o)
                j = fdref.jaccard(ref.get(u, set()), ref.get(o, set()))
                if j < 0.5:
                    c["false"] += 1
                    pos.append(kept)
                    wrong.append((u, o, rec.get("distance"), j, kept, list(kept_files)))
            c["pages"] += 1
        c["early_false"] = sum(1 for p in pos if p < 20)
        msg = "%s %s: %d pages, %d near-dup, %d wrongly dropped (%d after < 20 kept)" % (
            site, order, c["pages"], c["near"], c["false"], c["early_false"])
        if pos:
            msg += ", at kept " + ",".join(str(p) for p in pos[:12]) + (
                "..." if len(pos) > 12 else "")
        if a.mirrors:
            msg += "; mirrors found %d of %d" % (c["mirrors_found"], c["mirrors"])
        print(msg, flush=True)
        if a.v:
            for u, o, dist, j, k, kf in wrong:
                print("  false: %s ~ %s d=%s refJ=%.2f kept-before=%d" % (
                    os.path.relpath(u, root), os.path.relpath(o, root), dist, j, k))
                if a.classify:
                    if cfp is None:
                        cfp = collection_fps(files)
                    cls, rows = classify(u, o, kf, files, xcache, cfp)
                    c["class_" + cls] += 1
                    print("\n".join(rows))
        if jout:
            jout.write(json.dumps({"site": site, "order": order, **c, "positions": pos,
                                   "false_pairs": [[os.path.relpath(w[0], root),
                                                    os.path.relpath(w[1], root), w[2],
                                                    round(w[3], 3), w[4]] for w in wrong],
                                   "mirrors_lost_at": lost}) + "\n")
        tot[order] += c
        tot["all"] += c
for k in orders + ["all"]:
    c = tot[k]
    msg = "total %s: %d pages, %d near-dup, %d wrongly dropped (%d after < 20 kept)" % (
        k, c["pages"], c["near"], c["false"], c["early_false"])
    if a.mirrors:
        msg += "; mirrors found %d of %d" % (c["mirrors_found"], c["mirrors"])
    if a.classify:
        msg += "; classes a %d, b %d, c %d" % (c["class_a"], c["class_b"], c["class_c"])
    print(msg)
if not a.tmp:
    shutil.rmtree(tmp, ignore_errors=True)
