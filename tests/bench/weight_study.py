#!/usr/bin/python3
"""Expected recall and expected false pairs of a weight scheme, independent of one draw
of the hash (docs/FINGERPRINT.md section 5, "Why version 6 stands"; issue 11).

neardup_study.py compares feature schemes on raw token strings; this one starts from what
the real pipeline fingerprints: a build with -DDEDUP_BENCH_SEEDS run with
SIMCRAWL_BENCH_DUMP=FILE writes, for every page of a collection, its own token string
(the site's template blocks left out, exactly as `simcrawl fingerprint` over the same
files in the same order computes them), its whole token string and its fingerprint. On
those, each scheme gives every page either a weight vector (simhash) or an exact key (a
text of fewer than BOUND own tokens: the hash of its whole token string), and

  expected recall  (release pairs, ../shared/tools/neardup-score's positives: same path,
                   reference div[role=main] word-4-gram Jaccard >= 0.9): the mean over the
                   positives of P[Binomial(64, angle/pi) <= k] (Charikar), angle between
                   the two weight vectors; 1 for two equal exact keys, 0 otherwise;
  expected precision  1 - E[reported pairs with reference J < 0.7] / E[reported pairs]
                   over all page pairs of the two releases;
  expected false pairs  (the sites of tests/bench/sites.sh, ../shared/tools/falsedrop-score's
                   reference: word 3-shingle Jaccard of the page text without the lines on
                   more than 30% of the site's pages < 0.5): the sum of that probability
                   over the page pairs of each site.

Pairs at cosine below --min-cosine (0.6: probability < 1e-6 each) are left out. Beside the
expectations, the observed figures of draw 0 (the real hash: the study recomputes every
fingerprint and checks that version 6's equal the binary's).

  python3 tests/bench/weight_study.py --bin build/bench-seed/simcrawl \\
      --sites "$(sh tests/bench/sites.sh)" [--schemes v6,e15/16,...]

The token strings are the binary's, so the same study measures a token rule: a build of
another rule, or SIMCRAWL_BENCH_JOINS=N in the environment (extract/tokens.c; version 7's
joins, tests/bench/token_study.sh), with its own --work. The references depend only on
the pages: --refs-from WORK reuses another run's (about two thirds of the time).
Needs python3-numpy and python3-scipy (study only).
"""
import argparse, collections, ctypes, glob, math, os, pickle, re, subprocess, sys, time
from html.parser import HTMLParser

import numpy as np
import scipy.sparse as sp

import debpkg  # a Debian package unpacked once (tests/bench/debpkg.py)
import fdref  # falsedrop-score's reference (tests/bench/fdref.py)

ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
ap.add_argument('--bin', default='build/bench-seed/simcrawl', help='simcrawl built with -DDEDUP_BENCH_SEEDS')
ap.add_argument('--cache', default=os.path.expanduser('~/.cache/simcrawl-dev'))
ap.add_argument('--work', default='/tmp/simcrawl-weight-study', help='cache of dumps and references')
ap.add_argument('--refs-from', default='', help='another --work directory whose references to reuse '
                '(the same pages in the same order; the references do not depend on the build)')
ap.add_argument('--sites', default='', help='PKG:HTML_ROOT,... (falsedrop-score --sites); empty: none')
ap.add_argument('--pairs', default='tuning,heldout', help='which release pairs: tuning, heldout or both')
ap.add_argument('--schemes', default='', help='comma-separated scheme names (default: all)')
ap.add_argument('--k', type=int, default=3)
ap.add_argument('--min-cosine', type=float, default=0.6)
ap.add_argument('--draws', type=int, default=4, help='observed figures for draws 0 .. N-1 of the hash '
                '(the seed XOR N, as SIMCRAWL_BENCH_SEED=N does)')
ap.add_argument('--edit-study', action='store_true', help='also: P[within k] for texts of 24 to 96 tokens '
                'with one word replaced (what a short-text bound costs)')
ap.add_argument('--verbose', action='store_true', help='per-site expected false pairs')
ap.add_argument('--tokens', default='', help='a token rule applied to the dumped token strings (own and whole) '
                'before the features: digits0 (a token of ASCII digits only becomes "0"), nodigits (such a '
                'token is left out); empty: the binary\'s tokens (docs/BENCHMARKS.md, "Held-out recall, miss by miss")')
