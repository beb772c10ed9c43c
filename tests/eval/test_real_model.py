"""`webagent eval` end to end with the embedded model (SmolLM2-135M through llama.cpp).

The model is near chance: these tests check the plumbing (calls, usage, traces, resume,
reports), never its scores.
"""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from mind2web_eval.store import ResultStore
from webagent.cli import main

# the embedded model shares 2 cores with everything else: allow for a loaded machine
pytestmark = [pytest.mark.llama, pytest.mark.timeout(900)]


def test_readagent_p_with_the_local_model(
    raw_folder: Path, tmp_path: Path, local_model_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = [
        "eval", "--data", str(raw_folder / "test_website"), "--out", str(out),
        "--agent", "readagent-p", "--context-budget", "2048", "--max-lookup", "2",
        "--model-path", str(local_model_path), "--n-ctx", "4096", "--no-progress",
        "--bootstrap", "50", "--gist-cache", str(tmp_path / "gists.sqlite"),
        "--set", "agent.read_whole_page=false",  # the pages fit whole: gist and look up anyway
    ]  # fmt: skip
    assert main(argv) == 0
    printed = capsys.readouterr().out
    assert "2 steps run, 0 resumed" in printed
    records = list(ResultStore(out / "results.jsonl").records())
    assert [r.action_uid for r in records] == ["fx-c1", "fx-c2"]
    for record in records:
        trace = record.trace
        assert trace is not None
        phases = {call.phase for call in trace.calls}
        assert {"lookup", "act"} <= phases
        assert record.diagnostics.input_tokens > 0
        assert record.diagnostics.error_class in (
            "ok",
            "lookup_miss",
            "wrong_element",
            "wrong_op_or_value",
            "invalid_output",
        )
        assert record.diagnostics.lookup_hit is not None
    # the second step shows the same page: its gists come from the cache
    assert records[0].trace and records[0].trace.gists
    assert records[1].diagnostics.gist_cache_hits == len(records[1].trace.gists)  # type: ignore[union-attr]
    manifest = json.loads((out / "manifest.json").read_text())
    assert manifest["model_identity"]["backend"] == "local"
    assert manifest["agent"]["max_lookup"] == 2
    results = json.loads((out / "results.json").read_text())
    assert results["score"]["counts"]["steps_scored"] == 2
    assert "fx-c1" in (out / "report.html").read_text()
    # the same command again resumes: nothing is run twice
    assert main(argv) == 0
    assert "0 steps run, 2 resumed" in capsys.readouterr().out
    assert len(list(ResultStore(out / "results.jsonl").records())) == 2


@pytest.mark.slow
def test_eval_on_real_pages_turned_into_tasks(
    shared: Path, tmp_path: Path, local_model_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    pages = tmp_path / "pages"
    pages.mkdir()
    page = shared / "pages" / "edu__whatuni.com__register.html"
    (pages / page.name).write_bytes(page.read_bytes())
    tool = shared / "tools" / "make_grounding_tasks.py"
    made = subprocess.run(
        [sys.executable, str(tool), str(pages), str(tmp_path / "tasks"), "--per-page", "3"],
        capture_output=True, text=True, timeout=120, check=False,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    data = next((tmp_path / "tasks").glob("*_0.json"))
    out = tmp_path / "run"
    code = main([
        "eval", "--data", str(data), "--out", str(out), "--agent", "raw-html", "--limit", "2",
        "--context-budget", "1536", "--max-lookup", "2", "--model-path", str(local_model_path),
        "--n-ctx", "4096", "--no-progress", "--bootstrap", "50", "--no-gist-cache",
    ])  # fmt: skip
    assert code == 0
    assert "complete:" in capsys.readouterr().out
    results = json.loads((out / "results.json").read_text())
    assert results["status"] == "complete"
    assert results["score"]["counts"]["steps_in_data"] >= 2
    assert results["diagnostics"]["steps"] == results["score"]["counts"]["steps_in_data"]
    assert results["diagnostics"]["mean_compression"] > 1.0  # a long real page, cut to budget
    report = (out / "report.html").read_text()
    assert "default-src 'none'" in report and "<script" not in report.lower()
