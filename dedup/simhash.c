/*
 * The 64-bit simhash of a weighted feature set (docs/FINGERPRINT.md, section 6,
 * "Simhash"; unchanged since version 1), after Charikar, "Similarity estimation techniques from
 * rounding algorithms", STOC 2002, as used for web pages by Manku, Jain, Das Sarma, "Detecting
 * near-duplicates for web crawling", WWW 2007.
 *
 * For each feature with hash h and integer weight w, and each bit i in 0..63:
 *     V[i] += (h >> i & 1) ? w : -w;
 * bit i of the fingerprint is 1 iff V[i] > 0 (a tie gives 0). dedup__simhash_naive() is
 * that loop, word for word; dedup__simhash_fast() gives the same bits several times faster
 * (HOW IT WORKS below; tests/bench/bench_simhash.c measures both).
 * Also the error strings of the module and the hex form of a fingerprint.
 */
#include "dedup/dedup_int.h"

#include <string.h>
#include <xxhash.h>

/* One line per code; the index code's authors append their lines here. */
static const char *const STRERROR[] = {
    [DEDUP_OK] = "ok",
    [DEDUP_ENOMEM] = "out of memory",
    [DEDUP_EINVAL] = "invalid argument",
    [DEDUP_ETOOSHORT] = "too little text to fingerprint",
    [DEDUP_ETOOLARGE] = "too large",
    [DEDUP_EFORMAT] = "bad file format",
    [DEDUP_EIO] = "input/output error",
    [DEDUP_EVERSION] = "unsupported file format version",
    [DEDUP_ETRUNCATED] = "file is truncated",
    [DEDUP_ECHECKSUM] = "checksum mismatch (file is damaged)",
    [DEDUP_ELOCKED] = "locked by another writer",
};

const char *dedup_strerror(enum dedup_code code)
{
    if ((unsigned)code < sizeof STRERROR / sizeof STRERROR[0] && STRERROR[code])
        return STRERROR[code];
    return "unknown error";
}

uint64_t dedup__simhash_naive(const uint64_t *hash, const uint32_t *weight, size_t n)
{
    int64_t v[64] = {0};
    for (size_t f = 0; f < n; f++)
        for (unsigned i = 0; i < 64; i++)
            v[i] += (hash[f] >> i & 1) ? (int64_t)weight[f] : -(int64_t)weight[f];
    uint64_t fp = 0;
    for (unsigned i = 0; i < 64; i++)
        if (v[i] > 0)
            fp |= (uint64_t)1 << i;
    return fp;
}

/* SPREAD[b]: the 8 bits of byte b spread out to the low bit of 8 bytes (bit j -> byte j). */
#define SP(b)                                                                                      \
    ((uint64_t)((b)&1) | (uint64_t)((b) >> 1 & 1) << 8 | (uint64_t)((b) >> 2 & 1) << 16 |          \
     (uint64_t)((b) >> 3 & 1) << 24 | (uint64_t)((b) >> 4 & 1) << 32 |                             \
     (uint64_t)((b) >> 5 & 1) << 40 | (uint64_t)((b) >> 6 & 1) << 48 |                             \
     (uint64_t)((b) >> 7 & 1) << 56)
#define SP4(b) SP(b), SP((b) + 1), SP((b) + 2), SP((b) + 3)
#define SP16(b) SP4(b), SP4((b) + 4), SP4((b) + 8), SP4((b) + 12)
#define SP64(b) SP16(b), SP16((b) + 16), SP16((b) + 32), SP16((b) + 48)
static const uint64_t SPREAD[256] = {SP64(0), SP64(64), SP64(128), SP64(192)};

#define GROUPS 16      /* weight classes counted with the byte-lane kernel */
#define PLANES 32      /* bit planes of a 32-bit weight */
#define LANE_FLUSH 255 /* a byte lane holds at most 255 */

/* Bit counts of a set of hashes: how many (n), and per bit how many have it set. */
struct lanes {
    uint32_t pending; /* hashes in acc since the last flush, < LANE_FLUSH */
    uint64_t n;
    uint64_t acc[8]; /* acc[j] byte b counts bit 8j + b, up to 255 */
    uint64_t ones[64];
};

static void lanes_init(struct lanes *l)
{
    memset(l, 0, sizeof *l);
}

static void lanes_flush(struct lanes *l)
{
    for (unsigned j = 0; j < 8; j++) {
        uint64_t a = l->acc[j];
        for (unsigned b = 0; b < 8; b++)
            l->ones[8 * j + b] += a >> (8 * b) & 0xff;
        l->acc[j] = 0;
    }
    l->pending = 0;
}

