"""How the model wrapper waits between attempts: exponential backoff with jitter."""

from __future__ import annotations

import random

from pydantic import BaseModel, ConfigDict, Field

from webagent.errors import ModelError, RateLimitError


class RetryPolicy(BaseModel):
    """Timeout and retry schedule of one logical call (one ``Model.generate``)."""

    model_config = ConfigDict(frozen=True)

    timeout_s: float = Field(default=120.0, gt=0, description="per attempt")
    max_retries: int = Field(default=4, ge=0, description="attempts after the first")
    base_delay_s: float = Field(default=1.0, ge=0, description="first wait after a failure")
    max_delay_s: float = Field(default=30.0, ge=0)
    rate_limit_factor: float = Field(default=5.0, ge=1, description="longer waits after HTTP 429")
    jitter: float = Field(default=0.5, ge=0, le=1, description="fraction of the wait randomised")
    max_retry_after_s: float = Field(
        default=300.0, ge=0, description="longest Retry-After (429/503) that is honoured"
    )

    def delay(self, error: ModelError, retry_number: int, rng: random.Random) -> float:
        """Seconds to wait before retry ``retry_number`` (1-based) after ``error``.

        ``base * 2**(n-1)`` (times ``rate_limit_factor`` after a 429), capped at
        ``max_delay_s`` (times the factor for 429), then scaled by a random factor in
        ``[1 - jitter, 1]`` so that concurrent callers do not retry in step. When the endpoint
        said how long to wait (``Retry-After``), the wait is at least that, capped at
        ``max_retry_after_s``.
        """
        factor = self.rate_limit_factor if isinstance(error, RateLimitError) else 1.0
        growth: float = 2.0 ** (retry_number - 1)
        wait = min(self.base_delay_s * factor * growth, self.max_delay_s * factor)
        wait *= 1.0 - self.jitter * rng.random()
        if error.retry_after_s is not None:
            wait = max(wait, min(error.retry_after_s, self.max_retry_after_s))
        return wait
