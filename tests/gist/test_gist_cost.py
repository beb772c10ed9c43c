"""A gist served from the cache counts what it had cost to write, apart from tokens spent."""

from __future__ import annotations

import sqlite3
from collections.abc import Callable
from pathlib import Path

from webagent.agents.readagent import name_controls
from webagent.gist.cache import CachedGist, GistCache
from webagent.gist.gister import ModelGister, split_evenly
from webagent.html.fragment import Fragment
from webagent.method.memory import shown_ids
from webagent.model.calls import CallLog
from webagent.model.client import Model


def fragment(index: int, text: str, control: bool = True) -> Fragment:
    link = f"<a id=a{index}>{text}</a>" if control else text
    html = f"<div id=f{index}>{link}</div>"
    return Fragment(
        index=index,
        path=f"body > div#{index}",
        html=html,
        text=text,
        element_ids=[f"f{index}", f"a{index}"] if control else [f"f{index}"],
        interactive_ids=[f"a{index}"] if control else [],
        tokens=len(html) // 4,
    )


FRAGMENTS = [fragment(i, f"item {i}") for i in range(3)]


def test_a_batch_shares_its_tokens_evenly() -> None:
    assert split_evenly(10, 3) == [4, 3, 3] and sum(split_evenly(7, 7)) == 7


def test_cache_hits_count_their_cost_as_served_not_spent(
    scripted_model: Callable[..., Model], tmp_path: Path
) -> None:
    model = scripted_model(lambda _r: '{"1": "a (id=1)", "2": "b (id=2)", "3": "c (id=3)"}')
    gister = ModelGister(30, 64, batch=8)
    with GistCache(tmp_path / "gists.sqlite") as cache:
        first = CallLog(model)
        gists = gister.gist_all(FRAGMENTS, first, cache)
        spent = first.usage()["gist"]
        assert spent.calls == 1 and spent.cached_tokens == 0
        written = spent.input_tokens + spent.output_tokens
        second = CallLog(model)
        assert gister.gist_all(FRAGMENTS, second, cache) == gists
        served = second.usage()["gist"]
    assert (served.calls, served.input_tokens, served.output_tokens) == (0, 0, 0)
    assert (served.cache_hits, served.cached_tokens) == (3, written)


def test_a_cache_an_older_version_wrote_still_opens(tmp_path: Path) -> None:
    path = tmp_path / "old.sqlite"
    with sqlite3.connect(path) as old:
        old.execute("CREATE TABLE gists (key TEXT PRIMARY KEY, gist TEXT)")
        old.execute("INSERT INTO gists VALUES ('k', 'old gist')")
    old.close()
    with GistCache(path) as cache:
        assert cache.get_entry("k") == CachedGist("old gist", 0)  # its cost is unknown: 0
        cache.put("n", "new gist", 42)
        assert cache.peek_entry("n") == CachedGist("new gist", 42) and cache.peek("n") == "new gist"


def test_gists_that_name_no_id_leave_the_act_prompt_ids_from_extractive_gists() -> None:
    plain = [*FRAGMENTS, fragment(3, "just words", control=False)]
    page_ids = [i for f in plain for i in f.element_ids]
    named = ["a (id=a0)", "b", "c", "words"]
    assert name_controls(plain, named, 30, 64, len) == named  # one id is named: as written
    unnamed = name_controls(plain, ["a", "b", "c", "words"], 30, 64, len)
    assert [g.startswith("[extractive] ") for g in unnamed] == [True, True, True, False]
    assert shown_ids("\n".join(unnamed), page_ids) == ["a0", "a1", "a2"]
