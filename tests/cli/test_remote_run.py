"""Remote repositories end to end: ``patchula run github:OWNER/REPO`` against the fake GitHub.

The same files as a checkout and as a repository of the fake GitHub API must report alike;
a warm run of an unchanged repository costs its ref → commit request alone.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

runner = CliRunner()
OLD = datetime(2025, 1, 1, tzinfo=UTC)

FILES = {
    "package.json": b'{"dependencies": {"pkg-x": "^1.0.0", "pkg-y": "1.0.0"}}\n',
    "package-lock.json": json.dumps(
        {
            "lockfileVersion": 3,
            "packages": {
                "": {"dependencies": {"pkg-x": "^1.0.0", "pkg-y": "1.0.0"}},
                "node_modules/pkg-x": {"version": "1.0.0"},
                "node_modules/pkg-y": {"version": "1.0.0"},
            },
        }
    ).encode(),
    # Read as a checkout's: its warning is the repository's (the variable is never set).
    ".npmrc": b"save-exact=true\n//npm.example/:_authToken=${PATCHULA_TEST_NEVER_SET}\n",
    "services/api/requirements.txt": b"-r base.txt\nreq-a==1.0.0\n",
    "services/api/base.txt": b"req-b==1.0.0\n",
    "web/package.json": b'{\n  "dependencies": {\n    "pkg-x": 1.0.0\n',  # a problem, line 3
    "README.md": b"# widget\n",
    "node_modules/pkg-x/package.json": b'{"name": "pkg-x", "dependencies": {"nope": "1"}}\n',
    "tests/package.json": b'{"dependencies": {"pkg-z": "1.0.0"}}\n',  # the default ignore paths
    "env/pyvenv.cfg": b"home = /usr/bin\n",
    "env/lib/requirements.txt": b"req-c==1.0.0\n",  # inside a virtual environment: skipped
}


@pytest.fixture
def github(fake_registry: FakeRegistry) -> FakeRegistry:
    """The fake registry with npm and PyPI packages and ``acme/widget`` holding ``FILES``."""
    for name in ("pkg-x", "pkg-y", "pkg-z"):
        fake_registry.npm.add(name, {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=30)})
    for name in ("req-a", "req-b", "req-c"):
        fake_registry.pypi.add(name, {"1.0.0": OLD, "2.0.0": OLD + timedelta(days=30)})
    fake_registry.github.add_tree_repo("acme", "widget", FILES)
    return fake_registry


def _registries(registry: FakeRegistry, github: str | None = None) -> list[str]:
    return [
        *("--registry", f"npm={registry.url('npm')}"),
        *("--registry", f"pypi={registry.url('pypi')}"),
        *("--registry", f"github={github or registry.url('github')}"),
    ]


def _run(
    registry: FakeRegistry, tmp_path: Path, *args: str, **env: str
) -> tuple[int, dict[str, Any], str]:
    registry.reset_stats()
    command = ["run", "--format", "json", "--cache", str(tmp_path / "c.db"), *args]
    command += _registries(registry)
    env = {"GITHUB_TOKEN": "", "GH_TOKEN": "", **env}
    result = runner.invoke(app, command, catch_exceptions=False, env=env)
    return result.exit_code, json.loads(result.stdout), result.stderr


def _github_routes(registry: FakeRegistry) -> dict[str, int]:
    host = registry.host("github")
    with host.lock:
        return dict(host.requests_by_route)


def _rows(repo: dict[str, Any]) -> list[dict[str, Any]]:
    """A repository's rows without their catalog metadata (fetch times differ run to run)."""
    return [{k: v for k, v in row.items() if k != "metadata"} for row in repo["dependencies"]]


def _checkout(tmp_path: Path) -> Path:
    root = tmp_path / "widget"
    for rel, data in FILES.items():
        path = root / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_bytes(data)
    return root


def test_a_remote_scan_equals_the_local_scan_of_the_same_files(
    github: FakeRegistry, tmp_path: Path
) -> None:
    """Rows, problems and files of ``github:acme/widget`` are those of its files checked out."""
    local = _checkout(tmp_path)
    code, report, _ = _run(github, tmp_path, str(local), "github:acme/widget")
    assert code == 3
    mine, theirs = report["repositories"]
    assert theirs["target"] == "github:acme/widget"
    assert theirs["commit"] == github.github.commit_of_branch("acme", "widget")
    assert theirs["extraction"]["source"] == "fresh"
    assert theirs["dependencies"] == mine["dependencies"]
    assert theirs["problems"] == mine["problems"]
    assert theirs["extraction"]["files"] == mine["extraction"]["files"]
    names = {(d["file"], d["name"]) for d in theirs["dependencies"]}
    assert names == {
        ("package.json", "pkg-x"),
        ("package.json", "pkg-y"),
        ("services/api/base.txt", "req-b"),
        ("services/api/requirements.txt", "req-a"),
    }
    assert [(p["file"], p["line"], p["severity"]) for p in theirs["problems"]] == [
        (".npmrc", None, "warning"),
        ("web/package.json", 3, "error"),
    ]
    assert "PATCHULA_TEST_NEVER_SET is not set" in theirs["problems"][0]["message"]
    locked = {d["name"]: d["current"] for d in theirs["dependencies"]}
    assert locked["pkg-x"] == "1.0.0"  # from package-lock.json
    routes = _github_routes(github)
    blobs = {route.rsplit("/", 1)[1] for route in routes if "/git/blobs/" in route}
    # Only the selected files, the include and .npmrc: never README, node_modules, tests, env.
    read = ["package.json", "package-lock.json", ".npmrc", "web/package.json"]
    read += ["services/api/requirements.txt", "services/api/base.txt"]
    assert blobs == {github.github.blob_sha(FILES[path]) for path in read}
    assert all(n == 1 for n in routes.values())
    assert routes["GET /repos/acme/widget/commits/HEAD"] == 1
    assert sum(n for route, n in routes.items() if "/git/trees/" in route) == 1


