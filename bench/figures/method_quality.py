"""The method's quality, measured with a capable model: replay the committed answers.

Every row is a real ``webagent eval`` run over the 168 steps of ``../shared/intent_tasks``
(built with ``../shared/tools/build_intent_tasks.py``) with the batch backend, answered only
from ``bench/data/method_answers/answers.jsonl`` (request cache key -> answer; how they were
made: that folder's README). No model, no network.

    python bench/figures/method_quality.py          # replay: bench/summaries/method_quality.*
    python bench/figures/method_quality.py --check  # replay; fail if an answered row scores
                                                    # otherwise than the committed summary
    python bench/figures/method_quality.py --requests DIR [--work DIR]
                                                    # the requests still to answer, a folder a row

A prompt or code change that changes a request leaves that request without an answer: its
row is marked *stale* (with how many requests wait), never scored as wrong; ``--requests``
writes them for answering (``bench/kit/answers.py``). ``--work DIR`` keeps the run folders, so
that rounds of answering resume instead of starting over.
"""

from __future__ import annotations

import hashlib
import json
import random
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any, Literal

from bench.kit import REPO, SHARED, SUMMARIES, figure_parser, intent_tasks, markdown_table
from bench.kit.answers import ANSWERED_AT, ANSWERS, MODEL, write_requests
from bench.kit.answers import waiting as waiting_requests
from mind2web_eval.cost import run_cost
from mind2web_eval.report.compare import compare_rows, load_results
from webagent.agents.settings import AgentSettings
from webagent.cli import main as webagent_main
from webagent.model.answer_file import read_answers
from webagent.model.prices import find_price
from webagent.prompts import all_template_versions

#: the window the batch backend is told; every row's own budget is below it
WINDOW = 131072
#: a row some of whose requests have no answer: a prompt changed since, or not answered yet
STALE = "stale"


@dataclass(frozen=True)
class Row:
    agent: str
    budget: int
    counter: str = "estimate"
    gister: str | None = None  # None: the agent shows no gist, or the default (model)
    #: True: the paper's flat memory, no levels (``agent.gist_floor_words=0``), the ablation
    #: of issue 20 on the pages whose gists do not all fit the look-up prompt
    flat: bool = False
    #: spend what the step needs, not the window (issue 39): 1: the act prompt shows the reopened
    #: fragments alone (``agent.act_gists="none"``), an extractive gist takes at most a model
    #: gist's 64 tokens, so they no longer fill the look-up prompt; 2: and the look-up's gists
    #: name controls by their words, not ids (``agent.gist_ids=false``)
    lean: Literal[0, 1, 2] = 0
    #: True: on a seeded third of the tasks (``THIRD_SEED``), named as such: the whole page
    #: is long to read, for a model and for the helpers answering as one
    third: bool = False

    @property
    def label(self) -> str:
        memory = ", flat memory" if self.flat else ""
        memory += ("", ", lean", ", lean, gists without ids")[self.lean]
        gister = f" ({self.gister} gists{memory})" if self.gister else ""
        budget = "whole page (128K)" if self.budget == WINDOW else f"{self.budget // 1024}K"
        third = " [a seeded third of the tasks]" if self.third else ""
        return f"{self.agent}{gister} @{budget}, {self.counter}{third}"

    @property
    def slug(self) -> str:
        gister = f"-{self.gister}" if self.gister else ""
        flat = "-flat" if self.flat else ""
        lean = ("", "-lean", "-lean-noids")[self.lean]
        third = "-third" if self.third else ""
        return f"{self.agent}{gister}{flat}{lean}-{self.budget // 1024}k-{self.counter}{third}"

    def flags(self) -> list[str]:
        flags = ["--agent", self.agent, "--context-budget", str(self.budget)]
        flags += ["--token-counter", self.counter]
        flags += ["--set", "agent.gist_floor_words=0"] if self.flat else []
        lean = ['agent.act_gists="none"', f"agent.extractive_max_tokens={LEAN_GIST_TOKENS}"]
        lean += ["agent.gist_ids=false"] if self.lean == 2 else []
        flags += [word for setting in lean for word in ("--set", setting)] if self.lean else []
        flags += ["--render"] if self.agent == "axtree" else []  # the tree of the rendered page
        return flags + (["--gister", self.gister] if self.gister else [])


