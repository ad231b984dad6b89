#ifndef CRAWLER_CRAWL_H
#define CRAWLER_CRAWL_H
/*
 * crawler: URLs, robots.txt (RFC 9309), the frontier and politeness, fetching with the
 * libcurl multi interface, WARC reading and writing (ISO 28500), and the crawl loop.
 * No libcurl, zlib or OpenSSL type appears here.
 */
#include <stddef.h>
#include <stdint.h>

#define CRAWL_WARN_UNUSED __attribute__((warn_unused_result))

/* ==== errors ==== (0 is OK; codes only ever appended) */

enum crawl_code {
    CRAWL_OK = 0,
    CRAWL_ENOMEM,       /* out of memory; the object is unchanged and still usable */
    CRAWL_EINVAL,       /* a bad argument (programmer error) */
    CRAWL_EIO,          /* a read, write, open or rename failed (detail: errno text) */
    CRAWL_EOF,          /* no more records (not an error: the end of the input) */
    CRAWL_EFORMAT,      /* the input breaks its format (WARC header, HTTP message) */
    CRAWL_ETRUNCATED,   /* the input ends inside a record or message */
    CRAWL_EGZIP,        /* a gzip member is broken (bad header, CRC, deflate data) */
    CRAWL_ETOOLARGE,    /* a cap was reached (block, header, decoded body) */
    CRAWL_ECHUNKED,     /* bad chunked transfer coding; what was decoded is kept */
    CRAWL_EDECODE,      /* bad gzip/deflate/br content coding; what was decoded is kept */
    CRAWL_EUNSUPPORTED, /* an unsupported coding or version */
    CRAWL_EURL,         /* not a valid absolute http or https URL */
    CRAWL_ECURL,        /* libcurl failed to set up (a handle, an option) */
    CRAWL_ETHREAD,      /* a thread could not be started */
};

/* A short lower-case description of code, e.g. "gzip member is broken". */
const char *crawl_strerror(enum crawl_code code);

/*
 * Return conventions, one for all of crawler/ (this header, crawler_int.h, warc_int.h):
 *  - a call that can fail returns enum crawl_code (CRAWL_WARN_UNUSED) and gives its
 *    results through out-parameters; "found", "added", "created" are int out-flags beside
 *    CRAWL_OK (crawl_seen_add, crawl_state_url_has, crawl_state_open); CRAWL_EOF ends a
 *    reader;
 *  - a call that cannot fail returns its value: a count, a time, a borrowed string, a
 *    verdict, or an int 1/0 for a yes/no question (crawl_robots_allowed,
 *    crawl_seen_contains; crawl_frontier_pop: 1 with an item, 0 when no host may be asked
 *    yet);
 *  - a constructor without options (crawl_mem_new, crawl_ref_new) returns the object, NULL
 *    when out of memory (its only failure);
 *  - a callback's non-zero return stops the walk (each says what comes back);
 *  - errno never crosses: its text goes into the error string of the object
 *    (crawl_warc_writer_error, crawl_state_error) or the caller's err buffer.
 */

/* ==== robots.txt: parser, matcher, fetch policy ==== */
/*
 * RFC 9309 robots.txt (see crawler/robots.c for every liberal choice). A parsed robots.txt
 * is already reduced to the rules that apply to one user agent and compiled for fast
 * matching; memory is bounded by CRAWL_ROBOTS_MAX_BYTES of input. The per-host fetch
 * policy (crawler/robots_policy.c) turns fetch outcomes into verdicts with an injected
 * clock; crawler/robots_fetch.c turns the crawler's robots.txt transfer (the fetcher's
 * CRAWL_FETCH_ANY) into its outcome.
 */

#define CRAWL_ROBOTS_MAX_BYTES (512u * 1024u) /* bytes parsed, the rest ignored (RFC: 500 KiB+) */
#define CRAWL_ROBOTS_MAX_RULES 100000u        /* Allow/Disallow rules kept per robots.txt */
#define CRAWL_ROBOTS_MAX_SITEMAPS 1000u       /* Sitemap URLs kept */
#define CRAWL_ROBOTS_MAX_LINE 16664u          /* bytes of one line kept (Google: 8 * 2083) */
#define CRAWL_ROBOTS_MAX_CRAWL_DELAY 30.0     /* seconds: Crawl-delay values are capped here */

struct crawl_robots_opts {
    size_t max_bytes;       /* 0: CRAWL_ROBOTS_MAX_BYTES */
    size_t max_rules;       /* 0: CRAWL_ROBOTS_MAX_RULES */
    double max_crawl_delay; /* <= 0: CRAWL_ROBOTS_MAX_CRAWL_DELAY */
};

/* What parsing saw; for logs ("robots.txt of http://x: 600000 bytes, 75712 ignored"). */
struct crawl_robots_info {
    size_t bytes;           /* input length */
    size_t bytes_ignored;   /* beyond max_bytes (the cut line is ignored whole) */
    unsigned lines;         /* lines parsed */
    unsigned lines_invalid; /* lines that were neither blank, comment nor key: value */
    size_t rules;           /* rules that apply to the agent */
    size_t rules_ignored;   /* applying rules beyond max_rules */
    size_t sitemaps_ignored;
    int specific_group; /* 1: a group names the agent; 0: the '*' group (or none) applies */
};

/* Why crawl_robots_allowed() decided as it did. */
enum crawl_robots_reason {
    CRAWL_ROBOTS_BY_RULE = 0, /* the longest matching rule (rule, line) */
    CRAWL_ROBOTS_NO_MATCH,    /* no rule matched: allowed */
    CRAWL_ROBOTS_ROBOTS_TXT,  /* /robots.txt itself is always allowed */
    CRAWL_ROBOTS_NO_ROBOTS,   /* policy: robots.txt unavailable (4xx, too many redirects) */
    CRAWL_ROBOTS_UNREACHABLE, /* policy: 5xx, 429 or network error: the host is disallowed */
    CRAWL_ROBOTS_NOT_FETCHED, /* policy: no fresh robots.txt yet: fetch it first */
};

struct crawl_robots_decision {
    int allowed;
    enum crawl_robots_reason reason;
    unsigned line;    /* line of the deciding rule (1-based), 0 when no rule decided */
    const char *rule; /* "Disallow: /private" as written, NULL when no rule decided;
                         borrowed: valid until the robots object is freed */
    double retry_at;  /* policy, UNREACHABLE / NOT_FETCHED: when to fetch robots.txt again */
};

struct crawl_robots;

/* Sets the defaults. */
void crawl_robots_opts_init(struct crawl_robots_opts *opts);

/*
 * Parses robots.txt (text, len: any bytes, not NUL-terminated) for user_agent: a product
 * token ("simcrawl") or a whole User-Agent string ("simcrawl/0.1 (+https://...)"), of which
 * the leading [A-Za-z_-] characters are the token. opts may be NULL (defaults). On success
 * *out is new: caller frees with crawl_robots_free(). CRAWL_EINVAL when the agent has no
 * token; CRAWL_ENOMEM. Never fails on bad input: what cannot be read is ignored and
 * counted in crawl_robots_info().
 */
CRAWL_WARN_UNUSED enum crawl_code crawl_robots_parse(const char *text, size_t len,
                                                     const char *user_agent,
                                                     const struct crawl_robots_opts *opts,
                                                     struct crawl_robots **out);

/*
 * 1 if path (path and query of the URL, e.g. "/a/b?c=d"; "" counts as "/") may be fetched,
 * else 0. Both sides are percent-normalised before matching. decision may be NULL.
 * Paths longer than ~680 bytes need a heap buffer; if that allocation fails the answer is
 * 0 with reason CRAWL_ROBOTS_NOT_FETCHED (never "allowed" by accident). Thread-safe: r is
 * only read.
 */
int crawl_robots_allowed(const struct crawl_robots *r, const char *path, size_t len,
                         struct crawl_robots_decision *decision);

/* Crawl-delay of the applying group(s) in seconds (the largest, capped), 0 when none. */
double crawl_robots_crawl_delay(const struct crawl_robots *r);

/* Sitemap URLs in file order. Borrowed: valid until crawl_robots_free(r). */
size_t crawl_robots_sitemap_count(const struct crawl_robots *r);
const char *crawl_robots_sitemap(const struct crawl_robots *r, size_t i);

/* Borrowed: valid until crawl_robots_free(r). */
const struct crawl_robots_info *crawl_robots_info(const struct crawl_robots *r);

void crawl_robots_free(struct crawl_robots *r); /* NULL-safe */

/*
 * The path-and-query part of url, the way Google's robots_main takes it: scheme and
 * authority dropped, fragment dropped; a bare path is taken as is. Sets *len; the result
 * points into url (may be "" for "http://host": that means "/").
 */
const char *crawl_robots_url_path(const char *url, size_t *len);

/* -- fetch policy: one state machine per host, pure, with an injected clock -- */

#define CRAWL_ROBOTS_CACHE_TTL 86400.0           /* seconds a reading is used, at most 24 h */
#define CRAWL_ROBOTS_BACKOFF_INITIAL 60.0        /* seconds before the first retry after 5xx */
#define CRAWL_ROBOTS_BACKOFF_MAX 86400.0         /* backoff doubles up to this */
#define CRAWL_ROBOTS_OUTAGE_LIMIT (30 * 86400.0) /* after this long unreachable, see below */
#define CRAWL_ROBOTS_MAX_REDIRECTS 5

struct crawl_robots_policy_opts {
    double cache_ttl;       /* 0 or more than 24 h: CRAWL_ROBOTS_CACHE_TTL */
    double backoff_initial; /* <= 0: CRAWL_ROBOTS_BACKOFF_INITIAL */
    double backoff_max;     /* <= 0: CRAWL_ROBOTS_BACKOFF_MAX */
    double outage_limit;    /* 0: CRAWL_ROBOTS_OUTAGE_LIMIT; < 0: never give up (stay
                               disallowed while unreachable) */
    struct crawl_robots_opts parse;
};

/* What fetching robots.txt gave (the crawler's transfer: crawler/robots_fetch.c, or a
 * reading kept in the state). The pointers are borrowed: the policy copies what it keeps. */
struct crawl_robots_outcome {
    int status;             /* final HTTP status after redirects; 0: no HTTP answer */
    int too_many_redirects; /* more than CRAWL_ROBOTS_MAX_REDIRECTS: robots.txt unavailable */
    unsigned redirects;     /* redirects followed */
    const char *body;       /* 2xx: the body (decoded); may be NULL */
    size_t len;
    int truncated;         /* the body was longer than the fetch cap; the rest was dropped */
    double max_age;        /* Cache-Control max-age in seconds, < 0 when none */
    const char *final_url; /* the URL that answered, NULL when unknown */
    char error[256];       /* network or protocol error in words ("" when none) */
};

enum crawl_robots_verdict {
    CRAWL_ROBOTS_ALLOW = 0, /* fetch the URL */
    CRAWL_ROBOTS_DISALLOW,  /* robots.txt forbids it */
    CRAWL_ROBOTS_FETCH,     /* no fresh reading: fetch robots.txt, then crawl_robots_host_update */
    CRAWL_ROBOTS_DEFER,     /* robots.txt unreachable: the host is disallowed until retry_at */
};

