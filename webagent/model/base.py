"""The one model interface: requests, completions and the backend contract.

Backends (OpenAI-compatible HTTP, local llama.cpp, record/replay, scripted) implement
:class:`Backend`. Nothing calls a backend directly: :class:`webagent.model.client.Model` wraps
it and owns retries, timeouts, usage accounting and the record/replay cache, once.
"""

from __future__ import annotations

import hashlib
import json
from abc import ABC, abstractmethod
from collections.abc import Sequence
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from webagent.contracts import Phase
from webagent.model.windows import ContextWindow

Role = Literal["system", "user", "assistant"]
#: tokens a chat template adds around each message, and to prime the answer (an allowance)
MESSAGE_TOKENS = 8
REPLY_TOKENS = 4


class Message(BaseModel):
    model_config = ConfigDict(frozen=True)

    role: Role
    content: str


class Request(BaseModel):
    """Everything that changes a model's answer (and the phase, which does not)."""

    model_config = ConfigDict(frozen=True)

    messages: tuple[Message, ...]
    max_tokens: int = Field(default=256, ge=1)
    temperature: float = Field(default=0.0, ge=0.0)
    json_schema: dict[str, Any] | None = Field(
        default=None, description="ask for JSON matching this schema, where the backend can"
    )
    schema_name: str = "answer"
    stop: tuple[str, ...] = ()
    phase: Phase = "other"
    prompt_version: str = Field(default="", description="hash of the template that built it")

    def cache_key(self, model: str) -> str:
        """Hash of what determines the output: model, messages, sampling, schema, prompt."""
        payload = {
            "model": model,
            "messages": [m.model_dump() for m in self.messages],
            "max_tokens": self.max_tokens,
            "temperature": self.temperature,
            "json_schema": self.json_schema,
            "stop": list(self.stop),
            "prompt_version": self.prompt_version,
        }
        blob = json.dumps(payload, sort_keys=True, ensure_ascii=False).encode()
        return hashlib.sha256(blob).hexdigest()


class Completion(BaseModel):
    text: str
    model: str
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    finish_reason: str | None = None
    cached: bool = False
    cached_input_tokens: int | None = Field(
        default=None,
        description="input tokens the provider's prompt cache served (part of input_tokens), "
        "where the endpoint reports them; None where it does not",
    )
    attempts: int = 1


class Backend(ABC):
    """One model endpoint. Raises :mod:`webagent.errors` model errors, classified."""

    #: model identifier recorded in manifests and cache keys
    name: str
    #: tokens the model can attend to (prompt + answer); None: not known (``window``)
    context_window: int | None
    #: how many requests may be in flight at once
    max_concurrency: int = 1

    @abstractmethod
    def complete(self, request: Request, timeout_s: float) -> Completion:
        """Answer one request. Must not retry: the wrapper does."""

    def window(self) -> ContextWindow:
        """The context window, where it comes from and the setting that changes it."""
        return ContextWindow(self.context_window, f"the {type(self).__name__}'s own figure")

    @abstractmethod
    def count_tokens(self, text: str) -> int:
        """Tokens of ``text`` under this model's own tokenizer (or a stated upper estimate)."""

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        """``count_tokens`` of every text, in order: one request where a server takes several
        texts at once (the counts must be the ones ``count_tokens`` gives)."""
        return [self.count_tokens(text) for text in texts]

    @property
    def counts_remotely(self) -> bool:
        """Whether each count is a request to a server (then counting many at once pays)."""
        return False

    def keep_counts(self, counts: dict[str, int]) -> None:  # noqa: B027 - optional hook
        """Counts of fixed texts (what building an agent counts) worth keeping for the next
        run against this endpoint, where counting costs requests; default: nothing kept."""

    def count_message_tokens(self, messages: tuple[Message, ...]) -> int:
        """Tokens of a chat prompt, with a small allowance per message for the template."""
        return sum(self.count_tokens(m.content) + MESSAGE_TOKENS for m in messages) + REPLY_TOKENS

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release resources (HTTP clients, model weights)."""
