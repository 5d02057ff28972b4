"""Bearer token challenges: parse ``WWW-Authenticate``, fetch a token from its realm, cache it.

The fetcher answers a ``401`` carrying ``WWW-Authenticate: Bearer realm=…,service=…,scope=…``
with ``GET realm?service=…&scope=…`` and sends the request again with ``Authorization: Bearer``
(the distribution token authentication specification, ``distribution/distribution:
docs/spec/auth/token.md``; RFC 6750 §3). This module owns the scheme, never a registry: the
challenge is parsed generically (RFC 7235 §2.1 and §4.1: auth-params, quoted strings, several
challenges in one header), realms are whatever the server names.

Tokens live in memory per (host, scope, credential identity digest) and, when obtained
anonymously, on disk as ``anonymous-registry-pull-token-v1`` HTTP entries keyed
``anonymous-registry-pull-token-v1|<host>|<image>``, the image from the request's own
``repository:<image>:pull`` scope (seed 003: "Anonymous registry pull tokens …"): only the
bearer and its expiry are stored, never a credential or anything of the challenge (realm,
service, its scope), and the entry counts in the HTTP body budget like any other. A token
obtained with a credential, or answered with ``Cache-Control: no-store``, stays in memory.
Token values never appear in a ``repr``, a key, a message or a log.
"""

from __future__ import annotations

import json
import math
import re
from collections.abc import Awaitable, Callable, Iterable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from urllib.parse import urlencode, urlsplit, urlunsplit

import msgspec

from patchula.cache import Cache, HttpEntry
from patchula.errors import RegistryError
from patchula.http.caching import directives
from patchula.http.flight import Flight
from patchula.models import FetchResponse

__all__ = [
    "DEFAULT_EXPIRES_IN",
    "EXPIRY_MARGIN",
    "MAX_LIFETIME",
    "REPRESENTATION",
    "BearerTokens",
    "Challenge",
    "Token",
    "bearer_challenge",
    "disk_key",
    "parse_challenges",
    "read_token",
    "token_url",
    "unusable_bearer",
]

REPRESENTATION = "anonymous-registry-pull-token-v1"
# The token specification's default lifetime when a response gives no ``expires_in``.
DEFAULT_EXPIRES_IN = 60.0
# Seconds taken off every lifetime, so a token is not sent in its last moments (clock skew,
# the request's own travel time).
EXPIRY_MARGIN = 10.0
# The longest a token is kept, whatever it says (seed 003).
MAX_LIFETIME = 3600.0
# The longest token sent as a header: registries' JWTs are a few KiB; a megabyte "token" is
# a broken or hostile token service, not a credential.
MAX_TOKEN_CHARS = 64 * 1024

# RFC 9110 §5.6.2 tchar, and RFC 7235 §2.1 token68.
_TOKEN = re.compile(r"[!#$%&'*+\-.^_`|~0-9A-Za-z]+")
_TOKEN68 = re.compile(r"[A-Za-z0-9\-._~+/]+=*")
_UNQUOTED = re.compile(r'[^\s,"]+')
# A bearer token as it may be sent in a header: visible ASCII, no spaces (RFC 6750 §2.1 allows
# token68; registries send JWTs and opaque strings of these characters).
_SENDABLE = re.compile(r"[\x21-\x7e]+")
# ``repository:<name>:pull``: the one scope an anonymous pull token is persisted for; ``<name>``
# per the distribution spec's repository name grammar (lower-case components).
_PULL_SCOPE = re.compile(
    r"repository:(?P<name>[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*"
    r"(?:/[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*)*):pull"
)


class Challenge(msgspec.Struct, frozen=True):
    """One challenge of a ``WWW-Authenticate`` header (RFC 7235 §2.1).

    ``scheme`` is lower-case; ``params`` maps lower-case auth-param names to their values
    (quoted strings unescaped; the first of a repeated name wins); ``token68`` is the bare
    credential form some schemes use instead of params.
    """

    scheme: str
    params: Mapping[str, str] = msgspec.field(default_factory=dict)
    token68: str | None = None


