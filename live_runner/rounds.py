"""Episodes in request rounds: what a replay from the seed must reproduce, and when it did not.

With the batch backend an episode runs from its seed with the answers known so far and is
suspended (``pending``) at the first request without one; the next round replays it from its
seed. Answers are keyed by the exact request (:meth:`~webagent.model.base.Request.cache_key`),
so an answer is never given to another page: a page that differs makes another request, which
waits for its own answer. What a replay can do is *diverge*: show the agent something else than
the attempt it replays showed it (a page that changed between rounds, a clock on the page, an
environment that is not deterministic).

Each attempt keeps one digest per step of what the agent was given (:func:`digest` of the
:class:`~webagent.contracts.Observation`: task, previous actions with their outcomes, page,
URL), the suspended step's included. A replay is faithful when it shows the agent the same
observations at every step the attempt reached, the suspended one included, in order: then each
request is the one asked before. It diverged at the first step whose observation differs, or
that it never reached (it ended or was suspended earlier). An episode counts as divergent when
any of its replays diverged (:attr:`~live_runner.records.EpisodeResult.divergences`).
"""

from __future__ import annotations

import hashlib

from live_runner.records import EpisodeResult
from webagent.contracts import AXTree, Observation

#: how an episode that is run again ended the time before (the same command reruns these)
UNFINISHED = ("error", "pending", "interrupted")


def digest(observation: Observation) -> str:
    """What an observation would make the agent ask, as a short hash. The accessibility tree's
    node ids are the browser's own (its text boxes get a new one on every launch) and are
    shown to no agent, so they are numbered in tree order first."""
    if observation.axtree is not None:
        observation = observation.model_copy(update={"axtree": _numbered(observation.axtree)})
    blob = observation.model_dump_json().encode("utf-8")
    return hashlib.sha256(blob).hexdigest()[:16]


def _numbered(tree: AXTree) -> AXTree:
    """``tree`` with its node ids replaced by their positions."""
    number = {node.node_id: str(i) for i, node in enumerate(tree.nodes)}
    nodes = [
        node.model_copy(
            update={
                "node_id": number[node.node_id],
                "children": [number.get(child, "?") for child in node.children],
            }
        )
        for node in tree.nodes
    ]
    return tree.model_copy(update={"nodes": nodes})


def diverged_at(recorded: list[str], replayed: list[str]) -> int | None:
    """The first step (1-based) where ``replayed`` does not show what ``recorded`` showed, or
    does not get to; None when the replay reproduced every recorded step."""
    for step, seen in enumerate(recorded, start=1):
        if step > len(replayed) or replayed[step - 1] != seen:
            return step
    return None


def follow(previous: EpisodeResult | None, result: EpisodeResult) -> EpisodeResult:
    """``result`` as the attempt after ``previous`` (None: the first): attempts counted, and a
    replay of a suspended attempt checked against what that attempt showed the agent."""
    if previous is None:
        return result
    step = diverged_at(previous.observed, result.observed) if previous.status == "pending" else None
    return result.model_copy(
        update={
            "attempts": previous.attempts + 1,
            "divergences": previous.divergences + (step is not None),
            "diverged_at": step if step is not None else previous.diverged_at,
        }
    )
