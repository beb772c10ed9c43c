# cython: language_level=3, boundscheck=False
"""Page processing's hot loops, compiled; each has a Python twin that gives the same result
(used where this module was not built), and tests/html/test_speedups.py compares them.

``walk``: the cleaning walk of :func:`webagent.html.clean._walk_python`, the same decisions in
the same order, reading libxml2's nodes through lxml's public C API instead of making a Python
proxy object for every element (two thirds of the Python walk's time).

Every string it makes is made as lxml makes it (``namespacedName``, ``textOf``, ``tailOf``,
``attributeValue``), and every rule is the Python one (``env``: rules.py's functions and sets),
so the page it fills is the Python walk's, piece for piece; tests/html/test_speedups.py compares
the two on every shared page. A tree holding comments, processing instructions or
entity references is left to the Python walk (``walk`` answers -1 before reading anything).
"""

from cpython cimport array
from cpython.ref cimport PyObject
from cpython.mem cimport PyMem_Free, PyMem_Malloc
from cpython.unicode cimport (
    Py_UNICODE_ISSPACE,
    PyUnicode_DATA,
    PyUnicode_GET_LENGTH,
    PyUnicode_KIND,
    PyUnicode_READ,
)
from libc.string cimport strcmp

from lxml.includes cimport tree
from lxml.includes.etreepublic cimport _Element
cimport lxml.includes.etreepublic as cetree

import array as _array

from webagent.tokens import ESTIMATE_TOKENS_PER_BYTE

cetree.import_lxml__etree()

cdef array.array _PREFIX = _array.array("q")

cdef extern from *:
    const char* SPEEDUPS_SOURCE_DIGEST  # set by hatch_build.py

cdef extern from "Python.h":
    bint PyUnicode_IS_ASCII(object text)
    object PyUnicode_FromKindAndData(int kind, const void* buffer, Py_ssize_t size)
    int PyUnicode_4BYTE_KIND

#: the digest of the .pyx this module was compiled from (hatch_build.source_digest)
SOURCE_DIGEST = SPEEDUPS_SOURCE_DIGEST.decode("ascii")

cdef enum:
    _CACHE = 1024  # names by pointer (libxml2 interns them per document): a power of two


cdef struct _Name:
    const tree.xmlChar* c_name
    PyObject* name


cdef class _Names:
    """Python strings of node and attribute names, made once per distinct name pointer."""

    cdef _Name slots[_CACHE]
    cdef list keep  # owns the strings the slots point to

    def __cinit__(self):
        self.keep = []

    cdef inline str of(self, tree.xmlNode* c_node):
        cdef const tree.xmlChar* c_name = c_node.name
        cdef size_t slot
        cdef str name
        if c_node.ns is not NULL:
            return cetree.namespacedName(c_node)
        slot = (<size_t>c_name >> 4) & (_CACHE - 1)
        if self.slots[slot].c_name == c_name:
            return <str>self.slots[slot].name
        name = cetree.namespacedName(c_node)
        if self.slots[slot].c_name is NULL:
            self.keep.append(name)
            self.slots[slot].c_name = c_name
            self.slots[slot].name = <PyObject*>name
        return name


cdef inline tree.xmlNode* _element_at(tree.xmlNode* c_node) noexcept nogil:
    """The first element node from ``c_node`` on, among its siblings."""
    while c_node is not NULL and c_node.type != tree.XML_ELEMENT_NODE:
        c_node = c_node.next
    return c_node


cdef inline tree.xmlNode* _first_child(tree.xmlNode* c_node) noexcept nogil:
    return _element_at(c_node.children)


cdef inline bint _blank(tree.xmlNode* c_node) noexcept nogil:
    """The text lxml reads from ``c_node`` on (``textOf(parent)``: from its first child,
    ``tailOf(node)``: from its next sibling) is None, empty or ASCII whitespace: the walk
    skips it, so it needs no Python string (most tails are a line break and an indent)."""
    cdef const tree.xmlChar* c
    while c_node is not NULL:
        if c_node.type == tree.XML_TEXT_NODE or c_node.type == tree.XML_CDATA_SECTION_NODE:
            c = c_node.content
            if c is not NULL:
                while c[0] != 0:
                    if not (c[0] == 32 or 9 <= c[0] <= 13 or 28 <= c[0] <= 31):
                        return False  # str.isspace() over ASCII: these, and no others
                    c += 1
        elif c_node.type != tree.XML_XINCLUDE_START and c_node.type != tree.XML_XINCLUDE_END:
            return True  # where lxml's text collection stops (_textNodeOrSkip)
        c_node = c_node.next
    return True


