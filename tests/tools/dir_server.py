#!/usr/bin/env python3
"""A directory served on 127.0.0.1 for the crawl shell tests (tests/cli/crawl_*.sh): the
files of DIR with their Content-Type by extension, a random free port written to
--port-file once listening, and every request path logged, one line each, to --log.

    dir_server.py --dir SITE --port-file port [--log requests.log] [--port N]

--port N listens on N instead (a port a test had and gave up, taken over as a tripwire).
"""
import argparse
import functools
import http.server
import socketserver
import sys


class Handler(http.server.SimpleHTTPRequestHandler):
    log_file = None

    def log_message(self, fmt, *args):
        pass

    def send_head(self):
        if self.log_file:
            with open(self.log_file, "a") as f:
                f.write(self.path + "\n")
        return super().send_head()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--dir", required=True)
    ap.add_argument("--port-file", required=True)
    ap.add_argument("--log")
    ap.add_argument("--port", type=int, default=0)
    a = ap.parse_args()
    Handler.log_file = a.log
    srv = Server(("127.0.0.1", a.port), functools.partial(Handler, directory=a.dir))
    with open(a.port_file + ".tmp", "w") as f:
        f.write(str(srv.server_address[1]))
    import os
    os.rename(a.port_file + ".tmp", a.port_file)
    srv.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
