"""Start and stop real llama.cpp OpenAI-compatible servers (llama-cpp-python's) on 127.0.0.1
for the integration tests: one free port each, ready when ``/v1/models`` answers."""

from __future__ import annotations

import os
import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path

import pytest

from webagent.model.llama_local import quiet_openmp
from webagent.model.settings import DEFAULT_LOCAL_MODEL

READY_S = 90.0


def free_port() -> int:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def start_server(
    model_path: Path, log: Path, *, n_ctx: int, n_threads: int
) -> tuple[subprocess.Popen[bytes], str]:
    """A server over ``model_path`` (named ``DEFAULT_LOCAL_MODEL``), its output in ``log``;
    returns the process and its base URL ``http://127.0.0.1:PORT/v1`` once it answers."""
    port = free_port()
    command = [
        sys.executable, "-m", "llama_cpp.server",
        "--model", str(model_path), "--model_alias", DEFAULT_LOCAL_MODEL,
        "--host", "127.0.0.1", "--port", str(port),
        "--n_ctx", str(n_ctx), "--n_threads", str(n_threads),
    ]  # fmt: skip
    with log.open("wb") as out:
        process = subprocess.Popen(
            command, stdout=out, stderr=subprocess.STDOUT, env=quiet_openmp(dict(os.environ))
        )
    url = f"http://127.0.0.1:{port}/v1"
    deadline = time.monotonic() + READY_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            pytest.fail(
                f"llama.cpp server exited ({process.returncode}): {log.read_text()[-2000:]}"
            )
        try:
            with urllib.request.urlopen(f"{url}/models", timeout=2):
                return process, url
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    stop(process)
    pytest.fail(f"llama.cpp server not ready after {READY_S} s: {log.read_text()[-2000:]}")


def stop(process: subprocess.Popen[bytes]) -> None:
    """Terminate a server (killed if it does not exit within 10 s); one already gone is fine."""
    if process.poll() is not None:
        return
    process.terminate()
    try:
        process.wait(timeout=10)
    except subprocess.TimeoutExpired:
        process.kill()
        process.wait()
