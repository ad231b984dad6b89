#!/usr/bin/env python3
"""Which features should the simcrawl fingerprint hash? (docs/FINGERPRINT.md section 3)

Evaluates feature schemes (word K-shingles, words, mixes; tf, sqrt tf, 1 + ln tf, ...) on
the real pipeline's token strings, so that the choice is measured on several sites rather
than tuned to one:

  version pairs  Clang manual 14 vs 15 and 16 vs 19 (Debian clang-N-doc): recall and
                 precision as ../shared/tools/neardup-score defines them (positives: same
                 path, reference main-text word-4-gram Jaccard >= 0.9; precision: reported
                 pairs with reference J >= 0.7), and the expected recall from the cosines
                 of the weight vectors, P[Binomial(64, angle/pi) <= k] (Charikar), which
                 does not depend on one draw of the hash function;
  single sites   python3.11-doc, postgresql-doc-15, python-django-doc and the CleanEval /
                 Dragnet pages of ../shared/data/extract-dev: false pairs = distinct pages
                 within k whose reference texts have Jaccard < 0.5, counted per site and
                 over all pages together, and their expected number from the cosines.

Reference main texts are independent of the extractor: Sphinx div[role=main] (Clang,
Python), div#yui-main (Django), the body without the navheader/navfooter (PostgreSQL), the
hand-made gold .txt (CleanEval, Dragnet). The pages' own texts come from
`simcrawl extract --text` and their token strings from `bench_simhash --tokens`
(extract_tokens()); both are cached in --work. Hashes are XXH3_64bits_withSeed with the
fingerprint's seed (libxxhash via ctypes). Needs python3-numpy and python3-scipy (study
only; not a dependency of simcrawl).

  python3 tests/bench/neardup_study.py --bin build/simcrawl --tokenizer build/bench/bench_simhash
"""
import argparse, ctypes, math, os, pickle, re, subprocess, sys, time
from collections import Counter, defaultdict
from concurrent.futures import ThreadPoolExecutor
from html.parser import HTMLParser

import debpkg  # a Debian package unpacked once (tests/bench/debpkg.py)

import numpy as np
import scipy.sparse as sp

ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
ap.add_argument('--bin', default='build/simcrawl', help='simcrawl binary (extract --text)')
ap.add_argument('--tokenizer', default='build/bench/bench_simhash', help='bench_simhash (--tokens)')
ap.add_argument('--cache', default=os.path.expanduser('~/.cache/simcrawl-dev'), help='unpacked Debian doc packages')
ap.add_argument('--web', default='../shared/data/extract-dev', help='CleanEval/Dragnet *.html.gz + gold *.txt (skipped if absent)')
ap.add_argument('--work', default='/tmp/simcrawl-neardup-study', help='cache of texts, tokens, references')
ap.add_argument('--k', type=int, default=3)
ap.add_argument('--min-tokens', default='5', help='comma-separated minimums to evaluate')
ap.add_argument('--schemes', default='', help='names separated by ";" (default: all)')
ap.add_argument('--verbose', action='store_true', help='list misses, imprecise and false pairs')
a = ap.parse_args()

SEED = 0x73696d6372617731  # docs/FINGERPRINT.md section 3
SITES = {  # name -> (Debian package, HTML root inside it)
    'clang14': ('clang-14-doc', 'usr/share/doc/clang-14/html'),
    'clang15': ('clang-15-doc', 'usr/share/doc/clang-15/html'),
    'clang16': ('clang-16-doc', 'usr/share/doc/clang-16/html'),
    'clang19': ('clang-19-doc', 'usr/share/doc/clang-19/html'),
    'python': ('python3.11-doc', 'usr/share/doc/python3.11/html'),
    'postgres': ('postgresql-doc-15', 'usr/share/doc/postgresql-doc-15/html'),
    'django': ('python-django-doc', 'usr/share/doc/python-django-doc/html'),
    'llvm14': ('llvm-14-doc', 'usr/share/doc/llvm-14-doc/html'),
    'llvm15': ('llvm-15-doc', 'usr/share/doc/llvm-15-doc/html'),
    'llvm16': ('llvm-16-doc', 'usr/share/doc/llvm-16-doc/html'),
}
VERSION_PAIRS = (('clang14', 'clang15'), ('clang16', 'clang19'), ('llvm14', 'llvm15'), ('llvm15', 'llvm16'))
SINGLE = ('python', 'postgres', 'django', 'web')

_xxh = ctypes.CDLL('libxxhash.so.0').XXH3_64bits_withSeed
_xxh.restype = ctypes.c_uint64
_xxh.argtypes = [ctypes.c_char_p, ctypes.c_size_t, ctypes.c_uint64]
_hcache = {}
def xxh(s):
    h = _hcache.get(s)
    if h is None:
        b = s.encode()
        h = _hcache[s] = _xxh(b, len(b), SEED)
    return h

