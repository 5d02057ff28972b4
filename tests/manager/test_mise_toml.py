"""The mise.toml manager on the corpus shapes (jdx/mise) and on hostile files."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import mise_toml
from patchula.models import ExtractResult

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "mise_toml"

# (line, name, declared, constraint, datasource, package, backend, skipped?)
Row = tuple[int | None, str, str | None, str | None, str, str, str | None, bool]


def _no_read(path: str) -> str:
    raise ManifestError("not served", file=path)


def _extract(case: str, name: str = "mise.toml") -> ExtractResult:
    text = (FIXTURES / case / name).read_text(encoding="utf-8")
    return mise_toml.extract(f"{case}/{name}", text, _no_read)


def _rows(result: ExtractResult) -> list[Row]:
    return [
        (
            d.line,
            d.name,
            d.declared,
            d.constraint,
            d.datasource,
            d.package_name,
            d.backend,
            d.skip_reason is not None,
        )
        for d in result.dependencies
    ]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("mise.toml", True),
        (".mise.toml", True),
        ("sub/mise.local.toml", True),
        ("mise.production.toml", True),
        (".config/mise.toml", True),
        (".config/mise/config.toml", True),
        (".mise/config.toml", True),
        (".config/mise/conf.d/tools.toml", True),
        ("test/fixtures/mise.plugin.toml", False),
        ("Cargo.toml", False),
        ("config.toml", False),
        ("notmise.toml", False),
    ],
)
def test_matches_mise_config_file_names(path: str, expected: bool) -> None:  # noqa: FBT001
    """Every file mise reads [tools] from is matched, by path only; plugin manifests are not."""
    assert mise_toml.matches(path) is expected


def test_jdx_mise_backend_prefixes_and_latest() -> None:
    """jdx/mise's own mise.toml: backend-qualified keys, short names, `latest`, lines kept."""
    result = _extract("jdx-mise")
    rows = {row[1]: row for row in _rows(result)}
    assert len(rows) == 25
    tak = "github:jdx/tak"
    assert rows[tak] == (13, tak, "0.0.5", "0.0.5", "github-releases", "jdx/tak", tak, False)
    assert rows["npm:markdownlint-cli"][2:8] == (
        "latest", None, "npm", "markdownlint-cli", "npm:markdownlint-cli", False
    )  # fmt: skip
    assert rows["prettier"][1:8] == (
        "prettier", "3.9.6", "3.9.6", "npm", "prettier", "npm:prettier", False
    )  # fmt: skip
    assert rows["node"] == (36, "node", "24", "24", "node", "node", "core:node", False)
    assert rows["actionlint"][4:7] == (
        "github-releases", "rhysd/actionlint", "aqua:rhysd/actionlint"
    )  # fmt: skip
    assert rows["pkl"][4:8] == ("github-releases", "apple/pkl", "aqua:apple/pkl", False)
    assert rows["jq"][4:8] == ("github-releases", "jqlang/jq", "aqua:jqlang/jq", False)
    assert rows["sops"][4:7] == ("github-releases", "getsops/sops", "aqua:getsops/sops")
    # Short names the shipped mapping does not hold are skipped, never guessed.
    assert rows["aube"][6:8] == (None, True)
    assert result.dependencies[3].skip_reason is not None
    assert "not in patchula's mise registry mapping" in result.dependencies[3].skip_reason
    assert result.problems == ()


def test_lists_tables_and_prefix_ref_path_forms() -> None:
    """Every list entry is a row; tables give `version` or `prefix`; ref:/path: are skipped."""
    result = _extract("fixture-shapes", ".mise.toml")
    assert [(r[0], r[1], r[2], r[3], r[7]) for r in _rows(result)] == [
        (5, "terraform", "1.0.0", "1.0.0", False),
        (6, "node", "18", "18", False),
        (6, "node", "prefix:20", "20", False),
        (6, "node", "ref:master", None, True),
        (6, "node", "path:~/.nodes/18", None, True),
        (7, "jq", "prefix:1.6", "1.6", False),  # aqua:jqlang/jq: its tags' prefix is stripped
        (8, "shellcheck", "0.9.0", "0.9.0", False),
        (9, "python", "3.10.0", "3.10.0", False),
        (9, "python", "3.9.0", "3.9.0", False),
    ]
    reasons = [d.skip_reason for d in result.dependencies]
    assert reasons[3] == "a VCS ref is not a release: no version to compare"
    assert reasons[4] == "a local path: no version to compare"
    assert all(d.dep_type == "tools" and d.manager == "mise_toml" for d in result.dependencies)


