"""Is the test suite stable? Run test folders N times in a row and count failures per test.

A flaky test rejects good submissions at random, so "it passed once" is not enough. Each pass
is a fresh ``python -m pytest`` process (JUnit XML per pass); the summary lists every test
that ever failed or errored, with how often, and the wall time of each pass.

    python bench/stability.py --runs 20                       # tests/model tests/faults tests/eval
    python bench/stability.py --runs 3 tests/model/test_model_openai_faults.py

Writes ``bench/summaries/stability.md`` and ``stability.json`` (``--out`` to change).
"""

from __future__ import annotations

import argparse
import subprocess
import sys
import tempfile
import time
import xml.etree.ElementTree as ET
from collections import Counter
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))

from benchkit import REPO, markdown_table, provenance, write_result

DEFAULT_FOLDERS = ["tests/model", "tests/faults", "tests/eval"]


def run_once(targets: list[str], xml: Path, timeout_s: float) -> tuple[int, float]:
    """One pytest pass; (exit status, seconds)."""
    command = [sys.executable, "-m", "pytest", "-q", "-p", "no:cacheprovider",
               f"--junitxml={xml}", *targets]  # fmt: skip
    started = time.monotonic()
    try:
        done = subprocess.run(
            command, cwd=REPO, capture_output=True, text=True, timeout=timeout_s, check=False
        )
        status = done.returncode
    except subprocess.TimeoutExpired:
        status = -1
    return status, time.monotonic() - started


def outcomes(xml: Path) -> dict[str, str]:
    """test id -> passed / failed / error / skipped, from one JUnit XML file."""
    if not xml.is_file():
        return {}
    result: dict[str, str] = {}
    for case in ET.parse(xml).getroot().iter("testcase"):
        test = f"{case.get('classname', '')}::{case.get('name', '')}"
        kinds = {child.tag for child in case}
        if "failure" in kinds:
            result[test] = "failed"
        elif "error" in kinds:
            result[test] = "error"
        elif "skipped" in kinds:
            result[test] = "skipped"
        else:
            result[test] = "passed"
    return result


def summarize(
    args: argparse.Namespace, passes: list[dict[str, Any]], bad: Counter[str], tests: set[str]
) -> tuple[dict[str, Any], str]:
    done = len(passes)
    clean = sum(p["exit"] == 0 for p in passes)
    rows = [[p["pass"], p["exit"], p["passed"], p["failed"] + p["error"], p["skipped"],
             p["seconds"]] for p in passes]  # fmt: skip
    flaky = [[test, count, done] for test, count in bad.most_common()]
    progress = "" if done == args.runs else f" ({done} of {args.runs} passes done)"
    text = "\n\n".join(
        [
            f"# Test stability: {' '.join(args.targets)}, {args.runs} passes in a row{progress}",
            f"{clean} of {done} passes exited 0; {len(tests)} tests; "
            f"{len(bad)} tests failed at least once; {sum(bad.values())} failures in all; "
            f"{sum(p['seconds'] for p in passes) / 60:.0f} min.",
            f"Command: `python bench/stability.py --runs {args.runs} {' '.join(args.targets)}`",
            markdown_table(["pass", "exit", "passed", "failed", "skipped", "seconds"], rows),
            "## Failures per test\n\n"
            + (markdown_table(["test", "failures", "passes"], flaky) if flaky else "none"),
        ]
    )
    payload = {
        "provenance": provenance({"runs": args.runs, "targets": args.targets}, {}),
        "passes_planned": args.runs,
        "passes_done": done,
        "passes": passes,
        "tests": len(tests),
        "failures_per_test": dict(bad.most_common()),
        "clean_passes": clean,
    }
    return payload, text


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("targets", nargs="*", default=DEFAULT_FOLDERS, help="pytest targets")
    parser.add_argument("--runs", type=int, default=20, help="passes in a row (20)")
    parser.add_argument("--timeout", type=float, default=1800, help="seconds per pass (1800)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "summaries")
    args = parser.parse_args()

    bad: Counter[str] = Counter()
    tests: set[str] = set()
    passes: list[dict[str, Any]] = []
    with tempfile.TemporaryDirectory(prefix="stability-") as tmp:
        for number in range(1, args.runs + 1):
            xml = Path(tmp) / f"pass{number}.xml"
            status, seconds = run_once(args.targets, xml, args.timeout)
            found = outcomes(xml)
            tests.update(found)
            failed = sorted(t for t, o in found.items() if o in ("failed", "error"))
            bad.update(failed)
            counts = Counter(found.values())
            passes.append({"pass": number, "exit": status, "seconds": round(seconds, 1),
                           **{k: counts.get(k, 0) for k in ("passed", "failed", "error",
                                                            "skipped")},
                           "failed_tests": failed})  # fmt: skip
            print(f"pass {number}/{args.runs}: exit {status}, {counts.get('passed', 0)} passed, "
                  f"{len(failed)} failed, {seconds:.0f} s", flush=True)  # fmt: skip
            # written after every pass, so that a run cut short still leaves its summary
            payload, text = summarize(args, passes, bad, tests)
            write_result(args.out, "stability", payload, text)
    return 0 if all(p["exit"] == 0 for p in passes) else 1


if __name__ == "__main__":
    raise SystemExit(main())
