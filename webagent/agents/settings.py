"""Agent settings: one frozen object per run, written into every manifest."""

from __future__ import annotations

from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field

from webagent.gist.batch import GistView


class AgentSettings(BaseModel):
    """What an agent does with a page. Every agent shares the act prompt and the budget."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    agent: str = Field(
        default="readagent-p",
        min_length=1,
        description="a registered agent (webagent.agents.registry); checked when built",
    )
    context_budget: int | None = Field(
        default=None, ge=512, description="tokens per prompt; None = the model's context window"
    )
    depth: int | None = Field(default=None, ge=1, le=30, description="split depth; None = default")
    max_lookup: int = Field(default=5, ge=1, le=20, description="fragments reopened at most")
    gister: Literal["model", "extractive"] = "model"
    gist_words: int = Field(default=30, ge=5, le=200)
    gist_floor_words: int = Field(
        default=8,
        ge=0,
        le=200,
        description="ReadAgent-P/S: where the look-up prompt cannot show every gist with this "
        "many words, the page memory gets levels (sections of adjacent fragments, picked "
        "before the fragments inside them), and ReadAgent-S opens a fragment only where the "
        "other gists keep this many; 0: never (the paper's flat memory)",
    )
    gist_max_tokens: int = Field(default=64, ge=8, le=512)
    gist_batch: int = Field(
        # 8: a cut-off or garbled batch answer costs at most 8 re-asks, and prompts stay short
        # enough that a CPU server is not slowed down by long contexts; a page of 40 fragments
        # is still 5 calls instead of 40
        default=8,
        ge=1,
        le=128,
        description="fragments gisted per model call at most, as many as fit the context "
        "budget (1 = one call per fragment)",
    )
    gist_view: GistView = Field(
        default="reading",
        description="what the model gister reads of a fragment: its text with controls marked "
        "by a number the gister maps back to the page id (reading), the same marked by page id "
        "(reading-ids), or its compact HTML (html)",
    )
    read_whole_page: bool = Field(
        default=True,
        description="ReadAgent-P/S read a page that fits the act prompt whole: every fragment "
        "open, no gist and no look-up call (false: gist every page)",
    )
    act_gists: Literal["all", "none"] = Field(
        default="all",
        description="ReadAgent-P/S: what the act prompt shows beside the fragments the "
        "look-up reopened: every other fragment's gist (all, the paper) or nothing (none; "
        "recorded as gists_omitted); where the look-up reopens nothing, the gists either way",
    )
    extractive_max_tokens: int = Field(
        default=256,
        ge=8,
        le=2048,
        description="cap of one extractive gist; the memory then shares the gist room out",
    )
    gist_ids: bool = Field(
        default=True,
        description="extractive gists name each control by its id (false: by its kind and "
        "words only, for a look-up that answers with part numbers: the room ids took goes to "
        "words; the act prompt names controls by id in the fragments reopened, and where "
        "nothing is reopened, in their extractive gists with ids)",
    )
    retriever: Literal["bm25", "embedding", "fused", "multilingual", "hybrid"] = "bm25"
    lookup_assist: Literal["none", "bm25", "embedding", "fused", "multilingual", "hybrid"] = Field(
        default="none",
        description="retrieval fills the look-up's free slots up to max_lookup after the "
        "model's picks",
    )
    top_k: int = Field(default=5, ge=1, le=50, description="fragments the retrieval baseline shows")
    reserve_tokens: int = Field(
        default=384, ge=64, description="room kept for task, previous actions and instructions"
    )
    lookup_max_tokens: int = Field(default=64, ge=8)
    act_max_tokens: int = Field(default=96, ge=16)
    repair_attempts: int = Field(default=1, ge=0, le=3)
    options: dict[str, Any] = Field(
        default_factory=dict,
        description="the agent's own settings, beyond these (--set agent.options.NAME=VALUE): "
        "checked by the settings class its registration names (AgentSpec.settings)",
    )

    def manifest(self) -> dict[str, Any]:
        return self.model_dump(mode="json")
