"""Multimodal-Mind2Web, the public test splits with their HTML, loads through the CLI.

Its rows are built here with the dataset card's exact features (one row a step; ``operation``
a JSON string, ``pos_candidates`` / ``neg_candidates`` lists of JSON strings, ``screenshot``
an ``Image``, ``target_action_index`` a string, ``action_reprs`` the whole task's) from two
tasks written for this test: one with a step left out of the data and its rows out of order,
as the published copy leaves some steps out. Nothing here reaches the network."""

from __future__ import annotations

import json
import socket
import struct
import zlib
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

import webagent.model.factory
from mind2web_eval.data import load_tasks
from webagent.cli import build_parser, main
from webagent.model.base import Request
from webagent.model.client import Model
from webagent.model.retry import RetryPolicy
from webagent.model.scripted import ScriptedBackend

datasets = pytest.importorskip("datasets")
datasets.disable_progress_bars()

#: the features of osunlp/Multimodal-Mind2Web, as its dataset card declares them
FEATURES = datasets.Features(
    {
        "action_uid": datasets.Value("string"),
        "raw_html": datasets.Value("string"),
        "cleaned_html": datasets.Value("string"),
        "operation": datasets.Value("string"),
        "pos_candidates": datasets.Sequence(datasets.Value("string")),
        "neg_candidates": datasets.Sequence(datasets.Value("string")),
        "website": datasets.Value("string"),
        "domain": datasets.Value("string"),
        "subdomain": datasets.Value("string"),
        "annotation_id": datasets.Value("string"),
        "confirmed_task": datasets.Value("string"),
        "screenshot": datasets.Image(),
        "action_reprs": datasets.Sequence(datasets.Value("string")),
        "target_action_index": datasets.Value("string"),
        "target_action_reprs": datasets.Value("string"),
    }
)


def png(width: int = 2, height: int = 1) -> bytes:
    """A real PNG (grey pixels), made without PIL."""

    def chunk(kind: bytes, data: bytes) -> bytes:
        body = kind + data
        return struct.pack(">I", len(data)) + body + struct.pack(">I", zlib.crc32(body))

    header = struct.pack(">IIBBBBB", width, height, 8, 0, 0, 0, 0)
    pixels = zlib.compress(b"".join(b"\x00" + b"\x80" * width for _ in range(height)))
    chunks = chunk(b"IHDR", header) + chunk(b"IDAT", pixels) + chunk(b"IEND", b"")
    return b"\x89PNG\r\n\x1a\n" + chunks


#: PNG's signature and then nothing valid: PIL cannot open it, so it must never be decoded
BROKEN_PNG = b"\x89PNG\r\n\x1a\n" + b"cut short"


@dataclass(frozen=True)
class Written:
    """One step as written for the test: its place in the task, the gold and the page."""

    index: int
    uid: str
    op: str
    value: str
    gold: tuple[str, str, str]  # (tag, backend_node_id, text)
    others: tuple[tuple[str, str, str], ...]
    screenshot: bytes


@dataclass(frozen=True)
class WrittenTask:
    annotation_id: str
    website: str
    domain: str
    subdomain: str
    task: str
    reprs: tuple[str, ...]
    steps: tuple[Written, ...]  # in the order of the rows


