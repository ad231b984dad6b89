/*
 * Near-duplicate clusters: the connected components of the graph whose edges are the
 * pairs within k (union-find with path halving and union by size over the distinct
 * fingerprints; documents sharing a fingerprint are in one component by construction).
 * Deterministic: documents are visited in order, so each component's member list is in
 * document order and its first member, the earliest added, is the representative;
 * clusters are then ordered largest first, ties by the representative's number.
 */
#include "dedup/dedup_int.h"
#include "dedup/index_int.h"

#include <stdlib.h>
#include <string.h>

struct dedup_clusters {
    size_t n;       /* clusters */
    uint64_t *off;  /* n + 1 offsets into mem */
    uint32_t *mem;  /* members, cluster by cluster */
    uint32_t total; /* documents in all clusters */
};

static uint32_t uf_find(uint32_t *parent, uint32_t x)
{
    while (parent[x] != x) {
        parent[x] = parent[parent[x]];
        x = parent[x];
    }
    return x;
}

struct order {
    uint64_t size;
    uint32_t rep;
    uint32_t cluster;
};

static int order_cmp(const void *x, const void *y)
{
    const struct order *a = x, *b = y;
    if (a->size != b->size)
        return a->size > b->size ? -1 : 1;
    return a->rep < b->rep ? -1 : a->rep > b->rep;
}

/*
 * The clusters of a union-find forest of nnodes nodes, joined by pairs of nodes (a << 32 |
 * b; DEDUP_EINVAL when a node is out of range): size[node] is the number of documents on
 * the node (filled by the caller; overwritten), document d is on node pos[d] (d itself
 * when pos is NULL). Union by size with path halving; the components of two or more
 * documents are the clusters, numbered by their first document, members in document
 * order, then ordered largest first, ties by the representative.
 */
static enum dedup_code components(uint32_t nnodes, uint32_t ndocs, const uint32_t *pos,
                                  uint32_t *size, const uint64_t *pairs, size_t npairs,
                                  struct dedup_clusters **out)
{
    enum dedup_code rc = DEDUP_ENOMEM;
    uint32_t *parent = malloc(((size_t)nnodes + 1) * sizeof *parent);
    uint32_t *cid = malloc(((size_t)nnodes + 1) * sizeof *cid);
    uint64_t *off = NULL, *off2 = NULL;
    uint32_t *mem = NULL, *mem2 = NULL;
    struct order *ord = NULL;
    struct dedup_clusters *c = calloc(1, sizeof *c);
    *out = NULL;
    if (!parent || !cid || !c)
        goto fail;
    for (uint32_t i = 0; i < nnodes; i++)
        parent[i] = i;
    for (size_t i = 0; i < npairs; i++) {
        uint32_t a = (uint32_t)(pairs[i] >> 32), b = (uint32_t)pairs[i];
        if (a >= nnodes || b >= nnodes) {
            rc = DEDUP_EINVAL;
            goto fail;
        }
        uint32_t x = uf_find(parent, a), y = uf_find(parent, b);
        if (x == y)
            continue;
        if (size[x] < size[y]) {
            uint32_t t = x;
            x = y;
            y = t;
        }
        parent[y] = x;
        size[x] += size[y];
    }
    /* number the clusters (components of 2+ documents) by their first document */
    size_t ncl = 0;
    uint64_t total = 0;
    for (uint32_t i = 0; i < nnodes; i++)
        cid[i] = IX_NONE;
    for (uint32_t d = 0; d < ndocs; d++) {
        uint32_t r = uf_find(parent, pos ? pos[d] : d);
        if (size[r] >= 2 && cid[r] == IX_NONE) {
            cid[r] = (uint32_t)ncl++;
            total += size[r];
        }
    }
    off = calloc(ncl + 1, sizeof *off);
    mem = malloc((total ? total : 1) * sizeof *mem);
    ord = malloc((ncl ? ncl : 1) * sizeof *ord);
    off2 = malloc((ncl + 1) * sizeof *off2);
    mem2 = malloc((total ? total : 1) * sizeof *mem2);
    if (!off || !mem || !ord || !off2 || !mem2)
        goto fail;
    for (uint32_t d = 0; d < ndocs; d++) {
        uint32_t r = uf_find(parent, pos ? pos[d] : d);
        if (cid[r] != IX_NONE)
            off[cid[r] + 1]++;
    }
    for (size_t i = 0; i < ncl; i++)
        off[i + 1] += off[i];
    uint64_t *fill = off2; /* reuse as fill cursor */
    memcpy(fill, off, (ncl + 1) * sizeof *off);
    for (uint32_t d = 0; d < ndocs; d++) {
        uint32_t r = uf_find(parent, pos ? pos[d] : d);
        if (cid[r] != IX_NONE)
            mem[fill[cid[r]]++] = d;
    }
    for (size_t i = 0; i < ncl; i++)
        ord[i] = (struct order){off[i + 1] - off[i], mem[off[i]], (uint32_t)i};
    qsort(ord, ncl, sizeof *ord, order_cmp);
    uint64_t o = 0;
    for (size_t i = 0; i < ncl; i++) {
        off2[i] = o;
        memcpy(mem2 + o, mem + off[ord[i].cluster], ord[i].size * sizeof *mem2);
        o += ord[i].size;
    }
    off2[ncl] = o;
    c->n = ncl;
    c->off = off2;
    c->mem = mem2;
    c->total = (uint32_t)total;
    off2 = NULL;
    mem2 = NULL;
    *out = c;
    c = NULL;
    rc = DEDUP_OK;
fail:
    free(parent);
    free(cid);
    free(off);
    free(mem);
    free(ord);
    free(off2);
    free(mem2);
    free(c);
    return rc;
}

