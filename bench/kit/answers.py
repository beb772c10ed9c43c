"""Requests as readable files for a capable model to answer one by one, and its answers back.

    python bench/kit/answers.py split REQUESTS_DIR --out CHUNKS [--size 40] [--busy CHUNKS]
    python bench/kit/answers.py collect CHUNKS --how "who answered, and how"
    (both take --answers FILE: bench/data/live_answers/answers.jsonl for the live figure)

``split`` takes the folders ``bench/figures/method_quality.py --requests`` writes (one per agent
configuration) and cuts each into chunks of ``--size`` requests: ``CHUNKS/<row>-NN/`` holds
``request-III.md`` (the messages exactly as the model would get them, and the answer format)
and ``keys.json``. A chunk never mixes configurations, so whoever answers one never sees
another configuration's prompts for the same task. The answerer writes each answer, exactly
as the model would return it, to ``answer-III.txt`` beside its request.

``collect`` appends every answer found to ``bench/data/method_answers/answers.jsonl`` (request
key -> answer, with ``--how``) and names the requests still without one.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path
from typing import Any

from bench.kit import REPO
from webagent.model.answer_file import Answer, append_answers, read_answers

ANSWERS_DIR = REPO / "bench" / "data" / "method_answers"
#: request cache key -> answer, of a capable model (how they were made: the folder's README)
ANSWERS = ANSWERS_DIR / "answers.jsonl"
#: the commit at which the requests were made, and who answered them
ANSWERED_AT = ANSWERS_DIR / "answered_at.json"
#: the name the answering model goes by in every request (and so in every cache key)
MODEL = "claude-helper"


def render(entry: dict[str, Any]) -> str:
    """One request as the model would read it, in Markdown."""
    body = entry["body"]
    lines = [f"# Request ({entry.get('phase') or 'other'}; at most {body['max_tokens']} tokens)"]
    for message in body["messages"]:
        lines += ["", f"## {message['role']}", "", "````text", message["content"], "````"]
    response_format = body.get("response_format")
    lines += ["", "## Answer format", ""]
    if response_format and response_format.get("type") == "json_schema":
        schema = response_format["json_schema"]["schema"]
        lines += ["A JSON object matching this schema, and nothing else:", "", "```json",
                  json.dumps(schema, indent=1), "```"]  # fmt: skip
    else:
        lines.append("Free text, as the messages ask.")
    return "\n".join(lines) + "\n"


def waiting(folder: Path, answered: set[str]) -> list[dict[str, Any]]:
    """The request lines of the batch folder's waiting rounds that ``answered`` lacks (the
    committed answers are read by the backend, not through ``--batch-results``)."""
    from webagent.model.batch_rounds import BatchFolder

    batch = BatchFolder(folder)
    lines = []
    for round_ in batch.waiting():
        for line in (batch.path / round_.file).read_text().splitlines():
            entry = json.loads(line)
            if entry["custom_id"] not in answered:
                lines.append({"phase": round_.phases.get(entry["custom_id"]), **entry})
    return lines


def write_requests(folders: dict[str, Path], out: Path, answered: set[str]) -> int:
    """Each configuration's requests still to answer (``folders``: its name -> its batch
    folder) under ``out/<name>/requests.jsonl``; a request two share goes to the first."""
    seen: set[str] = set()
    for name, folder in folders.items():
        lines = []
        for entry in waiting(folder, answered):
            if entry["custom_id"] not in seen:
                seen.add(entry["custom_id"])
                lines.append(json.dumps(entry))
        if lines:
            (out / name).mkdir(parents=True, exist_ok=True)
            (out / name / "requests.jsonl").write_text("\n".join(lines) + "\n")
        print(f"{name}: {len(lines)} requests to answer", file=sys.stderr)
    print(f"{len(seen)} requests in all under {out}", file=sys.stderr)
    return 0


def split(requests: Path, out: Path, size: int, busy: list[Path], answers: Path = ANSWERS) -> int:
    """Chunks of the requests the answers file does not answer yet and no chunk under a
    ``busy`` folder holds (being answered)."""
    chunks = 0
    answered = set(read_answers(answers))
    for folder in busy:
        for keys in folder.glob("*/keys.json"):
            answered.update(item["key"] for item in json.loads(keys.read_text()).values())
    for path in sorted(requests.glob("*/requests.jsonl")):
        entries = [json.loads(line) for line in path.read_text().splitlines() if line.strip()]
        entries = [e for e in entries if e["custom_id"] not in answered]
        for start in range(0, len(entries), size):
            chunk = out / f"{path.parent.name}-{start // size + 1:02d}"
            chunk.mkdir(parents=True, exist_ok=True)
            keys = {}
            for number, entry in enumerate(entries[start : start + size], start=1):
                (chunk / f"request-{number:03d}.md").write_text(render(entry))
                keys[f"{number:03d}"] = {"key": entry["custom_id"], "phase": entry.get("phase")}
            (chunk / "keys.json").write_text(json.dumps(keys, indent=1) + "\n")
            chunks += 1
    print(f"{chunks} chunks under {out}", file=sys.stderr)
    return 0


def collect(chunks: Path, how: str, answers_file: Path = ANSWERS) -> int:
    answers, missing = [], []
    for keys_path in sorted(chunks.glob("*/keys.json")):
        for number, item in json.loads(keys_path.read_text()).items():
            answer = keys_path.parent / f"answer-{number}.txt"
            if not answer.exists():
                missing.append(f"{keys_path.parent.name}/request-{number}.md")
                continue
            text = answer.read_text(encoding="utf-8").strip()
            answers.append(
                Answer(key=item["key"], model=MODEL, how=how, text=text, phase=item["phase"] or "")
            )
    added = append_answers(answers_file, answers)
    print(f"{added} new answers appended to {answers_file} ({len(answers)} found)", file=sys.stderr)
    for name in missing:
        print(f"no answer yet: {name}", file=sys.stderr)
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    s = sub.add_parser("split", help="requests -> chunks of readable request files")
    s.add_argument("requests", type=Path)
    s.add_argument("--out", type=Path, required=True)
    s.add_argument("--size", type=int, default=40)
    s.add_argument(
        "--busy", type=Path, action="append", default=[], help="chunks being answered: skip"
    )
    c = sub.add_parser("collect", help="answer files -> the answers file")
    c.add_argument("chunks", type=Path)
    c.add_argument("--how", required=True, help="who answered, and how (recorded per answer)")
    for command in (s, c):
        command.add_argument("--answers", type=Path, default=ANSWERS, help="the answers file")
    args = parser.parse_args()
    if args.command == "split":
        return split(args.requests, args.out, args.size, args.busy, args.answers)
    return collect(args.chunks, args.how, args.answers)


if __name__ == "__main__":
    sys.exit(main())
