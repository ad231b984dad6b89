/*
 * The crawl's state on disk (`simcrawl crawl --state DIR`): DIR/state.db, an SQLite
 * database in WAL mode (sqlite.org/wal.html) holding what a crawl needs to go on after a
 * stop, a Ctrl-C or a kill -9:
 *   urls   every URL the crawl has queued: its 64-bit hash (crawl_hash64, the seen set's
 *          key), host, depth, redirect hops, priority, and its state (queued, done,
 *          duplicate, failed, skipped) with the decision of the log;
 *   hosts  one row per origin: its Crawl-delay, when it may be asked next (wall clock),
 *          and its last robots.txt reading (status, body, when fetched);
 *   meta   key/value: counters, where the WARC and the log were committed, options;
 *   pages  the caller's opaque records, in commit order (simcrawl: what the near-duplicate
 *          decision needs to be rebuilt; cli/cmd_crawl.c);
 *   texts  the main text of a page record, packed (the report's word diffs: "the pages'
 *          texts" below).
 *
 * HOW IT WORKS (group commit). The state keeps one write transaction open; every change
 * of the crawl goes into it, and crawl_state_commit() ends it and opens the next. The
 * crawl loop commits every CRAWL_STATE_COMMIT_INTERVAL s or CRAWL_STATE_COMMIT_PAGES
 * pages, after the WARC records and log lines of those pages are written and their
 * offsets put in meta (the caller's before_commit), so that one COMMIT makes a group of
 * pages done together with the end of the WARC and the log that hold them. A kill before
 * the COMMIT loses the group: its URLs are still queued or leased, the WARC and the log
 * are cut back to the offsets of the last commit on resume. WAL with synchronous=NORMAL
 * survives a kill -9 (a committed transaction is in the WAL file before COMMIT returns);
 * `durable` (synchronous=FULL, and the caller fsyncs the WARC and the log first) survives
 * a power cut as well.
 *
 * HOW IT WORKS (leases: what "in flight" means with group commit). A URL whose transfer
 * has started and whose result is not recorded yet when a group is committed is written
 * leased in that group (crawl.c, maybe_commit: no write or fsync of its own, and none for
 * the transfers that start and end within one group, which a write at every start would
 * leave with the same committed state), and gets its final state (done, duplicate, failed,
 * skipped) when its result is recorded. So after a kill the committed state has: done
 * URLs, whose WARC records and log lines are
 * within the committed offsets (never fetched again); leased URLs, whose transfer had
 * started before the last commit and whose result had not been recorded by then (in flight
 * at that commit, or fetched and decided after it); queued URLs, some of which were
 * started after the last commit (the uncommitted group). Opening the state turns every
 * leased URL back into queued (crawl_state_requeued() says how many), so "in flight" is:
 * leased at the last commit, or started after it. Such a URL is fetched once more after
 * a kill, even when its page had been fetched, decided and written to the WARC and the log
 * already: those bytes lie past the committed offsets and are cut off on resume, so the
 * page is archived and logged once, from the second fetch. A URL requested twice that was
 * not leased at the last commit and was first requested before it would be a lost commit
 * (tests/tools/crawl_kill.py checks that none is).
 *
 * HOW IT WORKS (row ids). The crawl keeps each queued URL's row id with it (crawl_item.id,
 * and crawl_ref.id for the page it was found on), so the URL's lease and final state and
 * the referrer of a URL read back (urls.ref, the referrer's row id) go by the table's own
 * key: no lookup by hash. The hash (the seen set's key) is then needed only to ask whether
 * a URL was ever seen, when the seen set no longer holds every URL in memory (past
 * --seen-memory, or a resumed crawl's), and by a focused crawl that finds a URL again: its
 * index, urls_hash, is made the first time one of those asks (hash_index), and until then
 * a URL added is an append to the table and to urls_queued (host, id), where an index by
 * hash took a random insert each, dirtying most of its pages every group commit. Each URL
 * has one row (the caller's seen set says whether it is new; urls_hash is UNIQUE).
 *
 * Schemas. 3 (this one): urls.ref is the referrer's row id, urls.hash is not UNIQUE in
 * the table (urls_hash is made when needed). 2: urls.ref held the referrer's hash, and the
 * hash was UNIQUE. 1: no urls.ref, no leased state. A state of schema 1 or 2 is brought to
 * 3 when opened (migrate: the table copied, each ref turned into the row id of its hash, in
 * the open transaction, so a kill leaves the old state whole); a newer one is refused.
 */
#include "crawler/crawl.h"

#include <errno.h>
#include <isa-l/igzip_lib.h>
#include <pthread.h>
#include <sqlite3.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <zlib.h>

#define STATE_SCHEMA_VERSION 3
_Static_assert(CRAWL_URL_LEASED == 5, "the SQL below writes the leased state as 5");

enum {
    S_URL_ADD,
    S_URL_SET,
    S_HOST_GET,
    S_HOST_ADD,
    S_META_GET,
    S_META_SET,
    S_QUEUED,
    S_PAGE_ADD,
    S_HOST_SAVE,
    S_HOST_ROBOTS,
    S_URL_LEASE,
    S_URL_PRIO,
    S_URL_HAS,
    S_BEST,
    S_N
};

static const char *const SQL[S_N] = {
    [S_URL_ADD] = "INSERT INTO urls(hash, host, url, depth, hops, prio, state, ref) "
                  "VALUES (?, ?, ?, ?, ?, ?, 0, ?)",
    [S_URL_SET] = "UPDATE urls SET state = ?, decision = ? WHERE id = ?",
    [S_HOST_GET] = "SELECT id FROM hosts WHERE origin = ?",
    [S_HOST_ADD] = "INSERT INTO hosts(origin) VALUES (?)",
    [S_META_GET] = "SELECT value FROM meta WHERE key = ?",
    [S_META_SET] = "INSERT OR REPLACE INTO meta(key, value) VALUES (?, ?)",
    [S_QUEUED] = "SELECT u.id, u.url, u.depth, u.hops, u.prio, r.id, r.url FROM urls u "
                 "LEFT JOIN urls r ON r.id = u.ref "
                 "WHERE u.host = ? AND u.state = 0 AND u.id > ? ORDER BY u.id LIMIT ?",
    [S_PAGE_ADD] = "INSERT INTO pages(seq, data) VALUES (?, ?)",
    [S_HOST_SAVE] = "UPDATE hosts SET delay = ?, next_allowed = ? WHERE id = ?",
    [S_HOST_ROBOTS] = "UPDATE hosts SET robots_status = ?, robots_body = ?, robots_time = ? "
                      "WHERE id = ?",
    [S_URL_LEASE] = "UPDATE urls SET state = 5 WHERE id = ?",
    /* these two by hash: hash_index() first */
    [S_URL_PRIO] = "UPDATE urls SET prio = ?1 WHERE hash = ?2 AND state = 0 AND prio < ?3 "
                   "RETURNING id",
    [S_URL_HAS] = "SELECT 1 FROM urls WHERE hash = ?",
    /* a focused crawl's window (urls_best, made by crawl_state_best_order) */
    [S_BEST] = "SELECT u.id, u.url, u.depth, u.hops, u.prio, r.id, r.url FROM urls u "
               "LEFT JOIN urls r ON r.id = u.ref "
               "WHERE u.host = ?1 AND u.state = 0 AND (u.prio < ?2 OR (u.prio = ?2 AND u.id > ?3)) "
               "ORDER BY u.prio DESC, u.id LIMIT ?4",
};

