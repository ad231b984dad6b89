/*
 * Suite "warc": the WARC reader, the HTTP block parser, the digests and the WARC writer
 * (crawler/warc.c, httpblock.c, digest.c, warc_write.c).
 *
 * Hand-made records test each rule of the format; WARCs written by a real client (wget
 * --warc-file against tests/httpd on 127.0.0.1) test what archives actually contain; and
 * copies of those damaged in the test (truncated, gzip bytes flipped, garbage inserted,
 * wrong Content-Length) test that the reader reports the offset and goes on. Content-coding
 * fixtures are made in the tests with zlib and libzstd (ZSTD_compress). The writer
 * is checked by reading its output back byte for byte and recomputing its digests.
 */
#include <CUnit/CUnit.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>
#include <zlib.h>
#include <zstd.h>

#include "crawler/crawl.h"
#include "tests/httpd.h"
#include "tests/testutil.h"

/* ---- helpers ---- */

struct errs {
    int n;
    uint64_t offset[32];
    enum crawl_code code[32];
    char what[32][160];
};

static void on_error(void *ud, uint64_t offset, enum crawl_code code, const char *what)
{
    struct errs *e = ud;
    if (e->n < 32) {
        e->offset[e->n] = offset;
        e->code[e->n] = code;
        snprintf(e->what[e->n], sizeof e->what[0], "%s", what);
    }
    e->n++;
}

struct rec_info {
    char type[32];
    char uri[256];
    char id[64];
    uint64_t offset;
    size_t block_len;
    int block_rc;
    char block_sha1[CRAWL_DIGEST_SIZE];
    char block_digest[64];
    char payload_digest[64];
};

/* Reads every record of a reader, whole blocks; returns the count (max 64 kept). */
static int read_all(struct crawl_warc_reader *r, struct rec_info *out, int max)
{
    int n = 0;
    const struct crawl_warc_record *rec;
    while (crawl_warc_next(r, &rec) == CRAWL_OK) {
        if (n < max) {
            struct rec_info *ri = &out[n];
            memset(ri, 0, sizeof *ri);
            snprintf(ri->type, sizeof ri->type, "%s", rec->type);
            snprintf(ri->uri, sizeof ri->uri, "%s", rec->target_uri);
            snprintf(ri->id, sizeof ri->id, "%s", rec->record_id);
            snprintf(ri->block_digest, sizeof ri->block_digest, "%s", rec->block_digest);
            snprintf(ri->payload_digest, sizeof ri->payload_digest, "%s", rec->payload_digest);
            ri->offset = rec->offset;
            const char *d;
            size_t l;
            ri->block_rc = crawl_warc_block(r, &d, &l);
            ri->block_len = l;
            if (d && crawl_digest_sha1(d, l, ri->block_sha1) != CRAWL_OK)
                ri->block_sha1[0] = '\0';
        }
        n++;
    }
    return n;
}

static int read_mem(const void *data, size_t len, struct errs *e, struct rec_info *out, int max)
{
    struct crawl_warc_opts o = {0, on_error, e};
    struct crawl_warc_reader *r;
    if (crawl_warc_reader_open_mem(data, len, &o, &r) != CRAWL_OK)
        return -1;
    int n = read_all(r, out, max);
    crawl_warc_reader_free(r);
    return n;
}

static int read_path(const char *path, struct errs *e, struct rec_info *out, int max)
{
    struct crawl_warc_opts o = {0, on_error, e};
    struct crawl_warc_reader *r;
    if (crawl_warc_reader_open(path, &o, &r) != CRAWL_OK)
        return -1;
    int n = read_all(r, out, max);
    crawl_warc_reader_free(r);
    return n;
}

/* gzip-compresses in[0..len) as one member appended to buf. */
static void gz_append(char **buf, size_t *blen, const char *in, size_t len)
{
    z_stream zs;
    memset(&zs, 0, sizeof zs);
    deflateInit2(&zs, 6, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY);
    size_t cap = deflateBound(&zs, len) + 32;
    *buf = realloc(*buf, *blen + cap);
    zs.next_in = (Bytef *)in;
    zs.avail_in = (uInt)len;
    zs.next_out = (Bytef *)*buf + *blen;
    zs.avail_out = (uInt)cap;
    deflate(&zs, Z_FINISH);
    *blen += cap - zs.avail_out;
    deflateEnd(&zs);
}

static int spit(const char *path, const void *data, size_t len)
{
    FILE *f = fopen(path, "wb");
    if (!f)
        return -1;
    size_t w = fwrite(data, 1, len, f);
    return fclose(f) == 0 && w == len ? 0 : -1;
}

/* A record with the given fields and block. */
static size_t mkrec(char *out, size_t cap, const char *version, const char *fields,
                    const char *block)
{
    return (size_t)snprintf(out, cap, "%s\r\n%sContent-Length: %zu\r\n\r\n%s\r\n\r\n", version,
                            fields, strlen(block), block);
}

/* ---- digests ---- */

/* What an HTML page's Content-Type is (the crawler's fetch and the WARC page classifier). */
static void test_mime_is_html(void)
{
    static const char *const yes[] = {"text/html", "TEXT/HTML; charset=utf-8",
                                      " text/html ;charset=x", "application/xhtml+xml",
                                      "Application/XHTML+XML\t; q=1"};
    static const char *const no[] = {"",         "text/htmlx",        "text/plain",
                                     "text/html foo", "application/xhtml", "image/png; x=text/html"};
    for (size_t i = 0; i < sizeof yes / sizeof *yes; i++)
        ASSERT_EQ(crawl_mime_is_html(yes[i]), 1);
    for (size_t i = 0; i < sizeof no / sizeof *no; i++)
        ASSERT_EQ(crawl_mime_is_html(no[i]), 0);
    ASSERT_EQ(crawl_mime_is_html(NULL), 0);
}

static void test_digest_base32_vectors(void)
{
    char out[64];
    /* RFC 4648 section 10 */
    ASSERT_EQ(crawl_base32_encode((const uint8_t *)"", 0, out, sizeof out), 0);
    crawl_base32_encode((const uint8_t *)"f", 1, out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "MY======");
    crawl_base32_encode((const uint8_t *)"fooba", 5, out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "MZXW6YTB");
    crawl_base32_encode((const uint8_t *)"foobar", 6, out, sizeof out);
    CU_ASSERT_STRING_EQUAL(out, "MZXW6YTBOI======");
    ASSERT_EQ(crawl_base32_encode((const uint8_t *)"foobar", 6, out, 16), 0); /* no room */
}

