#!/bin/sh
# Shared-frontier benchmark (docs/BENCHMARKS.md "## Crawl on Redis", issue 17): a site of
# HOSTS virtual hosts (tests/tools/crawl_redis.py --write: PAGES pages a host in a tree,
# links across hosts, planted near-duplicates across hosts), served by nginx on HOSTS
# ports of 127.0.0.1 from /dev/shm, no Crawl-delay; crawled with --delay 0 by 1, 2 and 3
# `crawl --redis` workers (a new redis-server each run) and, as the peer in the same run,
# by one in-process `crawl` (no Redis), in alternating rounds. Per run: wall time, pages/s
# (URLs logged by all workers over the wall time), CPU of the workers and of redis-server,
# and Redis operations per page: the commands the workers sent (their summary line) and
# the commands Redis ran (INFO commandstats, the calls inside the scripts included).
# Usage: sh tests/bench/bench_redis.sh [ROUNDS] [HOSTS] [PAGES]
set -eu
ROUNDS=${1:-3}
HOSTS=${2:-32}
PAGES=${3:-400}
BUILD=${BUILD:-build}
SIMCRAWL=${SIMCRAWL:-$BUILD/simcrawl}
. tests/nginx.sh
W=$(mktemp -d /dev/shm/bench_redis.XXXXXX)
RPID=
trap 'nginx_stop; [ -n "$RPID" ] && kill $RPID 2>/dev/null; rm -rf "$W"' EXIT
. tests/bench/redis_site.sh

# one RUN: WORKERS (0: the in-process crawl); prints "workers wall pages cpu redis_cpu sent calls"
one() {
    n=$1
    rm -rf "$W/run" && mkdir -p "$W/run"
    if [ "$n" = 0 ]; then
        python3 - "$W/run" "$SIMCRAWL" $SEEDS <<'PY'
import os, resource, subprocess, sys, time
d, sc, seeds = sys.argv[1], sys.argv[2], sys.argv[3:]
t = time.monotonic()
subprocess.run([sc, "crawl", "--quiet", "--delay", "0", "--concurrency", "16", "--warc",
                d + "/x.warc.gz", "--log", d + "/x.jsonl"] + seeds, stderr=subprocess.DEVNULL,
               check=True)
wall = time.monotonic() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
pages = sum(1 for _ in open(d + "/x.jsonl"))
print("0 %.3f %d %.2f 0 0 0" % (wall, pages, ru.ru_utime + ru.ru_stime))
PY
        return
    fi
    rp=$(free_port)
    redis-server --port "$rp" --bind 127.0.0.1 --save "" --dir "$W/run" --daemonize no \
        >/dev/null 2>&1 &
    RPID=$!
    i=0
    until redis-cli -p "$rp" ping >/dev/null 2>&1 || [ $i -gt 100 ]; do sleep 0.05; i=$((i + 1)); done
    python3 - "$W/run" "$SIMCRAWL" "$rp" "$n" $SEEDS <<'PY'
import os, resource, subprocess, sys, time
d, sc, rp, n, seeds = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5:]
t = time.monotonic()
ps = [subprocess.Popen([sc, "crawl", "--redis", "redis://127.0.0.1:" + rp,
                        "--worker-name", "w%d" % i, "--delay", "0", "--concurrency", "16",
                        "--warc", d + "/x.warc.gz", "--log", d + "/x.jsonl"] + seeds,
                       stderr=open(d + "/w%d.err" % i, "w")) for i in range(n)]
for p in ps:
    if p.wait() != 0:
        sys.exit("bench_redis: a worker failed: " + open(d + "/w0.err").read()[-300:])
wall = time.monotonic() - t
ru = resource.getrusage(resource.RUSAGE_CHILDREN)
pages = sum(sum(1 for _ in open(d + "/x-w%d.jsonl" % i)) for i in range(n))
sent = 0
for i in range(n):
    for line in open(d + "/w%d.err" % i):
        if "Redis commands" in line:
            sent += int(line.split("sent ")[1].split()[0])
info = subprocess.run(["redis-cli", "-p", rp, "info", "commandstats"], capture_output=True,
                      text=True).stdout
calls = sum(int(l.split("calls=")[1].split(",")[0]) for l in info.splitlines() if "calls=" in l)
cpu = subprocess.run(["redis-cli", "-p", rp, "info", "cpu"], capture_output=True, text=True).stdout
rcpu = sum(float(l.split(":")[1]) for l in cpu.splitlines()
           if l.startswith(("used_cpu_sys:", "used_cpu_user:")))
print("%d %.3f %d %.2f %.2f %d %d" % (n, wall, pages, ru.ru_utime + ru.ru_stime, rcpu, sent,
                                      calls))
PY
    redis-cli -p "$rp" shutdown nosave >/dev/null 2>&1 || true
    wait "$RPID" 2>/dev/null || true
    RPID=
}

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "site: $HOSTS hosts x $PAGES pages (+ planted copies), nginx on 127.0.0.1, --delay 0, --concurrency 16 per worker"
: >"$W/results"
for r in $(seq 1 "$ROUNDS"); do
    for n in 0 1 2 3; do
        one "$n" >>"$W/results"
    done
done
python3 - "$W/results" <<'PY'
import statistics, sys
rows = [l.split() for l in open(sys.argv[1])]
by = {}
for n, wall, pages, cpu, rcpu, sent, calls in rows:
    by.setdefault(int(n), []).append((float(wall), int(pages), float(cpu), float(rcpu),
                                      int(sent), int(calls)))
base = statistics.median(p / w for w, p, *_ in by[0])
print("| crawlers | pages | wall (median, range) | pages/s (median) | vs in-process | CPU workers | CPU redis | commands sent / page | Redis commands run / page |")
print("|---|---|---|---|---|---|---|---|---|")
for n in sorted(by):
    v = by[n]
    walls = [w for w, *_ in v]
    rate = statistics.median(p / w for w, p, *_ in v)
    pages = v[0][1]
    name = "in-process crawl (peer)" if n == 0 else "%d worker%s, --redis" % (n, "s" if n > 1 else "")
    print("| %s | %d | %.2f s (%.2f-%.2f) | %.0f | %.2fx | %.1f s | %.1f s | %s | %s |" % (
        name, pages, statistics.median(walls), min(walls), max(walls), rate, rate / base,
        statistics.median(c for _, _, c, *_ in v), statistics.median(x[3] for x in v),
        "%.1f" % statistics.median(x[4] / x[1] for x in v) if n else "-",
        "%.1f" % statistics.median(x[5] / x[1] for x in v) if n else "-"))
PY
