"""Typed Mind2Web records: tasks, steps, candidates, and predictions to score.

The models accept every form in circulation: the raw release and the Hugging Face copy
(candidate ``attributes`` as a JSON string, ids as strings or numbers), files with MindAct's
ranker output (``rank``/``score``), and files without ``raw_html``, ``cleaned_html`` or
``neg_candidates``. Unknown extra fields (``choice``, ``bbox``...) are ignored.

Multimodal-Mind2Web (the public test splits with their HTML) has one row a step: its
``operation`` and each candidate are JSON strings, ``target_action_index`` (a string) is the
step's place in the task and ``action_reprs`` is the whole task's, with some steps left out
of the data. Its rows, grouped into a task, are put in task order, each step with the gold
history ``action_reprs[:target_action_index]`` (:meth:`Task._in_task_order`).
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import (
    AfterValidator,
    BaseModel,
    BeforeValidator,
    ConfigDict,
    Field,
    field_validator,
    model_validator,
)

from webagent.contracts import MIND2WEB_OPS, ElementCandidate, Op


def _id_as_text(value: Any) -> Any:
    """Element ids are text; some dumps write them as numbers."""
    return str(value) if isinstance(value, int) else value


ElementId = Annotated[str, BeforeValidator(_id_as_text)]


def _from_json_text(value: Any) -> Any:
    """A field that Multimodal-Mind2Web writes as a JSON string (``operation``, each
    candidate), decoded; any other value as it is."""
    if not isinstance(value, str):
        return value
    try:
        return json.loads(value)
    except json.JSONDecodeError as exc:
        raise ValueError(f"not valid JSON: {exc}") from exc


SCHEMA_VERSION = 2  # 2: step attempts (attempt, pending, stopped_by)
SPLITS = ("train", "test_task", "test_website", "test_domain")


class Candidate(BaseModel):
    """An element of the page: a positive (the target) or a negative candidate."""

    model_config = ConfigDict(extra="ignore", frozen=True)

    backend_node_id: ElementId
    tag: str = ""
    attributes: str = Field(default="{}", description="JSON object, as a string (as released)")
    is_original_target: bool | None = None
    is_top_level_target: bool | None = None
    rank: int | None = Field(default=None, description="MindAct ranker rank (0 = best)")
    score: float | None = None

    @field_validator("attributes", mode="before")
    @classmethod
    def _attributes_as_json(cls, value: Any) -> Any:
        if value is None:
            return "{}"
        if isinstance(value, dict):
            return json.dumps(value, ensure_ascii=False)
        if isinstance(value, str):
            try:
                parsed = json.loads(value)
            except json.JSONDecodeError as exc:
                raise ValueError(f"attributes is not valid JSON: {exc}") from exc
            if not isinstance(parsed, dict):
                raise ValueError("attributes must be a JSON object")
        return value

    def attrs(self) -> dict[str, Any]:
        parsed: dict[str, Any] = json.loads(self.attributes)
        return parsed


def _mind2web_op(op: Op | None) -> Op | None:
    """Mind2Web's operations are CLICK, TYPE and SELECT; a live one (HOVER, PRESS...) is named."""
    if op is not None and op not in MIND2WEB_OPS:
        offered = ", ".join(o.value for o in MIND2WEB_OPS)
        raise ValueError(f"{op.value} is not a Mind2Web operation ({offered})")
    return op