struct crawl_robots_host;

void crawl_robots_policy_opts_init(struct crawl_robots_policy_opts *opts);

/* A host with no reading yet (every check says FETCH). user_agent as for crawl_robots_parse;
 * opts may be NULL. *out: caller frees with crawl_robots_host_free(). */
CRAWL_WARN_UNUSED enum crawl_code crawl_robots_host_new(const char *user_agent,
                                                        const struct crawl_robots_policy_opts *opts,
                                                        struct crawl_robots_host **out);

/*
 * Applies a fetch outcome observed at time now (seconds, any monotonic base):
 * 2xx: parse the body (the reading for cache_ttl, or max-age if lower);
 * 4xx except 429, a final 3xx, or too many redirects: robots.txt unavailable, allow all;
 * 5xx, 429, status 0 (network error): unreachable, disallow all, retry with exponential
 * backoff; once unreachable for outage_limit, the last good reading (2xx or 4xx) applies,
 * or allow all when there was none (RFC 9309 2.3.1.4), while retries go on.
 * CRAWL_ENOMEM leaves the host unchanged.
 */
CRAWL_WARN_UNUSED enum crawl_code crawl_robots_host_update(struct crawl_robots_host *h,
                                                           const struct crawl_robots_outcome *o,
                                                           double now);

/* The verdict for path at time now; decision may be NULL. */
enum crawl_robots_verdict crawl_robots_host_check(const struct crawl_robots_host *h,
                                                  const char *path, size_t len, double now,
                                                  struct crawl_robots_decision *decision);

/* 1 when robots.txt should be (re)fetched at time now: never fetched, reading expired, or
 * retry time reached after an outage. */
int crawl_robots_host_needs_fetch(const struct crawl_robots_host *h, double now);

/* When the current reading expires or the next retry is due. */
double crawl_robots_host_next_fetch(const struct crawl_robots_host *h);

/* Crawl-delay of the current reading (0 when none or no rules). */
double crawl_robots_host_crawl_delay(const struct crawl_robots_host *h);

/* The current parsed rules (NULL when the reading is allow-all, disallow-all or none).
 * Borrowed: valid until the next update or free. */
const struct crawl_robots *crawl_robots_host_rules(const struct crawl_robots_host *h);

/* Consecutive unreachable outcomes (0 after a 2xx or 4xx). */
unsigned crawl_robots_host_failures(const struct crawl_robots_host *h);

void crawl_robots_host_free(struct crawl_robots_host *h); /* NULL-safe */

/* ==== WARC: reader, HTTP block parser, writer ==== */
/*
 * WARC files (ISO 28500, WARC/1.0 and 1.1), plain or gzip (one member per record, or one
 * member for the whole file), read as a stream of records with bounded memory; HTTP
 * messages inside response/request blocks; and a writer of WARC/1.1 with one gzip member
 * per record. Times are W3C-ISO8601 strings ("2026-11-21T20:15:10Z").
 */

/* -- SHA-1 digests as WARC writes them: "sha1:" + 32 base32 letters (RFC 4648) -- */

#define CRAWL_DIGEST_SIZE 38 /* "sha1:" + 32 + NUL */

struct crawl_digest; /* an incremental SHA-1 */

/* *out is a new digest: caller frees with crawl_digest_free(). */
CRAWL_WARN_UNUSED enum crawl_code crawl_digest_new(struct crawl_digest **out);
void crawl_digest_update(struct crawl_digest *d, const void *data, size_t len);
/* Writes "sha1:BASE32" to out and resets d for the next message. */
void crawl_digest_final(struct crawl_digest *d, char out[CRAWL_DIGEST_SIZE]);
void crawl_digest_free(struct crawl_digest *d); /* NULL-safe */
/* One shot: out = "sha1:" + base32(sha1(data[0..len))). */
CRAWL_WARN_UNUSED enum crawl_code crawl_digest_sha1(const void *data, size_t len,
                                                    char out[CRAWL_DIGEST_SIZE]);
/* RFC 4648 base32 (upper case, '=' padded) of in[0..len) into out[0..cap); returns the
 * length written (without the NUL written after it), or 0 when cap is too small. */
size_t crawl_base32_encode(const uint8_t *in, size_t len, char *out, size_t cap);

/* -- the reader -- */

#define CRAWL_WARC_DEFAULT_MAX_BLOCK (64u * 1024 * 1024) /* crawl_warc_block() cap */
#define CRAWL_WARC_MAX_HEADER (256u * 1024)              /* cap of one WARC header block */

struct crawl_warc_field {
    const char *name;  /* as written, e.g. "WARC-Target-URI" */
    const char *value; /* leading and trailing white space removed; folded lines joined */
};

/*
 * One record's header. All strings are borrowed: valid until the next crawl_warc_next()
 * or crawl_warc_reader_free(); "" when the field is absent.
 */
struct crawl_warc_record {
    uint64_t offset;        /* where the record starts in the file: its gzip member's offset
                               (what CDX indexes use), or the byte offset of a plain file;
                               in a whole-file gzip, the offset in the uncompressed stream */
    uint64_t stream_offset; /* offset in the uncompressed stream */
    unsigned whole_gzip;    /* 1: the record does not start a gzip member of its own */
    const char *version;    /* "WARC/1.0", "WARC/1.1" */
    const char *type;       /* WARC-Type */
    const char *target_uri; /* WARC-Target-URI without <> and white space */
    const char *record_id;  /* WARC-Record-ID as written, e.g. "<urn:uuid:...>" */
    const char *date;       /* WARC-Date */
    const char *content_type;
    const char *concurrent_to; /* the first WARC-Concurrent-To */
    const char *refers_to;
    const char *block_digest;
    const char *payload_digest;
    const char *ip_address;
    uint64_t content_length; /* the block length the header announces */
    size_t n_fields;
    const struct crawl_warc_field *fields; /* every field in order (unknown ones too) */
    const char *header;                    /* the raw header: version line .. empty line */
    size_t header_len;
};

/* Damage reports: offset as in crawl_warc_record.offset, what = one line in words. */
struct crawl_warc_opts {
    size_t max_block; /* crawl_warc_block() refuses larger blocks; 0: the default */
    void (*on_error)(void *userdata, uint64_t offset, enum crawl_code code, const char *what);
    void *userdata;
};

struct crawl_warc_reader;

/* Opens path ("-": standard input) for reading; plain or gzip is detected from the bytes.
 * *out: caller frees with crawl_warc_reader_free(). */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_reader_open(const char *path,
                                                         const struct crawl_warc_opts *opts,
                                                         struct crawl_warc_reader **out);
/* The same over data[0..len), borrowed: valid until crawl_warc_reader_free(). */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_reader_open_mem(const void *data, size_t len,
                                                             const struct crawl_warc_opts *opts,
                                                             struct crawl_warc_reader **out);
void crawl_warc_reader_free(struct crawl_warc_reader *r); /* NULL-safe */

/*
 * The next record: CRAWL_OK and *rec (borrowed, see above), or CRAWL_EOF at the end.
 * The rest of the previous block is skipped. Damaged input (bad header, wrong
 * Content-Length, broken gzip member, garbage between records) is reported through
 * opts->on_error and skipped: the reader resynchronises at the next "WARC/1." line or gzip
 * member. Other codes (CRAWL_EIO, CRAWL_ENOMEM) are fatal for this reader.
 */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_next(struct crawl_warc_reader *r,
                                                  const struct crawl_warc_record **rec);
/* Reads the next bytes of the current block into buf[0..cap); *n = 0 at the block's end,
 * with CRAWL_OK only when the block proved whole there: followed by CRLF CRLF, no byte from
 * a broken gzip member (CRAWL_EGZIP), and, for a block over max_block read from its first
 * byte, a matching sha1 WARC-Block-Digest (CRAWL_EFORMAT). CRAWL_ETRUNCATED when the input
 * ends inside the block, CRAWL_EFORMAT when it runs into the next record's gzip member.
 * Damage is reported once; when a wrong Content-Length swallowed later records, the next
 * crawl_warc_next() reads a regular file (or memory) again from the block's start; from a
 * pipe it reads the block's bytes again from an unlinked temporary file under $TMPDIR,
 * kept while the block streamed (at most the block plus the read-ahead window). */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_read(struct crawl_warc_reader *r, void *buf,
                                                  size_t cap, size_t *n);
/*
 * The whole block of the current record (nothing of it read yet), borrowed until the next
 * call on r. CRAWL_ETOOLARGE when content_length > max_block (read it with crawl_warc_read()
 * or skip it); CRAWL_ETRUNCATED or CRAWL_EFORMAT (block not followed by CRLF CRLF: wrong
 * Content-Length) when damaged: *data, *len then hold what there was, and the reader
 * resynchronises from the start of the block; CRAWL_EGZIP when the block looks whole but
 * came from a gzip member that failed to inflate (a CRC error): do not trust or copy it.
 */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_block(struct crawl_warc_reader *r, const char **data,
                                                   size_t *len);
/* A field of rec by name (case-insensitive), or NULL. */
const char *crawl_warc_field(const struct crawl_warc_record *rec, const char *name);
/* 0: plain; 1: gzip, one member per record; 2: gzip, records sharing members. */
unsigned crawl_warc_reader_gzip(const struct crawl_warc_reader *r);
uint64_t crawl_warc_reader_errors(const struct crawl_warc_reader *r); /* damage reports */
uint64_t crawl_warc_reader_pos(const struct crawl_warc_reader *r);    /* file bytes consumed */

/* -- HTTP messages in request/response blocks (RFC 9112) -- */

#define CRAWL_HTTP_DEFAULT_MAX_BODY (64u * 1024 * 1024) /* decoded body cap (zip bombs) */
#define CRAWL_HTTP_MAX_HEADERS 1000u                    /* header lines kept */

struct crawl_http_opts {
    size_t max_body;       /* cap of the decoded body; 0: the default */
    struct crawl_mem *mem; /* the decoded body's bytes are taken from this budget (borrowed:
                              must outlive the message); no room: CRAWL_ETOOLARGE, the
                              error says "memory budget"; NULL: none */
};

struct crawl_http_msg;

/*
 * Parses the HTTP message data[0..len) (status or request line, headers, body). Folded
 * header lines are joined, bad header lines skipped, duplicates kept. CRAWL_EFORMAT when
 * there is no status/request line or no end of headers. *out: caller frees with
 * crawl_http_free(); it borrows nothing from data.
 */
CRAWL_WARN_UNUSED enum crawl_code crawl_http_parse(const char *data, size_t len,
                                                   const struct crawl_http_opts *opts,
                                                   struct crawl_http_msg **out);
void crawl_http_free(struct crawl_http_msg *m);                /* NULL-safe */
int crawl_http_status(const struct crawl_http_msg *m);         /* 0 for a request */
const char *crawl_http_method(const struct crawl_http_msg *m); /* "" for a response */
/* The first header of that name (case-insensitive), or NULL; borrowed from m. */
const char *crawl_http_header(const struct crawl_http_msg *m, const char *name);
size_t crawl_http_header_count(const struct crawl_http_msg *m);
void crawl_http_header_at(const struct crawl_http_msg *m, size_t i, const char **name,
                          const char **value);
