"""npm semver versions and ranges, on ``nodesemver`` (a port of npm's node-semver).

Parsing is strict except where npm itself is lenient: a leading ``v`` or ``=`` (and spaces) is
dropped first, as ``semver.clean`` does. Range membership follows node-semver's default
prerelease rule: a prerelease satisfies a range only through a comparator that has a
prerelease on the same ``[major, minor, patch]`` (github.com/npm/node-semver#prerelease-tags).
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

import nodesemver

from patchula.versioning.base import has_long_number

if TYPE_CHECKING:
    from collections.abc import Iterable

    from patchula.models import UpdateType

ID = "npm"

# What ``semver.clean`` strips before parsing: surrounding spaces and leading ``=`` / ``v``.
_LENIENT_PREFIX = re.compile(r"^[=v\s]+")


# Versions are parsed again and again while sorting and comparing one catalog; they are
# immutable strings, so memoise.
@functools.lru_cache(maxsize=65536)
def _parse(version: str) -> Any | None:  # noqa: ANN401 - nodesemver.SemVer is untyped
    cleaned = _LENIENT_PREFIX.sub("", version.strip())
    if not cleaned or has_long_number(cleaned):
        return None
    try:
        return nodesemver.make_semver(cleaned, loose=False)
    except ValueError:
        return None


@functools.lru_cache(maxsize=4096)
def _parse_range(constraint: str) -> Any | None:  # noqa: ANN401 - nodesemver.Range is untyped
    if has_long_number(constraint):
        return None
    try:
        return nodesemver.make_range(constraint.strip(), loose=False)
    except ValueError:
        return None


def _identifier_key(identifier: int | str) -> tuple[int, int, str]:
    # semver §11: numeric identifiers sort numerically and below alphanumeric ones (ASCII order).
    if isinstance(identifier, int):
        return (0, identifier, "")
    return (1, 0, identifier)


def is_valid(version: str) -> bool:
    """Return whether ``version`` is a semver version (``v1.2.3`` and ``=1.2.3`` allowed)."""
    return _parse(version) is not None


def is_stable(version: str) -> bool:
    """Return whether ``version`` is valid and has no prerelease part (build metadata ignored)."""
    parsed = _parse(version)
    return parsed is not None and not parsed.prerelease


@functools.lru_cache(maxsize=65536)
def sort_key(version: str) -> Any:  # noqa: ANN401 - the protocol leaves the key opaque
    """Return a semver precedence key; invalid versions get ``(0, version)`` and sort first.

    A valid key is ``(1, major, minor, patch, pre)`` where a release's ``pre`` is ``(1,)``, above
    every prerelease's ``(0, identifiers...)``; build metadata is ignored.
    """
    parsed = _parse(version)
    if parsed is None:
        return (0, version)
    pre: tuple[Any, ...] = (
        (0, *(_identifier_key(i) for i in parsed.prerelease)) if parsed.prerelease else (1,)
    )
    return (1, parsed.major, parsed.minor, parsed.patch, pre)


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 as ``a`` has lower, equal or higher precedence (build metadata ignored)."""
    key_a, key_b = sort_key(a), sort_key(b)
    return int(key_a > key_b) - int(key_a < key_b)


def is_valid_constraint(constraint: str) -> bool:
    """Return whether ``constraint`` is a semver range (``""`` and ``*`` mean any version)."""
    return _parse_range(constraint) is not None


def exact_pin(constraint: str) -> str | None:
    """Return the version a lone ``1.2.3``, ``=1.2.3`` or ``v1.2.3`` pins, else ``None``.

    The version comes back normalised (``1.2.3``), without build metadata, as ``semver.clean``
    gives it.
    """
    parsed = _parse(constraint)
    return None if parsed is None else str(parsed.version)


def matches(version: str, constraint: str) -> bool:
    """Return whether ``version`` satisfies the range ``constraint`` (npm's prerelease rule)."""
    parsed, semver_range = _parse(version), _parse_range(constraint)
    if parsed is None or semver_range is None:
        return False
    return bool(semver_range.test(parsed))


def max_satisfying(versions: Iterable[str], constraint: str) -> str | None:
    """Return the highest version in ``versions`` that satisfies ``constraint``.

    npm prefers the ``latest`` dist-tag when it satisfies the range; that choice belongs to the
    policy, which has the catalog.
    """
    semver_range = _parse_range(constraint)
    if semver_range is None:
        return None
    best: str | None = None
    best_key: Any = None
    for version in versions:
        parsed = _parse(version)
        if parsed is None or not semver_range.test(parsed):
            continue
        key = sort_key(version)
        if best is None or key > best_key:
            best, best_key = version, key
    return best


def update_type(current: str, new: str) -> UpdateType | None:
    """Return the first of major/minor/patch that differs when ``new`` is newer than ``current``.

    A move within one ``[major, minor, patch]`` (``1.2.3-beta.1`` → ``1.2.3``) is ``patch``.
    Returns ``None`` when either version is invalid or ``new`` is not newer.
    """
    old_parsed, new_parsed = _parse(current), _parse(new)
    if old_parsed is None or new_parsed is None or sort_key(new) <= sort_key(current):
        return None
    if old_parsed.major != new_parsed.major:
        return "major"
    if old_parsed.minor != new_parsed.minor:
        return "minor"
    return "patch"
