/*
 * The page pipeline of filter/pipeline.h, the one every command, the filter of
 * <simcrawl.h> and every plugin call: bytes -> main text (extract_doc_parse) -> tokens
 * (extract_tokens) -> weighted words (dedup_features_from_tokens) -> 64-bit simhash
 * (dedup_simhash), as docs/FINGERPRINT.md specifies, with the site's template blocks left
 * out when a template table (or a mark callback) is given.
 *
 * Nothing here prints: failures come back in struct filter_fp_result with the stage, the
 * library's code and a lower-case message, and each caller words its diagnostic. With
 * opts->text the input is plain UTF-8 text; it is validated here (the offset of the
 * first bad byte is reported) because extract_tokens() requires valid UTF-8.
 */
#include "filter/pipeline.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

static void set_msg(char *buf, size_t len, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));
static void set_msg(char *buf, size_t len, const char *fmt, ...)
{
    if (!buf || len == 0)
        return;
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, len, fmt, ap);
    va_end(ap);
}

/* Offset of the first byte that is not part of valid UTF-8 (RFC 3629: no overlongs, no
 * surrogates, nothing above U+10FFFF) or is NUL; len when all is valid. */
static size_t utf8_invalid_at(const unsigned char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        unsigned c = s[i];
        if (c >= 0x01 && c < 0x80) {
            i++;
            continue;
        }
        size_t n;
        unsigned lo = 0x80, hi = 0xbf;
        if (c >= 0xc2 && c <= 0xdf)
            n = 1;
        else if (c >= 0xe0 && c <= 0xef) {
            n = 2;
            if (c == 0xe0)
                lo = 0xa0;
            else if (c == 0xed)
                hi = 0x9f;
        } else if (c >= 0xf0 && c <= 0xf4) {
            n = 3;
            if (c == 0xf0)
                lo = 0x90;
            else if (c == 0xf4)
                hi = 0x8f;
        } else
            return i;     /* NUL, continuation byte, 0xc0/0xc1, 0xf5.. */
        if (n >= len - i) /* truncated sequence */
            return i;
        if (s[i + 1] < lo || s[i + 1] > hi)
            return i;
        for (size_t k = 2; k <= n; k++)
            if ((s[i + k] & 0xc0) != 0x80)
                return i;
        i += n + 1;
    }
    return len;
}

/* The parsed page goes to out when opts->keep_doc, else it is freed (NULL-safe). */
static void hand_over_doc(const struct filter_fp_opts *opts, struct filter_fp_result *out,
                          struct extract_doc *doc)
{
    if (opts->keep_doc)
        out->doc = doc;
    else
        extract_doc_free(doc);
}

/* A failure of the extractor or the tokeniser at stage: its code and its message. */
static void fail_extract(struct filter_fp_result *out, enum filter_fp_stage stage,
                         enum extract_code ec)
{
    out->stage = stage;
    out->extract_code = ec;
    set_msg(out->message, sizeof out->message, "%s", extract_strerror(ec));
}

static void fail_dedup(struct filter_fp_result *out, enum dedup_code code, size_t n_tokens,
                       size_t max_tokens)
{
    out->stage = FILTER_FP_DEDUP;
    out->dedup_code = code;
    out->n_tokens = n_tokens;
    if (code == DEDUP_ETOOSHORT && out->n_template_blocks)
        set_msg(out->message, sizeof out->message,
                "too little text to fingerprint (%zu word%s besides %zu in the site's "
                "template blocks)",
                n_tokens, n_tokens == 1 ? "" : "s", out->n_template_tokens);
    else if (code == DEDUP_ETOOSHORT)
        set_msg(out->message, sizeof out->message, "too little text to fingerprint (%zu word%s)",
                n_tokens, n_tokens == 1 ? "" : "s");
    else if (code == DEDUP_ETOOLARGE)
        set_msg(out->message, sizeof out->message,
                "too much text to fingerprint (more than %zu words)", max_tokens);
    else
        set_msg(out->message, sizeof out->message, "%s", dedup_strerror(code));
}

/* One block of the main text: its token string at [off, off + len) of the joined
 * buffer, its hash and its tokens. */
struct block {
    size_t off, len, n_tokens;
};

/* The blocks of the main text that have tokens, their token strings joined by one
 * space in all[0..all_len). */
