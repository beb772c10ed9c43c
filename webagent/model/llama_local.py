"""The embedded model: a GGUF file run in-process by llama-cpp-python (default: SmolLM2-135M).

Weights load on the first call, not at construction. One generation runs at a time (a lock).
Structured output uses llama.cpp's JSON-schema grammar, so the answer is always well-formed
JSON; the grammar also bounds free strings and arrays (``within_tokens``) so that an answer
cannot outgrow ``max_tokens`` and be cut (gist batches aside: a cut one is still read). A
running generation cannot be interrupted; its time is bounded by ``max_tokens`` and the context
size, and ``timeout_s`` bounds the wait for the model to be free.
"""

from __future__ import annotations

import os
import threading
import time
from typing import TYPE_CHECKING, Any

from webagent.errors import (
    ConfigError,
    FatalModelError,
    MissingDependencyError,
    ModelTimeoutError,
)
from webagent.model.base import Backend, Completion, Request
from webagent.model.settings import ModelSettings
from webagent.model.windows import ContextWindow, setting_window

if TYPE_CHECKING:
    from llama_cpp import Llama

_MAX_DEFAULT_THREADS = 8

#: how long llama.cpp's OpenMP threads (libgomp) spin at a barrier before they sleep. libgomp's
#: default, 300,000 spins, keeps every thread busy-waiting; when other processes share the cores,
#: a descheduled thread holds all the others at each barrier, and beside one busy process a
#: prompt took several times what the busy core explains; with 2,000 spins it takes about what
#: the busy core explains, and nothing more on an idle machine (``bench/cpu_contention.py``).
#: Set only where the environment does not set it already, and read by libgomp once, when
#: llama.cpp's library first loads.
OPENMP_SPIN_COUNT = "2000"


def quiet_openmp(env: dict[str, str] | None = None) -> dict[str, str]:
    """``env`` (default: this process's environment) with ``GOMP_SPINCOUNT`` set to
    :data:`OPENMP_SPIN_COUNT` unless it is set already; for a llama.cpp process to start."""
    target = os.environ if env is None else env
    target.setdefault("GOMP_SPINCOUNT", OPENMP_SPIN_COUNT)
    return dict(target)


#: the setting that changes the embedded model's window
SET_N_CTX = "--n-ctx N (model.n_ctx)"


def local_window(settings: ModelSettings) -> ContextWindow:
    """``n_ctx``, the context the embedded model allocates, or a smaller ``context_window``;
    a larger one is a ConfigError (the model cannot attend to more than it allocates)."""
    given, n_ctx = settings.context_window, settings.n_ctx
    if given is not None and given > n_ctx:
        raise ConfigError(
            f"model.context_window {given} is over n_ctx {n_ctx}, the context the local model "
            f"allocates; raise it with {SET_N_CTX}"
        )
    if given is not None:
        return setting_window(given)
    return ContextWindow(n_ctx, "n_ctx, the context the local model allocates", SET_N_CTX)


class LlamaLocalBackend(Backend):
    max_concurrency = 1

    def __init__(self, settings: ModelSettings) -> None:
        self._path = settings.resolved_model_path()
        self._n_ctx = settings.n_ctx
        self._n_threads = settings.n_threads or min(os.cpu_count() or 1, _MAX_DEFAULT_THREADS)
        self._structured = settings.structured_output != "none"
        self.name = settings.model_name or self._path.stem
        self._window = local_window(settings)
        self.context_window = self._window.tokens
        self._llama: Llama | None = None
        self._lock = threading.Lock()
        self._load_lock = threading.Lock()

    def window(self) -> ContextWindow:
        return self._window

    @property
    def model_path(self) -> str:
        return str(self._path)

    def _model(self) -> Llama:
        with self._load_lock:
            if self._llama is None:
                quiet_openmp()  # before llama.cpp's library (and so libgomp) loads
                try:
                    from llama_cpp import Llama
                except ImportError as exc:
                    raise MissingDependencyError("llama-cpp-python", "local") from exc
                try:
                    self._llama = Llama(
                        model_path=str(self._path),
                        n_ctx=self._n_ctx,
                        n_threads=self._n_threads,
                        n_threads_batch=self._n_threads,
                        flash_attn=True,
                        seed=0,
                        verbose=False,
                    )
                except ValueError as exc:
                    raise FatalModelError(f"cannot load GGUF {self._path}: {exc}") from exc
            return self._llama

    def complete(self, request: Request, timeout_s: float) -> Completion:
        llama = self._model()
        if not self._lock.acquire(timeout=timeout_s):
            raise ModelTimeoutError(f"{self.name}: the local model stayed busy for {timeout_s} s")
        try:
            started = time.monotonic()
            response = self._chat(llama, request)
            latency = time.monotonic() - started
        finally:
            self._lock.release()
        choice = response["choices"][0]
        usage = response.get("usage") or {}
        return Completion(
            text=choice["message"].get("content") or "",
            model=self.name,
            input_tokens=int(usage.get("prompt_tokens", 0)),
            output_tokens=int(usage.get("completion_tokens", 0)),
            latency_s=latency,
            finish_reason=choice.get("finish_reason"),
        )

    def _chat(self, llama: Llama, request: Request) -> Any:
        kwargs: dict[str, Any] = {
            "messages": [m.model_dump() for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "stop": list(request.stop),
            "seed": 0,
        }
        if request.json_schema is not None and self._structured:
            schema = request.json_schema
            if request.phase != "gist":  # a cut batch of gists is still read (parse_batch_answer)
                schema = within_tokens(schema, request.max_tokens)
            kwargs["response_format"] = {"type": "json_object", "schema": schema}
        try:
            return llama.create_chat_completion(**kwargs)
        except ValueError as exc:
            # llama-cpp-python raises ValueError for a prompt longer than the context
            raise FatalModelError(
                f"{self.name}: {exc} (context {self._n_ctx} tokens); "
                "shorten the prompt, lower max_tokens or raise n_ctx"
            ) from exc
        except RuntimeError as exc:
            raise FatalModelError(f"{self.name}: llama.cpp failed: {exc}") from exc

    def count_tokens(self, text: str) -> int:
        if not text:
            return 0
        return len(self._model().tokenize(text.encode("utf-8"), add_bos=False, special=False))

    def close(self) -> None:
        with self._load_lock:
            llama, self._llama = self._llama, None
        if llama is not None:
            with self._lock:
                llama.close()


#: tokens a structured answer keeps for its JSON frame, keys and the values that are not text
JSON_FRAME_TOKENS = 32


def within_tokens(schema: dict[str, Any], max_tokens: int) -> dict[str, Any]:
    """``schema`` with every free string's ``maxLength`` and every array's ``maxItems``
    lowered so that the grammar cannot write an answer longer than ``max_tokens`` (a token
    holds at least one character, an array item takes at most 3): a cut answer is no JSON at
    all. The request, and so its cache key, is unchanged."""
    properties = dict(schema.get("properties", {}))
    bounded = {
        name: spec
        for name, spec in properties.items()
        if isinstance(spec, dict)
        and (spec.get("type") == "array" or (spec.get("type") == "string" and "enum" not in spec))
    }
    if not bounded:
        return schema
    room = max(8, (max_tokens - JSON_FRAME_TOKENS) // len(bounded))
    for name, spec in bounded.items():
        key, limit = ("maxItems", room // 3) if spec["type"] == "array" else ("maxLength", room)
        properties[name] = {**spec, key: min(int(spec.get(key, limit)), max(1, limit))}
    return {**schema, "properties": properties}
