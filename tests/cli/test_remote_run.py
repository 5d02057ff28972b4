"""Remote repositories end to end: ``patchula run github:OWNER/REPO`` against the fake GitHub.

The same files as a checkout and as a repository of the fake GitHub API must report alike;
a warm run of an unchanged repository costs its ref → commit request alone.
"""

from __future__ import annotations

import json
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
    assert gone["extraction"] == {"source": None, "files": []}
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
    assert ("package.json", "symlink (not followed in a remote repository)") in problems
    assert any(f == "big/requirements.txt" and "over the" in m for f, m in problems)
    assert sorted((d["file"], d["name"]) for d in repo["dependencies"]) == [
        ("one/package.json", "pkg-x"),
        ("requirements.txt", "req-a"),
        ("two/package.json", "pkg-x"),
    ]
    routes = _github_routes(github)
    blobs = [route for route in routes if "/git/blobs/" in route]
    # The two identical files are one blob, read once; the oversized one is never requested.
    assert sorted(blobs) == sorted(
        f"GET /repos/acme/hostile/git/blobs/{github.github.blob_sha(data)}"
        for data in (b"-r ../../outside.txt\nreq-a==1.0.0\n", same)
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
    """Paths leaving the tree, directories, symlinks, missing files and bad text: named problems."""
    from patchula.errors import ManifestError  # noqa: PLC0415 - this test only
    from patchula.repos.github import RepoTarget, TreeEntry  # noqa: PLC0415 - this test only
    from patchula.scan import _Blobs, _Remote  # noqa: PLC0415 - the scan's private reader

    entries = {
        "a/b.txt": TreeEntry("a/b.txt", "0" * 40, 3, "100644"),
        "link.txt": TreeEntry("link.txt", "1" * 40, 3, "120000"),
        "bad.txt": TreeEntry("bad.txt", "2" * 40, 3, "100644"),
    }
    source = _Remote(RepoTarget("o", "r"), "http://x", None, None)  # type: ignore[arg-type]
    blobs = _Blobs(source, entries, 1024)
    blobs._data["a/b.txt"] = b"\xef\xbb\xbfok\n"
    blobs._data["bad.txt"] = b"\xff\n"
    read = blobs.reader()
    assert read("a/./b.txt") == "ok\n"
    for rel, message in [
        ("../x.txt", "path leaves the checkout"),
        ("a/../../x.txt", "path leaves the checkout"),
        ("a", "not a regular file (directory)"),
        ("link.txt", "symlink (not followed in a remote repository)"),
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
    """Missing, 404 or malformed: extraction source null; table and dashboard say 'not read'.

    Never a count of dependencies found, as for a repository that was read and held none.
    """
    github.github.fail_repo("acme", "gone", "missing")
    targets = [str(tmp_path / "missing"), "github:acme/gone", "github:acme", "github:acme/widget"]
    code, report, _ = _run(github, tmp_path, *targets)
    assert code == 3
    sources = [(r["target"], r["extraction"]["source"]) for r in report["repositories"]]
    assert sources == [*((t, None) for t in targets[:3]), ("github:acme/widget", "fresh")]
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
