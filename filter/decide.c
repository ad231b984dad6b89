/*
 * The one decision (filter/decide.h): exact duplicate by payload key, near-duplicate by the
 * permuted-table index (dedup_index_nearest, Manku et al.; with LEARN_NEAR its template
 * blocks counted while its host is young: docs/FINGERPRINT.md, "Where T comes from"), or
 * new (dedup_index_add, the key remembered, the host's template blocks counted:
 * docs/FINGERPRINT.md, "Template blocks").
 * `simcrawl crawl`, `simcrawl dedup` and the library's filter (filter/filter.c) all decide
 * here; what they differ in (noindex pages, pages with too little text, digests lost) are
 * flags of the page, and what they add around it (a WARC record, a journal record) hooks.
 *
 * Two maps beside the borrowed index: the payload keys (open addressing over an array of
 * entries kept in the order remembered, each with its key, the caller's metadata and its
 * document), and with by_id the ids (open addressing over document numbers, hashed with
 * XXH3 and compared against the index's ids). One rwlock guards the maps, the index and the
 * template table: read for lookups and marks, write for every decision and add.
 */
#include "filter/decide.h"

#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <xxhash.h>

#define NO_DOC UINT32_MAX

struct pentry {
    uint64_t hash;
    uint32_t doc;
    uint32_t key_len;
    unsigned char *key; /* owned; the key */
    void *meta;         /* owned, or NULL when meta_len is 0 */
    size_t meta_len;
};

struct filter_decide {
    struct filter_decide_opts o;
    pthread_rwlock_t rw;
    struct dedup_templates *templates; /* the index's, or NULL */
    /* payload keys: entries in order, slots hold entry + 1 (0: empty) */
    struct pentry *ent;
    size_t n_ent, ent_cap;
    uint32_t *pslot;
    size_t pslot_cap; /* a power of two, or 0 */
    /* by_id: slots hold doc + 1 */
    uint32_t *islot;
    size_t islot_cap, n_ids;
    /* deleted documents, one bit each, until filter_decide_rebuild_locked() */
    uint8_t *dead;
    size_t dead_cap; /* bytes */
    uint32_t n_dead;
    struct dedup_matches q;      /* nearest_live()'s matches (write lock) */
    struct dedup_lsh_matches lq; /* the same with lsh */
};

static uint64_t key_hash(const void *key, size_t len)
{
    return XXH3_64bits(key, len);
}

/* ---- the index: the simhash's permuted tables or the MinHash LSH ---- */

static uint32_t ix_count(const struct filter_decide *d)
{
    return d->o.lsh ? dedup_lsh_doc_count(d->o.lsh) : dedup_index_doc_count(d->o.index);
}

static const char *ix_id(const struct filter_decide *d, uint32_t doc, size_t *len)
{
    return d->o.lsh ? dedup_lsh_id(d->o.lsh, doc, len) : dedup_index_id(d->o.index, doc, len);
}

/* A document's simhash (0 with the MinHash method: it keeps signatures). */
static uint64_t ix_fp(const struct filter_decide *d, uint32_t doc)
{
    return d->o.lsh ? 0 : dedup_index_fingerprint(d->o.index, doc);
}

/* ---- the payload keys ---- */

static int64_t payload_find(const struct filter_decide *d, const void *key, size_t len)
{
    if (!d->pslot_cap || !key)
        return -1;
    uint64_t h = key_hash(key, len);
    size_t j = (size_t)h & (d->pslot_cap - 1);
    for (uint32_t v; (v = d->pslot[j]) != 0; j = (j + 1) & (d->pslot_cap - 1)) {
        const struct pentry *e = &d->ent[v - 1];
        if (e->hash == h && e->key_len == len && memcmp(e->key, key, len) == 0)
            return v - 1;
    }
    return -1;
}

/* Room for one more entry (slots at most half full). -1 when out of memory. */
static int payload_reserve(struct filter_decide *d)
{
    if (d->n_ent + 1 > d->ent_cap) {
        size_t nc = d->ent_cap ? d->ent_cap * 2 : 1024;
        struct pentry *ne = realloc(d->ent, nc * sizeof *ne);
        if (!ne)
            return -1;
        d->ent = ne;
        d->ent_cap = nc;
    }
    if ((d->n_ent + 1) * 2 <= d->pslot_cap)
        return 0;
    size_t nc = d->pslot_cap ? d->pslot_cap * 2 : 2048;
    uint32_t *ns = calloc(nc, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < d->n_ent; i++) {
        size_t j = (size_t)d->ent[i].hash & (nc - 1);
        while (ns[j])
            j = (j + 1) & (nc - 1);
        ns[j] = (uint32_t)i + 1;
    }
    free(d->pslot);
    d->pslot = ns;
    d->pslot_cap = nc;
    return 0;
}

