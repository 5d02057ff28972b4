"""The mise registry mapping: shipped data, resolution per backend, config overrides, identity."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from patchula import tools
from patchula.errors import ConfigError
from patchula.models import Catalog, ExtractResult, Release
from patchula.settings import load_settings


def test_the_shipped_mapping_names_its_source_and_date() -> None:
    """The data file says where its facts come from and when they were read."""
    mapping = tools.shipped()
    assert mapping.source == "https://github.com/jdx/mise/tree/main/registry"
    assert mapping.date == "2026-12-02"
    assert mapping.tools["node"] == ("core:node",)
    assert mapping.aqua["kubernetes/kubernetes/kubectl"] == tools.AquaPackage(
        "kubernetes/kubernetes", version_filter='not (Version matches "-(alpha|beta|rc)")'
    )
    assert mapping.aqua["kubernetes-sigs/kustomize"].prefixes == ("kustomize/", "")
    assert mapping.aqua["aws/aws-cli"].tags is True
    assert 100 <= len(mapping.tools) <= 200


@pytest.mark.parametrize(
    ("tool", "backend", "datasource", "package"),
    [
        ("node", "core:node", "node", "node"),
        ("nodejs", "core:node", "node", "node"),
        ("golang", "core:go", "go", "go"),
        ("python", "core:python", "python", "python"),
        ("cargo:flip-link", "cargo:flip-link", "crates", "flip-link"),
        ("npm:prettier", "npm:prettier", "npm", "prettier"),
        ("npm:@biomejs/biome", "npm:@biomejs/biome", "npm", "@biomejs/biome"),
        ("pipx:Black_Formatter", "pipx:Black_Formatter", "pypi", "black-formatter"),
        (
            "go:golang.org/x/tools/gopls",
            "go:golang.org/x/tools/gopls",
            "goproxy",
            "golang.org/x/tools/gopls",
        ),
        (
            "github:BurntSushi/ripgrep",
            "github:BurntSushi/ripgrep",
            "github-releases",
            "BurntSushi/ripgrep",
        ),
        ("ubi:cli/cli", "ubi:cli/cli", "github-releases", "cli/cli"),
        ("terraform", "aqua:hashicorp/terraform", "github-releases", "hashicorp/terraform"),
        (
            "kubectl",
            "aqua:kubernetes/kubernetes/kubectl",
            "github-releases",
            "kubernetes/kubernetes",
        ),
        ("rg", "aqua:BurntSushi/ripgrep", "github-releases", "BurntSushi/ripgrep"),
        ("gh", "aqua:cli/cli", "github-releases", "cli/cli"),
        (
            "golangci-lint",
            "aqua:golangci/golangci-lint",
            "github-releases",
            "golangci/golangci-lint",
        ),
        ("opentofu", "aqua:opentofu/opentofu", "github-releases", "opentofu/opentofu"),
        ("helm", "aqua:helm/helm", "github-releases", "helm/helm"),
        ("pnpm", "aqua:pnpm/pnpm", "github-releases", "pnpm/pnpm"),
        (
            "protobuf",
            "aqua:protocolbuffers/protobuf/protoc",
            "github-releases",
            "protocolbuffers/protobuf",
        ),
        ("awscli", "aqua:aws/aws-cli", "github-tags", "aws/aws-cli"),
        ("markdownlint-cli2", "npm:markdownlint-cli2", "npm", "markdownlint-cli2"),
        ("yamllint", "pipx:yamllint", "pypi", "yamllint"),
        (
            "ginkgo",
            "go:github.com/onsi/ginkgo/v2/ginkgo",
            "goproxy",
            "github.com/onsi/ginkgo/v2/ginkgo",
        ),
        ("kotlin", "github:JetBrains/kotlin", "github-releases", "JetBrains/kotlin"),
    ],
)
def test_backends_resolve_to_their_datasources(
    tool: str, backend: str, datasource: str, package: str
) -> None:
    """Each backend family reads its versions where registries.md §7 says."""
    resolved = tools.resolve(tool)
    assert (resolved.backend, resolved.datasource, resolved.package, resolved.skip) == (
        backend,
        datasource,
        package,
        None,
    )


@pytest.mark.parametrize(
    ("tool", "reason"),
    [
        ("frobnicator", "tool 'frobnicator' is not in patchula's mise registry mapping"),
        ("asdf:mise-plugins/x", "asdf:mise-plugins/x: an asdf plugin's script decides"),
        ("vfox:x/y", "vfox:x/y: a vfox plugin's script decides"),
        ("aqua:acme/unknown", "aqua:acme/unknown: the aqua package's repository is not in"),
        ("ruby", "core:ruby: mise lists ruby-build's definitions"),
        ("java", "core:java: versions are per vendor (temurin-21, corretto-…)"),
        ("cargo:https://github.com/o/r", "cargo:https://github.com/o/r: installed from a URL"),
        ("github:not-a-repo", "github:not-a-repo: not an OWNER/REPO"),
    ],
)
def test_what_has_no_release_source_is_skipped_not_guessed(tool: str, reason: str) -> None:
    """No mapping, or a backend with no static source: a skip reason, no datasource."""
    resolved = tools.resolve(tool)
    assert resolved.datasource == tools.UNRESOLVED
    assert resolved.skip is not None
    assert resolved.skip.startswith(reason)


@pytest.mark.parametrize(
    ("tool", "backend", "package", "prefixes"),
    [
        ("jq", "aqua:jqlang/jq", "jqlang/jq", ("jq-",)),
        (
            "kustomize",
            "aqua:kubernetes-sigs/kustomize",
            "kubernetes-sigs/kustomize",
            ("kustomize/", ""),
        ),
        ("maven", "aqua:apache/maven", "apache/maven", ("maven-",)),
        (
            "protoc-gen-go-grpc",
            "aqua:grpc/grpc-go/protoc-gen-go-grpc",
            "grpc/grpc-go",
            ("cmd/protoc-gen-go-grpc/",),
        ),
        ("terraform", "aqua:hashicorp/terraform", "hashicorp/terraform", ()),
    ],
)
def test_aqua_tag_prefixes_ride_on_the_resolution(
    tool: str, backend: str, package: str, prefixes: tuple[str, ...]
) -> None:
    """An aqua package whose tags carry a prefix resolves to its releases with those prefixes."""
    resolved = tools.resolve(tool)
    assert (resolved.backend, resolved.datasource, resolved.package, resolved.prefixes) == (
        backend,
        "github-releases",
        package,
        prefixes,
    )
    row = tools.tool_row(
        manager="mise_toml", file="mise.toml", line=1, tool=tool, version="1", dep_type="tools"
    )
    assert (row.skip_reason, row.version_prefixes) == (None, prefixes)


@pytest.mark.parametrize(
    ("tool", "backend", "datasource", "first"),
    [
        ("poetry", "pipx:poetry", "pypi", "vfox:mise-plugins/vfox-poetry"),
        ("yarn", "aqua:yarnpkg/berry", "github-releases", "vfox:mise-plugins/vfox-yarn"),
        ("neovim", "aqua:neovim/neovim", "github-releases", "vfox:mise-plugins/vfox-neovim"),
        ("eza", "cargo:eza", "crates", "vfox:jdx/vfox-eza"),
    ],
)
def test_a_later_backend_is_read_when_mises_first_has_no_release_source(
    tool: str, backend: str, datasource: str, first: str
) -> None:
    """A later backend is read when patchula cannot read the first, the one mise installs with.

    The row names the backend read, and its note the one mise installs with.
    """
    resolved = tools.resolve(tool)
    assert (resolved.backend, resolved.datasource, resolved.skip) == (backend, datasource, None)
    assert resolved.note is not None
    assert resolved.note.startswith(
        f"versions read from {backend}: mise installs it with {first}, which patchula cannot read"
    )
    row = tools.tool_row(
        manager="tool_versions",
        file=".tool-versions",
        line=1,
        tool=tool,
        version="3.8",  # a yarn 1.x pin is read elsewhere (the next test)
        dep_type="tools",
    )
    assert (row.backend, row.note) == (backend, resolved.note)
    assert tools.resolve("terraform").note is None  # mise's first is read: nothing to say


@pytest.mark.parametrize(
    ("tool", "version", "backend", "package"),
    [
        ("yarn", "1.22.19", "npm:yarn", "yarn"),
        ("yarn", "1", "npm:yarn", "yarn"),
        ("yarn", "prefix:1.22", "npm:yarn", "yarn"),
        ("yarn", "v0.27.5", "npm:yarn", "yarn"),
        ("yarn", "4.1.0", "aqua:yarnpkg/berry", "yarnpkg/berry"),
        ("yarn", "2", "aqua:yarnpkg/berry", "yarnpkg/berry"),
        ("yarn", "latest", "aqua:yarnpkg/berry", "yarnpkg/berry"),
        # Written with its backend, the tool is what it names.
        ("aqua:yarnpkg/berry", "1.22.19", "aqua:yarnpkg/berry", "yarnpkg/berry"),
    ],
)
def test_a_yarn_1_pin_is_looked_up_on_the_yarn_1_line(
    tool: str, version: str, backend: str, package: str
) -> None:
    """A yarn 1 pin is yarn 1: mise lists its 1.x tags beside berry's, which has no 1.x."""
    row = tools.tool_row(
        manager="mise_toml", file="mise.toml", line=1, tool=tool, version=version, dep_type="tools"
    )
    assert (row.backend, row.package_name, row.skip_reason) == (backend, package, None)
    assert (row.note == tools.YARN_CLASSIC_NOTE) is (backend == "npm:yarn")


