"""Write docs/PERFORMANCE.md and the README's headline figures from the committed benchmark
summaries in bench/summaries/.

Every table in that document is a summary file's own markdown, copied verbatim, under the
command and git revision its JSON records; the README's figures (between its
``<!-- figures:begin -->`` and ``<!-- figures:end -->`` markers) are read from the same JSON
by :func:`readme_figures`: nothing is typed in by hand. Run a benchmark (its command is in its
summary), then this script:

    python bench/performance_doc.py [--summaries bench/summaries] [--out docs/PERFORMANCE.md]
        [--readme README.md]
"""

from __future__ import annotations

import argparse
import json
import textwrap
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent

#: (summary name, section title, what it answers), in the order the document reads
SECTIONS = (
    ("method_quality", "The method's quality, with a capable model's answers", "issue 18"),
    ("reopen_room", "Room to reopen, and gists that name the target", "issue 10"),
    ("coverage", "Look-up coverage: which selector finds the gold's fragment", "issue 10"),
    ("gist_cost", "Reading cost: gist calls and tokens per new page, tokens per step", "issue 11"),
    ("page_states", "Reuse across steps: the gist cache on consecutive page states", "issue 11"),
    ("prefix_share", "Prompt-prefix reuse", "issue 11"),
    ("plan_accuracy", "The cost plan beside what a run spent", "issue 11"),
    ("act_wall", "`webagent act` wall time on a 1 MB page, embedded model", "issue 11"),
    ("page_speed", "Page processing speed against a bare lxml parse", "issue 11"),
    ("overhead", "The agent's own cost per step: tokenize requests and CPU", "issue 19"),
    ("levels_local", "Pages of any size with the embedded model: levels and floors", "issue 20"),
    ("page_speed_agents", "Page processing speed under the agents' 8K plan", "issue 11"),
    ("cpu_contention", "The embedded model beside busy processes", "test stability"),
    ("sweep_intent", "Budget sweep over the intent tasks, every agent", "issue 12"),
    ("stability", "Test stability: the model, fault and eval folders run in a row", "issue 8"),
)

HEADER = """\
# Performance: what it costs to read a page, measured

Written by `python bench/performance_doc.py` from the summaries in `bench/summaries/`; each
section is a summary file as its benchmark wrote it, under the revision and date recorded in
its JSON (a `+dirty` revision had only the summaries themselves uncommitted). Machine: the
project's development machine, 2 CPU cores shared with other jobs, no GPU.

> **Only the first section is the method's accuracy**: its answers come from a capable model
> (a helper LLM reading each request alone, committed in `bench/data/method_answers/` and
> replayed by `bench/method_quality.py`). Every other table's answers come from scripted
> policies, each named by what it does ("oracle look-up + gold act"), or from the embedded
> SmolLM2-135M, which answers near chance and proves plumbing only; what they measure does not
> depend on answer quality: tokens, calls, whether the gold element reached the act prompt,
> retrieval coverage, speed, cache reuse.
"""


def provenance_line(data: dict[str, object]) -> str:
    provenance = data.get("provenance")
    if not isinstance(provenance, dict):
        return "(no provenance recorded)"
    revision = provenance.get("git_revision") or "unknown revision"
    return f"revision `{revision}`, {provenance.get('date', 'undated')}"


def section(summaries: Path, name: str, title: str, issue: str) -> str | None:
    markdown, record = summaries / f"{name}.md", summaries / f"{name}.json"
    if not markdown.is_file():
        return None
    data = json.loads(record.read_text(encoding="utf-8")) if record.is_file() else {}
    body = markdown.read_text(encoding="utf-8").strip()
    # the summary's own headings sit one level below the section's
    body = "\n".join("##" + line if line.startswith("#") else line for line in body.splitlines())
    picture = summaries / f"{name}.png"
    figure = f"\n\n![{title}](../bench/summaries/{picture.name})" if picture.is_file() else ""
    return (
        f"## {title}\n\n*{issue}; `bench/summaries/{name}.md`, {provenance_line(data)}*\n\n"
        f"{body}{figure}\n"
    )


