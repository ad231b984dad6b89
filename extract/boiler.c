/*
 * boiler.c: which text blocks are the main content (boilerplate removal).
 *
 * Input: the page as walk.c leaves it, block elements (tag, parent, class/id/role hint
 * weight, "unlikely" and "hidden" flags inherited down the tree) and the text blocks in
 * document order, each with its characters, link characters, words and commas. Because
 * blocks are in document order, the blocks of any element's subtree are one contiguous
 * range [first_block, end_block), so every per-element sum is two prefix-sum lookups.
 *
 * HOW IT WORKS (readability's container choice widened to the whole content area, then
 * jusText-style block filtering)
 *  1. Visible blocks: not hidden (hidden attribute, aria-hidden, inline display:none,
 *     CSS hiding classes such as "hidden", "sr-only"), not inside boilerplate by tag or
 *     role (nav, aside, footer, a <header> outside <article>/<main>, ARIA landmarks other
 *     than main), and, in the first pass, not inside an "unlikely" element: class/id
 *     matching readability's unlikely list (sidebar, menu, footer, related, share,
 *     social, cookie, banner, breadcrumb, pagination, respond, ad, nav...) and no
 *     positive word (article, body, content, main, entry, post...), or a <form>. Marks
 *     are inherited down the tree, except on an element that holds an <article>/<main>
 *     or (header, nav, class-marked) more than half of the page's text in more than one
 *     block: libxml2's HTML4 rules let a sloppy HTML5 <header> swallow the rest of the
 *     page, but a single block is a paragraph (a footer's licence notice on a page of
 *     short list items), never a swallowed page, and nothing is swallowed on a page whose
 *     landmark or generator's area lies outside it (sphinx-book-theme's long sidebar),
 *     unless that landmark is a placeholder of a few words that links nowhere (RDoc's
 *     index.html: its class index is the <nav> beside it).
 *  2. Paragraph scores (readability): each visible block of >= 25 characters scores
 *     1 + commas + min(chars / 100, 3); the score goes to the block's element's parent in
 *     full, grandparent half, and ancestors up to 5 levels up divided by 3 * level.
 *     Each candidate starts from a tag prior (div +5, pre/td/blockquote +3, lists and
 *     forms -3, headings -5) plus its class/id/role hint weight (+-25: article, content,
 *     entry, main, post, text, story / footer, sidebar, share, related, promo, tags,
 *     widget...; <article>, <main>, role=main, itemprop=articleBody are positive; an id
 *     that CSS cannot name without escapes, an API generator's anchor of a declaration
 *     such as "write(entry:Entry)-instance-method", gives none: walk.c anchor_id).
 *     The final score is scaled by (1 - link density of the candidate's visible text).
 *  3. The top candidate is refined as readability does: when >= 3 of the 4 runners-up
 *     (not nested in it, scoring >= 75% of it) share an ancestor, that ancestor wins (2
 *     runners-up suffice within 3 levels: a forum's posts in one table); then climb to a
 *     parent that scores higher, and past parents with one child.
 * 3b. The content area: a section is a part, never the whole: the winner first widens
 *     to the outermost <section>/div.section holding it, unless what that adds is mostly
 *     links (>= 0.5). Then it widens to the outermost documentation generator
 *     content area holding it (DocBook's div.chapter/sect1/refentry, Sphinx's role=main
 *     div.body, Doxygen's div.contents, MkDocs, Docsy, MediaWiki's div#content, Tcl
 *     doctools' div.doctools: walk.c's generator_area()), else
 *     to the outermost <main>/<article>/role=main landmark when what that adds is not
 *     mostly links, or, when the winner holds such an area with most of its text,
 *     narrows to it; then to the lowest common ancestor of it and the page's own heading
 *     (the highest-level heading before its end) when what that adds is not mostly
 *     links. A page's main content is all its sections, not its longest one. Inside a
 *     generator's area every visible block is kept (tables of contents, index tables,
 *     "see also" lists are what tell a hub from its siblings), and the page heading is
 *     kept after the smoothing of step 6.
 *  4. Its siblings join when their score reaches max(10, 20% of the top) (a bonus when
 *     they share the top's class), or when they are paragraph-like with > 80 characters
 *     and link density < 0.25, or short, link-free sentences, or, beside a winning
 *     section in an element that is the content area (a section, a landmark, a
 *     generator's area, a positive name such as nimdoc's div#content), sections below
 *     0.5 link density: the document's other sections. In a page that marks no content
 *     area (no landmark, generator's area, section or positive name on the way up: the
 *     body is the content area), the elements beside the winner's ancestors join by the
 *     same score or as paragraph-like text, not as a short line (keep_body_uncles: a
 *     demo's description beside the widget whose panel won), except in flat sections:
 *     where the winner's section is a heading (h2-h6) and the elements after it, with
 *     another heading of that level beside it, the elements of every such section join
 *     below 0.5 link density (flat_section_level: MHonArc's "Default Setting: Off").
 *  5. Inside the chosen elements, jusText-style block classification: a block is kept
 *     unless it is invisible, or link-heavy (link density > 0.5, or > 0.33 when short),
 *     or inside a descendant container that is negative by hint, or a non-positive
 *     container (div, table, form, fieldset, ul/ol) with few commas and link density
 *     > 0.2 (readability's conditional cleaning: link lists, tag clouds, share bars),
 *     unless that container holds most of the content, or is, holds or lies inside a
 *     data table (readability's: a <th>, <caption>, <thead> or <tfoot>; the language tabs
 *     of an API page's signature are one, its code linking every type). A <section>
 *     is never cleaned (readability does not clean it either): it is a part of the
 *     text by definition, and docutils/Sphinx sections under a linked heading would go
 *     (as would makeinfo's div.subsection named "Widgets", a negative word).
 *     Definitions: a <dt> or heading whose link names the element holding it (walk.c's
 *     self_link: nimdoc's, rustdoc's and Sphinx's permalinks) does not count that link
 *     as link text; the element is a definition (EX_E_ANCHORED): never cleaned, not
 *     unlikely by its id (the defined name), its short description beside "Source"
 *     links kept up to 0.5 link density. A list or table holding most of the
 *     container's text, mostly links and of 50 words or more, is the page (an API
 *     index): every entry is kept. Records: a linked cell of a data table's row that
 *     holds text of its own is a value (data_value), and so is every linked name of a
 *     table of records without header cells (record_table: each row one linked name and
 *     its description, fpdoc's "See also"), a linked <dt> over a <dd> of text a
 *     term (defined_term), and an element holding a definition (a <dt> or signature whose
 *     name links to it, or to an HTML 4 named anchor before it: walk.c self_link) is
 *     never cleaned (holds_definition): none is a link list. Nor is the one block of a
 *     section, between its heading and the next (section_links: a manual page's KEYWORDS
 *     and SEE ALSO lines of links), unless the heading holds a link (Crystal's
 *     "Instance methods inherited from class Reference"). Nor is a list of labelled
 *     values (label_list): a <dl> whose terms are labels ("Inherits:", "Defined in:"), a
 *     list right after its label, or a list under its own title (a heading or a short
 *     block that links nowhere) when the two are the whole of their parent (a "See also"
 *     section): its blocks are kept linked or not, and a container whose links all lie
 *     in such lists is not cleaned (a negative one only when it is those lists and their
 *     labels, and a list holds text of its own), nor, when it holds a paragraph, one
 *     whose other links stay under readability's 0.2 (YARD's method box); one whose
 *     parent is the whole of what was chosen is a hub's list, left to step 10. Nor is a
 *     container whose links all lie in tables of records (gi-docgen's "No description
 *     available." over one row, "Gets property" beside the linked property:
 *     holds_labels). A data table's <caption> is its label, as a header cell is
 *     (Javadoc's class-use tables).
 *  6. Gaps: long (>= 100 characters), link-poor visible blocks between the first and the
 *     last kept block are kept (content split across sibling containers). Teaser lists
 *     ("more stories": a linked heading, then a short standfirst, at least twice in a
 *     row with only link-heavy blocks between) lose their standfirsts; a linked h4-h6 of
 *     one word is an API member's name, not a headline (name_heading). Then jusText's
 *     context smoothing: a short kept block (< 40 characters) whose neighbouring blocks
 *     are both left out is an isolated label ("Comments", "Share this") and goes too,
 *     unless it is a definition's term holding its own permalink (not a heading) or a
 *     block mostly of code (code_declaration: rustdoc's "impl X for Y" headers). The
 *     links inside code (walk.c code_context: <pre>, <code>, rustdoc's code-header,
 *     QDoc's h3.fn) name identifiers and never count as link text, here or in steps
 *     2-5; a heading whose only unlikely word is "header" is not unlikely (walk.c
 *     heading_header).
 *  7. Comments are content (as in the gold texts of the benchmarks and for readers):
 *     comment sections (class/id "comment...", Disqus) outside the chosen elements keep
 *     their readable blocks (not link-heavy, not chrome such as "Leave a Reply"), and
 *     then, when the section has readable comments (kept here or with the container),
 *     their short date lines; forms, and boilerplate around the section, stay out. A
 *     "comment" class on <html>/<body> or on an element holding the <article> is a
 *     feature switch, not a comment section.
 *  8. The headline: titles often sit outside the article body, often as a permalink.
 *     The nearest h1-h3 (or Doxygen's div.title, an h1 in all but its tag), or a block
 *     that reads like the <title>, within 12 blocks before the content is kept (a
 *     menu's link-heavy blocks and the bare words of a list of links do not count; past
 *     12 blocks in all only a heading; a link that reads like the <title>, such as
 *     Scaladoc's source file "Predef.scala", only when no heading that reads like it
 *     stands above), a dateline just above it (a line with digits; one that reads like
 *     the <title> must name a date: a site's name with its version is not one), and the
 *     short byline/date lines between it and the content.
 * 8b. A section's heading is not the page's title: when the content starts with a
 *     heading below h1 that does not read like the <title> ("Description"), the nearest
 *     visible higher heading before it is the title and is kept (keep_title_above).
 *  9. When no candidate scores (pages of short blocks: lists, tables, forms), every
 *     visible block that is not link-heavy is kept; on a page that is a link table (step
 *     5's) every visible block, as step 10 does. When a pass keeps fewer than 500
 *     characters, it is redone without the "unlikely" marks (readability's retry), and
 *     the longer result is used if it is much longer.
 * 10. Hubs and stubs: when the result has fewer than HUB_WORDS words, the link-heavy
 *     blocks of its container (or of the main landmark, or of the page) are kept too: a
 *     table of contents or a stub is told from its siblings by its links (keep_hub_links).
 *     A container with a negative hint (a footer that a grid class kept from being
 *     unlikely) is not the page's: the main landmark or the page is used instead. The
 *     words counted are those a reader reads, tokens with a letter or a digit (a letter
 *     bar's dots are none: Natural Docs' index pages), except in code (a synopsis's
 *     braces are tokens of its declaration), and a container that holds only
 *     a kept heading (the SGI STL's <center><h1>) is no container: its parent is.
 * References: Kohlschütter et al., "Boilerplate Detection using Shallow Text Features"
 * (boilerpipe, WSDM 2010); Pomikálek, "Removing Boilerplate and Duplicate Content from
 * Web Corpora" (jusText, 2011); Mozilla readability.js (Readability.js, Apache-2.0).
 */
#include "extract/extract_int.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define MIN_PARAGRAPH 25 /* characters for a block to score (readability) */
#define MAX_LEVELS 5     /* ancestors a paragraph's score propagates to */
#define N_TOP 5
#define HEADLINE_WINDOW 12   /* blocks before the content searched for its title */
#define GOOD_BLOCK_CHARS 100 /* a block this long and link-poor is text wherever it is */
#define MIN_ALTERNATIVES 2   /* readability uses 3; 2 catches forums of 3 posts */
#define CHAR_THRESHOLD 500   /* a shorter result triggers the retry (readability) */
#define TEASER_CHARS 400     /* a standfirst under a linked headline is shorter */
#define SHORT_BLOCK_CHARS 40 /* shorter kept blocks need a kept neighbour (jusText) */
#define TEASER_RUN 2         /* linked headline + standfirst pairs that make a teaser list */
#define HUB_WORDS 50         /* a shorter result is a hub or stub: its links are its text */
#define AREA_MAX_LD 0.25     /* widening the content area must not take in navigation */
/*
 * Readability's own numbers (Readability.js, _grabArticle), kept as it has them: the
 * development set (docs/BENCHMARKS.md, "Quality: main text against hand-made gold
 * texts") was scored with them from the first extractor on (commit aafebc8), and the
 * rules added since were each measured on top of them.
 */
#define SCORE_CHARS_PER_POINT 100    /* a paragraph scores a point per this many characters */
#define SCORE_LENGTH_POINTS_MAX 3    /* ... up to this many */
#define SCORE_LEVEL_DIVIDER 3        /* ancestors above the grandparent get score / (3 * level) */
#define ALT_SCORE_SHARE 0.75         /* a runner-up this close to the top is an alternative */
#define ALT_READABILITY 3            /* alternatives that make their shared ancestor the winner */
#define ALT_CLOSE_LEVELS 3           /* with MIN_ALTERNATIVES only, the ancestor is this close */
#define CLIMB_DIVIDER 3              /* the climb stops at a parent under 1/3 of the last score */
#define SIBLING_SCORE_SHARE 0.2      /* a sibling joins at this share of the top's score */
#define SIBLING_SCORE_MIN 10         /* ... and at least this score */
#define SIBLING_TEXT_CHARS 80        /* a sibling of more characters is paragraph-like ... */
#define SIBLING_MAX_LD 0.25          /* ... when its link density is below this */
#define SECTION_MAX_LD LINK_HEAVY_LD /* a sibling section joins below this link density */
#define DEFINITION_LEVELS 3          /* a block's definition element is this close */
#define CELL_LEVELS 3                /* a block's table cell or term is this close */
/* a gap block joins with at most 1/4 of its characters in links (step 6, jusText's gap
 * filling: commit ceaf3de) */
