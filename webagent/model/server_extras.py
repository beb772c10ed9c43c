"""What OpenAI-compatible servers offer beyond the OpenAI API: tokenizers and context sizes.

* llama-cpp-python's server: ``POST /extras/tokenize/count {"input": text} -> {"count": n}``.
* llama.cpp's own server: ``POST /tokenize {"content": text} -> {"tokens": [...]}``, and
  ``GET /props -> {"default_generation_settings": {"n_ctx": n}}``.

Plain ``urllib`` is enough: these are small local JSON calls, not model calls.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Callable
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from webagent.errors import ModelTimeoutError, TransientModelError

Counter = Callable[[str], int]


class NotOffered(Exception):
    """The server does not have this endpoint (or answered it with something unusable)."""


def server_root(base_url: str) -> str:
    """``http://host:port/v1`` -> ``http://host:port``: where the non-OpenAI endpoints live."""
    parts = urlsplit(base_url.rstrip("/"))
    path = parts.path[: -len("/v1")] if parts.path.endswith("/v1") else parts.path
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def http_json(url: str, payload: dict[str, Any] | None, api_key: str | None, timeout: float) -> Any:
    """GET (no payload) or POST JSON; a missing endpoint raises :class:`NotOffered`."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body = response.read()
    except urllib.error.HTTPError as exc:
        if exc.code >= 500 and exc.code not in (501,):
            raise TransientModelError(f"{url} answered HTTP {exc.code}") from exc
        raise NotOffered(f"{url}: HTTP {exc.code}") from exc
    except TimeoutError as exc:
        raise ModelTimeoutError(f"{url} did not answer within {timeout:.0f} s") from exc
    except urllib.error.URLError as exc:
        raise TransientModelError(f"cannot reach {url}: {exc.reason}") from exc
    except (http.client.HTTPException, ConnectionError) as exc:
        # the server went away mid-answer (a body cut short, a reset): as a refused connection
        raise TransientModelError(f"{url} broke off its answer: {exc!r}") from exc
    try:
        return json.loads(body)
    except ValueError as exc:
        raise NotOffered(f"{url} did not answer JSON") from exc


def find_token_counter(root: str, api_key: str | None, timeout: float) -> tuple[str, Counter]:
    """The first tokenizer endpoint the server answers, as ``(method name, counter)``."""

    def llama_cpp_python(text: str) -> int:
        answer = http_json(f"{root}/extras/tokenize/count", {"input": text}, api_key, timeout)
        return _int_field(answer, "count")

    def llama_cpp(text: str) -> int:
        answer = http_json(f"{root}/tokenize", {"content": text}, api_key, timeout)
        tokens = answer.get("tokens") if isinstance(answer, dict) else None
        if not isinstance(tokens, list):
            raise NotOffered(f"{root}/tokenize answered no token list")
        return len(tokens)

    for name, counter in (("llama-cpp-python", llama_cpp_python), ("llama.cpp", llama_cpp)):
        try:
            counter("probe")
        except NotOffered:
            continue
        return name, counter
    raise NotOffered(f"{root} offers no tokenizer endpoint")


def find_context_window(root: str, base_url: str, api_key: str | None, timeout: float) -> int:
    """The context size the server runs with, from ``/props`` or ``/v1/models`` metadata."""
    try:
        props = http_json(f"{root}/props", None, api_key, timeout)
        return _int_field(props.get("default_generation_settings", {}), "n_ctx")
    except (NotOffered, AttributeError):
        pass
    models = http_json(f"{base_url.rstrip('/')}/models", None, api_key, timeout)
    data = models.get("data") if isinstance(models, dict) else None
    for entry in data or []:
        meta = entry.get("meta") if isinstance(entry, dict) else None
        for key in ("n_ctx", "context_length", "max_model_len"):
            if isinstance(meta, dict) and isinstance(meta.get(key), int):
                return int(meta[key])
            if isinstance(entry, dict) and isinstance(entry.get(key), int):
                return int(entry[key])
    raise NotOffered(f"{base_url} reports no context size")


def _int_field(answer: Any, key: str) -> int:
    value = answer.get(key) if isinstance(answer, dict) else None
    if not isinstance(value, int):
        raise NotOffered(f"answer has no integer {key!r}")
    return value
