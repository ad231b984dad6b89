#!/bin/sh
# The HTTP service benchmark (docs/BENCHMARKS.md "## HTTP service"; section "serve" of
# tests/bench/run.sh): `simcrawl serve` against its peers measured in the same run, on
# 127.0.0.1 only (random free ports), ROUNDS rounds, the peers' order flipped every round.
#
# Each round:
#   fp     wrk (-t THREADS -c CONNS -d SECONDS, keep-alive) POSTs one NDJSON line a request
#          (tests/bench/serve_fp.lua): every id new, a random fingerprint (adds), against
#          `simcrawl serve --index FILE` (fsync interval, the default); then, after a bulk
#          load of KNOWN documents, 90 % re-checks of those ids and 10 % new ones (read-
#          mostly); then the adds again against `--fsync always`, `--fsync no` and no
#          index file (in memory): what the journal and its syncer cost.
#   redis  redis-benchmark -t set, then -t get (the same connections and client threads,
#          -P 1: no pipelining, -d 16, -r 1000000, REDIS_N requests each) on a
#          redis-server started here (--save '' --appendonly no).
#   pages  wrk POSTs python3.11-doc pages (tests/bench/serve_pages.lua) to the service
#          (--index FILE), against `bench_serve pages`: libsimcrawl in-process on 2 threads
#          checking exactly the same requests for SECONDS.
# Rates, wrk's and redis-benchmark's p50/p99 latency, and each server's CPU time per
# request (/proc/PID/stat) are collected per round; the summary prints medians, ranges
# and the per-round ratios. Then memory per document (once): the service's VmRSS after a
# bulk load of N documents (NDJSON, BATCH lines a request) minus its VmRSS empty, the
# library's (bench_serve memory N) and Redis's used_memory for MSET id -> 8-byte value and
# SADD of 8-byte members, for each N of MEMORY.
#
# usage: BUILD=build SIMCRAWL=build/simcrawl PYDOC=DIR sh tests/bench/bench_serve.sh [ROUNDS]
#   env: SERVE_BENCH_SECONDS (5), SERVE_BENCH_REDIS_N (300000), SERVE_BENCH_MEMORY
#   ("1000000 10000000"; "" skips), SERVE_BENCH_PARTS ("fp redis pages memory")
set -e
ROUNDS=${1:-5}
BUILD=${BUILD:-build}
SIMCRAWL=${SIMCRAWL:-$BUILD/simcrawl}
BS=$BUILD/bench/bench_serve
SECONDS_=${SERVE_BENCH_SECONDS:-5}
REDIS_N=${SERVE_BENCH_REDIS_N:-300000}
MEMORY=${SERVE_BENCH_MEMORY-1000000 10000000}
PARTS=${SERVE_BENCH_PARTS:-fp redis pages memory}
CONNS=16
THREADS=2
KNOWN=100000
BATCH=100000
for t in wrk redis-server redis-benchmark redis-cli curl python3; do
    command -v "$t" >/dev/null ||
        { echo "bench_serve: needs $t (apt-get install wrk redis-server redis-tools curl)" >&2; exit 1; }
done
[ -x /usr/bin/time ] || { echo "bench_serve: needs /usr/bin/time (apt-get install time)" >&2; exit 1; }
[ -d "$PYDOC" ] || { echo "bench_serve: PYDOC=$PYDOC is not the python3.11-doc html folder" >&2; exit 1; }
part() { case " $PARTS " in *" $1 "*) return 0 ;; esac; return 1; }

. tests/nginx.sh # free_port
# The work folder is on the build's disk, not tmpfs: --fsync always must reach a disk.
mkdir -p "$BUILD/bench"
W=$(mktemp -d "$BUILD/bench/serve.XXXXXX")
W=$(cd "$W" && pwd)
R=$W/results # "KEY ROUND VALUE" lines
: >"$R"
SERVE_PID=
REDIS_PID=
serve_stop() {
    [ -n "$SERVE_PID" ] || return 0
    kill -TERM "$SERVE_PID" 2>/dev/null || true
    wait "$SERVE_PID" 2>/dev/null || true
    SERVE_PID=
}
redis_stop() {
    [ -n "$REDIS_PID" ] || return 0
    kill -TERM "$REDIS_PID" 2>/dev/null || true
    wait "$REDIS_PID" 2>/dev/null || true
    REDIS_PID=
}
trap 'serve_stop; redis_stop; rm -rf "$W"' EXIT
trap 'exit 2' INT TERM

