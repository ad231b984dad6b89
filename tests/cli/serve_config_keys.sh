# serve --help says which options are also config keys, as crawl's does
# (crawl_config_keys.sh): every option its help lists and its "each but ... is also a key"
# sentence does not name must be accepted in a [serve] section with a valid value, and the
# ones it names refused there with an error naming the file, the line and the key. A bad
# --threads on the command line (read after the files) stops each run before it listens,
# so an accepted key shows as that error. Sourced by tests/cli_test.sh.
SK=$TMP/serve_keys
mkdir -p "$SK"
printf 'a-token-of-the-test\n' >"$SK/token"
chmod 600 "$SK/token"
expect_status 0 "serve --help" -- "$SIMCRAWL" serve --help
cp "$TMP/out" "$SK/help.txt"
cat >"$SK/values.txt" <<EOF2
listen 127.0.0.1:0
index $SK/x.idx
k 2
method minhash
threshold 0.7
fsync always
lock-wait 5
token-file $SK/token
max-body 4096
threads 2
max-connections 16
timeout 5
access-log $SK/access.log
EOF2
if python3 - "$SIMCRAWL" "$SK" >"$SK/check.out" 2>&1 <<'PYEOF'
import os, re, subprocess, sys
simcrawl, d = sys.argv[1], sys.argv[2]
help_text = open(os.path.join(d, 'help.txt')).read()
options = re.findall(r'^  (?:-[a-z], )?--([a-z][a-z-]*)', help_text, re.M)
m = re.search(r'options \(each but (.*?) is also a key', help_text, re.S)
if not m:
    sys.exit('serve --help does not say which options are not config keys')
only = re.findall(r'--([a-z][a-z-]*)', m.group(1))
values = dict(line.split(' ', 1) for line in open(os.path.join(d, 'values.txt')).read().splitlines())
problems = []
def run(key, value):
    path = os.path.join(d, 'k.conf')
    with open(path, 'w') as f:
        f.write('[serve]\n# one key\n%s = %s\n' % (key, value))
    r = subprocess.run([simcrawl, 'serve', '--config', path, '--threads', '-1'],
                       capture_output=True, text=True, timeout=30)
    return path, r.returncode, r.stderr
keys = [o for o in options if o not in only]
if len(keys) < 10 or 'listen' not in keys:
    problems.append('only %d keys read from serve --help' % len(keys))
for key in keys:
    if key not in values:
        problems.append('%s: the help calls it a config key, and this test has no value for it' % key)
        continue
    path, rc, err = run(key, values[key])
    if rc != 1 or "--threads: 0 (one per CPU) to 256 threads, got '-1'" not in err:
        problems.append('%s = %s: not accepted in a config file (exit %d): %s'
                        % (key, values[key], rc, err.strip()[:200]))
for key in only:
    path, rc, err = run(key, 'yes')
    want = "%s:3: '%s' is not a config key: --%s is given on the command line only" % (path, key, key)
    if rc != 1 or want not in err:
        problems.append('%s: not refused as it should be (exit %d): %s' % (key, rc, err.strip()[:200]))
for key in values:
    if key not in options:
        problems.append('%s: a value here for an option serve --help does not list' % key)
if sorted(only) != ['config', 'help', 'quiet']:
    problems.append('the help names %s as command-line only' % only)
print('\n'.join(problems) if problems else 'keys ok: %d accepted, %d refused' % (len(keys), len(only)))
PYEOF
then
    if grep -q '^keys ok' "$SK/check.out"; then ok; else bad "serve config keys: $(head -c 1500 "$SK/check.out")"; fi
else
    bad "serve config keys: $(head -c 600 "$SK/check.out")"
fi
# the shipped config file names every key of the help in its [serve] section, and they
# are all accepted there
for key in $(sed -n 's/^  \(-[a-z], \)\{0,1\}--\([a-z][a-z-]*\).*/\2/p' "$SK/help.txt"); do
    case $key in config | quiet | help) continue ;; esac
    sed -n '/^\[serve\]/,$p' config/simcrawl.conf | grep -Eq "^(# )?$key =" ||
        bad "config/simcrawl.conf's [serve] section has no line for the key $key"
done
expect_status 1 "serve --config config/simcrawl.conf --threads -1" -- \
    "$SIMCRAWL" serve --config config/simcrawl.conf --threads -1
expect_grep "got '-1'" "$TMP/err" "config/simcrawl.conf's [serve] keys are all accepted"
