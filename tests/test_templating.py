"""Both HTML reports come from Jinja2 templates with autoescape on one shared base."""

from __future__ import annotations

from pathlib import Path

from live_runner.viewer import TEMPLATES as LIVE_TEMPLATES
from mind2web_eval.report.html import TEMPLATES as EVAL_TEMPLATES
from webagent.templating import SHARED, clip, environment

EVIL = "<script>alert(1)</script>\"'&"


def test_both_reports_extend_the_shared_base() -> None:
    for folder in (EVAL_TEMPLATES, LIVE_TEMPLATES):
        first = (folder / "report.html").read_text(encoding="utf-8").splitlines()[0]
        assert first == '{% extends "base.html" %}', folder
        assert not (folder / "base.html").exists()
    assert (SHARED / "base.html").is_file() and (SHARED / "macros.html").is_file()


def test_values_are_escaped_by_the_engine(tmp_path: Path) -> None:
    env = environment(EVAL_TEMPLATES)
    assert env.autoescape is True
    macros = env.get_template("macros.html").module
    html = str(macros.table(["h" + EVIL], [[EVIL, 1]], "c" + EVIL))  # type: ignore[attr-defined]
    assert "<script>" not in html and "&lt;script&gt;alert(1)&lt;/script&gt;" in html
    assert html.count("<td>") == 2 and html.count("<th>") == 1


def test_clip_counts_what_it_leaves_out() -> None:
    assert clip("abc", 10) == "abc"
    assert clip("a" * 12, 10) == "a" * 10 + "\n… (2 more characters)"
