"""How fast is page processing? parse + clean + segment against a bare lxml parse.

For every ``*.html`` of the saved pages (``../shared/pages``) it times, interleaved and repeated
(the minimum of ``--repeat`` runs is kept, the median is stored too), each call from the same
start (:func:`_equal_start`: garbage collected, and the C heap's free memory handed back to the
system, so that no call runs on pages another one left mapped):

* ``lxml``   ``lxml.html.fromstring(bytes)``: a bare parse, the floor;
* ``ours``   ``segment_html(bytes, settings)``: parse + clean + segment, split into
  ``parse`` / ``clean`` / ``segment`` stages;
* ``lxml_left`` then ``ours_left``: the same two calls from the heap as the call before left
  it (how this figure timed them until the equal start: ``ours`` right after ``lxml``, whose
  freed tree leaves the heap in a state that makes the next call dearer).

Each plan (``SegmentSettings()`` defaults: ``page_speed``; the agents' own plan for an 8K
window: ``page_speed_agents``) is timed for this tree and for ``--baseline REV`` (unpacked with
``git archive``), each in its own process. It also writes ``segment_depth``: fragment counts at
depth 5/6/7 with default settings and with the agents' 8K plan (docs/SEGMENTATION.md cites
them); ``--repeat 0`` writes only that.

    python bench/figures/page_speed.py [--repeat 7] [--baseline REV] [--plan default|agents]
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc
import json
import statistics
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import lxml.html

from bench.kit import (
    PAGES,
    REPO,
    figure_parser,
    git,
    markdown_table,
    publish,
    run_under,
    unpack,
)
from webagent.html.clean import clean_page
from webagent.html.fragment import SegmentSettings
from webagent.html.parse import parse_html
from webagent.html.segment import segment_html, segment_page

DEPTHS = (5, 6, 7)
RUNS = ("lxml", "ours", "parse", "clean", "segment", "lxml_left", "ours_left")


def agent_plan(budget: int = 8192) -> SegmentSettings:
    """The agents' own segmentation plan at ``budget`` (a scripted model supplies the window)."""
    from webagent.agents.context import segment_settings
    from webagent.agents.settings import AgentSettings
    from webagent.model.client import Model
    from webagent.model.scripted import ScriptedBackend

    model = Model(ScriptedBackend([], context_window=budget))
    return segment_settings(AgentSettings(context_budget=budget), model)


#: what each plan times: its settings, how the summary names them, the summary's name
PLANS: dict[str, tuple[Callable[[], SegmentSettings], str, str]] = {
    "default": (SegmentSettings, "SegmentSettings() defaults", "page_speed"),
    "agents": (agent_plan, "the agents' plan for an 8K window", "page_speed_agents"),
}


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
    """Collect the garbage the runs before left, so that none of it is collected inside the
    next timed call and charged to it (what a call's own allocations trigger still counts),
    then hand the C heap's free memory back to the system (``malloc_trim``): every call then
    maps the memory it uses, whatever ran before. Without it the figures depend on the order:
    the same ``segment_html`` takes more CPU right after a bare lxml parse than right after
    another ``segment_html``, and a bare lxml parse more after itself than after
    ``segment_html`` (``lxml_left``/``ours_left``, timed with ``trim`` False, keep that
    protocol's figure)."""
    gc.collect()
    if trim and _TRIM is not None:
        _TRIM(0)


def _stages(data: bytes, settings: SegmentSettings) -> tuple[tuple[float, float], ...]:
    """(wall ms, CPU ms) of parse, clean and segment, as segment_html runs them."""
    _equal_start()
    t0 = _now()
    root = parse_html(data)
    parse = _since(t0)
    t1 = _now()
    page = clean_page(root, keep_wrappers=settings.keep_wrappers)
    clean = _since(t1)
    t2 = _now()
    segment_page(page, settings, raw_bytes=len(data))
    return parse, clean, _since(t2)


def time_page(path: Path, repeat: int, settings: SegmentSettings) -> dict[str, Any]:
    data = path.read_bytes()
    runs: dict[str, list[float]] = {k: [] for k in RUNS}
    cpu: dict[str, list[float]] = {k: [] for k in RUNS}
    for _ in range(repeat):
        timed = {
            "lxml": _timed(lambda: lxml.html.fromstring(data)),
            "ours": _timed(lambda: segment_html(data, settings)),
        }
        timed["parse"], timed["clean"], timed["segment"] = _stages(data, settings)
        timed["lxml_left"] = _timed(lambda: lxml.html.fromstring(data), trim=False)
        timed["ours_left"] = _timed(lambda: segment_html(data, settings), trim=False)
        for key, (wall, used) in timed.items():
            runs[key].append(wall)
            cpu[key].append(used)
    return {
        "page": path.name,
        "kb": len(data) / 1024,
        "ms": {k: min(v) for k, v in runs.items()},
        "cpu_ms": {k: min(v) for k, v in cpu.items()},
        "median_ms": {k: statistics.median(v) for k, v in runs.items()},
        "fragments": len(segment_html(data, settings).fragments),
    }


def per_mib(rows: list[dict[str, Any]], field: str) -> dict[str, float]:
    """Total ms per MiB over the pages, for each timed run, from ``field`` (ms or cpu_ms)."""
    mib = sum(float(r["kb"]) for r in rows) / 1024
    return {k: sum(r[field][k] for r in rows) / mib for k in rows[0][field]}


