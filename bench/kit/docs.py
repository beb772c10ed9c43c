"""Write docs/PERFORMANCE.md and the README's figures from the committed summaries.

The document has one section per question (``bench.figures.FIGURES``, in its order), each the
summary files of the figure that answers it, copied verbatim under the revision their JSON
records; the README's figures (between its ``<!-- figures:begin -->`` and
``<!-- figures:end -->`` markers, and the method table between ``<!-- method:begin -->`` and
``<!-- method:end -->``, the live one between ``<!-- live:begin -->`` and ``<!-- live:end -->``)
are read from the same files: nothing is typed in by hand.
``python bench/run.py`` runs every figure and then this; after running one figure:

    python bench/kit/docs.py [--summaries bench/summaries] [--out docs/PERFORMANCE.md]
        [--readme README.md]
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

from bench.figures import FIGURES, Figure
from bench.kit import REPO, SUMMARIES

HEADER = """\
# Performance: what it costs to read a page, measured

Written by `python bench/kit/docs.py` from the summaries in `bench/summaries/`, one section per
question a user asks; each section is the summary files of the figure script that answers it
(`bench/figures/`, all run by `make bench`), as that script wrote them, under the revision and
date recorded in its JSON (a `+dirty` revision had only the summaries themselves uncommitted),
with the command that ran then.
Machine: the project's development machine, 2 CPU cores shared with other jobs, no GPU.

