"""The ``package.json`` manager: dependency sections, aliases, catalogs, engines and overrides."""

from __future__ import annotations

import json
import posixpath
import re
from collections.abc import Callable
from urllib.parse import unquote

import msgspec

from patchula.errors import ManifestError
from patchula.manager import paths
from patchula.manager.base import (
    JsonKeys,
    ReadFile,
    YamlNode,
    json_type,
    load_yaml,
    parse_json_object,
)
from patchula.models import Dependency, ExtractResult, ManifestProblem

ID = "package_json"
DATASOURCE = "npm"
matches = paths.package_json  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "npm"

SECTIONS = ("dependencies", "devDependencies", "optionalDependencies", "peerDependencies")

# Spec prefixes that name something other than a registry version
# (https://docs.npmjs.com/cli/v11/configuring-npm/package-json#dependencies; yarn adds
# portal: and patch:, pnpm and yarn add workspace: and link:).
_PROTOCOL_SKIPS = (
    ("file:", "local file dependency"),
    ("link:", "linked local package"),
    ("workspace:", "workspace protocol"),
    ("portal:", "portal protocol"),
    ("git+", "git dependency"),
    ("git://", "git dependency"),
    ("git@", "git dependency"),
    ("github:", "git dependency"),
    ("gitlab:", "git dependency"),
    ("bitbucket:", "git dependency"),
    ("gist:", "git dependency"),
    ("http://", "URL tarball dependency"),
    ("https://", "URL tarball dependency"),
)
_LOCAL_PATH_PREFIXES = ("./", "../", "/", "~/", ".\\", "..\\")
_TARBALL_SUFFIXES = (".tgz", ".tar.gz", ".tar")
_GITHUB_SHORTHAND = re.compile(r"[A-Za-z0-9][\w.-]*/[\w.-]+(?:#.*)?")
_ALIAS = re.compile(r"npm:((?:@[^/@\s]+/)?[^@\s]+)(?:@(.*))?", re.DOTALL)
# A semver range as node-semver's `validRange` reads it: comparator sets of (partial) versions
# with ^ ~ < > = operators, hyphen ranges and `||`. Yarn 2+ and pnpm read `npm:<range>` as that
# range of the dependency's own name (yarn's NpmSemverResolver); a package name never matches
# (a name's first part cannot be followed by anything but `-prerelease`). `npm:x` stays the
# package `x` (npm's reading): a range here needs a digit or a `*`.
_PART = r"(?:0|[1-9]\d*|[xX*])"
_PARTIAL = rf"v?{_PART}(?:\.{_PART}){{0,2}}(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?"
_COMPARATOR = rf"(?:[\^~]|[<>]=?|=)?\s*{_PARTIAL}"
_SEMVER_RANGE = re.compile(rf"\s*{_COMPARATOR}(?:\s*(?:\|\||-|\s)\s*{_COMPARATOR})*\s*", re.ASCII)


