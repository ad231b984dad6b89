/*
 * charset.c: which charset a page is in, and decoding it to valid UTF-8.
 *
 * Sniffing follows the WHATWG Encoding Standard's order (https://html.spec.whatwg.org/
 * #determining-the-character-encoding): a byte order mark wins (it is unambiguous byte-level
 * evidence, as in every browser), then the charset parameter of the HTTP Content-Type,
 * then a prescan of the first EX_SNIFF_BYTES bytes for <meta charset> or <meta http-equiv=
 * "content-type" content="...; charset=...">, then UTF-8 when the bytes are valid UTF-8,
 * else windows-1252 (what browsers default to for Western pages). Labels are normalised
 * as in the Encoding Standard (latin1, iso-8859-1 and us-ascii mean windows-1252; gb2312
 * means GBK; a <meta> naming UTF-16 means UTF-8).
 *
 * Decoding: UTF-8 is validated (8 bytes at a time while ASCII) and copied only when it
 * must be repaired; windows-1252 and UTF-16 are decoded here; any other charset goes
 * through POSIX iconv(3). A name neither we nor iconv know falls back to UTF-8 when the
 * bytes are valid UTF-8, else windows-1252, and the fallback is what the doc reports.
 * Invalid sequences and NUL bytes become U+FFFD, so libxml2 always sees valid UTF-8.
 */
#include "extract/extract_int.h"

#include <errno.h>
#include <iconv.h>
#include <stdio.h>
#include <string.h>

static int lower(int c)
{
    return (c >= 'A' && c <= 'Z') ? c + 32 : c;
}

static int is_space(int c)
{
    return c == ' ' || c == '\t' || c == '\n' || c == '\r' || c == '\f';
}

/* ---- UTF-8 validation and repair ---- */

/* Length of the valid UTF-8 sequence at s (n bytes left), 0 when invalid or NUL. */
static size_t utf8_seq(const unsigned char *s, size_t n)
{
    unsigned c = s[0];
    if (c < 0x80)
        return c ? 1 : 0;
    if (c < 0xC2)
        return 0;
    if (c < 0xE0)
        return (n >= 2 && (s[1] & 0xC0) == 0x80) ? 2 : 0;
    if (c < 0xF0) {
        if (n < 3 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80)
            return 0;
        if (c == 0xE0 && s[1] < 0xA0)
            return 0; /* overlong */
        if (c == 0xED && s[1] >= 0xA0)
            return 0; /* surrogate */
        return 3;
    }
    if (c < 0xF5) {
        if (n < 4 || (s[1] & 0xC0) != 0x80 || (s[2] & 0xC0) != 0x80 || (s[3] & 0xC0) != 0x80)
            return 0;
        if (c == 0xF0 && s[1] < 0x90)
            return 0; /* overlong */
        if (c == 0xF4 && s[1] >= 0x90)
            return 0; /* over U+10FFFF */
        return 4;
    }
    return 0;
}

/* Bytes of s[0..len) that are plain non-NUL ASCII, from the start, 8 at a time. */
static size_t ascii_prefix(const char *s, size_t len)
{
    size_t i = 0;
    while (i + 8 <= len) {
        uint64_t v;
        memcpy(&v, s + i, 8);
        uint64_t high = v & 0x8080808080808080ull;
        uint64_t zero = (v - 0x0101010101010101ull) & ~v & 0x8080808080808080ull;
        if (high | zero)
            break;
        i += 8;
    }
    while (i < len && (unsigned char)s[i] < 0x80 && s[i] != 0)
        i++;
    return i;
}

int ex_utf8_valid(const char *s, size_t len)
{
    size_t i = 0;
    while (i < len) {
        i += ascii_prefix(s + i, len - i);
        if (i >= len)
            break;
        size_t n = utf8_seq((const unsigned char *)s + i, len - i);
        if (n == 0)
            return 0;
        i += n;
    }
    return 1;
}