cdef inline tree.xmlNode* _next_inside(
    tree.xmlNode* c_node, tree.xmlNode* c_top
) noexcept nogil:
    """The element after ``c_node`` in document order that is still inside ``c_top``, or
    NULL (``c_node`` is inside ``c_top``)."""
    cdef tree.xmlNode* c_next = _first_child(c_node)
    while c_next is NULL:
        c_next = _element_at(c_node.next)
        if c_next is NULL:
            c_node = c_node.parent
            if c_node is c_top:
                return NULL
    return c_next


cdef Py_ssize_t _descendants(tree.xmlNode* c_top) noexcept nogil:
    """How many elements lie inside ``c_top`` (XPath's ``count(descendant::*)``)."""
    cdef Py_ssize_t count = 0
    cdef tree.xmlNode* c_node = _first_child(c_top)
    while c_node is not NULL:
        count += 1
        c_node = _next_inside(c_node, c_top)
    return count


cdef bint _plain(tree.xmlNode* c_top) noexcept nogil:
    """No comment, processing instruction or entity reference anywhere inside ``c_top``:
    ``root.iter()`` then reads exactly its elements, which is what the walk below reads."""
    cdef tree.xmlNode* c_node = c_top.children
    cdef tree.xmlNode* c_next
    while c_node is not NULL:
        if (
            c_node.type == tree.XML_COMMENT_NODE
            or c_node.type == tree.XML_PI_NODE
            or c_node.type == tree.XML_ENTITY_REF_NODE
        ):
            return False
        c_next = c_node.children if c_node.type == tree.XML_ELEMENT_NODE else NULL
        if c_next is NULL:
            while True:
                c_next = c_node.next
                if c_next is not NULL:
                    break
                c_node = c_node.parent
                if c_node is c_top or c_node is NULL:
                    return True
        c_node = c_next
    return True


cdef _VISIBILITY = str.maketrans("VISBLTY", "visblty")


cdef bint _may_show(tree.xmlNode* c_top) except -1:
    """A descendant whose inline style names visibility, ASCII case-insensitively (the
    XPath ``_may_show`` of clean.py)."""
    cdef tree.xmlNode* c_node = _first_child(c_top)
    cdef tree.xmlAttr* c_attr
    while c_node is not NULL:
        c_attr = c_node.properties
        while c_attr is not NULL:
            if (
                c_attr.type == tree.XML_ATTRIBUTE_NODE
                and c_attr.ns is NULL
                and strcmp(<const char*>c_attr.name, b"style") == 0
                and "visibility" in cetree.attributeValue(c_node, c_attr).translate(_VISIBILITY)
            ):
                return True
            c_attr = c_attr.next
        c_node = _next_inside(c_node, c_top)
    return False


