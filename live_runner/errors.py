"""Errors of the live runner. Page-level failures are not exceptions: they become outcomes."""

from __future__ import annotations

from live_runner.actions import FailureKind
from webagent.errors import ConfigError, WebAgentError


class LiveRunnerError(WebAgentError):
    """The browser side failed in a way the run cannot continue from."""


class BrowserLaunchError(LiveRunnerError):
    """Chromium could not be started; the message names the executable and the fix."""


class SecretError(ConfigError):
    """A secret placeholder names a secret that was not provided, or a secret is unusable."""


class MiniWobError(LiveRunnerError):
    """A MiniWoB++ task page is missing or did not start an episode."""


class ActionFailed(LiveRunnerError):
    """Raised inside the executor for one action; it always becomes a failed ActionOutcome."""

    def __init__(self, kind: FailureKind, message: str) -> None:
        super().__init__(message)
        self.kind = kind
        self.message = message
