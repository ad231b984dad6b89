#!/usr/bin/python3
"""Held-out recall, miss by miss (issue 11; docs/BENCHMARKS.md, "Held-out recall, miss by
miss (rec11i)"): what differs between the two releases' token strings of a positive pair
that the fingerprint misses or nearly misses.

It reads the dumps that tests/bench/weight_study.py leaves in its --work directory (each
page's own token string, template blocks left out, exactly what the binary fingerprints)
and, for every positive of the release pairs whose name matches --pairs (neardup-score's
positives: same path, reference div[role=main] word-4-gram Jaccard >= 0.9), computes the
probability that version 6/7's simhash puts the two within k (P[Binomial(64, angle/pi) <=
k], weight_study.py's model; a text under 80 tokens: its exact key). For the positives
below --below it aligns the two token strings (difflib, no junk heuristic) and sorts
every differing hunk into one class:

  release-number  a hunk that differs only in tokens of digits, one of which is the major
                  release of its side (`clang 19` -> `clang 22`, `release 19 x`)
  number          a hunk that differs only in tokens of digits otherwise (Sphinx's section
                  numbers `2 1` -> `2 5` when a chapter is reordered, counts, dates)
  outside-main    the hunk's text is mostly not in its page's reference text (div[role=main]):
                  under half of its word 4-grams (of its words, for a hunk under 4 tokens)
                  are there; text our extractor keeps on one side and not the other (the
                  extractor's business, not the fingerprint's)
  infrastructure  a hunk naming the project's trackers, lists or forums, or a URL (bugzilla,
                  github, discourse, phabricator, pipermail, mailman, http): the project
                  moved its bug tracker and lists (Bugzilla -> GitHub issues, cfe-dev ->
                  Discourse) and every page that links them changed
  moved           its deleted tokens (>= 4) occur elsewhere in the other release, or its
                  inserted tokens elsewhere in this one: a reflowed or reordered section
  spelling        one token replaced by a close one (difflib ratio >= 0.75): a typo fixed
  added, removed, rewritten   anything else: a genuine edit, text inserted, deleted or
                  replaced

and measures each class by counterfactual: the probability within k when the hunks of
that class alone are reverted in the later release (its tokens replaced by the earlier
one's). The gain, summed over the positives, is how many expected misses the class
accounts for; a rule that made the class invisible could win back at most that.

  python3 tests/bench/weight_study.py --bin build/bench-seed/simcrawl --work W --schemes v6
  python3 tests/bench/recall_misses.py --work W [--pairs clang] [--below 0.9] [--show 40]
      [--tokens digits0]     # the same, after weight_study.py's token rule

--stages D audits every positive rather than the near misses (docs/BENCHMARKS.md, "LLVM
13/14 miss by miss (rec11j)"): the word 4-gram Jaccard of the two releases at three stages,
  ref    the reference (div[role=main], neardup-score's),
  whole  the page's whole token string (what the extractor kept, tokenised), its words
         taken as the reference takes them (runs of \w, lower case),
  own    the own token string (the site's template blocks left out), the same way;
a stage that loses similarity on one side only (the extractor keeping a sidebar, a "this
page" box or a changed layout on one release; a template block counted on one release's
pages only) shows as whole < ref or own < whole. It lists the positives where a stage
loses more than D and sums P[within k] lost at the own stage against the whole text.
"""
import argparse, collections, difflib, glob, math, os, pickle, re, sys

ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
ap.add_argument('--work', default='/tmp/simcrawl-weight-study', help="weight_study.py's --work directory")
ap.add_argument('--pairs', default='clang', help='release pairs whose name holds this (clang, llvm, "" for all)')
ap.add_argument('--below', type=float, default=0.9, help='list the positives with P[within k] below this')
ap.add_argument('--k', type=int, default=3)
ap.add_argument('--show', type=int, default=0, help='print the hunks of the N lowest positives')
ap.add_argument('--tokens', default='', help='a token rule first (weight_study.py --tokens): digits0, nodigits')
ap.add_argument('--digit', type=float, default=1.0, help='weight of shingles holding a token of digits (weight_study.py "digits xF")')
ap.add_argument('--stages', type=float, default=0.0, help='instead: for every positive, the word 4-gram Jaccard '
                'of the reference, of the whole token string (what the extractor and tokenizer keep) and of '
                'the own token string (template blocks left out); list those where a stage loses more than this')