cdef class _Walk:
    """One walk's state: the page's lists, the rules and the stack of open elements."""

    cdef list pieces, owner, tags, ids, kept, interactive, attrs_of
    cdef list depth, parent, end, p_open, p_end, height
    cdef list stack  # open element indices, under the sentinel -1
    cdef list shut  # whether each of them is under visibility: hidden (the sentinel: no)
    cdef dict closing
    cdef object open_tag, shown_keys, void, text_piece, after_open

    cdef void close(self, tree.xmlNode* c_node) except *:
        """The element on top of the stack ends: its tags, its end, its tail."""
        cdef Py_ssize_t index = self.stack.pop()
        self.shut.pop()
        cdef Py_ssize_t up
        cdef bint separate
        cdef str tag, close, tail
        cdef dict attrs
        if self.kept[index]:
            tag = self.tags[index]
            attrs = self.attrs_of[index]
            if attrs and not self.shown_keys.isdisjoint(attrs):
                self.pieces[self.p_open[index]] = self.open_tag(tag, self.ids[index], attrs)
            else:
                self.pieces[self.p_open[index]] = f"<{tag} id={self.ids[index]}>"
            if tag not in self.void:
                close = self.closing.get(tag)
                if close is None:
                    close = self.closing[tag] = f"</{tag}>"
                self.pieces.append(close)
                self.owner.append(index)
            separate = False
        else:
            separate = True
        self.end[index] = len(self.tags)
        self.p_end[index] = len(self.pieces)
        up = self.stack[-1]
        if up >= 0 and self.height[index] > self.height[up]:
            self.height[up] = self.height[index]
        if up < 0 or self.shut[-1] or _blank(c_node.next):
            return
        tail = cetree.tailOf(c_node)
        if not tail.isspace():
            lead = (not self.after_open(self.pieces, self.p_open[up])) if separate else None
            self.pieces.append(self.text_piece(tail, lead))
            self.owner.append(up)
            self.kept[up] = True


def walk(_Element root, bint keep_wrappers, page, tuple env, list numbered):
    """Fill ``page`` (an empty CleanPage) as the Python walk would; the ordinal of the last
    element read, or -1 (nothing done) for a tree the Python walk must read."""
    cdef tree.xmlNode* c_root = root._c_node
    if c_root.type != tree.XML_ELEMENT_NODE or not _plain(c_root):
        return -1
    (
        watched, drop, text_tags, opaque, stop, special, void, id_attr, active_tags,
        open_tag, shown_keys, is_hidden, hiding, activating, keeping, visibility,
        is_interactive, has_keeping_attr, text_piece, after_open, mind2web_text,
    ) = env
    cdef _Walk w = _Walk()
    w.pieces, w.owner, w.tags, w.ids = page.pieces, page.owner, page.tags, page.ids
    w.kept, w.interactive, w.attrs_of = page.kept, page.interactive, page.attrs
    w.depth, w.parent, w.end = page.depth, page.parent, page.end
    w.p_open, w.p_end, w.height = page.p_open, page.p_end, page.height
    w.stack, w.shut, w.closing = [-1], [False], {}
    w.open_tag, w.shown_keys, w.void = open_tag, shown_keys, void
    w.text_piece, w.after_open = text_piece, after_open
    cdef list pieces = w.pieces, owner = w.owner, tags = w.tags, ids = w.ids, kept = w.kept
    cdef list stack = w.stack, shut = w.shut, p_open = w.p_open
    cdef _Names names = _Names()
    cdef dict no_attrs = {}
    cdef dict attrs
    cdef Py_ssize_t known = len(numbered), ordinal = 0, index, up, level
    cdef tree.xmlNode* c_node = c_root
    cdef tree.xmlNode* c_child
    cdef tree.xmlAttr* c_attr
    cdef bint visible, active, opened
    cdef str tag, key, text, clean, tail
    while True:
        ordinal += 1
        tag = names.of(c_node)
        attrs = no_attrs
        c_attr = c_node.properties
        while c_attr is not NULL:
            if c_attr.type == tree.XML_ATTRIBUTE_NODE and c_attr.ns is NULL:
                key = names.of(<tree.xmlNode*>c_attr)
                if key in watched:
                    if attrs is no_attrs:
                        attrs = {}
                    if key not in attrs:  # a repeated key reads its first value, as get()
                        attrs[key] = cetree.attributeValue(c_node, c_attr)
            c_attr = c_attr.next
        up = stack[-1]
        visible = not shut[-1]
        if attrs and "style" in attrs:
            own = visibility(attrs)
            if own is not None:
                visible = own
        c_child = _first_child(c_node)
        opened = False
        if (
            (tag in special and tag in stop and (tag in drop or up >= 0))
            or (attrs and not hiding.isdisjoint(attrs) and is_hidden(tag, attrs))
            or (not visible and not _may_show(c_node))
        ):
            if tag in text_tags and up >= 0 and visible and not (attrs and is_hidden(tag, attrs)):
                mind2web_text(page, up, cetree.textOf(c_node))
            if c_child is not NULL:
                ordinal += _descendants(c_node)
            # it ends here, leaving no tag behind
            if up >= 0 and not shut[-1] and not _blank(c_node.next):
                tail = cetree.tailOf(c_node)
                if not tail.isspace():
                    pieces.append(text_piece(tail, not after_open(pieces, p_open[up])))
                    owner.append(up)
                    kept[up] = True
        else:
            index = len(tags)
            tags.append(tag)
            if not attrs:
                ids.append(numbered[ordinal] if ordinal < known else f"n{ordinal}")
                active = visible and tag in active_tags
                kept.append(active or (visible and keep_wrappers))
            else:
                ids.append(
                    attrs.get(id_attr)
                    or (numbered[ordinal] if ordinal < known else f"n{ordinal}")
                )
                if not visible:
                    active = False
                    kept.append(False)
                else:
                    active = tag in active_tags or (
                        not activating.isdisjoint(attrs) and is_interactive(tag, attrs)
                    )
                    kept.append(
                        active
                        or keep_wrappers
                        or (not keeping.isdisjoint(attrs) and has_keeping_attr(attrs))
                    )
            w.interactive.append(active)
            w.attrs_of.append(attrs)
            level = len(stack) - 1
            w.depth.append(level)
            w.height.append(level)
            w.parent.append(up)
            w.end.append(0)
            p_open.append(len(pieces))
            w.p_end.append(0)
            pieces.append("")
            owner.append(index)
            stack.append(index)
            shut.append(not visible)
            if tag in special and tag in opaque:
                if c_child is not NULL:
                    ordinal += _descendants(c_node)
            else:
                text = None if not visible or _blank(c_node.children) else cetree.textOf(c_node)
                if text is not None and not text.isspace():
                    clean = " ".join(text.split())
                    if "<" in clean:
                        clean = clean.replace("<", "&lt;")
                    pieces.append(clean + " " if text[-1].isspace() else clean)
                    owner.append(index)
                    kept[index] = True
                opened = c_child is not NULL
            if opened:
                c_node = c_child
                continue
            w.close(c_node)
        # on to the next element in document order, ending the elements left behind
        while True:
            if c_node is c_root:
                return ordinal
            c_child = _element_at(c_node.next)
            if c_child is not NULL:
                c_node = c_child
                break
            c_node = c_node.parent
            w.close(c_node)