static void test_digest_sha1_known(void)
{
    char d[CRAWL_DIGEST_SIZE];
    /* sha1("") = da39a3ee5e6b4b0d3255bfef95601890afd80709 */
    ASSERT_EQ(crawl_digest_sha1("", 0, d), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(d, "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    struct crawl_digest *g;
    ASSERT_EQ_FATAL(crawl_digest_new(&g), CRAWL_OK);
    crawl_digest_update(g, "ab", 2);
    crawl_digest_update(g, "c", 1);
    char d2[CRAWL_DIGEST_SIZE];
    crawl_digest_final(g, d2);
    ASSERT_EQ(crawl_digest_sha1("abc", 3, d), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(d, d2);
    /* sha1("abc") = a9993e364706816aba3e25717850c26c9cd0d89d */
    CU_ASSERT_STRING_EQUAL(d, "sha1:VGMT4NSHA2AWVOR6EVYXQUGCNSONBWE5");
    crawl_digest_final(g, d2); /* reset after final: digest of nothing */
    CU_ASSERT_STRING_EQUAL(d2, "sha1:3I42H3S6NNFQ2MSVX7XZKYAYSCX5QBYJ");
    crawl_digest_free(g);
}

/* ---- reader: hand-made records ---- */

static const char HTTP_OK[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n\r\n<p>hello</p>";

static void test_warc_reader_plain_versions_and_fields(void)
{
    char buf[8192];
    size_t n = 0;
    n += mkrec(buf + n, sizeof buf - n, "WARC/1.0",
               "WARC-Type: warcinfo\r\nWARC-Record-ID: <urn:uuid:1>\r\n", "software: x\r\n");
    n += mkrec(buf + n, sizeof buf - n, "WARC/1.1",
               "WARC-Type: response\r\nWARC-Target-URI:   <http://a.example/x y>  \r\n"
               "X-Unknown-Field: whatever\r\nWARC-Record-ID: <urn:uuid:2>\r\n"
               "WARC-Date: 2026-11-21T20:00:00Z\r\nContent-Type: application/http;\r\n"
               " msgtype=response\r\n",
               HTTP_OK);
    n += mkrec(buf + n, sizeof buf - n, "WARC/1.0",
               "WARC-Type: x-future-type\r\nWARC-Target-URI: http://b.example/\r\n", "opaque");
    struct errs e = {0};
    struct crawl_warc_opts o = {0, on_error, &e};
    struct crawl_warc_reader *r;
    ASSERT_EQ_FATAL(crawl_warc_reader_open_mem(buf, n, &o, &r), CRAWL_OK);
    const struct crawl_warc_record *rec;
    ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(rec->version, "WARC/1.0");
    CU_ASSERT_STRING_EQUAL(rec->type, "warcinfo");
    ASSERT_EQ(rec->offset, 0);
    /* block not read: next() skips it */
    ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(rec->version, "WARC/1.1");
    CU_ASSERT_STRING_EQUAL(rec->target_uri, "http://a.example/x y");
    CU_ASSERT_STRING_EQUAL(rec->record_id, "<urn:uuid:2>");
    CU_ASSERT_STRING_EQUAL(rec->content_type, "application/http; msgtype=response");
    CU_ASSERT_STRING_EQUAL(crawl_warc_field(rec, "x-unknown-field"), "whatever");
    ASSERT_EQ(rec->content_length, strlen(HTTP_OK));
    CU_ASSERT_TRUE(memcmp(rec->header, "WARC/1.1\r\n", 10) == 0);
    CU_ASSERT_TRUE(rec->header_len > 10 &&
                   memcmp(rec->header + rec->header_len - 4, "\r\n\r\n", 4) == 0);
    const char *d;
    size_t l;
    ASSERT_EQ(crawl_warc_block(r, &d, &l), CRAWL_OK);
    ASSERT_EQ(l, strlen(HTTP_OK));
    CU_ASSERT_TRUE(l == strlen(HTTP_OK) && memcmp(d, HTTP_OK, l) == 0);
    ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(rec->type, "x-future-type");
    ASSERT_EQ(crawl_warc_next(r, &rec), CRAWL_EOF);
    ASSERT_EQ(crawl_warc_next(r, &rec), CRAWL_EOF);
    ASSERT_EQ(e.n, 0);
    ASSERT_EQ(crawl_warc_reader_gzip(r), 0);
    crawl_warc_reader_free(r);
}

static void test_warc_reader_gzip_member_offsets(void)
{
    char rec[3][1024];
    size_t rl[3];
    for (int i = 0; i < 3; i++) {
        char f[128];
        snprintf(f, sizeof f, "WARC-Type: resource\r\nWARC-Target-URI: http://x/%d\r\n", i);
        rl[i] = mkrec(rec[i], sizeof rec[i], "WARC/1.1", f, "some block bytes");
    }
    char *gz = NULL;
    size_t gl = 0, off[3];
    for (int i = 0; i < 3; i++) {
        off[i] = gl;
        gz_append(&gz, &gl, rec[i], rl[i]);
    }
    struct errs e = {0};
    struct rec_info ri[4];
    ASSERT_EQ(read_mem(gz, gl, &e, ri, 4), 3);
    for (int i = 0; i < 3; i++) {
        ASSERT_EQ(ri[i].offset, off[i]);
        ASSERT_EQ(ri[i].block_len, 16);
    }
    CU_ASSERT_STRING_EQUAL(ri[2].uri, "http://x/2");
    ASSERT_EQ(e.n, 0);

    /* whole-file gzip: one member for all three */
    char all[4096];
    size_t al = 0;
    for (int i = 0; i < 3; i++) {
        memcpy(all + al, rec[i], rl[i]);
        al += rl[i];
    }
    char *one = NULL;
    size_t ol = 0;
    gz_append(&one, &ol, all, al);
    struct crawl_warc_opts o = {0, on_error, &e};
    struct crawl_warc_reader *r;
    ASSERT_EQ_FATAL(crawl_warc_reader_open_mem(one, ol, &o, &r), CRAWL_OK);
    ASSERT_EQ(read_all(r, ri, 4), 3);
    ASSERT_EQ(crawl_warc_reader_gzip(r), 2);
    ASSERT_EQ(ri[1].offset, rl[0]); /* the offset in the uncompressed stream */
    ASSERT_EQ(e.n, 0);
    crawl_warc_reader_free(r);
    free(one);
    free(gz);
}

static void test_warc_reader_streams_large_blocks(void)
{
    /* a block over max_block is refused whole but reads incrementally */
    size_t big = 300000;
    char *block = malloc(big + 1);
    for (size_t i = 0; i < big; i++)
        block[i] = (char)('a' + i % 26);
    block[big] = '\0';
    size_t cap = big + 4096;
    char *buf = malloc(cap);
    size_t n = mkrec(buf, cap, "WARC/1.1", "WARC-Type: resource\r\n", block);
    n += mkrec(buf + n, cap - n, "WARC/1.1", "WARC-Type: metadata\r\n", "tail");
    struct errs e = {0};
    struct crawl_warc_opts o = {1000, on_error, &e};
    struct crawl_warc_reader *r;
    ASSERT_EQ_FATAL(crawl_warc_reader_open_mem(buf, n, &o, &r), CRAWL_OK);
    const struct crawl_warc_record *rec;
    ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK);
    const char *d;
    size_t l;
    ASSERT_EQ(crawl_warc_block(r, &d, &l), CRAWL_ETOOLARGE);
    size_t got = 0, k;
    char chunk[7777];
    int same = 1;
    while (crawl_warc_read(r, chunk, sizeof chunk, &k) == CRAWL_OK && k > 0) {
        if (memcmp(chunk, block + got, k) != 0)
            same = 0;
        got += k;
    }
    ASSERT_EQ(got, big);
    CU_ASSERT_TRUE(same);
    ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(rec->type, "metadata");
    ASSERT_EQ(crawl_warc_next(r, &rec), CRAWL_EOF);
    ASSERT_EQ(e.n, 0);
    crawl_warc_reader_free(r);
    free(buf);
    free(block);
}

static void test_warc_reader_damage_plain(void)
{
    char buf[8192];
    size_t n = 0, second;
    n += mkrec(buf + n, sizeof buf - n, "WARC/1.1", "WARC-Type: resource\r\n", "first");
    second = n;
    /* wrong Content-Length: says 50, the block has 6 */
    n += (size_t)snprintf(
        buf + n, sizeof buf - n,
        "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 50\r\n\r\nsecond\r\n\r\n");
    n += mkrec(buf + n, sizeof buf - n, "WARC/1.1",
               "WARC-Type: resource\r\nWARC-Target-URI: http://t/3\r\n", "third");
    size_t garbage_at = n;
    n += (size_t)snprintf(buf + n, sizeof buf - n, "garbage between records\n\x01\x02");
    n += mkrec(buf + n, sizeof buf - n, "WARC/1.1",
               "WARC-Type: resource\r\nWARC-Target-URI: http://t/4\r\n", "fourth");
    /* a header without Content-Length */
    n += (size_t)snprintf(buf + n, sizeof buf - n,
                          "WARC/1.1\r\nWARC-Type: resource\r\n\r\nx\r\n\r\n");
    n += mkrec(buf + n, sizeof buf - n, "WARC/1.1",
               "WARC-Type: resource\r\nWARC-Target-URI: http://t/6\r\n", "sixth");
    /* truncated last record */
    n += (size_t)snprintf(buf + n, sizeof buf - n,
                          "WARC/1.1\r\nWARC-Type: resource\r\nContent-Length: 100\r\n\r\nshort");
    struct errs e = {0};
    struct rec_info ri[16];
    int got = read_mem(buf, n, &e, ri, 16);
    /* first, second (reported damaged), third, fourth, sixth, truncated seventh */
    ASSERT_EQ(got, 6);
    ASSERT_EQ(ri[0].block_rc, CRAWL_OK);
    ASSERT_EQ(ri[1].offset, second);
    CU_ASSERT_NOT_EQUAL(ri[1].block_rc, CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(ri[2].uri, "http://t/3");
    ASSERT_EQ(ri[2].block_rc, CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(ri[3].uri, "http://t/4");
    CU_ASSERT_STRING_EQUAL(ri[4].uri, "http://t/6");
    ASSERT_EQ(ri[5].block_rc, CRAWL_ETRUNCATED);
    ASSERT_EQ(ri[5].block_len, 5);
    ASSERT_EQ(e.n, 4);
    int saw_garbage = 0;
    for (int i = 0; i < e.n && i < 32; i++)
        if (e.offset[i] == garbage_at && strstr(e.what[i], "garbage"))
            saw_garbage = 1;
    CU_ASSERT_TRUE(saw_garbage);
}

static void test_warc_reader_damage_gzip(void)
{
    char rec[4][512];
    size_t rl[4], off[4];
    char *gz = NULL;
    size_t gl = 0;
    for (int i = 0; i < 4; i++) {
        char f[128], b[128];
        snprintf(f, sizeof f, "WARC-Type: resource\r\nWARC-Target-URI: http://g/%d\r\n", i);
        snprintf(b, sizeof b, "block %d with enough text to be worth compressing, %d", i, i * 7);
        rl[i] = mkrec(rec[i], sizeof rec[i], "WARC/1.1", f, b);
        off[i] = gl;
        gz_append(&gz, &gl, rec[i], rl[i]);
    }
    /* flip bytes inside the deflate data of member 1 */
    char *bad = malloc(gl);
    memcpy(bad, gz, gl);
    for (size_t i = off[1] + 14; i < off[1] + 30; i++)
        bad[i] ^= 0x5a;
    struct errs e = {0};
    struct rec_info ri[8];
    int got = read_mem(bad, gl, &e, ri, 8);
    CU_ASSERT_TRUE(e.n >= 1);
    ASSERT_EQ(e.offset[0], off[1]);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what[0], "gzip"));
    CU_ASSERT_TRUE(got >= 3);
    /* the records after the broken member come back whole */
    CU_ASSERT_STRING_EQUAL(ri[got - 1].uri, "http://g/3");
    ASSERT_EQ(ri[got - 1].offset, off[3]);
    ASSERT_EQ(ri[got - 1].block_rc, CRAWL_OK);

    /* garbage between members */
    char *gb = malloc(gl + 100);
    memcpy(gb, gz, off[2]);
    memcpy(gb + off[2], "not gzip at all!", 16);
    memcpy(gb + off[2] + 16, gz + off[2], gl - off[2]);
    memset(&e, 0, sizeof e);
    got = read_mem(gb, gl + 16, &e, ri, 8);
    ASSERT_EQ(got, 4);
    ASSERT_EQ(e.n, 1);
    ASSERT_EQ(e.offset[0], off[2]);
    ASSERT_EQ(ri[2].offset, off[2] + 16);

    /* truncated inside the last member */
    memset(&e, 0, sizeof e);
    got = read_mem(gz, off[3] + 20, &e, ri, 8);
    CU_ASSERT_TRUE(got == 3 || got == 4);
    CU_ASSERT_TRUE(e.n >= 1);
    ASSERT_EQ(ri[2].block_rc, CRAWL_OK);
    free(gb);
    free(bad);
    free(gz);
}

static void test_warc_reader_wrong_length_recovers(void)
{
    /* record 1 claims a block far longer than it is: the records after it come back */
    char rec[4][512];
    size_t rl[4], off[4];
    for (int i = 0; i < 4; i++) {
        char f[128];
        snprintf(f, sizeof f, "WARC-Type: resource\r\nWARC-Target-URI: http://w/%d\r\n", i);
        if (i == 1)
            rl[i] =
                (size_t)snprintf(rec[i], sizeof rec[i],
                                 "WARC/1.1\r\n%sContent-Length: 900000\r\n\r\nshort\r\n\r\n", f);
        else
            rl[i] = mkrec(rec[i], sizeof rec[i], "WARC/1.1", f, "a block of text");
    }
    char *gz = NULL, plain[4096];
    size_t gl = 0, pl = 0;
    for (int i = 0; i < 4; i++) {
        off[i] = gl;
        gz_append(&gz, &gl, rec[i], rl[i]);
        memcpy(plain + pl, rec[i], rl[i]);
        pl += rl[i];
    }
    /* gzip, block read whole (900000 < max_block) and streamed (max_block 100) */
    size_t caps[2] = {0, 100};
    for (int c = 0; c < 2; c++) {
        struct errs e = {0};
        struct crawl_warc_opts o = {caps[c], on_error, &e};
        struct crawl_warc_reader *r;
        ASSERT_EQ_FATAL(crawl_warc_reader_open_mem(gz, gl, &o, &r), CRAWL_OK);
        struct rec_info ri[8];
        int n = read_all(r, ri, 8);
        crawl_warc_reader_free(r);
        ASSERT_EQ(n, 4);
        ASSERT_EQ(e.n, 1);
        ASSERT_EQ(e.offset[0], off[1]);
        CU_ASSERT_PTR_NOT_NULL(strstr(e.what[0], "runs past the end of its gzip member"));
        CU_ASSERT_STRING_EQUAL(ri[2].uri, "http://w/2");
        ASSERT_EQ(ri[2].offset, off[2]);
        ASSERT_EQ(ri[2].block_rc, CRAWL_OK);
        CU_ASSERT_STRING_EQUAL(ri[3].uri, "http://w/3");
    }
    /* plain: the file ends before the claimed length; the rescan finds records 2 and 3 */
    struct errs e = {0};
    struct rec_info ri[8];
    ASSERT_EQ(read_mem(plain, pl, &e, ri, 8), 4);
    ASSERT_EQ(e.n, 1);
    CU_ASSERT_STRING_EQUAL(ri[3].uri, "http://w/3");
    ASSERT_EQ(ri[3].block_rc, CRAWL_OK);
    free(gz);
}

static void test_warc_reader_empty_and_binary(void)
{
    struct errs e = {0};
    struct rec_info ri[2];
    ASSERT_EQ(read_mem("", 0, &e, ri, 2), 0);
    ASSERT_EQ(e.n, 0);
    const char bin[] = "\x00\x01\x02PNG binary stuff\xff\xfe";
    ASSERT_EQ(read_mem(bin, sizeof bin, &e, ri, 2), 0);
    ASSERT_EQ(e.n, 1);
    memset(&e, 0, sizeof e);
    ASSERT_EQ(read_mem("\x1f\x8b", 2, &e, ri, 2), 0);
    ASSERT_EQ(e.n, 1);
    struct crawl_warc_reader *r;
    ASSERT_EQ(crawl_warc_reader_open("/nonexistent/x.warc", NULL, &r), CRAWL_EIO);
    CU_ASSERT_PTR_NULL(r);
}

/* ---- HTTP blocks ---- */

static void test_httpblock_headers(void)
{
    const char msg[] = "HTTP/1.1 404 Not Found\r\n"
                       "Content-Type: Text/HTML; Charset=\"ISO-8859-1\"\r\n"
                       "X-Folded: one\r\n"
                       "\ttwo\r\n"
                       "this line is bad\r\n"
                       "Set-Cookie: a=1\r\n"
                       "Set-Cookie: b=2\n"
                       "\r\n"
                       "body";
    struct crawl_http_msg *m;
    ASSERT_EQ_FATAL(crawl_http_parse(msg, sizeof msg - 1, NULL, &m), CRAWL_OK);
    ASSERT_EQ(crawl_http_status(m), 404);
    CU_ASSERT_STRING_EQUAL(crawl_http_method(m), "");
    CU_ASSERT_STRING_EQUAL(crawl_http_mime(m), "text/html");
    CU_ASSERT_STRING_EQUAL(crawl_http_charset(m), "iso-8859-1");
    CU_ASSERT_STRING_EQUAL(crawl_http_header(m, "x-folded"), "one two");
    ASSERT_EQ(crawl_http_header_count(m), 4);
    const char *name, *value;
    crawl_http_header_at(m, 3, &name, &value);
    CU_ASSERT_STRING_EQUAL(value, "b=2");
    size_t l;
    const char *p = crawl_http_payload(m, &l);
    ASSERT_EQ(l, 4);
    CU_ASSERT_NSTRING_EQUAL(p, "body", 4);
    ASSERT_EQ(crawl_http_head_len(m), sizeof msg - 1 - 4);
    ASSERT_EQ(crawl_mime_is_html(crawl_http_mime(m)), 1);
    crawl_http_free(m);

    const char req[] = "GET /x?y HTTP/1.1\r\nHost: a\r\n\r\n";
    ASSERT_EQ_FATAL(crawl_http_parse(req, sizeof req - 1, NULL, &m), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(crawl_http_method(m), "GET");
    ASSERT_EQ(crawl_http_status(m), 0);
    crawl_http_free(m);

    ASSERT_EQ(crawl_http_parse("HTTP/1.1 200 OK\r\nNo-End: x", 26, NULL, &m), CRAWL_EFORMAT);
    CU_ASSERT_PTR_NULL(m);
    ASSERT_EQ(crawl_http_parse("hello\r\n\r\n", 9, NULL, &m), CRAWL_EFORMAT);
    ASSERT_EQ(crawl_http_parse("HTTP/1.1 2x0 OK\r\n\r\n", 19, NULL, &m), CRAWL_EFORMAT);
}

static void test_httpblock_chunked(void)
{
    const char ok[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                      "5\r\nhello\r\n7;ext=1\r\n, world\r\n0\r\nTrailer: x\r\n\r\n";
    struct crawl_http_msg *m;
    ASSERT_EQ_FATAL(crawl_http_parse(ok, sizeof ok - 1, NULL, &m), CRAWL_OK);
    size_t l;
    const char *p = crawl_http_payload(m, &l);
    ASSERT_EQ(l, 12);
    CU_ASSERT_NSTRING_EQUAL(p, "hello, world", 12);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_OK);
    crawl_http_free(m);

    const char bad[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n"
                       "5\r\nhello\r\nzz\r\nmore\r\n0\r\n\r\n";
    ASSERT_EQ_FATAL(crawl_http_parse(bad, sizeof bad - 1, NULL, &m), CRAWL_OK);
    p = crawl_http_payload(m, &l);
    ASSERT_EQ(l, 5);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_ECHUNKED);
    CU_ASSERT_PTR_NOT_NULL(strstr(crawl_http_body_error(m), "kept 5 bytes"));
    crawl_http_free(m);

    const char cut[] = "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n10\r\nabc";
    ASSERT_EQ_FATAL(crawl_http_parse(cut, sizeof cut - 1, NULL, &m), CRAWL_OK);
    p = crawl_http_payload(m, &l);
    ASSERT_EQ(l, 3);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_ETRUNCATED);
    crawl_http_free(m);
}

/* A response with Content-Encoding coding whose body is enc[0..elen). */
static struct crawl_http_msg *coded(const char *coding, const void *enc, size_t elen,
                                    size_t max_body)
{
    size_t cap = elen + 256;
    char *msg = malloc(cap);
    int h = snprintf(msg, cap, "HTTP/1.1 200 OK\r\nContent-Encoding: %s\r\n\r\n", coding);
    memcpy(msg + h, enc, elen);
    struct crawl_http_opts o = {.max_body = max_body};
    struct crawl_http_msg *m = NULL;
    if (crawl_http_parse(msg, (size_t)h + elen, &o, &m) != CRAWL_OK)
        m = NULL;
    free(msg);
    return m;
}

static void test_httpblock_content_codings(void)
{
    const char text[] =
        "<html><body><p>Some page text, some page text, some page text.</p></body></html>";
    size_t tl = sizeof text - 1;
    /* gzip */
    char *gz = NULL;
    size_t gl = 0;
    gz_append(&gz, &gl, text, tl);
    struct crawl_http_msg *m = coded("gzip", gz, gl, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const char *b;
    size_t bl;
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(bl, tl);
    CU_ASSERT_TRUE(bl == tl && memcmp(b, text, tl) == 0);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_OK);
    size_t pl;
    crawl_http_payload(m, &pl);
    ASSERT_EQ(pl, gl); /* the payload keeps the content coding */
    crawl_http_free(m);
    /* deflate, zlib-wrapped and raw */
    for (int raw = 0; raw < 2; raw++) {
        z_stream zs;
        memset(&zs, 0, sizeof zs);
        deflateInit2(&zs, 6, Z_DEFLATED, raw ? -15 : 15, 8, Z_DEFAULT_STRATEGY);
        unsigned char out[512];
        zs.next_in = (Bytef *)text;
        zs.avail_in = (uInt)tl;
        zs.next_out = out;
        zs.avail_out = sizeof out;
        deflate(&zs, Z_FINISH);
        size_t ol = sizeof out - zs.avail_out;
        deflateEnd(&zs);
        m = coded("deflate", out, ol, 0);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
        CU_ASSERT_TRUE(bl == tl && memcmp(b, text, tl) == 0);
        crawl_http_free(m);
    }
    /* br (fixture made with libbrotlienc) */
    size_t brl;
    char *br = test_slurp("tests/data/warc/page.html.br", &brl);
    CU_ASSERT_PTR_NOT_NULL_FATAL(br);
    m = coded("br", br, brl, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(b, "Brotli encoded page body"));
    crawl_http_free(m);
    /* broken gzip keeps what decoded; unknown coding says so */
    gz[gl / 2] ^= 0x55;
    gz[gl / 2 + 1] ^= 0x55;
    m = coded("gzip", gz, gl, 0);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    CU_ASSERT_NOT_EQUAL(crawl_http_body_code(m), CRAWL_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(crawl_http_body_error(m), "gzip"));
    crawl_http_free(m);
    m = coded("compress", "xyz", 3, 0);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_EUNSUPPORTED);
    crawl_http_free(m);
    free(br);
    free(gz);
}

static void test_httpblock_zip_bomb_capped(void)
{
    /* 50 MB of zeros gzip to ~50 KB; a 1 MB cap stops it */
    size_t big = 50u * 1024 * 1024;
    char *zeros = calloc(1, big);
    char *gz = NULL;
    size_t gl = 0;
    gz_append(&gz, &gl, zeros, big);
    free(zeros);
    struct crawl_http_msg *m = coded("gzip", gz, gl, 1024 * 1024);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const char *b;
    size_t bl;
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_ETOOLARGE);
    CU_ASSERT_TRUE(bl <= 1024 * 1024);
    crawl_http_free(m);
    free(gz);
}

/* zstd-compresses in[0..len) at level; with window_log > 0 forces that window. */
static char *zstd_make(const void *in, size_t len, int level, int window_log, size_t *out_len)
{
    size_t cap = ZSTD_compressBound(len);
    char *out = malloc(cap);
    ZSTD_CCtx *c = ZSTD_createCCtx();
    CU_ASSERT_PTR_NOT_NULL_FATAL(out);
    CU_ASSERT_PTR_NOT_NULL_FATAL(c);
    ZSTD_CCtx_setParameter(c, ZSTD_c_compressionLevel, level);
    ZSTD_CCtx_setParameter(c, ZSTD_c_checksumFlag, 1);
    if (window_log > 0)
        ZSTD_CCtx_setParameter(c, ZSTD_c_windowLog, window_log);
    size_t r = ZSTD_compress2(c, out, cap, in, len);
    ZSTD_freeCCtx(c);
    CU_ASSERT_FALSE_FATAL(ZSTD_isError(r));
    *out_len = r;
    return out;
}

/* A page of n numbered lines (compressible, but no two 128 KB zstd blocks alike). */
static char *numbered_page(size_t n, size_t *len)
{
    char *p = malloc(n * 64 + 64);
    size_t l = (size_t)sprintf(p, "<html><body>\n");
    for (size_t i = 0; i < n; i++)
        l += (size_t)sprintf(p + l, "<p>line %zu of the page, %zu squared</p>\n", i, i * i);
    *len = l;
    return p;
}

static void test_httpblock_zstd_decodes(void)
{
    const char text[] = "<html><body><p>A zstd encoded page body, a zstd encoded page body."
                        "</p></body></html>";
    size_t tl = sizeof text - 1, zl;
    char *z = zstd_make(text, tl, 3, 0, &zl);
    struct crawl_http_msg *m = coded("zstd", z, zl, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const char *b;
    size_t bl, pl;
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_OK);
    CU_ASSERT_TRUE(bl == tl && memcmp(b, text, tl) == 0);
    crawl_http_payload(m, &pl);
    ASSERT_EQ(pl, zl); /* the payload keeps the content coding */
    crawl_http_free(m);
    /* two frames back to back decode to both texts; the token is case-insensitive */
    char two[1024];
    memcpy(two, z, zl);
    memcpy(two + zl, z, zl);
    m = coded("ZSTD", two, 2 * zl, 0);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_OK);
    CU_ASSERT_TRUE(bl == 2 * tl && memcmp(b, text, tl) == 0 && memcmp(b + tl, text, tl) == 0);
    crawl_http_free(m);
    /* zstd applied over gzip: "gzip, zstd" is undone zstd first */
    char *gz = NULL;
    size_t gl = 0, zgl;
    gz_append(&gz, &gl, text, tl);
    char *zg = zstd_make(gz, gl, 1, 0, &zgl);
    m = coded("gzip, zstd", zg, zgl, 0);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_OK);
    CU_ASSERT_TRUE(bl == tl && memcmp(b, text, tl) == 0);
    crawl_http_free(m);
    /* corrupt frame: a decode error naming the coding */
    z[zl / 2] ^= 0x5a;
    z[zl - 1] ^= 0x5a; /* the checksum too, so some check must fail */
    m = coded("zstd", z, zl, 0);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_EDECODE);
    CU_ASSERT_PTR_NOT_NULL(strstr(crawl_http_body_error(m), "bad zstd content coding"));
    crawl_http_free(m);
    /* not zstd at all */
    m = coded("zstd", text, tl, 0);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_EDECODE);
    crawl_http_free(m);
    free(zg);
    free(gz);
    free(z);
}

