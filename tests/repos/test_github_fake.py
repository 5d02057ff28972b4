"""The GitHub repository client's flows against the fake GitHub: trees, blobs, listings, cache."""

from __future__ import annotations

import base64
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest

from patchula.cache import Cache
from patchula.credentials import github_credential
from patchula.errors import ManifestError, RepositoryUnreadable
from patchula.http.auth import StaticCredentials
from patchula.http.fetcher import Fetcher, Timer, make_client
from patchula.repos import github
from patchula.repos.github import RepoTarget, TreeEntry
from tests.fake_registry import FakeRegistry

TOKEN = "gh-STANDIN-client-fake-i19"  # noqa: S105 - a stand-in, never a real secret
FILES = {
    "package.json": b'{"dependencies": {"left-pad": "1.0.0"}}\n',
    "README.md": b"# widget\n",
    "services/api/requirements.txt": b"requests==2.0.0\n",
    "services/api/Dockerfile": b"FROM python:3.11\n",
    "node_modules/left-pad/package.json": b'{"name": "left-pad"}\n',
    "web/node_modules/x/package.json": b"{}\n",
    "web/package.json": b'{"name": "web"}\n',
}
WIDGET = RepoTarget("acme", "widget", None)


def _never(_path: str) -> bool:
    return False


def _node_modules(path: str) -> bool:
    return path.rpartition("/")[2] == "node_modules"


@asynccontextmanager
async def _fetcher(
    cache: Cache | None = None, *, token_for: str | None = None, offline: bool = False
) -> AsyncIterator[Fetcher]:
    credentials = None
    if token_for is not None:
        credential = github_credential({"GH_TOKEN": TOKEN}, token_for)
        assert credential is not None
        credentials = StaticCredentials([credential])
    async with make_client() as client:
        yield Fetcher(client, cache=cache, credentials=credentials, offline=offline)


def _routes(fake_registry: FakeRegistry) -> dict[str, int]:
    host = fake_registry.host("github")
    with host.lock:
        return dict(host.requests_by_route)


def _count(fake_registry: FakeRegistry, part: str) -> int:
    return sum(n for route, n in _routes(fake_registry).items() if part in route)


@pytest.mark.anyio
async def test_resolve_commit_against_the_fake(fake_registry: FakeRegistry) -> None:
    """HEAD, a branch with ``/``, a tag and a full SHA each resolve to the commit they name."""
    api = fake_registry.url("github")
    commit = fake_registry.github.add_tree_repo(
        "acme",
        "widget",
        FILES,
        extra_branches={"release/1.x": {"go.mod": b"module x\n"}},
        tags=["v1.0.0"],
    )
    release = fake_registry.github.commit_of_branch("acme", "widget", "release/1.x")
    async with _fetcher() as fetch:
        assert await github.resolve_commit(fetch, api, WIDGET) == commit
        branch = RepoTarget("acme", "widget", "release/1.x")
        assert await github.resolve_commit(fetch, api, branch) == release
        tag = RepoTarget("acme", "widget", "v1.0.0")
        assert await github.resolve_commit(fetch, api, tag) == commit
        assert await github.resolve_commit(fetch, api, RepoTarget("acme", "widget", commit)) == (
            commit
        )
    routes = _routes(fake_registry)
    assert routes["GET /repos/acme/widget/commits/HEAD"] == 1
    assert routes["GET /repos/acme/widget/commits/release/1.x"] == 1
    assert sum(routes.values()) == 3  # the full SHA sent nothing


