"""The configuration of a run: one typed, frozen object, and the one place that reads the
environment.

A :class:`RunConfig` has five sections: ``agent`` (:class:`AgentSettings`), ``model``
(:class:`ModelSettings`), ``gist_cache``, ``eval`` and ``live``. It is resolved from, in
rising precedence: the defaults, the environment (:data:`ENVIRONMENT`), a file (a TOML
``run.toml`` with those sections, or an earlier run's ``manifest.json``) and the command
line. Secrets are never read from a file nor written back: an API key comes only from
``OPENAI_API_KEY``.
"""

from __future__ import annotations

import json
import tomllib
from collections.abc import Mapping
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, model_validator

from webagent.agents.registry import agent_names, agent_spec, own_settings
from webagent.agents.settings import AgentSettings
from webagent.errors import ConfigError, TextFileError, validation_message
from webagent.model.settings import ModelSettings
from webagent.textfiles import read_text

#: environment variable -> (section, field): every variable the toolkit reads
ENVIRONMENT: dict[str, tuple[str, str]] = {
    "WEBAGENT_BACKEND": ("model", "backend"),
    "WEBAGENT_MODEL": ("model", "model"),
    "OPENAI_BASE_URL": ("model", "base_url"),
    "OPENAI_API_KEY": ("model", "api_key"),
    "WEBAGENT_CACHE": ("gist_cache", "path"),
    "WEBAGENT_CHROMIUM": ("live", "browser_path"),
    "MINIWOB_URL": ("live", "miniwob_url"),
}
#: fields that are secrets: read from the environment only, never from or into a file
SECRETS = frozenset({("model", "api_key")})
DEFAULT_GIST_CACHE = Path.home() / ".cache" / "readagent-web" / "gists.sqlite"
Values = dict[str, dict[str, Any]]


class _Section(BaseModel):
    model_config = ConfigDict(frozen=True, extra="forbid")


class GistCacheSettings(_Section):
    """Where gists are kept between runs (a SQLite file), or not at all; beside it,
    ``tokenizers.json`` keeps what servers' tokenizers took to learn
    (:mod:`webagent.model.tokenizer_profile`)."""

    enabled: bool = True
    path: Path | None = Field(default=None, description=f"default {DEFAULT_GIST_CACHE}")

    def resolved_path(self) -> Path | None:
        return (self.path or DEFAULT_GIST_CACHE) if self.enabled else None


class EvalSection(_Section):
    """``webagent eval``: which data, how much of it, and the scoring protocol."""

    data: str | None = Field(default=None, description="Mind2Web data: folder, JSON(L), hf:")
    limit: int | None = Field(default=None, ge=1, description="first N tasks")
    strict: bool = Field(
        default=False, description="any record of the data that cannot be loaded is an error"
    )
    screenshots: Path | None = Field(
        default=None,
        description="Multimodal-Mind2Web's screenshots: written here, each step keeping its "
        "path (never decoded); None = left out",
    )
    max_errors: int | None = Field(default=None, ge=1, description="stop after N run errors")
    max_consecutive_failures: int = Field(
        default=5, ge=0, description="circuit breaker: end the run after N model failures in a row"
    )
    record_agent_errors: bool = Field(
        default=False, description="record an exception inside the agent and go on"
    )
    report_steps: int = Field(default=300, ge=0, description="steps shown in the HTML report")
    render: bool = Field(
        default=False, description="each step's page as headless Chromium renders it (--render)"
    )
    progress: bool = True
    missing_gold: Literal["fail", "skip"] = "fail"
    score_top_k: int | None = Field(default=None, ge=1, description="candidate filter (rank < K)")
    bootstrap: int = Field(default=1000, ge=0)
    seed: int = 0


