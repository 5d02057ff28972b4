"""Requires-Python: which releases a Python row can move to, for the Python it is installed on.

A PyPI release installs on Python X when one of its files admits X (the files' Requires-Python,
PEP 345 / core metadata ``Requires-Python``, served per file as PEP 691 ``requires-python`` and
PEP 503 ``data-requires-python``; ``Release.requires_python``). pip skips the files whose
Requires-Python excludes the running interpreter, so a release newer than what the project's
Python can install is never what an install picks nor an update the project can take.

The Python a row is judged for (``python_bound``):

* the row's environment marker, when it bounds ``python_version`` / ``python_full_version``
  from below (``zipp==3.15.0 ; python_version == "3.7"`` applies to Python 3.7 only);
* the project's ``requires-python`` (PEP 621; Poetry's ``python`` dependency), for the rows of
  the ``pyproject.toml`` that declares it (``Dependency.requires_python``);

and, when both are given, the Pythons both admit. Candidates (current from a range, eligible,
latest usable) are the releases installable on the **lowest** of those Pythons: a project that
supports 3.8 must install on 3.8, so a release needing 3.9 is no update it can take. This is
what uv does (it resolves for the lower bound of ``requires-python``: "uv will only select
versions that are compatible with the lower bound", docs.astral.sh/uv/concepts/resolution/
#requires-python) and Dependabot does (it updates Python manifests for the lowest Python the
project supports, dependabot-core#8346, #13424). A marker bound only from above
(``python_version < "3.8"``) has no lowest Python and bounds nothing; nor does a
requirements file without markers: pip does not know the target Python, and guessing it would
be a confident wrong answer. Specifiers are evaluated by ``packaging.specifiers``, the
reference implementation; an invalid Requires-Python admits every Python, as pip ignores it.
"""

from __future__ import annotations

import functools
from collections import OrderedDict
from typing import TYPE_CHECKING, NamedTuple

from packaging.markers import InvalidMarker, Marker, UndefinedComparison, UndefinedEnvironmentName
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.version import Version

from patchula.versioning import pep440
from patchula.versioning.base import has_long_number

if TYPE_CHECKING:
    from patchula.models import Catalog, Dependency, Finding, Release

# Interpreter versions the lowest Python is looked for among, ascending: every CPython
# release line up to far beyond today's, with patch levels (``>=3.8.1`` is 3.8.1).
_MAX_PATCH = 40
_PYTHONS: tuple[Version, ...] = tuple(
    Version(f"{major}.{minor}.{patch}")
    for major, minors in ((2, range(8)), (3, range(40)))
    for minor in minors
    for patch in range(_MAX_PATCH + 1)
)
_PYTHON_VARIABLES = frozenset({"python_version", "python_full_version"})
# The separator of several files' Requires-Python in ``Release.requires_python``.
_UNION = " || "


class PythonBound(NamedTuple):
    """The Python a row is judged for: ``python`` (``3.8``, ``3.8.1``) and why (``basis``).

    ``basis`` completes "…; " in a note: ``the project supports Python 3.8 (requires-python
    >=3.8)`` or ``the row applies to Python 3.7 (python_version == "3.7")``. ``raised`` is the
    row's note when its own current (pin or lock) needs a newer Python than its markers and
    project give, so it is judged for the lowest Python current installs on (``bound_for``).
    """

    python: str
    basis: str
    raised: str | None = None


def python_bound(dep: Dependency) -> PythonBound | None:
    """The lowest Python ``dep`` is installed on, from its markers and its project's bound.

    ``None`` for rows that are not PyPI rows, rows whose markers and project name no Python,
    a marker bound only from above, or bounds that no Python satisfies together.
    """
    if dep.datasource != "pypi":
        return None
    return _bound(dep.requires_python, dep.markers)


def bound_for(dep: Dependency, catalog: Catalog, keep: str | None) -> PythonBound | None:
    """``python_bound``, raised to the lowest Python ``keep`` (the pin or lock) installs on.

    A project that supports Python 3.7 but has locked pytest 9.1.1 (Requires-Python >=3.10)
    installs it only on 3.10 and later: there, pytest 9.2.0 (>=3.10) is an update it can take,
    and only a release needing more than 3.10 narrows the project further. So the row is
    judged for the lowest Python both its bound and its current admit; the bound itself when
    current installs there, has no Requires-Python, or no Python satisfies both.
    """
    bound = python_bound(dep)
    if bound is None or keep is None or not pep440.is_valid(keep):
        return bound
    release = _release(catalog, keep)
    if release is None or not excluded(release, bound.python):
        return bound
    raised = _bound(dep.requires_python, dep.markers, release.requires_python)
    if raised is None:
        return bound
    note = (
        f"current {release.version} needs Python {release.requires_python}: judged for Python"
        f" {raised.python}, not {bound.python} ({bound.basis})"
    )
    basis = f"current {release.version} installs on Python {raised.python} and later"
    return PythonBound(raised.python, basis, note)


