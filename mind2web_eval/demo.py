"""``webagent demo``: the main job. ReadAgent-P, raw HTML and gist-only over the bundled
sample tasks (``mind2web_eval/samples``) with the embedded model, then the comparison table
and the reports. All three share one model and one gist cache, so a second run is faster.

The embedded model is tiny and near chance: the demo proves the plumbing, not the method.
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from pathlib import Path

from webagent.cli.options import add_model_arguments

DEMO_AGENTS = ("readagent-p", "raw-html", "gist-only")
DEMO_BUDGET = 1536


def samples_path() -> Path:
    """The bundled sample tasks (Mind2Web raw format, authored for this project)."""
    return Path(__file__).resolve().parent / "samples"


def register_demo(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
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
        default=DEMO_BUDGET,
        help=f"tokens per prompt ({DEMO_BUDGET}: sized so the demo runs in minutes on 2 cores)",
    )
    parser.add_argument("--data", default=None, help="other tasks instead of the samples")
    parser.add_argument(
        "--resume", action="store_true", help="keep the steps finished by an earlier run"
    )
    add_model_arguments(parser)
    parser.set_defaults(func=run_demo)


def _clear_run(run_dir: Path) -> None:
    """Forget the finished steps of an earlier demo run (its files are rewritten)."""
    for name in ("results.jsonl", "results.jsonl.torn", "manifest.json"):
        (run_dir / name).unlink(missing_ok=True)


def run_demo(args: argparse.Namespace) -> int:
    from mind2web_eval.report.compare import compare_rows, format_compare
    from mind2web_eval.runner import EvalSettings, EvalSubject, run_eval
    from mind2web_eval.scoring import ScoringSettings
    from webagent.agents.registry import AgentSettings, build_agent
    from webagent.cli.options import model_settings_from_args
    from webagent.gist.cache import GistCache
    from webagent.model.factory import build_model

    agents = [a.strip() for a in args.agents.split(",") if a.strip()]
    model_settings = model_settings_from_args(args, os.environ)
    cache = GistCache(args.out / "gist-cache.sqlite")
    model = build_model(model_settings)
    started = time.perf_counter()
    run_dirs = []
    try:
        for name in agents:
            agent_settings = AgentSettings(agent=name, context_budget=args.context_budget)
            run_dir = args.out / name
            if not args.resume:
                _clear_run(run_dir)
            settings = EvalSettings(
                data=str(args.data or samples_path()),
                out=run_dir,
                scoring=ScoringSettings(bootstrap=200),
                progress=sys.stderr.isatty(),
            )
            subject = EvalSubject(
                agent=build_agent(agent_settings, model, cache),
                agent_settings=agent_settings.manifest(),
                model_settings=model_settings.manifest(),
                model_identity={"backend": model_settings.backend, "model": model.name},
                gist_cache=cache,
            )
            t0 = time.perf_counter()
            outcome = run_eval(settings, subject, argv=sys.argv[1:])
            print(
                f"{name}: {outcome.status}, {outcome.steps_run} steps run, "
                f"{outcome.steps_resumed} resumed, {time.perf_counter() - t0:.0f} s",
                file=sys.stderr,
            )
            run_dirs.append(run_dir)
    finally:
        model.close()
        cache.close()
    print(format_compare(compare_rows(run_dirs)))
    print(
        "\nThe embedded model is tiny and answers near chance: these numbers prove the "
        "plumbing, not the method. Use --backend openai for a real model."
    )
    for run_dir in run_dirs:
        print(f"report: {run_dir / 'report.html'}")
    print(f"total: {time.perf_counter() - started:.0f} s")
    return 0
