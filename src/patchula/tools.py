"""Tools (mise, asdf, version files): short name → mise backend → datasource, and their rows.

A tool resolves the way mise resolves it (registries.md §7, ``jdx/mise:docs/registry.md``): a
backend-qualified name (``cargo:flip-link``, ``npm:prettier``, ``github:owner/repo``) is its own
backend; a short name is unaliased (``nodejs`` → ``node``, ``golang`` → ``go``, ``gh`` →
``github-cli``) and takes the first backend of its registry entry that has a release source
here (mise installs with the first; a later one is read, and the row's note says so, only when
patchula cannot read that one). The entries patchula knows ship as data in the package
(``tool_registry.toml``: its source and date inside), and config's ``[tool-registry]``
(``Settings.tool_registry``: tool → backend) overrides or extends them, as mise's
``MISE_BACKENDS_<TOOL>`` and ``[tool_alias]`` do. A tool with no entry, or none of whose
backends has a static release source here (``asdf:``, ``vfox:``, an aqua package without a
known repository), is a skipped row naming why: never a guess. An aqua package whose tags
carry a prefix (``jq-1.7.1``, ``kustomize/v5.4.1``) is read from its tags that carry it, the
prefix stripped (``strip_prefixes``), and of those only the ones its ``version_filter`` keeps
(``filter_tags``, ``aqua_expr``). A ``yarn`` 1.x pin is read on the yarn 1 line, the npm
package ``yarn`` (``_yarn_line``), since the backend read for ``yarn`` holds berry (2+) alone.

Backends → datasources: ``core:node`` → ``node`` (Node's dist ``index.json``), ``core:python``
→ ``python`` (python.org's release API), ``core:go`` → ``go`` (go.dev's release list),
``core:bun``/``deno``/``erlang``/``elixir``/``rust``/``swift`` → ``github-releases`` and
``core:zig`` → ``github-tags`` of their upstream repositories (``_CORE_GITHUB``: where mise
lists each, tag prefixes and suffixes stripped); ``core:ruby``/``java``/``dotnet`` are skipped,
``_CORE_UNREAD`` says why;
``cargo:`` → ``crates``, ``npm:`` → ``npm``, ``pipx:`` → ``pypi``, ``go:`` → ``goproxy``,
``github:``/``ubi:`` and ``aqua:`` (through its repository) → ``github-releases`` (an aqua
package with ``version_source: github_tag`` → ``github-tags``).

Catalog views are keyed by datasource, base URL and package name (``lookup.LookupKey``): the
resolved backend *is* that datasource and package name, so a mapping that sends a tool
elsewhere (an override in config) looks up, and reuses, another catalog view — views are
scoped by the mapping without carrying it (seed 003, "Catalog views": "mise registry
mapping"). Imports only the leaf ``models``.
"""

from __future__ import annotations

import functools
import re
from collections.abc import Mapping, Sequence
from typing import cast

import msgspec
from msgspec.structs import replace

from patchula.models import Catalog, Dependency, ExtractResult, Release

VERSIONING = "mise"
# The datasource of a row that resolved to nothing (skipped, never looked up).
UNRESOLVED = ""
# The managers whose rows are tools (report ecosystem ``tool``).
MANAGERS = frozenset({"mise_toml", "tool_versions", "version_file"})
# Tool rows of other managers: (manager, datasource) of a workflow's ``actions/setup-<tool>``.
SETUP_ROWS = frozenset(
    {("github_actions", "node"), ("github_actions", "python"), ("github_actions", "go")}
)

_CORE = {"node": "node", "python": "python", "go": "go"}


class _CoreSource(msgspec.Struct, frozen=True):
    """Where a ``core:`` tool's versions are read: a GitHub repository's releases or tags.

    ``prefixes``/``suffixes`` are what its tags carry around the version (``strip_prefixes``);
    ``note`` is what every row of it says of that source.
    """

    datasource: str
    repo: str
    prefixes: tuple[str, ...] = ()
    suffixes: tuple[str, ...] = ()
    note: str | None = None


