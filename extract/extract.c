/*
 * extract.c: the public face of extract/ (extract/extract.h). extract_doc_parse() checks
 * the input (size cap, empty, binary), decodes it to valid UTF-8 (charset.c), walks it
 * with libxml2's SAX HTML parser (walk.c), selects the main content (boiler.c), joins
 * the kept blocks with blank lines, and resolves links, <base> and rel=canonical
 * (url.c). Also the capped growing buffer every other file uses (after curl's dynbuf).
 *
 * Binary input is refused before parsing: a known binary signature (PDF, PNG, GIF, JPEG,
 * ZIP, gzip, ...), a NUL byte in the first EX_BINARY_SNIFF bytes (unless a BOM or the
 * Content-Type says UTF-16, or the input starts as markup with at most one NUL, plus one per
 * EX_NUL_RATIO bytes there: a stray NUL in a real page becomes U+FFFD), or more than 10%
 * control characters there.
 */
#include "extract/extract_int.h"

#include <stdlib.h>
#include <string.h>

#define EX_BINARY_SNIFF 8192 /* bytes looked at to tell binary from text */
#define EX_NUL_RATIO 1000    /* markup may hold 1 NUL, plus 1 per this many bytes */

/* ---- the capped buffer ---- */

void ex_buf_init(struct ex_buf *b, size_t max)
{
    b->p = NULL;
    b->len = b->cap = 0;
    b->max = max;
}

void ex_buf_release(struct ex_buf *b)
{
    free(b->p);
    b->p = NULL;
    b->len = b->cap = 0;
}

enum extract_code ex_buf_reserve(struct ex_buf *b, size_t need)
{
    if (need > SIZE_MAX - b->len - 1)
        return EXTRACT_ETOOLARGE;
    size_t want = b->len + need + 1;
    if (want <= b->cap)
        return EXTRACT_OK;
    if (want > b->max + 1)
        return EXTRACT_ETOOLARGE;
    size_t nc = b->cap ? b->cap : 256;
    while (nc < want)
        nc = nc > SIZE_MAX / 2 ? SIZE_MAX : nc * 2;
    if (nc > b->max + 1)
        nc = b->max + 1;
    char *p = realloc(b->p, nc);
    if (!p)
        return EXTRACT_ENOMEM;
    b->p = p;
    b->cap = nc;
    return EXTRACT_OK;
}

enum extract_code ex_buf_add(struct ex_buf *b, const void *p, size_t n)
{
    enum extract_code rc = ex_buf_reserve(b, n);
    if (rc != EXTRACT_OK)
        return rc;
    if (n)
        memcpy(b->p + b->len, p, n);
    b->len += n;
    b->p[b->len] = '\0';
    return EXTRACT_OK;
}

char *ex_buf_take(struct ex_buf *b)
{
    char *p = b->p;
    if (!p)
        p = calloc(1, 1);
    else
        p[b->len] = '\0'; /* reserve() always leaves room for it */
    b->p = NULL;
    b->len = b->cap = 0;
    return p;
}

/* ---- errors ---- */

const char *extract_strerror(enum extract_code code)
{
    switch (code) {
    case EXTRACT_OK:
        return "success";
    case EXTRACT_ENOMEM:
        return "out of memory";
    case EXTRACT_EEMPTY:
        return "input is empty";
    case EXTRACT_EBINARY:
        return "input is binary, not html";
    case EXTRACT_ETOOLARGE:
        return "input is too large";
    case EXTRACT_EPARSE:
        return "cannot parse the html";
    case EXTRACT_ENOTEXT:
        return "no text found";
    case EXTRACT_EINVAL:
        return "invalid argument";
    }
    return "unknown error";
}

/* ---- the document ---- */

struct extract_doc {
    char *text;
    size_t text_len;
    char *title, *canonical, *base;
    char *heading; /* the page's own heading as kept in text (build_text) */
    char lang[16];
    char charset[EX_CHARSET_NAME_MAX];
    unsigned noindex, nofollow;
    struct extract_link *links;
    size_t n_links;
    char *link_strs; /* url\0anchor\0 ... */
    struct extract_cuts cuts;
};

unsigned extract_doc_truncated(const struct extract_doc *doc, struct extract_cuts *cuts)
{
    if (cuts)
        *cuts = doc->cuts;
    return (doc->cuts.links_dropped ? EXTRACT_CUT_LINKS : 0u) |
           (doc->cuts.deep_elements ? EXTRACT_CUT_DEPTH : 0u);
}

