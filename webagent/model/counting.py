"""``TokenCounts``: the model's one token counter, each distinct text counted once.

``Model.count_tokens`` is this object: called with a text it answers the backend's count;
``many(texts)`` counts several at once (``Backend.count_tokens_many``: one request where the
server can take several texts). Counts are remembered, least recently used first out, up to
``max_chars`` characters of text, across steps: a page's fragments, the prompt's fixed parts
and the previous actions are counted once for as long as they are seen. A count is the
backend's own, so remembering it changes no decision.
"""

from __future__ import annotations

import threading
from collections import OrderedDict
from collections.abc import Iterator, Sequence
from contextlib import contextmanager
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from webagent.model.base import Backend

#: characters of counted text remembered (about 16 MB of strings the caller already holds)
MAX_REMEMBERED_CHARS = 16_000_000


class TokenCounts:
    def __init__(self, backend: Backend, max_chars: int = MAX_REMEMBERED_CHARS) -> None:
        self._backend = backend
        self._max_chars = max_chars
        self._memo: OrderedDict[str, int] = OrderedDict()
        self._chars = 0
        self._lock = threading.Lock()
        #: texts to count with the next backend call (``ahead``), in order
        self._ahead: dict[str, None] = {}
        #: backend calls made (``count_tokens`` or one ``count_tokens_many``) and texts sent
        self.backend_calls = 0
        self.texts_counted = 0
        self._recorders: list[dict[str, int]] = []

    @property
    def round_trips(self) -> bool:
        """Whether each backend count is a request to a server (then batching pays)."""
        return self._backend.counts_remotely

    def __call__(self, text: str) -> int:
        with self._lock:
            cached = self._memo.get(text)
            if cached is not None:
                self._memo.move_to_end(text)
                return cached
            waiting = bool(self._ahead)
        if waiting:
            return self.many([text])[0]
        count = self._backend.count_tokens(text)
        self._remember({text: count}, calls=1)
        return count

    def known(self, text: str) -> int | None:
        """The count of ``text`` where it is remembered, else None (no request is made)."""
        with self._lock:
            return self._memo.get(text)

    def ahead(self, texts: Sequence[str]) -> None:
        """Count ``texts`` with the next backend call, whatever asks for it: counts likely to
        be asked for soon then cost no request of their own."""
        with self._lock:
            self._ahead.update((t, None) for t in texts if t not in self._memo)

    def many(self, texts: Sequence[str]) -> list[int]:
        """The count of every text, in order; the ones not yet known in one backend call."""
        known: dict[str, int] = {}
        with self._lock:
            for text in texts:
                if text not in known and (cached := self._memo.get(text)) is not None:
                    self._memo.move_to_end(text)
                    known[text] = cached
            missing = [t for t in dict.fromkeys(texts) if t not in known]
            if missing and self._ahead:
                missing += [t for t in self._ahead if t not in known and t not in self._memo]
                missing = list(dict.fromkeys(missing))
                self._ahead.clear()
        if missing:
            counts = (
                [self._backend.count_tokens(missing[0])]
                if len(missing) == 1
                else self._backend.count_tokens_many(missing)
            )
            found = dict(zip(missing, counts, strict=True))
            self._remember(found, calls=1)
            known |= found
        return [known[t] for t in texts]

    @contextmanager
    def recording(self) -> Iterator[dict[str, int]]:
        """Every count the backend gives while the block runs, text -> count."""
        counted: dict[str, int] = {}
        with self._lock:
            self._recorders.append(counted)
        try:
            yield counted
        finally:
            with self._lock:
                self._recorders.remove(counted)

    def _remember(self, counts: dict[str, int], calls: int) -> None:
        with self._lock:
            for recorder in self._recorders:
                recorder.update(counts)
            self.backend_calls += calls
            self.texts_counted += len(counts)
            for text, count in counts.items():
                if text not in self._memo:
                    self._chars += len(text)
                self._memo[text] = count
            while self._chars > self._max_chars and self._memo:
                old, _ = self._memo.popitem(last=False)
                self._chars -= len(old)

    def clear(self) -> None:
        with self._lock:
            self._memo.clear()
            self._chars = 0
