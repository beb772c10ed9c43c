"""Write docs/PERFORMANCE.md from the committed benchmark summaries in bench/summaries/.

Every table in that document is a summary file's own markdown, copied verbatim, under the
command and git revision its JSON records: nothing is typed in by hand. Run a benchmark
(its command is in its summary), then this script:

    python bench/performance_doc.py [--summaries bench/summaries] [--out docs/PERFORMANCE.md]
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

HERE = Path(__file__).resolve().parent

#: (summary name, section title, what it answers), in the order the document reads
SECTIONS = (
    ("reopen_room", "Room to reopen, and gists that name the target", "issue 10"),
    ("coverage", "Look-up coverage: which selector finds the gold's fragment", "issue 10"),
    ("gist_cost", "Reading cost: gist calls and tokens per new page, tokens per step", "issue 11"),
    ("page_states", "Reuse across steps: the gist cache on consecutive page states", "issue 11"),
    ("prefix_share", "Prompt-prefix reuse", "issue 11"),
    ("plan_accuracy", "The cost plan beside what a run spent", "issue 11"),
    ("page_speed", "Page processing speed against a bare lxml parse", "issue 11"),
    ("page_speed_agents", "Page processing speed under the agents' 8K plan", "issue 11"),
    ("sweep_intent", "Budget sweep over the intent tasks, every agent", "issue 12"),
    ("stability", "Test stability: the model, fault and eval folders run in a row", "issue 8"),
)

HEADER = """\
# Performance: what it costs to read a page, measured

Written by `python bench/performance_doc.py` from the summaries in `bench/summaries/`; each
section is a summary file as its benchmark wrote it, under the revision and date recorded in
its JSON (a `+dirty` revision had only the summaries themselves uncommitted). Machine: the
project's development machine, 2 CPU cores shared with other jobs, no GPU.

> **No row below is the method's accuracy.** There is no capable model on these machines:
> answers come from scripted policies, each named by what it does ("oracle look-up + gold
> act"), or from the embedded SmolLM2-135M, which answers near chance and proves plumbing
> only. What the tables measure does not depend on answer quality: tokens, calls, whether
> the gold element reached the act prompt, retrieval coverage, speed, cache reuse.
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


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--summaries", type=Path, default=HERE / "summaries")
    parser.add_argument("--out", type=Path, default=HERE.parent / "docs" / "PERFORMANCE.md")
    args = parser.parse_args()
    args.out.write_text(render(args.summaries), encoding="utf-8")
    print(f"wrote {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
