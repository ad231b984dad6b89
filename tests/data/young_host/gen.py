#!/usr/bin/env python3
# The site of tests/cli/crawl_young_host.sh, written under argv[1]: index.html and
# p01..p19.html are a 600-word menu paragraph the extractor keeps, 6 words of their own and
# a footer (links in a <nav>, left out of the main text); long.html is the menu, 100
# sentences of its own and a date line; copy/long.html its mirror with the date changed.
import os, random, sys
root = sys.argv[1]
os.makedirs(os.path.join(root, "copy"), exist_ok=True)
menu = " ".join("menu%03d" % i for i in range(600))
words = ["w%03d" % i for i in range(800)]
foot = "Copyright the example project all rights reserved terms of use privacy policy"
def page(name, own, links=(), extra=""):
    r = random.Random(name)
    body = " ".join(r.choice(words) for _ in range(own))
    if own > 100:
        body = "</p><p>".join(" ".join("x%04d" % r.randrange(5000) for _ in range(12)) + "."
                              for _ in range(own // 12))
    nav = "".join('<a href="%s">%s</a> ' % (l, l) for l in links)
    with open(os.path.join(root, name), "w") as f:
        f.write('<html><head><title>%s</title></head><body><nav>%s</nav><div class="content">'
                '<p>%s</p><p>%s</p>%s<p>%s</p></div></body></html>\n'
                % (name, nav, menu, body, extra, foot))
pages = ["p%02d.html" % n for n in range(1, 20)]
page("index.html", 6, pages + ["long.html", "copy/long.html"])
for p in pages:
    page(p, 6)
page("long.html", 1200, extra="<p>Page generated on 2026-11-27 at 07:00.</p>")
body = open(os.path.join(root, "long.html")).read()
open(os.path.join(root, "copy/long.html"), "w").write(body.replace("2026-11-27", "2026-11-28"))
