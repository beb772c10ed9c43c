"""Live actions (the webagent ops plus browser-only ones) and what came of them."""

from __future__ import annotations

import re
from enum import StrEnum

from pydantic import BaseModel, ConfigDict, Field, ValidationInfo, field_validator, model_validator

from webagent.contracts import LIVE_OPS, Action, Op
from webagent.method.act import SCROLL_DIRECTIONS, point

#: longest WAIT an agent may ask for, seconds
MAX_WAIT_S = 10.0
#: how much element text an action line shows
LABEL_CHARS = 60


class LiveOp(StrEnum):
    CLICK = "CLICK"
    TYPE = "TYPE"
    SELECT = "SELECT"
    PRESS = "PRESS"
    DRAG = "DRAG"
    HOVER = "HOVER"
    GOTO = "GOTO"
    BACK = "BACK"
    SCROLL = "SCROLL"
    WAIT = "WAIT"
    STOP = "STOP"


#: the operations that need an element (PRESS and SCROLL may act on the whole page)
ELEMENT_OPS = frozenset({LiveOp.CLICK, LiveOp.TYPE, LiveOp.SELECT, LiveOp.DRAG, LiveOp.HOVER})
#: the operations of a Mind2Web action (what ``webagent live-export`` writes)
MIND2WEB_LIVE_OPS = frozenset({LiveOp.CLICK, LiveOp.TYPE, LiveOp.SELECT})
#: what every live environment (a tab, MiniWoB++, BrowserGym) offers an agent
AGENT_OPS = LIVE_OPS
#: a SELECT's options in a list that takes several: ``a|b``
SELECT_SEPARATOR = "|"
_MODIFIERS = {
    "ctrl": "Control",
    "control": "Control",
    "alt": "Alt",
    "option": "Alt",
    "shift": "Shift",
    "meta": "Meta",
    "cmd": "Meta",
    "command": "Meta",
    "controlormeta": "ControlOrMeta",
}
_KEYS = {
    "enter": "Enter",
    "return": "Enter",
    "tab": "Tab",
    "esc": "Escape",
    "escape": "Escape",
    "space": "Space",
    "spacebar": "Space",
    "backspace": "Backspace",
    "delete": "Delete",
    "del": "Delete",
    "insert": "Insert",
    "home": "Home",
    "end": "End",
    "pageup": "PageUp",
    "pagedown": "PageDown",
    "up": "ArrowUp",
    "down": "ArrowDown",
    "left": "ArrowLeft",
    "right": "ArrowRight",
    "arrowup": "ArrowUp",
    "arrowdown": "ArrowDown",
    "arrowleft": "ArrowLeft",
    "arrowright": "ArrowRight",
    "plus": "+",
    **{f"f{n}": f"F{n}" for n in range(1, 13)},
}


def normalize_key(text: str) -> str:
    """A key or combination as Playwright (and BrowserGym's ``press``) names it:
    ``ctrl+a`` → ``Control+a``, ``enter`` → ``Enter``, ``down`` → ``ArrowDown``. Raises
    ValueError naming what is not a key."""
    parts = [p.strip() for p in re.split(r"\s*\+\s*(?=.)", text.strip())]
    if not parts or not all(parts):
        raise ValueError(f"PRESS needs a key such as Enter, Tab or Control+A, got {text!r}")
    *mods, key = parts
    names = [_MODIFIERS.get(m.lower()) for m in mods]
    if None in names:
        raise ValueError(f"{text!r}: the modifiers are Control, Alt, Shift and Meta")
    named = key if len(key) == 1 else _KEYS.get(key.lower().replace(" ", ""))
    if named is None:
        raise ValueError(
            f"{key!r} is not a key: name one character or Enter, Tab, Escape, Backspace, "
            "Delete, Space, ArrowUp/Down/Left/Right, Home, End, PageUp, PageDown, F1-F12"
        )
    return "+".join([*(n for n in names if n), named])


def select_values(value: str) -> list[str]:
    """The options a SELECT names: one, or several separated by ``|``."""
    return [v.strip() for v in value.split(SELECT_SEPARATOR) if v.strip()]


