"""The ``axtree`` agent without a browser: GenericAgent's rules for what a line shows, the cut
at whole lines, and the one line that says what the agent needs when the tree is missing.
The tree of real pages (Chromium) is tested in tests/live/test_axtree.py."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from webagent.agents.axtree import NEEDS_AXTREE, cut_lines
from webagent.agents.registry import AgentSettings, agent_names, build_agent, reads_axtree
from webagent.cli import main
from webagent.contracts import AXNode, AXTree, Observation
from webagent.html.axtree import flatten_axtree
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend

SAMPLES = Path(__file__).parents[2] / "mind2web_eval" / "samples" / "sample_tasks.json"


def node(
    node_id: str, role: str, name: str | None = "", *children: str, **fields: object
) -> AXNode:
    return AXNode(node_id=node_id, role=role, name=name, children=list(children), **fields)  # type: ignore[arg-type]


def test_lines_follow_generic_agent_s_rules() -> None:
    tree = AXTree(
        source="cdp",
        nodes=[
            node("1", "RootWebArea", "Shop", "2", "9"),
            node("2", "none", None, "3", "5", "6"),  # ignored: its children move up a level
            node("3", "button", "Add to cart", "4", element_id="b1", clickable=True, visible=True),
            node("4", "StaticText", "Add to cart"),  # the button's name says it already
            node("5", "generic", "", element_id="g1", visible=True),  # no property: not shown
            node("6", "generic", "", "7", properties={"live": "polite"}),
            node("7", "StaticText", "Saved"),
            node(
                "9",
                "textbox",
                "Quantity",
                "10",
                value="2",
                element_id="q",
                visible=False,
                clickable=True,
                properties={"focusable": True, "required": True, "focused": False, "level": 2},
            ),
            node("10", "LineBreak", "\n"),
        ],
    )
    assert flatten_axtree(tree).split("\n") == [
        "RootWebArea 'Shop'",
        "\t[id=b1] button 'Add to cart', clickable, visible",
        "\tgeneric, live='polite'",
        "\t\tStaticText 'Saved'",
        "\t[id=q] textbox 'Quantity' value='2', clickable, required",
    ]


def test_cut_lines_keeps_whole_lines_from_the_start() -> None:
    text = "\n".join(f"[id=n{i}] button 'Item {i}'" for i in range(1, 40))
    words = lambda s: len(s.split())  # noqa: E731 - a counter of words
    kept = cut_lines(text, 20, words)
    assert text.startswith(kept) and text[len(kept)] == "\n"
    assert words(kept) <= 20 < words(text)
    assert cut_lines(text, 10_000, words) == text
    assert cut_lines(text, 1, words) == ""  # not even the first line fits


def test_without_the_tree_the_agent_says_what_it_needs(flights_html: str) -> None:
    backend = ScriptedBackend(lambda r: pytest.fail("no model call without the tree"))
    agent = build_agent(AgentSettings(agent="axtree"), Model(backend, sleep=lambda _: None))
    trace = agent.step(Observation(task="Search flights", html=flights_html))
    assert trace.action is None and trace.calls == []
    assert (trace.error_class, trace.error) == ("page_error", f"page error: {NEEDS_AXTREE}")


@pytest.mark.parametrize(
    "argv",
    [
        ["act", "--page", "shop", "--task", "Add a tent to the cart", "--agent", "axtree"],
        ["eval", "--data", str(SAMPLES), "--out", "unused", "--agent", "axtree"],
    ],
    ids=["act", "eval"],
)
def test_offline_without_render_is_one_line_before_anything_runs(
    argv: list[str], capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    argv = [tmp_path.joinpath("out").as_posix() if a == "unused" else a for a in argv]
    assert main(argv) == 2
    err = capsys.readouterr().err.strip().splitlines()
    assert err == [f"webagent {argv[0]}: error: {NEEDS_AXTREE}"]
    assert not (tmp_path / "out").exists()


def test_axtree_is_an_agent_of_act_and_eval(capsys: pytest.CaptureFixture[str]) -> None:
    assert "axtree" in agent_names() and reads_axtree("axtree")
    assert not any(reads_axtree(a) for a in agent_names() if a != "axtree")
    with pytest.raises(SystemExit):
        main(["act", "--help"])
    help_text = " ".join(capsys.readouterr().out.split())
    assert "axtree:" in help_text and "accessibility tree" in help_text
    payload = json.dumps(AXTree(source="render", nodes=[node("1", "button", "Go")]).model_dump())
    assert AXTree.model_validate_json(payload).nodes[0].name == "Go"  # a tree is data
