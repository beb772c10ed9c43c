"""Token counting below every stage: the counter type, the byte estimate, exact cutting.

Every budget decision (segmentation plan, gist budgets, memory, reopening, act prompt) counts
with the backend's own counter (``Model.count_tokens``); where a backend has no tokenizer it
counts with :func:`estimate_tokens`, which runs high so that what fits by the estimate fits.

A counter may offer more than ``counter(text)``: ``counter.many(texts)`` counts several texts
at once (one request to a server that tokenizes remotely), and ``counter.round_trips`` says
that each call costs one. Searches that count as they go (cutting a text to a budget) are
written as *counting procedures* (:data:`Counting`): generators that yield the texts they need
counted and are sent the counts. :func:`run_counting` runs many of them side by side, every
round's texts in one call, so cutting a hundred gists costs the requests of one; against a
remote counter each procedure also asks ahead (the probes its search may need next). The
results are the counts and cuts the plain sequential code gives; only fewer requests are made.
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Generator, Sequence
from typing import Any, Generic, TypeVar

#: a function from text to its token count under one tokenizer
TokenCounter = Callable[[str], int]

T = TypeVar("T")
#: a procedure that counts: it yields the texts it needs counted (in a list, with any it may
#: need next where asking ahead pays), is sent their counts in the same order, and returns
#: its result (:func:`run_counting`)
Counting = Generator[list[str], list[int], T]

#: the estimate counts 5 tokens per 8 bytes (see ``estimate_tokens``)
ESTIMATE_TOKENS_PER_BYTE = (5, 8)
#: how many probes of one search a remote counter is asked for in one request
SPECULATIVE_PROBES = 48


def estimate_tokens(text: str) -> int:
    """A conservative token count where the model's tokenizer is unavailable: 1.6 bytes a token.

    Calibrated on the embedded model's tokenizer (SmolLM2) over 1,072 fragments of 31 real and
    sample pages in compact HTML form: real/estimate has median 0.76 and 95th percentile 0.95
    (ids like ``id=n1234`` cost a token per digit). Larger-vocabulary tokenizers need fewer
    tokens, so prompts built on it stay inside the window.
    """
    size = len(text) if text.isascii() else len(text.encode("utf-8"))
    return -(-size * ESTIMATE_TOKENS_PER_BYTE[0] // ESTIMATE_TOKENS_PER_BYTE[1])


def may_fit(estimate: int, budget: int) -> bool:
    """Whether a text the byte estimate puts at ``estimate`` tokens may fit ``budget``: the
    estimate runs high, so up to a third over may (what is worth counting ahead)."""
    return estimate <= budget * 4 // 3


def count_many(
    count_tokens: TokenCounter, texts: Sequence[str], ahead: Sequence[str] = ()
) -> list[int]:
    """``[count_tokens(t) for t in texts]``, in one call where the counter takes several.

    ``ahead``: texts likely asked for next, counted with the counter's next request
    (:func:`prefetch`) where it can hold them, else with these."""
    if ahead and getattr(count_tokens, "ahead", None) is not None:
        prefetch(count_tokens, ahead)
        ahead = ()
    many = getattr(count_tokens, "many", None)
    if many is not None:
        return list(many([*texts, *ahead]))[: len(texts)]
    return [count_tokens(text) for text in texts]


def round_trips(count_tokens: TokenCounter) -> bool:
    """Whether each call of ``count_tokens`` is a request to a server."""
    return bool(getattr(count_tokens, "round_trips", False))


def prefetch(count_tokens: TokenCounter, texts: Sequence[str]) -> None:
    """Count ``texts`` with the counter's next request, where it remembers and makes round
    trips (``counter.ahead``; else now, in one request): the counts asked for next are then
    answered from memory, and asking ahead costs no request of its own."""
    if not texts or not round_trips(count_tokens):
        return
    ahead = getattr(count_tokens, "ahead", None)
    if ahead is not None:
        ahead(texts)
    else:
        count_many(count_tokens, texts)


class _Unknown(Exception):
    """A count a dry run (:func:`first_request`) does not know."""


class _KnownOnly:
    """A counter that answers the counts ``known`` gives and stops at the first it cannot,
    keeping the texts that call asked for and did not know (``missing``); it makes round
    trips, as the counter it stands for does, so the work it runs counts as against that."""

    round_trips = True

    def __init__(self, known: Callable[[str], int | None]) -> None:
        self._known = known
        self.missing: list[str] = []

    def __call__(self, text: str) -> int:
        return self.many([text])[0]

    def many(self, texts: Sequence[str]) -> list[int]:
        counts = [self._known(t) for t in texts]
        missing = [t for t, n in zip(texts, counts, strict=True) if n is None]
        if missing:
            self.missing = list(dict.fromkeys(missing))
            raise _Unknown
        return counts  # type: ignore[return-value]  # none is None

    def ahead(self, texts: Sequence[str]) -> None:
        """What the work would count ahead goes with the real counter's requests anyway."""