enum extract_code ex_utf8_repair(struct ex_buf *b, const char *s, size_t len)
{
    static const char repl[3] = {(char)0xEF, (char)0xBF, (char)0xBD};
    size_t i = 0;
    while (i < len) {
        size_t a = ascii_prefix(s + i, len - i);
        size_t n = 0;
        while (i + a + n < len) {
            size_t k = utf8_seq((const unsigned char *)s + i + a + n, len - i - a - n);
            if (k == 0)
                break;
            n += k;
        }
        enum extract_code rc = ex_buf_add(b, s + i, a + n);
        if (rc != EXTRACT_OK)
            return rc;
        i += a + n;
        if (i < len) {
            /* one invalid byte (or NUL) -> U+FFFD; skip its continuation bytes too */
            rc = ex_buf_add(b, repl, 3);
            if (rc != EXTRACT_OK)
                return rc;
            i++;
            while (i < len && ((unsigned char)s[i] & 0xC0) == 0x80 &&
                   utf8_seq((const unsigned char *)s + i, len - i) == 0)
                i++;
        }
    }
    return EXTRACT_OK;
}

/* ---- labels ---- */

struct label {
    const char *label, *name;
};

/* WHATWG Encoding Standard labels (the common ones) -> our canonical name. */
static const struct label labels[] = {
    {"utf-8", "UTF-8"},
    {"utf8", "UTF-8"},
    {"unicode-1-1-utf-8", "UTF-8"},
    {"x-unicode20utf8", "UTF-8"},
    {"windows-1252", "windows-1252"},
    {"cp1252", "windows-1252"},
    {"x-cp1252", "windows-1252"},
    {"iso-8859-1", "windows-1252"},
    {"iso8859-1", "windows-1252"},
    {"iso_8859-1", "windows-1252"},
    {"iso_8859-1:1987", "windows-1252"},
    {"iso88591", "windows-1252"},
    {"latin1", "windows-1252"},
    {"l1", "windows-1252"},
    {"us-ascii", "windows-1252"},
    {"ascii", "windows-1252"},
    {"ansi_x3.4-1968", "windows-1252"},
    {"iso-ir-100", "windows-1252"},
    {"ibm819", "windows-1252"},
    {"cp819", "windows-1252"},
    {"csisolatin1", "windows-1252"},
    {"utf-16", "UTF-16LE"},
    {"utf-16le", "UTF-16LE"},
    {"unicode", "UTF-16LE"},
    {"ucs-2", "UTF-16LE"},
    {"utf-16be", "UTF-16BE"},
    {"gb2312", "GBK"},
    {"gbk", "GBK"},
    {"x-gbk", "GBK"},
    {"gb_2312-80", "GBK"},
    {"gb_2312", "GBK"},
    {"chinese", "GBK"},
    {"csgb2312", "GBK"},
    {"iso-ir-58", "GBK"},
    {"cp936", "GBK"},
    {"gb18030", "GB18030"},
    {"big5", "Big5"},
    {"big5-hkscs", "Big5"},
    {"x-x-big5", "Big5"},
    {"cn-big5", "Big5"},
    {"shift_jis", "Shift_JIS"},
    {"shift-jis", "Shift_JIS"},
    {"sjis", "Shift_JIS"},
    {"x-sjis", "Shift_JIS"},
    {"ms_kanji", "Shift_JIS"},
    {"ms932", "Shift_JIS"},
    {"windows-31j", "Shift_JIS"},
    {"csshiftjis", "Shift_JIS"},
    {"euc-jp", "EUC-JP"},
    {"x-euc-jp", "EUC-JP"},
    {"iso-2022-jp", "ISO-2022-JP"},
    {"euc-kr", "EUC-KR"},
    {"ks_c_5601-1987", "EUC-KR"},
    {"windows-949", "EUC-KR"},
    {"cp949", "EUC-KR"},
    {"korean", "EUC-KR"},
    {"iso-8859-9", "windows-1254"},
    {"latin5", "windows-1254"},
    {"tis-620", "windows-874"},
    {"iso-8859-11", "windows-874"},
    {"windows-1250", "windows-1250"},
    {"cp1250", "windows-1250"},
    {"windows-1251", "windows-1251"},
    {"cp1251", "windows-1251"},
    {"x-cp1251", "windows-1251"},
    {"windows-1253", "windows-1253"},
    {"windows-1254", "windows-1254"},
    {"windows-1255", "windows-1255"},
    {"windows-1256", "windows-1256"},
    {"windows-1257", "windows-1257"},
    {"windows-1258", "windows-1258"},
    {"windows-874", "windows-874"},
    {"iso-8859-2", "ISO-8859-2"},
    {"iso-8859-5", "ISO-8859-5"},
    {"iso-8859-7", "ISO-8859-7"},
    {"iso-8859-15", "ISO-8859-15"},
    {"latin2", "ISO-8859-2"},
    {"koi8-r", "KOI8-R"},
    {"koi8r", "KOI8-R"},
    {"koi8-u", "KOI8-U"},
};

