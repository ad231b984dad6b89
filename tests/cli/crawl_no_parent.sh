# simcrawl crawl --no-parent (issue 18, wget's -np): on a seed's host only URLs under the
# seed's directory are followed, per seed; a seed naming a file stands for its directory.
# Against a directory served on 127.0.0.1 (tests/tools/dir_server.py). Sourced by
# tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
NP=$TMP/no_parent
mkdir -p "$NP/site/docs/sub" "$NP/site/guide" "$NP/site/other"
np_page() { # FILE TITLE LINK...
    f=$1 t=$2; shift 2
    { printf '<html><head><title>%s</title></head><body><h1>%s</h1><p>' "$t" "$t"
      for w in $(seq 1 60); do printf '%s%s ' "$t" "$w"; done; printf '</p>'
      for l in "$@"; do printf '<a href="%s">%s</a> ' "$l" "$l"; done
      printf '</body></html>\n'; } >"$NP/site/$f"
}
np_page docs/index.html docsindex a.html sub/b.html ../top.html /other/x.html ../docs
np_page docs/a.html docsa index.html ../guide/more.html
np_page docs/sub/b.html docsb ../a.html ../../other/y.html
np_page guide/start.html guidestart more.html ../guide.html /docs/
np_page guide/more.html guidemore start.html
np_page guide.html guideparent
np_page top.html top
np_page other/x.html otherx
np_page other/y.html othery
python3 tests/tools/dir_server.py --dir "$NP/site" --port-file "$NP/port" &
np_srv=$!
i=0
while [ ! -f "$NP/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
np_base="http://127.0.0.1:$(cat "$NP/port")"
np_urls() { sed 's/.*"url":"\([^"]*\)".*/\1/' "$1" | sed "s|^$np_base||" | sort | tr '\n' ' '; }

expect_status 0 "crawl --no-parent" -- timeout 60 "$SIMCRAWL" crawl --quiet --delay 0 \
    --robots no --no-parent --log "$NP/np.jsonl" "$np_base/docs/" "$np_base/guide/start.html"
got=$(np_urls "$NP/np.jsonl")
want="/docs/ /docs/a.html /docs/index.html /docs/sub/b.html /guide/more.html /guide/start.html "
[ "$got" = "$want" ] && ok || bad "crawl --no-parent: fetched '$got', want '$want'"
# without it the parents are crawled (the test can fail)
expect_status 0 "crawl without --no-parent" -- timeout 60 "$SIMCRAWL" crawl --quiet --delay 0 \
    --robots no --log "$NP/all.jsonl" "$np_base/docs/" "$np_base/guide/start.html"
got=$(np_urls "$NP/all.jsonl")
for u in /top.html /other/x.html /other/y.html /guide.html; do
    case " $got" in *" $u "*) ok ;; *) bad "crawl without --no-parent misses $u: '$got'" ;; esac
done
# the config key; a seed naming a file keeps its directory only
printf '[crawl]\nno-parent = yes\n' >"$NP/np.conf"
expect_status 0 "crawl config no-parent = yes" -- timeout 60 "$SIMCRAWL" crawl --quiet --delay 0 \
    --robots no --config "$NP/np.conf" --log "$NP/file.jsonl" "$np_base/docs/sub/b.html"
got=$(np_urls "$NP/file.jsonl")
[ "$got" = "/docs/sub/b.html " ] && ok || bad "crawl no-parent from a file seed: '$got'"
printf '[crawl]\nno-parent = maybe\n' >"$NP/bad.conf"
expect_status 1 "crawl config no-parent = maybe" -- "$SIMCRAWL" crawl --config "$NP/bad.conf" "$np_base/"
expect_grep "no-parent: yes or no" "$TMP/err" "a bad no-parent value is named"
expect_status 0 "crawl --help" -- "$SIMCRAWL" crawl --help
expect_grep "\-\-no-parent" "$TMP/out" "crawl --help lists --no-parent"
kill "$np_srv" 2>/dev/null
wait "$np_srv" 2>/dev/null