/* Remembers a key not known yet. Under the write lock. */
static enum filter_decide_stored payload_put(struct filter_decide *d, const void *key, size_t len,
                                             uint32_t doc, const void *meta, size_t meta_len)
{
    if (d->o.max_payloads && d->n_ent >= d->o.max_payloads)
        return FILTER_STORED_FULL;
    if (len > UINT32_MAX || d->n_ent >= UINT32_MAX - 1 || payload_reserve(d) != 0)
        return FILTER_STORED_ENOMEM;
    struct pentry e = {key_hash(key, len),    doc,  (uint32_t)len,
                       malloc(len ? len : 1), NULL, meta_len};
    if (meta_len)
        e.meta = malloc(meta_len);
    if (!e.key || (meta_len && !e.meta)) {
        free(e.key);
        free(e.meta);
        return FILTER_STORED_ENOMEM;
    }
    memcpy(e.key, key, len);
    if (meta_len)
        memcpy(e.meta, meta, meta_len);
    d->ent[d->n_ent] = e;
    size_t j = (size_t)e.hash & (d->pslot_cap - 1);
    while (d->pslot[j])
        j = (j + 1) & (d->pslot_cap - 1);
    d->pslot[j] = (uint32_t)++d->n_ent;
    return FILTER_STORED_YES;
}

/* ---- deleted documents ---- */

static int is_dead(const struct filter_decide *d, uint32_t doc)
{
    return d->n_dead && (size_t)(doc >> 3) < d->dead_cap && (d->dead[doc >> 3] >> (doc & 7) & 1);
}

/* Room for doc's mark, made before anything is decided, so that marking cannot fail.
 * -1 when out of memory. */
static int dead_reserve(struct filter_decide *d, uint32_t doc)
{
    size_t need = (size_t)(doc >> 3) + 1;
    if (need <= d->dead_cap)
        return 0;
    size_t nc = d->dead_cap ? d->dead_cap : 1024;
    while (nc < need)
        nc *= 2;
    uint8_t *nd = realloc(d->dead, nc);
    if (!nd)
        return -1;
    memset(nd + d->dead_cap, 0, nc - d->dead_cap);
    d->dead = nd;
    d->dead_cap = nc;
    return 0;
}

/* Marks doc deleted; dead_reserve(d, doc) made the room. */
static void dead_mark(struct filter_decide *d, uint32_t doc)
{
    d->dead[doc >> 3] |= (uint8_t)(1u << (doc & 7));
    d->n_dead++;
}

/* A remembered key whose document was deleted belongs to doc now, with meta. */
static enum filter_decide_stored payload_revive(struct pentry *e, uint32_t doc, const void *meta,
                                                size_t meta_len)
{
    void *nm = NULL;
    if (meta_len) {
        nm = malloc(meta_len);
        if (!nm)
            return FILTER_STORED_ENOMEM;
        memcpy(nm, meta, meta_len);
    }
    free(e->meta);
    e->meta = nm;
    e->meta_len = meta_len;
    e->doc = doc;
    return FILTER_STORED_YES;
}

/* ---- the ids (by_id) ---- */

static int64_t id_find(const struct filter_decide *d, const char *id, size_t len)
{
    if (!d->islot_cap)
        return -1;
    size_t j = (size_t)key_hash(id, len) & (d->islot_cap - 1);
    for (uint32_t v; (v = d->islot[j]) != 0; j = (j + 1) & (d->islot_cap - 1)) {
        size_t l;
        const char *s = ix_id(d, v - 1, &l);
        if (l == len && memcmp(s, id, len) == 0)
            return v - 1;
    }
    return -1;
}

static int id_reserve(struct filter_decide *d)
{
    if ((d->n_ids + 1) * 2 <= d->islot_cap)
        return 0;
    size_t nc = d->islot_cap ? d->islot_cap * 2 : 1024;
    uint32_t *ns = calloc(nc, sizeof *ns);
    if (!ns)
        return -1;
    for (size_t i = 0; i < d->islot_cap; i++) {
        uint32_t v = d->islot[i];
        if (!v)
            continue;
        size_t l;
        const char *s = ix_id(d, v - 1, &l);
        size_t j = (size_t)key_hash(s, l) & (nc - 1);
        while (ns[j])
            j = (j + 1) & (nc - 1);
        ns[j] = v;
    }
    free(d->islot);
    d->islot = ns;
    d->islot_cap = nc;
    return 0;
}

static size_t id_home(const struct filter_decide *d, uint32_t doc, size_t mask)
{
    size_t l;
    const char *s = ix_id(d, doc, &l);
    return (size_t)key_hash(s, l) & mask;
}

/* Removes doc's slot, which is there: linear probing's deletion by backward shift (Knuth,
 * TAOCP vol. 3, 6.4 Algorithm R), so that no probe sequence is cut. */
static void id_remove(struct filter_decide *d, uint32_t doc)
{
    size_t mask = d->islot_cap - 1, i = id_home(d, doc, mask);
    while (d->islot[i] != doc + 1)
        i = (i + 1) & mask;
    d->islot[i] = 0;
    for (size_t j = (i + 1) & mask; d->islot[j]; j = (j + 1) & mask) {
        size_t h = id_home(d, d->islot[j] - 1, mask);
        /* the entry at j may move to the hole at i unless its home lies in (i, j] */
        int stays = i < j ? (i < h && h <= j) : (i < h || h <= j);
        if (stays)
            continue;
        d->islot[i] = d->islot[j];
        d->islot[j] = 0;
        i = j;
    }
    d->n_ids--;
}