# The core tools read from GitHub, each where ``mise ls-remote TOOL`` takes its list from
# (``jdx/mise:src/plugins/core/<tool>.rs``, ``_list_remote_versions``; commit in
# ``tool_registry.toml``), or from the repository whose releases carry the same versions:
# - bun: oven-sh/bun's releases, ``bun-v`` stripped (mise reads exactly these).
# - deno: mise reads deno.com/versions.json; its entries are denoland/deno's release tags
#   (``v1.40.0``, the ``v`` dropped by the versioning), so the releases give the same list.
# - erlang: mise lists kerl's ``list releases`` (or erlef/otp_builds' releases for precompiled
#   installs), both erlang/otp's ``OTP-X`` releases, ``OTP-`` stripped.
# - elixir: mise reads builds.hex.pm's ``builds.txt``: each ``vX`` release tag of
#   elixir-lang/elixir, and the same version built per OTP major (``1.16.0-otp-26``); the
#   releases give the versions, a row's ``-otp-N`` is kept aside (``_otp_build``).
# - rust: rust-lang/rust's releases, tag as version (mise reads exactly these; the rolling
#   channels ``stable``/``beta``/``nightly`` are no release).
# - swift: swiftlang/swift's releases ``swift-X-RELEASE``, both ends stripped (mise does).
# - zig: mise reads ziglang.org/download/index.json, whose versions are ziglang/zig's release
#   tags (``0.13.0``; the ``master`` dev builds are no tag): read as tags, dated lazily; the
#   project moved to Codeberg in 2025, so each row's note says the GitHub tags may lag.
# Prereleases (``1.1.0-canary.1``, ``27.0-rc1``) are the versioning's or the release's flag.
_CORE_GITHUB = {
    "bun": _CoreSource("github-releases", "oven-sh/bun", ("bun-v",)),
    "deno": _CoreSource("github-releases", "denoland/deno"),
    "erlang": _CoreSource("github-releases", "erlang/otp", ("OTP-",)),
    "elixir": _CoreSource("github-releases", "elixir-lang/elixir"),
    "rust": _CoreSource("github-releases", "rust-lang/rust"),
    "swift": _CoreSource("github-releases", "swiftlang/swift", ("swift-",), ("-RELEASE",)),
    "zig": _CoreSource(
        "github-tags",
        "ziglang/zig",
        note=(
            "versions read from ziglang/zig's GitHub tags; mise lists ziglang.org's"
            " download/index.json, and zig's development moved to codeberg.org/ziglang/zig"
            " (2025): a release tagged only there is not seen"
        ),
    ),
}
# Core tools with no static release source here: why, as their rows say.
_CORE_UNREAD = {
    "ruby": (
        "mise lists ruby-build's definitions (ruby, jruby-…, truffleruby-…), and ruby/ruby's"
        " tags spell a version with underscores (v3_3_0): no release source read yet"
    ),
    "java": (
        "versions are per vendor (temurin-21, corretto-…) from mise's Java metadata, not one"
        " release list: no release source read yet"
    ),
    "dotnet": (
        "mise reads Microsoft's release metadata (releases-index.json), which patchula does"
        " not read: no release source read yet"
    ),
}
# ``[k=v,...]`` options inside a tool key (``github:oxc-project/oxc[matching=oxlint]``).
_OPTIONS = re.compile(r"\[[^\]]*\]$")
_REPO = re.compile(r"[A-Za-z0-9_.-]+/[A-Za-z0-9_.-]+")
_PEP503 = re.compile(r"[-_.]+")
# A ``.x`` wildcard tail (``20.x``, ``3.x.x``), as the actions/setup-* inputs write a line.
_X_TAIL = re.compile(r"(?:\.[xX*])+$")
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


def is_tool(dep: Dependency) -> bool:
    """Whether ``dep`` is a tool version (a mise/asdf/version-file row, or a setup-* input)."""
    return dep.manager in MANAGERS or (dep.manager, dep.datasource) in SETUP_ROWS


class AquaPackage(msgspec.Struct, frozen=True):
    """Where an aqua package's versions are: its GitHub ``repo`` and the prefixes of its tags.

    ``prefixes`` are aqua's ``version_prefix`` values (the package's, then those its
    ``version_overrides`` use for older versions; ``""`` = a tag without one); empty when its
    tags are the versions as they are. ``tags``: aqua ``version_source: github_tag``, versions
    are the repository's tags rather than its releases (``jdx/mise:src/backend/aqua.rs``,
    ``get_tags_with_release_dates``). ``version_filter``: aqua's ``version_filter``, an
    expr-lang expression on the whole tag (``not (Version startsWith "varcon-")``): a tag it is
    false for is none of the package's versions (``aqua_expr``; ``filter_tags``).
    """

    repo: str
    prefixes: tuple[str, ...] = ()
    tags: bool = False
    version_filter: str | None = None


