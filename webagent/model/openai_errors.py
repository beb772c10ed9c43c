"""OpenAI SDK errors -> :mod:`webagent.errors`: transient, rate-limited, timed out, or fatal."""

from __future__ import annotations

import json
import time
from email.utils import parsedate_to_datetime

from pydantic import ValidationError

from webagent.errors import (
    FatalModelError,
    ModelError,
    ModelTimeoutError,
    RateLimitError,
    TransientModelError,
)

_CONTEXT_WORDS = ("context length", "context window", "maximum context", "too many tokens")
_FORMAT_REFUSED_STATUS = (400, 422, 500)


def classify_openai_error(exc: Exception, where: str) -> ModelError:
    """The :class:`ModelError` that ``exc`` (raised by the SDK while calling ``where``) means."""
    import openai

    if isinstance(exc, ModelError):
        return exc
    if isinstance(exc, openai.APITimeoutError):
        return ModelTimeoutError(f"{where} did not answer within the timeout")
    if isinstance(exc, openai.APIConnectionError):
        cause = exc.__cause__ or exc
        return TransientModelError(f"connection to {where} failed: {cause}")
    if isinstance(exc, openai.APIStatusError):
        error = _by_status(exc.status_code, _detail(exc), where)
        if exc.status_code in (429, 503):
            error.retry_after_s = parse_retry_after(exc.response.headers.get("retry-after"))
        return error
    if isinstance(exc, openai.APIResponseValidationError | ValidationError | ValueError):
        # json.JSONDecodeError is a ValueError: a garbage or truncated body
        return TransientModelError(f"{where} sent an answer that cannot be read: {exc}")
    return FatalModelError(f"{where}: unexpected {type(exc).__name__}: {exc}")


def _by_status(status: int, detail: str, where: str) -> ModelError:
    said = f"{where} answered HTTP {status}: {detail}"
    if status == 429:
        return RateLimitError(said)
    if status == 408:
        return ModelTimeoutError(said)
    if status == 409 or status >= 500:
        return TransientModelError(said)
    if status in (401, 403):
        return FatalModelError(f"{said}; check the API key (OPENAI_API_KEY)")
    if status == 404:
        return FatalModelError(f"{said}; check the model name and base_url")
    if any(word in detail.lower() for word in _CONTEXT_WORDS):
        return FatalModelError(f"{said}; the prompt is too long for the model's context")
    return FatalModelError(said)


def parse_retry_after(value: str | None, now: float | None = None) -> float | None:
    """Seconds a ``Retry-After`` header asks for: a number of seconds or an HTTP date.

    None when absent or unreadable (then the usual backoff applies); never negative.
    """
    if value is None or not value.strip():
        return None
    text = value.strip()
    try:
        return max(0.0, float(text))
    except ValueError:
        pass
    try:
        when = parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None
    if when.tzinfo is None:  # an HTTP date is GMT
        return None
    return max(0.0, when.timestamp() - (time.time() if now is None else now))


def _detail(exc: Exception) -> str:
    """The server's own error message, short."""
    body = getattr(exc, "body", None)
    if isinstance(body, dict):
        inner = body.get("error", body)
        message = inner.get("message") if isinstance(inner, dict) else inner
        if message:
            return str(message)[:300]
    if body is not None:
        return json.dumps(body)[:300] if not isinstance(body, str) else body[:300]
    return str(exc)[:300]


def is_refused_format(exc: ModelError) -> bool:
    """Whether ``exc`` may be an endpoint refusing a ``response_format`` it does not know."""
    status = getattr(exc.__cause__, "status_code", None)
    return status in _FORMAT_REFUSED_STATUS
