/*
 * libFuzzer target for extract/: any bytes as a page, with and without a base URL and a
 * Content-Type charset picked by the first byte; then the tokens of the main text.
 * Checks the API's promises: text, title and every link string are valid UTF-8 and
 * NUL-terminated at their length; tokens are single-space separated, no NUL inside.
 * The saved corpus (tests/fuzz/corpus/extract/) replays under `make test`.
 */
#include "extract/extract.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static void check_utf8(const char *s, size_t n)
{
    size_t i = 0;
    while (i < n) {
        unsigned char c = (unsigned char)s[i];
        size_t k = c < 0x80 ? 1 : c >= 0xF0 ? 4 : c >= 0xE0 ? 3 : c >= 0xC2 ? 2 : 0;
        if (k == 0 || c == 0 || i + k > n)
            abort();
        for (size_t j = 1; j < k; j++)
            if (((unsigned char)s[i + j] & 0xC0) != 0x80)
                abort();
        i += k;
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const char *const types[] = {NULL, "text/html; charset=utf-8",
                                        "text/html; charset=iso-8859-1",
                                        "text/html; charset=shift_jis", "text/html; charset=utf-16",
                                        "text/html; charset=no-such-charset"};
    struct extract_opts opts;
    memset(&opts, 0, sizeof opts);
    if (size > 0) {
        opts.content_type = types[data[0] % 6];
        opts.base_url = (data[0] & 8) ? "http://example.com/a/b/c.html?q#f" : NULL;
        opts.max_depth = (data[0] & 16) ? 8 : 0;
    }
    struct extract_doc *doc = NULL;
    enum extract_code rc = extract_doc_parse((const char *)data, size, &opts, &doc);
    if (rc != EXTRACT_OK) {
        if (doc)
            abort();
        return 0;
    }
    size_t len = 0;
    const char *text = extract_doc_text(doc, &len);
    if (text[len] != '\0' || strlen(text) != len)
        abort();
    check_utf8(text, len);
    check_utf8(extract_doc_title(doc), strlen(extract_doc_title(doc)));
    for (size_t i = 0; i < extract_doc_link_count(doc); i++) {
        const struct extract_link *l = extract_doc_link(doc, i);
        check_utf8(l->url, strlen(l->url));
        check_utf8(l->anchor, strlen(l->anchor));
    }
    char *tok = NULL;
    size_t tok_len = 0, n = 0;
    if (extract_tokens(text, len, &tok, &tok_len, &n) == EXTRACT_OK) {
        if (strlen(tok) != tok_len || (tok_len && (tok[0] == ' ' || tok[tok_len - 1] == ' ')))
            abort();
        if (strstr(tok, "  "))
            abort();
        check_utf8(tok, tok_len);
        free(tok);
    }
    extract_doc_free(doc);
    return 0;
}
