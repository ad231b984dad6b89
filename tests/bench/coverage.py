#!/usr/bin/env python3
"""Coverage of the main content (issue 11): does `BIN extract --text` keep a page's whole
content area? For each page of each site (PKG:HTML_ROOT, unpacked by tests/bench/sites.sh
under ~/.cache/simcrawl-dev/sites/PKG/) two checks:
  (a) heading: the extracted text starts with the page's <h1> (the first one in the page;
      when the page has none, the first heading h1-h6 of the content area, or a
      generator's own title element such as Doxygen's div.title; on Crystal Docs pages,
      whose sidebar opens with the project's name in an <h1>, the area's h1.type-name).
      Both sides are
      normalised to their words, lower-case (\\w+): "shlex — Simple lexical analysis¶"
      is "shlex simple lexical analysis". A page with no heading at all passes (a).
  (b) words: the extracted text holds >= 90% of the words of the content area (multiset
      recall: sum over words of min(count in text, count in area) / words in area).
The content area is chosen per generator, by the markup the generator writes (see RULES);
<main>, <article>, role=main and finally the generic rule are the fallback: <body> less
<nav>, <header>, <footer>, <aside>, the elements whose class or id says nav, menu,
sidebar, toc, breadcrumb or footer (CHROME), and navigation lines: a <p>/<div> mostly of
links, one of them rel=next, prev or up (nav_line). --generic uses that fallback alone on every
page (main, article, role=main, else the generic body), so that a site of a generator
RULES does not know is judged the same way as one it does. script, style, template,
noscript and svg never count. Prints per site: pages, the share of pages passing (a),
(b), and both, then the share of pages under 50% and under 90% of the words and the
pages that extract to (almost) nothing (fewer than 10 words out of a content area of 30
or more); -v adds every failing page with its figures, worst first; --table prints one
Markdown row a site instead.
Python stdlib only (html.parser); the binary runs in a pool of --jobs threads (2)."""
import argparse, codecs, collections, concurrent.futures, glob, json, os, re, subprocess, sys
from html.parser import HTMLParser

VOID = {'area', 'base', 'br', 'col', 'embed', 'hr', 'img', 'input', 'link', 'meta',
        'param', 'source', 'track', 'wbr', 'keygen', 'command'}
SKIP = {'script', 'style', 'template', 'noscript', 'svg', 'head', 'title'}
WORD = re.compile(r'\w+')


class Node:
    __slots__ = ('tag', 'attrs', 'kids', 'parent')

    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.kids, self.parent = tag, attrs, [], parent

    def cls(self):
        return self.attrs.get('class', '').split()