def parse_challenges(values: Iterable[str]) -> list[Challenge]:
    """Parse ``WWW-Authenticate`` values (each a ``1#challenge`` list) into challenges, in order.

    ``Bearer realm="https://a/token",service="s", Basic realm="x"`` is two challenges.
    Malformed parts are skipped, never raised: a damaged header just yields fewer challenges.
    """
    found: list[Challenge] = []
    for value in values:
        found.extend(_parse_one(value))
    return found


def _parse_one(text: str) -> list[Challenge]:
    out: list[Challenge] = []
    scheme: str | None = None
    params: dict[str, str] = {}
    token68: str | None = None
    i, n = 0, len(text)

    def close() -> None:
        if scheme is not None:
            out.append(Challenge(scheme.lower(), dict(params), token68))

    while i < n:
        while i < n and text[i] in " \t,":
            i += 1
        match = _TOKEN.match(text, i)
        if match is None:
            if i < n:
                i = _skip_item(text, i)  # not a token: skip to the next list item
            continue
        name, after = match[0], match.end()
        j = after
        while j < n and text[j] in " \t":
            j += 1
        if scheme is not None and j < n and text[j] == "=":
            # ``name = value``: an auth-param of the current challenge (BWS allowed around "=").
            j += 1
            while j < n and text[j] in " \t":
                j += 1
            value, i = _param_value(text, j)
            if value is not None:
                params.setdefault(name.lower(), value)
            continue
        # A token not followed by "=" starts a new challenge; it may carry a token68.
        close()
        scheme, params, token68 = name, {}, None
        i = j
        bare = _TOKEN68.match(text, i) if j > after else None
        if bare is not None:
            k = bare.end()
            while k < n and text[k] in " \t":
                k += 1
            if k >= n or text[k] == ",":
                token68, i = bare[0], k
    close()
    return out


def _param_value(text: str, i: int) -> tuple[str | None, int]:
    """An auth-param value (token or quoted-string) at ``i``, and where parsing goes on."""
    n = len(text)
    if i < n and text[i] == '"':
        chars: list[str] = []
        i += 1
        while i < n and text[i] != '"':
            if text[i] == "\\" and i + 1 < n:  # quoted-pair (RFC 9110 §5.6.4)
                i += 1
            chars.append(text[i])
            i += 1
        return "".join(chars), i + 1
    # A token by RFC 7235; read leniently up to the next separator, as browsers and the docker
    # client do, so an unquoted URL (``realm=https://…``) survives.
    match = _UNQUOTED.match(text, i)
    if match is None:
        return None, _skip_item(text, i)
    return match[0], match.end()


def _skip_item(text: str, i: int) -> int:
    """The index after the next list separator (``,``) from ``i``, outside quoted strings."""
    quoted = False
    n = len(text)
    while i < n:
        char = text[i]
        if char == '"':
            quoted = not quoted
        elif char == "\\" and quoted:
            i += 1
        elif char == "," and not quoted:
            return i + 1
        i += 1
    return n


class BearerChallenge(msgspec.Struct, frozen=True):
    """A ``Bearer`` challenge with an http(s) ``realm``: where and for what to ask a token."""

    realm: str
    service: str | None
    scope: str | None


def bearer_challenge(response: FetchResponse) -> BearerChallenge | None:
    """The first ``Bearer`` challenge of ``response`` whose realm is an http(s) URL, or ``None``.

    A realm that is no absolute http(s) URL (``Bearer realm="GitHub"``, ``file:…``) is not a
    token service to ask: such a challenge is skipped (the 401 stays the answer).
    """
    values = [value for name, value in response.headers if name == "www-authenticate"]
    for challenge in parse_challenges(values):
        realm = challenge.params.get("realm", "")
        if challenge.scheme != "bearer" or token_url(realm, None, ()) is None:
            continue
        return BearerChallenge(
            realm=realm.strip(),
            service=challenge.params.get("service") or None,
            scope=challenge.params.get("scope") or None,
        )
    return None


