"""The shared rate-limit governor: one cool-down per host that every request to it honours.

A 429 (or a GitHub primary/secondary limit answer) starts a **host-wide cool-down**: every queued
and every new request to that host waits until it ends, none bypasses it, other hosts are not
affected. The wait comes from ``Retry-After`` (delta-seconds or HTTP-date, RFC 9110 §10.2.3),
else ``X-Retry-After`` (an epoch, Docker Hub's API), else ``x-ratelimit-reset`` when
``x-ratelimit-remaining`` is 0 (GitHub's primary limit) and the reset is still ahead, else one
minute for a GitHub secondary limit, else 1, 2, 4 s by attempt. At most ``MAX_RATE_RETRIES``
retries; a required wait above ``MAX_WAIT_SECONDS`` fails at once — for that request and, since
the cool-down stays recorded, for every request queued behind it — with a reason naming the host
and the wait. A Docker Hub pull-quota answer fails at once without a short retry.

Sources: RFC 9110 §10.2.3 and RFC 6585 §4 (429); docs.github.com "Rate limits for the REST API"
(primary and secondary limits); docs.docker.com "Docker Hub usage and limits" (pull quota) and
its Hub API reference (``X-Retry-After``).
"""

from __future__ import annotations

import email.utils
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from datetime import UTC, datetime

import anyio

from patchula.errors import RegistryError

MAX_RATE_RETRIES = 3
MAX_WAIT_SECONDS = 60.0
SECONDARY_LIMIT_WAIT = 60.0


class RateLimited(RegistryError):  # noqa: N818 - names the outcome, like LookupFailed
    """A host's rate limit made this request fail (wait too long, retries exhausted, quota)."""


@dataclass(slots=True)
class Timer:
    """The governor's view of time, injectable so tests never really sleep.

    ``monotonic`` is in seconds; ``wall`` is an aware UTC datetime (for ``Retry-After`` dates
    and ``x-ratelimit-reset`` epochs); ``sleep`` waits the given seconds.
    """

    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], datetime] = lambda: datetime.now(UTC)
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep


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


@dataclass(frozen=True, slots=True)
class LimitSignal:
    """What a response says about the host's rate limit.

    ``wait`` is the required pause in seconds (``None``: not a rate-limit answer); ``fatal`` is
    set for answers that must not be retried (Docker Hub pull quota), ``why`` names the signal.
    """

    wait: float | None
    why: str
    fatal: bool = False


def read_signal(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    attempt: int,
    now: datetime,
) -> LimitSignal:
    """Classify one response; ``headers`` keys are lower-case, ``attempt`` counts from 0.

    A 2xx/3xx with ``x-ratelimit-remaining: 0`` is a successful answer that still announces a
    cool-down until ``x-ratelimit-reset`` (GitHub asks clients to stop until then).
    """
    if status not in {403, 429} and "x-ratelimit-remaining" not in headers:
        return LimitSignal(wait=None, why="")  # the common case: nothing to read
    text = body[:2048].decode("utf-8", "replace").lower()
    remaining = headers.get("x-ratelimit-remaining", "").strip()
    reset_wait = _reset_wait(headers.get("x-ratelimit-reset"), now) if remaining == "0" else None
    retry_after = retry_after_seconds(headers.get("retry-after"), now)
    if status == 429 and _docker_pull_quota(headers, text):  # noqa: PLR2004 - Too Many Requests
        window = _docker_window(headers)
        return LimitSignal(wait=window, why="Docker Hub pull quota exhausted", fatal=True)
    limited = status == 429 or (  # noqa: PLR2004 - Too Many Requests
        status == 403  # noqa: PLR2004 - GitHub signals limits with 403 as well
        and (remaining == "0" or "rate limit" in text or retry_after is not None)
    )
    if not limited:
        if reset_wait is not None:
            return LimitSignal(wait=reset_wait, why="x-ratelimit-remaining is 0")
        return LimitSignal(wait=None, why="")
    if retry_after is not None:
        return LimitSignal(wait=retry_after, why=f"HTTP {status} with Retry-After")
    # Docker Hub's API has named the moment to retry in ``X-Retry-After`` (epoch seconds).
    retry_at = _reset_wait(headers.get("x-retry-after"), now)
    if retry_at is not None:
        return LimitSignal(wait=retry_at, why=f"HTTP {status} with X-Retry-After")
    if reset_wait is not None:
        return LimitSignal(wait=reset_wait, why=f"HTTP {status}, rate limit resets")
    if "secondary rate limit" in text:
        return LimitSignal(wait=SECONDARY_LIMIT_WAIT, why=f"HTTP {status} secondary rate limit")
    return LimitSignal(wait=float(2**attempt), why=f"HTTP {status} without Retry-After")


def _reset_wait(value: str | None, now: datetime) -> float | None:
    if value is None:
        return None
    try:
        reset = float(value.strip())
    except ValueError:
        return None
    if not math.isfinite(reset):
        return None
    wait = reset - now.timestamp()
    # A reset already reached (clock skew, or the window turned over in flight) says nothing
    # about how long to wait; a 0 s wait would fire every retry at once, so the caller falls
    # back to the 1, 2, 4 s back-off instead.
    return wait if wait > 0 else None


def _docker_pull_quota(headers: Mapping[str, str], text: str) -> bool:
    if headers.get("ratelimit-remaining", "").strip().startswith("0"):
        return True
    return "toomanyrequests" in text and "pull rate limit" in text


def _docker_window(headers: Mapping[str, str]) -> float:
    """Return the quota window (``ratelimit-remaining: 0;w=21600``), or one hour."""
    for part in headers.get("ratelimit-remaining", "").split(";")[1:]:
        key, _, value = part.strip().partition("=")
        if key == "w":
            try:
                return max(float(value), 0.0)
            except ValueError:
                break
    return 3600.0


class Governor:
    """Per-host cool-downs shared by every request of a run.

    ``cooldown_seconds[host]`` accumulates the cool-down time announced for each host (seconds,
    overlaps counted once).
    """

    def __init__(self, timer: Timer | None = None, max_wait: float = MAX_WAIT_SECONDS) -> None:
        self.timer = timer or Timer()
        self.max_wait = max_wait
        self._until: dict[str, float] = {}
        self._why: dict[str, str] = {}
        self.cooldown_seconds: dict[str, float] = {}

    def remaining(self, host: str) -> float:
        """Return the seconds left in ``host``'s cool-down (0 when none)."""
        return max(self._until.get(host, 0.0) - self.timer.monotonic(), 0.0)

    async def wait_turn(self, host: str) -> float:
        """Wait until ``host`` is not cooling down; return the seconds waited.

        Raises ``RateLimited`` at once when the remaining cool-down exceeds ``max_wait``.
        """
        waited = 0.0
        while (left := self.remaining(host)) > 0:
            if left > self.max_wait:
                why = self._why.get(host, "rate limited")
                msg = (
                    f"{host} is rate limited ({why}): {left:.0f}s left, "
                    f"over the {self.max_wait:.0f}s bound"
                )
                raise RateLimited(msg)
            await self.timer.sleep(left)
            waited += left
        return waited

    def cool_down(self, host: str, seconds: float, why: str) -> None:
        """Start or extend ``host``'s cool-down to at least ``seconds`` from now."""
        now = self.timer.monotonic()
        old = max(self._until.get(host, 0.0), now)
        new = now + max(seconds, 0.0)
        if new > old:
            self._until[host] = new
            self._why[host] = why
            self.cooldown_seconds[host] = self.cooldown_seconds.get(host, 0.0) + (new - old)
