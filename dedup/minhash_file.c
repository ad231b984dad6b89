/*
 * The MinHash index file (docs/MINHASH.md, "Index file"): magic "SIMCRMHX", a 128-byte
 * little-endian header with every parameter of the method (spec version, k, h, b, r,
 * threshold, seed), counts, the file size and two XXH3-64 checksums (header, body), then
 * the signatures, the id offsets, the ids and the optional site-template section
 * (docs/INDEX-FORMAT.md's template section, byte for byte). The band tables are not
 * stored: loading re-adds every signature, which costs b XXH3 of 4r bytes per document.
 * Every field is checked before it is used, so a damaged or forged file is an error that
 * names the offset and the field, never a crash (tests/fuzz/fuzz_lshfile.c).
 * Saving writes PATH.tmp.PID, fsyncs it, renames it over PATH and fsyncs the directory,
 * as the simhash index does (dedup/indexfile.c).
 */
#include "dedup/dedup_int.h"
#include "dedup/minhash.h"

#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define XXH_INLINE_ALL
#include <xxhash.h>

#define HDR 128u
#define OFF_FORMAT 8
#define OFF_HDRSIZE 12
#define OFF_SPEC 16
#define OFF_K 20
#define OFF_H 24
#define OFF_B 28
#define OFF_R 32
#define OFF_THRESHOLD 40
#define OFF_SEED 48
#define OFF_DOCS 56
#define OFF_IDS 64
#define OFF_TPL 72
#define OFF_PAIRGEN 80
#define OFF_SIZE 88
#define OFF_BODYSUM 96
#define OFF_HDRSUM 120

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static void wr64(uint8_t *p, uint64_t v)
{
    for (int i = 0; i < 8; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}
static uint32_t rd32(const uint8_t *p)
{
    uint32_t v = 0;
    for (int i = 3; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static uint64_t rd64(const uint8_t *p)
{
    uint64_t v = 0;
    for (int i = 7; i >= 0; i--)
        v = v << 8 | p[i];
    return v;
}
static uint64_t pad8(uint64_t n)
{
    return (n + 7) & ~(uint64_t)7;
}

enum dedup_code dedup_lsh_serialize(struct dedup_lsh *l, uint8_t **out, size_t *len)
{
    *out = NULL;
    *len = 0;
    const struct dedup_lsh_params *p = dedup_lsh_get_params(l);
    uint64_t docs = dedup_lsh_doc_count(l);
    uint8_t *tpl = NULL;
    size_t tpl_len = 0;
    struct dedup_templates *t = dedup_lsh_templates(l);
    if (t && dedup_templates_host_count(t) > 0) {
        enum dedup_code rc = dedup_templates_serialize(t, &tpl, &tpl_len);
        if (rc != DEDUP_OK)
            return rc;
    }
    uint64_t ids_len = 0;
    for (uint32_t d = 0; d < docs; d++) {
        size_t n;
        dedup_lsh_id(l, d, &n);
        ids_len += n + 1;
    }
    uint64_t sig_bytes = pad8(docs * p->h * 4), off_bytes = (docs + 1) * 8;
    uint64_t size = HDR + sig_bytes + off_bytes + pad8(ids_len) + tpl_len;
    uint8_t *buf = calloc(1, (size_t)size);
    if (!buf) {
        free(tpl);
        return DEDUP_ENOMEM;
    }
    uint8_t *q = buf + HDR;
    for (uint32_t d = 0; d < docs; d++) {
        const uint32_t *s = dedup_lsh_signature(l, d);
        for (unsigned i = 0; i < p->h; i++, q += 4)
            wr32(q, s[i]);
    }
    q = buf + HDR + sig_bytes;
    uint8_t *ids = q + off_bytes;
    uint64_t o = 0;
    wr64(q, 0);
    for (uint32_t d = 0; d < docs; d++) {
        size_t n;
        const char *id = dedup_lsh_id(l, d, &n);
        memcpy(ids + o, id, n + 1);
        o += n + 1;
        wr64(q + 8 * ((size_t)d + 1), o);
    }
    if (tpl_len)
        memcpy(buf + HDR + sig_bytes + off_bytes + pad8(ids_len), tpl, tpl_len);
    free(tpl);
    memcpy(buf, DEDUP_LSH_MAGIC, 8);
    wr32(buf + OFF_FORMAT, DEDUP_LSH_FORMAT_VERSION);
    wr32(buf + OFF_HDRSIZE, HDR);
    wr32(buf + OFF_SPEC, DEDUP_MINHASH_VERSION);
    wr32(buf + OFF_K, p->k);
    wr32(buf + OFF_H, p->h);
    wr32(buf + OFF_B, p->b);
    wr32(buf + OFF_R, p->r);
    uint64_t tbits;
    memcpy(&tbits, &p->threshold, 8);
    wr64(buf + OFF_THRESHOLD, tbits);
    wr64(buf + OFF_SEED, p->seed);
    wr64(buf + OFF_DOCS, docs);
    wr64(buf + OFF_IDS, ids_len);
    wr64(buf + OFF_TPL, tpl_len);
    wr64(buf + OFF_PAIRGEN, dedup_lsh_pair_generation(l));
    wr64(buf + OFF_SIZE, size);
    wr64(buf + OFF_BODYSUM, XXH3_64bits(buf + HDR, (size_t)(size - HDR)));
    wr64(buf + OFF_HDRSUM, XXH3_64bits(buf, OFF_HDRSUM));
    *out = buf;
    *len = (size_t)size;
    return DEDUP_OK;
}

enum dedup_code dedup_lsh_save(struct dedup_lsh *l, const char *path, struct dedup_file_error *err)
{
    struct dedup_file_error dummy;
    if (!err)
        err = &dummy;
    *err = (struct dedup_file_error){0, "", 0};
    uint8_t *buf;
    size_t len;
    enum dedup_code rc = dedup_lsh_serialize(l, &buf, &len);
    if (rc != DEDUP_OK) {
        err->what = "out of memory";
        return rc;
    }
    size_t plen = strlen(path) + 32;
    char *tmp = malloc(plen);
    int fd = -1;
    if (!tmp) {
        free(buf);
        err->what = "out of memory";
        return DEDUP_ENOMEM;
    }
    snprintf(tmp, plen, "%s.tmp.%ld", path, (long)getpid());
    rc = DEDUP_EIO;
    fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (fd < 0) {
        err->what = "cannot create the temporary file";
        goto fail;
    }
    for (size_t done = 0; done < len;) {
        ssize_t w = write(fd, buf + done, len - done);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            err->what = "cannot write the temporary file";
            goto fail;
        }
        done += (size_t)w;
    }
    if (fsync(fd) != 0) {
        err->what = "cannot fsync the temporary file";
        goto fail;
    }
    if (close(fd) != 0) {
        fd = -1;
        err->what = "cannot close the temporary file";
        goto fail;
    }
    fd = -1;
    if (rename(tmp, path) != 0) {
        err->what = "cannot rename the temporary file over the index";
        goto fail;
    }
    int derr = 0;
    if (dedup_fsync_dir(path, &derr) != DEDUP_OK) {
        free(tmp);
        free(buf);
        err->os_error = derr;
        err->what = "cannot fsync the index's directory";
        return DEDUP_EIO;
    }
    free(tmp);
    free(buf);
    return DEDUP_OK;
fail:
    err->os_error = errno;
    if (fd >= 0)
        close(fd);
    unlink(tmp);
    free(tmp);
    free(buf);
    return rc;
}

#define FAIL DEDUP_PARSE_FAIL

enum dedup_code dedup_lsh_load_mem(const void *data, size_t len, unsigned flags,
                                   struct dedup_lsh **out, struct dedup_file_error *err)
{
    struct dedup_file_error dummy;
    struct dedup_lsh *l = NULL;
    struct dedup_templates *tpl = NULL;
    uint32_t *sig = NULL;
    enum dedup_code rc = DEDUP_OK;
    const uint8_t *b = data;
    if (!err)
        err = &dummy;
    *err = (struct dedup_file_error){0, "", 0};
    *out = NULL;
    if (len < 8 || memcmp(b, DEDUP_LSH_MAGIC, 8) != 0) {
        if (len >= 8 && memcmp(b, DEDUP_INDEX_MAGIC, 8) == 0)
            FAIL(DEDUP_EFORMAT, 0, "a simhash index, not a minhash index (use --method simhash)");
        FAIL(len < 8 ? DEDUP_ETRUNCATED : DEDUP_EFORMAT, 0,
             "not a simcrawl minhash index (bad magic)");
    }
    if (len < HDR)
        FAIL(DEDUP_ETRUNCATED, len, "file shorter than its 128-byte header");
    if (rd32(b + OFF_FORMAT) != DEDUP_LSH_FORMAT_VERSION)
        FAIL(DEDUP_EVERSION, OFF_FORMAT, "minhash index format version is not 1");
    if (!(flags & DEDUP_INDEX_LOAD_NO_CHECKSUM) &&
        rd64(b + OFF_HDRSUM) != XXH3_64bits(b, OFF_HDRSUM))
        FAIL(DEDUP_ECHECKSUM, OFF_HDRSUM, "header checksum mismatch");
    if (rd32(b + OFF_HDRSIZE) != HDR)
        FAIL(DEDUP_EFORMAT, OFF_HDRSIZE, "header size is not 128");
    if (rd32(b + OFF_SPEC) != DEDUP_MINHASH_VERSION)
        FAIL(DEDUP_EVERSION, OFF_SPEC,
             "signatures of another docs/MINHASH.md version: rebuild the index");
    struct dedup_lsh_params p;
    p.k = rd32(b + OFF_K);
    p.h = rd32(b + OFF_H);
    p.b = rd32(b + OFF_B);
    p.r = rd32(b + OFF_R);
    uint64_t tbits = rd64(b + OFF_THRESHOLD);
    memcpy(&p.threshold, &tbits, 8);
    p.seed = rd64(b + OFF_SEED);
    if (p.k < 1 || p.k > DEDUP_MINHASH_K_MAX)
        FAIL(DEDUP_EFORMAT, OFF_K, "shingle size k out of range 1..32");
    if (p.h < 1 || p.h > DEDUP_MINHASH_H_MAX)
        FAIL(DEDUP_EFORMAT, OFF_H, "signature size h out of range 1..1024");
    if (p.b < 1 || p.r < 1 || (uint64_t)p.b * p.r > p.h)
        FAIL(DEDUP_EFORMAT, OFF_B, "bands b x rows r is not within 1..h");
    if (!(p.threshold > 0 && p.threshold <= 1))
        FAIL(DEDUP_EFORMAT, OFF_THRESHOLD, "threshold out of range (0, 1]");
    uint64_t docs = rd64(b + OFF_DOCS), ids_len = rd64(b + OFF_IDS);
    uint64_t tpl_len = rd64(b + OFF_TPL), size = rd64(b + OFF_SIZE);
    if (docs > DEDUP_LSH_MAX_DOCS)
        FAIL(DEDUP_EFORMAT, OFF_DOCS, "document count over the cap");
    if (ids_len > ((uint64_t)1 << 48) || tpl_len > ((uint64_t)1 << 48) || (tpl_len & 7))
        FAIL(DEDUP_EFORMAT, ids_len > ((uint64_t)1 << 48) ? OFF_IDS : OFF_TPL,
             "section size out of range");
    uint64_t sig_bytes = pad8(docs * p.h * 4), off_bytes = (docs + 1) * 8;
    uint64_t want = HDR + sig_bytes + off_bytes + pad8(ids_len) + tpl_len;
    if (size != want)
        FAIL(DEDUP_EFORMAT, OFF_SIZE, "file size field disagrees with the section sizes");
    if (len < want)
        FAIL(DEDUP_ETRUNCATED, len, "file shorter than its header says");
    if (len > want)
        FAIL(DEDUP_EFORMAT, want, "bytes after the last section");
    if (!(flags & DEDUP_INDEX_LOAD_NO_CHECKSUM) &&
        rd64(b + OFF_BODYSUM) != XXH3_64bits(b + HDR, (size_t)(want - HDR)))
        FAIL(DEDUP_ECHECKSUM, HDR, "body checksum mismatch");
    const uint8_t *offs = b + HDR + sig_bytes, *ids = offs + off_bytes;
    if (rd64(offs) != 0)
        FAIL(DEDUP_EFORMAT, HDR + sig_bytes, "first id offset is not 0");
    for (uint64_t d = 0; d < docs; d++) {
        uint64_t o0 = rd64(offs + 8 * d), o1 = rd64(offs + 8 * (d + 1));
        uint64_t at = HDR + sig_bytes + 8 * (d + 1);
        if (o1 <= o0 || o1 > ids_len || o1 - o0 - 1 > DEDUP_INDEX_MAX_ID_BYTES)
            FAIL(DEDUP_EFORMAT, at, "id offset out of order or out of range");
        if (ids[o1 - 1] != '\0' || memchr(ids + o0, '\0', (size_t)(o1 - o0 - 1)))
            FAIL(DEDUP_EFORMAT, HDR + sig_bytes + off_bytes + o0,
                 "id not NUL-terminated, or with a NUL inside");
    }
    if (rd64(offs + 8 * docs) != ids_len)
        FAIL(DEDUP_EFORMAT, HDR + sig_bytes + 8 * docs, "last id offset is not the ids size");
    if (tpl_len) {
        struct dedup_parse_error perr;
        uint64_t at = HDR + sig_bytes + off_bytes + pad8(ids_len);
        enum dedup_code trc = dedup_templates_parse(b + at, (size_t)tpl_len, &tpl, &perr);
        if (trc == DEDUP_ENOMEM)
            FAIL(DEDUP_ENOMEM, at, "out of memory");
        if (trc != DEDUP_OK)
            FAIL(DEDUP_EFORMAT, at + perr.offset, perr.what);
    }
    rc = dedup_lsh_new(&p, &l);
    if (rc != DEDUP_OK)
        FAIL(rc, 0, "out of memory");
    sig = malloc(p.h * sizeof *sig);
    if (!sig)
        FAIL(DEDUP_ENOMEM, 0, "out of memory");
    for (uint64_t d = 0; d < docs; d++) {
        const uint8_t *s = b + HDR + d * p.h * 4;
        for (unsigned i = 0; i < p.h; i++)
            sig[i] = rd32(s + 4 * i);
        uint64_t o0 = rd64(offs + 8 * d), o1 = rd64(offs + 8 * (d + 1));
        rc = dedup_lsh_add(l, sig, (const char *)ids + o0, (size_t)(o1 - o0 - 1), NULL);
        if (rc != DEDUP_OK)
            FAIL(rc, HDR + d * p.h * 4, "cannot add a document (out of memory)");
    }
    if (tpl) {
        dedup_lsh_set_templates(l, tpl);
        tpl = NULL;
    }
    dedup_lsh_set_pair_generation(l, rd64(b + OFF_PAIRGEN));
    free(sig);
    *out = l;
    return DEDUP_OK;
fail:
    free(sig);
    dedup_templates_free(tpl);
    dedup_lsh_free(l);
    return rc;
}

enum dedup_code dedup_lsh_load(const char *path, struct dedup_lsh **out,
                               struct dedup_file_error *err)
{
    struct dedup_file_error dummy;
    if (!err)
        err = &dummy;
    *err = (struct dedup_file_error){0, "", 0};
    *out = NULL;
    int fd = open(path, O_RDONLY | O_CLOEXEC);
    struct stat st;
    if (fd < 0 || fstat(fd, &st) != 0) {
        err->os_error = errno;
        err->what = "cannot open";
        if (fd >= 0)
            close(fd);
        return DEDUP_EIO;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        err->os_error = EISDIR;
        err->what = "not a regular file";
        return DEDUP_EIO;
    }
    size_t len = (size_t)st.st_size;
    uint8_t *buf = malloc(len ? len : 1);
    if (!buf) {
        close(fd);
        err->what = "out of memory";
        return DEDUP_ENOMEM;
    }
    size_t got = 0;
    while (got < len) {
        ssize_t r = read(fd, buf + got, len - got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += (size_t)r;
    }
    int rerr = errno;
    close(fd);
    if (got < len && rerr != 0 && got == 0) {
        free(buf);
        err->os_error = rerr;
        err->what = "cannot read";
        return DEDUP_EIO;
    }
    enum dedup_code rc = dedup_lsh_load_mem(buf, got, 0, out, err);
    free(buf);
    return rc;
}