/* Room was reserved. */
static void id_put(struct filter_decide *d, const char *id, size_t len, uint32_t doc)
{
    size_t j = (size_t)key_hash(id, len) & (d->islot_cap - 1);
    while (d->islot[j])
        j = (j + 1) & (d->islot_cap - 1);
    d->islot[j] = doc + 1;
    d->n_ids++;
}

/* ---- lifecycle ---- */

enum dedup_code filter_decide_new(const struct filter_decide_opts *opts, struct filter_decide **out)
{
    *out = NULL;
    if (!opts || !opts->index == !opts->lsh ||
        (opts->lsh && !(opts->threshold >= 0 && opts->threshold <= 1)))
        return DEDUP_EINVAL;
    struct filter_decide *d = calloc(1, sizeof *d);
    if (!d)
        return DEDUP_ENOMEM;
    d->o = *opts;
    if (pthread_rwlock_init(&d->rw, NULL) != 0) {
        free(d);
        return DEDUP_ENOMEM;
    }
    if (opts->templates) {
        /* made now: marks read it under the read lock */
        d->templates =
            opts->lsh ? dedup_lsh_templates(opts->lsh) : dedup_index_templates(opts->index);
        if (!d->templates)
            goto fail;
    }
    if (opts->by_id) { /* the first document of an id is its page */
        uint32_t n = ix_count(d);
        for (uint32_t doc = 0; doc < n; doc++) {
            size_t len;
            const char *id = ix_id(d, doc, &len);
            if (id_reserve(d) != 0)
                goto fail;
            if (id_find(d, id, len) < 0)
                id_put(d, id, len, doc);
        }
    }
    *out = d;
    return DEDUP_OK;
fail:
    filter_decide_free(d);
    return DEDUP_ENOMEM;
}

void filter_decide_free(struct filter_decide *d)
{
    if (!d)
        return;
    for (size_t i = 0; i < d->n_ent; i++) {
        free(d->ent[i].key);
        free(d->ent[i].meta);
    }
    free(d->ent);
    free(d->pslot);
    free(d->islot);
    free(d->dead);
    dedup_matches_release(&d->q);
    dedup_lsh_matches_release(&d->lq);
    pthread_rwlock_destroy(&d->rw);
    free(d);
}

void filter_decide_result_release(struct filter_decide_result *res)
{
    if (!res)
        return;
    free(res->dup_id);
    free(res->meta);
    memset(res, 0, sizeof *res);
}

/* ---- answers ---- */

/* Clears the answer of res, keeping its buffers. */
static void result_reset(struct filter_decide_result *res)
{
    res->verdict = FILTER_VERDICT_NEW;
    res->doc = NO_DOC;
    res->has_doc = 0;
    res->distance = 0;
    res->jaccard = 0;
    res->fp = 0;
    res->dup_id_len = 0;
    if (res->dup_id)
        res->dup_id[0] = '\0';
    res->meta_len = 0;
    res->stored = FILTER_STORED_NONE;
    res->add_code = DEDUP_OK;
    res->template_code = DEDUP_OK;
    res->code = DEDUP_OK;
    res->hook_code = 0;
    res->added = 0;
    res->learned = 0;
}

static int copy_into(void **buf, size_t *cap, const void *src, size_t len, int nul)
{
    size_t need = len + (nul ? 1 : 0);
    if (need > *cap || !*buf) {
        void *n = realloc(*buf, need ? need : 1);
        if (!n)
            return -1;
        *buf = n;
        *cap = need ? need : 1;
    }
    if (len)
        memcpy(*buf, src, len);
    if (nul)
        ((char *)*buf)[len] = '\0';
    return 0;
}

/* res names document doc as the original (its id, fingerprint). Under a lock. */
static int answer_doc(const struct filter_decide *d, uint32_t doc, struct filter_decide_result *res)
{
    size_t len;
    const char *id = ix_id(d, doc, &len);
    res->doc = doc;
    res->has_doc = 1;
    res->fp = ix_fp(d, doc);
    void *buf = res->dup_id;
    if (copy_into(&buf, &res->dup_cap, id, len, 1) != 0)
        return -1;
    res->dup_id = buf;
    res->dup_id_len = len;
    return 0;
}

/* The id (by_id) or the payload key known: 1 with res filled, 0, -1 out of memory. */
static int known(const struct filter_decide *d, const struct filter_decide_page *p,
                 struct filter_decide_result *res)
{
    if (d->o.by_id) {
        int64_t doc = id_find(d, p->id, p->id_len);
        if (doc >= 0) {
            res->verdict = FILTER_VERDICT_KNOWN_ID;
            res->doc = (uint32_t)doc;
            res->has_doc = 1;
            res->fp = ix_fp(d, (uint32_t)doc);
            return 1;
        }
    }
    int64_t e = payload_find(d, p->key, p->key_len);
    if (e < 0 || (d->ent[e].doc != NO_DOC && is_dead(d, d->ent[e].doc)))
        return 0;
    const struct pentry *pe = &d->ent[e];
    res->verdict = FILTER_VERDICT_EXACT;
    if (copy_into(&res->meta, &res->meta_cap, pe->meta, pe->meta_len, 0) != 0)
        return -1;
    res->meta_len = pe->meta_len;
    if (pe->doc != NO_DOC && answer_doc(d, pe->doc, res) != 0)
        return -1;
    return 1;
}