/* The pages' texts (the section "the pages' texts" at the end). */
struct state_texts {
    sqlite3_stmt *add, *batch; /* INSERT INTO texts: one row, BATCH_ROWS rows */
    int64_t from;              /* the first page record whose text the state may hold */
    uint64_t bytes;            /* the packed texts' bytes, when bytes_known */
    int bytes_known;
};
/* HOW IT WORKS (batches). The page records (crawl_state_page_add and
 * crawl_state_page_add_text: two a page archived in simcrawl, the second with the page's
 * text) wait in memory with their texts and go into the open transaction BATCH_ROWS rows a
 * statement, at the commit (and before crawl_state_foreach_page and
 * crawl_state_foreach_page_text, their only readers). Each record's seq is given here, in
 * the order they were added (next_seq: the table's highest seq + 1 when opened), so its
 * text goes under its own seq whatever the batch. The transaction, and what a COMMIT makes
 * durable, are the same as writing each at once: a kill before the COMMIT loses the group
 * either way. What it saves: a statement's start and end, whose cursors are allocated and
 * freed at every step (Debian's SQLite is built without lookaside memory). The URLs' final states
 * are not batched: a multi-row UPDATE ... FROM (VALUES ...) materializes its rows in a temporary
 * table at every step, whose memory, freed and taken again, cost more system time than the
 * statements saved (docs/BENCHMARKS.md, "Crawl state"). */
#define BATCH_ROWS 64

/* A page record waiting (batches). */
enum { TEXT_NONE, TEXT_KEPT, TEXT_OVER_CAP };
struct pending {
    size_t end;      /* where its bytes end in pg */
    size_t zend;     /* where its packed text ends in tz (TEXT_KEPT) */
    size_t text_len; /* the text's own bytes (TEXT_KEPT, TEXT_OVER_CAP) */
    int text;        /* TEXT_NONE, TEXT_KEPT, TEXT_OVER_CAP */
};

struct crawl_state {
    sqlite3 *db;
    sqlite3_stmt *st[S_N];
    sqlite3_stmt *pages_batch; /* INSERT INTO pages: BATCH_ROWS rows */
    unsigned char *pg;         /* the page records waiting, end to end */
    size_t pg_len, pg_cap;
    unsigned char *tz; /* their packed texts, end to end */
    size_t tz_len, tz_cap;
    struct pending *pd; /* each record waiting */
    size_t pg_n, pg_ncap;
    size_t pg_texts;  /* how many of them have a text row (TEXT_KEPT, TEXT_OVER_CAP) */
    int64_t next_seq; /* the seq of the first record waiting */
    char path[4096];
    int in_tx;
    int hash_index; /* urls_hash is there (row ids) */
    size_t pending; /* changes since the last commit */
    uint64_t commits;
    int64_t requeued;                /* leased URLs queued again when opened */
    int migrated_from;               /* the schema version migrated from, or 0 */
    void (*crash)(const char *name); /* crash points (tests), or NULL */
    struct crawl_redis *redis;       /* crawl --redis: meta, page records and commits there */
    struct state_texts texts;        /* the pages' texts (below) */
    char error[512];
};

__attribute__((format(printf, 2, 3))) static void st_err(struct crawl_state *s, const char *fmt,
                                                         ...);
static void st_err(struct crawl_state *s, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(s->error, sizeof s->error, fmt, ap);
    va_end(ap);
}

static enum crawl_code db_fail(struct crawl_state *s, const char *what)
{
    st_err(s, "%s: %s: %s", s->path, what, sqlite3_errmsg(s->db));
    return CRAWL_EIO;
}

static enum crawl_code exec(struct crawl_state *s, const char *sql)
{
    char *msg = NULL;
    if (sqlite3_exec(s->db, sql, NULL, NULL, &msg) != SQLITE_OK) {
        st_err(s, "%s: %s", s->path, msg ? msg : sqlite3_errmsg(s->db));
        sqlite3_free(msg);
        return CRAWL_EIO;
    }
    return CRAWL_OK;
}

static enum crawl_code texts_setup(struct crawl_state *s);

/* The urls table of this schema (row ids) and its index of queued URLs. */
#define URLS_COLUMNS                                                                               \
    "(id INTEGER PRIMARY KEY, hash INTEGER NOT NULL, host INTEGER NOT NULL, url TEXT NOT NULL, "   \
    "depth INTEGER, hops INTEGER, prio REAL, state INTEGER NOT NULL, decision INTEGER, "           \
    "ref INTEGER)"
#define URLS_QUEUED "CREATE INDEX IF NOT EXISTS urls_queued ON urls(host, id) WHERE state = 0"

/* *found: 1 when the schema has an object of type (table, index) and name. */
static enum crawl_code has_object(struct crawl_state *s, const char *type, const char *name,
                                  int *found)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT 1 FROM sqlite_master WHERE type = ? AND name = ?", -1, &q,
                           NULL) != SQLITE_OK)
        return db_fail(s, "read the schema");
    sqlite3_bind_text(q, 1, type, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, name, -1, SQLITE_STATIC);
    int r = sqlite3_step(q);
    sqlite3_finalize(q);
    *found = r == SQLITE_ROW;
    return r == SQLITE_ROW || r == SQLITE_DONE ? CRAWL_OK : db_fail(s, "read the schema");
}

/*
 * An index made on a table that has rows (urls_hash, urls_best) is sorted first, and
 * SQLite's sorter holds as many bytes of keys in memory as the page cache may hold pages
 * (vdbesort.c: cache_size, 2 MiB at least) before it writes a sorted run to a temporary
 * file: with the 16 MiB cache, 16 MiB more at once, on top of the cache, the step in peak
 * RSS that came with the first lookup by hash (bench_state.sh, --seen-memory 4194304:
 * 43 MB at 392,001 URLs, 57 MB at 784,001). So the cache is cut to STATE_SORT_CACHE for
 * the build (its clean pages dropped; runs of 2 MiB go to a temporary file, in SQLite's
 * temporary directory: SQLITE_TMPDIR, TMPDIR, /var/tmp, /tmp), and set back after. The
 * smaller sort costs no more CPU (1M rows: 0.65-0.89 s against 1.08-1.42 s).
 */
#define STATE_CACHE "-16384"     /* 16 MiB of pages at most (KiB when negative) */
#define STATE_SORT_CACHE "-2048" /* while an index is made: the sorter's minimum */

static enum crawl_code make_index(struct crawl_state *s, const char *sql)
{
    if (exec(s, "PRAGMA cache_size = " STATE_SORT_CACHE) != CRAWL_OK)
        return CRAWL_EIO;
    enum crawl_code rc = exec(s, sql);
    if (exec(s, "PRAGMA cache_size = " STATE_CACHE) != CRAWL_OK)
        return CRAWL_EIO;
    return rc;
}

/* A state of schema 1 or 2 (version) brought to this one, in the open transaction: the
 * URLs copied into a table of this schema, in row id order, each referrer (2: its hash; 1:
 * none) turned into its row id; the old table and its indexes dropped. */
static enum crawl_code migrate(struct crawl_state *s, int version)
{
    return exec(s, "CREATE TABLE urls_v3" URLS_COLUMNS) != CRAWL_OK ||
                   exec(s, version == 1
                               ? "INSERT INTO urls_v3 SELECT id, hash, host, url, depth, hops, "
                                 "prio, state, decision, NULL FROM urls ORDER BY id"
                               : "INSERT INTO urls_v3 SELECT u.id, u.hash, u.host, u.url, "
                                 "u.depth, u.hops, u.prio, u.state, u.decision, r.id FROM urls u "
                                 "LEFT JOIN urls r ON r.hash = u.ref ORDER BY u.id") != CRAWL_OK ||
                   make_index(
                       s, "DROP TABLE urls; ALTER TABLE urls_v3 RENAME TO urls; " URLS_QUEUED) !=
                       CRAWL_OK
               ? CRAWL_EIO
               : CRAWL_OK;
}

