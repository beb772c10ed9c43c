"""What does reading a new page cost? Batched gisting against one call per fragment.

On the saved pages, at an 8K budget: gist calls and gist input tokens per new page against the
page's own compact tokens (the cleaned page the agents read, under the embedded model's real
tokenizer), one fragment per call, batched, and batched with controls marked by their page ids;
and whether the three name the same element ids. The gists come from the scripted policy
``bench.kit.scripted.POLICY`` (extractive gists as long as a model's), never from a model.
What a whole step costs, with a capable model's answers: ``method_quality``.

    python bench/figures/gist_cost.py [--quick] [--pages DIR]
"""

from __future__ import annotations

import time
from pathlib import Path
from statistics import median
from typing import Any

from bench.kit import (
    BUDGET,
    PAGES,
    figure_parser,
    markdown_table,
    mean,
    publish,
    real_counter,
    sha12,
)
from bench.kit.scripted import POLICY, Script, scripted_model
from webagent.agents.context import context_budget, segment_settings
from webagent.agents.registry import AgentSettings
from webagent.gist.batch import GistView
from webagent.gist.gister import build_gister
from webagent.html.segment import segment_html
from webagent.method.memory import shown_ids
from webagent.model.calls import CallLog

#: how the page is gisted: the gist batch (None: the default) and what the gister reads
MODES: dict[str, tuple[int | None, GistView]] = {
    "per fragment (gist_batch=1)": (1, "reading"),
    "batched (default gist_batch)": (None, "reading"),
    "batched, controls marked by page id (gist_view=reading-ids)": (None, "reading-ids"),
}


def page_rows(pages: list[Path], script: Script) -> list[dict[str, Any]]:
    rows = []
    for path in pages:
        html = path.read_text(encoding="utf-8", errors="replace")
        row: dict[str, Any] = {"page": path.name, "bytes": path.stat().st_size}
        named: dict[str, list[list[str]]] = {}
        for label, (batch, view) in MODES.items():
            model, backend = scripted_model(script)
            extra: dict[str, Any] = {} if batch is None else {"gist_batch": batch}
            settings = AgentSettings(
                agent="gist-only", context_budget=BUDGET, gist_view=view, **extra
            )
            page = segment_html(html, segment_settings(settings, model), model.count_tokens)
            script.begin(page)
            budget = context_budget(settings, model)
            gister = build_gister("model", settings.gist_words, settings.gist_max_tokens,
                                  settings.gist_batch, budget, view=view)  # fmt: skip
            log = CallLog(model)
            gists = gister.gist_all(page.fragments, log, None)
            usage = log.usage()["gist"]
            compact = script.counter("\n".join(f.html for f in page.fragments))
            row.update({"fragments": len(page.fragments), "compact_tokens": compact})
            row[label] = {
                "calls": usage.calls,
                "input_tokens": usage.input_tokens,
                "output_tokens": usage.output_tokens,
                "largest_call": max(c.input_tokens for c in log.calls),
                "x_compact": usage.input_tokens / compact,
            }
            named[label] = [shown_ids(g, page.element_ids) for g in gists]
            backend.requests.clear()
        single, batched, page_ids = named.values()
        row["same_ids_fragments"] = sum(a == b for a, b in zip(single, batched, strict=True))
        row["same_ids_as_page_ids"] = sum(a == b for a, b in zip(page_ids, batched, strict=True))
        rows.append(row)
        print(f"{path.name[:48]:48s} {row['fragments']:3d} fragments", flush=True)
    return rows


def table(pages: list[dict[str, Any]]) -> tuple[str, dict[str, Any]]:
    summary: dict[str, Any] = {"pages": len(pages), "budget": BUDGET}
    rows = []
    for label in MODES:
        calls = [p[label]["calls"] for p in pages]
        x_compact = [p[label]["x_compact"] for p in pages]
        rows.append([label, median(calls), mean(calls), max(calls), median(x_compact),
                     max(x_compact), mean([p[label]["input_tokens"] for p in pages]),
                     max(p[label]["largest_call"] for p in pages)])  # fmt: skip
        summary[label] = {
            "gist_calls_median": median(calls),
            "gist_calls_max": max(calls),
            "gist_input_x_compact_median": median(x_compact),
            "gist_input_x_compact_max": max(x_compact),
        }
    same = sum(p["same_ids_fragments"] for p in pages)
    same_as_page_ids = sum(p["same_ids_as_page_ids"] for p in pages)
    total = sum(p["fragments"] for p in pages)
    summary["fragments_whose_gists_name_the_same_ids"] = f"{same}/{total}"
    summary["fragments_whose_numbered_gists_name_the_page_id_gists_ids"] = (
        f"{same_as_page_ids}/{total}"
    )
    headers = (
        "gisting | gist calls/page median | mean | max | gist input ÷ page compact tokens, median"
        " | max | gist input tok/page mean | largest call"
    )
    text = (
        f"## Gist cost of a new page ({len(pages)} saved pages, budget {BUDGET}, SmolLM2 "
        f"tokenizer)\n\n{markdown_table(headers, rows)}\n\nBatched and single gists name the "
        f"same element ids on {same} of {total} fragments (scripted extractive gists: batching "
        "changes cost, not which gist a fragment gets). Gists written against numbered controls "
        "name, once their numbers are mapped back, the same ids as gists written against page "
        f"ids on {same_as_page_ids} of {total} fragments.\n\nScripted gists (no model "
        f"answers): {POLICY['gist']}."
    )
    return text, summary


def main() -> None:
    parser = figure_parser(__doc__)
    parser.add_argument("--pages", type=Path, default=PAGES, help="saved real pages")
    parser.add_argument("--quick", action="store_true", help="the first 6 pages, a smoke run")
    args = parser.parse_args()
    started = time.perf_counter()
    pages = sorted(args.pages.glob("*.html"))
    rows = page_rows(pages[:6] if args.quick else pages, Script(real_counter()))
    text, summary = table(rows)
    settings = {"context_budget": BUDGET, "policy": POLICY, "quick": args.quick}
    publish("gist_cost", args, settings=settings, data={"pages_sha12": sha12(args.pages)},
            started=started, text=text, summary=summary, pages=rows)  # fmt: skip


if __name__ == "__main__":
    main()
