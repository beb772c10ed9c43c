"""``--plan`` and the prices (``--price-sheet``, ``--price-in``, ``--price-out``): the cost
plan on the command line."""

from __future__ import annotations

import argparse

from webagent.agents.plan import budget_line, format_plan, plan_agents
from webagent.build import open_model
from webagent.config import RunConfig
from webagent.contracts import Observation
from webagent.errors import ConfigError
from webagent.model.prices import SHEET, Price, find_price, flat_price

PRICE_SHEET_HELP = (
    "price the tokens at a model of the price sheet (NAME, e.g. gpt-4.1-mini or "
    f"claude-sonnet-4; the sheet: {SHEET.relative_to(SHEET.parents[2])}) or of a sheet of "
    "your own (FILE:NAME): USD per 1,000 steps beside the tokens"
)


def add_price_arguments(parser: argparse.ArgumentParser | argparse._ArgumentGroup) -> None:
    """``--price-sheet``, ``--price-in``, ``--price-out``: one meaning wherever they appear."""
    parser.add_argument("--price-sheet", metavar="NAME|FILE:NAME", help=PRICE_SHEET_HELP)
    parser.add_argument(
        "--price-in", type=float, metavar="USD", help="price per 1M input tokens (no sheet)"
    )
    parser.add_argument(
        "--price-out", type=float, metavar="USD", help="price per 1M output tokens (no sheet)"
    )


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "cost", "what a run will cost before spending it (--plan) and, for eval, what it cost"
    )
    group.add_argument(
        "--plan",
        action="store_true",
        help="make no model call: print per agent the expected calls and input/output tokens "
        "per step and in all, from the real segmentation, the templates and the model's token "
        "counter, and the budget and window used; an agent the budget is too small for is "
        "marked 'cannot run'; with --token-counter estimate no server is asked (the window "
        "from --set model.context_window=N or the table of known models)",
    )
    add_price_arguments(group)


def price_from_args(args: argparse.Namespace) -> Price | None:
    """The price the command line names (None: none); a bad one is a ConfigError line."""
    if args.price_sheet is None:
        return flat_price(args.price_in, args.price_out)
    if args.price_in is not None or args.price_out is not None:
        raise ConfigError("give --price-sheet or --price-in/--price-out, not both")
    return find_price(args.price_sheet)


def print_plan(args: argparse.Namespace, config: RunConfig, observations: list[Observation]) -> int:
    """The plan of every agent on ``observations``, with this command's settings."""
    price = price_from_args(args)
    with open_model(config, planning=True) as (model, cache):
        plans = plan_agents(config.agent, model, observations, cache)
        budget = budget_line(config.agent, model)
    print(f"cost plan for {len(observations)} steps (no model call was made):")
    print(format_plan(plans, config.agent.agent, price))
    print(budget)
    return 0
