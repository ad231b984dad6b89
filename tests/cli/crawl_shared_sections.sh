# simcrawl crawl: pages that share a large included section are all kept, a real mirror
# is still dropped (issue 11). tests/data/crawl_shared/ holds git's own manual pages
# git-diff, git-log and git-show (git-doc 1:2.39.5-0+deb12u3, AsciiDoc, gzipped), which
# include the same list of diff options (about half of each page's words) beside their
# own NAME, SYNOPSIS, DESCRIPTION and EXAMPLES, plus an index linking to them and to
# mirror/git-log.html, a byte-for-byte copy of git-log.html made here. An extractor that
# keeps only a page's largest section fingerprints all three as the options list (within
# distance 1 of each other: the false drops that issue 11 reports). Served by python3's
# http.server on 127.0.0.1 at a random free port (no robots.txt: a 404, so everything is
# allowed; the pages' links to the rest of the manual are 404s). The crawl log must mark
# the three pages "new" and exactly one of git-log.html / mirror/git-log.html a near- or
# exact duplicate.
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
CS=$TMP/crawl_shared
CS_HTTPD=
trap '[ -n "$CS_HTTPD" ] && kill "$CS_HTTPD" 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 2' INT TERM
mkdir -p "$CS/site/mirror"
cp tests/data/crawl_shared/*.html "$CS/site/"
for f in tests/data/crawl_shared/*.html.gz; do
    gzip -dc "$f" >"$CS/site/$(basename "$f" .gz)"
done
cp "$CS/site/git-log.html" "$CS/site/mirror/git-log.html"
http_serve "$CS/site" "$CS/httpd.log"
CS_HTTPD=$http_pid
cs_port=$http_port
if [ -z "$cs_port" ]; then
    bad "crawl_shared_sections: http.server did not start: $(head -c 300 "$CS/httpd.log")"
else
    cs_base=http://127.0.0.1:$cs_port
    expect_status 0 "crawl_shared_sections: crawl ends" -- timeout 120 "$SIMCRAWL" crawl --quiet \
        --delay 0 --log "$CS/log.jsonl" "$cs_base/index.html"
    for p in git-diff git-log git-show; do
        if grep "\"url\":\"$cs_base/$p.html\"" "$CS/log.jsonl" | grep -q '"decision":"new"'; then
            ok
        elif grep "\"url\":\"$cs_base/mirror/git-log.html\"" "$CS/log.jsonl" | grep -q '"decision":"new"' &&
            [ "$p" = git-log ]; then
            ok # the mirror came first: the original is then the duplicate, checked below
        else
            bad "crawl_shared_sections: $p.html shares only its OPTIONS with the others, yet is not new: $(grep "/$p.html\"" "$CS/log.jsonl" | head -c 400)"
        fi
    done
    cs_dups=$(grep -E "\"url\":\"$cs_base/(mirror/)?git-log.html\"" "$CS/log.jsonl" |
        grep -c -E '"decision":"(near|exact)-duplicate"')
    [ "$cs_dups" = 1 ] && ok ||
        bad "crawl_shared_sections: $cs_dups of git-log.html and its mirror dropped as duplicates, want 1: $(grep 'git-log' "$CS/log.jsonl" | head -c 600)"
    # the log's fields (DESIGN.md, "The crawl log"): time (RFC 3339, UTC), content_type,
    # size (the body's bytes as served), links_found beside links (enqueued)
    cs_line=$(grep "\"url\":\"$cs_base/git-diff.html\"" "$CS/log.jsonl")
    cs_size=$(wc -c <"$CS/site/git-diff.html" | tr -d ' ')
    if printf '%s' "$cs_line" | grep -q '^{"time":"20[0-9][0-9]-[01][0-9]-[0-3][0-9]T[0-2][0-9]:[0-5][0-9]:[0-6][0-9]\.[0-9][0-9][0-9]Z","url":' &&
        printf '%s' "$cs_line" | grep -q '"content_type":"text/html' &&
        printf '%s' "$cs_line" | grep -q "\"size\":$cs_size," &&
        printf '%s' "$cs_line" | grep -q '"links_found":[1-9][0-9]*,"links":[0-9]'; then
        ok
    else
        bad "crawl_shared_sections: log line without time, content_type, size $cs_size or links_found: $(printf '%s' "$cs_line" | head -c 400)"
    fi
    cs_new=$(grep -c '"decision":"new"' "$CS/log.jsonl")
    [ "$cs_new" = 4 ] && ok ||
        bad "crawl_shared_sections: $cs_new pages new, want 4 (index and the three pages): $(head -c 800 "$CS/log.jsonl")"
fi
http_stop "$CS_HTTPD"
CS_HTTPD=
trap 'rm -rf "$TMP"' EXIT
trap - INT TERM
