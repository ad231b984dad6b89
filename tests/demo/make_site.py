#!/usr/bin/env python3
"""Writes tests/demo/site/: the small bundled site that `make demo` crawls.

A field guide to birds with real near-duplicates, as sites have them:
  /articles/NAME.html         unique articles (the originals)
  /mirror/articles/NAME.html  a mirrored section: same articles, another header/nav/footer;
                              each also links to /mirror/extra/NAME-notes.html, a page that
                              only the mirror links to (a crawler that drops the mirror's
                              duplicates never requests it)
  /print/NAME.html            printer-friendly copies (no navigation at all)
  /blog/NAME-reposted.html    the same article re-posted with another sidebar and comments
  /articles/NAME.html?print=1 byte-identical to the original (an exact duplicate)
plus unique pages (home, about, news, sections), robots.txt disallowing /private/, a PDF
(not HTML: filtered) and one broken link (404). The output is deterministic; the files
are committed, this script documents how they were made: python3 tests/demo/make_site.py
"""
import os
import random

OUT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "site")

BIRDS = {
    "robin": ("European Robin", "Erithacus rubecula", "gardens, hedgerows and woodland edges",
              "earthworms, beetles and soft fruit", "orange-red breast and face", "mossy cup in a bank or wall"),
    "wren": ("Wren", "Troglodytes troglodytes", "dense undergrowth, cliffs and gardens",
             "tiny insects and spiders", "cocked tail and barred brown plumage", "domed nest of moss"),
    "kingfisher": ("Common Kingfisher", "Alcedo atthis", "slow rivers, canals and lakes",
                   "small fish such as minnows and sticklebacks", "electric blue back and orange belly",
                   "tunnel dug into a sandy river bank"),
    "heron": ("Grey Heron", "Ardea cinerea", "shallow water of marshes, rivers and estuaries",
              "fish, frogs and small mammals", "long neck, dagger bill and grey wings",
              "platform of sticks high in a tree colony"),
    "swift": ("Common Swift", "Apus apus", "the open sky over towns and lakes",
              "flying insects caught on the wing", "sickle-shaped wings and screaming calls",
              "cup of feathers glued with saliva under roof tiles"),
    "owl": ("Barn Owl", "Tyto alba", "farmland, rough grassland and field margins",
            "voles, shrews and mice", "heart-shaped white face", "bare ledge in a barn or hollow tree"),
    "puffin": ("Atlantic Puffin", "Fratercula arctica", "sea cliffs and offshore islands",
               "sand eels and small fish", "striped triangular bill", "burrow in clifftop turf"),
    "woodpecker": ("Great Spotted Woodpecker", "Dendrocopos major", "mature woodland and parks",
                   "insect larvae under bark, seeds and nuts", "black and white plumage with red undertail",
                   "hole chiselled into a dead trunk"),
    "goldfinch": ("Goldfinch", "Carduelis carduelis", "weedy fields, orchards and gardens",
                  "thistle and teasel seeds", "red face and gold wing bars", "neat cup at the tip of a branch"),
    "swallow": ("Barn Swallow", "Hirundo rustica", "farms with open pasture and water nearby",
                "flies and aphids taken low over fields", "long tail streamers and red throat",
                "mud cup on a beam inside a barn"),
    "curlew": ("Eurasian Curlew", "Numenius arquata", "moorland in summer and estuaries in winter",
               "worms, crabs and shellfish probed from mud", "very long down-curved bill",
               "scrape in tall grass on the moor"),
    "jay": ("Eurasian Jay", "Garrulus glandarius", "oak woodland", "acorns, which it buries by the thousand",
            "pinkish body and blue wing patch", "loose twig nest in a tree fork"),
}

