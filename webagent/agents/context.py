"""Budgets shared by every agent, so that a comparison measures the method and nothing else.

One context budget C (settings or the model's window). The act prompt gets C minus its
template, the task, the previous actions and the answer. The page is segmented with a plan
derived from the same C (``plan_segmentation``), so that all gists plus the task fit and
``max_lookup`` reopened fragments still fit beside them.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from webagent.agents.settings import AgentSettings
from webagent.errors import ConfigError
from webagent.html.budget import plan_segmentation
from webagent.html.segment import SegmentSettings
from webagent.model.base import Message
from webagent.model.client import Model

#: tokens kept free for chat-template overhead the counters do not see
SAFETY_MARGIN = 32
#: per-gist allowance for the "[Part N] (gist)" prefix
GIST_PREFIX_TOKENS = 8


def context_budget(settings: AgentSettings, model: Model) -> int:
    budget = settings.context_budget or model.context_window
    return min(budget, model.context_window)


def segment_settings(settings: AgentSettings, model: Model) -> SegmentSettings:
    """The segmentation plan for ``settings``' budget, shared by every agent.

    A budget too small for gists plus reopened fragments is a ConfigError for the agents that
    gist; the raw-HTML baseline, which shows no gists, then segments with the defaults.
    """
    try:
        return plan_segmentation(
            context_window=context_budget(settings, model),
            gist_tokens=settings.gist_max_tokens + GIST_PREFIX_TOKENS,
            reserved_tokens=settings.reserve_tokens + settings.act_max_tokens + SAFETY_MARGIN,
            max_reopen=settings.max_lookup,
            depth=settings.depth,
        )
    except ConfigError:
        if settings.agent != "raw-html":
            raise
        default = SegmentSettings()
        return default if settings.depth is None else SegmentSettings(depth=settings.depth)


def format_previous(
    previous: Sequence[str], budget_tokens: int, count_tokens: Callable[[str], int]
) -> str:
    """The most recent previous actions that fit ``budget_tokens``; older ones are counted."""
    if not previous:
        return "None"
    kept: list[str] = []
    used = 0
    for line in reversed(previous):
        cost = count_tokens(line) + 1
        if used + cost > budget_tokens:
            break
        kept.append(line)
        used += cost
    omitted = len(previous) - len(kept)
    head = [f"({omitted} earlier actions omitted)"] if omitted else []
    return "\n".join(head + list(reversed(kept)))


def page_budget(
    model: Model, settings: AgentSettings, empty_prompt: tuple[Message, ...], answer_tokens: int
) -> int:
    """Tokens left for the page in a prompt whose page slot is still empty."""
    overhead = model.count_message_tokens(empty_prompt)
    return context_budget(settings, model) - overhead - answer_tokens - SAFETY_MARGIN
