# python3.11-doc served by nginx on loopback, for the crawl benchmarks (sourced from the
# repository root by tests/bench/bench_crawl.sh and bench_wget2.sh, with CACHE and
# BENCH_NAME set). Fetches the Debian package once into $CACHE, checks for nginx and
# wget2, makes the work directory W (on tmpfs (/dev/shm) when there is one, so that the
# kernel's write-back of one run's output, 50 MB for wget2, does not land in the next
# run's time), starts nginx on a free port of 127.0.0.1 (tests/nginx.sh), removes both at
# exit, and sets PYDOC (the site's root), W, PORT and SEED (its index page's URL).
PYDOC=$CACHE/python3.11-doc/usr/share/doc/python3.11/html
if [ ! -d "$PYDOC" ]; then
    mkdir -p "$CACHE"
    (cd "$CACHE" && { apt-get download python3.11-doc >/dev/null 2>&1 ||
        { apt-get update -qq && apt-get download python3.11-doc >/dev/null; }; } &&
        dpkg -x "$CACHE"/python3.11-doc_*.deb "$CACHE/python3.11-doc") >&2
fi
command -v nginx >/dev/null || { echo "$BENCH_NAME: needs nginx (apt-get install nginx-light)" >&2; exit 2; }
command -v wget2 >/dev/null || { echo "$BENCH_NAME: needs wget2 (apt-get install wget2)" >&2; exit 2; }
SHM=/dev/shm
[ -d "$SHM" ] && [ -w "$SHM" ] || SHM=${TMPDIR:-/tmp}
W=$(mktemp -d "$SHM/$BENCH_NAME.XXXXXX")
. tests/nginx.sh
trap '[ -n "$NGINX_PID" ] && kill "$NGINX_PID" 2>/dev/null; rm -rf "$W"' EXIT INT TERM
PORT=$(free_port)
nginx_start "$W" "$PORT" "
    access_log off;
    types { text/html html htm; text/css css; application/javascript js; image/png png;
            image/svg+xml svg; text/plain txt; }
    default_type application/octet-stream;
    keepalive_requests 100000;
    server { listen 127.0.0.1:$PORT; root $PYDOC; }" ||
    { echo "$BENCH_NAME: nginx did not start: $(head -c 300 "$W/logs/error.log")" >&2; exit 2; }
SEED=http://127.0.0.1:$PORT/index.html
