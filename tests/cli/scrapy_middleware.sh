# The Scrapy spider middleware (plugins/scrapy/simcrawl_scrapy) in a real Scrapy crawl
# (Debian 12's python3-scrapy 2.8): tests/scrapy_spider.py, a CrawlSpider following every
# link, run with `python3 -m scrapy runspider` against nginx on 127.0.0.1 at a random free
# port with an access log. The site (tests/pagegen.py paragraphs, fixed seeds): index.html
# links to t01..t12 (each linking to the next) and n1..n3; each n<i> links to n<i>-copy.html
# (a near-duplicate: n1-copy differs in its date, n2-copy in 2 words, n3-copy in 3) and to
# x<i>.html (a byte copy of n<i>: an exact duplicate); each n<i>-copy links to only<i>.html,
# which nothing else links to. The premise is checked first: `simcrawl pairs` over the
# site finds exactly the planted pairs at k 3.
#  1. in-process (SIMCRAWL_INDEX, SIMCRAWL_LIBRARY = the just-built libsimcrawl.so.0): the
#     copies and x<i> are requested (access log) and dropped (their callback never ran),
#     only<i>.html is never requested, every distinct page reaches the callback, the stats
#     say 16 new, 3 near-duplicates, 3 exact duplicates, and the index is saved (16 pages).
#  2. a recrawl with the same index: ids already in the index are new again (the library
#     is idempotent by id), so the same 16 pages are kept, the same 6 dropped, nothing added.
#  3. meta simcrawl_skip on the request of n1-copy.html: it is not checked (simcrawl/skipped
#     1), its callback runs and only1.html is fetched; n2-copy and n3-copy still dropped.
#  4. no SIMCRAWL_INDEX nor SIMCRAWL_URL: NotConfigured (Scrapy's "Disabled" warning), and
#     the crawl reaches every page, only<i> included (the control of 1); SIMCRAWL_ENABLED
#     False with an index: disabled too, no index written.
#  5. a SIMCRAWL_LIBRARY that does not exist, a SIMCRAWL_K other than the index's, or both
#     SIMCRAWL_INDEX and SIMCRAWL_URL set: the crawl stops before its first request, saying
#     why.
#  6. SIMCRAWL_URL failing open: nothing listening (connection refused), nginx answering
#     503 (the service behind a path prefix; every request on one kept-alive connection, by
#     nginx's $connection), a socket that never answers (SIMCRAWL_TIMEOUT):
#     every page passes, each one counted in simcrawl/errors, one warning per kind.
#  7. SIMCRAWL_URL against the real `simcrawl serve` with a token file (tests/serve_lib.sh):
#     the same drops as 1, then a recrawl; a wrong token stops the crawl before it starts
#     (a service that refuses the token refuses every page); the service, stopped, saved
#     the 16 pages.
#  8. SIMCRAWL_METHOD minhash (SIMCRAWL_THRESHOLD 0.8) in-process and against `simcrawl
#     serve --method minhash`: the same drops, with their Jaccard estimate; a simhash index
#     refused in-process, a service of the other method or threshold stops the crawl, and
#     bad settings are named.
# Needs python3-scrapy and nginx (Makefile DEB_PKGS): when absent the test FAILS.
# SCRAPY_PYTHON (default /usr/bin/python3, the interpreter python3-scrapy is installed for)
# runs Scrapy; LIBSIMCRAWL is the library (make cli-test passes build/libsimcrawl.so.0);
# LIBSIMCRAWL=skip skips 1-5 (make asan: an instrumented library cannot be loaded into an
# uninstrumented python3). Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
SM=$TMP/scrapy
. tests/nginx.sh
. tests/serve_lib.sh
SM_PY=${SCRAPY_PYTHON:-/usr/bin/python3}
SM_LIB=${LIBSIMCRAWL:-build/libsimcrawl.so.0}
SM_HANG_PID=
sm_up=
sm_port=
# the EXIT trap of serve_lib.sh, plus nginx and the silent socket; serve_lib's at the end
trap '[ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null; [ -n "$SM_HANG_PID" ] && kill "$SM_HANG_PID" 2>/dev/null; sv_cleanup; rm -rf "$TMP"' EXIT
trap 'exit 2' INT TERM
mkdir -p "$SM/site" "$SM/logs"