CAMP = WrittenTask(
    "fx-mm-camp-0001", "campfix", "Shopping", "Outdoor",
    "Find a two-person tent and add it to the cart",
    ("[textbox]  Search gear -> TYPE: tent", "[button]  Search -> CLICK",
     "[link]  Trail Tent 2P -> CLICK", "[button]  Add to cart -> CLICK"),
    (  # step 1 is not in the data, and the rows are not in task order
        Written(3, "camp-step-3", "CLICK", "", ("button", "41", "Add to cart"),
                (("a", "40", "Trail Tent 2P"), ("button", "42", "Save for later")), png()),
        Written(0, "camp-step-0", "TYPE", "tent", ("input", "11", "Search gear"),
                (("button", "12", "Search"), ("a", "13", "Deals")), png(1, 1)),
        Written(2, "camp-step-2", "CLICK", "", ("a", "31", "Trail Tent 2P"),
                (("a", "32", "Summit Tent 4P"), ("button", "33", "Next page")), BROKEN_PNG),
    ),
)  # fmt: skip
RAIL = WrittenTask(
    "fx-mm-rail-0002", "railfix", "Travel", "Ground", "Book a train from Leeds to York",
    ("[combobox]  From -> SELECT: Leeds", "[textbox]  To -> TYPE: York"),
    (
        Written(0, "rail-step-0", "SELECT", "Leeds", ("select", "21", "From"),
                (("input", "22", "To"), ("button", "23", "Find trains")), png(3, 2)),
        Written(1, "rail-step-1", "TYPE", "York", ("input", "22", "To"),
                (("select", "21", "From"), ("button", "23", "Find trains")), png(1, 3)),
    ),
)  # fmt: skip
TASKS = (CAMP, RAIL)
STEPS = sum(len(t.steps) for t in TASKS)


def element(tag: str, node: str, text: str) -> str:
    if tag == "input":
        return f'<input backend_node_id="{node}" type="text" placeholder="{text}">'
    return f'<{tag} backend_node_id="{node}">{text}</{tag}>'


def candidate(tag: str, node: str, original: bool) -> str:
    """A candidate as Multimodal-Mind2Web writes it: a JSON string whose ``attributes`` is
    itself a JSON string."""
    attributes = json.dumps({"backend_node_id": node, "bounding_box_rect": "10,20,80,24"})
    return json.dumps(
        {
            "tag": tag,
            "attributes": attributes,
            "backend_node_id": node,
            "is_original_target": original,
            "is_top_level_target": original,
        }
    )


def row(task: WrittenTask, step: Written) -> dict[str, Any]:
    controls = "".join(element(*e) for e in (step.gold, *step.others))
    cleaned = (
        f'<html backend_node_id="1"><body backend_node_id="2"><div backend_node_id="3">'
        f"{controls}</div></body></html>"
    )
    return {
        "action_uid": step.uid,
        "raw_html": f"<!DOCTYPE html><html><head><title>{task.website}</title></head>"
        f"<body>{controls}</body></html>",
        "cleaned_html": cleaned,
        "operation": json.dumps({"original_op": step.op, "value": step.value, "op": step.op}),
        "pos_candidates": [candidate(step.gold[0], step.gold[1], True)],
        "neg_candidates": [candidate(tag, node, False) for tag, node, _ in step.others],
        "website": task.website,
        "domain": task.domain,
        "subdomain": task.subdomain,
        "annotation_id": task.annotation_id,
        "confirmed_task": task.task,
        "screenshot": {"bytes": step.screenshot, "path": None},
        "action_reprs": list(task.reprs),
        "target_action_index": str(step.index),
        "target_action_reprs": task.reprs[step.index],
    }


def rows() -> list[dict[str, Any]]:
    return [row(task, step) for task in TASKS for step in task.steps]


def write_parquet(path: Path, written: list[dict[str, Any]]) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    datasets.Dataset.from_list(written, features=FEATURES).to_parquet(str(path))
    return path


@pytest.fixture
def parquet(tmp_path: Path) -> Path:
    """One shard as the hub names it (``data/test_task-00000-of-00001.parquet``)."""
    return write_parquet(tmp_path / "data" / "test_task-00000-of-00001.parquet", rows())


@pytest.fixture(autouse=True)
def no_network(monkeypatch: pytest.MonkeyPatch) -> None:
    """Any attempt to open a connection fails the test."""

    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise AssertionError(f"a test tried to reach the network: {args}")

    monkeypatch.setattr(socket.socket, "connect", refuse)
    monkeypatch.setattr(socket.socket, "connect_ex", refuse)
    monkeypatch.setattr(socket, "create_connection", refuse)


