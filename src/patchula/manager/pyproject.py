"""The ``pyproject.toml`` manager: PEP 621 and PEP 735 requirements and Poetry's tables."""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec
from msgspec.structs import replace
from packaging.requirements import InvalidRequirement
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from patchula.manager import paths
from patchula.manager.base import (
    ReadFile,
    TomlLocator,
    index_not_used,
    is_pypi_url,
    parse_toml,
    pep508_dependency,
    strip_bom,
    url_skip_reason,
)
from patchula.models import Dependency, ExtractResult, ManifestProblem
from patchula.versioning import pep440

ID = "pyproject"
DATASOURCE = "pypi"
matches = paths.pyproject  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "pep440"

# A requirement naming the project that declares it (``x[lint]`` in project ``x``): pip and uv
# install it from the project itself (pypa/pip#14157, astral-sh/uv#9705), never from PyPI.
SELF_REFERENCE_REASON = "the project itself (self-referential extra)"

# PEP 508 names (https://packaging.python.org/en/latest/specifications/name-normalization/).
_PROJECT_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
_OPERATOR_SPACE = re.compile(r"(===|==|!=|~=|>=|<=|>|<|\^|~|=)\s+")
_AND_SEPARATOR = re.compile(r"[\s,]+")
# poetry-core's OR split (constraints/version/parser.py ``_parse_constraint``): `||` or `|`.
_OR_SEPARATOR = re.compile(r"\s*\|\|?\s*")
_RELEASE = re.compile(r"(\d+(?:\.\d+)*)(.*)", re.DOTALL)
_WILDCARD = re.compile(r"(?:==)?(\d+(?:\.\d+)*)\.[*xX]")
_PEP440_OPERATORS = ("===", "==", "!=", "~=", ">=", "<=", ">", "<")
_POETRY_SOURCES = (
    ("git", "VCS requirement"),
    ("path", "local path"),
    ("url", "direct URL reference"),
)