def test_a_warm_run_sends_one_request_per_repository(github: FakeRegistry, tmp_path: Path) -> None:
    """Unchanged: the ref → commit request alone, no tree or blob; same rows, ``cached``."""
    _, first, _ = _run(github, tmp_path, "github:acme/widget")
    _, second, _ = _run(github, tmp_path, "github:acme/widget")
    assert _github_routes(github) == {"GET /repos/acme/widget/commits/HEAD": 1}
    repo = second["repositories"][0]
    assert repo["extraction"]["source"] == "cached"
    assert repo["commit"] == first["repositories"][0]["commit"]
    assert _rows(repo) == _rows(first["repositories"][0])
    assert repo["problems"] == first["repositories"][0]["problems"]
    assert repo["extraction"]["files"] == first["repositories"][0]["extraction"]["files"]


def test_a_new_commit_fetches_only_the_changed_blobs(github: FakeRegistry, tmp_path: Path) -> None:
    """A new commit is extracted again; only the changed file's blob is fetched."""
    _run(github, tmp_path, "github:acme/widget")
    changed = b'{"dependencies": {"pkg-x": "^1.0.0", "pkg-y": "1.1.0"}}\n'
    commit = github.github.commit_files("acme", "widget", {"package.json": changed})
    _, report, _ = _run(github, tmp_path, "github:acme/widget")
    repo = report["repositories"][0]
    assert (repo["commit"], repo["extraction"]["source"]) == (commit, "fresh")
    assert {d["name"]: d["status"] for d in repo["dependencies"]}["pkg-y"] == "up-to-date"
    routes = _github_routes(github)
    sha = github.github.blob_sha(changed)
    assert [route for route in routes if "/git/blobs/" in route] == [
        f"GET /repos/acme/widget/git/blobs/{sha}"
    ]


def test_a_truncated_tree_is_walked(github: FakeRegistry, tmp_path: Path) -> None:
    """GitHub truncating the recursive tree: its sub-trees are walked, the same rows come out."""
    _, whole, _ = _run(github, tmp_path / "a", "github:acme/widget")
    github.github.truncate_trees = True
    _, walked, _ = _run(github, tmp_path / "b", "github:acme/widget")
    assert _rows(walked["repositories"][0]) == _rows(whole["repositories"][0])
    assert walked["repositories"][0]["problems"] == whole["repositories"][0]["problems"]
    routes = _github_routes(github)
    trees = sum(n for route, n in routes.items() if "/git/trees/" in route)
    # The truncated recursive listing, then root, services, services/api, web, env, env/lib:
    # node_modules and tests (skipped by name and ignore glob) are never listed.
    assert trees == 7


@pytest.mark.parametrize(("failure", "reason"), [("missing", "not found"), ("empty", "empty")])
def test_an_unreadable_repository_is_a_row_and_the_others_complete(
    github: FakeRegistry, tmp_path: Path, failure: str, reason: str
) -> None:
    """404 or an empty repository: a row with the reason; exit 3, as for a missing path."""
    github.github.fail_repo("acme", "gone", failure)
    code, report, _ = _run(github, tmp_path, "github:acme/gone", "github:acme/widget")
    assert code == 3
    gone, widget = report["repositories"]
    assert gone["dependencies"] == []
    # Nothing was extracted: no extraction source is claimed.
    assert gone["extraction"] == {
        "source": "none",
        "files": [],
        "constraintsFiles": [],
        "ignored": [],
        "ignoredComplete": True,
    }
    assert widget["extraction"]["source"] == "fresh"
    assert len(gone["problems"]) == 1
    assert gone["problems"][0]["severity"] == "error"
    assert reason in gone["problems"][0]["message"].lower()
    assert len(widget["dependencies"]) == 4


def test_a_rate_limited_repository_is_a_row(github: FakeRegistry, tmp_path: Path) -> None:
    """GitHub's rate limit exhausted: the repository's row says so (never a crash)."""
    github.github.fail_repo("acme", "gone", "rate_limited")
    code, report, _ = _run(github, tmp_path, "github:acme/gone")
    assert code == 3
    (problem,) = report["repositories"][0]["problems"]
    assert (problem["file"], problem["severity"]) == ("github:acme/gone", "error")
    assert "rate limit" in problem["message"].lower()


