"""What the figure scripts share: where things are, the tasks, a real tokenizer, what produced
a result and how it is written, and another revision's code to run beside ours.

Imported as ``bench.kit``: the repository root is on the path after ``make install`` (the
editable install puts it there), with ``PYTHONPATH=.``, or with ``python -m bench.figures.NAME``
from the root. Data is read at run time from ``../shared`` beside the checkout; nothing from
there is copied into the repository. Nothing here imports ``webagent`` at import time, so that
a figure's measuring half can run under an older revision's package tree (:func:`run_under`).
"""

from __future__ import annotations

import argparse
import atexit
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
SUMMARIES = REPO / "bench" / "summaries"
RESULTS = REPO / "bench" / "results"
BUDGET = 8192
#: what the figures and bench/kit/docs.py write into the checkout (not the code's revision)
WRITTEN_BY_BENCHES = ("bench/summaries", "docs/PERFORMANCE.md", "README.md")
EMBEDDED_CAVEAT = (
    "SmolLM2-135M is near chance: figures that depend on its answers prove plumbing only"
)


def find_shared() -> Path:
    """``../shared`` beside the checkout, or beside the folder of worktrees it sits in."""
    for folder in (REPO.parent / "shared", REPO.parent.parent / "shared"):
        if folder.is_dir():
            return folder
    return REPO.parent / "shared"


SHARED = find_shared()
PAGES = SHARED / "pages"
GROUNDING_TOOL = SHARED / "tools" / "make_grounding_tasks.py"
INTENT_TOOL = SHARED / "tools" / "build_intent_tasks.py"


@dataclass(frozen=True)
class Step:
    """One Mind2Web-format step with its gold answer (gold history, as the protocol says)."""

    task_id: str
    index: int
    n_steps: int
    website: str
    task: str
    previous: list[str]
    html: str
    gold_ids: tuple[str, ...]
    op: str
    value: str


def figure_parser(doc: str) -> argparse.ArgumentParser:
    """A figure's options: where its summary (to commit) and its full result (per-step rows,
    git-ignored) go. A trial run sends ``--summaries`` to a temporary folder."""
    raw = argparse.RawDescriptionHelpFormatter  # --help prints the script's docstring as is
    parser = argparse.ArgumentParser(description=doc, formatter_class=raw)
    parser.add_argument("--summaries", type=Path, default=SUMMARIES, help="NAME.md/.json here")
    parser.add_argument("--out", type=Path, default=RESULTS, help="the full result here")
    return parser


def add_task_args(parser: argparse.ArgumentParser) -> None:
    """The saved pages and the tasks that quote their target (``make_grounding_tasks.py``)."""
    parser.add_argument("--pages", type=Path, default=PAGES, help="saved real pages")
    parser.add_argument("--tool", type=Path, default=GROUNDING_TOOL, help="its task maker")
    parser.add_argument("--tasks", type=Path, default=None, help="tasks JSON (default: made)")
    parser.add_argument("--quick", action="store_true", help="a small subset, for a smoke run")


