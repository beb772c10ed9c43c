"""Loading Mind2Web in every circulating form, lazily, with broken records reported."""

from __future__ import annotations

import io
import json
import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from mind2web_eval._jsonstream import iter_json_items
from mind2web_eval.data import DatasetSummary, iter_tasks, load_tasks, split_of
from webagent.errors import DatasetError

REPO = Path(__file__).resolve().parents[2]


def _raw_tasks(raw_folder: Path) -> list[dict[str, Any]]:
    tasks = []
    for path in sorted(raw_folder.rglob("*.json")):
        tasks.extend(json.loads(path.read_text()))
    return tasks


def _write_jsonl(path: Path, records: list[dict[str, Any]]) -> Path:
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    return path


def test_raw_release_folder(raw_folder: Path) -> None:
    tasks, summary = load_tasks(raw_folder)
    assert [t.annotation_id for t in tasks] == ["fx-shop-0001", "fx-fly-0002", "fx-join-0003"]
    assert [t.split for t in tasks] == ["test_task", "test_task", "test_website"]
    assert summary.tasks == 3
    assert summary.steps == 10
    assert summary.issues == []
    assert summary.steps_without_neg_candidates == 2
    assert summary.steps_with_empty_pos_candidates == 1
    assert summary.pos_candidates_without_rank == 1
    assert summary.steps_without_raw_html == 10
    assert len(summary.sha256) == 64
    assert any("empty pos_candidates" in note for note in summary.notes())
    step = tasks[0].actions[3]
    assert [c.backend_node_id for c in step.pos_candidates] == ["230", "231"]
    assert step.pos_candidates[0].attrs()["backend_node_id"] == "230"
    assert tasks[0].previous_actions(2) == tasks[0].action_reprs[:2]


def test_single_file_and_split_names(raw_folder: Path) -> None:
    tasks, _ = load_tasks(raw_folder / "test_website" / "test_website_0.json")
    assert [t.split for t in tasks] == ["test_website"]
    assert split_of("data/test_domain/test_domain_3.json") == "test_domain"
    assert split_of("hf/test_task-00000-of-00002.parquet") == "test_task"
    assert split_of("somewhere/tasks.jsonl") == ""


def test_jsonl_one_task_per_line_has_the_same_hash(raw_folder: Path, tmp_path: Path) -> None:
    _, raw_summary = load_tasks(raw_folder)
    records = list(reversed(_raw_tasks(raw_folder)))  # order must not matter either
    tasks, summary = load_tasks(_write_jsonl(tmp_path / "tasks.jsonl", records))
    assert len(tasks) == 3
    assert summary.sha256 == raw_summary.sha256


def test_flattened_step_lines_are_grouped_into_tasks(raw_folder: Path, tmp_path: Path) -> None:
    lines = []
    for task in _raw_tasks(raw_folder):
        meta = {k: v for k, v in task.items() if k not in ("actions", "action_reprs")}
        for index, step in enumerate(task["actions"]):
            line = {**meta, **step, "previous_actions": task["action_reprs"][:index]}
            lines.append(line)
            if index == 0:
                lines.append(line)  # SeeAct writes one line per choice batch of a step
    tasks, summary = load_tasks(_write_jsonl(tmp_path / "steps.jsonl", lines))
    assert [len(t.actions) for t in tasks] == [4, 4, 2]
    assert summary.duplicate_step_lines == 3
    assert tasks[1].previous_actions(2) == [
        "[radio]  One-way -> CLICK",
        "[textbox]  From -> TYPE: Boston",
    ]


def test_parquet_and_saved_dataset_through_datasets(raw_folder: Path, tmp_path: Path) -> None:
    datasets = pytest.importorskip("datasets")
    _, raw_summary = load_tasks(raw_folder)
    records = _raw_tasks(raw_folder)
    table = datasets.Dataset.from_list(records)
    parquet = tmp_path / "hf" / "test_task-00000-of-00001.parquet"
    parquet.parent.mkdir()
    table.to_parquet(str(parquet))
    tasks, summary = load_tasks(parquet.parent)
    assert [t.annotation_id for t in tasks] == [r["annotation_id"] for r in records]
    assert tasks[2].actions[1].pos_candidates[0].rank is None
    assert tasks[2].actions[0].neg_candidates is None
    assert summary.sha256 == raw_summary.sha256
    saved = tmp_path / "saved"
    table.save_to_disk(str(saved))
    tasks_saved, summary_saved = load_tasks(saved)
    assert len(tasks_saved) == 3
    assert summary_saved.sha256 == raw_summary.sha256


