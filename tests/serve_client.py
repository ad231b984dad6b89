"""A client of simcrawl serve for the kill tests (tests/cli/serve_kill.sh, make stress):
one keep-alive connection (http.client), as a crawler would hold it.

    serve_client.py load PORT ACKED SEED
        posts NDJSON batches of BATCH new fingerprints (random, so no two are within k)
        to /v1/check until the connection fails (the service was killed) or LOAD_SECONDS
        pass; after each 200, appends "ID FINGERPRINT" to ACKED for every line answered
        "added": true, and flushes, so ACKED holds exactly what the service acknowledged.
        Prints the number of batches sent.
    serve_client.py verify PORT ACKED
        asks /v1/neighbors?fingerprint=FP&k=0 for every line of ACKED; prints
        "verified N lost L" and, for each lost one, "lost ID".
"""
import http.client
import json
import random
import sys
import time

BATCH = 8
LOAD_SECONDS = 30


def load(port, acked_path, seed):
    rng = random.Random(seed)
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    sent = 0
    with open(acked_path, "a") as acked:
        end = time.time() + LOAD_SECONDS
        while time.time() < end:
            lines = []
            for _ in range(BATCH):
                lines.append((("s%s-%d" % (seed, rng.getrandbits(48))), "%016x" % rng.getrandbits(64)))
            body = "".join(json.dumps({"id": i, "fingerprint": f}) + "\n" for i, f in lines)
            try:
                conn.request("POST", "/v1/check", body, {"Content-Type": "application/x-ndjson"})
                resp = conn.getresponse()
                data = resp.read()
            except (OSError, http.client.HTTPException):
                break
            sent += 1
            if resp.status != 200:
                print("HTTP %d: %s" % (resp.status, data[:200]), file=sys.stderr)
                break
            answers = [json.loads(x) for x in data.decode().splitlines()]
            for (i, f), a in zip(lines, answers):
                if a["id"] != i:
                    print("answer for %s is about %s" % (i, a["id"]), file=sys.stderr)
                    sys.exit(2)
                if a["added"]:
                    acked.write("%s %s\n" % (i, f))
            acked.flush()
    print(sent)


def verify(port, acked_path):
    conn = http.client.HTTPConnection("127.0.0.1", port, timeout=10)
    n = lost = 0
    for line in open(acked_path):
        i, f = line.split()
        conn.request("GET", "/v1/neighbors?fingerprint=%s&k=0" % f)
        resp = conn.getresponse()
        d = json.loads(resp.read())
        n += 1
        if i not in [x["id"] for x in d.get("neighbors", [])]:
            lost += 1
            print("lost %s" % i)
    print("verified %d lost %d" % (n, lost))


if __name__ == "__main__":
    if sys.argv[1] == "load":
        load(int(sys.argv[2]), sys.argv[3], sys.argv[4])
    else:
        verify(int(sys.argv[2]), sys.argv[3])
