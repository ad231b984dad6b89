# Site templates (docs/FINGERPRINT.md, "Template blocks"): blocks repeated on many pages of a
# collection are left out of the fingerprints of fingerprint, pairs, clusters, index add.
# Sourced by tests/cli_test.sh (helpers ok, bad, expect_status, expect_grep; $TMP).
TS="$TMP/tpl"
mkdir -p "$TS/site" "$TS/rel"
# 40 pages: one big menu block (200 words), 8 words of their own, a footer; a real copy of
# p05; three releases of one long page (one word differs), among 40 other pages.
python3 - "$TS" <<'EOF'
import random, sys
d = sys.argv[1]; r = random.Random(7)
menu = ' '.join('menu%03d' % i for i in range(200))
words = ['w%03d' % i for i in range(600)]
foot = 'Copyright the example project all rights reserved terms of use privacy'
page = '<html><head><title>%s</title></head><body><div class="content">%s</div></body></html>\n'
for i in range(40):
    content = ' '.join(r.choice(words) for _ in range(8))
    body = '<p>%s</p><p>%s</p><p>%s</p>' % (menu, content, foot)
    open('%s/site/p%02d.html' % (d, i), 'w').write(page % ('Page %d' % i, body))
open('%s/site/zz-menu-only.html' % d, 'w').write(page % ('Menu', '<p>%s</p><p>%s</p>' % (menu, foot)))
# a stub: three words of its own among the template: fingerprinted whole, not "too little"
open('%s/site/zz-stub.html' % d, 'w').write(page % ('Stub', '<p>%s</p><p>stub one two</p><p>%s</p>' % (menu, foot)))
long_a = ' '.join(r.choice(words) for _ in range(300))
long_b = [r.choice(words) for _ in range(300)]
for v in range(3):
    b = list(long_b); b[10 + v] = 'release%d' % v
    body = '<p>%s</p><p>%s</p><p>%s</p><p>%s</p>' % (menu, long_a, ' '.join(b), foot)
    open('%s/rel/release%d.html' % (d, v), 'w').write(page % ('Release', body))
EOF
sed 's/<body>/<body><!-- a mirror -->/' "$TS/site/p05.html" > "$TS/site/p05-copy.html"
cp "$TS/site/"p*.html "$TS/rel/"

# without templates the menu makes distinct pages near-duplicates ...
expect_status 0 "pairs --no-templates" -- "$SIMCRAWL" pairs --no-templates "$TS/site"
sed '/p05-copy/d' "$TMP/out" > "$TS/false.txt"
if [ -s "$TS/false.txt" ]; then ok; else bad "the menu should make distinct pages pairs without templates"; fi
# ... with templates none are, and the real copy is still a pair
expect_status 0 "pairs with templates" -- "$SIMCRAWL" pairs "$TS/site"
if [ "$(wc -l < "$TMP/out")" = 1 ] && grep -q "p05-copy.html" "$TMP/out"; then ok; else
    bad "with templates only the copy is a pair: $(head -c 300 "$TMP/out")"; fi
# a page that is only the site's menu and footer has too little text
expect_status 0 "fingerprint the collection" -- "$SIMCRAWL" fingerprint "$TS/site/"*.html
expect_grep "zz-menu-only.html: too little text to fingerprint (0 words besides" "$TMP/err" "menu-only page not fingerprinted"
if grep -q "menu-only" "$TMP/out"; then bad "menu-only page got a fingerprint"; else ok; fi
expect_grep "zz-stub.html" "$TMP/out" "a stub with 3 words of its own among the template is fingerprinted whole"
# its fingerprint is the hash of its whole token string (version 6): XXH3_64bits_withSeed(
# "menu000 ... menu199 stub one two copyright ... privacy", "simshrt1") = faa3d245eb0ed0db,
# pinned here (tests/test_template.c checks the rule against XXH3 itself; the golden vectors
# have no template table, docs/FINGERPRINT.md)
if grep -q "^faa3d245eb0ed0db  .*zz-stub.html" "$TMP/out"; then ok; else
    bad "stub fingerprint is not the hash of its whole text: $(grep zz-stub "$TMP/out")"; fi
