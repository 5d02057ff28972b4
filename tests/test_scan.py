"""The scan orchestration: bad input costs only itself, locks are matched, lookups are shared."""

from __future__ import annotations

import codecs
import gc
import json
from collections import Counter
from collections.abc import Iterator, Mapping
from datetime import UTC, datetime
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from patchula import scan as scan_module
from patchula.clock import FixedClock
from patchula.models import (
    Dependency,
    Derive,
    FetchResponse,
    Finding,
    LockedPackage,
    Lockfile,
)
from patchula.scan import (
    RepoResult,
    Row,
    ScanResult,
    _discover,
    _extract_repo,
    _Extracted,
    read_commit,
    scan,
)
from patchula.settings import Settings

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


class FakeFetch:
    """Serves npm packuments from a dict and counts requests per URL."""

    def __init__(self, packages: Mapping[str, Mapping[str, str]]) -> None:
        self.packages = packages
        self.calls: Counter[str] = Counter()

    async def __call__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,  # noqa: ARG002 - the Fetch protocol
        representation: str = "raw",  # noqa: ARG002 - no cache here
        derive: Derive | None = None,
    ) -> FetchResponse:
        """Answer like an npm registry (deriving successful bodies like the real facade)."""
        self.calls[url] += 1
        await anyio.lowlevel.checkpoint()
        name = url.rsplit("/", 1)[1].replace("%2f", "/")
        versions = self.packages.get(name)
        if versions is None:
            return FetchResponse(404, url, (), b"{}", NOW)
        body = {
            "name": name,
            "dist-tags": {"latest": max(versions, key=lambda v: tuple(map(int, v.split("."))))},
            "versions": {v: {} for v in versions},
            "time": dict(versions),
        }
        content = json.dumps(body).encode()
        if derive is not None:
            content = derive(content)
        return FetchResponse(200, url, (("content-type", "application/json"),), content, NOW)


def _scan(targets: list[Path], fetch: FakeFetch, **settings: object) -> ScanResult:
    s = Settings.model_validate({"registries": {"npm": "http://npm.test"}, **settings})
    return anyio.run(scan, [str(t) for t in targets], s, fetch, FixedClock(NOW))


def _write(root: Path, rel: str, content: str | bytes) -> None:
    path = root / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    if isinstance(content, bytes):
        path.write_bytes(content)
    else:
        path.write_text(content)


PKGS = {"a": {"1.0.0": "2025-01-01T00:00:00Z", "2.0.0": "2026-01-01T00:00:00Z"}}


def test_bad_files_are_problems_and_the_rest_is_scanned(tmp_path: Path) -> None:
    """Bad JSON, binary bytes and an oversized file are problems; good files still give rows."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "1.0.0"}}))
    _write(tmp_path, "bad/package.json", '{\n  "dependencies": {\n    "a": 1.0.0\n')
    _write(tmp_path, "bin/package.json", b"\x89PNG\r\n\x1a\n\x00\xff\xfe")
    _write(tmp_path, "big/package.json", "{" + " " * (2 * 1024 * 1024) + "}")
    result = _scan([tmp_path], FakeFetch(PKGS), max_file_bytes=1024 * 1024)
    repo = result.repos[0]
    problems = {p.file: p for p in repo.problems}
    assert set(problems) == {"bad/package.json", "bin/package.json", "big/package.json"}
    assert problems["bad/package.json"].line == 3
    assert problems["bin/package.json"].message.startswith("not UTF-8 text")
    assert "over the 1 MiB limit" in problems["big/package.json"].message
    assert [(r.dependency.name, r.finding.status) for r in repo.rows] == [("a", "outdated")]


def test_non_string_dependency_value_is_dropped_with_a_warning(tmp_path: Path) -> None:
    """`"enabled": false` inside dependencies: npm warns and drops it; the rest is scanned."""
    _write(
        tmp_path,
        "package.json",
        '{\n  "dependencies": {\n    "enabled": false,\n    "a": "^1.0.0"\n  }\n}\n',
    )
    repo = _scan([tmp_path], FakeFetch(PKGS)).repos[0]
    assert [(r.dependency.name, r.finding.current) for r in repo.rows] == [("a", "1.0.0")]
    assert [(p.file, p.line, p.severity, p.message) for p in repo.problems] == [
        (
            "package.json",
            3,
            "warning",
            (
                "version of 'enabled' in `dependencies` must be a string, got a boolean;"
                " ignored, as npm does"
            ),
        )
    ]


def test_include_cycle_reported_once(tmp_path: Path) -> None:
    """Requirements files that include each other are reported as a cycle, and their deps kept."""
    _write(tmp_path, "requirements.txt", "-r requirements-dev.txt\nflask==3.0.0\n")
    _write(tmp_path, "requirements-dev.txt", "-r requirements.txt\npytest==8.0.0\n")
    result = _scan([tmp_path], FakeFetch({}), registries={"pypi": "http://pypi.test"})
    repo = result.repos[0]
    assert any("cycle" in p.message for p in repo.problems)
    names = Counter(r.dependency.name for r in repo.rows)
    assert names == {"flask": 1, "pytest": 1}


def test_same_package_in_many_repositories_is_fetched_once(tmp_path: Path) -> None:
    """Single-flight: 30 repositories declaring the same package cause one fetch."""
    repos = []
    for i in range(30):
        _write(tmp_path / f"r{i}", "package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
        repos.append(tmp_path / f"r{i}")
    fetch = FakeFetch(PKGS)
    result = _scan(repos, fetch, concurrency=4)
    assert list(fetch.calls.values()) == [1]
    assert all(r.rows[0].finding.current == "1.0.0" for r in result.repos)


def test_workspace_member_resolves_through_root_lock(tmp_path: Path) -> None:
    """An npm workspace member's dependency is resolved through the root lockfile like Node does."""
    _write(
        tmp_path,
        "package.json",
        json.dumps({"workspaces": ["packages/*"], "dependencies": {"a": "^1.0.0"}}),
    )
    _write(
        tmp_path,
        "packages/web/package.json",
        json.dumps({"name": "web", "dependencies": {"a": "^2.0.0"}}),
    )
    lock = {
        "lockfileVersion": 3,
        "packages": {
            "": {"name": "root"},
            "node_modules/a": {"version": "1.0.0"},
            "node_modules/web": {"resolved": "packages/web", "link": True},
            "packages/web": {"name": "web", "version": "0.0.0"},
            "packages/web/node_modules/a": {"version": "2.0.0"},
        },
    }
    _write(tmp_path, "package-lock.json", json.dumps(lock))
    result = _scan([tmp_path], FakeFetch(PKGS))
    current = {r.dependency.file: (r.finding.current, r.lock_file) for r in result.repos[0].rows}
    assert current == {
        "package.json": ("1.0.0", "package-lock.json"),
        "packages/web/package.json": ("2.0.0", "package-lock.json"),
    }


