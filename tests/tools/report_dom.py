"""What the cluster-report checks read from the DOM headless Chromium built of a report
(tests/cli/report.sh, report_minhash.sh, crawl_report.sh): imported by their checks
(PYTHONPATH=tests/tools), which assert on the fields with want() and print 'dom ok' or
what failed.

    p = parse(path)   p.sections   the cluster sections' ids
                      p.links      the member links (a.doc), in order
                      p.badges     the badges' kinds (rep, exact, near)
                      p.ids        the text of each td with an id (n-docs, n-clusters, ...)
                      p.details    word-diff details outside the navigation
                      p.dels, p.ins  deleted and inserted words
                      p.skipped    rows of pages not fingerprinted
                      p.skipped_links  the first link of each such row
                      p.cells      the start of each members table's similarity cell (td.d)
                      p.hist       the histogram rows' classes ('k' marks the threshold)
"""
from html.parser import HTMLParser


class Report(HTMLParser):
    def __init__(s):
        super().__init__()
        s.sections = []
        s.links = []
        s.badges = []
        s.ids = {}
        s.cur = None
        s.details = 0
        s.innav = 0
        s.dels = s.ins = 0
        s.skipped = 0
        s.skipped_links = []
        s.skip_td = 0
        s.cells = []
        s.incell = 0
        s.hist = []
        s.inhist = 0

    def handle_starttag(s, t, a):
        a = dict(a)
        c = a.get('class', '') or ''
        if t == 'section' and 'cluster' in c:
            s.sections.append(a.get('id'))
        if t == 'a' and 'doc' in c.split():
            s.links.append(a.get('href'))
        if t == 'span' and 'badge' in c:
            s.badges.append(c.split()[1])
        if t == 'nav':
            s.innav = 1
        if t == 'details' and not s.innav:
            s.details += 1
        if t == 'del':
            s.dels += 1
        if t == 'ins':
            s.ins += 1
        if t == 'tr' and c == 'skipped':
            s.skipped += 1
            s.skip_td = 1
        if t == 'a' and s.skip_td:
            s.skipped_links.append(a.get('href'))
            s.skip_td = 0
        if t == 'td' and a.get('id'):
            s.cur = a['id']
        if t == 'table' and 'members' in c:
            s.incell = 1
        if t == 'table' and 'hist' in c:
            s.inhist = 1
        if t == 'tr' and s.inhist:
            s.hist.append(c)
        if t == 'td' and c == 'd' and s.incell:
            s.cells.append('')

    def handle_endtag(s, t):
        if t == 'nav':
            s.innav = 0
        if t == 'table':
            s.incell = s.inhist = 0

    def handle_data(s, data):
        if s.cur:
            s.ids[s.cur] = data.strip()
            s.cur = None
        elif s.incell and s.cells and len(s.cells[-1]) < 40:
            s.cells[-1] += data.strip() + ' '


def parse(path):
    p = Report()
    p.feed(open(path, encoding='utf-8').read())
    return p


errors = []


def want(cond, what):
    if not cond:
        errors.append(what)


def done():
    print('\n'.join(errors) if errors else 'dom ok')
