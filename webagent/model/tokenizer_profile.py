"""What a server's tokenizer took to learn, kept between runs, keyed by server and model.

Learning a llama.cpp server's tokenizer takes about ten requests (which endpoint counts,
which special token lets one request count many texts, checked on probe texts), and building
an agent counts a few fixed texts (the parts of its prompts its budgets are made of): a
one-step command would pay them every time. :class:`ProfileFile` keeps both in a JSON file
(``tokenizers.json`` beside the gist cache). A profile is used only after one request shows
that the server's tokenizer is still the one profiled: the token ids it gives
:data:`FINGERPRINT` are the ones it gave then; any other answer and it is learnt again.
"""

from __future__ import annotations

import json
import logging
import os
import tempfile
from pathlib import Path

from pydantic import BaseModel, Field, ValidationError

from webagent.errors import ModelError
from webagent.model.server_extras import (
    IDS_ENDPOINTS,
    Batched,
    BatchSpec,
    Counter,
    NotOffered,
    find_batch_counter,
    find_token_counter,
    token_counter,
    token_ids,
    tokenizer,
)

log = logging.getLogger(__name__)

#: the file, beside the gist cache, that keeps the profiles
PROFILE_FILE = "tokenizers.json"
#: a text whose token ids tell one tokenizer from another (words, markup, spaces, non-ASCII)
FINGERPRINT = 'Fingerprint: <div id="n1">Zürich 名 42</div>\n  tokens'
#: fixed counts kept per profile at most (building an agent counts about a dozen)
MAX_COUNTS = 512


class TokenizerProfile(BaseModel):
    method: str = Field(description="the tokenizer endpoint (server_extras.COUNT_ENDPOINTS)")
    fingerprint: list[int] = Field(description="the token ids of FINGERPRINT")
    batch_probed: bool = False
    batch: BatchSpec | None = Field(default=None, description="how one request counts many")
    counts: dict[str, int] = Field(default_factory=dict, description="fixed texts' counts")


class ProfileFile:
    """Profiles by ``"<server root> <model>"``, in one JSON file; unreadable is empty."""

    def __init__(self, path: Path) -> None:
        self.path = path

    def load(self, key: str) -> TokenizerProfile | None:
        entry = self._read().get(key)
        if entry is None:
            return None
        try:
            return TokenizerProfile.model_validate(entry)
        except ValidationError:
            log.info("%s: the profile of %s is unreadable; learning it again", self.path, key)
            return None

    def save(self, key: str, profile: TokenizerProfile) -> None:
        """Write ``profile`` (whole file written anew, atomically; best effort: a file that
        cannot be written only costs the next run its requests)."""
        profiles = self._read()
        kept = dict(list(profile.counts.items())[-MAX_COUNTS:])
        profiles[key] = profile.model_copy(update={"counts": kept}).model_dump(mode="json")
        try:
            self.path.parent.mkdir(parents=True, exist_ok=True)
            handle, tmp = tempfile.mkstemp(prefix=".tokenizers-", dir=self.path.parent)
            with os.fdopen(handle, "w", encoding="utf-8") as out:
                json.dump(profiles, out, ensure_ascii=False, indent=1)
            os.replace(tmp, self.path)
        except OSError as exc:
            log.warning("cannot keep the tokenizer profile in %s: %s", self.path, exc)

    def _read(self) -> dict[str, object]:
        try:
            data = json.loads(self.path.read_text(encoding="utf-8"))
        except FileNotFoundError:
            return {}
        except (OSError, ValueError) as exc:
            log.info("%s is unreadable (%s); tokenizers are learnt again", self.path, exc)
            return {}
        return data if isinstance(data, dict) else {}


class ServerTokenizer:
    """A server's tokenizer endpoints, learnt by probing or read from a verified profile.

    ``profiles`` None: nothing is kept between runs (every build probes the server).
    """

    def __init__(
        self,
        root: str,
        model: str,
        api_key: str | None,
        timeout: float,
        profiles: ProfileFile | None,
    ) -> None:
        self._root, self._api_key, self._timeout = root, api_key, timeout
        self._key = f"{root} {model}"
        self._profiles = profiles
        self.profile: TokenizerProfile | None = None

    def find(self) -> tuple[str, Counter] | None:
        """``(method, counter)`` of the server's tokenizer, or None where it has none."""
        known = self._verified()
        if known is not None:
            self.profile = known
            return known.method, token_counter(
                self._root, self._api_key, self._timeout, known.method
            )
        try:
            method, counter = find_token_counter(self._root, self._api_key, self._timeout)
        except NotOffered:
            return None
        if self._profiles is not None:
            self.profile = self._learnt(method)
        return method, counter

    def batch(self, method: str, count: Counter) -> Batched | None:
        """The batch counter: the profile's where it has probed one, else probed now."""
        root, key, timeout = self._root, self._api_key, self._timeout
        profile = self.profile
        if profile is not None and profile.batch_probed:
            if profile.batch is None:
                return None
            spec = profile.batch
            tokenize = tokenizer(root, key, timeout, method)
            return Batched(tokenize, spec.separator, spec.separator_id, spec.bos, count)
        found = find_batch_counter(root, key, timeout, method, count)
        if profile is not None:
            profile.batch_probed, profile.batch = True, found.spec if found else None
            self._save()
        return found

    def keep_counts(self, counts: dict[str, int]) -> None:
        """Keep ``counts`` (fixed texts: what building an agent counts) for the next run."""
        profile = self.profile
        if profile is None or self._profiles is None:
            return
        new = {t: n for t, n in counts.items() if profile.counts.get(t) != n}
        if new:
            profile.counts.update(new)
            self._save()

    def _verified(self) -> TokenizerProfile | None:
        if self._profiles is None:
            return None
        profile = self._profiles.load(self._key)
        if profile is None or profile.method not in IDS_ENDPOINTS:
            return None
        try:
            ids = token_ids(self._root, self._api_key, self._timeout, profile.method, FINGERPRINT)
        except (NotOffered, ModelError):
            return None
        return profile if ids == profile.fingerprint else None

    def _learnt(self, method: str) -> TokenizerProfile | None:
        try:
            ids = token_ids(self._root, self._api_key, self._timeout, method, FINGERPRINT)
        except NotOffered:
            return None
        profile = TokenizerProfile(method=method, fingerprint=ids)
        self.profile = profile
        self._save()
        return profile

    def _save(self) -> None:
        if self._profiles is not None and self.profile is not None:
            self._profiles.save(self._key, self.profile)
