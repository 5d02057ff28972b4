"""The fetch facade: the only code that sends HTTP requests.

One shared ``httpx.AsyncClient`` per run, a concurrency limiter per host, the shared cool-down
governor (``governor.py``), single-flight for identical concurrent requests, bounded retries
with jitter for transient failures, redirects followed hop by hop (each through its own host's
limits and statistics), an overall deadline and a body-size bound per request, ``Bearer``
token challenges answered once (``bearer.py``), and per-host statistics for the report. It
knows hosts and auth schemes, not registries; every datasource goes through this one seam.
"""

from __future__ import annotations

import contextlib
import contextvars
import functools
import random
from collections.abc import AsyncIterator, Awaitable, Callable, Mapping, Sequence
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import anyio
import anyio.lowlevel
import msgspec
from msgspec.structs import replace

from patchula import __version__
from patchula.cache import Cache, HttpEntry, ReleaseItem
from patchula.errors import (
    ConfigError,
    LookupFailed,
    NotCached,
    RegistryError,
    RegistryUnreachable,
)
from patchula.http import DEFAULT_BODY_POOL_BYTES, DEFAULT_MAX_BODY_BYTES
from patchula.http.auth import Credential, Credentials, redact_url
from patchula.http.bearer import BearerTokens, Token, bearer_challenge, unusable_bearer
from patchula.http.bodies import BodyPool
from patchula.http.caching import (
    cache_key,
    credential_digest,
    directives,
    freshness,
    must_revalidate,
)
from patchula.http.flight import Flight as _Flight
from patchula.http.governor import (
    MAX_RATE_RETRIES,
    Governor,
    RateLimited,
    Timer,
    over_bound_text,
    read_signal,
    retry_after_seconds,
    seconds_text,
)
from patchula.models import Derive, FetchResponse

if TYPE_CHECKING:
    import ipaddress

    # httpx, httpcore and the transport are imported when the first request is sent (or a
    # client is made): a run that looks nothing up never imports them (issue 12: start-up).
    import httpcore
    import httpx

    from patchula.http.transport import PerHostPoolTransport, RawResponse

__all__ = [
    "DEFAULT_MAX_BODY_BYTES",
    "MAX_REDIRECTS",
    "Fetcher",
    "HostStats",
    "PerHostPoolTransport",
    "RateBudget",
    "RateLimited",
    "Timer",
    "host_key",
    "make_client",
    "retry_after_seconds",
]

DEFAULT_HOST_CONCURRENCY = 16
MAX_RETRIES = 3
# Seconds one request may take in all (attempts, redirect hops, back-off pauses).
DEFAULT_REQUEST_DEADLINE = 30.0
# A host that has answered is given up on as too slow once this many of its requests in a row
# (no complete answer between them) ran out of the deadline, or one full wave of its limit when
# that is more (``Fetcher._slow_after``).
MIN_SLOW_DEADLINES = 3
MAX_REDIRECTS = 5
# RFC 9110 §15.4: the redirections that name a target in Location (300 and 304 do not).
_REDIRECTS = frozenset({301, 302, 303, 307, 308})
# Server errors that say what the server cannot do, not that it failed this time (RFC 9110
# §15.6.2 Not Implemented, §15.6.6 HTTP Version Not Supported): returned, never retried (a
# registry without manifest HEAD answers 501; the datasource then asks with GET).
_PERMANENT_SERVER_ERRORS = frozenset({501, 505})
# Statuses that may signal a rate limit (``governor.read_signal``); others do so only by header.
_LIMIT_STATUSES = frozenset({403, 429})
# The methods the facade sends: GET (documents), HEAD (digests), POST with a body (GraphQL).
METHODS = frozenset({"GET", "HEAD", "POST"})
# Request headers that describe a body: dropped with it when a redirect turns a POST into a GET.
_BODY_HEADERS = frozenset({"content-type", "content-length", "content-encoding"})
# Request headers that belong to the origin they were given for, dropped on a hop to another
# origin (as browsers and httpx do; RFC 9110 §15.4 leaves it to the client).
_ORIGIN_BOUND_HEADERS = frozenset({"authorization", "cookie", "proxy-authorization"})
USER_AGENT = f"patchula/{__version__} (dependency freshness scanner)"


# Response headers kept with a cached body: pagination needs Link, a manifest HEAD its
# Docker-Content-Digest (a revalidated or fresh HEAD has only these); the rest is re-derivable.
KEPT_HEADERS = frozenset({"link", "content-type", "docker-content-digest"})


class CacheUse(msgspec.Struct):
    """How the fetch facade used the cache this run: fresh hits, 304 revalidations, misses."""

    hits: int = 0
    revalidated: int = 0
    misses: int = 0


class HostStats(msgspec.Struct):
    """Request statistics for one host; ``max_concurrency`` is the peak of requests in flight.

    ``connections`` counts the TCP connections the run's pooled transport opened to the host,
    ``tls_handshakes`` the TLS handshakes completed on them, ``protocols`` the connections per
    protocol they spoke (``"h2"``, ``"http/1.1"``). Requests through a proxy are not counted
    there (httpx's proxy transport opens those connections).
    """

    requests: int = 0
    responses: dict[str, int] = msgspec.field(default_factory=dict)
    not_modified: int = 0
    rate_limited: int = 0
    retries: int = 0
    # Seconds of cool-down waited out (``Governor.cooldown_seconds``); the longest one asked
    # for over the bound, not waited for (``Governor.refused_seconds``).
    cooldown_seconds: float = 0.0
    cooldown_refused_seconds: float = 0.0
    errors: int = 0
    in_flight: int = 0
    max_concurrency: int = 0
    # Successes stored with neither validators (ETag, Last-Modified) nor a freshness lifetime
    # (Cache-Control max-age, Expires) or floor: the cache can only refetch them in full.
    unvalidated: int = 0
    connections: int = 0
    tls_handshakes: int = 0
    protocols: dict[str, int] = msgspec.field(default_factory=dict)
    # The rate-limit budget the host announced (``x-ratelimit-*``, GitHub's), per resource
    # (``x-ratelimit-resource``: ``core``, ``graphql``; ``""`` when not named).
    rate_limits: dict[str, RateBudget] = msgspec.field(default_factory=dict)


class RateBudget(msgspec.Struct):
    """One announced rate-limit budget (GitHub's ``x-ratelimit-*`` headers).

    ``limit`` requests per window, ``remaining`` of them left (the lowest seen for the latest
    window), ``reset`` the window's end (epoch seconds).
    """

    limit: int | None
    remaining: int
    reset: float | None

    def update(self, limit: int | None, remaining: int, reset: float | None) -> None:
        """Take a newer answer's view: a later window replaces, the same window counts down."""
        if reset is not None and (self.reset is None or reset > self.reset):
            self.limit, self.remaining, self.reset = limit, remaining, reset
        elif reset == self.reset or reset is None:
            self.remaining = min(self.remaining, remaining)
            self.limit = limit if limit is not None else self.limit


def _header_int(headers: Mapping[str, str], name: str) -> int | None:
    value = headers.get(name, "").strip()
    return int(value) if value.isdigit() and len(value) <= 12 else None  # noqa: PLR2004


def note_budget(stats: HostStats, headers: Mapping[str, str]) -> None:
    """Record the ``x-ratelimit-*`` budget of one answer (lower-case ``headers``) in ``stats``."""
    remaining = _header_int(headers, "x-ratelimit-remaining")
    if remaining is None:
        return
    reset_value = _header_int(headers, "x-ratelimit-reset")
    reset = float(reset_value) if reset_value is not None else None
    limit = _header_int(headers, "x-ratelimit-limit")
    resource = headers.get("x-ratelimit-resource", "").strip()[:40]
    budget = stats.rate_limits.get(resource)
    if budget is None:
        stats.rate_limits[resource] = RateBudget(limit, remaining, reset)
    else:
        budget.update(limit, remaining, reset)


# Bodies at least this large are derived in a worker thread (at most four at once) so the event
# loop stays free; smaller ones are derived in place.
DERIVE_IN_THREAD_BYTES = 64 * 1024


def _proxied(url: str, proxies: Mapping[str, str]) -> bool:
    """Return whether the proxy variables (``proxies``, read once per run) route ``url``."""
    if not proxies:
        return False
    import httpx  # noqa: PLC0415 - lazy: start-up

    parsed = httpx.URL(url)
    if parsed.scheme not in proxies and "all" not in proxies:
        return False
    host = parsed.host or ""
    if _in_no_proxy_range(host, proxies.get("no", "")):
        return False
    import urllib.request  # noqa: PLC0415 - lazy: start-up

    # With the port, so NO_PROXY entries naming one (``127.0.0.1:8080``) apply as curl's do.
    return not urllib.request.proxy_bypass(f"{host}:{parsed.port}" if parsed.port else host)


