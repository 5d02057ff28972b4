"""The shared rate-limit governor: one cool-down per host that every request to it honours.

A 429 (or a GitHub primary/secondary limit answer) starts a **host-wide cool-down**: every queued
and every new request to that host waits until it ends, none bypasses it, other hosts are not
affected. The wait comes from ``Retry-After`` (delta-seconds or HTTP-date, RFC 9110 §10.2.3),
else ``X-Retry-After`` (an epoch, Docker Hub's API), else ``x-ratelimit-reset`` when
``x-ratelimit-remaining`` is 0 (GitHub's primary limit) and the reset is still ahead, else one
minute for a GitHub secondary limit (doubled for each further one: GitHub asks for an
exponentially increasing wait, so a second one in a row is over the bound and fails), else 1,
2, 4 s by attempt. At most ``MAX_RATE_RETRIES`` retries; a required wait above
``MAX_WAIT_SECONDS`` fails at once — for that request and, since the cool-down stays recorded,
for every request queued behind it, without a request — with a reason naming the host and the
wait (for a used-up primary limit: the reset time, and whose budget it was). A Docker Hub
pull-quota answer fails at once without a short retry.

GitHub's GraphQL API refuses with HTTP 200: an ``errors`` entry of type ``RATE_LIMITED`` (the
primary limit) or a "secondary rate limit" message, without ``data``. Such a 2xx is a refusal
like a 403 (``LimitSignal.refused``): retried or failed, never handed on as data or cached.

Sources: RFC 9110 §10.2.3 and RFC 6585 §4 (429); docs.github.com "Rate limits for the REST API"
(primary and secondary limits); docs.docker.com "Docker Hub usage and limits" (pull quota) and
its Hub API reference (``X-Retry-After``).
"""

from __future__ import annotations

import email.utils
import json
import math
import time
from collections.abc import Awaitable, Callable, Mapping
from datetime import UTC, datetime, timedelta

import anyio
import msgspec

from patchula.errors import RegistryError

MAX_RATE_RETRIES = 3
MAX_WAIT_SECONDS = 60.0
SECONDARY_LIMIT_WAIT = 60.0


class RateLimited(RegistryError):  # noqa: N818 - names the outcome, like LookupFailed
    """A host's rate limit made this request fail (wait too long, retries exhausted, quota).

    ``host`` is the host (``host_key`` form) whose limit it was; ``reset_at`` the aware UTC
    time its used-up primary limit resets (``x-ratelimit-reset``), else ``None``.
    """

    def __init__(self, reason: str, *, host: str = "", reset_at: datetime | None = None) -> None:
        super().__init__(reason)
        self.host = host
        self.reset_at = reset_at


class Timer(msgspec.Struct):
    """The governor's view of time, injectable so tests never really sleep.

    ``monotonic`` is in seconds; ``wall`` is an aware UTC datetime (for ``Retry-After`` dates
    and ``x-ratelimit-reset`` epochs); ``sleep`` waits the given seconds.
    """

    monotonic: Callable[[], float] = time.monotonic
    wall: Callable[[], datetime] = lambda: datetime.now(UTC)
    sleep: Callable[[float], Awaitable[None]] = anyio.sleep


def retry_after_seconds(value: str | None, now: datetime) -> float | None:
    """Parse a ``Retry-After`` header (RFC 9110 §10.2.3): delta-seconds or an HTTP-date.

    Returns seconds to wait (0 for a date in the past), or ``None`` when the header is absent
    or invalid. delta-seconds is ``1*DIGIT``: a sign (``-5``), a fraction (``1.5``), an
    exponent (``1e9``) or any other text is invalid, and the caller falls back to the 1, 2,
    4 s back-off as for no header (a ``-5`` read as 0 s fired every retry at once).
    """
    if value is None:
        return None
    value = value.strip()
    if value.isascii() and value.isdigit():
        # Past 12 digits (over 30,000 years) the exact figure does not matter: over any bound.
        return float(int(value)) if len(value) <= 12 else 1e12  # noqa: PLR2004
    try:
        when = email.utils.parsedate_to_datetime(value)
    except (TypeError, ValueError, IndexError):
        return None
    if when.tzinfo is None:
        when = when.replace(tzinfo=UTC)
    return max((when - now).total_seconds(), 0.0)


