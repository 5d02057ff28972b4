"""Cargo versions (strict semver 2.0) and Cargo version requirements.

Requirements follow https://doc.rust-lang.org/cargo/reference/specifying-dependencies.html and
the ``semver`` crate Cargo uses (``VersionReq``): comma-separated comparators are ANDed; a bare
version means caret; ``*``/``1.*``/``1.2.*`` are wildcards. A prerelease satisfies a requirement
only when a comparator has a prerelease on the same ``major.minor.patch``.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from patchula.versioning.base import has_long_number

if TYPE_CHECKING:
    from collections.abc import Iterable

    from patchula.models import UpdateType

ID = "cargo"

_NUMBER = r"(?:0|[1-9]\d*)"
_IDENT = r"(?:0|[1-9]\d*|\d*[A-Za-z-][0-9A-Za-z-]*)"
_VERSION = re.compile(
    rf"({_NUMBER})\.({_NUMBER})\.({_NUMBER})"
    rf"(?:-({_IDENT}(?:\.{_IDENT})*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?"
)
_WILD = r"(?:[*xX])"
_COMPARATOR = re.compile(
    rf"\s*(=|>=|>|<=|<|~|\^)?\s*({_NUMBER}|{_WILD})(?:\.({_NUMBER}|{_WILD}))?"
    rf"(?:\.({_NUMBER}|{_WILD}))?"
    rf"(?:-({_IDENT}(?:\.{_IDENT})*))?(?:\+([0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*))?\s*"
)

# A parsed version: (major, minor, patch, prerelease identifiers); build metadata dropped.
Version = tuple[int, int, int, tuple[int | str, ...]]
# One primitive bound: an operator (``>=``, ``>``, ``<``, ``<=``) and a version.
Bound = tuple[str, Version]
# The lowest prerelease of a release: the bound that excludes every ``X.Y.Z-…`` of it.
_LOWEST: tuple[int | str, ...] = (0,)


def _identifiers(text: str | None) -> tuple[int | str, ...]:
    if not text:
        return ()
    return tuple(int(part) if part.isdigit() else part for part in text.split("."))


@functools.lru_cache(maxsize=65536)
def _parse(version: str) -> Version | None:
    if has_long_number(version):
        return None
    match = _VERSION.fullmatch(version.strip())
    if match is None:
        return None
    major, minor, patch, pre, _build = match.groups()
    return (int(major), int(minor), int(patch), _identifiers(pre))


def _identifier_key(identifier: int | str) -> tuple[int, int, str]:
    # semver §11: numeric identifiers sort numerically and below alphanumeric ones (ASCII order).
    if isinstance(identifier, int):
        return (0, identifier, "")
    return (1, 0, identifier)


def _key(version: Version) -> tuple[Any, ...]:
    major, minor, patch, pre = version
    pre_key: tuple[Any, ...] = (0, *(_identifier_key(i) for i in pre)) if pre else (1,)
    return (major, minor, patch, pre_key)


@functools.lru_cache(maxsize=4096)
def _parse_requirement(
    constraint: str,
) -> tuple[tuple[Bound, ...], tuple[tuple[int, int, int], ...]] | None:
    """Return the ANDed bounds of ``constraint`` and the releases its prereleases may come from.

    ``None`` when ``constraint`` is not a Cargo requirement.
    """
    if has_long_number(constraint):
        return None
    parts = constraint.split(",")
    bounds: list[Bound] = []
    pre_releases: list[tuple[int, int, int]] = []
    for part in parts:
        comparator = _COMPARATOR.fullmatch(part)
        if comparator is None:
            return None
        op, major, minor, patch, pre, _build = comparator.groups()
        numbers = [major, minor, patch]
        given = [n for n in numbers if n is not None]
        wild = [n is not None and not n.isdigit() for n in given]
        if any(wild):
            # Wildcards only trail (``1.*``, ``1.*.*``), take no operator and no prerelease.
            first = wild.index(True)
            if not all(wild[first:]) or op is not None or pre is not None:
                return None
            if first == 0 and len(parts) > 1:
                return None  # ``*`` must be the only comparator (semver crate)
            given = given[:first]
            op = "="
        if pre is not None and len(given) < 3:  # noqa: PLR2004 - major.minor.patch
            return None
        values = [int(n) for n in given]
        bounds.extend(_bounds(op or "^", values, _identifiers(pre)))
        if pre is not None:
            pre_releases.append((values[0], values[1], values[2]))
    return tuple(bounds), tuple(pre_releases)


def _bounds(op: str, numbers: list[int], pre: tuple[int | str, ...]) -> list[Bound]:
    """Translate one comparator into primitive bounds (semver crate ``matches_*`` semantics)."""
    if not numbers:
        return []
    full = len(numbers) == 3  # noqa: PLR2004 - major.minor.patch
    major, minor, patch = _padded(numbers)
    low: Version = (major, minor, patch, pre if full else _LOWEST)
    if op == "=":
        if full:
            return [(">=", low), ("<=", low)]
        return [(">=", low), ("<", _bump(numbers, len(numbers) - 1))]
    if op == ">=":
        return [(">=", low)]
    if op == ">":
        return [(">", low)] if full else [(">=", _bump(numbers, len(numbers) - 1))]
    if op == "<":
        return [("<", low)]
    if op == "<=":
        return [("<=", low)] if full else [("<", _bump(numbers, len(numbers) - 1))]
    if op == "~":
        return [(">=", low), ("<", _bump(numbers, min(1, len(numbers) - 1)))]
    # Caret: the first non-zero of the given components may not change; ``^0.0.3`` is ``=0.0.3``.
    position = next((i for i, n in enumerate(numbers) if n), len(numbers) - 1)
    if full and position == 2:  # noqa: PLR2004 - the patch component
        return [(">=", low), ("<=", low)]
    return [(">=", low), ("<", _bump(numbers, position))]


def _padded(numbers: list[int]) -> tuple[int, int, int]:
    padded = [*numbers, 0, 0][:3]
    return (padded[0], padded[1], padded[2])


def _bump(numbers: list[int], position: int) -> Version:
    """Return the lowest prerelease of the release after ``numbers`` at ``position``."""
    bumped = [*numbers[:position], numbers[position] + 1]
    major, minor, patch = _padded(bumped)
    return (major, minor, patch, _LOWEST)


def _satisfies(version: Version, constraint: str) -> bool:
    parsed = _parse_requirement(constraint)
    if parsed is None:
        return False
    bounds, pre_releases = parsed
    if version[3] and version[:3] not in pre_releases:
        return False
    key = _key(version)
    for op, bound in bounds:
        other = _key(bound)
        if (
            (op == ">=" and key < other)
            or (op == ">" and key <= other)
            or (op == "<" and key >= other)
            or (op == "<=" and key > other)
        ):
            return False
    return True


def is_valid(version: str) -> bool:
    """Return whether ``version`` is a strict semver version (``1.2.3[-pre][+build]``)."""
    return _parse(version) is not None


def is_stable(version: str) -> bool:
    """Return whether ``version`` is valid and has no prerelease part (build metadata ignored)."""
    parsed = _parse(version)
    return parsed is not None and not parsed[3]


@functools.lru_cache(maxsize=65536)
def sort_key(version: str) -> Any:  # noqa: ANN401 - the protocol leaves the key opaque
    """Return a semver precedence key; invalid versions get ``(0, version)`` and sort first.

    A valid key is ``(1, major, minor, patch, pre)`` where a release's ``pre`` is ``(1,)``, above
    every prerelease's ``(0, identifiers...)``; build metadata is ignored.
    """
    parsed = _parse(version)
    if parsed is None:
        return (0, version)
    return (1, *_key(parsed))


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 as ``a`` has lower, equal or higher precedence (build metadata ignored)."""
    key_a, key_b = sort_key(a), sort_key(b)
    return int(key_a > key_b) - int(key_a < key_b)


