"""Segmentation speed against plain parsers, page by page, in the same run.

For every ``*.html`` in FOLDER (default ``../shared/pages`` next to the repository) it times,
interleaved and repeated (the minimum of ``--repeat`` runs is kept, the median is stored too),
each call from the same start (:func:`_equal_start`: garbage collected, and the C heap's free
memory handed back to the system, so that no call runs on pages another one left mapped):

* ``lxml``   ``lxml.html.fromstring(bytes)``: a bare parse, the floor;
* ``bs4``    ``BeautifulSoup(bytes, "html.parser")``;
* ``bs4lx``  ``BeautifulSoup(bytes, "lxml")``;
* ``ours``   ``segment_html(bytes, settings)``: parse + clean + segment, split into
  ``parse`` / ``clean`` / ``segment`` stages; ``settings`` are ``SegmentSettings()`` or, with
  ``--plan agents``, the agents' own plan for an 8K window (``pagetime.agent_plan``);
* ``lxml_left`` then ``ours_left``: the same two calls from the heap as the call before left
  it (how this bench timed them until the equal start: ``ours`` right after ``lxml``, whose
  freed tree leaves the heap in a state that makes the next call dearer).

Prints one row per page and totals per MB; ``--out`` writes all of it as JSON; ``--profile``
adds a cProfile of ``ours`` over all pages; ``--depth-table`` prints fragment counts at depth
5/6/7 with default settings and with the agents' 8K plan (``--depth-summary DIR`` writes them
as ``segment_depth.md/.json``, the figures docs/SEGMENTATION.md refers to).

    PYTHONPATH=. python bench/bench_segment.py --repeat 7 --out /tmp/bench_segment.json
"""

from __future__ import annotations

import argparse
import cProfile
import ctypes
import ctypes.util
import gc
import json
import os
import pstats
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lxml.html
from benchkit import REPO, markdown_table, provenance, write_summary
from bs4 import BeautifulSoup
from pagetime import agent_plan

from webagent.html.clean import clean_page
from webagent.html.fragment import SegmentSettings
from webagent.html.parse import parse_html
from webagent.html.segment import segment_html, segment_page

DEFAULT_FOLDER = Path(__file__).resolve().parents[2] / "shared" / "pages"
DEFAULTS = SegmentSettings()
DEPTHS = (5, 6, 7)
#: what ``--plan`` times: its settings, how the summary names them, the summary's file name
PLANS: dict[str, tuple[Callable[[], SegmentSettings], str, str]] = {
    "default": (SegmentSettings, "SegmentSettings() defaults", "page_speed"),
    "agents": (agent_plan, "the agents' plan for an 8K window", "page_speed_agents"),
}
SETTINGS = DEFAULTS  # the settings timed; main() sets them from --plan


def _now() -> tuple[float, float]:
    """Wall clock and this process's CPU time (``time.process_time``), in seconds."""
    return time.perf_counter(), time.process_time()


def _since(start: tuple[float, float]) -> tuple[float, float]:
    wall, cpu = _now()
    return (wall - start[0]) * 1000, (cpu - start[1]) * 1000


def _timed(fn: Callable[[], object], trim: bool = True) -> tuple[float, float]:
    _equal_start(trim)
    start = _now()
    fn()
    return _since(start)


def _trimmer() -> Callable[[int], int] | None:
    """glibc's ``malloc_trim``, or None where the C library has none."""
    try:
        libc = ctypes.CDLL(ctypes.util.find_library("c"))
        trim: Callable[[int], int] = libc.malloc_trim
    except (OSError, AttributeError, TypeError):
        return None
    return trim


_TRIM = _trimmer()
#: how every timed call starts, as the summary states it
START = (
    "gc.collect() then malloc_trim(0)"
    if _TRIM is not None
    else "gc.collect() (no malloc_trim in this C library)"
)


def _equal_start(trim: bool = True) -> None:
    """Collect the garbage the runs before left (BeautifulSoup's trees are reference cycles,
    freed only by the cyclic collector), so that none of it is collected inside the next
    timed call and charged to it (what a call's own allocations trigger still counts), then
    hand the C heap's free memory back to the system (``malloc_trim``): every call then maps
    the memory it uses, whatever ran before. Without it the figures depend on the order:
    the same ``segment_html`` takes more CPU right after a bare lxml parse than right after
    another ``segment_html``, and a bare lxml parse more after itself than after
    ``segment_html`` (``lxml_left``/``ours_left``, timed with ``trim`` False, keep that
    protocol's figure)."""
    gc.collect()
    if trim and _TRIM is not None:
        _TRIM(0)