#define GAP_LINK_RATIO 4
/* Link-heavy blocks and readability's conditional cleaning (step 5), from the first
 * extractor on (commit aafebc8; the weights, link densities and commas of CLEAN_* are
 * readability's _cleanConditionally) */
#define LINK_HEAVY_LD 0.5         /* a block over this link density is link-heavy ... */
#define SHORT_LINK_HEAVY_LD 0.33  /* ... and a short one over this */
#define SHORT_LINK_CHARS 80       /* short: fewer characters than this */
#define CLEAN_MAX_COMMAS 10       /* a container with this many commas is prose, kept */
#define CLEAN_POSITIVE_WEIGHT 25  /* a container weighing this much is positive (HINT_WEIGHT) */
#define CLEAN_MAX_LD 0.2          /* other containers over this link density go ... */
#define CLEAN_MAX_CHARS 2000      /* ... when shorter than this */
#define CLEAN_POSITIVE_MAX_LD 0.5 /* positive ones go over this link density */
/* step 1: a mark is ignored on an element holding more than this share of the page's
 * text (a sloppy HTML5 <header> that swallowed the page: commit ce59c8f) */
#define SWALLOWED_SHARE 0.5
#define SWALLOWED_MIN_BLOCKS 2 /* ... and more than one block */
/* step 3b: a wrapper narrows to the landmark inside it that has at least
 * LANDMARK_MIN_SHARE of its text, when what lies beside is under 1 - LANDMARK_WHOLE_SHARE
 * of it or mostly links (commit bc29c3a: dragnet-R791 recall 0.49 -> 0.85) */
#define LANDMARK_MIN_SHARE 0.5
#define LANDMARK_WHOLE_SHARE 0.9
#define LANDMARK_BESIDE_MAX_LD (2 * AREA_MAX_LD) /* "mostly links": what lies beside */
/* readability's score division by level: the parent gets the whole score, the
 * grandparent half, then SCORE_LEVEL_DIVIDER * level (_grabArticle, as above) */
#define SCORE_GRANDPARENT_DIVIDER 2
/* step 5: a container holding more than this share of the root's text is the content and
 * is never cleaned (commit 7de1c57) */
#define CONTENT_HOLDER_SHARE 0.5
/*
 * The headline and the lines around it (keep_headline), as commit 9a56ed6 set them
 * ("headline from <title> likeness, dateline above it, byline lines below it"; it records
 * no measurement). Measured again on the development set (../shared/tools/extract-score,
 * 358 pages, 2026-11-26): F1 0.919 (P 0.907-0.909, R 0.929-0.930) for every value tried,
 * HEADLINE_WINDOW 6/12/24, BYLINE_WINDOW 3/6/12, DATELINE_WINDOW 1/2/4, BYLINE_MAX_CHARS
 * 100/200/400: the set does not tell them apart, so they stay as set, and a page that
 * needs one changed is a new dev page first.
 */
#define HEADLINE_MAX_LEVEL 3     /* h1-h3 are headlines; h4-h6 are section titles */
#define DATELINE_WINDOW 2        /* blocks above the headline searched for a dateline */
#define DATELINE_MAX_CHARS 50    /* "Tuesday, July 24, 2012 at 10:15 pm" fits */
#define BYLINE_WINDOW 6          /* the lines between headline and content are kept when ... */
#define BYLINE_MAX_CHARS 200     /* ... within this many blocks, each shorter than this */
#define TITLE_LIKE_MAX_BYTES 300 /* a longer block is text, not the <title> again */
#define TITLE_LIKE_PERCENT 70    /* words of a block found in the <title>: a title ... */
#define TITLE_LIKE_MIN_WORDS 2   /* ... of this many words, or a one-word block all found */
/* Comment sections (keep_comments, commit 959fe41): a comment's text has at least
 * COMMENT_MIN_WORDS words, or COMMENT_MIN_SENTENCE_WORDS with a sentence end ("Great
 * post!"); section chrome ("Leave a Reply", "Comments (0)") has fewer. Its date line is
 * shorter than COMMENT_DATE_MAX_CHARS and has a digit. */
#define COMMENT_MIN_WORDS 4
#define COMMENT_MIN_SENTENCE_WORDS 2
#define COMMENT_DATE_MAX_CHARS 80
/* A block that is all link text (a teaser's headline, a menu entry: commit 8afc937, teaser
 * lists, extract-score F1 0.909 -> 0.911): at least this long, this share in links. */
#define ALL_LINK_MIN_CHARS 10
#define ALL_LINK_SHARE 0.9
/* readability's retry without class and id marks (commit ce59c8f) is kept only when it
 * finds more than RETRY_GAIN_FACTOR times the text plus RETRY_GAIN_CHARS: a page whose
 * content sat in an "unlikely" wrapper, not one that only takes its sidebars in */
#define RETRY_GAIN_FACTOR 2
#define RETRY_GAIN_CHARS 100
/* a table of records' description has at least this many words (record_table): "15.1"
 * beside "Paths" in a table of contents is a number, not what describes the link */
#define RECORD_TEXT_WORDS 2
/* a label of a list of labelled values ("Defined in:") is shorter than this (label_list) */
#define LABEL_MAX_CHARS SHORT_BLOCK_CHARS

struct sums {
    double *chars, *links, *commas; /* prefix sums over visible blocks, n + 1 entries */
    unsigned char *visible;
    unsigned char *record; /* per element: a table of records (record_table), or a list
                            * of labelled values (label_list) */
};

/* Pass modes (readability's retry flags) */
enum { STRIP_UNLIKELY = 1, CLEAN = 2 };

static unsigned invisible_flags(unsigned mode)
{
    return EX_E_HIDDEN | EX_E_IN_BOILER | ((mode & STRIP_UNLIKELY) ? EX_E_IN_UNLIKELY : 0);
}

/*
 * A negative word of readability's that the page's wrapper carries (an element holding
 * more than half of the page's text in more than one block, step 1's "swallowed" share)
 * names the site's own markup inside it, not boilerplate: Tcl's doctools write every
 * manual page as div.doctools > div.doctools_section > div.doctools_subsection, and
 * "tool" (a toolbar's word) made every section negative, so each was cleaned out of the
 * chosen one (step 5) and none joined it (tcllib's comm.html kept 89 of ~5,400 words). An
 * element inside such a wrapper whose negative words all are the wrapper's loses the
 * weight they gave it. The wrapper keeps its own, and so does everything outside it:
 * Blogger's posts are div.widget.Blog, its sidebars' boxes div.widget too (dragnet-T133:
 * the first build took every element's word away and a sidebar won). A share bar or a
 * footer inside keeps its own word, which the wrapper does not carry.
 */
static void site_words(struct ex_walk *w, const double *pre, double total)
{
    for (size_t i = 0; i < w->n_elems; i++) {
        const struct ex_elem *e = &w->elems[i];
        uint32_t site = e->neg_words;
        if (!site || pre[e->end_block] - pre[e->first_block] <= SWALLOWED_SHARE * total ||
            e->end_block - e->first_block < SWALLOWED_MIN_BLOCKS)
            continue;
        for (uint32_t j = (uint32_t)i + 1; j < e->end_elem; j++) {
            struct ex_elem *d = &w->elems[j];
            if (d->neg_words && !(d->neg_words & ~site)) {
                d->weight = (int16_t)(d->weight - d->neg_weight);
                d->neg_weight = 0;
            }
        }
    }
}

/* 1 to 6 for a heading element h1 to h6, else 0. */
static int heading_level(const struct ex_elem *e)
{
    return e->tag >= T_h1 && e->tag <= T_h6 ? (int)(e->tag - T_h1) + 1 : 0;
}

/* A block's level as a title: its heading's, or 1 for a generator's page title in no
 * heading element (EX_B_TITLE: Doxygen's div.title, the page's name as extract.c's
 * build_heading takes it), else 0. */
static unsigned title_level(const struct ex_block *b)
{
    return b->heading ? b->heading : (b->flags & EX_B_TITLE) ? 1 : 0;
}

/* Is e the outermost element of a landmark (<article>, <main>, role=main) or of a
 * generator's content area? EX_E_ARTICLE and EX_E_AREA are inherited. */
static int outer_landmark(const struct ex_walk *w, const struct ex_elem *e)
{
    return (e->tag == T_article || e->tag == T_main || (e->flags & (EX_E_ARTICLE | EX_E_AREA))) &&
           e->parent != EX_NONE && !(w->elems[e->parent].flags & (EX_E_ARTICLE | EX_E_AREA));
}

/* Do the page's landmarks hold text of their own: a link, or HUB_WORDS words? A landmark
 * of a few words that links nowhere is a placeholder: RDoc's index.html of a library
 * without a main page says "This is the API documentation for RDoc Documentation." in
 * <main>, the same sentence on every such site, and its class index is the <nav> beside
 * it. */
static int landmark_text(const struct ex_walk *w)
{
    size_t words = 0, link_chars = 0;
    for (size_t i = 0; i < w->n_elems; i++) {
        const struct ex_elem *e = &w->elems[i];
        if (!outer_landmark(w, e))
            continue;
        for (uint32_t b = e->first_block; b < e->end_block; b++) {
            words += w->blocks[b].words;
            link_chars += w->blocks[b].link_chars;
        }
    }
    return link_chars > 0 || words >= HUB_WORDS;
}

/*
 * Marks readability's data tables (_markDataTables: a table with a header cell, a
 * caption, a <thead> or <tfoot>), which its conditional cleaning never removes: the
 * elements holding one (EX_E_HAS_DATA, up the tree) and those inside one (EX_E_IN_DATA).
 * Inherits the unlikely/boilerplate marks down the tree. libxml2 2.9's HTML4 rules do not
 * let an end tag of an element it does not know (header, nav...) close an open <div>, so
 * on sloppy pages a <header> swallows the rest of the page. A mark is therefore ignored
 * on an element that holds an <article>/<main>, and on a header, nav or class-marked
 * element that holds more than half of the page's text.
 */
static int inherit_marks(struct ex_walk *w)
{
    size_t ne = w->n_elems;
    double *pre = malloc((w->n_blocks + 1) * sizeof *pre);
    if (!pre)
        return -1;
    pre[0] = 0;
    for (size_t b = 0; b < w->n_blocks; b++)
        pre[b + 1] = pre[b] + w->blocks[b].chars;
    double total = pre[w->n_blocks];
    site_words(w, pre, total);
    for (size_t i = ne; i-- > 0;) {
        struct ex_elem *e = &w->elems[i];
        /* the outermost one only: EX_E_ARTICLE and EX_E_AREA are inherited, and the
         * chrome inside a generator's area (walk.c: area_chrome, a wiki's menus) is
         * boilerplate there too */
        if (outer_landmark(w, e))
            e->flags |= EX_E_HAS_ARTICLE;
        if (e->parent != EX_NONE && (e->flags & EX_E_HAS_ARTICLE))
            w->elems[e->parent].flags |= EX_E_HAS_ARTICLE;
        if (e->tag == T_th || e->tag == T_caption || e->tag == T_thead || e->tag == T_tfoot)
            e->flags |= EX_E_HAS_DATA;
        if (e->parent != EX_NONE && (e->flags & EX_E_HAS_DATA))
            w->elems[e->parent].flags |= EX_E_HAS_DATA;
    }
    /* a page whose landmark or generator's area lies outside a menu was not swallowed
     * by it: the menu is only long (sphinx-book-theme's sidebar nav of every page of the
     * guide beside a toctree page of five links). A menu inside the landmark is judged as
     * before (Pike's class index, a <nav> of the members inside the <article>), and so
     * is one beside a landmark that holds no text of its own (landmark_text). */
    int landmark = 0;
    for (size_t i = 0; i < ne && !landmark; i++)
        landmark = w->elems[i].parent == EX_NONE && (w->elems[i].flags & EX_E_HAS_ARTICLE);
    if (landmark)
        landmark = landmark_text(w);
    for (size_t i = 0; i < ne; i++) {
        struct ex_elem *e = &w->elems[i];
        unsigned f = e->flags & ~(unsigned)(EX_E_IN_UNLIKELY | EX_E_IN_BOILER);
        unsigned self = f & (EX_E_UNLIKELY | EX_E_BOILER);
        if (self) {
            double chars = pre[e->end_block] - pre[e->first_block];
            /* one block is a paragraph (a footer's long notice on a page of short
             * blocks: qdoc's member lists), never a page swallowed by a sloppy tag */
            int swallowed = (!landmark || (f & (EX_E_ARTICLE | EX_E_AREA))) &&
                            chars > SWALLOWED_SHARE * total &&
                            e->end_block - e->first_block >= SWALLOWED_MIN_BLOCKS &&
                            (e->tag == T_header || e->tag == T_nav || !(f & EX_E_BOILER));
            if ((f & EX_E_HAS_ARTICLE) || swallowed)
                self = 0;
            /* a definition whose <dt> or heading links to it (walk.c self_link) has the
             * defined name as its id: a function of an "ExtraData" argument is not
             * readability's "extra" chrome */
            if (f & EX_E_ANCHORED)
                self &= ~(unsigned)EX_E_UNLIKELY;
        }
        if (self & EX_E_UNLIKELY)
            f |= EX_E_IN_UNLIKELY;
        if (self & EX_E_BOILER)
            f |= EX_E_IN_BOILER;
        if (e->parent != EX_NONE) {
            const struct ex_elem *p = &w->elems[e->parent];
            f |= p->flags & (EX_E_IN_UNLIKELY | EX_E_IN_BOILER | EX_E_IN_DATA);
            if (p->tag == T_table && (p->flags & EX_E_HAS_DATA))
                f |= EX_E_IN_DATA;
        }
        e->flags = (uint16_t)f;
    }
    free(pre);
    return 0;
}

