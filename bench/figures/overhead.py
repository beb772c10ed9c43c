"""What does a step cost the agent itself? Tokenize requests and CPU outside model calls.

Starts ``python -m llama_cpp.server`` over the embedded SmolLM2 GGUF and runs every agent on the
steps of ``../shared/intent_tasks`` (the saved pages, tasks in a person's words), one model per
agent for all its steps, as an evaluation run does. Token counts go to the server
(``/extras/tokenize/count`` and ``/extras/tokenize``, through the OpenAI backend's own
counting); the answers come from a scripted policy (``POLICY``: extractive gists, no gist
calls), so a step's time is the agent's own. Per step it records the tokenize requests and
the process's CPU time outside model calls, beside the same steps counted with the byte
estimate (no server).

``--baseline REV`` runs the same steps, agent by agent right after ours, with the package
tree of ``REV`` (``git archive``, in a subprocess that imports it): CPU on a shared machine
drifts from day to day, so the CPU target is read beside the baseline's CPU in the same run.

    python bench/figures/overhead.py [--limit N] [--every N] [--agents a,b] [--baseline REV]
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from pathlib import Path
from statistics import median
from typing import Any

from bench.kit import (
    PAGES,
    Step,
    figure_parser,
    git,
    intent_tasks,
    load_steps,
    markdown_table,
    publish,
    run_under,
    sha12,
    unpack,
)
from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import Observation
from webagent.method.memory import SHOWN_ID
from webagent.model import server_extras
from webagent.model.base import Backend, Completion, Request
from webagent.model.client import Model
from webagent.model.factory import build_backend
from webagent.model.settings import ModelSettings, default_model_path
from webagent.tokens import estimate_tokens

AGENTS = (
    "raw-html",
    "raw-html-paper",
    "retrieval",
    "gist-only",
    "readagent-p",
    "readagent-s",
    "mindact",
)
BUDGET = 8192
TARGET_REQUESTS = 10
TARGET_CPU_S = 0.1
#: the scripted answering policy by name (``POLICY`` in full), as tables and figures show it
POLICY_NAME = "word-overlap look-up + gold act"
POLICY = {
    "gist": "extractive gists (gister=extractive): no gist calls",
    "lookup": "the parts whose gist line shares most words with the task, max_lookup of them "
    "(ReadAgent-S: one a round, never STOP early)",
    "act": "the gold element if the prompt shows it, else the first id shown; the gold op and "
    "value",
    "mindact": "the option holding the gold element, else A",
}
_WORD = re.compile(r"\w{3,}")
_GIST_LINE = re.compile(r"^\[Part (\d+)\] \(gist\) (.*)$", re.MULTILINE)
_OPENED = re.compile(r"Parts opened so far: ([^.\n]*)\.")
_OPTION = re.compile(r"^([A-Z])\. .*?\bid=\"?([^\s>\"',);\]]+)", re.MULTILINE)


class Policy:
    """Answers from the request and the step's gold alone (see ``POLICY``)."""

    def __init__(self) -> None:
        self.gold: tuple[str, ...] = ()
        self.op, self.value = "CLICK", ""

    def __call__(self, request: Request) -> str:
        text = request.messages[-1].content
        properties = (request.json_schema or {}).get("properties", {})
        if request.phase == "lookup":
            return self._lookup(text, properties)
        if "choice" in properties:
            letters = properties["choice"]["enum"]
            chosen = next((m[1] for m in _OPTION.findall(text) if m[1] in self.gold), None)
            letter = next((m[0] for m in _OPTION.findall(text) if m[1] == chosen), letters[0])
            return json.dumps({"choice": letter, "op": self.op, "value": self.value or "x"})
        prompt = "\n".join(m.content for m in request.messages)
        shown = list(dict.fromkeys(SHOWN_ID.findall(prompt)))
        element = next((i for i in self.gold if i in shown), shown[0] if shown else "none")
        return json.dumps({"element_id": element, "op": self.op, "value": self.value or "x"})

    def _lookup(self, text: str, properties: dict[str, Any]) -> str:
        task = set(_WORD.findall(text.split("Previous actions", maxsplit=1)[0].lower()))
        lines = _GIST_LINE.findall(text)
        ranked = sorted(
            lines, key=lambda p: (-len(task & set(_WORD.findall(p[1].lower()))), int(p[0]))
        )
        parts = [int(n) for n, _ in ranked]
        if "pages" in properties:
            return json.dumps({"pages": parts[:5], "reason": "policy"})
        match = _OPENED.search(text)
        opened = set() if match is None or match.group(1) == "none" else match.group(1).split(", ")
        page = next((str(n) for n in parts if str(n) not in opened), "STOP")
        return json.dumps({"page": page, "reason": "policy"})


