"""The static HTML report of an eval run: Jinja2 templates with autoescape
(``templates/report.html`` and ``step.html``, on the base shared with the live viewer in
``webagent/templates``). Nothing from a page or a model runs: the only markup built here is
the marking of element ids inside already escaped text."""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from pathlib import Path
from typing import Any

from markupsafe import Markup

from mind2web_eval.aggregate import Aggregate
from mind2web_eval.report.terminal import pct, per_step
from mind2web_eval.results import StepRecord
from mind2web_eval.run_results import RunResults
from mind2web_eval.scoring import StepScore
from webagent.atomic import write_text_atomic
from webagent.templating import clip, render

TEMPLATES = Path(__file__).resolve().parent / "templates"
CSP = "default-src 'none'; style-src 'unsafe-inline'"
Rows = list[tuple[str, object]]


def esc(value: object) -> str:
    """Escaped text for the one place that builds markup by hand (the id marks)."""
    return html.escape(str(value), quote=True)


def _with_ci(agg: Aggregate, key: str, value: float) -> str:
    ci = agg.ci.get(key)
    return pct(value) + (f" [{pct(ci.low)}–{pct(ci.high)}]" if ci else "")


def summary_context(results: RunResults) -> dict[str, Any]:
    agg = results.score.overall
    counts = results.score.counts
    rows = [
        [label, _with_ci(agg, f"{label}.element_acc", v.element_acc),
         _with_ci(agg, f"{label}.op_f1", v.op_f1), _with_ci(agg, f"{label}.step_sr", v.step_sr)]
        for label, v in (("macro", agg.macro), ("micro", agg.micro))
    ]  # fmt: skip
    source, digest = results.data.get("source", ""), str(results.data.get("sha256", ""))
    facts: Rows = [
        ("agent", results.agent),
        ("model", results.model),
        ("status", results.status + (f" ({results.stopped_by})" if results.stopped_by else "")),
        ("attempts", results.attempts.describe()),
        ("task success", f"{_with_ci(agg, 'task_sr', agg.task_sr)} % of {agg.tasks} tasks"),
        (
            "steps",
            f"{counts.steps_in_data} in data, {counts.steps_scored} scored, "
            f"{counts.steps_skipped} skipped",
        ),
        (
            "predictions",
            f"{counts.missing_predictions} missing, "
            f"{counts.no_action_predictions} without an action",
        ),
        ("protocol", results.protocol),
        ("data", f"{source} (sha256 {digest[:16]})"),
    ]
    notes = [*results.data_notes, *results.load_issues[:50]]
    return {"facts": facts, "rows": rows, "notes": notes}


def diagnostics_context(results: RunResults) -> dict[str, Any]:
    d = results.diagnostics
    facts: Rows = [
        ("step outcomes", ", ".join(f"{k}: {v}" for k, v in d.error_classes.items())),
        ("look-up recall", f"{pct(d.lookup_recall, ' %')} (gold inside the fragments read in "
                           "full; \u2014: the agent chooses none)"),
        ("gold id shown to the act prompt", pct(d.gold_shown_rate, " %")),
        ("calls per step", f"{d.calls_per_step:.2f}"),
        ("tokens per step", f"{d.tokens_per_step:.0f} spent ({d.input_tokens_per_step:.0f} in, "
                            f"{d.output_tokens_per_step:.0f} out)"),
        ("gist tokens per step served from the cache",
         f"{per_step(d.cached_tokens_per_step)} (what its hits had cost to write; not spent)"),
        ("page compression", "-" if d.mean_compression is None else f"{d.mean_compression:.1f}x"),
        ("gist cache hits", d.gist_cache_hits),
        ("latency per step", f"{d.mean_latency_s:.1f} s"),
    ]  # fmt: skip
    phases = [
        [
            phase,
            u.calls,
            u.input_tokens,
            u.output_tokens,
            f"{u.latency_s:.1f}",
            u.cache_hits,
            u.cached_tokens,
        ]
        for phase, u in sorted(d.tokens_by_phase.items())
    ]
    return {"facts": facts, "phases": phases}


def breakdown(title: str, groups: dict[str, Aggregate]) -> dict[str, Any]:
    rows = [
        [name, g.tasks, g.steps, pct(g.macro.element_acc), pct(g.macro.op_f1),
         pct(g.macro.step_sr), pct(g.task_sr)]
        for name, g in groups.items()
    ]  # fmt: skip
    headers = [title, "tasks", "steps", "element acc", "op F1", "step SR", "task SR"]
    return {"headers": headers, "rows": rows}


def mark_ids(escaped: str, ids: Iterable[str], css: str) -> str:
    """Wrap ``id=X`` (already escaped text) for each id in ``<mark class=css>``."""
    for element_id in ids:
        pattern = re.compile(rf"\bid=(?:&quot;)?{re.escape(esc(element_id))}(?:&quot;)?(?![\w-])")
        escaped = pattern.sub(lambda m: f'<mark class="{css}">{m.group(0)}</mark>', escaped)
    return escaped


def _gists(record: StepRecord) -> list[dict[str, str]]:
    trace = record.trace
    if trace is None:
        return []
    reopened, gold = set(trace.reopened), set(record.diagnostics.gold_fragments)
    gists = []
    for index, gist in enumerate(trace.gists):
        flags = (
            ("reopened", "reopened", index in reopened),
            ("goldfrag", "holds gold", index in gold),
        )
        gists.append(
            {
                "text": gist,
                "css": " ".join(css for css, _, on in flags if on),
                "tags": "".join(f" [{tag}]" for _, tag, on in flags if on),
            }
        )
    return gists


