"""The tables of bench/context_cost.py: per-agent prompt sizes, and calls by gist cache."""

from __future__ import annotations

from benchkit import BUDGET, markdown_table, mean, median
from scripted_model import POLICY


def summary_tables(
    rows: list[dict], n_steps: int, agents: list[str], conditions: tuple[str, ...]
) -> tuple[str, list[dict], list[dict]]:
    base = [r for r in rows if r["condition"] in ("no cache", "n/a")]
    raw_trunc = mean([r["act_prompt_tokens"] for r in base if r["agent"].startswith("raw-html")])
    untr = [r["raw_untruncated_prompt_tokens"] for r in base if r["agent"].startswith("raw-html")]
    agent_rows = [
        {
            "agent": "raw-html (untruncated)",
            "act_median": median(untr),
            "act_mean": mean(untr),
            "act_max": max(untr),
            "x_smaller": 1.0,
            "vs_raw_trunc": mean(untr) / raw_trunc,
            "input_per_step": mean(untr),
            "max_call": max(untr),
            "calls_per_step": 1.0,
            "gold_shown": mean(
                [
                    float(r["gold_shown_untruncated"])
                    for r in base
                    if r["agent"].startswith("raw-html")
                ]
            ),
            "over_budget": mean([float(t > BUDGET) for t in untr]),
        }
    ]
    for label in agents:
        rs = [r for r in base if r["agent"] == label]
        act = [r["act_prompt_tokens"] for r in rs]
        agent_rows.append(
            {
                "agent": label,
                "act_median": median(act),
                "act_mean": mean(act),
                "act_max": max(act),
                "x_smaller": median(
                    [r["raw_untruncated_prompt_tokens"] / r["act_prompt_tokens"] for r in rs]
                ),
                "vs_raw_trunc": mean(act) / raw_trunc,
                "input_per_step": mean([r["input_tokens"] for r in rs]),
                "max_call": max(r["max_call_tokens"] for r in rs),
                "calls_per_step": mean([r["calls"] for r in rs]),
                "gold_shown": mean([float(r["gold_shown"]) for r in rs]),
                "over_budget": mean([float(r["max_call_tokens"] > BUDGET) for r in rs]),
            }
        )
    cache_rows = []
    for label in agents:
        for condition in ("n/a", *conditions):
            rs = [r for r in rows if r["agent"] == label and r["condition"] == condition]
            if not rs:
                continue
            # first vs later steps of the same multi-step tasks (same page, same task)
            first = [r for r in rs if r["step"] == 0 and r["task_steps"] > 1]
            later = [r for r in rs if r["step"] > 0]
            gist_calls = sum(r["calls_by_phase"].get("gist", 0) for r in rs)
            hits = sum(r["gist_cache_hits"] for r in rs)
            cache_rows.append(
                {
                    "agent": label,
                    "cache": condition,
                    "calls_first": mean([r["calls"] for r in first]),
                    "calls_later": mean([r["calls"] for r in later]),
                    "input_first": mean([r["input_tokens"] for r in first]),
                    "input_later": mean([r["input_tokens"] for r in later]),
                    "gist_hit_rate": hits / (hits + gist_calls)
                    if hits + gist_calls
                    else float("nan"),
                    "lookup_rounds": mean([r["lookup_rounds"] for r in rs]),
                    "n_first": len(first),
                    "n_later": len(later),
                }
            )
    obs = mean([r["observation_tokens"] for r in base if r["agent"].startswith("raw-html")])
    t1 = markdown_table(
        [
            "agent",
            "act prompt tok median",
            "mean",
            "max",
            "× smaller than raw (median)",
            "act tok vs raw-html trunc",
            "input tok/step (all calls, no cache)",
            "largest call",
            "LLM calls/step (no cache)",
            "gold shown in act prompt",
            "steps with a call > 8192",
        ],
        [
            [
                r["agent"],
                r["act_median"],
                r["act_mean"],
                r["act_max"],
                r["x_smaller"],
                r["vs_raw_trunc"],
                r["input_per_step"],
                r["max_call"],
                r["calls_per_step"],
                f"{r['gold_shown']:.0%}",
                f"{r['over_budget']:.0%}",
            ]
            for r in agent_rows
        ],
    )
    t2 = markdown_table(
        [
            "agent",
            "gist cache",
            "calls/step first",
            "calls/step later",
            "input tok first",
            "input tok later",
            "gist hit rate",
            "look-up rounds/step",
            "n first / later",
        ],
        [
            [
                r["agent"],
                r["cache"],
                r["calls_first"],
                r["calls_later"],
                r["input_first"],
                r["input_later"],
                f"{r['gist_hit_rate']:.0%}" if r["gist_hit_rate"] == r["gist_hit_rate"] else "–",
                r["lookup_rounds"],
                f"{r['n_first']} / {r['n_later']}",
            ]
            for r in cache_rows
        ],
    )
    text = (
        f"## Context cost per step ({n_steps} steps, budget {BUDGET}, SmolLM2 tokenizer)\n\n"
        f"{t1}\n\n## LLM calls and input tokens: gist cache, first vs later steps of the "
        f"multi-step tasks (same page)\n\n{t2}\n\n"
        "Scripted answering policy (prompt sizes do not depend on answers; reopened fragments "
        "and ReadAgent-S rounds do):\n"
        + "\n".join(f"- {k}: {v}" for k, v in POLICY.items())
        + f"\n\nObservation HTML as given (Mind2Web cleaned_html): mean {obs:,.0f} tokens; "
        f"our compact cleaned page in the untruncated raw prompt: mean {mean(untr):,.0f}."
        "\n\n'gold shown' is what a perfect act model could reach with this prompt; it is "
        "not the embedded model's accuracy. gist-only's shown ids come from the ids the "
        "extractive stand-in gists name."
    )
    return text, agent_rows, cache_rows
