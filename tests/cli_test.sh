#!/bin/sh
# Command-line tests: what a user or a script sees (exit status, stdout, stderr).
# Each tests/cli/*.sh (or each file named: sh tests/cli_test.sh tests/cli/serve.sh) is
# sourced in turn with these helpers; SIMCRAWL is the binary.
# Prints "N passed, N failed, N skipped" and exits non-zero on any failure.
SIMCRAWL=${SIMCRAWL:-./simcrawl}
TMP=$(mktemp -d)
trap 'rm -rf "$TMP"' EXIT
# the tests' python3 is Debian's (its standard library is all they use, and python3-scrapy
# is installed for it): a python3 earlier on PATH may be a version manager's shell shim,
# which under load took over 10 s to start and made the tests' servers miss their start
# deadlines
if [ -x /usr/bin/python3 ]; then
    mkdir -p "$TMP/bin"
    ln -s /usr/bin/python3 "$TMP/bin/python3"
    PATH=$TMP/bin:$PATH
    export PATH
fi
pass=0
fail=0
ok() { pass=$((pass + 1)); }
bad() { fail=$((fail + 1)); echo "FAIL: $*" >&2; }
# a check that cannot run here (a tool that is not installed), said and counted, never passed
skipped=0
skip() { skipped=$((skipped + 1)); echo "SKIP: $*" >&2; }
# expect_status WANT DESCRIPTION -- COMMAND...
expect_status() {
    want=$1; what=$2; shift 3
    "$@" >"$TMP/out" 2>"$TMP/err"; got=$?
    if [ "$got" = "$want" ]; then ok; else bad "$what: exit $got, want $want; stderr: $(head -c 300 "$TMP/err")"; fi
}
# expect_grep PATTERN FILE DESCRIPTION
expect_grep() {
    if grep -q -e "$1" "$2"; then ok; else bad "$3: no '$1' in $(head -c 300 "$2")"; fi
}
# http_serve DIR LOG and http_stop PID: the loopback http.server of the tests
. "$(dirname "$0")/lib/http_serve.sh"

expect_status 0 "--help" -- "$SIMCRAWL" --help
expect_grep "usage: simcrawl" "$TMP/out" "--help prints usage"
expect_status 1 "no command" -- "$SIMCRAWL"
# --version is libsimcrawl's version, the SIMCRAWL_VERSION_* macros of filter/simcrawl.h
ver=$(awk '/^#define SIMCRAWL_VERSION_(MAJOR|MINOR|PATCH) / { v = v (v == "" ? "" : ".") $3 } END { print v }' filter/simcrawl.h)
expect_status 0 "--version" -- "$SIMCRAWL" --version
expect_grep "^simcrawl $ver\$" "$TMP/out" "--version prints the header's version ($ver)"
expect_status 1 "unknown command" -- "$SIMCRAWL" no-such-command
expect_grep "is not a command" "$TMP/err" "unknown command names itself"

[ $# -gt 0 ] || set -- tests/cli/*.sh
for t in "$@"; do
    [ -f "$t" ] || continue
    . "$t"
done
echo "cli: $pass passed, $fail failed, $skipped skipped"
[ "$fail" = 0 ]
