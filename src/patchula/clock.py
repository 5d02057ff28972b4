"""The Clock protocol: code that needs "now" gets it passed in, never reads the wall clock."""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Protocol


class Clock(Protocol):
    """Something that tells the current time as an aware UTC datetime."""

    def now(self) -> datetime:
        """Return the current time (timezone-aware, UTC)."""
        ...


class SystemClock:
    """The real wall clock."""

    def now(self) -> datetime:
        """Return ``datetime.now(UTC)``."""
        return datetime.now(UTC)


class FixedClock:
    """A clock that always answers the same instant; for tests and reproducible reports."""

    def __init__(self, at: datetime) -> None:
        if at.tzinfo is None:
            msg = "FixedClock needs an aware datetime"
            raise ValueError(msg)
        self._at = at

    def now(self) -> datetime:
        """Return the fixed instant."""
        return self._at
