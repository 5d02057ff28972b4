"""The fetch facade: the only code that sends HTTP requests.

One shared ``httpx.AsyncClient`` per run, a concurrency limiter per host, single-flight for
identical concurrent requests, bounded retries for transient failures, and per-host statistics
for the report. It knows hosts, not registries. The shared 429 cool-down governor and the SQLite
cache plug in here (issues 3 and 4); every datasource already goes through this one seam.
"""

from __future__ import annotations

import email.utils
import random
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime

import anyio
import httpx

from patchula import __version__
from patchula.errors import RegistryError, RegistryUnreachable
from patchula.models import FetchResponse

DEFAULT_HOST_CONCURRENCY = 16
MAX_RETRIES = 3
MAX_RETRY_WAIT_SECONDS = 60.0
USER_AGENT = f"patchula/{__version__} (dependency freshness scanner)"

Sleep = Callable[[float], Awaitable[None]]
Now = Callable[[], datetime]


@dataclass(slots=True)
class HostStats:
    """Request statistics for one host; ``max_concurrency`` is the peak of requests in flight."""

    requests: int = 0
    responses: dict[str, int] = field(default_factory=dict)
    not_modified: int = 0
    rate_limited: int = 0
    retries: int = 0
    cooldown_seconds: float = 0.0
    errors: int = 0
    in_flight: int = 0
    max_concurrency: int = 0


def make_client(timeout: float = 30.0) -> httpx.AsyncClient:
    """Return the run's shared client.

    HTTP/1.1 keep-alive retaining up to 32 idle connections per host, connect timeout 10 s and
    ``timeout`` seconds for reads, redirects followed (PyPI answers non-canonical names with 301),
    a ``patchula/<version>`` User-Agent, and the standard proxy and CA variables honoured
    (``HTTPS_PROXY``, ``NO_PROXY``, ``SSL_CERT_FILE``; httpx's ``trust_env``).
    """
    return httpx.AsyncClient(
        timeout=httpx.Timeout(timeout, connect=10.0),
        limits=httpx.Limits(max_connections=None, max_keepalive_connections=32 * 8),
        headers={"User-Agent": USER_AGENT},
        follow_redirects=True,
        trust_env=True,
    )