# sm_run NAME [scrapy options...]: one crawl from $SM_START into $SM/NAME (pages.txt,
# stats.json), its log in $SM/NAME.log, its exit status in sm_rc; the access log is
# emptied first, so that it holds this crawl's requests only
sm_run() {
    sm_name=$1
    shift
    : >"$SM/logs/access.log"
    PYTHONPATH=plugins/scrapy timeout 60 "$SM_PY" -m scrapy runspider tests/scrapy_spider.py \
        -a start="$SM_START" -a out="$SM/$sm_name" -s LOG_LEVEL=DEBUG "$@" >"$SM/$sm_name.log" 2>&1
    sm_rc=$?
}
# sm_stats NAME: the simcrawl/* stats of crawl NAME, "key=value ..." in key order
sm_stats() {
    "$SM_PY" -c 'import json, sys
s = json.load(open(sys.argv[1]))
print(" ".join("%s=%s" % (k, s[k]) for k in sorted(s) if k.startswith("simcrawl/")))' \
        "$SM/$1/stats.json" 2>&1
}
# sm_pages NAME: the pages whose callback ran, as file names, sorted, on one line
sm_pages() {
    sed 's|.*/||' "$SM/$1/pages.txt" 2>/dev/null | LC_ALL=C sort | tr '\n' ' '
}
# sm_sorted: the words of stdin, sorted, on one line
sm_sorted() {
    tr ' ' '\n' | grep . | LC_ALL=C sort | tr '\n' ' '
}
# sm_requested: the pages requested from nginx in the last crawl, sorted, on one line
sm_requested() {
    sed -n 's|^GET /\([^ ]*\) .*|\1|p' "$SM/logs/access.log" | LC_ALL=C sort | tr '\n' ' '
}
# sm_same WANT GOT DESCRIPTION
sm_same() {
    if [ "$1" = "$2" ]; then ok; else bad "scrapy: $3: got '$2', want '$1'"; fi
}
# sm_ran NAME DESCRIPTION: crawl NAME exited 0
sm_ran() {
    if [ "$sm_rc" = 0 ] && [ -s "$SM/$1/stats.json" ]; then
        ok
    else
        bad "scrapy: $2: exit $sm_rc: $(grep -E 'Error|error|Traceback' "$SM/$1.log" | head -c 600)"
    fi
}
# sm_kept_dropped NAME DESCRIPTION: the assertions of a crawl with the filter on
sm_kept_dropped() {
    sm_same "$SM_KEPT" "$(sm_pages "$1")" "$2: the pages whose callback ran (every distinct page, no duplicate)"
    sm_same "$SM_FETCHED" "$(sm_requested)" "$2: the pages requested (duplicates fetched, only1..3 never)"
    sm_same "simcrawl/exact_duplicate=3 simcrawl/near_duplicate=3 simcrawl/new=16" "$(sm_stats "$1")" \
        "$2: the stats"
}

if ! "$SM_PY" -c 'import scrapy' >"$SM/py.err" 2>&1; then
    bad "scrapy: $SM_PY cannot import scrapy (make installs python3-scrapy from DEB_PKGS): $(tail -c 200 "$SM/py.err")"
elif ! command -v nginx >/dev/null 2>&1; then
    bad "scrapy: needs nginx (make installs nginx-light from DEB_PKGS)"
else
    "$SM_PY" - "$SM/site" <<'EOP'
import os, sys
sys.path.insert(0, "tests")
from pagegen import para
d = sys.argv[1]
def page(title, paras, links, date="2024-05-01"):
    nav = " ".join('<a href="%s">%s</a>' % (h, h[:-5]) for h in links)
    return ("<!DOCTYPE html>\n<html><head><title>%s</title></head><body>\n<nav>%s</nav>\n"
            "<main><h1>%s</h1>\n<p>Updated %s.</p>\n%s\n</main>\n</body></html>\n"
            % (title, nav, title, date, "\n".join("<p>%s.</p>" % p for p in paras)))