struct joined {
    struct block *b;
    size_t nb, capb;
    char *all;
    size_t all_len, all_cap;
};

static void joined_free(struct joined *j)
{
    free(j->b);
    free(j->all);
}

/* Appends one block's token string bt (bl bytes, bn tokens) to j; 0, or -1 when out of
 * memory. */
static int join_block(struct joined *j, const char *bt, size_t bl, size_t bn)
{
    if (j->nb == j->capb) {
        size_t nc = j->capb ? j->capb * 2 : 64;
        struct block *nbk = realloc(j->b, nc * sizeof *nbk);
        if (!nbk)
            return -1;
        j->b = nbk;
        j->capb = nc;
    }
    size_t need = j->all_len + bl + 2;
    if (need > j->all_cap) {
        size_t nc = j->all_cap ? j->all_cap : 4096;
        while (nc < need)
            nc *= 2;
        char *na = realloc(j->all, nc);
        if (!na)
            return -1;
        j->all = na;
        j->all_cap = nc;
    }
    if (j->all_len)
        j->all[j->all_len++] = ' ';
    memcpy(j->all + j->all_len, bt, bl);
    j->b[j->nb++] = (struct block){j->all_len, bl, bn};
    j->all_len += bl;
    j->all[j->all_len] = '\0';
    return 0;
}

/* 1. Each line of text[0..tlen) (a block: "\n" separated, so a paragraph, a list item, a
 * heading, and each line of preformatted text) tokenised alone, the blocks with tokens
 * joined into j. EXTRACT_ENOMEM or extract_tokens()'s code on failure (j is
 * freed by the caller). */
static enum extract_code join_blocks(const char *text, size_t tlen, struct joined *j)
{
    for (size_t i = 0; i <= tlen;) {
        const char *e = memchr(text + i, '\n', tlen - i);
        size_t end = e ? (size_t)(e - text) : tlen;
        char *bt = NULL;
        size_t bl = 0, bn = 0;
        if (end > i) {
            enum extract_code ec = extract_tokens(text + i, end - i, &bt, &bl, &bn);
            if (ec != EXTRACT_OK)
                return ec;
        }
        if (bn > 0 && join_block(j, bt, bl, bn) != 0) {
            free(bt);
            return EXTRACT_ENOMEM;
        }
        free(bt);
        if (!e)
            break;
        i = end + 1;
    }
    return EXTRACT_OK;
}

/* The fingerprint of a stub (docs/FINGERPRINT.md, "A page with little text of its own"):
 * the hash of its whole token string, template blocks included, as a short text's
 * (dedup/shingle.c); never 0. */
static uint64_t stub_hash(const struct joined *j)
{
    uint64_t h = XXH3_64bits_withSeed(j->all ? j->all : "", j->all_len, DEDUP_SHORT_SEED);
    return h ? h : 1;
}

/* The hash of the page's name (docs/FINGERPRINT.md section 6): its own heading's token
 * string with its symbols (extract_name_tokens(), version 10), its label left out
 * (dedup_name_label()), dedup_name_hash(); for a page without a heading, its <title>'s,
 * without the tokens that hold a digit (dedup_title_tokens(), version 12); 0 when it has
 * neither. EXTRACT_OK or extract_tokens()'s code. */
static enum extract_code page_name(const struct extract_doc *doc, uint64_t *name)
{
    const char *h = extract_doc_heading(doc);
    int title = !h[0];
    if (title)
        h = extract_doc_title(doc);
    size_t hl = strlen(h), label = dedup_name_label(h, hl);
    char *t = NULL;
    size_t tl = 0, tn = 0;
    *name = 0;
    if (!h[0])
        return EXTRACT_OK;
    enum extract_code ec = extract_name_tokens(h + label, hl - label, &t, &tl, &tn);
    if (ec == EXTRACT_OK && title)
        tl = dedup_title_tokens(t, tl, &tn);
    if (ec == EXTRACT_OK)
        *name = dedup_name_hash(t, tl, tn);
    free(t);
    return ec;
}

/* The key of a text's symbols (docs/FINGERPRINT.md section 4, "A short text's symbols",
 * version 11): dedup_symbol_key() of the whole text[0..len), whose token string is
 * tokens[0..tokens_len) (a page keyed on its token string, a short text or a stub, keeps
 * every block: the blocks' token strings joined are the whole text's, test_template's
 * blocks_join_to_whole_text), so only the symbols' tokenisation is added. EXTRACT_OK or
 * the tokeniser's code. */
