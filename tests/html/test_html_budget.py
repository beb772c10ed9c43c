"""plan_segmentation: the gist prompt and the act prompt both fit the window."""

from __future__ import annotations

import pytest

from webagent.errors import ConfigError
from webagent.html.budget import plan_segmentation
from webagent.tokens import estimate_tokens


@pytest.mark.parametrize(
    ("window", "gist", "reserved", "reopen"),
    [
        (8192, 72, 1024, 5),
        (8192, 40, 600, 1),
        (4096, 64, 800, 3),
        (32768, 100, 2000, 5),
        (2048, 32, 500, 2),
    ],
)
def test_both_prompts_fit(window: int, gist: int, reserved: int, reopen: int) -> None:
    plan = plan_segmentation(window, gist, reserved, reopen)
    assert plan.max_fragments is not None and plan.max_fragments > reopen
    gist_prompt = plan.max_fragments * gist + reserved
    act_prompt = reopen * plan.max_fragment_tokens + (plan.max_fragments - reopen) * gist + reserved
    assert gist_prompt <= window
    assert act_prompt <= window
    assert act_prompt > window - reopen - gist, "the act prompt uses the window, not a slice"
    assert 0 <= plan.min_fragment_tokens <= plan.max_fragment_tokens


def test_eight_k_window_numbers() -> None:
    plan = plan_segmentation(8192, 72, 1024, 5)
    assert (plan.max_fragments, plan.max_fragment_tokens, plan.depth) == (49, 800, 6)
    assert plan_segmentation(8192, 72, 1024, 5, depth=7).depth == 7


@pytest.mark.parametrize(
    ("window", "gist", "reserved", "reopen", "match"),
    [
        (1000, 100, 900, 1, "cannot hold"),
        (1150, 60, 1000, 1, "tokens per reopened fragment"),
        (8192, 0, 1000, 1, "at least 1"),
        (8192, 60, -1, 1, "not negative"),
        (8192, 60, 1000, 0, "at least 1"),
    ],
)
def test_impossible_budgets_are_config_errors(
    window: int, gist: int, reserved: int, reopen: int, match: str
) -> None:
    with pytest.raises(ConfigError, match=match):
        plan_segmentation(window, gist, reserved, reopen)


def test_estimate_is_five_eighths_of_the_bytes_rounded_up() -> None:
    assert estimate_tokens("") == 0
    assert estimate_tokens("abcd") == 3
    assert estimate_tokens("日本") == 4  # 6 UTF-8 bytes
    assert estimate_tokens("<a id=n1>x</a>") == 9
