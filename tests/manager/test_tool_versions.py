"""The .tool-versions manager on asdf's own files and the special values mise and asdf read."""

from __future__ import annotations

from pathlib import Path

from patchula.errors import ManifestError
from patchula.manager import tool_versions
from patchula.models import ExtractResult
from patchula.scan import _decoding, _Reader

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "tool_versions"


def _no_read(path: str) -> str:
    raise ManifestError("not served", file=path)


def _extract(case: str) -> ExtractResult:
    text = (FIXTURES / case / ".tool-versions").read_text(encoding="utf-8")
    return tool_versions.extract(f"{case}/.tool-versions", text, _no_read)


def test_matches_only_tool_versions_files() -> None:
    """The file name decides, in any directory."""
    assert tool_versions.matches(".tool-versions")
    assert tool_versions.matches("docs/.tool-versions")
    assert not tool_versions.matches("tool-versions")
    assert not tool_versions.matches(".tool-versions.bak")


def test_asdf_plugin_names_resolve_as_mise_unaliases_them() -> None:
    """Asdf's own file: `golang` is mise's `go` (core:go); the aqua tools go to GitHub releases."""
    rows = [
        (d.line, d.name, d.declared, d.datasource, d.package_name, d.backend)
        for d in _extract("asdf").dependencies
    ]
    assert rows == [
        (1, "bats", "1.8.2", "github-releases", "bats-core/bats-core", "aqua:bats-core/bats-core"),
        (
            2,
            "shellcheck",
            "0.10.0",
            "github-releases",
            "koalaman/shellcheck",
            "aqua:koalaman/shellcheck",
        ),
        (3, "shfmt", "3.6.0", "github-releases", "mvdan/sh", "aqua:mvdan/sh"),
        (4, "golang", "1.26.3", "go", "go", "core:go"),
    ]
    (node,) = _extract("asdf-docs").dependencies
    assert (node.name, node.package_name, node.backend, node.constraint) == (
        "nodejs", "node", "core:node", "22.10.0"
    )  # fmt: skip


def test_fallbacks_comments_and_special_values() -> None:
    """Every version of a line is a row; comments are dropped; system/ref:/path:/sub- skipped."""
    result = _extract("special-values")
    rows = [(d.line, d.name, d.declared, d.constraint, d.skip_reason) for d in result.dependencies]
    assert rows == [
        (2, "nodejs", "20.11.1", "20.11.1", None),
        (3, "python", "3.12.4", "3.12.4", None),
        (3, "python", "3.11.9", "3.11.9", None),
        (
            3,
            "python",
            "system",
            None,
            "uses the tool installed on the system: no version to compare",
        ),
        (4, "erlang", "ref:OTP-27.0", None, "a VCS ref is not a release: no version to compare"),
        (5, "elixir", "path:~/src/elixir", None, "a local path: no version to compare"),
        (6, "terraform", "latest", None, None),
        (7, "go", "prefix:1.22", "1.22", None),
        (8, "node", "lts", "lts", None),
        (
            9,
            "python",
            "sub-0.1:latest",
            None,
            "a version relative to another (sub-X:…) is not a release: not looked up",
        ),
    ]
    assert all(d.dep_type == "tool-versions" for d in result.dependencies)


def test_a_tool_without_a_version_is_a_problem() -> None:
    """A lone tool name is a problem at its line; the next lines are still read."""
    result = tool_versions.extract(".tool-versions", "nodejs\npython 3.12.4\n", _no_read)
    assert [(p.line, p.message) for p in result.problems] == [(1, "tool 'nodejs' has no version")]
    assert [d.declared for d in result.dependencies] == ["3.12.4"]


def test_a_byte_that_is_not_utf8_costs_only_its_line(tmp_path: Path) -> None:
    """A bad byte on line 3 is a problem there; lines 1, 2 and 4 are read (asdf splits words).

    Through the scan: the reader refuses the file as not UTF-8, the manager's ``decode`` keeps
    the bytes, and ``extract`` names the line. A bad byte in a comment is ignored, as asdf does.
    """
    data = b"nodejs 20.11.0\npython 3.12.4  # caf\xe9\nruby 3.\xff\ngolang 1.22.0\n"
    (tmp_path / ".tool-versions").write_bytes(data)
    read = _decoding(_Reader(tmp_path.resolve(), 1024), tool_versions.decode)
    result = tool_versions.extract(".tool-versions", read(".tool-versions"), _no_read)
    assert [(d.line, d.name, d.declared) for d in result.dependencies] == [
        (1, "nodejs", "20.11.0"),
        (2, "python", "3.12.4"),
        (4, "golang", "1.22.0"),
    ]
    assert [(p.line, p.message) for p in result.problems] == [
        (3, "not UTF-8 text (invalid byte 0xff); this line is not read")
    ]


def test_hostile_files_end_as_rows_or_problems() -> None:
    """100,000 tools, a huge line, NUL characters and odd encodings never raise."""
    many = tool_versions.extract(
        ".tool-versions", "".join(f"tool{i} 1.{i}\n" for i in range(100_000)), _no_read
    )
    assert len(many.dependencies) == 100_000
    assert many.dependencies[-1].line == 100_000
    wide = tool_versions.extract(".tool-versions", "x" + " =" * 200_000 + "\n", _no_read)
    assert [p.message for p in wide.problems] == [
        "tool 'x' has 200000 versions (more than 100); not read"
    ]
    huge = tool_versions.extract(".tool-versions", "node " + "9" * 1_000_000 + "\n", _no_read)
    assert len(huge.dependencies) == 1
    nul = tool_versions.extract(".tool-versions", "node 20\x00\n", _no_read)
    assert [p.message for p in nul.problems] == [
        "file contains NUL characters; not a text manifest"
    ]
    odd = tool_versions.extract(".tool-versions", "\ufeffnode\u00a020\u2028x 1\n", _no_read)
    assert isinstance(odd, ExtractResult)
