"""One governor for GitHub REST and GraphQL, against the fake GitHub (and respx for github.com).

REST and GraphQL share one host limit and one cool-down, on github.com and on GitHub
Enterprise Server (``/api/v3`` and ``/api/graphql`` of one host); secondary limits stop every
GitHub request while other hosts go on; a used-up primary limit fails the GitHub rows at once,
naming the reset; a run without a token says so up front. Time is fake where it matters.
"""

from __future__ import annotations

import functools
import json
import re
import sqlite3
import time as real_time
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import httpx
import pytest
import respx
from typer.testing import CliRunner, Result

from patchula.cache import Cache
from patchula.cli import app
from patchula.credentials import github_credential, github_graphql_url
from patchula.datasource import github_tags
from patchula.http.auth import StaticCredentials
from patchula.http.fetcher import DEFAULT_HOST_CONCURRENCY, Fetcher, make_client
from tests.fake_registry import FakeRegistry
from tests.faketime import FakeTime

OLD = datetime(2025, 1, 1, tzinfo=UTC)
TOKEN = "gh-STANDIN-governor-k14"  # noqa: S105 - a stand-in, never a real secret
SECONDARY = (
    b'{"message":"You have exceeded a secondary rate limit. Please wait a few minutes before '
    b'you try again.","documentation_url":"https://docs.github.com/rest"}'
)
QUERY = (
    b'{"query":"query{repository(owner:\\"acme\\",name:\\"r0\\"){refs(first:10){nodes{name}}}}"}'
)
runner = CliRunner()


def _hostport(url: str) -> str:
    return url.removeprefix("http://")


def _busy(registry: FakeRegistry, fetcher: Fetcher) -> bool:
    """Real I/O is pending: a request in flight in the client or still being served."""
    if any(s.in_flight for s in fetcher.stats.values()):
        return True
    return any(host._in_flight for host in registry.hosts.values())


def _seed(registry: FakeRegistry, repos: int, packages: int) -> None:
    for i in range(repos):
        registry.github.add_repo(
            "acme", f"r{i}", {"v1.1.0": OLD + timedelta(days=9), "v1.0.0": OLD}
        )
    for i in range(packages):
        registry.npm.add(f"pkg{i}", {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=30)})


def _token_for(*urls: str, token: str = TOKEN) -> StaticCredentials:
    """``GH_TOKEN`` credentials scoped to each of ``urls``."""
    credentials = [github_credential({"GH_TOKEN": token}, url) for url in urls]
    return StaticCredentials([c for c in credentials if c is not None])


@pytest.mark.anyio
async def test_a_secondary_limit_stops_every_github_request_for_two_seconds_while_npm_goes_on(
    fake_registry: FakeRegistry,
) -> None:
    """403 "secondary rate limit" with Retry-After: 2: no REST or GraphQL request for 2 s.

    One GitHub slot makes the count exact: the refused request alone went out before time moved;
    all of npm's requests were answered meanwhile. Every GitHub request then succeeds.
    """
    _seed(fake_registry, repos=10, packages=20)
    github = fake_registry.host("github")
    base = fake_registry.url("github")
    github.fail_next(1, 403, {"Retry-After": "2", "x-ratelimit-remaining": "4000"}, SECONDARY)
    time = FakeTime(busy=lambda: _busy(fake_registry, fetcher))
    snapshots: list[tuple[float, int, int]] = []
    time.on_advance = lambda old, _new: snapshots.append(
        (old, github.requests, fake_registry.host("npm").requests)
    )
    statuses: list[int] = []
    async with make_client() as client:
        fetcher = Fetcher(
            client,
            host_limits={_hostport(base): 1},
            timer=time.timer(),
            credentials=_token_for(base),
        )

        async def get(url: str, repo: int = -1) -> None:
            # A query per repository: identical POSTs would share one request (single-flight).
            body = QUERY.replace(b"r0", f"r{repo}".encode()) if repo >= 0 else None
            method = "GET" if body is None else "POST"
            statuses.append((await fetcher(url, method=method, body=body)).status)

        async with time.driving(), anyio.create_task_group() as tg:
            for i in range(10):
                tg.start_soon(get, f"{base}/repos/acme/r{i}/tags?per_page=100")
                tg.start_soon(get, github_graphql_url(base), i)
            for i in range(20):
                tg.start_soon(get, f"{fake_registry.url('npm')}/pkg{i}")
    assert statuses == [200] * 40
    assert snapshots == [(0.0, 1, 20)]  # time moved once: the cool-down's end
    assert time.t == 2.0
    assert github.requests == 21  # 10 REST + 10 GraphQL + the retry of the refused one
    stats = fetcher.stats[_hostport(base)]
    assert (stats.rate_limited, stats.retries, stats.cooldown_seconds) == (1, 1, 2.0)
    assert fetcher.stats[_hostport(fake_registry.url("npm"))].rate_limited == 0