void extract_doc_free(struct extract_doc *doc)
{
    if (!doc)
        return;
    free(doc->text);
    free(doc->title);
    free(doc->heading);
    free(doc->canonical);
    free(doc->base);
    free(doc->links);
    free(doc->link_strs);
    free(doc);
}

const char *extract_doc_text(const struct extract_doc *doc, size_t *len)
{
    if (len)
        *len = doc->text_len;
    return doc->text;
}
const char *extract_doc_title(const struct extract_doc *doc)
{
    return doc->title;
}
const char *extract_doc_heading(const struct extract_doc *doc)
{
    return doc->heading;
}
const char *extract_doc_lang(const struct extract_doc *doc)
{
    return doc->lang;
}
const char *extract_doc_canonical(const struct extract_doc *doc)
{
    return doc->canonical;
}
const char *extract_doc_base(const struct extract_doc *doc)
{
    return doc->base;
}
const char *extract_doc_charset(const struct extract_doc *doc)
{
    return doc->charset;
}
unsigned extract_doc_noindex(const struct extract_doc *doc)
{
    return doc->noindex;
}
unsigned extract_doc_nofollow(const struct extract_doc *doc)
{
    return doc->nofollow;
}
size_t extract_doc_link_count(const struct extract_doc *doc)
{
    return doc->n_links;
}

const struct extract_link *extract_doc_link(const struct extract_doc *doc, size_t i)
{
    return i < doc->n_links ? &doc->links[i] : NULL;
}

/* ---- input checks ---- */

static int only_space(const char *s, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)s[i];
        if (!(c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f' || c == '\v'))
            return 0;
    }
    return 1;
}

static int starts(const char *s, size_t n, const char *magic, size_t m)
{
    return n >= m && memcmp(s, magic, m) == 0;
}

/* Does s[0..n) start, after white space, with markup ("<!DOCTYPE", "<html", "<?xml")? */
static int markup_start(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n && (s[i] == ' ' || s[i] == '\t' || s[i] == '\n' || s[i] == '\r' || s[i] == '\f'))
        i++;
    return i + 1 < n && s[i] == '<' &&
           (s[i + 1] == '!' || s[i + 1] == '?' || (s[i + 1] | 0x20) == 'h');
}

static int looks_binary(const char *s, size_t n, int utf16)
{
    static const struct {
        const char *magic;
        size_t len;
    } sig[] = {
        {"%PDF-", 5},
        {"\x89PNG\r\n", 6},
        {"GIF87a", 6},
        {"GIF89a", 6},
        {"\xFF\xD8\xFF", 3},
        {"PK\x03\x04", 4},
        {"\x1F\x8B", 2},
        {"BZh", 3},
        {"\xFD"
         "7zXZ",
         5},
        {"7z\xBC\xAF", 4},
        {"Rar!\x1A\x07", 6},
        {"\x7F"
         "ELF",
         4},
        {"OggS", 4},
        {"wOFF", 4},
        {"wOF2", 4},
        {"\xCA\xFE\xBA\xBE", 4},
        {"\xD0\xCF\x11\xE0", 4},
        {"(\xB5/\xFD", 4},
        {"\x00\x00\x01\x00", 4},
    };
    for (size_t i = 0; i < sizeof sig / sizeof sig[0]; i++)
        if (starts(s, n, sig[i].magic, sig[i].len))
            return 1;
    if (starts(s, n, "RIFF", 4) && n >= 12)
        return 1; /* WAV, AVI, WebP */
    if (utf16)
        return 0;
    size_t m = n < EX_BINARY_SNIFF ? n : EX_BINARY_SNIFF;
    size_t ctl = 0, nul = 0;
    for (size_t i = 0; i < m; i++) {
        unsigned char c = (unsigned char)s[i];
        if (c < 0x20 && c != '\t' && c != '\n' && c != '\r' && c != '\f' && c != 0x1B)
            ctl++;
        nul += c == 0;
    }
    /* a stray NUL in a page that starts as markup (Javadoc of a class about characters
     * writes one raw) is text: it becomes U+FFFD; binary data has them everywhere */
    if (nul && !(markup_start(s, m) && nul <= 1 + m / EX_NUL_RATIO))
        return 1;
    return m >= 16 && ctl * 10 > m;
}

/* ---- assembling the result ---- */

/* Replaces *t (a buffer of cap max) by its repair (ex_utf8_repair) when it is not valid
 * UTF-8, so that the document's strings always are. */
static enum extract_code utf8_repaired(struct ex_buf *t, size_t max)
{
    if (ex_utf8_valid(t->p, t->len))
        return EXTRACT_OK;
    struct ex_buf r;
    ex_buf_init(&r, max * 3 + 16);
    enum extract_code rc = ex_utf8_repair(&r, t->p, t->len);
    ex_buf_release(t);
    *t = r;
    return rc;
}