static enum extract_code text_symbols(const char *text, size_t len, const char *tokens,
                                      size_t tokens_len, uint64_t *key)
{
    char *sym = NULL;
    size_t sl = 0, sn = 0;
    *key = 0;
    enum extract_code ec = extract_name_tokens(text, len, &sym, &sl, &sn);
    if (ec == EXTRACT_OK)
        *key = dedup_symbol_key(sym, sl, tokens, tokens_len);
    free(sym);
    return ec;
}

/* 2. Marks the template blocks of opts->host in tpl (opts->mark or opts->templates;
 * hash and ntok: each block's hash and tokens); returns how many, or 0 when the page is
 * fingerprinted whole (a stub, below: *stub is then its fingerprint). */
static size_t mark_templates(const struct filter_fp_opts *opts, const struct joined *j,
                             const uint64_t *hash, const uint32_t *ntok, unsigned char *tpl,
                             uint64_t *stub)
{
    const char *host = opts->host ? opts->host : "";
    size_t nb = j->nb, marked = 0;
    *stub = 0;
    if (nb && !opts->blocks_only) {
        if (opts->mark)
            marked = opts->mark(opts->mark_userdata, host, strlen(host), hash, ntok, nb, tpl);
        else if (opts->templates)
            marked = dedup_templates_mark(opts->templates, host, strlen(host), hash, ntok, nb, tpl);
    }
    /* a page with a little text of its own among template blocks (a stub: its name,
     * then the sentences every stub of the site repeats) is fingerprinted whole: left
     * with its few own words it would get no fingerprint at all, and the same page in
     * another release would not be found. A stub is a copy only of a page with the same
     * whole text, though: with a few own words among template sentences, "near" says
     * nothing (two editions' stubs of one chapter differ only in their template lines,
     * two operands' stubs only in a name), so its fingerprint is the hash of its whole
     * token string, as a short text's is. A page that is nothing but template blocks
     * (the site's menu) has too little text. */
    if (marked) {
        size_t own = 0, whole = 0;
        size_t min = opts->min_tokens ? opts->min_tokens : DEDUP_MIN_TOKENS;
        for (size_t k = 0; k < nb; k++) {
            whole += j->b[k].n_tokens;
            if (!tpl[k])
                own += j->b[k].n_tokens;
        }
        if (own > 0 && (own < min || own < DEDUP_SHORT_TOKENS) && whole >= min) {
            *stub = stub_hash(j);
            marked = 0;
        }
    }
    return marked;
}

#ifdef DEDUP_BENCH_SEEDS
/* Benchmarks only (a build made with -DDEDUP_BENCH_SEEDS, never a shipped one): with
 * SIMCRAWL_BENCH_DUMP=FILE, every page fingerprinted with its template blocks (pass 2 of
 * a collection) appends one line to FILE: XXH3_64bits of the page's bytes, its
 * fingerprint (or "-" for too little text), 1 when it was fingerprinted whole (a page
 * with little text of its own), its own token string (template blocks left out, and
 * with SIMCRAWL_BENCH_REPEATS the repeated blocks) and its whole token string,
 * TAB-separated. tests/bench/weight_study.py recomputes the fingerprint under other
 * weight schemes from them. */
static _Thread_local char *bench_own, *bench_whole;

static void bench_note(const struct joined *j, const unsigned char *tpl, const unsigned char *rep)
{
    free(bench_own);
    free(bench_whole);
    bench_own = malloc(j->all_len + 1);
    bench_whole = malloc(j->all_len + 1);
    if (!bench_own || !bench_whole)
        return;
    size_t n = 0;
    for (size_t k = 0; k < j->nb; k++) {
        if (tpl[k] || rep[k])
            continue;
        if (n)
            bench_own[n++] = ' ';
        memcpy(bench_own + n, j->all + j->b[k].off, j->b[k].len);
        n += j->b[k].len;
    }
    bench_own[n] = '\0';
    memcpy(bench_whole, j->all ? j->all : "", j->all_len);
    bench_whole[j->all_len] = '\0';
}

