"""The suite-wide guard: tests may talk to 127.0.0.1, never to another machine."""

from __future__ import annotations

import socket

import pytest
from fakes.openai_server import FakeOpenAIServer

from webagent.errors import TransientModelError
from webagent.model import Message, ModelSettings, Request, build_model


def test_a_connection_off_this_machine_is_refused(network_guard: list[str]) -> None:
    with pytest.raises(ConnectionRefusedError, match="tests run offline"):
        socket.create_connection(("192.0.2.1", 443), timeout=1)
    assert network_guard == ["('192.0.2.1', 443)"]
    network_guard.clear()  # seen and expected: do not fail this test


def test_an_sdk_call_to_a_remote_endpoint_cannot_leave(network_guard: list[str]) -> None:
    settings = ModelSettings(
        backend="openai", model="m", base_url="http://192.0.2.1/v1", max_retries=0
    )
    with (
        build_model(settings) as model,
        pytest.raises(TransientModelError, match="tests run offline"),
    ):
        model.generate(Request(messages=(Message(role="user", content="hi"),)))
    assert network_guard and "192.0.2.1" in network_guard[0]
    network_guard.clear()


def test_loopback_is_allowed() -> None:
    with (
        FakeOpenAIServer() as fake,
        socket.create_connection(
            ("127.0.0.1", int(fake.base_url.split(":")[2].split("/")[0])), timeout=2
        ),
    ):
        pass
