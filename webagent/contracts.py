"""The types that cross stages, below all of them.

Page → fragments → gists → look-up → action → score: every stage, the agents that compose
them, the evaluator and the live runner import these; this module imports no stage.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from enum import StrEnum
from typing import Literal

from pydantic import BaseModel, ConfigDict, Field

__all__ = [
    "LIVE_OPS",
    "MIND2WEB_OPS",
    "AXNode",
    "AXTree",
    "Action",
    "Agent",
    "ElementCandidate",
    "LookupRound",
    "MemoryEdits",
    "ModelCall",
    "Observation",
    "Op",
    "Phase",
    "PhaseUsage",
    "RenderedPage",
    "StepTrace",
]

#: what a model call was for; usage is reported per phase
Phase = Literal["gist", "lookup", "act", "repair", "other"]


class Op(StrEnum):
    CLICK = "CLICK"
    TYPE = "TYPE"
    SELECT = "SELECT"
    # offered only by live environments (Observation.actions): a key, a scroll, a drag, a hover
    PRESS = "PRESS"
    SCROLL = "SCROLL"
    DRAG = "DRAG"
    HOVER = "HOVER"


#: the operations of Mind2Web, and of every offline request: an act prompt offering them is
#: ``prompts/act.toml``, byte for byte as before the live operations existed
MIND2WEB_OPS: tuple[Op, ...] = (Op.CLICK, Op.TYPE, Op.SELECT)
#: what a live browser offers (``prompts/act_live.toml``)
LIVE_OPS: tuple[Op, ...] = tuple(Op)


class Action(BaseModel):
    """One predicted step: an element of the page and what to do with it."""

    model_config = ConfigDict(frozen=True)

    element_id: str = Field(description="the element's id as shown to the model (backend_node_id)")
    op: Op
    value: str = Field(default="", description="text to type or option to select; empty for CLICK")

    def action_string(self) -> str:
        """The official scorer's action string: ``"CLICK"`` or ``"TYPE value"``."""
        return f"{self.op.value} {self.value}".strip() if self.op is not Op.CLICK else "CLICK"


class PhaseUsage(BaseModel):
    """Usage of one phase (gist, look-up, act...): what a step or a run spent."""

    calls: int = 0
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cache_hits: int = 0
    cached_tokens: int = Field(
        default=0,
        description="tokens the cache hits had cost when they were written (input + output): "
        "served from the cache, not spent (not in input_tokens / output_tokens)",
    )
    cached_input_tokens: int = Field(
        default=0,
        description="input tokens the provider's prompt cache served, as its answers reported "
        "them (usage.prompt_tokens_details.cached_tokens): part of input_tokens, billed at "
        "the cached-input price; not the gist cache (cached_tokens)",
    )

    def add(self, other: PhaseUsage) -> None:
        """Add ``other``'s figures to these (a total of several steps or phases)."""
        self.calls += other.calls
        self.input_tokens += other.input_tokens
        self.output_tokens += other.output_tokens
        self.latency_s += other.latency_s
        self.cache_hits += other.cache_hits
        self.cached_tokens += other.cached_tokens
        self.cached_input_tokens += other.cached_input_tokens


class ElementCandidate(BaseModel):
    """An element a ranker scored (MindAct's candidate generation): its id, rank and score,
    never whether it is the target."""

    model_config = ConfigDict(frozen=True)

    element_id: str
    rank: int | None = None
    score: float | None = None


#: a property's value as the browser gives it (CDP's ``AXValue.value``)
AXValue = str | bool | int | float


