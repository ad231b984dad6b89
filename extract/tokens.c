/*
 * tokens.c: the normalised word tokens a fingerprint is computed from.
 *
 * FINGERPRINT v1, "Tokens" (docs/FINGERPRINT.md quotes this rule; changing it changes
 * every fingerprint, so it is versioned there):
 *  1. Normalise the text (valid UTF-8) with utf8proc 2.x, options
 *     UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD |
 *     UTF8PROC_STRIPMARK | UTF8PROC_IGNORE, i.e. exactly utf8proc_map() with these
 *     options: NFKC, full case folding (ß -> ss, ﬁ -> fi), combining marks (Mn, Mc, Me)
 *     removed (é -> e), default-ignorable code points removed (soft hyphen, ZWJ, ZWSP:
 *     they do not split a word).
 *  2. Classify each resulting code point. A word character is one of general category
 *     L* (letters), M* (marks), N* (digits, numerals) or Pc (connector punctuation: _).
 *     A CJK code point is a word character in U+3040-30FF (Hiragana, Katakana),
 *     U+31F0-31FF, U+3400-4DBF, U+4E00-9FFF, U+F900-FAFF or U+20000-2FA1F whose
 *     category is one of those; every other code point (space, punctuation, symbols,
 *     controls, and the CJK-range punctuation U+30A0, U+30FB) separates tokens.
 *  3. A token is a maximal run of non-CJK word characters; every CJK word character is a
 *     token of its own (so CJK text yields character unigrams, and the shingles above
 *     them character n-grams).
 *  4. A token longer than EXTRACT_TOKEN_MAX_BYTES (64) bytes of UTF-8 is cut to its
 *     longest prefix of whole code points within 64 bytes (base64 blobs and hashes stay
 *     one bounded token instead of many or none).
 *  5. Output: the tokens in order, separated by one ASCII space.
 * Examples: "Straße" -> "strasse"; "Ｆｕｌｌ-ｗｉｄｔｈ ﬁle_2" -> "full width file_2";
 * "naïve café" -> "naive cafe"; "東京タワー" -> "東 京 タ ワ ー"; "3.14" -> "3 14".
 *
 * HOW IT WORKS (fast path): NFKC and case folding are the identity on ASCII except A-Z,
 * and no canonical composition has an ASCII second element, so ASCII bytes are classified
 * by a table without utf8proc. Maximal non-ASCII runs go through utf8proc_decompose() +
 * utf8proc_normalize_utf32() (what utf8proc_map() does, without its malloc) into a stack
 * buffer. Because marks are stripped during decomposition, the only compositions left are
 * Hangul jamo, so a long run is cut into chunks before a non-Hangul code point without
 * changing the result; memory stays bounded for any input.
 */
#include "extract/extract_int.h"

#include <stdlib.h>
#include <string.h>
#include <utf8proc.h>

#define CHUNK_CPS 128    /* code points of a non-ASCII run normalised at once */
#define MAX_EXPANSION 18 /* longest NFKC + case fold expansion of one code point */

#define TOKEN_OPTIONS                                                                              \
    (UTF8PROC_STABLE | UTF8PROC_COMPAT | UTF8PROC_COMPOSE | UTF8PROC_CASEFOLD |                    \
     UTF8PROC_STRIPMARK | UTF8PROC_IGNORE)

