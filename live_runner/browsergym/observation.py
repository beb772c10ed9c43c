"""A BrowserGym observation as the page the agents read (pure; no browser here).

BrowserGym's ``dom_object`` is a CDP ``DOMSnapshot.captureSnapshot`` taken while every element
carries its BrowserGym id as a ``bid`` attribute. The live runner's converter
(:func:`live_runner.dom_snapshot.snapshot_to_page`) renders it as HTML (escaped, iframes
inlined, live input values, labels); here each element's ``backend_node_id`` becomes its
``bid``, so the id the model names is the id BrowserGym acts on. An element BrowserGym gave no
``bid`` keeps no id. BrowserGym's snapshot has no computed styles, so ``visibility: hidden``
elements with a box are kept (``display: none`` ones have no box and are left out). An
element's ``bounds`` are BrowserGym's ``bbox`` (viewport pixels, where its mouse actions
land) when the observation has them.

The page's accessibility tree is BrowserGym's own (``axtree_object``, every frame merged), its
nodes tied to the same ids (:mod:`live_runner.axtree`) and marked visible and clickable from
BrowserGym's ``extra_element_properties``, as AgentLab's GenericAgent reads them.
"""

from __future__ import annotations

import io
import re
from typing import Any

from live_runner.axtree import VISIBLE_RATIO, ElementMarks, tree_from_cdp
from live_runner.dom_snapshot import ElementInfo, snapshot_to_page
from live_runner.observe import PageSnapshot
from webagent.contracts import AXTree

#: BrowserGym's element id attribute (``browsergym.core.constants.BROWSERGYM_ID_ATTRIBUTE``)
BID_ATTRIBUTE = "bid"
#: attributes BrowserGym writes into the DOM for itself; never shown to an agent
_OWN_PREFIX = "browsergym_"
#: the live converter writes ``backend_node_id`` first in every start tag; text and attribute
#: values are escaped, so this only matches real tags
_START_TAG_ID = re.compile(r'<([a-z][-a-z0-9]*) backend_node_id="(\d+)"')


def bids(dom: dict[str, Any]) -> dict[int, str]:
    """CDP ``backendNodeId`` -> BrowserGym ``bid`` for every element that has one."""
    strings: list[str] = dom["strings"]
    found: dict[int, str] = {}
    for document in dom["documents"]:
        nodes = document["nodes"]
        for backend_id, attrs in zip(nodes["backendNodeId"], nodes["attributes"], strict=True):
            for k in range(0, len(attrs) - 1, 2):
                if strings[attrs[k]] == BID_ATTRIBUTE:
                    found[backend_id] = strings[attrs[k + 1]]
                    break
    return found


def _without_own_attributes(dom: dict[str, Any]) -> dict[str, Any]:
    """A copy of the snapshot without ``bid`` and ``browsergym_*`` attributes."""
    strings: list[str] = dom["strings"]
    hidden = {i for i, s in enumerate(strings) if s == BID_ATTRIBUTE or s.startswith(_OWN_PREFIX)}
    documents = []
    for document in dom["documents"]:
        nodes = dict(document["nodes"])
        nodes["attributes"] = [
            [x for k in range(0, len(a) - 1, 2) if a[k] not in hidden for x in (a[k], a[k + 1])]
            for a in nodes["attributes"]
        ]
        documents.append({**document, "nodes": nodes})
    return {**dom, "documents": documents}


def page_from_obs(obs: dict[str, Any], *, screenshot: bool = True) -> PageSnapshot:
    """The page of a BrowserGym observation: HTML whose ``backend_node_id`` is the ``bid``,
    elements keyed by ``bid``, and the screenshot as JPEG (``screenshot=False``: none)."""
    dom: dict[str, Any] = obs["dom_object"]
    to_bid = bids(dom)
    page = snapshot_to_page(_without_own_attributes(dom))

    def rename(match: re.Match[str]) -> str:
        bid = to_bid.get(int(match.group(2)))
        tag = match.group(1)
        return f'<{tag} backend_node_id="{_attr(bid)}"' if bid is not None else f"<{tag}"

    boxes = obs.get("extra_element_properties") or {}
    elements = {
        to_bid[info.backend_node_id]: _with_box(info, boxes.get(to_bid[info.backend_node_id]))
        for info in page.elements.values()
        if info.backend_node_id in to_bid
    }
    image = obs.get("screenshot") if screenshot else None
    return PageSnapshot(
        url=str(obs.get("url", "")),
        title=page.title,
        html=_START_TAG_ID.sub(rename, page.html),
        elements=elements,
        frames=page.frames,
        screenshot=jpeg(image) if image is not None else None,
        axtree=axtree_from_obs(obs, elements),
    )


def _with_box(info: ElementInfo, extra: Any) -> ElementInfo:
    """The element with BrowserGym's viewport box, when the observation gives one."""
    box = extra.get("bbox") if isinstance(extra, dict) else None
    if not isinstance(box, list | tuple) or len(box) != 4:
        return info
    return info.model_copy(update={"bounds": tuple(float(v) for v in box)})


def axtree_from_obs(obs: dict[str, Any], elements: dict[str, ElementInfo]) -> AXTree | None:
    """BrowserGym's AXTree with the ids of ``elements`` (the page's, keyed by ``bid``) and
    its visible and clickable marks; None when the observation has no tree."""
    raw = obs.get("axtree_object") or {}
    nodes = raw.get("nodes") if isinstance(raw, dict) else None
    if not nodes:
        return None
    extra: dict[str, dict[str, Any]] = obs.get("extra_element_properties") or {}
    marks = {}
    for bid, info in elements.items():
        known = extra.get(bid, {})
        visibility = known.get("visibility")
        marks[info.backend_node_id] = ElementMarks.of(
            bid,
            info,
            visible=visibility >= VISIBLE_RATIO if isinstance(visibility, int | float) else None,
            clickable=bool(known["clickable"]) if "clickable" in known else None,
        )
    return tree_from_cdp(nodes, marks, source="browsergym")


def _attr(value: str) -> str:
    return value.replace("&", "&amp;").replace('"', "&quot;").replace("<", "&lt;")


def goal_text(obs: dict[str, Any]) -> str:
    """The task: the text parts of BrowserGym's ``goal_object`` (else its legacy ``goal``)."""
    parts = [
        str(m.get("text", ""))
        for m in obs.get("goal_object") or ()
        if isinstance(m, dict) and m.get("type") == "text"
    ]
    return "\n".join(p for p in parts if p) or str(obs.get("goal") or "")


def jpeg(image: Any) -> bytes | None:
    """A screenshot array (height, width, RGB) as JPEG; None when it is empty."""
    from PIL import Image

    if getattr(image, "size", 0) == 0:
        return None
    buffer = io.BytesIO()
    Image.fromarray(image).convert("RGB").save(buffer, format="JPEG", quality=70)
    return buffer.getvalue()
