#!/usr/bin/env python3
"""Redis shards behind nutcracker (twemproxy, Debian's nutcracker 0.5) on 127.0.0.1, for
the sharded-frontier design of issue 17 (docs/SCALE-OUT.md, "Sharding").

Starts --nodes redis-servers (random free ports, a temporary dir each, --save "") and one
nutcracker in front of them with a generated configuration (hash fnv1a_64, distribution
ketama, hash_tag "{}", its own random port and stats port), then:

  --check   asks the proxy what the design depends on and exits 1 when one does not
            hold: a script whose keys share one hash tag runs (EVAL, EVALSHA) and writes
            on the node the tag hashes to; SCRIPT LOAD, MULTI and WATCH are refused (so
            the frontier sends EVAL, or loads its scripts on each node directly); keys of
            many tags spread over every node.
  --bench   the per-host enqueue script (seen-check and push, the frontier's ENQUEUE
            keyed by one host tag; the key names derived inside the script from KEYS[1])
            sent by redis-benchmark to one redis-server directly and to the nutcracker in
            front of --nodes servers, --rounds alternating rounds: scripts/s, median and
            range, and the spread of the keys over the nodes.

Every process is stopped at the end, whatever happened. Loopback only.
"""
import argparse
import csv
import os
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

ENQUEUE = ("local t = KEYS[1] "
           "if redis.call('SADD', t .. ':s', ARGV[1]) == 0 then return 0 end "
           "redis.call('RPUSH', t .. ':q', ARGV[2]) return 1")


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def wait_port(port, proc, what):
    for _ in range(200):
        if proc.poll() is not None:
            sys.exit("%s exited at start (status %s)" % (what, proc.returncode))
        try:
            socket.create_connection(("127.0.0.1", port), 0.2).close()
            return
        except OSError:
            time.sleep(0.025)
    sys.exit("%s did not start on 127.0.0.1:%d" % (what, port))


def cli(port, *args):
    """redis-cli against 127.0.0.1:port: (exit status, output)"""
    r = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port)] + list(args),
                       capture_output=True, text=True, timeout=10)
    return r.returncode, (r.stdout + r.stderr).strip()


def commands_run(port):
    """the commands the redis-server at port has run (INFO commandstats: the calls inside
    scripts included)"""
    info = cli(port, "info", "commandstats")[1]
    return sum(int(l.split("calls=")[1].split(",")[0]) for l in info.splitlines()
               if "calls=" in l)


def cpu_seconds(port):
    """the CPU time (user + system) of the redis-server at port"""
    info = cli(port, "info", "cpu")[1]
    return sum(float(l.split(":")[1]) for l in info.splitlines()
               if l.startswith(("used_cpu_sys:", "used_cpu_user:")))


class Shards:
    """durable: the nodes keep an append-only file (appendfsync always), so that one
    killed and started again (restart()) loses nothing acknowledged"""

    def __init__(self, nodes, base, durable=False):
        self.dir = tempfile.mkdtemp(prefix="simcrawl-shards-", dir=base)
        self.procs = []
        self.ports = []
        self.durable = durable
        try:
            for i in range(nodes):
                p = free_port()
                pr = self.start_node(i, p)
                self.procs.append(pr)
                wait_port(p, pr, "redis-server")
                self.ports.append(p)
            self.proxy = free_port()
            stats = free_port()
            conf = os.path.join(self.dir, "nutcracker.yml")
            with open(conf, "w") as f:
                f.write("simcrawl:\n"
                        "  listen: 127.0.0.1:%d\n"
                        "  hash: fnv1a_64\n"
                        "  distribution: ketama\n"
                        "  hash_tag: \"{}\"\n"
                        "  redis: true\n"
                        "  auto_eject_hosts: false\n"
                        "  timeout: 5000\n"
                        "  server_connections: 1\n"
                        "  servers:\n" % self.proxy)
                for i, p in enumerate(self.ports):
                    f.write("   - 127.0.0.1:%d:1 node%d\n" % (p, i))
            pr = subprocess.Popen(["nutcracker", "-c", conf, "-s", str(stats), "-a", "127.0.0.1",
                                   "-o", os.path.join(self.dir, "nutcracker.log")],
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
            self.procs.append(pr)
            wait_port(self.proxy, pr, "nutcracker")
        except BaseException:
            self.stop()
            raise

    def start_node(self, i, port):
        d = os.path.join(self.dir, "r%d" % i)
        os.makedirs(d, exist_ok=True)
        aof = ["--appendonly", "yes", "--appendfsync", "always"] if self.durable else \
            ["--appendonly", "no"]
        return subprocess.Popen(
            ["redis-server", "--port", str(port), "--bind", "127.0.0.1", "--save", "",
             "--dir", d, "--logfile", os.path.join(d, "log")] + aof,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    def restart(self, i, down):
        """node i killed with SIGKILL, started again in place down seconds later"""
        self.procs[i].send_signal(signal.SIGKILL)
        self.procs[i].wait()
        time.sleep(down)
        self.procs[i] = self.start_node(i, self.ports[i])
        wait_port(self.ports[i], self.procs[i], "redis-server")

    def stop(self):
        for pr in self.procs:
            if pr.poll() is None:
                pr.send_signal(signal.SIGTERM)
        for pr in self.procs:
            try:
                pr.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pr.kill()
                pr.wait()
        shutil.rmtree(self.dir, ignore_errors=True)

    def dbsizes(self):
        return [int(cli(p, "dbsize")[1]) for p in self.ports]

    def tag_nodes(self, tags):
        """the node each hash tag goes to through the proxy: a key of it written there,
        looked for on every node, deleted"""
        keys = ["simcrawl{%s}:probe" % t for t in tags]
        piped(self.proxy, "".join("SET %s 1\n" % k for k in keys))
        where = [None] * len(tags)
        for i, p in enumerate(self.ports):
            for j, there in enumerate(piped(p, "".join("EXISTS %s\n" % k for k in keys))):
                if there == "1":
                    where[j] = i
        piped(self.proxy, "".join("DEL %s\n" % k for k in keys))
        return where

    def count_keys(self, pattern):
        """keys matching pattern on each node"""
        return [int(cli(p, "eval", "return #redis.call('KEYS', ARGV[1])", "0", pattern)[1])
                for p in self.ports]


def piped(port, commands):
    """commands (one a line) sent by one redis-cli to 127.0.0.1:port: its answers"""
    r = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(port)], input=commands,
                       capture_output=True, text=True, timeout=10)
    return r.stdout.split()


