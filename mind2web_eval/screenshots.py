"""Multimodal-Mind2Web's ``screenshot`` column: left out, or kept as a file path.

A row's screenshot is an image struct ``{bytes, path}`` (as ``datasets`` stores an
``Image``), a path, or nothing. It is never decoded (no PIL): by default it is left out of the
record, and with a folder (``webagent eval --screenshots DIR``) its bytes are written as they
are to ``DIR/<annotation_id>/<action_uid>.<png|jpg|...>`` and the step keeps that path
(``Step.screenshot``); a struct with a path and no bytes keeps its path.
"""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

from webagent.atomic import write_bytes_atomic

_MAGIC = (
    (b"\x89PNG\r\n\x1a\n", ".png"),
    (b"\xff\xd8\xff", ".jpg"),
    (b"GIF8", ".gif"),
    (b"BM", ".bmp"),
)
_UNSAFE = re.compile(r"[^A-Za-z0-9_.-]")


def suffix_of(image: bytes) -> str:
    """The file suffix the image's first bytes name (``.img`` when none does)."""
    if image[:4] == b"RIFF" and image[8:12] == b"WEBP":
        return ".webp"
    return next((suffix for magic, suffix in _MAGIC if image.startswith(magic)), ".img")


def _safe(name: Any) -> str:
    """A file-name part made of ``name`` (ids are uuids; anything else cannot escape)."""
    cleaned = _UNSAFE.sub("_", str(name)).strip(".")
    return cleaned or "_"


def keep_screenshot(record: dict[str, Any], folder: Path | None) -> dict[str, Any]:
    """``record`` without its ``screenshot`` (``folder`` None), or with it replaced by the path
    of the file it is kept as; a record without one is returned as it is."""
    if "screenshot" not in record:
        return record
    shot = record["screenshot"]
    rest = {key: value for key, value in record.items() if key != "screenshot"}
    if folder is None or shot is None:
        return rest
    if isinstance(shot, dict):
        image, given = shot.get("bytes"), shot.get("path")
        if isinstance(image, bytes) and image:
            where = folder / _safe(record.get("annotation_id")) / _safe(record.get("action_uid"))
            path = where.with_suffix(suffix_of(image))
            if not path.is_file():
                path.parent.mkdir(parents=True, exist_ok=True)
                write_bytes_atomic(path, image)
            shot = str(path)
        elif isinstance(given, str) and given:
            shot = given
    return {**rest, "screenshot": shot}  # anything else is named by the Step's validation
