/*
 * Suite "robots": RFC 9309 robots.txt parsing and matching (crawler/robots.c), the
 * per-host fetch policy with an injected clock (crawler/robots_policy.c), and fetching
 * robots.txt with libcurl against the loopback server tests/httpd (200, 301, redirect
 * chains across servers, 404, 429, 500, a hang, a reset, gzip and a 1 MB body).
 * The matcher cases are tables: RFC 9309's own examples (sections 2.2 and 5) first, then
 * one case per rule of the parser's file comment.
 */
#include "crawler/crawl.h"
#include "crawler/crawler_int.h"
#include "tests/httpd.h"

#include <CUnit/CUnit.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "tests/testutil.h"

struct match_case {
    const char *robots;
    const char *agent;
    const char *path;
    int allowed;
};

/* Runs a table; on a failure prints the case so the table row is easy to find. */
static void run_cases(const struct match_case *cases, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const struct match_case *c = &cases[i];
        struct crawl_robots *r = NULL;
        enum crawl_code rc = crawl_robots_parse(c->robots, strlen(c->robots), c->agent, NULL, &r);
        ASSERT_EQ_FATAL(rc, CRAWL_OK);
        int got = crawl_robots_allowed(r, c->path, strlen(c->path), NULL);
        if (got != c->allowed)
            fprintf(stderr, "\nrobots case %zu: agent %s path %s: got %s, want %s\n--\n%s--\n", i,
                    c->agent, c->path, got ? "allowed" : "disallowed",
                    c->allowed ? "allowed" : "disallowed", c->robots);
        ASSERT_EQ(got, c->allowed);
        crawl_robots_free(r);
    }
}

#define RUN(cases) run_cases(cases, sizeof(cases) / sizeof(cases)[0])

/* RFC 9309 section 5.1: the simple example. */
static const char RFC_EXAMPLE[] = "User-Agent: *\n"
                                  "Disallow: *.gif$\n"
                                  "Disallow: /example/\n"
                                  "Allow: /publications/\n"
                                  "\n"
                                  "User-Agent: foobot\n"
                                  "Disallow:/\n"
                                  "Allow:/example/page.html\n"
                                  "Allow:/example/allowed.gif\n"
                                  "\n"
                                  "User-Agent: barbot\n"
                                  "User-Agent: bazbot\n"
                                  "Disallow: /example/page.html\n"
                                  "\n"
                                  "User-Agent: quxbot\n"
                                  "\n"
                                  "EOF\n";

static void test_robots_rfc9309_examples(void)
{
    static const struct match_case cases[] = {
        /* 5.1 */
        {RFC_EXAMPLE, "foobot", "/example/page.html", 1},
        {RFC_EXAMPLE, "foobot", "/example/allowed.gif", 1},
        {RFC_EXAMPLE, "foobot", "/example/other.html", 0},
        {RFC_EXAMPLE, "foobot", "/", 0},
        {RFC_EXAMPLE, "barbot", "/example/page.html", 0},
        {RFC_EXAMPLE, "bazbot", "/example/page.html", 0},
        {RFC_EXAMPLE, "barbot", "/example/other.html", 1}, /* the '*' group does not apply */
        {RFC_EXAMPLE, "quxbot", "/example/page.html", 1},  /* an empty group: all allowed */
        {RFC_EXAMPLE, "quxbot", "/a.gif", 1},
        {RFC_EXAMPLE, "otherbot", "/a.gif", 0},
        {RFC_EXAMPLE, "otherbot", "/a.gif?x=1", 1}, /* '$' anchors the end */
        {RFC_EXAMPLE, "otherbot", "/example/", 0},
        {RFC_EXAMPLE, "otherbot", "/publications/a", 1},
        {RFC_EXAMPLE, "otherbot", "/publications/a.gif", 1}, /* 14 octets beat *.gif$ (6) */
        /* 5.2: longest match */
        {"User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
         "foobot", "/example/page/", 1},
        {"User-Agent: foobot\nAllow: /example/page/\nDisallow: /example/page/disallowed.gif\n",
         "foobot", "/example/page/disallowed.gif", 0},
        /* 2.2.2: percent-encoding table */
        {"User-agent: *\nDisallow: /foo/bar?baz=quz\n", "a", "/foo/bar?baz=quz", 0},
        {"User-agent: *\nDisallow: /foo/bar/\xE3\x83\x84\n", "a", "/foo/bar/%E3%83%84", 0},
        {"User-agent: *\nDisallow: /foo/bar/%E3%83%84\n", "a", "/foo/bar/%E3%83%84", 0},
        {"User-agent: *\nDisallow: /foo/bar/%62%61%7A\n", "a", "/foo/bar/baz", 0},
        /* deliberate deviation (file comment of robots.c, like Google): %3A%2F stay escaped */
        {"User-agent: *\nDisallow: /foo/bar?baz=https://foo.bar\n", "a",
         "/foo/bar?baz=https%3A%2F%2Ffoo.bar", 1},
        /* 2.2.3: special characters */
        {"User-agent: *\nDisallow: /path$\n", "a", "/path", 0},
        {"User-agent: *\nDisallow: /path$\n", "a", "/path/", 1},
        {"User-agent: *\nDisallow: /path*\n", "a", "/path/to", 0},
        {"User-agent: *\nDisallow: /path # a comment\n", "a", "/path", 0},
        /* 2.2.1/2.3: /robots.txt is always allowed */
        {"User-agent: *\nDisallow: /\n", "a", "/robots.txt", 1},
        {"User-agent: *\nDisallow: /robots.txt\n", "a", "/robots.txt", 1},
        {"User-agent: *\nDisallow: /\n", "a", "/robots.txt.bak", 0},
    };
    RUN(cases);
}

static void test_robots_groups(void)
{
    static const struct match_case cases[] = {
        /* product tokens match case-insensitively */
        {"User-agent: SimCrawl\nDisallow: /x\n", "simcrawl", "/x", 0},
        {"User-agent: simcrawl\nDisallow: /x\n", "SIMCRAWL", "/x", 0},
        /* the whole token, not a prefix */
        {"User-agent: simcrawler\nDisallow: /x\n", "simcrawl", "/x", 1},
        {"User-agent: sim\nDisallow: /x\n", "simcrawl", "/x", 1},
        /* our agent given as a full User-Agent string */
        {"User-agent: simcrawl\nDisallow: /x\n", "simcrawl/0.1 (+https://example.org/bot)", "/x", 0},
        /* several user-agent lines share a group */
        {"User-agent: a\nUser-agent: simcrawl\nUser-agent: b\nDisallow: /x\n", "simcrawl", "/x", 0},
        /* groups for the same agent merge */
        {"User-agent: simcrawl\nDisallow: /a\n\nUser-agent: other\nDisallow: /b\n\n"
         "User-agent: simcrawl\nDisallow: /c\n",
         "simcrawl", "/c", 0},
        {"User-agent: simcrawl\nDisallow: /a\n\nUser-agent: other\nDisallow: /b\n\n"
         "User-agent: simcrawl\nDisallow: /c\n",
         "simcrawl", "/b", 1},
        /* longest match across merged groups: the Allow in the second group is longer */
        {"User-agent: simcrawl\nDisallow: /shop/\n\nUser-agent: simcrawl\nAllow: /shop/public/\n",
         "simcrawl", "/shop/public/x", 1},
        {"User-agent: simcrawl\nDisallow: /shop/\n\nUser-agent: simcrawl\nAllow: /shop/public/\n",
         "simcrawl", "/shop/private", 0},
        /* fall back to '*' only when no group names the agent */
        {"User-agent: *\nDisallow: /x\n\nUser-agent: other\nAllow: /\n", "simcrawl", "/x", 0},
        {"User-agent: *\nDisallow: /x\n\nUser-agent: simcrawl\nDisallow: /y\n", "simcrawl", "/x", 1},
        {"User-agent: *\nDisallow: /\n\nUser-agent: simcrawl\n", "simcrawl", "/x", 1},
        /* '*' groups merge too */
        {"User-agent: *\nDisallow: /a\n\nUser-agent: *\nDisallow: /b\n", "simcrawl", "/b", 0},
        /* rules outside any group are ignored */
        {"Disallow: /\nUser-agent: other\nDisallow: /x\n", "simcrawl", "/y", 1},
        {"Disallow: /\n", "simcrawl", "/y", 1},
        /* a user-agent line after rules starts a new group */
        {"User-agent: simcrawl\nDisallow: /a\nUser-agent: other\nDisallow: /b\n", "simcrawl", "/b", 1},
        /* no robots at all */
        {"", "simcrawl", "/anything", 1},
        /* "*" followed by more words is still '*'; "*bot" is not */
        {"User-agent: * everyone\nDisallow: /x\n", "simcrawl", "/x", 0},
        {"User-agent: *bot\nDisallow: /x\n", "simcrawl", "/x", 1},
    };
    RUN(cases);
}

