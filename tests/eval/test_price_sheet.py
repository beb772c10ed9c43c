"""Dollars on the command line: ``--price-sheet`` for ``eval``, ``sweep`` and ``--plan``,
priced from the calls a run recorded, the provider's cached tokens as its endpoint reported
them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer

from webagent.cli import main

SAMPLES = Path(__file__).parents[2] / "mind2web_eval" / "samples" / "sample_tasks.json"
#: a sheet of one's own: USD per 1M tokens, large enough to read on a 3-step run
SHEET = """[models.hand]
input = 2000.0
cached_input = 500.0
output = 8000.0
batch_discount = 0.5
source = "this test"
"""
REPLY = json.dumps({"element_id": "1006", "op": "TYPE", "value": "waterproof hiking boots"})


def three_steps(folder: Path) -> Path:
    """The sample tasks' first (2 steps) and third (1 step): 3 steps, so 3 act calls."""
    tasks = json.loads(SAMPLES.read_text(encoding="utf-8"))
    path = folder / "three_steps.json"
    path.write_text(json.dumps([tasks[0], tasks[2]]), encoding="utf-8")
    return path


def endpoint(fake: FakeOpenAIServer) -> list[str]:
    # the fake reports no context window: the test says what it is
    return [
        "--backend", "openai", "--base-url", fake.base_url, "--model", "fake",
        "--set", "model.context_window=8192",
        "--token-counter", "estimate", "--repair-attempts", "0", "--bootstrap", "10",
        "--no-progress",
    ]  # fmt: skip


def by_hand_per_1k_steps(batch: bool = False) -> float:
    """Three recorded calls, each 11 prompt tokens of which the endpoint said 8 were cached,
    and 3 completion tokens (the fake's usage), at the sheet above, per 1,000 of 3 steps."""
    per_call = (11 - 8) * 2000.0 + 8 * 500.0 + 3 * 8000.0  # = 34,000 (USD per 1M tokens)
    usd = 3 * per_call / 1e6  # = 0.102
    return 1000 * usd / 3 * (0.5 if batch else 1.0)  # = 34.0 per 1,000 steps


def test_eval_prices_its_recorded_calls_as_computed_by_hand(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    sheet = tmp_path / "sheet.toml"
    sheet.write_text(SHEET, encoding="utf-8")
    out = tmp_path / "run"
    argv = ["eval", "--data", str(three_steps(tmp_path)), "--out", str(out), "--agent", "raw-html"]
    with FakeOpenAIServer(reply=REPLY, cached_tokens=8) as fake:
        assert main([*argv, *endpoint(fake), "--price-sheet", f"{sheet}:hand"]) == 0
        assert len(fake.chat_requests) == 3
    cost = json.loads((out / "cost.json").read_text(encoding="utf-8"))
    assert cost["usd_per_1k_steps"] == pytest.approx(by_hand_per_1k_steps()) == 34.0
    assert cost["batch_usd_per_1k_steps"] == pytest.approx(by_hand_per_1k_steps(batch=True))
    assert (cost["steps"], cost["calls"], cost["calls_measured"]) == (3, 3, 3)
    assert cost["bill"]["cached_input_tokens"] == 24
    assert "USD 34.00 per 1,000 steps (batch API: 17.00); 72.7 %" in capsys.readouterr().out
    results = json.loads((out / "results.json").read_text(encoding="utf-8"))
    assert results["diagnostics"]["tokens_by_phase"]["act"]["cached_input_tokens"] == 24


def test_the_sweep_table_shows_the_same_figure(tmp_path: Path) -> None:
    sheet = tmp_path / "sheet.toml"
    sheet.write_text(SHEET, encoding="utf-8")
    out = tmp_path / "sweep"
    argv = ["sweep", "--data", str(three_steps(tmp_path)), "--out", str(out)]
    argv += ["--agents", "raw-html", "--budgets", "2048", "--price-sheet", f"{sheet}:hand"]
    with FakeOpenAIServer(reply=REPLY, cached_tokens=8) as fake:
        assert main([*argv, *endpoint(fake)]) == 0
    cell = json.loads((out / "results.json").read_text(encoding="utf-8"))["cells"][0]
    assert cell["usd_per_1k_steps"] == pytest.approx(by_hand_per_1k_steps())
    assert "| 34.00 (72.7 %) |" in (out / "table.md").read_text(encoding="utf-8")


def test_the_plan_is_priced_at_a_model_of_the_sheet(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["eval", "--data", str(three_steps(tmp_path)), "--out", str(tmp_path / "p"), "--plan"]
    argv += ["--backend", "batch", "--model", "gpt-4.1-mini", "--no-gist-cache"]
    assert main([*argv, "--price-sheet", "gpt-4.1-mini"]) == 0
    text = capsys.readouterr().out
    assert "USD/1k steps" in text.splitlines()[1]
    assert "cost at gpt-4.1-mini: USD 0.4 input, cached input 0.1, 1.6 output per 1M" in text
    assert "no prompt cache assumed (an upper bound)" in text
    assert not (tmp_path / "p").exists()


@pytest.mark.parametrize(
    "argv",
    [
        ["eval", "--data", str(SAMPLES), "--out", "never-written", "--agent", "raw-html"],
        ["act", "--page", "shop", "--task", "Add a tent to the cart", "--plan"],
    ],
)
def test_an_unknown_model_of_the_sheet_is_one_line_and_exit_2(
    argv: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main([*argv, "--price-sheet", "gpt-9"]) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert len(err) == 1 and "--price-sheet gpt-9: no model 'gpt-9' in the price sheet" in err[0]
    assert "gpt-4.1-mini" in err[0] and not Path("never-written").exists()
