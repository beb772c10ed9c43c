"""A run's ``manifest.json``: everything needed to know what produced its numbers.

Agent and model settings (never secrets), prompt versions, package versions, the git
revision, the dataset's content hash and the protocol. A resumed run must match the
manifest it finds (same agent, model and data), so that one run never mixes two setups.
"""

from __future__ import annotations

import json
import platform
import sys
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field, ValidationError

from mind2web_eval.records import SCHEMA_VERSION
from webagent.agents.settings import AgentSettings
from webagent.atomic import write_text_atomic
from webagent.errors import ConfigError
from webagent.provenance import git_revision, now, package_versions
from webagent.textfiles import read_text

__all__ = ["RunManifest", "Session", "check_resume", "git_revision", "now", "read_manifest"]

PROTOCOL = {
    "history": "gold: previous actions are action_reprs[:i] (errors do not compound)",
    "observation": "the step's cleaned_html (elements carry backend_node_id)",
    "element_ids": "backend_node_id",
}
#: the protocol's observation under ``--render``
RENDERED = {
    "observation": "the step's cleaned_html as headless Chromium renders it offline (what it "
    "does not render is dropped; elements keep their backend_node_id)",
}
#: the protocol's observation under ``--render`` for an agent that reads the accessibility tree
RENDERED_TREE = {
    "observation": "the step's cleaned_html as headless Chromium renders it offline, and its "
    "accessibility tree (Chromium's Accessibility.getFullAXTree), each node of an element named "
    "by that element's backend_node_id",
}
#: manifest fields that must not change when a run resumes
_IDENTITY = ("agent", "model_identity", "data_source", "render")


RunStatus = Literal["running", "complete", "incomplete", "aborted", "interrupted"]


class Session(BaseModel):
    """One invocation of ``webagent eval`` on this run folder."""

    started_at: str
    finished_at: str | None = None
    status: RunStatus = "running"
    steps_run: int = 0
    steps_resumed: int = 0
    argv: list[str] = Field(default_factory=list)


class RunManifest(BaseModel):
    schema_version: int = SCHEMA_VERSION
    created_at: str = Field(default_factory=now)
    status: RunStatus = "running"
    pending: int | None = Field(default=None, description="steps without an answer at the end")
    stopped_by: str | None = Field(default=None, description="what ended the run early")
    agent: dict[str, Any]
    model: dict[str, Any]
    model_identity: dict[str, Any] = Field(description="backend + model name: fixed per run")
    budget: dict[str, Any] = Field(
        default_factory=dict,
        description="the context budget used (context_budget), the one asked for "
        "(context_budget_asked, None: the window), the model's context_window (None: not "
        "known) and window_source, where that figure comes from",
    )
    prompts: dict[str, str] = Field(default_factory=dict)
    packages: dict[str, str | None] = Field(default_factory=package_versions)
    git_revision: str | None = None
    python: str = Field(default_factory=lambda: sys.version.split()[0])
    platform: str = Field(default_factory=platform.platform)
    data_source: str
    render: bool = Field(default=False, description="pages rendered in Chromium (--render)")
    data: dict[str, Any] = Field(default_factory=dict, description="hash, counts, notes")
    protocol: dict[str, Any] = Field(default_factory=dict)
    gist_cache: dict[str, Any] = Field(default_factory=dict)
    config: dict[str, Any] | None = Field(
        default=None,
        description="the whole run configuration (RunConfig.manifest(), no secrets): what "
        "`--config manifest.json` repeats",
    )
    sessions: list[Session] = Field(default_factory=list)

    def identity(self) -> dict[str, Any]:
        return {name: getattr(self, name) for name in _IDENTITY}


def read_manifest(path: Path) -> RunManifest | None:
    if not path.exists():
        return None
    try:
        return RunManifest.model_validate(json.loads(read_text(path)))
    except (json.JSONDecodeError, ValidationError) as exc:
        raise ConfigError(f"{path} is not a readable run manifest: {exc}") from exc


def check_resume(old: RunManifest, new: RunManifest, path: Path) -> None:
    """A resumed run must use the same agent, model, data and page rendering as the one it
    continues. A setting added to the agent since the run began counts as its default (the run
    used what the default does)."""
    before, after = old.identity(), new.identity()
    before["agent"] = _agent_as_now(before["agent"])
    changed = [name for name in _IDENTITY if before[name] != after[name]]
    if changed:
        details = "; ".join(f"{n}: was {before[n]!r}, now {after[n]!r}" for n in changed)
        raise ConfigError(
            f"{path.parent} holds a run with other settings ({details}); "
            "pass a new --out folder, or the same settings to resume"
        )


def _agent_as_now(agent: dict[str, Any]) -> dict[str, Any]:
    """Recorded agent settings as this version writes them, a setting added since at its
    default; as recorded where they no longer read (a setting removed since)."""
    try:
        return AgentSettings.model_validate(agent).manifest()
    except ValidationError:
        return agent


def write_manifest(path: Path, manifest: RunManifest) -> None:
    """Atomic: written to a temporary file, then renamed over the old one."""
    write_text_atomic(path, manifest.model_dump_json(indent=2))
