"""How often does each agent finish live tasks, with a capable model? BrowserGym MiniWoB++.

Every configuration is a real ``webagent browsergym`` run over all 125 MiniWoB++ tasks, seeds
0-2, at most 10 steps, with the batch backend answered only from
``bench/data/live_answers/answers.jsonl`` (request key -> answer; how they were made: that
folder's README). Chromium, no model, no network. An episode whose next request has no answer
yet is *pending*: named, never counted as a failure.

    python bench/figures/live_quality.py          # replay; bench/summaries/live_quality.*
    python bench/figures/live_quality.py --check  # replay a fixed sample of the committed
                                                  # episodes; fail if one loses its reward
    python bench/figures/live_quality.py --requests DIR --work DIR
                                                  # the requests still to answer, a folder a row

``--work DIR`` keeps the run folders, so that rounds of answering resume instead of starting
over. ``--configs`` and ``--tasks`` narrow a run (a trial; the summary then says so).
"""

from __future__ import annotations

import contextlib
import hashlib
import io
import json
import random
import sys
import tempfile
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from bench.kit import REPO, figure_parser, markdown_table, provenance
from bench.kit.answers import MODEL, write_requests
from webagent.cli import main as webagent_main
from webagent.model.answer_file import read_answers

ANSWERS_DIR = REPO / "bench" / "data" / "live_answers"
ANSWERS = ANSWERS_DIR / "answers.jsonl"
SEEDS = (0, 1, 2)
MAX_STEPS = 10
#: the window the batch backend is told; every configuration's budget is below it
WINDOW = 131072
#: episodes replayed by ``--check`` (a fixed sample, a few minutes)
CHECK_SAMPLE = 12

#: AgentLab's GenericAgent on all 125 MiniWoB++ tasks x 5 seeds (625 episodes): success rate
#: and standard error as published in ServiceNow/AgentLab reproducibility_journal.csv
#: (commit 69cd893); other models and seeds than ours, so a yardstick, not the same run
GENERIC_AGENT = (
    ("Claude-3.5-Sonnet", 0.698, 0.018, "2024-10-25"),
    ("o1-mini", 0.678, 0.019, "2024-10-25"),
    ("Llama-3.1-405B", 0.646, 0.019, "2024-11-29"),
    ("GPT-4o", 0.638, 0.019, "2024-10-25"),
    ("GPT-4o-mini", 0.566, 0.020, "2024-10-25"),
)


@dataclass(frozen=True)
class Config:
    agent: str
    budget: int

    @property
    def slug(self) -> str:
        return f"{self.agent}-{self.budget // 1024}k"

    @property
    def label(self) -> str:
        return f"{self.agent} @{self.budget // 1024}K"


CONFIGS = (
    Config("readagent-p", 8192),
    Config("raw-html", 8192),
    Config("axtree", 8192),
    Config("readagent-p", 2048),
)


def all_tasks() -> list[str]:
    """BrowserGym's 125 MiniWoB++ task ids."""
    import browsergym.miniwob  # noqa: F401 - registers the tasks
    import gymnasium as gym

    return sorted(e for e in gym.envs.registry if e.startswith("browsergym/miniwob."))


def run_config(
    config: Config, tasks: list[str], seeds: str, out: Path, *, replay: bool = False
) -> int:
    """One ``webagent browsergym`` of ``config``, ``seeds`` as for ``--seeds``; 0, 4/5 pending."""
    argv = [
        "--log-level", "error", "browsergym", "--task", ",".join(tasks),
        "--seeds", seeds, "--max-steps", str(MAX_STEPS), "--out", str(out),
        "--agent", config.agent, "--context-budget", str(config.budget),
        "--token-counter", "estimate", "--no-screenshots", "--model", MODEL,
        "--set", f"model.context_window={WINDOW}", "--gist-cache", str(out / "gists.sqlite"),
    ]  # fmt: skip
    if replay:
        argv += ["--replay", str(ANSWERS)]
    else:
        argv += ["--backend", "batch", "--set", f"model.answers_from=[{json.dumps(str(ANSWERS))}]"]
    with contextlib.redirect_stdout(io.StringIO()):  # the run's own table; ours comes after
        return webagent_main(argv)


