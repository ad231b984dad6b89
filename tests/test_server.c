/*
 * Suite "server": the parts of the HTTP service (server/) that know nothing of
 * libmicrohttpd, one behaviour each: percent-decoding, ids, hex fingerprints, query
 * strings, routes, media types, bearer tokens (every byte compared), NDJSON lines (each
 * way a line can be wrong, and what a good one can hold), --listen addresses and
 * loopback, the JSON string writer, capped buffers, the metrics text, and the endpoints
 * on a filter in memory (api.c: what is refused before the body, the decisions, bulk
 * lines all checked first). The service over HTTP is tested in tests/cli/serve*.sh.
 */
#include <CUnit/CUnit.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdlib.h>
#include <string.h>

#include "filter/simcrawl.h"
#include "server/server_int.h"
#include "tests/testutil.h"

static void test_server_pct_decode(void)
{
    char out[64];
    ASSERT_EQ(server__pct_decode("a%2Fb%2fc+d", 11, 1, out), 7);
    CU_ASSERT_STRING_EQUAL(out, "a/b/c d");
    ASSERT_EQ(server__pct_decode("a+b", 3, 0, out), 3); /* a path: '+' is itself */
    CU_ASSERT_STRING_EQUAL(out, "a+b");
    ASSERT_EQ(server__pct_decode("a%00b", 5, 1, out), 3);
    ASSERT_EQ(memcmp(out, "a\0b", 3), 0);
    ASSERT_EQ(server__pct_decode("%", 1, 1, out), -1);
    ASSERT_EQ(server__pct_decode("%4", 2, 1, out), -1);
    ASSERT_EQ(server__pct_decode("%4g", 3, 1, out), -1);
    ASSERT_EQ(server__pct_decode("", 0, 1, out), 0);
}

static void test_server_ids_and_hex(void)
{
    uint64_t fp = 0;
    ASSERT_EQ(server__hex16("0123456789ABCDEF", 16, &fp), 0);
    ASSERT_EQ(fp, 0x0123456789abcdefULL);
    ASSERT_EQ(server__hex16("0123456789abcde", 15, &fp), -1);
    ASSERT_EQ(server__hex16("0123456789abcdef0", 17, &fp), -1);
    ASSERT_EQ(server__hex16("0123456789abcdeg", 16, &fp), -1);
    ASSERT_EQ(server__hex16("+123456789abcdef", 16, &fp), -1);
    CU_ASSERT_PTR_NULL(server__id_problem("https://x/\xc3\xa9", 12));
    CU_ASSERT_STRING_EQUAL(server__id_problem("", 0), "is empty");
    CU_ASSERT_STRING_EQUAL(server__id_problem("a\0b", 3), "contains a NUL byte");
    CU_ASSERT_STRING_EQUAL(server__id_problem("\xff", 1), "is not valid UTF-8");
    CU_ASSERT_STRING_EQUAL(server__id_problem("\xc0\xaf", 2), "is not valid UTF-8"); /* overlong */
    CU_ASSERT_STRING_EQUAL(server__id_problem("\xed\xa0\x80", 3),
                           "is not valid UTF-8"); /* surrogate */
    CU_ASSERT_STRING_EQUAL(server__id_problem("\xf4\x90\x80\x80", 4), "is not valid UTF-8");
    CU_ASSERT_PTR_NULL(server__id_problem("\xf4\x8f\xbf\xbf", 4)); /* U+10FFFF */
    char *big = malloc(SERVER_ID_MAX_BYTES + 1);
    CU_ASSERT_PTR_NOT_NULL_FATAL(big);
    memset(big, 'a', SERVER_ID_MAX_BYTES + 1);
    CU_ASSERT_PTR_NULL(server__id_problem(big, SERVER_ID_MAX_BYTES));
    CU_ASSERT_PTR_NOT_NULL(server__id_problem(big, SERVER_ID_MAX_BYTES + 1));
    free(big);
}

