"""A static HTML report of a run that opens offline and runs nothing.

Every value from a page, a task or a model is passed through :func:`html.escape` before it
reaches the templates (``templates/*.html``, filled with :class:`string.Template`); the
report has no script, loads no resource, and its CSP (``default-src 'none'``) forbids both.
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable, Sequence
from functools import cache
from pathlib import Path
from string import Template

from mind2web_eval.aggregate import Aggregate
from mind2web_eval.report.terminal import pct
from mind2web_eval.results import StepRecord
from mind2web_eval.run_results import RunResults
from mind2web_eval.scoring import StepScore
from webagent.contracts import ModelCall

TEMPLATES = Path(__file__).resolve().parent / "templates"
MAX_TEXT = 20_000  # characters of one prompt or answer shown; the rest is counted


def esc(value: object) -> str:
    return html.escape(str(value), quote=True)


@cache
def template(name: str) -> Template:
    return Template((TEMPLATES / name).read_text(encoding="utf-8"))


def clip(text: str, limit: int = MAX_TEXT) -> str:
    """Escaped ``text``, cut to ``limit`` characters with a note of what was left out."""
    if len(text) <= limit:
        return esc(text)
    return esc(text[:limit]) + f"\n… ({len(text) - limit} more characters)"


def html_table(headers: Sequence[str], rows: Iterable[Sequence[object]], css: str = "") -> str:
    head = "".join(f"<th>{esc(h)}</th>" for h in headers)
    body = "".join("<tr>" + "".join(f"<td>{esc(c)}</td>" for c in row) + "</tr>" for row in rows)
    head_row = f"<tr>{head}</tr>" if any(headers) else ""
    return f'<table class="{esc(css)}">{head_row}{body}</table>'


def _with_ci(agg: Aggregate, key: str, value: float) -> str:
    ci = agg.ci.get(key)
    return pct(value) + (f" [{pct(ci.low)}–{pct(ci.high)}]" if ci else "")


def summary_html(results: RunResults) -> str:
    agg = results.score.overall
    counts = results.score.counts
    rows = [
        [label, _with_ci(agg, f"{label}.element_acc", v.element_acc),
         _with_ci(agg, f"{label}.op_f1", v.op_f1), _with_ci(agg, f"{label}.step_sr", v.step_sr)]
        for label, v in (("macro", agg.macro), ("micro", agg.micro))
    ]  # fmt: skip
    source, digest = results.data.get("source", ""), str(results.data.get("sha256", ""))
    facts = [
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
    notes = "".join(f"<li>{esc(n)}</li>" for n in [*results.data_notes, *results.load_issues[:50]])
    return (
        html_table(["", ""], facts, "kv")
        + "<p>Percent; macro = mean over tasks of the per-step mean (as in the paper tables); "
        "95% task-level bootstrap intervals in brackets.</p>"
        + html_table(["average", "element accuracy", "operation F1", "step success"], rows)
        + (f"<ul>{notes}</ul>" if notes else "")
    )


def diagnostics_html(results: RunResults) -> str:
    d = results.diagnostics
    facts = [
        ("step outcomes", ", ".join(f"{k}: {v}" for k, v in d.error_classes.items())),
        ("look-up recall", f"{pct(d.lookup_recall)} % (gold inside the fragments read in full)"),
        ("gold id shown to the act prompt", f"{pct(d.gold_shown_rate)} %"),
        ("calls per step", f"{d.calls_per_step:.2f}"),
        ("tokens per step", f"{d.tokens_per_step:.0f} ({d.input_tokens_per_step:.0f} in, "
                            f"{d.output_tokens_per_step:.0f} out)"),
        ("page compression", "-" if d.mean_compression is None else f"{d.mean_compression:.1f}x"),
        ("gist cache hits", d.gist_cache_hits),
        ("latency per step", f"{d.mean_latency_s:.1f} s"),
    ]  # fmt: skip
    phases = [
        [phase, u.calls, u.input_tokens, u.output_tokens, f"{u.latency_s:.1f}", u.cache_hits]
        for phase, u in sorted(d.tokens_by_phase.items())
    ]
    return html_table(["", ""], facts, "kv") + html_table(
        ["phase", "calls", "input tokens", "output tokens", "seconds", "cache hits"], phases
    )


def breakdown_html(title: str, groups: dict[str, Aggregate]) -> str:
    rows = [
        [name, g.tasks, g.steps, pct(g.macro.element_acc), pct(g.macro.op_f1),
         pct(g.macro.step_sr), pct(g.task_sr)]
        for name, g in groups.items()
    ]  # fmt: skip
    return html_table([title, "tasks", "steps", "element acc", "op F1", "step SR", "task SR"], rows)


def mark_ids(escaped: str, ids: Iterable[str], css: str) -> str:
    """Wrap ``id=X`` (already escaped text) for each id in ``<mark class=css>``."""
    for element_id in ids:
        pattern = re.compile(rf"\bid=(?:&quot;)?{re.escape(esc(element_id))}(?:&quot;)?(?![\w-])")
        escaped = pattern.sub(lambda m: f'<mark class="{css}">{m.group(0)}</mark>', escaped)
    return escaped


def _gists_html(record: StepRecord) -> str:
    trace = record.trace
    if trace is None or not trace.gists:
        return "<p>(no gists: this agent does not gist, or the step failed before)</p>"
    reopened, gold = set(trace.reopened), set(record.diagnostics.gold_fragments)
    items = []
    for index, gist in enumerate(trace.gists):
        css = " ".join(
            c for c, on in (("reopened", index in reopened), ("goldfrag", index in gold)) if on
        )
        tags = "".join(
            f" [{t}]"
            for t, on in (("reopened", index in reopened), ("holds gold", index in gold))
            if on
        )
        items.append(f'<li class="{css}">{esc(gist)}{esc(tags)}</li>')
    return f'<ol class="gists">{"".join(items)}</ol>'


def _call_html(number: int, call: ModelCall) -> str:
    prompt = "\n\n".join(f"[{m.get('role', '')}]\n{m.get('content', '')}" for m in call.prompt)
    answer = call.response if call.response is not None else f"(error) {call.error}"
    cached = " (cached)" if call.cached else ""
    head = (
        f"{number}. {call.phase}: {call.input_tokens} in / {call.output_tokens} out tokens, "
        f"{call.latency_s:.2f} s{cached}"
    )
    return (
        f'<details class="call"><summary>{esc(head)}</summary>'
        f"<pre>{clip(prompt)}</pre><b>answer</b><pre>{clip(answer)}</pre></details>"
    )


def _calls_html(record: StepRecord) -> str:
    if record.trace is None or not record.trace.calls:
        return "<p>(no model calls)</p>"
    return "".join(_call_html(n, call) for n, call in enumerate(record.trace.calls, start=1))


def _memory_html(record: StepRecord) -> str:
    """What the act prompt showed, escaped, with the gold and predicted ids marked."""
    memory = record.trace.memory if record.trace is not None else ""
    gold_ids = record.diagnostics.gold_ids
    marked = mark_ids(clip(memory), gold_ids, "gold")
    predicted = record.prediction.element_id
    if predicted and predicted not in gold_ids:
        marked = mark_ids(marked, [predicted], "pred")
    return marked or "(nothing)"


def _gold_and_prediction(record: StepRecord) -> tuple[str, str]:
    g, p = record.gold, record.prediction
    gold = html_table(
        ["", ""],
        [
            ("repr", record.gold_repr),
            ("op", f"{g.op} {g.value}".strip()),
            ("element ids", ", ".join(record.diagnostics.gold_ids) or "(none usable)"),
        ],
        "kv",
    )
    error = f"{p.error_class or ''} {record.error or ''}".strip() or "-"
    prediction = html_table(
        ["", ""],
        [
            ("element", p.element_id or "-"),
            ("op", f"{p.op or '-'} {p.value}".strip()),
            ("error", error),
        ],
        "kv",
    )
    return gold, prediction


def _scores_html(record: StepRecord) -> str:
    d, s = record.diagnostics, record.score
    phases = "; ".join(
        f"{k} {u.input_tokens}+{u.output_tokens}" for k, u in d.tokens_by_phase.items()
    )
    rows: list[tuple[str, object]] = [
        ("element", s.element_correct),
        ("op F1", f"{s.op_f1:.2f}"),
        ("step success", s.step_success),
        ("look-up hit", d.lookup_hit),
        ("gold shown", d.gold_shown),
        ("fragments", f"{d.reopened} of {d.fragments} read in full"),
        ("tokens (in+out)", phases or "-"),
        ("act prompt", f"{d.prompt_tokens} tokens"),
        ("page", f"{d.page_tokens} tokens"),
        ("gist cache hits", d.gist_cache_hits),
        ("latency", f"{d.latency_s:.1f} s"),
    ]
    return html_table(["", ""], rows, "kv")


def _verdict(score: StepScore) -> str:
    if score.step_success:
        return "success"
    element = "right" if score.element_correct else "wrong"
    return f"element {element}, op F1 {score.op_f1:.2f}"


def _attempt(record: StepRecord) -> str:
    return "" if record.attempt == 1 else f" · attempt {record.attempt}"


def step_html(record: StepRecord) -> str:
    items = "".join(f"<li>{esc(a)}</li>" for a in record.previous_actions)
    previous = f"<ol>{items}</ol>" if items else "<p>(none: first step)</p>"
    gold, prediction = _gold_and_prediction(record)
    trace = record.trace
    return template("step.html").substitute(
        outcome=esc(record.diagnostics.error_class),
        anchor=esc(record.action_uid),
        website=esc(record.gold.website),
        task_id=esc(record.annotation_id),
        step_number=esc(record.step_index + 1),
        verdict=esc(_verdict(record.score) + _attempt(record)),
        task=esc(record.task),
        previous=previous,
        gold=gold,
        prediction=prediction,
        scores=_scores_html(record),
        n_gists=esc(len(trace.gists) if trace else 0),
        gists=_gists_html(record),
        memory=_memory_html(record),
        n_calls=esc(len(trace.calls) if trace else 0),
        calls=_calls_html(record),
    )


def render_report(results: RunResults, records: Iterable[StepRecord], max_steps: int) -> str:
    steps, shown, total = [], 0, 0
    for record in records:
        total += 1
        if shown < max_steps:
            steps.append(step_html(record))
            shown += 1
    score = results.score
    breakdowns = "".join(
        breakdown_html(title, groups)
        for title, groups in (
            ("split", score.by_split),
            ("domain", score.by_domain),
            ("gold op", score.by_op),
        )
    )
    return template("report.html").substitute(
        title=esc(
            f"Mind2Web evaluation: {results.agent or 'run'} with {results.model or 'a model'}"
        ),
        subtitle=esc(results.run_dir),
        style=(TEMPLATES / "style.css").read_text(encoding="utf-8"),
        summary=summary_html(results),
        diagnostics=diagnostics_html(results),
        websites=breakdown_html("website", score.by_website),
        breakdowns=breakdowns,
        steps_note=esc(f"{shown} of {total} steps shown in full (in the order they finished)."),
        steps="".join(steps),
    )


def write_html_report(
    path: Path, results: RunResults, records: Iterable[StepRecord], max_steps: int
) -> None:
    path.write_text(render_report(results, records, max_steps), encoding="utf-8")
