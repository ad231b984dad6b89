#!/usr/bin/python3
"""Release pairs of other generators (issue 11; docs/BENCHMARKS.md, "Release pairs of other
generators (relpairs11m)"): near-duplicate recall and precision on two releases of the same
HTML documentation, for generators nothing was tuned to (Doxygen, gtk-doc, Javadoc,
BoostBook, DocBook), with the definitions of ../shared/tools/neardup-score:

  same page    the same path relative to each release's HTML root
  positives    same-path pairs whose reference Jaccard is >= 0.9
  recall       positives whose fingerprints are within k (a page that `BIN fingerprint`
               leaves without a fingerprint counts as a miss)
  precision    reported pairs (any two pages of the two releases within k) whose
               reference Jaccard is >= 0.7

neardup-score's reference is Sphinx's div[role=main], which these generators do not write.
Here the reference is generator-independent, ../shared/tools/falsedrop-score's: a page's
text lines (tags that start a block start a line), with the lines on more than 30% of its
release's pages left out (the site's template), as word 4-gram sets (words as
neardup-score takes them: \\w+, lowercased). --area NAME instead takes the text inside the
first element matching a known content area (see AREAS) and falls back to the template-free
text on a page that has none.

The fingerprints are `BIN fingerprint -- FILES` over both releases in one call (so its
template table is learned over both, as neardup-score runs it); the pairs within k are
found by brute force over them (split into k+1 blocks: a pair within k agrees on one) and
checked against `BIN pairs --k K --format jsonl -- FILES`.

  python3 tests/bench/relpairs.py --bin build/simcrawl                 # every pair of PAIRS
  python3 tests/bench/relpairs.py --bin build/simcrawl --pairs libomp --show 20
  python3 tests/bench/relpairs.py --sets PKG:ROOT,PKG:ROOT [--area doxygen]

Prints per pair: pages, fingerprinted, positives, recall, reported pairs, precision, the
misses (our distance or 'nofp', reference J, path) and the false pairs (reference J < 0.7),
then one line 'relpairs PAIR recall R precision P' a pair. Exits 1 when a pair is below
--min-recall or --min-precision, or when `BIN pairs` differs from brute force."""
import argparse
import collections
import json
import os
import re
import subprocess
import sys
from html.parser import HTMLParser

import debpkg  # a Debian package unpacked once (tests/bench/debpkg.py)
import fdref  # falsedrop-score's reference text lines (tests/bench/fdref.py)

# name: (PACKAGE:HTML_ROOT,PACKAGE:HTML_ROOT, generator), releases of the same documentation
# in Debian 12 (bookworm) whose generator is not the LLVM manuals' Sphinx.
PAIRS = {
    'libomp-15/16': ('libomp-15-doc:usr/share/doc/libomp-15-dev/html,'
                     'libomp-16-doc:usr/share/doc/libomp-16-dev/html', 'Doxygen 1.9'),
    'pangomm-2.46/2.50': ('libpangomm-1.4-doc:usr/share/doc/libpangomm-1.4-doc/reference/html,'
                          'libpangomm-2.48-doc:usr/share/doc/libpangomm-2.48-doc/reference/html',
                          'Doxygen (mm-common)'),
    'gtksourceview-3/4': ('libgtksourceview-3.0-doc:usr/share/gtk-doc/html/gtksourceview-3.0,'
                          'libgtksourceview-4-doc:usr/share/gtk-doc/html/gtksourceview-4.0',
                          'gtk-doc'),
    'libstdc++-11/12-manual': ('libstdc++-11-doc:usr/share/doc/gcc-11-base/libstdc++/manual,'
                               'libstdc++-12-doc:usr/share/doc/gcc-12-base/libstdc++/manual',
                               'DocBook XSL'),
    'libstdc++-11/12-api': ('libstdc++-11-doc:usr/share/doc/gcc-11-base/libstdc++/user,'
                            'libstdc++-12-doc:usr/share/doc/gcc-12-base/libstdc++/user',
                            'Doxygen'),
    'biojava-5/6': ('libbiojava5-java-doc:usr/share/doc/libbiojava5-java/apidocs,'
                    'libbiojava6-java-doc:usr/share/doc/libbiojava6-java/apidocs', 'Javadoc'),
    'boost-1.74/1.81': ('libboost1.74-doc:usr/share/doc/libboost1.74-doc,'
                        'libboost1.81-doc:usr/share/doc/libboost1.81-doc',
                        'BoostBook, QuickBook and hand-written HTML'),
}

# --area: a generator's content area, (tag, attribute, value); a class matches as a word
AREAS = {
    'sphinx': ('div', 'role', 'main'),
    'doxygen': ('div', 'class', 'contents'),
    'javadoc': ('main', None, None),
}

ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0],
                             formatter_class=argparse.RawDescriptionHelpFormatter)
ap.add_argument('--bin', default='./build/simcrawl')
ap.add_argument('--cache', default=os.path.expanduser('~/.cache/simcrawl-dev'),
                help='where the Debian doc packages are unpacked (CACHE/PACKAGE)')