static void test_server_target_and_query(void)
{
    const char *path, *q;
    size_t pn, qn;
    const char *t = "/v1/check?id=a%26b&&insert=false&flag";
    server__target_split(t, strlen(t), &path, &pn, &q, &qn);
    ASSERT_EQ(pn, 9);
    ASSERT_EQ(qn, strlen("id=a%26b&&insert=false&flag"));
    struct server_param p;
    size_t pos = 0;
    ASSERT_EQ(server__query_next(q, qn, &pos, &p), 1);
    CU_ASSERT(p.name_len == 2 && memcmp(p.name, "id", 2) == 0 && p.value_len == 5 && p.has_value);
    ASSERT_EQ(server__query_next(q, qn, &pos, &p), 1); /* "&&": the empty pair skipped */
    CU_ASSERT(p.name_len == 6 && p.value_len == 5 && memcmp(p.value, "false", 5) == 0);
    ASSERT_EQ(server__query_next(q, qn, &pos, &p), 1);
    CU_ASSERT(p.name_len == 4 && !p.has_value && p.value_len == 0);
    ASSERT_EQ(server__query_next(q, qn, &pos, &p), 0);
    server__target_split("/healthz", 8, &path, &pn, &q, &qn);
    CU_ASSERT(pn == 8 && qn == 0);
}

static void test_server_route_and_types(void)
{
    const char *rest;
    size_t rn;
    ASSERT_EQ(server__route("/v1/check", 9, &rest, &rn), SERVER_EP_CHECK);
    ASSERT_EQ(server__route("/v1/check/", 10, &rest, &rn), SERVER_EP_OTHER);
    ASSERT_EQ(server__route("/v1/documents/a%2Fb", 19, &rest, &rn), SERVER_EP_DOCUMENTS);
    CU_ASSERT(rn == 5 && memcmp(rest, "a%2Fb", 5) == 0);
    ASSERT_EQ(server__route("/v1/documents", 13, &rest, &rn), SERVER_EP_OTHER);
    ASSERT_EQ(server__route("/metrics", 8, &rest, &rn), SERVER_EP_METRICS);
    CU_ASSERT_STRING_EQUAL(server__endpoint_name(SERVER_EP_CHECK_BULK), "check_bulk");
    ASSERT_EQ(server__body_kind(NULL), SERVER_BODY_NONE);
    ASSERT_EQ(server__body_kind(" text/html; charset=utf-8"), SERVER_BODY_PAGE);
    ASSERT_EQ(server__body_kind("image/png"), SERVER_BODY_PAGE);
    ASSERT_EQ(server__body_kind("Application/X-NDJSON"), SERVER_BODY_NDJSON);
    ASSERT_EQ(server__body_kind("application/x-www-form-urlencoded"), SERVER_BODY_FORM);
    ASSERT_EQ(server__body_kind("multipart/form-data; boundary=x"), SERVER_BODY_FORM);
    ASSERT_EQ(server__body_kind("application/json;charset=utf-8"), SERVER_BODY_JSON);
    ASSERT_EQ(server__body_kind(""), SERVER_BODY_NONE);
}

static void test_server_bearer(void)
{
    const char *tok = "s3cret";
    CU_ASSERT_TRUE(server__bearer_ok("Bearer s3cret", tok, 6));
    CU_ASSERT_TRUE(server__bearer_ok("bearer  s3cret ", tok, 6));
    CU_ASSERT_FALSE(server__bearer_ok("Bearer s3cre", tok, 6));
    CU_ASSERT_FALSE(server__bearer_ok("Bearer s3crett", tok, 6));
    CU_ASSERT_FALSE(server__bearer_ok("Bearer s3creT", tok, 6)); /* the last byte counts too */
    CU_ASSERT_FALSE(server__bearer_ok("Bearers3cret", tok, 6));
    CU_ASSERT_FALSE(server__bearer_ok("Basic s3cret", tok, 6));
    CU_ASSERT_FALSE(server__bearer_ok("Bearer ", tok, 6));
    CU_ASSERT_FALSE(server__bearer_ok(NULL, tok, 6));
}

/* server__ndjson_line on s; returns its why ("" when accepted), id and fp set. */
static const char *line(const char *s, char **id, uint64_t *fp)
{
    static char why[256];
    why[0] = '\0';
    *id = NULL;
    if (server__ndjson_line(s, strlen(s), id, fp, why, sizeof why) != 0)
        CU_ASSERT(why[0] != '\0');
    return why;
}