def utf8_prefix(list pieces):
    """``units._utf8_prefix``: the UTF-8 bytes before each piece and after the last (an
    ``array("q")`` one longer than ``pieces``), counted from the code points instead of
    encoding each piece, into one buffer instead of a list of ints."""
    cdef Py_ssize_t n = len(pieces), i, j, length, total = 0
    cdef array.array prefix = array.clone(_PREFIX, n + 1, False)
    cdef long long* out = prefix.data.as_longlongs
    cdef str piece
    cdef int kind
    cdef void* data
    cdef Py_UCS4 c
    out[0] = 0
    for i in range(n):
        piece = pieces[i]
        length = PyUnicode_GET_LENGTH(piece)
        total += length
        if not PyUnicode_IS_ASCII(piece):
            kind, data = PyUnicode_KIND(piece), PyUnicode_DATA(piece)
            for j in range(length):
                c = PyUnicode_READ(kind, data, j)
                if c >= 0x80:
                    total += 1 if c < 0x800 else (2 if c < 0x10000 else 3)
        out[i + 1] = total
    return prefix


def visible_text(list pieces, Py_ssize_t start, Py_ssize_t stop):
    """``CleanPage.text(start, stop)``: pieces ``[start, stop)`` with every tag read as a
    space, whitespace collapsed (what ``str.split`` splits on), ``&lt;`` undone; written
    into one buffer instead of joined, split and joined again."""
    cdef Py_ssize_t size = 0, n = 0, i, j, length
    cdef str piece
    for i in range(start, stop):
        size += PyUnicode_GET_LENGTH(pieces[i])
    cdef Py_UCS4* out = <Py_UCS4*>PyMem_Malloc((size + 1) * sizeof(Py_UCS4))
    if out is NULL:
        raise MemoryError()
    cdef bint space = False  # a separator is due before the next word
    cdef int kind
    cdef void* data
    cdef Py_UCS4 c
    try:
        for i in range(start, stop):
            piece = pieces[i]
            length = PyUnicode_GET_LENGTH(piece)
            if length == 0:
                continue
            kind, data = PyUnicode_KIND(piece), PyUnicode_DATA(piece)
            if PyUnicode_READ(kind, data, 0) == 60:  # "<": a tag, read as a space
                space = n > 0
                continue
            for j in range(length):
                c = PyUnicode_READ(kind, data, j)
                if Py_UNICODE_ISSPACE(c):
                    space = n > 0
                else:
                    if space:
                        out[n] = 32
                        n += 1
                        space = False
                    out[n] = c
                    n += 1
        text = PyUnicode_FromKindAndData(PyUnicode_4BYTE_KIND, out, n)
    finally:
        PyMem_Free(out)
    return text.replace("&lt;", "<") if "&lt;" in text else text