def test_a_malformed_target_is_a_row(github: FakeRegistry, tmp_path: Path) -> None:
    """``github:acme`` is a row naming what a GitHub target looks like; nothing is requested."""
    code, report, _ = _run(github, tmp_path, "github:acme")
    assert code == 3
    (problem,) = report["repositories"][0]["problems"]
    assert "expected github:OWNER/REPO" in problem["message"]
    assert _github_routes(github) == {}


def test_an_organisation_listing_of_two_pages_expands(github: FakeRegistry, tmp_path: Path) -> None:
    """``github:acme/*`` lists two pages; forks and archived ones are skipped unless asked."""
    github.github.max_per_page = 2
    github.github.add_tree_repo("acme", "api", {"requirements.txt": b"req-a==1.0.0\n"})
    github.github.add_tree_repo("acme", "forked", {"requirements.txt": b"req-b==1.0.0\n"})
    github.github.add_tree_repo("acme", "old", {"requirements.txt": b"req-c==1.0.0\n"})
    github.github.add_owner(
        "acme",
        [
            ("widget", {}),
            ("forked", {"fork": True}),
            ("api", {}),
            ("old", {"archived": True}),
        ],
    )
    _, report, _ = _run(github, tmp_path, "github:acme/*", "github:acme/api")
    targets = [repo["target"] for repo in report["repositories"]]
    assert targets == ["github:acme/api", "github:acme/widget"]  # the repeat once
    routes = _github_routes(github)
    assert sum(n for route, n in routes.items() if route.startswith("GET /orgs/acme/repos")) == 2
    _, everything, _ = _run(
        github, tmp_path, "github:acme/*", "--include-forks", "--include-archived"
    )
    assert [repo["target"] for repo in everything["repositories"]] == [
        "github:acme/api",
        "github:acme/forked",
        "github:acme/old",
        "github:acme/widget",
    ]


def test_an_owner_that_cannot_be_listed_is_one_row(github: FakeRegistry, tmp_path: Path) -> None:
    """No such organisation or user: the owner target stays one row with the reason."""
    code, report, _ = _run(github, tmp_path, "github:nobody/*", "github:acme/widget")
    assert code == 3
    nobody, widget = report["repositories"]
    assert nobody["target"] == "github:nobody/*"
    assert "no GitHub organisation or user" in nobody["problems"][0]["message"]
    assert widget["dependencies"]


def test_ghes_base(github: FakeRegistry, tmp_path: Path) -> None:
    """GitHub Enterprise Server: the same scan under ``/api/v3``, the web URL on its host."""
    base = f"{github.url('github')}/api/v3"
    github.reset_stats()
    result = runner.invoke(
        app,
        [
            "run",
            "--format",
            "json",
            "--no-cache",
            "github:acme/widget",
            *_registries(github, github=base),
        ],
        catch_exceptions=False,
        env={"GITHUB_TOKEN": ""},
    )
    report = json.loads(result.stdout)
    repo = report["repositories"][0]
    assert len(repo["dependencies"]) == 4
    assert repo["path"] == f"{github.url('github')}/acme/widget"
    routes = _github_routes(github)
    assert routes
    assert all(route.startswith("GET /api/v3/") for route in routes)


def test_offline_after_a_run_answers_from_the_cache(github: FakeRegistry, tmp_path: Path) -> None:
    """``--offline`` after a run: the commit from the cache, the record, no request at all."""
    _, first, _ = _run(github, tmp_path, "github:acme/widget")
    code, offline, _ = _run(github, tmp_path, "github:acme/widget", "--offline")
    assert code == 3
    assert sum(host.requests for host in github.hosts.values()) == 0
    repo = offline["repositories"][0]
    assert repo["extraction"]["source"] == "cached"
    assert repo["commit"] == first["repositories"][0]["commit"]
    statuses = [(d["name"], d["status"]) for d in repo["dependencies"]]
    assert statuses == [(d["name"], d["status"]) for d in first["repositories"][0]["dependencies"]]


def test_hostile_paths_and_sizes_cost_only_their_file(github: FakeRegistry, tmp_path: Path) -> None:
    """An include leaving the tree, a symlinked manifest and an oversized file are problems."""
    big = b"req-a==1.0.0\n" + b"#" * 2048 + b"\n"
    same = b'{"dependencies": {"pkg-x": "1.0.0"}}\n'
    github.github.add_tree_repo(
        "acme",
        "hostile",
        {
            "requirements.txt": b"-r ../../outside.txt\nreq-a==1.0.0\n",
            "package.json": b"../elsewhere/package.json",
            "big/requirements.txt": big,
            "one/package.json": same,
            "two/package.json": same,
        },
        modes={"package.json": "120000"},
    )
    code, report, _ = _run(github, tmp_path, "github:acme/hostile", PATCHULA_MAX_FILE_BYTES="1024")
    assert code == 3
    repo = report["repositories"][0]
    problems = {(p["file"], p["message"]) for p in repo["problems"]}
    assert ("requirements.txt", "include '../../outside.txt' points outside the repository") in (
        problems
    )
    assert ("package.json", "symlink pointing outside the checkout") in problems
    assert any(f == "big/requirements.txt" and "over the" in m for f, m in problems)
    assert sorted((d["file"], d["name"]) for d in repo["dependencies"]) == [
        ("one/package.json", "pkg-x"),
        ("requirements.txt", "req-a"),
        ("two/package.json", "pkg-x"),
    ]
    routes = _github_routes(github)
    blobs = [route for route in routes if "/git/blobs/" in route]
    # The two identical files are one blob, read once; the oversized one is never requested;
    # the symlink's blob is its target, read to resolve it.
    assert sorted(blobs) == sorted(
        f"GET /repos/acme/hostile/git/blobs/{github.github.blob_sha(data)}"
        for data in (b"-r ../../outside.txt\nreq-a==1.0.0\n", same, b"../elsewhere/package.json")
    )


