# The wget2 plugin (plugins/wget2/, issue 13) in the real wget2 binary (Debian 12's wget2
# 1.99.1), on loopback. A generated site of 33 pages (made-up words, fixed seed; the links
# in a <nav>, the text in <main>): index.html links to 20 topic pages
# t01..t20 and to three pages n1..n3; each n<i> links to n<i>-copy.html (its text with 2
# words changed: a near-duplicate) and to x<i>.html (a byte copy of n<i>: an exact
# duplicate); each n<i>-copy links to only<i>.html, which nothing else links to; index
# also links to data.bin (not HTML). Copies are found only by parsing their original,
# so the original is always checked first, whatever wget2's threads do. Served by nginx
# on 127.0.0.1 at a random free port with an access log, robots.txt allowing all, the
# same files again under /mirror/ with an index of its own (mirror-index.html).
#  1. wget2 -r with the plugin, an index file and a log: the copies are logged near- and
#     exact duplicates with their originals, their files removed; only<i>.html never
#     requested (access log); every other file arrived; a one-line summary on stderr.
#  2. the same with keep (--local-plugin, in memory, --no-xattr so the plugin sniffs the
#     bytes for HTML): the duplicates' files stay, only<i>.html is still not fetched.
#  3. a second run with the index of run 1, seeded at /mirror/index.html (a new page):
#     every mirror page that run 1 kept is now an exact duplicate of it and dropped, so
#     /mirror/n<i>'s links are never requested and no page but the seed is new.
#  4. simcrawl.help prints the options (exit 0); a bad k and an unknown option fail.
#  5. the README's command is the one run here.
# Needs wget2 and nginx (Makefile DEB_PKGS): when absent the test FAILS. WGET2_PLUGIN is
# the .so (make cli-test passes it); WGET2_PLUGIN=skip skips the test (make asan: the
# plugin would load an instrumented library into the uninstrumented wget2).
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
W2=$TMP/wget2
. tests/nginx.sh
W2_PLUGIN=${WGET2_PLUGIN:-build/plugins/wget2/libsimcrawl.so}
trap '[ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 2' INT TERM
mkdir -p "$W2/site" "$W2/logs"
if [ "$W2_PLUGIN" = skip ]; then
    echo "wget2_plugin: skipped (WGET2_PLUGIN=skip)" >&2
elif ! command -v wget2 >/dev/null 2>&1 || ! command -v nginx >/dev/null 2>&1; then
    bad "wget2_plugin: needs wget2 and nginx (make installs them from DEB_PKGS)"
elif [ ! -f "$W2_PLUGIN" ]; then
    bad "wget2_plugin: no plugin at $W2_PLUGIN (make wget2-plugin)"
else
    # the site: words drawn from a made-up vocabulary with a fixed seed, so that no two
    # pages share more than chance; a near copy changes 2 of its ~300 words
    python3 - "$W2/site" "${WGET2_SITE_SEED:-17}" <<'EOP'
import random, sys
d = sys.argv[1]
rng = random.Random(int(sys.argv[2]))
syl = ["ka", "lo", "mi", "ra", "te", "su", "no", "vi", "pe", "da", "go", "ze", "fu", "ri", "ba"]
vocab = sorted({"".join(rng.choice(syl) for _ in range(rng.randint(2, 4))) for _ in range(3000)})
def words(n):
    return [rng.choice(vocab) for _ in range(n)]
def page(title, w, links):
    nav = " ".join('<a href="%s">%s</a>' % (h, h) for h in links)
    text = "\n".join("<p>" + " ".join(w[i:i + 30]) + ".</p>" for i in range(0, len(w), 30))
    return ("<!DOCTYPE html>\n<html><head><title>%s</title></head><body>\n<nav>%s</nav>\n"
            "<main><h1>%s</h1>\n%s\n</main>\n</body></html>\n" % (title, nav, title, text))
def put(name, text):
    with open("%s/%s" % (d, name), "w") as f:
        f.write(text)
topics = ["t%02d.html" % i for i in range(1, 21)]
for t in topics:
    put(t, page(t, words(300), ["index.html"]))
for i in (1, 2, 3):
    w = words(300)
    orig = page("n%d" % i, w, ["n%d-copy.html" % i, "x%d.html" % i])
    put("n%d.html" % i, orig)
    put("x%d.html" % i, orig)
    c = list(w)
    c[100] = "changedword"
    c[200] = "alteredword"
    put("n%d-copy.html" % i, page("n%d" % i, c, ["only%d.html" % i]))
    put("only%d.html" % i, page("only%d" % i, words(300), ["index.html"]))
links = topics + ["n1.html", "n2.html", "n3.html", "data.bin"]
put("index.html", page("index", words(60), links))
put("mirror-index.html", page("mirror", words(60), links))
with open(d + "/data.bin", "wb") as f:
    f.write(bytes(range(256)) * 8)
with open(d + "/robots.txt", "w") as f:
    f.write("User-agent: *\nAllow: /\n")