> **Only the first section is the method's accuracy**: its answers come from a capable model
> (a helper LLM reading each request alone, committed in `bench/data/method_answers/` and
> replayed by `bench/figures/method_quality.py`). Every other table's answers come from
> scripted policies, each named by what it does ("word-overlap look-up + gold act"), or from the
> embedded SmolLM2-135M, which answers near chance and proves plumbing only; what they measure
> does not depend on answer quality: tokens, calls, retrieval coverage, speed.
"""


def provenance_line(data: dict[str, object]) -> str:
    provenance = data.get("provenance")
    if not isinstance(provenance, dict):
        return "(no provenance recorded)"
    revision = provenance.get("git_revision") or "unknown revision"
    return f"revision `{revision}`, {provenance.get('date', 'undated')}"


def summary_text(summaries: Path, name: str, title: str) -> str | None:
    """A summary's markdown (its headings one level below the section's), its provenance and
    its plot, or None where it was not measured."""
    markdown, record = summaries / f"{name}.md", summaries / f"{name}.json"
    if not markdown.is_file():
        return None
    data = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else {}
    body = markdown.read_text(encoding="utf-8").strip()
    body = "\n".join("##" + line if line.startswith("#") else line for line in body.splitlines())
    picture = summaries / f"{name}.png"
    figure = f"\n\n![{title}](../bench/summaries/{picture.name})" if picture.is_file() else ""
    return f"*`bench/summaries/{name}.md`, {provenance_line(data)}*\n\n{body}{figure}\n"


def section(summaries: Path, figure: Figure) -> str:
    parts = [f"## {figure.question}\n\n`make bench` runs `{figure.command}`.\n"]
    for name in figure.summaries:
        text = summary_text(summaries, name, figure.question)
        parts.append(text or f"Not measured yet (no `bench/summaries/{name}.md`).\n")
    return "\n".join(parts)


def render(summaries: Path) -> str:
    return "\n".join([HEADER, *(section(summaries, figure) for figure in FIGURES)])


BEGIN, END = "<!-- figures:begin -->", "<!-- figures:end -->"
METHOD_BEGIN, METHOD_END = "<!-- method:begin -->", "<!-- method:end -->"
LIVE_BEGIN, LIVE_END = "<!-- live:begin -->", "<!-- live:end -->"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _load(summaries: Path, name: str) -> dict[str, Any] | None:
    path = summaries / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _revision(data: dict[str, Any]) -> str:
    revision = str(data.get("provenance", {}).get("git_revision") or "unknown")
    return revision[:7] + ("+dirty" if revision.endswith("+dirty") else "")


def _coverage(d: dict[str, Any]) -> str:
    intent = d["summary"]["intent tasks, SmolLM2 counter"]
    grounding = d["summary"]["grounding tasks, SmolLM2 counter"]
    heldout = d["summary"].get("held-out intent tasks, SmolLM2 counter")

    def listed(rows: dict[str, Any]) -> str:
        return ", ".join(f"{k} {_pct(v['coverage_at_5_of_survived'])}" for k, v in rows.items())

    return (
        f"**Look-up coverage @5** (`coverage`, intent steps whose gold survived, SmolLM2 "
        f"counter): {listed(intent)}"
        + (
            f"; on held-out intent tasks written after the selectors were chosen: {listed(heldout)}"
            if heldout
            else ""
        )
        + "; on tasks that quote their target BM25 reaches "
        f"{_pct(grounding['bm25']['coverage_at_5_of_survived'])}."
    )


def _gist_cost(d: dict[str, Any]) -> str:
    s = d["summary"]
    single, batched = s["per fragment (gist_batch=1)"], s["batched (default gist_batch)"]
    page_ids = s["batched, controls marked by page id (gist_view=reading-ids)"]
    return (
        f"**Reading cost** (`gist_cost`, 8K): batched gisting takes a median of "
        f"{batched['gist_calls_median']:g} calls per new page ({single['gist_calls_median']:g} "
        f"one fragment per call) and reads {batched['gist_input_x_compact_median']:.2f}× the "
        f"page's compact tokens (one fragment per call: "
        f"{single['gist_input_x_compact_median']:.2f}×; controls marked by page id: "
        f"{page_ids['gist_input_x_compact_median']:.2f}×)."
    )


def _plan(d: dict[str, Any]) -> str:
    agents = d["agents"]
    exact = [a["agent"] for a in agents if a["calls_exact"] and a["input_within_10pct"]]
    off = [a for a in agents if a["agent"] not in exact]
    bound = [a["agent"] for a in off if a.get("upper_bound_holds")]
    broken = [a["agent"] for a in off if not a.get("upper_bound_holds")]
    return (
        "**Cost plan** (`plan_accuracy`, embedded model, bundled tasks): `--plan` matches the "
        f"calls exactly and the input tokens within 10 % for {', '.join(exact) or 'no agent'}"
        + (f"; for {', '.join(bound)}, whose cost depends on the model's answers (gist "
           "length, STOP, gists that name no id), it is an upper bound that held" if bound else "")
        + (f"; it was exceeded for {', '.join(broken)}" if broken else "")
        + "."
    )  # fmt: skip


def _page_speed(d: dict[str, Any]) -> str:
    ours, base = (d["per_mib"][k]["cpu_ms_per_mib"] for k in d["per_mib"])
    baseline = list(d["per_mib"])[1]
    return (
        f"**Speed** (`page_speed`): parse + clean + segment costs "
        f"{ours['ours'] / ours['lxml']:.2f}× the CPU time of a bare `lxml.html.fromstring` of "
        f"the same bytes ({baseline}: {base['ours'] / base['lxml']:.2f}×), every call from the "
        f"same start ({d['provenance']['settings']['start']}); "
        f"{ours['ours_left'] / ours['lxml_left']:.2f}× ({baseline}: "
        f"{base['ours_left'] / base['lxml_left']:.2f}×) from the heap the parse before it "
        "left."
    )


def _overhead(d: dict[str, Any]) -> str:
    s = d["summary"]
    worst = max(s.values(), key=lambda f: f["tokenize_requests_p95"])
    cpu = max(f["cpu_s_median"] for f in s.values())
    policy = d["provenance"]["settings"]["policy_name"]
    median = max(f["tokenize_requests_median"] for f in s.values())
    baseline = d["provenance"]["settings"].get("baseline")
    beside = ""
    if baseline:
        worst_cpu = max(s.items(), key=lambda item: item[1]["cpu_s_median"])
        ratios = [f["cpu_median_vs_baseline"] for f in s.values()]
        beside = (
            f" (baseline {baseline} on the same steps in the same run: at most "
            f"{max(f['baseline_tokenize_requests_p95'] for f in s.values()):g} requests at the "
            f"95th percentile; CPU median, ours ÷ its, {min(ratios):.2f} to {max(ratios):.2f}; "
            f"{worst_cpu[0]}'s, our slowest, was "
            f"{worst_cpu[1]['baseline_cpu_s_median']:.3f} s there)"
        )
    return (
        f"**The agent's own cost** (`overhead`, real `llama_cpp.server` tokenizer, answers by "
        f"the scripted policy *{policy}*): at most {median:g} "
        f"tokenize requests on the median step and {worst['tokenize_requests_p95']:g} at the "
        f"95th percentile for every agent; at most {cpu:.3f} s of CPU outside model calls on "
        f"the median step{beside}."
    )


#: the README's bullet of each summary that has one, from its JSON
HEADLINES = {
    "coverage": _coverage,
    "gist_cost": _gist_cost,
    "overhead": _overhead,
    "plan_accuracy": _plan,
    "page_speed": _page_speed,
}


_GLUE = "\x00"  # a space that textwrap does not break at


def readme_figures(summaries: Path) -> str:
    """The README's bullets, one per summary present, in the order of the questions, each
    naming its summary's revision."""
    lines = []
    for name in (name for figure in FIGURES for name in figure.summaries if name in HEADLINES):
        data = _load(summaries, name)
        if data is not None:
            bullet = f"- {HEADLINES[name](data)} *[{_revision(data)}]*"
            # a figure's unit stays on its line: "20.7 %" is never split before the "%"
            glued = bullet.replace(" %", _GLUE + "%")
            wrapped = textwrap.fill(glued, width=96, subsequent_indent="  ")
            lines.append(wrapped.replace(_GLUE, " "))
    return "\n".join(lines)


