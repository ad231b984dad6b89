/*
 * robots.txt parser and matcher: RFC 9309 (the Robots Exclusion Protocol), matching
 * Google's reference parser (github.com/google/robotstxt) where the RFC is silent.
 *
 * Parsing (RFC 9309 2.1-2.2): lines end at CR, LF or CRLF; a leading UTF-8 BOM is skipped;
 * '#' starts a comment; a line is "key: value" (whitespace around both trimmed). Groups
 * are runs of user-agent lines followed by rules; a user-agent line after any other line
 * starts a new group. Product tokens match case-insensitively; every group naming the
 * agent is merged; only when none names it does the '*' group apply (merged likewise).
 * Rules before the first user-agent line are ignored. Sitemap lines are collected
 * wherever they are. Only the rules that apply to the agent are kept.
 *
 * Matching (2.2.2-2.2.3): the longest matching pattern (in octets, after normalisation)
 * wins, Allow wins a tie; no match means allowed; '*' matches any run of octets and a
 * final '$' anchors the end ('$' elsewhere is literal, like Google); /robots.txt is
 * always allowed; an empty Allow/Disallow value is no rule (so "Disallow:" allows all).
 * Paths are case-sensitive. Both the patterns and the URL path are percent-normalised
 * by the URL canonicaliser's own normaliser (crawl__url_normalise_escapes, crawler/url.c),
 * so a pattern is spelled as the canonical URLs it is matched against: non-ASCII octets
 * encoded as %XX, escapes of unreserved characters decoded (RFC 3986 6.2.2.2:
 * /%7Ejoe == /~joe), other escapes kept in upper case, so %2F stays distinct from '/'
 * (RFC 9309 2.2.2 compares reserved characters percent-encoded), a stray '%' as %25.
 * Deviation: RFC 9309's example that the pattern "/foo/bar?baz=https://foo.bar" matches
 * ".../bar?baz=https%3A%2F%2Ffoo.bar" is not followed (neither does Google's parser):
 * decoding %2F would conflate path separators.
 *
 * Liberal where the large crawlers are (Google's parser unless said otherwise):
 * - keys are matched case-insensitively by prefix, with the typos "useragent",
 *   "user agent", "user_agent" (ours), "dissallow", "dissalow", "disalow", "diasllow",
 *   "disallaw", "site-map", "crawldelay"/"crawl delay" (ours); "user-agents" is a prefix
 *   match of "user-agent";
 * - a missing colon: "Disallow /x" is read when the line is exactly two words;
 * - the user-agent value is cut at the first character outside [A-Za-z_-] (the RFC's
 *   product-token alphabet): "Googlebot/2.1" and "Googlebot 2" are "googlebot"; "*"
 *   followed by a space and more text is still the '*' group;
 * - a Sitemap or unknown key ends a run of user-agent lines, as Google does;
 * - a pattern that starts with neither '/' nor '*' never matches (Google);
 * - Crawl-delay (not in the RFC; Bing, Yandex) is read per group: a decimal number of
 *   seconds, the largest in the applying groups, capped at opts->max_crawl_delay.
 *
 * Limits: the first max_bytes (default 512 KiB, RFC: at least 500 KiB) are parsed and the
 * line cut at the limit is dropped; lines are cut at CRAWL_ROBOTS_MAX_LINE bytes; at most
 * max_rules rules and CRAWL_ROBOTS_MAX_SITEMAPS sitemaps are kept. All is counted in
 * struct crawl_robots_info. Memory is O(input) with a small constant.
 */
#include "crawler/crawl.h"
#include "crawler/crawler_int.h"

#include <stdlib.h>
#include <string.h>

#define ARENA_CHUNK (64u * 1024u)
#define BUCKET_ANY 256 /* rules whose literal prefix is too short to pick a bucket */
#define PATH_STACK 2048

struct rule {
    const char *pat;  /* normalised pattern without a final '$' */
    const char *text; /* "Disallow: value" as written, for -v */
    uint32_t plen;    /* length of pat */
    uint32_t spec;    /* specificity: octets of the normalised pattern, '$' included */
    uint32_t lit;     /* length of the literal prefix (before the first '*') */
    uint32_t line;
    uint64_t mask; /* bloom of every literal octet: bit (octet & 63) */
    uint8_t allow;
    uint8_t anchored;
};