static void test_robots_longest_match(void)
{
    static const struct match_case cases[] = {
        /* the nested prefix: a shorter Disallow still decides paths the longer one misses */
        {"User-agent: *\nDisallow: /a\nDisallow: /ab/c\n", "b", "/ab/d", 0},
        {"User-agent: *\nDisallow: /ab/c\nDisallow: /a\n", "b", "/ab/d", 0},
        {"User-agent: *\nDisallow: /a\nAllow: /ab/c\n", "b", "/ab/c/x", 1},
        {"User-agent: *\nDisallow: /a\nAllow: /ab/c\n", "b", "/ab/d", 0},
        /* longest wins regardless of order */
        {"User-agent: *\nAllow: /p\nDisallow: /p/q\n", "b", "/p/q", 0},
        {"User-agent: *\nDisallow: /p/q\nAllow: /p\n", "b", "/p/q", 0},
        {"User-agent: *\nDisallow: /p\nAllow: /p/q\n", "b", "/p/q", 1},
        /* Allow wins ties, whatever the order */
        {"User-agent: *\nAllow: /page\nDisallow: /page\n", "b", "/page", 1},
        {"User-agent: *\nDisallow: /page\nAllow: /page\n", "b", "/page", 1},
        {"User-agent: *\nDisallow: /*age\nAllow: /page\n", "b", "/page", 1}, /* 5 octets each */
        {"User-agent: *\nAllow: /$\nDisallow: /\n", "b", "/", 1},
        {"User-agent: *\nAllow: /$\nDisallow: /\n", "b", "/page", 0},
        /* empty Disallow allows all; empty Allow is no rule */
        {"User-agent: *\nDisallow:\n", "b", "/x", 1},
        {"User-agent: *\nDisallow: \n", "b", "/", 1},
        {"User-agent: *\nAllow:\nDisallow: /x\n", "b", "/x", 0},
        /* paths are case-sensitive */
        {"User-agent: *\nDisallow: /Private\n", "b", "/private", 1},
        {"User-agent: *\nDisallow: /Private\n", "b", "/Private/x", 0},
        /* a pattern that starts with neither '/' nor '*' never matches (as Google) */
        {"User-agent: *\nDisallow: private\n", "b", "/private", 1},
        /* the query is part of the path */
        {"User-agent: *\nDisallow: /*?\n", "b", "/a?b=1", 0},
        {"User-agent: *\nDisallow: /*?\n", "b", "/a", 1},
        {"User-agent: *\nDisallow: /search?q=\n", "b", "/search?q=x", 0},
    };
    RUN(cases);
}

static void test_robots_wildcards(void)
{
    static const struct match_case cases[] = {
        {"User-agent: *\nDisallow: /*.php$\n", "b", "/index.php", 0},
        {"User-agent: *\nDisallow: /*.php$\n", "b", "/a/b/index.php", 0},
        {"User-agent: *\nDisallow: /*.php$\n", "b", "/index.php?x", 1},
        {"User-agent: *\nDisallow: /*.php$\n", "b", "/index.php5", 1},
        {"User-agent: *\nDisallow: /fish*.php\n", "b", "/fishheads/catfish.php?parameters", 0},
        {"User-agent: *\nDisallow: /fish*.php\n", "b", "/Fish.PHP", 1},
        {"User-agent: *\nDisallow: /*/private/*.html$\n", "b", "/a/private/b/c.html", 0},
        {"User-agent: *\nDisallow: /*/private/*.html$\n", "b", "/a/private/b/c.htm", 1},
        {"User-agent: *\nDisallow: /**x**\n", "b", "/abcx", 0},
        {"User-agent: *\nDisallow: *\n", "b", "/anything", 0},
        {"User-agent: *\nDisallow: /$\n", "b", "/", 0},
        {"User-agent: *\nDisallow: /$\n", "b", "/a", 1},
        /* '$' is special only at the end */
        {"User-agent: *\nDisallow: /a$b\n", "b", "/a$b", 0},
        {"User-agent: *\nDisallow: /a$b\n", "b", "/a", 1},
        /* '*' and '$' combined with Allow */
        {"User-agent: *\nDisallow: /\nAllow: /*.css$\nAllow: /*.js$\n", "b", "/static/site.css", 1},
        {"User-agent: *\nDisallow: /\nAllow: /*.css$\n", "b", "/static/site.css?v=2", 0},
        {"User-agent: *\nDisallow: /*.gif$\nAllow: /*\n", "b", "/x.gif", 0}, /* 7 > 2 octets */
    };
    RUN(cases);
}

static void test_robots_percent_encoding(void)
{
    static const struct match_case cases[] = {
        /* non-ASCII: unencoded rule vs encoded URL and the reverse, any hex case */
        {"User-agent: *\nDisallow: /caf\xC3\xA9\n", "b", "/caf%C3%A9", 0},
        {"User-agent: *\nDisallow: /caf\xC3\xA9\n", "b", "/caf%c3%a9", 0},
        {"User-agent: *\nDisallow: /caf%C3%A9\n", "b", "/caf\xC3\xA9", 0},
        {"User-agent: *\nDisallow: /caf%c3%a9\n", "b", "/caf%C3%A9/menu", 0},
        {"User-agent: *\nDisallow: /caf%C3%A9\n", "b", "/cafe", 1},
        /* unreserved escapes are decoded on both sides */
        {"User-agent: *\nDisallow: /~joe\n", "b", "/%7Ejoe/", 0},
        {"User-agent: *\nDisallow: /%7ejoe\n", "b", "/~joe/", 0},
        {"User-agent: *\nDisallow: /a%2Db\n", "b", "/a-b", 0},
        /* escapes of reserved characters are kept: %2F is not '/' */
        {"User-agent: *\nDisallow: /a%2Fb\n", "b", "/a/b", 1},
        {"User-agent: *\nDisallow: /a%2Fb\n", "b", "/a%2fb", 0},
        {"User-agent: *\nDisallow: /a/b\n", "b", "/a%2Fb", 1},
        {"User-agent: *\nDisallow: /a%3Fb\n", "b", "/a?b", 1},
        /* a space in a rule matches %20 in the URL */
        {"User-agent: *\nDisallow: /a b\n", "b", "/a%20b", 0},
        /* a stray '%' is literal on both sides */
        {"User-agent: *\nDisallow: /100%\n", "b", "/100%", 0},
        {"User-agent: *\nDisallow: /100%zz\n", "b", "/100%zz", 0},
        /* ... and matches the canonical URL's spelling of it (%25), as the pattern and the
         * path go through the URL canonicaliser's normaliser: before, "/100%zz$" never
         * matched the canonical "/100%25zz" */
        {"User-agent: *\nDisallow: /100%\n", "b", "/100%25", 0},
        {"User-agent: *\nDisallow: /100%zz$\n", "b", "/100%25zz", 0},
        {"User-agent: *\nDisallow: /100%25zz$\n", "b", "/100%zz", 0},
        /* octets a URL may not hold, written raw in a rule, match their escapes */
        {"User-agent: *\nDisallow: /a\"b{c}\n", "b", "/a%22b%7Bc%7D", 0},
        {"User-agent: *\nDisallow: /a%22b\n", "b", "/a\"b", 0},
        {"User-agent: *\nDisallow: /a%22b\n", "b", "/a%23b", 1},
    };
    RUN(cases);
}

