/*
 * The WARC writer: WARC/1.1 records (ISO 28500:2017; the 1.1 text at
 * iipc.github.io/warc-specifications), each in a gzip member of its own (RFC 1952), so any
 * record can be read from its offset alone. Response, request and revisit records are
 * built whole in memory and compressed as one buffer into one complete member: at levels
 * 1-3 by ISA-L's igzip (isal_deflate_stateless, its levels 1-3), above by libdeflate
 * (libdeflate_gzip_compress, same level). Both beat zlib, which a crawl with a WARC spends
 * a fifth of its CPU on otherwise: over python3.11-doc's 50 MB of pages, one record each,
 * zlib level 1 takes 0.35 s for 9.2 MB, libdeflate level 1 0.17 s for 8.3 MB, ISA-L level 1
 * 0.08 s for 8.9 MB. The warcinfo record and records streamed from an input too large to
 * hold go through zlib's deflate (windowBits 15+16), a piece at a time. All make plain
 * gzip members (RFC 1952): zcat, zlib and warcio read the file as before.
 *
 * Every file starts with a warcinfo record (the others name it in WARC-Warcinfo-ID). A fetch
 * becomes a request and a response record pointing at each other with WARC-Concurrent-To; both
 * carry WARC-Block-Digest, the response also WARC-Payload-Digest (sha1 base32) over the entity body
 * with the chunked transfer coding removed and the content coding kept (section 5.9 of the spec:
 * the payload is the entity, not the transfer). An exact duplicate becomes a revisit
 * record, profile identical-payload-digest, whose block is the HTTP head only and which
 * carries WARC-Refers-To, -Target-URI and -Date so that replay tools find the original.
 *
 * A record copied from an input where it was one gzip member goes through as those
 * compressed bytes (crawl__warc_reader_raw_member), so a dedup pass does not deflate again.
 *
 * Files are written as NAME.open and renamed to NAME once complete (as Heritrix does), so
 * a crash never leaves a file that looks finished. Once a file passes rotate_size the
 * next record starts a new file: NAME, then PREFIX-00001.warc.gz, PREFIX-00002.warc.gz...
 * Record ids are random (version 4) UUIDs from getrandom(2).
 *
 * HOW IT WORKS (two-step writing, for threads sharing a writer): crawl_warc_prepare_response
 * and _revisit build the whole records in memory without touching the file: ids, dates,
 * SHA-1 digests, the header text and the compressed gzip members. The only thing in them
 * that depends on the file is the value of WARC-Warcinfo-ID; prepare takes it (with the
 * file's number) from a snapshot guarded by the writer's own mutex, and remembers where it
 * sits in each header (ids all have the same length). crawl_warc_prepared_append, called
 * serialised like every other writer call, rotates as before; when the file changed since
 * prepare, it writes the new warcinfo id over the old one and compresses again (rare:
 * once per rotation and thread). Then it writes the bytes. The one-call functions are
 * prepare + append, so both paths write the same records.
 */
#include "crawler/crawl.h"
#include "crawler/warc_int.h"

#include <errno.h>
#include <pthread.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>
#include <isa-l/igzip_lib.h>
#include <libdeflate.h>
#include <zlib.h>

#define OUT_BUF (256u * 1024) /* bytes gathered before a write(2) */
#define POOL_MAX 16u          /* idle compressors kept for reuse by prepare */
#define ISAL_LEVEL_MAX 3      /* levels 1..3 go to ISA-L (its levels 1..3), above to libdeflate */
#define DEFLATER_SCRATCH_KEEP (4u << 20) /* a pooled compressor keeps a gather buffer this big */
#define FIELDS_MAX (64u * 1024)          /* cap of the generated header fields of one record */
#define PATH_MAX_LEN 4096u

/* One thread's compressor for whole records (prep_encode), at the writer's level. */
struct deflater {
    int level;
    struct libdeflate_compressor *ld; /* levels above ISAL_LEVEL_MAX, and the fallback */
    struct isal_zstream *z;           /* levels 1..ISAL_LEVEL_MAX: ISA-L's stream state ... */
    unsigned char *lbuf;              /* ... and its level buffer */
    size_t lbuf_size;
    unsigned char *scratch; /* a record gathered into one buffer, kept for the */
    size_t scratch_cap;     /* next one up to DEFLATER_SCRATCH_KEEP bytes */
};

static void deflater_free(struct deflater *d)
{
    if (!d)
        return;
    libdeflate_free_compressor(d->ld);
    free(d->z);
    free(d->lbuf);
    free(d->scratch);
    free(d);
}

static struct deflater *deflater_new(int level)
{
    struct deflater *d = calloc(1, sizeof *d);
    if (!d)
        return NULL;
    d->level = level;
    d->ld = libdeflate_alloc_compressor(level);
    if (!d->ld) {
        deflater_free(d);
        return NULL;
    }
    if (level <= ISAL_LEVEL_MAX) {
        static const size_t sizes[ISAL_LEVEL_MAX + 1] = {
            0, ISAL_DEF_LVL1_DEFAULT, ISAL_DEF_LVL2_DEFAULT, ISAL_DEF_LVL3_DEFAULT};
        d->lbuf_size = sizes[level];
        /* zeroed: isal_deflate_stateless_init leaves hist_bits (and most of the struct)
         * as it finds it, and a leftover hist_bits of 1..14 shrinks the window: the same
         * record then compresses to other bytes (measured: 723 -> 2,675 bytes) */
        d->z = calloc(1, sizeof *d->z);
        d->lbuf = malloc(d->lbuf_size);
        if (!d->z || !d->lbuf) {
            deflater_free(d);
            return NULL;
        }
    }
    return d;
}

/* Compresses in[0..len) into one whole gzip member at out (room: deflate_bound(len)).
 * Returns its size, 0 on failure. */
static size_t deflater_gzip(struct deflater *d, const unsigned char *in, size_t len,
                            unsigned char *out, size_t room)
{
    if (d->z && len <= UINT32_MAX / 2 && room <= UINT32_MAX) {
        isal_deflate_stateless_init(d->z);
        d->z->level = (uint32_t)d->level;
        d->z->level_buf = d->lbuf;
        d->z->level_buf_size = (uint32_t)d->lbuf_size;
        d->z->gzip_flag = IGZIP_GZIP;
        d->z->end_of_stream = 1;
        d->z->flush = NO_FLUSH;
        d->z->next_in = (uint8_t *)in;
        d->z->avail_in = (uint32_t)len;
        d->z->next_out = out;
        d->z->avail_out = (uint32_t)room;
        if (isal_deflate_stateless(d->z) == COMP_OK)
            return d->z->total_out;
        /* (cannot happen within the bound: then libdeflate, which always fits it) */
    }
    return libdeflate_gzip_compress(d->ld, in, len, out, room);
}