def test_every_shard_expands_the_owner_alike(github: FakeRegistry, tmp_path: Path) -> None:
    """Shards of ``github:acme/*`` are disjoint and cover it; an unlisted owner is in each.

    A repository named again in another case is the same target, in one share only. An owner
    that could not be listed is kept by every shard where that failed (whatever the cut), and
    each says on stderr that its share was cut from an incomplete list.
    """
    for name in ("api", "cli", "docs"):
        github.github.add_tree_repo("acme", name, {"requirements.txt": b"req-a==1.0.0\n"})
    github.github.add_owner("acme", [(n, {}) for n in ("api", "cli", "docs", "widget")])
    shards: list[list[str]] = []
    for index in (1, 2):
        _, report, stderr = _run(
            github,
            tmp_path / str(index),
            "github:acme/*",
            "github:nobody/*",
            "github:ACME/Widget",  # listed already: once, in one share
            "--shard",
            f"{index}/2",
        )
        shards.append([repo["target"] for repo in report["repositories"]])
        assert report["targets"]["unlisted"] == ["github:nobody/*"]
        assert (
            f"patchula: warning: shard {index}/2: the repositories of github:nobody/* could not "
            "be listed"
        ) in stderr
        assert "re-run this shard" in stderr
    everything = [*shards[0], *shards[1]]
    assert sorted(everything) == [
        "github:acme/api",
        "github:acme/cli",
        "github:acme/docs",
        "github:acme/widget",
        "github:nobody/*",
        "github:nobody/*",
    ]
    assert set(shards[0]) & set(shards[1]) == {"github:nobody/*"}


def test_the_remote_reader_fails_as_the_checkout_reader() -> None:
    """Symlinks are followed; paths leaving the tree, loops, directories, bad text: problems."""
    from patchula.errors import ManifestError  # noqa: PLC0415 - this test only
    from patchula.repos.github import RepoTarget, TreeEntry  # noqa: PLC0415 - this test only
    from patchula.scan import _Blobs, _Remote  # noqa: PLC0415 - the scan's private reader

    links = {
        "link.txt": "a/b.txt",
        "lib": "a",  # a symlinked directory, read through
        "up.txt": "../x.txt",
        "abs.txt": "/etc/passwd",
        "loop.txt": "loop.txt",
        "dir.txt": "a",
    }
    entries = {
        "a/b.txt": TreeEntry("a/b.txt", "0" * 40, 3, "100644"),
        "bad.txt": TreeEntry("bad.txt", "2" * 40, 3, "100644"),
        "unread.txt": TreeEntry("unread.txt", "3" * 40, 3, "120000"),
        **{path: TreeEntry(path, "1" * 40, 3, "120000") for path in links},
    }
    source = _Remote(RepoTarget("o", "r"), "http://x", None, None, None)  # type: ignore[arg-type]
    blobs = _Blobs(source, entries, 1024)
    blobs._data["a/b.txt"] = b"\xef\xbb\xbfok\n"
    blobs._data["bad.txt"] = b"\xff\n"
    blobs._links.update(links)
    read = blobs.reader()
    assert read("a/./b.txt") == read("link.txt") == read("lib/b.txt") == "ok\n"
    assert blobs.unread(["link.txt", "unread.txt", "a/b.txt"]) == ["unread.txt"]
    for rel, message in [
        ("../x.txt", "path leaves the checkout"),
        ("a/../../x.txt", "path leaves the checkout"),
        ("up.txt", "path leaves the checkout"),
        ("abs.txt", "path leaves the checkout"),
        ("loop.txt", "symlink loop"),
        ("a", "not a regular file (directory)"),
        ("dir.txt", "not a regular file (directory)"),
        ("unread.txt", "file not found"),  # its target not read yet: the next round reads it
        ("nope.txt", "file not found"),
        ("bad.txt", "not UTF-8 text (invalid byte 0xff at offset 0)"),
    ]:
        with pytest.raises(ManifestError) as caught:
            read(rel)
        assert (caught.value.file, caught.value.message) == (rel, message)


def test_a_blob_github_did_not_give_is_not_recorded(github: FakeRegistry, tmp_path: Path) -> None:
    """A blob answered with an error is its file's problem, and the extraction is not kept."""
    sha = github.github.blob_sha(FILES["package.json"])
    route = f"GET /repos/acme/widget/git/blobs/{sha}"
    github.host("github").fail_next(1, 404, {}, route=route)
    _, first, _ = _run(github, tmp_path, "github:acme/widget")
    repo = first["repositories"][0]
    assert any(
        p["file"] == "package.json" and p["message"].startswith("cannot read the file from GitHub")
        for p in repo["problems"]
    )
    _, second, _ = _run(github, tmp_path, "github:acme/widget")
    repo = second["repositories"][0]
    assert repo["extraction"]["source"] == "fresh"
    assert {d["name"] for d in repo["dependencies"]} >= {"pkg-x", "pkg-y"}
    assert (
        _run(github, tmp_path, "github:acme/widget")[1]["repositories"][0]["extraction"]["source"]
        == "cached"
    )


