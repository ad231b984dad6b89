#!/usr/bin/env python3
"""serve_check: simcrawl serve from Python with nothing but the standard library
(urllib). Checks each HTML file named on the command line against a running service
(docs/HTTP-API.md), in order, as a crawler would check the pages it fetches, and prints
one line per page, tab-separated, as examples/check_pages.c does:

    PAGE  DECISION  FINGERPRINT  DUPLICATE_OF  DISTANCE

The page's path is its id. SIMCRAWL_TOKEN in the environment is sent as the bearer token
(for a service started with --token-file).

    python3 examples/serve_check.py http://127.0.0.1:8470 a.html b.html

Exit status 0, 1 on a usage error, 2 when a page could not be read or checked.
"""
import json
import os
import sys
import urllib.error
import urllib.parse
import urllib.request


def check(base, page_id, body, content_type="text/html; charset=utf-8", insert=True):
    """POST /v1/check: the answer as a dict; urllib.error.HTTPError for a 4xx or 5xx."""
    query = urllib.parse.urlencode({"id": page_id, "insert": "true" if insert else "false"})
    req = urllib.request.Request(base + "/v1/check?" + query, data=body, method="POST",
                                 headers={"Content-Type": content_type})
    token = os.environ.get("SIMCRAWL_TOKEN")
    if token:
        req.add_header("Authorization", "Bearer " + token)
    with urllib.request.urlopen(req, timeout=60) as resp:
        return json.load(resp)


def main():
    if len(sys.argv) < 3:
        print("usage: serve_check.py URL PAGE...", file=sys.stderr)
        return 1
    base, status = sys.argv[1].rstrip("/"), 0
    for path in sys.argv[2:]:
        try:
            with open(path, "rb") as f:
                a = check(base, path, f.read())
        except urllib.error.HTTPError as e:
            print("serve_check: %s: HTTP %d: %s" % (path, e.code, json.load(e)["error"]),
                  file=sys.stderr)
            status = 2
            continue
        except OSError as e:
            print("serve_check: %s: %s" % (path, e), file=sys.stderr)
            status = 2
            continue
        print("\t".join([path, a["decision"], a["fingerprint"] or "-", a["duplicate_of"] or "-",
                         "-" if a["distance"] is None else str(a["distance"])]))
    return status


if __name__ == "__main__":
    sys.exit(main())
