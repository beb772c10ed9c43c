"""``webagent eval``: run an agent over a Mind2Web dataset, resumably, then score and report.

Tasks stream from the data; steps run on a bounded thread pool (``workers`` steps in
flight); each finished attempt is appended durably to ``results.jsonl`` before it counts, so
a killed run loses at most the steps in flight, and the same command resumes it.

A failed attempt is not a done step. A step whose model failed after its retries, or whose
page could not be read, stays *pending*: the same command runs it again, and scoring uses
each step's final attempt. The run is ``complete`` only when every step has an answer;
otherwise it ends ``incomplete`` (with the pending steps and why). A circuit breaker ends a
run early after ``max_consecutive_failures`` model failures in a row instead of burning
through the split; ``max_errors`` ends one (``aborted``) after that many run errors in all.
A bug in the agent stops the run (:class:`AgentBugError`, with the agent's traceback) unless
``record_agent_errors`` records it and goes on. At the end the run folder gets
``predictions.jsonl``, ``gold.jsonl``, ``results.json`` and ``report.html``, all made by the
one scoring implementation.
"""

from __future__ import annotations

import sys
from collections import Counter
from collections.abc import Iterator
from concurrent.futures import FIRST_COMPLETED, Future, ThreadPoolExecutor, wait
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from tqdm import tqdm

from mind2web_eval.data import DatasetSummary, iter_tasks
from mind2web_eval.diagnostics import RUN_ERRORS
from mind2web_eval.finalize import RunFiles, count_attempts, finalize_run, write_gold
from mind2web_eval.manifest import (
    PROTOCOL,
    RENDERED,
    RENDERED_TREE,
    RunManifest,
    Session,
    check_resume,
    git_revision,
    now,
    read_manifest,
    write_manifest,
)
from mind2web_eval.records import Task
from mind2web_eval.results import StepRecord
from mind2web_eval.scoring import GoldStep, ScoringSettings, gold_steps
from mind2web_eval.stepping import Render, run_step
from mind2web_eval.store import ResultStore
from webagent.contracts import Agent
from webagent.gist.cache import GistCache
from webagent.prompts import all_template_versions

Status = Literal["complete", "incomplete", "aborted", "interrupted"]


class AgentBugError(RuntimeError):
    """The agent raised an exception on a step: the run stops with the agent's traceback
    (deliberately not a :class:`~webagent.errors.WebAgentError`, which prints one line)."""


class EvalSettings(BaseModel):
    """How to run (not what agent or model: those come with :class:`EvalSubject`)."""

    model_config = ConfigDict(frozen=True)

    data: str
    out: Path
    limit: int | None = Field(default=None, ge=1, description="first N tasks of the data")
    strict: bool = Field(default=False, description="any bad record of the data is an error")
    screenshots: Path | None = Field(
        default=None, description="keep the data's screenshots as files here (else left out)"
    )
    workers: int = Field(default=1, ge=1, description="steps in flight at once")
    max_errors: int | None = Field(
        default=None, ge=1, description="stop after this many model/page/agent errors"
    )
    max_consecutive_failures: int | None = Field(
        default=5, ge=1, description="circuit breaker: stop after N model failures in a row"
    )
    record_agent_errors: bool = Field(
        default=False, description="record an agent's exception as agent_error and go on"
    )
    scoring: ScoringSettings = Field(default_factory=ScoringSettings)
    report_steps: int = Field(default=300, ge=0, description="steps shown in full in the report")
    progress: bool = True
    config: dict[str, Any] | None = Field(
        default=None, description="the run configuration to record in the manifest (no secrets)"
    )


@dataclass
class EvalSubject:
    """The agent under evaluation and what the manifest says about it."""

    agent: Agent
    agent_settings: dict[str, Any]
    model_settings: dict[str, Any]
    model_identity: dict[str, Any]
    gist_cache: GistCache | None = None
    #: (saved page, its name) -> the page the agent sees; None: the page as saved
    render: Render | None = None
    #: the budget used, the one asked for, the model's window and where it comes from
    budget: dict[str, Any] = field(default_factory=dict)


