"""Every request the agents send, hashed: the check that a change leaves prompts byte-identical.

Capable-model answers are recorded keyed by ``Request.cache_key``; a change to how tokens are
counted must not change one byte of what is sent. This runs every registered agent on pages,
at several budgets, with the model and extractive gisters, two steps a page on one model (so
that counts carried from step to step are exercised), and lists the cache key of every request
in order. Answers come from a fixed policy (``answer``) that depends on the request alone: gists
naming the first controls shown, look-ups naming parts 1-3 (ReadAgent-S: one a round, then
STOP), an invalid act answer first (so that the repair prompt is sent) and then the first id
shown, MindAct's first option.

Counters: ``estimate`` (the byte estimate) and ``smollm2`` (the embedded model's tokenizer,
in-process). ``tests/agents/test_prompt_identity.py`` compares the bundled samples against
``tests/data/prompt_keys.json``, written from main; over the saved pages with the intent tasks:

    PYTHONPATH=. python tests/agents/prompt_record.py --shared --out /tmp/after.json
    PYTHONPATH=<main checkout> python tests/agents/prompt_record.py --shared --out /tmp/before.json
    python tests/agents/prompt_record.py --compare /tmp/before.json /tmp/after.json
"""

from __future__ import annotations

import argparse
import hashlib
import json
import re
import subprocess
import sys
import tempfile
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from webagent.agents.registry import AgentSettings, agent_names, build_agent, reads_axtree
from webagent.contracts import Observation
from webagent.gist.batch import split_parts
from webagent.method.memory import SHOWN_ID
from webagent.model.base import Request
from webagent.model.client import Model
from webagent.model.scripted import ScriptedBackend

REPO = Path(__file__).resolve().parents[2]
SHARED = next(
    (f for f in (REPO.parent / "shared", REPO.parent.parent / "shared") if f.is_dir()),
    REPO.parent / "shared",
)
MODEL_NAME = "prompt-check"
BUDGETS = (2048, 4096, 8192)
GISTERS = ("model", "extractive")
TASK = "Find the cheapest option, sort the results by price and sign up with jane@example.com"
PREVIOUS = ["[link] Flights -> CLICK", "[textbox] From -> TYPE: Boston"]
_MARK = re.compile(r"\[(\d+)[\s\]]")
_TAG = re.compile(r"<[^>]*>|\[[^\]]*\]")


@dataclass(frozen=True)
class PageCase:
    name: str
    html: str
    task: str = TASK
    previous: tuple[str, ...] = tuple(PREVIOUS)


def _gist(part: str) -> str:
    numbers = list(dict.fromkeys(_MARK.findall(part)))[:4]
    ids = list(dict.fromkeys(SHOWN_ID.findall(part)))[:4]
    words = _TAG.sub(" ", part).split()[:40]
    named = [f"control (id={n})" for n in numbers or ids]
    return " ".join(words) + ("; " + "; ".join(named) if named else "")


def answer(request: Request) -> str:
    """The policy's answer: a function of the request alone."""
    text = request.messages[-1].content
    schema = request.json_schema or {}
    properties = schema.get("properties", {})
    if request.phase == "gist":
        parts = split_parts(text)
        if parts and "1" in properties:
            return json.dumps({str(n): _gist(p) for n, p in enumerate(parts, start=1)})
        match = re.search(r"<page_part>\n(.*)\n</page_part>", text, re.DOTALL)
        return _gist(match.group(1) if match else text)
    if request.phase == "lookup":
        if "sections" in properties:  # a levelled memory's section round
            return json.dumps({"sections": [1, 2], "reason": "policy"})
        if "pages" in properties:
            return json.dumps({"pages": [1, 2, 3], "reason": "policy"})
        opened = re.search(r"Parts opened so far: ([^.\n]*)\.", text)
        count = 0 if opened is None or opened.group(1) == "none" else opened.group(1).count(",") + 1
        page = "STOP" if count >= 2 else str(count + 1)
        return json.dumps({"page": page, "reason": "policy"})
    if "choice" in properties:
        return json.dumps({"choice": properties["choice"]["enum"][0], "op": "CLICK", "value": ""})
    if request.phase == "act":
        return json.dumps({"element_id": "not-an-id", "op": "CLICK", "value": ""})
    enum = properties.get("element_id", {}).get("enum")
    prompt = "\n".join(m.content for m in request.messages)
    element = enum[0] if enum else next(iter(SHOWN_ID.findall(prompt)), "none")
    return json.dumps({"element_id": element, "op": "CLICK", "value": ""})


class RecordingScripted(ScriptedBackend):
    """The policy's answers, counting with ``counter`` (None: the estimate); ``remote``: as a
    server's tokenizer would (``counts_remotely``: many texts a request, speculative probes),
    which must change no prompt."""

    def __init__(self, counter: Callable[[str], int] | None, remote: bool = False) -> None:
        super().__init__(answer, name=MODEL_NAME, context_window=8192)
        self._counter = counter
        self._remote = remote

    @property
    def counts_remotely(self) -> bool:
        return self._remote

    def count_tokens(self, text: str) -> int:
        if self._counter is None:
            return super().count_tokens(text)
        return self._counter(text) if text else 0


def smollm2_counter() -> Callable[[str], int]:
    from webagent.model.factory import build_model
    from webagent.model.settings import ModelSettings

    model = build_model(ModelSettings(backend="local"))
    return model.backend.count_tokens