def _in_no_proxy_range(host: str, no_proxy: str) -> bool:
    """Return whether the IP literal ``host`` lies in a CIDR entry of ``no_proxy``.

    curl (since 7.86, ``CURLOPT_NOPROXY``), Go and requests accept ``10.0.0.0/8`` or
    ``fd00::/8`` entries there; urllib's ``proxy_bypass`` does not. Like curl, a host name is
    never resolved to test it against a range.
    """
    networks = _no_proxy_networks(no_proxy)
    if not networks:
        return False
    import ipaddress  # noqa: PLC0415 - lazy: start-up

    try:
        address = ipaddress.ip_address(host.strip("[]"))
    except ValueError:
        return False  # a name, not an address
    return any(address in network for network in networks)


@functools.lru_cache(maxsize=8)
def _no_proxy_networks(no_proxy: str) -> tuple[ipaddress.IPv4Network | ipaddress.IPv6Network, ...]:
    """The CIDR entries of a ``NO_PROXY`` value (comma or space separated); others are skipped."""
    import ipaddress  # noqa: PLC0415 - lazy: start-up

    networks = []
    for entry in no_proxy.replace(",", " ").split():
        if "/" not in entry:
            continue
        try:
            # Not strict: curl compares only the prefix bits, so ``10.1.2.3/8`` means 10/8.
            networks.append(
                ipaddress.ip_network(entry.replace("[", "").replace("]", ""), strict=False)
            )
        except ValueError:
            continue  # not a range: the name matching of ``proxy_bypass`` sees it
    return tuple(networks)


def _getproxies() -> dict[str, str]:
    """``urllib.request.getproxies()``: imported when a run first needs it, not at start-up."""
    import urllib.request  # noqa: PLC0415 - lazy: start-up

    return urllib.request.getproxies()


def make_client(timeout: float = 30.0) -> httpx.AsyncClient:
    """Return the run's shared client.

    HTTP/1.1 keep-alive retaining up to 32 idle connections per host (``PerHostPoolTransport``),
    connect timeout 10 s (less when ``timeout`` is shorter) and ``timeout`` seconds per read
    (the CLI gives the request deadline, so a per-read bound never cuts an attempt the
    deadline still allows), a ``patchula/<version>``
    User-Agent, ``Accept-Encoding`` naming only the codings decoded with a size bound, and the
    standard proxy and CA variables honoured (``HTTP_PROXY``, ``HTTPS_PROXY``, ``ALL_PROXY``,
    ``NO_PROXY``, ``SSL_CERT_FILE``): proxied URLs go through httpx's proxy transports, the
    rest straight to the pooled transport; both resolve host names through its per-run
    ``Resolver`` (through a proxy, only the proxy's host is resolved here; the proxy resolves
    the registry's). Redirects are not followed by the client: the
    ``Fetcher`` follows them (PyPI answers non-canonical names with 301), each hop through its
    own host's limiter.
    """
    import httpx  # noqa: PLC0415 - lazy: start-up

    from patchula.http.transport import (  # noqa: PLC0415 - lazy: start-up
        ACCEPT_ENCODING,
        PerHostPoolTransport,
    )

    transport = PerHostPoolTransport()
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout, connect=min(10.0, timeout)),
        transport=transport,
        mounts=_proxy_mounts(transport.backend),
        headers={"User-Agent": USER_AGENT, "Accept-Encoding": ACCEPT_ENCODING},
        follow_redirects=False,
        trust_env=True,
    )


def _proxy_mounts(
    backend: httpcore.AsyncNetworkBackend | None = None,
) -> dict[str, httpx.AsyncBaseTransport | None]:
    """Proxy transports from the environment, per scheme (``http://``, ``https://``).

    httpx reads the proxy variables only for clients without a transport of their own, so they
    are mounted here. ``NO_PROXY`` is applied per request by the fetcher (``_proxied``).
    ``backend`` (the pooled transport's) connects to the proxy, so its host is resolved once
    per run like any other.
    """
    import httpx  # noqa: PLC0415 - lazy: start-up

    proxies = _getproxies()
    mounts: dict[str, httpx.AsyncBaseTransport | None] = {}
    for scheme in ("http", "https"):
        variable = f"{scheme.upper()}_PROXY" if proxies.get(scheme) else "ALL_PROXY"
        proxy = proxies.get(scheme) or proxies.get("all")
        if not proxy:
            continue
        if "://" not in proxy:
            proxy = f"http://{proxy}"  # curl's reading of a bare host:port
        try:
            mount = httpx.AsyncHTTPTransport(
                proxy=proxy, verify=httpx.create_ssl_context(trust_env=True), trust_env=True
            )
        except ImportError:
            msg = (
                f"{variable} names a SOCKS proxy ({redact_url(proxy)}), which needs the "
                "'socksio' package: pip install 'httpx[socks]'"
            )
            raise ConfigError(msg) from None
        except (ValueError, httpx.InvalidURL) as exc:
            msg = f"{variable} names an unusable proxy ({redact_url(proxy)}): {exc}"
            raise ConfigError(msg) from None
        # httpx takes no network backend; its proxy pool (httpcore's AsyncHTTPProxy or
        # AsyncSOCKSProxy) keeps the one it connects with here.
        pool = getattr(mount, "_pool", None)
        if backend is not None and hasattr(pool, "_network_backend"):
            pool._network_backend = backend  # type: ignore[union-attr]  # noqa: SLF001
        mounts[f"{scheme}://"] = mount
    return mounts


def _proxy_for(url: str, proxies: Mapping[str, str]) -> str | None:
    """Return the proxy (credentials redacted) the environment routes ``url`` through."""
    if not _proxied(url, proxies):
        return None
    scheme = url.partition("://")[0].lower()
    proxy = proxies.get(scheme) or proxies.get("all") or ""
    return redact_url(proxy if "://" in proxy else f"http://{proxy}")