# --- blobs: one request per content, whatever the repository ---------------------------------

# Files read by a scan of FILES: the selected manifests, the include and the root .npmrc.
READ = [
    "package.json",
    "package-lock.json",
    ".npmrc",
    "web/package.json",
    "services/api/requirements.txt",
    "services/api/base.txt",
]


def _blob_requests(registry: FakeRegistry) -> dict[str, int]:
    """Blob requests per blob SHA, whatever the repository they were sent under."""
    counts: dict[str, int] = {}
    for route, n in _github_routes(registry).items():
        if "/git/blobs/" in route:
            sha = route.rsplit("/", 1)[1]
            counts[sha] = counts.get(sha, 0) + n
    return counts


@pytest.mark.parametrize("cache", [True, False])
def test_repositories_sharing_files_fetch_each_blob_once(
    github: FakeRegistry, tmp_path: Path, *, cache: bool
) -> None:
    """Six repositories with the same files: one blob request per distinct SHA in one run."""
    for index in range(5):
        github.github.add_tree_repo("acme", f"copy{index}", FILES)
    targets = ["github:acme/widget", *(f"github:acme/copy{index}" for index in range(5))]
    _, report, _ = _run(github, tmp_path, *targets, *([] if cache else ["--no-cache"]))
    assert _blob_requests(github) == {github.github.blob_sha(FILES[path]): 1 for path in READ}
    first, *others = report["repositories"]
    assert all(_rows(repo) == _rows(first) for repo in others)
    assert all(repo["problems"] == first["problems"] for repo in others)


def test_a_later_run_reads_known_blobs_from_the_cache_for_new_repositories(
    github: FakeRegistry, tmp_path: Path
) -> None:
    """New repositories holding files an earlier run read: their trees only, no blob request."""
    _, first, _ = _run(github, tmp_path, "github:acme/widget")
    github.github.add_tree_repo("other", "copy", FILES)
    github.github.add_tree_repo("acme", "copy", {**FILES, "README.md": b"# copy\n"})
    _, second, _ = _run(github, tmp_path, "github:other/copy", "github:acme/copy")
    assert _blob_requests(github) == {}
    routes = _github_routes(github)
    assert sum(n for route, n in routes.items() if "/git/trees/" in route) == 2
    for repo in second["repositories"]:
        assert repo["extraction"]["source"] == "fresh"
        assert _rows(repo) == _rows(first["repositories"][0])


def test_a_known_blob_is_served_only_to_a_tree_naming_it(
    github: FakeRegistry, tmp_path: Path
) -> None:
    """A repository whose file differs gets its own blob, never the one another tree names."""
    _run(github, tmp_path, "github:acme/widget")
    changed = b'{"dependencies": {"pkg-y": "1.1.0"}}\n'
    github.github.add_tree_repo("acme", "fork", {**FILES, "package.json": changed})
    _, report, _ = _run(github, tmp_path, "github:acme/fork")
    assert _blob_requests(github) == {github.github.blob_sha(changed): 1}
    rows = {(d["file"], d["name"]) for d in report["repositories"][0]["dependencies"]}
    assert ("package.json", "pkg-x") not in rows
    assert ("package.json", "pkg-y") in rows


# --- a used-up primary rate limit -----------------------------------------------------------


