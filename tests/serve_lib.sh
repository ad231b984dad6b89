# simcrawl serve for the shell tests (sourced: . tests/serve_lib.sh, after tests/cli_test.sh's
# helpers). What every test of the HTTP service has in common: the service on 127.0.0.1
# with a port the kernel picks (--listen 127.0.0.1:0, read back from its "listening on"
# line), never any other address; curl as the client, every call bounded in time; the
# service killed at exit whatever happened.
#
#   sv_start NAME [SERVE OPTIONS...]
#       starts simcrawl serve in the background (in directory $SV_CWD when set), its
#       stderr in $SV/NAME.err; sets SV_PID, SV_PORT and SV_URL (http://127.0.0.1:PORT)
#       once it listens (within 20 s: make asan is slow) and returns 0, else 1 (the
#       service's stderr says why)
#   sv_stop
#       SIGTERM, then waits (20 s at most, then SIGKILL); SV_STATUS is its exit status
#   sv_kill
#       SIGKILL, reaped
#   expect_http CODE DESCRIPTION CURL-ARGS...
#       curl -s with CURL-ARGS; the status must be CODE; the body is left in $SV/body, the
#       response headers in $SV/headers
#   expect_json DESCRIPTION PYTHON-EXPRESSION [FILE]
#       $SV/body (or FILE) parsed as one JSON value d; the expression must be true
#   expect_error DESCRIPTION
#       $SV/body is {"error": "a message"} and the Content-Type application/json
SV=$TMP/serve
mkdir -p "$SV"
case $SIMCRAWL in
/*) SV_SIMCRAWL=$SIMCRAWL ;;
*) SV_SIMCRAWL=$PWD/$SIMCRAWL ;;
esac
SV_PID=
SV_ALL_PIDS=
sv_cleanup() {
    for p in $SV_ALL_PIDS; do kill -9 "$p" 2>/dev/null; done
}
trap 'sv_cleanup; rm -rf "$TMP"' EXIT
trap 'exit 2' INT TERM

sv_start() {
    sv_name=$1
    shift
    : >"$SV/$sv_name.err"
    (cd "${SV_CWD:-.}" && exec "$SV_SIMCRAWL" serve --listen 127.0.0.1:0 "$@") 2>"$SV/$sv_name.err" &
    SV_PID=$!
    SV_ALL_PIDS="$SV_ALL_PIDS $SV_PID"
    SV_PORT=
    for _ in $(seq 200); do
        SV_PORT=$(sed -n 's/^simcrawl serve: listening on 127\.0\.0\.1:\([0-9][0-9]*\),.*/\1/p' "$SV/$sv_name.err")
        if [ -n "$SV_PORT" ]; then
            SV_URL=http://127.0.0.1:$SV_PORT
            return 0
        fi
        kill -0 "$SV_PID" 2>/dev/null || break
        sleep 0.1
    done
    return 1
}

sv_stop() {
    kill -TERM "$SV_PID" 2>/dev/null
    for _ in $(seq 200); do
        kill -0 "$SV_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$SV_PID" 2>/dev/null
    wait "$SV_PID"
    SV_STATUS=$?
}

sv_kill() {
    kill -9 "$SV_PID" 2>/dev/null
    wait "$SV_PID" 2>/dev/null
}

expect_http() {
    eh_want=$1
    eh_what=$2
    shift 2
    eh_got=$(curl -s -S --max-time 30 -o "$SV/body" -D "$SV/headers" -w '%{http_code}' "$@" 2>"$SV/curl.err")
    if [ "$eh_got" = "$eh_want" ]; then
        ok
    else
        bad "$eh_what: HTTP $eh_got, want $eh_want: $(head -c 300 "$SV/body") $(head -c 200 "$SV/curl.err")"
    fi
}

expect_json() {
    ej_file=${3:-$SV/body}
    if python3 -c 'import json, sys
d = json.load(open(sys.argv[1], encoding="utf-8"))
sys.exit(0 if eval(sys.argv[2]) else 1)' "$ej_file" "$2" 2>"$SV/json.err"; then
        ok
    else
        bad "$1: not ($2) in $(head -c 400 "$ej_file") $(tail -n 1 "$SV/json.err")"
    fi
}

expect_error() {
    expect_json "$1: {\"error\": ...}" 'list(d) == ["error"] and isinstance(d["error"], str) and d["error"]'
    expect_grep '^Content-Type: application/json' "$SV/headers" "$1: Content-Type application/json"
}