a = ap.parse_args()

SEED = 0x73696d6372617731  # docs/FINGERPRINT.md section 3
TUNING = [  # tests/bench/run.sh RELEASE_PAIRS
    'clang-14-doc:usr/share/doc/clang-14/html,clang-15-doc:usr/share/doc/clang-15/html',
    'clang-16-doc:usr/share/doc/clang-16/html,clang-19-doc:usr/share/doc/clang-19/html',
    'clang-13-doc:usr/share/doc/clang-13/html,clang-14-doc:usr/share/doc/clang-14/html',
    'clang-15-doc:usr/share/doc/clang-15/html,clang-16-doc:usr/share/doc/clang-16/html',
    'llvm-14-doc:usr/share/doc/llvm-14-doc/html,llvm-15-doc:usr/share/doc/llvm-15-doc/html',
    'llvm-15-doc:usr/share/doc/llvm-15-doc/html,llvm-16-doc:usr/share/doc/llvm-16-doc/html',
    'llvm-16-doc:usr/share/doc/llvm-16-doc/html,llvm-19-doc:usr/share/doc/llvm-19-doc/html']
HELDOUT = [  # tests/bench/run.sh HELDOUT_PAIRS: measured, never tuned to
    'clang-19-doc:usr/share/doc/clang-19/html,clang-22-doc:usr/share/doc/clang-22/html',
    'llvm-19-doc:usr/share/doc/llvm-19-doc/html,llvm-22-doc:usr/share/doc/llvm-22-doc/html',
    'clang-13-doc:usr/share/doc/clang-13/html,clang-15-doc:usr/share/doc/clang-15/html',
    'clang-14-doc:usr/share/doc/clang-14/html,clang-16-doc:usr/share/doc/clang-16/html',
    'llvm-13-doc:usr/share/doc/llvm-13-doc/html,llvm-14-doc:usr/share/doc/llvm-14-doc/html']


def r78(t):  # FINGERPRINT.md section 5, step by step as the C code does it
    r2 = np.sqrt(t); r4 = np.sqrt(r2); r8 = np.sqrt(r4)
    return (r2 * r4) * r8


def scheme(expo=None, pair=1.0, bound=80, bm25=None, cap=True, digit=1.0):
    """A weight scheme: the shape of f(min(tf, c)), the weight of pairs against words,
    the short-text bound, the weight of a shingle that holds a token of digits only (a
    section or version number) against the others. Version 6 is scheme()."""
    def weights(tf, ispair, n, isdig=None):
        t = np.minimum(tf, max(1, min(64, math.isqrt(n)))) if cap else tf
        t = t.astype(np.float64)
        f = t * (bm25 + 1) / (t + bm25) if bm25 else r78(t) if expo is None else t ** expo
        if digit != 1.0 and isdig is not None:
            f = f * np.where(isdig, digit, 1.0)
        return np.floor(256.0 * f * np.where(ispair, pair, 1.0) + 0.5)
    weights.bound = bound
    return weights


SCHEMES = {
    'v6': scheme(),
    'tf^15/16': scheme(expo=15 / 16), 'tf^3/4': scheme(expo=0.75),
    'pairs x0.5': scheme(pair=0.5), 'pairs x2': scheme(pair=2.0),
    'bound 64': scheme(bound=64), 'bound 48': scheme(bound=48),
    'no tf cap': scheme(cap=False),
    'BM25 k1=1.2': scheme(bm25=1.2, cap=False), 'BM25 k1=4': scheme(bm25=4.0, cap=False),
    # the frontier between them: a flatter tf with pairs weighing less, and the reverse
    'tf^3/4 + pairs x0.75': scheme(expo=0.75, pair=0.75), 'tf^15/16 + pairs x1.5': scheme(expo=15 / 16, pair=1.5),
    'pairs x0.75': scheme(pair=0.75), 'pairs x1.5': scheme(pair=1.5),
    # shingles holding a number (rec11i: section numbers renumbered between releases)
    'digits x0': scheme(digit=0.0), 'digits x0.25': scheme(digit=0.25), 'digits x0.5': scheme(digit=0.5),
}
DIGITS = re.compile(r'[0-9]+\Z')