EOP
    # the premise: each planted copy within k = 3 of its original, by simcrawl's own
    # fingerprint (a new fingerprint version may need another WGET2_SITE_SEED)
    for i in 1 2 3; do
        w2_d=$("$SIMCRAWL" compare "$W2/site/n$i.html" "$W2/site/n$i-copy.html" | sed -n 's/^distance: //p')
        [ -n "$w2_d" ] && [ "$w2_d" -le 3 ] && ok ||
            bad "wget2_plugin: the site's n$i-copy.html is at distance '$w2_d' from n$i.html, not a near-duplicate at k 3: pick another WGET2_SITE_SEED"
    done
    w2_port=$(free_port)
    w2_up=
    nginx_start "$W2" "$w2_port" "
    log_format plain '\$request_method \$uri \$status';
    access_log $W2/logs/access.log plain;
    types { text/html html; text/plain txt; }
    default_type application/octet-stream;
    charset utf-8;
    server {
        listen 127.0.0.1:$w2_port;
        root $W2/site;
        location /mirror/ { alias $W2/site/; }
        location = /mirror/index.html { alias $W2/site/mirror-index.html; }
    }" && w2_up=1
    if [ -z "$w2_up" ]; then
        bad "wget2_plugin: nginx did not start: $(head -c 300 "$W2/nginx.out") $(head -c 300 "$W2/logs/error.log" 2>/dev/null)"
    else
        w2_base=http://127.0.0.1:$w2_port
        w2_dir=$(dirname "$W2_PLUGIN")
        # bounded: one try, 5 s per operation, 20 s in all; no config files, no proxy
        w2_opts="--no-config --no-proxy -nv -nH --tries=1 --timeout=5 --max-threads=5"

        # 1. the README's command, with a log
        expect_status 0 "wget2_plugin: wget2 -r with the plugin" -- timeout 20 wget2 -r $w2_opts \
            -P "$W2/out1" --plugin-dirs="$w2_dir" --plugin=simcrawl \
            --plugin-opt=simcrawl.index="$W2/site.idx" --plugin-opt=simcrawl.log="$W2/run1.jsonl" \
            "$w2_base/index.html"
        cp "$TMP/err" "$W2/run1.err"
        for i in 1 2 3; do
            expect_grep "\"url\":\"$w2_base/n$i-copy.html\",\"decision\":\"near-duplicate\".*\"duplicate_of\":\"$w2_base/n$i.html\",\"distance\":[0-3],\"removed\":true" \
                "$W2/run1.jsonl" "wget2_plugin: n$i-copy.html dropped as a near-duplicate of n$i.html"
            expect_grep "\"url\":\"$w2_base/x$i.html\",\"decision\":\"exact-duplicate\".*\"duplicate_of\":\"$w2_base/n$i.html\",\"distance\":0,\"removed\":true" \
                "$W2/run1.jsonl" "wget2_plugin: x$i.html dropped as an exact duplicate of n$i.html"
            for f in "n$i-copy.html" "x$i.html"; do
                [ ! -e "$W2/out1/$f" ] && ok || bad "wget2_plugin: the duplicate $f was not removed"
            done
            if grep -q "^GET /only$i.html " "$W2/logs/access.log"; then
                bad "wget2_plugin: only$i.html, linked only from a near-duplicate, was requested"
            else
                ok
            fi
        done
        w2_missing=
        for f in index.html t01.html t02.html t03.html t04.html t05.html t06.html t07.html \
            t08.html t09.html t10.html t11.html t12.html t13.html t14.html t15.html t16.html \
            t17.html t18.html t19.html t20.html n1.html n2.html n3.html data.bin robots.txt; do
            cmp -s "$W2/site/$f" "$W2/out1/$f" || w2_missing="$w2_missing $f"
        done
        [ -z "$w2_missing" ] && ok || bad "wget2_plugin: files missing or different after run 1:$w2_missing"
        w2_new=$(grep -c '"decision":"new"' "$W2/run1.jsonl")
        w2_near=$(grep -c '"decision":"near-duplicate"' "$W2/run1.jsonl")
        w2_exact=$(grep -c '"decision":"exact-duplicate"' "$W2/run1.jsonl")
        [ "$w2_near/$w2_exact" = 3/3 ] && ok ||
            bad "wget2_plugin: $w2_near near and $w2_exact exact duplicates, want 3 and 3: $(head -c 600 "$W2/run1.jsonl")"
        [ "$w2_new" -ge 23 ] && ok || bad "wget2_plugin: $w2_new pages new, want t01..t20, n1..n3 at least"
        expect_grep '"url":"[^"]*/data.bin","decision":"not-html"' "$W2/run1.jsonl" \
            "wget2_plugin: data.bin logged as not html"
        if grep -q 'robots.txt' "$W2/run1.jsonl"; then
            bad "wget2_plugin: robots.txt went through the filter"
        else
            ok
        fi
        expect_grep "^simcrawl: 31 pages checked: $w2_new new, 3 near-duplicates, 3 exact duplicates, [0-9]* too short, 1 not html, 0 errors; 6 files removed; index $W2/site.idx: $w2_new pages\$" \
            "$W2/run1.err" "wget2_plugin: the summary line"
        [ -s "$W2/site.idx" ] && ok || bad "wget2_plugin: the index file was not saved"

        # 2. keep, loaded with --local-plugin, index in memory; --no-xattr: no Content-Type
        #    for the plugin, which sniffs the bytes instead
        expect_status 0 "wget2_plugin: wget2 -r with simcrawl.keep" -- timeout 20 wget2 -r $w2_opts \
            --no-xattr -P "$W2/out2" --local-plugin="$W2_PLUGIN" --plugin-opt=simcrawl.keep \
            --plugin-opt=simcrawl.log="$W2/run2.jsonl" "$w2_base/index.html"
        expect_grep "\"url\":\"$w2_base/n1-copy.html\",\"decision\":\"near-duplicate\".*\"removed\":false" \
            "$W2/run2.jsonl" "wget2_plugin: keep: the near-duplicate is logged, not removed"
        for f in n1-copy.html x1.html; do
            cmp -s "$W2/site/$f" "$W2/out2/$f" && ok || bad "wget2_plugin: keep: $f was not kept"
        done
        [ ! -e "$W2/out2/only1.html" ] && ok || bad "wget2_plugin: keep: only1.html fetched (the kept copy's links were followed)"
        expect_grep "index in memory" "$TMP/err" "wget2_plugin: without index the summary says in memory"
        expect_grep '"url":"[^"]*/data.bin","decision":"not-html"' "$W2/run2.jsonl" \
            "wget2_plugin: --no-xattr: data.bin sniffed as not html"
        if grep -q '"content_type"' "$W2/run2.jsonl"; then
            bad "wget2_plugin: --no-xattr, yet a content type: $(grep content_type "$W2/run2.jsonl" | head -c 300)"
        else
            ok
        fi

        # 3. a second run with the index of run 1: the mirror's pages are what run 1 kept
        : >"$W2/logs/access.log"
        expect_status 0 "wget2_plugin: second run with the same index" -- timeout 20 wget2 -r $w2_opts \
            -P "$W2/out3" --plugin-dirs="$w2_dir" --plugin=simcrawl \
            --plugin-opt=simcrawl.index="$W2/site.idx" --plugin-opt=simcrawl.log="$W2/run3.jsonl" \
            "$w2_base/mirror/index.html"
        for p in t01 t07 t20 n1 n2 n3; do
            expect_grep "\"url\":\"$w2_base/mirror/$p.html\",\"decision\":\"exact-duplicate\".*\"duplicate_of\":\"$w2_base/$p.html\"" \
                "$W2/run3.jsonl" "wget2_plugin: run 2 drops mirror/$p.html, kept by run 1"
        done
        if grep -q -E "^GET /mirror/(n[123]-copy|x[123]|only[123])\.html " "$W2/logs/access.log"; then
            bad "wget2_plugin: run 2 followed the links of a dropped page: $(grep -E 'copy|/x|only' "$W2/logs/access.log" | head -c 300)"
        else
            ok
        fi
        if grep '"decision":"new"' "$W2/run3.jsonl" | grep -v "\"url\":\"$w2_base/mirror/index.html\"" | grep -q .; then
            bad "wget2_plugin: run 2 found a new page: $(grep '"new"' "$W2/run3.jsonl" | head -c 300)"
        else
            ok
        fi

        # 4. help and bad options
        expect_status 0 "wget2_plugin: simcrawl.help" -- timeout 20 wget2 --no-config \
            --plugin-dirs="$w2_dir" --plugin=simcrawl --plugin-opt=simcrawl.help
        expect_grep "simcrawl.index=FILE" "$TMP/out" "wget2_plugin: help lists index"
        expect_grep "simcrawl.keep" "$TMP/out" "wget2_plugin: help lists keep"
        : >"$W2/logs/access.log"
        expect_status 2 "wget2_plugin: k=9 is refused" -- timeout 20 wget2 --no-config \
            --plugin-dirs="$w2_dir" --plugin=simcrawl --plugin-opt=simcrawl.k=9 "$w2_base/index.html"
        expect_grep "simcrawl: k must be 0..7, not '9'" "$TMP/err" "wget2_plugin: the bad k is named"
        expect_status 2 "wget2_plugin: an unknown option is refused" -- timeout 20 wget2 --no-config \
            --plugin-dirs="$w2_dir" --plugin=simcrawl --plugin-opt=simcrawl.nosuch "$w2_base/index.html"
        expect_grep "simcrawl: unknown option 'nosuch'" "$TMP/err" "wget2_plugin: the unknown option is named"
        [ ! -s "$W2/logs/access.log" ] && ok || bad "wget2_plugin: wget2 downloaded despite a bad option"

        # 5. the README shows the command run in 1
        expect_grep '^wget2 -r --plugin-dirs=build/plugins/wget2 --plugin=simcrawl --plugin-opt=simcrawl.index=site.idx URL$' \
            README.md "wget2_plugin: README's command"
    fi
    nginx_stop
fi
trap 'rm -rf "$TMP"' EXIT
trap - INT TERM