cp "$TMP/out" "$TS/fp.txt"
# fingerprint and pairs agree: pairs equals brute force over fingerprint's output
"$SIMCRAWL" pairs --k 7 "$TS/site/"*.html > "$TS/pairs.txt" 2>/dev/null
python3 - "$TS/fp.txt" "$TS/pairs.txt" <<'EOF' && ok || bad "pairs --k 7 differs from brute force over fingerprint"
import sys
fp = [l.split(None, 1) for l in open(sys.argv[1]).read().splitlines()]
want = set()
for i in range(len(fp)):
    for j in range(i + 1, len(fp)):
        d = bin(int(fp[i][0], 16) ^ int(fp[j][0], 16)).count('1')
        if d <= 7: want.add((d, fp[i][1], fp[j][1]))
got = set()
for l in open(sys.argv[2]).read().splitlines():
    d, a, b = l.split('\t'); got.add((int(d), a, b))
sys.exit(0 if got == want and len(want) > 0 else 1)
EOF
# stubs (docs/FINGERPRINT.md, "A page with little text of its own"): twenty stubs whose two
# own words differ ("operand v0", "operand v1", ...) among the site's menu and footer are
# twenty pages (fingerprinted whole they came within 3 of each other: 124 pairs); the same
# stub again is a pair
mkdir -p "$TS/stubs"
cp "$TS/site/"p*.html "$TS/stubs/"
python3 - "$TS/stubs" <<'EOF'
import sys
d = sys.argv[1]
menu = ' '.join('menu%03d' % i for i in range(200))
foot = 'Copyright the example project all rights reserved terms of use privacy'
page = '<html><head><title>Operand</title></head><body><div class="content">%s</div></body></html>\n'
for i in range(20):
    body = '<p>%s</p><p>operand v%d</p><p>%s</p>' % (menu, i, foot)
    open('%s/stub-%02d.html' % (d, i), 'w').write(page % body)
open('%s/stub-again.html' % d, 'w').write(page % ('<p>%s</p><p>operand v0</p><p>%s</p>' % (menu, foot)))
EOF
expect_status 0 "pairs over stubs" -- "$SIMCRAWL" pairs "$TS/stubs"
if [ "$(grep -c "stub-" "$TMP/out")" = 1 ] && grep -q "stub-00.html.*stub-again.html" "$TMP/out"; then ok
else bad "stubs: only the same stub again is a pair: $(grep -c "stub-" "$TMP/out") pairs"; fi
# two editions' stubs (docs/FINGERPRINT.md, "A page with little text of its own"; the Rust
# book's retired editions): each chapter's stub in ed1/ and ed2/ has the same title (its own
# words) and its edition's sentence (template: on every stub of that edition); they are two
# pages (version 5 made each a pair at distance 0). rel2/ is ed1/ again in another release
# (the same whole texts): each of its stubs pairs with its ed1/ stub, and only those
python3 - "$TS/editions" <<'EOF'
import os, sys
d = sys.argv[1]
menu = ' '.join('nav%03d' % i for i in range(60))
page = '<html><head><title>Book</title></head><body><div class="content">%s</div></body></html>\n'
titles = ['Getting Started', 'Common Concepts', 'Understanding Ownership',
          'Using Structs to Structure Related Data', 'Enums and Pattern Matching',
          'Managing Growing Projects', 'Common Collections', 'Error Handling',
          'Generic Types and Traits', 'Writing Automated Tests']
