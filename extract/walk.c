/*
 * walk.c: one pass over the page with libxml2's HTML parser in SAX mode, producing
 * the page as a flat list of block elements (parent index, tag, hint weight, flags) and
 * the text blocks between block boundaries (owner element, characters, link characters,
 * words, commas), plus title, language, base, canonical, meta robots and links.
 *
 * No libxml2 tree is built: libxml2 still does the HTML5-ish recovery (implied and
 * auto-closed elements, entities) and hands us balanced start/end events, and we keep only
 * what the boilerplate scorer (boiler.c) needs. The walk is iterative by construction (an
 * explicit stack capped at max_depth; content deeper than that is skipped and counted for
 * extract_doc_truncated()), so 100,000
 * nested tags cost nothing special, and every buffer has a cap derived from the input size.
 *
 * Dropped outright: script, style, noscript, template, svg, math, iframe, object, embed,
 * canvas, audio, video and form controls (input, select, textarea, button, label).
 * Hidden elements (the hidden attribute, aria-hidden="true", style display:none or
 * visibility:hidden, a closed <dialog>, block elements with a CSS framework's hiding
 * class such as "hidden" or "sr-only") give no text, but their links are still recorded;
 * a tab panel's hidden attribute is its tab list's state (read_attrs), not hidden text.
 * So do the numbers a generator puts before a heading in a span of their own (Sphinx's
 * span.section-number, pandoc's span.header-section-number): they are the section's place
 * in this release's table of contents, not its text, and they change when a chapter moves.
 * The same for a code listing's line numbers in a span of their own (Doxygen's source
 * pages, span.lineno; Pygments' inline numbers, span.linenos): glued to the line's first
 * token ("1012char"), they renumber every line below one that was added.
 * Class and id values are matched against readability's hint words once per distinct
 * class string (a per-parse memo: pages repeat their classes).
 * Text is white-space collapsed (U+00A0 included) except inside <pre>, where lines are
 * kept; <br> is a newline.
 */
#include "extract/extract_int.h"

#include <libxml/HTMLparser.h>
#include <libxml/parserInternals.h>
#include <libxml/xmlmemory.h>
#include <malloc.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>

#define EX_TITLE_MAX 4096  /* bytes of <title> kept; longer titles are cut at a character */
#define EX_ANCHOR_MAX 1024 /* bytes of anchor text kept per link, cut at a character */
/* a permalink's target (self_link) is at most this many elements up from the <a>: the
 * <a> itself, a <span> or <code>, the <pre>, the <dt>, the definition's <div id> (nimdoc)
 * and a margin; a "back to top" link far below its target is a link */
#define SELF_LINK_LEVELS 8

/* ---- tags ---- */

struct tag_info {
    const char *name;
    uint8_t kind;
};

static const struct tag_info tag_table[] = {{"", K_UNKNOWN},
#define X(n, k) {#n, k},
                                            EX_TAGS(X)
#undef X
};

static int tag_cmp(const void *key, const void *elem)
{
    return strcmp((const char *)key, ((const struct tag_info *)elem)->name);
}

static unsigned tag_lookup_slow(const char *name)
{
    const struct tag_info *t =
        bsearch(name, tag_table + 1, T_COUNT - 1, sizeof tag_table[0], tag_cmp);
    return t ? (unsigned)(t - tag_table) : T_UNKNOWN;
}

/* ---- walk state ---- */

enum {
    O_ELEM = 1u << 0,   /* pushed an ex_elem */
    O_DROP = 1u << 1,   /* started a dropped subtree */
    O_HIDDEN = 1u << 2, /* started a hidden subtree */
    O_LINK = 1u << 3,   /* an <a href> */
    O_PRE = 1u << 4,
    O_TITLE = 1u << 5,
    O_SPACE = 1u << 6, /* unknown element: a word boundary at both ends */
    O_SVG = 1u << 7,   /* an <svg> (dropped) whose <text> labels are read */
    O_CODE = 1u << 8,  /* code (code_context): the links inside name its identifiers */
};

struct open {
    uint16_t tag;
    uint16_t flags;
    uint32_t elem;    /* the current block element inside this one */
    uint64_t id_hash; /* ex_fnv1a of its id attribute, 0 when it has none (self_link) */
};

struct cache_entry {
    const xmlChar *name;
    unsigned tag;
};

struct class_memo {
    uint64_t hash; /* 64-bit FNV-1a of the lower-cased value, 0 when empty */
    size_t len;
    uint32_t neg_words; /* class_hints' negative words */
    int8_t weight;
    uint8_t unlikely;
};

/* Site generators whose page layout walk.c knows (<meta name="generator" content=...>). */
enum generator {
    GEN_OTHER = 0,
    GEN_ASCIIDOC,
    GEN_DOXYGEN,
    GEN_JAVADOC,
    GEN_DOCBOOK,
    GEN_HADDOCK,
    GEN_MEDIAWIKI,
    GEN_PYDOCTOR
};

struct state {
    struct ex_walk *w;
    struct open *stack;
    unsigned depth, overflow;
    unsigned drop, hidden, pre, title_done, in_title;
    unsigned code;          /* open code elements (code_context) */
    unsigned svg, svg_text; /* inside an <svg> that started a drop; inside its <text> */
    uint32_t cur_elem;
    /* the pending block */
    size_t blk_off;
    uint32_t blk_chars, blk_link_chars, blk_words, blk_commas, blk_stops;
    uint32_t blk_code_chars; /* its characters inside code (code_context) */
    int blk_permalink;       /* a permalink's text (self_link) is in it */
    uint64_t blk_anchor;     /* fragment_hash of its last named anchor, <a name|id> (self_link) */
    int pending_space;       /* white space seen since the last character */
    /* the open link */
    int link_open;
    int link_self; /* it is a permalink to its own definition or section (self_link) */
    int link_code; /* it lies inside code: an identifier's link (code_context) */
    size_t link_index;
    struct ex_buf anchor;
    int anchor_space;
    int title_space;
    struct cache_entry cache[64];
    struct class_memo memo[256]; /* class attribute -> hints (pages repeat their classes) */
    enum generator generator;    /* from <meta name="generator"> */
};

static void fail(struct state *st, enum extract_code rc)
{
    if (st->w->err == EXTRACT_OK)
        st->w->err = rc;
}

static unsigned tag_of(struct state *st, const xmlChar *name)
{
    size_t slot = ((uintptr_t)name >> 3) & 63;
    struct cache_entry *c = &st->cache[slot];
    if (c->name == name)
        return c->tag;
    unsigned t = tag_lookup_slow((const char *)name);
    c->name = name;
    c->tag = t;
    return t;
}

/* Does a start with the lower-case prefix p, in any case? */
static int ascii_nprefix(const char *a, const char *p)
{
    for (; *p; a++, p++) {
        int x = (*a >= 'A' && *a <= 'Z') ? *a + 32 : *a;
        if (x != *p)
            return 0;
    }
    return 1;
}

static int ascii_ieq(const char *a, const char *b)
{
    for (; *a && *b; a++, b++) {
        int x = (*a >= 'A' && *a <= 'Z') ? *a + 32 : *a;
        if (x != *b)
            return 0;
    }
    return *a == *b;
}

