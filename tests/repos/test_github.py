"""The GitHub repository client: targets, ref → commit, trees, blobs, owner listings."""

from __future__ import annotations

import base64
import json
import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from datetime import UTC, datetime

import anyio
import httpx
import pytest
import respx

from patchula.credentials import github_credential
from patchula.errors import ManifestError, RepositoryUnreadable
from patchula.http.auth import StaticCredentials
from patchula.http.fetcher import Fetcher
from patchula.models import FetchResponse
from patchula.repos import github
from patchula.repos.github import OwnerTarget, RepoTarget, parse_target
from patchula.settings import Settings

API = "https://api.github.com"
GHES = "https://ghe.example/api/v3"
SHA = "0123456789abcdef0123456789abcdef01234567"
TOKEN = "gh-STANDIN-client-i19"  # noqa: S105 - a stand-in, never a real secret
TARGET = RepoTarget("acme", "widget", None)


@asynccontextmanager
async def _fetcher(*, token: bool = False, api: str = API) -> AsyncIterator[Fetcher]:
    credentials = None
    if token:
        credential = github_credential({"GITHUB_TOKEN": TOKEN}, api)
        assert credential is not None
        credentials = StaticCredentials([credential])
    async with httpx.AsyncClient() as client:
        yield Fetcher(client, credentials=credentials)


# --- parsing ---------------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        ("github:acme/widget", RepoTarget("acme", "widget", None)),
        ("github:acme/widget@main", RepoTarget("acme", "widget", "main")),
        ("github:acme/widget@release/1.x", RepoTarget("acme", "widget", "release/1.x")),
        ("github:acme/widget@v1.2.3", RepoTarget("acme", "widget", "v1.2.3")),
        ("github:Acme-9/my.repo_x-y", RepoTarget("Acme-9", "my.repo_x-y", None)),
        (f"github:acme/widget@{SHA.upper()}", RepoTarget("acme", "widget", SHA)),
        ("github:acme/.github", RepoTarget("acme", ".github", None)),
        ("github:acme/*", OwnerTarget("acme")),
    ],
)
def test_parse_target_reads_valid_targets(text: str, expected: object) -> None:
    """Valid ``github:`` targets parse to their owner, name and ref (a SHA in lower case)."""
    assert parse_target(text) == expected


@pytest.mark.parametrize("text", [".", "src/app", "/abs/path", "gitlab:acme/widget", "GitHub:a/b"])
def test_parse_target_leaves_other_targets_alone(text: str) -> None:
    """A target without the ``github:`` prefix is no remote target: ``None``."""
    assert parse_target(text) is None


@pytest.mark.parametrize(
    ("text", "reason"),
    [
        ("github:", "expected github:OWNER/REPO"),
        ("github:acme", "expected github:OWNER/REPO"),
        ("github:acme/widget/extra", "expected github:OWNER/REPO"),
        ("github:/widget", "not a GitHub owner name"),
        ("github:-acme/widget", "not a GitHub owner name"),
        ("github:" + "a" * 40 + "/widget", "not a GitHub owner name"),
        ("github:ac_me/widget", "not a GitHub owner name"),
        ("github:acme/", "not a GitHub repository name"),
        ("github:acme/.", "not a GitHub repository name"),
        ("github:acme/..", "not a GitHub repository name"),
        ("github:acme/wid get", "not a GitHub repository name"),
        ("github:acme/" + "r" * 101, "not a GitHub repository name"),
        ("github:acme/*@main", "takes no @REF"),
        ("github:acme/widget@", "is empty"),
        ("github:acme/widget@a b", "git refuses"),
        ("github:acme/widget@a\x00b", "git refuses"),
        ("github:acme/widget@a\x1bb", "git refuses"),
        ("github:acme/widget@a..b", "git refuses"),
        ("github:acme/widget@../../etc", "git refuses"),
        ("github:acme/widget@/main", "not a git ref name"),
        ("github:acme/widget@main/", "not a git ref name"),
        ("github:acme/widget@.hidden", "git refuses"),
        ("github:acme/widget@" + "x" * 256, "longer than 255 bytes"),
        ("github:acme/widget@" + "é" * 128, "longer than 255 bytes"),
    ],
)
def test_parse_target_refuses_malformed_targets(text: str, reason: str) -> None:
    """Every malformed ``github:`` target is a ``ValueError`` whose message says what is wrong."""
    with pytest.raises(ValueError, match=re.escape(reason)):
        parse_target(text)


def test_target_text_round_trips() -> None:
    """``text()`` is the canonical target, which parses back to the same target."""
    for text in ("github:acme/widget", "github:acme/widget@release/1.x", "github:acme/*"):
        parsed = parse_target(text)
        assert parsed is not None
        assert parsed.text() == text
        assert parse_target(parsed.text()) == parsed


