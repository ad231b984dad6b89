#!/usr/bin/env python3
"""The young-host site of tests/cli/crawl_young_host.sh and tests/bench/young_host_crawl.sh.

gen.py ROOT [--short N] [--links nav|list] writes under ROOT: index.html and p01..pNN.html
(N = 19 by default), each a 600-word menu paragraph the extractor keeps, 6 words of their own
and a footer; long.html, the menu, 100 sentences of its own and a date line; copy/long.html,
its mirror with the date changed. index.html links to every other page: in a <nav> before
the content (--links nav, the default) or in a <ul> after it (--links list); either way the
links are left out of the main text."""
import argparse, os, random
ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
ap.add_argument("root")
ap.add_argument("--short", type=int, default=19, help="short pages p01..pNN (default 19)")
ap.add_argument("--links", choices=("nav", "list"), default="nav")
a = ap.parse_args()
os.makedirs(os.path.join(a.root, "copy"), exist_ok=True)
menu = " ".join("menu%03d" % i for i in range(600))
words = ["w%03d" % i for i in range(800)]
foot = "Copyright the example project all rights reserved terms of use privacy policy"
def page(name, own, links=(), extra=""):
    r = random.Random(name)
    body = " ".join(r.choice(words) for _ in range(own))
    if own > 100:  # sentences of 12 words, one paragraph each
        body = "</p><p>".join(" ".join("x%04d" % r.randrange(5000) for _ in range(12)) + "."
                              for _ in range(own // 12))
    content = '<div class="content"><p>%s</p><p>%s</p>%s<p>%s</p></div>' % (menu, body, extra, foot)
    if a.links == "nav":
        html = "<nav>%s</nav>%s" % ("".join('<a href="%s">%s</a> ' % (l, l) for l in links), content)
    else:
        html = "%s<ul>%s</ul>" % (content, "".join('<li><a href="%s">%s</a></li>' % (l, l) for l in links))
    with open(os.path.join(a.root, name), "w") as f:
        f.write("<html><head><title>%s</title></head><body>%s</body></html>\n" % (name, html))
pages = ["p%02d.html" % n for n in range(1, a.short + 1)]
page("index.html", 6, pages + ["long.html", "copy/long.html"])
for p in pages:
    page(p, 6)
page("long.html", 1200, extra="<p>Page generated on 2026-11-27 at 07:00.</p>")
body = open(os.path.join(a.root, "long.html")).read()
open(os.path.join(a.root, "copy/long.html"), "w").write(body.replace("2026-11-27", "2026-11-28"))
