"""``eval --plan``/``act --plan`` on the command line, and a run's plan beside what it spent."""

from __future__ import annotations

from pathlib import Path

import pytest
from eval_oracle import Oracle, oracle_model

from mind2web_eval.data import load_tasks
from mind2web_eval.plan import RunToPlan, plan_beside_run
from mind2web_eval.report.plan import format_plan_vs_spent, plan_vs_spent
from mind2web_eval.runner import EvalSettings, EvalSubject, run_eval
from mind2web_eval.scoring import ScoringSettings
from webagent.agents.registry import AGENT_NAMES, AgentSettings, build_agent
from webagent.cli import main

SAMPLES = Path(__file__).parents[2] / "mind2web_eval" / "samples" / "sample_tasks.json"


@pytest.mark.llama
def test_eval_plan_prints_every_agent_and_runs_nothing(
    tmp_path: Path, local_model_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    argv = ["eval", "--data", str(SAMPLES), "--out", str(out), "--plan", "--no-gist-cache"]
    argv += ["--model-path", str(local_model_path), "--price-in", "1", "--price-out", "2"]
    assert main(argv) == 0
    text = capsys.readouterr().out
    assert "cost plan for 5 steps (no model call was made)" in text
    for agent in AGENT_NAMES:
        assert agent in text
    assert "readagent-p *" in text and "cost" in text
    assert not out.exists()  # nothing run, nothing written


@pytest.mark.llama
def test_act_plan_on_a_sample_page(
    local_model_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = ["act", "--page", "shop", "--task", "Add a tent to the cart", "--plan"]
    assert main([*argv, "--no-gist-cache", "--model-path", str(local_model_path)]) == 0
    text = capsys.readouterr().out
    assert "cost plan for 1 steps" in text and "raw-html" in text


def test_a_negative_price_is_a_clear_error(capsys: pytest.CaptureFixture[str]) -> None:
    argv = ["act", "--page", "shop", "--task", "x", "--plan", "--price-in", "-1"]
    assert main(argv) == 2
    assert "--price-in -1.0: a price cannot be negative" in capsys.readouterr().err


@pytest.mark.parametrize("agent", ["raw-html", "readagent-p"])
def test_the_plan_of_a_run_sits_beside_what_it_spent(
    agent: str, raw_folder: Path, tmp_path: Path
) -> None:
    tasks, _ = load_tasks(raw_folder)
    settings = AgentSettings(agent=agent, context_budget=2048)  # type: ignore[arg-type]
    model = oracle_model(Oracle(tasks))
    out = tmp_path / agent
    plan_beside_run(RunToPlan(settings, model, str(raw_folder), None, None), out)
    assert model.backend.calls == 0  # type: ignore[attr-defined]  # planning called nothing
    subject = EvalSubject(
        agent=build_agent(settings, model),
        agent_settings=settings.manifest(),
        model_settings={},
        model_identity={"backend": "scripted", "model": model.name},
    )
    scoring = ScoringSettings(bootstrap=10)
    run_eval(EvalSettings(data=str(raw_folder), out=out, scoring=scoring, progress=False), subject)
    rows = plan_vs_spent(out)
    assert rows is not None
    total = rows[-1]
    assert total["phase"] == "all" and total["steps"] == "10 run / 10 planned"
    act = next(r for r in rows if r["phase"] == "act")
    assert act["calls_planned"] == 10 and act["calls_spent"] >= 10
    if agent == "raw-html":  # no gists, no look-up: the act prompts are the planned ones
        assert act["input_tokens_planned"] == act["input_tokens_spent"]
    assert "plan beside spent (10 run / 10 planned)" in format_plan_vs_spent(rows)
    assert plan_vs_spent(tmp_path / "no-run") is None