struct rulevec {
    struct rule *v;
    size_t n, cap, ignored;
    double delay; /* < 0: none */
};

struct chunk {
    struct chunk *next;
    size_t used, cap;
    char data[];
};

struct crawl_robots {
    struct rule *rules; /* sorted: specificity desc, Allow first, line asc */
    size_t nrules;
    uint32_t *idx;                  /* wildcard rules grouped by bucket, ascending */
    uint32_t start[BUCKET_ANY + 2]; /* bucket b is idx[start[b] .. start[b + 1]) */
    uint32_t *lit;                  /* literal rules: hash table of rule index + 1 */
    size_t litmask;                 /* table size - 1 (a power of two), 0: no table */
    size_t maxlit;                  /* longest literal pattern */
    char **sitemaps;
    size_t nsitemaps, capsitemaps;
    double crawl_delay;
    struct crawl_robots_info info;
    struct chunk *arena;
};

/* ---- small helpers ---- */

static int is_space(unsigned char c)
{
    return c == ' ' || c == '\t' || c == '\v' || c == '\f';
}

static int is_token_char(unsigned char c)
{
    return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '-' || c == '_';
}

static unsigned char lower(unsigned char c)
{
    return (c >= 'A' && c <= 'Z') ? (unsigned char)(c + 32) : c;
}

/* Case-insensitive: does s (n bytes) start with the NUL-terminated word w? */
static int starts_with_ci(const char *s, size_t n, const char *w)
{
    size_t wl = strlen(w);
    if (n < wl)
        return 0;
    for (size_t i = 0; i < wl; i++)
        if (lower((unsigned char)s[i]) != (unsigned char)w[i])
            return 0;
    return 1;
}

static int starts_with_any(const char *s, size_t n, const char *const *words)
{
    for (; *words; words++)
        if (starts_with_ci(s, n, *words))
            return 1;
    return 0;
}

static char *arena_alloc(struct crawl_robots *r, size_t n)
{
    struct chunk *c = r->arena;
    if (!c || c->cap - c->used < n) {
        size_t cap = n > ARENA_CHUNK ? n : ARENA_CHUNK;
        c = malloc(sizeof *c + cap);
        if (!c)
            return NULL;
        c->cap = cap;
        c->used = 0;
        c->next = r->arena;
        r->arena = c;
    }
    char *p = c->data + c->used;
    c->used += n;
    return p;
}

/* ---- the wildcard match (declared in crawler_int.h) ---- */

/*
 * HOW IT WORKS: greedy glob matching with backtracking to the last star only. When a
 * literal fails, the most recent '*' absorbs one more octet and matching resumes right
 * after it; earlier stars never need revisiting, because whatever an earlier star could
 * absorb the last star can absorb too. So each (star, start) pair is tried once: at most
 * O(plen * slen) steps, never exponential, even for "/ *a*a*a*a*b" against "aaaa...".
 * Unanchored patterns match a prefix: reaching the end of the pattern is success.
 */
int crawl__robots_wildmatch(const char *pat, size_t plen, const char *s, size_t slen, int anchored)
{
    size_t pi = 0, si = 0, star = (size_t)-1, mark = 0;
    for (;;) {
        if (pi == plen && (!anchored || si == slen))
            return 1;
        if (pi < plen && pat[pi] == '*') {
            star = pi++;
            mark = si;
            continue;
        }
        if (pi < plen && si < slen && pat[pi] == s[si]) {
            pi++;
            si++;
            continue;
        }
        if (star == (size_t)-1 || mark >= slen)
            return 0;
        pi = star + 1;
        si = ++mark;
    }
}

/* ---- parsing ---- */

enum key {
    KEY_NONE,
    KEY_USER_AGENT,
    KEY_ALLOW,
    KEY_DISALLOW,
    KEY_SITEMAP,
    KEY_CRAWL_DELAY,
    KEY_UNKNOWN
};

static enum key classify(const char *k, size_t n)
{
    static const char *const ua[] = {"user-agent", "useragent", "user agent", "user_agent", NULL};
    static const char *const allow[] = {"allow", NULL};
    static const char *const disallow[] = {"disallow", "dissallow", "dissalow", "disalow",
                                           "diasllow", "disallaw",  NULL};
    static const char *const sitemap[] = {"sitemap", "site-map", NULL};
    static const char *const delay[] = {"crawl-delay", "crawldelay", "crawl delay", "crawl_delay",
                                        NULL};
    if (starts_with_any(k, n, ua))
        return KEY_USER_AGENT;
    if (starts_with_any(k, n, allow))
        return KEY_ALLOW;
    if (starts_with_any(k, n, disallow))
        return KEY_DISALLOW;
    if (starts_with_any(k, n, sitemap))
        return KEY_SITEMAP;
    if (starts_with_any(k, n, delay))
        return KEY_CRAWL_DELAY;
    return KEY_UNKNOWN;
}