@functools.lru_cache(maxsize=1024)
def _bound(
    requires: str | None, markers: str | None, also: str | None = None
) -> PythonBound | None:
    python = _lowest(requires, markers, also)
    if python is None:
        return None
    shown = _shown(python)
    if requires is None or _specifier_sets(requires) is None:
        basis = f"the row applies to Python {shown} ({markers})"
    elif markers is not None and _lowest(requires, markers) != _lowest(requires, None):
        # The marker puts the row above the project's own lowest Python: the row's doing.
        basis = (
            f"the row applies to Python {shown} ({markers}; the project: requires-python"
            f" {requires})"
        )
    else:
        basis = f"the project supports Python {shown} (requires-python {requires})"
    return PythonBound(shown, basis)


@functools.lru_cache(maxsize=1024)
def _lowest(requires: str | None, markers: str | None, also: str | None = None) -> Version | None:
    """The lowest Python ``requires``, the marker and ``also`` admit; ``None``: none, no floor."""
    specs = _specifier_sets(requires) if requires else None
    marker = _python_marker(markers) if markers else None
    if specs is None and marker is None:
        return None
    for python in _PYTHONS:
        if specs is not None and not any(spec.contains(python) for spec in specs):
            continue
        if marker is not None and _marker_value(marker, python) is False:
            continue
        if specs is None and python == _PYTHONS[0]:
            return None  # the marker has no lower bound: no lowest Python to judge for
        if also is not None and not admits(also, str(python)):
            continue
        return python
    return None


def _shown(python: Version) -> str:
    major, minor, patch = python.release
    return f"{major}.{minor}" if patch == 0 else str(python)


def _specifier_sets(text: str) -> tuple[SpecifierSet, ...] | None:
    """The specifier sets of ``text`` (``||``-joined: any admits); ``None`` when invalid."""
    if has_long_number(text):
        return None  # packaging cannot compare it (an int() digit limit)
    try:
        return tuple(SpecifierSet(part.strip()) for part in text.split("||"))
    except InvalidSpecifier:
        return None


def _python_marker(markers: str) -> list[object] | None:
    """The parsed marker when it names a Python variable; ``None`` otherwise or when invalid."""
    try:
        marker = Marker(markers)
    except InvalidMarker:
        return None
    if not any(name in markers for name in _PYTHON_VARIABLES):
        return None
    parsed: object = marker._markers  # noqa: SLF001 - packaging's tree: atoms, and/or, groups
    return parsed if isinstance(parsed, list) else None


def _marker_value(parsed: list[object], python: Version) -> bool | None:
    """The marker at ``python`` in three-valued logic: ``None`` where another variable decides.

    Mirrors ``packaging.markers._evaluate_markers``: ``and`` binds tighter than ``or``. Only
    atoms on ``python_version`` / ``python_full_version`` are evaluated (``packaging``); any
    other (``sys_platform``, ``extra``) may hold, so it is unknown, never false.
    """
    groups: list[list[bool | None]] = [[]]
    for item in parsed:
        if isinstance(item, list):
            groups[-1].append(_marker_value(item, python))
        elif isinstance(item, tuple):
            groups[-1].append(_atom_value(item, python))
        elif item == "or":
            groups.append([])
    values = [_all(group) for group in groups]
    if any(value is True for value in values):
        return True
    if any(value is None for value in values):
        return None
    return False


def _all(values: list[bool | None]) -> bool | None:
    if any(value is False for value in values):
        return False
    if any(value is None for value in values):
        return None
    return True


def _atom_value(atom: tuple[object, ...], python: Version) -> bool | None:
    names = {getattr(part, "value", None) for part in atom if type(part).__name__ == "Variable"}
    if not names or not names <= _PYTHON_VARIABLES:
        return None
    text = " ".join(str(part.serialize()) for part in atom if hasattr(part, "serialize"))
    return _atom_holds(text, python)


@functools.lru_cache(maxsize=8192)
def _atom_holds(text: str, python: Version) -> bool | None:
    major, minor, _ = python.release
    environment = {"python_version": f"{major}.{minor}", "python_full_version": str(python)}
    try:
        return Marker(text).evaluate(environment)
    except (InvalidMarker, UndefinedComparison, UndefinedEnvironmentName, ValueError):
        return None


