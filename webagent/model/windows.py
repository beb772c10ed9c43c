"""A model's context window, and where the figure comes from.

A backend knows its window from, in order: the ``model.context_window`` setting; what its
server reports (llama.cpp's ``/props``, a ``/v1/models`` entry's ``max_model_len`` or
``context_length``); :data:`KNOWN_WINDOWS`, a small table of well-known model names, matched
by the longest prefix of the name (an ``owner/`` before it and the case are ignored); for the
embedded model, the ``n_ctx`` it allocates. Where none of these knows it, the window is
unknown (``tokens`` None): a budget the user asked for is then used as asked, and the run's
manifest says that the window was unknown (:func:`webagent.agents.context.context_budget`).
"""

from __future__ import annotations

from dataclasses import dataclass

#: the setting that states a server model's window, as the command line takes it
SET_WINDOW = "--set model.context_window=N"


@dataclass(frozen=True)
class ContextWindow:
    """Tokens a model attends to (None: not known), where the figure comes from, and the
    setting that changes it (named in every error about the window)."""

    tokens: int | None
    source: str
    change: str = SET_WINDOW

    def record(self) -> dict[str, object]:
        """What a run manifest says about the window."""
        return {"context_window": self.tokens, "window_source": self.source}


@dataclass(frozen=True)
class KnownWindow:
    prefix: str
    tokens: int
    source: str


_OPENAI = "OpenAI's model pages, platform.openai.com/docs/models"
_ANTHROPIC = "Anthropic's models overview, docs.anthropic.com (200K for every Claude 3 and 4)"
_LLAMA_31 = "Meta's Llama 3.1/3.2/3.3 model cards (128K: max_position_embeddings 131072)"
_LLAMA_3 = "Meta's Llama 3 model card (8K: max_position_embeddings 8192)"
_QWEN = "Qwen's config.json max_position_embeddings (32K; 128K only with YaRN rope scaling)"

#: well-known model names -> context window; the longest matching prefix wins
KNOWN_WINDOWS: tuple[KnownWindow, ...] = (
    KnownWindow("gpt-4o", 128_000, _OPENAI),
    KnownWindow("chatgpt-4o", 128_000, _OPENAI),
    KnownWindow("gpt-4-turbo", 128_000, _OPENAI),
    KnownWindow("gpt-4-1106", 128_000, _OPENAI),
    KnownWindow("gpt-4-0125", 128_000, _OPENAI),
    KnownWindow("gpt-4.5", 128_000, _OPENAI),
    KnownWindow("gpt-4.1", 1_047_576, _OPENAI),
    KnownWindow("gpt-4-32k", 32_768, _OPENAI),
    KnownWindow("gpt-4", 8_192, _OPENAI),
    KnownWindow("gpt-3.5-turbo", 16_385, _OPENAI),
    KnownWindow("gpt-5", 400_000, _OPENAI),
    KnownWindow("o1", 200_000, _OPENAI),
    KnownWindow("o1-mini", 128_000, _OPENAI),
    KnownWindow("o1-preview", 128_000, _OPENAI),
    KnownWindow("o3", 200_000, _OPENAI),
    KnownWindow("o4-mini", 200_000, _OPENAI),
    KnownWindow("claude-3", 200_000, _ANTHROPIC),
    KnownWindow("claude-sonnet-4", 200_000, _ANTHROPIC),
    KnownWindow("claude-opus-4", 200_000, _ANTHROPIC),
    KnownWindow("claude-haiku-4", 200_000, _ANTHROPIC),
    KnownWindow("llama-3.1", 131_072, _LLAMA_31),
    KnownWindow("llama-3.2", 131_072, _LLAMA_31),
    KnownWindow("llama-3.3", 131_072, _LLAMA_31),
    KnownWindow("meta-llama-3.1", 131_072, _LLAMA_31),
    KnownWindow("llama3.1", 131_072, _LLAMA_31),
    KnownWindow("llama3.2", 131_072, _LLAMA_31),
    KnownWindow("llama3.3", 131_072, _LLAMA_31),
    KnownWindow("llama-3-", 8_192, _LLAMA_3),
    KnownWindow("meta-llama-3-", 8_192, _LLAMA_3),
    KnownWindow("llama3:", 8_192, _LLAMA_3),
    KnownWindow("qwen2.5", 32_768, _QWEN),
    KnownWindow("qwen3", 32_768, _QWEN),
    KnownWindow("smollm2", 8_192, "SmolLM2's config.json max_position_embeddings (8192)"),
)


def known_window(name: str | None) -> ContextWindow | None:
    """The window :data:`KNOWN_WINDOWS` gives ``name`` (its longest matching prefix), or
    None for a name the table does not know."""
    if not name:
        return None
    bare = name.rsplit("/", 1)[-1].lower()
    matches = [k for k in KNOWN_WINDOWS if bare.startswith(k.prefix)]
    if not matches:
        return None
    best = max(matches, key=lambda k: len(k.prefix))
    return ContextWindow(
        best.tokens, f"the table of known models, entry {best.prefix}* ({best.source})"
    )


def setting_window(tokens: int) -> ContextWindow:
    return ContextWindow(tokens, "the model.context_window setting")


def unknown_window(name: str, why: str) -> ContextWindow:
    return ContextWindow(None, f"unknown: {why}, and {name} is not in the table of known models")


def within_window(budget: int | None, window: int | None) -> int:
    """``budget`` where a window holds it (the agents check that it does), else the window;
    one of them must be known."""
    if budget is None:
        if window is None:
            raise ValueError("neither a budget nor the model's context window is known")
        return window
    return budget if window is None else min(budget, window)
