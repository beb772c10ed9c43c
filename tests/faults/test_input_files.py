"""The other files a user hands the toolkit, as they may come: a page that is binary data is
refused in one line before any model call, a page in the charset it declares reaches the model
as written, and a ``--replay`` cassette or answers file, a ``--batch-results`` file and a
``--config`` file name a byte that is not UTF-8 (file, line, column) and accept a UTF-8
byte-order mark. Every case runs the command line in this process against a fake
OpenAI-compatible endpoint on 127.0.0.1 that answers by a fixed policy."""

from __future__ import annotations

import json
import random
import re
from pathlib import Path
from typing import Any

import pytest
from command_line import latin1_in, not_utf8, one_line

from tests.fakes.openai_server import FakeOpenAIServer
from webagent.cli import main
from webagent.model.answer_file import Answer, append_answers

BOM = b"\xef\xbb\xbf"
MODEL = "policy-model"
REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "mind2web_eval" / "samples" / "sample_tasks.json"
PAGE = (
    "<html><head>{meta}</head><body><form><label>Name <input name='name'></label>"
    "<button>{label}</button></form></body></html>"
)
_BUTTON = re.compile(r"<button id=(\w+)>([^<]*)</button>")
_ACTION = re.compile(r"^action: CLICK element \w+$", re.M)


def click_the_button(body: dict[str, Any]) -> str:
    """The policy: click the button whose label the prompt shows as "Grüße" or "Send", else
    answer an id no page has."""
    prompt = "\n".join(m["content"] for m in body["messages"])
    ids = [i for i, label in _BUTTON.findall(prompt) if label in ("Grüße", "Send")]
    return json.dumps({"element_id": ids[0] if ids else "none", "op": "CLICK", "value": ""})


def click_the_first_id(body: dict[str, Any]) -> str:
    """The policy for Mind2Web steps: click the first id the act answer may name."""
    schema = body["response_format"]["json_schema"]["schema"]
    first = schema["properties"]["element_id"]["enum"][0]
    return json.dumps({"element_id": first, "op": "CLICK", "value": ""})


def _act(page: Path, *flags: str) -> list[str]:
    # the fake server reports no context window, so the budget is given
    return [
        "act", "--page", str(page), "--task", "send the form", "--agent", "raw-html",
        "--token-counter", "estimate", "--no-gist-cache", "--context-budget", "8192", *flags,
    ]  # fmt: skip


def _live(url: str) -> list[str]:
    return ["--backend", "openai", "--base-url", url, "--model", MODEL]


@pytest.fixture
def page(tmp_path: Path) -> Path:
    path = tmp_path / "form.html"
    path.write_text(PAGE.format(meta="", label="Send"), encoding="utf-8")
    return path