@pytest.mark.anyio
async def test_rest_and_graphql_share_one_limit_on_github_enterprise_server(
    fake_registry: FakeRegistry,
) -> None:
    """``/api/v3/…`` and ``/api/graphql`` of one GHES host never exceed its one limit together."""
    _seed(fake_registry, repos=12, packages=0)
    fake_registry.set_latency(0.02)
    github = fake_registry.host("github")
    base = f"{fake_registry.url('github')}/api/v3"
    graphql = github_graphql_url(base)
    assert graphql == f"{fake_registry.url('github')}/api/graphql"
    async with make_client() as client:
        # The token goes to the REST base and to GraphQL beside it (``RegistryAccess`` does so).
        fetcher = Fetcher(
            client,
            host_limits={_hostport(fake_registry.url("github")): 3},
            credentials=_token_for(base, graphql),
        )
        statuses: list[int] = []

        async def rest(i: int) -> None:
            statuses.append((await fetcher(f"{base}/repos/acme/r{i}/tags")).status)

        async def query(i: int) -> None:
            body = QUERY.replace(b"r0", f"r{i}".encode())
            statuses.append((await fetcher(graphql, method="POST", body=body)).status)

        async with anyio.create_task_group() as tg:
            for i in range(12):
                tg.start_soon(rest, i)
                tg.start_soon(query, i)
    assert statuses == [200] * 24
    routes = github.requests_by_route
    assert routes["POST /api/graphql"] == 12
    assert sum(n for r, n in routes.items() if r.startswith("GET /api/v3/")) == 12
    assert github.peak_concurrency == 3
    assert fetcher.stats[_hostport(fake_registry.url("github"))].max_concurrency == 3


@pytest.mark.anyio
@pytest.mark.parametrize(
    ("limits", "expected"), [({}, DEFAULT_HOST_CONCURRENCY), ({"api.github.com": 8}, 8)]
)
async def test_api_github_com_rest_and_graphql_share_one_limit(
    limits: dict[str, int], expected: int
) -> None:
    """github.com: 40 REST and 40 GraphQL requests at once; at most 16 (or the override) fly."""
    flying = 0
    peak = 0

    async def answer(request: httpx.Request) -> httpx.Response:
        nonlocal flying, peak
        flying += 1
        peak = max(peak, flying)
        await anyio.sleep(0.005)
        flying -= 1
        return httpx.Response(200, json={"data": {}} if request.method == "POST" else [])

    with respx.mock(assert_all_called=True) as router:
        router.get(url__startswith="https://api.github.com/repos/").mock(side_effect=answer)
        router.post("https://api.github.com/graphql").mock(side_effect=answer)
        async with httpx.AsyncClient() as client:
            fetcher = Fetcher(client, host_limits=limits)
            async with anyio.create_task_group() as tg:
                for i in range(40):
                    tg.start_soon(fetcher, f"https://api.github.com/repos/o/r{i}/tags")
                    tg.start_soon(
                        functools.partial(
                            fetcher,
                            "https://api.github.com/graphql",
                            method="POST",
                            body=QUERY.replace(b"r0", f"r{i}".encode()),  # one query each
                        )
                    )
    assert peak == expected
    assert fetcher.stats["api.github.com"].max_concurrency == expected
    assert fetcher.stats["api.github.com"].requests == 80


