/*
 * tokens.c: the normalised word tokens a fingerprint is computed from.
 *
 * FINGERPRINT v7, "Tokens" (docs/FINGERPRINT.md section 2 quotes this rule; changing it
 * changes every fingerprint, so it is versioned there):
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
 *     controls, and the CJK-range punctuation U+30A0, U+30FB) separates tokens, except
 *     the joins of rule 3. A digit is a word character of category N*.
 *  3. A token is a maximal run of non-CJK word characters and joins; every CJK word
 *     character is a token of its own (so CJK text yields character unigrams, and the
 *     shingles above them character n-grams). A join is code punctuation kept inside a
 *     token (version 7):
 *     a. "->" or "::" directly between two non-CJK word characters (p->next, std::vector),
 *        or directly between one and a "~" that rule 3b keeps (Db::~Db);
 *     b. "~" directly before a non-CJK word character that is not a digit, when it does
 *        not directly follow a word character (a C++ destructor ~vector; ~100 and a~b
 *        split).
 *     Every other code point between word characters separates, as in versions 1-6
 *     (x-y, a:b, a~b, a:::b, a lone "::", and "." : os.path.join and 3.14 are split;
 *     docs/FINGERPRINT.md says why). A join never holds a space or a newline, so a token
 *     never spans either.
 *  4. A token longer than EXTRACT_TOKEN_MAX_BYTES (64) bytes of UTF-8 is cut to its
 *     longest prefix of whole code points within 64 bytes (base64 blobs and hashes stay
 *     one bounded token instead of many or none).
 *  5. Output: the tokens in order, separated by one ASCII space.
 * Examples: "Straße" -> "strasse"; "Ｆｕｌｌ-ｗｉｄｔｈ ﬁle_2" -> "full width file_2";
 * "naïve café" -> "naive cafe"; "東京タワー" -> "東 京 タ ワ ー"; "3.14" -> "3 14";
 * "DB->get_flags()" -> "db->get_flags"; "Db::~Db()" -> "db::~db"; "os.path.join()" ->
 * "os path join".
 *
 * A page's name (extract_name_tokens(), FINGERPRINT v10, section 6 "A heading's
 * symbols") is tokenised with one rule more: a mathematical symbol is a token of its own,
 * as a CJK character is: a code point of category Sm outside ASCII, except arrows
 * (U+2190-21FF, U+27F0-27FF, U+2900-297F, U+2B00-2BFF), geometric shapes (U+25A0-25FF)
 * and the typographic variants of ASCII separators and bullets (U+2044, U+2212,
 * U+2215-2217, U+2219, U+2223, U+2236, U+223C, U+22C5, U+22C6, U+22EE-22F1): "⊥ ⊤ ∀ ≤
 * × ¬" are tokens, "→ − ⋅ ▷" separate; for rule 3 it is no word character. Then each
 * run of ASCII operators of the heading is a token more. In a text (J_MATH, a bench
 * build's bit 32) the symbols made false drops: docs/FINGERPRINT.md section 6 says why.
 *
 * HOW IT WORKS (fast path): NFKC and case folding are the identity on ASCII except A-Z,
 * and no canonical composition has an ASCII second element, so ASCII bytes are classified
 * by a table without utf8proc. Maximal non-ASCII runs go through utf8proc_decompose() +
 * utf8proc_normalize_utf32() (what utf8proc_map() does, without its malloc) into a stack
 * buffer. Because marks are stripped during decomposition, the only compositions left are
 * Hangul jamo, so a long run is cut into chunks before a non-Hangul code point without
 * changing the result; memory stays bounded for any input. The joins of rule 3 are a
 * small state machine over the normalised code points (tok_cp): punctuation that may
 * start a join is held as pending bytes until the next code point decides; a pending
 * join that fails is a separator and that code point is then read afresh. Its state
 * lives in struct tok, so it carries across the ASCII fast path and the normalised
 * non-ASCII runs (a default-ignorable code point between "." and a letter is removed
 * before it is seen, as utf8proc_map() of the whole text would). Runs of ASCII word bytes
 * outside a pending join still take the fast loop.
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

/* A code point's class for rules 2 and 3 (WC_MATH: a symbol, a token in a name only). */
enum { WC_SEP, WC_CJK, WC_DIGIT, WC_WORD, WC_MATH };

