"""``--targets-file FILE``: one target a line, comments, and its errors as usage errors."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from patchula.errors import ConfigError
from patchula.targets import read_targets_file

runner = CliRunner()


def _file(tmp_path: Path, data: bytes) -> Path:
    path = tmp_path / "repos.txt"
    path.write_bytes(data)
    return path


def test_comments_blank_lines_and_whitespace_are_skipped(tmp_path: Path) -> None:
    """'#' at a line's start or after a space or tab starts a comment; a '#' inside a word stays."""
    path = _file(
        tmp_path,
        b"# the fleet\n"
        b"\n"
        b"   \t\n"
        b"github:acme/api\n"
        b"  github:acme/web  # the site\n"
        b"github:acme/docs\t# docs\n"
        b"   # indented comment\n"
        b"checkouts/issue#12\n",
    )
    assert read_targets_file(path) == [
        "github:acme/api",
        "github:acme/web",
        "github:acme/docs",
        "checkouts/issue#12",
    ]


def test_a_bom_and_crlf_line_ends_are_not_part_of_a_target(tmp_path: Path) -> None:
    """A UTF-8 BOM (Windows editors) and CRLF line ends do not reach the targets."""
    path = _file(tmp_path, b"\xef\xbb\xbfgithub:acme/api\r\n# c\r\ngithub:acme/web # w\r\n")
    assert read_targets_file(path) == ["github:acme/api", "github:acme/web"]


def test_a_bom_before_a_comment_keeps_it_a_comment(tmp_path: Path) -> None:
    """A BOM followed by '#' on the first line is a comment, not a target."""
    path = _file(tmp_path, b"\xef\xbb\xbf# fleet\ngithub:acme/api\n")
    assert read_targets_file(path) == ["github:acme/api"]


def test_a_bom_opening_a_later_line_is_dropped(tmp_path: Path) -> None:
    """Two BOM-opened files concatenated: the second BOM does not reach a target."""
    path = _file(tmp_path, b"\xef\xbb\xbfgithub:acme/api\r\n\xef\xbb\xbfgithub:acme/web\r\n")
    assert read_targets_file(path) == ["github:acme/api", "github:acme/web"]


def test_non_utf8_text_names_the_file_and_line(tmp_path: Path) -> None:
    """A Latin-1 byte on line 3 is a ConfigError naming the file and line 3."""
    path = _file(tmp_path, b"github:acme/api\n# ok\ncaf\xe9\n")
    with pytest.raises(ConfigError, match=r"repos\.txt, line 3: not UTF-8 text"):
        read_targets_file(path)


def test_a_nul_byte_names_the_file_and_line(tmp_path: Path) -> None:
    """A NUL inside a target is refused, naming the line."""
    path = _file(tmp_path, b"github:acme/api\nrepo\x00x\n")
    with pytest.raises(ConfigError, match="line 2: NUL byte"):
        read_targets_file(path)


def test_a_directory_or_a_missing_file_cannot_be_read(tmp_path: Path) -> None:
    """A directory and a missing path are ConfigErrors naming them."""
    with pytest.raises(ConfigError, match=r"--targets-file .*: cannot read"):
        read_targets_file(tmp_path)
    with pytest.raises(ConfigError, match=r"missing\.txt: cannot read: No such file"):
        read_targets_file(tmp_path / "missing.txt")


def _checkout(root: Path, name: str) -> Path:
    repo = root / name
    repo.mkdir(parents=True)
    (repo / "package.json").write_text("{}\n")
    return repo


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any] | None, str]:
    result = runner.invoke(app, ["run", "--no-cache", "--format", "json", *args], env=env)
    report = json.loads(result.stdout) if result.exit_code == 0 else None
    return result.exit_code, report, result.stderr


def _targets(report: dict[str, Any] | None) -> list[str]:
    assert report is not None
    return [r["target"] for r in report["repositories"]]


def test_arguments_come_first_then_the_file_and_repeats_scan_once(tmp_path: Path) -> None:
    """Targets of the arguments and the file are all scanned, each once, arguments first."""
    one, two, three = (str(_checkout(tmp_path, n)) for n in ("one", "two", "three"))
    listing = _file(tmp_path, f"{two}\n{three}\n{one}  # again\n{two}\n".encode())
    code, report, _ = _run(one, "--targets-file", str(listing))
    assert code == 0
    assert _targets(report) == [one, two, three]
    assert report is not None
    assert report["summary"]["repositories"] == 3


def test_patchula_targets_file_is_read(tmp_path: Path) -> None:
    """``PATCHULA_TARGETS_FILE`` names the file when the flag is not given."""
    one = str(_checkout(tmp_path, "one"))
    listing = _file(tmp_path, f"{one}\n".encode())
    code, report, _ = _run(env={"PATCHULA_TARGETS_FILE": str(listing)})
    assert code == 0
    assert _targets(report) == [one]


def test_an_empty_targets_file_scans_nothing_not_the_working_directory(tmp_path: Path) -> None:
    """A file of comments only, and no arguments: zero repositories ('.' is only the default)."""
    listing = _file(tmp_path, b"# nothing yet\n")
    code, report, _ = _run("--targets-file", str(listing))
    assert code == 0
    assert _targets(report) == []


@pytest.mark.parametrize(
    ("data", "expected"),
    [
        (b"ok\n\xff\xfe\n", "repos.txt, line 2: not UTF-8 text"),
        (None, "missing.txt: cannot read"),
    ],
)
def test_an_unreadable_targets_file_is_a_usage_error(
    tmp_path: Path, data: bytes | None, expected: str
) -> None:
    """Bad text or a missing file: exit 2, the message names the flag, the file (and line)."""
    path = _file(tmp_path, data) if data is not None else tmp_path / "missing.txt"
    code, _, stderr = _run("--targets-file", str(path))
    assert code == 2
    assert "--targets-file" in stderr
    assert expected in stderr
    assert "Traceback" not in stderr


def test_the_dashboard_check_sees_the_targets_of_the_file(tmp_path: Path) -> None:
    """--dashboard over a manifest of a checkout listed only in the targets file is refused."""
    repo = _checkout(tmp_path, "repo")
    listing = _file(tmp_path, f"{repo}\n".encode())
    manifest = repo / "package.json"
    code, _, stderr = _run("--targets-file", str(listing), "--dashboard", str(manifest))
    assert code == 2
    assert "cannot write dashboard" in stderr
    assert manifest.read_text() == "{}\n"