def test_a_ref_of_255_bytes_is_accepted() -> None:
    """The ref bound is inclusive: 255 bytes is a ref, 256 is not."""
    target = parse_target("github:acme/widget@" + "x" * 255)
    assert isinstance(target, RepoTarget)
    assert target.ref == "x" * 255


def test_api_base_order(monkeypatch: pytest.MonkeyPatch) -> None:
    """``--registry github=`` wins over ``GITHUB_API_URL``, which wins over api.github.com."""
    assert github.api_base(Settings(), {}) == API
    assert github.api_base(Settings(), {"GITHUB_API_URL": f"{GHES}/"}) == GHES
    configured = Settings(registries={"github": "https://mirror.example/gh/"})
    assert github.api_base(configured, {"GITHUB_API_URL": GHES}) == "https://mirror.example/gh"
    monkeypatch.setenv("GITHUB_API_URL", GHES)
    assert github.api_base(Settings()) == GHES


def test_web_url_for_github_com_and_ghes() -> None:
    """The web page is github.com's for api.github.com and the host's own for GHES."""
    assert github.web_url(API, TARGET) == "https://github.com/acme/widget"
    assert github.web_url(GHES, TARGET) == "https://ghe.example/acme/widget"
    assert github.web_url("http://127.0.0.1:8080", TARGET) == "http://127.0.0.1:8080/acme/widget"


# --- ref → commit ----------------------------------------------------------------------------


@pytest.mark.anyio
async def test_a_sha_ref_is_the_commit_without_a_request() -> None:
    """A 40-hex ref is returned as it is: no request is sent (respx routes nothing)."""
    with respx.mock(assert_all_called=False) as router:
        route = router.route()
        async with _fetcher() as fetch:
            commit = await github.resolve_commit(fetch, API, RepoTarget("acme", "widget", SHA))
    assert commit == SHA
    assert route.call_count == 0


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("ref", "path"),
    [
        (None, "/repos/acme/widget/commits/HEAD"),
        ("main", "/repos/acme/widget/commits/main"),
        ("release/1.x", "/repos/acme/widget/commits/release/1.x"),
        ("v1+build#1%", "/repos/acme/widget/commits/v1%2Bbuild%231%25"),
    ],
)
async def test_resolve_commit_sends_one_sha_request(ref: str | None, path: str) -> None:
    """One GET of ``commits/{ref}`` (HEAD by default, ``/`` kept) with the ``sha`` media type."""
    with respx.mock(assert_all_called=True) as router:
        route = router.get(url__startswith=API).mock(
            return_value=httpx.Response(200, text=SHA.upper() + "\n")
        )
        async with _fetcher() as fetch:
            commit = await github.resolve_commit(fetch, API, RepoTarget("acme", "widget", ref))
    assert commit == SHA
    assert route.call_count == 1
    request = route.calls.last.request
    assert request.url.raw_path.decode() == path
    assert request.headers["accept"] == "application/vnd.github.sha"
    assert request.headers["x-github-api-version"] == "2022-11-28"


@pytest.mark.anyio
async def test_resolve_commit_reads_a_json_answer_too() -> None:
    """A server ignoring the ``sha`` media type answers the JSON commit: its ``sha`` is read."""
    with respx.mock() as router:
        router.get(f"{API}/repos/acme/widget/commits/HEAD").mock(
            return_value=httpx.Response(200, json={"sha": SHA, "commit": {}})
        )
        async with _fetcher() as fetch:
            assert await github.resolve_commit(fetch, API, TARGET) == SHA


@pytest.mark.anyio
async def test_resolve_commit_on_ghes() -> None:
    """On GitHub Enterprise Server the request goes under ``/api/v3`` with the token."""
    with respx.mock() as router:
        route = router.get(f"{GHES}/repos/acme/widget/commits/HEAD").mock(
            return_value=httpx.Response(200, text=SHA)
        )
        async with _fetcher(token=True, api=GHES) as fetch:
            assert await github.resolve_commit(fetch, GHES, TARGET) == SHA
    assert route.calls.last.request.headers["authorization"] == f"Bearer {TOKEN}"


