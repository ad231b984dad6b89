# crawl --help says which options are also config keys (issue 18): every option its help
# lists is taken from it, the ones its "options (each but ... is also a key" sentence names
# must be refused in a config file with an error naming the file, the line and the key, and
# every other one must be accepted there with a valid value (the run then stops at "no seed
# URL", after the file was read). config/simcrawl.conf's keys are all accepted too. Sourced
# by tests/cli_test.sh (helpers, $SIMCRAWL, $TMP).
CK=$TMP/config_keys
mkdir -p "$CK/state"
printf '# no seed\n' >"$CK/seeds.txt"
printf 'topic words\n' >"$CK/topic.txt"
printf 'not read before the crawl\n' >"$CK/ca.pem"
expect_status 0 "crawl --help" -- "$SIMCRAWL" crawl --help
cp "$TMP/out" "$CK/help.txt"
# a valid value for each key; an option the help lists that has none here fails the test
# (so a new option gets a line)
cat >"$CK/values.txt" <<EOF
seeds $CK/seeds.txt
max-pages 5
max-depth 2
concurrency 4
per-host 2
delay 0.5
max-delay 10
scope domain
no-parent yes
page-requisites yes
include ^http://
exclude \\.pdf$
topic foo bar
topic-file $CK/topic.txt
min-relevance 0.1
k 2
method minhash
threshold 0.7
warc $CK/x.warc.gz
warc-gzip-level 6
log $CK/x.jsonl
report $CK/r.html
user-agent test/1.0
ca-file $CK/ca.pem
max-body 2048
max-memory 2097152
max-links 10
max-nesting 10
timeout 5
connect-timeout 5
workers 1
robots no
robots-outage 10
robots-backoff 1
unreachable-retries 1
unreachable-time 5
no-templates yes
state $CK/state
seen-memory 8192
durable yes
redis redis://127.0.0.1:1
redis-retry 5
redis-index redis://127.0.0.1:2
worker-name w1
lease-time 5
host-lease-time 2
frontier-shards 4
overwrite yes
EOF
if python3 tests/tools/config_keys.py "$SIMCRAWL" crawl "$CK/help.txt" "$CK/values.txt" \
    "no seed URL" 40 >"$CK/check.out" 2>&1
then
    if grep -q '^keys ok' "$CK/check.out"; then ok; else bad "crawl config keys: $(head -c 1500 "$CK/check.out")"; fi
else
    bad "crawl config keys: $(head -c 600 "$CK/check.out")"
fi
# the shipped config file names every key of the help (set, or commented out with its
# default), so a new option gets its line there
for key in $(sed -n 's/^  \(-[a-z], \)\{0,1\}--\([a-z][a-z-]*\).*/\2/p' "$CK/help.txt"); do
    case $key in config | quiet | verbose | help) continue ;; esac
    sed -n '/^\[crawl\]/,/^\[/p' config/simcrawl.conf | grep -Eq "^(# )?$key =" ||
        bad "config/simcrawl.conf's [crawl] section has no line for the key $key"
done
ok
# the shipped config file: every key of its [crawl] section accepted
expect_status 1 "crawl --config config/simcrawl.conf" -- "$SIMCRAWL" crawl --config config/simcrawl.conf
expect_grep "no seed URL" "$TMP/err" "config/simcrawl.conf's [crawl] keys are all accepted"
# no-templates as a key does what the option does: pages that share five blocks and differ
# in one get the fingerprints of their whole texts, not those of the default (which learns
# the shared blocks as the site's template after three pages and leaves them out)
mkdir -p "$CK/site"
python3 - "$CK/site" <<'PYEOF'
import os, random, sys
random.seed(7)
vocab = ['w%d' % i for i in range(2000)]
shared = ''.join('<div class="s%d"><p>%s</p></div>' % (i, ' '.join(random.choice(vocab) for _ in range(60)))
                 for i in range(5))
links = ''.join('<a href="%d.html">p%d</a> ' % (m, m) for m in range(12))
for n in range(12):
    own = ' '.join(random.choice(vocab) for _ in range(40))
    with open(os.path.join(sys.argv[1], '%d.html' % n), 'w') as f:
        f.write('<html><head><title>P%d</title></head><body>%s<div class="main"><p>%s</p></div>%s'
                '</body></html>\n' % (n, shared, own, links))
PYEOF
python3 tests/tools/dir_server.py --dir "$CK/site" --port-file "$CK/port" &
ck_srv=$!
i=0
while [ ! -f "$CK/port" ] && [ $i -lt 200 ]; do sleep 0.05; i=$((i + 1)); done
printf '[crawl]\nno-templates = yes\n' >"$CK/nt.conf"
# one connection, one worker: the pages arrive in one order, the template is learned alike
ck_prints() {
    timeout 60 "$SIMCRAWL" crawl --quiet --delay 0 --concurrency 1 --workers 1 --robots no \
        --log - "$@" "http://127.0.0.1:$(cat "$CK/port")/0.html" |
        sed 's/.*"url":"\([^"]*\)".*"fingerprint":"\([0-9a-f]*\)".*/\1 \2/' | sort
}
ck_prints >"$CK/default.txt"
ck_prints --no-templates >"$CK/option.txt"
ck_prints --config "$CK/nt.conf" >"$CK/key.txt"
kill "$ck_srv" 2>/dev/null
wait "$ck_srv" 2>/dev/null
[ "$(wc -l <"$CK/option.txt")" = 12 ] && cmp -s "$CK/option.txt" "$CK/key.txt" && ok ||
    bad "crawl no-templates = yes: not the fingerprints of --no-templates: $(diff "$CK/option.txt" "$CK/key.txt" | head -c 300)"
cmp -s "$CK/default.txt" "$CK/option.txt" && bad "crawl --no-templates: the same fingerprints as the default" || ok
printf '[crawl]\nno-templates = maybe\n' >"$CK/nt.conf"
expect_status 1 "crawl no-templates = maybe" -- "$SIMCRAWL" crawl --config "$CK/nt.conf" http://127.0.0.1:1/
expect_grep "nt.conf:2: --no-templates: yes or no, got 'maybe'" "$TMP/err" "a bad no-templates value is named"
