/*
 * Suite "template": the site template table (dedup/template.c; docs/FINGERPRINT.md
 * section 2): counting distinct documents per block and host, the two thresholds, runs of
 * short blocks, exact copies counted once, eviction within the caps and its determinism,
 * the serialised form and its damage checks, the table saved with and loaded from the
 * index file, and the property the spec rests on: the token strings of the blocks joined
 * by one space are the token string of the whole text (so an empty table changes no
 * fingerprint), over every extractor fixture; the page's name XORed into an HTML
 * page's fingerprint; a short text's symbols (version 11); and a headless page's title as
 * its name (version 12).
 */
#include <CUnit/CUnit.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <xxhash.h>

#include "dedup/dedup.h"
#include "extract/extract.h"
#include "filter/pipeline.h"
#include "tests/testutil.h"

/* Counts one document of host "h" whose blocks are b[0..n). */
static enum dedup_code add(struct dedup_templates *t, const char *host, uint64_t doc,
                           const uint64_t *b, size_t n)
{
    return dedup_templates_add_doc(t, host, strlen(host), doc, b, n, NULL);
}

static int marked(const struct dedup_templates *t, const char *host, uint64_t block,
                  uint32_t tokens)
{
    unsigned char m = 9;
    dedup_templates_mark(t, host, strlen(host), &block, &tokens, 1, &m);
    return m;
}

static void test_template_thresholds(void)
{
    struct dedup_templates *t = dedup_templates_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    /* 30 documents: block 100 on all, 200 on 6 (= 20%), 300 on 2, and a repeat of 100 in
     * one document (counted once) */
    for (uint64_t d = 0; d < 30; d++) {
        uint64_t b[4] = {100, 1000 + d, 100, 0};
        size_t n = 3;
        if (d < 6)
            b[n++] = 200;
        if (d >= 10 && d < 12)
            b[n++] = 300;
        ASSERT_EQ(add(t, "h", d + 1, b, n), DEDUP_OK);
    }
    ASSERT_EQ(dedup_templates_docs(t, "h", 1), 30);
    ASSERT_EQ(dedup_templates_block_count(t, "h", 1, 100), 30);
    ASSERT_EQ(dedup_templates_block_count(t, "h", 1, 200), 6);
    ASSERT_EQ(dedup_templates_block_count(t, "h", 1, 300), 2);
    ASSERT_EQ(marked(t, "h", 100, 10), 1);
    ASSERT_EQ(marked(t, "h", 200, 10), 1); /* 6 documents: 20% */
    ASSERT_EQ(marked(t, "h", 300, 10), 0); /* 2 < DEDUP_TEMPLATE_MIN_DOCS */
    ASSERT_EQ(marked(t, "h", 1005, 10), 0);
    ASSERT_EQ(marked(t, "other", 100, 10), 0); /* per host */
    ASSERT_EQ(marked(NULL, "h", 100, 10), 0);
    /* one more document: 6 of 31 is under 20% */
    uint64_t one = 5000;
    ASSERT_EQ(add(t, "h", 99, &one, 1), DEDUP_OK);
    ASSERT_EQ(marked(t, "h", 200, 10), 0);
    ASSERT_EQ(marked(t, "h", 100, 10), 1);
    /* short blocks: alone they stay, a run of them goes once it has the minimum */
    uint64_t page[5] = {100, 7777, 100, 200, 100};
    uint32_t toks[5] = {DEDUP_TEMPLATE_MIN_TOKENS - 1, 50, 2, 3, DEDUP_TEMPLATE_MIN_TOKENS - 2};
    unsigned char m[5];
    ASSERT_EQ(dedup_templates_mark(t, "h", 1, page, toks, 5, m), 0);
    for (int i = 0; i < 5; i++)
        ASSERT_EQ(m[i], 0);
    toks[3] = DEDUP_TEMPLATE_MIN_TOKENS; /* 200 is no candidate now (31 docs): 100 alone */
    ASSERT_EQ(dedup_templates_mark(t, "h", 1, page, toks, 5, m), 0);
    toks[4] = DEDUP_TEMPLATE_MIN_TOKENS;
    ASSERT_EQ(dedup_templates_mark(t, "h", 1, page, toks, 5, m), 1);
    ASSERT_EQ(m[4], 1);
    page[3] = 100; /* a run 100,100,100 of 2 + 2 + 6 tokens */
    toks[2] = 2;
    toks[3] = 2;
    ASSERT_EQ(dedup_templates_mark(t, "h", 1, page, toks, 5, m), 3);
    CU_ASSERT(m[2] && m[3] && m[4] && !m[1] && !m[0]);
    ASSERT_EQ(dedup_templates_add_doc(t, "h", DEDUP_TEMPLATE_MAX_KEY + 1, 1, page, 1, NULL),
              DEDUP_EINVAL);
    dedup_templates_free(t);
}

static void test_template_exact_copies_once(void)
{
    struct dedup_templates *t = dedup_templates_new();
    uint64_t b[2] = {11, 12};
    int counted = -1;
    for (int i = 0; i < 5; i++) {
        ASSERT_EQ(dedup_templates_add_doc(t, "h", 1, 42, b, 2, &counted), DEDUP_OK);
        ASSERT_EQ(counted, i == 0);
    }
    ASSERT_EQ(dedup_templates_docs(t, "h", 1), 1);
    ASSERT_EQ(dedup_templates_block_count(t, "h", 1, 11), 1);
    /* the same document on another host counts there; doc 0 is never checked */
    ASSERT_EQ(dedup_templates_add_doc(t, "g", 1, 42, b, 2, &counted), DEDUP_OK);
    ASSERT_EQ(counted, 1);
    for (int i = 0; i < 3; i++)
        ASSERT_EQ(add(t, "h", 0, b, 2), DEDUP_OK);
    ASSERT_EQ(dedup_templates_block_count(t, "h", 1, 11), 4);
    ASSERT_EQ(dedup_templates_host_count(t), 2);
    dedup_templates_free(t);
}

