"""Entry-point groups: how packages add commands, model backends, agents and page renderers.

Every group is read here and nowhere else. The toolkit's own parts are declared the same way
as a plug-in's (``pyproject.toml``, ``[project.entry-points."webagent.*"]``), so a new
command, backend or agent in another package is one entry point, with no edit to this one.
An entry point names ``module:attribute``; loading it imports that module.
"""

from __future__ import annotations

from functools import cache
from importlib import metadata
from typing import Any

from webagent.errors import ConfigError

#: ``webagent COMMAND``: ``name = "module:register"``, ``register(subparsers)`` adds the verb
COMMANDS = "webagent.commands"
#: ``--backend NAME``: ``name = "module:SPEC"``, a :class:`webagent.model.registry.BackendSpec`
BACKENDS = "webagent.backends"
#: ``--agent NAME``: ``name = "module"``, a module that calls ``register_agent``
AGENTS = "webagent.agents"
#: ``--render``: ``chromium = "module:open_renderer"`` (saved pages through a browser)
RENDERERS = "webagent.renderers"


@cache
def entry_points(group: str) -> tuple[metadata.EntryPoint, ...]:
    """The group's entry points, in the order the installed packages declare them."""
    return tuple(metadata.entry_points(group=group))


def names(group: str) -> tuple[str, ...]:
    return tuple(e.name for e in entry_points(group))


def load(group: str, name: str) -> Any:
    """What the entry point ``name`` of ``group`` names (its module is imported now)."""
    for entry in entry_points(group):
        if entry.name == name:
            return entry.load()
    known = ", ".join(names(group)) or "none installed"
    raise ConfigError(f"no {name!r} in the {group} entry points ({known})")


def load_all(group: str) -> list[tuple[str, Any]]:
    """Every entry point of ``group``, loaded, as ``(name, object)``."""
    return [(entry.name, entry.load()) for entry in entry_points(group)]
