"""Tools (mise, asdf, version files): short name → mise backend → datasource, and their rows.

A tool resolves the way mise resolves it (registries.md §7, ``jdx/mise:docs/registry.md``): a
backend-qualified name (``cargo:flip-link``, ``npm:prettier``, ``github:owner/repo``) is its own
backend; a short name is unaliased (``nodejs`` → ``node``, ``golang`` → ``go``) and takes the
first backend of its registry entry. The entries patchula knows ship as data in the package
(``tool_registry.toml``: its source and date inside), and config's ``[tool-registry]``
(``Settings.tool_registry``: tool → backend) overrides or extends them, as mise's
``MISE_BACKENDS_<TOOL>`` and ``[tool_alias]`` do. A tool with no entry, or whose backend has no
static release source here (``asdf:``, ``vfox:``, an aqua package without a known repository),
is a skipped row naming why: never a guess.

Backends → datasources: ``core:node`` → ``node`` (Node's dist ``index.json``), ``core:python``
→ ``python`` (python.org's release API), ``core:go`` → ``go`` (go.dev's release list),
``cargo:`` → ``crates``, ``npm:`` → ``npm``, ``pipx:`` → ``pypi``, ``go:`` → ``goproxy``,
``github:``/``ubi:`` and ``aqua:`` (through its repository) → ``github-releases``.

Catalog views are keyed by datasource, base URL and package name (``lookup.LookupKey``): the
resolved backend *is* that datasource and package name, so a mapping that sends a tool
elsewhere (an override in config) looks up, and reuses, another catalog view — views are
scoped by the mapping without carrying it (seed 003, "Catalog views": "mise registry
mapping"). Imports only the leaves ``models`` and ``names``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping

import msgspec
from msgspec.structs import replace

from patchula.models import Dependency, ExtractResult

VERSIONING = "mise"
# The datasource of a row that resolved to nothing (skipped, never looked up).
UNRESOLVED = ""
# The managers whose rows are tools (report ecosystem ``tool``).
MANAGERS = frozenset({"mise_toml", "tool_versions", "version_file"})

_CORE = {"node": "node", "python": "python", "go": "go"}
# ``[k=v,...]`` options inside a tool key (``github:oxc-project/oxc[matching=oxlint]``).
_OPTIONS = re.compile(r"\[[^\]]*\]$")
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_PEP503 = re.compile(r"[-_.]+")
# Language-registry backends → the datasource their packages are read on (pipx: PyPI).
_REGISTRIES = {"cargo": "crates", "npm": "npm", "pipx": "pypi", "go": "goproxy"}
_NO_SOURCE = {
    "asdf": "an asdf plugin's script decides its versions: no static release source",
    "vfox": "a vfox plugin's script decides its versions: no static release source",
    "http": "an http: backend downloads from URL templates: no version index",
    "gitlab": "GitLab releases are not read by patchula yet",
    "forgejo": "Forgejo releases are not read by patchula yet",
    "gem": "RubyGems is not read by patchula yet",
    "spm": "Swift packages are not read by patchula yet",
    "conda": "conda channels are not read by patchula yet",
    "dotnet": ".NET tools are not read by patchula yet",
}


class ToolMapping(msgspec.Struct, frozen=True):
    """The mapping in force: tool → backends (first used), aliases, aqua package → repository.

    ``aqua`` values are ``(repository, version_prefix)``; ``overrides`` (config) win over
    ``tools``. ``source`` and ``date`` say where the shipped facts come from.
    """

    tools: Mapping[str, tuple[str, ...]]
    aliases: Mapping[str, str]
    aqua: Mapping[str, tuple[str, str]]
    source: str
    date: str
    overrides: Mapping[str, str] = msgspec.field(default_factory=dict)

    def backend(self, tool: str) -> tuple[str | None, str]:
        """``(backend, short name)`` of ``tool`` as written; backend ``None`` when unmapped."""
        key = _OPTIONS.sub("", tool.strip())
        if key in self.overrides:
            return self.overrides[key], key
        if ":" in key:
            return key, key
        short = self.aliases.get(key, key)
        if short in self.overrides:
            return self.overrides[short], short
        backends = self.tools.get(short)
        return (backends[0] if backends else None), short


@functools.cache
def shipped() -> ToolMapping:
    """The mapping shipped in ``tool_registry.toml`` (read once, when a tool is first met)."""
    # Lazy: a run without tool files never parses it (issue 12: start-up imports).
    import tomllib  # noqa: PLC0415
    from importlib import resources  # noqa: PLC0415

    text = resources.files("patchula").joinpath("tool_registry.toml").read_text("utf-8")
    data = tomllib.loads(text)
    source = data.get("source", {})
    return ToolMapping(
        tools={k: tuple(v) for k, v in data.get("tools", {}).items()},
        aliases=dict(data.get("aliases", {})),
        aqua={
            k: (str(v["repo"]), str(v.get("version-prefix", "")))
            for k, v in data.get("aqua", {}).items()
        },
        source=str(source.get("registry", "")),
        date=str(source.get("date", "")),
    )


def with_overrides(overrides: Mapping[str, str]) -> ToolMapping | None:
    """The shipped mapping with config's ``[tool-registry]`` entries (tool → backend) on top.

    ``None`` when there are none: the managers' own resolution (the shipped mapping) stands.
    """
    if not overrides:
        return None
    return replace(shipped(), overrides={k.strip(): v.strip() for k, v in overrides.items()})


class Resolved(msgspec.Struct, frozen=True):
    """Where a backend's versions are read: ``datasource`` and ``package``, or ``skip`` why not."""

    backend: str | None
    datasource: str
    package: str
    skip: str | None = None