def retoken(s):
    """--tokens: a token rule on a dumped token string."""
    if not a.tokens or not s:
        return s
    t = s.split(' ')
    if a.tokens == 'digits0':
        t = ['0' if DIGITS.match(x) else x for x in t]
    elif a.tokens == 'nodigits':
        t = [x for x in t if not DIGITS.match(x)]
    else:
        sys.exit('--tokens: unknown rule ' + a.tokens)
    return ' '.join(t)

_lib = ctypes.CDLL('libxxhash.so.0')
_xs = _lib.XXH3_64bits_withSeed
_xs.restype, _xs.argtypes = ctypes.c_uint64, [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
_x = _lib.XXH3_64bits
_x.restype, _x.argtypes = ctypes.c_uint64, [ctypes.c_char_p, ctypes.c_size_t]


def unpack(pkg, rel, sites_layout=False):
    """The HTML root, fetched as neardup-score (CACHE/PKG) or falsedrop-score
    (CACHE/sites/PKG) does."""
    d = os.path.join(a.cache, 'sites', pkg) if sites_layout else os.path.join(a.cache, pkg)
    return os.path.join(debpkg.unpack(pkg, d, os.path.join(a.cache, 'debs')), rel)


# ---------------- references (copies of the two scorers' rules) ----------------
class Main(HTMLParser):  # neardup-score: text inside role=main
    VOID = {'br', 'img', 'meta', 'link', 'hr', 'input', 'wbr', 'col', 'area', 'base', 'source'}
    def __init__(s):
        super().__init__(convert_charrefs=True); s.stack = []; s.inm = 0; s.skip = 0; s.out = []
    def handle_starttag(s, t, at):
        if t in ('script', 'style'): s.skip += 1
        if t in s.VOID: return
        m = dict(at).get('role') == 'main'; s.stack.append(m); s.inm += m
    def handle_endtag(s, t):
        if t in ('script', 'style'): s.skip = max(0, s.skip - 1)
        if t in s.VOID: return
        if s.stack and s.stack.pop(): s.inm -= 1
    def handle_data(s, d):
        if s.inm and not s.skip: s.out.append(d)


def nd_ref(path):
    p = Main(); p.feed(open(path, 'rb').read().decode('utf-8', 'replace'))
    w = re.findall(r'\w+', ' '.join(p.out).lower())
    return frozenset(tuple(w[i:i + 4]) for i in range(max(1, len(w) - 3))) if w else frozenset()


def jac(x, y):
    return 1.0 if not x and not y else len(x & y) / max(1, len(x | y))


# ---------------- one collection: dump, features ----------------
class Coll:
    pass


def load(name, files, refkind):
    """Runs the dump over files (in this order) once; returns the pages' records."""
    os.makedirs(a.work, exist_ok=True)
    pk = os.path.join(a.work, re.sub(r'[^\w.-]+', '_', name) + '.pkl')
    if os.path.exists(pk):
        return pickle.load(open(pk, 'rb'))
    dump = pk[:-4] + '.dump'
    if os.path.exists(dump): os.unlink(dump)
    env = dict(os.environ, SIMCRAWL_BENCH_DUMP=dump, SIMCRAWL_BENCH_SEED='0')
    r = subprocess.run([a.bin, 'fingerprint', '--'] + files, capture_output=True, text=True, env=env)
    fp = {}
    for line in r.stdout.splitlines():
        h, p = line.split(None, 1); fp[p] = int(h, 16)
    rec = {}
    with open(dump, encoding='utf-8') as fh:
        for line in fh:
            bh, f, stub, own, whole = line.rstrip('\n').split('\t')
            rec[int(bh, 16)] = (None if f == '-' else int(f, 16), own, whole)
    os.unlink(dump)
    c = Coll()
    c.files, c.fp, c.own, c.whole = files, [], [], []
    for p in files:
        b = open(p, 'rb').read()
        own, whole = rec.get(_x(b, len(b)), (None, '', ''))[1:]
        c.fp.append(fp.get(p)); c.own.append(own); c.whole.append(whole)
    other = os.path.join(a.refs_from, os.path.basename(pk)) if a.refs_from else ''
    if other and os.path.exists(other):
        o = pickle.load(open(other, 'rb'))
        assert o.files == files, other
        c.ref = o.ref
    elif refkind == 'nd':
        c.ref = [nd_ref(p) for p in files]
    else:
        rf = fdref.refs(files); c.ref = [rf[p] for p in files]
    pickle.dump(c, open(pk, 'wb'))
    return c


def features(c):
    """Per page: distinct feature ids, their tf, which are pairs; the feature hashes."""
    vocab = {}
    c.ids, c.tfs, c.ntok = [], [], []
    if a.tokens:
        c.own = [retoken(o) for o in c.own]; c.whole = [retoken(o) for o in c.whole]
    for own in c.own:
        t = own.split(' ') if own else []
        seq = [vocab.setdefault(w, len(vocab)) for w in t]
        seq += [vocab.setdefault(t[i] + ' ' + t[i + 1], len(vocab)) for i in range(len(t) - 1)]
        u, n = np.unique(np.array(seq, dtype=np.int64), return_counts=True)
        c.ids.append(u); c.tfs.append(n)
        c.ntok.append(len(t))
    keys = list(vocab)
    c.ispair = np.fromiter((' ' in k for k in keys), dtype=bool, count=len(keys))
    c.isdig = np.fromiter((any(DIGITS.match(x) for x in k.split(' ')) for k in keys), dtype=bool, count=len(keys))
    c.hash = [np.fromiter((_xs(k.encode(), len(k.encode()), SEED ^ d) for k in keys), dtype=np.uint64, count=len(keys))
              for d in range(a.draws)]
    c.nvocab = len(keys)


BITS = np.arange(64, dtype=np.uint64)
POP8 = np.array([bin(i).count('1') for i in range(256)], dtype=np.uint8)


def prob_within(cos):
    p = np.arccos(np.clip(cos, -1, 1)) / math.pi
    return sum(math.comb(64, j) * p ** j * (1 - p) ** (64 - j) for j in range(a.k + 1))


def evaluate(c, w):
    """For scheme w: each page's kind (0 none, 1 simhash, 2 exact), fingerprint at draw 0,
    and the candidate pairs (i, j, probability within k, within k at draw 0)."""
    N = len(c.files)
    D = a.draws
    kind = np.zeros(N, dtype=np.int8); fpv = [[None] * N for _ in range(D)]
    rows, cols, vals = [], [], []
    for i in range(N):
        if c.fp[i] is None or c.ntok[i] == 0:
            continue
        if c.ntok[i] < w.bound:
            kind[i] = 2
            wb = c.whole[i].encode()
            h = _xs(wb, len(wb), 0x73696d7368727431)  # a stub's key; a short text's at draw 0
            for d in range(D): fpv[d][i] = h or 1
            continue
        kind[i] = 1
        wt = w(c.tfs[i], c.ispair[c.ids[i]], len(c.ids[i]), c.isdig[c.ids[i]])
        for d in range(D):
            hb = c.hash[d][c.ids[i]]
            v = wt @ (2.0 * ((hb[:, None] >> BITS) & np.uint64(1)).astype(np.float64) - 1.0)
            fpv[d][i] = sum(1 << int(b) for b in np.nonzero(v > 0)[0])
        rows += [i] * len(wt); cols.append(c.ids[i]); vals.append(wt)
    X = sp.csr_matrix((np.concatenate(vals) if vals else [], (rows, np.concatenate(cols) if cols else [])),
                      shape=(N, c.nvocab))
    norm = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel()); norm[norm == 0] = 1
    X = (sp.diags(1 / norm) @ X).tocsr()
    pairs = []
    simh = kind == 1
    fa = [np.array([f or 0 for f in fd], dtype=np.uint64) for fd in fpv]
    for s in range(0, N, 256):
        blk = (X[s:s + 256] @ X.T).toarray()
        bi, j = np.nonzero(blk > a.min_cosine)
        i = s + bi
        keep = (j > i) & simh[i] & simh[j]
        bi, i, j = bi[keep], i[keep], j[keep]
        prob = prob_within(blk[bi, j])
        near = np.stack([POP8[(f[i] ^ f[j]).view(np.uint8)].reshape(-1, 8).sum(1) <= a.k for f in fa], 1)
        pairs += zip(i.tolist(), j.tolist(), prob.tolist(), map(tuple, near.tolist()))
    groups = collections.defaultdict(list)
    for i in range(N):
        if kind[i] == 2: groups[c.whole[i]].append(i)
    for g in groups.values():
        pairs += [(g[x], g[y], 1.0, (True,) * D) for x in range(len(g)) for y in range(x + 1, len(g))]
    return kind, fpv[0], pairs


