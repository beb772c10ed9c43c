"""A fake OpenAI-compatible server on 127.0.0.1 whose answers follow a script of faults.

Each chat request takes the next behaviour from ``script`` (then ``default``):

``ok``         a valid chat completion whose content is ``reply``
``500``        HTTP 500 with an OpenAI-style error body
``429``        HTTP 429 (rate limited), with ``Retry-After: retry_after`` when that is set
``503``        HTTP 503 (overloaded), with ``Retry-After`` likewise
``400``        HTTP 400 (a bad request)
``401``        HTTP 401 (bad API key)
``context``    HTTP 400 saying the prompt exceeds the context length
``hang``       accepts the request and never answers (until the server stops)
``garbage``    HTTP 200 with a body that is not JSON
``truncated``  HTTP 200 announcing more bytes than it sends, then closes the connection
``no_choices`` HTTP 200, valid JSON without choices

A response after which the server closes the connection (``garbage``, ``truncated``, ``hang``)
says ``Connection: close``, so that the client never reuses a socket the server has dropped
(reusing one raced with the close: "Server disconnected without sending a response").

``answer`` (a function of the request body) replaces the fixed ``reply``; ``down`` is an
event that, while set, makes every chat request answer ``500`` (an outage a test switches on
and off); ``delay_s`` holds each chat request that long; ``peak_in_flight`` is the most chat
requests the server was handling at once.

``cached_tokens`` is what every answer reports as served from the endpoint's prompt cache,
in ``usage.prompt_tokens_details.cached_tokens`` (OpenAI's field), or in ``timings.cache_n``
with ``cache_field="timings"`` (llama.cpp server's older field); None: not reported.

``reject_json_schema`` makes it answer 500 to ``response_format.type == "json_schema"`` (as
llama-cpp-python's server does). ``tokenizer`` picks which tokenize endpoints exist (one token
a word; llama-cpp-python's ``/extras/tokenize`` also parses ``SPECIAL`` as a token of its own);
``tokenizer_cut`` is an event that, while set, makes it answer ``truncated`` (a server dying
mid-answer).
"""

from __future__ import annotations

import json
import threading
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from http.server import BaseHTTPRequestHandler
from typing import Any, Literal

from .loopback import LoopbackServer

Tokenizer = Literal["llama-cpp-python", "llama.cpp"] | None
HANG_LIMIT_S = 60.0


class FakeOpenAIServer(LoopbackServer):
    def __init__(
        self,
        script: Iterable[str] = (),
        *,
        default: str = "ok",
        reply: str = "fake answer",
        reject_json_schema: bool = False,
        tokenizer: Tokenizer = None,
        n_ctx: int | None = None,
        answer: Callable[[dict[str, Any]], str] | None = None,
        delay_s: float = 0.0,
        retry_after: str | None = None,
        cached_tokens: int | None = None,
        cache_field: Literal["usage", "timings"] = "usage",
    ) -> None:
        self.script = list(script)
        self.cached_tokens = cached_tokens
        self.cache_field = cache_field
        self.answer = answer
        self.delay_s = delay_s
        self.retry_after = retry_after
        self.down = threading.Event()
        self.tokenizer_cut = threading.Event()
        self.in_flight = 0
        self.peak_in_flight = 0
        self.default = default
        self.reply = reply
        self.reject_json_schema = reject_json_schema
        self.tokenizer = tokenizer
        self.n_ctx = n_ctx
        self.chat_requests: list[dict[str, Any]] = []
        self.chat_clients: list[tuple[str, int]] = []  # (host, port) each request came from
        self.paths: list[str] = []
        self._lock = threading.Lock()
        super().__init__(_handler_for(self))

    def next_behaviour(self, body: dict[str, Any]) -> str:
        with self._lock:
            self.chat_requests.append(body)
            behaviour = self.script.pop(0) if self.script else self.default
        if self.down.is_set():
            return "500"
        response_format = body.get("response_format") or {}
        if self.reject_json_schema and response_format.get("type") == "json_schema":
            return "500"
        return behaviour

    def reply_to(self, body: dict[str, Any]) -> str:
        return self.answer(body) if self.answer is not None else self.reply

    @contextmanager
    def handling(self) -> Iterator[None]:
        """Count one chat request in flight while it is handled."""
        with self._lock:
            self.in_flight += 1
            self.peak_in_flight = max(self.peak_in_flight, self.in_flight)
        try:
            yield
        finally:
            with self._lock:
                self.in_flight -= 1


def completion_body(
    reply: str,
    model: str,
    usage: tuple[int, int] = (11, 3),
    cached: int | None = None,
    cache_field: str = "usage",
) -> dict[str, Any]:
    """A chat completion answering ``reply`` (``usage``: prompt and completion tokens;
    ``cached``: prompt tokens it says its cache served, in ``cache_field``)."""
    body = _completion(reply, model, usage)
    if cached is not None and cache_field == "usage":
        body["usage"]["prompt_tokens_details"] = {"cached_tokens": cached}
    elif cached is not None:
        body["timings"] = {"cache_n": cached, "prompt_n": usage[0] - cached}
    return body


