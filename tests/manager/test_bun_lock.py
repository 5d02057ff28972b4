from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import bun_lock
from patchula.models import ExtractResult, Lockfile

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "bun_lock"


def _no_read(path: str) -> str:
    raise ManifestError("lockfiles have no includes", file=path)


def _extract(case: str, path: str = "bun.lock") -> ExtractResult:
    text = (FIXTURES / case / "bun.lock").read_text(encoding="utf-8")
    return bun_lock.extract(path, text, _no_read)


def _lockfile(result: ExtractResult) -> Lockfile:
    assert result.lockfile is not None
    return result.lockfile


def _paths(result: ExtractResult) -> dict[str, tuple[str, str, int | None]]:
    return {p.install_path: (p.name, p.version, p.line) for p in _lockfile(result).packages}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("bun.lock", True),
        ("apps/web/bun.lock", True),
        ("bun.lockb", False),  # binary: discovery warns about it (UNREAD_REASONS)
        ("node_modules/a/bun.lock", False),
    ],
)
def test_matches_the_text_lockfile_only(path: str, *, expected: bool) -> None:
    """bun.lock matches; the binary bun.lockb is not read by this manager."""
    assert bun_lock.matches(path) is expected


def test_workspaces_aliases_links_and_nested_versions() -> None:
    """Trailing commas parse; workspace links and git are out; `ws/dep` is the member's own."""
    result = _extract("workspaces-trailing-commas")
    assert result.problems == ()
    assert _paths(result) == {
        "node_modules/react": ("react", "18.3.1", 27),
        "node_modules/string-width-cjs": ("string-width", "4.2.3", 29),
        "node_modules/typescript": ("typescript", "5.4.5", 31),
        "packages/app/node_modules/react": ("react", "17.0.2", 33),
    }
    assert _lockfile(result).members == frozenset({"", "packages/app"})


def test_comments_are_blank_and_strings_keep_slashes() -> None:
    """Line and block comments go; a URL inside a string is kept; lines stay where they were."""
    result = _extract("comments")
    assert result.problems == ()
    assert _paths(result) == {"node_modules/left-pad": ("left-pad", "1.3.0", 7)}


def test_json_text_keeps_length_and_lines() -> None:
    """The JSONC transform blanks comments and trailing commas without moving any offset."""
    text = '{"a": "x // y", /* c\n d */ "b": [1, 2,],\n}'
    cleaned = bun_lock.json_text(text)
    assert len(cleaned) == len(text)
    assert cleaned.count("\n") == text.count("\n")
    assert json.loads(cleaned) == {"a": "x // y", "b": [1, 2]}


def test_not_json_is_a_problem_with_its_line() -> None:
    """A truncated bun.lock is an invalid-JSON problem, not an exception."""
    result = _extract("not-json")
    assert result.lockfile is None
    assert result.problems[0].message.startswith("invalid JSON")


def test_unknown_version_is_a_warning() -> None:
    """A lockfileVersion bun never wrote is a warning; packages are read anyway."""
    text = '{"lockfileVersion": 7, "packages": {"a": ["a@1.0.0", "", {}, ""]}}'
    result = bun_lock.extract("bun.lock", text, _no_read)
    assert [(p.line, p.severity) for p in result.problems] == [(1, "warning")]
    assert _paths(result) == {"node_modules/a": ("a", "1.0.0", 1)}


def test_hostile_unterminated_comments_are_linear() -> None:
    """100,000 unterminated block comments and a huge key count end quickly as a problem."""
    result = bun_lock.extract("bun.lock", '{"a": 1, ' + "/* , " * 100_000, _no_read)
    assert result.lockfile is None
    entries = ", ".join(f'"p{i}": ["p{i}@1.0.{i % 10}", "", {{}}, ""]' for i in range(100_000))
    big = bun_lock.extract(
        "bun.lock", '{"lockfileVersion": 1, "packages": {' + entries + "}}", _no_read
    )
    assert len(_lockfile(big).packages) == 100_000