def first_request(count_tokens: TokenCounter, work: Callable[[TokenCounter], object]) -> list[str]:
    """The texts ``work(counter)`` would send in its first request to ``count_tokens`` (a
    remote counter that remembers: ``count_tokens.known``), found by running it on the counts
    already known and stopping at the first it is not: counted ahead (:func:`prefetch`), they
    spare ``work`` that request when it runs. Empty where it would send none, or where the
    counter does not tell what it knows."""
    known = getattr(count_tokens, "known", None)
    if known is None or not round_trips(count_tokens):
        return []
    dry = _KnownOnly(known)
    try:
        work(dry)
    except _Unknown:
        return dry.missing
    return []


class DryRun(Generic[T]):
    """A counting procedure run on the counts a counter already knows, kept where it waits
    for one it does not. ``missing(known)`` goes on from there as far as the counts known
    now allow and returns the texts of the request it would send next (each once; empty
    once it has returned). A procedure's path is a function of the counts it is sent, so
    going on is :func:`first_request` run again from the start, without the repeated work."""

    def __init__(self, procedure: Counting[T]) -> None:
        self._procedure = procedure
        self._asked: list[str] | None = None
        self.done = False

    def missing(self, known: Callable[[str], int | None]) -> list[str]:
        if self.done:
            return []
        try:
            if self._asked is None:
                self._asked = next(self._procedure)
            while True:
                counts = [known(t) for t in self._asked]
                if None in counts:
                    unknown = (t for t, n in zip(self._asked, counts, strict=True) if n is None)
                    return list(dict.fromkeys(unknown))
                self._asked = self._procedure.send(counts)  # type: ignore[arg-type]
        except StopIteration:
            self.done = True
            return []


def run_counting(count_tokens: TokenCounter, procedures: Sequence[Counting[T]]) -> list[T]:
    """The results of ``procedures``, run side by side: each round, the texts all of them
    ask for are counted in one call (``count_many``), each distinct text once."""
    return count_one(count_tokens, together(procedures))


def count_one(count_tokens: TokenCounter, procedure: Counting[T]) -> T:
    """The result of one counting procedure, each round's texts counted in one call."""
    known: dict[str, int] = {}
    try:
        texts = next(procedure)
        while True:
            new = [t for t in dict.fromkeys(texts) if t not in known]
            known.update(zip(new, count_many(count_tokens, new), strict=True))
            texts = procedure.send([known[t] for t in texts])
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def together(procedures: Sequence[Counting[Any]]) -> Counting[list[Any]]:
    """One counting procedure that runs ``procedures`` side by side (each round asks for
    the texts of all that are still counting) and returns their results in order."""
    results: dict[int, Any] = {}
    asked: dict[int, list[str]] = {}
    for n, procedure in enumerate(procedures):
        _advance(n, procedure, None, asked, results)
    while asked:
        counts = iter((yield [t for texts in asked.values() for t in texts]))
        current, asked = asked, {}
        for n, texts in current.items():
            _advance(n, procedures[n], [next(counts) for _ in texts], asked, results)
    return [results[n] for n in range(len(procedures))]


def alongside(procedure: Counting[T], extra: Callable[[str], str]) -> Counting[T]:
    """``procedure``, each round also asking for ``extra(text)`` of every text it asks for
    (what its caller will count next from a probe's result): those counts are then known
    when the caller asks, and the procedure is sent only its own."""
    try:
        texts = next(procedure)
        while True:
            counts = yield [*texts, *map(extra, texts)]
            texts = procedure.send(counts[: len(texts)])
    except StopIteration as stop:
        return stop.value  # type: ignore[no-any-return]


def _advance(
    n: int,
    procedure: Counting[T],
    counts: list[int] | None,
    asked: dict[int, list[str]],
    results: dict[int, T],
) -> None:
    try:
        asked[n] = procedure.send(counts)  # type: ignore[arg-type]  # None starts it
    except StopIteration as stop:
        results[n] = stop.value


def truncate_to_tokens(text: str, budget: int, count_tokens: TokenCounter) -> str:
    """The longest prefix of ``text`` within ``budget`` tokens (binary search on characters)."""
    return count_one(count_tokens, truncation(text, budget, speculate=round_trips(count_tokens)))


def truncation(
    text: str,
    budget: int,
    *,
    speculate: bool,
    whole: int | None = None,
    known: Sequence[tuple[int, int]] = (),
) -> Counting[str]:
    """:func:`truncate_to_tokens` as a counting procedure (``speculate``: ask ahead;
    ``whole``: the count of ``text``, where known; ``known``: counts of some prefixes,
    ``(length, count)``)."""
    if budget <= 0:
        return ""
    points = [(0, 0), *known]
    if whole is None:
        lengths = calibration(text, budget) if speculate else []
        whole, *found = yield [text, *(text[:n] for n in lengths)]
        points += zip(lengths, found, strict=True)
    if whole <= budget:
        return text
    points.append((len(text), whole))
    end = yield from fitting_search(
        0, len(text), lambda m: text[:m], budget, speculate=speculate, known=points
    )
    return text[:end]