def _json(status: int, message: str, **headers: str) -> httpx.Response:
    body = {"message": message, "documentation_url": "https://docs.github.com/rest"}
    return httpx.Response(status, json=body, headers=headers)


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("answer", "token", "reason"),
    [
        (
            _json(404, "Not Found"),
            False,
            (
                "repository not found, or not visible without a token "
                "(none set: GITHUB_TOKEN or GH_TOKEN) (HTTP 404 from api.github.com)"
            ),
        ),
        (
            _json(404, "Not Found"),
            True,
            (
                "repository not found, or not visible with the token from GITHUB_TOKEN "
                "(HTTP 404 from api.github.com)"
            ),
        ),
        (_json(409, "Git Repository is empty."), False, "the repository is empty (HTTP 409"),
        (
            _json(422, "No commit found for SHA: nope"),
            False,
            "no commit, branch or tag named 'nope' (HTTP 422: No commit found for SHA: nope)",
        ),
        (
            _json(401, "Bad credentials"),
            True,
            (
                "GitHub refused the credentials: HTTP 401 with the token from GITHUB_TOKEN: "
                "Bad credentials"
            ),
        ),
        (
            _json(403, "Resource not accessible by personal access token"),
            True,
            (
                "no permission to read the repository with the token from GITHUB_TOKEN (HTTP 403: "
                "Resource not accessible by personal access token)"
            ),
        ),
        (
            _json(451, "Repository access blocked"),
            False,
            (
                "access to the repository is blocked for legal reasons (HTTP 451: "
                "Repository access blocked)"
            ),
        ),
        (_json(418, "teapot"), False, "GitHub answered HTTP 418"),
        (httpx.Response(200, text="not a sha"), False, "not a 40-hex commit SHA"),
        (httpx.Response(200, text=SHA + "0"), False, "not a 40-hex commit SHA"),
        (httpx.Response(200, json={"sha": 7}), False, "not a 40-hex commit SHA"),
        (httpx.Response(200, text="{nope"), False, "unusable commit answer from GitHub"),
    ],
)
async def test_resolve_commit_failures_have_reasons(
    answer: httpx.Response,
    token: bool,  # noqa: FBT001 - a parametrized case
    reason: str,
) -> None:
    """Each failing answer is ``RepositoryUnreadable`` with a reason a user understands."""
    target = RepoTarget("acme", "widget", "nope")
    with respx.mock() as router:
        router.get(url__startswith=API).mock(return_value=answer)
        async with _fetcher(token=token) as fetch:
            with pytest.raises(RepositoryUnreadable) as caught:
                await github.resolve_commit(fetch, API, target)
    assert reason in caught.value.reason
    assert TOKEN not in str(caught.value)


@pytest.mark.anyio
async def test_resolve_commit_rate_limited_names_the_limit() -> None:
    """A used-up primary limit (403, remaining 0, reset far off) fails with the limit's reason."""
    headers = {"x-ratelimit-remaining": "0", "x-ratelimit-reset": "4102444800"}
    with respx.mock() as router:
        router.get(url__startswith=API).mock(
            return_value=_json(403, "API rate limit exceeded for 10.0.0.1.", **headers)
        )
        async with _fetcher(token=True) as fetch:
            with pytest.raises(RepositoryUnreadable) as caught:
                await github.resolve_commit(fetch, API, TARGET)
    assert "rate limit" in caught.value.reason
    assert TOKEN not in caught.value.reason


@pytest.mark.anyio
async def test_resolve_commit_unreachable_is_unreadable() -> None:
    """A network failure from the facade becomes ``RepositoryUnreadable`` naming the host."""
    with respx.mock() as router:
        router.get(url__startswith=API).mock(side_effect=httpx.ConnectError("refused"))
        async with _fetcher() as fetch:
            with pytest.raises(RepositoryUnreadable) as caught:
                await github.resolve_commit(fetch, API, TARGET)
    assert "api.github.com" in caught.value.reason


# --- trees: hostile answers ------------------------------------------------------------------

TREES = f"{API}/repos/acme/widget/git/trees"
BLOB_SHA = "1" * 40


def _never(_path: str) -> bool:
    return False


def _row(path: str, **fields: object) -> dict[str, object]:
    row: dict[str, object] = {"path": path, "mode": "100644", "type": "blob", "sha": BLOB_SHA}
    row["size"] = 3
    row.update(fields)
    return row


@pytest.mark.anyio
async def test_hostile_tree_entries_are_dropped_and_counted() -> None:
    """Entries with hostile paths or a bad SHA, size, mode or type are dropped and counted."""
    hostile = [
        _row("../etc/passwd"),
        _row("a/../../b"),
        _row("/etc/shadow"),
        _row("a/./b"),
        _row("a//b"),
        _row("a/"),
        _row(""),
        _row("nul\x00byte"),
        _row("line\nbreak"),
        _row("esc\x1b[31m"),
        _row("del\x7f"),
        _row("x" * 4097),
        _row("bad-sha", sha="z" * 40),
        _row("short-sha", sha="1" * 39),
        _row("negative", size=-1),
        _row("text-size", size="3"),
        _row("bool-size", size=True),
        _row("odd-mode", mode="100600"),
        _row("odd-type", type="tag"),
    ]
    fine = [
        _row("ok/package.json"),
        _row("no-size", size=None),
        _row("y" * 4096),
        {"path": "sub", "mode": "160000", "type": "commit", "sha": "2" * 40},
        {"path": "ok", "mode": "040000", "type": "tree", "sha": "3" * 40},
    ]
    with respx.mock() as router:
        router.get(f"{TREES}/{SHA}?recursive=1").mock(
            return_value=httpx.Response(
                200, content=json.dumps({"tree": fine + hostile, "truncated": False}).encode()
            )
        )
        async with _fetcher() as fetch:
            tree = await github.read_tree(fetch, API, TARGET, SHA, skip_dir=_never)
    assert [entry.path for entry in tree.entries] == ["ok/package.json", "no-size", "y" * 4096]
    assert tree.entries[1].size is None
    assert tree.dropped == len(hostile)


