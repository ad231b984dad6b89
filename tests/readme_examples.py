#!/usr/bin/env python3
"""Runs the examples of README.md and compares what they print with what the README shows,
so that the README cannot go stale (curl and jq check their manuals the same way).

    readme_examples.py README SIMCRAWL_BINARY

Every ``` block with "$ " lines is run, in README order, in one scratch directory that
links the repository's folders (so tests/..., examples/... resolve), with `simcrawl` on
PATH (the binary given). A "$ " line is a command ("> " lines, or a trailing backslash,
continue it); the lines up to the next command are what the terminal shows: its standard
output in order, with its standard error lines anywhere among them (a pipe buffers one
and not the other, so their interleaving is not fixed). A command ending in "&" runs in
the background until the end. Commands starting with "make " run at the repository root.

Left out: blocks that name 127.0.0.1:8470 (the service's examples, run against a
live `simcrawl serve` by tests/cli/serve.sh with tests/doc_examples.py) and blocks right
after a `<!-- readme-examples: skip REASON -->` line (REASON says which test runs them).

What varies from run to run is set aside on both sides before comparing: the port after
127.0.0.1: (a block naming 127.0.0.1:8000 gets a free port instead), WARC record ids
(urn:uuid), WARC offsets (a URL's port shifts them), and durations and rates (a number before s, ms, MB/s, records/s, pages/s).
Prints one line per command; exits 1 if any differs, showing how.
"""
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile

SERVICE_URL = "127.0.0.1:8470"
SKIP = re.compile(r"<!--\s*readme-examples:\s*skip\b")
VARYING = [
    (re.compile(r"127\.0\.0\.1:\d+"), "127.0.0.1:PORT"),
    (re.compile(r"urn:uuid:[0-9a-fA-F-]{36}"), "urn:uuid:UUID"),
    (re.compile(r"\b\d+(\.\d+)? (s|ms|MB/s|records/s|pages/s)\b"), "N \\2"),
    (re.compile(r'"offset":\d+'), '"offset":N'),
]


def normalise(line):
    for rx, rep in VARYING:
        line = rx.sub(rep, line)
    return line.rstrip()


def blocks(text):
    """(first line number, lines) of the ``` blocks to run."""
    lines = text.split("\n")
    i, out = 0, []
    while i < len(lines):
        if lines[i].startswith("```"):
            start = i
            j = i + 1
            while j < len(lines) and not lines[j].startswith("```"):
                j += 1
            body = lines[i + 1:j]
            prev = "\n".join(lines[max(0, start - 2):start])
            if (any(l.startswith("$ ") for l in body) and SERVICE_URL not in "\n".join(body)
                    and not SKIP.search(prev)):
                out.append((start + 2, body))
            i = j + 1
        else:
            i += 1
    return out


def commands(body):
    cmd, out, first = None, [], 0
    for n, line in enumerate(body):
        if line.startswith("$ "):
            if cmd is not None:
                yield first, cmd, out
            cmd, out, first = line[2:], [], n
        elif cmd is not None and not out and (line.startswith("> ") or cmd.endswith("\\")):
            cmd += "\n" + (line[2:] if line.startswith("> ") else line)
        elif cmd is not None:
            out.append(line)
    if cmd is not None:
        yield first, cmd, out


def matches(expected, stdout, stderr):
    """Whether expected is stdout in order with the stderr lines anywhere among them."""
    exp = [normalise(l) for l in expected]
    err = [normalise(l) for l in stderr]
    rest = list(exp)
    for l in err:
        if l in rest:
            rest.remove(l)
        else:
            return False
    return rest == [normalise(l) for l in stdout]


def free_port():
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    p = s.getsockname()[1]
    s.close()
    return p


def main():
    readme, binary = sys.argv[1], os.path.abspath(sys.argv[2])
    root = os.path.dirname(os.path.abspath(readme))
    work = tempfile.mkdtemp(prefix="readme-examples.")
    bindir = os.path.join(work, ".bin")
    os.mkdir(bindir)
    os.symlink(binary, os.path.join(bindir, "simcrawl"))
    for name in os.listdir(root):
        if not name.startswith(".") and os.path.isdir(os.path.join(root, name)) and name != "build":
            os.symlink(os.path.join(root, name), os.path.join(work, name))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ["PATH"], LC_ALL="C.UTF-8")
    background, failed, ran = [], 0, 0
    try:
        for lineno, body in blocks(open(readme, encoding="utf-8").read()):
            port = str(free_port()) if any("127.0.0.1:8000" in l for l in body) else None
            for n, cmd, expected in commands(body):
                if port:
                    cmd = re.sub(r"\b8000\b", port, cmd)
                where = f"{readme}:{lineno + n}"
                if cmd.rstrip().endswith("&"):
                    background.append(subprocess.Popen(
                        ["/bin/sh", "-c", cmd.rstrip()[:-1]], cwd=work, env=env,
                        stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                        start_new_session=True))
                    print(f"{where}: started in the background: {cmd}")
                    continue
                cwd = root if cmd.startswith("make ") else work
                run_env = dict(env)
                if cmd.startswith("make "):
                    run_env.pop("MAKEFLAGS", None)
                    run_env.pop("MAKELEVEL", None)
                r = subprocess.run(["/bin/sh", "-c", cmd], cwd=cwd, env=run_env,
                                   capture_output=True, text=True, timeout=300)
                ran += 1
                out, err = r.stdout.splitlines(), r.stderr.splitlines()
                if matches(expected, out, err):
                    print(f"{where}: ok: {cmd.splitlines()[0]}")
                else:
                    failed += 1
                    print(f"{where}: DIFFERS: {cmd}")
                    print("  README shows:\n    " + "\n    ".join(expected or ["(nothing)"]))
                    print("  stdout:\n    " + "\n    ".join(out or ["(nothing)"]))
                    print("  stderr:\n    " + "\n    ".join(err or ["(nothing)"]))
    finally:
        for p in background:
            try:
                os.killpg(p.pid, signal.SIGTERM)
            except ProcessLookupError:
                pass
            p.wait()
        shutil.rmtree(work, ignore_errors=True)
    print(f"readme examples: {ran} commands, {failed} differ")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
