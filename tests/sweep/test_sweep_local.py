"""``webagent sweep`` end to end with the embedded model (SmolLM2-135M through llama.cpp) over
a bundled sample task: 2 agents × 2 budgets. The table, PNG, HTML and JSON are written, the
quality axis is the share of steps whose act prompt shows a gold element (the model cannot be
judged) and says so, ``--rescore`` gives the same bytes, and the HTML opens in Chromium."""

from __future__ import annotations

import json
from collections.abc import Iterator
from pathlib import Path

import pytest
from conftest import SAMPLES, open_in_chromium, sweep_argv

from webagent.cli import main
from webagent.model.settings import DEFAULT_LOCAL_MODEL

# four act calls of up to 1024 tokens: seconds alone, minutes on a shared 2-core machine
pytestmark = [pytest.mark.llama, pytest.mark.slow, pytest.mark.timeout(1200)]


@pytest.fixture(scope="module")
def local_sweep(local_model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[Path]:
    """One sweep for the module: the bundled sample's one-step task (keeps four act calls)."""
    root = tmp_path_factory.mktemp("local_sweep")
    tasks = [t for t in json.loads(SAMPLES.read_text()) if len(t["actions"]) == 1]
    data = root / "one_step.json"
    data.write_text(json.dumps(tasks[:1]))
    out = root / "sweep"
    argv = sweep_argv(data, out, "--n-ctx", "2048", "--set", "model.n_threads=2")
    argv += ["--timeout", "900", "--model-path", str(local_model_path)]
    assert main(argv) == 0
    yield out


def test_the_outputs_are_written_and_the_axis_is_gold_shown(local_sweep: Path) -> None:
    out = local_sweep
    results = json.loads((out / "results.json").read_text())
    assert results["quality_axis"] == "gold_shown"
    cells = results["cells"]
    assert [(c["agent"], c["budget"]) for c in cells] == [
        ("raw-html", 768), ("raw-html", 1024), ("gist-only", 768), ("gist-only", 1024),
    ]  # fmt: skip
    for cell in cells:
        assert cell["model"] == DEFAULT_LOCAL_MODEL and cell["status"] == "complete"
        assert cell["steps"] == 1 and cell["gold_shown"] in (0.0, 1.0)
        assert cell["input_tokens_per_step"] > 0 and cell["calls_per_step"] >= 1
        assert (out / "cells" / f"{cell['agent']}@{cell['budget']}" / "calls.jsonl").is_file()
    # more budget, more prompt: raw-html's act prompt grows with the budget
    assert cells[1]["input_tokens_per_step"] > cells[0]["input_tokens_per_step"]
    table = (out / "table.md").read_text()
    assert "ceiling a perfect act model reaches" in table
    assert (out / "sweep.png").read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"


def test_rescore_reproduces_the_table_byte_for_byte(local_sweep: Path) -> None:
    before = {p: (local_sweep / p).read_bytes() for p in ("table.md", "results.json")}
    assert main(["sweep", "--rescore", str(local_sweep)]) == 0
    assert {p: (local_sweep / p).read_bytes() for p in before} == before


def test_the_html_opens_in_chromium_with_its_plot(local_sweep: Path) -> None:
    opened = open_in_chromium(local_sweep / "sweep.html")
    assert opened["errors"] == [] and opened["failed"] == []
    image = opened["image"]
    assert image["complete"] and image["width"] > 0 and image["height"] > 0  # type: ignore[index]
    assert opened["rows"] == 4
    assert "cannot be judged" in str(opened["quality"])
