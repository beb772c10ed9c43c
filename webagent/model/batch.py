"""The batch backend: answers from files, and every request still needed written for the
Batch API (half the price of the same calls one by one, for paper-scale runs).

It never calls a model. A request whose answer is known (``batch_dir``'s ``answers.jsonl``,
the ``answers_from`` files) is answered from it; any other is staged for the next request
round (:mod:`webagent.model.batch_rounds`) and raises :class:`AwaitingAnswerError`, which
leaves the step pending until the round's results come. Each staged line's body is exactly
what :class:`~webagent.model.openai_backend.OpenAIBackend` would send (``chat_body``),
structured output included. Tokens are counted as the OpenAI backend counts for that model
at api.openai.com (tiktoken where its encoding is on this machine, else the byte estimate),
or with the counter ``token_counter`` names.
"""

from __future__ import annotations

import threading

from webagent.errors import AwaitingAnswerError
from webagent.model.answer_file import Answer, read_answers
from webagent.model.base import Backend, Completion, Request
from webagent.model.batch_rounds import BatchFolder
from webagent.model.chat_body import chat_body
from webagent.model.counters import chosen_counter, openai_counter
from webagent.model.settings import ModelSettings
from webagent.model.windows import ContextWindow, known_window, setting_window, unknown_window


class BatchBackend(Backend):
    def __init__(self, settings: ModelSettings) -> None:
        if not settings.model:
            raise ValueError("the batch backend needs a model name")
        self.name = settings.model
        given = settings.context_window
        self._window = (
            setting_window(given)
            if given
            else known_window(self.name) or unknown_window(self.name, "no server is asked")
        )
        self.context_window = self._window.tokens
        self.max_concurrency = settings.concurrency
        mode = settings.structured_output
        self._mode = "json_schema" if mode == "auto" else mode
        self.folder = BatchFolder(settings.batch_dir) if settings.batch_dir else None
        self._extra = settings.answers_from
        self._lock = threading.Lock()
        self._answers: dict[str, Answer] = {}
        self.waiting: dict[str, str] = {}  # key -> phase, met without an answer
        self.reload()
        chosen = chosen_counter(settings.token_counter, settings.model_path)
        self.token_count_method, self._count = chosen or openai_counter(self.name)

    def window(self) -> ContextWindow:
        """The ``context_window`` setting, else the table of known models, else unknown."""
        return self._window

    def reload(self) -> None:
        """Read the answers again (after a round's results came)."""
        answers: dict[str, Answer] = {}
        for path in self._extra:
            for key, answer in read_answers(path).items():
                answers.setdefault(key, answer)
        if self.folder is not None:
            for key, answer in self.folder.answers().items():
                answers.setdefault(key, answer)
        with self._lock:
            self._answers = answers
            self.waiting = {k: p for k, p in self.waiting.items() if k not in answers}

    def body(self, request: Request) -> dict[str, object]:
        """The chat-completions body the OpenAI backend would send for ``request``."""
        return chat_body(self.name, request, self._mode)

    def complete(self, request: Request, timeout_s: float) -> Completion:
        key = request.cache_key(self.name)
        answer = self._answers.get(key)
        if answer is None:
            with self._lock:
                self.waiting.setdefault(key, request.phase)
            if self.folder is not None:
                self.folder.stage(key, self.body(request), request.phase)
            raise AwaitingAnswerError(
                f"{self.name}: the {request.phase} request {key[:12]} waits for a batch answer"
            )
        return Completion(
            text=answer.text,
            model=self.name,
            input_tokens=answer.input_tokens or self.count_message_tokens(request.messages),
            output_tokens=answer.output_tokens or self.count_tokens(answer.text),
            finish_reason="stop",
            cached_input_tokens=answer.cached_input_tokens,
        )

    def count_tokens(self, text: str) -> int:
        return self._count(text) if text else 0