find "$PYDOC" -name '*.html' | sort >"$W/pages.lst"
"$BS" ndjson 0 "$KNOWN" >"$W/known.ndjson"

# serve_start NAME ARGS...: simcrawl serve ARGS on a free port of 127.0.0.1 (its stderr in
# W/NAME.log; environment SERVE_ENV added); sets SERVE_PID and URL once it says
# "listening on 127.0.0.1:PORT".
SERVE_ENV=
serve_start() {
    log=$W/$1.log
    shift
    : >"$log" # now: the background shell truncates it only when it gets to run
    env $SERVE_ENV "$SIMCRAWL" serve --listen 127.0.0.1:0 "$@" 2>"$log" &
    SERVE_PID=$!
    i=0
    while :; do
        port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9][0-9]*\).*/\1/p' "$log" | head -n 1)
        [ -n "$port" ] && break
        i=$((i + 1))
        if [ $i -gt 200 ] || ! kill -0 "$SERVE_PID" 2>/dev/null; then
            echo "bench_serve: simcrawl serve $* did not start: $(head -c 500 "$log")" >&2
            exit 2
        fi
        sleep 0.05
    done
    URL=http://127.0.0.1:$port
}

# redis_start: redis-server on a free port of 127.0.0.1, no persistence; sets REDIS_PID, RPORT.
redis_start() {
    RPORT=$(free_port)
    redis-server --bind 127.0.0.1 --port "$RPORT" --save '' --appendonly no --dir "$W" \
        --daemonize no --loglevel warning >"$W/redis.log" 2>&1 &
    REDIS_PID=$!
    i=0
    until redis-cli -p "$RPORT" ping >/dev/null 2>&1; do
        i=$((i + 1))
        if [ $i -gt 200 ] || ! kill -0 "$REDIS_PID" 2>/dev/null; then
            echo "bench_serve: redis-server did not start: $(head -c 500 "$W/redis.log")" >&2
            exit 2
        fi
        sleep 0.05
    done
}

# cpu_ticks PID: user + system CPU time of a process so far, in clock ticks.
cpu_ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
# sys_busy: CPU time of the whole machine so far (user, nice, system, irq, softirq, steal),
# in clock ticks: minus the benchmark's own processes, what else ran meanwhile.
sys_busy() { awk '/^cpu / { print $2 + $3 + $4 + $7 + $8 + $9 }' /proc/stat; }
TICK=$(getconf CLK_TCK)
# documents: simcrawl_documents of the service's /metrics.
documents() { curl -sS "$URL/metrics" | awk '$1 == "simcrawl_documents" { print $2 }'; }
# post_ndjson FILE|-: POSTs NDJSON to /v1/check; fails unless the answer is 200 with as
# many lines as the body.
post_ndjson() {
    code=$(curl -sS -o "$W/post.out" -w '%{http_code}' -H 'Content-Type: application/x-ndjson' \
        --data-binary "@$1" "$URL/v1/check")
    [ "$code" = 200 ] || { echo "bench_serve: POST /v1/check: $code $(head -c 300 "$W/post.out")" >&2; exit 2; }
}
# rec KEY ROUND VALUE
rec() { echo "$1 $2 $3" >>"$R"; }