def put(name, text):
    with open(os.path.join(d, name), "w") as f:
        f.write(text)
topics = ["t%02d.html" % i for i in range(1, 13)]
for i, t in enumerate(topics):
    put(t, page(t[:-5], [para(60, 1000 + 10 * i + j) for j in range(4)], topics[i + 1:i + 2]))
for i in (1, 2, 3):
    paras = [para(60, 2000 + 10 * i + j) for j in range(4)]
    orig = page("n%d" % i, paras, ["n%d-copy.html" % i, "x%d.html" % i])
    put("n%d.html" % i, orig)
    put("x%d.html" % i, orig)
    if i == 1:  # the same text, another date
        copy = page("n1", paras, ["only1.html"], date="2024-05-02")
    else:       # i words changed
        w = [p.split() for p in paras]
        for j in range(i):
            w[j][10] = "changed"
        copy = page("n%d" % i, [" ".join(p) for p in w], ["only%d.html" % i])
    put("n%d-copy.html" % i, copy)
    put("only%d.html" % i, page("only%d" % i, [para(60, 3000 + 10 * i + j) for j in range(4)], []))
put("index.html", page("index", [para(60, 999)], topics + ["n1.html", "n2.html", "n3.html"]))
EOP
    # the premise: the planted pairs, and only they, are within k = 3 by simcrawl's own
    # fingerprint (a new fingerprint version may need other seeds)
    "$SIMCRAWL" pairs "$SM/site" 2>/dev/null | sed "s|$SM/site/||g" | cut -f2,3 | tr '\t' ' ' |
        LC_ALL=C sort | tr '\n' ',' >"$SM/pairs"
    sm_same "n1-copy.html n1.html,n1-copy.html x1.html,n1.html x1.html,n2-copy.html n2.html,n2-copy.html x2.html,n2.html x2.html,n3-copy.html n3.html,n3-copy.html x3.html,n3.html x3.html," \
        "$(cat "$SM/pairs")" "the site's pairs within k 3 (simcrawl pairs): the planted ones only"
    SM_KEPT="index.html n1.html n2.html n3.html t01.html t02.html t03.html t04.html t05.html t06.html t07.html t08.html t09.html t10.html t11.html t12.html "
    SM_FETCHED="index.html n1-copy.html n1.html n2-copy.html n2.html n3-copy.html n3.html t01.html t02.html t03.html t04.html t05.html t06.html t07.html t08.html t09.html t10.html t11.html t12.html x1.html x2.html x3.html "
    SM_ALL="index.html n1-copy.html n1.html n2-copy.html n2.html n3-copy.html n3.html only1.html only2.html only3.html t01.html t02.html t03.html t04.html t05.html t06.html t07.html t08.html t09.html t10.html t11.html t12.html x1.html x2.html x3.html "

    sm_port=$(free_port)
    sm_up=
    nginx_start "$SM" "$sm_port" "
    log_format plain '\$request_method \$uri \$status \$connection';
    access_log $SM/logs/access.log plain;
    types { text/html html; }
    default_type application/octet-stream;
    charset utf-8;
    server {
        listen 127.0.0.1:$sm_port;
        root $SM/site;
        location /broken-service/ { default_type application/json; return 503 '{\"error\": \"overloaded\"}'; }
    }" && sm_up=1
