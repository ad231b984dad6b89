"""The reference of ../shared/tools/falsedrop-score, line for line, for the study scripts
(weight_study.py, stream_falsedrop.py): a page's text lines, with the lines on more than
30% of a site's pages left out (the site's template), as word 3-shingles; a pair whose
shingle Jaccard is < 0.5 is a false drop."""
import collections
import html
import re


def text_lines(t):
    """the text lines of one page's HTML (a str)"""
    t = re.sub(r"(?is)<(script|style|head)\b.*?</\1>", " ", t)
    t = re.sub(r"(?i)<(br|p|div|li|tr|h[1-6]|pre|dt|dd|table|section|article)\b[^>]*>", "\n", t)
    t = html.unescape(re.sub(r"<[^>]+>", " ", t))
    return [re.sub(r"\s+", " ", x).strip().lower() for x in t.split("\n") if x.strip()]


def read_lines(path):
    return text_lines(open(path, encoding="utf-8", errors="replace").read())


def common_lines(lines):
    """the site's template: the lines on more than 30% of its pages (lines: page -> lines)"""
    df = collections.Counter(x for ls in lines.values() for x in set(ls))
    return {x for x, c in df.items() if c > 0.3 * len(lines)}


def ref(lns, common, n=3):
    """a page's reference: the word n-shingles of its lines outside the template"""
    w = " ".join(x for x in lns if x not in common).split()
    return frozenset(" ".join(w[i:i + n]) for i in range(max(1, len(w) - n + 1)))


def refs(files):
    """every file's reference, the files being one site"""
    lines = {f: read_lines(f) for f in files}
    common = common_lines(lines)
    return {f: ref(lines[f], common) for f in files}


def jaccard(x, y):
    return len(x & y) / max(1, len(x | y))