size_t crawl_http_head_len(const struct crawl_http_msg *m); /* bytes up to the body */
/* The media type of Content-Type, lower case ("text/html"), and its charset ("" if none). */
const char *crawl_http_mime(const struct crawl_http_msg *m);
const char *crawl_http_charset(const struct crawl_http_msg *m);
/* 1 when a Content-Type value names an HTML page: text/html or application/xhtml+xml, any
 * case, parameters after ';' ignored; 0 otherwise (NULL or empty too). */
int crawl_mime_is_html(const char *content_type);
/* The payload: body with the transfer coding removed and the content coding kept — what
 * WARC-Payload-Digest covers. Borrowed from m. */
const char *crawl_http_payload(const struct crawl_http_msg *m, size_t *len);
/* The payload with its content coding (gzip, x-gzip, deflate, br) decoded, for
 * extraction; decoded on the first call, borrowed from m. On a bad coding or the cap,
 * what was decoded is kept and crawl_http_body_code() says what went wrong. */
CRAWL_WARN_UNUSED enum crawl_code crawl_http_body(struct crawl_http_msg *m, const char **data,
                                                  size_t *len);
/* CRAWL_OK, or the first body problem (CRAWL_ECHUNKED, CRAWL_EDECODE, CRAWL_ETOOLARGE,
 * CRAWL_EUNSUPPORTED, CRAWL_ETRUNCATED) and its words in crawl_http_body_error(). */
enum crawl_code crawl_http_body_code(const struct crawl_http_msg *m);
const char *crawl_http_body_error(const struct crawl_http_msg *m); /* "" when none */

/* -- the writer -- */

#define CRAWL_WARC_DEFAULT_ROTATE (1024ull * 1024 * 1024) /* rotate files past 1 GB */
#define CRAWL_WARC_ID_SIZE 48 /* "<urn:uuid:xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx>" + NUL */

struct crawl_warc_writer_opts {
    uint64_t rotate_size; /* start a new file once one reaches this; 0: the default */
    const char *software; /* warcinfo "software:", NULL: "simcrawl" */
    const char *info;     /* extra warcinfo lines "key: value\r\n", or NULL */
    int gzip_level;       /* 1..9; 0: 6 */
};

struct crawl_warc_writer;

/*
 * Opens a writer. path ending in ".warc" writes plain records, anything else one gzip
 * member per record. Files are written as NAME.open and renamed to NAME when complete
 * (rotation or crawl_warc_writer_close()). Names: the first file is path itself; after
 * rotation "-00001", "-00002"... go before the ".warc" / ".warc.gz" extension
 * (crawl.warc.gz, crawl-00001.warc.gz...). Every file starts with a warcinfo record.
 * *out: close with crawl_warc_writer_close().
 */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_writer_open(const char *path,
                                                         const struct crawl_warc_writer_opts *opts,
                                                         struct crawl_warc_writer **out);
/* Flushes, closes and renames the file; frees w (NULL-safe). CRAWL_EIO if the last
 * write or the rename failed (the .open file is then left as it is). */
enum crawl_code crawl_warc_writer_close(struct crawl_warc_writer *w);
/* Where a writer is: file number seq (0: the first), its length (everything written out),
 * its records and its warcinfo record's id. */
struct crawl_warc_position {
    unsigned seq;
    uint64_t offset;
    uint64_t records;
    char warcinfo_id[CRAWL_WARC_ID_SIZE];
};
/* Writes out what is buffered (sync: and fdatasync()s it); pos (may be NULL) receives the
 * end of the last whole record. CRAWL_EIO on a write error (sticky). */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_writer_flush(struct crawl_warc_writer *w, int sync,
                                                          struct crawl_warc_position *pos);
/* Opens a writer that continues where pos (a flush's) was: file pos->seq (NAME.open, or
 * NAME renamed back) cut to pos->offset, later files removed (see warc_write.c). CRAWL_EIO
 * when the file is missing or shorter than pos->offset. *out: close with
 * crawl_warc_writer_close(). */
CRAWL_WARN_UNUSED enum crawl_code
crawl_warc_writer_resume(const char *path, const struct crawl_warc_writer_opts *opts,
                         const struct crawl_warc_position *pos, struct crawl_warc_writer **out);
/* The name of the file being written (without ".open"), borrowed from w. */
const char *crawl_warc_writer_path(const struct crawl_warc_writer *w);
/* The last I/O error in words ("" when none), borrowed from w. */
const char *crawl_warc_writer_error(const struct crawl_warc_writer *w);

/* One fetch: a response record and, when request is not NULL, a request record. */
struct crawl_warc_exchange {
    const char *uri;     /* target URI */
    const char *ip;      /* WARC-IP-Address, or NULL */
    const char *date;    /* WARC-Date, or NULL for now */
    const char *request; /* the HTTP request as sent, or NULL */
    size_t request_len;
    const char *head; /* the response status line and headers, up to the empty line */
    size_t head_len;
    const char *body; /* the body as received (still chunked if the head says so) */
    size_t body_len;
    /* "sha1:..." of the payload when the caller has computed it already (the crawler does,
     * for its exact-duplicate check), or NULL: the writer computes it. Borrowed; the caller
     * vouches that it is the digest the writer would compute (see payload digest below). */
    const char *payload_digest;
    /* the response's WARC-Record-ID chosen beforehand (crawl_warc_new_record_id(): a shared
     * crawl stores it in Redis with the decision, for the revisits of other workers), or
     * NULL: a new one */
    const char *record_id;
};

/* A new WARC-Record-ID ("<urn:uuid:...>", random). CRAWL_OK, or CRAWL_EIO when the system
 * has no randomness to give. */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_new_record_id(char out[CRAWL_WARC_ID_SIZE]);

/* Writes x; id_out (may be NULL) receives the response's WARC-Record-ID. The payload
 * digest is over the body with chunked coding removed and content coding kept. */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_write_response(struct crawl_warc_writer *w,
                                                            const struct crawl_warc_exchange *x,
                                                            char id_out[CRAWL_WARC_ID_SIZE]);

/* An exact duplicate of an earlier capture: a revisit record, profile
 * identical-payload-digest, whose block is the HTTP head only. */
struct crawl_warc_revisit {
    const char *uri, *ip, *date; /* of this capture; ip may be NULL, date NULL for now */
    const char *head;            /* this capture's response status line and headers */
    size_t head_len;             /* 0 for a revisit of a resource record: an empty block,
                                    no Content-Type */
    const char *payload_digest;  /* "sha1:..." shared by both captures */
    const char *refers_to;       /* WARC-Record-ID of the original ("<urn:uuid:...>") */
    const char *refers_to_uri;   /* its target URI */
    const char *refers_to_date;  /* its WARC-Date */
};
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_write_revisit(struct crawl_warc_writer *w,
                                                           const struct crawl_warc_revisit *v,
                                                           char id_out[CRAWL_WARC_ID_SIZE]);

/*
 * Writing in two steps, for threads that share one writer. crawl_warc_prepare_response and
 * crawl_warc_prepare_revisit do the CPU work (record ids, dates, SHA-1 digests, the header
 * fields, the gzip members) in memory without touching the file: they may run on any
 * thread, concurrently with each other and with the one thread inside another call on w.
 * crawl_warc_prepared_append writes a prepared record (pair) to the file; it, like every
 * other call on w, must be serialised by the caller. It rotates as the one-call functions
 * do; when the file changed since prepare, it names the new file's warcinfo record and
 * compresses again. The records written are those crawl_warc_write_response /
 * crawl_warc_write_revisit would write (those two are prepare + append).
 * Ownership: *out is new, freed with crawl_warc_prepared_free() (append does not free it);
 * the head, body and request buffers of x / v are borrowed and must stay unchanged until
 * append returns (the other strings are copied). Errors as the one-call functions:
 * CRAWL_EINVAL, CRAWL_ENOMEM, CRAWL_ETOOLARGE (header fields over 64 KiB), CRAWL_EIO.
 */
struct crawl_warc_prepared;
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_prepare_response(struct crawl_warc_writer *w,
                                                              const struct crawl_warc_exchange *x,
                                                              struct crawl_warc_prepared **out);
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_prepare_revisit(struct crawl_warc_writer *w,
                                                             const struct crawl_warc_revisit *v,
                                                             struct crawl_warc_prepared **out);
/* Writes p to w; id_out (may be NULL) receives the response's or revisit's WARC-Record-ID.
 * p was prepared for w; it may be appended once. */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_prepared_append(struct crawl_warc_writer *w,
                                                             struct crawl_warc_prepared *p,
                                                             char id_out[CRAWL_WARC_ID_SIZE]);
void crawl_warc_prepared_free(struct crawl_warc_prepared *p); /* NULL-safe */

/* Copies rec, the current record of r, through unchanged: its header bytes, its block
 * and the CRLF CRLF, in a gzip member of its own (when rec was exactly one gzip member of
 * a regular input file, those compressed bytes are copied as they are). Nothing of the block may
 * have been read with crawl_warc_read() (crawl_warc_block() is fine). A damaged block is not
 * copied: the reader's code (CRAWL_ETRUNCATED, CRAWL_EFORMAT, CRAWL_EGZIP) comes back and nothing
 * is written; a block too large to hold is streamed to the file and, when it turns out
 * damaged at its end (crawl_warc_read), the file is truncated back to where it began. */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_writer_copy(struct crawl_warc_writer *w,
                                                         struct crawl_warc_reader *r,
                                                         const struct crawl_warc_record *rec);
/* Writes one record made of header[0..header_len) (up to and including the empty line)
 * and block[0..block_len), as given. */
CRAWL_WARN_UNUSED enum crawl_code crawl_warc_write_raw(struct crawl_warc_writer *w,
                                                       const char *header, size_t header_len,
                                                       const char *block, size_t block_len);

/* ==== URLs, frontier, fetcher, the crawl loop ==== */

/* -- URLs (crawler/url.c; libcurl's URL API) -- */

#define CRAWL_URL_MAX 8192 /* longest URL accepted, in bytes, before and after canonicalising */

/*
 * The canonical form of url, resolved against base when base is not NULL (base need not
 * be canonical): lower-case scheme and host (an international host stays in UTF-8: crawler/url.c
 * says why), no default port, no user or password, no fragment, dot segments removed,
 * percent-encoding normalised (unreserved escapes decoded, hex in upper case, unsafe bytes
 * encoded), "/" for an empty path, no empty query. Only http and https. *out: caller frees with
 * free(). CRAWL_EURL when the result is not a valid http(s) URL or is longer than CRAWL_URL_MAX.
 */
CRAWL_WARN_UNUSED enum crawl_code crawl_url_canonicalise(const char *url, const char *base,
                                                         char **out);

/* Length of "scheme:" at the start of s[0..n) (RFC 3986 3.1: ALPHA *( ALPHA / DIGIT /
 * "+" / "-" / "." ) ":"), or 0 when there is none. */
size_t crawl_url_scheme_len(const char *s, size_t n);