fi
if [ -n "$sm_up" ]; then
    sm_base=http://127.0.0.1:$sm_port
    SM_START=$sm_base/index.html
    if [ "$SM_LIB" = skip ]; then
        echo "scrapy_middleware: in-process tests skipped (LIBSIMCRAWL=skip)" >&2
    else
        # 1. in-process, through the library
        sm_run inproc -s SIMCRAWL_INDEX="$SM/site.idx" -s SIMCRAWL_LIBRARY="$SM_LIB"
        sm_ran inproc "in-process crawl"
        sm_kept_dropped inproc "in-process"
        for i in 1 2 3; do
            expect_grep "simcrawl: $sm_base/n$i-copy.html: near-duplicate of $sm_base/n$i.html (distance [0-3]): dropped" \
                "$SM/inproc.log" "scrapy: n$i-copy.html dropped as a near-duplicate of n$i.html (DEBUG log)"
            expect_grep "simcrawl: $sm_base/x$i.html: exact-duplicate of $sm_base/n$i.html (distance 0): dropped" \
                "$SM/inproc.log" "scrapy: x$i.html dropped as an exact duplicate of n$i.html"
        done
        expect_grep "simcrawl: index $SM/site.idx saved: 16 pages" "$SM/inproc.log" "scrapy: the index saved at the close"
        if grep -q 'Traceback\|ERROR' "$SM/inproc.log"; then
            bad "scrapy: in-process crawl logged an error: $(grep -A3 'Traceback\|ERROR' "$SM/inproc.log" | head -c 600)"
        else
            ok
        fi
        sm_same "documents: 16" "$("$SIMCRAWL" index stats "$SM/site.idx" 2>&1 | grep '^documents:')" \
            "simcrawl index stats of the index the spider saved"

        # 2. the same crawl again with that index: known ids are new again, nothing added
        sm_run recrawl -s SIMCRAWL_INDEX="$SM/site.idx" -s SIMCRAWL_LIBRARY="$SM_LIB"
        sm_ran recrawl "recrawl with the same index"
        sm_kept_dropped recrawl "recrawl"
        expect_grep "simcrawl: index $SM/site.idx (16 pages, k 3)" "$SM/recrawl.log" "scrapy: the recrawl opens the saved index"
        sm_same "documents: 16" "$("$SIMCRAWL" index stats "$SM/site.idx" 2>&1 | grep '^documents:')" \
            "the recrawl added nothing to the index"

        # 3. meta simcrawl_skip opts a request out
        sm_run skip -a skip=n1-copy.html -s SIMCRAWL_INDEX="$SM/skip.idx" -s SIMCRAWL_LIBRARY="$SM_LIB"
        sm_ran skip "crawl with simcrawl_skip on n1-copy.html"
        sm_same "$(echo "$SM_KEPT n1-copy.html only1.html" | sm_sorted)" "$(sm_pages skip)" \
            "simcrawl_skip: the skipped copy and the page only it links to reach the callback"
        sm_same "$(echo "$SM_FETCHED only1.html" | sm_sorted)" "$(sm_requested)" \
            "simcrawl_skip: the pages requested"
        sm_same "simcrawl/exact_duplicate=3 simcrawl/near_duplicate=2 simcrawl/new=17 simcrawl/skipped=1" \
            "$(sm_stats skip)" "simcrawl_skip: the stats"

        # 4. NotConfigured: the middleware is off, the crawl reaches every page
        sm_run off
        sm_ran off "crawl without SIMCRAWL_INDEX or SIMCRAWL_URL"
        expect_grep "Disabled SimcrawlMiddleware: neither SIMCRAWL_INDEX nor SIMCRAWL_URL is set" "$SM/off.log" \
            "scrapy: without settings the middleware is NotConfigured"
        sm_same "$SM_ALL" "$(sm_pages off)" "without the middleware every page reaches the callback"
        sm_same "$SM_ALL" "$(sm_requested)" "without the middleware every page is requested"
        sm_same "" "$(sm_stats off)" "without the middleware no simcrawl stats"
        sm_run disabled -s SIMCRAWL_ENABLED=False -s SIMCRAWL_INDEX="$SM/disabled.idx"
        sm_ran disabled "crawl with SIMCRAWL_ENABLED=False"
        expect_grep "Disabled SimcrawlMiddleware: SIMCRAWL_ENABLED is off" "$SM/disabled.log" \
            "scrapy: SIMCRAWL_ENABLED=False disables the middleware"
        sm_same "$SM_ALL" "$(sm_pages disabled)" "SIMCRAWL_ENABLED=False: every page reaches the callback"
        [ ! -e "$SM/disabled.idx" ] && ok || bad "scrapy: SIMCRAWL_ENABLED=False wrote an index"

        # 5. a library that cannot be loaded stops the crawl before it starts
        sm_run nolib -s SIMCRAWL_INDEX="$SM/nolib.idx" -s SIMCRAWL_LIBRARY="$SM/no-such-lib.so.0"
        # (Scrapy 2.8's runspider still exits 0: it counts a start as failed only when no
        # spider was made, and the spider is made before the middlewares)
        expect_grep "cannot load libsimcrawl ($SM/no-such-lib.so.0)" "$SM/nolib.log" \
            "scrapy: a missing SIMCRAWL_LIBRARY is named"
        sm_same "" "$(sm_requested)" "a missing SIMCRAWL_LIBRARY: no request made"
        sm_run kmismatch -s SIMCRAWL_INDEX="$SM/site.idx" -s SIMCRAWL_K=4 -s SIMCRAWL_LIBRARY="$SM_LIB"
        expect_grep "cannot open index $SM/site.idx: k differs from the index file's k" \
            "$SM/kmismatch.log" "scrapy: SIMCRAWL_K other than the index's: the library's error"
        sm_same "" "$(sm_requested)" "SIMCRAWL_K other than the index's: no request made"
        sm_run both -s SIMCRAWL_INDEX="$SM/both.idx" -s SIMCRAWL_URL="$sm_base"
        expect_grep "simcrawl: set SIMCRAWL_INDEX (in-process) or SIMCRAWL_URL (the service), not both" \
            "$SM/both.log" "scrapy: SIMCRAWL_INDEX and SIMCRAWL_URL both set is refused"
        sm_same "" "$(sm_requested)" "SIMCRAWL_INDEX and SIMCRAWL_URL both set: no request made"
    fi

    # 6. the service fails: every page passes (fail open), each counted as an error
    sm_run refused -s SIMCRAWL_URL="http://127.0.0.1:$(free_port)"
    sm_ran refused "crawl with the service down"
    sm_same "$SM_ALL" "$(sm_pages refused)" "service down: every page reaches the callback"
    sm_same "simcrawl/errors=25" "$(sm_stats refused)" "service down: every page counted in simcrawl/errors"
    expect_grep "WARNING: simcrawl: the service cannot check pages (http://127.0.0.1:[0-9]*: connection refused)" \
        "$SM/refused.log" "scrapy: the service down is said at the start"
    sm_same 1 "$(grep -c 'WARNING: simcrawl: .*: connection refused; the page passes unchecked' "$SM/refused.log")" \
        "service down: one warning for 25 errors of one kind"
    expect_grep "WARNING: simcrawl: 25 pages passed unchecked after an error" "$SM/refused.log" \
        "scrapy: the errors are summed up at the close"
    sm_run http503 -s SIMCRAWL_URL="$sm_base/broken-service"
    sm_ran http503 "crawl with a service answering 503"
    sm_same "$SM_ALL" "$(sm_pages http503)" "service answering 503: every page reaches the callback"
    sm_same "simcrawl/errors=25" "$(sm_stats http503)" "service answering 503: the errors"
    expect_grep "simcrawl: $sm_base/[a-z0-9]*\.html: $sm_base/broken-service: POST /v1/check: HTTP 503: overloaded; the page passes unchecked" \
        "$SM/http503.log" "scrapy: the 503 and the service's error message are logged"
    sm_same 25 "$(grep -c '^POST /broken-service/v1/check 503' "$SM/logs/access.log")" \
        "service answering 503: one POST {URL}/v1/check per page"
    sm_same 1 "$(grep ' /broken-service/' "$SM/logs/access.log" | cut -d' ' -f4 | sort -u | wc -l | tr -d ' ')" \
        "service answering 503: its 26 requests (/healthz, 25 checks) on one kept-alive connection"
    # a socket that accepts and never answers: SIMCRAWL_TIMEOUT bounds each check
    sm_hang_port=$(free_port)
    "$SM_PY" -c 'import socket, sys, time
