/*
 * The saved index file (docs/INDEX-FORMAT.md, format version 5): a 128-byte header
 * (magic "SIMCRIDX", version, design, counts, XXH3-64 checksums of header and body, the
 * pair generation, the fingerprint version), then the sections documents, ids, fingerprint lists
 * and tables, each 8-byte aligned, every integer little-endian. The layout is fixed by the counts,
 * so a loader computes every section's offset and maps the file read-only: the arrays of the index
 * point straight into the mapping (zero copy); adding to it copies the document arrays first, and
 * the next compaction replaces the tables with new ones (copy-on-extend). Older format versions,
 * and files whose fingerprint version field is not this build's, hold fingerprints of an older
 * definition (docs/FINGERPRINT.md versions 1 to 5) and are refused with "rebuild": a fingerprint
 * of this build's version compared with them would give wrong answers without an error.
 *
 * Loading trusts nothing: sizes, offsets, sortedness, directories and document lists are
 * checked before use, so a damaged or forged file gives an error naming the offset of the
 * field at fault, never an out-of-bounds read or an endless loop (tests/fuzz/
 * fuzz_indexfile.c). Saving writes PATH.tmp.PID, fsyncs it, renames it over PATH and
 * fsyncs the directory, so a reader maps the old file or the new one, never part of one,
 * and a power cut after a save returned keeps the new file. Writers serialise with the
 * lock of dedup/indexlock.c; the one that next holds it removes a killed writer's
 * PATH.tmp.PID. The save passes the named crash points index-before-write,
 * index-partial-write, index-after-fsync, index-after-rename and index-saved
 * (dedup_crash_point, SIMCRAWL_CRASH_AT) for the kill tests.
 */
#include "dedup/dedup_int.h"
#include "dedup/index_int.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>
#include <xxhash.h>

/* The header's fields: byte offsets (docs/INDEX-FORMAT.md, "Header") */
#define HDR_SIZE 128u
#define HDR_VERSION 8u     /* u32 format version (DEDUP_INDEX_FORMAT_VERSION) */
#define HDR_SIZE_FIELD 12u /* u32 header size, HDR_SIZE */
#define HDR_K 16u          /* u32 k; then u32 levels, u32 blocks[2], u32 tables */
#define HDR_LEVELS 20u
#define HDR_BLOCKS 24u
#define HDR_TABLES 32u
#define HDR_DIR_BITS 36u      /* u32 directory bits */
#define HDR_DOCS 40u          /* u64 documents */
#define HDR_DISTINCT 48u      /* u64 distinct fingerprints */
#define HDR_ID_BYTES 56u      /* u64 bytes of the id section */
#define HDR_FILE_SIZE 64u     /* u64 file size */
#define HDR_BODY_CHECKSUM 72u /* XXH3-64 of the bytes after the header */
#define HDR_CHECKSUM 80u      /* the header checksum: bytes [80, 88), zero while it is computed */
#define HDR_TPL_BYTES 88u     /* u64 bytes of the template section */
#define HDR_PAIR_GEN 96u      /* u64 pair generation */
#define HDR_FP_VERSION 104u   /* u32 fingerprint version (DEDUP_FINGERPRINT_VERSION) */
#define TPL_BYTES_MAX ((uint64_t)1 << 40) /* a larger template section is a damaged file */

/* Byte offsets of the sections, computed from the header counts. */
struct layout {
    uint64_t doc_fp, doc_next, id_off, id_bytes, head, tail;
    uint64_t tab[DEDUP_MAX_TABLES], dir[DEDUP_MAX_TABLES];
    uint64_t templates; /* the template section (version 3; may be empty) */
    uint64_t end;
};

static uint64_t align8(uint64_t x)
{
    return (x + 7) & ~(uint64_t)7;
}

static void layout_compute(struct layout *l, uint64_t docs, uint64_t distinct, uint64_t id_bytes,
                           unsigned tables, unsigned dir_bits, uint64_t tpl_bytes)
{
    uint64_t o = HDR_SIZE;
    l->doc_fp = o;
    o += docs * 8;
    l->doc_next = o;
    o = align8(o + docs * 4);
    l->id_off = o;
    o += (docs + 1) * 8;
    l->id_bytes = o;
    o = align8(o + id_bytes);
    l->head = o;
    o = align8(o + distinct * 4);
    l->tail = o;
    o = align8(o + distinct * 4);
    for (unsigned t = 0; t < tables; t++) {
        l->tab[t] = o;
        o += distinct * 8;
        l->dir[t] = o;
        o = align8(o + (((uint64_t)1 << dir_bits) + 1) * 4);
    }
    l->templates = o;
    l->end = o + tpl_bytes;
}