# wrk_run KEY ROUND SCRIPT ARGS...: wrk against URL; records KEY.rps, .p50, .p99 (us),
# .srv (server CPU us per request), .cli (wrk's CPU us per request), .err (errors).
wrk_run() {
    key=$1 round=$2 script=$3
    shift 3
    c0=$(cpu_ticks "$SERVE_PID")
    b0=$(sys_busy)
    /usr/bin/time -f '%U %S' -o "$W/time.out" wrk -t"$THREADS" -c"$CONNS" -d"${SECONDS_}s" \
        --timeout 10s -s "$script" "$URL" -- "$@" >"$W/wrk.out" 2>&1 ||
        { echo "bench_serve: wrk failed: $(tail -n 5 "$W/wrk.out")" >&2; exit 2; }
    c1=$(cpu_ticks "$SERVE_PID")
    b1=$(sys_busy)
    line=$(grep '^wrk:' "$W/wrk.out") ||
        { echo "bench_serve: wrk printed no result: $(tail -n 5 "$W/wrk.out")" >&2; exit 2; }
    echo "$line" | awk -v k="$key" -v r="$round" -v c0="$c0" -v c1="$c1" -v tick="$TICK" \
        -v b0="$b0" -v b1="$b1" -v cli="$(tail -n 1 "$W/time.out")" '{
        n = $2; rps = $7; p50 = $10; p99 = $13
        err = $17 + $19 + $21 + $23 + $25
        split(cli, u, " ")
        printf "%s.rps %s %s\n%s.p50 %s %s\n%s.p99 %s %s\n", k, r, rps, k, r, p50, k, r, p99
        printf "%s.srv %s %.1f\n%s.cli %s %.1f\n%s.err %s %d\n", k, r, (c1 - c0) / tick * 1e6 / n,
            k, r, (u[1] + u[2]) * 1e6 / n, k, r, err
        oth = ((b1 - b0) - (c1 - c0)) / tick - u[1] - u[2]
        printf "%s.oth %s %.2f\n", k, r, (oth > 0 ? oth : 0) / $5
    }' >>"$R"
    printf '  %-34s %s\n' "$key" "${line#wrk: }"
}

# redis_run KEY ROUND TEST: redis-benchmark -t TEST; records as wrk_run (.cli: its CPU).
redis_run() {
    key=$1 round=$2 t=$3
    c0=$(cpu_ticks "$REDIS_PID")
    b0=$(sys_busy)
    t0=$(date +%s.%N)
    /usr/bin/time -f '%U %S' -o "$W/time.out" redis-benchmark -h 127.0.0.1 -p "$RPORT" \
        -c "$CONNS" --threads "$THREADS" -P 1 -n "$REDIS_N" -r 1000000 -d 16 -t "$t" --csv \
        >"$W/rb.out" 2>&1 ||
        { echo "bench_serve: redis-benchmark failed: $(tail -n 3 "$W/rb.out")" >&2; exit 2; }
    c1=$(cpu_ticks "$REDIS_PID")
    b1=$(sys_busy)
    t1=$(date +%s.%N)
    line=$(grep -i "^\"$t\"" "$W/rb.out" | tr -d '"') ||
        { echo "bench_serve: redis-benchmark printed no result: $(tail -n 3 "$W/rb.out")" >&2; exit 2; }
    echo "$line" | awk -F, -v k="$key" -v r="$round" -v c0="$c0" -v c1="$c1" -v tick="$TICK" \
        -v n="$REDIS_N" -v cli="$(tail -n 1 "$W/time.out")" -v b0="$b0" -v b1="$b1" -v t0="$t0" \
        -v t1="$t1" '{
        split(cli, u, " ")
        printf "%s.rps %s %s\n%s.p50 %s %.0f\n%s.p99 %s %.0f\n", k, r, $2, k, r, $5 * 1000, k, r, $7 * 1000
        printf "%s.srv %s %.1f\n%s.cli %s %.1f\n", k, r, (c1 - c0) / tick * 1e6 / n, k, r, (u[1] + u[2]) * 1e6 / n
        oth = ((b1 - b0) - (c1 - c0)) / tick - u[1] - u[2]
        printf "%s.oth %s %.2f\n", k, r, (oth > 0 ? oth : 0) / (t1 - t0)
    }' >>"$R"
    printf '  %-34s %s\n' "$key" "$line"
}