a = ap.parse_args()


class Coll:  # weight_study.py's pickled record
    pass


sys.modules['__main__'].Coll = Coll
DIGITS = re.compile(r'[0-9]+\Z')
CLASSES = ['release-number', 'number', 'outside-main', 'infrastructure', 'moved', 'spelling',
           'added', 'removed', 'rewritten']
INFRA = {'bugzilla', 'github', 'discourse', 'phabricator', 'pipermail', 'mailman', 'http', 'https'}


def retoken(s):
    t = s.split(' ') if s else []
    if a.tokens == 'digits0':
        t = ['0' if DIGITS.match(x) else x for x in t]
    elif a.tokens == 'nodigits':
        t = [x for x in t if not DIGITS.match(x)]
    elif a.tokens:
        sys.exit('--tokens: unknown rule ' + a.tokens)
    return t


def r78(t):
    return (math.sqrt(t) * math.sqrt(math.sqrt(t))) * math.sqrt(math.sqrt(math.sqrt(t)))


def vec(t):
    """Version 6/7's weights (docs/FINGERPRINT.md section 5) of a token list."""
    f = collections.Counter(t + [t[i] + ' ' + t[i + 1] for i in range(len(t) - 1)])
    cap = max(1, min(64, math.isqrt(len(f))))
    out = {}
    for k, v in f.items():
        w = r78(min(v, cap))
        if a.digit != 1.0 and any(DIGITS.match(x) for x in k.split(' ')):
            w *= a.digit
        out[k] = math.floor(256 * w + 0.5)
    return out


def prob(cos):
    p = math.acos(max(-1.0, min(1.0, cos))) / math.pi
    return sum(math.comb(64, j) * p ** j * (1 - p) ** (64 - j) for j in range(a.k + 1))


def p_within(ta, tb, wa, wb):
    """P[within k] of two pages: token lists, whole token strings (the exact key)."""
    if len(ta) < 80 or len(tb) < 80:
        return (1.0 if len(ta) < 80 and len(tb) < 80 and wa == wb else 0.0), None
    va, vb = vec(ta), vec(tb)
    dot = sum(v * vb.get(k, 0) for k, v in va.items())
    na = math.sqrt(sum(v * v for v in va.values())); nb = math.sqrt(sum(v * v for v in vb.values()))
    cos = dot / (na * nb) if na and nb else 0.0
    return prob(cos), cos


def jac(x, y):
    return 1.0 if not x and not y else len(x & y) / max(1, len(x | y))


def contains(seq, sub):
    """Whether token list sub occurs contiguously in seq."""
    if not sub or len(sub) > len(seq):
        return False
    s = '\x00' + '\x00'.join(seq) + '\x00'
    return ('\x00' + '\x00'.join(sub) + '\x00') in s


def in_ref(t, lo, hi, ref, words):
    """Share of t[lo:hi]'s word 4-grams (its words, when it has fewer than 4 tokens) that
    the reference text holds (None: no plain word in it)."""
    x = [v for v in t[lo:hi]]
    if len(x) >= 4:
        grams = [g for g in (tuple(x[i:i + 4]) for i in range(len(x) - 3)) if all(re.fullmatch(r'\w+', v) for v in g)]
        return sum(g in ref for g in grams) / len(grams) if grams else None
    x = [v for v in x if re.fullmatch(r'\w+', v)]
    return sum(v in words for v in x) / len(x) if x else None


def classify(op, A, B, i1, i2, j1, j2, refA, refB, wordsA, wordsB, majA, majB):
    x, y = A[i1:i2], B[j1:j2]
    nx = ['#' if DIGITS.match(v) else v for v in x]
    ny = ['#' if DIGITS.match(v) else v for v in y]
    if x and y and nx == ny:
        if any(v == majA for v in x if DIGITS.match(v)) or any(v == majB for v in y if DIGITS.match(v)):
            return 'release-number'
        return 'number'
    ra = in_ref(A, i1, i2, refA, wordsA) if x else None
    rb = in_ref(B, j1, j2, refB, wordsB) if y else None
    if (ra is not None and ra < 0.5) or (rb is not None and rb < 0.5):
        return 'outside-main'
    if INFRA & set(x + y):
        return 'infrastructure'
    if (len(x) >= 4 and contains(B, x)) or (len(y) >= 4 and contains(A, y)):
        return 'moved'
    if len(x) == 1 and len(y) == 1 and difflib.SequenceMatcher(None, x[0], y[0]).ratio() >= 0.75:
        return 'spelling'
    return 'added' if not x else 'removed' if not y else 'rewritten'


