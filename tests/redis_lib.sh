# A throwaway redis-server for the shell tests (sourced: . tests/redis_lib.sh, after
# tests/cli_test.sh's helpers), the shell twin of tests/testredis.c: 127.0.0.1 only, a
# free port (the kernel's choice for a socket bound to port 0), a directory under $TMP,
# no persistence; killed at exit whatever happened.
#
#   rd_start
#       starts it; sets RD_PID, RD_PORT and RD_URL (redis://127.0.0.1:PORT) once it
#       answers PING (10 s at most) and returns 0, else 1
#   rd_stop
#       stops it (SHUTDOWN NOSAVE, then SIGKILL)
#   rd_cli ARGS...
#       redis-cli against it (bounded in time)
RD_PID=
RD_DIR=$TMP/redis
mkdir -p "$RD_DIR"
rd_cleanup() {
    [ -n "$RD_PID" ] && kill -9 "$RD_PID" 2>/dev/null
    RD_PID=
}

rd_start() {
    for _ in 1 2 3 4 5; do
        RD_PORT=$(python3 -c 'import socket
s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1]); s.close()')
        redis-server --port "$RD_PORT" --bind 127.0.0.1 --save '' --appendonly no \
            --dir "$RD_DIR" --logfile "$RD_DIR/redis.log" --daemonize no >/dev/null 2>&1 &
        RD_PID=$!
        for _ in $(seq 100); do
            if timeout 2 redis-cli -h 127.0.0.1 -p "$RD_PORT" ping 2>/dev/null | grep -q PONG; then
                RD_URL=redis://127.0.0.1:$RD_PORT
                return 0
            fi
            kill -0 "$RD_PID" 2>/dev/null || break
            sleep 0.1
        done
        rd_cleanup
    done
    return 1
}

rd_stop() {
    [ -n "$RD_PID" ] || return 0
    timeout 5 redis-cli -h 127.0.0.1 -p "$RD_PORT" shutdown nosave >/dev/null 2>&1
    for _ in $(seq 50); do
        kill -0 "$RD_PID" 2>/dev/null || break
        sleep 0.1
    done
    kill -9 "$RD_PID" 2>/dev/null
    wait "$RD_PID" 2>/dev/null
    RD_PID=
}

rd_cli() {
    timeout 10 redis-cli -h 127.0.0.1 -p "$RD_PORT" "$@"
}
