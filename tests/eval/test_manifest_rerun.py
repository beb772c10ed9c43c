"""A run's manifest stores its whole configuration: ``--config OUT/manifest.json`` repeats
every setting, wherever the repeat is started from."""

from __future__ import annotations

import json
import shutil
from pathlib import Path
from typing import Any

import pytest
from eval_oracle import Oracle, oracle_model

import webagent.model.factory
from mind2web_eval.data import load_tasks
from webagent.cli import main


@pytest.fixture
def oracle_backend(monkeypatch: pytest.MonkeyPatch, raw_folder: Path) -> None:
    tasks, _ = load_tasks(raw_folder)
    monkeypatch.setattr(
        webagent.model.factory, "build_model", lambda *_a, **_k: oracle_model(Oracle(tasks))
    )


def _config(run: Path) -> dict[str, Any]:
    return dict(json.loads((run / "manifest.json").read_text(encoding="utf-8"))["config"])


@pytest.mark.usefixtures("oracle_backend")
def test_a_rerun_from_the_manifest_repeats_every_setting(
    raw_folder: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    work = tmp_path / "work"
    shutil.copytree(raw_folder, work / "data")
    monkeypatch.chdir(work)  # relative paths: the repeat starts elsewhere
    settings = [
        "--agent", "gist-only", "--context-budget", "3000", "--gist-words", "12",
        "--gist-cache", "cache/gists.sqlite", "--limit", "2", "--strict", "--max-errors", "7",
        "--max-consecutive-failures", "3", "--report-steps", "4", "--missing-gold", "skip",
        "--score-top-k", "40", "--bootstrap", "6", "--seed", "3", "--no-progress",
        "--set", "agent.repair_attempts=0", "--set", "model.timeout_s=33.0",
    ]  # fmt: skip
    assert main(["eval", "--data", "data", "--out", "first", *settings]) == 0
    first = _config(work / "first")
    assert first["eval"]["data"] == str(work / "data")  # recorded as an absolute path
    assert Path(first["gist_cache"]["path"]).is_absolute()
    monkeypatch.chdir(tmp_path)
    manifest = work / "first" / "manifest.json"
    assert main(["eval", "--config", str(manifest), "--out", "again"]) == 0
    again = _config(tmp_path / "again")
    assert again == first
    assert first["agent"]["agent"] == "gist-only" and first["agent"]["context_budget"] == 3000
    assert first["eval"]["strict"] is True and first["eval"]["score_top_k"] == 40
    assert first["eval"]["progress"] is False and first["model"]["timeout_s"] == 33.0
    runs = (work / "first", tmp_path / "again")
    predictions = [(run / "predictions.jsonl").read_text() for run in runs]
    assert predictions[0] == predictions[1] != ""
