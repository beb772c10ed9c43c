"""A scripted in-process backend for unit tests of parsing and control flow.

It answers from a list (in order) or from a function of the request, and keeps every request it
saw. An answer that is an exception is raised, so tests can script failures and retries.
"""

from __future__ import annotations

import threading
from collections.abc import Callable, Sequence

from webagent.errors import FatalModelError
from webagent.model.base import Backend, Completion, Request
from webagent.tokens import estimate_tokens

Answer = str | Exception
Script = Sequence[Answer] | Callable[[Request], Answer]


class ScriptedBackend(Backend):
    def __init__(
        self,
        script: Script,
        *,
        name: str = "scripted",
        context_window: int = 8192,
        max_concurrency: int = 1,
    ) -> None:
        self.name = name
        self.context_window = context_window
        self.max_concurrency = max_concurrency
        self._function = script if callable(script) else None
        self._answers: list[Answer] = [] if callable(script) else list(script)
        self._next = 0
        self._lock = threading.Lock()
        self.requests: list[Request] = []
        self.timeouts: list[float] = []

    def complete(self, request: Request, timeout_s: float) -> Completion:
        with self._lock:
            self.requests.append(request)
            self.timeouts.append(timeout_s)
        # a function runs outside the lock, so that concurrent calls really overlap
        answer = self._function(request) if self._function else self._next_answer(request)
        if isinstance(answer, Exception):
            raise answer
        prompt_tokens = self.count_message_tokens(request.messages)
        return Completion(
            text=answer,
            model=self.name,
            input_tokens=prompt_tokens,
            output_tokens=self.count_tokens(answer),
            finish_reason="stop",
        )

    def _next_answer(self, request: Request) -> Answer:
        with self._lock:
            if self._next >= len(self._answers):
                first_words = " ".join(request.messages[-1].content.split()[:8])
                raise FatalModelError(
                    f"scripted backend {self.name!r} has only {len(self._answers)} answers; "
                    f"request {self._next + 1} ({request.phase}: {first_words!r}) has none"
                )
            answer = self._answers[self._next]
            self._next += 1
            return answer

    def count_tokens(self, text: str) -> int:
        return estimate_tokens(text)

    @property
    def calls(self) -> int:
        """Attempts made so far (each retry counts)."""
        return len(self.requests)