def unpack(pkg):
    """apt-get download PKG into the cache and unpack it once (as neardup-score does)."""
    return debpkg.unpack(pkg, os.path.join(a.cache, pkg), a.cache)

# ---------------- reference main texts (independent of the extractor) ----------------
class Ref(HTMLParser):
    """Text inside elements matching main(), outside elements matching drop()."""
    VOID = {'br', 'img', 'meta', 'link', 'hr', 'input', 'wbr', 'col', 'area', 'base', 'source'}
    def __init__(s, main, drop):
        super().__init__(convert_charrefs=True)
        s.main, s.drop = main, drop
        s.stack, s.inm, s.indrop, s.skip, s.out = [], 0, 0, 0, []
    def handle_starttag(s, t, at):
        if t in ('script', 'style'): s.skip += 1
        if t in s.VOID: return
        d = dict(at); m, x = s.main(t, d), s.drop(t, d)
        s.stack.append((m, x)); s.inm += m; s.indrop += x
    def handle_endtag(s, t):
        if t in ('script', 'style'): s.skip = max(0, s.skip - 1)
        if t in s.VOID or not s.stack: return
        m, x = s.stack.pop(); s.inm -= m; s.indrop -= x
    def handle_data(s, d):
        if s.inm and not s.indrop and not s.skip: s.out.append(d)
NODROP = lambda t, d: False
RULES = {
    'sphinx': (lambda t, d: d.get('role') == 'main', NODROP),
    'django': (lambda t, d: d.get('id') == 'yui-main', NODROP),
    'postgres': (lambda t, d: t == 'body', lambda t, d: (d.get('class') or '') in ('navheader', 'navfooter')),
}
def ref_shingles(site, path):
    if site == 'web':
        txt = open(path[:-len('.html.gz')] + '.txt', encoding='utf-8', errors='replace').read()
    else:
        p = Ref(*RULES['sphinx' if site.startswith(('clang', 'python', 'llvm')) else site])
        p.feed(open(path, 'rb').read().decode('utf-8', 'replace'))
        txt = ' '.join(p.out)
    w = re.findall(r'\w+', txt.lower())
    return frozenset(hash(tuple(w[i:i + 4])) for i in range(max(1, len(w) - 3))) if w else frozenset()
def jac(x, y): return 1.0 if not x and not y else len(x & y) / len(x | y)

# ---------------- pages, texts, tokens ----------------
def load_docs():
    docs = []
    for site, (pkg, rel_root) in SITES.items():
        root = os.path.join(unpack(pkg), rel_root)
        for dp, _, fn in os.walk(root):
            docs += [dict(site=site, rel=os.path.relpath(os.path.join(dp, f), root), path=os.path.join(dp, f))
                     for f in fn if f.endswith('.html')]
    if os.path.isdir(a.web):
        docs += [dict(site='web', rel=f, path=os.path.join(a.web, f)) for f in os.listdir(a.web)
                 if f.endswith('.html.gz') and os.path.exists(os.path.join(a.web, f[:-8] + '.txt'))]
    docs.sort(key=lambda d: (d['site'], d['rel']))
    for d in docs:
        d['text'] = os.path.join(a.work, 'text', d['site'], d['rel'] + '.txt')
    def extract(d):
        if os.path.exists(d['text']): return
        os.makedirs(os.path.dirname(d['text']), exist_ok=True)
        if d['path'].endswith('.gz'):
            import gzip
            r = subprocess.run([a.bin, 'extract', '--text', '-'], input=gzip.open(d['path']).read(), capture_output=True)
        else:
            r = subprocess.run([a.bin, 'extract', '--text', '--', d['path']], capture_output=True)
        with open(d['text'] + '.tmp', 'wb') as f: f.write(r.stdout)
        os.replace(d['text'] + '.tmp', d['text'])
    with ThreadPoolExecutor(os.cpu_count() or 2) as ex: list(ex.map(extract, docs))
    tok = {}
    for i in range(0, len(docs), 400):
        r = subprocess.run([a.tokenizer, '--tokens'] + [d['text'] for d in docs[i:i + 400]],
                           capture_output=True, text=True, check=True)
        for line in r.stdout.splitlines():
            p, t = line.split('\t', 1); tok[p] = t.split(' ') if t else []
    for d in docs: d['tokens'] = tok[d['text']]
    refpath = os.path.join(a.work, 'ref.pkl')
    ref = pickle.load(open(refpath, 'rb')) if os.path.exists(refpath) else {}
    if any((d['site'], d['rel']) not in ref for d in docs):
        for d in docs:
            if (d['site'], d['rel']) not in ref: ref[(d['site'], d['rel'])] = ref_shingles(d['site'], d['path'])
        pickle.dump(ref, open(refpath, 'wb'))
    return docs, [ref[(d['site'], d['rel'])] for d in docs]

