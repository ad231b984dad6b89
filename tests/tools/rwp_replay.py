#!/usr/bin/env python3
"""Replays pages of WARCs in ReplayWeb.page (the npm package replaywebpage: its ui.js and its
service worker sw.js, wabac.js) inside headless Chromium, and prints what each replayed page
shows.

    rwp_replay.py --rwp DIR --page WARC URL [--page WARC URL ...] [--live ORIGIN] [--timeout S]

DIR is the unpacked replaywebpage package (ui.js, sw.js). The WARCs and ReplayWeb.page's
files are served from a loopback HTTP server on 127.0.0.1 and a random free port (a secure
context, so the service worker runs); each page to replay is a tab (all load at once) on a
page that embeds <replay-web-page source=WARC url=URL>, opened once ReplayWeb.page's service
worker is active (warm_up). Chromium is driven through the DevTools protocol over a pipe (--remote-debugging-pipe: no
port, no websocket library). When the replay frame (ReplayWeb.page's ".../mp_/URL") has
loaded, a script in it reads the DOM: the text, the first <img>'s naturalWidth, the computed
colour of the <h1> and the background image of <body>, the element a script added
(#fromjs). Every request the page made is recorded with its status and whether the service
worker (the archive) answered it; "live_requests" lists those sent to ORIGIN, the site that
was crawled. Prints a JSON list, one object per --page; exit status 0 when every replay
frame was read, 1 otherwise (what went wrong on standard error).
"""
import argparse
import base64
import fcntl
import functools
import html
import http.server
import json
import os
import shutil
import socketserver
import subprocess
import sys
import tempfile
import threading
import time


class QuietHandler(http.server.SimpleHTTPRequestHandler):
    def log_message(self, fmt, *args):
        pass

    def end_headers(self):
        self.send_header("Cache-Control", "no-store")
        super().end_headers()


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True


class Browser:
    """Chromium with the DevTools protocol on fds 3 (commands in) and 4 (messages out),
    each message a JSON text ended by a NUL byte."""

    def __init__(self, chromium, profile, log):
        cmd_r, self.cmd_w = os.pipe()
        self.msg_r, msg_w = os.pipe()
        # above 4, so that placing one on 3 or 4 in the child cannot close the other
        hi_r = fcntl.fcntl(cmd_r, fcntl.F_DUPFD_CLOEXEC, 10)
        hi_w = fcntl.fcntl(msg_w, fcntl.F_DUPFD_CLOEXEC, 10)
        os.close(cmd_r)
        os.close(msg_w)

        def fds():
            os.dup2(hi_r, 3)  # dup2 clears close-on-exec: these two survive the exec
            os.dup2(hi_w, 4)

        self.proc = subprocess.Popen(
            [chromium, "--headless=new", "--no-sandbox", "--disable-gpu",
             "--remote-debugging-pipe", "--user-data-dir=" + profile,
             "--no-first-run", "--no-default-browser-check", "--disable-extensions",
             "--disable-background-networking", "--disable-component-update",
             "--disable-sync", "--metrics-recording-only", "--mute-audio",
             "--window-size=1024,768", "about:blank"],
            stdin=subprocess.DEVNULL, stdout=log, stderr=log, preexec_fn=fds,
            close_fds=False)  # every other fd of ours is close-on-exec (os.pipe, open)
        os.close(hi_r)
        os.close(hi_w)
        self.next_id = 0
        self.buf = b""
        self.events = []
        self.replies = {}
        self.lock = threading.Condition()
        self.reader = threading.Thread(target=self._read, daemon=True)
        self.reader.start()

    def _read(self):
        while True:
            try:
                chunk = os.read(self.msg_r, 65536)
            except OSError:
                chunk = b""
            if not chunk:
                with self.lock:
                    self.replies[None] = True
                    self.lock.notify_all()
                return
            self.buf += chunk
            while b"\0" in self.buf:
                raw, self.buf = self.buf.split(b"\0", 1)
                msg = json.loads(raw)
                with self.lock:
                    if "id" in msg:
                        self.replies[msg["id"]] = msg
                    else:
                        self.events.append(msg)
                    self.lock.notify_all()

    def call(self, method, params=None, session=None, timeout=30):
        self.next_id += 1
        mid = self.next_id
        msg = {"id": mid, "method": method, "params": params or {}}
        if session:
            msg["sessionId"] = session
        os.write(self.cmd_w, json.dumps(msg).encode() + b"\0")
        end = time.monotonic() + timeout
        with self.lock:
            while mid not in self.replies:
                if None in self.replies:
                    raise RuntimeError("chromium exited during %s" % method)
                left = end - time.monotonic()
                if left <= 0:
                    raise RuntimeError("no answer to %s in %d s" % (method, timeout))
                self.lock.wait(left)
            reply = self.replies.pop(mid)
        if "error" in reply:
            raise RuntimeError("%s: %s" % (method, reply["error"].get("message")))
        return reply.get("result", {})

    def close(self):
        try:
            self.call("Browser.close", timeout=5)
        except (RuntimeError, OSError):
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()
        os.close(self.cmd_w)


