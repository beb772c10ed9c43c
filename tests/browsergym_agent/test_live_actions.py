"""The live action space through BrowserGym with Debian's Chromium: the scripted
``live-oracle`` policy (tests/live/oracle.py) behind a real agent reads the icon controls'
names in BrowserGym's page and types a date as the task words it; BrowserGym earns reward 1."""

from __future__ import annotations

from pathlib import Path

import pytest

pytest.importorskip("browsergym.miniwob", reason="pip install 'readagent-web[browsergym]'")
pytest.importorskip("miniwob", reason="pip install 'readagent-web[browsergym]'")

from live.live_oracle import NAME, live_oracle

from live_runner.browsergym.environment import run_browsergym
from live_runner.browsergym.settings import BrowserGymSettings
from live_runner.settings import BrowserSettings
from live_runner.trace import read_steps
from webagent.agents.registry import AgentSettings, build_agent
from webagent.model.client import Model

pytestmark = pytest.mark.browser


def test_icons_and_a_worded_date_through_browsergym(chromium: Path | None, tmp_path: Path) -> None:
    settings = BrowserGymSettings(
        tasks=(
            "browsergym/miniwob.enter-date",
            "browsergym/miniwob.social-media",
            "browsergym/miniwob.email-inbox",
        ),
        seeds=(5,),  # a date; Retweet (an icon) for a user; star an email (an icon)
        out_dir=tmp_path,
        max_steps=5,
        browser=BrowserSettings(executable_path=chromium, screenshots=False),
    )
    backend = live_oracle()
    agent = build_agent(AgentSettings(agent="raw-html"), Model(backend, sleep=lambda _s: None))
    report = run_browsergym(settings, agent, agent_manifest={"model": {"backend": NAME}})
    assert [(e.task, e.reward) for e in report.episodes] == [
        (task, 1.0) for task in settings.tasks
    ], [e.detail for e in report.episodes]
    date = read_steps(tmp_path / report.episodes[0].run_dir)[0]
    assert date.episode["browsergym_action"].startswith("fill(")
    assert date.outcome.ok and date.outcome.note.startswith("typed as ")
    prompts = "\n".join(r.messages[-1].content for r in backend.requests)
    assert (
        ' onclick hint="retweet"></span>' in prompts and ' onclick hint="star"></span>' in prompts
    )
