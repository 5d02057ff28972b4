"""Discovery: which files of a checkout are read, and which are skipped."""

from __future__ import annotations

from pathlib import Path

from patchula.discovery import discover
from patchula.settings import DEFAULT_IGNORE_PATHS


def _touch(root: Path, rel: str, text: str = "{}") -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(text)


def test_finds_manifests_and_skips_noise(tmp_path: Path) -> None:
    """Manifests are found; .git, node_modules, virtualenvs and test fixtures are skipped."""
    for rel in [
        "package.json",
        "package-lock.json",
        "web/package.json",
        "requirements.txt",
        "svc/pyproject.toml",
        ".git/package.json",
        "node_modules/left-pad/package.json",
        "env/pyvenv.cfg",
        "env/lib/package.json",
        "tests/fixtures/package.json",
        "README.md",
    ]:
        _touch(tmp_path, rel)
    found = discover(tmp_path, DEFAULT_IGNORE_PATHS)
    assert [(f.path, f.manager) for f in found.files] == [
        ("package-lock.json", "package_lock"),
        ("package.json", "package_json"),
        ("requirements.txt", "requirements_txt"),
        ("svc/pyproject.toml", "pyproject"),
        ("web/package.json", "package_json"),
    ]


def test_gitignore_is_honoured_per_directory(tmp_path: Path) -> None:
    """A .gitignore excludes paths below its own directory, with negation."""
    _touch(tmp_path, ".gitignore", "build/\n")
    _touch(tmp_path, "build/package.json")
    _touch(tmp_path, "app/.gitignore", "generated/\n/local.txt\n")
    _touch(tmp_path, "app/generated/requirements.txt", "")
    _touch(tmp_path, "app/requirements.txt", "")
    _touch(tmp_path, "other/generated/requirements.txt", "")
    found = discover(tmp_path, [])
    assert [f.path for f in found.files] == [
        "app/requirements.txt",
        "other/generated/requirements.txt",
    ]


def test_symlinks_never_leave_the_checkout(tmp_path: Path) -> None:
    """A symlinked file pointing outside is refused; symlinked directories are not entered."""
    outside = tmp_path / "outside"
    _touch(outside, "package.json")
    repo = tmp_path / "repo"
    _touch(repo, "real/package.json")
    (repo / "package.json").symlink_to(outside / "package.json")
    (repo / "linked").symlink_to(outside)
    (repo / "real" / "alias-package.json").symlink_to(repo / "real" / "package.json")
    found = discover(repo, [])
    assert [f.path for f in found.files] == ["real/package.json"]
    assert found.refused == [("package.json", "symlink pointing outside the checkout")]


def test_only_the_chosen_managers_find_files(tmp_path: Path) -> None:
    """Managers left out find nothing: their files are neither listed nor warned about."""
    for rel in ["Cargo.toml", "Cargo.lock", "requirements.txt", "bun.lockb", "package.json"]:
        _touch(tmp_path, rel)
    found = discover(tmp_path, [], ["requirements_txt", "cargo_lock"])
    assert [(f.path, f.manager) for f in found.files] == [
        ("Cargo.lock", "cargo_lock"),
        ("requirements.txt", "requirements_txt"),
    ]
    assert found.unread_lockfiles == {}  # bun.lockb: no npm manager runs
    assert discover(tmp_path, []).unread_lockfiles == {"bun.lockb": "npm"}