class ToolMapping(msgspec.Struct, frozen=True):
    """The mapping in force: tool → backends (mise's order), aliases, aqua package → repository.

    ``overrides`` (config) win over ``tools``. ``source`` and ``date`` say where the shipped
    facts come from.
    """

    tools: Mapping[str, tuple[str, ...]]
    aliases: Mapping[str, str]
    aqua: Mapping[str, AquaPackage]
    source: str
    date: str
    overrides: Mapping[str, str] = msgspec.field(default_factory=dict)

    def backends(self, tool: str) -> tuple[tuple[str, ...], str]:
        """``(backends, short name)`` of ``tool`` as written, mise's order; ``()`` when unmapped.

        An override or a backend-qualified name is the one backend; a short name (unaliased)
        has its registry entry's list.
        """
        key = _OPTIONS.sub("", tool.strip())
        if key in self.overrides:
            return (self.overrides[key],), key
        if ":" in key:
            return (key,), key
        short = self.aliases.get(key, key)
        if short in self.overrides:
            return (self.overrides[short],), short
        return self.tools.get(short, ()), short


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
        aqua={k: _aqua_package(v) for k, v in data.get("aqua", {}).items()},
        source=str(source.get("registry", "")),
        date=str(source.get("date", "")),
    )


def _aqua_package(entry: Mapping[str, object]) -> AquaPackage:
    """An ``[aqua]`` entry: ``repo``, ``version-prefix`` (a string or list), the rest as is."""
    prefix = entry.get("version-prefix", ())
    prefixes = (prefix,) if isinstance(prefix, str) else tuple(cast("list[str]", prefix))
    version_filter = entry.get("version-filter")
    return AquaPackage(
        repo=str(entry["repo"]),
        prefixes=() if prefixes == ("",) else prefixes,
        tags=entry.get("version-source") == "github_tag",
        version_filter=str(version_filter).strip() or None if version_filter else None,
    )


def with_overrides(overrides: Mapping[str, str]) -> ToolMapping | None:
    """The shipped mapping with config's ``[tool-registry]`` entries (tool → backend) on top.

    ``None`` when there are none: the managers' own resolution (the shipped mapping) stands.
    """
    if not overrides:
        return None
    return replace(shipped(), overrides={k.strip(): v.strip() for k, v in overrides.items()})


class Resolved(msgspec.Struct, frozen=True):
    """Where a backend's versions are read: ``datasource`` and ``package``, or ``skip`` why not.

    ``prefixes`` are the prefixes its tags carry (``AquaPackage.prefixes``): only tags that
    start with one are its versions, each the rest of its tag (``strip_prefixes``); ``note``
    says why a later backend of the tool's entry is read, when mise's first is not;
    ``version_filter`` is the aqua package's (``AquaPackage.version_filter``); ``suffixes``
    are what its tags carry after the version (swift's ``-RELEASE``), stripped likewise.
    """

    backend: str | None
    datasource: str
    package: str
    skip: str | None = None
    prefixes: tuple[str, ...] = ()
    note: str | None = None
    version_filter: str | None = None
    suffixes: tuple[str, ...] = ()


def resolve(tool: str, mapping: ToolMapping | None = None) -> Resolved:
    """Resolve ``tool`` (as written) to its backend and the datasource that has its releases.

    The first backend of its entry (mise's order) that patchula has a release source for is
    read. mise installs with its first enabled backend; when patchula cannot read that one
    (``vfox:``, ``asdf:``) a later one of the same tool is read instead (poetry's
    ``pipx:poetry``: the same versions, where they are published, as Renovate's mise manager
    reads a tool from one static datasource) and ``note`` names the backend mise uses. With
    none readable, the first one's skip reason.
    """
    mapping = shipped() if mapping is None else mapping
    backends, short = mapping.backends(tool)
    if not backends:
        reason = (
            f"tool {short!r} is not in patchula's mise registry mapping; add it under"
            " [tool-registry] in config (e.g. "
            f'{short} = "github:OWNER/REPO")'
        )
        return Resolved(None, UNRESOLVED, short, reason)
    first: Resolved | None = None
    for backend in backends:
        found = _backend(backend, short, mapping)
        if found.skip is None:
            if first is None:
                return found
            note = (
                f"versions read from {backend}: mise installs it with {first.backend},"
                f" which patchula cannot read ({first.skip})"
            )
            return replace(found, note=note)
        first = first or found
    return cast("Resolved", first)


