"""``webagent eval --render``: each step's page goes through the renderer before the agent
sees it; a page that fails to render is pending and named; a resume must render alike; the
``axtree`` agent reads each rendered page's accessibility tree, its ids the data's."""

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
from webagent.contracts import RenderedPage
from webagent.errors import ConfigError, PageError

SCORING = ScoringSettings(bootstrap=20)
BROKEN_STEP = "fx-a2"


def subject(
    raw_folder: Path,
    render: Callable[[str, str], RenderedPage] | None,
    agent: str = "readagent-p",
) -> EvalSubject:
    tasks, _ = load_tasks(raw_folder)
    model = oracle_model(Oracle(tasks))
    settings = AgentSettings(agent=agent, context_budget=2048)  # type: ignore[arg-type]
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

    def render(html: str, name: str) -> RenderedPage:
        seen.append(name)
        if BROKEN_STEP in name:
            raise PageError(f"{name}: Chromium could not render the page: crashed")
        return RenderedPage(html=html)

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
    as_saved = lambda h, _n: RenderedPage(html=h)  # noqa: E731 - a renderer that changes nothing
    again = run_eval(settings_for(raw_folder, out), subject(raw_folder, as_saved))
    assert (again.status, again.steps_run) == ("complete", 1)


def test_rendered_pages_score_like_the_saved_ones(raw_folder: Path, tmp_path: Path) -> None:
    """The authored pages hide nothing: rendered, every gold element is still there."""
    from live.rendering import renderer_or_skip

    plain = run_eval(settings_for(raw_folder, tmp_path / "plain"), subject(raw_folder, None))
    with renderer_or_skip() as renderer:
        rendered = run_eval(
            settings_for(raw_folder, tmp_path / "rendered"),
            subject(raw_folder, renderer.render_page),
        )
    assert (plain.status, rendered.status) == ("complete", "complete")
    scores = [
        RunResults.model_validate_json(o.files.results_json.read_text()).score.overall
        for o in (plain, rendered)
    ]
    assert scores[0] == scores[1]


def test_axtree_reads_each_rendered_page_s_tree_with_the_data_s_ids(
    raw_folder: Path, tmp_path: Path
) -> None:
    """The oracle answers the gold id: every gold element is in the tree, by its own id (one
    authored step has no gold element: no answer can be right there, as on the saved page)."""
    from live.rendering import renderer_or_skip

    with renderer_or_skip() as renderer:

        def render(html: str, name: str) -> RenderedPage:
            return renderer.render_page(html, name, axtree=True)

        outcome = run_eval(
            settings_for(raw_folder, tmp_path / "axtree"), subject(raw_folder, render, "axtree")
        )
    assert outcome.status == "complete"
    manifest = read_manifest(tmp_path / "axtree" / "manifest.json")
    assert manifest is not None and "accessibility tree" in manifest.protocol["observation"]
    records = [json.loads(line) for line in (tmp_path / "axtree" / "results.jsonl").open()]
    assert len(records) == 10
    with_gold = [r for r in records if r["diagnostics"]["gold_ids"]]
    assert len(with_gold) == 9
    for record in with_gold:
        trace = record["trace"]
        assert trace["agent"] == "axtree" and trace["memory"].startswith("RootWebArea ")
        assert "<" not in trace["memory"]  # the tree, not the HTML
        assert record["diagnostics"]["gold_shown"] and record["score"]["step_success"]
        assert record["prediction"]["element_id"] in trace["shown_element_ids"]