def resolve(tool: str, mapping: ToolMapping | None = None) -> Resolved:
    """Resolve ``tool`` (as written) to its backend and the datasource that has its releases."""
    mapping = shipped() if mapping is None else mapping
    backend, short = mapping.backend(tool)
    if backend is None:
        reason = (
            f"tool {short!r} is not in patchula's mise registry mapping; add it under"
            " [tool-registry] in config (e.g. "
            f'{short} = "github:OWNER/REPO")'
        )
        return Resolved(None, UNRESOLVED, short, reason)
    kind, _, rest = backend.partition(":")
    rest = _OPTIONS.sub("", rest.strip())
    if not rest:
        return Resolved(backend, UNRESOLVED, short, f"backend {backend!r} names no package")
    return _datasource(backend, kind, rest, mapping)


def _datasource(backend: str, kind: str, rest: str, mapping: ToolMapping) -> Resolved:
    # One branch per mise backend family (registries.md §7's table).
    if kind == "core":
        if rest in _CORE:
            return Resolved(backend, _CORE[rest], rest)
        return Resolved(backend, UNRESOLVED, rest, f"{backend}: no release source read yet")
    if kind in {"github", "ubi"}:
        if _REPO.fullmatch(rest) is None:
            return Resolved(backend, UNRESOLVED, rest, f"{backend}: not an OWNER/REPO")
        return Resolved(backend, "github-releases", rest)
    if kind == "aqua":
        found = mapping.aqua.get(rest)
        if found is None:
            reason = (
                f"{backend}: the aqua package's repository is not in patchula's mapping data"
                " (the aqua registry is not fetched at run time)"
            )
            return Resolved(backend, UNRESOLVED, rest, reason)
        repo, prefix = found
        if prefix:
            reason = f"{backend}: its tags carry the prefix {prefix!r}, not stripped yet"
            return Resolved(backend, UNRESOLVED, repo, reason)
        return Resolved(backend, "github-releases", repo)
    registry = _REGISTRIES.get(kind)
    if registry is not None:
        if "://" in rest or rest.startswith("git+"):
            reason = f"{backend}: installed from a URL, not a registry"
            return Resolved(backend, UNRESOLVED, rest, reason)
        package = _PEP503.sub("-", rest).lower() if registry == "pypi" else rest
        return Resolved(backend, registry, package)
    reason = _NO_SOURCE.get(kind, f"unknown backend {kind!r}")
    return Resolved(backend, UNRESOLVED, rest, f"{backend}: {reason}")


