"""What every versioning module provides: parse, order, stability and range membership.

A versioning module defines ``ID`` and the functions of ``Versioning``. Versions and
constraints are strings in the scheme's own syntax; invalid input never raises from these
functions: ``is_valid`` says no, ``sort_key`` sorts invalid versions below every valid one and
``matches`` answers ``False``.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from typing import Any, Protocol

from patchula.models import UpdateType

# No real version has a number anywhere near this long. Python refuses ``int()`` of more than
# 4,300 digits (CVE-2020-10735; packaging and node-semver then raise a bare ``ValueError``) and
# converting long ones costs quadratic time, so a longer digit run makes a version or a
# constraint invalid in every scheme.
MAX_NUMBER_DIGITS = 100
_LONG_NUMBER = re.compile(rf"[0-9]{{{MAX_NUMBER_DIGITS + 1}}}")


def has_long_number(text: str) -> bool:
    """Return whether ``text`` holds a run of more than ``MAX_NUMBER_DIGITS`` ASCII digits."""
    return _LONG_NUMBER.search(text) is not None


class Versioning(Protocol):
    """The shape of a versioning module."""

    ID: str

    def is_valid(self, version: str) -> bool:
        """Return whether ``version`` parses in this scheme."""
        ...

    def is_stable(self, version: str) -> bool:
        """Return whether ``version`` is a final release (not a prerelease or dev release)."""
        ...

    def sort_key(self, version: str) -> Any:  # noqa: ANN401 - each scheme has its own key
        """Return a key that orders versions by this scheme's precedence."""
        ...

    def compare(self, a: str, b: str) -> int:
        """Return -1, 0 or 1 as ``a`` sorts before, equal to or after ``b``."""
        ...

    def is_valid_constraint(self, constraint: str) -> bool:
        """Return whether ``constraint`` is a valid range/specifier in this scheme."""
        ...

    def exact_pin(self, constraint: str) -> str | None:
        """Return the version ``constraint`` pins exactly, or ``None`` if it is a range."""
        ...

    def matches(self, version: str, constraint: str) -> bool:
        """Return whether ``version`` satisfies ``constraint`` (prerelease rules of the scheme)."""
        ...

    def max_satisfying(self, versions: Iterable[str], constraint: str) -> str | None:
        """Return the version a fresh install of ``constraint`` resolves to, among ``versions``."""
        ...

    def update_type(self, current: str, new: str) -> UpdateType | None:
        """Return ``major``/``minor``/``patch`` for ``current`` → ``new``, else ``None``."""
        ...

    def is_compatible(self, current: str, other: str) -> bool:
        """Return whether a user on ``current`` could move to ``other`` at all.

        Renovate's ``isCompatible``: the policy considers only compatible releases for
        latest, candidates and versions behind (an image on ``3.12-slim`` never moves to
        ``3.13``). Schemes whose ranges decide what a user can move to answer ``True``.
        """
        ...