/* ASCII: 0 separates, otherwise the (lower-cased) byte of a word. */
static const unsigned char ascii_word[128] = {
    ['0'] = '0', ['1'] = '1', ['2'] = '2', ['3'] = '3', ['4'] = '4', ['5'] = '5', ['6'] = '6',
    ['7'] = '7', ['8'] = '8', ['9'] = '9', ['_'] = '_', ['a'] = 'a', ['b'] = 'b', ['c'] = 'c',
    ['d'] = 'd', ['e'] = 'e', ['f'] = 'f', ['g'] = 'g', ['h'] = 'h', ['i'] = 'i', ['j'] = 'j',
    ['k'] = 'k', ['l'] = 'l', ['m'] = 'm', ['n'] = 'n', ['o'] = 'o', ['p'] = 'p', ['q'] = 'q',
    ['r'] = 'r', ['s'] = 's', ['t'] = 't', ['u'] = 'u', ['v'] = 'v', ['w'] = 'w', ['x'] = 'x',
    ['y'] = 'y', ['z'] = 'z', ['A'] = 'a', ['B'] = 'b', ['C'] = 'c', ['D'] = 'd', ['E'] = 'e',
    ['F'] = 'f', ['G'] = 'g', ['H'] = 'h', ['I'] = 'i', ['J'] = 'j', ['K'] = 'k', ['L'] = 'l',
    ['M'] = 'm', ['N'] = 'n', ['O'] = 'o', ['P'] = 'p', ['Q'] = 'q', ['R'] = 'r', ['S'] = 's',
    ['T'] = 't', ['U'] = 'u', ['V'] = 'v', ['W'] = 'w', ['X'] = 'x', ['Y'] = 'y', ['Z'] = 'z',
};

struct tok {
    struct ex_buf out;
    size_t tok_start; /* offset of the current token in out, or SIZE_MAX when none */
    size_t n_tokens;
};

static int is_cjk(int32_t cp)
{
    return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x31F0 && cp <= 0x31FF) ||
           (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x2FA1F);
}

static int is_word(int32_t cp)
{
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
    case UTF8PROC_CATEGORY_PC:
        return 1;
    default:
        return 0;
    }
}

/* Hangul jamo and syllables: the only code points that still compose after STRIPMARK. */
static int is_hangul(int32_t cp)
{
    return (cp >= 0x1100 && cp <= 0x11FF) || (cp >= 0x3130 && cp <= 0x318F) ||
           (cp >= 0xA960 && cp <= 0xA97F) || (cp >= 0xAC00 && cp <= 0xD7FF) ||
           (cp >= 0xFFA0 && cp <= 0xFFDC);
}

/* Starts a token at the end of out (room is reserved by the caller). */
static void tok_begin(struct tok *t)
{
    if (t->out.len > 0)
        t->out.p[t->out.len++] = ' ';
    t->tok_start = t->out.len;
    t->n_tokens++;
}

static void tok_cp(struct tok *t, int32_t cp)
{
    if (!is_word(cp)) {
        t->tok_start = SIZE_MAX;
        return;
    }
    char buf[4];
    size_t k = (size_t)utf8proc_encode_char(cp, (utf8proc_uint8_t *)buf);
    if (is_cjk(cp)) {
        tok_begin(t);
        memcpy(t->out.p + t->out.len, buf, k);
        t->out.len += k;
        t->tok_start = SIZE_MAX;
        return;
    }
    if (t->tok_start == SIZE_MAX)
        tok_begin(t);
    if (t->out.len - t->tok_start + k > EXTRACT_TOKEN_MAX_BYTES)
        return; /* cut: rule 4 */
    memcpy(t->out.p + t->out.len, buf, k);
    t->out.len += k;
}