static void test_robots_syntax(void)
{
    static const struct match_case cases[] = {
        /* line ends: LF, CRLF, CR only, mixed, none at the end */
        {"User-agent: *\r\nDisallow: /x\r\n", "b", "/x", 0},
        {"User-agent: *\rDisallow: /x\rAllow: /x/y\r", "b", "/x/y", 1},
        {"User-agent: *\rDisallow: /x\r", "b", "/x", 0},
        {"User-agent: *\r\nDisallow: /a\rDisallow: /x\n", "b", "/x", 0},
        {"User-agent: *\nDisallow: /x", "b", "/x", 0},
        /* a UTF-8 BOM */
        {"\xEF\xBB\xBFUser-agent: *\nDisallow: /x\n", "b", "/x", 0},
        /* comments and blank lines */
        {"# hello\nUser-agent: * # everyone\n\n# gap\nDisallow: /x # not /y\n", "b", "/x", 0},
        {"User-agent: *\nDisallow: /x#y\n", "b", "/x", 0},
        /* whitespace around keys and values */
        {"  User-agent :   *  \n\tDisallow\t:\t/x\t\n", "b", "/x", 0},
        /* keys are case-insensitive */
        {"USER-AGENT: *\nDISALLOW: /x\n", "b", "/x", 0},
        /* typos the large crawlers accept */
        {"User-agent: *\nDisalow: /x\n", "b", "/x", 0},
        {"User-agent: *\nDissallow: /x\n", "b", "/x", 0},
        {"User-agent: *\nDissalow: /x\n", "b", "/x", 0},
        {"User-agent: *\nDiasllow: /x\n", "b", "/x", 0},
        {"User-agent: *\nDisallaw: /x\n", "b", "/x", 0},
        {"Useragent: b\nDisallow: /x\n", "b", "/x", 0},
        {"User agent: b\nDisallow: /x\n", "b", "/x", 0},
        {"User-agents: b\nDisallow: /x\n", "b", "/x", 0},
        {"User_agent: b\nDisallow: /x\n", "b", "/x", 0},
        /* a missing colon: exactly two words */
        {"User-agent *\nDisallow /x\n", "b", "/x", 0},
        {"User-agent: *\nDisallow /x /y\n", "b", "/x", 1}, /* three words: not a rule */
        /* the user-agent value cut at the first character outside [A-Za-z_-] */
        {"User-agent: Googlebot/2.1\nDisallow: /x\n", "googlebot", "/x", 0},
        {"User-agent: googlebot 2\nDisallow: /x\n", "Googlebot", "/x", 0},
        {"User-agent: googlebot-news\nDisallow: /x\n", "googlebot", "/x", 1},
        /* unknown keys are skipped (and end a run of user-agent lines, as Google) */
        {"User-agent: *\nNoindex: /x\nDisallow: /y\n", "b", "/x", 1},
        {"User-agent: *\nHost: example.com\nDisallow: /y\n", "b", "/y", 0},
        /* junk lines */
        {"<html><body>not a robots.txt</body></html>\n", "b", "/x", 1},
        {"User-agent: *\n:\n: /x\nDisallow: /y\n", "b", "/y", 0},
    };
    RUN(cases);
}

static struct crawl_robots *parse(const char *text, size_t len, const char *agent)
{
    struct crawl_robots *r = NULL;
    enum crawl_code rc = crawl_robots_parse(text, len, agent, NULL, &r);
    ASSERT_EQ(rc, CRAWL_OK);
    return r;
}

static void test_robots_decision_detail(void)
{
    const char *t = "User-agent: *\n# comment\nDisallow: /private\nAllow: /private/ok # yes\n";
    struct crawl_robots *r = parse(t, strlen(t), "simcrawl");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    struct crawl_robots_decision d;
    ASSERT_EQ(crawl_robots_allowed(r, "/private/x", 10, &d), 0);
    ASSERT_EQ(d.reason, CRAWL_ROBOTS_BY_RULE);
    ASSERT_EQ(d.line, 3);
    CU_ASSERT_STRING_EQUAL(d.rule, "Disallow: /private");
    ASSERT_EQ(crawl_robots_allowed(r, "/private/ok", 11, &d), 1);
    ASSERT_EQ(d.line, 4);
    CU_ASSERT_STRING_EQUAL(d.rule, "Allow: /private/ok");
    ASSERT_EQ(crawl_robots_allowed(r, "/public", 7, &d), 1);
    ASSERT_EQ(d.reason, CRAWL_ROBOTS_NO_MATCH);
    ASSERT_EQ(d.line, 0);
    CU_ASSERT_PTR_NULL(d.rule);
    ASSERT_EQ(crawl_robots_allowed(r, "/robots.txt", 11, &d), 1);
    ASSERT_EQ(d.reason, CRAWL_ROBOTS_ROBOTS_TXT);
    /* an empty path is "/"; a path without '/' gets one */
    ASSERT_EQ(crawl_robots_allowed(r, "", 0, NULL), 1);
    ASSERT_EQ(crawl_robots_allowed(r, "private", 7, NULL), 0);
    /* lines: CRLF counts once, CR alone counts */
    crawl_robots_free(r);
    t = "User-agent: *\r\n\r\nDisallow: /a\rDisallow: /b\n";
    r = parse(t, strlen(t), "x");
    ASSERT_EQ(crawl_robots_allowed(r, "/b", 2, &d), 0);
    ASSERT_EQ(d.line, 4);
    ASSERT_EQ(crawl_robots_info(r)->lines, 4);
    crawl_robots_free(r);
}

static void test_robots_sitemaps_and_delay(void)
{
    const char *t = "Sitemap: https://example.com/s1.xml\n"
                    "User-agent: *\nCrawl-delay: 2\nDisallow: /x\n"
                    "Site-map: https://example.com/s2.xml\n"
                    "User-agent: simcrawl\nCrawl-delay: 5.5\nCrawl-delay: 3\n"
                    "User-agent: greedy\nCrawl-delay: 100\n"
                    "User-agent: bad\nCrawl-delay: soon\nSitemap:\n";
    struct crawl_robots *r = parse(t, strlen(t), "simcrawl");
    ASSERT_EQ(crawl_robots_sitemap_count(r), 2);
    CU_ASSERT_STRING_EQUAL(crawl_robots_sitemap(r, 0), "https://example.com/s1.xml");
    CU_ASSERT_STRING_EQUAL(crawl_robots_sitemap(r, 1), "https://example.com/s2.xml");
    CU_ASSERT_PTR_NULL(crawl_robots_sitemap(r, 2));
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_crawl_delay(r), 5.5, 1e-9); /* the largest */
    crawl_robots_free(r);
    r = parse(t, strlen(t), "other");
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_crawl_delay(r), 2.0, 1e-9); /* the '*' group's */
    crawl_robots_free(r);
    r = parse(t, strlen(t), "greedy");
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_crawl_delay(r), CRAWL_ROBOTS_MAX_CRAWL_DELAY, 1e-9);
    crawl_robots_free(r);
    struct crawl_robots_opts o;
    crawl_robots_opts_init(&o);
    o.max_crawl_delay = 10;
    ASSERT_EQ(crawl_robots_parse(t, strlen(t), "greedy", &o, &r), CRAWL_OK);
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_crawl_delay(r), 10.0, 1e-9);
    crawl_robots_free(r);
    r = parse(t, strlen(t), "bad");
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_crawl_delay(r), 0.0, 1e-9);
    crawl_robots_free(r);
}