static int host_is_le(void)
{
    const uint16_t one = 1;
    return *(const uint8_t *)&one == 1;
}

static uint32_t rd32(const uint8_t *p)
{
    return (uint32_t)p[0] | (uint32_t)p[1] << 8 | (uint32_t)p[2] << 16 | (uint32_t)p[3] << 24;
}

static uint64_t rd64(const uint8_t *p)
{
    return (uint64_t)rd32(p) | (uint64_t)rd32(p + 4) << 32;
}

static void wr32(uint8_t *p, uint32_t v)
{
    for (int i = 0; i < 4; i++)
        p[i] = (uint8_t)(v >> (8 * i));
}

static void wr64(uint8_t *p, uint64_t v)
{
    wr32(p, (uint32_t)v);
    wr32(p + 4, (uint32_t)(v >> 32));
}

/* The header checksum: XXH3-64 of the 128 header bytes with the checksum field itself
 * taken as zero. */
static uint64_t hdr_checksum(const uint8_t *hdr)
{
    uint8_t h[HDR_SIZE];
    memcpy(h, hdr, HDR_SIZE);
    memset(h + HDR_CHECKSUM, 0, 8);
    return XXH3_64bits(h, HDR_SIZE);
}

/* 1 when SIMCRAWL_CRASH_AT names a crash point; always 0 in libsimcrawl (built with
 * DEDUP_NO_CRASH_POINTS: a library loaded into another program never kills it). */
static int crash_points_on(void)
{
#ifdef DEDUP_NO_CRASH_POINTS
    return 0;
#else
    return getenv("SIMCRAWL_CRASH_AT") != NULL;
#endif
}

void dedup_crash_point(const char *name)
{
    static _Atomic unsigned long passes; /* of the named point (only one is named) */
    if (!crash_points_on())
        return;
    const char *at = getenv("SIMCRAWL_CRASH_AT");
    size_t n = strlen(name);
    if (!at || strncmp(at, name, n) != 0 || (at[n] != '\0' && at[n] != ':'))
        return;
    unsigned long nth = at[n] == ':' ? strtoul(at + n + 1, NULL, 10) : 1;
    if (atomic_fetch_add(&passes, 1) + 1 >= nth)
        raise(SIGKILL);
}

uint64_t dedup_index_pair_generation(const struct dedup_index *idx)
{
    return idx->pair_gen;
}

void dedup_index_set_pair_generation(struct dedup_index *idx, uint64_t gen)
{
    idx->pair_gen = gen;
}

void ix_unmap(struct dedup_index *idx)
{
    if (idx->map && idx->map_is_mmap)
        munmap(idx->map, idx->map_len);
    else if (idx->map_is_heap)
        free(idx->map);
    idx->map = NULL;
    idx->map_len = 0;
}

/* ---- saving ---- */

