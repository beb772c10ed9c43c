"""The page as the model reads it: numbered gists, with reopened fragments in place.

ReadAgent's memory is the list of gists in page order; a fragment the look-up reopens
replaces its gist at the same position. This module renders that text, decides which
reopened fragments fit the token budget, and lists the element ids the model was shown.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence

from webagent.html.fragment import Fragment

_SHOWN_ID = re.compile(r"\bid=\"?([^\s>\"',);]+)")


def gist_line(index: int, gist: str) -> str:
    return f"[Part {index + 1}] (gist) {gist}"


def full_block(fragment: Fragment) -> str:
    path = f" {fragment.path}" if fragment.path else ""
    return f"[Part {fragment.index + 1}] (full){path}\n{fragment.html}"


def render_memory(
    fragments: Sequence[Fragment], gists: Sequence[str], reopened: Iterable[int]
) -> str:
    opened = set(reopened)
    return "\n".join(
        full_block(f) if f.index in opened else gist_line(f.index, gists[f.index])
        for f in fragments
    )


def render_fragments(fragments: Sequence[Fragment], chosen: Iterable[int]) -> str:
    """Only the chosen fragments, in page order (retrieval and raw-HTML baselines)."""
    keep = set(chosen)
    return "\n".join(full_block(f) for f in fragments if f.index in keep)


def fit_reopened(
    fragments: Sequence[Fragment],
    gists: Sequence[str] | None,
    wanted: Sequence[int],
    budget_tokens: int,
    count_tokens: Callable[[str], int],
) -> tuple[list[int], list[int]]:
    """Accept wanted fragments in priority order while the memory stays within budget.

    Returns (accepted, refused_for_budget). With ``gists`` the gists of all fragments stay
    and a reopened fragment replaces its gist; with None only reopened fragments are shown.
    """

    def gist_cost(index: int) -> int:
        return count_tokens(gist_line(index, gists[index])) + 1 if gists is not None else 0

    used = sum(gist_cost(i) for i in range(len(fragments)))
    accepted: list[int] = []
    refused: list[int] = []
    for index in wanted:
        extra = count_tokens(full_block(fragments[index])) + 1 - gist_cost(index)
        if used + extra <= budget_tokens:
            accepted.append(index)
            used += extra
        else:
            refused.append(index)
    return accepted, refused


def shown_ids(text: str, page_ids: Iterable[str]) -> list[str]:
    """Ids of page elements that appear as ``id=...`` in what the model was shown."""
    valid = set(page_ids)
    seen: dict[str, None] = {}
    for match in _SHOWN_ID.finditer(text):
        if match.group(1) in valid:
            seen.setdefault(match.group(1), None)
    return list(seen)