ap.add_argument('--pairs', default='', help='run only the pairs of PAIRS whose name contains one of these (comma-separated)')
ap.add_argument('--sets', default='', help='one pair PACKAGE:HTML_ROOT,PACKAGE:HTML_ROOT instead of PAIRS')
ap.add_argument('--area', default='', choices=[''] + sorted(AREAS), help='reference = this content area')
ap.add_argument('--k', type=int, default=3)
ap.add_argument('--line-numbers', default='drop', choices=['drop', 'keep'], help='keep: the reference keeps code listings\' line numbers (falsedrop-score\'s lines as they are)')
ap.add_argument('--min-words', type=int, default=5, help='a positive has at least this many reference words on each side (the fingerprint\'s own minimum); pages under it are counted apart')
ap.add_argument('--share', type=float, default=0.3, help='template: lines on more than this share of a release\'s pages')
ap.add_argument('--show', type=int, default=30, help='misses and false pairs listed a pair')
ap.add_argument('--min-recall', type=float, default=0.0)
ap.add_argument('--min-precision', type=float, default=0.0)
ap.add_argument('--json', default='', help='append one JSON line a pair (misses and false pairs with it)')
a = ap.parse_args()


def unpack(pkg, rel):
    """apt-get download PKG into the cache and unpack it once (neardup-score's layout)"""
    return os.path.join(debpkg.unpack(pkg, os.path.join(a.cache, pkg), a.cache), rel)


class Area(HTMLParser):
    """the text inside the first element matching (tag, attr, value)"""
    VOID = {'br', 'img', 'meta', 'link', 'hr', 'input', 'wbr', 'col', 'area', 'base', 'source'}

    def __init__(self, want):
        super().__init__(convert_charrefs=True)
        self.want, self.depth, self.done, self.skip, self.out = want, 0, False, 0, []

    def match(self, t, at):
        tag, attr, val = self.want
        if t != tag:
            return False
        if attr is None:
            return True
        v = dict(at).get(attr) or ''
        return val in v.split() if attr == 'class' else v == val

    def handle_starttag(self, t, at):
        if t in ('script', 'style'):
            self.skip += 1
        if t in self.VOID:
            return
        if self.depth:
            self.depth += 1
        elif not self.done and self.match(t, at):
            self.depth = 1

    def handle_endtag(self, t):
        if t in ('script', 'style'):
            self.skip = max(0, self.skip - 1)
        if t in self.VOID or not self.depth:
            return
        self.depth -= 1
        if not self.depth:
            self.done = True

    def handle_data(self, d):
        if self.depth and not self.skip:
            self.out.append(d)


def drop_line_number(x):
    """a code listing's line number at the start of a text line (Doxygen's `<span
    class="lineno">  42</span>`, a bare number, then a blank or the line's end) is no text of the page: one
    line inserted near the top renumbers every line below it"""
    return re.sub(r'^\d+( |$)', '', x) if a.line_numbers == 'drop' else x


def grams(text):
    w = re.findall(r'\w+', text.lower())
    NWORDS.append(len(w))
    return frozenset(tuple(w[i:i + 4]) for i in range(max(1, len(w) - 3))) if w else frozenset()


NWORDS = []


def references(files, nwords):
    """reference 4-gram set of every file of one release (its word count in nwords)"""
    raw = {f: open(f, 'rb').read().decode('utf-8', 'replace') for f in files}
    lines = {f: [drop_line_number(x) for x in fdref.text_lines(raw[f])] for f in files}
    df = collections.Counter(x for ls in lines.values() for x in set(ls))
    common = {x for x, c in df.items() if c > a.share * len(files)}
    out = {}
    for f in files:
        if a.area:
            p = Area(AREAS[a.area])
            p.feed(raw[f])
            if p.done or p.depth:
                out[f] = grams(' '.join(p.out))
                nwords[f] = NWORDS.pop()
                continue
        out[f] = grams(' '.join(x for x in lines[f] if x not in common))
        nwords[f] = NWORDS.pop()
    return out


def jac(x, y):
    return 1.0 if not x and not y else len(x & y) / len(x | y)


