"""The compiled cleaning walk (_cwalk.pyx): see webagent.html.clean._walk."""

from lxml import etree

SOURCE_DIGEST: str

def walk(
    root: etree._Element,
    keep_wrappers: bool,
    page: object,
    env: tuple[object, ...],
    numbered: list[str],
) -> int: ...
