"""The model backends, by name: ``--backend NAME`` and ``ModelSettings.backend``.

A backend is a :class:`BackendSpec` declared as an entry point of the ``webagent.backends``
group (:mod:`webagent.plugins`); the built-in ones (``local``, ``openai``, ``replay``,
``batch``: :mod:`webagent.model.backends`) are declared the same way in this package's
``pyproject.toml``, so a backend in another package is one entry point and one spec, with no
edit here. A spec builds its backend from the run's :class:`ModelSettings`; the settings that
only it reads are its own ``options`` class, given as ``model.options`` (``--set
model.options.NAME=VALUE``, ``[model.options]`` in a run.toml) and checked when it is built.
Heavy dependencies are imported by ``build``, not by the spec.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from pydantic import BaseModel, ValidationError

from webagent.errors import ConfigError, validation_message
from webagent.model.base import Backend
from webagent.model.settings import ModelSettings
from webagent.plugins import BACKENDS, entry_points


@dataclass(frozen=True)
class BackendSpec:
    """One backend: its name, what it is, how it is built, and its own options."""

    name: str
    summary: str
    build: Callable[[ModelSettings, BaseModel | None], Backend]
    #: the settings only this backend reads (``model.options``); None: it takes none
    options: type[BaseModel] | None = None
    #: the ModelSettings fields (beyond the shared ones) this backend reads, for --help
    reads: tuple[str, ...] = ()


def backend_names() -> tuple[str, ...]:
    return tuple(e.name for e in entry_points(BACKENDS))


def backend_spec(name: str) -> BackendSpec:
    for entry in entry_points(BACKENDS):
        if entry.name == name:
            spec = entry.load()
            if not isinstance(spec, BackendSpec) or spec.name != name:
                raise ConfigError(
                    f"backend entry point {name!r} ({entry.value}) is not a BackendSpec named "
                    f"{name!r}"
                )
            return spec
    raise ConfigError(f"unknown backend {name!r}; choose one of {', '.join(backend_names())}")


def backend_options(spec: BackendSpec, values: dict[str, Any]) -> BaseModel | None:
    """``model.options`` checked against the backend's own options class."""
    if spec.options is None:
        if values:
            raise ConfigError(
                f"model.options {sorted(values)}: backend {spec.name!r} takes no options"
            )
        return None
    unknown = sorted(set(values) - set(spec.options.model_fields))
    if unknown:
        raise ConfigError(
            f"invalid model.options for backend {spec.name!r}: unknown {', '.join(unknown)} "
            f"(it takes {', '.join(spec.options.model_fields) or 'none'})"
        )
    try:
        return spec.options(**values)
    except ValidationError as exc:
        raise ConfigError(
            f"invalid model.options for backend {spec.name!r}: {validation_message(exc)}"
        ) from exc


def build_registered(settings: ModelSettings) -> Backend:
    """The backend ``settings.backend`` names, built from ``settings`` and its options."""
    spec = backend_spec(settings.backend)
    return spec.build(settings, backend_options(spec, dict(settings.options)))