def _stages(data: bytes) -> tuple[tuple[float, float], ...]:
    """(wall ms, CPU ms) of parse, clean and segment, as segment_html runs them."""
    _equal_start()
    t0 = _now()
    root = parse_html(data)
    parse = _since(t0)
    t1 = _now()
    page = clean_page(root, keep_wrappers=SETTINGS.keep_wrappers)
    clean = _since(t1)
    t2 = _now()
    segment_page(page, SETTINGS, raw_bytes=len(data))
    return parse, clean, _since(t2)


def bench_page(path: Path, repeat: int) -> dict[str, object]:
    data = path.read_bytes()
    keys = ("lxml", "bs4", "bs4lx", "ours", "parse", "clean", "segment", "lxml_left", "ours_left")
    runs: dict[str, list[float]] = {k: [] for k in keys}
    cpu: dict[str, list[float]] = {k: [] for k in keys}
    for _ in range(repeat):
        timed = {
            "lxml": _timed(lambda: lxml.html.fromstring(data)),
            "ours": _timed(lambda: segment_html(data, SETTINGS)),
            "bs4": _timed(lambda: BeautifulSoup(data, "html.parser")),
            "bs4lx": _timed(lambda: BeautifulSoup(data, "lxml")),
        }
        timed["parse"], timed["clean"], timed["segment"] = _stages(data)
        timed["lxml_left"] = _timed(lambda: lxml.html.fromstring(data), trim=False)
        timed["ours_left"] = _timed(lambda: segment_html(data, SETTINGS), trim=False)
        for key, (wall, used) in timed.items():
            runs[key].append(wall)
            cpu[key].append(used)
    best = {k: min(v) for k, v in runs.items()}
    fragments = len(segment_html(data, SETTINGS).fragments)
    return {
        "page": path.name,
        "kb": len(data) / 1024,
        "ms": best,
        "cpu_ms": {k: min(v) for k, v in cpu.items()},
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
        f"per MiB ({megabytes:.1f} MiB): lxml {totals['lxml']:.1f} ms, bs4 {totals['bs4']:.1f} ms, "
        f"bs4+lxml {totals['bs4lx']:.1f} ms, ours {totals['ours']:.1f} ms "
        f"(parse {totals['parse']:.1f}, clean {totals['clean']:.1f}, "
        f"segment {totals['segment']:.1f}); ours/lxml {totals['ours'] / totals['lxml']:.2f}, "
        f"ours/bs4 {totals['ours'] / totals['bs4']:.2f}"
    )
    cpu = per_mib(rows, "cpu_ms")  # type: ignore[arg-type]
    print(
        f"CPU ours/lxml {cpu['ours'] / cpu['lxml']:.2f} (each call from {START}); "
        f"heap as left: {cpu['ours_left'] / cpu['lxml_left']:.2f}"
    )
    return totals


def per_mib(rows: list[dict[str, Any]], field: str) -> dict[str, float]:
    """Total ms per MiB over the pages, for each timed run, from ``field`` (ms or cpu_ms)."""
    mib = sum(float(r["kb"]) for r in rows) / 1024
    return {k: sum(r[field][k] for r in rows) / mib for k in rows[0][field]}


