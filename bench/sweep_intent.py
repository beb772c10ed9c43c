"""The sweep over ``../shared/intent_tasks`` (tasks in a person's words, real saved pages):
every agent, five of the toolkit's and the two protocols added beside them (raw-html-paper,
mindact), at 2K/4K/8K/16K, through ``webagent sweep``'s own code (``run_sweep``).

No model judges anything here. The gister is the extractive one (no model), and the model is
a scripted one named by its policy (``POLICY``): look-ups rank the gists by word overlap with
the task (no gold knowledge); the act answer is the gold element with the gold op/value when
the act prompt shows a gold id, else the first id shown; MindAct's rounds pick the gold
option when offered, else "None of the above". So step SR is the share of steps whose prompt
showed the gold (the ceiling of a perfect act model), beside what each way of reading cost.
Token counts are the estimate (5 tokens per 8 bytes), the same for every agent.

    python bench/sweep_intent.py [--limit N] [--out DIR]

writes the sweep folder (default /tmp/f/sweep_intent) and
bench/summaries/sweep_intent.{md,json,png}.
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from benchkit import REPO, SHARED, provenance, write_result

from mind2web_eval.runner import EvalSubject
from mind2web_eval.sweep.run import run_sweep
from mind2web_eval.sweep.spec import build_spec
from webagent.agents.registry import build_agent
from webagent.config import RunConfig, build_config
from webagent.method.memory import SHOWN_ID
from webagent.model.base import Request
from webagent.model.client import Model
from webagent.model.retry import RetryPolicy
from webagent.model.scripted import ScriptedBackend

AGENTS = (
    "readagent-p", "readagent-s", "gist-only", "retrieval", "raw-html", "raw-html-paper",
    "mindact",
)  # fmt: skip
BUDGETS = (2048, 4096, 8192, 16384)
MODEL_NAME = "scripted: look-up by word overlap, act = gold when shown"
POLICY = {
    "gist": "extractive gister (no model call)",
    "lookup_p": "the max_lookup parts whose gists share most words with the task",
    "lookup_s": "the next part by the same ranking, one per call, never STOP early",
    "act": "the gold element with gold op/value if the act prompt shows a gold id, else the "
    "first id shown (with the gold op/value)",
    "mindact": "the gold option when a round offers it, else 'None of the above'",
    "tokens": "estimate_tokens (5 tokens per 8 bytes) for every agent",
}
_PART = re.compile(r"^\[Part (\d+)\] \(gist\) (.*)$", re.M)
_OPTION = re.compile(r"^([A-Z])\. <\S+ id=(\S+?)[\s>]", re.M)
_WORD = re.compile(r"\w+")


class Gold:
    """Gold actions by (task, last previous action): what the act script answers."""

    def __init__(self, tasks: list[dict[str, object]]) -> None:
        self.by_key: dict[tuple[str, str], tuple[set[str], str, str]] = {}
        for task in tasks:
            reprs = list(task["action_reprs"])  # type: ignore[call-overload]
            for i, step in enumerate(task["actions"]):  # type: ignore[attr-defined]
                key = (str(task["confirmed_task"]), reprs[i - 1] if i else "None")
                ids = {str(c["backend_node_id"]) for c in step["pos_candidates"]}
                op = step["operation"]
                self.by_key[key] = (ids, op["op"], op.get("value") or "")

    def of(self, prompt: str) -> tuple[set[str], str, str]:
        task = prompt.split("Task: ", 1)[1].split("\n", 1)[0]
        previous = prompt.split("Previous actions:\n", 1)[1].split("\n\n", 1)[0]
        return self.by_key.get((task, previous.splitlines()[-1]), (set(), "CLICK", ""))


def _overlap(task: str, text: str) -> int:
    words = {w.lower() for w in _WORD.findall(task)}
    return sum(w.lower() in words for w in _WORD.findall(text))


def answer_for(gold: Gold, max_lookup: int):  # type: ignore[no-untyped-def]
    def answer(request: Request) -> str:
        prompt = request.messages[-1].content
        task = prompt.split("Task: ", 1)[1].split("\n", 1)[0]
        if request.phase == "lookup":
            parts = sorted(_PART.findall(prompt), key=lambda p: (-_overlap(task, p[1]), int(p[0])))
            if "which ONE more part" in prompt:
                return json.dumps({"page": int(parts[0][0]) if parts else "STOP", "reason": "s"})
            pages = [int(p[0]) for p in parts[:max_lookup]]
            return json.dumps({"pages": pages, "reason": "overlap"})
        ids, op, value = gold.of(prompt)
        if request.schema_name == "choice":
            options = _OPTION.findall(prompt.split("Which element should be acted on next?")[1])
            letters = [letter for letter, element in options if element in ids]
            none = re.findall(r"^([A-Z])\. None of the above", prompt, re.M)[-1]
            return json.dumps({"choice": letters[0] if letters else none, "op": op, "value": value})
        shown = SHOWN_ID.findall(prompt)
        chosen = next((i for i in shown if i in ids), shown[0] if shown else "none")
        return json.dumps({"element_id": chosen, "op": op, "value": value})

    return answer


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--limit", type=int, default=None, help="first N tasks (default all)")
    parser.add_argument("--out", type=Path, default=Path("/tmp/f/sweep_intent"))
    parser.add_argument("--data", type=Path, default=None, help="built intent tasks JSON")
    args = parser.parse_args()
    data = args.data
    if data is None:
        data = args.out.parent / "intent_tasks.json"
        specs = sorted((SHARED / "intent_tasks").glob("specs_*.jsonl"))
        subprocess.run(
            [sys.executable, str(SHARED / "tools" / "build_intent_tasks.py"),
             str(SHARED / "pages"), *map(str, specs), "--out", str(data)],
            check=True, capture_output=True,
        )  # fmt: skip
    tasks = json.loads(data.read_text(encoding="utf-8"))
    gold = Gold(tasks[: args.limit] if args.limit else tasks)
    base: RunConfig = build_config(
        {
            "agent": {"gister": "extractive", "repair_attempts": 0},
            "model": {"backend": "openai", "model": MODEL_NAME},
            "gist_cache": {"enabled": False},
            "eval": {"bootstrap": 200},
        }
    )

    @contextmanager
    def open_cell(config: RunConfig) -> Iterator[EvalSubject]:
        backend = ScriptedBackend(
            answer_for(gold, config.agent.max_lookup), name=MODEL_NAME, context_window=32768
        )
        model = Model(backend, RetryPolicy(max_retries=0), sleep=lambda _s: None)
        yield EvalSubject(
            agent=build_agent(config.agent, model, None),
            agent_settings=config.agent.manifest(),
            model_settings={"backend": "scripted", "policy": POLICY},
            model_identity={"backend": "scripted", "model": MODEL_NAME},
        )

    spec = build_spec(
        data=str(data.resolve()), agents=AGENTS, budgets=BUDGETS, limit=args.limit,
        quality="step_sr", scoring={"bootstrap": 200, "seed": 0},
        config={**base.manifest(), "model": {"backend": "scripted", "model": MODEL_NAME}},
    )  # fmt: skip
    started = time.perf_counter()
    outcome = run_sweep(spec, base, args.out, open_cell, progress=False)
    seconds = time.perf_counter() - started
    summaries = REPO / "bench" / "summaries"
    summaries.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(outcome.files.png, summaries / "sweep_intent.png")
    table = outcome.files.table.read_text(encoding="utf-8")
    results = json.loads(outcome.files.json_path.read_text(encoding="utf-8"))
    limit = f" --limit {args.limit}" if args.limit else ""
    text = "\n".join(
        [
            "# Sweep over ../shared/intent_tasks: every agent at 2K/4K/8K/16K",
            "",
            f"Command: `python bench/sweep_intent.py{limit}`"
            f" ({len(gold.by_key)} steps; {seconds:.0f} s on this machine). Model: **{MODEL_NAME}**"
            " (a scripted policy, not an agent's model: step SR here is the share of steps whose "
            "prompt showed a gold element, the ceiling of a perfect act model).",
            "",
            table,
            "Policy: " + "; ".join(f"{k}: {v}" for k, v in POLICY.items()),
            "",
            "Plot: bench/summaries/sweep_intent.png",
        ]
    )
    payload = {
        "provenance": provenance({"agents": AGENTS, "budgets": BUDGETS, "policy": POLICY}, {
            "data": str(data)}),
        "status": outcome.status,
        "cells": results["cells"],
        "notes": results["notes"],
    }  # fmt: skip
    write_result(summaries, "sweep_intent", payload, text)
    return 0 if outcome.status == "complete" else 3


if __name__ == "__main__":
    sys.exit(main())
