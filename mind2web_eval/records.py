"""Typed Mind2Web records: tasks, steps, candidates, and predictions to score.

The models accept every form in circulation: the raw release and the Hugging Face copy
(candidate ``attributes`` as a JSON string, ids as strings or numbers), files with MindAct's
ranker output (``rank``/``score``), and files without ``raw_html``, ``cleaned_html`` or
``neg_candidates``. Unknown extra fields (``choice``, ``bbox``...) are ignored.
"""

from __future__ import annotations

import json
from typing import Annotated, Any, Literal

from pydantic import BaseModel, BeforeValidator, ConfigDict, Field, field_validator, model_validator

from webagent.contracts import ElementCandidate, Op


def _id_as_text(value: Any) -> Any:
    """Element ids are text; some dumps write them as numbers."""
    return str(value) if isinstance(value, int) else value


ElementId = Annotated[str, BeforeValidator(_id_as_text)]

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


class Operation(BaseModel):
    model_config = ConfigDict(extra="ignore", frozen=True)

    op: Op
    original_op: str | None = None
    value: str = ""

    @field_validator("value", mode="before")
    @classmethod
    def _none_is_empty(cls, value: Any) -> Any:
        return "" if value is None else value


class Step(BaseModel):
    """One action of a task (``actions[i]``) with its page and candidates."""

    model_config = ConfigDict(extra="ignore")

    action_uid: str
    operation: Operation
    pos_candidates: list[Candidate] = Field(default_factory=list)
    neg_candidates: list[Candidate] | None = None
    cleaned_html: str | None = None
    raw_html: str | None = None
    previous_actions: list[str] | None = Field(
        default=None, description="only in step-per-line (MindAct flattened) files"
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
        if self.action_reprs and len(self.action_reprs) != len(self.actions):
            raise ValueError(
                f"action_reprs has {len(self.action_reprs)} entries but actions has "
                f"{len(self.actions)}"
            )
        if not self.action_reprs and any(s.previous_actions is None for s in self.actions):
            raise ValueError("action_reprs is missing (needed for the gold history)")
        return self

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
    op: Op | None = None
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