/* 600 KiB: rules in the first 512 KiB apply, the rest is ignored and counted. */
static void test_robots_large_file(void)
{
    size_t cap = 700 * 1024;
    char *t = malloc(cap);
    CU_ASSERT_PTR_NOT_NULL_FATAL(t);
    size_t n = (size_t)snprintf(t, cap, "User-agent: *\nDisallow: /first\n");
    unsigned i = 0;
    while (n < 600 * 1024)
        n += (size_t)snprintf(t + n, cap - n, "Disallow: /filler/%08u/path\n", i++);
    n += (size_t)snprintf(t + n, cap - n, "Disallow: /last\n");
    struct crawl_robots *r = parse(t, n, "b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    ASSERT_EQ(crawl_robots_allowed(r, "/first", 6, NULL), 0);
    ASSERT_EQ(crawl_robots_allowed(r, "/filler/00000100/path", 21, NULL), 0);
    ASSERT_EQ(crawl_robots_allowed(r, "/last", 5, NULL), 1);
    const struct crawl_robots_info *in = crawl_robots_info(r);
    ASSERT_EQ(in->bytes, n);
    CU_ASSERT(in->bytes_ignored >= n - CRAWL_ROBOTS_MAX_BYTES);
    CU_ASSERT(in->bytes_ignored < n - CRAWL_ROBOTS_MAX_BYTES + 40);
    CU_ASSERT(in->rules > 10000);
    crawl_robots_free(r);

    /* the line cut by the limit is dropped whole: "Disallow: /ab" must not become "/a" */
    struct crawl_robots_opts o;
    crawl_robots_opts_init(&o);
    const char *s = "User-agent: *\nDisallow: /zz\nAllow: /abcdef\n";
    o.max_bytes = strlen("User-agent: *\nDisallow: /zz\nAllow: /ab");
    ASSERT_EQ(crawl_robots_parse(s, strlen(s), "b", &o, &r), CRAWL_OK);
    ASSERT_EQ(crawl_robots_info(r)->rules, 1);
    ASSERT_EQ(crawl_robots_info(r)->bytes_ignored, strlen("Allow: /abcdef\n"));
    crawl_robots_free(r);
    free(t);
}

static void test_robots_caps(void)
{
    struct crawl_robots_opts o;
    crawl_robots_opts_init(&o);
    o.max_rules = 2;
    const char *t = "User-agent: *\nDisallow: /a\nDisallow: /b\nDisallow: /c\nDisallow: /d\n";
    struct crawl_robots *r = NULL;
    ASSERT_EQ(crawl_robots_parse(t, strlen(t), "b", &o, &r), CRAWL_OK);
    ASSERT_EQ(crawl_robots_info(r)->rules, 2);
    ASSERT_EQ(crawl_robots_info(r)->rules_ignored, 2);
    ASSERT_EQ(crawl_robots_allowed(r, "/b", 2, NULL), 0);
    ASSERT_EQ(crawl_robots_allowed(r, "/c", 2, NULL), 1);
    crawl_robots_free(r);

    /* a line longer than CRAWL_ROBOTS_MAX_LINE is cut, the next line still parses */
    size_t big = CRAWL_ROBOTS_MAX_LINE * 2;
    char *l = malloc(big + 64);
    CU_ASSERT_PTR_NOT_NULL_FATAL(l);
    size_t n = (size_t)sprintf(l, "User-agent: *\nDisallow: /");
    memset(l + n, 'a', big);
    n += big;
    n += (size_t)sprintf(l + n, "\nDisallow: /b\n");
    r = parse(l, n, "b");
    ASSERT_EQ(crawl_robots_allowed(r, "/b", 2, NULL), 0);
    ASSERT_EQ(crawl_robots_info(r)->lines, 3);
    crawl_robots_free(r);
    free(l);

    /* bad agents */
    ASSERT_EQ(crawl_robots_parse("", 0, "", NULL, &r), CRAWL_EINVAL);
    ASSERT_EQ(crawl_robots_parse("", 0, "/1.0", NULL, &r), CRAWL_EINVAL);
    ASSERT_EQ(crawl_robots_parse("", 0, "2bot", NULL, &r), CRAWL_EINVAL);
    CU_ASSERT_PTR_NULL(r);
    crawl_robots_free(NULL);
}

static void test_robots_binary_input(void)
{
    unsigned char junk[4096];
    unsigned x = 12345;
    for (size_t i = 0; i < sizeof junk; i++) {
        x = x * 1103515245u + 12345u;
        junk[i] = (unsigned char)(x >> 16);
    }
    memcpy(junk + 100, "\nUser-agent: *\nDisallow: /\n", 27);
    struct crawl_robots *r = parse((const char *)junk, sizeof junk, "b");
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    (void)crawl_robots_allowed(r, (const char *)junk, sizeof junk, NULL);
    CU_ASSERT(crawl_robots_info(r)->lines > 0);
    crawl_robots_free(r);
    /* NUL bytes inside the text are ordinary bytes */
    const char nul[] = "User-agent: *\nDisallow: /a\0b\nDisallow: /c\n";
    r = parse(nul, sizeof nul - 1, "b");
    ASSERT_EQ(crawl_robots_allowed(r, "/c", 2, NULL), 0);
    crawl_robots_free(r);
}

/* "/ *a*a*a..." against a long run of 'a' must stay polynomial (no exponential backtracking). */
static void test_robots_pathological_pattern(void)
{
    char rule[256];
    size_t n = (size_t)snprintf(rule, sizeof rule, "User-agent: *\nDisallow: /");
    for (int i = 0; i < 30; i++)
        n += (size_t)snprintf(rule + n, sizeof rule - n, "*a");
    n += (size_t)snprintf(rule + n, sizeof rule - n, "*b\n");
    struct crawl_robots *r = parse(rule, n, "b");
    size_t plen = 20000;
    char *path = malloc(plen + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(path);
    path[0] = '/';
    memset(path + 1, 'a', plen - 1);
    path[1] = 'b'; /* a 'b' only before the a's: the bloom prefilter passes, matching fails */
    ASSERT_EQ(crawl_robots_allowed(r, path, plen, NULL), 1);
    CU_ASSERT(!crawl__robots_wildmatch("*a*a*a*a*a*a*a*a*a*a*b", 22, path + 1, plen - 1, 0));
    path[plen - 1] = 'b';
    ASSERT_EQ(crawl_robots_allowed(r, path, plen, NULL), 0);
    free(path);
    crawl_robots_free(r);
}

static void test_robots_wildmatch_and_normalize(void)
{
    CU_ASSERT(crawl__robots_wildmatch("a*c", 3, "abc", 3, 1));
    CU_ASSERT(crawl__robots_wildmatch("a*c", 3, "abcd", 4, 0));
    CU_ASSERT(!crawl__robots_wildmatch("a*c", 3, "abcd", 4, 1));
    CU_ASSERT(crawl__robots_wildmatch("*", 1, "", 0, 1));
    CU_ASSERT(crawl__robots_wildmatch("", 0, "x", 1, 0));
    CU_ASSERT(!crawl__robots_wildmatch("", 0, "x", 1, 1));
    CU_ASSERT(crawl__robots_wildmatch("*a*b", 4, "xxaxxbxx", 8, 0));
    CU_ASSERT(!crawl__robots_wildmatch("*a*b", 4, "xxbxxaxx", 8, 0));
    CU_ASSERT(crawl__robots_wildmatch("a**b", 4, "ab", 2, 1));
    char out[64];
    const char *in = "/a%2fb%7e%41\xC3\xA9 %zz%";
    size_t n = crawl__url_normalise_escapes(in, strlen(in), out);
    out[n] = '\0';
    /* the URL canonicaliser's normaliser: a stray '%' is %25 (it was kept as is when
     * robots.c had a normaliser of its own) */
    CU_ASSERT_STRING_EQUAL(out, "/a%2Fb~A%C3%A9%20%25zz%25");
    /* idempotent, and the same as the canonical URL's path */
    char again[96];
    size_t m = crawl__url_normalise_escapes(out, n, again);
    again[m] = '\0';
    CU_ASSERT_STRING_EQUAL(again, out);
    char *canon = NULL;
    ASSERT_EQ(crawl_url_canonicalise("http://example.com/a%2fb%7e%41\xC3\xA9 %zz%", NULL, &canon),
              CRAWL_OK);
    CU_ASSERT_STRING_EQUAL(canon, "http://example.com/a%2Fb~A%C3%A9%20%25zz%25");
    free(canon);
}

static void test_robots_url_path(void)
{
    static const struct {
        const char *url, *path;
    } cases[] = {
        {"http://example.com/a/b?c=d#frag", "/a/b?c=d"},
        {"https://example.com", ""},
        {"http://example.com?q=1", "?q=1"},
        {"http://example.com/", "/"},
        {"//example.com/x", "/x"},
        {"/bare/path?x", "/bare/path?x"},
        {"/a#b", "/a"},
        {"http://u:p@example.com:8080/p;params?q", "/p;params?q"},
        {"example.com/x", "/x"},
        {"http://example.com#/a", ""},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        size_t len;
        const char *p = crawl_robots_url_path(cases[i].url, &len);
        ASSERT_EQ(len, strlen(cases[i].path));
        CU_ASSERT(strncmp(p, cases[i].path, len) == 0);
    }
    /* a URL whose path starts with '?' is matched as "/?..." */
    const char *t = "User-agent: *\nDisallow: /?q\n";
    struct crawl_robots *r = parse(t, strlen(t), "b");
    size_t len;
    const char *p = crawl_robots_url_path("http://example.com?q=1", &len);
    ASSERT_EQ(crawl_robots_allowed(r, p, len, NULL), 0);
    crawl_robots_free(r);
}

/* ---- the fetch policy, with a fake clock ---- */

static struct crawl_robots_outcome outcome(int status, const char *body)
{
    struct crawl_robots_outcome o;
    memset(&o, 0, sizeof o);
    o.status = status;
    o.max_age = -1;
    o.body = body;
    o.len = body ? strlen(body) : 0;
    return o;
}

static enum crawl_robots_verdict check(struct crawl_robots_host *h, const char *path, double now)
{
    return crawl_robots_host_check(h, path, strlen(path), now, NULL);
}

static struct crawl_robots_host *host(const struct crawl_robots_policy_opts *o)
{
    struct crawl_robots_host *h = NULL;
    ASSERT_EQ(crawl_robots_host_new("simcrawl/0.1", o, &h), CRAWL_OK);
    return h;
}

static void test_robots_policy_2xx_and_cache(void)
{
    struct crawl_robots_host *h = host(NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    struct crawl_robots_decision d;
    ASSERT_EQ(crawl_robots_host_check(h, "/x", 2, 0, &d), CRAWL_ROBOTS_FETCH);
    ASSERT_EQ(d.reason, CRAWL_ROBOTS_NOT_FETCHED);
    CU_ASSERT(crawl_robots_host_needs_fetch(h, 0));

    struct crawl_robots_outcome o =
        outcome(200, "User-agent: *\nDisallow: /private\nCrawl-delay: 4\n");
    ASSERT_EQ(crawl_robots_host_update(h, &o, 1000), CRAWL_OK);
    ASSERT_EQ(check(h, "/private/a", 1000), CRAWL_ROBOTS_DISALLOW);
    ASSERT_EQ(check(h, "/public", 1000), CRAWL_ROBOTS_ALLOW);
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_host_crawl_delay(h), 4.0, 1e-9);
    CU_ASSERT_PTR_NOT_NULL(crawl_robots_host_rules(h));
    /* cached for 24 h, then stale: fetch again */
    CU_ASSERT(!crawl_robots_host_needs_fetch(h, 1000 + 86399));
    ASSERT_EQ(check(h, "/public", 1000 + 86399), CRAWL_ROBOTS_ALLOW);
    CU_ASSERT(crawl_robots_host_needs_fetch(h, 1000 + 86400));
    ASSERT_EQ(check(h, "/public", 1000 + 86400), CRAWL_ROBOTS_FETCH);
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_host_next_fetch(h), 1000 + 86400, 1e-9);

    /* max-age shortens the cache (not below a minute) */
    o.max_age = 600;
    ASSERT_EQ(crawl_robots_host_update(h, &o, 2000), CRAWL_OK);
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_host_next_fetch(h), 2600, 1e-9);
    o.max_age = 0;
    ASSERT_EQ(crawl_robots_host_update(h, &o, 3000), CRAWL_OK);
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_host_next_fetch(h), 3060, 1e-9);
    crawl_robots_host_free(h);

    /* a configured TTL: lower is honoured, higher than 24 h is clamped */
    struct crawl_robots_policy_opts po;
    crawl_robots_policy_opts_init(&po);
    po.cache_ttl = 3600;
    h = host(&po);
    o.max_age = -1;
    ASSERT_EQ(crawl_robots_host_update(h, &o, 0), CRAWL_OK);
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_host_next_fetch(h), 3600, 1e-9);
    crawl_robots_host_free(h);
    po.cache_ttl = 7 * 86400;
    h = host(&po);
    ASSERT_EQ(crawl_robots_host_update(h, &o, 0), CRAWL_OK);
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_host_next_fetch(h), 86400, 1e-9);
    crawl_robots_host_free(h);

    /* a truncated body: the cut line is dropped */
    h = host(NULL);
    o = outcome(200, "User-agent: *\nDisallow: /a\nAllow: /ab");
    o.truncated = 1;
    ASSERT_EQ(crawl_robots_host_update(h, &o, 0), CRAWL_OK);
    ASSERT_EQ(check(h, "/a", 1), CRAWL_ROBOTS_DISALLOW);
    ASSERT_EQ(check(h, "/ab", 1), CRAWL_ROBOTS_DISALLOW);
    crawl_robots_host_free(h);

    struct crawl_robots_host *bad = NULL;
    ASSERT_EQ(crawl_robots_host_new("/0.1", NULL, &bad), CRAWL_EINVAL);
    CU_ASSERT_PTR_NULL(bad);
}

