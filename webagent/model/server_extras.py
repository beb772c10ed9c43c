"""What OpenAI-compatible servers offer beyond the OpenAI API: tokenizers and context sizes.

* llama-cpp-python's server: ``POST /extras/tokenize/count {"input": text} -> {"count": n}``.
* llama.cpp's own server: ``POST /tokenize {"content": text} -> {"tokens": [...]}``, and
  ``GET /props -> {"default_generation_settings": {"n_ctx": n}}``.

Neither takes several texts in one request, but both parse special tokens in the text they
tokenize, and a special token splits the text in two that are tokenized apart: the token list
of ``a + SEP + b`` is that of ``a``, SEP's id, that of ``b``. :func:`find_batch_counter` finds
such a separator and checks, on probe texts with spaces and newlines at their ends, that the
counts it gives are those of one request per text; only then are texts counted many at once.

Plain ``urllib`` is enough: these are small local JSON calls, not model calls.
"""

from __future__ import annotations

import http.client
import json
import urllib.error
import urllib.request
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlsplit, urlunsplit

from webagent.errors import ModelTimeoutError, TransientModelError

Counter = Callable[[str], int]
BatchCounter = Callable[[Sequence[str]], list[int]]
Tokenize = Callable[[str], bytes]

#: special tokens tried as the separator of a batch, in order
SEPARATORS = ("<|endoftext|>", "<|im_end|>", "</s>", "<|eot_id|>", "<|end|>", "<eos>")
#: texts whose batched counts must equal their own counts before batching is used
BATCH_PROBES = ("probe", " a b ", "\n\n", "<div id=n1>x</div>\n", "é ü 名 ", "  x")
#: characters of text sent in one batched request at most
BATCH_CHARS = 1_000_000
#: characters of one kind of text a step counts ahead (``tokens.prefetch``) at most: a share
#: of a batched request, as more would cost requests of their own
AHEAD_CHARS = BATCH_CHARS * 2 // 5


class NotOffered(Exception):
    """The server does not have this endpoint (or answered it with something unusable)."""


def server_root(base_url: str) -> str:
    """``http://host:port/v1`` -> ``http://host:port``: where the non-OpenAI endpoints live."""
    parts = urlsplit(base_url.rstrip("/"))
    path = parts.path[: -len("/v1")] if parts.path.endswith("/v1") else parts.path
    return urlunsplit((parts.scheme, parts.netloc, path, "", ""))


def http_json(url: str, payload: dict[str, Any] | None, api_key: str | None, timeout: float) -> Any:
    """GET (no payload) or POST JSON; a missing endpoint raises :class:`NotOffered`."""
    body = http_body(url, payload, api_key, timeout)
    try:
        return json.loads(body)
    except ValueError as exc:
        raise NotOffered(f"{url} did not answer JSON") from exc


def http_body(
    url: str, payload: dict[str, Any] | None, api_key: str | None, timeout: float
) -> bytes:
    """The body a GET (no payload) or JSON POST is answered with: every request to a
    server's extras goes through here."""
    headers = {"Content-Type": "application/json", "Accept": "application/json"}
    if api_key:
        headers["Authorization"] = f"Bearer {api_key}"
    data = json.dumps(payload).encode() if payload is not None else None
    request = urllib.request.Request(url, data=data, headers=headers)
    try:
        with urllib.request.urlopen(request, timeout=timeout) as response:
            body: bytes = response.read()
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
    return body


#: each server's tokenizer endpoints: (counts, key) and (token ids, key)
COUNT_ENDPOINTS = {
    "llama-cpp-python": ("/extras/tokenize/count", "input"),
    "llama.cpp": ("/tokenize", "content"),
}
IDS_ENDPOINTS = {
    "llama-cpp-python": ("/extras/tokenize", "input"),
    "llama.cpp": ("/tokenize", "content"),
}


def token_counter(root: str, api_key: str | None, timeout: float, method: str) -> Counter:
    """The counter of the server's tokenizer endpoint ``method`` (one request a text)."""
    path, key = COUNT_ENDPOINTS[method]

    def count(text: str) -> int:
        answer = http_json(f"{root}{path}", {key: text}, api_key, _scaled(timeout, text))
        if method == "llama-cpp-python":
            return _int_field(answer, "count")
        return len(_token_list(answer, root))

    return count


def token_ids(root: str, api_key: str | None, timeout: float, method: str, text: str) -> list[int]:
    """The token ids the server's tokenizer ``method`` gives ``text`` (one request)."""
    path, key = IDS_ENDPOINTS[method]
    tokens = _token_list(http_json(f"{root}{path}", {key: text}, api_key, timeout), root)
    if not all(isinstance(t, int) for t in tokens):
        raise NotOffered(f"{root}{path} answered something other than token ids")
    return [int(t) for t in tokens]


