"""Page processing's compiled hot loops (``_speedups.pyx``, built at install by
hatch_build.py where a C compiler is there), or None: then their Python twins run, with the
same results, slower."""

from __future__ import annotations

from types import ModuleType

speedups: ModuleType | None
try:
    from webagent.html import _speedups as speedups
except ImportError:  # pragma: no cover  # not built on this machine
    speedups = None