def summary(
    runs: dict[str, list[dict[str, Any]]], repeat: int, plan: str = "default"
) -> tuple[str, dict[str, Any]]:
    """Markdown and JSON: ms/MiB (wall and CPU) and the ratio to a bare lxml parse, per code
    tree; each tree's ratio uses the lxml parse timed in its own process, interleaved."""
    lines, data = [], {}
    for label, rows in runs.items():
        wall, cpu = per_mib(rows, "ms"), per_mib(rows, "cpu_ms")
        data[label] = {"wall_ms_per_mib": wall, "cpu_ms_per_mib": cpu}
        for key, name in (
            ("lxml", "lxml.html.fromstring (bare parse)"),
            ("ours", "parse + clean + segment (segment_html)"),
            ("parse", "  parse"),
            ("clean", "  clean"),
            ("segment", "  segment"),
            ("lxml_left", "lxml.html.fromstring, heap as left"),
            ("ours_left", "segment_html right after it, heap as left"),
        ):
            floor = "lxml_left" if key.endswith("_left") else "lxml"
            lines.append(
                [label, name, f"{wall[key]:.1f}", f"{cpu[key]:.1f}",
                 f"{wall[key] / wall[floor]:.2f}", f"{cpu[key] / cpu[floor]:.2f}"]
            )  # fmt: skip
    first = next(iter(runs.values()))
    mib = sum(float(r["kb"]) for r in first) / 1024
    text = (
        f"## Page processing speed ({len(first)} pages of ../shared/pages, {mib:.1f} MiB, best "
        f"of {repeat}, {PLANS[plan][1]})\n\n"
        + markdown_table(
            ["code", "run", "wall ms/MiB", "CPU ms/MiB", "wall ÷ lxml", "CPU ÷ lxml"], lines
        )
        + "\n\nCPU: `time.process_time` of this process around each call; wall: "
        "`time.perf_counter`. Each code tree runs in its own process, every page timed "
        "interleaved with a bare `lxml.html.fromstring` of the same bytes, each call from "
        f"the same start ({START}: no call runs on memory the one before left mapped); "
        "target: parse + clean + segment ≤ 2.5 × lxml. The two *heap as left* rows time the "
        "same calls without the trim, `segment_html` right after the parse, as this bench "
        "did before: their ratio (÷ the *heap as left* lxml row) depends on what ran before "
        "each call."
    )
    return text, data


def measure_tree(
    code: Path, folder: Path, repeat: int, out: Path, plan: str = "default"
) -> list[dict[str, Any]]:
    """This script's timing run in a subprocess importing webagent from ``code``."""
    env = {**os.environ, "PYTHONPATH": str(code)}
    subprocess.run(
        [sys.executable, __file__, str(folder), "--repeat", str(repeat), "--out", str(out),
         "--plan", plan],
        env=env, check=True, capture_output=True,
    )  # fmt: skip
    rows: list[dict[str, Any]] = json.loads(out.read_text())["pages"]
    return rows


def raw_subtrees(data: bytes, depth: int) -> int:
    """Elements at ``depth`` below ``<html>`` in the parsed page, before any cleaning."""
    root = parse_html(data)
    return len(root.xpath("/*" * (depth + 1)))


def depth_table(paths: list[Path], summary: Path | None) -> list[dict[str, object]]:
    """Fragment counts at depth 5/6/7 with ``SegmentSettings()`` and with the agents' 8K plan
    (``pagetime.agent_plan``); with ``summary``, writes ``segment_depth.md/.json`` there (the
    figures docs/SEGMENTATION.md refers to)."""
    plan = agent_plan()
    rows: list[dict[str, Any]] = []
    for path in paths:
        data = path.read_bytes()
        page = clean_page(data)
        raw = [raw_subtrees(data, d) for d in DEPTHS]
        free = [segment_page(page, DEFAULTS.model_copy(update={"depth": d})) for d in DEPTHS]
        planned = [segment_page(page, plan.model_copy(update={"depth": d})) for d in DEPTHS]
        rows.append({"page": path.stem, "tokens": free[1].page_tokens, "raw_subtrees": raw,
                     "default": [len(r.fragments) for r in free],
                     "plan_8k": [len(r.fragments) for r in planned],
                     "oversized_8k": [sum(f.oversized for f in r.fragments)
                                      for r in planned]})  # fmt: skip
    text = depth_text(rows, plan)
    print(text)
    if summary is not None:
        settings = {"default": DEFAULTS.model_dump(), "plan_8k": plan.model_dump()}
        payload = {"provenance": provenance(settings, {}), "pages": rows}
        payload["provenance"]["command"] = "bench_segment.py --repeat 0 --depth-table " + (
            f"--depth-summary {summary}"
        )
        write_summary("segment_depth", payload, text, summary)
    return rows


