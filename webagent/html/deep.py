"""A tree builder with no nesting limit, for pages deeper than libxml2 accepts (2,048 levels).

It drives the standard library's HTML tokenizer and builds an lxml tree with
:class:`lxml.etree.TreeBuilder`, handling void elements, the usual implied end tags and stray
end tags well enough for segmentation. It is several times slower than libxml2, so
:func:`webagent.html.parse.parse_html` uses it only when libxml2 reports excessive depth.
"""

from __future__ import annotations

from html.parser import HTMLParser

from lxml import etree

# fmt: off
VOID = frozenset({
    "area", "base", "br", "col", "embed", "hr", "img", "input", "keygen", "link", "meta",
    "param", "source", "track", "wbr",
})
_BLOCKS = frozenset({
    "address", "article", "aside", "blockquote", "div", "dl", "fieldset", "footer", "form",
    "h1", "h2", "h3", "h4", "h5", "h6", "header", "hr", "main", "nav", "ol", "p", "pre",
    "section", "table", "ul",
})
# fmt: on
# an open element of the key is closed implicitly when one of the value's tags starts
_IMPLIED_END = {
    "p": _BLOCKS,
    "li": frozenset({"li"}),
    "option": frozenset({"option", "optgroup"}),
    "dt": frozenset({"dt", "dd"}),
    "dd": frozenset({"dt", "dd"}),
    "tr": frozenset({"tr"}),
    "td": frozenset({"td", "th", "tr"}),
    "th": frozenset({"td", "th", "tr"}),
}


class _Builder(HTMLParser):
    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.builder = etree.TreeBuilder()
        self.stack: list[str] = ["html"]
        self.builder.start("html", {})

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        if tag == "html" and len(self.stack) == 1:
            return
        top = self.stack[-1]
        if tag in _IMPLIED_END.get(top, ()):
            self._pop()
        clean: dict[str | bytes, str | bytes] = {k: v or "" for k, v in attrs if _valid_name(k)}
        self.builder.start(tag, clean)
        if tag in VOID:
            self.builder.end(tag)
        else:
            self.stack.append(tag)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID and self.stack[-1] == tag and len(self.stack) > 1:
            self._pop()

    def handle_endtag(self, tag: str) -> None:
        if tag not in self.stack[1:]:
            return  # stray end tag: ignored, as browsers do
        while self.stack[-1] != tag:
            self._pop()
        self._pop()

    def handle_data(self, data: str) -> None:
        self.builder.data(data)

    def _pop(self) -> None:
        self.builder.end(self.stack.pop())

    def finish(self) -> etree._Element:
        self.close()
        while len(self.stack) > 1:
            self._pop()
        self.builder.end("html")
        root: etree._Element = self.builder.close()
        return root


def _valid_name(name: str) -> bool:
    return bool(name) and name.replace("-", "").replace("_", "").replace(":", "").isalnum()


def build_deep_tree(text: str) -> etree._Element:
    """Build an lxml tree of ``text`` however deeply it nests."""
    builder = _Builder()
    builder.feed(text)
    return builder.finish()