/* Pending joins (rule 3): what the punctuation read so far may still become. */
enum {
    P_NONE,   /* nothing pending */
    P_DASH,   /* "-" after a word character: "->" if ">" follows */
    P_COLON,  /* ":" after a word character: "::" if ":" follows */
    P_JOINER, /* "->" or "::" after a word character: joins before a word character or "~" */
    P_DOT,    /* "." after a word character (J_DOT only) */
    P_TILDE,  /* "~" not after a word character: starts a token before a non-digit */
    P_JTILDE, /* "->~" or "::~" after a word character */
};

/* Which joins are on: J_DEFAULT (version 7's rule 3) in a shipped build. A build made with
 * -DDEDUP_BENCH_SEEDS (tests/bench/run.sh) reads SIMCRAWL_BENCH_JOINS, a sum of these
 * bits (0: version 6's rule), for tests/bench/token_study.sh's variants: J_DOT joins "."
 * between word characters not both digits, J_DIGIT_DOT between two digits too (measured
 * and left out of version 7: docs/BENCHMARKS.md, "Fingerprint version 7"); J_SECNUM
 * drops a line's leading section number (secnum_len(): "2.1.3. Title"; measured and
 * left out: "Held-out recall, miss by miss (rec11i)"). */
enum {
    J_CODE = 1,
    J_TILDE = 2,
    J_DOT = 4,
    J_DIGIT_DOT = 8,
    J_SECNUM = 16, /* a line's leading section number is no token (rec11i's study) */
    J_MATH = 32,   /* a mathematical symbol is a token: in a name only (version 10) */
    J_DEFAULT = J_CODE | J_TILDE
};

#ifdef DEDUP_BENCH_SEEDS
/* J_SECNUM (a bench build only; measured and left out of version 7: docs/BENCHMARKS.md,
 * "Held-out recall, miss by miss (rec11i)"): the length of a section number at
 * s[0..len), a line's start after its blanks: ASCII digits in groups parted by single
 * dots, with at least one dot ("2.1", "2.1.3.", "5."), followed by a space or a tab; 0
 * when there is none. Such a number is no token. */
static size_t secnum_len(const char *s, size_t len)
{
    size_t i = 0, dots = 0;
    for (;;) {
        size_t d = i;
        while (i < len && s[i] >= '0' && s[i] <= '9')
            i++;
        if (i == d)
            return 0;
        if (i < len && s[i] == '.') {
            i++;
            dots++;
            if (i < len && (s[i] == ' ' || s[i] == '\t'))
                return i;
            continue;
        }
        return dots && i < len && (s[i] == ' ' || s[i] == '\t') ? i : 0;
    }
}
#endif

#ifdef DEDUP_BENCH_SEEDS
static unsigned joins_on(void)
{
    const char *e = getenv("SIMCRAWL_BENCH_JOINS");
    return e && *e ? (unsigned)strtoul(e, NULL, 10) : J_DEFAULT;
}
#else
static unsigned joins_on(void)
{
    return J_DEFAULT;
}
#endif

struct tok {
    struct ex_buf out;
    size_t tok_start; /* offset of the current token in out, or SIZE_MAX when none */
    size_t n_tokens;
    int cut;         /* the current token reached its 64-byte cut (rule 4) */
    int prev_word;   /* the code point before was a word character (CJK included) */
    int last_digit;  /* the current token's last word character is a digit */
    int pend;        /* P_*: a join pending */
    unsigned joins;  /* J_* */
    unsigned n_pend; /* bytes of pend_bytes[] */
    char pend_bytes[4];
};

static int is_cjk(int32_t cp)
{
    return (cp >= 0x3040 && cp <= 0x30FF) || (cp >= 0x31F0 && cp <= 0x31FF) ||
           (cp >= 0x3400 && cp <= 0x4DBF) || (cp >= 0x4E00 && cp <= 0x9FFF) ||
           (cp >= 0xF900 && cp <= 0xFAFF) || (cp >= 0x20000 && cp <= 0x2FA1F);
}

/* A mathematical symbol, a token of its own in a page's name (version 10). Category Sm
 * outside ASCII, except arrows (navigation: "Next →"), geometric shapes (bullets and
 * disclosure marks: "▷ Next") and the symbols that are a typographic variant of an ASCII
 * separator or a bullet (the minus sign, a fraction or division slash, the asterisk,
 * bullet, dot and star operators, the divides bar, the ratio colon, the tilde operator,
 * the math ellipses). */
