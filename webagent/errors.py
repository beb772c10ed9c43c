"""The exception tree. Every message names what was wrong and, where there is one, the fix."""

from __future__ import annotations

from typing import Any


class WebAgentError(Exception):
    """Base of every error this toolkit raises on purpose."""


class ConfigError(WebAgentError):
    """A setting is missing or inconsistent (no API key, unknown agent, bad budget...)."""


class MissingDependencyError(ConfigError):
    """An optional dependency is not installed; the message carries the install command."""

    def __init__(self, package: str, extra: str) -> None:
        super().__init__(
            f"{package} is not installed; install it with: pip install 'readagent-web[{extra}]'"
        )


class PageError(WebAgentError):
    """A page could not be parsed or holds nothing usable."""


class PromptError(WebAgentError):
    """A prompt template is missing, malformed, or rendered with missing/unknown variables."""


class ModelError(WebAgentError):
    """A model backend failed. ``transient`` errors are retried by the model wrapper.

    ``retry_after_s`` is how long the endpoint asked us to wait (its ``Retry-After`` header on
    a 429 or 503), when it said; the retry policy waits at least that long.
    """

    transient: bool = False

    def __init__(self, *args: object, retry_after_s: float | None = None) -> None:
        super().__init__(*args)
        self.retry_after_s = retry_after_s


class TransientModelError(ModelError):
    """Worth retrying: HTTP 5xx, connection reset, timeout."""

    transient = True


class ModelTimeoutError(TransientModelError):
    """The backend did not answer within the timeout."""


class RateLimitError(TransientModelError):
    """HTTP 429: retried with a longer backoff."""


class FatalModelError(ModelError):
    """Not worth retrying: bad request, authentication, unknown model, context overflow."""


class ReplayMissError(FatalModelError):
    """Replay mode met a request that the cassette does not hold."""


class AwaitingAnswerError(ModelError):
    """The batch backend has no answer yet for this request: it waits in a request round.

    Not an outage and not a failure: the step is pending until the round's results come."""


class OutputParseError(WebAgentError):
    """Model output could not be parsed; the message is written so the model can act on it."""


class DatasetError(WebAgentError):
    """A dataset file or record is broken; the message names file, task and field."""


class TextFileError(WebAgentError):
    """An input file holds bytes that are not UTF-8; the message names the file, the line,
    the column and the byte (:mod:`webagent.textfiles`)."""


def validation_message(exc: Any) -> str:
    """A pydantic ``ValidationError`` as one line: ``field: problem; field: problem``."""
    return "; ".join(
        f"{'.'.join(str(p) for p in err['loc']) or 'settings'}: {err['msg']}"
        for err in exc.errors()
    )
