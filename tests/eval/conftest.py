"""Shared fixtures for the offline-evaluation tests."""

from __future__ import annotations

from pathlib import Path

import pytest

DATA = Path(__file__).resolve().parents[1] / "data" / "mind2web"
SHARED = Path(__file__).resolve().parents[3] / "shared"


@pytest.fixture
def raw_folder() -> Path:
    """Authored tasks in the raw release layout: raw/<split>/<split>_<n>.json."""
    return DATA / "raw"


@pytest.fixture
def predictions_file() -> Path:
    return DATA / "predictions.jsonl"


@pytest.fixture
def shared() -> Path:
    if not SHARED.is_dir():
        pytest.skip("/work/shared (reference data) is not present")
    return SHARED
