# simcrawl crawl: the first pages of a host under a big menu that the extractor keeps
# (issue 11; docs/FINGERPRINT.md, "Where T comes from"). tests/data/young_host/gen.py
# writes the site: index.html and p01..p19.html, each the menu (600 words), 6 words of
# their own and a footer, then long.html (the menu and 1,200 words of its own) and
# copy/long.html, its mirror with the date line changed. Crawled from index.html with
# --concurrency 1 --workers 1 (link order; one parsing thread, so a page is fingerprinted
# after the page before it was decided and counted: with more, a slow machine fingerprints
# a 4th page before the 3rd is counted) on python3's http.server at 127.0.0.1, a random
# free port.
# Every short page after the first is within k of it by the menu; a near-duplicate of a
# young host counts its blocks, so the menu is a template after 3 counted pages and at
# most 2 short pages are dropped (before, a dropped page counted nothing: 17 of the 19
# were dropped). The mirror of long.html must still be dropped, and page1-edit.html after
# page1.html (a page edited in one line, the host's second page) too.
# Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
YH=$TMP/young_host
YH_HTTPD=
trap '[ -n "$YH_HTTPD" ] && kill "$YH_HTTPD" 2>/dev/null; rm -rf "$TMP"' EXIT
trap 'exit 2' INT TERM
mkdir -p "$YH"
python3 tests/data/young_host/gen.py "$YH/site"
http_serve "$YH/site" "$YH/httpd.log"
YH_HTTPD=$http_pid
yh_port=$http_port
if [ -z "$yh_port" ]; then
    bad "crawl_young_host: http.server did not start: $(head -c 300 "$YH/httpd.log")"
else
    yh_base=http://127.0.0.1:$yh_port
    # yh_check WHAT LOG: at most 2 of the 19 short pages dropped, the others new; of
    # long.html and its mirror one new, the other dropped (either may come first: which of
    # two pages in flight at once is fetched first is timing)
    yh_check() {
        yh_near=$(grep -E "\"url\":\"$yh_base/p[0-9][0-9]\.html\"" "$2" |
            grep -c '"decision":"near-duplicate"')
        yh_new=$(grep -E "\"url\":\"$yh_base/p[0-9][0-9]\.html\"" "$2" | grep -c '"decision":"new"')
        [ "$yh_near" -le 2 ] && [ $((yh_near + yh_new)) = 19 ] && ok ||
            bad "crawl_young_host ($1): $yh_near of 19 short pages dropped as near-duplicates, $yh_new new, want at most 2 dropped: $(grep -o '"url":"[^"]*","[^}]*"decision":"[a-z-]*"' "$2" | sed 's/",.*"decision"/ /' | tr '\n' ' ' | head -c 900)"
        yh_l=$(grep -E "\"url\":\"$yh_base/(copy/)?long.html\"" "$2" |
            grep -o '"decision":"[a-z-]*"' | sed 's/exact-/near-/' | sort | tr '\n' ' ')
        [ "$yh_l" = '"decision":"near-duplicate" "decision":"new" ' ] && ok ||
            bad "crawl_young_host ($1): of long.html and its mirror not one new, one dropped: $(grep 'long.html' "$2" | head -c 600)"
    }
    for yh_mode in plain state; do
        yh_opt=
        [ "$yh_mode" = state ] && yh_opt="--state $YH/state"
        # shellcheck disable=SC2086 # yh_opt is two words or none
        expect_status 0 "crawl_young_host ($yh_mode): crawl ends" -- timeout 120 "$SIMCRAWL" crawl \
            --quiet --delay 0 --concurrency 1 --workers 1 $yh_opt --log "$YH/$yh_mode.jsonl" "$yh_base/index.html"
        yh_check "$yh_mode" "$YH/$yh_mode.jsonl"
    done
    # stopped after 3 pages (the 2nd and 3rd near-duplicates, counted: records of their
    # own in the state) and resumed: the deadlock stays broken (without the records the
    # resumed crawl would count one document and drop the short pages after the stop);
    # with --method minhash the resume reads those records too
    for yh_m in simhash minhash; do
        expect_status 0 "crawl_young_host ($yh_m): 3 pages with --state" -- timeout 120 "$SIMCRAWL" \
            crawl --quiet --delay 0 --concurrency 1 --workers 1 --method "$yh_m" --max-pages 3 \
            --state "$YH/st-$yh_m" --log "$YH/r-$yh_m.jsonl" "$yh_base/index.html"
        expect_status 0 "crawl_young_host ($yh_m): resumed" -- timeout 120 "$SIMCRAWL" crawl --quiet \
            --delay 0 --concurrency 1 --workers 1 --method "$yh_m" --state "$YH/st-$yh_m" \
            --log "$YH/r-$yh_m.jsonl" "$yh_base/index.html"
    done
    yh_check resumed "$YH/r-simhash.jsonl"
    # the host's second page edited in one line is still a near-duplicate (dedup, files)
    expect_status 0 "crawl_young_host: dedup page1, page1-edit" -- "$SIMCRAWL" dedup --log "$YH/edit.jsonl" \
        tests/data/fingerprint/page1.html tests/data/fingerprint/page1-edit.html
    grep 'page1-edit.html' "$YH/edit.jsonl" | grep -q '"decision":"near-duplicate"' && ok ||
        bad "crawl_young_host: page1-edit.html after page1.html not a near-duplicate: $(head -c 600 "$YH/edit.jsonl")"
fi
http_stop "$YH_HTTPD"
YH_HTTPD=
trap 'rm -rf "$TMP"' EXIT
trap - INT TERM
