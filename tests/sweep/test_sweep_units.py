"""The sweep's parts without a model: its spec, its folder, its table, its bad inputs, its exit
codes (against a fake endpoint that fails every call)."""

from __future__ import annotations

from pathlib import Path

import pytest
from conftest import SAMPLES, sweep_argv
from fakes.openai_server import FakeOpenAIServer

from mind2web_eval.sweep.spec import build_spec, open_spec, parse_budgets
from mind2web_eval.sweep.table import Metric, SweepRow, markdown_table, quality_axis
from webagent.cli import main
from webagent.errors import ConfigError


def test_budgets_are_token_counts_or_k() -> None:
    assert parse_budgets("4096, 2k,16K") == (4096, 2048, 16384)
    with pytest.raises(ConfigError, match=r"--budgets: 'lots' is not a token count"):
        parse_budgets("2048,lots")


def test_a_bad_spec_is_one_line_naming_the_field() -> None:
    with pytest.raises(ConfigError, match=r"budgets: .*budget 100 is under 512"):
        build_spec(data="d", agents=("raw-html",), budgets=(100,))
    with pytest.raises(ConfigError, match=r"agents: .*an agent is named twice"):
        build_spec(data="d", agents=("raw-html", "raw-html"), budgets=(1024,))


def test_cells_run_agent_by_agent_budgets_rising() -> None:
    spec = build_spec(data="d", agents=("b", "a"), budgets=(4096, 2048))
    assert [c.name for c in spec.cells()] == ["b@2048", "b@4096", "a@2048", "a@4096"]


def test_a_folder_holding_another_sweep_is_refused(tmp_path: Path) -> None:
    spec = build_spec(data="d", agents=("raw-html",), budgets=(1024,))
    open_spec(tmp_path, spec)
    open_spec(tmp_path, spec)  # the same sweep: resumed
    other = spec.model_copy(update={"budgets": (1024, 2048)})
    with pytest.raises(ConfigError, match=r"holds a sweep with other settings \(budgets differ\)"):
        open_spec(tmp_path, other)


def test_the_table_row_holds_scores_with_intervals_cost_and_gold_shown() -> None:
    row = SweepRow(
        agent="raw-html", budget=2048, status="complete", model="m", tasks=3, steps=5,
        step_sr=Metric(value=0.25, low=0.0, high=0.5), element_acc=Metric(value=0.5),
        op_f1=Metric(value=0.75, low=0.5, high=1.0), input_tokens_per_step=1234.4,
        output_tokens_per_step=12.25, calls_per_step=1.5, usd_per_1k_steps=3.8865,
        cached_input_share=0.25, compression_rate=0.5, gold_shown=0.8,
    )  # fmt: skip
    lines = markdown_table([row]).splitlines()
    assert lines[2] == (
        "| raw-html | 2048 | 5 | 25.0 [0.0, 50.0] | 50.0 | 75.0 [50.0, 100.0] | 1,234 | 12.2 "
        "| 1.50 | 3.89 (25.0 %) | 50.0 % | 80.0 % | complete |"
    )


def test_auto_quality_is_gold_shown_for_the_embedded_model_only() -> None:
    spec = build_spec(data="d", agents=("raw-html",), budgets=(1024,))
    judged = SweepRow(agent="raw-html", budget=1024, status="complete", model="gpt-x")
    embedded = judged.model_copy(update={"model": "SmolLM2-135M-Instruct-Q4_1"})
    assert quality_axis(spec, [judged]) == "step_sr"
    assert quality_axis(spec, [judged, embedded]) == "gold_shown"
    assert quality_axis(spec.model_copy(update={"quality": "step_sr"}), [embedded]) == "step_sr"


@pytest.mark.parametrize(
    ("argv", "message"),
    [
        (["--agents", "raw-html,nope", "--budgets", "1024"], "--agents: unknown agent 'nope'"),
        (["--agents", "raw-html"], "sweep needs --budgets"),
        (["--agents", "raw-html", "--budgets", "1024", "--agent", "raw-html"], "not --agent"),
    ],
)
def test_bad_command_lines_are_one_line_errors(
    argv: list[str], message: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    code = main(["sweep", "--data", str(SAMPLES), "--out", str(tmp_path / "s"), *argv])
    err = capsys.readouterr().err.strip()
    assert code == 2 and message in err and len(err.splitlines()) == 1


def test_rescore_of_a_folder_that_is_no_sweep(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["sweep", "--rescore", str(tmp_path)]) == 2
    assert "is not a sweep folder (no sweep.json)" in capsys.readouterr().err


def test_a_sweep_and_an_eval_stopped_by_max_errors_exit_alike(tmp_path: Path) -> None:
    """The same state, the same exit code: a cell ended by --max-errors is 3 (aborted) in
    both commands, as a cell left incomplete is 4 in both."""
    with FakeOpenAIServer([], default="500") as fake:
        model = ["--backend", "openai", "--base-url", fake.base_url, "--model", "fake"]
        model += ["--set", "model.max_retries=0", "--max-errors", "1"]
        sweep = sweep_argv(SAMPLES, tmp_path / "sweep", *model)
        sweep[sweep.index("--agents") + 1], sweep[sweep.index("--budgets") + 1] = "raw-html", "768"
        assert main(sweep) == 3
        evaluation = ["eval", "--data", str(SAMPLES), "--out", str(tmp_path / "eval")]
        evaluation += ["--context-budget", "1024"]  # the fake reports no window
        assert main([*evaluation, "--agent", "raw-html", "--no-progress", *model]) == 3
