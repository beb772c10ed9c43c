"""Any OpenAI-compatible chat endpoint: OpenAI, vLLM, Ollama, llama.cpp's servers.

The SDK's own retries are off (the :class:`~webagent.model.client.Model` wrapper retries), and
every SDK error is classified into :mod:`webagent.errors`. Structured output is asked for in the
endpoint's dialect (``structured_output`` setting): ``json_schema`` (OpenAI, vLLM, Ollama,
llama.cpp), ``json_object`` with a ``schema`` (llama-cpp-python's server, which answers HTTP 500
to ``json_schema``), a GBNF ``grammar``, or ``none``. ``auto`` uses ``json_schema`` and, on
an endpoint other than OpenAI's, falls back once to ``json_object`` if that is refused, then
keeps whichever worked.
"""

from __future__ import annotations

import logging
import threading
from collections import OrderedDict
from collections.abc import Sequence
from typing import TYPE_CHECKING, Any, Literal
from urllib.parse import urlsplit

from webagent.errors import ConfigError, FatalModelError, MissingDependencyError, ModelError
from webagent.model.base import Backend, Completion, Request
from webagent.model.chat_body import structured_kwargs
from webagent.model.counters import chosen_counter
from webagent.model.openai_errors import classify_openai_error, is_refused_format
from webagent.model.server_extras import (
    BatchCounter,
    Counter,
    NotOffered,
    find_context_window,
    server_root,
)
from webagent.model.settings import ModelSettings
from webagent.model.tiktoken_counter import tiktoken_counter
from webagent.model.tokenizer_profile import ProfileFile, ServerTokenizer
from webagent.model.windows import (
    SET_WINDOW,
    ContextWindow,
    known_window,
    setting_window,
    unknown_window,
)
from webagent.tokens import estimate_tokens

if TYPE_CHECKING:
    from openai import OpenAI

log = logging.getLogger(__name__)

OPENAI_HOST = "api.openai.com"
_TOKEN_CACHE_SIZE = 4096
_PROBE_TIMEOUT_S = 10.0
#: token counters that ask the server (one request a count)
_REMOTE_METHODS = ("llama-cpp-python", "llama.cpp")


