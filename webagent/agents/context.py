"""Budgets shared by every agent, so that a comparison measures the method and nothing else.

One context budget C (settings or the model's window) and one token counter, the model's own
(``Model.count_tokens``: the tokenizer where the backend has one, else the estimate). The
segmentation plan, the gist budgets, the memory, reopening and the act prompt all count with
it, so "every gist plus ``max_lookup`` reopened fragments fit" holds under whichever counter:

* the act prompt gets C minus its template, the task, the previous actions and the answer;
* the page is segmented with a plan derived from the same C (``segment_settings``): fragments
  no larger than ``max_fragment_tokens``, so that ``reopen_room`` holds ``max_lookup`` of them;
* the gists share what is left beside that room (``webagent.method.memory.fit_memory``).

Previous actions are kept whole unless they take more than ``PREVIOUS_SHARE`` of C; gists are
shortened before that, and what is dropped is counted in the trace.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from webagent.agents.settings import AgentSettings
from webagent.errors import ConfigError
from webagent.html.budget import plan_segmentation
from webagent.html.segment import SegmentSettings
from webagent.method.act import act_answer_room
from webagent.method.memory import gist_line
from webagent.model.base import Message
from webagent.model.client import Model
from webagent.tokens import TokenCounter, count_many

#: tokens kept free for chat-template overhead the counters do not see
SAFETY_MARGIN = 32
#: previous actions may take up to this share of the budget before the oldest are dropped
PREVIOUS_SHARE = 0.5
#: a typical ancestor path above a reopened fragment, to size its header line
_TYPICAL_HEADER = "[Part 999] (full) body > … > div#main-content > section#results > form\n"


def context_budget(settings: AgentSettings, model: Model) -> int:
    """The budget every prompt is held to: ``context_budget`` as asked, else the model's
    window. A budget over a known window is a ConfigError naming both and the setting that
    changes the window (nothing is cut silently); where the window is unknown, the budget
    asked for is used (the manifest says the window was unknown), and with no budget either
    it is a ConfigError naming both settings."""
    budget, window = settings.context_budget, model.window()
    if budget is None:
        if window.tokens is None:
            raise ConfigError(
                f"no context budget for {model.name}: its context window is {window.source}; "
                f"give one with --context-budget N, or the window with {window.change}"
            )
        return window.tokens
    if window.tokens is not None and budget > window.tokens:
        raise ConfigError(
            f"context budget {budget} is over the context window of {model.name}: "
            f"{window.tokens} tokens, from {window.source}; ask for at most {window.tokens}, "
            f"or set the window with {window.change} if the model takes more"
        )
    return budget


def budget_record(settings: AgentSettings, model: Model) -> dict[str, object]:
    """What a run manifest says about its budget: the one used, the one asked for, the
    model's window and where that figure comes from."""
    return {
        "context_budget": context_budget(settings, model),
        "context_budget_asked": settings.context_budget,
        **model.window().record(),
    }


def gist_line_tokens(settings: AgentSettings, count: TokenCounter) -> int:
    """The most tokens one gist line takes: the gist plus its ``[Part N] (gist)`` prefix."""
    return settings.gist_max_tokens + count(gist_line(998, "")) + 1


def reopen_header_tokens(count: TokenCounter) -> int:
    return count(_TYPICAL_HEADER)


#: the least room for the page an act prompt may leave
MIN_PAGE_TOKENS = 128


