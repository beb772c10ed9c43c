"""Fault suite for offline evaluation: a failing endpoint, junk answers and a full disk.

Every run must end. A failing endpoint is an outage, not a wrong answer: the run ends
`incomplete` with every step it tried recorded once as `model_error` and pending (the same
command runs them again). Junk answers are answers (the run is `complete`). A run that
stopped on a write error must resume to completion without counting a step twice.
"""

from __future__ import annotations

import errno
import json
import os
from pathlib import Path
from typing import Any

import pytest
from fakes.openai_server import FakeOpenAIServer, closed_port_url

from mind2web_eval.runner import EvalSettings, EvalSubject, run_eval
from mind2web_eval.scoring import ScoringSettings
from mind2web_eval.store import ResultWriteError
from webagent.agents.registry import AgentSettings, build_agent
from webagent.model.client import Model
from webagent.model.factory import build_model
from webagent.model.scripted import ScriptedBackend
from webagent.model.settings import ModelSettings

DATA = Path(__file__).resolve().parents[1] / "data" / "mind2web" / "raw"


def http_model(base_url: str) -> Model:
    settings = ModelSettings(
        backend="openai",
        model="fake-model",
        base_url=base_url,
        max_retries=1,
        timeout_s=1.0,
        context_window=4096,
    )
    return build_model(settings, sleep=lambda _s: None)


def evaluate(
    model: Model, out: Path, agent: str = "raw-html", status: str = "complete", **extra: Any
) -> list[dict[str, Any]]:
    # the pages fit 2048 tokens whole: gist them anyway, so ReadAgent reaches its look-up
    settings = AgentSettings(agent=agent, context_budget=2048, read_whole_page=False)  # type: ignore[arg-type]
    subject = EvalSubject(
        agent=build_agent(settings, model),
        agent_settings=settings.manifest(),
        model_settings={"backend": "test"},
        model_identity={"model": model.name},
    )
    run = EvalSettings(
        data=str(DATA), out=out, scoring=ScoringSettings(bootstrap=20), progress=False, **extra
    )
    outcome = run_eval(run, subject)
    assert outcome.status == status
    if status == "incomplete":  # every step of the data is pending: none has an answer
        results = json.loads((out / "results.json").read_text())
        assert results["attempts"]["steps_pending"] == len(outcome.pending) > 0
        assert set(outcome.pending.values()) == {"model_error"}
    return [json.loads(line) for line in (out / "results.jsonl").open()]


@pytest.mark.parametrize("fault", ["refused", "500", "429", "hang", "garbage", "truncated"])
def test_a_failing_endpoint_ends_the_run_incomplete_with_every_step_recorded(
    fault: str, tmp_path: Path
) -> None:
    out = tmp_path / "run"
    if fault == "refused":
        records = evaluate(http_model(closed_port_url()), out, status="incomplete", limit=1)
    else:
        with FakeOpenAIServer(default=fault) as fake:
            records = evaluate(http_model(fake.base_url), out, status="incomplete", limit=1)
    assert records, "no step was recorded"
    uids = [r["action_uid"] for r in records]
    assert len(uids) == len(set(uids))
    for record in records:
        assert record["prediction"]["error_class"] == "model_error", record["prediction"]


def test_ids_and_pages_that_do_not_exist_are_recorded(tmp_path: Path) -> None:
    junk = json.dumps({"pages": [99, 0], "element_id": "no-such-id", "op": "CLICK", "value": ""})
    with FakeOpenAIServer(default="ok", reply=junk) as fake:
        records = evaluate(http_model(fake.base_url), tmp_path / "run", agent="readagent-p")
    assert len(records) == len({r["action_uid"] for r in records})
    for record in records:
        if record["prediction"].get("error_class") == "no_html":
            continue
        # nothing could be reopened: the act prompt names ids by the parts' extractive gists
        # (the model's gist "ok" names none), and an id it did not show is recorded as such
        assert record["prediction"]["error_class"] == "invalid_id"
        assert "[extractive]" in record["trace"]["memory"]
        lookup = record["trace"]["lookup"][0]
        assert any("out of range" in reason for reason in lookup["rejected"])


def test_a_full_disk_stops_the_run_clearly_and_it_resumes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    answer = json.dumps({"element_id": "x", "op": "CLICK", "value": ""})
    model = Model(ScriptedBackend(lambda _r: answer), sleep=lambda _s: None)
    out = tmp_path / "run"
    real_fsync = os.fsync
    calls = {"n": 0}

    def fsync_fails_on_third(fd: int) -> None:
        calls["n"] += 1
        if calls["n"] == 3:
            raise OSError(errno.ENOSPC, "No space left on device")
        real_fsync(fd)

    monkeypatch.setattr(os, "fsync", fsync_fails_on_third)
    with pytest.raises(ResultWriteError, match=r"No space left on device.*run the same command"):
        evaluate(model, out)
    monkeypatch.setattr(os, "fsync", real_fsync)
    assert len((out / "results.jsonl").read_text().splitlines()) == 2  # no torn line left
    records = evaluate(model, out)
    uids = [r["action_uid"] for r in records]
    assert len(uids) == len(set(uids)) == 10