static struct dedup_templates *fill(size_t docs)
{
    struct dedup_templates *t = dedup_templates_new();
    for (uint64_t d = 0; d < docs; d++) {
        uint64_t b[3] = {1, 0x100000000ull + d * 2, 0x100000000ull + d * 2 + 1};
        if (add(t, "big", d + 1, b, 3) != DEDUP_OK)
            CU_FAIL("add failed");
    }
    return t;
}

static void test_template_eviction_bounded_deterministic(void)
{
    size_t docs = DEDUP_TEMPLATE_HOST_MAX_ENTRIES; /* 2 new blocks a document: overflows */
    struct dedup_templates *a = fill(docs), *b = fill(docs);
    CU_ASSERT(dedup_templates_entry_count(a) <= DEDUP_TEMPLATE_HOST_MAX_ENTRIES);
    CU_ASSERT(dedup_templates_entry_count(a) > 0);
    /* the block on every page survives every eviction with its full count */
    ASSERT_EQ(dedup_templates_block_count(a, "big", 3, 1), docs);
    ASSERT_EQ(marked(a, "big", 1, 10), 1);
    ASSERT_EQ(dedup_templates_docs(a, "big", 3), docs);
    /* the same calls give the same bytes */
    uint8_t *sa, *sb;
    size_t la, lb;
    ASSERT_EQ_FATAL(dedup_templates_serialize(a, &sa, &la), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_templates_serialize(b, &sb, &lb), DEDUP_OK);
    CU_ASSERT(la == lb && memcmp(sa, sb, la) == 0);
    free(sa);
    free(sb);
    dedup_templates_free(a);
    dedup_templates_free(b);
    /* the host cap: the host with the fewest documents goes */
    struct dedup_templates *t = dedup_templates_new();
    char key[32];
    uint64_t x = 7;
    for (unsigned h = 0; h < DEDUP_TEMPLATE_MAX_HOSTS; h++) {
        snprintf(key, sizeof key, "host%u", h);
        ASSERT_EQ(add(t, key, 0, &x, 1), DEDUP_OK);
        if (h == 5)
            ASSERT_EQ(add(t, key, 0, &x, 1), DEDUP_OK); /* host5: 2 documents */
    }
    ASSERT_EQ(dedup_templates_host_count(t), DEDUP_TEMPLATE_MAX_HOSTS);
    ASSERT_EQ(add(t, "newcomer", 0, &x, 1), DEDUP_OK);
    ASSERT_EQ(dedup_templates_host_count(t), DEDUP_TEMPLATE_MAX_HOSTS);
    ASSERT_EQ(dedup_templates_docs(t, "newcomer", 8), 1);
    ASSERT_EQ(dedup_templates_docs(t, "host0", 5), 0); /* smallest key of 1 doc */
    ASSERT_EQ(dedup_templates_docs(t, "host5", 5), 2);
    ASSERT_EQ(dedup_templates_docs(t, "host1", 5), 1);
    dedup_templates_free(t);
}

static void test_template_serialize_and_damage(void)
{
    struct dedup_templates *t = dedup_templates_new();
    uint64_t b[3] = {5, 6, 7};
    for (uint64_t d = 1; d <= 4; d++) {
        ASSERT_EQ(add(t, "example.org", d, b, 3), DEDUP_OK);
        ASSERT_EQ(add(t, "", d, b + (d % 2), 2), DEDUP_OK);
    }
    uint8_t *s, *s2;
    size_t len, len2;
    ASSERT_EQ_FATAL(dedup_templates_serialize(t, &s, &len), DEDUP_OK);
    ASSERT_EQ(len % 8, 0);
    struct dedup_templates *u = NULL;
    struct dedup_parse_error err;
    ASSERT_EQ_FATAL(dedup_templates_parse(s, len, &u, &err), DEDUP_OK);
    ASSERT_EQ(dedup_templates_docs(u, "example.org", 11), 4);
    ASSERT_EQ(dedup_templates_block_count(u, "", 0, 6), 4);
    ASSERT_EQ(dedup_templates_block_count(u, "", 0, 5), 2);
    ASSERT_EQ_FATAL(dedup_templates_serialize(u, &s2, &len2), DEDUP_OK);
    CU_ASSERT(len == len2 && memcmp(s, s2, len) == 0);
    free(s2);
    dedup_templates_free(u);
    /* damage: every byte flipped is either still a valid table or an error with an offset
     * inside the section (never a crash); some specific ones */
    uint8_t *c = malloc(len);
    for (size_t i = 0; i < len; i++) {
        memcpy(c, s, len);
        c[i] ^= 0x41;
        u = NULL;
        enum dedup_code rc = dedup_templates_parse(c, len, &u, &err);
        if (rc != DEDUP_OK)
            CU_ASSERT(err.offset <= len && *err.what);
        dedup_templates_free(u);
    }
    memcpy(c, s, len);
    c[4] = 1;
    ASSERT_EQ(dedup_templates_parse(c, len, &u, &err), DEDUP_EFORMAT);
    ASSERT_EQ(err.offset, 4);
    ASSERT_EQ(dedup_templates_parse(s, len - 8, &u, &err), DEDUP_EFORMAT);
    ASSERT_EQ(dedup_templates_parse(s, 3, &u, &err), DEDUP_EFORMAT);
    /* hosts out of order: records sorted by key, "" first; swap the two keys' documents
     * count fields is harmless, but a count above the host's documents is not */
    size_t entries = len - 16 - 2 * 16 - 16; /* keys "" + "example.org" pad to 16 */
    ASSERT_EQ(entries % 16, 0);
    size_t first_entry = len - entries;
    memcpy(c, s, len);
    c[first_entry + 8] = 99; /* count 99 > 4 documents */
    ASSERT_EQ(dedup_templates_parse(c, len, &u, &err), DEDUP_EFORMAT);
    ASSERT_EQ(err.offset, first_entry + 8);
    free(c);
    free(s);
    dedup_templates_free(t);
}

