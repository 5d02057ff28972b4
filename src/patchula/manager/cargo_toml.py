"""The ``Cargo.toml`` manager: a crate's dependency tables and its workspace's shared ones."""

from __future__ import annotations

import posixpath
import re
from typing import Literal

import msgspec

from patchula.errors import ManifestError
from patchula.manager import paths
from patchula.manager.base import ReadFile, TomlLocator, TomlTable, parse_toml, strip_bom
from patchula.models import Dependency, ExtractResult, ManifestProblem

ID = "cargo_toml"
DATASOURCE = "crates"
matches = paths.cargo_toml  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "cargo"

MANIFEST = paths.CARGO_MANIFEST
# https://doc.rust-lang.org/cargo/reference/specifying-dependencies.html; the underscore
# spellings are the deprecated aliases Cargo still reads before edition 2024.
_KINDS = (
    "dependencies",
    "dev-dependencies",
    "build-dependencies",
    "dev_dependencies",
    "build_dependencies",
)
_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")

PATH_REASON = "local path dependency"
MEMBER_PATH_REASON = "local path dependency (workspace member)"
GIT_REASON = "git dependency"
WORKSPACE_DEP_TYPE = "workspace.dependencies"


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:
    """Extract the dependencies declared in a ``Cargo.toml``.

    Reads ``[dependencies]``, ``[dev-dependencies]`` and ``[build-dependencies]`` (dep_type is
    the table name), their ``[target.<spec>.…]`` forms (dep_type ``target.<spec>.<table>``) and,
    in a workspace root, ``[workspace.dependencies]`` (dep_type ``workspace.dependencies``).
    ``constraint`` is the Cargo requirement as written; ``package = "…"`` renames look up the
    real crate. Path and git dependencies are skipped with a reason; ``registry = "NAME"`` is
    kept as ``sole_index`` (the scan looks it up on that registry's index). A
    ``workspace = true`` entry gives the row of the ``[workspace.dependencies]`` declaration it
    inherits (the root's file, line and dep_type, equal to the root's own row), the workspace
    root found by reading the ``Cargo.toml`` files above ``path`` through ``read`` (or the one
    ``package.workspace`` names). ``project_name`` is ``[package] name``.
    """
    if not text.strip():
        return ExtractResult()
    data, problem = parse_toml(path, text)
    if data is None:
        return ExtractResult(problems=() if problem is None else (problem,))
    collector = _Collector(path, TomlLocator(strip_bom(text)), data, read)
    package = collector.table(data, ("package",))
    for kind in _KINDS:
        collector.dependency_table(data, (kind,), kind)
    for spec, platform in collector.table(data, ("target",)).items():
        keys = ("target", spec)
        if not isinstance(platform, dict):
            collector.problem(collector.line(keys), f"`{_dotted(keys)}` must be a table")
            continue
        for kind in _KINDS:
            collector.dependency_table(platform, (*keys, kind), f"target.{spec}.{kind}")
    workspace = collector.table(data, ("workspace",))
    collector.dependency_table(
        workspace, ("workspace", "dependencies"), WORKSPACE_DEP_TYPE, inherit=False
    )
    name = package.get("name")
    return ExtractResult(
        dependencies=tuple(collector.dependencies),
        problems=tuple(collector.problems),
        project_name=name if isinstance(name, str) and name else None,
    )


def _dotted(keys: tuple[str, ...]) -> str:
    return ".".join(key if _BARE_KEY.fullmatch(key) else f"'{key}'" for key in keys)


def _key_pattern(keys: tuple[str, ...]) -> str:
    parts = []
    for key in keys:
        quoted = rf"""(?:"{re.escape(key)}"|'{re.escape(key)}')"""
        parts.append(f"(?:{re.escape(key)}|{quoted})" if _BARE_KEY.fullmatch(key) else quoted)
    return r"[ \t]*\.[ \t]*".join(parts)


class _Workspace(msgspec.Struct):
    """The ``[workspace.dependencies]`` table found for this manifest, or why there is none.

    ``locator`` and ``data`` are the root manifest's, to give an inherited row its declaration.
    """

    file: str | None
    dependencies: dict[str, object]
    locator: TomlLocator | None = None
    data: dict[str, object] = msgspec.field(default_factory=dict)
    error: str | None = None