class LiveSection(_Section):
    """``webagent run`` and ``miniwob``: the browser and a live run's limits and safety."""

    browser_path: Path | None = Field(default=None, description="Chromium; None = Playwright's")
    headless: bool = True
    screenshots: bool = True
    max_steps: int | None = Field(default=None, ge=1, description="run 15, miniwob 5")
    max_seconds: float | None = Field(default=None, gt=0, description="run 600")
    max_tokens: int | None = Field(default=None, ge=1, description="model tokens in + out")
    allowed_domains: tuple[str, ...] = ()
    confirm_submit: bool = False
    block_offsite_resources: bool = False
    episode_seconds: float = Field(default=120.0, gt=0, description="MiniWoB's episode clock")
    miniwob_url: str | None = Field(
        default=None,
        description="webagent browsergym: base URL of MiniWoB++'s pages; None = the miniwob "
        "package's over file://",
    )


class RunConfig(_Section):
    """Everything that decides what a run does. Build it with :func:`resolve_config`."""

    agent: AgentSettings = AgentSettings()
    model: ModelSettings = ModelSettings()
    gist_cache: GistCacheSettings = GistCacheSettings()
    eval: EvalSection = EvalSection()
    live: LiveSection = LiveSection()

    @model_validator(mode="after")
    def _known_agent(self) -> RunConfig:
        if self.agent.agent not in agent_names():
            raise ValueError(
                f"unknown agent {self.agent.agent!r}; choose one of {', '.join(agent_names())}"
            )
        own_settings(agent_spec(self.agent.agent), self.agent.options)  # one line if bad
        return self

    def manifest(self) -> dict[str, Any]:
        """The whole configuration as JSON, secrets left out (``resolve_config`` reads it).
        Paths are made absolute, so a run repeated from its manifest in another folder reads
        the same data, cache and model files."""
        values = {
            "agent": self.agent.manifest(),
            "model": self.model.manifest(),
            "gist_cache": self.gist_cache.model_dump(mode="json"),
            "eval": self.eval.model_dump(mode="json"),
            "live": self.live.model_dump(mode="json"),
        }
        for section, field in _PATHS:
            value = values[section].get(field)
            if isinstance(value, str) and value and not value.startswith("hf:"):
                values[section][field] = str(Path(value).expanduser().resolve())
        return values


#: the settings that name a file or folder, recorded as absolute paths in a manifest
_PATHS = (
    ("eval", "data"),
    ("gist_cache", "path"),
    ("model", "model_path"),
    ("model", "replay_from"),
    ("model", "record_to"),
    ("live", "browser_path"),
)


SECTIONS: tuple[str, ...] = tuple(RunConfig.model_fields)


def environment_values(environ: Mapping[str, str]) -> Values:
    """The settings the environment gives (empty variables are ignored)."""
    values: Values = {}
    for var, (section, field) in ENVIRONMENT.items():
        if environ.get(var):
            values.setdefault(section, {})[field] = environ[var]
    return values


def load_config_file(path: Path) -> Values:
    """Sections from a TOML run file, or from a finished run's ``manifest.json``."""
    try:
        text = read_text(path)
    except OSError as exc:
        raise ConfigError(f"--config {path}: cannot read it ({exc.strerror})") from exc
    except TextFileError as exc:
        raise ConfigError(f"--config {exc}") from exc
    if path.suffix == ".json":
        try:
            data = json.loads(text)
        except json.JSONDecodeError as exc:
            raise ConfigError(f"--config {path}: not JSON ({exc})") from exc
        if not isinstance(data, dict):
            raise ConfigError(f"--config {path}: a manifest is a JSON object")
        return manifest_values(data, path)
    try:
        data = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise ConfigError(f"--config {path}: not valid TOML ({exc})") from exc
    return _sections(data, path)


def _sections(data: dict[str, Any], path: Path) -> Values:
    unknown = [k for k in data if k not in SECTIONS]
    if unknown:
        raise ConfigError(
            f"--config {path}: unknown section(s) {', '.join(unknown)}; "
            f"sections are {', '.join(SECTIONS)}"
        )
    values: Values = {}
    for section, fields in data.items():
        if not isinstance(fields, dict):
            raise ConfigError(f"--config {path}: [{section}] must be a table of settings")
        secret = [f for f in fields if (section, f) in SECRETS]
        if secret:
            raise ConfigError(
                f"--config {path}: {section}.{secret[0]} is a secret and is never read from a "
                "file; set OPENAI_API_KEY instead"
            )
        values[section] = dict(fields)
    return values