class AXNode(BaseModel):
    """One node of a page's accessibility tree as the browser computes it (CDP's ``AXNode``),
    tied to the page's element ids."""

    model_config = ConfigDict(frozen=True)

    node_id: str = Field(description="unique in its tree")
    role: str
    name: str | None = Field(default=None, description="None: the browser gave it no name")
    value: AXValue | None = Field(default=None, description="a control's value, if it has one")
    properties: dict[str, AXValue] = Field(
        default_factory=dict, description="CDP's properties that carry a value, in its order"
    )
    children: list[str] = Field(default_factory=list, description="node ids, in order")
    element_id: str | None = Field(
        default=None,
        description="the id of its DOM element as the toolkit names it (backend_node_id, "
        "BrowserGym's bid); None for a node of no element on the page the agent reads",
    )
    visible: bool | None = Field(
        default=None, description="at least half of it in the viewport; None: not known"
    )
    clickable: bool | None = Field(
        default=None, description="the browser says it takes a click; None: not known"
    )


class AXTree(BaseModel):
    """A page's accessibility tree: its nodes, the root first."""

    model_config = ConfigDict(frozen=True)

    nodes: list[AXNode]
    source: str = Field(
        description="where it comes from: 'cdp' (a live tab), 'browsergym' (BrowserGym's "
        "axtree_object), 'render' (a saved page rendered offline)"
    )


class RenderedPage(BaseModel):
    """A saved page as a browser rendered it (``--render``): its HTML with the page's ids,
    and its accessibility tree where it was asked for."""

    html: str
    axtree: AXTree | None = None


class Observation(BaseModel):
    """What an agent sees at one step. ``html`` carries element ids as ``backend_node_id``."""

    task: str
    previous_actions: list[str] = Field(default_factory=list)
    html: str
    url: str | None = None
    candidates: list[ElementCandidate] | None = Field(
        default=None,
        description="ranker-scored elements, best first, when the data carries rank/score",
    )
    actions: tuple[Op, ...] = Field(
        default=MIND2WEB_OPS,
        description="the operations the environment can carry out: Mind2Web's CLICK, TYPE, "
        "SELECT offline; a live browser adds PRESS, SCROLL, DRAG, HOVER (LIVE_OPS)",
    )
    axtree: AXTree | None = Field(
        default=None,
        description="the page's accessibility tree with the same element ids, where the "
        "producer gives it (a live tab, BrowserGym, a page rendered with --render)",
    )


class ModelCall(BaseModel):
    """One call to the model, as the trace and the HTML report show it."""

    phase: Phase
    prompt: list[dict[str, str]]
    response: str | None
    input_tokens: int = 0
    output_tokens: int = 0
    latency_s: float = 0.0
    cached: bool = False
    cached_input_tokens: int | None = Field(
        default=None,
        description="input tokens the provider's prompt cache served, as the answer reported "
        "them; None: the answer did not say (webagent.model.prompt_cache estimates them)",
    )
    error: str | None = None


class MemoryEdits(BaseModel):
    """What fitting the page memory to its budget changed: nothing is cut silently."""

    reopen_refused: list[int] = Field(
        default_factory=list, description="0-based fragments asked for but not shown: no room"
    )
    reopen_cut: list[int] = Field(
        default_factory=list, description="reopened fragments shown in part (alone over budget)"
    )
    gists_shortened: list[int] = Field(default_factory=list, description="gists cut to fit")
    gists_displaced: list[int] = Field(
        default_factory=list, description="gists left out to make room for reopened fragments"
    )
    previous_dropped: int = Field(default=0, description="earliest previous actions left out")
    outside_sections: list[int] = Field(
        default_factory=list,
        description="0-based fragments whose gists were not shown: in a levelled memory, "
        "their sections were not opened",
    )
    sections_shortened: list[int] = Field(
        default_factory=list,
        description="sections (by first fragment) whose gists were cut below the floor",
    )
    gists_omitted: list[int] = Field(
        default_factory=list,
        description="0-based fragments whose gists the act prompt did not show beside the "
        "reopened ones, by setting (agent.act_gists='none')",
    )
    lines_cut: int = Field(
        default=0,
        description="lines of the page (its accessibility tree) left out at its end: over budget",
    )

    def changed(self) -> bool:
        return bool(
            self.reopen_refused
            or self.reopen_cut
            or self.gists_shortened
            or self.gists_displaced
            or self.previous_dropped
            or self.outside_sections
            or self.sections_shortened
            or self.gists_omitted
            or self.lines_cut
        )