/* HTML's ASCII white space (the class attribute's word separators). */
static int html_space(char c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* Is the first white-space separated word of v (any case) w? */
/* Whether element i or an ancestor is sectioning content (<section>, <article>, <aside>,
 * <nav>) or <main>: a <header> there is that section's heading, not the page's banner
 * (HTML-AAM maps <header> to role=banner only outside them). */
static int in_section(const struct ex_walk *w, uint32_t i)
{
    for (; i != EX_NONE; i = w->elems[i].parent) {
        unsigned t = w->elems[i].tag;
        if (t == T_section || t == T_article || t == T_aside || t == T_nav || t == T_main)
            return 1;
    }
    return 0;
}

static int first_word_is(const char *v, const char *w)
{
    while (html_space(*v))
        v++;
    size_t n = strlen(w);
    for (size_t i = 0; i < n; i++) {
        int x = (v[i] >= 'A' && v[i] <= 'Z') ? v[i] + 32 : v[i];
        if (x != w[i])
            return 0;
    }
    return v[n] == '\0' || html_space(v[n]);
}

/* Is the first word of v one of names[0..n)? */
static int first_word_in(const char *v, const char *const *names, size_t n)
{
    for (size_t i = 0; i < n; i++)
        if (first_word_is(v, names[i]))
            return 1;
    return 0;
}

/* ---- growing the arrays ---- */

static int grow(void **p, size_t *cap, size_t n, size_t size, size_t max)
{
    if (n < *cap)
        return 0;
    size_t nc = *cap ? *cap * 2 : 64;
    if (nc > max)
        nc = max;
    if (n >= nc)
        return -1;
    void *q = realloc(*p, nc * size);
    if (!q)
        return -2;
    *p = q;
    *cap = nc;
    return 0;
}

/* Caps on the arrays: never more entries than the input has bytes (plus slack). */
static size_t array_max(const struct state *st)
{
    return st->w->text.max / 2 + 64;
}

/* ---- blocks ---- */

/* The key an element's class_hash holds for a class attribute whose lower-case form
 * hashes (ex_fnv1a) to h; never 0 (0: no class). */
static uint32_t class_key(uint64_t h)
{
    return (uint32_t)(h >> 32) | 1;
}

/* 1 when element e is Doxygen's page title, <div class="headertitle"><div
 * class="title">: the page's name, though in no heading element (extract_doc_heading). */
static int doxygen_title(const struct ex_walk *w, uint32_t e)
{
    uint32_t p = w->elems[e].parent;
    static const char title[] = "title", headertitle[] = "headertitle";
    return w->elems[e].class_hash == class_key(ex_fnv1a(title, sizeof title - 1)) && p != EX_NONE &&
           w->elems[p].tag == T_div &&
           w->elems[p].class_hash == class_key(ex_fnv1a(headertitle, sizeof headertitle - 1));
}

static void flush_block(struct state *st)
{
    struct ex_walk *w = st->w;
    size_t len = w->text.len - st->blk_off;
    /* trim a trailing newline/space */
    while (len > 0 &&
           (w->text.p[st->blk_off + len - 1] == ' ' || w->text.p[st->blk_off + len - 1] == '\n'))
        len--;
    if (len == 0 || st->blk_chars == 0) {
        w->text.len = st->blk_off;
        goto reset;
    }
    int r =
        grow((void **)&w->blocks, &w->cap_blocks, w->n_blocks, sizeof *w->blocks, array_max(st));
    if (r != 0) {
        fail(st, r == -1 ? EXTRACT_ETOOLARGE : EXTRACT_ENOMEM);
        w->text.len = st->blk_off;
        goto reset;
    }
    struct ex_block *b = &w->blocks[w->n_blocks++];
    memset(b, 0, sizeof *b);
    b->off = (uint32_t)st->blk_off;
    b->len = (uint32_t)len;
    b->elem = st->cur_elem;
    b->chars = st->blk_chars;
    b->link_chars = st->blk_link_chars;
    b->words = st->blk_words;
    char last = w->text.p[st->blk_off + len - 1];
    b->stops = (uint16_t)(st->blk_stops + (last == '.' || last == '!' || last == '?'));
    if (st->blk_stops > 65535)
        b->stops = 65535;
    b->commas = (uint16_t)(st->blk_commas > 65535 ? 65535 : st->blk_commas);
    if (st->cur_elem != EX_NONE) {
        unsigned t = w->elems[st->cur_elem].tag;
        if (t >= T_h1 && t <= T_h6) {
            b->flags |= EX_B_HEADING;
            b->heading = (uint8_t)(t - T_h1 + 1);
        } else if (t == T_li || t == T_dd || t == T_dt) {
            b->flags |= EX_B_LI;
        } else if (t == T_td || t == T_th) {
            b->flags |= EX_B_CELL;
        } else if (t == T_div && doxygen_title(w, st->cur_elem)) {
            b->flags |= EX_B_TITLE;
        }
    }
    if (st->pre)
        b->flags |= EX_B_PRE;
    if (st->blk_permalink)
        b->flags |= EX_B_PERMALINK;
    if (st->blk_code_chars * 2 > st->blk_chars)
        b->flags |= EX_B_CODE;
    w->text.len = st->blk_off + len;
reset:
    st->blk_off = w->text.len;
    st->blk_chars = st->blk_link_chars = st->blk_words = st->blk_commas = st->blk_stops = 0;
    st->blk_code_chars = 0;
    st->blk_permalink = 0;
    st->blk_anchor = 0;
    st->pending_space = 0;
}

/* 1 when all eight bytes of x are printable ASCII (0x21..0x7E) other than ',' (exact
 * SWAR tests, as in "Bit Twiddling Hacks": hasless(x, 0x21), hasmore(x, 0x7E) and
 * haszero(x ^ ','), each true when some byte qualifies). */
static int word_plain(uint64_t x)
{
    const uint64_t ones = 0x0101010101010101ull, high = 0x8080808080808080ull;
    uint64_t lt21 = (x - ones * 0x21) & ~x & high;
    uint64_t gt7e = ((x + ones * (127 - 0x7E)) | x) & high;
    uint64_t y = x ^ (ones * ',');
    uint64_t comma = (y - ones) & ~y & high;
    return (lt21 | gt7e | comma) == 0;
}

/* Appends text to the pending block: white space collapsed (kept inside <pre>). */
static void add_text(struct state *st, const char *s, size_t n)
{
    struct ex_walk *w = st->w;
    /* room for n + 1 bytes and the NUL (ex_buf_reserve's own test, without the call
     * when there is room, as there nearly always is once the buffer has grown) */
    if (w->text.cap - w->text.len < n + 2) {
        enum extract_code rc = ex_buf_reserve(&w->text, n + 1);
        if (rc != EXTRACT_OK) {
            fail(st, rc);
            return;
        }
    }
    char *o = w->text.p + w->text.len;
    char *start = w->text.p + st->blk_off;
    uint32_t chars = 0, words = 0, commas = 0, stops = 0;
    int space = st->pending_space;
    if (st->pre) {
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == '\r' || (c == '\n' && o == start))
                continue; /* leading newlines of a <pre> are not content (HTML) */
            if (c == '\t' || c == '\f')
                c = ' ';
            if (c == ' ' || c == '\n') {
                space = 1;
            } else {
                if ((c & 0xC0) != 0x80 && space)
                    words++;
                space = 0;
                if (c == ',')
                    commas++;
            }
            if ((c & 0xC0) != 0x80)
                chars++;
            *o++ = (char)c;
        }
    } else {
        for (size_t i = 0; i < n; i++) {
            unsigned char c = (unsigned char)s[i];
            if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f') {
                space = 1;
                continue;
            }
            if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0xA0) {
                space = 1;
                i++;
                continue;
            }
            if (space) {
                space = 0;
                if (o > start && o[-1] != '\n') {
                    if (o[-1] == '.' || o[-1] == '!' || o[-1] == '?')
                        stops++;
                    *o++ = ' ';
                    chars++;
                }
                words++;
            } else if (o == start) {
                words++;
            }
            if ((c & 0xC0) != 0x80)
                chars++;
            if (c == ',')
                commas++;
            *o++ = (char)c;
            /* the rest of the word: a printable ASCII byte other than ',' right after a
             * character only adds itself and one to chars (space is 0, o > start); eight
             * such bytes at a time while there are (word_plain), then one at a time */
            while (i + 8 < n) {
                uint64_t x;
                memcpy(&x, s + i + 1, 8);
                if (!word_plain(x))
                    break;
                memcpy(o, &x, 8);
                o += 8;
                i += 8;
                chars += 8;
            }
            while (i + 1 < n && (unsigned char)s[i + 1] > ' ' && (unsigned char)s[i + 1] < 0x7F &&
                   s[i + 1] != ',') {
                *o++ = s[++i];
                chars++;
            }
        }
    }
    st->pending_space = space;
    w->text.len = (size_t)(o - w->text.p);
    st->blk_chars += chars;
    st->blk_words += words;
    st->blk_commas += commas;
    st->blk_stops += stops;
    if (st->code)
        st->blk_code_chars += chars;
    if (st->link_open && !st->link_self && !st->link_code)
        st->blk_link_chars += chars;
    else if (st->link_open && chars)
        st->blk_permalink = 1;
}

/* A newline in the pending block (<br>). */
static void add_newline(struct state *st)
{
    struct ex_walk *w = st->w;
    if (w->text.len == st->blk_off)
        return;
    if (ex_buf_reserve(&w->text, 2) != EXTRACT_OK) {
        fail(st, EXTRACT_ENOMEM);
        return;
    }
    char *p = w->text.p;
    size_t n = w->text.len;
    while (n > st->blk_off && p[n - 1] == ' ')
        n--;
    /* at most one empty line in a row */
    if (n >= st->blk_off + 2 && p[n - 1] == '\n' && p[n - 2] == '\n') {
        w->text.len = n;
        return;
    }
    if (n > st->blk_off && p[n - 1] != '\n' &&
        (p[n - 1] == '.' || p[n - 1] == '!' || p[n - 1] == '?'))
        st->blk_stops++;
    p[n++] = '\n';
    w->text.len = n;
    st->pending_space = 0;
}

/* Appends collapsed text to a small capped buffer (title, anchor); cuts at a character. */
static void add_small(struct state *st, struct ex_buf *b, int *space, const char *s, size_t n,
                      size_t max)
{
    if (b->len + 2 > max)
        return; /* full: the rest is dropped (documented cap) */
    /* at most: a pending space, n bytes, the NUL */
    size_t want = n + 2 < max - b->len ? n + 2 : max - b->len;
    if (ex_buf_reserve(b, want) != EXTRACT_OK) {
        fail(st, EXTRACT_ENOMEM);
        return;
    }
    char *o = b->p + b->len;
    const char *end = b->p + b->len + want; /* o stays below: room for the NUL */
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f') {
            *space = 1;
            continue;
        }
        if (c == 0xC2 && i + 1 < n && (unsigned char)s[i + 1] == 0xA0) {
            *space = 1;
            i++;
            continue;
        }
        size_t k = 1;
        if (c >= 0xC0)
            k = c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : 2;
        if (i + k > n)
            k = n - i;
        int sp = *space && o > b->p;
        if (o + sp + k >= end)
            break; /* full: the rest is dropped, never half a character */
        if (sp)
            *o++ = ' ';
        *space = 0;
        if (k == 1) {
            /* this byte and the printable ASCII ones after it, while they fit */
            *o++ = (char)c;
            while (i + 1 < n && (unsigned char)s[i + 1] > ' ' && (unsigned char)s[i + 1] < 0x7F &&
                   o + 1 < end)
                *o++ = s[++i];
            continue;
        }
        for (size_t j = 0; j < k; j++)
            o[j] = s[i + j];
        o += k;
        i += k - 1;
    }
    b->len = (size_t)(o - b->p);
    b->p[b->len] = '\0';
}