/* Parses a non-negative decimal "12", "0.5", "2." (C locale by hand); -1 when invalid. */
static double parse_delay(const char *v, size_t n)
{
    double x = 0, scale = 1;
    size_t i = 0, digits = 0;
    for (; i < n && v[i] >= '0' && v[i] <= '9'; i++, digits++)
        if (x < 1e9)
            x = x * 10 + (v[i] - '0');
    if (i < n && v[i] == '.') {
        for (i++; i < n && v[i] >= '0' && v[i] <= '9'; i++, digits++) {
            scale /= 10;
            x += (v[i] - '0') * scale;
        }
    }
    if (digits == 0 || i != n)
        return -1;
    return x;
}

struct parser {
    struct crawl_robots *r;
    const char *token; /* our product token */
    size_t token_len;
    size_t max_rules;
    struct rulevec specific, global;
    int cur_specific, cur_global, separator, ever_specific;
    char *buf; /* 3 * CRAWL_ROBOTS_MAX_LINE + 1: normalised pattern */
};

static int rule_add(struct parser *p, struct rulevec *vec, int allow, const char *val, size_t vlen,
                    unsigned line)
{
    if (vec->n >= p->max_rules) {
        vec->ignored++;
        return 0;
    }
    if (vec->n == vec->cap) {
        size_t ncap = vec->cap ? vec->cap * 2 : 16;
        if (ncap > p->max_rules)
            ncap = p->max_rules;
        struct rule *nv = realloc(vec->v, ncap * sizeof *nv);
        if (!nv)
            return -1;
        vec->v = nv;
        vec->cap = ncap;
    }
    size_t nlen = crawl__url_normalise_escapes(val, vlen, p->buf);
    int anchored = 0;
    size_t spec = nlen;
    if (nlen > 0 && p->buf[nlen - 1] == '$') {
        anchored = 1;
        nlen--;
    }
    const char *kw = allow ? "Allow: " : "Disallow: ";
    size_t kwl = strlen(kw);
    char *mem = arena_alloc(p->r, nlen + 1 + kwl + vlen + 1);
    if (!mem)
        return -1;
    memcpy(mem, p->buf, nlen);
    mem[nlen] = '\0';
    char *text = mem + nlen + 1;
    memcpy(text, kw, kwl);
    memcpy(text + kwl, val, vlen);
    text[kwl + vlen] = '\0';

    struct rule *ru = &vec->v[vec->n++];
    ru->pat = mem;
    ru->text = text;
    ru->plen = (uint32_t)nlen;
    ru->spec = (uint32_t)spec;
    ru->line = line;
    ru->allow = (uint8_t)allow;
    ru->anchored = (uint8_t)anchored;
    const char *st = memchr(mem, '*', nlen);
    ru->lit = (uint32_t)(st ? (size_t)(st - mem) : nlen);
    ru->mask = 0;
    for (size_t i = 0; i < nlen; i++)
        if (mem[i] != '*')
            ru->mask |= (uint64_t)1 << ((unsigned char)mem[i] & 63);
    return 0;
}

static int sitemap_add(struct crawl_robots *r, const char *v, size_t n)
{
    if (r->nsitemaps >= CRAWL_ROBOTS_MAX_SITEMAPS) {
        r->info.sitemaps_ignored++;
        return 0;
    }
    if (r->nsitemaps == r->capsitemaps) {
        size_t ncap = r->capsitemaps ? r->capsitemaps * 2 : 4;
        char **ns = realloc(r->sitemaps, ncap * sizeof *ns);
        if (!ns)
            return -1;
        r->sitemaps = ns;
        r->capsitemaps = ncap;
    }
    char *s = arena_alloc(r, n + 1);
    if (!s)
        return -1;
    memcpy(s, v, n);
    s[n] = '\0';
    r->sitemaps[r->nsitemaps++] = s;
    return 0;
}