# Tools whose backends are all ones patchula reads no release source for yet (core tools
# without a datasource): documented in README "Tool versions", skipped with the reason.
UNREADABLE_CORE = {"dotnet", "java", "ruby"}


def test_every_shipped_tool_resolves_to_a_readable_datasource() -> None:
    """Every tool, alias and aqua package shipped reads a datasource patchula has (or is listed).

    No shipped entry is UNRESOLVED but the core tools named above; every aqua backend of every
    entry has its package's repository; every alias names a shipped tool.
    """
    from patchula.datasource import DATASOURCES  # noqa: PLC0415 - only this test needs them

    mapping = tools.shipped()
    unresolved = {}
    for tool in mapping.tools:
        resolved = tools.resolve(tool)
        if resolved.datasource == tools.UNRESOLVED:
            unresolved[tool] = resolved.skip
        else:
            assert resolved.datasource in DATASOURCES, tool
            assert resolved.package, tool
    assert set(unresolved) == UNREADABLE_CORE, unresolved
    assert all(reason and "no release source read yet" in reason for reason in unresolved.values())
    for tool, backends in mapping.tools.items():
        assert backends, tool
        for backend in backends:
            if backend.startswith("aqua:"):
                assert backend.removeprefix("aqua:") in mapping.aqua, (tool, backend)
    assert all(target in mapping.tools for target in mapping.aliases.values())
    used = {b.removeprefix("aqua:") for bs in mapping.tools.values() for b in bs}
    assert set(mapping.aqua) <= used  # no aqua fact without a tool that uses it