@pytest.mark.anyio
async def test_resolve_commit_reaches_the_server_every_run(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """With a fresh stored answer the ref is still asked (a 304), and a moved branch is seen."""
    api = fake_registry.url("github")
    first = fake_registry.github.add_tree_repo("acme", "widget", FILES)
    with Cache.open(tmp_path / "cache.sqlite3") as cache:
        async with _fetcher(cache) as fetch:
            assert await github.resolve_commit(fetch, api, WIDGET) == first
            assert await github.resolve_commit(fetch, api, WIDGET) == first
            moved = fake_registry.github.commit_files("acme", "widget", {"README.md": b"v2\n"})
            assert await github.resolve_commit(fetch, api, WIDGET) == moved
        async with _fetcher(cache, offline=True) as fetch:
            assert await github.resolve_commit(fetch, api, WIDGET) == moved
    assert moved != first
    assert _routes(fake_registry)["GET /repos/acme/widget/commits/HEAD"] == 3
    assert fake_registry.host("github").not_modified == 1


@pytest.mark.anyio
async def test_resolve_commit_offline_without_a_stored_answer(fake_registry: FakeRegistry) -> None:
    """Offline with nothing stored, the repository is unreadable: not in cache."""
    api = fake_registry.url("github")
    async with _fetcher(offline=True) as fetch:
        with pytest.raises(RepositoryUnreadable, match="not in cache"):
            await github.resolve_commit(fetch, api, WIDGET)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("failure", "reason"),
    [
        ("missing", "repository not found, or not visible with the token from GH_TOKEN"),
        ("empty", "the repository is empty"),
        ("rate_limited", "rate limit"),
    ],
)
async def test_unreadable_repositories_against_the_fake(
    fake_registry: FakeRegistry, failure: str, reason: str
) -> None:
    """A missing, empty or rate-limited repository is ``RepositoryUnreadable``, token-free."""
    api = fake_registry.url("github")
    fake_registry.github.fail_repo("acme", "widget", failure)
    async with _fetcher(token_for=api) as fetch:
        with pytest.raises(RepositoryUnreadable) as caught:
            await github.resolve_commit(fetch, api, WIDGET)
    assert reason in caught.value.reason
    assert TOKEN not in caught.value.reason
    assert fake_registry.host("github").authorized_requests >= 1


@pytest.mark.anyio
async def test_read_tree_lists_blobs_in_one_request(fake_registry: FakeRegistry) -> None:
    """One recursive request gives every blob with its SHA, size and mode; sub-trees left out."""
    api = fake_registry.url("github")
    commit = fake_registry.github.add_tree_repo(
        "acme",
        "widget",
        {**FILES, "bin/run": b"#!/bin/sh\n", "link": b"README.md", "vendor/lib": b"f" * 40},
        modes={"bin/run": "100755", "link": "120000", "vendor/lib": "160000"},
    )
    async with _fetcher() as fetch:
        tree = await github.read_tree(fetch, api, WIDGET, commit, skip_dir=_never)
    assert not tree.truncated
    assert tree.requests == 1
    assert tree.dropped == 0
    by_path = {entry.path: entry for entry in tree.entries}
    assert set(by_path) == {*FILES, "bin/run", "link"}
    readme = by_path["README.md"]
    assert readme == TreeEntry("README.md", github.git_blob_sha(b"# widget\n"), 9, "100644")
    assert by_path["bin/run"].mode == "100755"
    assert by_path["link"].mode == "120000"
    assert _count(fake_registry, "/git/trees/") == 1


@pytest.mark.anyio
async def test_read_tree_skip_dir_applies_to_the_recursive_listing(
    fake_registry: FakeRegistry,
) -> None:
    """Entries under a directory ``skip_dir`` skips are left out of a recursive listing too."""
    api = fake_registry.url("github")
    commit = fake_registry.github.add_tree_repo("acme", "widget", FILES)
    async with _fetcher() as fetch:
        tree = await github.read_tree(fetch, api, WIDGET, commit, skip_dir=_node_modules)
    assert [entry.path for entry in tree.entries] == [
        "README.md",
        "package.json",
        "services/api/Dockerfile",
        "services/api/requirements.txt",
        "web/package.json",
    ]