# ---------------- feature schemes: token list -> {feature string: weight} ----------------
def grams(t, n):
    if len(t) < n: return [' '.join(t)] if t else []
    return [' '.join(t[i:i + n]) for i in range(len(t) - n + 1)]
def weigh(f):  # FINGERPRINT.md section 5: round(256 * f(tf)), half away from zero
    return lambda tf: int(math.floor(256.0 * f(tf) + 0.5))
TF, SQRT, LOG = weigh(lambda t: t), weigh(math.sqrt), weigh(lambda t: 1 + math.log(t))
POW = lambda e: weigh(lambda t: t ** e)
def shingles(ns, w, keep=lambda g: True):
    def f(t):
        out = {}
        for n in ns:
            for g, c in Counter(g for g in grams(t, n) if keep(g)).items(): out[g] = w(c)
        return out
    return f
SCHEMES = {
    '3-shingles, 1 + ln tf': shingles((3,), LOG), '3-shingles, tf': shingles((3,), TF),
    '2-shingles, 1 + ln tf': shingles((2,), LOG), '2-shingles, tf': shingles((2,), TF),
    'words + 2-shingles, 1 + ln tf': shingles((1, 2), LOG), 'words + 2-shingles, tf': shingles((1, 2), TF),
    'words, 1 + ln tf': shingles((1,), LOG), 'words, sqrt tf': shingles((1,), SQRT),
    'words, tf^0.6': shingles((1,), POW(0.6)), 'words, tf^0.7': shingles((1,), POW(0.7)),
    'words, tf': shingles((1,), TF),
    'words + 2-shingles, sqrt tf': shingles((1, 2), SQRT), 'words + 2-shingles, tf^0.7': shingles((1, 2), POW(0.7)),
    'words + 2-shingles, tf^0.8': shingles((1, 2), POW(0.8)), 'words + 2-shingles, tf^0.9': shingles((1, 2), POW(0.9)),
    'words + 2-shingles, tf^0.875': shingles((1, 2), weigh(lambda t: math.sqrt(t) * math.sqrt(math.sqrt(t)) * math.sqrt(math.sqrt(math.sqrt(t))))),
    'words + pairs, min(tf, 16)^0.875': shingles((1, 2), weigh(lambda t: (lambda u: math.sqrt(u) * math.sqrt(math.sqrt(u)) * math.sqrt(math.sqrt(math.sqrt(u))))(min(t, 16)))),
    'words + pairs, min(tf, 64)^0.875 (version 2)': shingles((1, 2), weigh(lambda t: (lambda u: math.sqrt(u) * math.sqrt(math.sqrt(u)) * math.sqrt(math.sqrt(math.sqrt(u))))(min(t, 64)))),
    'words + 2-shingles, tf^0.75': shingles((1, 2), weigh(lambda t: math.sqrt(t) * math.sqrt(math.sqrt(t)))), 'words + 3-shingles, tf': shingles((1, 3), TF), 'words, tf * idf of these pages': None,
    'words of >= 3 bytes, tf': shingles((1,), TF, lambda g: len(g.encode()) >= 3),
}

BITS = np.arange(64, dtype=np.uint64)
def simhash(fs):
    if not fs: return 0
    h = np.fromiter((xxh(g) for g in fs), dtype=np.uint64, count=len(fs))
    w = np.fromiter(fs.values(), dtype=np.float64, count=len(fs))
    v = w @ (2.0 * ((h[:, None] >> BITS) & np.uint64(1)) - 1.0)
    return sum(1 << int(i) for i in np.nonzero(v > 0)[0])
POP8 = np.array([bin(i).count('1') for i in range(256)], dtype=np.uint8)
def binom_le(p, k, n=64):
    return sum(math.comb(n, j) * p ** j * (1 - p) ** (n - j) for j in range(k + 1))

