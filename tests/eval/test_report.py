"""The HTML report renders offline in real Chromium and runs nothing from a page; the
terminal and compare tables read the same results."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from eval_oracle import Oracle, oracle_model

from mind2web_eval.data import load_tasks
from mind2web_eval.report.compare import compare_rows, format_compare
from mind2web_eval.report.html import esc, mark_ids
from mind2web_eval.runner import EvalSettings, EvalSubject, run_eval
from mind2web_eval.scoring import ScoringSettings
from webagent.agents.registry import AgentSettings, build_agent

CHROMIUM = Path("/usr/bin/chromium")
CHROMIUM_ARGS = [
    "--no-sandbox", "--disable-gpu", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--no-first-run", "--disable-quic",
]  # fmt: skip
PAYLOADS = (
    '<script>window.__pwned = 1; alert("script")</script>'
    '<img backend_node_id="9001" src="x" onerror="window.__pwned = 2; alert(\'img\')">'
    '<a backend_node_id="9002" href="javascript:window.__pwned=3">Deals</a>'
    '<svg backend_node_id="9003" onload="window.__pwned = 4"></svg>'
    "<style>body { display: none }</style>"
)


def hostile_data(raw_folder: Path, tmp_path: Path) -> Path:
    tasks = json.loads((raw_folder / "test_task" / "test_task_0.json").read_text())
    task = tasks[0]
    task["confirmed_task"] += ' <img src=x onerror="window.__pwned=5">'
    for step in task["actions"]:
        step["cleaned_html"] = step["cleaned_html"].replace(
            '<main backend_node_id="200">', '<main backend_node_id="200">' + PAYLOADS
        )
    path = tmp_path / "hostile.json"
    path.write_text(json.dumps([task]))
    return path


HOSTILE_GIST = '<script>window.__pwned = 6</script><img src=x onerror="window.__pwned = 7">'


def run(data: Path, out: Path, agent: str, wrong: set[str], gist: str = "a form") -> Path:
    tasks, _ = load_tasks(data)
    # the pages fit 2048 tokens whole: gist them anyway, so the report shows gists
    settings = AgentSettings(agent=agent, context_budget=2048, read_whole_page=False)  # type: ignore[arg-type]
    model = oracle_model(Oracle(tasks, wrong=wrong, gist=gist))
    subject = EvalSubject(
        agent=build_agent(settings, model),
        agent_settings=settings.manifest(),
        model_settings={"backend": "scripted"},
        model_identity={"backend": "scripted", "model": model.name},
    )
    scoring = ScoringSettings(bootstrap=20)
    run_eval(EvalSettings(data=str(data), out=out, scoring=scoring, progress=False), subject)
    return out


def test_marking_ids_only_wraps_whole_ids() -> None:
    text = esc('id=10 <b id="101"> id=1010 id=101-x')
    assert mark_ids(text, ["101"], "gold") == (
        'id=10 &lt;b <mark class="gold">id=&quot;101&quot;</mark>&gt; id=1010 id=101-x'
    )


def test_report_escapes_everything_from_pages(raw_folder: Path, tmp_path: Path) -> None:
    out = run(
        hostile_data(raw_folder, tmp_path), tmp_path / "run", "readagent-p", set(), HOSTILE_GIST
    )
    report = (out / "report.html").read_text()
    assert "default-src 'none'" in report
    assert "<script" not in report.lower()
    assert "onerror=" not in report.replace("onerror=&quot;", "").replace("onerror=&#34;", "")
    assert "&lt;script&gt;" in report or "script" not in report  # shown as text, if at all
    assert 'class="gold"' in report  # the gold element is marked in what the prompt showed
    assert "http://" not in report and "https://" not in report


@pytest.mark.browser
def test_report_renders_in_chromium_and_runs_no_payload(raw_folder: Path, tmp_path: Path) -> None:
    sync_api = pytest.importorskip("playwright.sync_api")
    if not CHROMIUM.exists():
        pytest.skip("no Chromium at /usr/bin/chromium (apt-get install chromium)")
    out = run(
        hostile_data(raw_folder, tmp_path), tmp_path / "run", "readagent-p", set(), HOSTILE_GIST
    )
    dialogs: list[str] = []
    requests: list[str] = []
    with sync_api.sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=str(CHROMIUM), args=CHROMIUM_ARGS)
        try:
            page = browser.new_page()
            page.on("dialog", lambda d: (dialogs.append(d.message), d.dismiss()))
            page.on("request", lambda r: requests.append(r.url))
            page.goto((out / "report.html").as_uri())
            page.wait_for_load_state("load")
            for step in page.locator("details.step > summary").all():
                step.click()  # open every step, so every payload is in the live DOM
            page.wait_for_timeout(300)
            assert page.evaluate("typeof window.__pwned") == "undefined"
            assert page.title().startswith("Mind2Web evaluation: readagent-p")
            assert page.locator("#summary table").count() == 2
            assert page.locator("#summary table.kv th").count() == 0
            assert page.locator("details.step").count() == 4
            assert page.locator("details.step[open]").count() == 4
            assert page.locator("mark.gold").count() >= 1
            body = page.inner_text("body")
            # the task's payload is visible as text; the page's script was cleaned away
            assert '<img src=x onerror="window.__pwned=5">' in body
            assert HOSTILE_GIST in body  # the model's answers too
            assert page.locator("img, svg, iframe, a[href^='javascript']").count() == 0
        finally:
            browser.close()
    assert dialogs == []
    assert requests == [(out / "report.html").as_uri()]


def test_compare_table_of_three_runs(raw_folder: Path, tmp_path: Path) -> None:
    runs = [
        run(raw_folder, tmp_path / "rp", "readagent-p", set()),
        run(raw_folder, tmp_path / "raw", "raw-html", {"fx-fly-0002", "fx-shop-0001"}),
        run(raw_folder, tmp_path / "gist", "gist-only", {"fx-join-0003"}),
    ]
    rows = compare_rows(runs)
    assert [r.agent for r in rows] == ["readagent-p", "raw-html", "gist-only"]
    assert rows[0].step_sr > rows[1].step_sr
    assert rows[0].steps == rows[1].steps == 10
    assert rows[0].calls_per_step > rows[1].calls_per_step  # gists + look-up + act
    text = format_compare(rows)
    assert "step SR" in text and "readagent-p" in text and "protocol: candidate pool" in text
    # look-up recall applies only to an agent that chooses what it reads in full; cached gist
    # tokens only to one that writes gists (no cache here: none served, all spent)
    assert rows[0].lookup_recall is not None
    assert rows[1].lookup_recall is None and rows[2].lookup_recall is None
    assert rows[1].cached_tokens_per_step is None and rows[2].cached_tokens_per_step == 0
    raw_line = next(line for line in text.splitlines() if line.startswith("raw "))
    assert raw_line.count("\u2014") == 2 and "cached/step" in text
    assert all(r.calls_per_step > 0 and r.tokens_per_step > 0 for r in rows)
    # each later run against the first, step by step: every step answered by both
    assert rows[0].against_first is None
    for r in rows[1:]:
        d = r.against_first
        assert d is not None and (d.steps, d.left_out) == (10, 0)
        assert d.step_sr == pytest.approx(r.micro_step_sr - rows[0].micro_step_sr)
        assert d.gained - d.lost == round(10 * d.step_sr) and d.lost > 0
        assert d.ci is not None and d.ci.low <= d.step_sr <= d.ci.high
    assert "against rp, step by step" in text