def test_unknown_package_is_an_error_row(tmp_path: Path) -> None:
    """A 404 becomes an error row with the reason; other rows are unaffected."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "1.0.0", "ghost": "1.0.0"}}))
    result = _scan([tmp_path], FakeFetch(PKGS))
    rows = {r.dependency.name: r.finding for r in result.repos[0].rows}
    assert rows["a"].status == "outdated"
    assert rows["ghost"].status == "error"
    assert rows["ghost"].reason is not None
    assert "not found" in rows["ghost"].reason


def test_read_commit_from_git_dir(tmp_path: Path) -> None:
    """The checked-out commit is read from .git without a git binary (loose and packed refs)."""
    sha = "0123456789abcdef0123456789abcdef01234567"
    _write(tmp_path, ".git/HEAD", "ref: refs/heads/main\n")
    _write(tmp_path, ".git/packed-refs", f"# pack-refs\n{sha} refs/heads/main\n")
    assert read_commit(tmp_path) == sha
    _write(tmp_path, ".git/refs/heads/main", sha.replace("0", "f") + "\n")
    assert read_commit(tmp_path) == sha.replace("0", "f")
    assert read_commit(tmp_path / "nowhere") is None


def test_a_broken_symlink_target_says_which_break(tmp_path: Path) -> None:
    """A symlink loop and a link to nothing are told apart from a path that does not exist."""
    (tmp_path / "a").symlink_to(tmp_path / "b")
    (tmp_path / "b").symlink_to(tmp_path / "a")
    (tmp_path / "dangling").symlink_to(tmp_path / "nothing")
    targets = [str(tmp_path / name) for name in ("a", "dangling", "nothing")]
    result = anyio.run(scan, targets, Settings(), FakeFetch({}), FixedClock(NOW))
    assert [[p.message for p in repo.problems] for repo in result.repos] == [
        ["target path contains a symlink loop"],
        ["target is a symlink to a path that does not exist"],
        ["target does not exist"],
    ]


@pytest.mark.parametrize(
    ("target", "message"),
    [
        ("github:acme", "'github:acme': expected github:OWNER/REPO"),
        ("github:acme/a b", "'github:acme/a b': 'a b' is not a GitHub repository name"),
        ("/nonexistent/checkout", "target does not exist"),
    ],
)
def test_unusable_targets_are_problems(target: str, message: str) -> None:
    """Targets that cannot be scanned become a repository with one error problem."""
    result = anyio.run(scan, [target], Settings(), FakeFetch({}), FixedClock(NOW))
    assert [(p.file, p.message[: len(message)]) for p in result.repos[0].problems] == [
        (target, message)
    ]


def test_npm_workspace_packages_are_not_looked_up(tmp_path: Path) -> None:
    """A dependency on a member of its own npm workspace is skipped as a workspace package."""
    root = {"workspaces": ["packages/*"], "dependencies": {"shared": "*", "a": "1.0.0"}}
    _write(tmp_path, "package.json", json.dumps(root))
    _write(
        tmp_path, "packages/shared/package.json", json.dumps({"name": "shared", "version": "0.0.0"})
    )
    web = {"name": "web", "dependencies": {"shared": "*"}}
    _write(tmp_path, "packages/web/package.json", json.dumps(web))
    fetch = FakeFetch(PKGS)
    result = _scan([tmp_path], fetch)
    rows = [(r.dependency.file, r.dependency.name, r.finding) for r in result.repos[0].rows]
    shared = [(file, f.status, f.reason) for file, name, f in rows if name == "shared"]
    reason = "workspace package (packages/shared/package.json)"
    # From the root and from a sibling member alike.
    assert shared == [
        ("package.json", "skipped", reason),
        ("packages/web/package.json", "skipped", reason),
    ]
    assert all("shared" not in url for url in fetch.calls)


def test_a_workspace_members_overrides_are_skipped_as_never_applied(tmp_path: Path) -> None:
    """npm, yarn and pnpm apply overrides from the workspace root only; a member's are none."""
    root = {"workspaces": ["packages/*"], "overrides": {"semver": "7.5.4"}}
    _write(tmp_path, "package.json", json.dumps(root))
    member = {
        "name": "web",
        "overrides": {"qs": "6.11.2"},
        "resolutions": {"minimist": "1.2.8"},
        "pnpm": {"overrides": {"ms": "2.1.3"}},
    }
    _write(tmp_path, "packages/web/package.json", json.dumps(member))
    fetch = FakeFetch(PKGS)
    result = _scan([tmp_path], fetch)
    rows = {
        (r.dependency.file, r.dependency.name): (r.finding.status, r.finding.reason)
        for r in result.repos[0].rows
    }
    ignored = " of a workspace member are ignored: only the root's (package.json) apply"
    assert rows[("packages/web/package.json", "qs")] == ("skipped", f"overrides{ignored}")
    assert rows[("packages/web/package.json", "minimist")] == ("skipped", f"resolutions{ignored}")
    assert rows[("packages/web/package.json", "ms")] == ("skipped", f"pnpm.overrides{ignored}")
    assert rows[("package.json", "semver")][0] != "skipped"
    assert not any(name in url for url in fetch.calls for name in ("/qs", "minimist", "/ms"))


def test_a_member_whose_version_misses_the_range_is_the_registrys(tmp_path: Path) -> None:
    """A member is linked only for a range its version satisfies; else the registry's is used.

    ``b`` is a member at 1.1.0: ``^1.0.0`` links it, ``2.0.0`` is installed from the registry.
    """
    root = {"workspaces": ["packages/*"], "dependencies": {"b": "2.0.0"}}
    _write(tmp_path, "package.json", json.dumps(root))
    _write(tmp_path, "packages/b/package.json", json.dumps({"name": "b", "version": "1.1.0"}))
    web = {"name": "web", "dependencies": {"b": "^1.0.0"}}
    _write(tmp_path, "packages/web/package.json", json.dumps(web))
    fetch = FakeFetch({**PKGS, "b": {"2.0.0": "2024-01-01T00:00:00Z"}})
    rows = _scan([tmp_path], fetch).repos[0].rows
    found = {(r.dependency.file, r.finding.status, r.finding.current) for r in rows}
    assert found == {
        ("package.json", "up-to-date", "2.0.0"),
        ("packages/web/package.json", "skipped", None),
    }