class LookupRound(BaseModel):
    """One look-up answer: what the model asked for and what was made of it."""

    raw: str
    requested: list[int] = Field(default_factory=list, description="1-based page numbers asked")
    accepted: list[int] = Field(default_factory=list, description="0-based fragments reopened")
    rejected: list[str] = Field(default_factory=list, description="what was refused, and why")
    stop: bool = False
    reason: str | None = None
    assisted: list[int] = Field(
        default_factory=list, description="0-based fragments retrieval added in free slots"
    )
    level: int = Field(
        default=0,
        description="0: a round over parts; 1: over the top sections of a levelled memory, "
        "2: over the sections inside those, ...",
    )
    sections: list[list[int]] = Field(
        default_factory=list,
        description="the sections a section round opened, as 0-based [start, end) fragments",
    )
    memory_edits: MemoryEdits = Field(
        default_factory=MemoryEdits,
        description="what fitting this round's prompt changed (ReadAgent-S: the gists cut to "
        "make room for the parts open so far)",
    )


class SectionGist(BaseModel):
    """A section of a levelled page memory: adjacent fragments, gisted from their gists."""

    start: int = Field(description="its first fragment, 0-based")
    end: int = Field(description="one past its last fragment")
    depth: int = Field(description="1: a top section, 2: a section inside one, ...")
    gist: str


class StepTrace(BaseModel):
    """Everything one step did: enough to audit, report and replay it."""

    schema_version: int = 1
    agent: str
    action: Action | None = None
    error: str | None = Field(default=None, description="why no valid action was produced")
    error_class: str | None = None
    n_fragments: int = 0
    fragment_tokens: list[int] = Field(default_factory=list)
    fragment_element_ids: list[list[str]] = Field(default_factory=list)
    gists: list[str] = Field(
        default_factory=list,
        description="each fragment's gist as written; prompts may show them shortened "
        "(memory_edits)",
    )
    reopened: list[int] = Field(default_factory=list, description="0-based fragments reopened")
    read_whole: bool = Field(
        default=False,
        description="the page fitted the act prompt whole: every fragment open, no gists, "
        "no look-up",
    )
    lookup: list[LookupRound] = Field(default_factory=list)
    shown_element_ids: list[str] = Field(default_factory=list)
    memory: str = Field(default="", description="the page as the act prompt showed it")
    memory_edits: MemoryEdits = Field(default_factory=MemoryEdits)
    lookup_edits: MemoryEdits = Field(
        default_factory=MemoryEdits,
        description="what fitting the page to the (first) look-up prompt changed",
    )
    sections: list[SectionGist] = Field(
        default_factory=list,
        description="the levels of the page memory, top first; empty when all gists fit "
        "the look-up prompt at the floor (a flat memory)",
    )
    calls: list[ModelCall] = Field(default_factory=list)
    usage: dict[str, PhaseUsage] = Field(default_factory=dict)
    page_tokens: int = 0
    prompt_tokens: int = Field(default=0, description="tokens of the act prompt")
    timings: dict[str, float] = Field(default_factory=dict)
    gist_cache_hits: int = 0


class Agent(ABC):
    """Observation in, action (with its trace) out."""

    name: str
    #: whether the agent picks the fragments it reads in full (a look-up, retrieval, a
    #: ranker's candidates): look-up recall is reported only for agents that do
    chooses_fragments: bool = True
    #: whether it reads the page's accessibility tree (``Observation.axtree``): a producer
    #: that makes the tree only on request (a live tab, ``--render``) makes it for this agent
    reads_axtree: bool = False

    @abstractmethod
    def step(self, observation: Observation) -> StepTrace:
        """Predict one action. Never raises for model or parse failures: they go in the trace."""
