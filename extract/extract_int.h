#ifndef EXTRACT_EXTRACT_INT_H
#define EXTRACT_EXTRACT_INT_H
/*
 * Shared inside extract/ only: the growing buffer, the charset step, the SAX walk that
 * turns the page into elements + text blocks, the boilerplate scorer, URL resolution.
 * Nothing here is part of the public API (extract/extract.h).
 */
#include "extract/extract.h"

#include <stddef.h>
#include <stdint.h>

/* ---- a growing byte buffer with a hard cap (curl's dynbuf) ---- */
struct ex_buf {
    char *p;
    size_t len, cap, max; /* max: growing past it fails with EXTRACT_ETOOLARGE */
};
void ex_buf_init(struct ex_buf *b, size_t max);
void ex_buf_release(struct ex_buf *b);
/* Makes room for `need` more bytes (plus a NUL). EXTRACT_ENOMEM / EXTRACT_ETOOLARGE. */
enum extract_code ex_buf_reserve(struct ex_buf *b, size_t need);
enum extract_code ex_buf_add(struct ex_buf *b, const void *p, size_t n);
/* Hands the NUL-terminated contents over (caller frees) and empties b. */
char *ex_buf_take(struct ex_buf *b);

/* 64-bit FNV-1a of n bytes: the key of extract/'s small in-memory tables (class memo,
 * link memo), never stored or compared across runs. */
static inline uint64_t ex_fnv1a(const void *p, size_t n)
{
    const unsigned char *s = p;
    uint64_t h = 14695981039346656037ull;
    for (size_t i = 0; i < n; i++)
        h = (h ^ s[i]) * 1099511628211ull;
    return h;
}

/* ---- walk.c: libxml2's SAX HTML parser ---- */
/* The options walk.c parses with (tests/bench/bench_pipeline.c --sax-files too, to time
 * the same parse alone); the input is UTF-8 already (charset.c), hence IGNORE_ENC. */
#define EX_HTML_PARSE_OPTIONS                                                                      \
    (HTML_PARSE_RECOVER | HTML_PARSE_NONET | HTML_PARSE_NOERROR | HTML_PARSE_NOWARNING |           \
     HTML_PARSE_IGNORE_ENC | HTML_PARSE_NODEFDTD)

/* ---- charset.c: sniffing and decoding to valid UTF-8 ---- */
#define EX_CHARSET_NAME_MAX 40
#define EX_SNIFF_BYTES 4096 /* how far the <meta charset> prescan looks */

/*
 * Decides the charset of html[0..len): BOM, then opts content_type charset, then a
 * <meta charset> / http-equiv prescan, then "UTF-8" if the bytes are valid UTF-8, else
 * "windows-1252". Writes the canonical name into name; *bom_len is the BOM to skip.
 */
void ex_charset_sniff(const char *html, size_t len, const char *content_type,
                      char name[EX_CHARSET_NAME_MAX], size_t *bom_len);
/*
 * Decodes in[0..len) from charset `name` into valid UTF-8 without NUL bytes. When the
 * input already is, *out points at in and nothing is allocated; otherwise *out points
 * into buf (released by the caller). An unknown charset name is replaced in `name` by
 * the fallback actually used ("UTF-8" when the bytes are valid UTF-8, else
 * "windows-1252").
 */
enum extract_code ex_decode(const char *in, size_t len, char name[EX_CHARSET_NAME_MAX],
                            struct ex_buf *buf, const char **out, size_t *out_len);
/* 1 when s[0..len) is valid UTF-8 without NUL bytes. */
int ex_utf8_valid(const char *s, size_t len);
/* Appends s[0..len) to b, replacing invalid UTF-8 and NULs with U+FFFD. */
enum extract_code ex_utf8_repair(struct ex_buf *b, const char *s, size_t len);

/* ---- walk.c: the page as elements and text blocks ---- */
enum ex_kind { K_INLINE, K_BLOCK, K_DROP, K_BR, K_UNKNOWN };

