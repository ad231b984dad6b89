/*
 * The WARC reader (ISO 28500:2017, WARC/1.0 and WARC/1.1): records come out one at a
 * time through a pull API (crawl_warc_next, then crawl_warc_block or crawl_warc_read),
 * so memory stays bounded by the largest block asked for whole (max_block) plus the
 * header cap, whatever the size of the file.
 *
 * Three layers: the source (a file descriptor or a memory buffer) feeds compressed or
 * plain bytes into `in`; the stream layer turns them into the uncompressed byte stream in
 * the sliding window `win` (zlib inflate with gzip wrapping, restarted at every member
 * end, so files with one member per record and whole-file gzip both stream); the record
 * layer parses "WARC/1.x" header blocks and Content-Length-delimited blocks out of the
 * window. Every gzip member start is remembered with its compressed offset, so a record
 * that starts a member is reported at the member offset, the number CDX indexes and
 * `dd skip=` use. References: ISO 28500 / the WARC 1.1 spec (iipc.github.io/warc-specifications),
 * RFC 1952 (gzip), zlib's inflate() manual (windowBits 15+16).
 */
#include "crawler/crawl.h"
#include "crawler/warc_int.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/stat.h>
#include <unistd.h>
#include <zlib.h>

#define IN_CHUNK (256u * 1024)            /* compressed bytes read at a time */
#define IN_CAP (2 * IN_CHUNK)             /* the input buffer (keeps a member start for resync) */
#define WIN_INITIAL (64u * 1024)          /* first window size; doubles up to win_max */
#define WIN_SLACK (64u * 1024)            /* room above max_block + header cap */
#define MAX_FIELDS 1024u                  /* header fields kept per record */
#define MAX_BOUNDARIES (1u << 16)         /* member starts remembered inside the window */
#define MAX_BLOCK_LIMIT ((size_t)1 << 34) /* sanity bound on opts->max_block */

struct boundary {
    uint64_t soff;     /* offset in the uncompressed stream where the member's output starts */
    uint64_t coff;     /* offset of the member in the file */
    uint64_t end_soff; /* where its output ends, and where it ends in the file: */
    uint64_t end_coff; /* valid once `ended` (inflate reached the member's end) */
    int ended;
    int broken; /* inflate failed in it (bad data, CRC): its output is not to be trusted;
                   end_soff is where that output ends */
};

enum state { ST_START, ST_RECORD, ST_EOF };

struct crawl_warc_reader {
    struct crawl_warc_opts opts;
    size_t max_block;

    /* source */
    int fd;
    int own_fd;
    uint8_t *in; /* IN_CAP bytes, or the caller's memory */
    int in_borrowed;
    size_t in_len, in_pos;
    uint64_t in_file_off; /* file offset of in[0] */
    int in_eof;
    int seekable; /* a regular file: members can be re-read with pread() */

    /* stream layer */
    int gzip;         /* the file starts with the gzip magic */
    unsigned gz_kind; /* 1: one member per record so far; 2: records share members */
    z_stream zs;
    int zs_ready;
    int member_active;
    int member_broken; /* skipping to the next member after damage (reported already) */
    uint64_t member_start;
    int stream_eof;
    struct boundary *bnd;
    size_t n_bnd, cap_bnd;

    char *win;
    size_t win_cap, win_max, win_start, win_len;
    uint64_t win_off; /* stream offset of win[0] */
    int prev;         /* the last byte consumed, for "at the start of a line" */

    /* record layer */
    enum state state;
    struct crawl_warc_record rec;
    struct crawl_warc_field *fields;
    char *hdr_raw, *hdr_parsed;
    size_t hdr_cap;
    uint64_t block_left; /* bytes of the block not consumed yet */
    int block_loaded;    /* crawl_warc_block() has the block in the window */
    int block_damaged;   /* ... and found it damaged: resync from its start */
    int block_touched;   /* crawl_warc_read() consumed some of it */
    int block_cut;       /* it ran into the next gzip member: ended there (reported) */
    int rec_broken;      /* bytes of this record came from a broken gzip member (reported) */
    /* a streamed block (over max_block): checked at its end before it counts as whole */
    int stream_bad;     /* truncated or not followed by CRLF CRLF: resync from its start */
    int stream_checked; /* the end check ran; stream_rc is its verdict */
    enum crawl_code stream_rc;
    struct crawl_digest *dg; /* sha1 of what crawl_warc_read handed out, when dg_on */
    int dg_on;
    uint64_t blk_soff;             /* stream offset of the block start */
    uint64_t blk_msoff, blk_mcoff; /* the gzip member holding it: stream and file offsets */
    int blk_rewind;                /* the input can be read again from there */
    uint64_t quiet_until; /* after a rewind: stream-layer damage before this file offset was
                             reported already */
    /* a streamed block from an input that cannot be read again (a pipe): the stream bytes
     * produced from its start are kept in an anonymous temporary file (tee), and after
     * damage produced again from there (replay) before the live stream goes on */
    int tee_fd;     /* -1: none yet */
    int tee_on;     /* produce() appends what it adds to the window */
    int tee_failed; /* the file could not be made or written (tee_errno) */
    int tee_errno;
    uint64_t tee_soff; /* stream offset of the tee's first byte (the block start) */
    uint64_t tee_len;  /* bytes in the tee */
    int replaying;     /* produce() serves tee[replay_pos .. tee_len) first */
    uint64_t replay_pos;
    uint64_t errors;
};

/* ---- reporting ---- */

static uint64_t member_containing(const struct crawl_warc_reader *r, uint64_t soff)
{
    uint64_t coff = 0;
    for (size_t i = 0; i < r->n_bnd && r->bnd[i].soff <= soff; i++)
        coff = r->bnd[i].coff;
    return coff;
}

/* The file offset to report for stream offset soff: itself in a plain file, the offset
 * of the gzip member it lies in otherwise. */
static uint64_t file_offset(const struct crawl_warc_reader *r, uint64_t soff)
{
    return r->gzip ? member_containing(r, soff) : soff;
}