class OpenAIBackend(Backend):
    """With ``settings.planning`` (a cost plan, which calls no model) no API key is needed,
    and the server is asked nothing that the token counter does not ask it (with
    ``token_counter`` estimate or gguf, the window comes from the setting or the table of
    known models). ``settings.tokenizer_profiles``: where what a server's tokenizer took to
    learn is kept between runs (:mod:`webagent.model.tokenizer_profile`)."""

    def __init__(self, settings: ModelSettings) -> None:
        if not settings.model:
            where = settings.base_url or "the endpoint"
            raise ConfigError(
                f"no model name for {where}: set WEBAGENT_MODEL or --model "
                "(GET <base_url>/models lists what a server offers)"
            )
        self.name = settings.model
        self.max_concurrency = settings.concurrency
        self._settings = settings
        self._base_url = settings.base_url
        self._is_openai = settings.base_url is None or urlsplit(settings.base_url).hostname in (
            OPENAI_HOST,
        )
        self._api_key = settings.api_key.get_secret_value() if settings.api_key else None
        if self._api_key is None and self._is_openai and not settings.planning:
            raise ConfigError("no API key for OpenAI: set OPENAI_API_KEY")
        self._offline = settings.planning and settings.token_counter != "auto"
        self._client = self._make_client(settings)
        self._mode = settings.structured_output
        self._lock = threading.Lock()
        given = settings.context_window
        self._window: ContextWindow | None = setting_window(given) if given else None
        self._counter: Counter | None = None
        self.token_count_method: str | None = None
        self._token_cache: OrderedDict[str, int] = OrderedDict()
        self._batch: BatchCounter | Literal[False] | None = False  # False: not probed yet
        kept = settings.tokenizer_profiles
        self._server = (
            None
            if self._is_openai or not self._base_url
            else ServerTokenizer(
                server_root(self._base_url),
                self.name,
                self._api_key,
                _PROBE_TIMEOUT_S,
                ProfileFile(kept) if kept is not None else None,
            )
        )

    def _make_client(self, settings: ModelSettings) -> OpenAI:
        try:
            from openai import OpenAI
        except ImportError as exc:
            raise MissingDependencyError("openai", "all") from exc
        return OpenAI(
            api_key=self._api_key or "not-needed",
            base_url=settings.base_url,
            timeout=settings.timeout_s,
            max_retries=0,
        )

    # --- completions -------------------------------------------------------------------
    def complete(self, request: Request, timeout_s: float) -> Completion:
        mode = self._structured_mode(request)
        try:
            response = self._create(request, mode, timeout_s)
        except ModelError as exc:
            if not self._may_fall_back(mode, exc):
                raise
            log.info("%s refused json_schema (%s); trying json_object", self._base_url, exc)
            response = self._create(request, "json_object", timeout_s)
            self._mode = "json_object"
        else:
            if self._mode == "auto" and mode == "json_schema":
                self._mode = "json_schema"
        return self._to_completion(request, response)

    @property
    def structured_mode(self) -> str:
        """The structured-output dialect in use (``auto`` until the first schema request)."""
        return self._mode

    def _may_fall_back(self, mode: str, exc: ModelError) -> bool:
        return (
            self._mode == "auto"
            and mode == "json_schema"
            and not self._is_openai
            and is_refused_format(exc)
        )

    def _structured_mode(self, request: Request) -> str:
        if request.json_schema is None:
            return "none"
        return "json_schema" if self._mode == "auto" else self._mode

    def _create(self, request: Request, mode: str, timeout_s: float) -> Any:
        kwargs: dict[str, Any] = {
            "model": self.name,
            "messages": [m.model_dump() for m in request.messages],
            "max_tokens": request.max_tokens,
            "temperature": request.temperature,
            "timeout": timeout_s,
        }
        if request.stop:
            kwargs["stop"] = list(request.stop)
        kwargs.update(structured_kwargs(request, mode))
        try:
            return self._client.chat.completions.create(**kwargs)
        except Exception as exc:
            raise classify_openai_error(exc, self._where()) from exc

    def _to_completion(self, request: Request, response: Any) -> Completion:
        choices = getattr(response, "choices", None)
        if not choices:
            raise classify_openai_error(ValueError("the answer has no choices"), self._where())
        choice = choices[0]
        message = choice.message
        if getattr(message, "refusal", None):
            raise FatalModelError(f"{self._where()} refused the request: {message.refusal}")
        text = message.content or ""
        usage = getattr(response, "usage", None)
        return Completion(
            text=text,
            model=self.name,
            input_tokens=usage.prompt_tokens if usage else estimate_tokens(_prompt(request)),
            output_tokens=usage.completion_tokens if usage else estimate_tokens(text),
            finish_reason=choice.finish_reason,
            cached_input_tokens=reported_cached_tokens(response),
        )

    def _where(self) -> str:
        return f"{self.name} at {self._base_url or OPENAI_HOST}"

    # --- tokens and context ------------------------------------------------------------
    @property
    def context_window(self) -> int | None:  # type: ignore[override]
        return self.window().tokens

    def window(self) -> ContextWindow:
        """The ``context_window`` setting, else what the server reports, else the table of
        known models; else unknown (api.openai.com reports none)."""
        if self._window is None:
            self._window = self._find_window()
        return self._window

    def _find_window(self) -> ContextWindow:
        if self._offline:
            known = known_window(self.name)
            if known is None:
                raise ConfigError(
                    f"the plan asks no server with --token-counter "
                    f"{self._settings.token_counter}, and {self.name} is not in the table of "
                    f"known models: give its context window with {SET_WINDOW}"
                )
            return known
        if not self._is_openai and self._base_url:
            root = server_root(self._base_url)
            try:
                tokens = find_context_window(root, self._base_url, self._api_key, _PROBE_TIMEOUT_S)
            except NotOffered:
                pass
            else:
                return ContextWindow(tokens, f"what the server at {root} reports")
        known = known_window(self.name)
        if known is not None:
            return known
        asked = "api.openai.com reports none" if self._is_openai else "the server reports none"
        return unknown_window(self.name, asked)

    def count_tokens(self, text: str) -> int:
        """The server's own tokenizer where it has one; for api.openai.com tiktoken when the
        model's encoding is on this machine (``tiktoken_counter``); else ``estimate_tokens``."""
        if not text:
            return 0
        cached = self._token_cache.get(text)
        if cached is not None:
            return cached
        count = self._token_counter()(text)
        with self._lock:
            self._token_cache[text] = count
            while len(self._token_cache) > _TOKEN_CACHE_SIZE:
                self._token_cache.popitem(last=False)
        return count

    def count_tokens_many(self, texts: Sequence[str]) -> list[int]:
        """Every text's count; those not yet known in one request where the server's
        tokenizer takes several texts at once (``find_batch_counter``), else one by one."""
        with self._lock:  # read now: remembering the new counts may push these out
            known = {t: n for t in texts if (n := self._token_cache.get(t)) is not None}
        missing = [t for t in dict.fromkeys(texts) if t and t not in known]
        batch = self._batch_counter() if len(missing) > 1 else None
        if batch is not None:
            try:
                found = dict(zip(missing, batch(missing), strict=True))
            except NotOffered as exc:
                log.warning(
                    "%s: batched token counts failed (%s); counting one by one", self._where(), exc
                )
                self._batch = None
            else:
                with self._lock:
                    self._token_cache.update(found)
                    while len(self._token_cache) > _TOKEN_CACHE_SIZE:
                        self._token_cache.popitem(last=False)
                known |= found
        return [known[t] if t in known else self.count_tokens(t) for t in texts]

    @property
    def counts_remotely(self) -> bool:
        self._token_counter()
        return self.token_count_method in _REMOTE_METHODS

    def _batch_counter(self) -> BatchCounter | None:
        counter = self._token_counter()
        with self._lock:
            if self._batch is False:
                method = self.token_count_method or ""
                if method in _REMOTE_METHODS and self._server is not None:
                    self._batch = self._server.batch(method, counter)
                else:
                    self._batch = None
            return self._batch

    def keep_counts(self, counts: dict[str, int]) -> None:
        """Counts of fixed texts, kept with the server's tokenizer profile for the next run."""
        if self._server is not None and self.token_count_method in _REMOTE_METHODS:
            with self._lock:
                self._server.keep_counts(counts)

    def _token_counter(self) -> Counter:
        with self._lock:
            if self._counter is None:
                self.token_count_method, self._counter = self._find_counter()
            return self._counter

    def _find_counter(self) -> tuple[str, Counter]:
        chosen = chosen_counter(self._settings.token_counter, self._settings.model_path)
        if chosen is not None:
            return chosen
        found = self._server.find() if self._server is not None else None
        if found is not None:
            profile = self._server.profile if self._server is not None else None
            if profile is not None:  # the fixed texts' counts, verified with the profile
                self._token_cache.update(profile.counts)
            return found
        if self._is_openai:
            local = tiktoken_counter(self.name)
            if local is not None:
                return local
        log.info("%s: no tokenizer available here; estimating 5 tokens per 8 bytes", self._where())
        return "estimate", estimate_tokens

    def close(self) -> None:
        self._client.close()


def reported_cached_tokens(response: Any) -> int | None:
    """The prompt tokens an answer says its endpoint's cache served: OpenAI's (and llama.cpp
    server's since 2026) ``usage.prompt_tokens_details.cached_tokens``, else llama.cpp
    server's ``timings.cache_n``; None where the answer does not say (llama-cpp-python's
    server reports neither)."""
    usage = getattr(response, "usage", None)
    details = getattr(usage, "prompt_tokens_details", None)
    cached = getattr(details, "cached_tokens", None)
    if cached is None:
        timings = getattr(response, "timings", None)
        cached = timings.get("cache_n") if isinstance(timings, dict) else None
    return int(cached) if isinstance(cached, int | float) else None


def _prompt(request: Request) -> str:
    return "\n".join(m.content for m in request.messages)
