"""The gister contract and the gist cache around it: a gister writes the gists of the
fragments the cache does not hold; :meth:`Gister.gist_all` asks the cache first and fills it.

Gists are cached (``GistCache``) by model, prompt version, gist settings and fragment
content, one entry per fragment whether it was gisted alone or in a batch, with what writing
it cost; a hit counts that cost as tokens served from the cache (``PhaseUsage.cached_tokens``),
never as tokens spent.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import NamedTuple

from webagent.gist.cache import GistCache, gist_key
from webagent.html.fragment import Fragment
from webagent.model.calls import CallLog

__all__ = ["Gister", "Written"]


class Written(NamedTuple):
    """A gist a gister wrote and the tokens writing it cost (input + output; a call that
    gisted several fragments shares its tokens among them)."""

    gist: str
    tokens: int = 0


class Gister(ABC):
    name: str

    def __init__(self, words: int, max_tokens: int) -> None:
        self.words = words
        self.max_tokens = max_tokens

    @property
    @abstractmethod
    def version_tag(self) -> str:
        """What, besides the fragment, determines a gist (goes into the cache key)."""

    @abstractmethod
    def _gist_uncached(self, fragments: list[Fragment], log: CallLog) -> list[Written]:
        """Gists of fragments not found in the cache, same order, with their cost."""

    def gist_all(
        self, fragments: list[Fragment], log: CallLog, cache: GistCache | None
    ) -> list[str]:
        gists: list[str | None] = [None] * len(fragments)
        keys = [self._key(log.model.name, f) for f in fragments]
        todo: list[int] = []
        for i, key in enumerate(keys):
            hit = cache.get_entry(key) if cache is not None else None
            if hit is None:
                todo.append(i)
            else:
                gists[i] = hit.gist
                log.count_hit("gist", tokens=hit.tokens)
        fresh = self._gist_uncached([fragments[i] for i in todo], log)
        for i, written in zip(todo, fresh, strict=True):
            gists[i] = written.gist
            if cache is not None:
                cache.put(keys[i], written.gist, written.tokens)
        return [g or "" for g in gists]

    def counted_first(
        self, fragments: Sequence[Fragment], model_name: str, cache: GistCache | None
    ) -> list[str]:
        """What gisting ``fragments`` (those the cache does not hold) counts first, to be
        counted ahead with the page's own counts; none unless the gister says so
        (:meth:`_counted_first`)."""
        held = cache.peek_entry if cache is not None else lambda _: None
        todo = [f for f in fragments if held(self._key(model_name, f)) is None]
        return self._counted_first(todo) if todo else []

    def _counted_first(self, fragments: list[Fragment]) -> list[str]:
        return []

    def _key(self, model_name: str, fragment: Fragment) -> str:
        return gist_key(
            model_name, self.version_tag, self._settings_tag(), fragment.path + "\n" + fragment.html
        )

    def _settings_tag(self) -> str:
        return f"{self.name}/{self.words}w/{self.max_tokens}t"