/* ---- attributes ---- */

struct hint {
    const char *pat;
    int8_t unlikely; /* readability's unlikelyCandidates (and a few more) */
    int8_t weight;   /* -1 negative, +1 positive class weight */
};

/* Substrings of the lower-cased class and id (readability's lists, extended). Readability's
 * "remark" is listed with no effect: "Remarks" is a section of every .NET API page (the
 * <remarks> of the XML documentation comments, in a div#remarksSection), never
 * boilerplate. */
static const struct hint hints[] = {
    {"-ad-", 1, -1},        {"ad-break", 1, 0},
    {"author-box", 1, 0},   {"authorbox", 1, 0},
    {"author-info", 1, 0},  {"author-bio", 1, 0},
    {"authorbio", 1, 0},    {"about-author", 1, 0},
    {"author-desc", 1, 0},  {"author-container", 1, 0},
    {"agegate", 1, 0},      {"ai2html", 1, 0},
    {"banner", 1, -1},      {"breadcrumb", 1, 0},
    {"combx", 1, -1},       {"comment", 0, 0},
    {"community", 1, 0},    {"consent", 1, 0},
    {"cookie", 1, 0},       {"cover-wrap", 1, 0},
    {"disqus", 1, 0},       {"extra", 1, 0},
    {"footer", 1, -1},      {"gdpr", 1, -1},
    {"header", 1, 0},       {"legends", 1, 0},
    {"menu", 1, 0},         {"navbar", 1, 0},
    {"navigation", 1, 0},   {"newsletter", 1, 0},
    {"outbrain", 1, -1},    {"pager", 1, 0},
    {"pagination", 1, 0},   {"popup", 1, 0},
    {"promo", 1, -1},       {"related", 1, -1},
    {"remark", 0, 0},       {"replies", 1, 0},
    {"respond", 1, 0},      {"rss", 1, 0},
    {"share", 1, -1},       {"sharing", 1, 0},
    {"shoutbox", 1, -1},    {"sidebar", 1, -1},
    {"skyscraper", 1, -1},  {"social", 1, 0},
    {"sponsor", 1, -1},     {"subscribe", 1, 0},
    {"supplemental", 1, 0}, {"tagline", 1, 0},
    {"taboola", 1, 0},      {"trackback", 1, 0},
    {"yom-remote", 1, 0},   {"masthead", 1, -1},
    {"com-", 0, -1},        {"contact", 0, -1},
    {"foot", 0, -1},        {"footnote", 0, -1},
    {"hidden", 0, -1},      {"media", 0, -1},
    {"meta", 0, -1},        {"scroll", 0, -1},
    {"shopping", 0, -1},    {"tags", 0, -1},
    {"tool", 0, -1},        {"widget", 0, -1},
    {"article", 0, 1},      {"body", 0, 1},
    {"content", 0, 1},      {"entry", 0, 1},
    {"hentry", 0, 1},       {"h-entry", 0, 1},
    {"main", 0, 1},         {"page", 0, 1},
    {"post", 0, 1},         {"text", 0, 1},
    {"blog", 0, 1},         {"story", 0, 1},
};

/* readability's okMaybeItsACandidate: these keep an "unlikely" element. */
static const char *const maybe[] = {"and",     "article", "body",  "column",
                                    "content", "main",    "shadow"};

#define N_HINTS (sizeof hints / sizeof hints[0])
_Static_assert(N_HINTS < 256, "hint indices are bytes");

/* The hints grouped by the first byte of their pattern (hint_by_first[hint_first[c] ..
 * hint_first[c + 1]) are the indices into hints[] of those starting with c), built once. */
static uint8_t hint_first[257];
static uint8_t hint_by_first[N_HINTS];
static uint8_t hint_len[N_HINTS];
static uint32_t hint_neg_bit[N_HINTS]; /* a negative hint's bit of ex_elem.neg_words, else 0 */
static pthread_once_t hints_once = PTHREAD_ONCE_INIT;
/* the bits of ex_elem.neg_words past the negative patterns of hints[] */
#define NEG_WORD_NAV (1u << 30)  /* the whole words nav*, ad, ads, advert* */
#define NEG_WORD_MENU (1u << 31) /* the main menu */

static void hints_init(void)
{
    unsigned count[256] = {0};
    unsigned neg = 0;
    for (size_t i = 0; i < N_HINTS; i++) {
        count[(unsigned char)hints[i].pat[0]]++;
        hint_len[i] = (uint8_t)strlen(hints[i].pat);
        if (hints[i].weight < 0)
            hint_neg_bit[i] = 1u << (neg < 29 ? neg++ : 29); /* 26 of them today */
    }
    unsigned at = 0;
    for (unsigned c = 0; c < 256; c++) {
        hint_first[c] = (uint8_t)at;
        at += count[c];
    }
    hint_first[256] = (uint8_t)at;
    unsigned fill[256];
    for (unsigned c = 0; c < 256; c++)
        fill[c] = hint_first[c];
    for (size_t i = 0; i < N_HINTS; i++)
        hint_by_first[fill[(unsigned char)hints[i].pat[0]]++] = (uint8_t)i;
}

/* What the class and id hints say of an element (bits of class_memo.unlikely). */
enum {
    HINT_UNLIKELY = 1u << 0,  /* readability's unlikelyCandidates (and a few more) */
    HINT_COMMENT = 1u << 1,   /* a comment section */
    HINT_HIDING = 1u << 2,    /* a CSS hiding class (hiding_class) */
    HINT_GENERATOR = 1u << 3, /* a documentation generator's content area (generator_area) */
    HINT_CHROME = 1u << 4,    /* a theme's chrome inside the content area (area_chrome) */
    HINT_BANNER = 1u << 5,    /* a generator's banner above every page (Doxygen's titlearea) */
};
/* readability's class weight: -25 for a negative hint, +25 for a positive one; the same
 * for landmarks (role=main, <article> +25; <nav>, <aside>, <footer>, navigation roles -25) */
#define HINT_WEIGHT 25

/* Hint weight, unlikely flag (HINT_UNLIKELY; HINT_COMMENT: a comment section) and negative
 * words (*neg_words: one bit a word, boiler.c's site words) from one lower-cased class or
 * id value. HOW IT WORKS: a hint applies when its pattern occurs anywhere in
 * v; instead of one strstr() per pattern (about 90 calls for every id, most of them on short
 * values), v is scanned once and at each byte only the patterns starting with that byte are
 * compared. The flags are ORs over the hints found, so the order is immaterial. */
