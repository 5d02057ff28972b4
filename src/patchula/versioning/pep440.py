"""PEP 440 versions and specifiers (PyPI), on ``packaging``.

Prerelease rules are spelled out here rather than taken from ``packaging`` defaults, which
changed in packaging 26 (``contains`` now admits prereleases): ``matches`` admits a prerelease
only when the specifier set mentions one; ``max_satisfying`` also falls back to prereleases
when no final release matches, as pip does. Source: the version-specifiers specification
(packaging.python.org/en/latest/specifications/version-specifiers/).

A constraint may also be a union of specifier sets joined by ``||`` (``>=1.0,<2.0 ||
>=3.0``): Poetry's OR constraints (``^1.0 || ^3.0``, converted by ``manager.pyproject``),
which PEP 440 cannot spell. A version matches a union when it matches one of its sets (each
with its own prerelease rule); no PEP 440 specifier contains ``|``, so nothing else reads
differently.
"""

from __future__ import annotations

import functools
from typing import TYPE_CHECKING, Any, cast

from packaging.specifiers import InvalidSpecifier, Specifier, SpecifierSet
from packaging.version import InvalidVersion, Version

from patchula.versioning.base import has_long_number

if TYPE_CHECKING:
    from collections.abc import Iterable

    from patchula.models import UpdateType

ID = "pep440"


# Versions are parsed again and again while sorting and comparing one catalog; they are
# immutable strings, so memoise.
@functools.lru_cache(maxsize=65536)
def _parse(version: str) -> Version | None:
    if has_long_number(version):
        return None
    try:
        return Version(version)
    except (InvalidVersion, ValueError):  # ValueError: an int() limit packaging does not map
        return None


UNION = "||"


@functools.lru_cache(maxsize=4096)
def _parse_constraint(constraint: str) -> SpecifierSet | None:
    if has_long_number(constraint) or UNION in constraint:
        return None  # SpecifierSet parses lazily: its versions would fail in ``contains``
    try:
        return SpecifierSet(constraint)
    except InvalidSpecifier:
        return None


@functools.lru_cache(maxsize=4096)
def _parse_union(constraint: str) -> tuple[SpecifierSet, ...] | None:
    """The specifier sets of ``A || B …`` (one for a plain set), ``None`` if any is invalid."""
    if UNION not in constraint:
        specs = _parse_constraint(constraint)
        return None if specs is None else (specs,)
    parts = [_parse_constraint(part.strip()) for part in constraint.split(UNION)]
    if any(part is None or not str(part) for part in parts):
        return None  # an empty alternative (``A ||``) is no constraint Poetry reads either
    return tuple(part for part in parts if part is not None)


def is_valid(version: str) -> bool:
    """Return whether ``version`` is a valid PEP 440 version."""
    return _parse(version) is not None


@functools.lru_cache(maxsize=65536)
def is_stable(version: str) -> bool:
    """Return whether ``version`` is a final release (``.postN`` is final; ``.devN`` is not)."""
    parsed = _parse(version)
    return parsed is not None and not parsed.is_prerelease


