"""Export a recorded live run as a Mind2Web task record, for the offline evaluator.

Each successful CLICK/TYPE/SELECT step becomes one Mind2Web action: ``cleaned_html`` is the
page snapshot the agent saw (ids as ``backend_node_id``), ``operation`` is what was done, the
single positive candidate is the element acted on, and ``action_reprs`` are the previous-action
lines. The offline evaluator can then score another agent on the same pages, or replay them.
Failed steps are left out unless asked for (a failed step has no trustworthy gold element).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from live_runner.actions import MIND2WEB_LIVE_OPS
from live_runner.errors import LiveRunnerError
from live_runner.records import StepRecord
from live_runner.trace import read_manifest, read_steps
from webagent.errors import TextFileError
from webagent.textfiles import read_text


def export_run(run_dir: Path, *, include_failed: bool = False) -> dict[str, Any]:
    """One Mind2Web task record for the run in ``run_dir``."""
    manifest = read_manifest(run_dir)
    steps = [s for s in read_steps(run_dir) if _exportable(s, include_failed)]
    actions = [_action(run_dir, step) for step in steps]
    reprs = [_repr(step) for step in steps]
    host = urlsplit(str(manifest.get("url", ""))).hostname or "local"
    return {
        "annotation_id": f"live-{run_dir.name}",
        "website": host,
        "domain": "live",
        "subdomain": "live",
        "confirmed_task": str(manifest.get("task", "")),
        "action_reprs": reprs,
        "actions": actions,
    }


def write_export(run_dirs: list[Path], out: Path, *, include_failed: bool = False) -> int:
    """Write one task per line (JSONL) to ``out``; returns the number of actions written.
    A run without any exportable action is left out."""
    count = 0
    with out.open("w", encoding="utf-8") as handle:
        for run_dir in run_dirs:
            record = export_run(run_dir, include_failed=include_failed)
            if not record["actions"]:
                continue  # a Mind2Web task needs at least one action
            count += len(record["actions"])
            handle.write(json.dumps(record, ensure_ascii=False) + "\n")
    return count


def _exportable(step: StepRecord, include_failed: bool) -> bool:
    action = step.action
    if action is None or action.op not in MIND2WEB_LIVE_OPS or "page" not in step.files:
        return False
    return step.outcome.ok or include_failed


def _repr(step: StepRecord) -> str:
    """The action line without its notes: what was done, as Mind2Web writes it."""
    return step.outcome.line()


def _action(run_dir: Path, step: StepRecord) -> dict[str, Any]:
    action = step.action
    if action is None or action.element_id is None:  # filtered out by _exportable
        raise LiveRunnerError(f"step {step.step} of {run_dir} has no element action")
    page_file = run_dir / step.files["page"]
    try:
        cleaned_html = read_text(page_file)
    except (OSError, TextFileError) as exc:
        raise LiveRunnerError(f"{page_file} (step {step.step}) cannot be read: {exc}") from exc
    label = step.outcome.label
    attributes = {"backend_node_id": action.element_id}
    return {
        "action_uid": f"live-{run_dir.name}-step{step.step}",
        "raw_html": None,
        "cleaned_html": cleaned_html,
        "operation": {"op": action.op.value, "original_op": action.op.value, "value": action.value},
        "pos_candidates": [
            {
                "tag": _tag(cleaned_html, action.element_id) or (label.role if label else ""),
                "attributes": json.dumps(attributes),
                "backend_node_id": action.element_id,
                "is_original_target": True,
                "is_top_level_target": True,
            }
        ],
        "neg_candidates": [],
        "live": {"url": step.url, "outcome_ok": step.outcome.ok},
    }


def _tag(page_html: str, element_id: str) -> str | None:
    marker = f'backend_node_id="{element_id}"'
    at = page_html.find(marker)
    if at < 0:
        return None
    start = page_html.rfind("<", 0, at)
    return page_html[start + 1 : at].split(maxsplit=1)[0] if start >= 0 else None
