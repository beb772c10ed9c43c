"""Live actions (the webagent ops plus browser-only ones) and what came of them."""

from __future__ import annotations

from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, model_validator

from webagent.contracts import Action, Op

#: longest WAIT an agent may ask for, seconds
MAX_WAIT_S = 10.0
#: how much element text an action line shows
LABEL_CHARS = 60


class LiveOp(StrEnum):
    CLICK = "CLICK"
    TYPE = "TYPE"
    SELECT = "SELECT"
    GOTO = "GOTO"
    BACK = "BACK"
    SCROLL = "SCROLL"
    WAIT = "WAIT"
    STOP = "STOP"


ELEMENT_OPS = frozenset({LiveOp.CLICK, LiveOp.TYPE, LiveOp.SELECT})


class LiveAction(BaseModel):
    """One browser step. CLICK/TYPE/SELECT name an element by its ``backend_node_id``.

    GOTO's value is a URL; SCROLL's is ``up`` or ``down`` (of the page, or of ``element_id``);
    WAIT's is seconds; STOP's is the agent's final answer. ``value`` may hold secret
    placeholders such as ``{{secret:LOGIN_PASSWORD}}``; they are resolved only when typed.
    """

    model_config = ConfigDict(frozen=True)

    op: LiveOp
    element_id: str | None = None
    value: str = ""
    press_enter: bool = Field(default=False, description="TYPE only: press Enter after typing")

    @model_validator(mode="after")
    def _check(self) -> LiveAction:
        if self.op in ELEMENT_OPS and not self.element_id:
            raise ValueError(f"{self.op.value} needs an element_id")
        if self.op is LiveOp.GOTO and not self.value.strip():
            raise ValueError("GOTO needs a URL as its value")
        if self.op is LiveOp.SCROLL and self.value not in ("up", "down"):
            raise ValueError(f"SCROLL's value is 'up' or 'down', got {self.value!r}")
        if self.op is LiveOp.WAIT:
            try:
                seconds = float(self.value or "1")
            except ValueError:
                raise ValueError(f"WAIT's value is seconds, got {self.value!r}") from None
            if not 0 <= seconds <= MAX_WAIT_S:
                raise ValueError(f"WAIT is 0 to {MAX_WAIT_S:g} seconds, got {seconds:g}")
        if self.press_enter and self.op is not LiveOp.TYPE:
            raise ValueError("press_enter applies to TYPE only")
        return self

    @classmethod
    def from_action(cls, action: Action) -> LiveAction:
        """The live form of an agent's CLICK/TYPE/SELECT."""
        return cls(op=LiveOp(action.op.value), element_id=action.element_id, value=action.value)

    def to_action(self) -> Action | None:
        """The webagent action (for export and scoring), or None for browser-only ops."""
        if self.op not in ELEMENT_OPS or self.element_id is None:
            return None
        return Action(element_id=self.element_id, op=Op(self.op.value), value=self.value)


class FailureKind(StrEnum):
    ELEMENT_NOT_FOUND = "element_not_found"
    DETACHED = "detached"
    COVERED = "covered"
    NOT_VISIBLE = "not_visible"
    NOT_EDITABLE = "not_editable"
    DISABLED = "disabled"
    NO_SUCH_OPTION = "no_such_option"
    NAVIGATION_ERROR = "navigation_error"
    BLOCKED_NAVIGATION = "blocked_navigation"
    DIALOG = "dialog"
    TIMEOUT = "timeout"
    DECLINED = "declined"
    SECRET = "secret"
    INVALID_ACTION = "invalid_action"
    BROWSER_ERROR = "browser_error"


class ElementLabel(BaseModel):
    """How an action line names an element: Mind2Web's ``[role]  text``."""

    model_config = ConfigDict(frozen=True)

    role: str
    text: str = ""

    def render(self) -> str:
        text = " ".join(self.text.split())
        if len(text) > LABEL_CHARS:
            text = text[: LABEL_CHARS - 1] + "…"
        return f"[{self.role}]  {text}"


class ActionOutcome(BaseModel):
    """What happened when an action ran. A failure is data, reported to the agent next step."""

    action: LiveAction | None = Field(description="None when the agent produced no valid action")
    label: ElementLabel | None = None
    ok: bool
    failure: FailureKind | None = None
    message: str = Field(default="", description="why it failed, in words an agent can act on")
    url_before: str = ""
    url_after: str = ""
    switched_page: bool = Field(default=False, description="a new tab or popup became active")
    dialogs: list[str] = Field(default_factory=list, description="dialog texts, dismissed")
    blocked: list[str] = Field(default_factory=list, description="navigations that were stopped")
    elapsed_s: float = 0.0

    def describe(self) -> str:
        """The previous-action line, e.g. ``[button]  Submit -> CLICK (failed: ...)``."""
        if self.action is None:
            return f"(no valid action: {self.message})"
        line = _action_text(self.action, self.label)
        notes = [f"failed: {self.message}"] if not self.ok else []
        if self.dialogs and self.failure is not FailureKind.DIALOG:  # else the message says it
            last = _quote(self.dialogs[-1])
            many = len(self.dialogs) > 1
            notes.append(
                f"{len(self.dialogs)} dialogs dismissed, the last said: {last}"
                if many
                else f"a dialog said: {last}"
            )
        return line + (f" ({'; '.join(notes)})" if notes else "")


def no_action(why: str, url: str) -> ActionOutcome:
    """The outcome of a step without a valid action: nothing was done on the page."""
    return ActionOutcome(
        action=None,
        ok=False,
        failure=FailureKind.INVALID_ACTION,
        message=why,
        url_before=url,
        url_after=url,
    )


def _action_text(action: LiveAction, label: ElementLabel | None) -> str:
    target = label.render() if label is not None else f"[element]  id={action.element_id}"
    op = action.op
    if op is LiveOp.CLICK:
        return f"{target} -> CLICK"
    if op in (LiveOp.TYPE, LiveOp.SELECT):
        suffix = " and Enter" if action.press_enter else ""
        return f"{target} -> {op.value}: {action.value}{suffix}"
    if op is LiveOp.BACK:
        return "BACK"
    return f"{op.value}: {action.value}" if action.value else op.value


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return '"' + (text[: LABEL_CHARS - 1] + "…" if len(text) > LABEL_CHARS else text) + '"'