class LimitSignal(msgspec.Struct, frozen=True):
    """What a response says about the host's rate limit.

    ``wait`` is the required pause in seconds (``None``: not a rate-limit answer); ``fatal`` is
    set for answers that must not be retried (Docker Hub pull quota), ``why`` names the signal.
    """

    wait: float | None
    why: str
    fatal: bool = False
    # The answer is a refusal, not data, though its status is 2xx (GitHub GraphQL's limits).
    refused: bool = False
    # A used-up primary limit: when it resets (``x-ratelimit-reset``) and its size.
    reset_at: datetime | None = None
    limit: str | None = None


def read_signal(
    status: int,
    headers: Mapping[str, str],
    body: bytes,
    attempt: int,
    now: datetime,
) -> LimitSignal:
    """Classify one response; ``headers`` keys are lower-case, ``attempt`` counts from 0.

    A 2xx/3xx with ``x-ratelimit-remaining: 0`` is a successful answer that still announces a
    cool-down until ``x-ratelimit-reset`` (GitHub asks clients to stop until then). A 2xx that
    is a GitHub GraphQL limit refusal (``_graphql_refusal``) is read like a 403.
    """
    if status not in {403, 429} and "x-ratelimit-remaining" not in headers:
        return LimitSignal(wait=None, why="")  # the common case: nothing to read
    text = body[:2048].decode("utf-8", "replace").lower()
    remaining = headers.get("x-ratelimit-remaining", "").strip()
    reset_wait = _reset_wait(headers.get("x-ratelimit-reset"), now) if remaining == "0" else None
    reset_at = now + timedelta(seconds=reset_wait) if reset_wait is not None else None
    limit = headers.get("x-ratelimit-limit", "").strip()[:12] or None
    retry_after = retry_after_seconds(headers.get("retry-after"), now)
    if status == 429 and _docker_pull_quota(headers, text):  # noqa: PLR2004 - Too Many Requests
        window = _docker_window(headers)
        return LimitSignal(wait=window, why="Docker Hub pull quota exhausted", fatal=True)
    refusal = _graphql_refusal(body) if 200 <= status < 300 else None  # noqa: PLR2004
    if refusal is not None:
        text = refusal
    limited = (
        status == 429  # noqa: PLR2004 - Too Many Requests
        or refusal is not None
        or (
            status == 403  # noqa: PLR2004 - GitHub signals limits with 403 as well
            and (
                remaining == "0"
                or "rate limit" in text
                or "abuse detection" in text  # GitHub's older wording of a secondary limit
                or retry_after is not None
            )
        )
    )
    if not limited:
        if reset_wait is not None:
            return LimitSignal(
                wait=reset_wait, why="x-ratelimit-remaining is 0", reset_at=reset_at, limit=limit
            )
        return LimitSignal(wait=None, why="")
    answer = f"HTTP {status}" if refusal is None else f"HTTP {status} GraphQL {refusal}"
    if retry_after is not None:
        return LimitSignal(wait=retry_after, why=f"{answer} with Retry-After", refused=True)
    # Docker Hub's API has named the moment to retry in ``X-Retry-After`` (epoch seconds).
    retry_at = _reset_wait(headers.get("x-retry-after"), now)
    if retry_at is not None:
        return LimitSignal(wait=retry_at, why=f"{answer} with X-Retry-After", refused=True)
    if reset_wait is not None:
        return LimitSignal(
            wait=reset_wait,
            why=f"{answer}, rate limit resets",
            refused=True,
            reset_at=reset_at,
            limit=limit,
        )
    if "secondary rate limit" in text or "abuse detection" in text:
        # GitHub: wait at least a minute, then exponentially longer while it persists.
        wait = SECONDARY_LIMIT_WAIT * 2**attempt
        return LimitSignal(wait=wait, why=f"{answer} secondary rate limit", refused=True)
    given = headers.get("retry-after")
    header = (
        "without Retry-After" if given is None else f"with an invalid {_quoted_retry_after(given)}"
    )
    return LimitSignal(wait=float(2**attempt), why=f"{answer} {header}", refused=True)


