"""A context budget is used as asked or refused, and ``--plan`` answers as its printout says it
assumes, at any budget, without a network for ``--token-counter estimate`` (issue 40: items
1, 4, 6 and 7). Every test goes through the command line (``webagent.cli.main``)."""

from __future__ import annotations

import json
import re
from pathlib import Path
from typing import Any

import pytest
from fakes.openai_server import closed_port_url
from long_task import write_long_task

from webagent.cli import main
from webagent.cli.batch import EXIT_WAITING
from webagent.model import server_extras

SAMPLES = Path(__file__).parents[2] / "mind2web_eval" / "samples" / "sample_tasks.json"
#: the batch backend for a model the table of known models holds (gpt-4o-mini: 128,000)
BATCH = ["--backend", "batch", "--model", "gpt-4o-mini", "--token-counter", "estimate"]


def plan_rows(text: str) -> dict[str, list[str]]:
    """The plan table's rows by agent: steps, calls/step, in tok/step, ... as printed."""
    rows = {}
    for line in text.splitlines():
        cells = re.split(r"\s{2,}", line.strip())
        if len(cells) >= 8 and cells[1].isdigit():
            rows[cells[0].removesuffix(" *")] = cells[1:]
    return rows


def number(cell: str) -> float:
    return float(cell.replace(",", ""))