def _backend(backend: str, short: str, mapping: ToolMapping) -> Resolved:
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
        core = _CORE_GITHUB.get(rest)
        if core is not None:
            return Resolved(
                backend,
                core.datasource,
                core.repo,
                prefixes=core.prefixes,
                note=core.note,
                suffixes=core.suffixes,
            )
        reason = _CORE_UNREAD.get(rest, "no release source read yet")
        return Resolved(backend, UNRESOLVED, rest, f"{backend}: {reason}")
    if kind in {"github", "ubi"}:
        if _REPO.fullmatch(rest) is None:
            return Resolved(backend, UNRESOLVED, rest, f"{backend}: not an OWNER/REPO")
        return Resolved(backend, "github-releases", rest)
    if kind == "aqua":
        return _aqua(backend, rest, mapping)
    registry = _REGISTRIES.get(kind)
    if registry is not None:
        if "://" in rest or rest.startswith("git+"):
            reason = f"{backend}: installed from a URL, not a registry"
            return Resolved(backend, UNRESOLVED, rest, reason)
        package = _PEP503.sub("-", rest).lower() if registry == "pypi" else rest
        return Resolved(backend, registry, package)
    reason = _NO_SOURCE.get(kind, f"unknown backend {kind!r}")
    return Resolved(backend, UNRESOLVED, rest, f"{backend}: {reason}")


def _aqua(backend: str, rest: str, mapping: ToolMapping) -> Resolved:
    """An ``aqua:`` backend: its package's repository, tag prefixes and version filter."""
    found = mapping.aqua.get(rest)
    if found is None:
        reason = (
            f"{backend}: the aqua package's repository is not in patchula's mapping data"
            " (the aqua registry is not fetched at run time)"
        )
        return Resolved(backend, UNRESOLVED, rest, reason)
    if found.tags and found.prefixes:
        reason = (
            f"{backend}: its versions are tags with the prefix {found.prefixes[0]!r}"
            " (version_source: github_tag), not read yet"
        )
        return Resolved(backend, UNRESOLVED, found.repo, reason)
    if found.version_filter is not None:
        from patchula.aqua_expr import FilterError, compile_filter  # noqa: PLC0415 - lazy

        try:
            compile_filter(found.version_filter)
        except FilterError as exc:
            reason = f"{backend}: its aqua version_filter is not read by patchula ({exc})"
            return Resolved(backend, UNRESOLVED, found.repo, reason)
    datasource = "github-tags" if found.tags else "github-releases"
    return Resolved(
        backend,
        datasource,
        found.repo,
        prefixes=found.prefixes,
        version_filter=found.version_filter,
    )


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


def as_declared(declared: str | None, proposed: str | None) -> str | None:
    """``proposed`` written in the declaration's own form, as the user would write it.

    ``constraint_of`` reads ``prefix:22`` as the prefix ``22`` and ``lts-iron`` as the alias
    ``lts/iron``; a proposal made from those (``24``, ``lts/krypton``) goes back into the form
    declared: ``prefix:24`` (the declared spelling of ``prefix:`` kept), ``lts-krypton``,
    setup-node's ``20.x`` → ``24.x`` (the ``.x`` tail kept), and an elixir ``-otp-N`` build put
    back (``1.16.0-otp-26`` → ``1.18.4-otp-26``). Other forms are proposed as they are: ``20`` →
    ``24``, ``v1.13.4`` → ``v1.14.0`` (the ``v`` is the versioning's), ``lts/iron`` →
    ``lts/krypton``; ``lts``, ``lts/*`` and ``latest`` move by themselves and have no proposal.
    """
    if declared is None or proposed is None:
        return proposed
    value = declared.strip()
    if value.lower().startswith("prefix:"):
        return value[: len("prefix:")] + proposed
    if value.lower().startswith("lts-") and proposed.startswith("lts/"):
        return value[: len("lts-")] + proposed[len("lts/") :]
    tail = _X_TAIL.search(value)
    if tail is not None and proposed[:1].isdigit():
        return proposed + tail.group()  # setup-node's ``20.x`` → ``22.x``
    build = _OTP_BUILD.fullmatch(value)
    if build is not None and _OTP_BUILD.fullmatch(proposed) is None:
        return proposed + build.group("build")  # elixir ``1.16.0-otp-26`` → ``1.18.4-otp-26``
    return proposed


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
    if resolved.backend in _BERRY and ":" not in _OPTIONS.sub("", tool.strip()):
        resolved = _yarn_line(resolved, constraint)
    if resolved.backend == "core:elixir" and constraint is not None:
        constraint, resolved = _otp_build(constraint, resolved)
    if resolved.backend == "core:rust" and constraint is not None and skip is None:
        skip = _rust_channel(constraint)
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
        note=resolved.note,
        backend=resolved.backend,
        version_prefixes=resolved.prefixes,
        version_suffixes=resolved.suffixes,
        version_filter=resolved.version_filter,
    )