#: where, as multiples of the length the byte estimate puts the cut at, a text is counted
#: alongside its whole count: the real cut lies there or beyond (the estimate runs high), and
#: the search's first probes are then read off counts near it rather than the whole text's
CALIBRATION = (1.0, 1.25, 1.5, 1.8, 2.2, 2.8)


def calibration(text: str, budget: int) -> list[int]:
    """Prefix lengths of ``text`` worth counting with it, where a cut to ``budget`` tokens
    is likely (none where the estimate says the text fits)."""
    if estimate_tokens(text) <= budget:
        return []
    scale = len(text) / estimate_tokens(text)  # characters per estimated token
    lengths = {int(budget * scale * f) for f in CALIBRATION}
    return sorted(n for n in lengths if 0 < n < len(text))


def last_fitting(
    low: int,
    high: int,
    probe: Callable[[int], str],
    budget: int,
    count_tokens: TokenCounter,
    *,
    known: Sequence[tuple[int, int]] = (),
) -> int:
    """The result of the binary search ``while low < high: middle = (low + high + 1) // 2;
    low, high = (middle, high) if count(probe(middle)) <= budget else (low, middle - 1)``,
    exactly (``known``: counts at some points, ``(point, count)``, to predict the path by)."""
    speculate = round_trips(count_tokens)
    search = fitting_search(low, high, probe, budget, speculate=speculate, known=known)
    return count_one(count_tokens, search)


def fitting_search(
    low: int,
    high: int,
    probe: Callable[[int], str],
    budget: int,
    *,
    speculate: bool,
    known: Sequence[tuple[int, int]] = (),
    size: Callable[[int], float] | None = None,
) -> Counting[int]:
    """:func:`last_fitting` as a counting procedure.

    With ``speculate`` (a counter that makes round trips) each round asks for the probes the
    search may need next (those on the path the counts seen so far predict, both sides where
    it is close, or every point of a short stretch), so a search takes a few rounds rather
    than one per step. Counts are predicted linearly in ``size(point)`` (the probe's length,
    say; default the point itself). The path walked is the one the sequential search takes,
    whatever the counter.
    """
    if not speculate:
        while low < high:
            middle = (low + high + 1) // 2
            (count,) = yield [probe(middle)]
            low, high = (middle, high) if count <= budget else (low, middle - 1)
        return low
    counts: dict[int, int] = {}
    at = size or float
    points = sorted((at(point), count) for point, count in known)
    while low < high:
        middle = (low + high + 1) // 2
        if middle not in counts:
            wanted = _probes(low, high, budget, points, counts, at=at)
            found = yield [probe(m) for m in wanted]
            counts.update(zip(wanted, found, strict=True))
            points = sorted({*points, *((at(m), c) for m, c in counts.items())})
        if counts[middle] <= budget:
            low = middle
        else:
            high = middle - 1
    return low


def _probes(
    low: int,
    high: int,
    budget: int,
    points: list[tuple[float, int]],
    counts: dict[int, int],
    *,
    at: Callable[[int], float],
) -> list[int]:
    """The search's next middles, breadth first along the predicted path (both ways where the
    prediction is within a few tokens of the budget; every point of a stretch that takes no
    more probes than that), up to ``SPECULATIVE_PROBES``."""
    wanted: list[int] = []
    queue = deque([(low, high)])
    slack = 4 + budget // 200
    while queue and len(wanted) < SPECULATIVE_PROBES:
        lo, hi = queue.popleft()
        if lo >= hi:
            continue
        if hi - lo <= SPECULATIVE_PROBES - len(wanted):  # the search ends inside: ask for all
            asked = set(wanted)
            wanted += [m for m in range(lo + 1, hi + 1) if m not in counts and m not in asked]
            continue
        middle = (lo + hi + 1) // 2
        if middle not in counts:
            wanted.append(middle)
        guess = _interpolate(points, at(middle))
        if guess is None or abs(guess - budget) <= slack:
            queue.extend(((middle, hi), (lo, middle - 1)))
        elif guess <= budget:
            queue.append((middle, hi))
        else:
            queue.append((lo, middle - 1))
    return wanted


def _interpolate(points: list[tuple[float, int]], at: float) -> float | None:
    """A count at ``at`` read off the line between the known counts either side of it."""
    left = right = None
    for point in points:
        if point[0] <= at:
            left = point
        elif right is None:
            right = point
            break
    if left is None or right is None:
        return None
    (x0, y0), (x1, y1) = left, right
    return y0 + (y1 - y0) * (at - x0) / (x1 - x0)
