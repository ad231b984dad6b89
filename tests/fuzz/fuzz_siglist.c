/*
 * Fuzz target: a line of a MinHash signature list (cli_mh_list_line, docs/MINHASH.md
 * "Signature lists": h comma-separated 8-digit hex values, blanks, the id; a line that
 * starts with a backslash has its id escaped, "\n" and "\\" only). The first byte picks h
 * (1, 2, 3 or 128, the default num-perm); the rest is cut into lines. Every line that
 * parses must give an id of 1..DEDUP_INDEX_MAX_ID_BYTES bytes lying inside the line, and
 * must come back the same when written again as `simcrawl fingerprint --method minhash`
 * writes it (cli_mh_format_signature, the id escaped when it holds a newline or a
 * backslash) and parsed again.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "cli/minhash.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

/* The line fingerprint writes for sig and id (len bytes): malloc'd, NUL-terminated. */
static char *written(const uint32_t *sig, unsigned h, const char *id, size_t len)
{
    int esc = memchr(id, '\n', len) || memchr(id, '\\', len);
    char *out = malloc(1 + 9u * h + 1 + 2 * len + 1);
    if (!out)
        return NULL;
    char *o = out;
    if (esc)
        *o++ = '\\';
    cli_mh_format_signature(sig, h, o);
    o += strlen(o);
    *o++ = ' ';
    for (size_t i = 0; i < len; i++) {
        if (esc && (id[i] == '\n' || id[i] == '\\')) {
            *o++ = '\\';
            *o++ = id[i] == '\n' ? 'n' : '\\';
        } else {
            *o++ = id[i];
        }
    }
    *o = '\0';
    return out;
}

static void one_line(const char *s, size_t len, unsigned h, uint32_t *sig, uint32_t *again)
{
    char *line = malloc(len + 1);
    if (!line)
        return;
    memcpy(line, s, len);
    line[len] = '\0';
    char *id;
    size_t id_len;
    const char *what = NULL;
    if (cli_mh_list_line(line, h, sig, &id, &id_len, &what) != 0) {
        if (!what || !*what)
            abort(); /* a refusal says why */
        free(line);
        return;
    }
    if (id < line || id + id_len > line + len || id_len == 0 || id_len > DEDUP_INDEX_MAX_ID_BYTES ||
        id[id_len] != '\0')
        abort();
    char *w = written(sig, h, id, id_len);
    if (w) {
        char *id2;
        size_t id2_len;
        if (cli_mh_list_line(w, h, again, &id2, &id2_len, &what) != 0 ||
            memcmp(sig, again, h * sizeof *sig) != 0 || id2_len != id_len ||
            memcmp(id, id2, id_len) != 0)
            abort();
        free(w);
    }
    free(line);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static const unsigned hs[] = {1, 2, 3, 128};
    if (size == 0)
        return 0;
    unsigned h = hs[data[0] % 4];
    uint32_t *sig = malloc(h * sizeof *sig), *again = malloc(h * sizeof *again);
    if (sig && again) {
        const char *p = (const char *)data + 1, *end = (const char *)data + size;
        while (p < end) {
            const char *nl = memchr(p, '\n', (size_t)(end - p));
            size_t len = (size_t)((nl ? nl : end) - p);
            size_t body = len;
            if (body && p[body - 1] == '\r')
                body--;
            if (!memchr(p, '\0', body)) /* the reader refuses a NUL byte before this */
                one_line(p, body, h, sig, again);
            p += len + (nl != NULL);
        }
    }
    free(sig);
    free(again);
    return 0;
}
