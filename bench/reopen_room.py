"""Room to reopen and gists that name the target: the "Must show" checks of issue 10.

For each task set (intent tasks from ``../shared/intent_tasks``, quoted-target tasks from
``make_grounding_tasks.py``) and each token counter (the embedded model's SmolLM2 tokenizer,
the byte estimate), at a budget of 8192, the real agents run with extractive gists and a
scripted model whose answers follow a stated policy (``POLICY["lookup_oracle"]`` + gold act;
never an agent's own result):

* gold in the act prompt: the gold element inside a reopened fragment, of the steps whose gold
  survived segmentation (and anywhere in the prompt, gists included);
* silent truncation: steps whose memory is over its budget or was changed without a record;
* previous actions dropped while a gist is shown;
* gold named in the gist memory: the gold id in the gists the look-up reads (its first prompt;
  for gist-only the act prompt's memory), extractive gists.

    python bench/reopen_room.py [--quick] [--intent-tasks F] [--tasks F] [--out bench/results]
"""

from __future__ import annotations

import argparse
import re
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from functools import lru_cache
from pathlib import Path
from typing import Any

from benchkit import (
    BUDGET,
    SHARED,
    Step,
    add_data_args,
    load_steps,
    markdown_table,
    mean,
    median,
    publish,
    real_counter,
    resolve_tasks,
    sha12,
)
from scripted_model import POLICY, Script, scripted_model

from webagent.agents import pipeline
from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import Observation, StepTrace
from webagent.gist.extractive import extractive_gist
from webagent.html.fragment import SegmentedPage, SegmentSettings
from webagent.html.segment import segment_html
from webagent.tokens import estimate_tokens

INTENT_TOOL = SHARED / "tools" / "build_intent_tasks.py"
AGENTS = ("readagent-p", "readagent-s", "gist-only")
Counter = Callable[[str], int]


def build_intent_tasks(pages: Path, specs: list[Path] | None = None) -> Path:
    """Mind2Web-format records of intent task specs (default: ``../shared/intent_tasks``),
    built by the shared tool into a temporary file."""
    out = Path(tempfile.mkdtemp(prefix="bench-intent-")) / "intent_tasks.json"
    specs = specs or sorted((SHARED / "intent_tasks").glob("specs_*.jsonl"))
    command = [sys.executable, str(INTENT_TOOL), str(pages), *map(str, specs), "--out", str(out)]
    subprocess.run(command, check=True, capture_output=True)
    return out


_COUNTERS: dict[str, Counter] = {}


@lru_cache(maxsize=128)
def _segment(html: str, plan: SegmentSettings, counter_name: str) -> SegmentedPage:
    return segment_html(html, plan, _COUNTERS[counter_name])


def gist_memory(trace: StepTrace) -> str:
    """The gist memory the look-up read (its first prompt), else the act prompt's memory."""
    lookup = [c for c in trace.calls if c.phase == "lookup"]
    return "\n".join(m["content"] for m in lookup[0].prompt) if lookup else trace.memory


def named(text: str, ids: tuple[str, ...]) -> bool:
    return any(re.search(rf"\bid={re.escape(i)}(?![\w-])", text) for i in ids)


def run(steps: list[Step], agent_name: str, counter_name: str) -> list[dict[str, Any]]:
    counter = _COUNTERS[counter_name]
    script = Script(counter, oracle=True)
    model, backend = scripted_model(script)
    # every page gisted, also one that would fit the act prompt whole: this measures the gist
    # memory and reopening, not the shortcut around them
    settings = AgentSettings(
        agent=agent_name, context_budget=BUDGET, gister="extractive", read_whole_page=False
    )  # type: ignore[arg-type]
    agent = build_agent(settings, model)
    plan = agent.segment_plan  # type: ignore[attr-defined]

    def segment(html: str, plan_: SegmentSettings, count: Counter | None = None) -> SegmentedPage:
        return _segment(html, plan_, counter_name)

    pipeline.segment_html = segment  # type: ignore[assignment]
    rows = []
    for step in steps:
        page = _segment(step.html, plan, counter_name)
        script.begin(step, page, stop_at_gold=False)
        trace = agent.step(
            Observation(task=step.task, previous_actions=step.previous, html=step.html)
        )
        backend.requests.clear()
        rows.append(row_of(step, page, trace, counter, settings.gist_words))
    return rows