def summary(runs: dict[str, list[dict[str, Any]]], repeat: int, plan: str) -> tuple[str, Any]:
    """Markdown and JSON: ms/MiB (wall and CPU) and the ratio to a bare lxml parse, per code
    tree; each tree's ratio uses the lxml parse timed in its own process, interleaved."""
    lines, data = [], {}
    names = {"lxml": "lxml.html.fromstring (bare parse)", "ours": "parse + clean + segment "
             "(segment_html)", "parse": "  parse", "clean": "  clean", "segment": "  segment",
             "lxml_left": "lxml.html.fromstring, heap as left",
             "ours_left": "segment_html right after it, heap as left"}  # fmt: skip
    for label, rows in runs.items():
        wall, cpu = per_mib(rows, "ms"), per_mib(rows, "cpu_ms")
        data[label] = {"wall_ms_per_mib": wall, "cpu_ms_per_mib": cpu}
        for key, name in names.items():
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
        + markdown_table("code | run | wall ms/MiB | CPU ms/MiB | wall ÷ lxml | CPU ÷ lxml", lines)
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


def time_tree(code: Path, args: Any, plan: str, out: Path) -> list[dict[str, Any]]:
    """The pages timed in a process that imports webagent from ``code`` (this script's
    ``--rows-out``)."""
    argv = ["--pages", str(args.pages), "--repeat", str(args.repeat), "--plan", plan]
    run_under(code, __file__, *argv, "--rows-out", str(out))
    rows: list[dict[str, Any]] = json.loads(out.read_text())
    return rows


def depth_summary(paths: list[Path], args: Any, started: float) -> None:
    """``segment_depth``: fragment counts at depth 5/6/7 with ``SegmentSettings()`` and with
    the agents' 8K plan (what docs/SEGMENTATION.md cites)."""
    plan, defaults = agent_plan(), SegmentSettings()
    rows: list[dict[str, Any]] = []
    for path in paths:
        data = path.read_bytes()
        page = clean_page(data)
        raw = [len(parse_html(data).xpath("/*" * (d + 1))) for d in DEPTHS]  # before cleaning
        free = [segment_page(page, defaults.model_copy(update={"depth": d})) for d in DEPTHS]
        planned = [segment_page(page, plan.model_copy(update={"depth": d})) for d in DEPTHS]
        rows.append({"page": path.stem, "tokens": free[1].page_tokens, "raw_subtrees": raw,
                     "default": [len(r.fragments) for r in free],
                     "plan_8k": [len(r.fragments) for r in planned],
                     "oversized_8k": [sum(f.oversized for f in r.fragments)
                                      for r in planned]})  # fmt: skip
    settings = {"default": defaults.model_dump(), "plan_8k": plan.model_dump()}
    publish("segment_depth", args, settings=settings, data={}, started=started,
            text=depth_text(rows, plan), depth=rows)  # fmt: skip


def depth_text(rows: list[dict[str, Any]], plan: SegmentSettings) -> str:
    """The depth table and what it shows, every figure computed from ``rows``."""
    slash = "/".join
    table = markdown_table(
        "page | tokens | subtrees d5/d6/d7 | default d5/d6/d7 | 8K plan d5/d6/d7"
        " | over max_fragment_tokens (8K, d6)",
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
    parser = figure_parser(__doc__)
    parser.add_argument("--pages", type=Path, default=PAGES, help="a folder of *.html pages")
    parser.add_argument("--repeat", type=int, default=7, help="runs per page; 0: depths only")
    parser.add_argument("--baseline", help="a git revision timed beside this tree")
    parser.add_argument("--plan", choices=sorted(PLANS), action="append", help="default: both")
    parser.add_argument("--rows-out", type=Path, help="(one tree's run) its rows here")
    args = parser.parse_args()
    paths = sorted(args.pages.glob("*.html"))
    if not paths:
        raise SystemExit(f"no *.html pages in {args.pages}")
    started = time.perf_counter()
    if args.rows_out:  # this process times the tree it imports, one plan
        settings = PLANS[args.plan[0]][0]()
        rows = [time_page(path, args.repeat, settings) for path in paths]
        args.rows_out.write_text(json.dumps(rows))
        return
    depth_summary(paths, args, started)
    for plan in (args.plan or sorted(PLANS)) if args.repeat > 0 else ():
        with tempfile.TemporaryDirectory(prefix="page-speed-") as tmp:
            work = Path(tmp)
            trees = {"ours": REPO}
            if args.baseline:
                label = f"baseline {git('rev-parse', '--short', args.baseline)}"
                trees[label] = unpack(args.baseline, work / "baseline")
            runs = {label: time_tree(code, args, plan, work / f"{n}.json")
                    for n, (label, code) in enumerate(trees.items())}  # fmt: skip
        text, data = summary(runs, args.repeat, plan)
        plan_settings = PLANS[plan][0]().model_dump()
        settings = {"repeat": args.repeat, "settings": plan_settings, "start": START}
        publish(PLANS[plan][2], args, settings=settings, data={}, started=started, text=text,
                per_mib=data, pages=runs)  # fmt: skip


if __name__ == "__main__":
    main()