def record(
    pages: Iterable[PageCase],
    counter: Callable[[str], int] | None,
    budgets: Iterable[int] = BUDGETS,
    agents: Iterable[str] | None = None,
    *,
    remote: bool = False,
    settings: Mapping[str, object] | None = None,
    levelled: set[str] | None = None,
) -> dict[str, list[str]]:
    """Per ``agent|gister|budget|page``: the cache key of every request, in order (two steps:
    without previous actions, then with the page's). ``settings``: more agent settings;
    ``levelled`` gets the cases in which a step gave the page memory levels."""
    out: dict[str, list[str]] = {}
    pages = list(pages)
    # the bundled pages are saved HTML: an agent that reads the accessibility tree has none
    for agent in agents or [a for a in agent_names() if not reads_axtree(a)]:
        for gister in GISTERS:
            for budget in budgets:
                backend = RecordingScripted(counter, remote)
                model = Model(backend, sleep=lambda _: None)
                agent_settings = AgentSettings(
                    agent=agent,  # type: ignore[arg-type]
                    context_budget=budget,
                    gister=gister,  # type: ignore[arg-type]
                    **(settings or {}),  # type: ignore[arg-type]
                )
                built = build_agent(agent_settings, model, None)
                for page in pages:
                    start = len(backend.requests)
                    case = f"{agent}|{gister}|{budget}|{page.name}"
                    for previous in ((), page.previous):
                        trace = built.step(
                            Observation(
                                task=page.task, previous_actions=list(previous), html=page.html
                            )
                        )
                        if trace.sections and levelled is not None:
                            levelled.add(case)
                    out[case] = [r.cache_key(MODEL_NAME) for r in backend.requests[start:]]
    return out


def digest(keys: dict[str, list[str]]) -> dict[str, str]:
    """One short hash per case (what the committed file keeps)."""
    return {
        case: f"{len(k)}:" + hashlib.sha256("".join(k).encode()).hexdigest()[:16]
        for case, k in sorted(keys.items())
    }


def bundled_pages() -> list[PageCase]:
    """The pages shipped with the package and the tests."""
    folders = [REPO / "webagent" / "samples", REPO / "tests" / "data" / "pages"]
    folders.append(REPO / "tests" / "agents" / "pages")
    paths = sorted(p for folder in folders for p in folder.glob("*.html"))
    return [PageCase(p.name, p.read_text(encoding="utf-8", errors="replace")) for p in paths]


def shared_pages(limit: int | None = None) -> list[PageCase]:
    """The saved pages with an intent task each (the last step of the page's first task, so
    that it has previous actions where the task has several steps), from ../shared."""
    out = Path(tempfile.mkdtemp(prefix="prompt-record-")) / "intent_tasks.json"
    specs = sorted((SHARED / "intent_tasks").glob("specs_*.jsonl"))
    tool = SHARED / "tools" / "build_intent_tasks.py"
    subprocess.run(
        [sys.executable, str(tool), str(SHARED / "pages"), *map(str, specs), "--out", str(out)],
        check=True,
        capture_output=True,
    )
    cases = []
    first: dict[str, dict[str, Any]] = {}
    for task in json.loads(out.read_text(encoding="utf-8")):
        first.setdefault(task["website"], task)
    for task in list(first.values())[:limit]:
        actions = task["actions"]
        last = len(actions) - 1
        cases.append(
            PageCase(
                f"{task['annotation_id']}",
                actions[last]["cleaned_html"],
                task["confirmed_task"],
                tuple(task["action_reprs"][:last]) or tuple(PREVIOUS),
            )
        )
    return cases


def compare(before: dict[str, Any], after: dict[str, Any]) -> list[str]:
    """The cases whose requests differ (or that only one side has)."""
    return sorted(c for c in set(before) | set(after) if before.get(c) != after.get(c))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--shared", action="store_true", help="../shared pages + intent tasks")
    parser.add_argument("--limit", type=int, default=None, help="first N pages")
    parser.add_argument("--budgets", default=None, help="comma-separated (default: by pages)")
    parser.add_argument("--counter", choices=("estimate", "smollm2", "both"), default="both")
    parser.add_argument("--out", type=Path, help="write the keys here")
    parser.add_argument("--compare", nargs=2, type=Path, metavar=("BEFORE", "AFTER"))
    args = parser.parse_args()
    if args.compare:
        before, after = (json.loads(p.read_text()) for p in args.compare)
        differ = compare(before, after)
        print(f"{len(before)} cases before, {len(after)} after, {len(differ)} differ")
        for case in differ[:40]:
            print("  differs:", case)
        raise SystemExit(1 if differ else 0)
    pages = shared_pages(args.limit) if args.shared else bundled_pages()
    budgets = (2048, 8192) if args.shared else BUDGETS
    if args.budgets:
        budgets = tuple(int(b) for b in args.budgets.split(","))
    result: dict[str, Any] = {}
    counters = ("estimate", "smollm2") if args.counter == "both" else (args.counter,)
    for name in counters:
        counter = smollm2_counter() if name == "smollm2" else None
        keys = record(pages, counter, budgets)
        result |= {f"{name}|{case}": k for case, k in digest(keys).items()}
        print(f"{name}: {len(keys)} cases, {sum(len(k) for k in keys.values())} requests")
    if args.out:
        args.out.write_text(json.dumps(result, indent=1, sort_keys=True) + "\n")


if __name__ == "__main__":
    main()
