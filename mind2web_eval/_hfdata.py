"""Hugging Face forms of Mind2Web, read through ``datasets`` (imported only when needed).

Parquet files are streamed (``streaming=True``), ``save_to_disk`` folders are memory-mapped,
so neither is loaded whole. A hub name is tried only when asked for (``hf:NAME[:SPLIT]``);
with no network it fails with a clear :class:`DatasetError`. Image columns (Multimodal-Mind2Web's
``screenshot``) are read undecoded, as ``{bytes, path}``: nothing here needs PIL.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path
from types import ModuleType
from typing import Any

from webagent.errors import DatasetError, MissingDependencyError

RawRecord = tuple[str, int, Any]


def _datasets() -> ModuleType:
    try:
        import datasets
    except ImportError as exc:
        raise MissingDependencyError("datasets", "data") from exc
    datasets.disable_progress_bars()
    module: ModuleType = datasets
    return module


def is_saved_dataset(folder: Path) -> bool:
    """A ``Dataset.save_to_disk`` folder (or a ``DatasetDict`` one)."""
    return (folder / "dataset_info.json").is_file() or (folder / "dataset_dict.json").is_file()


def _rows(name: str, rows: Any) -> Iterator[RawRecord]:
    for index, row in enumerate(_undecoded(rows)):
        yield name, index, dict(row)


def _undecoded(data: Any) -> Any:
    """``data`` (a Dataset or an IterableDataset) with its image columns left as stored."""
    image = _datasets().Image
    for name, feature in (getattr(data, "features", None) or {}).items():
        if isinstance(feature, image) and feature.decode:
            data = data.cast_column(name, image(decode=False))
    return data


def iter_parquet(path: Path) -> Iterator[RawRecord]:
    datasets = _datasets()
    try:
        stream = datasets.load_dataset(
            "parquet", data_files=[str(path)], split="train", streaming=True
        )
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{path}: cannot read as parquet: {exc}") from exc
    yield from _rows(str(path), stream)


def iter_saved(folder: Path) -> Iterator[RawRecord]:
    datasets = _datasets()
    try:
        loaded = datasets.load_from_disk(str(folder))
    except (OSError, ValueError) as exc:
        raise DatasetError(f"{folder}: cannot read the saved dataset: {exc}") from exc
    if isinstance(loaded, datasets.DatasetDict):
        for split, part in loaded.items():
            yield from _rows(f"{folder}/{split}", part)
    else:
        yield from _rows(str(folder), loaded)


def load_hub(name: str, split: str) -> Any:
    """The hub's ``name`` (``OWNER/NAME``), one split, streamed: the only call that may
    reach the network."""
    return _datasets().load_dataset(name, split=split, streaming=True)


def iter_hub(spec: str) -> Iterator[RawRecord]:
    """``OWNER/NAME[:SPLIT]`` from the Hugging Face hub, streamed."""
    name, _, split = spec.partition(":")
    try:
        stream = load_hub(name, split or "train")
        yield from _rows(f"hf:{name}:{split or 'train'}", stream)
    except (OSError, ValueError, ConnectionError) as exc:
        raise DatasetError(
            f"hf:{spec}: cannot read from the Hugging Face hub ({exc}); download the data and "
            "pass its local folder instead"
        ) from exc