/* Offsets into a canonical URL: origin = canon[0..origin_len) ("http://host:port"),
 * host = canon[host_off..host_off+host_len) (IPv6 with its brackets), path from path_off. */
struct crawl_url_parts {
    size_t origin_len;
    size_t host_off, host_len;
    size_t path_off;
};
CRAWL_WARN_UNUSED enum crawl_code crawl_url_split(const char *canon, struct crawl_url_parts *out);

/* -- the seen set (crawler/seen.c): 64-bit SipHash-2-4 of each canonical URL -- */

#define CRAWL_SEEN_DEFAULT_MAX (1u << 28) /* URLs remembered at most (2 GB of table) */

/* SipHash-2-4 of data[0..len) under key (Aumasson and Bernstein 2012). */
uint64_t crawl_siphash24(const uint8_t key[16], const void *data, size_t len);
/* The URL hash: SipHash-2-4 under the fixed key 00 01 02 .. 0f. */
uint64_t crawl_hash64(const void *data, size_t len);

struct crawl_seen;

/* max_entries: cap (0: CRAWL_SEEN_DEFAULT_MAX). *out: caller frees with crawl_seen_free(). */
CRAWL_WARN_UNUSED enum crawl_code crawl_seen_new(size_t max_entries, struct crawl_seen **out);
void crawl_seen_free(struct crawl_seen *s); /* NULL-safe */
/* Adds hash h: *added = 1 if it was new, 0 if already there. CRAWL_ETOOLARGE at the cap,
 * CRAWL_ENOMEM when the table cannot grow (s unchanged). */
CRAWL_WARN_UNUSED enum crawl_code crawl_seen_add(struct crawl_seen *s, uint64_t h, int *added);
int crawl_seen_contains(const struct crawl_seen *s, uint64_t h);
size_t crawl_seen_count(const struct crawl_seen *s);
size_t crawl_seen_bytes(const struct crawl_seen *s); /* memory in use, table included */
void crawl_seen_clear(struct crawl_seen *s);         /* empty, keeping its table */

/* A Bloom filter of hashes (seen.c): no false negatives, false positives at a rate that
 * grows with the count (5 bits a hash; 1 % at 10 bits per hash, 9 % at 5). */
struct crawl_bloom;
/* bytes: its size, rounded down to a power of two (at least 4096). Caller frees with
 * crawl_bloom_free(). */
CRAWL_WARN_UNUSED enum crawl_code crawl_bloom_new(size_t bytes, struct crawl_bloom **out);
void crawl_bloom_free(struct crawl_bloom *b); /* NULL-safe */
void crawl_bloom_add(struct crawl_bloom *b, uint64_t h);
int crawl_bloom_maybe(const struct crawl_bloom *b, uint64_t h); /* 0: never added */
size_t crawl_bloom_count(const struct crawl_bloom *b);          /* hashes added */
size_t crawl_bloom_bytes(const struct crawl_bloom *b);
/* Adds every hash of s to b and empties s. */
void crawl_seen_spill(struct crawl_seen *s, struct crawl_bloom *b);

/* -- the frontier (crawler/frontier.c): per-host queues, politeness, priorities -- */

#define CRAWL_DEFAULT_MAX_DELAY 30.0                         /* cap of a robots Crawl-delay, s */
#define CRAWL_FRONTIER_DEFAULT_MAX_ITEMS (50u * 1000 * 1000) /* URLs queued at most */

struct crawl_frontier_opts {
    unsigned per_host; /* transfers to one host at once; 0: 1 */
    double delay;      /* seconds between requests to one host (see frontier.c) */
    double max_delay;  /* cap for crawl_frontier_set_delay(); 0: CRAWL_DEFAULT_MAX_DELAY */
    size_t max_items;  /* cap of queued URLs; 0: CRAWL_FRONTIER_DEFAULT_MAX_ITEMS */
};

/* The referring URL of queued URLs: one string shared by every URL a page (or a redirect)
 * led to, counted (loop thread only), so that a queued URL pays a pointer for it. */
struct crawl_ref {
    unsigned refs;
    int64_t id; /* url's row in the crawl's state (0: none; the caller sets it) */
    char url[];
};

/* A new reference to url (refs 1), NULL when out of memory. Caller drops it with
 * crawl_ref_put(). */
struct crawl_ref *crawl_ref_new(const char *url);
struct crawl_ref *crawl_ref_get(struct crawl_ref *r); /* one more reference; NULL-safe */
void crawl_ref_put(struct crawl_ref *r);              /* one reference less; NULL-safe */

/* One queued URL. Popped items are the caller's: crawl_item_release(). */
struct crawl_item {
    char *url;
    struct crawl_ref *referrer; /* the page (or redirect) it was found on; NULL: a seed */
    unsigned depth;             /* links from a seed */
    unsigned hops;              /* redirects followed to reach it */
    float priority;             /* higher first within a host; -depth gives breadth-first order */
    uint64_t seq;               /* queue order, ties go to the older */
    int64_t id;                 /* its row in the crawl's state (0: none) */
};

/* Frees item->url and drops item->referrer. */
void crawl_item_release(struct crawl_item *item);

struct crawl_frontier;
struct crawl_host; /* one origin; owned by the frontier, valid until crawl_frontier_free() */

CRAWL_WARN_UNUSED enum crawl_code crawl_frontier_new(const struct crawl_frontier_opts *opts,
                                                     struct crawl_frontier **out);
void crawl_frontier_free(struct crawl_frontier *f); /* NULL-safe; frees queued URLs */
/* The host of origin[0..origin_len), created on first use (*out borrowed from f). */
CRAWL_WARN_UNUSED enum crawl_code crawl_frontier_host(struct crawl_frontier *f, const char *origin,
                                                      size_t origin_len, struct crawl_host **out);
/* Queues a copy of url on host h, found on referrer (NULL: none; the item takes a
 * reference), with id its row in the crawl's state (0: none). CRAWL_ETOOLARGE past
 * max_items. now: monotonic s. */
CRAWL_WARN_UNUSED enum crawl_code crawl_frontier_push(struct crawl_frontier *f,
                                                      struct crawl_host *h, const char *url,
                                                      unsigned depth, unsigned hops, float priority,
                                                      struct crawl_ref *referrer, int64_t id,
                                                      double now);
/* Keeps the keep best queued URLs of h (a focused crawl's window): drops every queued URL
 * whose priority is at most *cut, the priority of the best one beyond keep, so that at
 * most keep stay (fewer when several share *cut). Returns how many were dropped (0 and
 * *cut unchanged when h has at most keep). */
size_t crawl_frontier_trim(struct crawl_frontier *f, struct crawl_host *h, size_t keep, float *cut);
/*
 * The next URL to fetch at time now: returns 1 with *item (caller: crawl_item_release) and
 * *host, whose slot stays taken until crawl_frontier_done(). Returns 0 when no host may
 * be asked yet: *wake is the earliest time one may be (INFINITY when every host with
 * URLs is busy or held, or nothing is queued).
 */
int crawl_frontier_pop(struct crawl_frontier *f, double now, struct crawl_item *item,
                       struct crawl_host **host, double *wake);
/* A transfer to h has ended at now: frees its slot; the next may start delay s later. */
void crawl_frontier_done(struct crawl_frontier *f, struct crawl_host *h, double now);
/* The last item popped from h was not fetched after all (robots.txt, a stale duplicate
 * entry): frees its slot and gives back the turn, as if it had not been popped. */
void crawl_frontier_cancel(struct crawl_frontier *f, struct crawl_host *h, double now);
/* hold != 0: h is not served until released with hold == 0 (calls nest). */
void crawl_frontier_hold(struct crawl_frontier *f, struct crawl_host *h, int hold, double now);
/* Nothing more is asked of h before not_before, nor before its delay has run from now (a
 * robots.txt transfer ended at now; a robots.txt retry is due at not_before). Never makes
 * the host's next turn earlier. */
void crawl_frontier_pause(struct crawl_frontier *f, struct crawl_host *h, double not_before,
                          double now);
/* Sets h's delay, clamped to [opts.delay, opts.max_delay]; returns the delay in force. */
double crawl_frontier_set_delay(struct crawl_frontier *f, struct crawl_host *h, double delay,
                                double now);
size_t crawl_frontier_size(const struct crawl_frontier *f);       /* URLs queued */
size_t crawl_frontier_host_count(const struct crawl_frontier *f); /* hosts known */
const char *crawl_host_origin(const struct crawl_host *h);
size_t crawl_host_queued(const struct crawl_host *h);
unsigned crawl_host_active(const struct crawl_host *h);
double crawl_host_next_allowed(const struct crawl_host *h); /* monotonic s; -INFINITY: now */
double crawl_host_delay(const struct crawl_host *h);        /* s in force */
void *crawl_host_userdata(const struct crawl_host *h);      /* the caller's per-host state */
void crawl_host_set_userdata(struct crawl_host *h, void *userdata);

/* -- the fetcher (crawler/fetch.c): libcurl multi, one event loop, many transfers -- */

#define CRAWL_DEFAULT_CONCURRENCY 16u
#define CRAWL_DEFAULT_CONNECT_TIMEOUT 10.0         /* s */
#define CRAWL_DEFAULT_TIMEOUT 30.0                 /* s, a whole transfer */
#define CRAWL_DEFAULT_LOW_SPEED_BYTES 100L         /* abort a transfer slower than this (bytes/s) */
#define CRAWL_DEFAULT_LOW_SPEED_TIME 10L           /* ... for this many seconds */
#define CRAWL_DEFAULT_MAX_BODY (10u * 1024 * 1024) /* body cap, bytes as received */
#define CRAWL_DEFAULT_USER_AGENT "simcrawl/0.1 (+https://github.com/simcrawl/simcrawl)"

/* Monotonic clock in seconds (CLOCK_MONOTONIC): the time base of the frontier. */
double crawl_clock(void);

/*
 * A memory budget shared by the fetcher (response buffers) and the decoder (decoded
 * bodies), on any thread (crawler/mem.c). Takes are all or nothing, so held never passes
 * limit. A NULL budget takes everything (no limit).
 */
struct crawl_mem;
struct crawl_mem_stats {
    size_t limit, held, peak; /* bytes */
    uint64_t gives;           /* gives so far */
};
struct crawl_mem *crawl_mem_new(size_t limit); /* 0: no limit. NULL when out of memory;
                                                  caller frees with crawl_mem_free() */
void crawl_mem_free(struct crawl_mem *m);      /* NULL-safe */
/* Takes n bytes of the budget; CRAWL_ETOOLARGE: they would take held over the limit,
 * nothing taken. */
CRAWL_WARN_UNUSED enum crawl_code crawl_mem_take(struct crawl_mem *m, size_t n);
/* The same, but only while keep bytes stay free after it (the fetcher leaves
 * CRAWL_MEM_DECODE_SHARE of the limit to the decoders). */
CRAWL_WARN_UNUSED enum crawl_code crawl_mem_take_leaving(struct crawl_mem *m, size_t n,
                                                         size_t keep);
#define CRAWL_MEM_DECODE_SHARE(limit) ((limit) / 4)
void crawl_mem_give(struct crawl_mem *m, size_t n);
void crawl_mem_get(struct crawl_mem *m, struct crawl_mem_stats *out);

