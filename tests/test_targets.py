"""Targets: a manifest file, and a workspace member's directory, scanned with what covers them."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from patchula.scan import RepoResult, _globs_match, _resolve_target, _Scope
from tests.test_scan import PKGS, FakeFetch, _scan, _write

REGISTRY = 'source = "registry+https://github.com/rust-lang/crates.io-index"\n'


def _one(target: Path, **settings: object) -> RepoResult:
    [repo] = _scan([target], FakeFetch(PKGS), **settings).repos
    return repo


def _rows(repo: RepoResult) -> list[tuple[str, str, str | None, str | None]]:
    return [
        (r.dependency.file, r.dependency.name, r.finding.current, r.lock_file) for r in repo.rows
    ]


def test_requirements_file_target_reads_it_and_its_includes(tmp_path: Path) -> None:
    """`run requirements/local.txt`: that file and its `-r` include, reported at the checkout."""
    (tmp_path / ".git").mkdir()
    _write(tmp_path, "requirements/local.txt", "-r base.txt\nalpha==1.0\n")
    _write(tmp_path, "requirements/base.txt", "beta==2.0\n")
    _write(tmp_path, "requirements/prod.txt", "gamma==3.0\n")
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "1.0.0"}}))
    target = tmp_path / "requirements" / "local.txt"
    repo = _one(target)
    assert (repo.target, repo.root) == (str(target), str(tmp_path))
    assert repo.files == ["requirements/local.txt"]
    assert sorted((f, name, current) for f, name, current, _ in _rows(repo)) == [
        ("requirements/base.txt", "beta", "2.0"),
        ("requirements/local.txt", "alpha", "1.0"),
    ]


def test_file_target_keeps_the_lockfile_that_covers_it(tmp_path: Path) -> None:
    """`run apps/web/package.json` in an npm workspace: the root package-lock.json gives current."""
    (tmp_path / ".git").mkdir()
    _write(
        tmp_path,
        "package.json",
        json.dumps({"workspaces": ["apps/*"], "devDependencies": {"a": "^1.0.0"}}),
    )
    _write(tmp_path, "apps/web/package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
    _write(tmp_path, "apps/api/package.json", json.dumps({"dependencies": {"a": "^2.0.0"}}))
    lock = {
        "lockfileVersion": 3,
        "packages": {
            "": {"name": "root"},
            "node_modules/a": {"version": "1.0.0"},
            "apps/web": {"name": "web"},
            "apps/api": {"name": "api"},
            "apps/api/node_modules/a": {"version": "2.0.0"},
        },
    }
    _write(tmp_path, "package-lock.json", json.dumps(lock))
    repo = _one(tmp_path / "apps" / "web" / "package.json")
    assert repo.root == str(tmp_path)
    assert repo.files == ["package-lock.json", "apps/web/package.json"]
    assert _rows(repo) == [("apps/web/package.json", "a", "1.0.0", "package-lock.json")]


def test_file_target_without_a_checkout_is_read_from_its_directory(tmp_path: Path) -> None:
    """No `.git` above: the file's directory is the root; an unusual name is read as pip's."""
    _write(tmp_path, "deps/tools.pip", "alpha==1.0\n")
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "1.0.0"}}))
    root, problem, scope = _resolve_target(str(tmp_path / "deps" / "tools.pip"))
    assert (root, problem, scope) == (tmp_path / "deps", "", _Scope(file="tools.pip"))
    repo = _one(tmp_path / "deps" / "tools.pip")
    assert _rows(repo) == [("tools.pip", "alpha", "1.0", None)]


def test_file_no_manager_reads_is_said(tmp_path: Path) -> None:
    """A file no enabled manager reads is a warning naming it, never a crash or a silent pass."""
    _write(tmp_path, "NOTES.md", "# notes\n")
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "1.0.0"}}))
    repo = _one(tmp_path / "NOTES.md")
    assert repo.rows == []
    assert [(p.file, p.severity, p.message) for p in repo.problems] == [
        ("NOTES.md", "warning", "no enabled manager reads this file")
    ]
    disabled = _one(tmp_path / "package.json", disabled_managers=["package_json"])
    assert [p.message for p in disabled.problems] == ["no enabled manager reads this file"]


def _cargo_workspace(root: Path) -> None:
    (root / ".git").mkdir()
    _write(
        root,
        "Cargo.toml",
        '[workspace]\nmembers = ["crates/*"]\nexclude = ["crates/skip"]\n'
        '[workspace.dependencies]\nserde = "1.0.100"\n',
    )
    _write(
        root,
        "crates/app/Cargo.toml",
        '[package]\nname = "app"\nversion = "0.1.0"\n'
        '[dependencies]\nserde = { workspace = true }\nregex = "1.9"\n',
    )
    _write(
        root,
        "crates/other/Cargo.toml",
        '[package]\nname = "other"\nversion = "0.1.0"\n[dependencies]\nrand = "0.8"\nbad = [\n',
    )
    _write(
        root,
        "Cargo.lock",
        'version = 4\n[[package]]\nname = "app"\nversion = "0.1.0"\n'
        f'[[package]]\nname = "serde"\nversion = "1.0.150"\n{REGISTRY}'
        f'[[package]]\nname = "regex"\nversion = "1.9.6"\n{REGISTRY}'
        f'[[package]]\nname = "rand"\nversion = "0.8.5"\n{REGISTRY}',
    )


def test_cargo_workspace_member_keeps_inheritance_and_the_root_lock(tmp_path: Path) -> None:
    """`run crates/app`: scanned from the workspace root; only the member's rows, locked."""
    _cargo_workspace(tmp_path)
    repo = _one(tmp_path / "crates" / "app")
    assert repo.root == str(tmp_path)
    assert repo.files == ["Cargo.lock", "crates/app/Cargo.toml"]
    # Every lookup fails here (no crates registry): current is still the locked version.
    assert _rows(repo) == [
        ("Cargo.toml", "serde", "1.0.150", "Cargo.lock"),
        ("crates/app/Cargo.toml", "regex", "1.9.6", "Cargo.lock"),
    ]
    # The sibling member's broken manifest is not this target's problem.
    assert [p for p in repo.problems if p.severity == "error"] == []