static void class_hints(const char *v, int *weight, int *unlikely, uint32_t *neg_words)
{
    int neg = 0, pos = 0, unl = 0, comment = 0;
    uint32_t words = 0;
    pthread_once(&hints_once, hints_init);
    for (const char *p = v; *p; p++) {
        unsigned c = (unsigned char)*p;
        for (unsigned k = hint_first[c]; k < hint_first[c + 1]; k++) {
            unsigned h = hint_by_first[k];
            if (strncmp(p, hints[h].pat, hint_len[h]) != 0)
                continue;
            if (hints[h].unlikely)
                unl = 1;
            if (hints[h].weight < 0) {
                neg = 1;
                words |= hint_neg_bit[h];
            } else if (hints[h].weight > 0)
                pos = 1;
        }
        if ((c == 'c' && strncmp(p, "comment", 7) == 0) ||
            (c == 'd' && strncmp(p, "disqus", 6) == 0))
            comment = 1;
    }
    /* whole words: nav*, ad, ads, advert* */
    for (const char *p = v; *p;) {
        while (*p && !((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9')))
            p++;
        const char *s = p;
        while ((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9'))
            p++;
        size_t n = (size_t)(p - s);
        if ((n >= 3 && memcmp(s, "nav", 3) == 0) || (n == 2 && memcmp(s, "ad", 2) == 0) ||
            (n == 3 && memcmp(s, "ads", 3) == 0) || (n >= 6 && memcmp(s, "advert", 6) == 0)) {
            unl = 1;
            neg = 1;
            words |= NEG_WORD_NAV;
        }
    }
    /* "main" rescues an unlikely element (readability), but not the main menu */
    int menu = strstr(v, "mainmenu") || strstr(v, "main-menu") || strstr(v, "mainnav") ||
               strstr(v, "main-nav");
    if (menu) {
        unl = neg = 1;
        words |= NEG_WORD_MENU;
    }
    if (unl && !menu)
        for (size_t i = 0; i < sizeof maybe / sizeof maybe[0]; i++)
            if (strstr(v, maybe[i])) {
                unl = 0;
                break;
            }
    /* comments are content (they count as text), but never the best candidate's
     * positive hint: "comment-content", "comment-body" say comment first */
    if (comment)
        pos = 0;
    *weight += (neg ? -HINT_WEIGHT : 0) + (pos ? HINT_WEIGHT : 0);
    *neg_words |= words;
    if (unl)
        *unlikely |= HINT_UNLIKELY;
    if (comment)
        *unlikely |= HINT_COMMENT; /* tells the caller: a comment section */
}

/*
 * The content area of the documentation generators (whole class names, the first word
 * of the class attribute), where the name says so on any page: DocBook XSL's sect1 and
 * refentry (its other element names, "chapter", "article", "index", are common class
 * names elsewhere: generator_layout() takes them on DocBook pages only), Texinfo's
 * *-level-extent, MkDocs Material's md-content__inner, Docsy's td-content, odoc's (OCaml)
 * header.odoc-preamble (the title and the module's introduction) and div.odoc-content, Tcl
 * doctools' div.doctools (the whole manual page: title, name, table of contents, synopsis,
 * sections; tcllib's 429 pages). (Sphinx,
 * MkDocs, Hugo and rustdoc say role=main, <main> or <article>, which need no list.)
 * boiler.c widens the main content to the outermost of them (step 3b).
 */
static int generator_area(const char *v)
{
    static const char *const names[] = {"chapter-level-extent",
                                        "doctools",
                                        "md-content--inner",
                                        "odoc-content",
                                        "odoc-preamble",
                                        "refentry",
                                        "sect1",
                                        "section-level-extent",
                                        "td-content",
                                        "unnumbered-level-extent"};
    return first_word_in(v, names, sizeof names / sizeof names[0]);
}

/*
 * The page layout of generators that say who they are in <meta name="generator">, by
 * the lower-cased id or class of an element: AsciiDoc and Asciidoctor put the title and
 * the NAME section in div#header and the rest in div#content (div#footer is the date of
 * the build); Doxygen puts the title in div.header and the rest in div.contents; DocBook
 * XSL and GTK-Doc name the div after the DocBook element (chapter, article, book...); Javadoc
 * (JDK 9+) puts title, declaration and summaries in <main>, older ones in div.header and
 * div.contentContainer; Haddock puts the module's header, table of contents, description,
 * synopsis and interface in div#content (the package's name and links are div#package-header,
 * the build line div#footer); MediaWiki's skins (MonoBook, Vector: div#content.mw-body) put the
 * page's title (h1#firstHeading) and its text (div#bodyContent > div#mw-content-text) in
 * div#content, the site's menus (div#mw-head, div#mw-panel, div#column-one) and footer
 * outside it. A wiki's own navigation templates inside the text (cppreference's div.t-navbar)
 * stay out as any menu does: the area keeps its visible blocks only. pydoctor (the Python API
 * generator of Twisted) puts the object's title, declaration, docstring, summary tables and
 * every method's and attribute's entry in div#main, the site's menu in nav.navbar and the
 * object's list of members in nav.sidebar; its hidden search help is inside div#main.
 */
static int generator_layout(enum generator g, unsigned tag, const char *low)
{
    if (g == GEN_JAVADOC)
        return tag == T_main || (tag == T_div && (first_word_is(low, "header") ||
                                                  first_word_is(low, "contentcontainer")));
    if (tag != T_div)
        return 0;
    if (g == GEN_HADDOCK)
        return strcmp(low, "content") == 0;
    if (g == GEN_MEDIAWIKI)
        return strcmp(low, "content") == 0 || first_word_is(low, "mw-body");
    if (g == GEN_PYDOCTOR)
        return strcmp(low, "main") == 0;
    if (g == GEN_ASCIIDOC)
        return strcmp(low, "header") == 0 || strcmp(low, "content") == 0;
    if (g == GEN_DOXYGEN)
        return first_word_is(low, "header") || first_word_is(low, "contents");
    if (g == GEN_DOCBOOK) {
        /* the DocBook element names that are also common class names on other sites
         * ("article", "index", "book"): only on pages DocBook XSL or GTK-Doc made */
        static const char *const names[] = {"appendix", "article",   "bibliography", "book",
                                            "chapter",  "glossary",  "index",        "part",
                                            "preface",  "reference", "set"};
        return first_word_in(low, names, sizeof names / sizeof names[0]);
    }
    return 0;
}

/* Is w one of the white-space separated words of v (ASCII case-insensitive)? */
static int has_word(const char *v, const char *w)
{
    for (const char *p = v; *p;) {
        while (html_space(*p))
            p++;
        if (first_word_is(p, w))
            return 1;
        while (*p && !html_space(*p))
            p++;
    }
    return 0;
}

/*
 * Chrome that documentation themes put inside their content area (whole words of the
 * lower-cased class or id): Bootstrap's print-hidden widgets ("was this page
 * helpful?"), last-modified and edit-this-page lines, feedback forms.
 */
static int area_chrome(const char *low)
{
    static const char *const words[] = {"d-print-none", "noprint",       "no-print",
                                        "hidden-print", "feedback",      "td-page-meta--lastmod",
                                        "lastmod",      "last-modified", "edit-this-page",
                                        "edit-page",    "page-feedback"};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
        if (has_word(low, words[i]))
            return 1;
    return 0;
}

/*
 * MediaWiki's own lines around the text inside div#content (ids of its skins, lower-cased,
 * "_" spelt "-"): the tagline "From <site>" (#siteSub, hidden on screen by the skin), the
 * subpage trail (#contentSub), the skip links (#jump-to-nav), the categories box (#catlinks)
 * and the print footer "Retrieved from ..." (.printfooter, a class).
 */
static int mediawiki_chrome(const char *low)
{
    static const char *const names[] = {"catlinks", "contentsub", "jump-to-nav", "printfooter",
                                        "sitesub"};
    return first_word_in(low, names, sizeof names / sizeof names[0]);
}

/* A class that CSS frameworks use to hide an element (whole class names only:
 * "hidden-xs" hides on small screens only and is not one). */
static int hiding_class(const char *v)
{
    static const char *const names[] = {
        "hidden", "hide",      "invisible",       "sr-only",
        "d-none", "is-hidden", "visually-hidden", "screen-reader-text"};
    for (const char *p = v; *p;) {
        while (html_space(*p))
            p++;
        const char *s = p;
        while (*p && !html_space(*p))
            p++;
        size_t n = (size_t)(p - s);
        for (size_t i = 0; n && i < sizeof names / sizeof names[0]; i++)
            if (strlen(names[i]) == n && memcmp(s, names[i], n) == 0)
                return 1;
        /* "hiddenbox", "hiddencontent": hidden + letters, no dash */
        if (n > 6 && memcmp(s, "hidden", 6) == 0) {
            size_t k = 6;
            while (k < n && s[k] >= 'a' && s[k] <= 'z')
                k++;
            if (k == n)
                return 1;
        }
    }
    return 0;
}

/* Lower-cases src into dst (cap bytes) and spells "_" as "-" (class names use both). */
static size_t lower_copy(char *dst, size_t cap, const char *src)
{
    size_t i = 0;
    for (; src[i] && i + 1 < cap; i++) {
        char c = src[i];
        dst[i] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c == '_' ? '-' : c;
    }
    dst[i] = '\0';
    return i;
}

/* style="...display:none..." or visibility:hidden */
static int style_hidden(const char *v)
{
    char buf[256];
    size_t n = 0;
    for (const char *p = v; *p && n + 1 < sizeof buf; p++) {
        char c = *p;
        if (c == ' ' || c == '\t' || c == '\n' || c == '\r')
            continue;
        buf[n++] = (c >= 'A' && c <= 'Z') ? (char)(c + 32) : c;
    }
    buf[n] = '\0';
    return strstr(buf, "display:none") != NULL || strstr(buf, "visibility:hidden") != NULL;
}

static int rel_has(const char *rel, const char *word)
{
    size_t n = strlen(word);
    for (const char *p = rel; *p;) {
        while (html_space(*p) || *p == ',')
            p++;
        const char *s = p;
        while (*p && !(html_space(*p) || *p == ','))
            p++;
        if ((size_t)(p - s) == n) {
            size_t i = 0;
            while (i < n && ((s[i] >= 'A' && s[i] <= 'Z') ? s[i] + 32 : s[i]) == word[i])
                i++;
            if (i == n)
                return 1;
        }
    }
    return 0;
}

/* Stores s (raw) in w->strs; returns its offset, or EX_NONE on failure. */
static uint32_t store(struct state *st, const char *s, size_t n)
{
    struct ex_walk *w = st->w;
    size_t off = w->strs.len;
    enum extract_code rc = ex_buf_add(&w->strs, s, n);
    if (rc == EXTRACT_OK)
        rc = ex_buf_add(&w->strs, "", 1);
    if (rc != EXTRACT_OK) {
        fail(st, rc);
        return EX_NONE;
    }
    return (uint32_t)off;
}

static void set_lang(char out[16], const char *v)
{
    /* primary subtag, lower-cased, letters only: "en-US" -> "en" */
    size_t i = 0;
    while (*v == ' ')
        v++;
    for (; i < 8 && v[i]; i++) {
        char c = v[i];
        if (c >= 'A' && c <= 'Z')
            c = (char)(c + 32);
        if (c < 'a' || c > 'z')
            break;
        out[i] = c;
    }
    if (i < 2 || i > 3 ||
        (v[i] && v[i] != '-' && v[i] != '_' && v[i] != ',' && v[i] != ' ' && v[i] != ';'))
        i = 0;
    out[i] = '\0';
}

static void meta_element(struct state *st, const xmlChar **atts)
{
    const char *name = NULL, *equiv = NULL, *content = NULL;
    for (size_t i = 0; atts && atts[i]; i += 2) {
        const char *a = (const char *)atts[i], *v = (const char *)atts[i + 1];
        if (!v)
            continue;
        if (strcmp(a, "name") == 0)
            name = v;
        else if (strcmp(a, "http-equiv") == 0)
            equiv = v;
        else if (strcmp(a, "content") == 0)
            content = v;
    }
    if (!content)
        return;
    if (name && ascii_ieq(name, "robots")) {
        if (rel_has(content, "noindex") || rel_has(content, "none"))
            st->w->noindex = 1;
        if (rel_has(content, "nofollow") || rel_has(content, "none"))
            st->w->nofollow = 1;
    } else if (name && ascii_ieq(name, "generator")) {
        /* AsciiDoc 10.2.0, Asciidoctor 2.0.18, Doxygen 1.9.4 */
        if (first_word_is(content, "asciidoc") || first_word_is(content, "asciidoctor"))
            st->generator = GEN_ASCIIDOC;
        else if (first_word_is(content, "doxygen"))
            st->generator = GEN_DOXYGEN;
        else if (ascii_nprefix(content, "javadoc/"))
            st->generator = GEN_JAVADOC; /* "javadoc/ClassWriterImpl" */
        else if (ascii_nprefix(content, "docbook xsl") || ascii_nprefix(content, "gtk-doc"))
            st->generator = GEN_DOCBOOK; /* "DocBook XSL Stylesheets V1.79.2", "GTK-Doc V1.33" */
        else if (first_word_is(content, "mediawiki"))
            st->generator = GEN_MEDIAWIKI; /* "MediaWiki 1.21.2" */
        else if (first_word_is(content, "pydoctor"))
            st->generator = GEN_PYDOCTOR; /* "pydoctor 22.9.1" */
    } else if (equiv && ascii_ieq(equiv, "content-language") && !st->w->meta_lang[0]) {
        set_lang(st->w->meta_lang, content);
    }
}

/* ---- SAX callbacks ---- */

/* The attributes on_start reads, from any element. */
struct attrs {
    const char *cls, *id, *role, *href, *rel, *itemprop, *alt, *name;
    int hidden; /* hidden, aria-hidden=true, an inline style that hides, a closed <dialog> */
};

/* Reads the attributes of an element with tag into a (and <html lang> into w->lang). */
static void read_attrs(struct state *st, unsigned tag, const xmlChar **atts, struct attrs *at)
{
    struct ex_walk *w = st->w;
    int open_attr = 0, style_hide = 0;
    memset(at, 0, sizeof *at);
    for (size_t i = 0; atts && atts[i]; i += 2) {
        const char *a = (const char *)atts[i], *v = (const char *)atts[i + 1];
        switch (a[0]) {
        case 'a':
            if (strcmp(a, "aria-hidden") == 0 && v && ascii_ieq(v, "true"))
                at->hidden = 1;
            else if (strcmp(a, "alt") == 0)
                at->alt = v;
            break;
        case 'c':
            if (strcmp(a, "class") == 0)
                at->cls = v;
            break;
        case 'h':
            if (strcmp(a, "hidden") == 0)
                at->hidden = 1;
            else if (strcmp(a, "href") == 0)
                at->href = v;
            break;
        case 'i':
            if (strcmp(a, "id") == 0)
                at->id = v;
            else if (strcmp(a, "itemprop") == 0)
                at->itemprop = v;
            break;
        case 'l':
            if (tag == T_html && strcmp(a, "lang") == 0 && v && !w->lang[0])
                set_lang(w->lang, v);
            break;
        case 'n':
            if (strcmp(a, "name") == 0)
                at->name = v;
            break;
        case 'o':
            if (strcmp(a, "open") == 0)
                open_attr = 1;
            break;
        case 'r':
            if (strcmp(a, "role") == 0)
                at->role = v;
            else if (strcmp(a, "rel") == 0)
                at->rel = v;
            break;
        case 's':
            if (strcmp(a, "style") == 0 && v && style_hidden(v))
                at->hidden = style_hide = 1;
            break;
        case 'x':
            if (tag == T_html && strcmp(a, "xml:lang") == 0 && v && !w->lang[0])
                set_lang(w->lang, v);
            break;
        default:
            break;
        }
    }
    if (tag == T_dialog && !open_attr)
        at->hidden = 1;
    if (tag == T_span && at->cls &&
        (has_word(at->cls, "section-number") || has_word(at->cls, "header-section-number") ||
         has_word(at->cls, "lineno") || has_word(at->cls, "linenos")))
        at->hidden = 1;
    /* a tab panel behind a tab that is not selected (sphinx-tabs: role=tabpanel with
     * hidden="true" on every panel but the first, the DataFrame, Array and Bag versions of
     * one example) is the page's text a reader opens with a click: the hidden attribute
     * there is the tab list's state, not hidden content (an inline style that hides still
     * hides it) */
    if (at->hidden && !style_hide && at->role && ascii_ieq(at->role, "tabpanel"))
        at->hidden = 0;
    if (tag == T_html || tag == T_body)
        at->hidden = 0; /* pages hide <body> until a script runs; we run none */
}

/* The metadata elements: <title>, <meta>, <base href>, <link rel=canonical>. */
static void metadata_element(struct state *st, struct open *o, unsigned tag, const struct attrs *at,
                             const xmlChar **atts)
{
    struct ex_walk *w = st->w;
    switch (tag) {
    case T_title:
        if (!st->title_done && !st->hidden) {
            st->in_title = 1;
            o->flags |= O_TITLE;
        }
        break;
    case T_meta:
        meta_element(st, atts);
        break;
    case T_base:
        if (at->href && !w->have_base) {
            w->base_href = store(st, at->href, strlen(at->href));
            w->base_len = (uint32_t)strlen(at->href);
            w->have_base = w->base_href != EX_NONE;
        }
        break;
    case T_link:
        if (at->href && at->rel && !w->have_canonical && rel_has(at->rel, "canonical")) {
            w->canon_href = store(st, at->href, strlen(at->href));
            w->canon_len = (uint32_t)strlen(at->href);
            w->have_canonical = w->canon_href != EX_NONE;
        }
        break;
    default:
        break;
    }
}

/* The hints of the class and id attributes of element e (tag): adds to *weight, sets
 * HINT_* bits in *unlikely, *notes for an <aside> of footnotes, and e->class_hash. The
 * class's hints are memoised in st->memo (pages repeat their classes). */
static void class_id_hints(struct state *st, struct ex_elem *e, unsigned tag,
                           const struct attrs *at, int *weight, int *unlikely, int *notes)
{
    char low[256];
    if (at->cls && *at->cls) {
        size_t len = lower_copy(low, sizeof low, at->cls);
        uint64_t h = ex_fnv1a(low, len);
        if (h == 0)
            h = 1;
        struct class_memo *m = &st->memo[h & 255];
        if (m->hash != h || m->len != len) {
            int wt = 0, un = 0;
            uint32_t nw = 0;
            class_hints(low, &wt, &un, &nw);
            if (hiding_class(low))
                un |= HINT_HIDING;
            if (generator_area(low))
                un |= HINT_GENERATOR;
            if (area_chrome(low))
                un |= HINT_CHROME;
            m->hash = h;
            m->len = len;
            m->weight = (int8_t)wt;
            m->unlikely = (uint8_t)un;
            m->neg_words = nw;
        }
        *weight += m->weight;
        e->neg_words |= m->neg_words;
        if (m->neg_words)
            e->neg_weight = (int8_t)(e->neg_weight - HINT_WEIGHT);
        *unlikely |= m->unlikely;
        /* Javadoc (1.2 to 8) and Groovydoc mark the current page's cell of their
         * navigation bar, above the title, "navBarCell1Rev": a page of the Javadoc layout
         * whether or not it says so in <meta name="generator"> (Groovydoc does not) */
        if (st->generator == GEN_OTHER && first_word_is(low, "navbarcell1rev"))
            st->generator = GEN_JAVADOC;
        if (st->generator != GEN_OTHER && generator_layout(st->generator, tag, low))
            *unlikely |= HINT_GENERATOR;
        if (st->generator == GEN_MEDIAWIKI && mediawiki_chrome(low))
            *unlikely |= HINT_CHROME;
        e->class_hash = class_key(h);
        if (tag == T_aside && strstr(low, "footnote"))
            *notes = 1;
    }
    if (at->id && *at->id) {
        lower_copy(low, sizeof low, at->id);
        uint32_t nw = 0;
        class_hints(low, weight, unlikely, &nw);
        e->neg_words |= nw;
        if (nw)
            e->neg_weight = (int8_t)(e->neg_weight - HINT_WEIGHT);
        if (strcmp(low, "author") == 0)
            *unlikely |= HINT_UNLIKELY; /* the author's box (a byline is a class, not an id) */
        /* Haddock writes no <meta name="generator">; its pages open with
         * div#package-header ("aeson-2.0.3.0: Fast JSON parsing and encoding") */
        if (st->generator == GEN_OTHER && tag == T_div && strcmp(low, "package-header") == 0)
            st->generator = GEN_HADDOCK;
        if (st->generator != GEN_OTHER && generator_layout(st->generator, tag, low))
            *unlikely |= HINT_GENERATOR;
        if (area_chrome(low) || (st->generator == GEN_MEDIAWIKI && mediawiki_chrome(low)))
            *unlikely |= HINT_CHROME;
        /* Haddock's index pages (doc-index-A.html ...) open their div#content with
         * div#alphabet, a link to every letter's page: the same 31 one-word lines on each,
         * which made the index of A and of P of one package (whose entries repeat the
         * same module names) near-duplicates */
        if (st->generator == GEN_HADDOCK && tag == T_div && strcmp(low, "alphabet") == 0)
            *unlikely |= HINT_CHROME;
        /* Doxygen's banner above the page, div#titlearea: the project's logo, name,
         * number and brief ("pangomm 2.46.3"), the same on every page of a release and
         * different in the next; on a page without a title of its own (an index of
         * members) boiler.c took its number for a dateline */
        if (st->generator == GEN_DOXYGEN && strcmp(low, "titlearea") == 0)
            *unlikely |= HINT_BANNER;
    }
}

/* The ARIA role of element e: sets *article for the main landmark, *boiler (and lowers
 * *weight) for the others, *notes for DPUB-ARIA notes. */
static void role_hints(struct ex_elem *e, const struct attrs *at, uint16_t inherit, int *article,
                       int *boiler, int *weight, int *notes)
{
    const char *role = at->role;
    if (ascii_ieq(role, "main") || ascii_ieq(role, "article")) {
        *article = 1;
        /* Sphinx (div.body) and its Read the Docs theme (div.document) */
        if (at->cls && (first_word_is(at->cls, "body") || first_word_is(at->cls, "document")))
            e->flags |= EX_E_AREA;
    } else if (ascii_ieq(role, "navigation") || ascii_ieq(role, "menu") ||
               ascii_ieq(role, "menubar") || ascii_ieq(role, "complementary") ||
               ascii_ieq(role, "contentinfo") || ascii_ieq(role, "banner") ||
               ascii_ieq(role, "search") || (ascii_ieq(role, "alert") && !(inherit & EX_E_AREA)) ||
               ascii_ieq(role, "alertdialog") || ascii_ieq(role, "dialog")) {
        *boiler = 1;
        *weight -= HINT_WEIGHT;
    } else if (ascii_ieq(role, "doc-footnote") || ascii_ieq(role, "doc-endnote") ||
               ascii_ieq(role, "doc-endnotes")) {
        *notes = 1; /* DPUB-ARIA: the document's own notes */
    }
}

/* pandoc's HTML5 template writes the document's title block (title, subtitle, author,
 * date) as <header id="title-block-header"> before the text, and Quarto keeps it: the
 * document's own heading, not a site's banner (Allegro 5's reference manual lost every
 * page's title). */
static int title_block(const struct attrs *at)
{
    return at->id && strcmp(at->id, "title-block-header") == 0;
}

/* Is "header" the only unlikely word of v (a class or id value)? */
static int only_header_unlikely(const char *v)
{
    char low[256];
    lower_copy(low, sizeof low, v);
    int found = 0;
    for (char *p = strstr(low, "header"); p; p = strstr(p + 6, "header")) {
        memset(p, '-', 6);
        found = 1;
    }
    int weight = 0, unlikely = 0;
    uint32_t words = 0;
    if (found)
        class_hints(low, &weight, &unlikely, &words);
    return found && !(unlikely & HINT_UNLIKELY);
}

/* A heading named a header (rustdoc's h4.code-header over each method, h2.section-header,
 * a theme's h1.page-header) is the header of its own section, not the page's banner:
 * "header" alone does not make it unlikely. A heading named after a menu, a sidebar or
 * a footer still is. */
static int heading_header(unsigned tag, const struct attrs *at)
{
    if (tag < T_h1 || tag > T_h6)
        return 0;
    const char *v[2] = {at->cls, at->id};
    int header = 0;
    for (int i = 0; i < 2; i++) {
        if (!v[i] || !*v[i])
            continue;
        if (only_header_unlikely(v[i])) {
            header = 1;
            continue;
        }
        char low[256];
        int weight = 0, unlikely = 0;
        uint32_t words = 0;
        lower_copy(low, sizeof low, v[i]);
        class_hints(low, &weight, &unlikely, &words);
        if ((unlikely & HINT_UNLIKELY) || (i == 1 && strcmp(low, "author") == 0))
            return 0;
    }
    return header;
}

/* Judges block element e (tag) from its attributes, tag and ancestors' marks (inherit):
 * its weight and its EX_E_* flags; may set at->hidden (a CSS hiding class). */
static void judge_element(struct state *st, struct ex_elem *e, unsigned tag, struct attrs *at,
                          uint16_t inherit)
{
    struct ex_walk *w = st->w;
    int weight = 0, unlikely = 0, notes = 0;
    class_id_hints(st, e, tag, at, &weight, &unlikely, &notes);
    if (unlikely & HINT_COMMENT)
        e->flags |= EX_E_COMMENT;
    if ((unlikely & HINT_HIDING) && tag != T_html && tag != T_body)
        at->hidden = 1;
    int area =
        ((unlikely & HINT_GENERATOR) && (tag == T_div || tag == T_main || tag == T_header)) ||
        (st->generator != GEN_OTHER && generator_layout(st->generator, tag, ""));
    if (area) {
        e->flags |= EX_E_AREA;
        unlikely = 0;
    }
    /* chrome that documentation themes put inside their content area: "was this
     * page helpful?", "last modified", "edit this page", print-hidden widgets */
    int chrome = (inherit & EX_E_AREA) && (unlikely & HINT_CHROME);
    /* docutils' "contents" directive, a local table of contents: <nav> since
     * docutils 0.18, div.contents.topic before (the same page of two releases must
     * come out the same) */
    if (at->cls && tag == T_div && has_word(at->cls, "contents") && has_word(at->cls, "topic"))
        chrome = 1;
    if (unlikely & HINT_BANNER)
        chrome = 1;
    unlikely &= HINT_UNLIKELY;
    if (tag == T_header && title_block(at))
        unlikely = 0; /* its id says "header" */
    if (unlikely && heading_header(tag, at))
        unlikely = 0;
    int article = 0, boiler = chrome;
    if (tag == T_article || tag == T_main)
        article = 1;
    if (at->role)
        role_hints(e, at, inherit, &article, &boiler, &weight, &notes);
    if (at->itemprop && (strstr(at->itemprop, "articleBody") || strstr(at->itemprop, "text")))
        article = 1;
    if (article) {
        weight += HINT_WEIGHT;
        unlikely = 0;
        boiler = 0;
    }
    /* an <aside> of footnotes is the document's own (docutils >= 0.18 writes them as
     * <aside class="footnote-list"> where it wrote <dl class="footnote"> before; the
     * DPUB-ARIA roles doc-footnote, doc-endnote(s) say the same) */
    if (tag == T_nav || (tag == T_aside && !notes) || tag == T_footer) {
        boiler = 1;
        weight -= HINT_WEIGHT;
    } else if (tag == T_header && !area && !(inherit & EX_E_ARTICLE) && !in_section(w, e->parent) &&
               !title_block(at)) {
        boiler = 1;
    }
    /* forms are comment, search and sign-up forms (unless one wraps the page, which
     * boiler.c notices) */
    if (tag == T_form)
        unlikely = 1;
    /* a positive hint (entry, post, content...) outweighs an unlikely one */
    if (weight > 0)
        unlikely = 0;
    if (tag == T_body || tag == T_html)
        unlikely = boiler = 0;
    /* readability does not judge by class inside tables; inside a documentation
     * generator's content area ids and classes are the document's own names (a
     * function called share, a module about cookies), not the site's chrome; but a
     * wiki's text is its editors' markup, whose templates name the wiki's navigation
     * as any site's chrome does (cppreference's div.t-navbar, Wikipedia's div.navbox):
     * unlikely there as anywhere (a short entry's retry and a stub's links still take
     * it in: boiler.c steps 9 and 10) */
    if ((inherit & EX_E_TABLE) || ((inherit & EX_E_AREA) && st->generator != GEN_MEDIAWIKI))
        unlikely = 0;
    if (boiler)
        e->flags |= EX_E_BOILER;
    if (unlikely)
        e->flags |= EX_E_UNLIKELY;
    if (article)
        e->flags |= EX_E_ARTICLE;
    if (weight > 0)
        e->flags |= EX_E_POSITIVE;
    if (tag == T_table)
        e->flags |= EX_E_TABLE;
    if (tag == T_ul || tag == T_ol || tag == T_dl || tag == T_menu)
        e->flags |= EX_E_LIST;
    /* docutils wrote a document's sections as div.section until 0.17 (Sphinx themes,
     * nimdoc and other docutils-style generators still do): a <section> by another name;
     * so does makeinfo's HTML (Texinfo 6.8), with div.subsection and div.subsubsection
     * inside, each named by its node ("Widgets", "Footnotes": not the site's chrome); so
     * does QDoc (Qt) with its "Detailed Description", div.descr, whose prose links every
     * class and function it names (0.3-0.4 of its characters): a section, never cleaned
     * as a link list */
    if (tag == T_div && at->cls &&
        (first_word_is(at->cls, "section") || first_word_is(at->cls, "subsection") ||
         first_word_is(at->cls, "subsubsection") || first_word_is(at->cls, "descr")))
        e->flags |= EX_E_SECTION;
    if (at->hidden)
        e->flags |= EX_E_HIDDEN;
    e->weight = (int16_t)weight;
}

/* A block element starts: ends the pending text block and pushes an ex_elem, judged by
 * judge_element. Returns 0, or -1 on failure (w->err is set). */
static int open_block(struct state *st, struct open *o, unsigned tag, struct attrs *at)
{
    struct ex_walk *w = st->w;
    flush_block(st);
    int r = grow((void **)&w->elems, &w->cap_elems, w->n_elems, sizeof *w->elems, array_max(st));
    if (r != 0) {
        fail(st, r == -1 ? EXTRACT_ETOOLARGE : EXTRACT_ENOMEM);
        return -1;
    }
    uint32_t idx = (uint32_t)w->n_elems++;
    struct ex_elem *e = &w->elems[idx];
    memset(e, 0, sizeof *e);
    e->parent = st->cur_elem;
    e->first_block = e->end_block = (uint32_t)w->n_blocks;
    e->end_elem = idx + 1;
    e->tag = (uint16_t)tag;
    e->depth = (uint16_t)(st->depth > 65535 ? 65535 : st->depth);
    uint16_t inherit = 0;
    if (st->cur_elem != EX_NONE)
        inherit =
            w->elems[st->cur_elem].flags & (EX_E_HIDDEN | EX_E_ARTICLE | EX_E_TABLE | EX_E_AREA);
    e->flags = inherit;
    judge_element(st, e, tag, at, inherit);
    st->cur_elem = idx;
    o->elem = idx;
    o->flags |= O_ELEM;
    if (tag == T_pre || tag == T_listing || tag == T_xmp || tag == T_plaintext) {
        o->flags |= O_PRE;
        st->pre++;
    }
    return 0;
}

static int hex_digit(char c)
{
    if (c >= '0' && c <= '9')
        return c - '0';
    if (c >= 'a' && c <= 'f')
        return c - 'a' + 10;
    if (c >= 'A' && c <= 'F')
        return c - 'A' + 10;
    return -1;
}

/* 64-bit FNV-1a of the percent-decoded bytes of s[0..n) (a URL fragment: the id it
 * names, as ex_fnv1a hashes an id attribute). */
static uint64_t fragment_hash(const char *s, size_t n)
{
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        int hi, lo;
        if (c == '%' && i + 2 < n && (hi = hex_digit(s[i + 1])) >= 0 &&
            (lo = hex_digit(s[i + 2])) >= 0) {
            c = (unsigned char)(hi * 16 + lo);
            i += 2;
        }
        h = (h ^ c) * 1099511628211ull;
    }
    return h;
}

/*
 * Is the link href, opening at the top of the stack, a permalink to its own definition
 * or section: its fragment names the id of an element it lies in (at most
 * SELF_LINK_LEVELS up, not <html>/<body>), with a <dt> or a heading between the two or
 * as that element (nimdoc's and rustdoc's <dt> of code whose name links to the <div id>
 * holding it, a heading linking to its section, Sphinx's "¶" after a signature)? Only
 * "#id" and "file#id" without a path or scheme (a page naming itself). The element, when
 * it is a block element, is marked EX_E_ANCHORED. A <dt> or heading is what tells a
 * definition from a menu's toggle (<a href="#menu"> inside nav#menu). A named anchor
 * (<a name> or <a id> without href) earlier in the same block is one too: HTML 4's way to
 * mark a definition, its name then linking to it (Scribble's signatures: <a name="(def.
 * _((lib._racket/list..rkt)._first))"></a> before (first lst), "first" a link to it).
 */
static int self_link(struct state *st, const char *href)
{
    const char *hash = strchr(href, '#');
    if (!hash || hash[1] == '\0')
        return 0;
    for (const char *p = href; p < hash; p++)
        if (*p == '/' || *p == ':' || *p == '?')
            return 0;
    uint64_t h = fragment_hash(hash + 1, strlen(hash + 1));
    if (st->blk_anchor != 0 && st->blk_anchor == h) {
        if (st->cur_elem != EX_NONE)
            st->w->elems[st->cur_elem].flags |= EX_E_ANCHORED;
        return 1;
    }
    int term = 0;
    for (unsigned k = 0; k < SELF_LINK_LEVELS && k < st->depth; k++) {
        const struct open *o = &st->stack[st->depth - 1 - k];
        if (o->tag == T_html || o->tag == T_body)
            break;
        if (o->tag == T_dt || (o->tag >= T_h1 && o->tag <= T_h6))
            term = 1;
        if (o->id_hash == h && term) {
            if (o->flags & O_ELEM)
                st->w->elems[o->elem].flags |= EX_E_ANCHORED;
            return 1;
        }
    }
    return 0;
}

/* Is the element (tag, attributes) code, whose links name the identifiers it uses (a
 * declaration's types, a signature's parameters), not places to go? <pre>, <code>,
 * <samp>, <kbd>, <tt> and <listing>/<xmp>, rustdoc's headers of declarations (class
 * code-header: "impl Parse for Option<Label>", each type a link) and QDoc's signature
 * headings (h3.fn over each member's documentation: "QBluetoothTransferReply *put(const
 * QBluetoothTransferRequest &request, QIODevice *data)", each type a link), and
 * Scribble's identifiers (span.RktSym around each link, in code, signatures and prose:
 * "(error message-str v ...) -> any", "v : any/c"), and Crystal Docs' signatures
 * (div.signature over each method's documentation, "def int(bits : Int) : Type #" with
 * its types linked, and the summary's a.signature, the signature itself a link to that
 * documentation: a link that is a signature names its declaration, so the summaries are
 * no link list and the short signatures no isolated labels). A link inside one is not link
 * text: the block keeps its weight as text, so a declaration of linked types (rustdoc's
 * pre.item-decl, ocamldoc's linked val lines, QDoc's member documentation under its
 * signatures, Scribble's contract rows) is neither a link-heavy block nor a link list to
 * clean. A link holding code (Sphinx's <a><code>os</code></a>, a menu of names) is a
 * link as before: only the code around a link counts. */
static int code_context(unsigned tag, const struct attrs *at)
{
    if (tag == T_pre || tag == T_code || tag == T_samp || tag == T_kbd || tag == T_tt ||
        tag == T_listing || tag == T_xmp)
        return 1;
    if (tag >= T_h1 && tag <= T_h6 && at->cls && rel_has(at->cls, "fn"))
        return 1;
    if ((tag == T_div || tag == T_a) && at->cls && rel_has(at->cls, "signature"))
        return 1;
    return at->cls && (rel_has(at->cls, "code-header") || rel_has(at->cls, "rktsym"));
}

/* <a href> and <area href> start a link (outside an open one); <img alt> inside an open
 * link without anchor text yet is its anchor. */
static void open_link(struct state *st, struct open *o, unsigned tag, const struct attrs *at)
{
    struct ex_walk *w = st->w;
    const char *href = at->href, *rel = at->rel, *alt = at->alt;
    if ((tag == T_a || tag == T_area) && href && !st->link_open) {
        int r =
            grow((void **)&w->links, &w->cap_links, w->n_links, sizeof *w->links, array_max(st));
        if (r != 0) {
            fail(st, r == -1 ? EXTRACT_ETOOLARGE : EXTRACT_ENOMEM);
            return;
        }
        struct ex_rawlink *l = &w->links[w->n_links];
        memset(l, 0, sizeof *l);
        size_t hl = strlen(href);
        l->href = store(st, href, hl);
        if (l->href == EX_NONE)
            return;
        w->n_links++;
        l->href_len = (uint32_t)hl;
        l->block = (uint32_t)w->n_blocks;
        l->elem = st->cur_elem;
        l->nofollow =
            rel && (rel_has(rel, "nofollow") || rel_has(rel, "sponsored") || rel_has(rel, "ugc"));
        l->anchor = EX_NONE;
        if (tag == T_a) {
            o->flags |= O_LINK;
            st->link_open = 1;
            st->link_self = self_link(st, href);
            st->link_code = st->code > 0;
            st->link_index = w->n_links - 1;
            st->anchor.len = 0;
            st->anchor_space = 0;
        } else if (alt) {
            /* <area alt> is its anchor text */
            int sp = 0;
            st->anchor.len = 0;
            add_small(st, &st->anchor, &sp, alt, strlen(alt), EX_ANCHOR_MAX);
            l->anchor = store(st, st->anchor.p ? st->anchor.p : "", st->anchor.len);
            l->anchor_len = (uint32_t)st->anchor.len;
        }
    } else if (tag == T_img && alt && st->link_open && st->anchor.len == 0) {
        /* an image link: the alt text is the anchor */
        add_small(st, &st->anchor, &st->anchor_space, alt, strlen(alt), EX_ANCHOR_MAX);
    }
}

/* An element starts inside a dropped subtree, or starts one (K_DROP: script, style,
 * svg...): the text under it is not read, except an <svg>'s <text> labels. */
static void open_dropped(struct state *st, struct open *o, unsigned tag, const xmlChar *xname)
{
    int inside = st->drop > 0;
    st->drop++;
    o->flags |= O_DROP;
    if (inside) {
        /* a diagram's labels are its text (SQLite's syntax diagrams, pikchr, graphviz
         * output): <text> inside an <svg> is read, each label a word boundary */
        if (st->svg && !st->svg_text && xmlStrEqual(xname, BAD_CAST "text")) {
            o->flags |= O_SPACE;
            st->svg_text = 1;
            st->pending_space = 1;
        }
    } else if (tag == T_svg) {
        o->flags |= O_SVG;
        st->svg = 1;
    }
}

/*
 * An element starts. The steps: the depth cap; a dropped subtree; the attributes
 * (read_attrs); metadata (metadata_element); a <br>, a block element (open_block: its
 * hints and marks, judge_element) or an unknown one (a word boundary); the hidden mark;
 * a link (open_link).
 */
static void on_start(void *ctx, const xmlChar *xname, const xmlChar **atts)
{
    struct state *st = ((htmlParserCtxtPtr)ctx)->_private;
    struct ex_walk *w = st->w;
    if (w->err != EXTRACT_OK)
        return;
    if (st->depth >= w->max_depth) {
        st->overflow++;
        w->deep_elements++; /* reported: extract_doc_truncated() */
        return;
    }
    unsigned tag = tag_of(st, xname);
    unsigned kind = tag_table[tag].kind;
    struct open *o = &st->stack[st->depth++];
    o->tag = (uint16_t)tag;
    o->flags = 0;
    o->elem = st->cur_elem;
    o->id_hash = 0;
    if (st->drop || kind == K_DROP) {
        open_dropped(st, o, tag, xname);
        return;
    }
    struct attrs at;
    read_attrs(st, tag, atts, &at);
    o->id_hash = at.id && at.id[0] ? ex_fnv1a(at.id, strlen(at.id)) : 0;
    metadata_element(st, o, tag, &at, atts);
    if (kind == K_BR) {
        if (!st->hidden && !st->in_title)
            add_newline(st);
        return; /* the matching end event pops it */
    }
    if (kind == K_BLOCK) {
        if (open_block(st, o, tag, &at) != 0)
            return;
    } else if (kind == K_UNKNOWN) {
        o->flags |= O_SPACE;
        st->pending_space = 1;
        if (st->link_open)
            st->anchor_space = 1;
    }
    if (at.hidden) {
        o->flags |= O_HIDDEN;
        st->hidden++;
    }
    if (tag == T_a && !at.href && (at.name || at.id)) {
        const char *n = at.name ? at.name : at.id;
        st->blk_anchor = fragment_hash(n, strlen(n));
    }
    /* before the link opens: a link that is itself a signature (Crystal's a.signature)
     * names its declaration, as the links inside code do */
    if (code_context(tag, &at)) {
        o->flags |= O_CODE;
        st->code++;
    }
    open_link(st, o, tag, &at);
}

static void close_link(struct state *st)
{
    struct ex_walk *w = st->w;
    struct ex_rawlink *l = &w->links[st->link_index];
    l->anchor = store(st, st->anchor.p ? st->anchor.p : "", st->anchor.len);
    l->anchor_len = (uint32_t)st->anchor.len;
    st->link_open = 0;
    st->link_self = 0;
    st->link_code = 0;
}

static void on_end(void *ctx, const xmlChar *name)
{
    (void)name;
    struct state *st = ((htmlParserCtxtPtr)ctx)->_private;
    struct ex_walk *w = st->w;
    if (st->overflow) {
        st->overflow--;
        return;
    }
    if (st->depth == 0 || w->err != EXTRACT_OK)
        return;
    struct open *o = &st->stack[--st->depth];
    if (o->flags & O_DROP) {
        st->drop--;
        if (o->flags & O_SVG)
            st->svg = 0;
        if ((o->flags & O_SPACE) && st->svg_text) {
            st->svg_text = 0;
            st->pending_space = 1;
        }
        return;
    }
    if (o->flags & O_LINK)
        close_link(st);
    if (o->flags & O_CODE)
        st->code--;
    if (o->flags & O_TITLE) {
        st->in_title = 0;
        st->title_done = 1;
    }
    if (o->flags & O_SPACE) {
        st->pending_space = 1;
        if (st->link_open)
            st->anchor_space = 1;
    }
    if (o->flags & O_HIDDEN)
        st->hidden--;
    if (o->flags & O_ELEM) {
        flush_block(st);
        struct ex_elem *e = &w->elems[o->elem];
        e->end_block = (uint32_t)w->n_blocks;
        e->end_elem = (uint32_t)w->n_elems;
        st->cur_elem = e->parent;
        if (o->flags & O_PRE)
            st->pre--;
    }
}

static void on_text(void *ctx, const xmlChar *ch, int len)
{
    struct state *st = ((htmlParserCtxtPtr)ctx)->_private;
    if (st->overflow && !(st->drop && !st->svg_text) && len > 0) {
        for (int i = 0; i < len; i++)
            if (ch[i] != ' ' && ch[i] != '\n' && ch[i] != '\t' && ch[i] != '\r') {
                st->w->deep_text_bytes += (size_t)len; /* reported: extract_doc_truncated() */
                break;
            }
    }
    if ((st->drop && !st->svg_text) || st->overflow || st->w->err != EXTRACT_OK || len <= 0)
        return;
    const char *s = (const char *)ch;
    if (st->in_title) {
        add_small(st, &st->w->title, &st->title_space, s, (size_t)len, EX_TITLE_MAX);
        return;
    }
    if (st->link_open)
        add_small(st, &st->anchor, &st->anchor_space, s, (size_t)len, EX_ANCHOR_MAX);
    if (st->hidden)
        return;
    add_text(st, s, (size_t)len);
}

static void on_error(void *ctx, xmlErrorPtr err)
{
    (void)ctx;
    (void)err; /* recovering is the point: errors are dropped */
}

/* ---- libxml2's allocator ---- */

/*
 * extract_xml_alloc_setup() (extract.h): process-wide, so called by programs (main()),
 * never by the library itself. HOW IT WORKS (attribute buffers): libxml2 2.9.14's
 * htmlParseHTMLAttribute() starts each attribute value in a 100-byte xmlMallocAtomic() buffer and
 * doubles it with xmlRealloc() as soon as it holds one byte (its test is "used > size - 100"), so
 * every non-empty attribute value (each class and href of the page) costs a malloc, a realloc that
 * moves it, and a free: 5% of libxml2's parse time here. We give libxml2 (once, before its first
 * use, through xmlGcMemSetup) byte buffers of at least XML_ATOMIC_MIN bytes and a realloc
 * that keeps a block which is already big enough (malloc_usable_size), so such a value
 * stays where it is until it outgrows XML_ATOMIC_MIN. The same malloc and free underneath:
 * blocks from before the change are freed as before; nothing else changes.
 */
#define XML_ATOMIC_MIN 256

static void *xml_malloc_atomic(size_t n)
{
    return malloc(n < XML_ATOMIC_MIN ? XML_ATOMIC_MIN : n);
}

static void *xml_realloc(void *p, size_t n)
{
    if (p && n > 0 && malloc_usable_size(p) >= n)
        return p;
    return realloc(p, n);
}

static char *xml_strdup(const char *s)
{
    return strdup(s);
}

void extract_xml_alloc_setup(void)
{
    xmlGcMemSetup(free, malloc, xml_malloc_atomic, xml_realloc, xml_strdup);
}

static pthread_once_t xml_once = PTHREAD_ONCE_INIT;

/* The one libxml2 call a library may make: xmlInitParser() is idempotent and every
 * libxml2 user needs it before threads parse. */
static void xml_init(void)
{
    xmlInitParser();
}

/* ---- driver ---- */

enum extract_code ex_walk_run(struct ex_walk *w, const char *utf8, size_t len, unsigned max_depth)
{
    enum extract_code rc = EXTRACT_OK;
    struct state *st = NULL;
    htmlParserCtxtPtr ctxt = NULL;
    if (len > (size_t)INT32_MAX - 16)
        return EXTRACT_ETOOLARGE;
    w->max_depth = max_depth;
    ex_buf_init(&w->text, 2 * len + 4096);
    ex_buf_init(&w->strs, 2 * len + 4096);
    ex_buf_init(&w->title, EX_TITLE_MAX + 8);
    st = calloc(1, sizeof *st);
    if (!st)
        return EXTRACT_ENOMEM;
    st->w = w;
    st->cur_elem = EX_NONE;
    ex_buf_init(&st->anchor, EX_ANCHOR_MAX + 8);
    st->stack = malloc(sizeof *st->stack * (max_depth + 1));
    if (!st->stack) {
        rc = EXTRACT_ENOMEM;
        goto done;
    }
    pthread_once(&xml_once, xml_init);
    ctxt = htmlCreateMemoryParserCtxt(utf8, (int)len);
    if (!ctxt) {
        rc = EXTRACT_ENOMEM;
        goto done;
    }
    htmlSAXHandler sax;
    memset(&sax, 0, sizeof sax);
    sax.startElement = on_start;
    sax.endElement = on_end;
    sax.characters = on_text;
    sax.ignorableWhitespace = on_text;
    sax.serror = on_error;
    sax.initialized = 1;
    memcpy(ctxt->sax, &sax, sizeof sax);
    ctxt->userData = ctxt; /* callbacks get the context; our state hangs on _private */
    ctxt->_private = st;
    htmlCtxtUseOptions(ctxt, EX_HTML_PARSE_OPTIONS);
    /* the bytes are valid UTF-8 (charset.c made them so): never let libxml2 guess */
    xmlSwitchEncoding(ctxt, XML_CHAR_ENCODING_UTF8);
    htmlParseDocument(ctxt);
    /* close what is still open (a truncated page) */
    while (st->depth > 0 && w->err == EXTRACT_OK)
        on_end(ctxt, NULL);
    flush_block(st);
    if (st->link_open)
        close_link(st);
    rc = w->err;
    if (rc == EXTRACT_OK && ctxt->errNo == XML_ERR_NO_MEMORY)
        rc = EXTRACT_ENOMEM;
done:
    if (ctxt)
        htmlFreeParserCtxt(ctxt);
    if (st) {
        free(st->stack);
        ex_buf_release(&st->anchor);
        free(st);
    }
    return rc;
}

void ex_walk_release(struct ex_walk *w)
{
    free(w->elems);
    free(w->blocks);
    free(w->links);
    ex_buf_release(&w->text);
    ex_buf_release(&w->strs);
    ex_buf_release(&w->title);
    memset(w, 0, sizeof *w);
}

int ex_tag_prior(unsigned tag)
{
    switch (tag) {
    case T_div:
        return 5;
    case T_pre:
    case T_td:
    case T_blockquote:
        return 3;
    case T_address:
    case T_ol:
    case T_ul:
    case T_dl:
    case T_dd:
    case T_dt:
    case T_li:
    case T_form:
        return -3;
    case T_h1:
    case T_h2:
    case T_h3:
    case T_h4:
    case T_h5:
    case T_h6:
    case T_th:
        return -5;
    default:
        return 0;
    }
}