class Tree(HTMLParser):
    """A forgiving tree: an end tag closes the nearest open element of that name (and
    everything opened inside it); an end tag with no open element is ignored; <p>, <li>,
    <dt>, <dd>, <tr>, <td>, <th>, <option> left open close when their parent does."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Node('#root', {}, None)
        self.cur = self.root
        self.generator = ''

    def handle_starttag(self, tag, attrs):
        a = {k: (v or '') for k, v in attrs}
        if tag == 'meta' and a.get('name', '').lower() == 'generator':
            self.generator += ' ' + a.get('content', '')
        n = Node(tag, a, self.cur)
        self.cur.kids.append(n)
        if tag not in VOID:
            self.cur = n

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.cur.tag == tag:
            self.cur = self.cur.parent

    def handle_endtag(self, tag):
        n = self.cur
        while n is not None and n.tag != tag:
            n = n.parent
        if n is not None and n.parent is not None:
            self.cur = n.parent

    def handle_data(self, data):
        self.cur.kids.append(data)


def walk(n):
    """Every element below n (n included), in document order."""
    stack = [n]
    while stack:
        x = stack.pop()
        if isinstance(x, Node):
            yield x
            stack.extend(reversed(x.kids))


def text(n, exclude=lambda x: False):
    out = []
    stack = [n]
    while stack:
        x = stack.pop()
        if isinstance(x, str):
            out.append(x)
        elif x.tag not in SKIP and not exclude(x):
            out.append(' ')
            stack.extend(reversed(x.kids))
    return ''.join(out)


def words(s):
    return WORD.findall(s.lower())


def has(tag=None, id=None, cls=None, **attrs):
    def pred(n):
        if tag and n.tag != tag:
            return False
        if id and n.attrs.get('id') != id:
            return False
        if cls and cls not in n.cls():
            return False
        return all(n.attrs.get(k) == v for k, v in attrs.items())
    return pred


def any_of(*preds):
    return lambda n: any(p(n) for p in preds)


def outermost(root, pred):
    """The elements matching pred that are not inside another match, in page order."""
    found, stack = [], [root]
    while stack:
        x = stack.pop()
        if not isinstance(x, Node):
            continue
        if pred(x):
            found.append(x)
        else:
            stack.extend(reversed(x.kids))
    return found


def body_of(t):
    b = outermost(t.root, has('body'))
    return b[0] if b else t.root


def sqlite_chrome(n):
    # SQLite's wrap.tcl: the logo, tagline, menus and search box are the first
    # div.nosearch directly in <body>; the "page last modified" line closes the page
    return (n.tag == 'div' and 'nosearch' in n.cls() and n.parent is not None
            and n.parent.tag == 'body')


CHROME_TAGS = {'nav', 'header', 'footer', 'aside'}
CHROME_WORDS = re.compile(r'nav|menu|sidebar|breadcrumb|footer|(?:^|[-_ ])toc(?:$|[-_ ])', re.I)


NAV_RELS = {'next', 'prev', 'previous', 'up'}


def nav_line(n):
    """A navigation line by HTML's link types: a <p> or <div> holding a link rel=next,
    prev or up (Texinfo's "Next: ... Previous: ... Up: ..." lines, DocBook's navheader)
    whose text is mostly its links' and that holds no heading."""
    if n.tag not in ('p', 'div', 'table', 'tr'):
        return False
    links = [x for x in walk(n) if x.tag == 'a']
    if not any(NAV_RELS & set(x.attrs.get('rel', '').lower().split()) for x in links):
        return False
    if any(x.tag in ('h1', 'h2', 'h3', 'h4', 'h5', 'h6') for x in walk(n)):
        return False
    all_w = len(words(text(n)))
    link_w = sum(len(words(text(x))) for x in links)
    return all_w > 0 and link_w >= 0.5 * all_w


def chrome(n):
    """Site chrome by its markup: HTML5 sectioning for navigation, a class/id that
    names it (navbar, sphinxsidebar, menu, toc, breadcrumbs, footer, ...), or a
    navigation line by its links' rel (nav_line)."""
    if n.tag in CHROME_TAGS:
        return True
    if n.tag in ('body', 'html'):
        return False
    if CHROME_WORDS.search(n.attrs.get('class', '') + ' ' + n.attrs.get('id', '')):
        return True
    return nav_line(n)


GENERIC = [
    ('role-main', lambda t: True, lambda n: n.attrs.get('role') == 'main', chrome, None),
    ('main', lambda t: True, has('main'), chrome, None),
    ('article', lambda t: True, has('article'), chrome, None),
    ('generic-body', lambda t: True, has('body'), chrome, None),
]

