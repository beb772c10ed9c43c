"""What the segmenter produces: a page as an ordered list of fragments."""

from __future__ import annotations

from pydantic import BaseModel, Field


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


class SegmentedPage(BaseModel):
    """The output of segmentation, with what a researcher needs to audit it."""

    fragments: list[Fragment]
    element_ids: list[str] = Field(description="every id of the cleaned page, document order")
    page_tokens: int = Field(description="tokens of the whole cleaned page (compact form)")
    raw_bytes: int = Field(description="size of the HTML given to the parser")
    depth: int = Field(description="the split depth actually used")
    settings: dict[str, object] = Field(default_factory=dict)

    def fragment_of(self, element_id: str) -> int | None:
        """Index of the fragment holding ``element_id``, or None (lost in cleaning)."""
        for fragment in self.fragments:
            if element_id in fragment.element_ids:
                return fragment.index
        return None