def test_a_member_a_negated_glob_excludes_is_the_registrys(tmp_path: Path) -> None:
    """``"!packages/b"`` takes ``b`` out of the workspace (npm's map-workspaces, yarn, bun).

    So ``web``'s dependency on ``b`` is installed from the registry and looked up, while
    ``shared``, still a member, stays a workspace package.
    """
    root = {"workspaces": ["packages/*", "!packages/b"]}
    _write(tmp_path, "package.json", json.dumps(root))
    _write(tmp_path, "packages/b/package.json", json.dumps({"name": "b", "version": "1.0.0"}))
    _write(tmp_path, "packages/shared/package.json", json.dumps({"name": "shared"}))
    web = {"name": "web", "dependencies": {"b": "1.0.0", "shared": "*"}}
    _write(tmp_path, "packages/web/package.json", json.dumps(web))
    fetch = FakeFetch({**PKGS, "b": {"1.0.0": "2024-01-01T00:00:00Z"}})
    rows = _scan([tmp_path], fetch).repos[0].rows
    found = {(r.dependency.name, r.finding.status, r.finding.current) for r in rows}
    assert found == {("b", "up-to-date", "1.0.0"), ("shared", "skipped", None)}
    assert any(url.endswith("/b") for url in fetch.calls)
    # The member's manifest as the target: the same rows.
    rows = _scan([tmp_path / "packages/web/package.json"], fetch).repos[0].rows
    assert {(r.dependency.name, r.finding.status, r.finding.current) for r in rows} == found


@pytest.mark.parametrize(
    "root",
    [
        # No workspace at all: two unrelated projects in one checkout.
        {"dependencies": {"a": "1.0.0"}},
        # A workspace that does not cover the directory declaring the dependency.
        {"workspaces": ["packages/*"], "dependencies": {"a": "1.0.0"}},
    ],
)
def test_a_manifest_named_like_a_dependency_outside_its_workspace_is_the_registrys(
    tmp_path: Path, root: dict[str, object]
) -> None:
    """A package.json named ``b`` elsewhere in the checkout does not make ``docs``' ``b`` local.

    As in excalidraw: ``dev-docs/`` (not a workspace member) pins ``@excalidraw/excalidraw``
    from the registry while ``packages/excalidraw`` is that package's source.
    """
    _write(tmp_path, "package.json", json.dumps(root))
    _write(tmp_path, "packages/b/package.json", json.dumps({"name": "b", "version": "0.0.0"}))
    _write(tmp_path, "docs/package.json", json.dumps({"dependencies": {"b": "1.0.0"}}))
    fetch = FakeFetch({**PKGS, "b": {"1.0.0": "2024-01-01T00:00:00Z"}})
    result = _scan([tmp_path], fetch)
    row = next(r for r in result.repos[0].rows if r.dependency.name == "b")
    assert (row.dependency.file, row.finding.status, row.finding.current) == (
        "docs/package.json",
        "up-to-date",
        "1.0.0",
    )


def test_uv_workspace_member_uses_the_root_lock(tmp_path: Path) -> None:
    """A uv workspace member is resolved through the root uv.lock, not its own stale lock."""
    _write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "root"\ndependencies = []\n[tool.uv.workspace]\nmembers = ["core"]\n',
    )
    _write(
        tmp_path,
        "uv.lock",
        'version = 1\n[manifest]\nmembers = ["core", "root"]\n'
        '[[package]]\nname = "pytest"\nversion = "9.1.1"\n'
        'source = { registry = "https://pypi.org/simple" }\n',
    )
    _write(
        tmp_path, "core/pyproject.toml", '[project]\nname = "core"\ndependencies = ["pytest>=8"]\n'
    )
    _write(
        tmp_path,
        "core/uv.lock",
        'version = 1\n[[package]]\nname = "pytest"\nversion = "8.4.1"\n'
        'source = { registry = "https://pypi.org/simple" }\n',
    )
    found = _extract(tmp_path)
    assert [(i.dep.name, i.locked, i.lock_file) for i in found] == [("pytest", "9.1.1", "uv.lock")]


def test_uv_lock_with_one_version_per_environment_says_so(tmp_path: Path) -> None:
    """uv.lock locking numpy twice (marker split): the oldest is current, the note names 2.3.4."""
    _write(tmp_path, "pyproject.toml", '[project]\nname = "app"\ndependencies = ["numpy>=2"]\n')
    _write(
        tmp_path,
        "uv.lock",
        'version = 1\n[[package]]\nname = "numpy"\nversion = "2.3.4"\n'
        'source = { registry = "https://pypi.org/simple" }\n'
        "resolution-markers = [\"python_full_version >= '3.11'\"]\n"
        '[[package]]\nname = "numpy"\nversion = "2.2.6"\n'
        'source = { registry = "https://pypi.org/simple" }\n'
        "resolution-markers = [\"python_full_version < '3.11'\"]\n",
    )
    found = _extract(tmp_path)
    assert [(i.dep.name, i.locked, i.lock_file, i.note, i.forks) for i in found] == [
        (
            "numpy",
            "2.2.6",
            "uv.lock",
            None,
            (("2.2.6", "python_full_version < '3.11'"), ("2.3.4", "python_full_version >= '3.11'")),
        )
    ]


REGISTRY_SOURCE = 'source = { registry = "https://pypi.org/simple" }\n'


def test_a_dependency_missing_from_a_python_lockfile_says_so(tmp_path: Path) -> None:
    """uv.lock, poetry.lock and Pipfile.lock lacking a row they lock: the row says so, as npm's.

    Only the tables each tool locks count (uv: [project], extras, dependency groups and
    ``tool.uv`` dev-dependencies; Poetry: its own tables and PEP 621/735 ones; pipenv: every
    category); the project itself (a self-referential extra) is no lockfile entry. A row with
    a marker may be left out by a universal lock whose environments the marker excludes.
    """
    _write(
        tmp_path,
        "uv/pyproject.toml",
        '[project]\nname = "app"\nversion = "1.0"\n'
        'dependencies = ["attrs>=21", "gone>=1", "winreg2; sys_platform == \'win32\'",'
        ' "app[docs]"]\n'
        '[project.optional-dependencies]\ndocs = ["sphinx"]\n'
        '[dependency-groups]\ndev = ["pytest"]\n'
        '[tool.poetry.dependencies]\nflask = "^2"\n',
    )
    _write(
        tmp_path,
        "uv/uv.lock",
        'version = 1\n[[package]]\nname = "app"\nversion = "1.0"\nsource = { editable = "." }\n'
        f'[[package]]\nname = "attrs"\nversion = "25.1.0"\n{REGISTRY_SOURCE}',
    )
    _write(
        tmp_path,
        "poetry/pyproject.toml",
        '[tool.poetry]\nname = "lib"\n[tool.poetry.dependencies]\npython = "^3.10"\n'
        'requests = "^2"\ngone = "^1"\n[tool.poetry.group.dev.dependencies]\npytest = "^8"\n'
        '[tool.uv]\ndev-dependencies = ["ruff"]\n',
    )
    _write(
        tmp_path,
        "poetry/poetry.lock",
        '[[package]]\nname = "requests"\nversion = "2.32.3"\n[metadata]\nlock-version = "2.1"\n',
    )
    _write(
        tmp_path,
        "pipenv/Pipfile",
        '[packages]\nrequests = "*"\ngone = "*"\n[dev-packages]\npytest = "*"\n',
    )
    lock = {"_meta": {"pipfile-spec": 6}, "default": {"requests": {"version": "==2.32.3"}}}
    _write(tmp_path, "pipenv/Pipfile.lock", json.dumps(lock))
    notes = sorted(
        (i.dep.file.split("/")[0], i.dep.name, i.locked, i.note) for i in _extract(tmp_path)
    )

    def stale(lock: str) -> str:
        return f"not in {lock}: current from the range; the lockfile is out of date"

    marker = (
        f'{stale("uv/uv.lock")}, or its marker (sys_platform == "win32") leaves it out of'
        " every environment the lockfile resolves for"
    )
    assert notes == [
        ("pipenv", "gone", None, stale("pipenv/Pipfile.lock")),
        ("pipenv", "pytest", None, stale("pipenv/Pipfile.lock")),
        ("pipenv", "requests", "2.32.3", None),
        ("poetry", "gone", None, stale("poetry/poetry.lock")),
        ("poetry", "pytest", None, stale("poetry/poetry.lock")),
        ("poetry", "requests", "2.32.3", None),
        ("poetry", "ruff", None, None),  # uv's table: poetry does not lock it
        ("uv", "app", None, None),  # the project itself
        ("uv", "attrs", "25.1.0", None),
        ("uv", "flask", None, None),  # Poetry's table: uv does not lock it
        ("uv", "gone", None, stale("uv/uv.lock")),
        ("uv", "pytest", None, stale("uv/uv.lock")),
        ("uv", "sphinx", None, stale("uv/uv.lock")),
        ("uv", "winreg2", None, marker),
    ]