static void test_httpblock_zstd_truncated_keeps_prefix(void)
{
    size_t tl, zl;
    char *text = numbered_page(20000, &tl); /* ~1 MB: several 128 KB blocks */
    char *z = zstd_make(text, tl, 3, 0, &zl);
    const char *b;
    size_t bl;
    /* cut in the middle: some blocks decode, then the data ends inside the frame */
    struct crawl_http_msg *m = coded("zstd", z, zl / 2, 0);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_ETRUNCATED);
    CU_ASSERT_TRUE(bl > 0 && bl < tl);
    CU_ASSERT_TRUE(memcmp(b, text, bl) == 0);
    char want[64];
    snprintf(want, sizeof want, "kept %zu decoded bytes", bl);
    CU_ASSERT_PTR_NOT_NULL(strstr(crawl_http_body_error(m), want));
    CU_ASSERT_PTR_NOT_NULL(strstr(crawl_http_body_error(m), "ends early"));
    crawl_http_free(m);
    /* only the last byte (of the checksum) missing */
    m = coded("zstd", z, zl - 1, 0);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_ETRUNCATED);
    CU_ASSERT_TRUE(bl <= tl && memcmp(b, text, bl) == 0);
    crawl_http_free(m);
    /* a body that decodes to exactly the cap is whole, one byte less is too large */
    m = coded("zstd", z, zl, tl);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_OK);
    CU_ASSERT_TRUE(bl == tl && memcmp(b, text, tl) == 0);
    crawl_http_free(m);
    m = coded("zstd", z, zl, tl - 1);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_ETOOLARGE);
    ASSERT_EQ(bl, tl - 1);
    crawl_http_free(m);
    /* empty body with Content-Encoding: zstd */
    m = coded("zstd", "", 0, 0);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_ETRUNCATED);
    ASSERT_EQ(bl, 0);
    crawl_http_free(m);
    free(z);
    free(text);
}

