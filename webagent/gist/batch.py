"""Batched gisting: several fragments per call, numbered in and numbered out.

:func:`pack_batches` fills each call's context budget with as many fragments as fit, in page
order, beside the fixed instructions (paid once per batch) and the room for one answer per
fragment. :func:`parse_batch_answer` reads the numbered answer (JSON keyed by number, the
complete pairs of a JSON object cut off by the token limit, or numbered lines); a gist that
is missing, empty or claimed twice comes back as ``None`` so the caller re-asks that fragment
alone: a gist is never shifted onto its neighbour.

In the default view the controls of a batch are numbered 1, 2, ... across its parts (shorter
than page ids), and :func:`restore_ids` turns the numbers the model names (``id=N`` or the
view's own mark ``[N]``) back into page ids before a gist is cached, so the cache, the memory
and the act prompt only ever see page ids, written ``(id=PAGE_ID)``; a range of ids is
dropped (it names no single control).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping, Sequence
from typing import Any, Literal

from webagent.answers import find_json
from webagent.html.fragment import Fragment
from webagent.html.reading import marked_view, numbered_view

_LINE = re.compile(r"^\s*(?:\[\s*(\d+)\s*\]|(?:part\s*)?(\d+)\s*[.:)\]-])\s*(.*)$", re.I)
_WORDLESS = re.compile(r"^[\W_]*$")
_SPACE = re.compile(r"\s+")
_PART = re.compile(
    r'<part n="(\d+)"(?: path="[^"\n]*")?>\n(.*?)\n</part>(?=\n<part n="|$)', re.DOTALL
)

#: tokens per answer for its number, quotes and separators in the JSON object
ANSWER_FRAME_TOKENS = 6

#: what the gister reads of a fragment: its reading view (:mod:`webagent.html.reading`) with
#: the controls numbered within the prompt (``reading``) or marked by their page ids
#: (``reading-ids``), or its compact HTML; the gist prompts describe each (``[choices.view_note]``)
GistView = Literal["reading", "reading-ids", "html"]

#: an id the model names in the form the prompts show (``id=12``, ``id="n12"``), with its
#: parentheses if any
_NAMED_ID = re.compile(r'(\s*\(\s*)?\bid="?([^\s>"\',);\]]+)"?(\s*\))?')
#: the reading view's own mark as the model copies it into a gist: ``[5]``, ``[5 button]``,
#: ``[n12 input placeholder="Email"]``
_NAMED_MARK = re.compile(r"\[\s*([^\s\[\]]+)((?:\s[^\[\]\n]*)?)\]")
#: one end of a range: a page id (``2761``, ``n12``) or a prompt number
_END = r'"?[A-Za-z_]*\d+"?'
_TO = r"(?:-|\u2013|\u2014|\.\.\.?|\u2026|\bto\b|\bthrough\b|\bthru\b)"
#: a range of ids (``ids 20-27``, ``id=20..27``, ``(ids 20 to id=27)``, ``[20-27]``)
_ID_RANGE = re.compile(
    rf"(\s*\(\s*)?(?:\bids?\s*[=:]?\s*{_END}\s*{_TO}\s*(?:\bids?\s*[=:]?\s*)?{_END}"
    rf"|\[\s*{_END}\s*{_TO}\s*{_END}\s*\])(\s*\))?",
    re.I,
)


def fragment_view(fragment: Fragment, view: GistView, first: int = 1) -> tuple[str, list[str]]:
    """What the gist prompt shows of ``fragment``, and the page ids of its marks in order
    (``reading``: number ``first + k`` is ``ids[k]``; ``reading-ids`` marks by page id;
    ``html`` marks nothing: none)."""
    if view == "reading":
        return numbered_view(fragment, first)
    return marked_view(fragment) if view == "reading-ids" else (fragment.html, [])


def render_part(
    number: int,
    fragment: Fragment,
    show_path: bool = True,
    view: GistView = "reading",
    first: int = 1,
) -> tuple[str, list[str]]:
    """One fragment as the batch prompt shows it (``number`` is 1-based within the batch,
    ``first`` the number of its first control), and the ids its numbers stand for; the path is
    left out where it is the same as the part before it."""
    path = (fragment.path or "(page root)").replace('"', "'")
    head = f'<part n="{number}" path="{path}">' if show_path else f'<part n="{number}">'
    shown, ids = fragment_view(fragment, view, first)
    return f"{head}\n{shown}\n</part>", ids


def render_parts(
    fragments: Sequence[Fragment], view: GistView = "reading"
) -> tuple[str, list[str]]:
    """The parts of one batch prompt, controls numbered from 1 across all of them (so a number
    names one control of the prompt, whichever part the model takes it from), and the ids the
    numbers stand for (number ``k`` is ``ids[k - 1]``)."""
    parts: list[str] = []
    ids: list[str] = []
    for n, fragment in enumerate(fragments, start=1):
        show_path = n == 1 or fragment.path != fragments[n - 2].path
        part, part_ids = render_part(n, fragment, show_path, view, first=len(ids) + 1)
        parts.append(part)
        ids += part_ids
    return "\n".join(parts), ids


def view_marks(ids: Sequence[str], view: GistView) -> dict[str, str] | None:
    """What each mark of a prompt in ``view`` shows, mapped to the page id it stands for:
    ``reading`` numbers its marks 1, 2, ... (``ids[N - 1]``), ``reading-ids`` shows the page
    ids themselves; ``None`` for ``html``, which marks nothing and shows every id as ``id=``."""
    if view == "html":
        return None
    if view == "reading":
        return {str(n): page_id for n, page_id in enumerate(ids, start=1)}
    return {page_id: page_id for page_id in ids}


def restore_ids(gist: str, marks: Mapping[str, str] | None) -> str:
    """A gist with every control it names written as the act prompt reads it, ``(id=PAGE_ID)``.

    ``marks`` maps what the prompt's marks show to page ids (:func:`view_marks`). The model
    may name a control as ``id=N`` or with the view's own mark (``[N]``, ``[N button ...]``,
    written back as ``(id=PAGE_ID ...)``); either is mapped to its page id. An ``id=`` that
    is no mark of the prompt is dropped, never left to pass for a page id: the view shows no
    other id. A range of ids (``ids 20-27``, ``id=20..27``, ``[20-27]``) is dropped in every
    view: it names no control by its words, and the ids inside it were never named at all.
    A bracket whose first word is no mark (``[Part 2]``, ``[sale]``) is the page's own text
    and stays. ``marks`` ``None`` (the HTML view): only ranges are dropped.
    """
    text = _ID_RANGE.sub(lambda m: _dropped(m.group(1), m.group(2)), gist)
    if marks is not None:

        def named_id(match: re.Match[str]) -> str:
            opened, named, closed = match.group(1) or "", match.group(2), match.group(3) or ""
            if named in marks:
                return f"{opened}id={marks[named]}{closed}"
            return _dropped(opened, closed)

        def named_mark(match: re.Match[str]) -> str:
            named, rest = match.group(1), match.group(2).rstrip()
            return f"(id={marks[named]}{rest})" if named in marks else match.group(0)

        text = _NAMED_MARK.sub(named_mark, _NAMED_ID.sub(named_id, text))
    if text == gist:
        return gist
    return _BEFORE_COMMA.sub("", _SPACES.sub(" ", text)).strip()


_SPACES = re.compile(r"[ \t]{2,}")
_BEFORE_COMMA = re.compile(r"[ \t]+(?=[,;])")


def _dropped(opened: str | None, closed: str | None) -> str:
    """What a dropped id leaves: nothing where it had parentheses of its own, else the one
    parenthesis it took with it (so that a list around it stays closed)."""
    opened, closed = opened or "", closed or ""
    return "" if opened and closed else opened + closed


def split_parts(prompt: str) -> list[str]:
    """What a batch prompt shows of each fragment, in order (inverse of :func:`render_parts`)."""
    return [m.group(2) for m in _PART.finditer(prompt)]


def batch_schema(count: int, max_chars: int) -> dict[str, Any]:
    """One string per part number, all required, in order."""
    keys = [str(n) for n in range(1, count + 1)]
    return {
        "type": "object",
        "properties": {k: {"type": "string", "maxLength": max_chars} for k in keys},
        "required": keys,
        "additionalProperties": False,
    }


def answer_room(count: int, gist_max_tokens: int) -> int:
    """``max_tokens`` of a batch call: one gist's room per fragment plus the JSON frame."""
    return count * (gist_max_tokens + ANSWER_FRAME_TOKENS) + 8