static void bench_dump(const char *html, size_t len, const struct filter_fp_result *out)
{
    const char *path = getenv("SIMCRAWL_BENCH_DUMP");
    if (path && bench_own && bench_whole) {
        FILE *fp = fopen(path, "a");
        if (fp) {
            char fpx[17] = "-";
            if (out->stage == FILTER_FP_DONE)
                snprintf(fpx, sizeof fpx, "%016llx", (unsigned long long)out->fingerprint);
            fprintf(fp, "%016llx\t%s\t%d\t%s\t%s\n", (unsigned long long)XXH3_64bits(html, len),
                    fpx, out->stub_hash != 0, bench_own, bench_whole);
            fclose(fp);
        }
    }
    free(bench_own);
    free(bench_whole);
    bench_own = bench_whole = NULL;
}
#define BENCH_NOTE(j, tpl, rep) bench_note(j, tpl, rep)
#define BENCH_DUMP(html, len, out) bench_dump(html, len, out)
#else
#define BENCH_NOTE(j, tpl, rep) ((void)0)
#define BENCH_DUMP(html, len, out) ((void)0)
#endif

/* 3. The token string of the blocks not marked in tpl (all of j when marked is 0: then
 * j's buffer is taken over), *kept_len bytes and *kept_n tokens; counts the template
 * blocks and tokens in out. NULL when out of memory. */
static char *own_tokens(struct joined *j, const unsigned char *tpl, size_t marked,
                        struct filter_fp_result *out, size_t *kept_len, size_t *kept_n)
{
    char *kept;
    *kept_len = *kept_n = 0;
    if (marked == 0) {
        kept = j->all ? j->all : strdup(""); /* nothing left out: the whole token string */
        j->all = NULL;
        if (!kept)
            return NULL;
        *kept_len = j->all_len;
        for (size_t k = 0; k < j->nb; k++)
            *kept_n += j->b[k].n_tokens;
        return kept;
    }
    kept = malloc(j->all_len + 1);
    if (!kept)
        return NULL;
    for (size_t k = 0; k < j->nb; k++) {
        const struct block *b = &j->b[k];
        if (tpl[k]) {
            out->n_template_blocks++;
            out->n_template_tokens += b->n_tokens;
            continue;
        }
        if (*kept_len)
            kept[(*kept_len)++] = ' ';
        memcpy(kept + *kept_len, j->all + b->off, b->len);
        *kept_len += b->len;
        *kept_n += b->n_tokens;
    }
    kept[*kept_len] = '\0';
    return kept;
}

/* Blocks repeated within one page, a study that is not part of the fingerprint
 * (docs/BENCHMARKS.md, "Blocks repeated within a page (rep11p)"): a build made with
 * -DDEDUP_BENCH_SEEDS (never a shipped one) reads SIMCRAWL_BENCH_REPEATS, "once" (a block
 * counts once, at its first place) or "all" (every copy of a block that repeats is left
 * out), applied to the simhash of a page of DEDUP_SHORT_TOKENS kept tokens or more that is
 * no stub; what is short is still decided on all kept blocks. Off in every other build. */
enum repeats { REPEATS_OFF = 0, REPEATS_ONCE, REPEATS_ALL };

static enum repeats repeats_rule(void)
{
#ifdef DEDUP_BENCH_SEEDS
    const char *e = getenv("SIMCRAWL_BENCH_REPEATS");
    if (e && strcmp(e, "once") == 0)
        return REPEATS_ONCE;
    if (e && strcmp(e, "all") == 0)
        return REPEATS_ALL;
#endif
    return REPEATS_OFF;
}

/* The token string of a page's blocks with the repeats left out, when some repeat: what
 * the study fingerprints. */
struct distinct {
    char *tokens; /* NULL when no block repeats (or the study is off) */
    size_t len;
};

/* Marks in rep the blocks not marked in tpl whose token string (hash) is that of an
 * earlier such block, and with REPEATS_ALL that earlier block too; returns how many. -1
 * when out of memory. HOW IT WORKS: an open-addressing set of block indexes (slot = hash
 * & mask, linear probing, at most half full); two blocks are one when their hashes are
 * equal (XXH3-64 of the token string). */