@pytest.mark.anyio
@pytest.mark.parametrize(
    "body",
    [b"not json", b"[]", b'{"tree": 5}', b'{"truncated": false}', b'{"tree": [{"path": 1}]}'],
)
async def test_a_malformed_tree_is_unreadable(body: bytes) -> None:
    """A tree answer that is not a tree is ``RepositoryUnreadable`` saying it is unusable."""
    with respx.mock() as router:
        router.get(url__startswith=TREES).mock(return_value=httpx.Response(200, content=body))
        async with _fetcher() as fetch:
            with pytest.raises(RepositoryUnreadable, match="unusable tree answer from GitHub"):
                await github.read_tree(fetch, API, TARGET, SHA, skip_dir=_never)


@pytest.mark.anyio
async def test_read_tree_refuses_a_commit_that_is_no_sha() -> None:
    """A commit that is not 40 hex never reaches a URL."""
    with respx.mock(assert_all_called=False) as router:
        route = router.route()
        async with _fetcher() as fetch:
            with pytest.raises(RepositoryUnreadable, match="not a 40-hex commit SHA"):
                await github.read_tree(fetch, API, TARGET, "../../x", skip_dir=_never)
    assert route.call_count == 0


def _tree_level(*rows: dict[str, object], truncated: bool = False) -> httpx.Response:
    return httpx.Response(200, json={"tree": list(rows), "truncated": truncated})


@pytest.mark.anyio
async def test_a_self_containing_tree_walk_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """A server whose sub-tree contains itself cannot make the walk endless: the request bound."""
    monkeypatch.setattr(github, "MAX_SUBTREE_REQUESTS", 20)
    loop = "4" * 40
    with respx.mock() as router:
        router.get(f"{TREES}/{SHA}?recursive=1").mock(return_value=_tree_level(truncated=True))
        router.get(f"{TREES}/{SHA}").mock(
            return_value=_tree_level({"path": "a", "mode": "040000", "type": "tree", "sha": loop})
        )
        inner = router.get(f"{TREES}/{loop}").mock(
            return_value=_tree_level(
                {"path": "a", "mode": "040000", "type": "tree", "sha": loop}, _row("f")
            )
        )
        async with _fetcher() as fetch:
            with pytest.raises(RepositoryUnreadable, match="more than 20 sub-tree requests"):
                await github.read_tree(fetch, API, TARGET, SHA, skip_dir=_never)
    # One request per level (identical concurrent requests share one), at most the bound.
    assert inner.call_count <= 20


@pytest.mark.anyio
async def test_a_truncated_sub_tree_is_unreadable() -> None:
    """A sub-tree listing that is itself truncated cannot be completed: the tree is not read."""
    with respx.mock() as router:
        router.get(f"{TREES}/{SHA}?recursive=1").mock(return_value=_tree_level(truncated=True))
        router.get(f"{TREES}/{SHA}").mock(return_value=_tree_level(_row("f"), truncated=True))
        async with _fetcher() as fetch:
            with pytest.raises(RepositoryUnreadable, match="truncated the listing of the root"):
                await github.read_tree(fetch, API, TARGET, SHA, skip_dir=_never)


@pytest.mark.anyio
async def test_walked_sub_tree_names_with_a_slash_are_dropped() -> None:
    """A one-level listing names entries, not paths: a name holding ``/`` is dropped."""
    with respx.mock() as router:
        router.get(f"{TREES}/{SHA}?recursive=1").mock(return_value=_tree_level(truncated=True))
        router.get(f"{TREES}/{SHA}").mock(return_value=_tree_level(_row("a/b"), _row("c")))
        async with _fetcher() as fetch:
            tree = await github.read_tree(fetch, API, TARGET, SHA, skip_dir=_never)
    assert [entry.path for entry in tree.entries] == ["c"]
    assert tree.dropped == 1
    assert tree.requests == 2


@pytest.mark.anyio
async def test_the_walk_sends_a_bounded_number_of_requests_at_once() -> None:
    """A level of 40 sub-trees is read with at most ``SUBTREE_CONCURRENCY`` requests in flight."""
    subtrees: list[dict[str, object]] = [
        {"path": f"d{n}", "mode": "040000", "type": "tree", "sha": f"{n:040x}"} for n in range(40)
    ]
    flying = peak = 0

    async def answer(request: httpx.Request) -> httpx.Response:
        nonlocal flying, peak
        flying += 1
        peak = max(peak, flying)
        await anyio.sleep(0.001)
        flying -= 1
        return _tree_level(_row("package.json"))

    with respx.mock() as router:
        router.get(f"{TREES}/{SHA}?recursive=1").mock(return_value=_tree_level(truncated=True))
        router.get(f"{TREES}/{SHA}").mock(return_value=_tree_level(*subtrees))
        router.get(url__startswith=f"{TREES}/").mock(side_effect=answer)
        async with _fetcher() as fetch:
            tree = await github.read_tree(fetch, API, TARGET, SHA, skip_dir=_never)
    assert len(tree.entries) == 40
    assert tree.requests == 42
    assert 1 < peak <= github.SUBTREE_CONCURRENCY


