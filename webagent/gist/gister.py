"""Gisting: one short gist per fragment, by the model or extractively.

Gists are cached (``GistCache``) by model, prompt version, gist settings and fragment
content. Uncached fragments of a page are gisted concurrently, as many at once as the
backend serves (``Model.map_generate``).
"""

from __future__ import annotations

import re
from abc import ABC, abstractmethod

from webagent.errors import ModelError
from webagent.gist.cache import GistCache, gist_key
from webagent.html.fragment import Fragment
from webagent.model.base import Request
from webagent.model.calls import CallLog
from webagent.prompts import load_template

_SPACE = re.compile(r"\s+")


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
    def _gist_uncached(self, fragments: list[Fragment], log: CallLog) -> list[str]:
        """Gists of fragments not found in the cache, same order."""

    def gist_all(
        self, fragments: list[Fragment], log: CallLog, cache: GistCache | None
    ) -> list[str]:
        gists: list[str | None] = [None] * len(fragments)
        keys = [
            gist_key(log.model.name, self.version_tag, self._settings_tag(), f.path + "\n" + f.html)
            for f in fragments
        ]
        todo: list[int] = []
        for i, key in enumerate(keys):
            hit = cache.get(key) if cache is not None else None
            if hit is None:
                todo.append(i)
            else:
                gists[i] = hit
                log.count_hit("gist")
        fresh = self._gist_uncached([fragments[i] for i in todo], log)
        for i, gist in zip(todo, fresh, strict=True):
            gists[i] = gist
            if cache is not None:
                cache.put(keys[i], gist)
        return [g or "" for g in gists]

    def _settings_tag(self) -> str:
        return f"{self.name}/{self.words}w/{self.max_tokens}t"


class ModelGister(Gister):
    """The model writes each gist from the ``gist`` prompt template."""

    name = "model"

    @property
    def version_tag(self) -> str:
        return load_template("gist").version_tag

    def _gist_uncached(self, fragments: list[Fragment], log: CallLog) -> list[str]:
        if not fragments:
            return []
        template = load_template("gist")
        requests = [
            Request(
                messages=template.render(
                    fragment=f.html,
                    path=f.path or "(page root)",
                    word_budget=self.words,
                ),
                max_tokens=self.max_tokens,
                phase="gist",
                prompt_version=template.version_tag,
            )
            for f in fragments
        ]
        from webagent.gist.extractive import extractive_gist

        gists = []
        for fragment, result in zip(fragments, log.generate_many(requests), strict=True):
            if isinstance(result, ModelError):
                raise result
            gist = _SPACE.sub(" ", result.text).strip()
            # an empty answer would hide the fragment from look-up: fall back, visibly
            gists.append(gist or "[extractive] " + extractive_gist(fragment, self.words))
        return gists


def build_gister(kind: str, words: int, max_tokens: int) -> Gister:
    """The ``"model"`` or ``"extractive"`` gister, writing gists of ``words`` words."""
    from webagent.gist.extractive import ExtractiveGister

    gister: type[Gister] = ModelGister if kind == "model" else ExtractiveGister
    return gister(words, max_tokens)
