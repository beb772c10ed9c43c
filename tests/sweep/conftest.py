"""Shared pieces of the sweep tests: the bundled sample tasks and the sweep command line."""

from __future__ import annotations

import os
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
SAMPLES = REPO / "mind2web_eval" / "samples" / "sample_tasks.json"
CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = ["--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-quic"]


def sweep_argv(data: Path, out: Path, *extra: str) -> list[str]:
    """``webagent sweep`` over ``data``: raw-html and gist-only at two tiny budgets."""
    return [
        "sweep", "--data", str(data), "--out", str(out),
        "--agents", "raw-html,gist-only", "--budgets", "768,1024",
        "--gister", "extractive", "--max-lookup", "1", "--repair-attempts", "0",
        "--bootstrap", "50", "--no-progress", *extra,
    ]  # fmt: skip


def subprocess_env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(REPO)}


def webagent_command(argv: list[str]) -> list[str]:
    return [sys.executable, "-m", "webagent", *argv]


def open_in_chromium(html: Path) -> dict[str, object]:
    """Open ``html`` in headless Chromium: console errors, failed requests, the image's size."""
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium)")
    errors: list[str] = []
    failed: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("console", lambda m: errors.append(m.text) if m.type == "error" else None)
            page.on("pageerror", lambda e: errors.append(str(e)))
            page.on("requestfailed", lambda r: failed.append(r.url))
            page.goto(html.as_uri())
            page.wait_for_load_state("load")
            image = page.evaluate(
                "() => { const i = document.getElementById('curve');"
                " return {complete: i.complete, width: i.naturalWidth, height: i.naturalHeight}; }"
            )
            rows = page.locator("#cells tbody tr").count()
            quality = page.inner_text("#quality")
        finally:
            browser.close()
    return {"errors": errors, "failed": failed, "image": image, "rows": rows, "quality": quality}