static inline void lanes_add(struct lanes *l, uint64_t h)
{
    l->acc[0] += SPREAD[h & 0xff];
    l->acc[1] += SPREAD[h >> 8 & 0xff];
    l->acc[2] += SPREAD[h >> 16 & 0xff];
    l->acc[3] += SPREAD[h >> 24 & 0xff];
    l->acc[4] += SPREAD[h >> 32 & 0xff];
    l->acc[5] += SPREAD[h >> 40 & 0xff];
    l->acc[6] += SPREAD[h >> 48 & 0xff];
    l->acc[7] += SPREAD[h >> 56];
    l->n++;
    if (++l->pending == LANE_FLUSH)
        lanes_flush(l);
}

/* V[i] += m * (2 * ones[i] - n): what the hashes of l contribute at weight m each. */
static void lanes_apply(struct lanes *l, int64_t m, int64_t v[64])
{
    lanes_flush(l);
    for (unsigned i = 0; i < 64; i++)
        v[i] += m * (2 * (int64_t)l->ones[i] - (int64_t)l->n);
}

/*
 * HOW IT WORKS. All features of one weight w contribute w * (2 * ones[i] - n) to V[i],
 * where n is how many there are and ones[i] how many have bit i set: so it suffices to
 * count bits per weight class. Counting is bit-sliced: SPREAD turns a byte of the hash
 * into eight 0/1 bytes, and eight 64-bit adds count all 64 bits of a feature at once in
 * 8-bit lanes, flushed into 64-bit totals every 255 features (before a lane can overflow).
 * That is 8 loads and 8 adds per feature instead of 64 conditional adds.
 * Without IDF, weights depend on the term frequency only, so nearly all features fall in
 * a few classes (tf 1 dominates): up to GROUPS classes are kept in a table indexed by a
 * hash of the weight. A feature whose slot is taken by another weight (with IDF, most
 * weights differ) is split into the bit planes of its weight instead: w = sum of 2^b over
 * its set bits b, and plane b counts the hashes of every feature with bit b set, so plane b
 * contributes 2^b * (2 * ones[i] - n) -- popcount(w) lane adds instead of 64 steps.
 * Every sum is an exact integer, so the result equals dedup__simhash_naive() bit for bit,
 * whatever the order or grouping.
 */
uint64_t dedup__simhash_fast(const uint64_t *hash, const uint32_t *weight, size_t n)
{
    struct {
        uint32_t w; /* 0: slot unused (weights are >= 1) */
        struct lanes l;
    } g[GROUPS];
    struct lanes plane[PLANES];
    uint32_t planes_used = 0;
    int64_t v[64] = {0};
    for (unsigned k = 0; k < GROUPS; k++)
        g[k].w = 0;
    for (size_t f = 0; f < n; f++) {
        uint32_t w = weight[f];
        uint64_t h = hash[f];
        unsigned slot = (uint32_t)(w * 0x9E3779B1u) >> 28;
        if (w == 0) {
            continue; /* contributes nothing */
        } else if (g[slot].w == w) {
            lanes_add(&g[slot].l, h);
        } else if (g[slot].w == 0) {
            g[slot].w = w;
            lanes_init(&g[slot].l);
            lanes_add(&g[slot].l, h);
        } else {
            for (uint32_t m = w; m; m &= m - 1) {
                unsigned b = (unsigned)__builtin_ctz(m);
                if (!(planes_used >> b & 1)) {
                    planes_used |= 1u << b;
                    lanes_init(&plane[b]);
                }
                lanes_add(&plane[b], h);
            }
        }
    }
    for (unsigned k = 0; k < GROUPS; k++)
        if (g[k].w)
            lanes_apply(&g[k].l, g[k].w, v);
    for (unsigned b = 0; b < PLANES; b++)
        if (planes_used >> b & 1)
            lanes_apply(&plane[b], (int64_t)1 << b, v);
    uint64_t fp = 0;
    for (unsigned i = 0; i < 64; i++)
        if (v[i] > 0)
            fp |= (uint64_t)1 << i;
    return fp;
}

uint64_t dedup_simhash(const struct dedup_features *f)
{
    if (!f || f->n == 0)
        return 0;
    if (f->is_short)
        return f->exact;
    return dedup__simhash_fast(f->hash, f->weight, f->n);
}

uint64_t dedup_name_hash(const char *tokens, size_t len, size_t n_tokens)
{
    if (n_tokens == 0 || n_tokens > DEDUP_NAME_MAX_TOKENS)
        return 0;
    return XXH3_64bits_withSeed(tokens, len, DEDUP_NAME_SEED);
}

uint64_t dedup_symbol_key(const char *sym, size_t sym_len, const char *tokens, size_t len)
{
    if (sym_len == len && (len == 0 || memcmp(sym, tokens, len) == 0))
        return 0;
    return XXH3_64bits_withSeed(sym, sym_len, DEDUP_SYMBOL_SEED);
}

