"""Segmentation speed against plain parsers, page by page, in the same run.

For every ``*.html`` in FOLDER (default ``../shared/pages`` next to the repository) it times,
interleaved and repeated (the minimum of ``--repeat`` runs is kept, the median is stored too):

* ``lxml``   ``lxml.html.fromstring(bytes)``: a bare parse, the floor;
* ``bs4``    ``BeautifulSoup(bytes, "html.parser")``;
* ``bs4lx``  ``BeautifulSoup(bytes, "lxml")``;
* ``ours``   ``segment_html(bytes, SegmentSettings())``: parse + clean + segment, split into
  ``parse`` / ``clean`` / ``segment`` stages.

Prints one row per page and totals per MB; ``--out`` writes all of it as JSON; ``--profile``
adds a cProfile of ``ours`` over all pages; ``--depth-table`` prints fragment counts at depth
5/6/7 with default settings and with ``plan_segmentation`` for an 8K window (the numbers in
docs/SEGMENTATION.md).

    PYTHONPATH=. python bench/bench_segment.py --repeat 7 --out /tmp/bench_segment.json
"""

from __future__ import annotations

import argparse
import cProfile
import json
import pstats
import statistics
import time
from collections.abc import Callable
from pathlib import Path

import lxml.html
from bs4 import BeautifulSoup

from webagent.html.budget import plan_segmentation
from webagent.html.clean import clean_page
from webagent.html.fragment import SegmentSettings
from webagent.html.parse import parse_html
from webagent.html.segment import segment_html, segment_page

DEFAULT_FOLDER = Path(__file__).resolve().parents[2] / "shared" / "pages"
SETTINGS = SegmentSettings()
PLAN_8K = plan_segmentation(8192, 72, 1024, 5)