static void test_server_ndjson_line(void)
{
    char *id;
    uint64_t fp;
    CU_ASSERT_STRING_EQUAL(
        line(" {\"fingerprint\" : \"00000000000000FF\",\"id\":\"a\\u00e9\\ud83d\\ude00\\n\"}\r",
             &id, &fp),
        "");
    CU_ASSERT_STRING_EQUAL(id, "a\xc3\xa9\xf0\x9f\x98\x80\n");
    ASSERT_EQ(fp, 0xff);
    free(id);
    CU_ASSERT_STRING_EQUAL(line("{\"id\":\"x\"}", &id, &fp), "fingerprint is missing");
    CU_ASSERT_STRING_EQUAL(line("{\"fingerprint\":\"00000000000000ff\"}", &id, &fp),
                           "id is missing");
    CU_ASSERT_STRING_EQUAL(line("{\"id\":\"\",\"fingerprint\":\"00000000000000ff\"}", &id, &fp),
                           "id is empty");
    CU_ASSERT_STRING_EQUAL(line("{\"id\":1,\"fingerprint\":\"00000000000000ff\"}", &id, &fp),
                           "id is not a string");
    CU_ASSERT_STRING_EQUAL(
        line("{\"id\":\"a\\u0000\",\"fingerprint\":\"00000000000000ff\"}", &id, &fp),
        "id contains a NUL byte");
    CU_ASSERT_STRING_EQUAL(line("{\"id\":\"a\",\"fingerprint\":\"00000000000000f\"}", &id, &fp),
                           "fingerprint is not 16 hex digits");
    CU_ASSERT_STRING_EQUAL(
        line("{\"id\":\"a\",\"fingerprint\":\"00000000000000ff\",\"k\":1}", &id, &fp),
        "unknown member \"k\" (a line has only \"id\" and \"fingerprint\")");
    CU_ASSERT_STRING_EQUAL(
        line("{\"id\":\"a\",\"id\":\"b\",\"fingerprint\":\"00000000000000ff\"}", &id, &fp),
        "id given twice");
    CU_ASSERT_STRING_EQUAL(line("[\"a\"]", &id, &fp), "not a JSON object");
    CU_ASSERT_STRING_EQUAL(line("{\"id\":\"a\",\"fingerprint\":\"00000000000000ff\"} {}", &id, &fp),
                           "text after the object");
    CU_ASSERT_STRING_EQUAL(line("{\"id\":\"a\" \"fingerprint\":\"00000000000000ff\"}", &id, &fp),
                           "a member not followed by ',' or '}'");
    CU_ASSERT_STRING_EQUAL(line("{\"id\":\"a\tb\",\"fingerprint\":\"00000000000000ff\"}", &id, &fp),
                           "id: a control character in a string (escape it)");
    CU_ASSERT_STRING_EQUAL(line("{\"id\":\"\xff\",\"fingerprint\":\"00000000000000ff\"}", &id, &fp),
                           "id: a string that is not valid UTF-8");
    CU_ASSERT_STRING_EQUAL(
        line("{\"id\":\"\\ud800\",\"fingerprint\":\"00000000000000ff\"}", &id, &fp),
        "id: a high surrogate escape without its low half");
    CU_ASSERT_STRING_EQUAL(line("{\"id\":\"\\x\",\"fingerprint\":\"00000000000000ff\"}", &id, &fp),
                           "id: an unknown escape in a string");
    CU_ASSERT_STRING_EQUAL(line("{\"id\":\"a", &id, &fp), "id: a string without its closing quote");
    CU_ASSERT_STRING_EQUAL(line("", &id, &fp), "not a JSON object");
    CU_ASSERT_STRING_EQUAL(line("{}", &id, &fp), "id is missing");
}

static void test_server_listen(void)
{
    struct sockaddr_storage ss;
    socklen_t len;
    ASSERT_EQ(server__parse_listen("127.0.0.1:8470", &ss, &len), 0);
    CU_ASSERT(ss.ss_family == AF_INET && ntohs(((struct sockaddr_in *)&ss)->sin_port) == 8470);
    CU_ASSERT_TRUE(server__addr_is_loopback((struct sockaddr *)&ss));
    ASSERT_EQ(server__parse_listen("127.9.9.9:0", &ss, &len), 0);
    CU_ASSERT_TRUE(server__addr_is_loopback((struct sockaddr *)&ss));
    ASSERT_EQ(server__parse_listen("localhost:1", &ss, &len), 0);
    CU_ASSERT_TRUE(server__addr_is_loopback((struct sockaddr *)&ss));
    ASSERT_EQ(server__parse_listen("[::1]:8470", &ss, &len), 0);
    CU_ASSERT(ss.ss_family == AF_INET6 && len == sizeof(struct sockaddr_in6));
    CU_ASSERT_TRUE(server__addr_is_loopback((struct sockaddr *)&ss));
    ASSERT_EQ(server__parse_listen("[::ffff:127.0.0.1]:80", &ss, &len), 0);
    CU_ASSERT_TRUE(server__addr_is_loopback((struct sockaddr *)&ss));
    ASSERT_EQ(server__parse_listen("0.0.0.0:8470", &ss, &len), 0);
    CU_ASSERT_FALSE(server__addr_is_loopback((struct sockaddr *)&ss));
    ASSERT_EQ(server__parse_listen("[::]:8470", &ss, &len), 0);
    CU_ASSERT_FALSE(server__addr_is_loopback((struct sockaddr *)&ss));
    ASSERT_EQ(server__parse_listen("128.0.0.1:1", &ss, &len), 0);
    CU_ASSERT_FALSE(server__addr_is_loopback((struct sockaddr *)&ss));
    ASSERT_EQ(server__parse_listen("127.0.0.1", &ss, &len), -1);
    ASSERT_EQ(server__parse_listen("127.0.0.1:65536", &ss, &len), -1);
    ASSERT_EQ(server__parse_listen("127.0.0.1:-1", &ss, &len), -1);
    ASSERT_EQ(server__parse_listen("::1:80", &ss, &len), -1);
    ASSERT_EQ(server__parse_listen("example.com:80", &ss, &len), -1);
    ASSERT_EQ(server__parse_listen(":80", &ss, &len), -1);
}

