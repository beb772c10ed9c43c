"""A static, self-contained HTML trace viewer for one run.

Everything that came from a page or a model is escaped; a Content-Security-Policy forbids
scripts and any resource but the run's own screenshots; nothing is loaded from elsewhere.
"""

from __future__ import annotations

import html
import json
from collections.abc import Iterable, Sequence
from typing import Any

from live_runner.records import RunSummary, StepRecord

CSP = "default-src 'none'; img-src 'self' data:; style-src 'unsafe-inline'"
_MAX_TEXT = 4000
_STYLE = """
body { font: 14px/1.4 system-ui, sans-serif; margin: 1.5em; color: #222; }
h1 { font-size: 1.3em; } h2 { font-size: 1.1em; margin-top: 2em; }
.step { border-top: 2px solid #ccc; padding-top: .5em; }
.ok { color: #176317; } .failed { color: #a31515; font-weight: bold; }
pre { white-space: pre-wrap; word-break: break-word; background: #f6f6f6; padding: .5em; }
img { max-width: 640px; border: 1px solid #aaa; }
table { border-collapse: collapse; } td, th { border: 1px solid #ddd; padding: 2px 6px; }
.reopened { background: #fff6c8; }
"""


def _e(value: object) -> str:
    return html.escape(str(value), quote=True)


def _cut(text: str, limit: int = _MAX_TEXT) -> str:
    return text if len(text) <= limit else text[:limit] + f"\n… ({len(text) - limit} more chars)"


def _pre(text: str) -> str:
    return f"<pre>{_e(_cut(text))}</pre>"


def _table(rows: Iterable[tuple[str, object]]) -> str:
    body = "".join(f"<tr><th>{_e(k)}</th><td>{_e(v)}</td></tr>" for k, v in rows)
    return f"<table>{body}</table>"


def render_report(
    manifest: dict[str, Any], steps: Sequence[StepRecord], summary: RunSummary | None
) -> str:
    task = str(manifest.get("task", ""))
    parts = [
        "<!DOCTYPE html><html lang='en'><head><meta charset='utf-8'>",
        f"<meta http-equiv='Content-Security-Policy' content=\"{CSP}\">",
        f"<title>Run: {_e(task[:80])}</title><style>{_STYLE}</style></head><body>",
        f"<h1>Task: {_e(task)}</h1>",
        _table(
            [
                ("start URL", manifest.get("url", "")),
                ("agent", json.dumps(manifest.get("agent", {}))),
                ("model", json.dumps(manifest.get("model", {}))),
                ("status", summary.status if summary else manifest.get("status", "running")),
                ("steps", len(steps)),
            ]
        ),
    ]
    if summary is not None:
        parts.append(_render_summary(summary))
    parts.extend(_render_step(step) for step in steps)
    parts.append("</body></html>")
    return "\n".join(parts)


def _render_summary(summary: RunSummary) -> str:
    rows: list[tuple[str, object]] = [
        ("ended", f"{summary.status} {summary.detail}".strip()),
        ("final answer", summary.final_answer or ""),
        ("time", f"{summary.elapsed_s:.1f} s"),
        ("tokens", f"{summary.input_tokens} in / {summary.output_tokens} out"),
    ]
    rows.extend((k, v) for k, v in summary.episode.items())
    return "<h2>Summary</h2>" + _table(rows)


def _render_step(step: StepRecord) -> str:
    outcome = step.outcome
    status = "ok" if outcome.ok else "failed"
    parts = [
        f"<section class='step'><h2>Step {step.step}: {_e(step.title)}</h2>",
        _table([("URL", step.url), ("started", step.started_at), ("elements", step.n_elements)]),
    ]
    shot = step.files.get("screenshot")
    if shot:
        parts.append(f"<p><img src='{_e(shot)}' alt='screenshot of step {step.step}'></p>")
    if step.previous_actions:
        parts.append("<p>Previous actions:</p>" + _pre("\n".join(step.previous_actions)))
    parts.append(f"<p class='{status}'>Action: {_e(outcome.describe())}</p>")
    if outcome.blocked:
        parts.append("<p>Blocked:</p>" + _pre("\n".join(outcome.blocked)))
    parts.append(
        _table([*step.tokens.items(), *((k, f"{v:.2f} s") for k, v in step.timings.items())])
    )
    if step.episode:
        parts.append(_table(step.episode.items()))
    if step.agent is not None:
        parts.append(_render_agent(step))
    page = step.files.get("page")
    if page:
        parts.append(f"<p>Page snapshot: <code>{_e(page)}</code> (as text, not rendered)</p>")
    parts.append("</section>")
    return "\n".join(parts)


def _render_agent(step: StepRecord) -> str:
    trace = step.agent
    if trace is None:
        return ""
    parts = []
    if trace.error:
        parts.append(
            f"<p class='failed'>Agent error ({_e(trace.error_class)}): {_e(trace.error)}</p>"
        )
    if trace.gists:
        items = "".join(
            f"<li class='{'reopened' if i in trace.reopened else ''}'>{_e(g)}</li>"
            for i, g in enumerate(trace.gists)
        )
        parts.append(
            f"<details open><summary>Gists ({len(trace.gists)}; reopened "
            f"{_e([i + 1 for i in trace.reopened])})</summary><ol>{items}</ol></details>"
        )
    for n, round_ in enumerate(trace.lookup, 1):
        parts.append(
            f"<p>Look-up {n}: asked {_e(round_.requested)}, reopened "
            f"{_e([i + 1 for i in round_.accepted])}"
            + (f", refused {_e(round_.rejected)}" if round_.rejected else "")
            + "</p>"
        )
    if trace.memory:
        parts.append(
            "<details><summary>What the act prompt showed</summary>"
            + _pre(trace.memory)
            + "</details>"
        )
    for n, call in enumerate(trace.calls, 1):
        prompt = "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in call.prompt)
        parts.append(
            f"<details><summary>Model call {n} ({_e(call.phase)}, {call.input_tokens} in / "
            f"{call.output_tokens} out, {call.latency_s:.2f} s)</summary>"
            + _pre(prompt)
            + "<p>Answer:</p>"
            + _pre(call.response or call.error or "")
            + "</details>"
        )
    return "\n".join(parts)