# The dependency types of the other tools' tables (see ``extract``).
BUILD_SYSTEM = "build-system"
UV_CONSTRAINT = "uv-constraint"
UV_OVERRIDE = "uv-override"
UV_BUILD_CONSTRAINT = "uv-build-constraint"
PDM_OVERRIDE = "pdm-override"
PDM_DEV_KEYS = ("tool", "pdm", "dev-dependencies")
PDM_OVERRIDE_KEYS = ("tool", "pdm", "resolution", "overrides")
# The rows uv resolves ([tool.uv.sources] and `prerelease` apply to them), and the rows a
# Poetry entry's `source` binds: Poetry's own tables and the [project] rows it enriches.
_UV_TYPES = (
    "project",
    "optional:",
    "group:",
    "uv-dev",
    UV_CONSTRAINT,
    UV_OVERRIDE,
    UV_BUILD_CONSTRAINT,
)
_POETRY_BOUND = ("project", "optional:", "poetry")
# The reason of a skipped editable requirement (pip's and PDM's `-e`).
EDITABLE_REASON = "editable requirement"
HATCH_CONTEXT_REASON = (
    "uses Hatch context formatting ({...}); its value is known only to Hatch at run time"
)
_EDITABLE = re.compile(r"(?:-e|--editable)(?:\s+|=|(?=[./]))")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://|file:", re.ASCII)
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
# Hatch's context formatting fields (https://hatch.pypa.io/latest/config/context/): `{root:uri}`,
# `{env:NAME:default}`, `{home}` …; a `{` of PEP 508 is none (it has no braces).
_HATCH_FIELD = re.compile(r"\{([a-z_]+)(?::[^{}]*)?\}")
_LEADING_NAME = re.compile(
    r"\s*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)(?=\s*(?:[\[(@;<>=!~]|$))"
)


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the dependencies declared in a ``pyproject.toml``.

    Reads PEP 621 ``[project] dependencies`` (dep_type ``project``) and
    ``[project.optional-dependencies]`` (``optional:<extra>``), PEP 735
    ``[dependency-groups]`` (``group:<name>``; ``{include-group = …}`` entries are checked,
    not copied: unknown groups and cycles are problems), uv's legacy
    ``[tool.uv] dev-dependencies`` (``uv-dev``), uv's ``constraint-dependencies``
    (``uv-constraint``) and ``override-dependencies`` (``uv-override``; see
    ``_uv_resolution_rows``), and Poetry's
    ``[tool.poetry.dependencies]`` (``poetry``, without ``python``),
    ``[tool.poetry.dev-dependencies]`` (``poetry-dev``) and
    ``[tool.poetry.group.<g>.dependencies]`` (``poetry-group:<g>``), whose constraints are
    converted to PEP 440 by ``poetry_constraint``; a ``[tool.poetry.dependencies]`` entry
    named in ``[project]`` only enriches that row (``_enrich_project``). Then the tables of
    other tools, each read as Renovate's pep621 manager reads it: PEP 518
    ``[build-system] requires`` (``build-system``; Renovate's depType
    ``build-system.requires``), PDM's ``[tool.pdm.dev-dependencies]`` (``pdm-dev:<group>``;
    ``-e``, path and URL entries are skipped rows, ``_pdm_entry``), PDM's
    ``[tool.pdm.resolution.overrides]`` (``pdm-override``, ``pdm_overrides``), uv's
    ``build-constraint-dependencies`` (``uv-build-constraint``) and Hatch's
    ``[tool.hatch.envs.<env>]`` ``dependencies`` and ``extra-dependencies``
    (``hatch-env:<env>``; Renovate's depType ``tool.hatch.envs.<env>``). A requirement naming
    the project itself is skipped (``_skip_itself``). ``project_name`` is ``[project] name`` or
    ``[tool.poetry] name``, PEP 503 normalised. An empty file gives an empty result.
    """
    if not text.strip():
        return ExtractResult()
    data, problem = parse_toml(path, text)
    if data is None:
        return ExtractResult(problems=() if problem is None else (problem,))
    collector = _Collector(path, TomlLocator(strip_bom(text)))
    project = collector.table(data, ("project",))
    collector.requirements(project.get("dependencies"), ("project", "dependencies"), "project")
    extras = collector.table(project, ("project", "optional-dependencies"))
    for extra, requirements in extras.items():
        keys = ("project", "optional-dependencies", extra)
        collector.requirements(requirements, keys, f"optional:{extra}")
    collector.dependency_groups(collector.table(data, ("dependency-groups",)))
    tool = collector.table(data, ("tool",))
    uv = collector.table(tool, ("tool", "uv"))
    # Deprecated by PEP 735 groups, but uv still installs and locks it as the `dev` group
    # (https://docs.astral.sh/uv/concepts/projects/dependencies/#legacy-dev-dependencies).
    keys = ("tool", "uv", "dev-dependencies")
    collector.requirements(uv.get("dev-dependencies"), keys, "uv-dev")
    _uv_resolution_rows(collector, uv)
    uv_sources = collector.table(uv, ("tool", "uv", "sources"))
    sources = _uv_source_skips(uv_sources)
    if sources:
        collector.dependencies = [
            replace(d, skip_reason=sources[d.package_name])
            if d.skip_reason is None and d.package_name in sources
            else d
            for d in collector.dependencies
        ]
    if uv.get("prerelease") == "allow":
        # uv's `prerelease = "allow"` admits prereleases for every package it resolves
        # (https://docs.astral.sh/uv/reference/settings/#prerelease); Poetry tables are not uv's.
        collector.dependencies = [replace(d, prereleases=True) for d in collector.dependencies]
    poetry = collector.table(tool, ("tool", "poetry"))
    collector.poetry(poetry)
    # Other tools' tables last: uv's sources and prerelease setting are not theirs.
    build_system = collector.table(data, ("build-system",))
    collector.requirements(build_system.get("requires"), ("build-system", "requires"), BUILD_SYSTEM)
    pdm = collector.table(tool, ("tool", "pdm"))
    collector.pdm_dev(collector.table(pdm, PDM_DEV_KEYS))
    resolution = collector.table(pdm, PDM_OVERRIDE_KEYS[:3])
    collector.pdm_overrides(collector.table(resolution, PDM_OVERRIDE_KEYS))
    collector.hatch_envs(collector.table(tool, ("tool", "hatch")))
    dependencies = _skip_itself(_enrich_project(collector.dependencies), project, poetry)
    dependencies = _with_requires_python(dependencies, collector, project, poetry)
    return ExtractResult(
        dependencies=collector.bind_indexes(dependencies, uv, uv_sources, poetry),
        problems=tuple(collector.problems),
        project_name=_project_name(project, poetry),
    )


def _uv_resolution_rows(collector: _Collector, uv: dict[str, object]) -> None:
    """Add uv's ``constraint-dependencies`` and ``override-dependencies`` as rows of their own.

    uv applies them when it resolves the project (https://docs.astral.sh/uv/reference/settings/#constraint-dependencies):
    a constraint narrows the versions any requirement of that package may take, an override
    replaces every requirement of that package ("absolute"), and neither installs a package
    on its own. They are rows (``uv-constraint``, ``uv-override``), not constraints applied to
    other rows as pip's ``-c`` files are (``scan._PipConstraints``), because:

    - they are mostly written for packages the project does not require directly (a
      transitive package held below a broken release, or raised past a CVE fix: pins that
      go stale, which tools such as ``uv-override-prune`` exist to audit), which no other
      row names: applied to rows, they would vanish from the report;
    - uv's own workflow locks them: ``uv.lock`` records them (``[manifest] constraints`` and
      ``overrides``) and the packages they resolve, so a direct requirement's current
      version already comes from the lock, as uv resolved it under them; and a constraint's
      or override's row takes the locked version of its package the same way.

    Each row's ``declared`` and ``constraint`` are the entry's own, so an entry pinned
    behind the newest release is reported outdated like any pin. Without a ``uv.lock``, a
    direct requirement's row is judged by its own range, not narrowed by them (the row of
    the constraint or override beside it says what uv would admit). uv reads these settings
    from the workspace root only; a member's are rows too (the manager sees one file).
    ``build-constraint-dependencies`` (``uv-build-constraint``, uv 0.6.2) constrain what uv
    installs into build environments (https://docs.astral.sh/uv/reference/settings/#build-constraint-dependencies):
    rows alike, never taking a locked version (``uv.lock`` does not lock build requirements).
    """
    for key, dep_type in (
        ("constraint-dependencies", UV_CONSTRAINT),
        ("override-dependencies", UV_OVERRIDE),
        ("build-constraint-dependencies", UV_BUILD_CONSTRAINT),
    ):
        collector.requirements(uv.get(key), ("tool", "uv", key), dep_type)


def _uv_reads(dep_type: str) -> bool:
    """Whether uv resolves the rows of ``dep_type`` (its sources and indexes apply)."""
    return any(
        dep_type.startswith(kind) if kind.endswith(":") else dep_type == kind for kind in _UV_TYPES
    )


def _looks_like_path(text: str) -> bool:
    """Whether a requirement is a local path rather than PEP 508 (pip's ``_looks_like_path``)."""
    head = text.split(";", 1)[0].strip()
    if "@" in head:
        return False
    return "/" in head or "\\" in head or head.startswith(".")


def _written_or_url(requirement: str) -> str | None:
    """The declared value of a requirement read without ``packaging``: its URL or specifier."""
    head, at, url = requirement.partition("@")
    if at:
        return url.split(";", 1)[0].strip() or None
    match = _LEADING_NAME.match(head)
    rest = head[match.end() :] if match is not None else head
    return rest.split(";", 1)[0].strip() or None


def _skip_itself(
    dependencies: tuple[Dependency, ...], project: dict[str, object], poetry: dict[str, object]
) -> tuple[Dependency, ...]:
    """Skip the rows naming the project itself (``[project]`` or ``[tool.poetry]`` name).

    A self-referential extra (``x[lint]`` in an optional dependency or a dependency group of
    project ``x``; names compared after PEP 503 normalisation) installs the project's own
    extras, from the project: pip resolves it to the project being installed
    (pypa/pip#14157, packaging.python.org#2086) and uv to the workspace project
    (astral-sh/uv#9705). A PyPI package of that name is another project.
    """
    names = {
        canonicalize_name(name)
        for name in (project.get("name"), poetry.get("name"))
        if isinstance(name, str) and _PROJECT_NAME.fullmatch(name)
    }
    if not names:
        return dependencies
    return tuple(
        replace(dep, skip_reason=SELF_REFERENCE_REASON)
        if dep.skip_reason is None and dep.package_name in names
        else dep
        for dep in dependencies
    )


def _enrich_project(dependencies: list[Dependency]) -> tuple[Dependency, ...]:
    """Fold ``[tool.poetry.dependencies]`` entries that enrich ``[project]`` rows into them.

    With both tables, Poetry builds from ``[project]`` and uses a ``tool.poetry`` entry of the
    same name "only to enrich project.dependencies for locking" (a source, markers, prerelease
    permission; optional dependencies alike:
    https://python-poetry.org/docs/dependency-specification/): one declaration, one row. The
    ``[project]`` row stays, taking the entry's markers (its ``python`` restriction too;
    ``and``-ed with the row's own), its git/path/URL skip reason when it has none of its own
    and its ``allow-prereleases``; a ``tool.poetry`` entry no ``[project]`` row names stays a
    row.
    """
    project: dict[str, list[int]] = {}
    for index, dep in enumerate(dependencies):
        if dep.dep_type == "project" or dep.dep_type.startswith("optional:"):
            project.setdefault(dep.package_name, []).append(index)
    rows = list(dependencies)
    enriching: set[int] = set()
    for index, dep in enumerate(dependencies):
        if dep.dep_type != "poetry" or dep.package_name not in project:
            continue
        enriching.add(index)
        for target in project[dep.package_name]:
            row = rows[target]
            rows[target] = replace(
                row,
                skip_reason=row.skip_reason or dep.skip_reason,
                markers=_and_markers(row.markers, dep.markers),
                prereleases=row.prereleases or dep.prereleases,
            )
    return tuple(row for index, row in enumerate(rows) if index not in enriching)


_UV_SOURCE_KINDS = (
    ("workspace", "uv workspace member"),
    ("git", "uv source: git repository"),
    ("path", "uv source: local path"),
    ("url", "uv source: direct URL"),
)


def _uv_source_skips(sources: dict[str, object]) -> dict[str, str]:
    """Map PEP 503 names to a skip reason for ``[tool.uv.sources]`` entries not on an index.

    A uv source replaces the registry for that package (https://docs.astral.sh/uv/concepts/projects/dependencies/#dependency-sources):
    ``workspace``, ``git``, ``path`` and ``url`` sources are not looked up; ``index`` sources
    are (on the configured PyPI base URL). A list of sources (per marker) skips when any does.
    """
    skips: dict[str, str] = {}
    for name, value in sources.items():
        entries = value if isinstance(value, list) else [value]
        for entry in entries:
            if not isinstance(entry, dict):
                continue
            reason = next((why for key, why in _UV_SOURCE_KINDS if entry.get(key)), None)
            if reason is not None:
                skips[canonicalize_name(name)] = reason
                break
    return skips


def _uv_index_pins(sources: dict[str, object]) -> dict[str, str]:
    """Map PEP 503 names to the index ``[tool.uv.sources]`` pins them to (the first, by marker)."""
    pins: dict[str, str] = {}
    for name, value in sources.items():
        entries = value if isinstance(value, list) else [value]
        for entry in entries:
            index = entry.get("index") if isinstance(entry, dict) else None
            if isinstance(index, str):
                pins[canonicalize_name(name)] = index
                break
    return pins


def _project_name(project: dict[str, object], poetry: dict[str, object]) -> str | None:
    for name in (project.get("name"), poetry.get("name")):
        if isinstance(name, str) and _PROJECT_NAME.fullmatch(name):
            return canonicalize_name(name)
    return None


class _Collector(msgspec.Struct):
    """Collects rows and problems for one pyproject, locating lines as it goes."""

    path: str
    locator: TomlLocator
    dependencies: list[Dependency] = msgspec.field(default_factory=list)
    problems: list[ManifestProblem] = msgspec.field(default_factory=list)
    # PEP 503 name -> the `source` a Poetry dependency table names (a source constraint).
    poetry_sources: dict[str, str] = msgspec.field(default_factory=dict)
    # The id of the manager whose rows these are (``hatch_toml`` reads Hatch's tables too).
    manager: str = ID

    def line(self, keys: tuple[str, ...]) -> int | None:
        return self.locator.line(self.locator.find(keys))

    def problem(self, line: int | None, message: str) -> None:
        self.problems.append(ManifestProblem(self.path, line, message))

    def table(self, parent: dict[str, object], keys: tuple[str, ...]) -> dict[str, object]:
        """Return ``parent[keys[-1]]`` when it is a table, ``{}`` (and a problem) otherwise."""
        value = parent.get(keys[-1])
        if value is None:
            return {}
        if not isinstance(value, dict):
            self.problem(self.line(keys), f"`{'.'.join(keys)}` must be a table")
            return {}
        return value

    def requirements(
        self,
        value: object,
        keys: tuple[str, ...],
        dep_type: str,
        read: Callable[[str, int | None, str], None] | None = None,
    ) -> None:
        """Add one row per PEP 508 string of the array ``value`` found at ``keys``.

        ``read(item, line, dep_type)`` reads each string instead of ``requirement`` (a tool's
        own forms: PDM's ``-e``, Hatch's context fields).
        """
        if value is None:
            return
        if not isinstance(value, list):
            self.problem(self.line(keys), f"`{'.'.join(keys)}` must be an array of strings")
            return
        cursor = self.locator.find(keys)
        for item in value:
            if not isinstance(item, str):
                self.problem(self.line(keys), f"`{'.'.join(keys)}` holds a non-string {item!r}")
                continue
            line, cursor = self._value_line(item, cursor)
            (read or self.requirement)(item, line, dep_type)

    def pdm_dev(self, groups: dict[str, object]) -> None:
        """Add the rows of PDM's ``[tool.pdm.dev-dependencies]``: group → PEP 508 strings.

        PDM's development dependency groups (https://pdm-project.org/en/latest/usage/dependency/#add-development-only-dependencies;
        PDM 2.20 reads PEP 735 ``[dependency-groups]`` first, this table still). An entry may
        also be ``-e <path or URL>`` (an editable install), a local path or a URL: PDM installs
        those from there, so each is a skipped row (``_pdm_entry``).
        """
        for group, requirements in groups.items():
            keys = (*PDM_DEV_KEYS, group)
            self.requirements(requirements, keys, f"pdm-dev:{group}", self._pdm_entry)

    def pdm_overrides(self, overrides: dict[str, object]) -> None:
        """Add the rows of PDM's ``[tool.pdm.resolution.overrides]``: name → version or URL.

        PDM installs the override instead of whatever any requirement asks for
        (https://pdm-project.org/en/latest/usage/config/#override-the-resolved-package-versions):
        ``asgiref = "3.2.10"`` (a bare version is exact, ``==3.2.10``), ``urllib3 =
        ">=1.26.2"`` (a specifier), ``"*"`` (any), or a URL (a skipped row). Each is a row
        (``pdm-override``) as uv's ``override-dependencies`` are (``_uv_resolution_rows``),
        taking its package's version from ``pdm.lock`` only. A value that is not a string or
        not a version is a problem at its line.
        """
        for name, value in overrides.items():
            line = self.line((*PDM_OVERRIDE_KEYS, name))
            where = f"`{'.'.join(PDM_OVERRIDE_KEYS)}.{name}`"
            if not _PROJECT_NAME.fullmatch(name):
                self.problem(line, f"invalid package name {name!r} in {where}")
                continue
            if not isinstance(value, str):
                self.problem(line, f"{where} must be a string, not {value!r}")
                continue
            text = value.strip()
            if _URL.match(text) or _looks_like_path(text):
                reason = url_skip_reason(text) if _URL.match(text) else "local path"
                self._skipped(name, True, line, PDM_OVERRIDE, text, reason)  # noqa: FBT003
                continue
            spec = f"=={text}" if text[:1].isdigit() else text
            if spec in {"", "*"}:
                constraint: str | None = None
            elif pep440.is_valid_constraint(spec) and pep440.UNION not in spec:
                constraint = str(SpecifierSet(spec)) or None
            else:
                self.problem(line, f"invalid version {value[:80]!r} in {where}")
                continue
            self._row(name, line, PDM_OVERRIDE, value, constraint)

    def _pdm_entry(self, item: str, line: int | None, dep_type: str) -> None:
        """Read one PDM requirement: an editable, a path or a URL is skipped with a reason."""
        text = item.strip()
        editable = _EDITABLE.match(text)
        location = text[editable.end() :].strip() if editable else text
        if editable is None and not _URL.match(text) and not _looks_like_path(text):
            self.requirement(item, line, dep_type)
            return
        if editable is not None:
            reason = EDITABLE_REASON
        elif _URL.match(location):
            reason = url_skip_reason(location)
        else:
            reason = "local path"
        egg = _EGG.search(location)
        name = egg.group(1) if egg is not None else location
        self._skipped(name, egg is not None, line, dep_type, location, reason)

    def hatch_envs(
        self, hatch: dict[str, object], envs_keys: tuple[str, ...] = ("tool", "hatch", "envs")
    ) -> None:
        """Add the rows of Hatch's environments: ``[tool.hatch.envs.<env>]`` dependencies.

        Each environment's ``dependencies`` and ``extra-dependencies`` (PEP 508 strings,
        https://hatch.pypa.io/latest/config/environment/overview/#dependencies) are rows of
        ``hatch-env:<env>``, as Renovate's pep621 manager reads them (depType
        ``tool.hatch.envs.<env>``). A string using Hatch's context formatting (``{root:uri}``,
        ``{env:VAR}``) is a skipped row: its value is known only to Hatch at run time. The
        environment's ``python`` (or matrix of Pythons) is the rows' marker
        (``_hatch_python_marker``): they are installed on those Pythons only. The
        same tables in a ``hatch.toml`` (Hatch's own file: ``[envs.<env>]``) are read by
        ``manager.hatch_toml``: ``hatch`` is the table holding ``envs`` (``[tool.hatch]``, or
        the whole ``hatch.toml``) and ``envs_keys`` where ``envs`` is in the file.
        """
        envs = self.table(hatch, envs_keys)
        for env, table in envs.items():
            env_keys = (*envs_keys, env)
            if not isinstance(table, dict):
                self.problem(self.line(env_keys), f"`{'.'.join(env_keys)}` must be a table")
                continue
            first = len(self.dependencies)
            for key in ("dependencies", "extra-dependencies"):
                keys = (*env_keys, key)
                self.requirements(table.get(key), keys, f"hatch-env:{env}", self._hatch_entry)
            marker = _hatch_python_marker(table)
            if marker is not None:
                self.dependencies[first:] = [
                    replace(dep, markers=_and_markers(marker, dep.markers))
                    for dep in self.dependencies[first:]
                ]

    def _hatch_entry(self, item: str, line: int | None, dep_type: str) -> None:
        """Read one Hatch requirement: one with a context field (``{…}``) is skipped."""
        field = _HATCH_FIELD.search(item)
        if field is None:
            self.requirement(item, line, dep_type)
            return
        head = _LEADING_NAME.match(item)
        name = head.group(1) if head is not None else item.strip()
        local = field.group(1).startswith("root")
        reason = "local path" if local else HATCH_CONTEXT_REASON
        self._skipped(name, head is not None, line, dep_type, _written_or_url(item), reason)

    def _skipped(
        self,
        name: str,
        named: bool,  # noqa: FBT001 - whether ``name`` is a project name (PEP 503-normalised)
        line: int | None,
        dep_type: str,
        declared: str | None,
        reason: str,
    ) -> None:
        """Add a skipped row (never looked up) of ``name``, declared as ``declared``."""
        self._row(name, line, dep_type, declared, None, named=named, skip_reason=reason)

    def _row(
        self,
        name: str,
        line: int | None,
        dep_type: str,
        declared: str | None,
        constraint: str | None,
        *,
        named: bool = True,
        skip_reason: str | None = None,
        markers: str | None = None,
        prereleases: bool = False,
    ) -> None:
        """Add the PyPI row of ``name`` (``named``: a PEP 503-normalised project name)."""
        self.dependencies.append(
            Dependency(
                manager=self.manager,
                file=self.path,
                line=line,
                name=name,
                package_name=canonicalize_name(name) if named else name,
                datasource=DATASOURCE,
                versioning=VERSIONING,
                dep_type=dep_type,
                declared=declared,
                constraint=constraint,
                skip_reason=skip_reason,
                markers=markers,
                prereleases=prereleases,
            )
        )

    def requirement(self, requirement: str, line: int | None, dep_type: str) -> None:
        try:
            dependency = pep508_dependency(
                requirement,
                manager=self.manager,
                file=self.path,
                line=line,
                dep_type=dep_type,
                datasource=DATASOURCE,
                versioning=VERSIONING,
            )
        except InvalidRequirement as exc:
            reason = str(exc).splitlines()[0] if str(exc) else "invalid"
            self.problem(line, f"invalid requirement {requirement!r}: {reason}")
            return
        self.dependencies.append(dependency)

    def _value_line(self, value: str, cursor: int | None) -> tuple[int | None, int | None]:
        """Return the line of the next quoted ``value`` after ``cursor`` and the new cursor."""
        if cursor is None:
            return None, None
        offset = self.locator.find_value(value, cursor)
        if offset is None:
            return self.locator.line(cursor), cursor
        return self.locator.line(offset), offset + 1

    def dependency_groups(self, groups: dict[str, object]) -> None:
        """Add the rows of PEP 735 groups; check ``include-group`` targets and cycles."""
        names: dict[str, str] = {canonicalize_name(name): name for name in groups}
        edges: dict[str, list[tuple[str, int | None]]] = {}
        for name, entries in groups.items():
            keys = ("dependency-groups", name)
            if not isinstance(entries, list):
                self.problem(self.line(keys), f"dependency group {name!r} must be an array")
                continue
            own = edges.setdefault(canonicalize_name(name), [])
            cursor = self.locator.find(keys)
            for entry in entries:
                if isinstance(entry, str):
                    line, cursor = self._value_line(entry, cursor)
                    self.requirement(entry, line, f"group:{name}")
                    continue
                target = entry.get("include-group") if isinstance(entry, dict) else None
                line = self.line(keys)
                if isinstance(target, str):
                    line, cursor = self._value_line(target, cursor)
                if not isinstance(target, str) or len(entry) != 1:
                    message = f"dependency group {name!r} holds an invalid entry {entry!r}"
                    self.problem(line, message)
                    continue
                if canonicalize_name(target) not in names:
                    self.problem(line, f"group {name!r} includes unknown group {target!r}")
                    continue
                own.append((canonicalize_name(target), line))
        self._check_cycles(edges, names)

    def _check_cycles(
        self, edges: dict[str, list[tuple[str, int | None]]], names: dict[str, str]
    ) -> None:
        """Report each ``include-group`` that closes a cycle (a back edge of a depth-first walk)."""
        done: set[str] = set()
        for start in edges:
            if start in done:
                continue
            path = [start]
            stack = [iter(edges.get(start, []))]
            while stack:
                step = next(stack[-1], None)
                if step is None:
                    done.add(path.pop())
                    stack.pop()
                    continue
                target, line = step
                if target in path:
                    cycle = [names[group] for group in [*path[path.index(target) :], target]]
                    self.problem(line, f"include-group cycle: {' -> '.join(cycle)}")
                elif target not in done:
                    path.append(target)
                    stack.append(iter(edges.get(target, [])))

    def indexes(self, value: object, keys: tuple[str, ...], kind: str) -> dict[str, _Index]:
        """The named package indexes of ``[[tool.uv.index]]`` or ``[[tool.poetry.source]]``.

        Each one that is not PyPI is a warning at its header (as a Pipfile's ``[[source]]``
        is): lookups go to the configured PyPI base, not there. Keyed by name (uv compares
        index names as written; Poetry source names case-insensitively: lower-cased).
        """
        if not isinstance(value, list):
            return {}
        headers = self.locator.array_tables(keys)
        found: dict[str, _Index] = {}
        for position, entry in enumerate(value):
            if not isinstance(entry, dict):
                continue
            name = entry.get("name")
            label = f"{kind} {name!r}" if isinstance(name, str) else f"{kind} #{position + 1}"
            url = entry.get("url")
            pypi = is_pypi_url(url) or (
                kind == POETRY_SOURCE and url is None and str(name).lower() == "pypi"
            )
            explicit = (
                entry.get("priority") == "explicit"
                if kind == POETRY_SOURCE
                else entry.get("explicit") is True
            )
            if not pypi:
                start = headers[position].start if position < len(headers) else None
                line = self.locator.line(start) if start is not None else self.line(keys)
                self.problems.append(index_not_used(self.path, line, label))
            if isinstance(name, str):
                key = name.lower() if kind == POETRY_SOURCE else name
                found[key] = _Index(label, pypi=pypi, explicit=explicit)
        return found

    def bind_indexes(
        self,
        dependencies: tuple[Dependency, ...],
        uv: dict[str, object],
        uv_sources: dict[str, object],
        poetry: dict[str, object],
    ) -> tuple[Dependency, ...]:
        """Mark the rows a manifest binds to a package index that is not PyPI.

        uv installs a package pinned by ``[tool.uv.sources] NAME = {index = "…"}`` from that
        index only (https://docs.astral.sh/uv/concepts/indexes/#pinning-a-package-to-an-index)
        and Poetry one whose table names ``source = "…"`` from that source only (a package
        source constraint, https://python-poetry.org/docs/repositories/); the scan looks it up
        on the configured PyPI base all the same, so its row says so (``note``), and when the
        index is ``explicit`` (uv ``explicit = true``, Poetry ``priority = "explicit"``: it
        serves only the packages bound to it, typically ones PyPI does not have) the row
        carries ``sole_index``, and is skipped unless the run's PyPI registry is configured.
        """
        uv_indexes = self.indexes(uv.get("index"), ("tool", "uv", "index"), UV_INDEX)
        poetry_indexes = self.indexes(
            poetry.get("source"), ("tool", "poetry", "source"), POETRY_SOURCE
        )
        uv_bound = _uv_index_pins(uv_sources)
        rows: list[Dependency] = []
        for dep in dependencies:
            bound: _Index | None = None
            uv_name = uv_bound.get(dep.package_name) if _uv_reads(dep.dep_type) else None
            # Poetry's own rows, and [project] rows a Poetry entry enriches (_enrich_project).
            poetry_name = (
                self.poetry_sources.get(dep.package_name)
                if dep.dep_type.startswith(_POETRY_BOUND)
                else None
            )
            if uv_name is not None:
                bound = uv_indexes.get(uv_name) or _Index(f"{UV_INDEX} {uv_name!r}")
            elif poetry_name is not None:
                label = f"{POETRY_SOURCE} {poetry_name!r}"
                bound = poetry_indexes.get(poetry_name.lower()) or _Index(label)
            if dep.skip_reason is not None or bound is None or bound.pypi:
                rows.append(dep)
            elif bound.explicit:
                rows.append(replace(dep, sole_index=bound.label))
            else:
                how = "[tool.uv.sources]" if uv_name is not None else "its `source`"
                note = (
                    f"installed from {bound.label} ({how}): looked up on the configured PyPI base"
                )
                rows.append(replace(dep, note=note))
        return tuple(rows)

    def poetry(self, poetry: dict[str, object]) -> None:
        """Add the rows of Poetry's dependency tables (python-poetry.org/docs/pyproject)."""
        base = ("tool", "poetry")
        tables: list[tuple[tuple[str, ...], str]] = [
            ((*base, "dependencies"), "poetry"),
            ((*base, "dev-dependencies"), "poetry-dev"),
        ]
        groups = self.table(poetry, (*base, "group"))
        for group in groups:
            group_keys = (*base, "group", group)
            if isinstance(groups[group], dict):
                tables.append(((*group_keys, "dependencies"), f"poetry-group:{group}"))
            else:
                self.problem(self.line(group_keys), f"`{'.'.join(group_keys)}` must be a table")
        for keys, dep_type in tables:
            parent = poetry if len(keys) == len(base) + 1 else groups.get(keys[-2])
            if isinstance(parent, dict):
                for name, value in self.table(parent, keys).items():
                    if name != "python":
                        self.poetry_entry((*keys, name), name, value, dep_type)

    def poetry_entry(self, keys: tuple[str, ...], name: str, value: object, dep_type: str) -> None:
        """Add the row(s) of one Poetry dependency: a string, a table or an array of tables."""
        line = self.line(keys)
        if isinstance(value, list):
            offset = self.locator.find(keys)
            for item in value:
                if offset is not None:
                    brace = self.locator.text.find("{", offset)
                    offset = brace + 1 if brace >= 0 else offset
                    line = self.locator.line(offset)
                self.poetry_entry_one(line, name, item, dep_type)
            return
        self.poetry_entry_one(line, name, value, dep_type)

    def poetry_entry_one(self, line: int | None, name: str, value: object, dep_type: str) -> None:
        markers: str | None = None
        # `allow-prereleases = true`: Poetry "prefers the latest version (pre-release or
        # stable)" for it (poetry-core Dependency.allows_prereleases; the deprecated
        # `allows-prereleases` is only warned about by poetry-core 2, not read).
        prereleases = isinstance(value, dict) and value.get("allow-prereleases") is True
        if isinstance(value, str):
            declared: str | None = value
            skip_reason: str | None = None
        elif isinstance(value, dict):
            wrong = _poetry_wrong_type(value)
            if wrong is not None:
                self.problem(line, f"Poetry dependency {name!r}: {wrong}")
                return
            declared, skip_reason = _poetry_table(value)
            source = value.get("source")
            if isinstance(source, str):
                self.poetry_sources[canonicalize_name(name)] = source
            raw_markers = value.get("markers")
            markers = raw_markers if isinstance(raw_markers, str) else None
            python = value.get("python")
            if python is not None:
                try:
                    markers = _and_markers(poetry_python_marker(python), markers)
                except (TypeError, ValueError) as exc:
                    self.problem(line, f"Poetry dependency {name!r}: invalid `python`: {exc}")
        else:
            self.problem(line, f"Poetry dependency {name!r} must be a string or a table")
            return
        constraint: str | None = None
        if skip_reason is None and declared is not None:
            try:
                constraint = poetry_constraint(declared)
            except ValueError as exc:
                self.problem(line, f"invalid Poetry constraint {declared!r} for {name!r}: {exc}")
                return
        self._row(
            name,
            line,
            dep_type,
            declared,
            constraint,
            skip_reason=skip_reason,
            markers=markers,
            prereleases=prereleases,
        )


def poetry_python_marker(python: object) -> str | None:
    """The PEP 508 marker of a Poetry dependency's ``python`` restriction (``None``: any).

    ``{version = "^1.0", python = ">=3.8,<3.10"}`` installs the dependency only on those
    Pythons (https://python-poetry.org/docs/dependency-specification/#python-restricted-dependencies):
    poetry-core turns the constraint into a marker (``Dependency.python_versions``,
    ``create_nested_marker``), ``python_version`` for a version of one or two components and
    ``python_full_version`` for three or more: ``^3.8`` is ``python_version >= "3.8" and
    python_version < "4.0"``, ``3.8`` (Poetry's exact version) ``python_version == "3.8"``,
    ``~2.7 || ^3.4`` an ``or`` of both. The constraint is read by ``poetry_constraint``.

    Raises:
        TypeError: ``python`` is not a string.
        ValueError: ``python`` is not a Poetry constraint.
    """
    if not isinstance(python, str):
        message = f"must be a string, not {python!r}"
        raise TypeError(message)
    spec = poetry_constraint(python)
    if spec is None:
        return None
    alternatives: list[str] = []
    for alternative in spec.split(pep440.UNION):
        atoms: list[str] = []
        for clause in SpecifierSet(alternative.strip()):
            version = clause.version
            release = version.split("+", 1)[0].removesuffix(".*")
            short = "." not in release.partition(".")[2] and release[:1].isdigit()
            variable = "python_version" if short else "python_full_version"
            atoms.append(f'{variable} {clause.operator} "{version}"')
        if not atoms:
            return None
        atoms.sort(key=lambda atom: ("<" in atom, atom))  # the lower bound first, as written
        alternatives.append(" and ".join(atoms))
    if len(alternatives) == 1:
        return alternatives[0]
    return " or ".join(f"({alternative})" for alternative in alternatives)


_HATCH_PYTHON = re.compile(r"\d+(?:\.\d+){1,2}")


def _hatch_python_marker(env: dict[str, object]) -> str | None:
    """The marker of the Pythons a Hatch environment runs on, or ``None`` when it names none.

    ``python = "3.10"`` (https://hatch.pypa.io/latest/config/environment/overview/#python-version)
    runs the environment on that Python; a ``[[envs.<env>.matrix]]`` ``python`` (or ``py``)
    list makes one environment per Python (…/environment/advanced/#matrix), so its rows are
    judged for the lowest. A value that is no version (``pypy3.10``, a path) names none, nor
    does the environment when any of its Pythons is one.
    """
    pythons: list[str] = []
    python = env.get("python")
    if python is not None:
        pythons.append(python if isinstance(python, str) else "")
    matrices = env.get("matrix")
    for matrix in matrices if isinstance(matrices, list) else []:
        if not isinstance(matrix, dict):
            continue
        for key in ("python", "py"):
            values = matrix.get(key)
            if isinstance(values, list):
                pythons.extend(value if isinstance(value, str) else "" for value in values)
    if not pythons or not all(_HATCH_PYTHON.fullmatch(p.strip()) for p in pythons):
        return None
    atoms: list[str] = []
    for value in dict.fromkeys(p.strip() for p in pythons):
        variable = "python_version" if value.count(".") == 1 else "python_full_version"
        atoms.append(f'{variable} == "{value}"')
    return " or ".join(atoms)


def _and_markers(first: str | None, second: str | None) -> str | None:
    """Both markers (``and``), either when the other is ``None``."""
    if first is None or second is None or first == second:
        return first or second
    return f"({first}) and ({second})"


UV_INDEX = "package index"
POETRY_SOURCE = "package source"


class _Index(msgspec.Struct, frozen=True):
    """A package index a manifest names: how rows name it, whether PyPI, whether explicit."""

    label: str
    pypi: bool = False
    explicit: bool = False


def _poetry_wrong_type(value: dict[str, object]) -> str | None:
    """Why Poetry refuses a dependency table: a version, git, path or url that is no string.

    Poetry's schema (poetry-core ``json/schemas/poetry-schema.json``) types them as strings;
    ``{version = 2}`` is refused by ``poetry check`` and would otherwise read as any version.
    """
    for key in ("version", *(key for key, _ in _POETRY_SOURCES)):
        found = value.get(key)
        if found is not None and not isinstance(found, str):
            return f"`{key}` must be a string, not {found!r}"
    return None


def _poetry_table(value: dict[str, object]) -> tuple[str | None, str | None]:
    """Return ``(declared, skip_reason)`` of a Poetry dependency table."""
    for key, reason in _POETRY_SOURCES:
        location = value.get(key)
        if isinstance(location, str):
            return location, reason
    version = value.get("version")
    return (version if isinstance(version, str) else None), None


def poetry_constraint(spec: str) -> str | None:
    """Convert a Poetry version constraint to a PEP 440 specifier string (``None``: any).

    Follows https://python-poetry.org/docs/dependency-specification/: ``^1.2.3`` →
    ``>=1.2.3,<2.0.0``, ``^0.2.3`` → ``>=0.2.3,<0.3.0``, ``~1.2`` → ``>=1.2,<1.3``,
    ``1.2.*`` → ``==1.2.*``, a bare ``1.2.3`` → ``==1.2.3``, ``*``/``""`` → ``None``; comma or
    space separated parts are ANDed and kept in written order. An OR constraint (``^1.0 ||
    ^2.0``; ``|`` too) becomes the union of its converted alternatives, ``>=1.0,<2.0 ||
    >=2.0,<3.0`` (``versioning.pep440`` reads unions), split as poetry-core's
    ``parse_constraint`` splits it (at ``||`` or ``|`` and the spaces around); an
    alternative admitting any version makes the whole constraint any version, as
    poetry-core's ``VersionUnion.of`` does. A one-component ``~=1`` (not PEP 440) is
    ``>=1,<2``, as poetry-core reads it. ``tests/manager/test_poetry_oracle.py`` checks the
    conversion against poetry-core on generated constraints.

    Raises:
        ValueError: a part is not a Poetry constraint, an alternative is empty, or the result
            is not valid PEP 440.
    """
    alternatives = _OR_SEPARATOR.split(spec.strip())
    if len(alternatives) == 1:
        return _poetry_and(spec)
    converted: list[str] = []
    for alternative in alternatives:
        if not alternative.strip().rstrip(",").strip():
            message = f"empty alternative in {spec!r}"
            raise ValueError(message)
        one = _poetry_and(alternative)
        if one is None:
            return None
        if one not in converted:
            converted.append(one)
    return f" {pep440.UNION} ".join(converted)


def _poetry_and(spec: str) -> str | None:
    """Convert one Poetry AND constraint (no ``||``); see ``poetry_constraint``."""
    text = _OPERATOR_SPACE.sub(r"\1", spec.strip())
    parts: list[str] = []
    for part in _AND_SEPARATOR.split(text):
        if part:
            parts.extend(_convert_part(part))
    if not parts:
        return None
    result = ",".join(parts)
    try:
        SpecifierSet(result)
    except InvalidSpecifier as exc:
        message = f"not a valid PEP 440 specifier: {result!r}"
        raise ValueError(message) from exc
    return result


def _convert_part(part: str) -> list[str]:
    if part in {"*", "x", "X"}:
        return []
    wildcard = _WILDCARD.fullmatch(part)
    if wildcard is not None:
        return [f"=={wildcard.group(1)}.*"]
    release = _RELEASE.fullmatch(part[2:]) if part.startswith("~=") else None
    if release is not None and "." not in release.group(1):
        # ``~=1``: PEP 440 wants two components; poetry-core reads it as ``>=1,<2``.
        return _bounded(part[2:], caret=False)
    if part.startswith(_PEP440_OPERATORS):
        return [part]
    if part.startswith(("^", "~")):
        return _bounded(part[1:], caret=part.startswith("^"))
    if part.startswith("=") or part[:1].isdigit():
        return ["==" + part.lstrip("=")]
    message = f"unknown constraint {part!r}"
    raise ValueError(message)


def _bounded(version: str, *, caret: bool) -> list[str]:
    """Return the lower and upper bound of a caret (``^``) or tilde (``~``) requirement."""
    match = _RELEASE.fullmatch(version)
    if match is None:
        message = f"not a version: {version!r}"
        raise ValueError(message)
    release = [int(component) for component in match.group(1).split(".")]
    if caret:
        bump = next((i for i, number in enumerate(release) if number), len(release) - 1)
    else:
        bump = 1 if len(release) > 1 else 0
    upper = [*release[:bump], release[bump] + 1] + [0] * (len(release) - bump - 1)
    return [f">={version}", "<" + ".".join(str(number) for number in upper)]


def _with_requires_python(
    dependencies: tuple[Dependency, ...],
    collector: _Collector,
    project: dict[str, object],
    poetry: dict[str, object],
) -> tuple[Dependency, ...]:
    """The rows, each carrying the Pythons the project supports (``Dependency.requires_python``).

    PEP 621 ``[project] requires-python`` (a PEP 440 specifier set), else Poetry's
    ``[tool.poetry.dependencies] python`` (converted by ``poetry_constraint``); both name what
    the project installs on, so every row of the file is judged for it
    (``policy.requires_python``). An invalid value is a problem at its line and bounds nothing.
    """
    keys: tuple[str, ...] = ("project", "requires-python")
    value = project.get("requires-python")
    spec: str | None = None
    if isinstance(value, str):
        if pep440.is_valid_constraint(value) and pep440.UNION not in value:
            spec = value.strip() or None
        else:
            collector.problem(collector.line(keys), f"invalid requires-python {value[:80]!r}")
    elif value is not None:
        collector.problem(collector.line(keys), "`project.requires-python` must be a string")
    poetry_table = poetry.get("dependencies")
    python = poetry_table.get("python") if isinstance(poetry_table, dict) else None
    if spec is None and value is None and isinstance(python, str):
        keys = ("tool", "poetry", "dependencies", "python")
        try:
            spec = poetry_constraint(python)
        except ValueError as exc:
            collector.problem(collector.line(keys), f"invalid Poetry python {python[:80]!r}: {exc}")
        if spec is not None and not pep440.is_valid_constraint(spec):
            spec = None  # a number too long to compare (``has_long_number``): bounds nothing
    if spec is None:
        return dependencies
    return tuple(replace(dep, requires_python=spec) for dep in dependencies)
