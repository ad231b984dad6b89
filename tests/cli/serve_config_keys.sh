# serve --help says which options are also config keys, as crawl's does (both checked by
# tests/tools/config_keys.py): every option its help lists and its "each but ... is also a
# key" sentence does not name must be accepted in a [serve] section with a valid value,
# and the ones it names refused there with an error naming the file, the line and the
# key. A bad --threads on the command line (read after the files) stops each run before
# it listens, so an accepted key shows as that error. Sourced by tests/cli_test.sh.
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
probe-lines auto
probe-lines-min 1000
probe-lines-max-bytes 1000000
EOF2
if python3 tests/tools/config_keys.py "$SIMCRAWL" serve "$SK/help.txt" "$SK/values.txt" \
    "--threads: 0 (one per CPU) to 256 threads, got '-1'" 10 --threads -1 >"$SK/check.out" 2>&1
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
