#!/usr/bin/env python3
"""Redis commands a URL of one `crawl --redis` worker, by command (docs/BENCHMARKS.md,
"Crawl on Redis": what each shared decision costs Redis). tests/tools/crawl_redis.py's
site (HOSTS hosts of PAGES pages, planted near-duplicates and byte-for-byte copies) is
served on 127.0.0.1 with no Crawl-delay; each variant NAME::BINARY::OPTIONS crawls it
with --delay 0 --concurrency 16 against a redis-server of its own, and INFO commandstats
(the calls inside the scripts included) is divided by the URLs logged.
Usage: python3 tests/bench/redis_ops.py HOSTS PAGES NAME::BINARY::OPTIONS...
"""
import json
import os
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "tools"))
from crawl_redis import Site, free_port, serve, start_redis  # noqa: E402

hosts, pages = int(sys.argv[1]), int(sys.argv[2])
WORK = subprocess.run(["mktemp", "-d"], capture_output=True, text=True).stdout.strip()
variants = [v.split("::") for v in sys.argv[3:]]  # NAME::BINARY::OPTIONS
site = Site(hosts, pages)
servers = serve(site, 0.0, [], threading.Lock())
seeds = ["http://127.0.0.1:%d/p/0.html" % p for p in site.ports]
for name, binary, extra in variants:
    d = os.path.join(WORK, name)
    os.makedirs(d)
    rp = free_port()
    r = start_redis(d, rp, False)
    t = time.monotonic()
    p = subprocess.run([binary, "crawl", "--redis", "redis://127.0.0.1:%d" % rp,
                        "--worker-name", "w0", "--delay", "0", "--concurrency", "16",
                        "--warc", d + "/x.warc.gz", "--log", d + "/x.jsonl"]
                       + extra.split() + seeds, capture_output=True, text=True)
    wall = time.monotonic() - t
    info = subprocess.run(["redis-cli", "-p", str(rp), "info", "commandstats"],
                          capture_output=True, text=True).stdout
    r.kill()
    r.wait()
    by, dec = {}, {}
    for line in info.splitlines():
        if "calls=" in line:
            name_ = line.split(":")[0].replace("cmdstat_", "")
            by[name_] = int(line.split("calls=")[1].split(",")[0])
    for line in open(d + "/x-w0.jsonl"):
        o = json.loads(line)
        dec[o["decision"]] = dec.get(o["decision"], 0) + 1
    n = sum(dec.values())
    tot = sum(by.values())
    print("%s: %d URLs logged %s, %.1f s, exit %d, Redis commands run %d = %.1f a URL"
          % (name, n, dec, wall, p.returncode, tot, tot / n))
    print("   ", ", ".join("%s %.2f" % (k, v / n) for k, v in sorted(by.items(),
                                                              key=lambda x: -x[1])))
for s in servers:
    s.shutdown()
subprocess.run(["rm", "-rf", WORK])