s = socket.socket(); s.bind(("127.0.0.1", int(sys.argv[1]))); s.listen(64); time.sleep(60)' \
        "$sm_hang_port" &
    SM_HANG_PID=$!
    SM_START=$sm_base/t12.html
    sm_run hang -s SIMCRAWL_URL="http://127.0.0.1:$sm_hang_port" -s SIMCRAWL_TIMEOUT=0.5
    SM_START=$sm_base/index.html
    kill "$SM_HANG_PID" 2>/dev/null
    wait "$SM_HANG_PID" 2>/dev/null
    SM_HANG_PID=
    sm_ran hang "crawl with a service that never answers"
    sm_same "t12.html " "$(sm_pages hang)" "service that never answers: the page reaches the callback"
    sm_same "simcrawl/errors=1" "$(sm_stats hang)" "service that never answers: one error"
    expect_grep "simcrawl: $sm_base/t12.html: http://127.0.0.1:$sm_hang_port: timed out; the page passes unchecked" \
        "$SM/hang.log" "scrapy: SIMCRAWL_TIMEOUT: the check timed out"

    # 7. the real service, on the same site: the same drops; its index saved at its stop
    printf 'sm-secret-token\n' >"$SM/token"
    chmod 600 "$SM/token"
    if ! sv_start scrapy-svc --index "$SM/svc.idx" --token-file "$SM/token"; then
        bad "scrapy: simcrawl serve did not start: $(head -c 300 "$SV/scrapy-svc.err")"
    else
        sm_run svc -s SIMCRAWL_URL="$SV_URL" -s SIMCRAWL_TOKEN=sm-secret-token
        sm_ran svc "crawl against simcrawl serve"
        sm_kept_dropped svc "service"
        for i in 1 2 3; do
            expect_grep "simcrawl: $sm_base/n$i-copy.html: near-duplicate of $sm_base/n$i.html (distance [0-3]): dropped" \
                "$SM/svc.log" "scrapy: service: n$i-copy.html dropped as a near-duplicate of n$i.html"
            expect_grep "simcrawl: $sm_base/x$i.html: exact-duplicate of $sm_base/n$i.html (distance 0): dropped" \
                "$SM/svc.log" "scrapy: service: x$i.html dropped as an exact duplicate of n$i.html"
        done
        expect_grep "INFO: simcrawl: service $SV_URL\$" "$SM/svc.log" "scrapy: service: /healthz answered at the start"
        sm_run svc-recrawl -s SIMCRAWL_URL="$SV_URL" -s SIMCRAWL_TOKEN=sm-secret-token
        sm_ran svc-recrawl "recrawl against simcrawl serve"
        sm_kept_dropped svc-recrawl "service recrawl"
        sm_run svc-badtoken -s SIMCRAWL_URL="$SV_URL" -s SIMCRAWL_TOKEN=wrong
        expect_grep "simcrawl: $SV_URL: GET /healthz: HTTP 401: .*: check SIMCRAWL_TOKEN" \
            "$SM/svc-badtoken.log" "scrapy: service, wrong token: the crawl stops, saying why"
        sm_same "" "$(sm_requested)" "service, wrong token: no page requested"
        sv_stop
        sm_same 0 "$SV_STATUS" "simcrawl serve's exit status after the crawls"
        expect_grep "index saved: $SM/svc.idx (16 documents)" "$SV/scrapy-svc.err" \
            "scrapy: the service kept the 16 pages of the two crawls, once each"
    fi

    # 8. the minhash method, both ways: the same drops at threshold 0.8 (the planted pairs
    # are near-duplicates by either measure), the method checked against the index and the
    # service
    if [ "$SM_LIB" != skip ]; then
        sm_run mh -s SIMCRAWL_INDEX="$SM/mh.idx" -s SIMCRAWL_METHOD=minhash \
            -s SIMCRAWL_THRESHOLD=0.8 -s SIMCRAWL_LIBRARY="$SM_LIB"
        sm_ran mh "in-process minhash crawl"
        sm_kept_dropped mh "in-process minhash"
        expect_grep "simcrawl: index $SM/mh.idx (0 pages, minhash, threshold 0.8)" "$SM/mh.log" \
            "scrapy: minhash in-process: the method said at the start"
        for i in 1 2 3; do
            expect_grep "simcrawl: $sm_base/n$i-copy.html: near-duplicate of $sm_base/n$i.html (similarity 0\.[89][0-9]*): dropped" \
                "$SM/mh.log" "scrapy: minhash: n$i-copy.html dropped at its Jaccard estimate"
        done
        sm_same "documents: 16" "$("$SIMCRAWL" index stats "$SM/mh.idx" 2>&1 | grep '^documents:')" \
            "the minhash index the spider saved"
        sm_run mh-on-sim -s SIMCRAWL_INDEX="$SM/site.idx" -s SIMCRAWL_METHOD=minhash -s SIMCRAWL_LIBRARY="$SM_LIB"
        expect_grep "cannot open index $SM/site.idx: the index or its journal is of the other method" \
            "$SM/mh-on-sim.log" "scrapy: SIMCRAWL_METHOD minhash on a simhash index: the library's error"
        expect_grep "site.idx is a simhash index; it cannot be opened with the minhash method" \
            "$SM/mh-on-sim.log" "scrapy: the library's warning says which method the index has"
        sm_same "" "$(sm_requested)" "SIMCRAWL_METHOD other than the index's: no request made"
        sm_run mh-threshold -s SIMCRAWL_INDEX="$SM/mh2.idx" -s SIMCRAWL_THRESHOLD=0.8
        expect_grep "SIMCRAWL_THRESHOLD is the minhash method's" "$SM/mh-threshold.log" \
            "scrapy: SIMCRAWL_THRESHOLD without SIMCRAWL_METHOD minhash is refused"
        sm_run mh-badmethod -s SIMCRAWL_INDEX="$SM/mh2.idx" -s SIMCRAWL_METHOD=cosine
        expect_grep "SIMCRAWL_METHOD must be simhash or minhash, not 'cosine'" "$SM/mh-badmethod.log" \
            "scrapy: a bad SIMCRAWL_METHOD is named"
    fi
    if ! sv_start scrapy-mh --index "$SM/svc-mh.idx" --method minhash; then
        bad "scrapy: simcrawl serve --method minhash did not start: $(head -c 300 "$SV/scrapy-mh.err")"
    else
        sm_run svc-mh -s SIMCRAWL_URL="$SV_URL" -s SIMCRAWL_METHOD=minhash
        sm_ran svc-mh "crawl against simcrawl serve --method minhash"
        sm_kept_dropped svc-mh "minhash service"
        expect_grep "simcrawl: the service decides by minhash, threshold 0.8" "$SM/svc-mh.log" \
            "scrapy: minhash service: its method checked at the start"
        expect_grep "simcrawl: $sm_base/n2-copy.html: near-duplicate of $sm_base/n2.html (similarity 0\.[89][0-9]*): dropped" \
            "$SM/svc-mh.log" "scrapy: minhash service: the similarity of a drop"
        sm_run svc-mh-sim -s SIMCRAWL_URL="$SV_URL" -s SIMCRAWL_METHOD=simhash
        expect_grep "simcrawl: the service $SV_URL uses the minhash method, SIMCRAWL_METHOD says simhash" \
            "$SM/svc-mh-sim.log" "scrapy: a service of the other method stops the crawl, saying why"
        sm_same "" "$(sm_requested)" "service of the other method: no page requested"
        sm_run svc-mh-t -s SIMCRAWL_URL="$SV_URL" -s SIMCRAWL_METHOD=minhash -s SIMCRAWL_THRESHOLD=0.9
        expect_grep "simcrawl: the service $SV_URL has threshold 0.8, SIMCRAWL_THRESHOLD says 0.9" \
            "$SM/svc-mh-t.log" "scrapy: a service of another threshold stops the crawl"
        sv_stop
        sm_same 0 "$SV_STATUS" "simcrawl serve --method minhash's exit status"
    fi

    # the README's settings are the ones used here
    expect_grep '^SPIDER_MIDDLEWARES = {"simcrawl_scrapy.SimcrawlMiddleware": 543}$' README.md \
        "scrapy: README's SPIDER_MIDDLEWARES line"
elif [ -n "$sm_port" ]; then
    bad "scrapy: nginx did not start: $(head -c 300 "$SM/nginx.out") $(head -c 300 "$SM/logs/error.log" 2>/dev/null)"
fi
nginx_stop
trap 'sv_cleanup; rm -rf "$TMP"' EXIT
trap 'exit 2' INT TERM