def render(summaries: Path) -> str:
    parts = [HEADER]
    missing = []
    for name, title, issue in SECTIONS:
        text = section(summaries, name, title, issue)
        if text is None:
            missing.append(name)
        else:
            parts.append(text)
    if missing:
        parts.append(f"Not yet measured (no summary file): {', '.join(missing)}.\n")
    return "\n".join(parts)


BEGIN, END = "<!-- figures:begin -->", "<!-- figures:end -->"
METHOD_BEGIN, METHOD_END = "<!-- method:begin -->", "<!-- method:end -->"


def _pct(x: float) -> str:
    return f"{100 * x:.1f} %"


def _load(summaries: Path, name: str) -> dict[str, Any] | None:
    path = summaries / f"{name}.json"
    return json.loads(path.read_text(encoding="utf-8")) if path.is_file() else None


def _revision(data: dict[str, Any]) -> str:
    revision = str(data.get("provenance", {}).get("git_revision") or "unknown")
    return revision[:7] + ("+dirty" if revision.endswith("+dirty") else "")


def _reopen_room(d: dict[str, Any]) -> str:
    s = d["summary"]
    shown = min(
        s[f"{t}|{c}|readagent-p"]["gold_shown_of_survived"]
        for t in ("intent", "grounding")
        for c in ("SmolLM2", "estimate")
    )
    over = sum(v["over_budget_steps"] for v in s.values())
    dropped = sum(v["previous_dropped_while_gists_shown"] for v in s.values())
    return (
        f'**Room to reopen** (`reopen_room`, 8K, policy "oracle look-up + gold act"): the gold '
        f"element reaches the act prompt on {_pct(shown)} of the steps whose gold survived "
        f"segmentation, under both counters; {over} steps over budget, {dropped} previous "
        "actions dropped while a gist was shown. The extractive gists name the gold element in "
        f"the look-up prompt on {_pct(s['intent|SmolLM2|readagent-p']['gold_named_in_gists'])} "
        "of intent steps with the SmolLM2 counter and "
        f"{_pct(s['intent|estimate|readagent-p']['gold_named_in_gists'])} with the estimate."
    )


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
    p_single = s["readagent-p, per fragment (gist_batch=1)"]
    p_batched = s["readagent-p, batched (default gist_batch)"]
    every = s.get("readagent-p, batched, every page gisted (read_whole_page=false)")
    page_ids = s.get("batched, controls marked by page id (gist_view=reading-ids)")
    return (
        f"**Reading cost** (`gist_cost`, 8K): batched gisting takes a median of "
        f"{batched['gist_calls_median']:g} calls per new page ({single['gist_calls_median']:g} "
        f"one fragment per call) and reads {batched['gist_input_x_compact_median']:.2f}× the "
        f"page's compact tokens (one fragment per call: "
        f"{single['gist_input_x_compact_median']:.2f}×"
        + (
            f"; controls marked by page id: {page_ids['gist_input_x_compact_median']:.2f}×"
            if page_ids
            else ""
        )
        + "); uncached, with look-up and act answered by a scripted policy (BM25 look-up, "
        "gold act), ReadAgent-P's steps spend "
        f"{p_batched['x_raw_html_median_per_step']:.2f}× the input tokens of raw HTML cut to "
        "the same budget on the median step and "
        f"{p_batched['x_raw_html_of_means']:.2f}× over all steps (one fragment per call: "
        f"{p_single['x_raw_html_median_per_step']:.2f}× and "
        f"{p_single['x_raw_html_of_means']:.2f}×"
        + (
            f"; gisting also the pages that fit the act prompt whole: "
            f"{every['x_raw_html_median_per_step']:.2f}× and {every['x_raw_html_of_means']:.2f}×"
            if every
            else ""
        )
        + ")."
    )


