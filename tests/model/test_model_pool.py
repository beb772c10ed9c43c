"""Many endpoints as one backend (``webagent.model.pool``): spread, per-endpoint limits, a dead
replica out of rotation with its request answered elsewhere, and nothing answered twice;
then the same with two real llama.cpp servers on 127.0.0.1, one killed in the middle of an
evaluation."""

from __future__ import annotations

import json
import subprocess
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from fakes.openai_server import FakeOpenAIServer
from llama_servers import start_server, stop

from webagent.cli import build_parser
from webagent.cli.options import flag_values
from webagent.errors import ConfigError, FatalModelError, TransientModelError
from webagent.model.base import Message, Request
from webagent.model.client import Model
from webagent.model.factory import build_backend, build_model
from webagent.model.pool import ReplicaPool, connection_failed
from webagent.model.retry import RetryPolicy
from webagent.model.scripted import ScriptedBackend
from webagent.model.settings import DEFAULT_LOCAL_MODEL, ModelSettings


def request(n: int) -> Request:
    return Request(messages=(Message(role="user", content=f"question {n}"),), max_tokens=4)


def refused() -> TransientModelError:
    try:
        raise ConnectionRefusedError(111, "Connection refused")
    except ConnectionRefusedError as exc:
        error = TransientModelError("connection to replica failed")
        error.__cause__ = exc
        return error


class Tracking:
    """A script that answers with its replica's name and records the most it held at once;
    with a ``gate``, no answer comes until ``hold`` requests are in flight over all replicas."""

    total = 0
    shared = threading.Lock()

    def __init__(self, name: str, gate: threading.Event | None = None, hold: int = 0) -> None:
        self.name, self.gate, self.hold = name, gate, hold
        self.now = self.most = 0
        self.lock = threading.Lock()

    def __call__(self, req: Request) -> str:
        with self.lock:
            self.now += 1
            self.most = max(self.most, self.now)
        with Tracking.shared:
            Tracking.total += 1
            if self.gate is not None and Tracking.total >= self.hold:
                self.gate.set()
        if self.gate is not None:
            assert self.gate.wait(30), "the requests never were all in flight"
        with self.lock:
            self.now -= 1
        return f"{self.name}: {req.messages[-1].content}"


def pool_model(*scripts: Callable[[Request], str] | list[str | Exception], per: int = 1) -> Model:
    backends = [ScriptedBackend(s, name="m") for s in scripts]  # type: ignore[arg-type]
    pool = ReplicaPool(backends, per_endpoint=per, labels=[f"r{i}" for i in range(len(scripts))])
    return Model(pool, RetryPolicy(timeout_s=5, max_retries=0), sleep=lambda _s: None)


def test_requests_spread_over_replicas_within_each_limit() -> None:
    gate = threading.Event()
    Tracking.total = 0
    a, b = Tracking("a", gate, hold=4), Tracking("b", gate, hold=4)
    model = pool_model(a, b, per=2)
    assert model.max_concurrency == 4
    # nothing is answered until four requests are in flight: two on each replica
    answers = model.map_generate([request(i) for i in range(8)])
    texts = [a.text for a in answers]  # type: ignore[union-attr]
    assert [t.split(": ")[1] for t in texts] == [f"question {i}" for i in range(8)]
    stats = model.backend.stats()  # type: ignore[attr-defined]
    assert stats["r0"]["completed"] >= 2 and stats["r1"]["completed"] >= 2
    assert stats["r0"]["completed"] + stats["r1"]["completed"] == 8
    assert a.most <= 2 and b.most <= 2


def test_a_dead_replica_leaves_rotation_and_its_request_is_answered_elsewhere() -> None:
    dead = ScriptedBackend([refused()] * 10, name="m")
    alive = ScriptedBackend(lambda r: "ok " + r.messages[-1].content, name="m")
    pool = ReplicaPool([dead, alive], labels=["dead", "alive"])
    model = Model(pool, RetryPolicy(timeout_s=5, max_retries=0), sleep=lambda _s: None)
    answers = [model.generate(request(i)).text for i in range(5)]
    assert answers == [f"ok question {i}" for i in range(5)]  # each once, none lost
    assert len(dead.requests) == 1  # tried once, then out of rotation
    assert [r.messages[-1].content for r in alive.requests] == [f"question {i}" for i in range(5)]
    assert pool.stats()["dead"] == {"completed": 0, "failed": 1, "alive": False}


def test_a_fatal_answer_is_not_sent_to_another_replica() -> None:
    first = ScriptedBackend([FatalModelError("HTTP 400: bad request")], name="m")
    second = ScriptedBackend(["never"], name="m")
    model = Model(ReplicaPool([first, second]), RetryPolicy(max_retries=0), sleep=lambda _s: None)
    with pytest.raises(FatalModelError, match="HTTP 400"):
        model.generate(request(0))
    assert second.requests == []


def test_no_replica_left_is_the_last_error() -> None:
    model = pool_model([refused()], [refused()])
    with pytest.raises(TransientModelError, match="connection to replica failed"):
        model.generate(request(0))
    assert all(not s["alive"] for s in model.backend.stats().values())  # type: ignore[attr-defined]