def test_a_used_up_token_limit_fails_the_rest_unsent_and_the_next_run_sends_again(
    github: FakeRegistry, tmp_path: Path
) -> None:
    """403 with ``x-ratelimit-remaining: 0``: the others are not sent, saying until when; the
    next run after the reset sends again (nothing of the limit is kept in the cache).
    """  # noqa: D205 - the behaviour reads as one sentence
    import anyio  # noqa: PLC0415 - this test only

    from patchula.cache import Cache  # noqa: PLC0415 - this test only
    from patchula.clock import FixedClock  # noqa: PLC0415 - this test only
    from patchula.http.fetcher import Fetcher, Timer, make_client  # noqa: PLC0415 - this test only
    from patchula.report.model import build_report  # noqa: PLC0415 - this test only
    from patchula.report.render import summary_line  # noqa: PLC0415 - this test only
    from patchula.scan import ScanResult, scan  # noqa: PLC0415 - this test only
    from patchula.settings import Settings  # noqa: PLC0415 - this test only

    for name in ("api", "web"):
        github.github.add_tree_repo("acme", name, {"requirements.txt": b"req-a==1.0.0\n"})
    noon = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
    reset = noon + timedelta(hours=1)
    limited = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": str(int(reset.timestamp()))}
    github.host("github").fail_next(1, 403, limited, b'{"message": "API rate limit exceeded"}')
    registries = {name: github.url(name) for name in ("npm", "pypi", "github")}
    settings = Settings.model_validate({"registries": registries, "concurrency": 1})
    targets = ["github:acme/widget", "github:acme/api", "github:acme/web"]
    host = github.url("github").split("//", 1)[1]

    def run(at: datetime) -> tuple[ScanResult, str]:
        async def main() -> tuple[ScanResult, str]:
            async with make_client() as client, Cache.open(tmp_path / "c.db") as cache:
                fetch = Fetcher(client, cache=cache, timer=Timer(wall=lambda: at))
                result = await scan(targets, settings, fetch, FixedClock(at), records=cache)
                return result, summary_line(build_report(result, settings, fetch.stats))

        github.reset_stats()
        return anyio.run(main)

    first, line = run(noon)
    reasons = [repo.problems[0].message for repo in first.repos]
    assert all(
        "rate limit for unauthenticated requests is used up until 13:00Z" in r for r in reasons
    )
    assert all(r.endswith("its requests fail until then without being sent") for r in reasons)
    assert sum(n for route, n in _github_routes(github).items() if "/commits/" in route) == 1
    assert line == (
        "0 dependencies in 3 repositories; 3 of 3 repositories could not be read (3 as "
        f"{host} rate limit for unauthenticated requests is used up until 13:00Z)"
    )
    second, _ = run(reset + timedelta(minutes=5))
    assert all(repo.rows for repo in second.repos)
    assert not [p for repo in second.repos for p in repo.problems if p.file == repo.target]
    commits = {r: n for r, n in _github_routes(github).items() if "/commits/" in r}
    assert commits == {f"GET /repos/acme/{n}/commits/HEAD": 1 for n in ("widget", "api", "web")}


def test_the_summary_says_repositories_could_not_be_read(
    github: FakeRegistry, tmp_path: Path
) -> None:
    """Unreadable repositories only: the table's summary says so, and JSON counts them."""
    github.github.fail_repo("acme", "gone", "missing")
    github.github.fail_repo("acme", "void", "empty")
    targets = ["github:acme/gone", "github:acme/void", "github:nobody/*"]
    command = ["run", "--no-cache", "--format", "table", *targets, *_registries(github)]
    result = runner.invoke(app, command, env={"GITHUB_TOKEN": "", "GH_TOKEN": ""})
    assert result.exit_code == 3
    assert "0 dependencies in 3 repositories; 3 of 3 repositories could not be read" in (
        result.stdout
    )
    for wrong in ("none found", "libyears", "manifest error"):
        assert wrong not in result.stdout
    _, report, _ = _run(github, tmp_path, *targets)
    assert report["summary"]["unreadable"] == 3
    assert [repo["extraction"]["source"] for repo in report["repositories"]] == ["none"] * 3


# djangoproject's layout: ``*.lock`` and ``docs/`` in .gitignore, uv.lock and a docs
# requirements file force-added (tracked), so GitHub's tree holds them.
IGNORED_BUT_TRACKED = {
    ".gitignore": b"*.lock\ndocs/\n",
    "pyproject.toml": b'[project]\nname = "app"\nversion = "0.1.0"\n'
    b'dependencies = ["req-a>=1.0"]\n',
    "uv.lock": b'version = 1\n[[package]]\nname = "req-a"\nversion = "1.0.0"\n'
    b'source = { registry = "https://pypi.org/simple" }\n',
    "docs/requirements.txt": b"req-b==1.0.0\n",
}


@pytest.mark.skipif(shutil.which("git") is None, reason="needs a git executable")
def test_tracked_files_a_gitignore_matches_are_read_locally_as_remotely(
    github: FakeRegistry, tmp_path: Path
) -> None:
    """A force-added uv.lock under ``*.lock``: current from the lockfile, in a checkout too."""
    local = tmp_path / "django"
    for rel, data in IGNORED_BUT_TRACKED.items():
        (local / rel).parent.mkdir(parents=True, exist_ok=True)
        (local / rel).write_bytes(data)
    (local / "docs" / "_build").mkdir()
    (local / "docs" / "_build" / "requirements.txt").write_text("req-c==1.0.0\n")  # untracked
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    for args in (["init", "-q"], ["add", "-f", "--", *IGNORED_BUT_TRACKED]):
        subprocess.run(["git", *args], cwd=local, env=env, check=True)  # noqa: S603, S607 - the test's own git
    github.github.add_tree_repo("acme", "django", IGNORED_BUT_TRACKED)
    _, report, _ = _run(github, tmp_path, str(local), "github:acme/django")
    mine, theirs = report["repositories"]
    assert _rows(mine) == _rows(theirs)
    assert mine["problems"] == theirs["problems"] == []
    assert mine["extraction"]["files"] == theirs["extraction"]["files"]
    rows = {d["name"]: (d["file"], d["current"], d["currentSource"]) for d in _rows(mine)}
    assert rows == {
        "req-a": ("pyproject.toml", "1.0.0", "lockfile"),
        "req-b": ("docs/requirements.txt", "1.0.0", "pin"),
    }