struct crawl_fetcher_opts {
    unsigned concurrency;   /* transfers and connections in all; 0: CRAWL_DEFAULT_CONCURRENCY */
    unsigned per_host;      /* connections per host; 0: 1 */
    double connect_timeout; /* s; 0: the default */
    double timeout;         /* s; 0: the default */
    long low_speed_bytes;   /* 0: the default */
    long low_speed_time;    /* s; 0: the default */
    size_t max_body;        /* 0: CRAWL_DEFAULT_MAX_BODY */
    const char *user_agent; /* borrowed for the fetcher's life; NULL: the default */
    const char *ca_file;    /* PEM CA certificates to verify https servers with, set as
                               CURLOPT_CAINFO on every transfer (pages and robots.txt);
                               borrowed for the fetcher's life; NULL: libcurl's default */
    struct crawl_mem *mem;  /* the budget the response buffers are taken from (borrowed:
                               must outlive the fetcher and its responses); NULL: none.
                               A transfer that finds no room waits (paused); one that
                               alone would pass the limit fails ("over the memory budget") */
};

enum crawl_fetch_kind {
    CRAWL_FETCH_PAGE = 0,  /* a page: a 2xx answer that is not HTML is aborted (filtered) */
    CRAWL_FETCH_ANY,       /* robots.txt: any type, redirects followed, decoded, capped at
                              CRAWL_ROBOTS_MAX_BYTES (the first bytes kept, result TOOLARGE) */
    CRAWL_FETCH_REQUISITE, /* a page requisite (image, stylesheet, script): as a page
                              (archived as sent, redirects not followed, max_body), any type */
};

enum crawl_fetch_result {
    CRAWL_FETCH_DONE = 0, /* a complete HTTP response, whatever its status */
    CRAWL_FETCH_FILTERED, /* a 2xx page answer that is not HTML: aborted after the headers */
    CRAWL_FETCH_TOOLARGE, /* the body passed max_body: aborted */
    CRAWL_FETCH_TIMEOUT,  /* connect, total or low-speed timeout */
    CRAWL_FETCH_FAILED,   /* no answer or a broken one: DNS, refused, reset, protocol */
    CRAWL_FETCH_ABORTED,  /* crawl_fetcher_abort_all() */
};

/* One finished transfer; caller frees with crawl_response_free(). */
struct crawl_response {
    char *url; /* as requested */
    enum crawl_fetch_kind kind;
    enum crawl_fetch_result result;
    long status;          /* HTTP status; 0 when none was received */
    char error[256];      /* what went wrong in words; "" for CRAWL_FETCH_DONE */
    char *data;           /* the response head (status line .. empty line), then the
                             body as received (content coding kept); NUL after */
    size_t head_len, len; /* body = data + head_len, body length = len - head_len */
    char *request;        /* the request head as sent, or NULL */
    size_t request_len;
    char *content_type; /* header values, or NULL when absent */
    char *location;
    char *content_encoding;
    int too_many_redirects; /* CRAWL_FETCH_ANY: more than CRAWL_ROBOTS_MAX_REDIRECTS */
    unsigned redirects;     /* CRAWL_FETCH_ANY: redirects followed (0 otherwise) */
    char *final_url;        /* CRAWL_FETCH_ANY: the URL that answered, or NULL */
    char ip[48];            /* the server's address, "" when unknown */
    double start, end;      /* crawl_clock() */
    int64_t date;           /* time(NULL) when the transfer started */
    void *userdata;         /* as given to crawl_fetcher_add() */
};
void crawl_response_free(struct crawl_response *r); /* NULL-safe */

struct crawl_fetcher;

/* *out: caller frees with crawl_fetcher_free() (which drops transfers in flight). The
 * program calls curl_global_init() once before (in main(), before threads exist) and
 * curl_global_cleanup() after: a library never does, as both are process-wide. */
CRAWL_WARN_UNUSED enum crawl_code crawl_fetcher_new(const struct crawl_fetcher_opts *opts,
                                                    struct crawl_fetcher **out);
void crawl_fetcher_free(struct crawl_fetcher *fx); /* NULL-safe */
/* Starts fetching url (absolute http/https). The caller keeps the count of transfers
 * under its concurrency (crawl_fetcher_active()); libcurl queues any beyond its caps.
 * CRAWL_ETOOLARGE: no room in opts.mem for the first buffer (4 KiB); try later. */
CRAWL_WARN_UNUSED enum crawl_code crawl_fetcher_add(struct crawl_fetcher *fx, const char *url,
                                                    enum crawl_fetch_kind kind, void *userdata);
/* The same with a shorter time for this transfer: timeout > 0 (s) caps its whole time and
 * its connect time below the fetcher's; 0 leaves the fetcher's. */
CRAWL_WARN_UNUSED enum crawl_code crawl_fetcher_add_within(struct crawl_fetcher *fx,
                                                           const char *url,
                                                           enum crawl_fetch_kind kind,
                                                           double timeout, void *userdata);
/* Moves the transfers on, waiting up to timeout_ms for network activity or a
 * crawl_fetcher_wakeup(); finished transfers are then had with crawl_fetcher_next(). */
CRAWL_WARN_UNUSED enum crawl_code crawl_fetcher_run(struct crawl_fetcher *fx, int timeout_ms);
/* The next finished transfer, or NULL. Caller frees it with crawl_response_free(). */
struct crawl_response *crawl_fetcher_next(struct crawl_fetcher *fx);
/* Wakes a crawl_fetcher_run() that is waiting; safe from any thread. */
void crawl_fetcher_wakeup(struct crawl_fetcher *fx);
/* Ends every transfer in flight as CRAWL_FETCH_ABORTED (then had with _next()). */
void crawl_fetcher_abort_all(struct crawl_fetcher *fx);
unsigned crawl_fetcher_active(const struct crawl_fetcher *fx);
uint64_t crawl_fetcher_bytes(const struct crawl_fetcher *fx); /* body bytes received */
/* Transfers paused for want of room in the budget (opts.mem). */
unsigned crawl_fetcher_paused(const struct crawl_fetcher *fx);
/* Every transfer waits for room and nothing else will give any back: fails the paused
 * transfer holding the most, "over the memory budget of N bytes". */
void crawl_fetcher_fail_paused(struct crawl_fetcher *fx);

/* -- the crawl's state on disk (crawler/state.c; `simcrawl crawl --state DIR`) -- */

#define CRAWL_STATE_COMMIT_INTERVAL 0.1     /* s: group commit at least this often ... */
#define CRAWL_STATE_COMMIT_PAGES 1000u      /* ... or after this many pages */
#define CRAWL_STATE_SEEN_MEMORY (32u << 20) /* crawl_opts.seen_memory's default */
#define CRAWL_STATE_WINDOW                                                                         \
    512u /* queued URLs of one host held in memory; the rest                                       \
            stay in the state until the window drains (tests:                                      \
            the environment's SIMCRAWL_STATE_WINDOW) */

/* A URL's state (the urls table's state column; the numbers are stored). */
enum crawl_url_state {
    CRAWL_URL_QUEUED = 0,
    CRAWL_URL_DONE,      /* fetched and kept (decision new) */
    CRAWL_URL_DUPLICATE, /* near- or exact-duplicate */
    CRAWL_URL_FAILED,    /* error */
    CRAWL_URL_SKIPPED,   /* filtered, robots-disallowed, redirect */
    CRAWL_URL_LEASED,    /* its transfer started, its result not committed yet: queued
                          * again when the state is opened (state.c, HOW IT WORKS) */
    CRAWL_URL_NSTATES
};

/* A host's row: politeness and its robots.txt reading. Times are wall-clock seconds
 * (time(NULL) base) so that they mean the same thing to the next process. */
struct crawl_state_host {
    double delay;            /* s between requests (Crawl-delay applied) */
    double next_allowed;     /* not asked again before this */
    int robots_status;       /* of the last robots.txt reading kept; 0: none */
    const void *robots_body; /* borrowed */
    size_t robots_len;
    double robots_time; /* when it was fetched */
};

struct crawl_state;

/* Opens (creating when missing) DIR/state.db with one write transaction open; durable:
 * synchronous=FULL (a power cut loses nothing committed). *created: 1 when the database
 * did not exist before. On failure err[errlen] says why. Caller closes with
 * crawl_state_close(), which rolls back what was not committed. One process at a time:
 * a second one gets CRAWL_EIO ("in use"). */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_open(const char *dir, int durable,
                                                   struct crawl_state **out, int *created,
                                                   char *err, size_t errlen);
void crawl_state_close(struct crawl_state *s);              /* NULL-safe */
const char *crawl_state_error(const struct crawl_state *s); /* the last failure in words */
/* What opening did to an earlier run's state: URLs found leased (in flight at its end)
 * and queued again; the schema version it was migrated from (0: none). */
int64_t crawl_state_requeued(const struct crawl_state *s);
int crawl_state_migrated_from(const struct crawl_state *s);
/* Crash points for the kill tests: fn(name) at "crawl-commit-begin" (before COMMIT) and
 * "crawl-commit-done" (after it); cli passes dedup_crash_point. */
void crawl_state_set_crash_hook(struct crawl_state *s, void (*fn)(const char *name));
/* Ends the open transaction (everything since the last commit is durable at once) and
 * opens the next. */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_commit(struct crawl_state *s);
size_t crawl_state_pending(const struct crawl_state *s); /* changes not committed yet */
uint64_t crawl_state_commits(const struct crawl_state *s);
/* meta: *found 0 when the key is absent; text: *v malloc'd (caller frees) or NULL. */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_meta_int(struct crawl_state *s, const char *key,
                                                       int64_t *v, int *found);
CRAWL_WARN_UNUSED enum crawl_code crawl_state_meta_text(struct crawl_state *s, const char *key,
                                                        char **v);
CRAWL_WARN_UNUSED enum crawl_code crawl_state_set_meta_int(struct crawl_state *s, const char *key,
                                                           int64_t v);
CRAWL_WARN_UNUSED enum crawl_code crawl_state_set_meta_text(struct crawl_state *s, const char *key,
                                                            const char *v);
/* The id of origin's row, added when new. */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_host(struct crawl_state *s, const char *origin,
                                                   int64_t *id);
/* Saves a host's politeness: delay, and next_allowed (wall clock). */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_host_save(struct crawl_state *s, int64_t id,
                                                        double delay, double next_allowed);
/* Saves a host's robots.txt reading (status, body, when fetched: wall clock). */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_host_robots(struct crawl_state *s, int64_t id,
                                                          int status, const void *body, size_t len,
                                                          double when);
/* fn for every host row in id order with its number of queued URLs (h borrowed for the
 * call); a non-zero return stops with CRAWL_ENOMEM. */
CRAWL_WARN_UNUSED enum crawl_code
crawl_state_foreach_host(struct crawl_state *s,
                         int (*fn)(void *userdata, int64_t id, const char *origin,
                                   const struct crawl_state_host *h, int64_t queued),
                         void *userdata);
