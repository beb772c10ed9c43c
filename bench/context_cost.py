"""Context cost: prompt tokens and LLM calls per step for every agent, on real pages.

Agents are driven by a scripted model (``scripted_model.POLICY``) whose token counts come from
the embedded model's real tokenizer, at a context budget of 8192. Token counts and call counts
do not depend on answer quality; which fragments are reopened follows the stated policy.
Segmentation is deterministic, so it is memoised per page here (bench/speed.py times it).

    python bench/context_cost.py [--quick] [--out bench/results]
"""

from __future__ import annotations

import argparse
import shutil
import tempfile
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchkit import (
    BUDGET,
    Step,
    add_data_args,
    load_steps,
    provenance,
    real_counter,
    resolve_tasks,
    sha12,
    write_result,
)
from context_tables import summary_tables
from scripted_model import POLICY, Script, scripted_model

from webagent.agents import pipeline
from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import Observation
from webagent.gist.cache import GistCache
from webagent.html.fragment import SegmentedPage, SegmentSettings
from webagent.html.segment import segment_html
from webagent.method.act import act_messages
from webagent.method.memory import shown_ids

# row label -> (agent, stop ReadAgent-S at the gold fragment?)
AGENTS: dict[str, tuple[str, bool]] = {
    "raw-html (truncated)": ("raw-html", True),
    "retrieval bm25 top-5": ("retrieval", True),
    "gist-only": ("gist-only", True),
    "readagent-p (5)": ("readagent-p", True),
    "readagent-s (stop at gold)": ("readagent-s", True),
    "readagent-s (always 5)": ("readagent-s", False),
}
GISTING = {"gist-only", "readagent-p", "readagent-s"}
CONDITIONS = ("no cache", "cache per task", "cache run-wide")


_COUNTER: list[Callable[[str], int]] = []


@lru_cache(maxsize=64)
def _segment(html: str, plan: SegmentSettings) -> SegmentedPage:
    return segment_html(html, plan, _COUNTER[0])


def segment_once(
    html: str, plan: SegmentSettings, count: Callable[[str], int] | None = None
) -> SegmentedPage:
    """Segmentation memoised per page, with the one counter of this run (the agents')."""
    return _segment(html, plan)


pipeline.segment_html = segment_once  # type: ignore[assignment]


def settings_for(agent: str) -> AgentSettings:
    return AgentSettings(agent=agent, context_budget=BUDGET)  # type: ignore[arg-type]


def run_condition(label: str, condition: str, steps: list[Step], script: Script) -> list[dict]:
    agent_name, stop_at_gold = AGENTS[label]
    model, backend = scripted_model(script)
    agent_settings = settings_for(agent_name)
    plan = build_agent(agent_settings, model).segment_plan  # type: ignore[attr-defined]
    ram = "/dev/shm" if Path("/dev/shm").is_dir() else None
    tmp = Path(tempfile.mkdtemp(prefix="bench-gists-", dir=ram))
    shared = GistCache(tmp / "run.sqlite") if condition == "cache run-wide" else None
    cache, current_task, rows = shared, None, []
    for step in steps:
        if condition == "cache per task" and step.task_id != current_task:
            cache = GistCache(tmp / f"{step.task_id}.sqlite")
            current_task = step.task_id
        page = segment_once(step.html, plan)
        script.begin(step, page, stop_at_gold)
        agent = build_agent(agent_settings, model, cache)
        trace = agent.step(
            Observation(task=step.task, previous_actions=step.previous, html=step.html)
        )
        backend.requests.clear()
        whole = "\n".join(f.html for f in page.fragments)
        untruncated, _ = act_messages(step.task, "\n".join(step.previous) or "None", whole)
        rows.append(
            {
                "agent": label,
                "condition": condition,
                "task_id": step.task_id,
                "step": step.index,
                "task_steps": step.n_steps,
                "n_fragments": trace.n_fragments,
                "observation_tokens": script.counter(step.html),
                "raw_untruncated_prompt_tokens": model.count_message_tokens(untruncated),
                "act_prompt_tokens": trace.prompt_tokens,
                "input_tokens": sum(c.input_tokens for c in trace.calls),
                "max_call_tokens": max((c.input_tokens for c in trace.calls), default=0),
                "calls": len(trace.calls),
                "calls_by_phase": {p: u.calls for p, u in trace.usage.items()},
                "gist_cache_hits": trace.gist_cache_hits,
                "reopened": len(trace.reopened),
                "lookup_rounds": len(trace.lookup),
                "gold_shown": any(i in trace.shown_element_ids for i in step.gold_ids),
                "gold_shown_untruncated": bool(
                    set(step.gold_ids) & set(shown_ids(whole, page.element_ids))
                ),
                "error": trace.error,
            }
        )
    shutil.rmtree(tmp, ignore_errors=True)
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_args(parser)
    args = parser.parse_args()
    tasks_path = resolve_tasks(args)
    steps = load_steps(tasks_path, args.quick)
    counter = real_counter()
    _COUNTER.append(counter)
    script = Script(counter)
    started = time.perf_counter()
    rows: list[dict] = []
    for label, (agent, _) in AGENTS.items():
        conditions = CONDITIONS if agent in GISTING else ("n/a",)
        for condition in conditions:
            t0 = time.perf_counter()
            rows += run_condition(label, condition, steps, script)
            print(f"{label:28s} {condition:15s} {time.perf_counter() - t0:6.1f} s", flush=True)
    text, agent_rows, cache_rows = summary_tables(rows, len(steps), list(AGENTS), CONDITIONS)
    settings: dict[str, Any] = {
        "context_budget": BUDGET,
        "agent_settings": settings_for("readagent-p").manifest(),
        "model": "scripted answers, SmolLM2-135M-Instruct-Q4_1 tokenizer (llama-cpp-python)",
        "policy": POLICY,
        "quick": args.quick,
    }
    data = {
        "tasks_sha12": sha12(tasks_path),
        "pages_sha12": sha12(args.pages),
        "steps": str(len(steps)),
        "tasks": str(len({s.task_id for s in steps})),
    }
    write_result(
        args.out,
        "context_cost",
        {
            "provenance": provenance(settings, data),
            "wall_s": time.perf_counter() - started,
            "agents": agent_rows,
            "cache": cache_rows,
            "steps": rows,
        },
        text,
    )


if __name__ == "__main__":
    main()
