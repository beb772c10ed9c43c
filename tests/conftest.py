"""Fixtures shared by the whole test suite: the real local model, a real llama.cpp server, a
scripted model, and a guard that fails any test making a network call off this machine."""

from __future__ import annotations

import importlib.util
import ipaddress
import socket
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from hypothesis import settings
from llama_servers import start_server, stop

from webagent.errors import ConfigError
from webagent.model import Model, ModelSettings, RetryPolicy, ScriptedBackend
from webagent.model.scripted import Script
from webagent.model.settings import default_model_path

# the machines these tests run on are noisy: an example is never failed for its time
settings.register_profile("noisy-machines", deadline=None)
settings.load_profile("noisy-machines")

TEST_N_CTX = 4096
TEST_THREADS = 2

# --- no network off this machine -------------------------------------------------------
_blocked: list[str] = []


class OfflineTestError(ConnectionRefusedError):
    """A test tried to reach another machine. An OSError, so that libraries react as they
    would offline; the ``network_guard`` fixture then fails the test by name."""


def _is_local(address: Any) -> bool:
    if isinstance(address, str | bytes):  # AF_UNIX path
        return True
    host = str(address[0])
    if host == "localhost":
        return True
    try:
        return ipaddress.ip_address(host.split("%", maxsplit=1)[0]).is_loopback
    except ValueError:
        return False


def _guarded(original: Callable[..., Any]) -> Callable[..., Any]:
    def connect(sock: socket.socket, address: Any) -> Any:
        if not _is_local(address):
            _blocked.append(repr(address))
            raise OfflineTestError(f"test tried to connect to {address!r}: tests run offline")
        return original(sock, address)

    return connect


@pytest.fixture(scope="session", autouse=True)
def _offline_sockets() -> Iterator[None]:
    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(socket.socket, "connect", _guarded(socket.socket.connect))
        patch.setattr(socket.socket, "connect_ex", _guarded(socket.socket.connect_ex))
        yield


@pytest.fixture(autouse=True)
def network_guard() -> Iterator[list[str]]:
    """Fails a test that connected off this machine; yields the list of blocked addresses
    (a test of the guard itself clears it)."""
    _blocked.clear()
    yield _blocked
    if _blocked:
        pytest.fail(f"unexpected network connection(s) off this machine: {', '.join(_blocked)}")


# --- the real local model ----------------------------------------------------------------
@pytest.fixture(scope="session")
def local_model_path() -> Path:
    """The SmolLM2 GGUF; skips only when llama-cpp-python or the GGUF is truly absent."""
    if importlib.util.find_spec("llama_cpp") is None:
        pytest.skip("llama-cpp-python is not installed (pip install 'readagent-web[local]')")
    try:
        return default_model_path()
    except ConfigError as exc:
        pytest.skip(str(exc))


@pytest.fixture(scope="session")
def local_settings(local_model_path: Path) -> ModelSettings:
    return ModelSettings(model_path=local_model_path, n_ctx=TEST_N_CTX, n_threads=TEST_THREADS)


@pytest.fixture(scope="session")
def local_model(local_settings: ModelSettings) -> Iterator[Model]:
    """One in-process SmolLM2 for the session (n_ctx 4096). Keep prompts and answers short."""
    from webagent.model.llama_local import LlamaLocalBackend

    model = Model(LlamaLocalBackend(local_settings), RetryPolicy(timeout_s=120, max_retries=0))
    yield model
    model.close()


# --- a real llama.cpp OpenAI-compatible server ---------------------------------------------
@pytest.fixture(scope="session")
def llama_server(local_model_path: Path, tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    """Base URL (``http://127.0.0.1:PORT/v1``) of llama-cpp-python's server over SmolLM2,
    serving the model under the name ``DEFAULT_LOCAL_MODEL``."""
    log = tmp_path_factory.mktemp("llama_server") / "server.log"
    process, url = start_server(local_model_path, log, n_ctx=TEST_N_CTX, n_threads=TEST_THREADS)
    try:
        yield url
    finally:
        stop(process)


# --- a scripted model for logic tests ------------------------------------------------------
@pytest.fixture
def scripted_model() -> Callable[..., Model]:
    """``scripted_model(answers_or_function, max_retries=2, sleep=None, **backend_kwargs)``:
    a :class:`Model` over a :class:`ScriptedBackend` that never really sleeps. The backend is
    ``model.backend``; its ``requests`` list holds what it was asked."""

    def make(
        script: Script,
        *,
        max_retries: int = 2,
        sleep: Callable[[float], None] | None = None,
        **backend_kwargs: Any,
    ) -> Model:
        policy = RetryPolicy(timeout_s=5, max_retries=max_retries)
        backend = ScriptedBackend(script, **backend_kwargs)
        return Model(backend, policy, sleep=sleep or (lambda _s: None))

    return make
