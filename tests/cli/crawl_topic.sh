# simcrawl crawl --topic matches the topic's phrases (issue 18): pages that say "foreign
# key constraint" rank above pages that only say "foreign", "key" and "constraint" apart
# more often, which a bag of words ranks first (checked here too, so the test can fail);
# plurals match ("foreign keys"). Against a directory served on 127.0.0.1
# (tests/tools/dir_server.py). Sourced by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
TP=$TMP/topic
mkdir -p "$TP/site"
python3 - "$TP/site" <<'PYEOF'
import sys
d = sys.argv[1]
def page(title, sentence, n):
    return '<html><head><title>%s</title></head><body><h1>%s</h1><p>%s</p></body></html>\n' % (
        title, title, ' '.join([sentence] * n))
open(d + '/index.html', 'w').write('<html><head><title>Home</title></head><body><p>%s</p>'
    '<a href="fdw.html">one</a> <a href="fk.html">two</a> <a href="plural.html">three</a></body></html>\n'
    % ' '.join(['welcome to the manual of the database server'] * 20))
# "foreign" often, "key" and "constraint" apart: a bag of words prefers it
open(d + '/fdw.html', 'w').write(page('Foreign data', 'the foreign server wraps a foreign table with '
    'a key and a foreign data wrapper has a constraint', 30))
open(d + '/fk.html', 'w').write(page('Keys', 'a foreign key constraint links rows of two tables '
    'in the database by their columns and values', 30))
open(d + '/plural.html', 'w').write(page('Plural', 'foreign keys and their constraints link rows '
    'of two tables in the database by their columns', 30))
PYEOF
python3 tests/tools/dir_server.py --dir "$TP/site" --port-file "$TP/port" &
tp_srv=$!
i=0
while [ ! -f "$TP/port" ] && [ $i -lt 100 ]; do sleep 0.05; i=$((i + 1)); done
tp_base="http://127.0.0.1:$(cat "$TP/port")"
expect_status 0 "crawl --topic with a phrase" -- timeout 60 "$SIMCRAWL" crawl --quiet --delay 0 \
    --robots no --topic "foreign key constraint" --log "$TP/t.jsonl" "$tp_base/"
python3 - "$TP/t.jsonl" "$TP/site" >"$TP/check" 2>&1 <<'PYEOF'
import json, math, re, sys
from collections import Counter
rel = {json.loads(l)['url'].rsplit('/', 1)[1]: json.loads(l).get('relevance') for l in open(sys.argv[1])}
def bag_cosine(f):  # the bag of words the crawl used before phrases
    words = re.findall(r'\w+', re.sub(r'<[^>]+>', ' ', open(sys.argv[2] + '/' + f).read()).lower())
    tf = Counter(words); topic = ['foreign', 'key', 'constraint']
    return sum(tf[w] for w in topic) / (math.sqrt(3) * math.sqrt(sum(v * v for v in tf.values())))
errors = []
if not bag_cosine('fdw.html') > bag_cosine('fk.html'):
    errors.append('the bag of words should prefer fdw.html: %.3f %.3f' % (bag_cosine('fdw.html'), bag_cosine('fk.html')))
if not (rel.get('fk.html') or 0) > (rel.get('fdw.html') or 1):
    errors.append('phrases: fk.html %s should rank above fdw.html %s' % (rel.get('fk.html'), rel.get('fdw.html')))
if not (rel.get('plural.html') or 0) > (rel.get('fdw.html') or 1):
    errors.append('plurals: plural.html %s should rank above fdw.html %s' % (rel.get('plural.html'), rel.get('fdw.html')))
print('\n'.join(errors) if errors else 'topic ok')
PYEOF
if grep -q '^topic ok$' "$TP/check"; then ok; else bad "crawl --topic phrases: $(cat "$TP/check")"; fi
kill "$tp_srv" 2>/dev/null
wait "$tp_srv" 2>/dev/null