class ScriptedCounting(Backend):
    """The policy's answers; token counts from ``counter`` (a server's, or the estimate)."""

    def __init__(self, policy: Policy, counter: Backend | None) -> None:
        self.name = "scripted"
        self.context_window = BUDGET
        self._policy, self._counter = policy, counter
        self.answer_cpu_s = 0.0

    def complete(self, request: Request, timeout_s: float) -> Completion:
        started = time.process_time()
        text = self._policy(request)
        self.answer_cpu_s += time.process_time() - started
        return Completion(text=text, model=self.name)

    def count_tokens(self, text: str) -> int:
        return self._counter.count_tokens(text) if self._counter else estimate_tokens(text)

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        if self._counter is None:
            return [estimate_tokens(t) for t in texts]
        many = getattr(self._counter, "count_tokens_many", None)
        return many(texts) if many else [self._counter.count_tokens(t) for t in texts]

    @property
    def counts_remotely(self) -> bool:
        return bool(getattr(self._counter, "counts_remotely", False))


@contextmanager
def counted_requests() -> Iterator[list[str]]:
    """Every tokenizer request the model layer sends (``server_extras.http_body``, which
    every request to a server's extras goes through)."""
    urls: list[str] = []
    original = server_extras.http_body

    def counting(url: str, *args: Any, **kwargs: Any) -> Any:
        urls.append(url)
        return original(url, *args, **kwargs)

    server_extras.http_body = counting  # type: ignore[assignment]
    try:
        yield urls
    finally:
        server_extras.http_body = original  # type: ignore[assignment]


