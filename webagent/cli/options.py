"""Command-line options shared by every command that runs an agent (``act``, ``eval``,
``demo``, ``run``, ``miniwob``) and the one way such a command builds its run.

Each option has one name and one meaning across commands. Flags map onto fields of the
:class:`~webagent.config.RunConfig` (``FLAGS``); a flag left out keeps what the config file
(``--config run.toml`` or an earlier run's ``manifest.json``), then the environment, then the
defaults give. ``--set SECTION.FIELD=VALUE`` reaches every other setting.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Mapping
from pathlib import Path
from typing import get_args

from webagent.agents.registry import agent_names, agent_spec
from webagent.agents.settings import AgentSettings
from webagent.build import OpenAgent, open_agent
from webagent.config import DEFAULT_GIST_CACHE, RunConfig, Values, parse_assignment, resolve_config
from webagent.gist.batch import GistView
from webagent.model.registry import backend_names, backend_spec

#: argparse ``dest`` -> ``section.field`` of the config; a flag whose value is None was not given
FLAGS: dict[str, str] = {
    # agent
    "agent": "agent.agent",
    "context_budget": "agent.context_budget",
    "depth": "agent.depth",
    "max_lookup": "agent.max_lookup",
    "reserve_tokens": "agent.reserve_tokens",
    "gister": "agent.gister",
    "gist_words": "agent.gist_words",
    "gist_max_tokens": "agent.gist_max_tokens",
    "gist_batch": "agent.gist_batch",
    "gist_view": "agent.gist_view",
    "retriever": "agent.retriever",
    "lookup_assist": "agent.lookup_assist",
    "top_k": "agent.top_k",
    "repair_attempts": "agent.repair_attempts",
    # gist cache
    "gist_cache": "gist_cache.path",
    # model
    "backend": "model.backend",
    "model": "model.model",
    "base_url": "model.base_url",
    "model_path": "model.model_path",
    "n_ctx": "model.n_ctx",
    "timeout": "model.timeout_s",
    "max_retries": "model.max_retries",
    "concurrency": "model.concurrency",
    "structured_output": "model.structured_output",
    "token_counter": "model.token_counter",
    "record": "model.record_to",
    "replay": "model.replay_from",
}
_AGENT_DEFAULTS = AgentSettings()

__all__ = ["OpenAgent", "add_run_arguments", "config_from_args", "open_agent"]


def _default(field: str) -> str:
    return f"({getattr(_AGENT_DEFAULTS, field)})"


def add_repeatable(parser: argparse.ArgumentParser, flag: str, metavar: str, text: str) -> None:
    """A flag that may be given several times; its values are kept in order."""
    parser.add_argument(flag, action="append", default=[], metavar=metavar, help=text)


def add_config_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("configuration")
    config_help = (
        "a run.toml (sections agent, model, gist_cache, eval, live), or an earlier run's "
        "manifest.json to repeat it; flags override it"
    )
    group.add_argument("--config", type=Path, metavar="FILE", help=config_help)
    group.add_argument(
        "--set",
        action="append",
        default=[],
        dest="settings",
        metavar="SECTION.FIELD=VALUE",
        help="any other setting, e.g. model.max_retries=2 (repeatable; docs/ARCHITECTURE.md)",
    )


def add_budget_arguments(parser: argparse.ArgumentParser, default_agent: str | None = None) -> None:
    """What decides how a page is segmented: shared by the agents and ``segment``."""
    group = parser.add_argument_group("agent", "how the page is read")
    group.add_argument(
        "--agent",
        choices=agent_names(),
        default=default_agent,
        help=f"({default_agent or _AGENT_DEFAULTS.agent}) "
        + "; ".join(f"{n}: {agent_spec(n).summary}" for n in agent_names()),
    )
    group.add_argument(
        "--context-budget",
        type=int,
        help="tokens per prompt (default: the model's window); a budget over the window is refused",
    )
    group.add_argument("--depth", type=int, help="DOM split depth (default: the segmenter's)")
    group.add_argument(
        "--max-lookup", type=int, help=f"fragments reopened at most {_default('max_lookup')}"
    )
    group.add_argument(
        "--reserve-tokens",
        type=int,
        help=f"room for task, previous actions and instructions {_default('reserve_tokens')}",
    )
    group.add_argument(
        "--gist-max-tokens", type=int, help=f"tokens per gist at most {_default('gist_max_tokens')}"
    )


def add_agent_arguments(parser: argparse.ArgumentParser, default_agent: str | None = None) -> None:
    add_budget_arguments(parser, default_agent)
    group = parser.add_argument_group("agent options")
    group.add_argument(
        "--gister", choices=["model", "extractive"], help=f"gists by {_default('gister')}"
    )
    group.add_argument("--gist-words", type=int, help=f"words per gist {_default('gist_words')}")
    group.add_argument(
        "--gist-batch",
        type=int,
        help="fragments gisted per model call at most, as many as fit the budget "
        f"{_default('gist_batch')}; 1 = one call per fragment, for comparison",
    )
    group.add_argument(
        "--gist-view",
        choices=list(get_args(GistView)),
        help="what the model gister reads of a fragment: its text with controls marked by "
        "numbers mapped back to page ids (reading), the same marked by page ids "
        f"(reading-ids), or its compact HTML (html) {_default('gist_view')}",
    )
    group.add_argument(
        "--retriever",
        choices=["bm25", "embedding", "fused", "multilingual", "hybrid"],
        help=f"retrieval's ranker {_default('retriever')}",
    )
    group.add_argument(
        "--lookup-assist",
        choices=["none", "bm25", "embedding", "fused", "multilingual", "hybrid"],
        help="after the model's look-up picks, retrieval fills the free slots up to "
        f"--max-lookup {_default('lookup_assist')}",
    )
    group.add_argument("--top-k", type=int, help=f"fragments retrieval shows {_default('top_k')}")
    group.add_argument(
        "--repair-attempts",
        type=int,
        help=f"re-asks after an unparseable answer {_default('repair_attempts')}",
    )
    group.add_argument(
        "--gist-cache",
        type=Path,
        help=f"gist cache file (env WEBAGENT_CACHE; default {DEFAULT_GIST_CACHE})",
    )
    group.add_argument("--no-gist-cache", action="store_true", help="gist every fragment anew")


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "model", "which model answers (default: the embedded SmolLM2-135M, no key, no network)"
    )
    group.add_argument(
        "--backend",
        choices=backend_names(),
        help="; ".join(f"{n}: {backend_spec(n).summary}" for n in backend_names())
        + " (env WEBAGENT_BACKEND; default local; a plug-in adds its own through the "
        "webagent.backends entry points)",
    )
    group.add_argument("--model", help="model name for the endpoint (env WEBAGENT_MODEL)")
    group.add_argument(
        "--base-url",
        action="append",
        help="OpenAI-compatible base URL (env OPENAI_BASE_URL); repeat it for replicas of one "
        "model: requests spread over them, --concurrency on each, a dead one is dropped",
    )
    group.add_argument("--model-path", type=Path, help="local GGUF file (default: SmolLM2)")
    group.add_argument("--n-ctx", type=int, help="context the local model allocates (8192)")
    group.add_argument("--timeout", type=float, help="seconds per model call (120)")
    group.add_argument("--max-retries", type=int, help="retries of a failed model call (4)")
    group.add_argument("--concurrency", type=int, help="model calls in flight at once (1)")
    group.add_argument(
        "--structured-output",
        choices=["auto", "json_schema", "json_object", "grammar", "none"],
        help="how answers are constrained (auto)",
    )
    group.add_argument(
        "--token-counter",
        choices=["auto", "estimate", "gguf"],
        help="how budgets count tokens: the backend's own (auto), 5 tokens per 8 bytes "
        "(estimate), or the tokenizer of --model-path, default SmolLM2's (gguf) (auto)",
    )
    group.add_argument("--record", type=Path, help="append every model call to this cassette")
    group.add_argument(
        "--replay",
        type=Path,
        help="answer from this cassette or answers file; a miss fails",
    )


def add_run_arguments(parser: argparse.ArgumentParser, default_agent: str | None = None) -> None:
    """``--config``/``--set``, the agent and the model options."""
    add_config_arguments(parser)
    add_agent_arguments(parser, default_agent)
    add_model_arguments(parser)


def flag_values(args: argparse.Namespace) -> Values:
    """The settings given on the command line (``FLAGS``, ``--no-gist-cache``, ``--set``)."""
    values: Values = {}
    for dest, path in FLAGS.items():
        value = getattr(args, dest, None)
        if value is not None:
            section, field = path.split(".")
            values.setdefault(section, {})[field] = value
    urls = values.get("model", {}).get("base_url")
    if isinstance(urls, list):  # --base-url is repeatable: the first, then the replicas
        values["model"]["base_url"], values["model"]["base_urls"] = urls[0], tuple(urls[1:])
    if getattr(args, "replay", None) is not None:
        values["model"]["backend"] = "replay"
    if getattr(args, "no_gist_cache", False):
        values.setdefault("gist_cache", {})["enabled"] = False
    for assignment in getattr(args, "settings", None) or []:
        section, field, value = parse_assignment(assignment)
        fields = values.setdefault(section, {})
        known = fields.get(field)
        fields[field] = (
            {**known, **value} if isinstance(known, dict) and isinstance(value, dict) else value
        )
    return values


def config_from_args(
    args: argparse.Namespace,
    environ: Mapping[str, str] | None = None,
    extra: Values | None = None,
) -> RunConfig:
    """The run's configuration: defaults < environment < ``--config`` < ``extra`` < flags."""
    flags = flag_values(args)
    layers: Values = {}
    for layer in (extra or {}, flags):
        for section, fields in layer.items():
            layers.setdefault(section, {}).update(fields)
    return resolve_config(
        environ=os.environ if environ is None else environ,
        config_file=getattr(args, "config", None),
        overrides=layers,
    )
