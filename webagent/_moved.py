"""Names that moved, kept working for one release with a DeprecationWarning (the README's
changelog lists them): importing an old name imports the module's new home under it. This
registry and :mod:`webagent.plugins` are the only places that import by a module-name string.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

#: old module -> (its new home, the release that drops the old name); a package's submodules
#: follow it
MOVED: dict[str, tuple[str, str]] = {
    "webagent.browsergym": ("live_runner.browsergym", "0.3"),
    "webagent.memory": ("webagent.method.memory", "0.3"),
    "webagent.levels": ("webagent.method.levels", "0.3"),
    "webagent.lookup": ("webagent.method.lookup", "0.3"),
    "webagent.retrieval": ("webagent.method.retrieval", "0.3"),
    "webagent.act": ("webagent.method.act", "0.3"),
}


def new_name(old: str) -> str | None:
    """Where ``old`` (a moved module or one inside a moved package) lives now."""
    for prefix, (new, _until) in MOVED.items():
        if old == prefix or old.startswith(prefix + "."):
            return new + old.removeprefix(prefix)
    return None


class _Moved(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds a moved name as the module at its new home (one module object, two names)."""

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        return importlib.util.spec_from_loader(fullname, self) if new_name(fullname) else None

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        new = new_name(spec.name)
        assert new is not None  # find_spec answered for this name only
        prefix = next(p for p in MOVED if spec.name == p or spec.name.startswith(p + "."))
        warnings.warn(
            f"{spec.name} moved to {new}; the old name goes in {MOVED[prefix][1]}",
            DeprecationWarning,
            stacklevel=2,
        )
        return importlib.import_module(new)

    def exec_module(self, module: ModuleType) -> None:
        """The module ran when its new name was imported."""


def install() -> None:
    """Let the old names import (once per process)."""
    if not any(isinstance(finder, _Moved) for finder in sys.meta_path):
        sys.meta_path.insert(0, _Moved())  # before the path finder: a moved package's
        # submodules must not load a second time under the old name