def release(c, w, nA):
    """Expected and observed recall, precision for a release pair (pages [0, nA) are A)."""
    kind, fpv, pairs = evaluate(c, w)
    rel = lambda i: c.rel[i]
    where = {rel(i): i for i in range(nA, len(c.files))}
    pos = [(i, where[rel(i)]) for i in range(nA) if rel(i) in where and jac(c.ref[i], c.ref[where[rel(i)]]) >= 0.9]
    D = a.draws
    P = {(i, j): (p, obs) for i, j, p, obs in pairs}
    no = (0, (False,) * D)
    er = sum(P.get(q, no)[0] for q in pos) / max(1, len(pos))
    orr = [sum(1 for q in pos if P.get(q, no)[1][d]) / max(1, len(pos)) for d in range(D)]
    ef = eb = 0.0; of = [0] * D; ob = [0] * D
    for i, j, p, obs in pairs:
        J = jac(c.ref[i], c.ref[j])
        ef += p
        if J < 0.7: eb += p
        for d in range(D):
            of[d] += obs[d]
            if J < 0.7: ob[d] += obs[d]
    # positives left to an exact key that the simhash would see, and what they cost
    short = sum(1 for i, j in pos if kind[i] == 2 or kind[j] == 2)
    return dict(pos=len(pos), er=er, orr=orr, ep=1 - eb / max(ef, 1e-9),
                op=[1 - ob[d] / max(1, of[d]) for d in range(D)], short=short)