def pack_batches(
    part_cost: Callable[[int, int], tuple[int, int]],
    count: int,
    *,
    overhead_tokens: int,
    gist_max_tokens: int,
    budget_tokens: int,
    max_batch: int,
) -> list[list[int]]:
    """Consecutive runs of the fragment indices ``0 .. count - 1`` whose prompt plus answers fit
    ``budget_tokens``.

    ``part_cost(i, first)``: the tokens of fragment ``i`` as :func:`render_part` shows it with
    its controls numbered from ``first`` (plus its separator), and how many numbers it uses;
    ``overhead_tokens``: the prompt with no part in it. A fragment too big to share a call gets
    one of its own. Deterministic: the same fragments give the same batches.
    """
    batches: list[list[int]] = []
    current: list[int] = []
    used, numbered = overhead_tokens, 0
    for index in range(count):
        cost, numbers = part_cost(index, numbered + 1)
        grown = used + cost + answer_room(len(current) + 1, gist_max_tokens)
        if current and (len(current) >= max_batch or grown > budget_tokens):
            batches.append(current)
            current, used, numbered = [], overhead_tokens, 0
            cost, numbers = part_cost(index, 1)
        current.append(index)
        used += cost
        numbered += numbers
    if current:
        batches.append(current)
    return batches


def _clean(text: object) -> str | None:
    if not isinstance(text, str):
        return None
    gist = _SPACE.sub(" ", text).strip()
    return None if _WORDLESS.match(gist) else gist


