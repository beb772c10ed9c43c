"""Load Mind2Web tasks from every form in circulation, lazily.

Accepted sources (a file or a folder, searched recursively, files in sorted order):

* the raw release: ``data/<split>/<split>_<n>.json``, each a JSON list of tasks (streamed);
* JSON Lines: one task per line, or one step per line (MindAct's flattened step schema,
  grouped back into tasks by ``annotation_id``; repeated lines of one step are read once);
* Hugging Face copies: parquet files, or a ``save_to_disk`` folder, read through ``datasets``;
  ``hf:OWNER/NAME[:SPLIT]`` reads from the hub (only when it is reachable). Multimodal-Mind2Web
  (``hf:osunlp/Multimodal-Mind2Web:test_task``, the test splits with their HTML) has one row
  a step: its rows are grouped into tasks like step lines, its JSON-string fields decoded and
  its steps put in task order (:mod:`mind2web_eval.records`); its ``screenshot`` is never
  decoded, and is left out or kept as a file (:mod:`mind2web_eval.screenshots`).

A broken record becomes a :class:`LoadIssue` naming the file, the line (JSON Lines) or the
task, and the field, and the rest of the data still loads; every bad record is named in the
notes printed with the results. Data with no usable record is a :class:`DatasetError` naming
its first bad records, and so is any bad record under ``strict``. :class:`DatasetSummary`
counts what the data lacks (pages, negatives, ranks) and carries a content hash that does
not depend on the form or the order.
"""

from __future__ import annotations

import hashlib
import re
from collections.abc import Iterable, Iterator
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, PrivateAttr, ValidationError

from mind2web_eval import _hfdata
from mind2web_eval._jsonstream import UnreadableItem, iter_json_items
from mind2web_eval.records import SPLITS, LoadIssue, Task
from mind2web_eval.screenshots import keep_screenshot
from webagent.errors import DatasetError
from webagent.textfiles import open_text, read_lines

_DATA_SUFFIXES = (".json", ".jsonl", ".ndjson", ".parquet")
_MAX_ISSUES_PER_RECORD = 5
#: bad records named in the notes printed with every result (data.json keeps them all)
NOTES_NAMED = 20
#: bad records an error names
ERROR_NAMED = 3
RawRecord = tuple[str, int, Any]  # (file, index in file, decoded record)
#: left out of the content hash: where the data sits, where a screenshot was written, and the
#: step's place in the task (its gold history says it) so that forms without one hash alike
_NOT_CONTENT: dict[str, Any] = {
    "split": True,
    "actions": {"__all__": {"screenshot", "target_action_index"}},
}


class DatasetSummary(BaseModel):
    """What was loaded, what was left out, and what the data lacks."""

    source: str
    tasks: int = 0
    steps: int = 0
    files: list[str] = Field(default_factory=list)
    issues: list[LoadIssue] = Field(default_factory=list)
    steps_without_cleaned_html: int = 0
    steps_without_raw_html: int = 0
    steps_without_neg_candidates: int = 0
    steps_with_empty_pos_candidates: int = 0
    pos_candidates_without_rank: int = 0
    duplicate_step_lines: int = 0
    tasks_apart: int = Field(
        default=0, description="tasks whose step rows are not together in the data"
    )
    sha256: str = ""
    _digests: list[str] = PrivateAttr(default_factory=list)

    def add(self, task: Task) -> None:
        self.tasks += 1
        self.steps += len(task.actions)
        for step in task.actions:
            self.steps_without_cleaned_html += step.cleaned_html is None
            self.steps_without_raw_html += step.raw_html is None
            self.steps_without_neg_candidates += step.neg_candidates is None
            self.steps_with_empty_pos_candidates += not step.pos_candidates
            self.pos_candidates_without_rank += sum(c.rank is None for c in step.pos_candidates)
        blob = task.model_dump_json(exclude=_NOT_CONTENT).encode()
        self._digests.append(hashlib.sha256(blob).hexdigest())

    def finish(self) -> None:
        """Fix the content hash: sha256 over the sorted per-task digests."""
        joined = "\n".join(sorted(self._digests))
        self.sha256 = hashlib.sha256(joined.encode()).hexdigest()

    def bad_records(self) -> list[str]:
        """One line per record that could not be loaded: where it is, and each field wrong."""
        records: dict[str, list[str]] = {}
        for issue in self.issues:
            records.setdefault(issue.record, []).append(f"field {issue.field}: {issue.message}")
        return [f"{where}: {'; '.join(why)}" for where, why in records.items()]

    def notes(self) -> list[str]:
        """Human-readable caveats, printed with every result."""
        notes = []
        bad = self.bad_records()
        if bad:
            notes.append(f"{len(bad)} record(s) could not be loaded and are left out:")
            notes += [f"  {line}" for line in bad[:NOTES_NAMED]]
            if len(bad) > NOTES_NAMED:
                notes.append(f"  and {len(bad) - NOTES_NAMED} more (data.json lists them all)")
        for count, what in (
            (self.steps_without_cleaned_html, "have no cleaned_html (agents cannot run on them)"),
            (self.steps_without_neg_candidates, "have no neg_candidates"),
            (self.steps_with_empty_pos_candidates, "have empty pos_candidates (no gold element)"),
        ):
            if count:
                notes.append(f"{count} of {self.steps} steps {what}")
        if self.tasks_apart:
            notes.append(
                f"{self.tasks_apart} task(s) have step rows apart from the rest of their task: "
                "each run of rows is loaded as a task (steps score the same; task counts and "
                "task SR count the runs apart)"
            )
        if self.pos_candidates_without_rank:
            notes.append(
                f"{self.pos_candidates_without_rank} positive candidates carry no ranker rank "
                "(a --top-k filter does not apply to them)"
            )
        return notes