#: which third of the tasks a ``third`` row reads (chosen before any of its answers)
THIRD_SEED = 39
#: a lean row's extractive gists: the model gister's cap (``AgentSettings.gist_max_tokens``)
LEAN_GIST_TOKENS: int = AgentSettings.model_fields["gist_max_tokens"].default


ROWS: tuple[Row, ...] = (
    Row("readagent-p", 8192, gister="model"),
    Row("readagent-p", 8192, gister="extractive"),
    Row("readagent-s", 8192, gister="model"),
    Row("gist-only", 8192, gister="model"),
    Row("gist-only", 8192, gister="extractive"),
    Row("retrieval", 8192),
    Row("raw-html", 8192),
    Row("raw-html-paper", 8192),
    Row("mindact", 8192),
    Row("readagent-p", 4096, gister="model"),
    Row("gist-only", 4096, gister="model"),
    Row("retrieval", 4096),
    Row("raw-html", 4096),
    Row("readagent-p", 8192, "gguf", gister="model"),
    Row("raw-html", 8192, "gguf"),
    Row("readagent-p", 8192, gister="model", flat=True),
    Row("readagent-p", 8192, gister="extractive", flat=True),
    Row("readagent-p", 4096, gister="model", flat=True),
    Row("readagent-p", 8192, gister="extractive", lean=1),
    Row("readagent-p", 8192, gister="extractive", lean=2),
    Row("raw-html", 16384),
    Row("raw-html", 32768),
    Row("raw-html", WINDOW, third=True),
    Row("axtree", 8192),
    Row("axtree", 32768),
)
#: the row every other is set against step by step: ReadAgent-P as the lean rows, with the window
REFERENCE = ROWS[1]
COUNTER_NAMES = {"estimate": "byte estimate (5 tokens / 8 bytes)", "gguf": "SmolLM2 BPE"}
#: the price sheet's entries the table prices every row at: an OpenAI model, an Anthropic one
PRICES = (find_price("gpt-4.1-mini"), find_price("claude-sonnet-4"))


def build_tasks(folder: Path) -> Path:
    """``../shared/intent_tasks`` as Mind2Web records (the shared tool builds them)."""
    out = folder / "intent_tasks.json"
    return out if out.exists() else intent_tasks(out=out)