def lead_block(summaries: Path, name: str, alt: str) -> str:
    """A figure the README leads a section with: its summary as the figure wrote it, up to its
    first subsection (no heading), and its picture."""
    path = summaries / f"{name}.md"
    if not path.is_file():
        return f"(not measured yet: `python bench/figures/{name}.py`)"
    text = path.read_text(encoding="utf-8").split("\n## ", 1)[0]
    body = "\n".join(line for line in text.strip().splitlines() if not line.startswith("# "))
    picture = summaries / f"{name}.png"
    if picture.is_file():
        body = body.strip() + f"\n\n![{alt}](bench/summaries/{picture.name})"
    return body.strip()


def _replace_block(text: str, begin: str, end: str, body: str, readme: Path) -> str:
    if begin not in text or end not in text:
        raise SystemExit(f"{readme}: no {begin} ... {end} block to write into")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def write_docs(
    summaries: Path = SUMMARIES,
    out: Path = REPO / "docs" / "PERFORMANCE.md",
    readme: Path = REPO / "README.md",
) -> None:
    out.write_text(render(summaries), encoding="utf-8")
    text = readme.read_text(encoding="utf-8")
    text = _replace_block(text, BEGIN, END, readme_figures(summaries), readme)
    method = lead_block(summaries, "method_quality", "Step SR against USD per 1,000 steps")
    text = _replace_block(text, METHOD_BEGIN, METHOD_END, method, readme)
    live = lead_block(summaries, "live_quality", "Live success so far")
    text = _replace_block(text, LIVE_BEGIN, LIVE_END, live, readme)
    readme.write_text(text, encoding="utf-8")
    print(f"wrote {out} and the figures in {readme}")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--summaries", type=Path, default=SUMMARIES)
    parser.add_argument("--out", type=Path, default=REPO / "docs" / "PERFORMANCE.md")
    parser.add_argument("--readme", type=Path, default=REPO / "README.md")
    args = parser.parse_args()
    write_docs(args.summaries, args.out, args.readme)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