/* The name iconv knows our canonical name by (supersets, as browsers decode). */
static const char *iconv_name(const char *name)
{
    if (strcmp(name, "GBK") == 0)
        return "GB18030";
    if (strcmp(name, "Shift_JIS") == 0)
        return "CP932";
    if (strcmp(name, "EUC-KR") == 0)
        return "CP949";
    if (strcmp(name, "Big5") == 0)
        return "BIG5-HKSCS";
    return name;
}

/* Normalises label[0..n) into out; "" when it is empty or absurd. */
/* out = s, cut to EX_CHARSET_NAME_MAX - 1 bytes (every name written here is shorter) */
static void set_name(char out[EX_CHARSET_NAME_MAX], const char *s)
{
    snprintf(out, EX_CHARSET_NAME_MAX, "%s", s);
}

static void normalise_label(const char *label, size_t n, char out[EX_CHARSET_NAME_MAX])
{
    char low[EX_CHARSET_NAME_MAX];
    while (n > 0 && (is_space((unsigned char)*label) || *label == '"' || *label == '\'')) {
        label++;
        n--;
    }
    while (n > 0 &&
           (is_space((unsigned char)label[n - 1]) || label[n - 1] == '"' || label[n - 1] == '\''))
        n--;
    out[0] = '\0';
    if (n == 0 || n >= EX_CHARSET_NAME_MAX)
        return;
    for (size_t i = 0; i < n; i++) {
        unsigned char c = (unsigned char)label[i];
        /* only the characters charset names are made of */
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') ||
              c == '-' || c == '_' || c == '.' || c == ':'))
            return;
        low[i] = (char)lower(c);
    }
    low[n] = '\0';
    for (size_t i = 0; i < sizeof labels / sizeof labels[0]; i++)
        if (strcmp(low, labels[i].label) == 0) {
            set_name(out, labels[i].name);
            return;
        }
    /* Not in our table: keep it (upper-cased) for iconv to try. */
    for (size_t i = 0; i <= n; i++) {
        char c = low[i];
        out[i] = (c >= 'a' && c <= 'z') ? (char)(c - 32) : c;
    }
}

/* Finds charset=VALUE in a Content-Type-like string; normalised into out ("" if none). */
static void charset_param(const char *s, size_t n, char out[EX_CHARSET_NAME_MAX])
{
    out[0] = '\0';
    for (size_t i = 0; i + 7 <= n; i++) {
        static const char key[] = "charset";
        size_t k = 0;
        while (k < 7 && lower((unsigned char)s[i + k]) == key[k])
            k++;
        if (k < 7)
            continue;
        size_t j = i + 7;
        while (j < n && is_space((unsigned char)s[j]))
            j++;
        if (j >= n || s[j] != '=')
            continue;
        j++;
        while (j < n && is_space((unsigned char)s[j]))
            j++;
        size_t start = j;
        char quote = 0;
        if (j < n && (s[j] == '"' || s[j] == '\'')) {
            quote = s[j];
            start = ++j;
        }
        while (j < n && s[j] != ';' && (quote ? s[j] != quote : !is_space((unsigned char)s[j])))
            j++;
        normalise_label(s + start, j - start, out);
        return;
    }
}

/* ---- the <meta> prescan ---- */

struct attr {
    const char *name, *value;
    size_t name_len, value_len;
};

