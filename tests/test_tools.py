"""The mise registry mapping: shipped data, resolution per backend, config overrides, identity."""

from __future__ import annotations

import pytest

from patchula import tools
from patchula.errors import ConfigError
from patchula.models import ExtractResult
from patchula.settings import load_settings


def test_the_shipped_mapping_names_its_source_and_date() -> None:
    """The data file says where its facts come from and when they were read."""
    mapping = tools.shipped()
    assert mapping.source == "https://github.com/jdx/mise/tree/main/registry"
    assert mapping.date == "2026-12-01"
    assert mapping.tools["node"] == ("core:node",)
    assert mapping.aqua["kubernetes/kubernetes/kubectl"] == ("kubernetes/kubernetes", "")


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
        ("zig", "core:zig: no release source read yet"),
        ("cargo:https://github.com/o/r", "cargo:https://github.com/o/r: installed from a URL"),
        ("github:not-a-repo", "github:not-a-repo: not an OWNER/REPO"),
        ("jq", "aqua:jqlang/jq: its tags carry the prefix 'jq-'"),
    ],
)
def test_what_has_no_release_source_is_skipped_not_guessed(tool: str, reason: str) -> None:
    """No mapping, or a backend with no static source: a skip reason, no datasource."""
    resolved = tools.resolve(tool)
    assert resolved.datasource == tools.UNRESOLVED
    assert resolved.skip is not None
    assert resolved.skip.startswith(reason)


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