_DROPPED = "ignored, as npm does"


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:
    """Extract the dependencies of one ``package.json`` (npm docs, "package.json").

    Reads ``dependencies``, ``devDependencies``, ``optionalDependencies`` and
    ``peerDependencies`` (``dep_type`` is the section name), one row per section entry, and
    ``name`` into ``project_name``. ``npm:`` aliases look up their target; ``file:``,
    ``link:``, ``workspace:``, git, GitHub shorthand and URL specs are skipped with a reason;
    dist-tags such as ``latest`` are kept with the tag as constraint; ``""`` and ``"*"`` become
    ``"*"``; a ``patch:`` spec is its base package and range (yarn's patch protocol).
    ``catalog:`` and ``catalog:<name>`` take their range from the catalogs of the nearest
    ``pnpm-workspace.yaml`` at or above the manifest (pnpm docs, "Catalogs"), or of bun's root
    ``package.json`` (read through ``read``), the row's ``note`` naming it. Renovate's further
    dependency types have rows of their own (``EXTRA_TYPES``): ``packageManager``, ``engines``,
    ``volta``, ``overrides``, ``resolutions``, ``pnpm.overrides`` (and pnpm 10's ``overrides``
    of a ``pnpm-workspace.yaml`` beside the manifest: rows of that file, the same type).
    ``workspaces`` (a list, or
    yarn's ``{"packages": […]}``) goes to ``ExtractResult.workspaces``. Bad JSON and wrong
    types are problems, never exceptions; a section that is not an object and an entry whose
    value is not a string are dropped with a warning, as npm does.
    """
    data, problem = parse_json_object(path, text)
    if problem is not None:
        return ExtractResult(problems=(problem,))
    keys_of = JsonKeys(text)

    def line(*keys: str) -> int | None:
        return keys_of.line(keys)

    problems: list[ManifestProblem] = []
    project_name = data.get("name")
    if project_name is not None and not isinstance(project_name, str):
        message = f"`name` must be a string, got {json_type(project_name)}"
        problems.append(ManifestProblem(path, line("name"), message))
        project_name = None
    catalogs = _Catalogs(path, read)
    dependencies: list[Dependency] = []
    for section in SECTIONS:
        entries = data.get(section)
        if entries is None:
            continue
        # npm warns and drops what is not a dependency (normalize-package-data's
        # nonObjectDependencies and nonStringDependency warnings) and installs the rest: a
        # warning here too, so the manifest does not count as unreadable.
        if not isinstance(entries, dict):
            message = f"`{section}` must be an object, got {json_type(entries)}; {_DROPPED}"
            problems.append(ManifestProblem(path, line(section), message, "warning"))
            continue
        for name, value in entries.items():
            where = line(section, name)
            if isinstance(value, str):
                dependencies.append(_dependency(path, where, section, name, value, catalogs))
            else:
                message = (
                    f"version of {name!r} in `{section}` must be a string, got"
                    f" {json_type(value)}; {_DROPPED}"
                )
                problems.append(ManifestProblem(path, where, message, "warning"))
    extra = _Extra(path, line, dependencies, problems)
    extra.read(data)
    _workspace_overrides(posixpath.dirname(path), read, dependencies, problems)
    return ExtractResult(
        dependencies=tuple(dependencies),
        problems=tuple(problems),
        project_name=project_name or None,
        project_version=version if isinstance(version := data.get("version"), str) else None,
        workspaces=_workspaces(data.get("workspaces")),
    )


def _workspaces(value: object) -> tuple[str, ...]:
    if isinstance(value, dict):  # yarn's {"packages": [...], "nohoist": [...]}
        value = value.get("packages")
    if not isinstance(value, list):
        return ()
    return tuple(glob for glob in value if isinstance(glob, str))


# --- pnpm catalogs ------------------------------------------------------------------------------

_WORKSPACE_FILE = "pnpm-workspace.yaml"
# What the scan's reader says of a file that does not exist (``discovery.read_regular``).
_NOT_FOUND = "file not found"