static int is_math(int32_t cp)
{
    if ((cp >= 0x2190 && cp <= 0x21FF) || (cp >= 0x25A0 && cp <= 0x25FF) ||
        (cp >= 0x27F0 && cp <= 0x27FF) || (cp >= 0x2900 && cp <= 0x297F) ||
        (cp >= 0x2B00 && cp <= 0x2BFF))
        return 0;
    switch (cp) {
    case 0x2044: /* ⁄ fraction slash */
    case 0x2212: /* − minus sign */
    case 0x2215: /* ∕ division slash */
    case 0x2216: /* ∖ set minus (a backslash) */
    case 0x2217: /* ∗ asterisk operator */
    case 0x2219: /* ∙ bullet operator */
    case 0x2223: /* ∣ divides (a bar) */
    case 0x2236: /* ∶ ratio (a colon) */
    case 0x223C: /* ∼ tilde operator */
    case 0x22C5: /* ⋅ dot operator */
    case 0x22C6: /* ⋆ star operator */
    case 0x22EE: /* ⋮ ⋯ ⋰ ⋱ ellipses */
    case 0x22EF:
    case 0x22F0:
    case 0x22F1:
        return 0;
    default:
        return 1;
    }
}

static int word_class(int32_t cp)
{
    if (cp < 0x80)
        return !ascii_word[cp] ? WC_SEP : cp <= '9' ? WC_DIGIT : WC_WORD;
    switch (utf8proc_category(cp)) {
    case UTF8PROC_CATEGORY_LU:
    case UTF8PROC_CATEGORY_LL:
    case UTF8PROC_CATEGORY_LT:
    case UTF8PROC_CATEGORY_LM:
    case UTF8PROC_CATEGORY_LO:
    case UTF8PROC_CATEGORY_MN:
    case UTF8PROC_CATEGORY_MC:
    case UTF8PROC_CATEGORY_ME:
    case UTF8PROC_CATEGORY_PC:
        return is_cjk(cp) ? WC_CJK : WC_WORD;
    case UTF8PROC_CATEGORY_ND:
    case UTF8PROC_CATEGORY_NL:
    case UTF8PROC_CATEGORY_NO:
        return is_cjk(cp) ? WC_CJK : WC_DIGIT;
    case UTF8PROC_CATEGORY_SM:
        return is_math(cp) ? WC_MATH : WC_SEP;
    default:
        return WC_SEP;
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
    t->cut = 0;
}

/* Appends k bytes of one code point to the current token, unless it is cut (rule 4:
 * once a code point does not fit, none after it is kept, so the token is a prefix). */
static void tok_put(struct tok *t, const char *b, size_t k)
{
    if (t->cut || t->out.len - t->tok_start + k > EXTRACT_TOKEN_MAX_BYTES) {
        t->cut = 1;
        return;
    }
    memcpy(t->out.p + t->out.len, b, k);
    t->out.len += k;
}

/* A word character of class wc (not WC_SEP), with no join pending. */
static void tok_word(struct tok *t, int32_t cp, int wc)
{
    char buf[4];
    size_t k = (size_t)utf8proc_encode_char(cp, (utf8proc_uint8_t *)buf);
    t->prev_word = wc != WC_MATH; /* a symbol is no word character for the joins */
    if (wc == WC_CJK || wc == WC_MATH) {
        tok_begin(t);
        memcpy(t->out.p + t->out.len, buf, k);
        t->out.len += k;
        t->tok_start = SIZE_MAX;
        return;
    }
    if (t->tok_start == SIZE_MAX)
        tok_begin(t);
    tok_put(t, buf, k);
    t->last_digit = wc == WC_DIGIT;
}

static void pend_set(struct tok *t, int state, char c)
{
    t->pend = state;
    t->pend_bytes[t->n_pend++] = c;
    t->prev_word = 0;
}

/* The pending join is made: its bytes go into the token (a "~" may start it). */
static void pend_join(struct tok *t)
{
    if (t->tok_start == SIZE_MAX)
        tok_begin(t);
    for (unsigned i = 0; i < t->n_pend; i++)
        tok_put(t, &t->pend_bytes[i], 1);
    t->pend = P_NONE;
    t->n_pend = 0;
}

/* One normalised, case-folded code point (room for 8 bytes is reserved by the caller). */
static void tok_cp(struct tok *t, int32_t cp)
{
    int wc = word_class(cp);
    if (wc == WC_MATH && !(t->joins & J_MATH))
        wc = WC_SEP;
    switch (t->pend) {
    case P_NONE:
        break;
    case P_DASH:
        if (cp == '>') {
            pend_set(t, P_JOINER, '>');
            return;
        }
        break;
    case P_COLON:
        if (cp == ':') {
            pend_set(t, P_JOINER, ':');
            return;
        }
        break;
    case P_JOINER:
        if (cp == '~' && (t->joins & J_TILDE)) {
            pend_set(t, P_JTILDE, '~');
            return;
        }
        if (wc == WC_WORD || wc == WC_DIGIT) {
            pend_join(t);
            tok_word(t, cp, wc);
            return;
        }
        break;
    case P_DOT:
        if (wc == WC_WORD || (wc == WC_DIGIT && (!t->last_digit || (t->joins & J_DIGIT_DOT)))) {
            pend_join(t);
            tok_word(t, cp, wc);
            return;
        }
        break;
    case P_TILDE:
    case P_JTILDE:
        if (wc == WC_WORD) {
            pend_join(t);
            tok_word(t, cp, wc);
            return;
        }
        break;
    }
    if (t->pend != P_NONE) {
        /* the pending punctuation separates; cp is read afresh */
        t->pend = P_NONE;
        t->n_pend = 0;
        t->tok_start = SIZE_MAX;
        t->prev_word = 0;
    }
    if (wc != WC_SEP) {
        tok_word(t, cp, wc);
        return;
    }
    if (t->tok_start != SIZE_MAX) {
        if ((cp == '-' || cp == ':') && (t->joins & J_CODE)) {
            pend_set(t, cp == '-' ? P_DASH : P_COLON, (char)cp);
            return;
        }
        if (cp == '.' && (t->joins & J_DOT)) {
            pend_set(t, P_DOT, '.');
            return;
        }
    } else if (cp == '~' && !t->prev_word && (t->joins & J_TILDE)) {
        pend_set(t, P_TILDE, '~');
        return;
    }
    t->tok_start = SIZE_MAX;
    t->prev_word = 0;
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
        /* room: each code point <= 4 bytes plus a separating space, and the <= 3 bytes
         * of a join pending from before this chunk */
        enum extract_code rc = ex_buf_reserve(&t->out, (size_t)m * 5 + 8);
        if (rc != EXTRACT_OK)
            return rc;
        for (utf8proc_ssize_t k = 0; k < m; k++)
            tok_cp(t, cps[k]);
        i = j;
    }
    return EXTRACT_OK;
}

