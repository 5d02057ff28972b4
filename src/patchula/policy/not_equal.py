"""PEP 440 ``!=`` exclusions: releases a Python requirement names as never to be installed.

``urllib3!=2.8.0,>=2`` says 2.8.0 is not to be installed (the usual reason: that release breaks
the project). pip never selects an excluded release for that requirement (PEP 440, "Version
exclusion"), so it is no candidate, nor an update to propose, whatever the release-age policy
admits; the registry's latest stays what it is, and the row names the exclusions that changed
its answer, as go.mod ``exclude`` rows do (``policy.evaluate.excluded_note``). Evaluated by
``packaging.specifiers`` (the reference implementation), wildcards (``!=2.8.*``) included.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from packaging.specifiers import InvalidSpecifier, SpecifierSet

from patchula.versioning import pep440
from patchula.versioning.base import has_long_number

if TYPE_CHECKING:
    from patchula.models import Catalog

# How many excluded versions a note names before it counts the rest.
_SHOWN = 5


def clauses(constraint: str | None) -> str | None:
    """The ``!=`` clauses of a PEP 440 specifier (``"!=2.8.0,>=2"`` → ``"!=2.8.0"``) or ``None``."""
    if not constraint or "!=" not in constraint or has_long_number(constraint):
        return None
    try:
        specs = SpecifierSet(constraint)
    except InvalidSpecifier:
        return None
    kept = sorted(str(spec) for spec in specs if spec.operator == "!=")
    return ",".join(kept) or None


def excluding(catalog: Catalog, exclusions: str, keep: str | None) -> tuple[Catalog, list[str]]:
    """``catalog`` with the releases ``exclusions`` rejects marked not installable.

    Returns the copy and the versions marked, newest first. ``keep`` (a pin or locked version)
    stays as it is: current is what it is. ``catalog`` itself when none is marked.
    """
    from msgspec.structs import replace  # noqa: PLC0415 - only rows with a != clause

    specs = SpecifierSet(exclusions)
    marked: list[str] = []
    releases = []
    for release in catalog.releases:
        if (
            release.installable
            and pep440.is_valid(release.version)
            and (keep is None or pep440.compare(release.version, keep) != 0)
            and not specs.contains(release.version, prereleases=True)
        ):
            release = release._replace(installable=False)  # noqa: PLW2901 - the row's copy
            marked.append(release.version)
        releases.append(release)
    if not marked:
        return catalog, []
    marked.sort(key=pep440.sort_key, reverse=True)
    return replace(catalog, releases=tuple(releases)), marked


def note(catalog: Catalog, marked: list[str], current: str | None, exclusions: str) -> str | None:
    """Name the excluded releases that changed the answer: usable, newer than current.

    ``catalog`` is the one before ``excluding``. ``None`` when no exclusion mattered.
    """
    if current is None or not pep440.is_valid(current):
        return None
    stable = pep440.is_stable(current)
    mattered = [
        version
        for version in marked
        if (rel := catalog.release(version)) is not None
        and rel.installable
        and not rel.yanked
        and (not stable or pep440.is_stable(version))
        and pep440.compare(version, current) > 0
    ]
    if not mattered:
        return None
    shown = ", ".join(mattered[:_SHOWN])
    more = f" and {len(mattered) - _SHOWN} more" if len(mattered) > _SHOWN else ""
    verb = "is" if len(mattered) == 1 else "are"
    return f"{shown}{more} {verb} excluded by the declared range ({exclusions}): not proposed"