class _Catalogs(msgspec.Struct):
    """The catalogs of the nearest workspace root above one manifest, read on demand.

    The root is the nearest directory at or above the manifest with a ``pnpm-workspace.yaml``
    (pnpm) or a ``package.json`` holding catalogs (bun); its catalogs are read once.
    """

    path: str
    read: ReadFile
    _loaded: bool = False
    file: str | None = None
    problem: str | None = None
    named: dict[str, dict[str, str]] = msgspec.field(default_factory=dict)

    def range_of(self, name: str, spec: str) -> tuple[str | None, str]:
        """``(range, note)`` of a ``catalog:`` spec, or ``(None, why not)``."""
        self._load()
        label = spec.removeprefix("catalog:").strip() or "default"
        shown = "the default catalog" if label == "default" else f"catalog {label!r}"
        spec = spec.rstrip(":")  # "catalog:: vue …" reads as a typo: "catalog: vue …"
        if self.file is None:
            where = f"no {_WORKSPACE_FILE} (or package.json with catalogs) at or above"
            return None, f"{spec}: {where} {self.path}"
        if self.problem is not None:
            return None, f"{spec}: {self.file} not read ({self.problem})"
        found = self.named.get(label, {}).get(name)
        if found is None:
            return None, f"{spec}: {name} is not in {shown} of {self.file}"
        return found, f"range {found} from {shown} in {self.file}"

    def _load(self) -> None:
        if self._loaded:
            return
        self._loaded = True
        directory = posixpath.dirname(self.path)
        while True:
            candidate = posixpath.join(directory, _WORKSPACE_FILE)
            try:
                text = self.read(candidate)
            except ManifestError as exc:
                if exc.message != _NOT_FOUND:  # there, but unreadable: pnpm would fail too
                    self.file, self.problem = candidate, exc.message
                    return
            else:
                self.file = candidate
                self._parse(candidate, text)
                return
            if self._bun_catalogs(posixpath.join(directory, "package.json")):
                return
            if not directory:
                return
            directory = posixpath.dirname(directory)

    def _bun_catalogs(self, manifest: str) -> bool:
        """Whether ``manifest`` holds bun's catalogs (read into ``named``; bun docs, "Catalogs").

        bun keeps them in the root ``package.json``: ``workspaces.catalog`` and
        ``workspaces.catalogs``, or the same keys at its top level.
        """
        try:
            data = json.loads(self.read(manifest))
        except (ManifestError, ValueError, RecursionError):
            return False
        if not isinstance(data, dict):
            return False
        workspaces = data.get("workspaces")
        places = [workspaces, data] if isinstance(workspaces, dict) else [data]
        found = False
        for place in places:
            default, catalogs = place.get("catalog"), place.get("catalogs")
            if isinstance(default, dict):
                self.named.setdefault("default", {}).update(_strings(default))
                found = True
            if isinstance(catalogs, dict):
                for label, catalog in catalogs.items():
                    if isinstance(catalog, dict):
                        self.named.setdefault(label, {}).update(_strings(catalog))
                        found = True
        if found:
            self.file = manifest
        return found

    def _parse(self, file: str, text: str) -> None:
        documents, problem = load_yaml(file, text)
        if problem is not None:
            self.problem = problem.message
            return
        root = documents[0] if documents else None
        if root is None or root.kind != "mapping":
            return
        default = root.get("catalog")
        if default is not None:
            self.named["default"] = _catalog(default)
        catalogs = root.get("catalogs")
        if catalogs is not None and catalogs.kind == "mapping":
            for label, catalog in catalogs.named():
                self.named.setdefault(label, {}).update(_catalog(catalog))


def _workspace_overrides(
    directory: str,
    read: ReadFile,
    dependencies: list[Dependency],
    problems: list[ManifestProblem],
) -> None:
    """The ``overrides`` (pnpm 10) of the ``pnpm-workspace.yaml`` in ``directory``, as its rows.

    pnpm reads its settings from the workspace root's ``pnpm-workspace.yaml`` (pnpm docs,
    "Settings (pnpm-workspace.yaml)": ``overrides`` as ``pnpm.overrides`` of ``package.json``
    had them), so the ``package.json`` beside it gives its rows, typed ``pnpm.overrides``.
    A file that is absent or unreadable gives nothing (a ``catalog:`` row says why it is not
    read); one that is not YAML is a warning.
    """
    file = posixpath.join(directory, _WORKSPACE_FILE)
    try:
        text = read(file)
    except ManifestError:
        return
    if "overrides" not in text:  # most workspace files: no YAML to build
        return
    documents, problem = load_yaml(file, text)
    if problem is not None:
        message = f"{problem.message}; its `overrides` are not read"
        problems.append(ManifestProblem(file, problem.line, message, "warning"))
        return
    root = documents[0] if documents else None
    node = root.get("overrides") if root is not None else None
    if node is None:
        return
    lines = {key: value.line for key, value in node.named()} if node.kind == "mapping" else {}
    extra = _Extra(file, lambda *keys: lines.get(keys[-1], node.line), dependencies, problems)
    if node.kind != "mapping":
        extra.warn(("overrides",), f"`overrides` must be a mapping, got a {node.kind}")
        return
    for key, value in node.named():
        spec = value.text()
        if spec is None:
            shown = "null" if value.kind == "scalar" else f"a {value.kind}"
            extra.warn((key,), f"override {key!r} must be a string, got {shown}")
            continue
        name = _selector_name(key.rsplit(">", 1)[-1])
        extra.override((key,), "pnpm.overrides", name, spec)


def _strings(entries: dict[str, object]) -> dict[str, str]:
    return {name: value for name, value in entries.items() if isinstance(value, str)}


def _catalog(node: YamlNode) -> dict[str, str]:
    if node.kind != "mapping":
        return {}
    found: dict[str, str] = {}
    for name, value in node.named():
        text = value.text()
        if text is not None:
            found[name] = text
    return found