def episode_rows(config: Config, out: Path) -> list[dict[str, Any]]:
    report = json.loads((out / "report.json").read_text("utf-8"))
    rows = []
    for e in report["episodes"]:
        failures = e["episode"].get("failures", {})
        rows.append(
            {
                "config": config.slug, "task": e["task"].removeprefix("browsergym/miniwob."),
                "seed": e["seed"], "status": e["status"], "reward": e["reward"],
                "success": bool(e["success"]), "steps": e["steps"],
                "input_tokens": e["input_tokens"], "calls": e.get("calls", 0),
                "failures": dict(sorted(failures.items())),
            }
        )  # fmt: skip
    return rows


def bootstrap_ci(episodes: list[dict[str, Any]], resamples: int = 2000) -> list[float]:
    """95 % interval of the success rate, resampling tasks (an episode's seeds go together)."""
    by_task: dict[str, list[float]] = {}
    for e in episodes:
        by_task.setdefault(e["task"], []).append(1.0 if e["success"] else 0.0)
    groups = list(by_task.values())
    rng = random.Random(0)
    rates = []
    for _ in range(resamples):
        drawn = [rng.choice(groups) for _ in groups]
        flat = [x for g in drawn for x in g]
        rates.append(sum(flat) / len(flat))
    rates.sort()
    return [round(rates[int(0.025 * resamples)], 4), round(rates[int(0.975 * resamples)], 4)]


def config_figures(config: Config, episodes: list[dict[str, Any]]) -> dict[str, Any]:
    ended = [e for e in episodes if e["status"] != "pending"]
    n, won, pending = len(ended) or 1, sum(e["success"] for e in ended), len(episodes) - len(ended)
    failures = sum((Counter(e["failures"]) for e in ended), Counter[str]())
    return {
        "config": config.slug, "label": config.label, "agent": config.agent,
        "budget": config.budget, "episodes": len(episodes), "ended": len(ended),
        "pending": pending,
        "success_rate": round(won / n, 4) if ended else None,
        "success_ci": bootstrap_ci(ended) if ended else None,
        # over every episode: each pending one failed, each one succeeded (the short ones end
        # first, so while some are pending the rate over the ended ones is not the rate)
        "success_bounds": [round(w / len(episodes), 4) for w in (won, won + pending)],
        "mean_steps": round(sum(e["steps"] for e in ended) / n, 2),
        "input_tokens_per_episode": round(sum(e["input_tokens"] for e in ended) / n, 1),
        "calls_per_episode": round(sum(e["calls"] for e in ended) / n, 2),
        "errors": sum(e["status"] == "error" for e in ended),
        "failures_by_kind": dict(failures.most_common()),
    }  # fmt: skip


def _pct(value: float | None, ci: list[float] | None = None) -> str:
    if value is None:
        return "—"
    return f"{100 * value:.1f}" + (f" [{100 * ci[0]:.1f}, {100 * ci[1]:.1f}]" if ci else "")


def tables(rows: list[dict[str, Any]], episodes: list[dict[str, Any]]) -> str:
    main = markdown_table(
        ["agent @budget", "success % of ended [95% CI]", "of all, pending failed – succeeded",
         "episodes ended / all", "pending", "mean steps", "input tok/episode", "calls/episode",
         "errors", "failed actions by kind"],
        [[r["label"], _pct(r["success_rate"], r["success_ci"]),
          " – ".join(f"{100 * b:.1f}" for b in r["success_bounds"]),
          f"{r['ended']} / {r['episodes']}",
          r["pending"], r["mean_steps"], f"{r['input_tokens_per_episode']:,.0f}",
          r["calls_per_episode"], r["errors"],
          ", ".join(f"{k} {v}" for k, v in r["failures_by_kind"].items()) or "—"] for r in rows],
    )  # fmt: skip
    reference = markdown_table(
        ["GenericAgent (AgentLab) with", "success %", "std err", "date"],
        [[m, f"{100 * s:.1f}", f"{100 * se:.1f}", d] for m, s, se, d in GENERIC_AGENT],
    )
    per_task = markdown_table(
        ["task", *[r["label"] for r in rows]],
        [[task, *[_task_cell(episodes, r["config"], task) for r in rows]]
         for task in sorted({e["task"] for e in episodes})],
    )  # fmt: skip
    beside = "Beside it, AgentLab's published GenericAgent (other models, 5 seeds, not this run):"
    return "\n\n".join([main, beside, reference, "## Per task (successes / ended)", per_task])