# ---- one round of each part ----
fp_round() { # fp_round ROUND
    rm -f "$W"/fp.idx*
    serve_start serve-fp --index "$W/fp.idx"
    if [ "$1" = 1 ]; then
        ans=$(printf '{"id":"smoke","fingerprint":"0123456789abcdef"}\n' |
            curl -sS -H 'Content-Type: application/x-ndjson' --data-binary @- "$URL/v1/check")
        case $ans in *'"decision"'*) echo "  (smoke: $ans)" ;; *)
            echo "bench_serve: unexpected answer to one NDJSON line: $ans" >&2; exit 2 ;; esac
    fi
    d0=$(documents)
    wrk_run serve.add "$1" tests/bench/serve_fp.lua add "r$1"
    d1=$(documents)
    rec serve.add.docs "$1" $((d1 - d0))
    post_ndjson "$W/known.ndjson"
    wrk_run serve.mix "$1" tests/bench/serve_fp.lua mix "m$1" "$W/known.ndjson" 90
    serve_stop
    rm -f "$W"/fp.idx*
    serve_start serve-always --index "$W/fp.idx" --fsync always
    wrk_run serve.always "$1" tests/bench/serve_fp.lua add "a$1"
    serve_stop
    rm -f "$W"/fp.idx*
    # what the journal costs: --fsync no (the journal's write(), no syncer thread), and
    # no index file at all
    serve_start serve-nosync --index "$W/fp.idx" --fsync no
    wrk_run serve.nosync "$1" tests/bench/serve_fp.lua add "n$1"
    serve_stop
    rm -f "$W"/fp.idx*
    serve_start serve-memory
    wrk_run serve.memory "$1" tests/bench/serve_fp.lua add "i$1"
    serve_stop
}
redis_round() {
    redis_start
    redis_run redis.set "$1" set
    redis_run redis.get "$1" get
    redis_stop
}
pages_service() {
    rm -f "$W"/pages.idx*
    serve_start serve-pages --index "$W/pages.idx"
    if [ "$1" = 1 ]; then
        first=$(head -n 1 "$W/pages.lst")
        ans=$(curl -sS -H 'Content-Type: text/html' --data-binary "@$first" "$URL/v1/check?id=http%3A%2F%2Fsmoke.example%2F")
        case $ans in *'"decision"'*) echo "  (smoke: $ans)" ;; *)
            echo "bench_serve: unexpected answer to a page: $ans" >&2; exit 2 ;; esac
    fi
    wrk_run serve.pages "$1" tests/bench/serve_pages.lua "$W/pages.lst" "$PYDOC"
    serve_stop
    rm -f "$W"/pages.idx*
}
pages_library() {
    rm -f "$W"/lib.idx*
    b0=$(sys_busy)
    line=$(/usr/bin/time -f '%U %S' -o "$W/time.out" "$BS" pages --threads 2 --seconds "$SECONDS_" \
        --index "$W/lib.idx" --root "$PYDOC" "$W/pages.lst")
    b1=$(sys_busy)
    rm -f "$W"/lib.idx*
    printf '  %-34s %s\n' lib.pages "${line#library: }"
    echo "$line" | awk -v r="$1" -v b0="$b0" -v b1="$b1" -v tick="$TICK" -v cpu="$(tail -n 1 "$W/time.out")" '{
        print "lib.pages.rps", r, $7; print "lib.pages.srv", r, $11
        split(cpu, u, " ")
        oth = (b1 - b0) / tick - u[1] - u[2] # the page reading before the clock starts counts as its own
        printf "lib.pages.oth %s %.2f\n", r, (oth > 0 ? oth : 0) / $5
    }' >>"$R"
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) CPUs, load $(cut -d' ' -f1-3 /proc/loadavg), $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null)"
echo "$(wrk -v 2>&1 | head -n 1 | cut -d' ' -f1-2), $(redis-server --version | cut -d' ' -f1-3), $("$SIMCRAWL" --version 2>/dev/null | head -n 1)"
echo "wrk -t$THREADS -c$CONNS -d${SECONDS_}s; redis-benchmark -c $CONNS --threads $THREADS -P 1 -n $REDIS_N -d 16 -r 1000000"
r=1
while [ "$r" -le "$ROUNDS" ]; do
    echo "round $r:"
    if [ $((r % 2)) = 1 ]; then
        part fp && fp_round "$r"
        part redis && redis_round "$r"
        part pages && { pages_service "$r"; pages_library "$r"; }
    else
        part redis && redis_round "$r"
        part fp && fp_round "$r"
        part pages && { pages_library "$r"; pages_service "$r"; }
    fi
    # the per-round ratios
    awk -v r="$r" '$2 == r { v[$1] = $3 }
        END {
            if (v["serve.add.rps"] && v["redis.set.rps"]) print "ratio.add_set", r, v["serve.add.rps"] / v["redis.set.rps"]
            if (v["serve.mix.rps"] && v["redis.get.rps"]) print "ratio.mix_get", r, v["serve.mix.rps"] / v["redis.get.rps"]
            if (v["serve.always.rps"] && v["redis.set.rps"]) print "ratio.always_set", r, v["serve.always.rps"] / v["redis.set.rps"]
            if (v["serve.nosync.rps"] && v["redis.set.rps"]) print "ratio.nosync_set", r, v["serve.nosync.rps"] / v["redis.set.rps"]
            if (v["serve.memory.rps"] && v["redis.set.rps"]) print "ratio.memory_set", r, v["serve.memory.rps"] / v["redis.set.rps"]
            if (v["serve.pages.rps"] && v["lib.pages.rps"]) print "ratio.pages", r, v["serve.pages.rps"] / v["lib.pages.rps"]
            if (v["serve.pages.srv"] && v["lib.pages.srv"]) {
                print "ratio.pages_cpu", r, v["lib.pages.srv"] / v["serve.pages.srv"]
                print "ratio.pages_cpu_cli", r, v["lib.pages.srv"] / (v["serve.pages.srv"] + v["serve.pages.cli"])
            }
        }' "$R" >"$W/ratios"
    cat "$W/ratios" >>"$R"
    r=$((r + 1))