__attribute__((format(printf, 4, 5))) static void
report(struct crawl_warc_reader *r, uint64_t offset, enum crawl_code code, const char *fmt, ...)
{
    char msg[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(msg, sizeof msg, fmt, ap);
    va_end(ap);
    r->errors++;
    if (r->opts.on_error)
        r->opts.on_error(r->opts.userdata, offset, code, msg);
}

/* ---- source ---- */

/* Reads more compressed/plain bytes into `in`, keeping in[keep_from..in_len).
 * Returns CRAWL_OK (possibly with in_eof set) or CRAWL_EIO. */
static enum crawl_code source_fill(struct crawl_warc_reader *r, size_t keep_from)
{
    if (r->in_borrowed || r->in_eof) {
        r->in_eof = 1;
        return CRAWL_OK;
    }
    if (keep_from > 0) {
        memmove(r->in, r->in + keep_from, r->in_len - keep_from);
        r->in_len -= keep_from;
        r->in_pos -= keep_from;
        r->in_file_off += keep_from;
    }
    while (r->in_len < IN_CAP) {
        ssize_t n = read(r->fd, r->in + r->in_len, IN_CAP - r->in_len);
        if (n < 0 && errno == EINTR)
            continue;
        if (n < 0)
            return CRAWL_EIO;
        if (n == 0) {
            r->in_eof = 1;
            break;
        }
        r->in_len += (size_t)n;
        if (r->in_len - r->in_pos >= IN_CHUNK / 2)
            break;
    }
    return CRAWL_OK;
}

/* ---- the stream layer ---- */

static void add_boundary(struct crawl_warc_reader *r, uint64_t soff, uint64_t coff)
{
    if (r->n_bnd && r->bnd[r->n_bnd - 1].soff == soff) {
        r->bnd[r->n_bnd - 1].coff = coff; /* an empty member before this one */
        r->bnd[r->n_bnd - 1].ended = 0;
        r->bnd[r->n_bnd - 1].broken = 0;
        return;
    }
    if (r->n_bnd == r->cap_bnd) {
        if (r->cap_bnd >= MAX_BOUNDARIES) { /* forget the oldest half: offsets get coarser */
            size_t half = r->n_bnd / 2;
            memmove(r->bnd, r->bnd + half, (r->n_bnd - half) * sizeof *r->bnd);
            r->n_bnd -= half;
        } else {
            size_t nc = r->cap_bnd ? r->cap_bnd * 2 : 64;
            struct boundary *nb = realloc(r->bnd, nc * sizeof *nb);
            if (!nb) { /* lose precision, not correctness */
                r->n_bnd = 0;
            } else {
                r->bnd = nb;
                r->cap_bnd = nc;
            }
        }
    }
    if (r->n_bnd < r->cap_bnd)
        r->bnd[r->n_bnd++] = (struct boundary){soff, coff, 0, 0, 0, 0};
}

/* Drops remembered member starts before the one containing stream offset soff. */
static void prune_boundaries(struct crawl_warc_reader *r, uint64_t soff)
{
    size_t keep = 0;
    for (size_t i = 0; i < r->n_bnd && r->bnd[i].soff <= soff; i++)
        keep = i;
    if (keep) {
        memmove(r->bnd, r->bnd + keep, (r->n_bnd - keep) * sizeof *r->bnd);
        r->n_bnd -= keep;
    }
}

static int is_member_start(const struct crawl_warc_reader *r, uint64_t soff)
{
    for (size_t i = r->n_bnd; i-- > 0;) {
        if (r->bnd[i].soff == soff)
            return 1;
        if (r->bnd[i].soff < soff)
            return 0;
    }
    return 0;
}

/* Makes room for at least `room` more bytes at win + win_len. */
static enum crawl_code win_room(struct crawl_warc_reader *r, size_t room)
{
    if (r->win_cap - r->win_len >= room)
        return CRAWL_OK;
    if (r->win_start > 0) {
        memmove(r->win, r->win + r->win_start, r->win_len - r->win_start);
        r->win_off += r->win_start;
        r->win_len -= r->win_start;
        r->win_start = 0;
        if (!r->tee_on) /* a replay still needs the member starts inside the block */
            prune_boundaries(r, r->win_off);
    }
    if (r->win_cap - r->win_len >= room)
        return CRAWL_OK;
    size_t nc = r->win_cap ? r->win_cap : WIN_INITIAL;
    while (nc - r->win_len < room && nc < r->win_max)
        nc *= 2;
    if (nc > r->win_max)
        nc = r->win_max;
    if (nc <= r->win_cap)
        return CRAWL_OK; /* at the cap: the caller gets what fits */
    char *nw = realloc(r->win, nc);
    if (!nw)
        return CRAWL_ENOMEM;
    r->win = nw;
    r->win_cap = nc;
    return CRAWL_OK;
}

/* Scans `in` for the next gzip member magic 1f 8b 08 and positions in_pos there;
 * in_pos at in_len (all but the last 2 bytes dropped) and in_eof when there is none. */
static enum crawl_code find_member(struct crawl_warc_reader *r)
{
    for (;;) {
        const uint8_t *p = r->in + r->in_pos;
        size_t n = r->in_len - r->in_pos;
        for (size_t i = 0; i + 2 < n; i++)
            if (p[i] == 0x1f && p[i + 1] == 0x8b && p[i + 2] == 0x08) {
                r->in_pos += i;
                return CRAWL_OK;
            }
        if (r->in_eof || r->in_borrowed) {
            r->in_pos = r->in_len;
            r->in_eof = 1;
            return CRAWL_OK;
        }
        if (n > 2)
            r->in_pos = r->in_len - 2;
        enum crawl_code rc = source_fill(r, r->in_pos);
        if (rc != CRAWL_OK)
            return rc;
    }
}

/* Starts the member at in_pos, or skips garbage to the next one. Returns CRAWL_OK with
 * member_active set, or CRAWL_EOF. */
static enum crawl_code start_member(struct crawl_warc_reader *r)
{
    enum crawl_code rc;
    if (r->in_len - r->in_pos < 3 && !r->in_eof) {
        rc = source_fill(r, r->in_pos);
        if (rc != CRAWL_OK)
            return rc;
    }
    if (r->in_pos >= r->in_len)
        return CRAWL_EOF;
    const uint8_t *p = r->in + r->in_pos;
    size_t n = r->in_len - r->in_pos;
    if (!(n >= 3 && p[0] == 0x1f && p[1] == 0x8b && p[2] == 0x08)) {
        uint64_t at = r->in_file_off + r->in_pos;
        rc = find_member(r);
        if (rc != CRAWL_OK)
            return rc;
        uint64_t skipped = r->in_file_off + r->in_pos - at;
        if (!r->member_broken && at >= r->quiet_until)
            report(r, at, CRAWL_EGZIP, "%llu bytes of garbage between gzip members%s",
                   (unsigned long long)skipped, r->in_pos >= r->in_len ? " at the end" : "");
        if (r->in_pos >= r->in_len)
            return CRAWL_EOF;
    }
    r->member_broken = 0;
    if (inflateReset(&r->zs) != Z_OK)
        return CRAWL_ENOMEM;
    r->member_active = 1;
    r->member_start = r->in_file_off + r->in_pos;
    add_boundary(r, r->win_off + r->win_len, r->member_start);
    return CRAWL_OK;
}

/* After a broken member: look for the next member from just after the broken one's
 * start when those bytes are still at hand, from here otherwise. */
static void resync_member(struct crawl_warc_reader *r)
{
    r->member_active = 0;
    r->member_broken = 1;
    if (r->member_start >= r->in_file_off && r->member_start + 1 - r->in_file_off <= r->in_len)
        r->in_pos = (size_t)(r->member_start + 1 - r->in_file_off);
}

/* The current record's extent in the stream: header, block and CRLF CRLF. */
static uint64_t record_end(const struct crawl_warc_reader *r)
{
    return r->rec.stream_offset + r->rec.header_len + r->rec.content_length + 4;
}

/* Does the output of a broken member overlap stream offsets [lo, hi)? */
static int broken_in(const struct crawl_warc_reader *r, uint64_t lo, uint64_t hi)
{
    for (size_t i = 0; i < r->n_bnd; i++) {
        const struct boundary *b = &r->bnd[i];
        uint64_t end = i + 1 < r->n_bnd ? r->bnd[i + 1].soff : b->end_soff;
        if (b->broken && b->soff < hi && end > lo)
            return 1;
    }
    return 0;
}

/* The member being inflated failed: its output (so far) is not to be trusted. */
static void mark_broken(struct crawl_warc_reader *r)
{
    uint64_t end = r->win_off + r->win_len;
    if (r->n_bnd && r->bnd[r->n_bnd - 1].coff == r->member_start) {
        r->bnd[r->n_bnd - 1].broken = 1;
        r->bnd[r->n_bnd - 1].end_soff = end;
        if (r->state == ST_RECORD && r->bnd[r->n_bnd - 1].soff < record_end(r) &&
            end > r->rec.stream_offset)
            r->rec_broken = 1;
    } else if (r->state == ST_RECORD) {
        r->rec_broken = 1; /* the member start was forgotten: assume the worst */
    }
}

/* Adds some bytes to the window from the input (at least one unless the stream ends).
 * CRAWL_OK, CRAWL_EOF (nothing more), or a fatal code. */
static enum crawl_code produce_live(struct crawl_warc_reader *r)
{
    enum crawl_code rc;
    if (r->stream_eof)
        return CRAWL_EOF;
    rc = win_room(r, 64 * 1024);
    if (rc != CRAWL_OK)
        return rc;
    size_t space = r->win_cap - r->win_len;
    if (space == 0)
        return CRAWL_ETOOLARGE;
    if (!r->gzip) {
        if (r->in_pos < r->in_len) {
            size_t n = r->in_len - r->in_pos < space ? r->in_len - r->in_pos : space;
            memcpy(r->win + r->win_len, r->in + r->in_pos, n);
            r->in_pos += n;
            r->win_len += n;
            return CRAWL_OK;
        }
        if (r->in_borrowed || r->in_eof) {
            r->stream_eof = 1;
            return CRAWL_EOF;
        }
        for (;;) {
            ssize_t n = read(r->fd, r->win + r->win_len, space);
            if (n < 0 && errno == EINTR)
                continue;
            if (n < 0)
                return CRAWL_EIO;
            if (n == 0) {
                r->in_eof = 1;
                r->stream_eof = 1;
                return CRAWL_EOF;
            }
            r->in_file_off += (uint64_t)n; /* counts bytes read past `in` */
            r->win_len += (size_t)n;
            return CRAWL_OK;
        }
    }
    size_t before = r->win_len;
    while (r->win_len == before) {
        if (!r->member_active) {
            rc = start_member(r);
            if (rc == CRAWL_EOF) {
                r->stream_eof = 1;
                return CRAWL_EOF;
            }
            if (rc != CRAWL_OK)
                return rc;
        }
        if (r->in_pos == r->in_len) {
            if (r->in_eof) {
                if (r->in_file_off + r->in_pos > r->quiet_until)
                    report(r, r->member_start, CRAWL_EGZIP,
                           "gzip member at offset %llu is truncated (the file ends inside it)",
                           (unsigned long long)r->member_start);
                r->member_active = 0;
                r->stream_eof = 1;
                return r->win_len > before ? CRAWL_OK : CRAWL_EOF;
            }
            size_t keep = r->in_pos;
            if (r->member_start >= r->in_file_off &&
                r->in_pos - (r->member_start - r->in_file_off) <= IN_CHUNK)
                keep = (size_t)(r->member_start - r->in_file_off);
            rc = source_fill(r, keep);
            if (rc != CRAWL_OK)
                return rc;
            continue;
        }
        r->zs.next_in = r->in + r->in_pos;
        r->zs.avail_in = (uInt)(r->in_len - r->in_pos);
        r->zs.next_out = (Bytef *)r->win + r->win_len;
        size_t out_space = r->win_cap - r->win_len;
        r->zs.avail_out = out_space > (1u << 30) ? (1u << 30) : (uInt)out_space;
        uInt avail_out0 = r->zs.avail_out;
        int zrc = inflate(&r->zs, Z_NO_FLUSH);
        r->win_len += avail_out0 - r->zs.avail_out;
        r->in_pos = (size_t)(r->zs.next_in - r->in);
        if (zrc == Z_STREAM_END) {
            r->member_active = 0;
            if (r->n_bnd && r->bnd[r->n_bnd - 1].coff == r->member_start) {
                struct boundary *b = &r->bnd[r->n_bnd - 1];
                b->end_soff = r->win_off + r->win_len;
                b->end_coff = r->in_file_off + r->in_pos;
                b->ended = 1;
            }
        } else if (zrc == Z_DATA_ERROR || zrc == Z_NEED_DICT || zrc == Z_STREAM_ERROR) {
            if (r->in_file_off + r->in_pos > r->quiet_until)
                report(r, r->member_start, CRAWL_EGZIP, "gzip member at offset %llu is broken: %s",
                       (unsigned long long)r->member_start, r->zs.msg ? r->zs.msg : "bad data");
            mark_broken(r);
            resync_member(r);
        } else if (zrc == Z_MEM_ERROR) {
            return CRAWL_ENOMEM;
        }
        /* Z_OK / Z_BUF_ERROR: more input or more output room needed; loop */
        if (r->win_len == r->win_cap)
            break;
    }
    return CRAWL_OK;
}

/* ---- the tee: a streamed block of a pipe, kept to be read again ---- */

/* An anonymous temporary file under $TMPDIR (or /tmp): made, then unlinked at once. */
static int tee_open(struct crawl_warc_reader *r)
{
    const char *dir = getenv("TMPDIR");
    if (!dir || !*dir)
        dir = "/tmp";
    char path[4096];
    if (snprintf(path, sizeof path, "%s/simcrawl-warc-XXXXXX", dir) >= (int)sizeof path) {
        r->tee_errno = ENAMETOOLONG;
        return -1;
    }
    int fd = mkstemp(path);
    if (fd < 0) {
        r->tee_errno = errno;
        return -1;
    }
    unlink(path);
    r->tee_fd = fd;
    return 0;
}

/* Appends stream bytes to the tee; on failure the tee is off (tee_failed, tee_errno). */
static void tee_write(struct crawl_warc_reader *r, const char *p, size_t n)
{
    while (n > 0) {
        ssize_t k = pwrite(r->tee_fd, p, n, (off_t)r->tee_len);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            r->tee_errno = k < 0 ? errno : EIO;
            r->tee_failed = 1;
            r->tee_on = 0;
            return;
        }
        p += k;
        n -= (size_t)k;
        r->tee_len += (uint64_t)k;
    }
}

