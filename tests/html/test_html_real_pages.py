"""Real saved pages and the real Mind2Web record in /work/shared (skipped where absent)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from segment_checks import check_segmentation, indivisible, visible_interactive_ids

from webagent.html.budget import plan_segmentation
from webagent.html.clean import clean_page
from webagent.html.fragment import SegmentSettings
from webagent.html.parse import parse_html
from webagent.html.segment import segment_page

WINDOW, GIST, RESERVED, REOPEN = 8192, 72, 1024, 5


def shared_pages() -> list[Path]:
    folder = Path(__file__).resolve().parents[3] / "shared" / "pages"
    return sorted(folder.glob("*.html")) if folder.is_dir() else []


@pytest.mark.skipif(not shared_pages(), reason="/work/shared/pages is not on this machine")
@pytest.mark.parametrize("path", shared_pages(), ids=lambda p: p.name.split("__")[1])
def test_real_page(path: Path) -> None:
    data = path.read_bytes()
    root = parse_html(data)
    page = clean_page(root)
    interactive = visible_interactive_ids(root)
    assert interactive, "every saved page has links or inputs"

    free = SegmentSettings()
    result = segment_page(page, free)
    check_segmentation(page, result, free, root=root)

    plan = plan_segmentation(WINDOW, GIST, RESERVED, REOPEN)
    assert plan.max_fragments is not None
    planned = segment_page(page, plan)
    check_segmentation(page, planned, plan, root=root)
    # every gist fits the look-up prompt
    assert len(planned.fragments) * GIST + RESERVED <= WINDOW
    capacity = plan.max_fragments * plan.max_fragment_tokens
    assert len(planned.fragments) <= plan.max_fragments
    if planned.page_tokens <= 0.9 * capacity:  # only an indivisible element may be over
        for fragment in planned.fragments:
            assert not fragment.oversized or indivisible(page, fragment, plan), fragment.index
    else:  # too big for 8K: fragments grow (cut at stable anchors, so not evenly), and say so
        assert not planned.fits_budget and planned.overflow
        largest = max(f.tokens for f in planned.fragments)
        assert largest <= 3 * planned.page_tokens / plan.max_fragments + plan.max_fragment_tokens


def test_mind2web_candidates_survive_cleaning(shared_dir: Path) -> None:
    files = sorted((shared_dir / "mind2web_samples" / "steps_with_html").glob("*.jsonl"))
    if not files:
        pytest.skip("no Mind2Web step with cleaned_html on this machine")
    for line in files[0].read_text().splitlines():
        record = json.loads(line)
        page = clean_page(record["cleaned_html"])
        plan = plan_segmentation(WINDOW, GIST, RESERVED, REOPEN)
        result = segment_page(page, plan)
        check_segmentation(page, result, plan)
        for candidate in record["pos_candidates"]:
            node_id = candidate["backend_node_id"]
            assert node_id in page.interactive_ids
            assert result.fragment_of(node_id) is not None
        # ids are the page's own backend_node_ids, never invented ones
        assert not [i for i in result.element_ids if i.startswith("n")]
        assert len(result.element_ids) > 300