static long mark_repeats(const struct joined *j, const uint64_t *hash, const unsigned char *tpl,
                         unsigned char *rep, enum repeats rule)
{
    size_t slots = 16;
    while (slots < 2 * j->nb)
        slots *= 2;
    uint32_t *set = calloc(slots, sizeof *set);
    if (!set)
        return -1;
    long n = 0;
    for (size_t k = 0; k < j->nb; k++) {
        if (tpl[k])
            continue;
        size_t i = (size_t)hash[k] & (slots - 1);
        while (set[i] && hash[set[i] - 1] != hash[k])
            i = (i + 1) & (slots - 1);
        if (set[i]) {
            rep[k] = 1;
            n++;
            if (rule == REPEATS_ALL && !rep[set[i] - 1]) {
                rep[set[i] - 1] = 1;
                n++;
            }
        } else
            set[i] = (uint32_t)(k + 1);
    }
    free(set);
    return n;
}

/* The token string of the blocks marked neither in tpl nor in rep, joined by one space
 * (*len bytes); NULL when out of memory. */
static char *distinct_tokens(const struct joined *j, const unsigned char *tpl,
                             const unsigned char *rep, size_t *len)
{
    char *d = malloc(j->all_len + 1);
    *len = 0;
    if (!d)
        return NULL;
    for (size_t k = 0; k < j->nb; k++) {
        if (tpl[k] || rep[k])
            continue;
        if (*len)
            d[(*len)++] = ' ';
        memcpy(d + *len, j->all + j->b[k].off, j->b[k].len);
        *len += j->b[k].len;
    }
    d[*len] = '\0';
    return d;
}

/*
 * The template-aware tokens of text[0..tlen) (docs/FINGERPRINT.md, "Template blocks"): each line
 * ("\n" separated block) is tokenised alone; blocks without tokens are ignored; the others'
 * token strings joined by one space are the whole text's token string. Template blocks
 * of opts->host (opts->templates or opts->mark) are left out of *tokens. Fills out's
 * block fields (keep_blocks) and template counts. EXTRACT_ENOMEM or extract_tokens()'s
 * code on failure (nothing to free then).
 */
static enum extract_code block_tokens(const char *text, size_t tlen,
                                      const struct filter_fp_opts *opts,
                                      struct filter_fp_result *out, char **tokens,
                                      size_t *tokens_len, size_t *n_tokens, struct distinct *dist)
{
    struct joined j = {0};
    uint64_t *hash = NULL;
    uint32_t *ntok = NULL;
    unsigned char *tpl = NULL, *rep = NULL;
    char *kept = NULL;
    size_t kept_len = 0, kept_n = 0;
    enum extract_code ec = join_blocks(text, tlen, &j);
    if (ec != EXTRACT_OK)
        goto fail;
    size_t nb = j.nb;
    hash = malloc((nb ? nb : 1) * sizeof *hash);
    ntok = malloc((nb ? nb : 1) * sizeof *ntok);
    tpl = calloc(nb ? nb : 1, 1);
    rep = calloc(nb ? nb : 1, 1);
    if (!hash || !tpl || !ntok || !rep)
        goto oom;
    for (size_t k = 0; k < nb; k++) {
        hash[k] = dedup_template_block_hash(j.all + j.b[k].off, j.b[k].len);
        ntok[k] = j.b[k].n_tokens > UINT32_MAX ? UINT32_MAX : (uint32_t)j.b[k].n_tokens;
    }
    if (opts->keep_blocks) {
        /* an exact copy of a page has the same whole token string, template blocks too */
        uint64_t h = XXH3_64bits_withSeed(j.all ? j.all : "", j.all_len, DEDUP_TEMPLATE_SEED);
        out->doc_hash = h ? h : 1;
    }
    size_t marked = mark_templates(opts, &j, hash, ntok, tpl, &out->stub_hash);
    /* the study of repeated blocks: a short text and a stub keep their token string */
    enum repeats rule = opts->blocks_only || out->stub_hash ? REPEATS_OFF : repeats_rule();
    size_t own_n = 0; /* counted only for the study: shipped builds skip the loop */
    for (size_t k = 0; rule != REPEATS_OFF && k < nb; k++)
        own_n += tpl[k] ? 0 : j.b[k].n_tokens;
    long repeats = 0;
    if (rule != REPEATS_OFF && own_n >= DEDUP_SHORT_TOKENS &&
        (repeats = mark_repeats(&j, hash, tpl, rep, rule)) < 0)
        goto oom;
    if (repeats > 0) {
        dist->tokens = distinct_tokens(&j, tpl, rep, &dist->len);
        if (!dist->tokens)
            goto oom;
    }
    if (!opts->blocks_only)
        BENCH_NOTE(&j, tpl, rep);
    kept = own_tokens(&j, tpl, marked, out, &kept_len, &kept_n);
    if (!kept)
        goto oom;
    if (opts->keep_blocks) {
        out->blocks = hash;
        out->n_blocks = nb;
        hash = NULL;
    }
    joined_free(&j);
    free(hash);
    free(ntok);
    free(tpl);
    free(rep);
    *tokens = kept;
    *tokens_len = kept_len;
    *n_tokens = kept_n;
    return EXTRACT_OK;
oom:
    ec = EXTRACT_ENOMEM;
fail:
    joined_free(&j);
    free(hash);
    free(ntok);
    free(tpl);
    free(rep);
    free(dist->tokens);
    dist->tokens = NULL;
    free(out->blocks);
    out->blocks = NULL;
    out->n_blocks = 0;
    return ec;
}