/* Adds a queued URL (hash: crawl_hash64 of url, the seen set's key), found on the URL
 * whose row id is referrer (0: none, a seed); *id its row id. Each URL is added once: the
 * caller's seen set says whether it is new (crawl_state_url_has past its memory). */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_url_add(struct crawl_state *s, uint64_t hash,
                                                      int64_t host, const char *url, unsigned depth,
                                                      unsigned hops, float priority,
                                                      int64_t referrer, int64_t *id);
/* The URL of row id is leased: its transfer has started (written in the open transaction,
 * like every change: no write of its own). */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_url_lease(struct crawl_state *s, int64_t id);
/* Raises the priority of the URL of hash to priority (a focused crawl found it again) if it
 * is queued with a priority below below; *id: its row id when raised, else 0. */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_url_priority(struct crawl_state *s, uint64_t hash,
                                                           float priority, float below,
                                                           int64_t *id);
/* *found: 1 when the URL of hash was ever added (the seen set past its memory). */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_url_has(struct crawl_state *s, uint64_t hash,
                                                      int *found);
/* Sets the state and decision (enum crawl_decision) of the URL of row id. */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_url_set(struct crawl_state *s, int64_t id,
                                                      enum crawl_url_state state, int decision);
/* The queued URLs of host with row ids above after, in id order, at most limit: fn for
 * each (url and referrer borrowed; referrer NULL and ref 0 for a seed or a URL queued by a
 * state of schema 1; ref the referrer's row id); *n how many. */
CRAWL_WARN_UNUSED enum crawl_code
crawl_state_queued(struct crawl_state *s, int64_t host, int64_t after, size_t limit,
                   int (*fn)(void *userdata, int64_t id, const char *url, unsigned depth,
                             unsigned hops, float priority, int64_t ref, const char *referrer),
                   void *userdata, size_t *n);
/* Makes the index crawl_state_queued_best reads (a focused crawl, once at its start). */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_best_order(struct crawl_state *s);
/* The queued URLs of host ranked below (below_prio, below_id) in the order best first
 * (priority descending, then row id ascending; below (INFINITY, 0): all of them), at most
 * limit, best first: fn for each as crawl_state_queued; *n how many. */
CRAWL_WARN_UNUSED enum crawl_code
crawl_state_queued_best(struct crawl_state *s, int64_t host, float below_prio, int64_t below_id,
                        size_t limit,
                        int (*fn)(void *userdata, int64_t id, const char *url, unsigned depth,
                                  unsigned hops, float priority, int64_t ref, const char *referrer),
                        void *userdata, size_t *n);
/* fn for the hash of every URL ever queued (the seen set), with done: 1 when its transfer
 * was made (any state but queued). */
CRAWL_WARN_UNUSED enum crawl_code
crawl_state_foreach_hash(struct crawl_state *s, int (*fn)(void *userdata, uint64_t hash, int done),
                         void *userdata);
/* URLs per state. */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_url_counts(struct crawl_state *s,
                                                         int64_t counts[CRAWL_URL_NSTATES]);
/* The caller's records, one per page, replayed in commit order by foreach (fn returns 0,
 * -1 out of memory, 1 a record it cannot read). */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_page_add(struct crawl_state *s, const void *data,
                                                       size_t len);
CRAWL_WARN_UNUSED enum crawl_code
crawl_state_foreach_page(struct crawl_state *s,
                         int (*fn)(void *userdata, const void *data, size_t len), void *userdata);

/* -- the pages' main texts (state.c, "the pages' texts"): what `crawl --report` and
 * `simcrawl clusters STATE_DIR` need for the word diffs of the pages of earlier runs -- */
#define CRAWL_STATE_TEXT_MAX (16u << 20) /* bytes of one page's text the state takes */

/* A page's main text packed for the state: a zlib stream (RFC 1950) of len bytes. */
struct crawl_text {
    unsigned char *z; /* malloc'd; NULL: none */
    size_t zlen;
    size_t len; /* the text's own bytes */
};
/* Packs text[0..len) (len <= CRAWL_STATE_TEXT_MAX, else CRAWL_EINVAL) into *out; no state
 * involved, callable from any thread (the crawl's workers pack, its loop thread stores).
 * CRAWL_OK or CRAWL_ENOMEM; *out released with crawl_text_release(). */
CRAWL_WARN_UNUSED enum crawl_code crawl_text_pack(const char *text, size_t len,
                                                  struct crawl_text *out);
void crawl_text_release(struct crawl_text *t); /* NULL-safe; t is zeroed */

/* What the state has of a page record's text. */
enum crawl_text_status {
    CRAWL_TEXT_KEPT,     /* here */
    CRAWL_TEXT_NONE,     /* none was given with the record */
    CRAWL_TEXT_OVER_CAP, /* not kept: the state's texts had reached the cap given */
    CRAWL_TEXT_BEFORE,   /* the record is older than the state's texts (written by a
                          * simcrawl that kept none), or the state keeps none (--redis) */
    CRAWL_TEXT_DAMAGED   /* kept, but it does not unpack (crawl_state_error says where) */
};
/* crawl_state_page_add(data, len), and with the record its text (NULL: none) in the same
 * transaction, while the packed texts of the state stay within max_bytes in all (past it
 * the record's text is CRAWL_TEXT_OVER_CAP). With --redis only the record is added. */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_page_add_text(struct crawl_state *s, const void *data,
                                                            size_t len,
                                                            const struct crawl_text *text,
                                                            uint64_t max_bytes);
/* As crawl_state_foreach_page, with each record's text status and text (unpacked, borrowed
 * for the call; NULL unless CRAWL_TEXT_KEPT). */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_foreach_page_text(
    struct crawl_state *s,
    int (*fn)(void *userdata, const void *data, size_t len, enum crawl_text_status st,
              const char *text, size_t text_len),
    void *userdata);
/* The packed texts' bytes in the state (their cap's measure). */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_text_bytes(struct crawl_state *s, uint64_t *bytes);

/* -- the shared frontier on Redis (crawler/redis_frontier.c; `crawl --redis URL`) -- */
/*
 * Several crawl processes (workers) share one frontier in Redis: the seen set, the
 * per-host queues, leases of the URLs in flight, the hosts' politeness and robots.txt,
 * the crawl's counters, and each worker's committed WARC and log ends (see the file's
 * HOW IT WORKS). The crawl loop reaches it through a crawl_state opened with
 * crawl_state_open_redis(): the state's meta, page records and commit go to Redis, and
 * crawl.c takes its URLs from the shared frontier instead of the state's tables.
 */
#define CRAWL_REDIS_LEASE_TIME 30.0      /* s a URL in flight stays leased unless renewed */
#define CRAWL_REDIS_HOST_LEASE_TIME 10.0 /* s a worker keeps a host, taking its next URLs */
#define CRAWL_REDIS_MAX_NAME 64          /* bytes of a worker name */
#define CRAWL_REDIS_RETRY_TIME 30.0      /* s a lost connection to Redis is tried again */
/* The frontier's shards (hash tags simcrawl{f0}..{fB-1}, a host's by XXH3 of its origin)
 * a new crawl takes, at most, and how often a worker asks a shard it has no hint of. */
#define CRAWL_REDIS_SHARDS 1
#define CRAWL_REDIS_MAX_SHARDS 1024
#define CRAWL_REDIS_SHARD_REFRESH 0.2 /* s */
/* B > 1: a commit's point is made within this of its start (or lease time / 8 if less),
 * and a reaper resolves its marks no sooner than this after (the clocks' tolerance) */
#define CRAWL_REDIS_COMMIT_MARGIN 2.0 /* s */

struct crawl_redis_opts {
    const char *url;        /* redis://HOST:PORT[/DB] */
    const char *worker;     /* the worker's name: [A-Za-z0-9._-], 1 to CRAWL_REDIS_MAX_NAME */
    double lease_time;      /* s; 0: CRAWL_REDIS_LEASE_TIME */
    double host_lease_time; /* s; 0: CRAWL_REDIS_HOST_LEASE_TIME; < 0: one URL a turn */
    double retry_time;      /* s a lost connection is tried again (connecting again with
                             * a backoff from 50 ms to 1 s) before a call fails; 0:
                             * CRAWL_REDIS_RETRY_TIME; < 0: not at all */
    unsigned shards;        /* the frontier's shards, fixed when the crawl starts (kept in
                             * Redis); 0: the crawl's, or CRAWL_REDIS_SHARDS for a new one;
                             * another than the crawl's: refused */
};

/* A URL leased to this worker, with its host's shared politeness (borrowed for the call). */
struct crawl_redis_lease {
    const char *origin, *url;
    const char *referrer; /* NULL: a seed */
    unsigned depth, hops;
    double delay;      /* s between requests to the host (Crawl-delay applied); 0: none yet */
    int robots_status; /* the host's robots.txt reading (0: none), as crawl_state_host */
    const void *robots_body;
    size_t robots_len;
    double robots_time; /* wall clock */
};

struct crawl_redis;

/* Splits redis://HOST[:PORT][/DB] (port 6379, db 0 by default). CRAWL_EURL when bad. */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_parse_url(const char *url, char *host,
                                                        size_t host_cap, int *port, int *db);
/* Connects, loads the scripts and gives this worker's leases of an earlier run back to
 * the queues (crawl_redis_released() says how many). On failure err[errlen] says why
 * (a Redis not there at the start is said at once). *out: caller frees with
 * crawl_redis_free(). Once open, every call whose connection is lost (Redis restarted, a
 * network cut, a timeout, LOADING) connects again and sends its command again for
 * retry_time at most, then fails with CRAWL_EIO naming the URL. Sending again does
 * nothing twice: enqueue and renew are idempotent, a commit carries the worker's commit
 * number (made already: nothing done again), and the leases of a lost reply (an acquire,
 * a commit's kept hosts) are given back to the queues on the reconnect. */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_open(const struct crawl_redis_opts *opts,
                                                   struct crawl_redis **out, char *err,
                                                   size_t errlen);
void crawl_redis_free(struct crawl_redis *r); /* NULL-safe */
const char *crawl_redis_error(const struct crawl_redis *r);
int64_t crawl_redis_released(const struct crawl_redis *r);
uint64_t crawl_redis_calls(const struct crawl_redis *r);    /* commands sent so far */
double crawl_redis_lease_time(const struct crawl_redis *r); /* s */
uint64_t crawl_redis_commits(const struct crawl_redis *r);
unsigned crawl_redis_shards(const struct crawl_redis *r); /* the crawl's shard count */
/* Connections made again after a loss, so far. */
uint64_t crawl_redis_reconnects(const struct crawl_redis *r);
/* Script calls sent as EVAL (the script's text) after the node answered the EVALSHA of
 * its SHA-1 with NOSCRIPT: once per script and node, and again after a restart or a
 * SCRIPT FLUSH. The scripts are never loaded with SCRIPT LOAD, which a proxy
 * (nutcracker) cannot route. */
uint64_t crawl_redis_evals(const struct crawl_redis *r);
/* For the tests: fn(userdata, what) once a command is written to Redis and before its
 * reply is read; what: the script's name ("enqueue", "acquire", "commit", "renew",
 * "reap") or the command's. fn returning non-zero makes the connection lost there, the
 * reply unread (as when Redis or the network dies after running it). */
