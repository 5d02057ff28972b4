"""Tool versions as mise reads them: numeric dot parts, fuzzy prefixes, prerelease suffixes.

mise compares the versions of every backend alike (``versions`` crate order; registries.md §9):
``22``, ``3.12`` and ``1.22`` are fuzzy prefixes meaning the newest matching release, a
version with three or more numeric parts (or a prerelease suffix) is an exact pin. A leading
``v`` is ignored. Prereleases are what mise's own filter leaves out of "latest" and fuzzy
matches (``jdx/mise:src/plugins/mod.rs``, ``VERSION_REGEX``: ``-rc``, ``.rc``, ``-alpha``,
``-beta``, ``-pre``, ``-dev``, ``-next``, ``-canary``, ``-nightly``, ``-edge``, ``-test``,
``a1``/``b1``/``c1``, ``snapshot`` …): a prefix never matches one, as ``mise use node@22``
never installs ``22.0.0-rc.1``.
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, Any

from patchula.versioning.base import has_long_number

if TYPE_CHECKING:
    from collections.abc import Iterable

    from patchula.models import UpdateType

ID = "mise"

_VERSION = re.compile(r"v?(\d+(?:\.\d+)*)([^\s]*)")
_PRERELEASE = re.compile(
    r"^(?:a|b|c|rc|alpha|beta|pre|dev)\d*|[-.](?:src|dev|latest|stm|rc|milestone|alpha|beta|pre|next)"
    r"|-(?:test|nightly|canary|experimental|insider|edge)|snapshot|master",
    re.IGNORECASE,
)
_NATURAL = re.compile(r"\d+|[^\d]+")
# Parts of an exact pin: ``20.11.1`` is one release, ``20.11`` and ``20`` are prefixes.
EXACT_PARTS = 3

Parsed = tuple[tuple[int, ...], str]


@functools.lru_cache(maxsize=65536)
def _parse(version: str) -> Parsed | None:
    text = version.strip()
    if not text or has_long_number(text):
        return None
    match = _VERSION.fullmatch(text)
    if match is None:
        return None
    return tuple(int(part) for part in match.group(1).split(".")), match.group(2)


def _trimmed(numbers: tuple[int, ...]) -> tuple[int, ...]:
    end = len(numbers)
    while end > 1 and numbers[end - 1] == 0:
        end -= 1
    return numbers[:end]


def _natural(suffix: str) -> tuple[tuple[int, int, str], ...]:
    return tuple(
        (0, int(part), "") if part.isdigit() else (1, 0, part.lower())
        for part in _NATURAL.findall(suffix)
    )


def _is_prerelease(suffix: str) -> bool:
    return bool(suffix) and _PRERELEASE.search(suffix) is not None


def is_valid(version: str) -> bool:
    """Return whether ``version`` is numeric dot parts with an optional suffix (``v`` allowed)."""
    return _parse(version) is not None


def is_stable(version: str) -> bool:
    """Return whether ``version`` has no prerelease suffix (mise's ``VERSION_REGEX``)."""
    parsed = _parse(version)
    return parsed is not None and not _is_prerelease(parsed[1])


def sort_key(version: str) -> Any:  # noqa: ANN401 - a scheme's own key
    """Numeric parts (trailing zeros ignored), then prereleases before the release."""
    parsed = _parse(version)
    if parsed is None:
        return (0, (), 0, ())
    numbers, suffix = parsed
    pre = _is_prerelease(suffix)
    return (1, _trimmed(numbers), 0 if pre else 1, _natural(suffix))


def compare(a: str, b: str) -> int:
    """Return -1, 0 or 1 as ``a`` sorts before, equal to or after ``b``."""
    ka, kb = sort_key(a), sort_key(b)
    return int(ka > kb) - int(ka < kb)


def is_valid_constraint(constraint: str) -> bool:
    """Return whether ``constraint`` is a version or a fuzzy prefix (an alias, ``lts``, is not)."""
    return _parse(constraint) is not None


def exact_pin(constraint: str) -> str | None:
    """The version ``constraint`` pins: three or more numeric parts, or a suffix; else ``None``."""
    parsed = _parse(constraint)
    if parsed is None:
        return None
    numbers, suffix = parsed
    if len(numbers) < EXACT_PARTS and not suffix:
        return None
    return constraint.strip().removeprefix("v")


def matches(version: str, constraint: str) -> bool:
    """Whether ``version`` is ``constraint`` (an exact pin) or a stable release under its prefix."""
    wanted, have = _parse(constraint), _parse(version)
    if wanted is None or have is None:
        return False
    if exact_pin(constraint) is not None:
        return bool(sort_key(version) == sort_key(constraint))
    prefix = wanted[0]
    return have[0][: len(prefix)] == prefix and not _is_prerelease(have[1])


def max_satisfying(versions: Iterable[str], constraint: str) -> str | None:
    """The newest of ``versions`` that ``constraint`` matches (mise's fuzzy "latest matching")."""
    return max((v for v in versions if matches(v, constraint)), key=sort_key, default=None)


def update_type(current: str, new: str) -> UpdateType | None:
    """``major``/``minor``/``patch`` by the first numeric part that differs, else ``None``."""
    a, b = _parse(current), _parse(new)
    if a is None or b is None or sort_key(current) == sort_key(new):
        return None
    width = max(len(a[0]), len(b[0]), 3)
    left = a[0] + (0,) * (width - len(a[0]))
    right = b[0] + (0,) * (width - len(b[0]))
    if left[0] != right[0]:
        return "major"
    if left[1] != right[1]:
        return "minor"
    return "patch"


def is_compatible(current: str, other: str) -> bool:  # noqa: ARG001 - every release is a move
    """Every release of a tool is one a user can move to."""
    return True


def propose(constraint: str, version: str) -> str | None:
    """What to write for ``version`` at the precision of ``constraint``: ``20`` → ``22``.

    An exact pin gives the version itself; a fuzzy prefix of N parts the first N parts of
    ``version`` (a leading ``v`` kept as written); ``None`` for anything else (an alias such as
    ``lts``, which moves by itself).
    """
    wanted, have = _parse(constraint), _parse(version)
    if wanted is None or have is None:
        return None
    prefix = "v" if constraint.strip().startswith("v") else ""
    if exact_pin(constraint) is not None:
        return prefix + version.removeprefix("v")
    parts = have[0][: len(wanted[0])]
    return prefix + ".".join(str(part) for part in parts)


def shown(version: str) -> str:
    """``version`` as mise lists it: a tag's leading ``v`` dropped (``v0.11.0`` → ``0.11.0``).

    mise's ``github:``/``ubi:``/``aqua:`` backends strip a ``v`` from tag names
    (``jdx/mise:src/backend/github.rs``, ``version_prefix``), so ``mise ls-remote`` and a tool
    row show ``0.11.0`` whether the declaration or the tag carries the ``v``.
    """
    text = version.strip()
    return text[1:] if text[:1] == "v" and text[1:2].isdigit() else text


def unknown_alias(value: str, aliases: Iterable[str]) -> str:
    """Why a tool version that is neither a version nor an alias of its catalog names nothing.

    ``aliases`` are the catalog's (Node's ``lts``, ``lts/<name>``, ``latest``), listed when
    there are any, as ``mise ls-remote`` would show them.
    """
    known = sorted(aliases)
    if not known:
        return f"{value!r} is neither a version nor a version prefix of this tool"
    return (
        f"{value!r} is neither a version, a version prefix nor an alias of this tool"
        f" (aliases: {', '.join(known)})"
    )
