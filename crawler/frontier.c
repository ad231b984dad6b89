/*
 * The frontier: the URLs waiting to be fetched, one queue per host (origin
 * "scheme://host[:port]"), and the politeness rules that say when a host may be asked
 * again: at most per_host transfers at once, and `delay` seconds between the end of one
 * request and the start of the next (and between two starts), raised per host by robots
 * Crawl-delay up to max_delay. Within a host, the item of highest priority goes first
 * (ties: first queued first), so priority = -depth is breadth-first and priority =
 * relevance is a focused (best-first) crawl.
 *
 * HOW IT WORKS. A host with queued items and a free connection slot lives in one of two
 * heaps: `waiting` (keyed by next_allowed, earliest first) while its delay runs, `ready`
 * (keyed by the priority of its best item, then by how long it has been ready) once it
 * may be asked. crawl_frontier_pop() first moves every waiting host whose time has come
 * to ready, then serves the top of ready. A host that is busy (per_host transfers in
 * flight), held (robots.txt pending) or empty is in neither heap and costs nothing. So a
 * pop is O(log hosts + log items of the host), no host waits for another host's delay,
 * and every host with work gets its turn as soon as its own delay allows
 * (Heritrix's and Mercator's per-host queues with a time-ordered queue of hosts).
 */
#include "crawler/crawl.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { IN_NONE = 0, IN_WAITING, IN_READY };

struct crawl_host {
    char *origin;
    struct crawl_item *items; /* max-heap by (priority, -seq) */
    size_t n, cap;
    unsigned active;
    unsigned held;
    double next_allowed;
    double prev_next_allowed; /* before the last pop: crawl_frontier_cancel() restores it */
    double delay;
    double ready_since;
    int where;  /* IN_NONE, IN_WAITING, IN_READY */
    size_t pos; /* index in that heap */
    void *userdata;
};

struct heap {
    struct crawl_host **v;
    size_t n, cap;
    int which;
};

struct crawl_frontier {
    struct crawl_frontier_opts opts;
    struct crawl_host **table; /* open addressing by origin hash; NULL = empty */
    size_t table_mask;
    size_t n_hosts;
    struct heap waiting, ready;
    size_t n_items;
    uint64_t seq;
};

/* ---- referrers, items ---- */

struct crawl_ref *crawl_ref_new(const char *url)
{
    size_t n = strlen(url);
    struct crawl_ref *r = malloc(sizeof *r + n + 1);
    if (!r)
        return NULL;
    r->refs = 1;
    r->id = 0;
    memcpy(r->url, url, n + 1);
    return r;
}

struct crawl_ref *crawl_ref_get(struct crawl_ref *r)
{
    if (r)
        r->refs++;
    return r;
}

void crawl_ref_put(struct crawl_ref *r)
{
    if (r && --r->refs == 0)
        free(r);
}

void crawl_item_release(struct crawl_item *item)
{
    free(item->url);
    item->url = NULL;
    crawl_ref_put(item->referrer);
    item->referrer = NULL;
}

/* ---- items within a host ---- */

static int item_before(const struct crawl_item *a, const struct crawl_item *b)
{
    if (a->priority != b->priority)
        return a->priority > b->priority;
    return a->seq < b->seq;
}

static void items_up(struct crawl_host *h, size_t i)
{
    struct crawl_item it = h->items[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!item_before(&it, &h->items[p]))
            break;
        h->items[i] = h->items[p];
        i = p;
    }
    h->items[i] = it;
}

static void items_down(struct crawl_host *h, size_t i)
{
    struct crawl_item it = h->items[i];
    for (;;) {
        size_t l = 2 * i + 1, best = l;
        if (l >= h->n)
            break;
        if (l + 1 < h->n && item_before(&h->items[l + 1], &h->items[l]))
            best = l + 1;
        if (!item_before(&h->items[best], &it))
            break;
        h->items[i] = h->items[best];
        i = best;
    }
    h->items[i] = it;
}

/* ---- the heaps of hosts ---- */

static int host_before(const struct heap *hp, const struct crawl_host *a,
                       const struct crawl_host *b)
{
    if (hp->which == IN_WAITING)
        return a->next_allowed < b->next_allowed;
    float pa = a->items[0].priority, pb = b->items[0].priority;
    if (pa != pb)
        return pa > pb;
    return a->ready_since < b->ready_since;
}

