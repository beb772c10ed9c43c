"""The embedded model on a busy machine: llama.cpp's OpenMP spin count, side by side.

llama.cpp's CPU threads meet at a barrier after every operation; libgomp lets a waiting thread
spin ``GOMP_SPINCOUNT`` times (300,000 by default) before it sleeps. When another process uses
a core, the spinning threads compete with it and a descheduled thread holds the others back.
``webagent.model.llama_local`` therefore sets a low spin count (``OPENMP_SPIN_COUNT``) unless the
environment sets one. This bench runs the same prompts in fresh processes, with libgomp's
default and with ours, on an idle machine and beside busy processes (pure-Python loops, as
many as ``--busy`` lists), and prints each wall time against libgomp's default on the idle
machine. Each cell is one run: a noisy machine moves it by several percent.

    python bench/cpu_contention.py [--busy 0,1] [--summary bench/summaries]
"""

from __future__ import annotations

import argparse
import os
import subprocess
import sys
import time
from pathlib import Path

from benchkit import REPO, markdown_table, provenance, write_result, write_summary

from webagent.model.llama_local import OPENMP_SPIN_COUNT

#: libgomp's own default spin count, spelled out so that the baseline does not depend on the
#: environment this bench runs in
LIBGOMP_DEFAULT = "300000"
PROMPTS = 3
PROMPT_WORDS = 400
ANSWER_TOKENS = 40


def probe() -> None:
    """Run in a fresh process: ``PROMPTS`` distinct ~1,500-token prompts, no shared prefix."""
    from webagent.model.base import Message, Request
    from webagent.model.factory import build_model
    from webagent.model.settings import ModelSettings

    model = build_model(ModelSettings(backend="local"))
    model.count_tokens("load the weights before timing")
    text = " ".join(f"word{i}" for i in range(PROMPT_WORDS))
    started = time.perf_counter()
    for k in range(PROMPTS):
        request = Request(
            messages=(Message(role="user", content=f"{k}. Summarize: {text}"),),
            max_tokens=ANSWER_TOKENS,
            phase="gist",
        )
        model.generate(request)
    print(f"{time.perf_counter() - started:.3f}")


def timed(spin: str, busy: int) -> float:
    """Wall seconds of :func:`probe` under ``GOMP_SPINCOUNT=spin`` beside ``busy`` loops."""
    loops = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(busy)]
    try:
        env = {**os.environ, "GOMP_SPINCOUNT": spin, "PYTHONPATH": str(REPO)}
        done = subprocess.run(
            [sys.executable, __file__, "--probe"],
            env=env,
            capture_output=True,
            text=True,
            check=True,
            timeout=1800,
        )
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--busy", default="0,1", help="busy processes beside the model, a list")
    parser.add_argument("--out", type=Path, default=Path("/tmp/webagent-bench"))
    parser.add_argument("--summary", type=Path, default=REPO / "bench" / "summaries")
    parser.add_argument("--probe", action="store_true", help=argparse.SUPPRESS)
    args = parser.parse_args()
    if args.probe:
        probe()
        return
    started = time.perf_counter()
    spins = {"libgomp default": LIBGOMP_DEFAULT, "webagent default": OPENMP_SPIN_COUNT}
    runs: list[tuple[int, str, str, float]] = []  # busy processes, label, spin count, wall s
    for busy in [int(b) for b in args.busy.split(",")]:
        for label, spin in spins.items():
            wall = timed(spin, busy)
            runs.append((busy, label, spin, wall))
            print(f"busy {busy}, {label} ({spin}): {wall:.1f} s", flush=True)
    base = next(wall for busy, label, _, wall in runs if busy == 0 and label == "libgomp default")
    rows = [[busy, f"{label} ({spin})", wall, wall / base] for busy, label, spin, wall in runs]
    cells = [dict(zip(("busy", "spin", "spin_count", "wall_s"), run, strict=True)) for run in runs]
    cores = os.cpu_count()
    text = (
        f"## Embedded model beside busy processes ({cores} cores, {PROMPTS} prompts of about "
        f"1,500 tokens, {ANSWER_TOKENS} tokens out)\n\n"
        + markdown_table(
            ["busy processes", "GOMP_SPINCOUNT", "wall s", "÷ idle, libgomp default"], rows
        )
        + "\n\nEach cell is one fresh process (model load not timed). With b of the n cores"
        " kept busy, the model's threads get the n - b left: about n / (n - b) times the idle"
        " time at best (2x for one busy process on two cores)."
    )
    settings = {"prompts": PROMPTS, "answer_tokens": ANSWER_TOKENS, "spin_counts": spins}
    payload = {
        "provenance": provenance(settings, {}),
        "wall_s": time.perf_counter() - started,
        "cells": cells,
    }
    write_result(args.out, "cpu_contention", payload, text)
    write_summary("cpu_contention", payload, text, args.summary)


if __name__ == "__main__":
    main()