def split_units(page, Py_ssize_t node, Py_ssize_t split_depth, sizer, unit):
    """``units._split_units_python``: the units covering ``node``'s subtree cut at
    ``split_depth`` (``unit``: the Unit class), sized by ``sizer`` as ``Sizer.tokens`` sizes
    them (from its byte prefix sums, or ``Sizer.tokens`` itself where it counts)."""
    cdef list depth = page.depth, height = page.height, end = page.end
    cdef list p_open = page.p_open, p_end = page.p_end, kept_before = page.kept_before
    cdef list parent = page.parent
    cdef _Sizes sizes = _Sizes(sizer)
    cdef list units = []
    cdef Py_ssize_t cursor = p_open[node], index = node, stop = end[node], start, after
    while index < stop:
        if <Py_ssize_t>depth[index] >= split_depth or <Py_ssize_t>height[index] < split_depth:
            start = p_open[index]
            if start > cursor:
                _gap(page, cursor, start, sizes, unit, units)
            after, cursor = end[index], p_end[index]
            # a core unit; text inside a subtree always belongs to a kept element of it
            units.append(
                unit(
                    start,
                    cursor,
                    sizes.of(start, cursor),
                    index,
                    False,
                    <Py_ssize_t>kept_before[after] > <Py_ssize_t>kept_before[index],
                    parent[index],
                )
            )
            index = after
        else:
            index += 1
    if <Py_ssize_t>p_end[node] > cursor:
        _gap(page, cursor, p_end[node], sizes, unit, units)
    return units