# --- blobs: hostile answers ------------------------------------------------------------------

DATA = b'{"name": "x"}\n'
ENTRY = github.TreeEntry("pkg/package.json", github.git_blob_sha(DATA), len(DATA), "100644")
BLOB_URL = f"{API}/repos/acme/widget/git/blobs/{ENTRY.sha}"


def _blob(content: str, **fields: object) -> httpx.Response:
    body: dict[str, object] = {"content": content, "encoding": "base64", "size": len(DATA)}
    body.update(fields)
    return httpx.Response(200, json=body)


@pytest.mark.anyio
async def test_a_wrapped_base64_blob_decodes() -> None:
    """GitHub's line-wrapped base64 decodes to the file's bytes."""
    encoded = base64.b64encode(DATA).decode()
    wrapped = "\n".join(encoded[i : i + 8] for i in range(0, len(encoded), 8)) + "\n"
    with respx.mock() as router:
        router.get(BLOB_URL).mock(return_value=_blob(wrapped))
        async with _fetcher() as fetch:
            assert await github.read_blob(fetch, API, TARGET, ENTRY, max_bytes=1024) == DATA


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (_blob("!!!not base64!!!"), "not valid base64"),
        (_blob(base64.b64encode(DATA).decode()[:-1]), "not valid base64"),
        (_blob(base64.b64encode(DATA).decode(), encoding="utf-8"), "not base64"),
        (_blob(base64.b64encode(DATA).decode(), size=3), "size 3"),
        (_blob(base64.b64encode(b"other bytes").decode(), size=11), "another content"),
        (httpx.Response(200, text="<html>"), "unusable blob answer"),
        (httpx.Response(404, json={"message": "Not Found"}), "HTTP 404"),
    ],
)
async def test_a_bad_blob_is_that_files_problem(answer: httpx.Response, reason: str) -> None:
    """A blob that cannot be decoded or is not what its SHA names is a ``ManifestError``."""
    with respx.mock() as router:
        router.get(BLOB_URL).mock(return_value=answer)
        async with _fetcher(token=True) as fetch:
            with pytest.raises(ManifestError) as caught:
                await github.read_blob(fetch, API, TARGET, ENTRY, max_bytes=1024)
    assert caught.value.file == "pkg/package.json"
    assert reason in caught.value.message
    assert TOKEN not in str(caught.value)


# --- listings: hostile answers ---------------------------------------------------------------

ORG = f"{API}/orgs/acme/repos"


def _page(names: list[str], link: str | None = None) -> httpx.Response:
    headers = {"link": link} if link is not None else {}
    body = [{"name": name, "owner": {"login": "acme"}} for name in names]
    return httpx.Response(200, json=body, headers=headers)


@pytest.mark.anyio
async def test_listing_links_are_followed_as_given() -> None:
    """The next page is the ``Link`` target, whatever its path (GitHub's ``/organizations/ID``)."""
    second = f"{API}/organizations/42/repos?per_page=100&page=2"
    with respx.mock() as router:
        router.get(f"{ORG}?per_page=100&type=all").mock(
            return_value=_page(["b"], f'<{second}>; rel="next"')
        )
        router.get(second).mock(return_value=_page(["a"]))
        async with _fetcher() as fetch:
            listed = await github.list_repositories(
                fetch, API, "acme", include_forks=False, include_archived=False
            )
    assert listed == [RepoTarget("acme", "a"), RepoTarget("acme", "b")]


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("link", "reason"),
    [
        ('<https://evil.example/orgs/acme/repos?page=2>; rel="next"', "on another host"),
        (f'<{ORG}?per_page=100&type=all>; rel="next"', "links loop"),
    ],
)
async def test_listing_links_off_the_host_or_looping_are_refused(link: str, reason: str) -> None:
    """A next link to another host is never followed; a loop stops; both are unreadable."""
    with respx.mock() as router:
        router.get(f"{ORG}?per_page=100&type=all").mock(return_value=_page(["a"], link))
        async with _fetcher(token=True) as fetch:
            with pytest.raises(RepositoryUnreadable, match=reason) as caught:
                await github.list_repositories(
                    fetch, API, "acme", include_forks=False, include_archived=False
                )
    assert TOKEN not in caught.value.reason