/* Starts keeping the stream from the block start (win_start, just after its header). */
static void tee_start(struct crawl_warc_reader *r)
{
    r->tee_on = 0;
    r->tee_failed = 0;
    r->tee_len = 0;
    if (r->tee_fd < 0 && tee_open(r) != 0) {
        r->tee_failed = 1;
        return;
    }
    if (ftruncate(r->tee_fd, 0) != 0) {
        r->tee_errno = errno;
        r->tee_failed = 1;
        return;
    }
    r->tee_on = 1;
    r->tee_soff = r->win_off + r->win_start;
    tee_write(r, r->win + r->win_start, r->win_len - r->win_start);
}

/* The block was whole (or is done with): forget its bytes. */
static void tee_stop(struct crawl_warc_reader *r)
{
    r->tee_on = 0;
    if (r->tee_fd >= 0 && r->tee_len > 0 && !r->replaying) {
        r->tee_len = 0;
        if (ftruncate(r->tee_fd, 0) != 0) {
            /* the space comes back when the reader is freed */
        }
    }
}

/* Adds some bytes to the window (at least one unless the stream ends): the tee's first
 * while replaying, else the input's, kept in the tee while it is on.
 * CRAWL_OK, CRAWL_EOF (nothing more), or a fatal code. */
static enum crawl_code produce(struct crawl_warc_reader *r)
{
    if (r->replaying) {
        enum crawl_code rc = win_room(r, 64 * 1024);
        if (rc != CRAWL_OK)
            return rc;
        size_t space = r->win_cap - r->win_len;
        if (space == 0)
            return CRAWL_ETOOLARGE;
        uint64_t left = r->tee_len - r->replay_pos;
        size_t want = left < space ? (size_t)left : space;
        ssize_t k;
        do
            k = pread(r->tee_fd, r->win + r->win_len, want, (off_t)r->replay_pos);
        while (k < 0 && errno == EINTR);
        if (k <= 0) /* the tee file is ours: a failure is the disk's */
            return CRAWL_EIO;
        r->win_len += (size_t)k;
        r->replay_pos += (uint64_t)k;
        if (r->replay_pos == r->tee_len) { /* replayed: the live stream follows */
            r->replaying = 0;
            tee_stop(r);
        }
        return CRAWL_OK;
    }
    uint64_t end = r->win_off + r->win_len;
    enum crawl_code rc = produce_live(r);
    if (r->tee_on && r->win_off + r->win_len > end)
        tee_write(r, r->win + (size_t)(end - r->win_off), (size_t)(r->win_off + r->win_len - end));
    return rc;
}

/* Ensures `need` bytes from win_start are in the window, or as many as the stream has.
 * Returns the number available (may be < need at the end), or a negative crawl_code. */
static enum crawl_code fill(struct crawl_warc_reader *r, size_t need, size_t *avail)
{
    enum crawl_code rc = CRAWL_OK;
    if (need > r->win_max)
        need = r->win_max;
    while (r->win_len - r->win_start < need) {
        if (r->win_cap - r->win_start < need) {
            rc = win_room(r, need - (r->win_len - r->win_start));
            if (rc != CRAWL_OK)
                break;
        }
        rc = produce(r);
        if (rc == CRAWL_EOF) {
            rc = CRAWL_OK;
            break;
        }
        if (rc != CRAWL_OK)
            break;
    }
    *avail = r->win_len - r->win_start;
    return rc;
}

static void consume(struct crawl_warc_reader *r, size_t n)
{
    if (n == 0)
        return;
    r->win_start += n;
    r->prev = (unsigned char)r->win[r->win_start - 1];
}

