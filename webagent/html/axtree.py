"""A page's accessibility tree as text, one line a node, the way the field's agents read it.

The format is BrowserGym's AXTree as AgentLab's GenericAgent shows it (``flatten_axtree_to_str``
with visible and clickable tags on): a node per line, indented by one tab per shown ancestor,
``[ID] role 'name'``, then `` value='...'`` where the node has a value, then its marks and
properties after commas::

    [id=14] textbox 'Email', clickable, visible, focused, required
    \\t[id=20] button 'Create account', clickable, visible

The one change: the id is written ``[id=14]`` where GenericAgent writes ``[14]``, so that the
act prompt's convention (elements are shown with ``id=...``) holds for this page as for the
others; the ids are the page's own (``backend_node_id``, BrowserGym's ``bid``).

What is left out, as GenericAgent leaves it out: a node without a name (the browser's ignored
nodes) and a ``LineBreak`` (their children are shown one level up); a ``generic`` node with no
property; a ``StaticText`` whose text its parent's name already holds. Some properties say
nothing to a reader (``focusable``, ``editable``, ``readonly``, ``level``, ``settable``,
``multiline``, ``invalid``); ``required``, ``focused`` and ``atomic`` are shown by their name
alone when true.
"""

from __future__ import annotations

from dataclasses import dataclass

from webagent.contracts import AXNode, AXTree

__all__ = ["flatten_axtree", "node_line"]

IGNORED_ROLES = frozenset({"LineBreak"})
IGNORED_PROPERTIES = frozenset(
    {"editable", "readonly", "level", "settable", "multiline", "invalid", "focusable"}
)
#: properties shown by their name alone, and only when true
FLAGS = frozenset({"required", "focused", "atomic"})


@dataclass(frozen=True)
class _Visit:
    node: AXNode
    depth: int
    parent_name: str


def flatten_axtree(tree: AXTree) -> str:
    """The tree as lines, root first, children in order (module doc)."""
    by_id = {node.node_id: node for node in tree.nodes}
    lines: list[str] = []
    seen: set[str] = set()
    stack = [_Visit(tree.nodes[0], 0, "")] if tree.nodes else []
    while stack:
        visit = stack.pop()
        node = visit.node
        seen.add(node.node_id)
        line = node_line(node, visit.parent_name)
        if line is not None:
            lines.append("\t" * visit.depth + line)
        depth = visit.depth + (line is not None)
        named = node.name if node.name is not None and node.role not in IGNORED_ROLES else ""
        children = [by_id[c] for c in node.children if c in by_id and c not in seen]
        stack.extend(_Visit(child, depth, named) for child in reversed(children))
    return "\n".join(lines)


def node_line(node: AXNode, parent_name: str = "") -> str | None:
    """One node's line without its indent; None for a node that is not shown."""
    if node.role in IGNORED_ROLES or node.name is None:
        return None
    properties = _properties(node)
    if node.role == "generic" and not properties:
        return None
    if node.role == "StaticText" and node.name in parent_name:
        return None
    untitled = node.role == "generic" and not node.name
    line = node.role if untitled else f"{node.role} {node.name.strip()!r}"
    if node.element_id is not None:
        line = f"[id={node.element_id}] {line}"
    if node.value is not None:
        line += f" value={node.value!r}"
    marks = _marks(node) if node.role != "StaticText" else []
    return ", ".join([line, *marks, *properties])


def _marks(node: AXNode) -> list[str]:
    """GenericAgent's tags for an element with an id: ``clickable``, ``visible``."""
    if node.element_id is None:
        return []
    return [mark for mark, on in (("clickable", node.clickable), ("visible", node.visible)) if on]


def _properties(node: AXNode) -> list[str]:
    shown = []
    for name, value in node.properties.items():
        if name in IGNORED_PROPERTIES:
            continue
        if name in FLAGS:
            if value:
                shown.append(name)
        else:
            shown.append(f"{name}={value!r}")
    return shown
