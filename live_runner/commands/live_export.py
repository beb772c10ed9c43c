"""``webagent live-export``: recorded live runs as Mind2Web task records (JSONL)."""

from __future__ import annotations

import argparse
from pathlib import Path

EXPORT_HELP = "export recorded live runs as Mind2Web task records (JSONL)"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    export = subparsers.add_parser("live-export", help=EXPORT_HELP, description=EXPORT_HELP)
    export.add_argument("runs", nargs="+", type=Path, metavar="RUN_DIR")
    export.add_argument("--out", type=Path, required=True, help="JSONL file to write")
    export.add_argument(
        "--include-failed", action="store_true", help="also export steps whose action failed"
    )
    export.set_defaults(func=export_command)


def export_command(args: argparse.Namespace) -> int:
    from live_runner.export import write_export

    count = write_export(args.runs, args.out, include_failed=args.include_failed)
    print(f"wrote {count} actions from {len(args.runs)} runs to {args.out}")
    return 0
