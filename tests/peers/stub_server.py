"""A tiny HTTP server in a thread, answering what a test puts in ``routes`` and recording requests.

``stub.routes[("GET", "/user")] = (200, {...})`` or a callable ``(request) -> (status, body)``; a body
that is a dict or list is sent as JSON. ``stub.requests`` lists every request as a :class:`Seen`.
"""

import json
import threading
from dataclasses import dataclass
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit


@dataclass
class Seen:
    method: str
    path: str
    query: dict
    headers: dict
    body: str

    @property
    def form(self):
        return {key: values[-1] for key, values in parse_qs(self.body).items()}


class LoopbackServer:
    """An HTTP server on a free loopback port, served by a daemon thread until ``close()``."""

    def serve(self, handler):
        self.server = ThreadingHTTPServer(("127.0.0.1", 0), handler)
        self.server.daemon_threads = True
        self.url = f"http://127.0.0.1:{self.server.server_address[1]}"
        self.thread = threading.Thread(target=self.server.serve_forever, daemon=True)
        self.thread.start()

    def close(self):
        self.server.shutdown()
        self.server.server_close()


class StubServer(LoopbackServer):
    def __init__(self):
        self.routes = {}
        self.requests = []
        stub = self

        class Handler(BaseHTTPRequestHandler):
            def _answer(self):
                parts = urlsplit(self.path)
                length = int(self.headers.get("Content-Length") or 0)
                body = self.rfile.read(length).decode() if length else ""
                seen = Seen(self.command, parts.path, {k: v[-1] for k, v in parse_qs(parts.query).items()},
                            {k.lower(): v for k, v in self.headers.items()}, body)
                stub.requests.append(seen)
                route = stub.routes.get((self.command, parts.path))
                status, payload = (404, {"error": "not_found"}) if route is None else (
                    route(seen) if callable(route) else route)
                data = json.dumps(payload).encode() if isinstance(payload, (dict, list)) else \
                    str(payload).encode()
                self.send_response(status)
                self.send_header("Content-Type", "application/json")
                self.send_header("Content-Length", str(len(data)))
                self.end_headers()
                self.wfile.write(data)

            do_GET = do_POST = _answer

            def log_message(self, *args):
                pass

        self.serve(Handler)

    def calls(self, path):
        return [seen for seen in self.requests if seen.path == path]

    def reset(self):
        self.routes.clear()
        self.requests.clear()