void crawl_redis_set_sent_hook(struct crawl_redis *r, int (*fn)(void *userdata, const char *what),
                               void *userdata);
/* Crash points for the kill tests: "redis-commit-begin", "redis-commit-done"; over
 * shards also "redis-commit-marked" (before the commit point) and "redis-commit-applied". */
void crawl_redis_set_crash_hook(struct crawl_redis *r, void (*fn)(const char *name));
/* The worker's meta: read at once; set waits for the next commit (one script with it). */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_meta_int(struct crawl_redis *r, const char *key,
                                                       int64_t *v, int *found);
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_meta_text(struct crawl_redis *r, const char *key,
                                                        char **v);
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_set_meta_int(struct crawl_redis *r, const char *key,
                                                           int64_t v);
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_set_meta_text(struct crawl_redis *r, const char *key,
                                                            const char *v);
/* The crawl's counters (all workers): add waits for the next commit. */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_stats_add(struct crawl_redis *r, const char *key,
                                                        int64_t delta);
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_stats_get(struct crawl_redis *r, const char *key,
                                                        int64_t *v);
/* The worker's page records (as crawl_state_page_add: committed with the next commit). */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_page_add(struct crawl_redis *r, const void *data,
                                                       size_t len);
CRAWL_WARN_UNUSED enum crawl_code
crawl_redis_foreach_page(struct crawl_redis *r,
                         int (*fn)(void *userdata, const void *data, size_t len), void *userdata);
/* Changes waiting for the commit (decided URLs, meta, counters, page records). */
size_t crawl_redis_pending(const struct crawl_redis *r);
/* Queues url (canonical; its origin is url[0..origin_len)) unless it was ever seen, in one
 * script: *added 1 when it was new. referrer: the page it was found on, or NULL. */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_enqueue(struct crawl_redis *r, const char *url,
                                                      size_t origin_len, unsigned depth,
                                                      unsigned hops, const char *referrer,
                                                      int *added);
/* One URL for crawl_redis_enqueue_many(): url (canonical) with its origin's length. */
struct crawl_redis_link {
    const char *url;
    size_t origin_len;
    unsigned hops;
    int added; /* out: 1 when it was new (queued) */
};
/* crawl_redis_enqueue for n URLs found on one page (depth, referrer), pipelined: one round
 * trip. Each is checked and queued atomically on its own. */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_enqueue_many(struct crawl_redis *r,
                                                           struct crawl_redis_link *links, size_t n,
                                                           unsigned depth, const char *referrer);
/* Leases up to max URLs, one of each host whose turn has come and that no worker holds:
 * fn for each (a non-zero return: CRAWL_ENOMEM). *next_ready: when the next host's turn
 * comes (wall clock s; -1: no host waits), *leases: leases outstanding, every worker's. */
CRAWL_WARN_UNUSED enum crawl_code
crawl_redis_acquire(struct crawl_redis *r, size_t max,
                    int (*fn)(void *userdata, const struct crawl_redis_lease *l), void *userdata,
                    size_t *n, double *next_ready, int64_t *leases);
/* url (leased by this worker) has its decision: completed at the next commit, with its
 * host's next allowed time (wall clock s) and delay. CRAWL_EINVAL when not leased. */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_decided(struct crawl_redis *r, const char *url,
                                                      double next_wall, double delay);
/* A request is being made for url (leased by this worker): it counts against the crawl's
 * page budget when completed; one completed without (robots.txt, a host given up) gives
 * its share back. CRAWL_EINVAL when not leased. */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_fetching(struct crawl_redis *r, const char *url);
/* The whole crawl's page budget (--max-pages: requests by all the workers together; 0:
 * none), reserved in Redis as URLs are leased (redis_frontier.c, THE PAGE BUDGET); and what
 * the last acquire found left of it (-1: no budget). */
void crawl_redis_set_max_pages(struct crawl_redis *r, long max_pages);
int64_t crawl_redis_budget_left(const struct crawl_redis *r);
size_t crawl_redis_outstanding(const struct crawl_redis *r); /* leases not decided */
size_t crawl_redis_held(const struct crawl_redis *r);        /* leases, decided or not */
/* Completes the decided URLs, writes the meta, counters and page records: one script,
 * after the caller has flushed what they refer to. keep_hosts: a host whose host lease
 * runs still is kept and its next URL leased (handed to fn as by acquire). CRAWL_EIO
 * when a lease is no longer this worker's (nothing is committed then). */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_commit(struct crawl_redis *r, int keep_hosts,
                                                     int (*fn)(void *userdata,
                                                               const struct crawl_redis_lease *l),
                                                     void *userdata, size_t *kept);
/* Pushes the deadlines of this worker's leases on by the lease time; CRAWL_EIO when one
 * was lost (expired and reaped). */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_renew(struct crawl_redis *r);
/* Gives the URLs of every expired lease (any worker's) back to their queues. */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_reap(struct crawl_redis *r, size_t *n);
/* Gives this worker's leases back to their queues at once (a clean stop, a restart). */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_release(struct crawl_redis *r, size_t *n);
/* Saves a host's robots.txt reading for every worker (wall clock time) and its delay in
 * force (s, Crawl-delay applied). */
CRAWL_WARN_UNUSED enum crawl_code crawl_redis_host_robots(struct crawl_redis *r, const char *origin,
                                                          int status, const void *body, size_t len,
                                                          double when, double delay);
/* A crawl state whose meta, page records and commits are the worker's in Redis (r: taken
 * over, freed with the state). The SQLite calls (urls, hosts) fail with CRAWL_EINVAL. */
CRAWL_WARN_UNUSED enum crawl_code crawl_state_open_redis(struct crawl_redis *r,
                                                         struct crawl_state **out);
/* The state's Redis frontier, or NULL for an SQLite state. */
struct crawl_redis *crawl_state_redis(const struct crawl_state *s);

/* -- the crawl loop (crawler/crawl.c) -- */

#define CRAWL_DEFAULT_DELAY 1.0         /* s between requests to one host */
#define CRAWL_DEFAULT_MAX_REDIRECTS 10u /* redirect hops followed from one URL */
#define CRAWL_DEFAULT_QUEUE 64u         /* fetched pages waiting for a worker, at most */
#define CRAWL_DEFAULT_MAX_LINKS 100000u /* links kept from one page */
#define CRAWL_DEFAULT_MAX_MEMORY                                                                   \
    ((size_t)256 * 1024 * 1024)           /* bytes held at once by                                 \
                         response buffers and decoded bodies */
#define CRAWL_MEM_START_ROOM (64u * 1024) /* a transfer starts only with this much room */
#define CRAWL_DEFAULT_ROBOTS_OUTAGE                                                                \
    300.0                                     /* s a host's URLs are held while its robots.txt     \
                                                 answers 5xx/429 (RFC 9309 2.3.1.4) */
#define CRAWL_DEFAULT_ROBOTS_BACKOFF 1.0      /* s before the first robots.txt retry, doubling */
#define CRAWL_DEFAULT_ROBOTS_BACKOFF_MAX 60.0 /* ... up to this */
#define CRAWL_DEFAULT_UNREACHABLE_RETRIES 3   /* robots.txt retries of a host giving no answer */
#define CRAWL_DEFAULT_UNREACHABLE_TIME 30.0   /* s: ... and the time they may take at most */
#define CRAWL_MAX_WORKERS 64u

enum crawl_scope { CRAWL_SCOPE_HOST = 0, CRAWL_SCOPE_DOMAIN, CRAWL_SCOPE_ANY };

enum crawl_decision {
    CRAWL_DECISION_NEW = 0,
    CRAWL_DECISION_NEAR_DUPLICATE,
    CRAWL_DECISION_EXACT_DUPLICATE,
    CRAWL_DECISION_ROBOTS_DISALLOWED,
    CRAWL_DECISION_FILTERED, /* scope, type, size, meta robots noindex */
    CRAWL_DECISION_REDIRECT,
    CRAWL_DECISION_ERROR,
};
/* "new", "near-duplicate", "exact-duplicate", "robots-disallowed", "filtered",
 * "redirect", "error" (the words of the crawl log). */
const char *crawl_decision_name(enum crawl_decision d);

/* A fetched HTML page (2xx) handed to opts.process. Everything is borrowed for the call. */
struct crawl_page {
    const char *url; /* canonical */
    unsigned depth;
    long status;
    const char *head; /* response status line and headers as received (see fetch.c) */
    size_t head_len;
    const char *raw_body; /* the body as received, content coding kept (for the WARC) */
    size_t raw_len;
    const char *body; /* the body with its content coding removed: the HTML */
    size_t body_len;
    const char *request; /* the request head as sent, or NULL */
    size_t request_len;
    const char *content_type; /* or NULL */
    const char *ip;           /* "" when unknown */
    int64_t date;             /* time(NULL) at the start of the fetch */
    int requisite;            /* a page requisite (crawl_verdict_add_requisite): any type */
};

/* What opts.process decided about a page. It starts as: decision NEW, no fingerprint,
 * distance -1, relevance NAN, expand 1, no links. */
struct crawl_verdict {
    enum crawl_decision decision;
    int has_fingerprint;
    uint64_t fingerprint;
    int distance;       /* to duplicate_of; -1 when none */
    double relevance;   /* of the page to the topic; NAN when there is no topic */
    int expand;         /* 1: enqueue the links; 0: they are only counted (duplicates,
                           off-topic, meta robots nofollow) */
    char *duplicate_of; /* set with crawl_verdict_set(); freed by the crawler */
    char *canonical;    /* rel=canonical */
    char *error;
    /* the links, canonicalised by crawl_verdict_add_link(); owned by the crawler */
    char **links;
    float *link_priority;
    size_t n_links, cap_links;
    size_t links_invalid; /* not http(s) or malformed: dropped */
    size_t links_capped;  /* over opts.max_links: dropped, and "links" in truncated */
    char truncated[32];   /* what a cap cut from the page, comma separated ("links",
                             "depth", "links,depth"): the log's "truncated" field; "" none */
    const char *base;     /* the page URL (set by the crawler) */
    void *page_data;      /* the caller's: handed to opts.record as crawl_record.page_data,
                             then freed with opts.page_data_free (also when never recorded) */
    /* the page's requisites (crawl_verdict_add_requisite), canonical; owned by the crawler */
    char **requisites;
    size_t n_requisites, cap_requisites;
};

/* Adds what ("links", "depth") to v->truncated, comma separated. */
void crawl_verdict_truncated(struct crawl_verdict *v, const char *what);
/* *field = a copy of value (NULL clears). For duplicate_of, canonical, error. */
CRAWL_WARN_UNUSED enum crawl_code crawl_verdict_set(char **field, const char *value);
/* Adds a link of the page: resolved against the page URL and canonicalised (on the
 * worker thread, off the event loop); priority orders a focused crawl (higher first).
 * A URL that is not http(s) is counted in links_invalid, not an error. A URL given again
 * (the same bytes) is kept once, with the higher of the priorities. */
CRAWL_WARN_UNUSED enum crawl_code crawl_verdict_add_link(struct crawl_verdict *v, const char *url,
                                                         float priority);
