"""``webagent sweep``: agents × budgets over one dataset, each cell a resumable eval folder,
then a table, a plot of accuracy against tokens per step, an HTML summary and JSON.
``webagent sweep --rescore DIR`` re-scores the stored results and redoes them, with no model.

Exit codes, as ``webagent eval``'s for the same state: 0 every cell complete, 3 a cell stopped
by --max-errors, 4 some cell not complete (the same command resumes it), 5 waiting for the
answers of a batch round (``--backend batch``: one round file for all cells), 130 interrupted."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path
from typing import TYPE_CHECKING

from mind2web_eval.commands.common import (
    DATA_HELP,
    EXIT_ABORTED,
    EXIT_INCOMPLETE,
    EXIT_INTERRUPTED,
    add_scoring_arguments,
    eval_values,
    scoring_settings,
)
from webagent.cli.batch import (
    BatchRounds,
    add_batch_arguments,
    check_batch_arguments,
    with_batch_dir,
)
from webagent.cli.options import add_agent_arguments, add_config_arguments, add_model_arguments
from webagent.cli.plan import add_price_arguments, price_from_args
from webagent.errors import ConfigError

if TYPE_CHECKING:
    from mind2web_eval.sweep.run import SweepOutcome


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    sweep = subparsers.add_parser(
        "sweep",
        help="run agents × budgets over Mind2Web data: table, cost–accuracy plot, HTML, JSON",
        description="Run every (agent, budget) cell as a resumable `webagent eval` folder "
        "under OUT/cells/ (one shared gist cache, one cassette of model calls per cell), then "
        "write OUT/table.md, OUT/sweep.png, OUT/sweep.html and OUT/results.json. Run the same "
        "command again to resume; `--rescore OUT` redoes the outputs with no model call.",
    )
    sweep.add_argument("--data", help=DATA_HELP)
    sweep.add_argument(
        "--agents", help="comma-separated agents, e.g. readagent-p,raw-html,raw-html-paper"
    )
    sweep.add_argument("--budgets", help="comma-separated context budgets, e.g. 2048,4096 or 2k,4k")
    sweep.add_argument("--out", type=Path, help="sweep folder (created; resumable)")
    sweep.add_argument(
        "--rescore",
        type=Path,
        metavar="DIR",
        help="re-score a finished or partial sweep folder and redo its outputs (no model)",
    )
    sweep.add_argument("--limit", type=int, help="first N tasks only")
    sweep.add_argument("--max-errors", type=int, help="a cell stops after N model/page errors")
    sweep.add_argument("--report-steps", type=int, help="steps in each cell's report.html (300)")
    sweep.add_argument(
        "--quality",
        choices=["auto", "step_sr", "gold_shown"],
        default="auto",
        help="the plot's quality axis; auto: gold shown in the act prompt when the model cannot "
        "be judged (the embedded SmolLM2), else step SR (auto)",
    )
    add_price_arguments(sweep)
    sweep.add_argument("--no-progress", action="store_true", help="no progress bars")
    add_scoring_arguments(sweep)
    add_config_arguments(sweep)
    add_agent_arguments(sweep)
    add_model_arguments(sweep)
    add_batch_arguments(sweep)
    sweep.set_defaults(func=run_sweep_command)


def run_sweep_command(args: argparse.Namespace) -> int:
    from mind2web_eval.subject import open_subject
    from mind2web_eval.sweep.run import (
        check_budgets,
        rescore_sweep,
        run_sweep,
        sweep_base_config,
    )
    from mind2web_eval.sweep.spec import build_spec, parse_budgets, parse_list
    from webagent.cli.options import config_from_args
    from webagent.config import EvalSection

    if args.rescore is not None:
        if args.out is not None or args.agents or args.budgets:
            raise ConfigError("--rescore DIR takes no --out, --agents or --budgets")
        scoring_flags = ("missing_gold", "score_top_k", "bootstrap", "seed")
        given = any(getattr(args, f) is not None for f in scoring_flags)
        section = EvalSection(**eval_values(args)["eval"])
        scoring = scoring_settings(section) if given else None
        files = rescore_sweep(args.rescore, scoring, price_from_args(args))
        print(files.table.read_text(encoding="utf-8"))
        print(f"rescored: {files.table}, {files.png}, {files.html}, {files.json_path}")
        return 0
    missing = [f"--{n}" for n in ("data", "agents", "budgets", "out") if not getattr(args, n)]
    if missing:
        raise ConfigError(f"sweep needs {', '.join(missing)} (or --rescore DIR)")
    if args.agent is not None or args.context_budget is not None:
        raise ConfigError("sweep takes --agents and --budgets, not --agent or --context-budget")
    from webagent.agents.registry import agent_names

    agents = parse_list(args.agents, "agents")
    unknown = [a for a in agents if a not in agent_names()]
    if unknown:
        raise ConfigError(
            f"--agents: unknown agent {unknown[0]!r}; choose from {', '.join(agent_names())}"
        )
    config = with_batch_dir(config_from_args(args, extra=eval_values(args)), args.out)
    check_batch_arguments(args, config)
    out: Path = args.out
    base = sweep_base_config(config, out, gist_cache_given=args.gist_cache is not None)
    data = args.data if args.data.startswith("hf:") else str(Path(args.data).resolve())
    section = config.eval
    spec = build_spec(
        data=data,
        agents=tuple(agents),
        budgets=parse_budgets(args.budgets),
        limit=section.limit,
        quality=args.quality,
        price=price_from_args(args),
        scoring=scoring_settings(section).model_dump(mode="json"),
        config=base.manifest(),
    )
    check_budgets(base, spec.budgets)
    argv = sys.argv[1:]
    batch = BatchRounds(base) if base.model.backend == "batch" else None

    def once() -> SweepOutcome:
        return run_sweep(spec, base, out, open_subject, progress=section.progress, argv=argv)

    if batch is None:
        outcome = once()
    else:
        batch.ingest(args.batch_results)
        outcome = batch.run(once, args.batch_submit, args.batch_poll)
    print(outcome.files.table.read_text(encoding="utf-8"))
    print(f"sweep {outcome.status}: {outcome.files.html}")
    if outcome.status == "interrupted":
        return EXIT_INTERRUPTED
    waiting = batch.report(argv) if batch is not None and outcome.not_done else None
    if waiting is not None:
        return waiting
    if outcome.not_done:
        print(
            f"not complete: {', '.join(outcome.not_done)}; run the same command to resume",
            file=sys.stderr,
        )
        return EXIT_ABORTED if outcome.status == "aborted" else EXIT_INCOMPLETE
    return 0
