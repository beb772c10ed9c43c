"""A threaded HTTP server for the authored test pages, started by fixtures.

``{{OFFSITE}}`` in a page becomes the origin of a second server that stands for a site the
runner must never reach; it records every request it gets, so a test can prove none came.
"""

from __future__ import annotations

import contextlib
import html
import socket
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

PAGES = Path(__file__).resolve().parent.parent / "data" / "live_pages"
HANG_LIMIT_S = 30.0


def _closed_origin() -> str:
    """An origin on 127.0.0.1 where nothing listens (a port just bound and released)."""
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}"


class PageServer(ThreadingHTTPServer):
    daemon_threads = True

    def __init__(self, host: str) -> None:
        super().__init__((host, 0), _Handler)
        self.hits: list[str] = []
        self.posts: list[dict[str, str]] = []
        self.offsite = ""
        self.dead = _closed_origin()
        self.hang_released = threading.Event()
        self._thread = threading.Thread(target=self.serve_forever, daemon=True)

    @property
    def origin(self) -> str:
        host, port = self.server_address[:2]
        return f"http://{host}:{port}"

    def start(self) -> PageServer:
        self._thread.start()
        return self

    def stop(self) -> None:
        self.hang_released.set()
        self.shutdown()
        self.server_close()


class _Handler(BaseHTTPRequestHandler):
    server: PageServer

    def log_message(self, format: str, *args: object) -> None:
        return

    def do_GET(self) -> None:
        self.server.hits.append(f"GET {self.path}")
        parts = urlsplit(self.path)
        if parts.path == "/hang":  # a resource that never arrives (bounded, for the test)
            self.server.hang_released.wait(HANG_LIMIT_S)
            with contextlib.suppress(OSError):  # the browser has usually gone by then
                self._send(200, b"")
            return
        if parts.path == "/redirect":
            target = parse_qs(parts.query).get("to", ["/"])[0]
            self._send(302, b"", location=target)
            return
        page = PAGES / parts.path.lstrip("/")
        if not page.is_file() or page.suffix != ".html" or page.parent != PAGES:
            self._send(404, b"<h1>Not found</h1>")
            return
        text = page.read_text(encoding="utf-8").replace("{{OFFSITE}}", self.server.offsite)
        text = text.replace("{{DEAD}}", self.server.dead)
        self._send(200, text.replace("{{FIELDS}}", "").encode())

    def do_POST(self) -> None:
        self.server.hits.append(f"POST {self.path}")
        length = int(self.headers.get("Content-Length", "0"))
        fields = parse_qs(self.rfile.read(length).decode("utf-8"))
        self.server.posts.append({k: v[0] for k, v in fields.items()})
        shown = "; ".join(f"{k}={v[0]}" for k, v in sorted(fields.items()))
        text = (PAGES / "result.html").read_text(encoding="utf-8")
        self._send(200, text.replace("{{FIELDS}}", html.escape(shown)).encode())

    def _send(self, status: int, body: bytes, location: str | None = None) -> None:
        self.send_response(status)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        if location:
            self.send_header("Location", location)
        self.end_headers()
        self.wfile.write(body)