/* The page's own heading as the text keeps it (docs/FINGERPRINT.md, "The page's name"):
 * the kept heading block of the highest level (h1 before h2 ...; Doxygen's page title,
 * EX_B_TITLE, is an h1), the first of them in page order, with words; "" when the text
 * keeps no heading. UTF-8 repaired as the text is. */
static enum extract_code build_heading(struct extract_doc *doc, const struct ex_walk *w)
{
    size_t nb = w->n_blocks, found = nb;
    unsigned best = 7;
    for (size_t b = 0; b < nb; b++) {
        const struct ex_block *blk = &w->blocks[b];
        unsigned level = (blk->flags & EX_B_TITLE) ? 1 : blk->heading;
        if (!(blk->flags & EX_B_KEEP) || !level || blk->words == 0)
            continue;
        if (level < best) {
            found = b;
            best = level;
        }
        if (level == 1)
            break;
    }
    const char *p = found < nb ? w->text.p + w->blocks[found].off : "";
    size_t len = found < nb ? w->blocks[found].len : 0;
    struct ex_buf h;
    ex_buf_init(&h, len + 1);
    enum extract_code rc = ex_buf_add(&h, p, len);
    if (rc == EXTRACT_OK)
        rc = utf8_repaired(&h, len + 1);
    if (rc != EXTRACT_OK) {
        ex_buf_release(&h);
        return rc;
    }
    doc->heading = ex_buf_take(&h);
    return doc->heading ? EXTRACT_OK : EXTRACT_ENOMEM;
}

static enum extract_code build_text(struct extract_doc *doc, struct ex_walk *w, size_t max)
{
    struct ex_buf t;
    ex_buf_init(&t, max);
    enum extract_code rc = ex_buf_reserve(&t, 0);
    for (size_t b = 0; b < w->n_blocks && rc == EXTRACT_OK; b++) {
        const struct ex_block *blk = &w->blocks[b];
        if (!(blk->flags & EX_B_KEEP))
            continue;
        if (t.len > 0)
            rc = ex_buf_add(&t, "\n\n", 2);
        if (rc == EXTRACT_OK)
            rc = ex_buf_add(&t, w->text.p + blk->off, blk->len);
    }
    if (rc == EXTRACT_OK)
        rc = utf8_repaired(&t, max);
    if (rc != EXTRACT_OK) {
        ex_buf_release(&t);
        return rc;
    }
    doc->text_len = t.len;
    doc->text = ex_buf_take(&t);
    return EXTRACT_OK;
}

/* Resolves ref against base into a new string; "" when unusable. NULL on ENOMEM. */
static char *resolve_dup(const char *base, const char *ref, size_t n, int *usable)
{
    struct ex_buf b;
    ex_buf_init(&b, 3 * n + 16384);
    enum extract_code rc = ex_url_resolve(base, ref, n, &b, usable);
    if (rc != EXTRACT_OK) {
        ex_buf_release(&b);
        return NULL;
    }
    return ex_buf_take(&b);
}

/*
 * HOW IT WORKS (link memo): a page names the same targets over and over (python3.11-doc:
 * 164,000 <a href> on 530 pages, 106,000 of them not fragment-only, 21,000 distinct per
 * page once the fragment is cut), and what ex_url_resolve() makes of an href depends only
 * on the base and on the href's bytes before its first '#' (together with whether there is
 * one: the trailing trim stops at the '#', and the fragment is dropped). So each distinct
 * key is resolved once per page, in an open-addressing table of the links' indices keyed
 * by an FNV-1a hash of those bytes; a repeat copies the first one's result. Same output.
 */
struct link_memo_entry {
    uint64_t hash;    /* of the key */
    uint32_t link;    /* 1 + index of the link that was resolved, 0: empty slot */
    uint32_t klen;    /* its key: the href's first klen bytes ... */
    uint8_t has_hash; /* ... followed by a '#' (1) or ending there (0) */
    uint8_t usable;
    size_t off, len; /* its result in the link strings, NUL included */
};

struct link_memo {
    struct link_memo_entry *slot;
    size_t mask;
};

static enum extract_code link_memo_init(struct link_memo *m, size_t n_links)
{
    size_t slots = 16;
    while (slots < 2 * n_links)
        slots *= 2;
    m->slot = calloc(slots, sizeof *m->slot);
    m->mask = slots - 1;
    return m->slot ? EXTRACT_OK : EXTRACT_ENOMEM;
}