# An elixir build for one OTP major, as builds.hex.pm names it and mise lists it: ``-otp-26``.
_OTP_BUILD = re.compile(r"(?P<version>.+?)(?P<build>-otp-\d+)", re.IGNORECASE)
_RUST_CHANNELS = ("stable", "beta", "nightly")


def _otp_build(constraint: str, resolved: Resolved) -> tuple[str, Resolved]:
    """``(constraint, resolved)`` of an elixir pin: ``1.16.0-otp-26`` is 1.16.0, built for OTP 26.

    The version is judged on elixir-lang/elixir's releases; the ``-otp-N`` build is kept
    aside, named in the row's note and put back on the proposal (``as_declared``).
    """
    found = _OTP_BUILD.fullmatch(constraint.strip())
    if found is None:
        return constraint, resolved
    build = found.group("build")
    note = (
        f"judged as elixir {found.group('version')}; {build} names the build for that OTP"
        f" major (builds.hex.pm), kept on the proposal: check the newer elixir is built for it"
    )
    return found.group("version"), replace(resolved, note=note)


def _rust_channel(constraint: str) -> str | None:
    """Why a Rust channel (``nightly``, ``beta-2024-06-01``) is not looked up, else ``None``."""
    lowered = constraint.strip().lower()
    channel = next((c for c in _RUST_CHANNELS if lowered.startswith(c)), None)
    if channel is None or (channel == "stable" and lowered == "stable"):
        return None  # ``stable`` is the newest stable release (``constraint_of``: no constraint)
    return f"a Rust {channel} toolchain is a release channel's build, not a release: not looked up"


def filter_tags(
    catalog: Catalog,
    version_filter: str | None,
    *,
    prefixes: Sequence[str] = (),
    pinned: str | None = None,
) -> Catalog:
    """``catalog`` with only the releases whose tag aqua's ``version_filter`` keeps.

    The expression is evaluated on the whole tag, before ``version_prefix`` is stripped, as
    aqua and mise do (``jdx/mise:src/backend/aqua.rs``: ``version_filter_ok`` first); a tag the
    expression fails for (``semver`` of ``latest``) is dropped. The tag of ``pinned`` (the row's
    exact version, its ``prefixes`` and a ``v`` aside) stays: mise installs a version written
    out even when its listing filters it, so the row is judged from it rather than called
    unpublished. ``None``: ``catalog`` itself. A filter that does not compile never reaches
    here (``resolve`` skips the row).
    """
    if version_filter is None:
        return catalog
    from patchula.aqua_expr import keeps  # noqa: PLC0415 - lazy: only filtered tools pay

    def bare(tag: str) -> str:
        prefix = max((p for p in prefixes if tag.startswith(p)), key=len, default="")
        return tag[len(prefix) :].removeprefix("v")

    own = None if pinned is None else pinned.strip().removeprefix("v")
    tags = [release.version for release in catalog.releases]
    kept = keeps(version_filter, tags)
    releases = tuple(
        release
        for release, keep in zip(catalog.releases, kept, strict=True)
        if keep or bare(release.version) == own
    )
    later = list(catalog.published_later)
    latest = catalog.latest
    if latest is not None and not keeps(version_filter, [latest])[0]:
        latest = None
    return replace(
        catalog,
        releases=releases,
        latest=latest,
        published_later=tuple(
            tag for tag, keep in zip(later, keeps(version_filter, later), strict=True) if keep
        ),
    )