static void test_template_index_roundtrip(void)
{
    struct dedup_design d;
    struct dedup_index *idx = NULL, *back = NULL;
    ASSERT_EQ_FATAL(dedup_design_choose(3, 10, 0, &d), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_new(&d, &idx), DEDUP_OK);
    ASSERT_EQ(dedup_index_add(idx, 0x1234, "a", 1, NULL), DEDUP_OK);
    struct dedup_templates *t = dedup_index_templates(idx);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    uint64_t b[2] = {77, 78};
    for (uint64_t i = 1; i <= 3; i++)
        ASSERT_EQ(add(t, "site", i, b, 2), DEDUP_OK);
    char path[128];
    snprintf(path, sizeof path, "/tmp/test_template_%ld.idx", (long)getpid());
    struct dedup_file_error fe;
    ASSERT_EQ_FATAL(dedup_index_save(idx, path, &fe), DEDUP_OK);
    ASSERT_EQ_FATAL(dedup_index_load(path, 0, &back, &fe), DEDUP_OK);
    struct dedup_templates *bt = dedup_index_templates(back);
    ASSERT_EQ(dedup_templates_docs(bt, "site", 4), 3);
    ASSERT_EQ(dedup_templates_block_count(bt, "site", 4, 78), 3);
    ASSERT_EQ(marked(bt, "site", 77, 10), 1);
    ASSERT_EQ(dedup_index_doc_count(back), 1);
    dedup_index_free(back);
    /* a damaged section: the checksum first, then (checks skipped) the structure, with
     * the offset of the field in the file */
    FILE *f = fopen(path, "rb");
    uint8_t *buf = calloc(1, 1 << 16);
    size_t len = fread(buf, 1, 1 << 16, f);
    fclose(f);
    uint64_t tpl_len = 0, end = 0;
    memcpy(&tpl_len, buf + 88, 8);
    memcpy(&end, buf + 64, 8);
    ASSERT_EQ(end, len);
    CU_ASSERT(tpl_len >= 16 && tpl_len < len);
    uint64_t *al = calloc(1, len + 8);
    memcpy(al, buf, len);
    ((uint8_t *)al)[len - tpl_len + 4] = 1; /* the section's reserved field */
    ASSERT_EQ(dedup_index_load_mem(al, len, 0, &back, &fe), DEDUP_ECHECKSUM);
    ASSERT_EQ(dedup_index_load_mem(al, len, DEDUP_INDEX_LOAD_NO_CHECKSUM, &back, &fe),
              DEDUP_EFORMAT);
    ASSERT_EQ(fe.offset, len - tpl_len + 4);
    /* a template section size that is not a multiple of 8 */
    memcpy(al, buf, len);
    ((uint8_t *)al)[88] ^= 1;
    ASSERT_EQ(dedup_index_load_mem(al, len, DEDUP_INDEX_LOAD_NO_CHECKSUM, &back, &fe),
              DEDUP_EFORMAT);
    ASSERT_EQ(fe.offset, 88);
    free(al);
    free(buf);
    unlink(path);
    dedup_index_free(idx);
}

/* The token strings of the blocks (lines) joined by one space are the whole text's. */
static void test_template_blocks_join_to_whole_text(void)
{
    unsigned checked = 0;
    for (int i = 1; i < 100; i++) {
        char path[64];
        snprintf(path, sizeof path, "tests/data/extract/%03d.html", i);
        FILE *f = fopen(path, "rb");
        if (!f)
            continue;
        static char html[1 << 20];
        size_t hl = fread(html, 1, sizeof html, f);
        fclose(f);
        struct extract_doc *doc = NULL;
        if (extract_doc_parse(html, hl, NULL, &doc) != EXTRACT_OK)
            continue;
        size_t tl;
        const char *text = extract_doc_text(doc, &tl);
        char *whole = NULL, *joined = calloc(1, tl * 4 + 16);
        size_t wl, wn, jl = 0;
        ASSERT_EQ_FATAL(extract_tokens(text, tl, &whole, &wl, &wn), EXTRACT_OK);
        for (size_t s = 0; s <= tl;) {
            size_t e = s;
            while (e < tl && text[e] != '\n')
                e++;
            char *bt;
            size_t bl, bn;
            ASSERT_EQ_FATAL(extract_tokens(text + s, e - s, &bt, &bl, &bn), EXTRACT_OK);
            if (bn) {
                if (jl)
                    joined[jl++] = ' ';
                memcpy(joined + jl, bt, bl);
                jl += bl;
            }
            free(bt);
            if (e >= tl)
                break;
            s = e + 1;
        }
        ASSERT_EQ(jl, wl);
        CU_ASSERT(jl == wl && memcmp(joined, whole, wl) == 0);
        checked++;
        free(whole);
        free(joined);
        extract_doc_free(doc);
    }
    CU_ASSERT(checked >= 5);
}

/* A mark callback: the blocks whose hash is in the zero-terminated list userdata. */
static size_t mark_listed(void *userdata, const char *host, size_t host_len, const uint64_t *blocks,
                          const uint32_t *n_tokens, size_t n, unsigned char *is_template)
{
    (void)host, (void)host_len, (void)n_tokens;
    const uint64_t *list = userdata;
    size_t marked = 0;
    for (size_t i = 0; i < n; i++) {
        is_template[i] = 0;
        for (const uint64_t *l = list; *l; l++)
            if (blocks[i] == *l)
                is_template[i] = 1;
        marked += is_template[i];
    }
    return marked;
}

