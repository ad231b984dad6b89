# pairs --fingerprints on a large list file (issue 19): a regular file of 8 MiB or more is
# read by two threads, cut at the first line start after 46% of it (cli/cmd_pairs.c, "a
# list file read by two threads"). The same list on standard input takes the one-thread
# stream reader: both must print the same pairs and say the same things (malformed lines,
# a line over the limit, duplicate ids on both sides of the cut, with their line numbers)
# and exit alike. Sourced by tests/cli_test.sh (helpers ok, bad; $TMP, $SIMCRAWL).
PL=$TMP/pairs_lists
mkdir -p "$PL"
python3 - "$PL/big.txt" <<'PYEOF'
import random, sys
random.seed(19)
n = 240000
fps, out = [], []
for i in range(n):
    if fps and random.random() < 0.1:
        x = random.choice(fps) ^ (1 << random.randrange(64)) ^ (1 << random.randrange(64))
    else:
        x = random.getrandbits(64)
    fps.append(x)
    name = i if random.random() > 0.01 else random.randrange(i + 1)  # repeated ids
    line = "%016x https://example.org/a-fairly-long-path/page/%d" % (x, name)
    r = random.random()
    if r < 0.00002:
        line = "zz" + line[2:]  # not hex (a few: the first 20 are named)
    elif r < 0.00004:
        line = line[:16]  # no id
    elif r < 0.002:
        line = ""
    elif r < 0.003:
        line = "# a comment"
    elif r < 0.004:
        line = "%016x\thttps://tab.example/%d" % (x, i)
    elif r < 0.005:
        line += "\r"
    elif r < 0.0055:
        line = "\\%016x  a\\nb\\\\c%d" % (x, i)  # the escaped form
    out.append(line)
out[n // 2 + 3] = "%016x %s" % (1, "y" * 70000)  # over the line limit, in the second part
open(sys.argv[1], "w").write("\n".join(out))  # no final newline
PYEOF
size=$(wc -c <"$PL/big.txt")
if [ "$size" -ge 8388608 ]; then ok; else bad "pairs_lists: the list is $size bytes, under the two-thread road's 8 MiB"; fi
for fmt in text jsonl; do
    "$SIMCRAWL" pairs --format $fmt --fingerprints "$PL/big.txt" >"$PL/file.out" 2>"$PL/file.err"; sf=$?
    "$SIMCRAWL" pairs --format $fmt --fingerprints - <"$PL/big.txt" >"$PL/stdin.out" 2>"$PL/stdin.err"; ss=$?
    sed "s|(standard input)|$PL/big.txt|" "$PL/stdin.err" >"$PL/stdin.err2"
    if [ "$sf" = 2 ] && [ "$ss" = 2 ] && [ -s "$PL/file.out" ] && cmp -s "$PL/file.out" "$PL/stdin.out"; then ok; else
        bad "pairs --format $fmt: a list file (exit $sf, $(wc -l <"$PL/file.out") pairs) and the same on stdin (exit $ss, $(wc -l <"$PL/stdin.out") pairs) differ"
    fi
    if cmp -s "$PL/file.err" "$PL/stdin.err2"; then ok; else
        bad "pairs --format $fmt: the diagnostics of a list file and of stdin differ: $(diff "$PL/file.err" "$PL/stdin.err2" | head -c 400)"
    fi
done
# both sides of the cut said: a duplicate id in the second half, the line over the limit
if grep -q "big.txt:12000[0-9]: line longer than the limit" "$PL/file.err" &&
    grep -q "big.txt:2[0-9][0-9][0-9][0-9][0-9]: \(missing id\|expected 16\)" "$PL/file.err" &&
    [ "$(grep -c 'duplicate id' "$PL/file.err")" -gt 1000 ] &&
    grep -q "big.txt:2[0-9][0-9][0-9][0-9][0-9]: duplicate id" "$PL/file.err"; then ok; else
    bad "pairs: a list file's diagnostics: $(head -c 400 "$PL/file.err")"
fi
# two lists, the large one second: lines numbered per list, duplicates across lists
printf '0000000000000000 https://example.org/a-fairly-long-path/page/5\nnot a line\n' >"$PL/small.txt"
"$SIMCRAWL" pairs --fingerprints "$PL/small.txt" --fingerprints "$PL/big.txt" >"$PL/two.out" 2>"$PL/two.err"
cat "$PL/small.txt" "$PL/big.txt" | "$SIMCRAWL" pairs --fingerprints - >"$PL/two.stdin.out" 2>/dev/null
if cmp -s "$PL/two.out" "$PL/two.stdin.out" && grep -q "small.txt:2: expected 16 hex digits" "$PL/two.err" &&
    grep -q "big.txt:[0-9]*: duplicate id 'https://example.org/a-fairly-long-path/page/5'" "$PL/two.err"; then ok; else
    bad "pairs with two lists: $(head -c 300 "$PL/two.err")"
fi
# the pairs are formatted on both cores in blocks of 8,192 and written in order (cli/cmd_pairs.c,
# "the pairs formatted on several threads"): 30,000 pairs known in advance (two documents a
# fingerprint, the fingerprints far apart), some ids to escape, both formats against the
# lines expected; SIMCRAWL_PROFILE=1 names the phases on stderr and changes no output byte
python3 - "$PL" <<'PYEOF'
import json, random, sys
random.seed(1919)
d = sys.argv[1]
lst, text, jsonl = [], [], []
for g in range(30000):
    x = random.getrandbits(64)
    a = "https://example.org/g/%d" % g if g % 1000 else 'https://example.org/\u00e9"%d"' % g
    b = "https://example.org/h/%d" % g
    lst += ["%016x %s" % (x, a), "%016x %s" % (x, b)]
    ta = a.replace("\\", "\\\\")
    text.append("0\t%s\t%s" % (ta, b))
    jsonl.append('{"a": %s, "b": %s, "distance": 0}' % (json.dumps(a, ensure_ascii=False), json.dumps(b)))
open(d + "/known.txt", "w", encoding="utf-8").write("\n".join(lst) + "\n")
open(d + "/known.text", "w", encoding="utf-8").write("\n".join(text) + "\n")
open(d + "/known.jsonl", "w", encoding="utf-8").write("\n".join(jsonl) + "\n")
PYEOF
for fmt in text jsonl; do
    "$SIMCRAWL" pairs --format $fmt --fingerprints "$PL/known.txt" >"$PL/known.out" 2>"$PL/known.err"
    if cmp -s "$PL/known.out" "$PL/known.$fmt" && ! [ -s "$PL/known.err" ]; then ok; else
        bad "pairs --format $fmt: 30,000 known pairs printed otherwise: $(diff "$PL/known.out" "$PL/known.$fmt" | head -c 300)"
    fi
done
SIMCRAWL_PROFILE=1 "$SIMCRAWL" pairs --format jsonl --fingerprints "$PL/known.txt" >"$PL/known.out" 2>"$PL/known.err"
if cmp -s "$PL/known.out" "$PL/known.jsonl" && grep -q "^simcrawl pairs: profile lists read wall [0-9.]* cpu [0-9.]* main thread [0-9.]*$" "$PL/known.err" &&
    grep -q "^simcrawl pairs: profile pairs written wall" "$PL/known.err"; then ok; else
    bad "pairs with SIMCRAWL_PROFILE=1: $(head -c 300 "$PL/known.err")"
fi
rm -rf "$PL"