def major(path):
    m = re.search(r'/(?:clang|llvm)-(\d+)', path)
    return m.group(1) if m else None


def words4(tokens):
    w = re.findall(r'\w+', tokens.lower())
    return frozenset(tuple(w[i:i + 4]) for i in range(max(1, len(w) - 3))) if w else frozenset()


def stages(colls):
    """--stages: the reference, whole and own Jaccard of every positive (see the docstring)."""
    rows = []
    for name, c, pos in colls:
        for i, j, rel in pos:
            jr = jac(c.ref[i], c.ref[j])
            jw = jac(words4(c.whole[i]), words4(c.whole[j]))
            jo = jac(words4(c.own[i]), words4(c.own[j]))
            rows.append((name, rel, jr, jw, jo))
    names = sorted({r[0] for r in rows})
    print(f"{len(rows)} positives over {len(names)} release pairs: word 4-gram Jaccard by stage")
    print(f"  {'pair':<22} {'positives':>9} {'mean ref':>9} {'whole':>7} {'own':>7} {'whole<ref-D':>12} {'own<whole-D':>12}")
    for n in names:
        rs = [r for r in rows if r[0] == n]
        print(f"  {n:<22} {len(rs):9d} {sum(r[2] for r in rs) / len(rs):9.4f} {sum(r[3] for r in rs) / len(rs):7.4f} "
              f"{sum(r[4] for r in rs) / len(rs):7.4f} {sum(1 for r in rs if r[3] < r[2] - a.stages):12d} "
              f"{sum(1 for r in rs if r[4] < r[3] - a.stages):12d}")
    out = sorted([r for r in rows if min(r[3] - r[2], r[4] - r[3]) < -a.stages], key=lambda r: min(r[3] - r[2], r[4] - r[3]))
    print(f"\nthe positives where a stage loses more than {a.stages}: ref, whole, own")
    for n, rel, jr, jw, jo in out:
        print(f"  {n:<22} {rel:<52} {jr:.3f} {jw:.3f} {jo:.3f}")


