"""HTTP caching decisions: cache keys and freshness (pure; no I/O).

Keys follow the seed's normalisation: method case, scheme/host case, default ports, path kept,
fragment dropped, query order kept (repeated parameters may be order-sensitive), header names
lower-cased and values stripped of outer whitespace, caller-chosen vary headers, the versioned
local representation, and a digest of the credential identity — never a credential itself.
Freshness follows RFC 9111 §4.2 for a private cache: ``max-age`` (less ``Age``), else
``Expires`` minus ``Date``; ``no-cache`` means "always revalidate"; ``no-store`` means "do not
keep"; without explicit freshness an entry is stale at once (revalidated on next use, never
served on a heuristic).
"""

from __future__ import annotations

import contextvars
import email.utils
import functools
import hashlib
import re
import urllib.parse
from collections.abc import Iterator, Mapping
from contextlib import contextmanager

import msgspec

_DEFAULT_PORTS = {"http": 80, "https": 443}


# Set by ``revalidating`` for the running task (and the tasks it starts): ``--recheck``.
_REVALIDATE: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "patchula_revalidate", default=False
)


@contextmanager
def revalidating() -> Iterator[None]:
    """Send every request of the block, even with a fresh cache entry (``--recheck``).

    Each request is made conditional with the entry's validators (RFC 9111 §4.3.1), as a
    browser's reload does: the user asks for upstream's answer now, whatever ``max-age``
    said. The fetch facade reads ``must_revalidate``; an offline one still sends nothing.
    """
    token = _REVALIDATE.set(True)
    try:
        yield
    finally:
        _REVALIDATE.reset(token)


def must_revalidate() -> bool:
    """Whether the running task is inside ``revalidating``."""
    return _REVALIDATE.get()


def credential_digest(identity: str | None) -> str:
    """Return a short, stable digest naming a credential identity (``-`` for anonymous).

    ``identity`` may be anything that identifies the credential (even the token itself): only a
    SHA-256 digest of it ever reaches a key, a log or the database.
    """
    if not identity:
        return "-"
    return hashlib.sha256(b"patchula-credential\0" + identity.encode()).hexdigest()[:16]


def cache_key(
    method: str,
    url: str,
    *,
    vary: Mapping[str, str] | None = None,
    representation: str = "raw",
    credential: str | None = None,
    body: bytes | None = None,
) -> str:
    """Return the normalised cache key of a request.

    ``vary`` holds the request headers the response depends on (e.g. ``Accept``);
    ``representation`` names the stored document's format (``raw`` or a versioned compact
    representation such as ``npm-packument-v1``: raw and derived entries never share a key or
    validators); ``credential`` is a credential identity, digested here. ``body`` (a POST's
    request body, e.g. a GraphQL query) adds a SHA-256 digest of it, so two queries to one URL
    never share an entry; keys of requests without a body are unchanged by it.
    """
    target = _fast_target(url)
    if target is None:
        target = _target(url.strip())
    headers = _vary_part(tuple(vary.items())) if vary else ""
    identity = credential_digest(credential)
    key = f"{representation}|{method.strip().upper()}|{target}|{headers}|{identity}"
    if body is not None:
        key += f"|body-sha256:{hashlib.sha256(body).hexdigest()}"
    return key


def _target(url: str) -> str:
    """``scheme://authority/path[?query]`` of ``url`` normalised (the key's URL part).

    urllib's split is a tenth of the cost of a full httpx.URL parse. Userinfo is dropped:
    credentials count only through ``credential``. Raises ``ValueError`` for a bad port or
    bracket, as ``urllib.parse.urlsplit`` does.
    """
    parsed = urllib.parse.urlsplit(url)
    scheme = parsed.scheme.lower()
    host = (parsed.hostname or "").lower()
    if ":" in host:
        host = f"[{host}]"  # an IPv6 literal keeps its brackets
    port = parsed.port
    authority = host if port in {None, _DEFAULT_PORTS.get(scheme)} else f"{host}:{port}"
    path = parsed.path or "/"
    return f"{scheme}://{authority}{path}" + (f"?{parsed.query}" if parsed.query else "")