static void test_robots_policy_unavailable(void)
{
    static const int statuses[] = {400, 401, 403, 404, 410, 451, 301, 302};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        struct crawl_robots_host *h = host(NULL);
        struct crawl_robots_outcome o = outcome(statuses[i], "User-agent: *\nDisallow: /\n");
        ASSERT_EQ(crawl_robots_host_update(h, &o, 0), CRAWL_OK);
        struct crawl_robots_decision d;
        ASSERT_EQ(crawl_robots_host_check(h, "/x", 2, 10, &d), CRAWL_ROBOTS_ALLOW);
        ASSERT_EQ(d.reason, CRAWL_ROBOTS_NO_ROBOTS);
        CU_ASSERT(!crawl_robots_host_needs_fetch(h, 10));
        crawl_robots_host_free(h);
    }
    /* more than five redirects: unavailable (RFC 9309 2.3.1.2) */
    struct crawl_robots_host *h = host(NULL);
    struct crawl_robots_outcome o = outcome(200, "User-agent: *\nDisallow: /\n");
    o.too_many_redirects = 1;
    ASSERT_EQ(crawl_robots_host_update(h, &o, 0), CRAWL_OK);
    ASSERT_EQ(check(h, "/x", 1), CRAWL_ROBOTS_ALLOW);
    crawl_robots_host_free(h);
}

