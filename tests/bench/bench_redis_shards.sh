#!/bin/sh
# The shared frontier through nutcracker (docs/BENCHMARKS.md "## Frontier shards through
# nutcracker", issue 17): the site of bench_redis.sh (HOSTS virtual hosts of PAGES pages,
# tests/tools/crawl_redis.py --write, served by nginx from /dev/shm, no Crawl-delay) crawled
# by WORKERS `crawl --redis` workers, --delay 0, in alternating rounds:
#   direct: one redis-server holds the frontier and the index (--redis names it);
#   split:  the frontier on one redis-server, the index on another (--redis-index): the
#           peer of proxy with the same servers' work, without the proxy's hop;
#   proxy:  the frontier on 3 redis-servers behind nutcracker (tests/tools/redis_shards.py's
#           configuration; --redis names the proxy), the index on a redis-server of its own
#           reached directly (--redis-index); --frontier-shards 1: the whole frontier on
#           the one node {f0} goes to;
#   proxy16: the same with --frontier-shards 16: the frontier spread over the 3 nodes;
#   split16: split with --frontier-shards 16 (one node holds the 16 tags): what the
#           shards cost without the proxy (the commit's three round trips, the acquire's
#           pipelined calls).
# Per run: wall time, pages/s, CPU of the workers, of the redis-servers and of nutcracker,
# commands the workers sent (their summary line: the frontier's) and the commands the
# Redis servers ran (INFO commandstats of every server, the calls inside scripts included).
# Usage: sh tests/bench/bench_redis_shards.sh [ROUNDS] [HOSTS] [PAGES] [WORKERS]
set -eu
ROUNDS=${1:-3}
HOSTS=${2:-32}
PAGES=${3:-400}
WORKERS=${4:-3}
BUILD=${BUILD:-build}
SIMCRAWL=${SIMCRAWL:-$BUILD/simcrawl}
. tests/nginx.sh
W=$(mktemp -d /dev/shm/bench_shards.XXXXXX)
trap 'nginx_stop; rm -rf "$W"' EXIT
. tests/bench/redis_site.sh

echo "machine: $(grep -m1 'model name' /proc/cpuinfo | sed 's/.*: //'), $(nproc) cores, $(date -u '+%Y-%m-%d %H:%M UTC'), $(git rev-parse --short HEAD 2>/dev/null), $(redis-server --version | sed 's/ sha=.*//'), $(nutcracker --version 2>&1 | head -1), load average $(cut -d' ' -f1-3 /proc/loadavg)"
echo "site: $HOSTS hosts x $PAGES pages (+ planted copies), nginx on 127.0.0.1, $WORKERS workers, --delay 0, --concurrency 16 per worker"
python3 - "$W" "$SIMCRAWL" "$ROUNDS" "$WORKERS" $SEEDS <<'PY'
import functools, os, resource, shutil, statistics, subprocess, sys, time
print = functools.partial(print, flush=True)
sys.path.insert(0, "tests/tools")
import redis_shards
w, sc, rounds, n, seeds = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5:]


def proc_cpu(pid):
    f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
    return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")


def run(mode):
    mode, shards = (mode[:-2], "16") if mode.endswith("16") else (mode, "1")
    d = os.path.join(w, "run")
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    idx = redis_shards.Shards(1, w)  # the index's (and, direct, the frontier's) server
    sh = redis_shards.Shards(3, w) if mode == "proxy" else None
    one = redis_shards.Shards(1, w) if mode == "split" else None
    try:
        front = sh.proxy if sh else one.ports[0] if one else idx.ports[0]
        extra = ["--redis-index", "redis://127.0.0.1:%d" % idx.ports[0]] if sh or one else []
        ru0 = resource.getrusage(resource.RUSAGE_CHILDREN)
        t = time.monotonic()
        ps = [subprocess.Popen([sc, "crawl", "--redis", "redis://127.0.0.1:%d" % front] + extra +
                               ["--worker-name", "w%d" % i, "--delay", "0", "--concurrency", "16",
                                "--frontier-shards", shards,
                                "--warc", d + "/x.warc.gz", "--log", d + "/x.jsonl"] + seeds,
                               stderr=open(d + "/w%d.err" % i, "w")) for i in range(n)]
        for p in ps:
            if p.wait() != 0:
                sys.exit("bench_redis_shards: a worker failed: " + open(d + "/w0.err").read()[-300:])
        wall = time.monotonic() - t
        ru = resource.getrusage(resource.RUSAGE_CHILDREN)
        wcpu = ru.ru_utime + ru.ru_stime - ru0.ru_utime - ru0.ru_stime
        pages = sum(sum(1 for _ in open(d + "/x-w%d.jsonl" % i)) for i in range(n))
        sent = 0
        for i in range(n):
            for line in open(d + "/w%d.err" % i):
                if "Redis commands" in line:
                    sent += int(line.split("sent ")[1].split()[0])
        nodes = idx.ports + (sh.ports if sh else []) + (one.ports if one else [])
        ran = sum(redis_shards.commands_run(p) for p in nodes)
        rcpu = sum(redis_shards.cpu_seconds(p) for p in nodes)
        pcpu = proc_cpu(sh.procs[-1].pid) if sh else 0.0
        spread = sh.count_keys("simcrawl{f*") if sh else []
        return wall, pages, wcpu, rcpu, pcpu, sent, ran, spread
    finally:
        for x in (sh, one, idx):
            if x:
                x.stop()


MODES = ("direct", "split", "split16", "proxy", "proxy16")
res = {m: [] for m in MODES}
for r in range(rounds):
    for mode in MODES:  # alternating: the machine's load hits all
        res[mode].append(run(mode))
        print("round %d %s: %.2f s, %d pages, frontier keys per node %s" % (
            r + 1, mode, res[mode][-1][0], res[mode][-1][1], res[mode][-1][7]))
base = statistics.median(p / wl for wl, p, *_ in res["split"])
print("| frontier (medians of %d) | pages | wall (median, range) | pages/s | vs split | CPU, workers | "
      "CPU, redis-servers | CPU, nutcracker | commands sent / page | commands Redis ran / page |" % rounds)
print("|---|---|---|---|---|---|---|---|---|---|")
for mode, name in (("direct", "one redis-server: frontier and index"),
                   ("split", "frontier on one redis-server, index on another (the peer)"),
                   ("split16", "the same, --frontier-shards 16 (16 tags on the one server)"),
                   ("proxy", "frontier through nutcracker on 3 redis-servers (1 tag: one node), "
                             "index direct"),
                   ("proxy16", "the same, --frontier-shards 16 (spread over the 3 nodes)")):
    v = res[mode]
    walls = [x[0] for x in v]
    rate = statistics.median(x[1] / x[0] for x in v)
    print("| %s | %d | %.2f s (%.2f-%.2f) | %.0f | %.2fx | %.1f s | %.1f s | %s | %.1f | %.1f |" % (
        name, v[0][1], statistics.median(walls), min(walls), max(walls), rate, rate / base,
        statistics.median(x[2] for x in v), statistics.median(x[3] for x in v),
        "%.1f s" % statistics.median(x[4] for x in v) if mode.startswith("proxy") else "-",
        statistics.median(x[5] / x[1] for x in v), statistics.median(x[6] / x[1] for x in v)))
PY