/* Normalises and tokenises one non-ASCII run s[0..n) (valid UTF-8). */
static enum extract_code tok_run(struct tok *t, const char *s, size_t n)
{
    utf8proc_int32_t cps[CHUNK_CPS * MAX_EXPANSION + 8];
    size_t i = 0;
    while (i < n) {
        /* a chunk of <= CHUNK_CPS code points, ending before a non-Hangul code point */
        size_t j = i, count = 0, cut = 0;
        while (j < n && count < CHUNK_CPS) {
            utf8proc_int32_t cp;
            utf8proc_ssize_t k =
                utf8proc_iterate((const utf8proc_uint8_t *)s + j, (utf8proc_ssize_t)(n - j), &cp);
            if (k <= 0)
                return EXTRACT_EINVAL;
            if (!is_hangul(cp))
                cut = j; /* cutting before this code point is safe */
            j += (size_t)k;
            count++;
        }
        if (j < n && cut > i)
            j = cut;
        utf8proc_ssize_t m =
            utf8proc_decompose((const utf8proc_uint8_t *)s + i, (utf8proc_ssize_t)(j - i), cps,
                               (utf8proc_ssize_t)(sizeof cps / sizeof cps[0]), TOKEN_OPTIONS);
        if (m < 0)
            return EXTRACT_EINVAL;
        if ((size_t)m > sizeof cps / sizeof cps[0])
            return EXTRACT_EINVAL; /* cannot happen: MAX_EXPANSION bounds it */
        m = utf8proc_normalize_utf32(cps, m, TOKEN_OPTIONS);
        if (m < 0)
            return EXTRACT_EINVAL;
        /* room: each code point <= 4 bytes plus a separating space */
        enum extract_code rc = ex_buf_reserve(&t->out, (size_t)m * 5 + 1);
        if (rc != EXTRACT_OK)
            return rc;
        for (utf8proc_ssize_t k = 0; k < m; k++)
            tok_cp(t, cps[k]);
        i = j;
    }
    return EXTRACT_OK;
}

enum extract_code extract_tokens(const char *text, size_t len, char **out, size_t *out_len,
                                 size_t *n_tokens)
{
    if (!out || !out_len || !n_tokens || (!text && len))
        return EXTRACT_EINVAL;
    *out = NULL;
    *out_len = 0;
    *n_tokens = 0;
    struct tok t;
    /* NFKC expands at most MAX_EXPANSION code points per 2+ bytes; 16x bounds it */
    ex_buf_init(&t.out, len > (SIZE_MAX - 64) / 16 ? SIZE_MAX : 16 * len + 64);
    t.tok_start = SIZE_MAX;
    t.n_tokens = 0;
    enum extract_code rc = ex_buf_reserve(&t.out, len + 1);
    if (rc != EXTRACT_OK)
        goto fail;
    size_t i = 0;
    while (i < len) {
        unsigned char c = (unsigned char)text[i];
        if (c < 0x80) {
            /* ASCII fast path (room for len + 1 bytes is reserved and ASCII never grows) */
            unsigned char w = ascii_word[c];
            if (!w) {
                t.tok_start = SIZE_MAX;
                i++;
                continue;
            }
            if (t.tok_start == SIZE_MAX) {
                rc = ex_buf_reserve(&t.out, 2);
                if (rc != EXTRACT_OK)
                    goto fail;
                tok_begin(&t);
            }
            /* this byte and the ASCII word bytes after it, in one loop */
            do {
                if (t.out.len - t.tok_start < EXTRACT_TOKEN_MAX_BYTES) {
                    if (t.out.len + 1 >= t.out.cap) {
                        rc = ex_buf_reserve(&t.out, 2);
                        if (rc != EXTRACT_OK)
                            goto fail;
                    }
                    t.out.p[t.out.len++] = (char)w;
                }
                i++;
            } while (i < len && (unsigned char)text[i] < 0x80 &&
                     (w = ascii_word[(unsigned char)text[i]]) != 0);
            continue;
        }
        size_t j = i + 1;
        while (j < len && (unsigned char)text[j] >= 0x80)
            j++;
        rc = tok_run(&t, text + i, j - i);
        if (rc != EXTRACT_OK)
            goto fail;
        i = j;
    }
    rc = ex_buf_reserve(&t.out, 1);
    if (rc != EXTRACT_OK)
        goto fail;
    t.out.p[t.out.len] = '\0';
    *out_len = t.out.len;
    *n_tokens = t.n_tokens;
    *out = ex_buf_take(&t.out);
    return EXTRACT_OK;
fail:
    ex_buf_release(&t.out);
    return rc;
}