# Symlinks named like manifests, as a checkout has them: ``(target)`` marks a link.
LINKED: dict[str, bytes | tuple[str]] = {
    "sub/requirements.txt": b"req-a==1.0.0\n",
    "requirements.txt": ("sub/requirements.txt",),  # read: the target's content
    "real/package.json": b'{"dependencies": {"pkg-x": "1.0.0"}}\n',
    "alias": ("real",),  # a symlinked directory, on the way of the next link
    "web/package.json": ("../alias/package.json",),  # a chain through it: read
    "out/package.json": ("../../elsewhere/package.json",),  # leaves the tree: refused
    "abs/requirements.txt": ("/etc/hosts",),  # absolute: refused
    "loop/Cargo.toml": ("Cargo.toml",),  # itself: a loop, refused
    "docs/package.json": ("../sub",),  # a directory: refused
    "dangling/requirements.txt": ("missing.txt",),  # names nothing: the reader says so
    # A committed file under a directory the walk never enters, read through a link to it.
    "node_modules/foo/requirements.txt": b"req-a==1.0.0\n",
    "nm-requirements.txt": ("node_modules/foo/requirements.txt",),
}


def test_symlinks_are_followed_remotely_as_in_a_checkout(
    github: FakeRegistry, tmp_path: Path
) -> None:
    """Same rows and problems: links inside the tree are read, the others refused alike."""
    local = tmp_path / "linked"
    files: dict[str, bytes] = {}
    modes: dict[str, str] = {}
    for rel, value in LINKED.items():
        path = local / rel
        path.parent.mkdir(parents=True, exist_ok=True)
        if isinstance(value, tuple):
            path.symlink_to(value[0])
            files[rel], modes[rel] = value[0].encode(), "120000"
        else:
            path.write_bytes(value)
            files[rel] = value
    github.github.add_tree_repo("acme", "linked", files, modes=modes)
    _, report, _ = _run(github, tmp_path, str(local), "github:acme/linked")
    mine, theirs = report["repositories"]
    assert _rows(theirs) == _rows(mine)
    assert theirs["problems"] == mine["problems"]
    assert theirs["extraction"]["files"] == mine["extraction"]["files"]
    assert sorted((d["file"], d["name"]) for d in theirs["dependencies"]) == [
        ("nm-requirements.txt", "req-a"),
        ("real/package.json", "pkg-x"),
        ("requirements.txt", "req-a"),
        ("sub/requirements.txt", "req-a"),
        ("web/package.json", "pkg-x"),
    ]
    assert {(p["file"], p["message"]) for p in theirs["problems"]} == {
        ("out/package.json", "symlink pointing outside the checkout"),
        ("abs/requirements.txt", "symlink pointing outside the checkout"),
        ("loop/Cargo.toml", "symlink loop"),
        ("docs/package.json", "symlinked directory (never entered)"),
        ("dangling/requirements.txt", "file not found"),
    }
    routes = _github_routes(github)
    blobs = {route.rsplit("/", 1)[1] for route in routes if "/git/blobs/" in route}
    # The links a manager reads and the one on their way; never a target outside the tree.
    assert blobs == {github.github.blob_sha(data) for data in files.values()}


# The trial of a fleet in a CI matrix: 12 checkouts and an organisation of 12 repositories.
CHECKOUTS = ["pydantic", "httpx", "rich", "typer", "anyio", "attrs", "click", "flask"]
CHECKOUTS += ["jinja", "pytest", "ruff", "uv"]
CORP = ["poetry", "black", "mypy", "pip", "nox", "tox", "hatch", "pdm", "twine", "build"]
CORP += ["wheel", "flit"]


