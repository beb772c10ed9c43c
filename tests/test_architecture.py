"""The import graph keeps the one-way flow of docs/ARCHITECTURE.md:

    foundation (errors, contracts, tokens, answers, atomic, samples)
      -> html | model (with prompts, provenance) -> gist -> memory / lookup / retrieval
      -> act -> agents (composition) -> config, build -> the public API (webagent/__init__)
      -> cli | mind2web_eval | live_runner | webagent.browsergym

A module may import its own layer or a lower one, never a later one; html and model do not
import each other; the evaluator does not import the live runner or the BrowserGym agent
(which builds on the live runner), nor they it. And no lazy import (inside a function or
under TYPE_CHECKING) may hide a circle: if a deferred import's target reaches back to the
importing module, the test names the pair."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("webagent", "mind2web_eval", "live_runner")

#: module prefix -> layer; the longest matching prefix wins
LAYERS: dict[str, int] = {
    "webagent.errors": 0,
    "webagent.contracts": 0,
    "webagent.tokens": 0,
    "webagent.answers": 0,
    "webagent.prompts": 1,
    "webagent.provenance": 1,
    "webagent.atomic": 0,
    "webagent.textfiles": 0,
    "webagent.templating": 0,
    "webagent.samples": 0,
    "webagent.html": 1,
    "webagent.model": 1,
    "webagent.gist": 2,
    "webagent.memory": 3,
    "webagent.levels": 3,
    "webagent.lookup": 3,
    "webagent.retrieval": 3,
    "webagent.act": 4,
    "webagent.agents": 5,
    "webagent.config": 6,
    "webagent.build": 6,
    "webagent": 7,
    "webagent.cli": 8,
    "webagent.__main__": 8,
    "mind2web_eval": 8,
    "live_runner": 8,
    "webagent.browsergym": 8,
}
#: same layer, but neither may import the other
PEERS = (
    ("webagent.html", "webagent.model"),
    ("mind2web_eval", "live_runner"),
    ("mind2web_eval", "webagent.browsergym"),
)


def module_name(path: Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def all_modules() -> dict[str, Path]:
    found = {}
    for package in PACKAGES:
        for path in sorted((ROOT / package).rglob("*.py")):
            found[module_name(path)] = path
    return found


MODULES = all_modules()


def owner(name: str) -> str:
    """The longest LAYERS prefix of ``name``."""
    best = ""
    for prefix in LAYERS:
        if (name == prefix or name.startswith(prefix + ".")) and len(prefix) > len(best):
            best = prefix
    assert best, f"{name} belongs to no layer; add it to LAYERS in tests/test_architecture.py"
    return best


def _target(node: ast.ImportFrom | ast.Import, alias: ast.alias) -> str | None:
    if isinstance(node, ast.Import):
        name = alias.name
    else:
        if node.level or node.module is None:
            return None
        full = f"{node.module}.{alias.name}"
        name = full if full in MODULES else node.module
    return name if name.split(".")[0] in PACKAGES else None


def imports(path: Path) -> Iterator[tuple[str, int, bool]]:
    """(imported module, line, deferred) for every project import in ``path``; deferred =
    inside a function or under ``if TYPE_CHECKING``."""
    tree = ast.parse(path.read_text(encoding="utf-8"))

    def visit(node: ast.AST, deferred: bool) -> Iterator[tuple[str, int, bool]]:
        for child in ast.iter_child_nodes(node):
            inner = deferred or isinstance(child, ast.FunctionDef | ast.AsyncFunctionDef)
            if isinstance(child, ast.If) and "TYPE_CHECKING" in ast.unparse(child.test):
                inner = True
            if isinstance(child, ast.Import | ast.ImportFrom):
                for alias in child.names:
                    target = _target(child, alias)
                    if target is not None:
                        yield target, child.lineno, deferred
            yield from visit(child, inner)

    yield from visit(tree, False)


def graph(deferred: bool) -> dict[str, set[str]]:
    edges: dict[str, set[str]] = {m: set() for m in MODULES}
    for name, path in MODULES.items():
        for target, _, lazy in imports(path):
            if lazy == deferred and target in MODULES:
                edges[name].add(target)
    return edges


def reaches(edges: dict[str, set[str]], start: str, goal: str) -> bool:
    seen, todo = set(), [start]
    while todo:
        node = todo.pop()
        if node == goal:
            return True
        if node not in seen:
            seen.add(node)
            todo.extend(edges.get(node, ()))
    return False


def test_every_module_has_a_layer() -> None:
    for name in MODULES:
        owner(name)


def test_no_stage_imports_a_later_stage() -> None:
    wrong = []
    for name, path in MODULES.items():
        here = owner(name)
        for target, line, _ in imports(path):
            there = owner(target)
            later = LAYERS[there] > LAYERS[here]
            peers = any({here, there} == {a, b} for a, b in PEERS)
            if later or peers:
                wrong.append(f"{path.relative_to(ROOT)}:{line}: {name} ({here}) imports {target}")
    assert wrong == [], "imports against the flow:\n" + "\n".join(wrong)


def test_no_lazy_import_hides_a_circle() -> None:
    eager = graph(deferred=False)
    circles = []
    for name, path in MODULES.items():
        for target, line, deferred in imports(path):
            if deferred and target in MODULES and reaches(eager, target, name):
                circles.append(
                    f"{path.relative_to(ROOT)}:{line}: {name} -> {target} -> ... -> {name}"
                )
    assert circles == [], "lazy imports that hold a circle apart:\n" + "\n".join(circles)


def test_the_checker_sees_a_violation(tmp_path: Path) -> None:
    """The checker itself works: an html module importing the agents is caught."""
    bad = tmp_path / "bad.py"
    bad.write_text("from webagent.agents.registry import build_agent\n", encoding="utf-8")
    found = list(imports(bad))
    assert found == [("webagent.agents.registry", 1, False)]
    assert LAYERS[owner("webagent.agents.registry")] > LAYERS[owner("webagent.html.segment")]
    lazy = tmp_path / "lazy.py"
    lazy.write_text("def f():\n    from webagent.act import predict_action\n", encoding="utf-8")
    assert list(imports(lazy)) == [("webagent.act", 2, True)]
