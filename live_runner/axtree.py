"""A page's accessibility tree from CDP, tied to the ids of the page the agents read.

Chromium's ``Accessibility.getFullAXTree`` gives each frame's nodes with the DOM node they
stand for (``backendDOMNodeId``). Here they become :class:`~webagent.contracts.AXTree` nodes
whose ``element_id`` is the id that element carries in the page's HTML (the live runner's
``backend_node_id``, a saved page's own id under ``--render``, BrowserGym's ``bid``): an
element the page's snapshot did not keep (nothing rendered) gets no id, so every id the tree
shows is one the executor can act on. The marks are the ones BrowserGym gives GenericAgent:

* ``clickable``: the DOM snapshot's ``isClickable`` (Chromium: a click listener, or an element
  that acts on a click by itself), as BrowserGym reads it;
* ``visible``: at least half of the element's box lies in the viewport (BrowserGym measures
  the same ratio with an ``IntersectionObserver``); for an element inside a frame it is not
  known (None, no mark).

Names and values pass through the episode's redaction; a password field's value is masked.
Frames: each same-process frame's tree hangs under its ``<iframe>`` node, its node ids
prefixed so that they stay unique. Only :func:`read_axtree` talks to the browser; the rest is
pure.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

from live_runner.dom_snapshot import PASSWORD_MASK, ElementInfo, FrameInfo, SnapshotPage
from webagent.contracts import AXNode, AXTree, AXValue

Redact = Callable[[str], str]
#: GenericAgent's threshold: an element is visible when this share of it is in the viewport
VISIBLE_RATIO = 0.5


class CDP(Protocol):
    def send(self, method: str, params: dict[str, Any] | None = None) -> Any: ...


def read_axtree(
    cdp: CDP,
    raw_snapshot: Mapping[str, Any],
    page: SnapshotPage,
    size: tuple[float, float],
    *,
    source: str,
    redact: Redact | None = None,
) -> AXTree:
    """The tree of the page ``raw_snapshot`` was taken of, read now (right after the snapshot,
    nothing between), its ids those of ``page`` (the snapshot as the agents read it);
    ``size``: the viewport's width and height."""
    from playwright.sync_api import Error as PlaywrightError

    trees: dict[str, list[dict[str, Any]]] = {}
    for k, frame in enumerate(page.frames):
        params = {"frameId": frame.frame_id} if frame.frame_id else {}
        try:
            trees[frame.frame_id] = cdp.send("Accessibility.getFullAXTree", params)["nodes"]
        except PlaywrightError:
            if not k:
                raise  # the page's own tree: its failure is the observation's
            # a frame CDP cannot read from this tab (another process) is left out
    main = page.frames[0].frame_id if page.frames else ""
    view = viewport(raw_snapshot, *size)
    marks = element_marks(page.elements, main, clickable_nodes(raw_snapshot), view)
    return tree_from_cdp(merge_frames(page.frames, trees), marks, source=source, redact=redact)


@dataclass(frozen=True)
class Viewport:
    """The visible rectangle of the main document, in its coordinates."""

    x: float
    y: float
    width: float
    height: float

    def ratio(self, bounds: tuple[float, float, float, float] | None) -> float:
        """The share of a box (x, y, width, height) inside the viewport."""
        if bounds is None or bounds[2] <= 0 or bounds[3] <= 0:
            return 0.0
        x, y, w, h = bounds
        across = min(x + w, self.x + self.width) - max(x, self.x)
        down = min(y + h, self.y + self.height) - max(y, self.y)
        return max(across, 0.0) * max(down, 0.0) / (w * h)


@dataclass(frozen=True)
class ElementMarks:
    """What the tree says of one element of the page: its id and GenericAgent's marks."""

    element_id: str
    visible: bool | None = None
    clickable: bool | None = None
    password: bool = False

    @classmethod
    def of(
        cls, element_id: str, info: ElementInfo, *, visible: bool | None, clickable: bool | None
    ) -> ElementMarks:
        """The marks of the page's element ``info``, named ``element_id``."""
        password = info.tag == "input" and info.attributes.get("type") == "password"
        return cls(element_id, visible=visible, clickable=clickable, password=password)


def viewport(raw_snapshot: Mapping[str, Any], width: float, height: float) -> Viewport:
    """The main document's viewport: its scroll offsets in a ``captureSnapshot`` result."""
    documents = raw_snapshot.get("documents") or [{}]
    main = documents[0]
    return Viewport(
        float(main.get("scrollOffsetX", 0.0)), float(main.get("scrollOffsetY", 0.0)), width, height
    )


def clickable_nodes(raw_snapshot: Mapping[str, Any]) -> set[int]:
    """The ``backendNodeId`` of every node the DOM snapshot calls clickable."""
    found: set[int] = set()
    for document in raw_snapshot.get("documents", []):
        nodes = document.get("nodes", {})
        backend = nodes.get("backendNodeId", [])
        for index in nodes.get("isClickable", {}).get("index", []):
            if index < len(backend):
                found.add(backend[index])
    return found


