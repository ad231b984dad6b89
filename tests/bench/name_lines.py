#!/usr/bin/python3
"""The lines that name their page, and how many pages of the site share each one with the
name slotted (docs/FINGERPRINT.md, "The page's name", version 8; docs/BENCHMARKS.md,
"Fingerprint version 8 (slot11k)").

For every page of a site it runs `simcrawl extract --text`, takes the lines (blocks) and
their tokens, the page's name (its first block when that has 1 to 8 tokens) and the name
tokens (3 bytes or more), and keys each later line with those tokens replaced by a slot,
as version 8's template keys do. Then, for each page given with --pages (paths relative to
the site's root, or "A~B" pairs as falsedrop-score -v prints them), it prints the page's
name and every line holding a name token: the line, and on how many of the site's pages
its slotted key is (the template needs 3 and 20% of the pages), beside the tokens the
page has of its own.

Tokens here are an approximation of docs/FINGERPRINT.md section 2 (case folded, split at
every character that is not a word character, `->` and `::` kept inside a word; no NFKC
or mark stripping), so counts can differ from the binary's on text with such characters.

  python3 tests/bench/name_lines.py --bin build/simcrawl \\
      --site python-scipy-doc:usr/share/doc/python-scipy-doc/html \\
      --pages reference/generated/scipy.linalg.lapack.zhesvx.html~reference/generated/scipy.linalg.lapack.ztgsen.html
"""
import argparse, collections, concurrent.futures, os, re, subprocess, sys

ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
ap.add_argument('--bin', default='build/simcrawl')
ap.add_argument('--cache', default=os.path.expanduser('~/.cache/simcrawl-dev/sites'))
ap.add_argument('--site', required=True, help='PKG:HTML_ROOT (one falsedrop-score --sites entry)')
ap.add_argument('--pages', default='', help='comma-separated pages (or A~B pairs) to show; '
                'a bare file name matches the first page of that name')
ap.add_argument('--max-tokens', type=int, default=8)
ap.add_argument('--min-bytes', type=int, default=3)
ap.add_argument('--jobs', type=int, default=2)
a = ap.parse_args()

TOKEN = re.compile(r'\w+(?:(?:->|::)~?\w+)*|~[^\W\d]\w*', re.UNICODE)
SLOT = '\x01'


def tokens(line):
    return [t.casefold() for t in TOKEN.findall(line)]


def page_lines(path):
    out = subprocess.run([a.bin, 'extract', '--text', path], capture_output=True)
    text = out.stdout.decode('utf-8', 'replace')
    return [t for t in (tokens(l) for l in text.split('\n')) if t]


def keys(blocks):
    """The name tokens and the (slotted key, has a name token) of each block."""
    name = set()
    if len(blocks) > 1 and len(blocks[0]) <= a.max_tokens:
        name = {t for t in blocks[0] if len(t.encode()) >= a.min_bytes}
    out = [(' '.join(blocks[0]), False)]
    for b in blocks[1:]:
        hit = any(t in name for t in b)
        out.append((' '.join(SLOT if t in name else t for t in b), hit))
    return name, out


pkg, rel = a.site.split(':', 1)
root = os.path.join(a.cache, pkg, rel)
files = sorted(os.path.relpath(os.path.join(d, f), root) for d, _, fs in os.walk(root)
               for f in fs if f.endswith(('.html', '.htm')))
with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
    blocks = dict(zip(files, ex.map(lambda f: page_lines(os.path.join(root, f)), files)))
count = collections.Counter()
plain = collections.Counter()
for f, bl in blocks.items():
    _, ks = keys(bl)
    count.update({k for k, _ in ks})
    plain.update({' '.join(b) for b in bl})
n = len(files)
named = sum(1 for f, bl in blocks.items() if keys(bl)[0])
print('%s: %d pages, %d with a name (first block of 1 to %d tokens)' % (pkg, n, named, a.max_tokens))


def find(p):
    if p in blocks:
        return p
    for f in files:
        if os.path.basename(f) == p:
            return f
    return None


want = [x for p in a.pages.split(',') if p for x in p.split('~')]
for p in want:
    f = find(p)
    if not f:
        print('\n%s: not a page of the site' % p)
        continue
    name, ks = keys(blocks[f])
    own = sum(len(b) for b, (k, _) in zip(blocks[f], ks)
              if not (count[k] >= 3 and 100 * count[k] >= 20 * n))
    print('\n%s\n  name: %s\n  name tokens: %s\n  tokens %d, in lines on < 20%% of the pages %d'
          % (f, ' '.join(blocks[f][0]), ' '.join(sorted(name)) or '(none)',
             sum(len(b) for b in blocks[f]), own))
    for b, (k, hit) in zip(blocks[f][1:], ks[1:]):
        if hit:
            print('  %5d pages slotted (%4.1f%%), %4d whole: %s'
                  % (count[k], 100.0 * count[k] / n, plain[' '.join(b)], ' '.join(b)[:110]))