# The backends of yarn's mise entry that hold yarn 2+ (berry) alone.
_BERRY = frozenset({"aqua:yarnpkg/berry", "npm:@yarnpkg/cli-dist"})
_MAJOR = re.compile(r"v?(\d+)")
YARN_CLASSIC_NOTE = (
    "versions read from npm:yarn, where yarn 1 (classic) is published: mise installs yarn with"
    " vfox:mise-plugins/vfox-yarn, which patchula cannot read, and whose list holds yarnpkg/yarn's"
    " 1.x tags beside berry's; yarn 2 and later is berry (@yarnpkg/cli), another code base with"
    " its own migration, so this 1.x pin is judged on the 1.x line"
)


def _yarn_line(resolved: Resolved, constraint: str | None) -> Resolved:
    """``resolved`` for a ``yarn`` pin: a 0.x/1.x one on the yarn 1 line, else berry as it is.

    mise installs ``yarn`` with ``vfox:mise-plugins/vfox-yarn``, whose listing is berry's
    ``@yarnpkg/cli/X`` tags and yarnpkg/yarn's ``vX`` tags (1.x) together
    (``mise-plugins/vfox-yarn:hooks/available.lua``); patchula reads berry's repository for
    it, which has no 1.x. A yarn 1 pin (``1.22.19``, ``1``, ``prefix:1.22``) is looked up as
    the npm package ``yarn``, where yarn 1 is published (its ``latest`` is the newest 1.x),
    and the row's note says why and that yarn ≥ 2 is berry. ``latest`` and other values stay
    on berry (mise's newest yarn is berry's).
    """
    found = None if constraint is None else _MAJOR.match(constraint.strip())
    if found is None or int(found.group(1)) >= 2:  # noqa: PLR2004 - yarn 2 is berry's first
        return resolved
    return Resolved("npm:yarn", "npm", "yarn", note=YARN_CLASSIC_NOTE)


def strip_prefixes(
    catalog: Catalog, prefixes: Sequence[str], suffixes: Sequence[str] = ()
) -> Catalog:
    """``catalog`` with only the releases whose tag starts with one of ``prefixes``, as versions.

    A tag's version is the rest after the longest prefix it starts with (``jq-1.7.1`` → ``1.7.1``,
    ``kustomize/v5.4.1`` → ``v5.4.1``; the versioning drops a ``v``); ``""`` admits a tag as it
    is. A version two tags give is the first's (upstream order: the newer tag). No prefixes:
    ``catalog`` itself. This is aqua's and mise's reading of ``version_prefix``
    (``jdx/mise:src/backend/aqua.rs``, ``versioned_package_from_tag``: "strip_prefix", a tag
    without it is no version); ``latest`` is kept only when its tag carries a prefix.
    ``suffixes`` likewise: a tag must also end with one (the longest is cut), as mise reads
    swift's ``swift-5.9.2-RELEASE`` (``jdx/mise:src/plugins/core/swift.rs``: ``strip_suffix``).
    """
    if not prefixes and not suffixes:
        return catalog
    ordered = sorted(set(prefixes or ("",)), key=len, reverse=True)
    ends = sorted(set(suffixes), key=len, reverse=True)

    def version_of(tag: str) -> str | None:
        prefix = next((p for p in ordered if tag.startswith(p)), None)
        if prefix is None:
            return None
        rest = tag[len(prefix) :]
        if ends:
            suffix = next((e for e in ends if e and rest.endswith(e)), None)
            if suffix is None:
                return None
            rest = rest[: -len(suffix)]
        return rest or None

    seen: set[str] = set()
    releases: list[Release] = []
    for release in catalog.releases:
        version = version_of(release.version)
        if version is None or version in seen:
            continue
        seen.add(version)
        releases.append(release._replace(version=version))
    later = (version_of(tag) for tag in catalog.published_later)
    return replace(
        catalog,
        releases=tuple(releases),
        latest=None if catalog.latest is None else version_of(catalog.latest),
        published_later=tuple(version for version in later if version is not None),
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