/* Reads one attribute at *pos (WHATWG "get an attribute", simplified). 0 at '>' / end. */
static int next_attr(const char *s, size_t n, size_t *pos, struct attr *a)
{
    size_t i = *pos;
    while (i < n && (is_space((unsigned char)s[i]) || s[i] == '/'))
        i++;
    if (i >= n || s[i] == '>') {
        *pos = i;
        return 0;
    }
    a->name = s + i;
    while (i < n && s[i] != '=' && s[i] != '>' && s[i] != '/' && !is_space((unsigned char)s[i]))
        i++;
    a->name_len = (size_t)(s + i - a->name);
    a->value = s + i;
    a->value_len = 0;
    while (i < n && is_space((unsigned char)s[i]))
        i++;
    if (i < n && s[i] == '=') {
        i++;
        while (i < n && is_space((unsigned char)s[i]))
            i++;
        if (i < n && (s[i] == '"' || s[i] == '\'')) {
            char q = s[i++];
            a->value = s + i;
            while (i < n && s[i] != q)
                i++;
            a->value_len = (size_t)(s + i - a->value);
            if (i < n)
                i++;
        } else {
            a->value = s + i;
            while (i < n && s[i] != '>' && !is_space((unsigned char)s[i]))
                i++;
            a->value_len = (size_t)(s + i - a->value);
        }
    }
    *pos = i;
    return 1;
}

static int name_is(const struct attr *a, const char *name)
{
    size_t n = strlen(name);
    if (a->name_len != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)a->name[i]) != name[i])
            return 0;
    return 1;
}

static int value_is(const struct attr *a, const char *v)
{
    size_t n = strlen(v);
    if (a->value_len != n)
        return 0;
    for (size_t i = 0; i < n; i++)
        if (lower((unsigned char)a->value[i]) != v[i])
            return 0;
    return 1;
}

static int starts_ci(const char *s, size_t n, const char *prefix)
{
    size_t k = strlen(prefix);
    if (n < k)
        return 0;
    for (size_t i = 0; i < k; i++)
        if (lower((unsigned char)s[i]) != prefix[i])
            return 0;
    return 1;
}

static void prescan(const char *s, size_t n, char out[EX_CHARSET_NAME_MAX])
{
    size_t i = 0;
    out[0] = '\0';
    while (i < n) {
        const char *lt = memchr(s + i, '<', n - i);
        if (!lt)
            return;
        i = (size_t)(lt - s);
        if (starts_ci(s + i, n - i, "<!--")) {
            size_t j = i + 4;
            while (j + 3 <= n && memcmp(s + j, "-->", 3) != 0)
                j++;
            i = j + 3;
            continue;
        }
        if (starts_ci(s + i, n - i, "<meta") && i + 5 < n &&
            (is_space((unsigned char)s[i + 5]) || s[i + 5] == '/')) {
            size_t pos = i + 5;
            struct attr a;
            int pragma = 0;
            char from_content[EX_CHARSET_NAME_MAX] = "", from_charset[EX_CHARSET_NAME_MAX] = "";
            while (next_attr(s, n, &pos, &a)) {
                if (name_is(&a, "http-equiv") && value_is(&a, "content-type"))
                    pragma = 1;
                else if (name_is(&a, "content") && !from_content[0])
                    charset_param(a.value, a.value_len, from_content);
                else if (name_is(&a, "charset") && !from_charset[0])
                    normalise_label(a.value, a.value_len, from_charset);
            }
            i = pos + 1;
            const char *got = from_charset[0] ? from_charset : (pragma ? from_content : "");
            if (got[0]) {
                /* a <meta> cannot truthfully say UTF-16: the bytes read as ASCII */
                if (strncmp(got, "UTF-16", 6) == 0)
                    got = "UTF-8";
                set_name(out, got);
                return;
            }
            continue;
        }
        if (i + 1 < n && (s[i + 1] == '!' || s[i + 1] == '?' || s[i + 1] == '/' ||
                          ((s[i + 1] | 32) >= 'a' && (s[i + 1] | 32) <= 'z'))) {
            /* some other tag: skip its name and attributes */
            size_t pos = i + 1;
            while (pos < n && s[pos] != '>' && !is_space((unsigned char)s[pos]))
                pos++;
            struct attr a;
            while (next_attr(s, n, &pos, &a))
                ;
            i = pos + 1;
            continue;
        }
        i++;
    }
}

