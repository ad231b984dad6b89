#!/usr/bin/env python3
"""serve --probe-lines against a large index (docs/BENCHMARKS.md, "Issue 19: the probe's
lines as an option (probe19k)").

  serve_lines.py gen DIR                 10M random fingerprints (DIR/big.fp, "HEX dN"
                                         lines) and 40 bodies of 50,000 dry-run NDJSON
                                         checks, half a bit from an indexed one (seed 1919)
  serve_lines.py run DIR PORT PID MODE   against a running simcrawl serve (pid PID): 2.5M
                                         checks so that the lines are due, then 3 rounds of
                                         2M; prints checks/s of wall time and per CPU s of
                                         the service (read from /proc), its stats, its VmHWM
"""
import http.client, json, os, random, sys, time


def gen(d):
    r = random.Random(1919)
    n = 10_000_000
    fps = [r.getrandbits(64) for _ in range(n)]
    with open(os.path.join(d, "big.fp"), "w") as f:
        f.writelines("%016x d%d\n" % (v, i) for i, v in enumerate(fps))
    for b in range(40):
        out = []
        for i in range(50000):
            v = fps[r.randrange(n)] ^ (1 << r.randrange(64)) if i % 2 else r.getrandbits(64)
            out.append('{"id":"q%d-%d","fingerprint":"%016x"}\n' % (b, i, v))
        with open(os.path.join(d, "q%02d.ndjson" % b), "w") as f:
            f.write("".join(out))


def run(d, port, pid, mode):
    bodies = [open(os.path.join(d, "q%02d.ndjson" % b), "rb").read() for b in range(40)]
    tick = os.sysconf("SC_CLK_TCK")

    def cpu():
        f = open("/proc/%d/stat" % pid).read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / tick

    c = http.client.HTTPConnection("127.0.0.1", port, timeout=600)

    def send(b):
        c.request("POST", "/v1/check?insert=false", body=b,
                  headers={"Content-Type": "application/x-ndjson"})
        r = c.getresponse()
        out = r.read()
        assert r.status == 200, out[:200]
        return out

    t0, c0 = time.time(), cpu()
    for b in bodies + bodies[:10]:
        send(b)
    c.request("GET", "/v1/stats")
    st = json.loads(c.getresponse().read())
    print("%s warm-up: 2.5M checks, %.1f s wall, %.1f cpu s; lines %s"
          % (mode, time.time() - t0, cpu() - c0, json.dumps(st["probe_lines"])), flush=True)
    for rnd in range(3):
        t0, c0, n, near = time.time(), cpu(), 0, 0
        for b in bodies:
            out = send(b)
            n += b.count(b"\n")
            near += out.count(b'"near-duplicate"')
        w, cp = time.time() - t0, cpu() - c0
        print("%s round %d: %d checks (%d near), %.0f checks/s wall, %.0f checks per cpu s of "
              "serve; load %s" % (mode, rnd, n, near, n / w, n / cp,
                                  open("/proc/loadavg").read().split()[0]), flush=True)
    hwm = [l for l in open("/proc/%d/status" % pid) if l.startswith("VmHWM")][0].strip()
    print("%s %s" % (mode, hwm), flush=True)


if __name__ == "__main__":
    if len(sys.argv) == 3 and sys.argv[1] == "gen":
        gen(sys.argv[2])
    elif len(sys.argv) == 6 and sys.argv[1] == "run":
        run(sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), sys.argv[5])
    else:
        sys.exit(__doc__)