def grounding_tasks(args: argparse.Namespace) -> Path:
    """``--tasks``, else ``make_grounding_tasks.py`` (deterministic) into a temporary folder."""
    if args.tasks:
        return Path(args.tasks)
    out = Path(tempfile.mkdtemp(prefix="bench-tasks-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)  # ~130 MB of JSON
    command = [sys.executable, str(args.tool), str(args.pages), str(out)]
    subprocess.run(command, check=True, capture_output=True)
    return next(out.glob("*_0.json"))


def intent_tasks(specs: list[Path] | None = None, out: Path | None = None) -> Path:
    """Mind2Web records of intent task specs (default: ``../shared/intent_tasks``) on the saved
    pages, built by the shared tool into ``out`` (default: a temporary file)."""
    out = out or Path(tempfile.mkdtemp(prefix="bench-intent-")) / "intent_tasks.json"
    specs = specs or sorted((SHARED / "intent_tasks").glob("specs_*.jsonl"))
    command = [sys.executable, str(INTENT_TOOL), str(PAGES), *map(str, specs), "--out", str(out)]
    subprocess.run(command, check=True, capture_output=True)
    return out


def load_steps(
    path: Path, quick: bool = False, every: int = 1, limit: int | None = None
) -> list[Step]:
    """Every step of every task in ``path`` (``every``-th task, the first ``limit``); ``quick``:
    a few multi-step tasks and single steps on other pages."""
    tasks = json.loads(path.read_text(encoding="utf-8"))[::every][:limit]
    if quick:
        multi = [t for t in tasks if len(t["actions"]) > 1][:3]
        seen = {t["website"] for t in multi}
        single = []
        for t in tasks:
            if len(t["actions"]) == 1 and t["website"] not in seen:
                seen.add(t["website"])
                single.append(t)
        tasks = multi + single[:6]
    steps = []
    for t in tasks:
        for i, a in enumerate(t["actions"]):
            gold = tuple(c["backend_node_id"] for c in a["pos_candidates"])
            steps.append(
                Step(t["annotation_id"], i, len(t["actions"]), t["website"], t["confirmed_task"],
                     list(t["action_reprs"][:i]), a["cleaned_html"], gold, a["operation"]["op"],
                     a["operation"].get("value") or "")
            )  # fmt: skip
    return steps


def sha12(*paths: Path) -> str:
    """The data hash of :mod:`webagent.provenance` over saved pages (``*.html``), cut to 12."""
    from webagent.provenance import data_hash

    return data_hash(*paths, pattern="*.html")[:12]


def command_line() -> str:
    """How this process was started, as a command run from the repository root."""
    script = Path(sys.argv[0]).resolve()
    shown = script.relative_to(REPO) if script.is_relative_to(REPO) else Path(sys.argv[0]).name
    return " ".join([str(shown), *sys.argv[1:]])


def code_revision() -> str | None:
    """The code's git revision: summaries written by this or an earlier figure do not count."""
    from webagent.provenance import git_revision

    return git_revision(REPO, ignore=WRITTEN_BY_BENCHES)


def provenance(settings: dict[str, Any], data: dict[str, str]) -> dict[str, Any]:
    """What produced a result (``webagent.provenance``) and how it was called."""
    from webagent.provenance import machine, now, package_versions, prompt_versions

    return {
        "date": now(),
        "git_revision": code_revision(),
        "prompt_versions": prompt_versions(),
        "packages": package_versions(),
        "settings": settings,
        "data": data,
        "machine": {**machine(), "gpu": "none"},
        "command": command_line(),
    }


@cache
def local_model() -> Any:
    """The embedded model (SmolLM2 via llama-cpp-python), for its real tokenizer and answers."""
    from webagent.model.factory import build_model
    from webagent.model.settings import ModelSettings

    return build_model(ModelSettings(backend="local"))


def real_counter() -> Any:
    """``count_tokens`` of the embedded model's own tokenizer, memoised by text."""
    model = local_model()
    memo: dict[str, int] = {}

    def count(text: str) -> int:
        if len(memo) > 50_000:
            memo.clear()
        if text not in memo:
            memo[text] = model.count_tokens(text)
        return memo[text]

    return count


def markdown_table(headers: str | list[str], rows: list[list[Any]]) -> str:
    """``headers``: a list, or one string of them joined by `` | ``."""
    headers = headers.split(" | ") if isinstance(headers, str) else headers

    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 100 else f"{v:,.0f}"
        return str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def publish(
    name: str,
    args: argparse.Namespace,
    *,
    settings: dict[str, Any],
    data: dict[str, str],
    started: float,
    text: str,
    **parts: Any,
) -> None:
    """``args.out/NAME.json`` (everything, schema_version 1) and the summary to commit:
    ``args.summaries/NAME.md`` (``text`` and the command) and a ``NAME.json`` without the
    per-step and per-page rows, what bench/kit/docs.py turns into docs/PERFORMANCE.md."""
    payload = {"schema_version": 1, "benchmark": name, "provenance": provenance(settings, data)}
    payload |= {"wall_s": time.perf_counter() - started, **parts}
    small = {k: v for k, v in payload.items() if k not in ("steps", "pages")}
    for folder, content in ((args.out, payload), (args.summaries, small)):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.json").write_text(json.dumps(content, indent=2, default=str) + "\n")
    command = payload["provenance"]["command"]
    (args.summaries / f"{name}.md").write_text(f"{text}\n\nCommand: `python {command}`\n")
    print(f"{text}\n\nwrote {args.summaries / name}.md/.json and {args.out / name}.json")


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def git(*argv: str) -> str:
    done = subprocess.run(["git", *argv], cwd=REPO, capture_output=True, text=True, check=True)
    return done.stdout.strip()


def unpack(revision: str, into: Path) -> Path:
    """The package tree of ``revision`` (``git archive``), without touching any worktree."""
    archive = subprocess.run(
        ["git", "archive", revision, "webagent", "prompts"], cwd=REPO, capture_output=True,
        check=True,
    ).stdout  # fmt: skip
    into.mkdir(parents=True, exist_ok=True)
    subprocess.run(["tar", "-x", "-C", str(into)], input=archive, check=True)
    return into


def run_under(code: Path, script: str, *argv: str) -> None:
    """``script`` (a figure's file) in a process that imports ``webagent`` from the package
    tree ``code`` and the kit from this checkout (``code`` holds no ``bench``)."""
    env = {**os.environ, "PYTHONPATH": os.pathsep.join([str(code), str(REPO)])}
    subprocess.run([sys.executable, script, *argv], env=env, check=True)
