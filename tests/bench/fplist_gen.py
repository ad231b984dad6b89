#!/usr/bin/env python3
"""A `HEX ID` fingerprint list for the index benchmarks (tests/bench/run.sh, section index):
N lines, 90% random 64-bit values and 10% planted near-duplicates (a copy of an earlier
value with 0-3 random bits flipped), ids https://example.org/page/I.html; fixed seed 42, so
the 1M list is the one earlier runs used. With QUERIES: 10,000 query lines (q0, q1, ...),
each an indexed value with one bit flipped.

usage: fplist_gen.py N OUT [QUERIES]
"""
import random
import sys


def main():
    n, out = int(sys.argv[1]), sys.argv[2]
    random.seed(42)
    v = []
    with open(out, 'w') as f:
        for i in range(n):
            if i and random.random() < 0.1:
                x = v[random.randrange(i)]
                for _ in range(random.randrange(4)):
                    x ^= 1 << random.randrange(64)
            else:
                x = random.getrandbits(64)
            v.append(x)
            f.write('%016x https://example.org/page/%d.html\n' % (x, i))
    if len(sys.argv) > 3:
        with open(sys.argv[3], 'w') as f:
            for i in range(10000):
                f.write('%016x q%d\n' % (v[random.randrange(len(v))] ^ (1 << random.randrange(64)), i))


if __name__ == '__main__':
    main()