def site(c, w):
    kind, fpv, pairs = evaluate(c, w)
    D = a.draws
    ef = 0.0; of = [0] * D; wrong = [set() for _ in range(D)]
    for i, j, p, obs in pairs:
        if jac(c.ref[i], c.ref[j]) < 0.5:
            ef += p
            for d in range(D):
                if obs[d]: of[d] += 1; wrong[d].add(j)
    return ef, of, [len(x) for x in wrong]


def edit_study(colls, w):
    """Windows of n tokens of real pages (the release pairs' own texts), one word in the
    middle replaced by a word of another page: the mean probability that the simhash under
    scheme w puts the two within k, against the reference's word-4-gram Jaccard."""
    rng = np.random.default_rng(11)
    texts = [o.split(' ') for kind_, c in colls if kind_ == 'pair' for o in c.own if o.count(' ') >= 200]
    vocab = [t for x in texts[:50] for t in x]
    print('one word replaced in n tokens: n, reference 4-gram J, mean P[within %d] (simhash of the text), '
          'min, share of windows >= 0.5' % a.k)
    for n in (24, 32, 40, 48, 56, 64, 72, 80, 96):
        ps = []
        for _ in range(300):
            t = texts[rng.integers(len(texts))]
            s0 = rng.integers(len(t) - n); x = t[s0:s0 + n]
            y = list(x); m = n // 2
            y[m] = vocab[rng.integers(len(vocab))]
            if y[m] == x[m]: continue
            def vec(tok):
                fs = collections.Counter(tok + [tok[i] + ' ' + tok[i + 1] for i in range(len(tok) - 1)])
                keys = list(fs)
                wt = w(np.array([fs[k] for k in keys]), np.array([' ' in k for k in keys]), len(keys))
                return dict(zip(keys, wt))
            vx, vy = vec(x), vec(y)
            dot = sum(vx[k] * vy.get(k, 0) for k in vx)
            cos = dot / math.sqrt(sum(v * v for v in vx.values()) * sum(v * v for v in vy.values()))
            ps.append(float(prob_within(np.array([cos]))[0]))
        ps = np.array(ps)
        print(f'  {n}: J {(n - 7) / (n + 1):.3f}, mean {ps.mean():.3f}, min {ps.min():.3f}, >= 0.5: {(ps >= 0.5).mean():.2f}')


