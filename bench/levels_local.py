"""Pages of any size with the embedded model: every step ends with an action, no gist blank.

Runs ReadAgent-P and ReadAgent-S with the embedded SmolLM2 (in-process, its own tokenizer
counting every budget) and extractive gists on every saved page of ``../shared/pages`` (the
task: the first intent task written for the page; no gold is read) and on the generated page
of ``tests/agents/big_page.py`` (about 5 MB, thousands of fragments), at 2K and 4K. Per step it
checks every gist line of every look-up prompt (``[Part N] (gist) ...`` and
``[Section N] (parts a-b) ...``): each keeps at least ``MIN_WORDS`` words, or all of its words
where the gist is shorter, and records whether the step ended with an action, the levels, the
look-up rounds and the time. Each finished step is appended to ``--steps`` (a JSON line with
the code's revision), and a run started again at the same revision skips the steps it has:
the whole run takes hours on two cores.

The model is near chance: this proves the plumbing (levels, floors, an action at the end),
never the method's quality.

    PYTHONPATH=. python bench/levels_local.py [--budgets 2048,4096] [--agents a,b] [--limit N]
        [--steps bench/results/levels_local.steps.jsonl]
"""

from __future__ import annotations

import argparse
import json
import re
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from benchkit import (
    EMBEDDED_CAVEAT,
    REPO,
    WRITTEN_BY_BENCHES,
    find_shared,
    local_model,
    markdown_table,
    median,
    publish,
    sha12,
)

from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import Observation, StepTrace
from webagent.method.levels import gist_words
from webagent.provenance import git_revision

sys.path.insert(0, str(REPO / "tests" / "agents"))
from big_page import big_page  # the generated page the level tests use

#: the least words a gist line of a look-up prompt keeps (issue 20: "at least 5 words")
MIN_WORDS = 5
_LINE = re.compile(r"^\[(Part|Section) (\d+)\] \((?:gist|parts? [\d-]+)\) ?(.*)$", re.MULTILINE)
BIG_PAGE_TASK = "Save the cheapest bike in Leeds"
SHARED = find_shared()


def page_tasks(limit: int | None) -> tuple[list[tuple[str, str, str]], int]:
    """``(name, task, html)`` for the first ``limit`` saved pages (by site; all by default),
    each with its first intent task, then the big page; and how many saved pages there are."""
    out = Path(tempfile.mkdtemp(prefix="levels-")) / "intent_tasks.json"
    specs = sorted((SHARED / "intent_tasks").glob("specs_*.jsonl"))
    tool = SHARED / "tools" / "build_intent_tasks.py"
    command = [sys.executable, str(tool), str(SHARED / "pages"), *map(str, specs)]
    subprocess.run([*command, "--out", str(out)], check=True, capture_output=True)
    seen: dict[str, tuple[str, str, str]] = {}
    for task in json.loads(out.read_text(encoding="utf-8")):
        html = task["actions"][0]["cleaned_html"]
        seen.setdefault(html, (task["website"], task["confirmed_task"], html))
    pages = sorted(seen.values())[:limit]
    big = ("generated big page (tests/agents/big_page.py)", BIG_PAGE_TASK, big_page())
    return [*pages, big], len(seen)


def below_floor(trace: StepTrace) -> tuple[int, int]:
    """Gist lines of the step's look-up prompts, and how many keep fewer than ``MIN_WORDS``
    words where their gist has more."""
    lines = short = 0
    for call in trace.calls:
        if call.phase != "lookup":
            continue
        for kind, number, gist in _LINE.findall(call.prompt[-1]["content"]):
            whole = trace.gists[int(number) - 1] if kind == "Part" else gist
            lines += 1
            short += gist_words(gist) < min(MIN_WORDS, gist_words(whole))
    return lines, short


def done_steps(path: Path, revision: str | None) -> dict[tuple[str, str], dict[str, Any]]:
    """The steps ``path`` holds from a run at ``revision``, by (agent @ budget, page)."""
    if not path.exists() or revision is None or revision.endswith("+dirty"):
        return {}
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line]
    kept = {(r["key"], r["page"]): r for r in rows if r["revision"] == revision}
    if len(kept) < len(rows):
        print(f"{path}: {len(rows) - len(kept)} steps from another revision are run again")
    return kept