class Fetcher:
    """GET, HEAD and POST with per-host limits, the cool-down governor, single-flight, stats.

    ``host_limits`` maps a host (lower-case; ``host:port`` for non-default ports) to its
    concurrency limit (1-100); a bare host's limit is shared by all its ports that have no
    ``host:port`` entry of their own; other hosts get ``default_limit``. ``timer`` supplies
    time and sleep so tests never sleep for real.

    ``request_deadline`` (seconds) bounds the request's own time: every attempt on the network
    (each gets what is left), every redirect hop and every back-off pause, the pause before
    retrying after its own 429 (or other rate-limit answer) included: a cool-down longer than
    what is left fails it at once (``_rate_pause``). Waiting for a host slot behind other
    requests, for a host-wide cool-down started before it was sent (``governor``) or for a
    throttle interval is queueing and does not count: slots are freed by other requests'
    deadlines, cool-downs have their own bound. ``max_body_bytes`` bounds each response body on
    the wire and decoded (``transport.read_body``); ``body_pool_bytes`` bounds the bytes the
    bodies being read hold together, run-wide (``transport.BodyPool``).

    ``offline`` (``--offline``): every request is answered from its stored entry whatever its
    age or validators, as a fresh hit is (``cache == "fresh"``), and a request with no entry
    raises ``NotCached``; no client, transport, resolver or bearer token is ever made or
    asked for, and nothing is sent (``not_cached`` lists what was missing).
    """

    # At most this many missing requests are kept for ``not_cached`` (a -v line each).
    NOT_CACHED_KEPT = 1000

    def __init__(
        self,
        client: httpx.AsyncClient | None = None,
        *,
        host_limits: Mapping[str, int] | None = None,
        default_limit: int = DEFAULT_HOST_CONCURRENCY,
        timer: Timer | None = None,
        cache: Cache | None = None,
        freshness_floors: Mapping[str, float] | None = None,
        credentials: Credentials | None = None,
        request_deadline: float = DEFAULT_REQUEST_DEADLINE,
        max_body_bytes: int = DEFAULT_MAX_BODY_BYTES,
        offline: bool = False,
        body_pool_bytes: int = DEFAULT_BODY_POOL_BYTES,
    ) -> None:
        self.offline = offline
        # ``--offline``: the requests the cache had no entry for, ``"GET <redacted url>"``.
        self.not_cached: list[str] = []
        # ``None``: the run's own client (``make_client``), made when the first request is sent
        # and closed by ``aclose``, so a run that sends none never imports httpx.
        self._given_client = client
        self._own_client: httpx.AsyncClient | None = None
        self._credentials = credentials
        self._deadline = request_deadline
        self._max_body = max_body_bytes
        # The run-wide bound on the bytes the bodies being read hold (``BodyPool``).
        self.bodies = BodyPool(body_pool_bytes)
        self._host_limits = {k.lower(): v for k, v in (host_limits or {}).items()}
        self._default_limit = default_limit
        self._limiters: dict[str, anyio.CapacityLimiter] = {}
        self._inflight: dict[str, _Flight[FetchResponse]] = {}
        self.governor = Governor(timer)
        self._timer = self.governor.timer
        self.stats: dict[str, HostStats] = {}
        self.cache = cache
        self.cache_stats = CacheUse()
        self._reads = _BatchedReads(cache) if cache is not None else None
        # Bearer tokens answering registries' ``WWW-Authenticate: Bearer`` challenges
        # (``bearer.py``): never part of a key, a response or a message.
        self._bearer = BearerTokens(
            cache,
            self._reads.get if self._reads is not None else None,
            lambda: self._timer.wall().timestamp(),
        )
        # Entries ``fresh_many`` read but could not use: the requests that follow reuse them.
        self._read_ahead: dict[str, HttpEntry | None] = {}
        # Minimum freshness (seconds) per representation, counted from the entry's fetch time.
        self._floors = {k: _Floor(v) for k, v in (freshness_floors or {}).items()}
        # Paced URL trees per host: (path prefix, pace), longest prefix first.
        self._paces: dict[str, list[tuple[str, _Pace]]] = {}
        self._unreachable: dict[str, str] = {}
        # Hosts that sent at least one status line and headers this run (a body need not follow).
        self._answered: set[str] = set()
        self._failures: dict[str, int] = {}  # network failures per host since its last answer
        # Requests per host that ran out of the deadline since its last complete answer, and the
        # hosts given up on as too slow (how many in a row it took); ``_drips`` holds the cancel
        # scopes of the requests on the network, so giving up ends them too.
        self._overdue: dict[str, int] = {}
        self._too_slow: dict[str, int] = {}
        self._drips: dict[str, set[anyio.CancelScope]] = {}
        # Read once, before the first request: scanning the environment per request cost a
        # quarter of the client's CPU (``_proxies``).
        self._proxy_variables: dict[str, str] | None = None
        # The client's default headers and timeouts, read on the first request.
        self._defaults: list[tuple[str, str]] | None = None
        self._timeouts: dict[str, float | None] = {}
        # Registry documents are derived in worker threads, at most four at once, so the event
        # loop stays free while large packuments are parsed.
        self._derivers = anyio.CapacityLimiter(4)
        # Whether the client's pooled transport reports its connections here yet (``_client``).
        self._listening = False

    @property
    def _proxies(self) -> dict[str, str]:
        """The proxy variables (``urllib.request.getproxies``), read at the first request."""
        if self._proxy_variables is None:
            self._proxy_variables = _getproxies()
        return self._proxy_variables

    def connection_opened(self, host: str) -> None:
        """Count a TCP connection the transport opened to ``host`` (``ConnectionListener``)."""
        self.stats.setdefault(host, HostStats()).connections += 1

    def protocol_negotiated(self, host: str, protocol: str, *, tls: bool) -> None:
        """Count a connection to ``host`` speaking ``protocol`` (``ConnectionListener``)."""
        stats = self.stats.setdefault(host, HostStats())
        stats.protocols[protocol] = stats.protocols.get(protocol, 0) + 1
        if tls:
            stats.tls_handshakes += 1

    @property
    def _client(self) -> httpx.AsyncClient:
        """The client requests go through: the one given, else the run's own, made now.

        Raises ``NotCached`` offline: no client is made or used then (``_fetch`` never asks).
        """
        if self.offline:
            raise NotCached
        client = self._given_client
        if client is None:
            if self._own_client is None:
                self._own_client = make_client(timeout=self._deadline)
            client = self._own_client
        if not self._listening:
            self._listening = True
            from patchula.http.transport import PerHostPoolTransport  # noqa: PLC0415 - lazy: start-up

            transport = client._transport  # noqa: SLF001 - our own PerHostPoolTransport
            if isinstance(transport, PerHostPoolTransport):
                transport.listener = self
        return client

    async def aclose(self) -> None:
        """Close the client this fetcher made (a client given to it is its owner's to close)."""
        own, self._own_client = self._own_client, None
        if own is not None:
            await own.aclose()

    @property
    def unreachable(self) -> dict[str, str]:
        """Hosts found unreachable this run: why (``"ConnectError"``, ``"no answer within 30 s"``).

        Their remaining lookups failed at once with a reason starting ``"<host> is unreachable ("``.
        """
        return dict(self._unreachable)

    @property
    def too_slow(self) -> dict[str, str]:
        """Hosts given up on this run as too slow: the reason every lookup failed with then.

        ``"<host> is too slow: 16 requests in a row ran out of the 30 s deadline; …"``
        (``_too_slow_reason``): the requests queued or on the network when that was found fail
        at once, as do the later ones.
        """
        return {host: self._too_slow_reason(host) for host in self._too_slow}

    def _slow_after(self, host: str) -> int:
        """How many requests in a row to ``host`` must run out of the deadline to give it up.

        One full wave of its concurrency limit, and never fewer than ``MIN_SLOW_DEADLINES``.
        A wave is the unit because its requests started together: giving up after fewer saves
        no time (the wave's others are on the network already) and risks more (a few large
        documents on a slow link), while every further wave would cost another whole deadline
        (400 lookups at 16 a wave: 25 deadlines, some 12 minutes). The floor keeps a host with
        a limit of 1 or 2 from being given up on for one or two slow documents.
        """
        return max(self.limit_for(host), MIN_SLOW_DEADLINES)

    def _too_slow_reason(self, host: str) -> str:
        """The reason of every lookup failed because ``host`` was given up on as too slow."""
        return (
            f"{host} is too slow: {self._too_slow[host]} requests in a row ran out of the "
            f"{self._deadline:g} s deadline; its other lookups were given up"
        )

    async def __call__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        representation: str = "raw",
        derive: Derive | None = None,
        method: str = "GET",
        body: bytes | None = None,
        scope: str | None = None,
    ) -> FetchResponse:
        """Return the response to ``GET url``; identical concurrent calls share one request.

        ``method`` is ``GET`` (the default), ``HEAD`` (the answer's ``content`` is empty) or
        ``POST`` with ``body`` (bytes; e.g. a GraphQL query, which must be safe to repeat:
        a POST is retried and cached like a GET). The cache key and the single-flight key
        name the method, and a POST's key a digest of its body (``caching.cache_key``), so a
        HEAD never answers a GET, nor one query another. A POST is sent without validators
        (RFC 9110 §13.1.2: on other methods than GET and HEAD, ``If-None-Match`` is a
        precondition, not a revalidation). Redirects follow RFC 9110 §15.4: 307 and 308 keep
        the method and body; 303 turns a POST into a GET without a body (a HEAD stays a HEAD);
        301 and 302 turn a POST into a GET too, as the RFC allows and as browsers, curl and
        httpx do. Raises ``ValueError`` for another method, or a body without POST.

        With a cache: a fresh entry is returned without a request; an expired one is
        revalidated with its validators (a 304 reuses the stored body without deriving it
        again); a new success is derived (``derive``, in a worker thread, at most 4 at once)
        and stored when its Cache-Control allows, else any stored entry is deleted. Raises
        ``RegistryUnreachable`` when no HTTP answer (status line and headers) arrives after
        the retries or within the deadline from a host that has not answered this run,
        ``RateLimited`` when the host's rate limit makes the request fail, ``RegistryError``
        when server errors persist, the deadline passes, the body is over the size bound,
        redirects loop (more than ``MAX_REDIRECTS``) or lead off HTTP(S), or ``derive``
        refuses the body.

        ``scope`` is the registry token scope the request needs (``MethodFetch``): a bearer
        token cached for the URL's host and that scope is sent up front (``_authorized``).
        Bearer challenges are answered with or without it. The cache and single-flight keys
        are those of the request without the token. Inside ``all_or_nothing()`` the cache
        writes of this request wait for the block's end.
        """
        method = method.upper()
        if method not in METHODS or (body is not None and method != "POST"):
            msg = f"the fetch facade sends GET, HEAD or POST with a body, not {method}"
            if body is not None and method in METHODS:
                msg = f"a {method} request has no body"
            raise ValueError(msg)
        if method == "POST" and body is None:
            body = b""
        credential = self._credential_for(url)
        key = self._key(url, headers, representation, credential, method=method, body=body)
        return await self._shared(
            key, url, headers, representation, derive, method=method, body=body, scope=scope
        )

    async def addressed(
        self,
        address: str,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        representation: str = "raw",
        derive: Derive | None = None,
    ) -> FetchResponse:
        """``GET url``, cached and shared under ``address`` instead of the URL.

        For content-addressed documents that many URLs serve alike (a git blob, named by its
        SHA-1, under every repository holding it): ``address`` (``git-blob:<sha>``) takes the
        URL's place in the cache key and the single-flight key, so one stored answer and one
        request in flight serve every URL naming it. The key still names the credential sent
        to ``url`` (answers to a token never serve another). The caller must make ``derive``
        verify the content against the address (only a verified answer is stored) and must
        ask only for addresses the URL's owner names. Concurrent callers share one answer, a
        failure included (it may be another URL's). Otherwise as ``__call__``.
        """
        credential = self._credential_for(url)
        key = self._key(address, headers, representation, credential)
        return await self._shared(key, url, headers, representation, derive)

    async def _shared(
        self,
        key: str,
        url: str,
        headers: Mapping[str, str] | None,
        representation: str,
        derive: Derive | None,
        *,
        method: str = "GET",
        body: bytes | None = None,
        scope: str | None = None,
    ) -> FetchResponse:
        """Answer ``key`` from the cache or one request shared by concurrent callers."""
        floor = self._floors.get(representation, _NO_FLOOR)
        shared = self._inflight.get(key)
        if shared is not None:
            return self._explained(await shared.wait())
        flight: _Flight[FetchResponse] = _Flight()
        self._inflight[key] = flight
        try:
            response = await self._cached_fetch(
                key, url, headers or {}, derive, floor, method=method, body=body, scope=scope
            )
        except BaseException as exc:
            flight.fail(exc)
            raise
        else:
            flight.succeed(response)
            return self._explained(response)
        finally:
            del self._inflight[key]

    def _explained(self, response: FetchResponse) -> FetchResponse:
        """``response``, a 401/403 with why a credential for its URL was not sent (if one was).

        Asked per caller, not per shared request: callers sharing one anonymous request may
        have different credential configurations (each checkout's own ``.npmrc``).
        """
        if response.status not in {401, 403} or self._credentials is None:
            return response
        why = self._credentials.unused_for(response.url)
        if why is not None and response.credential_unused is not None:
            why = f"{response.credential_unused}; {why}"  # a refused token says so first
        return response if why is None else replace(response, credential_unused=why)

    async def _cached_fetch(
        self,
        key: str,
        url: str,
        headers: Mapping[str, str],
        derive: Derive | None,
        floor: _Floor | None = None,
        *,
        method: str = "GET",
        body: bytes | None = None,
        scope: str | None = None,
    ) -> FetchResponse:
        cache = self.cache
        stats = self.cache_stats
        floor = floor or _NO_FLOOR
        if key in self._read_ahead:
            entry = self._read_ahead.pop(key)  # read a moment ago by ``fresh_many``
        else:
            entry = await self._reads.get(key) if self._reads is not None else None
        if self.offline:
            return self._offline_answer(entry, url, method)
        if (
            entry is not None
            and not must_revalidate()
            and _is_fresh(entry, floor, self._timer.wall().timestamp())
        ):
            stats.hits += 1
            return _fresh_response(entry, url)
        conditional = dict(headers)
        # Validators revalidate only GET and HEAD (RFC 9110 §13.1.1-2); a POST is sent afresh.
        if entry is not None and entry.etag and method != "POST":
            conditional["If-None-Match"] = entry.etag
        if entry is not None and entry.last_modified and method != "POST":
            conditional["If-Modified-Since"] = entry.last_modified
        response, private = await self._authorized(
            url, conditional, method=method, body=body, scope=scope
        )
        lower = dict(response.headers)
        fetched = response.fetched_at.timestamp()
        if response.status == 304 and entry is not None and cache is not None:  # noqa: PLR2004
            stats.revalidated += 1
            fresh = freshness(200, lower, fetched)
            await self._write(
                cache.touch_http,
                key,
                fetched_at=fetched,
                expires_at=fresh.expires_at,
                etag=lower.get("etag", entry.etag),
                last_modified=lower.get("last-modified", entry.last_modified),
                cache_control=fresh.cache_control,
            )
            return FetchResponse(
                status=entry.status,
                url=response.url,
                headers=entry.headers,
                content=entry.body,
                fetched_at=response.fetched_at,
                cache="revalidated",
            )
        if not 200 <= response.status < 300:  # noqa: PLR2004 - only successes are kept
            return response
        content = response.content
        if derive is not None:
            # The host slot is free again (``_send`` has let it go): let the request waiting
            # for it be sent before this body is derived, so its network wait overlaps the
            # CPU work here instead of following it.
            await anyio.lowlevel.checkpoint()
            if len(content) >= DERIVE_IN_THREAD_BYTES:
                content = await anyio.to_thread.run_sync(derive, content, limiter=self._derivers)
            else:
                content = derive(content)  # well under a millisecond: a thread hop costs more
        if cache is None or private:
            # ``private``: answered to a token obtained with a credential while the key is the
            # anonymous request's; stored, it would answer anonymous runs.
            return replace(response, content=content)
        stats.misses += 1
        fresh = freshness(response.status, lower, fetched)
        validated = bool(lower.keys() & {"etag", "last-modified"})
        reusable = fresh.expires_at > fetched or (
            floor.applies(validated=validated) and "no-cache" not in directives(fresh.cache_control)
        )
        if fresh.storable and not reusable and not lower.keys() & {"etag", "last-modified"}:
            # Counted so the report can say why a warm run refetched this host's documents.
            self.stats.setdefault(host_key(response.url), HostStats()).unvalidated += 1
        if fresh.storable:
            await self._write(
                cache.put_http,
                HttpEntry(
                    key=key,
                    status=response.status,
                    etag=lower.get("etag"),
                    last_modified=lower.get("last-modified"),
                    headers=tuple((k, v) for k, v in response.headers if k in KEPT_HEADERS),
                    body=content,
                    fetched_at=fetched,
                    expires_at=fresh.expires_at,
                    cache_control=fresh.cache_control,
                    representation=key.split("|", 1)[0],
                ),
            )
        elif entry is not None:
            await self._write(cache.delete_http, key)
        return replace(response, content=content, cache="miss")

    def _offline_answer(self, entry: HttpEntry | None, url: str, method: str) -> FetchResponse:
        """``--offline``: ``entry`` served as a fresh hit whatever its age, or ``NotCached``.

        A stored answer was a success of the request as it is keyed (the same method, URL,
        vary headers, body and credential identity as online): its validators and expiry
        would only matter for asking again, which offline never does. A bearer token is not
        needed to serve it, so none is read or fetched.
        """
        if entry is None:
            if len(self.not_cached) < self.NOT_CACHED_KEPT:
                self.not_cached.append(f"{method} {redact_url(url)}")
            raise NotCached
        self.cache_stats.hits += 1
        return _fresh_response(entry, url)

    async def _authorized(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        method: str,
        body: bytes | None,
        scope: str | None,
    ) -> tuple[FetchResponse, bool]:
        """Send ``method url``, answering a ``Bearer`` challenge once (``bearer.py``).

        With ``scope``, an unexpired token for (host, scope) goes up front. A ``401`` from the
        URL's origin with a ``WWW-Authenticate: Bearer`` challenge whose realm is http(s) gets
        a token (evicting the one sent, if any; concurrent callers share one token request)
        and the request is sent once more: a second ``401`` is the answer. The token request
        goes through the realm host's limits, cool-down and statistics, with the credential
        configured for the realm's URL (if any), within this request's deadline. A token
        service refusing (401/403) is the answer, naming the credential it refused.

        Also returns whether the answer is private to a credential the cache key does not
        name: sent with a token obtained with a credential (for the realm's host) while none
        is configured for ``url`` itself.
        """
        budget = _Budget(self._deadline)
        host = host_key(url)
        credential = self._credential_for(url)
        identity = credential_digest(credential.cache_identity if credential else None)
        token = await self._bearer.cached(host, scope, identity) if scope else None
        response = await self._fetch(
            url, headers, method=method, body=body, bearer=token, budget=budget
        )
        if response.status != 401 or _origin(response.url) != _origin(url):  # noqa: PLR2004
            return response, _private(token, credential)
        challenge = bearer_challenge(response)
        if challenge is None:
            why = unusable_bearer(response)
            if why is not None:
                response = replace(response, credential_unused=why)
            return response, _private(token, credential)

        async def ask(token_url: str) -> FetchResponse:
            return await self._fetch(token_url, {}, budget=budget)

        answer = await self._bearer.answer(host, scope, identity, challenge, token, ask)
        if not isinstance(answer, Token):
            return answer, False  # the token service's 401/403
        response = await self._fetch(
            url, headers, method=method, body=body, bearer=answer, budget=budget
        )
        return _token_refused(response, url, challenge.realm), _private(answer, credential)

    async def _write(self, write: Callable[..., Awaitable[Any]], *args: Any, **kwargs: Any) -> None:  # noqa: ANN401 - forwarded as given
        """Apply one cache write now, or keep it for the end of an ``all_or_nothing`` block."""
        group = _GROUP.get()
        if group is None:
            await write(*args, **kwargs)
        else:
            group.append(functools.partial(write, *args, **kwargs))

    async def release_rows(
        self, source: str, package: str
    ) -> (
        tuple[
            tuple[str, float | None, str | None] | None, list[tuple[str, float | None, str | None]]
        ]
        | None
    ):
        """The cache's release head and rows of ``package`` (``datasource.base.ReleaseRows``).

        ``None`` without a cache. Rows are ``(version, published_at epoch, digest)`` in upstream
        order, newest first; an unreadable store answers as empty (``Cache.releases``).
        """
        cache = self.cache
        if cache is None:
            return None
        head = await cache.release_heads(source, package)
        rows = await cache.releases(source, package)
        return (
            None if head is None else (head.version, head.published_at, head.digest),
            [(r.version, r.published_at, r.digest) for r in rows],
        )

    async def merge_release_rows(
        self,
        source: str,
        package: str,
        items: Sequence[tuple[str, float | None, str | None]],
        *,
        after: str | None,
    ) -> None:
        """Merge one newest-first page into the cache's release rows (``ReleaseRows``).

        ``Cache.merge_releases`` for the first page (``after=None``), ``merge_release_page``
        with the anchor ``after`` for the next ones; inside ``all_or_nothing`` the merge waits
        for the block's clean end, in order with its HTTP writes. Nothing without a cache.
        """
        cache = self.cache
        if cache is None:
            return
        rows = [ReleaseItem(version, published, digest) for version, published, digest in items]
        if after is None:
            await self._write(cache.merge_releases, source, package, rows)
        else:
            await self._write(cache.merge_release_page, source, package, rows, after=after)

    @contextlib.asynccontextmanager
    async def all_or_nothing(self) -> AsyncIterator[None]:
        """Keep back the cache writes of the requests made inside; apply them at a clean end.

        For documents that are only whole together (the pages of a paginated OCI tag list,
        seed 003: "a rate-limited pagination attempt cannot become a complete catalog"): when
        the block raises, none of its responses is stored, and stored entries stay as they
        were. Blocks nest: an inner block's writes join the outer one's. The group belongs to
        the running task's context, so concurrent lookups never share one.
        """
        outer = _GROUP.get()
        writes: list[Callable[[], Awaitable[Any]]] = []
        token = _GROUP.set(writes)
        try:
            yield
        finally:
            _GROUP.reset(token)
        if outer is not None:
            outer.extend(writes)
            return
        for write in writes:
            await write()

    async def fresh_many(
        self, requests: Sequence[tuple[str, Mapping[str, str] | None, str]]
    ) -> list[FetchResponse | None]:
        """Answer many GETs ``(url, headers, representation)`` from fresh cache entries at once.

        Each answer is what ``__call__`` would return for a fresh entry (and counts as a cache
        hit); ``None`` where there is no fresh entry (or a request for it is in flight): send
        that one through ``__call__``. Offline, every stored entry answers, whatever its age.
        No request is ever sent here. The reads travel to the
        cache's reader threads in jobs of ``READ_BATCH_KEYS`` keys, run concurrently.
        """
        if self.cache is None or not requests:
            return [None] * len(requests)
        keys = [
            self._key(url, headers, representation) for url, headers, representation in requests
        ]
        found: dict[str, HttpEntry | None] = {}
        cache = self.cache

        async def read(chunk: list[str]) -> None:
            found.update(await cache.get_http_many(chunk))

        unique = [k for k in dict.fromkeys(keys) if k not in self._inflight]
        async with anyio.create_task_group() as tg:
            for start in range(0, len(unique), READ_BATCH_KEYS):
                tg.start_soon(read, unique[start : start + READ_BATCH_KEYS])
        now = self._timer.wall().timestamp()
        answers: list[FetchResponse | None] = []
        for key, (url, _, representation) in zip(keys, requests, strict=True):
            entry = found.get(key)
            floor = self._floors.get(representation, _NO_FLOOR)
            # Offline, any stored entry answers (``_offline_answer``); a missing one is left to
            # ``__call__``, which raises ``NotCached``.
            if entry is None or not (self.offline or _is_fresh(entry, floor, now)):
                if key in found:  # read here (keys in flight were not)
                    # Handed to the request that follows, so it does not read it again.
                    self._read_ahead[key] = entry
                answers.append(None)
                continue
            self.cache_stats.hits += 1
            answers.append(_fresh_response(entry, url))
        return answers

    def _key(
        self,
        url: str,
        headers: Mapping[str, str] | None,
        representation: str,
        credential: Credential | None = None,
        *,
        method: str = "GET",
        body: bytes | None = None,
    ) -> str:
        """The cache key of ``method url`` (and ``body``): credentialed answers live apart."""
        if credential is None:
            credential = self._credential_for(url)
        identity = credential.cache_identity if credential is not None else None
        return cache_key(
            method,
            url,
            vary=headers,
            representation=representation,
            credential=identity,
            body=body,
        )

    def _credential_for(self, url: str) -> Credential | None:
        """The credential that goes with ``GET url`` (``None``: anonymous)."""
        return self._credentials.for_url(url) if self._credentials is not None else None

    def credential_source(self, url: str) -> str | None:
        """Where the credential sent with a request to ``url`` comes from, or ``None``.

        ``datasource.base.CredentialProbe``: the source's name only (``GH_TOKEN``), never the
        value, so a datasource can pick an API that needs a token (GitHub GraphQL) up front.
        """
        credential = self._credential_for(url)
        return credential.source if credential is not None else None

    def credential_identity(self, url: str) -> str:
        """A digest naming the credential sent with a request to ``url``; ``-`` when anonymous.

        ``datasource.base.CredentialIdentity``: ``caching.credential_digest`` of the
        credential's cache identity, as cache keys carry it, never the credential.
        """
        credential = self._credential_for(url)
        return credential_digest(credential.cache_identity if credential is not None else None)

    @property
    def freshness_floors(self) -> dict[str, float]:
        """The configured minimum freshness per representation, in seconds."""
        return {representation: floor.seconds for representation, floor in self._floors.items()}

    def keep_fresh(
        self, representations: Sequence[str], seconds: float, *, unvalidated_only: bool = False
    ) -> None:
        """Keep cached ``representations`` fresh for at least ``seconds`` after their fetch.

        A floor under the upstream freshness (the Go proxy's ``@v/list`` and ``@latest`` say
        nothing useful). With ``unvalidated_only`` the floor covers only entries stored with
        neither ``ETag`` nor ``Last-Modified`` (seed 003, ``--registry-freshness-secs``: OCI tag
        lists that can be revalidated keep their upstream policy). A floor given to the
        constructor (``freshness_floors``) is kept.
        """
        for representation in representations:
            self._floors.setdefault(
                representation, _Floor(seconds, unvalidated_only=unvalidated_only)
            )

    def throttle(self, base_url: str, min_interval: float) -> None:
        """Space requests under ``base_url`` at least ``min_interval`` seconds apart.

        A crawler policy (crates.io's web API: one request a second) covers one service, not
        the host it shares with others: only URLs on ``base_url``'s host and port whose path
        lies under its path (``https://mirror.example/api/`` covers ``/api/v1/…``, not
        ``/index/…``) are paced; the base ``https://crates.io`` covers the whole host.
        """
        host = host_key(base_url)
        prefix = _url_path(base_url).rstrip("/") + "/"
        paces = [(p, pace) for p, pace in self._paces.get(host, []) if p != prefix]
        paces.append((prefix, _Pace(interval=min_interval)))
        paces.sort(key=lambda entry: len(entry[0]), reverse=True)
        self._paces[host] = paces

    def _paced(
        self, host: str, url: str
    ) -> contextlib.AbstractAsyncContextManager[Callable[[], Awaitable[None]]]:
        """Queue ``url`` behind the earlier requests of its paced tree; yield its turn.

        The pace's lock is taken before the host slot, so paced requests waiting for their
        interval hold at most one of the host's slots and never starve its other requests
        (a mirror serving the sparse index beside the API). Awaiting the yielded turn sleeps
        until the interval has passed since the previous paced request and lets the next one
        queue; a request that never reaches its turn (cool-down failure) just lets it go.
        A URL outside every paced tree gets ``_UNPACED`` (no generator per request).
        """
        paces = self._paces.get(host)
        if paces:
            path = _url_path(url)
            pace = next((p for prefix, p in paces if path.startswith(prefix)), None)
            if pace is not None:
                return self._pace_turn(pace)
        return _UNPACED

    @contextlib.asynccontextmanager
    async def _pace_turn(self, pace: _Pace) -> AsyncIterator[Callable[[], Awaitable[None]]]:
        """Hold ``pace``'s lock until the yielded turn has been taken (see ``_paced``)."""
        await pace.lock.acquire()
        held = True

        async def turn() -> None:
            nonlocal held
            now = self._timer.monotonic()
            ready = pace.next_at if pace.next_at is not None else now
            if ready > now:
                await self._timer.sleep(ready - now)
            pace.next_at = max(ready, now) + pace.interval
            pace.lock.release()
            held = False

        try:
            yield turn
        finally:
            if held:
                pace.lock.release()

    def _limit_entry(self, host: str) -> str | None:
        """The ``host_limits`` key governing ``host`` (a ``host_key``), or ``None``.

        ``host:port`` itself when given, else the bare host: a limit for ``127.0.0.1`` covers
        ``127.0.0.1:8080`` unless ``127.0.0.1:8080`` has a limit of its own.
        """
        if host in self._host_limits:
            return host
        bare, colon, port = host.rpartition(":")
        if colon and bare and port.isdigit() and bare in self._host_limits:
            return bare
        return None

    def limit_for(self, host: str) -> int:
        """Return the concurrency limit in force for ``host`` (see ``_limit_entry``)."""
        entry = self._limit_entry(host)
        return self._host_limits[entry] if entry is not None else self._default_limit

    def limits_used(self) -> set[str]:
        """Return the ``host_limits`` keys that governed at least one request so far."""
        return {entry for host in self.stats if (entry := self._limit_entry(host)) is not None}

    def _limiter(self, host: str) -> anyio.CapacityLimiter:
        # One limiter per limit entry: a bare host's limit bounds all its ports together, as
        # a limit on the server is meant to, not each port separately.
        key = self._limit_entry(host) or host
        limiter = self._limiters.get(key)
        if limiter is None:
            limiter = anyio.CapacityLimiter(self.limit_for(host))
            self._limiters[key] = limiter
        return limiter

    async def _fetch(
        self,
        url: str,
        headers: Mapping[str, str],
        *,
        method: str = "GET",
        body: bytes | None = None,
        bearer: Token | None = None,
        budget: _Budget | None = None,
    ) -> FetchResponse:
        """Send ``method url``, following at most ``MAX_REDIRECTS`` redirects, within the deadline.

        A redirect keeps the method and body, or turns a POST into a GET (see ``__call__``).

        Each hop goes through its own host's limiter, cool-down, throttle and statistics. The
        credential for each hop's URL is attached to that hop only; the caller's
        ``Authorization``/``Cookie`` headers go only to hops on the origin of ``url``. The
        answer's ``credential`` names the source of the credential sent on the final hop.

        ``bearer`` (a token) replaces the credential as ``Authorization`` on the hops on the
        origin of ``url``, and only there. ``budget`` is the deadline left (default: a whole
        deadline), shared when one request takes several (a bearer challenge).

        Raises ``NotCached`` offline, before anything is resolved or sent: whatever asks (a
        request, a bearer token, a redirect hop), offline never reaches the network.
        """
        if self.offline:
            raise NotCached
        budget = budget or _Budget(self._deadline)
        hop = url
        for _ in range(MAX_REDIRECTS + 1):
            sent = (
                headers
                if hop is url or _origin(hop) == _origin(url)
                else {k: v for k, v in headers.items() if k.lower() not in _ORIGIN_BOUND_HEADERS}
            )
            credential = self._credential_for(hop)
            if credential is not None:
                sent = {**sent, credential.header: credential.value}
            source = credential.source if credential is not None else None
            if bearer is not None and (hop is url or _origin(hop) == _origin(url)):
                sent = {k: v for k, v in sent.items() if k.lower() != "authorization"}
                sent["Authorization"] = f"Bearer {bearer.value}"
                source = bearer.source
            authorized = any(k.lower() == "authorization" for k in sent)
            whose = (
                (f"this token ({source})" if source else "this token")
                if authorized
                else "unauthenticated requests"
            )
            response = await self._attempts(
                hop, sent, budget, method=method, body=body, whose=whose
            )
            location = response.header("location") if response.status in _REDIRECTS else None
            if location is None:
                if source is not None:
                    return replace(response, credential=source)
                return response
            hop = _redirect_target(hop, location)
            if _redirected_method(method, response.status) != method:
                method, body = "GET", None
                headers = {k: v for k, v in headers.items() if k.lower() not in _BODY_HEADERS}
        msg = f"too many redirects ({MAX_REDIRECTS + 1}) starting at {host_key(url)}"
        raise RegistryError(msg)

    async def _attempts(
        self,
        url: str,
        headers: Mapping[str, str],
        budget: _Budget,
        *,
        method: str = "GET",
        body: bytes | None = None,
        whose: str = "these requests",
    ) -> FetchResponse:
        """Send ``method url``, retrying transient failures (network, 5xx, 429) in ``budget``.

        ``whose`` names the budget a primary rate limit would be (``"this token (GH_TOKEN)"``,
        ``"unauthenticated requests"``), for the reason of the requests it fails.
        """
        host = host_key(url)
        stats = self.stats.setdefault(host, HostStats())
        rate_attempt = 0
        error_attempt = 0
        while True:
            response, failure = await self._send(
                host, url, headers, stats, budget, method=method, body=body
            )
            if response is not None:
                if self._rate_limited(host, response, rate_attempt, stats, whose):
                    rate_attempt += 1
                    await self._rate_pause(host, stats, budget)
                    continue  # the cool-down is over (or another request extended it)
                # Server errors are retried below, unless they are permanent.
                if response.status < 500 or response.status in _PERMANENT_SERVER_ERRORS:  # noqa: PLR2004
                    return response
                failure = f"HTTP {response.status} from {host}"
            elif host not in self._answered and (
                error_attempt == 1 or self._failures.get(host, 0) > self.limit_for(host)
            ):
                # A host that has not answered once this run and fails again after a pause,
                # or fails a second wave of requests (DNS failure, refused, firewalled), is
                # down: the rest of its lookups fail at once instead of each waiting through
                # the same retries.
                stats.errors += 1
                down = self._unreachable.setdefault(host, _failure_reason(failure, host))
                msg = _unreachable(host, down)
                raise RegistryUnreachable(msg)
            if error_attempt >= MAX_RETRIES:
                stats.errors += 1
                msg = f"{failure}; gave up after {MAX_RETRIES} retries"
                if response is None:
                    if host not in self._answered:
                        # Only a host that never answered this run is unreachable: one
                        # resetting URL on a host that answers others is that lookup's failure.
                        self._unreachable.setdefault(host, _failure_reason(failure, host))
                    raise RegistryUnreachable(msg)
                raise RegistryError(msg)
            wait = 0.5 * 2**error_attempt + random.uniform(0, 0.25)  # noqa: S311 - jitter
            if wait >= budget.left:
                # Pausing would outlast the deadline: fail now, naming the last failure.
                raise self._past_deadline(host, stats, f"; last attempt: {failure}")
            error_attempt += 1
            stats.retries += 1
            budget.left -= wait
            await self._timer.sleep(wait)

    async def _rate_pause(self, host: str, stats: HostStats, budget: _Budget) -> None:
        """Wait out the cool-down a rate-limit answer to this request started, within ``budget``.

        The pause before a retry is this request's own time, like the 5xx back-off (the
        ``request_deadline`` bounds it: see the class docstring): the seconds waited are taken
        from ``budget``, and a cool-down that would outlast what is left of it fails the
        request now, naming the host, the wait and the deadline, without a retry. Requests
        merely queued behind the cool-down still wait for it (up to the governor's bound), as
        queueing. Raises ``RateLimited``.
        """
        while (wait := self.governor.remaining(host)) > 0:
            if wait > self.governor.max_wait:
                error = self.governor.over_bound(host, wait)
            elif wait > budget.left:
                error = RateLimited(self._past_deadline_wait(host, wait, budget), host=host)
            else:
                budget.left -= wait
                await self._timer.sleep(wait)
                continue
            stats.retries -= 1  # counted by ``_rate_limited``, but not made
            stats.errors += 1
            raise error

    def _past_deadline_wait(self, host: str, wait: float, budget: _Budget) -> str:
        """The reason of a request whose rate-limit wait would outlast its deadline."""
        left = max(budget.left, 0.0)
        return (
            f"{host} is rate limited ({self.governor.reason(host)}): a wait of "
            f"{seconds_text(wait)} s, more than the {seconds_text(left)} s left of the "
            f"{self._deadline:g} s request deadline; "
            "not retried"
        )

    async def _send(
        self,
        host: str,
        url: str,
        headers: Mapping[str, str],
        stats: HostStats,
        budget: _Budget,
        *,
        method: str = "GET",
        body: bytes | None = None,
    ) -> tuple[FetchResponse | None, str]:
        """Send one request inside the host's slot; return the response or a transport failure.

        The network part gets what is left of ``budget``; running out raises (see
        ``_past_deadline``), as does a body over the size bound (``RegistryError``).
        """
        import httpx  # noqa: PLC0415 - lazy: start-up

        from patchula.http.transport import BodyTooLarge  # noqa: PLC0415 - lazy: start-up

        async with self._paced(host, url) as pace_turn, self._limiter(host):
            self._refuse_given_up(host, stats)
            # Checked after taking a slot: a request queued before a 429 arrived must not
            # slip through the cool-down that 429 started.
            try:
                await self.governor.wait_turn(host)
            except RateLimited:
                stats.errors += 1
                raise
            await pace_turn()
            stats.requests += 1
            stats.in_flight += 1
            stats.max_concurrency = max(stats.max_concurrency, stats.in_flight)
            response: RawResponse | None = None

            def heard(status: int) -> None:
                # The status line and headers arrived: the host has answered, whatever then
                # becomes of the body (a drip past the deadline, a size bound, a reset), so it
                # is never called unreachable, and the answer counts in its statistics.
                self._answered.add(host)
                self._failures[host] = 0
                klass = f"{status // 100}xx"
                stats.responses[klass] = stats.responses.get(klass, 0) + 1
                if status == 304:  # noqa: PLR2004 - Not Modified
                    stats.not_modified += 1

            # The deadline clock runs only here, on the network: the slot, cool-down and
            # throttle waits above are queueing (see the class docstring).
            started = anyio.current_time()
            drips = self._drips.setdefault(host, set())
            try:
                with anyio.move_on_after(budget.left) as scope:
                    drips.add(scope)
                    response = await self._get(url, headers, heard, method=method, body=body)
            except BodyTooLarge as exc:
                # An answer (``heard`` counted it), but one not to read: the connection is
                # closed, not retried.
                stats.errors += 1
                msg = f"{host} sent a response {exc}; not retried"
                raise RegistryError(msg) from None
            except (httpx.TransportError, httpx.DecodingError) as exc:
                # A body that fails to decode was cut short or damaged on the way: retried.
                self._failures[host] = self._failures.get(host, 0) + 1
                proxy = _proxy_for(url, self._proxies)
                via = f" through proxy {proxy}" if proxy else ""
                return None, f"{type(exc).__name__} talking to {host}{via}"
            finally:
                drips.discard(scope)
                stats.in_flight -= 1
                budget.left -= anyio.current_time() - started
            if response is None or scope.cancelled_caught:
                # Cancelled as the host was given up on, or past the deadline.
                self._refuse_given_up(host, stats, slow_only=True)
                raise self._past_deadline(host, stats, "")
            self._overdue[host] = 0  # a complete answer: the host is slow no longer
        return FetchResponse(
            status=response.status,
            url=response.url,
            headers=response.headers,
            content=response.content,
            fetched_at=self._timer.wall(),
        ), ""

    async def _get(
        self,
        url: str,
        headers: Mapping[str, str],
        on_head: Callable[[int], None],
        *,
        method: str = "GET",
        body: bytes | None = None,
    ) -> RawResponse:
        """Send ``method url`` (``body``); read the answer's body within ``max_body_bytes``.

        Redirects are returned; a HEAD's body is empty.

        ``on_head`` gets the status code once the status line and headers have arrived,
        before the body is read.

        Straight through the run's pooled transport when no proxy applies (httpx's request
        and response models cost about as much CPU as the protocol itself, and a scan makes
        thousands of requests); through the client, which honours the proxy variables,
        otherwise (streamed, so the same bound applies). Raises httpx's ``TransportError`` or
        ``DecodingError``, or ``BodyTooLarge``.
        """
        from patchula.http.transport import (  # noqa: PLC0415 - lazy: start-up
            PerHostPoolTransport,
            RawResponse,
            read_body,
        )

        transport = self._client._transport  # noqa: SLF001 - our own PerHostPoolTransport
        if not isinstance(transport, PerHostPoolTransport) or _proxied(url, self._proxies):
            async with self._client.stream(
                method, url, headers=dict(headers), content=body, follow_redirects=False
            ) as response:
                on_head(response.status_code)
                names = tuple((k.lower(), v) for k, v in response.headers.multi_items())
                content = (
                    b""
                    if method == "HEAD"
                    else await read_body(response.aiter_raw(), names, self._max_body, self.bodies)
                )
            return RawResponse(
                status=response.status_code, url=str(response.url), headers=names, content=content
            )
        if self._defaults is None:
            self._defaults = [(k.lower(), v) for k, v in self._client.headers.multi_items()]
            self._timeouts = self._client.timeout.as_dict()
        extra = [(k.lower(), v) for k, v in headers.items()]
        replaced = {k for k, _ in extra}  # a caller's "Accept" replaces the default "accept"
        merged = [(k, v) for k, v in self._defaults if k not in replaced] + extra
        return await transport.get(
            url,
            merged,
            self._timeouts,
            self._max_body,
            on_head,
            method=method,
            body=body,
            pool=self.bodies,
        )

    def _past_deadline(self, host: str, stats: HostStats, detail: str) -> LookupFailed:
        """The error for a request whose deadline passed talking to ``host``.

        ``RegistryUnreachable`` when ``host`` has not answered this run; a second wave of such
        requests (more than its limit) marks it unreachable, like network failures do, so the
        rest of its lookups fail at once. ``RegistryError`` when it has answered: a status
        line and headers count, so a body still dripping at the deadline is that lookup's
        failure, not the host's, until ``_slow_after`` of them in a row with no complete
        answer between: then the host is given up on as too slow (``_give_up_slow``).
        """
        stats.errors += 1
        msg = f"no complete answer from {host} within {self._deadline:g} s (deadline){detail}"
        if host in self._answered:
            self._overdue[host] = overdue = self._overdue.get(host, 0) + 1
            if overdue >= self._slow_after(host):
                self._give_up_slow(host, overdue)
            return RegistryError(msg)
        self._failures[host] = self._failures.get(host, 0) + 1
        if self._failures[host] > self.limit_for(host):
            self._unreachable.setdefault(host, f"no answer within {self._deadline:g} s")
        return RegistryUnreachable(msg)

    def _refuse_given_up(self, host: str, stats: HostStats, *, slow_only: bool = False) -> None:
        """Raise the host-wide reason when ``host`` was found unreachable or too slow.

        Checked after a slot is taken, so requests queued before it was found fail at once too,
        without a request; and (``slow_only``: too slow only) after a request was cancelled or
        ran out of time, so one ended by ``_give_up_slow`` says why.
        """
        down = None if slow_only else self._unreachable.get(host)
        if down is not None:
            stats.errors += 1
            raise RegistryUnreachable(_unreachable(host, down))
        if host in self._too_slow:
            stats.errors += 1
            raise RegistryError(self._too_slow_reason(host))

    def _give_up_slow(self, host: str, overdue: int) -> None:
        """Fail the rest of ``host``'s lookups at once: ``overdue`` deadlines in a row passed.

        The requests still on the network are cancelled (each fails with the reason, counted
        in its host's errors), the queued and later ones fail before they are sent.
        """
        self._too_slow.setdefault(host, overdue)
        for scope in self._drips.pop(host, set()):
            scope.cancel()

    def _rate_limited(
        self,
        host: str,
        response: FetchResponse,
        attempt: int,
        stats: HostStats,
        whose: str = "these requests",
    ) -> bool:
        """Apply what ``response`` says about the host's limit; True means "retry after it".

        Raises ``RateLimited`` for a quota answer, a wait over the bound (for a used-up primary
        limit: naming its reset time and ``whose`` budget it was), or exhausted retries. A 2xx
        that is a limit refusal (GitHub GraphQL's) is never returned as an answer.
        """
        if response.status not in _LIMIT_STATUSES and all(
            name != "x-ratelimit-remaining" for name, _ in response.headers
        ):
            return False  # the common case: no rate-limit signal to read (``read_signal``)
        headers = dict(response.headers)
        note_budget(stats, headers)
        now = self._timer.wall()
        signal = read_signal(response.status, headers, response.content, attempt, now)
        if signal.wait is None:
            return False
        if signal.reset_at is not None and whose == "unauthenticated requests" and signal.limit:
            whose = f"unauthenticated requests ({signal.limit} per window, x-ratelimit-limit)"
        self.governor.cool_down(
            host, signal.wait, signal.why, reset_at=signal.reset_at, whose=whose
        )
        stats.cooldown_seconds = self.governor.cooldown_seconds.get(host, 0.0)
        stats.cooldown_refused_seconds = self.governor.refused_seconds.get(host, 0.0)
        if not signal.refused and response.status < 400:  # noqa: PLR2004 - a success
            return False  # that announces a cool-down
        stats.rate_limited += 1
        bound = self.governor.max_wait
        if signal.fatal:
            error = RateLimited(f"{host}: {signal.why}; not retried", host=host)
        elif signal.wait > bound and signal.reset_at is not None:
            # A used-up primary limit: the reason names its reset, as for the queued requests.
            error = self.governor.over_bound(host, signal.wait, signal.why)
        elif signal.wait > bound:
            asked = f"the server asked to wait {seconds_text(signal.wait)} s"
            error = RateLimited(over_bound_text(host, signal.why, asked, bound), host=host)
        elif attempt >= MAX_RATE_RETRIES:
            msg = f"{host} still rate limited after {MAX_RATE_RETRIES} retries ({signal.why})"
            error = RateLimited(msg, host=host)
        else:
            stats.retries += 1
            return True
        stats.errors += 1
        raise error


