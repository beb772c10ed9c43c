"""What the segmenter produces: a page as an ordered list of fragments."""

from __future__ import annotations

from typing import Literal

from pydantic import BaseModel, ConfigDict, Field, model_validator


class SegmentSettings(BaseModel):
    """How a page is cut into fragments. See docs/SEGMENTATION.md for the rules."""

    model_config = ConfigDict(frozen=True)

    depth: int = Field(default=6, ge=1, description="split the DOM into subtrees at this depth")
    max_fragment_tokens: int = Field(
        default=1200, ge=16, description="a fragment over this is split deeper"
    )
    min_fragment_tokens: int = Field(
        default=64, ge=0, description="runs of fragments under this are merged with neighbours"
    )
    max_fragments: int | None = Field(
        default=None, ge=1, description="merge adjacent fragments until at most this many"
    )
    overflow: Literal["keep_fragment_tokens", "keep_fragment_count"] = Field(
        default="keep_fragment_count",
        description=(
            "when max_fragments and max_fragment_tokens cannot both hold: keep fragments "
            "under their token budget (too many fragments) or merge past it (too large ones)"
        ),
    )
    keep_wrappers: bool = Field(
        default=False, description="render pure wrapper elements too (more ids, more tokens)"
    )

    @model_validator(mode="after")
    def _check(self) -> SegmentSettings:
        if self.min_fragment_tokens > self.max_fragment_tokens:
            raise ValueError(
                f"min_fragment_tokens ({self.min_fragment_tokens}) is larger than "
                f"max_fragment_tokens ({self.max_fragment_tokens})"
            )
        return self


class Fragment(BaseModel):
    """One DOM subtree (or a run of merged small siblings), in document order."""

    index: int = Field(description="0-based position in the page; shown to the model as index+1")
    path: str = Field(description="short ancestor path for context, e.g. 'body > div#main > form'")
    html: str = Field(description="compact cleaned HTML of the subtree, ids as id=... attributes")
    text: str = Field(description="visible text of the subtree, whitespace collapsed")
    element_ids: list[str] = Field(description="ids of every kept element inside, document order")
    interactive_ids: list[str] = Field(
        default_factory=list, description="ids of interactive elements (links, inputs, buttons...)"
    )
    tokens: int = Field(description="tokens of ``html`` under the counter used to segment")
    oversized: bool = Field(
        default=False,
        description="over max_fragment_tokens: one indivisible element, or merged to honour "
        "max_fragments",
    )


class SegmentedPage(BaseModel):
    """The output of segmentation, with what a researcher needs to audit it."""

    fragments: list[Fragment]
    element_ids: list[str] = Field(description="every id of the cleaned page, document order")
    page_tokens: int = Field(description="tokens of the whole cleaned page (compact form)")
    raw_bytes: int = Field(description="size of the HTML given to the parser")
    depth: int = Field(description="the split depth actually used")
    settings: dict[str, object] = Field(default_factory=dict)
    fits_budget: bool = Field(
        default=True,
        description="False when max_fragments or max_fragment_tokens could not be honoured",
    )
    overflow: str | None = Field(default=None, description="what did not fit, in words")

    @property
    def interactive_ids(self) -> list[str]:
        return [i for fragment in self.fragments for i in fragment.interactive_ids]

    def fragment_of(self, element_id: str) -> int | None:
        """Index of the fragment holding ``element_id``, or None (lost in cleaning)."""
        for fragment in self.fragments:
            if element_id in fragment.element_ids:
                return fragment.index
        return None
