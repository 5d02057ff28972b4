"""The npm lockfile manager: ``package-lock.json`` and ``npm-shrinkwrap.json`` (v1, v2, v3)."""

from __future__ import annotations

import posixpath
from typing import TYPE_CHECKING, Literal

import msgspec

from patchula.manager import paths
from patchula.manager.base import (
    JsonKeys,
    ReadFile,
    collector_paused,
    json_type,
    parse_json_object,
)
from patchula.models import ExtractResult, LockedPackage, Lockfile, ManifestProblem

if TYPE_CHECKING:
    from collections.abc import Callable

ID = "package_lock"
DATASOURCE = "npm"
matches = paths.package_lock  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "npm"

_KNOWN_VERSIONS = (1, 2, 3)
_NODE_MODULES = "node_modules/"
# `resolved` values that do not come from a registry: git, local directories and tarballs.
_NOT_REGISTRY = ("git+", "git:", "git@", "github:", "gitlab:", "bitbucket:", "file:", "link:")

Severity = Literal["warning", "error"]


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the locked packages of an npm lockfile (npm docs, "package-lock.json").

    lockfileVersion 2 and 3 are read from ``packages`` (keys are install paths such as
    ``node_modules/a`` or ``packages/x/node_modules/@s/b``; the registry name is the entry's
    ``name`` for aliases, else the last ``node_modules/`` segment); version 1 from the nested
    ``dependencies`` tree. Workspace links and entries resolved from git or local paths are left
    out. ``members`` holds ``""`` and every workspace or linked directory. An unknown
    lockfileVersion is a warning and the file is read as far as it can be. The cyclic garbage
    collector is paused meanwhile (``collector_paused``: linear time on large lockfiles).
    """
    with collector_paused():
        return _extract(path, text)


def _extract(path: str, text: str) -> ExtractResult:
    data, problem = parse_json_object(path, text)
    if problem is not None:
        return ExtractResult(problems=(problem,))
    keys_of = JsonKeys(text, data)

    def line(*keys: str) -> int | None:
        return keys_of.line(keys)

    reader = _Reader(path, line)
    version = data.get("lockfileVersion")
    if version not in _KNOWN_VERSIONS or isinstance(version, bool):
        message = f"unknown lockfileVersion {version!r}; reading it as far as possible"
        reader.problem(message, ("lockfileVersion",), "warning")
    if version != 1 and "packages" in data:
        reader.read_packages(data["packages"])
    elif "dependencies" in data:
        reader.read_v1(data["dependencies"], ("dependencies",), "")
    lockfile = Lockfile(
        file=path,
        manager=ID,
        ecosystem=DATASOURCE,
        packages=tuple(reader.packages),
        members=frozenset(reader.members),
    )
    return ExtractResult(lockfile=lockfile, problems=tuple(reader.problems))


class _Reader(msgspec.Struct):
    """Collects locked packages, member directories and problems while walking one lockfile."""

    path: str
    line: Callable[..., int | None]
    packages: list[LockedPackage] = msgspec.field(default_factory=list)
    members: set[str] = msgspec.field(default_factory=lambda: {""})
    problems: list[ManifestProblem] = msgspec.field(default_factory=list)

    def problem(self, message: str, keys: tuple[str, ...], severity: Severity = "error") -> None:
        self.problems.append(ManifestProblem(self.path, self.line(*keys), message, severity))

    def read_packages(self, entries: object) -> None:
        """Read the v2/v3 ``packages`` object."""
        if not isinstance(entries, dict):
            self.problem(f"`packages` must be an object, got {json_type(entries)}", ("packages",))
            return
        for key, entry in entries.items():
            if key == "":
                continue
            if isinstance(entry, dict):
                self.read_entry(key, entry)
            else:
                message = f"entry {key!r} must be an object, got {json_type(entry)}"
                self.problem(message, ("packages", key))

    def read_entry(self, key: str, entry: dict[str, object]) -> None:
        """Read one v2/v3 entry: a member directory, a workspace link or an installed package."""
        resolved = entry.get("resolved")
        if entry.get("link") is True:
            if isinstance(resolved, str) and resolved:
                self.members.add(posixpath.normpath(resolved))
            return
        segment = key.rfind(_NODE_MODULES)
        if segment < 0:
            # A directory inside the project (a workspace member or a `file:` package).
            self.members.add(posixpath.normpath(key))
            return
        version = entry.get("version")
        if version is not None and not isinstance(version, str):
            message = f"version of {key!r} must be a string, got {json_type(version)}"
            self.problem(message, ("packages", key, "version"))
            return
        if not version or _not_registry(resolved):
            return
        name = entry.get("name")
        if not isinstance(name, str) or not name:
            name = key[segment + len(_NODE_MODULES) :]
        line = self.line("packages", key)
        self.packages.append(LockedPackage(name, version, line, install_path=key))

    def read_v1(self, entries: object, keys: tuple[str, ...], parent: str) -> None:
        """Read a v1 ``dependencies`` object and, recursively, the ones nested in it."""
        if not isinstance(entries, dict):
            self.problem(f"`dependencies` must be an object, got {json_type(entries)}", keys)
            return
        for key, entry in entries.items():
            install_path = f"{parent}{_NODE_MODULES}{key}"
            if not isinstance(entry, dict):
                message = f"entry {key!r} must be an object, got {json_type(entry)}"
                self.problem(message, (*keys, key))
                continue
            raw_version = entry.get("version")
            if raw_version is not None and not isinstance(raw_version, str):
                message = f"version of {key!r} must be a string, got {json_type(raw_version)}"
                self.problem(message, (*keys, key, "version"))
            name, version = _v1_version(key, raw_version)
            if version and not _not_registry(entry.get("resolved")):
                line = self.line(*keys, key)
                self.packages.append(LockedPackage(name, version, line, install_path))
            nested = entry.get("dependencies")
            if nested is not None:
                self.read_v1(nested, (*keys, key, "dependencies"), f"{install_path}/")


def _v1_version(key: str, version: object) -> tuple[str, str | None]:
    """Return ``(registry name, version)`` of a v1 entry; version ``None`` when not a registry one.

    Aliases are written ``npm:real-name@1.2.3``; git and local entries carry their spec
    (``github:user/repo#sha``, ``file:../x``) as the version.
    """
    if not isinstance(version, str) or not version:
        return key, None
    if version.startswith("npm:"):
        target, at, real_version = version[4:].rpartition("@")
        if not at or not target or not real_version:
            return key, None
        return target, real_version
    if ":" in version or "/" in version:
        return key, None
    return key, version


def _not_registry(resolved: object) -> bool:
    """Return whether a ``resolved`` value points somewhere other than a registry tarball."""
    if not isinstance(resolved, str) or not resolved:
        return False
    if resolved.lower().startswith(_NOT_REGISTRY):
        return True
    return "://" not in resolved
