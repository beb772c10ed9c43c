"""The column arrays of one CDP ``DOMSnapshot`` document, and questions about its nodes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

#: computed styles requested from CDP, in this order
COMPUTED_STYLES = ("display", "visibility", "overflow-x", "overflow-y")
#: what a live observation requests: the same, then what its marks read (live_runner.live_marks)
LIVE_STYLES = (*COMPUTED_STYLES, "background-color")


@dataclass
class SnapshotDoc:
    """Column arrays of one snapshot document, indexed by node."""

    index: int
    frame_id: str
    url: str
    names: list[str]
    types: list[int]
    values: list[str]
    backend_ids: list[int]
    attrs: list[list[tuple[str, str]]]
    children: list[list[int]]
    layout: dict[int, int]
    styles: list[list[str]]
    bounds: list[list[float]]
    input_value: dict[int, str]
    text_value: dict[int, str]
    checked: set[int]
    selected: set[int]
    content_doc: dict[int, int]
    shadow: dict[int, str]
    pseudo: set[int]
    #: nodes the browser says respond to clicks (CDP ``isClickable``: listeners included)
    clickable: set[int]

    def style(self, node: int, name: str) -> str | None:
        k = self.layout.get(node)
        if k is None:
            return None
        style = self.styles[k]
        position = LIVE_STYLES.index(name)  # COMPUTED_STYLES is its beginning
        return style[position] if position < len(style) else None

    def area(self, node: int) -> float:
        k = self.layout.get(node)
        if k is None:
            return 0.0
        box = self.bounds[k]
        return box[2] * box[3] if len(box) == 4 else 0.0

    def box(self, node: int) -> tuple[float, float, float, float] | None:
        """x, y, width, height of the node's layout box in its document, if it has one."""
        k = self.layout.get(node)
        box = self.bounds[k] if k is not None else None
        return (box[0], box[1], box[2], box[3]) if box and len(box) == 4 else None

    def hidden_style(self, node: int) -> bool:
        return self.style(node, "visibility") in ("hidden", "collapse")

    def self_visible(self, node: int, tag: str) -> bool:
        """A box of non-zero size (``html`` and ``body`` always) that is not hidden."""
        if node not in self.layout or self.hidden_style(node):
            return False
        return self.area(node) > 0 or tag in ("html", "body")

    def clips_all(self, node: int) -> bool:
        """A zero-size box that hides its overflow shows nothing inside it."""
        if node not in self.layout or self.area(node) > 0:
            return False
        overflow = (self.style(node, "overflow-x"), self.style(node, "overflow-y"))
        return any(o in ("hidden", "clip") for o in overflow)

    def root_element(self, tag: str) -> int | None:
        """The document's ``<html>`` element, or with ``tag="body"`` its body."""
        nodes = [c for c in self.children[0] if self.types[c] == 1] if self.children else []
        if nodes and tag == "body":
            nodes = [c for c in self.children[nodes[0]] if self.names[c].lower() == "body"]
        return nodes[0] if nodes else None


def parse_documents(raw: dict[str, Any]) -> list[SnapshotDoc]:
    """Every document of a raw ``captureSnapshot`` result (the page first, then frames)."""
    strings: list[str] = raw["strings"]
    return [_parse_doc(i, d, strings) for i, d in enumerate(raw["documents"])]


def _string(strings: list[str], index: int) -> str:
    return strings[index] if index >= 0 else ""


def _rare(data: dict[str, Any], strings: list[str]) -> dict[int, str]:
    return {i: _string(strings, v) for i, v in zip(data["index"], data["value"], strict=True)}


def _parse_doc(index: int, doc: dict[str, Any], strings: list[str]) -> SnapshotDoc:
    nodes = doc["nodes"]
    parents: list[int] = nodes["parentIndex"]
    children: list[list[int]] = [[] for _ in parents]
    for i, parent in enumerate(parents):
        if parent >= 0:
            children[parent].append(i)
    attrs = [
        [(_string(strings, a[k]), _string(strings, a[k + 1])) for k in range(0, len(a) - 1, 2)]
        for a in nodes.get("attributes", [[] for _ in parents])
    ]
    layout = doc["layout"]
    return SnapshotDoc(
        index=index,
        frame_id=_string(strings, doc["frameId"]),
        url=_string(strings, doc["documentURL"]),
        names=[_string(strings, n) for n in nodes["nodeName"]],
        types=nodes["nodeType"],
        values=[_string(strings, v) for v in nodes["nodeValue"]],
        backend_ids=nodes["backendNodeId"],
        attrs=attrs,
        children=children,
        layout={node: k for k, node in enumerate(layout["nodeIndex"])},
        styles=[[_string(strings, s) for s in style] for style in layout["styles"]],
        bounds=layout["bounds"],
        input_value=_rare(nodes.get("inputValue", {"index": [], "value": []}), strings),
        text_value=_rare(nodes.get("textValue", {"index": [], "value": []}), strings),
        checked=set(nodes.get("inputChecked", {"index": []})["index"]),
        selected=set(nodes.get("optionSelected", {"index": []})["index"]),
        content_doc=dict(
            zip(
                nodes.get("contentDocumentIndex", {"index": []})["index"],
                nodes.get("contentDocumentIndex", {"value": []})["value"],
                strict=True,
            )
        ),
        shadow=_rare(nodes.get("shadowRootType", {"index": [], "value": []}), strings),
        pseudo=set(nodes.get("pseudoType", {"index": []})["index"]),
        clickable=set(nodes.get("isClickable", {"index": []})["index"]),
    )
