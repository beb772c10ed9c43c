"""The MiniWoB oracle policy (scripted): answers each act request by reading the task and the
page in the prompt, as a person would (click the button the task quotes, type the text it
quotes, then Submit: ``browsergym_agent.policy``). Here it answers a request *body*: what
``--backend openai`` sends and what ``--backend batch`` writes into a round's file; and it
answers a whole round the way a helper would, writing the Batch API's output file that
``--batch-results`` reads. It never sees the task's solution, only the prompt."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from browsergym_agent import policy

from webagent.model.base import Message, Request

MODEL = "oracle-model"
HOW = "MiniWoB oracle policy (scripted)"


def phase(body: dict[str, Any]) -> str:
    """Which request this is, from the answer's schema (the body does not name its phase)."""
    format_ = body.get("response_format") or {}
    schema = (format_.get("json_schema") or {}).get("schema") or format_.get("schema") or {}
    props = schema.get("properties", {})
    if "element_id" in props:
        return "act"
    return "lookup" if "pages" in props else "gist"


def answer(body: dict[str, Any]) -> str:
    messages = tuple(Message(role=m["role"], content=m["content"]) for m in body["messages"])
    return policy.answer(Request(messages=messages, phase=phase(body)))  # type: ignore[arg-type]


def answer_round(batch_dir: Path, number: int, skip: int = 0) -> Path:
    """The Batch API's output file for round ``number``, answered by the oracle (``skip``: leave
    out that many answers, the first ones). Returns its path."""
    requests = (batch_dir / f"round-{number:03d}.requests.jsonl").read_text().splitlines()
    out = []
    for line in requests[skip:]:
        request = json.loads(line)
        choice = {"index": 0, "message": {"role": "assistant", "content": answer(request["body"])}}
        body = {"model": MODEL, "choices": [choice], "usage": {}}
        out.append(
            {"custom_id": request["custom_id"], "response": {"status_code": 200, "body": body}}
        )
    path = batch_dir / f"round-{number:03d}.results.jsonl"
    path.write_text("".join(json.dumps(o) + "\n" for o in out))
    return path