# What the replayed page shows, read in its own frame (an isolated world: the DOM, not the
# page's variables).
PROBE = r"""
(() => {
  const h1 = document.querySelector('h1');
  const img = document.querySelector('img');
  const js = document.getElementById('fromjs');
  return JSON.stringify({
    location: location.href,
    ready: document.readyState,
    title: document.title,
    text: document.body ? document.body.innerText : '',
    h1: h1 ? h1.textContent : null,
    h1_color: h1 ? getComputedStyle(h1).color : null,
    body_background: document.body ? getComputedStyle(document.body).backgroundImage : null,
    img_src: img ? img.currentSrc : null,
    img_complete: img ? img.complete : null,
    img_natural_width: img ? img.naturalWidth : null,
    img_natural_height: img ? img.naturalHeight : null,
    fromjs: js ? js.textContent : null,
  });
})()
"""


def frame_urls(tree):
    return [tree["frame"].get("url", "")] + [u for c in tree.get("childFrames", [])
                                             for u in frame_urls(c)]


def find_frame(tree, needle):
    frame = tree["frame"]
    if needle in frame.get("url", ""):
        return frame
    for child in tree.get("childFrames", []):
        found = find_frame(child, needle)
        if found:
            return found
    return None


def serve(a, work):
    """The directory the browser loads: ReplayWeb.page's files, each WARC, one embedding
    page per page to replay. Returns the server and the embedding pages' paths."""
    site = os.path.join(work, "site")
    os.makedirs(os.path.join(site, "replay"))
    # The service worker's scope is /replay/ (ReplayWeb.page's default replayBase): its
    # script lives there and, with ?serveIndex=1, serves the embedded app's page, which
    # loads ./ui.js from there too.
    for d in (site, os.path.join(site, "replay")):
        shutil.copy(os.path.join(a.rwp, "ui.js"), d)
    shutil.copy(os.path.join(a.rwp, "sw.js"), os.path.join(site, "replay", "sw.js"))
    with open(os.path.join(site, "blank.html"), "w") as f:
        f.write("<!doctype html><title>blank</title>\n")
    warcs, pages = {}, []
    for i, (warc, url) in enumerate(a.page):
        if warc not in warcs:
            warcs[warc] = "archive%d.warc.gz" % len(warcs)
            shutil.copy(warc, os.path.join(site, warcs[warc]))
        name = "page%d.html" % i
        with open(os.path.join(site, name), "w") as f:
            f.write('<!doctype html><html><head><meta charset="utf-8"><title>replay</title>'
                    '<script src="ui.js"></script></head><body style="margin:0;height:100vh">'
                    '<replay-web-page source="%s" url="%s" replaybase="/replay/"'
                    ' embed="replayonly" style="height:100vh"></replay-web-page></body></html>\n'
                    % (warcs[warc], html.escape(url, quote=True)))
        pages.append("/" + name)
    srv = Server(("127.0.0.1", 0), functools.partial(QuietHandler, directory=site))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    return srv, pages


