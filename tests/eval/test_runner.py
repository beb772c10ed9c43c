"""`webagent eval`'s runner against a scripted model: scoring, resume, errors, manifests."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_oracle import Oracle, oracle_model

from mind2web_eval.aggregate import build_report
from mind2web_eval.data import load_tasks
from mind2web_eval.finalize import RunResults
from mind2web_eval.predictions import load_predictions
from mind2web_eval.runner import EvalSettings, EvalSubject, run_eval
from mind2web_eval.scoring import ScoringSettings, gold_steps, score_all
from mind2web_eval.store import ResultStore
from webagent.agents.registry import AgentSettings, build_agent
from webagent.errors import ConfigError, FatalModelError
from webagent.gist.cache import GistCache
from webagent.model.client import Model
from webagent.model.retry import RetryPolicy
from webagent.model.scripted import ScriptedBackend

SCORING = ScoringSettings(bootstrap=50)


def subject(
    model: Model, agent: str = "readagent-p", cache: GistCache | None = None
) -> EvalSubject:
    # the pages fit 2048 tokens whole: gist them anyway (the run is about gists and look-up)
    settings = AgentSettings(agent=agent, context_budget=2048, read_whole_page=False)  # type: ignore[arg-type]
    return EvalSubject(
        agent=build_agent(settings, model, cache),
        agent_settings=settings.manifest(),
        model_settings={"backend": "scripted", "api_key_set": False},
        model_identity={"backend": "scripted", "model": model.name},
        gist_cache=cache,
    )


def settings_for(data: Path, out: Path, **extra: object) -> EvalSettings:
    return EvalSettings(data=str(data), out=out, scoring=SCORING, progress=False, **extra)  # type: ignore[arg-type]


def stored_uids(run_dir: Path) -> list[str]:
    return [json.loads(line)["action_uid"] for line in (run_dir / "results.jsonl").open()]


def test_run_scores_equal_the_score_command(raw_folder: Path, tmp_path: Path) -> None:
    tasks, summary = load_tasks(raw_folder)
    oracle = Oracle(tasks, wrong={"fx-fly-0002"})
    cache = GistCache(tmp_path / "gists.sqlite")
    outcome = run_eval(
        settings_for(raw_folder, tmp_path / "run"), subject(oracle_model(oracle), cache=cache)
    )
    assert (outcome.status, outcome.steps_run, outcome.steps_resumed) == ("complete", 10, 0)
    results = RunResults.model_validate_json(outcome.files.results_json.read_text())
    # the same predictions through the `webagent score` path
    predictions, issues = load_predictions(outcome.files.predictions)
    assert issues == [] and len(predictions) == 10
    gold = [g for t in tasks for g in gold_steps(t)]
    scores, unknown = score_all(gold, predictions, SCORING)
    assert build_report(scores, SCORING, unknown) == results.score
    # the oracle is right on shop and join (b2 has no gold element) and wrong on fly
    overall = results.score.overall
    assert overall.macro.element_acc == pytest.approx((1 + 0 + 1) / 3)
    assert overall.task_sr == pytest.approx(2 / 3)
    classes = results.diagnostics.error_classes
    assert classes["ok"] == 6
    assert sum(classes.values()) == 10
    assert results.diagnostics.lookup_recall is not None
    assert results.agent == "readagent-p" and results.model == "oracle"
    manifest = json.loads((tmp_path / "run" / "manifest.json").read_text())
    assert manifest["status"] == "complete"
    assert manifest["data"]["sha256"] == summary.sha256
    assert "act" in manifest["prompts"] and manifest["packages"]["pydantic"]
    assert manifest["protocol"]["scoring"]["missing_gold"] == "fail"
    assert manifest["gist_cache"]["misses"] > 0
    assert "api_key" not in json.dumps(manifest["model"]).replace("api_key_set", "")
    assert outcome.files.report_html.stat().st_size > 1000


def test_resume_runs_only_missing_steps(raw_folder: Path, tmp_path: Path) -> None:
    tasks, _ = load_tasks(raw_folder)
    oracle = Oracle(tasks)
    model = oracle_model(oracle)
    out = tmp_path / "run"
    first = run_eval(settings_for(raw_folder, out, limit=1), subject(model, "raw-html"))
    assert (first.steps_run, oracle.act_calls) == (4, 4)
    second = run_eval(settings_for(raw_folder, out), subject(model, "raw-html"))
    assert (second.steps_run, second.steps_resumed, oracle.act_calls) == (6, 4, 10)
    third = run_eval(settings_for(raw_folder, out), subject(model, "raw-html"))
    assert (third.steps_run, third.steps_resumed, oracle.act_calls) == (0, 10, 10)
    assert sorted(stored_uids(out)) == sorted(g.action_uid for t in tasks for g in gold_steps(t))
    manifest = json.loads((out / "manifest.json").read_text())
    assert [s["steps_run"] for s in manifest["sessions"]] == [4, 6, 0]


def test_resume_with_another_agent_is_refused(raw_folder: Path, tmp_path: Path) -> None:
    tasks, _ = load_tasks(raw_folder)
    model = oracle_model(Oracle(tasks))
    run_eval(settings_for(raw_folder, tmp_path, limit=1), subject(model, "raw-html"))
    with pytest.raises(ConfigError, match="holds a run with other settings"):
        run_eval(settings_for(raw_folder, tmp_path), subject(model, "gist-only"))


def test_a_run_from_before_a_setting_was_added_resumes(raw_folder: Path, tmp_path: Path) -> None:
    """A run recorded before an agent setting existed resumes under its default, and only
    then: the same run with the setting changed is refused."""
    tasks, _ = load_tasks(raw_folder)
    model = oracle_model(Oracle(tasks))
    run_eval(settings_for(raw_folder, tmp_path, limit=1), subject(model, "raw-html"))
    path = tmp_path / "manifest.json"
    manifest = json.loads(path.read_text())
    del manifest["agent"]["gist_ids"]  # as written before the setting was added
    path.write_text(json.dumps(manifest))
    resumed = run_eval(settings_for(raw_folder, tmp_path), subject(model, "raw-html"))
    assert resumed.steps_resumed == 4 and resumed.steps_run == 6
    manifest["agent"]["gist_ids"] = False  # a run recorded with another value of it
    path.write_text(json.dumps(manifest))
    with pytest.raises(ConfigError, match="gist_ids"):
        run_eval(settings_for(raw_folder, tmp_path), subject(model, "raw-html"))


def test_max_errors_stops_a_failing_run_and_a_rerun_finishes(
    raw_folder: Path, tmp_path: Path
) -> None:
    broken = Model(
        ScriptedBackend(lambda r: FatalModelError("HTTP 401: bad key"), name="oracle"),
        RetryPolicy(max_retries=0),
    )
    out = tmp_path / "run"
    outcome = run_eval(settings_for(raw_folder, out, max_errors=2), subject(broken, "raw-html"))
    assert outcome.status == "aborted"
    assert outcome.run_errors == 2
    results = RunResults.model_validate_json(outcome.files.results_json.read_text())
    assert results.status == "aborted"
    assert results.score.counts.missing_predictions == 10 - len(stored_uids(out))
    assert results.diagnostics.error_classes == {"model_error": len(stored_uids(out))}
    failed = stored_uids(out)
    assert results.attempts.steps_pending == 10  # a model error is not an answer
    assert outcome.pending == {uid: "model_error" for uid in failed} | {
        uid: "not_run" for uid in outcome.pending if uid not in failed
    }
    # the failed attempts stay recorded (audit); a fixed model runs them again and the rest
    tasks, _ = load_tasks(raw_folder)
    again = run_eval(
        settings_for(raw_folder, out), subject(oracle_model(Oracle(tasks)), "raw-html")
    )
    assert (again.status, again.steps_run, again.steps_resumed, again.pending) == (
        "complete", 10, 0, {}
    )  # fmt: skip
    assert sorted(stored_uids(out)) == sorted(failed + sorted({*stored_uids(out)}))
    results = RunResults.model_validate_json(again.files.results_json.read_text())
    assert results.attempts.steps_pending == 0
    assert results.attempts.histogram == {1: 10 - len(failed), 2: len(failed)}
    classes = results.diagnostics.error_classes  # of each step's final attempt
    assert "model_error" not in classes and sum(classes.values()) == 10


def test_concurrent_steps_each_run_once(raw_folder: Path, tmp_path: Path) -> None:
    tasks, _ = load_tasks(raw_folder)
    oracle = Oracle(tasks, delay_s=0.01)
    outcome = run_eval(
        settings_for(raw_folder, tmp_path, workers=4),
        subject(oracle_model(oracle, max_concurrency=4), "raw-html"),
    )
    assert outcome.steps_run == 10
    uids = stored_uids(tmp_path)
    assert len(uids) == len(set(uids)) == 10
    assert oracle.act_calls == 10


def test_step_without_page_is_recorded(raw_folder: Path, tmp_path: Path) -> None:
    task = json.loads((raw_folder / "test_website" / "test_website_0.json").read_text())
    del task[0]["actions"][1]["cleaned_html"]
    data = tmp_path / "tasks.json"
    data.write_text(json.dumps(task))
    tasks, _ = load_tasks(data)
    outcome = run_eval(
        settings_for(data, tmp_path / "run"), subject(oracle_model(Oracle(tasks)), "raw-html")
    )
    records = {r.action_uid: r for r in ResultStore(outcome.files.results_jsonl).records()}
    assert records["fx-c2"].diagnostics.error_class == "no_html"
    assert records["fx-c2"].prediction.error_class == "no_html"
    assert records["fx-c1"].diagnostics.error_class == "ok"


def test_torn_last_line_is_set_aside(tmp_path: Path, raw_folder: Path) -> None:
    tasks, _ = load_tasks(raw_folder)
    run_eval(
        settings_for(raw_folder, tmp_path, limit=1),
        subject(oracle_model(Oracle(tasks)), "raw-html"),
    )
    path = tmp_path / "results.jsonl"
    lines = path.read_text().splitlines(keepends=True)
    path.write_text("".join(lines[:2]) + lines[2][:50])  # killed in the middle of line 3
    store = ResultStore(path)
    assert store.torn_bytes == 50
    assert len(store) == 2
    assert (tmp_path / "results.jsonl.torn").read_text() == lines[2][:50] + "\n"
    assert path.read_text() == "".join(lines[:2])