def test_aqua_tags_with_a_prefix_are_not_read_yet() -> None:
    """A tag-sourced aqua package with a prefix is skipped: no backend read, the first's reason."""
    base = tools.shipped()
    mapping = tools.ToolMapping(
        tools={"x": ("aqua:acme/x", "asdf:acme/asdf-x")},
        aliases={},
        aqua={"acme/x": tools.AquaPackage("acme/x", prefixes=("x-",), tags=True)},
        source=base.source,
        date=base.date,
    )
    resolved = tools.resolve("x", mapping)
    assert resolved.datasource == tools.UNRESOLVED
    assert resolved.skip == (
        "aqua:acme/x: its versions are tags with the prefix 'x-' (version_source: github_tag),"
        " not read yet"
    )


def _catalog(*versions: str, latest: str | None = None) -> Catalog:
    at = datetime(2024, 1, 1, tzinfo=UTC)
    return Catalog(
        datasource="github-releases",
        package_name="acme/x",
        releases=tuple(Release(v, at) for v in versions),
        latest=latest,
        fetched_at=at,
        published_later=("jq-1.8.0", "other-1.0"),
    )


def test_strip_prefixes_keeps_only_the_prefixed_tags_as_versions() -> None:
    """Only tags starting with the prefix count; the version is the rest; its order is kept."""
    catalog = _catalog("jq-1.7.1", "jq-1.7", "1.6", "jq-", "jq-1.7.1", "jqx-1.0", latest="jq-1.7.1")
    stripped = tools.strip_prefixes(catalog, ("jq-",))
    assert [r.version for r in stripped.releases] == ["1.7.1", "1.7"]
    assert stripped.latest == "1.7.1"
    assert stripped.published_later == ("1.8.0",)
    assert tools.strip_prefixes(catalog, ()) is catalog


