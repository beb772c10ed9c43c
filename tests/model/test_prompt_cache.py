"""The prompt-cache estimate on hand-made prompts, counted one token a word."""

from __future__ import annotations

from mind2web_eval.cost import task_bill
from webagent.contracts import ModelCall
from webagent.model.prices import Price
from webagent.model.prompt_cache import common_chars, estimate_cache, shared

#: a rule small enough to count by hand: at least 12 tokens, in steps of 4
RULE = Price(name="hand", input=1.0, cached_input=0.1, output=1.0, cache_min_tokens=12,
             cache_step_tokens=4)  # fmt: skip
SYSTEM = {"role": "system", "content": "one two three"}  # 3 words + 8 allowance = 11 tokens


def words(text: str) -> int:
    return len(text.split())


def user(text: str) -> dict[str, str]:
    return {"role": "user", "content": text}


def test_common_beginnings() -> None:
    assert common_chars("abcdef", "abcxyz") == 3
    assert common_chars("", "abc") == 0 and common_chars("same", "same") == 4
    assert shared([SYSTEM, user("a b c")], [SYSTEM, user("a b d")]) == (1, 4)
    assert shared([SYSTEM], [{"role": "user", "content": "one two three"}]) == (0, 0)


def test_each_call_reads_the_longest_prefix_an_earlier_one_shares_under_the_rule() -> None:
    prompts = [
        [SYSTEM, user("task w1 w2 w3 page one")],  # first: nothing cached
        # shares the system message (11) + "task w1 w2 w3 page" (5 words) = 16 -> 16
        [SYSTEM, user("task w1 w2 w3 page two")],
        # shares 11 + "task w1" (2) = 13 with either: 12 (whole steps of 4 from 12)
        [SYSTEM, user("task w1 x")],
        # shares only the system message: 11 < 12, nothing
        [SYSTEM, user("other")],
        # the same as the second: 11 + (6 words + 8) = 25 -> 24
        [SYSTEM, user("task w1 w2 w3 page two")],
    ]
    estimates = estimate_cache(prompts, RULE, words)
    assert [e.read for e in estimates] == [0, 16, 12, 0, 24]
    # writes: what a later call reads of a prompt and the prompt did not read itself
    assert [e.write for e in estimates] == [16, 8, 0, 0, 0]


def test_no_cache_rule_no_estimate() -> None:
    flat = Price(name="flat", input=1.0, output=1.0)
    same = [[SYSTEM, user("a " * 50)]] * 3
    assert [e.read for e in estimate_cache(same, flat, words)] == [0, 0, 0]


def test_a_measured_figure_wins_over_the_estimate() -> None:
    prompts = [[SYSTEM, user("task w1 w2 w3 page one")], [SYSTEM, user("task w1 w2 w3 page two")]]
    calls = [
        ModelCall(phase="act", prompt=prompts[0], response="x", input_tokens=17, output_tokens=2),
        ModelCall(phase="act", prompt=prompts[1], response="x", input_tokens=17, output_tokens=2),
    ]
    estimated = task_bill(calls, RULE, words)
    assert (estimated.cached_input_tokens, estimated.cache_write_tokens) == (16, 16)
    calls[1] = calls[1].model_copy(update={"cached_input_tokens": 0})  # the endpoint said 0
    measured = task_bill(calls, RULE, words)
    assert (measured.cached_input_tokens, measured.input_tokens) == (0, 34)
