"""Look-up: the model chooses which fragments to reopen.

``parse_lookup_answer`` is a pure parser: JSON (``{"pages": [..]}`` / ``{"page": ..}``) or
free text, page numbers out of range, duplicates and junk are recorded as rejected, never
raised. ``lookup_parallel`` (ReadAgent-P) asks once for up to N fragments;
``lookup_sequential`` (ReadAgent-S) asks for one at a time, showing what is already open,
until the model says STOP or N are open.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any

from webagent.answers import find_json
from webagent.contracts import LookupRound
from webagent.html.fragment import Fragment
from webagent.memory import fit_memory, gist_line
from webagent.model.base import Request
from webagent.model.calls import CallLog
from webagent.prompts import load_template

_NAMED_NUMBER = re.compile(r"(?:part|page|fragment)s?\s*(?:#|no\.?|number)?\s*(\d+)", re.I)
_ANY_NUMBER = re.compile(r"(?<![\w.])(-?\d+)(?![\w.])")
_STOP = re.compile(r"\bstop\b", re.I)

PARALLEL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "pages": {"type": "array", "items": {"type": "integer"}},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["pages", "reason"],
}
SEQUENTIAL_SCHEMA: dict[str, Any] = {
    "type": "object",
    "properties": {
        "page": {"type": "string", "maxLength": 8},
        "reason": {"type": "string", "maxLength": 200},
    },
    "required": ["page", "reason"],
}


def _from_json(text: str) -> tuple[list[object], bool, str | None] | None:
    data = find_json(text, lists=True)
    if isinstance(data, list):
        return data, False, None
    if not isinstance(data, dict):
        return None
    reason = data.get("reason") if isinstance(data.get("reason"), str) else None
    raw = data.get("pages", data.get("page", []))
    items = raw if isinstance(raw, list) else [raw]
    stop = any(isinstance(x, str) and _STOP.fullmatch(x.strip()) for x in items)
    return (
        [x for x in items if not (isinstance(x, str) and _STOP.fullmatch(x.strip()))],
        stop,
        reason,
    )


def _from_text(text: str) -> tuple[list[object], bool]:
    numbers: list[object] = [m for m in _NAMED_NUMBER.findall(text)]
    if not numbers:
        numbers = list(_ANY_NUMBER.findall(text))
    return numbers, bool(_STOP.search(text)) and not numbers


def parse_lookup_answer(
    text: str, n_fragments: int, max_pages: int, already_open: Sequence[int] = ()
) -> LookupRound:
    """Turn a look-up answer into 0-based fragment indices, recording what was refused."""
    parsed = _from_json(text)
    if parsed is not None:
        items, stop, reason = parsed
    else:
        items, stop = _from_text(text)
        reason = None
    result = LookupRound(raw=text, stop=stop, reason=reason)
    if not items and not stop:
        result.rejected.append("no page number found in the answer")
    for item in items:
        try:
            number = int(str(item).strip())
        except ValueError:
            result.rejected.append(f"{item!r}: not a page number")
            continue
        result.requested.append(number)
        index = number - 1
        if not 0 <= index < n_fragments:
            result.rejected.append(f"{number}: out of range 1..{n_fragments}")
        elif index in result.accepted or index in already_open:
            result.rejected.append(f"{number}: duplicate")
        elif len(result.accepted) >= max_pages:
            result.rejected.append(f"{number}: over the limit of {max_pages}")
        else:
            result.accepted.append(index)
    return result


@dataclass(frozen=True)
class LookupQuery:
    """What a look-up needs: the step, the page's fragments and gists, and its limits."""

    task: str
    previous: str
    fragments: Sequence[Fragment]
    gists: Sequence[str]
    max_pages: int
    budget_tokens: int
    max_tokens: int
    log: CallLog
    count_tokens: Callable[[str], int]


def _format_gists(gists: Sequence[str]) -> str:
    return "\n".join(gist_line(i, g) for i, g in enumerate(gists))


def lookup_parallel(query: LookupQuery) -> tuple[list[int], list[LookupRound]]:
    task, previous, fragments, gists = query.task, query.previous, query.fragments, query.gists
    max_pages, log = query.max_pages, query.log
    template = load_template("lookup_parallel")
    request = Request(
        messages=template.render(
            task=task, previous_actions=previous, gists=_format_gists(gists), max_pages=max_pages
        ),
        max_tokens=query.max_tokens,
        json_schema=PARALLEL_SCHEMA,
        schema_name="lookup",
        phase="lookup",
        prompt_version=template.version_tag,
    )
    answer = log.generate(request).text
    round_ = parse_lookup_answer(answer, len(fragments), max_pages)
    # what fits is decided where the memory is built (fit_memory), and recorded there
    return list(round_.accepted), [round_]


def lookup_sequential(query: LookupQuery) -> tuple[list[int], list[LookupRound]]:
    task, previous, fragments, gists = query.task, query.previous, query.fragments, query.gists
    max_pages, log = query.max_pages, query.log
    template = load_template("lookup_sequential")
    opened: list[int] = []
    rounds: list[LookupRound] = []
    while len(opened) < max_pages:
        request = Request(
            messages=template.render(
                task=task,
                previous_actions=previous,
                memory=fit_memory(
                    fragments, gists, opened, query.budget_tokens, query.count_tokens
                ).text,
                opened=", ".join(str(i + 1) for i in opened) or "none",
                remaining=max_pages - len(opened),
            ),
            max_tokens=query.max_tokens,
            json_schema=SEQUENTIAL_SCHEMA,
            schema_name="lookup",
            phase="lookup",
            prompt_version=template.version_tag,
        )
        round_ = parse_lookup_answer(log.generate(request).text, len(fragments), 1, opened)
        rounds.append(round_)
        if round_.stop or not round_.accepted:
            break  # STOP, or an answer naming no new page: asking again would repeat it
        fitted = fit_memory(
            fragments, gists, [*opened, *round_.accepted], query.budget_tokens, query.count_tokens
        )
        refused = fitted.edits.reopen_refused
        if refused:
            round_.accepted = []
            round_.rejected += [f"{i + 1}: does not fit the context budget" for i in refused]
            break
        opened = fitted.reopened
    return opened, rounds
