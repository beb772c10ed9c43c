"""Page building pauses the cyclic collector and leaves it as it found it."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from webagent.html.clean import clean_page
from webagent.html.fragment import SegmentSettings
from webagent.html.nogc import paused_gc
from webagent.html.segment import segment_page

PAGE = "<html><body><form><input name=q><button>Go</button></form><p>text</p></body></html>"


@pytest.fixture
def collector_on() -> Iterator[None]:
    was = gc.isenabled()
    gc.enable()
    yield
    if not was:
        gc.disable()


@pytest.mark.usefixtures("collector_on")
def test_paused_inside_and_enabled_after_even_on_error() -> None:
    with paused_gc():
        assert not gc.isenabled()
    assert gc.isenabled()
    with pytest.raises(ValueError), paused_gc():
        raise ValueError("boom")
    assert gc.isenabled()
    with paused_gc(pause=False):
        assert gc.isenabled()


@pytest.mark.usefixtures("collector_on")
def test_a_caller_that_paused_the_collector_keeps_it_paused() -> None:
    gc.disable()
    with paused_gc(), paused_gc():
        assert not gc.isenabled()
    assert not gc.isenabled()  # not turned on behind the caller's back


@pytest.mark.usefixtures("collector_on")
def test_cleaning_and_segmenting_run_paused_unless_counting_waits_on_requests() -> None:
    seen: list[bool] = []

    def local(text: str) -> int:
        seen.append(gc.isenabled())
        return len(text) // 4

    page = clean_page(PAGE)
    assert gc.isenabled()
    segment_page(page, SegmentSettings(), local)
    assert seen and not any(seen) and gc.isenabled()

    class Remote:
        round_trips = True

        def __call__(self, text: str) -> int:
            seen.append(gc.isenabled())
            return len(text) // 4

    seen.clear()
    segment_page(page, SegmentSettings(), Remote())
    assert seen and all(seen)