static void test_httpblock_zstd_bomb_capped(void)
{
    /* 50 MB of zeros zstd-compress to a few KB; a 1 MB cap stops the decoder there */
    size_t big = 50u * 1024 * 1024, zl;
    char *zeros = calloc(1, big);
    CU_ASSERT_PTR_NOT_NULL_FATAL(zeros);
    char *z = zstd_make(zeros, big, 3, 0, &zl);
    free(zeros);
    CU_ASSERT_TRUE(zl < 64 * 1024);
    struct crawl_http_msg *m = coded("zstd", z, zl, 1024 * 1024);
    CU_ASSERT_PTR_NOT_NULL_FATAL(m);
    const char *b;
    size_t bl;
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_ETOOLARGE);
    ASSERT_EQ(bl, 1024 * 1024);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(crawl_http_body_error(m), "zstd body decodes to more than 1048576 bytes"));
    crawl_http_free(m);
    free(z);
    /* a frame that asks for a 16 MB window (over RFC 9659's 8 MB) is refused, not decoded */
    size_t wl = 9u * 1024 * 1024, tl;
    char *text = numbered_page(wl / 40, &tl);
    z = zstd_make(text, tl, 1, 24, &zl);
    m = coded("zstd", z, zl, 0);
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    ASSERT_EQ(crawl_http_body_code(m), CRAWL_EDECODE);
    CU_ASSERT_PTR_NOT_NULL(strstr(crawl_http_body_error(m), "bad zstd content coding"));
    crawl_http_free(m);
    free(z);
    free(text);
}

/* ---- WARCs written by wget against tests/httpd ---- */

static const char PAGE_A[] =
    "<html><head><title>Alpha</title></head><body><h1>Alpha page</h1>"
    "<p>The quick brown fox jumps over the lazy dog near the river bank in the morning.</p>"
    "<p>Archivists keep web pages in WARC files, one record for each request and response.</p>"
    "</body></html>\n";
static const char PAGE_INDEX[] =
    "<html><body><a href=\"/a.html\">a</a> <a href=\"/copy.html\">copy</a> "
    "<a href=\"/gz.html\">gz</a> <a href=\"/chunked.html\">chunked</a> "
    "<img src=\"/img.png\"></body></html>\n";
static const char PNG[] = "\x89PNG\r\n\x1a\n\0\0\0\rIHDR fake image bytes";

static const struct test_route wget_routes[] = {
    {"/",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = PAGE_INDEX,
      .body_len = sizeof PAGE_INDEX - 1}},
    {"/a.html",
     0,
     {.status = 200,
      .content_type = "text/html; charset=utf-8",
      .body = PAGE_A,
      .body_len = sizeof PAGE_A - 1}},
    {"/copy.html",
     0,
     {.status = 200,
      .content_type = "text/html; charset=utf-8",
      .body = PAGE_A,
      .body_len = sizeof PAGE_A - 1}},
    {"/gz.html",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = PAGE_A,
      .body_len = sizeof PAGE_A - 1,
      .gzip = 1}},
    {"/chunked.html",
     0,
     {.status = 200,
      .content_type = "text/html",
      .body = PAGE_A,
      .body_len = sizeof PAGE_A - 1,
      .chunked = 1}},
    {"/img.png",
     0,
     {.status = 200, .content_type = "image/png", .body = PNG, .body_len = sizeof PNG - 1}},
};

static char wget_dir[256];

/* Runs wget -r against a fresh server; writes DIR/site.warc.gz and DIR/plain.warc. */
static int make_wget_warcs(void)
{
    if (wget_dir[0])
        return 0;
    snprintf(wget_dir, sizeof wget_dir, "/tmp/simcrawl-test-warc-XXXXXX");
    if (!mkdtemp(wget_dir))
        return -1;
    struct test_httpd *h =
        test_httpd_start(wget_routes, sizeof wget_routes / sizeof wget_routes[0], NULL, NULL);
    if (!h)
        return -1;
    char cmd[1024];
    int rc = 0;
    for (int plain = 0; plain < 2 && rc == 0; plain++) {
        snprintf(cmd, sizeof cmd,
                 "cd %s && wget -q -r -l 2 -e robots=off --no-verbose --timeout=10 --tries=1 "
                 "-P files%d %s --warc-file=%s http://127.0.0.1:%u/ >/dev/null 2>&1",
                 wget_dir, plain, plain ? "--no-warc-compression" : "", plain ? "plain" : "site",
                 test_httpd_port(h));
        rc = system(cmd);
    }
    test_httpd_stop(h);
    return rc == 0 || WEXITSTATUS(rc) == 8 ? 0 : -1; /* 8: a server error response (none here) */
}

static const struct rec_info *find_response(const struct rec_info *ri, int n, const char *suffix)
{
    for (int i = 0; i < n; i++) {
        size_t ul = strlen(ri[i].uri), sl = strlen(suffix);
        if (strcmp(ri[i].type, "response") == 0 && ul >= sl &&
            strcmp(ri[i].uri + ul - sl, suffix) == 0)
            return &ri[i];
    }
    return NULL;
}

static void test_warc_wget_read_back(void)
{
    ASSERT_EQ_FATAL(make_wget_warcs(), 0);
    for (int plain = 0; plain < 2; plain++) {
        char path[512];
        snprintf(path, sizeof path, "%s/%s", wget_dir, plain ? "plain.warc" : "site.warc.gz");
        struct errs e = {0};
        struct rec_info ri[64];
        int n = read_path(path, &e, ri, 64);
        ASSERT_EQ(e.n, 0);
        CU_ASSERT_TRUE_FATAL(n >= 13); /* warcinfo, 6 x (request, response), metadata... */
        CU_ASSERT_STRING_EQUAL(ri[0].type, "warcinfo");
        int responses = 0;
        for (int i = 0; i < n && i < 64; i++) {
            ASSERT_EQ(ri[i].block_rc, CRAWL_OK);
            /* the block we hand out is byte-exact: wget's own digest verifies */
            if (ri[i].block_digest[0])
                CU_ASSERT_STRING_EQUAL(ri[i].block_sha1, ri[i].block_digest);
            if (strcmp(ri[i].type, "response") == 0)
                responses++;
        }
        ASSERT_EQ(responses, 6);
        CU_ASSERT_PTR_NOT_NULL(find_response(ri, n, "/chunked.html"));
    }
}

/* Reads the block of the response for suffix out of path and parses it. */
static struct crawl_http_msg *wget_response(const char *path, const char *suffix, char *pdigest)
{
    struct crawl_warc_reader *r;
    if (crawl_warc_reader_open(path, NULL, &r) != CRAWL_OK)
        return NULL;
    const struct crawl_warc_record *rec;
    struct crawl_http_msg *m = NULL;
    while (!m && crawl_warc_next(r, &rec) == CRAWL_OK) {
        size_t ul = strlen(rec->target_uri), sl = strlen(suffix);
        if (strcmp(rec->type, "response") != 0 || ul < sl ||
            strcmp(rec->target_uri + ul - sl, suffix) != 0)
            continue;
        snprintf(pdigest, 64, "%s", rec->payload_digest);
        const char *d;
        size_t l;
        if (crawl_warc_block(r, &d, &l) == CRAWL_OK && crawl_http_parse(d, l, NULL, &m) != CRAWL_OK)
            m = NULL;
    }
    crawl_warc_reader_free(r);
    return m;
}

