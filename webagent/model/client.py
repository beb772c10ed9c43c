"""``Model``: the one wrapper around any backend. It owns retries, timeouts, usage and the
one limit on requests in flight at its endpoint."""

from __future__ import annotations

import logging
import random
import threading
import time
from collections.abc import Callable, Sequence
from concurrent.futures import ThreadPoolExecutor
from types import TracebackType

from webagent.errors import AwaitingAnswerError, ModelError
from webagent.model.base import (
    MESSAGE_TOKENS,
    REPLY_TOKENS,
    Backend,
    Completion,
    Message,
    Request,
)
from webagent.model.counting import TokenCounts
from webagent.model.retry import RetryPolicy
from webagent.model.usage import PhaseStats, UsageLedger, usage_diff
from webagent.model.windows import ContextWindow

log = logging.getLogger(__name__)


class Model:
    """Calls a :class:`Backend` with timeouts, retries and usage accounting.

    Transient errors (5xx, timeouts, connection errors) are retried with exponential backoff
    and jitter, rate limits (429) with a longer one, and never sooner than a ``Retry-After``
    the endpoint sent; fatal errors are raised at once. ``sleep`` and ``rng`` are injectable
    so that tests run without waiting.

    The model holds the only concurrency limit of its endpoint: a semaphore of
    ``backend.max_concurrency`` slots (the ``concurrency`` setting), taken around each
    ``backend.complete`` and nowhere else (not while waiting to retry). Every caller shares it:
    evaluation workers, gist fan-out (:meth:`map_generate`) inside each of them, and any other
    thread, so that no more than ``concurrency`` requests are ever in flight at once.
    """

    def __init__(
        self,
        backend: Backend,
        policy: RetryPolicy | None = None,
        *,
        sleep: Callable[[float], None] = time.sleep,
        rng: random.Random | None = None,
    ) -> None:
        self._backend = backend
        self._policy = policy or RetryPolicy()
        self._sleep = sleep
        self._rng = rng or random.Random()
        self._ledger = UsageLedger()
        self._slots = threading.BoundedSemaphore(self.max_concurrency)
        self._counts = TokenCounts(backend)

    # --- what the model is -------------------------------------------------------------
    @property
    def backend(self) -> Backend:
        return self._backend

    @property
    def policy(self) -> RetryPolicy:
        return self._policy

    @property
    def name(self) -> str:
        return self._backend.name

    @property
    def context_window(self) -> int | None:
        """Tokens the model attends to; None where nothing says (``window``)."""
        return self._backend.context_window

    def window(self) -> ContextWindow:
        """The context window, where the figure comes from and the setting that changes it."""
        return self._backend.window()

    @property
    def max_concurrency(self) -> int:
        return max(1, self._backend.max_concurrency)

    @property
    def count_tokens(self) -> TokenCounts:
        """The one token counter every budget uses: ``count_tokens(text)``, and
        ``count_tokens.many(texts)``; each distinct text is counted by the backend once."""
        return self._counts

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        return self._counts.many(texts)

    def keep_counts(self, counts: dict[str, int]) -> None:
        """Counts of fixed texts, kept for the next run where the backend keeps any."""
        self._backend.keep_counts(counts)

    def count_message_tokens(self, messages: tuple[Message, ...]) -> int:
        if type(self._backend).count_message_tokens is Backend.count_message_tokens:
            # the backend's own formula, on remembered counts
            counts = self._counts.many([m.content for m in messages])
            return sum(c + MESSAGE_TOKENS for c in counts) + REPLY_TOKENS
        return self._backend.count_message_tokens(messages)

    # --- calling it --------------------------------------------------------------------
    def generate(self, request: Request) -> Completion:
        """Answer ``request``, retrying transient errors; raises the last error if all fail."""
        started = time.monotonic()
        attempt = 0
        while True:
            attempt += 1
            try:
                with self._slots:
                    completion = self._backend.complete(request, self._policy.timeout_s)
            except AwaitingAnswerError:
                raise  # not a failure: the answer is to come from a batch round
            except ModelError as exc:
                if not exc.transient or attempt > self._policy.max_retries:
                    self._count_failure(request, attempt)
                    if attempt > 1:
                        exc.add_note(f"{self.name}: gave up after {attempt} attempts")
                    raise
                delay = self._policy.delay(exc, attempt, self._rng)
                log.warning(
                    "%s %s call failed (attempt %d of %d): %s; retrying in %.1f s",
                    self.name,
                    request.phase,
                    attempt,
                    self._policy.max_retries + 1,
                    exc,
                    delay,
                )
                self._sleep(delay)
                continue
            latency = time.monotonic() - started
            completion = completion.model_copy(update={"attempts": attempt, "latency_s": latency})
            self._count_success(request, completion)
            return completion

    def map_generate(self, requests: Sequence[Request]) -> list[Completion | ModelError]:
        """Answer many requests, up to ``max_concurrency`` at once (shared with every other
        caller of this model), in order.

        A request that fails after its retries yields its :class:`ModelError` in place of a
        completion; the others go on.
        """
        workers = min(self.max_concurrency, len(requests))
        if workers <= 1:
            return [self._generate_or_error(request) for request in requests]
        with ThreadPoolExecutor(max_workers=workers, thread_name_prefix="webagent-model") as pool:
            futures = [pool.submit(self._generate_or_error, request) for request in requests]
            return [future.result() for future in futures]

    def _generate_or_error(self, request: Request) -> Completion | ModelError:
        try:
            return self.generate(request)
        except ModelError as exc:
            return exc

    # --- usage -------------------------------------------------------------------------
    def _count_success(self, request: Request, completion: Completion) -> None:
        self._ledger.add_success(request.phase, completion, retries=completion.attempts - 1)

    def _count_failure(self, request: Request, attempts: int) -> None:
        self._ledger.add_failure(request.phase, retries=attempts - 1)

    def usage_snapshot(self) -> dict[str, PhaseStats]:
        """Totals per phase since this model was built (or last reset)."""
        return self._ledger.snapshot()

    def usage_since(self, before: dict[str, PhaseStats]) -> dict[str, PhaseStats]:
        """Usage added since ``before`` (an earlier :meth:`usage_snapshot`)."""
        return usage_diff(self._ledger.snapshot(), before)

    def reset_usage(self) -> None:
        self._ledger.reset()

    # --- lifetime ----------------------------------------------------------------------
    def close(self) -> None:
        self._backend.close()

    def __enter__(self) -> Model:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()

    def __repr__(self) -> str:
        return f"Model({self.name!r}, backend={type(self._backend).__name__})"