/* The bytes of an href that decide its resolution: up to its first '#' (*has_hash: there
 * is one). */
static size_t link_key(const char *href, size_t len, int *has_hash)
{
    const char *hash = memchr(href, '#', len);
    *has_hash = hash != NULL;
    return hash ? (size_t)(hash - href) : len;
}

/* The slot of href's key: the entry resolved before, or the empty slot to fill (its key
 * set, link still 0). */
static struct link_memo_entry *link_memo_find(struct link_memo *m, const struct ex_walk *w,
                                              const char *href, size_t len)
{
    int has_hash;
    size_t k = link_key(href, len, &has_hash);
    uint64_t h = ex_fnv1a(href, k) ^ (uint64_t)has_hash;
    size_t i = (size_t)(h ^ h >> 29) & m->mask;
    for (;; i = (i + 1) & m->mask) {
        struct link_memo_entry *e = &m->slot[i];
        if (e->link == 0) {
            e->hash = h;
            e->klen = (uint32_t)k;
            e->has_hash = (uint8_t)has_hash;
            return e;
        }
        if (e->hash == h && e->klen == k && e->has_hash == has_hash &&
            memcmp(w->strs.p + w->links[e->link - 1].href, href, k) == 0)
            return e;
    }
}

static enum extract_code build_links(struct extract_doc *doc, struct ex_walk *w,
                                     const struct extract_opts *opts)
{
    const char *given = opts && opts->base_url ? opts->base_url : "";
    int usable = 0;
    /* the effective base: <base href> resolved against the page URL, else the page URL */
    if (w->have_base) {
        doc->base = resolve_dup(given, w->strs.p + w->base_href, w->base_len, &usable);
        if (!doc->base)
            return EXTRACT_ENOMEM;
        if (!usable || !strchr(doc->base, ':')) {
            free(doc->base);
            doc->base = NULL;
        }
    }
    if (!doc->base) {
        doc->base = strdup(given);
        if (!doc->base)
            return EXTRACT_ENOMEM;
    }
    if (w->have_canonical) {
        doc->canonical = resolve_dup(doc->base, w->strs.p + w->canon_href, w->canon_len, &usable);
        if (!doc->canonical)
            return EXTRACT_ENOMEM;
    } else {
        doc->canonical = strdup("");
        if (!doc->canonical)
            return EXTRACT_ENOMEM;
    }

    struct ex_buf s;
    ex_buf_init(&s, 4 * w->strs.len + 65536 + 32 * w->n_links);
    size_t *offs = NULL;
    struct link_memo memo = {NULL, 0};
    enum extract_code rc = EXTRACT_OK;
    size_t n_keep = w->n_links < doc->cuts.max_links ? w->n_links : doc->cuts.max_links;
    if (n_keep) {
        doc->links = calloc(n_keep, sizeof *doc->links);
        offs = calloc(n_keep, 2 * sizeof *offs);
        if (!doc->links || !offs) {
            rc = EXTRACT_ENOMEM;
            goto done;
        }
    }
    if (w->n_links && link_memo_init(&memo, w->n_links) != EXTRACT_OK) {
        rc = EXTRACT_ENOMEM;
        goto done;
    }
    size_t n = 0;
    for (size_t i = 0; i < w->n_links; i++) {
        const struct ex_rawlink *l = &w->links[i];
        const char *href = w->strs.p + l->href;
        size_t start = s.len;
        struct link_memo_entry *e = link_memo_find(&memo, w, href, l->href_len);
        if (e->link != 0) { /* the same href up to its fragment, already resolved */
            if (!e->usable)
                continue;
            rc = ex_buf_reserve(&s, e->len);
            if (rc != EXTRACT_OK)
                goto done;
            memcpy(s.p + s.len, s.p + e->off, e->len); /* with its NUL */
            s.len += e->len;
        } else {
            rc = ex_url_resolve(doc->base, href, l->href_len, &s, &usable);
            if (rc != EXTRACT_OK)
                goto done;
            if (usable)
                rc = ex_buf_add(&s, "", 1);
            if (rc != EXTRACT_OK)
                goto done;
            e->link = (uint32_t)i + 1;
            e->usable = (uint8_t)usable;
            e->off = start;
            e->len = s.len - start;
            if (!usable)
                continue;
        }
        if (n >= doc->cuts.max_links) { /* over the cap: counted, reported */
            doc->cuts.links_dropped++;
            continue;
        }
        offs[2 * n] = start;
        offs[2 * n + 1] = s.len;
        if (l->anchor != EX_NONE)
            rc = ex_buf_add(&s, w->strs.p + l->anchor, l->anchor_len);
        if (rc == EXTRACT_OK)
            rc = ex_buf_add(&s, "", 1);
        if (rc != EXTRACT_OK)
            goto done;
        struct extract_link *d = &doc->links[n++];
        d->nofollow = l->nofollow;
        d->in_main = l->block < w->n_blocks && (w->blocks[l->block].flags & EX_B_KEEP) &&
                     w->blocks[l->block].link_chars > 0;
    }
    doc->n_links = n;
    doc->link_strs = ex_buf_take(&s);
    for (size_t i = 0; i < n; i++) {
        doc->links[i].url = doc->link_strs + offs[2 * i];
        doc->links[i].anchor = doc->link_strs + offs[2 * i + 1];
    }
done:
    free(offs);
    free(memo.slot);
    ex_buf_release(&s);
    return rc;
}