def third_of(data: Path) -> Path:
    """A seeded third of the tasks of ``data`` (``THIRD_SEED``), in their own file."""
    out = data.with_name(f"{data.stem}.third-{THIRD_SEED}.json")
    if not out.exists():
        tasks = json.loads(data.read_text("utf-8"))
        random.Random(THIRD_SEED).shuffle(tasks)
        out.write_text(json.dumps(tasks[: -(-len(tasks) // 3)]), "utf-8")
    return out


def run_row(row: Row, data: Path, work: Path) -> int:
    """One ``webagent eval`` of ``row`` on the committed answers; its exit code."""
    out = work / row.slug
    data = third_of(data) if row.third else data
    argv = [
        "--log-level", "error", "eval", "--data", str(data), "--out", str(out),
        *row.flags(), "--backend", "batch", "--model", MODEL,
        "--set", f"model.context_window={WINDOW}",
        "--set", f"model.answers_from=[{json.dumps(str(ANSWERS))}]",
        "--gist-cache", str(out / "gists.sqlite"), "--no-progress", "--bootstrap", "1000",
    ]  # fmt: skip
    return webagent_main(argv)


def _round(value: float | None) -> float | None:
    return None if value is None else round(value, 4)


def row_figures(row: Row, work: Path, answered: set[str], reference: Path | None) -> dict[str, Any]:
    out = work / row.slug
    results = load_results(out / "results.json")
    overall, diag = results.score.overall, results.diagnostics
    waiting = waiting_requests(out / "batch", answered)
    pending = results.attempts.steps_pending

    def ci(name: str) -> list[float] | None:
        interval = overall.ci.get(name)
        return [round(interval.low, 4), round(interval.high, 4)] if interval else None

    figures: dict[str, Any] = {
        "row": row.label,
        "agent": row.agent,
        "gister": row.gister,
        "budget": row.budget,
        "counter": COUNTER_NAMES[row.counter],
        "status": STALE if pending else "answered",
        "steps": overall.steps,
        "steps_pending": pending,
        "requests_to_answer": len({line["custom_id"] for line in waiting}),
        "step_sr": round(overall.micro.step_sr, 4),
        "step_sr_ci": ci("micro.step_sr"),
        "element_acc": round(overall.micro.element_acc, 4),
        "element_acc_ci": ci("micro.element_acc"),
        "op_f1": round(overall.micro.op_f1, 4),
        "op_f1_ci": ci("micro.op_f1"),
        "task_sr": round(overall.task_sr, 4),
        "task_sr_ci": ci("task_sr"),
        "input_tokens_per_step": round(diag.input_tokens_per_step, 1),
        "calls_per_step": round(diag.calls_per_step, 3),
        "gold_shown": _round(diag.gold_shown_rate),
        "compression_rate": _round(diag.compression_rate),
        "cost": {p.name: run_cost(out, p).figures() for p in PRICES},  # the cache estimated
        **against_reference(out, reference),
        "error_classes": dict(sorted(diag.error_classes.items())),
    }
    if pending:  # over part of the steps: no figure of the row
        figures.update(dict.fromkeys(_FIGURES))
    return figures


def against_reference(out: Path, reference: Path | None) -> dict[str, Any]:
    """Step SR minus the reference run's on the steps both answered, and its paired 95% CI."""
    d = None if reference in (None, out) else compare_rows([reference, out])[1].against_first
    ci = [round(d.ci.low, 4), round(d.ci.high, 4)] if d and d.ci else None
    points = None if d is None else round(d.step_sr, 4)
    return {"step_sr_vs_reference": points, "step_sr_vs_reference_ci": ci}


_FIGURES = (
    "step_sr", "step_sr_ci", "element_acc", "element_acc_ci", "op_f1", "op_f1_ci", "task_sr",
    "task_sr_ci", "input_tokens_per_step", "calls_per_step", "gold_shown", "compression_rate",
    "cost", "step_sr_vs_reference", "step_sr_vs_reference_ci",
)  # fmt: skip


def _pct(value: float | None, ci: list[float] | None = None, sign: str = "") -> str:
    if value is None:
        return "—"
    interval = f" [{100 * ci[0]:{sign}.1f}, {100 * ci[1]:{sign}.1f}]" if ci else ""
    return f"{100 * value:{sign}.1f}{interval}"


def _usd(cost: dict[str, float]) -> str:
    return f"{cost['usd_per_1k_steps']:,.2f} ({100 * cost['cached_input_share']:.0f} %)"


def table(rows: list[dict[str, Any]]) -> str:
    headers = [
        "agent (gists) @budget, counter", "step SR % [95% CI]",
        "step SR − reference, paired, points [95% CI]", "element acc %", "op F1 %",
        "task SR % [95% CI]", "input tok/step", "calls/step", "gold in act prompt %",
        "compression %", *(f"USD/1k steps, {p.name} (cached)" for p in PRICES), "status",
    ]  # fmt: skip
    dashes = ["—"] * (len(headers) - 2)
    body = [
        [r["row"], *dashes, f"{STALE}: {r['requests_to_answer']} requests to answer"]
        if r["status"] == STALE
        else [
            r["row"],
            _pct(r["step_sr"], r["step_sr_ci"]),
            _pct(r["step_sr_vs_reference"], r["step_sr_vs_reference_ci"], "+"),
            _pct(r["element_acc"]),
            _pct(r["op_f1"]),
            _pct(r["task_sr"], r["task_sr_ci"]),
            f"{r['input_tokens_per_step']:,.0f}",
            f"{r['calls_per_step']:.2f}",
            _pct(r["gold_shown"]),
            _pct(r["compression_rate"]),
            *(_usd(r["cost"][p.name]) for p in PRICES),
            r["status"],
        ]
        for r in rows
    ]
    return markdown_table(headers, body)


def plot(rows: list[dict[str, Any]], path: Path, answered_by: str) -> None:
    """Step SR against USD per 1,000 steps (log), a panel per price sheet, 95% CIs."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt
    from matplotlib.ticker import LogLocator, NullFormatter, StrMethodFormatter

    figure, panels = plt.subplots(1, len(PRICES), figsize=(13, 7.4), sharey=True)
    for axes, price in zip(panels, PRICES, strict=True):
        for n, r in enumerate(r for r in rows if r["status"] == "answered"):
            x, y, (low, high) = r["cost"][price.name], r["step_sr"], r["step_sr_ci"]
            axes.errorbar(x["usd_per_1k_steps"], 100 * y, [[100 * (y - low)], [100 * (high - y)]],
                          fmt="o" if r["budget"] == 8192 else "s", color=plt.get_cmap("tab20")(n),
                          capsize=3, label=r["row"])  # fmt: skip
        axes.set(xscale="log", xlabel=f"USD per 1,000 steps at {price.name} (log), cache estimated")
        axes.xaxis.set(major_locator=LogLocator(subs=(1, 2, 5)), minor_formatter=NullFormatter(),
                       major_formatter=StrMethodFormatter("{x:g}"))  # fmt: skip
        axes.set_title(f"{price.name}: {price.source}, read {price.read_on}", fontsize=8)
        axes.grid(alpha=0.3)
    panels[0].set_ylabel("step success rate, % (Mind2Web scoring; 95% CI)")
    figure.legend(*panels[0].get_legend_handles_labels(), loc="lower center", ncol=3, fontsize=7)
    figure.suptitle(f"168 intent steps, 28 real pages; answers by {answered_by}; prices from "
                    "webagent/data/prices.toml (circles 8K, squares 4K)", fontsize=9)  # fmt: skip
    figure.tight_layout(rect=(0, 0.17, 1, 1))
    figure.savefig(path, dpi=120, metadata={"Software": None})
    plt.close(figure)


_RULES = "; ".join(f"{p.name}: {p.cache_rule()}" for p in PRICES)
PRICES_NOTE = (
    "*Compression*: the ReadAgent paper's compression rate, 1 − act prompt tokens ÷ the whole "
    "page's tokens, the mean over steps. *USD per 1,000 steps*: every call's tokens at standard "
    f"prices of `webagent/data/prices.toml` ({'; '.join(p.describe() for p in PRICES)}; batch "
    "API figures in the JSON); in brackets the share of input tokens the provider's prompt "
    "cache would serve, estimated from the prefix each call shares with the earlier calls of "
    f"its task under the provider's rule ({_RULES})."
)


def summary(rows: list[dict[str, Any]], data: Path) -> tuple[dict[str, Any], str]:
    answered = json.loads(ANSWERED_AT.read_text()) if ANSWERED_AT.exists() else {}
    payload = {
        "schema_version": 1,
        "benchmark": "method_quality",
        "answers": {
            "file": str(ANSWERS.relative_to(REPO)),
            "sha256": hashlib.sha256(ANSWERS.read_bytes()).hexdigest() if ANSWERS.exists() else "",
            **answered,
        },
        "model_name_in_requests": MODEL,
        "data": {
            "tasks": "../shared/intent_tasks (168 steps, 111 tasks, 28 pages)",
            "sha256": hashlib.sha256(data.read_bytes()).hexdigest(),
        },
        "prompt_versions": all_template_versions(),
        "price_sheets": {p.name: p.model_dump(mode="json") for p in PRICES},
        "rows": rows,
    }
    who = answered.get("answered_by", "(no answers yet)")
    at = answered.get("commit", "?")
    stale = [r["row"] for r in rows if r["status"] == STALE]
    text = "\n".join(
        [
            "# The method's quality with a capable model (168 intent steps, 28 real pages)",
            "",
            f"Answers: {who}; the requests were made at commit {at}. Replayed by "
            "`python bench/figures/method_quality.py` (no model, no network). The tasks are the "
            "repository's own `../shared/intent_tasks` (person-phrased; the look-up selectors "
            "were chosen on them), scored as the official Mind2Web code does (micro step SR, "
            "element accuracy, op F1; task SR; 95% CIs by a task-level bootstrap). *Step SR − "
            f"reference*: each row against the reference row, {REFERENCE.label}, on the steps "
            "both answered (`webagent compare`), its CI by a paired task-level bootstrap: two "
            "rows on the same steps differ less by chance than their own CIs suggest.",
            "",
            PRICES_NOTE,
            "",
            table(rows),
            "",
            (
                f"Stale rows (some requests have no answer: not answered yet, or changed since "
                f"they were answered; their figures are not shown): {', '.join(stale)}."
                if stale
                else "Every row is answered in full."
            ),
        ]
    )
    return payload, text


def main() -> int:
    parser = figure_parser(__doc__)
    parser.add_argument("--check", action="store_true", help="compare with the committed summary")
    parser.add_argument("--requests", type=Path, help="write the requests still to answer here")
    parser.add_argument("--work", type=Path, help="keep the run folders here (resumes)")
    parser.add_argument("--rows", help="comma-separated row slugs (default: all)")
    args = parser.parse_args()
    if not (SHARED / "intent_tasks").is_dir():
        print(f"{SHARED / 'intent_tasks'} is not here: nothing to measure", file=sys.stderr)
        return 0
    rows = [r for r in ROWS if not args.rows or r.slug in args.rows.split(",")]
    with tempfile.TemporaryDirectory(prefix="method_quality-") as tmp:
        work = args.work or Path(tmp)
        work.mkdir(parents=True, exist_ok=True)
        data = build_tasks(work)
        answered = set(read_answers(ANSWERS))
        for number, row in enumerate(rows, start=1):
            print(f"[{number}/{len(rows)}] {row.label}", file=sys.stderr, flush=True)
            code = run_row(row, data, work)
            if code not in (0, 5):
                print(f"{row.label}: webagent eval exited {code}", file=sys.stderr)
                return code
        reference = work / REFERENCE.slug if REFERENCE in rows else None  # run now, or none
        figures = [row_figures(row, work, answered, reference) for row in rows]
        if args.requests is not None:
            folders = {row.slug: work / row.slug / "batch" for row in rows}
            return write_requests(folders, args.requests, answered)
        payload, text = summary(figures, data)
    if args.check:
        return check(payload, text, args.summaries)
    return write(payload, text, figures, args.summaries)


def write(payload: dict[str, Any], text: str, rows: list[dict[str, Any]], folder: Path) -> int:
    folder.mkdir(parents=True, exist_ok=True)
    (folder / "method_quality.json").write_text(json.dumps(payload, indent=2) + "\n")
    (folder / "method_quality.md").write_text(text + "\n")
    plot(rows, folder / "method_quality.png", payload["answers"].get("answered_by", "?"))
    print(text)
    return 0


def check(payload: dict[str, Any], text: str, folder: Path = SUMMARIES) -> int:
    """Fail when a row answered in full scores otherwise than committed; name stale rows."""
    committed_path = folder / "method_quality.json"
    committed = json.loads(committed_path.read_text()) if committed_path.exists() else {}
    before = {r["row"]: r for r in committed.get("rows", [])}
    failed = []
    for row in payload["rows"]:
        if row["status"] == STALE:
            print(f"stale: {row['row']}: {row['requests_to_answer']} requests to answer again "
                  "(python bench/figures/method_quality.py --requests DIR)",
                  file=sys.stderr)  # fmt: skip
        elif before.get(row["row"], {}).get("status") != "answered":
            print(f"newly answered: {row['row']} (run bench/figures/method_quality.py to "
                  "record it)", file=sys.stderr)  # fmt: skip
        elif before[row["row"]] != row:
            failed.append(row["row"])
    for label in failed:
        print(f"changed: {label} no longer scores as committed", file=sys.stderr)
    same = (folder / "method_quality.md").read_text() == text + "\n" if not failed else False
    print("method_quality: " + ("the committed summary, byte for byte" if same else
          "answered rows score as committed" if not failed else "FAILED"))  # fmt: skip
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