def test_member_manifest_without_a_checkout_is_read_from_its_workspace_root(
    tmp_path: Path,
) -> None:
    """`run crates/app/Cargo.toml` in a source tree without `.git`: the workspace root is used."""
    _cargo_workspace(tmp_path)
    (tmp_path / ".git").rmdir()
    repo = _one(tmp_path / "crates" / "app" / "Cargo.toml")
    assert repo.root == str(tmp_path)
    assert repo.files == ["Cargo.lock", "crates/app/Cargo.toml"]
    assert _rows(repo) == [
        ("Cargo.toml", "serde", "1.0.150", "Cargo.lock"),
        ("crates/app/Cargo.toml", "regex", "1.9.6", "Cargo.lock"),
    ]


def test_directory_outside_the_workspace_members_is_its_own_checkout(tmp_path: Path) -> None:
    """An excluded directory, and one holding its own `.git`, are scanned on their own."""
    _cargo_workspace(tmp_path)
    _write(tmp_path, "crates/skip/Cargo.toml", '[package]\nname = "skip"\nversion = "0.1.0"\n')
    _write(tmp_path, "crates/own/Cargo.toml", '[package]\nname = "own"\nversion = "0.1.0"\n')
    (tmp_path / "crates" / "own" / ".git").mkdir()
    for name in ("skip", "own"):
        target = tmp_path / "crates" / name
        assert _resolve_target(str(target)) == (target, "", _Scope())
    member = tmp_path / "crates" / "app"
    assert _resolve_target(str(member)) == (tmp_path, "", _Scope(member="crates/app"))


def test_npm_workspace_member_directory_uses_the_root_lock(tmp_path: Path) -> None:
    """`run packages/web` in an npm workspace: the root package-lock.json resolves its rows."""
    _write(
        tmp_path,
        "package.json",
        json.dumps({"workspaces": {"packages": ["packages/**"]}, "dependencies": {"a": "^1"}}),
    )
    _write(
        tmp_path,
        "packages/web/package.json",
        json.dumps({"name": "web", "dependencies": {"a": "^2.0.0", "shared": "*"}}),
    )
    _write(tmp_path, "packages/shared/package.json", json.dumps({"name": "shared"}))
    lock = {
        "lockfileVersion": 3,
        "packages": {
            "": {"name": "root"},
            "node_modules/a": {"version": "1.0.0"},
            "packages/web": {"name": "web"},
            "packages/shared": {"name": "shared"},
            "packages/web/node_modules/a": {"version": "2.0.0"},
        },
    }
    _write(tmp_path, "package-lock.json", json.dumps(lock))
    repo = _one(tmp_path / "packages" / "web")
    assert repo.root == str(tmp_path)
    assert _rows(repo) == [
        ("packages/web/package.json", "a", "2.0.0", "package-lock.json"),
        ("packages/web/package.json", "shared", None, None),
    ]
    # A sibling workspace package is still known as one, not looked up.
    assert repo.rows[1].finding.reason == "workspace package (packages/shared/package.json)"


def test_uv_workspace_member_directory_uses_the_root_lock(tmp_path: Path) -> None:
    """`run libs/core` in a uv workspace: the root uv.lock gives current, not the member's own."""
    _write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "root"\ndependencies = ["rich>=13"]\n'
        '[tool.uv.workspace]\nmembers = ["libs/*"]\n',
    )
    _write(
        tmp_path,
        "uv.lock",
        'version = 1\n[manifest]\nmembers = ["core", "root"]\n'
        '[[package]]\nname = "pytest"\nversion = "9.1.1"\n'
        'source = { registry = "https://pypi.org/simple" }\n',
    )
    _write(
        tmp_path,
        "libs/core/pyproject.toml",
        '[project]\nname = "core"\ndependencies = ["pytest>=8"]\n',
    )
    repo = _one(tmp_path / "libs" / "core")
    assert repo.root == str(tmp_path)
    assert repo.files == ["uv.lock", "libs/core/pyproject.toml"]
    assert _rows(repo) == [("libs/core/pyproject.toml", "pytest", "9.1.1", "uv.lock")]