static void test_warc_wget_http_blocks(void)
{
    ASSERT_EQ_FATAL(make_wget_warcs(), 0);
    char path[512], wd[64];
    snprintf(path, sizeof path, "%s/site.warc.gz", wget_dir);
    const char *names[] = {"/a.html", "/gz.html", "/chunked.html", "/copy.html"};
    for (int i = 0; i < 4; i++) {
        struct crawl_http_msg *m = wget_response(path, names[i], wd);
        CU_ASSERT_PTR_NOT_NULL_FATAL(m);
        ASSERT_EQ(crawl_http_status(m), 200);
        CU_ASSERT_STRING_EQUAL(crawl_http_mime(m), "text/html");
        const char *b;
        size_t bl;
        ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
        ASSERT_EQ(crawl_http_body_code(m), CRAWL_OK);
        ASSERT_EQ(bl, sizeof PAGE_A - 1);
        CU_ASSERT_TRUE(bl == sizeof PAGE_A - 1 && memcmp(b, PAGE_A, bl) == 0);
        size_t pl;
        const char *p = crawl_http_payload(m, &pl);
        char mine[CRAWL_DIGEST_SIZE];
        ASSERT_EQ(crawl_digest_sha1(p, pl, mine), CRAWL_OK);
        if (i == 2)
            CU_ASSERT_PTR_NOT_NULL(crawl_http_header(m, "Transfer-Encoding"));
        if (i == 2) {
            /* chunked: the payload is the entity without the transfer coding. wget 1.21
             * digests the chunked bytes instead, the mistake ISO 28500 section 5.9 warns of */
            char entity[CRAWL_DIGEST_SIZE];
            ASSERT_EQ(crawl_digest_sha1(PAGE_A, sizeof PAGE_A - 1, entity), CRAWL_OK);
            CU_ASSERT_STRING_EQUAL(mine, entity);
        } else {
            CU_ASSERT_STRING_EQUAL(mine, wd); /* same as wget's where there is no chunking */
        }
        if (i == 1) {
            CU_ASSERT_STRING_EQUAL(crawl_http_header(m, "Content-Encoding"), "gzip");
            CU_ASSERT_NOT_EQUAL(pl, bl);
        }
        crawl_http_free(m);
    }
}