# (name, applies(tree), include predicate, exclude predicate, title predicate)
# include: the outermost matches, in page order, together are the content area.
RULES = [
    ('mkdocs-material', lambda t: 'mkdocs-material' in t.generator,
     has('article', cls='md-content__inner'), lambda n: False, None),
    ('sphinx-django', lambda t: True, has('div', id='docs-content'),
     lambda n: False, None),
    ('sphinx', lambda t: True, has('div', cls='body', role='main'),
     lambda n: False, None),
    ('asciidoc', lambda t: 'AsciiDoc' in t.generator,
     any_of(has('div', id='header'), has('div', id='content')), lambda n: False, None),
    ('doxygen', lambda t: 'Doxygen' in t.generator,
     any_of(has('div', cls='header'), has('div', cls='contents')), lambda n: False,
     has('div', cls='title')),
    ('gi-docgen', lambda t: True, has('section', id='main'), lambda n: False, None),
    # pydoctor: div#main, less its search help and "latest version" link, hidden by an
    # inline display: none until a script shows them
    ('pydoctor', lambda t: 'pydoctor' in t.generator, has('div', id='main'),
     lambda n: 'display: none' in n.attrs.get('style', '').replace('display:none',
                                                                   'display: none'), None),
    ('docbook', lambda t: 'DocBook' in t.generator, has('body'),
     any_of(has('div', cls='navheader'), has('div', cls='navfooter'),
            has('table', cls='navigation'), has('div', cls='footer')), None),
    ('texinfo', lambda t: 'texi2any' in t.generator or 'makeinfo' in t.generator,
     has('body'), any_of(has('div', cls='header'), has('div', cls='nav-panel')), None),
    ('sqlite', lambda t: any('tagline' in n.cls() for n in walk(t.root)), has('body'),
     sqlite_chrome, None),
    # Crystal Docs: div.main-content less the methods inherited from other types (tooltip
    # links to their pages, the same on every sibling type, left out by the extractor on
    # purpose); the page's heading is its h1.type-name, after the sidebar's project name
    # (h1.project-name), so the area's own heading counts (OWN_TITLE)
    ('crystal', lambda t: 'Crystal Docs' in t.generator, has('div', cls='main-content'),
     has('div', cls='methods-inherited'), has('h1', cls='type-name')),
    # sphinx-book-theme (dask): <main role=main> holds the theme's top bar (download
    # and full-screen buttons), the previous/next links and the copyright footer
    ('sphinx-book-theme', lambda t: any('prev-next-area' in n.cls() for n in walk(t.root)),
     lambda n: n.attrs.get('role') == 'main',
     any_of(has('div', cls='topbar'), has('div', cls='prev-next-area'), has('footer')), None),
    ('role-main', lambda t: True, lambda n: n.attrs.get('role') == 'main',
     lambda n: False, None),
    ('main', lambda t: True, has('main'), lambda n: False, None),
    ('article', lambda t: True, has('article'), lambda n: False, None),
] + GENERIC[3:]


# rules whose title element inside the area is the page's heading, before any <h1> of the
# page (a site's name in an <h1> of its sidebar)
OWN_TITLE = {'crystal'}

TOC = any_of(has('div', cls='toc'), has('div', cls='toctree-wrapper'))


def content_area(t, skip_toc=False, generic=False):
    """(rule name, content-area words, heading words) of a parsed page."""
    for name, applies, inc, exc0, title in (GENERIC if generic else RULES):
        exc = (lambda n, e=exc0: e(n) or TOC(n)) if skip_toc else exc0
        if not applies(t):
            continue
        area = outermost(t.root, inc)
        if not area:
            continue
        w = []
        for n in area:
            w += words(text(n, exc))
        h1 = outermost(t.root, has('h1'))
        head = None
        own = [x for n in area for x in outermost(n, title)] if name in OWN_TITLE else []
        if own:
            head = own[0]
        elif h1:
            head = h1[0]
        else:
            heads = []
            for n in area:
                heads += outermost(n, lambda x: (x.tag in ('h1', 'h2', 'h3', 'h4', 'h5', 'h6')
                                                 or (title is not None and title(x)))
                                   and not exc(x))
            head = heads[0] if heads else None
        return name, w, words(text(head)) if head is not None else []
    return 'none', [], []


# A page's declared charset: a BOM, else <meta charset> or <meta http-equiv
# content="...; charset=..."> in its first 1024 bytes (the HTML standard's prescan), else
# UTF-8. ISO-8859-1 and US-ASCII are read as windows-1252, as browsers (and
# extract/charset.c) do. Reading an ISO-8859-1 page as UTF-8 turned every accented word
# into two (focalinux: "Configuração" -> "configura", "o"), which the extractor's
# correctly decoded text did not hold.
CHARSET_RE = re.compile(rb'<meta[^>]+charset\s*=\s*["\']?\s*([-\w:.]+)', re.I)