class Fetcher:
    """GET with per-host limits, single-flight, bounded retries and statistics.

    ``host_limits`` maps a host name (lower-case, no port) to its concurrency limit (1-100);
    other hosts get ``default_limit``. ``sleep`` and ``now`` are injectable so tests never
    sleep for real.
    """

    def __init__(
        self,
        client: httpx.AsyncClient,
        *,
        host_limits: Mapping[str, int] | None = None,
        default_limit: int = DEFAULT_HOST_CONCURRENCY,
        sleep: Sleep = anyio.sleep,
        now: Now = lambda: datetime.now(UTC),
    ) -> None:
        self._client = client
        self._host_limits = {k.lower(): v for k, v in (host_limits or {}).items()}
        self._default_limit = default_limit
        self._limiters: dict[str, anyio.CapacityLimiter] = {}
        self._inflight: dict[tuple[str, tuple[tuple[str, str], ...]], _Flight] = {}
        self._sleep = sleep
        self._now = now
        self.stats: dict[str, HostStats] = {}

    async def __call__(
        self, url: str, *, headers: Mapping[str, str] | None = None
    ) -> FetchResponse:
        """Return the response to ``GET url``; identical concurrent calls share one request.

        Raises ``RegistryUnreachable`` when no HTTP answer arrives after the retries, and
        ``RegistryError`` when a 429 asks for a wait above 60 s or retries are exhausted.
        """
        key = (url, tuple(sorted((k.lower(), v) for k, v in (headers or {}).items())))
        flight = self._inflight.get(key)
        if flight is not None:
            return await flight.wait()
        flight = _Flight()
        self._inflight[key] = flight
        try:
            response = await self._fetch(url, headers or {})
        except BaseException as exc:
            flight.fail(exc)
            raise
        else:
            flight.succeed(response)
            return response
        finally:
            del self._inflight[key]

    def _limiter(self, host: str) -> anyio.CapacityLimiter:
        limiter = self._limiters.get(host)
        if limiter is None:
            limiter = anyio.CapacityLimiter(self._host_limits.get(host, self._default_limit))
            self._limiters[host] = limiter
        return limiter

    async def _fetch(self, url: str, headers: Mapping[str, str]) -> FetchResponse:
        host = (httpx.URL(url).host or "").lower()
        stats = self.stats.setdefault(host, HostStats())
        attempt = 0
        while True:
            async with self._limiter(host):
                stats.requests += 1
                stats.in_flight += 1
                stats.max_concurrency = max(stats.max_concurrency, stats.in_flight)
                try:
                    response = await self._client.get(url, headers=dict(headers))
                    content = response.content
                except httpx.TransportError as exc:
                    response = None
                    failure = f"{type(exc).__name__} talking to {host}"
                finally:
                    stats.in_flight -= 1
            if response is not None:
                status = response.status_code
                klass = f"{status // 100}xx"
                stats.responses[klass] = stats.responses.get(klass, 0) + 1
                if status == 304:  # noqa: PLR2004 - Not Modified
                    stats.not_modified += 1
                if status == 429:  # noqa: PLR2004 - Too Many Requests
                    stats.rate_limited += 1
                    wait = retry_after_seconds(response.headers.get("retry-after"), self._now())
                    if wait is None:
                        wait = float(2**attempt)
                    if wait > MAX_RETRY_WAIT_SECONDS:
                        stats.errors += 1
                        msg = f"rate limited by {host}: Retry-After asks for {wait:.0f}s (over 60s)"
                        raise RegistryError(msg)
                elif status < 500:  # noqa: PLR2004 - server errors are retried below
                    return FetchResponse(
                        status=status,
                        url=str(response.url),
                        headers=tuple((k.lower(), v) for k, v in response.headers.multi_items()),
                        content=content,
                        fetched_at=self._now(),
                    )
                else:
                    wait = 0.5 * 2**attempt + random.uniform(0, 0.25)  # noqa: S311 - jitter
                failure = f"HTTP {status} from {host}"
            else:
                wait = 0.5 * 2**attempt + random.uniform(0, 0.25)  # noqa: S311 - jitter
            if attempt >= MAX_RETRIES:
                stats.errors += 1
                msg = f"{failure}; gave up after {MAX_RETRIES} retries"
                if response is None:
                    raise RegistryUnreachable(msg)
                raise RegistryError(msg)
            attempt += 1
            stats.retries += 1
            stats.cooldown_seconds += wait
            await self._sleep(wait)


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """Parse a ``Retry-After`` header (RFC 9110 §10.2.3): delta-seconds or an HTTP-date.

    Returns seconds to wait (0 for dates in the past or negative numbers), or ``None`` when the
    header is absent or unparseable.
    """
    if value is None:
        return None
    value = value.strip()
    try:
        return max(float(int(value)), 0.0)
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - now).total_seconds(), 0.0)


class _Flight:
    """One in-flight request that concurrent callers of the same key wait on."""

    def __init__(self) -> None:
        self._done = anyio.Event()
        self._response: FetchResponse | None = None
        self._error: BaseException | None = None

    def succeed(self, response: FetchResponse) -> None:
        self._response = response
        self._done.set()

    def fail(self, error: BaseException) -> None:
        self._error = error
        self._done.set()

    async def wait(self) -> FetchResponse:
        await self._done.wait()
        if isinstance(self._error, Exception):
            raise self._error
        if self._error is not None:
            # The leader was cancelled; its waiters are not, and must not inherit that.
            msg = "the shared request was cancelled before it finished"
            raise RegistryError(msg)
        if self._response is None:  # pragma: no cover - set before the event fires
            msg = "single-flight finished without a result"
            raise RegistryError(msg)
        return self._response
