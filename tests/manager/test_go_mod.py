from __future__ import annotations

import re
from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import go_mod
from patchula.models import ExtractResult

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "go_mod"
CORPUS = Path("/work/shared/corpus/prometheus__prometheus/go.mod")

Row = tuple[int | None, str, str, str, str | None, str | None, str | None]


def _no_read(path: str) -> str:
    raise ManifestError("no includes expected", file=path)


def _extract(case: str) -> ExtractResult:
    text = (FIXTURES / case / "go.mod").read_text(encoding="utf-8")
    return go_mod.extract("go.mod", text, _no_read)


def _text(text: str) -> ExtractResult:
    return go_mod.extract("svc/go.mod", text, _no_read)


def _rows(result: ExtractResult) -> list[Row]:
    return [
        (d.line, d.name, d.package_name, d.dep_type, d.declared, d.constraint, d.skip_reason)
        for d in result.dependencies
    ]


def _problems(result: ExtractResult) -> list[tuple[int | None, str]]:
    return [(p.line, p.message) for p in result.problems]


GO_SKIP = go_mod.GO_DIRECTIVE_SKIP


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("go.mod", True),
        ("internal/tools/go.mod", True),
        ("web/ui/mantine-ui/src/promql/tools/go.mod", True),
        ("go.work", False),
        ("go.sum", False),
        ("go.mod.bak", False),
        ("notgo.mod", False),
    ],
)
def test_matches_go_mod_by_basename_only(path: str, expected: bool) -> None:  # noqa: FBT001
    """Only files named exactly ``go.mod`` match; ``go.work`` and ``go.sum`` do not."""
    assert go_mod.matches(path) is expected


def test_plugin_ids() -> None:
    """The module declares its id, datasource and versioning by id string."""
    assert (go_mod.ID, go_mod.DATASOURCE, go_mod.VERSIONING) == ("go_mod", "goproxy", "go")


def test_prometheus_blocks_indirect_incompatible_and_pseudo_versions() -> None:
    """Prometheus' trimmed go.mod gives the go line, both require blocks and keeps line numbers."""
    result = _extract("prometheus")
    assert result.project_name == "github.com/prometheus/prometheus"
    assert result.problems == ()
    assert _rows(result) == [
        (3, "go", "go", "golang", "1.25.10", "1.25.10", GO_SKIP),
        (
            6,
            *["github.com/Azure/azure-sdk-for-go/sdk/azcore"] * 2,
            "require",
            "v1.22.0",
            "v1.22.0",
            None,
        ),
        (
            7,
            "github.com/alecthomas/units",
            "github.com/alecthomas/units",
            "require",
            "v0.0.0-20240927000941-0f3dac36c52b",
            "v0.0.0-20240927000941-0f3dac36c52b",
            None,
        ),
        (8, *["github.com/cespare/xxhash/v2"] * 2, "require", "v2.3.0", "v2.3.0", None),
        (
            9,
            "github.com/edsrzf/mmap-go",
            "github.com/edsrzf/mmap-go",
            "require",
            "v1.2.1-0.20241212181136-fad1cd13edbd",
            "v1.2.1-0.20241212181136-fad1cd13edbd",
            None,
        ),
        (
            10,
            *["github.com/envoyproxy/go-control-plane/envoy"] * 2,
            "require",
            "v1.37.0",
            "v1.37.0",
            None,
        ),
        (
            14,
            "github.com/docker/cli",
            "github.com/docker/cli",
            "indirect",
            "v29.6.1+incompatible",
            "v29.6.1+incompatible",
            None,
        ),
        (
            15,
            "golang.org/x/exp",
            "golang.org/x/exp",
            "indirect",
            "v0.0.0-20260709172345-9ea1abe57597",
            "v0.0.0-20260709172345-9ea1abe57597",
            None,
        ),
        (16, "golang.org/x/time", "golang.org/x/time", "require", "v0.15.0", "v0.15.0", None),
        (17, "gopkg.in/yaml.v3", "gopkg.in/yaml.v3", "indirect", "v3.0.1", "v3.0.1", None),
    ]


def test_prometheus_excludes_and_unrequired_replace_add_no_rows() -> None:
    """Exclude lines and a replace of a module that is not required produce no dependency."""
    names = {d.name for d in _extract("prometheus").dependencies}
    assert "github.com/linode/linodego" not in names
    assert "google.golang.org/api" not in names
    assert "cloud.google.com/go" not in names