static int visible_block(const struct ex_walk *w, const struct ex_block *b, unsigned mode)
{
    if (b->elem == EX_NONE)
        return 1;
    return !(w->elems[b->elem].flags & invisible_flags(mode));
}

static double range(const double *p, uint32_t a, uint32_t b)
{
    return p[b] - p[a];
}

static double elem_ld(const struct sums *s, const struct ex_elem *e)
{
    double c = range(s->chars, e->first_block, e->end_block);
    return c > 0 ? range(s->links, e->first_block, e->end_block) / c : 0;
}

static void init_score(const struct ex_walk *w, uint32_t i)
{
    struct ex_elem *e = &w->elems[i];
    if (e->scored)
        return;
    e->scored = 1;
    e->score = (float)(ex_tag_prior(e->tag) + e->weight);
}

static int link_heavy(const struct ex_block *b)
{
    if (b->chars == 0)
        return 0;
    double ld = (double)b->link_chars / b->chars;
    if (ld > LINK_HEAVY_LD)
        return 1;
    return ld > SHORT_LINK_HEAVY_LD && b->chars < SHORT_LINK_CHARS;
}

static int has_digit(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (s[i] >= '0' && s[i] <= '9')
            return 1;
    return 0;
}

static int ascii_alnum(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9');
}

/* Is the word at s[0..n) (lower-cased ASCII letters up to the first other byte) an
 * English month name or its three-letter abbreviation? */
static int month_word(const char *s, size_t n)
{
    static const char *const months[] = {"january",   "february", "march",    "april",
                                         "may",       "june",     "july",     "august",
                                         "september", "october",  "november", "december"};
    char w[12];
    size_t k = 0;
    while (k < n && k < sizeof w &&
           ((s[k] >= 'a' && s[k] <= 'z') || (s[k] >= 'A' && s[k] <= 'Z'))) {
        w[k] = (char)(s[k] >= 'A' && s[k] <= 'Z' ? s[k] + 32 : s[k]);
        k++;
    }
    if (k < 3 || (k < n && ascii_alnum(s[k])))
        return 0;
    for (size_t m = 0; m < sizeof months / sizeof months[0]; m++)
        if ((k == 3 && memcmp(w, months[m], 3) == 0) ||
            (k == strlen(months[m]) && memcmp(w, months[m], k) == 0))
            return 1;
    return 0;
}

/* Does s[0..n) name a date: a year (a word of four digits, 19xx or 20xx), an English
 * month name or its abbreviation, or numbers joined by '/' or '-' or by two dots
 * ("12/03", "2012-11-07", "07.11.2012")? The "2.4" of "Apache HTTP Server Version 2.4"
 * is a version. */
static int date_like(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        if (i > 0 && ascii_alnum(s[i - 1]))
            continue; /* a word's start only */
        if (s[i] >= '0' && s[i] <= '9') {
            size_t j = i, dots = 0;
            while (j < n && s[j] >= '0' && s[j] <= '9')
                j++;
            if (j - i == 4 && (j == n || !ascii_alnum(s[j])) &&
                ((s[i] == '1' && s[i + 1] == '9') || (s[i] == '2' && s[i + 1] == '0')))
                return 1;
            if (j + 1 < n && (s[j] == '/' || s[j] == '-') && s[j + 1] >= '0' && s[j + 1] <= '9')
                return 1;
            while (j + 1 < n && s[j] == '.' && s[j + 1] >= '0' && s[j + 1] <= '9') {
                if (++dots == 2)
                    return 1;
                for (j++; j < n && s[j] >= '0' && s[j] <= '9'; j++)
                    ;
            }
        } else if (month_word(s + i, n - i)) {
            return 1;
        }
    }
    return 0;
}

/* Does element i hold a definition (EX_E_ANCHORED: a term or signature that its own name
 * links to, walk.c self_link)? Its box is the definition, its signature's linked types are
 * not a link list (Scribble's boxed tables of a procedure's contract). A heading's
 * permalink makes a section, not a definition: what holds one is judged as before (a
 * gi-docgen page's sections are, and its teaser rule with them). */
static int holds_definition(const struct ex_walk *w, uint32_t i)
{
    for (uint32_t j = i + 1; j < w->elems[i].end_elem; j++)
        if ((w->elems[j].flags & EX_E_ANCHORED) && !heading_level(&w->elems[j]))
            return 1;
    return 0;
}

/* A heading below the section headings (h4-h6) that is one linked word: an API member's
 * name over its description (gi-docgen's h6 "gdk_monitor_get_connector" under the h4
 * "Instance methods", linking to the method's page), not a teaser's headline or a menu
 * entry, which are phrases. (Any level was measured: Sphinx's h2/h3 section headings that
 * link back to the table of contents, "Ignorelist", then keep their text too, and the
 * Clang 14/15 release pair lost one pair of 73 to the text gained: not shipped.) */
static int name_heading(const struct ex_block *b)
{
    return b->heading >= 4 && b->words == 1 && b->chars > 0 &&
           (double)b->link_chars >= ALL_LINK_SHARE * b->chars;
}

/* Does element i hold an entry of a list of members: a name_heading() followed by a
 * description of text (not link-heavy)? Such a list is the page's (a gi-docgen class
 * page's instance methods, properties and signals, each a linked name and a sentence:
 * their link density made every entry's box a link list, and a page of short
 * descriptions kept only its longest paragraph). */
static int holds_entry(const struct ex_walk *w, const struct sums *s, uint32_t i)
{
    const struct ex_elem *e = &w->elems[i];
    for (uint32_t b = e->first_block; b < e->end_block; b++) {
        if (!s->visible[b] || !name_heading(&w->blocks[b]))
            continue;
        uint32_t n = b + 1;
        while (n < e->end_block && !s->visible[n])
            n++;
        if (n < e->end_block && !w->blocks[n].heading && w->blocks[n].words > 0 &&
            !link_heavy(&w->blocks[n]))
            return 1;
    }
    return 0;
}

/* Does element i hold a visible block of text that is not link-heavy? */
static int holds_text(const struct ex_walk *w, const struct sums *s, uint32_t i)
{
    const struct ex_elem *e = &w->elems[i];
    for (uint32_t b = e->first_block; b < e->end_block; b++)
        if (s->visible[b] && w->blocks[b].words > 0 && !link_heavy(&w->blocks[b]))
            return 1;
    return 0;
}

/* Does element i hold a paragraph: a visible block of GOOD_BLOCK_CHARS characters or
 * more, at most 1 / GAP_LINK_RATIO of them in links? */
static int holds_paragraph(const struct ex_walk *w, const struct sums *s, uint32_t i)
{
    const struct ex_elem *e = &w->elems[i];
    for (uint32_t b = e->first_block; b < e->end_block; b++) {
        const struct ex_block *blk = &w->blocks[b];
        if (s->visible[b] && blk->chars >= GOOD_BLOCK_CHARS &&
            blk->link_chars * GAP_LINK_RATIO <= blk->chars)
            return 1;
    }
    return 0;
}

/* A list of labelled values (label_list)? */
static int labelled(const struct ex_walk *w, const struct sums *s, uint32_t i)
{
    unsigned tag = w->elems[i].tag;
    return s->record[i] && (tag == T_dl || tag == T_ul || tag == T_ol);
}

/* The lists of labelled values (label_list) inside element i, and with records its tables
 * of records (record_table) too: their characters, link characters (the return value),
 * count, and whether one holds text of its own. */
static double labelled_lists(const struct ex_walk *w, const struct sums *s, uint32_t i, int records,
                             double *chars, int *n, int *text)
{
    const struct ex_elem *e = &w->elems[i];
    double links = 0;
    *chars = 0;
    *n = *text = 0;
    for (uint32_t j = i + 1; j < e->end_elem;) {
        const struct ex_elem *je = &w->elems[j];
        if (labelled(w, s, j) || (records && je->tag == T_table && s->record[j])) {
            *chars += range(s->chars, je->first_block, je->end_block);
            links += range(s->links, je->first_block, je->end_block);
            (*n)++;
            *text |= holds_text(w, s, j);
            j = je->end_elem;
        } else {
            j++;
        }
    }
    return links;
}

/* Does element i hold lists of labelled values (label_list) that hold all of its links?
 * YARD's div.box_info is its three lists, its div.tags a label over each list. With
 * only_labels, its text is those lists and at most a label's length beside each, and a
 * list holds text that is not link-heavy: YARD's div.tags ("tags" is a negative word)
 * of "Returns:" over the type and what it is, where a blog's "Tags:" over its links
 * stays out. Without, tables of records (record_table) count as such lists: gi-docgen's
 * div.docblock of "No description available." over a table of one row, "Gets property"
 * beside the linked property, is a record of the method, not a link list. */
static int holds_labels(const struct ex_walk *w, const struct sums *s, uint32_t i, int only_labels)
{
    const struct ex_elem *e = &w->elems[i];
    double lists;
    int n, text;
    double links = labelled_lists(w, s, i, !only_labels, &lists, &n, &text);
    if (lists == 0 || links < range(s->links, e->first_block, e->end_block))
        return 0;
    return !only_labels ||
           (text && range(s->chars, e->first_block, e->end_block) - lists < n * LABEL_MAX_CHARS);
}

/* Element i's link density (ld, of its chars) as readability's 0.2 test judges it: the
 * links of its labelled lists are values, not navigation, and do not count when they are
 * all its links, or when it holds a paragraph (YARD's method box, a docstring over
 * "Returns:" and "See Also:" lists of linked names, 0.2 of its characters in links with
 * them); a blog's sidebar of titled lists ("Archives", "Categories") or a "More stories:"
 * box holds none. Never above ld: only asked when ld fails the test. */
static double free_ld(const struct ex_walk *w, const struct sums *s, uint32_t i, double chars,
                      double ld)
{
    const struct ex_elem *e = &w->elems[i];
    double lists;
    int n, text;
    double free_links = range(s->links, e->first_block, e->end_block) -
                        labelled_lists(w, s, i, 0, &lists, &n, &text);
    return lists > 0 && (free_links <= 0 || holds_paragraph(w, s, i)) ? free_links / chars : ld;
}

/* Readability's conditional cleaning of a container inside the main content. */
static int clean_container(const struct ex_walk *w, const struct sums *s, uint32_t i)
{
    const struct ex_elem *e = &w->elems[i];
    if ((e->tag) != T_div && (e->tag) != T_table && (e->tag) != T_form && (e->tag) != T_fieldset &&
        (e->tag) != T_ul && (e->tag) != T_ol)
        return 0;
    /* readability keeps data tables, what lies inside them and what holds them; a
     * docutils div.section is a <section>, never cleaned (step 5) */
    if (e->flags & (EX_E_HAS_DATA | EX_E_IN_DATA | EX_E_SECTION))
        return 0;
    if (s->record[i])
        return 0; /* a table of records: names and their descriptions (record_table) */
    /* a definition whose <dt> or heading links to it (walk.c's self_link: nimdoc's
     * constants, "ANCHORED = 0x10" under its Source link) is the document's, not a menu */
    if (e->flags & EX_E_ANCHORED)
        return 0;
    if (e->weight < 0)
        return !holds_labels(w, s, i, 1);
    double chars = range(s->chars, e->first_block, e->end_block);
    if (chars == 0)
        return 0;
    double commas = range(s->commas, e->first_block, e->end_block);
    if (commas >= CLEAN_MAX_COMMAS)
        return 0;
    double ld = elem_ld(s, e);
    int list = (e->flags & EX_E_LIST) != 0;
    if (!list && e->weight < CLEAN_POSITIVE_WEIGHT && ld > CLEAN_MAX_LD &&
        chars < CLEAN_MAX_CHARS && free_ld(w, s, i, chars, ld) > CLEAN_MAX_LD)
        return !holds_definition(w, i) && !holds_entry(w, s, i) && !holds_labels(w, s, i, 0);
    if (e->weight >= CLEAN_POSITIVE_WEIGHT && ld > CLEAN_POSITIVE_MAX_LD)
        return !holds_definition(w, i) && !holds_entry(w, s, i);
    return 0;
}

/* A header cell of a data table, linked or not, is the label of its row or column
 * (Apache's module tables: "Description:", "Status:" each link to the glossary), not a
 * link list: it stays with the values it labels. So is the table's <caption>, its title
 * (Javadoc's class-use tables: "Methods in <a>org.example.fit</a> that return
 * <a>CurveFitter</a>", two links of three quarters of its characters). */
static int data_label(const struct ex_walk *w, const struct ex_block *blk)
{
    if (blk->elem == EX_NONE)
        return 0;
    const struct ex_elem *e = &w->elems[blk->elem];
    return (e->tag == T_th || e->tag == T_caption) && (e->flags & EX_E_IN_DATA);
}

/* The nearest element of tag within CELL_LEVELS elements up from block blk's, or EX_NONE. */
static uint32_t block_in(const struct ex_walk *w, const struct ex_block *blk, unsigned tag)
{
    uint32_t e = blk->elem;
    for (int k = 0; k < CELL_LEVELS && e != EX_NONE; k++, e = w->elems[e].parent)
        if (w->elems[e].tag == tag)
            return e;
    return EX_NONE;
}