/* The fingerprint of text with the lines listed in tpl (token strings) as template;
 * 0 when the page has none (too little text). */
static uint64_t fp_with_template(const char *text, const char *const *tpl)
{
    uint64_t list[8] = {0};
    for (size_t i = 0; tpl[i]; i++)
        list[i] = dedup_template_block_hash(tpl[i], strlen(tpl[i]));
    struct filter_fp_opts o = {0};
    o.text = 1;
    o.mark = mark_listed;
    o.mark_userdata = list;
    struct filter_fp_result r;
    uint64_t fp =
        filter_fingerprint_page(text, strlen(text), NULL, NULL, &o, &r) == 0 ? r.fingerprint : 0;
    filter_fp_result_release(&r);
    return fp;
}

/* docs/FINGERPRINT.md, "A page with little text of its own": a page left with fewer than
 * 80 tokens of its own among template blocks is fingerprinted by the hash of its whole
 * token string (a short text's hash), so the same chapter's stub in two editions (the same title,
 * each edition's template sentences) is two pages, and the same stub in two releases (the same
 * whole text) is one. */
static void test_template_stub_is_its_whole_text(void)
{
    static const char *const ed2018[] = {
        "the 2018 edition of the book is no longer distributed with rust s documentation",
        "if you came here via a link you may want the current version", NULL};
    static const char *const ed2nd[] = {
        "the second edition of the book is no longer distributed with rust s documentation",
        "if you came here via a link you may want the current version", NULL};
    const char *a = "Using Structs\n\nThe 2018 edition of the book is no longer distributed "
                    "with Rust's documentation.\n\nIf you came here via a link, you may want "
                    "the current version.\n";
    const char *b = "Using Structs\n\nThe second edition of the book is no longer distributed "
                    "with Rust's documentation.\n\nIf you came here via a link, you may want "
                    "the current version.\n";
    const char *whole_a = "using structs the 2018 edition of the book is no longer distributed "
                          "with rust s documentation if you came here via a link you may want "
                          "the current version";
    uint64_t fa = fp_with_template(a, ed2018), fb = fp_with_template(b, ed2nd);
    uint64_t want = XXH3_64bits_withSeed(whole_a, strlen(whole_a), DEDUP_SHORT_SEED);
    ASSERT_EQ(fa, want ? want : 1);
    /* two editions' stubs: their own words alike, their template lines not */
    CU_ASSERT(dedup_distance(fa, fb) > 3);
    /* the same stub in another release, where the template is the same */
    ASSERT_EQ(fp_with_template(a, ed2018), fa);
    /* with a title of 6 own words (5 to 23: not a stub, but a short text) the same */
    const char *c = "Using Structs to Structure Related Data\nThe 2018 edition of the book "
                    "is no longer distributed with Rust's documentation.\n";
    const char *d = "Using Structs to Structure Related Data\nThe second edition of the book "
                    "is no longer distributed with Rust's documentation.\n";
    uint64_t fc = fp_with_template(c, ed2018), fd = fp_with_template(d, ed2nd);
    const char *whole_c = "using structs to structure related data the 2018 edition of the "
                          "book is no longer distributed with rust s documentation";
    want = XXH3_64bits_withSeed(whole_c, strlen(whole_c), DEDUP_SHORT_SEED);
    ASSERT_EQ(fc, want ? want : 1);
    CU_ASSERT(dedup_distance(fc, fd) > 3);
    /* whole texts under 80 tokens: the same fingerprint as without a template table */
    static const char *const none[] = {NULL};
    ASSERT_EQ(fp_with_template(c, none), fc);
    /* DEDUP_SHORT_TOKENS own tokens or more: the simhash of the own text alone, the
     * template left out */
    char e[2048], own[1024];
    size_t ol = 0;
    for (unsigned i = 0; i < DEDUP_SHORT_TOKENS; i++)
        ol += (size_t)snprintf(own + ol, sizeof own - ol, "%sword%u", i ? " " : "", i);
    snprintf(e, sizeof e,
             "%s\nThe 2018 edition of the book is no longer distributed with "
             "Rust's documentation.\n",
             own);
    ASSERT_EQ(fp_with_template(e, ed2018), fp_with_template(own, none));
    /* only template lines: too little text */
    ASSERT_EQ(fp_with_template("The 2018 edition of the book is no longer distributed with "
                               "Rust's documentation.\n",
                               ed2018),
              0);
}

/* An HTML page: <h1>heading</h1> (none when NULL) over a paragraph of 150 words, the
 * word at index `changed` replaced by "edited" (none when >= 150). */
static char *titled_page(const char *title, const char *heading, unsigned changed)
{
    char *html = malloc(8192);
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    int n = snprintf(html, 8192, "<html><head><title>%s</title></head><body><main>", title);
    if (heading)
        n += snprintf(html + n, 8192 - (size_t)n, "<h1>%s</h1>", heading);
    n += snprintf(html + n, 8192 - (size_t)n, "<p>");
    for (unsigned i = 0; i < 150; i++)
        n += i == changed ? snprintf(html + n, 8192 - (size_t)n, "edited ")
                          : snprintf(html + n, 8192 - (size_t)n, "w%u ", (i * 37) % 101);
    snprintf(html + n, 8192 - (size_t)n, "</p></main></body></html>");
    return html;
}

/* A page of the site "Site" under heading h (NULL: none), word changed edited. */
static char *named_page(const char *heading, unsigned changed)
{
    return titled_page("Site", heading, changed);
}

static struct filter_fp_result fp_page(const char *html)
{
    struct filter_fp_opts o = {0};
    o.keep_tokens = 1;
    struct filter_fp_result r;
    ASSERT_EQ(filter_fingerprint_page(html, strlen(html), NULL, NULL, &o, &r), 0);
    return r;
}

