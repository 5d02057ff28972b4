"""Go module versions: ``v`` + semver 2.0, ``+incompatible`` and pseudo-versions.

Follows the Go modules reference (https://go.dev/ref/mod#versions, #pseudo-versions,
#incompatible-versions). Only canonical versions are valid (``v1.2`` and ``1.2.3`` are not);
the only build metadata allowed is ``+incompatible``, on majors 2 and above, and it does not
change precedence. A go.mod requirement is a minimum (minimal version selection), so a
"constraint" here is one version: it accepts every version at or above it in the same major.
"""

from __future__ import annotations

import functools
import re
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import msgspec

from patchula.versioning.base import has_long_number

if TYPE_CHECKING:
    from collections.abc import Iterable

    from patchula.models import UpdateType

ID = "go"

_NUMBER = r"(?:0|[1-9][0-9]*)"
_IDENT = r"[0-9A-Za-z-]+"
_VERSION = re.compile(
    rf"v(?P<major>{_NUMBER})\.(?P<minor>{_NUMBER})\.(?P<patch>{_NUMBER})"
    rf"(?:-(?P<pre>{_IDENT}(?:\.{_IDENT})*))?(?P<incompatible>\+incompatible)?"
)
_LEADING_ZERO = re.compile(r"0[0-9]+")
# golang.org/x/mod/module/pseudo.go ``pseudoVersionRE``, with the build suffix limited as above.
_PSEUDO = re.compile(
    r"v[0-9]+\.(?:0\.0-|[0-9]+\.[0-9]+-(?:[^+]*\.)?0\.)(?P<time>[0-9]{14})-[A-Za-z0-9]+"
    r"(?:\+incompatible)?"
)
_INCOMPATIBLE = "+incompatible"
_MIN_INCOMPATIBLE_MAJOR = 2


class _Parsed(msgspec.Struct, frozen=True):
    major: int
    minor: int
    patch: int
    pre: tuple[int | str, ...]
    incompatible: bool


# Versions are parsed again and again while sorting one catalog; memoise.
@functools.lru_cache(maxsize=65536)
def _parse(version: str) -> _Parsed | None:
    if has_long_number(version):
        return None
    match = _VERSION.fullmatch(version)
    if match is None:
        return None
    major = int(match["major"])
    incompatible = match["incompatible"] is not None
    if incompatible and major < _MIN_INCOMPATIBLE_MAJOR:
        return None
    pre: list[int | str] = []
    if match["pre"] is not None:
        for identifier in match["pre"].split("."):
            if identifier.isdigit():
                if _LEADING_ZERO.fullmatch(identifier):
                    return None  # semver §9: numeric identifiers have no leading zeros
                pre.append(int(identifier))
            else:
                pre.append(identifier)
    return _Parsed(major, int(match["minor"]), int(match["patch"]), tuple(pre), incompatible)


def _identifier_key(identifier: int | str) -> tuple[int, int, str]:
    # semver §11: numeric identifiers sort numerically and below alphanumeric ones (ASCII order).
    if isinstance(identifier, int):
        return (0, identifier, "")
    return (1, 0, identifier)


def is_valid(version: str) -> bool:
    """Return whether ``version`` is a canonical Go module version (``v1.2.3``, ``v1.2.3-pre``)."""
    return _parse(version) is not None


def is_pseudo(version: str) -> bool:
    """Return whether ``version`` is a valid pseudo-version (any of its three forms)."""
    return _PSEUDO.fullmatch(version) is not None and _parse(version) is not None


def pseudo_time(version: str) -> datetime | None:
    """Return the commit time (UTC) a pseudo-version encodes, or ``None``.

    ``None`` also when the 14 digits (``yyyymmddhhmmss``) are not a real instant.
    """
    match = _PSEUDO.fullmatch(version)
    if match is None or _parse(version) is None:
        return None
    try:
        return datetime.strptime(match["time"], "%Y%m%d%H%M%S").replace(tzinfo=UTC)
    except ValueError:
        return None