/* A value cell of a data table's row, linked or not: a row that also holds text of its
 * own (Postfix's table of address manipulations: "all mail" beside the linked daemon and
 * parameter names; an API table of linked types beside descriptions) is a record, and
 * its linked cells are its values, not a link list. The row's table is a data table
 * (data_label's), and the row holds no table of its own (a layout table's row holds the
 * whole page, menus and all). */
static int data_value(const struct ex_walk *w, const struct sums *s, const struct ex_block *blk)
{
    uint32_t td = block_in(w, blk, T_td);
    if (td == EX_NONE)
        return 0;
    uint32_t tr = w->elems[td].parent;
    if (tr == EX_NONE || w->elems[tr].tag != T_tr)
        return 0;
    uint32_t t = w->elems[tr].parent;
    if (t != EX_NONE && w->elems[t].tag != T_table)
        t = w->elems[t].parent; /* tbody, thead, tfoot */
    if (t == EX_NONE || w->elems[t].tag != T_table)
        return 0;
    if (s->record[t])
        return 1; /* its every row a record (record_table) */
    if (!(w->elems[t].flags & EX_E_HAS_DATA))
        return 0;
    for (uint32_t i = tr + 1; i < w->elems[tr].end_elem; i++)
        if (w->elems[i].tag == T_table)
            return 0;
    return holds_text(w, s, tr);
}

/* A block of a labelled value (a list of label_list's, at most CELL_LEVELS up: YARD's
 * superclass chain is a list inside a <dd>), linked or not, unless the list's parent is
 * root, the whole of what was chosen: a titled list that is all of the content is a
 * hub's, which step 10 judges with the whole page (Groovydoc's package frames, a list of
 * classes under "Interfaces", "Classes", "Enums" each, the last list of one link won). */
static int labelled_value(const struct ex_walk *w, const struct sums *s, const struct ex_block *blk,
                          uint32_t root)
{
    uint32_t e = blk->elem;
    for (int k = 0; k < CELL_LEVELS && e != EX_NONE; k++, e = w->elems[e].parent) {
        uint32_t p = w->elems[e].parent;
        if (w->elems[e].tag == T_dd && p != EX_NONE && labelled(w, s, p))
            e = p;
        else if (!labelled(w, s, e))
            continue;
        return w->elems[e].parent != root;
    }
    return 0;
}

/* A definition list's term, linked or not, whose description that follows is text (not
 * link-heavy): the term names what the description defines (Postfix's "sender_bcc_maps
 * = type:table", both links, over its paragraph), it is not a menu entry. */
static int defined_term(const struct ex_walk *w, const struct sums *s, const struct ex_block *blk)
{
    uint32_t dt = block_in(w, blk, T_dt);
    if (dt == EX_NONE)
        return 0;
    uint32_t dd = w->elems[dt].end_elem;
    if (dd >= w->n_elems || w->elems[dd].tag != T_dd || w->elems[dd].parent != w->elems[dt].parent)
        return 0;
    const struct ex_elem *e = &w->elems[dd];
    return range(s->chars, e->first_block, e->end_block) >= MIN_PARAGRAPH &&
           elem_ld(s, e) <= LINK_HEAVY_LD && holds_text(w, s, dd);
}

/* A <section>, or docutils' div.section (walk.c EX_E_SECTION). */
static int is_section(const struct ex_elem *e)
{
    return e->tag == T_section || (e->flags & EX_E_SECTION);
}

static int is_ancestor(const struct ex_walk *w, uint32_t anc, uint32_t i)
{
    return i > anc && i < w->elems[anc].end_elem;
}

/* A short block of a definition (an element its <dt> or heading links to: walk.c
 * self_link) with at most LINK_HEAVY_LD of its characters in links: the description
 * beside its "Source" and "Edit" links ("Acquires the given lock. Source Edit"), which
 * the stricter SHORT_LINK_HEAVY_LD of a short block would take for a menu entry. The
 * definition is at most DEFINITION_LEVELS elements up (nimdoc: <dd>, its <div id>). */
static int definition_text(const struct ex_walk *w, const struct ex_block *blk)
{
    if (blk->chars == 0 || (double)blk->link_chars > LINK_HEAVY_LD * blk->chars)
        return 0;
    uint32_t e = blk->elem;
    for (int k = 0; k < DEFINITION_LEVELS && e != EX_NONE; k++, e = w->elems[e].parent)
        if (w->elems[e].flags & EX_E_ANCHORED)
            return 1;
    return 0;
}

/* Does block b hold a link (an <a href>)? The links are in document order, so those of b
 * are found by bisection. */
static int holds_link(const struct ex_walk *w, uint32_t b)
{
    size_t lo = 0, hi = w->n_links;
    while (lo < hi) {
        size_t mid = lo + (hi - lo) / 2;
        if (w->links[mid].block < b)
            lo = mid + 1;
        else
            hi = mid;
    }
    for (size_t i = lo; i < w->n_links && w->links[i].block == b; i++)
        if (w->links[i].href_len > 0)
            return 1;
    return 0;
}

/* Is block b, link-heavy, the whole body of a section: the only visible block with words
 * between a heading and the next heading, of its level or higher (a deeper one opens a
 * subsection, whose line it may be: rustdoc's "source" link before each impl's <h3>),
 * both in [lo, hi)? A manual page's KEYWORDS and
 * SEE ALSO sections are one line of comma-separated links to other pages (GRASS:
 * "d.what.vect, d.redraw, d.erase"), its AUTHOR an author's name beside her institution's
 * link: what the section says, not a menu; a menu's lines come many to a heading, or
 * none. The heading is plain words, a link in none: a section about another page's
 * things is that page's (Crystal Docs' "Instance methods inherited from class Reference",
 * Reference a link, over a line of its methods: the same on every subclass's page), and a
 * heading that links back to a table of contents (nimdoc's "Imports" over its one line)
 * heads a hub's section, which step 10 judges with the whole page (fixture 024). */
static int section_links(const struct ex_walk *w, const struct sums *s, uint32_t b, uint32_t lo,
                         uint32_t hi)
{
    uint32_t p = b, n = b + 1;
    while (p > lo && (!s->visible[p - 1] || w->blocks[p - 1].words == 0))
        p--;
    while (n < hi && (!s->visible[n] || w->blocks[n].words == 0))
        n++;
    if (p == lo || n >= hi)
        return 0;
    const struct ex_block *head = &w->blocks[p - 1], *next = &w->blocks[n];
    return head->heading && !link_heavy(head) && next->heading && next->heading <= head->heading &&
           !holds_link(w, p - 1);
}

/* The page's link table: the outermost list or table (ul, ol, table) inside root that
 * holds more than CONTENT_HOLDER_SHARE of root's visible text, when it is mostly links
 * (over LINK_HEAVY_LD) and has HUB_WORDS words or more, or EX_NONE. A definition list is not one:
 * its terms are kept by their permalinks (definition_text), its "Source" links are not the page's.
 * A list of members with their signatures (Qt's "all members", mostly QObject's inherited ones) is
 * not one either: kept whole, two classes' lists came within distance 3 (issue 11,
 * docs/BENCHMARKS.md "Sibling sections and link tables"). */
static uint32_t link_table(const struct ex_walk *w, const struct sums *s, uint32_t root,
                           double root_chars)
{
    const struct ex_elem *r = &w->elems[root];
    for (uint32_t i = root + 1; i < r->end_elem;) {
        const struct ex_elem *e = &w->elems[i];
        double c = range(s->chars, e->first_block, e->end_block);
        if (c <= CONTENT_HOLDER_SHARE * root_chars) {
            i = e->end_elem; /* nothing inside holds more */
            continue;
        }
        if (e->tag == T_ul || e->tag == T_ol || e->tag == T_table) {
            size_t words = 0;
            for (uint32_t b = e->first_block; b < e->end_block; b++)
                if (s->visible[b])
                    words += w->blocks[b].words;
            /* a short list is left to the hubs' rule (step 10), which takes the whole
             * page's links when the page has nothing else (Groovydoc's package frames:
             * three lists, the last one of one link, won) */
            return elem_ld(s, e) > LINK_HEAVY_LD && words >= HUB_WORDS ? i : EX_NONE;
        }
        i++;
    }
    return EX_NONE;
}

/*
 * Keeps the visible, non-boilerplate blocks of element root's subtree: headings always
 * (a heading that is its own permalink is still the heading). In a documentation
 * generator's content area (step 3b) every visible block is the page's: its tables of
 * contents, index tables and "see also" lists are what tells a hub from its siblings.
 */
static void keep_subtree(struct ex_walk *w, const struct sums *s, uint32_t root, uint32_t winner,
                         unsigned char *dropped, int whole)
{
    struct ex_elem *r = &w->elems[root];
    if (whole) {
        for (uint32_t b = r->first_block; b < r->end_block; b++)
            if (s->visible[b])
                w->blocks[b].flags |= EX_B_KEEP;
        return;
    }
    double root_chars = range(s->chars, r->first_block, r->end_block);
    /* mark cleaned containers inside root (root itself is never cleaned, nor a container
     * that holds most of its text: that is the content, nor readability's winner and its
     * ancestors when step 3b widened the root around it) */
    for (uint32_t i = root + 1; i < r->end_elem; i++) {
        if (dropped[i] || i == winner || is_ancestor(w, i, winner))
            continue;
        const struct ex_elem *e = &w->elems[i];
        if (range(s->chars, e->first_block, e->end_block) > CONTENT_HOLDER_SHARE * root_chars)
            continue;
        if (clean_container(w, s, i)) {
            for (uint32_t j = i; j < w->elems[i].end_elem; j++)
                dropped[j] = 1;
        }
    }
    /* a list or table that holds most of root's text is the page (Qt's "all members",
     * an API index, a member index): its entries are what tells the page from its
     * siblings, links or not */
    uint32_t table = link_table(w, s, root, root_chars);
    for (uint32_t b = r->first_block; b < r->end_block; b++) {
        struct ex_block *blk = &w->blocks[b];
        if (table != EX_NONE && s->visible[b] && b >= w->elems[table].first_block &&
            b < w->elems[table].end_block) {
            blk->flags |= EX_B_KEEP;
            continue;
        }
        /* a term whose own permalink it holds (walk.c self_link) is the definition's,
         * however many types its signature links to */
        if (!s->visible[b] ||
            (link_heavy(blk) && !blk->heading && !data_label(w, blk) &&
             !(blk->flags & EX_B_PERMALINK) && !definition_text(w, blk) && !data_value(w, s, blk) &&
             !defined_term(w, s, blk) && !labelled_value(w, s, blk, root) &&
             !section_links(w, s, b, r->first_block, r->end_block)))
            continue;
        if (blk->elem != EX_NONE && blk->elem != root && dropped[blk->elem])
            continue;
        blk->flags |= EX_B_KEEP;
    }
}

/*
 * Comment sections (class/id "comment...") that the container choice left out: their
 * blocks are kept when readable (not link-heavy), unless the section lies inside
 * boilerplate (a sidebar's "recent comments"), or inside unlikely descendants of the
 * section (its reply links, footers, forms). The section's own unlikely mark is ignored:
 * "commentList nav" is still the comments.
 */
/* Is block b of comment section i a comment's text (readable = 1) or its date line
 * (readable = 0: short, with digits, links allowed)? */
static int comment_block(const struct ex_walk *w, uint32_t i, const struct ex_block *blk,
                         int readable)
{
    if (blk->elem == EX_NONE)
        return 0;
    if (readable) {
        if (link_heavy(blk))
            return 0;
        /* section chrome ("Leave a Reply", "Comments (0)") is not a comment */
        if (blk->words < COMMENT_MIN_WORDS &&
            !(blk->stops && blk->words >= COMMENT_MIN_SENTENCE_WORDS))
            return 0;
    } else if (blk->chars >= COMMENT_DATE_MAX_CHARS || !has_digit(w->text.p + blk->off, blk->len)) {
        return 0;
    }
    /* unlikely or hidden between the block and the section? A nested comment element's
     * unlikely mark ("comment-meta", "disqus") does not count; a comment form's does. */
    for (uint32_t e = blk->elem; e != i && e != EX_NONE; e = w->elems[e].parent) {
        const struct ex_elem *x = &w->elems[e];
        if ((x->flags & (EX_E_BOILER | EX_E_HIDDEN)) ||
            ((x->flags & EX_E_UNLIKELY) && (!(x->flags & EX_E_COMMENT) || x->tag == T_form)))
            return 0;
    }
    return 1;
}

static void keep_comments(struct ex_walk *w)
{
    uint32_t i = 0;
    while (i < w->n_elems) {
        const struct ex_elem *c = &w->elems[i];
        if (!(c->flags & EX_E_COMMENT)) {
            i++;
            continue;
        }
        uint32_t end = c->end_elem;
        unsigned above = c->parent == EX_NONE ? 0 : w->elems[c->parent].flags;
        /* a "comment" class on the whole page or on the article's wrapper ("feature-
         * comments", "has-comments") is a switch, not the comment section */
        if ((c->flags & (EX_E_HIDDEN | EX_E_BOILER | EX_E_HAS_ARTICLE)) || c->tag == T_html ||
            c->tag == T_body || (above & (EX_E_IN_BOILER | EX_E_IN_UNLIKELY))) {
            i = end;
            continue;
        }
        /* readable comments first; only a section that has some gets its date lines */
        size_t readable = 0;
        for (uint32_t b = c->first_block; b < c->end_block; b++) {
            struct ex_block *blk = &w->blocks[b];
            if (comment_block(w, i, blk, 1)) {
                blk->flags |= EX_B_KEEP;
                readable++;
            }
        }
        for (uint32_t b = c->first_block; readable && b < c->end_block; b++) {
            struct ex_block *blk = &w->blocks[b];
            if (!(blk->flags & EX_B_KEEP) && comment_block(w, i, blk, 0))
                blk->flags |= EX_B_KEEP;
        }
        i = end;
    }
}