@pytest.mark.anyio
async def test_a_truncated_tree_is_walked(fake_registry: FakeRegistry) -> None:
    """A truncated recursive listing falls back to one request per sub-tree not skipped."""
    api = fake_registry.url("github")
    commit = fake_registry.github.add_tree_repo("acme", "widget", FILES)
    fake_registry.github.truncate_trees = True
    asked: list[str] = []

    def skip(path: str) -> bool:
        asked.append(path)
        return _node_modules(path)

    async with _fetcher() as fetch:
        tree = await github.read_tree(fetch, api, WIDGET, commit, skip_dir=skip)
    assert tree.truncated
    # Sub-trees walked: the root, services, services/api, web (not the node_modules ones).
    assert tree.requests == 1 + 4
    assert _count(fake_registry, "/git/trees/") == 5
    assert [entry.path for entry in tree.entries] == [
        "README.md",
        "package.json",
        "services/api/Dockerfile",
        "services/api/requirements.txt",
        "web/package.json",
    ]
    assert sorted(asked) == ["node_modules", "services", "services/api", "web", "web/node_modules"]


@pytest.mark.anyio
async def test_walked_and_recursive_trees_agree(fake_registry: FakeRegistry) -> None:
    """The walk of a truncated tree lists what the recursive listing lists."""
    api = fake_registry.url("github")
    commit = fake_registry.github.add_tree_repo("acme", "widget", FILES)
    async with _fetcher() as fetch:
        whole = await github.read_tree(fetch, api, WIDGET, commit, skip_dir=_never)
        fake_registry.github.truncate_trees = True
        walked = await github.read_tree(fetch, api, WIDGET, commit, skip_dir=_never)
    assert sorted(whole.entries, key=lambda e: e.path) == walked.entries