static void test_warc_wget_damaged_copies(void)
{
    ASSERT_EQ_FATAL(make_wget_warcs(), 0);
    char path[512], out[600];
    snprintf(path, sizeof path, "%s/site.warc.gz", wget_dir);
    size_t len;
    char *orig = test_slurp(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
    struct errs e = {0};
    struct rec_info ri[64];
    int n = read_path(path, &e, ri, 64);
    CU_ASSERT_TRUE_FATAL(n >= 13 && n <= 64);

    /* truncated in the middle of the record at 60% of the file (never on a record's
     * boundary, where there would be nothing to report: wget's records differ in size
     * from run to run): the records before the cut are whole, the cut is reported */
    snprintf(out, sizeof out, "%s/truncated.warc.gz", wget_dir);
    int at60 = 0;
    while (at60 + 1 < n && ri[at60 + 1].offset <= len * 6 / 10)
        at60++;
    uint64_t rec_end = at60 + 1 < n ? ri[at60 + 1].offset : len;
    size_t cut = (size_t)(ri[at60].offset + (rec_end - ri[at60].offset) / 2);
    ASSERT_EQ_FATAL(spit(out, orig, cut), 0);
    memset(&e, 0, sizeof e);
    struct rec_info rt[64];
    int nt = read_path(out, &e, rt, 64);
    int whole = 0;
    while (whole < n && ri[whole + 1].offset <= cut)
        whole++;
    CU_ASSERT_TRUE(nt >= whole);
    CU_ASSERT_TRUE(e.n >= 1);
    for (int i = 0; i < whole; i++)
        CU_ASSERT_STRING_EQUAL(rt[i].block_sha1, ri[i].block_sha1);

    /* gzip bytes flipped in the 4th member: reported at its offset; the rest is read */
    char *bad = malloc(len);
    memcpy(bad, orig, len);
    uint64_t at = ri[3].offset;
    for (uint64_t i = at + 20; i < at + 40 && i < ri[4].offset; i++)
        bad[i] ^= 0xa5;
    snprintf(out, sizeof out, "%s/flipped.warc.gz", wget_dir);
    ASSERT_EQ_FATAL(spit(out, bad, len), 0);
    memset(&e, 0, sizeof e);
    int nf = read_path(out, &e, rt, 64);
    CU_ASSERT_TRUE(e.n >= 1);
    ASSERT_EQ(e.offset[0], at);
    CU_ASSERT_TRUE(nf >= n - 1);
    CU_ASSERT_STRING_EQUAL(rt[nf - 1].block_sha1, ri[n - 1].block_sha1);

    /* garbage between members 5 and 6 */
    char *gb = malloc(len + 64);
    size_t g = (size_t)ri[5].offset;
    memcpy(gb, orig, g);
    memcpy(gb + g, "<<this is not gzip>>", 20);
    memcpy(gb + g + 20, orig + g, len - g);
    snprintf(out, sizeof out, "%s/garbage.warc.gz", wget_dir);
    ASSERT_EQ_FATAL(spit(out, gb, len + 20), 0);
    memset(&e, 0, sizeof e);
    ASSERT_EQ(read_path(out, &e, rt, 64), n);
    ASSERT_EQ(e.n, 1);
    ASSERT_EQ(e.offset[0], g);
    free(gb);
    free(bad);
    free(orig);

    /* plain WARC with one Content-Length made too large by 3 */
    snprintf(path, sizeof path, "%s/plain.warc", wget_dir);
    orig = test_slurp(path, &len);
    CU_ASSERT_PTR_NOT_NULL_FATAL(orig);
    memset(&e, 0, sizeof e);
    int np = read_path(path, &e, ri, 64);
    ASSERT_EQ(e.n, 0);
    char *cl = strstr(orig + ri[4].offset, "Content-Length: ");
    CU_ASSERT_PTR_NOT_NULL_FATAL(cl);
    unsigned long v = strtoul(cl + 16, NULL, 10);
    char *eol = strstr(cl, "\r\n");
    char repl[64];
    int rl = snprintf(repl, sizeof repl, "Content-Length: %lu", v + 3);
    size_t pre = (size_t)(cl - orig), post = (size_t)(eol - orig);
    char *wrong = malloc(len + 64);
    memcpy(wrong, orig, pre);
    memcpy(wrong + pre, repl, (size_t)rl);
    memcpy(wrong + pre + (size_t)rl, orig + post, len - post);
    size_t wl = pre + (size_t)rl + len - post;
    memset(&e, 0, sizeof e);
    int nw = read_mem(wrong, wl, &e, rt, 64);
    ASSERT_EQ(nw, np);
    ASSERT_EQ(e.n, 1);
    ASSERT_EQ(e.offset[0], ri[4].offset);
    CU_ASSERT_PTR_NOT_NULL(strstr(e.what[0], "Content-Length"));
    CU_ASSERT_NOT_EQUAL(rt[4].block_rc, CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(rt[5].block_sha1, ri[5].block_sha1);
    free(wrong);
    free(orig);
}

/* ---- the writer ---- */

static const char CHUNKED_HEAD[] = "HTTP/1.1 200 OK\r\nContent-Type: text/html\r\n"
                                   "Content-Encoding: gzip\r\nTransfer-Encoding: chunked\r\n\r\n";

static int is_uuid_id(const char *id)
{
    /* <urn:uuid:xxxxxxxx-xxxx-4xxx-[89ab]xxx-xxxxxxxxxxxx> */
    if (strlen(id) != 47 || strncmp(id, "<urn:uuid:", 10) != 0 || id[46] != '>')
        return 0;
    for (int i = 10; i < 46; i++) {
        int dash = i == 18 || i == 23 || i == 28 || i == 33;
        if (dash ? id[i] != '-' : !strchr("0123456789abcdef", id[i]))
            return 0;
    }
    return id[24] == '4' && strchr("89ab", id[29]) != NULL;
}

static void test_warc_writer_round_trip(void)
{
    char dir[] = "/tmp/simcrawl-test-warcw-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[256], tmp[300];
    snprintf(path, sizeof path, "%s/out.warc.gz", dir);
    snprintf(tmp, sizeof tmp, "%s.open", path);
    struct crawl_warc_writer *w;
    struct crawl_warc_writer_opts o = {.software = "simcrawl-test/1"};
    ASSERT_EQ_FATAL(crawl_warc_writer_open(path, &o, &w), CRAWL_OK);
    struct stat st;
    ASSERT_EQ(stat(tmp, &st), 0); /* written under the .open name ... */
    CU_ASSERT_NOT_EQUAL(stat(path, &st), 0);

    /* a gzip-encoded entity sent chunked: the payload digest is over the gzip bytes */
    char *gz = NULL;
    size_t gl = 0;
    gz_append(&gz, &gl, PAGE_A, sizeof PAGE_A - 1);
    char *chunked = malloc(gl + 64);
    size_t half = gl / 2;
    int cl = sprintf(chunked, "%zx\r\n", half);
    memcpy(chunked + cl, gz, half);
    cl += (int)half;
    cl += sprintf(chunked + cl, "\r\n%zx\r\n", gl - half);
    memcpy(chunked + cl, gz + half, gl - half);
    cl += (int)(gl - half);
    cl += sprintf(chunked + cl, "\r\n0\r\n\r\n");
    const char req[] = "GET /a.html HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
    struct crawl_warc_exchange x = {.uri = "http://127.0.0.1/a.html",
                                    .ip = "127.0.0.1",
                                    .date = "2026-11-21T20:00:00Z",
                                    .request = req,
                                    .request_len = sizeof req - 1,
                                    .head = CHUNKED_HEAD,
                                    .head_len = sizeof CHUNKED_HEAD - 1,
                                    .body = chunked,
                                    .body_len = (size_t)cl};
    char id[CRAWL_WARC_ID_SIZE], id2[CRAWL_WARC_ID_SIZE];
    ASSERT_EQ_FATAL(crawl_warc_write_response(w, &x, id), CRAWL_OK);
    CU_ASSERT_TRUE(is_uuid_id(id));
    char pdig[CRAWL_DIGEST_SIZE];
    ASSERT_EQ(crawl_digest_sha1(gz, gl, pdig), CRAWL_OK);
    struct crawl_warc_revisit v = {.uri = "http://127.0.0.1/copy.html",
                                   .head = CHUNKED_HEAD,
                                   .head_len = sizeof CHUNKED_HEAD - 1,
                                   .payload_digest = pdig,
                                   .refers_to = id,
                                   .refers_to_uri = x.uri,
                                   .refers_to_date = x.date};
    ASSERT_EQ_FATAL(crawl_warc_write_revisit(w, &v, id2), CRAWL_OK);
    CU_ASSERT_STRING_NOT_EQUAL(id, id2);
    /* a caller that has the payload digest already (the crawler) hands it in */
    struct crawl_warc_exchange given = x;
    given.request = NULL;
    given.request_len = 0;
    given.payload_digest = pdig;
    ASSERT_EQ_FATAL(crawl_warc_write_response(w, &given, NULL), CRAWL_OK);
    struct crawl_warc_exchange bad = x;
    bad.uri = "http://x/\r\nWARC-Type: evil";
    ASSERT_EQ(crawl_warc_write_response(w, &bad, NULL), CRAWL_EINVAL);
    bad = x;
    bad.payload_digest = "sha1:X\r\nWARC-Type: evil";
    ASSERT_EQ(crawl_warc_write_response(w, &bad, NULL), CRAWL_EINVAL);
    ASSERT_EQ(crawl_warc_writer_close(w), CRAWL_OK);
    ASSERT_EQ(stat(path, &st), 0); /* ... and renamed when closed */
    CU_ASSERT_NOT_EQUAL(stat(tmp, &st), 0);

    struct errs e = {0};
    struct crawl_warc_opts ro = {0, on_error, &e};
    struct crawl_warc_reader *r;
    ASSERT_EQ_FATAL(crawl_warc_reader_open(path, &ro, &r), CRAWL_OK);
    const struct crawl_warc_record *rec;
    const char *d;
    size_t l;
    char dig[CRAWL_DIGEST_SIZE], req_id[64] = "";
    ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(rec->type, "warcinfo");
    CU_ASSERT_STRING_EQUAL(rec->version, "WARC/1.1");
    CU_ASSERT_STRING_EQUAL(crawl_warc_field(rec, "WARC-Filename"), "out.warc.gz");
    ASSERT_EQ(crawl_warc_block(r, &d, &l), CRAWL_OK);
    CU_ASSERT_PTR_NOT_NULL(strstr(d, "software: simcrawl-test/1\r\n"));
    char info_id[64];
    snprintf(info_id, sizeof info_id, "%s", rec->record_id);
    CU_ASSERT_TRUE(is_uuid_id(info_id));
    ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(rec->type, "request");
    snprintf(req_id, sizeof req_id, "%s", rec->record_id);
    CU_ASSERT_STRING_EQUAL(rec->concurrent_to, id);
    CU_ASSERT_STRING_EQUAL(rec->content_type, "application/http;msgtype=request");
    ASSERT_EQ(crawl_warc_block(r, &d, &l), CRAWL_OK);
    CU_ASSERT_TRUE(l == sizeof req - 1 && memcmp(d, req, l) == 0);
    ASSERT_EQ(crawl_digest_sha1(d, l, dig), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(dig, rec->block_digest);
    ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(rec->type, "response");
    CU_ASSERT_STRING_EQUAL(rec->record_id, id);
    CU_ASSERT_STRING_EQUAL(rec->concurrent_to, req_id);
    CU_ASSERT_STRING_EQUAL(crawl_warc_field(rec, "WARC-Warcinfo-ID"), info_id);
    CU_ASSERT_STRING_EQUAL(rec->target_uri, x.uri);
    CU_ASSERT_STRING_EQUAL(rec->ip_address, "127.0.0.1");
    CU_ASSERT_STRING_EQUAL(rec->date, x.date);
    ASSERT_EQ(crawl_warc_block(r, &d, &l), CRAWL_OK);
    /* byte-exact: head then the body as given, chunking and all */
    ASSERT_EQ(l, sizeof CHUNKED_HEAD - 1 + (size_t)cl);
    CU_ASSERT_TRUE(memcmp(d, CHUNKED_HEAD, sizeof CHUNKED_HEAD - 1) == 0);
    CU_ASSERT_TRUE(memcmp(d + sizeof CHUNKED_HEAD - 1, chunked, (size_t)cl) == 0);
    ASSERT_EQ(crawl_digest_sha1(d, l, dig), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(dig, rec->block_digest);
    /* the payload digest: chunking removed, gzip kept */
    CU_ASSERT_STRING_EQUAL(rec->payload_digest, pdig);
    struct crawl_http_msg *m;
    ASSERT_EQ_FATAL(crawl_http_parse(d, l, NULL, &m), CRAWL_OK);
    size_t pl;
    const char *p = crawl_http_payload(m, &pl);
    ASSERT_EQ(crawl_digest_sha1(p, pl, dig), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(dig, rec->payload_digest);
    const char *b;
    size_t bl;
    ASSERT_EQ(crawl_http_body(m, &b, &bl), CRAWL_OK);
    CU_ASSERT_TRUE(bl == sizeof PAGE_A - 1 && memcmp(b, PAGE_A, bl) == 0);
    crawl_http_free(m);
    ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(rec->type, "revisit");
    CU_ASSERT_STRING_EQUAL(crawl_warc_field(rec, "WARC-Profile"),
                           "http://netpreserve.org/warc/1.1/revisit/identical-payload-digest");
    CU_ASSERT_STRING_EQUAL(rec->refers_to, id);
    CU_ASSERT_STRING_EQUAL(crawl_warc_field(rec, "WARC-Refers-To-Target-URI"), x.uri);
    CU_ASSERT_STRING_EQUAL(crawl_warc_field(rec, "WARC-Refers-To-Date"), x.date);
    CU_ASSERT_STRING_EQUAL(rec->payload_digest, pdig);
    CU_ASSERT_PTR_NULL(crawl_warc_field(rec, "WARC-Truncated"));
    ASSERT_EQ(crawl_warc_block(r, &d, &l), CRAWL_OK);
    ASSERT_EQ(l, sizeof CHUNKED_HEAD - 1); /* the HTTP head only */
    ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(rec->type, "response");
    CU_ASSERT_STRING_EQUAL(rec->payload_digest, pdig);
    ASSERT_EQ(crawl_warc_block(r, &d, &l), CRAWL_OK);
    ASSERT_EQ(crawl_digest_sha1(d, l, dig), CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(dig, rec->block_digest);
    ASSERT_EQ(crawl_warc_next(r, &rec), CRAWL_EOF);
    ASSERT_EQ(crawl_warc_reader_gzip(r), 1); /* one member per record */
    ASSERT_EQ(e.n, 0);
    crawl_warc_reader_free(r);
    unlink(path);
    rmdir(dir);
    free(chunked);
    free(gz);
}

/* Every gzip level writes records that zlib reads back byte for byte, one member each:
 * levels 1-3 go through ISA-L, higher ones through libdeflate (warc_write.c); bodies
 * empty, text-like (compressible), random (incompressible, stored blocks), and at levels
 * 1 and 6 one over the 4 MiB gather buffer a compressor keeps (a one-off buffer) */
static void test_warc_writer_levels_read_back(void)
{
    enum { TEXT = 300 * 1024, RANDOM = 200 * 1024, BIG = 5 * 1024 * 1024 };
    char *text = malloc(TEXT), *rnd = malloc(RANDOM), *big = malloc(BIG);
    CU_ASSERT_PTR_NOT_NULL_FATAL(text);
    CU_ASSERT_PTR_NOT_NULL_FATAL(rnd);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    uint64_t x = 88172645463325252ull;
    for (size_t i = 0; i < TEXT;) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        i += (size_t)snprintf(text + i, TEXT - i, "<p class=\"w%u\">word %u and more</p>\n",
                              (unsigned)(x % 50), (unsigned)(x % 1000));
    }
    for (size_t i = 0; i < RANDOM; i++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        rnd[i] = (char)(x >> 24);
    }
    for (size_t i = 0; i < BIG; i++)
        big[i] = text[i % (TEXT - 1)] ^ (char)((i >> 16) & 7);
    const char *bodies[4] = {"", text, rnd, big};
    size_t lens[4] = {0, strlen(text), RANDOM, BIG};
    static const int levels[] = {1, 2, 3, 4, 6, 9};
    for (size_t li = 0; li < sizeof levels / sizeof levels[0]; li++) {
        char dir[] = "/tmp/simcrawl-test-warcl-XXXXXX";
        CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
        char path[256];
        snprintf(path, sizeof path, "%s/l.warc.gz", dir);
        struct crawl_warc_writer *w;
        struct crawl_warc_writer_opts o = {.gzip_level = levels[li]};
        ASSERT_EQ_FATAL(crawl_warc_writer_open(path, &o, &w), CRAWL_OK);
        int nb = levels[li] == 1 || levels[li] == 6 ? 4 : 3;
        for (int b = 0; b < nb; b++) {
            struct crawl_warc_exchange ex = {.uri = "http://127.0.0.1/l.html",
                                             .head = "HTTP/1.1 200 OK\r\n\r\n",
                                             .head_len = 19,
                                             .body = bodies[b],
                                             .body_len = lens[b]};
            ASSERT_EQ(crawl_warc_write_response(w, &ex, NULL), CRAWL_OK);
        }
        ASSERT_EQ(crawl_warc_writer_close(w), CRAWL_OK);
        struct stat st;
        ASSERT_EQ(stat(path, &st), 0);
        /* compressed: well under the bodies' size (the random one cannot shrink) */
        CU_ASSERT((size_t)st.st_size < lens[1] / 3 + lens[2] + (nb > 3 ? lens[3] / 2 : 0) + 4096);
        struct errs e = {0};
        struct crawl_warc_opts ro = {0, on_error, &e};
        struct crawl_warc_reader *r;
        ASSERT_EQ_FATAL(crawl_warc_reader_open(path, &ro, &r), CRAWL_OK);
        const struct crawl_warc_record *rec;
        ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK);
        CU_ASSERT_STRING_EQUAL(rec->type, "warcinfo");
        for (int b = 0; b < nb; b++) {
            const char *d;
            size_t l;
            ASSERT_EQ_FATAL(crawl_warc_next(r, &rec), CRAWL_OK); /* no request given */
            CU_ASSERT_STRING_EQUAL(rec->type, "response");
            ASSERT_EQ_FATAL(crawl_warc_block(r, &d, &l), CRAWL_OK);
            ASSERT_EQ(l, 19 + lens[b]);
            CU_ASSERT_TRUE(l == 19 + lens[b] && memcmp(d + 19, bodies[b], lens[b]) == 0);
            char dig[CRAWL_DIGEST_SIZE];
            ASSERT_EQ(crawl_digest_sha1(d, l, dig), CRAWL_OK);
            CU_ASSERT_STRING_EQUAL(dig, rec->block_digest);
        }
        ASSERT_EQ(crawl_warc_next(r, &rec), CRAWL_EOF);
        ASSERT_EQ(crawl_warc_reader_gzip(r), 1); /* one member per record */
        ASSERT_EQ(e.n, 0);
        crawl_warc_reader_free(r);
        unlink(path);
        rmdir(dir);
    }
    free(text);
    free(rnd);
    free(big);
}

static void test_warc_writer_rotation_and_plain(void)
{
    char dir[] = "/tmp/simcrawl-test-warcr-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    for (int plain = 0; plain < 2; plain++) {
        char path[256];
        snprintf(path, sizeof path, "%s/crawl.%s", dir, plain ? "warc" : "warc.gz");
        struct crawl_warc_writer_opts o = {.rotate_size = 2000};
        struct crawl_warc_writer *w;
        ASSERT_EQ_FATAL(crawl_warc_writer_open(path, &o, &w), CRAWL_OK);
        const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n";
        char body[1500];
        for (int i = 0; i < 6; i++) {
            uint32_t x32 = 2463534242u + (uint32_t)i; /* xorshift: text gzip cannot shrink much */
            for (size_t k = 0; k < sizeof body; k++) {
                x32 ^= x32 << 13;
                x32 ^= x32 >> 17;
                x32 ^= x32 << 5;
                body[k] = (char)('!' + x32 % 90);
            }
            char uri[64];
            snprintf(uri, sizeof uri, "http://r.example/%d", i);
            struct crawl_warc_exchange x = {.uri = uri,
                                            .head = head,
                                            .head_len = sizeof head - 1,
                                            .body = body,
                                            .body_len = sizeof body};
            ASSERT_EQ(crawl_warc_write_response(w, &x, NULL), CRAWL_OK);
        }
        ASSERT_EQ(crawl_warc_writer_close(w), CRAWL_OK);
        /* every file starts with warcinfo; all six responses are there, in order */
        int seen = 0, files = 0;
        for (unsigned seq = 0; seq < 10; seq++) {
            char name[300];
            if (seq == 0)
                snprintf(name, sizeof name, "%s", path);
            else
                snprintf(name, sizeof name, "%s/crawl-%05u.%s", dir, seq,
                         plain ? "warc" : "warc.gz");
            struct errs e = {0};
            struct rec_info ri[16];
            int n = read_path(name, &e, ri, 16);
            if (n < 0)
                break;
            files++;
            ASSERT_EQ(e.n, 0);
            CU_ASSERT_TRUE(n >= 2);
            CU_ASSERT_STRING_EQUAL(ri[0].type, "warcinfo");
            for (int i = 1; i < n && i < 16; i++) {
                char want[64];
                snprintf(want, sizeof want, "http://r.example/%d", seen);
                CU_ASSERT_STRING_EQUAL(ri[i].uri, want);
                CU_ASSERT_STRING_EQUAL(ri[i].block_sha1, ri[i].block_digest);
                seen++;
            }
            unlink(name);
        }
        ASSERT_EQ(seen, 6);
        CU_ASSERT_TRUE(files >= 3);
    }
    rmdir(dir);
}

/* crawl --state's WARC (issue 15): flush gives the end of the last whole record; resume
 * from it cuts the file back to it (renamed back from its final name when a rotation or a
 * close renamed it), removes the files started after it, and goes on writing there. */
static void write_numbered(struct crawl_warc_writer *w, int i)
{
    const char head[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n";
    char body[1500];
    uint32_t x32 = 2463534242u + (uint32_t)i;
    for (size_t k = 0; k < sizeof body; k++) {
        x32 ^= x32 << 13;
        x32 ^= x32 >> 17;
        x32 ^= x32 << 5;
        body[k] = (char)('!' + x32 % 90);
    }
    char uri[64];
    snprintf(uri, sizeof uri, "http://r.example/%d", i);
    struct crawl_warc_exchange x = {.uri = uri, .head = head, .head_len = sizeof head - 1,
                                    .body = body, .body_len = sizeof body};
    ASSERT_EQ(crawl_warc_write_response(w, &x, NULL), CRAWL_OK);
}

static void test_warc_writer_resume(void)
{
    char dir[] = "/tmp/simcrawl-test-warcs-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    char path[256], name[300];
    snprintf(path, sizeof path, "%s/crawl.warc.gz", dir);
    struct crawl_warc_writer_opts o = {.rotate_size = 1000}; /* a file per record */
    struct crawl_warc_writer *w;
    ASSERT_EQ_FATAL(crawl_warc_writer_open(path, &o, &w), CRAWL_OK);
    write_numbered(w, 0);
    write_numbered(w, 1); /* rotates: file 1 */
    struct crawl_warc_position pos;
    ASSERT_EQ_FATAL(crawl_warc_writer_flush(w, 0, &pos), CRAWL_OK);
    ASSERT_EQ(pos.seq, 1);
    ASSERT_EQ(pos.records, 2);
    for (int i = 2; i < 5; i++) /* uncommitted: files 2, 3 and 4 */
        write_numbered(w, i);
    ASSERT_EQ(crawl_warc_writer_close(w), CRAWL_OK);
    snprintf(name, sizeof name, "%s/crawl-00003.warc.gz", dir);
    ASSERT_EQ(access(name, F_OK), 0);

    ASSERT_EQ_FATAL(crawl_warc_writer_resume(path, &o, &pos, &w), CRAWL_OK);
    ASSERT_EQ(access(name, F_OK), -1); /* started after the commit: removed */
    write_numbered(w, 5);
    ASSERT_EQ(crawl_warc_writer_close(w), CRAWL_OK);
    /* file 0: warcinfo, 0; file 1: warcinfo, 1 (full: 5 rotated on to a new file 2);
     * file 2: warcinfo, 5; no file 3 or 4 */
    static const char *const want[3] = {"http://r.example/0", "http://r.example/1",
                                        "http://r.example/5"};
    for (unsigned seq = 0; seq < 5; seq++) {
        if (seq == 0)
            snprintf(name, sizeof name, "%s", path);
        else
            snprintf(name, sizeof name, "%s/crawl-%05u.warc.gz", dir, seq);
        struct errs e = {0};
        struct rec_info ri[16];
        int n = read_path(name, &e, ri, 16);
        if (seq >= 3) {
            CU_ASSERT_TRUE(n < 0);
            continue;
        }
        ASSERT_EQ(e.n, 0);
        ASSERT_EQ_FATAL(n, 2);
        CU_ASSERT_STRING_EQUAL(ri[0].type, "warcinfo");
        CU_ASSERT_STRING_EQUAL(ri[1].uri, want[seq]);
        unlink(name);
    }
    snprintf(name, sizeof name, "%s/crawl-00001.warc.gz.open", dir);
    ASSERT_EQ(access(name, F_OK), -1);
    /* a position past the file's end is refused, not padded */
    pos.offset += 1000000;
    snprintf(name, sizeof name, "%s/x.warc.gz", dir);
    ASSERT_EQ_FATAL(crawl_warc_writer_open(name, &o, &w), CRAWL_OK);
    ASSERT_EQ(crawl_warc_writer_close(w), CRAWL_OK);
    pos.seq = 0;
    ASSERT_EQ(crawl_warc_writer_resume(name, &o, &pos, &w), CRAWL_EIO);
    unlink(name);
    snprintf(name, sizeof name, "%s/x.warc.gz.open", dir);
    unlink(name);
    rmdir(dir);
}

/* ---- two-step writing from threads (crawl_warc_prepare_*, crawl_warc_prepared_append) ---- */

#define PREP_N 24 /* records per batch: two threads prepare half each */

struct prep_item {
    char uri[64];
    char body[1500];
    char pdig[CRAWL_DIGEST_SIZE]; /* sha1 of body: the payload digest it must get */
    int revisit;
    struct crawl_warc_prepared *p;
    enum crawl_code rc;
};

struct prep_job {
    struct crawl_warc_writer *w;
    struct prep_item *items;
    int first, step, n;
};

static const char PREP_HEAD[] = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\n";
static const char PREP_REQ[] = "GET / HTTP/1.1\r\nHost: p.example\r\n\r\n";

static void *prep_thread(void *arg)
{
    struct prep_job *j = arg;
    for (int i = j->first; i < j->n; i += j->step) {
        struct prep_item *it = &j->items[i];
        if (it->revisit) {
            struct crawl_warc_revisit v = {.uri = it->uri,
                                           .head = PREP_HEAD,
                                           .head_len = sizeof PREP_HEAD - 1,
                                           .payload_digest = it->pdig,
                                           .refers_to = "<urn:uuid:00000000-0000-4000-8000-000000000000>",
                                           .refers_to_uri = "http://p.example/orig",
                                           .refers_to_date = "2026-11-21T20:00:00Z"};
            it->rc = crawl_warc_prepare_revisit(j->w, &v, &it->p);
        } else {
            struct crawl_warc_exchange x = {.uri = it->uri,
                                            .ip = "127.0.0.1",
                                            .request = i % 4 ? PREP_REQ : NULL,
                                            .request_len = i % 4 ? sizeof PREP_REQ - 1 : 0,
                                            .head = PREP_HEAD,
                                            .head_len = sizeof PREP_HEAD - 1,
                                            .body = it->body,
                                            .body_len = sizeof it->body};
            it->rc = crawl_warc_prepare_response(j->w, &x, &it->p);
        }
    }
    return NULL;
}

static void prep_fill(struct prep_item *items, int batch)
{
    for (int i = 0; i < PREP_N; i++) {
        struct prep_item *it = &items[i];
        memset(it, 0, sizeof *it);
        snprintf(it->uri, sizeof it->uri, "http://p.example/%d/%d", batch, i);
        uint32_t x32 = 2463534242u + (uint32_t)(batch * PREP_N + i);
        for (size_t k = 0; k < sizeof it->body; k++) {
            x32 ^= x32 << 13;
            x32 ^= x32 >> 17;
            x32 ^= x32 << 5;
            it->body[k] = (char)('!' + x32 % 90);
        }
        it->revisit = i % 5 == 4;
        ASSERT_EQ(crawl_digest_sha1(it->body, sizeof it->body, it->pdig), CRAWL_OK);
    }
}

static void prep_start(pthread_t th[2], struct prep_job jobs[2], struct crawl_warc_writer *w,
                       struct prep_item *items)
{
    for (int t = 0; t < 2; t++) {
        jobs[t] = (struct prep_job){w, items, t, 2, PREP_N};
        ASSERT_EQ_FATAL(pthread_create(&th[t], NULL, prep_thread, &jobs[t]), 0);
    }
}

/* Appends a batch (interleaving the two threads' records); ids[] gets the record ids. */
static void prep_append(struct crawl_warc_writer *w, struct prep_item *items,
                        char ids[][CRAWL_WARC_ID_SIZE])
{
    for (int i = 0; i < PREP_N; i++) {
        ASSERT_EQ_FATAL(items[i].rc, CRAWL_OK);
        ASSERT_EQ(crawl_warc_prepared_append(w, items[i].p, ids[i]), CRAWL_OK);
        crawl_warc_prepared_free(items[i].p);
        items[i].p = NULL;
    }
}

/* Reads one file back: every record's digests, its warcinfo id, request/response pairs;
 * marks the ids seen in found[]. Returns the records read, -1 when there is no file. */
static int prep_check_file(const char *name, char ids[][CRAWL_WARC_ID_SIZE],
                           struct prep_item *items, int *found)
{
    struct errs e = {0};
    struct crawl_warc_opts ro = {0, on_error, &e};
    struct crawl_warc_reader *r;
    if (crawl_warc_reader_open(name, &ro, &r) != CRAWL_OK)
        return -1;
    const struct crawl_warc_record *rec;
    char info_id[64] = "", pending_req[64] = "", pending_to[64] = "";
    int n = 0;
    while (crawl_warc_next(r, &rec) == CRAWL_OK) {
        const char *d;
        size_t l;
        char dig[CRAWL_DIGEST_SIZE];
        ASSERT_EQ_FATAL(crawl_warc_block(r, &d, &l), CRAWL_OK);
        if (n++ == 0) {
            CU_ASSERT_STRING_EQUAL(rec->type, "warcinfo");
            snprintf(info_id, sizeof info_id, "%s", rec->record_id);
            continue;
        }
        CU_ASSERT_STRING_EQUAL(crawl_warc_field(rec, "WARC-Warcinfo-ID"), info_id);
        ASSERT_EQ(crawl_digest_sha1(d, l, dig), CRAWL_OK);
        CU_ASSERT_STRING_EQUAL(dig, rec->block_digest);
        if (strcmp(rec->type, "request") == 0) {
            CU_ASSERT_TRUE(l == sizeof PREP_REQ - 1 && memcmp(d, PREP_REQ, l) == 0);
            snprintf(pending_req, sizeof pending_req, "%s", rec->record_id);
            snprintf(pending_to, sizeof pending_to, "%s", rec->concurrent_to);
            continue;
        }
        int which = -1;
        for (int i = 0; i < 2 * PREP_N; i++)
            if (strcmp(ids[i], rec->record_id) == 0)
                which = i;
        CU_ASSERT_FATAL(which >= 0);
        found[which]++;
        struct prep_item *it = &items[which];
        CU_ASSERT_STRING_EQUAL(rec->target_uri, it->uri);
        CU_ASSERT_STRING_EQUAL(rec->payload_digest, it->pdig);
        if (it->revisit) {
            CU_ASSERT_STRING_EQUAL(rec->type, "revisit");
            CU_ASSERT_TRUE(l == sizeof PREP_HEAD - 1 && memcmp(d, PREP_HEAD, l) == 0);
            CU_ASSERT_STRING_EQUAL(pending_req, "");
        } else {
            CU_ASSERT_STRING_EQUAL(rec->type, "response");
            ASSERT_EQ(l, sizeof PREP_HEAD - 1 + sizeof it->body);
            CU_ASSERT_TRUE(memcmp(d + sizeof PREP_HEAD - 1, it->body, sizeof it->body) == 0);
            if (which % PREP_N % 4) { /* with a request just before it, pointing at it */
                CU_ASSERT_STRING_EQUAL(pending_to, rec->record_id);
                CU_ASSERT_STRING_EQUAL(rec->concurrent_to, pending_req);
            } else {
                CU_ASSERT_STRING_EQUAL(pending_req, "");
            }
        }
        pending_req[0] = pending_to[0] = '\0';
    }
    CU_ASSERT_STRING_EQUAL(pending_req, "");
    ASSERT_EQ(e.n, 0);
    crawl_warc_reader_free(r);
    return n;
}

static void test_warc_writer_prepare_on_threads(void)
{
    char dir[] = "/tmp/simcrawl-test-warcp-XXXXXX";
    CU_ASSERT_PTR_NOT_NULL_FATAL(mkdtemp(dir));
    static struct prep_item items[2 * PREP_N];
    static char ids[2 * PREP_N][CRAWL_WARC_ID_SIZE];
    /* gzip and plain; no rotation, and rotation past every few records (so the file
     * changes between prepare and append) */
    for (int variant = 0; variant < 4; variant++) {
        int plain = variant & 1, rotate = variant >> 1;
        char path[256];
        snprintf(path, sizeof path, "%s/p.%s", dir, plain ? "warc" : "warc.gz");
        struct crawl_warc_writer_opts o = {.rotate_size = rotate ? 5000 : 0};
        struct crawl_warc_writer *w;
        ASSERT_EQ_FATAL(crawl_warc_writer_open(path, &o, &w), CRAWL_OK);
        memset(ids, 0, sizeof ids);
        prep_fill(items, 0);
        prep_fill(items + PREP_N, 1);
        pthread_t th[2];
        struct prep_job jobs[2];
        /* batch 0 prepared on two threads; then appended while batch 1 is prepared */
        prep_start(th, jobs, w, items);
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
        prep_start(th, jobs, w, items + PREP_N);
        prep_append(w, items, ids);
        for (int t = 0; t < 2; t++)
            pthread_join(th[t], NULL);
        prep_append(w, items + PREP_N, ids + PREP_N);
        /* misuse: a NULL prepared record */
        ASSERT_EQ(crawl_warc_prepared_append(w, NULL, NULL), CRAWL_EINVAL);
        ASSERT_EQ(crawl_warc_writer_close(w), CRAWL_OK);

        int found[2 * PREP_N] = {0}, files = 0;
        for (unsigned seq = 0; seq < 100; seq++) {
            char name[300];
            if (seq == 0)
                snprintf(name, sizeof name, "%s", path);
            else
                snprintf(name, sizeof name, "%s/p-%05u.%s", dir, seq, plain ? "warc" : "warc.gz");
            if (prep_check_file(name, ids, items, found) < 0)
                break;
            files++;
            unlink(name);
        }
        for (int i = 0; i < 2 * PREP_N; i++)
            ASSERT_EQ(found[i], 1);
        CU_ASSERT_TRUE(rotate ? files >= 10 : files == 1);
    }
    rmdir(dir);
}

/* Copies every record of the wget WARC through a writer; max_block as given. */
static void copy_all(const char *in, const char *out, size_t max_block, int *copied)
{
    struct crawl_warc_reader *r;
    struct crawl_warc_writer *w;
    struct crawl_warc_opts ro = {max_block, NULL, NULL};
    *copied = 0;
    ASSERT_EQ_FATAL(crawl_warc_reader_open(in, &ro, &r), CRAWL_OK);
    ASSERT_EQ_FATAL(crawl_warc_writer_open(out, NULL, &w), CRAWL_OK);
    const struct crawl_warc_record *rec;
    while (crawl_warc_next(r, &rec) == CRAWL_OK) {
        ASSERT_EQ(crawl_warc_writer_copy(w, r, rec), CRAWL_OK);
        (*copied)++;
    }
    crawl_warc_reader_free(r);
    ASSERT_EQ(crawl_warc_writer_close(w), CRAWL_OK);
}

static void test_warc_writer_copy_is_byte_exact(void)
{
    ASSERT_EQ_FATAL(make_wget_warcs(), 0);
    char in[512], out[512];
    snprintf(in, sizeof in, "%s/site.warc.gz", wget_dir);
    snprintf(out, sizeof out, "%s/copy.warc.gz", wget_dir);
    /* a small max_block makes the bigger blocks stream through (re-compressed) */
    int copied;
    copy_all(in, out, 200, &copied);
    /* the copy is our warcinfo + every record with the same header bytes and block */
    struct crawl_warc_reader *a, *b;
    ASSERT_EQ_FATAL(crawl_warc_reader_open(in, NULL, &a), CRAWL_OK);
    ASSERT_EQ_FATAL(crawl_warc_reader_open(out, NULL, &b), CRAWL_OK);
    const struct crawl_warc_record *ra, *rb;
    ASSERT_EQ_FATAL(crawl_warc_next(b, &rb), CRAWL_OK); /* our warcinfo */
    int same = 0;
    while (crawl_warc_next(a, &ra) == CRAWL_OK) {
        if (crawl_warc_next(b, &rb) != CRAWL_OK)
            break;
        const char *da, *db;
        size_t la, lb;
        if (ra->header_len == rb->header_len &&
            memcmp(ra->header, rb->header, ra->header_len) == 0 &&
            crawl_warc_block(a, &da, &la) == CRAWL_OK &&
            crawl_warc_block(b, &db, &lb) == CRAWL_OK && la == lb && memcmp(da, db, la) == 0)
            same++;
    }
    ASSERT_EQ(same, copied);
    ASSERT_EQ(crawl_warc_next(b, &rb), CRAWL_EOF);
    ASSERT_EQ(crawl_warc_reader_gzip(b), 1);
    crawl_warc_reader_free(a);
    crawl_warc_reader_free(b);

    /* blocks held whole: each record is one gzip member of the input and goes through as
     * those very bytes, so after our warcinfo the output is the input, byte for byte */
    copy_all(in, out, 0, &copied);
    size_t il, ol;
    char *ib = test_slurp(in, &il), *ob = test_slurp(out, &ol);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ib);
    CU_ASSERT_PTR_NOT_NULL_FATAL(ob);
    CU_ASSERT_TRUE(ol > il);
    CU_ASSERT_TRUE(ol > il && memcmp(ob + (ol - il), ib, il) == 0);
    struct errs e = {0};
    struct rec_info ri[64];
    ASSERT_EQ(read_path(out, &e, ri, 64), copied + 1);
    ASSERT_EQ(ri[1].offset, ol - il); /* our warcinfo is the only thing before */
    ASSERT_EQ(e.n, 0);
    free(ib);
    free(ob);
}

static int suite_cleanup(void)
{
    if (wget_dir[0] && !getenv("SIMCRAWL_KEEP_TMP")) {
        char cmd[300];
        snprintf(cmd, sizeof cmd, "rm -rf '%s'", wget_dir);
        if (system(cmd) != 0)
            return 1;
        wget_dir[0] = '\0';
    }
    return 0;
}

extern void test_warc_register(void);
void test_warc_register(void)
{
    CU_pSuite s = CU_add_suite("warc", NULL, suite_cleanup);
    CU_add_test(s, "test_mime_is_html", test_mime_is_html);
    CU_add_test(s, "test_digest_base32_vectors", test_digest_base32_vectors);
    CU_add_test(s, "test_digest_sha1_known", test_digest_sha1_known);
    CU_add_test(s, "test_warc_reader_plain_versions_and_fields",
                test_warc_reader_plain_versions_and_fields);
    CU_add_test(s, "test_warc_reader_gzip_member_offsets", test_warc_reader_gzip_member_offsets);
    CU_add_test(s, "test_warc_reader_streams_large_blocks", test_warc_reader_streams_large_blocks);
    CU_add_test(s, "test_warc_reader_damage_plain", test_warc_reader_damage_plain);
    CU_add_test(s, "test_warc_reader_damage_gzip", test_warc_reader_damage_gzip);
    CU_add_test(s, "test_warc_reader_wrong_length_recovers",
                test_warc_reader_wrong_length_recovers);
    CU_add_test(s, "test_warc_reader_empty_and_binary", test_warc_reader_empty_and_binary);
    CU_add_test(s, "test_httpblock_headers", test_httpblock_headers);
    CU_add_test(s, "test_httpblock_chunked", test_httpblock_chunked);
    CU_add_test(s, "test_httpblock_content_codings", test_httpblock_content_codings);
    CU_add_test(s, "test_httpblock_zip_bomb_capped", test_httpblock_zip_bomb_capped);
    CU_add_test(s, "test_httpblock_zstd_decodes", test_httpblock_zstd_decodes);
    CU_add_test(s, "test_httpblock_zstd_truncated_keeps_prefix",
                test_httpblock_zstd_truncated_keeps_prefix);
    CU_add_test(s, "test_httpblock_zstd_bomb_capped", test_httpblock_zstd_bomb_capped);
    CU_add_test(s, "test_warc_wget_read_back", test_warc_wget_read_back);
    CU_add_test(s, "test_warc_wget_http_blocks", test_warc_wget_http_blocks);
    CU_add_test(s, "test_warc_wget_damaged_copies", test_warc_wget_damaged_copies);
    CU_add_test(s, "test_warc_writer_round_trip", test_warc_writer_round_trip);
    CU_add_test(s, "test_warc_writer_levels_read_back", test_warc_writer_levels_read_back);
    CU_add_test(s, "test_warc_writer_rotation_and_plain", test_warc_writer_rotation_and_plain);
    CU_add_test(s, "test_warc_writer_resume", test_warc_writer_resume);
    CU_add_test(s, "test_warc_writer_copy_is_byte_exact", test_warc_writer_copy_is_byte_exact);
    CU_add_test(s, "test_warc_writer_prepare_on_threads", test_warc_writer_prepare_on_threads);
}
