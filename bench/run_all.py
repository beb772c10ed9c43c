"""Run every benchmark, one after another, on the same generated tasks.

    python bench/run_all.py [--quick] [--out bench/results] [--only context_cost,scale]

Each benchmark writes NAME.json and NAME.md under --out; this writes summary.md (all tables)
and run_all.json (wall time of each, exit codes, the command lines).
"""

from __future__ import annotations

import argparse
import json
import subprocess
import sys
import time
from pathlib import Path

from benchkit import DEFAULT_PAGES, DEFAULT_TOOL, REPO, git_revision, make_tasks

BENCHMARKS = ("context_cost", "coverage", "speed", "scale")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="small subsets: a smoke run")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--pages", type=Path, default=DEFAULT_PAGES)
    parser.add_argument("--tool", type=Path, default=DEFAULT_TOOL)
    parser.add_argument("--only", default=",".join(BENCHMARKS), help="comma-separated subset")
    args = parser.parse_args()
    started = time.perf_counter()
    tasks = make_tasks(args.pages, args.tool)
    common = ["--out", str(args.out), "--pages", str(args.pages), "--tool", str(args.tool)]
    common += ["--tasks", str(tasks)] + (["--quick"] if args.quick else [])
    runs = []
    for name in args.only.split(","):
        command = [sys.executable, str(Path(__file__).parent / f"{name}.py"), *common]
        print(f"=== {name}: {' '.join(command[1:])}", flush=True)
        t0 = time.perf_counter()
        code = subprocess.run(command, check=False).returncode
        runs.append({"benchmark": name, "exit_code": code, "wall_s": time.perf_counter() - t0,
                     "command": command[1:]})  # fmt: skip
        print(f"=== {name}: exit {code}, {runs[-1]['wall_s']:.0f} s\n", flush=True)
    total = time.perf_counter() - started
    args.out.mkdir(parents=True, exist_ok=True)
    summary = {"schema_version": 1, "quick": args.quick, "git_revision": git_revision(),
               "wall_s": total, "runs": runs}  # fmt: skip
    (args.out / "run_all.json").write_text(json.dumps(summary, indent=2) + "\n")
    parts = [f"# Benchmarks ({'quick' if args.quick else 'full'}), total wall {total:.0f} s\n"]
    done = {run["benchmark"]: run for run in runs}
    for name in BENCHMARKS:  # results of earlier runs (--only) stay in the summary, marked
        md, run = args.out / f"{name}.md", done.get(name)
        if run is not None and run["exit_code"] != 0:
            parts.append(f"## {name}: FAILED (exit {run['exit_code']})\n")
        elif md.exists():
            when = f"{run['wall_s']:.0f} s" if run else "from an earlier run"
            parts.append(f"<!-- {name}: {when} -->\n{md.read_text()}")
    (args.out / "summary.md").write_text("\n".join(parts))
    print(f"all done in {total:.0f} s: {args.out / 'summary.md'}")
    return max((r["exit_code"] for r in runs), default=0)


if __name__ == "__main__":
    sys.exit(main())