def _page_states(d: dict[str, Any]) -> str:
    rows = {r["budget"]: r for r in d["summary"] if r["source"] == "all"}
    big, small = rows[max(rows)], rows[min(rows)]
    return (
        f"**Reuse across steps** (`page_states`, {big['pairs']} pairs of consecutive page "
        f"states): the gist cache answers a median {_pct(big['ours_median'])} of the second "
        f"state's fragments at {max(rows) // 1024}K and {_pct(small['ours_median'])} at "
        f"{min(rows) // 1024}K (the baseline {d.get('baseline', '')} in the same run: "
        f"{_pct(big['baseline_median'])} and {_pct(small['baseline_median'])})."
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


def _act_wall(d: dict[str, Any]) -> str:
    old, new = d["runs"]
    return (
        f"**`webagent act` on a 1 MB page** (`act_wall`, embedded model, default settings): "
        f"{new['wall_s']:.0f} s against {old['wall_s']:.0f} s with per-fragment gisting, "
        f"{d['ratio']:.2f}× the wall time ({new['calls']} calls against {old['calls']})."
    )


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


def _levels_local(d: dict[str, Any]) -> str:
    s = d["summary"]
    steps = sum(f["pages"] for f in s.values())
    acted = sum(f["ended_with_action"] for f in s.values())
    scope = d["scope"][:1].lower() + d["scope"][1:]  # mid-sentence here
    return (
        f"**Pages of any size** (`levels_local`, embedded model, extractive gists; "
        f"{scope} and the generated big page; {', '.join(s)}): {acted} of {steps} steps "
        f"ended with an action, {sum(f['below_floor'] for f in s.values())} of "
        f"{sum(f['gist_lines'] for f in s.values())} look-up gist lines kept fewer than 5 words "
        f"(pages up to {max(f['most_fragments'] for f in s.values()):,} fragments)."
    )


FIGURES = (
    ("reopen_room", _reopen_room),
    ("coverage", _coverage),
    ("gist_cost", _gist_cost),
    ("page_states", _page_states),
    ("plan_accuracy", _plan),
    ("act_wall", _act_wall),
    ("page_speed", _page_speed),
    ("overhead", _overhead),
    ("levels_local", _levels_local),
)


_GLUE = "\x00"  # a space that textwrap does not break at


def readme_figures(summaries: Path) -> str:
    """The README's bullets, one per summary present, each naming its summary's revision."""
    lines = []
    for name, figure in FIGURES:
        data = _load(summaries, name)
        if data is not None:
            bullet = f"- {figure(data)} *[{_revision(data)}]*"
            # a figure's unit stays on its line: "20.7 %" is never split before the "%"
            glued = bullet.replace(" %", _GLUE + "%")
            wrapped = textwrap.fill(glued, width=96, subsequent_indent="  ")
            lines.append(wrapped.replace(_GLUE, " "))
    return "\n".join(lines)


def method_block(summaries: Path) -> str:
    """The README's lead: the method_quality table as its bench wrote it (no heading)."""
    path = summaries / "method_quality.md"
    if not path.is_file():
        return "(not measured yet: `python bench/method_quality.py`)"
    lines = path.read_text(encoding="utf-8").strip().splitlines()
    return "\n".join(line for line in lines if not line.startswith("# ")).strip()


def _replace_block(text: str, begin: str, end: str, body: str, readme: Path) -> str:
    if begin not in text or end not in text:
        raise SystemExit(f"{readme}: no {begin} ... {end} block to write into")
    head, rest = text.split(begin, 1)
    _, tail = rest.split(end, 1)
    return f"{head}{begin}\n{body}\n{end}{tail}"


def write_readme(readme: Path, summaries: Path) -> None:
    text = readme.read_text(encoding="utf-8")
    text = _replace_block(text, BEGIN, END, readme_figures(summaries), readme)
    text = _replace_block(text, METHOD_BEGIN, METHOD_END, method_block(summaries), readme)
    readme.write_text(text, encoding="utf-8")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summaries", type=Path, default=HERE / "summaries")
    parser.add_argument("--out", type=Path, default=HERE.parent / "docs" / "PERFORMANCE.md")
    parser.add_argument("--readme", type=Path, default=HERE.parent / "README.md")
    args = parser.parse_args()
    args.out.write_text(render(args.summaries), encoding="utf-8")
    write_readme(args.readme, args.summaries)
    print(f"wrote {args.out} and the figures in {args.readme}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