/* Room for any gzip member of len input bytes from either compressor: libdeflate's bound
 * (its stored-block worst case, with blocks shorter than 65,535 bytes, plus header and
 * trailer) covers ISA-L's ("the input size plus the header size of a stored block", with
 * blocks of up to 65,535 bytes, plus header and trailer); ISA-L failing anyway falls back
 * to libdeflate, which always fits its own bound. */
static size_t deflate_bound(size_t len)
{
    return libdeflate_gzip_compress_bound(NULL, len);
}

struct crawl_warc_writer {
    char base[PATH_MAX_LEN]; /* the name given */
    char path[PATH_MAX_LEN]; /* the current file's final name */
    char tmp[PATH_MAX_LEN];  /* path + ".open" */
    unsigned seq;            /* 0 for the first file */
    int fd;
    int gzip;
    uint64_t size;    /* bytes in the current file */
    uint64_t records; /* records in the current file */
    struct crawl_warc_writer_opts opts;
    z_stream zs;
    int zs_ready;
    int in_member;
    unsigned char *out;
    size_t out_len;
    char warcinfo_id[CRAWL_WARC_ID_SIZE]; /* of the current file, for WARC-Warcinfo-ID */
    /* the snapshot that prepare (any thread) reads: guarded by info_lock */
    pthread_mutex_t info_lock;
    unsigned info_seq;
    char info_id[CRAWL_WARC_ID_SIZE];
    /* idle compressors for prep_encode (any thread): also guarded by info_lock */
    struct deflater *pool[POOL_MAX];
    unsigned pool_n;
    uint8_t rnd[512];
    size_t rnd_left;
    enum crawl_code failed; /* sticky after an I/O error */
    char error[2 * PATH_MAX_LEN + 256];
};

static void set_io_error(struct crawl_warc_writer *w, const char *what)
{
    if (w->failed == CRAWL_OK)
        snprintf(w->error, sizeof w->error, "cannot %s %s: %s", what, w->tmp, strerror(errno));
    w->failed = CRAWL_EIO;
}

/* ---- bytes to the file ---- */

static int flush_out(struct crawl_warc_writer *w)
{
    size_t done = 0;
    while (done < w->out_len) {
        ssize_t n = write(w->fd, w->out + done, w->out_len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            set_io_error(w, "write");
            return -1;
        }
        done += (size_t)n;
    }
    w->size += w->out_len;
    w->out_len = 0;
    return 0;
}

/* Feeds data into the current record (compressed or not). flush: Z_NO_FLUSH or Z_FINISH. */
static int emit(struct crawl_warc_writer *w, const void *data, size_t len, int flush)
{
    if (w->failed)
        return -1;
    if (!w->gzip) {
        const unsigned char *p = data;
        while (len > 0) {
            size_t k = OUT_BUF - w->out_len < len ? OUT_BUF - w->out_len : len;
            memcpy(w->out + w->out_len, p, k);
            w->out_len += k;
            p += k;
            len -= k;
            if (w->out_len == OUT_BUF && flush_out(w) != 0)
                return -1;
        }
        return 0;
    }
    w->zs.next_in = (Bytef *)data;
    w->zs.avail_in = 0;
    const unsigned char *p = data;
    size_t left = len;
    for (;;) {
        if (w->zs.avail_in == 0 && left > 0) {
            size_t k = left > (1u << 30) ? (1u << 30) : left;
            w->zs.next_in = (Bytef *)p;
            w->zs.avail_in = (uInt)k;
            p += k;
            left -= k;
        }
        int mode = left == 0 ? flush : Z_NO_FLUSH;
        w->zs.next_out = w->out + w->out_len;
        w->zs.avail_out = (uInt)(OUT_BUF - w->out_len);
        int rc = deflate(&w->zs, mode);
        w->out_len = OUT_BUF - w->zs.avail_out;
        if (rc == Z_STREAM_ERROR) {
            snprintf(w->error, sizeof w->error, "deflate failed");
            w->failed = CRAWL_ENOMEM;
            return -1;
        }
        if (w->out_len == OUT_BUF && flush_out(w) != 0)
            return -1;
        if (mode == Z_FINISH && rc == Z_STREAM_END)
            return 0;
        if (mode != Z_FINISH && w->zs.avail_in == 0 && left == 0 && w->zs.avail_out > 0)
            return 0;
    }
}

static int member_begin(struct crawl_warc_writer *w)
{
    if (w->gzip && deflateReset(&w->zs) != Z_OK) {
        w->failed = CRAWL_ENOMEM;
        return -1;
    }
    w->in_member = 1;
    return 0;
}

static int member_end(struct crawl_warc_writer *w)
{
    w->in_member = 0;
    if (emit(w, "\r\n\r\n", 4, Z_FINISH) != 0)
        return -1;
    w->records++;
    /* write out each member completely, so the file only ever ends between members
     * once the writer is idle */
    return flush_out(w);
}

/* A whole record already compressed (a gzip member copied from the input). */
static enum crawl_code write_bytes(struct crawl_warc_writer *w, const char *data, size_t len)
{
    if (w->failed)
        return w->failed;
    if (flush_out(w) != 0)
        return w->failed;
    size_t done = 0;
    while (done < len) {
        ssize_t n = write(w->fd, data + done, len - done);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0) {
            set_io_error(w, "write");
            return w->failed;
        }
        done += (size_t)n;
    }
    w->size += len;
    w->records++;
    return CRAWL_OK;
}

/* ---- ids, dates ---- */

static int random_bytes(struct crawl_warc_writer *w, uint8_t *out, size_t n)
{
    if (w->rnd_left < n) {
        size_t got = 0;
        while (got < sizeof w->rnd) {
            ssize_t k = getrandom(w->rnd + got, sizeof w->rnd - got, 0);
            if (k < 0 && errno == EINTR)
                continue;
            if (k < 0)
                return -1;
            got += (size_t)k;
        }
        w->rnd_left = sizeof w->rnd;
    }
    memcpy(out, w->rnd + sizeof w->rnd - w->rnd_left, n);
    w->rnd_left -= n;
    return 0;
}

