"""What produced a result: the git revision, and which changes make it dirty."""

from __future__ import annotations

import shutil
import subprocess
from pathlib import Path

import pytest

from webagent.provenance import git_revision

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="git is not installed")


def git(repo: Path, *args: str) -> str:
    command = ["git", "-c", "user.name=t", "-c", "user.email=t@example.org", *args]
    return subprocess.run(command, cwd=repo, check=True, capture_output=True, text=True).stdout


def test_changes_under_ignored_paths_leave_the_revision_clean(tmp_path: Path) -> None:
    git(tmp_path, "init", "-q")
    (tmp_path / "code.py").write_text("x = 1\n")
    (tmp_path / "summaries").mkdir()
    (tmp_path / "summaries" / "bench.md").write_text("old\n")
    git(tmp_path, "add", ".")
    git(tmp_path, "commit", "-qm", "start")
    sha = git(tmp_path, "rev-parse", "HEAD").strip()
    below = tmp_path / "summaries"  # asked from a subfolder: the paths are the root's
    assert git_revision(below) == sha
    (tmp_path / "summaries" / "bench.md").write_text("new\n")
    assert git_revision(below) == f"{sha}+dirty"
    assert git_revision(below, ignore=("summaries",)) == sha
    (tmp_path / "code.py").write_text("x = 2\n")
    assert git_revision(below, ignore=("summaries",)) == f"{sha}+dirty"
    assert git_revision(tmp_path.parent / "not-a-checkout-at-all") is None