def main():
    rows = []
    for pk in sorted(glob.glob(os.path.join(a.work, '*.pkl'))):
        base = os.path.basename(pk)
        if base.startswith('site-') or a.pairs not in base:
            continue
        c = pickle.load(open(pk, 'rb'))
        roots = sorted({p.split('/html/')[0] for p in c.files})
        rel = [p.split('/html/', 1)[1] for p in c.files]
        nA = sum(1 for p in c.files if p.startswith(roots[0] + '/'))
        name = ' vs '.join(re.sub(r'.*/doc/', '', r).replace('-doc', '') for r in roots)
        majA, majB = major(roots[0]), major(roots[1])
        where = {rel[i]: i for i in range(nA, len(c.files))}
        if a.stages:
            pos = [(i, where[rel[i]], rel[i]) for i in range(nA)
                   if rel[i] in where and jac(c.ref[i], c.ref[where[rel[i]]]) >= 0.9]
            rows.append((name, c, pos))
            continue
        for i in range(nA):
            j = where.get(rel[i])
            if j is None or jac(c.ref[i], c.ref[j]) < 0.9:
                continue
            if c.fp[i] is None or c.fp[j] is None:
                rows.append(dict(pair=name, page=rel[i], p=0.0, cos=None, note='no fingerprint'))
                continue
            A, B = retoken(c.own[i]), retoken(c.own[j])
            wA, wB = ' '.join(retoken(c.whole[i])), ' '.join(retoken(c.whole[j]))
            p, cos = p_within(A, B, wA, wB)
            r = dict(pair=name, page=rel[i], p=p, cos=cos, nA=len(A), nB=len(B),
                     J=jac(c.ref[i], c.ref[j]), note='')
            rows.append(r)
            if p >= a.below or cos is None:
                if cos is None and p < a.below:
                    r['note'] = 'short text, exact key'
                continue
            ops = [o for o in difflib.SequenceMatcher(None, A, B, autojunk=False).get_opcodes() if o[0] != 'equal']
            wa = {v for g in c.ref[i] for v in g}; wb = {v for g in c.ref[j] for v in g}
            cls = [classify(o[0], A, B, *o[1:], c.ref[i], c.ref[j], wa, wb, majA, majB) for o in ops]
            r['hunks'] = list(zip(cls, ops))
            r['tokens'] = collections.Counter()
            for k, o in zip(cls, ops):
                r['tokens'][k] += max(o[2] - o[1], o[4] - o[3])
            r['gain'] = {}
            for k in CLASSES + ['artefacts']:
                sel = set(CLASSES[:6]) if k == 'artefacts' else {k}
                if k != 'artefacts' and k not in cls:
                    continue
                B2 = []
                last = 0
                for kk, (_, i1, i2, j1, j2) in zip(cls, ops):
                    B2 += B[last:j1]
                    B2 += A[i1:i2] if kk in sel else B[j1:j2]
                    last = j2
                B2 += B[last:]
                r['gain'][k] = p_within(A, B2, None, None)[0] - p
            r['A'], r['B'] = A, B
    if a.stages:
        return stages(rows)
    near = sorted([r for r in rows if r['p'] < a.below], key=lambda r: r['p'])
    pairs = sorted({r['pair'] for r in rows})
    print(f"{len(rows)} positives over {len(pairs)} release pairs; expected misses "
          f"{sum(1 - r['p'] for r in rows):.2f}; {len(near)} with P[within {a.k}] < {a.below} "
          f"(expected misses among them {sum(1 - r['p'] for r in near):.2f})")
    for pr in pairs:
        rs = [r for r in rows if r['pair'] == pr]
        up = sum(r['p'] + r.get('gain', {}).get('artefacts', 0.0) for r in rs) / len(rs)
        print(f"  {pr}: {len(rs)} positives, E[recall] {sum(r['p'] for r in rs) / len(rs):.4f}, "
              f"{sum(1 for r in rs if r['p'] < a.below)} below {a.below}; {up:.4f} with every hunk but "
              f"the edits reverted on those")
    print(f"\nthe positives below {a.below}: P, cosine, tokens A/B, reference J; per class: tokens in "
          f"its hunks (P gained when they alone are reverted)")
    for r in near:
        if 'hunks' not in r:
            print(f"  {r['p']:.3f}  {r['pair']:<22} {r['page']:<48} {r['note']}")
            continue
        parts = [f"{k} {r['tokens'][k]} (+{r['gain'][k]:.2f})" for k in CLASSES if k in r['gain']]
        print(f"  {r['p']:.3f}  {r['pair']:<22} {r['page']:<48} cos {r['cos']:.4f} n {r['nA']}/{r['nB']} "
              f"J {r['J']:.3f}: " + ', '.join(parts) + f"; artefacts +{r['gain']['artefacts']:.2f}")
    print('\nby class, over the positives below the line: pages where present, tokens, expected misses '
          'won back if the class alone were reverted (share of the expected misses below the line)')
    tot = sum(1 - r['p'] for r in near if 'hunks' in r)
    for k in CLASSES + ['artefacts']:
        rs = [r for r in near if 'hunks' in r and k in r['gain']]
        g = sum(r['gain'][k] for r in rs)
        label = 'the six classes but edits together' if k == 'artefacts' else k
        print(f"  {label:<52} {len(rs):3d} pages, {sum(r['tokens'][k] for r in rs) if k != 'artefacts' else '-':>6} tokens, "
              f"{g:6.2f} of {tot:.2f} ({100 * g / max(tot, 1e-9):.0f}%)")
    for r in near[:a.show]:
        if 'hunks' not in r:
            continue
        print(f"\n== {r['pair']} {r['page']} P {r['p']:.3f}")
        for k, (op, i1, i2, j1, j2) in r['hunks']:
            ctx = ' '.join(r['A'][max(0, i1 - 4):i1])
            print(f"  {k:<14} [{ctx}] -{' '.join(r['A'][i1:i2])[:160]!r} +{' '.join(r['B'][j1:j2])[:160]!r}")


if __name__ == '__main__':
    main()
