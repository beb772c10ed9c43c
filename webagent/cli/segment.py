"""``webagent segment``: show how a page is cut into fragments."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from webagent.errors import ConfigError, PageError
from webagent.html.budget import plan_segmentation
from webagent.html.fragment import SegmentedPage, SegmentSettings
from webagent.html.parse import decode_html
from webagent.html.segment import segment_html

HELP = "clean a page and split it into the fragments an agent gists and reopens"
DESCRIPTION = (
    HELP + ". Prints one row per fragment (index, tokens, element ids, interactive ids, "
    "ancestor path, text preview), or the whole segmentation as JSON. Token counts are the "
    "default estimate, ceil(5 * UTF-8 bytes / 8). With --context-window, fragment count and size "
    "are planned so that every gist and the reopened fragments fit that window "
    "(docs/SEGMENTATION.md)."
)
PREVIEW_CHARS = 60


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("segment", help=HELP, description=DESCRIPTION)
    parser.add_argument(
        "page", help="an HTML file, '-' for standard input, or a bundled sample name"
    )
    parser.add_argument("--json", action="store_true", help="print the SegmentedPage as JSON")
    parser.add_argument("--depth", type=int, help="DOM depth to split at (default 6)")
    parser.add_argument(
        "--context-window",
        type=int,
        help="plan fragment count and size for a model with this many tokens of context",
    )
    parser.add_argument(
        "--max-fragment-tokens", type=int, help="split fragments larger than this (default 1200)"
    )
    plan = parser.add_argument_group("planning (with --context-window)")
    plan.add_argument("--gist-tokens", type=int, default=72, help="tokens per gist (%(default)s)")
    plan.add_argument(
        "--reserved-tokens",
        type=int,
        default=1024,
        help="tokens for task, instructions and answer (%(default)s)",
    )
    plan.add_argument(
        "--max-reopen", type=int, default=5, help="fragments reopened at once (%(default)s)"
    )
    parser.add_argument("--encoding", help="the page's charset, if known (default: detected)")
    parser.set_defaults(func=run)


def settings_from_args(args: argparse.Namespace) -> SegmentSettings:
    try:
        if args.context_window is not None:
            settings = plan_segmentation(
                args.context_window,
                args.gist_tokens,
                args.reserved_tokens,
                args.max_reopen,
                depth=args.depth,
            )
        else:
            settings = SegmentSettings(**({"depth": args.depth} if args.depth else {}))
        values = settings.model_dump()
        if args.max_fragment_tokens is not None:
            values["max_fragment_tokens"] = args.max_fragment_tokens
            values["min_fragment_tokens"] = min(
                values["min_fragment_tokens"], args.max_fragment_tokens
            )
        return SegmentSettings(**values)
    except ValueError as exc:
        raise ConfigError(f"invalid segmentation settings: {exc}") from exc


def read_page(page: str) -> bytes:
    if page == "-":
        return sys.stdin.buffer.read()
    path = Path(page)
    if path.is_file():
        return path.read_bytes()
    from webagent.samples import SAMPLE_PAGES, sample_page_path

    if page in SAMPLE_PAGES:
        return sample_page_path(page).read_bytes()
    raise PageError(f"{page}: no such file, nor a sample page ({', '.join(SAMPLE_PAGES)})")


def format_table(page: SegmentedPage) -> str:
    lines = [f"{'#':>4} {'tokens':>6} {'ids':>4} {'int':>4}  path | text"]
    for fragment in page.fragments:
        flag = "!" if fragment.oversized else " "
        preview = fragment.text[:PREVIEW_CHARS] + (
            "…" if len(fragment.text) > PREVIEW_CHARS else ""
        )
        lines.append(
            f"{fragment.index + 1:>4} {fragment.tokens:>6}{flag}{len(fragment.element_ids):>4} "
            f"{len(fragment.interactive_ids):>4}  {fragment.path or '(top)'} | {preview}"
        )
    interactive = sum(len(f.interactive_ids) for f in page.fragments)
    lines.append(
        f"{len(page.fragments)} fragments, {page.page_tokens} tokens, "
        f"{len(page.element_ids)} element ids ({interactive} interactive), depth {page.depth}, "
        f"{page.raw_bytes} bytes of HTML"
    )
    if not page.fits_budget:
        lines.append(f"over budget: {page.overflow}")
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    settings = settings_from_args(args)
    raw = read_page(args.page)
    data: bytes | str = decode_html(raw, args.encoding) if args.encoding else raw
    page = segment_html(data, settings)
    print(page.model_dump_json(indent=1) if args.json else format_table(page))
    return 0