done

# ---- summary: median (min-max) over the rounds ----
cp "$R" "$BUILD/bench/serve-results-$(date -u +%Y%m%dT%H%M%S).txt"
[ -s "$R" ] && awk -v rounds="$ROUNDS" '
    { n[$1]++; v[$1, n[$1]] = $3 + 0 }
    function stat(k, fmt,    i, j, t, m, c) {
        c = n[k]
        if (!c) return "-"
        for (i = 1; i <= c; i++) a[i] = v[k, i]
        for (i = 2; i <= c; i++) { t = a[i]; for (j = i - 1; j >= 1 && a[j] > t; j--) a[j + 1] = a[j]; a[j + 1] = t }
        m = c % 2 ? a[(c + 1) / 2] : (a[c / 2] + a[c / 2 + 1]) / 2
        return sprintf(fmt " (" fmt "-" fmt ")", m, a[1], a[c])
    }
    function row(label, k) {
        if (!n[k ".rps"]) return
        printf "%-40s %-26s %-22s %-26s %-20s %-20s %s\n", label, stat(k ".rps", "%.0f"), stat(k ".p50", "%.0f"),
            stat(k ".p99", "%.0f"), stat(k ".srv", "%.1f"), n[k ".cli"] ? stat(k ".cli", "%.1f") : "-",
            stat(k ".oth", "%.2f")
    }
    END {
        printf "summary, %d rounds, median (min-max):\n", rounds
        printf "%-40s %-26s %-22s %-26s %-20s %-20s %s\n", "run", "requests/s", "p50 us", "p99 us", "server CPU us/req",
            "client CPU us/req", "other CPU (cores)"
        row("serve: adds, fsync interval", "serve.add")
        row("redis SET", "redis.set")
        row("serve: 90% re-checks, fsync interval", "serve.mix")
        row("redis GET", "redis.get")
        row("serve: adds, fsync always", "serve.always")
        row("serve: adds, fsync no", "serve.nosync")
        row("serve: adds, in memory (no --index)", "serve.memory")
        row("serve: python3.11-doc pages", "serve.pages")
        if (n["lib.pages.rps"]) printf "%-40s %-26s %-22s %-26s %-20s %-20s %s\n", "libsimcrawl in-process, 2 threads, pages",
            stat("lib.pages.rps", "%.0f"), "-", "-", stat("lib.pages.srv", "%.1f"), "-", stat("lib.pages.oth", "%.2f")
        if (n["ratio.add_set"]) printf "ratio serve adds / redis SET:            %s   (goal >= 0.50)\n", stat("ratio.add_set", "%.3f")
        if (n["ratio.mix_get"]) printf "ratio serve re-checks / redis GET:       %s   (goal >= 0.50)\n", stat("ratio.mix_get", "%.3f")
        if (n["ratio.always_set"]) printf "ratio serve adds, fsync always / SET:    %s\n", stat("ratio.always_set", "%.3f")
        if (n["ratio.nosync_set"]) printf "ratio serve adds, fsync no / SET:        %s\n", stat("ratio.nosync_set", "%.3f")
        if (n["ratio.memory_set"]) printf "ratio serve adds, in memory / SET:       %s\n", stat("ratio.memory_set", "%.3f")
        if (n["ratio.pages"]) printf "ratio serve pages / library pages:       %s   (goal >= 0.80)\n", stat("ratio.pages", "%.3f")
        if (n["ratio.pages_cpu"]) printf "pages per CPU second, serve / library:   %s   (the service process only: what outside load does not move)\n", stat("ratio.pages_cpu", "%.3f")
        if (n["ratio.pages_cpu_cli"]) printf "  the same with wrk%sCPU counted:   %s\n", "\047s ", stat("ratio.pages_cpu_cli", "%.3f")
        if (n["serve.add.docs"]) printf "documents added per adds run:            %s\n", stat("serve.add.docs", "%.0f")
    }' "$R"

