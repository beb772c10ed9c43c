"""A sweep over budgets asks each budget its own prompts (issue 40, item 1): with the batch
backend, on a page longer than every budget, each step gets one request per budget, larger
with the budget, and every cell's manifest records the budget it used."""

from __future__ import annotations

import json
import re
from collections import defaultdict
from pathlib import Path

import pytest
from long_task import write_long_task

from webagent.cli import main
from webagent.cli.batch import EXIT_WAITING
from webagent.model.batch_rounds import BatchFolder
from webagent.tokens import estimate_tokens

SAMPLES = Path(__file__).parents[2] / "mind2web_eval" / "samples" / "sample_tasks.json"
BUDGETS = (8192, 16384, 32768)
_PREVIOUS = re.compile(r"Previous actions:\n(.*?)\n\n", re.S)


def test_a_batch_sweep_writes_each_budget_its_own_requests(tmp_path: Path) -> None:
    data = write_long_task(tmp_path)
    out = tmp_path / "sweep"
    argv = ["sweep", "--data", str(data), "--out", str(out), "--agents", "raw-html"]
    argv += ["--budgets", "8k,16k,32k", "--backend", "batch", "--model", "gpt-4o-mini"]
    argv += ["--token-counter", "estimate", "--no-gist-cache", "--no-progress"]
    assert main([*argv, "--bootstrap", "10"]) == EXIT_WAITING
    folder = BatchFolder(out / "batch")
    by_step: dict[str, list[int]] = defaultdict(list)
    for round_ in folder.waiting():
        for line in (folder.path / round_.file).read_text().splitlines():
            messages = json.loads(line)["body"]["messages"]
            previous = _PREVIOUS.search(messages[-1]["content"])
            assert previous is not None
            by_step[previous.group(1)].append(sum(estimate_tokens(m["content"]) for m in messages))
    assert len(by_step) == 2  # the task's two steps
    for sizes in by_step.values():
        assert len(sizes) == len(set(sizes)) == 3  # three different requests a step
        low, middle, high = sorted(sizes)
        assert low <= 8192 < middle <= 16384 < high <= 32768  # each as large as its budget
    for budget in BUDGETS:
        manifest = json.loads((out / "cells" / f"raw-html@{budget}" / "manifest.json").read_text())
        assert manifest["budget"]["context_budget"] == budget
        assert manifest["budget"]["context_window"] == 128000
        assert manifest["budget"]["window_source"].startswith("the table of known models")


def test_a_budget_over_the_window_stops_the_sweep_before_any_cell_runs(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "sweep"
    argv = ["sweep", "--data", str(SAMPLES), "--out", str(out), "--agents", "raw-html"]
    argv += ["--budgets", "8k,200k", "--backend", "batch", "--model", "gpt-4o-mini"]
    assert main([*argv, "--token-counter", "estimate", "--no-gist-cache"]) == 2
    err = capsys.readouterr().err
    assert "context budget 204800 is over the context window of gpt-4o-mini: 128000" in err
    assert not (out / "cells").exists()  # the 8K cell was not run first
