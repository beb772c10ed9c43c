"""What tokens cost: price sheets, and the one price computation.

A price sheet (``webagent/data/prices.toml``, or a file of the user's in its format) gives per
model the USD per million input, cached input, cache-write and output tokens, the batch
discount and the provider's prompt-cache rule, each entry with the day it was read and its
source. ``--price-sheet NAME`` picks a model of the shipped sheet, ``FILE:NAME`` one of a file;
``--price-in``/``--price-out`` make an entry of two figures (:func:`flat_price`). Every cost
in the toolkit (the plan, the eval run, the sweep table, the method table) is
:func:`cost` of a :class:`TokenBill`.
"""

from __future__ import annotations

import tomllib
from datetime import date
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from webagent.errors import ConfigError, TextFileError
from webagent.textfiles import read_text

#: the sheet shipped with the package
SHEET = Path(__file__).resolve().parent.parent / "data" / "prices.toml"


class Price(BaseModel):
    """One model's prices, USD per 1M tokens, and its provider's prompt-cache rule."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    name: str
    provider: str = ""
    input: float = Field(ge=0)
    cached_input: float | None = Field(
        default=None, ge=0, description="a cache hit; None: the cache is not cheaper"
    )
    cache_write: float | None = Field(
        default=None, ge=0, description="tokens written to the cache; None: the input price"
    )
    output: float = Field(ge=0)
    batch_discount: float = Field(default=0.0, ge=0, le=1)
    cache_min_tokens: int = Field(default=0, ge=0, description="0: no prompt cache")
    cache_step_tokens: int = Field(default=1, ge=1)
    read_on: date | None = None
    source: str = ""
    cache_source: str = ""
    note: str = ""

    @property
    def caches(self) -> bool:
        """Whether the provider serves shared prefixes from a prompt cache."""
        return self.cache_min_tokens > 0

    def cacheable(self, shared_tokens: int) -> int:
        """The tokens of a prefix of ``shared_tokens`` the cache serves under the rule: none
        below ``cache_min_tokens``, else whole steps of ``cache_step_tokens`` from there."""
        if not self.caches or shared_tokens < self.cache_min_tokens:
            return 0
        steps = (shared_tokens - self.cache_min_tokens) // self.cache_step_tokens
        return self.cache_min_tokens + steps * self.cache_step_tokens

    def cache_rule(self) -> str:
        """The provider's prompt-cache rule, in words."""
        if not self.caches:
            return "no prompt cache"
        return f"at least {self.cache_min_tokens:,} tokens in steps of {self.cache_step_tokens}"

    def describe(self) -> str:
        """One line: the name, the figures, when and where they were read."""
        cached = f", cached input {self.cached_input:g}" if self.cached_input is not None else ""
        write = f", cache write {self.cache_write:g}" if self.cache_write is not None else ""
        read = f"; read {self.read_on.isoformat()} from {self.source}" if self.read_on else ""
        return (
            f"{self.name}: USD {self.input:g} input{cached}{write}, {self.output:g} output per "
            f"1M tokens{read}"
        )


class TokenBill(BaseModel):
    """Tokens to pay for. ``cached_input_tokens`` and ``cache_write_tokens`` are parts of
    ``input_tokens`` (as OpenAI counts ``prompt_tokens``), billed at their own prices."""

    input_tokens: int = 0
    cached_input_tokens: int = 0
    cache_write_tokens: int = 0
    output_tokens: int = 0

    def plus(self, other: TokenBill) -> TokenBill:
        return TokenBill(
            input_tokens=self.input_tokens + other.input_tokens,
            cached_input_tokens=self.cached_input_tokens + other.cached_input_tokens,
            cache_write_tokens=self.cache_write_tokens + other.cache_write_tokens,
            output_tokens=self.output_tokens + other.output_tokens,
        )


def cost(bill: TokenBill, price: Price, *, batch: bool = False) -> float:
    """USD for ``bill`` at ``price`` (``batch``: through the provider's batch API, its
    discount taken off every price). The one price computation of the toolkit."""
    fresh = bill.input_tokens - bill.cached_input_tokens - bill.cache_write_tokens
    cached = price.input if price.cached_input is None else price.cached_input
    write = price.input if price.cache_write is None else price.cache_write
    usd = (
        fresh * price.input
        + bill.cached_input_tokens * cached
        + bill.cache_write_tokens * write
        + bill.output_tokens * price.output
    ) / 1e6
    return usd * (1 - price.batch_discount) if batch else usd


def flat_price(price_in: float | None, price_out: float | None) -> Price | None:
    """``--price-in``/``--price-out`` as an entry (no cache, no batch discount); None when
    neither is given."""
    if price_in is None and price_out is None:
        return None
    for flag, value in (("--price-in", price_in), ("--price-out", price_out)):
        if value is not None and value < 0:
            raise ConfigError(f"{flag} {value}: a price cannot be negative")
    return Price(name="--price-in/--price-out", input=price_in or 0.0, output=price_out or 0.0)


def read_sheet(path: Path) -> dict[str, Price]:
    """Every entry of the sheet at ``path`` by model name; a bad sheet is one ConfigError
    line naming the file and the entry."""
    try:
        data = tomllib.loads(read_text(path))
    except OSError as exc:
        raise ConfigError(f"price sheet {path}: cannot read it ({exc.strerror})") from exc
    except (tomllib.TOMLDecodeError, TextFileError) as exc:
        raise ConfigError(f"price sheet {path}: not a TOML file ({exc})") from exc
    models = data.get("models")
    if not isinstance(models, dict) or not models:
        raise ConfigError(f"price sheet {path}: no [models.NAME] entries")
    sheet = {}
    for name, entry in models.items():
        try:
            sheet[name] = Price.model_validate({**entry, "name": name})
        except (ValidationError, TypeError) as exc:
            raise ConfigError(f"price sheet {path}: models.{name}: {_first(exc)}") from exc
    return sheet


def _first(exc: Exception) -> str:
    if isinstance(exc, ValidationError):
        error = exc.errors()[0]
        where = ".".join(str(p) for p in error["loc"])
        return f"{where}: {error['msg']}"
    return str(exc)


def find_price(selector: str) -> Price:
    """``--price-sheet``'s value: ``NAME`` (a model of the shipped sheet) or ``FILE:NAME``."""
    path, name = SHEET, selector
    head, sep, tail = selector.rpartition(":")
    if sep and (head.endswith(".toml") or Path(head).is_file()):
        path, name = Path(head), tail
    sheet = read_sheet(path)
    if name not in sheet:
        raise ConfigError(
            f"--price-sheet {selector}: no model {name!r} in the price sheet {path} "
            f"(it has {', '.join(sorted(sheet))})"
        )
    return sheet[name]