for ed, word in (('ed1', 'first'), ('ed2', 'second'), ('rel2', 'first')):
    os.makedirs('%s/%s' % (d, ed))
    for i, t in enumerate(titles):
        body = ('<p>%s</p><h1>%s</h1><p>The %s edition of the book is no longer distributed '
                'with the documentation.</p><p>You may want the current version of the book '
                'instead.</p>' % (menu, t, word))
        open('%s/%s/ch%02d.html' % (d, ed, i), 'w').write(page % body)
EOF
expect_status 0 "pairs over two editions' stubs" -- "$SIMCRAWL" pairs "$TS/editions"
python3 - "$TMP/out" <<'EOF' && ok || bad "editions: only each stub and its copy in rel2/ pair: $(head -c 400 "$TMP/out")"
import re, sys
got = set()
for l in open(sys.argv[1]).read().splitlines():
    d, a, b = l.split('\t')
    got.add(tuple(sorted(re.sub(r'.*/editions/', '', x) for x in (a, b))))
want = {('ed1/ch%02d.html' % i, 'rel2/ch%02d.html' % i) for i in range(10)}
sys.exit(0 if got == want else 1)
EOF
# clusters sees the same
expect_status 0 "clusters with templates" -- "$SIMCRAWL" clusters "$TS/site"
expect_grep "cluster 1: 2 documents" "$TMP/out" "one cluster: the copy"
if grep -q "cluster 2" "$TMP/out"; then bad "clusters: distinct pages clustered"; else ok; fi
# three releases of one page in a collection of 83 stay near-duplicates (their shared
# paragraphs are on 3 of 83 documents: < 20%, not template)
expect_status 0 "pairs over releases" -- "$SIMCRAWL" pairs "$TS/rel"
n=$(grep -c "release" "$TMP/out")
if [ "$n" = 3 ]; then ok; else bad "three releases should be 3 pairs, got $n: $(head -c 300 "$TMP/out")"; fi
# --no-templates and a lone page: fingerprints as before (the empty table)
"$SIMCRAWL" fingerprint --no-templates "$TS/site/p01.html" > "$TS/a.txt" 2>/dev/null
"$SIMCRAWL" fingerprint "$TS/site/p01.html" > "$TS/b.txt" 2>/dev/null
if [ -s "$TS/a.txt" ] && cmp -s "$TS/a.txt" "$TS/b.txt"; then ok; else bad "one page: templates changed its fingerprint"; fi
if grep -q "$(cut -c1-16 "$TS/a.txt")" "$TS/fp.txt"; then bad "p01's fingerprint should change with the collection's templates"; else ok; fi

# the index keeps the table: made by index add, used by query, saved with it
expect_status 0 "index add with templates" -- "$SIMCRAWL" index add "$TS/x.idx" "$TS/site"
expect_status 0 "index stats" -- "$SIMCRAWL" index stats "$TS/x.idx"
expect_grep "format version: 5" "$TMP/out" "index format 5"
expect_grep "template hosts: 1," "$TMP/out" "template table saved"
expect_status 0 "query with the saved table" -- "$SIMCRAWL" query --index "$TS/x.idx" "$TS/site/p07.html"
if [ "$(wc -l < "$TMP/out")" = 1 ] && grep -q "p07.html	0	" "$TMP/out"; then ok; else
    bad "query of p07 finds only itself: $(head -c 300 "$TMP/out")"; fi
expect_status 0 "query --no-templates" -- "$SIMCRAWL" query --no-templates --index "$TS/x.idx" "$TS/site/p07.html"
if grep -q "p07.html	0	" "$TMP/out"; then bad "without the table p07 is fingerprinted differently"; else ok; fi
# a damaged template section is rejected with its offset (the checksum would catch it
# first; rewrite the body checksum so the structural check is what speaks)
python3 - "$TS/x.idx" "$TS/bad.idx" <<'EOF' || bad "cannot make the damaged index"
import struct, sys
b = bytearray(open(sys.argv[1], 'rb').read())
size = struct.unpack_from('<Q', b, 64)[0]; tpl = struct.unpack_from('<Q', b, 88)[0]
start = size - tpl
struct.pack_into('<I', b, start + 4, 7)  # the section's reserved field
open(sys.argv[2], 'wb').write(b)
EOF
expect_status 2 "damaged template section" -- "$SIMCRAWL" index stats "$TS/bad.idx"
expect_grep "checksum" "$TMP/err" "damaged template section: checksum"

