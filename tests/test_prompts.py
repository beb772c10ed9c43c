"""Prompt template files: variables, fixed wordings in ``[choices]``, and the errors they give."""

from __future__ import annotations

from pathlib import Path
from typing import get_args

import pytest

from webagent.errors import PromptError
from webagent.gist.batch import GistView
from webagent.prompts import all_template_versions, load_template, read_template

TEMPLATE = '''version = 1
variables = ["view_note", "text"]
user = """Read this ({{view_note}}): {{text}}"""

[choices.view_note]
short = "a short view"
long = "the long view"
'''


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "probe.toml"
    path.write_text(text, encoding="utf-8")
    return path


def test_a_choice_is_taken_from_the_file_and_hashed_with_it(tmp_path: Path) -> None:
    template = read_template(write(tmp_path, TEMPLATE))
    (message,) = template.render(view_note=template.choice("view_note", "long"), text="x")
    assert message.content == "Read this (the long view): x"
    other = read_template(write(tmp_path, TEMPLATE.replace("the long view", "the whole view")))
    assert other.version_tag != template.version_tag  # a wording is part of the prompt's hash


def test_an_unknown_choice_names_what_the_file_offers(tmp_path: Path) -> None:
    template = read_template(write(tmp_path, TEMPLATE))
    with pytest.raises(PromptError, match=r"no choice 'medium'.*\['long', 'short'\]"):
        template.choice("view_note", "medium")


@pytest.mark.parametrize(
    "broken",
    [
        TEMPLATE.replace("[choices.view_note]", "[choices.undeclared]"),
        TEMPLATE.replace('short = "a short view"', "short = 3"),
    ],
)
def test_malformed_choices_are_an_error_naming_the_file(tmp_path: Path, broken: str) -> None:
    with pytest.raises(PromptError, match=r"probe\.toml: \[choices\]"):
        read_template(write(tmp_path, broken))


def test_the_gist_prompts_describe_every_view() -> None:
    for name in ("gist", "gist_batch"):
        template = load_template(name)
        assert set(template.choices["view_note"]) == set(get_args(GistView))
    assert set(all_template_versions()) >= {"gist", "gist_batch", "act"}