static void heap_set(struct heap *hp, size_t i, struct crawl_host *h)
{
    hp->v[i] = h;
    h->pos = i;
}

static void heap_up(struct heap *hp, size_t i)
{
    struct crawl_host *h = hp->v[i];
    while (i > 0) {
        size_t p = (i - 1) / 2;
        if (!host_before(hp, h, hp->v[p]))
            break;
        heap_set(hp, i, hp->v[p]);
        i = p;
    }
    heap_set(hp, i, h);
}

static void heap_down(struct heap *hp, size_t i)
{
    struct crawl_host *h = hp->v[i];
    for (;;) {
        size_t l = 2 * i + 1, best = l;
        if (l >= hp->n)
            break;
        if (l + 1 < hp->n && host_before(hp, hp->v[l + 1], hp->v[l]))
            best = l + 1;
        if (!host_before(hp, hp->v[best], h))
            break;
        heap_set(hp, i, hp->v[best]);
        i = best;
    }
    heap_set(hp, i, h);
}

/* The heaps never hold more than n_hosts entries; their arrays grow with the host table,
 * so inserting never fails. */
static void heap_insert(struct heap *hp, struct crawl_host *h)
{
    h->where = hp->which;
    heap_set(hp, hp->n++, h);
    heap_up(hp, hp->n - 1);
}

static void heap_remove(struct heap *hp, struct crawl_host *h)
{
    size_t i = h->pos;
    h->where = IN_NONE;
    hp->n--;
    if (i == hp->n)
        return;
    heap_set(hp, i, hp->v[hp->n]);
    heap_up(hp, i);
    heap_down(hp, hp->v[i]->pos);
}

/* Puts h in the heap its state calls for (or none), after any change of its state. */
static void place(struct crawl_frontier *f, struct crawl_host *h, double now)
{
    int want = IN_NONE;
    if (h->n > 0 && !h->held && h->active < f->opts.per_host)
        want = h->next_allowed <= now ? IN_READY : IN_WAITING;
    if (h->where == IN_WAITING)
        heap_remove(&f->waiting, h);
    else if (h->where == IN_READY)
        heap_remove(&f->ready, h);
    if (want == IN_READY) {
        h->ready_since = now;
        heap_insert(&f->ready, h);
    } else if (want == IN_WAITING) {
        heap_insert(&f->waiting, h);
    }
}

/* ---- the host table ---- */

static uint64_t origin_hash(const char *s, size_t n)
{
    return crawl_hash64(s, n);
}

static struct crawl_host **table_slot(struct crawl_frontier *f, const char *origin, size_t n)
{
    size_t j = (size_t)origin_hash(origin, n) & f->table_mask;
    while (f->table[j]) {
        const char *o = f->table[j]->origin;
        if (strncmp(o, origin, n) == 0 && o[n] == '\0')
            break;
        j = (j + 1) & f->table_mask;
    }
    return &f->table[j];
}

static enum crawl_code table_grow(struct crawl_frontier *f)
{
    size_t cap = (f->table_mask + 1) * 2;
    struct crawl_host **t = calloc(cap, sizeof *t);
    struct crawl_host **w = realloc(f->waiting.v, cap / 2 * sizeof *w);
    if (w)
        f->waiting.v = w;
    struct crawl_host **r = realloc(f->ready.v, cap / 2 * sizeof *r);
    if (r)
        f->ready.v = r;
    if (!t || !w || !r) {
        free(t);
        return CRAWL_ENOMEM;
    }
    f->waiting.cap = f->ready.cap = cap / 2;
    struct crawl_host **old = f->table;
    size_t old_cap = f->table_mask + 1;
    f->table = t;
    f->table_mask = cap - 1;
    for (size_t i = 0; i < old_cap; i++)
        if (old[i])
            *table_slot(f, old[i]->origin, strlen(old[i]->origin)) = old[i];
    free(old);
    return CRAWL_OK;
}