class _Collector(msgspec.Struct):
    """Collects rows and problems for one Cargo.toml, locating lines as it goes."""

    path: str
    locator: TomlLocator
    data: dict[str, object]
    read: ReadFile
    dependencies: list[Dependency] = msgspec.field(default_factory=list)
    problems: list[ManifestProblem] = msgspec.field(default_factory=list)
    _workspace: _Workspace | None = None

    def problem(
        self, line: int | None, message: str, severity: Literal["warning", "error"] = "error"
    ) -> None:
        self.problems.append(ManifestProblem(self.path, line, message, severity))

    def line(self, keys: tuple[str, ...]) -> int | None:
        """Return the line defining ``keys``: its header, its key or a dotted key under it."""
        locator = self.locator
        for table in locator.tables:
            if table.path == keys and not table.array:
                return locator.line(table.start)
        for split in range(len(keys) - 1, -1, -1):
            prefix, rest = keys[:split], keys[split:]
            tables: list[TomlTable] = (
                [locator.root]
                if not prefix
                else [t for t in locator.tables if t.path == prefix and not t.array]
            )
            for table in tables:
                offset = locator.find_key(table, rest)
                if offset is None:
                    dotted = re.compile(r"^[ \t]*" + _key_pattern(rest) + r"[ \t]*\.", re.MULTILINE)
                    match = dotted.search(locator.text, table.body, table.end)
                    offset = None if match is None else match.start()
                if offset is not None:
                    return locator.line(offset)
        return locator.line(locator.find(keys))

    def table(self, parent: dict[str, object], keys: tuple[str, ...]) -> dict[str, object]:
        """Return ``parent[keys[-1]]`` when it is a table, ``{}`` (and a problem) otherwise."""
        value = parent.get(keys[-1])
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.problem(self.line(keys), f"`{_dotted(keys)}` must be a table")
            return {}
        return value

    def dependency_table(
        self,
        parent: dict[str, object],
        keys: tuple[str, ...],
        dep_type: str,
        *,
        inherit: bool = True,
    ) -> None:
        """Add one row per entry of the dependency table ``parent[keys[-1]]``."""
        for name, value in self.table(parent, keys).items():
            self.entry((*keys, name), name, value, dep_type, inherit=inherit)

    def entry(
        self,
        keys: tuple[str, ...],
        name: str,
        value: object,
        dep_type: str,
        *,
        inherit: bool,
    ) -> None:
        """Add the row of one dependency: a requirement string or a dependency table."""
        line = self.line(keys)
        if isinstance(value, str):
            self.add(line, name, name, dep_type, value.strip(), value.strip())
            return
        if not isinstance(value, dict):
            self.problem(line, f"dependency `{_dotted(keys)}` must be a string or a table")
            return
        if "workspace" in value:
            if not inherit:
                message = f"`{_dotted(keys)}`: a workspace dependency cannot inherit"
                self.problem(line, message)
                return
            if value["workspace"] is not True:
                self.problem(line, f"`workspace` of dependency `{_dotted(keys)}` must be `true`")
                return
            self.inherit(name, line)
            return
        self.table_entry(keys, line, name, value, dep_type)

    def table_entry(
        self,
        keys: tuple[str, ...],
        line: int | None,
        name: str,
        value: dict[str, object],
        dep_type: str,
    ) -> None:
        """Add the row of a dependency table (``version``, ``package``, ``path``, ``git`` …)."""
        for key in ("version", "package", "path", "git", "registry"):
            if key in value and not isinstance(value[key], str):
                self.problem(line, f"`{key}` of dependency `{_dotted(keys)}` must be a string")
                return
        version = value.get("version")
        package = value.get("package")
        path, git, registry = value.get("path"), value.get("git"), value.get("registry")
        skip_reason: str | None = None
        location: str | None = None
        if isinstance(path, str):
            skip_reason = MEMBER_PATH_REASON if isinstance(version, str) else PATH_REASON
            location = path
        elif isinstance(git, str):
            skip_reason, location = GIT_REASON, git
        elif version is None:
            # Cargo refuses such a manifest ("dependency (x) specified without providing a
            # local path, Git repository, version, or workspace dependency to use", once a
            # warning, now an error): there is nothing to look up.
            message = (
                f"dependency `{_dotted(keys)}` has no `version`, `path`, `git` or"
                " `workspace`; Cargo refuses it; not looked up"
            )
            self.problem(line, message)
            return
        declared = version.strip() if isinstance(version, str) else location
        constraint = version.strip() if isinstance(version, str) else None
        real = package if isinstance(package, str) and package else name
        # ``registry = "NAME"``: the crate comes from that registry alone; the scan finds its
        # index in the checkout's .cargo/config.toml (``cargo_registries``).
        sole = registry.strip() if isinstance(registry, str) and skip_reason is None else None
        self.add(line, name, real, dep_type, declared, constraint, skip_reason, sole or None)

    def add(
        self,
        line: int | None,
        name: str,
        package_name: str,
        dep_type: str,
        declared: str | None,
        constraint: str | None,
        skip_reason: str | None = None,
        registry: str | None = None,
    ) -> None:
        self.dependencies.append(
            Dependency(
                manager=ID,
                file=self.path,
                line=line,
                name=name,
                package_name=package_name,
                datasource=DATASOURCE,
                versioning=VERSIONING,
                dep_type=dep_type,
                declared=declared,
                constraint=constraint,
                skip_reason=skip_reason,
                sole_index=registry,
            )
        )

    def inherit(self, name: str, line: int | None) -> None:
        """Add the row of the ``[workspace.dependencies]`` entry ``name`` (or report why not).

        The row is the root's declaration itself (its file, line and ``dep_type``
        ``workspace.dependencies``), equal to the one the root's own extraction gives: one
        declaration is one row, however many members inherit it (the scan lists them on it).
        """
        workspace = self.workspace()
        prefix = f"cannot resolve `{name}.workspace = true`"
        if workspace.error is not None or workspace.file is None or workspace.locator is None:
            self.problem(line, f"{prefix}: {workspace.error}")
            return
        entry = workspace.dependencies.get(name)
        if entry is None:
            self.problem(line, f"{prefix}: not in [workspace.dependencies] of {workspace.file}")
            return
        # The root's problems with its own entry are the root's to report, once.
        root = _Collector(workspace.file, workspace.locator, workspace.data, self.read)
        root.entry(
            ("workspace", "dependencies", name),
            name,
            entry,
            WORKSPACE_DEP_TYPE,
            inherit=False,
        )
        if not root.dependencies:
            message = f"{prefix}: [workspace.dependencies] entry in {workspace.file} is not valid"
            self.problem(line, message)
        self.dependencies.extend(root.dependencies)

    def workspace(self) -> _Workspace:
        """Find the workspace root once: this file, ``package.workspace`` or an ancestor."""
        if self._workspace is None:
            self._workspace = self._find_workspace()
        return self._workspace

    def _find_workspace(self) -> _Workspace:
        own = self.data.get("workspace")
        if isinstance(own, dict):
            return _dependencies_of(self.path, own, self.locator, self.data)
        directory = posixpath.dirname(self.path)
        package = self.data.get("package")
        explicit = package.get("workspace") if isinstance(package, dict) else None
        if isinstance(explicit, str):
            root = posixpath.normpath(posixpath.join(directory, explicit, MANIFEST))
            candidates = [] if root.startswith("../") else [root]
        else:
            candidates = []
            while directory:
                directory = posixpath.dirname(directory)
                candidates.append(posixpath.join(directory, MANIFEST) if directory else MANIFEST)
        for candidate in candidates:
            try:
                text = self.read(candidate)
            except ManifestError:
                continue
            data, _problem = parse_toml(candidate, text)
            if data is None:
                return _Workspace(None, {}, error=f"{candidate} is not valid TOML")
            workspace = data.get("workspace")
            if isinstance(workspace, dict):
                locator = TomlLocator(strip_bom(text))
                return _dependencies_of(candidate, workspace, locator, data)
        return _Workspace(None, {}, error=f"no workspace root Cargo.toml found for {self.path}")


def _dependencies_of(
    file: str, workspace: dict[str, object], locator: TomlLocator, data: dict[str, object]
) -> _Workspace:
    dependencies = workspace.get("dependencies", {})
    if not isinstance(dependencies, dict):
        message = f"[workspace.dependencies] of {file} is not a table"
        return _Workspace(file, {}, locator, data, message)
    return _Workspace(file, dependencies, locator, data)
