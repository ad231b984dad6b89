# Sourced by the shell tests, the demo and the benchmarks that serve a directory on loopback.
#
# http_serve DIR LOG: python3's http.server for DIR on 127.0.0.1, on a port the kernel
# picks (port 0: nothing else can take it between choosing and binding), its output in
# LOG. Sets http_pid, and http_port once the server said it listens (empty when it did not
# within 5 s: the caller says so, quoting LOG). The caller stops it with http_stop.
http_serve() {
    python3 -u -m http.server 0 --bind 127.0.0.1 --directory "$1" >"$2" 2>&1 &
    http_pid=$!
    http_port=
    for _ in $(seq 50); do
        http_port=$(sed -n 's/.* port \([0-9][0-9]*\) .*/\1/p' "$2" 2>/dev/null)
        [ -n "$http_port" ] && break
        kill -0 "$http_pid" 2>/dev/null || break
        sleep 0.1
    done
}
# http_stop PID: the server http_serve started, stopped and waited for (PID may be empty)
http_stop() {
    [ -n "$1" ] || return 0
    kill "$1" 2>/dev/null
    wait "$1" 2>/dev/null
}
