"""The agent for BrowserGym's experiment loop and AgentLab: ``AbstractAgentArgs`` over a
:class:`~webagent.config.RunConfig`.

``WebAgentArgs(config={"agent": {"agent": "readagent-p"}, "model": {...}})`` takes the
sections of a ``run.toml``; the environment (``OPENAI_API_KEY``, ``WEBAGENT_BACKEND``...)
sits under them as it does for ``webagent`` commands. ``prepare()`` builds the model, gist
cache and agent (:func:`webagent.build.open_agent`), ``make_agent()`` wraps the agent for one
episode (:class:`~live_runner.browsergym.agent.BrowserGymAgent`), ``close()`` closes what
``prepare`` opened. A pickled ``WebAgentArgs`` (BrowserGym saves one per experiment) holds
the settings only.
"""

from __future__ import annotations

import os
from contextlib import ExitStack
from dataclasses import dataclass, field
from typing import Any

from browsergym.experiments.loop import AbstractAgentArgs

from live_runner.browsergym.agent import BrowserGymAgent
from webagent.build import OpenAgent, open_agent
from webagent.config import RunConfig, Values, resolve_config
from webagent.contracts import Agent


@dataclass
class WebAgentArgs(AbstractAgentArgs):  # type: ignore[misc]  # BrowserGym is untyped
    agent_name: str | None = None
    config: Values = field(default_factory=dict)
    #: read ``WEBAGENT_*`` / ``OPENAI_*`` from the environment under ``config``
    use_environment: bool = True
    #: also keep a JPEG in the processed page (BrowserGym's loop saves its own screenshots)
    screenshots: bool = False

    def __post_init__(self) -> None:
        if self.agent_name is None:
            self.agent_name = f"webagent-{self.run_config().agent.agent}"
        self._stack: ExitStack | None = None
        self._agent: Agent | None = None
        self.manifest: dict[str, Any] = {}

    def run_config(self) -> RunConfig:
        environ = dict(os.environ) if self.use_environment else {}
        return resolve_config(environ=environ, overrides=self.config)

    def open(self, stack: ExitStack) -> OpenAgent:
        """What :meth:`prepare` builds; a subclass may build its agent otherwise."""
        return stack.enter_context(open_agent(self.run_config()))

    def prepare(self) -> None:
        if self._agent is None:
            stack = ExitStack()
            opened = self.open(stack)
            self._stack, self._agent, self.manifest = stack, opened.agent, opened.manifest

    def make_agent(self) -> BrowserGymAgent:
        self.prepare()
        if self._agent is None:  # prepare() sets it
            raise RuntimeError("the agent was not built")
        return BrowserGymAgent(self._agent, screenshots=self.screenshots)

    def close(self) -> None:
        stack, self._stack, self._agent = self._stack, None, None
        if stack is not None:
            stack.close()

    def __getstate__(self) -> dict[str, Any]:
        state = dict(self.__dict__)
        state.update(_stack=None, _agent=None)
        return state
