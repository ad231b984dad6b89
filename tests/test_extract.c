/*
 * Suite "extract": HTML in, main text, links and metadata out (extract/extract.h).
 * Charset sniffing (header, BOM, <meta>, fallbacks, invalid UTF-8), boilerplate removal
 * on small handmade pages, links and URL resolution (RFC 3986 section 5.4 examples),
 * metadata, the FINGERPRINT tokens (version 7's code punctuation included), bad input (empty, binary, huge, deep, one giant
 * line), and the data-driven fixtures tests/data/extract/NNN.html -> NNN.txt (expected
 * `simcrawl extract --text` output, optional NNN.ct holding a Content-Type), and the
 * template-only pages of tests/data/extract/notext/ ("too little text").
 * Big inputs are generated here, never committed.
 */
#include <CUnit/CUnit.h>
#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "extract/extract.h"
#include "tests/testutil.h"

extern void test_extract_register(void);

#if defined(__SANITIZE_ADDRESS__)
#define SANITIZED 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define SANITIZED 1
#endif
#endif
#ifndef SANITIZED
#define SANITIZED 0
#endif

/* ---- helpers ---- */

static struct extract_doc *parse_opts(const char *html, size_t len, const char *ct,
                                      const char *base)
{
    struct extract_opts o;
    memset(&o, 0, sizeof o);
    o.content_type = ct;
    o.base_url = base;
    struct extract_doc *doc = NULL;
    enum extract_code rc = extract_doc_parse(html, len, &o, &doc);
    ASSERT_EQ(rc, EXTRACT_OK);
    if (rc != EXTRACT_OK)
        fprintf(stderr, "\nparse failed: %s\n", extract_strerror(rc));
    return doc;
}

static struct extract_doc *parse(const char *html)
{
    return parse_opts(html, strlen(html), NULL, NULL);
}

static const char *text_of(struct extract_doc *doc)
{
    return doc ? extract_doc_text(doc, NULL) : "";
}

static int contains(const char *hay, const char *needle)
{
    return hay && strstr(hay, needle) != NULL;
}

static int valid_utf8(const char *s)
{
    const unsigned char *u = (const unsigned char *)s;
    while (*u) {
        size_t k = *u < 0x80 ? 1 : *u >= 0xF0 ? 4 : *u >= 0xE0 ? 3 : *u >= 0xC2 ? 2 : 0;
        if (k == 0)
            return 0;
        for (size_t j = 1; j < k; j++)
            if ((u[j] & 0xC0) != 0x80)
                return 0;
        u += k;
    }
    return 1;
}

/* A tokeniser: extract_tokens() or extract_name_tokens(). */
typedef enum extract_code (*tokeniser)(const char *, size_t, char **, size_t *, size_t *);

/* s's token string by tok (its count in *n when n), checked for its length; NULL when
 * tok failed. */
static char *tokens_by(tokeniser tok, const char *s, size_t *n)
{
    char *out = NULL;
    size_t len = 0, count = 0;
    enum extract_code rc = tok(s, strlen(s), &out, &len, &count);
    ASSERT_EQ(rc, EXTRACT_OK);
    if (rc != EXTRACT_OK)
        return NULL;
    ASSERT_EQ(strlen(out), len);
    if (n)
        *n = count;
    return out;
}

static char *tokens(const char *s, size_t *n)
{
    return tokens_by(extract_tokens, s, n);
}

/* in's token string by tok is want (what names the tokeniser in a failure's message). */
static void assert_tokens_by(tokeniser tok, const char *what, const char *in, const char *want)
{
    char *t = tokens_by(tok, in, NULL);
    CU_ASSERT_PTR_NOT_NULL(t);
    if (t) {
        CU_ASSERT_STRING_EQUAL(t, want);
        if (strcmp(t, want) != 0)
            fprintf(stderr, "\n%s(%s) = '%s', want '%s'\n", what, in, t, want);
    }
    free(t);
}

#define ASSERT_TOKENS(in, want) assert_tokens_by(extract_tokens, "tokens", in, want)

/* ---- charset ---- */

static void test_extract_charset_header(void)
{
    /* the header wins over <meta> */
    const char *html = "<meta charset=\"utf-8\"><p>caf\xe9 cr\xe8me</p>";
    struct extract_doc *d = parse_opts(html, strlen(html), "text/html; Charset=\"ISO-8859-1\"",
                                       NULL);
    CU_ASSERT_STRING_EQUAL(text_of(d), "caf\xc3\xa9 cr\xc3\xa8me");
    if (d)
        CU_ASSERT_STRING_EQUAL(extract_doc_charset(d), "windows-1252");
    extract_doc_free(d);
}

static void test_extract_charset_bom(void)
{
    const char u8[] = "\xef\xbb\xbf<p>\xe2\x82\xac 5</p>";
    struct extract_doc *d = parse(u8);
    CU_ASSERT_STRING_EQUAL(text_of(d), "\xe2\x82\xac 5");
    if (d)
        CU_ASSERT_STRING_EQUAL(extract_doc_charset(d), "UTF-8");
    extract_doc_free(d);
    /* UTF-16LE with BOM: NUL bytes are fine here, and the BOM beats the header */
    const char u16[] = "\xff\xfe<\0p\0>\0h\0\xe9\0!\0<\0/\0p\0>\0";
    d = parse_opts(u16, sizeof u16 - 1, "text/html; charset=iso-8859-1", NULL);
    CU_ASSERT_STRING_EQUAL(text_of(d), "h\xc3\xa9!");
    if (d)
        CU_ASSERT_STRING_EQUAL(extract_doc_charset(d), "UTF-16LE");
    extract_doc_free(d);
}

static void test_extract_charset_meta(void)
{
    /* windows-1251 Cyrillic: "Привет мир" */
    struct extract_doc *d =
        parse("<html><head><meta charset='windows-1251'></head><body><p>\xcf\xf0\xe8\xe2\xe5\xf2 "
              "\xec\xe8\xf0</p></body></html>");
    CU_ASSERT_STRING_EQUAL(text_of(d), "Привет мир");
    if (d)
        CU_ASSERT_STRING_EQUAL(extract_doc_charset(d), "windows-1251");
    extract_doc_free(d);
}

static void test_extract_charset_http_equiv(void)
{
    struct extract_doc *d = parse(
        "<!-- <meta charset=utf-16> in a comment is no declaration -->"
        "<META HTTP-EQUIV=\"Content-Type\" CONTENT=\"text/html; charset=Shift_JIS\">"
        "<p>\x93\xfa\x96\x7b</p>"); /* 日本 */
    CU_ASSERT_STRING_EQUAL(text_of(d), "日本");
    if (d)
        CU_ASSERT_STRING_EQUAL(extract_doc_charset(d), "Shift_JIS");
    extract_doc_free(d);
}

static void test_extract_charset_latin1_fallback(void)
{
    /* not valid UTF-8, nothing declared: windows-1252 (0x93/0x94 are curly quotes) */
    struct extract_doc *d = parse("<p>\x93quoted\x94 na\xefve</p>");
    CU_ASSERT_STRING_EQUAL(text_of(d), "\xe2\x80\x9cquoted\xe2\x80\x9d na\xc3\xafve");
    if (d)
        CU_ASSERT_STRING_EQUAL(extract_doc_charset(d), "windows-1252");
    extract_doc_free(d);
    /* valid UTF-8, nothing declared: UTF-8 */
    d = parse("<p>na\xc3\xafve</p>");
    if (d)
        CU_ASSERT_STRING_EQUAL(extract_doc_charset(d), "UTF-8");
    extract_doc_free(d);
}

static void test_extract_charset_unknown(void)
{
    struct extract_doc *d = parse("<meta charset=\"x-no-such-charset\"><p>caf\xc3\xa9</p>");
    CU_ASSERT_STRING_EQUAL(text_of(d), "caf\xc3\xa9");
    if (d)
        CU_ASSERT_STRING_EQUAL(extract_doc_charset(d), "UTF-8");
    extract_doc_free(d);
    d = parse("<meta charset=\"x-no-such-charset\"><p>caf\xe9</p>");
    CU_ASSERT_STRING_EQUAL(text_of(d), "caf\xc3\xa9");
    if (d)
        CU_ASSERT_STRING_EQUAL(extract_doc_charset(d), "windows-1252");
    extract_doc_free(d);
}

static void test_extract_charset_invalid_utf8_output_valid(void)
{
    /* declared UTF-8, but broken: truncated, overlong, surrogate, stray bytes */
    const char *html = "<meta charset=utf-8><p>a\xc3\x28 b\xe2\x82 c\xc0\xaf d\xed\xa0\x80 e\xff"
                       " &#xD800; &#0; &#x110000; f</p><title>t\xfe</title>";
    struct extract_doc *d = parse(html);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT(valid_utf8(text_of(d)));
    CU_ASSERT(valid_utf8(extract_doc_title(d)));
    CU_ASSERT(contains(text_of(d), "a\xef\xbf\xbd("));
    CU_ASSERT(contains(text_of(d), " f"));
    extract_doc_free(d);
}

/* ---- boilerplate ---- */

