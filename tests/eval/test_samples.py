"""The bundled sample tasks (the demo's data) are valid Mind2Web raw-format records."""

from __future__ import annotations

import re

from mind2web_eval.data import load_tasks
from mind2web_eval.demo import samples_path


def test_bundled_samples_are_complete_mind2web_records() -> None:
    tasks, summary = load_tasks(samples_path())
    assert summary.issues == []
    assert len(tasks) == 3
    assert 5 <= summary.steps <= 7
    assert summary.steps_without_cleaned_html == 0
    assert summary.steps_with_empty_pos_candidates == 0
    ops = {step.operation.op.value for task in tasks for step in task.actions}
    assert ops == {"CLICK", "TYPE", "SELECT"}
    for task in tasks:
        assert len(task.action_reprs) == len(task.actions)
        for step in task.actions:
            html = step.cleaned_html or ""
            assert 10_000 <= len(html.encode()) <= 40_000
            ids = re.findall(r'backend_node_id="([^"]+)"', html)
            assert len(ids) == len(set(ids))  # ids are unique on a page
            for candidate in [*step.pos_candidates, *(step.neg_candidates or [])]:
                assert candidate.backend_node_id in ids
                assert candidate.attrs()["backend_node_id"] == candidate.backend_node_id