def test_every_row_names_manager_datasource_and_versioning() -> None:
    """Requires name the goproxy datasource and go versioning; the go line go.dev's list."""
    result = _extract("asdf")
    assert {(d.manager, d.datasource, d.versioning, d.file) for d in result.dependencies} == {
        ("go_mod", "goproxy", "go", "go.mod"),
        # The go line is a Go release, on go.dev's list (Renovate's golang-version).
        ("go_mod", "go", "mise", "go.mod"),
    }


def test_asdf_indirect_block_and_prerelease_versions() -> None:
    """The asdf indirect block keeps prerelease pseudo-versions and ``v0.1.1-deprecated``."""
    result = _extract("asdf")
    assert result.problems == ()
    assert result.project_name == "github.com/asdf-vm/asdf"
    assert [(d.line, d.name, d.dep_type, d.constraint) for d in result.dependencies] == [
        (3, "go", "golang", "1.26.3"),
        (6, "github.com/go-git/go-git/v5", "require", "v5.19.1"),
        (7, "github.com/urfave/cli/v3", "require", "v3.3.3"),
        (8, "gopkg.in/ini.v1", "require", "v1.67.0"),
        (9, "honnef.co/go/tools", "require", "v0.5.1"),
        (13, "dario.cat/mergo", "indirect", "v1.0.0"),
        (14, "github.com/BurntSushi/toml", "indirect", "v1.4.1-0.20240526193622-a339e1f7089c"),
        (15, "github.com/go-git/gcfg", "indirect", "v1.5.1-0.20230307220236-3a3c6141e376"),
        (16, "golang.org/x/exp/typeparams", "indirect", "v0.0.0-20231108232855-2478ac86f678"),
        (17, "golang.org/x/tools/go/expect", "indirect", "v0.1.1-deprecated"),
    ]


def test_replace_to_module_path_and_local_directory() -> None:
    """Replacements redirect the lookup (path and version), keep declared, and skip directories."""
    result = _extract("replace")
    assert result.problems == ()
    assert _rows(result) == [
        (4, "go", "go", "golang", "1.22", "1.22", GO_SKIP),
        # A replace without an old version applies to every version.
        (7, "cloud.google.com/go", "cloud.google.com/go", "require", "v0.112.0", "v0.123.0", None),
        # A replace of this exact version wins over the one for all versions.
        (
            8,
            "github.com/grafana/regexp",
            "regexp-fork/regexp",
            "indirect",
            "v0.0.0-20250905093917-f7b3be9d1853",
            "v1.0.0",
            None,
        ),
        (
            9,
            "github.com/gogo/protobuf",
            "github.com/gogo/protobuf",
            "require",
            "v1.3.2",
            "v1.3.3-0.20221024144010-f67b8970b736",
            None,
        ),
        # The replace names v0.0.4 only, so the required v1.0.0 is looked up as itself.
        (
            10,
            "github.com/golang/snappy",
            "github.com/golang/snappy",
            "require",
            "v1.0.0",
            "v1.0.0",
            None,
        ),
        (
            11,
            "example.com/app/tools",
            "example.com/app/tools",
            "require",
            "v0.0.0-00010101000000-000000000000",
            "v0.0.0-00010101000000-000000000000",
            "replaced by a local path",
        ),
    ]


def test_placeholder_version_without_a_replace_here_is_skipped() -> None:
    """The zero pseudo-version names no commit: skipped unless a replace here gives a version."""
    placeholder = "v0.0.0-00010101000000-000000000000"
    text = (
        "module example.com/m\n"
        f"require example.com/sibling {placeholder}\n"
        f"require example.com/forked {placeholder}\n"
        "replace example.com/forked => example.com/fork v1.2.0\n"
    )
    assert _rows(_text(text)) == [
        (
            2,
            "example.com/sibling",
            "example.com/sibling",
            "require",
            placeholder,
            placeholder,
            f"placeholder version {placeholder}: provided by a replace outside this go.mod",
        ),
        (3, "example.com/forked", "example.com/fork", "require", placeholder, "v1.2.0", None),
    ]


def test_replace_applies_wherever_it_appears_in_the_file() -> None:
    """A replace written before its require still applies (go.mod directives are unordered)."""
    text = (
        "module example.com/m\n"
        "replace github.com/gogo/protobuf => ../protobuf\n"
        "require github.com/gogo/protobuf v1.3.2\n"
    )
    assert _rows(_text(text)) == [
        (
            3,
            "github.com/gogo/protobuf",
            "github.com/gogo/protobuf",
            "require",
            "v1.3.2",
            "v1.3.2",
            "replaced by a local path",
        )
    ]


