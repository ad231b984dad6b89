# Directory walks (cli/walk.c) in every command that walks: a tree with two links to
# itself (l -> ., m -> .) and a link to its parent (sub/up -> ..) is walked once, each
# loop named once on stderr, each real page read once, and every command ends (timeout
# 20: before, dedup followed the links 64 levels deep and never ended). A loop is a
# skipped input: exit 2, as an unreadable directory. A second link to a directory that
# is not a loop is skipped with a note and no failure. Sourced by tests/cli_test.sh.
WK=$TMP/walk
mkdir -p "$WK/tree/sub/deeper" "$WK/two/real"
python3 - "$WK/tree" <<'PY'
import sys, os
sys.path.insert(0, "tests")
from pagegen import para, page
d = sys.argv[1]
base = [para(60, i) for i in range(4)]
near = base[:]
near[3] = near[3] + " stream"
files = {"a.html": page("Alpha", base),
         "sub/b.html": page("Beta", [para(60, 10 + i) for i in range(4)]),
         "sub/deeper/c.html": page("Gamma", [para(60, 20 + i) for i in range(4)]),
         "sub/deeper/d.html": page("Alpha", near)}
for name, text in files.items():
    open(os.path.join(d, name), "w").write(text)
PY
ln -s . "$WK/tree/l"
ln -s . "$WK/tree/m"
ln -s .. "$WK/tree/sub/up"
# loops: each named exactly once
walk_loops() {
    for l in l m sub/up; do
        n=$(grep -c "^simcrawl $1: $WK/tree/$l: directory loop (the same directory as $WK/tree), skipped\$" "$TMP/err")
        [ "$n" = 1 ] && ok || bad "walk $1: loop $l named $n times; stderr: $(head -c 300 "$TMP/err")"
    done
    n=$(grep -c "directory loop" "$TMP/err")
    [ "$n" = 3 ] && ok || bad "walk $1: $n loop diagnostics, want 3"
}
expect_status 2 "walk: dedup ends on self-links" -- timeout 20 "$SIMCRAWL" dedup --log "$WK/log.jsonl" "$WK/tree"
walk_loops dedup
expect_grep "^dedup: 4 records.*3 new, 1 near-duplicate" "$TMP/err" "walk: dedup reads each page once"
[ "$(wc -l <"$WK/log.jsonl")" = 4 ] && ok || bad "walk: dedup log has $(wc -l <"$WK/log.jsonl") lines, want 4"
expect_status 2 "walk: pairs ends on self-links" -- timeout 20 "$SIMCRAWL" pairs "$WK/tree"
walk_loops pairs
printf '1\t%s/tree/a.html\t%s/tree/sub/deeper/d.html\n' "$WK" "$WK" >"$WK/want"
cmp -s "$WK/want" "$TMP/out" && ok || bad "walk: pairs output: $(head -c 300 "$TMP/out")"
expect_status 2 "walk: clusters ends on self-links" -- timeout 20 "$SIMCRAWL" clusters "$WK/tree"
walk_loops clusters
[ "$(grep -c '^cluster ' "$TMP/out")" = 1 ] && ok || bad "walk: clusters output: $(head -c 300 "$TMP/out")"
expect_grep "^cluster 1: 2 documents" "$TMP/out" "walk: clusters of pages read once"
expect_status 2 "walk: index add ends on self-links" -- timeout 20 "$SIMCRAWL" index add "$WK/x.idx" "$WK/tree"
walk_loops index
expect_grep "made with 4 documents, now 4" "$TMP/err" "walk: index add reads each page once"
expect_status 2 "walk: query ends on self-links" -- timeout 20 "$SIMCRAWL" query --index "$WK/x.idx" "$WK/tree"
walk_loops query
[ "$(wc -l <"$TMP/out")" = 6 ] && ok || bad "walk: query output: $(head -c 300 "$TMP/out")"

# a second link to a directory (no loop): read once, noted, exit 0
cp "$WK/tree/a.html" "$WK/two/real/a.html"
ln -s real "$WK/two/alias"
expect_status 0 "walk: a second link to a directory is no failure" -- timeout 20 "$SIMCRAWL" pairs --k 0 "$WK/two"
expect_grep "^simcrawl pairs: $WK/two/real: the same directory as one already read, skipped" "$TMP/err" "walk: second link noted"
[ ! -s "$TMP/out" ] && ok || bad "walk: a page read twice by two links: $(head -c 300 "$TMP/out")"

# an unreadable directory: named with the reason, the rest of the walk goes on, exit 2 (a
# skipped input). As root, DAC permission checks are bypassed: the command then runs
# without the capabilities that bypass them (setpriv), so that mode 000 is unreadable.
mkdir -p "$WK/ur/locked" "$WK/ur/open"
cp "$WK/tree/a.html" "$WK/ur/open/a.html"
cp "$WK/tree/sub/deeper/d.html" "$WK/ur/open/d.html"
cp "$WK/tree/sub/b.html" "$WK/ur/locked/b.html"
chmod 000 "$WK/ur/locked"
as_user=""
[ "$(id -u)" = 0 ] && as_user="setpriv --inh-caps=-dac_override,-dac_read_search --bounding-set=-dac_override,-dac_read_search --"
for c in pairs dedup; do
    expect_status 2 "walk: $c goes on past an unreadable directory" -- timeout 20 $as_user "$SIMCRAWL" $c "$WK/ur"
    expect_grep "^simcrawl $c: $WK/ur/locked: cannot read directory: Permission denied\$" "$TMP/err" "walk: $c names the unreadable directory"
    cp "$TMP/out" "$WK/ur.$c.out"
    cp "$TMP/err" "$WK/ur.$c.err"
done
printf '1\t%s/ur/open/a.html\t%s/ur/open/d.html\n' "$WK" "$WK" >"$WK/want"
cmp -s "$WK/want" "$WK/ur.pairs.out" && ok || bad "walk: pairs past an unreadable directory: $(head -c 300 "$WK/ur.pairs.out")"
expect_grep "^dedup: 2 records.*1 new, 1 near-duplicate" "$WK/ur.dedup.err" "walk: dedup reads the readable pages"
chmod 755 "$WK/ur/locked"
