"""Actions: what an agent predicts and how Mind2Web writes them."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field


class Op(StrEnum):
    CLICK = "CLICK"
    TYPE = "TYPE"
    SELECT = "SELECT"


class Action(BaseModel):
    """One predicted step: an element of the page and what to do with it."""

    model_config = ConfigDict(frozen=True)

    element_id: str = Field(description="the element's id as shown to the model (backend_node_id)")
    op: Op
    value: str = Field(default="", description="text to type or option to select; empty for CLICK")

    def action_string(self) -> str:
        """The official scorer's action string: ``"CLICK"`` or ``"TYPE value"``."""
        return f"{self.op.value} {self.value}".strip() if self.op is not Op.CLICK else "CLICK"