@functools.lru_cache(maxsize=65536)
def sort_key(version: str) -> Any:  # noqa: ANN401 - the protocol leaves the key opaque
    """Return ``(1, Version)`` for a valid version and ``(0, version)`` for an invalid one."""
    parsed = _parse(version)
    if parsed is None:
        return (0, version)
    return (1, parsed)


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 as ``a`` sorts before, equal to (``1.0`` and ``1.0.0``) or after ``b``."""
    key_a, key_b = sort_key(a), sort_key(b)
    return int(key_a > key_b) - int(key_a < key_b)


def is_valid_constraint(constraint: str) -> bool:
    """Return whether ``constraint`` is a valid specifier set or union (``""``: any version)."""
    return _parse_union(constraint) is not None


def exact_pin(constraint: str) -> str | None:
    """Return the version of a lone ``==V`` (no ``.*``) or ``===V`` specifier, else ``None``."""
    specs = _parse_constraint(constraint)
    if specs is None or len(specs) != 1:
        return None
    (spec,) = specs
    if spec.operator == "===" or (spec.operator == "==" and not spec.version.endswith(".*")):
        return spec.version
    return None


def spelled_pin(constraint: str) -> str | None:
    """Return the string of a lone ``===V`` (arbitrary equality), else ``None``.

    PEP 440 arbitrary equality is "simple string equality" without normalisation
    (packaging.python.org/en/latest/specifications/version-specifiers/#arbitrary-equality):
    ``===2013b0`` names the release spelled ``2013b0``, not ``2013b``, though both are one
    version. ``exact_pin`` gives ``V`` too; a caller that finds pins in a catalog by their
    value in the scheme asks this first, and looks for a release spelled so.
    """
    specs = _parse_constraint(constraint)
    if specs is None or len(specs) != 1:
        return None
    (spec,) = specs
    return spec.version if spec.operator == "===" else None


def _mentions_prerelease(specs: SpecifierSet) -> bool:
    return any(spec.prereleases for spec in specs)


def _contains(specs: SpecifierSet, version: str, *, prereleases: bool) -> bool:
    parsed = _parse(version)
    if parsed is None:
        # Only arbitrary equality (``===``) can name a version PEP 440 cannot parse.
        return len(specs) > 0 and all(_arbitrary_equal(spec, version) for spec in specs)
    if parsed.is_prerelease and not prereleases:
        return False
    # The parsed Version, not the string, which ``contains`` would parse again on every call;
    # arbitrary equality (``===``) compares the string as written, so it gets the string.
    arbitrary = any(spec.operator == "===" for spec in specs)
    return specs.contains(version if arbitrary else parsed, prereleases=True)


def _arbitrary_equal(spec: Specifier, version: str) -> bool:
    return spec.operator == "===" and spec.version.lower() == version.lower()


def matches(version: str, constraint: str) -> bool:
    """Return whether ``version`` satisfies ``constraint``.

    A prerelease satisfies a specifier set only when the set mentions a prerelease
    (``>=2.0b1``); ``<2.0`` never admits ``2.0a1`` (PEP 440 exclusive ordered comparison).
    A union is satisfied by satisfying one of its sets.
    """
    union = _parse_union(constraint)
    if union is None:
        return False
    return any(_contains(s, version, prereleases=_mentions_prerelease(s)) for s in union)


def max_satisfying(versions: Iterable[str], constraint: str) -> str | None:
    """Return the version pip would pick for ``constraint`` among ``versions``.

    The highest matching final release; prereleases compete too when the specifier set mentions
    one, and are the fallback when no final release matches. Of a union, the highest version
    one of its sets admits by that rule (Poetry picks the newest release the union allows).
    """
    if UNION in constraint:
        return _max_satisfying_union(list(versions), constraint)
    specs = _parse_constraint(constraint)
    if specs is None:
        return None
    versions = list(versions)
    mentions_prerelease = _mentions_prerelease(specs)
    if not mentions_prerelease:
        # Most ranges admit the newest final release: one pass finds it, no sort needed.
        # Final releases only (valid by definition): Versions compare directly, one call each.
        finals = [v for v in versions if is_stable(v)]
        newest = max(finals, key=_final_key, default=None)
        if newest is not None and _contains(specs, newest, prereleases=False):
            return newest
    # Newest first, stopping at the first match.
    ordered = sorted(versions, key=sort_key, reverse=True)
    if mentions_prerelease:
        return next((v for v in ordered if _contains(specs, v, prereleases=True)), None)
    final = next(
        (v for v in ordered if not _is_prerelease(v) and _contains(specs, v, prereleases=False)),
        None,
    )
    if final is not None:
        return final
    return next((v for v in ordered if _contains(specs, v, prereleases=True)), None)


def max_satisfying_prereleases(versions: Iterable[str], constraint: str) -> str | None:
    """Return what pip ``--pre`` picks for ``constraint`` (``""``: any version).

    The highest version the specifier set (or one set of a union) admits, prereleases and dev
    releases competing with final releases: pip filters candidates with
    ``prereleases=True`` under ``--pre``; Poetry's ``allow-prereleases``, pipenv's
    ``allow_prereleases`` and uv's ``prerelease = "allow"`` pick the same way.
    """
    ordered = sorted((v for v in versions if is_valid(v)), key=sort_key, reverse=True)
    if not constraint.strip():
        return ordered[0] if ordered else None
    union = _parse_union(constraint)
    if union is None:
        return None
    # ``===`` can name a version PEP 440 cannot parse: those are checked too, after the rest.
    rest = [v for v in versions if not is_valid(v)]
    return next(
        (v for v in [*ordered, *rest] if any(_contains(s, v, prereleases=True) for s in union)),
        None,
    )


def _max_satisfying_union(versions: list[str], constraint: str) -> str | None:
    union = _parse_union(constraint)
    if union is None:
        return None
    ordered = sorted(versions, key=sort_key, reverse=True)
    picked = next((v for v in ordered if matches(v, constraint)), None)
    if picked is not None:
        return picked
    return next((v for v in ordered if any(_contains(s, v, prereleases=True) for s in union)), None)


def _final_key(version: str) -> Version:
    """The parsed form of a version already known to be valid (``is_stable``)."""
    return cast("Version", _parse(version))


def _is_prerelease(version: str) -> bool:
    return is_valid(version) and not is_stable(version)


def update_type(current: str, new: str) -> UpdateType | None:
    """Return which ``release`` component (padded to three) a move to a newer ``new`` changes.

    An epoch change is ``major``; post, pre and dev differences on the same release are
    ``patch``. Returns ``None`` when either version is invalid or ``new`` is not newer.
    """
    old_version, new_version = _parse(current), _parse(new)
    if old_version is None or new_version is None or new_version <= old_version:
        return None
    old_release = (*old_version.release, 0, 0, 0)[:3]
    new_release = (*new_version.release, 0, 0, 0)[:3]
    if old_version.epoch != new_version.epoch or old_release[0] != new_release[0]:
        return "major"
    if old_release[1] != new_release[1]:
        return "minor"
    return "patch"


def is_compatible(current: str, other: str) -> bool:
    """Whether a user on ``current`` can move to ``other``: yes, but to its own local builds.

    PEP 440 specifiers, not version shapes, decide which versions a user can move to; a local
    version (``1.0+local``) is a downstream build of its public version, not a newer release
    of it (PEP 440, "Local version identifiers"), so it is never an update of ``1.0``.
    """
    if "+" not in other:
        return True
    old, new = _parse(current), _parse(other)
    return old is None or new is None or _parse(old.public) != _parse(new.public)