enum dedup_code dedup_index_clusters(struct dedup_index *idx, unsigned k, unsigned threads,
                                     struct dedup_clusters **out)
{
    uint64_t *pairs = NULL;
    size_t npairs = 0;
    *out = NULL;
    enum dedup_code rc = ix_distinct_pairs(idx, k, threads, &pairs, &npairs);
    ix_scratch_release(idx); /* what the streamed tables left */
    if (rc != DEDUP_OK)
        return rc;
    /* the nodes are the distinct fingerprints, each with its documents */
    uint32_t n = idx->nmain, nd = idx->ndocs;
    uint32_t *size = calloc((size_t)n + 1, sizeof *size);
    uint32_t *pos = ix_doc_positions(idx);
    rc = DEDUP_ENOMEM;
    if (size && pos) {
        for (uint32_t d = 0; d < nd; d++)
            size[pos[d]]++; /* documents per fingerprint */
        rc = components(n, nd, pos, size, pairs, npairs, out);
    }
    free(pairs);
    free(size);
    free(pos);
    return rc;
}

void dedup_clusters_free(struct dedup_clusters *c)
{
    if (!c)
        return;
    free(c->off);
    free(c->mem);
    free(c);
}

size_t dedup_clusters_count(const struct dedup_clusters *c)
{
    return c->n;
}

size_t dedup_clusters_size(const struct dedup_clusters *c, size_t i)
{
    return (size_t)(c->off[i + 1] - c->off[i]);
}

uint32_t dedup_clusters_member(const struct dedup_clusters *c, size_t i, size_t j)
{
    return c->mem[c->off[i] + j];
}

uint32_t dedup_clusters_doc_total(const struct dedup_clusters *c)
{
    return c->total;
}

/* Clusters of ndocs documents from explicit pairs (a << 32 | b): the components of two or
 * more, in document order, the same ordering as dedup_index_clusters(). Used by the
 * MinHash index (dedup/minhash_lsh.c), whose pairs come from LSH buckets. */
enum dedup_code dedup_clusters_from_pairs(uint32_t ndocs, const uint64_t *pairs, size_t npairs,
                                          struct dedup_clusters **out)
{
    uint32_t *size = malloc(((size_t)ndocs + 1) * sizeof *size);
    *out = NULL;
    if (!size)
        return DEDUP_ENOMEM;
    for (uint32_t i = 0; i < ndocs; i++)
        size[i] = 1; /* one document a node */
    enum dedup_code rc = components(ndocs, ndocs, NULL, size, pairs, npairs, out);
    free(size);
    return rc;
}