def run(
    agent: str,
    budget: int,
    pages: list[tuple[str, str, str]],
    steps: Path,
    revision: str | None,
) -> list[dict[str, Any]]:
    key = f"{agent} @{budget // 1024}K"
    done = done_steps(steps, revision)
    settings = AgentSettings(agent=agent, context_budget=budget, gister="extractive")  # type: ignore[arg-type]
    built = build_agent(settings, local_model())
    rows = []
    for name, task, html in pages:
        if (key, name) in done:
            rows.append(done[(key, name)])
            continue
        started = time.perf_counter()
        trace = built.step(Observation(task=task, previous_actions=[], html=html))
        lines, short = below_floor(trace)
        rows.append(
            {
                "page": name,
                "bytes": len(html.encode("utf-8")),
                "fragments": trace.n_fragments,
                "read_whole": trace.read_whole,
                "levels": max((s.depth for s in trace.sections), default=0),
                "lookup_rounds": len(trace.lookup),
                "gist_lines": lines,
                "below_floor": short,
                "action": trace.action.op.value if trace.action else None,
                "error": trace.error_class,
                "seconds": time.perf_counter() - started,
            }
        )
        row = rows[-1]
        with steps.open("a", encoding="utf-8") as lines_file:
            lines_file.write(json.dumps({"key": key, "revision": revision, **row}) + "\n")
        print(
            f"{agent} @{budget}: {name[:40]:40} {row['fragments']:5} fragments, "
            f"levels {row['levels']}, {lines} gist lines ({short} below floor), "
            f"{row['action'] or row['error']}, {row['seconds']:.1f} s",
            flush=True,
        )
    return rows


def table(results: dict[str, list[dict[str, Any]]], scope: str) -> tuple[str, dict[str, Any]]:
    rows, summary = [], {}
    for key, steps in results.items():
        figures = {
            "pages": len(steps),
            "levelled": sum(r["levels"] > 0 for r in steps),
            "read_whole": sum(bool(r["read_whole"]) for r in steps),
            "ended_with_action": sum(r["action"] is not None for r in steps),
            "gist_lines": sum(r["gist_lines"] for r in steps),
            "below_floor": sum(r["below_floor"] for r in steps),
            "most_fragments": max((r["fragments"] for r in steps), default=0),
            "seconds_median": median([r["seconds"] for r in steps]),
        }
        summary[key] = figures
        rows.append([key, *figures.values()])
    headers = [
        "agent @ budget",
        "pages",
        "with levels",
        "read whole",
        "ended with an action",
        "look-up gist lines",
        f"below {MIN_WORDS} words",
        "most fragments",
        "s/step median",
    ]
    met = all(
        f["ended_with_action"] == f["pages"] and f["below_floor"] == 0 for f in summary.values()
    )
    text = (
        "## Pages of any size with the embedded model (extractive gists)\n\n"
        f"{markdown_table(headers, rows)}\n\n"
        f"{scope} and the generated big page, one step each, SmolLM2 answering and counting. "
        "Target: every step ends with an action and no gist "
        f"line of a look-up prompt keeps fewer than {MIN_WORDS} words (unless its gist is "
        f"shorter): {'met' if met else 'NOT met'}.\n\n{EMBEDDED_CAVEAT}."
    )
    return text, summary


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--budgets", default="2048,4096")
    parser.add_argument("--agents", default="readagent-p,readagent-s")
    parser.add_argument("--limit", type=int, default=None, help="first N saved pages")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    parser.add_argument(
        "--steps",
        type=Path,
        default=REPO / "bench" / "results" / "levels_local.steps.jsonl",
        help="finished steps, one JSON line each; a run at the same revision resumes from it",
    )
    args = parser.parse_args()
    args.steps.parent.mkdir(parents=True, exist_ok=True)
    revision = git_revision(REPO, ignore=WRITTEN_BY_BENCHES)
    started = time.perf_counter()
    pages, saved = page_tasks(args.limit)
    shown = len(pages) - 1
    scope = (
        f"Every saved page ({saved}, each with its first intent task)"
        if shown == saved
        else f"{shown} of the {saved} saved pages (the first by site, `--limit {args.limit}`; "
        "each with its first intent task)"
    )
    budgets = [int(b) for b in args.budgets.split(",")]
    agents = args.agents.split(",")
    results = {
        f"{agent} @{budget // 1024}K": run(agent, budget, pages, args.steps, revision)
        for agent in agents
        for budget in budgets
    }
    text, summary = table(results, scope)
    publish(
        "levels_local",
        args.out,
        settings={
            "budgets": budgets,
            "agents": agents,
            "gister": "extractive",
            "limit": args.limit,
        },
        data={"pages_sha12": sha12(SHARED / "pages"), "pages": f"{shown} of {saved} + 1"},
        started=started,
        text=text,
        scope=scope,
        summary=summary,
        steps=results,
    )


if __name__ == "__main__":
    main()