/* "<urn:uuid:xxxxxxxx-xxxx-4xxx-yxxx-xxxxxxxxxxxx>", RFC 4122 version 4, from 16 random
 * bytes. Always CRAWL_WARC_ID_SIZE - 1 characters. */
static void format_id(uint8_t b[16], char out[CRAWL_WARC_ID_SIZE])
{
    b[6] = (uint8_t)((b[6] & 0x0f) | 0x40);
    b[8] = (uint8_t)((b[8] & 0x3f) | 0x80);
    snprintf(out, CRAWL_WARC_ID_SIZE,
             "<urn:uuid:%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x>",
             b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7], b[8], b[9], b[10], b[11], b[12], b[13],
             b[14], b[15]);
}

static int new_id(struct crawl_warc_writer *w, char out[CRAWL_WARC_ID_SIZE])
{
    uint8_t b[16];
    if (random_bytes(w, b, sizeof b) != 0) {
        snprintf(w->error, sizeof w->error, "getrandom failed: %s", strerror(errno));
        w->failed = CRAWL_EIO;
        return -1;
    }
    format_id(b, out);
    return 0;
}

/* An id for prepare (any thread): getrandom(2) directly, no state of the writer. */
static int new_id_ts(char out[CRAWL_WARC_ID_SIZE])
{
    uint8_t b[16];
    size_t got = 0;
    while (got < sizeof b) {
        ssize_t k = getrandom(b + got, sizeof b - got, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k < 0)
            return -1;
        got += (size_t)k;
    }
    format_id(b, out);
    return 0;
}

enum crawl_code crawl_warc_new_record_id(char out[CRAWL_WARC_ID_SIZE])
{
    return new_id_ts(out) == 0 ? CRAWL_OK : CRAWL_EIO;
}

static void now_iso(char out[32])
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    struct tm tm;
    gmtime_r(&ts.tv_sec, &tm);
    strftime(out, 32, "%Y-%m-%dT%H:%M:%SZ", &tm);
}

/* Header values may not hold CR or LF (they would end the field). */
static int clean_value(const char *s)
{
    return s && !strpbrk(s, "\r\n");
}

/* ---- building records ---- */

struct fields {
    char buf[FIELDS_MAX];
    size_t len;
    int overflow;
};

__attribute__((format(printf, 2, 3))) static void addf(struct fields *f, const char *fmt, ...)
{
    if (f->overflow)
        return;
    va_list ap;
    va_start(ap, fmt);
    int n = vsnprintf(f->buf + f->len, sizeof f->buf - f->len, fmt, ap);
    va_end(ap);
    if (n < 0 || (size_t)n >= sizeof f->buf - f->len)
        f->overflow = 1;
    else
        f->len += (size_t)n;
}

/* Writes "WARC/1.1", the fields, Content-Length, the empty line, the block parts and the
 * record end, as one member. */
static enum crawl_code write_record(struct crawl_warc_writer *w, struct fields *f,
                                    const char *const *parts, const size_t *lens, int nparts)
{
    if (w->failed)
        return w->failed;
    if (f->overflow)
        return CRAWL_ETOOLARGE;
    uint64_t total = 0;
    for (int i = 0; i < nparts; i++)
        total += lens[i];
    char head[64];
    int hl = snprintf(head, sizeof head, "Content-Length: %llu\r\n\r\n", (unsigned long long)total);
    if (member_begin(w) != 0 || emit(w, "WARC/1.1\r\n", 10, Z_NO_FLUSH) != 0 ||
        emit(w, f->buf, f->len, Z_NO_FLUSH) != 0 || emit(w, head, (size_t)hl, Z_NO_FLUSH) != 0)
        return w->failed;
    for (int i = 0; i < nparts; i++)
        if (lens[i] && emit(w, parts[i], lens[i], Z_NO_FLUSH) != 0)
            return w->failed;
    if (member_end(w) != 0)
        return w->failed;
    return CRAWL_OK;
}

static enum crawl_code write_warcinfo(struct crawl_warc_writer *w)
{
    struct fields f = {.len = 0};
    char id[CRAWL_WARC_ID_SIZE], date[32];
    if (new_id(w, id) != 0)
        return w->failed;
    memcpy(w->warcinfo_id, id, sizeof id);
    pthread_mutex_lock(&w->info_lock);
    memcpy(w->info_id, id, sizeof id);
    w->info_seq = w->seq;
    pthread_mutex_unlock(&w->info_lock);
    now_iso(date);
    const char *name = strrchr(w->path, '/');
    name = name ? name + 1 : w->path;
    addf(&f, "WARC-Type: warcinfo\r\nWARC-Record-ID: %s\r\nWARC-Date: %s\r\n", id, date);
    if (clean_value(name))
        addf(&f, "WARC-Filename: %s\r\n", name);
    addf(&f, "Content-Type: application/warc-fields\r\n");
    char block[2048];
    const char *sw =
        w->opts.software && clean_value(w->opts.software) ? w->opts.software : "simcrawl";
    int bl = snprintf(
        block, sizeof block,
        "software: %s\r\nformat: WARC File Format 1.1\r\n"
        "conformsTo: "
        "http://iipc.github.io/warc-specifications/specifications/warc-format/warc-1.1/\r\n",
        sw);
    if (bl < 0 || (size_t)bl >= sizeof block)
        bl = 0;
    const char *parts[2] = {block, w->opts.info ? w->opts.info : ""};
    size_t lens[2] = {(size_t)bl, w->opts.info ? strlen(w->opts.info) : 0};
    return write_record(w, &f, parts, lens, 2);
}

/* ---- files ---- */

/* The name of file number seq: the given name for 0, else PREFIX-NNNNN.EXT. */
static int file_name(const struct crawl_warc_writer *w, unsigned seq, char *out, size_t cap)
{
    if (seq == 0)
        return snprintf(out, cap, "%s", w->base) < (int)cap ? 0 : -1;
    const char *ext = NULL;
    size_t bl = strlen(w->base);
    static const char *const exts[] = {".warc.gz", ".warc"};
    for (int i = 0; i < 2 && !ext; i++) {
        size_t el = strlen(exts[i]);
        if (bl > el && strcmp(w->base + bl - el, exts[i]) == 0)
            ext = w->base + bl - el;
    }
    if (!ext)
        ext = w->base + bl;
    int n = snprintf(out, cap, "%.*s-%05u%s", (int)(ext - w->base), w->base, seq, ext);
    return n > 0 && (size_t)n < cap ? 0 : -1;
}

