"""Generated HTML pages for the shell tests (tests/cli/*.sh): paragraphs of words drawn
from one small vocabulary with a fixed seed, so that pages built from the same paragraphs
are near-duplicates and pages built from other seeds are not.

    import sys; sys.path.insert(0, "tests"); from pagegen import para, page
"""
import random

WORDS = ("archive crawler page text river mountain library museum history science record "
         "index duplicate network server client protocol window garden market village harbor "
         "bridge forest winter summer autumn spring evening morning").split()


def para(n, seed):
    """n words drawn with random.Random(seed) from WORDS, joined by spaces."""
    r = random.Random(seed)
    return " ".join(r.choice(WORDS) for _ in range(n))


def page(title, paras):
    """An HTML page: the title as <title> and <h1>, then each paragraph as a <p>."""
    return ("<html><head><title>%s</title></head><body><h1>%s</h1>%s</body></html>\n"
            % (title, title, "".join("<p>%s.</p>" % p for p in paras)))