# Sentence pools: every article draws its own mix, so the originals are far apart.
POOL = [
    "Field workers who ring the {name} find that most birds stay within a few kilometres of where they hatched.",
    "In a hard winter the {name} suffers badly, and numbers can take several years to recover.",
    "The song of the {name} is easiest to learn at dawn, when there is little traffic noise.",
    "Ornithologists first described {latin} in the eighteenth century from a specimen shot near a mill.",
    "A pair of {name}s will defend their territory against rivals with displays rather than fights.",
    "Young {name}s leave the nest before they can fly well and are fed by both parents for weeks.",
    "Surveys since 1970 show that the {name} has declined where hedges and ponds were removed.",
    "Look for the {mark}; it is the quickest way to tell the {name} from its relatives.",
    "The {name} is found in {habitat}, and it rarely strays far from cover.",
    "Its diet is mostly {food}, with seasonal changes that follow what is abundant.",
    "The nest is a {nest}, built in a few days and sometimes reused the following spring.",
    "Eggs hatch after about two weeks, and a second brood is common in a warm summer.",
    "Predators include sparrowhawks, stoats and domestic cats, which take many fledglings.",
    "Photographers often wait for hours in a hide to catch the {name} in good light.",
    "Folklore links the {name} to weather signs, though none of the sayings stands up to records.",
    "Migration routes of the {name} were mapped with tiny geolocators weighing less than a gram.",
    "Older field guides call it by a different name, which still survives in country speech.",
    "Volunteers count the {name} each spring on fixed routes, giving one of the longest data sets we have.",
    "A garden with native shrubs, a little untidiness and fresh water helps the {name} more than any feeder.",
    "The moult happens after breeding, when the bird becomes secretive and hard to see.",
    "In flight the {name} shows a silhouette that experienced watchers recognise at a great distance.",
    "Climate records suggest that the {name} now nests earlier than it did a century ago.",
    "Ringing recoveries show that some individuals live for more than ten years.",
    "The chicks grow quickly on a diet of {food} brought in by the adults dozens of times an hour.",
    "Local groups have put up nest boxes and cameras so that schools can watch the {name} breed.",
    "Rival males sing from high perches at the edges of their territory throughout the spring.",
    "On cold nights several birds may roost together to save heat.",
    "Scientists have used the {name} to study how birds learn their calls from neighbours.",
]

NAV_MAIN = ('<nav class="top"><a href="/index.html">Home</a> | <a href="/articles/index.html">Species</a> | '
            '<a href="/news/index.html">News</a> | <a href="/about.html">About</a> | '
            '<a href="/contact.html">Contact</a></nav>')
NAV_MIRROR = ('<div id="mirror-banner">You are reading the Northern Mirror of the Field Guide. '
              '<a href="/mirror/index.html">Mirror home</a> &middot; <a href="/mirror/articles/index.html">'
              'All species (mirror)</a> &middot; <a href="/index.html">Original site</a></div>')
FOOT_MAIN = '<footer>Field Guide to Garden and Shore Birds &middot; text licensed CC BY-SA</footer>'
FOOT_MIRROR = '<footer>Mirror maintained by volunteers. Report problems to the mirror team.</footer>'


def article_text(slug):
    name, latin, habitat, food, mark, nest = BIRDS[slug]
    rnd = random.Random("field-guide-" + slug)
    sentences = rnd.sample(POOL, 14)
    fill = dict(name=name, latin=latin, habitat=habitat, food=food, mark=mark, nest=nest)
    paras = []
    for i in range(0, 14, 4):
        paras.append(" ".join(s.format(**fill) for s in sentences[i:i + 4]))
    intro = (f"The {name} ({latin}) is a bird of {habitat}. It feeds on {food} and is known "
             f"by its {mark}. This article describes where to find it, how it breeds and how it is faring.")
    return name, latin, [intro] + paras


def page(title, body, head_extra=""):
    return ("<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<title>{title}</title>{head_extra}</head>\n<body>\n{body}\n</body></html>\n")


def article_body(slug, paras, name, latin):
    ps = "\n".join(f"<p>{p}</p>" for p in paras)
    return f"<article><h1>{name}</h1><p class=\"latin\"><i>{latin}</i></p>\n{ps}\n</article>"