def _task_cell(episodes: list[dict[str, Any]], config: str, task: str) -> str:
    mine = [e for e in episodes if e["config"] == config and e["task"] == task]
    ended = [e for e in mine if e["status"] != "pending"]
    cell = f"{sum(e['success'] for e in ended)}/{len(ended)}"
    return cell + (f" (+{len(mine) - len(ended)} pending)" if len(ended) < len(mine) else "")


def plot(rows: list[dict[str, Any]], path: Path, answered_by: str) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    shown = [r for r in rows if r["success_rate"] is not None]
    figure, axes = plt.subplots(figsize=(9, 5))
    for i, r in enumerate(shown):
        low, high = r["success_ci"]
        axes.bar(i, 100 * r["success_rate"], color="tab:blue")
        rate = 100 * r["success_rate"]
        spread = [[rate - 100 * low], [100 * high - rate]]
        axes.errorbar(i, rate, yerr=spread, fmt="none", ecolor="black", capsize=4)
        if r["pending"]:  # where the rate over all episodes lies, pending ones failed or not
            floor, ceiling = (100 * b for b in r["success_bounds"])
            axes.vlines(i + 0.45, floor, ceiling, color="tab:orange", linewidth=4)
    for model, rate, _se, _date in GENERIC_AGENT[::2]:
        axes.axhline(100 * rate, color="gray", linestyle="--", linewidth=0.8)
        axes.text(len(shown) - 0.45, 100 * rate + 0.6, f"GenericAgent, {model}", fontsize=7)
    axes.set_xticks(range(len(shown)), [r["label"] for r in shown], fontsize=8)
    axes.set_ylabel("ended episodes succeeded, % (95% CI by task)")
    axes.set_ylim(0, 100)
    title = f"BrowserGym MiniWoB++, 125 tasks x seeds 0-2; answers by {answered_by}\n"
    title += "dashed: AgentLab's published GenericAgent (other models, 5 seeds)\n"
    title += "orange: the rate over all episodes lies there (pending ones failed – succeeded)"
    axes.set_title(title, fontsize=8)
    figure.tight_layout()
    figure.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(figure)


def summary(
    rows: list[dict[str, Any]], episodes: list[dict[str, Any]], scope: str
) -> tuple[dict[str, Any], str]:
    missing = [c.label for c in CONFIGS if c.slug not in {r["config"] for r in rows}]
    about = json.loads((ANSWERS_DIR / "answered_at.json").read_text("utf-8"))
    payload = {
        "schema_version": 1,
        "benchmark": "live_quality",
        "scope": scope,
        "answers": {
            "file": str(ANSWERS.relative_to(REPO)),
            "sha256": hashlib.sha256(ANSWERS.read_bytes()).hexdigest(),
            **about,
        },
        "model_name_in_requests": MODEL,
        "generic_agent_published": [
            {"model": m, "success_rate": s, "std_err": se, "date": d, "episodes": 625}
            for m, s, se, d in GENERIC_AGENT
        ],
        "configs": rows,
        "episodes": episodes,
        **provenance({"seeds": list(SEEDS), "max_steps": MAX_STEPS}, {}),
    }
    pending = sum(r["pending"] for r in rows)
    text = "\n".join([
        f"# Live tasks with a capable model: BrowserGym MiniWoB++ ({scope})", "",
        f"Answers: {about.get('answered_by', '?')}; replayed by "
        "`python bench/figures/live_quality.py` (Chromium, no model, no network). Success is "
        "BrowserGym's reward > 0 over the episodes that ended; pending episodes (a request not "
        "answered yet) are counted apart, never as failures. 95% CIs by a task-level bootstrap. "
        "The episodes that end first are the short ones, so while episodes are pending the rate "
        "over the ended ones is not the agent's rate: the next column bounds it over all the "
        "episodes (every pending one failed, every one succeeded).",
        *([f"Not run yet: {', '.join(missing)}."] if missing else []),
        "", tables(rows, episodes), "",
        f"{pending} episodes pending." if pending else "Every episode is answered.",
        "Plot: bench/summaries/live_quality.png",
    ])  # fmt: skip
    return payload, text