/*
 * Adds a page requisite of a kept page (wget's --page-requisites: an image, stylesheet,
 * script, icon; or what a stylesheet imports): resolved and canonicalised as a link, then
 * queued by the crawler when the verdict is NEW (or the page is itself a requisite), as a
 * requisite: fetched whatever its type, through the same frontier (politeness,
 * robots.txt), from any host (--scope, --include and the seeds' directories do not apply:
 * a capture that replays needs them wherever they are served from, as Heritrix's
 * transclusions; --exclude does), whatever the depth, and handed to opts.process with
 * crawl_page.requisite set. At most CRAWL_MAX_REQUISITES a page; more are dropped.
 */
#define CRAWL_MAX_REQUISITES 10000u
CRAWL_WARN_UNUSED enum crawl_code crawl_verdict_add_requisite(struct crawl_verdict *v,
                                                              const char *url);

/* One line of the crawl log, handed to opts.record on the loop's thread. Borrowed. */
struct crawl_record {
    const char *url;
    long status; /* HTTP status, 0 when there was none */
    unsigned depth;
    enum crawl_decision decision;
    int has_fingerprint;
    uint64_t fingerprint;
    const char *duplicate_of; /* or NULL */
    int distance;             /* -1 when none */
    long links;               /* links enqueued from this page; -1 when it was not parsed */
    const char *error;        /* in words, or NULL */
    double relevance;         /* NAN when none */
    const char *canonical;    /* rel=canonical, or NULL */
    const char *location;     /* redirect target (canonical), or NULL */
    const char *referrer;     /* the page the URL was found on, or for a redirect target
                               * the redirecting URL (Heritrix's "via"); NULL for a seed */
    const char *truncated;    /* what a cap cut from the page ("links", "depth", ...), or NULL */
    void *page_data;          /* the verdict's page_data (pages only), or NULL; borrowed */
    const char *content_type; /* the response's Content-Type, or NULL */
    long long size;           /* body bytes received (as sent: before content decoding);
                               * -1 when there was no response */
    long links_found;         /* links found on the page (up to max-links; before scope and
                               * seen-set checks: links counts those enqueued); -1 when there
                               * was no page */
    int requisite;            /* a page requisite's fetch (crawl_verdict_add_requisite) */
    long requisites;          /* requisites of this page queued; -1 when none were given */
};

struct crawl_stats {
    uint64_t fetched; /* page requests answered or failed (robots.txt not counted) */
    uint64_t pages;   /* HTML pages handed to process */
    uint64_t new_pages, near_duplicates, exact_duplicates;
    uint64_t filtered, robots_disallowed, redirects, errors;
    uint64_t robots_fetched;
    uint64_t links_enqueued;
    uint64_t links_saved; /* new in-scope links of duplicate pages, NOT enqueued */
    uint64_t links_out_of_scope;
    uint64_t bytes;         /* body bytes received */
    double process_seconds; /* time inside opts.process, summed over the workers */
    double elapsed;         /* s since crawl_run() started */
    size_t queued, hosts, seen, seen_bytes;
    unsigned active;           /* transfers in flight */
    unsigned paused;           /* of them, waiting for room in the memory budget */
    size_t mem_held, mem_peak; /* bytes of response buffers and decoded bodies held now,
                                  and the most held at once (<= mem_limit) */
    size_t mem_limit;          /* opts.max_memory */
    uint64_t requisites;       /* page requisites fetched and handed to process (also in
                                  fetched, not in pages) */
    uint64_t requisites_enqueued;
};

struct crawl_opts {
    long max_pages;       /* page requests at most; <= 0: no limit */
    long max_depth;       /* < 0: no limit; 0: the seeds only */
    unsigned concurrency; /* 0: CRAWL_DEFAULT_CONCURRENCY */
    unsigned per_host;    /* 0: 1 */
    double delay;         /* s; < 0: CRAWL_DEFAULT_DELAY */
    double max_delay;     /* cap of robots Crawl-delay; 0: CRAWL_DEFAULT_MAX_DELAY */
    enum crawl_scope scope;
    /* wget's --no-parent: on a seed's host, only URLs under the seed's directory (the
     * seed's path up to its last '/': a seed naming a file stands for its directory), per
     * seed; URLs of other hosts are decided by scope alone (as wget -np -H) */
    int no_parent;
    const char *include;    /* POSIX extended regex a URL must match, or NULL */
    const char *exclude;    /* ... must not match, or NULL */
    const char *user_agent; /* NULL: CRAWL_DEFAULT_USER_AGENT */
    size_t max_body;        /* 0: CRAWL_DEFAULT_MAX_BODY */
    size_t max_memory;      /* bytes that response buffers and decoded bodies may hold at
                               once (struct crawl_mem); 0: CRAWL_DEFAULT_MAX_MEMORY */
    size_t max_links;       /* links kept from one page (crawl_verdict_add_link); 0:
                               CRAWL_DEFAULT_MAX_LINKS; more are dropped and the page's
                               record says truncated "links" */
    double timeout;         /* s per transfer; 0: the default */
    double connect_timeout;
    long low_speed_bytes, low_speed_time;
    unsigned max_redirects;   /* 0: CRAWL_DEFAULT_MAX_REDIRECTS */
    unsigned workers;         /* threads running process; 0: the online CPUs */
    unsigned queue;           /* fetched pages waiting for a worker; 0: CRAWL_DEFAULT_QUEUE,
                                 or workers + 1 (fetches in flight included) when focused */
    int focused;              /* order the frontier by the link priorities of the verdicts */
    int ignore_robots;        /* 1: do not fetch robots.txt (tests, own sites); 0: obey it */
    double stop_grace;        /* s to let transfers end after crawl_stop(); 0: 5 */
    double progress_interval; /* s between progress calls; 0: 0.5 */
    /* robots.txt that fails (RFC 9309 2.3.1.4: complete disallow for the time being): the
     * host's URLs are held, not dropped, while robots.txt is fetched again after
     * robots_backoff s, doubling up to robots_backoff_max. When it comes back, the held
     * URLs are decided by it. A 5xx/429 (or an answer cut short) for robots_outage s in a
     * row: every URL of the host is logged robots-disallowed ("robots.txt unavailable (HTTP
     * 503) for 300 s"). No HTTP answer at all (refused, no such name, TLS, timeout) more
     * than 1 + unreachable_retries times in a row, or for unreachable_time s since the
     * first of those attempts started, whichever comes first: they are logged as errors.
     * A robots.txt transfer that could be such an attempt is given at most the time left
     * of unreachable_time (below timeout and connect_timeout), so a host that drops
     * packets is given up after about unreachable_time s, not 1 + retries timeouts. */
    double robots_outage;      /* s; 0: CRAWL_DEFAULT_ROBOTS_OUTAGE */
    double robots_backoff;     /* s; 0: CRAWL_DEFAULT_ROBOTS_BACKOFF */
    double robots_backoff_max; /* s; 0: CRAWL_DEFAULT_ROBOTS_BACKOFF_MAX */
    int unreachable_retries;   /* 0: CRAWL_DEFAULT_UNREACHABLE_RETRIES; < 0: no retry */
    double unreachable_time;   /* s; 0: CRAWL_DEFAULT_UNREACHABLE_TIME */
    /* Decides about one page; called on worker threads, concurrently: must be
     * thread-safe. Returns 0, or non-zero to stop the crawl (a fatal error, e.g. the WARC
     * cannot be written). */
    int (*process)(void *userdata, const struct crawl_page *page, struct crawl_verdict *v);
    void (*record)(void *userdata, const struct crawl_record *rec);    /* loop thread */
    void (*progress)(void *userdata, const struct crawl_stats *stats); /* loop thread */
    void *userdata;
    const char *ca_file; /* PEM CA certificates to verify https servers with (every
                            page and robots.txt transfer); borrowed for the crawl's life;
                            NULL: libcurl's default bundle */
    /* The crawl's state on disk (crawl --state), or in Redis shared with other workers
     * (crawl_state_open_redis: then the frontier is the shared one, see crawl.c "the
     * shared frontier"), borrowed for the crawl's life, or NULL:
     * everything in memory. With a state, every URL queued and decided, the hosts'
     * politeness and robots.txt and the counters go into it, and the loop commits a group
     * of pages every CRAWL_STATE_COMMIT_INTERVAL s or CRAWL_STATE_COMMIT_PAGES pages,
     * calling before_commit first (on the loop thread): the caller writes out the WARC
     * records and log lines of the pages recorded so far and stores their offsets in the
     * state's meta, so that they are committed together. A non-zero return is fatal. Only
     * CRAWL_STATE_WINDOW queued URLs per host stay in memory, the next in queue order, or
     * for a focused crawl the best by priority (up to twice as many: crawl.c "windows"). */
    struct crawl_state *state;
    int (*before_commit)(void *userdata);
    void (*page_data_free)(void *page_data); /* NULL: free() */
    /* With a state: bytes for the seen set, half for a table of the latest URLs' hashes,
     * half for a Bloom filter of the others, whose hits are looked up in the state (crawl.c,
     * "the seen set with a state"); 0: CRAWL_STATE_SEEN_MEMORY. A focused crawl also keeps a
     * cache of the URLs' best priorities of at most a quarter of it. Without a state the
     * seen set is a table in memory that grows with the crawl (up to CRAWL_SEEN_DEFAULT_MAX). */
    size_t seen_memory;
};

struct crawl;

/* Checks and copies opts (the strings are borrowed for the crawl's life). On a bad regex
 * or a setup failure, err[errlen] says why. *out: caller frees with crawl_free(). */
CRAWL_WARN_UNUSED enum crawl_code crawl_new(const struct crawl_opts *opts, struct crawl **out,
                                            char *err, size_t errlen);
void crawl_free(struct crawl *c); /* NULL-safe */
/* With opts.state: loads what an earlier run committed (the seen set, the hosts with
 * their politeness and robots.txt readings, a window of each host's queued URLs, the
 * counters). Call once, before crawl_add_seed() (which then only sets the scope of a seed
 * seen before). *resumed: 1 when the state held a crawl. */
CRAWL_WARN_UNUSED enum crawl_code crawl_resume(struct crawl *c, int *resumed);
/* Whether the last crawl_run() reached the end of the crawl (not stopped, no fatal
 * error): 1 nothing left to fetch, 2 max_pages reached, 0 neither. With a state it is
 * committed as meta "complete" (and "complete.max_pages"). */
int crawl_complete(const struct crawl *c);
/* Adds a seed URL (canonicalised; its host/domain joins the scope). CRAWL_EURL if bad. */
CRAWL_WARN_UNUSED enum crawl_code crawl_add_seed(struct crawl *c, const char *url);
/* Runs the crawl to its end (frontier empty, max_pages reached, or crawl_stop()).
 * CRAWL_OK, or the first fatal code (process() asked to stop: CRAWL_EIO). */
CRAWL_WARN_UNUSED enum crawl_code crawl_run(struct crawl *c);
/* Asks crawl_run() to stop: no new transfers; those in flight get stop_grace seconds,
 * then are aborted and logged. Async-signal-safe (a flag and curl_multi_wakeup()). */
void crawl_stop(struct crawl *c);
const struct crawl_stats *crawl_get_stats(const struct crawl *c);

#endif
