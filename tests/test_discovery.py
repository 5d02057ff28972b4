"""Discovery: which files of a checkout are read, and which are skipped."""

from __future__ import annotations

import os
import random
import shutil
import subprocess
from pathlib import Path

import pathspec
import pytest

from patchula import discovery as discovery_module
from patchula import git as git_module
from patchula.discovery import (
    MAX_SYMLINK_HOPS,
    REMOTE_SYMLINK,
    TreePath,
    directory_skipper,
    discover,
    discover_paths,
    resolve_tree_path,
    too_large,
    tracked_paths,
    tree_symlink_refusal,
)
from patchula.settings import DEFAULT_IGNORE_PATHS

needs_git = pytest.mark.skipif(shutil.which("git") is None, reason="needs a git executable")


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
    # What the globs kept out is said, alike; node_modules and the virtualenv are not counted.
    assert listed.ignored == walked.ignored == ["pkg/vendor/go.mod", "tests/fixtures/package.json"]


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


def _git(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    subprocess.run(  # noqa: S603 - the test's own git commands
        ["git", *args],  # noqa: S607 - git from PATH, as the product finds it
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )


# A checkout whose .gitignore matches files git tracks (force-added, as djangoproject's uv.lock
# under ``*.lock``) and files it does not.
IGNORED_LAYOUT = {
    ".gitignore": "*.lock\ndocs/\next/\n",
    "pyproject.toml": '[project]\nname = "app"\n',
    "uv.lock": "version = 1\n",  # tracked
    "poetry.lock": "",  # not tracked: ignored
    "docs/requirements.txt": "",  # tracked, in an ignored directory
    "docs/sub/requirements.txt": "",  # tracked, deeper
    "docs/_build/requirements.txt": "",  # not tracked: ignored
    "docs/tests/requirements.txt": "",  # tracked, but under the ignore-paths glob **/tests/**
    "docs/env/pyvenv.cfg": "",  # tracked: a virtual environment
    "docs/env/requirements.txt": "",  # tracked, inside the virtual environment
    "ext/node_modules/x/package.json": "{}",  # tracked, under node_modules
    "ext/lib/package.json/keep.txt": "",  # tracked, in a directory named like a manifest
}
UNTRACKED = ("poetry.lock", "docs/_build/requirements.txt")


def _ignored_checkout(root: Path) -> Path:
    for rel, text in IGNORED_LAYOUT.items():
        _touch(root, rel, text)
    _git(root, "init", "-q")
    _git(root, "add", "-f", "--", *(rel for rel in IGNORED_LAYOUT if rel not in UNTRACKED))
    return root


@needs_git
def test_tracked_files_a_gitignore_matches_are_found(tmp_path: Path) -> None:
    """Git never ignores a tracked file: a force-added uv.lock and docs/ files are read."""
    root = _ignored_checkout(tmp_path)
    found = discover(root, DEFAULT_IGNORE_PATHS)
    assert [(f.path, f.manager) for f in found.files] == [
        ("pyproject.toml", "pyproject"),
        ("uv.lock", "uv_lock"),
        ("docs/requirements.txt", "requirements_txt"),
        ("docs/sub/requirements.txt", "requirements_txt"),
    ]
    # The walk refuses a tracked directory named like a manifest as it refuses any.
    assert found.refused == [("ext/lib/package.json", "not a regular file (directory)")]
    assert discover(root, [], ["uv_lock"]).files == [found.files[1]]
    assert tracked_paths(root, ["uv.lock", "docs/sub/", "poetry.lock"]) == {
        "uv.lock",
        "docs/sub/requirements.txt",
    }


@needs_git
def test_too_many_skipped_paths_ask_git_about_everything_once(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Pathspecs too long to pass: git lists every tracked file, the answer is filtered."""
    root = _ignored_checkout(tmp_path)
    expected = discover(root, DEFAULT_IGNORE_PATHS)
    monkeypatch.setattr(discovery_module, "MAX_PATHSPEC_BYTES", 0)
    assert tracked_paths(root, ["uv.lock", "docs/sub/"]) == {"uv.lock", "docs/sub/requirements.txt"}
    found = discover(root, DEFAULT_IGNORE_PATHS)
    assert (found.files, found.refused) == (expected.files, expected.refused)


@needs_git
def test_a_walk_below_the_top_of_the_repository_finds_its_tracked_files(tmp_path: Path) -> None:
    """A scanned directory inside a repository: git's paths are taken relative to it."""
    _ignored_checkout(tmp_path)
    (tmp_path / "app").mkdir()
    _touch(tmp_path, "app/.gitignore", "*.lock\n")
    _touch(tmp_path, "app/Cargo.lock", "version = 3\n")
    _touch(tmp_path, "app/Cargo.toml", '[package]\nname = "a"\n')
    _git(tmp_path, "add", "-f", "app")
    assert tracked_paths(tmp_path / "app", ["Cargo.lock"]) == {"Cargo.lock"}
    assert [f.path for f in discover(tmp_path / "app", []).files] == ["Cargo.lock", "Cargo.toml"]


@needs_git
def test_pathspecs_are_literal(tmp_path: Path) -> None:
    """A skipped path with glob characters names that path alone, never what it would match."""
    _touch(tmp_path, "[ab].lock")
    _touch(tmp_path, "a.lock")
    _git(tmp_path, "init", "-q")
    _git(tmp_path, "add", "-f", "a.lock")
    assert tracked_paths(tmp_path, ["[ab].lock"]) == set()
    assert tracked_paths(tmp_path, ["a.lock", "x/"]) == {"a.lock"}


def test_without_git_ignored_files_stay_skipped(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """No git on PATH, no repository, or a failing git: what .gitignore matches is skipped."""
    expected = ["pyproject.toml"]
    for rel, text in IGNORED_LAYOUT.items():
        _touch(tmp_path / "plain", rel, text)
    assert [f.path for f in discover(tmp_path / "plain", []).files] == expected  # no .git
    if shutil.which("git") is None:
        return
    root = _ignored_checkout(tmp_path / "repo")
    failing = tmp_path / "git-fail"
    failing.write_text("#!/bin/sh\nexit 128\n")
    failing.chmod(0o755)
    for lookup in ([None], [str(failing)]):
        monkeypatch.setattr(git_module, "_LOOKUP", lookup)
        assert [f.path for f in discover(root, DEFAULT_IGNORE_PATHS).files] == expected


def test_nothing_skipped_for_a_gitignore_runs_no_git(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A .gitignore that skips no manifest and no directory costs no git command."""
    calls: list[list[str]] = []

    def run(_git: str, _root: Path, args: list[str], **_: object) -> bytes:
        calls.append(args)
        return b""

    monkeypatch.setattr(git_module, "run", run)
    (tmp_path / ".git").mkdir()
    _touch(tmp_path, ".gitignore", "*.log\n")
    _touch(tmp_path, "build.log", "")
    _touch(tmp_path, "requirements.txt", "")
    assert [f.path for f in discover(tmp_path, []).files] == ["requirements.txt"]
    assert calls == []
    _touch(tmp_path, ".gitignore", "*.log\nout/\n")
    _touch(tmp_path, "out/a.txt", "")
    discover(tmp_path, [])
    assert calls == [["ls-files", "-z", "--cached", "--full-name", "--", "out/"]]


def test_a_path_list_resolves_symlinks_as_realpath() -> None:
    """Component by component: links on the way, ``..`` after them, loops, unknown targets."""
    links = {"a": "x/y", "x/y": "../z", "z/b": "../c.txt", "self": "self", "up": "../.."}
    links |= {f"chain{i}": f"chain{i + 1}" for i in range(MAX_SYMLINK_HOPS + 1)}

    def resolve(rel: str, known: dict[str, str] = links) -> TreePath:
        return resolve_tree_path(rel, links.__contains__, known.get)

    assert resolve("a/b") == TreePath("c.txt")  # a -> x/y -> ../z, then z/b -> ../c.txt
    assert resolve("nope/../a/./b") == TreePath("c.txt")
    assert resolve("a/../q") == TreePath("q")  # physical: a is z, z/.. the root
    assert resolve("up") == resolve("/etc") == resolve("..") == TreePath(None, "outside")
    assert resolve("self") == TreePath(None, "loop")
    assert resolve("chain0") == TreePath(None, "loop")  # over MAX_SYMLINK_HOPS links
    assert resolve("chain1") == TreePath(f"chain{MAX_SYMLINK_HOPS + 1}")
    assert resolve("a/b", {"a": "x/y"}) == TreePath(None, "pending", "x/y")
    is_dir = {"x", "z"}.__contains__
    assert tree_symlink_refusal(resolve("a"), is_dir) == "symlinked directory (never entered)"
    assert tree_symlink_refusal(resolve("up"), is_dir) == "symlink pointing outside the checkout"
    assert tree_symlink_refusal(resolve("self"), is_dir) == "symlink loop"
    assert tree_symlink_refusal(resolve("a/b"), is_dir) is None


def test_a_path_list_asks_only_about_symlinks_a_manager_reads() -> None:
    """The resolver is asked about manifest-named symlinks outside skipped directories."""
    asked: list[str] = []

    def symlink(path: str) -> str | None:
        asked.append(path)
        return None if path == "package.json" else "symlink loop"

    listed = [
        ("package.json", True),
        ("Cargo.toml", True),
        ("docs/link.md", True),
        ("node_modules/x/package.json", True),
    ]
    found = discover_paths(listed, (), None, symlink)
    assert asked == ["Cargo.toml", "package.json"]
    assert [f.path for f in found.files] == ["package.json"]
    assert found.refused == [("Cargo.toml", "symlink loop")]


# Path segments for the generated paths: the default names and their near misses, empty and
# dot segments, case, a newline (pathspec's ``.`` stops there) and wildmatch characters.
_SEGMENTS = [
    "node_modules", "vendor", "tests", "test", "__fixtures__", "examples", "bower_components",
    "__tests__", "Test", "tests2", "xtest", "test.py", "vendor.js", "", ".", "..", "a", "b c",
    "x\ny", "test\n", "\ntest", "*", "[x]", "v.e-n_d", ".hidden", "...",
]  # fmt: skip


def _generated_paths(rng: random.Random, count: int) -> list[str]:
    paths = []
    for _ in range(count):
        path = "/".join(rng.choice(_SEGMENTS) for _ in range(rng.randint(1, 5)))
        lead = rng.choice(["", "", "", "/", "./", "//", ".//", "/./"])
        tail = rng.choice(["", "", "/"])
        paths.append(lead + path + tail)
    return paths


@pytest.mark.parametrize("seed", range(4))
def test_named_directories_match_what_pathspec_matches(seed: int) -> None:
    """``**/NAME/**`` globs give pathspec's answer on every generated path, default or not."""
    rng = random.Random(seed)  # noqa: S311 - generated test paths, not secrets
    lists = [list(DEFAULT_IGNORE_PATHS)]
    plain = ["vendor", "test", "v.e-n_d", ".hidden", "...", "a", "Test", "__tests__"]
    lists += [[f"**/{n}/**" for n in rng.sample(plain, rng.randint(1, 4))] for _ in range(8)]
    paths = _generated_paths(rng, 3000)
    for globs in lists:
        fast = discovery_module._ignore_spec(tuple(globs))
        assert isinstance(fast, discovery_module.NamedDirectories)
        spec = pathspec.GitIgnoreSpec.from_lines(globs)
        wrong = [p for p in paths if fast.match_file(p) != spec.match_file(p)]
        assert wrong == [], globs
    matched = discovery_module._ignore_spec(DEFAULT_IGNORE_PATHS)
    assert sum(matched.match_file(p) for p in paths) > len(paths) // 10  # both answers occur


@pytest.mark.parametrize(
    "globs",
    [
        ("**/vendor/**", "!**/vendor/keep/**"),
        ("**/vend*/**",),
        ("vendor/**",),
        ("**/vendor",),
        ("**/./**",),
        ("**/a b/**",),
        (),
    ],
)
def test_other_ignore_globs_are_pathspecs(globs: tuple[str, ...]) -> None:
    """Any other glob (negation, wildcard, anchored, no ``/**``, odd names) goes to pathspec."""
    assert isinstance(discovery_module._ignore_spec(globs), pathspec.GitIgnoreSpec)


def test_manifests_the_ignore_globs_keep_out_are_listed(tmp_path: Path) -> None:
    """Files a manager reads under ignore-paths are ``ignored``, not found; noise is not."""
    for rel in [
        "package.json",
        "examples/demo/package.json",
        "examples/demo/README.md",
        "examples/demo/node_modules/x/package.json",
        "examples/env/pyvenv.cfg",
        "examples/env/requirements.txt",
        "tests/requirements.txt",
        "tests/deep/er/Cargo.toml",
        "tests/build/package.json",
        "src/app.test.json",
    ]:
        _touch(tmp_path, rel)
    _touch(tmp_path, ".gitignore", "tests/build/\n")
    (tmp_path / "examples" / "linked").symlink_to(tmp_path / "tests")
    found = discover(tmp_path, [*DEFAULT_IGNORE_PATHS, "**/*.test.json", "**/package-lock.json"])
    assert [f.path for f in found.files] == ["package.json"]
    assert found.ignored == [
        "tests/requirements.txt",
        "examples/demo/package.json",
        "tests/deep/er/Cargo.toml",
    ]
    assert found.ignored_complete
    # A file glob: only a file some manager reads is listed (app.test.json is nobody's).
    _touch(tmp_path, "web/package-lock.json")
    again = discover(tmp_path, [*DEFAULT_IGNORE_PATHS, "**/package-lock.json"])
    assert "web/package-lock.json" in again.ignored
    # With no globs nothing is ignored and everything is found.
    assert discover(tmp_path, []).ignored == []


def test_looking_inside_ignored_directories_is_bounded(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A vendored tree is not walked to its end for a count: the list says it is partial."""
    for i in range(30):
        _touch(tmp_path, f"vendor/m{i:02}/go.mod", "module m\n")
    monkeypatch.setattr(discovery_module, "IGNORED_ENTRIES_MAX", 12)
    found = discover(tmp_path, DEFAULT_IGNORE_PATHS)
    assert not found.ignored_complete
    assert len(found.ignored) < 30
    monkeypatch.setattr(discovery_module, "IGNORED_ENTRIES_MAX", 1000)
    whole = discover(tmp_path, DEFAULT_IGNORE_PATHS)
    assert whole.ignored_complete
    assert whole.ignored == [f"vendor/m{i:02}/go.mod" for i in range(30)]


def test_a_setup_py_is_noted_as_never_read_by_the_walk_and_a_path_list(tmp_path: Path) -> None:
    """setup.py is found as a manifest never read (no manager reads it), in both sources.

    Not under ignored directories, and only when a Python manager is asked.
    """
    layout = ["setup.py", "setup.cfg", "pkg/setup.py", "node_modules/x/setup.py", "docs/x.py"]
    for rel in layout:
        _touch(tmp_path, rel)
    walked = discover(tmp_path, DEFAULT_IGNORE_PATHS)
    listed = discover_paths([(rel, False) for rel in layout], DEFAULT_IGNORE_PATHS)
    assert walked.unread_manifests == listed.unread_manifests == ["setup.py", "pkg/setup.py"]
    assert [f.path for f in walked.files] == ["setup.cfg"]
    npm_only = discover(tmp_path, DEFAULT_IGNORE_PATHS, ["package_json"])
    assert npm_only.unread_manifests == []