def split_of(path: str) -> str:
    """The Mind2Web split named by a hub name (``hf:NAME:SPLIT``), a folder or a file-name
    prefix, else ''."""
    if path.startswith("hf:"):
        named = path.rpartition(":")[2]
        return named if named in SPLITS else ""
    parts = Path(path).parts
    for part in reversed(parts[:-1]):
        if part in SPLITS:
            return part
    stem = Path(path).name
    for split in sorted(SPLITS, key=len, reverse=True):
        if re.match(rf"{split}(?:[_\-.]|$)", stem):
            return split
    return ""


def data_files(root: Path) -> list[Path]:
    if root.is_file():
        return [root]
    if not root.is_dir():
        raise DatasetError(f"{root}: no such file or folder")
    files = sorted(p for p in root.rglob("*") if p.is_file() and p.suffix in _DATA_SUFFIXES)
    if not files:
        raise DatasetError(f"{root}: no .json, .jsonl or .parquet files inside")
    return files


def _iter_jsonl(path: Path, issues: list[LoadIssue]) -> Iterator[RawRecord]:
    for line in read_lines(path):
        try:
            record = line.json()
        except ValueError as exc:
            issues.append(
                LoadIssue(
                    file=str(path),
                    task=f"line {line.number}",
                    field="(line)",
                    message=str(exc),
                    line=line.number,
                )
            )
            continue
        yield str(path), line.number - 1, record


def _iter_json(path: Path, issues: list[LoadIssue]) -> Iterator[RawRecord]:
    with open_text(path) as stream:
        try:
            for index, item in enumerate(iter_json_items(stream, str(path))):
                if isinstance(item, UnreadableItem):
                    issues.append(
                        LoadIssue(
                            file=str(path), task=f"#{index}", field="(record)",
                            message=item.problem,
                        )
                    )  # fmt: skip
                    continue
                yield str(path), index, item
        except DatasetError as exc:
            issues.append(
                LoadIssue(
                    file=str(path), task="(file)", field="(json)", message=str(exc), kind="file"
                )
            )


def iter_raw_records(source: str | Path, issues: list[LoadIssue]) -> Iterator[RawRecord]:
    """Every decoded record of a source, lazily, with where it came from."""
    if isinstance(source, str) and source.startswith("hf:"):
        yield from _hfdata.iter_hub(source[3:])
        return
    root = Path(source)
    if root.is_dir() and _hfdata.is_saved_dataset(root):
        yield from _hfdata.iter_saved(root)
        return
    for path in data_files(root):
        if path.suffix == ".parquet":
            yield from _hfdata.iter_parquet(path)
        elif path.suffix in (".jsonl", ".ndjson"):
            yield from _iter_jsonl(path, issues)
        else:
            yield from _iter_json(path, issues)


def _line_of(file: str, index: int) -> int | None:
    """The 1-based line of record ``index`` of a JSON Lines file (its index is its line - 1)."""
    return index + 1 if file.endswith((".jsonl", ".ndjson")) else None


def _issues_from(exc: ValidationError, file: str, task: str, index: int) -> list[LoadIssue]:
    found = []
    for error in exc.errors()[:_MAX_ISSUES_PER_RECORD]:
        field = ".".join(str(part) for part in error["loc"]) or "(record)"
        message = "missing" if error["type"] == "missing" else error["msg"]
        message = message.removeprefix("Value error, ")  # a validator's own words
        found.append(
            LoadIssue(
                file=file, task=task, field=field, message=message, line=_line_of(file, index)
            )
        )
    return found


def _task_label(record: Any, index: int) -> str:
    if isinstance(record, dict) and isinstance(record.get("annotation_id"), str):
        return str(record["annotation_id"])
    return f"#{index}"


def _validate(
    record: dict[str, Any], file: str, index: int, issues: list[LoadIssue]
) -> Task | None:
    if "split" not in record or not record["split"]:
        record = {**record, "split": split_of(file)}
    try:
        return Task.model_validate(record)
    except ValidationError as exc:
        issues.extend(_issues_from(exc, file, _task_label(record, index), index))
        return None


