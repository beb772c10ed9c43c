"""The ``axtree`` agent reads the page as AgentLab's GenericAgent does: on real BrowserGym
observations of MiniWoB++ pages, our flattener's text is BrowserGym's own
``flatten_axtree_to_str`` (visible and clickable tags on, GenericAgent's reference flags) but
for the one change of format (``[id=12]`` for ``[12]``), and for the elements the page the
agents read does not keep (no box: nothing to act on), which it shows without an id or tags.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

pytest.importorskip("browsergym.miniwob", reason="pip install 'readagent-web[browsergym]'")
pytest.importorskip("miniwob", reason="pip install 'readagent-web[browsergym]'")

from browsergym.utils.obs import flatten_axtree_to_str

from live_runner.browsergym.agent import action_set
from live_runner.browsergym.browser import browsergym_playwright
from live_runner.browsergym.environment import miniwob_pages_url
from live_runner.browsergym.observation import page_from_obs
from webagent.html.axtree import flatten_axtree

pytestmark = pytest.mark.browser

#: icons without text (email-inbox), a long feed (social-media), a form (book-flight), an
#: empty list BrowserGym gives a bid but no box (search-engine)
TASKS = ("click-button", "email-inbox", "social-media", "book-flight", "search-engine")
_BID = re.compile(r"^(\t*)\[([^\]]+)\] ")
_MARKS = re.compile(r", (?:clickable|visible)(?=,|$)")


@pytest.fixture(scope="module")
def observations(chromium: Path | None) -> Iterator[dict[str, dict[str, Any]]]:
    import browsergym.miniwob  # noqa: F401 - registers the tasks
    import gymnasium as gym

    found: dict[str, dict[str, Any]] = {}
    with browsergym_playwright(chromium) as executable:
        kwargs = {"pw_chromium_kwargs": {"executable_path": str(executable)}} if executable else {}
        for task in TASKS:
            env = gym.make(
                f"browsergym/miniwob.{task}",
                headless=True,
                disable_env_checker=True,
                action_mapping=action_set().to_python_code,
                task_kwargs={"base_url": miniwob_pages_url()},
                **kwargs,
            )
            try:
                found[task], _ = env.reset(seed=0)
            finally:
                env.close()
        yield found


@pytest.mark.parametrize("task", TASKS)
def test_the_tree_reads_as_generic_agent_s(
    observations: dict[str, dict[str, Any]], task: str
) -> None:
    obs = observations[task]
    page = page_from_obs(obs, screenshot=False)
    assert page.axtree is not None and page.axtree.source == "browsergym"
    theirs = flatten_axtree_to_str(
        obs["axtree_object"],
        extra_properties=obs["extra_element_properties"],
        with_visible=True,
        with_clickable=True,
    )

    def as_ours(line: str) -> str:
        bid = _BID.match(line)
        if bid is None:
            return line
        indent, element, rest = bid.group(1), bid.group(2), line[bid.end() :]
        if element in page.elements:
            return f"{indent}[id={element}] {rest}"
        return indent + _MARKS.sub("", rest)  # no id, so no tags of an element to act on

    expected = [as_ours(line) for line in theirs.split("\n")]
    assert flatten_axtree(page.axtree).split("\n") == expected
    assert sum("[id=" in line for line in expected) >= 2
    if task == "search-engine":  # the empty list: in the tree, without an id to act on
        assert any(line.endswith("] list '', visible") for line in theirs.split("\n"))
    if task == "email-inbox":  # the icons without text are there, clickable, with their ids
        assert sum("image '', clickable" in line for line in expected) >= 10
