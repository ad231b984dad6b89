"""Runs the HTTP service examples of a Markdown file (docs/HTTP-API.md, README.md) against a
running simcrawl serve, so that the documentation shows what the service does.

    doc_examples.py FILE URL DIR

In every ``` block of FILE that names http://127.0.0.1:8470, each "$ " line is a command
(continued by "> " lines, or by a trailing backslash) and the lines after it, up to the
next command or the block's end, are its output. Each command is run with /bin/sh in DIR,
in order, http://127.0.0.1:8470 replaced by URL, and its standard output must be those
lines, once the values of "uptime_seconds" and "journal_bytes" (which vary) are set aside.
Prints one line per command; exits 1 at the first that differs, saying how.
"""
import re
import subprocess
import sys

from readme_examples import commands  # one reader of "$ " blocks for both

DOC_URL = "http://127.0.0.1:8470"
VARYING = re.compile(r'"(uptime_seconds|journal_bytes)":[0-9.]+')


def examples(text):
    """(command, expected output lines) of the blocks that name DOC_URL, in order."""
    blocks = re.findall(r"^```[a-z]*\n(.*?)^```", text, re.S | re.M)
    for block in blocks:
        if DOC_URL in block:
            for _, cmd, out in commands(block.splitlines()):
                yield cmd, out


def main():
    path, url, cwd = sys.argv[1:4]
    n = 0
    for cmd, want in examples(open(path, encoding="utf-8").read()):
        run = cmd.replace(DOC_URL, url)
        p = subprocess.run(["/bin/sh", "-c", run], cwd=cwd, capture_output=True, timeout=60)
        got = VARYING.sub(r'"\1":N', p.stdout.decode("utf-8", "replace")).splitlines()
        want = [VARYING.sub(r'"\1":N', w) for w in want]
        n += 1
        if got != want:
            print("%s: example %d differs: %s" % (path, n, cmd))
            print("  want: %r" % want)
            print("  got:  %r" % got)
            print("  stderr: %r" % p.stderr[-300:])
            sys.exit(1)
        print("ok %d: %s" % (n, cmd.splitlines()[0][:100]))
    if n == 0:
        print("%s: no example names %s" % (path, DOC_URL))
        sys.exit(1)


if __name__ == "__main__":
    main()