def run(argv: list[str], capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    code = main(argv)
    captured = capsys.readouterr()
    return code, captured.out, captured.err


def plan_argv(data: Path, out: Path, *extra: str) -> list[str]:
    return ["eval", "--data", str(data), "--out", str(out), "--plan", "--no-gist-cache", *extra]


# --- 1. a budget is used as asked or refused ------------------------------------------------
def test_a_plan_at_32k_is_not_the_plan_at_8k(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_long_task(tmp_path)
    tokens, printed = {}, {}
    for budget in (8192, 16384, 32768):
        argv = plan_argv(data, tmp_path / "p", *BATCH, "--context-budget", str(budget))
        code, printed[budget], _ = run([*argv, "--agent", "raw-html"], capsys)
        assert code == 0
        tokens[budget] = number(plan_rows(printed[budget])["raw-html"][2])
    assert tokens[8192] < tokens[16384] < tokens[32768] <= 32768
    for budget, out in printed.items():  # the plan says which budget and window it used
        assert f"context budget {budget:,} tokens a prompt (as asked)" in out
        assert "gpt-4o-mini: 128,000 tokens (the table of known models, entry gpt-4o*" in out


def test_a_budget_over_the_window_is_refused_naming_both_and_the_setting(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = plan_argv(SAMPLES, tmp_path / "p", *BATCH, "--context-budget", "200000")
    code, out, err = run(argv, capsys)
    assert code == 2 and not out
    assert "context budget 200000 is over the context window of gpt-4o-mini: 128000" in err
    assert "--set model.context_window=N" in err and len(err.strip().splitlines()) == 1
    stated = [*argv, "--set", "model.context_window=8192", "--context-budget", "32768"]
    code, _, err = run(stated, capsys)
    assert code == 2
    assert "context budget 32768 is over the context window of gpt-4o-mini: 8192" in err
    assert "from the model.context_window setting" in err


@pytest.mark.llama
def test_the_local_model_refuses_a_budget_over_its_n_ctx(
    local_model_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["act", "--page", "shop", "--task", "Add a tent to the cart", "--plan"]
    argv += ["--no-gist-cache", "--model-path", str(local_model_path), "--n-ctx", "4096"]
    code, out, err = run([*argv, "--context-budget", "100000000"], capsys)
    assert code == 2 and not out
    assert "context budget 100000000 is over the context window of" in err
    assert "4096 tokens, from n_ctx" in err and "--n-ctx N" in err


def test_a_window_nothing_knows_takes_the_budget_asked_and_says_so(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    mystery = ["--backend", "batch", "--model", "my-finetune", "--token-counter", "estimate"]
    out_dir = tmp_path / "run"
    argv = ["eval", "--data", str(SAMPLES), "--out", str(out_dir), "--agent", "raw-html"]
    argv += ["--no-gist-cache", "--no-progress", "--limit", "1", *mystery]
    code, _, err = run([*argv, "--context-budget", "16384"], capsys)
    assert code == EXIT_WAITING  # the requests are written for the Batch API
    budget = json.loads((out_dir / "manifest.json").read_text())["budget"]
    assert budget["context_budget"] == 16384 and budget["context_window"] is None
    assert "my-finetune is not in the table of known models" in budget["window_source"]
    code, _, err = run(plan_argv(SAMPLES, tmp_path / "p", *mystery), capsys)  # no budget
    assert code == 2
    assert "no context budget for my-finetune" in err
    assert "--context-budget N" in err and "--set model.context_window=N" in err


# --- 4. the plan charges no repair its assumptions exclude ----------------------------------
def test_the_plan_charges_no_repair_at_a_large_budget(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    data = write_long_task(tmp_path)
    argv = plan_argv(data, tmp_path / "p", *BATCH, "--context-budget", "32768")
    code, out, _ = run([*argv, "--set", "model.context_window=131072"], capsys)
    assert code == 0
    raw = plan_rows(out)["raw-html"]
    assert "the act answer needs no repair" in out
    assert number(raw[1]) == 1.0  # one act call a step, not a repair beside it
    assert number(raw[2]) <= 32768  # and a prompt within the budget


# --- 6. what can run at a small budget is planned; what cannot is marked ---------------------
@pytest.mark.parametrize("command", ["eval", "act"])
def test_a_small_budget_plans_what_can_run_and_marks_what_cannot(
    command: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    if command == "eval":
        argv = plan_argv(SAMPLES, tmp_path / "p", *BATCH)
    else:
        argv = ["act", "--page", "shop", "--task", "Add a tent", "--plan", "--no-gist-cache"]
        argv += BATCH
    code, out, err = run([*argv, "--context-budget", "1024"], capsys)
    assert code == 0, err
    rows = plan_rows(out)
    assert number(rows["raw-html"][1]) == 1.0  # raw HTML runs at 1024: planned
    assert rows["readagent-p"][1] == "cannot run"
    assert "readagent-p cannot run: --context-budget 1024 is too small for readagent-p" in out
    least = re.search(r"need --context-budget (\d+) or more", out)
    assert least is not None and int(least.group(1)) > 1024
    assert "reserved_tokens" not in out and "context_window=" not in out


# --- 7. --plan with --token-counter estimate asks no server ----------------------------------
def _no_network(*args: Any, **kwargs: Any) -> Any:
    raise AssertionError(f"the plan made a request: {args[0]}")


def test_a_plan_with_the_estimate_needs_no_server_and_no_key(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(server_extras, "http_body", _no_network)
    monkeypatch.delenv("OPENAI_API_KEY", raising=False)
    server = ["--backend", "openai", "--base-url", closed_port_url(), "--token-counter", "estimate"]
    argv = plan_argv(SAMPLES, tmp_path / "p", *server, "--model", "meta-llama/Llama-3.1-8B")
    code, out, err = run(argv, capsys)
    assert code == 0, err
    assert "Llama-3.1-8B: 131,072 tokens (the table of known models" in out
    openai = ["--backend", "openai", "--model", "gpt-4o-mini", "--token-counter", "estimate"]
    code, out, err = run(plan_argv(SAMPLES, tmp_path / "p", *openai), capsys)
    assert code == 0, err  # api.openai.com, and no API key: a plan calls no model
    unknown = plan_argv(SAMPLES, tmp_path / "p", *server, "--model", "my-finetune")
    code, out, err = run(unknown, capsys)
    assert code == 2 and len(err.strip().splitlines()) == 1
    assert "my-finetune is not in the table of known models" in err
    assert "--set model.context_window=N" in err
    stated = [*unknown, "--set", "model.context_window=16384"]
    code, out, err = run(stated, capsys)
    assert code == 0 and "16,384 tokens (the model.context_window setting)" in out