def page_charset(raw):
    if raw.startswith(b'\xef\xbb\xbf'):
        return 'utf-8'
    if raw.startswith((b'\xff\xfe', b'\xfe\xff')):
        return 'utf-16'
    m = CHARSET_RE.search(raw[:1024])
    if not m:
        return 'utf-8'
    label = m.group(1).decode('ascii', 'replace').lower()
    if label in ('iso-8859-1', 'iso8859-1', 'latin1', 'latin-1', 'us-ascii', 'ascii'):
        return 'cp1252'
    try:
        return codecs.lookup(label).name
    except LookupError:
        return 'utf-8'


def check(bin_, path, skip_toc=False, generic=False):
    raw = open(path, 'rb').read()
    t = Tree()
    try:
        t.feed(raw.decode(page_charset(raw), errors='replace'))
        t.close()
    except Exception:  # html.parser only fails on pathological input; count it
        pass
    rule, area, head = content_area(t, skip_toc, generic)
    r = subprocess.run([bin_, 'extract', '--text', path], capture_output=True)
    got = words(r.stdout.decode('utf-8', errors='replace'))
    starts = not head or got[:len(head)] == head
    ca, cg = collections.Counter(area), collections.Counter(got)
    kept = sum(min(c, cg[w]) for w, c in ca.items())
    recall = kept / len(area) if area else 1.0
    return dict(path=path, rule=rule, head=' '.join(head), starts=starts, area=len(area),
                kept=kept, recall=recall, first=' '.join(got[:8]), rc=r.returncode,
                got=len(got), empty=len(got) < 10 and len(area) >= 30)


def compare(before, after):
    """Page by page: two --dump files of the same pages (two binaries)."""
    def load(p):
        return {(r['site'], r['path']): r for r in map(json.loads, open(p))}
    b, a = load(before), load(after)
    both = [k for k in b if k in a]
    moved = sorted((k for k in both if abs(a[k]['recall'] - b[k]['recall']) > 1e-9),
                   key=lambda k: a[k]['recall'] - b[k]['recall'])
    for k in moved:
        print(f"  {k[0]} {k[1]}: {b[k]['recall']:.2f} -> {a[k]['recall']:.2f} "
              f"(extracted {b[k]['got']} -> {a[k]['got']} words of {a[k]['area']})")
    sites = collections.OrderedDict((k[0], None) for k in both)
    tb = ta = 0
    for s in sites:
        ks = [k for k in both if k[0] == s]
        lb = sum(b[k]['recall'] < 0.9 for k in ks)
        la = sum(a[k]['recall'] < 0.9 for k in ks)
        tb, ta = tb + lb, ta + la
        if lb != la:
            print(f'{s}: {len(ks)} pages, under 90%: {lb} -> {la}')
    print(f'{len(both)} pages, {len(moved)} moved '
          f'({sum(a[k]["recall"] > b[k]["recall"] for k in moved)} up), under 90%: '
          f'{tb} ({100 * tb / max(1, len(both)):.1f}%) -> {ta} ({100 * ta / max(1, len(both)):.1f}%)')


