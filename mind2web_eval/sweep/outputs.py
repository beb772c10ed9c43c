"""The sweep's outputs, all from the rows (and so all re-made by ``--rescore``):

``table.md`` (the table with the protocol under it), ``results.json`` (for programs),
``sweep.png`` (quality against input tokens per step, one line per agent) and ``sweep.html``
(the table and the plot, self-contained: the PNG is inlined, nothing is fetched, no script).
"""

from __future__ import annotations

import base64
import json
import os
from collections.abc import Sequence
from pathlib import Path

from pydantic import BaseModel

from mind2web_eval.scoring import ScoringSettings
from mind2web_eval.sweep.spec import SweepSpec
from mind2web_eval.sweep.table import (
    COLUMNS,
    QUALITY_LABELS,
    SweepRow,
    markdown_table,
    quality_axis,
    quality_value,
    row_cells,
)

TEMPLATES = Path(__file__).parent / "templates"


class SweepFiles(BaseModel):
    table: Path
    json_path: Path
    png: Path
    html: Path


def _atomic_write(path: Path, data: bytes) -> None:
    tmp = path.with_name(path.name + ".tmp")
    tmp.write_bytes(data)
    os.replace(tmp, path)


def quality_note(axis: str) -> str:
    if axis == "gold_shown":
        return (
            "Quality axis: the share of steps whose act prompt shows a gold element, the ceiling "
            "a perfect act model reaches. The model of this sweep cannot be judged (the "
            "embedded SmolLM2-135M answers near chance), so its step SR is not plotted."
        )
    return "Quality axis: step success rate (macro over tasks)."


def notes(spec: SweepSpec, axis: str) -> list[str]:
    scoring = ScoringSettings(**spec.scoring)
    model = spec.config.get("model", {})
    lines = [
        f"data: {spec.data}" + (f" (first {spec.limit} tasks)" if spec.limit else ""),
        f"model: {model.get('model') or '?'} (backend {model.get('backend', '?')})",
        f"protocol: {scoring.describe()}",
        quality_note(axis),
    ]
    if "mindact" in spec.agents:
        from webagent.agents.mindact import PROTOCOL_NOTE

        lines.append(PROTOCOL_NOTE)
    price = spec.pricing()
    if price is None:
        lines.append("cost: no prices given (--price-sheet NAME, or --price-in/--price-out)")
    else:
        lines.append(
            f"cost at {price.describe()}; the share of input tokens from the provider's prompt "
            "cache in brackets (measured where the answers reported it, else estimated)"
        )
    return lines


def answered_by(spec: SweepSpec) -> str:
    """Who answered the sweep's requests, for the plot itself: the model, or the scripted
    policy, by the name it runs under."""
    model = spec.config.get("model", {})
    return f"answers: {model.get('model') or '?'} (backend {model.get('backend', '?')})"


def write_png(path: Path, rows: Sequence[SweepRow], axis: str, answers: str = "") -> None:
    import matplotlib

    matplotlib.use("Agg")
    from matplotlib import pyplot as plt

    figure, ax = plt.subplots(figsize=(8, 5), dpi=100)
    try:
        for agent in dict.fromkeys(r.agent for r in rows):
            points = [
                (r.input_tokens_per_step, quality_value(r, axis), r.budget)
                for r in rows
                if r.agent == agent and r.steps and quality_value(r, axis) is not None
            ]
            if not points:
                continue
            xs = [p[0] for p in points]
            ys = [float(p[1] or 0.0) * 100 for p in points]
            ax.plot(xs, ys, marker="o", label=agent)
            for x, y, budget in zip(xs, ys, (p[2] for p in points), strict=True):
                ax.annotate(f"{budget}", (x, y), textcoords="offset points", xytext=(4, 4))
        xs_all = [r.input_tokens_per_step for r in rows if r.input_tokens_per_step > 0]
        if xs_all and max(xs_all) / min(xs_all) > 4:
            ax.set_xscale("log")
        ax.set_xlabel("input tokens per step (all calls: gists, look-ups, act)")
        label = QUALITY_LABELS[axis]
        ax.set_ylabel("gold shown in act prompt (%)" if axis == "gold_shown" else f"{label} (%)")
        title = (
            "Share of steps whose act prompt shows a gold element\n"
            "(the ceiling of a perfect act model; this model cannot be judged)"
            if axis == "gold_shown"
            else "Step success rate against cost"
        )
        ax.set_title(f"{title}\n{answers}" if answers else title, fontsize=9)
        ax.set_ylim(-2, 102)
        ax.grid(True, alpha=0.3)
        if ax.get_legend_handles_labels()[0]:
            ax.legend(title="agent (points: budget)", fontsize=8)
        figure.tight_layout()
        tmp = path.with_name(path.name + ".tmp")
        figure.savefig(tmp, format="png", metadata={"Software": None})
        os.replace(tmp, path)
    finally:
        plt.close(figure)


def write_html(path: Path, spec: SweepSpec, rows: Sequence[SweepRow], axis: str, png: Path) -> None:
    from jinja2 import Environment, FileSystemLoader, select_autoescape

    env = Environment(
        loader=FileSystemLoader(TEMPLATES), autoescape=select_autoescape(["html", "j2"])
    )
    image = base64.b64encode(png.read_bytes()).decode("ascii")
    html = env.get_template("sweep.html.j2").render(
        title=f"Sweep: {', '.join(spec.agents)} at {', '.join(map(str, spec.budgets))} tokens",
        columns=COLUMNS,
        rows=[row_cells(r) for r in rows],
        notes=notes(spec, axis),
        quality=quality_note(axis),
        image=image,
    )
    _atomic_write(path, html.encode("utf-8"))


def write_outputs(out: Path, spec: SweepSpec, rows: Sequence[SweepRow]) -> SweepFiles:
    axis = quality_axis(spec, rows)
    files = SweepFiles(
        table=out / "table.md",
        json_path=out / "results.json",
        png=out / "sweep.png",
        html=out / "sweep.html",
    )
    text = markdown_table(rows) + "\n" + "\n".join(f"- {n}" for n in notes(spec, axis)) + "\n"
    _atomic_write(files.table, text.encode("utf-8"))
    payload = {
        "spec": spec.model_dump(mode="json"),
        "quality_axis": axis,
        "quality_label": QUALITY_LABELS[axis],
        "notes": notes(spec, axis),
        "cells": [r.model_dump(mode="json") for r in rows],
    }
    _atomic_write(files.json_path, (json.dumps(payload, indent=2) + "\n").encode("utf-8"))
    write_png(files.png, rows, axis, answered_by(spec))
    write_html(files.html, spec, rows, axis, files.png)
    return files