cdef class _Sizes:
    """``Sizer.tokens`` without a Python call per unit where it estimates."""

    cdef array.array prefix  # None where the sizer counts
    cdef long long* bytes_before
    cdef object tokens
    cdef Py_ssize_t per, bytes_

    def __cinit__(self, sizer):
        self.tokens = sizer.tokens
        self.prefix = sizer.prefix if sizer.count_tokens is None else None
        if self.prefix is not None:
            self.bytes_before = self.prefix.data.as_longlongs
        self.per, self.bytes_ = ESTIMATE_TOKENS_PER_BYTE

    cdef object of(self, Py_ssize_t start, Py_ssize_t stop):
        cdef Py_ssize_t size
        if self.prefix is None:
            return self.tokens(start, stop)
        size = self.bytes_before[stop] - self.bytes_before[start]
        return -(-size * self.per // self.bytes_)


cdef int _gap(page, Py_ssize_t start, Py_ssize_t stop, _Sizes sizes, unit, list units) except -1:
    """``units._gap``, appending its units to ``units``."""
    cdef list pieces = page.pieces, owner = page.owner, p_open = page.p_open
    cdef Py_ssize_t lo = start, piece, first = len(units)
    cdef int forward = -1  # -1 until the unit has a non-empty piece
    cdef bint content = False, after_close = False, opens, closes
    cdef str text
    for piece in range(start, stop):
        text = pieces[piece]
        if PyUnicode_GET_LENGTH(text) == 0:
            continue
        opens = <Py_ssize_t>p_open[<Py_ssize_t>owner[piece]] == piece
        closes = not opens and _closing(text)
        if piece != start:
            if opens or (after_close and not closes):
                units.append(unit(lo, piece, sizes.of(lo, piece), -1, forward == 1, content))
                lo, forward, content = piece, -1, False
            after_close = closes
        if forward == -1:
            forward = opens
        if not closes:
            content = True
    if forward == -1 and len(units) == first:
        return 0  # only unwrapped elements: nothing to place
    units.append(unit(lo, stop, sizes.of(lo, stop), -1, forward == 1, content))
    return 0


cdef inline bint _closing(str text):
    """``text.startswith("</")``."""
    if PyUnicode_GET_LENGTH(text) < 2:
        return False
    cdef int kind = PyUnicode_KIND(text)
    cdef void* data = PyUnicode_DATA(text)
    return PyUnicode_READ(kind, data, 0) == 60 and PyUnicode_READ(kind, data, 1) == 47


def merge_siblings(
    list units, Py_ssize_t min_tokens, Py_ssize_t max_tokens, group, Py_ssize_t any_parent
):
    """``merge._merge_siblings``: each unit joined to the group before it where the rules
    allow (``group``: the Group class; ``any_parent``: units.ANY_PARENT). The open group is kept in C variables and made once
    it is closed, instead of being updated unit by unit."""
    cdef list groups = []
    cdef Py_ssize_t start = 0, stop = 0, tokens = 0, parent = 0
    cdef Py_ssize_t u_tokens, u_parent, u_node
    cdef bint forward = False, content = False, u_forward, u_content, attach, siblings, tiny
    cdef bint open_group = False
    for unit in units:
        u_tokens, u_parent, u_node = unit.tokens, unit.parent, unit.node
        u_forward, u_content = unit.forward, unit.content
        if open_group:
            # an ancestor's open tag goes with what follows; its close tag with what precedes
            attach = forward or (u_node < 0 and not u_forward)
            siblings = parent == any_parent or u_parent == any_parent or parent == u_parent
            tiny = tokens < min_tokens or u_tokens < min_tokens
            if (
                not u_content
                or not content
                or ((attach or (tiny and siblings)) and tokens + u_tokens <= max_tokens)
            ):
                # Group.absorb
                stop = unit.stop
                tokens += u_tokens
                forward = u_forward
                content = content or u_content
                if parent == any_parent:
                    parent = u_parent
                continue
            groups.append(group(start, stop, tokens, forward, content, parent))
        start, stop, tokens = unit.start, unit.stop, u_tokens
        forward, content, parent = u_forward, u_content, u_parent
        open_group = True
    if open_group:
        groups.append(group(start, stop, tokens, forward, content, parent))
    return groups


def holder(page, Py_ssize_t start, Py_ssize_t stop):
    """``paths._holder_python``: the element a fragment's path ends at, without a Python step
    per ancestor climbed."""
    cdef list pieces = page.pieces, owner = page.owner, depth = page.depth, parent = page.parent
    cdef Py_ssize_t first = start, last = stop - 1, a, b
    if not 0 <= start < stop <= len(pieces):
        raise ValueError(f"no pieces [{start}, {stop}) of {len(pieces)}")
    # the first and last pieces that are not unwrapped placeholders (most often the ends)
    while first < stop and PyUnicode_GET_LENGTH(pieces[first]) == 0:
        first += 1
    if first == stop:
        first = start  # all placeholders: last stays stop - 1
    else:
        while PyUnicode_GET_LENGTH(pieces[last]) == 0:  # stops at first at the latest
            last -= 1
    a, b = owner[first], owner[last]
    while <Py_ssize_t>depth[a] > <Py_ssize_t>depth[b]:
        a = parent[a]
    while <Py_ssize_t>depth[b] > <Py_ssize_t>depth[a]:
        b = parent[b]
    while a != b:
        a, b = parent[a], parent[b]
    if page.kept[a] and <Py_ssize_t>page.p_open[a] >= start and <Py_ssize_t>page.p_end[a] <= stop:
        a = parent[a]
    return a