def manifest_values(data: dict[str, Any], path: Path) -> Values:
    """The configuration an earlier run recorded in its manifest.

    Reads the ``config`` of a manifest that has one, else the evaluator's fields (``agent``,
    ``model``, ``data_source``, ``protocol``, ``gist_cache``). What the manifest adds for
    readers (``api_key_set``) is dropped, and so is ``record_to``: repeating a run never
    appends to the cassette of the run it repeats.
    """
    if isinstance(data.get("config"), dict):
        values = _sections(data["config"], path)
    elif isinstance(data.get("agent"), dict) and isinstance(data.get("model"), dict):
        values = {"agent": dict(data["agent"]), "model": dict(data["model"])}
        protocol = data.get("protocol") or {}
        scoring = protocol.get("scoring") or {}
        evaluation = {
            "data": data.get("data_source"),
            "limit": protocol.get("limit_tasks"),
            "max_errors": protocol.get("max_errors"),
            "missing_gold": scoring.get("missing_gold"),
            "score_top_k": scoring.get("top_k"),
            "bootstrap": scoring.get("bootstrap"),
            "seed": scoring.get("seed"),
        }
        values["eval"] = {k: v for k, v in evaluation.items() if v is not None}
        cache = data.get("gist_cache") or {}
        values["gist_cache"] = {"path": cache["path"]} if cache.get("path") else {"enabled": False}
    else:
        raise ConfigError(f"--config {path}: not a run manifest (no agent and model settings)")
    model = values.get("model", {})
    for added in ("api_key_set", "api_key", "record_to"):
        model.pop(added, None)
    return values


def merge(*layers: Values) -> Values:
    """Later layers win, field by field."""
    merged: Values = {}
    for layer in layers:
        for section, fields in layer.items():
            merged.setdefault(section, {}).update(fields)
    return merged


def resolve_config(
    *,
    environ: Mapping[str, str] | None = None,
    config_file: Path | None = None,
    overrides: Values | None = None,
) -> RunConfig:
    """Defaults < environment < ``config_file`` < ``overrides`` (e.g. the command line)."""
    layers = [environment_values(environ or {})]
    if config_file is not None:
        layers.append(load_config_file(config_file))
    layers.append(overrides or {})
    values = merge(*layers)
    _one_model_source(values.get("model", {}), (overrides or {}).get("model", {}))
    return build_config(values)


def _one_model_source(model: dict[str, Any], flags: dict[str, Any]) -> None:
    """A backend chosen on the command line drops the cassette settings a file brought that
    no longer fit it: replaying drops ``record_to``, another backend drops ``replay_from``."""
    backend = flags.get("backend")
    if backend == "replay" and "record_to" not in flags:
        model.pop("record_to", None)
    elif backend is not None and backend != "replay" and "replay_from" not in flags:
        model.pop("replay_from", None)


def build_config(values: Values) -> RunConfig:
    """Validate ``values``; a bad value becomes one :class:`ConfigError` line naming it."""
    try:
        return RunConfig.model_validate(values)
    except ValidationError as exc:
        raise ConfigError(f"invalid configuration: {validation_message(exc)}") from exc


def parse_assignment(text: str) -> tuple[str, str, Any]:
    """``section.field=value`` (value in TOML syntax, or a bare string) for ``--set``; a
    deeper key (``model.options.name=value``) gives the field a table: ``{"name": value}``."""
    key, sep, raw = text.partition("=")
    section, dot, field = key.strip().partition(".")
    if not sep or not dot or section not in SECTIONS or not field:
        raise ConfigError(
            f"--set {text!r}: write SECTION.FIELD=VALUE with SECTION one of {', '.join(SECTIONS)}"
        )
    if (section, field) in SECRETS:
        raise ConfigError(f"--set {key}: a secret is read only from the environment")
    try:
        value: Any = tomllib.loads(f"v = {raw.strip()}")["v"]
    except tomllib.TOMLDecodeError:
        value = raw.strip()
    field, _, deeper = field.partition(".")
    for name in reversed(deeper.split(".") if deeper else []):
        value = {name: value}
    return section, field, value