# Version values that name no release (registries.md §7): why each is not looked up.
_SKIPPED_VALUES = {
    "system": "uses the tool installed on the system: no version to compare",
}
_SKIPPED_PREFIXES = {
    "ref:": "a VCS ref is not a release: no version to compare",
    "path:": "a local path: no version to compare",
    "sub-": "a version relative to another (sub-X:…) is not a release: not looked up",
}
# .nvmrc spellings of "the newest release" and of the newest LTS (nvm's own aliases).
_LATEST = frozenset({"latest", "node", "stable", "current"})


def constraint_of(version: str) -> tuple[str | None, str | None]:
    """``(constraint, skip reason)`` of a version as mise reads it (one of the two is set).

    ``prefix:20`` and ``20`` are the prefix ``20``; ``latest`` (and nvm's ``node``/``stable``)
    is no constraint (the newest stable release); ``lts``, ``lts/*`` and ``lts/iron`` are the
    node catalog's aliases ``lts`` and ``lts/iron``; ``system``, ``ref:``, ``path:`` and
    ``sub-X:`` are skipped with why.
    """
    value = version.strip()
    lowered = value.lower()
    if lowered in _SKIPPED_VALUES:
        return None, _SKIPPED_VALUES[lowered]
    for prefix, reason in _SKIPPED_PREFIXES.items():
        if lowered.startswith(prefix):
            return None, reason
    if lowered.startswith("prefix:"):
        value = value[len("prefix:") :].strip()
        lowered = value.lower()
    if not value:
        return None, "no version given"
    if lowered in _LATEST:
        return None, None
    if lowered in {"lts", "lts/*"}:
        return "lts", None
    if lowered.startswith(("lts/", "lts-")):
        return f"lts/{lowered[4:]}", None
    return value, None


@functools.lru_cache(maxsize=4096)
def _shipped_resolve(tool: str) -> Resolved:
    """``resolve`` through the shipped mapping, once per name (a file repeats its tools)."""
    return resolve(tool)


def tool_row(
    *,
    manager: str,
    file: str,
    line: int | None,
    tool: str,
    version: str,
    dep_type: str,
    mapping: ToolMapping | None = None,
) -> Dependency:
    """The row of one tool version: resolved backend and datasource, or skipped with why."""
    resolved = _shipped_resolve(tool) if mapping is None else resolve(tool, mapping)
    constraint, skip = constraint_of(version)
    return Dependency(
        manager=manager,
        file=file,
        line=line,
        name=tool.strip(),
        package_name=resolved.package,
        datasource=resolved.datasource,
        versioning=VERSIONING,
        dep_type=dep_type,
        declared=version.strip(),
        constraint=constraint,
        # What the version says comes first: ``ref:…`` is no release whatever the backend.
        skip_reason=skip or resolved.skip,
        backend=resolved.backend,
    )


def remap(result: ExtractResult, mapping: ToolMapping) -> ExtractResult:
    """``result`` with its tool rows resolved again through ``mapping`` (config overrides).

    A row whose tool ``mapping`` overrides gets that backend, datasource and package name (and
    its skip reason, if any); what the row says of its version is kept. Rows of other managers
    and tools not overridden (resolved by the manager, a file's ``[tool_alias]`` included) are
    kept as they are.
    """
    if not mapping.overrides or not any(d.manager in MANAGERS for d in result.dependencies):
        return result
    rows = tuple(_rebound(d, mapping) if d.manager in MANAGERS else d for d in result.dependencies)
    return replace(result, dependencies=rows)


def _rebound(row: Dependency, mapping: ToolMapping) -> Dependency:
    key = _OPTIONS.sub("", row.name.strip())
    if key not in mapping.overrides and mapping.aliases.get(key, key) not in mapping.overrides:
        return row  # not overridden: the manager's resolution (a file's [tool_alias]) stands
    resolved = resolve(row.name, mapping)
    if resolved.backend == row.backend:
        return row
    own = row.skip_reason
    if own is not None and own == resolve(row.name).skip:
        own = None  # the shipped mapping's reason, not the version's
    return replace(
        row,
        backend=resolved.backend,
        datasource=resolved.datasource,
        package_name=resolved.package,
        skip_reason=own or resolved.skip,
    )