/* Lower-cased words of s[0..n) (ASCII letters and digits; other bytes >= 0x80 belong
 * to words too), each followed by one space, into out (cap bytes); returns word count. */
static size_t norm_words(const char *s, size_t n, char *out, size_t cap)
{
    size_t o = 0, words = 0;
    int in = 0;
    if (cap < 2)
        return 0;
    out[o++] = ' ';
    for (size_t i = 0; i < n && o + 2 < cap; i++) {
        unsigned char c = (unsigned char)s[i];
        int wc =
            (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c >= 0x80 || (c >= 'A' && c <= 'Z');
        if (wc) {
            out[o++] = (char)((c >= 'A' && c <= 'Z') ? c + 32 : c);
            in = 1;
        } else if (in) {
            out[o++] = ' ';
            in = 0;
            words++;
        }
    }
    if (in) {
        out[o++] = ' ';
        words++;
    }
    out[o] = '\0';
    return words;
}

/* Does the block's text read like the page <title> (most of its words are in it)? */
static int like_title(const struct ex_walk *w, const struct ex_block *b)
{
    char title[1024], text[512], word[256];
    if (!w->title.p || b->len > TITLE_LIKE_MAX_BYTES)
        return 0;
    norm_words(w->title.p, w->title.len, title, sizeof title);
    size_t n = norm_words(w->text.p + b->off, b->len, text, sizeof text);
    if (n == 0)
        return 0;
    size_t found = 0;
    for (const char *p = text + 1; *p;) {
        const char *e = strchr(p, ' ');
        size_t k = (size_t)(e - p);
        if (k + 3 < sizeof word) {
            word[0] = ' ';
            memcpy(word + 1, p, k);
            word[k + 1] = ' ';
            word[k + 2] = '\0';
            if (strstr(title, word))
                found++;
        }
        p = e + 1;
    }
    return found * 100 >= n * TITLE_LIKE_PERCENT && (n >= TITLE_LIKE_MIN_WORDS || found == n);
}

/*
 * An <h1> that links its name and holds a word of its own beside the link ("Module
 * <a>BatChar.Infix</a>": ocamldoc links the module's name to its signature's page) is
 * the page's title, however linked; a site's logo or a teaser's headline is all link.
 */
static int named_h1(const struct ex_walk *w, const struct ex_block *b)
{
    char text[512];
    /* "Module " beside the link: three characters of its own, spaces counted */
    if (b->heading != 1 || b->link_chars + 3 > b->chars)
        return 0;
    return norm_words(w->text.p + b->off, b->len, text, sizeof text) >= 2;
}

/*
 * A line of a menu: a block in a list (ul, ol; its own or its parent) whose text is mostly
 * links. nimdoc's table of contents names each group of overloads by a bare word beside
 * its links ("acquire", then "acquire(lock: var Lock)"): such a word is no text a reader
 * reads between a title and the content, however many the menu has.
 */
static int menu_line(const struct ex_walk *w, const struct sums *s, const struct ex_block *b)
{
    uint32_t e = b->elem;
    for (int up = 0; e != EX_NONE && up < 2; up++, e = w->elems[e].parent) {
        const struct ex_elem *el = &w->elems[e];
        if ((el->tag == T_ul || el->tag == T_ol) && elem_ld(s, el) > LINK_HEAVY_LD)
            return 1;
    }
    return 0;
}

/* The first block kept so far (EX_B_KEEP), or n_blocks when none is. */
static size_t first_kept(const struct ex_walk *w)
{
    size_t b = 0;
    while (b < w->n_blocks && !(w->blocks[b].flags & EX_B_KEEP))
        b++;
    return b;
}

/*
 * Titles often sit outside the article body (and are links to the permalink): the
 * nearest heading before the content (h1-h3), or a block that reads like the <title>,
 * within HEADLINE_WINDOW blocks, is kept, and so are the short, readable lines between
 * it and the content (byline, date).
 */
static void keep_headline(struct ex_walk *w, const struct sums *s)
{
    size_t nb = w->n_blocks, first = first_kept(w);
    size_t head = nb;
    if (first < nb && (title_level(&w->blocks[first]) || like_title(w, &w->blocks[first])))
        head = first; /* the content starts with its own headline */
    /* the window counts the blocks a reader sees as text: hidden and boilerplate ones,
     * and a menu's links and bare words (menu_line) between the title and the content
     * (a sidebar in a table layout, libxml2's; nimdoc's table of contents), are not
     * distance; but past HEADLINE_WINDOW blocks in all only a heading is a headline (a
     * logo linking home reads like the <title> too). A link that reads like the <title>
     * (Scaladoc's source file "Predef.scala" under the page "scala.Predef.SeqCharSequence")
     * is the headline only when no heading that reads like the <title> stands above it
     * in the window: it is an aside of the title's, as a kicker or a permalink is */
    size_t linked = nb;
    for (size_t b = first, steps = 0, all = 0; head == nb && b-- > 0 && steps < HEADLINE_WINDOW;) {
        const struct ex_block *blk = &w->blocks[b];
        all++;
        if (blk->elem != EX_NONE && (w->elems[blk->elem].flags & (EX_E_HIDDEN | EX_E_IN_BOILER)))
            continue;
        if ((!link_heavy(blk) && !menu_line(w, s, blk)) || title_level(blk))
            steps++;
        int titled = all <= HEADLINE_WINDOW && like_title(w, blk);
        if (linked < nb && !(titled && title_level(blk)))
            continue;
        if (titled && !title_level(blk) && link_heavy(blk)) {
            linked = b;
            continue;
        }
        if (titled || (title_level(blk) && title_level(blk) <= HEADLINE_MAX_LEVEL &&
                       s->visible[b] && (!link_heavy(blk) || named_h1(w, blk)))) {
            head = b;
            break;
        }
    }
    if (first == nb)
        return;
    if (head == nb)
        head = linked < nb ? linked : first; /* else the content starts with its own */
    w->blocks[head].flags |= EX_B_KEEP;
    /* a dateline right above the headline ("6 Nov 2012", "Tuesday, July 24, 2012") */
    for (size_t b = head, steps = 0; b-- > 0 && steps < DATELINE_WINDOW; steps++) {
        struct ex_block *blk = &w->blocks[b];
        if ((blk->elem != EX_NONE &&
             (w->elems[blk->elem].flags & (EX_E_HIDDEN | EX_E_IN_BOILER))) ||
            link_heavy(blk) || blk->chars > DATELINE_MAX_CHARS)
            continue;
        /* a line of the <title> above the headline that names no date is the site's
         * name ("Apache HTTP Server Version 2.4", "Django 3.2.25 documentation"), not
         * a dateline */
        const char *t = w->text.p + blk->off;
        if (has_digit(t, blk->len) && (date_like(t, blk->len) || !like_title(w, blk))) {
            blk->flags |= EX_B_KEEP;
            break;
        }
    }
    for (size_t b = head + 1; b < first; b++) {
        struct ex_block *blk = &w->blocks[b];
        if (s->visible[b] && !link_heavy(blk) && blk->chars < BYLINE_MAX_CHARS &&
            first - head <= BYLINE_WINDOW)
            blk->flags |= EX_B_KEEP;
    }
}

/*
 * 8b. A section's heading is not the page's title: when the content starts with a heading
 * below h1 that does not read like the <title> ("Description" won: Macaulay2's pages, a
 * manual page's first section), the nearest visible heading of a higher level before it,
 * within HEADLINE_WINDOW blocks a reader sees as text, is the page's title and is kept
 * ("chi" above "Description"): keep_headline() stops at the content's own heading. A
 * link-heavy heading is a logo or a teaser, not a title, unless named_h1() says so.
 */
static void keep_title_above(struct ex_walk *w, const struct sums *s)
{
    size_t nb = w->n_blocks, first = first_kept(w);
    if (first == nb || title_level(&w->blocks[first]) <= 1 || like_title(w, &w->blocks[first]))
        return;
    unsigned level = title_level(&w->blocks[first]);
    for (size_t b = first, steps = 0; b-- > 0 && steps < HEADLINE_WINDOW;) {
        struct ex_block *blk = &w->blocks[b];
        if (blk->elem != EX_NONE && (w->elems[blk->elem].flags & (EX_E_HIDDEN | EX_E_IN_BOILER)))
            continue;
        if ((!link_heavy(blk) && !menu_line(w, s, blk)) || title_level(blk))
            steps++;
        if (title_level(blk) && title_level(blk) < level && s->visible[b] && blk->words > 0 &&
            (!link_heavy(blk) || named_h1(w, blk))) {
            blk->flags |= EX_B_KEEP;
            return;
        }
    }
}

/* A block that is (almost) all link text: a teaser's headline, a menu entry. */
static int all_link(const struct ex_block *b)
{
    return b->chars >= ALL_LINK_MIN_CHARS && (double)b->link_chars >= ALL_LINK_SHARE * b->chars;
}

/*
 * Teasers: "more stories" lists repeat a linked headline followed by a short standfirst.
 * The standfirst alone reads like text, so a run of at least TEASER_RUN such pairs
 * (separated by nothing but link-heavy blocks) loses its standfirsts. One pair is kept:
 * that is an article under its permalinked title.
 */
static void drop_teasers(struct ex_walk *w, const struct sums *s)
{
    size_t nb = w->n_blocks;
    size_t run_start = nb, units = 0, prev_t = nb;
    for (size_t b = 1; b <= nb; b++) {
        int unit = 0;
        if (b < nb && s->visible[b] && !link_heavy(&w->blocks[b]) &&
            w->blocks[b].chars < TEASER_CHARS && !w->blocks[b].heading) {
            size_t l = b;
            while (l-- > 0 && !s->visible[l])
                ;
            unit = l < b && w->blocks[l].heading && all_link(&w->blocks[l]) &&
                   !name_heading(&w->blocks[l]);
        }
        if (!unit) {
            /* a block that is neither link-heavy nor a teaser ends the run */
            if (b < nb && s->visible[b] && !link_heavy(&w->blocks[b]) && w->blocks[b].chars > 0) {
                if (units >= TEASER_RUN)
                    for (size_t t = run_start; t <= prev_t; t++)
                        if (!link_heavy(&w->blocks[t]))
                            w->blocks[t].flags &= (uint8_t)~EX_B_KEEP;
                units = 0;
                run_start = nb;
            } else if (b == nb && units >= TEASER_RUN) {
                for (size_t t = run_start; t <= prev_t; t++)
                    if (!link_heavy(&w->blocks[t]))
                        w->blocks[t].flags &= (uint8_t)~EX_B_KEEP;
            }
            continue;
        }
        if (units == 0)
            run_start = b;
        units++;
        prev_t = b;
    }
}

/*
 * A short block of code (walk.c code_context: most of its text in <code>, <pre> or a
 * declaration's header) is a declaration, not a label: rustdoc's "impl Parse for
 * Option<Label>" headers sit between "source" links, ocamldoc's "val x : int" lines
 * between comments left out. A label that smoothing is for ("Comments", "Share this")
 * is not code.
 */
static int code_declaration(const struct ex_block *blk)
{
    return (blk->flags & EX_B_CODE) != 0;
}

/*
 * jusText's context smoothing: a short block kept between two blocks that are not (or
 * the page's edge) is an isolated label ("Comments", "Share this") and is dropped.
 */
static void drop_isolated_short(struct ex_walk *w, const struct sums *s)
{
    size_t nb = w->n_blocks;
    size_t prev = nb; /* last visible block with text before b */
    for (size_t b = 0; b < nb; b++) {
        struct ex_block *blk = &w->blocks[b];
        if (!s->visible[b] || blk->chars == 0)
            continue;
        size_t p = prev;
        prev = b;
        /* a term whose permalink is its own (walk.c self_link: "ANCHORED = 0x10"
         * between two Source links) is a definition, not a stray label; a heading
         * with its permalink is smoothed as before (a Sphinx "¶" makes every heading
         * one) */
        if (!(blk->flags & EX_B_KEEP) || blk->chars >= SHORT_BLOCK_CHARS ||
            ((blk->flags & EX_B_PERMALINK) && !blk->heading) || code_declaration(blk))
            continue;
        if (p < nb && (w->blocks[p].flags & EX_B_KEEP))
            continue;
        size_t n = b + 1;
        while (n < nb && (!s->visible[n] || w->blocks[n].chars == 0))
            n++;
        if (n < nb && (w->blocks[n].flags & EX_B_KEEP))
            continue;
        blk->flags &= (uint8_t)~EX_B_KEEP;
    }
}

/*
 * 9. No candidate scores: every visible block that is not link-heavy is kept. A page that
 * is a link table (link_table, as in step 5: a list or table holding most of the page's
 * visible text, mostly links, of HUB_WORDS words or more) is a hub whatever its word
 * count: its links are its text, and every visible block is kept, as step 10 keeps a
 * short page's (fpdoc's member lists, a table of one name a row, the documented ones
 * linked; a Sphinx index page's toctree and its "Indices and tables" links). Only in the
 * pass that strips unlikely elements: in readability's retry a menu is visible too.
 */
static void keep_all_visible(struct ex_walk *w, const struct sums *s, unsigned mode)
{
    uint32_t table = EX_NONE;
    for (uint32_t i = 0; i < w->n_elems && table == EX_NONE && (mode & STRIP_UNLIKELY);
         i = w->elems[i].end_elem)
        table = link_table(w, s, i, s->chars[w->n_blocks]);
    for (size_t b = 0; b < w->n_blocks; b++)
        if (s->visible[b] && (table != EX_NONE || !link_heavy(&w->blocks[b])))
            w->blocks[b].flags |= EX_B_KEEP;
}

/* The lowest common ancestor of elements a and b (EX_NONE when they share none). */
static uint32_t common_ancestor(const struct ex_walk *w, uint32_t a, uint32_t b)
{
    while (a != EX_NONE && a != b && !is_ancestor(w, a, b))
        a = w->elems[a].parent;
    return a;
}

/*
 * The page's own heading: the visible heading of the highest level (h1 before h2 ...),
 * the first of them in page order, among blocks [0, end). A heading may be a link (its
 * own permalink); headings inside boilerplate (a site header's logo, a sidebar's widget
 * titles) are invisible and not the page's. Returns its block or n_blocks.
 */
static size_t page_heading(const struct ex_walk *w, const struct sums *s, size_t end)
{
    size_t nb = w->n_blocks, found = nb;
    for (size_t b = 0; b < end && b < nb; b++) {
        const struct ex_block *blk = &w->blocks[b];
        if (!blk->heading || !s->visible[b] || blk->words == 0)
            continue;
        if (found == nb || blk->heading < w->blocks[found].heading)
            found = b;
        if (blk->heading == 1)
            break;
    }
    return found;
}

/* The link density of the visible text that outer has and inner (inside it) has not. */
static double added_ld(const struct sums *s, const struct ex_elem *outer,
                       const struct ex_elem *inner)
{
    double chars = range(s->chars, outer->first_block, outer->end_block) -
                   range(s->chars, inner->first_block, inner->end_block);
    double links = range(s->links, outer->first_block, outer->end_block) -
                   range(s->links, inner->first_block, inner->end_block);
    return chars > 0 ? links / chars : 0;
}

/*
 * The landmark or generator area inside wrapper (the outermost of them with the most
 * text) when it holds most of the wrapper's text and what lies beside it is little or
 * links: a page wrapper won and the sidebars beside the landmark are navigation,
 * invisible already; but a story's standfirst and photo credit beside an
 * itemprop=articleBody paragraph are the story's. EX_NONE otherwise.
 */
static uint32_t landmark_inside(const struct ex_walk *w, const struct sums *s, uint32_t wrapper)
{
    const struct ex_elem *we = &w->elems[wrapper];
    double all = range(s->chars, we->first_block, we->end_block), most = 0;
    uint32_t pick = EX_NONE;
    for (uint32_t i = wrapper + 1; i < we->end_elem;) {
        const struct ex_elem *e = &w->elems[i];
        if (!(e->flags & (EX_E_ARTICLE | EX_E_AREA))) {
            i++;
            continue;
        }
        double c = range(s->chars, e->first_block, e->end_block);
        if (c > most) {
            most = c;
            pick = i;
        }
        i = e->end_elem; /* the outermost one */
    }
    if (pick == EX_NONE || most < LANDMARK_MIN_SHARE * all)
        return EX_NONE;
    if (most >= LANDMARK_WHOLE_SHARE * all ||
        added_ld(s, we, &w->elems[pick]) >= LANDMARK_BESIDE_MAX_LD)
        return pick;
    return EX_NONE;
}

/*
 * 3b. The content area. Readability's winner is often one section of a page whose main
 * content is several (a reference page's synopsis, description and options; a chapter's
 * sibling sections; a manual page's NAME, SYNOPSIS and OPTIONS). Cutting the page down
 * to its largest section is not the job: the container widens to
 *  - the outermost documentation generator content area holding it (EX_E_AREA: walk.c's
 *    generator_area()), which sets *whole (every visible block of it is kept);
 *  - else the outermost main landmark holding it (<main>, <article>, role=main/article,
 *    itemprop=articleBody: EX_E_ARTICLE) when what that adds is below AREA_MAX_LD link
 *    density (role=main on a news site often wraps the story's rails of teasers too);
 *  - or, when the winner is a wrapper holding such an area or landmark with most of its
 *    text, narrows to it;
 *  - then to the lowest common ancestor of it and the page's heading (page_heading()),
 *    when what that adds is below AREA_MAX_LD link density.
 * Boilerplate inside a widened landmark (navigation, hidden and unlikely elements, link
 * lists) is still left out block by block (step 5).
 */
static uint32_t content_area(const struct ex_walk *w, const struct sums *s, uint32_t best,
                             int *whole)
{
    /* the outermost generator content area holding best; else the outermost landmark,
     * when what it adds to best is not mostly links (role=main on a news site often
     * wraps the story's rails of teasers too) */
    *whole = 0;
    uint32_t area = EX_NONE, mark = EX_NONE;
    /* a section is a part of the document, never its whole: the winner widens to the
     * outermost section holding it (one definition of nimdoc's Types section won)
     * unless what that adds is mostly links */
    {
        uint32_t sec = EX_NONE;
        for (uint32_t a = best; a != EX_NONE; a = w->elems[a].parent)
            if (is_section(&w->elems[a]))
                sec = a;
        if (sec != EX_NONE && sec != best &&
            added_ld(s, &w->elems[sec], &w->elems[best]) < SECTION_MAX_LD)
            best = sec;
    }
    for (uint32_t a = best; a != EX_NONE; a = w->elems[a].parent) {
        const struct ex_elem *e = &w->elems[a];
        if (e->flags & EX_E_AREA)
            area = a;
        else if ((e->flags & EX_E_ARTICLE) &&
                 (e->parent == EX_NONE || !(w->elems[e->parent].flags & EX_E_ARTICLE)))
            mark = a;
    }
    if (area != EX_NONE) {
        best = area;
        *whole = 1;
    } else if (mark != EX_NONE && added_ld(s, &w->elems[mark], &w->elems[best]) < AREA_MAX_LD) {
        best = mark;
    }
    if (!*whole && (w->elems[best].flags & EX_E_HAS_ARTICLE)) {
        uint32_t in = landmark_inside(w, s, best);
        if (in != EX_NONE) {
            best = in;
            *whole = (w->elems[in].flags & EX_E_AREA) != 0;
        }
    }
    const struct ex_elem *be = &w->elems[best];
    size_t h = page_heading(w, s, be->end_block);
    if (h == w->n_blocks || w->blocks[h].elem == EX_NONE)
        return best;
    uint32_t lca = common_ancestor(w, w->blocks[h].elem, best);
    if (lca == EX_NONE || lca == best || w->elems[lca].tag == T_html)
        return best;
    /* a heading in the generator's other area beside it (Javadoc's and Groovydoc's title
     * in div.header beside div.contentContainer) comes with that area (step 4): widening
     * to their parent would keep every visible block of it, the navigation bar's too */
    if (*whole)
        for (uint32_t a = w->blocks[h].elem; a != EX_NONE && a != lca; a = w->elems[a].parent)
            if ((w->elems[a].flags & EX_E_AREA) && w->elems[a].parent == be->parent)
                return best;
    if (added_ld(s, &w->elems[lca], be) >= AREA_MAX_LD)
        return best;
    return lca;
}

/* The visible blocks with text among blocks [first, end): how many, and in *last the last
 * one's index. A cell of a record (record_table) or a label's term (label_dl) is one such
 * block; a labelled list's title has none before it in its parent (label_list). */
static uint32_t text_blocks(const struct ex_walk *w, const struct sums *s, uint32_t first,
                            uint32_t end, uint32_t *last)
{
    uint32_t n = 0;
    for (uint32_t b = first; b < end; b++)
        if (s->visible[b] && w->blocks[b].chars > 0) {
            n++;
            *last = b;
        }
    return n;
}

/* A record's description of several blocks (gi-docgen's summary cell: its sentence, then
 * "since: 2.2"): none of them links anywhere. Sets *text when they hold RECORD_TEXT_WORDS
 * words or more. */
static int unlinked_text(const struct ex_walk *w, const struct sums *s, const unsigned char *links,
                         const struct ex_elem *ce, int *text)
{
    uint32_t words = 0;
    for (uint32_t b = ce->first_block; b < ce->end_block; b++) {
        if (!s->visible[b] || w->blocks[b].chars == 0)
            continue;
        if (links[b] > 0)
            return 0;
        words += w->blocks[b].words;
    }
    if (words >= RECORD_TEXT_WORDS)
        *text = 1;
    return 1;
}

/*
 * A table of records: a table with no table inside whose every row with text is one
 * entry, a name in one cell and its description in another (fpdoc's "See also" and
 * member tables: "TParam.AsTime" linked, "Get/Set parameter value as a time value"
 * beside it). Each cell holds one visible block at most, or blocks that link nowhere
 * (a description and its "since: 2.2"); one of a row's is one link (the name), another
 * is not link-heavy and has RECORD_TEXT_WORDS words or more (the description: a section
 * number beside a chapter's link, Scribble's tables of contents, is none; a row of a
 * name alone, an undocumented class in gi-docgen's index, counts when at least as many
 * rows are described; fpdoc's bar of links to the unit's indexes beside its title, several links in
 * a cell, is no record either, nor texi2html's bar of a cell a link, "[ << ]" beside
 * "[ >> ]", "[Top]", "[Contents]": a record names one thing). Readability keeps a data
 * table by its header cells; these have none, but a row that describes what its link
 * names is a record as a data table's is (data_value), not a menu: a menu's rows are
 * links alone, and a page's layout table holds lists, paragraphs and tables in a cell.
 */
static int record_table(const struct ex_walk *w, const struct sums *s, const unsigned char *links,
                        uint32_t t)
{
    const struct ex_elem *te = &w->elems[t];
    int records = 0, bare = 0;
    for (uint32_t i = t + 1; i < te->end_elem; i++) {
        const struct ex_elem *e = &w->elems[i];
        if (e->tag == T_table)
            return 0;
        if (e->tag != T_tr)
            continue;
        int names = 0, text = 0, any = 0;
        for (uint32_t c = i + 1; c < e->end_elem; c = w->elems[c].end_elem) {
            const struct ex_elem *ce = &w->elems[c];
            uint32_t last = 0, n = text_blocks(w, s, ce->first_block, ce->end_block, &last);
            if (n == 0)
                continue;
            any = 1;
            if (n > 1) {
                if (!unlinked_text(w, s, links, ce, &text))
                    return 0;
            } else if (link_heavy(&w->blocks[last]) && links[last] == 1) {
                names++;
            } else if (w->blocks[last].words >= RECORD_TEXT_WORDS) {
                text = 1;
            }
        }
        if (!any)
            continue;
        if (names != 1)
            return 0;
        if (text)
            records++;
        else
            bare++;
    }
    return records > 0 && records >= bare;
}

/* Is block b a label: one short block that links nowhere and ends in ':' ("Defined in:")? */
static int label_block(const struct ex_walk *w, const unsigned char *links, uint32_t b)
{
    const struct ex_block *blk = &w->blocks[b];
    const char *t = w->text.p + blk->off;
    size_t len = blk->len;
    while (len > 0 && (t[len - 1] == ' ' || t[len - 1] == '\n'))
        len--;
    return links[b] == 0 && blk->chars < LABEL_MAX_CHARS && len > 0 && t[len - 1] == ':';
}

/*
 * A list of labelled values: a <dl> whose every <dt> with text is one label block
 * ("Inherits:", "Includes:", "Defined in:" in YARD's box under a class's title), each over
 * its <dd>. Its values are mostly links to other classes, but the labels say what each
 * names: a record of the page's subject, as a data table's header cells label its values
 * (readability keeps those), not a link list.
 */
static int label_dl(const struct ex_walk *w, const struct sums *s, const unsigned char *links,
                    uint32_t dl)
{
    const struct ex_elem *de = &w->elems[dl];
    int labels = 0;
    for (uint32_t c = dl + 1; c < de->end_elem; c = w->elems[c].end_elem) {
        const struct ex_elem *ce = &w->elems[c];
        if (ce->tag == T_dd)
            continue;
        if (ce->tag != T_dt)
            return 0;
        uint32_t last = 0, n = text_blocks(w, s, ce->first_block, ce->end_block, &last);
        if (n == 0)
            continue;
        if (n > 1 || !label_block(w, links, last) || ce->end_elem >= de->end_elem ||
            w->elems[ce->end_elem].tag != T_dd)
            return 0;
        labels++;
    }
    return labels > 0;
}

/*
 * A labelled list: a <ul>/<ol> right after its label, the last visible block before it
 * in its parent, written in the parent or in the element just before the list (YARD's
 * p.tag_title "See Also:" over its list of classes; Macaulay2's "Inputs:" in a synopsis
 * item over the list of inputs), or right after its title, a heading or a short block
 * that links nowhere, when the two are the whole of their parent (Macaulay2's div of an
 * h2 "See also" over its list; numpydoc's div.admonition.seealso, p.admonition-title "See
 * also" over a <dl> of linked names). What the label or title names, the list's links are
 * its values, not a menu: a menu comes without a title of its own inside the page's text,
 * or beside other text.
 */
static int label_list(const struct ex_walk *w, const struct sums *s, const unsigned char *links,
                      uint32_t l)
{
    const struct ex_elem *le = &w->elems[l];
    if (le->tag == T_dl && label_dl(w, s, links, l))
        return 1;
    uint32_t par = le->parent;
    if (par == EX_NONE || le->first_block == le->end_block)
        return 0;
    const struct ex_elem *pe = &w->elems[par];
    uint32_t p = le->first_block;
    while (p > pe->first_block && (!s->visible[p - 1] || w->blocks[p - 1].chars == 0))
        p--;
    if (p == pe->first_block)
        return 0;
    uint32_t lb = p - 1, le_elem = w->blocks[lb].elem;
    if (le_elem != par && (le_elem == EX_NONE || w->elems[le_elem].parent != par))
        return 0;
    if (label_block(w, links, lb))
        return 1;
    if (links[lb] > 0 || (!w->blocks[lb].heading && w->blocks[lb].chars >= LABEL_MAX_CHARS))
        return 0;
    /* the title opens the parent and the list closes it */
    uint32_t unused;
    return text_blocks(w, s, pe->first_block, lb, &unused) == 0 &&
           text_blocks(w, s, le->end_block, pe->end_block, &unused) == 0;
}

/* 1. Visible blocks: clears the previous pass's marks and scores and fills s with the
 * prefix sums of the blocks visible in this mode. Returns 0, or -1 when out of memory
 * (s is then freed by sums_free all the same). */
static int sums_build(struct ex_walk *w, unsigned mode, struct sums *s)
{
    size_t nb = w->n_blocks, ne = w->n_elems;
    for (size_t b = 0; b < nb; b++)
        w->blocks[b].flags &= (uint8_t)~EX_B_KEEP;
    for (size_t i = 0; i < ne; i++) {
        w->elems[i].scored = 0;
        w->elems[i].score = 0;
    }
    s->chars = malloc((nb + 1) * sizeof(double) * 3);
    s->visible = malloc(nb + 1);
    if (!s->chars || !s->visible)
        return -1;
    s->links = s->chars + nb + 1;
    s->commas = s->links + nb + 1;
    s->chars[0] = s->links[0] = s->commas[0] = 0;
    for (size_t b = 0; b < nb; b++) {
        const struct ex_block *blk = &w->blocks[b];
        int v = visible_block(w, blk, mode);
        s->visible[b] = (unsigned char)v;
        s->chars[b + 1] = s->chars[b] + (v ? blk->chars : 0);
        s->links[b + 1] = s->links[b] + (v ? blk->link_chars : 0);
        s->commas[b + 1] = s->commas[b] + (v ? blk->commas : 0);
    }
    s->record = calloc(ne + 1, 1);
    unsigned char *links = calloc(nb + 1, 1); /* links a block holds, up to 255 */
    if (!s->record || !links) {
        free(links);
        return -1;
    }
    for (size_t l = 0; l < w->n_links; l++)
        if (w->links[l].block < nb && links[w->links[l].block] < 255)
            links[w->links[l].block]++;
    for (uint32_t i = 0; i < ne; i++) {
        if (w->elems[i].tag == T_table && !(w->elems[i].flags & EX_E_HAS_DATA))
            s->record[i] = (unsigned char)record_table(w, s, links, i);
        else if (w->elems[i].tag == T_dl || w->elems[i].tag == T_ul || w->elems[i].tag == T_ol)
            s->record[i] = (unsigned char)label_list(w, s, links, i);
    }
    free(links);
    return 0;
}

static void sums_free(struct sums *s)
{
    free(s->chars);
    free(s->visible);
    free(s->record);
}

/* 2. Paragraph scores to ancestors: the parent in full, the grandparent half, then
 * divided by SCORE_LEVEL_DIVIDER * level. */
static void score_paragraphs(struct ex_walk *w, const struct sums *s)
{
    for (size_t b = 0; b < w->n_blocks; b++) {
        const struct ex_block *blk = &w->blocks[b];
        if (!s->visible[b] || blk->chars < MIN_PARAGRAPH || blk->elem == EX_NONE)
            continue;
        double score = 1 + blk->commas +
                       (blk->chars / SCORE_CHARS_PER_POINT < SCORE_LENGTH_POINTS_MAX
                            ? blk->chars / SCORE_CHARS_PER_POINT
                            : SCORE_LENGTH_POINTS_MAX);
        uint32_t a = w->elems[blk->elem].parent;
        for (int level = 0; level < MAX_LEVELS && a != EX_NONE; level++) {
            init_score(w, a);
            double div = level == 0   ? 1
                         : level == 1 ? SCORE_GRANDPARENT_DIVIDER
                                      : level * SCORE_LEVEL_DIVIDER;
            w->elems[a].score += (float)(score / div);
            a = w->elems[a].parent;
        }
    }
}

/* 3. Top candidates: scales every visible candidate's score by (1 - its link density)
 * and keeps the N_TOP best, best first, in top[] and top_score[]; returns how many. */
static size_t top_candidates(struct ex_walk *w, const struct sums *s, unsigned mode,
                             uint32_t top[N_TOP], double top_score[N_TOP])
{
    size_t n_top = 0;
    for (uint32_t i = 0; i < w->n_elems; i++) {
        struct ex_elem *e = &w->elems[i];
        if (!e->scored || (e->flags & invisible_flags(mode)))
            continue;
        double sc = e->score * (1 - elem_ld(s, e));
        e->score = (float)sc;
        size_t k = n_top < N_TOP ? n_top++ : N_TOP;
        while (k > 0 && top_score[k - 1] < sc) {
            if (k < N_TOP) {
                top[k] = top[k - 1];
                top_score[k] = top_score[k - 1];
            }
            k--;
        }
        if (k < N_TOP) {
            top[k] = i;
            top_score[k] = sc;
        }
    }
    return n_top;
}

/* 3. readability: several strong candidates (ALT_SCORE_SHARE of the top, not nested in
 * it) under one ancestor -> that ancestor; returns the new best, or best. */
static uint32_t shared_ancestor(const struct ex_walk *w, const uint32_t top[N_TOP],
                                const double top_score[N_TOP], size_t n_top)
{
    uint32_t best = top[0];
    double best_score = top_score[0];
    uint32_t alt[N_TOP];
    size_t n_alt = 0;
    for (size_t k = 1; k < n_top; k++)
        if (top_score[k] / best_score >= ALT_SCORE_SHARE && !is_ancestor(w, best, top[k]) &&
            !is_ancestor(w, top[k], best))
            alt[n_alt++] = top[k];
    if (n_alt < MIN_ALTERNATIVES)
        return best;
    uint32_t p = w->elems[best].parent;
    /* with only two runners-up the shared ancestor must be close (a forum's
     * posts in one table), or a page-wide wrapper would win */
    int levels = n_alt >= ALT_READABILITY ? 1 << 30 : ALT_CLOSE_LEVELS;
    while (p != EX_NONE && (w->elems[p].tag) != T_body && levels-- > 0) {
        size_t contained = 0;
        for (size_t k = 0; k < n_alt; k++)
            if (is_ancestor(w, p, alt[k]))
                contained++;
        if (contained >= (n_alt >= ALT_READABILITY ? ALT_READABILITY : MIN_ALTERNATIVES))
            return p;
        p = w->elems[p].parent;
    }
    return best;
}

/* 3. Climbs while the parent scores higher (a parent under 1 / CLIMB_DIVIDER of the last
 * score stops the climb), then past parents whose only child (with text) is best. */
static uint32_t climb(const struct ex_walk *w, uint32_t best, double best_score)
{
    double last = w->elems[best].scored ? w->elems[best].score : best_score;
    double threshold = last / CLIMB_DIVIDER;
    uint32_t p = w->elems[best].parent;
    while (p != EX_NONE && (w->elems[p].tag) != T_body) {
        if (!w->elems[p].scored) {
            p = w->elems[p].parent;
            continue;
        }
        double ps = w->elems[p].score;
        if (ps < threshold)
            break;
        if (ps > last) {
            best = p;
            break;
        }
        last = ps;
        p = w->elems[p].parent;
    }
    for (;;) {
        uint32_t par = w->elems[best].parent;
        if (par == EX_NONE || (w->elems[par].tag) == T_body)
            break;
        const struct ex_elem *pe = &w->elems[par], *be = &w->elems[best];
        if (pe->first_block != be->first_block || pe->end_block != be->end_block)
            break;
        best = par;
    }
    return best;
}

/* 4. Whether sibling ce of best joins it: a score of max(SIBLING_SCORE_MIN,
 * SIBLING_SCORE_SHARE of the top) with a bonus when it shares the top's class, or
 * paragraph-like text (over SIBLING_TEXT_CHARS characters below SIBLING_MAX_LD link
 * density), or (when short_ok) a short link-free sentence, or a section beside a section
 * inside the content area. */
static int sibling_joins(const struct ex_walk *w, const struct sums *s, const struct ex_elem *ce,
                         uint32_t best, double best_score, int short_ok)
{
    const struct ex_elem *be = &w->elems[best], *pe = &w->elems[be->parent];
    /* the document's other sections: a section beside the winning section, both in an
     * element that is the content area (a section itself, a landmark, a generator's
     * area, or named so: nimdoc's div#content), unless mostly links to elsewhere (a
     * "related" list); a permalink to a definition's own <dt> is not a link (walk.c
     * self_link), so an API's constants and procs under their Source links join */
    if (is_section(be) && is_section(ce) &&
        (is_section(pe) || (pe->flags & (EX_E_ARTICLE | EX_E_AREA | EX_E_POSITIVE))) &&
        elem_ld(s, ce) < SECTION_MAX_LD)
        return 1;
    double threshold = best_score * SIBLING_SCORE_SHARE > SIBLING_SCORE_MIN
                           ? best_score * SIBLING_SCORE_SHARE
                           : SIBLING_SCORE_MIN;
    double bonus = 0;
    if (ce->class_hash && ce->class_hash == w->elems[best].class_hash)
        bonus = best_score * SIBLING_SCORE_SHARE;
    if (ce->scored && ce->score + bonus >= threshold)
        return 1;
    if (ce->end_block > ce->first_block) {
        double chars = range(s->chars, ce->first_block, ce->end_block);
        double ld = elem_ld(s, ce);
        int sentence = 0;
        for (uint32_t b = ce->first_block; b < ce->end_block; b++)
            if (w->blocks[b].stops)
                sentence = 1;
        if (chars > SIBLING_TEXT_CHARS && ld < SIBLING_MAX_LD)
            return 1;
        if (short_ok && chars > 0 && chars <= SIBLING_TEXT_CHARS && ld == 0 && sentence)
            return 1;
    }
    return 0;
}

/* 4. Keeps best's subtree and those of the siblings that join it (sibling_joins). */
static void keep_with_siblings(struct ex_walk *w, const struct sums *s, unsigned mode,
                               uint32_t best, double best_score, uint32_t winner,
                               unsigned char *dropped, int whole)
{
    uint32_t parent = w->elems[best].parent;
    if (parent == EX_NONE) {
        keep_subtree(w, s, best, winner, dropped, whole);
        return;
    }
    const struct ex_elem *pe = &w->elems[parent];
    for (uint32_t c = parent + 1; c < pe->end_elem; c = w->elems[c].end_elem) {
        const struct ex_elem *ce = &w->elems[c];
        /* a generator's other content areas beside it (Doxygen's title in div.header,
         * AsciiDoc's NAME section in div#header) */
        int append = c == best || (whole && (ce->flags & EX_E_AREA));
        if (!append && !(ce->flags & invisible_flags(mode)))
            append = sibling_joins(w, s, ce, best, best_score, 1);
        if (append)
            keep_subtree(w, s, c, winner, dropped, whole && c == best);
    }
}

/*
 * 4. Whether the body is the page's content area: no element of the page is a generator's
 * content area or a main landmark (<main>, <article>, role=main), and no element from
 * best up is a section or positive by name (nimdoc's div#content): the page marks no
 * area of its own, so the winner is one part of what lies in <body>.
 */
static int body_is_area(const struct ex_walk *w, uint32_t best)
{
    for (uint32_t i = 0; i < w->n_elems; i++)
        if (w->elems[i].flags & (EX_E_AREA | EX_E_ARTICLE))
            return 0;
    for (uint32_t a = best; a != EX_NONE; a = w->elems[a].parent)
        if (is_section(&w->elems[a]) || (w->elems[a].flags & EX_E_POSITIVE))
            return 0;
    return 1;
}

/*
 * 4. Flat sections: the level (2 to 6) of the heading that opens the section holding
 * child a of parent, when parent's children are sections written without a wrapper, one
 * heading of that level and the elements after it each ("<h2>Description</h2> <p>..
 * <h2>Default Setting</h2> <p>Off": MHonArc's resource pages, hand-written manuals),
 * with at least one more heading of that level; else 0. An <h1> is the page's title,
 * not a section's.
 */
static int flat_section_level(const struct ex_walk *w, uint32_t parent, uint32_t a)
{
    int level = 0, same = 0;
    const struct ex_elem *pe = &w->elems[parent];
    for (uint32_t c = parent + 1; c < a; c = w->elems[c].end_elem) {
        int h = heading_level(&w->elems[c]);
        if (h)
            level = h;
    }
    if (level < 2)
        return 0;
    for (uint32_t c = parent + 1; c < pe->end_elem; c = w->elems[c].end_elem)
        if (heading_level(&w->elems[c]) == level)
            same++;
    return same >= 2 ? level : 0;
}

/*
 * 4. In a page whose content area is the body (body_is_area), the blocks beside the
 * winner's ancestors join as its own siblings do (sibling_joins) by their score or as
 * paragraph-like text: a demo's description below the box that holds its text (jQuery
 * UI's demos: div.demo-description beside div#tabs, whose panel won). A short line does
 * not: beside the page's box it is a footer's ("Last updated 12/08/2003. You are visitor
 * number 004211.": fixture 009) more often than the page's. Navigation, footers and
 * link lists stay out as beside the winner: invisible by tag, role or name, or not
 * passing sibling_joins. Readability looks at the winner's siblings only; with no area
 * marked, the body's other text blocks are the page's (trafilatura's baseline). Flat
 * sections (flat_section_level) are the page's whatever their length: from the heading
 * of the winner's level on, each section's elements join unless mostly links (a short
 * "Off" under "Default Setting" is what tells one resource's page from the next:
 * fixture 100).
 */
static void keep_body_uncles(struct ex_walk *w, const struct sums *s, unsigned mode, uint32_t best,
                             double best_score, uint32_t winner, unsigned char *dropped)
{
    if (!body_is_area(w, best))
        return;
    /* the winner must hold text of its own (a scoring paragraph, kept): a page of
     * teaser links leaves readability a form or a one-line wrapper, not the page's */
    const struct ex_elem *be = &w->elems[best];
    size_t own = 0;
    for (uint32_t b = be->first_block; b < be->end_block; b++)
        if (w->blocks[b].flags & EX_B_KEEP)
            own += w->blocks[b].chars;
    if (own < MIN_PARAGRAPH)
        return;
    for (uint32_t a = w->elems[best].parent; a != EX_NONE; a = w->elems[a].parent) {
        uint32_t parent = w->elems[a].parent;
        if (w->elems[a].tag == T_body || parent == EX_NONE)
            break;
        const struct ex_elem *pe = &w->elems[parent];
        int level = flat_section_level(w, parent, a), in_section = 0;
        for (uint32_t c = parent + 1; c < pe->end_elem; c = w->elems[c].end_elem) {
            const struct ex_elem *ce = &w->elems[c];
            int h = heading_level(ce);
            if (level && h)
                in_section = h >= level;
            if (c == a || (ce->flags & invisible_flags(mode)))
                continue;
            if (sibling_joins(w, s, ce, best, best_score, 0) ||
                (in_section && elem_ld(s, ce) < SECTION_MAX_LD))
                keep_subtree(w, s, c, winner, dropped, 0);
        }
    }
}

/* 6. jusText: long (GOOD_BLOCK_CHARS), link-poor (link characters at most
 * 1 / GAP_LINK_RATIO) visible blocks in gaps of the content are content. */
static void fill_gaps(struct ex_walk *w, const struct sums *s)
{
    size_t nb = w->n_blocks, first = nb, last = 0;
    for (size_t b = 0; b < nb; b++)
        if (w->blocks[b].flags & EX_B_KEEP) {
            if (first == nb)
                first = b;
            last = b;
        }
    for (size_t b = first; b < last; b++) {
        struct ex_block *blk = &w->blocks[b];
        if ((blk->flags & EX_B_KEEP) || !s->visible[b] || blk->chars < GOOD_BLOCK_CHARS ||
            blk->link_chars * GAP_LINK_RATIO > blk->chars)
            continue;
        blk->flags |= EX_B_KEEP;
    }
}

/* One selection pass, steps 1 to 8 of the head of this file; returns 0, or -1 when out of
 * memory. */
static int select_pass(struct ex_walk *w, unsigned mode)
{
    struct sums s = {0};
    unsigned char *dropped = calloc(w->n_elems + 1, 1);
    int rc = 0;
    if (sums_build(w, mode, &s) != 0 || !dropped) {
        rc = -1;
        goto done;
    }
    score_paragraphs(w, &s);
    uint32_t top[N_TOP];
    double top_score[N_TOP];
    size_t n_top = top_candidates(w, &s, mode, top, top_score);
    if (n_top == 0 || top_score[0] <= 0) {
        keep_all_visible(w, &s, mode);
        goto done;
    }
    double best_score = top_score[0];
    uint32_t winner = climb(w, shared_ancestor(w, top, top_score, n_top), best_score);
    int whole = 0;
    uint32_t best = content_area(w, &s, winner, &whole);
    best_score = w->elems[best].scored ? w->elems[best].score : best_score;
    keep_with_siblings(w, &s, mode, best, best_score, winner, dropped, whole);
    keep_body_uncles(w, &s, mode, best, best_score, winner, dropped);
    fill_gaps(w, &s);
    drop_teasers(w, &s);
    drop_isolated_short(w, &s);
    /* the page's own heading inside the content area is its title, not a stray label */
    {
        size_t h = page_heading(w, &s, w->elems[best].end_block);
        if (h < w->n_blocks && h >= w->elems[best].first_block)
            w->blocks[h].flags |= EX_B_KEEP;
    }

    /* 7. comment sections outside the content: readers' comments are main text too */
    keep_comments(w);

    /* 8. the headline just before the content, and the byline/date lines after it */
    keep_headline(w, &s);
    keep_title_above(w, &s);
done:
    sums_free(&s);
    free(dropped);
    return rc;
}

static size_t kept_chars(const struct ex_walk *w)
{
    size_t n = 0;
    for (size_t b = 0; b < w->n_blocks; b++)
        if (w->blocks[b].flags & EX_B_KEEP)
            n += w->blocks[b].chars;
    return n;
}

/* The lowest common ancestor of the kept blocks' elements; EX_NONE when none is kept or
 * they share no element. */
static uint32_t kept_container(const struct ex_walk *w)
{
    uint32_t lca = EX_NONE;
    int any = 0;
    for (size_t b = 0; b < w->n_blocks; b++) {
        const struct ex_block *blk = &w->blocks[b];
        if (!(blk->flags & EX_B_KEEP))
            continue;
        uint32_t x = blk->elem;
        if (x == EX_NONE)
            return EX_NONE;
        if (!any) {
            lca = x;
            any = 1;
            continue;
        }
        while (lca != EX_NONE && x != lca && !is_ancestor(w, lca, x))
            lca = w->elems[lca].parent;
        if (lca == EX_NONE)
            return EX_NONE;
    }
    return lca;
}

/* The words of text p[0, n) that a reader reads: white-space separated tokens holding a
 * letter or a digit. A letter bar ("$#! · 0-9 · A · B · ... · Z", Natural Docs' and
 * Haddock's index pages) is 55 tokens and 28 such words: its dots are no text. Code is
 * counted by its tokens (step 10's caller): a BoostBook synopsis's braces are its text. */
static size_t spoken_words(const char *p, size_t n)
{
    size_t words = 0;
    int counted = 0; /* the current token is counted already */
    const utf8proc_uint8_t *u = (const utf8proc_uint8_t *)p;
    for (size_t i = 0; i < n;) {
        utf8proc_int32_t cp;
        utf8proc_ssize_t k = utf8proc_iterate(u + i, (utf8proc_ssize_t)(n - i), &cp);
        if (k <= 0) {
            i++;
            continue;
        }
        i += (size_t)k;
        if (cp == ' ' || cp == '\n' || cp == '\t') {
            counted = 0;
            continue;
        }
        if (counted)
            continue;
        utf8proc_category_t cat = utf8proc_category(cp);
        if ((cat >= UTF8PROC_CATEGORY_LU && cat <= UTF8PROC_CATEGORY_LO) ||
            (cat >= UTF8PROC_CATEGORY_ND && cat <= UTF8PROC_CATEGORY_NO)) {
            words++;
            counted = 1;
        }
    }
    return words;
}

/* Does element i hold no visible text that is not kept already (a wrapper of the kept
 * blocks: taking it as the container adds nothing)? */
static int holds_kept_only(const struct ex_walk *w, uint32_t i)
{
    const struct ex_elem *e = &w->elems[i];
    for (uint32_t b = e->first_block; b < e->end_block; b++)
        if (!(w->blocks[b].flags & EX_B_KEEP) && w->blocks[b].words > 0 &&
            visible_block(w, &w->blocks[b], CLEAN))
            return 0;
    return 1;
}

/*
 * 10. Hubs and stubs: a result under HUB_WORDS words is not enough to tell the page from
 * its siblings (a table of contents, an index of links, a one-line stub whose operand list
 * is all links), so the link-heavy blocks are content after all: every visible block of
 * the kept blocks' container, or, when nothing was kept, of the main landmark
 * (<main>/<article>/role=main) or else of the whole page (boilerplate by tag or ARIA role,
 * hidden elements and, for the whole page, unlikely ones such as menus stay out: a page
 * that is a diagram under the site's menu is left with its caption, or too little text).
 */
static void keep_hub_links(struct ex_walk *w)
{
    size_t words = 0;
    int headings_only = 1;
    for (size_t b = 0; b < w->n_blocks; b++)
        if (w->blocks[b].flags & EX_B_KEEP) {
            words += code_declaration(&w->blocks[b])
                         ? w->blocks[b].words
                         : spoken_words(w->text.p + w->blocks[b].off, w->blocks[b].len);
            headings_only &= w->blocks[b].heading != 0;
        }
    if (words >= HUB_WORDS)
        return;
    uint32_t c = kept_container(w);
    uint32_t lo = 0, hi = (uint32_t)w->n_blocks;
    int in_main = 0;
    /* a heading alone (a diagram's title) is not a container: its section is, and so is
     * not an element that holds nothing but that heading (the SGI STL's index pages:
     * <center><h1>, then the table of every entry beside it) */
    if (c != EX_NONE && heading_level(&w->elems[c]))
        c = w->elems[c].parent;
    while (headings_only && c != EX_NONE && holds_kept_only(w, c))
        c = w->elems[c].parent;
    /* nor is a footer (a negative hint: a grid class such as "columns" kept it from being
     * unlikely) that alone was kept on a page of links (Nim's module index pages) */
    if (c != EX_NONE && w->elems[c].weight < 0)
        c = EX_NONE;
    int page = c == EX_NONE || w->elems[c].tag == T_body || w->elems[c].tag == T_html;
    if (c != EX_NONE) {
        lo = w->elems[c].first_block;
        hi = w->elems[c].end_block;
    } else {
        for (size_t i = 0; i < w->n_elems && !in_main; i++)
            in_main = (w->elems[i].flags & EX_E_ARTICLE) != 0;
    }
    /* the whole page's link lists are its menus, not its own: only those outside
     * unlikely elements (menu, navbar, header, tagline...) count then */
    unsigned mode = page && !in_main ? STRIP_UNLIKELY | CLEAN : CLEAN;
    for (uint32_t b = lo; b < hi; b++) {
        struct ex_block *blk = &w->blocks[b];
        if (!visible_block(w, blk, mode))
            continue;
        if (in_main && (blk->elem == EX_NONE || !(w->elems[blk->elem].flags & EX_E_ARTICLE)))
            continue;
        blk->flags |= EX_B_KEEP;
    }
}

/* Steps 1-9, with readability's retries. -1: out of memory (a fallback such as "keep
 * everything visible" would give the page another text, and so another fingerprint, under
 * memory pressure: the caller says EXTRACT_ENOMEM instead). */
static int select_content(struct ex_walk *w)
{
    /* readability: when the result is short, retry without judging by class and id,
     * and keep the longest result */
    if (inherit_marks(w) != 0 || select_pass(w, STRIP_UNLIKELY | CLEAN) != 0)
        return -1;
    size_t first = kept_chars(w);
    if (first >= CHAR_THRESHOLD)
        return 0;
    int any_unlikely = 0;
    for (size_t i = 0; i < w->n_elems && !any_unlikely; i++)
        any_unlikely = (w->elems[i].flags & EX_E_IN_UNLIKELY) != 0;
    if (!any_unlikely)
        return 0;
    if (select_pass(w, CLEAN) != 0)
        return -1;
    if (kept_chars(w) >= RETRY_GAIN_FACTOR * first + RETRY_GAIN_CHARS)
        return 0;
    return select_pass(w, STRIP_UNLIKELY | CLEAN) != 0 ? -1 : 0;
}

/*
 * Step 9b: a generator's content area too short to score is still the page's content.
 * The generator's layout (walk.c: EX_E_AREA) says where a page's own text is; when the
 * area holds no block long enough to score (MIN_PARAGRAPH), what won lies outside it or
 * is a piece of it: Eigen's Doxygen pages of an empty group or directory ("doc Directory
 * Reference" over an empty div.contents) came out as the survey banner above Doxygen's
 * header, every such page the same text, and a directory of one file as its "Files"
 * heading alone. When the result is a stub (under HUB_WORDS words), the area's visible
 * blocks are the result instead (the title, a short list), and step 10 takes the area's
 * links in.
 */
static void keep_short_area(struct ex_walk *w)
{
    unsigned mode = STRIP_UNLIKELY | CLEAN;
    int visible = 0;
    size_t words = 0;
    for (size_t b = 0; b < w->n_blocks; b++) {
        const struct ex_block *blk = &w->blocks[b];
        if (blk->flags & EX_B_KEEP)
            words += blk->words;
        if (blk->elem == EX_NONE || !(w->elems[blk->elem].flags & EX_E_AREA))
            continue;
        if (!visible_block(w, blk, mode) || blk->words == 0)
            continue;
        if (blk->chars >= MIN_PARAGRAPH)
            return;
        visible = 1;
    }
    if (!visible || words >= HUB_WORDS)
        return;
    for (size_t b = 0; b < w->n_blocks; b++) {
        struct ex_block *blk = &w->blocks[b];
        blk->flags &= (uint8_t)~EX_B_KEEP;
        if (blk->elem != EX_NONE && (w->elems[blk->elem].flags & EX_E_AREA) &&
            visible_block(w, blk, mode))
            blk->flags |= EX_B_KEEP;
    }
}

enum extract_code ex_boiler_select(struct ex_walk *w)
{
    if (select_content(w) != 0)
        return EXTRACT_ENOMEM;
    keep_short_area(w);
    keep_hub_links(w);
    return EXTRACT_OK;
}
