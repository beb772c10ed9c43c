"""Safety: where the browser may go, and secrets that never land in a trace.

* :class:`DomainPolicy` decides which URLs are allowed (the start site by default).
* :class:`NavigationGuard` enforces it through Playwright request routing: a navigation to a
  disallowed URL (link, form post, ``window.location``, popup, or the first redirect hop) is
  answered with HTTP 204 inside the browser, so nothing leaves the machine and the page stays
  where it was. Every block is recorded and reported to the agent as a failed action.
* :class:`SecretStore` resolves ``{{secret:NAME}}`` placeholders at the last moment and
  redacts the values from everything written or shown.

Nothing read from a page changes the task, the policy or the limits: page text only ever
flows into observations and traces, as data.
"""

from __future__ import annotations

import html
import json
import re
from collections.abc import Callable, Iterable, Mapping
from pathlib import Path
from typing import TYPE_CHECKING, Any, TypeVar
from urllib.parse import unquote, urljoin, urlsplit

from pydantic import BaseModel

from live_runner.errors import SecretError

if TYPE_CHECKING:
    from playwright.sync_api import BrowserContext, Request, Route

#: schemes that never leave the browser
_LOCAL_SCHEMES = frozenset({"about", "data", "blob", "javascript", "chrome-error"})
#: what a blocked popup shows before the executor closes it
BLOCKED_PAGE = "<!DOCTYPE html><title>Blocked</title><p>Blocked by the live runner.</p>"
#: shortest secret value accepted: shorter ones would redact ordinary text everywhere
MIN_SECRET_CHARS = 4
SECRET_PLACEHOLDER = re.compile(r"\{\{\s*secret:([A-Za-z_][A-Za-z0-9_]*)\s*\}\}")

#: asked before an action that submits a form; gets a description, returns consent
ConfirmCallback = Callable[[str], bool]

T = TypeVar("T")


class DomainPolicy:
    """Allowed hosts (each with its subdomains) and allowed ``file://`` folders."""

    def __init__(self, domains: Iterable[str], file_roots: Iterable[Path] = ()) -> None:
        self.domains = tuple(sorted({d.lower().lstrip(".") for d in domains if d}))
        self.file_roots = tuple(Path(p).resolve() for p in file_roots)

    @classmethod
    def for_start_url(
        cls, url: str, extra_domains: Iterable[str] = (), file_roots: Iterable[Path] = ()
    ) -> DomainPolicy:
        """The start URL's site (``www.`` dropped, so its subdomains count) plus ``extra``."""
        parts = urlsplit(url)
        domains = list(extra_domains)
        roots = list(file_roots)
        if parts.scheme == "file":
            roots.append(Path(unquote(parts.path)).parent)
        elif parts.hostname:
            host = parts.hostname.lower()
            domains.append(host.removeprefix("www.") if host.count(".") >= 2 else host)
        return cls(domains, roots)

    def why_blocked(self, url: str) -> str | None:
        """None when ``url`` is allowed, else the reason in words."""
        parts = urlsplit(url)
        scheme = parts.scheme.lower()
        if scheme in _LOCAL_SCHEMES:
            return None
        if scheme == "file":
            path = Path(unquote(parts.path)).resolve()
            if any(path.is_relative_to(root) for root in self.file_roots):
                return None
            return f"file {path} is outside the allowed folders"
        if scheme not in ("http", "https", "ws", "wss"):
            return f"scheme {scheme!r} is not allowed"
        host = (parts.hostname or "").lower()
        if any(host == d or host.endswith("." + d) for d in self.domains):
            return None
        return f"{host or url} is not in the allowed domains ({', '.join(self.domains)})"

    def manifest(self) -> dict[str, Any]:
        return {"domains": list(self.domains), "file_roots": [str(p) for p in self.file_roots]}


def _opens_new_page(request: Request) -> bool:
    """Whether a navigation request is the first load of a new tab or popup (its frame does
    not exist yet). Answered with 204, such a tab would stay open unseen and in front."""
    from playwright.sync_api import Error as PlaywrightError

    try:
        _ = request.frame
    except PlaywrightError:
        return True
    return False


class BlockedRequest(BaseModel):
    url: str
    reason: str
    kind: str  # "navigation", "redirect", "resource" or "committed"