def test_strip_prefixes_with_a_suffix_keeps_only_tags_with_both_ends() -> None:
    """Swift's ``swift-5.9.2-RELEASE`` is 5.9.2; a snapshot tag or a bare one is no version."""
    catalog = _catalog(
        "swift-5.10.1-RELEASE",
        "swift-DEVELOPMENT-SNAPSHOT-2024-06-01-a",
        "swift-5.9.2-RELEASE",
        "5.8-RELEASE",
        "swift--RELEASE",
        latest="swift-5.10.1-RELEASE",
    )
    stripped = tools.strip_prefixes(catalog, ("swift-",), ("-RELEASE",))
    assert [r.version for r in stripped.releases] == ["5.10.1", "5.9.2"]
    assert stripped.latest == "5.10.1"
    # A suffix alone: every tag that ends with it, as is otherwise.
    alone = tools.strip_prefixes(catalog, (), ("-RELEASE",))
    assert [r.version for r in alone.releases][:2] == ["swift-5.10.1", "swift-5.9.2"]


@pytest.mark.parametrize(
    ("tool", "datasource", "package", "prefixes", "suffixes"),
    [
        ("bun", "github-releases", "oven-sh/bun", ("bun-v",), ()),
        ("deno", "github-releases", "denoland/deno", (), ()),
        ("erlang", "github-releases", "erlang/otp", ("OTP-",), ()),
        ("elixir", "github-releases", "elixir-lang/elixir", (), ()),
        ("rust", "github-releases", "rust-lang/rust", (), ()),
        ("swift", "github-releases", "swiftlang/swift", ("swift-",), ("-RELEASE",)),
        ("zig", "github-tags", "ziglang/zig", (), ()),
    ],
)
def test_core_tools_are_read_where_mise_lists_them(
    tool: str, datasource: str, package: str, prefixes: tuple[str, ...], suffixes: tuple[str, ...]
) -> None:
    """Each core tool reads the GitHub releases or tags whose versions ``mise ls-remote`` lists."""
    row = tools.tool_row(
        manager="tool_versions",
        file=".tool-versions",
        line=1,
        tool=tool,
        version="1.2.3",
        dep_type="tool",
    )
    assert (row.backend, row.datasource, row.package_name) == (f"core:{tool}", datasource, package)
    assert (row.version_prefixes, row.version_suffixes) == (prefixes, suffixes)
    assert row.skip_reason is None


def test_an_elixir_otp_build_is_judged_as_its_version_and_kept_on_the_proposal() -> None:
    """``1.16.0-otp-26`` is elixir 1.16.0 built for OTP 26: compared as 1.16.0, proposed with it."""
    row = tools.tool_row(
        manager="tool_versions",
        file=".tool-versions",
        line=3,
        tool="elixir",
        version="1.16.0-otp-26",
        dep_type="tool",
    )
    assert (row.declared, row.constraint) == ("1.16.0-otp-26", "1.16.0")
    assert row.note is not None
    assert "-otp-26" in row.note
    assert tools.as_declared(row.declared, "1.18.4") == "1.18.4-otp-26"
    assert tools.as_declared("1.16", "1.18") == "1.18"
    plain = tools.tool_row(
        manager="tool_versions",
        file=".tool-versions",
        line=3,
        tool="elixir",
        version="1.16.0",
        dep_type="tool",
    )
    assert (plain.constraint, plain.note) == ("1.16.0", None)