/* One line (without its terminator). Returns -1 on ENOMEM. */
static int parse_line(struct parser *p, const char *s, size_t n, unsigned lineno)
{
    const char *hash = memchr(s, '#', n);
    if (hash)
        n = (size_t)(hash - s);
    while (n > 0 && is_space((unsigned char)*s)) {
        s++;
        n--;
    }
    while (n > 0 && is_space((unsigned char)s[n - 1]))
        n--;
    if (n == 0)
        return 0;

    const char *sep = memchr(s, ':', n);
    const char *val;
    if (sep) {
        val = sep + 1;
    } else {
        /* no colon: "key value", exactly two words */
        size_t i = 0;
        while (i < n && !is_space((unsigned char)s[i]))
            i++;
        if (i == n) {
            p->r->info.lines_invalid++;
            return 0;
        }
        sep = s + i;
        val = sep;
        while (val < s + n && is_space((unsigned char)*val))
            val++;
        for (const char *q = val; q < s + n; q++)
            if (is_space((unsigned char)*q)) {
                p->r->info.lines_invalid++;
                return 0;
            }
    }
    size_t klen = (size_t)(sep - s);
    while (klen > 0 && is_space((unsigned char)s[klen - 1]))
        klen--;
    if (klen == 0) {
        p->r->info.lines_invalid++;
        return 0;
    }
    size_t vlen = (size_t)(s + n - val);
    while (vlen > 0 && is_space((unsigned char)*val)) {
        val++;
        vlen--;
    }

    enum key k = classify(s, klen);
    switch (k) {
    case KEY_USER_AGENT: {
        if (p->separator) {
            p->cur_specific = p->cur_global = p->separator = 0;
        }
        if (vlen >= 1 && val[0] == '*' && (vlen == 1 || is_space((unsigned char)val[1]))) {
            p->cur_global = 1;
        } else {
            size_t t = 0;
            while (t < vlen && is_token_char((unsigned char)val[t]))
                t++;
            if (t > 0 && t == p->token_len) {
                size_t i = 0;
                while (i < t && lower((unsigned char)val[i]) == lower((unsigned char)p->token[i]))
                    i++;
                if (i == t)
                    p->cur_specific = p->ever_specific = 1;
            }
        }
        return 0;
    }
    case KEY_ALLOW:
    case KEY_DISALLOW:
    case KEY_CRAWL_DELAY: {
        if (!p->cur_specific && !p->cur_global)
            return 0; /* outside any group: ignored */
        p->separator = 1;
        struct rulevec *vec = p->cur_specific ? &p->specific : &p->global;
        if (k == KEY_CRAWL_DELAY) {
            double d = parse_delay(val, vlen);
            if (d >= 0 && d > vec->delay)
                vec->delay = d;
            return 0;
        }
        if (vlen == 0)
            return 0; /* empty value: no rule */
        return rule_add(p, vec, k == KEY_ALLOW, val, vlen, lineno);
    }
    case KEY_SITEMAP:
        p->separator = 1;
        return vlen ? sitemap_add(p->r, val, vlen) : 0;
    default:
        p->separator = 1;
        return 0;
    }
}

static int rule_cmp(const void *a, const void *b)
{
    const struct rule *x = a, *y = b;
    if (x->spec != y->spec)
        return x->spec > y->spec ? -1 : 1;
    if (x->allow != y->allow)
        return x->allow ? -1 : 1;
    return x->line < y->line ? -1 : (x->line > y->line);
}

static unsigned rule_bucket(const struct rule *ru)
{
    return (ru->lit >= 2 && ru->pat[0] == '/') ? (unsigned char)ru->pat[1] : BUCKET_ANY;
}

#define FNV_OFFSET 0xcbf29ce484222325ull
#define FNV_PRIME 0x100000001b3ull

/* Slot of a literal pattern whose FNV-1a hash (of its octets) is h. */
static size_t lit_slot(uint64_t h, int anchored, size_t mask)
{
    h ^= anchored ? 0x9E3779B97F4A7C15ull : 0;
    h *= 0xff51afd7ed558ccdull;
    return (size_t)(h ^ (h >> 29)) & mask;
}