def unusable_bearer(response: FetchResponse) -> str | None:
    """Why ``response``'s ``Bearer`` challenges could not be answered, or ``None``.

    Said on a 401 whose only ``Bearer`` challenges name no absolute http(s) realm
    (``realm="file:///etc/passwd"``, ``realm="GitHub"``): no token is asked from such a
    realm, and the row says so instead of asking for a login that would not help. The realm
    itself is server text and is not repeated; only its scheme, when it is a short token.
    ``None`` when there is no ``Bearer`` challenge or one is usable (``bearer_challenge``).
    """
    values = [value for name, value in response.headers if name == "www-authenticate"]
    bearers = [c for c in parse_challenges(values) if c.scheme == "bearer"]
    if not bearers or bearer_challenge(response) is not None:
        return None
    scheme = urlsplit(bearers[0].params.get("realm", "").strip()).scheme.lower()
    named = f" (a {scheme}: URL)" if re.fullmatch(r"[a-z][a-z0-9+.-]{0,15}", scheme) else ""
    return f"its Bearer challenge names no http(s) token realm{named}; no token was asked"


def token_url(realm: str, service: str | None, scopes: Iterable[str]) -> str | None:
    """``realm?service=…&scope=…`` (one ``scope`` per item), or ``None`` for a non-http(s) realm.

    A query the realm already has is kept; its fragment is dropped. token.md §"Requesting a
    Token": ``scope`` is repeated for several resources.
    """
    parts = urlsplit(realm.strip())
    if parts.scheme.lower() not in {"http", "https"} or not parts.hostname:
        return None
    pairs = ([("service", service)] if service else []) + [("scope", s) for s in scopes]
    query = "&".join(q for q in (parts.query, urlencode(pairs)) if q)
    return urlunsplit((parts.scheme.lower(), parts.netloc, parts.path or "/", query, ""))


@dataclass(frozen=True, slots=True)
class Token:
    """A bearer token: the value (never shown), its expiry and whether it may go to disk.

    ``expires_at`` is epoch seconds (already less the margin); ``source`` names the credential
    sent on the token request (``~/.docker/config.json`` …), ``None`` for an anonymous one.
    """

    value: str = field(repr=False)
    expires_at: float
    persist: bool
    source: str | None = None


def read_token(response: FetchResponse) -> Token:
    """The token of a successful token-service ``response`` (token.md, "Token Response Fields").

    ``token`` or else ``access_token``; the expiry counts from ``issued_at`` (RFC 3339; never
    later than the response's own time) or the response time, plus ``expires_in`` (missing or
    not a number: 60 s), minus the response's ``Age``, minus ``EXPIRY_MARGIN``, and never more
    than ``MAX_LIFETIME`` after the response. It may be persisted unless the response said
    ``Cache-Control: no-store`` or the request carried a credential. Raises ``RegistryError``
    (naming the token service's host, never the body) for a body without a usable token.
    """
    host = urlsplit(response.url).netloc.rpartition("@")[2] or "?"  # with its port
    try:
        document = json.loads(response.content)
    except (ValueError, RecursionError):
        document = None
    value = None
    if isinstance(document, dict):
        for name in ("token", "access_token"):
            candidate = document.get(name)
            if (
                isinstance(candidate, str)
                and len(candidate) <= MAX_TOKEN_CHARS
                and _SENDABLE.fullmatch(candidate)
            ):
                value = candidate
                break
    if value is None or not isinstance(document, dict):
        msg = f"the token service at {host} answered without a usable bearer token"
        raise RegistryError(msg)
    received = response.fetched_at.timestamp()
    issued = _rfc3339(document.get("issued_at"))
    start = min(issued, received) if issued is not None else received
    given = document.get("expires_in")
    lifetime = DEFAULT_EXPIRES_IN
    if isinstance(given, int | float) and not isinstance(given, bool) and math.isfinite(given):
        lifetime = float(given)
    age = _age(response.header("age"))
    expires = start + lifetime - age - EXPIRY_MARGIN
    expires = min(expires, received + MAX_LIFETIME)
    no_store = "no-store" in directives(response.header("cache-control"))
    return Token(
        value=value,
        expires_at=expires,
        persist=not no_store and response.credential is None,
        source=response.credential,
    )


