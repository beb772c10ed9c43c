"""Token counters a backend can be told to use instead of its own (``token_counter`` setting).

``auto`` is the backend's own: a server's tokenizer, tiktoken for an OpenAI model whose
encoding is on this machine, else the byte estimate. ``estimate`` is
:func:`~webagent.tokens.estimate_tokens` (what an api.openai.com user without a local
tokenizer gets). ``gguf`` is the tokenizer of a GGUF file (``model_path``, default the embedded
SmolLM2's): a real BPE vocabulary, loaded vocabulary-only, without the weights' compute.
"""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

from webagent.errors import MissingDependencyError
from webagent.model.tiktoken_counter import tiktoken_counter
from webagent.tokens import TokenCounter, estimate_tokens

#: the counter the OpenAI backend uses for api.openai.com when no tokenizer is at hand
ESTIMATE = "estimate"


def gguf_counter(path: Path) -> tuple[str, TokenCounter]:
    """``("gguf:NAME", counter)``: the tokenizer of the GGUF file at ``path``."""
    try:
        from llama_cpp import Llama
    except ImportError as exc:
        raise MissingDependencyError("llama-cpp-python", "local") from exc
    llama: Any = Llama(model_path=str(path), vocab_only=True, verbose=False)
    lock = threading.Lock()

    def count(text: str) -> int:
        if not text:
            return 0
        with lock:
            return len(llama.tokenize(text.encode("utf-8"), add_bos=False, special=False))

    return f"gguf:{path.stem}", count


def openai_counter(model: str) -> tuple[str, TokenCounter]:
    """How the OpenAI backend counts for ``model`` at api.openai.com: tiktoken when the
    model's encoding is on this machine, else the byte estimate."""
    return tiktoken_counter(model) or (ESTIMATE, estimate_tokens)


def chosen_counter(choice: str, gguf_path: Path | None) -> tuple[str, TokenCounter] | None:
    """The counter ``choice`` names, or None for ``auto`` (the backend decides)."""
    if choice == "estimate":
        return ESTIMATE, estimate_tokens
    if choice == "gguf":
        if gguf_path is None:
            from webagent.model.settings import default_model_path

            gguf_path = default_model_path()
        return gguf_counter(gguf_path)
    return None


def offline_counter(
    backend: str, model: str | None, choice: str, gguf_path: Path | None
) -> tuple[str, TokenCounter]:
    """A counter that counts a finished run's texts again without its endpoint: the one
    ``choice`` (the ``token_counter`` setting) names; for the batch backend its own
    (``openai_counter``), for the local backend its GGUF's; else the byte estimate (a server's
    tokenizer is not at hand after the run)."""
    chosen = chosen_counter(choice, gguf_path)
    if chosen is not None:
        return chosen
    if backend == "batch" and model:
        return openai_counter(model)
    if backend == "local":
        found = chosen_counter("gguf", gguf_path)
        if found is not None:
            return found
    return ESTIMATE, estimate_tokens
