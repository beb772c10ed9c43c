"""Reuse across steps: how many fragments of a page state the gist cache already knows from the
state before it, with this tree's segmenter and with a baseline revision's, in the same run.

A gist is cached under its fragment's ``path + "\\n" + html`` (``webagent/gist/gister.py``), so a
fragment of the second state is *answered by the cache* when a fragment of the first state had
the same path and html. Pairs of consecutive page states come from:

* ``intent``: the multi-step tasks of ``../shared/intent_tasks`` (built into Mind2Web records
  by ``../shared/tools/build_intent_tasks.py``); state k+1 is state k with the value of its
  TYPE/SELECT step applied to the target element as ``input_value``, as Mind2Web records it;
* ``live``: the saved pages driven in Chromium (scripts removed), observed by the live
  runner's own ``observe`` (CDP snapshot, backend node ids): typing into a form, opening a
  menu, adding a list item;
* ``miniwob``: seeded MiniWoB++ episodes, each text field typed into in turn, then a tab or
  collapsible section opened (``--no-live`` skips these and the live pairs);

Each pair is segmented with the plan the agents use at each budget (``segment_settings`` with
the agent defaults, estimate counter), by this tree (``ours``) and by ``--baseline`` (default
``main``, unpacked with ``git archive`` into a temporary folder and run in a subprocess), same
pairs, same run.

    PYTHONPATH=. python bench/page_states.py [--baseline main] [--out bench/summaries]
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from lxml import etree

BENCH = Path(__file__).resolve().parent
sys.path.insert(0, str(BENCH))

from benchkit import REPO, SHARED, markdown_table, median, provenance  # noqa: E402

BUDGETS = (8192, 2048)


# ---------------------------------------------------------------- pairs of page states


def intent_pairs(tasks_json: Path) -> list[dict[str, str]]:
    """(state before, state after) for every TYPE/SELECT step of the multi-step intent tasks."""
    pairs = []
    for task in json.loads(tasks_json.read_text(encoding="utf-8")):
        actions = task["actions"]
        if len(actions) < 2:
            continue
        html = actions[0]["cleaned_html"]
        for k, action in enumerate(actions[:-1]):
            op = action["operation"]
            if op["op"] not in ("TYPE", "SELECT"):
                continue
            target = json.loads(action["pos_candidates"][0]["attributes"])["backend_node_id"]
            after = _with_value(html, target, op["value"])
            pairs.append(
                {
                    "source": "intent",
                    "name": f"{task['website']}:{task['annotation_id'][:8]}:{k}",
                    "change": f"{op['op']} into {target}",
                    "a": html,
                    "b": after,
                }
            )
            html = after
    return pairs


def _with_value(html: str, backend_id: str, value: str) -> str:
    root = etree.fromstring(html.encode("utf-8"), etree.HTMLParser(encoding="utf-8"))
    hits = root.xpath(f'//*[@backend_node_id="{backend_id}"]')
    if not hits:
        raise SystemExit(f"intent task: no element with backend_node_id={backend_id}")
    hits[0].set("input_value", value)
    return etree.tostring(root, encoding="unicode", method="html")


def live_pairs() -> list[dict[str, str]]:
    """Consecutive states of saved pages and MiniWoB++ episodes driven in Chromium (see
    live_states.py)."""
    from live_states import capture, miniwob_pairs

    return capture() + miniwob_pairs()


# ----------------------------------------- measuring (bench/state_measure.py, also in baseline)


def plans() -> dict[int, dict[str, Any]]:
    """The agents' own segmentation plan at each budget (estimate counter, agent defaults)."""
    from pagetime import agent_plan

    return {budget: agent_plan(budget).model_dump() for budget in BUDGETS}


