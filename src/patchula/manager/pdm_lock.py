"""The ``pdm.lock`` manager: the registry packages PDM resolved."""

from __future__ import annotations

from packaging.utils import canonicalize_name

from patchula.manager import paths
from patchula.manager.base import ReadFile, read_metadata_lock
from patchula.models import ExtractResult, LockedPackage, Lockfile

ID = "pdm_lock"
DATASOURCE = "pypi"
matches = paths.pdm_lock  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "pep440"

# ``[metadata] lock_version`` majors this reader knows (PDM 2.x writes 4.x; 3.x came before
# the ``[metadata]`` table was stable and has the same ``[[package]]`` keys).
_KNOWN_MAJORS = frozenset({"3", "4"})
# Package keys that take it off the index (pdm's VCS, path and URL requirements).
_NOT_REGISTRY = ("git", "hg", "svn", "bzr", "path", "url")


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the locked packages of a ``pdm.lock`` (TOML, https://pdm-project.org/latest/usage/lockfile/).

    Every ``[[package]]`` with a ``name`` and a ``version`` becomes a ``LockedPackage`` (PEP 503
    normalised name, line of its ``name`` key), unless it has a ``git``/``hg``/``svn``/``bzr``,
    ``path`` or ``url`` key or ``editable = true`` (not from an index). An entry for a
    package with extras (``extras = ["socks"]``, or ``name = "requests[socks]"`` in older
    locks) is the package itself. ``groups`` is ``[metadata] groups`` (``pdm lock -G``
    may leave some out; a row of another group is not stale). ``members`` is ``None``: the
    lock covers the pyproject beside it. Invalid TOML is a problem with its line; an unknown
    ``[metadata] lock_version`` major is a warning and the rest is still read.
    """
    data, tables, problems = read_metadata_lock(
        path, text, "lock_version", _KNOWN_MAJORS, "pdm.lock lock_version"
    )
    if data is None:
        return ExtractResult(problems=tuple(problems))
    metadata = data.get("metadata")
    packages: dict[tuple[str, str], LockedPackage] = {}
    for entry, line in tables:
        name, version = entry.get("name"), entry.get("version")
        if not isinstance(name, str) or not isinstance(version, str) or not name or not version:
            continue
        if entry.get("editable") is True or any(key in entry for key in _NOT_REGISTRY):
            continue
        base = canonicalize_name(name.partition("[")[0].strip())
        # One entry per extras set of one package (``uvicorn`` and ``uvicorn[standard]``): one
        # locked version, at the line of its first entry.
        packages.setdefault((base, version), LockedPackage(base, version, line))
    groups = metadata.get("groups") if isinstance(metadata, dict) else None
    lockfile = Lockfile(
        file=path,
        manager=ID,
        ecosystem=DATASOURCE,
        packages=tuple(packages.values()),
        groups=(
            frozenset(canonicalize_name(g) for g in groups if isinstance(g, str))
            if isinstance(groups, list)
            else None
        ),
    )
    return ExtractResult(lockfile=lockfile, problems=tuple(problems))