enum crawl_code crawl_frontier_new(const struct crawl_frontier_opts *opts,
                                   struct crawl_frontier **out)
{
    *out = NULL;
    struct crawl_frontier *f = calloc(1, sizeof *f);
    if (!f)
        return CRAWL_ENOMEM;
    f->opts = *opts;
    if (f->opts.per_host == 0)
        f->opts.per_host = 1;
    if (!(f->opts.delay >= 0))
        f->opts.delay = 0;
    if (!(f->opts.max_delay >= f->opts.delay))
        f->opts.max_delay =
            f->opts.delay > CRAWL_DEFAULT_MAX_DELAY ? f->opts.delay : CRAWL_DEFAULT_MAX_DELAY;
    if (f->opts.max_items == 0)
        f->opts.max_items = CRAWL_FRONTIER_DEFAULT_MAX_ITEMS;
    f->waiting.which = IN_WAITING;
    f->ready.which = IN_READY;
    f->table = calloc(64, sizeof *f->table);
    f->waiting.v = calloc(32, sizeof *f->waiting.v);
    f->ready.v = calloc(32, sizeof *f->ready.v);
    if (!f->table || !f->waiting.v || !f->ready.v) {
        crawl_frontier_free(f);
        return CRAWL_ENOMEM;
    }
    f->table_mask = 63;
    f->waiting.cap = f->ready.cap = 32;
    *out = f;
    return CRAWL_OK;
}

void crawl_frontier_free(struct crawl_frontier *f)
{
    if (!f)
        return;
    if (f->table) {
        for (size_t i = 0; i <= f->table_mask; i++) {
            struct crawl_host *h = f->table[i];
            if (!h)
                continue;
            for (size_t k = 0; k < h->n; k++)
                crawl_item_release(&h->items[k]);
            free(h->items);
            free(h->origin);
            free(h);
        }
    }
    free(f->table);
    free(f->waiting.v);
    free(f->ready.v);
    free(f);
}

enum crawl_code crawl_frontier_host(struct crawl_frontier *f, const char *origin, size_t origin_len,
                                    struct crawl_host **out)
{
    *out = NULL;
    struct crawl_host **slot = table_slot(f, origin, origin_len);
    if (*slot) {
        *out = *slot;
        return CRAWL_OK;
    }
    if ((f->n_hosts + 1) * 2 > f->table_mask + 1) {
        enum crawl_code rc = table_grow(f);
        if (rc != CRAWL_OK)
            return rc;
        slot = table_slot(f, origin, origin_len);
    }
    struct crawl_host *h = calloc(1, sizeof *h);
    if (!h)
        return CRAWL_ENOMEM;
    h->origin = malloc(origin_len + 1);
    if (!h->origin) {
        free(h);
        return CRAWL_ENOMEM;
    }
    memcpy(h->origin, origin, origin_len);
    h->origin[origin_len] = '\0';
    h->delay = f->opts.delay;
    h->next_allowed = -INFINITY;
    *slot = h;
    f->n_hosts++;
    *out = h;
    return CRAWL_OK;
}

enum crawl_code crawl_frontier_push(struct crawl_frontier *f, struct crawl_host *h, const char *url,
                                    unsigned depth, unsigned hops, float priority,
                                    struct crawl_ref *referrer, int64_t id, double now)
{
    if (f->n_items >= f->opts.max_items)
        return CRAWL_ETOOLARGE;
    if (h->n == h->cap) {
        size_t cap = h->cap ? h->cap * 2 : 8;
        struct crawl_item *v = realloc(h->items, cap * sizeof *v);
        if (!v)
            return CRAWL_ENOMEM;
        h->items = v;
        h->cap = cap;
    }
    char *copy = strdup(url);
    if (!copy)
        return CRAWL_ENOMEM;
    struct crawl_item *it = &h->items[h->n++];
    it->url = copy;
    it->referrer = crawl_ref_get(referrer);
    it->depth = depth;
    it->hops = hops;
    it->priority = isnan(priority) ? 0.0f : priority;
    it->seq = f->seq++;
    it->id = id;
    items_up(h, h->n - 1);
    f->n_items++;
    if (h->where == IN_READY && h->pos < f->ready.n && f->ready.v[h->pos] == h)
        heap_up(&f->ready, h->pos); /* its best item may have improved */
    else if (h->where == IN_NONE)
        place(f, h, now);
    return CRAWL_OK;
}

static int prio_desc(const void *a, const void *b)
{
    float x = *(const float *)a, y = *(const float *)b;
    return (x < y) - (x > y);
}

