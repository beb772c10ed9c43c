"""How does the local model fare beside busy processes? llama.cpp's OpenMP spin count.

llama.cpp's CPU threads meet at a barrier after every operation; libgomp lets a waiting thread
spin ``GOMP_SPINCOUNT`` times (300,000 by default) before it sleeps. When another process uses
a core, the spinning threads compete with it and a descheduled thread holds the others back.
``webagent.model.llama_local`` therefore sets a low spin count (``OPENMP_SPIN_COUNT``) unless the
environment sets one. This bench runs the same prompts in fresh processes, with libgomp's
default and with ours, on an idle machine and beside busy processes (pure-Python loops, as
many as ``--busy`` lists), ``--repeat`` times each, the two settings taking turns, and prints
the median and the slowest wall time against libgomp's default on the idle machine. How much
a busy process slows a spinning run varies a lot from one run to the next (the scheduler
decides), so the slowest run is part of the answer.

    python bench/figures/cpu_contention.py [--busy 0,1,2] [--repeat 3]
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from statistics import median

from bench.kit import REPO, figure_parser, markdown_table, publish
from webagent.model.llama_local import OPENMP_SPIN_COUNT

#: libgomp's own default spin count, spelled out so that the baseline does not depend on the
#: environment this bench runs in
LIBGOMP_DEFAULT = "300000"
PROMPTS = 2
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
        done = subprocess.run([sys.executable, __file__, "--probe"], env=env, capture_output=True,
                              text=True, check=True, timeout=1800)  # fmt: skip
    finally:
        for loop in loops:
            loop.kill()
            loop.wait()
    return float(done.stdout.strip().splitlines()[-1])


def main() -> None:
    parser = figure_parser(__doc__)
    parser.add_argument("--busy", default="0,1,2", help="busy processes beside the model, a list")
    parser.add_argument("--repeat", type=int, default=3, help="runs of each cell")
    parser.add_argument("--probe", action="store_true", help="(one run) time the prompts")
    args = parser.parse_args()
    if args.probe:
        probe()
        return
    started = time.perf_counter()
    spins = {"libgomp default": LIBGOMP_DEFAULT, "webagent default": OPENMP_SPIN_COUNT}
    walls: dict[tuple[int, str], list[float]] = {}  # (busy processes, label): wall s per run
    for busy in [int(b) for b in args.busy.split(",")]:
        for run in range(args.repeat):
            for label, spin in spins.items():
                wall = timed(spin, busy)
                walls.setdefault((busy, label), []).append(wall)
                print(f"busy {busy}, run {run + 1}, {label} ({spin}): {wall:.1f} s", flush=True)
    base = median(walls[0, "libgomp default"]) if (0, "libgomp default") in walls else 1.0
    rows = [
        [busy, f"{label} ({spins[label]})", median(w), max(w), median(w) / base, max(w) / base]
        for (busy, label), w in walls.items()
    ]
    cells = [
        {"busy": busy, "spin": label, "spin_count": spins[label], "wall_s": w}
        for (busy, label), w in walls.items()
    ]
    cores = os.cpu_count()
    text = (
        f"## Embedded model beside busy processes ({cores} cores, {PROMPTS} prompts of about "
        f"1,500 tokens, {ANSWER_TOKENS} tokens out, {args.repeat} runs a cell)\n\n"
        + markdown_table(
            "busy processes | GOMP_SPINCOUNT | wall s, median | slowest"
            " | median ÷ idle libgomp default | slowest ÷ idle",
            rows,
        )
        + "\n\nEach run is one fresh process (model load not timed). With b of the n cores"
        " kept busy, the model's threads get the n - b left: about n / (n - b) times the idle"
        " time at best (2x for one busy process on two cores)."
    )
    settings = {"prompts": PROMPTS, "answer_tokens": ANSWER_TOKENS, "spin_counts": spins,
                "repeat": args.repeat}  # fmt: skip
    publish("cpu_contention", args, settings=settings, data={}, started=started, text=text,
            cells=cells)  # fmt: skip


if __name__ == "__main__":
    main()