def write(path, html):
    full = os.path.join(OUT, path.lstrip("/"))
    os.makedirs(os.path.dirname(full), exist_ok=True)
    with open(full, "w", encoding="utf-8") as f:
        f.write(html)


def main():
    slugs = sorted(BIRDS)
    mirrored = slugs[:6]
    printed = slugs[2:8]
    reposted = slugs[5:9]
    # originals
    for slug in slugs:
        name, latin, paras = article_text(slug)
        related = " ".join(f'<a href="/articles/{s}.html">{BIRDS[s][0]}</a>' for s in slugs if s != slug)
        extra = ""
        if slug in printed:
            extra += f'<p><a href="/print/{slug}.html">Printer-friendly version</a></p>'
        if slug in slugs[:3]:
            extra += f'<p><a href="/articles/{slug}.html?print=1">Print this page</a></p>'
        body = (NAV_MAIN + "\n<main>" + article_body(slug, paras, name, latin) + "</main>\n"
                f'<aside><h2>Other species</h2>{related}{extra}</aside>\n' + FOOT_MAIN)
        write(f"/articles/{slug}.html", page(f"{name} - Field Guide", body,
                                              f'<link rel="canonical" href="/articles/{slug}.html">'))
    # mirror: same articles, different chrome, and a page only the mirror links to
    for slug in mirrored:
        name, latin, paras = article_text(slug)
        body = (NAV_MIRROR + "\n<div class=\"content\">" + article_body(slug, paras, name, latin) +
                f'<p class="mirror-notes"><a href="/mirror/extra/{slug}-notes.html">Mirror notes for this species</a></p>'
                "</div>\n" + FOOT_MIRROR)
        write(f"/mirror/articles/{slug}.html", page(f"{name} (mirror)", body))
        notes = (NAV_MIRROR + f"<main><h1>Mirror notes: {name}</h1><p>These notes exist only on the mirror. "
                 f"Sync log for the {name} page: last copied from the original site during the night run; "
                 "images are served from the mirror's own storage and may lag behind by a day.</p>"
                 f"<p>Checksum list, transfer statistics and the volunteer rota for {latin} follow.</p></main>")
        write(f"/mirror/extra/{slug}-notes.html", page(f"Mirror notes {name}", notes))
    mirror_list = "".join(f'<li><a href="/mirror/articles/{s}.html">{BIRDS[s][0]}</a></li>' for s in mirrored)
    write("/mirror/index.html", page("Northern Mirror", NAV_MIRROR + "<main><h1>Northern Mirror</h1><p>A copy of "
          "the Field Guide kept for readers in the north, with its own navigation.</p>"
          f'<p><a href="/mirror/articles/index.html">Species on the mirror</a></p></main>' + FOOT_MIRROR))
    write("/mirror/articles/index.html", page("Mirror species", NAV_MIRROR +
          f"<main><h1>Species (mirror)</h1><ul>{mirror_list}</ul></main>" + FOOT_MIRROR))
    # printer-friendly copies: the article alone
    for slug in printed:
        name, latin, paras = article_text(slug)
        write(f"/print/{slug}.html", page(f"{name} (print)", article_body(slug, paras, name, latin) +
                                          "<p><small>fieldguide.example</small></p>"))
    # re-posted on the blog with another sidebar and comments
    for slug in reposted:
        name, latin, paras = article_text(slug)
        body = ('<header><a href="/blog/index.html">The Field Guide Blog</a></header>\n<div class="post">' +
                article_body(slug, paras, name, latin) + "</div>\n"
                '<div class="sidebar"><h3>Archives</h3><a href="/blog/index.html">All posts</a> '
                '<a href="/news/index.html">News</a></div>\n'
                '<aside class="comments"><h3>2 comments</h3><p>Lovely write-up, saw one last week!</p>'
                '<p>Thanks for sharing.</p></aside>')
        write(f"/blog/{slug}-reposted.html", page(f"Re-post: {name}", body))
    blog_list = "".join(f'<li><a href="/blog/{s}-reposted.html">Re-post: {BIRDS[s][0]}</a></li>' for s in reposted)
    write("/blog/index.html", page("Blog", NAV_MAIN + "<main><h1>The Field Guide Blog</h1><p>Favourite articles "
          f"re-posted for our newsletter readers, with comments open.</p><ul>{blog_list}</ul></main>" + FOOT_MAIN))
    # unique pages
    species = "".join(f'<li><a href="/articles/{s}.html">{BIRDS[s][0]}</a></li>' for s in slugs)
    write("/articles/index.html", page("Species", NAV_MAIN + "<main><h1>All species</h1><p>Every species in the "
          f"guide, in alphabetical order of the short name.</p><ul>{species}</ul></main>" + FOOT_MAIN))
    news = [
        ("spring-count", "Spring count results", "Volunteers walked 312 routes this spring. Curlews were down again on "
         "the moors while goldfinches continued their rise in suburban gardens, helped by feeders and weedy verges."),
        ("new-hide", "A new hide at the reservoir", "The reservoir hide reopened after a rebuild funded by members. It "
         "now has wheelchair access, wider windows at two heights and a ramp from the car park."),
        ("ringing-course", "Ringing course dates", "Trainee ringers can join weekend sessions from March. You will "
         "learn safe handling, ageing and sexing, and how to submit records to the national scheme."),
        ("storm-damage", "Storm damage on the island", "The autumn storm destroyed part of the puffin colony's turf "
         "and the jetty. Wardens will assess burrows in April before any visitors land."),
    ]
    for slug, title, text in news:
        write(f"/news/{slug}.html", page(title, NAV_MAIN + f"<main><h1>{title}</h1><p>{text}</p>"
              "<p>Posted by the editors.</p></main>" + FOOT_MAIN))
    news_list = "".join(f'<li><a href="/news/{s}.html">{t}</a></li>' for s, t, _ in news)
    write("/news/index.html", page("News", NAV_MAIN + f"<main><h1>News</h1><ul>{news_list}</ul>"
          '<p>Favourite articles are re-posted on <a href="/blog/index.html">the blog</a>.</p></main>' + FOOT_MAIN))
    write("/about.html", page("About", NAV_MAIN + "<main><h1>About the guide</h1><p>The Field Guide is written by "
          "amateur birdwatchers who check every article against survey data. There is a mirror for northern readers "
          "and a blog where favourite pages are re-posted.</p><p>Members may read our "
          '<a href="/private/minutes.html">committee minutes</a> (not for crawlers) and download the '
          '<a href="/files/checklist.pdf">printable checklist</a>.</p></main>' + FOOT_MAIN))
    write("/contact.html", page("Contact", NAV_MAIN + "<main><h1>Contact</h1><p>Write to the editors with sightings, "
          "corrections or photographs you are happy to share under the site licence. We answer within a week. "
          'An old page about <a href="/articles/dodo.html">the dodo</a> was removed.</p></main>' + FOOT_MAIN))
    write("/private/minutes.html", page("Minutes", "<p>Committee minutes: budget, hide repairs, volunteers.</p>"))
    write("/index.html", page("Field Guide to Garden and Shore Birds", NAV_MAIN + "<main><h1>Field Guide to Garden "
          "and Shore Birds</h1><p>Twelve species described by the people who watch them, with news from the "
          "reserves. Start with the <a href=\"/articles/index.html\">species list</a>, read the "
          "<a href=\"/news/index.html\">news</a>, or visit the "
          "<a href=\"/mirror/index.html\">Northern Mirror</a>.</p></main>" + FOOT_MAIN))
    with open(os.path.join(OUT, "robots.txt"), "w") as f:
        f.write("# the demo site's robots.txt\nUser-agent: *\nDisallow: /private/\n")
    os.makedirs(os.path.join(OUT, "files"), exist_ok=True)
    with open(os.path.join(OUT, "files", "checklist.pdf"), "wb") as f:
        f.write(b"%PDF-1.4\n% a tiny placeholder: the crawler filters it by its Content-Type\n%%EOF\n")


if __name__ == "__main__":
    main()