def element_marks(
    elements: Mapping[str, ElementInfo],
    main_frame: str,
    clickable: set[int],
    view: Viewport,
) -> dict[int, ElementMarks]:
    """Per ``backendNodeId``, the element the page the agent reads names by it."""
    marks: dict[int, ElementMarks] = {}
    for element_id, info in elements.items():
        in_main = info.frame_id == main_frame
        marks[info.backend_node_id] = ElementMarks.of(
            element_id,
            info,
            visible=view.ratio(info.bounds) >= VISIBLE_RATIO if in_main else None,
            clickable=info.backend_node_id in clickable,
        )
    return marks


def merge_frames(
    frames: Iterable[FrameInfo], trees: Mapping[str, list[dict[str, Any]]]
) -> list[dict[str, Any]]:
    """One tree from each frame's nodes (``trees``: frame id -> nodes, the main frame first
    in ``frames``): a frame's root hangs under the node of its ``<iframe>`` element."""
    frames = list(frames)
    merged: list[dict[str, Any]] = []
    hosts: dict[int, dict[str, Any]] = {}
    for k, frame in enumerate(frames):
        nodes = trees.get(frame.frame_id)
        if not nodes:
            continue
        nodes = [_prefixed(node, f"f{k}:") if k else dict(node) for node in nodes]
        for node in nodes:
            backend = node.get("backendDOMNodeId")
            if isinstance(backend, int):
                hosts.setdefault(backend, node)
        host = hosts.get(frame.iframe_element_id) if frame.iframe_element_id is not None else None
        if k and host is None:
            continue  # a frame whose <iframe> is not in the tree is not shown
        if host is not None:
            host["childIds"] = [*host.get("childIds", []), nodes[0]["nodeId"]]
        merged.extend(nodes)
    return merged


def _prefixed(node: dict[str, Any], prefix: str) -> dict[str, Any]:
    return {
        **node,
        "nodeId": prefix + str(node["nodeId"]),
        "childIds": [prefix + str(c) for c in node.get("childIds", [])],
    }


def tree_from_cdp(
    nodes: list[dict[str, Any]],
    marks: Mapping[int, ElementMarks],
    *,
    source: str,
    redact: Redact | None = None,
) -> AXTree:
    """CDP ``AXNode`` dicts (the root first) as an :class:`AXTree` with the page's ids."""
    redact = redact or (lambda s: s)
    hidden = _inside_passwords(nodes, marks)
    return AXTree(
        nodes=[_node(raw, marks, redact, str(raw["nodeId"]) in hidden) for raw in nodes],
        source=source,
    )


def _inside_passwords(nodes: list[dict[str, Any]], marks: Mapping[int, ElementMarks]) -> set[str]:
    """Ids of the nodes inside a password field (its text, as bullets that tell its length)."""
    children = {str(raw["nodeId"]): [str(c) for c in raw.get("childIds", [])] for raw in nodes}
    todo = [
        child
        for raw in nodes
        if (mark := marks.get(raw.get("backendDOMNodeId", -1))) is not None and mark.password
        for child in children[str(raw["nodeId"])]
    ]
    inside: set[str] = set()
    while todo:
        node = todo.pop()
        if node not in inside:
            inside.add(node)
            todo.extend(children.get(node, []))
    return inside


def _node(
    raw: dict[str, Any], marks: Mapping[int, ElementMarks], redact: Redact, in_password: bool
) -> AXNode:
    backend = raw.get("backendDOMNodeId")
    mark = marks.get(backend) if isinstance(backend, int) else None
    secret = in_password or (mark is not None and mark.password)
    value = _value(raw.get("value"))
    if isinstance(value, str):
        value = PASSWORD_MASK if secret and value else redact(value)
    name = raw.get("name")
    text = redact(str(name.get("value", ""))) if isinstance(name, dict) else None
    return AXNode(
        node_id=str(raw["nodeId"]),
        role=str(_value(raw.get("role")) or ""),
        name=PASSWORD_MASK if in_password and text else text,
        value=value,
        properties=_properties(raw.get("properties", []), redact),
        children=[str(c) for c in raw.get("childIds", [])],
        element_id=mark.element_id if mark else None,
        visible=mark.visible if mark else None,
        clickable=mark.clickable if mark else None,
    )


def _value(field: object) -> AXValue | None:
    """The ``value`` of a CDP ``AXValue`` when it is a plain one (not a list of nodes)."""
    if not isinstance(field, dict) or "value" not in field:
        return None
    value = field["value"]
    return value if isinstance(value, str | bool | int | float) else str(value)


def _properties(raw: Iterable[dict[str, Any]], redact: Redact) -> dict[str, AXValue]:
    found: dict[str, AXValue] = {}
    for prop in raw:
        value = _value(prop.get("value"))
        if value is not None and "name" in prop:
            found[str(prop["name"])] = redact(value) if isinstance(value, str) else value
    return found
