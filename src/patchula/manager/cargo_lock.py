"""The ``Cargo.lock`` manager: the registry crates Cargo resolved, and the workspace members."""

from __future__ import annotations

from patchula.manager import paths
from patchula.manager.base import ReadFile, read_lock_packages
from patchula.models import ExtractResult, LockedPackage, Lockfile

ID = "cargo_lock"
DATASOURCE = "crates"
matches = paths.cargo_lock  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "cargo"

# Lock versions 1 and 2 carry no top-level ``version`` key; 3 and 4 do
# (https://doc.rust-lang.org/cargo/reference/resolver.html, ``ResolveVersion`` in Cargo).
_KNOWN_VERSIONS = (1, 2, 3, 4)
_REGISTRY_PREFIXES = ("registry+", "sparse+")


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the locked crates of a ``Cargo.lock`` (TOML, lock versions 1 to 4).

    Every ``[[package]]`` with a ``name``, a ``version`` and a registry ``source``
    (``registry+…`` or ``sparse+…``: crates.io or another registry) becomes a ``LockedPackage``
    (line of its ``name`` key); git and path packages are left out. ``members`` is the set of
    package names without a ``source``: the workspace members (and path dependencies). Invalid
    TOML is a problem; an unknown lock ``version`` is a warning and the file is still read.
    """
    data, tables, problems = read_lock_packages(path, text, _KNOWN_VERSIONS, "Cargo.lock")
    if data is None:
        return ExtractResult(problems=tuple(problems))
    packages: list[LockedPackage] = []
    members: set[str] = set()
    for entry, line in tables:
        name, version, source = entry.get("name"), entry.get("version"), entry.get("source")
        if not isinstance(name, str) or not name:
            continue
        if source is None:
            members.add(name)
        elif (
            isinstance(source, str)
            and source.startswith(_REGISTRY_PREFIXES)
            and isinstance(version, str)
            and version
        ):
            packages.append(LockedPackage(name, version, line))
    lockfile = Lockfile(
        file=path,
        manager=ID,
        ecosystem=DATASOURCE,
        packages=tuple(packages),
        members=frozenset(members),
    )
    return ExtractResult(lockfile=lockfile, problems=tuple(problems))
