"""``--plan``, ``--price-in``, ``--price-out``: the cost plan on the command line."""

from __future__ import annotations

import argparse

from webagent.agents.plan import format_plan, plan_agents
from webagent.build import open_agent
from webagent.config import RunConfig
from webagent.contracts import Observation
from webagent.errors import ConfigError


def add_plan_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("cost plan", "what a run will cost, before spending it")
    group.add_argument(
        "--plan",
        action="store_true",
        help="make no model call: print per agent the expected calls and input/output tokens "
        "per step and in all, from the real segmentation, the templates and the model's token "
        "counter",
    )
    group.add_argument("--price-in", type=float, metavar="USD", help="price per 1M input tokens")
    group.add_argument("--price-out", type=float, metavar="USD", help="price per 1M output tokens")


def check_prices(args: argparse.Namespace) -> None:
    for flag, value in (("--price-in", args.price_in), ("--price-out", args.price_out)):
        if value is not None and value < 0:
            raise ConfigError(f"{flag} {value}: a price cannot be negative")


def print_plan(args: argparse.Namespace, config: RunConfig, observations: list[Observation]) -> int:
    """The plan of every agent on ``observations``, with this command's settings."""
    check_prices(args)
    with open_agent(config) as opened:
        plans = plan_agents(config.agent, opened.model, observations, opened.gist_cache)
    print(f"cost plan for {len(observations)} steps (no model call was made):")
    print(format_plan(plans, config.agent.agent, args.price_in, args.price_out))
    return 0
