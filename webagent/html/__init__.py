"""Page -> cleaned tree -> fragments: the first stage of ReadAgent for the web."""

from webagent.html.budget import plan_segmentation
from webagent.html.clean import CleanPage, clean_page
from webagent.html.fragment import Fragment, SegmentedPage, SegmentSettings
from webagent.html.parse import parse_html
from webagent.html.segment import segment_html, segment_page, segment_tree
from webagent.tokens import estimate_tokens

__all__ = [
    "CleanPage",
    "Fragment",
    "SegmentSettings",
    "SegmentedPage",
    "clean_page",
    "estimate_tokens",
    "parse_html",
    "plan_segmentation",
    "segment_html",
    "segment_page",
    "segment_tree",
]