def _timed(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return (time.perf_counter() - start) * 1000


def _stages(data: bytes) -> tuple[float, float, float, int]:
    t0 = time.perf_counter()
    root = parse_html(data)
    t1 = time.perf_counter()
    page = clean_page(root)
    t2 = time.perf_counter()
    result = segment_page(page, SETTINGS, raw_bytes=len(data))
    t3 = time.perf_counter()
    return (t1 - t0) * 1000, (t2 - t1) * 1000, (t3 - t2) * 1000, len(result.fragments)


def bench_page(path: Path, repeat: int) -> dict[str, object]:
    data = path.read_bytes()
    runs: dict[str, list[float]] = {k: [] for k in ("lxml", "bs4", "bs4lx", "ours", "parse",
                                                    "clean", "segment")}  # fmt: skip
    fragments = 0
    for _ in range(repeat):
        runs["lxml"].append(_timed(lambda: lxml.html.fromstring(data)))
        runs["ours"].append(_timed(lambda: segment_html(data, SETTINGS)))
        runs["bs4"].append(_timed(lambda: BeautifulSoup(data, "html.parser")))
        runs["bs4lx"].append(_timed(lambda: BeautifulSoup(data, "lxml")))
        parse, clean, segment, fragments = _stages(data)
        runs["parse"].append(parse)
        runs["clean"].append(clean)
        runs["segment"].append(segment)
    best = {k: min(v) for k, v in runs.items()}
    return {
        "page": path.name,
        "kb": len(data) / 1024,
        "ms": best,
        "median_ms": {k: statistics.median(v) for k, v in runs.items()},
        "fragments": fragments,
        "ratio_lxml": best["ours"] / best["lxml"],
        "ratio_bs4": best["ours"] / best["bs4"],
    }


def print_table(rows: list[dict[str, object]]) -> dict[str, float]:
    print(f"{'page':40} {'KB':>6} {'lxml':>6} {'bs4':>7} {'bs4lx':>6} {'ours':>6} "
          f"{'/lxml':>6} {'/bs4':>5} {'frag':>4}   parse  clean segment")  # fmt: skip
    for row in rows:
        ms: dict[str, float] = row["ms"]  # type: ignore[assignment]
        print(
            f"{str(row['page'])[:40]:40} {row['kb']:6.0f} {ms['lxml']:6.1f} {ms['bs4']:7.1f} "
            f"{ms['bs4lx']:6.1f} {ms['ours']:6.1f} {row['ratio_lxml']:6.2f} "
            f"{row['ratio_bs4']:5.2f} {row['fragments']:4}   {ms['parse']:5.1f} "
            f"{ms['clean']:6.1f} {ms['segment']:7.1f}"
        )
    megabytes = sum(float(r["kb"]) for r in rows) / 1024  # type: ignore[arg-type]
    totals = {k: sum(r["ms"][k] for r in rows) / megabytes for k in rows[0]["ms"]}  # type: ignore[index]
    print(
        f"per MB ({megabytes:.1f} MB): lxml {totals['lxml']:.1f} ms, bs4 {totals['bs4']:.1f} ms, "
        f"bs4+lxml {totals['bs4lx']:.1f} ms, ours {totals['ours']:.1f} ms "
        f"(parse {totals['parse']:.1f}, clean {totals['clean']:.1f}, "
        f"segment {totals['segment']:.1f}); ours/lxml {totals['ours'] / totals['lxml']:.2f}, "
        f"ours/bs4 {totals['ours'] / totals['bs4']:.2f}"
    )
    return totals


def raw_subtrees(data: bytes, depth: int) -> int:
    """Elements at ``depth`` below ``<html>`` in the parsed page, before any cleaning."""
    root = parse_html(data)
    return len(root.xpath("/*" * (depth + 1)))


def depth_table(paths: list[Path]) -> list[dict[str, object]]:
    print(f"{'page':40} {'tokens':>7} | raw subtrees d5 d6 d7 | default d5 d6 d7 "
          "| 8K plan d5 d6 d7 | over budget")  # fmt: skip
    rows = []
    for path in paths:
        data = path.read_bytes()
        page = clean_page(data)
        raw = [raw_subtrees(data, d) for d in (5, 6, 7)]
        free = [segment_page(page, SETTINGS.model_copy(update={"depth": d})) for d in (5, 6, 7)]
        plan = [segment_page(page, PLAN_8K.model_copy(update={"depth": d})) for d in (5, 6, 7)]
        over = [sum(f.oversized for f in r.fragments) for r in plan]
        counts = [len(r.fragments) for r in free], [len(r.fragments) for r in plan]
        print(f"{path.name[:40]:40} {free[1].page_tokens:7} | {raw[0]:12} {raw[1]:4} {raw[2]:4} "
              f"| {counts[0][0]:10} {counts[0][1]:3} {counts[0][2]:3} | {counts[1][0]:10} "
              f"{counts[1][1]:3} {counts[1][2]:3} | {over}")  # fmt: skip
        rows.append({"page": path.name, "tokens": free[1].page_tokens, "raw_subtrees": raw,
                     "default": counts[0], "plan_8k": counts[1], "oversized_8k": over})  # fmt: skip
    print(f"default: {SETTINGS.model_dump()}")
    print(f"8K plan: {PLAN_8K.model_dump()}")
    return rows


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument(
        "--repeat", type=int, default=5, help="runs per page, 0: no timing (%(default)s)"
    )
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--profile", action="store_true", help="cProfile ours over all pages")
    parser.add_argument("--depth-table", action="store_true", help="fragment counts by depth")
    args = parser.parse_args()
    paths = sorted(args.folder.glob("*.html"))
    if not paths:
        raise SystemExit(f"no *.html pages in {args.folder}")
    report: dict[str, object] = {}
    if args.repeat > 0:
        rows = [bench_page(path, args.repeat) for path in paths]
        report = {"pages": rows, "per_mb_ms": print_table(rows)}
    if args.depth_table:
        report["depth_table"] = depth_table(paths)
    if args.profile:
        datas = [p.read_bytes() for p in paths]
        profiler = cProfile.Profile()
        profiler.enable()
        for data in datas:
            segment_html(data, SETTINGS)
        profiler.disable()
        pstats.Stats(profiler).sort_stats("tottime").print_stats(15)
    if args.out:
        args.out.write_text(json.dumps(report, indent=1))
        print(f"wrote {args.out}")


if __name__ == "__main__":
    main()
