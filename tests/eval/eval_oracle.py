"""A scripted in-process model for control-flow tests of the evaluator (not a real model).

It answers gist and look-up calls with fixed text, and act calls with the gold action of the
step the prompt is about (found from the task and the number of previous actions), except
for tasks listed in ``wrong``, where it clicks the first id shown instead.
"""

from __future__ import annotations

import json
import re
import time
from collections.abc import Iterable

from mind2web_eval.records import Task
from webagent.method.memory import SHOWN_ID
from webagent.model.base import Request
from webagent.model.client import Model
from webagent.model.retry import RetryPolicy
from webagent.model.scripted import ScriptedBackend

_TASK = re.compile(r"Task: (.*)\nPrevious actions:\n(.*?)\n\nThe web page", re.DOTALL)
_OMITTED = re.compile(r"^\((\d+) earlier actions omitted\)$")


class Oracle:
    def __init__(
        self,
        tasks: Iterable[Task],
        wrong: Iterable[str] = (),
        delay_s: float = 0.0,
        gist: str = "a part of the page with a few controls",
    ) -> None:
        self.gold: dict[tuple[str, int], tuple[str, str, str]] = {}
        self.wrong_tasks: set[str] = set()
        wrong_ids = set(wrong)
        for task in tasks:
            if task.annotation_id in wrong_ids:
                self.wrong_tasks.add(task.confirmed_task)
            for index, step in enumerate(task.actions):
                element = step.pos_candidates[0].backend_node_id if step.pos_candidates else "0"
                op = step.operation
                self.gold[(task.confirmed_task, index)] = (element, op.op.value, op.value)
        self.delay_s = delay_s
        self.gist = gist
        self.act_calls = 0

    def __call__(self, request: Request) -> str:
        if self.delay_s:
            time.sleep(self.delay_s)
        if request.phase == "gist":
            return self.gist
        if request.phase == "lookup":
            return json.dumps({"pages": [1, 2, 3, 4, 5], "reason": "they hold the form"})
        self.act_calls += request.phase == "act"
        prompt = request.messages[1].content
        match = _TASK.search(prompt)
        if match is None:
            return "no idea"
        task, previous = match.group(1), match.group(2)
        count = 0 if previous.strip() == "None" else _history_length(previous)
        element, op, value = self.gold.get((task, count), ("0", "CLICK", ""))
        if task in self.wrong_tasks:
            page = prompt.split("The web page", 1)[1]
            shown = SHOWN_ID.findall(page.split("\n", 1)[1])
            element, op, value = (shown[0] if shown else "0"), "CLICK", ""
        return json.dumps({"element_id": element, "op": op, "value": value})


def _history_length(previous: str) -> int:
    """Previous actions in the prompt, counting those it says it left out."""
    count = 0
    for line in previous.splitlines():
        omitted = _OMITTED.match(line.strip())
        count += int(omitted.group(1)) if omitted else 1
    return count


def oracle_model(oracle: Oracle, max_concurrency: int = 1) -> Model:
    backend = ScriptedBackend(oracle, name="oracle", max_concurrency=max_concurrency)
    return Model(backend, RetryPolicy(timeout_s=10, max_retries=0), sleep=lambda _s: None)
