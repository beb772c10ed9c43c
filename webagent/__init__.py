"""readagent-web: ReadAgent (gist memory + look-up) for web pages.

The public API. A library user needs nothing deeper::

    import webagent

    config = webagent.RunConfig(agent=webagent.AgentSettings(agent="readagent-p"))
    with webagent.open_agent(config) as run:
        trace = run.agent.step(webagent.Observation(task="...", html="<html>...</html>"))

``__all__`` is pinned by ``tests/test_public_api.py``.
"""

from webagent import _moved
from webagent.agents.registry import AgentSpec, agent_names, build_agent, register_agent
from webagent.agents.settings import AgentSettings
from webagent.build import OpenAgent, open_agent
from webagent.config import (
    EvalSection,
    GistCacheSettings,
    LiveSection,
    RunConfig,
    load_config_file,
    resolve_config,
)
from webagent.contracts import Action, Agent, LookupRound, Observation, Op, StepTrace
from webagent.errors import (
    ConfigError,
    DatasetError,
    FatalModelError,
    MissingDependencyError,
    ModelError,
    ModelTimeoutError,
    OutputParseError,
    PageError,
    PromptError,
    RateLimitError,
    ReplayMissError,
    TransientModelError,
    WebAgentError,
)
from webagent.gist.cache import GistCache
from webagent.html import Fragment, SegmentedPage, SegmentSettings, segment_html
from webagent.model.client import Model
from webagent.model.factory import build_model
from webagent.model.settings import ModelSettings

__version__ = "0.1.0"

_moved.install()  # old module names (webagent.act, webagent.browsergym, ...) until 0.3

__all__ = [
    "Action",
    "Agent",
    "AgentSettings",
    "AgentSpec",
    "ConfigError",
    "DatasetError",
    "EvalSection",
    "FatalModelError",
    "Fragment",
    "GistCache",
    "GistCacheSettings",
    "LiveSection",
    "LookupRound",
    "MissingDependencyError",
    "Model",
    "ModelError",
    "ModelSettings",
    "ModelTimeoutError",
    "Observation",
    "Op",
    "OpenAgent",
    "OutputParseError",
    "PageError",
    "PromptError",
    "RateLimitError",
    "ReplayMissError",
    "RunConfig",
    "SegmentSettings",
    "SegmentedPage",
    "StepTrace",
    "TransientModelError",
    "WebAgentError",
    "__version__",
    "agent_names",
    "build_agent",
    "build_model",
    "load_config_file",
    "open_agent",
    "register_agent",
    "resolve_config",
    "segment_html",
]
