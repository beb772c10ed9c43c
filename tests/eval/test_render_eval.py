"""``webagent eval --render``: each step's page goes through the renderer before the agent
sees it; a page that fails to render is pending and named; a resume must render alike."""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest
from eval_oracle import Oracle, oracle_model

from mind2web_eval.data import load_tasks
from mind2web_eval.finalize import RunResults
from mind2web_eval.manifest import read_manifest
from mind2web_eval.runner import EvalSettings, EvalSubject, run_eval
from mind2web_eval.scoring import ScoringSettings
from webagent.agents.registry import AgentSettings, build_agent
from webagent.errors import ConfigError, PageError

SCORING = ScoringSettings(bootstrap=20)
BROKEN_STEP = "fx-a2"


def subject(raw_folder: Path, render: Callable[[str, str], str] | None) -> EvalSubject:
    tasks, _ = load_tasks(raw_folder)
    model = oracle_model(Oracle(tasks))
    settings = AgentSettings(agent="readagent-p", context_budget=2048)  # type: ignore[arg-type]
    return EvalSubject(
        agent=build_agent(settings, model),
        agent_settings=settings.manifest(),
        model_settings={"backend": "scripted"},
        model_identity={"backend": "scripted", "model": model.name},
        render=render,
    )


def settings_for(raw_folder: Path, out: Path) -> EvalSettings:
    return EvalSettings(data=str(raw_folder), out=out, scoring=SCORING, progress=False)


def test_a_page_that_fails_to_render_is_pending_and_named(raw_folder: Path, tmp_path: Path) -> None:
    seen: list[str] = []

    def render(html: str, name: str) -> str:
        seen.append(name)
        if BROKEN_STEP in name:
            raise PageError(f"{name}: Chromium could not render the page: crashed")
        return html

    out = tmp_path / "run"
    outcome = run_eval(settings_for(raw_folder, out), subject(raw_folder, render))
    assert outcome.status == "incomplete"
    assert outcome.pending == {BROKEN_STEP: "page_error"}
    assert len(seen) == 10  # every step's page, none left as saved
    records = [json.loads(line) for line in (out / "results.jsonl").open()]
    broken = next(r for r in records if r["action_uid"] == BROKEN_STEP)
    assert f"the page of step {BROKEN_STEP} (task fx-shop-0001)" in broken["error"]
    manifest = read_manifest(out / "manifest.json")
    assert manifest is not None and manifest.render is True
    assert "renders it offline" in manifest.protocol["observation"]

    with pytest.raises(ConfigError, match="render: was True, now False"):
        run_eval(settings_for(raw_folder, out), subject(raw_folder, None))
    again = run_eval(settings_for(raw_folder, out), subject(raw_folder, lambda h, _n: h))
    assert (again.status, again.steps_run) == ("complete", 1)


def test_rendered_pages_score_like_the_saved_ones(raw_folder: Path, tmp_path: Path) -> None:
    """The authored pages hide nothing: rendered, every gold element is still there."""
    from live.rendering import renderer_or_skip

    plain = run_eval(settings_for(raw_folder, tmp_path / "plain"), subject(raw_folder, None))
    with renderer_or_skip() as renderer:
        rendered = run_eval(
            settings_for(raw_folder, tmp_path / "rendered"),
            subject(raw_folder, renderer.render),
        )
    assert (plain.status, rendered.status) == ("complete", "complete")
    scores = [
        RunResults.model_validate_json(o.files.results_json.read_text()).score.overall
        for o in (plain, rendered)
    ]
    assert scores[0] == scores[1]
