"""A run folder that is readable at every moment, even after a kill.

Layout::

    manifest.json          settings, versions, status (atomic rewrite)
    steps.jsonl            one StepRecord per line, flushed after every step
    step_001/page.html     the page snapshot the agent saw (ids as backend_node_id)
    step_001/elements.json id -> frame, tag, bounds, text
    step_001/axtree.txt    its accessibility tree as the axtree agent reads it, before any
                           cut (when the page came with one; :mod:`webagent.html.axtree`)
    step_001/screenshot.jpg
    summary.json           how the run ended (written at the end)
    report.html            static trace viewer, rewritten after every step

The records (:mod:`live_runner.records`) live apart from this writer and from the viewer,
so that both import them. Every string passes through :meth:`SecretStore.redact` before it
is written.
"""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path
from typing import Any

from live_runner.errors import LiveRunnerError
from live_runner.observe import PageSnapshot
from live_runner.records import TRACE_SCHEMA_VERSION, EpisodeResult, StepRecord
from live_runner.safety import SecretStore
from live_runner.viewer import render_report
from webagent.atomic import write_text_atomic
from webagent.errors import TextFileError
from webagent.html.axtree import flatten_axtree
from webagent.provenance import now
from webagent.textfiles import read_models, read_text

STEPS_FILE = "steps.jsonl"
MANIFEST_FILE = "manifest.json"
SUMMARY_FILE = "summary.json"
REPORT_FILE = "report.html"


class RunTracer:
    """Writes one run folder; see the module docstring for the layout."""

    def __init__(self, out_dir: Path, secrets: SecretStore | None = None) -> None:
        self.out_dir = out_dir
        self.secrets = secrets or SecretStore()
        self._manifest: dict[str, Any] = {}
        self._steps: list[StepRecord] = []
        self._summary: EpisodeResult | None = None

    def start(self, manifest: dict[str, Any]) -> None:
        self.out_dir.mkdir(parents=True, exist_ok=True)
        if (self.out_dir / STEPS_FILE).exists():
            raise LiveRunnerError(f"{self.out_dir} already holds a run; pass a new --out folder")
        self._manifest = {
            "schema_version": TRACE_SCHEMA_VERSION,
            "created_at": now(),
            "status": "running",
            **manifest,
        }
        self._write_manifest()
        (self.out_dir / STEPS_FILE).touch()
        self._write_report()

    def write_step(self, record: StepRecord, snapshot: PageSnapshot | None) -> None:
        step_dir = self.out_dir / f"step_{record.step:03d}"
        step_dir.mkdir(exist_ok=True)
        if snapshot is not None:
            record.files.update(self._write_snapshot(step_dir, snapshot))
        data = self.secrets.redact_data(record.model_dump(mode="json"))
        line = json.dumps(data, ensure_ascii=False)
        with (self.out_dir / STEPS_FILE).open("a", encoding="utf-8") as out:
            out.write(line + "\n")
            out.flush()
            os.fsync(out.fileno())
        self._steps.append(StepRecord.model_validate(data))
        self._write_report()

    def finish(self, summary: EpisodeResult) -> None:
        self._summary = summary
        write_summary(self.out_dir, summary, self.secrets)
        self._manifest["status"] = summary.status
        self._manifest["finished_at"] = summary.finished_at
        self._write_manifest()
        self._write_report()

    def _write_snapshot(self, step_dir: Path, snapshot: PageSnapshot) -> dict[str, str]:
        files: dict[str, str] = {}
        page = step_dir / "page.html"
        page.write_text(self.secrets.redact(snapshot.html), encoding="utf-8")
        files["page"] = page.relative_to(self.out_dir).as_posix()
        elements = step_dir / "elements.json"
        dumped = {k: v.model_dump(mode="json") for k, v in snapshot.elements.items()}
        elements.write_text(
            json.dumps(self.secrets.redact_data(dumped), ensure_ascii=False), encoding="utf-8"
        )
        files["elements"] = elements.relative_to(self.out_dir).as_posix()
        if snapshot.axtree is not None:
            tree = step_dir / "axtree.txt"
            tree.write_text(self.secrets.redact(flatten_axtree(snapshot.axtree)), encoding="utf-8")
            files["axtree"] = tree.relative_to(self.out_dir).as_posix()
        if snapshot.screenshot:
            shot = step_dir / "screenshot.jpg"
            shot.write_bytes(snapshot.screenshot)
            files["screenshot"] = shot.relative_to(self.out_dir).as_posix()
        return files

    def _write_manifest(self) -> None:
        data = self.secrets.redact_data(self._manifest)
        write_text_atomic(
            self.out_dir / MANIFEST_FILE, json.dumps(data, indent=2, ensure_ascii=False)
        )

    def _write_report(self) -> None:
        text = render_report(self._manifest, self._steps, self._summary)
        write_text_atomic(self.out_dir / REPORT_FILE, self.secrets.redact(text))


def write_summary(
    run_dir: Path, summary: EpisodeResult, secrets: SecretStore | None = None
) -> None:
    """``summary.json``: how the run ended (rewritten whole)."""
    data = (secrets or SecretStore()).redact_data(summary.model_dump(mode="json"))
    write_text_atomic(run_dir / SUMMARY_FILE, json.dumps(data, indent=2, ensure_ascii=False))


def read_summary(run_dir: Path) -> EpisodeResult | None:
    """How the run in ``run_dir`` ended; None when it has not (or no run is there)."""
    path = run_dir / SUMMARY_FILE
    if not path.exists():
        return None
    try:
        return EpisodeResult.model_validate_json(read_text(path))
    except ValueError as exc:
        raise LiveRunnerError(f"{path} is not a run summary: {exc}") from exc


def remove_run(run_dir: Path) -> None:
    """Delete the run folder's own files (the layout above), keeping anything else in it."""
    for name in (MANIFEST_FILE, STEPS_FILE, SUMMARY_FILE, REPORT_FILE):
        (run_dir / name).unlink(missing_ok=True)
    for step_dir in run_dir.glob("step_[0-9]*"):
        shutil.rmtree(step_dir)


def read_steps(run_dir: Path) -> list[StepRecord]:
    """The steps of a run folder; a torn last line (a kill mid-write) is skipped."""
    path = run_dir / STEPS_FILE
    if not path.exists():
        raise LiveRunnerError(f"{run_dir} is not a run folder: it has no {STEPS_FILE}")
    return read_models(path, StepRecord)


def read_manifest(run_dir: Path) -> dict[str, Any]:
    path = run_dir / MANIFEST_FILE
    try:
        data: dict[str, Any] = json.loads(read_text(path))
    except (OSError, json.JSONDecodeError, TextFileError) as exc:
        raise LiveRunnerError(f"{path} is missing or not JSON: {exc}") from exc
    return data
