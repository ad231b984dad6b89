/*
 * SHA-1 digests in the form WARC files carry them: "sha1:" followed by the 20-byte
 * digest in RFC 4648 base32 (32 upper-case letters and digits 2-7, no padding needed
 * for 20 bytes). ISO 28500 leaves the algorithm open; sha1+base32 is what Heritrix,
 * wget and warcio write and what replay tools compare (WARC-Payload-Digest).
 * The hash is OpenSSL libcrypto's EVP interface; no OpenSSL type leaves this file.
 */
#include "crawler/crawl.h"

#include <openssl/evp.h>
#include <stdlib.h>
#include <string.h>

struct crawl_digest {
    EVP_MD_CTX *ctx;
};

size_t crawl_base32_encode(const uint8_t *in, size_t len, char *out, size_t cap)
{
    static const char alphabet[] = "ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    size_t need = (len + 4) / 5 * 8;
    if (cap < need + 1)
        return 0;
    size_t o = 0;
    for (size_t i = 0; i < len; i += 5) {
        uint8_t b[5] = {0, 0, 0, 0, 0};
        size_t n = len - i < 5 ? len - i : 5;
        memcpy(b, in + i, n);
        uint64_t v = ((uint64_t)b[0] << 32) | ((uint64_t)b[1] << 24) | ((uint64_t)b[2] << 16) |
                     ((uint64_t)b[3] << 8) | b[4];
        /* n input bytes give ceil(8n/5) letters; the rest of the group is '=' */
        size_t letters = (n * 8 + 4) / 5;
        for (size_t j = 0; j < 8; j++)
            out[o++] = j < letters ? alphabet[(v >> (35 - 5 * j)) & 31] : '=';
    }
    out[o] = '\0';
    return o;
}

enum crawl_code crawl_digest_new(struct crawl_digest **out)
{
    *out = NULL;
    struct crawl_digest *d = calloc(1, sizeof *d);
    if (!d)
        return CRAWL_ENOMEM;
    d->ctx = EVP_MD_CTX_new();
    if (!d->ctx || EVP_DigestInit_ex(d->ctx, EVP_sha1(), NULL) != 1) {
        crawl_digest_free(d);
        return CRAWL_ENOMEM;
    }
    *out = d;
    return CRAWL_OK;
}

void crawl_digest_update(struct crawl_digest *d, const void *data, size_t len)
{
    if (len)
        EVP_DigestUpdate(d->ctx, data, len);
}

void crawl_digest_final(struct crawl_digest *d, char out[CRAWL_DIGEST_SIZE])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    EVP_DigestFinal_ex(d->ctx, md, &mdlen);
    memcpy(out, "sha1:", 5);
    crawl_base32_encode(md, mdlen, out + 5, CRAWL_DIGEST_SIZE - 5);
    EVP_DigestInit_ex(d->ctx, EVP_sha1(), NULL);
}

void crawl_digest_free(struct crawl_digest *d)
{
    if (!d)
        return;
    EVP_MD_CTX_free(d->ctx);
    free(d);
}

enum crawl_code crawl_digest_sha1(const void *data, size_t len, char out[CRAWL_DIGEST_SIZE])
{
    unsigned char md[EVP_MAX_MD_SIZE];
    unsigned int mdlen = 0;
    if (EVP_Digest(data, len, md, &mdlen, EVP_sha1(), NULL) != 1)
        return CRAWL_ENOMEM;
    memcpy(out, "sha1:", 5);
    crawl_base32_encode(md, mdlen, out + 5, CRAWL_DIGEST_SIZE - 5);
    return CRAWL_OK;
}
