"""Build hook: compile page processing's hot loops (webagent/html/_speedups.pyx) when it can.

The package works without them (each has a Python twin: the cleaning walk in Python is about
twice as slow), so a machine without a C compiler still installs: the hook says why it skipped.
``WEBAGENT_PURE_PYTHON=1`` skips it on purpose. For an editable install the module is built
in place, next to its source (git ignores it); for a wheel it is built there and packed.

By hand (after changing the .pyx in an editable install): ``python hatch_build.py``.
"""

from __future__ import annotations

import hashlib
import os
import sys
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parent
SOURCE = ROOT / "webagent" / "html" / "_speedups.pyx"


def source_digest(source: Path = SOURCE) -> str:
    """What the module is built from (``_speedups.SOURCE_DIGEST``: a test finds a stale build)."""
    return hashlib.sha256(source.read_bytes()).hexdigest()[:16]


def build_in_place() -> Path:
    """Compile the walk next to its source; the path of the extension module built."""
    import lxml
    from Cython.Build import cythonize
    from setuptools import Distribution, Extension
    from setuptools.command.build_ext import build_ext

    extension = Extension(
        "webagent.html._speedups",
        [str(SOURCE.relative_to(ROOT))],
        include_dirs=lxml.get_include(),
        define_macros=[("SPEEDUPS_SOURCE_DIGEST", f'"{source_digest()}"')],
        extra_compile_args=["-O2"],
    )
    cwd = Path.cwd()
    os.chdir(ROOT)
    try:
        modules = cythonize([extension], build_dir="build/cython", quiet=True)
        command = build_ext(Distribution({"ext_modules": modules}))
        command.inplace = True
        command.build_temp = str(ROOT / "build" / "temp")
        command.ensure_finalized()
        command.run()
        return ROOT / command.get_ext_filename("webagent.html._speedups")
    finally:
        os.chdir(cwd)


try:
    from hatchling.builders.hooks.plugin.interface import BuildHookInterface
except ImportError:  # run by hand, outside a build
    BuildHookInterface = object


class CompiledWalk(BuildHookInterface):  # type: ignore[misc,valid-type]
    PLUGIN_NAME = "custom"

    def initialize(self, version: str, build_data: dict[str, Any]) -> None:
        if self.target_name != "wheel" or os.environ.get("WEBAGENT_PURE_PYTHON"):
            return
        try:
            built = build_in_place()
        except Exception as exc:  # noqa: BLE001  # any failure: install the Python walk
            self.app.display_warning(
                f"readagent-web: webagent/html/_speedups.pyx was not compiled ({exc!r}); "
                "its Python twins are used (same results, slower)"
            )
            return
        build_data["pure_python"] = False
        build_data["infer_tag"] = True
        if version != "editable":
            build_data["force_include"][str(built)] = str(built.relative_to(ROOT))


if __name__ == "__main__":
    print(build_in_place(), file=sys.stderr)