# streaming: dedup learns as pages arrive; the copy is dropped, the others kept. (The
# menu-only page comes last: as the first page of a host it would be fingerprinted with the
# menu, before the menu is known, and p00 could match it: the residual risk of the first
# pages of a host, docs/FINGERPRINT.md, "Template blocks".)
expect_status 0 "dedup with templates" -- "$SIMCRAWL" dedup --quiet --log "$TS/log.jsonl" "$TS/site"
n=$(grep -c '"decision": *"near-duplicate"' "$TS/log.jsonl")
m=$(grep -c '"decision": *"new"' "$TS/log.jsonl")
if [ "$n" = 1 ] && grep -q 'p05.html.*near-duplicate.*p05-copy.html' "$TS/log.jsonl"; then ok; else
    bad "dedup: only the copy is a near-duplicate, got $n: $(grep near-dup "$TS/log.jsonl" | head -c 400)"; fi
expect_status 0 "dedup --no-templates" -- "$SIMCRAWL" dedup --quiet --no-templates --log "$TS/log2.jsonl" "$TS/site"
n2=$(grep -c '"decision": *"near-duplicate"' "$TS/log2.jsonl")
if [ "$n2" -gt 1 ]; then ok; else bad "dedup --no-templates should drop distinct pages too ($n2)"; fi

# Template lines inside one block (issue 11): a source-listing page is one <pre>, a single
# "\n\n" paragraph, that opens with the licence every file of the project carries. Blocks
# are lines, so the licence lines are the collection's template and the listings are told
# apart by their own code; with paragraph blocks the licence stayed in (the <pre> is on one
# page only) and made distinct listings near-duplicates.
mkdir -p "$TS/src"
python3 - "$TS/src" <<'EOF'
import random, sys
d = sys.argv[1]; r = random.Random(11)
lic = ['%03d * licence line %d: the words every file of the project repeats here' % (i + 1, i)
       for i in range(30)]
names = ['n%03d' % i for i in range(500)]
for i in range(30):
    code = ['%03d %s %s = %s(%s);' % (31 + k, r.choice(names), r.choice(names), r.choice(names),
                                      r.choice(names)) for k in range(8)]
    pre = '\n'.join(lic + code)
    open('%s/src%02d.html' % (d, i), 'w').write(
        '<html><head><title>Source %d</title></head><body><pre>%s</pre></body></html>\n' % (i, pre))
EOF
expect_status 0 "pairs --no-templates over listings" -- "$SIMCRAWL" pairs --no-templates "$TS/src"
if [ -s "$TMP/out" ]; then ok; else bad "the licence should make listings pairs without templates"; fi
expect_status 0 "pairs over listings" -- "$SIMCRAWL" pairs "$TS/src"
if [ -s "$TMP/out" ]; then bad "licence lines are template: no listing pairs, got $(head -c 300 "$TMP/out")"; else ok; fi
expect_status 0 "fingerprint a listing page alone" -- "$SIMCRAWL" fingerprint "$TS/src/src03.html"
expect_status 0 "dedup over listings" -- "$SIMCRAWL" dedup --quiet --log "$TS/src.jsonl" "$TS/src"
n=$(grep -c '"decision": *"near-duplicate"' "$TS/src.jsonl")
# the first pages of a host are fingerprinted before the licence is known (the residual
# risk of docs/FINGERPRINT.md): from the third page on it is template
if [ "$n" -le 1 ]; then ok; else bad "dedup: listings dropped as near-duplicates ($n)"; fi