/* urls_hash, made the first time a URL is looked up by hash (HOW IT WORKS, row ids). */
static enum crawl_code hash_index(struct crawl_state *s)
{
    if (s->hash_index)
        return CRAWL_OK;
    if (make_index(s, "CREATE UNIQUE INDEX IF NOT EXISTS urls_hash ON urls(hash)") != CRAWL_OK)
        return CRAWL_EIO;
    s->hash_index = 1;
    s->pending++;
    return CRAWL_OK;
}
static enum crawl_code first_seq(struct crawl_state *s, int64_t *seq);
static void texts_close(struct crawl_state *s);

static void crash(struct crawl_state *s, const char *name)
{
    if (s->crash)
        s->crash(name);
}

/* An INSERT of rows rows of cols values each into table(columns). */
static enum crawl_code prepare_insert(struct crawl_state *s, const char *table, const char *columns,
                                      int cols, int rows, sqlite3_stmt **out)
{
    char sql[BATCH_ROWS * 16 + 256];
    size_t n = (size_t)snprintf(sql, sizeof sql, "INSERT INTO %s(%s) VALUES ", table, columns);
    for (int i = 0; i < rows; i++)
        for (int j = 0; j < cols; j++)
            n += (size_t)snprintf(sql + n, sizeof sql - n, "%s?%s",
                                  j   ? ""
                                  : i ? ",("
                                      : "(",
                                  j == cols - 1 ? ")" : ",");
    if (sqlite3_prepare_v3(s->db, sql, -1, SQLITE_PREPARE_PERSISTENT, out, NULL) != SQLITE_OK)
        return db_fail(s, "prepare");
    return CRAWL_OK;
}

/* Where rows are taken from when inserted: the next record waiting (pages) or the next
 * with a text row (texts). */
struct row_cursor {
    size_t i;
    int texts;
};

/* Binds the next row of the cursor to q's parameters from first on. */
static void bind_row(struct crawl_state *s, sqlite3_stmt *q, int first, struct row_cursor *c)
{
    while (c->texts && s->pd[c->i].text == TEXT_NONE)
        c->i++;
    size_t i = c->i++;
    const struct pending *p = &s->pd[i];
    sqlite3_bind_int64(q, first, s->next_seq + (int64_t)i);
    if (!c->texts) {
        size_t start = i ? s->pd[i - 1].end : 0;
        sqlite3_bind_blob64(q, first + 1, p->end > start ? (const void *)(s->pg + start) : "",
                            p->end - start, SQLITE_STATIC);
        return;
    }
    sqlite3_bind_int64(q, first + 1, (int64_t)p->text_len);
    size_t zstart = i ? s->pd[i - 1].zend : 0;
    if (p->text == TEXT_KEPT)
        sqlite3_bind_blob64(q, first + 2, s->tz + zstart, p->zend - zstart, SQLITE_STATIC);
    else
        sqlite3_bind_null(q, first + 2);
}

/* n rows of the cursor into the open transaction, BATCH_ROWS a statement (batch) and the
 * rest one a statement (one), of cols values each. */
static enum crawl_code insert_rows(struct crawl_state *s, sqlite3_stmt *batch, sqlite3_stmt *one,
                                   int cols, size_t n, struct row_cursor *c, const char *what)
{
    for (size_t i = 0; i < n;) {
        size_t k = n - i >= BATCH_ROWS ? BATCH_ROWS : 1;
        sqlite3_stmt *q = k > 1 ? batch : one;
        for (size_t j = 0; j < k; j++)
            bind_row(s, q, (int)j * cols + 1, c);
        int r = sqlite3_step(q);
        sqlite3_reset(q);
        if (r != SQLITE_DONE)
            return db_fail(s, what);
        i += k;
    }
    return CRAWL_OK;
}

/* The page records waiting and their texts, into the open transaction. */
static enum crawl_code flush_pages(struct crawl_state *s)
{
    struct row_cursor pc = {0, 0}, tc = {0, 1};
    enum crawl_code rc =
        insert_rows(s, s->pages_batch, s->st[S_PAGE_ADD], 2, s->pg_n, &pc, "add a page record");
    if (rc == CRAWL_OK)
        rc = insert_rows(s, s->texts.batch, s->texts.add, 3, s->pg_texts, &tc, "add a page's text");
    s->next_seq += (int64_t)s->pg_n;
    s->pg_n = 0;
    s->pg_len = 0;
    s->tz_len = 0;
    s->pg_texts = 0;
    return rc;
}

/* The batches, into the open transaction. */
static enum crawl_code flush(struct crawl_state *s)
{
    return s->pg_n ? flush_pages(s) : CRAWL_OK;
}

/* crawl_state_open's first step: DIR made (or found) a directory, its state.db opened
 * with the pragmas below; *existed when the file was there before. */
static enum crawl_code open_db(struct crawl_state *s, const char *dir, int durable, int *existed)
{
    if (mkdir(dir, 0755) != 0 && errno != EEXIST) {
        st_err(s, "cannot create state directory %s: %s", dir, strerror(errno));
        return CRAWL_EIO;
    }
    struct stat stt;
    if (stat(dir, &stt) != 0 || !S_ISDIR(stt.st_mode)) {
        st_err(s, "state %s is not a directory", dir);
        return CRAWL_EIO;
    }
    if ((size_t)snprintf(s->path, sizeof s->path, "%s/state.db", dir) >= sizeof s->path) {
        st_err(s, "state directory name too long");
        return CRAWL_EINVAL;
    }
    *existed = stat(s->path, &stt) == 0;
    if (sqlite3_open_v2(s->path, &s->db, SQLITE_OPEN_READWRITE | SQLITE_OPEN_CREATE, NULL) !=
        SQLITE_OK) {
        st_err(s, "cannot open %s: %s", s->path, s->db ? sqlite3_errmsg(s->db) : "no memory");
        return CRAWL_EIO;
    }
    sqlite3_busy_timeout(s->db, 2000);
    /* a second crawl on the same DIR would interleave two crawls' WARC offsets: one
     * writer, held by an exclusive lock for the life of the process (WAL allows it) */
    /* A new state's pages are of 8 KiB (SQLite's default 4): an index by hash takes random
     * inserts, so a group commit writes most of its pages to the WAL each time; half as many
     * pages, half the writes and reads of the WAL and its checkpoints (bench_state.sh: 42 %
     * fewer pwrite calls, schema 2, whose table had one from the start; urls_hash now comes
     * when needed). A state made with 4 KiB pages keeps them (the file says which). */
    if (exec(s, "PRAGMA page_size = 8192") != CRAWL_OK ||
        exec(s, "PRAGMA locking_mode = EXCLUSIVE") != CRAWL_OK ||
        exec(s, "PRAGMA journal_mode = WAL") != CRAWL_OK ||
        exec(s, durable ? "PRAGMA synchronous = FULL" : "PRAGMA synchronous = NORMAL") !=
            CRAWL_OK ||
        exec(s, "PRAGMA cache_size = " STATE_CACHE) != CRAWL_OK ||
        exec(s, "PRAGMA secure_delete = OFF") != CRAWL_OK) /* Debian builds it on: no secret here */
        return CRAWL_EIO;
    if (exec(s, "BEGIN IMMEDIATE") != CRAWL_OK) {
        st_err(s, "%s is in use by another crawl (or damaged): %s", s->path, sqlite3_errmsg(s->db));
        return CRAWL_EIO;
    }
    return CRAWL_OK;
}

