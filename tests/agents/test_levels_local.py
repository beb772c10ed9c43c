"""``webagent act`` on a page of thousands of fragments with the embedded model, at 2K and 4K:
the memory gets levels, no gist is blank, and the step ends with an action.

The model is near chance: this proves the plumbing, never the method's quality."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from big_page import big_page
from test_levels import assert_nothing_blank

from webagent.cli import main
from webagent.contracts import StepTrace

#: the embedded model reads a 5 MB page's levels on 2 CPU cores: minutes, more when the machine
#: is busy (the suite's default of 300 s is for tests that take seconds)
pytestmark = [pytest.mark.llama, pytest.mark.slow, pytest.mark.timeout(1200)]


@pytest.mark.parametrize("budget", [2048, 4096])
def test_act_ends_with_an_action_on_a_page_too_long_to_gist_flat(
    budget: int, tmp_path: Path, capsys: pytest.CaptureFixture[str], local_model_path: Path
) -> None:
    page = tmp_path / "classifieds.html"
    page.write_text(big_page(), encoding="utf-8")
    argv = ["act", "--page", str(page), "--task", "Save the cheapest bike in Leeds"]
    argv += ["--context-budget", str(budget), "--set", "agent.gister='extractive'", "--json"]
    code = main(argv)
    trace = StepTrace.model_validate(json.loads(capsys.readouterr().out))
    assert trace.n_fragments >= 3000 and trace.sections
    assert_nothing_blank(trace)
    assert code == 0 and trace.action is not None, trace.error