def main():
    t0 = time.time()
    names = a.schemes.split(',') if a.schemes else list(SCHEMES)
    rps = (TUNING if 'tuning' in a.pairs else []) + (HELDOUT if 'heldout' in a.pairs else [])
    colls = []
    for sets in rps:
        roots = [unpack(*s.split(':')) for s in sets.split(',')]
        files, rel = [], {}
        for r in roots:
            for dp, _, fn in os.walk(r):
                for f in fn:
                    if f.endswith('.html'):
                        p = os.path.join(dp, f); files.append(p); rel[p] = os.path.relpath(p, r)
        files.sort()
        # pages of A first (neardup-score sorts the paths; A's root sorts before B's)
        c = load(sets, files, 'nd')
        c.rel = [rel[p] for p in files]
        nA = sum(1 for p in files if p.startswith(roots[0] + '/'))
        assert all(p.startswith(roots[0] + '/') for p in files[:nA])
        c.name = re.sub(r':[^,]*', '', sets).replace(',', ' vs ').replace('-doc', '')
        c.nA = nA
        features(c); colls.append(('pair', c))
    for s in [x for x in a.sites.split(',') if x]:
        pkg, sub = s.split(':', 1)
        root = unpack(pkg, sub, sites_layout=True)
        files = sorted(glob.glob(root + '/**/*.html', recursive=True))
        c = load('site-' + pkg, files, 'fd'); c.name = pkg
        features(c); colls.append(('site', c))
    print(f'{len(colls)} collections, {sum(len(c.files) for _, c in colls)} pages '
          f'({time.time() - t0:.0f} s to dump, tokenise, reference)', file=sys.stderr)
    # check: version 6 recomputed here equals the binary's fingerprints
    bad = tot = 0
    for _, c in colls:
        kind, fpv, _ = evaluate(c, SCHEMES['v6'])
        for i in range(len(c.files)):
            if c.fp[i] is not None:
                tot += 1; bad += fpv[i] != c.fp[i]
    print(f'check: version 6 recomputed equals the binary on {tot - bad} of {tot} pages'
          + (f' (token rule {a.tokens}: not the binary\'s)' if a.tokens else ''), flush=True)
    if a.edit_study:
        edit_study(colls, SCHEMES['v6'])
    for nm in names:
        w = SCHEMES[nm]
        out = [nm]
        for kind_, c in colls:
            if kind_ == 'pair':
                r = release(c, w, c.nA)
                out.append(f"{c.name}: E[recall] {r['er']:.4f}, draws " + ' '.join(f'{x:.3f}' for x in r['orr'])
                           + f" (mean {sum(r['orr']) / len(r['orr']):.4f}); E[precision] {r['ep']:.4f}, draws "
                           + ' '.join(f'{x:.3f}' for x in r['op']) + f"; {r['pos']} positives, {r['short']} with an exact key")
        ef = 0.0; of = [0] * a.draws; ow = [0] * a.draws
        for kind_, c in colls:
            if kind_ == 'site':
                e, o, wr = site(c, w); ef += e
                of = [x + y for x, y in zip(of, o)]; ow = [x + y for x, y in zip(ow, wr)]
                if a.verbose and (e > 0.05 or any(o)):
                    out.append(f'  {c.name}: {len(c.files)} pages, E[false pairs] {e:.3f}; draws: false pairs '
                               + ' '.join(map(str, o)) + ', pages wrongly dropped ' + ' '.join(map(str, wr)))
        if a.sites:
            out.append(f'sites: E[false pairs] {ef:.3f}; draws: false pairs ' + ' '.join(map(str, of))
                       + ', pages wrongly dropped ' + ' '.join(map(str, ow)))
        print('\n  '.join(out), flush=True)


if __name__ == '__main__':
    main()