/* The second step, in the open transaction: the tables made if new, the schema version
 * read (*have: it was recorded), an older one migrated, a newer one refused. */
static enum crawl_code schema_step(struct crawl_state *s, int *have)
{
    if (exec(s, "CREATE TABLE IF NOT EXISTS meta(key TEXT PRIMARY KEY, value) WITHOUT ROWID;"
                "CREATE TABLE IF NOT EXISTS hosts(id INTEGER PRIMARY KEY, origin TEXT NOT NULL "
                "UNIQUE, delay REAL, next_allowed REAL, robots_status INTEGER, robots_body BLOB, "
                "robots_time REAL);"
                "CREATE TABLE IF NOT EXISTS urls" URLS_COLUMNS ";" URLS_QUEUED ";"
                "CREATE TABLE IF NOT EXISTS pages(seq INTEGER PRIMARY KEY, data BLOB NOT NULL);") !=
        CRAWL_OK)
        return CRAWL_EIO;
    /* the schema version, before any statement that needs this version's columns */
    sqlite3_stmt *vq = NULL;
    int64_t version = 0;
    *have = 0;
    if (sqlite3_prepare_v2(s->db, "SELECT value FROM meta WHERE key = 'schema'", -1, &vq, NULL) !=
        SQLITE_OK) {
        db_fail(s, "read the schema version");
        return CRAWL_EIO;
    }
    int vr = sqlite3_step(vq);
    if (vr == SQLITE_ROW) {
        *have = 1;
        version = sqlite3_column_int64(vq, 0);
    }
    sqlite3_finalize(vq);
    if (vr != SQLITE_ROW && vr != SQLITE_DONE) {
        db_fail(s, "read the schema version");
        return CRAWL_EIO;
    }
    if (*have && (version == 1 || version == 2)) {
        if (migrate(s, (int)version) != CRAWL_OK)
            return CRAWL_EIO;
        s->migrated_from = (int)version;
    } else if (*have && version != STATE_SCHEMA_VERSION) {
        st_err(s,
               "%s: state schema version %lld, this simcrawl reads versions 1 to %d: "
               "resume it with the simcrawl that made it, or start another --state DIR",
               s->path, (long long)version, STATE_SCHEMA_VERSION);
        return CRAWL_EFORMAT;
    }
    return CRAWL_OK;
}

/* The third step: the statements prepared, the version recorded (new or migrated: have
 * 0 or migrated_from), the texts table, the next page seq, and the transfers in flight
 * when the last run ended queued again; then the first commit, and a transaction open. */
static enum crawl_code ready_step(struct crawl_state *s, int have)
{
    if (has_object(s, "index", "urls_hash", &s->hash_index) != CRAWL_OK)
        return CRAWL_EIO;
    for (int i = 0; i < S_N; i++)
        if (sqlite3_prepare_v3(s->db, SQL[i], -1, SQLITE_PREPARE_PERSISTENT, &s->st[i], NULL) !=
            SQLITE_OK) {
            db_fail(s, "prepare");
            return CRAWL_EIO;
        }
    if (prepare_insert(s, "pages", "seq, data", 2, BATCH_ROWS, &s->pages_batch) != CRAWL_OK)
        return CRAWL_EIO;
    if ((!have || s->migrated_from) &&
        crawl_state_set_meta_int(s, "schema", STATE_SCHEMA_VERSION) != CRAWL_OK)
        return CRAWL_EIO;
    if (texts_setup(s) != CRAWL_OK || first_seq(s, &s->next_seq) != CRAWL_OK)
        return CRAWL_EIO;
    if (exec(s, "UPDATE urls SET state = 0 WHERE state = 5") != CRAWL_OK)
        return CRAWL_EIO;
    s->requeued = sqlite3_changes(s->db);
    if (exec(s, "COMMIT") != CRAWL_OK || exec(s, "BEGIN IMMEDIATE") != CRAWL_OK)
        return CRAWL_EIO;
    s->in_tx = 1;
    return CRAWL_OK;
}

enum crawl_code crawl_state_open(const char *dir, int durable, struct crawl_state **out,
                                 int *created, char *err, size_t errlen)
{
    *out = NULL;
    if (created)
        *created = 0;
    struct crawl_state *s = calloc(1, sizeof *s);
    if (!s)
        return CRAWL_ENOMEM;
    int existed = 0, have = 0;
    enum crawl_code rc = open_db(s, dir, durable, &existed);
    if (rc == CRAWL_OK)
        rc = schema_step(s, &have);
    if (rc == CRAWL_OK)
        rc = ready_step(s, have);
    if (rc != CRAWL_OK) {
        if (err && errlen)
            snprintf(err, errlen, "%s", s->error[0] ? s->error : "cannot open the state");
        crawl_state_close(s);
        return rc;
    }
    if (created)
        *created = !existed;
    *out = s;
    return CRAWL_OK;
}

void crawl_state_close(struct crawl_state *s)
{
    if (!s)
        return;
    crawl_redis_free(s->redis);
    if (s->db && s->in_tx)
        sqlite3_exec(s->db, "ROLLBACK", NULL, NULL, NULL); /* not committed: not done */
    for (int i = 0; i < S_N; i++)
        sqlite3_finalize(s->st[i]);
    texts_close(s);
    sqlite3_finalize(s->pages_batch);
    sqlite3_close(s->db);
    free(s->pg);
    free(s->tz);
    free(s->pd);
    free(s);
}

const char *crawl_state_error(const struct crawl_state *s)
{
    return s->redis ? crawl_redis_error(s->redis) : s->error;
}

int64_t crawl_state_requeued(const struct crawl_state *s)
{
    return s->redis ? crawl_redis_released(s->redis) : s->requeued;
}

enum crawl_code crawl_state_open_redis(struct crawl_redis *r, struct crawl_state **out)
{
    *out = calloc(1, sizeof **out);
    if (!*out)
        return CRAWL_ENOMEM;
    (*out)->redis = r;
    return CRAWL_OK;
}

struct crawl_redis *crawl_state_redis(const struct crawl_state *s)
{
    return s ? s->redis : NULL;
}

int crawl_state_migrated_from(const struct crawl_state *s)
{
    return s->migrated_from;
}

void crawl_state_set_crash_hook(struct crawl_state *s, void (*fn)(const char *name))
{
    s->crash = fn;
    if (s->redis)
        crawl_redis_set_crash_hook(s->redis, fn);
}

size_t crawl_state_pending(const struct crawl_state *s)
{
    return s->redis ? crawl_redis_pending(s->redis) : s->pending;
}

uint64_t crawl_state_commits(const struct crawl_state *s)
{
    return s->redis ? crawl_redis_commits(s->redis) : s->commits;
}