static const char blog_page[] =
    "<!DOCTYPE html><html lang='en-GB'><head><title> My  blog &amp; more </title></head><body>"
    "<header><a href='/'>Home</a> <a href='/about'>About</a></header>"
    "<nav class='menu'><ul><li><a href='/a'>Archive</a></li><li><a href='/t'>Tags</a></li></ul></nav>"
    "<div id='content'><article class='post'><h1>Why simhash works</h1>"
    "<p class='byline'>By Ann, 3 May 2024</p>"
    "<p>Charikar's simhash maps a set of weighted features to a short fingerprint, so that "
    "similar sets get fingerprints that differ in few bits, which is what we want here.</p>"
    "<p>Manku, Jain and Das Sarma showed how to find all fingerprints within a small Hamming "
    "distance quickly, using permuted tables, and this made it practical at web scale.</p>"
    "<div class='share-buttons'><a href='https://t.example/s'>Tweet</a> "
    "<a href='https://f.example/s'>Share</a></div>"
    "<h2>Shingles</h2><ul><li>Word 4-grams of the main text, weighted by frequency.</li>"
    "<li>Hashed with XXH3, then summed bit by bit.</li></ul>"
    "<pre>int  x = 1;\n  return x;</pre>"
    "</article><aside class='sidebar'><h3>Popular</h3><p>Some other long post title that is "
    "here, with commas, and more words, to look like content but in a sidebar.</p></aside>"
    "</div><footer><p>Copyright 2024, all rights reserved, do not copy this page ever.</p>"
    "</footer><script>document.write('<p>no</p>')</script></body></html>";

static void test_extract_boilerplate_blog(void)
{
    struct extract_doc *d = parse(blog_page);
    const char *t = text_of(d);
    CU_ASSERT(contains(t, "Why simhash works\n\n"));
    CU_ASSERT(contains(t, "Charikar's simhash maps"));
    CU_ASSERT(contains(t, "permuted tables, and this made it practical at web scale."));
    CU_ASSERT(contains(t, "Shingles\n\nWord 4-grams"));
    CU_ASSERT(contains(t, "\n\nHashed with XXH3"));
    CU_ASSERT(contains(t, "int  x = 1;\n  return x;"));
    CU_ASSERT(!contains(t, "Archive"));
    CU_ASSERT(!contains(t, "Tweet"));
    CU_ASSERT(!contains(t, "sidebar"));
    CU_ASSERT(!contains(t, "Copyright"));
    CU_ASSERT(!contains(t, "no"));
    CU_ASSERT(!contains(t, "Home"));
    if (d) {
        CU_ASSERT_STRING_EQUAL(extract_doc_title(d), "My blog & more");
        CU_ASSERT_STRING_EQUAL(extract_doc_lang(d), "en");
    }
    extract_doc_free(d);
}

/* A page with no content area marked (no landmark, no generator's area, no positive
 * name): the body is the content area, so a text block beside the winner's box (a demo's
 * description beside the widget whose panel won) joins it in page order (boiler.c step 4,
 * keep_body_uncles); the site's menu (a list of links, a div named "menu") and its footer
 * (<footer>, div#footer) beside the same box stay out. On main the description went. */
static void test_extract_body_area_siblings(void)
{
    struct extract_doc *d = parse(
        "<body><div id='menu'><a href='/'>Home</a> | <a href='/demos'>All demos</a></div>"
        "<ul><li><a href='/a'>Accordion</a></li><li><a href='/t'>Tabs</a></li>"
        "<li><a href='/d'>Dialog, a window over the page, with its own title bar</a></li>"
        "</ul><div class='wrap'><div id='tabs'><ul><li><a href='#p1'>One</a></li>"
        "<li><a href='tabs/two.html'>Two</a></li></ul><div id='p1'><p>Proin elit arcu, "
        "rutrum commodo, vehicula tempus, commodo a, risus. Curabitur nec arcu. Donec "
        "sollicitudin mi sit amet mauris. Nam elementum quam ullamcorper ante. Etiam "
        "aliquet massa et lorem. Mauris dapibus lacus auctor risus.</p></div></div>"
        "<div class='demo-description'><p>Fetch the content of a tab from the server when "
        "the tab is opened, by setting an href value in the tab's link.</p></div></div>"
        "<div id='footer'><p>Copyright 2024 The Widget Project and its many contributors, "
        "released under the terms of the MIT licence.</p></div>"
        "<footer><p>This page was written by the widget team, with the help of many "
        "readers, and is updated with every release of the library.</p></footer></body>");
    const char *t = text_of(d);
    CU_ASSERT(contains(t, "Proin elit arcu"));
    CU_ASSERT(contains(t, "risus.\n\nFetch the content of a tab")); /* in page order */
    CU_ASSERT(!contains(t, "Home"));
    CU_ASSERT(!contains(t, "Dialog"));
    CU_ASSERT(!contains(t, "Copyright"));
    CU_ASSERT(!contains(t, "widget team"));
    extract_doc_free(d);
}

/* A <dt> whose name links to the element holding it is a definition (walk.c self_link):
 * kept with its type links, and its percent-encoded fragment ("%2C") still names the id.
 * A term linking to another page's anchor, or to an id it does not lie in, is a link. */
static void test_extract_permalink_definitions(void)
{
    struct extract_doc *d = parse(
        "<body><main><h1>Module io</h1><p>This module reads and writes streams of bytes, "
        "lines and records, with buffering, and closes them when the program ends.</p>"
        "<dl><div id='open,File,Mode'><dt><pre>proc <a href='#open%2CFile%2CMode'>open</a>(f: "
        "<a href='sys.html#File'>File</a>; m: <a href='sys.html#Mode'>Mode</a>)</pre></dt>"
        "<dd><a href='https://example.org/src#L1'>Source</a></dd></div>"
        "<div id='close,File'><dt><pre>proc <a href='io.html#close%2CFile'>close</a>(f: "
        "<a href='sys.html#File'>File</a>)</pre></dt>"
        "<dd><a href='https://example.org/src#L9'>Source</a></dd></div>"
        "<div id='seek'><dt><pre>proc <a href='#flush'>flushAll</a>(f: "
        "<a href='sys.html#File'>File</a>)</pre></dt>"
        "<dd><a href='https://example.org/src#L20'>Source</a></dd></div>"
        "<div id='tell'><dt><pre>proc <a href='other/io.html#tell'>tellOther</a>(f: "
        "<a href='sys.html#File'>File</a>)</pre></dt>"
        "<dd><a href='https://example.org/src#L30'>Source</a></dd></div></dl>"
        "<p>Errors are raised as IOError, with the path and the operating system's "
        "message, and never returned as codes. A stream that is not closed by the program "
        "is closed when the program ends, after its buffer is written, so that no byte "
        "written to it is lost, even when the program ends through an exception.</p>"
        "</main></body>");
    const char *t = text_of(d);
    CU_ASSERT(contains(t, "proc open(f: File; m: Mode)"));
    CU_ASSERT(contains(t, "proc close(f: File)"));
    CU_ASSERT(!contains(t, "flushAll"));  /* #flush names no element it lies in */
    CU_ASSERT(!contains(t, "tellOther")); /* a path: another page */
    CU_ASSERT(!contains(t, "Source"));
    extract_doc_free(d);
}

/* Footnotes in <aside> (docutils >= 0.18, DPUB-ARIA) are the document's; a sidebar <aside>
 * in the same section is not. */
static void test_extract_boilerplate_footnote_aside(void)
{
    struct extract_doc *d = parse(
        "<body><nav><a href='/'>Home</a> <a href='/x'>Index</a></nav><main><section>"
        "<h1>Building a JIT</h1><p>The class <a href='#f1' role='doc-noteref'>[1]</a> is a "
        "cut-down version of the one in the tutorials, with fewer features, to keep it short "
        "and simple for the reader, who will extend it chapter by chapter.</p>"
        "<p>Each chapter adds one layer to the JIT, from the simple compiler up to lazy "
        "compilation, and each layer is explained with its code, line by line.</p>"
        "<aside class='footnote-list brackets'><aside class='footnote brackets' id='f1' "
        "role='note'><span class='label'>[<a role='doc-backlink' href='#r1'>1</a>]</span>"
        "<p>Actually we use a simplified version that cannot redefine symbols in the REPL, "
        "which makes the lookup logic simpler.</p></aside></aside>"
        "<aside role='doc-endnotes'><p>Endnote: the first version of this text appeared in "
        "2015, for the release of LLVM 3.7, and was rewritten since.</p></aside>"
        "<aside class='sidebar'><p>Other tutorials you may like, with many words, commas, and "
        "links to read next.</p></aside></section></main></body>");
    const char *t = text_of(d);
    CU_ASSERT(contains(t, "Each chapter adds one layer"));
    CU_ASSERT(contains(t, "Actually we use a simplified version"));
    CU_ASSERT(contains(t, "Endnote: the first version"));
    CU_ASSERT(!contains(t, "Other tutorials"));
    CU_ASSERT(!contains(t, "Home"));
    extract_doc_free(d);
}

static void test_extract_boilerplate_hidden(void)
{
    struct extract_doc *d = parse(
        "<body><div class='content'><p>Visible paragraph with enough words to be the main "
        "text of this small page, no doubt about it.</p>"
        "<p hidden>hidden-attr</p><p style='color:red; DISPLAY : none'>display-none</p>"
        "<p aria-hidden='true'>aria-hidden</p><p style='visibility:hidden'>invisible</p>"
        "<dialog><p>closed-dialog</p></dialog><noscript><p>noscript</p></noscript>"
        "<template><p>template</p></template><svg><title>svgtitle</title><desc>svgdesc</desc>"
        "<text>svg<tspan>label</tspan></text><text>second</text><path d='M0 0'/></svg>"
        "<form><input value='input'><select><option>option</option></select>"
        "<textarea>textarea</textarea><button>button</button></form>"
        "<style>.x{}</style><p>Second visible paragraph, also long enough to be kept by "
        "any sensible extractor out there.</p></div></body>");
    const char *t = text_of(d);
    CU_ASSERT(contains(t, "Visible paragraph"));
    CU_ASSERT(contains(t, "Second visible paragraph"));
    /* a diagram's <text> labels are the page's text (one word boundary each); an icon's
     * <title> and <desc> are not */
    CU_ASSERT(contains(t, "svglabel second"));
    static const char *const gone[] = {"hidden-attr", "display-none", "aria-hidden", "invisible",
                                       "closed-dialog", "noscript", "template", "svgtitle",
                                       "svgdesc",
                                       "input", "option", "textarea", "button", ".x"};
    for (size_t i = 0; i < sizeof gone / sizeof gone[0]; i++) {
        CU_ASSERT(!contains(t, gone[i]));
        if (contains(t, gone[i]))
            fprintf(stderr, "\n'%s' should be dropped\n", gone[i]);
    }
    extract_doc_free(d);
}