def run_measure(code: Path, pairs_path: Path, plans_path: Path) -> list[dict[str, Any]]:
    """``state_measure.py`` in a subprocess that imports webagent from ``code`` and nothing of
    this checkout's (a baseline has no ``webagent.provenance``, which benchkit imports)."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    done = subprocess.run(
        [sys.executable, str(BENCH / "state_measure.py"), str(pairs_path), str(plans_path)],
        env=env,
        capture_output=True,
        text=True,
        check=False,
    )
    if done.returncode:
        raise SystemExit(f"measuring with {code} failed:\n{done.stderr[-2000:]}")
    rows: list[dict[str, Any]] = json.loads(done.stdout)
    return rows


def unpack(revision: str, into: Path) -> Path:
    """The package tree of ``revision`` (``git archive``), without touching any worktree."""
    archive = subprocess.run(
        ["git", "archive", revision, "webagent", "prompts"], cwd=REPO, capture_output=True,
        check=True,
    ).stdout  # fmt: skip
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


# ---------------------------------------------------------------- report


def summarise(ours: list[dict[str, Any]], base: list[dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    sources = sorted({r["source"] for r in ours})
    for source in [*sources, "all"]:
        for budget in BUDGETS:

            def pick(rows: list[dict[str, Any]], s: str = source, b: int = budget) -> list[Any]:
                return [r for r in rows if r["budget"] == b and s in ("all", r["source"])]

            o, t = pick(ours), pick(base)
            if not o:
                continue
            out.append(
                {
                    "source": source,
                    "budget": budget,
                    "pairs": len(o),
                    "baseline_median": median([r["share"] for r in t]),
                    "ours_median": median([r["share"] for r in o]),
                    "baseline_pooled": sum(r["cached"] for r in t) / sum(r["fragments"] for r in t),
                    "ours_pooled": sum(r["cached"] for r in o) / sum(r["fragments"] for r in o),
                    "baseline_fragments": median([r["fragments"] for r in t]),
                    "ours_fragments": median([r["fragments"] for r in o]),
                    "ours_all_reused": sum(r["cached"] == r["fragments"] for r in o),
                }
            )
    return out


def table(summary: list[dict[str, Any]], baseline: str) -> str:
    rows = [
        [s["source"], s["budget"], s["pairs"], f"{s['baseline_median']:.0%}",
         f"{s['ours_median']:.0%}", f"{s['baseline_pooled']:.0%}", f"{s['ours_pooled']:.0%}",
         f"{s['baseline_fragments']:g}", f"{s['ours_fragments']:g}"]
        for s in summary
    ]  # fmt: skip
    return markdown_table(
        ["pairs from", "budget", "pairs", f"cached share, median ({baseline})",
         "cached share, median (ours)", f"pooled ({baseline})", "pooled (ours)",
         f"fragments, median ({baseline})", "fragments, median (ours)"],
        rows,
    )  # fmt: skip


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--baseline",
        default=None,
        help="git revision to compare with (default: merge-base with main)",
    )
    parser.add_argument("--tasks", type=Path, help="intent tasks JSON (default: build it)")
    parser.add_argument(
        "--no-live", action="store_true", help="skip the Chromium pairs (live and MiniWoB++)"
    )
    parser.add_argument("--out", type=Path, default=BENCH / "summaries")
    args = parser.parse_args()
    baseline = args.baseline or _git("merge-base", "HEAD", "main")
    with tempfile.TemporaryDirectory(prefix="page-states-") as tmp:
        work = Path(tmp)
        tasks = args.tasks or _build_intent_tasks(work)
        pairs = intent_pairs(tasks)
        if not args.no_live:
            pairs += live_pairs()
        pairs_path, plans_path = work / "pairs.json", work / "plans.json"
        pairs_path.write_text(json.dumps(pairs))
        plan = plans()
        plans_path.write_text(json.dumps(plan))
        base_code = unpack(baseline, work / "baseline")
        base = run_measure(base_code, pairs_path, plans_path)
        ours = run_measure(REPO, pairs_path, plans_path)
    summary = summarise(ours, base)
    label = _git("rev-parse", "--short", baseline)
    if args.baseline is None:
        label = f"merge-base with main {label}"
    text = (
        f"## Reuse across steps: fragments of the second page state answered by the gist "
        f"cache ({len(pairs)} pairs of consecutive states; ours vs {label}, same run)\n\n"
        + table(summary, "baseline")
        + "\n\nA fragment is answered when the first state had one with the same path and html "
        "(the gist cache key). Plans: the agents' own (`segment_settings`, agent defaults) at "
        "each budget, estimate counter. 'pooled': cached fragments / all fragments over the pairs. "
        "MiniWoB++ pages are one to three fragments, so the fragment holding the typed field is "
        "most of the page: nothing to reuse there, by either algorithm.\n"
        "\nCommand: `PYTHONPATH=. python bench/page_states.py" + _flags(args) + "`"
    )
    args.out.mkdir(parents=True, exist_ok=True)
    payload = {
        "provenance": provenance({"budgets": list(BUDGETS), "plans": plan}, {}),
        "baseline": label,
        "summary": summary,
        "pairs": {"ours": ours, "baseline": base},
    }
    (args.out / "page_states.json").write_text(json.dumps(payload, indent=1) + "\n")
    (args.out / "page_states.md").write_text(text + "\n")
    print(text)


def _flags(args: argparse.Namespace) -> str:
    flags = "" if args.baseline is None else f" --baseline {args.baseline}"
    return flags + (" --no-live" if args.no_live else "")


def _git(*argv: str) -> str:
    done = subprocess.run(["git", *argv], cwd=REPO, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def _build_intent_tasks(work: Path) -> Path:
    out = work / "intent_tasks.json"
    tool = SHARED / "tools" / "build_intent_tasks.py"
    specs = sorted((SHARED / "intent_tasks").glob("specs_*.jsonl"))
    if not tool.exists() or not specs:
        raise SystemExit(f"no intent tasks: {tool} or {SHARED / 'intent_tasks'} missing")
    subprocess.run(
        [sys.executable, str(tool), str(SHARED / "pages"), *map(str, specs), "--out", str(out)],
        check=True, capture_output=True,
    )  # fmt: skip
    return out


if __name__ == "__main__":
    main()
