"""Run every figure script, one after another, then write docs/PERFORMANCE.md and the
README's figures from their summaries (``make bench``: hours on two cores).

    python bench/run.py [--only page_speed,gist_cost] [--list] [--summaries DIR]

Each figure runs in its own process with the arguments of ``bench.figures.FIGURES``; this
prints each one's command before it starts and its exit code and time after, and writes them
to ``bench/results/run.json``. The documents are written when every figure succeeded into
``bench/summaries``; ``--summaries DIR`` sends the summaries elsewhere (a trial run) and leaves
the documents alone.
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from bench.figures import FIGURES
from bench.kit import REPO, RESULTS, SUMMARIES, code_revision
from bench.kit.docs import write_docs


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--only", help="comma-separated figure names (default: all)")
    parser.add_argument("--list", action="store_true", help="print each figure's command")
    parser.add_argument("--summaries", type=Path, default=SUMMARIES)
    args = parser.parse_args()
    chosen = [f for f in FIGURES if not args.only or f.name in args.only.split(",")]
    if args.list or not chosen:
        for figure in FIGURES:
            print(f"{figure.name}: {figure.question}\n    {figure.command}")
        return 0 if chosen else 2
    started, runs = time.perf_counter(), []
    for number, figure in enumerate(chosen, start=1):
        print(f"[{number}/{len(chosen)}] {figure.question}\n    {figure.command}", flush=True)
        trial = ["--summaries", str(args.summaries)] if args.summaries != SUMMARIES else []
        argv = [*figure.args, *trial]
        t0 = time.perf_counter()
        done = subprocess.run([sys.executable, "-m", f"bench.figures.{figure.name}", *argv],
                              cwd=REPO, check=False)  # fmt: skip
        wall = time.perf_counter() - t0
        runs.append({"figure": figure.name, "exit_code": done.returncode, "wall_s": wall,
                     "command": figure.command})  # fmt: skip
        print(f"[{number}/{len(chosen)}] {figure.name}: exit {done.returncode}, "
              f"{wall / 60:.1f} min", flush=True)  # fmt: skip
    RESULTS.mkdir(parents=True, exist_ok=True)
    total = time.perf_counter() - started
    record = {"git_revision": code_revision(), "wall_s": total, "runs": runs}
    (RESULTS / "run.json").write_text(json.dumps(record, indent=2) + "\n")
    failed = [r["figure"] for r in runs if r["exit_code"] != 0]
    print(f"{len(runs) - len(failed)} of {len(runs)} figures in {total / 60:.0f} min"
          + (f"; FAILED: {', '.join(failed)}" if failed else ""))  # fmt: skip
    if not failed and args.summaries == SUMMARIES:
        write_docs(SUMMARIES)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