static void test_robots_policy_unreachable_backoff(void)
{
    static const int statuses[] = {500, 502, 503, 599, 429, 0, 100};
    for (size_t i = 0; i < sizeof statuses / sizeof statuses[0]; i++) {
        struct crawl_robots_host *h = host(NULL);
        struct crawl_robots_outcome o = outcome(statuses[i], NULL);
        ASSERT_EQ(crawl_robots_host_update(h, &o, 100), CRAWL_OK);
        struct crawl_robots_decision d;
        ASSERT_EQ(crawl_robots_host_check(h, "/", 1, 101, &d), CRAWL_ROBOTS_DEFER);
        ASSERT_EQ(d.reason, CRAWL_ROBOTS_UNREACHABLE);
        CU_ASSERT_DOUBLE_EQUAL(d.retry_at, 100 + CRAWL_ROBOTS_BACKOFF_INITIAL, 1e-9);
        ASSERT_EQ(d.allowed, 0);
        crawl_robots_host_free(h);
    }
    /* exponential backoff, capped */
    struct crawl_robots_policy_opts po;
    crawl_robots_policy_opts_init(&po);
    po.backoff_initial = 10;
    po.backoff_max = 50;
    struct crawl_robots_host *h = host(&po);
    struct crawl_robots_outcome o = outcome(503, NULL);
    double now = 0;
    static const double want[] = {10, 20, 40, 50, 50};
    for (int i = 0; i < 5; i++) {
        ASSERT_EQ(crawl_robots_host_update(h, &o, now), CRAWL_OK);
        ASSERT_EQ(crawl_robots_host_failures(h), (unsigned)i + 1);
        CU_ASSERT_DOUBLE_EQUAL(crawl_robots_host_next_fetch(h) - now, want[i], 1e-9);
        CU_ASSERT(!crawl_robots_host_needs_fetch(h, now + want[i] - 1));
        ASSERT_EQ(check(h, "/x", now + want[i] - 1), CRAWL_ROBOTS_DEFER);
        ASSERT_EQ(check(h, "/x", now + want[i]), CRAWL_ROBOTS_FETCH);
        now += want[i];
    }
    /* recovery */
    o = outcome(200, "User-agent: *\nDisallow: /x\n");
    ASSERT_EQ(crawl_robots_host_update(h, &o, now), CRAWL_OK);
    ASSERT_EQ(crawl_robots_host_failures(h), 0);
    ASSERT_EQ(check(h, "/x", now), CRAWL_ROBOTS_DISALLOW);
    ASSERT_EQ(check(h, "/y", now), CRAWL_ROBOTS_ALLOW);
    crawl_robots_host_free(h);
}

static void test_robots_policy_long_outage(void)
{
    struct crawl_robots_policy_opts po;
    crawl_robots_policy_opts_init(&po);
    po.outage_limit = 1000;
    po.backoff_max = 100;

    /* a good copy, then 5xx: disallowed (not the cached rules) until the outage is long */
    struct crawl_robots_host *h = host(&po);
    struct crawl_robots_outcome good = outcome(200, "User-agent: *\nDisallow: /x\n");
    struct crawl_robots_outcome down = outcome(500, NULL);
    ASSERT_EQ(crawl_robots_host_update(h, &good, 0), CRAWL_OK);
    ASSERT_EQ(crawl_robots_host_update(h, &down, 10), CRAWL_OK);
    ASSERT_EQ(check(h, "/y", 11), CRAWL_ROBOTS_DEFER);
    double t = 10;
    while (t < 1010) {
        t = crawl_robots_host_next_fetch(h);
        ASSERT_EQ(crawl_robots_host_update(h, &down, t), CRAWL_OK);
    }
    /* now past the limit: the last good copy applies again, retries go on */
    ASSERT_EQ(check(h, "/y", t + 1), CRAWL_ROBOTS_ALLOW);
    ASSERT_EQ(check(h, "/x", t + 1), CRAWL_ROBOTS_DISALLOW);
    CU_ASSERT(crawl_robots_host_needs_fetch(h, crawl_robots_host_next_fetch(h)));
    crawl_robots_host_free(h);

    /* never a good copy: after the limit, allow all (robots.txt taken as unavailable) */
    h = host(&po);
    ASSERT_EQ(crawl_robots_host_update(h, &down, 0), CRAWL_OK);
    for (t = 0; t < 1000;) {
        t = crawl_robots_host_next_fetch(h);
        ASSERT_EQ(crawl_robots_host_update(h, &down, t), CRAWL_OK);
    }
    struct crawl_robots_decision d;
    ASSERT_EQ(crawl_robots_host_check(h, "/x", 2, t + 1, &d), CRAWL_ROBOTS_ALLOW);
    ASSERT_EQ(d.reason, CRAWL_ROBOTS_NO_ROBOTS);
    crawl_robots_host_free(h);

    /* a 4xx reading before the outage: allow-all applies after the limit too */
    h = host(&po);
    struct crawl_robots_outcome missing = outcome(404, NULL);
    ASSERT_EQ(crawl_robots_host_update(h, &missing, 0), CRAWL_OK);
    ASSERT_EQ(crawl_robots_host_update(h, &down, 100), CRAWL_OK);
    ASSERT_EQ(check(h, "/x", 101), CRAWL_ROBOTS_DEFER);
    crawl_robots_host_free(h);

    /* outage_limit < 0: stay disallowed */
    po.outage_limit = -1;
    h = host(&po);
    for (t = 0; t < 100000;) {
        ASSERT_EQ(crawl_robots_host_update(h, &down, t), CRAWL_OK);
        t = crawl_robots_host_next_fetch(h);
    }
    ASSERT_EQ(check(h, "/x", t - 1), CRAWL_ROBOTS_DEFER);
    crawl_robots_host_free(h);
}

/* ---- fetching against the loopback server ---- */

static char big_robots[1 << 20];

static void fill_big_robots(void)
{
    size_t n = (size_t)snprintf(big_robots, sizeof big_robots, "User-agent: *\nDisallow: /early\n");
    unsigned i = 0;
    while (n + 64 < sizeof big_robots)
        n += (size_t)snprintf(big_robots + n, sizeof big_robots - n, "Disallow: /f/%010u\n", i++);
    memset(big_robots + n, '\n', sizeof big_robots - n);
    memcpy(big_robots + sizeof big_robots - 16, "Disallow: /late\n", 16);
}

static const char ROBOTS_OK[] = "User-agent: *\nDisallow: /private\n";

/* robots.txt fetched the crawler's way: a CRAWL_FETCH_ANY transfer on the crawl's fetcher,
 * its outcome built by the function the crawl loop calls (robots_done in crawler/crawl.c).
 * The response returned holds what the outcome borrows: free it with crawl_response_free. */