@pytest.mark.parametrize(
    ("patterns", "rel", "expected"),
    [
        (["crates/*"], "crates/app", True),
        (["crates/*"], "crates/app/sub", False),
        (["./crates/*/"], "crates/app", True),
        (["packages/**"], "packages/a/b", True),
        (["app"], "apps", False),
        ("crates/*", "crates/app", False),  # not a list: no members
        (["packages/*", "!packages/legacy"], "packages/legacy", False),
        (["packages/*", "!packages/legacy"], "packages/app", True),
        (["!packages/legacy", "packages/*"], "packages/legacy", False),  # wherever it is
        (["packages/*", "!!packages/legacy"], "packages/legacy", True),  # two cancel out
        (["!packages/*"], "packages/app", False),  # nothing included
    ],
)
def test_workspace_globs_match_segment_by_segment(
    patterns: object, rel: str, *, expected: bool
) -> None:
    """`*` never crosses `/`, `**` spans segments, `./` and a trailing `/` are ignored.

    A glob with a leading `!` excludes what it matches.
    """
    assert _globs_match(patterns, rel) is expected


def test_named_file_is_read_even_where_the_walk_would_skip_it(tmp_path: Path) -> None:
    """A file under an ignored directory is read when named; an unread lockfile above is said."""
    (tmp_path / ".git").mkdir()
    _write(tmp_path, ".gitignore", "fixtures/\n")
    _write(tmp_path, "fixtures/package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
    _write(tmp_path, "bun.lockb", "binary\n")
    _write(tmp_path, "poetry.lock", "")  # another ecosystem's lockfile: not this file's
    repo = _one(tmp_path / "fixtures" / "package.json")
    assert _rows(repo) == [("fixtures/package.json", "a", "1.0.0", None)]
    assert [(p.file, p.severity) for p in repo.problems] == [("bun.lockb", "warning")]
    assert repo.rows[0].finding.reason == "from the range: bun.lockb not read"


def test_a_pipfile_target_reads_the_pipfile_lock_beside_it(tmp_path: Path) -> None:
    """`run Pipfile`: its Pipfile.lock pins current, as in a scan of the directory."""
    _write(tmp_path, "Pipfile", '[packages]\na = "*"\n')
    lock = {"_meta": {"pipfile-spec": 6}, "default": {"a": {"version": "==1.0.0"}}, "develop": {}}
    _write(tmp_path, "Pipfile.lock", json.dumps(lock))
    assert _rows(_one(tmp_path / "Pipfile")) == [("Pipfile", "a", "1.0.0", "Pipfile.lock")]


def test_a_member_manifest_target_keeps_its_workspace(tmp_path: Path) -> None:
    """`run packages/a/package.json` in a yarn classic workspace: as `run packages/a`.

    The root yarn.lock covers the member (yarn takes its members from the root's `workspaces`)
    and the sibling `b` is a workspace package; only the target's rows are reported.
    """
    _write(tmp_path, "package.json", json.dumps({"name": "root", "workspaces": ["packages/*"]}))
    member = {"name": "m", "version": "1.0.0", "dependencies": {"a": "^1.0.0", "b": "1.0.0"}}
    _write(tmp_path, "packages/m/package.json", json.dumps(member))
    _write(tmp_path, "packages/b/package.json", json.dumps({"name": "b", "version": "1.0.0"}))
    lock = '# yarn lockfile v1\n\n\na@^1.0.0:\n  version "1.0.0"\n'
    _write(tmp_path, "yarn.lock", lock)
    by_file = _one(tmp_path / "packages" / "m" / "package.json")
    by_directory = _one(tmp_path / "packages" / "m")
    assert (
        _rows(by_file)
        == _rows(by_directory)
        == [
            ("packages/m/package.json", "a", "1.0.0", "yarn.lock"),
            ("packages/m/package.json", "b", None, None),
        ]
    )
    assert by_file.rows[1].finding.reason == "workspace package (packages/b/package.json)"


def test_a_symlinked_manifest_target_is_read_by_its_own_name(tmp_path: Path) -> None:
    """`run requirements.txt` where it links to `deps.lst`: a requirements file, as in a walk."""
    _write(tmp_path, "deps.lst", "a==1.0.0\n")
    (tmp_path / "requirements.txt").symlink_to("deps.lst")
    assert [row[1:3] for row in _rows(_one(tmp_path / "requirements.txt"))] == [("a", "1.0.0")]


def test_a_symlinked_manifest_target_leaving_the_checkout_is_still_read(tmp_path: Path) -> None:
    """A link to a file elsewhere is read where it points (its own directory could not)."""
    (tmp_path / "repo" / ".git").mkdir(parents=True)
    _write(tmp_path, "elsewhere/requirements.txt", "a==1.0.0\n")
    link = tmp_path / "repo" / "requirements.txt"
    link.symlink_to(tmp_path / "elsewhere" / "requirements.txt")
    assert [row[1:3] for row in _rows(_one(link))] == [("a", "1.0.0")]