def gold_answer(request: Request) -> str:
    """The act answer a perfect model gives, from the tasks as written (not as loaded): the
    step is the one whose gold history the prompt shows, and a wrong history gets no gold."""
    prompt = request.messages[-1].content
    task = next(t for t in TASKS if f"Task: {t.task}\n" in prompt)
    previous = prompt.split("Previous actions:\n", 1)[1].split("\n\n", 1)[0].strip()
    shown = [] if previous == "None" else [line.strip() for line in previous.splitlines()]
    step = next((s for s in task.steps if list(task.reprs[: s.index]) == shown), None)
    if step is None:
        return json.dumps({"element_id": "0", "op": "CLICK", "value": ""})
    return json.dumps({"element_id": step.gold[1], "op": step.op, "value": step.value})


@pytest.fixture
def scripted_model(monkeypatch: pytest.MonkeyPatch) -> ScriptedBackend:
    """``webagent eval``'s model, whatever its settings: the scripted gold policy."""
    backend = ScriptedBackend(gold_answer, name="gold-policy")
    build_parser()  # every command's module imported first, so none keeps the patched builder

    def build_model(settings: Any, **_: Any) -> Model:
        return Model(backend, RetryPolicy(timeout_s=10, max_retries=0), sleep=lambda _s: None)

    monkeypatch.setattr(webagent.model.factory, "build_model", build_model)
    return backend


def gold_predictions(path: Path) -> Path:
    lines = [
        json.dumps(
            {
                "annotation_id": task.annotation_id,
                "action_uid": step.uid,
                "element_id": step.gold[1],
                "op": step.op,
                "value": step.value,
            }
        )
        for task in TASKS
        for step in task.steps
    ]
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    return path


def score_json(data: str, predictions: Path, capsys: pytest.CaptureFixture[str]) -> Any:
    code = main(["score", "--data", data, "--predictions", str(predictions), "--json"])
    report = json.loads(capsys.readouterr().out)
    assert code == 0
    return report


def eval_argv(data: Path, out: Path) -> list[str]:
    return [
        "eval", "--data", str(data), "--out", str(out), "--agent", "raw-html",
        "--context-budget", "2048", "--no-gist-cache", "--no-progress", "--bootstrap", "10",
    ]  # fmt: skip


def test_eval_runs_every_step_with_its_gold_history_and_score_agrees(
    parquet: Path,
    tmp_path: Path,
    scripted_model: ScriptedBackend,
    capsys: pytest.CaptureFixture[str],
) -> None:
    out = tmp_path / "run"
    assert main(eval_argv(parquet, out)) == 0
    capsys.readouterr()
    assert len(scripted_model.requests) == STEPS  # one act a step, nothing else
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    camp = [r for r in records if r["annotation_id"] == CAMP.annotation_id]
    # task order, each step at its place in the whole task, with the history of the whole
    # task (the step left out of the data included)
    assert [r["action_uid"] for r in camp] == ["camp-step-0", "camp-step-2", "camp-step-3"]
    assert [r["step_index"] for r in camp] == [0, 2, 3]
    assert camp[2]["previous_actions"] == list(CAMP.reprs[:3])
    assert [r["gold_repr"] for r in camp] == [CAMP.reprs[0], CAMP.reprs[2], CAMP.reprs[3]]
    results = json.loads((out / "results.json").read_text())
    assert results["score"]["overall"]["micro"]["step_sr"] == 1.0
    assert results["score"]["overall"]["tasks"] == 2
    assert not list(tmp_path.rglob("*.png")), "screenshots are left out unless asked for"
    # ``webagent score`` reads the same file and the run's predictions alike
    report = score_json(str(parquet), out / "predictions.jsonl", capsys)
    assert report["counts"]["steps_in_data"] == STEPS
    assert report["overall"]["micro"] == {"element_acc": 1.0, "op_f1": 1.0, "step_sr": 1.0}
    assert report["overall"]["task_sr"] == 1.0
    assert set(report["by_split"]) == {"test_task"}
    assert set(report["by_website"]) == {"campfix", "railfix"}


