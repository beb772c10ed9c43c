"""``live-oracle``: a scripted model backend that answers the live act prompt
(``prompts/act_live.toml``) as a person reading it would, for MiniWoB's enter-date,
email-inbox and social-media. It reads only what the agent sends the model (the task, the
previous actions and the page), so a reward of 1 proves the whole path: a live page → its
marks (``hint``, ``onclick``) → the agent's prompt → the model's answer → the action → the
page's own check. It is a policy for tests, not a solver: each task's answer is written
from the task's wording and what the prompt shows."""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from dataclasses import dataclass

from lxml import html as lxml_html

from webagent.model.base import Request
from webagent.model.scripted import ScriptedBackend

NAME = "live-oracle"
_ICONS = {"Reply": "reply", "Retweet": "retweet", "Like": "like"}


@dataclass(frozen=True)
class Shown:
    """One element of the act prompt's page, in document order."""

    id: str
    tag: str
    hint: str
    text: str
    type: str


@dataclass(frozen=True)
class Prompt:
    task: str
    previous: list[str]
    elements: list[Shown]

    def first(self, test: Callable[[Shown], bool], after: int = -1) -> Shown:
        index = next(i for i, e in enumerate(self.elements) if i > after and test(e))
        return self.elements[index]

    def index(self, test: Callable[[Shown], bool]) -> int:
        return next(i for i, e in enumerate(self.elements) if test(e))

    def has(self, test: Callable[[Shown], bool]) -> bool:
        return any(test(e) for e in self.elements)

    def done(self, op: str) -> bool:
        return any(f"-> {op}" in line for line in self.previous)


def read_prompt(request: Request) -> Prompt:
    """The task, previous actions and page elements of an act request (its first turn)."""
    text = next(m.content for m in request.messages if m.role == "user")
    task = re.search(r"^Task: (.*)$", text, re.M)
    previous = text.split("Previous actions:\n", 1)[1].split("\n\nThe web page", 1)[0]
    page = text.split("The web page", 1)[1].split("\n", 1)[1]
    root = lxml_html.fragment_fromstring(page, create_parent="div")
    elements = [
        Shown(
            id=str(e.get("id")),
            tag=str(e.tag),
            hint=e.get("hint", ""),
            text=" ".join(e.text_content().split()),
            type=e.get("type", ""),
        )
        for e in root.iter()
        if isinstance(e.tag, str) and e.get("id")
    ]
    lines = [line for line in previous.splitlines() if line and line != "None"]
    return Prompt(task.group(1) if task else "", lines, elements)


def _action(element: Shown | None, op: str = "CLICK", value: str = "") -> dict[str, str]:
    return {"element_id": element.id if element else "", "op": op, "value": value}


def enter_date(prompt: Prompt) -> dict[str, str]:
    """ "Enter 05/20/2010 as the date and hit submit.": the date as the task words it."""
    if not prompt.done("TYPE"):
        wanted = re.search(r"Enter (\S+) as the date", prompt.task)
        field = prompt.first(lambda e: e.tag == "input" and e.type == "date")
        return _action(field, "TYPE", wanted.group(1) if wanted else "")
    return _action(prompt.first(lambda e: e.tag == "button" and e.text == "Submit"))


def email_inbox(prompt: Prompt) -> dict[str, str]:
    """Open the sender's email, then reply, forward, delete or star it by its icons."""
    sender = re.search(r"Find the email by (.+?) and ", prompt.task)
    forward = re.search(r"forward that email to (.+?)\.$", prompt.task)
    reply = re.search(r'reply to them with the text "(.*)"\.$', prompt.task)
    send = "send forward" if forward else "send reply"
    if (forward or reply) and prompt.has(lambda e: e.hint == send):  # writing it
        if prompt.done("TYPE"):
            return _action(prompt.first(lambda e: e.hint == send))
        if forward:
            return _action(prompt.first(lambda e: e.hint == "forward sender"), "TYPE", forward[1])
        return _action(
            prompt.first(lambda e: e.tag == "textarea"), "TYPE", reply[1] if reply else ""
        )
    if not prompt.has(lambda e: e.hint == "close email"):  # the email is not open yet
        name = sender.group(1) if sender else ""
        return _action(prompt.first(lambda e: e.tag == "div" and e.text == name))
    opened = prompt.index(lambda e: e.hint == "close email")
    if forward or reply:
        word = "Forward" if forward else "Reply"
        return _action(prompt.first(lambda e: e.text == word, after=opened))
    icon = "trash" if "trash icon" in prompt.task else "star"
    return _action(prompt.first(lambda e: e.hint == icon, after=opened))


def social_media(prompt: Prompt) -> dict[str, str]:
    """'For the user @X, click on the "Y" button.': the icon after the user's name, or the
    item of its "more" menu."""
    asked = re.search(r'For the user (\S+), click on the "(.+)" button', prompt.task)
    user, button = (asked.group(1), asked.group(2)) if asked else ("", "")
    # the task on the page names the user too (BrowserGym shows it in its chat instead)
    query = next((i for i, e in enumerate(prompt.elements) if e.text.startswith("For the")), -2)
    at = prompt.elements.index(prompt.first(lambda e: e.text == user, after=query + 1))
    if button in _ICONS:
        return _action(prompt.first(lambda e: e.hint == _ICONS[button], after=at))
    if prompt.has(lambda e: e.tag == "li" and e.text.startswith(button)):
        return _action(prompt.first(lambda e: e.tag == "li" and e.text.startswith(button), at))
    return _action(prompt.first(lambda e: e.hint == "more", after=at))


_POLICIES: dict[str, Callable[[Prompt], dict[str, str]]] = {
    "Enter ": enter_date,
    "Find the email by ": email_inbox,
    "For the user ": social_media,
}


def answer(request: Request) -> str:
    prompt = read_prompt(request)
    policy = next(p for start, p in _POLICIES.items() if prompt.task.startswith(start))
    return json.dumps(policy(prompt))


def live_oracle() -> ScriptedBackend:
    return ScriptedBackend(answer, name=NAME, context_window=8192)