@pytest.mark.anyio
async def test_endless_listing_pagination_is_bounded(monkeypatch: pytest.MonkeyPatch) -> None:
    """Pages that always link to one more stop at ``MAX_LISTING_PAGES``."""
    monkeypatch.setattr(github, "MAX_LISTING_PAGES", 5)

    def answer(request: httpx.Request) -> httpx.Response:
        page = int(request.url.params.get("page", "1"))
        return _page([f"r{page}"], f'<{ORG}?page={page + 1}>; rel="next"')

    with respx.mock() as router:
        route = router.get(url__startswith=ORG).mock(side_effect=answer)
        async with _fetcher() as fetch:
            with pytest.raises(RepositoryUnreadable, match="more than 5 pages"):
                await github.list_repositories(
                    fetch, API, "acme", include_forks=False, include_archived=False
                )
    assert route.call_count == 5


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("answer", "reason"),
    [
        (httpx.Response(403, json={"message": "Forbidden"}), "HTTP 403"),
        (httpx.Response(200, json={"not": "a list"}), "unusable repository list"),
        (httpx.Response(200, json=[{"name": "x"}] * 101), "more than the 100 asked"),
    ],
)
async def test_listing_failures_are_unreadable(answer: httpx.Response, reason: str) -> None:
    """A refused or malformed listing is ``RepositoryUnreadable`` with the reason."""
    with respx.mock() as router:
        router.get(url__startswith=ORG).mock(return_value=answer)
        async with _fetcher() as fetch:
            with pytest.raises(RepositoryUnreadable, match=reason):
                await github.list_repositories(
                    fetch, API, "acme", include_forks=False, include_archived=False
                )


@pytest.mark.anyio
async def test_a_later_listing_page_404_is_no_user_fallback() -> None:
    """Only a 404 on the organisation's first page means "not an organisation"."""
    second = f"{ORG}?per_page=100&page=2"
    with respx.mock() as router:
        router.get(f"{ORG}?per_page=100&type=all").mock(
            return_value=_page(["a"], f'<{second}>; rel="next"')
        )
        router.get(second).mock(return_value=httpx.Response(404, json={"message": "Not Found"}))
        async with _fetcher() as fetch:
            with pytest.raises(RepositoryUnreadable, match="not found"):
                await github.list_repositories(
                    fetch, API, "acme", include_forks=False, include_archived=False
                )


@pytest.mark.anyio
async def test_listed_names_github_would_refuse_are_left_out() -> None:
    """A listed name that is no repository name never becomes a target."""
    with respx.mock() as router:
        router.get(url__startswith=ORG).mock(return_value=_page(["ok", "..", "a/b", "x y"]))
        async with _fetcher() as fetch:
            listed = await github.list_repositories(
                fetch, API, "acme", include_forks=False, include_archived=False
            )
    assert listed == [RepoTarget("acme", "ok")]


@pytest.mark.anyio
async def test_a_sub_tree_that_fails_makes_the_tree_unreadable() -> None:
    """A sub-tree answering 404 during a walk is one ``RepositoryUnreadable``, no group error."""
    sub = "5" * 40
    with respx.mock() as router:
        router.get(f"{TREES}/{SHA}?recursive=1").mock(return_value=_tree_level(truncated=True))
        router.get(f"{TREES}/{SHA}").mock(
            return_value=_tree_level({"path": "lib", "mode": "040000", "type": "tree", "sha": sub})
        )
        router.get(f"{TREES}/{sub}").mock(
            return_value=httpx.Response(404, json={"message": "Not Found"})
        )
        async with _fetcher() as fetch:
            with pytest.raises(RepositoryUnreadable, match="the sub-tree 'lib' cannot be read"):
                await github.read_tree(fetch, API, TARGET, SHA, skip_dir=_never)


def test_a_rate_limit_answer_names_its_reset_time() -> None:
    """A 403 with ``x-ratelimit-remaining: 0`` reaching the client names the reset in UTC."""
    response = FetchResponse(
        status=403,
        url=f"{API}/repos/acme/widget/commits/HEAD",
        headers=(("x-ratelimit-remaining", "0"), ("x-ratelimit-reset", "1767225600")),
        content=b'{"message": "API rate limit exceeded for 10.0.0.1."}',
        fetched_at=datetime(2026, 1, 1, tzinfo=UTC),
        credential="GH_TOKEN",
    )
    reason = github._failure(response).reason
    assert reason == (
        "GitHub rate limit exceeded for requests with the token from GH_TOKEN "
        "(HTTP 403 from api.github.com: API rate limit exceeded for 10.0.0.1.); "
        "it resets at 2026-01-01 00:00 UTC (x-ratelimit-reset)"
    )


