"""The ``uv.lock`` manager: the registry packages uv resolved, and the workspace members."""

from __future__ import annotations

from packaging.utils import canonicalize_name

from patchula.manager import paths
from patchula.manager.base import ReadFile, read_lock_packages
from patchula.models import ExtractResult, LockedPackage, Lockfile

ID = "uv_lock"
DATASOURCE = "pypi"
matches = paths.uv_lock  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "pep440"

_KNOWN_VERSIONS = (1,)
# Source kinds that are not a package index (https://docs.astral.sh/uv/concepts/resolution/).
_NOT_REGISTRY = frozenset({"editable", "virtual", "directory", "path", "git", "url"})
_ROOT_KINDS = ("editable", "virtual")


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the locked packages of a ``uv.lock`` (TOML, https://docs.astral.sh/uv/).

    Every ``[[package]]`` with a ``name``, a ``version`` and a registry ``source`` becomes a
    ``LockedPackage`` (PEP 503 normalised name, line of its ``name`` key); editable, virtual,
    directory, path, git and URL sources are left out. ``members`` is ``[manifest] members``
    (normalised), else the project(s) whose source is editable or virtual ``"."``, else
    ``None``. A package locked once per resolution fork (numpy 2.2.6 for ``python_full_version
    < '3.12'``, 2.3.4 for ``>= '3.12'``) keeps its entry's ``resolution-markers``
    (``LockedPackage.markers``; docs.astral.sh/uv/concepts/resolution/#universal-resolution).
    Invalid TOML and an unknown lock ``version`` are problems.
    """
    data, tables, problems = read_lock_packages(path, text, _KNOWN_VERSIONS, "uv.lock")
    if data is None:
        return ExtractResult(problems=tuple(problems))
    packages: list[LockedPackage] = []
    roots: set[str] = set()
    for entry, line in tables:
        name, version, source = entry.get("name"), entry.get("version"), entry.get("source")
        if not isinstance(name, str) or not name:
            continue
        kinds = source if isinstance(source, dict) else {}
        if any(kinds.get(kind) == "." for kind in _ROOT_KINDS):
            roots.add(canonicalize_name(name))
        if isinstance(version, str) and version and not _NOT_REGISTRY.intersection(kinds):
            markers = _fork_markers(entry.get("resolution-markers"))
            packages.append(LockedPackage(canonicalize_name(name), version, line, markers=markers))
    lockfile = Lockfile(
        file=path,
        manager=ID,
        ecosystem=DATASOURCE,
        packages=tuple(packages),
        members=_members(data, roots),
    )
    return ExtractResult(lockfile=lockfile, problems=tuple(problems))


def _fork_markers(value: object) -> str:
    """An entry's ``resolution-markers`` as one marker (``or`` of each); ``""`` when none."""
    if not isinstance(value, list):
        return ""
    markers = [m.strip() for m in value if isinstance(m, str) and m.strip()]
    if len(markers) == 1:
        return markers[0]
    return " or ".join(f"({m})" for m in markers)


def _members(data: dict[str, object], roots: set[str]) -> frozenset[str] | None:
    manifest = data.get("manifest")
    members = manifest.get("members") if isinstance(manifest, dict) else None
    if isinstance(members, list):
        names = {canonicalize_name(member) for member in members if isinstance(member, str)}
        if names:
            return frozenset(names)
    return frozenset(roots) if roots else None