def _sections(record: StepRecord) -> list[dict[str, str]]:
    """The levels of the page memory (webagent/method/levels.py), top first, the opened marked."""
    trace = record.trace
    if trace is None:
        return []
    opened = {(a, b) for r in trace.lookup for a, b in r.sections}
    return [
        {
            "label": f"{'  ' * (s.depth - 1)}parts {s.start + 1}-{s.end}",
            "text": s.gist,
            "css": "reopened" if (s.start, s.end) in opened else "",
            "tags": " [opened]" if (s.start, s.end) in opened else "",
        }
        for s in trace.sections
    ]


def _edits(record: StepRecord) -> str:
    """What fitting the look-up and act prompts changed, in counts."""
    trace = record.trace
    if trace is None:
        return "-"
    parts = []
    for prompt, edits in (("look-up", trace.lookup_edits), ("act", trace.memory_edits)):
        named = [
            f"{len(v) if isinstance(v, list) else v} {k.replace('_', ' ')}"
            for k, v in edits.model_dump().items()
            if v
        ]
        if named:
            parts.append(f"{prompt}: {', '.join(named)}")
    return "; ".join(parts) or "none"


def _memory(record: StepRecord) -> Markup:
    """What the act prompt showed, escaped, with the gold and predicted ids marked."""
    memory = record.trace.memory if record.trace is not None else ""
    gold_ids = record.diagnostics.gold_ids
    marked = mark_ids(esc(clip(memory)), gold_ids, "gold")
    predicted = record.prediction.element_id
    if predicted and predicted not in gold_ids:
        marked = mark_ids(marked, [predicted], "pred")
    return Markup(marked or "(nothing)")  # escaped by esc(), then marked


def _scores(record: StepRecord) -> Rows:
    d, s = record.diagnostics, record.score
    phases = "; ".join(
        f"{k} {u.input_tokens}+{u.output_tokens}" for k, u in d.tokens_by_phase.items()
    )
    return [
        ("element", s.element_correct),
        ("op F1", f"{s.op_f1:.2f}"),
        ("step success", s.step_success),
        ("look-up hit", d.lookup_hit),
        ("gold shown", d.gold_shown),
        ("fragments", f"{d.reopened} of {d.fragments} read in full"),
        ("memory edits", _edits(record)),
        ("tokens (in+out)", phases or "-"),
        ("act prompt", f"{d.prompt_tokens} tokens"),
        ("page", f"{d.page_tokens} tokens"),
        ("gist cache hits", d.gist_cache_hits),
        ("latency", f"{d.latency_s:.1f} s"),
    ]


def _verdict(score: StepScore) -> str:
    if score.step_success:
        return "success"
    element = "right" if score.element_correct else "wrong"
    return f"element {element}, op F1 {score.op_f1:.2f}"


def _attempt(record: StepRecord) -> str:
    return "" if record.attempt == 1 else f" · attempt {record.attempt}"


def step_context(record: StepRecord) -> dict[str, Any]:
    g, p = record.gold, record.prediction
    error = f"{p.error_class or ''} {record.error or ''}".strip() or "-"
    return {
        "outcome": record.diagnostics.error_class,
        "anchor": record.action_uid,
        "website": record.gold.website,
        "task_id": record.annotation_id,
        "number": record.step_index + 1,
        "verdict": _verdict(record.score) + _attempt(record),
        "task": record.task,
        "previous": record.previous_actions,
        "gold": [
            ("repr", record.gold_repr),
            ("op", f"{g.op} {g.value}".strip()),
            ("element ids", ", ".join(record.diagnostics.gold_ids) or "(none usable)"),
        ],
        "prediction": [
            ("element", p.element_id or "-"),
            ("op", f"{p.op or '-'} {p.value}".strip()),
            ("error", error),
        ],
        "scores": _scores(record),
        "gists": _gists(record),
        "sections": _sections(record),
        "memory": _memory(record),
        "calls": record.trace.calls if record.trace is not None else [],
    }


def render_report(results: RunResults, records: Iterable[StepRecord], max_steps: int) -> str:
    steps: list[dict[str, Any]] = []
    total = 0
    for record in records:
        total += 1
        if len(steps) < max_steps:
            steps.append(step_context(record))
    score = results.score
    return render(
        TEMPLATES,
        "report.html",
        csp=Markup(CSP),  # our own constant, not page content
        title=f"Mind2Web evaluation: {results.agent or 'run'} with {results.model or 'a model'}",
        subtitle=results.run_dir,
        summary=summary_context(results),
        diagnostics=diagnostics_context(results),
        websites=breakdown("website", score.by_website),
        breakdowns=[
            breakdown(title, groups)
            for title, groups in (
                ("split", score.by_split),
                ("domain", score.by_domain),
                ("gold op", score.by_op),
            )
        ],
        steps_note=f"{len(steps)} of {total} steps shown in full (in the order they finished).",
        steps=steps,
    )


def write_html_report(
    path: Path, results: RunResults, records: Iterable[StepRecord], max_steps: int
) -> None:
    write_text_atomic(path, render_report(results, records, max_steps))
