"""The GitHub repository client: targets, ref → commit, trees, blobs, owner listings."""

from __future__ import annotations

import re
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import httpx
import pytest
import respx

from patchula.credentials import github_credential
from patchula.errors import RepositoryUnreadable
from patchula.http.auth import StaticCredentials
from patchula.http.fetcher import Fetcher
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