/* The page's name (docs/FINGERPRINT.md section 6): an HTML page's fingerprint is the
 * simhash of its text XORed with the hash of its own heading's token string; one body
 * under two headings is two pages far apart, an edit under one heading stays near. */
static void test_template_page_name(void)
{
    char *a = named_page("Alpha Widget", 999), *b = named_page("Beta widget", 999);
    char *a2 = named_page("Alpha  widget", 75), *none = named_page(NULL, 999);
    struct filter_fp_result ra = fp_page(a), rb = fp_page(b), ra2 = fp_page(a2),
                            rn = fp_page(none);
    ASSERT_EQ(ra.name_hash, XXH3_64bits_withSeed("alpha widget", 12, DEDUP_NAME_SEED));
    ASSERT_EQ(ra.name_hash, dedup_name_hash("alpha widget", 12, 2));
    ASSERT_EQ(ra2.name_hash, ra.name_hash); /* case and spacing are one name */
    struct dedup_features *f = dedup_features_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ASSERT_EQ(dedup_features_from_tokens(f, ra.tokens, ra.tokens_len, NULL), DEDUP_OK);
    ASSERT_EQ(ra.fingerprint, dedup_simhash(f) ^ ra.name_hash);
    /* one word of 152 changed: near; another name: as far as two random values */
    CU_ASSERT(dedup_distance(ra.fingerprint, ra2.fingerprint) <= 3);
    CU_ASSERT(dedup_distance(ra.fingerprint, rb.fingerprint) > 7);
    /* no heading: the title names the page (version 12) */
    ASSERT_EQ(rn.name_hash, dedup_name_hash("site", 4, 1));
    ASSERT_EQ(dedup_features_from_tokens(f, rn.tokens, rn.tokens_len, NULL), DEDUP_OK);
    ASSERT_EQ(rn.fingerprint, dedup_simhash(f) ^ rn.name_hash);
    /* a heading of DEDUP_NAME_MAX_TOKENS tokens names the page, one more does not */
    char h[512];
    size_t hl = 0;
    for (unsigned i = 0; i < DEDUP_NAME_MAX_TOKENS + 1; i++)
        hl += (size_t)snprintf(h + hl, sizeof h - hl, "%sh%u", i ? " " : "", i);
    char *longer = named_page(h, 999);
    h[hl - 4] = '\0'; /* " h32" gone: 32 tokens */
    char *longest_named = named_page(h, 999);
    struct filter_fp_result rl = fp_page(longer), rm = fp_page(longest_named);
    ASSERT_EQ(rl.name_hash, 0);
    ASSERT_EQ(rm.name_hash, XXH3_64bits_withSeed(h, strlen(h), DEDUP_NAME_SEED));
    /* plain text has no heading */
    struct filter_fp_opts o = {0};
    o.text = 1;
    struct filter_fp_result rt;
    static const char text[] = "Alpha Widget\n\nsome text of its own here ok";
    ASSERT_EQ(filter_fingerprint_page(text, sizeof text - 1, NULL, NULL, &o, &rt), 0);
    ASSERT_EQ(rt.name_hash, 0);
    filter_fp_result_release(&rt);
    struct filter_fp_result *all[] = {&ra, &rb, &ra2, &rn, &rl, &rm};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        filter_fp_result_release(all[i]);
    dedup_features_free(f);
    free(a);
    free(b);
    free(a2);
    free(none);
    free(longer);
    free(longest_named);
}

/* A page without a heading is named by its <title> (docs/FINGERPRINT.md section 6, "A
 * page without a heading", version 12), less the tokens that hold a digit: two headless
 * pages of one body under two titles are two pages (Agda's Relation.Nullary.Implication
 * and .Product, Haddock's "Index - D" and "Index - F"), under titles that differ only in
 * a release number they are one; a heading wins over the title; a title of numbers alone
 * names nothing. */
static void test_template_title_name(void)
{
    char *a = titled_page("Relation.Nullary.Implication", NULL, 999),
         *b = titled_page("Relation.Nullary.Product", NULL, 999),
         *r1 = titled_page("base-4.17.0.0: Basic libraries (Index - D)", NULL, 999),
         *r2 = titled_page("base-4.18.1.0: Basic libraries (Index - D)", NULL, 999),
         *h1 = titled_page("Alpha - Site 3.11", "Alpha Widget", 999),
         *h2 = titled_page("Beta - Site 3.12", "Alpha Widget", 999),
         *num = titled_page("2026-11-28 12:00", NULL, 999), *none = titled_page("", NULL, 999);
    struct filter_fp_result ra = fp_page(a), rb = fp_page(b), rr1 = fp_page(r1),
                            rr2 = fp_page(r2), rh1 = fp_page(h1), rh2 = fp_page(h2),
                            rnum = fp_page(num), rnone = fp_page(none);
    ASSERT_EQ(ra.name_hash, dedup_name_hash("relation nullary implication", 28, 3));
    CU_ASSERT(dedup_distance(ra.fingerprint, rb.fingerprint) > 7);
    /* the release numbers left out: one name, one fingerprint */
    ASSERT_EQ(rr1.name_hash, dedup_name_hash("base basic libraries index d", 28, 5));
    ASSERT_EQ(rr2.fingerprint, rr1.fingerprint);
    /* a heading of its own: the title is not read */
    ASSERT_EQ(rh1.name_hash, dedup_name_hash("alpha widget", 12, 2));
    ASSERT_EQ(rh2.fingerprint, rh1.fingerprint);
    /* nothing but numbers, or no title: no name, the simhash alone */
    ASSERT_EQ(rnum.name_hash, 0);
    ASSERT_EQ(rnone.name_hash, 0);
    ASSERT_EQ(rnum.fingerprint, rnone.fingerprint);
    struct dedup_features *f = dedup_features_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ASSERT_EQ(dedup_features_from_tokens(f, rnum.tokens, rnum.tokens_len, NULL), DEDUP_OK);
    ASSERT_EQ(rnum.fingerprint, dedup_simhash(f));
    dedup_features_free(f);
    struct filter_fp_result *all[] = {&ra, &rb, &rr1, &rr2, &rh1, &rh2, &rnum, &rnone};
    for (size_t i = 0; i < sizeof all / sizeof *all; i++)
        filter_fp_result_release(all[i]);
    char *pages[] = {a, b, r1, r2, h1, h2, num, none};
    for (size_t i = 0; i < sizeof pages / sizeof *pages; i++)
        free(pages[i]);
}