def evaluate(docs, ref, fs, min_tokens):
    N = len(docs)
    vocab, rows, cols, vals = {}, [], [], []
    for i, f in enumerate(fs):
        for g, w in f.items():
            rows.append(i); cols.append(vocab.setdefault(g, len(vocab))); vals.append(float(w))
    X = sp.csr_matrix((vals, (rows, cols)), shape=(N, len(vocab)))
    norm = np.sqrt(np.asarray(X.multiply(X).sum(1)).ravel()); norm[norm == 0] = 1
    X = sp.diags(1 / norm) @ X
    C = np.clip((X @ X.T).toarray(), -1, 1)
    ok = np.array([len(d['tokens']) >= min_tokens for d in docs])
    P = binom_le(np.arccos(C) / math.pi, a.k)
    P[~ok, :] = 0; P[:, ~ok] = 0; np.fill_diagonal(P, 0)
    fp = np.array([simhash(f) for f in fs], dtype=np.uint64)
    within = np.zeros((N, N), dtype=bool)
    for i in range(N):
        within[i] = POP8[(fp[i] ^ fp).view(np.uint8)].reshape(N, 8).sum(1) <= a.k
    within &= ok[:, None] & ok[None, :]; np.fill_diagonal(within, False)
    name = lambda i: docs[i]['site'] + ':' + docs[i]['rel']
    J = lambda i, j: jac(ref[i], ref[j])
    res, notes = {}, []
    where = {(d['site'], d['rel']): i for i, d in enumerate(docs)}
    for s1, s2 in VERSION_PAIRS:
        ids = [i for i, d in enumerate(docs) if d['site'] in (s1, s2)]
        pos = [(i, where[(s2, docs[i]['rel'])]) for i in ids
               if docs[i]['site'] == s1 and (s2, docs[i]['rel']) in where and J(i, where[(s2, docs[i]['rel'])]) >= 0.9]
        found = [(i, j) for x, i in enumerate(ids) for j in ids[x + 1:] if within[i, j]]
        bad = [(i, j) for i, j in found if J(i, j) < 0.7]
        res[s1 + '/' + s2] = (sum(within[i, j] for i, j in pos) / len(pos), sum(P[i, j] for i, j in pos) / len(pos),
                              1 - len(bad) / max(1, len(found)))
        notes += ['miss %s %s (cosine %.4f, ref J %.3f)' % (s1 + '/' + s2, docs[i]['rel'], C[i, j], J(i, j)) for i, j in pos if not within[i, j]]
        notes += ['imprecise %s / %s (ref J %.3f)' % (name(i), name(j), J(i, j)) for i, j in bad]
    false, efalse = Counter(), defaultdict(float)
    fam = lambda s: 'clang' if s.startswith('clang') else 'llvm' if s.startswith('llvm') else s
    for i, j in zip(*np.nonzero(np.triu(within | (P > 1e-6), 1))):
        di, dj = docs[i], docs[j]
        if fam(di['site']) == fam(dj['site']) and fam(di['site']) in ('clang', 'llvm') and di['rel'] == dj['rel']: continue  # versions
        if J(i, j) >= 0.5: continue
        grp = di['site'] if di['site'] == dj['site'] else 'cross'
        efalse[grp] += P[i, j]; efalse['all'] += P[i, j]
        if within[i, j]:
            false[grp] += 1; false['all'] += 1
            notes.append('false %s / %s (cosine %.3f)' % (name(i), name(j), C[i, j]))
    res['false'], res['efalse'] = false, efalse
    return res, notes

def main():
    t0 = time.time()
    docs, ref = load_docs()
    print(f'{len(docs)} pages:', ', '.join(f'{s} {n}' for s, n in sorted(Counter(d["site"] for d in docs).items())),
          f'({time.time() - t0:.0f} s to extract and tokenise)', file=sys.stderr)
    names = a.schemes.split(';') if a.schemes else list(SCHEMES)
    for mt in (int(x) for x in a.min_tokens.split(',')):
        print(f'\nk = {a.k}, at least {mt} tokens; recall (expected recall); false pairs: '
              + ', '.join(SINGLE) + '; all\n')
        print('| features, weight | Clang 14/15 recall | Clang 16/19 recall | precision 14/15, 16/19 '
              '| false pairs | expected false, all |\n|---|---|---|---|---|---|')
        for nm in names:
            if SCHEMES[nm] is None:  # tf * idf over the very pages compared (optimistic)
                base = [SCHEMES['words, tf'](d['tokens']) for d in docs]
                df = Counter(g for f in base for g in f)
                fs = [{g: int(w * (1 + math.log((len(docs) + 1) / (df[g] + 1))) + 0.5) for g, w in f.items()} for f in base]
            else:
                fs = [SCHEMES[nm](d['tokens']) for d in docs]
            r, notes = evaluate(docs, ref, fs, mt)
            vp = ' | '.join(f"{r[x+'/'+y][0]:.3f} ({r[x+'/'+y][1]:.3f}) {r[x+'/'+y][2]:.3f}" for x, y in VERSION_PAIRS)
            fl = ', '.join(str(r['false'][s]) for s in SINGLE) + '; ' + str(r['false']['all'])
            print(f"| {nm} | {vp} | {fl} | {r['efalse']['all']:.2f} |", flush=True)
            if a.verbose:
                for n in notes: print('    ' + n)

if __name__ == '__main__':
    main()