class _StepGrouper:
    """Turns consecutive step-per-line records of one task back into a task record (data too
    large to hold is read in one pass: a task whose rows are apart is counted, not joined)."""

    def __init__(self) -> None:
        self.pending: RawRecord | None = None
        self.duplicates = 0
        self.grouped: set[str] = set()
        self.apart = 0

    def add(self, record: dict[str, Any], file: str, index: int) -> RawRecord | None:
        """Add a step; returns the previous task's record when this step starts a new one."""
        done = None
        if self.pending is not None and self.pending[2]["annotation_id"] != record.get(
            "annotation_id"
        ):
            done = self.flush()
        if self.pending is None:
            meta = {k: v for k, v in record.items() if k not in ("action_uid", "operation")}
            self.pending = (file, index, {**meta, "actions": []})
        actions = self.pending[2]["actions"]
        if actions and actions[-1].get("action_uid") == record.get("action_uid"):
            self.duplicates += 1
        else:
            actions.append(record)
        return done

    def flush(self) -> RawRecord | None:
        done, self.pending = self.pending, None
        if done is not None:
            task = str(done[2].get("annotation_id"))
            self.apart += task in self.grouped
            self.grouped.add(task)
        return done


def _is_step_record(record: dict[str, Any]) -> bool:
    return "actions" not in record and "action_uid" in record and "operation" in record


def iter_tasks(
    source: str | Path,
    summary: DatasetSummary | None = None,
    limit: int | None = None,
    *,
    strict: bool = False,
    screenshots: Path | None = None,
) -> Iterator[Task]:
    """Tasks of ``source`` in file order, lazily; problems go to ``summary.issues``.
    Screenshots are left out, or written to the ``screenshots`` folder and kept by path.

    Once the data is read: no usable task at all is a :class:`DatasetError`, and so is any
    bad record under ``strict`` (each names the first bad records)."""
    summary = summary if summary is not None else DatasetSummary(source=str(source))
    issues = summary.issues
    grouper = _StepGrouper()
    records = iter_raw_records(source, issues)
    tasks = _iter_validated(records, grouper, summary, screenshots)
    for emitted, task in enumerate(tasks, start=1):
        summary.add(task)
        yield task
        if limit is not None and emitted >= limit:
            break
    summary.duplicate_step_lines = grouper.duplicates
    summary.tasks_apart = grouper.apart
    summary.finish()
    check_usable(summary, strict)


def check_usable(summary: DatasetSummary, strict: bool = False) -> None:
    """A :class:`DatasetError` when ``summary`` holds no task, or any bad record under
    ``strict``; its one line names the first bad records (where, which field, why)."""
    bad = summary.bad_records()
    if summary.tasks and not (strict and bad):
        return
    if not bad:
        raise DatasetError(f"{summary.source}: no Mind2Web task in the data")
    here = f"{summary.source}: "  # a record of the source file itself needs no file name
    bad = [line.removeprefix(here) for line in bad]
    named = name_first(bad)
    what = (
        f"{len(bad)} bad record(s) and --strict is set"
        if summary.tasks
        else f"no usable record ({len(bad)} bad)"
    )
    raise DatasetError(f"{summary.source}: {what}: {named}")


def name_first(bad: list[str]) -> str:
    """The first bad records (``ERROR_NAMED``) in one line, and how many more there are."""
    more = len(bad) - ERROR_NAMED
    return "; ".join(bad[:ERROR_NAMED]) + (f"; and {more} more" if more > 0 else "")


def _iter_validated(
    records: Iterable[RawRecord],
    grouper: _StepGrouper,
    summary: DatasetSummary,
    screenshots: Path | None,
) -> Iterator[Task]:
    issues = summary.issues
    for file, index, read in records:
        if file not in summary.files:
            summary.files.append(file)
        if not isinstance(read, dict):
            issues.append(
                LoadIssue(
                    file=file,
                    task=f"#{index}",
                    field="(record)",
                    message="not a JSON object",
                    line=_line_of(file, index),
                )
            )
            continue
        record = keep_screenshot(read, screenshots)
        if _is_step_record(record):
            done = grouper.add(record, file, index)
            if done is not None and (task := _validate(done[2], done[0], done[1], issues)):
                yield task
            continue
        if "actions" not in record:
            issues.append(
                LoadIssue(
                    file=file,
                    task=_task_label(record, index),
                    field="actions",
                    message="missing: neither a task (with 'actions') nor a step (with "
                    "'action_uid' and 'operation')",
                    line=_line_of(file, index),
                )
            )
            continue
        if task := _validate(record, file, index, issues):
            yield task
    last = grouper.flush()
    if last is not None and (task := _validate(last[2], last[0], last[1], issues)):
        yield task


def load_tasks(
    source: str | Path,
    limit: int | None = None,
    *,
    strict: bool = False,
    screenshots: Path | None = None,
) -> tuple[list[Task], DatasetSummary]:
    """All tasks in memory (small data and tests); big data should use :func:`iter_tasks`."""
    summary = DatasetSummary(source=str(source))
    tasks = list(iter_tasks(source, summary, limit=limit, strict=strict, screenshots=screenshots))
    return tasks, summary
