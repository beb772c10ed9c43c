"""Page processing's hot loops, compiled (_speedups.pyx): see each Python twin."""

from array import array

from lxml import etree

SOURCE_DIGEST: str

def walk(
    root: etree._Element,
    keep_wrappers: bool,
    page: object,
    env: tuple[object, ...],
    numbered: list[str],
) -> int: ...
def utf8_prefix(pieces: list[str]) -> array[int]: ...
def visible_text(pieces: list[str], start: int, stop: int) -> str: ...
def split_units(
    page: object, node: int, split_depth: int, sizer: object, unit: type
) -> list[object]: ...
def merge_siblings(
    units: list[object], min_tokens: int, max_tokens: int, group: type, any_parent: int
) -> list[object]: ...
def holder(page: object, start: int, stop: int) -> int: ...
