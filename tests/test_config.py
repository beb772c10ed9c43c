"""The run configuration: one frozen RunConfig from defaults < environment < file < flags,
every setting reachable, secrets never read from or written to a file, bad values one line;
every command builds its run the same way, and ``eval --config <manifest>`` repeats a run."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from mind2web_eval.commands.demo import samples_path
from webagent.agents.pipeline import PageAgent
from webagent.agents.registry import agent_names, agent_spec, build_agent
from webagent.cli import main
from webagent.config import (
    ENVIRONMENT,
    RunConfig,
    load_config_file,
    parse_assignment,
    resolve_config,
)
from webagent.errors import ConfigError
from webagent.model import Model, RetryPolicy, ScriptedBackend, build_model

SECRET = "sk-test-never-written-0123456789"


def write(path: Path, text: str) -> Path:
    path.write_text(text, encoding="utf-8")
    return path


def test_defaults_environment_file_and_flags_in_that_order(tmp_path: Path) -> None:
    run_toml = write(
        tmp_path / "run.toml",
        '[agent]\nagent = "readagent-s"\nmax_lookup = 3\n'
        '[model]\nmodel = "from-file"\nmax_retries = 1\nstructured_output = "json_object"\n'
        "[eval]\nlimit = 7\nscore_top_k = 50\n[live]\nmax_steps = 4\n",
    )
    environ = {"WEBAGENT_MODEL": "from-env", "OPENAI_API_KEY": SECRET, "WEBAGENT_CACHE": "/c.db"}
    config = resolve_config(
        environ=environ, config_file=run_toml, overrides={"agent": {"max_lookup": 2}}
    )
    assert config.agent.agent == "readagent-s"  # file over default
    assert config.agent.max_lookup == 2  # flag over file
    assert config.model.model == "from-file"  # file over environment
    assert config.model.max_retries == 1 and config.model.structured_output == "json_object"
    assert config.model.api_key is not None and config.model.api_key.get_secret_value() == SECRET
    assert config.gist_cache.resolved_path() == Path("/c.db")
    assert config.eval.limit == 7 and config.eval.score_top_k == 50
    assert config.live.max_steps == 4
    with pytest.raises(ValueError, match="frozen"):
        config.agent.max_lookup = 9  # type: ignore[misc]


def test_every_environment_variable_is_read_in_config_only() -> None:
    root = Path(__file__).resolve().parent.parent
    for path in [*root.glob("webagent/**/*.py"), *root.glob("live_runner/**/*.py")]:
        text = path.read_text(encoding="utf-8")
        if path.name == "config.py":
            continue
        for var in ENVIRONMENT:
            assert f'"{var}"' not in text, f"{path} reads {var}; only webagent/config.py may"


def test_secrets_are_never_read_from_a_file_nor_written(tmp_path: Path) -> None:
    bad = write(tmp_path / "run.toml", '[model]\napi_key = "sk-in-a-file"\n')
    with pytest.raises(ConfigError, match="never read from a file; set OPENAI_API_KEY"):
        load_config_file(bad)
    with pytest.raises(ConfigError, match="environment"):
        parse_assignment("model.api_key=sk-x")
    config = resolve_config(environ={"OPENAI_API_KEY": SECRET})
    assert SECRET not in json.dumps(config.manifest())
    assert config.manifest()["model"]["api_key_set"] is True


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("[agnet]\nagent = 'raw-html'\n", "unknown section(s) agnet; sections are agent"),
        ("[agent]\nagent = 'bogus'\n", "unknown agent 'bogus'; choose one of readagent-p"),
        ("[agent]\nmax_lookup = 0\n", "agent.max_lookup: Input should be greater than"),
        ("[model]\ntimeout_s = 'soon'\n", "model.timeout_s"),
        ("[agent]\nspeed = 3\n", "agent.speed: Extra inputs are not permitted"),
        ("agent = 'raw-html'\n", "[agent] must be a table"),
        ("[agent\n", "not valid TOML"),
    ],
)
def test_a_bad_file_is_one_line_naming_the_problem(tmp_path: Path, text: str, message: str) -> None:
    path = write(tmp_path / "run.toml", text)
    with pytest.raises(ConfigError) as info:
        resolve_config(config_file=path)
    assert message in str(info.value) and "\n" not in str(info.value)


def test_set_reaches_every_setting() -> None:
    assert parse_assignment("model.max_retries=2") == ("model", "max_retries", 2)
    assert parse_assignment("agent.gister=extractive") == ("agent", "gister", "extractive")
    assert parse_assignment('eval.data="hf:x"') == ("eval", "data", "hf:x")
    with pytest.raises(ConfigError, match=r"SECTION\.FIELD=VALUE"):
        parse_assignment("max_retries=2")
    with pytest.raises(ConfigError, match=r"SECTION\.FIELD=VALUE with SECTION one of agent"):
        parse_assignment("agnet.depth=3")


def test_a_manifest_round_trips_into_the_same_config(tmp_path: Path) -> None:
    config = resolve_config(
        overrides={
            "agent": {"agent": "retrieval", "top_k": 3, "context_budget": 2048},
            "model": {"backend": "local", "n_ctx": 2048, "record_to": str(tmp_path / "c.jsonl")},
            "eval": {"data": "/data", "limit": 2, "bootstrap": 10},
        }
    )
    manifest = write(tmp_path / "manifest.json", json.dumps({"config": config.manifest()}))
    again = resolve_config(config_file=manifest)
    assert again.agent == config.agent and again.eval == config.eval
    assert again.model.record_to is None  # a repeat never appends to the old cassette
    assert again.model.model_name == config.model.model_name  # the manifest names the model
    restored = {"record_to": config.model.record_to, "model": None}
    assert again.model.model_copy(update=restored) == config.model


def test_one_line_errors_on_the_command_line(
    capsys: pytest.CaptureFixture[str], tmp_path: Path
) -> None:
    out = tmp_path / "demo"
    assert main(["demo", "--agents", "bogus", "--out", str(out)]) == 2
    err = capsys.readouterr().err.strip()
    assert err.startswith("webagent demo: error: --agents 'bogus': unknown agent(s) bogus")
    assert "\n" not in err and not out.exists()
    assert main(["act", "--page", "travel", "--task", "t", "--set", "agent.max_lookup=0"]) == 2
    err = capsys.readouterr().err.strip()
    assert "agent.max_lookup" in err and "\n" not in err
    assert main(["eval", "--out", str(tmp_path / "e")]) == 2
    assert "eval needs --data" in capsys.readouterr().err
    missing = tmp_path / "none.toml"
    assert main(["segment", "travel", "--config", str(missing)]) == 2
    assert f"--config {missing}: cannot read it" in capsys.readouterr().err


def test_version_and_log_level(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as done:
        main(["--version"])
    assert done.value.code == 0 and capsys.readouterr().out.startswith("webagent 0.1.0")
    with pytest.raises(SystemExit):
        main(["--log-level", "loud", "segment", "travel"])
    err = capsys.readouterr().err
    assert "invalid choice: 'loud'" in err and err.count("\n") == 1
    with pytest.raises(SystemExit):
        main(["act", "--page", "travel", "--task", "t", "--max-lookup", "many"])
    err = capsys.readouterr().err
    assert err.startswith("webagent act: error: argument --max-lookup: invalid int value")
    assert err.count("\n") == 1
    assert main(["--log-level", "debug", "segment", "travel", "--json"]) == 0


def _agent(config: RunConfig, window: int) -> PageAgent:
    model = Model(ScriptedBackend(["{}"], context_window=window), RetryPolicy(max_retries=0))
    agent = build_agent(config.agent, model, None)
    assert isinstance(agent, PageAgent)
    return agent


@pytest.mark.llama
@pytest.mark.parametrize(
    "options",
    [
        [],
        ["--context-budget", "2048", "--max-lookup", "2"],
        ["--agent", "readagent-s", "--reserve-tokens", "200", "--depth", "5"],
        ["--agent", "raw-html", "--context-budget", "1024"],
    ],
)
def test_segment_shows_what_act_segments(
    options: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["segment", "travel", "--json", *options]) == 0
    shown = json.loads(capsys.readouterr().out)["settings"]
    flags = dict(zip(options[::2], options[1::2], strict=True))
    config = resolve_config(
        overrides={
            "agent": {
                k.removeprefix("--").replace("-", "_"): (v if k == "--agent" else int(v))
                for k, v in flags.items()
            }
        }
    )
    with build_model(config.model) as model:  # the embedded model's counter, as act uses
        agent = build_agent(config.agent, model, None)
        assert isinstance(agent, PageAgent)
        assert shown == agent.segment_plan.model_dump(mode="json")


def test_agents_register_themselves() -> None:
    assert agent_names()[:2] == ("readagent-p", "readagent-s")
    assert {"raw-html", "raw-html-paper", "gist-only", "retrieval", "mindact"} <= set(agent_names())
    assert agent_spec("retrieval").shown_label == "kept parts"
    assert "top_k" in agent_spec("retrieval").options
    with pytest.raises(ConfigError, match="unknown agent 'nope'"):
        agent_spec("nope")


def _one_step_sample(tmp_path: Path) -> Path:
    tasks = json.loads((samples_path() / "sample_tasks.json").read_text(encoding="utf-8"))
    single = [t for t in tasks if len(t["actions"]) == 1][:1]
    data = tmp_path / "data"
    data.mkdir()
    (data / "tasks.json").write_text(json.dumps(single), encoding="utf-8")
    return data


@pytest.mark.llama
@pytest.mark.slow
@pytest.mark.timeout(900)  # the embedded model on 2 shared cores
def test_eval_config_manifest_with_replay_reproduces_predictions(
    local_model_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """A finished run, repeated from its manifest.json and its cassette: same predictions,
    byte for byte, without the model."""
    data = _one_step_sample(tmp_path)
    first, again, cassette = tmp_path / "first", tmp_path / "again", tmp_path / "calls.jsonl"
    argv = ["eval", "--data", str(data), "--out", str(first), "--agent", "raw-html"]
    budget = ["--context-budget", "1024", "--n-ctx", "1024", "--bootstrap", "10"]
    flags = ["--model-path", str(local_model_path), "--no-gist-cache", "--no-progress"]
    flags += ["--report-steps", "3"]
    assert main([*argv, *budget, *flags, "--record", str(cassette)]) == 0
    assert cassette.is_file()
    assert (
        main(
            [
                "eval",
                "--config",
                str(first / "manifest.json"),
                "--out",
                str(again),
                "--replay",
                str(cassette),
                "--no-progress",
            ]
        )
        == 0
    )
    capsys.readouterr()
    old, new = (
        (first / "predictions.jsonl").read_bytes(),
        (again / "predictions.jsonl").read_bytes(),
    )
    assert old and new == old
    before = json.loads((first / "manifest.json").read_text(encoding="utf-8"))
    after = json.loads((again / "manifest.json").read_text(encoding="utf-8"))
    assert after["agent"] == before["agent"] and after["data_source"] == before["data_source"]
    assert after["protocol"]["scoring"] == before["protocol"]["scoring"]
    assert after["model"]["backend"] == "replay" and after["model"]["record_to"] is None
    # the whole configuration is recorded and repeated, report and progress settings too
    assert before["config"]["eval"]["report_steps"] == after["config"]["eval"]["report_steps"] == 3
    assert "api_key" not in before["config"]["model"]


@pytest.mark.llama
@pytest.mark.slow
@pytest.mark.timeout(900)  # the embedded model on 2 shared cores
def test_act_and_demo_build_their_run_the_same_way(
    local_model_path: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """``act`` recorded then replayed prints the same step; ``demo`` runs through the same
    open_agent with a config file giving the model."""
    page = tmp_path / "page.html"
    page.write_text(
        "<html><body><form><label>From <input name='from'></label>"
        "<button>Search</button></form></body></html>",
        encoding="utf-8",
    )
    run_toml = write(
        tmp_path / "run.toml",
        f'[model]\nmodel_path = "{local_model_path}"\nn_ctx = 1024\n'
        '[agent]\nagent = "raw-html"\ncontext_budget = 1024\n[gist_cache]\nenabled = false\n',
    )
    cassette = tmp_path / "act.jsonl"
    act = ["act", "--page", str(page), "--task", "search", "--config", str(run_toml)]
    main([*act, "--record", str(cassette)])
    first = capsys.readouterr().out
    main([*act, "--replay", str(cassette)])

    def step(printed: str) -> list[str]:  # all but the usage lines (latency, cache hits)
        return [line for line in printed.splitlines() if "cache hits" not in line]

    assert step(capsys.readouterr().out) == step(first)
    assert "agent: raw-html" in first and "kept parts:" in first  # the registry's label

    data = _one_step_sample(tmp_path)
    out = tmp_path / "demo"
    argv = ["demo", "--agents", "raw-html", "--data", str(data), "--out", str(out)]
    assert main([*argv, "--config", str(run_toml), "--context-budget", "900"]) == 0
    assert "raw-html" in capsys.readouterr().out
    manifest = json.loads((out / "raw-html" / "manifest.json").read_text(encoding="utf-8"))
    assert manifest["agent"]["context_budget"] == 900 and manifest["model"]["n_ctx"] == 1024
