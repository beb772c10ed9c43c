"""The import graph keeps the one-way flow of docs/ARCHITECTURE.md:

    foundation (errors, contracts, tokens, answers, atomic, plugins, samples)
      -> html | model (with prompts, provenance) -> gist -> method (memory, levels, lookup,
      retrieval) -> act -> agents (composition) -> config, build -> the public API
      -> the command layer (webagent.cli) -> mind2web_eval | live_runner

A module imports its own layer or a lower one, never a later one: the library (``webagent``)
never imports the evaluator or the live environments, not even lazily; html and model do not
import each other; the evaluator does not import the live runner (BrowserGym included), nor it
the evaluator. No lazy import (inside a function or under TYPE_CHECKING) may hide a circle: if
a deferred import's target reaches back to the importing module, the test names the pair.
Nothing imports by a module-name string (``importlib.import_module``, ``__import__``) but the
registries (entry points, moved names), so every arrow is one this test sees. And bench/'s
figures import their kit as a package, never through ``sys.path``."""

from __future__ import annotations

import ast
from collections.abc import Iterator
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
PACKAGES = ("webagent", "mind2web_eval", "live_runner")

#: module prefix -> layer; the longest matching prefix wins
LAYERS: dict[str, int] = {
    "webagent.errors": 0,
    "webagent.plugins": 0,
    "webagent._moved": 0,
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
    "webagent.method": 3,
    "webagent.method.memory": 3,
    "webagent.method.levels": 3,
    "webagent.method.lookup": 3,
    "webagent.method.retrieval": 3,
    "webagent.method.act": 4,
    "webagent.agents": 5,
    "webagent.config": 6,
    "webagent.build": 6,
    "webagent": 7,
    "webagent.cli": 8,
    "webagent.__main__": 8,
    "mind2web_eval": 9,
    "live_runner": 9,
}
#: same layer, but neither may import the other
PEERS = (
    ("webagent.html", "webagent.model"),
    ("mind2web_eval", "live_runner"),
)
#: the only modules that import by a module-name string: they read registries
REGISTRIES = ("webagent.plugins", "webagent._moved")
_BY_NAME = ("import_module", "__import__")


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
    lazy.write_text(
        "def f():\n    from webagent.method.act import predict_action\n", encoding="utf-8"
    )
    assert list(imports(lazy)) == [("webagent.method.act", 2, True)]


def imports_by_name(path: Path) -> Iterator[int]:
    """Lines of ``path`` that import a module named by a string."""
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Call):
            called = node.func
            name = called.attr if isinstance(called, ast.Attribute) else getattr(called, "id", "")
            if name in _BY_NAME:
                yield node.lineno


def test_no_import_by_module_name_outside_the_registries() -> None:
    found = [
        f"{path.relative_to(ROOT)}:{line}"
        for name, path in MODULES.items()
        if name not in REGISTRIES
        for line in imports_by_name(path)
    ]
    assert found == [], "imports by module-name string (use an entry point):\n" + "\n".join(found)


def test_the_library_imports_no_environment(tmp_path: Path) -> None:
    """The checker sees a lazy import of the live runner inside the library, and a string one."""
    bad = tmp_path / "bad.py"
    bad.write_text(
        "import importlib\n"
        "def f():\n"
        "    from live_runner.render import open_renderer\n"
        "    return importlib.import_module('mind2web_eval.data')\n",
        encoding="utf-8",
    )
    assert list(imports(bad)) == [("live_runner.render", 3, True)]
    assert LAYERS[owner("live_runner.render")] > LAYERS[owner("webagent.cli.render")]
    assert list(imports_by_name(bad)) == [4]


# --- bench/: the figures import their kit as a package (bench/README.md) ---------------------
BENCH = ROOT / "bench"
#: bench/'s own module names, which a script must not import by file name (as bench.* only)
BENCH_NAMES = {p.stem for p in BENCH.rglob("*.py")} | {"kit", "figures"}


def bench_problems(path: Path) -> list[str]:
    """What ``path`` does against bench/'s layout: a ``sys.path`` edit, a bench module imported
    by file name, or a figure script imported (figures stand alone; ``bench.figures`` itself,
    the list of them, is the runner's and the document writer's)."""
    problems = []
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
        if isinstance(node, ast.Attribute) and ast.unparse(node) == "sys.path":
            problems.append(f"{node.lineno}: edits sys.path")
        names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
        if isinstance(node, ast.ImportFrom) and node.module and not node.level:
            names = [node.module] + [f"{node.module}.{a.name}" for a in node.names]
        if names and names[0].split(".")[0] in BENCH_NAMES - {"__init__"}:
            problems.append(f"{node.lineno}: imports {names[0]} by file name, not as bench.*")
        for name in names:
            script = name.removeprefix("bench.figures.")
            if script != name and (BENCH / "figures" / f"{script}.py").is_file():
                problems.append(f"{node.lineno}: imports the figure script {name}")
    return sorted(problems, key=lambda p: int(p.split(":")[0]))


def test_bench_scripts_import_the_kit_as_a_package(tmp_path: Path) -> None:
    wrong = [f"{p.relative_to(ROOT)}:{x}" for p in BENCH.rglob("*.py") for x in bench_problems(p)]
    wrong += [
        f"{path.relative_to(ROOT)}:{line}: the library imports {target}"
        for path in MODULES.values()
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8")))
        if isinstance(node, ast.Import | ast.ImportFrom)
        for target, line in [(ast.unparse(node), node.lineno)]
        if target.split()[1].split(".")[0] in ("bench", "tests")
    ]
    assert wrong == [], "bench/ against its layout:\n" + "\n".join(wrong)
    bad = tmp_path / "bad.py"
    bad.write_text("import sys\nsys.path.insert(0, 'bench')\nfrom method_quality import ROWS\n"
                   "from bench.figures.gist_cost import MODES\n")  # fmt: skip
    assert [p.split(":")[0] for p in bench_problems(bad)] == ["2", "3", "4"]
