"""The minimum-release-age policy: how long a release must have been public before it is proposed.

Like Renovate's ``minimumReleaseAge`` and Dependabot's ``cooldown``: a candidate is eligible when
``now - released_at >= wait`` for its update type. A release whose publish time is unknown is
never given an invented one: ``unknown_age`` decides whether it is held back (the safe default)
or admitted, and the report says "age unknown" either way.
"""

from __future__ import annotations

from datetime import datetime, timedelta
from typing import Literal

import msgspec

from patchula.models import UpdateType

UnknownAge = Literal["hold", "admit"]

# How a hold names the age of a first-release date (``judge``'s ``dated``).
RELEASED = "released {age} ago"


class ReleaseAgePolicy(msgspec.Struct, frozen=True):
    """Wait per update type; ``timedelta(0)`` means "no wait"."""

    major: timedelta = timedelta(0)
    minor: timedelta = timedelta(0)
    patch: timedelta = timedelta(0)
    unknown_age: UnknownAge = "hold"

    def wait_for(self, update_type: UpdateType | None) -> timedelta:
        """Return the wait for an ``update_type`` (a prerelease-only bump or a digest: patch)."""
        if update_type == "major":
            return self.major
        if update_type == "minor":
            return self.minor
        return self.patch

    @property
    def shortest_wait(self) -> timedelta:
        """Return the shortest wait of any update type (used to decide catalog reuse)."""
        return min(self.major, self.minor, self.patch)


class AgeVerdict(msgspec.Struct, frozen=True):
    """Whether one release is admitted now; ``eligible_at`` is ``None`` when its age is unknown."""

    admitted: bool
    eligible_at: datetime | None
    reason: str | None


def judge(
    released_at: datetime | None,
    update_type: UpdateType | None,
    policy: ReleaseAgePolicy,
    now: datetime,
    unknown_because: str = "the registry gives no publish time",
    *,
    dated: str = RELEASED,
) -> AgeVerdict:
    """Decide whether a release published at ``released_at`` is old enough at ``now``.

    Returns an ``AgeVerdict``; ``reason`` explains a hold ("released 5h ago; minor updates wait
    72h"; "age unknown: ``unknown_because``; minor updates wait 72h") or an admission without
    a known age ("age unknown, admitted by policy"). ``dated`` says what ``released_at`` is,
    its ``{age}`` filled in: ``released {age} ago`` (default), or for a date that is no first
    release what it is (an image tag's last push: ``datasource.docker.HUB_AGE``).
    """
    wait = policy.wait_for(update_type)
    kind = update_type or "patch"
    if released_at is None:
        if wait <= timedelta(0):
            return AgeVerdict(admitted=True, eligible_at=None, reason=None)
        if policy.unknown_age == "admit":
            return AgeVerdict(
                admitted=True, eligible_at=None, reason="age unknown, admitted by policy"
            )
        return AgeVerdict(
            admitted=False,
            eligible_at=None,
            reason=(f"age unknown: {unknown_because}; {kind} updates wait {_hours(wait)}"),
        )
    eligible_at = released_at + wait
    if now >= eligible_at:
        return AgeVerdict(admitted=True, eligible_at=eligible_at, reason=None)
    age = now - released_at
    return AgeVerdict(
        admitted=False,
        eligible_at=eligible_at,
        reason=f"{dated.format(age=_hours(age))}; {kind} updates wait {_hours(wait)}",
    )


def _hours(delta: timedelta) -> str:
    """Render a duration in hours (``5h``, ``72h``, ``0.5h``); negative ages read as 0h."""
    hours = max(delta.total_seconds(), 0.0) / 3600
    if hours >= 1 or hours == 0:
        return f"{hours:.0f}h"
    return f"{hours:.1f}h"