def lost_where(
    step: Step, page: SegmentedPage, trace: StepTrace, gold_frags: set[int], words: int
) -> str:
    """Where a gold id the gist memory does not name was lost: the gist as written names it
    (the memory fit shortened or left it out), only the uncapped gist does (the gist's own
    token cap cut it), or no gist of its fragment names it."""
    if any(i < len(trace.gists) and named(trace.gists[i], step.gold_ids) for i in gold_frags):
        return "memory_fit"
    uncapped = (extractive_gist(page.fragments[i], words) for i in gold_frags)
    return "gist_cap" if any(named(g, step.gold_ids) for g in uncapped) else "not_in_gist"


def row_of(
    step: Step, page: SegmentedPage, trace: StepTrace, counter: Counter, words: int
) -> dict[str, Any]:
    gold_frags = {i for i in (page.fragment_of(g) for g in step.gold_ids) if i is not None}
    edits = trace.memory_edits
    budget_ok = trace.prompt_tokens <= BUDGET
    gists_shown = "(gist)" in trace.memory
    in_gists = named(gist_memory(trace), step.gold_ids)
    lost = lost_where(step, page, trace, gold_frags, words) if gold_frags and not in_gists else ""
    return {
        "task_id": step.task_id,
        "step": step.index,
        "survived": bool(gold_frags),
        "gold_reopened": bool(gold_frags & set(trace.reopened)) and not edits.reopen_cut,
        "gold_shown": any(i in trace.shown_element_ids for i in step.gold_ids),
        "gold_named_in_gists": in_gists,
        "gold_lost_at": lost,
        "correct": trace.action is not None and trace.action.element_id in step.gold_ids,
        "over_budget": not budget_ok or trace.error_class == "memory_over_budget",
        "previous_dropped_with_gists": bool(edits.previous_dropped) and gists_shown,
        "gists_shortened": bool(edits.gists_shortened),
        "gists_displaced": bool(edits.gists_displaced),
        "reopen_refused": bool(edits.reopen_refused),
        "reopen_cut": bool(edits.reopen_cut),
        "n_fragments": trace.n_fragments,
        "reopened": len(trace.reopened),
        "prompt_tokens": trace.prompt_tokens,
        "gist_memory_tokens": counter(gist_memory(trace)),
        "error": trace.error,
    }


def share(rows: list[dict[str, Any]], key: str) -> float:
    return mean([float(r[key]) for r in rows])


def summarise(rows: list[dict[str, Any]]) -> dict[str, Any]:
    survived = [r for r in rows if r["survived"]]
    return {
        "steps": len(rows),
        "gold_survived": share(rows, "survived"),
        "gold_reopened_of_survived": share(survived, "gold_reopened"),
        "gold_shown_of_survived": share(survived, "gold_shown"),
        "gold_named_in_gists": share(rows, "gold_named_in_gists"),
        "gold_lost_at": {
            where: sum(r["gold_lost_at"] == where for r in rows)
            for where in ("not_in_gist", "gist_cap", "memory_fit")
        },
        "policy_step_sr": share(rows, "correct"),
        "over_budget_steps": sum(r["over_budget"] for r in rows),
        "previous_dropped_while_gists_shown": sum(r["previous_dropped_with_gists"] for r in rows),
        "gists_shortened_share": share(rows, "gists_shortened"),
        "gists_displaced_share": share(rows, "gists_displaced"),
        "reopen_refused_share": share(rows, "reopen_refused"),
        "reopen_cut_share": share(rows, "reopen_cut"),
        "median_fragments": median([r["n_fragments"] for r in rows]),
        "median_reopened": median([r["reopened"] for r in rows]),
        "median_prompt_tokens": median([r["prompt_tokens"] for r in rows]),
        "median_gist_memory_tokens": median([r["gist_memory_tokens"] for r in rows]),
    }