@pytest.fixture
def recorded(page: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[Path, str]:
    """A cassette of one ``act`` on ``page`` (one act call, answered by the policy), and the
    action it printed."""
    path = tmp_path / "act.jsonl"
    with FakeOpenAIServer(answer=click_the_button) as fake:
        assert main([*_act(page, "--record", str(path)), *_live(fake.base_url)]) == 0
    action = _ACTION.search(capsys.readouterr().out)
    assert action is not None
    return path, action.group(0)


def _action(out: str) -> str:
    found = _ACTION.search(out)
    return found.group(0) if found else out


def test_a_binary_page_is_refused_in_one_line_before_any_model_call(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    noise = tmp_path / "noise.html"
    noise.write_bytes(random.Random(5).randbytes(3000))
    with FakeOpenAIServer(answer=click_the_button) as fake:
        assert main([*_act(noise), *_live(fake.base_url)]) == 2
        assert fake.chat_requests == []
    assert one_line(capsys.readouterr().err) == (
        f"webagent act: error: {noise}: binary data, not a web page: it holds NUL bytes"
    )
    assert main(["segment", str(noise), "--token-counter", "estimate"]) == 2
    assert one_line(capsys.readouterr().err) == (
        f"webagent segment: error: {noise}: binary data, not a web page: it holds NUL bytes"
    )


def test_control_characters_without_a_nul_are_binary_too(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    controls = tmp_path / "controls.html"
    controls.write_bytes(b"<p>" + bytes(range(1, 32)) * 40 + b"</p>")
    assert main(["segment", str(controls), "--token-counter", "estimate"]) == 2
    assert one_line(capsys.readouterr().err) == (
        f"webagent segment: error: {controls}: binary data, not a web page: 1080 of its first "
        "1247 characters are control characters or bytes its encoding cannot decode"
    )


def test_a_page_in_its_declared_charset_reaches_the_model_as_written(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    latin1 = tmp_path / "latin1.html"
    text = PAGE.format(meta='<meta charset="iso-8859-1">', label="Grüße")
    latin1.write_bytes(text.encode("latin-1"))
    with FakeOpenAIServer(answer=click_the_button) as fake:
        assert main([*_act(latin1, "--json"), *_live(fake.base_url)]) == 0
    trace = json.loads(capsys.readouterr().out)
    shown = dict(
        (label, i) for i, label in _BUTTON.findall(trace["calls"][0]["prompt"][-1]["content"])
    )
    assert trace["action"]["element_id"] == shown["Grüße"]


def test_a_cassette_with_a_byte_order_mark_replays(
    page: Path, recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    cassette, action = recorded
    cassette.write_bytes(BOM + cassette.read_bytes())
    assert main(_act(page, "--replay", str(cassette))) == 0
    assert _action(capsys.readouterr().out) == action


def test_a_cassette_line_that_is_not_utf8_is_named(
    page: Path, recorded: tuple[Path, str], capsys: pytest.CaptureFixture[str]
) -> None:
    cassette, _ = recorded
    lines = cassette.read_bytes().splitlines(keepends=True)
    number = next(n for n, line in enumerate(lines, 1) if b'"kind": "completion"' in line)
    lines[number - 1], column = latin1_in(lines[number - 1], b"send the form")
    cassette.write_bytes(b"".join(lines))
    assert main(_act(page, "--replay", str(cassette))) == 2
    assert one_line(capsys.readouterr().err) == (
        f"webagent act: error: {cassette}:{number}: not a valid cassette entry ({not_utf8(column)})"
    )


def _answers_file(cassette: Path, path: Path) -> Path:
    completions = [json.loads(line) for line in cassette.read_text(encoding="utf-8").splitlines()]
    append_answers(
        path,
        [
            Answer(key=c["key"], model=MODEL, how="policy", text=c["completion"]["text"])
            for c in completions
            if c["kind"] == "completion"
        ],
    )
    return path


def test_an_answers_file_with_a_byte_order_mark_replays_and_a_bad_byte_is_named(
    page: Path, recorded: tuple[Path, str], tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    cassette, action = recorded
    answers = _answers_file(cassette, tmp_path / "answers.jsonl")
    answers.write_bytes(BOM + answers.read_bytes())
    flags = ["--replay", str(answers), "--model", MODEL]
    assert main(_act(page, *flags)) == 0
    assert _action(capsys.readouterr().out) == action
    header, answer = answers.read_bytes().splitlines(keepends=True)
    bad, column = latin1_in(answer, b'"how"')
    answers.write_bytes(header + bad)
    assert main(_act(page, *flags)) == 2
    assert one_line(capsys.readouterr().err) == (
        f"webagent act: error: {answers}:2: not a valid cassette entry ({not_utf8(column)})"
    )


def test_a_config_file_with_a_byte_order_mark_is_read_and_a_bad_byte_is_named(
    page: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    config = tmp_path / "run.toml"
    config.write_bytes(BOM + b'[agent]\nagent = "raw-html"\n# caf\xc3\xa9\ncontext_budget = 2048\n')
    with FakeOpenAIServer(answer=click_the_button) as fake:
        assert main([*_act(page, "--config", str(config), "--json"), *_live(fake.base_url)]) == 0
    trace = json.loads(capsys.readouterr().out)
    assert trace["action"] is not None and trace["action"]["element_id"] != "none"
    config.write_bytes(b'[agent]\nagent = "raw-html"\n# caf\xe9\n')
    assert main([*_act(page, "--config", str(config)), "--backend", "openai"]) == 2
    assert one_line(capsys.readouterr().err) == (
        f"webagent act: error: --config {config}: line 3: {not_utf8(6)}"
    )


def _batch(out: Path, *flags: str) -> int:
    argv = ["eval", "--data", str(SAMPLES), "--out", str(out), "--agent", "raw-html"]
    argv += ["--no-gist-cache", "--no-progress", "--bootstrap", "5", "--model", MODEL]
    argv += ["--context-budget", "8192"]  # a model the table of known models does not hold
    return main([*argv, "--backend", "batch", "--token-counter", "estimate", *flags])


def _answered_round(out: Path) -> Path:
    """The Batch API's output file for round 1, answered by the policy."""
    requests = (out / "batch" / "round-001.requests.jsonl").read_text().splitlines()
    lines = []
    for request in map(json.loads, requests):
        message = {"role": "assistant", "content": click_the_first_id(request["body"])}
        body = {"model": MODEL, "choices": [{"index": 0, "message": message}], "usage": {}}
        response = {"status_code": 200, "body": body}
        lines.append(json.dumps({"custom_id": request["custom_id"], "response": response}))
    path = out.parent / "batch-output.jsonl"
    path.write_text("".join(line + "\n" for line in lines))
    return path


def test_batch_results_with_a_byte_order_mark_are_taken_and_a_bad_byte_is_named(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "run"
    assert _batch(out) == 5  # the act requests wait in round 1
    results = _answered_round(out)
    lines = results.read_bytes().splitlines(keepends=True)
    lines[1], column = latin1_in(lines[1], b'"response"')
    results.write_bytes(b"".join(lines))
    capsys.readouterr()
    assert _batch(out, "--batch-results", str(results)) == 2
    assert one_line(capsys.readouterr().err) == (
        f"webagent eval: error: {results}:2: not a Batch API result line ({not_utf8(column)}); "
        "expected custom_id and "
        "response.status_code/response.body or error"
    )
    results = _answered_round(out)
    results.write_bytes(BOM + results.read_bytes())
    assert _batch(out, "--batch-results", str(results)) == 0
    answered = (out / "predictions.jsonl").read_text().splitlines()
    assert len(answered) == 5 and all('"error_class":null' in line for line in answered)
