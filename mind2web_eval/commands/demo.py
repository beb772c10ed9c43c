"""``webagent demo``: the main job. ReadAgent-P, raw HTML and gist-only over the bundled
sample tasks (``mind2web_eval/samples``) with the embedded model, then the comparison table
and the reports. Each is built with ``open_agent`` like every other run; all three share one
gist cache file under OUT, so a second run is faster. The sample pages would fit the budget
whole; the demo gists them anyway (``read_whole_page`` off) to show the method's steps.

The embedded model is tiny and near chance: the demo proves the plumbing, not the method.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

from webagent.agents.registry import agent_names
from webagent.cli.options import add_config_arguments, add_model_arguments, config_from_args
from webagent.errors import ConfigError

DEMO_AGENTS = ("readagent-p", "raw-html", "gist-only")
DEMO_BUDGET = 2048


def samples_path() -> Path:
    """The bundled sample tasks (Mind2Web raw format, authored for this project)."""
    return Path(__file__).resolve().parent.parent / "samples"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "demo",
        help="the main job: ReadAgent-P, raw HTML and gist-only on the bundled sample tasks",
        description="Run ReadAgent-P, the raw-HTML baseline and the gist-only baseline over "
        "the bundled sample tasks with the embedded model, print the comparison table and "
        "the report paths. Every run starts the three evaluations anew (--resume keeps finished "
        "steps); the gist cache persists under OUT, so a second run is faster.",
    )
    parser.add_argument("--out", type=Path, default=Path("runs/demo"), help="(runs/demo)")
    parser.add_argument(
        "--agents", default=",".join(DEMO_AGENTS), help="comma-separated (%(default)s)"
    )
    parser.add_argument(
        "--context-budget",
        type=int,
        help=f"tokens per prompt ({DEMO_BUDGET}: sized so the demo runs in minutes on 2 cores)",
    )
    parser.add_argument("--data", default=None, help="other tasks instead of the samples")
    parser.add_argument(
        "--resume", action="store_true", help="keep the steps finished by an earlier run"
    )
    add_config_arguments(parser)
    add_model_arguments(parser)
    parser.set_defaults(func=run_demo)


def _clear_run(run_dir: Path) -> None:
    """Forget the finished steps of an earlier demo run (its files are rewritten)."""
    for name in ("results.jsonl", "results.jsonl.torn", "manifest.json"):
        (run_dir / name).unlink(missing_ok=True)


def demo_agents(text: str) -> list[str]:
    agents = [a.strip() for a in text.split(",") if a.strip()]
    unknown = [a for a in agents if a not in agent_names()]
    if unknown or not agents:
        raise ConfigError(
            f"--agents {text!r}: unknown agent(s) {', '.join(unknown) or '(none given)'}; "
            f"choose from {', '.join(agent_names())}"
        )
    return agents


def run_demo(args: argparse.Namespace) -> int:
    from mind2web_eval.report.compare import compare_rows, format_compare
    from mind2web_eval.runner import EvalSettings, run_eval
    from mind2web_eval.scoring import ScoringSettings
    from mind2web_eval.subject import open_subject

    agents = demo_agents(args.agents)
    started = time.perf_counter()
    run_dirs = []
    for name in agents:
        config = config_from_args(
            args,
            extra={
                "agent": {
                    "agent": name,
                    "context_budget": args.context_budget or DEMO_BUDGET,
                    # the sample pages are short enough to read whole: gist them anyway, so
                    # the demo shows ReadAgent's gists and look-up
                    "read_whole_page": False,
                },
                "gist_cache": {"path": args.out / "gist-cache.sqlite"},
            },
        )
        run_dir = args.out / name
        if not args.resume:
            _clear_run(run_dir)
        settings = EvalSettings(
            data=str(args.data or samples_path()),
            out=run_dir,
            scoring=ScoringSettings(bootstrap=200),
            progress=sys.stderr.isatty(),
        )
        t0 = time.perf_counter()
        with open_subject(config) as subject:
            outcome = run_eval(settings, subject, argv=sys.argv[1:])
        print(
            f"{name}: {outcome.status}, {outcome.steps_run} steps run, "
            f"{outcome.steps_resumed} resumed, {time.perf_counter() - t0:.0f} s",
            file=sys.stderr,
        )
        run_dirs.append(run_dir)
    print(format_compare(compare_rows(run_dirs)))
    print(
        "\nThe embedded model is tiny and answers near chance: these numbers prove the "
        "plumbing, not the method. Use --backend openai for a real model."
    )
    for run_dir in run_dirs:
        print(f"report: {run_dir / 'report.html'}")
    print(f"total: {time.perf_counter() - started:.0f} s")
    return 0