/* The numbers Sphinx and pandoc put before a heading, in a span of their own, are the
 * section's place in one release's table of contents: no text (a chapter moved between two
 * releases renumbers every heading of the page). A number written in the heading's own
 * text, or a span of another class, stays. */
static void test_extract_section_numbers(void)
{
    struct extract_doc *d = parse(
        "<body><div class='body' role='main'><section>"
        "<h1><span class='section-number'>2.2. </span>Command Line Usage</h1>"
        "<p>This document provides guidelines for running the analyzer from the command "
        "line on whole projects, with two tools that drive it.</p>"
        "<h2><span class=\"header-section-number\">3.1</span> Comparison</h2>"
        "<p>Both provide a way of driving the analyzer and generating reports for the "
        "files of a project.</p><h2>4.7 Written by hand</h2>"
        "<p>A heading whose number is its own text keeps it, and <span class='num'>9.9</span> "
        "inside a paragraph stays too.</p></section></div></body>");
    const char *t = text_of(d);
    CU_ASSERT(contains(t, "Command Line Usage"));
    CU_ASSERT(contains(t, "Comparison"));
    CU_ASSERT(!contains(t, "2.2."));
    CU_ASSERT(!contains(t, "3.1"));
    CU_ASSERT(contains(t, "4.7 Written by hand"));
    CU_ASSERT(contains(t, "9.9"));
    extract_doc_free(d);
}

static void test_extract_text_whitespace(void)
{
    struct extract_doc *d = parse("<p>  a \t b\n\n c&nbsp;&nbsp;d<br>e <br> f</p>"
                                  "<pre>\n  x\r\n    y  </pre><p>g</p>");
    CU_ASSERT_STRING_EQUAL(text_of(d), "a b c d\ne\nf\n\n  x\n    y\n\ng");
    extract_doc_free(d);
}

static void test_extract_text_blocks(void)
{
    struct extract_doc *d =
        parse("<table><tr><td>cell one</td><td>cell two</td></tr></table>"
              "<h2>Head</h2><ul><li>item <b>bold</b>one</li><li>item two</li></ul><div>in "
              "<span>line</span></div>");
    CU_ASSERT_STRING_EQUAL(text_of(d), "cell one\n\ncell two\n\nHead\n\nitem boldone\n\n"
                                       "item two\n\nin line");
    extract_doc_free(d);
}

#define SPHINX_FMT \
        "<html><body><div class='related' role='navigation'><ul><li><a href='i.html'>index" \
    "</a></li><li><a href='%s.html'>next: %s</a></li></ul></div>" \
    "<div class='document'><div class='documentwrapper'><div class='bodywrapper'>" \
    "<div class='body' role='main'><section id='x'><h1>Clang Compiler User's Manual" \
    "<a class='headerlink' href='#x'>¶</a></h1><p>The Clang Compiler is an open-source " \
    "compiler for the C family of programming languages, aiming to be the best in class " \
    "implementation of these languages.</p><p>This document describes important notes " \
    "about using Clang as a compiler for an end-user, documenting the supported features, " \
    "command line options, etc.</p></section></div></div></div>" \
    "<div class='sphinxsidebar' role='navigation'><h3>Contents</h3><ul><li><a href='#'>" \
    "%s</a></li></ul><div id='searchbox' role='search'><form><input name='q'></form></div>" \
    "</div></div><div class='footer'>&copy; Copyright 2007-%s, The Clang Team.</div>" \
    "</body></html>"

static void test_extract_text_sphinx_nav(void)
{
    /* the same page with two different navigations gives the same text */
    char a[4096], b[4096];
    snprintf(a, sizeof a, SPHINX_FMT, "intro", "Introduction", "Table of contents", "2022");
    snprintf(b, sizeof b, SPHINX_FMT, "tools", "Clang Tools", "Contents of this page", "2023");
    struct extract_doc *da = parse(a), *db = parse(b);
    CU_ASSERT_STRING_EQUAL(text_of(da), text_of(db));
    CU_ASSERT(contains(text_of(da), "Clang Compiler User's Manual"));
    CU_ASSERT(contains(text_of(da), "command line options, etc."));
    CU_ASSERT(!contains(text_of(da), "Copyright"));
    CU_ASSERT(!contains(text_of(da), "next"));
    extract_doc_free(da);
    extract_doc_free(db);
}

#define HUB_FMT \
    "<html><body><div class='related' role='navigation'><ul><li><a href='i.html'>index" \
    "</a></li></ul></div><div class='body' role='main'><section><h1>%s</h1>" \
    "<p>Instruction input.</p><p>Size: 1 dword.</p><p>Operands:</p><ul>%s</ul></section></div>" \
    "<div class='sphinxsidebar' role='navigation'><ul><li><a href='#'>Sidebar entry</a>" \
    "</li></ul></div></body></html>"

static void test_extract_text_hub_links(void)
{
    /* a table of contents: the links are the page's text, the navigation is not */
    struct extract_doc *d = parse(
        "<html><body><div role='navigation'><a href='/'>Home</a> <a href='/x'>Other</a></div>"
        "<div role='main'><h1>3. Developer Docs</h1><p>Contents:</p><ul>"
        "<li><a href='a.html'>3.1. Debug Checks</a></li><li><a href='b.html'>3.2. Inlining</a>"
        "</li><li><a href='c.html'>3.3. Initializer List</a></li><li><a href='d.html'>3.4. "
        "Nullability Checks</a></li><li><a href='e.html'>3.5. Region Store</a></li></ul></div>"
        "<footer><a href='/c'>Copyright notice</a></footer></body></html>");
    const char *t = text_of(d);
    CU_ASSERT(contains(t, "3. Developer Docs"));
    CU_ASSERT(contains(t, "3.1. Debug Checks"));
    CU_ASSERT(contains(t, "3.5. Region Store"));
    CU_ASSERT(!contains(t, "Home"));
    CU_ASSERT(!contains(t, "Copyright"));
    extract_doc_free(d);

    /* two stubs that differ only in their (all-link) operand lists differ in text */
    char a[2048], b[2048];
    snprintf(a, sizeof a, HUB_FMT, "src",
             "<li><a href='v'>v</a></li><li><a href='s'>s</a></li><li><a href='f'>flat_scratch"
             "</a></li><li><a href='x'>xnack_mask</a></li><li><a href='vcc'>vcc</a></li>");
    snprintf(b, sizeof b, HUB_FMT, "src",
             "<li><a href='v'>v</a></li><li><a href='s'>s</a></li><li><a href='f'>flat_scratch"
             "</a></li><li><a href='t'>trap</a></li><li><a href='l'>lds_direct</a></li>");
    struct extract_doc *da = parse(a), *db = parse(b);
    CU_ASSERT(contains(text_of(da), "xnack_mask"));
    CU_ASSERT(contains(text_of(db), "lds_direct"));
    CU_ASSERT(contains(text_of(da), "Instruction input."));
    CU_ASSERT(!contains(text_of(da), "Sidebar entry"));
    CU_ASSERT(!contains(text_of(da), "index"));
    extract_doc_free(da);
    extract_doc_free(db);

    /* a page with enough text of its own still loses its link lists */
    d = parse(blog_page);
    CU_ASSERT(!contains(text_of(d), "Archive"));
    extract_doc_free(d);
}

static void test_extract_text_linked_section_headings(void)
{
    /* docutils/Sphinx: every heading links back to the table of contents, so each short
     * section is link-dense; its description is still text */
    char page[8192];
    size_t n = (size_t)snprintf(page, sizeof page, "%s",
                                "<html><body><div role='main'><h1>Available Checkers</h1>"
                                "<p>The analyzer performs checks that are categorized into "
                                "families or checkers, grouped below by package. The default "
                                "set of checkers covers a variety of checks targeted at finding "
                                "security and API usage bugs, dead code, and other logic errors; "
                                "the experimental checkers are under development and switched "
                                "off by default, and may crash or emit a higher number of false "
                                "positives than the others do.</p>");
    static const char *const names[] = {"core.CallAndMessage", "core.DivideZero",
                                        "core.NonNullParamChecker", "core.NullDereference"};
    for (size_t i = 0; i < 4; i++)
        n += (size_t)snprintf(page + n, sizeof page - n,
                              "<section id='s%zu'><h4><a class='toc-backref' href='#t%zu'>1.1.%zu. "
                              "%s (C, C++, ObjC)</a><a class='headerlink' href='#s%zu'>¶</a></h4>"
                              "<blockquote><div><p>Check number %zu of the core package.</p></div>"
                              "</blockquote><div class='highlight-c'><pre>void test%zu() {\n"
                              "  int *p = 0;\n  *p = 1; // warn\n}</pre></div></section>",
                              i, i, i + 1, names[i], i, i + 1, i);
    snprintf(page + n, sizeof page - n, "</div></body></html>");
    struct extract_doc *d = parse(page);
    const char *t = text_of(d);
    CU_ASSERT(contains(t, "Check number 1 of the core package."));
    CU_ASSERT(contains(t, "Check number 4 of the core package."));
    CU_ASSERT(contains(t, "void test3() {"));
    extract_doc_free(d);
}