def depth_text(rows: list[dict[str, Any]], plan: SegmentSettings) -> str:
    """The depth table and what it shows, every figure computed from ``rows``."""
    slash = "/".join
    table = markdown_table(
        ["page", "tokens", "subtrees d5/d6/d7", "default d5/d6/d7", "8K plan d5/d6/d7",
         "over max_fragment_tokens (8K, d6)"],
        [[r["page"], r["tokens"], slash(map(str, r["raw_subtrees"])),
          slash(map(str, r["default"])), slash(map(str, r["plan_8k"])), r["oversized_8k"][1]]
         for r in rows],
    )  # fmt: skip
    cap = plan.max_fragments or 0
    free_over = [r for r in rows if r["default"][1] > cap]
    plan_over = [r for r in rows if r["plan_8k"][1] > cap]
    steady = [r for r in rows if all(abs(n - r["plan_8k"][1]) <= 0.1 * r["plan_8k"][1]
                                     for n in r["plan_8k"])]  # fmt: skip
    most = max((r["default"][1] for r in rows), default=0)
    return (
        f"## Fragments by depth ({len(rows)} saved pages; tokens: the estimate counter)\n\n"
        f"{table}\n\nThe agents' 8K plan: max_fragments={cap}, "
        f"max_fragment_tokens={plan.max_fragment_tokens}, overflow={plan.overflow}. "
        f"With `SegmentSettings()` (no count limit) {len(free_over)} of {len(rows)} pages give "
        f"more than {cap} fragments at depth 6 (up to {most}); with the plan "
        f"{len(rows) - len(plan_over)} of {len(rows)} stay within {cap}; the other "
        f"{len(plan_over)} (from {min((r['tokens'] for r in plan_over), default=0):,} tokens) "
        "get more fragments with shorter gists, since no fragment grows past "
        "max_fragment_tokens. Depth 5, 6 and 7 give fragment "
        f"counts within 10 % of depth 6's under the plan on {len(steady)} of {len(rows)} pages."
    )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("folder", nargs="?", type=Path, default=DEFAULT_FOLDER)
    parser.add_argument(
        "--repeat", type=int, default=5, help="runs per page, 0: no timing (%(default)s)"
    )
    parser.add_argument("--out", type=Path, help="write the results as JSON here")
    parser.add_argument("--profile", action="store_true", help="cProfile ours over all pages")
    parser.add_argument("--depth-table", action="store_true", help="fragment counts by depth")
    parser.add_argument(
        "--depth-summary", type=Path, help="with --depth-table: write segment_depth.md/.json here"
    )
    parser.add_argument(
        "--summary",
        type=Path,
        help="also time --baseline's code (another process) and write page_speed.md/.json here",
    )
    parser.add_argument(
        "--baseline", default=None, help="git revision for --summary (default: main merge-base)"
    )
    parser.add_argument(
        "--plan",
        choices=sorted(PLANS),
        default="default",
        help="segmentation settings timed: SegmentSettings() or the agents' 8K plan "
        "(%(default)s); --summary writes <name>.md/.json after the plan",
    )
    args = parser.parse_args()
    global SETTINGS  # noqa: PLW0603  # one plan per process, read by the timing functions
    SETTINGS = PLANS[args.plan][0]()
    if args.summary:
        write_speed_summary(args)
        return
    paths = sorted(args.folder.glob("*.html"))
    if not paths:
        raise SystemExit(f"no *.html pages in {args.folder}")
    report: dict[str, object] = {}
    if args.repeat > 0:
        rows = [bench_page(path, args.repeat) for path in paths]
        report = {"pages": rows, "per_mb_ms": print_table(rows)}
    if args.depth_table:
        report["depth_table"] = depth_table(paths, args.depth_summary)
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


def write_speed_summary(args: argparse.Namespace) -> None:
    from page_states import _git, unpack

    baseline = args.baseline or _git("merge-base", "HEAD", "main")
    label = f"baseline {_git('rev-parse', '--short', baseline)}"
    with tempfile.TemporaryDirectory(prefix="page-speed-") as tmp:
        work = Path(tmp)
        code = unpack(baseline, work / "baseline")
        runs = {
            "ours": measure_tree(REPO, args.folder, args.repeat, work / "ours.json", args.plan),
            label: measure_tree(code, args.folder, args.repeat, work / "base.json", args.plan),
        }
    text, data = summary(runs, args.repeat, args.plan)
    command = "PYTHONPATH=. python bench/bench_segment.py --repeat "
    command += f"{args.repeat} --summary {args.summary}"
    command += f" --baseline {args.baseline}" if args.baseline else ""
    command += f" --plan {args.plan}" if args.plan != "default" else ""
    text += f"\n\nCommand: `{command}`"
    args.summary.mkdir(parents=True, exist_ok=True)
    payload = {
        "provenance": provenance(
            {"repeat": args.repeat, "settings": SETTINGS.model_dump(), "start": START}, {}
        ),
        "per_mib": data,
        "pages": runs,
    }
    name = PLANS[args.plan][2]
    (args.summary / f"{name}.json").write_text(json.dumps(payload, indent=1) + "\n")
    (args.summary / f"{name}.md").write_text(text + "\n")
    print(text)


if __name__ == "__main__":
    main()