@contextmanager
def llama_server(threads: int = 2) -> Iterator[str]:
    """``python -m llama_cpp.server`` over the embedded SmolLM2 GGUF on a free port: its URL."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    command = [
        sys.executable, "-m", "llama_cpp.server", "--model", str(default_model_path()),
        "--host", "127.0.0.1", "--port", str(port), "--n_ctx", "4096", "--n_threads", str(threads),
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


def run_agent(
    agent: str, steps: list[Step], counter: Backend | None, urls: list[str]
) -> list[dict[str, Any]]:
    policy = Policy()
    backend = ScriptedCounting(policy, counter)
    model = Model(backend, sleep=lambda _: None)
    settings = AgentSettings(agent=agent, context_budget=BUDGET, gister="extractive")  # type: ignore[arg-type]
    built = build_agent(settings, model, None)
    # the server's tokenizer (and its batched counting) probed once per run, not per step
    model.count_tokens.many(["warm up", "the batch counter"])
    rows = []
    for step in steps:
        policy.gold, policy.op, policy.value = step.gold_ids, step.op, step.value
        observation = Observation(task=step.task, previous_actions=step.previous, html=step.html)
        before_urls, answer_cpu = len(urls), backend.answer_cpu_s
        cpu, wall = time.process_time(), time.perf_counter()
        trace = built.step(observation)
        cpu = time.process_time() - cpu - (backend.answer_cpu_s - answer_cpu)
        rows.append(
            {
                "task_id": step.task_id,
                "step": step.index,
                "bytes": len(step.html),
                "tokenize_requests": len(urls) - before_urls,
                "cpu_s": cpu,
                "wall_s": time.perf_counter() - wall,
                "segment_s": trace.timings.get("segment_s", 0.0),
                "calls": len(trace.calls),
                "error": trace.error_class,
            }
        )
    return rows


def p95(values: list[float]) -> float:
    s = sorted(values)
    return s[min(len(s) - 1, int(0.95 * len(s)))] if s else float("nan")


def tables(
    results: dict[str, dict[str, list[dict[str, Any]]]], baseline: str | None = None
) -> tuple[str, dict[str, Any]]:
    """The table and the figures by agent; with ``baseline`` (its revision), each agent's
    ``runs["baseline"]`` (the same steps under that code) is read beside ours."""
    rows, summary = [], {}
    for agent, runs in results.items():
        requests = [float(r["tokenize_requests"]) for r in runs["server"]]
        cpu, cpu_est = ([r["cpu_s"] for r in runs[k]] for k in ("server", "estimate"))
        figures = {
            "tokenize_requests_median": median(requests),
            "tokenize_requests_p95": p95(requests),
            "tokenize_requests_max": max(requests),
            "cpu_s_median": median(cpu),
            "cpu_s_p95": p95(cpu),
            "cpu_s_median_estimate": median(cpu_est),
            "cpu_s_p95_estimate": p95(cpu_est),
        }
        row: list[Any] = [agent, *figures.values()]
        figures["steps"] = len(runs["server"])
        figures["errors"] = sorted({str(r["error"]) for r in runs["server"] if r["error"]})
        if baseline is not None:
            base = [float(r["tokenize_requests"]) for r in runs["baseline"]]
            figures["baseline_tokenize_requests_median"] = median(base)
            figures["baseline_tokenize_requests_p95"] = p95(base)
            figures["baseline_cpu_s_median"] = median([r["cpu_s"] for r in runs["baseline"]])
            ratio = figures["cpu_s_median"] / figures["baseline_cpu_s_median"]
            figures["cpu_median_vs_baseline"] = ratio
            row += [f"{median(base):g} / {p95(base):g}", figures["baseline_cpu_s_median"],
                    f"{ratio:.2f}"]  # fmt: skip
        summary[agent] = figures
        rows.append(row)
    n_steps = len(next(iter(results.values()))["server"]) if results else 0
    header = (
        f"agent code, answered by {POLICY_NAME} | tokenize requests/step median | p95 | max"
        " | CPU s/step (SmolLM2 server counter) median | p95 | CPU s/step (estimate) median | p95"
    )
    if baseline is not None:
        header += (
            f" | baseline {baseline}: requests median / p95 | baseline CPU s/step median"
            " | CPU median ÷ baseline"
        )
    table = markdown_table(header, rows)
    over_requests = [
        f"{agent} (p95 {f['tokenize_requests_p95']:g})"
        for agent, f in summary.items()
        if not (
            f["tokenize_requests_median"] <= TARGET_REQUESTS
            and f["tokenize_requests_p95"] <= TARGET_REQUESTS
        )
    ]
    over_cpu = [agent for agent, f in summary.items() if f["cpu_s_median"] > TARGET_CPU_S]
    text = (
        f"## The agent's own cost per step ({n_steps} intent-task steps on the saved pages, "
        f"budget {BUDGET})\n\n{table}\n\n"
        f"Token counts from a real `llama_cpp.server` over SmolLM2 (its `/extras/tokenize` "
        f"endpoints, through the OpenAI backend), one model per agent across all steps; CPU is "
        f"this process's time per step outside model calls (the server's own tokenizing not "
        f"included); the estimate columns count with the byte estimate and no server. "
        f"Targets: at most {TARGET_REQUESTS} tokenize requests per step (median and p95): "
        f"{_verdict(over_requests)}; CPU at most {TARGET_CPU_S} s per step "
        f"(median, server counter): {_verdict(over_cpu)}"
        + (
            f" (the baseline {baseline}, run agent by agent beside ours on the same steps, "
            "shows what this machine gave the same steps that day)"
            if baseline is not None
            else ""
        )
        + ".\n\n"
        f"Scripted answering policy *{POLICY_NAME}* (no model answers):\n"
        + "\n".join(f"- {k}: {v}" for k, v in POLICY.items())
    )
    return text, summary


def _verdict(missed: list[str]) -> str:
    return f"NOT met by {', '.join(missed)}" if missed else "met by every agent"


def _baseline_rows(code: Path, agent: str, args: Any) -> list[dict[str, Any]]:
    """The steps' rows (server counter) of ``agent`` under the package tree ``code``: this
    script in a process that imports webagent from there (its own server)."""
    with tempfile.TemporaryDirectory(prefix="overhead-rows-") as tmp:
        out = Path(tmp) / "rows.json"
        argv = ["--agents", agent, "--every", str(args.every), "--rows-out", str(out)]
        run_under(code, __file__, *argv, *(["--limit", str(args.limit)] if args.limit else []))
        rows: list[dict[str, Any]] = json.loads(out.read_text())[agent]
        return rows


def main() -> None:
    parser = figure_parser(__doc__)
    parser.add_argument("--limit", type=int, default=None, help="first N intent tasks")
    parser.add_argument("--every", type=int, default=1, help="every Nth intent task")
    parser.add_argument("--agents", default=",".join(AGENTS))
    parser.add_argument("--baseline", help="a git revision run beside ours, agent by agent")
    parser.add_argument("--rows-out", type=Path, help="(a baseline's run) its rows here")
    args = parser.parse_args()
    started = time.perf_counter()
    steps = load_steps(intent_tasks(), every=args.every, limit=args.limit)
    agents = args.agents.split(",")
    results: dict[str, dict[str, list[dict[str, Any]]]] = {}
    label = git("rev-parse", "--short", args.baseline) if args.baseline else None
    scratch = tempfile.TemporaryDirectory(prefix="overhead-baseline-")
    base_code = unpack(args.baseline, Path(scratch.name) / "code") if args.baseline else None
    with llama_server() as base_url, counted_requests() as urls:
        settings = ModelSettings(
            backend="openai", base_url=base_url, model="smollm2", context_window=BUDGET
        )
        for agent in agents:
            server = build_backend(settings)
            results[agent] = {"server": run_agent(agent, steps, server, urls)}
            server.close()
            if args.rows_out:
                continue  # a baseline's run: the server counter's rows are all it gives
            results[agent]["estimate"] = run_agent(agent, steps, None, urls)
            if base_code is not None:
                results[agent]["baseline"] = _baseline_rows(base_code, agent, args)
            figures = tables({agent: results[agent]}, label)[1][agent]
            print(agent, json.dumps(figures), flush=True)
    if args.rows_out:
        args.rows_out.write_text(json.dumps({a: r["server"] for a, r in results.items()}))
        return
    text, summary = tables(results, label)
    settings_out = {
        "budget": BUDGET,
        "agents": agents,
        "policy_name": POLICY_NAME,
        "policy": POLICY,
        "limit": args.limit,
        "every": args.every,
        "baseline": label,
    }
    data = {"pages_sha12": sha12(PAGES), "steps": str(len(steps))}
    publish("overhead", args, settings=settings_out, data=data, started=started, text=text,
            summary=summary, steps=results)  # fmt: skip


if __name__ == "__main__":
    main()
