"""Prompt-prefix reuse: how much of each gist prompt a prefix-caching server can skip.

llama.cpp (and llama-cpp-python's in-process ``Llama``, which keeps the KV cache of its last
prompt), vLLM and OpenAI reuse the longest token prefix a prompt shares with an earlier one.
The llama-cpp-python server in this environment (0.3.x) does not report cached tokens, so this
counts the shared prefix itself: for the gist prompts of every saved page, sent one after the
other, the tokens (SmolLM2's tokenizer, ChatML as its template renders it) that a prompt shares
with the one before it, for today's template order (fragment before the instructions,
``--baseline-rev``), for the new order, and for batched gisting.

    python bench/prefix_share.py [--baseline-rev cd9c864] [--summary bench/summaries]
"""

from __future__ import annotations

import argparse
import itertools
import subprocess
import time
import tomllib
from pathlib import Path
from typing import Any

from benchkit import (
    BUDGET,
    DEFAULT_PAGES,
    REPO,
    local_model,
    markdown_table,
    provenance,
    write_result,
    write_summary,
)
from pagetime import agent_plan

from webagent.gist.gister import ModelGister
from webagent.html.segment import segment_html
from webagent.model.base import Message
from webagent.prompts import Template

WORDS = 30


def old_gist_template(rev: str) -> Template:
    """Today's ``gist`` template, as committed at ``rev``."""
    command = ["git", "show", f"{rev}:prompts/gist.toml"]
    text = subprocess.run(command, cwd=REPO, capture_output=True, text=True, check=True).stdout
    data = tomllib.loads(text)
    return Template(
        name="gist",
        version=int(data["version"]),
        variables=tuple(data["variables"]),
        parts={role: data[role] for role in ("system", "user") if role in data},
        sha256="",
    )


def chatml_tokens(model: Any, messages: tuple[Message, ...]) -> list[int]:
    text = "".join(f"<|im_start|>{m.role}\n{m.content}<|im_end|>\n" for m in messages)
    text += "<|im_start|>assistant\n"
    llama = model.backend._model()
    return list(llama.tokenize(text.encode("utf-8"), add_bos=False, special=True))


def shared(a: list[int], b: list[int]) -> int:
    n = 0
    for x, y in zip(a, b, strict=False):
        if x != y:
            break
        n += 1
    return n


def share(prompts: list[list[int]]) -> tuple[int, int]:
    """(tokens reusable from the prompt before, tokens in all)."""
    reused = sum(shared(prev, cur) for prev, cur in itertools.pairwise(prompts))
    return reused, sum(len(p) for p in prompts)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--baseline-rev", default="cd9c864")
    parser.add_argument("--pages", type=Path, default=DEFAULT_PAGES)
    parser.add_argument("--out", type=Path, default=REPO / "bench" / "results")
    parser.add_argument("--summary", type=Path, default=REPO / "bench" / "summaries")
    args = parser.parse_args()
    started = time.perf_counter()
    model = local_model()
    old = old_gist_template(args.baseline_rev)
    plan = agent_plan(BUDGET)
    totals = {
        "today (fragment first)": [0, 0],
        "new order, per fragment": [0, 0],
        "batched": [0, 0],
    }
    for path in sorted(args.pages.glob("*.html")):
        page = segment_html(path.read_text(encoding="utf-8", errors="replace"), plan)
        frags = page.fragments
        gister = ModelGister(WORDS, 64, batch=32, budget_tokens=BUDGET)
        single = ModelGister(WORDS, 64, batch=1)
        variants = {
            "today (fragment first)": [
                old.render(fragment=f.html, path=f.path or "(page root)", word_budget=WORDS)
                for f in frags
            ],
            "new order, per fragment": [r.messages for r in single.requests(frags, model)[1]],
            "batched": [r.messages for r in gister.requests(frags, model)[1]],
        }
        for label, prompts in variants.items():
            reused, total = share([chatml_tokens(model, p) for p in prompts])
            totals[label][0] += reused
            totals[label][1] += total
        print(path.name, flush=True)
    rows = [
        [label, total, reused, f"{reused / total:.1%}", total - reused]
        for label, (reused, total) in totals.items()
    ]
    text = (
        "## Gist prompts: prefix shared with the prompt before (28 saved pages, budget "
        f"{BUDGET}, SmolLM2 tokenizer, ChatML)\n\n"
        + markdown_table(
            [
                "gist prompts",
                "prompt tokens",
                "reusable prefix tokens",
                "share",
                "tokens left to compute",
            ],
            rows,
        )
        + "\n\nThe llama-cpp-python server here reports no cached-token count; these are the "
        "tokens a prefix cache holding the previous prompt can skip (llama-cpp-python's "
        "in-process model keeps exactly that cache)."
    )
    prov = provenance({"baseline_rev": args.baseline_rev, "budget": BUDGET}, {})
    payload = {"provenance": prov, "wall_s": time.perf_counter() - started, "rows": rows}
    write_result(args.out, "prefix_share", payload, text)
    write_summary("prefix_share", payload, text, args.summary)


if __name__ == "__main__":
    main()
