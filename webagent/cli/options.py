"""Command-line options shared by ``act``, ``eval``, ``demo``, ``run`` and ``miniwob``.

The only place (with the CLI handlers) that reads the environment: ``OPENAI_API_KEY``,
``OPENAI_BASE_URL``, ``WEBAGENT_BACKEND``, ``WEBAGENT_MODEL``, ``WEBAGENT_CACHE``.
"""

from __future__ import annotations

import argparse
from collections.abc import Iterator, Mapping
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webagent.agents.registry import build_agent
from webagent.agents.settings import AGENT_NAMES, AgentSettings
from webagent.contracts import Agent
from webagent.errors import ConfigError
from webagent.gist.cache import GistCache
from webagent.model.client import Model
from webagent.model.factory import build_model
from webagent.model.settings import ModelSettings


def add_model_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group(
        "model", "which model answers (default: the embedded SmolLM2-135M, no key, no network)"
    )
    group.add_argument(
        "--backend",
        choices=["local", "openai", "replay"],
        help="local llama.cpp model, any OpenAI-compatible endpoint, or a recorded cassette "
        "(env WEBAGENT_BACKEND; default local)",
    )
    group.add_argument("--model", help="model name for the endpoint (env WEBAGENT_MODEL)")
    group.add_argument("--base-url", help="OpenAI-compatible base URL (env OPENAI_BASE_URL)")
    group.add_argument("--model-path", type=Path, help="local GGUF file (default: SmolLM2)")
    group.add_argument("--n-ctx", type=int, help="context the local model allocates (8192)")
    group.add_argument("--timeout", type=float, help="seconds per model call (120)")
    group.add_argument("--concurrency", type=int, help="model calls in flight at once (1)")
    group.add_argument("--record", type=Path, help="append every model call to this cassette")
    group.add_argument("--replay", type=Path, help="answer from this cassette; a miss fails")


def model_settings_from_args(args: argparse.Namespace, environ: Mapping[str, str]) -> ModelSettings:
    backend = "replay" if args.replay is not None else args.backend
    return ModelSettings.from_env(
        environ,
        backend=backend,
        model=args.model,
        base_url=args.base_url,
        model_path=args.model_path,
        n_ctx=args.n_ctx,
        timeout_s=args.timeout,
        concurrency=args.concurrency,
        record_to=args.record,
        replay_from=args.replay,
    )


def add_agent_arguments(
    parser: argparse.ArgumentParser, default_agent: str = "readagent-p"
) -> None:
    group = parser.add_argument_group("agent", "how the page is read")
    group.add_argument("--agent", choices=AGENT_NAMES, default=default_agent, help="(%(default)s)")
    group.add_argument(
        "--context-budget", type=int, help="tokens per prompt (default: the model's window)"
    )
    group.add_argument("--depth", type=int, help="DOM split depth (default: the segmenter's)")
    group.add_argument("--max-lookup", type=int, default=5, help="fragments reopened at most (5)")
    group.add_argument(
        "--gister", choices=["model", "extractive"], default="model", help="(%(default)s)"
    )
    group.add_argument(
        "--retriever", choices=["bm25", "embedding", "fused"], default="bm25", help="(%(default)s)"
    )
    group.add_argument(
        "--lookup-assist",
        choices=["none", "bm25", "embedding", "fused"],
        default="none",
        help="after the model's look-up picks, retrieval fills the free slots up to "
        "--max-lookup (%(default)s)",
    )
    group.add_argument("--top-k", type=int, default=5, help="fragments retrieval shows (5)")
    group.add_argument(
        "--gist-cache",
        type=Path,
        help="gist cache file (env WEBAGENT_CACHE; default ~/.cache/readagent-web/gists.sqlite)",
    )
    group.add_argument("--no-gist-cache", action="store_true", help="gist every fragment anew")


def agent_settings_from_args(args: argparse.Namespace) -> AgentSettings:
    values = {
        "agent": args.agent,
        "context_budget": args.context_budget,
        "depth": args.depth,
        "max_lookup": args.max_lookup,
        "gister": args.gister,
        "retriever": args.retriever,
        "lookup_assist": args.lookup_assist,
        "top_k": args.top_k,
    }
    try:
        return AgentSettings(**{k: v for k, v in values.items() if v is not None})
    except ValueError as exc:
        raise ConfigError(f"invalid agent settings: {exc}") from exc


def gist_cache_from_args(args: argparse.Namespace, environ: Mapping[str, str]) -> GistCache | None:
    if args.no_gist_cache:
        return None
    if args.gist_cache is not None:
        return GistCache(args.gist_cache)
    if environ.get("WEBAGENT_CACHE"):
        return GistCache(Path(environ["WEBAGENT_CACHE"]))
    return GistCache(Path.home() / ".cache" / "readagent-web" / "gists.sqlite")


@dataclass
class OpenAgent:
    """An agent built from the command line, with what it holds open and its manifest."""

    agent: Agent
    model: Model
    gist_cache: GistCache | None
    manifest: dict[str, Any]


@contextmanager
def open_agent(args: argparse.Namespace, environ: Mapping[str, str]) -> Iterator[OpenAgent]:
    """Build model, gist cache and agent from ``args``; close the model and cache after."""
    agent_settings = agent_settings_from_args(args)
    model_settings = model_settings_from_args(args, environ)
    model = build_model(model_settings)
    cache = gist_cache_from_args(args, environ)
    try:
        yield OpenAgent(
            agent=build_agent(agent_settings, model, cache),
            model=model,
            gist_cache=cache,
            manifest={"agent": agent_settings.manifest(), "model": model_settings.manifest()},
        )
    finally:
        model.close()
        if cache is not None:
            cache.close()