enum dedup_code filter_decide_lookup(struct filter_decide *d, const struct filter_decide_page *p,
                                     struct filter_decide_result *res, int *found)
{
    result_reset(res);
    pthread_rwlock_rdlock(&d->rw);
    int k = known(d, p, res);
    pthread_rwlock_unlock(&d->rw);
    *found = k > 0;
    if (k < 0)
        res->code = DEDUP_ENOMEM;
    return res->code;
}

size_t filter_decide_mark(void *userdata, const char *host, size_t host_len, const uint64_t *blocks,
                          const uint32_t *n_tokens, size_t n, unsigned char *is_template)
{
    struct filter_decide *d = userdata;
    pthread_rwlock_rdlock(&d->rw);
    size_t m = dedup_templates_mark(d->templates, host, host_len, blocks, n_tokens, n, is_template);
    pthread_rwlock_unlock(&d->rw);
    return m;
}

/* ---- adding ---- */

static enum dedup_code learn(struct filter_decide *d, const struct filter_decide_page *p)
{
    if (!d->templates || !p->n_blocks)
        return DEDUP_OK;
    return dedup_templates_add_doc(d->templates, p->host ? p->host : "", p->host_len, p->doc_hash,
                                   p->blocks, p->n_blocks, NULL);
}

/* Room to count p's template blocks after the add: DEDUP_ENOMEM, or DEDUP_OK (also for an
 * invalid host key, which learn() then reports in template_code without counting). */
static enum dedup_code learn_reserve(struct filter_decide *d, const struct filter_decide_page *p)
{
    if (!d->templates || !p->n_blocks)
        return DEDUP_OK;
    enum dedup_code c =
        dedup_templates_reserve(d->templates, p->host ? p->host : "", p->host_len, p->n_blocks);
    return c == DEDUP_ENOMEM ? c : DEDUP_OK;
}

/*
 * Adds a fingerprinted page: room first (maps, the template count, the reserve hook), so
 * that after dedup_index_add() only remembering the key can fail (a best-effort map:
 * stored says); the blocks are then counted without allocating. Out of memory before the
 * add leaves the index, the maps and the template table as they were. Under the write
 * lock.
 */
static enum dedup_code add_locked(struct filter_decide *d, const struct filter_decide_page *p,
                                  uint32_t *doc, enum filter_decide_stored *stored,
                                  enum dedup_code *template_code, int *hook_code)
{
    *stored = FILTER_STORED_NONE;
    *template_code = DEDUP_OK;
    if (d->o.by_id && id_reserve(d) != 0)
        return DEDUP_ENOMEM;
    if (learn_reserve(d, p) != DEDUP_OK)
        return DEDUP_ENOMEM;
    if (d->o.hooks.reserve) {
        int h = d->o.hooks.reserve(d->o.hooks.userdata, ix_count(d) + 1, p);
        if (h) {
            *hook_code = h;
            return DEDUP_ENOMEM;
        }
    }
    enum dedup_code c = d->o.lsh ? dedup_lsh_add(d->o.lsh, p->sig, p->id, p->id_len, doc)
                                 : dedup_index_add(d->o.index, p->fp, p->id, p->id_len, doc);
    if (c != DEDUP_OK)
        return c;
    if (d->o.by_id)
        id_put(d, p->id, p->id_len, *doc);
    if (p->key) {
        int64_t e = payload_find(d, p->key, p->key_len);
        if (e < 0)
            *stored = payload_put(d, p->key, p->key_len, *doc, p->meta, p->meta_len);
        else if (d->ent[e].doc != NO_DOC && is_dead(d, d->ent[e].doc))
            *stored = payload_revive(&d->ent[e], *doc, p->meta, p->meta_len);
    }
    *template_code = learn(d, p);
    return DEDUP_OK;
}

/*
 * A page decided NEAR with LEARN_NEAR: its blocks counted when its host is young (fewer
 * than DEDUP_TEMPLATE_YOUNG_DOCS documents counted) and it is not an exact copy of a
 * document counted (the table's memory of whole texts); room first, then the learning
 * hook (a journal record), then the count, which cannot run out of memory. 0 (res->learned
 * says whether it counted, res->template_code why not), or -1 when the hook failed.
 * Under the write lock.
 */