def test_locked_version_outside_the_requirement_is_not_current(tmp_path: Path) -> None:
    """`syn = "1.0"` with only syn 2.0.1 in Cargo.lock: current comes from the range, said why."""
    _write(
        tmp_path,
        "Cargo.toml",
        '[package]\nname = "app"\nversion = "0.1.0"\n[dependencies]\nsyn = "1.0"\nserde = "1"\n',
    )
    registry = 'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
    _write(
        tmp_path,
        "Cargo.lock",
        'version = 3\n[[package]]\nname = "app"\nversion = "0.1.0"\n'
        f'[[package]]\nname = "syn"\nversion = "2.0.1"\n{registry}'
        f'[[package]]\nname = "serde"\nversion = "1.0.200"\n{registry}',
    )
    found = {i.dep.name: (i.locked, i.lock_file, i.note) for i in _extract(tmp_path)}
    assert found == {
        "syn": (None, None, "Cargo.lock locks syn 2.0.1, outside 1.0: current from the range"),
        "serde": ("1.0.200", "Cargo.lock", None),
    }


def test_package_lock_outside_the_range_is_not_current(tmp_path: Path) -> None:
    """A package-lock.json out of sync with package.json (a@1.0.0 for ^2.0.0) is not current."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "^2.0.0"}}))
    lock = {"lockfileVersion": 3, "packages": {"node_modules/a": {"version": "1.0.0"}}}
    _write(tmp_path, "package-lock.json", json.dumps(lock))
    finding = _scan([tmp_path], FakeFetch(PKGS)).repos[0].rows[0].finding
    assert (finding.current, finding.current_source, finding.reason) == (
        "2.0.0",
        "range",
        "package-lock.json locks a 1.0.0, outside ^2.0.0: current from the range",
    )


def test_one_line_declaring_a_name_twice_gives_two_rows(tmp_path: Path) -> None:
    """Minified package.json with react as dev and peer dependency; numpy under two markers."""
    minified = {"devDependencies": {"react": "^18.2.0"}, "peerDependencies": {"react": ">=17"}}
    _write(tmp_path, "web/package.json", json.dumps(minified))
    _write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "app"\ndependencies = ["numpy<2; python_version<\'3.10\'",'
        " \"numpy>=2; python_version>='3.10'\"]\n",
    )
    found = [
        (i.dep.file, i.dep.line, i.dep.name, i.dep.dep_type, i.dep.markers)
        for i in _extract(tmp_path)
    ]
    assert found == [
        ("pyproject.toml", 3, "numpy", "project", 'python_version < "3.10"'),
        ("pyproject.toml", 3, "numpy", "project", 'python_version >= "3.10"'),
        ("web/package.json", 1, "react", "devDependencies", None),
        ("web/package.json", 1, "react", "peerDependencies", None),
    ]


def test_cargo_workspace_dependency_is_one_row_naming_its_inheritors(tmp_path: Path) -> None:
    """[workspace.dependencies] serde inherited by two members: one row, at the root, naming both.

    A member that declares the same requirement itself keeps a row of its own.
    """
    _write(
        tmp_path,
        "Cargo.toml",
        '[workspace]\nmembers = ["crates/*"]\n[workspace.dependencies]\nserde = "1.0.100"\n',
    )
    for name in ("app", "core"):
        _write(
            tmp_path,
            f"crates/{name}/Cargo.toml",
            f'[package]\nname = "{name}"\nversion = "0.1.0"\n'
            "[dependencies]\nserde = { workspace = true }\n",
        )
    _write(
        tmp_path,
        "crates/own/Cargo.toml",
        '[package]\nname = "own"\nversion = "0.1.0"\n[dependencies]\nserde = "1.0.100"\n',
    )
    found = [(i.dep.file, i.dep.line, i.dep.dep_type, i.note) for i in _extract(tmp_path)]
    assert found == [
        ("Cargo.toml", 4, "workspace.dependencies", "inherited by app, core"),
        ("crates/own/Cargo.toml", 5, "dependencies", None),
    ]


def _pip_rows(root: Path) -> list[tuple[object, ...]]:
    return sorted(
        (i.dep.file, i.dep.name, i.dep.constraint, i.locked, i.lock_file, i.note)
        for i in _extract(root)
    )


def test_pip_constraints_pin_current_and_are_never_rows(tmp_path: Path) -> None:
    """-c requirements/constraints.txt: its pins are current for the requirements, not rows."""
    _write(
        tmp_path,
        "requirements.txt",
        "-c requirements/constraints.txt\n-r requirements-dev.txt\nflask>=2\nrequests\n",
    )
    _write(tmp_path, "requirements-dev.txt", "pytest>=7\n")
    _write(
        tmp_path,
        "requirements/constraints.txt",
        "flask==3.0.0\nrequests<3\npytest==8.0.0\nnumpy==1.26.4\n",
    )
    pins = "requirements/constraints.txt"
    assert _pip_rows(tmp_path) == [
        (
            "requirements-dev.txt",
            "pytest",
            ">=7",
            "8.0.0",
            pins,
            f"pinned by the constraint in {pins}:3",
        ),
        (
            "requirements.txt",
            "flask",
            ">=2",
            "3.0.0",
            pins,
            f"pinned by the constraint in {pins}:1",
        ),
        ("requirements.txt", "requests", "<3", None, None, None),
    ]


def test_an_arbitrary_equality_constraint_narrows_instead_of_pinning(tmp_path: Path) -> None:
    """-c with ``pytz===2013b0``: a string match (PEP 440), so no pin on the value 2013b0."""
    _write(tmp_path, "requirements.txt", "-c pins.txt\npytz>=2013\n")
    _write(tmp_path, "pins.txt", "pytz===2013b0\n")
    assert _pip_rows(tmp_path) == [
        ("requirements.txt", "pytz", ">=2013,===2013b0", None, None, None)
    ]


def test_a_pin_outside_the_range_of_a_c_file_is_a_problem(tmp_path: Path) -> None:
    """pins.txt, read by -c and not a requirements file by its name, gives no rows of its own.

    A pin outside the including file's range is a problem at the requirement.
    """
    _write(tmp_path, "requirements/base.txt", "-c ../pins.txt\nflask<3\n")
    _write(tmp_path, "pins.txt", "flask==3.0.0\n")
    repo = RepoResult(target=str(tmp_path), root=str(tmp_path), commit=None)
    found, _ = _discover(tmp_path, Settings())
    extracted = _extract_repo(tmp_path, Settings(), repo, found)
    assert repo.files == ["requirements/base.txt"]
    assert [(i.dep.file, i.dep.constraint, i.locked) for i in extracted] == [
        ("requirements/base.txt", "<3", None)
    ]
    assert [(p.file, p.line, p.message) for p in repo.problems] == [
        (
            "requirements/base.txt",
            2,
            (
                "constraint flask==3.0.0 (pins.txt:1) conflicts with flask<3:"
                " pip cannot install both"
            ),
        )
    ]


@pytest.mark.parametrize(
    ("compiled", "including"),
    [
        ("requirements.txt", "dev-requirements.in"),  # pip-tools layered requirements
        ("requirements/prod.txt", "requirements/dev.in"),
    ],
)
def test_a_requirements_file_read_by_c_still_gives_its_own_rows(
    tmp_path: Path, compiled: str, including: str
) -> None:
    """A requirements file in its own right that another reads with -c keeps its rows.

    ``pip install -r requirements.txt`` installs it; ``-c requirements.txt`` in another file
    only pins that file's requirements (each is its own row, pinned by the constraint).
    """
    _write(tmp_path, compiled, "asgiref==3.7.0\ndjango==4.2.0\nsqlparse==0.4.0\n")
    target = compiled.rsplit("/", 1)[-1]
    _write(tmp_path, including, f"-c {target}\ndjango-debug-toolbar\ndjango\n")
    _write(tmp_path, "requirements.in", "django<5\n")
    pin = f"pinned by the constraint in {compiled}:2"
    paired: list[tuple[object, ...]]
    if compiled == "requirements.txt":
        # pip-compile's own layout: requirements.in compiles to requirements.txt beside it,
        # so its django row is the .in's, current from the compiled pin (reported once).
        paired = [("requirements.in", "django", "<5", "4.2.0", compiled, None)]
    else:
        paired = [
            (compiled, "django", "==4.2.0", None, None, None),
            ("requirements.in", "django", "<5", None, None, None),
        ]
    assert _pip_rows(tmp_path) == sorted(
        [
            (including, "django", None, "4.2.0", compiled, pin),
            (including, "django-debug-toolbar", None, None, None, None),
            (compiled, "asgiref", "==3.7.0", None, None, None),
            (compiled, "sqlparse", "==0.4.0", None, None, None),
            *paired,
        ]
    )


def test_utf16_requirements_are_read_as_pip_reads_them_and_json_is_not(tmp_path: Path) -> None:
    """UTF-16 with a byte-order mark (``pip freeze > f`` in PowerShell 5) is read, includes too.

    pip's auto_decode reads requirements files by their BOM; JSON is UTF-8 by its RFC, so a
    UTF-16 package.json stays a problem; a UTF-32-LE file, which pip misreads, is one too.
    """
    text = "attrs==21.1.0\r\n-r base.txt\r\n\r\nsix\r\n"
    _write(tmp_path, "requirements.txt", codecs.BOM_UTF16_LE + text.encode("utf-16-le"))
    _write(tmp_path, "base.txt", codecs.BOM_UTF16_BE + "# b\nflask<3\n".encode("utf-16-be"))
    _write(tmp_path, "requirements-dev.txt", codecs.BOM_UTF32_LE + "six\n".encode("utf-32-le"))
    _write(
        tmp_path,
        "package.json",
        codecs.BOM_UTF16_LE + '{"dependencies": {"a": "1"}}'.encode("utf-16-le"),
    )
    repo = RepoResult(target=str(tmp_path), root=str(tmp_path), commit=None)
    found, _ = _discover(tmp_path, Settings())
    extracted = _extract_repo(tmp_path, Settings(), repo, found)
    assert [(i.dep.file, i.dep.line, i.dep.name, i.dep.constraint) for i in extracted] == [
        ("requirements.txt", 1, "attrs", "==21.1.0"),
        ("base.txt", 2, "flask", "<3"),
        ("requirements.txt", 4, "six", None),
    ]
    assert [(p.file, p.line, p.message.split(" (")[0]) for p in repo.problems] == [
        ("package.json", 1, "not UTF-8 text"),
        ("requirements-dev.txt", 1, "UTF-32-LE text: pip reads it as UTF-16"),
    ]


def test_unread_lockfile_is_said(tmp_path: Path) -> None:
    """A bun.lockb beside a manifest is a warning with bun's hint; rows from ranges say so."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
    (tmp_path / "bun.lockb").write_bytes(b"#!/usr/bin/env bun\nbun-lockfile-format-v0\n\x00\x01")
    result = _scan([tmp_path], FakeFetch(PKGS))
    repo = result.repos[0]
    assert [(p.file, p.severity) for p in repo.problems] == [("bun.lockb", "warning")]
    assert "run `bun install --save-text-lockfile`" in repo.problems[0].message
    finding = repo.rows[0].finding
    assert (finding.current, finding.current_source) == ("1.0.0", "range")
    assert finding.reason == "from the range: bun.lockb not read"


