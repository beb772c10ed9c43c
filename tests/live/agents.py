"""A scripted agent for tests of the executor and the loop, independent of any model, and a
helper that finds an element's id in an observed page by its text (as a person would)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

from lxml import html as lxml_html

from webagent.contracts import Action, Agent, Observation, Op, PhaseUsage, StepTrace

Decide = Callable[[Observation], Action | None]


class ScriptedAgent(Agent):
    """Answers each step with the next decision; ``None`` is an invalid step."""

    name = "scripted"

    def __init__(self, script: Sequence[Decide | Action | None], tokens_per_step: int = 0):
        self.script = list(script)
        self.tokens_per_step = tokens_per_step
        self.seen: list[Observation] = []

    def step(self, observation: Observation) -> StepTrace:
        self.seen.append(observation)
        index = len(self.seen) - 1
        item = self.script[index] if index < len(self.script) else None
        action = item(observation) if callable(item) else item
        trace = StepTrace(agent=self.name, action=action)
        if action is None:
            trace.error, trace.error_class = "scripted: no action", "invalid_output"
        trace.usage = {"act": PhaseUsage(calls=1, input_tokens=self.tokens_per_step)}
        return trace


def element_id(page_html: str, text: str, tag: str | None = None) -> str:
    """The ``backend_node_id`` of the first element (of ``tag``) whose text, value,
    placeholder or aria-label equals ``text``; a form control is also found by its label."""
    root = lxml_html.fromstring(page_html)
    wanted = " ".join(text.split()).lower()
    for element in root.iter("*"):
        if not isinstance(element.tag, str) or "backend_node_id" not in element.attrib:
            continue
        names = [
            element.text_content(),
            element.get("aria-label", ""),
            element.get("placeholder", ""),
            element.get("value", "") if element.tag in ("button", "input") else "",
        ]
        if not any(" ".join(n.split()).lower() == wanted for n in names if n):
            continue
        if tag is None or element.tag == tag:
            return str(element.get("backend_node_id"))
        if element.tag == "label" and tag in _CONTROLS:
            control = _labelled(root, element, tag)
            if control is not None:
                return str(control.get("backend_node_id"))
    raise LookupError(f"no element {tag or ''} with text {text!r} in the page")


_CONTROLS = ("input", "select", "textarea")


def _labelled(root: Any, label: Any, tag: str) -> Any:
    target = label.get("for")
    if target:
        found = root.xpath(f"//{tag}[@id=$id]", id=target)
        return found[0] if found else None
    inside = list(label.iter(tag))
    return inside[0] if inside else None


def click(text: str, tag: str | None = None) -> Decide:
    return lambda obs: Action(element_id=element_id(obs.html, text, tag), op=Op.CLICK)


def type_into(text: str, value: str, tag: str | None = "input") -> Decide:
    return lambda obs: Action(element_id=element_id(obs.html, text, tag), op=Op.TYPE, value=value)


def select(text: str, value: str, tag: str | None = None) -> Decide:
    return lambda obs: Action(element_id=element_id(obs.html, text, tag), op=Op.SELECT, value=value)
