"""``webagent act``: one step of an agent on one page, printed for a person or a program."""

from __future__ import annotations

import argparse
import sys

from webagent.agents.registry import agent_spec
from webagent.cli.options import add_repeatable, add_run_arguments, config_from_args, open_agent
from webagent.cli.pages import PAGE_HELP, read_page
from webagent.cli.plan import add_plan_arguments, print_plan
from webagent.cli.render import add_render_argument, check_page_source, render_page
from webagent.contracts import Observation, RenderedPage, StepTrace
from webagent.html.parse import decode_html

HELP = "run one agent step on a page and print the reopened fragments and the action"


def register(subparsers: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    parser = subparsers.add_parser(
        "act",
        help=HELP,
        description=HELP + ". Elements are named by their backend_node_id (assigned in "
        "document order as n1, n2, ... when the page has none).",
    )
    parser.add_argument(
        "--page",
        required=True,
        help=PAGE_HELP,
    )
    parser.add_argument("--task", required=True, help="what the agent should do")
    add_repeatable(
        parser,
        "--previous",
        "ACTION",
        'a previous action, e.g. "[textbox] From -> TYPE: Oslo" (repeatable, oldest first)',
    )
    parser.add_argument("--json", action="store_true", help="print the full step trace as JSON")
    add_render_argument(parser)
    add_run_arguments(parser)
    add_plan_arguments(parser)
    parser.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    config = config_from_args(args)
    check_page_source(config, bool(args.render))
    raw = read_page(args.page)
    if args.render:
        # a plan prices every agent, the one that reads the tree too
        page = render_page(raw, args.page, config, axtree=True if args.plan else None)
    else:
        page = RenderedPage(html=decode_html(raw))
    observation = Observation(
        task=args.task, previous_actions=args.previous, html=page.html, axtree=page.axtree
    )
    if args.plan:
        return print_plan(args, config, [observation])
    with open_agent(config) as opened:
        trace = opened.agent.step(observation)
    if args.json:
        print(trace.model_dump_json(indent=2))
    else:
        print_trace(trace)
    return 0 if trace.action is not None else 1


def print_trace(trace: StepTrace) -> None:
    out = sys.stdout
    out.write(f"agent: {trace.agent}\n")
    out.write(f"page: {trace.n_fragments} fragments, {trace.page_tokens} tokens\n")
    if trace.read_whole:
        out.write("the page fits the act prompt whole: read whole, no gists, no look-up\n")
    if trace.sections:
        depth = max(s.depth for s in trace.sections)
        out.write(
            f"levels: {depth} ({len(trace.sections)} sections: the gists do not all fit the "
            "look-up prompt)\n"
        )
    for round_ in trace.lookup:
        asked = ", ".join(str(n) for n in round_.requested) or "-"
        what = f"sections (level {round_.level})" if round_.level else "parts"
        out.write(f"look-up asked for {what}: {asked}" + (" (STOP)" if round_.stop else "") + "\n")
        if round_.sections:
            spans = ", ".join(f"{a + 1}-{b}" for a, b in round_.sections)
            out.write(f"  opened the sections of parts {spans}\n")
        for rejected in round_.rejected:
            out.write(f"  refused {rejected}\n")
    shown = ", ".join(str(i + 1) for i in trace.reopened) or "none"
    out.write(f"{agent_spec(trace.agent).shown_label}: {shown}\n")
    for index in trace.reopened[:10]:
        ids = trace.fragment_element_ids[index]
        preview = ", ".join(ids[:8]) + (" ..." if len(ids) > 8 else "")
        out.write(f"  part {index + 1}: {trace.fragment_tokens[index]} tokens, ids {preview}\n")
    if trace.memory_edits.lines_cut:
        out.write(
            f"cut to the budget: the last {trace.memory_edits.lines_cut} lines of the page "
            "left out\n"
        )
    out.write(f"act prompt: {trace.prompt_tokens} tokens\n")
    for phase, usage in sorted(trace.usage.items()):
        out.write(
            f"  {phase}: {usage.calls} calls, {usage.input_tokens} in / {usage.output_tokens} "
            f"out tokens, {usage.latency_s:.1f} s, {usage.cache_hits} cache hits"
            + (f" ({usage.cached_tokens} tokens served, not spent)" if usage.cached_tokens else "")
            + "\n"
        )
    extractive = sum(g.startswith("[extractive] ") for g in trace.gists)
    if extractive:
        out.write(f"{extractive} extractive gist(s): an empty answer, or no gist named an id\n")
    if trace.action is not None:
        a = trace.action
        out.write(
            f"action: {a.op.value} element {a.element_id}"
            + (f" value {a.value!r}" if a.value else "")
            + "\n"
        )
    else:
        out.write(f"no valid action ({trace.error_class}): {trace.error}\n")