class RunOutcome(BaseModel):
    status: Status
    steps_run: int = Field(description="attempts made by this session")
    steps_resumed: int = Field(description="steps already answered when it started")
    run_errors: int
    pending: dict[str, str] = Field(
        default_factory=dict, description="step (action_uid) -> why it has no answer yet"
    )
    stopped_by: str | None = Field(default=None, description="what ended the run early")
    files: RunFiles

    def pending_reasons(self) -> dict[str, int]:
        """How many steps are pending for each reason."""
        return dict(Counter(self.pending.values()).most_common())


@dataclass
class _Progress:
    bar: Any
    steps: int = 0
    success: float = 0.0
    element: float = 0.0
    errors: int = 0
    run_errors: int = 0
    consecutive_model_failures: int = 0
    classes: dict[str, int] = field(default_factory=dict)

    def add(self, record: StepRecord, fresh: bool) -> None:
        self.steps += 1
        self.success += record.score.step_success
        self.element += record.score.element_correct
        kind = record.diagnostics.error_class
        self.classes[kind] = self.classes.get(kind, 0) + 1
        if fresh:
            self.run_errors += kind in RUN_ERRORS
            if kind == "model_error":
                self.consecutive_model_failures += 1
            elif record.diagnostics.calls:  # the model answered (a step without calls: no news)
                self.consecutive_model_failures = 0
            self.bar.update(1)
        self.bar.set_postfix(
            step_sr=f"{self.success / self.steps:.3f}",
            elem=f"{self.element / self.steps:.3f}",
            errors=self.run_errors,
            refresh=False,
        )


def _rendered(subject: EvalSubject) -> dict[str, str]:
    """The protocol's observation under ``--render``: the page, and the tree if it is read."""
    return RENDERED_TREE if subject.agent.reads_axtree else RENDERED


def _manifest(settings: EvalSettings, subject: EvalSubject) -> RunManifest:
    return RunManifest(
        agent=subject.agent_settings,
        model=subject.model_settings,
        model_identity=subject.model_identity,
        budget=subject.budget,
        prompts=all_template_versions(),
        git_revision=git_revision(),
        data_source=settings.data,
        render=subject.render is not None,
        config=settings.config,
        protocol={
            **PROTOCOL,
            **(_rendered(subject) if subject.render is not None else {}),
            "scoring": settings.scoring.model_dump(),
            "scoring_described": settings.scoring.describe(),
            "limit_tasks": settings.limit,
            "workers": settings.workers,
            "max_errors": settings.max_errors,
            "max_consecutive_failures": settings.max_consecutive_failures,
            "record_agent_errors": settings.record_agent_errors,
        },
    )


def _open_manifest(settings: EvalSettings, subject: EvalSubject, argv: list[str]) -> RunManifest:
    path = settings.out / "manifest.json"
    fresh = _manifest(settings, subject)
    old = read_manifest(path)
    if old is not None:
        check_resume(old, fresh, path)
        fresh.created_at, fresh.sessions = old.created_at, old.sessions
    fresh.sessions.append(Session(started_at=now(), argv=argv))
    write_manifest(path, fresh)
    return fresh


def _jobs(
    tasks: Iterator[Task], store: ResultStore, gold: list[GoldStep]
) -> Iterator[tuple[Task, int, GoldStep]]:
    """Steps still to run (never tried, or pending); every step's gold is collected for the
    final scoring."""
    for task in tasks:
        steps = gold_steps(task)
        gold.extend(steps)  # whole tasks, even when a run stops in the middle of one
        for index, step_gold in enumerate(steps):
            if step_gold.action_uid not in store:
                yield task, index, step_gold


def _run_step(
    settings: EvalSettings, subject: EvalSubject, task: Task, index: int, gold: GoldStep
) -> StepRecord:
    try:
        return run_step(
            subject.agent,
            task,
            index,
            gold,
            settings.scoring,
            record_agent_errors=settings.record_agent_errors,
            render=subject.render,
        )
    except Exception as exc:
        raise AgentBugError(
            f"the agent raised {type(exc).__name__} on step {gold.action_uid} (task "
            f"{task.annotation_id}): {exc}. The run stopped; the steps already written are "
            "kept and the same command resumes. Fix the agent, or pass --record-agent-errors "
            "to record such steps as agent_error and go on"
        ) from exc


