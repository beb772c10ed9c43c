"""The figures the README and docs/PERFORMANCE.md print: one script per question a user asks.

``FIGURES`` lists them in the order the document reads, each with the arguments that made its
committed summaries: ``python bench/run.py`` (``make bench``) runs them all, and
``python bench/kit/docs.py`` writes the document and the README's figures from the summaries.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Figure:
    name: str  #: its script, ``bench/figures/NAME.py``
    question: str  #: what a user asks, the heading of its section in docs/PERFORMANCE.md
    summaries: tuple[str, ...]  #: what it writes: ``bench/summaries/SUMMARY.md/.json``
    args: tuple[str, ...] = ()  #: how ``make bench`` runs it

    @property
    def command(self) -> str:
        return " ".join(["python", f"bench/figures/{self.name}.py", *self.args])


FIGURES = (
    Figure("method_quality", "How well does each agent act with a capable model, at what price?",
           ("method_quality",)),
    Figure("live_quality", "How often does each agent finish live tasks, with a capable model?",
           ("live_quality",)),
    Figure("coverage", "Which look-up selector finds the part of the page that holds the target?",
           ("coverage",)),
    Figure("gist_cost", "What does reading a new page cost?", ("gist_cost",)),
    Figure("overhead", "What does a step cost the agent itself: tokenize requests and CPU?",
           ("overhead",), ("--every", "8", "--baseline", "0f5fc77")),
    Figure("plan_accuracy", "Can I trust `--plan`'s cost before a run?", ("plan_accuracy",),
           ("--agents", "raw-html,readagent-p,retrieval,gist-only,readagent-s", "--limit", "1")),
    Figure("page_speed", "How fast is page processing?", ("page_speed", "page_speed_agents"),
           ("--repeat", "7", "--baseline", "0f5fc77")),
    Figure("cpu_contention", "How does the local model fare beside busy processes?",
           ("cpu_contention",)),
)  # fmt: skip