def _from_json(text: str, count: int) -> dict[int, str | None] | None:
    data = find_json(text)
    if not isinstance(data, dict):
        return None
    found: dict[int, str | None] = {}
    for key, value in data.items():
        digits = re.sub(r"\D", "", str(key))
        if digits and 1 <= int(digits) <= count:
            number = int(digits)
            # the same number twice: neither answer can be trusted
            found[number] = None if number in found else _clean(value)
    return found


#: one complete ``"N": "gist"`` pair of a JSON object, escapes allowed inside the string
_PAIR = re.compile(r'"\s*(?:part\s*)?(\d+)\s*"\s*:\s*"((?:[^"\\]|\\.)*)"', re.I)


def _from_cut_json(text: str, count: int) -> dict[int, str | None]:
    """The complete pairs of a JSON object the answer's token limit cut off: the gists before
    the cut are as good as in a whole object; the rest are missing (re-asked alone)."""
    found: dict[int, str | None] = {}
    for match in _PAIR.finditer(text):
        number = int(match.group(1))
        if not 1 <= number <= count:
            continue
        try:
            value = json.loads(f'"{match.group(2)}"', strict=False)
        except json.JSONDecodeError:
            value = None
        found[number] = None if number in found else _clean(value)
    return found


def _from_lines(text: str, count: int) -> dict[int, str | None]:
    found: dict[int, str | None] = {}
    current: int | None = None
    lines: dict[int, list[str]] = {}
    for line in text.splitlines():
        match = _LINE.match(line)
        if match:
            number = int(match.group(1) or match.group(2))
            if not 1 <= number <= count:
                current = None
                continue
            if number in lines:
                found[number] = None  # claimed twice
            current = number
            lines.setdefault(number, []).append(match.group(3))
        elif current is not None:
            lines[current].append(line)  # a gist that runs over several lines
    for number, parts in lines.items():
        if number not in found:
            found[number] = _clean(" ".join(parts))
    return found


def parse_batch_answer(text: str, count: int) -> list[str | None]:
    """Gist of part 1..``count`` in order; ``None`` where the answer has no usable gist."""
    found = _from_json(text, count)
    if found is None and text.lstrip().startswith("{"):
        found = _from_cut_json(text, count)
    if found is None:
        found = _from_lines(text, count)
    return [found.get(n) for n in range(1, count + 1)]
