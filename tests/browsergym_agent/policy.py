"""``miniwob-oracle``: a scripted model backend that answers every request as a person who
reads the prompt would, for click-test, click-button and enter-text. It sees only what the
agent sends the model (the task, previous actions and page in the act prompt; the parts in a
gist or look-up prompt), so a reward of 1 proves the whole path: BrowserGym observation →
page with bids → agent → model → action → BrowserGym action. It reads the page as HTML
(``<button id=12>Submit<``) or as an accessibility tree (``[id=12] button 'Submit'``), as the
agent shows it."""

from __future__ import annotations

import json
import re

from webagent.model.base import Request
from webagent.model.scripted import ScriptedBackend

NAME = "miniwob-oracle"
_BUTTON = re.compile(r"<button id=([^\s>]+)[^>]*>([^<]*)<")
_INPUT = re.compile(r"<input id=([^\s>]+)")
_TREE_BUTTON = re.compile(r"\[id=([^\]]+)\] button '([^']*)'")
_TREE_INPUT = re.compile(r"\[id=([^\]]+)\] textbox ")
_PART = re.compile(r"\[Part (\d+)\]")


def _act(prompt: str) -> dict[str, str]:
    task = re.search(r"^Task: (.*)$", prompt, re.M)
    previous = prompt.split("Previous actions:", 1)[1].split("The web page", 1)[0]
    page = prompt.split("The web page", 1)[1]
    wanted = re.findall(r'"([^"]*)"', task.group(1) if task else "")
    found = _BUTTON.findall(page) + _TREE_BUTTON.findall(page)
    buttons = [(i, " ".join(t.split())) for i, t in found]
    if task and task.group(1).startswith("Enter ") and "-> TYPE" not in previous:
        field = _INPUT.search(page) or _TREE_INPUT.search(page)
        return {"element_id": field.group(1) if field else "?", "op": "TYPE", "value": wanted[0]}
    target = "Submit" if task and task.group(1).startswith("Enter ") else None
    if target is None and wanted:
        target = wanted[0]
    chosen = next((i for i, t in buttons if t == target), buttons[0][0] if buttons else "?")
    return {"element_id": chosen, "op": "CLICK", "value": ""}


def answer(request: Request) -> str:
    text = request.messages[-1].content
    if request.phase == "gist":
        parts = text.split('<part n="')[1:]
        if not parts:
            return "a part of the task page"
        return json.dumps({str(n): "a part of the task page" for n in range(1, len(parts) + 1)})
    if request.phase == "lookup":
        pages = sorted({int(n) for n in _PART.findall(text)}) or [1]
        return json.dumps({"pages": pages, "reason": "read every part"})
    return json.dumps(_act(text))


def miniwob_oracle() -> ScriptedBackend:
    return ScriptedBackend(answer, name=NAME, context_window=8192)
