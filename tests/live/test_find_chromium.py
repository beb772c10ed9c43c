"""The live runner finds a Chromium by itself: the configured one, else Playwright's own, else
the system's (Debian's /usr/bin/chromium, which `make browser` installs), and says which.
End to end: `webagent run` as the README shows it, with no --browser-path and no
WEBAGENT_CHROMIUM, on a machine set up by the README's test command alone."""

from __future__ import annotations

import json
import logging
import shutil
from pathlib import Path

import pytest

from live.pages import PageServer
from live_runner.session import choose_chromium
from webagent.cli import main


def test_the_configured_binary_wins(tmp_path: Path) -> None:
    binary = tmp_path / "my-chrome"
    binary.touch()
    choice = choose_chromium(Path("/opt/c"), str(binary), which=lambda _n: "/usr/bin/chromium")
    assert choice.path == Path("/opt/c") and "configured" in choice.why


def test_playwrights_own_browser_when_it_is_installed(tmp_path: Path) -> None:
    binary = tmp_path / "chrome"
    binary.touch()
    choice = choose_chromium(None, str(binary), which=lambda _n: "/usr/bin/chromium")
    assert choice.path is None and str(binary) in choice.why


def test_the_systems_chromium_when_playwrights_is_absent(tmp_path: Path) -> None:
    absent = str(tmp_path / "ms-playwright" / "chrome")
    found = {"chromium-browser": "/usr/local/bin/chromium-browser"}
    choice = choose_chromium(None, absent, which=found.get)
    assert choice.path == Path("/usr/local/bin/chromium-browser")
    assert "Playwright's own browser is not installed" in choice.why


def test_playwrights_when_there_is_no_chromium_at_all(tmp_path: Path) -> None:
    choice = choose_chromium(None, None, which=lambda _n: None)
    assert choice.path is None and "no system Chromium" in choice.why


@pytest.mark.browser
@pytest.mark.llama
@pytest.mark.usefixtures("local_model_path")  # skips cleanly without the embedded model
def test_webagent_run_finds_chromium_without_flags_or_variables(
    pages: PageServer,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    caplog: pytest.LogCaptureFixture,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Plumbing only (SmolLM2-135M is near chance): the command runs and names its browser."""
    pytest.importorskip("playwright", reason="pip install 'readagent-web[live]'")
    if shutil.which("chromium") is None and shutil.which("chromium-browser") is None:
        pytest.skip("no system Chromium (make browser installs Debian's)")
    monkeypatch.delenv("WEBAGENT_CHROMIUM", raising=False)
    caplog.set_level(logging.INFO, logger="live_runner.session")
    out = tmp_path / "run"
    code = main(
        [
            "run", "--url", f"{pages.origin}/login.html", "--task", "Sign in as ada",
            "--max-steps", "1", "--agent", "raw-html", "--no-gist-cache",
            "--context-budget", "2048", "--n-ctx", "4096", "--out", str(out), "--json",
        ]
    )  # fmt: skip
    assert code == 0, capsys.readouterr().err
    result = json.loads(capsys.readouterr().out)
    assert result["steps"] == 1 and result["input_tokens"] > 0
    said = [r.getMessage() for r in caplog.records if r.getMessage().startswith("browser: ")]
    assert len(said) == 1, said
    assert "Playwright's own Chromium (" in said[0] or "the system's Chromium" in said[0]