static int learn_near(struct filter_decide *d, const struct filter_decide_page *p,
                      struct filter_decide_result *res)
{
    const char *host = p->host ? p->host : "";
    if (!d->templates || !p->n_blocks || !(p->flags & FILTER_DECIDE_LEARN_NEAR) ||
        (p->flags & FILTER_DECIDE_NO_ADD) ||
        dedup_templates_docs(d->templates, host, p->host_len) >= DEDUP_TEMPLATE_YOUNG_DOCS ||
        !dedup_templates_would_count(d->templates, host, p->host_len, p->doc_hash))
        return 0;
    enum dedup_code c = dedup_templates_reserve(d->templates, host, p->host_len, p->n_blocks + 1);
    if (c != DEDUP_OK) {
        res->template_code = c;
        return 0;
    }
    if (d->o.hooks.learning) {
        int h = d->o.hooks.learning(d->o.hooks.userdata, p);
        if (h) {
            res->hook_code = h;
            return -1;
        }
    }
    int counted = 0;
    res->template_code = dedup_templates_add_near(d->templates, host, p->host_len, p->doc_hash,
                                                  p->blocks, p->n_blocks, &counted);
    res->learned = counted;
    return 0;
}

enum dedup_code filter_decide_learn(struct filter_decide *d, const struct filter_decide_page *p)
{
    enum dedup_code c = DEDUP_OK;
    pthread_rwlock_wrlock(&d->rw);
    if (d->templates && p->n_blocks)
        c = dedup_templates_add_near(d->templates, p->host ? p->host : "", p->host_len, p->doc_hash,
                                     p->blocks, p->n_blocks, NULL);
    pthread_rwlock_unlock(&d->rw);
    return c;
}

enum dedup_code filter_decide_add(struct filter_decide *d, const struct filter_decide_page *p,
                                  uint32_t *doc, enum dedup_code *template_code)
{
    enum filter_decide_stored stored;
    int hook = 0;
    uint32_t dd = NO_DOC;
    pthread_rwlock_wrlock(&d->rw);
    enum dedup_code c = add_locked(d, p, &dd, &stored, template_code, &hook);
    pthread_rwlock_unlock(&d->rw);
    if (doc)
        *doc = dd;
    return c;
}

/* The nearest live document within k: the index's nearest, or with deleted documents the
 * first live one of every match (deletions are rare: the full query only then). */
static enum dedup_code nearest_live(struct filter_decide *d, uint64_t fp, uint32_t *doc,
                                    unsigned *dist, int *found)
{
    if (!d->n_dead)
        return dedup_index_nearest(d->o.index, fp, d->o.k, doc, dist, found);
    *found = 0;
    enum dedup_code c = dedup_index_query(d->o.index, fp, d->o.k, &d->q);
    if (c != DEDUP_OK)
        return c;
    for (size_t i = 0; i < d->q.n; i++)
        if (!is_dead(d, d->q.v[i].doc)) {
            *doc = d->q.v[i].doc;
            *dist = d->q.v[i].distance;
            *found = 1;
            break;
        }
    return DEDUP_OK;
}

/* The same with the MinHash method: the most similar live document whose estimate is >=
 * the threshold (only the first when nothing was deleted). */
static enum dedup_code similar_live(struct filter_decide *d, const uint32_t *sig, uint32_t *doc,
                                    double *jaccard, int *found)
{
    *found = 0;
    enum dedup_code c =
        dedup_lsh_query(d->o.lsh, sig, d->o.threshold, d->n_dead ? 0 : 1, &d->lq, NULL);
    if (c != DEDUP_OK)
        return c;
    for (size_t i = 0; i < d->lq.n; i++)
        if (!is_dead(d, d->lq.v[i].doc)) {
            *doc = d->lq.v[i].doc;
            *jaccard = d->lq.v[i].jaccard;
            *found = 1;
            break;
        }
    return DEDUP_OK;
}

/*
 * HOW IT WORKS (the decision): everything below runs under the write lock, so a page
 * decided new is in the index before the next decision looks: two near-duplicates
 * decided at once serialise here and the second finds the first. Callers that can afford
 * it ask filter_decide_lookup() first (read lock, no fingerprint needed: `simcrawl dedup`
 * and the library skip the pipeline for a payload already known); the lookup is repeated
 * here because another thread may have added the page in between. The fingerprint is
 * computed outside any lock with the template table as filter_decide_mark() saw it.
 */
