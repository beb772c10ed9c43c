"""Scale: how parse/segment time, memory, fragment count and prompt tokens grow with page size.

Pages of 50 KB to 5 MB are made by concatenating the ``<body>`` contents of the real pages
(in file-name order; each body parsed and re-serialised on its own, so that one page's unclosed
element cannot swallow the pages after it; cut at a tag boundary). Prompt tokens come from
one ReadAgent-P step driven by the scripted model (``scripted_model.POLICY``), SmolLM2 tokenizer.

    python bench/scale.py [--quick] [--out bench/results]     # writes scale.png too
"""

from __future__ import annotations

import argparse
import atexit
import shutil
import tempfile
import time
from pathlib import Path
from typing import Any

from benchkit import (
    BUDGET,
    Step,
    add_data_args,
    markdown_table,
    provenance,
    real_counter,
    sha12,
    write_result,
)
from lxml import etree
from pagetime import agent_plan, memory_in_subprocess, timed
from scripted_model import POLICY, Script, scripted_model

from webagent.agents.registry import AgentSettings, build_agent
from webagent.contracts import Observation
from webagent.html.parse import parse_html
from webagent.html.segment import segment_html

SIZES_KB = (50, 100, 200, 500, 1000, 2000, 5000)
QUICK_SIZES_KB = (50, 200, 1000)
TASK = "Search for wireless headphones"


def balanced_body(path: Path) -> bytes:
    """The children of the page's ``<body>``, re-serialised by lxml (every element closed)."""
    root = parse_html(path.read_bytes())
    body = root.find(".//body")
    nodes = list(body) if body is not None else [root]
    lead = (body.text or "") if body is not None else ""
    return lead.encode("utf-8") + b"".join(
        etree.tostring(n, method="html", encoding="utf-8") for n in nodes
    )


def make_page(pages: list[Path], size: int) -> bytes:
    """``size`` bytes of real bodies, concatenated, cut before a tag, wrapped in a document."""
    head = b'<!DOCTYPE html><html><head><meta charset="utf-8"><title>scale</title></head><body>'
    tail = b"</body></html>"
    parts, total, i = [], 0, 0
    while total < size:
        body = balanced_body(pages[i % len(pages)])
        parts.append(body)
        total += len(body)
        i += 1
    body = b"".join(parts)
    room = size - len(head) - len(tail)
    cut = body.rfind(b"<", 0, room)
    return head + body[: cut if cut > 0 else room] + tail


def prompt_tokens(html: bytes, counter: Any) -> dict[str, Any]:
    script = Script(counter)
    model, backend = scripted_model(script)
    settings = AgentSettings(agent="readagent-p", context_budget=BUDGET)
    agent = build_agent(settings, model)
    text = html.decode("utf-8")
    step = Step("scale", 0, 1, "scale", TASK, [], text, (), "CLICK", "")
    script.begin(step, segment_html(text, agent.segment_plan, model.count_tokens))
    trace = agent.step(Observation(task=TASK, html=text))
    lookup = [c.input_tokens for c in trace.calls if c.phase == "lookup"]
    return {
        "act_prompt_tokens": trace.prompt_tokens,
        "lookup_prompt_tokens": lookup[0] if lookup else 0,
        "input_tokens_per_step": sum(c.input_tokens for c in trace.calls),
        "calls_per_step": len(trace.calls),
        "reopened": len(trace.reopened),
        "error": trace.error,
        "requests": len(backend.requests),
    }


