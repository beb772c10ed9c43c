"""Evaluation throughput against a local OpenAI-compatible server as concurrency grows.

Starts ``python -m llama_cpp.server`` (SmolLM2 GGUF, n_ctx 4096, 2 threads) on a free port,
then runs the same agent steps through ``webagent.model`` (``backend="openai"``) with 1, 2, 4,
8 workers. Each level runs its own steps (first steps of different tasks, interleaved across
the task list): llama.cpp reuses the KV cache of a repeated prompt prefix, so repeating the
same steps would make later levels look faster. Every raw-html prompt is cut to the same
budget, so the levels do the same amount of prompt work.

Token counts come from the same SmolLM2 tokenizer run in-process (``LocalCount``): with the
backend's own counting through the server's ``/extras/tokenize/count`` endpoint, that endpoint
waits behind running generations and the backend's 10 s probe timeout fails concurrent steps
(``--server-tokenizer`` reproduces it).
"""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from typing import Any

from benchkit import Step, local_model

from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import Observation
from webagent.model.base import Backend, Completion, Request
from webagent.model.client import Model
from webagent.model.factory import build_backend
from webagent.model.retry import RetryPolicy
from webagent.model.settings import ModelSettings, default_model_path

SERVER_CTX = 4096
#: raw-html at a 640-token budget: one ~550-token act call per step, so that a full run of
#: 21 steps stays within minutes on 2 busy cores (max_lookup, reserve_tokens and
#: act_max_tokens only make the segmentation plan feasible at this budget)
AGENT = AgentSettings(
    agent="raw-html", context_budget=640, max_lookup=1, reserve_tokens=128, act_max_tokens=64
)


class LocalCount(Backend):
    """The OpenAI backend for completions, the in-process SmolLM2 tokenizer for counting."""

    def __init__(self, inner: Backend) -> None:
        self.inner = inner
        self.name = inner.name
        self.context_window = inner.context_window
        self.max_concurrency = inner.max_concurrency
        self._count = local_model().count_tokens

    def complete(self, request: Request, timeout_s: float) -> Completion:
        return self.inner.complete(request, timeout_s)

    def count_tokens(self, text: str) -> int:
        return int(self._count(text))

    def close(self) -> None:
        self.inner.close()


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextmanager
def llama_server(threads: int = 2) -> Iterator[str]:
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path()),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", str(SERVER_CTX),
        "--n_threads", str(threads),
    ]  # fmt: skip
    process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    base = f"http://127.0.0.1:{port}/v1"
    try:
        deadline = time.monotonic() + 60
        while True:
            try:
                urllib.request.urlopen(f"{base}/models", timeout=2).read()
                break
            except OSError:
                if process.poll() is not None or time.monotonic() > deadline:
                    raise RuntimeError(f"llama_cpp.server did not start: {command}") from None
                time.sleep(0.5)
        yield base
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()


def run_level(
    base: str, steps: list[Step], workers: int, server_tokenizer: bool = False
) -> dict[str, Any]:
    settings = ModelSettings(
        backend="openai", base_url=base, model="smollm2", context_window=SERVER_CTX,
        concurrency=workers, timeout_s=600, max_retries=1, structured_output="json_object",
    )  # fmt: skip
    backend = build_backend(settings)
    policy = RetryPolicy(timeout_s=settings.timeout_s, max_retries=settings.max_retries)
    model = Model(backend if server_tokenizer else LocalCount(backend), policy)
    agent = build_agent(AGENT, model)

    def one(step: Step) -> dict[str, Any]:
        t0 = time.perf_counter()
        trace = agent.step(
            Observation(task=step.task, previous_actions=step.previous, html=step.html)
        )
        return {
            "latency_s": time.perf_counter() - t0,
            "input_tokens": sum(u.input_tokens for u in trace.usage.values()),
            "output_tokens": sum(u.output_tokens for u in trace.usage.values()),
            "model_s": sum(c.latency_s for c in trace.calls),
            "shown_ids": len(trace.shown_element_ids),
            "calls": len(trace.calls),
            "error": trace.error,
            "error_class": trace.error_class,
        }

    started = time.perf_counter()
    with ThreadPoolExecutor(max_workers=workers) as pool:
        results = list(pool.map(one, steps))
    wall = time.perf_counter() - started
    model.close()
    tokens_in = sum(r["input_tokens"] for r in results)
    tokens_out = sum(r["output_tokens"] for r in results)
    return {
        "workers": workers,
        "steps": len(steps),
        "wall_s": wall,
        "steps_per_min": 60 * len(steps) / wall,
        "tokens_per_s": (tokens_in + tokens_out) / wall,
        "prompt_tokens_per_s": tokens_in / wall,
        "gen_tokens_per_s": tokens_out / wall,
        "mean_latency_s": sum(r["latency_s"] for r in results) / len(results),
        "mean_shown_ids": sum(r["shown_ids"] for r in results) / len(results),
        "model_share": sum(r["model_s"] for r in results) / sum(r["latency_s"] for r in results),
        "failed": sum(1 for r in results if r["error_class"] in ("model_error", "page_error")),
        "invalid_answers": sum(
            1 for r in results if r["error_class"] in ("invalid_output", "invalid_id")
        ),
        "calls": sum(r["calls"] for r in results),
        "results": results,
    }


def throughput(
    steps: list[Step],
    levels: tuple[int, ...],
    per_level: int,
    server_tokenizer: bool = False,
    threads: int = 2,
) -> Iterator[dict[str, Any]]:
    """Each level's result as it completes: max(per_level, workers) steps, disjoint."""
    sizes = [max(per_level, w) for w in levels]
    n = sum(sizes) + 1
    chosen = [steps[round(i * len(steps) / n)] for i in range(n)]
    with llama_server(threads) as base:
        run_level(base, chosen[-1:], 1, server_tokenizer)  # load and first prompt: not counted
        start = 0
        for size, workers in zip(sizes, levels, strict=True):
            result = run_level(base, chosen[start : start + size], workers, server_tokenizer)
            print(f"{workers} workers: {result['wall_s']:.0f} s", flush=True)
            start += size
            yield result
