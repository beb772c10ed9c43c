"""The model layer: one ``Model`` wrapper over interchangeable backends.

Backends that need heavy optional packages (``OpenAIBackend`` needs openai,
``LlamaLocalBackend`` needs llama-cpp-python) are imported on first use, so importing this
package stays light.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from webagent.contracts import Phase
from webagent.model.base import (
    Backend,
    Completion,
    Message,
    Request,
    Role,
)
from webagent.model.calls import CallLog
from webagent.model.client import Model
from webagent.model.factory import build_backend, build_model
from webagent.model.replay import RecordingBackend, ReplayBackend
from webagent.model.retry import RetryPolicy
from webagent.model.scripted import ScriptedBackend
from webagent.model.settings import ModelSettings, default_model_path
from webagent.model.usage import PhaseStats, UsageLedger

if TYPE_CHECKING:
    from webagent.model.llama_local import LlamaLocalBackend
    from webagent.model.openai_backend import OpenAIBackend

__all__ = [
    "Backend",
    "CallLog",
    "Completion",
    "LlamaLocalBackend",
    "Message",
    "Model",
    "ModelSettings",
    "OpenAIBackend",
    "Phase",
    "PhaseStats",
    "RecordingBackend",
    "ReplayBackend",
    "Request",
    "RetryPolicy",
    "Role",
    "ScriptedBackend",
    "UsageLedger",
    "build_backend",
    "build_model",
    "default_model_path",
]


def __getattr__(name: str) -> Any:
    """The backends with heavy dependencies, imported on first use."""
    if name == "LlamaLocalBackend":
        from webagent.model.llama_local import LlamaLocalBackend

        return LlamaLocalBackend
    if name == "OpenAIBackend":
        from webagent.model.openai_backend import OpenAIBackend

        return OpenAIBackend
    raise AttributeError(f"module 'webagent.model' has no attribute {name!r}")