# --- packageManager, engines, volta, overrides, resolutions, pnpm.overrides ----------------------

# Node.js itself is no npm package: ``engines.node`` / ``volta.node`` are looked up on Node's
# release index (the ``node`` datasource, the one mise's ``core:node`` reads), compared with
# npm's range rules (``engines`` is a semver range: docs.npmjs.com, package.json "engines").
NODE_DATASOURCE = "node"
# The package managers that are npm packages (Corepack's list, plus bun, published on npm).
_PACKAGE_MANAGERS = frozenset({"npm", "pnpm", "yarn", "bun"})
_ENGINE_TOOLS = frozenset({"npm", "pnpm", "yarn"})
EXTRA_TYPES = ("packageManager", "engines", "volta", "overrides", "resolutions", "pnpm.overrides")
# Override objects nest one level per dependency path; deeper than this is no real manifest.
_MAX_OVERRIDE_DEPTH = 32
_FIRST_NUMBER = re.compile(r"\d+")


def _tool_package(tool: str, version: str) -> str:
    """The npm package of a package manager at ``version``: yarn 2+ is ``@yarnpkg/cli-dist``.

    The ``yarn`` package stopped at 1.x; yarn berry is published as ``@yarnpkg/cli-dist``, the
    bundle Corepack downloads for ``packageManager: yarn@X`` (``nodejs/corepack``
    ``config.json``: ``"package": "@yarnpkg/cli-dist"``), and as ``@yarnpkg/cli``, which lacks
    several releases (3.0.1, 3.6.0, 4.1.0, …): the one Corepack installs is what a declared
    version must be found in. Renovate looks yarn berry up for a ``packageManager`` or
    ``engines`` yarn when the lockfile is not yarn 1's
    (``lib/modules/manager/npm/extract/post/locked-versions.ts``); here the declared version
    decides (its first number is 2 or more), which needs no lockfile.
    """
    if tool != "yarn":
        return tool
    number = _FIRST_NUMBER.search(version)
    berry = number is not None and int(number.group()[:4]) >= 2  # noqa: PLR2004 - yarn 2
    return "@yarnpkg/cli-dist" if berry else "yarn"


