"""Speed: parse + clean + segment on the real pages against a plain BeautifulSoup parse; memory
peak on the largest page; evaluation throughput against a local llama.cpp server.

    python bench/speed.py [--quick] [--no-server] [--out bench/results]
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path
from typing import Any

from bench_segment import bench_page
from benchkit import (
    EMBEDDED_CAVEAT,
    add_data_args,
    load_steps,
    markdown_table,
    median,
    provenance,
    resolve_tasks,
    sha12,
    write_result,
)
from pagetime import agent_plan, memory_in_subprocess
from server_load import AGENT, SERVER_CTX, throughput


def page_speed(pages: list[Path], repeats: int) -> tuple[list[dict[str, Any]], str]:
    """bench_segment.bench_page on every page: ours and the plain parsers, interleaved."""
    rows = [bench_page(path, repeats) for path in pages]
    mib = sum(r["kb"] for r in rows) / 1024
    ours = sum(r["ms"]["ours"] for r in rows)
    table = []
    for label, key in (
        ("lxml.html.fromstring (bare parse, the floor)", "lxml"),
        ("BeautifulSoup(html.parser)", "bs4"),
        ("BeautifulSoup(lxml)", "bs4lx"),
        ("ours: segment_html = parse + clean + segment", "ours"),
        ("  of which parse (our decoding + lxml)", "parse"),
        ("  of which clean", "clean"),
        ("  of which segment", "segment"),
    ):
        total = sum(r["ms"][key] for r in rows)
        table.append(
            [label, f"{median([r['ms'][key] for r in rows]):.1f}", f"{total / mib:.1f}",
             f"{total / ours:.2f}", f"{median([r['ms'][key] / r['ms']['ours'] for r in rows]):.2f}"]
        )  # fmt: skip
    text = (
        f"## Parse + clean + segment ({len(rows)} real pages, {mib:.1f} MiB, best of {repeats}, "
        "bench_segment.bench_page, SegmentSettings() defaults)\n\n"
        + markdown_table(
            [
                "run",
                "ms/page (median)",
                "ms/MiB",
                "time ÷ ours (total)",
                "time ÷ ours (median page)",
            ],
            table,
        )
    )
    return rows, text


def memory(largest: Path) -> tuple[dict[str, Any], str]:
    ours, bs4 = memory_in_subprocess(largest, "ours"), memory_in_subprocess(largest, "bs4")
    rows = [
        [name, f"{m['peak_added_mb']:.1f}", f"{m['tracemalloc_peak_mb']:.1f}",
         f"{m['rss_before_mb']:.0f}"]
        for name, m in (("parse + clean + segment", ours), ("BeautifulSoup(lxml)", bs4))
    ]  # fmt: skip
    ratio = ours["peak_added_mb"] / max(bs4["peak_added_mb"], 1e-9)
    text = (
        f"## Memory peak on the largest page ({largest.name}, {ours['bytes'] / 1e6:.2f} MB), "
        "fresh subprocess each\n\n"
        + markdown_table(
            ["run", "peak RSS added (MB)", "tracemalloc peak (MB)", "RSS before (MB)"], rows
        )
        + f"\n\nPeak RSS added, ours / BeautifulSoup: {ratio:.2f}. Peak RSS (VmHWM, reset "
        "before the run) counts libxml2's C allocations; tracemalloc sees Python objects only."
    )
    return {"ours": ours, "bs4": bs4, "ratio_peak_added": ratio}, text


def server_text(levels: list[dict[str, Any]], threads: int) -> str:
    base = levels[0]
    rows = [
        [r["workers"], r["steps"], f"{r['wall_s']:.1f}", f"{r['steps_per_min']:.2f}",
         f"{r['steps_per_min'] / base['steps_per_min']:.2f}", f"{r['tokens_per_s']:.0f}",
         f"{r['gen_tokens_per_s']:.1f}", f"{r['mean_latency_s']:.1f}",
         f"{r['model_share']:.0%}", f"{r['mean_shown_ids']:.0f}", r["failed"],
         r["invalid_answers"]]
        for r in levels
    ]  # fmt: skip
    return (
        f"## Evaluation throughput: llama_cpp.server (SmolLM2, n_ctx {SERVER_CTX}, {threads} "
        "threads), "
        f"agent {AGENT.agent} at budget {AGENT.context_budget}, backend=openai\n\n"
        + markdown_table(
            [
                "workers",
                "steps",
                "wall s",
                "steps/min",
                "× 1 worker",
                "tokens/s (in+out)",
                "gen tok/s",
                "mean step latency s",
                "in model calls",
                "ids in act schema",
                "failed steps",
                "invalid answers",
            ],
            rows,
        )
        + "\n\nThe server, the client and other processes share 2 CPU cores, and "
        "one llama.cpp model instance serves every request: throughput levels off after a "
        "few workers and further workers only add queueing latency. Few steps per level and other "
        "processes on the same cores: level-to-level noise is large. 'invalid answers': the "
        "model's answer failed validation after one repair (model quality, not load). "
        "'in model calls': share of step time spent waiting for the server; "
        "the rest is client work (segmenting, counting tokens to cut the page), on the same "
        "cores. 'ids in act schema': mean shown ids, which the act schema lists as an enum "
        "(llama.cpp grammar). Each level runs different steps of equal prompt size (the KV "
        "cache would reuse repeated prompts). "
        f"Token counts: in-process SmolLM2 tokenizer. Speed only; {EMBEDDED_CAVEAT}."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_args(parser)
    parser.add_argument("--no-server", action="store_true", help="skip the throughput part")
    parser.add_argument(
        "--server-tokenizer", action="store_true", help="count tokens through the server"
    )
    parser.add_argument("--server-threads", type=int, default=2, help="llama.cpp threads")
    args = parser.parse_args()
    started = time.perf_counter()
    pages = sorted(args.pages.glob("*.html"))
    repeats = 1 if args.quick else 3
    rows, text = page_speed(pages, repeats)
    largest = max(pages, key=lambda p: p.stat().st_size)
    mem, mem_text = memory(largest)
    text += "\n\n" + mem_text
    levels: list[dict[str, Any]] = []
    tasks_path = resolve_tasks(args) if not args.no_server else None
    args.tasks = tasks_path or args.tasks
    report = Report(args, rows, mem, levels, started)
    report.write(text, partial=not args.no_server)  # a killed run still leaves these
    if tasks_path is not None:
        firsts = [s for s in load_steps(tasks_path) if s.index == 0]
        per_level, worker_levels = (2, (1, 2)) if args.quick else (4, (1, 2, 4, 8))
        for level in throughput(
            firsts, worker_levels, per_level, args.server_tokenizer, args.server_threads
        ):
            levels.append(level)
            done = len(levels) == len(worker_levels)
            report.write(text + "\n\n" + server_text(levels, args.server_threads), not done)


class Report:
    """Writes speed.json/.md; called after each part, so that partial results survive."""

    def __init__(
        self, args: Any, rows: list[dict], mem: dict, levels: list[dict], started: float
    ) -> None:
        self.args, self.rows, self.mem, self.levels, self.started = args, rows, mem, levels, started

    def write(self, text: str, partial: bool) -> None:
        args = self.args
        settings = {
            "repeats": 1 if args.quick else 3,
            "segment_settings": "SegmentSettings() defaults (bench_segment.bench_page)",
            "memory_plan": agent_plan().model_dump(),
            "server": {
                "n_ctx": SERVER_CTX,
                "n_threads": args.server_threads,
                "agent": AGENT.manifest(),
                "token_counting": "server endpoint"
                if args.server_tokenizer
                else "in-process SmolLM2",
                "structured_output": "json_object",
            },
            "quick": args.quick,
        }
        data = {"pages_sha12": sha12(args.pages)}
        if args.tasks is not None:
            data["tasks_sha12"] = sha12(args.tasks)
        payload = {
            "provenance": provenance(settings, data),
            "partial": partial,
            "wall_s": time.perf_counter() - self.started,
            "pages": self.rows,
            "memory": self.mem,
            "throughput": self.levels,
        }
        note = "\n\n(partial: the throughput part is still running or was stopped)"
        write_result(args.out, "speed", payload, text + (note if partial else ""))


if __name__ == "__main__":
    main()