/* The name of a page under heading h (named_page()'s body). */
static uint64_t name_of(const char *h)
{
    char *html = named_page(h, 999);
    struct filter_fp_result r = fp_page(html);
    uint64_t name = r.name_hash;
    filter_fp_result_release(&r);
    free(html);
    return name;
}

/* The fingerprint distances of one body under heading h0 to it under h1 (d[0]) and under
 * h2 (d[1]). */
static void named_distances(const char *h0, const char *h1, const char *h2, unsigned d[2])
{
    char *a = named_page(h0, 999), *b = named_page(h1, 999), *c = named_page(h2, 999);
    struct filter_fp_result ra = fp_page(a), rb = fp_page(b), rc = fp_page(c);
    d[0] = dedup_distance(ra.fingerprint, rb.fingerprint);
    d[1] = dedup_distance(ra.fingerprint, rc.fingerprint);
    filter_fp_result_release(&ra);
    filter_fp_result_release(&rb);
    filter_fp_result_release(&rc);
    free(a);
    free(b);
    free(c);
}

/* A heading and the token string its page's name is the hash of. */
struct name_case {
    const char *heading, *name;
};

/* Each case's page, its name through the pipeline: the hash of the expected tokens. */
static void assert_names(const struct name_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        uint64_t want = XXH3_64bits_withSeed(cases[i].name, strlen(cases[i].name), DEDUP_NAME_SEED);
        uint64_t got = name_of(cases[i].heading);
        if (got != want)
            fprintf(stderr, "\nname of '%s' is not that of '%s'\n", cases[i].heading, cases[i].name);
        ASSERT_EQ(got, want);
    }
}

/* A heading's label (docs/FINGERPRINT.md section 6, version 9): the generated number a
 * DocBook manual puts before a title is not the page's name, so the same chapter
 * renumbered between two releases keeps its name and its fingerprint; a heading that is
 * only a label, or a number that is part of the name, is left as it is. */
static void test_template_name_label(void)
{
    static const struct name_case CASES[] = {
        {"Chapter 13. Boost.Date_Time", "boost date_time"},
        {"Chapter 11. Boost.Date_Time", "boost date_time"},
        {"8.3. Character Types", "character types"},
        {"12. Character Types", "character types"},
        {"F.1. adminpack", "adminpack"},
        {"Appendix B. Date/Time Support", "date time support"},
        {"Part IV. Client Interfaces", "client interfaces"},
        {"Kapitel 3. Einführung", "einfuhrung"},
        {"Глава 3. Введение", "введение"},
        {"Capítulo 2.\tDatos", "datos"},
        /* no label: the name is the whole heading */
        {"A. Lincoln", "a lincoln"},
        {"IV. Server", "iv server"},
        {"Chapter 13.", "chapter 13"},
        {"Chapter 13. ", "chapter 13"},
        {"Django 3.2.19 release notes", "django 3 2 19 release notes"},
        {"13.2 Title", "13 2 title"},
        {"1.. Title", "1 title"},
        {"Step 1.Install", "step 1 install"},
        {"Python 3 tutorial", "python 3 tutorial"},
    };
    assert_names(CASES, sizeof CASES / sizeof *CASES);
    /* the function itself: where the name starts, within len */
    ASSERT_EQ(dedup_name_label("8.3. x", 6), 5);
    ASSERT_EQ(dedup_name_label("8.3. x", 5), 0); /* the label alone */
    ASSERT_EQ(dedup_name_label("8.3. x", 3), 0);
    ASSERT_EQ(dedup_name_label("", 0), 0);
    ASSERT_EQ(dedup_name_label("Supercalifragilisticexpialidocious 1. x", 39), 0); /* no word */
    /* the same chapter of two releases: one fingerprint; another chapter: far */
    unsigned d[2];
    named_distances("Chapter 13. Alpha Widget", "Chapter 11. Alpha Widget",
                    "Chapter 13. Beta Widget", d);
    ASSERT_EQ(d[0], 0);
    CU_ASSERT(d[1] > 7);
}

/* A name's symbols (docs/FINGERPRINT.md section 6, version 10): Macaulay2's operator
 * pages are one text under headings that differ only in the operator ("@@ -- a binary
 * operator", "==> -- a binary operator"); the runs of ASCII operator characters and the
 * mathematical symbols of a heading are tokens of its name, while hyphens, dashes, a
 * heading's link marks and punctuation inside a word name nothing. */