int filter_fingerprint_page(const char *html, size_t len, const char *content_type,
                            const char *base_url, const struct filter_fp_opts *opts,
                            struct filter_fp_result *out)
{
    static const struct filter_fp_opts no_opts;
    if (!opts)
        opts = &no_opts;
    memset(out, 0, sizeof *out);
    struct extract_doc *doc = NULL;
    char *tokens = NULL;
    size_t tokens_len = 0, n_tokens = 0;
    struct dedup_features *f = NULL;
    const char *src = html; /* the whole text the tokens come from */
    size_t src_len = len;
    struct distinct dist = {0};
    enum extract_code ec;
    int by_blocks = opts->templates || opts->mark || opts->keep_blocks || opts->blocks_only ||
                    repeats_rule() != REPEATS_OFF;

    if (opts->text) {
        size_t bad = utf8_invalid_at((const unsigned char *)html, len);
        if (bad < len) {
            out->stage = FILTER_FP_TOKENS;
            out->extract_code = EXTRACT_EINVAL;
            if (html[bad] == '\0')
                set_msg(out->message, sizeof out->message,
                        "input is binary, not text (NUL byte at offset %zu)", bad);
            else
                set_msg(out->message, sizeof out->message, "invalid UTF-8 at byte offset %zu", bad);
            goto fail;
        }
        if (by_blocks)
            ec = block_tokens(html, len, opts, out, &tokens, &tokens_len, &n_tokens, &dist);
        else
            ec = extract_tokens(html, len, &tokens, &tokens_len, &n_tokens);
    } else {
        struct extract_opts eo = {0};
        eo.content_type = content_type;
        eo.base_url = base_url;
        eo.max_bytes = opts->max_bytes;
        eo.max_depth = opts->max_depth;
        eo.max_links = opts->max_links;
        ec = extract_doc_parse(html, len, &eo, &doc);
        if (ec == EXTRACT_OK)
            out->truncated = extract_doc_truncated(doc, &out->cuts);
        if (ec != EXTRACT_OK) {
            fail_extract(out, FILTER_FP_EXTRACT, ec);
            goto fail;
        }
        size_t tlen = 0;
        const char *text = extract_doc_text(doc, &tlen);
        src = text;
        src_len = tlen;
        ec = page_name(doc, &out->name_hash);
        if (ec == EXTRACT_OK && by_blocks)
            ec = block_tokens(text, tlen, opts, out, &tokens, &tokens_len, &n_tokens, &dist);
        else if (ec == EXTRACT_OK)
            ec = extract_tokens(text, tlen, &tokens, &tokens_len, &n_tokens);
    }
    if (ec != EXTRACT_OK) {
        fail_extract(out, FILTER_FP_TOKENS, ec);
        goto fail;
    }