/* The literal rule with exactly these octets and anchoring, as a rule index, or -1. */
static long lit_find(const struct crawl_robots *r, uint64_t h, const char *s, size_t n,
                     int anchored)
{
    for (size_t i = lit_slot(h, anchored, r->litmask);; i = (i + 1) & r->litmask) {
        uint32_t v = r->lit[i];
        if (v == 0)
            return -1;
        const struct rule *ru = &r->rules[v - 1];
        if (ru->plen == n && ru->anchored == anchored && memcmp(ru->pat, s, n) == 0)
            return (long)v - 1;
    }
}

/*
 * HOW IT WORKS: the rules are sorted into decision order (longer first, Allow first on a
 * tie), so the first rule in that order that matches decides. Rules without '*' (most
 * rules in real files) go into a hash table keyed by their octets: a path of n octets has
 * at most n literal rules that match it (its prefixes, plus itself for a '$' rule), found
 * with one incremental FNV-1a pass and n probes, whatever the number of rules. Wildcard
 * rules are bucketed by the octet after the leading '/' of their literal prefix (rules
 * with a shorter prefix go to BUCKET_ANY); a lookup walks its bucket and BUCKET_ANY in
 * decision order, only up to the best literal match, with a 64-bit bloom of the rule's
 * octets as a cheap filter before the wildcard match.
 */
static int compile(struct crawl_robots *r)
{
    if (r->nrules == 0)
        return 0;
    qsort(r->rules, r->nrules, sizeof *r->rules, rule_cmp);
    size_t nlit = 0;
    for (size_t i = 0; i < r->nrules; i++)
        if (r->rules[i].lit == r->rules[i].plen)
            nlit++;
    if (nlit) {
        size_t cap = 16;
        while (cap < 2 * nlit)
            cap *= 2;
        r->lit = calloc(cap, sizeof *r->lit);
        if (!r->lit)
            return -1;
        r->litmask = cap - 1;
        for (size_t i = 0; i < r->nrules; i++) {
            const struct rule *ru = &r->rules[i];
            if (ru->lit != ru->plen)
                continue;
            uint64_t h = FNV_OFFSET;
            for (size_t k = 0; k < ru->plen; k++)
                h = (h ^ (unsigned char)ru->pat[k]) * FNV_PRIME;
            if (lit_find(r, h, ru->pat, ru->plen, ru->anchored) >= 0)
                continue; /* a duplicate: the first in decision order wins */
            size_t j = lit_slot(h, ru->anchored, r->litmask);
            while (r->lit[j] != 0)
                j = (j + 1) & r->litmask;
            r->lit[j] = (uint32_t)i + 1;
            if (ru->plen > r->maxlit)
                r->maxlit = ru->plen;
        }
    }
    r->idx = malloc((r->nrules - nlit + 1) * sizeof *r->idx);
    if (!r->idx)
        return -1;
    uint32_t count[BUCKET_ANY + 1] = {0};
    for (size_t i = 0; i < r->nrules; i++)
        if (r->rules[i].lit != r->rules[i].plen)
            count[rule_bucket(&r->rules[i])]++;
    r->start[0] = 0;
    for (unsigned b = 0; b <= BUCKET_ANY; b++)
        r->start[b + 1] = r->start[b] + count[b];
    uint32_t fill[BUCKET_ANY + 1];
    memcpy(fill, r->start, sizeof fill);
    for (size_t i = 0; i < r->nrules; i++)
        if (r->rules[i].lit != r->rules[i].plen)
            r->idx[fill[rule_bucket(&r->rules[i])]++] = (uint32_t)i;
    return 0;
}

void crawl_robots_opts_init(struct crawl_robots_opts *opts)
{
    opts->max_bytes = CRAWL_ROBOTS_MAX_BYTES;
    opts->max_rules = CRAWL_ROBOTS_MAX_RULES;
    opts->max_crawl_delay = CRAWL_ROBOTS_MAX_CRAWL_DELAY;
}