/* ---- links and metadata ---- */

static void test_extract_links_resolved(void)
{
    const char *html =
        "<html><head><base href='/docs/v2/'><link rel='Canonical' href='page.html#top'>"
        "<meta name='ROBOTS' content='NoIndex, follow'></head><body>"
        "<div class='content'><p>Text of the page, long enough to be the main content of "
        "it, with a <a href='inner.html#sec'>link in the text</a> and more words.</p></div>"
        "<nav><a href='../v1/' rel='nofollow noopener'>old\n version</a>"
        "<a href='javascript:void(0)'>js</a><a href='mailto:x@example.com'>mail</a>"
        "<a href='#frag'>frag</a><a href=''>empty</a><a href='  HTTPS://Other.Example:8080'>"
        "other</a><a href='//cdn.example/a b'>cdn</a><a href='data:text/html,x'>data</a>"
        "<a href='?q=1' rel='ugc'>query</a><a href='tel:123'>tel</a><a href='x'><img alt="
        "'picture link'></a><a href='y' rel='sponsored'></a></nav></body></html>";
    struct extract_doc *d = parse_opts(html, strlen(html), NULL, "http://example.com/a/b.html");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_STRING_EQUAL(extract_doc_base(d), "http://example.com/docs/v2/");
    CU_ASSERT_STRING_EQUAL(extract_doc_canonical(d), "http://example.com/docs/v2/page.html");
    ASSERT_EQ(extract_doc_noindex(d), 1);
    ASSERT_EQ(extract_doc_nofollow(d), 0);
    static const struct {
        const char *url, *anchor;
        unsigned nofollow, in_main;
    } want[] = {
        {"http://example.com/docs/v2/inner.html", "link in the text", 0, 1},
        {"http://example.com/docs/v1/", "old version", 1, 0},
        {"https://other.example:8080/", "other", 0, 0},
        {"http://cdn.example/a%20b", "cdn", 0, 0},
        {"http://example.com/docs/v2/?q=1", "query", 1, 0},
        {"http://example.com/docs/v2/x", "picture link", 0, 0},
        {"http://example.com/docs/v2/y", "", 1, 0},
    };
    size_t n = extract_doc_link_count(d);
    ASSERT_EQ(n, sizeof want / sizeof want[0]);
    for (size_t i = 0; i < n && i < sizeof want / sizeof want[0]; i++) {
        const struct extract_link *l = extract_doc_link(d, i);
        CU_ASSERT_STRING_EQUAL(l->url, want[i].url);
        CU_ASSERT_STRING_EQUAL(l->anchor, want[i].anchor);
        ASSERT_EQ(l->nofollow, want[i].nofollow);
        ASSERT_EQ(l->in_main, want[i].in_main);
    }
    CU_ASSERT_PTR_NULL(extract_doc_link(d, n));
    extract_doc_free(d);
}

