"""Extraction records of local checkouts: a clean, unchanged checkout is not read again."""

from __future__ import annotations

import dataclasses
import json
import os
import shutil
import subprocess
from pathlib import Path

import anyio
import msgspec
import pytest
from msgspec.structs import replace

from patchula import git as git_module
from patchula import records as records_module
from patchula import scan as scan_module
from patchula.cache import Cache
from patchula.clock import FixedClock
from patchula.discovery import read_regular
from patchula.errors import ManifestError
from patchula.models import Dependency, ManifestProblem
from patchula.records import (
    RECORD_FORMAT,
    Extracted,
    Record,
    config_hash,
    decode,
    encode,
    worktree_clean,
)
from patchula.scan import ScanResult, scan
from patchula.settings import Settings
from tests.test_scan import NOW, PKGS, FakeFetch

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs a git executable")

GIT_ID = ("-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false")


def _git(root: Path, *args: str, check: bool = True) -> str:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    done = subprocess.run(  # noqa: S603 - the test's own git commands
        ["git", *GIT_ID, *args],  # noqa: S607 - git from PATH, as the product finds it
        cwd=root,
        env=env,
        check=check,
        capture_output=True,
        text=True,
    )
    return done.stdout


def _commit(root: Path, files: dict[str, str], message: str = "c") -> str:
    for rel, text in files.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(text)
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", message)
    return _git(root, "rev-parse", "HEAD").strip()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A git checkout with one package.json declaring ``a``, committed."""
    root = tmp_path / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    _commit(root, {"package.json": json.dumps({"dependencies": {"a": "^1.0.0"}})})
    return root


class Store:
    """An in-memory record store counting reads and writes."""

    def __init__(self) -> None:
        self.data: dict[tuple[str, str, str], bytes] = {}
        self.puts = 0
        self.gets = 0

    async def get_extraction(self, repo: str, commit: str, config_hash: str) -> bytes | None:
        """Return the stored bytes."""
        self.gets += 1
        return self.data.get((repo, commit, config_hash))

    async def put_extraction(self, repo: str, commit: str, config_hash: str, data: bytes) -> None:
        """Store the bytes."""
        self.puts += 1
        self.data[repo, commit, config_hash] = data


def _scan(targets: list[Path], store: Store | Cache | None, **settings: object) -> ScanResult:
    s = Settings.model_validate({"registries": {"npm": "http://npm.test"}, **settings})

    async def main() -> ScanResult:
        return await scan(
            [str(t) for t in targets], s, FakeFetch(PKGS), FixedClock(NOW), records=store
        )

    return anyio.run(main)


def _rows(result: ScanResult) -> list[tuple[str, str, str, str | None]]:
    return [
        (r.dependency.file, r.dependency.name, r.finding.status, r.finding.current)
        for repo in result.repos
        for r in repo.rows
    ]


@pytest.fixture
def reads(monkeypatch: pytest.MonkeyPatch) -> list[str]:
    """Every manifest the scan's readers read (``.git`` files left out)."""
    seen: list[str] = []

    def counting(path: Path, rel: str, max_bytes: int) -> bytes:
        if ".git" not in path.parts:
            seen.append(rel)
        return read_regular(path, rel, max_bytes)

    monkeypatch.setattr(scan_module, "read_regular", counting)
    return seen


def test_second_run_of_a_clean_checkout_reads_no_manifest(
    checkout: Path, reads: list[str], monkeypatch: pytest.MonkeyPatch
) -> None:
    """An unchanged clean checkout is answered by its record: no walk, no read, same rows."""
    store = Store()
    first = _scan([checkout], store)
    assert "package.json" in reads
    assert first.repos[0].extraction == "fresh"
    assert store.puts == 1

    def no_walk(*_: object, **__: object) -> None:
        raise AssertionError("walked")

    monkeypatch.setattr(scan_module, "Walk", no_walk)
    reads.clear()
    second = _scan([checkout], store)
    assert reads == []
    repo = second.repos[0]
    assert repo.extraction == "cached"
    assert repo.commit == first.repos[0].commit
    assert repo.commit is not None
    assert len(repo.commit) == 40
    assert _rows(second) == _rows(first) == [("package.json", "a", "outdated", "1.0.0")]
    assert repo.files == first.repos[0].files == ["package.json"]
    assert store.puts == 1


def test_problems_and_notes_come_back_from_the_record(checkout: Path) -> None:
    """A record keeps the extraction's problems, lockfile versions and notes as they were."""
    _commit(
        checkout,
        {
            "bad/package.json": '{\n  "dependencies": {\n    "a": 1.0.0\n',
            "package-lock.json": json.dumps(
                {
                    "lockfileVersion": 3,
                    "packages": {"": {}, "node_modules/a": {"version": "1.0.0"}},
                }
            ),
        },
    )
    store = Store()
    first = _scan([checkout], store)
    second = _scan([checkout], store)
    assert second.repos[0].extraction == "cached"
    assert second.repos[0].problems == first.repos[0].problems
    assert [p.file for p in second.repos[0].problems] == ["bad/package.json"]
    assert [(r.lock_file, r.finding.current_source) for r in second.repos[0].rows] == [
        ("package-lock.json", "lockfile")
    ]
    assert second.repos[0].files == first.repos[0].files


