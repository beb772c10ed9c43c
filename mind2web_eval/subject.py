"""The agent under evaluation, built the one way every command builds a run."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager

from mind2web_eval.runner import EvalSubject
from webagent.agents.context import budget_record
from webagent.build import OpenAgent, open_agent
from webagent.config import RunConfig


def describe_subject(opened: OpenAgent) -> EvalSubject:
    """An agent opened by :func:`~webagent.build.open_agent`, described for the manifest."""
    config = opened.config
    return EvalSubject(
        agent=opened.agent,
        agent_settings=config.agent.manifest(),
        model_settings=config.model.manifest(),
        model_identity={"backend": config.model.backend, "model": opened.model.name},
        gist_cache=opened.gist_cache,
        budget=budget_record(config.agent, opened.model),
    )


@contextmanager
def open_subject(config: RunConfig) -> Iterator[EvalSubject]:
    """:func:`~webagent.build.open_agent`, described for the run manifest."""
    with open_agent(config) as opened:
        yield describe_subject(opened)