enum extract_code extract_doc_parse(const char *html, size_t len, const struct extract_opts *opts,
                                    struct extract_doc **out)
{
    if (!out)
        return EXTRACT_EINVAL;
    *out = NULL;
    if (!html && len)
        return EXTRACT_EINVAL;
    size_t max = opts && opts->max_bytes ? opts->max_bytes : EXTRACT_DEFAULT_MAX_BYTES;
    unsigned max_depth = opts && opts->max_depth ? opts->max_depth : EXTRACT_DEFAULT_MAX_DEPTH;
    size_t max_links = opts && opts->max_links ? opts->max_links : EXTRACT_DEFAULT_MAX_LINKS;
    if (max_depth > EXTRACT_MAX_DEPTH_LIMIT)
        return EXTRACT_EINVAL;
    if (len > max)
        return EXTRACT_ETOOLARGE;
    if (len == 0 || only_space(html, len))
        return EXTRACT_EEMPTY;

    char charset[EX_CHARSET_NAME_MAX];
    size_t bom = 0;
    ex_charset_sniff(html, len, opts ? opts->content_type : NULL, charset, &bom);
    int utf16 = strncmp(charset, "UTF-16", 6) == 0;
    if (looks_binary(html, len, utf16))
        return EXTRACT_EBINARY;

    enum extract_code rc;
    struct extract_doc *doc = NULL;
    struct ex_walk w;
    memset(&w, 0, sizeof w);
    struct ex_buf decoded;
    ex_buf_init(&decoded, 4 * len + 64);
    const char *utf8;
    size_t utf8_len;
    rc = ex_decode(html + bom, len - bom, charset, &decoded, &utf8, &utf8_len);
    if (rc != EXTRACT_OK)
        goto fail;
    if (utf8_len == 0 || only_space(utf8, utf8_len)) {
        rc = EXTRACT_EEMPTY;
        goto fail;
    }
    rc = ex_walk_run(&w, utf8, utf8_len, max_depth);
    ex_buf_release(&decoded);
    if (rc != EXTRACT_OK)
        goto fail;
    if (w.n_blocks == 0 && w.n_links == 0) {
        rc = EXTRACT_ENOTEXT;
        goto fail;
    }
    rc = ex_boiler_select(&w);
    if (rc != EXTRACT_OK)
        goto fail;

    doc = calloc(1, sizeof *doc);
    if (!doc) {
        rc = EXTRACT_ENOMEM;
        goto fail;
    }
    memcpy(doc->charset, charset, sizeof doc->charset);
    memcpy(doc->lang, w.lang[0] ? w.lang : w.meta_lang, sizeof doc->lang);
    doc->noindex = w.noindex;
    doc->nofollow = w.nofollow;
    doc->cuts.max_links = max_links;
    doc->cuts.max_depth = max_depth;
    doc->cuts.deep_elements = w.deep_elements;
    doc->cuts.deep_text_bytes = w.deep_text_bytes;
    rc = build_text(doc, &w, w.text.len + 2 * w.n_blocks + 16);
    if (rc == EXTRACT_OK)
        rc = build_heading(doc, &w);
    if (rc != EXTRACT_OK)
        goto fail;
    {
        struct ex_buf tb = w.title;
        ex_buf_init(&w.title, 0);
        /* trim: the collapse leaves no spaces at either end except a leading one */
        doc->title = ex_buf_take(&tb);
        if (!doc->title) {
            rc = EXTRACT_ENOMEM;
            goto fail;
        }
    }
    rc = build_links(doc, &w, opts);
    if (rc != EXTRACT_OK)
        goto fail;
    ex_walk_release(&w);
    *out = doc;
    return EXTRACT_OK;
fail:
    ex_buf_release(&decoded);
    ex_walk_release(&w);
    extract_doc_free(doc);
    return rc;
}