def check(sh):
    fails = []
    px = sh.proxy
    st, out = cli(px, "eval", ENQUEUE, "1", "sc{http://a.test:80}", "u1", "entry1")
    if st or out != "1":
        fails.append("EVAL of one tag through the proxy: %r" % out)
    st, out = cli(px, "eval", ENQUEUE, "1", "sc{http://a.test:80}", "u1", "entry1")
    if out != "0":
        fails.append("the same URL again should be seen: %r" % out)
    # the script's keys are on the node the tag hashes to: exactly one node has both
    where = [p for p in sh.ports if cli(p, "exists", "sc{http://a.test:80}:s",
                                        "sc{http://a.test:80}:q")[1] == "2"]
    if len(where) != 1:
        fails.append("the script's keys are on %d nodes, not one" % len(where))
    st, sha = cli(where[0] if where else sh.ports[0], "script", "load", ENQUEUE)
    st, out = cli(px, "evalsha", sha, "1", "sc{http://a.test:80}", "u2", "entry2")
    if out != "1":
        fails.append("EVALSHA (loaded on the node) through the proxy: %r" % out)
    refused = []
    for cmd in (["script", "load", ENQUEUE], ["multi"], ["watch", "k"]):
        st, out = cli(px, *cmd)
        if st == 0 and "ERR" not in out and "closed" not in out:
            fails.append("%s through the proxy was not refused: %r" % (cmd[0], out))
        refused.append("%s: %s" % (cmd[0], out.splitlines()[-1] if out else "(closed)"))
    print("redis_shards --check: refused by the proxy: " + "; ".join(refused))
    r = subprocess.run(["redis-cli", "-h", "127.0.0.1", "-p", str(px)],
                       input="".join("set sc{host%d}:h 1\n" % h for h in range(300)),
                       capture_output=True, text=True, timeout=30)
    sizes = sh.dbsizes()
    if min(sizes) == 0:
        fails.append("300 tags left a node empty: %s" % sizes)
    print("redis_shards --check: %d nodes behind nutcracker; keys per node after 300 tags: %s"
          % (len(sh.ports), sizes))
    return fails


def bench_once(port, n, clients, pipeline):
    r = subprocess.run(
        ["redis-benchmark", "-h", "127.0.0.1", "-p", str(port), "-n", str(n), "-c", str(clients),
         "-P", str(pipeline), "-r", "1000000", "-q", "--csv",
         "eval", ENQUEUE, "1", "sc{h__rand_int__}", "u__rand_int__", "entry__rand_int__"],
        capture_output=True, text=True, timeout=300)
    for f in csv.reader(r.stdout.splitlines()):
        if len(f) >= 2 and f[0].lower().startswith("eval"):
            return float(f[1])
    sys.exit("redis-benchmark said nothing usable: %s %s" % (r.stdout[-300:], r.stderr[-300:]))


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--nodes", type=int, default=3)
    ap.add_argument("--check", action="store_true")
    ap.add_argument("--bench", action="store_true")
    ap.add_argument("--requests", type=int, default=100000)
    ap.add_argument("--clients", type=int, default=3)
    ap.add_argument("--pipeline", type=int, default=16)
    ap.add_argument("--rounds", type=int, default=5)
    ap.add_argument("--dir", default=None, help="where the temporary dirs go")
    a = ap.parse_args()
    for tool in ("redis-server", "redis-cli", "nutcracker") + (("redis-benchmark",) if a.bench else ()):
        if not shutil.which(tool):
            sys.exit("%s not found (apt-get install redis-server nutcracker)" % tool)
    sh = Shards(a.nodes, a.dir)
    one = None
    fails = []
    try:
        if a.check:
            fails += check(sh)
        if a.bench:
            one = Shards(1, a.dir)
            direct, proxied = [], []
            for _ in range(a.rounds):  # alternating: the machine's load hits both
                for p in one.ports:
                    cli(p, "flushall")
                for p in sh.ports:
                    cli(p, "flushall")
                direct.append(bench_once(one.ports[0], a.requests, a.clients, a.pipeline))
                proxied.append(bench_once(sh.proxy, a.requests, a.clients, a.pipeline))
            spread = sh.dbsizes()

            def fmt(v):
                return "%.0f (%.0f-%.0f)" % (statistics.median(v), min(v), max(v))
            print("enqueue scripts/s, %d requests, %d clients, pipeline %d, %d rounds, "
                  "median (range):" % (a.requests, a.clients, a.pipeline, a.rounds))
            print("  one redis-server direct:            %s" % fmt(direct))
            print("  nutcracker in front of %d servers:   %s" % (a.nodes, fmt(proxied)))
            print("  ratio proxied/direct: %.2f; keys per node: %s"
                  % (statistics.median(proxied) / statistics.median(direct), spread))
    finally:
        sh.stop()
        if one:
            one.stop()
    for f in fails:
        print("FAIL: " + f, file=sys.stderr)
    return 1 if fails else 0


if __name__ == "__main__":
    sys.exit(main())