@pytest.mark.parametrize(
    ("name", "text"),
    [
        ("yarn.lock", '# yarn lockfile v1\n\n"a@>=1.0.0":\n  version "1.0.0"\n'),
        (
            "pnpm-lock.yaml",
            (
                "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n"
                "      a:\n        specifier: '>=1.0.0'\n        version: 1.0.0\n"
            ),
        ),
        ("bun.lock", '{"lockfileVersion": 1, "packages": {"a": ["a@1.0.0", "", {}, ""],},}'),
    ],
)
def test_yarn_pnpm_and_bun_lockfiles_give_current(tmp_path: Path, name: str, text: str) -> None:
    """yarn.lock, pnpm-lock.yaml and bun.lock are read: no warning, current is the locked one."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": ">=1.0.0"}}))
    _write(tmp_path, name, text)
    repo = _scan([tmp_path], FakeFetch(PKGS)).repos[0]
    assert repo.problems == []
    finding = repo.rows[0].finding
    assert (finding.current, finding.current_source) == ("1.0.0", "lockfile")
    assert repo.rows[0].lock_file == name


def _extract(root: Path) -> list[_Extracted]:
    repo = RepoResult(target=str(root), root=str(root), commit=None)
    found, _ = _discover(root, Settings())
    return _extract_repo(root, Settings(), repo, found)


def test_unsupported_datasource_is_skipped_with_a_reason(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A dependency whose registry this build cannot query is shown as skipped, not an error."""
    dep = Dependency(
        manager="cargo_toml",
        file="Cargo.toml",
        line=3,
        name="serde",
        package_name="serde",
        datasource="crates-not-built",
        versioning="cargo",
        dep_type="dependencies",
        declared="1",
        constraint="1",
    )
    monkeypatch.setattr(scan_module, "_extract_repo", lambda *_: [_Extracted(dep)])
    result = _scan([tmp_path], FakeFetch({}))
    assert [(r.finding.status, r.finding.reason) for r in result.repos[0].rows] == [
        ("skipped", "crates-not-built lookups are not supported yet")
    ]