@pytest.mark.anyio
async def test_github_cache_keys_carry_the_token_identity_never_the_token(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Anonymous and tokened answers live apart in the cache; no token byte is stored."""
    _seed(fake_registry, repos=1, packages=0)
    base = fake_registry.url("github")
    github = fake_registry.host("github")
    path = tmp_path / "cache.sqlite3"
    with Cache.open(path) as cache:
        async with make_client() as client:
            anonymous = Fetcher(client, cache=cache)
            tokened = Fetcher(client, cache=cache, credentials=_token_for(base))
            other = _token_for(base, token="gh-STANDIN-other")  # noqa: S106 - a stand-in
            second = Fetcher(client, cache=cache, credentials=other)
            for fetcher in (anonymous, tokened, second, anonymous, tokened, second):
                await github_tags.get_catalog(fetcher, base, "acme/r0")
    # One request per identity: each reuses only its own stored page afterwards (the anonymous
    # one reads REST; with a token, the tag history comes from GraphQL).
    assert github.requests_by_route["GET /repos/acme/r0/tags"] == 1
    assert github.requests_by_route["POST /graphql"] == 2
    assert github.authorized_requests == 2
    data = path.read_bytes()
    assert TOKEN.encode() not in data
    assert b"gh-STANDIN-other" not in data
    with sqlite3.connect(path) as conn:
        keys = [row[0] for row in conn.execute("SELECT key FROM http_entries")]
    # Each identity's answers under its own credential digest (the key's last field for a GET,
    # the one before the body digest for a POST).
    identities = {k.split("|")[4] for k in keys if "/repos/acme/r0/tags" in k or "/graphql" in k}
    assert len(identities) == 3
    assert not any(TOKEN in k for k in keys)


# --- whole runs -------------------------------------------------------------------------------


def _workflow_repo(root: Path, repos: int, packages: int) -> Path:
    workflows = root / ".github" / "workflows"
    workflows.mkdir(parents=True)
    steps = "".join(f"      - uses: acme/r{i}@v1.0.0\n" for i in range(repos))
    (workflows / "ci.yml").write_text(
        f"on: push\njobs:\n  test:\n    runs-on: ubuntu-latest\n    steps:\n{steps}"
    )
    (root / "package.json").write_text(
        json.dumps({"dependencies": {f"pkg{i}": "1.0.0" for i in range(packages)}})
    )
    return root


def _run(
    registry: FakeRegistry, target: Path, *extra: str, env: dict[str, str] | None = None
) -> Result:
    args = [
        "run",
        str(target),
        "--format",
        "json",
        "--registry",
        f"npm={registry.url('npm')}",
        "--registry",
        f"github={registry.url('github')}",
        "--host-concurrency",
        f"{_hostport(registry.url('github'))}=1",
        *extra,
    ]
    return runner.invoke(app, args, env=env or {}, catch_exceptions=False)


def test_a_used_up_primary_limit_fails_the_github_rows_fast_naming_the_reset(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Two anonymous requests allowed, resetting in two hours: the other rows fail at once.

    The second answer says ``x-ratelimit-remaining: 0``: no GitHub request follows it, every
    later GitHub row names the reset time and whose budget it was; npm's rows are unaffected.
    The run warned up front, once, that it had no token.
    """
    _seed(fake_registry, repos=6, packages=3)
    fake_registry.github.anonymous_limit = 2
    fake_registry.github.enforce_limit = True
    fake_registry.github.reset = int(real_time.time()) + 7200
    target = _workflow_repo(tmp_path / "repo", repos=6, packages=3)
    result = _run(fake_registry, target)
    assert result.exit_code == 3, result.output
    report = json.loads(result.stdout)
    rows = report["repositories"][0]["dependencies"]
    github_rows = [r for r in rows if r["datasource"] == "github-tags"]
    npm_rows = [r for r in rows if r["datasource"] == "npm"]
    assert len(github_rows) == 6
    assert {r["status"] for r in npm_rows} == {"outdated"}
    failed = [r for r in github_rows if r["status"] == "error"]
    assert len(failed) == 4  # two lookups were answered before the budget was gone
    reset = datetime.fromtimestamp(fake_registry.github.reset, UTC)
    # The date is named too when the reset falls on another UTC day (a run after 22:00).
    same_day = reset.date() == datetime.now(UTC).date()
    until = f"{reset:%H:%MZ}" if same_day else f"{reset:%Y-%m-%d %H:%MZ}"
    host = _hostport(fake_registry.url("github"))
    for row in failed:
        assert row["reason"].startswith(
            f"{host}: the rate limit for unauthenticated requests (2 per window, "
            f"x-ratelimit-limit) is used up until {until} (x-ratelimit-reset, in "
        )
        assert row["reason"].endswith("its requests fail until then without being sent")
    assert fake_registry.host("github").requests == 2
    budget = report["hosts"][host]["rateLimits"]["core"]
    assert budget == {
        "limit": 2,
        "remaining": 0,
        "resetAt": reset.isoformat().replace("+00:00", "Z"),
    }
    warnings = [line for line in result.stderr.splitlines() if "GitHub token" in line]
    expected = (
        "patchula: warning: no GitHub token (GH_TOKEN or GITHUB_TOKEN): requests to 127.0.0.1 "
        "are anonymous, within whatever limit that server sets; set GH_TOKEN or GITHUB_TOKEN "
        "(e.g. GH_TOKEN=$(gh auth token))"
    )
    assert warnings == [expected]


def test_the_table_groups_the_rows_a_used_up_limit_failed_into_one_line_naming_the_reset(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Piped table: the rows the used-up limit failed are one line (reset, count), not rows.

    The summary line names it too; the rows answered before the budget was gone are shown.
    """
    _seed(fake_registry, repos=6, packages=1)
    fake_registry.github.anonymous_limit = 2
    fake_registry.github.enforce_limit = True
    fake_registry.github.reset = int(real_time.time()) + 7200
    target = _workflow_repo(tmp_path / "repo", repos=6, packages=1)
    result = _run(fake_registry, target, "--format", "table")
    assert result.exit_code == 3, result.output
    reset = datetime.fromtimestamp(fake_registry.github.reset, UTC)
    host = _hostport(fake_registry.url("github"))
    # A reset on another UTC day is named with its date (the governor's ``used_up``).
    shown = (
        f"{reset:%H:%MZ}"
        if reset.date() == datetime.now(UTC).date()
        else f"{reset:%Y-%m-%d %H:%MZ}"
    )
    line = (
        f"{host} rate limit for unauthenticated requests (2 per window, x-ratelimit-limit) "
        f"used up until {shown}: 4 lookups not done"
    )
    lines = result.stdout.splitlines()
    assert f"  {line}" in lines
    assert lines[-1].endswith(f"; {line}")
    assert "is used up until" not in result.stdout  # no row of them is shown
    assert "pkg0" in result.stdout  # npm's row is unaffected


def test_no_token_warning_with_a_token_and_the_token_never_shows(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """With GH_TOKEN the run does not warn, the budget shows under -v, and no output has it."""
    _seed(fake_registry, repos=2, packages=1)
    fake_registry.github.rate_limit = 100
    target = _workflow_repo(tmp_path / "repo", repos=2, packages=1)
    result = _run(fake_registry, target, "-v", "--format", "table", env={"GH_TOKEN": TOKEN})
    assert result.exit_code in {0, 1}, result.output
    assert "GitHub token" not in result.stderr
    host = _hostport(fake_registry.url("github"))
    # With a token the tag histories come from GraphQL, REST reads the rest: either budget.
    assert re.search(rf"{re.escape(host)}: rate limit \((core|graphql)\) ", result.stdout)
    assert "of 100 left, resets " in result.stdout
    assert TOKEN not in result.stdout + result.stderr
    assert fake_registry.host("github").authorized_requests == fake_registry.host("github").requests


def test_a_run_without_github_lookups_does_not_warn(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A run of npm lookups only says nothing about GitHub tokens."""
    _seed(fake_registry, repos=0, packages=2)
    target = _workflow_repo(tmp_path / "repo", repos=0, packages=2)
    result = _run(fake_registry, target)
    assert "GitHub" not in result.stderr
    assert fake_registry.host("github").requests == 0


def test_the_warning_names_the_github_com_budget() -> None:
    """For api.github.com the warning names 60 requests an hour and 5,000 with a token."""
    from patchula.credentials import RegistryAccess  # noqa: PLC0415 - test-local
    from patchula.settings import Settings  # noqa: PLC0415 - test-local

    access = RegistryAccess(Settings(), env={})
    assert access.github_budget_warning() == (
        "no GitHub token (GH_TOKEN or GITHUB_TOKEN): api.github.com allows 60 requests an hour "
        "without one, so GitHub lookups past that fail (naming the reset time) until the hour "
        "is over; set GH_TOKEN or GITHUB_TOKEN (e.g. GH_TOKEN=$(gh auth token)) for 5,000 "
        "requests an hour"
    )
    assert RegistryAccess(Settings(), env={"GITHUB_TOKEN": TOKEN}).github_budget_warning() is None


def test_github_enterprise_server_by_github_api_url(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``GITHUB_API_URL=…/api/v3`` with a token: every request under it, authorised, no warning."""
    _seed(fake_registry, repos=2, packages=0)
    target = _workflow_repo(tmp_path / "repo", repos=2, packages=0)
    env = {"GITHUB_API_URL": f"{fake_registry.url('github')}/api/v3", "GITHUB_TOKEN": TOKEN}
    result = runner.invoke(app, ["run", str(target), "--format", "json"], env=env)
    assert result.exit_code in {0, 1}, result.output
    github = fake_registry.host("github")
    assert github.requests > 0
    assert all(
        route.startswith("GET /api/v3/repos/acme/") or route == "POST /api/graphql"
        for route in github.requests_by_route
    )
    assert github.authorized_requests == github.requests
    assert "GitHub token" not in result.stderr
    assert TOKEN not in result.stdout + result.stderr