def table(summary: dict[str, dict[str, Any]]) -> str:
    headers = [
        "task set",
        "counter",
        "agent (policy: oracle look-up + gold act)",
        "steps",
        "gold survived",
        "gold reopened (of survived)",
        "gold in prompt",
        "gold named in gists",
        "not named: no gist / gist cap / memory fit",
        "over budget",
        "prev. dropped w/ gists",
        "gists shortened",
        "gists displaced",
        "reopen refused",
        "fragments (median)",
        "reopened (median)",
        "act prompt tokens (median)",
    ]
    rows = []
    for key, s in summary.items():
        tasks, counter, agent = key.split("|")
        rows.append(
            [
                tasks,
                counter,
                agent,
                s["steps"],
                f"{s['gold_survived']:.1%}",
                f"{s['gold_reopened_of_survived']:.1%}",
                f"{s['gold_shown_of_survived']:.1%}",
                f"{s['gold_named_in_gists']:.1%}",
                " / ".join(str(n) for n in s["gold_lost_at"].values()),
                s["over_budget_steps"],
                s["previous_dropped_while_gists_shown"],
                f"{s['gists_shortened_share']:.0%}",
                f"{s['gists_displaced_share']:.0%}",
                f"{s['reopen_refused_share']:.0%}",
                f"{s['median_fragments']:.0f}",
                f"{s['median_reopened']:.0f}",
                f"{s['median_prompt_tokens']:,.0f}",
            ]
        )
    return markdown_table(headers, rows)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_args(parser)
    parser.add_argument("--intent-tasks", type=Path, default=None, help="built intent tasks")
    args = parser.parse_args()
    started = time.perf_counter()
    sets = {
        "intent": args.intent_tasks or build_intent_tasks(args.pages),
        "grounding": resolve_tasks(args),
    }
    _COUNTERS.update({"SmolLM2": real_counter(), "estimate": estimate_tokens})
    summary: dict[str, dict[str, Any]] = {}
    rows: list[dict[str, Any]] = []
    for set_name, path in sets.items():
        steps = load_steps(path, args.quick)
        for counter_name in _COUNTERS:
            for agent in AGENTS:
                t0 = time.perf_counter()
                part = run(steps, agent, counter_name)
                summary[f"{set_name}|{counter_name}|{agent}"] = summarise(part)
                rows += [
                    {"set": set_name, "counter": counter_name, "agent": agent, **r} for r in part
                ]
                print(
                    f"{set_name} {counter_name} {agent}: {time.perf_counter() - t0:.0f} s",
                    flush=True,
                )
    text = (
        f"## Room to reopen and gists that name the target (budget {BUDGET}, extractive gists)\n\n"
        + table(summary)
        + "\n\nPolicy, not an agent's result: "
        + POLICY["lookup_oracle"]
        + "; act: "
        + POLICY["act"]
        + ". 'gold reopened' counts the gold inside a fragment shown in full; 'gold in prompt' "
        "also counts a gold id named by a gist. 'over budget' = act prompt over the budget or a "
        "memory that did not fit (0 means nothing was cut silently: every change is in "
        "StepTrace.memory_edits). gist-only reopens nothing by design. 'not named' splits the "
        "steps whose gold survived but is not named in the gist memory: no gist of its fragment "
        "names it, only the uncapped gist does (cut by extractive_max_tokens), or the gist as "
        "written does (shortened or left out when the memory shared its room)."
    )
    settings = {
        "context_budget": BUDGET,
        "agent_settings": AgentSettings(
            context_budget=BUDGET, gister="extractive", read_whole_page=False
        ).manifest(),
        "policy": {"lookup": POLICY["lookup_oracle"], "act": POLICY["act"]},
        "counters": list(_COUNTERS),
        "quick": args.quick,
    }
    data = {name: sha12(path) for name, path in sets.items()} | {"pages": sha12(args.pages)}
    publish(
        "reopen_room",
        args.out,
        settings=settings,
        data=data,
        started=started,
        text=text,
        summary=summary,
        steps=rows,
    )


if __name__ == "__main__":
    main()