enum crawl_code crawl_state_commit(struct crawl_state *s)
{
    if (s->redis) { /* crawl.c commits the shared frontier itself (the hosts it keeps) */
        size_t kept;
        return crawl_redis_commit(s->redis, 0, NULL, NULL, &kept);
    }
    enum crawl_code rc = flush(s);
    if (rc != CRAWL_OK)
        return rc;
    crash(s, "crawl-commit-begin");
    if (sqlite3_exec(s->db, "COMMIT", NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(s, "commit");
    s->in_tx = 0;
    crash(s, "crawl-commit-done");
    s->pending = 0;
    s->commits++;
    if (sqlite3_exec(s->db, "BEGIN IMMEDIATE", NULL, NULL, NULL) != SQLITE_OK)
        return db_fail(s, "begin");
    s->in_tx = 1;
    return CRAWL_OK;
}

/* ---- meta ---- */

static int meta_get(struct crawl_state *s, const char *key)
{
    sqlite3_stmt *q = s->st[S_META_GET];
    sqlite3_reset(q);
    sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
    return sqlite3_step(q);
}

enum crawl_code crawl_state_meta_int(struct crawl_state *s, const char *key, int64_t *v, int *found)
{
    if (s->redis)
        return crawl_redis_meta_int(s->redis, key, v, found);
    int r = meta_get(s, key);
    *found = r == SQLITE_ROW;
    if (r == SQLITE_ROW)
        *v = sqlite3_column_int64(s->st[S_META_GET], 0);
    sqlite3_reset(s->st[S_META_GET]);
    return r == SQLITE_ROW || r == SQLITE_DONE ? CRAWL_OK : db_fail(s, "read meta");
}

enum crawl_code crawl_state_meta_text(struct crawl_state *s, const char *key, char **v)
{
    if (s->redis)
        return crawl_redis_meta_text(s->redis, key, v);
    *v = NULL;
    int r = meta_get(s, key);
    enum crawl_code rc = CRAWL_OK;
    if (r == SQLITE_ROW) {
        const unsigned char *t = sqlite3_column_text(s->st[S_META_GET], 0);
        if (t && !(*v = strdup((const char *)t)))
            rc = CRAWL_ENOMEM;
    } else if (r != SQLITE_DONE) {
        rc = db_fail(s, "read meta");
    }
    sqlite3_reset(s->st[S_META_GET]);
    return rc;
}

static enum crawl_code meta_step(struct crawl_state *s)
{
    sqlite3_stmt *q = s->st[S_META_SET];
    int r = sqlite3_step(q);
    sqlite3_reset(q);
    if (r != SQLITE_DONE)
        return db_fail(s, "write meta");
    s->pending++;
    return CRAWL_OK;
}

enum crawl_code crawl_state_set_meta_int(struct crawl_state *s, const char *key, int64_t v)
{
    if (s->redis)
        return crawl_redis_set_meta_int(s->redis, key, v);
    sqlite3_stmt *q = s->st[S_META_SET];
    sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_int64(q, 2, v);
    return meta_step(s);
}

enum crawl_code crawl_state_set_meta_text(struct crawl_state *s, const char *key, const char *v)
{
    if (s->redis)
        return crawl_redis_set_meta_text(s->redis, key, v);
    sqlite3_stmt *q = s->st[S_META_SET];
    sqlite3_bind_text(q, 1, key, -1, SQLITE_STATIC);
    sqlite3_bind_text(q, 2, v, -1, SQLITE_STATIC);
    return meta_step(s);
}

/* ---- hosts ---- */

enum crawl_code crawl_state_host(struct crawl_state *s, const char *origin, int64_t *id)
{
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    sqlite3_stmt *q = s->st[S_HOST_GET];
    sqlite3_reset(q);
    sqlite3_bind_text(q, 1, origin, -1, SQLITE_STATIC);
    int r = sqlite3_step(q);
    if (r == SQLITE_ROW) {
        *id = sqlite3_column_int64(q, 0);
        sqlite3_reset(q);
        return CRAWL_OK;
    }
    sqlite3_reset(q);
    if (r != SQLITE_DONE)
        return db_fail(s, "read hosts");
    q = s->st[S_HOST_ADD];
    sqlite3_bind_text(q, 1, origin, -1, SQLITE_STATIC);
    r = sqlite3_step(q);
    sqlite3_reset(q);
    if (r != SQLITE_DONE)
        return db_fail(s, "add a host");
    *id = sqlite3_last_insert_rowid(s->db);
    s->pending++;
    return CRAWL_OK;
}

enum crawl_code crawl_state_host_save(struct crawl_state *s, int64_t id, double delay,
                                      double next_allowed)
{
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    sqlite3_stmt *q = s->st[S_HOST_SAVE];
    sqlite3_bind_double(q, 1, delay);
    sqlite3_bind_double(q, 2, next_allowed);
    sqlite3_bind_int64(q, 3, id);
    int r = sqlite3_step(q);
    sqlite3_reset(q);
    if (r != SQLITE_DONE)
        return db_fail(s, "save a host");
    s->pending++;
    return CRAWL_OK;
}

enum crawl_code crawl_state_host_robots(struct crawl_state *s, int64_t id, int status,
                                        const void *body, size_t len, double when)
{
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    sqlite3_stmt *q = s->st[S_HOST_ROBOTS];
    sqlite3_bind_int(q, 1, status);
    sqlite3_bind_blob64(q, 2, body && len ? body : "", len, SQLITE_STATIC);
    sqlite3_bind_double(q, 3, when);
    sqlite3_bind_int64(q, 4, id);
    int r = sqlite3_step(q);
    sqlite3_reset(q);
    if (r != SQLITE_DONE)
        return db_fail(s, "save a robots.txt");
    s->pending++;
    return CRAWL_OK;
}

enum crawl_code crawl_state_foreach_host(struct crawl_state *s,
                                         int (*fn)(void *userdata, int64_t id, const char *origin,
                                                   const struct crawl_state_host *h,
                                                   int64_t queued),
                                         void *userdata)
{
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT h.id, h.origin, h.delay, h.next_allowed, h.robots_status, "
                           "h.robots_body, h.robots_time, (SELECT count(*) FROM urls u WHERE "
                           "u.host = h.id AND u.state = 0) FROM hosts h ORDER BY h.id",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "read hosts");
    int r;
    enum crawl_code rc = CRAWL_OK;
    while ((r = sqlite3_step(q)) == SQLITE_ROW) {
        struct crawl_state_host h = {0};
        h.delay = sqlite3_column_double(q, 2);
        h.next_allowed = sqlite3_column_double(q, 3);
        if (sqlite3_column_type(q, 4) != SQLITE_NULL) {
            h.robots_status = sqlite3_column_int(q, 4);
            h.robots_body = sqlite3_column_blob(q, 5);
            h.robots_len = (size_t)sqlite3_column_bytes(q, 5);
            h.robots_time = sqlite3_column_double(q, 6);
        }
        if (fn(userdata, sqlite3_column_int64(q, 0), (const char *)sqlite3_column_text(q, 1), &h,
               sqlite3_column_int64(q, 7)) != 0) {
            rc = CRAWL_ENOMEM;
            break;
        }
    }
    if (rc == CRAWL_OK && r != SQLITE_DONE)
        rc = db_fail(s, "read hosts");
    sqlite3_finalize(q);
    return rc;
}

/* ---- urls ---- */

enum crawl_code crawl_state_url_add(struct crawl_state *s, uint64_t hash, int64_t host,
                                    const char *url, unsigned depth, unsigned hops, float priority,
                                    int64_t referrer, int64_t *id)
{
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    sqlite3_stmt *q = s->st[S_URL_ADD];
    sqlite3_bind_int64(q, 1, (int64_t)hash);
    sqlite3_bind_int64(q, 2, host);
    sqlite3_bind_text(q, 3, url, -1, SQLITE_STATIC);
    sqlite3_bind_int(q, 4, (int)depth);
    sqlite3_bind_int(q, 5, (int)hops);
    sqlite3_bind_double(q, 6, priority);
    if (referrer)
        sqlite3_bind_int64(q, 7, referrer);
    else
        sqlite3_bind_null(q, 7);
    int r = sqlite3_step(q);
    sqlite3_reset(q);
    if (r != SQLITE_DONE)
        return db_fail(s, "add a URL");
    *id = sqlite3_last_insert_rowid(s->db);
    s->pending++;
    return CRAWL_OK;
}

/* Steps q, an UPDATE of URL row id: it must change that row. */
static enum crawl_code url_update(struct crawl_state *s, sqlite3_stmt *q, int64_t id,
                                  const char *what)
{
    int r = sqlite3_step(q);
    sqlite3_reset(q);
    if (r != SQLITE_DONE)
        return db_fail(s, what);
    if (sqlite3_changes(s->db) != 1) {
        st_err(s, "%s: %s: no URL row %lld", s->path, what, (long long)id);
        return CRAWL_EIO;
    }
    s->pending++;
    return CRAWL_OK;
}

enum crawl_code crawl_state_url_set(struct crawl_state *s, int64_t id, enum crawl_url_state state,
                                    int decision)
{
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    sqlite3_stmt *q = s->st[S_URL_SET];
    sqlite3_bind_int(q, 1, (int)state);
    sqlite3_bind_int(q, 2, decision);
    sqlite3_bind_int64(q, 3, id);
    return url_update(s, q, id, "update a URL");
}

enum crawl_code crawl_state_url_lease(struct crawl_state *s, int64_t id)
{
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    sqlite3_stmt *q = s->st[S_URL_LEASE];
    sqlite3_bind_int64(q, 1, id);
    return url_update(s, q, id, "lease a URL");
}

enum crawl_code crawl_state_url_priority(struct crawl_state *s, uint64_t hash, float priority,
                                         float below, int64_t *id)
{
    *id = 0;
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    if (hash_index(s) != CRAWL_OK)
        return CRAWL_EIO;
    sqlite3_stmt *q = s->st[S_URL_PRIO];
    sqlite3_bind_double(q, 1, priority);
    sqlite3_bind_int64(q, 2, (int64_t)hash);
    sqlite3_bind_double(q, 3, below);
    int r = sqlite3_step(q);
    if (r == SQLITE_ROW) {
        *id = sqlite3_column_int64(q, 0);
        r = sqlite3_step(q);
    }
    sqlite3_reset(q);
    if (r != SQLITE_DONE)
        return db_fail(s, "update a URL's priority");
    if (*id)
        s->pending++;
    return CRAWL_OK;
}

enum crawl_code crawl_state_url_has(struct crawl_state *s, uint64_t hash, int *found)
{
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    if (hash_index(s) != CRAWL_OK)
        return CRAWL_EIO;
    sqlite3_stmt *q = s->st[S_URL_HAS];
    sqlite3_bind_int64(q, 1, (int64_t)hash);
    int r = sqlite3_step(q);
    sqlite3_reset(q);
    *found = r == SQLITE_ROW;
    return r == SQLITE_ROW || r == SQLITE_DONE ? CRAWL_OK : db_fail(s, "look up a URL");
}

typedef int (*queued_fn)(void *userdata, int64_t id, const char *url, unsigned depth, unsigned hops,
                         float priority, int64_t ref, const char *referrer);

/* fn for each row of q (the columns of S_QUEUED and S_BEST), which is reset after. */
static enum crawl_code queued_rows(struct crawl_state *s, sqlite3_stmt *q, queued_fn fn,
                                   void *userdata, size_t *n)
{
    *n = 0;
    int r;
    enum crawl_code rc = CRAWL_OK;
    while ((r = sqlite3_step(q)) == SQLITE_ROW) {
        if (fn(userdata, sqlite3_column_int64(q, 0), (const char *)sqlite3_column_text(q, 1),
               (unsigned)sqlite3_column_int(q, 2), (unsigned)sqlite3_column_int(q, 3),
               (float)sqlite3_column_double(q, 4), sqlite3_column_int64(q, 5),
               (const char *)sqlite3_column_text(q, 6)) != 0) {
            rc = CRAWL_ENOMEM;
            break;
        }
        (*n)++;
    }
    if (rc == CRAWL_OK && r != SQLITE_DONE)
        rc = db_fail(s, "read queued URLs");
    sqlite3_reset(q);
    return rc;
}

enum crawl_code crawl_state_queued(struct crawl_state *s, int64_t host, int64_t after, size_t limit,
                                   queued_fn fn, void *userdata, size_t *n)
{
    *n = 0;
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    sqlite3_stmt *q = s->st[S_QUEUED];
    sqlite3_bind_int64(q, 1, host);
    sqlite3_bind_int64(q, 2, after);
    sqlite3_bind_int64(q, 3, (int64_t)limit);
    return queued_rows(s, q, fn, userdata, n);
}

enum crawl_code crawl_state_best_order(struct crawl_state *s)
{
    if (s->redis)
        return CRAWL_EINVAL;
    return make_index(s, "CREATE INDEX IF NOT EXISTS urls_best ON urls(host, prio DESC, id) "
                         "WHERE state = 0");
}

enum crawl_code crawl_state_queued_best(struct crawl_state *s, int64_t host, float below_prio,
                                        int64_t below_id, size_t limit, queued_fn fn,
                                        void *userdata, size_t *n)
{
    *n = 0;
    if (s->redis)
        return CRAWL_EINVAL;
    sqlite3_stmt *q = s->st[S_BEST];
    sqlite3_bind_int64(q, 1, host);
    sqlite3_bind_double(q, 2, below_prio);
    sqlite3_bind_int64(q, 3, below_id);
    sqlite3_bind_int64(q, 4, (int64_t)limit);
    return queued_rows(s, q, fn, userdata, n);
}

enum crawl_code crawl_state_foreach_hash(struct crawl_state *s,
                                         int (*fn)(void *userdata, uint64_t hash, int done),
                                         void *userdata)
{
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT hash, state FROM urls", -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "read URLs");
    int r;
    enum crawl_code rc = CRAWL_OK;
    while ((r = sqlite3_step(q)) == SQLITE_ROW)
        if (fn(userdata, (uint64_t)sqlite3_column_int64(q, 0),
               sqlite3_column_int(q, 1) != CRAWL_URL_QUEUED) != 0) {
            rc = CRAWL_ENOMEM;
            break;
        }
    if (rc == CRAWL_OK && r != SQLITE_DONE)
        rc = db_fail(s, "read URLs");
    sqlite3_finalize(q);
    return rc;
}

enum crawl_code crawl_state_url_counts(struct crawl_state *s, int64_t counts[CRAWL_URL_NSTATES])
{
    if (s->redis)
        return CRAWL_EINVAL; /* the shared frontier has no such table */
    memset(counts, 0, sizeof(int64_t) * CRAWL_URL_NSTATES);
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT state, count(*) FROM urls GROUP BY state", -1, &q,
                           NULL) != SQLITE_OK)
        return db_fail(s, "count URLs");
    int r;
    while ((r = sqlite3_step(q)) == SQLITE_ROW) {
        int st = sqlite3_column_int(q, 0);
        if (st >= 0 && st < CRAWL_URL_NSTATES)
            counts[st] = sqlite3_column_int64(q, 1);
    }
    sqlite3_finalize(q);
    return r == SQLITE_DONE ? CRAWL_OK : db_fail(s, "count URLs");
}

