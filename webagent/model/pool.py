"""Many endpoints of one model as one :class:`Backend`: requests spread over the replicas.

Each replica (an OpenAI-compatible server: vLLM, llama.cpp...) has its own concurrency limit;
a request goes to the live replica with the fewest requests in flight (ties: the one used
least), waiting while every replica is full. A replica whose connection fails (refused,
reset: the server died) is taken out of rotation for the rest of the run, and the request it
held is sent to another live replica at once; other transient errors try the next replica
too. Only when no replica is left, or each has failed this request, does the error reach
:class:`~webagent.model.client.Model`, whose retry policy then applies. Nothing is answered
twice: a request has at most one replica working on it at a time, and one answer.
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from http.client import IncompleteRead

from webagent.errors import ConfigError, ModelError, TransientModelError
from webagent.model.base import Backend, Completion, Message, Request
from webagent.model.windows import ContextWindow

log = logging.getLogger(__name__)


def connection_failed(exc: ModelError) -> bool:
    """Whether ``exc`` says the endpoint is gone (refused, reset, an answer cut off mid-body),
    not merely slow or busy."""
    cause: BaseException | None = exc
    while cause is not None:
        name = type(cause).__name__
        if name == "APITimeoutError" or isinstance(cause, TimeoutError):
            return False
        if name == "APIConnectionError" or isinstance(cause, ConnectionError | IncompleteRead):
            return True  # refused, reset, or an answer cut off as the server died
        cause = cause.__cause__ or cause.__context__
    return False


@dataclass
class Replica:
    backend: Backend
    label: str
    limit: int
    in_flight: int = 0
    completed: int = 0
    failed: int = 0
    alive: bool = True


class ReplicaPool(Backend):
    """Spreads requests over ``backends`` (replicas of one model), ``per_endpoint`` at once each."""

    def __init__(
        self,
        backends: Sequence[Backend],
        *,
        per_endpoint: int = 1,
        labels: Sequence[str] | None = None,
        is_dead: Callable[[ModelError], bool] = connection_failed,
    ) -> None:
        if not backends:
            raise ConfigError("a replica pool needs at least one endpoint")
        names = {b.name for b in backends}
        if len(names) > 1:
            raise ConfigError(f"replicas serve different models: {', '.join(sorted(names))}")
        tags = (
            list(labels) if labels is not None else [f"replica {i}" for i in range(len(backends))]
        )
        self.replicas = [
            Replica(b, t, max(1, per_endpoint)) for b, t in zip(backends, tags, strict=True)
        ]
        self.name = backends[0].name
        self.max_concurrency = sum(r.limit for r in self.replicas)
        self._is_dead = is_dead
        self._free = threading.Condition()

    @property
    def context_window(self) -> int | None:  # type: ignore[override]
        return self.window().tokens

    def window(self) -> ContextWindow:
        """The smallest window a replica knows (each request may go to any of them)."""
        windows = [r.backend.window() for r in self.replicas]
        known = [w for w in windows if w.tokens is not None]
        return min(known, key=lambda w: w.tokens or 0) if known else windows[0]

    def keep_counts(self, counts: dict[str, int]) -> None:
        for replica in self.replicas:
            replica.backend.keep_counts(counts)

    # --- choosing a replica --------------------------------------------------------------
    def _live(self) -> list[Replica]:
        return [r for r in self.replicas if r.alive]

    def _acquire(self, tried: set[int]) -> Replica | None:
        """The least busy live replica not yet tried for this request (waits while all are
        full); None when none is left."""
        with self._free:
            while True:
                candidates = [r for r in self._live() if id(r) not in tried]
                if not candidates:
                    return None
                open_ = [r for r in candidates if r.in_flight < r.limit]
                if open_:
                    chosen = min(open_, key=lambda r: (r.in_flight, r.completed + r.failed))
                    chosen.in_flight += 1
                    return chosen
                self._free.wait()

    def _release(self, replica: Replica, *, ok: bool, dead: bool = False) -> None:
        with self._free:
            replica.in_flight -= 1
            if ok:
                replica.completed += 1
            else:
                replica.failed += 1
            if dead and replica.alive:
                replica.alive = False
                log.warning("%s stopped answering; out of rotation", replica.label)
            self._free.notify_all()

    # --- Backend -------------------------------------------------------------------------
    def complete(self, request: Request, timeout_s: float) -> Completion:
        tried: set[int] = set()
        last: ModelError | None = None
        while True:
            replica = self._acquire(tried)
            if replica is None:
                if last is not None:
                    raise last
                raise TransientModelError(f"no live endpoint left for {self.name}")
            tried.add(id(replica))
            try:
                completion = replica.backend.complete(request, timeout_s)
            except ModelError as exc:
                dead = self._is_dead(exc)
                self._release(replica, ok=False, dead=dead)
                if not exc.transient:
                    raise
                log.info("%s failed (%s); trying another replica", replica.label, exc)
                last = exc
                continue
            self._release(replica, ok=True)
            return completion

    def _counted(self, count: Callable[[Backend], int]) -> int:
        """A count from the first live replica; one whose connection fails leaves rotation."""
        while True:
            live = self._live()
            if not live:
                return count(self.replicas[0].backend)
            try:
                return count(live[0].backend)
            except (ModelError, ConnectionError) as exc:
                # a tokenizer endpoint may drop the connection raw as its server dies
                if isinstance(exc, ModelError) and not self._is_dead(exc):
                    raise
                with self._free:
                    live[0].alive = False
                    self._free.notify_all()
                log.warning("%s stopped answering; out of rotation", live[0].label)

    def count_tokens(self, text: str) -> int:
        return self._counted(lambda backend: backend.count_tokens(text))

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        many: list[int] = []

        def count(backend: Backend) -> int:
            many[:] = backend.count_tokens_many(texts)
            return len(many)

        self._counted(count)
        return many

    @property
    def counts_remotely(self) -> bool:
        return self.replicas[0].backend.counts_remotely

    def count_message_tokens(self, messages: tuple[Message, ...]) -> int:
        return self._counted(lambda backend: backend.count_message_tokens(messages))

    def stats(self) -> dict[str, dict[str, int | bool]]:
        """Per replica: answers, failures, whether it is still in rotation."""
        with self._free:
            return {
                r.label: {"completed": r.completed, "failed": r.failed, "alive": r.alive}
                for r in self.replicas
            }

    def close(self) -> None:
        for replica in self.replicas:
            replica.backend.close()