int filter_decide_page(struct filter_decide *d, const struct filter_decide_page *p,
                       struct filter_decide_result *res)
{
    int rc = 0;
    result_reset(res);
    pthread_rwlock_wrlock(&d->rw);
    if (d->o.hooks.start) {
        int h = d->o.hooks.start(d->o.hooks.userdata);
        if (h) {
            res->hook_code = h;
            goto fail;
        }
    }
    if (p->flags & FILTER_DECIDE_NOINDEX) {
        res->verdict = FILTER_VERDICT_NOINDEX;
        goto done;
    }
    int k = known(d, p, res);
    if (k < 0) {
        res->code = DEDUP_ENOMEM;
        goto fail;
    }
    if (k == 0 && !p->has_fp) {
        res->verdict = FILTER_VERDICT_UNFINGERPRINTED;
        if (p->key && (p->flags & FILTER_DECIDE_REMEMBER_UNFP))
            res->stored = payload_put(d, p->key, p->key_len, NO_DOC, p->meta, p->meta_len);
    }
    if (!p->has_fp) {
        /* a page with too little text is never a duplicate of anything by its text */
        if ((p->too_little_text && (p->flags & FILTER_DECIDE_LEARN_SHORT)) ||
            (k == 0 && (p->flags & FILTER_DECIDE_LEARN_UNFP)))
            res->template_code = learn(d, p);
        goto done;
    }
    if (k > 0)
        goto done;
    if (!(p->flags & FILTER_DECIDE_KEEP)) {
        uint32_t doc;
        unsigned dist = 0;
        double jac = 0;
        int found;
        enum dedup_code c = d->o.lsh ? similar_live(d, p->sig, &doc, &jac, &found)
                                     : nearest_live(d, p->fp, &doc, &dist, &found);
        if (c != DEDUP_OK) {
            res->code = c;
            goto fail;
        }
        if (found) {
            res->verdict = FILTER_VERDICT_NEAR;
            res->distance = dist;
            res->jaccard = jac;
            if (answer_doc(d, doc, res) != 0) {
                res->code = DEDUP_ENOMEM;
                goto fail;
            }
            if (learn_near(d, p, res) != 0)
                goto fail;
            goto done;
        }
    }
    res->verdict = FILTER_VERDICT_NEW;
    if (p->flags & FILTER_DECIDE_NO_ADD)
        goto done;
    uint32_t doc = NO_DOC;
    res->add_code = add_locked(d, p, &doc, &res->stored, &res->template_code, &res->hook_code);
    if (res->hook_code)
        goto fail;
    if (res->add_code != DEDUP_OK)
        goto done;
    res->doc = doc;
    res->added = 1;
    if (d->o.hooks.added) {
        int h = d->o.hooks.added(d->o.hooks.userdata, doc, p);
        if (h) {
            res->hook_code = h;
            goto fail;
        }
    }
done:
    pthread_rwlock_unlock(&d->rw);
    return rc;
fail:
    rc = -1;
    goto done;
}

enum filter_decide_stored filter_decide_remember(struct filter_decide *d, const void *key,
                                                 size_t key_len, uint32_t doc, const void *meta,
                                                 size_t meta_len)
{
    enum filter_decide_stored s = FILTER_STORED_NONE;
    pthread_rwlock_wrlock(&d->rw);
    if (payload_find(d, key, key_len) < 0)
        s = payload_put(d, key, key_len, doc, meta, meta_len);
    pthread_rwlock_unlock(&d->rw);
    return s;
}

enum dedup_code filter_decide_set_meta(struct filter_decide *d, const void *key, size_t key_len,
                                       const void *meta, size_t meta_len)
{
    enum dedup_code c = DEDUP_EINVAL;
    pthread_rwlock_wrlock(&d->rw);
    int64_t e = payload_find(d, key, key_len);
    if (e >= 0) {
        struct pentry *pe = &d->ent[e];
        void *n = meta_len ? malloc(meta_len) : NULL;
        if (meta_len && !n) {
            c = DEDUP_ENOMEM;
        } else {
            if (meta_len)
                memcpy(n, meta, meta_len);
            free(pe->meta);
            pe->meta = n;
            pe->meta_len = meta_len;
            c = DEDUP_OK;
        }
    }
    pthread_rwlock_unlock(&d->rw);
    return c;
}

void filter_decide_foreach(struct filter_decide *d,
                           void (*fn)(void *userdata, const void *key, size_t key_len, uint32_t doc,
                                      const void *meta, size_t meta_len),
                           void *userdata)
{
    pthread_rwlock_rdlock(&d->rw);
    for (size_t i = 0; i < d->n_ent; i++)
        fn(userdata, d->ent[i].key, d->ent[i].key_len, d->ent[i].doc, d->ent[i].meta,
           d->ent[i].meta_len);
    pthread_rwlock_unlock(&d->rw);
}

size_t filter_decide_payload_count(struct filter_decide *d)
{
    pthread_rwlock_rdlock(&d->rw);
    size_t n = d->n_ent;
    pthread_rwlock_unlock(&d->rw);
    return n;
}

/* ---- deletion ---- */

int filter_decide_delete(struct filter_decide *d, const char *id, size_t id_len, int hooks,
                         struct filter_decide_result *res, int *deleted)
{
    int rc = 0;
    *deleted = 0;
    result_reset(res);
    if (!d->o.by_id) {
        res->code = DEDUP_EINVAL;
        return -1;
    }
    pthread_rwlock_wrlock(&d->rw);
    if (hooks && d->o.hooks.start) {
        int h = d->o.hooks.start(d->o.hooks.userdata);
        if (h) {
            res->hook_code = h;
            goto fail;
        }
    }
    int64_t found = id_find(d, id, id_len);
    if (found < 0)
        goto done;
    uint32_t doc = (uint32_t)found;
    /* room for the mark first, so that after the hook (the journal record) nothing fails */
    if (dead_reserve(d, doc) != 0) {
        res->code = DEDUP_ENOMEM;
        goto fail;
    }
    if (hooks && d->o.hooks.deleting) {
        int h = d->o.hooks.deleting(d->o.hooks.userdata, doc, id, id_len);
        if (h) {
            res->hook_code = h;
            goto fail;
        }
    }
    id_remove(d, doc);
    dead_mark(d, doc);
    res->doc = doc;
    res->has_doc = 1;
    res->fp = ix_fp(d, doc);
    *deleted = 1;
done:
    pthread_rwlock_unlock(&d->rw);
    return rc;
fail:
    rc = -1;
    goto done;
}