/* ---- the caller's page records ---- */

/* What a caller's fn answered for a page record (0, -1 out of memory, 1 cannot read it):
 * CRAWL_OK to go on, else the code to stop with, said. */
static enum crawl_code page_fn_result(struct crawl_state *s, int e)
{
    if (e == 0)
        return CRAWL_OK;
    st_err(s, "%s: a page record cannot be replayed", s->path);
    return e < 0 ? CRAWL_ENOMEM : CRAWL_EFORMAT;
}

/* The end of a walk over the page records of q (rc so far, r the last step): q finalized. */
static enum crawl_code pages_end(struct crawl_state *s, sqlite3_stmt *q, enum crawl_code rc, int r)
{
    if (rc == CRAWL_OK && r != SQLITE_DONE)
        rc = db_fail(s, "read page records");
    sqlite3_finalize(q);
    return rc;
}

/* Room for n more bytes at *len in *buf (of *cap, doubled from 64 KiB). */
static int grow(unsigned char **buf, size_t *cap, size_t len, size_t n)
{
    if (n <= *cap - len)
        return 0;
    size_t c = *cap ? *cap : 65536;
    while (n > c - len)
        c *= 2;
    unsigned char *v = realloc(*buf, c);
    if (!v)
        return -1;
    *buf = v;
    *cap = c;
    return 0;
}

