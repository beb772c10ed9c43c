"""``--batch-submit``: one request round through the OpenAI Batch API (Files + Batches).

The round's file is uploaded (``purpose="batch"``), a batch is created on
``/v1/chat/completions`` and its id is written into ``rounds.json`` at once, so that a run
killed while it waits polls the same batch again instead of paying for a second one. The
batch is polled with a progress line until it ends; its output (and error) file is saved as
``round-NNN.results.jsonl`` beside the round for :meth:`BatchFolder.ingest`.
"""

from __future__ import annotations

import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any, TextIO

from webagent.errors import FatalModelError, MissingDependencyError
from webagent.model.batch_rounds import CHAT_URL, BatchFolder, Round
from webagent.model.settings import ModelSettings

#: the states a batch does not leave
FINISHED = frozenset({"completed", "failed", "expired", "cancelled"})


def batch_client(settings: ModelSettings) -> Any:
    """An ``openai.OpenAI`` client for the Batch API of ``settings``' endpoint."""
    try:
        from openai import OpenAI
    except ImportError as exc:
        raise MissingDependencyError("openai", "all") from exc
    key = settings.api_key.get_secret_value() if settings.api_key else None
    if key is None and settings.base_url is None:
        raise FatalModelError("--batch-submit needs an API key for OpenAI: set OPENAI_API_KEY")
    return OpenAI(
        api_key=key or "not-needed",
        base_url=settings.base_url,
        timeout=settings.timeout_s,
        max_retries=settings.max_retries,
    )


def submit_round(
    folder: BatchFolder,
    round_: Round,
    client: Any,
    *,
    poll_s: float = 30.0,
    sleep: Callable[[float], None] = time.sleep,
    stream: TextIO = sys.stderr,
) -> tuple[Path, str]:
    """Submit ``round_`` (unless it was submitted before), wait for it, save its results.

    Returns the results file and the batch id; a batch that fails, expires or is cancelled
    is a :class:`FatalModelError` (its round stays waiting, its steps pending)."""
    batch_id = round_.batch_id
    if batch_id is None:
        path = folder.path / round_.file
        uploaded = client.files.create(file=(path.name, path.read_bytes()), purpose="batch")
        batch = client.batches.create(
            input_file_id=uploaded.id, endpoint=CHAT_URL, completion_window="24h"
        )
        batch_id = str(batch.id)
        folder.set_batch_id(round_.number, batch_id)
    batch = client.batches.retrieve(batch_id)
    while batch.status not in FINISHED:
        _progress(stream, round_, batch)
        sleep(poll_s)
        batch = client.batches.retrieve(batch_id)
    _progress(stream, round_, batch)
    if batch.status != "completed":
        raise FatalModelError(
            f"batch {batch_id} (round {round_.number}) ended {batch.status}; its requests stay "
            "pending: run the same command to submit them again"
        )
    texts = [
        client.files.content(file_id).text
        for file_id in (batch.output_file_id, getattr(batch, "error_file_id", None))
        if file_id
    ]
    results = folder.results_path(round_.number)
    results.write_text("".join(t if t.endswith("\n") else t + "\n" for t in texts if t))
    return results, batch_id


def _progress(stream: TextIO, round_: Round, batch: Any) -> None:
    counts = getattr(batch, "request_counts", None)
    done = f" {counts.completed + counts.failed}/{counts.total}" if counts else ""
    print(f"batch round {round_.number} ({batch.id}): {batch.status}{done}", file=stream)