static void test_extract_links_rfc3986(void)
{
    /* RFC 3986 section 5.4.1 and 5.4.2, base http://a/b/c/d;p?q */
    static const char *const cases[][2] = {
        {"g", "http://a/b/c/g"},
        {"./g", "http://a/b/c/g"},
        {"g/", "http://a/b/c/g/"},
        {"/g", "http://a/g"},
        {"//g", "http://g/"},
        {"?y", "http://a/b/c/d;p?y"},
        {"g?y", "http://a/b/c/g?y"},
        {"g#s", "http://a/b/c/g"},
        {"g?y#s", "http://a/b/c/g?y"},
        {";x", "http://a/b/c/;x"},
        {"g;x", "http://a/b/c/g;x"},
        {".", "http://a/b/c/"},
        {"./", "http://a/b/c/"},
        {"..", "http://a/b/"},
        {"../", "http://a/b/"},
        {"../g", "http://a/b/g"},
        {"../..", "http://a/"},
        {"../../", "http://a/"},
        {"../../g", "http://a/g"},
        {"../../../g", "http://a/g"},
        {"../../../../g", "http://a/g"},
        {"/./g", "http://a/g"},
        {"/../g", "http://a/g"},
        {"g.", "http://a/b/c/g."},
        {".g", "http://a/b/c/.g"},
        {"g..", "http://a/b/c/g.."},
        {"..g", "http://a/b/c/..g"},
        {"./../g", "http://a/b/g"},
        {"./g/.", "http://a/b/c/g/"},
        {"g/./h", "http://a/b/c/g/h"},
        {"g/../h", "http://a/b/c/h"},
        {"g;x=1/./y", "http://a/b/c/g;x=1/y"},
        {"g;x=1/../y", "http://a/b/c/y"},
        {"g?y/./x", "http://a/b/c/g?y/./x"},
        {"g?y/../x", "http://a/b/c/g?y/../x"},
        {"http:g", "http:g"},
        {"g:h", NULL},
        {"#s", NULL},
        {"", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char html[256];
        snprintf(html, sizeof html, "<p><a href=\"%s\">x</a></p>", cases[i][0]);
        struct extract_doc *d = parse_opts(html, strlen(html), NULL, "http://a/b/c/d;p?q");
        if (!d)
            continue;
        if (cases[i][1] == NULL) {
            ASSERT_EQ(extract_doc_link_count(d), 0);
        } else {
            ASSERT_EQ(extract_doc_link_count(d), 1);
            const struct extract_link *l = extract_doc_link(d, 0);
            if (l) {
                CU_ASSERT_STRING_EQUAL(l->url, cases[i][1]);
                if (strcmp(l->url, cases[i][1]) != 0)
                    fprintf(stderr, "\n%s -> %s, want %s\n", cases[i][0], l->url, cases[i][1]);
            }
        }
        extract_doc_free(d);
    }
}

static void test_extract_links_no_base(void)
{
    struct extract_doc *d = parse("<p><a href='rel/x.html#a'>r</a> <a href='HTTP://E.x/'>a</a>"
                                  " <a href='mailto:q@e.x'>m</a></p>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    ASSERT_EQ(extract_doc_link_count(d), 2);
    CU_ASSERT_STRING_EQUAL(extract_doc_link(d, 0)->url, "rel/x.html");
    CU_ASSERT_STRING_EQUAL(extract_doc_link(d, 1)->url, "http://e.x/");
    CU_ASSERT_STRING_EQUAL(extract_doc_base(d), "");
    CU_ASSERT_STRING_EQUAL(extract_doc_canonical(d), "");
    extract_doc_free(d);
}

/* Repeated targets: each link gets what resolving it alone gives (the link memo of
 * extract.c must not mix up hrefs that share their bytes before the '#'). */
static void test_extract_links_repeated(void)
{
    static const char *const hrefs[] = {
        "g.html#a", "g.html#b", "g.html", "g.html ", "g.html #x", "g.html #y", "g.html ",
        "#s", "#s", "", "g.html?q#a", "g.html?q", "../g.html#a", "g.html\t#a", "g.html#a",
        "mailto:x@y#a", "mailto:x@y#a", "//h/p#1", "//h/p#2",
    };
    size_t n = sizeof hrefs / sizeof hrefs[0];
    char html[2048] = "<p>";
    for (size_t i = 0; i < n; i++) {
        size_t len = strlen(html);
        snprintf(html + len, sizeof html - len, "<a href=\"%s\">%zu</a> ", hrefs[i], i);
    }
    strcat(html, "</p>");
    struct extract_doc *all = parse_opts(html, strlen(html), NULL, "http://a/b/c.html");
    CU_ASSERT_PTR_NOT_NULL_FATAL(all);
    size_t k = 0;
    for (size_t i = 0; i < n; i++) {
        char one[256];
        snprintf(one, sizeof one, "<p><a href=\"%s\">%zu</a></p>", hrefs[i], i);
        struct extract_doc *d = parse_opts(one, strlen(one), NULL, "http://a/b/c.html");
        CU_ASSERT_PTR_NOT_NULL_FATAL(d);
        if (extract_doc_link_count(d) == 1) {
            const struct extract_link *l = extract_doc_link(all, k++);
            CU_ASSERT_PTR_NOT_NULL_FATAL(l);
            CU_ASSERT_STRING_EQUAL(l->url, extract_doc_link(d, 0)->url);
            char want[16];
            snprintf(want, sizeof want, "%zu", i);
            CU_ASSERT_STRING_EQUAL(l->anchor, want);
        }
        extract_doc_free(d);
    }
    ASSERT_EQ(extract_doc_link_count(all), k);
    ASSERT_EQ(k, 14); /* all but the two "#s", "" and the two mailto: */
    CU_ASSERT_STRING_EQUAL(extract_doc_link(all, 2)->url, "http://a/b/g.html");
    CU_ASSERT_STRING_EQUAL(extract_doc_link(all, 4)->url, "http://a/b/g.html%20");
    extract_doc_free(all);
}

/* 1 when s is valid UTF-8 (no cut character). */
static int utf8_whole(const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int k = *p < 0x80 ? 1 : *p >= 0xF0 ? 4 : *p >= 0xE0 ? 3 : *p >= 0xC0 ? 2 : 0;
        if (k == 0)
            return 0;
        for (int j = 1; j < k; j++)
            if ((p[j] & 0xC0) != 0x80)
                return 0;
        p += k;
    }
    return 1;
}

/* Titles and anchor texts are capped (4096 and 1024 bytes): filled nearly to the cap with
 * the collapsed text's first whole characters, never half of one. */
/* The heading extract_doc_heading() gives for html is want. */
static void assert_heading(const char *html, const char *want)
{
    struct extract_doc *d = parse(html);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_STRING_EQUAL(extract_doc_heading(d), want);
    extract_doc_free(d);
}

/* extract_doc_heading(): the page's own heading as the text keeps it (the first kept
 * heading of the highest level), not the <title>, not a heading the text leaves out. */
static void test_extract_heading(void)
{
    static const char body[] =
        "<p>The lighthouse keepers kept the lamp burning through every storm of the winter, "
        "and wrote each night in the log what the weather was, which ships passed and how "
        "much oil the lamp had burned, so that the next keeper knew what to expect.</p>";
    char html[2048];
    snprintf(html, sizeof html,
             "<html><head><title>Keepers | Site</title></head><body><header><h1><a "
             "href=\"/\">Site logo</a></h1><nav><a href=\"/a\">A</a> <a href=\"/b\">B</a> <a "
             "href=\"/c\">C</a></nav></header><main><h2>Before</h2><h1>The keepers "
             "<em>of the</em> light</h1>%s<h1>Second</h1>%s</main></body></html>",
             body, body);
    assert_heading(html, "The keepers of the light");
    /* no h1 kept: the first h2 */
    snprintf(html, sizeof html,
             "<html><body><main><h3>Note</h3>%s<h2>Install</h2>%s<h2>Use</h2></main></body>"
             "</html>",
             body, body);
    assert_heading(html, "Install");
    /* Doxygen's page title (div.headertitle > div.title) is the page's, as an h1 */
    snprintf(html, sizeof html,
             "<html><head><meta name=\"generator\" content=\"Doxygen 1.9.4\"></head><body>"
             "<div class=\"header\"><div class=\"headertitle\"><div "
             "class=\"title\">Foo Class Reference</div></div></div><div "
             "class=\"contents\"><h2>Public Member Functions</h2>%s<h2>Detailed "
             "Description</h2>%s</div></body></html>",
             body, body);
    assert_heading(html, "Foo Class Reference");
    /* Haddock's module name (div#module-header > p.caption) is the page's, as an h1 */
    snprintf(html, sizeof html,
             "<html><body><div id=\"package-header\"><span class=\"caption\">q-1.2: "
             "Queues</span></div><div id=\"content\"><div id=\"module-header\"><p "
             "class=\"caption\">Data.Queue</p></div><div id=\"description\"><p "
             "class=\"caption\">Description</p>%s</div><div id=\"interface\"><h1>"
             "Construction</h1>%s</div></div></body></html>",
             body, body);
    assert_heading(html, "Data.Queue");
    /* a p.caption elsewhere on a Haddock page is no name */
    snprintf(html, sizeof html,
             "<html><body><div id=\"package-header\"><span class=\"caption\">q-1.2: "
             "Queues</span></div><div id=\"content\"><div id=\"description\"><p "
             "class=\"caption\">Description</p>%s</div><div id=\"interface\"><h1>"
             "Construction</h1>%s</div></div></body></html>",
             body, body);
    assert_heading(html, "Construction");
    /* a div.title elsewhere is no name */
    snprintf(html, sizeof html,
             "<html><body><div class=\"box\"><div class=\"title\">Box title</div></div>"
             "<main><h2>Install</h2>%s</main></body></html>",
             body);
    assert_heading(html, "Install");
    /* no heading: "" */
    snprintf(html, sizeof html, "<html><head><title>T</title></head><body>%s</body></html>",
             body);
    assert_heading(html, "");
    /* invalid UTF-8 in the heading is repaired as the text is */
    snprintf(html, sizeof html, "<html><body><main><h1>caf\xe9 \xff</h1>%s</main></body></html>",
             body);
    struct extract_doc *d = parse_opts(html, strlen(html), "text/html; charset=utf-8", NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT(valid_utf8(extract_doc_heading(d)));
    CU_ASSERT(strncmp(extract_doc_heading(d), "caf", 3) == 0);
    extract_doc_free(d);
}

static void test_extract_title_anchor_caps(void)
{
    static const char *const piece[] = {"abc ", "\xc3\xa9t\xc3\xa9  ", "\xe6\x9d\xb1\n",
                                        "\xf0\x9f\x98\x80", "\xc2\xa0x,"};
    size_t cap = 40000;
    char *chunk = malloc(cap), *html = malloc(2 * cap + 200), *flat = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(chunk && html && flat);
    size_t n = 0, m = 0;
    for (unsigned i = 0; n + 16 < cap; i++)
        for (const char *p = piece[(i * 7 + i / 3) % 5]; *p; p++)
            chunk[n++] = *p;
    chunk[n] = '\0';
    /* the collapsed form: white space (and no-break space) runs as one space */
    int sp = 0;
    for (const char *p = chunk; *p; p++) {
        if (*p == ' ' || *p == '\n' || (*p == '\xc2' && p[1] == '\xa0')) {
            p += *p == '\xc2';
            sp = m > 0;
            continue;
        }
        if (sp)
            flat[m++] = ' ';
        sp = 0;
        flat[m++] = *p;
    }
    flat[m] = '\0';
    snprintf(html, 2 * cap + 200, "<title>%s</title><p>text <a href='/x'>%s</a></p>", chunk,
             chunk);
    struct extract_doc *d = parse_opts(html, strlen(html), NULL, "http://h/");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    const char *t = extract_doc_title(d);
    CU_ASSERT(strlen(t) < 4096 && strlen(t) > 4096 - 8);
    CU_ASSERT(utf8_whole(t));
    CU_ASSERT(strncmp(t, flat, strlen(t)) == 0);
    ASSERT_EQ_FATAL(extract_doc_link_count(d), 1);
    const char *a = extract_doc_link(d, 0)->anchor;
    CU_ASSERT(strlen(a) < 1024 && strlen(a) > 1024 - 8);
    CU_ASSERT(utf8_whole(a));
    CU_ASSERT(strncmp(a, flat, strlen(a)) == 0);
    extract_doc_free(d);
    free(chunk);
    free(html);
    free(flat);
}

static void test_extract_meta_robots_lang_title(void)
{
    struct extract_doc *d =
        parse("<html><head><meta http-equiv='content-language' content='de-DE, en'>"
              "<meta name='robots' content='none'><title>\n  Über\tuns  </title>"
              "<title>second</title></head><body><p>Text.</p><svg><title>svg</title></svg>"
              "</body></html>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_STRING_EQUAL(extract_doc_title(d), "Über uns");
    CU_ASSERT_STRING_EQUAL(extract_doc_lang(d), "de");
    ASSERT_EQ(extract_doc_noindex(d), 1);
    ASSERT_EQ(extract_doc_nofollow(d), 1);
    extract_doc_free(d);
    d = parse("<html lang='PT_br'><head><meta name='description' content='noindex'></head>"
              "<body><p>x</p></body></html>");
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    CU_ASSERT_STRING_EQUAL(extract_doc_lang(d), "pt");
    CU_ASSERT_STRING_EQUAL(extract_doc_title(d), "");
    ASSERT_EQ(extract_doc_noindex(d), 0);
    extract_doc_free(d);
}

static void test_extract_meta_caps(void)
{
    /* a 20,000-character title and anchor are cut (4096 / 1024 bytes) at a character */
    size_t n = 20000;
    char *html = malloc(2 * n * 2 + 200);
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    size_t len = (size_t)sprintf(html, "<title>");
    for (size_t i = 0; i < n; i++) {
        memcpy(html + len, "\xc3\xa9", 2); /* é */
        len += 2;
    }
    len += (size_t)sprintf(html + len, "</title><p><a href='x'>");
    for (size_t i = 0; i < n; i++)
        html[len++] = (char)('a' + i % 26);
    len += (size_t)sprintf(html + len, "</a></p>");
    struct extract_doc *d = parse_opts(html, len, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    size_t tl = strlen(extract_doc_title(d));
    CU_ASSERT(tl > 4000 && tl <= 4096);
    CU_ASSERT(valid_utf8(extract_doc_title(d)));
    ASSERT_EQ_FATAL(extract_doc_link_count(d), 1);
    size_t al = strlen(extract_doc_link(d, 0)->anchor);
    CU_ASSERT(al > 1000 && al <= 1024);
    extract_doc_free(d);
    free(html);
}

/* ---- tokens ---- */

static void test_extract_tokens_ascii(void)
{
    size_t n = 0;
    char *t = tokens("  Hello, World! It's 2024-05-03; snake_case x86-64 ", &n);
    CU_ASSERT_STRING_EQUAL(t, "hello world it s 2024 05 03 snake_case x86 64");
    ASSERT_EQ(n, 10);
    free(t);
    ASSERT_TOKENS("", "");
    ASSERT_TOKENS(" .,;!? ", "");
}

static void test_extract_tokens_unicode(void)
{
    /* the examples of docs/FINGERPRINT.md section 2 */
    ASSERT_TOKENS("Straße", "strasse");
    ASSERT_TOKENS("Ｆｕｌｌ-ｗｉｄｔｈ \xef\xac\x81le_2", "full width file_2");
    ASSERT_TOKENS("naïve café", "naive cafe");
    ASSERT_TOKENS("東京タワー", "東 京 タ ワ ー");
    ASSERT_TOKENS("3.14", "3 14");
    ASSERT_TOKENS("Naïve CAFÉ résumé", "naive cafe resume");
    ASSERT_TOKENS("Straße STRASSE", "strasse strasse");
    ASSERT_TOKENS("\xef\xac\x81le \xef\xac\x82ow", "file flow");              /* ﬁle ﬂow */
    ASSERT_TOKENS("ＡＢＣ１２３ ①", "abc123 1");                                /* NFKC */
    ASSERT_TOKENS("e\xcc\x81t\xc3\xa9", "ete");                                 /* combining */
    ASSERT_TOKENS("soft\xc2\xadhyphen zero\xe2\x80\x8bwidth", "softhyphen zerowidth");
    ASSERT_TOKENS("Ωμέγα ΣΊΣΥΦΟΣ", "ωμεγα σισυφοσ");
    ASSERT_TOKENS("Привет, мир", "привет мир");
    ASSERT_TOKENS("a\xe2\x80\x94" "b c\xe2\x80\xa6" "d", "a b c d"); /* em dash, ellipsis */
    ASSERT_TOKENS("٣٤ ١٢", "٣٤ ١٢");                                  /* Arabic-Indic digits */
}

static void test_extract_tokens_cjk(void)
{
    ASSERT_TOKENS("東京タワーは333m", "東 京 タ ワ ー は 333m");
    ASSERT_TOKENS("ｶﾀｶﾅ", "カ タ カ ナ");          /* half-width katakana -> NFKC */
    ASSERT_TOKENS("中文，标点。", "中 文 标 点"); /* CJK punctuation separates */
    ASSERT_TOKENS("한국어 텍스트", "한국어 텍스트"); /* Hangul stays words */
    ASSERT_TOKENS("\xe1\x84\x92\xe1\x85\xa1\xe1\x86\xab", "한"); /* jamo compose */
    ASSERT_TOKENS("abc漢字def", "abc 漢 字 def");
}

static void test_extract_tokens_long_token_cut(void)
{
    char in[300], want[100];
    memset(in, 'A', 200);
    in[200] = '\0';
    memset(want, 'a', 64);
    want[64] = '\0';
    ASSERT_TOKENS(in, want);
    /* the cut never splits a character: 40 x "é" (2 bytes) = 80 bytes -> 32 letters */
    char acc[200] = "", wacc[100] = "";
    for (int i = 0; i < 40; i++)
        strcat(acc, "\xc3\xa9");
    memset(wacc, 'e', 40); /* é is e + a stripped mark: 40 bytes, not cut */
    ASSERT_TOKENS(acc, wacc);
    char gr[200] = "", wgr[100] = "";
    for (int i = 0; i < 40; i++)
        strcat(gr, "\xce\xbb"); /* λ, 2 bytes */
    for (int i = 0; i < 32; i++)
        strcat(wgr, "\xce\xbb");
    ASSERT_TOKENS(gr, wgr);
}

/* Version 7, rule 3 of docs/FINGERPRINT.md section 2: code punctuation inside a token. */
static void test_extract_tokens_code_joins(void)
{
    /* the pages issue 11 found: a C function and its C++ twin, a constructor and its
     * destructor (db5.3-doc's api_reference, libstdc++) */
    ASSERT_TOKENS("DB->get_flags()", "db->get_flags");
    ASSERT_TOKENS("Db::get_flags()", "db::get_flags");
    ASSERT_TOKENS("~vector() and vector()", "~vector and vector");
    ASSERT_TOKENS("Db::~Db()", "db::~db");
    ASSERT_TOKENS("p->~T();", "p->~t");
    ASSERT_TOKENS("std::map::find x->y->z", "std::map::find x->y->z");
    /* excluded: "." (dotted names, file names, abbreviations, numbers: measured, see
     * docs/FINGERPRINT.md section 2) */
    ASSERT_TOKENS("os.path.join() of String.valueOf(x).", "os path join of string valueof x");
    ASSERT_TOKENS("e.g. index.html v.2 1.x", "e g index html v 2 1 x");
    ASSERT_TOKENS("3.14 v1.2.3 python3.11", "3 14 v1 2 3 python3 11");
    /* excluded: "~" after a word character or before a digit or nothing */
    ASSERT_TOKENS("a~b ~100 ~ x ~_y", "a b 100 x ~_y");
    /* excluded: one ":" or "-", three ":", a joiner with no word after it */
    ASSERT_TOKENS("a:b a::b ::c a:::b a->>b a-b x86-64", "a b a::b c a b a b a b x86 64");
    ASSERT_TOKENS("a-> b:: c. a..b a.-b a-~b a:~b", "a b c a b a b a ~b a ~b");
    /* a join never holds a space or a newline: template blocks rely on it */
    ASSERT_TOKENS("a->\nb a::\nb\n~c a\n->b", "a b a b ~c a b");
    ASSERT_TOKENS("a. b a -> b std :: c ~ d", "a b a b std c d");
    /* CJK word characters never join (each is a token of its own) */
    ASSERT_TOKENS("東~a 東.a a.東 a::東", "東 a 東 a a 東 a 東");
    /* joins are read on the normalised text: full-width ". : > ~", a default-ignorable
     * code point between "." and a letter, upper case folded */
    ASSERT_TOKENS("ｏｓ．ｐａｔｈ Ａ：：Ｂ Ｐ－＞Ｑ ～Ｘ", "os path a::b p->q ~x");
    ASSERT_TOKENS("a:\xc2\xad:b Foo\xc3\xa9::Bar -\xe2\x80\x8b>", "a::b fooe::bar");
    /* the 64-byte cut counts the joins' bytes */
    char in[128], want[128];
    memset(in, 'x', 62);
    strcpy(in + 62, "->ab cd");
    memcpy(want, in, 64);
    strcpy(want + 64, " cd");
    ASSERT_TOKENS(in, want);
}

/* The token string of a page's name (extract_name_tokens(), docs/FINGERPRINT.md section
 * 6, version 10): s's name tokens, checked against want. */
static void assert_name_tokens(const char *s, const char *want)
{
    assert_tokens_by(extract_name_tokens, "name_tokens", s, want);
}

/* Version 10: in a page's name, a mathematical symbol is a token of its own, so two
 * headings that differ only in their symbols are two names ("⊥ -- bottom", "⊤ -- top");
 * the symbols that decorate a heading or stand for ASCII punctuation are no tokens, and a
 * text's tokens are those of version 9 (symbols in the text made false drops). */
static void test_extract_name_tokens_math(void)
{
    assert_name_tokens("x ≤ y ∧ ¬p", "x ≤ y ∧ ¬ p");
    assert_name_tokens("⊥-elim ⊤", "⊥ elim ⊤");
    assert_name_tokens("∀x∈A, x×2 ± 1 ÷ 3", "∀ x ∈ a x × 2 ± 1 ÷ 3");
    assert_name_tokens("A⊆B∪C∩D ∑ ∫ ⟂ ⨁", "a ⊆ b ∪ c ∩ d ∑ ∫ ⟂ ⨁");
    assert_name_tokens("字≤字", "字 ≤ 字");
    /* NFKC first: a stroked symbol loses its stroke, a mark (≠ -> "=", which is no
     * token; the operator runs are read on the heading's bytes, where "≠" is not ASCII) */
    assert_name_tokens("a ≠ b ∉ C", "a b ∈ c");
    /* a symbol is no word character for the joins: "∀~x" keeps "~x", "a≤->b" no join */
    assert_name_tokens("∀~x a≤->b", "∀ ~x a ≤ b ~ ->");
    /* decorations and punctuation: headerlinks, sections, guillemets, bullets, dashes,
     * ellipses, quotes, navigation arrows and shapes, marks of trade */
    assert_name_tokens("Title¶ §3 «a» b c • d · e — f – g … “h” ‘i’ ← j → k ↑ ⇒ ⟶ © ® ™ ◆ ─ ✔",
                       "title 3 a b c d e f g h i j k tm");
    assert_name_tokens("◁ Previous ▷ Next ◸ ◿ ⤴ ⬅", "previous next");
    assert_name_tokens("−1 a∕b a∖b a∗b a∙b a∣b a∶b a∼b a⋅b a⋆b a⋯b a⁄b",
                       "1 a b a b a b a b a b a b a b a b a b a b a b");
    /* in a text, no symbol is a token */
    ASSERT_TOKENS("x ≤ y ∧ ¬p ⊥ ⊤ == @@", "x y p");
}

/* The tokens records of the golden vectors (tests/data/fingerprint/vectors.txt,
 * docs/FINGERPRINT.md section 8): text, token count, token string. */
static void tokens_record(char **f, void *joined)
{
    size_t got_n = 0;
    char *got = tokens(f[0], &got_n);
    CU_ASSERT_PTR_NOT_NULL(got);
    if (got) {
        CU_ASSERT_STRING_EQUAL(got, f[2]);
        if (strcmp(got, f[2]) != 0)
            fprintf(stderr, "\ntokens(%s) = '%s', vector '%s'\n", f[0], got, f[2]);
        ASSERT_EQ(got_n, strtoul(f[1], NULL, 10));
    }
    free(got);
    *(unsigned *)joined += strstr(f[2], "->") || strstr(f[2], "::") || strstr(f[2], "~");
}

static void test_extract_tokens_golden(void)
{
    unsigned joined = 0;
    unsigned n = test_each_record("tests/data/fingerprint/vectors.txt", "tokens", 3,
                                  tokens_record, &joined);
    CU_ASSERT(n >= 5);
    CU_ASSERT(joined >= 2);
}

/* Rule 4: a token is a prefix; once a code point does not fit, nothing after it does. */
static void test_extract_tokens_cut_prefix(void)
{
    char in[128], want[128];
    memset(in, 'x', 63);
    strcpy(in + 63, "\xd0\xb6" "ab cd"); /* 63 bytes, then ж (2 bytes): cut there */
    memset(want, 'x', 63);
    strcpy(want + 63, " cd");
    ASSERT_TOKENS(in, want);
}

static void test_extract_tokens_invalid(void)
{
    char *out = NULL;
    size_t len = 0, n = 0;
    ASSERT_EQ(extract_tokens("ab\xff", 3, &out, &len, &n), EXTRACT_EINVAL);
    CU_ASSERT_PTR_NULL(out);
    ASSERT_EQ(extract_tokens(NULL, 1, &out, &len, &n), EXTRACT_EINVAL);
    ASSERT_EQ(extract_tokens("x", 1, NULL, &len, &n), EXTRACT_EINVAL);
    /* embedded NUL with explicit length: a separator */
    ASSERT_EQ(extract_tokens("a\0b", 3, &out, &len, &n), EXTRACT_OK);
    CU_ASSERT_STRING_EQUAL(out, "a b");
    free(out);
}

/* ---- bad input ---- */

static void test_extract_bad_empty(void)
{
    struct extract_doc *d = (struct extract_doc *)1;
    ASSERT_EQ(extract_doc_parse("", 0, NULL, &d), EXTRACT_EEMPTY);
    CU_ASSERT_PTR_NULL(d);
    ASSERT_EQ(extract_doc_parse(" \n\t\r\n ", 6, NULL, &d), EXTRACT_EEMPTY);
    ASSERT_EQ(extract_doc_parse("\xef\xbb\xbf  ", 5, NULL, &d), EXTRACT_EEMPTY);
    ASSERT_EQ(extract_doc_parse("<html><head><script>x()</script></head></html>", 46,
                                      NULL, &d),
                    EXTRACT_ENOTEXT);
    CU_ASSERT_PTR_NULL(d);
    ASSERT_EQ(extract_doc_parse(NULL, 1, NULL, &d), EXTRACT_EINVAL);
    ASSERT_EQ(extract_doc_parse("x", 1, NULL, NULL), EXTRACT_EINVAL);
    CU_ASSERT_STRING_EQUAL(extract_strerror(EXTRACT_EBINARY), "input is binary, not html");
}

static void test_extract_bad_binary(void)
{
    static const char png[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR";
    static const char nul[] = "<html>\0\0\0\x01\x02</html>";
    char ctl[256];
    for (int i = 0; i < 256; i++)
        ctl[i] = (char)(i % 31 + 1);
    struct extract_doc *d = NULL;
    ASSERT_EQ(extract_doc_parse(png, sizeof png - 1, NULL, &d), EXTRACT_EBINARY);
    ASSERT_EQ(extract_doc_parse(nul, sizeof nul - 1, NULL, &d), EXTRACT_EBINARY);
    ASSERT_EQ(extract_doc_parse(ctl, sizeof ctl, NULL, &d), EXTRACT_EBINARY);
    ASSERT_EQ(extract_doc_parse("%PDF-1.7\n%...", 13, NULL, &d), EXTRACT_EBINARY);
    ASSERT_EQ(extract_doc_parse("\x1f\x8b\x08\x00", 4, NULL, &d), EXTRACT_EBINARY);
    CU_ASSERT_PTR_NULL(d);
}

/* A real page with a stray NUL (Javadoc of CharUtils writes '\0' raw) is still a page:
 * the NUL becomes U+FFFD; the same page with NULs everywhere is binary. */
static void test_extract_bad_stray_nul(void)
{
    char page[4096];
    int n = snprintf(page, sizeof page,
                     "<!DOCTYPE html><html><head><title>CharUtils</title></head><body>"
                     "<h1>CharUtils</h1><p>Operations on char primitives: the NUL character "
                     "X is the terminator of C strings, and %s.</p></body></html>",
                     "this sentence makes the paragraph long enough to be the main text");
    CU_ASSERT_FATAL(n > 0 && (size_t)n < sizeof page);
    char *x = strchr(page, 'X');
    *x = '\0';
    struct extract_doc *d = NULL;
    ASSERT_EQ_FATAL(extract_doc_parse(page, (size_t)n, NULL, &d), EXTRACT_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(text_of(d), "NUL character \xEF\xBF\xBD is the terminator"));
    extract_doc_free(d);
    d = NULL;
    for (int i = 20; i < n; i += 40)
        page[i] = '\0';
    ASSERT_EQ(extract_doc_parse(page, (size_t)n, NULL, &d), EXTRACT_EBINARY);
    CU_ASSERT_PTR_NULL(d);
}

static void test_extract_bad_too_large(void)
{
    struct extract_opts o;
    memset(&o, 0, sizeof o);
    o.max_bytes = 10;
    struct extract_doc *d = NULL;
    ASSERT_EQ(extract_doc_parse("<p>hello world</p>", 18, &o, &d), EXTRACT_ETOOLARGE);
    CU_ASSERT_PTR_NULL(d);
}

static void test_extract_bad_deep_nesting(void)
{
    /* 100,000 nested tags: bounded depth, no recursion, the shallow text survives */
    const size_t n = 100000;
    size_t cap = n * 11 + 100;
    char *html = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    size_t len = 0;
    len += (size_t)sprintf(html + len, "<p>top text</p>");
    for (size_t i = 0; i < n; i++) {
        memcpy(html + len, i % 2 ? "<div>" : "<span>", i % 2 ? 5 : 6);
        len += i % 2 ? 5 : 6;
    }
    len += (size_t)sprintf(html + len, "deep text");
    struct extract_doc *d = NULL;
    ASSERT_EQ(extract_doc_parse(html, len, NULL, &d), EXTRACT_OK);
    CU_ASSERT(contains(text_of(d), "top text"));
    CU_ASSERT(!contains(text_of(d), "deep text")); /* below max_depth */
    extract_doc_free(d);
    /* a raised depth cap reaches it */
    struct extract_opts o;
    memset(&o, 0, sizeof o);
    o.max_depth = 200000;
    d = NULL;
    ASSERT_EQ(extract_doc_parse(html, len, &o, &d), EXTRACT_OK);
    CU_ASSERT(contains(text_of(d), "deep text"));
    ASSERT_EQ(extract_doc_truncated(d, NULL), 0);
    extract_doc_free(d);
    free(html);
}

static void test_extract_caps_reported(void)
{
    /* the depth cap: what lies below it is skipped and reported, never silently */
    const char *deep = "<p>top text here</p><div><div><div><div><p>deep text</p></div></div>"
                       "</div></div>";
    struct extract_opts o;
    memset(&o, 0, sizeof o);
    o.max_depth = 4;
    struct extract_doc *d = NULL;
    struct extract_cuts cuts;
    ASSERT_EQ_FATAL(extract_doc_parse(deep, strlen(deep), &o, &d), EXTRACT_OK);
    CU_ASSERT(!contains(text_of(d), "deep text"));
    ASSERT_EQ(extract_doc_truncated(d, &cuts), EXTRACT_CUT_DEPTH);
    CU_ASSERT(cuts.deep_elements >= 1);
    ASSERT_EQ(cuts.deep_text_bytes, strlen("deep text"));
    ASSERT_EQ(cuts.max_depth, 4);
    extract_doc_free(d);
    /* the default reaches it, and says nothing was cut */
    d = NULL;
    ASSERT_EQ_FATAL(extract_doc_parse(deep, strlen(deep), NULL, &d), EXTRACT_OK);
    CU_ASSERT(contains(text_of(d), "deep text"));
    ASSERT_EQ(extract_doc_truncated(d, &cuts), 0);
    ASSERT_EQ(cuts.max_links, EXTRACT_DEFAULT_MAX_LINKS);
    extract_doc_free(d);

    /* the link cap: the first max_links links in document order are kept, the rest
     * counted; unusable links (javascript:) do not count against it */
    const char *links = "<p>some words <a href='javascript:x()'>j</a> <a href='/a'>a</a> "
                        "<a href='/b'>b</a> <a href='/c'>c</a> <a href='/d'>d</a></p>";
    memset(&o, 0, sizeof o);
    o.base_url = "http://example.com/";
    o.max_links = 2;
    d = NULL;
    ASSERT_EQ_FATAL(extract_doc_parse(links, strlen(links), &o, &d), EXTRACT_OK);
    ASSERT_EQ_FATAL(extract_doc_link_count(d), 2);
    CU_ASSERT_STRING_EQUAL(extract_doc_link(d, 0)->url, "http://example.com/a");
    CU_ASSERT_STRING_EQUAL(extract_doc_link(d, 1)->url, "http://example.com/b");
    ASSERT_EQ(extract_doc_truncated(d, &cuts), EXTRACT_CUT_LINKS);
    ASSERT_EQ(cuts.links_dropped, 2);
    ASSERT_EQ(cuts.max_links, 2);
    CU_ASSERT(contains(text_of(d), "some words")); /* the text is not cut */
    extract_doc_free(d);
    /* exactly at the cap: nothing dropped */
    o.max_links = 4;
    d = NULL;
    ASSERT_EQ_FATAL(extract_doc_parse(links, strlen(links), &o, &d), EXTRACT_OK);
    ASSERT_EQ(extract_doc_link_count(d), 4);
    ASSERT_EQ(extract_doc_truncated(d, NULL), 0);
    extract_doc_free(d);
    /* a depth cap over the limit is a bad argument */
    memset(&o, 0, sizeof o);
    o.max_depth = EXTRACT_MAX_DEPTH_LIMIT + 1;
    d = NULL;
    ASSERT_EQ(extract_doc_parse(deep, strlen(deep), &o, &d), EXTRACT_EINVAL);
    CU_ASSERT_PTR_NULL(d);
}

static void test_extract_bad_huge_page(void)
{
    /* a 50 MB page of paragraphs (10 MB under the sanitizers) */
    size_t target = SANITIZED ? 10u << 20 : 50u << 20;
    static const char para[] = "<p>Lorem ipsum dolor sit amet, consectetur adipiscing elit, "
                               "sed do eiusmod tempor incididunt ut labore.</p>\n";
    size_t pl = sizeof para - 1, count = target / pl;
    char *html = malloc(count * pl + 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    for (size_t i = 0; i < count; i++)
        memcpy(html + i * pl, para, pl);
    struct extract_doc *d = NULL;
    ASSERT_EQ(extract_doc_parse(html, count * pl, NULL, &d), EXTRACT_OK);
    size_t len = 0;
    if (d)
        extract_doc_text(d, &len);
    CU_ASSERT(len > count * 100);
    extract_doc_free(d);
    free(html);
}

static void test_extract_bad_one_line(void)
{
    /* one 200 MB line (40 MB under the sanitizers): over the default cap it is refused;
     * under a raised cap it is extracted, in linear time */
    size_t target = SANITIZED ? 40u << 20 : 200u << 20;
    char *html = malloc(target + 16);
    CU_ASSERT_PTR_NOT_NULL_FATAL(html);
    memcpy(html, "<p>", 3);
    for (size_t i = 3; i < target; i++)
        html[i] = (i % 7 == 0) ? ' ' : (char)('a' + i % 26);
    struct extract_doc *d = NULL;
    struct extract_opts o;
    memset(&o, 0, sizeof o);
    o.max_bytes = target - 1;
    ASSERT_EQ(extract_doc_parse(html, target, &o, &d), EXTRACT_ETOOLARGE);
    o.max_bytes = target;
    ASSERT_EQ(extract_doc_parse(html, target, &o, &d), EXTRACT_OK);
    size_t len = 0;
    if (d)
        extract_doc_text(d, &len);
    CU_ASSERT(len > target - 10);
    extract_doc_free(d);
    free(html);
}

/* ---- fixtures ---- */

static int cmp_str(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static void test_extract_fixtures(void)
{
    const char *dir = "tests/data/extract";
    DIR *d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    char *names[512];
    size_t n = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL && n < 512) {
        size_t l = strlen(e->d_name);
        if (l > 5 && strcmp(e->d_name + l - 5, ".html") == 0)
            names[n++] = strndup(e->d_name, l - 5);
    }
    closedir(d);
    qsort(names, n, sizeof names[0], cmp_str);
    CU_ASSERT(n >= 10);
    for (size_t i = 0; i < n; i++) {
        char path[1024];
        size_t hl = 0, tl = 0, cl = 0;
        snprintf(path, sizeof path, "%s/%s.html", dir, names[i]);
        char *html = test_slurp(path, &hl);
        snprintf(path, sizeof path, "%s/%s.txt", dir, names[i]);
        char *want = test_slurp(path, &tl);
        snprintf(path, sizeof path, "%s/%s.ct", dir, names[i]);
        char *ct = test_slurp(path, &cl);
        CU_ASSERT_PTR_NOT_NULL(html);
        CU_ASSERT_PTR_NOT_NULL(want);
        if (html && want) {
            while (tl > 0 && want[tl - 1] == '\n')
                want[--tl] = '\0';
            while (cl > 0 && ct[cl - 1] == '\n')
                ct[--cl] = '\0';
            struct extract_doc *doc = parse_opts(html, hl, ct, NULL);
            const char *got = text_of(doc);
            CU_ASSERT_STRING_EQUAL(got, want);
            if (strcmp(got, want) != 0)
                fprintf(stderr, "\nfixture %s: text differs; got:\n%s\n---\n", names[i], got);
            extract_doc_free(doc);
        }
        free(html);
        free(want);
        free(ct);
        free(names[i]);
    }
}

/* Pages whose own content is a diagram or an image with a caption (SQLite's syntax pages:
 * a site menu, the tagline "Small. Fast. Reliable. Choose any three.", an <svg> and a
 * one-line caption) are template only: what is left after boilerplate removal must be
 * "too little text" (EXTRACT_ENOTEXT, or under the 5 words `fingerprint` needs), never the
 * site's menu, or unrelated pages share a fingerprint (issue 11). The fixture format
 * (NNN.html -> exact NNN.txt, parse must succeed) cannot say "no text", so these pages live
 * in tests/data/extract/notext/, every *.html there checked here. */
static void test_extract_notext_pages(void)
{
    const char *dir = "tests/data/extract/notext";
    DIR *d = opendir(dir);
    CU_ASSERT_PTR_NOT_NULL_FATAL(d);
    size_t pages = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        size_t l = strlen(e->d_name);
        if (l <= 5 || strcmp(e->d_name + l - 5, ".html") != 0)
            continue;
        char path[1024];
        size_t hl = 0;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        char *html = test_slurp(path, &hl);
        CU_ASSERT_PTR_NOT_NULL(html);
        if (!html)
            continue;
        pages++;
        struct extract_doc *doc = NULL;
        enum extract_code rc = extract_doc_parse(html, hl, NULL, &doc);
        CU_ASSERT(rc == EXTRACT_OK || rc == EXTRACT_ENOTEXT);
        if (rc == EXTRACT_OK) {
            const char *got = text_of(doc);
            size_t n = 0;
            char *tok = tokens(got, &n);
            CU_ASSERT(n < 5);
            if (n >= 5)
                fprintf(stderr, "\nnotext page %s: %zu words, want under 5; got:\n%.300s\n---\n",
                        e->d_name, n, got);
            free(tok);
        }
        extract_doc_free(doc);
        free(html);
    }
    closedir(d);
    CU_ASSERT(pages >= 1);
}

void test_extract_register(void)
{
    CU_pSuite s = CU_add_suite("extract", NULL, NULL);
    CU_add_test(s, "test_extract_charset_header", test_extract_charset_header);
    CU_add_test(s, "test_extract_charset_bom", test_extract_charset_bom);
    CU_add_test(s, "test_extract_charset_meta", test_extract_charset_meta);
    CU_add_test(s, "test_extract_charset_http_equiv", test_extract_charset_http_equiv);
    CU_add_test(s, "test_extract_charset_latin1_fallback", test_extract_charset_latin1_fallback);
    CU_add_test(s, "test_extract_charset_unknown", test_extract_charset_unknown);
    CU_add_test(s, "test_extract_charset_invalid_utf8_output_valid",
                test_extract_charset_invalid_utf8_output_valid);
    CU_add_test(s, "test_extract_boilerplate_blog", test_extract_boilerplate_blog);
    CU_add_test(s, "test_extract_boilerplate_footnote_aside", test_extract_boilerplate_footnote_aside);
    CU_add_test(s, "test_extract_body_area_siblings", test_extract_body_area_siblings);
    CU_add_test(s, "test_extract_permalink_definitions", test_extract_permalink_definitions);
    CU_add_test(s, "test_extract_boilerplate_hidden", test_extract_boilerplate_hidden);
    CU_add_test(s, "test_extract_section_numbers", test_extract_section_numbers);
    CU_add_test(s, "test_extract_text_whitespace", test_extract_text_whitespace);
    CU_add_test(s, "test_extract_text_blocks", test_extract_text_blocks);
    CU_add_test(s, "test_extract_text_sphinx_nav", test_extract_text_sphinx_nav);
    CU_add_test(s, "test_extract_text_hub_links", test_extract_text_hub_links);
    CU_add_test(s, "test_extract_text_linked_section_headings",
                test_extract_text_linked_section_headings);
    CU_add_test(s, "test_extract_links_resolved", test_extract_links_resolved);
    CU_add_test(s, "test_extract_links_rfc3986", test_extract_links_rfc3986);
    CU_add_test(s, "test_extract_links_no_base", test_extract_links_no_base);
    CU_add_test(s, "test_extract_links_repeated", test_extract_links_repeated);
    CU_add_test(s, "test_extract_meta_robots_lang_title", test_extract_meta_robots_lang_title);
    CU_add_test(s, "test_extract_title_anchor_caps", test_extract_title_anchor_caps);
    CU_add_test(s, "test_extract_heading", test_extract_heading);
    CU_add_test(s, "test_extract_meta_caps", test_extract_meta_caps);
    CU_add_test(s, "test_extract_tokens_ascii", test_extract_tokens_ascii);
    CU_add_test(s, "test_extract_tokens_unicode", test_extract_tokens_unicode);
    CU_add_test(s, "test_extract_tokens_cjk", test_extract_tokens_cjk);
    CU_add_test(s, "test_extract_tokens_long_token_cut", test_extract_tokens_long_token_cut);
    CU_add_test(s, "test_extract_tokens_code_joins", test_extract_tokens_code_joins);
    CU_add_test(s, "test_extract_name_tokens_math", test_extract_name_tokens_math);
    CU_add_test(s, "test_extract_tokens_cut_prefix", test_extract_tokens_cut_prefix);
    CU_add_test(s, "test_extract_tokens_golden", test_extract_tokens_golden);
    CU_add_test(s, "test_extract_tokens_invalid", test_extract_tokens_invalid);
    CU_add_test(s, "test_extract_bad_empty", test_extract_bad_empty);
    CU_add_test(s, "test_extract_bad_binary", test_extract_bad_binary);
    CU_add_test(s, "test_extract_bad_stray_nul", test_extract_bad_stray_nul);
    CU_add_test(s, "test_extract_bad_too_large", test_extract_bad_too_large);
    CU_add_test(s, "test_extract_bad_deep_nesting", test_extract_bad_deep_nesting);
    CU_add_test(s, "test_extract_caps_reported", test_extract_caps_reported);
    CU_add_test(s, "test_extract_bad_huge_page", test_extract_bad_huge_page);
    CU_add_test(s, "test_extract_bad_one_line", test_extract_bad_one_line);
    CU_add_test(s, "test_extract_fixtures", test_extract_fixtures);
    CU_add_test(s, "test_extract_notext_pages", test_extract_notext_pages);
}