class _Floor(msgspec.Struct, frozen=True):
    """A configured minimum freshness: ``seconds`` after the fetch, maybe only when unvalidated."""

    seconds: float
    unvalidated_only: bool = False

    def applies(self, *, validated: bool) -> bool:
        """Whether this floor covers an entry that has (or lacks) validators."""
        return self.seconds > 0 and not (self.unvalidated_only and validated)


_NO_FLOOR = _Floor(0.0)

# The cache writes an ``all_or_nothing`` block of the running task keeps back (``None``: none).
_GROUP: contextvars.ContextVar[list[Callable[[], Awaitable[Any]]] | None] = contextvars.ContextVar(
    "patchula_write_group", default=None
)


def _private(token: Token | None, credential: Credential | None) -> bool:
    """Whether an answer to ``token`` must stay out of a key naming only ``credential``.

    True for a token obtained with a credential (the realm's) sent to a URL that has none.
    """
    return token is not None and token.source is not None and credential is None


def _token_refused(response: FetchResponse, url: str, realm: str) -> FetchResponse:
    """``response``, a 401/403 to a bearer token from ``realm`` saying the token was refused.

    Without it the row would read "no credential configured" (an anonymous token) though a
    token was obtained and sent. Names the token service's host and port, never the token.
    """
    if response.status not in {401, 403} or _origin(response.url) != _origin(url):
        return response
    service = host_key(realm)
    why = f"the bearer token from the token service at {service} was refused"
    return replace(response, credential_unused=why)