void ex_charset_sniff(const char *html, size_t len, const char *content_type,
                      char name[EX_CHARSET_NAME_MAX], size_t *bom_len)
{
    const unsigned char *u = (const unsigned char *)html;
    *bom_len = 0;
    if (len >= 3 && u[0] == 0xEF && u[1] == 0xBB && u[2] == 0xBF) {
        *bom_len = 3;
        set_name(name, "UTF-8");
        return;
    }
    if (len >= 2 && u[0] == 0xFF && u[1] == 0xFE) {
        *bom_len = 2;
        set_name(name, "UTF-16LE");
        return;
    }
    if (len >= 2 && u[0] == 0xFE && u[1] == 0xFF) {
        *bom_len = 2;
        set_name(name, "UTF-16BE");
        return;
    }
    if (content_type) {
        charset_param(content_type, strlen(content_type), name);
        if (name[0])
            return;
    }
    prescan(html, len < EX_SNIFF_BYTES ? len : EX_SNIFF_BYTES, name);
    if (name[0])
        return;
    set_name(name, ex_utf8_valid(html, len) ? "UTF-8" : "windows-1252");
}

/* ---- decoders ---- */

static const uint16_t cp1252_high[32] = {
    0x20AC, 0x0081, 0x201A, 0x0192, 0x201E, 0x2026, 0x2020, 0x2021, 0x02C6, 0x2030, 0x0160,
    0x2039, 0x0152, 0x008D, 0x017D, 0x008F, 0x0090, 0x2018, 0x2019, 0x201C, 0x201D, 0x2022,
    0x2013, 0x2014, 0x02DC, 0x2122, 0x0161, 0x203A, 0x0153, 0x009D, 0x017E, 0x0178};

static size_t put_utf8(char *o, uint32_t cp)
{
    if (cp == 0 || (cp >= 0xD800 && cp <= 0xDFFF) || cp > 0x10FFFF)
        cp = 0xFFFD;
    if (cp < 0x80) {
        o[0] = (char)cp;
        return 1;
    }
    if (cp < 0x800) {
        o[0] = (char)(0xC0 | (cp >> 6));
        o[1] = (char)(0x80 | (cp & 0x3F));
        return 2;
    }
    if (cp < 0x10000) {
        o[0] = (char)(0xE0 | (cp >> 12));
        o[1] = (char)(0x80 | ((cp >> 6) & 0x3F));
        o[2] = (char)(0x80 | (cp & 0x3F));
        return 3;
    }
    o[0] = (char)(0xF0 | (cp >> 18));
    o[1] = (char)(0x80 | ((cp >> 12) & 0x3F));
    o[2] = (char)(0x80 | ((cp >> 6) & 0x3F));
    o[3] = (char)(0x80 | (cp & 0x3F));
    return 4;
}

static enum extract_code decode_1252(struct ex_buf *b, const char *in, size_t len)
{
    enum extract_code rc = ex_buf_reserve(b, len * 3);
    if (rc != EXTRACT_OK)
        return rc;
    char *o = b->p + b->len;
    for (size_t i = 0; i < len; i++) {
        unsigned char c = (unsigned char)in[i];
        if (c && c < 0x80)
            *o++ = (char)c;
        else
            o += put_utf8(o, (c >= 0x80 && c < 0xA0) ? cp1252_high[c - 0x80] : c);
    }
    b->len = (size_t)(o - b->p);
    b->p[b->len] = '\0';
    return EXTRACT_OK;
}

static enum extract_code decode_utf16(struct ex_buf *b, const char *in, size_t len, int be)
{
    enum extract_code rc = ex_buf_reserve(b, len / 2 * 3 + 4);
    if (rc != EXTRACT_OK)
        return rc;
    const unsigned char *u = (const unsigned char *)in;
    char *o = b->p + b->len;
    size_t i = 0;
    while (i + 1 < len) {
        uint32_t cu = be ? (uint32_t)(u[i] << 8 | u[i + 1]) : (uint32_t)(u[i + 1] << 8 | u[i]);
        i += 2;
        if (cu >= 0xD800 && cu <= 0xDBFF && i + 1 < len) {
            uint32_t lo = be ? (uint32_t)(u[i] << 8 | u[i + 1]) : (uint32_t)(u[i + 1] << 8 | u[i]);
            if (lo >= 0xDC00 && lo <= 0xDFFF) {
                i += 2;
                cu = 0x10000 + ((cu - 0xD800) << 10) + (lo - 0xDC00);
            }
        }
        o += put_utf8(o, cu); /* lone surrogates and NUL become U+FFFD */
    }
    if (i < len)
        o += put_utf8(o, 0xFFFD); /* odd trailing byte */
    b->len = (size_t)(o - b->p);
    b->p[b->len] = '\0';
    return EXTRACT_OK;
}

