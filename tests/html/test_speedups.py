"""The compiled loops (webagent/html/_speedups.pyx) give what their Python twins give.

The walk: every field of the CleanPage is compared, on the shared real pages, on random pages
and on the trees only a caller can hand over (namespaces, entity references, comments). The
units and the first merge: every unit and group, on the shared pages and on random pages."""

from __future__ import annotations

import dataclasses
import importlib.util
from itertools import accumulate
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lxml import etree

from webagent.html import clean, merge, paths, units
from webagent.html.compiled import speedups
from webagent.html.fragment import SegmentSettings
from webagent.html.parse import parse_html
from webagent.html.segment import segment_html, segment_page

pytestmark = pytest.mark.skipif(
    speedups is None, reason="not compiled here (`python hatch_build.py` compiles it)"
)
twin = clean._visible_text  # CleanPage.text without the compiled module
FIELDS = [f.name for f in dataclasses.fields(clean.CleanPage)]
REPO = Path(__file__).resolve().parents[2]


def assert_same_walk(root: etree._Element, keep_wrappers: bool) -> None:
    compiled = clean.CleanPage()
    ordinal = speedups.walk(root, keep_wrappers, compiled, clean._RULES, clean._NUMBERED)
    assert ordinal >= 0, "the compiled walk handed this tree to the Python walk"
    compiled = clean._finished(compiled, ordinal)
    python = clean._walk_python(root, keep_wrappers)
    for name in FIELDS:
        assert getattr(compiled, name) == getattr(python, name), name
    assert ordinal == sum(1 for _ in root.iter())


def test_the_module_is_built_from_the_current_source() -> None:
    spec = importlib.util.spec_from_file_location("hatch_build", REPO / "hatch_build.py")
    assert spec is not None and spec.loader is not None
    hook = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(hook)
    assert hook.source_digest() == speedups.SOURCE_DIGEST, (
        "webagent/html/_speedups.pyx changed since it was compiled: run `python hatch_build.py`"
    )


@pytest.mark.parametrize("keep_wrappers", [False, True])
def test_same_page_on_every_shared_page(shared_dir: Path, keep_wrappers: bool) -> None:
    paths = sorted((shared_dir / "pages").glob("*.html"))
    assert paths
    for path in paths:
        assert_same_walk(parse_html(path.read_bytes()), keep_wrappers)


TAGS = ["div", "span", "p", "a", "button", "svg", "text", "script", "input", "label", "br"]
ATTRS = [
    "", " hidden", ' aria-hidden="true"', ' style="display:none"', ' style="visibility:hidden"',
    ' style="VISIBILITY: Visible"', ' style="color: red"', ' aria-label="named"',
    ' role="button"', ' onclick="f()"', ' title="  "', ' backend_node_id="77"', ' type="hidden"',
    ' contenteditable="false"', ' value="v" value="w"', ' name="n" placeholder="p"',
]  # fmt: skip
WORDS = st.sampled_from([
    "", "  ", "\n  ", "alpha", " beta <gamma> ", "\xa0", "\u2003x\u2003", "\x1c", "日本",
    "a&amp;b", "<!-- c -->d",
])  # fmt: skip


@st.composite
def html_tree(draw: st.DrawFn, depth: int = 0) -> str:
    tag = draw(st.sampled_from(TAGS))
    attrs = "".join(draw(st.lists(st.sampled_from(ATTRS), max_size=2)))
    if depth > 5 or draw(st.integers(0, 9)) < 2 + depth:
        return f"<{tag}{attrs}>" + draw(WORDS)
    inner = draw(WORDS) + "".join(draw(st.lists(html_tree(depth + 1), max_size=3)))
    return f"<{tag}{attrs}>{inner}</{tag}>" + draw(WORDS)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.lists(html_tree(), min_size=1, max_size=4), keep_wrappers=st.booleans())
def test_same_page_on_random_pages(body: list[str], keep_wrappers: bool) -> None:
    assert_same_walk(parse_html("<html><body>" + "".join(body) + "</body></html>"), keep_wrappers)


def test_same_page_on_a_caller_tree_with_namespaces_and_a_subtree_root() -> None:
    root = etree.Element("html")
    body = etree.SubElement(root, "body")
    svg = etree.SubElement(body, "{http://www.w3.org/2000/svg}svg", {"aria-label": "logo"})
    svg.tail = " after the logo "
    link = etree.SubElement(body, "a", {"{http://www.w3.org/1999/xlink}href": "/x", "title": "t"})
    link.text = "go"
    link.tail = "tail"
    assert_same_walk(root, keep_wrappers=False)
    assert_same_walk(body, keep_wrappers=True)  # a subtree: its parent never ends


def test_trees_with_comments_or_entities_are_left_to_the_python_walk() -> None:
    root = etree.fromstring("<div><p>a<!-- c -->b</p><a href='/'>x</a></div>")
    page = clean.CleanPage()
    assert speedups.walk(root, False, page, clean._RULES, clean._NUMBERED) == -1
    assert page == clean.CleanPage()  # nothing was filled in
    with_entity = etree.fromstring("<div><p>a</p></div>")
    with_entity[0].append(etree.Entity("nbsp"))
    assert speedups.walk(with_entity, False, page, clean._RULES, clean._NUMBERED) == -1
    # clean_page still reads them: comments stripped from a copy first, entities in Python
    assert clean.clean_page(root).html() == "<p id=n2>ab</p><a id=n3>x</a>"
    assert clean.clean_page(with_entity).html() == "<p id=n2>a</p>"