def _rfc3339(value: object) -> float | None:
    if not isinstance(value, str):
        return None
    try:
        moment = datetime.fromisoformat(value.strip())
    except ValueError:
        return None
    return (moment if moment.tzinfo else moment.replace(tzinfo=UTC)).timestamp()


def _age(value: str | None) -> float:
    """The ``Age`` header (RFC 9111 §5.1) in seconds; 0 when absent or not a number."""
    try:
        return max(float(int((value or "0").strip())), 0.0)
    except ValueError:
        return 0.0


def disk_key(host: str, scope: str) -> str | None:
    """The cache key of an anonymous pull token for ``scope`` on ``host`` (``None``: not kept).

    Only a single ``repository:<name>:pull`` scope is kept on disk:
    ``anonymous-registry-pull-token-v1|<host>|<name>``.
    """
    match = _PULL_SCOPE.fullmatch(scope)
    return f"{REPRESENTATION}|{host}|{match['name']}" if match is not None else None


# (host, scope, credential identity digest): who a token in memory is for.
_Key = tuple[str, str, str]
# A token, or the token service's own 401/403 answer (a refused credential or a private image).
Outcome = Token | FetchResponse


class BearerTokens:
    """The run's bearer tokens: memory, disk for anonymous pull tokens, one refresh at a time.

    ``cache`` (may be ``None``) holds the persisted tokens, read through ``read`` (the
    fetcher's batched reads); ``now`` gives epoch seconds. Not thread-safe: one event loop.
    """

    def __init__(
        self,
        cache: Cache | None,
        read: Callable[[str], Awaitable[HttpEntry | None]] | None,
        now: Callable[[], float],
    ) -> None:
        self._cache = cache
        self._read = read
        self._now = now
        self._memory: dict[_Key, Token] = {}
        self._flights: dict[_Key, Flight[Outcome]] = {}
        # Disk reads per disk key, one per run: concurrent first requests for an image wait
        # for the one read (a second read would find what memory has by then).
        self._disk_reads: dict[str, Flight[None]] = {}

    def __repr__(self) -> str:
        return f"BearerTokens({len(self._memory)} in memory)"

    async def cached(self, host: str, scope: str, identity: str) -> Token | None:
        """An unexpired token for ``scope`` on ``host`` (memory, then disk), else ``None``.

        ``identity`` digests the credential configured for the request's URL (``-``: none);
        only anonymous requests read persisted tokens. The disk is read once per run and
        image: concurrent callers wait for that read rather than meet a 401 each.
        """
        key = (host, scope, identity)
        token = self._memory.get(key)
        if token is not None and token.expires_at > self._now():
            return token
        stored = disk_key(host, scope) if identity == "-" else None
        if stored is None or self._read is None:
            return None
        flight = self._disk_reads.get(stored)
        if flight is not None:
            await flight.wait()
        else:
            flight = self._disk_reads[stored] = Flight()
            try:
                found = await self._load(stored)
            except BaseException as exc:
                del self._disk_reads[stored]  # the next caller reads again
                flight.fail(exc)
                raise
            if found is not None:
                self._memory.setdefault(key, found)
            flight.succeed(None)
        # From memory: a token read from disk and evicted since must not come back.
        token = self._memory.get(key)
        return token if token is not None and token.expires_at > self._now() else None

    async def _load(self, stored: str) -> Token | None:
        """The unexpired token persisted under ``stored``, or ``None``."""
        if self._read is None:
            return None
        entry = await self._read(stored)
        if entry is None or entry.representation != REPRESENTATION:
            return None
        if entry.expires_at <= self._now():
            return None
        try:
            value = entry.body.decode("ascii")
        except UnicodeDecodeError:
            return None
        if not _SENDABLE.fullmatch(value):
            return None
        return Token(value=value, expires_at=entry.expires_at, persist=True)

    async def answer(
        self,
        host: str,
        scope: str | None,
        identity: str,
        challenge: BearerChallenge,
        stale: Token | None,
        fetch: Callable[[str], Awaitable[FetchResponse]],
    ) -> Outcome:
        """The token to answer ``challenge`` with (or the token service's refusal).

        ``stale`` is the token the challenged request carried: it is evicted (memory and
        disk) unless another caller already replaced it, whose token is then used. Otherwise a
        fresh token another caller obtained meanwhile is used, or one is requested with
        ``fetch`` (``GET realm?service=…&scope=…``, the challenge's scope, else ``scope``);
        concurrent callers for one (host, scope) share that request. Raises ``RegistryError``
        when the token service answers otherwise than 2xx/401/403 or without a usable token.
        """
        wanted = challenge.scope or scope
        keys = [(host, s, identity) for s in dict.fromkeys(x for x in (scope, wanted) if x)]
        keys = keys or [(host, "", identity)]
        evicted = self._evict(keys, stale) if stale is not None else False
        now = self._now()
        for key in keys:
            token = self._memory.get(key)
            if token is not None and token.expires_at > now:
                return token
        leader = keys[-1]
        shared = self._flights.get(leader)
        if shared is not None:
            return await shared.wait()
        flight: Flight[Outcome] = Flight()
        self._flights[leader] = flight
        try:
            stored = disk_key(host, scope) if scope and identity == "-" else None
            if evicted and stored is not None and self._cache is not None:
                # By the leader, before its token request: the disk never keeps a revoked
                # token after a run that failed to replace it, nor drops its replacement.
                await self._cache.delete_http(stored)
            outcome = await self._request(host, challenge, wanted, keys, fetch, stored)
        except BaseException as exc:
            flight.fail(exc)
            raise
        else:
            flight.succeed(outcome)
            return outcome
        finally:
            del self._flights[leader]

    async def _request(
        self,
        host: str,
        challenge: BearerChallenge,
        scope: str | None,
        keys: list[_Key],
        fetch: Callable[[str], Awaitable[FetchResponse]],
        stored: str | None,
    ) -> Outcome:
        """Ask the token service; keep the token in memory and, if ``stored``, on disk there."""
        url = token_url(challenge.realm, challenge.service, scope.split() if scope else ())
        if url is None:  # bearer_challenge only returns http(s) realms
            msg = f"{host} named a token service that is not an http(s) URL"
            raise RegistryError(msg)
        response = await fetch(url)
        if response.status in {401, 403}:
            return response
        if not 200 <= response.status < 300:  # noqa: PLR2004 - the 2xx class
            service = urlsplit(url).netloc.rpartition("@")[2]  # with its port
            msg = f"{host} asked for a bearer token; the token service at {service} answered "
            msg += f"HTTP {response.status}"
            raise RegistryError(msg)
        token = read_token(response)
        for key in keys:
            self._memory[key] = token
        if self._cache is None or stored is None:
            return token
        if token.persist and token.expires_at > self._now():
            await self._cache.put_http(_entry(stored, token, self._now()))
        else:
            # Memory only (no-store, a credential): an older persisted token must not outlive
            # it on disk and be sent again by the next run.
            await self._cache.delete_http(stored)
        return token

    def _evict(self, keys: list[_Key], stale: Token) -> bool:
        """Drop ``stale`` where it is still the token in use; whether it was, and on disk."""
        dropped = False
        for key in keys:
            if self._memory.get(key) is stale:
                del self._memory[key]
                dropped = True
        return dropped and stale.persist


def _entry(key: str, token: Token, now: float) -> HttpEntry:
    """The HTTP entry persisting ``token``: the bearer as body, its expiry, nothing else."""
    return HttpEntry(
        key=key,
        status=200,
        etag=None,
        last_modified=None,
        headers=(),
        body=token.value.encode("ascii"),
        fetched_at=now,
        expires_at=token.expires_at,
        cache_control=None,
        representation=REPRESENTATION,
    )