@pytest.mark.anyio
async def test_a_blob_answer_over_the_limit_is_refused_before_decoding() -> None:
    """Without a size in tree or answer, the base64 length tells the blob is too large."""
    big = b"z" * 4096
    entry = github.TreeEntry("package.json", github.git_blob_sha(big), None, "100644")
    url = f"{API}/repos/acme/widget/git/blobs/{entry.sha}"
    body = {"content": base64.b64encode(big).decode(), "encoding": "base64"}
    with respx.mock() as router:
        router.get(url).mock(return_value=httpx.Response(200, json=body))
        async with _fetcher() as fetch:
            with pytest.raises(ManifestError) as caught:
                await github.read_blob(fetch, API, TARGET, entry, max_bytes=1024)
            assert await github.read_blob(fetch, API, TARGET, entry, max_bytes=8192) == big
    assert caught.value.file == "package.json"
    assert caught.value.message == "file is 4.0 KiB, over the 1 KiB limit; not read"


@pytest.mark.anyio
async def test_a_tree_over_the_entry_bound_is_unreadable(monkeypatch: pytest.MonkeyPatch) -> None:
    """More entries than ``MAX_TREE_ENTRIES``, listed at once or walked, are not read."""
    monkeypatch.setattr(github, "MAX_TREE_ENTRIES", 3)
    rows = [_row(f"f{n}") for n in range(4)]
    with respx.mock() as router:
        router.get(f"{TREES}/{SHA}?recursive=1").mock(return_value=_tree_level(*rows))
        async with _fetcher() as fetch:
            with pytest.raises(RepositoryUnreadable, match="more than 3"):
                await github.read_tree(fetch, API, TARGET, SHA, skip_dir=_never)
    sub = "6" * 40
    with respx.mock() as router:
        router.get(f"{TREES}/{SHA}?recursive=1").mock(return_value=_tree_level(truncated=True))
        router.get(f"{TREES}/{SHA}").mock(
            return_value=_tree_level(
                *rows[:2], {"path": "d", "mode": "040000", "type": "tree", "sha": sub}
            )
        )
        router.get(f"{TREES}/{sub}").mock(return_value=_tree_level(*rows[:2]))
        async with _fetcher() as fetch:
            with pytest.raises(RepositoryUnreadable, match="more than 3 entries"):
                await github.read_tree(fetch, API, TARGET, SHA, skip_dir=_never)


# --- the run's blob memo -----------------------------------------------------------------------


class _BlobServer:
    """A fetch double answering ``git/blobs/{sha}`` from ``blobs``; counts and can hold calls."""

    def __init__(self, blobs: dict[str, bytes], *, fail: set[str] | None = None) -> None:
        self.blobs = blobs
        self.fail = fail or set()  # repositories (``owner/name``) answering 404
        self.calls: list[str] = []
        self.release = anyio.Event()
        self.hold = False

    async def __call__(self, url: str, **kwargs: object) -> FetchResponse:
        self.calls.append(url)
        if self.hold:
            await self.release.wait()
        repo = url.split("/repos/", 1)[1].split("/git/", 1)[0]
        sha = url.rsplit("/", 1)[1]
        if repo in self.fail:
            return FetchResponse(404, url, (), b'{"message": "Not Found"}', datetime.now(UTC))
        answer = {"content": base64.b64encode(self.blobs[sha]).decode(), "encoding": "base64"}
        derive = kwargs["derive"]
        assert callable(derive)
        content = derive(json.dumps(answer).encode())
        return FetchResponse(200, url, (), content, datetime.now(UTC))

    def all_or_nothing(self) -> object:  # pragma: no cover - not used by blob reads
        raise NotImplementedError


def _entry(data: bytes, path: str = "package.json") -> github.TreeEntry:
    return github.TreeEntry(path, github.git_blob_sha(data), len(data), "100644")


@pytest.mark.anyio
async def test_the_memo_reads_a_blob_once_for_every_repository() -> None:
    """Three repositories asking at once for one SHA: one request; later askers, none."""
    server = _BlobServer({ENTRY.sha: DATA})
    server.hold = True
    memo = github.BlobMemo()
    got: list[bytes] = []

    async def ask(name: str) -> None:
        got.append(await memo.read(server, API, RepoTarget("acme", name), ENTRY, max_bytes=1024))  # type: ignore[arg-type]

    async with anyio.create_task_group() as tg:
        for name in ("a", "b", "c"):
            tg.start_soon(ask, name)
        await anyio.wait_all_tasks_blocked()
        server.release.set()
    await ask("d")
    assert got == [DATA] * 4
    assert server.calls == [f"{API}/repos/acme/a/git/blobs/{ENTRY.sha}"]
    assert memo.reads == 1


@pytest.mark.anyio
async def test_a_failed_read_is_not_shared_and_not_kept() -> None:
    """The first repository's 404 is its own: the one waiting reads for itself, and succeeds."""
    server = _BlobServer({ENTRY.sha: DATA}, fail={"acme/private"})
    server.hold = True
    memo = github.BlobMemo()
    outcomes: dict[str, bytes | str] = {}

    async def ask(name: str) -> None:
        try:
            data = await memo.read(server, API, RepoTarget("acme", name), ENTRY, max_bytes=1024)  # type: ignore[arg-type]
        except ManifestError as exc:
            outcomes[name] = f"{exc.file}: {exc.message}"
        else:
            outcomes[name] = data

    async with anyio.create_task_group() as tg:
        tg.start_soon(ask, "private")
        await anyio.wait_all_tasks_blocked()
        tg.start_soon(ask, "public")
        await anyio.wait_all_tasks_blocked()
        server.release.set()
    assert outcomes["public"] == DATA
    assert "HTTP 404" in str(outcomes["private"])
    assert str(outcomes["private"]).startswith("pkg/package.json: cannot read the file from GitHub")
    assert [call.split("/repos/")[1].split("/")[1] for call in server.calls] == [
        "private",
        "public",
    ]


