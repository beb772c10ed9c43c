"""``webagent segment``: show how a page is cut into fragments."""

from __future__ import annotations

import argparse

from webagent.agents.pipeline import PageAgent
from webagent.agents.readagent import ReadAgentP
from webagent.agents.registry import build_agent
from webagent.cli.options import (
    add_budget_arguments,
    add_config_arguments,
    add_model_arguments,
    config_from_args,
)
from webagent.cli.pages import PAGE_HELP, read_page
from webagent.cli.render import add_render_argument, render_page
from webagent.config import RunConfig
from webagent.errors import ConfigError
from webagent.html.fragment import SegmentedPage, SegmentSettings
from webagent.html.parse import decode_html
from webagent.html.segment import segment_html
from webagent.method.levels import Section
from webagent.model import factory
from webagent.model.client import Model

HELP = "clean a page and split it into the fragments an agent gists and reopens"
DESCRIPTION = (
    HELP + ". Prints one row per fragment (index, tokens, element ids, interactive ids, "
    "ancestor path, text preview), or the whole segmentation as JSON. Takes the agents' own "
    "budget and model options and --config, and plans and counts tokens with that model's "
    "counter (the embedded model's tokenizer by default; no model call is made), so it shows "
    "exactly how `webagent act` with the same options segments: fragment count and size are "
    "planned so that every gist and the reopened fragments fit the context budget "
    "(docs/SEGMENTATION.md)."
)
PREVIEW_CHARS = 60


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser("segment", help=HELP, description=DESCRIPTION)
    parser.add_argument("page", help=PAGE_HELP)
    parser.add_argument("--json", action="store_true", help="print the SegmentedPage as JSON")
    parser.add_argument(
        "--max-fragment-tokens", type=int, help="split fragments larger than this (planned)"
    )
    parser.add_argument("--encoding", help="the page's charset, if known (default: detected)")
    parser.add_argument(
        "--levels",
        action="store_true",
        help="also show the levels of sections ReadAgent-P/S would build where the gists do "
        "not all fit the look-up prompt (with extractive gists: no model call)",
    )
    add_render_argument(parser)
    add_config_arguments(parser)
    add_budget_arguments(parser)
    add_model_arguments(parser)
    parser.set_defaults(func=run)


def agent_plan(config: RunConfig, model: Model) -> SegmentSettings:
    """The plan the agent ``config`` names makes over ``model`` (what ``act`` segments with)."""
    agent = build_agent(config.agent, model)
    if not isinstance(agent, PageAgent):
        raise ConfigError(f"agent {config.agent.agent!r} does not segment pages")
    return agent.segment_plan


def settings_from_args(
    args: argparse.Namespace, config: RunConfig, model: Model
) -> SegmentSettings:
    """The plan ``act`` makes for the same options, with ``--max-fragment-tokens`` on top."""
    settings = agent_plan(config, model)
    try:
        values = settings.model_dump()
        if args.max_fragment_tokens is not None:
            values["max_fragment_tokens"] = args.max_fragment_tokens
            values["min_fragment_tokens"] = min(
                values["min_fragment_tokens"], args.max_fragment_tokens
            )
        return SegmentSettings(**values)
    except ValueError as exc:
        raise ConfigError(f"invalid segmentation settings: {exc}") from exc


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
    config = config_from_args(args)
    raw = read_page(args.page, args.encoding)
    data: bytes | str = decode_html(raw, args.encoding) if args.encoding else raw
    if args.render:
        data = render_page(data, args.page, config).html
    with factory.build_model(config.model) as model:
        settings = settings_from_args(args, config, model)
        page = segment_html(data, settings, model.count_tokens)
        levels = level_preview(config, model, page) if args.levels else None
    print(page.model_dump_json(indent=1) if args.json else format_table(page))
    if levels is not None:
        print(format_levels(levels, config.agent.gist_floor_words))
    return 0


def level_preview(
    config: RunConfig, model: Model, page: SegmentedPage
) -> list[tuple[int, Section]]:
    agent = build_agent(config.agent, model)
    if not isinstance(agent, ReadAgentP):
        raise ConfigError(f"--levels: agent {config.agent.agent!r} has no look-up (readagent-p/-s)")
    return agent.level_preview(page)


def format_levels(levels: list[tuple[int, Section]], floor: int) -> str:
    """The sections as a tree, each with what it holds."""
    if not levels:
        return f"levels: none (every gist fits the look-up prompt with {floor} words or more)"
    lines = [f"levels: {max(d for d, _ in levels) + 1} ({len(levels)} sections)"]

    def show(section: Section, depth: int) -> None:
        inside = (
            f"{len(section.children)} sections"
            if section.children
            else f"{section.end - section.start} parts"
        )
        lines.append(f"{'  ' * depth}section {section.label} ({inside})")
        for child in section.children:
            show(child, depth + 1)

    for depth, section in levels:
        if depth == 0:
            show(section, 0)
    return "\n".join(lines)