def test_toolchain_quoted_paths_single_line_forms() -> None:
    """``toolchain``, quoted and raw-quoted paths, ``//indirect`` and other directives are read."""
    result = _extract("toolchain")
    assert result.problems == ()
    assert result.project_name == "example.com/tool/v2"
    assert _rows(result) == [
        (3, "go", "go", "golang", "1.22.0", "1.22.0", GO_SKIP),
        (5, "go", "go", "toolchain", "go1.22.1", "1.22.1", None),
        (
            7,
            "github.com/urfave/cli/v3",
            "github.com/urfave/cli/v3",
            "require",
            "v3.3.3",
            "v3.3.3",
            None,
        ),
        (8, *["github.com/go-git/go-git/v5"] * 2, "indirect", "v5.19.1", "v5.19.1", None),
        (9, "gopkg.in/ini.v1", "gopkg.in/ini.v1", "indirect", "v1.67.0", "v1.67.0", None),
    ]


@pytest.mark.parametrize(
    ("line", "constraint"),
    [
        ("go 1.21", "1.21"),
        ("go 1.21rc1", "1.21rc1"),
        ("toolchain go1.22rc1", "1.22rc1"),
        ("toolchain go1.21.3-custom", "1.21.3"),
        ("toolchain default", None),
    ],
)
def test_go_release_names_map_to_module_versions(line: str, constraint: str | None) -> None:
    """Go release names become go.dev's spelling without ``go`` (a custom build's release)."""
    result = _text(f"module example.com/m\n{line}\n")
    assert result.problems == ()
    assert [(d.name, d.constraint) for d in result.dependencies] == [("go", constraint)]


def test_indirect_comment_with_more_text() -> None:
    """``// indirect; reason`` marks indirect, ``// indirectly`` or another comment does not."""
    text = (
        "require (\n"
        "\tgolang.org/x/mod v0.35.0 // indirect; needed by tools\n"
        "\tgolang.org/x/net v0.55.0 // indirectly\n"
        "\tgolang.org/x/sync v0.20.0 // keep\n"
        ")\n"
    )
    assert [(d.name, d.dep_type) for d in _text(text).dependencies] == [
        ("golang.org/x/mod", "indirect"),
        ("golang.org/x/net", "require"),
        ("golang.org/x/sync", "require"),
    ]


def test_bad_lines_are_problems_and_good_lines_survive() -> None:
    """Each malformed line is one problem with its line; the well-formed requires are kept."""
    result = _extract("bad-lines")
    assert [(d.line, d.name) for d in result.dependencies] == [
        (13, "github.com/rogpeppe/go-internal"),
        (15, "golang.org/x/sys"),
    ]
    assert _problems(result) == [
        (3, "usage: go 1.23 (a Go release such as 1.21 or 1.22.1)"),
        (5, "usage: require module/path v1.2.3"),
        (6, "invalid module version '1.11.1': must be of the form v1.2.3"),
        (7, "github.com/go-git/go-git/v5 v4.0.0: should be v5, not v4"),
        (8, "github.com/docker/cli v29.6.1: a v29 module needs a /v29 path or +incompatible"),
        (9, "invalid module version 'v1.7': must be of the form v1.2.3"),
        (10, "unknown directive: frobnicate"),
        (
            11,
            (
                "replacement module without version must be directory path "
                "(rooted or starting with ./ or ../)"
            ),
        ),
        (14, "usage: require module/path v1.2.3"),
        (12, "require block is never closed with ')'"),
    ]
    assert {p.file for p in result.problems} == {"go.mod"}