def probe(b, sess, needle):
    """What the replay frame (the frame whose URL holds needle) shows, or None before it
    is there."""
    frame = find_frame(b.call("Page.getFrameTree", session=sess)["frameTree"], needle)
    if not frame:
        return None
    ctx = b.call("Page.createIsolatedWorld", {"frameId": frame["id"], "worldName": "probe"},
                 session=sess)
    r = b.call("Runtime.evaluate", {"expression": PROBE, "returnByValue": True,
                                    "contextId": ctx["executionContextId"]}, session=sess)
    if "exceptionDetails" in r:
        return None
    return json.loads(r["result"]["value"])


def network(events, sess, live):
    """The requests of one tab: URL, status, whether the service worker answered."""
    requests = {}
    for ev in events:
        if ev.get("sessionId") != sess:
            continue
        p = ev.get("params", {})
        if ev.get("method") == "Network.requestWillBeSent":
            r = requests.setdefault(p["requestId"], {})
            r["url"] = p["request"]["url"]
            r["sent"] = p["timestamp"]
        elif ev.get("method") == "Network.responseReceived":
            resp = p["response"]
            requests.setdefault(p["requestId"], {}).update(
                url=resp["url"], status=resp["status"],
                from_service_worker=bool(resp.get("fromServiceWorker")))
        elif ev.get("method") == "Network.loadingFailed":
            requests.setdefault(p["requestId"], {})["failed"] = p.get("errorText")
    reqs = sorted((r for r in requests.values() if not r.get("url", "").startswith("data:")),
                  key=lambda r: r.get("url", ""))
    return reqs, [r["url"] for r in reqs if live and r.get("url", "").startswith(live)]


# ReplayWeb.page's service worker, registered as <replay-web-page> registers it, and
# awaited until active. The element reloads its iframe (3 times, 100 ms apart) until the
# worker controls it; on a loaded machine the worker (1.2 MB of script) is not active by
# then and the iframe stays on the server's /replay/ listing. A browser that visited
# ReplayWeb.page before has it active, as here.
WARM_UP = r"""
(async () => {
  const reg = await navigator.serviceWorker.register('/replay/sw.js?serveIndex=1',
                                                     {scope: '/replay/'});
  const sw = reg.installing || reg.waiting || reg.active;
  if (sw.state !== 'activated')
    await new Promise((resolve, reject) => sw.addEventListener('statechange', () => {
      if (sw.state === 'activated') resolve();
      if (sw.state === 'redundant') reject(new Error('the service worker became redundant'));
    }));
  return sw.state;
})()
"""


def warm_up(b, origin, timeout):
    target = b.call("Target.createTarget", {"url": origin + "/blank.html"})["targetId"]
    sess = b.call("Target.attachToTarget", {"targetId": target, "flatten": True})["sessionId"]
    end = time.monotonic() + timeout
    while True:
        r = b.call("Runtime.evaluate", {"expression": "document.readyState + ' ' + location.href",
                                        "returnByValue": True}, session=sess)
        if r.get("result", {}).get("value") == "complete %s/blank.html" % origin:
            break
        if time.monotonic() > end:
            raise RuntimeError("%s/blank.html did not load in %d s" % (origin, timeout))
        time.sleep(0.1)
    r = b.call("Runtime.evaluate", {"expression": WARM_UP, "awaitPromise": True,
                                    "returnByValue": True}, session=sess, timeout=timeout)
    if "exceptionDetails" in r:
        raise RuntimeError("ReplayWeb.page's service worker did not start: %s"
                           % r["exceptionDetails"].get("exception", {}).get("description"))
    b.call("Target.closeTarget", {"targetId": target})


