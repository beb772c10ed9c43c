"""Can I trust ``--plan``'s cost before a run? The plan beside what a real run spent.

For each agent, ``webagent eval`` runs on ``mind2web_eval/samples/sample_tasks.json`` with the
embedded SmolLM2 (default settings, no gist cache); the run writes its own plan
(``plan.json``, made with no model call before the first step) and this script puts it beside
the usage recorded in ``results.jsonl``: calls must match exactly, tokens within 10 %.
Every agent, the embedded model, the bundled tasks. The answers are the embedded model's
(near chance): only the cost figures mean anything.

    python bench/figures/plan_accuracy.py [--agents readagent-p,raw-html] [--limit N]
"""

from __future__ import annotations

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench.kit import EMBEDDED_CAVEAT, REPO, figure_parser, markdown_table, publish
from mind2web_eval.report.plan import plan_vs_spent
from webagent.agents.registry import AGENT_NAMES

SAMPLES = REPO / "mind2web_eval" / "samples" / "sample_tasks.json"


#: how a row runs its agent: as configured, or gisting pages that would fit whole
GISTED = " (every page gisted)"


def run_agent(label: str, out: Path, limit: int | None) -> tuple[list[dict[str, Any]], float]:
    agent = label.removesuffix(GISTED)
    command = [sys.executable, "-m", "webagent", "eval", "--data", str(SAMPLES), "--out"]
    command += [str(out), "--agent", agent, "--no-gist-cache", "--no-progress"]
    command += ["--limit", str(limit)] if limit else []
    command += ["--set", "agent.read_whole_page=false"] if label.endswith(GISTED) else []
    started = time.perf_counter()
    subprocess.run(command, check=False, capture_output=True, env=dict(os.environ))
    rows = plan_vs_spent(out)
    if rows is None:
        raise SystemExit(f"{agent}: the run wrote no plan.json ({' '.join(command)})")
    return rows, time.perf_counter() - started


def main() -> None:
    parser = figure_parser(__doc__)
    parser.add_argument("--agents", default=",".join(AGENT_NAMES))
    parser.add_argument(
        "--gisted",
        default="readagent-p,readagent-s",
        help="agents run a second time with every page gisted (the sample pages fit the "
        "budget whole, so ReadAgent reads them whole by default); '' for none",
    )
    parser.add_argument("--limit", type=int, help="first N sample tasks only (a busy machine)")
    args = parser.parse_args()
    started = time.perf_counter()
    table_rows, per_agent = [], []
    with tempfile.TemporaryDirectory(prefix="plan-accuracy-") as tmp:
        labels = args.agents.split(",")
        labels += [a + GISTED for a in args.gisted.split(",") if a]
        for n, agent in enumerate(labels):
            rows, wall = run_agent(agent, Path(tmp) / str(n), args.limit)
            total = rows[-1]
            tokens_p = total["input_tokens_planned"] + total["output_tokens_planned"]
            tokens_s = total["input_tokens_spent"] + total["output_tokens_spent"]
            in_ratio = total["input_tokens_spent"] / max(total["input_tokens_planned"], 1)
            all_ratio = tokens_s / max(tokens_p, 1)
            calls_exact = total["calls_planned"] == total["calls_spent"]
            # the plan's assumptions are the most a step can cost: spent never exceeds it
            bound = all(
                r[f"{k}_spent"] <= r[f"{k}_planned"]
                for r in rows
                for k in ("calls", "input_tokens")
            )
            per_agent.append(
                {
                    "agent": agent,
                    "wall_s": wall,
                    "rows": rows,
                    "input_spent_over_plan": in_ratio,
                    "tokens_spent_over_plan": all_ratio,
                    "calls_exact": calls_exact,
                    "input_within_10pct": abs(in_ratio - 1) <= 0.10,
                    "upper_bound_holds": bound,
                }
            )
            table_rows.append(
                [
                    agent,
                    total["steps"],
                    f"{total['calls_planned']} / {total['calls_spent']}",
                    "yes" if calls_exact else "NO",
                    f"{total['input_tokens_planned']:,} / {total['input_tokens_spent']:,}",
                    f"{in_ratio:.3f}",
                    f"{total['output_tokens_planned']:,} / {total['output_tokens_spent']:,}",
                    f"{all_ratio:.3f}",
                    "yes" if bound else "NO",
                    f"{wall:.0f}",
                ]
            )
            print(" | ".join(str(c) for c in table_rows[-1]), flush=True)
            write(args, table_rows, per_agent, started)  # what is done survives a timeout
    write(args, table_rows, per_agent, started)


def write(
    args: Any,
    table_rows: list[list[Any]],
    per_agent: list[dict[str, Any]],
    started: float,
) -> None:
    phases = [
        [a["agent"], r["phase"], f"{r['calls_planned']} / {r['calls_spent']}",
         f"{r['input_tokens_planned']:,} / {r['input_tokens_spent']:,}",
         f"{r['output_tokens_planned']:,} / {r['output_tokens_spent']:,}"]
        for a in per_agent for r in a["rows"][:-1]
    ]  # fmt: skip
    text = (
        "## --plan beside the ledger of a real run (embedded SmolLM2, bundled sample tasks, "
        "no gist cache)\n\n"
        + markdown_table(
            "agent | steps | calls plan / spent | calls exact | input tok plan / spent"
            " | input spent ÷ plan | output tok plan / spent | all tok spent ÷ plan"
            " | spent ≤ plan (calls, input, every phase) | wall s",
            table_rows,
        )
        + "\n\nBy phase:\n\n"
        + markdown_table("agent | phase | calls | input tok | output tok", phases)
        + f"\n\nThe sample pages fit the budget whole, so ReadAgent-P and -S read them whole "
        f"(one act call); the rows marked{GISTED} set agent.read_whole_page=false. "
        "The plan assumes full-length gists that each name an id, a look-up that reopens "
        "max_lookup parts, ReadAgent-S never stopping early and a valid first act answer: the "
        "most a step costs. Where a model's gists are shorter, name no id (no act call: nothing "
        "to act on) or it says STOP early, a run spends less; the figures are then an upper "
        f"bound, not a forecast. {EMBEDDED_CAVEAT}."
    )
    settings = {"data": str(SAMPLES.relative_to(REPO)), "agents": args.agents,
                "gisted": args.gisted, "limit": args.limit}  # fmt: skip
    publish("plan_accuracy", args, settings=settings, data={}, started=started, text=text,
            agents=per_agent)  # fmt: skip


if __name__ == "__main__":
    main()