def test_the_files_ignore_paths_kept_out_come_back_from_the_record(checkout: Path) -> None:
    """A cached extraction still says which manifests the ignore globs kept out."""
    _commit(
        checkout,
        {"examples/demo/package.json": "{}", "tests/requirements.txt": "flask==1.0\n"},
    )
    store = Store()
    first = _scan([checkout], store)
    second = _scan([checkout], store)
    assert second.repos[0].extraction == "cached"
    assert (
        second.repos[0].ignored
        == first.repos[0].ignored
        == ["tests/requirements.txt", "examples/demo/package.json"]
    )
    assert second.repos[0].ignored_complete


def test_a_new_commit_is_extracted_again(checkout: Path) -> None:
    """A new HEAD commit misses the record and is extracted (and recorded) afresh."""
    store = Store()
    _scan([checkout], store)
    _commit(checkout, {"package.json": json.dumps({"dependencies": {"a": "^2.0.0"}})})
    second = _scan([checkout], store)
    assert second.repos[0].extraction == "fresh"
    assert _rows(second) == [("package.json", "a", "up-to-date", "2.0.0")]
    assert store.puts == 2


@pytest.mark.parametrize("change", ["modified", "untracked", "staged"])
def test_a_dirty_tree_is_extracted_and_not_recorded(
    checkout: Path, change: str, reads: list[str]
) -> None:
    """A modified, staged or untracked manifest: extracted afresh, and no record stored."""
    store = Store()
    _scan([checkout], store)
    if change == "untracked":
        (checkout / "sub").mkdir()
        (checkout / "sub/package.json").write_text(json.dumps({"dependencies": {"a": "2.0.0"}}))
    else:
        (checkout / "package.json").write_text(json.dumps({"dependencies": {"a": "2.0.0"}}))
        if change == "staged":
            _git(checkout, "add", "package.json")
    reads.clear()
    result = _scan([checkout], store)
    assert result.repos[0].extraction == "fresh"
    assert "package.json" in reads
    changed = "sub/package.json" if change == "untracked" else "package.json"
    assert (changed, "a", "up-to-date", "2.0.0") in _rows(result)
    assert store.puts == 1  # only the first (clean) run stored one


@pytest.mark.parametrize("rel", ["build.log", "cache/patchula.db", "report.json", "docs/notes.md"])
def test_files_no_manager_reads_leave_the_record_usable(checkout: Path, rel: str) -> None:
    """An untracked build log, report or cache file in the checkout does not cost the record."""
    path = checkout / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n")
    store = Store()
    _scan([checkout], store)
    assert _scan([checkout], store).repos[0].extraction == "cached"


@pytest.mark.parametrize(
    "rel", [".gitignore", "env/pyvenv.cfg", "Dockerfile", "sub/go.mod", "bun.lockb"]
)
def test_files_that_steer_the_walk_or_a_manager_are_changes(checkout: Path, rel: str) -> None:
    """An untracked file a manager reads by name, or one that steers the walk, is a change."""
    store = Store()
    _scan([checkout], store)
    path = checkout / rel
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("x\n")
    assert _scan([checkout], store).repos[0].extraction == "fresh"
    assert store.puts == 1


@pytest.mark.parametrize(
    "settings",
    [
        {"ignore_paths": ["**/vendor/**"]},
        {"disabled_managers": ["dockerfile"]},
        {"max_file_bytes": 4096},
        {"tool_registry": {"widget": "aqua:acme/widget"}},
    ],
)
def test_a_changed_config_misses(checkout: Path, settings: dict[str, object]) -> None:
    """Ignore paths, managers, the file size limit and tool overrides are in the config hash."""
    store = Store()
    _scan([checkout], store)
    result = _scan([checkout], store, **settings)
    assert result.repos[0].extraction == "fresh"
    assert len(store.data) == 2


def test_config_hash_has_no_secret_and_changes_with_the_scope() -> None:
    """The hash is of the extraction settings and the scope only (credentials never count)."""
    plain = Settings()
    with_token = Settings.model_validate({"registries": {"npm": "https://u:s3cret@npm.test"}})
    assert config_hash(plain, None, None) == config_hash(with_token, None, None)
    assert config_hash(plain, "package.json", None) != config_hash(plain, None, None)
    assert config_hash(plain, None, "packages/a") != config_hash(plain, None, None)


@pytest.mark.parametrize(
    "damage",
    [b"", b"\x93\x01\x02", b"not msgpack at all", b"\xc1", "foreign"],
)
def test_a_damaged_record_is_refused_and_replaced(checkout: Path, damage: bytes | str) -> None:
    """A record that does not decode to this format is a miss; the run stores a good one."""
    store = Store()
    _scan([checkout], store)
    (key,) = store.data
    good = store.data[key]
    if damage == "foreign":  # decodes, but says another format
        record = decode(good)
        assert record is not None
        foreign = encode(Record(99, record.files, record.read, record.problems, []))
        assert foreign is not None
        store.data[key] = foreign
    else:
        assert isinstance(damage, bytes)
        store.data[key] = damage
    result = _scan([checkout], store)
    assert result.repos[0].extraction == "fresh"
    assert _rows(result) == [("package.json", "a", "outdated", "1.0.0")]
    assert store.data[key] == good
    assert _scan([checkout], store).repos[0].extraction == "cached"


def test_a_record_with_an_invalid_package_name_is_refused(checkout: Path) -> None:
    """A record whose rows a fresh extraction would refuse (a bad npm name) is not trusted."""
    store = Store()
    _scan([checkout], store)
    (key,) = store.data
    record = decode(store.data[key])
    assert record is not None
    item = record.extracted[0]
    bad = replace(item, dep=replace(item.dep, package_name="../../etc"))
    forged = encode(Record(record.format, record.files, record.read, record.problems, [bad]))
    assert forged is not None
    store.data[key] = forged
    assert _scan([checkout], store).repos[0].extraction == "fresh"


