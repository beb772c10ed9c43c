"""A persistent gist cache: a fragment seen before is never gisted twice.

Keyed by model, prompt version, gist settings and the fragment's content, so the same header
on every page of a site, or the same page at the next step of a task, costs nothing. Each
entry keeps what writing its gist cost, so a run can report the tokens its cache hits saved
apart from the tokens it spent. SQLite, safe across threads of one process and across
processes.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from contextlib import suppress
from pathlib import Path
from typing import NamedTuple


class CachedGist(NamedTuple):
    """A cached gist and the tokens writing it cost (input + output; ``0`` where unknown: an
    entry an older version wrote, or an extractive gist)."""

    gist: str
    tokens: int = 0


def gist_key(model: str, prompt_version: str, settings: str, content: str) -> str:
    blob = "\x1f".join((model, prompt_version, settings, content)).encode()
    return hashlib.sha256(blob).hexdigest()


class GistCache:
    def __init__(self, path: Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._lock = threading.Lock()
        self._conn = sqlite3.connect(self.path, check_same_thread=False, timeout=30)
        with self._lock, self._conn:
            self._conn.execute("PRAGMA journal_mode=WAL")
            self._conn.execute(
                "CREATE TABLE IF NOT EXISTS gists "
                "(key TEXT PRIMARY KEY, gist TEXT, tokens INTEGER NOT NULL DEFAULT 0)"
            )
            self._add_tokens_column()
        self.hits = 0
        self.misses = 0

    def _add_tokens_column(self) -> None:
        """A cache an older version wrote has no ``tokens``: its entries cost 0 (unknown)."""
        columns = {row[1] for row in self._conn.execute("PRAGMA table_info(gists)")}
        if "tokens" in columns:
            return
        with suppress(sqlite3.OperationalError):  # another process added it first
            self._conn.execute("ALTER TABLE gists ADD COLUMN tokens INTEGER NOT NULL DEFAULT 0")

    def get(self, key: str) -> str | None:
        found = self.get_entry(key)
        return None if found is None else found.gist

    def get_entry(self, key: str) -> CachedGist | None:
        """The cached gist and its cost, counting a hit or a miss."""
        found = self.peek_entry(key)
        with self._lock:
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
        return found

    def peek(self, key: str) -> str | None:
        """The cached gist, if any, without counting a hit or a miss."""
        found = self.peek_entry(key)
        return None if found is None else found.gist

    def peek_entry(self, key: str) -> CachedGist | None:
        """:meth:`peek` with the gist's cost."""
        with self._lock:
            row = self._conn.execute(
                "SELECT gist, tokens FROM gists WHERE key = ?", (key,)
            ).fetchone()
        return None if row is None else CachedGist(str(row[0]), int(row[1] or 0))

    def put(self, key: str, gist: str, tokens: int = 0) -> None:
        """Cache ``gist``, which cost ``tokens`` to write."""
        with self._lock, self._conn:
            self._conn.execute(
                "INSERT OR REPLACE INTO gists (key, gist, tokens) VALUES (?, ?, ?)",
                (key, gist, tokens),
            )

    def stats(self) -> dict[str, int]:
        with self._lock:
            size = self._conn.execute("SELECT COUNT(*) FROM gists").fetchone()[0]
        return {"hits": self.hits, "misses": self.misses, "entries": int(size)}

    def close(self) -> None:
        with self._lock:
            self._conn.close()

    def __enter__(self) -> GistCache:
        return self

    def __exit__(self, *exc_info: object) -> None:
        self.close()


class DryRunCache(GistCache):
    """A cache for planning: reads ``backing`` (if any), remembers what would be written in
    memory only, and never writes to disk; so a plan sees the hits a real run would get."""

    def __init__(self, backing: GistCache | None = None) -> None:
        self.path = backing.path if backing is not None else Path("(dry run)")
        self._backing = backing
        self._planned: dict[str, CachedGist] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def peek_entry(self, key: str) -> CachedGist | None:
        with self._lock:
            found = self._planned.get(key)
        if found is None and self._backing is not None:
            found = self._backing.peek_entry(key)
        return found

    def put(self, key: str, gist: str, tokens: int = 0) -> None:
        with self._lock:
            self._planned[key] = CachedGist(gist, tokens)

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "entries": len(self._planned)}

    def close(self) -> None:
        """The backing cache belongs to its owner: nothing to close."""