class Operation(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    op: Annotated[Op, AfterValidator(_mind2web_op)]
    original_op: str | None = None
    value: str = ""

    @field_validator("value", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


JsonOperation = Annotated[Operation, BeforeValidator(_from_json_text)]
JsonCandidate = Annotated[Candidate, BeforeValidator(_from_json_text)]


class Step(BaseModel):
    """One action of a task (``actions[i]``) with its page and candidates."""

    model_config = ConfigDict(extra="ignore")

    action_uid: str
    operation: JsonOperation
    pos_candidates: list[JsonCandidate] = Field(default_factory=list)
    neg_candidates: list[JsonCandidate] | None = None
    cleaned_html: str | None = None
    raw_html: str | None = None
    previous_actions: list[str] | None = Field(
        default=None, description="only in step-per-line (MindAct flattened) files"
    )
    target_action_index: int | None = Field(
        default=None,
        ge=0,
        description="Multimodal-Mind2Web: the step's place in the whole task's action_reprs",
    )
    screenshot: str | None = Field(
        default=None, description="the step's screenshot file, when kept (eval --screenshots)"
    )

    @field_validator("pos_candidates", mode="before")
    @classmethod
    def _none_is_empty_list(cls, value: Any) -> Any:
        return [] if value is None else value


class Task(BaseModel):
    """One annotated task: an instruction on a website and its gold actions."""

    model_config = ConfigDict(extra="ignore")

    annotation_id: str
    confirmed_task: str
    website: str = ""
    domain: str = ""
    subdomain: str = ""
    split: str = Field(default="", description="taken from the file or folder name when known")
    action_reprs: list[str] = Field(default_factory=list)
    actions: list[Step] = Field(min_length=1)

    @model_validator(mode="after")
    def _reprs_match_actions(self) -> Task:
        if any(step.target_action_index is not None for step in self.actions):
            self._in_task_order()
        if self.action_reprs and len(self.action_reprs) != len(self.actions):
            raise ValueError(
                f"action_reprs has {len(self.action_reprs)} entries but actions has "
                f"{len(self.actions)}"
            )
        if not self.action_reprs and any(s.previous_actions is None for s in self.actions):
            raise ValueError("action_reprs is missing (needed for the gold history)")
        return self

    def _in_task_order(self) -> None:
        """Multimodal-Mind2Web's rows of this task: the steps sorted by
        ``target_action_index``, each given its gold history ``action_reprs[:i]``, and
        ``action_reprs`` (the whole task's, steps left out of the data included) cut to the
        steps that are here, one each, as in every other form."""
        whole = self.action_reprs
        if not whole:
            raise ValueError("action_reprs is missing (needed for the gold history)")
        placed: dict[int, Step] = {}
        for number, step in enumerate(self.actions):
            at = step.target_action_index
            if at is None:
                raise ValueError(f"actions.{number}.target_action_index is missing")
            if at >= len(whole):
                raise ValueError(
                    f"target_action_index {at} of step {step.action_uid} is past the task's "
                    f"{len(whole)} action_reprs"
                )
            other = placed.setdefault(at, step)
            if other.action_uid != step.action_uid:
                raise ValueError(
                    f"steps {other.action_uid} and {step.action_uid} both have "
                    f"target_action_index {at}"
                )
        in_order = sorted(placed.items())
        self.actions = [step for _, step in in_order]
        for at, step in in_order:
            if step.previous_actions is None:
                step.previous_actions = whole[:at]
        self.action_reprs = [whole[at] for at, _ in in_order]

    def place_of(self, index: int) -> int:
        """Step ``index``'s place in the whole task (Multimodal-Mind2Web leaves some out)."""
        at = self.actions[index].target_action_index
        return index if at is None else at

    def previous_actions(self, index: int) -> list[str]:
        """The gold history of step ``index``: ``action_reprs[:index]``."""
        step = self.actions[index]
        if step.previous_actions is not None:
            return list(step.previous_actions)
        return list(self.action_reprs[:index])


class Prediction(BaseModel):
    """One predicted step, as ``webagent score`` reads it (a line of predictions.jsonl)."""

    model_config = ConfigDict(extra="ignore")

    schema_version: int = SCHEMA_VERSION
    annotation_id: str
    action_uid: str
    element_id: ElementId | None = None
    op: Annotated[Op | None, AfterValidator(_mind2web_op)] = None
    value: str = ""
    error_class: str | None = None

    @field_validator("value", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


class LoadIssue(BaseModel):
    """A record that could not be loaded; the rest of the data loads without it."""

    file: str
    task: str = Field(description="annotation_id, or '#index' when it has none")
    field: str
    message: str
    kind: Literal["task", "prediction", "file"] = "task"
    line: int | None = Field(default=None, description="1-based line of a JSON Lines record")

    @property
    def record(self) -> str:
        """Where the record is: its file and line (JSON Lines) or task."""
        return f"{self.file}: line {self.line}" if self.line else f"{self.file}: task {self.task}"

    def __str__(self) -> str:
        return f"{self.record}: field {self.field}: {self.message}"


def ranked_candidates(step: Step) -> list[ElementCandidate] | None:
    """The step's candidates that carry a ranker ``rank`` or ``score``, best first (rank, then
    score, then id), without saying which are positives; None when none carries either."""
    scored = [
        c for c in [*step.pos_candidates, *(step.neg_candidates or [])]
        if c.rank is not None or c.score is not None
    ]  # fmt: skip
    if not scored:
        return None
    unranked = 1 << 30

    def order(c: Candidate) -> tuple[int, float, str]:
        return (unranked if c.rank is None else c.rank, -(c.score or 0.0), c.backend_node_id)

    return [
        ElementCandidate(element_id=c.backend_node_id, rank=c.rank, score=c.score)
        for c in sorted(scored, key=order)
    ]
