"""Prompt templates live in ``prompts/*.toml``; this module loads and renders them.

A template file declares its ``version``, its ``variables`` and one string per chat role
(``system``, ``user``). Placeholders are ``{{name}}``. A variable whose text is one of a few
fixed wordings takes them from the file's ``[choices.NAME]`` table (``Template.choice``), so
every word a prompt says is in its file. Rendering fails on a missing or an unknown
variable, and every rendered prompt carries a content hash of its template, which goes into
cache keys and run manifests.
"""

from __future__ import annotations

import hashlib
import re
import tomllib
from functools import cache
from pathlib import Path

from pydantic import BaseModel

from webagent.errors import PromptError
from webagent.model.base import Message

_PLACEHOLDER = re.compile(r"\{\{\s*([a-z_][a-z0-9_]*)\s*\}\}")
_ROLES = ("system", "user")


def prompts_dir() -> Path:
    """The installed copy (wheel) or the repository's ``prompts/`` (editable install)."""
    here = Path(__file__).resolve().parent
    for candidate in (here / "_prompts", here.parent / "prompts"):
        if candidate.is_dir():
            return candidate
    raise PromptError(f"no prompts folder next to {here}; reinstall readagent-web")


class Template(BaseModel):
    name: str
    version: int
    variables: tuple[str, ...]
    parts: dict[str, str]
    choices: dict[str, dict[str, str]] = {}
    sha256: str

    @property
    def version_tag(self) -> str:
        """``name@version#hash12``: what manifests and caches record."""
        return f"{self.name}@{self.version}#{self.sha256[:12]}"

    def choice(self, variable: str, key: str) -> str:
        """The wording ``key`` of ``variable`` from the template's ``[choices]``."""
        options = self.choices.get(variable, {})
        if key not in options:
            raise PromptError(
                f"prompt {self.name!r}: no choice {key!r} for {variable!r} "
                f"(the file offers {sorted(options) or 'none'})"
            )
        return options[key]

    def render(self, **values: object) -> tuple[Message, ...]:
        missing = set(self.variables) - values.keys()
        unknown = values.keys() - set(self.variables)
        if missing or unknown:
            raise PromptError(
                f"prompt {self.name!r}: missing variables {sorted(missing)}, "
                f"unknown variables {sorted(unknown)}"
            )
        text = {k: str(v) for k, v in values.items()}
        return tuple(
            Message(role=role, content=_PLACEHOLDER.sub(lambda m: text[m.group(1)], body))  # type: ignore[arg-type]
            for role, body in self.parts.items()
        )


@cache
def load_template(name: str) -> Template:
    """The template ``prompts/NAME.toml`` (read once per process)."""
    return read_template(prompts_dir() / f"{name}.toml")


def read_template(path: Path) -> Template:
    """A template file, checked: its parts, its declared variables, its ``[choices]``."""
    name = path.stem
    try:
        raw = path.read_bytes()
        data = tomllib.loads(raw.decode("utf-8"))
    except FileNotFoundError as exc:
        raise PromptError(f"prompt template {path} does not exist") from exc
    except (tomllib.TOMLDecodeError, UnicodeDecodeError) as exc:
        raise PromptError(f"prompt template {path} is not valid TOML: {exc}") from exc
    parts = {role: data[role] for role in _ROLES if isinstance(data.get(role), str)}
    if "user" not in parts:
        raise PromptError(f"prompt template {path} has no 'user' part")
    declared = tuple(data.get("variables", ()))
    used = {m.group(1) for body in parts.values() for m in _PLACEHOLDER.finditer(body)}
    if used != set(declared):
        raise PromptError(
            f"prompt template {path}: declared variables {sorted(declared)} "
            f"but the text uses {sorted(used)}"
        )
    choices = data.get("choices", {})
    wellformed = isinstance(choices, dict) and all(
        isinstance(options, dict) and all(isinstance(v, str) for v in options.values())
        for options in choices.values()
    )
    if not wellformed or not set(choices) <= set(declared):
        raise PromptError(
            f"prompt template {path}: [choices] must map declared variables to tables of strings"
        )
    return Template(
        name=name,
        version=int(data.get("version", 0)),
        variables=declared,
        parts=parts,
        choices=choices,
        sha256=hashlib.sha256(raw).hexdigest(),
    )


def all_template_versions() -> dict[str, str]:
    """Version tag of every template, for run manifests."""
    return {p.stem: load_template(p.stem).version_tag for p in sorted(prompts_dir().glob("*.toml"))}