def is_valid_constraint(constraint: str) -> bool:
    """Return whether ``constraint`` is a Cargo version requirement (``*`` means any version)."""
    return _parse_requirement(constraint) is not None


def exact_pin(constraint: str) -> str | None:
    """Return the version ``=1.2.3`` pins, as written (build metadata kept), else ``None``.

    ``=0.11.0+wasi-snapshot-preview1`` gives ``0.11.0+wasi-snapshot-preview1``: what the
    manifest says. Build metadata does not count for precedence (SemVer 2.0.0 §10, and Cargo
    ignores it in requirements, warning so), so ``compare`` and ``matches`` treat it as
    ``0.11.0``; it is never newer or older than the same version spelled without it. A bare
    ``1.2.3`` is a caret requirement in Cargo, not a pin.
    """
    text = constraint.strip()
    if not text.startswith("=") or "," in text:
        return None
    version = text[1:].strip()
    return version if _parse(version) is not None else None


def matches(version: str, constraint: str) -> bool:
    """Return whether ``version`` satisfies the Cargo requirement ``constraint``."""
    parsed = _parse(version)
    return parsed is not None and _satisfies(parsed, constraint)


def max_satisfying(versions: Iterable[str], constraint: str) -> str | None:
    """Return the highest version in ``versions`` that satisfies ``constraint``."""
    if _parse_requirement(constraint) is None:
        return None
    best: str | None = None
    best_key: Any = None
    for version in versions:
        if not matches(version, constraint):
            continue
        key = sort_key(version)
        if best is None or key > best_key:
            best, best_key = version, key
    return best


def update_type(current: str, new: str) -> UpdateType | None:
    """Return the first of major/minor/patch that differs when ``new`` is newer than ``current``.

    Reported by component, also for ``0.x`` (where Cargo treats a minor bump as breaking). A move
    within one ``major.minor.patch`` (``1.2.3-beta.1`` → ``1.2.3``) is ``patch``. ``None`` when
    either version is invalid or ``new`` is not newer.
    """
    old_parsed, new_parsed = _parse(current), _parse(new)
    if old_parsed is None or new_parsed is None or sort_key(new) <= sort_key(current):
        return None
    if old_parsed[0] != new_parsed[0]:
        return "major"
    if old_parsed[1] != new_parsed[1]:
        return "minor"
    return "patch"


def is_compatible(current: str, other: str) -> bool:  # noqa: ARG001 - the protocol's shape
    """Return ``True``: every Cargo version is a candidate; requirements decide the rest.

    Cargo requirements, not version shapes, decide which versions a user can move to.
    """
    return True