size_t dedup_title_tokens(char *tokens, size_t len, size_t *n_tokens)
{
    size_t out = 0, n = 0;
    for (size_t i = 0; i < len;) {
        size_t end = i, digit = 0;
        for (; end < len && tokens[end] != ' '; end++)
            digit |= (unsigned)(tokens[end] - '0') < 10u;
        if (!digit && end > i) {
            if (out)
                tokens[out++] = ' ';
            memmove(tokens + out, tokens + i, end - i);
            out += end - i;
            n++;
        }
        i = end + 1;
    }
    *n_tokens = n;
    return out;
}

/* A byte of a label's word: an ASCII letter or a byte of a multi-byte UTF-8 character
 * (a translated manual's "Kapitel", "Capítulo", "Глава"). */
static int label_letter(unsigned char c)
{
    return (unsigned)((c | 0x20) - 'a') < 26u || c >= 0x80;
}

static int label_digit(unsigned char c)
{
    return (unsigned)(c - '0') < 10u;
}

#define LABEL_WORD_MAX 24 /* bytes of a label's word ("Chapter", "Appendix", "Глава") */

size_t dedup_name_label(const char *heading, size_t len)
{
    const unsigned char *h = (const unsigned char *)heading;
    size_t i = 0, digits = 0, groups = 0;
    int word = 0;
    while (i < len && (h[i] == ' ' || h[i] == '\t'))
        i++;
    size_t w0 = i;
    while (i < len && i - w0 <= LABEL_WORD_MAX && label_letter(h[i]))
        i++;
    if (i > w0 && i - w0 <= LABEL_WORD_MAX && i < len && h[i] == ' ') {
        word = 1; /* "Chapter ", then the number */
        i++;
    } else {
        i = w0;
    }
    /* the number: groups of ASCII digits parted by dots; the first may be one capital
     * letter or a Roman numeral in capitals ("B", "IV", "F.1") */
    for (;;) {
        size_t g = i;
        while (i < len && label_digit(h[i]))
            i++;
        if (i > g) {
            digits++;
        } else if (groups == 0 && i < len && h[i] && strchr("IVXLCDM", h[i])) {
            while (i < len && h[i] && strchr("IVXLCDM", h[i]))
                i++;
        } else if (groups == 0 && i < len && (unsigned)(h[i] - 'A') < 26u) {
            i++;
        } else {
            return 0; /* no number, or a dot with no group after it */
        }
        groups++;
        if (i + 1 < len && h[i] == '.' && label_digit(h[i + 1])) {
            i++;
            continue;
        }
        break;
    }
    /* then a dot and a blank; with no word, a digit in the number ("8.3. ", "A.1. ", not
     * the initial of "A. Lincoln"); and a name after it */
    if (!(word || digits) || i + 1 >= len || h[i] != '.' || (h[i + 1] != ' ' && h[i + 1] != '\t'))
        return 0;
    i += 2;
    size_t end = i;
    while (i < len && (h[i] == ' ' || h[i] == '\t'))
        i++;
    return i < len ? end : 0;
}

char *dedup_fingerprint_format(uint64_t fp, char buf[17])
{
    static const char hex[] = "0123456789abcdef";
    for (int i = 15; i >= 0; i--) {
        buf[i] = hex[fp & 0xf];
        fp >>= 4;
    }
    buf[16] = '\0';
    return buf;
}

/* Each hex digit's value + 1, 0 for any other byte: a table lookup per digit, no branch
 * (random digits made the comparisons a misprediction each; a 10M-line list is 160M
 * digits). */
static const unsigned char hex_value1[256] = {
    ['0'] = 1,  ['1'] = 2,  ['2'] = 3,  ['3'] = 4,  ['4'] = 5,  ['5'] = 6,  ['6'] = 7,  ['7'] = 8,
    ['8'] = 9,  ['9'] = 10, ['a'] = 11, ['b'] = 12, ['c'] = 13, ['d'] = 14, ['e'] = 15, ['f'] = 16,
    ['A'] = 11, ['B'] = 12, ['C'] = 13, ['D'] = 14, ['E'] = 15, ['F'] = 16};

enum dedup_code dedup_fingerprint_parse(const char *s, size_t len, uint64_t *out)
{
    if (!s || len != 16)
        return DEDUP_EFORMAT;
    uint64_t v = 0;
    unsigned bad = 0;
    for (size_t i = 0; i < 16; i++) {
        unsigned d = hex_value1[(unsigned char)s[i]];
        bad |= d == 0;
        v = v << 4 | ((d - 1) & 15);
    }
    if (bad)
        return DEDUP_EFORMAT;
    *out = v;
    return DEDUP_OK;
}