def within_k(fp, k):
    """every pair of paths whose fingerprints are within k, by k+1 blocks of the 64 bits"""
    nb = k + 1
    bounds = [(64 * i // nb, 64 * (i + 1) // nb) for i in range(nb)]
    found = set()
    items = sorted(fp.items())
    for lo, hi in bounds:
        mask = (1 << (hi - lo)) - 1
        buckets = collections.defaultdict(list)
        for p, h in items:
            buckets[(h >> lo) & mask].append((p, h))
        for b in buckets.values():
            for i in range(len(b)):
                for j in range(i + 1, len(b)):
                    if (b[i][1] ^ b[j][1]).bit_count() <= k:
                        found.add((b[i][0], b[j][0]))
    return found


def run_pair(name, sets, gen):
    roots = [unpack(*s.split(':', 1)) for s in sets.split(',')]
    rel_of, per = {}, [[], []]
    for i, r in enumerate(roots):
        for dp, dn, fn in os.walk(r):
            for f in fn:
                if f.endswith('.html'):
                    p = os.path.join(dp, f)
                    per[i].append(p)
                    rel_of[p] = (i, os.path.relpath(p, r))
    files = sorted(per[0] + per[1])
    r = subprocess.run([a.bin, 'fingerprint', '--'] + files, capture_output=True, text=True)
    if r.returncode != 0:
        print(f'{name}: fingerprint failed: {r.stderr[-500:]}')
        return False
    fp = {}
    for line in r.stdout.splitlines():
        h, p = line.split(None, 1)
        fp[p] = int(h, 16)
    found = within_k(fp, a.k)
    r = subprocess.run([a.bin, 'pairs', '--k', str(a.k), '--format', 'jsonl', '--'] + files,
                       capture_output=True, text=True)
    theirs = {tuple(sorted((o['a'], o['b']))) for o in map(json.loads, r.stdout.splitlines())}
    exact = r.returncode == 0 and theirs == found
    ref, nw = {}, {}
    for i in (0, 1):
        ref.update(references(sorted(per[i]), nw))
    by_rel = collections.defaultdict(list)
    for p in files:
        by_rel[rel_of[p][1]].append(p)
    pos, short = [], []
    for rel, v in by_rel.items():
        if len(v) == 2:
            j = jac(ref[v[0]], ref[v[1]])
            if j < 0.9:
                continue
            if min(nw[v[0]], nw[v[1]]) >= a.min_words:
                pos.append((rel, v[0], v[1], j))
            else:
                short.append((rel, v[0], v[1], j))
    # the same pages under --min-words reference words (a Doxygen search page, a member
    # index whose every line is on 30% of the pages): the strict recall counts them too
    short_hit = sum(1 for rel, x, y, j in short if tuple(sorted((x, y))) in found)
    short_nofp = sum(1 for rel, x, y, j in short if x not in fp or y not in fp)
    misses = []
    for rel, x, y, j in pos:
        q = tuple(sorted((x, y)))
        if q in found:
            continue
        d = (fp[x] ^ fp[y]).bit_count() if x in fp and y in fp else None
        misses.append((rel, d, j, len(ref[x]), len(ref[y])))
    rec = 1 - len(misses) / max(1, len(pos))
    rj = {q: jac(ref[q[0]], ref[q[1]]) for q in found}
    false = sorted((j, q) for q, j in rj.items() if j < 0.7)
    prec = 1 - len(false) / max(1, len(found))
    nofp = len(files) - len(fp)
    print(f'== {name} ({gen}): pages {len(per[0])} + {len(per[1])}, same path {sum(len(v) == 2 for v in by_rel.values())}, '
          f'fingerprinted {len(fp)} (none: {nofp})')
    strict = 1 - (len(misses) + len(short) - short_hit) / max(1, len(pos) + len(short))
    print(f'   same path at ref J >= 0.9 but under {a.min_words} reference words: {len(short)} '
          f'(within k {short_hit}, without a fingerprint {short_nofp}); recall counting them {strict:.3f}')
    print(f'   positives {len(pos)}, missed {len(misses)}, recall {rec:.3f}; reported within k={a.k} {len(found)}, '
          f'ref J < 0.7 {len(false)} (< 0.5 {sum(1 for j, q in false if j < 0.5)}), precision {prec:.3f}; '
          f'pairs = brute force: {exact}')
    for rel, d, j, nx, ny in sorted(misses, key=lambda m: (m[1] is not None, m[1] or 0), reverse=True)[:a.show]:
        print(f'   miss  d={"nofp" if d is None else d:>4}  refJ={j:.3f}  grams {nx}/{ny}  {rel}')
    for j, (x, y) in false[:a.show]:
        d = (fp[x] ^ fp[y]).bit_count()
        sx, sy = rel_of[x], rel_of[y]
        print(f'   false d={d}  refJ={j:.3f}  {sx[0]}:{sx[1]} ~ {sy[0]}:{sy[1]}')
    print(f'relpairs {name} recall {rec:.3f} precision {prec:.3f}')
    if a.json:
        with open(a.json, 'a') as f:
            f.write(json.dumps({'pair': name, 'generator': gen, 'pages': [len(per[0]), len(per[1])],
                                'fingerprinted': len(fp), 'positives': len(pos), 'recall': rec,
                                'short': len(short), 'short_within_k': short_hit, 'strict_recall': strict,
                                'reported': len(found), 'precision': prec, 'exact': exact,
                                'misses': [{'path': m[0], 'distance': m[1], 'refj': m[2]} for m in misses],
                                'false': [{'a': rel_of[x][1], 'b': rel_of[y][1], 'refj': j} for j, (x, y) in false]}) + '\n')
    return rec >= a.min_recall and prec >= a.min_precision and exact


if a.sets:
    todo = [(a.sets.replace(':', ' ').split()[0], a.sets, '')]
else:
    want = [w for w in a.pairs.split(',') if w]
    todo = [(n, s, g) for n, (s, g) in PAIRS.items() if not want or any(w in n for w in want)]
ok = True
for n, s, g in todo:
    ok = run_pair(n, s, g) and ok
sys.exit(0 if ok else 1)