static void test_template_name_symbols(void)
{
    static const struct name_case CASES[] = {
        {"@@ -- a binary operator", "a binary operator @@ --"},
        {"==> -- a binary operator", "a binary operator ==> --"},
        {"^^ -- logical exclusive-or", "logical exclusive or ^^ --"},
        {"operator<< and operator>>", "operator and operator << >>"},
        {"C# and C++", "c and c ++"},
        {"Web Streams API#", "web streams api"}, /* a heading's link mark, as "¶" */
        {"x ≤ y → z", "x ≤ y z"}, /* a mathematical symbol is a token, an arrow not */
        {"⊥ -- bottom", "⊥ bottom --"},
        /* nothing more */
        {"Alpha Widget¶", "alpha widget"},
        {"Alpha - Widget", "alpha widget"},
        {"Alpha — Widget » § • · … “x”", "alpha widget x"},
        {"exclusive-or a->b p/q", "exclusive or a->b p q"},
        {"8.3. -- Types", "types --"}, /* the label is left out first */
    };
    assert_names(CASES, sizeof CASES / sizeof *CASES);
    /* one text under two operators: two pages far apart */
    unsigned d[2];
    named_distances("@@ -- a binary operator", "==> -- a binary operator",
                    "@@ -- a binary operator¶", d);
    CU_ASSERT(d[0] > 7);
    ASSERT_EQ(d[1], 0);
    /* the function itself: runs in order, after the heading's tokens */
    char *t = NULL;
    size_t tl = 0, tn = 0;
    ASSERT_EQ_FATAL(extract_name_tokens("|| <= x", 7, &t, &tl, &tn), EXTRACT_OK);
    CU_ASSERT_STRING_EQUAL(t, "x || <=");
    ASSERT_EQ(tl, 7);
    ASSERT_EQ(tn, 3);
    free(t);
    ASSERT_EQ_FATAL(extract_name_tokens("@@", 2, &t, &tl, &tn), EXTRACT_OK);
    CU_ASSERT_STRING_EQUAL(t, "@@"); /* an operator alone is a name */
    ASSERT_EQ(tn, 1);
    free(t);
    ASSERT_EQ_FATAL(extract_name_tokens("", 0, &t, &tl, &tn), EXTRACT_OK);
    CU_ASSERT_STRING_EQUAL(t, "");
    ASSERT_EQ(tn, 0);
    free(t);
}

/* A short text's symbols (docs/FINGERPRINT.md section 4, version 11): a page keyed on its
 * token string (a short text, a stub) is keyed on its symbols too, so Twisted's two
 * template examples (`<<<Header>>>!` and `Header.`: one token string) are two pages; a
 * text without symbols keeps the hash of its token string, and a text of
 * DEDUP_SHORT_TOKENS tokens or more its simhash, symbols or not. */
static void test_template_text_symbols(void)
{
    const char *a = "<html><body><main><p>&lt;&lt;&lt;Header&gt;&gt;&gt;!</p><p>Content goes "
                    "here.</p><p>&gt;&gt;&gt;\"Footer!\"&lt;&lt;&lt;</p></main></body></html>";
    const char *b = "<html><body><main><p>Header.</p><p>Content goes here.</p><p>Footer.</p>"
                    "</main></body></html>";
    struct filter_fp_result ra = fp_page(a), rb = fp_page(b);
    const char *tok = "header content goes here footer";
    CU_ASSERT_STRING_EQUAL(ra.tokens, tok);
    CU_ASSERT_STRING_EQUAL(rb.tokens, tok);
    /* b: no symbol, the hash of its token string as before */
    ASSERT_EQ(rb.fingerprint, XXH3_64bits_withSeed(tok, strlen(tok), DEDUP_SHORT_SEED));
    /* a: that XOR the hash of its token string with its symbols (section 6's rules over
     * the whole text: the operator runs in order after the words) */
    const char *sym = "header content goes here footer <<< >>>! >>> ! <<<";
    ASSERT_EQ(ra.fingerprint, XXH3_64bits_withSeed(tok, strlen(tok), DEDUP_SHORT_SEED) ^
                                  XXH3_64bits_withSeed(sym, strlen(sym), DEDUP_SYMBOL_SEED));
    CU_ASSERT(dedup_distance(ra.fingerprint, rb.fingerprint) > 7);
    /* the key alone: equal strings have none */
    ASSERT_EQ(dedup_symbol_key(tok, strlen(tok), tok, strlen(tok)), 0);
    ASSERT_EQ(dedup_symbol_key(sym, strlen(sym), tok, strlen(tok)),
              XXH3_64bits_withSeed(sym, strlen(sym), DEDUP_SYMBOL_SEED));
    /* plain text: the same rule (a mathematical symbol too) */
    struct filter_fp_opts o = {0};
    o.text = 1;
    struct filter_fp_result rt, ru;
    static const char t1[] = "x \xe2\x8a\xa5 y -- bottom of the order";
    static const char t2[] = "x \xe2\x8a\xa4 y -- bottom of the order";
    ASSERT_EQ(filter_fingerprint_page(t1, sizeof t1 - 1, NULL, NULL, &o, &rt), 0);
    ASSERT_EQ(filter_fingerprint_page(t2, sizeof t2 - 1, NULL, NULL, &o, &ru), 0);
    CU_ASSERT(dedup_distance(rt.fingerprint, ru.fingerprint) > 7);
    filter_fp_result_release(&rt);
    filter_fp_result_release(&ru);
    /* a stub (a few own words among template lines): its whole text's symbols */
    static const char *const tpl[] = {
        "the 2018 edition of the book is no longer distributed with rust s documentation",
        NULL};
    uint64_t s1 = fp_with_template("a <<< b\nThe 2018 edition of the book is no longer "
                                   "distributed with Rust's documentation.\n",
                                   tpl);
    uint64_t s2 = fp_with_template("a >>> b\nThe 2018 edition of the book is no longer "
                                   "distributed with Rust's documentation.\n",
                                   tpl);
    CU_ASSERT(s1 != 0 && s2 != 0);
    CU_ASSERT(dedup_distance(s1, s2) > 7);
    /* DEDUP_SHORT_TOKENS tokens or more: the simhash, whatever the symbols */
    char long1[4096], long2[4096];
    size_t l1 = 0;
    l1 += (size_t)snprintf(long1, sizeof long1, "<html><body><main><p>");
    for (unsigned i = 0; i < DEDUP_SHORT_TOKENS; i++)
        l1 += (size_t)snprintf(long1 + l1, sizeof long1 - l1, "w%u ", (i * 37) % 101);
    memcpy(long2, long1, l1);
    snprintf(long1 + l1, sizeof long1 - l1, "</p></main></body></html>");
    snprintf(long2 + l1, sizeof long2 - l1, "&lt;&lt;&lt; x \xe2\x8a\xa5</p></main></body></html>");
    long1[l1 - 1] = ' ';
    struct filter_fp_result r1 = fp_page(long1), r2 = fp_page(long2);
    struct dedup_features *f = dedup_features_new();
    CU_ASSERT_PTR_NOT_NULL_FATAL(f);
    ASSERT_EQ(dedup_features_from_tokens(f, r2.tokens, r2.tokens_len, NULL), DEDUP_OK);
    ASSERT_EQ(r2.fingerprint, dedup_simhash(f));
    CU_ASSERT(dedup_distance(r1.fingerprint, r2.fingerprint) <= 3);
    dedup_features_free(f);
    filter_fp_result_release(&r1);
    filter_fp_result_release(&r2);
    filter_fp_result_release(&ra);
    filter_fp_result_release(&rb);
}