    if (opts->blocks_only) {
        out->n_tokens = n_tokens;
        out->stage = FILTER_FP_DONE;
        free(tokens);
        hand_over_doc(opts, out, doc);
        return 0;
    }
    f = dedup_features_new();
    if (!f) {
        fail_dedup(out, DEDUP_ENOMEM, n_tokens, 0);
        goto fail;
    }
    struct dedup_opts dopts = {0};
    dopts.idf = opts->idf;
    dopts.min_tokens = opts->min_tokens;
    /* the study of repeated blocks fingerprints the blocks left (dist); the token
     * string kept for the caller (MinHash's input) has every block */
    enum dedup_code dc;
    int distinct = dist.tokens != NULL;
    if (distinct) {
        dopts.text_tokens = n_tokens;
        dc = dedup_features_from_tokens(f, dist.tokens, dist.len, &dopts);
    } else
        dc = dedup_features_from_tokens(f, tokens, tokens_len, &dopts);
    free(dist.tokens);
    dist.tokens = NULL;
    if (dc != DEDUP_OK) {
        fail_dedup(out, dc, distinct ? n_tokens : dedup_features_token_count(f),
                   DEDUP_DEFAULT_MAX_TOKENS);
        goto fail;
    }
    /* a stub is keyed on its whole text, its name included */
    if (out->stub_hash)
        out->name_hash = 0;
    out->fingerprint = out->stub_hash ? out->stub_hash : dedup_simhash(f) ^ out->name_hash;
    /* a page keyed on its token string is keyed on its symbols too (version 11) */
    if (out->stub_hash || n_tokens < DEDUP_SHORT_TOKENS) {
        uint64_t key = 0;
        ec = text_symbols(src, src_len, tokens, tokens_len, &key);
        if (ec != EXTRACT_OK) {
            fail_extract(out, FILTER_FP_TOKENS, ec);
            goto fail;
        }
        out->fingerprint ^= key;
    }
    out->n_tokens = n_tokens;
    out->n_features = dedup_features_count(f);
    out->stage = FILTER_FP_DONE;
    if (!opts->text)
        BENCH_DUMP(html, len, out);
    if (opts->keep_features)
        out->features = f;
    else
        dedup_features_free(f);
    if (opts->keep_tokens) {
        out->tokens = tokens;
        out->tokens_len = tokens_len;
    } else
        free(tokens);
    hand_over_doc(opts, out, doc);
    return 0;
fail:
    if (!opts->text)
        BENCH_DUMP(html, len, out);
    dedup_features_free(f);
    free(dist.tokens);
    free(tokens);
    hand_over_doc(opts, out, doc); /* parsed, but too little text (or no tokens): a page */
    return -1;
}

int filter_fp_result_too_little_text(const struct filter_fp_result *out)
{
    if (out->stage == FILTER_FP_DEDUP)
        return out->dedup_code == DEDUP_ETOOSHORT;
    if (out->stage == FILTER_FP_EXTRACT)
        return out->extract_code == EXTRACT_EEMPTY || out->extract_code == EXTRACT_ENOTEXT;
    return 0;
}

void filter_fp_result_release(struct filter_fp_result *out)
{
    if (!out)
        return;
    free(out->blocks);
    dedup_features_free(out->features);
    free(out->tokens);
    extract_doc_free(out->doc);
    memset(out, 0, sizeof *out);
}

size_t filter_url_host_key(const char *url, char out[DEDUP_TEMPLATE_MAX_KEY + 1])
{
    size_t n = 0;
    out[0] = '\0';
    const char *p = url ? strstr(url, "://") : NULL;
    if (!p)
        return 0;
    for (const char *q = url; q < p; q++) /* a scheme is letters, digits, + - . */
        if (!((*q >= 'a' && *q <= 'z') || (*q >= 'A' && *q <= 'Z') || (*q >= '0' && *q <= '9') ||
              *q == '+' || *q == '-' || *q == '.'))
            return 0;
    p += 3;
    size_t alen = strcspn(p, "/?#");
    const char *at = memchr(p, '@', alen);
    while (at) { /* the last '@' of the authority ends the user information */
        alen -= (size_t)(at + 1 - p);
        p = at + 1;
        at = memchr(p, '@', alen);
    }
    size_t hlen = alen;
    if (hlen && p[0] == '[') {
        const char *rb = memchr(p, ']', alen);
        hlen = rb ? (size_t)(rb - p) + 1 : alen;
    } else {
        const char *colon = memchr(p, ':', alen);
        if (colon)
            hlen = (size_t)(colon - p);
    }
    if (hlen > DEDUP_TEMPLATE_MAX_KEY)
        hlen = DEDUP_TEMPLATE_MAX_KEY;
    for (; n < hlen; n++)
        out[n] = (p[n] >= 'A' && p[n] <= 'Z') ? (char)(p[n] - 'A' + 'a') : p[n];
    out[n] = '\0';
    return n;
}
