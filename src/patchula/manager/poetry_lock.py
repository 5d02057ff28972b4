"""The ``poetry.lock`` manager: the registry packages Poetry resolved."""

from __future__ import annotations

from packaging.utils import canonicalize_name

from patchula.manager.base import ReadFile, TomlLocator, package_tables, parse_toml, strip_bom
from patchula.models import ExtractResult, LockedPackage, Lockfile, ManifestProblem

ID = "poetry_lock"
DATASOURCE = "pypi"
VERSIONING = "pep440"

# lock-version majors this reader knows (Poetry 1.x wrote 1.x, Poetry ≥1.3 writes 2.x).
_KNOWN_MAJORS = frozenset({"1", "2"})
# `[package.source] type` values that are not a package index (`legacy` is a custom index).
_NOT_REGISTRY = frozenset({"git", "directory", "file", "url"})


def matches(path: str) -> bool:
    """Return whether ``path`` is a ``poetry.lock``."""
    return path.rsplit("/", 1)[-1] == "poetry.lock"


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the locked packages of a ``poetry.lock`` (TOML written by Poetry).

    Every ``[[package]]`` with a ``name`` and a ``version`` becomes a ``LockedPackage`` (PEP 503
    normalised name, line of its ``name`` key) unless its ``[package.source]`` type is git,
    directory, file or url; PyPI and ``legacy`` (custom index) sources are kept. ``members``
    is ``None``: the lock covers the pyproject beside it. Invalid TOML is a problem with its
    line; an unknown ``[metadata] lock-version`` major is a warning and the rest is still read.
    """
    data, problem = parse_toml(path, text)
    if data is None:
        return ExtractResult(problems=() if problem is None else (problem,))
    locator = TomlLocator(strip_bom(text))
    tables, problems = package_tables(path, data, locator)
    metadata = data.get("metadata")
    lock_version = metadata.get("lock-version") if isinstance(metadata, dict) else None
    if lock_version is not None and str(lock_version).split(".", 1)[0] not in _KNOWN_MAJORS:
        line = locator.line(locator.find(("metadata", "lock-version")))
        message = f"unknown lock-version {lock_version!r}; reading it as far as possible"
        problems.append(ManifestProblem(path, line, message, "warning"))
    packages: list[LockedPackage] = []
    for entry, line in tables:
        name, version, source = entry.get("name"), entry.get("version"), entry.get("source")
        if not isinstance(name, str) or not name or not isinstance(version, str) or not version:
            continue
        if isinstance(source, dict) and source.get("type") in _NOT_REGISTRY:
            continue
        packages.append(LockedPackage(canonicalize_name(name), version, line))
    lockfile = Lockfile(file=path, manager=ID, ecosystem=DATASOURCE, packages=tuple(packages))
    return ExtractResult(lockfile=lockfile, problems=tuple(problems))