static struct crawl_response *fetch_any(const char *url, long timeout_ms,
                                        struct crawl_robots_outcome *o, int *no_answer)
{
    struct crawl_fetcher_opts fo = {.concurrency = 1, .timeout = timeout_ms / 1000.0,
                                    .connect_timeout = timeout_ms / 3000.0,
                                    .user_agent = "simcrawl/0.1 (+test)"};
    struct crawl_fetcher *fx = NULL;
    ASSERT_EQ(crawl_fetcher_new(&fo, &fx), CRAWL_OK);
    if (!fx)
        return NULL;
    struct crawl_response *r = NULL;
    ASSERT_EQ(crawl_fetcher_add(fx, url, CRAWL_FETCH_ANY, NULL), CRAWL_OK);
    for (int i = 0; i < 1000 && !(r = crawl_fetcher_next(fx)); i++) /* bounded: 100 s */
        ASSERT_EQ(crawl_fetcher_run(fx, 100), CRAWL_OK);
    crawl_fetcher_free(fx);
    CU_ASSERT_PTR_NOT_NULL_FATAL(r);
    int na = crawl__robots_outcome_from_response(r, o);
    if (no_answer)
        *no_answer = na;
    return r;
}

static struct crawl_response *fetch_url(struct test_httpd *h, const char *path, long timeout_ms,
                                        struct crawl_robots_outcome *o)
{
    char url[128];
    return fetch_any(test_httpd_url(h, path, url, sizeof url), timeout_ms, o, NULL);
}

static void test_robots_fetch_statuses(void)
{
    fill_big_robots();
    static char hop[6][64];
    const struct test_route routes[] = {
        {"/ok/robots.txt", 0, {.status = 200, .content_type = "text/plain", .body = ROBOTS_OK,
                               .body_len = sizeof ROBOTS_OK - 1,
                               .headers = "Cache-Control: public, max-age=3600"}},
        {"/moved/robots.txt", 0, {.status = 301, .headers = "Location: /ok/robots.txt"}},
        {"/missing/robots.txt", 0, {.status = 404, .body = "no", .body_len = 2}},
        {"/long/robots.txt", 0, {.status = 200, .body = ROBOTS_OK, .body_len = sizeof ROBOTS_OK - 1,
                                 .headers = "Cache-Control: max-age=2592000"}},
        {"/plain/robots.txt", 0, {.status = 200, .body = ROBOTS_OK, .body_len = sizeof ROBOTS_OK - 1}},
        {"/busy/robots.txt", 0, {.status = 429, .headers = "Retry-After: 60"}},
        {"/down/robots.txt", 0, {.status = 500, .body = "oops", .body_len = 4}},
        {"/hang/robots.txt", 0, {.fault = TEST_FAULT_HANG}},
        {"/reset/robots.txt", 0, {.status = 200, .body = ROBOTS_OK, .body_len = sizeof ROBOTS_OK - 1,
                                  .fault = TEST_FAULT_RESET}},
        {"/big/robots.txt", 0, {.status = 200, .body = big_robots, .body_len = sizeof big_robots}},
        {"/gz/robots.txt", 0, {.status = 200, .body = ROBOTS_OK, .body_len = sizeof ROBOTS_OK - 1,
                               .gzip = 1}},
        {"/loop/robots.txt", 0, {.status = 302, .headers = "Location: /loop/robots.txt"}},
        {"/r/1", 0, {.status = 301, .headers = hop[0]}},
        {"/r/2", 0, {.status = 301, .headers = hop[1]}},
        {"/r/3", 0, {.status = 301, .headers = hop[2]}},
        {"/r/4", 0, {.status = 301, .headers = hop[3]}},
        {"/r/5", 0, {.status = 301, .headers = hop[4]}},
        {"/r/6", 0, {.status = 301, .headers = hop[5]}},
    };
    /* a second server: redirects cross hosts (another origin) */
    struct test_httpd *other = test_httpd_start(routes, 2, NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(other);
    struct test_httpd *h = test_httpd_start(routes, sizeof routes / sizeof routes[0], NULL, NULL);
    CU_ASSERT_PTR_NOT_NULL_FATAL(h);
    /* /r/1 -> /r/2 -> ... -> /r/5 -> other:/ok/robots.txt (5 redirects); /r/6 -> /r/1 (6) */
    for (int i = 0; i < 4; i++)
        snprintf(hop[i], sizeof hop[i], "Location: /r/%d", i + 2);
    snprintf(hop[4], sizeof hop[4], "Location: http://127.0.0.1:%u/ok/robots.txt",
             (unsigned)test_httpd_port(other));
    snprintf(hop[5], sizeof hop[5], "Location: /r/1");

    struct crawl_robots_outcome o;
    struct crawl_response *r;
    struct crawl_robots_host *ph = host(NULL);

    r = fetch_url(h, "/ok/robots.txt", 5000, &o);
    ASSERT_EQ(o.status, 200);
    ASSERT_EQ(o.len, sizeof ROBOTS_OK - 1);
    CU_ASSERT_DOUBLE_EQUAL(o.max_age, 3600, 1e-9);
    ASSERT_EQ(o.redirects, 0);
    ASSERT_EQ(crawl_robots_host_update(ph, &o, 0), CRAWL_OK);
    ASSERT_EQ(check(ph, "/private", 1), CRAWL_ROBOTS_DISALLOW);
    CU_ASSERT_STRING_EQUAL(test_httpd_header(test_httpd_last(h, "/ok/robots.txt"), "User-Agent"),
                           "simcrawl/0.1 (+test)");
    /* the crawler honours max-age: this reading is fetched again after an hour */
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_host_next_fetch(ph), 3600, 1e-9);
    crawl_response_free(r);

    /* ... but never keeps one past 24 hours (RFC 9309 2.4), nor without max-age */
    struct crawl_robots_host *ch = host(NULL);
    r = fetch_url(h, "/long/robots.txt", 5000, &o);
    CU_ASSERT_DOUBLE_EQUAL(o.max_age, 2592000, 1e-9);
    ASSERT_EQ(crawl_robots_host_update(ch, &o, 0), CRAWL_OK);
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_host_next_fetch(ch), CRAWL_ROBOTS_CACHE_TTL, 1e-9);
    crawl_response_free(r);
    r = fetch_url(h, "/plain/robots.txt", 5000, &o);
    CU_ASSERT(o.max_age < 0);
    ASSERT_EQ(crawl_robots_host_update(ch, &o, 100), CRAWL_OK);
    CU_ASSERT_DOUBLE_EQUAL(crawl_robots_host_next_fetch(ch), 100 + CRAWL_ROBOTS_CACHE_TTL, 1e-9);
    crawl_response_free(r);
    crawl_robots_host_free(ch);

    r = fetch_url(h, "/moved/robots.txt", 5000, &o);
    ASSERT_EQ(o.status, 200);
    ASSERT_EQ(o.redirects, 1);
    CU_ASSERT(o.final_url && strstr(o.final_url, "/ok/robots.txt"));
    ASSERT_EQ(o.len, sizeof ROBOTS_OK - 1);
    crawl_response_free(r);

    r = fetch_url(h, "/r/1", 5000, &o); /* five redirects, the last to another server: followed */
    ASSERT_EQ(o.status, 200);
    ASSERT_EQ(o.redirects, 5);
    CU_ASSERT_FALSE(o.too_many_redirects);
    ASSERT_EQ(test_httpd_count(other, "/ok/robots.txt"), 1);
    crawl_response_free(r);

    r = fetch_url(h, "/r/6", 5000, &o); /* six: too many */
    CU_ASSERT(o.too_many_redirects);
    ASSERT_EQ(crawl_robots_host_update(ph, &o, 0), CRAWL_OK);
    ASSERT_EQ(check(ph, "/private", 1), CRAWL_ROBOTS_ALLOW);
    crawl_response_free(r);

    r = fetch_url(h, "/loop/robots.txt", 5000, &o);
    CU_ASSERT(o.too_many_redirects);
    CU_ASSERT(test_httpd_count(h, "/loop/robots.txt") == CRAWL_ROBOTS_MAX_REDIRECTS + 1);
    crawl_response_free(r);

    r = fetch_url(h, "/missing/robots.txt", 5000, &o);
    ASSERT_EQ(o.status, 404);
    ASSERT_EQ(crawl_robots_host_update(ph, &o, 0), CRAWL_OK);
    ASSERT_EQ(check(ph, "/private", 1), CRAWL_ROBOTS_ALLOW);
    crawl_response_free(r);

    r = fetch_url(h, "/busy/robots.txt", 5000, &o);
    ASSERT_EQ(o.status, 429);
    ASSERT_EQ(crawl_robots_host_update(ph, &o, 0), CRAWL_OK);
    ASSERT_EQ(check(ph, "/anything", 1), CRAWL_ROBOTS_DEFER);
    crawl_response_free(r);

    r = fetch_url(h, "/down/robots.txt", 5000, &o);
    ASSERT_EQ(o.status, 500);
    ASSERT_EQ(crawl_robots_host_update(ph, &o, 0), CRAWL_OK);
    ASSERT_EQ(check(ph, "/anything", 1), CRAWL_ROBOTS_DEFER);
    crawl_response_free(r);

    r = fetch_url(h, "/hang/robots.txt", 400, &o); /* bounded by the timeout */
    ASSERT_EQ(o.status, 0);
    CU_ASSERT(strstr(o.error, "imeout") || strstr(o.error, "timed out"));
    crawl_robots_host_free(ph);
    ph = host(NULL);
    ASSERT_EQ(crawl_robots_host_update(ph, &o, 0), CRAWL_OK);
    ASSERT_EQ(check(ph, "/anything", 1), CRAWL_ROBOTS_DEFER);
    crawl_response_free(r);

    r = fetch_url(h, "/reset/robots.txt", 5000, &o);
    ASSERT_EQ(o.status, 0);
    CU_ASSERT_PTR_NULL(o.body);
    CU_ASSERT(o.error[0] != '\0');
    crawl_response_free(r);

    r = fetch_url(h, "/gz/robots.txt", 5000, &o);
    ASSERT_EQ(o.status, 200);
    CU_ASSERT(o.len == sizeof ROBOTS_OK - 1 && memcmp(o.body, ROBOTS_OK, o.len) == 0);
    crawl_response_free(r);

    r = fetch_url(h, "/big/robots.txt", 10000, &o); /* 1 MB: 512 KiB kept, marked truncated */
    ASSERT_EQ(o.status, 200);
    CU_ASSERT(o.truncated);
    ASSERT_EQ(o.len, CRAWL_ROBOTS_MAX_BYTES);
    ASSERT_EQ(crawl_robots_host_update(ph, &o, 0), CRAWL_OK);
    ASSERT_EQ(check(ph, "/early", 1), CRAWL_ROBOTS_DISALLOW);
    ASSERT_EQ(check(ph, "/late", 1), CRAWL_ROBOTS_ALLOW);
    ASSERT_EQ(check(ph, "/f/0000000100", 1), CRAWL_ROBOTS_DISALLOW);
    crawl_response_free(r);
    crawl_robots_host_free(ph);

    /* http and https only: another scheme is no answer, and no file is read */
    int no_answer = 0;
    r = fetch_any("ftp://127.0.0.1/robots.txt", 5000, &o, &no_answer);
    ASSERT_EQ(o.status, 0);
    CU_ASSERT(no_answer);
    CU_ASSERT(strstr(o.error, "rotocol") != NULL);
    crawl_response_free(r);
    r = fetch_any("file:///etc/passwd", 5000, &o, &no_answer);
    ASSERT_EQ(o.status, 0);
    CU_ASSERT_PTR_NULL(o.body);
    CU_ASSERT(no_answer);
    crawl_response_free(r);
    test_httpd_stop(h);
    test_httpd_stop(other);
}