class NavigationGuard:
    """Request routing that keeps a browser context inside a :class:`DomainPolicy`."""

    def __init__(self, policy: DomainPolicy, *, block_resources: bool = False) -> None:
        self.policy = policy
        self.block_resources = block_resources
        self._blocked: list[BlockedRequest] = []

    def install(self, context: BrowserContext) -> None:
        context.route("**/*", self._handle)

    def record(self, url: str, reason: str, kind: str) -> None:
        self._blocked.append(BlockedRequest(url=url, reason=reason, kind=kind))

    def pending(self) -> list[BlockedRequest]:
        return list(self._blocked)

    def drain(self) -> list[BlockedRequest]:
        """Blocks since the last call (the executor reports them with the action)."""
        blocked, self._blocked = self._blocked, []
        return blocked

    def _handle(self, route: Route) -> None:
        from playwright.sync_api import Error as PlaywrightError

        request = route.request
        reason = self.policy.why_blocked(request.url)
        navigation = request.is_navigation_request()
        if reason is not None and (navigation or self.block_resources):
            self.record(request.url, reason, "navigation" if navigation else "resource")
            if not navigation:
                route.abort("blockedbyclient")
            elif _opens_new_page(request):
                # a popup's first load: give it a blank page, so it exists and can be closed
                route.fulfill(status=200, content_type="text/html", body=BLOCKED_PAGE)
            else:
                route.fulfill(status=204)  # the browser stays on the current page
            return
        if not navigation or not request.url.startswith(("http://", "https://")):
            route.continue_()
            return
        # fetch without following redirects, so a redirect elsewhere is stopped before it goes
        try:
            response = route.fetch(max_redirects=0)
        except PlaywrightError:
            route.continue_()  # let the browser meet (and show) the network error itself
            return
        location = response.headers.get("location")
        if 300 <= response.status < 400 and location:
            target = urljoin(request.url, location)
            reason = self.policy.why_blocked(target)
            if reason is not None:
                self.record(target, reason, "redirect")
                route.fulfill(status=204)
                return
        route.fulfill(response=response)


class SecretStore:
    """Named secret values, typed only through placeholders and redacted everywhere else."""

    def __init__(self, secrets: Mapping[str, str] | None = None) -> None:
        secrets = dict(secrets or {})
        short = [name for name, value in secrets.items() if len(value) < MIN_SECRET_CHARS]
        if short:
            raise SecretError(
                f"secrets {short} are shorter than {MIN_SECRET_CHARS} characters; such values "
                "cannot be redacted safely from traces"
            )
        self._secrets = secrets
        forms = {
            form: name
            for name, value in secrets.items()
            for form in (value, html.escape(value), json.dumps(value)[1:-1])
        }
        self._forms = sorted(forms.items(), key=lambda item: -len(item[0]))

    @classmethod
    def from_environ(cls, names: Iterable[str], environ: Mapping[str, str]) -> SecretStore:
        """The named environment variables (call this only in a CLI handler)."""
        names = list(names)
        missing = [n for n in names if n not in environ]
        if missing:
            raise SecretError(f"secret environment variables {missing} are not set")
        return cls({n: environ[n] for n in names})

    @property
    def names(self) -> tuple[str, ...]:
        return tuple(sorted(self._secrets))

    def __repr__(self) -> str:
        return f"SecretStore(names={list(self.names)})"

    def has_placeholder(self, text: str) -> bool:
        return SECRET_PLACEHOLDER.search(text) is not None

    def resolve(self, text: str) -> str:
        """``text`` with every placeholder replaced by its value; unknown names are an error."""

        def value(match: re.Match[str]) -> str:
            name = match.group(1)
            if name not in self._secrets:
                raise SecretError(
                    f"no secret named {name!r} was provided (known: {list(self.names)}); "
                    "pass it with --secret NAME and the environment variable NAME"
                )
            return self._secrets[name]

        return SECRET_PLACEHOLDER.sub(value, text)

    def redact(self, text: str) -> str:
        """``text`` with every secret value (raw, HTML- or JSON-escaped) put back as placeholder."""
        for form, name in self._forms:
            if form in text:
                text = text.replace(form, "{{secret:" + name + "}}")
        return text

    def matches(self, text: str) -> bool:
        """Whether ``text`` holds a secret value."""
        return any(form in text for form, _ in self._forms)

    def redact_data(self, data: T) -> T:
        """A copy of JSON-like ``data`` with every string redacted."""
        if not self._forms:
            return data
        if isinstance(data, str):
            return self.redact(data)  # type: ignore[return-value]
        if isinstance(data, dict):
            return {self.redact_data(k): self.redact_data(v) for k, v in data.items()}  # type: ignore[return-value]
        if isinstance(data, list | tuple):
            return type(data)(self.redact_data(v) for v in data)
        return data