/* extract_tokens() with the joins and symbols of J_* bits joins. */
static enum extract_code tokens_with(const char *text, size_t len, unsigned joins, char **out,
                                     size_t *out_len, size_t *n_tokens)
{
    if (!out || !out_len || !n_tokens || (!text && len))
        return EXTRACT_EINVAL;
    *out = NULL;
    *out_len = 0;
    *n_tokens = 0;
    struct tok t;
    /* NFKC expands at most MAX_EXPANSION code points per 2+ bytes; 16x bounds it */
    memset(&t, 0, sizeof t);
    ex_buf_init(&t.out, len > (SIZE_MAX - 64) / 16 ? SIZE_MAX : 16 * len + 64);
    t.tok_start = SIZE_MAX;
    t.pend = P_NONE;
    t.joins = joins;
    enum extract_code rc = ex_buf_reserve(&t.out, len + 1);
    if (rc != EXTRACT_OK)
        goto fail;
    size_t i = 0;
#ifdef DEDUP_BENCH_SEEDS
    int line_start = 1;
#endif
    while (i < len) {
        unsigned char c = (unsigned char)text[i];
#ifdef DEDUP_BENCH_SEEDS
        if (line_start && (t.joins & J_SECNUM)) {
            if (c == ' ' || c == '\t') {
                i++;
                continue;
            }
            line_start = 0;
            size_t k = secnum_len(text + i, len - i);
            if (k) {
                t.pend = P_NONE;
                t.n_pend = 0;
                t.tok_start = SIZE_MAX;
                t.prev_word = 0;
                i += k;
                continue;
            }
        }
        if (c == '\n')
            line_start = 1;
#endif
        if (c < 0x80) {
            unsigned char w = ascii_word[c];
            if (t.pend == P_NONE && w) {
                /* ASCII fast path: this byte and the ASCII word bytes after it, found
                 * first and then copied lower-cased up to the token's cut */
                if (t.tok_start == SIZE_MAX) {
                    rc = ex_buf_reserve(&t.out, 2);
                    if (rc != EXTRACT_OK)
                        goto fail;
                    tok_begin(&t);
                }
                size_t e = i + 1;
                while (e < len && (unsigned char)text[e] < 0x80 &&
                       ascii_word[(unsigned char)text[e]])
                    e++;
                size_t used = t.out.len - t.tok_start, n = e - i;
                size_t room =
                    t.cut || used >= EXTRACT_TOKEN_MAX_BYTES ? 0 : EXTRACT_TOKEN_MAX_BYTES - used;
                if (n > room) {
                    n = room;
                    t.cut = 1;
                }
                if (n) {
                    rc = ex_buf_reserve(&t.out, n);
                    if (rc != EXTRACT_OK)
                        goto fail;
                    char *o = t.out.p + t.out.len;
                    for (size_t k = 0; k < n; k++)
                        o[k] = (char)ascii_word[(unsigned char)text[i + k]];
                    t.out.len += n;
                }
                t.prev_word = 1;
                t.last_digit = (unsigned char)text[e - 1] <= '9';
                i = e;
                continue;
            }
            if (!w && c != '-' && c != ':' && c != '~' && c != '>' &&
                (c != '.' || !(t.joins & J_DOT))) {
                /* a separator that can neither start nor go on with a join: it ends a
                 * pending one too (the space after a sentence's last word and dot) */
                t.pend = P_NONE;
                t.n_pend = 0;
                t.tok_start = SIZE_MAX;
                t.prev_word = 0;
                i++;
                continue;
            }
            rc = ex_buf_reserve(&t.out, 8);
            if (rc != EXTRACT_OK)
                goto fail;
            tok_cp(&t, w ? (int32_t)w : (int32_t)c);
            i++;
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

enum extract_code extract_tokens(const char *text, size_t len, char **out, size_t *out_len,
                                 size_t *n_tokens)
{
    return tokens_with(text, len, joins_on(), out, out_len, n_tokens);
}

/* A byte of an operator run in a page's name (docs/FINGERPRINT.md section 6, version 10). */
static int name_op(unsigned char c)
{
    return c && strchr("!$%&*+-/<=>?@\\^|~", c) != NULL;
}

static int name_word_byte(unsigned char c)
{
    return c < 0x80 && ascii_word[c];
}

enum extract_code extract_name_tokens(const char *heading, size_t len, char **out, size_t *out_len,
                                      size_t *n_tokens)
{
    enum extract_code rc = tokens_with(heading, len, joins_on() | J_MATH, out, out_len, n_tokens);
    if (rc != EXTRACT_OK)
        return rc;
    /* the kept runs add at most one space per byte */
    char *p = realloc(*out, *out_len + 2 * len + 1);
    if (!p) {
        free(*out);
        *out = NULL;
        *out_len = *n_tokens = 0;
        return EXTRACT_ENOMEM;
    }
    *out = p;
    const unsigned char *h = (const unsigned char *)heading;
    for (size_t i = 0; i < len;) {
        if (!name_op(h[i])) {
            i++;
            continue;
        }
        size_t s = i;
        while (i < len && name_op(h[i]))
            i++;
        int inside = s > 0 && i < len && name_word_byte(h[s - 1]) && name_word_byte(h[i]);
        if (inside || (i - s == 1 && h[s] == '-'))
            continue; /* a hyphen, a dash, or punctuation inside a word: x-y, a->b, a/b */
        if (*out_len)
            p[(*out_len)++] = ' ';
        memcpy(p + *out_len, h + s, i - s);
        *out_len += i - s;
        (*n_tokens)++;
    }
    p[*out_len] = '\0';
    return EXTRACT_OK;
}
