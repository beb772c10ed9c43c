"""``webagent compare``: eval runs side by side (step SR, element accuracy, cost)."""

from __future__ import annotations

import argparse
import json
from pathlib import Path


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    compare = subparsers.add_parser(
        "compare",
        help="put several eval runs side by side (step SR, element acc, cost), and each "
        "against the first, step by step (paired difference in step SR with its interval)",
    )
    compare.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    compare.add_argument("--json", action="store_true", help="print the table as JSON")
    compare.set_defaults(func=run_compare)


def run_compare(args: argparse.Namespace) -> int:
    from mind2web_eval.report.compare import compare_rows, format_compare

    rows = compare_rows(args.runs)
    if args.json:
        print(json.dumps([r.model_dump(mode="json") for r in rows], indent=2))
    else:
        print(format_compare(rows))
    return 0
