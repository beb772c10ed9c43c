"""Plain-text tables for the terminal: one score report, or several runs side by side."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from mind2web_eval.aggregate import Aggregate, ScoreReport
from mind2web_eval.diagnostics import DiagnosticsSummary

#: what a table shows for a figure that does not apply (look-up recall of an agent that
#: chooses nothing, cached tokens of an agent that writes no gists)
NOT_APPLICABLE = "\u2014"


def pct(value: float | None, unit: str = "") -> str:
    """``value`` in percent (``unit`` after it), or :data:`NOT_APPLICABLE`."""
    return NOT_APPLICABLE if value is None else f"{100 * value:.1f}{unit}"


def per_step(value: float | None, digits: int = 0) -> str:
    """A per-step figure, or :data:`NOT_APPLICABLE`."""
    return NOT_APPLICABLE if value is None else f"{value:.{digits}f}"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    """Left-aligned first column, right-aligned others."""
    widths = [max(len(str(r[i])) for r in [headers, *rows]) for i in range(len(headers))]

    def line(cells: Sequence[str]) -> str:
        parts = [
            str(c).ljust(w) if i == 0 else str(c).rjust(w)
            for i, (c, w) in enumerate(zip(cells, widths, strict=True))
        ]
        return "  ".join(parts).rstrip()

    rule = "  ".join("-" * w for w in widths)
    return "\n".join([line(headers), rule, *(line(r) for r in rows)])


def _with_ci(agg: Aggregate, key: str, value: float) -> str:
    ci = agg.ci.get(key)
    return pct(value) + (f" [{pct(ci.low)}, {pct(ci.high)}]" if ci else "")


def overall_table(agg: Aggregate) -> str:
    rows = [
        [
            label,
            _with_ci(agg, f"{label}.element_acc", values.element_acc),
            _with_ci(agg, f"{label}.op_f1", values.op_f1),
            _with_ci(agg, f"{label}.step_sr", values.step_sr),
        ]
        for label, values in (("macro", agg.macro), ("micro", agg.micro))
    ]
    head = table(["average", "element acc", "op F1", "step SR"], rows)
    task_sr = _with_ci(agg, "task_sr", agg.task_sr)
    return f"{head}\ntask SR: {task_sr}  ({agg.tasks} tasks, {agg.steps} steps)"


def breakdown_table(title: str, groups: Mapping[str, Aggregate]) -> str:
    rows = [
        [name, str(g.tasks), str(g.steps), pct(g.macro.element_acc), pct(g.macro.op_f1),
         pct(g.macro.step_sr), pct(g.task_sr)]
        for name, g in groups.items()
    ]  # fmt: skip
    return table([title, "tasks", "steps", "elem", "op F1", "step SR", "task SR"], rows)


def format_score_report(report: ScoreReport, notes: Sequence[str] = ()) -> str:
    counts = report.counts
    lines = [
        f"protocol: {report.settings.describe()}",
        f"steps: {counts.steps_in_data} in data, {counts.steps_scored} scored, "
        f"{counts.steps_skipped} skipped; {counts.no_positive} without a positive, "
        f"{counts.outside_top_k} without one in the top-k",
        f"predictions: {counts.missing_predictions} missing (scored wrong), "
        f"{counts.no_action_predictions} without an action, "
        f"{counts.unknown_predictions} for steps not in the data",
        *(f"note: {n}" for n in notes),
        "",
        "overall (percent, macro = mean over tasks as in the paper tables; 95% CI):",
        overall_table(report.overall),
    ]
    for title, groups in (("split", report.by_split), ("domain", report.by_domain),
                          ("website", report.by_website), ("gold op", report.by_op)):  # fmt: skip
        if groups:
            lines += ["", breakdown_table(title, groups)]
    return "\n".join(lines)


def format_diagnostics(diag: DiagnosticsSummary) -> str:
    classes = ", ".join(f"{k} {v}" for k, v in diag.error_classes.items()) or "-"
    comp = "-" if diag.mean_compression is None else f"{diag.mean_compression:.1f}x"
    return "\n".join(
        [
            f"step outcomes: {classes}",
            "look-up recall (gold inside the fragments read in full): "
            f"{pct(diag.lookup_recall, '%')}; "
            f"gold id in the act prompt: {pct(diag.gold_shown_rate, '%')}",
            f"per step: {diag.calls_per_step:.2f} calls, {diag.tokens_per_step:.0f} tokens spent "
            f"({diag.input_tokens_per_step:.0f} in / {diag.output_tokens_per_step:.0f} out), "
            f"{per_step(diag.cached_tokens_per_step)} served from the gist cache, "
            f"{diag.mean_latency_s:.1f} s; page shrunk {comp}; "
            f"gist cache hits {diag.gist_cache_hits}",
        ]
    )