@pytest.mark.parametrize(
    ("version", "skipped"),
    [
        ("nightly", True),
        ("beta", True),
        ("nightly-2024-06-01", True),
        ("1.75.0", False),
        ("1.75", False),
        ("stable", False),
    ],
)
def test_a_rust_channel_is_no_release(version: str, skipped: bool) -> None:  # noqa: FBT001
    """``nightly``/``beta`` builds move daily: skipped with why; ``stable`` is the newest stable."""
    row = tools.tool_row(
        manager="tool_versions",
        file=".tool-versions",
        line=1,
        tool="rust",
        version=version,
        dep_type="tool",
    )
    assert (row.skip_reason is not None) is skipped
    if skipped:
        assert "release channel" in (row.skip_reason or "")


def test_strip_prefixes_takes_the_longest_prefix_and_an_empty_one_admits_bare_tags() -> None:
    """``("kustomize/", "")``: ``kustomize/v5.4.1`` is ``v5.4.1``, a bare ``v1.0.11`` stays."""
    catalog = _catalog("kustomize/v5.4.1", "api/v0.17.0", "v1.0.11", latest="api/v0.17.0")
    stripped = tools.strip_prefixes(catalog, ("kustomize/", ""))
    assert [r.version for r in stripped.releases] == ["v5.4.1", "api/v0.17.0", "v1.0.11"]
    assert stripped.latest == "api/v0.17.0"  # not a version the versioning reads: ignored there
    assert tools.strip_prefixes(catalog, ("kustomize/",)).latest is None


@pytest.mark.parametrize(
    ("declared", "proposed", "written"),
    [
        ("prefix:22", "24", "prefix:24"),
        ("Prefix:1.22", "1.23", "Prefix:1.23"),
        ("prefix:24", "24.12.0", "prefix:24.12.0"),
        ("20", "24", "24"),
        ("v1.13.4", "v1.14.0", "v1.14.0"),
        ("lts/iron", "lts/krypton", "lts/krypton"),
        ("lts-iron", "lts/krypton", "lts-krypton"),
        ("lts", None, None),
        ("latest", None, None),
    ],
)
def test_a_proposal_is_written_in_the_declared_form(
    declared: str, proposed: str | None, written: str | None
) -> None:
    """``prefix:22`` → ``prefix:24`` as the user writes it; other forms as they are proposed."""
    assert tools.as_declared(declared, proposed) == written


def test_config_overrides_win_and_change_the_lookup_identity() -> None:
    """[tool-registry] beats the shipped entry; the lookup (datasource, package) moves with it.

    Catalog views are keyed by datasource, base URL and package name: the override scopes the
    view by the mapping without a key of its own.
    """
    shipped = tools.resolve("terraform")
    mapping = tools.with_overrides(
        {"terraform": "github:opentofu/opentofu", "flip": "cargo:flip-link"}
    )
    assert mapping is not None
    moved = tools.resolve("terraform", mapping)
    assert (moved.backend, moved.datasource, moved.package) == (
        "github:opentofu/opentofu",
        "github-releases",
        "opentofu/opentofu",
    )
    assert (moved.datasource, moved.package) != (shipped.datasource, shipped.package)
    assert tools.resolve("flip", mapping).datasource == "crates"
    assert tools.with_overrides({}) is None