static void test_robots_max_age(void)
{
    static const struct {
        const char *head;
        double age;
    } cases[] = {
        {"HTTP/1.1 200 OK\r\nCache-Control: max-age=60\r\n\r\n", 60},
        {"HTTP/1.1 200 OK\r\ncache-control:public,MAX-AGE = 5, no-transform\r\n\r\n", 5},
        {"HTTP/1.1 200 OK\r\nCache-Control: max-age=\"7\"\r\n\r\n", 7},
        {"HTTP/1.1 200 OK\r\nCache-Control: s-maxage=60\r\n\r\n", -1},
        {"HTTP/1.1 200 OK\r\nCache-Control: private=\"x, max-age=9\", max-age=30\r\n\r\n", 30},
        {"HTTP/1.1 200 OK\r\nCache-Control: max-age=600\r\nCache-Control: max-age=20\r\n\r\n", 20},
        {"HTTP/1.1 200 OK\r\nCache-Control: no-cache\r\n\r\n", -1},
        {"HTTP/1.1 200 OK\r\nCache-Control: max-age=\r\n\r\n", -1},
        {"HTTP/1.1 200 OK\r\nX-Cache-Control: max-age=60\r\n\r\n", -1},
        {"HTTP/1.1 200 OK\r\nCache-Control: max-age=99999999999999999999\r\n\r\n", 1e9},
        {"HTTP/1.1 200 OK\r\n\r\n", -1},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++)
        CU_ASSERT_DOUBLE_EQUAL(crawl__robots_max_age(cases[i].head, strlen(cases[i].head)),
                               cases[i].age, 1e-9);
}

extern void test_robots_register(void);
void test_robots_register(void)
{
    CU_pSuite s = CU_add_suite("robots", NULL, NULL);
    CU_add_test(s, "test_robots_rfc9309_examples", test_robots_rfc9309_examples);
    CU_add_test(s, "test_robots_groups", test_robots_groups);
    CU_add_test(s, "test_robots_longest_match", test_robots_longest_match);
    CU_add_test(s, "test_robots_wildcards", test_robots_wildcards);
    CU_add_test(s, "test_robots_percent_encoding", test_robots_percent_encoding);
    CU_add_test(s, "test_robots_syntax", test_robots_syntax);
    CU_add_test(s, "test_robots_decision_detail", test_robots_decision_detail);
    CU_add_test(s, "test_robots_sitemaps_and_delay", test_robots_sitemaps_and_delay);
    CU_add_test(s, "test_robots_large_file", test_robots_large_file);
    CU_add_test(s, "test_robots_caps", test_robots_caps);
    CU_add_test(s, "test_robots_binary_input", test_robots_binary_input);
    CU_add_test(s, "test_robots_pathological_pattern", test_robots_pathological_pattern);
    CU_add_test(s, "test_robots_wildmatch_and_normalize", test_robots_wildmatch_and_normalize);
    CU_add_test(s, "test_robots_url_path", test_robots_url_path);
    CU_add_test(s, "test_robots_policy_2xx_and_cache", test_robots_policy_2xx_and_cache);
    CU_add_test(s, "test_robots_policy_unavailable", test_robots_policy_unavailable);
    CU_add_test(s, "test_robots_policy_unreachable_backoff", test_robots_policy_unreachable_backoff);
    CU_add_test(s, "test_robots_policy_long_outage", test_robots_policy_long_outage);
    CU_add_test(s, "test_robots_fetch_statuses", test_robots_fetch_statuses);
    CU_add_test(s, "test_robots_max_age", test_robots_max_age);
}