def pseudo_base(version: str) -> str | None:
    """Return the tagged version a pseudo-version builds on, or ``None``.

    ``v1.2.4-0.20240101000000-abcdefabcdef`` → ``v1.2.3``; ``v1.2.3-pre.0.2024…`` →
    ``v1.2.3-pre``; ``+incompatible`` is kept. ``None`` for a version that is not a
    pseudo-version and for the ``vX.0.0-yyyymmddhhmmss-…`` form, which has no base tag
    (golang.org/x/mod/module ``PseudoVersionBase``).
    """
    if not is_pseudo(version):
        return None
    suffix = _INCOMPATIBLE if version.endswith(_INCOMPATIBLE) else ""
    core, pre = version.removesuffix(_INCOMPATIBLE).split("-", 1)
    identifiers = pre.split(".")
    if len(identifiers) == 1:
        return None  # vX.0.0-yyyymmddhhmmss-abcdefabcdef: no earlier tag
    if len(identifiers) > 2:  # noqa: PLR2004 - "pre", "0", "timestamp-rev"
        return f"{core}-{'.'.join(identifiers[:-2])}{suffix}"
    major, minor, patch = core.split(".")
    if patch == "0":
        return None  # vX.Y.0-0.…: there is no patch below 0 to build on
    return f"{major}.{minor}.{int(patch) - 1}{suffix}"


def is_stable(version: str) -> bool:
    """Return whether ``version`` is valid, has no prerelease part and is not a pseudo-version."""
    parsed = _parse(version)
    return parsed is not None and not parsed.pre and not is_pseudo(version)


@functools.lru_cache(maxsize=65536)
def sort_key(version: str) -> Any:  # noqa: ANN401 - the protocol leaves the key opaque
    """Return a semver precedence key; invalid versions get ``(0, version)`` and sort first.

    A valid key is ``(1, major, minor, patch, pre)`` where a release's ``pre`` is ``(1,)``,
    above every prerelease's ``(0, identifiers...)``. ``+incompatible`` is ignored, so
    ``v2.0.0+incompatible`` equals ``v2.0.0``; pseudo-versions sort by base, then timestamp.
    """
    parsed = _parse(version)
    if parsed is None:
        return (0, version)
    pre: tuple[Any, ...] = (0, *(_identifier_key(i) for i in parsed.pre)) if parsed.pre else (1,)
    return (1, parsed.major, parsed.minor, parsed.patch, pre)


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 as ``a`` has lower, equal or higher precedence than ``b``."""
    key_a, key_b = sort_key(a), sort_key(b)
    return int(key_a > key_b) - int(key_a < key_b)


def is_valid_constraint(constraint: str) -> bool:
    """Return whether ``constraint`` is a valid version (go.mod requirements are minimums)."""
    return is_valid(constraint)


def exact_pin(constraint: str) -> str | None:
    """Return ``constraint`` itself when valid: minimal version selection builds that version."""
    return constraint if is_valid(constraint) else None


def matches(version: str, constraint: str) -> bool:
    """Return whether ``version`` is at or above ``constraint`` within the same module path.

    Another major, or a mix of ``+incompatible`` and not, belongs to another module path
    (``example.com/m/v2``) and never matches.
    """
    parsed, minimum = _parse(version), _parse(constraint)
    if parsed is None or minimum is None:
        return False
    if parsed.major != minimum.major or parsed.incompatible != minimum.incompatible:
        return False
    return bool(sort_key(version) >= sort_key(constraint))


def max_satisfying(versions: Iterable[str], constraint: str) -> str | None:
    """Return the highest version in ``versions`` that ``matches`` ``constraint``, or ``None``.

    Prereleases and pseudo-versions take part; choosing by stability belongs to the policy.
    """
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

    A move within one ``[major, minor, patch]`` (``v1.2.3-rc.1`` → ``v1.2.3``) is ``patch``.
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


def is_compatible(current: str, other: str) -> bool:  # noqa: ARG001 - the protocol's shape
    """Return ``True``: every version of one module path is a candidate.

    Another major is another module path, reported as a successor, never a candidate here.
    """
    return True
