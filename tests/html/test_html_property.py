"""Random nested HTML, random settings: the invariants hold."""

from __future__ import annotations

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from segment_checks import check_segmentation

from webagent.errors import PageError
from webagent.html.clean import clean_page
from webagent.html.fragment import SegmentSettings
from webagent.html.parse import parse_html
from webagent.html.segment import segment_page

TAGS = ["div", "span", "p", "section", "ul", "li", "a", "button", "b", "form", "label", "td"]
VOID = ["input", "img", "br"]
ATTRS = [
    "", ' hidden', ' aria-hidden="true"', ' style="display:none"', ' aria-label="named"',
    ' role="button"', ' onclick="f()"', ' class="x"', ' id="main"', ' title="t"',
]  # fmt: skip
WORDS = st.sampled_from(["alpha", "beta <gamma>", "δέλτα", "  ", "", "epsilon & zeta", "日本"])


@st.composite
def html_tree(draw: st.DrawFn, depth: int = 0) -> str:
    if depth > 6 or draw(st.integers(0, 9)) < 2 + depth:
        tag = draw(st.sampled_from(VOID))
        return f"<{tag}{draw(st.sampled_from(ATTRS))}>" + draw(WORDS)
    tag = draw(st.sampled_from(TAGS))
    children = draw(st.lists(html_tree(depth + 1), max_size=3))
    inner = draw(WORDS) + "".join(children)
    if draw(st.booleans()):
        inner += "<script>var s = '<p>no</p>';</script><!-- c -->"
    return f"<{tag}{draw(st.sampled_from(ATTRS))}>{inner}</{tag}>" + draw(WORDS)


segment_settings = st.builds(
    SegmentSettings,
    depth=st.integers(1, 8),
    max_fragment_tokens=st.integers(16, 300),
    min_fragment_tokens=st.integers(0, 16),
    max_fragments=st.none() | st.integers(1, 12),
    overflow=st.sampled_from(["keep_fragment_count", "keep_fragment_tokens"]),
    keep_wrappers=st.booleans(),
)


@settings(max_examples=120, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(body=st.lists(html_tree(), min_size=1, max_size=5), config=segment_settings)
def test_random_pages_keep_the_invariants(body: list[str], config: SegmentSettings) -> None:
    html = "<html><body>" + "".join(body) + "</body></html>"
    try:
        page = clean_page(html, keep_wrappers=config.keep_wrappers)
    except PageError:
        return  # nothing visible: a clear error, nothing to segment
    result = segment_page(page, config)
    check_segmentation(page, result, config, root=parse_html(html))
    assert segment_page(page, config) == result