@pytest.mark.anyio
async def test_the_memo_holds_at_most_its_bound_evicting_the_least_recently_used() -> None:
    """Over its byte bound the memo drops the blob asked for longest ago; it reads it again."""
    blobs = {github.git_blob_sha(data): data for data in (b"a" * 40, b"b" * 40, b"c" * 40)}
    entries = [_entry(data) for data in blobs.values()]
    server = _BlobServer(blobs)
    memo = github.BlobMemo(max_bytes=100)
    for entry in entries[:2]:
        await memo.read(server, API, TARGET, entry, max_bytes=1024)  # type: ignore[arg-type]
    await memo.read(server, API, TARGET, entries[0], max_bytes=1024)  # type: ignore[arg-type]
    await memo.read(server, API, TARGET, entries[2], max_bytes=1024)  # type: ignore[arg-type]
    assert memo.size == 80  # a and c: b was the least recently used
    assert memo.reads == 3
    await memo.read(server, API, TARGET, entries[0], max_bytes=1024)  # type: ignore[arg-type]
    assert memo.reads == 3
    await memo.read(server, API, TARGET, entries[1], max_bytes=1024)  # type: ignore[arg-type]
    assert memo.reads == 4
    big = b"x" * 101
    server.blobs[github.git_blob_sha(big)] = big
    await memo.read(server, API, TARGET, _entry(big), max_bytes=1024)  # type: ignore[arg-type]
    assert memo.size <= 100


@pytest.mark.anyio
async def test_a_held_blob_over_a_smaller_limit_is_too_large_for_that_asker() -> None:
    """A blob read under the file limit is refused to a ``.npmrc`` read under a smaller one."""
    server = _BlobServer({ENTRY.sha: DATA})
    memo = github.BlobMemo()
    await memo.read(server, API, TARGET, ENTRY, max_bytes=1024)  # type: ignore[arg-type]
    npmrc = github.TreeEntry(".npmrc", ENTRY.sha, None, "100644")
    with pytest.raises(ManifestError) as caught:
        await memo.read(server, API, TARGET, npmrc, max_bytes=4)  # type: ignore[arg-type]
    assert caught.value.file == ".npmrc"
    assert "over" in caught.value.message
    assert memo.reads == 1


@pytest.mark.anyio
async def test_a_blob_is_stored_once_under_its_sha_for_every_repository() -> None:
    """The facade keeps one entry per blob SHA: another repository's read sends nothing."""
    from patchula.cache import Cache  # noqa: PLC0415 - this test only

    encoded = base64.b64encode(DATA).decode()
    with respx.mock() as router:
        route = router.get(BLOB_URL).mock(return_value=_blob(encoded))
        async with httpx.AsyncClient() as client:
            cache = Cache.open(None)
            try:
                fetch = Fetcher(client, cache=cache)
                first = await github.read_blob(fetch, API, TARGET, ENTRY, max_bytes=1024)
                other = RepoTarget("elsewhere", "copy")
                second = await github.read_blob(fetch, API, other, ENTRY, max_bytes=1024)
            finally:
                await cache.aclose()
    assert first == second == DATA
    assert route.call_count == 1


@pytest.mark.anyio
async def test_a_blob_stored_for_a_token_does_not_answer_anonymous_requests() -> None:
    """The blob's key names the credential sent: a token's stored answer never serves another."""
    from patchula.cache import Cache  # noqa: PLC0415 - this test only

    encoded = base64.b64encode(DATA).decode()
    with respx.mock() as router:
        route = router.get(BLOB_URL).mock(return_value=_blob(encoded))
        cache = Cache.open(None)
        try:
            credential = github_credential({"GITHUB_TOKEN": TOKEN}, API)
            assert credential is not None
            async with httpx.AsyncClient() as client:
                with_token = Fetcher(
                    client, cache=cache, credentials=StaticCredentials([credential])
                )
                await github.read_blob(with_token, API, TARGET, ENTRY, max_bytes=1024)
                await github.read_blob(with_token, API, TARGET, ENTRY, max_bytes=1024)
                anonymous = Fetcher(client, cache=cache)
                await github.read_blob(anonymous, API, TARGET, ENTRY, max_bytes=1024)
        finally:
            await cache.aclose()
    assert route.call_count == 2
    assert [("authorization" in call.request.headers) for call in route.calls] == [True, False]