# ---- memory per document ----
vm() { awk '/^VmRSS:/ { r = $2 } /^VmHWM:/ { h = $2 } END { print r, h }' "/proc/$1/status"; }
# service_mem N LABEL: the service in memory, its VmRSS empty and after N documents added
# by POST /v1/check, BATCH NDJSON lines a request.
service_mem() {
    serve_start serve-mem
    set -- "$1" "$2" $(vm "$SERVE_PID")
    t0=$(date +%s.%N)
    i=0
    while [ "$i" -lt "$1" ]; do
        b=$BATCH
        [ $(($1 - i)) -lt "$b" ] && b=$(($1 - i))
        "$BS" ndjson "$i" "$b" >"$W/batch.ndjson"
        post_ndjson "$W/batch.ndjson"
        i=$((i + b))
    done
    t1=$(date +%s.%N)
    d=$(documents)
    echo "$1 $d $3 $(vm "$SERVE_PID") $t0 $t1" | awk -v label="$2" -v batch="$BATCH" '{
        printf "  %s: %d documents (%d in /metrics): VmRSS empty %d kB, full %d kB, VmHWM %d kB; %.1f bytes/document (RSS), %.1f (HWM); bulk %.0f documents/s (%d a request)\n",
            label, $1, $2, $3, $4, $5, ($4 - $3) * 1024 / $1, ($5 - $3) * 1024 / $1, $1 / ($7 - $6), batch }'
    serve_stop
}
# redis_mem: used_memory and used_memory_rss of the redis-server on RPORT, in bytes.
redis_mem() {
    redis-cli -p "$RPORT" info memory | tr -d '\r' |
        awk -F: '$1 == "used_memory" { u = $2 } $1 == "used_memory_rss" { r = $2 } END { print u, r }'
}
# redis_peer N KIND LABEL COUNT-COMMAND: a new redis-server loaded with `bench_serve redis
# KIND 0 N` through redis-cli --pipe; its used_memory and RSS before and after.
redis_peer() {
    redis_start
    m0=$(redis_mem)
    "$BS" redis "$2" 0 "$1" | redis-cli -p "$RPORT" --pipe >"$W/pipe.out" 2>&1 ||
        { echo "bench_serve: redis-cli --pipe: $(tail -n 3 "$W/pipe.out")" >&2; exit 2; }
    m1=$(redis_mem)
    k=$(redis-cli -p "$RPORT" $4)
    redis_stop
    echo "$1 $k $m0 $m1" | awk -v label="$3" '{
        printf "  redis, %s: %d of %d: used_memory +%.1f MB, %.1f bytes each; RSS +%.1f MB, %.1f bytes each\n",
            label, $2, $1, ($5 - $3) / 1e6, ($5 - $3) / $1, ($6 - $4) / 1e6, ($6 - $4) / $1 }'
}
if part memory && [ -n "$MEMORY" ]; then
    echo "memory per document:"
    for N in $MEMORY; do
        service_mem "$N" service
        # the same with one malloc arena and a fixed mmap threshold: how much of the above
        # is glibc keeping freed request buffers, not documents
        SERVE_ENV="MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=131072"
        service_mem "$N" "service, MALLOC_ARENA_MAX=1 MALLOC_MMAP_THRESHOLD_=131072"
        SERVE_ENV=
        echo "  $("$BS" memory "$N")"
        redis_peer "$N" mset "MSET id -> 8-byte value" dbsize
        redis_peer "$N" sadd "SADD of 8-byte members to one set" "scard fps"
    done
fi