def check(configs: list[Config], work: Path, summaries: Path) -> int:
    """Replay a fixed sample of the committed ended episodes with ``--replay`` (a miss is
    pending, not a failure); fail when one no longer earns its committed reward."""
    committed = json.loads((summaries / "live_quality.json").read_text("utf-8"))["episodes"]
    ended = [e for e in committed if e["status"] not in ("pending", "error")]
    sample = random.Random(0).sample(ended, min(CHECK_SAMPLE, len(ended)))
    wrong = []
    for number, e in enumerate(sample, start=1):
        config = next(c for c in configs if c.slug == e["config"])
        out = work / f"check-{number:02d}"
        seed = f"{e['seed']}-{e['seed']}"  # one seed: a lone N would be seeds 0..N-1
        run_config(config, [f"browsergym/miniwob.{e['task']}"], seed, out, replay=True)
        again = json.loads((out / "report.json").read_text("utf-8"))["episodes"][0]
        same = again["reward"] == e["reward"] and again["status"] == e["status"]
        where = f"{e['config']} {e['task']} seed {e['seed']}"
        now = f"{e['reward']} -> {again['reward']} ({again['status']})"
        print(f"[{number}/{len(sample)}] {where}: {now}", file=sys.stderr)
        if not same:
            wrong.append(where)
    print("live_quality: " + ("FAILED: " + ", ".join(wrong) if wrong else
          f"{len(sample)} sampled episodes reach their committed rewards"))  # fmt: skip
    return 1 if wrong else 0


def main() -> int:
    parser = figure_parser(__doc__)
    parser.add_argument("--check", action="store_true", help="replay a sample; compare")
    parser.add_argument("--requests", type=Path, help="write the requests still to answer here")
    parser.add_argument("--work", type=Path, help="keep the run folders here (resumes)")
    parser.add_argument("--configs", help="comma-separated configuration slugs (default: all)")
    parser.add_argument("--tasks", help="comma-separated task names (default: all 125)")
    args = parser.parse_args()
    configs = [c for c in CONFIGS if not args.configs or c.slug in args.configs.split(",")]
    with tempfile.TemporaryDirectory(prefix="live_quality-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        if args.check:
            return check(configs, work, args.summaries)
        names = args.tasks.split(",") if args.tasks else []
        tasks = [f"browsergym/miniwob.{t}" for t in names] if names else all_tasks()
        rows, episodes = [], []
        for number, config in enumerate(configs, start=1):
            print(f"[{number}/{len(configs)}] {config.label}", file=sys.stderr, flush=True)
            code = run_config(config, tasks, ",".join(map(str, SEEDS)), work / config.slug)
            if code not in (0, 4, 5):
                print(f"{config.label}: webagent browsergym exited {code}", file=sys.stderr)
            mine = episode_rows(config, work / config.slug)
            rows.append(config_figures(config, mine))
            episodes += mine
        if args.requests is not None:
            answered = set(read_answers(ANSWERS))
            batch = {c.slug: work / c.slug / "batch" for c in configs}
            return write_requests(batch, args.requests, answered)
        scope = "all 125 tasks" if not args.tasks else f"a trial: {len(tasks)} tasks"
        payload, text = summary(rows, episodes, f"{scope} x seeds 0-2, at most {MAX_STEPS} steps")
    args.summaries.mkdir(parents=True, exist_ok=True)
    (args.summaries / "live_quality.json").write_text(json.dumps(payload, indent=1) + "\n")
    (args.summaries / "live_quality.md").write_text(text + "\n")
    plot(rows, args.summaries / "live_quality.png", payload["answers"].get("answered_by", "?"))
    print(text)
    return 0


if __name__ == "__main__":
    sys.exit(main())
