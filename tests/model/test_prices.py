"""The price sheet and the one price computation."""

from __future__ import annotations

from pathlib import Path

import pytest

from webagent.errors import ConfigError
from webagent.model.prices import SHEET, Price, TokenBill, cost, find_price, flat_price, read_sheet


def test_the_shipped_sheet_dates_and_sources_every_entry() -> None:
    sheet = read_sheet(SHEET)
    providers = {price.provider for price in sheet.values()}
    assert {"openai", "anthropic"} <= providers
    for price in sheet.values():
        assert price.read_on is not None and price.source.startswith("https://")
        assert price.cache_source.startswith("https://") and price.caches
        assert price.note  # what could not be confirmed is said, not left out
    assert find_price("gpt-4o-mini").cache_step_tokens == 128
    assert find_price("claude-sonnet-4").cache_write == 3.75


def test_a_bill_priced_by_hand() -> None:
    price = Price(
        name="m", input=2.0, cached_input=0.5, cache_write=2.5, output=8.0, batch_discount=0.5
    )
    bill = TokenBill(
        input_tokens=10_000, cached_input_tokens=4_000, cache_write_tokens=1_000, output_tokens=500
    )
    by_hand = (5_000 * 2.0 + 4_000 * 0.5 + 1_000 * 2.5 + 500 * 8.0) / 1e6  # = 0.0185
    assert cost(bill, price) == pytest.approx(0.0185) == pytest.approx(by_hand)
    assert cost(bill, price, batch=True) == pytest.approx(0.0185 / 2)
    # no cached or write price: those tokens cost the input price
    flat = Price(name="f", input=2.0, output=8.0)
    assert cost(bill, flat) == pytest.approx((10_000 * 2.0 + 500 * 8.0) / 1e6)


def test_the_cache_rule_counts_whole_steps_from_the_minimum() -> None:
    openai = find_price("gpt-4.1-mini")  # at least 1,024 tokens, in steps of 128
    assert [openai.cacheable(n) for n in (0, 1023, 1024, 1151, 1152, 5000)] == [
        0, 0, 1024, 1024, 1152, 4992,
    ]  # fmt: skip
    assert openai.cache_rule() == "at least 1,024 tokens in steps of 128"
    flat = flat_price(1.0, 2.0)
    assert flat is not None and flat.cacheable(50_000) == 0
    assert flat.cache_rule() == "no prompt cache"


def test_price_in_and_out_make_an_entry_without_a_cache() -> None:
    price = flat_price(1.0, None)
    assert price is not None and (price.input, price.output, price.caches) == (1.0, 0.0, False)
    assert price.describe() == "--price-in/--price-out: USD 1 input, 0 output per 1M tokens"
    assert flat_price(None, None) is None
    with pytest.raises(ConfigError, match=r"^--price-out -2.0: a price cannot be negative$"):
        flat_price(1.0, -2.0)


def test_a_sheet_of_ones_own_and_its_errors(tmp_path: Path) -> None:
    sheet = tmp_path / "mine.toml"
    sheet.write_text('[models.local]\ninput = 0.1\noutput = 0.2\nsource = "me"\n')
    assert find_price(f"{sheet}:local").input == 0.1
    with pytest.raises(ConfigError) as unknown:
        find_price("gpt-9")
    message = str(unknown.value)
    assert message.startswith("--price-sheet gpt-9: no model 'gpt-9' in the price sheet ")
    assert "gpt-4o-mini" in message and "\n" not in message
    sheet.write_text('[models.local]\ninput = "cheap"\noutput = 0.2\n')
    with pytest.raises(ConfigError, match=r"mine.toml: models.local: input: .*number"):
        find_price(f"{sheet}:local")
    sheet.write_text("[models.local\n")
    with pytest.raises(ConfigError, match=r"mine.toml: not a TOML file"):
        find_price(f"{sheet}:local")
    with pytest.raises(ConfigError, match=r"^price sheet gone.toml: cannot read it"):
        find_price("gone.toml:local")