/* (the table as aligned by hand) */
/* clang-format off */
/* X(name, kind) in strcmp order (the table is binary searched). */
#define EX_TAGS(X)                                                                         \
    X(a, K_INLINE) X(abbr, K_INLINE) X(acronym, K_INLINE) X(address, K_BLOCK)              \
    X(applet, K_DROP) X(area, K_INLINE) X(article, K_BLOCK) X(aside, K_BLOCK)              \
    X(audio, K_DROP) X(b, K_INLINE) X(base, K_INLINE) X(bdi, K_INLINE) X(bdo, K_INLINE)    \
    X(big, K_INLINE) X(blink, K_INLINE) X(blockquote, K_BLOCK) X(body, K_BLOCK)            \
    X(br, K_BR) X(button, K_DROP) X(canvas, K_DROP) X(caption, K_BLOCK) X(center, K_BLOCK) \
    X(cite, K_INLINE) X(code, K_INLINE) X(col, K_INLINE) X(colgroup, K_INLINE)             \
    X(data, K_INLINE) X(datalist, K_DROP) X(dd, K_BLOCK) X(del, K_INLINE)                  \
    X(details, K_BLOCK) X(dfn, K_INLINE) X(dialog, K_BLOCK) X(dir, K_BLOCK) X(div, K_BLOCK) \
    X(dl, K_BLOCK) X(dt, K_BLOCK) X(em, K_INLINE) X(embed, K_DROP) X(fieldset, K_BLOCK)    \
    X(figcaption, K_BLOCK) X(figure, K_BLOCK) X(font, K_INLINE) X(footer, K_BLOCK)         \
    X(form, K_BLOCK) X(frame, K_DROP) X(frameset, K_BLOCK) X(h1, K_BLOCK) X(h2, K_BLOCK)   \
    X(h3, K_BLOCK) X(h4, K_BLOCK) X(h5, K_BLOCK) X(h6, K_BLOCK) X(head, K_INLINE)          \
    X(header, K_BLOCK) X(hgroup, K_BLOCK) X(hr, K_BLOCK) X(html, K_BLOCK) X(i, K_INLINE)   \
    X(iframe, K_DROP) X(img, K_INLINE) X(input, K_DROP) X(ins, K_INLINE) X(kbd, K_INLINE)  \
    X(label, K_DROP) X(legend, K_BLOCK) X(li, K_BLOCK) X(link, K_INLINE) X(listing, K_BLOCK) \
    X(main, K_BLOCK) X(map, K_INLINE) X(mark, K_INLINE) X(marquee, K_BLOCK)                \
    X(math, K_DROP) X(menu, K_BLOCK) X(meta, K_INLINE) X(meter, K_DROP) X(nav, K_BLOCK)    \
    X(nobr, K_INLINE) X(noembed, K_DROP) X(noframes, K_DROP) X(noscript, K_DROP)           \
    X(object, K_DROP) X(ol, K_BLOCK) X(optgroup, K_DROP) X(option, K_DROP)                 \
    X(output, K_INLINE) X(p, K_BLOCK) X(param, K_DROP) X(picture, K_INLINE)                \
    X(plaintext, K_BLOCK) X(pre, K_BLOCK) X(progress, K_DROP) X(q, K_INLINE) X(rb, K_INLINE) \
    X(rp, K_DROP) X(rt, K_INLINE) X(rtc, K_INLINE) X(ruby, K_INLINE) X(s, K_INLINE)        \
    X(samp, K_INLINE) X(script, K_DROP) X(search, K_BLOCK) X(section, K_BLOCK)             \
    X(select, K_DROP) X(small, K_INLINE) X(source, K_DROP) X(span, K_INLINE)               \
    X(strike, K_INLINE) X(strong, K_INLINE) X(style, K_DROP) X(sub, K_INLINE)              \
    X(summary, K_BLOCK) X(sup, K_INLINE) X(svg, K_DROP) X(table, K_BLOCK)                  \
    X(tbody, K_BLOCK) X(td, K_BLOCK) X(template, K_DROP) X(textarea, K_DROP)               \
    X(tfoot, K_BLOCK) X(th, K_BLOCK) X(thead, K_BLOCK) X(time, K_INLINE) X(title, K_INLINE) \
    X(tr, K_BLOCK) X(track, K_DROP) X(tt, K_INLINE) X(u, K_INLINE) X(ul, K_BLOCK)          \
    X(var, K_INLINE) X(video, K_DROP) X(wbr, K_INLINE) X(xmp, K_BLOCK)
/* clang-format on */

enum ex_tag {
    T_UNKNOWN = 0,
#define X(n, k) T_##n,
    EX_TAGS(X)
#undef X
        T_COUNT
};

/* readability's prior score of a candidate element by tag */
int ex_tag_prior(unsigned tag);

#define EX_NONE UINT32_MAX

/* Element flags */
enum {
    EX_E_HIDDEN = 1u << 0,      /* hidden (attribute, aria-hidden, style), inherited */
    EX_E_UNLIKELY = 1u << 1,    /* boilerplate by class/id (this element) */
    EX_E_ARTICLE = 1u << 2,     /* inside <article>/<main>/role=main, inherited */
    EX_E_TABLE = 1u << 3,       /* inside a table, inherited */
    EX_E_POSITIVE = 1u << 4,    /* positive class/id hint on this element */
    EX_E_LIST = 1u << 5,        /* ul/ol/dl */
    EX_E_BOILER = 1u << 6,      /* boilerplate by tag or ARIA role: nav, aside, footer... */
    EX_E_IN_UNLIKELY = 1u << 7, /* boiler.c: this or an ancestor is EX_E_UNLIKELY */
    EX_E_IN_BOILER = 1u << 8,   /* boiler.c: this or an ancestor is EX_E_BOILER */
    EX_E_HAS_ARTICLE = 1u << 9, /* boiler.c: an <article>/<main>/role=main is inside */
    EX_E_COMMENT = 1u << 10,    /* class/id says comment: user comments are content */
    EX_E_AREA = 1u << 11,       /* in a documentation generator's content area, inherited */
    EX_E_HAS_DATA = 1u << 12,   /* boiler.c: a header cell, caption, thead or tfoot is inside */
    EX_E_IN_DATA = 1u << 13,    /* boiler.c: inside a table that has one (a data table) */
    EX_E_SECTION = 1u << 14,    /* docutils' div.section (before 0.17), makeinfo's
                                 * div.subsection: a <section> */
    EX_E_ANCHORED = 1u << 15,   /* a <dt> or heading inside links to it: a definition */
};