def test_a_shard_whose_owner_listing_failed_says_so_and_the_merge_exits_3(
    github: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Four shards of ``repos/*`` and ``github:corp/*``; only shard 3's listing fails (502 x4).

    Shard 3 keeps the owner's row (whatever the cut), says on stderr that its share was cut
    from an incomplete list, and its report says which owner; ``report merge`` names shard 3,
    says how many targets may be missing (exactly those the merged report lacks), exits 3.
    """
    monkeypatch.chdir(tmp_path)
    for name in CHECKOUTS:
        (tmp_path / "repos" / name).mkdir(parents=True)
        (tmp_path / "repos" / name / "requirements.txt").write_text("req-a==1.0.0\n")
    for name in CORP:
        github.github.add_tree_repo("corp", name, {"requirements.txt": b"req-b==1.0.0\n"})
    github.github.add_owner("corp", [(name, {}) for name in CORP])
    listing = tmp_path / "repos.txt"
    listing.write_text("".join(f"repos/{n}\n" for n in CHECKOUTS) + "github:corp/*\n")
    every = {f"repos/{n}" for n in CHECKOUTS} | {f"github:corp/{n}" for n in CORP}
    reports, stderrs = [], []
    for index in (1, 2, 3, 4):
        if index == 3:  # the first answer and its three retries
            github.host("github").server_error_next(4, 502, route="GET /orgs/corp/repos")
        _, report, stderr = _run(
            github,
            tmp_path / f"c{index}",
            "--targets-file",
            str(listing),
            "--shard",
            f"{index}/4",
            "--report",
            str(tmp_path / f"shard-{index}.json"),
        )
        reports.append(report)
        stderrs.append(" ".join(stderr.split()))
    third = reports[2]
    assert "github:corp/*" in [r["target"] for r in third["repositories"]]
    assert third["targets"]["unlisted"] == ["github:corp/*"]
    assert third["targets"]["count"] == len(CHECKOUTS) + 1
    assert [r["targets"] for i, r in enumerate(reports) if i != 2] == [
        {**third["targets"], "count": 24, "unlisted": [], "digest": reports[0]["targets"]["digest"]}
    ] * 3
    assert "shard 3/4: the repositories of github:corp/* could not be listed" in stderrs[2]
    assert "HTTP 502" in stderrs[2]
    assert "re-run this shard" in stderrs[2]
    assert all("could not be listed" not in stderrs[i] for i in (0, 1, 3))
    # The cut of the shorter list left out targets the other shards left to shard 3.
    scanned = {r["target"] for report in reports for r in report["repositories"]}
    lost = every - scanned
    assert lost

    files = [str(tmp_path / f"shard-{i}.json") for i in (1, 2, 3, 4)]
    result = runner.invoke(app, ["report", "merge", *files], catch_exceptions=False)
    assert result.exit_code == 3
    merged = json.loads(result.stdout)
    assert merged["targets"]["mismatched"] == [f"{files[2]} (3/4)"]
    assert merged["targets"]["unlisted"] == ["github:corp/*"]
    assert merged["targets"]["count"] == 24
    warnings = result.stderr
    assert "patchula: warning: the merged report is incomplete: the shards did not cut one" in (
        warnings
    )
    assert f"up to {len(lost)} of its 24 targets may be missing; re-run {files[2]} (3/4)" in (
        " ".join(warnings.split())
    )
    assert f"the repositories of github:corp/* could not be listed in {files[2]} (3/4)" in (
        " ".join(warnings.split())
    )
    # The merged rows are in file order (the lists differ: no common place to sort by).
    assert [r["target"] for r in merged["repositories"]] == list(
        dict.fromkeys(r["target"] for report in reports for r in report["repositories"])
    )


def test_targets_that_could_not_be_read_claim_no_extraction(
    github: FakeRegistry, tmp_path: Path
) -> None:
    """Missing, 404 or malformed: extraction source none; table and dashboard say 'not read'.

    Never a count of dependencies found, as for a repository that was read and held none.
    """
    github.github.fail_repo("acme", "gone", "missing")
    targets = [str(tmp_path / "missing"), "github:acme/gone", "github:acme", "github:acme/widget"]
    code, report, _ = _run(github, tmp_path, *targets)
    assert code == 3
    sources = [(r["target"], r["extraction"]["source"]) for r in report["repositories"]]
    assert sources == [*((t, "none") for t in targets[:3]), ("github:acme/widget", "fresh")]
    saved = _saved(tmp_path, report)
    merged = runner.invoke(app, ["report", "merge", str(saved), "--format", "table"])
    lines = merged.stdout.splitlines()
    assert f"{tmp_path / 'missing'} (not read)" in lines
    assert "github:acme/gone (not read)" in lines
    [widget] = [line for line in lines if line.startswith("github:acme/widget")]
    assert widget.startswith("github:acme/widget @ ")
    assert "not read" not in widget
    dashboard = runner.invoke(app, ["report", "merge", str(saved), "--format", "markdown"]).stdout
    section = dashboard[dashboard.index("## `github:acme/gone`") :]
    section = section[: section.index("\n## ")]
    assert "Not read: no dependencies were extracted" in section
    assert "0 dependencies" not in section


def _saved(tmp_path: Path, report: dict[str, Any]) -> Path:
    path = tmp_path / "report.json"
    path.write_text(json.dumps(report))
    return path


def test_a_github_address_given_as_a_path_is_told_its_github_target(tmp_path: Path) -> None:
    """`patchula run https://github.com/acme/api`: not a local path; the row names the target."""
    from patchula.scan import _missing  # noqa: PLC0415 - the one function under test

    for address in (
        "https://github.com/acme/api",
        "https://github.com/acme/api.git",
        "git@github.com:acme/api.git",
        "https://github.com/acme/api/",
    ):
        assert _missing(address).endswith("for the GitHub repository write github:acme/api")
    assert _missing(str(tmp_path / "nothing")) == "target does not exist"


def test_a_clone_url_name_is_the_repository_without_dot_git() -> None:
    """`github:acme/api.git` is `github:acme/api` (GitHub allows no name ending in .git)."""
    from patchula.repos.github import RepoTarget, parse_target  # noqa: PLC0415

    assert parse_target("github:acme/api.git") == RepoTarget("acme", "api", None)
    assert parse_target("github:acme/api.git@v1") == RepoTarget("acme", "api", "v1")
    assert parse_target("github:acme/.git") == RepoTarget("acme", ".git", None)


def test_a_clone_url_spelling_is_the_same_repository(github: FakeRegistry, tmp_path: Path) -> None:
    """`github:Acme/Widget.git` beside `github:acme/widget`: one repository, scanned once."""
    github.github.add_tree_repo("acme", "widget", {"requirements.txt": b"req-a==1.0.0\n"})
    _, report, _ = _run(github, tmp_path, "github:acme/widget", "github:Acme/Widget.git")
    assert [r["target"] for r in report["repositories"]] == ["github:acme/widget"]
