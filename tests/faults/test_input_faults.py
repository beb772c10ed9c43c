"""Fault suite for inputs: a 20 MB page and dataset records whose fields have the wrong type."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mind2web_eval.data import DatasetSummary, iter_tasks
from webagent.html.budget import plan_segmentation
from webagent.html.clean import clean_page
from webagent.html.segment import segment_html
from webagent.samples import sample_page_path

RAW = Path(__file__).resolve().parents[1] / "data" / "mind2web" / "raw"


@pytest.mark.slow
def test_a_20_mb_page_segments_within_the_plan_and_loses_no_control() -> None:
    shop = sample_page_path("shop").read_text(encoding="utf-8")
    body = shop[shop.index("<body") : shop.rindex("</body>")]
    body = body[body.index(">") + 1 :]
    copies = 20_000_000 // len(body) + 1
    page = (
        "<html><body>"
        + "".join(f"<section>{body}</section>" for _ in range(copies))
        + "</body></html>"
    )
    assert len(page) > 20_000_000
    settings = plan_segmentation(8192, 72, 512, 5)
    result = segment_html(page, settings)
    assert len(result.fragments) <= settings.max_fragments  # type: ignore[operator]
    assert not result.fits_budget  # far too big for 8K: said, not hidden
    seen = [i for f in result.fragments for i in f.interactive_ids]
    assert sorted(seen) == sorted(clean_page(page).interactive_ids)


def test_records_with_wrong_typed_fields_are_named_and_the_rest_loads(tmp_path: Path) -> None:
    tasks = json.loads(next(RAW.glob("*/*.json")).read_text())
    good = tasks[0]
    wrong_actions = {**good, "annotation_id": "wrong-actions", "actions": "not a list"}
    wrong_reprs = {**good, "annotation_id": "wrong-reprs", "action_reprs": 42}
    wrong_step = json.loads(json.dumps({**good, "annotation_id": "wrong-step"}))
    wrong_step["actions"][0]["pos_candidates"] = {"tag": "button"}
    path = tmp_path / "test_task" / "test_task_0.json"
    path.parent.mkdir()
    path.write_text(json.dumps([wrong_actions, good, wrong_reprs, wrong_step]))
    summary = DatasetSummary(source=str(path))
    loaded = list(iter_tasks(path, summary))
    assert [t.annotation_id for t in loaded] == [good["annotation_id"]]
    named = {issue.task for issue in summary.issues}
    assert {"wrong-actions", "wrong-reprs", "wrong-step"} <= named
    assert all(issue.file == str(path) and issue.field for issue in summary.issues)
