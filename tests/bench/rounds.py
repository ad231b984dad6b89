#!/usr/bin/env python3
"""Alternating rounds of whole-process commands against each other (tests/bench/run.sh,
section index): every round runs each command once, in order, under /usr/bin/time; prints
per command the median wall seconds and peak RSS with their ranges over the rounds, and
for each command after the first its per-round ratio to the first (median and range), so
a busy machine's drift hits both sides of a ratio alike.

usage: rounds.py ROUNDS LABEL CMD [LABEL CMD]...   (CMD: one shell command line; its
standard output goes to /dev/null)
"""
import statistics
import subprocess
import sys
import tempfile


def run(cmd):
    with tempfile.NamedTemporaryFile('r') as t:
        subprocess.run(['/usr/bin/time', '-o', t.name, '-f', '%e %M', 'sh', '-c', cmd],
                       stdout=subprocess.DEVNULL, check=True)
        wall, rss = t.read().split()[-2:]
        return float(wall), int(rss) / 1024.0


def main():
    rounds = int(sys.argv[1])
    args = sys.argv[2:]
    cmds = [(args[i], args[i + 1]) for i in range(0, len(args) - 1, 2)]
    res = {label: [] for label, _ in cmds}
    for _ in range(rounds):
        for label, cmd in cmds:
            res[label].append(run(cmd))
    base = cmds[0][0]
    for label, _ in cmds:
        w = [x[0] for x in res[label]]
        m = [x[1] for x in res[label]]
        line = '%-58s wall %7.3f s (%.3f-%.3f)  peak RSS %7.1f MB (%.1f-%.1f)' % (
            label, statistics.median(w), min(w), max(w), statistics.median(m), min(m), max(m))
        print(line)
    for label, _ in cmds[1:]:
        r = [a[0] / b[0] for a, b in zip(res[base], res[label]) if b[0] > 0]
        if r:
            print('  %s / %s, per round: %.3fx (%.3f-%.3f)' % (
                base, label, statistics.median(r), min(r), max(r)))


if __name__ == '__main__':
    main()