static enum crawl_code open_file(struct crawl_warc_writer *w)
{
    if (file_name(w, w->seq, w->path, sizeof w->path) != 0 ||
        (size_t)snprintf(w->tmp, sizeof w->tmp, "%s.open", w->path) >= sizeof w->tmp) {
        snprintf(w->error, sizeof w->error, "output name too long");
        return CRAWL_EINVAL;
    }
    w->fd = open(w->tmp, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
    if (w->fd < 0) {
        set_io_error(w, "create");
        return CRAWL_EIO;
    }
    w->size = 0;
    w->records = 0;
    return write_warcinfo(w);
}

static enum crawl_code close_file(struct crawl_warc_writer *w)
{
    enum crawl_code rc = w->failed;
    if (w->fd < 0)
        return rc;
    if (rc == CRAWL_OK)
        flush_out(w);
    if (close(w->fd) != 0)
        set_io_error(w, "close");
    w->fd = -1;
    if (w->failed == CRAWL_OK && rename(w->tmp, w->path) != 0) {
        int e = errno;
        snprintf(w->error, sizeof w->error, "cannot rename %s to %s: %s", w->tmp, w->path,
                 strerror(e));
        w->failed = CRAWL_EIO;
    }
    return w->failed;
}

/* Before a new record (or pair): start the next file when this one is full. */
static enum crawl_code maybe_rotate(struct crawl_warc_writer *w)
{
    if (w->failed)
        return w->failed;
    if (w->size < w->opts.rotate_size || w->records <= 1)
        return CRAWL_OK;
    enum crawl_code rc = close_file(w);
    if (rc != CRAWL_OK)
        return rc;
    w->seq++;
    return open_file(w);
}

/* A writer with no file open yet; NULL when out of memory or path is bad (*rc says). */
static struct crawl_warc_writer *
writer_new(const char *path, const struct crawl_warc_writer_opts *opts, enum crawl_code *rc)
{
    *rc = CRAWL_EINVAL;
    if (!path || !*path || strlen(path) + 16 >= PATH_MAX_LEN)
        return NULL;
    *rc = CRAWL_ENOMEM;
    struct crawl_warc_writer *w = calloc(1, sizeof *w);
    if (!w)
        return NULL;
    w->fd = -1;
    if (pthread_mutex_init(&w->info_lock, NULL) != 0) {
        free(w);
        return NULL;
    }
    if (opts)
        w->opts = *opts;
    if (!w->opts.rotate_size)
        w->opts.rotate_size = CRAWL_WARC_DEFAULT_ROTATE;
    if (w->opts.gzip_level < 1 || w->opts.gzip_level > 9)
        w->opts.gzip_level = 6;
    snprintf(w->base, sizeof w->base, "%s", path);
    size_t pl = strlen(path);
    w->gzip = !(pl >= 5 && strcmp(path + pl - 5, ".warc") == 0);
    w->out = malloc(OUT_BUF);
    if (!w->out) {
        pthread_mutex_destroy(&w->info_lock);
        free(w);
        return NULL;
    }
    if (w->gzip) {
        if (deflateInit2(&w->zs, w->opts.gzip_level, Z_DEFLATED, 15 + 16, 8, Z_DEFAULT_STRATEGY) !=
            Z_OK) {
            free(w->out);
            pthread_mutex_destroy(&w->info_lock);
            free(w);
            return NULL;
        }
        w->zs_ready = 1;
    }
    *rc = CRAWL_OK;
    return w;
}

/* Frees a writer whose file failed to open (the file, if any, removed when unlink). */
static void writer_abandon(struct crawl_warc_writer *w, int unlink_it)
{
    if (w->fd >= 0) {
        close(w->fd);
        if (unlink_it)
            unlink(w->tmp);
    }
    if (w->zs_ready)
        deflateEnd(&w->zs);
    free(w->out);
    pthread_mutex_destroy(&w->info_lock);
    free(w);
}

enum crawl_code crawl_warc_writer_open(const char *path, const struct crawl_warc_writer_opts *opts,
                                       struct crawl_warc_writer **out)
{
    *out = NULL;
    enum crawl_code rc;
    struct crawl_warc_writer *w = writer_new(path, opts, &rc);
    if (!w)
        return rc;
    rc = open_file(w);
    if (rc != CRAWL_OK) {
        /* keep errno's words for the caller: report through the return code only */
        writer_abandon(w, 1);
        return rc;
    }
    *out = w;
    return CRAWL_OK;
}

enum crawl_code crawl_warc_writer_flush(struct crawl_warc_writer *w, int sync,
                                        struct crawl_warc_position *pos)
{
    if (w->failed)
        return w->failed;
    if (w->out_len && flush_out(w) != 0)
        return w->failed;
    if (sync && fdatasync(w->fd) != 0) {
        set_io_error(w, "sync");
        return w->failed;
    }
    if (pos) {
        memset(pos, 0, sizeof *pos);
        pos->seq = w->seq;
        pos->offset = w->size;
        pos->records = w->records;
        memcpy(pos->warcinfo_id, w->warcinfo_id, sizeof pos->warcinfo_id);
    }
    return CRAWL_OK;
}

/*
 * HOW IT WORKS (resume). pos is what crawl_warc_writer_flush() said at the last commit:
 * file number seq, its length then, its record count and warcinfo id. That file is
 * NAME.open, or NAME when a rotation renamed it after the commit (it is renamed back);
 * it is cut to pos.offset, which drops the records written after the commit (whole or
 * half), and writing goes on at its end. Files numbered after seq were started after the
 * commit: they hold only uncommitted records and are removed.
 */
enum crawl_code crawl_warc_writer_resume(const char *path,
                                         const struct crawl_warc_writer_opts *opts,
                                         const struct crawl_warc_position *pos,
                                         struct crawl_warc_writer **out)
{
    *out = NULL;
    enum crawl_code rc;
    struct crawl_warc_writer *w = writer_new(path, opts, &rc);
    if (!w)
        return rc;
    w->seq = pos->seq;
    if (file_name(w, w->seq, w->path, sizeof w->path) != 0 ||
        (size_t)snprintf(w->tmp, sizeof w->tmp, "%s.open", w->path) >= sizeof w->tmp) {
        writer_abandon(w, 0);
        return CRAWL_EINVAL;
    }
    struct stat st;
    if (stat(w->tmp, &st) != 0 && stat(w->path, &st) == 0 && rename(w->path, w->tmp) != 0) {
        writer_abandon(w, 0);
        return CRAWL_EIO;
    }
    w->fd = open(w->tmp, O_WRONLY | O_CLOEXEC);
    if (w->fd < 0 || fstat(w->fd, &st) != 0 || (uint64_t)st.st_size < pos->offset ||
        ftruncate(w->fd, (off_t)pos->offset) != 0 ||
        lseek(w->fd, (off_t)pos->offset, SEEK_SET) < 0) {
        writer_abandon(w, 0);
        return CRAWL_EIO;
    }
    for (unsigned n = w->seq + 1;; n++) { /* started after the commit */
        char name[PATH_MAX_LEN + 8];
        if (file_name(w, n, name, sizeof name - 8) != 0)
            break;
        int gone = unlink(name) != 0;
        memcpy(name + strlen(name), ".open", sizeof ".open"); /* room: file_name got 8 less */
        gone &= unlink(name) != 0;
        if (gone)
            break;
    }
    w->size = pos->offset;
    w->records = pos->records;
    memcpy(w->warcinfo_id, pos->warcinfo_id, sizeof w->warcinfo_id);
    memcpy(w->info_id, pos->warcinfo_id, sizeof w->info_id);
    w->info_seq = w->seq;
    *out = w;
    return CRAWL_OK;
}

enum crawl_code crawl_warc_writer_close(struct crawl_warc_writer *w)
{
    if (!w)
        return CRAWL_OK;
    enum crawl_code rc = close_file(w);
    if (w->zs_ready)
        deflateEnd(&w->zs);
    for (unsigned i = 0; i < w->pool_n; i++)
        deflater_free(w->pool[i]);
    free(w->out);
    pthread_mutex_destroy(&w->info_lock);
    free(w);
    return rc;
}

const char *crawl_warc_writer_path(const struct crawl_warc_writer *w)
{
    return w->path;
}

const char *crawl_warc_writer_error(const struct crawl_warc_writer *w)
{
    return w->error;
}

/* ---- the record kinds ---- */

static int contains_ci(const char *s, size_t len, const char *needle)
{
    size_t nl = strlen(needle);
    for (size_t i = 0; i + nl <= len; i++) {
        size_t j = 0;
        while (j < nl && (s[i + j] | 0x20) == needle[j])
            j++;
        if (j == nl)
            return 1;
    }
    return 0;
}

/* Payload digest of a response: over the body, with the chunked coding removed when the
 * head announces it (the content coding stays). */
static enum crawl_code payload_digest(const char *head, size_t head_len, const char *body,
                                      size_t body_len, char out[CRAWL_DIGEST_SIZE])
{
    if (!contains_ci(head, head_len, "chunked"))
        return crawl_digest_sha1(body, body_len, out);
    /* dechunk through the HTTP parser, which looks at the last transfer coding */
    char *msg = malloc(head_len + body_len + 1);
    if (!msg)
        return CRAWL_ENOMEM;
    memcpy(msg, head, head_len);
    memcpy(msg + head_len, body, body_len);
    struct crawl_http_msg *m = NULL;
    enum crawl_code rc = crawl_http_parse(msg, head_len + body_len, NULL, &m);
    free(msg);
    if (rc != CRAWL_OK)
        return rc == CRAWL_ENOMEM ? rc : crawl_digest_sha1(body, body_len, out);
    size_t pl;
    const char *p = crawl_http_payload(m, &pl);
    rc = crawl_digest_sha1(p, pl, out);
    crawl_http_free(m);
    return rc;
}

/* Block digest of parts[0..n). */
static enum crawl_code block_digest(const char *const *parts, const size_t *lens, int n,
                                    char out[CRAWL_DIGEST_SIZE])
{
    struct crawl_digest *d;
    enum crawl_code rc = crawl_digest_new(&d);
    if (rc != CRAWL_OK)
        return rc;
    for (int i = 0; i < n; i++)
        crawl_digest_update(d, parts[i], lens[i]);
    crawl_digest_final(d, out);
    crawl_digest_free(d);
    return CRAWL_OK;
}

/* ---- two-step writing: prepare (any thread), append (serialised) ---- */

#define PREP_RECORDS 2 /* request + response */

struct prep_rec {
    char *head; /* "WARC/1.1\r\n", the fields, Content-Length, the empty line (owned) */
    size_t head_len;
    size_t info_off;      /* where the WARC-Warcinfo-ID value sits in head */
    const char *parts[2]; /* the block, borrowed from the caller until append */
    size_t lens[2];
    int nparts;
};

struct crawl_warc_prepared {
    struct prep_rec rec[PREP_RECORDS];
    int n;
    int gzip; /* as the writer at prepare */
    int level;
    unsigned seq; /* the file whose warcinfo id the headers name */
    char info_id[CRAWL_WARC_ID_SIZE];
    unsigned char *bytes; /* the records as they go to the file (gzip members or plain) */
    size_t len, cap;
    char id[CRAWL_WARC_ID_SIZE]; /* the response's or revisit's WARC-Record-ID */
};

void crawl_warc_prepared_free(struct crawl_warc_prepared *p)
{
    if (!p)
        return;
    for (int i = 0; i < p->n; i++)
        free(p->rec[i].head);
    free(p->bytes);
    free(p);
}

/* Adds a record to p: "WARC/1.1", f's fields, Content-Length and the empty line become the
 * head; f must hold "WARC-Warcinfo-ID: " + the id at info_off (an offset into f->buf). */
static enum crawl_code prep_add(struct crawl_warc_prepared *p, const struct fields *f,
                                size_t info_off, const char *const *parts, const size_t *lens,
                                int nparts)
{
    if (f->overflow)
        return CRAWL_ETOOLARGE;
    uint64_t total = 0;
    for (int i = 0; i < nparts; i++)
        total += lens[i];
    char cl[64];
    int cll = snprintf(cl, sizeof cl, "Content-Length: %llu\r\n\r\n", (unsigned long long)total);
    struct prep_rec *r = &p->rec[p->n];
    r->head_len = 10 + f->len + (size_t)cll;
    r->head = malloc(r->head_len);
    if (!r->head)
        return CRAWL_ENOMEM;
    memcpy(r->head, "WARC/1.1\r\n", 10);
    memcpy(r->head + 10, f->buf, f->len);
    memcpy(r->head + 10 + f->len, cl, (size_t)cll);
    r->info_off = 10 + info_off;
    for (int i = 0; i < nparts; i++) {
        r->parts[i] = parts[i];
        r->lens[i] = lens[i];
    }
    r->nparts = nparts;
    p->n++;
    return CRAWL_OK;
}

/* A compressor at the writer's level: an idle one from the pool, else a new one. */
static struct deflater *pool_take(struct crawl_warc_writer *w, int level)
{
    struct deflater *c = NULL;
    pthread_mutex_lock(&w->info_lock);
    if (w->pool_n > 0)
        c = w->pool[--w->pool_n];
    pthread_mutex_unlock(&w->info_lock);
    return c ? c : deflater_new(level);
}

static void pool_give(struct crawl_warc_writer *w, struct deflater *c)
{
    if (!c)
        return;
    pthread_mutex_lock(&w->info_lock);
    if (w->pool_n < POOL_MAX) {
        w->pool[w->pool_n++] = c;
        c = NULL;
    }
    pthread_mutex_unlock(&w->info_lock);
    deflater_free(c);
}

/*
 * (Re)builds p->bytes from the heads and blocks: one gzip member per record, or plain.
 * A record is compressed as one whole buffer (head, block, CRLF CRLF gathered first) by
 * deflater_gzip (ISA-L or libdeflate, see the top of the file) into a complete RFC 1952
 * member (header, deflate stream, CRC-32, ISIZE); readers (ours: zlib's inflate) see an
 * ordinary gzip member.
 */
static enum crawl_code prep_encode(struct crawl_warc_writer *w, struct crawl_warc_prepared *p)
{
    size_t need = 0, biggest = 0;
    for (int i = 0; i < p->n; i++) {
        const struct prep_rec *r = &p->rec[i];
        size_t in = r->head_len + 4;
        for (int j = 0; j < r->nparts; j++)
            in = in + r->lens[j] < in ? SIZE_MAX : in + r->lens[j];
        if (in == SIZE_MAX)
            return CRAWL_ETOOLARGE;
        if (in > biggest)
            biggest = in;
        size_t out = p->gzip ? deflate_bound(in) : in;
        if (out < in)
            return CRAWL_ETOOLARGE;
        need = need + out < need ? SIZE_MAX : need + out;
    }
    if (need == SIZE_MAX)
        return CRAWL_ETOOLARGE;
    if (need > p->cap) {
        unsigned char *b = realloc(p->bytes, need);
        if (!b)
            return CRAWL_ENOMEM;
        p->bytes = b;
        p->cap = need;
    }
    struct deflater *c = NULL;
    unsigned char *in = NULL, *own = NULL; /* own: a gather buffer too big to keep */
    if (p->gzip) {
        c = pool_take(w, p->level);
        if (!c)
            return CRAWL_ENOMEM;
        if (biggest <= c->scratch_cap) {
            in = c->scratch;
        } else if (biggest <= DEFLATER_SCRATCH_KEEP) {
            /* doubling (from 64 KiB) up to the cap: a few allocations per compressor */
            size_t ncap = c->scratch_cap ? 2 * c->scratch_cap : 64u << 10;
            if (ncap > DEFLATER_SCRATCH_KEEP)
                ncap = DEFLATER_SCRATCH_KEEP;
            if (ncap < biggest)
                ncap = biggest;
            free(c->scratch);
            c->scratch_cap = 0;
            c->scratch = malloc(ncap);
            if (c->scratch)
                c->scratch_cap = ncap;
            in = c->scratch;
        } else {
            in = own = malloc(biggest);
        }
        if (!in) {
            pool_give(w, c);
            return CRAWL_ENOMEM;
        }
    }
    enum crawl_code rc = CRAWL_OK;
    p->len = 0;
    for (int i = 0; i < p->n; i++) {
        const struct prep_rec *r = &p->rec[i];
        unsigned char *o = p->gzip ? in : p->bytes + p->len;
        size_t k = 0;
        memcpy(o, r->head, r->head_len);
        k += r->head_len;
        for (int j = 0; j < r->nparts; j++) {
            if (r->lens[j])
                memcpy(o + k, r->parts[j], r->lens[j]);
            k += r->lens[j];
        }
        memcpy(o + k, "\r\n\r\n", 4);
        k += 4;
        if (!p->gzip) {
            p->len += k;
            continue;
        }
        size_t z = deflater_gzip(c, in, k, p->bytes + p->len, p->cap - p->len);
        if (z == 0) {
            rc = CRAWL_ENOMEM; /* cannot happen within the bound */
            break;
        }
        p->len += z;
    }
    free(own);
    pool_give(w, c);
    return rc;
}

/* A new prepared object with the writer's current warcinfo snapshot. */
static enum crawl_code prep_new(struct crawl_warc_writer *w, struct crawl_warc_prepared **out)
{
    struct crawl_warc_prepared *p = calloc(1, sizeof *p);
    if (!p)
        return CRAWL_ENOMEM;
    p->gzip = w->gzip;
    p->level = w->opts.gzip_level;
    pthread_mutex_lock(&w->info_lock);
    p->seq = w->info_seq;
    memcpy(p->info_id, w->info_id, sizeof p->info_id);
    pthread_mutex_unlock(&w->info_lock);
    *out = p;
    return CRAWL_OK;
}

static enum crawl_code prep_finish(struct crawl_warc_writer *w, struct crawl_warc_prepared *p,
                                   enum crawl_code rc, struct crawl_warc_prepared **out)
{
    if (rc == CRAWL_OK)
        rc = prep_encode(w, p);
    if (rc != CRAWL_OK) {
        crawl_warc_prepared_free(p);
        return rc;
    }
    *out = p;
    return CRAWL_OK;
}

enum crawl_code crawl_warc_prepare_response(struct crawl_warc_writer *w,
                                            const struct crawl_warc_exchange *x,
                                            struct crawl_warc_prepared **out)
{
    if (!out)
        return CRAWL_EINVAL;
    *out = NULL;
    if (!w || !x || !clean_value(x->uri) || !x->head || (x->ip && !clean_value(x->ip)) ||
        (x->date && !clean_value(x->date)) || (x->body_len && !x->body) ||
        (x->payload_digest && !clean_value(x->payload_digest)) ||
        (x->record_id &&
         (!clean_value(x->record_id) || strlen(x->record_id) >= CRAWL_WARC_ID_SIZE)))
        return CRAWL_EINVAL;
    struct crawl_warc_prepared *p;
    enum crawl_code rc = prep_new(w, &p);
    if (rc != CRAWL_OK)
        return rc;
    char req_id[CRAWL_WARC_ID_SIZE], date[32];
    if (x->record_id)
        snprintf(p->id, CRAWL_WARC_ID_SIZE, "%s", x->record_id);
    if ((!x->record_id && new_id_ts(p->id) != 0) || (x->request && new_id_ts(req_id) != 0))
        return prep_finish(w, p, CRAWL_EIO, out);
    if (x->date)
        snprintf(date, sizeof date, "%s", x->date);
    else
        now_iso(date);
    const char *body = x->body ? x->body : "";
    const char *parts[2] = {x->head, body};
    size_t lens[2] = {x->head_len, x->body_len};
    char bdig[CRAWL_DIGEST_SIZE], pdig[CRAWL_DIGEST_SIZE];
    rc = block_digest(parts, lens, 2, bdig);
    if (rc == CRAWL_OK && x->payload_digest)
        snprintf(pdig, sizeof pdig, "%s", x->payload_digest);
    else if (rc == CRAWL_OK)
        rc = payload_digest(x->head, x->head_len, body, x->body_len, pdig);
    if (rc != CRAWL_OK)
        return prep_finish(w, p, rc, out);