def _is_fresh(entry: HttpEntry, floor: _Floor, now: float) -> bool:
    """Whether ``entry`` may be used without a request at ``now`` (epoch seconds).

    Fresh per its upstream expiry (RFC 9111), or within ``floor`` seconds of its own fetch
    time (a configured freshness floor, never extended by reads; ``no-cache`` entries get none,
    nor do entries with validators when the floor is for unvalidated ones only).
    """
    if now < entry.expires_at:
        return True
    validated = bool(entry.etag or entry.last_modified)
    if not floor.applies(validated=validated) or "no-cache" in directives(entry.cache_control):
        return False
    return now < entry.fetched_at + floor.seconds


def _fresh_response(entry: HttpEntry, url: str) -> FetchResponse:
    return FetchResponse(
        status=entry.status,
        url=url,
        headers=entry.headers,
        content=entry.body,
        fetched_at=datetime.fromtimestamp(entry.fetched_at, UTC),
        cache="fresh",
    )


def _unreachable(host: str, down: str) -> str:
    """The reason of every lookup failed because ``host`` is unreachable, worded once.

    The lookup that found the host down and those failed at once afterwards get the same text,
    so a report says the same of every row of that host whichever found it first.
    """
    return f"{host} is unreachable ({down}): no answer this run; its lookups were not tried again"


