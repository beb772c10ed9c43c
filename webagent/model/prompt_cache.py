"""The provider's prompt cache, estimated where no answer measured it.

An API that caches prompts (OpenAI automatically, Anthropic up to a breakpoint the client
places) serves the prefix a prompt shares with a recent one from its cache, at the
cached-input price, when that prefix is long enough: at least ``cache_min_tokens``, in steps of
``cache_step_tokens`` (:meth:`~webagent.model.prices.Price.cacheable`). Where an answer says
how many tokens were cached (``usage.prompt_tokens_details.cached_tokens``) that figure is the
measurement; where it does not (answers replayed from files, a server that does not report
it), :func:`estimate_cache` estimates it from the prompts of one task, in the order they were
sent: each call reads the longest prefix it shares with an earlier call of the task, and each
call writes the part of its prefix that a later call reads and that it did not read itself
(what a provider that bills writing apart, Anthropic, charges at its write price).

The tokens of a shared prefix are counted as :meth:`Backend.count_message_tokens` counts a
prompt: every whole message shared with its template allowance, then the common beginning of
the first message that differs.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from pydantic import BaseModel

from webagent.model.base import MESSAGE_TOKENS
from webagent.model.prices import Price
from webagent.tokens import TokenCounter

#: a prompt as a trace records it: messages with ``role`` and ``content``
Prompt = Sequence[Mapping[str, str]]
#: how far two prompts agree: whole messages, then characters of the next one
Shared = tuple[int, int]


class CacheEstimate(BaseModel):
    """One call's estimated prompt cache: tokens read from it, tokens written to it."""

    read: int = 0
    write: int = 0


def common_chars(a: str, b: str) -> int:
    """Length of the common beginning of ``a`` and ``b`` (compared in slices, not by
    character, so that long prompts compare at memory speed)."""
    low, high = 0, min(len(a), len(b))
    while low < high:
        middle = (low + high + 1) // 2
        if a[:middle] == b[:middle]:
            low = middle
        else:
            high = middle - 1
    return low


def shared(a: Prompt, b: Prompt) -> Shared:
    """How far ``a`` and ``b`` agree: the messages equal in both, then the characters the
    next message of each shares (of the same role)."""
    whole = 0
    for first, second in zip(a, b, strict=False):
        if first.get("role") != second.get("role"):
            return whole, 0
        if first.get("content") != second.get("content"):
            return whole, common_chars(first.get("content", ""), second.get("content", ""))
        whole += 1
    return whole, 0


def prefix_tokens(prompt: Prompt, where: Shared, count: TokenCounter) -> int:
    """Tokens of the first ``where`` of ``prompt`` (whole messages with their allowance)."""
    whole, chars = where
    tokens = sum(count(m.get("content", "")) + MESSAGE_TOKENS for m in prompt[:whole])
    if chars and whole < len(prompt):
        tokens += count(prompt[whole].get("content", "")[:chars])
    return tokens


def estimate_cache(
    prompts: Sequence[Prompt], price: Price, count: TokenCounter
) -> list[CacheEstimate]:
    """Per prompt of one task, in the order sent: the tokens ``price``'s provider would serve
    from its cache (the longest prefix shared with an earlier prompt, under its rule) and
    the tokens it would write there first (see the module's doc)."""
    if not price.caches:
        return [CacheEstimate() for _ in prompts]
    n = len(prompts)
    earlier: list[Shared] = [(0, 0)] * n  # the most each prompt shares with an earlier one
    later: list[Shared] = [(0, 0)] * n  # ... with a later one
    for j in range(n):
        for i in range(j):
            agreed = shared(prompts[i], prompts[j])
            earlier[j] = max(earlier[j], agreed)
            later[i] = max(later[i], agreed)
    estimates = []
    for prompt, before, after in zip(prompts, earlier, later, strict=True):
        read = price.cacheable(prefix_tokens(prompt, before, count)) if before != (0, 0) else 0
        reused = price.cacheable(prefix_tokens(prompt, after, count)) if after != (0, 0) else 0
        estimates.append(CacheEstimate(read=read, write=max(0, reused - read)))
    return estimates
