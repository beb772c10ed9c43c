"""Every request every agent sends on the bundled pages is byte-identical to main's.

Capable-model answers are recorded keyed by ``Request.cache_key``; how tokens are counted
(remembered, counted many at once, searched with speculative probes) must change none of
them. ``tests/data/prompt_keys.json`` holds, per case, the number of requests and a hash of
their cache keys as main sent them (``bench/prompt_record.py``: rerun it with main's code on
the path to write the file again after a deliberate prompt change).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest

from webagent.model.client import Model

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO / "bench"))

from prompt_record import bundled_pages, digest, record  # noqa: E402

GOLDEN = json.loads((REPO / "tests" / "data" / "prompt_keys.json").read_text(encoding="utf-8"))


def _expected(counter: str, cases: dict[str, str]) -> dict[str, str]:
    return {case: GOLDEN[f"{counter}|{case}"] for case in cases}


@pytest.mark.slow
@pytest.mark.parametrize("remote", [False, True], ids=["in-process", "as-a-server"])
def test_prompts_are_main_s_under_the_estimate(remote: bool) -> None:
    got = digest(record(bundled_pages(), None, remote=remote))
    assert len(got) == sum(key.startswith("estimate|") for key in GOLDEN)
    assert got == _expected("estimate", got)


@pytest.mark.llama
@pytest.mark.slow
def test_prompts_are_main_s_under_smollm2(local_model: Model) -> None:
    pages = [p for p in bundled_pages() if p.name in ("flights.html", "shop_long.html")]
    for remote in (False, True):
        got = digest(
            record(pages, local_model.backend.count_tokens, budgets=(2048, 8192), remote=remote)
        )
        assert got == _expected("smollm2", got)