/* A record waiting (batches): data, and its text row (text TEXT_NONE: none; TEXT_KEPT:
 * z[0..zlen) packed, text_len bytes unpacked; TEXT_OVER_CAP: the length alone). */
static enum crawl_code pending_add(struct crawl_state *s, const void *data, size_t len, int text,
                                   const unsigned char *z, size_t zlen, size_t text_len)
{
    if (s->pg_n == s->pg_ncap) {
        size_t cap = s->pg_ncap ? 2 * s->pg_ncap : 256;
        struct pending *v = realloc(s->pd, cap * sizeof *v);
        if (!v)
            return CRAWL_ENOMEM;
        s->pd = v;
        s->pg_ncap = cap;
    }
    if (text != TEXT_KEPT)
        zlen = 0;
    if (grow(&s->pg, &s->pg_cap, s->pg_len, len) != 0 ||
        grow(&s->tz, &s->tz_cap, s->tz_len, zlen) != 0)
        return CRAWL_ENOMEM;
    if (len)
        memcpy(s->pg + s->pg_len, data, len);
    if (zlen)
        memcpy(s->tz + s->tz_len, z, zlen);
    s->pg_len += len;
    s->tz_len += zlen;
    s->pd[s->pg_n++] = (struct pending){s->pg_len, s->tz_len, text_len, text};
    s->pg_texts += text != TEXT_NONE;
    s->pending += 1 + (text != TEXT_NONE);
    return CRAWL_OK;
}

enum crawl_code crawl_state_page_add(struct crawl_state *s, const void *data, size_t len)
{
    if (s->redis)
        return crawl_redis_page_add(s->redis, data, len);
    return pending_add(s, data, len, TEXT_NONE, NULL, 0, 0);
}

enum crawl_code crawl_state_foreach_page(struct crawl_state *s,
                                         int (*fn)(void *userdata, const void *data, size_t len),
                                         void *userdata)
{
    if (s->redis)
        return crawl_redis_foreach_page(s->redis, fn, userdata);
    enum crawl_code frc = flush(s); /* the records still waiting first */
    if (frc != CRAWL_OK)
        return frc;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT data FROM pages ORDER BY seq", -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "read page records");
    int r = SQLITE_DONE;
    enum crawl_code rc = CRAWL_OK;
    while (rc == CRAWL_OK && (r = sqlite3_step(q)) == SQLITE_ROW)
        rc = page_fn_result(
            s, fn(userdata, sqlite3_column_blob(q, 0), (size_t)sqlite3_column_bytes(q, 0)));
    return pages_end(s, q, rc, r);
}

/* ---- the pages' texts ----
 *
 * HOW IT WORKS. The main text of a page record (crawl_state_page_add_text) goes into the
 * table texts(seq, len, z) under the record's seq, in the same transaction as the record
 * (so a group commit makes both durable, or a kill loses both): z is the text packed as a
 * zlib stream by ISA-L's igzip at level 1 (as the WARC writer; over python3.11-doc's 530
 * main texts, 10.6 MB: 0.042 CPU s, 250 MB/s, 2.82x smaller, against zlib's level 1 at
 * 85 MB/s and 2.75x), or NULL when the state's packed texts had reached the caller's cap;
 * the crawl's workers pack, its loop thread only stores. A state
 * made before the table existed gets it when opened, with meta "texts.from" the first
 * record seq it can hold a text for: older records are CRAWL_TEXT_BEFORE. The table is not
 * a new schema version: a simcrawl that does not know it resumes the state and adds records
 * without texts (CRAWL_TEXT_NONE).
 */

/* A thread's igzip stream and level-1 buffer (80 KB and 276 KB), made at its first
 * crawl_text_pack and freed when the thread ends. Allocated and zeroed at every page, they
 * cost about as much as the packing (perf, 30,000 pages: memset 2.9 % of a --state crawl's
 * CPU time; callgrind, which counts rep stosb by the byte, 3.8 G instructions, a third of
 * its count). Neither needs zeroing again: a stateless deflate sets up the stream and the
 * level buffer's hash table itself, so the same text packs to the same bytes whatever they
 * held before (test_state_text_pack_reuse), but for the stream's hist_bits, which
 * isal_deflate_stateless_init leaves as it finds it (1..14 would shrink the window, as
 * warc_write.c found): the stream is zeroed when made, hist_bits set to 0 at each call. */
struct packer {
    struct isal_zstream zs;
    unsigned char lbuf[ISAL_DEF_LVL1_DEFAULT];
};

static pthread_key_t packer_key;
static pthread_once_t packer_once = PTHREAD_ONCE_INIT;
static int packer_key_made;

static void packer_key_make(void)
{
    packer_key_made = pthread_key_create(&packer_key, free) == 0;
}

/* This thread's packer, NULL without memory. */
static struct packer *packer(void)
{
    if (pthread_once(&packer_once, packer_key_make) != 0 || !packer_key_made)
        return NULL;
    struct packer *p = pthread_getspecific(packer_key);
    if (!p && (p = calloc(1, sizeof *p)) && pthread_setspecific(packer_key, p) != 0) {
        free(p);
        p = NULL;
    }
    return p;
}

enum crawl_code crawl_text_pack(const char *text, size_t len, struct crawl_text *out)
{
    memset(out, 0, sizeof *out);
    if (len > CRAWL_STATE_TEXT_MAX)
        return CRAWL_EINVAL;
    uLong room = compressBound((uLong)len);
    unsigned char *z = malloc(room);
    struct packer *p = packer();
    size_t n = 0;
    if (z && p) {
        struct isal_zstream *zs = &p->zs;
        unsigned char *lbuf = p->lbuf;
        isal_deflate_stateless_init(zs);
        zs->hist_bits = 0; /* (init leaves it as it was) */
        zs->level = 1;
        zs->level_buf = lbuf;
        zs->level_buf_size = ISAL_DEF_LVL1_DEFAULT;
        zs->gzip_flag = IGZIP_ZLIB;
        zs->end_of_stream = 1;
        zs->flush = NO_FLUSH;
        zs->next_in = (uint8_t *)text;
        zs->avail_in = (uint32_t)len;
        zs->next_out = z;
        zs->avail_out = (uint32_t)room;
        if (isal_deflate_stateless(zs) == COMP_OK)
            n = zs->total_out;
        else if (compress2(z, &room, (const Bytef *)text, (uLong)len, 1) == Z_OK)
            n = room; /* (igzip past zlib's bound: its stored blocks; zlib fits it) */
    }
    if (!n) {
        free(z);
        return CRAWL_ENOMEM;
    }
    out->z = z;
    out->zlen = n;
    out->len = len;
    return CRAWL_OK;
}

void crawl_text_release(struct crawl_text *t)
{
    if (!t)
        return;
    free(t->z);
    memset(t, 0, sizeof *t);
}