def test_remap_rebinds_tool_rows_only() -> None:
    """Rows are resolved again through the overrides; their version facts are kept."""
    row = tools.tool_row(
        manager="mise_toml",
        file="mise.toml",
        line=2,
        tool="prettier",
        version="3.3.3",
        dep_type="tools",
    )
    skipped = tools.tool_row(
        manager="tool_versions",
        file=".tool-versions",
        line=1,
        tool="frob",
        version="ref:main",
        dep_type="x",
    )
    result = ExtractResult(dependencies=(row, skipped))
    mapping = tools.with_overrides({"prettier": "github:prettier/prettier", "frob": "cargo:frob"})
    assert mapping is not None
    moved, still = tools.remap(result, mapping).dependencies
    assert (moved.backend, moved.datasource, moved.constraint) == (
        "github:prettier/prettier",
        "github-releases",
        "3.3.3",
    )
    assert (still.backend, still.skip_reason) == (
        "cargo:frob",
        "a VCS ref is not a release: no version to compare",
    )
    assert tools.remap(result, tools.shipped()) is result


def test_tool_registry_setting_is_checked() -> None:
    """A [tool-registry] value must be a backend:package; the error names the key."""
    settings = load_settings({"tool_registry": {"terraform": "github:opentofu/opentofu"}}, env={})
    assert settings.tool_registry == {"terraform": "github:opentofu/opentofu"}
    with pytest.raises(ConfigError, match="terraform: expected a mise backend"):
        load_settings({"tool_registry": {"terraform": "opentofu"}}, env={})


def test_registry_names_include_the_tool_datasources() -> None:
    """--registry node=… / python=… / go=… point the tool datasources at a mirror."""
    settings = load_settings(
        {
            "registries": [
                "node=https://mirror.example/node",
                "python=http://127.0.0.1:1",
                "go=https://go.example",
            ]
        },
        env={},
    )
    assert settings.registries == {
        "node": "https://mirror.example/node",
        "python": "http://127.0.0.1:1",
        "go": "https://go.example",
    }


def test_remap_keeps_a_files_own_alias_unless_config_overrides_that_tool() -> None:
    """Config overrides only the tools it names; a mise.toml's [tool_alias] stands otherwise."""
    row = tools.tool_row(
        manager="mise_toml",
        file="mise.toml",
        line=3,
        tool="terraform",
        version="1.8",
        dep_type="tools",
        mapping=tools.with_overrides({"terraform": "github:opentofu/opentofu"}),
    )
    unrelated = tools.with_overrides({"prettier": "github:prettier/prettier"})
    assert unrelated is not None
    (kept,) = tools.remap(ExtractResult(dependencies=(row,)), unrelated).dependencies
    assert kept.backend == "github:opentofu/opentofu"


def test_an_aqua_filter_outside_the_subset_read_skips_the_row_naming_it() -> None:
    """A `version_filter` patchula cannot evaluate is never ignored: the row is skipped."""
    mapping = tools.ToolMapping(
        tools={"x": ("aqua:o/x",), "y": ("aqua:o/y",)},
        aliases={},
        aqua={
            "o/x": tools.AquaPackage("o/x", version_filter='upper(Version) != "X"'),
            "o/y": tools.AquaPackage("o/y", version_filter='not (Version startsWith "lib-")'),
        },
        source="",
        date="",
    )
    skipped = tools.resolve("x", mapping)
    assert (skipped.datasource, skipped.skip) == (
        tools.UNRESOLVED,
        (
            "aqua:o/x: its aqua version_filter is not read by patchula (version_filter"
            " 'upper(Version) != \"X\"': function 'upper' is not read)"
        ),
    )
    read = tools.resolve("y", mapping)
    assert (read.datasource, read.version_filter) == (
        "github-releases",
        'not (Version startsWith "lib-")',
    )
    catalog = _catalog("lib-v2.0.0", "v1.2.0", "v1.1.0", latest="lib-v2.0.0")
    kept = tools.filter_tags(catalog, read.version_filter)
    assert ([r.version for r in kept.releases], kept.latest) == (["v1.2.0", "v1.1.0"], None)
    pinned = tools.filter_tags(catalog, 'Version == "v1.2.0"', pinned="1.1.0")
    assert [r.version for r in pinned.releases] == ["v1.2.0", "v1.1.0"]