def plot(rows: list[dict[str, Any]], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    mb = [r["bytes"] / 1e6 for r in rows]
    fig, axes = plt.subplots(2, 2, figsize=(11, 8))
    series = [
        (axes[0][0], "Time per page (s)", [("parse+clean+segment", "total_s"),
         ("segment only", "segment_s"), ("BeautifulSoup(lxml) parse", "bs4_lxml_s")]),
        (axes[0][1], "Peak memory added (MB)", [("parse+clean+segment", "peak_added_mb"),
         ("BeautifulSoup(lxml)", "bs4_peak_added_mb")]),
        (axes[1][0], "Fragments per page (plan: at most 53)", [("fragments", "fragments"),
         ("over max_fragment_tokens (844 est.)", "oversized_fragments")]),
        (axes[1][1], "Tokens (SmolLM2 tokenizer)", [("whole cleaned page", "page_tokens"),
         ("ReadAgent-P look-up prompt", "lookup_prompt_tokens"),
         ("ReadAgent-P act prompt", "act_prompt_tokens")]),
    ]  # fmt: skip
    for ax, title, lines in series:
        for label, key in lines:
            ax.plot(mb, [max(r[key], 1e-4) for r in rows], marker="o", label=label)
        ax.set_xscale("log")
        if ax is axes[1][0]:
            ax.set_ylim(bottom=0)
        else:
            ax.set_yscale("log")
        ax.set_title(title)
        ax.set_xlabel("page size (MB, log)")
        ax.grid(True, which="both", alpha=0.3)
        ax.legend(fontsize=8)
    axes[1][1].axhline(BUDGET, color="red", linestyle="--", linewidth=1)
    axes[1][1].annotate(f"context budget {BUDGET}", (mb[0], BUDGET * 1.15), color="red", fontsize=8)
    fig.suptitle("readagent-web: cost against page size (2-core CPU, 2026-11-29)")
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_args(parser)
    args = parser.parse_args()
    started = time.perf_counter()
    pages = sorted(args.pages.glob("*.html"))
    sizes = QUICK_SIZES_KB if args.quick else SIZES_KB
    counter, plan, rows = real_counter(), agent_plan(), []
    folder = Path(tempfile.mkdtemp(prefix="bench-scale-"))
    atexit.register(shutil.rmtree, folder, ignore_errors=True)
    for kb in sizes:
        data = make_page(pages, kb * 1000)
        path = folder / f"page_{kb}kb.html"
        path.write_bytes(data)
        best = timed(data, plan, 1 if args.quick else 3, html_parser=False)
        cleaned = best.pop("cleaned_html")
        ours, bs4 = memory_in_subprocess(path, "ours"), memory_in_subprocess(path, "bs4")
        row = {"size_kb": kb, "bytes": len(data), **best}
        row |= {"peak_added_mb": ours["peak_added_mb"], "bs4_peak_added_mb": bs4["peak_added_mb"]}
        row |= {"page_tokens": counter(cleaned), **prompt_tokens(data, counter)}
        rows.append(row)
        print(f"{kb} KB done, {time.perf_counter() - started:.0f} s", flush=True)
    args.out.mkdir(parents=True, exist_ok=True)
    plot(rows, args.out / "scale.png")
    table = markdown_table(
        ["page", "parse+clean+segment s", "× bs4(lxml)", "peak MB", "× bs4", "fragments",
         "oversized", "page tokens", "look-up prompt", "act prompt", "input tok/step"],
        [[f"{r['size_kb']} KB", f"{r['total_s']:.3f}", f"{r['total_s'] / r['bs4_lxml_s']:.2f}",
          f"{r['peak_added_mb']:.1f}",
          f"{r['peak_added_mb'] / max(r['bs4_peak_added_mb'], 1e-9):.2f}",
          r["fragments"], r["oversized_fragments"], r["page_tokens"],
          r["lookup_prompt_tokens"], r["act_prompt_tokens"], r["input_tokens_per_step"]]
         for r in rows],
    )  # fmt: skip
    text = (
        f"## Scale: pages made from real bodies, 50 KB to {sizes[-1] // 1000} MB (budget {BUDGET})"
        f"\n\n{table}\n\nPlot: {args.out / 'scale.png'}. Time: best of {1 if args.quick else 3}; "
        "peak MB: resident-set peak added in a fresh subprocess. Tokens: SmolLM2 tokenizer; "
        "look-up/act prompt and input tokens from one scripted ReadAgent-P step (no gist cache): "
        f"{POLICY['lookup_p']}; gists: {POLICY['gist']}. A look-up prompt over the budget would "
        "not fit a real model of that window."
    )
    settings = {"segment_plan": plan.model_dump(), "sizes_kb": list(sizes), "task": TASK,
                "policy": POLICY, "quick": args.quick}  # fmt: skip
    payload = {
        "provenance": provenance(settings, {"pages_sha12": sha12(args.pages)}),
        "wall_s": time.perf_counter() - started,
        "rows": rows,
    }
    write_result(args.out, "scale", payload, text)


if __name__ == "__main__":
    main()