def _failure_reason(failure: str, host: str) -> str:
    """``"ConnectError talking to h through proxy p"`` → ``"ConnectError through proxy p"``."""
    return failure.replace(f" talking to {host}", "", 1)


class _Budget(msgspec.Struct):
    """Seconds left of one request's deadline (spent by network attempts and back-off)."""

    left: float


def _origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``: what the caller's credentials are bound to."""
    import httpx  # noqa: PLC0415 - lazy: start-up

    parsed = httpx.URL(url)
    return parsed.scheme, (parsed.host or "").lower(), parsed.port


def _redirected_method(method: str, status: int) -> str:
    """The method of the request a ``status`` redirect asks for (RFC 9110 §15.4).

    307 and 308 keep it (and the body); 303 asks for a GET, except of a HEAD; 301 and 302 turn
    a POST into a GET, as §15.4.2-3 allow and browsers, curl and httpx do.
    """
    if status == 303 and method != "HEAD":  # noqa: PLR2004 - See Other
        return "GET"
    if status in {301, 302} and method == "POST":  # Moved Permanently, Found
        return "GET"
    return method


def _redirect_target(url: str, location: str) -> str:
    """Resolve ``location`` against ``url`` (RFC 9110 §10.2.2, RFC 3986 §5).

    Raises ``RegistryError`` for a target that is not http(s) (``file:``, ``ftp:``, ``data:`` …)
    or not a URL at all; the message names only the scheme, never the location (it could carry
    a secret).
    """
    import httpx  # noqa: PLC0415 - lazy: start-up

    try:
        target = httpx.URL(url).join(location.strip())
    except httpx.InvalidURL:
        target = None
    if target is None or target.scheme not in {"http", "https"} or not target.host:
        scheme = location.partition(":")[0] if ":" in location else "?"
        msg = (
            f"{host_key(url)} redirected to a non-HTTP(S) location ({scheme[:16]!r}); not followed"
        )
        raise RegistryError(msg)
    return str(target)


