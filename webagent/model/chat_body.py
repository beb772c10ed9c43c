"""The body of an OpenAI chat-completions request: one function, used by the OpenAI backend
when it calls an endpoint and by the batch backend when it writes a Batch API input line, so
that a batched request is exactly the request the endpoint would have been sent.

Structured output is asked for in the endpoint's dialect (``mode``): ``json_schema`` (OpenAI,
vLLM, Ollama, llama.cpp), ``json_object`` with a ``schema`` (llama-cpp-python's server), a GBNF
``grammar`` (an extra body field), or ``none``.
"""

from __future__ import annotations

import json
from typing import Any

from webagent.errors import ConfigError, MissingDependencyError
from webagent.model.base import Request


def chat_body(model: str, request: Request, mode: str) -> dict[str, Any]:
    """The JSON body of ``POST /v1/chat/completions`` for ``request`` (extra fields merged)."""
    body: dict[str, Any] = {
        "model": model,
        "messages": [m.model_dump() for m in request.messages],
        "max_tokens": request.max_tokens,
        "temperature": request.temperature,
    }
    if request.stop:
        body["stop"] = list(request.stop)
    structured = structured_kwargs(request, mode)
    body.update(structured.pop("extra_body", {}))
    body.update(structured)
    return body


def structured_kwargs(request: Request, mode: str) -> dict[str, Any]:
    """The SDK keyword arguments that ask for ``request.json_schema`` in dialect ``mode``."""
    schema = request.json_schema
    if schema is None or mode == "none":
        return {}
    if mode == "json_schema":
        spec = {"name": request.schema_name, "schema": schema}
        return {"response_format": {"type": "json_schema", "json_schema": spec}}
    if mode == "json_object":
        return {"response_format": {"type": "json_object", "schema": schema}}
    if mode == "grammar":
        return {"extra_body": {"grammar": _gbnf(schema)}}
    raise ConfigError(f"unknown structured_output mode {mode!r}")


def _gbnf(schema: dict[str, Any]) -> str:
    try:
        from llama_cpp.llama_grammar import json_schema_to_gbnf
    except ImportError as exc:
        raise MissingDependencyError("llama-cpp-python", "local") from exc
    return str(json_schema_to_gbnf(json.dumps(schema)))