static void test_server_buf_json(void)
{
    struct server_buf b;
    server__buf_init(&b, 1024);
    server__buf_json_str(&b, "a\"\\\n\x01\xc3\xa9\xff/", 9);
    CU_ASSERT_STRING_EQUAL(b.p, "\"a\\\"\\\\\\n\\u0001\xc3\xa9\\ufffd/\"");
    server__buf_release(&b);
    server__buf_init(&b, 8); /* a cap: the append that passes it fails, what was there stays */
    server__buf_puts(&b, "12345");
    server__buf_puts(&b, "6789");
    ASSERT_EQ(b.failed, SERVER_BUF_FULL);
    CU_ASSERT_STRING_EQUAL(b.p, "12345");
    server__buf_puts(&b, "6");
    ASSERT_EQ(b.len, 5);
    server__buf_release(&b);
    server__buf_init(&b, 64);
    server__buf_json_fp(&b, 0xabc);
    CU_ASSERT_STRING_EQUAL(b.p, "\"0000000000000abc\"");
    server__buf_release(&b);
}

static void test_server_metrics_text(void)
{
    struct server_metrics m;
    struct server_buf b;
    server__metrics_init(&m);
    server__metrics_record(&m, SERVER_EP_CHECK, 200, 0.0003);
    server__metrics_record(&m, SERVER_EP_CHECK, 200, 0.2);
    server__metrics_record(&m, SERVER_EP_NEIGHBORS, 418, 30);
    ASSERT_EQ(server__metrics_total(&m), 3);
    server__buf_init(&b, 1 << 16);
    server__metrics_write(&m, &b);
    CU_ASSERT_PTR_NOT_NULL(
        strstr(b.p, "simcrawl_requests_total{endpoint=\"check\",code=\"200\"} 2\n"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(b.p, "simcrawl_requests_total{endpoint=\"neighbors\",code=\"other\"} 1\n"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(b.p, "simcrawl_request_duration_seconds_bucket{le=\"0.0005\"} 1\n"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(b.p, "simcrawl_request_duration_seconds_bucket{le=\"0.25\"} 2\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "simcrawl_request_duration_seconds_bucket{le=\"10\"} 2\n"));
    CU_ASSERT_PTR_NOT_NULL(
        strstr(b.p, "simcrawl_request_duration_seconds_bucket{le=\"+Inf\"} 3\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "simcrawl_request_duration_seconds_count 3\n"));
    CU_ASSERT_PTR_NOT_NULL(strstr(b.p, "# TYPE simcrawl_request_duration_seconds histogram\n"));
    server__buf_release(&b);
}

/* A request to the endpoints (api.c), as the service makes it: begin, then the body. */
static unsigned ask(const struct server_api *a, const char *method, const char *target,
                    const char *ct, const char *body, struct server_reply *rep)
{
    struct server_request r = {method, target, strlen(target), ct, NULL, 0, 0, NULL, 0};
    if (server__api_begin(a, &r, rep) == 0) {
        r.body = body ? body : "";
        r.body_len = body ? strlen(body) : 0;
        server__api_handle(a, &r, rep);
    }
    return rep->status;
}

static void test_server_api(void)
{
    struct simcrawl_filter *f = NULL;
    struct server_metrics m;
    struct server_reply rep;
    ASSERT_EQ_FATAL(simcrawl_filter_open(&f, NULL, 3), 0);
    server__metrics_init(&m);
    struct server_api a = {f, NULL, 0, 1 << 20, NULL, server__now(), &m, NULL, NULL};
    const char *nd = "application/x-ndjson";
    ASSERT_EQ(ask(&a, "GET", "/v1/check", NULL, NULL, &rep), 405);
    CU_ASSERT_STRING_EQUAL(rep.allow, "POST");
    server__reply_release(&rep);
    ASSERT_EQ(ask(&a, "POST", "/v1/check", "text/html", "x", &rep), 400); /* no id */
    server__reply_release(&rep);
    /* bulk: a bad line refuses the batch; nothing of it is added */
    ASSERT_EQ(ask(&a, "POST", "/v1/check", nd,
                        "{\"id\":\"a\",\"fingerprint\":\"00000000000000ff\"}\n{\"id\":\"b\"}\n",
                        &rep),
                    400);
    CU_ASSERT_PTR_NOT_NULL(strstr(rep.body, "line 2: fingerprint is missing"));
    server__reply_release(&rep);
    ASSERT_EQ(simcrawl_filter_count(f), 0);
    ASSERT_EQ(ask(&a, "POST", "/v1/check", nd,
                        "{\"id\":\"a\",\"fingerprint\":\"00000000000000ff\"}\n\n"
                        "{\"id\":\"b\",\"fingerprint\":\"00000000000000fe\"}\n",
                        &rep),
                    200);
    CU_ASSERT_STRING_EQUAL(rep.content_type, "application/x-ndjson");
    CU_ASSERT_STRING_EQUAL(
        rep.body, "{\"id\":\"a\",\"decision\":\"new\",\"fingerprint\":\"00000000000000ff\","
                  "\"duplicate_of\":null,\"distance\":null,\"similarity\":null,\"added\":true}\n"
                  "{\"id\":\"b\",\"decision\":\"near-duplicate\",\"fingerprint\":"
                  "\"00000000000000fe\",\"duplicate_of\":\"a\",\"distance\":1,"
                  "\"similarity\":0.984375,\"added\":false}\n");
    ASSERT_EQ(rep.endpoint, SERVER_EP_CHECK_BULK);
    server__reply_release(&rep);
    ASSERT_EQ(
        ask(&a, "GET", "/v1/neighbors?fingerprint=00000000000000fc&k=2", NULL, NULL, &rep), 200);
    CU_ASSERT_STRING_EQUAL(
        rep.body, "{\"fingerprint\":\"00000000000000fc\",\"k\":2,\"neighbors\":"
                  "[{\"id\":\"a\",\"fingerprint\":\"00000000000000ff\",\"distance\":2}]}\n");
    server__reply_release(&rep);
    ASSERT_EQ(ask(&a, "DELETE", "/v1/documents/%61", NULL, NULL, &rep), 200);
    server__reply_release(&rep);
    ASSERT_EQ(ask(&a, "DELETE", "/v1/documents/a", NULL, NULL, &rep), 404);
    server__reply_release(&rep);
    ASSERT_EQ(simcrawl_filter_count(f), 0);
    /* with a token: 401 before anything else, even an unknown path */
    a.token = "t0k";
    a.token_len = 3;
    ASSERT_EQ(ask(&a, "GET", "/nope", NULL, NULL, &rep), 401);
    CU_ASSERT_TRUE(rep.authenticate);
    server__reply_release(&rep);
    (void)simcrawl_filter_close(f);
}

extern void test_server_register(void);
void test_server_register(void)
{
    CU_pSuite s = CU_add_suite("server", NULL, NULL);
    CU_add_test(s, "test_server_pct_decode", test_server_pct_decode);
    CU_add_test(s, "test_server_ids_and_hex", test_server_ids_and_hex);
    CU_add_test(s, "test_server_target_and_query", test_server_target_and_query);
    CU_add_test(s, "test_server_route_and_types", test_server_route_and_types);
    CU_add_test(s, "test_server_bearer", test_server_bearer);
    CU_add_test(s, "test_server_ndjson_line", test_server_ndjson_line);
    CU_add_test(s, "test_server_listen", test_server_listen);
    CU_add_test(s, "test_server_buf_json", test_server_buf_json);
    CU_add_test(s, "test_server_metrics_text", test_server_metrics_text);
    CU_add_test(s, "test_server_api", test_server_api);
}
