"""What a sweep is: agents × budgets over one dataset, and where each cell lives.

``OUT/sweep.json`` records the spec; the same command finds it and resumes, a different one
is refused (a folder never mixes two sweeps). Each cell is ``OUT/cells/<agent>@<budget>/``, a
normal ``webagent eval`` run folder with its own cassette (``calls.jsonl``); the gist cache
(``OUT/gist-cache.sqlite`` unless one is named) is shared by every cell.
"""

from __future__ import annotations

import json
import os
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

from webagent.errors import ConfigError
from webagent.model.prices import Price, flat_price
from webagent.textfiles import read_text

Quality = Literal["auto", "step_sr", "gold_shown"]
SPEC_FILE = "sweep.json"
CELLS_DIR = "cells"
CASSETTE = "calls.jsonl"
GIST_CACHE = "gist-cache.sqlite"


class Cell(BaseModel):
    model_config = ConfigDict(frozen=True)

    agent: str
    budget: int

    @property
    def name(self) -> str:
        return f"{self.agent}@{self.budget}"


class SweepSpec(BaseModel):
    """Everything that decides the sweep's cells and how they are scored and plotted."""

    model_config = ConfigDict(frozen=True, extra="forbid")

    data: str
    agents: tuple[str, ...] = Field(min_length=1)
    budgets: tuple[int, ...] = Field(min_length=1)
    limit: int | None = Field(default=None, ge=1)
    quality: Quality = Field(
        default="auto",
        description="the plot's quality axis; auto: gold shown for a model that cannot be "
        "judged (the embedded one), else step SR",
    )
    price: Price | None = Field(
        default=None, description="the price sheet's entry the table prices tokens at"
    )
    price_in: float | None = Field(
        default=None, ge=0, description="USD per 1M input tokens (a sweep.json of before price)"
    )
    price_out: float | None = Field(default=None, ge=0, description="USD per 1M output tokens")
    scoring: dict[str, Any] = Field(default_factory=dict)
    config: dict[str, Any] = Field(default_factory=dict, description="the base RunConfig")

    @field_validator("agents")
    @classmethod
    def _distinct_agents(cls, value: tuple[str, ...]) -> tuple[str, ...]:
        if len(set(value)) != len(value):
            raise ValueError("an agent is named twice")
        return value

    @field_validator("budgets")
    @classmethod
    def _budgets(cls, value: tuple[int, ...]) -> tuple[int, ...]:
        if len(set(value)) != len(value):
            raise ValueError("a budget is named twice")
        small = [b for b in value if b < 512]
        if small:
            raise ValueError(f"budget {small[0]} is under 512 tokens (the smallest context)")
        return tuple(sorted(value))

    def pricing(self) -> Price | None:
        """The price the table uses: the sheet's entry, or the two figures an older sweep
        recorded."""
        return self.price or flat_price(self.price_in, self.price_out)

    def cells(self) -> list[Cell]:
        """Agent by agent, budgets rising: the order cells run and rows appear."""
        return [Cell(agent=a, budget=b) for a in self.agents for b in self.budgets]


def cell_dir(out: Path, cell: Cell) -> Path:
    return out / CELLS_DIR / cell.name


def parse_list(text: str, what: str) -> list[str]:
    items = [t.strip() for t in text.split(",") if t.strip()]
    if not items:
        raise ConfigError(f"--{what}: give a comma-separated list, e.g. --{what} a,b")
    return items


def parse_budgets(text: str) -> tuple[int, ...]:
    budgets = []
    for item in parse_list(text, "budgets"):
        digits = item.lower().removesuffix("k")
        try:
            value = int(digits) * (1024 if item.lower().endswith("k") else 1)
        except ValueError:
            raise ConfigError(
                f"--budgets: {item!r} is not a token count (write 2048 or 2k)"
            ) from None
        budgets.append(value)
    return tuple(budgets)


def build_spec(**values: Any) -> SweepSpec:
    try:
        return SweepSpec(**values)
    except ValidationError as exc:
        first = exc.errors()[0]
        where = ".".join(str(p) for p in first["loc"])
        raise ConfigError(f"invalid sweep: {where}: {first['msg']}") from exc


def read_spec(out: Path) -> SweepSpec | None:
    path = out / SPEC_FILE
    if not path.is_file():
        return None
    try:
        return SweepSpec.model_validate_json(read_text(path))
    except ValidationError as exc:
        raise ConfigError(f"{path}: not a sweep spec ({exc.error_count()} errors)") from exc


#: what prices the table without changing a cell: a resumed sweep may change it
_PRICING = ("price", "price_in", "price_out")
#: model settings that change where and how fast calls go, not what answers them
_NOT_IDENTITY = ("base_url", "base_urls", "concurrency", "timeout_s", "max_retries", "n_threads")


def identity(spec: SweepSpec) -> dict[str, Any]:
    """What a resumed sweep must share with the one it continues: everything but where the
    model is served (endpoints, concurrency, timeouts may change between sessions) and the
    price its table uses."""
    data = {k: v for k, v in spec.model_dump(mode="json").items() if k not in _PRICING}
    model = {k: v for k, v in data["config"].get("model", {}).items() if k not in _NOT_IDENTITY}
    data["config"] = {**data["config"], "model": model}
    return data


def open_spec(out: Path, spec: SweepSpec) -> None:
    """Write ``spec`` to ``OUT/sweep.json``; a folder holding another sweep is refused."""
    old = read_spec(out)
    if old is not None and identity(old) != identity(spec):
        mine, theirs = identity(spec), identity(old)
        changed = [k for k in mine if mine[k] != theirs[k]]
        raise ConfigError(
            f"{out} holds a sweep with other settings ({', '.join(changed)} differ); pass a new "
            "--out folder, or the same command to resume it"
        )
    out.mkdir(parents=True, exist_ok=True)
    tmp = out / (SPEC_FILE + ".tmp")
    tmp.write_text(json.dumps(spec.model_dump(mode="json"), indent=2) + "\n", encoding="utf-8")
    os.replace(tmp, out / SPEC_FILE)
