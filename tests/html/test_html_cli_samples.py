"""``webagent segment`` and the bundled sample pages."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from segment_checks import check_segmentation

from webagent.agents.registry import AgentSettings, build_agent
from webagent.cli import main
from webagent.html.budget import plan_segmentation
from webagent.html.clean import clean_page
from webagent.html.parse import parse_html
from webagent.html.segment import segment_page
from webagent.model.factory import build_model
from webagent.model.settings import ModelSettings
from webagent.samples import SAMPLE_PAGES, sample_page_path


@pytest.mark.parametrize("name", list(SAMPLE_PAGES))
def test_sample_pages_are_realistic_and_segment(name: str) -> None:
    data = sample_page_path(name).read_bytes()
    assert 30_000 <= len(data) <= 120_000
    assert b"backend_node_id" not in data
    root = parse_html(data)
    deepest = max(sum(1 for _ in el.iterancestors()) for el in root.iter())
    assert 10 <= deepest <= 20
    page = clean_page(root)
    plan = plan_segmentation(8192, 72, 1024, 5)
    result = segment_page(page, plan)
    check_segmentation(page, result, plan, root=root)
    assert result.fits_budget
    assert all(i.startswith("n") for i in result.element_ids)


def test_shop_sample_has_what_the_readme_promises() -> None:
    root = parse_html(sample_page_path("shop").read_bytes())
    assert len(root.xpath("//button[normalize-space()='Add to cart']")) >= 40
    assert root.xpath("//form[@role='search']//select[@name='category']")
    assert len(root.xpath("//aside//input[@type='checkbox']")) >= 10
    assert root.xpath("//nav[@aria-label='Pagination']//a")


def test_unknown_sample_is_a_page_error() -> None:
    from webagent.errors import PageError

    with pytest.raises(PageError, match="shop"):
        sample_page_path("nope")


def test_cli_table(capsys: pytest.CaptureFixture[str], pages_dir: Path) -> None:
    assert main(["segment", str(pages_dir / "form.html"), "--max-fragment-tokens", "120"]) == 0
    out = capsys.readouterr().out
    assert "tokens" in out and "fragments" in out and "Request booking" in out


def test_cli_json_round_trips(capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["segment", "travel", "--json", "--context-budget", "8192", "--depth", "5"]) == 0
    data = json.loads(capsys.readouterr().out)
    # exactly the plan `act` makes with the same options, under the same model's counter
    with build_model(ModelSettings()) as model:
        agent = build_agent(AgentSettings(context_budget=8192, depth=5), model)
        plan = agent.segment_plan  # type: ignore[attr-defined]
    assert data["depth"] == 5 and data["settings"] == plan.model_dump(mode="json")
    assert data["fragments"] and data["fits_budget"]
    assert any("Search flights" in f["text"] for f in data["fragments"])


def test_cli_errors_name_the_problem(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["segment", str(tmp_path / "missing.html")]) == 2
    assert "no such file" in capsys.readouterr().err
    empty = tmp_path / "empty.html"
    empty.write_bytes(b"")
    assert main(["segment", str(empty)]) == 2
    assert "empty page" in capsys.readouterr().err
    assert main(["segment", "shop", "--context-budget", "900"]) == 2
    err = capsys.readouterr().err  # what the user typed, and what would do
    assert "--context-budget 900 is too small" in err and "--context-budget 1593 or more" in err


def test_cli_help(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit):
        main(["segment", "--help"])
    out = capsys.readouterr().out
    for option in (
        "--json",
        "--depth",
        "--context-budget",
        "--max-lookup",
        "--max-fragment-tokens",
    ):
        assert option in out