static uint64_t stream_pos(const struct crawl_warc_reader *r)
{
    return r->win_off + r->win_start;
}

/* ---- the record layer ---- */

static const char MAGIC[] = "WARC/1.";
#define MAGIC_LEN 7

static int at_line_start(const struct crawl_warc_reader *r)
{
    return r->prev == '\n' || stream_pos(r) == 0 || (r->gzip && is_member_start(r, stream_pos(r)));
}

/*
 * HOW IT WORKS: resynchronisation after damage happens at two levels.
 *  - gzip: a member that fails to inflate (bad header, bad deflate data, CRC) is reported
 *    at its offset; the search for the next member magic 1f 8b 08 starts one byte after
 *    the broken member's start when those bytes are still in `in` (so a member truncated
 *    and followed by a good one is found again), else where inflate stopped. Bytes that
 *    are not a member between members are reported as garbage and skipped the same way.
 *  - records: the uncompressed stream must hold "WARC/1.x" header, Content-Length bytes
 *    of block, CRLF CRLF. When the block is not followed by CRLF CRLF (a wrong
 *    Content-Length, or a member lost inside the block), the reader goes back to the start
 *    of the block — still in the window, as blocks up to max_block are read whole — and
 *    scans for the next record start: "WARC/1." at the start of a line or of a gzip
 *    member, or a whole "WARC/1.x\r\n" line anywhere. So a record whose Content-Length
 *    is too large does not swallow the records after it. In a file of one gzip member per
 *    record a block also ends where the next member starts with "WARC/1." (member_limit),
 *    which catches a wrong Content-Length even in blocks too large to hold.
 *  - streamed blocks (over max_block) are judged at their end (stream_end: CRLF CRLF, no
 *    broken member, sha1 WARC-Block-Digest). When one is truncated or not followed by
 *    CRLF CRLF, the records a wrong Content-Length swallowed lie behind us: a regular file
 *    (or memory) is read again from the block start (rewind_block: lseek, or re-inflate
 *    the gzip member holding it, damage already reported staying quiet) and scanned as
 *    above. A pipe cannot be re-read: there the stream bytes produced from the block
 *    start on (decompressed, for gzip) are kept in an anonymous temporary file under
 *    $TMPDIR while the block streams (the tee, at most the block and the window read
 *    ahead of it), and after damage produce() serves them again before the live stream
 *    goes on, so the same scan finds the swallowed records. One level: a damaged block
 *    found inside replayed bytes goes on from where it ended, as before. A tee that
 *    cannot be written is reported when it would have been needed.
 *  - a member that fails to inflate marks its output broken (boundary.broken); a record
 *    with bytes from it is damaged (CRAWL_EGZIP) even when its framing looks whole.
 */

/* Skips to the next "WARC/1." at the start of a line (or of a gzip member).
 * Returns CRAWL_OK positioned there, CRAWL_EOF, or a fatal code. */
static enum crawl_code scan_magic(struct crawl_warc_reader *r)
{
    for (;;) {
        size_t avail;
        enum crawl_code rc = fill(r, 64 * 1024, &avail);
        if (rc != CRAWL_OK)
            return rc;
        if (avail < MAGIC_LEN) {
            if (fill(r, MAGIC_LEN, &avail) != CRAWL_OK || avail < MAGIC_LEN) {
                consume(r, avail);
                return CRAWL_EOF;
            }
        }
        const char *base = r->win + r->win_start;
        size_t i = 0;
        while (i + MAGIC_LEN <= avail) {
            const char *hit = memchr(base + i, 'W', avail - MAGIC_LEN + 1 - i);
            if (!hit)
                break;
            size_t at = (size_t)(hit - base);
            if (memcmp(hit, MAGIC, MAGIC_LEN) == 0) {
                /* a whole version line "WARC/1.x\r\n" counts anywhere (garbage may end
                 * without a newline); a bare "WARC/1." only at the start of a line */
                int full = avail - at >= MAGIC_LEN + 3 && hit[MAGIC_LEN] >= '0' &&
                           hit[MAGIC_LEN] <= '9' && hit[MAGIC_LEN + 1] == '\r' &&
                           hit[MAGIC_LEN + 2] == '\n';
                consume(r, at);
                if (full || at_line_start(r))
                    return CRAWL_OK;
                consume(r, 1);
                base = r->win + r->win_start;
                avail -= at + 1;
                i = 0;
                continue;
            }
            i = at + 1;
        }
        /* keep the last MAGIC_LEN-1 bytes: a magic may straddle the refill */
        size_t drop = avail > MAGIC_LEN - 1 ? avail - (MAGIC_LEN - 1) : 0;
        if (drop == 0) {
            size_t more;
            rc = fill(r, avail + 1, &more);
            if (rc != CRAWL_OK)
                return rc;
            if (more <= avail) {
                consume(r, more);
                return CRAWL_EOF;
            }
            continue;
        }
        consume(r, drop);
    }
}

static char *trim(char *s, char *end)
{
    while (s < end && (*s == ' ' || *s == '\t'))
        s++;
    while (end > s && (end[-1] == ' ' || end[-1] == '\t' || end[-1] == '\r' || end[-1] == '\n'))
        end--;
    *end = '\0';
    return s;
}

const char *crawl_warc_field(const struct crawl_warc_record *rec, const char *name)
{
    for (size_t i = 0; i < rec->n_fields; i++)
        if (strcasecmp(rec->fields[i].name, name) == 0)
            return rec->fields[i].value;
    return NULL;
}

static const char *field_or_empty(const struct crawl_warc_record *rec, const char *name)
{
    const char *v = crawl_warc_field(rec, name);
    return v ? v : "";
}

/*
 * Parses the header block hdr_parsed[0..len) in place (NUL-terminating names and
 * values). Continuation lines (starting with space or tab) are appended to the field
 * before them; lines without a colon are skipped.
 */
static void parse_fields(struct crawl_warc_reader *r, size_t len)
{
    char *p = r->hdr_parsed, *end = p + len;
    char *eol = memchr(p, '\n', len);
    char *line_end = eol ? eol : end;
    r->rec.version = trim(p, line_end);
    p = eol ? eol + 1 : end;
    r->rec.n_fields = 0;
    struct crawl_warc_field *last = NULL;
    while (p < end) {
        eol = memchr(p, '\n', (size_t)(end - p));
        line_end = eol ? eol : end;
        char *next = eol ? eol + 1 : end;
        if (line_end == p || (line_end == p + 1 && *p == '\r'))
            break; /* the empty line */
        if ((*p == ' ' || *p == '\t') && last) {
            /* folded: join "value" + " " + continuation, in place (the continuation lies
             * after the value's NUL, so move it down) */
            char *cont = trim(p, line_end);
            size_t vl = strlen(last->value), cl = strlen(cont);
            char *v = (char *)last->value;
            if (cl) {
                v[vl] = ' ';
                memmove(v + vl + 1, cont, cl + 1);
            }
        } else {
            char *colon = memchr(p, ':', (size_t)(line_end - p));
            if (colon && colon > p && r->rec.n_fields < MAX_FIELDS) {
                *colon = '\0';
                char *name = trim(p, colon);
                char *value = trim(colon + 1, line_end);
                if (*name) {
                    last = &r->fields[r->rec.n_fields++];
                    last->name = name;
                    last->value = value;
                } else {
                    last = NULL;
                }
            } else {
                last = NULL;
            }
        }
        p = next;
    }
    r->rec.fields = r->fields;
}

/* The header block from win_start: its length including the empty line, 0 when the
 * stream ends first, or CRAWL_ETOOLARGE through *rc when over the cap. */
