"""The agents, by name. Each agent registers itself with :func:`register_agent`: its name,
its class, what it calls the fragments it shows and which settings it reads. Nothing else
in the code switches on agent names.

Adding an agent is one file: a :class:`PageAgent` subclass and one ``register_agent`` call.
The built-in agents are registered below; an agent from another package is found through
the ``webagent.agents`` entry-point group (the entry point names its module).
"""

from __future__ import annotations

from contextlib import suppress
from dataclasses import dataclass
from functools import cache
from typing import Any

from pydantic import BaseModel, ValidationError

from webagent.agents.axtree import AXTreeAgent
from webagent.agents.baselines import RawHtmlAgent, RetrievalAgent
from webagent.agents.mindact import MindActAgent
from webagent.agents.pipeline import PageAgent
from webagent.agents.raw_paper import PaperRawHtmlAgent
from webagent.agents.readagent import GistOnlyAgent, ReadAgentP, ReadAgentS
from webagent.agents.settings import AgentSettings
from webagent.contracts import Agent
from webagent.errors import ConfigError, ModelError, validation_message
from webagent.gist.cache import GistCache
from webagent.model.client import Model
from webagent.plugins import AGENTS, entry_points


@dataclass(frozen=True)
class AgentSpec:
    """One agent: how it is built and how it is described."""

    name: str
    agent_class: type[PageAgent]
    summary: str
    #: what a trace's ``reopened`` fragments are called for this agent
    shown_label: str = "reopened parts"
    #: the AgentSettings fields (beyond the shared budget ones) this agent reads
    options: tuple[str, ...] = ()
    #: the agent's own settings class: ``agent.options`` checked by it and handed to the agent
    #: as ``PageAgent.own``; None: the agent takes no options beyond AgentSettings
    settings: type[BaseModel] | None = None


_REGISTRY: dict[str, AgentSpec] = {}


def register_agent(spec: AgentSpec) -> AgentSpec:
    """Add ``spec``; a second agent with a taken name is an error."""
    known = _REGISTRY.get(spec.name)
    if known is not None and known != spec:
        raise ConfigError(f"agent {spec.name!r} is registered twice")
    unknown = [o for o in spec.options if o not in AgentSettings.model_fields]
    if unknown:
        raise ConfigError(f"agent {spec.name!r}: unknown option(s) {', '.join(unknown)}")
    _REGISTRY[spec.name] = spec
    return spec


@cache
def _load_plugins() -> None:
    for entry in entry_points(AGENTS):
        entry.load()  # the module registers its agents


def agent_names() -> tuple[str, ...]:
    _load_plugins()
    return tuple(_REGISTRY)


def agent_spec(name: str) -> AgentSpec:
    _load_plugins()
    spec = _REGISTRY.get(name)
    if spec is None:
        raise ConfigError(f"unknown agent {name!r}; choose one of {', '.join(agent_names())}")
    return spec


def reads_axtree(name: str) -> bool:
    """Whether agent ``name`` reads the page's accessibility tree (``Observation.axtree``)."""
    return agent_spec(name).agent_class.reads_axtree


def build_agent(
    settings: AgentSettings, model: Model, gist_cache: GistCache | None = None
) -> Agent:
    """The agent ``settings.agent`` names, over ``model`` (and ``gist_cache`` for gists).

    A budget too small for the agent is a :class:`ConfigError` here, before any step. The plan
    counts with the model's counter; if that needs an endpoint that does not answer, the
    first step plans again (and is a model error, so pending, if it still does not).
    """
    spec = agent_spec(settings.agent)
    agent = spec.agent_class(settings, model, gist_cache)
    agent.own = own_settings(spec, settings.options)
    with suppress(ModelError):
        agent.segment_plan  # noqa: B018 - made now, so a bad budget fails before the run
    return agent


def own_settings(spec: AgentSpec, options: dict[str, Any]) -> BaseModel | None:
    """``agent.options`` checked by the agent's own settings class; one line names a bad one."""
    if spec.settings is None:
        if options:
            raise ConfigError(
                f"agent.options {sorted(options)}: agent {spec.name!r} takes no options beyond "
                "the agent settings"
            )
        return None
    unknown = sorted(set(options) - set(spec.settings.model_fields))
    if unknown:
        raise ConfigError(
            f"invalid agent.options for agent {spec.name!r}: unknown {', '.join(unknown)} "
            f"(it takes {', '.join(spec.settings.model_fields) or 'none'})"
        )
    try:
        return spec.settings(**options)
    except ValidationError as exc:
        raise ConfigError(
            f"invalid agent.options for agent {spec.name!r}: {validation_message(exc)}"
        ) from exc


_GIST = ("gister", "gist_words", "gist_max_tokens")
_READAGENT = (*_GIST, "max_lookup", "lookup_max_tokens", "read_whole_page", "act_gists", "gist_ids")
for _spec in (
    AgentSpec(
        "readagent-p",
        ReadAgentP,
        "gists of every fragment; reopens several at once (ReadAgent-P)",
        options=_READAGENT,
    ),
    AgentSpec(
        "readagent-s",
        ReadAgentS,
        "gists of every fragment; reopens one at a time until STOP (ReadAgent-S)",
        options=_READAGENT,
    ),
    AgentSpec(
        "raw-html",
        RawHtmlAgent,
        "the cleaned page in document order, cut to the budget",
        shown_label="kept parts",
    ),
    AgentSpec(
        "raw-html-paper",
        PaperRawHtmlAgent,
        "the paper's raw-HTML baseline (Table 10): Mind2Web's cleaned_html as given, cut to "
        "the budget (not the compact rendering raw-html shows)",
        shown_label="kept parts",
    ),
    AgentSpec(
        "mindact",
        MindActAgent,
        "MindAct's multiple choice: the data's ranker top 50 (else BM25/embeddings) in rounds "
        "of 5 options + none, the DOM pruned around them (compare with --score-top-k 50)",
        shown_label="parts holding candidates",
        options=("retriever",),
    ),
    AgentSpec("gist-only", GistOnlyAgent, "gists only, nothing reopened", options=_GIST),
    AgentSpec(
        "retrieval",
        RetrievalAgent,
        "the top-k fragments by BM25 or embeddings",
        shown_label="kept parts",
        options=("retriever", "top_k"),
    ),
    AgentSpec(
        "axtree",
        AXTreeAgent,
        "the page's accessibility tree as AgentLab's GenericAgent reads it ([id] role 'name', "
        "visible/clickable tags), cut to the budget; needs the tree: --render offline, or live",
        shown_label="parts shown in the tree",
    ),
):
    register_agent(_spec)

#: the built-in agents (plugins add theirs to :func:`agent_names`)
AGENT_NAMES: tuple[str, ...] = tuple(_REGISTRY)

__all__ = [
    "AGENT_NAMES",
    "AgentSettings",
    "AgentSpec",
    "agent_names",
    "agent_spec",
    "build_agent",
    "reads_axtree",
    "register_agent",
]