def _execute(
    settings: EvalSettings,
    subject: EvalSubject,
    jobs: Iterator[tuple[Task, int, GoldStep]],
    store: ResultStore,
    progress: _Progress,
) -> tuple[Status, str | None]:
    """Run the jobs; (status so far, what stopped the run early or None)."""

    def record(done: set[Future[StepRecord]]) -> None:
        for future in done:
            stored = store.append(future.result())
            if stored is not None:
                progress.add(stored, fresh=True)

    def stop() -> tuple[Status, str] | None:
        """(status, why) when the run must stop submitting steps."""
        limit = settings.max_consecutive_failures
        if limit is not None and progress.consecutive_model_failures >= limit:
            failures = progress.consecutive_model_failures
            why = f"{failures} model failures in a row (--max-consecutive-failures {limit})"
            return "complete", f"circuit breaker: {why}"  # becomes incomplete: steps pending
        if settings.max_errors is not None and progress.run_errors >= settings.max_errors:
            return "aborted", f"--max-errors {settings.max_errors} reached"
        return None

    pool = ThreadPoolExecutor(max_workers=settings.workers, thread_name_prefix="webagent-eval")
    in_flight: set[Future[StepRecord]] = set()
    stopped: tuple[Status, str] | None = None
    try:
        for task, index, gold in jobs:
            stopped = stop()
            if stopped:
                break
            in_flight.add(pool.submit(_run_step, settings, subject, task, index, gold))
            if len(in_flight) >= settings.workers:
                done, in_flight = wait(in_flight, return_when=FIRST_COMPLETED)
                record(done)
        record(wait(in_flight).done)
        stopped = stopped or stop()
        if stopped:
            for _ in jobs:  # read the rest of the data: its steps count as pending
                pass
    except KeyboardInterrupt:
        pool.shutdown(wait=False, cancel_futures=True)
        return "interrupted", None
    except BaseException:
        pool.shutdown(wait=True, cancel_futures=True)
        raise
    pool.shutdown(wait=True)
    return stopped or ("complete", None)


def run_eval(
    settings: EvalSettings, subject: EvalSubject, argv: list[str] | None = None
) -> RunOutcome:
    """Run (or resume) an evaluation; returns how it ended and where the files are."""
    settings.out.mkdir(parents=True, exist_ok=True)
    manifest = _open_manifest(settings, subject, list(argv or []))
    store = ResultStore(settings.out / "results.jsonl")
    resumed = len(store)
    bar = tqdm(
        unit="step",
        file=sys.stderr,
        disable=not settings.progress,
        desc=subject.agent.name,
        initial=resumed,
    )
    progress = _Progress(bar=bar)
    for old in store.records():
        if old.action_uid in store:  # a pending step's failed attempt is not counted
            progress.add(old, fresh=False)
    summary = DatasetSummary(source=settings.data)
    gold: list[GoldStep] = []
    tasks = iter_tasks(
        settings.data,
        summary,
        limit=settings.limit,
        strict=settings.strict,
        screenshots=settings.screenshots,
    )
    session = manifest.sessions[-1]
    try:
        status, stopped_by = _execute(settings, subject, _jobs(tasks, store, gold), store, progress)
    except AgentBugError:
        session.finished_at, session.status = now(), "aborted"
        manifest.status = "aborted"
        write_manifest(settings.out / "manifest.json", manifest)
        raise
    finally:
        bar.close()
    pending = count_attempts(gold, store).pending_steps if status != "interrupted" else {}
    if status == "complete" and pending:
        status = "incomplete"
    write_gold(settings.out, gold, summary, complete=status != "interrupted")
    session.finished_at, session.status = now(), status
    session.steps_run, session.steps_resumed = progress.steps - resumed, resumed
    manifest.status = status
    manifest.data = {
        **summary.model_dump(mode="json", exclude={"files", "issues"}),
        "issues": len(summary.issues),
        "complete": status != "interrupted",
    }
    manifest.pending = len(pending)
    manifest.stopped_by = stopped_by
    if subject.gist_cache is not None:
        manifest.gist_cache = {"path": str(subject.gist_cache.path), **subject.gist_cache.stats()}
    write_manifest(settings.out / "manifest.json", manifest)
    files = finalize_run(settings.out, settings.scoring, settings.report_steps)
    return RunOutcome(
        status=status,
        steps_run=progress.steps - resumed,
        steps_resumed=resumed,
        run_errors=progress.run_errors,
        pending=pending,
        stopped_by=stopped_by,
        files=files,
    )