static size_t header_length(struct crawl_warc_reader *r, enum crawl_code *rc)
{
    size_t searched = 0;
    *rc = CRAWL_OK;
    for (;;) {
        size_t avail;
        *rc = fill(
            r, searched + 4096 < CRAWL_WARC_MAX_HEADER ? searched + 4096 : CRAWL_WARC_MAX_HEADER,
            &avail);
        if (*rc != CRAWL_OK)
            return 0;
        const char *b = r->win + r->win_start;
        size_t from = searched > 3 ? searched - 3 : 0;
        for (size_t i = from; i < avail; i++) {
            if (b[i] != '\n')
                continue;
            if (i >= 1 && b[i - 1] == '\n')
                return i + 1;
            if (i >= 2 && b[i - 1] == '\r' && b[i - 2] == '\n')
                return i + 1;
        }
        if (avail >= CRAWL_WARC_MAX_HEADER) {
            *rc = CRAWL_ETOOLARGE;
            return 0;
        }
        if (avail == searched)
            return 0; /* end of stream */
        searched = avail;
    }
}

static int parse_length(const char *s, uint64_t *out)
{
    uint64_t v = 0;
    if (!*s)
        return -1;
    for (; *s; s++) {
        if (*s < '0' || *s > '9')
            return -1;
        if (v > (UINT64_MAX - 9) / 10)
            return -1;
        v = v * 10 + (uint64_t)(*s - '0');
    }
    *out = v;
    return 0;
}

/* Reads the header at win_start (which holds "WARC/1."). CRAWL_OK: r->rec is set;
 * CRAWL_EFORMAT: damaged and reported, the caller resynchronises. */
static enum crawl_code read_header(struct crawl_warc_reader *r)
{
    tee_stop(r); /* the last record is done with */
    uint64_t spos = stream_pos(r);
    int member = r->gzip && is_member_start(r, spos);
    uint64_t offset = member ? member_containing(r, spos) : spos;
    enum crawl_code rc;
    size_t hlen = header_length(r, &rc);
    if (rc == CRAWL_ETOOLARGE) {
        report(r, offset, CRAWL_ETOOLARGE, "record header at offset %llu is over %u bytes",
               (unsigned long long)offset, CRAWL_WARC_MAX_HEADER);
        consume(r, 1);
        return CRAWL_EFORMAT;
    }
    if (rc != CRAWL_OK)
        return rc;
    if (hlen == 0) {
        size_t avail = r->win_len - r->win_start;
        report(r, offset, CRAWL_ETRUNCATED, "record at offset %llu is truncated inside its header",
               (unsigned long long)offset);
        consume(r, avail);
        return CRAWL_EFORMAT;
    }
    if (hlen + 1 > r->hdr_cap) {
        size_t nc = hlen + 1 < 4096 ? 4096 : hlen + 1;
        char *a = realloc(r->hdr_raw, nc);
        if (!a)
            return CRAWL_ENOMEM;
        r->hdr_raw = a;
        char *b = realloc(r->hdr_parsed, nc);
        if (!b)
            return CRAWL_ENOMEM;
        r->hdr_parsed = b;
        r->hdr_cap = nc;
    }
    memcpy(r->hdr_raw, r->win + r->win_start, hlen);
    r->hdr_raw[hlen] = '\0';
    memcpy(r->hdr_parsed, r->hdr_raw, hlen + 1);
    memset(&r->rec, 0, sizeof r->rec);
    parse_fields(r, hlen);
    struct crawl_warc_record *rec = &r->rec;
    rec->header = r->hdr_raw;
    rec->header_len = hlen;
    rec->stream_offset = spos;
    if (r->gzip && !member && r->gz_kind == 1)
        r->gz_kind = 2;
    rec->whole_gzip = r->gzip && !member;
    rec->offset = offset;
    const char *cl = crawl_warc_field(rec, "Content-Length");
    if (!cl || parse_length(cl, &rec->content_length) != 0) {
        report(r, offset, CRAWL_EFORMAT, "record at offset %llu has %s Content-Length%s%s",
               (unsigned long long)offset, cl ? "a bad" : "no", cl ? ": " : "", cl ? cl : "");
        consume(r, 1);
        return CRAWL_EFORMAT;
    }
    consume(r, hlen);
    rec->type = field_or_empty(rec, "WARC-Type");
    rec->record_id = field_or_empty(rec, "WARC-Record-ID");
    rec->date = field_or_empty(rec, "WARC-Date");
    rec->content_type = field_or_empty(rec, "Content-Type");
    rec->concurrent_to = field_or_empty(rec, "WARC-Concurrent-To");
    rec->refers_to = field_or_empty(rec, "WARC-Refers-To");
    rec->block_digest = field_or_empty(rec, "WARC-Block-Digest");
    rec->payload_digest = field_or_empty(rec, "WARC-Payload-Digest");
    rec->ip_address = field_or_empty(rec, "WARC-IP-Address");
    /* WARC-Target-URI: 1.0 writes it bare, some 1.1 writers in <>; white space trimmed */
    char *uri = (char *)field_or_empty(rec, "WARC-Target-URI");
    size_t ul = strlen(uri);
    if (ul >= 2 && uri[0] == '<' && uri[ul - 1] == '>') {
        uri[ul - 1] = '\0';
        uri = trim(uri + 1, uri + ul - 1);
    }
    rec->target_uri = uri;
    r->block_left = rec->content_length;
    r->block_loaded = r->block_damaged = r->block_touched = r->block_cut = 0;
    r->stream_bad = r->stream_checked = r->dg_on = 0;
    r->stream_rc = CRAWL_OK;
    r->rec_broken = r->gzip && broken_in(r, spos, record_end(r));
    r->blk_soff = spos + hlen;
    r->blk_rewind = r->seekable || r->in_borrowed;
    if (r->gzip) {
        size_t i = 0;
        while (i < r->n_bnd && r->bnd[i].soff <= r->blk_soff)
            i++;
        if (i == 0) {
            r->blk_rewind = 0;
        } else {
            r->blk_msoff = r->bnd[i - 1].soff;
            r->blk_mcoff = r->bnd[i - 1].coff;
        }
    }
    r->state = ST_RECORD;
    /* a block to stream from a pipe: keep its bytes, to look for the records a wrong
     * Content-Length swallowed (rewind_block). Not while replaying: one level only */
    if (rec->content_length > r->max_block && !r->seekable && !r->in_borrowed && !r->replaying)
        tee_start(r);
    if (rec->content_length > r->max_block && strncasecmp(rec->block_digest, "sha1:", 5) == 0) {
        /* a block too large to hold is checked against its digest as it streams */
        if (!r->dg && crawl_digest_new(&r->dg) != CRAWL_OK)
            return CRAWL_ENOMEM;
        char scratch[CRAWL_DIGEST_SIZE];
        crawl_digest_final(r->dg, scratch); /* resets it: an earlier block may be half-read */
        r->dg_on = 1;
    }
    return CRAWL_OK;
}

/* How many bytes of record trailer follow the block at win + win_start + len: 4 for CRLF
 * CRLF (*exact set); the CR/LF run before a next "WARC/1." or the end of the stream
 * (*exact clear: the record is damaged but the next one is where it should be); -1 when
 * something else follows (wrong Content-Length). avail is what the window holds. */
static int trailer_length(const struct crawl_warc_reader *r, size_t len, size_t avail, int *exact)
{
    const char *t = r->win + r->win_start + len;
    size_t n = avail - len;
    *exact = 0;
    if (n >= 4 && memcmp(t, "\r\n\r\n", 4) == 0) {
        *exact = 1;
        return 4;
    }
    size_t i = 0;
    while (i < n && i < 4 && (t[i] == '\r' || t[i] == '\n'))
        i++;
    if (i == n)
        return (int)i; /* the end of the stream */
    if (n - i >= MAGIC_LEN && memcmp(t + i, MAGIC, MAGIC_LEN) == 0 &&
        ((i > 0 && t[i - 1] == '\n') ||
         (r->gzip && is_member_start(r, r->win_off + r->win_start + len + i))))
        return (int)i;
    return -1;
}

/*
 * In a file of one gzip member per record a block never runs into the next member. Of
 * the avail bytes from win_start, how many may belong to the current block: up to the
 * next member start that holds "WARC/1." (the Content-Length was wrong), else all.
 */
