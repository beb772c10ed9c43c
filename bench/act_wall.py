"""Wall time of ``webagent act`` on a real ~1 MB page with the embedded model, default settings:
today's per-fragment gisting (the code at ``--baseline-rev``) beside batched gisting (this
checkout), in the same run, one after the other, each a fresh process as a user would run it.

The baseline is exported with ``git archive`` into a temporary folder and run from there, so
both sides are exactly the code they claim to be. The embedded model answers near chance:
only the time and the calls mean anything.

    python bench/act_wall.py [--baseline-rev cd9c864] [--page PATH] [--summary bench/summaries]
"""

from __future__ import annotations

import argparse
import io
import json
import os
import subprocess
import sys
import tarfile
import tempfile
import time
from pathlib import Path
from typing import Any

from benchkit import (
    DEFAULT_PAGES,
    EMBEDDED_CAVEAT,
    REPO,
    markdown_table,
    provenance,
    write_result,
    write_summary,
)

TASK = "Add this bed to the shopping cart"


def export(rev: str, into: Path) -> Path:
    archive = subprocess.run(
        ["git", "archive", rev], cwd=REPO, capture_output=True, check=True
    ).stdout
    with tarfile.open(fileobj=io.BytesIO(archive)) as tar:
        tar.extractall(into, filter="data")
    return into


def run_act(code: Path, page: Path, label: str) -> dict[str, Any]:
    command = [sys.executable, "-m", "webagent", "act", "--page", str(page), "--task", TASK]
    command += ["--no-gist-cache", "--json"]
    env = {**os.environ, "PYTHONPATH": str(code)}
    load_before = os.getloadavg()[0]
    started = time.perf_counter()
    done = subprocess.run(command, cwd=code, env=env, capture_output=True, text=True, check=False)
    wall = time.perf_counter() - started
    try:
        trace = json.loads(done.stdout)
    except json.JSONDecodeError as exc:
        raise SystemExit(
            f"{label}: act printed no trace (exit {done.returncode}): {done.stderr[-2000:]}"
        ) from exc
    usage = trace.get("usage", {})
    row = {
        "label": label,
        "wall_s": wall,
        "exit_code": done.returncode,
        "load_before": load_before,
        "load_after": os.getloadavg()[0],
        "fragments": trace.get("n_fragments"),
        "timings": trace.get("timings", {}),
        "by_phase": usage,
        "calls": sum(u["calls"] for u in usage.values()),
        "input_tokens": sum(u["input_tokens"] for u in usage.values()),
        "output_tokens": sum(u["output_tokens"] for u in usage.values()),
        "error_class": trace.get("error_class"),
    }
    print(
        f"{label}: {wall:.0f} s, {row['calls']} calls, {row['input_tokens']} input tokens",
        flush=True,
    )
    return row


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-rev", default="cd9c864", help="today's code (git revision)")
    parser.add_argument("--page", type=Path, default=None, help="default: the largest saved page")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--summary", type=Path, default=REPO / "bench" / "summaries")
    args = parser.parse_args()
    page = args.page or max(DEFAULT_PAGES.glob("*.html"), key=lambda p: p.stat().st_size)
    started = time.perf_counter()
    with tempfile.TemporaryDirectory(prefix="act-wall-") as tmp:
        today = export(args.baseline_rev, Path(tmp))
        rows = [
            run_act(today, page, f"today, per-fragment gisting ({args.baseline_rev})"),
            run_act(REPO, page, "batched gisting (this checkout, default settings)"),
        ]
    ratio = rows[1]["wall_s"] / rows[0]["wall_s"]
    cells = [
        [
            r["label"],
            r["wall_s"],
            r["by_phase"].get("gist", {}).get("calls", 0),
            r["by_phase"].get("gist", {}).get("input_tokens", 0),
            r["timings"].get("gist_s", float("nan")),
            r["timings"].get("lookup_s", float("nan")),
            r["timings"].get("act_s", float("nan")),
            r["calls"],
            r["input_tokens"],
            f"{r['load_before']:.1f} → {r['load_after']:.1f}",
        ]
        for r in rows
    ]
    text = (
        f"## `webagent act` wall time on {page.name} ({page.stat().st_size / 1e6:.2f} MB), "
        "embedded SmolLM2, default settings, no gist cache\n\n"
        + markdown_table(
            [
                "code",
                "wall s",
                "gist calls",
                "gist input tok",
                "gist s",
                "look-up s",
                "act s",
                "calls",
                "input tok",
                "load avg before → after",
            ],
            cells,
        )
        + f"\n\nBatched ÷ today (wall time): **{ratio:.2f}** (target ≤ 0.33). Runs are one "
        "after the other on a shared machine (load average shown); both include loading the "
        f"model. {EMBEDDED_CAVEAT}."
    )
    prov = provenance({"task": TASK, "baseline_rev": args.baseline_rev}, {"page": page.name})
    payload = {
        "provenance": prov,
        "wall_s": time.perf_counter() - started,
        "ratio": ratio,
        "runs": rows,
    }
    write_result(args.out, "act_wall", payload, text)
    write_summary("act_wall", payload, text, args.summary)


if __name__ == "__main__":
    main()