# The most of an invalid ``Retry-After`` value a reason quotes.
_QUOTED_CHARS = 32


def _quoted_retry_after(value: str) -> str:
    """``Retry-After ('garbage')``: the value trimmed and quoted (``repr`` escapes controls)."""
    value = value.strip()
    shown = value if len(value) <= _QUOTED_CHARS else value[:_QUOTED_CHARS] + "…"
    return f"Retry-After ({shown!r})"


# A GraphQL refusal is small; a larger 2xx body is data and is not parsed for one.
_REFUSAL_MAX_BYTES = 16 * 1024


def _graphql_refusal(body: bytes) -> str | None:
    """``"RATE_LIMITED"`` or ``"secondary rate limit"`` when ``body`` is such a refusal.

    GitHub's GraphQL API answers its limits with HTTP 200: ``{"errors": [{"type":
    "RATE_LIMITED", …}]}`` for the primary limit, a "secondary rate limit" ``message`` (top
    level or in ``errors``) for a secondary one, and no ``data``. Only a small JSON object
    without ``data`` is parsed, so no document carrying data (a commit's ``message``, a
    release's name) is ever taken for one.
    """
    if len(body) > _REFUSAL_MAX_BYTES or b"rate" not in body.lower():
        return None
    try:
        document = json.loads(body)
    except ValueError:
        return None
    if not isinstance(document, dict) or document.get("data") is not None:
        return None
    errors = document.get("errors")
    entries = [e for e in errors if isinstance(e, dict)] if isinstance(errors, list) else []
    if any(e.get("type") == "RATE_LIMITED" for e in entries):
        return "RATE_LIMITED"
    messages = [document.get("message"), *(e.get("message") for e in entries)]
    if any(isinstance(m, str) and "secondary rate limit" in m.lower() for m in messages):
        return "secondary rate limit"
    return None


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


def seconds_text(seconds: float) -> str:
    """Seconds as a reader says them: ``3600.0`` → ``"3600"``, ``2.5`` → ``"2.5"``.

    Whole seconds from 10 on, else one decimal at most; no trailing ``.0``.
    """
    shown = f"{seconds:.0f}" if seconds >= 10 else f"{seconds:.1f}"  # noqa: PLR2004
    return shown.removesuffix(".0")


def over_bound_text(host: str, why: str, wait: str, bound: float) -> str:
    """The reason of a lookup failed because ``host`` asks for a wait over ``bound`` seconds.

    ``wait`` says what the host asked (``"the server asked to wait 3600 s"``, ``"3599 s of its
    cool-down left"``): patchula did not wait (design.md §5: a wait over the bound fails).
    """
    return (
        f"{host} is rate limited ({why}): {wait}, more than the {seconds_text(bound)} s "
        "patchula waits, so the lookup failed without waiting"
    )


def used_up(host: str, reset_at: datetime, whose: str, now: datetime) -> str:
    """The reason of every request failed because ``host``'s primary limit is used up.

    ``"api.github.com: the rate limit for this token (GH_TOKEN) is used up until 17:42Z
    (x-ratelimit-reset, in 120 min); its requests fail until then without being sent"``; the
    date is named too when the reset is on another (UTC) day.
    """
    when = reset_at.astimezone(UTC)
    shown = when.strftime(
        "%H:%MZ" if when.date() == now.astimezone(UTC).date() else "%Y-%m-%d %H:%MZ"
    )
    minutes = max(math.ceil((when - now).total_seconds() / 60), 1)
    return (
        f"{host}: the rate limit for {whose} is used up until {shown} "
        f"(x-ratelimit-reset, in {minutes} min); its requests fail until then without being sent"
    )