static size_t member_limit(const struct crawl_warc_reader *r, size_t avail)
{
    if (!r->gzip || r->gz_kind != 1)
        return avail;
    uint64_t start = stream_pos(r);
    for (size_t i = 0; i < r->n_bnd; i++) {
        uint64_t b = r->bnd[i].soff;
        if (b < start)
            continue;
        if (b - start >= avail)
            break;
        size_t off = (size_t)(b - start);
        if (avail - off < MAGIC_LEN) {
            if (r->stream_eof)
                continue;
            return off; /* cannot tell yet: stop here, look again with more bytes */
        }
        if (memcmp(r->win + r->win_start + off, MAGIC, MAGIC_LEN) == 0)
            return off;
    }
    return avail;
}

/* The block ran into the next gzip member after `got` bytes: end it there. */
static void cut_block(struct crawl_warc_reader *r, uint64_t got)
{
    report(r, r->rec.offset, CRAWL_EFORMAT,
           "record at offset %llu: Content-Length %llu runs past the end of its gzip member "
           "(the block has %llu bytes)",
           (unsigned long long)r->rec.offset, (unsigned long long)r->rec.content_length,
           (unsigned long long)got);
    r->block_left = 0;
    r->block_cut = 1;
}

enum crawl_code crawl_warc_block(struct crawl_warc_reader *r, const char **data, size_t *len)
{
    *data = NULL;
    *len = 0;
    if (r->state != ST_RECORD || r->block_touched)
        return CRAWL_EINVAL;
    uint64_t cl = r->rec.content_length;
    if (r->block_loaded) {
        *data = r->win + r->win_start;
        *len = (size_t)(r->block_left < cl ? r->block_left : cl);
        /* damaged 3: bad trailer, but the next record follows where it should;
         * 4: whole, but inflated from a broken gzip member */
        if (r->block_damaged)
            return r->block_damaged == 1   ? CRAWL_ETRUNCATED
                   : r->block_damaged == 4 ? CRAWL_EGZIP
                                           : CRAWL_EFORMAT;
        return CRAWL_OK;
    }
    if (cl > r->max_block)
        return CRAWL_ETOOLARGE;
    size_t avail;
    enum crawl_code rc = fill(r, (size_t)cl + 16, &avail);
    if (rc != CRAWL_OK)
        return rc;
    r->block_loaded = 1;
    *data = r->win + r->win_start;
    size_t lim = member_limit(r, avail);
    if (lim < cl && lim < avail) {
        r->block_damaged = 2;
        r->block_left = lim;
        *len = lim;
        report(r, r->rec.offset, CRAWL_EFORMAT,
               "record at offset %llu: Content-Length %llu runs past the end of its gzip "
               "member (the block has %zu bytes)",
               (unsigned long long)r->rec.offset, (unsigned long long)cl, lim);
        return CRAWL_EFORMAT;
    }
    if (avail < cl) {
        r->block_damaged = 1;
        r->block_left = avail;
        *len = avail;
        report(r, r->rec.offset, CRAWL_ETRUNCATED,
               "record at offset %llu is truncated: Content-Length %llu, %zu bytes left",
               (unsigned long long)r->rec.offset, (unsigned long long)cl, avail);
        return CRAWL_ETRUNCATED;
    }
    *len = (size_t)cl;
    int exact, t = trailer_length(r, (size_t)cl, avail, &exact);
    if (!exact) {
        r->block_damaged = t < 0 ? 2 : 3;
        report(
            r, r->rec.offset, CRAWL_EFORMAT,
            "record at offset %llu: block not followed by CRLF CRLF (wrong Content-Length %llu?)",
            (unsigned long long)r->rec.offset, (unsigned long long)cl);
        return CRAWL_EFORMAT;
    }
    if (r->rec_broken) {
        /* reported by the stream layer at the member's offset: the data may be wrong */
        r->block_damaged = 4;
        return CRAWL_EGZIP;
    }
    return CRAWL_OK;
}

/*
 * For a streamed block (block_left > 0): how many of its bytes the window holds now,
 * reading more when fewer than MAGIC_LEN are there, up to the next gzip member
 * (member_limit). *avail 0 means the block ends here, reported: the input ended
 * (truncated) or the block ran into the next member (cut_block); block_left is then 0.
 * Returns CRAWL_OK, or fill()'s error.
 */
static enum crawl_code stream_avail(struct crawl_warc_reader *r, size_t *avail)
{
    enum crawl_code rc = fill(r, MAGIC_LEN, avail);
    if (rc != CRAWL_OK)
        return rc;
    if (*avail == 0) {
        report(r, r->rec.offset, CRAWL_ETRUNCATED,
               "record at offset %llu is truncated: Content-Length %llu, the input ends %llu "
               "bytes short",
               (unsigned long long)r->rec.offset, (unsigned long long)r->rec.content_length,
               (unsigned long long)r->block_left);
        r->block_left = 0;
        r->stream_bad = 1;
        r->stream_checked = 1;
        r->stream_rc = CRAWL_ETRUNCATED;
        return CRAWL_OK;
    }
    *avail = member_limit(r, *avail);
    if (*avail == 0) {
        cut_block(r, r->rec.content_length - r->block_left);
        r->stream_checked = 1;
        r->stream_rc = CRAWL_EFORMAT;
    }
    return CRAWL_OK;
}

/* 20 bytes from "sha1:" + 32 base32 (RFC 4648) or 40 hex digits; -1 when neither. */
static int sha1_value(const char *v, uint8_t out[20])
{
    size_t n = strlen(v);
    if (n == 40) {
        for (size_t i = 0; i < 20; i++) {
            unsigned x;
            if (sscanf(v + 2 * i, "%2x", &x) != 1 || !strchr("0123456789abcdefABCDEF", v[2 * i]) ||
                !strchr("0123456789abcdefABCDEF", v[2 * i + 1]))
                return -1;
            out[i] = (uint8_t)x;
        }
        return 0;
    }
    if (n != 32)
        return -1;
    uint64_t acc = 0;
    unsigned bits = 0;
    size_t o = 0;
    for (size_t i = 0; i < 32; i++) {
        char c = v[i];
        unsigned d;
        if (c >= 'A' && c <= 'Z')
            d = (unsigned)(c - 'A');
        else if (c >= 'a' && c <= 'z')
            d = (unsigned)(c - 'a');
        else if (c >= '2' && c <= '7')
            d = (unsigned)(c - '2') + 26;
        else
            return -1;
        acc = (acc << 5) | d;
        bits += 5;
        if (bits >= 8) {
            out[o++] = (uint8_t)(acc >> (bits - 8));
            bits -= 8;
        }
    }
    return o == 20 ? 0 : -1;
}

/*
 * A block read to its announced end through crawl_warc_read (or skipped): is it whole?
 * It must be followed by CRLF CRLF, no byte of it may come from a broken gzip member,
 * and when it was handed out from its first byte, its WARC-Block-Digest (sha1) must
 * match. Runs once per record and reports what is wrong; the verdict is kept in
 * stream_rc (CRAWL_OK, CRAWL_ETRUNCATED, CRAWL_EFORMAT, CRAWL_EGZIP); stream_bad is set
 * when the next record has to be looked for from the block's start. Returns the verdict,
 * or fill()'s fatal code.
 */
static enum crawl_code stream_end(struct crawl_warc_reader *r)
{
    if (r->stream_checked)
        return r->stream_rc;
    size_t avail;
    enum crawl_code rc = fill(r, 16, &avail);
    if (rc != CRAWL_OK)
        return rc;
    r->stream_checked = 1;
    int exact, t = trailer_length(r, 0, avail, &exact);
    if (!exact) {
        report(
            r, r->rec.offset, CRAWL_EFORMAT,
            "record at offset %llu: block not followed by CRLF CRLF (wrong Content-Length %llu?)",
            (unsigned long long)r->rec.offset, (unsigned long long)r->rec.content_length);
        r->stream_bad = t < 0;
        r->stream_rc = CRAWL_EFORMAT;
        return r->stream_rc;
    }
    if (r->rec_broken) {
        r->stream_rc = CRAWL_EGZIP; /* reported at the member's offset */
        return r->stream_rc;
    }
    if (r->dg_on) {
        char got[CRAWL_DIGEST_SIZE];
        uint8_t a[20], b[20];
        crawl_digest_final(r->dg, got);
        r->dg_on = 0;
        if (sha1_value(got + 5, a) == 0 && sha1_value(r->rec.block_digest + 5, b) == 0 &&
            memcmp(a, b, 20) != 0) {
            report(r, r->rec.offset, CRAWL_EFORMAT,
                   "record at offset %llu: WARC-Block-Digest %.60s does not match its block (%s)",
                   (unsigned long long)r->rec.offset, r->rec.block_digest, got);
            r->stream_rc = CRAWL_EFORMAT;
        }
    }
    return r->stream_rc;
}

