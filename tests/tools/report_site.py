#!/usr/bin/env python3
"""The small sites the cluster-report checks run on (tests/cli/report.sh,
report_minhash.sh, crawl_report.sh): a user guide of 400 random words, an exact copy, a
near copy with two words changed, unrelated pages and a stub too short to fingerprint,
the same bytes on every run (a seeded random.Random).

    report_site.py pages DIR [--odd]   guide.html, sub/guide copy.html, sub/guide-v2.html
                                       (one word changed, two put for one), other0..4.html,
                                       stub.html; --odd adds z<b>&"odd".html, the guide
                                       and one word more under a title full of markup
    report_site.py crawl DIR           index.html linking docs/guide.html, copy.html,
                                       guide-v2.html (two words changed), other.html,
                                       notes.txt (not a page), stub.html and the dead
                                       link gone.html
"""
import argparse
import os
import random

WORDS = ['w%03d' % i for i in range(500)]


def words(seed):
    """w(n): n words drawn from WORDS by a random.Random(seed) of the site's own."""
    r = random.Random(seed)
    return lambda n: ' '.join(r.choice(WORDS) for _ in range(n))


def pages(d, odd):
    w = words(11)
    page = ('<html><head><title>%s</title></head><body><nav>Home | Docs | About</nav><main>'
            '<h1>%s</h1><p>%s</p></main></body></html>\n')
    os.makedirs(os.path.join(d, 'sub'), exist_ok=True)
    guide = w(400)
    open(d + '/guide.html', 'w').write(page % ('User guide', 'User guide', guide))
    open(d + '/sub/guide copy.html', 'w').write(page % ('User guide', 'User guide', guide))
    g = guide.split()
    g[50] = 'changed'
    g[300:301] = ['two', 'inserted']
    open(d + '/sub/guide-v2.html', 'w').write(page % ('User guide (v2)', 'User guide', ' '.join(g)))
    if odd:
        open(d + '/z<b>&"odd".html', 'w').write(
            page % ('&lt;Odd &amp; "title"&gt;', 'User guide', guide + ' one more'))
    for i in range(5):
        open(d + '/other%d.html' % i, 'w').write(page % ('Other %d' % i, 'Other', w(300)))
    open(d + '/stub.html', 'w').write(
        '<html><head><title>Stub</title></head><body><p>hi</p></body></html>')


def crawl(d):
    w = words(18)
    page = ('<html><head><title>%s</title></head><body><main><h1>%s</h1><p>%s</p></main>%s'
            '</body></html>\n')
    os.makedirs(os.path.join(d, 'docs'), exist_ok=True)
    guide = w(400)
    links = ''.join('<a href="%s">%s</a> ' % (u, u) for u in
                    ('docs/guide.html', 'docs/copy.html', 'docs/guide-v2.html', 'docs/stub.html',
                     'docs/gone.html', 'docs/other.html', 'docs/notes.txt'))
    open(d + '/index.html', 'w').write(page % ('Home', 'Home', w(300), links))
    open(d + '/docs/guide.html', 'w').write(page % ('User guide', 'User guide', guide, ''))
    open(d + '/docs/copy.html', 'w').write(page % ('User guide', 'User guide', guide, ''))
    g = guide.split()
    g[50] = 'changed'
    g[300] = 'altered'
    open(d + '/docs/guide-v2.html', 'w').write(
        page % ('User guide (v2)', 'User guide', ' '.join(g), ''))
    open(d + '/docs/other.html', 'w').write(page % ('Other', 'Other', w(300), ''))
    open(d + '/docs/notes.txt', 'w').write('plain text, not a page\n')
    open(d + '/docs/stub.html', 'w').write(
        '<html><head><title>Stub</title></head><body><p>hi</p></body></html>\n')


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('layout', choices=('pages', 'crawl'))
    ap.add_argument('dir')
    ap.add_argument('--odd', action='store_true')
    a = ap.parse_args()
    if a.layout == 'pages':
        pages(a.dir, a.odd)
    else:
        crawl(a.dir)


if __name__ == '__main__':
    main()