def test_no_records_without_a_store_or_a_commit(tmp_path: Path) -> None:
    """No store (``--no-cache``) or no ``.git``: extracted afresh every time, nothing stored."""
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"a": "^1.0.0"}}))
    store = Store()
    assert _scan([tmp_path], store).repos[0].extraction == "fresh"
    assert _scan([tmp_path], store).repos[0].extraction == "fresh"
    assert store.gets == store.puts == 0


def test_no_git_executable_means_fresh(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a ``git`` on PATH cleanliness is unknown: fresh, and nothing is stored."""
    monkeypatch.setattr(git_module, "_LOOKUP", [None])
    store = Store()
    _scan([checkout], store)
    assert _scan([checkout], store).repos[0].extraction == "fresh"
    assert store.puts == 0


def test_hostile_git_config_runs_no_command(checkout: Path, tmp_path: Path) -> None:
    """``core.fsmonitor`` and a clean filter set to commands in ``.git/config`` never run."""
    marker = tmp_path / "ran"
    command = f"touch {marker}; cat"
    _commit(checkout, {".gitattributes": "* filter=evil\n"})
    _git(checkout, "config", "core.fsmonitor", f"touch {marker}")
    _git(checkout, "config", "filter.evil.clean", command)
    _git(checkout, "config", "filter.evil.process", f"touch {marker}")
    # The stat data no longer matches the index: status must re-read the file to compare.
    os.utime(checkout / "package.json", (0, 0))
    store = Store()
    _scan([checkout], store)
    second = _scan([checkout], store)
    assert not marker.exists()
    assert second.repos[0].extraction == "cached"
    # The config is live: a plain git status does run it (so the test can fail).
    _git(checkout, "status", "--porcelain", check=False)
    assert marker.exists()


def test_a_timeout_or_failing_git_is_not_clean(checkout: Path, tmp_path: Path) -> None:
    """A git that fails, or hangs past the timeout, means not clean (never an error)."""
    failing = tmp_path / "git-fail"
    failing.write_text("#!/bin/sh\nexit 128\n")
    failing.chmod(0o755)
    common = checkout / ".git"
    assert worktree_clean(checkout, common, ["package.json"])
    assert not worktree_clean(checkout, common, ["package.json"], git=str(failing))
    assert not worktree_clean(checkout, common, ["package.json"], git=str(tmp_path / "none"))


def test_hanging_git_is_killed(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A git that never ends is killed at the deadline and the tree is taken as not clean."""
    hanging = tmp_path / "git-hang"
    hanging.write_text("#!/bin/sh\nexec sleep 60\n")
    hanging.chmod(0o755)
    monkeypatch.setattr(records_module, "GIT_STATUS_TIMEOUT_SECONDS", 0.2)
    assert not worktree_clean(checkout, checkout / ".git", [], git=str(hanging))


def test_ignored_files_the_extraction_read_are_watched(checkout: Path) -> None:
    """An ignored lockfile a file target reads: changing it is a change of the extraction."""
    (checkout / ".gitignore").write_text("package-lock.json\n")
    _commit(checkout, {})
    lock = {"lockfileVersion": 3, "packages": {"": {}, "node_modules/a": {"version": "1.0.0"}}}
    (checkout / "package-lock.json").write_text(json.dumps(lock))
    target = checkout / "package.json"
    store = Store()
    first = _scan([target], store)
    assert [r.finding.current for r in first.repos[0].rows] == ["1.0.0"]
    # The ignored lockfile exists: a file target reads it, so the record is not used.
    assert _scan([target], store).repos[0].extraction == "fresh"
    assert store.puts == 0


def test_info_exclude_patterns_disable_records(checkout: Path) -> None:
    """A checkout whose ``.git/info/exclude`` hides files from git uses no records."""
    (checkout / ".git/info").mkdir(exist_ok=True)
    (checkout / ".git/info/exclude").write_text("# comment\nlocal/\n")
    store = Store()
    _scan([checkout], store)
    assert store.puts == 0
    (checkout / ".git/info/exclude").write_text("# only comments\n")
    _scan([checkout], store)
    assert store.puts == 1


def test_file_and_member_targets_have_their_own_records(checkout: Path) -> None:
    """A file target keys its record with its scope: it never answers the whole checkout."""
    _commit(checkout, {"sub/requirements.txt": "b==1.0\n"})
    store = Store()
    whole = _scan([checkout], store)
    one = _scan([checkout / "package.json"], store)
    assert len(store.data) == 2
    assert [r.dependency.file for r in one.repos[0].rows] == ["package.json"]
    again = _scan([checkout / "package.json"], store)
    assert again.repos[0].extraction == "cached"
    assert _rows(again) == _rows(one)
    assert {r.dependency.file for r in whole.repos[0].rows} == {
        "package.json",
        "sub/requirements.txt",
    }


def test_the_real_cache_keeps_records(checkout: Path, tmp_path: Path) -> None:
    """Records round-trip through the SQLite cache's extraction table across runs."""

    async def run() -> str | None:
        cache = Cache.open(tmp_path / "cache.db")
        try:
            s = Settings.model_validate({"registries": {"npm": "http://npm.test"}})
            result = await scan([str(checkout)], s, FakeFetch(PKGS), FixedClock(NOW), records=cache)
        finally:
            await cache.aclose()
        return result.repos[0].extraction

    assert anyio.run(run) == "fresh"
    assert anyio.run(run) == "cached"


def test_an_unreadable_manifest_is_not_recorded(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A read failure the content does not decide (EACCES, EIO) is not kept in a record."""

    def failing(path: Path, rel: str, max_bytes: int) -> bytes:
        if rel == "package.json":
            raise ManifestError("cannot read: Permission denied", file=rel)
        return read_regular(path, rel, max_bytes)

    store = Store()
    with monkeypatch.context() as patch:
        patch.setattr(scan_module, "read_regular", failing)
        first = _scan([checkout], store)
    assert [p.message for p in first.repos[0].problems] == ["cannot read: Permission denied"]
    assert store.puts == 0
    second = _scan([checkout], store)
    assert _rows(second) == [("package.json", "a", "outdated", "1.0.0")]
    assert store.puts == 1


def test_the_clean_check_of_a_fresh_extraction_waits_for_no_lookup(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A first run requests its lookups before its clean check (a git status) decides the record.

    The check costs tens of milliseconds; run before the requests, it would delay every cold
    run of a git checkout by that much.
    """
    order: list[str] = []
    request, clean = scan_module._request, scan_module._clean

    def noting_request(*args: object, **kwargs: object) -> None:
        order.append("request")
        request(*args, **kwargs)  # type: ignore[arg-type]

    async def noting_clean(*args: object, **kwargs: object) -> bool:
        order.append("clean")
        return await clean(*args, **kwargs)  # type: ignore[arg-type]

    monkeypatch.setattr(scan_module, "_request", noting_request)
    monkeypatch.setattr(scan_module, "_clean", noting_clean)
    store = Store()
    result = _scan([checkout], store)
    assert order == ["request", "clean"]
    assert store.puts == 1
    assert _rows(result) == [("package.json", "a", "outdated", "1.0.0")]


def _pkg(version: str) -> str:
    return json.dumps({"dependencies": {"a": version}})


def _nested_repo(outer: Path, rel: str, files: dict[str, str]) -> Path:
    """A git repository of its own at ``outer/rel``, ``files`` committed in it."""
    inner = outer / rel
    inner.mkdir(parents=True)
    _git(inner, "init", "-q")
    _commit(inner, files)
    return inner


def test_a_file_read_in_an_untracked_nested_repository_is_never_recorded(checkout: Path) -> None:
    """``lib/`` is a repository of its own (``?? lib/`` in the outer one): git cannot see its edits.

    The walk reads ``lib/package.json`` all the same, so the extraction is never recorded, and
    editing the file gives the new rows.
    """
    _nested_repo(checkout, "lib", {"package.json": _pkg("1.0.0")})
    assert _git(checkout, "status", "--porcelain") == "?? lib/\n"
    store = Store()
    first = _scan([checkout], store)
    assert ("lib/package.json", "a", "outdated", "1.0.0") in _rows(first)
    assert store.puts == 0
    (checkout / "lib/package.json").write_text(_pkg("2.0.0"))
    second = _scan([checkout], store)
    assert second.repos[0].extraction == "fresh"
    assert ("lib/package.json", "a", "up-to-date", "2.0.0") in _rows(second)
    assert store.puts == 0


def test_an_embedded_gitlink_without_gitmodules_is_never_recorded(checkout: Path) -> None:
    """``git add lib`` of a nested repository (no ``.gitmodules``): status hides its edits."""
    _nested_repo(checkout, "lib", {"package.json": _pkg("1.0.0")})
    _git(checkout, "add", "lib")
    _git(checkout, "commit", "-q", "-m", "gitlink")
    assert "160000" in _git(checkout, "ls-files", "-s", "lib")
    store = Store()
    first = _scan([checkout], store)
    assert ("lib/package.json", "a", "outdated", "1.0.0") in _rows(first)
    assert store.puts == 0
    (checkout / "lib/package.json").write_text(_pkg("2.0.0"))
    assert _git(checkout, "status", "--porcelain", "--ignore-submodules=all") == ""
    second = _scan([checkout], store)
    assert second.repos[0].extraction == "fresh"
    assert ("lib/package.json", "a", "up-to-date", "2.0.0") in _rows(second)


def test_a_record_whose_files_are_now_in_a_nested_repository_is_refused(checkout: Path) -> None:
    """A record stored while ``sub/`` was plain is not used once ``sub/`` holds a ``.git``."""
    _commit(checkout, {"sub/package.json": _pkg("1.0.0")})
    store = Store()
    _scan([checkout], store)
    assert store.puts == 1
    assert _scan([checkout], store).repos[0].extraction == "cached"
    (checkout / "sub/.git").write_text("gitdir: elsewhere\n")  # a file is enough: git stops there
    assert _scan([checkout], store).repos[0].extraction == "fresh"
    assert store.puts == 1


def test_an_untracked_nested_repository_is_a_change_even_when_nothing_in_it_was_read(
    checkout: Path,
) -> None:
    """Git lists an untracked repository as ``?? lib/`` only: a manifest added in it is unseen.

    So the entry is a change: the record is not used, and the new manifest's rows come.
    """
    _nested_repo(checkout, "lib", {"README": "x\n"})
    store = Store()
    _scan([checkout], store)
    (checkout / "lib/package.json").write_text(_pkg("2.0.0"))
    assert _git(checkout, "status", "--porcelain") == "?? lib/\n"
    result = _scan([checkout], store)
    assert result.repos[0].extraction == "fresh"
    assert ("lib/package.json", "a", "up-to-date", "2.0.0") in _rows(result)


@pytest.mark.parametrize("flag", ["--assume-unchanged", "--skip-worktree"])
def test_a_read_file_git_status_is_told_to_skip_is_not_clean(checkout: Path, flag: str) -> None:
    """``git update-index --assume-unchanged``/``--skip-worktree``: status hides the file's edits.

    The read files' index flags (``git ls-files -v``) are checked: such a file is a change.
    """
    _git(checkout, "update-index", flag, "package.json")
    store = Store()
    _scan([checkout], store)
    assert store.puts == 0
    (checkout / "package.json").write_text(_pkg("2.0.0"))
    assert _git(checkout, "status", "--porcelain") == ""
    result = _scan([checkout], store)
    assert result.repos[0].extraction == "fresh"
    assert _rows(result) == [("package.json", "a", "up-to-date", "2.0.0")]


def test_a_record_is_refused_once_a_read_file_is_flagged(checkout: Path) -> None:
    """A record stored before the flag was set is not used after (its edit would be hidden)."""
    store = Store()
    _scan([checkout], store)
    assert store.puts == 1
    _git(checkout, "update-index", "--assume-unchanged", "package.json")
    (checkout / "package.json").write_text(_pkg("2.0.0"))
    result = _scan([checkout], store)
    assert result.repos[0].extraction == "fresh"
    assert _rows(result) == [("package.json", "a", "up-to-date", "2.0.0")]


def test_a_flagged_gitignore_present_or_absent_is_not_clean(checkout: Path) -> None:
    """A ``.gitignore`` steers the walk: flagged, its edit or its deletion is hidden."""
    _commit(checkout, {"sub/.gitignore": "x\n", "sub/package.json": _pkg("1.0.0")})
    common = checkout / ".git"
    assert worktree_clean(checkout, common, ["package.json"])
    _git(checkout, "update-index", "--skip-worktree", "sub/.gitignore")
    assert not worktree_clean(checkout, common, ["package.json"])
    # Absent, it comes back unseen once the flag goes: still not clean.
    (checkout / "sub/.gitignore").unlink()
    assert not worktree_clean(checkout, common, ["package.json"])


def test_core_ignore_stat_flags_every_added_file(checkout: Path) -> None:
    """``core.ignoreStat=true`` in the repository marks added files assume-unchanged."""
    _git(checkout, "config", "core.ignoreStat", "true")
    _commit(checkout, {"package.json": _pkg("1.0.0")})
    assert _git(checkout, "ls-files", "-v", "package.json").startswith("h ")
    store = Store()
    _scan([checkout], store)
    assert store.puts == 0


def test_a_flagged_file_the_extraction_never_read_is_not_clean(checkout: Path) -> None:
    """Every index entry counts, not only the read ones: ``notes.md`` flagged is not clean."""
    _commit(checkout, {"notes.md": "x\n", "docs/README": "x\n"})
    common = checkout / ".git"
    assert worktree_clean(checkout, common, ["package.json"])
    _git(checkout, "update-index", "--assume-unchanged", "docs/README")
    assert not worktree_clean(checkout, common, ["package.json"])
    _git(checkout, "update-index", "--no-assume-unchanged", "docs/README")
    assert worktree_clean(checkout, common, ["package.json"])


def test_a_subdirectory_target_gets_the_checkout_commit_and_records(checkout: Path) -> None:
    """``patchula run repo/docs`` (no workspace member): HEAD of the checkout, its own records."""
    head = _commit(checkout, {"docs/package.json": _pkg("1.0.0")})
    docs = checkout / "docs"
    store = Store()
    first = _scan([docs], store)
    assert first.repos[0].commit == head
    assert _rows(first) == [("package.json", "a", "outdated", "1.0.0")]
    assert store.puts == 1
    (checkout / "notes.md").write_text("x\n")  # outside the target: no change of it
    (checkout / "other").mkdir()
    (checkout / "other/package.json").write_text(_pkg("2.0.0"))
    second = _scan([docs], store)
    assert second.repos[0].extraction == "cached"
    assert _rows(second) == _rows(first)
    # The whole checkout has a record of its own, not the subdirectory's.
    assert _scan([checkout], store).repos[0].extraction == "fresh"
    (docs / "package.json").write_text(_pkg("2.0.0"))
    third = _scan([docs], store)
    assert third.repos[0].extraction == "fresh"
    assert _rows(third) == [("package.json", "a", "up-to-date", "2.0.0")]


def test_a_subdirectory_target_watches_its_own_walk_files(checkout: Path) -> None:
    """A new manifest or ``.gitignore`` in the subdirectory is a change of its extraction."""
    _commit(checkout, {"docs/package.json": _pkg("1.0.0")})
    docs = checkout / "docs"
    store = Store()
    _scan([docs], store)
    (docs / ".github/workflows").mkdir(parents=True)
    (docs / ".github/workflows/ci.yml").write_text("on: push\n")
    assert _scan([docs], store).repos[0].extraction == "fresh"


def test_an_ignored_subdirectory_target_is_not_clean(checkout: Path) -> None:
    """A subdirectory git ignores whole (``!! docs/``): its files are unseen by status."""
    (checkout / ".gitignore").write_text("docs/\n")
    _commit(checkout, {})
    (checkout / "docs").mkdir()
    (checkout / "docs/package.json").write_text(_pkg("1.0.0"))
    store = Store()
    _scan([checkout / "docs"], store)
    assert store.puts == 0


def test_a_populated_gitlink_is_a_change_even_when_nothing_in_it_was_read(
    checkout: Path,
) -> None:
    """A committed gitlink without ``.gitmodules``: a manifest added in it is hidden from status.

    The walk enters it, so a checkout with a gitlink that has content is never clean.
    """
    _nested_repo(checkout, "lib", {"README": "x\n"})
    _git(checkout, "add", "lib")
    _git(checkout, "commit", "-q", "-m", "gitlink")
    store = Store()
    _scan([checkout], store)
    assert store.puts == 0
    (checkout / "lib/package.json").write_text(_pkg("2.0.0"))
    assert _git(checkout, "status", "--porcelain", "--ignore-submodules=all") == ""
    result = _scan([checkout], store)
    assert result.repos[0].extraction == "fresh"
    assert ("lib/package.json", "a", "up-to-date", "2.0.0") in _rows(result)


def test_an_unpopulated_gitlink_keeps_records(checkout: Path) -> None:
    """A gitlink whose directory is absent or empty (a clone never fills one) holds nothing."""
    sha = _git(checkout, "rev-parse", "HEAD").strip()
    _git(checkout, "update-index", "--add", "--cacheinfo", f"160000,{sha},vendor/lib")
    _git(checkout, "commit", "-q", "-m", "gitlink")
    store = Store()
    _scan([checkout], store)
    assert _scan([checkout], store).repos[0].extraction == "cached"
    (checkout / "vendor/lib").mkdir(parents=True)
    assert _scan([checkout], store).repos[0].extraction == "cached"
    (checkout / "vendor/lib/package.json").write_text(_pkg("2.0.0"))
    assert _scan([checkout], store).repos[0].extraction == "fresh"


def test_gitlinks_are_found_without_ls_files_format(checkout: Path, tmp_path: Path) -> None:
    """A git older than 2.38 (no ``ls-files --format``) still finds the gitlinks, by ``-s``."""
    _nested_repo(checkout, "lib", {"README": "x\n"})
    _git(checkout, "add", "lib")
    _git(checkout, "commit", "-q", "-m", "gitlink")
    old = tmp_path / "git-2.37"
    old.write_text(
        "#!/bin/sh\n"
        'for a in "$@"; do case "$a" in --format*) exit 129;; esac; done\n'
        f'exec {shutil.which("git")} "$@"\n'
    )
    old.chmod(0o755)
    common = checkout / ".git"
    assert not worktree_clean(checkout, common, ["package.json"], git=str(old))
    assert not worktree_clean(checkout, common, ["package.json"])
    shutil.rmtree(checkout / "lib")
    assert worktree_clean(checkout, common, ["package.json"], git=str(old))


@pytest.mark.parametrize("bad", ["a\0b", "../../outside.json", "/etc/passwd", "sub/../../x", ""])
def test_a_record_with_hostile_read_paths_is_not_used(checkout: Path, bad: str) -> None:
    """A record (untrusted: a restored CI cache) naming odd read paths: fresh, never a crash."""
    store = Store()
    _scan([checkout], store)
    (key,) = store.data
    record = decode(store.data[key])
    assert record is not None
    forged = encode(replace(record, read=[*record.read, bad]))
    assert forged is not None
    store.data[key] = forged
    result = _scan([checkout], store)
    assert result.repos[0].problems == []
    assert result.repos[0].extraction == "fresh"
    assert _rows(result) == [("package.json", "a", "outdated", "1.0.0")]


def test_read_paths_are_compared_as_git_names_them(checkout: Path) -> None:
    """A read path spelt ``sub/../common.txt`` still watches the file git calls ``common.txt``.

    ``common.txt`` is no manager's by name (an included requirements file): only being read
    makes its change matter.
    """
    _commit(checkout, {"common.txt": "a==1.0\n"})
    common = checkout / ".git"
    assert worktree_clean(checkout, common, ["./common.txt", "sub/../common.txt"])
    (checkout / "common.txt").write_text("a==2.0\n")
    assert not worktree_clean(checkout, common, ["sub/../common.txt"])
    assert worktree_clean(checkout, common, ["package.json"])


def test_a_member_of_a_workspace_below_the_checkout_root_uses_records(checkout: Path) -> None:
    """A workspace root in a subdirectory (``web/``): its member is at the checkout's HEAD."""
    head = _commit(
        checkout,
        {
            "web/package.json": json.dumps({"workspaces": ["pkgs/*"]}),
            "web/pkgs/one/package.json": _pkg("1.0.0"),
        },
    )
    member = checkout / "web/pkgs/one"
    store = Store()
    first = _scan([member], store)
    assert first.repos[0].root == str(checkout / "web")
    assert first.repos[0].commit == head
    assert _rows(first) == [("pkgs/one/package.json", "a", "outdated", "1.0.0")]
    assert _scan([member], store).repos[0].extraction == "cached"
    (member / "package.json").write_text(_pkg("2.0.0"))
    third = _scan([member], store)
    assert third.repos[0].extraction == "fresh"
    assert _rows(third) == [("pkgs/one/package.json", "a", "up-to-date", "2.0.0")]


def _trial_checkout(root: Path) -> dict[str, str]:
    """Manifests at the root, in ``packages/`` and ``app/``, and outside both (the trial's)."""
    files = {
        "package.json": _pkg("1.0.0"),
        "packages/one/package.json": _pkg("1.0.0"),
        "app/package.json": _pkg("1.0.0"),
        "dev-docs/package.json": _pkg("1.0.0"),
        ".github/workflows/ci.yml": "on: push\njobs: {}\n",
    }
    _commit(root, files)
    return files


def test_a_sparse_checkout_is_never_recorded(checkout: Path) -> None:
    """``git sparse-checkout set packages app``: what it leaves out is flagged, not recorded.

    Once disabled, the checkout is clean with no flags: the run is fresh and has every
    manifest, the restored ones too (a record stored while they were missing had none).
    """
    _trial_checkout(checkout)
    full = _scan([checkout], None)
    assert "dev-docs/package.json" in full.repos[0].files
    _git(checkout, "sparse-checkout", "set", "packages", "app")
    assert not (checkout / "dev-docs").exists()
    assert _git(checkout, "status", "--porcelain") == ""
    store = Store()
    sparse = _scan([checkout], store)
    assert "dev-docs/package.json" not in sparse.repos[0].files
    assert store.puts == 0
    _git(checkout, "sparse-checkout", "disable")
    assert (checkout / "dev-docs/package.json").exists()
    result = _scan([checkout], store)
    assert result.repos[0].extraction == "fresh"
    assert result.repos[0].files == full.repos[0].files
    assert _rows(result) == _rows(full)
    assert store.puts == 1
    assert _scan([checkout], store).repos[0].extraction == "cached"


@pytest.mark.parametrize("flag", ["skip-worktree", "assume-unchanged"])
def test_a_flagged_deleted_manifest_is_never_recorded(checkout: Path, flag: str) -> None:
    """``update-index --FLAG dev-docs/package.json; rm …``: git status shows nothing.

    A record stored then would lack the manifest after ``--no-FLAG`` and ``git checkout``.
    """
    _trial_checkout(checkout)
    _git(checkout, "update-index", f"--{flag}", "dev-docs/package.json")
    (checkout / "dev-docs/package.json").unlink()
    assert _git(checkout, "status", "--porcelain") == ""
    store = Store()
    assert "dev-docs/package.json" not in _scan([checkout], store).repos[0].files
    assert store.puts == 0
    _git(checkout, "update-index", f"--no-{flag}", "dev-docs/package.json")
    _git(checkout, "checkout", "--", "dev-docs/package.json")
    result = _scan([checkout], store)
    assert result.repos[0].extraction == "fresh"
    assert "dev-docs/package.json" in result.repos[0].files
    assert ("dev-docs/package.json", "a", "outdated", "1.0.0") in _rows(result)


def test_a_record_stored_before_a_flagged_deletion_is_not_used(checkout: Path) -> None:
    """A record taken while clean is refused once a flagged manifest is deleted."""
    _trial_checkout(checkout)
    store = Store()
    _scan([checkout], store)
    assert store.puts == 1
    _git(checkout, "update-index", "--skip-worktree", "dev-docs/package.json")
    (checkout / "dev-docs/package.json").unlink()
    result = _scan([checkout], store)
    assert result.repos[0].extraction == "fresh"
    assert "dev-docs/package.json" not in result.repos[0].files


# A big index: more ``git ls-files -v -z`` output than any byte bound of the clean check
# (``GIT_STATUS_MAX_BYTES``, 4 MiB): 22,000 empty files under 200-byte directory names.
_LONG = ("d" * 49 + "/") * 4
_BIG_DIRS = [f"{i:02}{_LONG}" for i in range(20)]
_BIG_FILES = 1100


@pytest.fixture(scope="module")
def big_index(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A committed checkout whose ``ls-files -v -z`` output is over 4 MiB, nothing flagged."""
    root = tmp_path_factory.mktemp("big") / "repo"
    root.mkdir()
    _git(root, "init", "-q")
    for directory in _BIG_DIRS:
        where = root / directory
        where.mkdir(parents=True)
        for i in range(_BIG_FILES):
            (where / f"f{i:04}").touch()
    (root / "package.json").write_text(_pkg("1.0.0"))
    (root / "zz").mkdir()
    (root / "zz/package.json").write_text(_pkg("1.0.0"))  # the index's last entry
    _git(root, "add", "-A")
    _git(root, "commit", "-q", "-m", "big")
    return root


def _ls_files_bytes(root: Path) -> int:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    listed = subprocess.run(
        ["git", "ls-files", "-v", "-z"],  # noqa: S607 - git from PATH
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    ).stdout
    assert listed.endswith(b"H zz/package.json\0")
    return len(listed)


def test_a_big_index_with_no_flag_keeps_records(big_index: Path) -> None:
    """An index listed in more than ``GIT_STATUS_MAX_BYTES`` is searched whole: still clean."""
    assert _ls_files_bytes(big_index) > records_module.GIT_STATUS_MAX_BYTES
    common = big_index / ".git"
    assert worktree_clean(big_index, common, ["package.json", "zz/package.json"])


def test_a_flagged_entry_at_the_end_of_a_big_index_is_found(big_index: Path) -> None:
    """The last entry of a 4 MiB+ index, flagged and deleted (never read): not clean."""
    common = big_index / ".git"
    manifest = big_index / "zz/package.json"
    _git(big_index, "update-index", "--skip-worktree", "zz/package.json")
    try:
        manifest.unlink()
        assert _git(big_index, "status", "--porcelain") == ""
        assert not worktree_clean(big_index, common, ["package.json"])
    finally:
        _git(big_index, "update-index", "--no-skip-worktree", "zz/package.json")
        _git(big_index, "checkout", "--", "zz/package.json")
    assert worktree_clean(big_index, common, ["package.json", "zz/package.json"])


def _search(
    root: Path, args: list[str], chunk_bytes: int = 65536, max_entry_bytes: int = 65536
) -> bool | None:
    executable = shutil.which("git")
    assert executable is not None
    found = git_module.GitSearch(
        executable,
        root,
        args,
        lambda e: not e.startswith(b"H "),
        chunk_bytes=chunk_bytes,
        max_entry_bytes=max_entry_bytes,
    )
    return found.result()


def test_git_search_finds_an_entry_across_chunk_boundaries(checkout: Path) -> None:
    """Entries cut by a read of a few bytes are put together before ``match`` sees them."""
    _commit(checkout, {f"d/{i:03}.txt": "x\n" for i in range(50)})
    _git(checkout, "update-index", "--assume-unchanged", "d/049.txt")
    assert _search(checkout, ["ls-files", "-v", "-z"], chunk_bytes=3) is True
    assert _search(checkout, ["ls-files", "-v", "-z", "--", "d/00*"], chunk_bytes=3) is False
    # An entry longer than the bound is refused, as too much output is.
    assert _search(checkout, ["ls-files", "-v", "-z"], chunk_bytes=3, max_entry_bytes=5) is None


def test_git_search_failures_are_none(checkout: Path, tmp_path: Path) -> None:
    """A failing git, an answer without its final NUL, a git that hangs: ``None``, bounded."""
    assert _search(checkout, ["ls-files", "-v", "-z", "--no-such-option"]) is None
    assert _search(checkout, ["ls-files", "-v"]) is None  # newline-terminated: one cut entry
    hanging = tmp_path / "git-hang"
    # Not ``exec``: the killed shell's ``sleep`` still holds the pipe open.
    hanging.write_text("#!/bin/sh\nprintf 'H a\\0'\nsleep 5\n")
    hanging.chmod(0o755)
    search = git_module.GitSearch(
        str(hanging), checkout, [], lambda e: not e.startswith(b"H "), timeout=0.2
    )
    assert search.result() is None


def test_a_record_stored_over_flags_by_an_older_format_is_not_used(
    checkout: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Format 2 recorded sparse checkouts: such a record lacks manifests, so it misses now."""
    _trial_checkout(checkout)
    _git(checkout, "sparse-checkout", "set", "packages", "app")
    store = Store()
    with monkeypatch.context() as old:
        old.setattr(records_module, "RECORD_FORMAT", 2)
        old.setattr(scan_module, "RECORD_FORMAT", 2)
        old.setattr(records_module, "_flag", lambda _entry: False)  # format 2 missed these
        _scan([checkout], store)
    assert store.puts == 1
    _git(checkout, "sparse-checkout", "disable")
    result = _scan([checkout], store)
    assert result.repos[0].extraction == "fresh"
    assert "dev-docs/package.json" in result.repos[0].files


def _plain(value: object) -> object:
    """``value`` as msgpack gives it back untyped: a Struct as a map of every field, by name."""
    if isinstance(value, msgspec.Struct):
        return {name: _plain(getattr(value, name)) for name in value.__struct_fields__}
    if isinstance(value, tuple | list):
        return [_plain(item) for item in value]
    return value


def _as_dataclass(value: object) -> object:
    """``value`` rebuilt from dataclasses of the same fields (what the record values were)."""
    if isinstance(value, msgspec.Struct):
        names = value.__struct_fields__
        kind = dataclasses.make_dataclass(type(value).__name__, names, frozen=True, slots=True)
        return kind(*(_as_dataclass(getattr(value, name)) for name in names))
    if isinstance(value, list):
        return [_as_dataclass(item) for item in value]
    if isinstance(value, tuple):
        return tuple(_as_dataclass(item) for item in value)
    return value


def test_a_record_is_stored_as_maps_of_every_field_by_name() -> None:
    """The stored bytes keep the record format: each value a map of all its fields, in order.

    As msgspec encoded the dataclasses these values were (no field omitted for its default, no
    array form), so records stored by earlier versions of the same format read back as before.
    """
    dep = Dependency(
        "npm", "a/package.json", 3, "x", "@s/x", "npm", "npm", "dependencies", "npm:@s/x@^1",
        "^1", skip_reason=None, markers="m", digest="sha256:0", note="n", backend="b",
        extras=("e",),
    )  # fmt: skip
    record = Record(
        RECORD_FORMAT,
        ["a/package.json"],
        ["a/package.json", "a/.npmrc"],
        [ManifestProblem("a/package.json", None, "odd", "warning")],
        [Extracted(dep, "1.2.3", "a/package-lock.json", "note"), Extracted(dep)],
        "0" * 40,
    )
    data = encode(record)
    assert data is not None
    stored = msgspec.msgpack.decode(data)
    # Equal as JSON text too: the same keys in the same order, at every level.
    assert json.dumps(stored) == json.dumps(_plain(record))
    assert list(stored) == [
        "format",
        "files",
        "read",
        "problems",
        "extracted",
        "npmrc",
        "ignored",
        "ignored_complete",
    ]
    assert list(stored["extracted"][0]) == ["dep", "locked", "lock_file", "note", "forks"]
    assert stored["extracted"][1]["locked"] is None  # defaults are stored, not omitted
    # Byte for byte what the same values as dataclasses encoded to.
    assert msgspec.msgpack.encode(_as_dataclass(record)) == data
    assert decode(data) == record