def test_only_a_refused_connection_means_dead() -> None:
    assert connection_failed(refused())
    slow = TransientModelError("timed out")
    slow.__cause__ = TimeoutError()
    assert not connection_failed(slow)
    assert not connection_failed(TransientModelError("HTTP 503"))


def test_a_count_cut_off_as_its_server_dies_moves_counting_to_the_next_replica() -> None:
    with (
        FakeOpenAIServer(tokenizer="llama-cpp-python") as dying,
        FakeOpenAIServer(tokenizer="llama-cpp-python") as alive,
    ):
        settings = ModelSettings(
            backend="openai", model="fake-model", base_url=dying.base_url,
            base_urls=(alive.base_url,), max_retries=0, timeout_s=5.0,
        )  # fmt: skip
        with build_model(settings, sleep=lambda _s: None) as model:
            assert model.count_tokens("one two") == 2
            dying.tokenizer_cut.set()  # its answers now stop short of their announced length
            assert model.count_tokens("three four five") == 3  # counted by the other one
            stats = model.backend.stats()  # type: ignore[attr-defined]
    first, second = settings.endpoints()
    assert not stats[first]["alive"] and stats[second]["alive"]
    assert "/extras/tokenize/count" in alive.paths


def test_repeated_base_url_is_a_list_of_replicas() -> None:
    args = build_parser().parse_args(
        ["eval", "--out", "x", "--base-url", "http://127.0.0.1:1/v1", "--base-url",
         "http://127.0.0.1:2/v1", "--backend", "openai", "--model", "m", "--concurrency", "3"]
    )  # fmt: skip
    model = flag_values(args)["model"]
    assert model["base_url"] == "http://127.0.0.1:1/v1"
    assert model["base_urls"] == ("http://127.0.0.1:2/v1",)
    settings = ModelSettings(**{k: v for k, v in model.items()})
    backend = build_backend(settings)
    assert isinstance(backend, ReplicaPool) and backend.max_concurrency == 6
    assert [r.label for r in backend.replicas] == list(settings.endpoints())
    with pytest.raises(ValueError, match="set base_url too"):
        ModelSettings(backend="openai", model="m", base_urls=("http://127.0.0.1:2/v1",))
    with pytest.raises(ConfigError, match="different models"):
        ReplicaPool([ScriptedBackend([], name="a"), ScriptedBackend([], name="b")])


# --- two real llama.cpp servers ------------------------------------------------------------
@pytest.fixture
def two_servers(
    local_model_path: Path, tmp_path: Path
) -> Iterator[list[tuple[subprocess.Popen[bytes], str]]]:
    servers = [
        start_server(local_model_path, tmp_path / f"server{i}.log", n_ctx=2048, n_threads=1)
        for i in range(2)
    ]
    yield servers
    for process, _url in servers:
        stop(process)


@pytest.mark.server
@pytest.mark.llama
@pytest.mark.slow
@pytest.mark.timeout(1200)
def test_two_llama_servers_one_killed_mid_eval_every_step_scored_once(
    two_servers: list[tuple[subprocess.Popen[bytes], str]], tmp_path: Path
) -> None:
    from mind2web_eval.data import load_tasks
    from mind2web_eval.runner import EvalSettings, EvalSubject, run_eval
    from mind2web_eval.scoring import gold_steps
    from webagent.agents.registry import AgentSettings, build_agent
    from webagent.model.factory import build_model

    samples = Path(__file__).resolve().parents[2] / "mind2web_eval" / "samples"
    data = samples / "sample_tasks.json"
    (first, url_a), (_second, url_b) = two_servers
    settings = ModelSettings(
        backend="openai", model=DEFAULT_LOCAL_MODEL, base_url=url_a, base_urls=(url_b,),
        context_window=2048, concurrency=1, timeout_s=900, max_retries=1,
    )  # fmt: skip
    with build_model(settings) as model:
        pool = model.backend
        assert isinstance(pool, ReplicaPool)

        def kill_a_after_its_first_answer() -> None:
            while pool.replicas[0].completed < 1 and pool.replicas[0].alive:
                time.sleep(0.05)
            first.kill()
            first.wait()

        killer = threading.Thread(target=kill_a_after_its_first_answer, daemon=True)
        killer.start()
        agent = build_agent(AgentSettings(agent="raw-html", context_budget=1024), model)
        subject = EvalSubject(agent, {"agent": "raw-html"}, settings.manifest(), {"model": "m"})
        out = tmp_path / "run"
        # one step at a time: llama-cpp-python's server answers a tokenize call only between
        # generations, so counting beside a generation on the same server can time out
        outcome = run_eval(
            EvalSettings(data=str(data), out=out, workers=1, progress=False), subject
        )
        killer.join(timeout=60)
        stats = pool.stats()
    tasks, _ = load_tasks(data)
    gold = sorted(g.action_uid for t in tasks for g in gold_steps(t))
    records = [json.loads(line) for line in (out / "results.jsonl").read_text().splitlines()]
    assert outcome.status == "complete"
    assert sorted(r["action_uid"] for r in records) == gold  # every step once
    errors = [r["error"] for r in records if r["diagnostics"]["error_class"] == "model_error"]
    assert errors == []
    assert first.poll() is not None  # server A really died during the run
    assert stats[url_a]["completed"] >= 1 and not stats[url_a]["alive"]
    assert stats[url_b]["completed"] >= 1
