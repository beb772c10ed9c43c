"""Every request every agent sends on the bundled pages is byte-identical to main's.

Capable-model answers are recorded keyed by ``Request.cache_key``; how tokens are counted
(remembered, counted many at once, searched with speculative probes) must change none of
them. ``tests/data/prompt_keys.json`` holds, per case, the number of requests and a hash of
their cache keys as main sent them (``tests/agents/prompt_record.py``: rerun it with main's code
on the path to write the file again after a deliberate prompt change).
"""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from prompt_record import bundled_pages, digest, record

from webagent.model.client import Model

REPO = Path(__file__).resolve().parents[2]

GOLDEN = json.loads((REPO / "tests" / "data" / "prompt_keys.json").read_text(encoding="utf-8"))


def _expected(counter: str, cases: dict[str, str]) -> dict[str, str]:
    return {case: GOLDEN[f"{counter}|{case}"] for case in cases}


def _flat_or_levelled(got: dict[str, str], expected: dict[str, str], levelled: set[str]) -> None:
    """Every case as main sent it, but those in which the page memory got levels (there the
    look-up asks for sections first: other requests by design)."""
    assert {c: k for c, k in got.items() if c not in levelled} == {
        c: k for c, k in expected.items() if c not in levelled
    }
    assert all(got[c] != expected[c] for c in levelled), "levels that changed nothing"


@pytest.mark.slow
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "as-a-server"])
def test_prompts_are_main_s_under_the_estimate(remote: bool) -> None:
    levelled: set[str] = set()
    got = digest(record(bundled_pages(), None, remote=remote, levelled=levelled))
    assert len(got) == sum(key.startswith("estimate|") for key in GOLDEN)
    _flat_or_levelled(got, _expected("estimate", got), levelled)
    # levels only where gists would be cut below the floor: small budgets, long pages
    assert levelled and all("|8192|" not in c or "long" in c for c in levelled), levelled


@pytest.mark.slow
def test_without_levels_every_prompt_is_main_s() -> None:
    """``gist_floor_words=0`` keeps the flat memory of the paper on every page."""
    levelled: set[str] = set()
    got = digest(record(bundled_pages(), None, settings={"gist_floor_words": 0}, levelled=levelled))
    assert not levelled
    assert got == _expected("estimate", got)


@pytest.mark.llama
@pytest.mark.slow
def test_prompts_are_main_s_under_smollm2(local_model: Model) -> None:
    pages = [p for p in bundled_pages() if p.name in ("flights.html", "shop_long.html")]
    for remote in (False, True):
        levelled: set[str] = set()
        counter = local_model.backend.count_tokens
        keys = record(pages, counter, budgets=(2048, 8192), remote=remote, levelled=levelled)
        got = digest(keys)
        _flat_or_levelled(got, _expected("smollm2", got), levelled)