    struct fields *f = malloc(sizeof *f);
    if (!f)
        return prep_finish(w, p, CRAWL_ENOMEM, out);
    f->len = 0;
    f->overflow = 0;
    size_t info_off;
    if (x->request) {
        char qdig[CRAWL_DIGEST_SIZE];
        rc = crawl_digest_sha1(x->request, x->request_len, qdig);
        addf(f,
             "WARC-Type: request\r\nWARC-Record-ID: %s\r\nWARC-Date: %s\r\n"
             "WARC-Target-URI: %s\r\nWARC-Concurrent-To: %s\r\n",
             req_id, date, x->uri, p->id);
        if (x->ip)
            addf(f, "WARC-IP-Address: %s\r\n", x->ip);
        addf(f, "WARC-Warcinfo-ID: ");
        info_off = f->len;
        addf(f,
             "%s\r\nContent-Type: application/http;msgtype=request\r\n"
             "WARC-Block-Digest: %s\r\n",
             p->info_id, qdig);
        const char *rp[1] = {x->request};
        size_t rl[1] = {x->request_len};
        if (rc == CRAWL_OK)
            rc = prep_add(p, f, info_off, rp, rl, 1);
        f->len = 0;
    }
    addf(f, "WARC-Type: response\r\nWARC-Record-ID: %s\r\nWARC-Date: %s\r\nWARC-Target-URI: %s\r\n",
         p->id, date, x->uri);
    if (x->request)
        addf(f, "WARC-Concurrent-To: %s\r\n", req_id);
    if (x->ip)
        addf(f, "WARC-IP-Address: %s\r\n", x->ip);
    addf(f, "WARC-Warcinfo-ID: ");
    info_off = f->len;
    addf(f,
         "%s\r\nContent-Type: application/http;msgtype=response\r\n"
         "WARC-Block-Digest: %s\r\nWARC-Payload-Digest: %s\r\n",
         p->info_id, bdig, pdig);
    if (rc == CRAWL_OK)
        rc = prep_add(p, f, info_off, parts, lens, 2);
    free(f);
    return prep_finish(w, p, rc, out);
}

enum crawl_code crawl_warc_prepare_revisit(struct crawl_warc_writer *w,
                                           const struct crawl_warc_revisit *v,
                                           struct crawl_warc_prepared **out)
{
    if (!out)
        return CRAWL_EINVAL;
    *out = NULL;
    if (!w || !v || !clean_value(v->uri) || !v->head || !clean_value(v->payload_digest) ||
        !clean_value(v->refers_to) || !clean_value(v->refers_to_uri) ||
        !clean_value(v->refers_to_date) || (v->ip && !clean_value(v->ip)) ||
        (v->date && !clean_value(v->date)))
        return CRAWL_EINVAL;
    struct crawl_warc_prepared *p;
    enum crawl_code rc = prep_new(w, &p);
    if (rc != CRAWL_OK)
        return rc;
    char date[32], bdig[CRAWL_DIGEST_SIZE];
    if (new_id_ts(p->id) != 0)
        return prep_finish(w, p, CRAWL_EIO, out);
    if (v->date)
        snprintf(date, sizeof date, "%s", v->date);
    else
        now_iso(date);
    rc = crawl_digest_sha1(v->head, v->head_len, bdig);
    if (rc != CRAWL_OK)
        return prep_finish(w, p, rc, out);
    struct fields *f = malloc(sizeof *f);
    if (!f)
        return prep_finish(w, p, CRAWL_ENOMEM, out);
    f->len = 0;
    f->overflow = 0;
    addf(f, "WARC-Type: revisit\r\nWARC-Record-ID: %s\r\nWARC-Date: %s\r\nWARC-Target-URI: %s\r\n",
         p->id, date, v->uri);
    if (v->ip)
        addf(f, "WARC-IP-Address: %s\r\n", v->ip);
    addf(f, "WARC-Warcinfo-ID: ");
    size_t info_off = f->len;
    addf(f, "%s\r\n", p->info_id);
    addf(f,
         "WARC-Profile: http://netpreserve.org/warc/1.1/revisit/identical-payload-digest\r\n"
         "WARC-Refers-To: %s\r\nWARC-Refers-To-Target-URI: %s\r\nWARC-Refers-To-Date: %s\r\n"
         "WARC-Payload-Digest: %s\r\n",
         v->refers_to, v->refers_to_uri, v->refers_to_date, v->payload_digest);
    /* a revisit of a resource record has an empty block: no Content-Type (WARC 1.1 5.6) */
    if (v->head_len)
        addf(f, "Content-Type: application/http;msgtype=response\r\n");
    addf(f, "WARC-Block-Digest: %s\r\n", bdig);
    const char *parts[1] = {v->head};
    size_t lens[1] = {v->head_len};
    rc = prep_add(p, f, info_off, parts, lens, 1);
    free(f);
    return prep_finish(w, p, rc, out);
}

enum crawl_code crawl_warc_prepared_append(struct crawl_warc_writer *w,
                                           struct crawl_warc_prepared *p,
                                           char id_out[CRAWL_WARC_ID_SIZE])
{
    if (!w || !p || p->n == 0 || p->gzip != w->gzip)
        return CRAWL_EINVAL;
    enum crawl_code rc = maybe_rotate(w);
    if (rc != CRAWL_OK)
        return rc;
    if (p->seq != w->seq || memcmp(p->info_id, w->warcinfo_id, sizeof p->info_id) != 0) {
        /* the file changed since prepare: name its warcinfo record, compress again */
        size_t il = strlen(w->warcinfo_id);
        for (int i = 0; i < p->n; i++)
            if (il != CRAWL_WARC_ID_SIZE - 1 || p->rec[i].info_off + il > p->rec[i].head_len)
                return CRAWL_EINVAL;
        for (int i = 0; i < p->n; i++)
            memcpy(p->rec[i].head + p->rec[i].info_off, w->warcinfo_id, il);
        memcpy(p->info_id, w->warcinfo_id, sizeof p->info_id);
        p->seq = w->seq;
        rc = prep_encode(w, p);
        if (rc != CRAWL_OK)
            return rc;
    }
    rc = write_bytes(w, (const char *)p->bytes, p->len);
    if (rc != CRAWL_OK)
        return rc;
    w->records += (uint64_t)(p->n - 1); /* write_bytes counted one */
    if (id_out)
        memcpy(id_out, p->id, CRAWL_WARC_ID_SIZE);
    return CRAWL_OK;
}

/* The write_* calls: what prepare_* gave (rc, p), appended and freed. */
static enum crawl_code append_prepared(struct crawl_warc_writer *w, enum crawl_code rc,
                                       struct crawl_warc_prepared *p,
                                       char id_out[CRAWL_WARC_ID_SIZE])
{
    if (rc != CRAWL_OK)
        return rc;
    rc = crawl_warc_prepared_append(w, p, id_out);
    crawl_warc_prepared_free(p);
    return rc;
}

enum crawl_code crawl_warc_write_response(struct crawl_warc_writer *w,
                                          const struct crawl_warc_exchange *x,
                                          char id_out[CRAWL_WARC_ID_SIZE])
{
    struct crawl_warc_prepared *p = NULL;
    enum crawl_code rc = crawl_warc_prepare_response(w, x, &p);
    return append_prepared(w, rc, p, id_out);
}

enum crawl_code crawl_warc_write_revisit(struct crawl_warc_writer *w,
                                         const struct crawl_warc_revisit *v,
                                         char id_out[CRAWL_WARC_ID_SIZE])
{
    struct crawl_warc_prepared *p = NULL;
    enum crawl_code rc = crawl_warc_prepare_revisit(w, v, &p);
    return append_prepared(w, rc, p, id_out);
}

enum crawl_code crawl_warc_write_raw(struct crawl_warc_writer *w, const char *header,
                                     size_t header_len, const char *block, size_t block_len)
{
    if (!header || (block_len && !block))
        return CRAWL_EINVAL;
    enum crawl_code rc = maybe_rotate(w);
    if (rc != CRAWL_OK)
        return rc;
    if (member_begin(w) != 0 || emit(w, header, header_len, Z_NO_FLUSH) != 0 ||
        (block_len && emit(w, block, block_len, Z_NO_FLUSH) != 0) || member_end(w) != 0)
        return w->failed;
    return CRAWL_OK;
}

enum crawl_code crawl_warc_writer_copy(struct crawl_warc_writer *w, struct crawl_warc_reader *r,
                                       const struct crawl_warc_record *rec)
{
    const char *d;
    size_t l;
    enum crawl_code rc = crawl_warc_block(r, &d, &l);
    if (rc == CRAWL_OK && w->gzip) {
        /* a record that is one gzip member of its input goes through as those bytes */
        char *m;
        size_t ml;
        if (crawl__warc_reader_raw_member(r, rec, &m, &ml) != CRAWL_OK)
            return CRAWL_ENOMEM;
        if (m) {
            rc = maybe_rotate(w);
            if (rc == CRAWL_OK)
                rc = write_bytes(w, m, ml);
            free(m);
            return rc;
        }
    }
    if (rc == CRAWL_OK)
        return crawl_warc_write_raw(w, rec->header, rec->header_len, d, l);
    if (rc != CRAWL_ETOOLARGE)
        return rc;
    /* too large to hold: stream it through, and take it back unless it proves whole */
    rc = maybe_rotate(w);
    if (rc != CRAWL_OK)
        return rc;
    if (flush_out(w) != 0)
        return w->failed;
    uint64_t start = w->size;
    if (member_begin(w) != 0 || emit(w, rec->header, rec->header_len, Z_NO_FLUSH) != 0)
        return w->failed;
    char buf[64 * 1024];
    uint64_t copied = 0;
    for (;;) {
        size_t n;
        rc = crawl_warc_read(r, buf, sizeof buf, &n);
        if (rc != CRAWL_OK)
            break;
        if (n == 0)
            break;
        if (emit(w, buf, n, Z_NO_FLUSH) != 0)
            return w->failed;
        copied += n;
    }
    if (rc == CRAWL_OK && copied != rec->content_length)
        rc = CRAWL_ETRUNCATED;
    if (rc != CRAWL_OK) {
        /* damaged (reported by the reader) or unreadable: the file ends where it did */
        w->out_len = 0;
        w->in_member = 0;
        if (w->failed == CRAWL_OK &&
            (ftruncate(w->fd, (off_t)start) != 0 || lseek(w->fd, (off_t)start, SEEK_SET) < 0))
            set_io_error(w, "truncate");
        w->size = start;
        return w->failed != CRAWL_OK ? w->failed : rc;
    }
    if (member_end(w) != 0)
        return w->failed;
    return CRAWL_OK;
}