enum dedup_code dedup_fsync_dir(const char *path, int *os_error)
{
    /* no allocation: called after a rename, where out of memory would turn a saved file
     * into a failed save */
    const char *slash = strrchr(path, '/');
    char dir[PATH_MAX];
    if (slash) {
        size_t dlen = slash == path ? 1 : (size_t)(slash - path);
        if (dlen >= sizeof dir) {
            *os_error = ENAMETOOLONG;
            return DEDUP_EIO;
        }
        memcpy(dir, path, dlen);
        dir[dlen] = '\0';
    }
    int rc = 0;
    int fd = open(slash ? dir : ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    if (fd < 0)
        rc = errno;
    else if (fsync(fd) != 0 && errno != EINVAL) /* EINVAL: a file system that cannot */
        rc = errno;
    if (fd >= 0)
        close(fd);
    *os_error = rc;
    return rc ? DEDUP_EIO : DEDUP_OK;
}

struct writer {
    FILE *f;
    XXH3_state_t *st;
    uint64_t off;
    int failed;
};

static void put(struct writer *w, const void *p, uint64_t n)
{
    if (w->failed || !n)
        return;
    if (fwrite(p, 1, (size_t)n, w->f) != (size_t)n) {
        w->failed = 1;
        return;
    }
    XXH3_64bits_update(w->st, p, (size_t)n);
    w->off += n;
}

static void pad8(struct writer *w)
{
    static const uint8_t zero[8] = {0};
    put(w, zero, align8(w->off) - w->off);
}

/* Writes the sections after the header, in the order of layout_compute (crash point
 * index-partial-write after the ids). */
static void write_sections(struct writer *w, const struct dedup_index *idx, const uint8_t *tpl,
                           size_t tpl_len)
{
    uint64_t docs = idx->ndocs, distinct = idx->nmain;
    put(w, idx->doc_fp, docs * 8);
    put(w, idx->doc_next, docs * 4);
    pad8(w);
    if (idx->id_off)
        put(w, idx->id_off, (docs + 1) * 8);
    else {
        uint64_t zero = 0;
        put(w, &zero, 8);
    }
    put(w, idx->id_bytes, idx->id_len);
    pad8(w);
    if (crash_points_on()) {
        fflush(w->f); /* a temporary file cut short, header still zero */
        dedup_crash_point("index-partial-write");
    }
    put(w, idx->head, distinct * 4);
    pad8(w);
    put(w, idx->tail, distinct * 4);
    pad8(w);
    for (unsigned t = 0; t < idx->ntables; t++) {
        put(w, idx->tab[t], distinct * 8);
        put(w, idx->dir[t], (((uint64_t)1 << idx->dir_bits) + 1) * 4);
        pad8(w);
    }
    put(w, tpl, tpl_len);
}

/* Fills the header of idx's file (layout l, body checksum body_sum), its checksum last. */
static void header_fill(uint8_t hdr[HDR_SIZE], const struct dedup_index *idx,
                        const struct layout *l, uint64_t body_sum, size_t tpl_len)
{
    memset(hdr, 0, HDR_SIZE);
    memcpy(hdr, DEDUP_INDEX_MAGIC, 8);
    wr32(hdr + HDR_VERSION, DEDUP_INDEX_FORMAT_VERSION);
    wr32(hdr + HDR_SIZE_FIELD, HDR_SIZE);
    wr32(hdr + HDR_K, idx->design.k);
    wr32(hdr + HDR_LEVELS, idx->design.levels);
    wr32(hdr + HDR_BLOCKS, idx->design.blocks[0]);
    wr32(hdr + HDR_BLOCKS + 4, idx->design.blocks[1]);
    wr32(hdr + HDR_TABLES, idx->design.tables);
    wr32(hdr + HDR_DIR_BITS, idx->dir_bits);
    wr64(hdr + HDR_DOCS, idx->ndocs);
    wr64(hdr + HDR_DISTINCT, idx->nmain);
    wr64(hdr + HDR_ID_BYTES, idx->id_len);
    wr64(hdr + HDR_FILE_SIZE, l->end);
    wr64(hdr + HDR_BODY_CHECKSUM, body_sum);
    wr64(hdr + HDR_TPL_BYTES, tpl_len);
    wr64(hdr + HDR_PAIR_GEN, idx->pair_gen);
    wr32(hdr + HDR_FP_VERSION, DEDUP_FINGERPRINT_VERSION);
    wr64(hdr + HDR_CHECKSUM, hdr_checksum(hdr));
}

/* Saves idx to path: compacts it, writes PATH.tmp.PID (sections, then the header),
 * fsyncs it, renames it over path and fsyncs the directory (the head of this file). */
enum dedup_code dedup_index_save(struct dedup_index *idx, const char *path,
                                 struct dedup_file_error *err)
{
    struct dedup_file_error dummy;
    char *tmp = NULL;
    FILE *f = NULL;
    struct writer w = {0};
    enum dedup_code rc;
    if (!err)
        err = &dummy;
    *err = (struct dedup_file_error){0, "", 0};
    if (!host_is_le()) {
        err->what = "index files are little-endian; this host is big-endian";
        return DEDUP_EINVAL;
    }
    rc = ix_compact(idx, 1);
    if (rc == DEDUP_OK)
        rc = ix_tables_ready(idx, 2); /* all pairs of a fresh index built table 0 only */
    if (rc != DEDUP_OK) {
        err->what = "out of memory merging pending documents";
        return rc;
    }
    uint8_t *tpl = NULL;
    size_t tpl_len = 0;
    if (dedup_templates_host_count(idx->templates) > 0) {
        rc = dedup_templates_serialize(idx->templates, &tpl, &tpl_len);
        if (rc != DEDUP_OK) {
            err->what = "out of memory writing the template section";
            return rc;
        }
    }
    size_t plen = strlen(path) + 32;
    tmp = malloc(plen);
    w.st = XXH3_createState();
    if (!tmp || !w.st) {
        rc = DEDUP_ENOMEM;
        err->what = "out of memory";
        goto fail;
    }
    snprintf(tmp, plen, "%s.tmp.%ld", path, (long)getpid());
    dedup_crash_point("index-before-write");
    f = fopen(tmp, "wb");
    if (!f) {
        rc = DEDUP_EIO;
        err->os_error = errno;
        err->what = "cannot create the temporary file";
        goto fail;
    }
    w.f = f;
    XXH3_64bits_reset(w.st);
    uint8_t hdr[HDR_SIZE] = {0};
    if (fwrite(hdr, 1, HDR_SIZE, f) != HDR_SIZE)
        w.failed = 1;
    w.off = HDR_SIZE;
    write_sections(&w, idx, tpl, tpl_len);
    struct layout l;
    layout_compute(&l, idx->ndocs, idx->nmain, idx->id_len, idx->ntables, idx->dir_bits, tpl_len);
    if (!w.failed && w.off != l.end) {
        rc = DEDUP_EINVAL; /* a bug: the writer and the layout disagree */
        err->what = "internal error: section layout mismatch";
        goto fail;
    }
    header_fill(hdr, idx, &l, XXH3_64bits_digest(w.st), tpl_len);
    if (w.failed || fseek(f, 0, SEEK_SET) != 0 || fwrite(hdr, 1, HDR_SIZE, f) != HDR_SIZE ||
        fflush(f) != 0 || fsync(fileno(f)) != 0) {
        rc = DEDUP_EIO;
        err->os_error = errno;
        err->what = "cannot write the temporary file";
        err->offset = w.off;
        goto fail;
    }
    if (fclose(f) != 0) {
        f = NULL;
        rc = DEDUP_EIO;
        err->os_error = errno;
        err->what = "cannot write the temporary file";
        goto fail;
    }
    f = NULL;
    dedup_crash_point("index-after-fsync");
    if (rename(tmp, path) != 0) {
        rc = DEDUP_EIO;
        err->os_error = errno;
        err->what = "cannot rename the temporary file over the index";
        goto fail;
    }
    dedup_crash_point("index-after-rename");
    int derr = 0;
    if (dedup_fsync_dir(path, &derr) != DEDUP_OK) {
        free(tmp);
        tmp = NULL; /* renamed: nothing to remove */
        rc = DEDUP_EIO;
        err->os_error = derr;
        err->what = "cannot fsync the directory of the index";
        goto fail;
    }
    dedup_crash_point("index-saved");
    free(tmp);
    free(tpl);
    XXH3_freeState(w.st);
    return DEDUP_OK;
fail:
    if (f)
        fclose(f);
    if (tmp) {
        unlink(tmp);
        free(tmp);
    }
    free(tpl);
    XXH3_freeState(w.st);
    return rc;
}

/* ---- loading ---- */

#define FAIL DEDUP_PARSE_FAIL
#define STR_(x) #x
#define STR(x) STR_(x)
#define FP_VERSION_STR STR(DEDUP_FINGERPRINT_VERSION)

/* The header fields that the steps of load_core check and use. */
struct header {
    struct dedup_design design;
    unsigned dir_bits;
    uint64_t docs, distinct, id_bytes, tpl_bytes, pair_gen;
};

/* 1. The header alone: magic, versions, size, checksum, reserved bytes, template section
 * size, table design. */
static enum dedup_code check_header(const uint8_t *p, size_t len, unsigned flags, struct header *h,
                                    struct dedup_file_error *err)
{
    enum dedup_code rc = DEDUP_OK;
    if (len >= 8 && memcmp(p, "SIMCRMHX", 8) == 0) /* DEDUP_LSH_MAGIC, dedup/minhash.h */
        FAIL(DEDUP_EFORMAT, 0, "a minhash index, not a simhash index (use --method minhash)");
    if (len < 8 || memcmp(p, DEDUP_INDEX_MAGIC, 8) != 0)
        FAIL(DEDUP_EFORMAT, 0, "not a simcrawl index file (no SIMCRIDX magic number)");
    if (len < HDR_VERSION + 4)
        FAIL(DEDUP_ETRUNCATED, len, "truncated in the header");
    uint32_t version = rd32(p + HDR_VERSION);
    if (version >= 1 && version < DEDUP_INDEX_FORMAT_VERSION)
        FAIL(DEDUP_EVERSION, HDR_VERSION,
             "format versions 1 to 4 hold fingerprints of an older definition "
             "(docs/FINGERPRINT.md versions 1 and 2); rebuild the index (and remove its "
             ".digests) from the pages with this simcrawl");
    if (version != DEDUP_INDEX_FORMAT_VERSION)
        FAIL(DEDUP_EVERSION, HDR_VERSION,
             "unsupported format version (this build reads version 5)");
    if (len < HDR_SIZE)
        FAIL(DEDUP_ETRUNCATED, len, "truncated in the header");
    if (!host_is_le())
        FAIL(DEDUP_EFORMAT, 0, "index files are little-endian; this host is big-endian");
    if (((uintptr_t)p & 7) != 0)
        FAIL(DEDUP_EINVAL, 0, "index data is not 8-byte aligned in memory");
    if (rd32(p + HDR_SIZE_FIELD) != HDR_SIZE)
        FAIL(DEDUP_EFORMAT, HDR_SIZE_FIELD, "header size is not 128");
    if (!(flags & DEDUP_INDEX_LOAD_NO_CHECKSUM) && rd64(p + HDR_CHECKSUM) != hdr_checksum(p))
        FAIL(DEDUP_ECHECKSUM, HDR_CHECKSUM, "header checksum does not match the header");
    h->tpl_bytes = rd64(p + HDR_TPL_BYTES);
    h->pair_gen = rd64(p + HDR_PAIR_GEN);
    if (rd32(p + HDR_FP_VERSION) != DEDUP_FINGERPRINT_VERSION)
        FAIL(DEDUP_EVERSION, HDR_FP_VERSION,
             "fingerprints of another definition than this build's (docs/FINGERPRINT.md "
             "version " FP_VERSION_STR "); rebuild the index from the pages with a matching "
             "simcrawl");
    for (unsigned i = HDR_FP_VERSION + 4; i < HDR_SIZE; i++)
        if (p[i])
            FAIL(DEDUP_EFORMAT, i, "reserved header bytes are not zero");
    if (h->tpl_bytes % 8 || h->tpl_bytes > TPL_BYTES_MAX)
        FAIL(DEDUP_EFORMAT, HDR_TPL_BYTES, "template section size out of range");
    h->design = (struct dedup_design){.k = rd32(p + HDR_K),
                                      .levels = rd32(p + HDR_LEVELS),
                                      .blocks = {rd32(p + HDR_BLOCKS), rd32(p + HDR_BLOCKS + 4)},
                                      .tables = rd32(p + HDR_TABLES)};
    const struct dedup_design *d = &h->design;
    if (d->k > DEDUP_K_MAX || d->levels < 1 || d->levels > 2 || d->blocks[0] > 64 ||
        d->blocks[1] > 64 || d->tables > DEDUP_MAX_TABLES)
        FAIL(DEDUP_EFORMAT, HDR_K, "invalid table design (k, levels, blocks, tables)");
    return DEDUP_OK;
fail:
    return rc;
}

/* 2. The counts, against the caps, the index's design and the file's size (then l is
 * the layout they give), and the body checksum. */
static enum dedup_code check_counts(const uint8_t *p, size_t len, unsigned flags,
                                    const struct dedup_index *idx, struct header *h,
                                    struct layout *l, struct dedup_file_error *err)
{
    enum dedup_code rc = DEDUP_OK;
    h->dir_bits = rd32(p + HDR_DIR_BITS);
    h->docs = rd64(p + HDR_DOCS);
    h->distinct = rd64(p + HDR_DISTINCT);
    h->id_bytes = rd64(p + HDR_ID_BYTES);
    if (h->dir_bits > idx->design.key_bits_min || h->dir_bits > IX_DIR_BITS_MAX)
        FAIL(DEDUP_EFORMAT, HDR_DIR_BITS, "directory bits out of range");
    if (h->docs > DEDUP_INDEX_MAX_DOCS)
        FAIL(DEDUP_EFORMAT, HDR_DOCS, "document count out of range");
    if (h->distinct > h->docs || (h->docs && !h->distinct))
        FAIL(DEDUP_EFORMAT, HDR_DISTINCT, "distinct fingerprint count out of range");
    if (h->id_bytes < h->docs || h->id_bytes > IX_ID_BYTES_MAX)
        FAIL(DEDUP_EFORMAT, HDR_ID_BYTES, "id bytes out of range");
    layout_compute(l, h->docs, h->distinct, h->id_bytes, idx->ntables, h->dir_bits, h->tpl_bytes);
    if (rd64(p + HDR_FILE_SIZE) != l->end)
        FAIL(DEDUP_EFORMAT, HDR_FILE_SIZE, "file size field does not match the counts");
    if (len < l->end)
        FAIL(DEDUP_ETRUNCATED, len, "file is shorter than its header says (truncated)");
    if (len > l->end)
        FAIL(DEDUP_EFORMAT, l->end, "trailing bytes after the last section");
    if (!(flags & DEDUP_INDEX_LOAD_NO_CHECKSUM) &&
        rd64(p + HDR_BODY_CHECKSUM) != XXH3_64bits(p + HDR_SIZE, (size_t)(l->end - HDR_SIZE)))
        FAIL(DEDUP_ECHECKSUM, HDR_BODY_CHECKSUM, "body checksum does not match the contents");
    return DEDUP_OK;
fail:
    return rc;
}

/* 3. The ids (increasing offsets, each NUL-terminated) and the document list links. */
static enum dedup_code check_ids(const uint8_t *p, const struct layout *l, const struct header *h,
                                 struct dedup_file_error *err)
{
    enum dedup_code rc = DEDUP_OK;
    const uint32_t *doc_next = (const uint32_t *)(p + l->doc_next);
    const uint64_t *id_off = (const uint64_t *)(p + l->id_off);
    const char *ids = (const char *)(p + l->id_bytes);
    uint64_t docs = h->docs;
    if (id_off[0] != 0)
        FAIL(DEDUP_EFORMAT, l->id_off, "first id offset is not 0");
    for (uint64_t i = 0; i < docs; i++) {
        if (id_off[i + 1] <= id_off[i] || id_off[i + 1] > h->id_bytes)
            FAIL(DEDUP_EFORMAT, l->id_off + (i + 1) * 8, "id offsets are not increasing");
        if (ids[id_off[i + 1] - 1] != '\0')
            FAIL(DEDUP_EFORMAT, l->id_bytes + id_off[i + 1] - 1, "id is not NUL-terminated");
        if (doc_next[i] != IX_NONE && (doc_next[i] <= i || doc_next[i] >= docs))
            FAIL(DEDUP_EFORMAT, l->doc_next + i * 4, "document list link out of range");
    }
    if (id_off[docs] != h->id_bytes)
        FAIL(DEDUP_EFORMAT, l->id_off + docs * 8, "last id offset is not the id bytes size");
    return DEDUP_OK;
fail:
    return rc;
}

/* 4. Every table strictly increasing, every directory matching its table; the index's
 * tables point into the data as they pass (load_core drops them on a failure). */
static enum dedup_code check_tables(const uint8_t *p, const struct layout *l,
                                    const struct header *h, struct dedup_index *idx,
                                    struct dedup_file_error *err)
{
    enum dedup_code rc = DEDUP_OK;
    uint64_t distinct = h->distinct;
    unsigned nb = 1u << h->dir_bits;
    for (unsigned t = 0; t < idx->ntables; t++) {
        const uint64_t *v = (const uint64_t *)(p + l->tab[t]);
        const uint32_t *dir = (const uint32_t *)(p + l->dir[t]);
        for (uint64_t i = 1; i < distinct; i++)
            if (v[i] <= v[i - 1])
                FAIL(DEDUP_EFORMAT, l->tab[t] + i * 8, "table is not strictly increasing");
        uint64_t i = 0;
        for (uint64_t b = 0; b < nb; b++) {
            if (dir[b] != i)
                FAIL(DEDUP_EFORMAT, l->dir[t] + b * 4, "directory does not match its table");
            while (i < distinct && ix_top(v[i], h->dir_bits) == b)
                i++;
        }
        if (dir[nb] != distinct)
            FAIL(DEDUP_EFORMAT, l->dir[t] + (uint64_t)nb * 4, "directory does not match its table");
        idx->tab[t] = (uint64_t *)(uintptr_t)v;
        idx->dir[t] = (uint32_t *)(uintptr_t)dir;
    }
    return DEDUP_OK;
fail:
    return rc;
}

/* 5. Every document is on exactly one list, which starts at head[i], ends at tail[i] and
 * holds only documents with fingerprint tab[0][i]. */
static enum dedup_code check_lists(const uint8_t *p, const struct layout *l, const struct header *h,
                                   struct dedup_file_error *err)
{
    enum dedup_code rc = DEDUP_OK;
    const uint64_t *doc_fp = (const uint64_t *)(p + l->doc_fp);
    const uint32_t *doc_next = (const uint32_t *)(p + l->doc_next);
    const uint32_t *head = (const uint32_t *)(p + l->head);
    const uint32_t *tail = (const uint32_t *)(p + l->tail);
    const uint64_t *t0 = (const uint64_t *)(p + l->tab[0]);
    uint64_t docs = h->docs, visited = 0;
    uint8_t *seen = calloc(docs / 8 + 1, 1);
    if (!seen)
        FAIL(DEDUP_ENOMEM, 0, "out of memory");
    for (uint64_t i = 0; i < h->distinct; i++) {
        if (head[i] >= docs || tail[i] >= docs)
            FAIL(DEDUP_EFORMAT, l->head + i * 4, "document list end out of range");
        uint32_t last = IX_NONE;
        for (uint32_t dd = head[i]; dd != IX_NONE; dd = doc_next[dd]) {
            if (seen[dd / 8] & (1u << (dd % 8)))
                FAIL(DEDUP_EFORMAT, l->doc_next + (uint64_t)dd * 4, "document on two lists");
            seen[dd / 8] |= (uint8_t)(1u << (dd % 8));
            if (doc_fp[dd] != t0[i])
                FAIL(DEDUP_EFORMAT, l->doc_fp + (uint64_t)dd * 8,
                     "document fingerprint differs from its list's");
            visited++;
            last = dd;
        }
        if (last != tail[i])
            FAIL(DEDUP_EFORMAT, l->tail + i * 4, "document list does not end at its tail");
    }
    if (visited != docs)
        FAIL(DEDUP_EFORMAT, l->doc_next, "documents on no list");
fail:
    free(seen);
    return rc;
}

/* 7. Points the index's documents, ids and lists into the data (zero copy). */
static void point_into(struct dedup_index *idx, const uint8_t *p, const struct layout *l,
                       const struct header *h)
{
    for (unsigned t = idx->ntables; t < DEDUP_MAX_TABLES; t++) {
        idx->tab[t] = NULL;
        idx->dir[t] = NULL;
    }
    idx->docs_owned = idx->main_owned = idx->tail_owned = false;
    idx->ndocs = (uint32_t)h->docs;
    idx->cap_docs = (uint32_t)h->docs;
    idx->absorbed = (uint32_t)h->docs;
    idx->doc_fp = (uint64_t *)(uintptr_t)(p + l->doc_fp);
    idx->doc_next = (uint32_t *)(uintptr_t)(p + l->doc_next);
    idx->id_off = (uint64_t *)(uintptr_t)(p + l->id_off);
    idx->id_bytes = (char *)(uintptr_t)(p + l->id_bytes);
    idx->id_len = h->id_bytes;
    idx->id_cap = h->id_bytes;
    idx->nmain = (uint32_t)h->distinct;
    idx->head = (uint32_t *)(uintptr_t)(p + l->head);
    idx->tail = (uint32_t *)(uintptr_t)(p + l->tail);
    idx->dir_bits = h->dir_bits;
    idx->pair_gen = h->pair_gen;
}

/* Loads an index from p (len bytes, 8-byte aligned, kept by the caller while the index
 * lives) in the steps above; 6 is the template section. */
static enum dedup_code load_core(const uint8_t *p, size_t len, unsigned flags,
                                 struct dedup_index **out, struct dedup_file_error *err)
{
    enum dedup_code rc;
    struct dedup_index *idx = NULL;
    struct header h;
    struct layout l;
    *out = NULL;
    rc = check_header(p, len, flags, &h, err);
    if (rc != DEDUP_OK)
        return rc;
    rc = ix_new(&h.design, &idx);
    if (rc == DEDUP_ENOMEM)
        FAIL(DEDUP_ENOMEM, 0, "out of memory");
    if (rc != DEDUP_OK)
        FAIL(DEDUP_EFORMAT, HDR_K, "invalid table design (k, levels, blocks, tables)");
    if ((rc = check_counts(p, len, flags, idx, &h, &l, err)) != DEDUP_OK ||
        (rc = check_ids(p, &l, &h, err)) != DEDUP_OK ||
        (rc = check_tables(p, &l, &h, idx, err)) != DEDUP_OK ||
        (rc = check_lists(p, &l, &h, err)) != DEDUP_OK)
        goto fail;
    if (h.tpl_bytes) {
        struct dedup_parse_error perr;
        rc = dedup_templates_parse(p + l.templates, (size_t)h.tpl_bytes, &idx->templates, &perr);
        if (rc == DEDUP_ETOOLARGE)
            rc = DEDUP_EFORMAT;
        if (rc != DEDUP_OK)
            FAIL(rc, l.templates + perr.offset, perr.what);
    }
    point_into(idx, p, &l, &h);
    *out = idx;
    return DEDUP_OK;
fail:
    if (idx) {
        /* nothing points into the data yet except tables: drop those references */
        for (unsigned t = 0; t < DEDUP_MAX_TABLES; t++) {
            idx->tab[t] = NULL;
            idx->dir[t] = NULL;
        }
        idx->main_owned = false;
        dedup_index_free(idx);
    }
    return rc;
}

enum dedup_code dedup_index_load_mem(const void *data, size_t len, unsigned flags,
                                     struct dedup_index **out, struct dedup_file_error *err)
{
    struct dedup_file_error dummy;
    if (!err)
        err = &dummy;
    *err = (struct dedup_file_error){0, "", 0};
    return load_core(data, len, flags, out, err);
}

/* Does DEDUP_INDEX_LOAD_OWN read a file of len bytes into ix_big_alloc's block instead of
 * mapping it (why: dedup.h)? From IX_HUGE_MIN on, where that block is in huge pages (no
 * file with -DIX_HUGE_MIN=0). The load reads every byte either way (the checksum, the
 * tables' order). */
static bool read_own(unsigned flags, size_t len)
{
#if IX_HUGE_MIN > 0
    return (flags & DEDUP_INDEX_LOAD_OWN) && len >= IX_HUGE_MIN;
#else
    (void)flags;
    (void)len;
    return false;
#endif
}

/* The whole file fd of len bytes in a block of its own (free()), or NULL with *rc and err
 * set: DEDUP_ENOMEM, or DEDUP_EIO when a read fails or the file ends early. */
static void *read_whole(int fd, size_t len, struct dedup_file_error *err, enum dedup_code *rc)
{
    char *p = ix_big_alloc(len);
    if (!p) {
        err->what = "out of memory";
        *rc = DEDUP_ENOMEM;
        return NULL;
    }
    for (size_t got = 0; got < len;) {
        size_t want = len - got < ((size_t)1 << 30) ? len - got : (size_t)1 << 30;
        ssize_t r = pread(fd, p + got, want, (off_t)got);
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0) {
            err->offset = got;
            err->os_error = r < 0 ? errno : 0;
            err->what = r < 0 ? "cannot read" : "file ended while read";
            free(p);
            *rc = DEDUP_EIO;
            return NULL;
        }
        got += (size_t)r;
    }
    return p;
}