@pytest.mark.parametrize(
    ("module", "expected"),
    [
        (
            "github.com/acme/tool",
            "private module (matches GONOPROXY/GOPRIVATE pattern 'github.com/acme')",
        ),
        (
            "git.corp.example/x/y",
            "private module (matches GONOPROXY/GOPRIVATE pattern '*.corp.example')",
        ),
        ("github.com/acmeinc/tool", None),
        ("golang.org/x/text", None),
    ],
)
def test_private_go_modules_are_skipped(module: str, expected: str | None) -> None:
    """GONOPROXY/GOPRIVATE patterns match module path prefixes element by element."""
    settings = Settings.model_validate({"go_noproxy": ("*.corp.example", "github.com/acme")})
    assert scan_module._go_skip(module, settings) == expected


def test_broken_lockfile_is_named_on_its_rows(tmp_path: Path) -> None:
    """A lockfile that cannot be parsed is a problem, and rows resolved from ranges say why."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
    _write(tmp_path, "package-lock.json", "{ broken")
    result = _scan([tmp_path], FakeFetch(PKGS))
    finding = result.repos[0].rows[0].finding
    assert (finding.current, finding.current_source) == ("1.0.0", "range")
    assert finding.reason == "from the range: package-lock.json not read"
    assert [p.file for p in result.repos[0].problems] == ["package-lock.json"]


def test_pipfile_lock_gives_locked_versions_to_the_pipfile_beside_it(tmp_path: Path) -> None:
    """Pipfile rows take their own category's Pipfile.lock pin; a pyproject beside it does not."""
    _write(
        tmp_path,
        "Pipfile",
        '[packages]\npytz = "*"\nexceptiongroup = "*"\n'
        '[dev-packages]\nexceptiongroup = "==1.1.0"\nclick = ">=9"\n',
    )
    lock = {
        "_meta": {"pipfile-spec": 6},
        "default": {
            "pytz": {"version": "==2026.1.post1"},
            "exceptiongroup": {"version": "==1.3.1"},
        },
        "develop": {
            "exceptiongroup": {"version": "==1.1.0"},
            "click": {"version": "==8.0.3"},
        },
    }
    _write(tmp_path, "Pipfile.lock", json.dumps(lock, indent=4))
    _write(tmp_path, "pyproject.toml", '[project]\nname = "app"\ndependencies = ["pytz"]\n')
    found = [
        (i.dep.file, i.dep.dep_type, i.dep.name, i.locked, i.lock_file) for i in _extract(tmp_path)
    ]
    assert sorted(found, key=str) == sorted(
        [
            ("Pipfile", "packages", "pytz", "2026.1.post1", "Pipfile.lock"),
            ("Pipfile", "packages", "exceptiongroup", "1.3.1", "Pipfile.lock"),
            ("Pipfile", "dev-packages", "exceptiongroup", "1.1.0", "Pipfile.lock"),
            ("Pipfile", "dev-packages", "click", None, None),
            ("pyproject.toml", "project", "pytz", None, None),
        ],
        key=str,
    )


class _CountingPackages(tuple[LockedPackage, ...]):
    """A lockfile's packages that count how often they are walked."""

    __slots__ = ()
    walks = 0

    def __iter__(self) -> Iterator[LockedPackage]:
        """Count the walk, then walk."""
        _CountingPackages.walks += 1
        return super().__iter__()


@pytest.mark.parametrize(
    ("datasource", "manager", "lock_manager", "lock_file", "install"),
    [
        ("npm", "package_json", "package_lock", "package-lock.json", "node_modules/"),
        ("pypi", "pyproject", "uv_lock", "uv.lock", ""),
    ],
)
def test_matching_many_dependencies_walks_a_lockfile_once(
    datasource: str, manager: str, lock_manager: str, lock_file: str, install: str
) -> None:
    """Each dependency finds its locked version in an index built once per lockfile and run."""
    _CountingPackages.walks = 0
    packages = _CountingPackages(
        LockedPackage(f"p{i}", f"1.0.{i}", i, f"{install}p{i}" if install else "")
        for i in range(200)
    )
    lock = Lockfile(lock_file, lock_manager, datasource, packages, frozenset({""}))
    indexes: dict[tuple[int, str], dict[str, list[LockedPackage]]] = {}
    found = []
    for i in range(0, 200, 2):
        dep = Dependency(
            manager=manager,
            file="pyproject.toml" if datasource == "pypi" else "package.json",
            line=1,
            name=f"p{i}",
            package_name=f"p{i}",
            datasource=datasource,
            versioning="npm" if datasource == "npm" else "pep440",
            dep_type="dependencies",
            declared=None,
            constraint=None,
        )
        found.append(scan_module._locked_version(dep, None, [lock], indexes))
    assert found == [(f"1.0.{i}", lock_file, None) for i in range(0, 200, 2)]
    assert _CountingPackages.walks == 1


