#ifndef EXTRACT_EXTRACT_H
#define EXTRACT_EXTRACT_H
/*
 * extract: HTML in, main text, links and metadata out, and the normalised word tokens
 * that the fingerprint is computed from (docs/FINGERPRINT.md, section "Tokens").
 *
 * Needs only libxml2 and utf8proc. No libxml2 type appears here.
 */
#include <stddef.h>
#include <stdint.h>

#define EXTRACT_WARN_UNUSED __attribute__((warn_unused_result))

/* Error codes: 0 is OK; codes are only ever appended. */
enum extract_code {
    EXTRACT_OK = 0,
    EXTRACT_ENOMEM,    /* out of memory; nothing changed */
    EXTRACT_EEMPTY,    /* the input is empty (0 bytes, or only white space) */
    EXTRACT_EBINARY,   /* the input is not text (NUL bytes, a binary signature) */
    EXTRACT_ETOOLARGE, /* the input is over opts->max_bytes */
    EXTRACT_EPARSE,    /* libxml2 could not build a document at all */
    EXTRACT_ENOTEXT,   /* parsed, but no main text was found */
    EXTRACT_EINVAL,    /* a bad argument (programmer error) */
};

/* A short lower-case description of code, e.g. "input is binary, not html". */
const char *extract_strerror(enum extract_code code);

/*
 * Return conventions, one for all of extract/ (this header and extract_int.h): a call that
 * can fail returns enum extract_code (EXTRACT_WARN_UNUSED) and gives its results through
 * out-parameters (*out NULL on error); a call that cannot fail returns its value: a
 * borrowed string or link, a count, EXTRACT_CUT_* bits, or 1/0 for a yes/no question
 * (extract_doc_noindex). errno never crosses.
 */

/*
 * Process-wide and optional: installs libxml2 allocators (xmlGcMemSetup) that spare the
 * extractor a malloc + moving realloc per attribute value (about 5% of parse time; HOW IT
 * WORKS in extract/walk.c). Only a program's main() may call it, once, before any thread
 * and any libxml2 use; a library (libsimcrawl) never does, as it would change the
 * allocator under a host that uses libxml2 itself (wget2, Python with lxml). Extraction
 * gives the same results with or without it.
 */
void extract_xml_alloc_setup(void);

/* Caps and hints; zero-initialise and set what you need (0 means the default). */
struct extract_opts {
    const char *content_type; /* HTTP Content-Type header value, or NULL (for the charset) */
    const char *base_url;     /* URL of the page, for resolving links, or NULL */
    size_t max_bytes;         /* refuse larger input; default EXTRACT_DEFAULT_MAX_BYTES */
    unsigned max_depth; /* deepest element nesting walked; default EXTRACT_DEFAULT_MAX_DEPTH */
    size_t max_links;   /* links kept, in document order; default EXTRACT_DEFAULT_MAX_LINKS */
};

#define EXTRACT_DEFAULT_MAX_BYTES (64u * 1024 * 1024)
#define EXTRACT_DEFAULT_MAX_DEPTH 256u
#define EXTRACT_DEFAULT_MAX_LINKS 100000u
#define EXTRACT_MAX_DEPTH_LIMIT 1000000u /* largest max_depth accepted (a stack entry each) */
#define EXTRACT_TOKEN_MAX_BYTES 64u      /* a longer token is cut (docs/FINGERPRINT.md, Tokens) */

struct extract_doc; /* opaque */

/* One link of the page, in document order. Borrowed from the doc. */
struct extract_link {
    const char *url;    /* resolved against <base href> / base_url when given; UTF-8 */
    const char *anchor; /* anchor text, white space collapsed; "" when none */
    unsigned nofollow;  /* rel contains nofollow (or sponsored/ugc) */
    unsigned in_main;   /* the link lies inside the main content */
};

/*
 * Parses html[0..len) and finds its main content. On success *out is a new doc:
 * caller frees with extract_doc_free(). On error *out is NULL.
 */
EXTRACT_WARN_UNUSED enum extract_code extract_doc_parse(const char *html, size_t len,
                                                        const struct extract_opts *opts,
                                                        struct extract_doc **out);
void extract_doc_free(struct extract_doc *doc); /* NULL-safe */