class _Extra(msgspec.Struct):
    """Reads the dependency types beyond the four sections into rows and problems."""

    path: str
    line: Callable[..., int | None]
    dependencies: list[Dependency]
    problems: list[ManifestProblem]

    def where(self, *keys: str) -> int | None:
        return self.line(*keys)

    def row(
        self,
        keys: tuple[str, ...],
        dep_type: str,
        name: str,
        declared: str,
        *,
        package_name: str | None = None,
        constraint: str | None = None,
        skip_reason: str | None = None,
        datasource: str = DATASOURCE,
    ) -> None:
        self.dependencies.append(
            Dependency(
                manager=ID,
                file=self.path,
                line=self.where(*keys),
                name=name,
                package_name=package_name or name,
                datasource=datasource,
                versioning=VERSIONING,
                dep_type=dep_type,
                declared=declared,
                constraint=constraint,
                skip_reason=skip_reason,
            )
        )

    def warn(self, keys: tuple[str, ...], message: str) -> None:
        self.problems.append(ManifestProblem(self.path, self.where(*keys), message, "warning"))

    def read(self, data: dict[str, object]) -> None:
        self.package_manager(data.get("packageManager"))
        for dep_type in ("engines", "volta"):
            self.tools(dep_type, data.get(dep_type))
        self.overrides(("overrides",), "overrides", data.get("overrides"), 0)
        self.resolutions(data.get("resolutions"))
        pnpm = data.get("pnpm")
        if isinstance(pnpm, dict):
            self.pnpm_overrides(pnpm.get("overrides"))

    def package_manager(self, value: object) -> None:
        """``"pnpm@9.1.0+sha512.…"`` (Corepack): a row for the package manager itself."""
        if value is None:
            return
        keys = ("packageManager",)
        if not isinstance(value, str):
            self.warn(keys, f"`packageManager` must be a string, got {json_type(value)}")
            return
        tool, at, version = value.strip().partition("@")
        version = version.split("+", 1)[0].strip()  # Corepack's +<algorithm>.<hash>
        if not at or not tool or not version:
            self.warn(keys, f"`packageManager` {value!r} is not `<name>@<version>`")
            return
        if tool not in _PACKAGE_MANAGERS:
            self.row(keys, "packageManager", tool, value, skip_reason="unknown package manager")
            return
        if "://" in version:
            self.row(keys, "packageManager", tool, value, skip_reason="package manager from a URL")
            return
        package = _tool_package(tool, version)
        self.row(keys, "packageManager", tool, value, package_name=package, constraint=version)

    def tools(self, dep_type: str, value: object) -> None:
        """``engines`` ranges or ``volta`` pins of node, npm, pnpm and yarn."""
        if value is None:
            return
        if not isinstance(value, dict):
            self.warn((dep_type,), f"`{dep_type}` must be an object, got {json_type(value)}")
            return
        for tool, spec in value.items():
            keys = (dep_type, tool)
            if not isinstance(spec, str):
                if dep_type == "engines" or tool in {"node", *_ENGINE_TOOLS}:
                    message = f"`{dep_type}.{tool}` must be a string, got {json_type(spec)}"
                    self.warn(keys, message)
                continue
            if tool == "node":
                constraint = spec.strip() or "*"
                self.row(
                    keys, dep_type, tool, spec, constraint=constraint, datasource=NODE_DATASOURCE
                )
            elif tool in _ENGINE_TOOLS:
                constraint = spec.strip() or "*"
                package = _tool_package(tool, constraint)
                self.row(keys, dep_type, tool, spec, package_name=package, constraint=constraint)
            elif dep_type == "engines":
                self.row(
                    keys, dep_type, tool, spec, skip_reason=f"engine {tool!r}: not an npm package"
                )

    def overrides(self, keys: tuple[str, ...], dep_type: str, value: object, depth: int) -> None:
        """The npm ``overrides``: ``name`` or ``name@range`` keys, nested objects with ``"."``."""
        if value is None:
            return
        if not isinstance(value, dict):
            self.warn(keys, f"`{keys[-1]}` must be an object or a string, got {json_type(value)}")
            return
        if depth >= _MAX_OVERRIDE_DEPTH:
            self.warn(keys, f"`overrides` nested more than {_MAX_OVERRIDE_DEPTH} levels; ignored")
            return
        for key, spec in value.items():
            if key == ".":
                continue
            name = _selector_name(key)
            if isinstance(spec, dict):
                own = spec.get(".")
                if isinstance(own, str):
                    self.override((*keys, key, "."), dep_type, name, own)
                self.overrides((*keys, key), dep_type, spec, depth + 1)
            elif isinstance(spec, str):
                self.override((*keys, key), dep_type, name, spec)
            else:
                self.warn((*keys, key), f"override {key!r} must be a string, got {json_type(spec)}")

    def resolutions(self, value: object) -> None:
        """The yarn ``resolutions``: ``a``, ``**/a``, ``parent/a`` or descriptor keys."""
        if value is None:
            return
        if not isinstance(value, dict):
            self.warn(("resolutions",), f"`resolutions` must be an object, got {json_type(value)}")
            return
        for key, spec in value.items():
            keys = ("resolutions", key)
            if isinstance(spec, str):
                self.override(keys, "resolutions", _selector_name(_last_package(key)), spec)
            else:
                self.warn(keys, f"resolution {key!r} must be a string, got {json_type(spec)}")

    def pnpm_overrides(self, value: object) -> None:
        """The pnpm ``pnpm.overrides``: ``a``, ``a@<2`` or ``parent>a`` keys."""
        if value is None:
            return
        keys = ("pnpm", "overrides")
        if not isinstance(value, dict):
            self.warn(keys, f"`pnpm.overrides` must be an object, got {json_type(value)}")
            return
        for key, spec in value.items():
            if isinstance(spec, str):
                name = _selector_name(key.rsplit(">", 1)[-1])
                self.override((*keys, key), "pnpm.overrides", name, spec)
            else:
                self.warn((*keys, key), f"override {key!r} must be a string, got {json_type(spec)}")

    def override(self, keys: tuple[str, ...], dep_type: str, name: str, spec: str) -> None:
        value = spec.strip()
        if value.startswith("$"):  # npm: the version the root manifest declares for it
            reason = f"refers to the root's declaration of {value[1:] or name}"
            self.row(keys, dep_type, name, spec, skip_reason=reason)
            return
        if value == "-":  # pnpm: remove the dependency
            self.row(keys, dep_type, name, spec, skip_reason="removes the dependency")
            return
        package_name, constraint, skip_reason = classify(name, value)
        self.row(
            keys,
            dep_type,
            name,
            spec,
            package_name=package_name,
            constraint=constraint,
            skip_reason=skip_reason,
        )