enum dedup_code filter_decide_neighbors(struct filter_decide *d, uint64_t fp, unsigned k,
                                        size_t max,
                                        void (*fn)(void *userdata, const char *id, size_t id_len,
                                                   uint64_t fp, unsigned distance),
                                        void *userdata)
{
    struct dedup_matches m = {0};
    if (d->o.lsh)
        return DEDUP_EINVAL;
    pthread_rwlock_wrlock(&d->rw);
    enum dedup_code c = dedup_index_query(d->o.index, fp, k, &m);
    size_t given = 0;
    for (size_t i = 0; c == DEDUP_OK && i < m.n && (!max || given < max); i++) {
        uint32_t doc = m.v[i].doc;
        if (is_dead(d, doc))
            continue;
        size_t len;
        const char *id = ix_id(d, doc, &len);
        fn(userdata, id, len, ix_fp(d, doc), m.v[i].distance);
        given++;
    }
    pthread_rwlock_unlock(&d->rw);
    dedup_matches_release(&m);
    return c;
}

enum dedup_code filter_decide_neighbors_sig(
    struct filter_decide *d, const uint32_t *sig, double threshold, size_t max,
    void (*fn)(void *userdata, const char *id, size_t id_len, double jaccard), void *userdata)
{
    if (!d->o.lsh)
        return DEDUP_EINVAL;
    struct dedup_lsh_matches m = {0};
    pthread_rwlock_wrlock(&d->rw);
    enum dedup_code c = dedup_lsh_query(d->o.lsh, sig, threshold, 0, &m, NULL);
    size_t given = 0;
    for (size_t i = 0; c == DEDUP_OK && i < m.n && (!max || given < max); i++) {
        uint32_t doc = m.v[i].doc;
        if (is_dead(d, doc))
            continue;
        size_t len;
        const char *id = ix_id(d, doc, &len);
        fn(userdata, id, len, m.v[i].jaccard);
        given++;
    }
    pthread_rwlock_unlock(&d->rw);
    dedup_lsh_matches_release(&m);
    return c;
}

void filter_decide_probe_lines(struct filter_decide *d, struct dedup_lines_info *out)
{
    memset(out, 0, sizeof *out);
    if (d->o.lsh)
        return;
    pthread_rwlock_rdlock(&d->rw);
    dedup_index_probe_lines(d->o.index, out);
    pthread_rwlock_unlock(&d->rw);
}

uint32_t filter_decide_deleted_count(struct filter_decide *d)
{
    pthread_rwlock_rdlock(&d->rw);
    uint32_t n = d->n_dead;
    pthread_rwlock_unlock(&d->rw);
    return n;
}

/* The id slots of the live documents of the index d still uses, under their numbers after
 * the rebuild (map), for a table of cap slots (a power of two). */
static void ids_fill(uint32_t *slot, size_t cap, const struct filter_decide *d, const uint32_t *map,
                     uint32_t n)
{
    for (uint32_t doc = 0; doc < n; doc++) {
        if (map[doc] == NO_DOC)
            continue;
        size_t l;
        const char *s = ix_id(d, doc, &l);
        size_t j = (size_t)key_hash(s, l) & (cap - 1);
        while (slot[j])
            j = (j + 1) & (cap - 1);
        slot[j] = map[doc] + 1;
    }
}

/* The live documents of old, in order, into a new index of the same design; map[old doc]
 * is the new number (NO_DOC when deleted). */
static enum dedup_code copy_live(const struct filter_decide *d, struct dedup_index *old,
                                 uint32_t *map, struct dedup_index **out)
{
    struct dedup_index *ni = NULL;
    enum dedup_code c = dedup_index_new(dedup_index_design(old), &ni);
    if (c == DEDUP_OK) /* the caller's choice of memory for speed, kept */
        dedup_index_copy_probe_lines(ni, old);
    uint32_t n = dedup_index_doc_count(old);
    for (uint32_t doc = 0; c == DEDUP_OK && doc < n; doc++) {
        map[doc] = NO_DOC;
        if (is_dead(d, doc))
            continue;
        size_t l;
        const char *id = dedup_index_id(old, doc, &l);
        c = dedup_index_add(ni, dedup_index_fingerprint(old, doc), id, l, &map[doc]);
    }
    if (c != DEDUP_OK) {
        dedup_index_free(ni);
        return c;
    }
    *out = ni;
    return DEDUP_OK;
}

