"""A fake of the OpenAI Files and Batches endpoints on 127.0.0.1, for ``--batch-submit``.

``POST /v1/files`` (multipart, ``purpose=batch``) keeps the file; ``POST /v1/batches`` makes a
batch of it; ``GET /v1/batches/{id}`` reports it, ``validating`` then ``in_progress`` for
``polls`` retrieves, then ``completed`` with an output file whose lines answer each request
with ``answer(body)`` (a request whose ``custom_id`` is in ``fail`` gets an error line);
``GET /v1/files/{id}/content`` returns a file's bytes.
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable
from email.parser import BytesParser
from email.policy import HTTP
from http.server import BaseHTTPRequestHandler
from typing import Any

from .loopback import LoopbackServer
from .openai_server import completion_body


class FakeBatchAPI(LoopbackServer):
    def __init__(
        self,
        answer: Callable[[dict[str, Any]], str],
        *,
        polls: int = 2,
        fail: Iterable[str] = (),
        end_status: str = "completed",
    ) -> None:
        self.answer = answer
        self.polls = polls
        self.fail = set(fail)
        self.end_status = end_status
        self.files: dict[str, bytes] = {}
        self.batches: dict[str, dict[str, Any]] = {}
        self.created = 0  # batches created
        self._lock = threading.Lock()
        super().__init__(_handler_for(self))

    def add_file(self, content: bytes) -> str:
        with self._lock:
            file_id = f"file-{len(self.files) + 1}"
            self.files[file_id] = content
        return file_id

    def create_batch(self, body: dict[str, Any]) -> dict[str, Any]:
        with self._lock:
            self.created += 1
            batch_id = f"batch-{self.created}"
            lines = self.files[body["input_file_id"]].decode().splitlines()
            self.batches[batch_id] = {
                "id": batch_id,
                "object": "batch",
                "endpoint": body["endpoint"],
                "input_file_id": body["input_file_id"],
                "completion_window": body["completion_window"],
                "status": "validating",
                "created_at": 0,
                "request_counts": {"total": len(lines), "completed": 0, "failed": 0},
                "_polls": 0,
            }
        return self.public(batch_id)

    def public(self, batch_id: str) -> dict[str, Any]:
        return {k: v for k, v in self.batches[batch_id].items() if not k.startswith("_")}

    def retrieve(self, batch_id: str) -> dict[str, Any]:
        batch = self.batches[batch_id]
        if batch["status"] in ("validating", "in_progress"):
            batch["_polls"] += 1
            if batch["_polls"] > self.polls:
                self._finish(batch)
            else:
                batch["status"] = "in_progress"
        return self.public(batch_id)

    def _finish(self, batch: dict[str, Any]) -> None:
        batch["status"] = self.end_status
        if self.end_status != "completed":
            return
        out, errors = [], []
        for number, line in enumerate(self.files[batch["input_file_id"]].decode().splitlines()):
            request = json.loads(line)
            key = request["custom_id"]
            if key in self.fail:
                error = {"code": "server_error", "message": "scripted failure"}
                errors.append(
                    {"id": f"r{number}", "custom_id": key, "response": None, "error": error}
                )
                continue
            body = completion_body(self.answer(request["body"]), request["body"]["model"], (0, 0))
            response = {"status_code": 200, "request_id": f"q{number}", "body": body}
            out.append({"id": f"r{number}", "custom_id": key, "response": response, "error": None})
        batch["output_file_id"] = self.add_file(_jsonl(out))
        batch["error_file_id"] = self.add_file(_jsonl(errors)) if errors else None
        batch["request_counts"] = {
            "total": len(out) + len(errors),
            "completed": len(out),
            "failed": len(errors),
        }


def _jsonl(entries: list[dict[str, Any]]) -> bytes:
    return "".join(json.dumps(e) + "\n" for e in entries).encode()


def _multipart_file(content_type: str, data: bytes) -> bytes:
    message = BytesParser(policy=HTTP).parsebytes(
        f"Content-Type: {content_type}\r\n\r\n".encode() + data
    )
    for part in message.iter_parts():
        if part.get_param("name", header="content-disposition") == "file":
            payload = part.get_payload(decode=True)
            return payload if isinstance(payload, bytes) else b""
    raise ValueError("no file part in the upload")


def _handler_for(fake: FakeBatchAPI) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet."""

        def _send(self, status: int, payload: Any, raw: bytes | None = None) -> None:
            body = raw if raw is not None else json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            self.end_headers()
            self.wfile.write(body)

        def _read(self) -> bytes:
            return self.rfile.read(int(self.headers.get("Content-Length") or 0))

        def do_POST(self) -> None:
            data = self._read()
            if self.path == "/v1/files":
                content = _multipart_file(self.headers["Content-Type"], data)
                file_id = fake.add_file(content)
                self._send(
                    200,
                    {"id": file_id, "object": "file", "bytes": len(content), "created_at": 0,
                     "filename": "round.jsonl", "purpose": "batch", "status": "processed"},
                )  # fmt: skip
            elif self.path == "/v1/batches":
                self._send(200, fake.create_batch(json.loads(data)))
            else:
                self._send(404, {"error": {"message": f"no {self.path}"}})

        def do_GET(self) -> None:
            parts = self.path.strip("/").split("/")
            if parts[:2] == ["v1", "batches"] and len(parts) == 3:
                self._send(200, fake.retrieve(parts[2]))
            elif parts[:2] == ["v1", "files"] and len(parts) == 4 and parts[3] == "content":
                self._send(200, None, raw=fake.files[parts[2]])
            else:
                self._send(404, {"error": {"message": f"no {self.path}"}})

    return Handler
