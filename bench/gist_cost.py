"""Reading cost of a new page: batched gisting against one call per fragment, in one run.

Part 1, the 28 saved pages: gist calls and gist input tokens per new page at an 8K budget,
against the page's own compact tokens (the cleaned page the agents read, under the embedded
model's real tokenizer); and whether batched and single gists name the same element ids.
Part 2, the grounding-task steps: uncached ReadAgent-P input tokens per step (batched and
per-fragment) against the raw-HTML baseline cut to the same budget, on the same steps.

Answers come from the scripted policy ``scripted_model.POLICY`` ("extractive gists, BM25
look-up, gold act"), never from a model; token counts come from the real tokenizer.

    python bench/gist_cost.py [--quick] [--out bench/results] [--summary bench/summaries]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from benchkit import (
    BUDGET,
    REPO,
    Step,
    add_data_args,
    load_steps,
    markdown_table,
    mean,
    median,
    provenance,
    real_counter,
    resolve_tasks,
    sha12,
    write_result,
    write_summary,
)
from scripted_model import POLICY, Script, scripted_model

from webagent.agents.context import context_budget, segment_settings
from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import Observation
from webagent.gist.batch import GistView
from webagent.gist.gister import build_gister
from webagent.html.segment import segment_html
from webagent.method.memory import shown_ids
from webagent.model.calls import CallLog

#: how the page is gisted: the gist batch (None: the default) and what the gister reads
MODES: dict[str, tuple[int | None, GistView]] = {
    "per fragment (gist_batch=1)": (1, "reading"),
    "batched (default gist_batch)": (None, "reading"),
    "batched, controls marked by page id (gist_view=reading-ids)": (None, "reading-ids"),
}
#: ReadAgent-P gisting a page that would fit the act prompt whole (read_whole_page off)
EVERY_PAGE = "readagent-p, batched, every page gisted (read_whole_page=false)"


def settings(
    agent: str, batch: int | None, read_whole: bool = True, view: GistView = "reading"
) -> AgentSettings:
    extra: dict[str, Any] = {} if batch is None else {"gist_batch": batch}
    return AgentSettings(
        agent=agent,
        context_budget=BUDGET,
        read_whole_page=read_whole,
        gist_view=view,
        **extra,
    )


def page_rows(pages: list[Path], script: Script) -> list[dict[str, Any]]:
    rows = []
    for path in pages:
        html = path.read_text(encoding="utf-8", errors="replace")
        step = Step(path.stem, 0, 1, path.stem, "", [], html, (), "CLICK", "")
        row: dict[str, Any] = {"page": path.name, "bytes": path.stat().st_size}
        named: dict[str, list[list[str]]] = {}
        for label, (batch, view) in MODES.items():
            model, backend = scripted_model(script)
            agent_settings = settings("gist-only", batch, view=view)
            page = segment_html(html, segment_settings(agent_settings, model), model.count_tokens)
            script.begin(step, page)
            gister = build_gister(
                "model",
                agent_settings.gist_words,
                agent_settings.gist_max_tokens,
                agent_settings.gist_batch,
                context_budget(agent_settings, model),
                view=view,
            )
            log = CallLog(model)
            gists = gister.gist_all(page.fragments, log, None)
            usage = log.usage()["gist"]
            compact = script.counter("\n".join(f.html for f in page.fragments))
            row.update({"fragments": len(page.fragments), "compact_tokens": compact})
            row[label] = {
                "calls": usage.calls,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "largest_call": max(c.input_tokens for c in log.calls),
                "x_compact": usage.input_tokens / compact,
            }
            named[label] = [shown_ids(g, page.element_ids) for g in gists]
            backend.requests.clear()
        single, batched, page_ids = named.values()
        row["same_ids_fragments"] = sum(a == b for a, b in zip(single, batched, strict=True))
        row["same_ids_as_page_ids"] = sum(a == b for a, b in zip(page_ids, batched, strict=True))
        rows.append(row)
        print(f"{path.name[:48]:48s} {row['fragments']:3d} fragments", flush=True)
    return rows


def step_rows(steps: list[Step], script: Script) -> list[dict[str, Any]]:
    runs: dict[str, tuple[str, int | None, bool, GistView]] = {
        "raw-html (cut to budget)": ("raw-html", None, True, "reading")
    }
    runs |= {
        f"readagent-p, {label}": ("readagent-p", b, True, view)
        for label, (b, view) in MODES.items()
    }
    runs[EVERY_PAGE] = ("readagent-p", None, False, "reading")
    rows = []
    for step in steps:
        row: dict[str, Any] = {"task_id": step.task_id, "step": step.index}
        for label, (agent, batch, whole, view) in runs.items():
            model, backend = scripted_model(script)
            agent_settings = settings(agent, batch, whole, view)
            page = segment_html(
                step.html, segment_settings(agent_settings, model), model.count_tokens
            )
            script.begin(step, page)
            trace = build_agent(agent_settings, model, None).step(
                Observation(task=step.task, previous_actions=step.previous, html=step.html)
            )
            backend.requests.clear()
            row[label] = {
                "input_tokens": sum(c.input_tokens for c in trace.calls),
                "calls": len(trace.calls),
                "gold_shown": any(i in trace.shown_element_ids for i in step.gold_ids),
                "read_whole": trace.read_whole,
                "error": trace.error_class,
            }
        rows.append(row)
    return rows


def tables(pages: list[dict[str, Any]], steps: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    summary: dict[str, Any] = {"pages": len(pages), "steps": len(steps), "budget": BUDGET}
    t1_rows = []
    for label in MODES:
        calls = [p[label]["calls"] for p in pages]
        x_compact = [p[label]["x_compact"] for p in pages]
        t1_rows.append(
            [
                label,
                median(calls),
                mean(calls),
                max(calls),
                median(x_compact),
                max(x_compact),
                mean([p[label]["input_tokens"] for p in pages]),
                max(p[label]["largest_call"] for p in pages),
            ]
        )
        summary[label] = {
            "gist_calls_median": median(calls),
            "gist_calls_max": max(calls),
            "gist_input_x_compact_median": median(x_compact),
            "gist_input_x_compact_max": max(x_compact),
        }
    same = sum(p["same_ids_fragments"] for p in pages)
    same_as_page_ids = sum(p["same_ids_as_page_ids"] for p in pages)
    total = sum(p["fragments"] for p in pages)
    summary["fragments_whose_gists_name_the_same_ids"] = f"{same}/{total}"
    summary["fragments_whose_numbered_gists_name_the_page_id_gists_ids"] = (
        f"{same_as_page_ids}/{total}"
    )
    t1 = markdown_table(
        [
            "gisting",
            "gist calls/page median",
            "mean",
            "max",
            "gist input ÷ page compact tokens, median",
            "max",
            "gist input tok/page mean",
            "largest call",
        ],
        t1_rows,
    )
    raw = "raw-html (cut to budget)"
    t2_rows = []
    for label in steps[0] if steps else []:
        if label in ("task_id", "step"):
            continue
        tokens = [s[label]["input_tokens"] for s in steps]
        ratio = [s[label]["input_tokens"] / s[raw]["input_tokens"] for s in steps]
        t2_rows.append(
            [
                label,
                mean(tokens),
                median(tokens),
                mean(tokens) / mean([s[raw]["input_tokens"] for s in steps]),
                median(ratio),
                mean([s[label]["calls"] for s in steps]),
                f"{mean([float(s[label]['gold_shown']) for s in steps]):.0%}",
                f"{mean([float(s[label]['read_whole']) for s in steps]):.0%}",
            ]
        )
        summary[label] = {
            "input_tokens_per_step_mean": mean(tokens),
            "x_raw_html_of_means": mean(tokens) / mean([s[raw]["input_tokens"] for s in steps]),
            "x_raw_html_median_per_step": median(ratio),
        }
    t2 = markdown_table(
        [
            "agent's steps, policy: BM25 look-up + gold act (no gist cache)",
            "input tok/step mean",
            "median",
            "× raw-html (of means)",
            "× raw-html (median per step)",
            "calls/step",
            "gold shown (under the policy)",
            "steps read whole",
        ],
        t2_rows,
    )
    text = (
        f"## Gist cost of a new page ({len(pages)} saved pages, budget {BUDGET}, SmolLM2 "
        f"tokenizer)\n\n{t1}\n\nBatched and single gists name the same element ids on "
        f"{same} of {total} fragments (scripted extractive gists: batching changes cost, not "
        f"which gist a fragment gets). Gists written against numbered controls name, once "
        f"their numbers are mapped back, the same ids as gists written against page ids on "
        f"{same_as_page_ids} of {total} fragments.\n\n## Input tokens per step, uncached "
        f"({len(steps)} grounding-task steps)\n\n{t2}\n\nA page that fits the act prompt whole "
        "is read whole by ReadAgent-P (one act call, the prompt raw-html shows); "
        "`read_whole_page=false` gists it anyway.\n\n"
        "Scripted answering policy (no model answers):\n"
        + "\n".join(f"- {k}: {v}" for k, v in POLICY.items())
    )
    return text, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_args(parser)
    parser.add_argument("--summary", type=Path, default=REPO / "bench" / "summaries")
    args = parser.parse_args()
    started = time.perf_counter()
    script = Script(real_counter())
    pages = sorted(args.pages.glob("*.html"))
    page_data = page_rows(pages[:6] if args.quick else pages, script)
    tasks_path = resolve_tasks(args)
    steps = load_steps(tasks_path, args.quick)
    step_data = step_rows(steps, script)
    text, summary = tables(page_data, step_data)
    prov = provenance(
        {"context_budget": BUDGET, "policy": POLICY, "quick": args.quick},
        {"pages_sha12": sha12(args.pages), "tasks_sha12": sha12(tasks_path)},
    )
    payload = {"provenance": prov, "wall_s": time.perf_counter() - started, "summary": summary}
    write_result(args.out, "gist_cost", {**payload, "pages": page_data, "steps": step_data}, text)
    write_summary("gist_cost", payload, text, args.summary)


if __name__ == "__main__":
    main()