def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--bin', default='./simcrawl')
    ap.add_argument('--cache', default=os.path.expanduser('~/.cache/simcrawl-dev'),
                    help='where tests/bench/sites.sh unpacked the sites')
    ap.add_argument('--site', action='append', default=[],
                    help='PKG:HTML_ROOT (repeatable; or several joined by commas)')
    ap.add_argument('--min-recall', type=float, default=0.9)
    ap.add_argument('--jobs', type=int, default=2)
    ap.add_argument('--worst', type=int, default=0,
                    help='with -v, list at most this many failing pages a site (0: all)')
    ap.add_argument('--skip-toc', action='store_true',
                    help="leave tables of contents (DocBook div.toc, Sphinx div.toctree-wrapper) "
                         "out of the content area: chapter pages are then judged on their own text")
    ap.add_argument('--generic', action='store_true',
                    help='the generic content area on every page (main, article, role=main, '
                         'else body less navigation), whatever the generator')
    ap.add_argument('--max-pages', type=int, default=0,
                    help='at most this many pages a site, evenly spaced over the sorted '
                         'file list (0: all)')
    ap.add_argument('--table', action='store_true',
                    help='one Markdown table row a site: pages, < 50%%, < 90%%, (almost) '
                         'nothing, starts with the heading')
    ap.add_argument('-v', action='store_true', help='list the failing pages, worst first')
    ap.add_argument('--dump', metavar='FILE',
                    help='also write one JSON line a page (site, path, area and kept words, '
                         'recall, extracted words, heading check) to FILE, for comparing '
                         'two binaries page by page (--compare)')
    ap.add_argument('--compare', nargs=2, metavar=('BEFORE', 'AFTER'),
                    help='compare two --dump files (no run): the pages whose recall moved, '
                         'worst loss first, and per site the pages under 90%% before/after')
    a = ap.parse_args()
    if a.compare:
        compare(*a.compare)
        return
    if not a.site:
        ap.error('--site is required (or --compare BEFORE AFTER)')
    dump = open(a.dump, 'w') if a.dump else None
    sites = [s for arg in a.site for s in arg.split(',') if s]
    for site in sites:
        pkg, sub = site.split(':', 1)
        root = os.path.join(a.cache, 'sites', pkg, sub)
        if not os.path.isdir(root):
            sys.exit(f'coverage: no folder {root}: run tests/bench/sites.sh first')
        files = sorted(glob.glob(root + '/**/*.html', recursive=True))
        if a.max_pages and len(files) > a.max_pages:
            files = [files[i * len(files) // a.max_pages] for i in range(a.max_pages)]
        with concurrent.futures.ThreadPoolExecutor(a.jobs) as ex:
            res = list(ex.map(lambda f: check(a.bin, f, a.skip_toc, a.generic), files))
        if dump:
            for r in res:
                dump.write(json.dumps(dict(r, site=pkg, path=os.path.relpath(r['path'], root)))
                           + '\n')
            dump.flush()
        n = max(1, len(res))
        lt50 = sum(r['recall'] < 0.5 for r in res)
        lt90 = sum(r['recall'] < 0.9 for r in res)
        empty = sum(r['empty'] for r in res)
        if a.table:
            print(f'| {pkg} | {len(res)} | {100 * lt50 / n:.1f}% | {100 * lt90 / n:.1f}% | '
                  f'{empty} | {100 * sum(r["starts"] for r in res) / n:.1f}% |', flush=True)
            continue
        good_h = [r for r in res if r['starts']]
        good_w = [r for r in res if r['recall'] >= a.min_recall]
        both = [r for r in res if r['starts'] and r['recall'] >= a.min_recall]
        rules = collections.Counter(r['rule'] for r in res)
        print(f'{pkg}: {len(res)} pages, starts with h1 {100 * len(good_h) / n:.1f}%, '
              f'>= {100 * a.min_recall:.0f}% of words {100 * len(good_w) / n:.1f}%, '
              f'both {100 * len(both) / n:.1f}% ({len(both)} of {len(res)}); '
              f'content area: {", ".join(f"{k} {v}" for k, v in rules.most_common())}; '
              f'< 50% of words {100 * lt50 / n:.1f}%, < 90% {100 * lt90 / n:.1f}%, '
              f'(almost) nothing {empty}', flush=True)
        if a.v:
            bad = [r for r in res if not (r['starts'] and r['recall'] >= a.min_recall)]
            bad.sort(key=lambda r: (r['recall'] >= a.min_recall, r['recall'], r['starts']))
            for r in bad[:a.worst or None]:
                print(f'  {os.path.relpath(r["path"], root)}: words {r["kept"]} of {r["area"]}'
                      f' ({100 * r["recall"]:.0f}%, extracted {r["got"]}), heading {"ok" if r["starts"] else "MISSING"}'
                      f' [{r["head"][:50]}] text starts [{r["first"][:60]}]')


if __name__ == '__main__':
    main()