def test_eval_plan_reads_the_file(
    parquet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    argv = [*eval_argv(parquet, tmp_path / "run"), "--plan", "--backend", "batch"]
    assert main([*argv, "--model", "m", "--token-counter", "estimate"]) == 0
    assert f"cost plan for {STEPS} steps" in capsys.readouterr().out


def test_shards_and_a_saved_dataset_load_as_the_single_file(
    parquet: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    _, one = load_tasks(parquet)
    written = rows()
    shards = tmp_path / "shards"
    write_parquet(shards / "test_task-00000-of-00002.parquet", written[:2])  # the camp task's
    write_parquet(shards / "test_task-00001-of-00002.parquet", written[2:])  # rows go on here
    saved = tmp_path / "saved"
    split = datasets.Dataset.from_list(written, features=FEATURES)
    datasets.DatasetDict({"test_task": split}).save_to_disk(str(saved))
    predictions = gold_predictions(tmp_path / "gold.jsonl")
    for source in (shards, saved):
        tasks, summary = load_tasks(source)
        assert [len(t.actions) for t in tasks] == [3, 2]
        assert summary.sha256 == one.sha256
        report = score_json(str(source), predictions, capsys)
        assert report["overall"]["micro"]["step_sr"] == 1.0
        assert set(report["by_split"]) == {"test_task"}


def test_the_hub_name_handles_the_rows_as_the_file(
    parquet: Path,
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
    capsys: pytest.CaptureFixture[str],
) -> None:
    asked: list[tuple[str, Any, Any]] = []
    load_dataset = datasets.load_dataset

    def from_the_file(path: str, **kwargs: Any) -> Any:  # the hub's rows, served from the file
        asked.append((path, kwargs.get("split"), kwargs.get("streaming")))
        files = [str(parquet)]
        return load_dataset("parquet", data_files=files, split="train", streaming=True)

    monkeypatch.setattr(datasets, "load_dataset", from_the_file)
    source = "hf:osunlp/Multimodal-Mind2Web:test_task"
    report = score_json(source, gold_predictions(tmp_path / "gold.jsonl"), capsys)
    assert asked == [("osunlp/Multimodal-Mind2Web", "test_task", True)]
    assert report["counts"]["steps_in_data"] == STEPS
    assert report["overall"]["micro"]["step_sr"] == 1.0
    assert set(report["by_split"]) == {"test_task"}
    assert report["data"]["sha256"] == load_tasks(parquet)[1].sha256


def test_screenshots_are_kept_by_path_when_asked_and_never_decoded(
    parquet: Path, tmp_path: Path, scripted_model: ScriptedBackend
) -> None:
    shots = tmp_path / "shots"
    assert main([*eval_argv(parquet, tmp_path / "run"), "--screenshots", str(shots)]) == 0
    tasks, _ = load_tasks(parquet, screenshots=tmp_path / "api")
    for task in TASKS:
        for step in task.steps:
            kept = shots / task.annotation_id / f"{step.uid}.png"
            assert kept.read_bytes() == step.screenshot  # BROKEN_PNG too: written, not read
    by_uid = {s.action_uid: s for t in tasks for s in t.actions}
    path = Path(by_uid["camp-step-2"].screenshot or "")
    assert path == tmp_path / "api" / CAMP.annotation_id / "camp-step-2.png"
    assert path.read_bytes() == BROKEN_PNG
    assert all(s.screenshot is None for t in load_tasks(parquet)[0] for s in t.actions)


def test_bad_rows_are_named_and_the_rest_loads(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    predictions = gold_predictions(tmp_path / "gold.jsonl")
    written = rows()
    written[3]["operation"] = "{'op': 'SELECT'}"  # not JSON: the rail task is left out
    path = write_parquet(tmp_path / "a" / "test_task.parquet", written)
    assert main(["score", "--data", str(path), "--predictions", str(predictions)]) == 0
    out, err = capsys.readouterr()
    assert "task fx-mm-rail-0002: field actions.0.operation: not valid JSON" in err
    assert f"{path} (1 tasks" in out
    camp = rows()[:3]
    camp[1]["target_action_index"] = "9"  # the camp task has 4 actions
    path = write_parquet(tmp_path / "b" / "test_task.parquet", camp)
    assert main(["score", "--data", str(path), "--predictions", str(predictions)]) == 2
    err = capsys.readouterr().err
    assert "no usable record" in err
    assert "target_action_index 9 of step camp-step-0 is past the task's 4 action_reprs" in err
    apart = [*rows()[:2], rows()[3], rows()[2]]  # a camp row after the rail task's first row
    tasks, summary = load_tasks(write_parquet(tmp_path / "apart.parquet", apart))
    camp, rail = CAMP.annotation_id, RAIL.annotation_id
    assert [t.annotation_id for t in tasks] == [camp, rail, camp]
    assert summary.tasks_apart == 1
    assert any("1 task(s) have step rows apart" in note for note in summary.notes())


def real_row(record: dict[str, Any]) -> dict[str, Any]:
    """The one real step of ``../shared`` as a Multimodal-Mind2Web row (its history is the
    task's first two actions; the row's own repr is written for the test)."""
    reprs = [*record["previous_actions"], "[button]  Search -> CLICK"]
    keys = ("tag", "attributes", "backend_node_id", "is_original_target", "is_top_level_target")

    def encoded(c: dict[str, Any]) -> str:
        return json.dumps({k: c[k] for k in keys if k in c})

    return {
        "action_uid": record["action_uid"],
        "raw_html": record["cleaned_html"],
        "cleaned_html": record["cleaned_html"],
        "operation": json.dumps(record["operation"]),
        "pos_candidates": [encoded(c) for c in record["pos_candidates"]],
        "neg_candidates": [encoded(c) for c in record["neg_candidates"]],
        "website": record["website"],
        "domain": "Service",
        "subdomain": "Home service",
        "annotation_id": record["annotation_id"],
        "confirmed_task": record["confirmed_task"],
        "screenshot": {"bytes": png(), "path": None},
        "action_reprs": reprs,
        "target_action_index": str(len(reprs) - 1),
        "target_action_reprs": reprs[-1],
    }


def shared_step(shared: Path) -> Iterator[dict[str, Any]]:
    folder = shared / "mind2web_samples" / "steps_with_html"
    for path in sorted(folder.glob("*.jsonl")):
        yield json.loads(path.read_text(encoding="utf-8").splitlines()[0])


def test_the_real_step_as_a_multimodal_row(
    shared: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    record = next(shared_step(shared), None)
    if record is None:
        pytest.skip("no step with HTML in ../shared/mind2web_samples/steps_with_html")
    path = write_parquet(tmp_path / "test_domain-00000-of-00001.parquet", [real_row(record)])
    tasks, summary = load_tasks(path)
    step = tasks[0].actions[0]
    assert summary.issues == []
    assert step.cleaned_html == record["cleaned_html"]
    assert len(step.neg_candidates or []) == len(record["neg_candidates"])
    assert tasks[0].previous_actions(0) == record["previous_actions"]
    gold = step.pos_candidates[0].backend_node_id
    prediction = {"annotation_id": tasks[0].annotation_id, "action_uid": step.action_uid}
    predictions = tmp_path / "p.jsonl"
    predictions.write_text(json.dumps({**prediction, "element_id": gold, "op": "CLICK"}) + "\n")
    report = score_json(str(path), predictions, capsys)
    assert report["overall"]["micro"]["step_sr"] == 1.0
    assert set(report["by_split"]) == {"test_domain"}