async def _no_pause() -> None:
    """The turn of a request that is not paced: returns at once, without yielding."""


class _Unpaced:
    """``_paced`` for a URL in no paced tree: its turn is ``_no_pause``.

    Entering is not a checkpoint: a request that has just passed the cool-down check must be
    sent before any other task runs, or a 429 met meanwhile would not stop it.
    """

    __slots__ = ()

    async def __aenter__(self) -> Callable[[], Awaitable[None]]:
        return _no_pause

    async def __aexit__(self, *_: object) -> None:
        return None


_UNPACED = _Unpaced()


class _Pace(msgspec.Struct):
    """One paced URL tree: ``interval`` seconds between requests, the next allowed time."""

    interval: float
    next_at: float | None = None
    lock: anyio.Lock = msgspec.field(default_factory=anyio.Lock)


def _url_path(url: str) -> str:
    """The path of ``url`` (``/`` at least), without query or fragment."""
    rest = url.partition("://")[2]
    path = "/" + rest.partition("/")[2]
    return path.partition("?")[0].partition("#")[0]


def host_key(url: str) -> str:
    """Return the host a limit applies to: lower-case host, plus ``:port`` when not the default."""
    scheme, _, rest = url.partition("://")
    return _origin_host_key(f"{scheme}://{rest.split('/', 1)[0]}" if rest else url)