/* A golden vector's value: got (what the pipeline computes of input) is hex; says which
 * input and value differ when not. */
static void assert_vector(const char *what, const char *input, uint64_t got, const char *hex)
{
    uint64_t want = strtoull(hex, NULL, 16);
    if (got != want)
        fprintf(stderr, "\n%s of '%s' is %016llx, vector %s\n", what, input,
                (unsigned long long)got, hex);
    ASSERT_EQ(got, want);
}

/* The name records of the golden vectors (tests/data/fingerprint/vectors.txt,
 * docs/FINGERPRINT.md section 8): a heading and its name, as the pipeline computes it. */
static void name_record(char **f, void *labelled)
{
    assert_vector("name", f[1], name_of(f[1]), f[0]);
    *(unsigned *)labelled += dedup_name_label(f[1], strlen(f[1])) > 0;
}

static void test_template_name_golden(void)
{
    unsigned labelled = 0;
    unsigned n = test_each_record("tests/data/fingerprint/vectors.txt", "name", 2, name_record,
                                  &labelled);
    CU_ASSERT(n >= 10);
    CU_ASSERT(labelled >= 5);
}

/* The text records of the golden vectors (version 11): a plain text and its fingerprint,
 * as the pipeline computes it (`--text`). */
static void text_record(char **f, void *keyed)
{
    struct filter_fp_opts o = {0};
    o.text = 1;
    o.keep_tokens = 1;
    struct filter_fp_result r;
    ASSERT_EQ_FATAL(filter_fingerprint_page(f[1], strlen(f[1]), NULL, NULL, &o, &r), 0);
    assert_vector("fingerprint", f[1], r.fingerprint, f[0]);
    /* how many of them carry a key: not the hash of their token string alone */
    *(unsigned *)keyed += r.fingerprint != XXH3_64bits_withSeed(r.tokens, r.tokens_len,
                                                                 DEDUP_SHORT_SEED);
    filter_fp_result_release(&r);
}

static void test_template_text_golden(void)
{
    unsigned keyed = 0;
    unsigned n = test_each_record("tests/data/fingerprint/vectors.txt", "text", 2, text_record,
                                  &keyed);
    CU_ASSERT(n >= 8);
    CU_ASSERT(keyed >= 4);
    CU_ASSERT(keyed < n);
}

/* The title records of the golden vectors (version 12): the <title> of a page without a
 * heading and its name, as the pipeline computes it. */
static void title_record(char **f, void *named)
{
    char *html = titled_page(f[1], NULL, 999);
    struct filter_fp_result r = fp_page(html);
    assert_vector("name from the title", f[1], r.name_hash, f[0]);
    *(unsigned *)named += r.name_hash != 0;
    filter_fp_result_release(&r);
    free(html);
}

static void test_template_title_golden(void)
{
    unsigned named = 0;
    unsigned n = test_each_record("tests/data/fingerprint/vectors.txt", "title", 2, title_record,
                                  &named);
    CU_ASSERT(n >= 8);
    CU_ASSERT(named >= 6);
    CU_ASSERT(named < n);
}

extern void test_template_register(void);
void test_template_register(void)
{
    CU_pSuite s = CU_add_suite("template", NULL, NULL);
    CU_add_test(s, "test_template_thresholds", test_template_thresholds);
    CU_add_test(s, "test_template_exact_copies_once", test_template_exact_copies_once);
    CU_add_test(s, "test_template_eviction_bounded_deterministic",
                test_template_eviction_bounded_deterministic);
    CU_add_test(s, "test_template_serialize_and_damage", test_template_serialize_and_damage);
    CU_add_test(s, "test_template_index_roundtrip", test_template_index_roundtrip);
    CU_add_test(s, "test_template_blocks_join_to_whole_text",
                test_template_blocks_join_to_whole_text);
    CU_add_test(s, "test_template_stub_is_its_whole_text", test_template_stub_is_its_whole_text);
    CU_add_test(s, "test_template_page_name", test_template_page_name);
    CU_add_test(s, "test_template_name_label", test_template_name_label);
    CU_add_test(s, "test_template_name_symbols", test_template_name_symbols);
    CU_add_test(s, "test_template_name_golden", test_template_name_golden);
    CU_add_test(s, "test_template_text_symbols", test_template_text_symbols);
    CU_add_test(s, "test_template_text_golden", test_template_text_golden);
    CU_add_test(s, "test_template_title_name", test_template_title_name);
    CU_add_test(s, "test_template_title_golden", test_template_title_golden);
}
