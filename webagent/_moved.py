"""Names that moved, kept working for one release with a DeprecationWarning: the registry of
old package -> new package (the README's changelog lists them). Importing an old name imports
the new module under it; nothing else in the toolkit imports by a module-name string but
:mod:`webagent.plugins`."""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.util
import sys
import warnings
from collections.abc import Sequence
from importlib.machinery import ModuleSpec
from types import ModuleType

#: old package -> (where it lives now, the release that drops the old name)
MOVED: dict[str, tuple[str, str]] = {
    "webagent.browsergym": ("live_runner.browsergym", "0.3"),
}


class _Alias(importlib.abc.MetaPathFinder, importlib.abc.Loader):
    """Finds ``OLD.sub`` as the module ``NEW.sub`` (one object, two names)."""

    def __init__(self, old: str, new: str) -> None:
        self.old, self.new = old, new

    def find_spec(
        self, fullname: str, path: Sequence[str] | None, target: ModuleType | None = None
    ) -> ModuleSpec | None:
        if not fullname.startswith(self.old + "."):
            return None
        return importlib.util.spec_from_loader(fullname, self)

    def create_module(self, spec: ModuleSpec) -> ModuleType:
        return importlib.import_module(self.new + spec.name.removeprefix(self.old))

    def exec_module(self, module: ModuleType) -> None:
        """The new module ran when it was imported."""


def alias(old: str) -> ModuleType:
    """The new package, under the old name too, with a DeprecationWarning; its submodules
    import under the old name as well."""
    new, until = MOVED[old]
    warnings.warn(
        f"{old} moved to {new}; the old name goes in {until}", DeprecationWarning, stacklevel=3
    )
    if not any(isinstance(f, _Alias) and f.old == old for f in sys.meta_path):
        sys.meta_path.insert(0, _Alias(old, new))
    return importlib.import_module(new)