/* *seq: the seq the next page record gets (the highest in the table + 1). */
static enum crawl_code first_seq(struct crawl_state *s, int64_t *seq)
{
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db, "SELECT coalesce(max(seq), 0) + 1 FROM pages", -1, &q, NULL) !=
        SQLITE_OK)
        return db_fail(s, "read page records");
    int r = sqlite3_step(q);
    if (r == SQLITE_ROW)
        *seq = sqlite3_column_int64(q, 0);
    sqlite3_finalize(q);
    return r == SQLITE_ROW ? CRAWL_OK : db_fail(s, "read page records");
}

/* The texts table, made (with meta texts.from) when the state has none; texts.from read. */
static enum crawl_code texts_setup(struct crawl_state *s)
{
    int have = 0;
    if (has_object(s, "table", "texts", &have) != CRAWL_OK)
        return CRAWL_EIO;
    int64_t from = 1;
    int found = 0;
    if (!have) {
        if (exec(s, "CREATE TABLE texts(seq INTEGER PRIMARY KEY, len INTEGER NOT NULL, z BLOB)") !=
                CRAWL_OK ||
            first_seq(s, &from) != CRAWL_OK ||
            crawl_state_set_meta_int(s, "texts.from", from) != CRAWL_OK)
            return CRAWL_EIO;
    } else if (crawl_state_meta_int(s, "texts.from", &from, &found) != CRAWL_OK) {
        return CRAWL_EIO;
    }
    s->texts.from = from;
    if (prepare_insert(s, "texts", "seq, len, z", 3, 1, &s->texts.add) != CRAWL_OK)
        return CRAWL_EIO;
    return prepare_insert(s, "texts", "seq, len, z", 3, BATCH_ROWS, &s->texts.batch);
}

static void texts_close(struct crawl_state *s)
{
    sqlite3_finalize(s->texts.add);
    sqlite3_finalize(s->texts.batch);
    s->texts.add = s->texts.batch = NULL;
}

enum crawl_code crawl_state_text_bytes(struct crawl_state *s, uint64_t *bytes)
{
    *bytes = 0;
    if (s->redis)
        return CRAWL_OK;
    if (!s->texts.bytes_known) {
        sqlite3_stmt *q = NULL;
        if (sqlite3_prepare_v2(s->db, "SELECT coalesce(sum(length(z)), 0) FROM texts", -1, &q,
                               NULL) != SQLITE_OK)
            return db_fail(s, "read the texts");
        int r = sqlite3_step(q);
        if (r == SQLITE_ROW)
            s->texts.bytes = (uint64_t)sqlite3_column_int64(q, 0);
        sqlite3_finalize(q);
        if (r != SQLITE_ROW)
            return db_fail(s, "read the texts");
        s->texts.bytes_known = 1;
    }
    *bytes = s->texts.bytes;
    return CRAWL_OK;
}

enum crawl_code crawl_state_page_add_text(struct crawl_state *s, const void *data, size_t len,
                                          const struct crawl_text *text, uint64_t max_bytes)
{
    if (s->redis || !text || !text->z)
        return crawl_state_page_add(s, data, len);
    uint64_t bytes;
    enum crawl_code rc = crawl_state_text_bytes(s, &bytes);
    if (rc != CRAWL_OK)
        return rc;
    int keep = text->zlen <= max_bytes && bytes <= max_bytes - text->zlen;
    rc =
        pending_add(s, data, len, keep ? TEXT_KEPT : TEXT_OVER_CAP, text->z, text->zlen, text->len);
    if (rc == CRAWL_OK && keep)
        s->texts.bytes += text->zlen;
    return rc;
}

typedef int (*page_text_fn)(void *userdata, const void *data, size_t len, enum crawl_text_status st,
                            const char *text, size_t text_len);

/* Unpacks the text of record seq (len bytes packed in z[0..zlen)) into *buf (grown) and
 * sets *st: 0, or -1 out of memory. A text that does not unpack is CRAWL_TEXT_DAMAGED, the
 * error says which. */
static int text_unpack(struct crawl_state *s, int64_t seq, int64_t len, const void *z, size_t zlen,
                       char **buf, size_t *cap, enum crawl_text_status *st)
{
    *st = CRAWL_TEXT_DAMAGED;
    if (len < 0 || len > (int64_t)CRAWL_STATE_TEXT_MAX) {
        st_err(s, "%s: the text of page record %lld has a length of %lld bytes (at most %u)",
               s->path, (long long)seq, (long long)len, CRAWL_STATE_TEXT_MAX);
        return 0;
    }
    if ((size_t)len + 1 > *cap) {
        char *b = realloc(*buf, (size_t)len + 1);
        if (!b)
            return -1;
        *buf = b;
        *cap = (size_t)len + 1;
    }
    uLongf got = (uLongf)len;
    int zr = uncompress((Bytef *)*buf, &got, z, (uLong)zlen);
    if (zr != Z_OK || got != (uLongf)len) {
        st_err(s, "%s: the text of page record %lld does not unpack (zlib: %s)", s->path,
               (long long)seq, zr != Z_OK ? zError(zr) : "shorter than its length");
        return 0;
    }
    (*buf)[len] = '\0';
    *st = CRAWL_TEXT_KEPT;
    return 0;
}

struct redis_texts {
    page_text_fn fn;
    void *userdata;
};

static int redis_text_row(void *userdata, const void *data, size_t len)
{
    const struct redis_texts *rt = userdata;
    return rt->fn(rt->userdata, data, len, CRAWL_TEXT_BEFORE, NULL, 0);
}

enum crawl_code crawl_state_foreach_page_text(struct crawl_state *s, page_text_fn fn,
                                              void *userdata)
{
    if (s->redis) {
        struct redis_texts rt = {fn, userdata};
        return crawl_redis_foreach_page(s->redis, redis_text_row, &rt);
    }
    enum crawl_code frc = flush(s); /* the records still waiting first */
    if (frc != CRAWL_OK)
        return frc;
    sqlite3_stmt *q = NULL;
    if (sqlite3_prepare_v2(s->db,
                           "SELECT p.seq, p.data, t.seq IS NOT NULL, t.len, t.z FROM pages p "
                           "LEFT JOIN texts t ON t.seq = p.seq ORDER BY p.seq",
                           -1, &q, NULL) != SQLITE_OK)
        return db_fail(s, "read page records");
    char *buf = NULL;
    size_t cap = 0;
    int r;
    enum crawl_code rc = CRAWL_OK;
    while ((r = sqlite3_step(q)) == SQLITE_ROW) {
        int64_t seq = sqlite3_column_int64(q, 0);
        enum crawl_text_status st = seq < s->texts.from ? CRAWL_TEXT_BEFORE : CRAWL_TEXT_NONE;
        if (sqlite3_column_int(q, 2) && sqlite3_column_type(q, 4) == SQLITE_NULL)
            st = CRAWL_TEXT_OVER_CAP;
        else if (sqlite3_column_int(q, 2) &&
                 text_unpack(s, seq, sqlite3_column_int64(q, 3), sqlite3_column_blob(q, 4),
                             (size_t)sqlite3_column_bytes(q, 4), &buf, &cap, &st) != 0) {
            rc = CRAWL_ENOMEM;
            break;
        }
        const char *text = st == CRAWL_TEXT_KEPT ? buf : NULL;
        size_t text_len = st == CRAWL_TEXT_KEPT ? (size_t)sqlite3_column_int64(q, 3) : 0;
        rc = page_fn_result(s, fn(userdata, sqlite3_column_blob(q, 1),
                                  (size_t)sqlite3_column_bytes(q, 1), st, text, text_len));
        if (rc != CRAWL_OK)
            break;
    }
    free(buf);
    return pages_end(s, q, rc, r);
}