size_t crawl_frontier_trim(struct crawl_frontier *f, struct crawl_host *h, size_t keep, float *cut)
{
    if (h->n <= keep)
        return 0;
    /* the (keep+1)-th best priority: sort a copy (h->n is about twice keep, once in keep
     * pushes); without the memory for it, drop nothing (the window only stays larger) */
    float *p = malloc(h->n * sizeof *p);
    if (!p)
        return 0;
    for (size_t i = 0; i < h->n; i++)
        p[i] = h->items[i].priority;
    qsort(p, h->n, sizeof *p, prio_desc);
    float c = p[keep];
    free(p);
    size_t j = 0, dropped = 0;
    for (size_t i = 0; i < h->n; i++) {
        if (h->items[i].priority <= c) {
            crawl_item_release(&h->items[i]);
            dropped++;
        } else {
            h->items[j++] = h->items[i];
        }
    }
    h->n = j;
    f->n_items -= dropped;
    for (size_t i = h->n / 2; i-- > 0;)
        items_down(h, i);
    /* the best URL stays when any does, and with it h's place in the heaps; with none
     * left h has nothing to offer until the next push */
    if (h->n == 0 && h->where != IN_NONE)
        heap_remove(h->where == IN_READY ? &f->ready : &f->waiting, h);
    *cut = c;
    return dropped;
}

int crawl_frontier_pop(struct crawl_frontier *f, double now, struct crawl_item *item,
                       struct crawl_host **host, double *wake)
{
    while (f->waiting.n > 0 && f->waiting.v[0]->next_allowed <= now) {
        struct crawl_host *h = f->waiting.v[0];
        heap_remove(&f->waiting, h);
        h->ready_since = h->next_allowed;
        heap_insert(&f->ready, h);
    }
    if (f->ready.n == 0) {
        *wake = f->waiting.n > 0 ? f->waiting.v[0]->next_allowed : INFINITY;
        return 0;
    }
    struct crawl_host *h = f->ready.v[0];
    *item = h->items[0];
    h->items[0] = h->items[--h->n];
    if (h->n > 0)
        items_down(h, 0);
    f->n_items--;
    h->active++;
    h->prev_next_allowed = h->next_allowed;
    double next = now + h->delay;
    if (next > h->next_allowed)
        h->next_allowed = next;
    place(f, h, now);
    *host = h;
    *wake = now;
    return 1;
}

void crawl_frontier_done(struct crawl_frontier *f, struct crawl_host *h, double now)
{
    if (h->active > 0)
        h->active--;
    double next = now + h->delay;
    if (next > h->next_allowed)
        h->next_allowed = next;
    place(f, h, now);
}

void crawl_frontier_cancel(struct crawl_frontier *f, struct crawl_host *h, double now)
{
    if (h->active > 0)
        h->active--;
    h->next_allowed = h->prev_next_allowed;
    place(f, h, now);
}

void crawl_frontier_hold(struct crawl_frontier *f, struct crawl_host *h, int hold, double now)
{
    if (hold)
        h->held++;
    else if (h->held > 0)
        h->held--;
    place(f, h, now);
}

void crawl_frontier_pause(struct crawl_frontier *f, struct crawl_host *h, double not_before,
                          double now)
{
    double next = now + h->delay;
    if (not_before > next)
        next = not_before;
    if (next > h->next_allowed)
        h->next_allowed = next;
    place(f, h, now);
}

double crawl_frontier_set_delay(struct crawl_frontier *f, struct crawl_host *h, double delay,
                                double now)
{
    if (!(delay >= f->opts.delay))
        delay = f->opts.delay;
    if (delay > f->opts.max_delay)
        delay = f->opts.max_delay;
    h->delay = delay;
    place(f, h, now);
    return delay;
}

size_t crawl_frontier_size(const struct crawl_frontier *f)
{
    return f->n_items;
}

size_t crawl_frontier_host_count(const struct crawl_frontier *f)
{
    return f->n_hosts;
}

const char *crawl_host_origin(const struct crawl_host *h)
{
    return h->origin;
}

size_t crawl_host_queued(const struct crawl_host *h)
{
    return h->n;
}

unsigned crawl_host_active(const struct crawl_host *h)
{
    return h->active;
}

void *crawl_host_userdata(const struct crawl_host *h)
{
    return h->userdata;
}

void crawl_host_set_userdata(struct crawl_host *h, void *userdata)
{
    h->userdata = userdata;
}

double crawl_host_next_allowed(const struct crawl_host *h)
{
    return h->next_allowed;
}

double crawl_host_delay(const struct crawl_host *h)
{
    return h->delay;
}