# A plain absolute URL: printable ASCII, no userinfo, no IPv6 literal. ``urlsplit`` reads it as
# scheme, authority (up to the first ``/?#``), path (up to ``?#``), query (up to ``#``).
_PLAIN_URL = re.compile(r"([A-Za-z][A-Za-z0-9+.-]*)://([^/?#@\[\]]*)(/[^?#]*)?(\?[^#]*)?(#.*)?")


def _fast_target(url: str) -> str | None:
    """``_target`` of a plain URL without a full split per call, else ``None``.

    A warm run makes one key per lookup, each for another URL: ``urlsplit``'s own memo (128
    URLs) never hits, and its split was most of the key's cost. The authority is normalised
    once per origin (``_origin``); the path and query are taken as they are, as ``_target``
    takes them.
    """
    if not url.isascii() or not url.isprintable() or " " in url:
        return None
    match = _PLAIN_URL.fullmatch(url)
    if match is None:
        return None
    scheme, authority, path, query, _ = match.groups()
    origin = _origin(scheme, authority)
    return origin + (path or "/") + (query if query and len(query) > 1 else "")


@functools.lru_cache(maxsize=256)
def _origin(scheme: str, authority: str) -> str:
    """``scheme://authority`` normalised as ``_target`` does (a scan talks to a few origins)."""
    return _target(f"{scheme}://{authority}/").removesuffix("/")


@functools.lru_cache(maxsize=256)
def _vary_part(vary: tuple[tuple[str, str], ...]) -> str:
    """The key's header part: ``name=value`` pairs, lower-case names, sorted, ``;``-joined."""
    return ";".join(
        f"{name.strip().lower()}={value.strip()}"
        for name, value in sorted(vary, key=lambda kv: kv[0].strip().lower())
    )


class Freshness(msgspec.Struct, frozen=True):
    """What a response allows: whether to store it and until when it is fresh (epoch seconds)."""

    storable: bool
    expires_at: float
    cache_control: str | None


def directives(cache_control: str | None) -> dict[str, str | None]:
    """Parse a ``Cache-Control`` value into lower-case directive names and raw values."""
    parsed: dict[str, str | None] = {}
    for part in (cache_control or "").split(","):
        name, sep, value = part.strip().partition("=")
        if name:
            parsed[name.lower()] = value.strip().strip('"') if sep else None
    return parsed


def freshness(status: int, headers: Mapping[str, str], fetched_at: float) -> Freshness:
    """Decide how a response may be cached; ``headers`` keys are lower-case.

    Only successful (2xx) responses are storable. ``fetched_at`` is the epoch second the response
    was received; ``expires_at`` is ``fetched_at`` itself when the response must be revalidated
    before any reuse.
    """
    cache_control = headers.get("cache-control")
    found = directives(cache_control)
    if not 200 <= status < 300 or "no-store" in found:  # noqa: PLR2004 - the 2xx class
        return Freshness(storable=False, expires_at=fetched_at, cache_control=cache_control)
    if "no-cache" in found:
        return Freshness(storable=True, expires_at=fetched_at, cache_control=cache_control)
    lifetime = _seconds(found.get("max-age"))
    if lifetime is None:
        lifetime = _expires_lifetime(headers)
    if lifetime is None:
        return Freshness(storable=True, expires_at=fetched_at, cache_control=cache_control)
    age = _seconds(headers.get("age")) or 0.0
    return Freshness(
        storable=True, expires_at=fetched_at + max(lifetime - age, 0.0), cache_control=cache_control
    )


def _seconds(value: str | None) -> float | None:
    if value is None:
        return None
    try:
        number = int(value.strip())
    except ValueError:
        return None
    return float(max(number, 0))


def _expires_lifetime(headers: Mapping[str, str]) -> float | None:
    """``Expires`` minus ``Date`` (RFC 9111 §4.2.1); an invalid ``Expires`` means "stale"."""
    expires = headers.get("expires")
    if expires is None:
        return None
    try:
        until = email.utils.parsedate_to_datetime(expires)
        date = email.utils.parsedate_to_datetime(headers.get("date") or expires)
    except (TypeError, ValueError, IndexError):
        return 0.0
    return max((until - date).total_seconds(), 0.0)
