"""Run (or resume) every cell of a sweep through :func:`~mind2web_eval.runner.run_eval`.

A cell whose ``manifest.json`` says ``complete`` (and that has its ``results.json``) is not
run again; any other cell is handed to ``run_eval`` on its folder, which resumes it step by
step. A cell that ends in any other status stays not done: the same command resumes it. The
tables are written at the end, from whatever the cells hold.
"""

from __future__ import annotations

import sys
from collections.abc import Callable, Iterator
from contextlib import AbstractContextManager
from pathlib import Path
from typing import Literal

from pydantic import BaseModel
from tqdm import tqdm

from mind2web_eval.manifest import read_manifest
from mind2web_eval.runner import EvalSettings, EvalSubject, RunOutcome, run_eval
from mind2web_eval.scoring import ScoringSettings
from mind2web_eval.sweep.outputs import SweepFiles, write_outputs
from mind2web_eval.sweep.spec import CASSETTE, GIST_CACHE, Cell, SweepSpec, cell_dir, open_spec
from mind2web_eval.sweep.table import SweepRow, cell_row, sweep_rows
from webagent.config import RunConfig
from webagent.model.prices import Price

OpenCell = Callable[[RunConfig], AbstractContextManager[EvalSubject]]
#: a sweep's status is its worst cell's, in ``webagent eval``'s words: ``interrupted``, else
#: ``aborted`` (a cell stopped by --max-errors), else ``incomplete`` (a cell not complete)
SweepStatus = Literal["complete", "incomplete", "aborted", "interrupted"]


class SweepOutcome(BaseModel):
    status: SweepStatus
    not_done: list[str]
    files: SweepFiles


def sweep_base_config(config: RunConfig, out: Path, gist_cache_given: bool) -> RunConfig:
    """The configuration every cell starts from: one gist cache for all cells (in ``out``
    unless one was named or the cache is off)."""
    if gist_cache_given or not config.gist_cache.enabled:
        return config
    cache = config.gist_cache.model_copy(update={"path": (out / GIST_CACHE).resolve()})
    return config.model_copy(update={"gist_cache": cache})


def cell_config(base: RunConfig, out: Path, cell: Cell) -> RunConfig:
    """``base`` with the cell's agent and budget, recording its calls to the cell's cassette
    (a replayed sweep records nothing)."""
    agent = base.agent.model_copy(update={"agent": cell.agent, "context_budget": cell.budget})
    model = base.model
    if model.backend not in ("replay", "batch"):  # their answers are files already
        cassette = (cell_dir(out, cell) / CASSETTE).resolve()
        model = model.model_copy(update={"record_to": cassette})
    return base.model_copy(update={"agent": agent, "model": model})


def check_budgets(base: RunConfig, budgets: tuple[int, ...]) -> None:
    """Every budget of the sweep against the model's window, before any cell runs: one over
    it is a ConfigError (``context_budget``), not a cell that fails after the others ran."""
    from webagent.agents.context import context_budget
    from webagent.model.factory import build_model

    with build_model(base.model) as model:
        for budget in sorted(budgets, reverse=True):
            context_budget(base.agent.model_copy(update={"context_budget": budget}), model)


def cell_done(out: Path, cell: Cell) -> bool:
    folder = cell_dir(out, cell)
    manifest = read_manifest(folder / "manifest.json")
    return (
        manifest is not None
        and manifest.status == "complete"
        and (folder / "results.json").is_file()
    )


def _cell_line(row: SweepRow, resumed: int, ran: int) -> str:
    tokens = (row.input_tokens_per_step + row.output_tokens_per_step) * row.steps
    return (
        f"{row.agent}@{row.budget}: {row.steps} steps ({ran} run, {resumed} resumed), "
        f"{row.errors} errors, {tokens:,.0f} tokens, {row.status}"
    )


def _cells_to_run(spec: SweepSpec, out: Path) -> Iterator[tuple[Cell, bool]]:
    for cell in spec.cells():
        yield cell, cell_done(out, cell)


def _run_cell(
    spec: SweepSpec,
    base: RunConfig,
    out: Path,
    cell: Cell,
    *,
    scoring: ScoringSettings,
    open_cell: OpenCell,
    progress: bool,
    argv: list[str] | None,
) -> RunOutcome:
    config = cell_config(base, out, cell)
    settings = EvalSettings(
        data=spec.data,
        out=cell_dir(out, cell),
        limit=spec.limit,
        workers=config.model.concurrency,
        max_errors=config.eval.max_errors,
        scoring=scoring,
        report_steps=config.eval.report_steps,
        progress=progress,
    )
    with open_cell(config) as subject:
        return run_eval(settings, subject, argv=list(argv or []))


def run_sweep(
    spec: SweepSpec,
    base: RunConfig,
    out: Path,
    open_cell: OpenCell,
    *,
    progress: bool = True,
    argv: list[str] | None = None,
) -> SweepOutcome:
    """Run every cell not done yet, then write the table, plot, HTML and JSON."""
    open_spec(out, spec)
    scoring = ScoringSettings(**spec.scoring)
    cells = spec.cells()
    bar = tqdm(total=len(cells), unit="cell", desc="sweep", file=sys.stderr, disable=not progress)
    status: SweepStatus = "complete"
    aborted = False
    try:
        for cell, done in _cells_to_run(spec, out):
            if done:
                row = cell_row(out, cell, spec)
                line = _cell_line(row, row.steps, 0) + " (done before)"
            else:
                outcome = _run_cell(
                    spec,
                    base,
                    out,
                    cell,
                    scoring=scoring,
                    open_cell=open_cell,
                    progress=progress,
                    argv=argv,
                )
                row = cell_row(out, cell, spec)
                line = _cell_line(row, outcome.steps_resumed, outcome.steps_run)
            if progress:
                bar.write(line, file=sys.stderr)
            if not done and outcome.status == "interrupted":
                status = "interrupted"
                break
            aborted = aborted or (not done and outcome.status == "aborted")
            bar.update(1)
    finally:
        bar.close()
    files = write_outputs(out, spec, sweep_rows(out, spec))
    not_done = [c.name for c in cells if not cell_done(out, c)]
    if status != "interrupted" and not_done:
        status = "aborted" if aborted else "incomplete"
    return SweepOutcome(status=status, not_done=not_done, files=files)


def rescore_sweep(
    out: Path, scoring: ScoringSettings | None = None, price: Price | None = None
) -> SweepFiles:
    """Re-score every cell from its stored predictions and gold, and rewrite the outputs
    (priced at ``price`` when one is given). No model is built."""
    from mind2web_eval.finalize import finalize_run
    from mind2web_eval.sweep.spec import read_spec
    from webagent.errors import ConfigError

    spec = read_spec(out)
    if spec is None:
        raise ConfigError(
            f"{out} is not a sweep folder (no sweep.json); run `webagent sweep` first"
        )
    if scoring is not None:
        spec = spec.model_copy(update={"scoring": scoring.model_dump(mode="json")})
    if price is not None:
        spec = spec.model_copy(update={"price": price, "price_in": None, "price_out": None})
    settings = ScoringSettings(**spec.scoring)
    report_steps = int(spec.config.get("eval", {}).get("report_steps", 300))
    for cell in spec.cells():
        folder = cell_dir(out, cell)
        if (folder / "gold.jsonl").is_file() and (folder / "results.jsonl").is_file():
            finalize_run(folder, settings, report_steps)
    return write_outputs(out, spec, sweep_rows(out, spec))
