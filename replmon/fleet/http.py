"""The pages ``replmon serve`` answers: /metrics, /healthz, /findings.json.

A WSGI app on prometheus_client's threading WSGI server (a thread per request, off
the event loop that samples), so a slow scraper never delays a tick. Optional HTTP
basic auth (compared in constant time) and TLS (the standard library's ssl). Nothing
here can show a monitored server's password: the pages are made from ticks and
findings, which never hold one.
"""

from __future__ import annotations

import base64
import hmac
import json
import os
import socket
import ssl
import threading
import time
from collections.abc import Callable, Iterable, Sequence
from typing import Any
from wsgiref.simple_server import WSGIServer, make_server

from prometheus_client import CONTENT_TYPE_LATEST
from prometheus_client.exposition import ThreadingWSGIServer, _SilentHandler

from replmon.errors import ConfigError
from replmon.fleet.config import BasicAuth, Tls, parse_listen
from replmon.fleet.metrics import exposition
from replmon.fleet.state import SCRAPES, PairState
from replmon.model.findings import recently_closed
from replmon.output.incidents import finding_json, incident_dict
from replmon.units import tick_stamp
from replmon.wording import plural

StartResponse = Callable[[str, list[tuple[str, str]]], Any]
STALE_INTERVALS = 3
"""/healthz fails for a pair without a tick for this many intervals (plus 10 s)."""


def findings_doc(states: Sequence[PairState]) -> dict[str, Any]:
    """/findings.json: every pair's open findings with numbers, cause and next step, and
    under ``closed`` those that closed recently (in the RECENT_S before the pair's last
    tick, the newest RECENT_MAX: model.findings.recently_closed), each with its worst
    severity, its story and when it closed (``closed_wall``, ``closed_time``), so one
    who arrives after the heal sees what happened, as on the screen."""
    pairs: dict[str, Any] = {}
    for s in states:
        t = s.tick
        pairs[s.pair] = {
            "interval_s": s.interval,
            "last_tick": None if t is None else t.wall,
            "nodes": {} if t is None else {n.role: n.name for n in t.nodes},
            "findings": [finding_json(f) | {
                **dict(zip(("incident", "incident_role"), s.incident_of(f), strict=True))}
                for f in s.findings],
            "incidents": [incident_dict(i) for i in s.incidents.open],
            "closed": [] if t is None else [
                finding_json(f) | {"closed_time": tick_stamp(f.closed_wall)}
                for f in recently_closed(list(s.closed), t.wall, list(s.findings))],
        }
    return {"generated": time.time(), "pairs": pairs}


def health(states: Sequence[PairState], started: float) -> tuple[bool, dict[str, Any]]:
    """(healthy, body): every pair ticked within STALE_INTERVALS intervals (+10 s)."""
    stale = {}
    for s in states:
        limit = STALE_INTERVALS * s.interval + 10
        age = s.age_s()
        if (age is None and time.monotonic() - started > limit) or (age or 0) > limit:
            stale[s.pair] = None if age is None else round(age, 1)
    return not stale, {"ok": not stale, "pairs": len(states), "stale": stale}


class App:
    """The WSGI application."""

    def __init__(self, states: Sequence[PairState], auth: BasicAuth | None = None) -> None:
        self.states = list(states)
        self.started = time.monotonic()
        self._lock = threading.Lock()
        self._auth: bytes | None = None
        if auth is not None:
            pw = auth.password.get_secret_value() if auth.password else os.environ.get(
                auth.password_env or "", "")
            if not pw:
                raise ConfigError("basic_auth: no password (password or password_env)")
            self._auth = base64.b64encode(f"{auth.username}:{pw}".encode())

    def _page(self) -> bytes:
        """/metrics, written by one scrape at a time: scrapes that overlap (Prometheus
        and a second scraper, or scrapes piling up behind a pause) wait for each other
        instead of each writing its page at once (at 200 pairs a page is 5.4 MB, about
        twice that while it is joined; the interpreter runs one of them at a time anyway).
        Each is noted in ``SCRAPES``: a pair's tick formats its text only when a scrape
        is due before its next tick (fleet/state.py)."""
        with self._lock:
            SCRAPES.seen()
            return exposition(self.states)

    def __call__(self, environ: dict[str, Any], start: StartResponse) -> Iterable[bytes]:
        if self._auth is not None:
            got = environ.get("HTTP_AUTHORIZATION", "").encode()
            if not hmac.compare_digest(got, b"Basic " + self._auth):
                start("401 Unauthorized", [("WWW-Authenticate", 'Basic realm="replmon"'),
                                           ("Content-Type", "text/plain")])
                return [b"authentication required\n"]
        path = environ.get("PATH_INFO", "/")
        if path == "/metrics":
            return self._send(start, "200 OK", CONTENT_TYPE_LATEST, self._page())
        if path == "/findings.json":
            body = json.dumps(findings_doc(self.states), indent=1).encode()
            return self._send(start, "200 OK", "application/json", body)
        if path == "/healthz":
            ok, doc = health(self.states, self.started)
            return self._send(start, "200 OK" if ok else "503 Service Unavailable",
                              "application/json", json.dumps(doc).encode())
        if path == "/":
            body = ("replmon serve: /metrics (Prometheus), /findings.json (open findings "
                    f"with their text), /healthz; {plural(len(self.states), 'pair')}\n").encode()
            return self._send(start, "200 OK", "text/plain; charset=utf-8", body)
        return self._send(start, "404 Not Found", "text/plain", b"not found\n")

    @staticmethod
    def _send(start: StartResponse, status: str, ctype: str, body: bytes) -> list[bytes]:
        start(status, [("Content-Type", ctype), ("Content-Length", str(len(body)))])
        return [body]


class Server:
    """The app on ``listen`` in a daemon thread; ``close()`` stops it."""

    def __init__(self, app: App, listen: str, tls: Tls | None = None) -> None:
        host, port = parse_listen(listen)

        class _Server(ThreadingWSGIServer):
            address_family = socket.AF_INET6 if ":" in host else socket.AF_INET

        try:
            self.httpd: WSGIServer = make_server(host, port, app, _Server,
                                                 handler_class=_SilentHandler)
        except OSError as e:
            raise ConfigError(f"cannot listen on {listen}: {e.strerror or e}") from None
        if tls is not None:
            ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            try:
                ctx.load_cert_chain(tls.certfile, tls.keyfile)
            except (OSError, ssl.SSLError) as e:
                self.httpd.server_close()
                raise ConfigError(f"tls: cannot load {tls.certfile}/{tls.keyfile}: {e}") \
                    from None
            self.httpd.socket = ctx.wrap_socket(self.httpd.socket, server_side=True)
        self.port = self.httpd.server_address[1]
        self._thread = threading.Thread(target=self.httpd.serve_forever, name="replmon-http",
                                        daemon=True)
        self._thread.start()

    def close(self) -> None:
        self.httpd.shutdown()
        self.httpd.server_close()