def _completion(reply: str, model: str, usage: tuple[int, int]) -> dict[str, Any]:
    return {
        "id": "chatcmpl-fake",
        "object": "chat.completion",
        "created": 0,
        "model": model,
        "choices": [
            {
                "index": 0,
                "message": {"role": "assistant", "content": reply},
                "finish_reason": "stop",
            }
        ],
        "usage": {
            "prompt_tokens": usage[0],
            "completion_tokens": usage[1],
            "total_tokens": sum(usage),
        },
    }


def _error(status: int, message: str) -> dict[str, Any]:
    return {"error": {"message": message, "type": "fake_error", "code": status}}


def _handler_for(fake: FakeOpenAIServer) -> type[BaseHTTPRequestHandler]:
    class Handler(BaseHTTPRequestHandler):
        protocol_version = "HTTP/1.1"

        def log_message(self, format: str, *args: Any) -> None:
            """Quiet: tests read ``fake.paths`` instead."""

        def _send(self, status: int, payload: Any) -> None:
            body = json.dumps(payload).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(body)))
            if status in (429, 503) and fake.retry_after is not None:
                self.send_header("Retry-After", fake.retry_after)
            self.end_headers()
            self.wfile.write(body)

        def _body(self) -> dict[str, Any]:
            length = int(self.headers.get("Content-Length") or 0)
            data = json.loads(self.rfile.read(length) or b"{}")
            return data if isinstance(data, dict) else {}

        def do_GET(self) -> None:
            fake.paths.append(self.path)
            if self.path == "/props" and fake.n_ctx is not None:
                self._send(200, {"default_generation_settings": {"n_ctx": fake.n_ctx}})
            elif self.path == "/v1/models":
                self._send(200, {"object": "list", "data": [{"id": "fake", "object": "model"}]})
            else:
                self._send(404, _error(404, f"no {self.path}"))

        def do_POST(self) -> None:
            fake.paths.append(self.path)
            body = self._body()
            if self.path == "/v1/chat/completions":
                fake.chat_clients.append(self.client_address)
                with fake.handling():
                    if fake.delay_s:
                        fake.stopping.wait(fake.delay_s)
                    self._chat(fake.next_behaviour(body), body)
            elif fake.tokenizer is not None and fake.tokenizer_cut.is_set():
                self._raw(b'{"count": 1', announced=400)
            elif self.path == "/extras/tokenize/count" and fake.tokenizer == "llama-cpp-python":
                self._send(200, {"count": len(str(body.get("input", "")).split())})
            elif self.path == "/extras/tokenize" and fake.tokenizer == "llama-cpp-python":
                self._send(200, {"tokens": _word_tokens(str(body.get("input", "")))})
            elif self.path == "/tokenize" and fake.tokenizer == "llama.cpp":
                self._send(200, {"tokens": list(range(len(str(body.get("content")).split())))})
            else:
                self._send(404, _error(404, f"no {self.path}"))

        def _chat(self, behaviour: str, body: dict[str, Any]) -> None:
            model = str(body.get("model"))
            if behaviour == "ok":
                reply = fake.reply_to(body)
                self._send(
                    200,
                    completion_body(reply, model, (11, 3), fake.cached_tokens, fake.cache_field),
                )
            elif behaviour in ("500", "503", "429", "400", "401"):
                self._send(int(behaviour), _error(int(behaviour), f"scripted {behaviour}"))
            elif behaviour == "context":
                self._send(400, _error(400, "This model's maximum context length is 8 tokens"))
            elif behaviour == "hang":
                fake.stopping.wait(HANG_LIMIT_S)
                self.close_connection = True  # nothing was sent: the client timed out
            elif behaviour == "garbage":
                self._raw(b"<html>502 Bad Gateway</html>", announced=None)
            elif behaviour == "truncated":
                self._raw(
                    json.dumps(completion_body(fake.reply, model)).encode()[:40], announced=400
                )
            elif behaviour == "no_choices":
                self._send(200, {"id": "x", "object": "chat.completion", "choices": []})
            else:
                raise ValueError(f"unknown fake behaviour {behaviour!r}")

        def _raw(self, body: bytes, announced: int | None) -> None:
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(announced or len(body)))
            self.send_header("Connection", "close")  # announced, so no client reuses it
            self.end_headers()
            self.wfile.write(body)
            self.wfile.flush()
            self.close_connection = True

    return Handler


#: the one special token the fake tokenizer knows (id 0), parsed in the text as servers do
SPECIAL = "<|endoftext|>"


def _word_tokens(text: str) -> list[int]:
    """One token per word (ids from 1), the special token as id 0 wherever it occurs."""
    tokens: list[int] = []
    for n, piece in enumerate(text.split(SPECIAL)):
        if n:
            tokens.append(0)
        tokens += [len(word) for word in piece.split()]
    return tokens


def closed_port_url() -> str:
    """A base URL on 127.0.0.1 where nothing listens: connecting is refused."""
    import socket

    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        port = sock.getsockname()[1]
    return f"http://127.0.0.1:{port}/v1"
