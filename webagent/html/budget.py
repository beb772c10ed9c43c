"""Size fragments from the model's context window.

ReadAgent's prompts must fit the window twice over:

* the **gist / look-up prompt** holds every fragment's gist plus the task and instructions:
  ``max_fragments * gist_tokens + reserved_tokens <= context_window``;
* the **act prompt** holds up to ``max_reopen`` reopened fragments in full plus the gists of
  all the others: ``max_reopen * max_fragment_tokens + (max_fragments - max_reopen) *
  gist_tokens + reserved_tokens <= context_window``.

:func:`plan_segmentation` splits the window evenly between the two: half of what is left after
``reserved_tokens`` goes to gists (which fixes ``max_fragments``), the other half to reopened
fragments (which fixes ``max_fragment_tokens``; ``reopen_header_tokens`` is taken off each for
the ``[Part N] (full) path`` line above a reopened fragment). Agents segment with
``overflow="keep_fragment_tokens"``: a fragment never grows past ``max_fragment_tokens``
(except one indivisible element), so ``max_reopen`` of them always fit, and on a page with
more fragments than ``max_fragments`` the gists share the gist half and are shorter
(``webagent.method.memory.fit_memory``). See docs/SEGMENTATION.md for the numbers on real pages.
"""

from __future__ import annotations

from typing import Literal

from webagent.errors import ConfigError
from webagent.html.fragment import SegmentSettings

__all__ = ["plan_segmentation"]

DEFAULT_DEPTH = 6
MIN_FRAGMENT_TOKENS = 64
GIST_SHARE = 0.5
Overflow = Literal["keep_fragment_tokens", "keep_fragment_count"]


def plan_segmentation(
    context_window: int,
    gist_tokens: int,
    reserved_tokens: int,
    max_reopen: int,
    depth: int | None = None,
    *,
    reopen_header_tokens: int = 0,
    overflow: Overflow = "keep_fragment_count",
) -> SegmentSettings:
    """Settings whose fragments let both the gist prompt and the act prompt fit the window.

    ``gist_tokens``: the most tokens one gist takes (its ``max_tokens`` plus the label around
    it). ``reserved_tokens``: task, instructions, previous actions and the answer.
    ``max_reopen``: how many fragments the look-up may reopen at once (1 for ReadAgent-S).
    """
    _check(context_window, gist_tokens, reserved_tokens, max_reopen)
    free = context_window - reserved_tokens
    max_fragments = max(max_reopen + 1, int(free * GIST_SHARE) // gist_tokens)
    reopen_room = free - (max_fragments - max_reopen) * gist_tokens
    max_fragment_tokens = reopen_room // max_reopen - reopen_header_tokens
    if max_fragment_tokens < 2 * MIN_FRAGMENT_TOKENS:
        raise ConfigError(
            f"context_window={context_window} leaves only {max_fragment_tokens} tokens per "
            f"reopened fragment (reserved_tokens={reserved_tokens}, gist_tokens={gist_tokens}, "
            f"max_reopen={max_reopen}); use a larger window or fewer reopened fragments"
        )
    return SegmentSettings(
        depth=DEFAULT_DEPTH if depth is None else depth,
        max_fragment_tokens=max_fragment_tokens,
        min_fragment_tokens=min(MIN_FRAGMENT_TOKENS, max_fragment_tokens // 4),
        max_fragments=max_fragments,
        overflow=overflow,
    )


def _check(context_window: int, gist_tokens: int, reserved_tokens: int, max_reopen: int) -> None:
    if gist_tokens < 1 or max_reopen < 1 or reserved_tokens < 0:
        raise ConfigError(
            f"gist_tokens ({gist_tokens}) and max_reopen ({max_reopen}) must be at least 1 and "
            f"reserved_tokens ({reserved_tokens}) not negative"
        )
    if context_window <= reserved_tokens + gist_tokens * (max_reopen + 1):
        raise ConfigError(
            f"context_window={context_window} cannot hold reserved_tokens={reserved_tokens} "
            f"plus {max_reopen + 1} gists of {gist_tokens} tokens"
        )