def test_preparing_the_process_for_a_scan_raises_the_young_collection_threshold(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """The first GC threshold becomes 50,000 allocations (never lowered); the others stay."""
    monkeypatch.setattr(gc, "get_freeze_count", lambda: 1)  # this test process stays unfrozen
    saved = gc.get_threshold()
    try:
        gc.set_threshold(700, 10, 10)
        scan_module.freeze_startup_objects()
        assert gc.get_threshold() == (50_000, 10, 10)
        gc.set_threshold(80_000, 5, 7)
        scan_module.freeze_startup_objects()
        assert gc.get_threshold() == (80_000, 5, 7)
    finally:
        gc.set_threshold(*saved)


def test_rows_that_send_requests_are_evaluated_by_a_bounded_pool(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Image rows (they may read digests and dates) run at most ``ROW_WORKERS`` at once, in order.

    A Dockerfile of 100,000 FROM lines used to be 100,000 tasks (6.7 KB of memory a row).
    """
    lines = "".join(f"FROM nginx:1.{i} AS s{i}\n" for i in range(40))
    _write(tmp_path, "Dockerfile", lines)
    running = peak = 0

    async def row(item: _Extracted, *_: object) -> Row:
        nonlocal running, peak
        running += 1
        peak = max(peak, running)
        await anyio.lowlevel.checkpoint()
        running -= 1
        return Row(item.dep, Finding(status="unknown"))

    monkeypatch.setattr(scan_module, "ROW_WORKERS", 4)
    monkeypatch.setattr(scan_module, "_guarded_row", row)
    repo = _scan([tmp_path], FakeFetch({})).repos[0]
    assert [r.dependency.declared for r in repo.rows] == [f"nginx:1.{i}" for i in range(40)]
    assert peak == 4


def test_a_past_now_sees_only_the_releases_published_by_then(tmp_path: Path) -> None:
    """``--now`` before a release: it did not exist yet (no latest, no candidate, no hold)."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
    pkgs = {
        "a": {
            "1.0.0": "2025-01-01T00:00:00Z",
            "1.1.0": "2025-08-01T00:00:00Z",
            "2.0.0": "2026-01-01T00:00:00Z",
        }
    }
    past = datetime(2025, 6, 1, tzinfo=UTC)
    settings = Settings.model_validate(
        {"registries": {"npm": "http://npm.test"}, "now": past.isoformat(), "min-release-age": "3d"}
    )
    result = anyio.run(scan, [str(tmp_path)], settings, FakeFetch(pkgs), FixedClock(past))
    finding = result.repos[0].rows[0].finding
    assert (finding.current, finding.latest, finding.status) == ("1.0.0", "1.0.0", "up-to-date")
    assert finding.held_back == ()
    # At the real time (no --now) the same catalog has every release.
    finding = _scan([tmp_path], FakeFetch(pkgs)).repos[0].rows[0].finding
    assert (finding.current, finding.latest) == ("1.1.0", "2.0.0")


def test_a_pin_published_after_a_past_now_says_so(tmp_path: Path) -> None:
    """A pin released after ``--now`` is unknown because it did not exist yet, not unpublished."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "2.0.0", "b": "9.9.9"}}))
    pkgs = {
        "a": {"1.0.0": "2025-01-01T00:00:00Z", "2.0.0": "2026-01-01T00:00:00Z"},
        "b": {"1.0.0": "2025-01-01T00:00:00Z"},
    }
    past = datetime(2025, 6, 1, tzinfo=UTC)
    settings = Settings.model_validate(
        {"registries": {"npm": "http://npm.test"}, "now": past.isoformat()}
    )
    result = anyio.run(scan, [str(tmp_path)], settings, FakeFetch(pkgs), FixedClock(past))
    rows = result.repos[0].rows
    reasons = {r.dependency.name: (r.finding.status, r.finding.reason) for r in rows}
    later = (
        "pinned version 2.0.0 was published after the evaluation time "
        "(2025-06-01T00:00:00Z, --now): not released yet then"
    )
    assert reasons == {
        "a": ("unknown", later),
        # Never published at all: the registry's list does not have it.
        "b": ("unknown", "pinned version 9.9.9 is not in the npm release list"),
    }


SETUP_PY = "from setuptools import setup\n\nsetup(install_requires=['requests>=2'])\n"
SETUP_PY_WARNING = (
    "setup.py is not read (it is executable code): the requirements it declares are not in"
    " this report; declare them in pyproject.toml [project] or setup.cfg [options] to have"
    " them scanned"
)


def _extracted_repo(root: Path) -> tuple[RepoResult, list[_Extracted]]:
    repo = RepoResult(target=str(root), root=str(root), commit=None)
    found, _ = _discover(root, Settings())
    return repo, _extract_repo(root, Settings(), repo, found)


def test_a_setup_py_alone_is_a_warning_not_silence(tmp_path: Path) -> None:
    """setup.py is never run or parsed: where nothing else declares requirements, say so.

    Beside a setup.cfg with install_requires it is quiet; beside a pyproject.toml that only
    names build requirements (the usual setuptools layout) it still warns, at the file.
    """
    _write(tmp_path, "legacy/setup.py", SETUP_PY)
    _write(tmp_path, "legacy/pyproject.toml", '[build-system]\nrequires = ["setuptools>=61"]\n')
    _write(tmp_path, "declarative/setup.py", "from setuptools import setup\nsetup()\n")
    _write(tmp_path, "declarative/setup.cfg", "[options]\ninstall_requires =\n    attrs>=23\n")
    _write(tmp_path, "bare/setup.py", SETUP_PY)
    repo, extracted = _extracted_repo(tmp_path)
    assert [(p.file, p.line, p.message, p.severity) for p in repo.problems] == [
        ("bare/setup.py", None, SETUP_PY_WARNING, "warning"),
        ("legacy/setup.py", None, SETUP_PY_WARNING, "warning"),
    ]
    assert [(i.dep.file, i.dep.line, i.dep.dep_type, i.dep.name) for i in extracted] == [
        ("declarative/setup.cfg", 3, "install", "attrs"),
        ("legacy/pyproject.toml", 2, "build-system", "setuptools"),
    ]
    assert "bare/setup.py" not in repo.files


def test_a_setup_py_is_not_noted_when_no_python_manager_runs(tmp_path: Path) -> None:
    """With only npm's managers enabled, a setup.py is none of the scan's business."""
    _write(tmp_path, "setup.py", SETUP_PY)
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "1.0.0"}}))
    settings = Settings(enabled_managers=("package_json",))
    repo = RepoResult(target=str(tmp_path), root=str(tmp_path), commit=None)
    found, _ = _discover(tmp_path, settings)
    _extract_repo(tmp_path, settings, repo, found)
    assert repo.problems == []


def test_build_and_hatch_rows_never_take_a_lockfile_version(tmp_path: Path) -> None:
    """uv.lock locks setuptools 75 for the project: the build-system row is not its.

    PEP 517 frontends install build requirements afresh and Hatch resolves its own
    environments, so neither row takes the lock's version nor says it is missing from the
    lock; a uv constraint row takes the locked version of its package (uv resolved it).
    """
    _write(
        tmp_path,
        "pyproject.toml",
        '[build-system]\nrequires = ["setuptools>=61", "wheel"]\n'
        '[project]\nname = "app"\nversion = "1.0"\ndependencies = ["setuptools>=70"]\n'
        '[tool.hatch.envs.lint]\ndependencies = ["setuptools", "ruff"]\n'
        '[tool.uv]\nconstraint-dependencies = ["setuptools<76"]\n',
    )
    _write(
        tmp_path,
        "uv.lock",
        'version = 1\n[[package]]\nname = "app"\nversion = "1.0"\nsource = { editable = "." }\n'
        '[[package]]\nname = "setuptools"\nversion = "75.8.0"\n' + REGISTRY_SOURCE,
    )
    found = _extract(tmp_path)
    assert [(i.dep.dep_type, i.dep.name, i.locked, i.note) for i in found] == [
        ("project", "setuptools", "75.8.0", None),
        ("uv-constraint", "setuptools", "75.8.0", None),
        ("build-system", "setuptools", None, None),
        ("build-system", "wheel", None, None),
        ("hatch-env:lint", "setuptools", None, None),
        ("hatch-env:lint", "ruff", None, None),
    ]


def test_pdm_lock_gives_current_to_project_extras_and_pdm_groups(tmp_path: Path) -> None:
    """pdm.lock locks [project], extras, dependency groups and [tool.pdm.dev-dependencies].

    Its ``[metadata] groups`` may leave a group out (``pdm lock -G``), and a row of a group it
    does lock that it lacks is stale.
    """
    _write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "app"\nversion = "1.0"\ndependencies = ["attrs>=22", "gone"]\n'
        '[project.optional-dependencies]\nSocks = ["socksio"]\ndocs = ["sphinx"]\n'
        '[build-system]\nrequires = ["pdm-backend"]\n'
        '[tool.pdm.dev-dependencies]\ntest = ["attrs", "pytest>=8"]\n',
    )
    _write(
        tmp_path,
        "pdm.lock",
        '[metadata]\ngroups = ["default", "socks", "test"]\nlock_version = "4.5.0"\n'
        '[[package]]\nname = "attrs"\nversion = "23.2.0"\ngroups = ["default", "test"]\n'
        '[[package]]\nname = "socksio"\nversion = "1.0.0"\ngroups = ["socks"]\n',
    )
    found = _extract(tmp_path)
    stale = "not in pdm.lock: current from the range; the lockfile is out of date"
    assert [(i.dep.dep_type, i.dep.name, i.locked, i.lock_file, i.note) for i in found] == [
        ("project", "attrs", "23.2.0", "pdm.lock", None),
        ("project", "gone", None, None, stale),
        ("optional:Socks", "socksio", "1.0.0", "pdm.lock", None),
        (
            "optional:docs",
            "sphinx",
            None,
            None,
            "from the range: pdm.lock does not lock group 'docs' (its [metadata] groups)",
        ),
        ("build-system", "pdm-backend", None, None, None),
        ("pdm-dev:test", "attrs", "23.2.0", "pdm.lock", None),
        ("pdm-dev:test", "pytest", None, None, stale),
    ]


def test_pdm_overrides_take_pdm_lock_versions_and_uv_build_constraints_none(
    tmp_path: Path,
) -> None:
    """A PDM override takes pdm.lock's version (PDM resolved it), and only pdm.lock's.

    uv's build constraints apply to build environments, which uv.lock does not lock: the
    row never takes the locked version of the same package, nor says the lock lacks it.
    """
    _write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "app"\nversion = "1.0"\ndependencies = ["attrs>=22"]\n'
        '[tool.pdm.resolution.overrides]\nurllib3 = ">=1.26.2"\nmissing = "1.0"\n'
        '[tool.uv]\nbuild-constraint-dependencies = ["attrs<24"]\n',
    )
    _write(
        tmp_path,
        "pdm.lock",
        '[metadata]\ngroups = ["default"]\nlock_version = "4.5.0"\n'
        '[[package]]\nname = "attrs"\nversion = "23.2.0"\ngroups = ["default"]\n'
        '[[package]]\nname = "urllib3"\nversion = "2.2.3"\ngroups = ["default"]\n',
    )
    found = _extract(tmp_path)
    assert [(i.dep.dep_type, i.dep.name, i.locked, i.note) for i in found] == [
        ("project", "attrs", "23.2.0", None),
        ("uv-build-constraint", "attrs", None, None),
        ("pdm-override", "urllib3", "2.2.3", None),
        ("pdm-override", "missing", None, None),
    ]


def test_pdm_groups_never_take_uv_lock_versions(tmp_path: Path) -> None:
    """Only pdm.lock locks [tool.pdm.dev-dependencies]: with uv.lock alone they are unlocked."""
    _write(
        tmp_path,
        "pyproject.toml",
        '[project]\nname = "app"\nversion = "1.0"\ndependencies = ["attrs>=22"]\n'
        '[tool.pdm.dev-dependencies]\ntest = ["attrs"]\n',
    )
    _write(
        tmp_path,
        "uv.lock",
        'version = 1\n[[package]]\nname = "attrs"\nversion = "23.2.0"\n' + REGISTRY_SOURCE,
    )
    found = _extract(tmp_path)
    assert [(i.dep.dep_type, i.dep.name, i.locked, i.note) for i in found] == [
        ("project", "attrs", "23.2.0", None),
        ("pdm-dev:test", "attrs", None, None),
    ]


def test_cargo_lock_with_two_versions_gives_each_requirement_the_newest_it_admits(
    tmp_path: Path,
) -> None:
    """Cargo.lock locks foo 0.0.3 and 0.1.0: only ``"0"`` admits 0.1.0, so it alone is at 0.1.0.

    cargo builds each requirement against the highest compatible version in the graph; the
    ``0.0`` requirements (caret, tilde, dev) admit only 0.0.3.
    """
    _write(
        tmp_path,
        "Cargo.toml",
        '[package]\nname = "root"\nversion = "0.1.0"\n[dependencies]\nfoo = "0.0"\n'
        'foo_b = { package = "foo", version = "0" }\n'
        'foo_c = { package = "foo", version = "~0.0.3" }\n'
        '[dev-dependencies]\nfoo_d = { package = "foo", version = "^0.0" }\n',
    )
    _write(
        tmp_path,
        "Cargo.lock",
        'version = 3\n[[package]]\nname = "root"\nversion = "0.1.0"\n'
        'dependencies = ["foo 0.0.3", "foo 0.1.0"]\n'
        '[[package]]\nname = "foo"\nversion = "0.0.3"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n'
        '[[package]]\nname = "foo"\nversion = "0.1.0"\n'
        'source = "registry+https://github.com/rust-lang/crates.io-index"\n',
    )
    found = [(i.dep.name, i.locked, i.note) for i in _extract(tmp_path)]
    assert found == [
        ("foo", "0.0.3", None),
        (
            "foo_b",
            "0.1.0",
            (
                "Cargo.lock also locks foo 0.0.3, which 0 admits too; judged at the newest locked "
                "(cargo builds against the highest compatible version)"
            ),
        ),
        ("foo_c", "0.0.3", None),
        ("foo_d", "0.0.3", None),
    ]