def replay(a, work):
    srv, pages = serve(a, work)
    origin = "http://127.0.0.1:%d" % srv.server_address[1]
    log = open(os.path.join(work, "chromium.log"), "w")
    t0 = time.monotonic()
    b = Browser(a.chromium, os.path.join(work, "profile"), log)
    results = []
    try:
        b.call("Target.setDiscoverTargets", {"discover": True})
        warm_up(b, origin, a.timeout)
        tabs = []
        # every page in its own tab, all loading at once
        for (warc, url), path in zip(a.page, pages):
            target = b.call("Target.createTarget", {"url": "about:blank"})["targetId"]
            sess = b.call("Target.attachToTarget", {"targetId": target,
                                                    "flatten": True})["sessionId"]
            b.call("Network.enable", session=sess)
            b.call("Page.enable", session=sess)
            b.call("Page.navigate", {"url": origin + path}, session=sess)
            tabs.append({"warc": warc, "url": url, "sess": sess, "state": None,
                         "done": False})
        end = time.monotonic() + a.timeout
        while not all(t["done"] for t in tabs):
            if time.monotonic() > end:
                late = [t for t in tabs if not t["done"]][0]
                tree = b.call("Page.getFrameTree", session=late["sess"])["frameTree"]
                if a.keep:
                    shot = b.call("Page.captureScreenshot", session=late["sess"])["data"]
                    with open(os.path.join(a.keep, "timeout.png"), "wb") as f:
                        f.write(base64.b64decode(shot))
                raise RuntimeError("the replay of %s did not load in %d s (last state: %s;"
                                   " frames: %s)" % (late["url"], a.timeout,
                                                     json.dumps(late["state"]),
                                                     " ".join(frame_urls(tree))))
            time.sleep(0.2)
            for t in tabs:
                if t["done"]:
                    continue
                state = probe(b, t["sess"], "mp_/" + t["url"])
                # loaded: the document and its subresources (the image has its answer);
                # read once more a moment later, for a script or style late from the archive
                if (t["state"] and t["state"]["ready"] == "complete" and state
                        and state["ready"] == "complete" and state["img_complete"] is not False):
                    t["done"] = True
                    t["seconds"] = round(time.monotonic() - t0, 2)
                t["state"] = state
        with b.lock:
            events = list(b.events)
    finally:
        b.close()
        log.close()
        srv.shutdown()
        srv.server_close()
    for t in tabs:
        r = {"warc": t["warc"], "url": t["url"], "replay_origin": origin,
             "seconds": t["seconds"]}
        r.update(t["state"])
        r["requests"], r["live_requests"] = network(events, t["sess"], a.live)
        results.append(r)
    return results


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--rwp", required=True, help="the unpacked replaywebpage package")
    ap.add_argument("--page", nargs=2, action="append", required=True,
                    metavar=("WARC", "URL"), help="replay URL from WARC (repeatable)")
    ap.add_argument("--live", help="the crawled site's origin: requests to it are listed")
    ap.add_argument("--timeout", type=float, default=60)
    ap.add_argument("--chromium", default="chromium")
    ap.add_argument("--keep", help="keep the served files, chromium's log and, on a time-out, a "
                    "screenshot (timeout.png) in this dir")
    a = ap.parse_args()
    for f in ("ui.js", "sw.js"):
        if not os.path.isfile(os.path.join(a.rwp, f)):
            print("rwp_replay: %s: no %s (not a replaywebpage package)" % (a.rwp, f),
                  file=sys.stderr)
            return 1
    work = a.keep or tempfile.mkdtemp(prefix="rwp_replay.")
    try:
        result = replay(a, work)
    except RuntimeError as e:
        print("rwp_replay: %s" % e, file=sys.stderr)
        try:
            with open(os.path.join(work, "chromium.log")) as f:
                tail = f.read()[-800:]
            if tail.strip():
                print("rwp_replay: chromium said: %s" % tail, file=sys.stderr)
        except OSError:
            pass
        return 1
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    json.dump(result, sys.stdout, indent=1)
    print()
    return 0


if __name__ == "__main__":
    sys.exit(main())