def test_broken_records_are_reported_and_the_rest_loads(raw_folder: Path, tmp_path: Path) -> None:
    good = _raw_tasks(raw_folder)
    no_task = {k: v for k, v in good[0].items() if k != "confirmed_task"}
    bad_op = json.loads(json.dumps(good[1]))
    bad_op["actions"][2]["operation"]["op"] = "HOVER"
    bad_attrs = json.loads(json.dumps(good[2]))
    bad_attrs["actions"][0]["pos_candidates"][0]["attributes"] = "{not json"
    path = tmp_path / "test_task" / "test_task_9.json"
    path.parent.mkdir()
    path.write_text(json.dumps([no_task, good[1], bad_op, "oops", bad_attrs, good[2]]))
    summary = DatasetSummary(source=str(path))
    tasks = list(iter_tasks(path, summary))
    assert [t.annotation_id for t in tasks] == ["fx-fly-0002", "fx-join-0003"]
    by_task = {(i.task, i.field) for i in summary.issues}
    assert ("fx-shop-0001", "confirmed_task") in by_task
    assert ("fx-fly-0002", "actions.2.operation.op") in by_task
    assert ("#3", "(record)") in by_task
    assert ("fx-join-0003", "actions.0.pos_candidates.0.attributes") in by_task
    assert all(i.file == str(path) for i in summary.issues)
    assert "field actions.2.operation.op" in str(summary.issues[1])


def test_broken_jsonl_line_and_broken_json_list(raw_folder: Path, tmp_path: Path) -> None:
    good = _raw_tasks(raw_folder)
    lines = tmp_path / "tasks.jsonl"
    lines.write_text(json.dumps(good[0]) + "\n{broken\n" + json.dumps(good[1]) + "\n")
    tasks, summary = load_tasks(lines)
    assert len(tasks) == 2
    assert [(i.task, i.field) for i in summary.issues] == [("line 2", "(line)")]
    cut = tmp_path / "cut.json"
    text = json.dumps(good)
    cut.write_text(text[: text.index('"fx-fly-0002"') + 5] + "}}, {}]")
    tasks, summary = load_tasks(cut)
    assert [t.annotation_id for t in tasks] == ["fx-shop-0001"]
    assert summary.issues[0].kind == "file"
    assert "item #1 is not valid JSON" in summary.issues[0].message


def test_missing_source_is_a_clear_error(tmp_path: Path) -> None:
    with pytest.raises(DatasetError, match="no such file"):
        load_tasks(tmp_path / "nope")
    (tmp_path / "empty").mkdir()
    with pytest.raises(DatasetError, match=r"no \.json"):
        load_tasks(tmp_path / "empty")


def test_json_list_is_streamed_item_by_item() -> None:
    items = [{"i": i, "text": "x" * 50 + '\\"]}' * i} for i in range(200)] + [1.5, 12345]
    text = json.dumps(items)

    class Counting(io.StringIO):
        read_chars = 0

        def read(self, size: int | None = -1) -> str:
            chunk = super().read(size)
            self.read_chars += len(chunk)
            return chunk

    stream = Counting(text)
    iterator = iter_json_items(stream, "mem", chunk_size=64)
    assert next(iterator) == items[0]
    assert stream.read_chars < len(text) // 10  # not loaded whole
    assert [items[0], *iterator] == items


def test_limit_stops_reading(raw_folder: Path) -> None:
    tasks, summary = load_tasks(raw_folder, limit=2)
    assert len(tasks) == 2
    assert summary.tasks == 2


def test_real_shared_records_load(shared: Path) -> None:
    samples = shared / "mind2web_samples"
    tasks, summary = load_tasks(samples / "test_task_examples.jsonl")
    assert (len(tasks), summary.steps, summary.issues) == (10, 108, [])
    assert summary.steps_with_empty_pos_candidates == 13
    flat, flat_summary = load_tasks(samples / "steps_with_html")
    assert len(flat) == 1
    assert flat_summary.duplicate_step_lines == 2
    assert flat[0].actions[0].cleaned_html
    assert len(flat[0].previous_actions(0)) == 2


def test_hub_name_without_network_is_a_clear_error() -> None:
    pytest.importorskip("datasets")
    code = (
        "from mind2web_eval.data import load_tasks\n"
        "from webagent.errors import DatasetError\n"
        "try:\n    load_tasks('hf:osunlp/Mind2Web:test')\n"
        "except DatasetError as exc:\n    print('ERR', exc)\n"
    )
    env = {**os.environ, "HF_HUB_OFFLINE": "1", "PYTHONPATH": str(REPO)}
    done = subprocess.run(
        [sys.executable, "-c", code],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert "ERR hf:osunlp/Mind2Web:test: cannot read from the Hugging Face hub" in done.stdout
