#!/usr/bin/env python3
"""Alternating rounds of whole-process commands against each other (tests/bench/run.sh,
section index): every round runs each command once, in order, under /usr/bin/time; prints
per command the median wall seconds, CPU seconds (user + system, all threads) and peak
RSS with their ranges over the rounds, and for each command after the first its per-round
ratios to the first (wall and CPU, median and range), so a busy machine's drift hits both
sides of a ratio alike (on a machine shared with other builds the CPU ratio is the
steadier one: wall time then mostly measures the neighbours).

usage: rounds.py ROUNDS LABEL CMD [LABEL CMD]...   (CMD: one shell command line; its
standard output goes to /dev/null)
"""
import statistics
import subprocess
import sys
import tempfile


def run(cmd):
    with tempfile.NamedTemporaryFile('r') as t:
        subprocess.run(['/usr/bin/time', '-o', t.name, '-f', '%e %U %S %M', 'sh', '-c', cmd],
                       stdout=subprocess.DEVNULL, check=True)
        wall, user, system, rss = t.read().split()[-4:]
        return float(wall), int(rss) / 1024.0, float(user) + float(system)


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
        c = [x[2] for x in res[label]]
        print('%s\n    wall %.3f s (%.3f-%.3f), cpu %.3f s (%.3f-%.3f), peak RSS %.1f MB '
              '(%.1f-%.1f)' % (label, statistics.median(w), min(w), max(w),
                               statistics.median(c), min(c), max(c),
                               statistics.median(m), min(m), max(m)))
    for label, _ in cmds[1:]:
        for name, i in (('wall', 0), ('cpu', 2)):
            r = [a[i] / b[i] for a, b in zip(res[base], res[label]) if b[i] > 0]
            if r:
                print('  %s / %s, per round, %s: %.3fx (%.3f-%.3f)' % (
                    base, label, name, statistics.median(r), min(r), max(r)))


if __name__ == '__main__':
    main()