@functools.lru_cache(maxsize=8192)
def admits(requires_python: str | None, python: str) -> bool:
    """Whether a release of this Requires-Python installs on ``python`` (pip's check).

    ``None`` admits every Python; several values joined by `` || `` admit what any admits; an
    invalid one admits every Python (pip ignores an invalid Requires-Python).
    """
    if requires_python is None or has_long_number(requires_python):
        return True
    for part in requires_python.split(_UNION):
        try:
            if SpecifierSet(part).contains(python, prereleases=True):
                return True
        except InvalidSpecifier:
            return True
    return False


def excluded(release: Release, python: str) -> bool:
    """Whether ``release`` names a Requires-Python that excludes ``python``."""
    return not admits(release.requires_python, python)


# Bounded catalogs per (catalog, Python, kept version): the rows of one package in one project
# share one, so they share its view and verdicts (``policy.memo``). Holds the catalog itself so
# that its id() is not reused while the entry lives.
_BOUNDED: OrderedDict[tuple[int, str, str | None], tuple[Catalog, Catalog]] = OrderedDict()
_MAX_BOUNDED = 256


def bounded(catalog: Catalog, python: str, keep: str | None = None) -> Catalog:
    """``catalog`` with the releases that do not install on ``python`` marked not installable.

    Their ``requires_python`` stays, which tells them from releases without files. ``keep``
    (a pin or locked version) stays as it is: the row's current is what it is, installable or
    not, and says so (``python_notes``). ``latest`` stays the registry's, so the row still
    shows what exists. ``catalog`` itself when no release is excluded.
    """
    from msgspec.structs import replace  # noqa: PLC0415 - only rows with a Python bound

    memo_key = (id(catalog), python, keep)
    held = _BOUNDED.get(memo_key)
    if held is not None and held[0] is catalog:
        _BOUNDED.move_to_end(memo_key)
        return held[1]
    changed = False
    releases: list[Release] = []
    for release in catalog.releases:
        if (
            release.installable
            and excluded(release, python)
            and (keep is None or pep440.compare(release.version, keep) != 0)
        ):
            release = release._replace(installable=False)  # noqa: PLW2901 - the bounded copy
            changed = True
        releases.append(release)
    result = replace(catalog, releases=tuple(releases)) if changed else catalog
    _BOUNDED[memo_key] = (catalog, result)
    while len(_BOUNDED) > _MAX_BOUNDED:
        _BOUNDED.popitem(last=False)
    return result


def python_notes(finding: Finding, catalog: Catalog, bound: PythonBound) -> list[str]:
    """What the Python bound changed on the row, for its reason (``catalog``: unbounded).

    The current (pin or lock) that needs another Python; the newest release above what the row
    proposes (or above current) that needs another Python, named with its Requires-Python: "4.1.2
    needs Python >=3.9; the project supports Python 3.8 (requires-python >=3.8)".
    """
    notes: list[str] = []
    python = bound.python
    current = finding.current
    if bound.raised is not None:
        notes.append(bound.raised)
    if current is not None and pep440.is_valid(current):
        rel = _release(catalog, current)
        if rel is not None and excluded(rel, python):
            notes.append(f"current {rel.version} needs Python {rel.requires_python}; {bound.basis}")
    floor = finding.eligible or current
    if floor is None or not pep440.is_valid(floor):
        if finding.status == "unknown" and current is None:
            notes.append(bound.basis)  # why releases that match need another Python
        return notes
    newest = _newest_excluded(catalog, floor, python)
    if newest is not None:
        notes.append(
            f"{newest.version} needs Python {newest.requires_python}; {bound.basis}: not proposed"
        )
    return notes


def _release(catalog: Catalog, version: str) -> Release | None:
    found = catalog.release(version)
    if found is not None:
        return found
    return next((r for r in catalog.releases if pep440.compare(r.version, version) == 0), None)


def _newest_excluded(catalog: Catalog, floor: str, python: str) -> Release | None:
    """The newest usable release above ``floor`` of current's stability excluded by Python."""
    stable = pep440.is_stable(floor)
    best: Release | None = None
    for rel in catalog.releases:
        if (
            rel.installable
            and not rel.yanked
            and pep440.is_valid(rel.version)
            and (not stable or pep440.is_stable(rel.version))
            and "+" not in rel.version
            and pep440.compare(rel.version, floor) > 0
            and excluded(rel, python)
            and (best is None or pep440.compare(rel.version, best.version) > 0)
        ):
            best = rel
    return best