/* After a streamed block turned out damaged: read the input again from the block's start
 * (a regular file or memory only), so the records a wrong Content-Length swallowed are
 * found. Returns CRAWL_OK (rewound, or not possible: reading goes on from here) or a
 * fatal code. */
static enum crawl_code rewind_block(struct crawl_warc_reader *r)
{
    if (!r->blk_rewind && r->tee_on && r->tee_soff == r->blk_soff) {
        /* a pipe: the stream from the block start is in the tee; the window (all of it
         * produced after the block start, so in the tee too) is dropped */
        r->tee_on = 0;
        r->replaying = 1;
        r->replay_pos = 0;
        r->win_start = r->win_len = 0;
        r->win_off = r->blk_soff;
        r->prev = '\n'; /* the header ended with a newline */
        if (r->tee_len == 0)
            r->replaying = 0;
        return CRAWL_OK;
    }
    if (!r->blk_rewind) {
        if (r->tee_failed)
            report(r, r->rec.offset, CRAWL_EIO,
                   "record at offset %llu: cannot look for the records after it again: "
                   "temporary file: %s",
                   (unsigned long long)r->rec.offset, strerror(r->tee_errno));
        return CRAWL_OK;
    }
    uint64_t coff = r->gzip ? r->blk_mcoff : r->blk_soff;
    uint64_t soff = r->gzip ? r->blk_msoff : r->blk_soff;
    uint64_t reached = r->in_file_off + r->in_pos;
    if (r->in_borrowed) {
        if (coff > r->in_len)
            return CRAWL_OK;
        r->in_pos = (size_t)coff;
    } else {
        if (lseek(r->fd, (off_t)coff, SEEK_SET) < 0)
            return CRAWL_OK;
        r->in_len = r->in_pos = 0;
        r->in_file_off = coff;
        r->in_eof = 0;
    }
    if (reached > r->quiet_until)
        r->quiet_until = reached;
    r->win_start = r->win_len = 0;
    r->win_off = soff;
    r->stream_eof = 0;
    r->n_bnd = 0;
    r->member_active = 0;
    r->member_broken = 0;
    r->prev = '\n'; /* the header ended with a newline */
    uint64_t left = r->blk_soff - soff;
    while (left > 0) {
        size_t avail;
        enum crawl_code rc = fill(r, left < 65536 ? (size_t)left : 65536, &avail);
        if (rc != CRAWL_OK)
            return rc;
        if (avail == 0)
            break;
        size_t k = avail < left ? avail : (size_t)left;
        consume(r, k);
        left -= k;
    }
    return CRAWL_OK;
}

enum crawl_code crawl_warc_read(struct crawl_warc_reader *r, void *buf, size_t cap, size_t *n)
{
    *n = 0;
    if (r->state != ST_RECORD)
        return CRAWL_EINVAL;
    if (r->block_loaded) {
        if (r->block_damaged)
            return r->block_damaged == 4 ? CRAWL_EGZIP : CRAWL_ETRUNCATED;
        /* serve from the loaded block */
    }
    if (cap == 0)
        return CRAWL_OK;
    if (r->block_left == 0) /* the end: only now is the block known to be whole */
        return r->block_cut ? CRAWL_EFORMAT : stream_end(r);
    size_t avail;
    enum crawl_code rc = stream_avail(r, &avail);
    if (rc != CRAWL_OK)
        return rc;
    if (avail == 0)
        return r->stream_rc != CRAWL_OK ? r->stream_rc : CRAWL_ETRUNCATED;
    size_t k = avail < cap ? avail : cap;
    if (k > r->block_left)
        k = (size_t)r->block_left;
    memcpy(buf, r->win + r->win_start, k);
    if (r->dg_on)
        crawl_digest_update(r->dg, buf, k);
    consume(r, k);
    r->block_left -= k;
    r->block_touched = 1;
    r->block_loaded = 0;
    *n = k;
    return CRAWL_OK;
}

/* Finishes the current record: skips the rest of its block and its trailer, or goes
 * back to the block start after damage. Returns CRAWL_OK positioned after it, or with
 * *resync set when the caller has to scan for the next record. */
static enum crawl_code finish_record(struct crawl_warc_reader *r, int *resync)
{
    *resync = 0;
    if (!r->block_touched && !r->block_loaded && r->rec.content_length <= r->max_block) {
        const char *d;
        size_t l;
        enum crawl_code rc = crawl_warc_block(r, &d, &l);
        if (rc == CRAWL_ENOMEM || rc == CRAWL_EIO)
            return rc;
    }
    if (r->block_loaded && r->block_damaged && r->block_damaged != 3 && r->block_damaged != 4) {
        /* rescan from the block start: after a wrong Content-Length the next records
         * lie inside what the header claimed */
        *resync = 1;
        return CRAWL_OK;
    }
    if (r->block_cut)
        return CRAWL_OK; /* positioned at the next member, reported */
    if (r->block_loaded) {
        size_t avail = r->win_len - r->win_start;
        int exact, t = trailer_length(r, (size_t)r->rec.content_length, avail, &exact);
        consume(r, (size_t)r->rec.content_length + (size_t)(t > 0 ? t : 0));
        r->block_left = 0;
        return CRAWL_OK;
    }
    /* streamed: skip what is left, then check the end (once: stream_end) */
    while (r->block_left > 0) {
        size_t avail;
        enum crawl_code rc = stream_avail(r, &avail);
        if (rc != CRAWL_OK)
            return rc;
        if (avail == 0)
            break; /* truncated or cut, reported */
        size_t k = avail < r->block_left ? avail : (size_t)r->block_left;
        consume(r, k);
        r->block_left -= k;
        r->dg_on = 0; /* not all of it was handed out: no digest to check */
    }
    if (r->block_cut)
        return CRAWL_OK; /* positioned at the next member, reported */
    enum crawl_code rc = stream_end(r);
    if (rc == CRAWL_ENOMEM || rc == CRAWL_EIO || rc == CRAWL_ETOOLARGE)
        return rc;
    if (r->stream_bad) {
        /* a wrong Content-Length swallowed what follows: look again from the block start */
        rc = rewind_block(r);
        if (rc != CRAWL_OK)
            return rc;
        *resync = 1;
        return CRAWL_OK;
    }
    tee_stop(r);
    size_t avail;
    rc = fill(r, 16, &avail);
    if (rc != CRAWL_OK)
        return rc;
    int exact, t = trailer_length(r, 0, avail, &exact);
    consume(r, (size_t)(t > 0 ? t : 0));
    return CRAWL_OK;
}