@pytest.mark.anyio
async def test_blobs_decode_and_are_never_fetched_twice(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A blob is decoded once; the same content in a new commit is read from the cache."""
    api = fake_registry.url("github")
    big = bytes(range(256)) * 40  # wrapped over many 60-column lines
    first = fake_registry.github.add_tree_repo("acme", "widget", {**FILES, "data.bin": big})
    with Cache.open(tmp_path / "cache.sqlite3") as cache:
        async with _fetcher(cache) as fetch:
            tree = await github.read_tree(fetch, api, WIDGET, first, skip_dir=_never)
            entry = next(e for e in tree.entries if e.path == "data.bin")
            assert await github.read_blob(fetch, api, WIDGET, entry, max_bytes=1 << 20) == big
        second = fake_registry.github.commit_files("acme", "widget", {"README.md": b"changed\n"})
        async with _fetcher(cache) as fetch:
            tree = await github.read_tree(fetch, api, WIDGET, second, skip_dir=_never)
            again = next(e for e in tree.entries if e.path == "data.bin")
            assert again == entry
            assert await github.read_blob(fetch, api, WIDGET, again, max_bytes=1 << 20) == big
    assert _routes(fake_registry)[f"GET /repos/acme/widget/git/blobs/{entry.sha}"] == 1
    assert _count(fake_registry, "/git/trees/") == 2  # one per commit


@pytest.mark.anyio
async def test_a_blob_over_the_limit_is_refused_without_a_request(
    fake_registry: FakeRegistry,
) -> None:
    """A blob the tree says is too large is refused before any request, as a local file is."""
    api = fake_registry.url("github")
    entry = TreeEntry("big/package.json", "a" * 40, 3 * 1048576, "100644")
    async with _fetcher() as fetch:
        with pytest.raises(ManifestError) as caught:
            await github.read_blob(fetch, api, WIDGET, entry, max_bytes=1048576)
    assert caught.value.file == "big/package.json"
    assert caught.value.message == "file is 3.0 MiB, over the 1 MiB limit; not read"
    assert _routes(fake_registry) == {}


@pytest.mark.anyio
async def test_a_blob_larger_than_its_tree_said_is_refused(fake_registry: FakeRegistry) -> None:
    """A blob whose decoded bytes exceed the limit is refused after the request."""
    api = fake_registry.url("github")
    data = b"x" * 2048
    fake_registry.github.add_tree_repo("acme", "widget", {"package.json": data})
    entry = TreeEntry("package.json", github.git_blob_sha(data), None, "100644")
    async with _fetcher() as fetch:
        with pytest.raises(ManifestError, match=r"2\.0 KiB, over the 1 KiB limit") as caught:
            await github.read_blob(fetch, api, WIDGET, entry, max_bytes=1024)
    assert caught.value.file == "package.json"


@pytest.mark.anyio
async def test_a_missing_blob_is_that_files_problem(fake_registry: FakeRegistry) -> None:
    """A blob GitHub does not have is a ``ManifestError`` for that file, not a crash."""
    api = fake_registry.url("github")
    fake_registry.github.add_tree_repo("acme", "widget", FILES)
    entry = TreeEntry("package.json", "b" * 40, 10, "100644")
    async with _fetcher() as fetch:
        with pytest.raises(ManifestError, match="cannot read the file from GitHub") as caught:
            await github.read_blob(fetch, api, WIDGET, entry, max_bytes=1024)
    assert caught.value.file == "package.json"


@pytest.mark.anyio
async def test_the_fake_wraps_blob_content_at_60_columns(fake_registry: FakeRegistry) -> None:
    """The fake's blob answer is base64 wrapped as GitHub wraps it (the client must allow it)."""
    api = fake_registry.url("github")
    data = b"y" * 200
    fake_registry.github.add_tree_repo("acme", "widget", {"f": data})
    async with _fetcher() as fetch:
        sha = github.git_blob_sha(data)
        response = await fetch(f"{api}/repos/acme/widget/git/blobs/{sha}")
    import json  # noqa: PLC0415 - only this test reads the raw answer

    content = json.loads(response.content)["content"]
    lines = content.splitlines()
    assert {len(line) for line in lines[:-1]} == {60}
    assert base64.b64decode(content) == data


@pytest.mark.anyio
async def test_ghes_prefix(fake_registry: FakeRegistry) -> None:
    """Under GitHub Enterprise Server's ``/api/v3`` the same flows work."""
    api = f"{fake_registry.url('github')}/api/v3"
    commit = fake_registry.github.add_tree_repo("acme", "widget", FILES)
    fake_registry.github.add_owner("acme", [("widget", {})])
    async with _fetcher(token_for=api) as fetch:
        assert await github.resolve_commit(fetch, api, WIDGET) == commit
        tree = await github.read_tree(fetch, api, WIDGET, commit, skip_dir=_never)
        entry = next(e for e in tree.entries if e.path == "package.json")
        assert (
            await github.read_blob(fetch, api, WIDGET, entry, max_bytes=1024)
            == (FILES["package.json"])
        )
        listed = await github.list_repositories(
            fetch, api, "acme", include_forks=False, include_archived=False
        )
    assert listed == [WIDGET]
    routes = _routes(fake_registry)
    assert routes["GET /api/v3/repos/acme/widget/commits/HEAD"] == 1
    assert all(route.startswith("GET /api/v3/") for route in routes)


# --- listings --------------------------------------------------------------------------------

REPOS = [
    ("zeta", {}),
    ("Alpha", {}),
    ("forked", {"fork": True}),
    ("old", {"archived": True}),
    *[(f"svc-{n:03d}", {}) for n in range(150)],
]


@pytest.mark.anyio
async def test_an_organisation_listing_of_two_pages(fake_registry: FakeRegistry) -> None:
    """Two pages of 100 are read by their ``Link``; forks and archived left out; sorted by name."""
    api = fake_registry.url("github")
    fake_registry.github.add_owner("acme", REPOS)
    async with _fetcher() as fetch:
        listed = await github.list_repositories(
            fetch, api, "acme", include_forks=False, include_archived=False
        )
    names = [target.name for target in listed]
    assert names[:2] == ["Alpha", "svc-000"]
    assert names[-1] == "zeta"
    assert len(names) == 152
    assert "forked" not in names
    assert "old" not in names
    assert all(target.owner == "acme" and target.ref is None for target in listed)
    log = [entry.path for entry in fake_registry.host("github").log]
    assert log == [
        "/orgs/acme/repos?per_page=100&type=all",
        "/orgs/acme/repos?per_page=100&page=2",
    ]


@pytest.mark.anyio
async def test_forks_and_archived_when_asked(fake_registry: FakeRegistry) -> None:
    """``include_forks`` and ``include_archived`` keep those repositories."""
    api = fake_registry.url("github")
    fake_registry.github.add_owner("acme", REPOS[:4])
    async with _fetcher() as fetch:
        forks = await github.list_repositories(
            fetch, api, "acme", include_forks=True, include_archived=False
        )
        every = await github.list_repositories(
            fetch, api, "acme", include_forks=True, include_archived=True
        )
    assert [t.name for t in forks] == ["Alpha", "forked", "zeta"]
    assert [t.name for t in every] == ["Alpha", "forked", "old", "zeta"]


@pytest.mark.anyio
async def test_a_user_listing_after_the_organisation_404(fake_registry: FakeRegistry) -> None:
    """An owner that is no organisation is listed as a user."""
    api = fake_registry.url("github")
    fake_registry.github.add_owner("octo", [("dotfiles", {}), ("blog", {})], kind="user")
    async with _fetcher() as fetch:
        listed = await github.list_repositories(
            fetch, api, "octo", include_forks=False, include_archived=False
        )
    assert listed == [RepoTarget("octo", "blog"), RepoTarget("octo", "dotfiles")]
    assert [entry.path for entry in fake_registry.host("github").log] == [
        "/orgs/octo/repos?per_page=100&type=all",
        "/users/octo/repos?per_page=100&type=owner",
    ]


@pytest.mark.anyio
async def test_an_unknown_owner_is_unreadable(fake_registry: FakeRegistry) -> None:
    """No organisation and no user of that name: ``RepositoryUnreadable`` saying so."""
    api = fake_registry.url("github")
    async with _fetcher() as fetch:
        with pytest.raises(RepositoryUnreadable, match="no GitHub organisation or user named"):
            await github.list_repositories(
                fetch, api, "nobody", include_forks=False, include_archived=False
            )


@pytest.mark.anyio
async def test_a_silent_server_is_unreadable_within_the_deadline(
    fake_registry: FakeRegistry,
) -> None:
    """A GitHub that never answers costs one request deadline, then the repository's reason."""
    api = fake_registry.url("github")
    fake_registry.github.add_tree_repo("acme", "widget", FILES)
    fake_registry.host("github").silent_next(4)
    async with make_client(timeout=30.0) as client:
        fetch = Fetcher(client, request_deadline=0.3)
        with pytest.raises(RepositoryUnreadable, match="deadline"):
            await github.resolve_commit(fetch, api, WIDGET)


@pytest.mark.anyio
async def test_trees_and_blobs_stay_fresh_long_after_githubs_max_age(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Days after GitHub's ``max-age=60`` ran out, a stored tree and blob are used unasked;
    the ref is still asked (a branch moves) and a listing is asked again.
    """  # noqa: D205 - the second sentence belongs to the behaviour
    api = fake_registry.url("github")
    fake_registry.host("github").cache_control = "private, max-age=60, s-maxage=60"
    commit = fake_registry.github.add_tree_repo("acme", "widget", FILES)
    fake_registry.github.add_owner("acme", [("widget", {})])
    now = [datetime(2026, 12, 1, 12, 0, tzinfo=UTC)]
    timer = Timer(wall=lambda: now[0])

    async def read(fetch: Fetcher) -> bytes:
        assert await github.resolve_commit(fetch, api, WIDGET) == commit
        await github.list_repositories(
            fetch, api, "acme", include_forks=False, include_archived=False
        )
        tree = await github.read_tree(fetch, api, WIDGET, commit, skip_dir=_never)
        entry = next(e for e in tree.entries if e.path == "package.json")
        return await github.read_blob(fetch, api, WIDGET, entry, max_bytes=1024)

    with Cache.open(tmp_path / "cache.sqlite3") as cache:
        async with make_client() as client:
            assert await read(Fetcher(client, cache=cache, timer=timer)) == FILES["package.json"]
            now[0] += timedelta(days=3)
            assert await read(Fetcher(client, cache=cache, timer=timer)) == FILES["package.json"]
    routes = _routes(fake_registry)
    assert routes["GET /repos/acme/widget/commits/HEAD"] == 2
    assert routes["GET /orgs/acme/repos"] == 2  # normal freshness: asked again (a 304)
    assert _count(fake_registry, "/git/trees/") == 1
    assert _count(fake_registry, "/git/blobs/") == 1
