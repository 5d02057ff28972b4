"""Discovery: which files of a checkout are read, and which are skipped."""

from __future__ import annotations

from pathlib import Path

from patchula.discovery import (
    REMOTE_SYMLINK,
    directory_skipper,
    discover,
    discover_paths,
    too_large,
)
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


# A checkout's noise, laid out as files: what a walk and a path list must both skip alike.
LAYOUT = [
    "package.json",
    "a/package.json",
    "a-b/Cargo.toml",
    "a/b/requirements.txt",
    "node_modules/left-pad/package.json",
    "web/node_modules/x/package.json",
    "env/pyvenv.cfg",
    "env/lib/package.json",
    "tests/fixtures/package.json",
    "pkg/vendor/go.mod",
    "bun.lockb",
    "lib/package.json/keep.txt",  # a directory named like a manifest
    "Dockerfile",
    "README.md",
]


def test_a_path_list_is_discovered_like_the_walk(tmp_path: Path) -> None:
    """``discover_paths`` over a checkout's file list finds, skips and refuses as the walk."""
    for rel in LAYOUT:
        _touch(tmp_path, rel)
    walked = discover(tmp_path, DEFAULT_IGNORE_PATHS)
    listed = discover_paths([(rel, False) for rel in reversed(LAYOUT)], DEFAULT_IGNORE_PATHS)
    assert listed.files == walked.files
    assert listed.refused == walked.refused
    assert listed.unread_lockfiles == walked.unread_lockfiles == {"bun.lockb": "npm"}
    assert [f.path for f in listed.files] == [
        "Dockerfile",
        "package.json",
        "a-b/Cargo.toml",
        "a/package.json",
        "a/b/requirements.txt",
    ]
    assert listed.refused == [("lib/package.json", "not a regular file (directory)")]


def test_a_path_list_refuses_symlinks_a_manager_would_read() -> None:
    """A symlink in a remote tree is refused with a reason when named like a manifest."""
    found = discover_paths(
        [("package.json", True), ("docs/link.md", True), ("web/package.json", False)], ()
    )
    assert found.refused == [("package.json", REMOTE_SYMLINK)]
    assert [f.path for f in found.files] == ["web/package.json"]


def test_the_directory_skipper_prunes_by_name_and_glob() -> None:
    """What a remote tree reader may leave unlisted: skipped names and ignore-glob matches."""
    skip = directory_skipper(DEFAULT_IGNORE_PATHS)
    assert skip("node_modules")
    assert skip("web/.git")
    assert skip("src/tests")
    assert not skip("src")
    assert not skip("")
    assert not skip("env")  # a virtual environment is known only once listed (pyvenv.cfg)


def test_the_size_refusal_reads_in_a_unit_that_tells_the_numbers_apart() -> None:
    """Bytes under a KiB limit, KiB or MiB above; finer units when the two would read alike."""
    assert too_large(2345, 1000) == "file is 2,345 bytes, over the 1,000-byte limit; not read"
    assert too_large(4096, 1024) == "file is 4.0 KiB, over the 1 KiB limit; not read"
    assert too_large(70000, 65536) == "file is 68.4 KiB, over the 64 KiB limit; not read"
    assert too_large(3 << 20, 1 << 20) == "file is 3.0 MiB, over the 1 MiB limit; not read"
    assert too_large(1500000, 1 << 20) == "file is 1.4 MiB, over the 1 MiB limit; not read"
    assert too_large((1 << 20) + 1, 1 << 20) == (
        "file is 1,048,577 bytes, over the 1,048,576-byte limit; not read"
    )