def _selector_name(key: str) -> str:
    """The package name of an override key ``name`` or ``name@range`` (a scope kept)."""
    at = key.find("@", 1)
    return key[:at] if at > 0 else key


def _last_package(key: str) -> str:
    """The last package of a yarn resolution path (``**/a/@s/b`` is ``@s/b``)."""
    parts = key.split("/")
    if len(parts) >= 2 and parts[-2].startswith("@"):  # noqa: PLR2004 - scope and name
        return f"{parts[-2]}/{parts[-1]}"
    return parts[-1]


def _dependency(
    path: str, line: int | None, section: str, name: str, spec: str, catalogs: _Catalogs
) -> Dependency:
    note: str | None = None
    package_name: str = name
    constraint: str | None = None
    skip_reason: str | None
    if spec.strip().startswith("catalog:"):
        found, said = catalogs.range_of(name, spec.strip())
        if found is None:
            skip_reason = said
        else:
            package_name, constraint, skip_reason = classify(name, found)
            note = said
    else:
        package_name, constraint, skip_reason = classify(name, spec)
    return Dependency(
        manager=ID,
        file=path,
        line=line,
        name=name,
        package_name=package_name,
        datasource=DATASOURCE,
        versioning=VERSIONING,
        dep_type=section,
        declared=spec,
        constraint=constraint,
        skip_reason=skip_reason,
        note=note,
    )


def classify(name: str, spec: str) -> tuple[str, str | None, str | None]:
    """Return ``(package_name, constraint, skip_reason)`` for the npm spec ``spec`` of ``name``.

    Follows npm-package-arg's reading of a dependency value: ``npm:target@range`` aliases
    (``npm:target`` alone: constraint ``None``), ``npm:<semver range>`` as that range of
    ``name`` itself (Yarn 2+ and pnpm's npm protocol), protocol and path specs (skipped), GitHub
    ``user/repo`` shorthand (skipped), ``""``/``"*"`` (constraint ``"*"``), and semver ranges
    or dist-tags (constraint = the value as written, trimmed).
    """
    value = spec.strip()
    if value.startswith("patch:"):
        # yarn's patch protocol: `patch:<base descriptor>#<patch file>`, the descriptor
        # URL-encoded (`patch:a@npm%3A^1.2#./a.patch`): the base package and its range.
        base = unquote(value[len("patch:") :].split("#", 1)[0])
        at = base.find("@", 1)
        if at <= 0:
            return name, None, "patched dependency"
        return classify(base[:at], base[at + 1 :])
    if _is_npm_protocol_range(value):
        # `npm:^1.2.3`: the npm protocol with a range, for the dependency's own name.
        return name, value[4:].strip(), None
    if value.startswith("npm:"):
        alias = _ALIAS.fullmatch(value)
        if alias is None:
            return name, None, "invalid npm: alias"
        target, target_range = alias.group(1), alias.group(2)
        if target_range is None or not target_range.strip():
            return target, None, None
        _, constraint, skip_reason = classify(target, target_range)
        return target, constraint, skip_reason
    skip_reason = _skip_reason(value)
    if skip_reason is not None:
        return name, None, skip_reason
    # A semver range, or a dist-tag (`latest`, `next`) that the lookup resolves: either way the
    # value as written is the constraint.
    return name, value or "*", None


def _is_npm_protocol_range(value: str) -> bool:
    rest = value.removeprefix("npm:")
    if rest == value or _SEMVER_RANGE.fullmatch(rest) is None:
        return False
    return "*" in rest or any(char.isdigit() for char in rest)


def _skip_reason(value: str) -> str | None:
    lowered = value.lower()
    for prefix, reason in _PROTOCOL_SKIPS:
        if lowered.startswith(prefix):
            return reason
    if value.startswith(_LOCAL_PATH_PREFIXES) or lowered.endswith(_TARBALL_SUFFIXES):
        return "local path"
    if _GITHUB_SHORTHAND.fullmatch(value):
        return "git dependency (GitHub shorthand)"
    return None