enum crawl_code crawl_warc_next(struct crawl_warc_reader *r, const struct crawl_warc_record **rec)
{
    *rec = NULL;
    if (r->state == ST_EOF)
        return CRAWL_EOF;
    int resync = 0;
    if (r->state == ST_RECORD) {
        enum crawl_code rc = finish_record(r, &resync);
        if (rc != CRAWL_OK)
            return rc;
        r->state = ST_START;
    }
    for (;;) {
        enum crawl_code rc;
        if (resync) {
            rc = scan_magic(r);
            if (rc == CRAWL_EOF) {
                r->state = ST_EOF;
                return CRAWL_EOF;
            }
            if (rc != CRAWL_OK)
                return rc;
            resync = 0;
        }
        /* blank lines between records are tolerated silently */
        size_t avail;
        for (;;) {
            rc = fill(r, 64, &avail);
            if (rc != CRAWL_OK)
                return rc;
            size_t i = 0;
            const char *b = r->win + r->win_start;
            while (i < avail && (b[i] == '\r' || b[i] == '\n'))
                i++;
            consume(r, i);
            if (i < avail || avail == 0)
                break;
        }
        rc = fill(r, MAGIC_LEN, &avail);
        if (rc != CRAWL_OK)
            return rc;
        if (avail == 0) {
            r->state = ST_EOF;
            return CRAWL_EOF;
        }
        if (avail >= MAGIC_LEN && memcmp(r->win + r->win_start, MAGIC, MAGIC_LEN) == 0) {
            rc = read_header(r);
            if (rc == CRAWL_OK) {
                *rec = &r->rec;
                return CRAWL_OK;
            }
            if (rc != CRAWL_EFORMAT)
                return rc;
            resync = 1;
            continue;
        }
        uint64_t at = stream_pos(r);
        const char *b = r->win + r->win_start;
        int is_version = avail >= 5 && memcmp(b, "WARC/", 5) == 0;
        rc = scan_magic(r);
        if (rc != CRAWL_OK && rc != CRAWL_EOF)
            return rc;
        uint64_t skipped = stream_pos(r) - at;
        if (is_version)
            report(r, file_offset(r, at), CRAWL_EUNSUPPORTED,
                   "record at offset %llu has an unsupported WARC version; skipped %llu bytes",
                   (unsigned long long)file_offset(r, at), (unsigned long long)skipped);
        else
            report(r, file_offset(r, at), CRAWL_EFORMAT,
                   "%llu bytes of garbage at offset %llu where a record should start",
                   (unsigned long long)skipped, (unsigned long long)file_offset(r, at));
        if (rc == CRAWL_EOF) {
            r->state = ST_EOF;
            return CRAWL_EOF;
        }
    }
}

/* ---- open / free ---- */

static enum crawl_code reader_init(struct crawl_warc_reader *r, const struct crawl_warc_opts *opts)
{
    if (opts)
        r->opts = *opts;
    r->max_block = r->opts.max_block ? r->opts.max_block : CRAWL_WARC_DEFAULT_MAX_BLOCK;
    if (r->max_block > MAX_BLOCK_LIMIT)
        r->max_block = MAX_BLOCK_LIMIT;
    r->win_max = r->max_block + CRAWL_WARC_MAX_HEADER + WIN_SLACK;
    r->prev = '\n';
    r->state = ST_START;
    /* gzip or plain: the first bytes tell */
    if (r->in_len - r->in_pos < 2 && !r->in_eof) {
        enum crawl_code rc = source_fill(r, 0);
        if (rc != CRAWL_OK)
            return rc;
    }
    if (r->in_len >= 2 && r->in[0] == 0x1f && r->in[1] == 0x8b) {
        r->gzip = 1;
        r->gz_kind = 1;
        if (inflateInit2(&r->zs, 15 + 16) != Z_OK)
            return CRAWL_ENOMEM;
        r->zs_ready = 1;
    }
    return CRAWL_OK;
}

enum crawl_code crawl_warc_reader_open(const char *path, const struct crawl_warc_opts *opts,
                                       struct crawl_warc_reader **out)
{
    *out = NULL;
    struct crawl_warc_reader *r = calloc(1, sizeof *r);
    if (!r)
        return CRAWL_ENOMEM;
    r->fd = -1;
    r->tee_fd = -1;
    r->in = malloc(IN_CAP);
    if (!r->in) {
        free(r);
        return CRAWL_ENOMEM;
    }
    enum crawl_code rc;
    if (strcmp(path, "-") == 0) {
        r->fd = 0;
    } else {
        r->fd = open(path, O_RDONLY);
        if (r->fd < 0) {
            int e = errno;
            crawl_warc_reader_free(r);
            errno = e;
            return CRAWL_EIO;
        }
        r->own_fd = 1;
        struct stat st;
        r->seekable = fstat(r->fd, &st) == 0 && S_ISREG(st.st_mode);
    }
    r->fields = malloc(MAX_FIELDS * sizeof *r->fields);
    if (!r->fields) {
        crawl_warc_reader_free(r);
        return CRAWL_ENOMEM;
    }
    rc = reader_init(r, opts);
    if (rc != CRAWL_OK) {
        crawl_warc_reader_free(r);
        return rc;
    }
    *out = r;
    return CRAWL_OK;
}

enum crawl_code crawl_warc_reader_open_mem(const void *data, size_t len,
                                           const struct crawl_warc_opts *opts,
                                           struct crawl_warc_reader **out)
{
    *out = NULL;
    struct crawl_warc_reader *r = calloc(1, sizeof *r);
    if (!r)
        return CRAWL_ENOMEM;
    r->fd = -1;
    r->tee_fd = -1;
    r->in = (uint8_t *)data;
    r->in_borrowed = 1;
    r->in_len = len;
    r->in_eof = 1;
    r->fields = malloc(MAX_FIELDS * sizeof *r->fields);
    if (!r->fields) {
        crawl_warc_reader_free(r);
        return CRAWL_ENOMEM;
    }
    enum crawl_code rc = reader_init(r, opts);
    if (rc != CRAWL_OK) {
        crawl_warc_reader_free(r);
        return rc;
    }
    *out = r;
    return CRAWL_OK;
}

void crawl_warc_reader_free(struct crawl_warc_reader *r)
{
    if (!r)
        return;
    if (r->own_fd && r->fd >= 0)
        close(r->fd);
    if (r->tee_fd >= 0)
        close(r->tee_fd);
    if (!r->in_borrowed)
        free(r->in);
    if (r->zs_ready)
        inflateEnd(&r->zs);
    free(r->bnd);
    free(r->win);
    free(r->fields);
    free(r->hdr_raw);
    free(r->hdr_parsed);
    crawl_digest_free(r->dg);
    free(r);
}

unsigned crawl_warc_reader_gzip(const struct crawl_warc_reader *r)
{
    return r->gzip ? r->gz_kind : 0;
}

uint64_t crawl_warc_reader_errors(const struct crawl_warc_reader *r)
{
    return r->errors;
}

uint64_t crawl_warc_reader_pos(const struct crawl_warc_reader *r)
{
    return r->in_file_off + r->in_pos;
}

enum crawl_code crawl__warc_reader_raw_member(struct crawl_warc_reader *r,
                                              const struct crawl_warc_record *rec, char **out,
                                              size_t *len)
{
    *out = NULL;
    *len = 0;
    if (!r->gzip || r->state != ST_RECORD || rec != &r->rec || !r->block_loaded ||
        r->block_damaged || r->block_touched || (!r->seekable && !r->in_borrowed))
        return CRAWL_OK;
    const struct boundary *b = NULL;
    for (size_t i = 0; i < r->n_bnd; i++)
        if (r->bnd[i].soff == rec->stream_offset)
            b = &r->bnd[i];
    uint64_t rec_end = rec->stream_offset + rec->header_len + rec->content_length + 4;
    if (!b || !b->ended || b->end_soff != rec_end || b->end_coff <= b->coff ||
        b->end_coff - b->coff > CRAWL_WARC_RAW_MEMBER_MAX)
        return CRAWL_OK;
    size_t n = (size_t)(b->end_coff - b->coff);
    if (r->in_borrowed) {
        if (b->end_coff > r->in_len)
            return CRAWL_OK;
        char *m = malloc(n);
        if (!m)
            return CRAWL_ENOMEM;
        memcpy(m, r->in + b->coff, n);
        *out = m;
        *len = n;
        return CRAWL_OK;
    }
    char *m = malloc(n);
    if (!m)
        return CRAWL_ENOMEM;
    size_t got = 0;
    while (got < n) {
        ssize_t k = pread(r->fd, m + got, n - got, (off_t)(b->coff + got));
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0) {
            free(m);
            return CRAWL_OK; /* cannot re-read: the caller re-compresses instead */
        }
        got += (size_t)k;
    }
    /* the bytes must still be the member we inflated: same magic at least */
    if ((unsigned char)m[0] != 0x1f || (unsigned char)m[1] != 0x8b) {
        free(m);
        return CRAWL_OK;
    }
    *out = m;
    *len = n;
    return CRAWL_OK;
}
