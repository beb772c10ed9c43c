"""A static, self-contained HTML trace viewer for one run.

Rendered from ``templates/report.html`` (Jinja2, autoescape on) on the base shared with the
evaluator's report (``webagent/templates``): everything that came from a page or a model is
escaped by the template engine; a Content-Security-Policy forbids scripts and any resource
but the run's own screenshots; nothing is loaded from elsewhere.
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from markupsafe import Markup

from live_runner.records import EpisodeResult, StepRecord
from webagent.templating import render

TEMPLATES = Path(__file__).resolve().parent / "templates"
CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"
_MAX_TEXT = 4000


def _summary_rows(summary: EpisodeResult) -> list[tuple[str, object]]:
    rows: list[tuple[str, object]] = [
        ("ended", f"{summary.status} {summary.detail}".strip()),
        ("final answer", summary.final_answer or ""),
        ("time", f"{summary.elapsed_s:.1f} s"),
        ("tokens", f"{summary.input_tokens} in / {summary.output_tokens} out"),
    ]
    if summary.success is not None:
        rows.append(
            ("reward", f"{summary.reward:g} ({'success' if summary.success else 'failure'})")
        )
    rows.extend(summary.episode.items())
    return rows


def _step(record: StepRecord) -> dict[str, Any]:
    trace = record.agent
    return {
        "record": record,
        "screenshot": record.files.get("screenshot"),
        "costs": [*record.tokens.items(), *((k, f"{v:.2f} s") for k, v in record.timings.items())],
        "reopened": [i + 1 for i in trace.reopened] if trace else [],
        "lookups": [
            {
                "requested": r.requested,
                "accepted": [i + 1 for i in r.accepted],
                "rejected": r.rejected,
            }
            for r in (trace.lookup if trace else [])
        ],
    }


def render_report(
    manifest: dict[str, Any], steps: Sequence[StepRecord], summary: EpisodeResult | None
) -> str:
    task = str(manifest.get("task", ""))
    facts: list[tuple[str, object]] = [
        ("start URL", manifest.get("url", "")),
        ("agent", json.dumps(manifest.get("agent", {}))),
        ("model", json.dumps(manifest.get("model", {}))),
        ("status", summary.status if summary else manifest.get("status", "running")),
        ("steps", len(steps)),
    ]
    return render(
        TEMPLATES,
        "report.html",
        csp=Markup(CSP),  # our own constant, not page content
        title=f"Run: {task[:80]}",
        task=task,
        facts=facts,
        summary=_summary_rows(summary) if summary is not None else None,
        steps=[_step(s) for s in steps],
        limit=_MAX_TEXT,
    )