/* An element that can own text blocks (block-level elements only). */
struct ex_elem {
    uint32_t parent;      /* index or EX_NONE */
    uint32_t first_block; /* blocks [first_block, end_block) lie in this subtree */
    uint32_t end_block;
    uint32_t end_elem;   /* elements (this, end_elem) are its descendants */
    uint32_t class_hash; /* hash of the class attribute, 0 when none */
    uint16_t tag;        /* enum ex_tag */
    uint16_t flags;      /* EX_E_* */
    int16_t weight;      /* class/id/role/tag hint weight */
    int8_t neg_weight;   /* the part of weight that neg_words gave (0, -25 or -50) */
    uint16_t depth;
    float score;        /* readability-style content score */
    uint8_t scored;     /* score initialised */
    uint8_t keep;       /* selected as (part of) the main content */
    uint32_t neg_words; /* readability's negative words in its class and id (walk.c) */
};

/* Block flags */
enum {
    EX_B_HEADING = 1u << 0,
    EX_B_PRE = 1u << 1,
    EX_B_LI = 1u << 2,
    EX_B_CELL = 1u << 3,
    EX_B_KEEP = 1u << 4,
    EX_B_PERMALINK = 1u << 5, /* holds a permalink to its own definition (walk.c self_link) */
    EX_B_TITLE = 1u << 6,     /* a generator's page title in no heading element (Doxygen's
                               * div.headertitle > div.title): a name as an h1 is */
    EX_B_CODE = 1u << 7,      /* most of its text is code (walk.c code_context): a
                               * declaration, never a stray label */
};

/* A run of text between block boundaries. */
struct ex_block {
    uint32_t off, len; /* in walk.text */
    uint32_t elem;     /* innermost block element holding it */
    uint32_t chars;    /* code points, spaces included */
    uint32_t link_chars;
    uint32_t words;
    uint16_t commas;
    uint16_t stops;  /* sentence ends: . ! ? followed by space/end */
    uint8_t flags;   /* EX_B_* */
    uint8_t heading; /* 1..6 for h1..h6, else 0 */
};

/* One link as found by the walk: strings are offsets into walk.strs. */
struct ex_rawlink {
    uint32_t href, href_len;
    uint32_t anchor, anchor_len;
    uint32_t block; /* index of the block its text went into, or EX_NONE */
    uint32_t elem;
    uint8_t nofollow;
};

struct ex_walk {
    /* results */
    struct ex_elem *elems;
    size_t n_elems, cap_elems;
    struct ex_block *blocks;
    size_t n_blocks, cap_blocks;
    struct ex_buf text; /* block texts, back to back */
    struct ex_buf strs; /* raw hrefs and anchors */
    struct ex_rawlink *links;
    size_t n_links, cap_links;
    struct ex_buf title;
    char lang[16];
    char meta_lang[16];
    int have_base;
    uint32_t base_href, base_len; /* in strs */
    int have_canonical;
    uint32_t canon_href, canon_len; /* in strs */
    unsigned noindex, nofollow;
    enum extract_code err;                 /* first error, stops the walk */
    size_t deep_elements, deep_text_bytes; /* cut below max_depth */
    /* walk state (walk.c) */
    unsigned max_depth;
    void *priv;
};

enum extract_code ex_walk_run(struct ex_walk *w, const char *utf8, size_t len, unsigned max_depth);
void ex_walk_release(struct ex_walk *w);

/* ---- boiler.c: main content selection ---- */
/* Marks the main-content blocks (EX_B_KEEP). EXTRACT_ENOMEM: the marks are then partial
 * (the caller gives up on the page). */
EXTRACT_WARN_UNUSED enum extract_code ex_boiler_select(struct ex_walk *w);

/* ---- url.c: RFC 3986 reference resolution ---- */
/*
 * Resolves ref[0..ref_len) against base (an absolute URL, or NULL/"") and appends the
 * result to out, without its fragment. *usable is 1 when a crawlable link was written
 * (http/https, or a relative reference when there is no base), 0 when the link is to be
 * skipped (javascript:, mailto:, data:, fragment-only, empty) and nothing was appended.
 */
enum extract_code ex_url_resolve(const char *base, const char *ref, size_t ref_len,
                                 struct ex_buf *out, int *usable);

#endif