def find_token_counter(root: str, api_key: str | None, timeout: float) -> tuple[str, Counter]:
    """The first tokenizer endpoint the server answers, as ``(method name, counter)``."""
    for name in COUNT_ENDPOINTS:
        counter = token_counter(root, api_key, timeout, name)
        try:
            counter("probe")
        except NotOffered:
            continue
        return name, counter
    raise NotOffered(f"{root} offers no tokenizer endpoint")


def find_batch_counter(
    root: str, api_key: str | None, timeout: float, method: str, count: Counter
) -> Batched | None:
    """A counter of many texts per request that gives ``count``'s counts, or None."""
    if method not in IDS_ENDPOINTS:
        return None
    tokenize = tokenizer(root, api_key, timeout, method)

    def tokens(text: str) -> list[Any]:
        try:
            return _token_list(json.loads(tokenize(text)), root)
        except ValueError as exc:
            raise NotOffered(f"{root} did not answer JSON") from exc

    try:
        bos = len(tokens(""))
        for separator in SEPARATORS:
            alone = tokens(separator)
            if len(alone) != bos + 1 or _has_border(separator) or not isinstance(alone[-1], int):
                continue
            batch = Batched(tokenize, separator, alone[-1], bos, count)
            if batch(BATCH_PROBES) == [count(t) for t in BATCH_PROBES]:
                return batch
    except NotOffered:
        pass
    return None


def tokenizer(root: str, api_key: str | None, timeout: float, method: str) -> Tokenize:
    """Posts a text to the server's token-ids endpoint ``method``; the answer's bytes."""
    path, key = IDS_ENDPOINTS[method]

    def tokenize(text: str) -> bytes:
        return http_body(f"{root}{path}", {key: text}, api_key, _scaled(timeout, text))

    return tokenize


@dataclass(frozen=True)
class BatchSpec:
    """How one request counts many texts: the separator, its token id, the BOS count."""

    separator: str
    separator_id: int
    bos: int


class Batched:
    """Counts texts joined by a special-token separator, split again on its id."""

    def __init__(
        self, tokenize: Tokenize, separator: str, sep_id: int, bos: int, count: Counter
    ) -> None:
        self._tokenize, self._separator, self._sep_id = tokenize, separator, sep_id
        self._bos, self._count = bos, count

    @property
    def spec(self) -> BatchSpec:
        return BatchSpec(self._separator, self._sep_id, self._bos)

    def __call__(self, texts: Sequence[str]) -> list[int]:
        counts: dict[int, int] = {}
        chunk: list[int] = []
        size = 0
        for i, text in enumerate(texts):
            if self._separator in text:  # it would split in two: on its own
                counts[i] = self._count(text)
                continue
            if chunk and size + len(text) > BATCH_CHARS:
                counts |= self._counted(texts, chunk)
                chunk, size = [], 0
            chunk.append(i)
            size += len(text) + len(self._separator)
        if chunk:
            counts |= self._counted(texts, chunk)
        return [counts[i] for i in range(len(texts))]

    def _counted(self, texts: Sequence[str], indices: list[int]) -> dict[int, int]:
        joined = self._separator.join(texts[i] for i in indices)
        spans = token_spans(self._tokenize(joined), self._sep_id)
        if len(spans) != len(indices):
            raise NotOffered("a batch split into the wrong number of texts")
        spans[0] -= self._bos  # each text's own count has the BOS once: the join has it first
        return {i: n + self._bos for i, n in zip(indices, spans, strict=True)}


def token_spans(body: bytes, separator: int) -> list[int]:
    """The lengths of the runs of tokens between ``separator`` ids in a ``{"tokens": [...]}``
    answer, read off its bytes (commas counted in C: a long text's ids are never decoded)."""
    start, end = body.find(b"["), body.rfind(b"]")
    inner = body[start + 1 : end].translate(None, b" \n\r\t")
    if start < 0 or b'"tokens"' not in body[:start] or inner.translate(None, b"0123456789,-"):
        raise NotOffered("a tokenize answer that is not a plain list of token ids")
    if not inner:
        return [0]
    ids = b"," + inner + b","
    mark = b"," + str(separator).encode() + b","
    spans, after = [], 0
    while (at := ids.find(mark, after)) >= 0:
        spans.append(ids.count(b",", after, at + 1) - 1)
        after = at + len(mark) - 1
    spans.append(ids.count(b",", after) - 1)
    return spans


def _scaled(timeout: float, text: str) -> float:
    """A batch's timeout: the probe timeout, and a second more per 100,000 characters."""
    return timeout + len(text) / 100_000


def _has_border(separator: str) -> bool:
    """Whether a proper prefix of ``separator`` is also its suffix (a text ending in it could
    then run into the separator)."""
    return any(separator.endswith(separator[:k]) for k in range(1, len(separator)))


def _token_list(answer: Any, root: str) -> list[Any]:
    tokens = answer.get("tokens") if isinstance(answer, dict) else None
    if not isinstance(tokens, list):
        raise NotOffered(f"{root} answered no token list")
    return tokens


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