def segment_settings(
    settings: AgentSettings, model: Model, shows_gists: bool = True
) -> SegmentSettings:
    """The segmentation plan for ``settings``' budget under the model's counter.

    A budget too small for gists plus reopened fragments is a ConfigError for an agent that
    shows gists; one that shows none (raw HTML) then segments with the defaults, and a budget
    that leaves it no room for the page at all is a ConfigError too.
    """
    count = model.count_tokens
    # the act answer, and a repair turn where one may follow (webagent.method.act)
    answer_room = act_answer_room(model, settings.act_max_tokens, settings.repair_attempts)
    budget = context_budget(settings, model)
    reserved = settings.reserve_tokens + answer_room + SAFETY_MARGIN
    if budget - reserved < MIN_PAGE_TOKENS:
        raise ConfigError(
            f"--context-budget {budget} leaves {settings.agent} no room for the page: the "
            f"instructions, task and previous actions (--reserve-tokens "
            f"{settings.reserve_tokens}) and the answer with any repair turn ({answer_room}) "
            f"take {reserved} of its tokens; it needs --context-budget "
            f"{reserved + MIN_PAGE_TOKENS} or more"
        )

    def plan(window: int) -> SegmentSettings:
        return plan_segmentation(
            context_window=window,
            gist_tokens=gist_line_tokens(settings, count),
            reserved_tokens=reserved,
            max_reopen=settings.max_lookup,
            depth=settings.depth,
            reopen_header_tokens=reopen_header_tokens(count),
            overflow="keep_fragment_tokens",
        )

    try:
        return plan(budget)
    except ConfigError:
        if shows_gists:
            raise ConfigError(_too_small(settings, budget, plan)) from None
        default = SegmentSettings()
        return default if settings.depth is None else SegmentSettings(depth=settings.depth)


def _too_small(settings: AgentSettings, budget: int, plan: Callable[[int], object]) -> str:
    """Why ``budget`` cannot hold the agent's gists and reopened fragments, in the
    command line's words, with the least budget that can."""
    least = _least_budget(budget, plan)
    return (
        f"--context-budget {budget} is too small for {settings.agent}: the gists beside "
        f"--max-lookup {settings.max_lookup} reopened fragments and the prompt's fixed part "
        f"(--reserve-tokens {settings.reserve_tokens}, the answer and a repair turn) need "
        f"--context-budget {least} or more; raise it, or lower --max-lookup"
    )


def _least_budget(budget: int, plan: Callable[[int], object]) -> int:
    """The smallest budget above ``budget`` that ``plan`` accepts (it is monotone)."""
    low, high = budget, budget * 2
    while not _plans(plan, high):
        low, high = high, high * 2
    while high - low > 1:
        middle = (low + high) // 2
        low, high = (low, middle) if _plans(plan, middle) else (middle, high)
    return high


def _plans(plan: Callable[[int], object], budget: int) -> bool:
    try:
        plan(budget)
    except ConfigError:
        return False
    return True


def reopen_room(settings: AgentSettings, plan: SegmentSettings, count: TokenCounter) -> int:
    """Tokens kept beside the gists for ``max_lookup`` reopened fragments of the plan's size."""
    return settings.max_lookup * (plan.max_fragment_tokens + reopen_header_tokens(count) + 1)


def format_previous(
    previous: Sequence[str], budget_tokens: int, count_tokens: TokenCounter
) -> tuple[str, int]:
    """The most recent previous actions that fit ``budget_tokens``, and how many were dropped.

    Dropped ones are named by a count line in the prompt and in the trace.
    """
    if not previous:
        return "None", 0
    kept: list[str] = []
    used = 0
    latest = list(reversed(previous))
    for line, tokens in zip(latest, count_many(count_tokens, latest), strict=True):
        cost = tokens + 1
        if used + cost > budget_tokens:
            break
        kept.append(line)
        used += cost
    omitted = len(previous) - len(kept)
    head = [f"({omitted} earlier actions omitted)"] if omitted else []
    return "\n".join(head + list(reversed(kept))), omitted


def previous_budget(settings: AgentSettings, model: Model) -> int:
    return int(context_budget(settings, model) * PREVIOUS_SHARE)


def page_budget(
    model: Model, settings: AgentSettings, empty_prompt: tuple[Message, ...], answer_tokens: int
) -> int:
    """Tokens left for the page in a prompt whose page slot is still empty."""
    overhead = model.count_message_tokens(empty_prompt)
    return context_budget(settings, model) - overhead - answer_tokens - SAFETY_MARGIN
