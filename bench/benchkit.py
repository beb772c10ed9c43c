"""Shared pieces of the benchmarks: data, the token-counting model, provenance, output.

Data is read at run time from ``../shared`` beside the checkout (overridable by flags);
nothing from there is copied into the repository. Every result carries what produced it:
model, settings, prompt versions, data hash, date and git revision.
"""

from __future__ import annotations

import atexit
import json
import shutil
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from webagent.provenance import (
    data_hash,
    git_revision,
    machine,
    now,
    package_versions,
    prompt_versions,
)

REPO = Path(__file__).resolve().parent.parent
SHARED = REPO.parent / "shared"


def find_shared() -> Path:
    """``../shared`` beside the checkout, or beside the folder of worktrees it sits in."""
    for folder in (SHARED, REPO.parent.parent / "shared"):
        if folder.is_dir():
            return folder
    return SHARED


DEFAULT_PAGES = SHARED / "pages"
DEFAULT_TOOL = SHARED / "tools" / "make_grounding_tasks.py"
BUDGET = 8192
#: what the benchmarks and bench/performance_doc.py write into the checkout
WRITTEN_BY_BENCHES = ("bench/summaries", "docs/PERFORMANCE.md", "README.md")
EMBEDDED_CAVEAT = (
    "SmolLM2-135M is near chance: figures that depend on its answers prove plumbing only"
)


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


def add_data_args(parser: Any) -> None:
    parser.add_argument("--pages", type=Path, default=DEFAULT_PAGES, help="saved real pages")
    parser.add_argument("--tool", type=Path, default=DEFAULT_TOOL, help="make_grounding_tasks.py")
    parser.add_argument("--tasks", type=Path, default=None, help="tasks JSON (default: generate)")
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--quick", action="store_true", help="a small subset, for a smoke run")


def make_tasks(pages: Path, tool: Path) -> Path:
    """Run make_grounding_tasks.py (deterministic, default seed) into a temporary folder."""
    out = Path(tempfile.mkdtemp(prefix="bench-tasks-"))
    atexit.register(shutil.rmtree, out, ignore_errors=True)  # ~130 MB of JSON
    subprocess.run(
        [sys.executable, str(tool), str(pages), str(out)], check=True, capture_output=True
    )
    return next(out.glob("*_0.json"))


def load_steps(path: Path, quick: bool = False) -> list[Step]:
    tasks = json.loads(path.read_text(encoding="utf-8"))
    if quick:  # a few multi-step tasks (first vs later steps) and single steps on other pages
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
            steps.append(
                Step(
                    task_id=t["annotation_id"],
                    index=i,
                    n_steps=len(t["actions"]),
                    website=t["website"],
                    task=t["confirmed_task"],
                    previous=list(t["action_reprs"][:i]),
                    html=a["cleaned_html"],
                    gold_ids=tuple(c["backend_node_id"] for c in a["pos_candidates"]),
                    op=a["operation"]["op"],
                    value=a["operation"].get("value") or "",
                )
            )
    return steps


def resolve_tasks(args: Any) -> Path:
    return Path(args.tasks) if args.tasks else make_tasks(args.pages, args.tool)


def sha12(*paths: Path) -> str:
    """The data hash of :mod:`webagent.provenance` over saved pages (``*.html``), cut to 12."""
    return data_hash(*paths, pattern="*.html")[:12]


def provenance(settings: dict[str, Any], data: dict[str, str]) -> dict[str, Any]:
    """What produced a benchmark result (``webagent.provenance``) and how it was called."""
    return {
        "date": now(),
        # the code's revision: summaries written by this or an earlier bench do not count
        "git_revision": git_revision(REPO, ignore=WRITTEN_BY_BENCHES),
        "prompt_versions": prompt_versions(),
        "packages": package_versions(),
        "settings": settings,
        "data": data,
        "machine": {**machine(), "gpu": "none"},
        "command": " ".join([Path(sys.argv[0]).name, *sys.argv[1:]]),
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


def markdown_table(headers: list[str], rows: list[list[Any]]) -> str:
    def cell(v: Any) -> str:
        if isinstance(v, float):
            return f"{v:.3g}" if abs(v) < 100 else f"{v:,.0f}"
        return str(v)

    lines = ["| " + " | ".join(headers) + " |", "|" + "---|" * len(headers)]
    lines += ["| " + " | ".join(cell(v) for v in row) + " |" for row in rows]
    return "\n".join(lines)


def write_result(out: Path, name: str, payload: dict[str, Any], text: str) -> None:
    """``NAME.json`` (schema_version 1) and ``NAME.md`` (the readable tables) under ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    payload = {"schema_version": 1, "benchmark": name, **payload}
    (out / f"{name}.json").write_text(json.dumps(payload, indent=2, default=str) + "\n")
    (out / f"{name}.md").write_text(text + "\n")
    print(text)
    print(f"\nwrote {out / (name + '.json')} and {out / (name + '.md')}")


#: where the small summaries that docs/PERFORMANCE.md is built from are committed
SUMMARIES = REPO / "bench" / "summaries"


def write_summary(name: str, payload: dict[str, Any], text: str, folder: Path = SUMMARIES) -> None:
    """``NAME.md`` and a small ``NAME.json`` (no per-step rows) under ``folder``, to commit:
    what ``bench/performance_doc.py`` turns into docs/PERFORMANCE.md."""
    folder.mkdir(parents=True, exist_ok=True)
    small = {"schema_version": 1, "benchmark": name}
    small |= {k: v for k, v in payload.items() if k != "steps"}
    (folder / f"{name}.json").write_text(json.dumps(small, indent=2, default=str) + "\n")
    command = small.get("provenance", {}).get("command", "")
    (folder / f"{name}.md").write_text(f"{text}\n\nCommand: `python bench/{command}`\n")


def publish(
    name: str,
    out: Path,
    *,
    settings: dict[str, Any],
    data: dict[str, str],
    started: float,
    text: str,
    **parts: Any,
) -> None:
    """A benchmark's full result under ``out`` and its summary under bench/summaries/."""
    payload = {
        "provenance": provenance(settings, data),
        "wall_s": time.perf_counter() - started,
        **parts,
    }
    write_result(out, name, payload, text)
    write_summary(name, payload, text)


def mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def median(values: list[float]) -> float:
    if not values:
        return float("nan")
    s = sorted(values)
    mid = len(s) // 2
    return s[mid] if len(s) % 2 else (s[mid - 1] + s[mid]) / 2