class Governor:
    """Per-host cool-downs shared by every request of a run.

    ``cooldown_seconds[host]`` accumulates the cool-down time announced for each host that is
    within ``max_wait`` (seconds, overlaps counted once): what its requests waited out.
    ``refused_seconds[host]`` is the longest one over ``max_wait``: nobody waits for that, the
    requests it holds fail at once.
    """

    def __init__(self, timer: Timer | None = None, max_wait: float = MAX_WAIT_SECONDS) -> None:
        self.timer = timer or Timer()
        self.max_wait = max_wait
        self._until: dict[str, float] = {}
        self._why: dict[str, str] = {}
        # Hosts whose cool-down is a used-up primary limit: when it resets, and whose it was.
        self._reset: dict[str, tuple[datetime, str]] = {}
        self.cooldown_seconds: dict[str, float] = {}
        self.refused_seconds: dict[str, float] = {}

    def remaining(self, host: str) -> float:
        """Return the seconds left in ``host``'s cool-down (0 when none)."""
        return max(self._until.get(host, 0.0) - self.timer.monotonic(), 0.0)

    def reason(self, host: str) -> str:
        """What started ``host``'s current cool-down (``"HTTP 429 with Retry-After"``)."""
        return self._why.get(host, "rate limited")

    async def wait_turn(self, host: str) -> float:
        """Wait until ``host`` is not cooling down; return the seconds waited.

        Raises ``RateLimited`` at once when the remaining cool-down exceeds ``max_wait``; for
        a used-up primary limit its reason names the reset time (``used_up``).
        """
        waited = 0.0
        while (left := self.remaining(host)) > 0:
            if left > self.max_wait:
                raise self.over_bound(host, left)
            await self.timer.sleep(left)
            waited += left
        return waited

    def over_bound(self, host: str, wait: float, why: str | None = None) -> RateLimited:
        """The failure of a request that would have to wait ``wait`` s (over ``max_wait``)."""
        reset = self._reset.get(host)
        if reset is not None and self.remaining(host) > self.max_wait:
            reset_at, whose = reset
            return RateLimited(
                used_up(host, reset_at, whose, self.timer.wall()), host=host, reset_at=reset_at
            )
        why = why or self._why.get(host, "rate limited")
        left = f"{seconds_text(wait)} s of its cool-down left"
        return RateLimited(over_bound_text(host, why, left, self.max_wait), host=host)

    def cool_down(
        self,
        host: str,
        seconds: float,
        why: str,
        *,
        reset_at: datetime | None = None,
        whose: str = "",
    ) -> None:
        """Start or extend ``host``'s cool-down to at least ``seconds`` from now.

        ``reset_at`` (with ``whose``: ``"this token (GH_TOKEN)"``) marks it as a used-up
        primary limit, so the requests it fails name the reset time.
        """
        now = self.timer.monotonic()
        old = max(self._until.get(host, 0.0), now)
        new = now + max(seconds, 0.0)
        if new > old:
            self._until[host] = new
            self._why[host] = why
            if new - now > self.max_wait:
                # Not waited for (``wait_turn`` fails at once): no cool-down time is spent.
                refused = max(self.refused_seconds.get(host, 0.0), new - now)
                self.refused_seconds[host] = refused
            else:
                self.cooldown_seconds[host] = self.cooldown_seconds.get(host, 0.0) + (new - old)
            if reset_at is not None:
                self._reset[host] = (reset_at, whose or "these requests")
            else:
                self._reset.pop(host, None)