enum crawl_code crawl_robots_parse(const char *text, size_t len, const char *user_agent,
                                   const struct crawl_robots_opts *opts, struct crawl_robots **out)
{
    enum crawl_code rc = CRAWL_ENOMEM;
    struct crawl_robots_opts o;
    crawl_robots_opts_init(&o);
    if (opts) {
        if (opts->max_bytes)
            o.max_bytes = opts->max_bytes;
        if (opts->max_rules)
            o.max_rules = opts->max_rules > UINT32_MAX / 2 ? UINT32_MAX / 2 : opts->max_rules;
        if (opts->max_crawl_delay > 0)
            o.max_crawl_delay = opts->max_crawl_delay;
    }
    *out = NULL;
    if (!user_agent || (!text && len))
        return CRAWL_EINVAL;
    size_t tlen = 0;
    while (is_token_char((unsigned char)user_agent[tlen]))
        tlen++;
    if (tlen == 0)
        return CRAWL_EINVAL;

    struct parser p;
    memset(&p, 0, sizeof p);
    p.token = user_agent;
    p.token_len = tlen;
    p.max_rules = o.max_rules;
    p.specific.delay = p.global.delay = -1;
    p.r = calloc(1, sizeof *p.r);
    p.buf = malloc(3 * (size_t)CRAWL_ROBOTS_MAX_LINE + 1);
    if (!p.r || !p.buf)
        goto fail;
    struct crawl_robots *r = p.r;
    r->info.bytes = len;

    /* the part parsed: max_bytes, minus the line cut there */
    size_t end = len;
    if (len > o.max_bytes) {
        end = o.max_bytes;
        if (text[end] != '\n' && text[end] != '\r') {
            while (end > 0 && text[end - 1] != '\n' && text[end - 1] != '\r')
                end--;
        }
        r->info.bytes_ignored = len - end;
    }

    static const unsigned char bom[3] = {0xEF, 0xBB, 0xBF};
    size_t i = 0;
    while (i < 3 && i < end && (unsigned char)text[i] == bom[i])
        i++;
    unsigned lineno = 0;
    while (i < end) {
        size_t ls = i;
        while (i < end && text[i] != '\n' && text[i] != '\r')
            i++;
        size_t ll = i - ls;
        if (ll > CRAWL_ROBOTS_MAX_LINE)
            ll = CRAWL_ROBOTS_MAX_LINE;
        lineno++;
        if (parse_line(&p, text + ls, ll, lineno) != 0)
            goto fail;
        if (i < end) {
            if (text[i] == '\r' && i + 1 < end && text[i + 1] == '\n')
                i++;
            i++;
        }
    }
    r->info.lines = lineno;

    struct rulevec *use = p.ever_specific ? &p.specific : &p.global;
    struct rulevec *drop = p.ever_specific ? &p.global : &p.specific;
    r->rules = use->v;
    r->nrules = use->n;
    use->v = NULL;
    r->info.rules = r->nrules;
    r->info.rules_ignored = use->ignored;
    r->info.specific_group = p.ever_specific;
    r->crawl_delay = use->delay < 0 ? 0 : use->delay;
    if (r->crawl_delay > o.max_crawl_delay)
        r->crawl_delay = o.max_crawl_delay;
    free(drop->v);
    drop->v = NULL;
    if (compile(r) != 0)
        goto fail;
    free(p.buf);
    *out = r;
    return CRAWL_OK;

fail:
    free(p.specific.v);
    free(p.global.v);
    free(p.buf);
    crawl_robots_free(p.r);
    return rc;
}

/* ---- matching ---- */

static int rule_matches(const struct rule *ru, const char *s, size_t n, uint64_t mask)
{
    if (ru->mask & ~mask)
        return 0;
    if (ru->lit > n || memcmp(ru->pat, s, ru->lit) != 0)
        return 0;
    if (ru->lit == ru->plen)
        return !ru->anchored || n == ru->plen;
    return crawl__robots_wildmatch(ru->pat + ru->lit, ru->plen - ru->lit, s + ru->lit, n - ru->lit,
                                   ru->anchored);
}

