"""Timing and memory of parse + clean + segment, beside a plain BeautifulSoup parse.

Used by bench/speed.py (real pages) and bench/scale.py (pages made to a size). Runs are
interleaved (ours, then BeautifulSoup, on the same bytes) and the minimum of the repeats is
kept, so that the ratio holds on a busy machine. Memory is measured in a fresh subprocess:
the peak resident set (``VmHWM`` reset just before the run, so libxml2's C allocations count)
and ``tracemalloc`` (Python objects only).
"""

from __future__ import annotations

import json
import resource
import subprocess
import sys
import time
import tracemalloc
from collections.abc import Callable
from pathlib import Path
from typing import Any

from webagent.html.clean import clean_page
from webagent.html.fragment import SegmentSettings
from webagent.html.parse import parse_html
from webagent.html.segment import segment_page


def agent_plan(budget: int = 8192) -> SegmentSettings:
    """The agents' own segmentation plan at ``budget`` (a scripted model supplies the window)."""
    from webagent.agents.context import segment_settings
    from webagent.agents.settings import AgentSettings
    from webagent.model.client import Model
    from webagent.model.scripted import ScriptedBackend

    model = Model(ScriptedBackend([], context_window=budget))
    return segment_settings(AgentSettings(context_budget=budget), model)


def stages(data: bytes, plan: SegmentSettings) -> dict[str, Any]:
    """Seconds of parse, clean and segment, and what came out."""
    t0 = time.perf_counter()
    root = parse_html(data)
    t1 = time.perf_counter()
    page = clean_page(root, keep_wrappers=plan.keep_wrappers)
    t2 = time.perf_counter()
    seg = segment_page(page, plan, None, raw_bytes=len(data))
    t3 = time.perf_counter()
    return {
        "parse_s": t1 - t0,
        "clean_s": t2 - t1,
        "segment_s": t3 - t2,
        "total_s": t3 - t0,
        "fragments": len(seg.fragments),
        "oversized_fragments": sum(1 for f in seg.fragments if f.oversized),
        "max_fragment_tokens": max((f.tokens for f in seg.fragments), default=0),
        "elements": len(seg.element_ids),
        "page_tokens_estimate": seg.page_tokens,
        "fits_budget": seg.fits_budget,
        "cleaned_html": "\n".join(f.html for f in seg.fragments),
    }


def bs4_parse(data: bytes, parser: str) -> float:
    from bs4 import BeautifulSoup

    t0 = time.perf_counter()
    BeautifulSoup(data, parser)
    return time.perf_counter() - t0


def timed(data: bytes, plan: SegmentSettings, repeats: int, html_parser: bool) -> dict[str, Any]:
    """Best of ``repeats`` for ours and for BeautifulSoup, interleaved."""
    best: dict[str, Any] = {}
    for _ in range(repeats):
        ours = stages(data, plan)
        runs: dict[str, Callable[[], float]] = {"bs4_lxml_s": lambda: bs4_parse(data, "lxml")}
        if html_parser:
            runs["bs4_html_parser_s"] = lambda: bs4_parse(data, "html.parser")
        for key, run in runs.items():
            ours[key] = run()
        for key, value in ours.items():
            if key.endswith("_s"):
                best[key] = min(best.get(key, value), value)
            else:
                best[key] = value
    return best


def memory_in_subprocess(path: Path, what: str) -> dict[str, Any]:
    """Peak memory of one run of ``what`` (``ours`` or ``bs4``) on ``path``, in a fresh process."""
    out = subprocess.run(
        [sys.executable, __file__, what, str(path.resolve())],
        capture_output=True,
        text=True,
        check=True,
        cwd=Path(__file__).parent,
    )
    return dict(json.loads(out.stdout.strip().splitlines()[-1]))


def _status_kb(field: str) -> int:
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return int(line.split()[1])
    raise KeyError(field)


def _memory_child(what: str, path: Path) -> None:
    from bs4 import BeautifulSoup

    data = path.read_bytes()
    plan = agent_plan()
    segment_page(clean_page(parse_html(b"<p>warm</p>")), plan)  # imports and caches
    BeautifulSoup(b"<p>warm</p>", "lxml")
    before = _status_kb("VmRSS")
    Path("/proc/self/clear_refs").write_text("5")  # reset the peak (VmHWM) to the current RSS
    tracemalloc.start()
    if what == "ours":
        segment_page(clean_page(parse_html(data)), plan, None, raw_bytes=len(data))
    else:
        BeautifulSoup(data, "lxml")
    _, peak = tracemalloc.get_traced_memory()
    hwm = _status_kb("VmHWM")
    result = {
        "what": what,
        "bytes": len(data),
        "rss_before_mb": before / 1024,
        "peak_rss_mb": hwm / 1024,
        "peak_added_mb": (hwm - before) / 1024,
        "tracemalloc_peak_mb": peak / 2**20,
        "ru_maxrss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    print(json.dumps(result))


if __name__ == "__main__":
    _memory_child(sys.argv[1], Path(sys.argv[2]))