/* The same for an LSH index: a new one of the same parameters. */
static enum dedup_code copy_live_lsh(const struct filter_decide *d, struct dedup_lsh *old,
                                     uint32_t *map, struct dedup_lsh **out)
{
    struct dedup_lsh *nl = NULL;
    enum dedup_code c = dedup_lsh_new(dedup_lsh_get_params(old), &nl);
    uint32_t n = dedup_lsh_doc_count(old);
    for (uint32_t doc = 0; c == DEDUP_OK && doc < n; doc++) {
        map[doc] = NO_DOC;
        if (is_dead(d, doc))
            continue;
        size_t l;
        const char *id = dedup_lsh_id(old, doc, &l);
        c = dedup_lsh_add(nl, dedup_lsh_signature(old, doc), id, l, &map[doc]);
    }
    if (c != DEDUP_OK) {
        dedup_lsh_free(nl);
        return c;
    }
    *out = nl;
    return DEDUP_OK;
}

/*
 * HOW IT WORKS (rebuild): everything that can fail is made first (the new index, the new
 * id slots, the new payload slots); then the switch, which cannot fail: the payload
 * entries of deleted documents are freed and the others renumbered in place (their order
 * kept), the slots swapped in, the marks cleared; the caller then hands the template table
 * over and points d at the new index. map covers the n documents of the old index.
 */
static enum dedup_code rebuild_maps(struct filter_decide *d, const uint32_t *map, uint32_t n,
                                    uint32_t live)
{
    uint32_t *islot = NULL, *pslot = NULL;
    if (d->islot_cap) {
        islot = calloc(d->islot_cap, sizeof *islot);
        if (!islot)
            return DEDUP_ENOMEM;
        ids_fill(islot, d->islot_cap, d, map, n);
    }
    if (d->pslot_cap && !(pslot = calloc(d->pslot_cap, sizeof *pslot))) {
        free(islot);
        return DEDUP_ENOMEM;
    }
    size_t kept = 0;
    for (size_t i = 0; i < d->n_ent; i++) {
        struct pentry e = d->ent[i];
        if (e.doc != NO_DOC && map[e.doc] == NO_DOC) {
            free(e.key);
            free(e.meta);
            continue;
        }
        if (e.doc != NO_DOC)
            e.doc = map[e.doc];
        d->ent[kept] = e;
        size_t j = (size_t)e.hash & (d->pslot_cap - 1);
        while (pslot[j])
            j = (j + 1) & (d->pslot_cap - 1);
        pslot[j] = (uint32_t)++kept;
    }
    d->n_ent = kept;
    free(d->pslot);
    d->pslot = pslot;
    free(d->islot);
    d->islot = islot;
    d->n_ids = live;
    memset(d->dead, 0, d->dead_cap);
    d->n_dead = 0;
    return DEDUP_OK;
}

enum dedup_code filter_decide_rebuild_locked(struct filter_decide *d,
                                             struct dedup_index **new_index,
                                             struct dedup_index **old_index, uint32_t **old_to_new)
{
    *new_index = *old_index = NULL;
    *old_to_new = NULL;
    if (!d->n_dead || d->o.lsh)
        return d->o.lsh ? DEDUP_EINVAL : DEDUP_OK;
    struct dedup_index *old = d->o.index, *ni = NULL;
    uint32_t n = dedup_index_doc_count(old);
    uint32_t *map = malloc((size_t)(n ? n : 1) * sizeof *map);
    if (!map)
        return DEDUP_ENOMEM;
    enum dedup_code c = copy_live(d, old, map, &ni);
    if (c == DEDUP_OK)
        c = rebuild_maps(d, map, n, dedup_index_doc_count(ni));
    if (c != DEDUP_OK) {
        dedup_index_free(ni);
        free(map);
        return c;
    }
    dedup_index_set_templates(ni, dedup_index_take_templates(old));
    dedup_index_set_pair_generation(ni, dedup_index_pair_generation(old));
    d->o.index = ni;
    if (d->templates)
        d->templates = dedup_index_templates(ni); /* the same table, now ni's */
    *new_index = ni;
    *old_index = old;
    *old_to_new = map;
    return DEDUP_OK;
}

enum dedup_code filter_decide_rebuild_lsh_locked(struct filter_decide *d,
                                                 struct dedup_lsh **new_lsh,
                                                 struct dedup_lsh **old_lsh, uint32_t **old_to_new)
{
    *new_lsh = *old_lsh = NULL;
    *old_to_new = NULL;
    if (!d->n_dead || !d->o.lsh)
        return d->o.lsh ? DEDUP_OK : DEDUP_EINVAL;
    struct dedup_lsh *old = d->o.lsh, *nl = NULL;
    uint32_t n = dedup_lsh_doc_count(old);
    uint32_t *map = malloc((size_t)(n ? n : 1) * sizeof *map);
    if (!map)
        return DEDUP_ENOMEM;
    enum dedup_code c = copy_live_lsh(d, old, map, &nl);
    if (c == DEDUP_OK)
        c = rebuild_maps(d, map, n, dedup_lsh_doc_count(nl));
    if (c != DEDUP_OK) {
        dedup_lsh_free(nl);
        free(map);
        return c;
    }
    dedup_lsh_set_templates(nl, dedup_lsh_take_templates(old));
    d->o.lsh = nl;
    if (d->templates)
        d->templates = dedup_lsh_templates(nl); /* the same table, now nl's */
    *new_lsh = nl;
    *old_lsh = old;
    *old_to_new = map;
    return DEDUP_OK;
}