static const struct rule *find_rule(const struct crawl_robots *r, const char *s, size_t n)
{
    if (r->nrules == 0)
        return NULL;
    uint32_t best = UINT32_MAX; /* index of the best match so far, in decision order */
    if (r->litmask) {
        uint64_t h = FNV_OFFSET;
        size_t limit = n < r->maxlit ? n : r->maxlit;
        for (size_t l = 0; l < limit; l++) {
            h = (h ^ (unsigned char)s[l]) * FNV_PRIME;
            long k = lit_find(r, h, s, l + 1, 0);
            if (k >= 0 && (uint32_t)k < best)
                best = (uint32_t)k;
        }
        if (n <= r->maxlit) {
            long k = lit_find(r, h, s, n, 1);
            if (k >= 0 && (uint32_t)k < best)
                best = (uint32_t)k;
        }
    }
    if (r->start[BUCKET_ANY + 1] == 0) /* no wildcard rules */
        return best == UINT32_MAX ? NULL : &r->rules[best];
    uint64_t mask = 0;
    for (size_t i = 0; i < n; i++)
        mask |= (uint64_t)1 << ((unsigned char)s[i] & 63);
    uint32_t ia = 0, ea = 0;
    if (n >= 2) {
        unsigned b = (unsigned char)s[1];
        ia = r->start[b];
        ea = r->start[b + 1];
    }
    uint32_t ib = r->start[BUCKET_ANY], eb = r->start[BUCKET_ANY + 1];
    /* merge the two ascending index lists: the first match in decision order wins */
    while (ia < ea || ib < eb) {
        uint32_t k;
        if (ib >= eb || (ia < ea && r->idx[ia] < r->idx[ib]))
            k = r->idx[ia++];
        else
            k = r->idx[ib++];
        if (k >= best)
            break;
        if (rule_matches(&r->rules[k], s, n, mask)) {
            best = k;
            break;
        }
    }
    return best == UINT32_MAX ? NULL : &r->rules[best];
}

int crawl_robots_allowed(const struct crawl_robots *r, const char *path, size_t len,
                         struct crawl_robots_decision *decision)
{
    struct crawl_robots_decision d;
    memset(&d, 0, sizeof d);
    d.allowed = 1;
    d.reason = CRAWL_ROBOTS_NO_MATCH;

    char stackbuf[PATH_STACK];
    char *buf = stackbuf;
    size_t need = 3 * len + 2;
    if (need > sizeof stackbuf) {
        buf = malloc(need);
        if (!buf) {
            /* cannot normalise: answer conservatively */
            d.allowed = 0;
            d.reason = CRAWL_ROBOTS_NOT_FETCHED;
            goto done;
        }
    }
    size_t n = 0;
    if (len == 0 || path[0] != '/')
        buf[n++] = '/';
    n += crawl__url_normalise_escapes(path, len, buf + n);

    const char *q = memchr(buf, '?', n);
    size_t plen = q ? (size_t)(q - buf) : n;
    if (plen == 11 && memcmp(buf, "/robots.txt", 11) == 0) {
        d.reason = CRAWL_ROBOTS_ROBOTS_TXT;
    } else {
        const struct rule *ru = r ? find_rule(r, buf, n) : NULL;
        if (ru) {
            d.allowed = ru->allow;
            d.reason = CRAWL_ROBOTS_BY_RULE;
            d.line = ru->line;
            d.rule = ru->text;
        }
    }
    if (buf != stackbuf)
        free(buf);
done:
    if (decision)
        *decision = d;
    return d.allowed;
}

double crawl_robots_crawl_delay(const struct crawl_robots *r)
{
    return r ? r->crawl_delay : 0;
}

size_t crawl_robots_sitemap_count(const struct crawl_robots *r)
{
    return r ? r->nsitemaps : 0;
}

const char *crawl_robots_sitemap(const struct crawl_robots *r, size_t i)
{
    return (r && i < r->nsitemaps) ? r->sitemaps[i] : NULL;
}

const struct crawl_robots_info *crawl_robots_info(const struct crawl_robots *r)
{
    return &r->info;
}

void crawl_robots_free(struct crawl_robots *r)
{
    if (!r)
        return;
    struct chunk *c = r->arena;
    while (c) {
        struct chunk *next = c->next;
        free(c);
        c = next;
    }
    free(r->rules);
    free(r->idx);
    free(r->lit);
    free(r->sitemaps);
    free(r);
}

const char *crawl_robots_url_path(const char *url, size_t *len)
{
    size_t n = strlen(url);
    size_t from = (n >= 2 && url[0] == '/' && url[1] == '/') ? 2 : 0;
    size_t early = from + strcspn(url + from, "/?;");
    const char *proto = strstr(url + from, "://");
    size_t pend = from;
    if (proto && (size_t)(proto - url) < early)
        pend = (size_t)(proto - url) + 3;
    size_t ps = pend + strcspn(url + pend, "/?;");
    if (ps >= n) {
        *len = 0;
        return url + n;
    }
    const char *hash = strchr(url + from, '#');
    if (hash && (size_t)(hash - url) < ps) {
        *len = 0;
        return url + n;
    }
    size_t pe = hash ? (size_t)(hash - url) : n;
    *len = pe - ps;
    return url + ps;
}