@functools.lru_cache(maxsize=1024)
def _origin_host_key(origin: str) -> str:
    """``host_key`` of ``scheme://authority``: a scan talks to a handful of origins."""
    import httpx  # noqa: PLC0415 - lazy: start-up

    parsed = httpx.URL(origin)
    host = (parsed.host or "").lower()
    default = {"http": 80, "https": 443}.get(parsed.scheme)
    if parsed.port is not None and parsed.port != default:
        return f"{host}:{parsed.port}"
    return host


# Keys per batched cache read: big enough that a job's hand-off is shared by many lookups,
# small enough that the four readers share a burst and its first answers come back early.
READ_BATCH_KEYS = 64


class _BatchedReads:
    """Cache reads issued in the same event-loop turn travel to a reader thread as one job.

    A run starts hundreds of lookups at once; one reader job per ``READ_BATCH_KEYS`` keys costs
    one thread hand-off (and one wake-up event) instead of one per lookup.
    """

    def __init__(self, cache: Cache) -> None:
        self._cache = cache
        self._batch: _ReadBatch | None = None

    async def get(self, key: str) -> HttpEntry | None:
        batch = self._batch
        if batch is not None and len(batch.keys) < READ_BATCH_KEYS:
            batch.keys[key] = None
            return (await batch.wait()).get(key)
        batch = self._batch = _ReadBatch()
        batch.keys[key] = None
        try:
            await anyio.lowlevel.checkpoint()  # let the other lookups of this turn join in
            if self._batch is batch:
                self._batch = None
            found = await self._cache.get_http_many(list(batch.keys))
        except BaseException as exc:
            if self._batch is batch:
                self._batch = None
            batch.fail(exc)
            raise
        batch.succeed(found)
        return found.get(key)


class _ReadBatch(_Flight[dict[str, HttpEntry | None]]):
    """The keys of one batched cache read (insertion-ordered, no repeats) and its result."""

    __slots__ = ("keys",)

    def __init__(self) -> None:
        super().__init__()
        self.keys: dict[str, None] = {}


def __getattr__(name: str) -> Any:  # noqa: ANN401 - PEP 562: a re-exported class
    # ``PerHostPoolTransport`` is the transport's (it imports httpx): on demand only.
    if name == "PerHostPoolTransport":
        from patchula.http.transport import PerHostPoolTransport  # noqa: PLC0415 - lazy: start-up

        return PerHostPoolTransport
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