/* All borrowed: valid until extract_doc_free(doc). Strings are valid UTF-8, NUL-terminated. */
const char *extract_doc_text(const struct extract_doc *doc,
                             size_t *len);                    /* blocks split by "\n\n" */
const char *extract_doc_title(const struct extract_doc *doc); /* "" when none */
/* the page's own heading as the text keeps it: the first kept heading of the highest
 * level (h1 before h2 ...); "" when the text keeps none (docs/FINGERPRINT.md) */
const char *extract_doc_heading(const struct extract_doc *doc);
const char *extract_doc_lang(const struct extract_doc *doc);      /* e.g. "en", "" when unknown */
const char *extract_doc_canonical(const struct extract_doc *doc); /* rel=canonical, "" when none */
const char *extract_doc_base(const struct extract_doc *doc); /* effective base URL, "" when none */
const char *extract_doc_charset(const struct extract_doc *doc); /* the charset decoded from */
unsigned extract_doc_noindex(const struct extract_doc *doc);    /* meta robots noindex/none */
unsigned extract_doc_nofollow(const struct extract_doc *doc);   /* meta robots nofollow/none */
size_t extract_doc_link_count(const struct extract_doc *doc);
const struct extract_link *extract_doc_link(const struct extract_doc *doc, size_t i);

/*
 * What the caps of struct extract_opts cut from the page. Nothing is cut silently: a
 * caller that keeps a doc with cuts tells its user (the commands print one warning per
 * page and the crawl log gets a "truncated" field).
 */
enum {
    EXTRACT_CUT_LINKS = 1u << 0, /* links after the max_links-th were dropped */
    EXTRACT_CUT_DEPTH = 1u << 1, /* elements nested deeper than max_depth were skipped,
                                  * with their text and links */
};
struct extract_cuts {
    size_t links_dropped;   /* links not kept (over max_links) */
    size_t deep_elements;   /* elements below max_depth, skipped */
    size_t deep_text_bytes; /* bytes of text (not white space only) inside them, dropped */
    size_t max_links;       /* the caps in force */
    unsigned max_depth;
};
/* EXTRACT_CUT_* bits, 0 when nothing was cut; fills *cuts when cuts is not NULL. */
unsigned extract_doc_truncated(const struct extract_doc *doc, struct extract_cuts *cuts);

/*
 * The normalised word tokens of text[0..len) (valid UTF-8), as docs/FINGERPRINT.md
 * specifies: NFKC, case folded, marks stripped; a token is a maximal run of letters,
 * marks, digits and connector punctuation, and every CJK ideograph / kana is a token of
 * its own. The tokens are written to *out separated by exactly one space (no leading or
 * trailing space), NUL-terminated; *out_len is the length without the NUL, *n_tokens the
 * count. Caller frees *out with free().
 */
EXTRACT_WARN_UNUSED enum extract_code extract_tokens(const char *text, size_t len, char **out,
                                                     size_t *out_len, size_t *n_tokens);

/*
 * The token string of a page's name (docs/FINGERPRINT.md section 6, version 10): the
 * tokens of heading[0..len) (the page's own heading, its label left out) as
 * extract_tokens() gives them but with each mathematical symbol a token of its own
 * ("x ≤ y" -> "x ≤ y"; not arrows, geometric shapes or the variants of ASCII
 * punctuation: "→", "▷", "−"), then each run of ASCII operator characters
 * (! $ % & * + - / < = > ? @ \ ^ | ~; not "#", which themes write after a heading as
 * its link mark) in the heading as one token more, in order
 * ("@@ -- a binary operator" -> "a binary operator @@ --"), except a single "-" (a hyphen
 * or a dash) and a run directly between two ASCII word bytes ("x-y", "a->b", "a/b").
 * Output as extract_tokens()'s; caller frees *out with free(). Also read over a whole
 * short text, whose fingerprint it keys with the text's symbols (version 11,
 * dedup_symbol_key()), and over a headless page's <title>, its name (version 12,
 * dedup_title_tokens()).
 */
EXTRACT_WARN_UNUSED enum extract_code
extract_name_tokens(const char *heading, size_t len, char **out, size_t *out_len, size_t *n_tokens);

#endif
