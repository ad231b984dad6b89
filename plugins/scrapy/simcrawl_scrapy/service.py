"""The HTTP dedup service as a client sees it (SIMCRAWL_URL): `simcrawl serve`,
docs/HTTP-API.md (v1).

    POST {URL}/v1/check?id=<percent-encoded page URL>
    Content-Type: <the response's Content-Type>        body: the page's bytes
    Authorization: Bearer <SIMCRAWL_TOKEN>              (when a token is set)
    -> 200 {"id", "decision", "fingerprint", "duplicate_of", "distance", "added"}

One persistent HTTP/1.1 connection (http.client) per Service, reopened when the service
closed it. A check is idempotent by id on the service, so a request that failed on a
connection the service had already closed (keep-alive timeout) is sent once more on a
fresh one. Anything else that goes wrong (connection refused, timeout, a 4xx or 5xx, an
answer that is not the JSON above) raises ServiceError; the middleware then lets the page
through (fails open).

Only the standard library. Threads: one Service is used by one thread at a time.
"""
import http.client
import json
import socket
import urllib.parse

from .library import Verdict


class ServiceError(Exception):
    """The service could not be reached or did not answer a check."""


class Service:
    def __init__(self, url, token=None, timeout=10.0):
        parts = urllib.parse.urlsplit(url)
        if parts.scheme not in ("http", "https") or not parts.hostname:
            raise ValueError("SIMCRAWL_URL must be http://HOST:PORT or https://HOST:PORT, "
                             "not %r" % (url,))
        self.url = url
        self._https = parts.scheme == "https"
        self._host = parts.hostname
        self._port = parts.port
        self._prefix = parts.path.rstrip("/")  # a service behind a path: {URL}/v1/check
        self._token = token
        self._timeout = timeout
        self._conn = None

    def _connection(self):
        if self._conn is None:
            cls = http.client.HTTPSConnection if self._https else http.client.HTTPConnection
            self._conn = cls(self._host, self._port, timeout=self._timeout)
        return self._conn

    def close(self):
        if self._conn is not None:
            self._conn.close()
            self._conn = None

    def _request(self, method, path, body=None, headers=None):
        """(status, body bytes) of one request; one retry on a connection the service
        had closed while it was idle."""
        headers = dict(headers or {})
        if self._token:
            headers["Authorization"] = "Bearer " + self._token
        for attempt in (1, 2):
            reused = self._conn is not None
            conn = self._connection()
            try:
                conn.request(method, self._prefix + path, body=body, headers=headers)
                resp = conn.getresponse()
                data = resp.read()
                if resp.will_close:
                    self.close()
                return resp.status, data
            except (http.client.RemoteDisconnected, BrokenPipeError,
                    ConnectionResetError, ConnectionAbortedError) as e:
                self.close()
                if reused and attempt == 1:
                    continue  # the idle connection was gone: once more on a new one
                raise ServiceError("%s: %s" % (self.url, _reason(e)))
            except (OSError, http.client.HTTPException) as e:
                self.close()
                raise ServiceError("%s: %s" % (self.url, _reason(e)))
        raise AssertionError("unreachable")

    def check(self, page_id, body, content_type):
        """Checks one page (bytes) on the service; returns a Verdict or raises
        ServiceError."""
        if isinstance(content_type, bytes):
            content_type = content_type.decode("latin-1")
        path = "/v1/check?id=" + urllib.parse.quote(page_id, safe="")
        status, data = self._request("POST", path, body,
                                     {"Content-Type": content_type or "text/html"})
        if status != 200:
            raise ServiceError("%s: POST /v1/check: HTTP %d%s"
                               % (self.url, status, _error_detail(data)))
        try:
            answer = json.loads(data)
            decision = answer["decision"]
            if not isinstance(decision, str):
                raise TypeError("decision is not a string")
        except (ValueError, KeyError, TypeError) as e:
            raise ServiceError("%s: POST /v1/check: not a check answer (%s): %r"
                               % (self.url, e, data[:200]))
        distance = answer.get("distance")
        similarity = answer.get("similarity")
        return Verdict(decision, answer.get("fingerprint"), answer.get("duplicate_of"),
                       distance if isinstance(distance, int) else None,
                       similarity if isinstance(similarity, (int, float)) else None)

    def stats(self):
        """GET /v1/stats as a dict; raises ServiceError."""
        status, data = self._request("GET", "/v1/stats")
        if status != 200:
            raise ServiceError("%s: GET /v1/stats: HTTP %d%s" % (self.url, status,
                                                                 _error_detail(data)))
        try:
            answer = json.loads(data)
            if not isinstance(answer, dict):
                raise TypeError("not an object")
        except (ValueError, TypeError) as e:
            raise ServiceError("%s: GET /v1/stats: not a stats answer (%s)" % (self.url, e))
        return answer

    def health(self):
        """GET /healthz: (None, None) when it answers 200, else (the HTTP status or None
        when there was no answer, what went wrong)."""
        try:
            status, data = self._request("GET", "/healthz")
        except ServiceError as e:
            return None, str(e)
        if status != 200:
            return status, "%s: GET /healthz: HTTP %d%s" % (self.url, status,
                                                            _error_detail(data))
        return None, None


def _reason(e):
    if isinstance(e, socket.timeout):
        return "timed out"
    if isinstance(e, ConnectionRefusedError):
        return "connection refused"
    if isinstance(e, http.client.RemoteDisconnected):
        return "the service closed the connection without answering"
    return str(e) or e.__class__.__name__


def _error_detail(data):
    """': MESSAGE' from an {"error": MESSAGE} body, else ''."""
    try:
        msg = json.loads(data).get("error")
    except (ValueError, AttributeError):
        return ""
    return ": %s" % msg if isinstance(msg, str) else ""
