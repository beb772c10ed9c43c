"""A persistent gist cache: a fragment seen before is never gisted twice.

Keyed by model, prompt version, gist settings and the fragment's content, so the same header
on every page of a site, or the same page at the next step of a task, costs nothing.
SQLite, safe across threads of one process and across processes.
"""

from __future__ import annotations

import hashlib
import sqlite3
import threading
from pathlib import Path


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
            self._conn.execute("CREATE TABLE IF NOT EXISTS gists (key TEXT PRIMARY KEY, gist TEXT)")
        self.hits = 0
        self.misses = 0

    def get(self, key: str) -> str | None:
        found = self.peek(key)
        with self._lock:
            if found is None:
                self.misses += 1
            else:
                self.hits += 1
        return found

    def peek(self, key: str) -> str | None:
        """The cached gist, if any, without counting a hit or a miss."""
        with self._lock:
            row = self._conn.execute("SELECT gist FROM gists WHERE key = ?", (key,)).fetchone()
        return None if row is None else str(row[0])

    def put(self, key: str, gist: str) -> None:
        with self._lock, self._conn:
            self._conn.execute("INSERT OR REPLACE INTO gists VALUES (?, ?)", (key, gist))

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
        self._planned: dict[str, str] = {}
        self._lock = threading.Lock()
        self.hits = 0
        self.misses = 0

    def peek(self, key: str) -> str | None:
        with self._lock:
            found = self._planned.get(key)
        if found is None and self._backing is not None:
            found = self._backing.peek(key)
        return found

    def put(self, key: str, gist: str) -> None:
        with self._lock:
            self._planned[key] = gist

    def stats(self) -> dict[str, int]:
        return {"hits": self.hits, "misses": self.misses, "entries": len(self._planned)}

    def close(self) -> None:
        """The backing cache belongs to its owner: nothing to close."""