class LiveAction(BaseModel):
    """One browser step. CLICK/TYPE/SELECT/DRAG/HOVER name an element by its
    ``backend_node_id``; PRESS and SCROLL may (else they act on the page).

    CLICK's value is empty or ``x,y`` (a point inside the element, from its top-left corner);
    TYPE's is typed exactly (empty: the field is cleared); SELECT's names an option, or
    several separated by ``|``; PRESS's is a key (:func:`normalize_key`); SCROLL's is ``up``,
    ``down``, ``left`` or ``right``; DRAG's is the id of the element to drop on, or ``dx,dy``;
    GOTO's is a URL; WAIT's is seconds; STOP's is the agent's final answer. ``value`` may hold
    secret placeholders such as ``{{secret:LOGIN_PASSWORD}}``; they are resolved only when
    typed.
    """

    model_config = ConfigDict(frozen=True)

    op: LiveOp
    element_id: str | None = None
    value: str = ""
    press_enter: bool = Field(default=False, description="TYPE only: press Enter after typing")

    @field_validator("value")
    @classmethod
    def _key(cls, value: str, info: ValidationInfo) -> str:
        """A PRESS's key as Playwright names it (:func:`normalize_key`)."""
        return normalize_key(value) if info.data.get("op") is LiveOp.PRESS else value

    @model_validator(mode="after")
    def _check(self) -> LiveAction:
        if self.op in ELEMENT_OPS and not self.element_id:
            raise ValueError(f"{self.op.value} needs an element_id")
        if self.op is LiveOp.GOTO and not self.value.strip():
            raise ValueError("GOTO needs a URL as its value")
        if self.op is LiveOp.SCROLL and self.value not in SCROLL_DIRECTIONS:
            raise ValueError(f"SCROLL's value is up, down, left or right, got {self.value!r}")
        if self.op is LiveOp.CLICK and self.value and point(self.value) is None:
            raise ValueError(f'CLICK\'s value is "" or "x,y", got {self.value!r}')
        if self.op is LiveOp.DRAG and not self.value.strip():
            raise ValueError('DRAG needs the id to drop on, or "dx,dy", as its value')
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
        """The live form of an agent's action."""
        element_id = action.element_id or None
        return cls(op=LiveOp(action.op.value), element_id=element_id, value=action.value)

    def to_action(self) -> Action | None:
        """The Mind2Web action (for export and scoring), or None for the other ops."""
        if self.op not in MIND2WEB_LIVE_OPS or self.element_id is None:
            return None
        return Action(element_id=self.element_id, op=Op(self.op.value), value=self.value)

    def drop_target(self) -> str | None:
        """DRAG onto an element: its id (None for a drag by an offset)."""
        if self.op is not LiveOp.DRAG or point(self.value) is not None:
            return None
        return self.value.strip()


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
    INVALID_VALUE = "invalid_value"
    NO_EFFECT = "no_effect"
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
    no_effect: bool = Field(
        default=False,
        description="the action ran but the page did not change (nor its URL, a tab, a dialog)",
    )
    note: str = Field(default="", description="what the action did besides, e.g. a conversion")
    elapsed_s: float = 0.0

    def kind(self) -> FailureKind | None:
        """What went wrong, for tallies: the failure, else NO_EFFECT, else None."""
        if not self.ok:
            return self.failure or FailureKind.BROWSER_ERROR
        return FailureKind.NO_EFFECT if self.no_effect else None

    def line(self) -> str:
        """What was done, without notes: ``[button]  Submit -> CLICK``."""
        if self.action is None:
            return f"(no valid action: {self.message})"
        return _action_text(self.action, self.label)

    def describe(self) -> str:
        """The previous-action line, e.g. ``[button]  Submit -> CLICK (failed: ...)``."""
        line = self.line()
        if self.action is None:
            return line
        notes = [f"failed: {self.message}"] if not self.ok else []
        if self.ok and self.note:
            notes.append(self.note)
        if self.ok and self.no_effect:
            notes.append("no visible effect: the page did not change")
        if self.dialogs and self.failure is not FailureKind.DIALOG:  # else the message says it
            last = _quote(self.dialogs[-1])
            many = len(self.dialogs) > 1
            notes.append(
                f"{len(self.dialogs)} dialogs dismissed, the last said: {last}"
                if many
                else f"a dialog said: {last}"
            )
        return line + (f" ({'; '.join(notes)})" if notes else "")


def no_action(why: str, url: str, kind: FailureKind = FailureKind.INVALID_ACTION) -> ActionOutcome:
    """The outcome of a step without a valid action: nothing was done on the page."""
    return ActionOutcome(
        action=None, ok=False, failure=kind, message=why, url_before=url, url_after=url
    )


def failure_counts(outcomes: list[ActionOutcome]) -> dict[str, int]:
    """How many steps went wrong, by kind (``no_effect`` among them), for a suite's table."""
    counts: dict[str, int] = {}
    for outcome in outcomes:
        kind = outcome.kind()
        if kind is not None:
            counts[kind.value] = counts.get(kind.value, 0) + 1
    return dict(sorted(counts.items()))


def _action_text(action: LiveAction, label: ElementLabel | None) -> str:
    target = label.render() if label is not None else f"[element]  id={action.element_id}"
    op, value = action.op, action.value
    if not action.element_id and op in (LiveOp.PRESS, LiveOp.SCROLL):
        return f"{op.value}: {value}"  # on the page
    if op is LiveOp.CLICK:
        return f"{target} -> CLICK" + (f" at {value}" if value else "")
    if op is LiveOp.TYPE and not value:
        return f"{target} -> TYPE: (nothing: the field is cleared)"
    if op in (LiveOp.TYPE, LiveOp.SELECT, LiveOp.PRESS, LiveOp.SCROLL):
        suffix = " and Enter" if action.press_enter else ""
        return f"{target} -> {op.value}: {value}{suffix}"
    if op is LiveOp.DRAG:
        where = f"onto id={value}" if action.drop_target() else f"by {value}"
        return f"{target} -> DRAG {where}"
    if op is LiveOp.HOVER:
        return f"{target} -> HOVER"
    if op is LiveOp.BACK:
        return "BACK"
    return f"{op.value}: {value}" if value else op.value


def _quote(text: str) -> str:
    text = " ".join(text.split())
    return '"' + (text[: LABEL_CHARS - 1] + "…" if len(text) > LABEL_CHARS else text) + '"'