def test_exact_pins_of_the_core_runtimes() -> None:
    """The benchmark fixture pins node, python and go exactly, on their own datasources."""
    assert [(r[1], r[3], r[4], r[6]) for r in _rows(_extract("perf-fixture"))] == [
        ("node", "24.19.0", "node", "core:node"),
        ("python", "3.14.7", "python", "core:python"),
        ("go", "1.26.5", "go", "core:go"),
    ]


def test_a_config_without_tools_has_no_rows() -> None:
    """Tasks-only config (jdx/mise crates/vfox) gives nothing and no problem."""
    assert _extract("no-tools") == ExtractResult()


def test_key_options_are_kept_out_of_the_backend() -> None:
    """`github:o/r[matching=x]` resolves to github:o/r; the key as written is the row's name."""
    text = '[tools]\n"github:oxc-project/oxc[matching=oxlint]" = "1.9.0"\n'
    (dep,) = mise_toml.extract("mise.toml", text, _no_read).dependencies
    assert (dep.name, dep.backend, dep.package_name, dep.line) == (
        "github:oxc-project/oxc[matching=oxlint]",
        "github:oxc-project/oxc",
        "oxc-project/oxc",
        2,
    )


@pytest.mark.parametrize(
    ("text", "message", "line"),
    [
        ("tools = 3\n", "`tools` must be a table", 1),
        (
            "[tools]\nnode = 20\n",
            "tool `node` must be a version string, a list or a table, not int",
            2,
        ),
        (
            "[tools]\nnode = { os = ['linux'] }\n",
            "tool `node`: a table needs a string `version` (or `prefix`, `ref`, `path`)",
            2,
        ),
        (
            "[tools]\nnode = [[1]]\n",
            "tool `node` must be a version string, a list or a table, not list",
            2,
        ),
    ],
)
def test_wrong_shapes_are_problems_with_their_line(text: str, message: str, line: int) -> None:
    """A value mise refuses is a problem naming the tool and the line, not a crash."""
    result = mise_toml.extract("mise.toml", text, _no_read)
    assert [(p.line, p.message) for p in result.problems] == [(line, message)]
    assert result.dependencies == ()


def test_invalid_toml_is_a_problem() -> None:
    """Invalid TOML is one problem with its line."""
    result = mise_toml.extract("mise.toml", "[tools]\nnode = \n", _no_read)
    assert [(p.line, p.message.startswith("invalid TOML")) for p in result.problems] == [(2, True)]


def test_hundred_thousand_tools_are_read_with_their_lines() -> None:
    """100,000 tools: one row each, lines found in one pass (no quadratic search)."""
    text = "[tools]\n" + "".join(f'"npm:pkg{i}" = "1.{i}"\n' for i in range(100_000))
    result = mise_toml.extract("mise.toml", text, _no_read)
    assert len(result.dependencies) == 100_000
    assert result.dependencies[-1].line == 100_001
    assert result.dependencies[-1].package_name == "pkg99999"


def test_deep_nesting_and_odd_encodings_end_as_problems() -> None:
    """Arrays nested past the parser's depth and NUL characters are problems, not crashes."""
    deep = mise_toml.extract(
        "mise.toml", "[tools]\nnode = " + "[" * 100_000 + "]" * 100_000, _no_read
    )
    assert deep.dependencies == ()
    assert len(deep.problems) == 1
    nul = mise_toml.extract("mise.toml", '[tools]\nnode = "2\x000"\n', _no_read)
    assert [p.message for p in nul.problems] == [
        "file contains NUL characters; not a text manifest"
    ]
    bom = mise_toml.extract("mise.toml", '\ufeff[tools]\nnode = "22"\n', _no_read)
    assert [(d.line, d.constraint) for d in bom.dependencies] == [(2, "22")]


def test_the_files_tool_alias_names_a_backend() -> None:
    """`[tool_alias]` (and the older `[alias]`) backends win over the registry for this file."""
    text = (
        '[tool_alias]\nterraform = "github:opentofu/opentofu"\n'
        '[alias.node.versions]\nmy_node = "18"\n'
        '[tools]\nterraform = "1.8"\nnode = "22"\n'
    )
    terraform, node = mise_toml.extract("mise.toml", text, _no_read).dependencies
    assert (terraform.backend, terraform.datasource, terraform.package_name) == (
        "github:opentofu/opentofu",
        "github-releases",
        "opentofu/opentofu",
    )
    assert node.backend == "core:node"
    old = mise_toml.extract(
        "mise.toml", '[alias]\nfoo = "cargo:foo-cli"\n[tools]\nfoo = "1"\n', _no_read
    )
    assert [d.backend for d in old.dependencies] == ["cargo:foo-cli"]
