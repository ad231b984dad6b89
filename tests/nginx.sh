# nginx on loopback for the shell tests and benchmarks (sourced: . tests/nginx.sh).
# One place for what every nginx they start has in common: 127.0.0.1 only, a free port
# picked by the kernel, a temporary prefix holding nginx.conf, its logs and temp files,
# nginx in the foreground as a child of the script (killed by it), and a bounded wait
# until it accepts connections.
#
#   port=$(free_port)
#   nginx_start DIR PORT 'HTTP-BLOCK LINES (types, logs, server { listen 127.0.0.1:PORT; ... })'
#       writes DIR/nginx.conf (the lines go inside http {}), starts nginx, sets NGINX_PID;
#       returns 0 once 127.0.0.1:PORT accepts a connection (within 5 s), else 1 (what
#       nginx said is in DIR/nginx.out and DIR/logs/error.log)
#   nginx_stop
#       kills and reaps that nginx (NGINX_PID empty afterwards; safe to call twice)

# free_port: a TCP port on 127.0.0.1 that is free now
free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

NGINX_PID=
nginx_start() {
    ng_dir=$1
    ng_port=$2
    mkdir -p "$ng_dir/logs"
    ng_user=
    [ "$(id -u)" = 0 ] && ng_user="user root;"
    cat >"$ng_dir/nginx.conf" <<EOC
$ng_user
worker_processes 1;
daemon off;
pid $ng_dir/nginx.pid;
error_log $ng_dir/logs/error.log;
events { worker_connections 512; }
http {
    client_body_temp_path $ng_dir/tmp_body;
    proxy_temp_path $ng_dir/tmp_proxy;
    fastcgi_temp_path $ng_dir/tmp_fastcgi;
    uwsgi_temp_path $ng_dir/tmp_uwsgi;
    scgi_temp_path $ng_dir/tmp_scgi;
$3
}
EOC
    nginx -c "$ng_dir/nginx.conf" -p "$ng_dir" >"$ng_dir/nginx.out" 2>&1 &
    NGINX_PID=$!
    for _ in $(seq 50); do
        if python3 -c "import socket; socket.create_connection(('127.0.0.1', $ng_port), 1).close()" 2>/dev/null; then
            return 0
        fi
        kill -0 "$NGINX_PID" 2>/dev/null || break
        sleep 0.1
    done
    return 1
}

nginx_stop() {
    if [ -n "$NGINX_PID" ]; then
        kill "$NGINX_PID" 2>/dev/null
        wait "$NGINX_PID" 2>/dev/null
    fi
    NGINX_PID=
}