def test_utf8_prefix_sums_the_encoded_lengths(shared_dir: Path) -> None:
    pieces = ["", "abc", "é", "日本", "😀x", "\x7f\x80\u07ff\u0800\uffff\U00010000", "<a id=n1>"]
    path = sorted((shared_dir / "pages").glob("*.html"))[0]
    pieces += clean.clean_page(path.read_bytes()).pieces
    prefix = speedups.utf8_prefix(pieces)
    assert prefix.typecode == "q"
    assert list(prefix) == [0, *accumulate(len(p.encode()) for p in pieces)]
    assert speedups.utf8_prefix([]).tolist() == [0]


def test_visible_text_on_the_shared_pages(shared_dir: Path) -> None:
    """The whole page, every subtree, and windows that start and stop anywhere."""
    for path in sorted((shared_dir / "pages").glob("*.html")):
        page = clean.clean_page(path.read_bytes())
        size = len(page.pieces)
        spans = [(0, size), *zip(page.p_open, page.p_end, strict=True)]
        spans += [(n, min(size, n + 37)) for n in range(0, size, 13)]
        pieces = page.pieces
        for start, stop in spans:
            assert speedups.visible_text(pieces, start, stop) == twin(pieces, start, stop)
        fragments = segment_page(page, SegmentSettings()).fragments
        assert " ".join(f.text for f in fragments if f.text) == twin(pieces, 0, size)


SPACES = ["", " ", "\t\n", "\xa0", "\u2003", "\x1c", "\u3000", "\x85"]


@settings(max_examples=300, deadline=None)
@given(
    st.lists(
        st.one_of(
            st.sampled_from(["<a id=n1>", "</a>", "<br id=n2>", "&lt;", "&l", "t;", *SPACES]),
            st.text(alphabet=st.sampled_from(["a", "é", "日", "😀", "<", "&", "\t", *SPACES[3:]])),
        ),
        max_size=12,
    ),
    st.data(),
)
def test_visible_text_on_random_pieces(pieces: list[str], data: st.DataObject) -> None:
    start = data.draw(st.integers(0, len(pieces)))
    stop = data.draw(st.integers(start, len(pieces)))
    assert speedups.visible_text(pieces, start, stop) == twin(pieces, start, stop)


def assert_same_units(page: clean.CleanPage) -> None:
    """split_units of every subtree at every depth below it, estimated and counted, and
    merge_siblings of the whole page's fitted units under several budgets."""
    for counter in (None, len):
        sizer = units.Sizer(page, counter)
        nodes = range(0, len(page.tags), max(1, len(page.tags) // 40))
        for node in [0, *nodes]:
            for below in range(page.height[node] - page.depth[node] + 2):
                depth = page.depth[node] + below
                compiled = speedups.split_units(page, node, depth, sizer, units.Unit)
                assert compiled == units._split_units_python(page, node, depth, sizer)
        for depth, cap in ((4, 600), (6, 1200), (7, 60)):
            fitted = sizer.fill(
                units.fit_units(page, units.split_units(page, 0, depth, sizer), cap, sizer)
            )
            for low, high in ((0, 100), (64, 1200), (200, 800), (10**6, 10**7)):
                compiled = speedups.merge_siblings(fitted, low, high, merge.Group, units.ANY_PARENT)
                assert compiled == merge._merge_siblings(fitted, low, high)


def assert_same_holders(page: clean.CleanPage) -> None:
    """paths.holder of every subtree, of windows that start and stop anywhere, and of every
    fragment; an empty or outside span is refused by both."""
    size = len(page.pieces)
    spans = [(0, size), *zip(page.p_open, page.p_end, strict=True)]
    spans += [(n, min(size, n + width)) for width in (1, 7, 37) for n in range(0, size, 11)]
    spans += [(f.start, f.stop) for f in units.split_units(page, 0, 6, units.Sizer(page, None))]
    for start, stop in spans:
        assert speedups.holder(page, start, stop) == paths._holder_python(page, start, stop)
    for start, stop in ((0, 0), (size, size + 1), (-1, 2)):
        with pytest.raises(ValueError, match="no pieces"):
            speedups.holder(page, start, stop)
        with pytest.raises(ValueError, match="no pieces"):
            paths._holder_python(page, start, stop)


def test_units_and_first_merge_on_the_shared_pages(shared_dir: Path) -> None:
    for path in sorted((shared_dir / "pages").glob("*.html")):
        page = clean.clean_page(path.read_bytes())
        assert_same_units(page)
        assert_same_holders(page)


@settings(max_examples=100, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.lists(html_tree(), min_size=1, max_size=4), keep_wrappers=st.booleans())
def test_units_and_first_merge_on_random_pages(body: list[str], keep_wrappers: bool) -> None:
    html = "<html><body><p>seen</p>" + "".join(body) + "</body></html>"
    page = clean.clean_page(html, keep_wrappers=keep_wrappers)
    assert_same_units(page)
    assert_same_holders(page)


def test_the_python_twins_segment_every_shared_page_alike(
    shared_dir: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The whole page, parse to fragments, with every compiled loop and without any (as on a
    machine where the module was not built)."""
    pages = sorted((shared_dir / "pages").glob("*.html"))
    datas = [path.read_bytes() for path in pages]
    compiled = [segment_html(data, SegmentSettings(max_fragments=40)) for data in datas]
    for module in (clean, merge, paths, units):
        monkeypatch.setattr(module, "speedups", None)
    for data, fast in zip(datas, compiled, strict=True):
        assert segment_html(data, SegmentSettings(max_fragments=40)) == fast
        pieces = clean.clean_page(data).pieces
        assert units._utf8_prefix(pieces) == speedups.utf8_prefix(pieces)