@pytest.mark.parametrize(
    ("text", "problem"),
    [
        ("module a\nmodule b\n", (2, "repeated module statement")),
        (
            "require example.com/m v1.0.0+incompatible\n",
            (1, "example.com/m v1.0.0+incompatible: +incompatible needs major version 2 or higher"),
        ),
        (
            "require example.com/m/v2 v2.0.0+incompatible\n",
            (
                1,
                (
                    "example.com/m/v2 v2.0.0+incompatible: "
                    "+incompatible is not allowed with a /v2 path"
                ),
            ),
        ),
        (
            "replace example.com/m v1.0.0\n",
            (1, "usage: replace module/path [v1.2.3] => other/path v1.4.5"),
        ),
        (
            "replace example.com/m => ./m v1.0.0\n",
            (1, "replacement directory cannot have a version"),
        ),
        ("replace example.com/m => example.com/n master\n", (1, "invalid module version 'master'")),
        ("replace a => ./a\nreplace a => ./b\n", (2, "multiple replacements for a")),
        ("exclude example.com/m\n", (1, "usage: exclude module/path v1.2.3")),
        ("retract\n", (1, "usage: retract needs arguments")),
        ("module (\n)\n", (1, "unknown block type: module")),
        ("require example.com/m v1.0.0 {\n", (1, "usage: require module/path v1.2.3")),
        ("require example.com/m v1.0.0 \x01\n", (1, "unexpected character '\\x01'")),
    ],
)
def test_malformed_directives(text: str, problem: tuple[int, str]) -> None:
    """Each malformed directive becomes one problem naming its line, and nothing is raised."""
    assert _problems(_text(text)) == [problem]
    assert _text(text).dependencies == ()


def test_empty_and_nul_files() -> None:
    """An empty go.mod gives nothing; NUL bytes give one problem and no rows."""
    assert _text("") == ExtractResult()
    result = _text("module m\n\x00\n")
    assert _problems(result) == [(2, "file contains NUL characters; not a text manifest")]
    assert result.dependencies == ()


def test_bom_and_crlf_are_tolerated() -> None:
    """A byte-order mark and CRLF line ends do not change rows or lines."""
    result = _text("\ufeffmodule example.com/m\r\n\r\nrequire golang.org/x/sys v0.45.0\r\n")
    assert result.project_name == "example.com/m"
    assert [(d.line, d.name, d.constraint) for d in result.dependencies] == [
        (3, "golang.org/x/sys", "v0.45.0")
    ]


def test_retract_exclude_and_empty_block_are_accepted() -> None:
    """Retract intervals, exclude blocks with comments and ``require ()`` parse without problems."""
    text = (
        "module example.com/m\n"
        "require ()\n"
        "retract (\n"
        "\tv1.0.0 // corrupt\n"
        "\t[v1.1.0, v1.2.0]\n"
        ")\n"
        "exclude (\n"
        "\t// Fixing ambiguous import.\n"
        "\tgoogle.golang.org/genproto v0.0.0-20230410155749-daa745c078e1\n"
        ")\n"
    )
    assert _text(text) == ExtractResult(project_name="example.com/m")


@pytest.mark.skipif(not CORPUS.is_file(), reason="shared corpus not present")
def test_whole_prometheus_go_mod_reads_without_problems() -> None:
    """The untrimmed prometheus go.mod yields every require line and no problem."""
    text = CORPUS.read_text(encoding="utf-8")
    result = go_mod.extract("go.mod", text, _no_read)
    assert result.problems == ()
    requires = [d for d in result.dependencies if d.name != "go"]
    assert len(requires) == 250
    pseudo = re.compile(r"[0-9]{14}-[0-9a-f]{12}$")
    assert sum(1 for d in requires if pseudo.search(d.constraint or "")) == 30


def test_a_huge_version_is_named_briefly() -> None:
    """A 5,000-digit version is a problem whose message quotes its start and its length."""
    huge = "v1." + "9" * 5000 + ".0"
    text = f"module x.example/m\n\ngo 1.21\n\nrequire example.com/m {huge}\n"
    result = go_mod.extract("go.mod", text, _no_read)
    [problem] = result.problems
    assert problem.line == 5
    assert problem.message.startswith("invalid module version 'v1.99999")
    assert "(5005 characters)" in problem.message
    assert len(problem.message) < 120


def test_excluded_versions_ride_on_the_row_of_the_path_looked_up() -> None:
    """``exclude`` lines (single and block) give the row of that module path its ``excluded``."""
    result = _text(
        "module example.com/app\n\n"
        "require (\n\texample.com/a v1.0.0\n\texample.com/b v1.0.0\n)\n\n"
        "exclude example.com/a v1.3.0\n"
        "exclude (\n\texample.com/a v1.4.0 // broken\n\texample.com/other v2.0.0\n)\n"
    )
    assert {d.name: d.excluded for d in result.dependencies} == {
        "example.com/a": ("v1.3.0", "v1.4.0"),
        "example.com/b": (),
    }
    assert result.problems == ()