enum dedup_code dedup_index_load(const char *path, unsigned flags, struct dedup_index **out,
                                 struct dedup_file_error *err)
{
    struct dedup_file_error dummy;
    struct stat st;
    if (!err)
        err = &dummy;
    *err = (struct dedup_file_error){0, "", 0};
    *out = NULL;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        err->os_error = errno;
        err->what = "cannot open";
        return DEDUP_EIO;
    }
    if (fstat(fd, &st) != 0) {
        err->os_error = errno;
        err->what = "cannot stat";
        close(fd);
        return DEDUP_EIO;
    }
    if (!S_ISREG(st.st_mode)) {
        close(fd);
        err->what = "not a regular file";
        return DEDUP_EIO;
    }
    if (st.st_size == 0) {
        close(fd);
        err->what = "empty file, not a simcrawl index file";
        return DEDUP_EFORMAT;
    }
    size_t len = (size_t)st.st_size;
    bool own = read_own(flags, len);
    enum dedup_code rc = DEDUP_OK;
    void *data;
    if (own) {
        data = read_whole(fd, len, err, &rc);
        close(fd);
        if (!data)
            return rc;
    } else {
        data = mmap(NULL, len, PROT_READ, MAP_PRIVATE, fd, 0);
        int merr = errno;
        close(fd);
        if (data == MAP_FAILED) {
            err->os_error = merr;
            err->what = "cannot map";
            return DEDUP_EIO;
        }
    }
    if ((rc = load_core(data, len, flags, out, err)) != DEDUP_OK) {
        if (own)
            free(data);
        else
            munmap(data, len);
        return rc;
    }
    (*out)->map = data;
    (*out)->map_len = len;
    (*out)->map_is_mmap = !own;
    (*out)->map_is_heap = own;
    return DEDUP_OK;
}