/* iconv into b; returns EXTRACT_EINVAL when iconv does not know the charset. */
static enum extract_code decode_iconv(struct ex_buf *b, const char *in, size_t len,
                                      const char *name)
{
    iconv_t cd = iconv_open("UTF-8", iconv_name(name));
    if (cd == (iconv_t)-1)
        return EXTRACT_EINVAL;
    enum extract_code rc = EXTRACT_OK;
    char *ip = (char *)in; /* iconv's prototype is not const-correct */
    size_t left = len;
    while (left > 0) {
        rc = ex_buf_reserve(b, left * 2 + 16);
        if (rc != EXTRACT_OK)
            break;
        char *op = b->p + b->len;
        size_t room = b->cap - b->len - 1;
        size_t r = iconv(cd, &ip, &left, &op, &room);
        b->len = (size_t)(op - b->p);
        if (r != (size_t)-1)
            continue;
        if (errno == E2BIG)
            continue;
        /* EILSEQ or EINVAL (truncated at the end): U+FFFD for one byte, go on */
        rc = ex_buf_add(b, "\xEF\xBF\xBD", 3);
        if (rc != EXTRACT_OK)
            break;
        ip++;
        left--;
    }
    if (rc == EXTRACT_OK) {
        /* flush the shift state of stateful charsets (ISO-2022-JP) */
        rc = ex_buf_reserve(b, 16);
        if (rc == EXTRACT_OK) {
            char *op = b->p + b->len;
            size_t room = b->cap - b->len - 1;
            if (iconv(cd, NULL, NULL, &op, &room) != (size_t)-1)
                b->len = (size_t)(op - b->p);
        }
    }
    iconv_close(cd);
    if (rc == EXTRACT_OK && b->p)
        b->p[b->len] = '\0';
    return rc;
}

enum extract_code ex_decode(const char *in, size_t len, char name[EX_CHARSET_NAME_MAX],
                            struct ex_buf *buf, const char **out, size_t *out_len)
{
    enum extract_code rc;
    struct ex_buf tmp;
    if (strcmp(name, "UTF-8") != 0 && strcmp(name, "windows-1252") != 0 &&
        strncmp(name, "UTF-16", 6) != 0) {
        ex_buf_init(&tmp, buf->max);
        rc = decode_iconv(&tmp, in, len, name);
        if (rc == EXTRACT_EINVAL) {
            /* unknown charset: the sensible fallback, and say so */
            ex_buf_release(&tmp);
            set_name(name, ex_utf8_valid(in, len) ? "UTF-8" : "windows-1252");
        } else if (rc != EXTRACT_OK) {
            ex_buf_release(&tmp);
            return rc;
        } else {
            /* iconv gave UTF-8; it may still hold NULs (a NUL in the input) */
            if (ex_utf8_valid(tmp.p ? tmp.p : "", tmp.len)) {
                ex_buf_release(buf);
                *buf = tmp;
            } else {
                rc = ex_utf8_repair(buf, tmp.p, tmp.len);
                ex_buf_release(&tmp);
                if (rc != EXTRACT_OK)
                    return rc;
            }
            *out = buf->p ? buf->p : "";
            *out_len = buf->len;
            return EXTRACT_OK;
        }
    }
    if (strcmp(name, "UTF-8") == 0) {
        if (ex_utf8_valid(in, len)) {
            *out = in;
            *out_len = len;
            return EXTRACT_OK;
        }
        rc = ex_utf8_repair(buf, in, len);
    } else if (strcmp(name, "windows-1252") == 0) {
        rc = decode_1252(buf, in, len);
    } else {
        rc = decode_utf16(buf, in, len, strcmp(name, "UTF-16BE") == 0);
    }
    if (rc != EXTRACT_OK)
        return rc;
    *out = buf->p ? buf->p : "";
    *out_len = buf->len;
    return EXTRACT_OK;
}
