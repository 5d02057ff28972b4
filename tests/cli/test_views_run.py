"""Catalog views end to end: ``patchula run`` twice against the fake registry.

Every host answers with neither validators nor freshness (``Cache-Control: max-age=0``, no
ETag or Last-Modified), as the proxied registries issue 15 measured: without views every run
fetches every document again. Run times are driven with ``--now`` relative to the first run's
``fetchedAt`` (the fetch facade stamps catalogs with the real time).
"""

from __future__ import annotations

import base64
import json
import sqlite3
from contextlib import closing
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

runner = CliRunner()
OLD = datetime(2025, 1, 1, tzinfo=UTC)
# Test stand-ins for registry credentials, never real secrets.
USER, PASSWORD = "ci", "STANDIN-npm-password"


def _validator_free(registry: FakeRegistry) -> None:
    for host in registry.hosts.values():
        host.validators = False
        host.cache_control = "max-age=0"


def _npm_checkout(root: Path, registry: FakeRegistry) -> Path:
    for name in ("pkg-1a", "pkg-1b", "pkg-2"):
        registry.npm.add(name, {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=30)})
    repo = root / "repo"
    repo.mkdir()
    deps = {"pkg-1a": "1.0.0", "pkg-1b": "1.0.0", "pkg-2": "1.0.0"}
    (repo / "package.json").write_text(json.dumps({"dependencies": deps}))
    return repo


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(app, ["run", "--format", "json", *args], env=env, catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout), result.stderr


def _rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [row for repo in report["repositories"] for row in repo["dependencies"]]


def _catalogs(report: dict[str, Any]) -> dict[str, tuple[bool, str]]:
    """Per dependency name: (``reused``, ``fetchedAt``) of its catalog."""
    return {
        row["name"]: (
            row["metadata"]["lookup"]["catalog"]["reused"],
            row["metadata"]["lookup"]["catalog"]["fetchedAt"],
        )
        for row in _rows(report)
        if row["metadata"]["lookup"]["catalog"] is not None
    }


def _at(stamp: str, delta: timedelta) -> str:
    return (datetime.fromisoformat(stamp) + delta).isoformat()


def _requests(registry: FakeRegistry) -> int:
    return sum(host.requests for host in registry.hosts.values())


class _Npm:
    """Runs of one npm checkout against one cache file."""

    def __init__(self, registry: FakeRegistry, tmp_path: Path, *more: str) -> None:
        self.registry = registry
        self.repo = _npm_checkout(tmp_path, registry)
        self.args = [str(self.repo), "--cache", str(tmp_path / "c.db")]
        self.args += ["--registry", f"npm={registry.url('npm')}", *more]

    def run(self, *more: str) -> tuple[dict[str, Any], int, set[str]]:
        """Run; return the report, the requests sent and the routes asked."""
        self.registry.reset_stats()
        code, report, _ = _run(*self.args, *more)
        assert code == 0
        host = self.registry.host("npm")
        return report, _requests(self.registry), set(host.requests_by_route)


@pytest.fixture
def npm(fake_registry: FakeRegistry, tmp_path: Path) -> _Npm:
    """Three npm packages on a validator-free fake registry, in a checkout with one cache."""
    _validator_free(fake_registry)
    return _Npm(fake_registry, tmp_path)


def test_a_second_run_inside_the_window_sends_nothing_and_says_reused(npm: _Npm) -> None:
    """``--min-release-age 3d``: 0 requests, ``reused`` with the first run's ``fetchedAt``.

    23 h 59 m after the fetch it still reuses; at 24 h (strict) it fetches again.
    """
    first, sent, _ = npm.run("--min-release-age", "3d")
    assert sent == 3
    catalogs = _catalogs(first)
    assert {reused for reused, _ in catalogs.values()} == {False}
    oldest = min(stamp for _, stamp in catalogs.values())
    second, sent, _ = npm.run(
        "--min-release-age", "3d", "--now", _at(oldest, timedelta(hours=23, minutes=59))
    )
    assert sent == 0
    assert _catalogs(second) == {name: (True, stamp) for name, (_, stamp) in catalogs.items()}
    assert second["cache"]["viewHits"] == 3
    assert [r["status"] for r in _rows(second)] == [r["status"] for r in _rows(first)]
    # Exactly 24 h after the oldest fetch, that view has expired (strict); later ones have not.
    third, sent, routes = npm.run(
        "--min-release-age", "3d", "--now", _at(oldest, timedelta(hours=24))
    )
    expired = {name for name, (_, stamp) in catalogs.items() if stamp == oldest}
    assert routes == {f"GET /{name}" for name in expired}
    assert {n for n, (reused, _) in _catalogs(third).items() if not reused} == expired
    newest = max(stamp for _, stamp in catalogs.values())
    fourth, sent, _ = npm.run("--min-release-age", "3d", "--now", _at(newest, timedelta(hours=24)))
    assert sent == 3 - len(expired)  # the expired ones were fetched again by the third run
    assert fourth["cache"]["viewHits"] == len(expired)


def test_a_two_hour_wait_reuses_for_one_hour(npm: _Npm) -> None:
    """At ``2h`` the window is 1 h: 59 minutes reuse, 60 minutes fetch again."""
    first, _, _ = npm.run("--min-release-age", "2h")
    stamps = [stamp for _, stamp in _catalogs(first).values()]
    _, sent, _ = npm.run(
        "--min-release-age", "2h", "--now", _at(min(stamps), timedelta(minutes=59))
    )
    assert sent == 0
    _, sent, _ = npm.run("--min-release-age", "2h", "--now", _at(max(stamps), timedelta(hours=1)))
    assert sent == 3


def test_without_a_wait_every_request_is_sent_again(npm: _Npm) -> None:
    """A zero wait keeps the HTTP rules: no view is written or read."""
    npm.run("--min-release-age", "3d")
    report, sent, _ = npm.run("--min-release-age", "0")
    assert sent == 3
    assert report["cache"]["viewHits"] == 0
    npm.run("--min-release-age", "0")
    assert {reused for reused, _ in _catalogs(report).values()} == {False}


def test_recheck_bypasses_reuse_for_all_or_only_the_matching_dependencies(npm: _Npm) -> None:
    """``--recheck`` sends every request; ``--recheck 'pkg-1*'`` only the two matching ones."""
    first, _, _ = npm.run("--min-release-age", "3d")
    at = _at(_catalogs(first)["pkg-1a"][1], timedelta(hours=1))
    report, sent, _ = npm.run("--min-release-age", "3d", "--now", at, "--recheck")
    assert sent == 3
    assert report["cache"]["viewHits"] == 0
    report, sent, routes = npm.run("--min-release-age", "3d", "--now", at, "--recheck", "pkg-1*")
    assert (sent, routes) == (2, {"GET /pkg-1a", "GET /pkg-1b"})
    assert {name: reused for name, (reused, _) in _catalogs(report).items()} == {
        "pkg-1a": False,
        "pkg-1b": False,
        "pkg-2": True,
    }


def test_a_recheck_pattern_that_matches_nothing_is_a_warning(npm: _Npm) -> None:
    """``--recheck .`` (meant as "this checkout") matches no package: said on stderr."""
    npm.registry.reset_stats()
    code, _, stderr = _run(*npm.args, "--min-release-age", "3d", "--recheck", ".")
    assert code == 0
    assert "--recheck '.' matched no dependency of this run" in stderr
    _, _, stderr = _run(*npm.args, "--min-release-age", "3d", "--recheck", "pkg-2")
    assert "matched no dependency" not in stderr


def test_a_view_stamped_in_the_future_is_revalidated(npm: _Npm) -> None:
    """A run whose time is before the view's fetch time fetches again."""
    first, _, _ = npm.run("--min-release-age", "3d")
    before = _at(_catalogs(first)["pkg-1a"][1], -timedelta(minutes=1))
    report, sent, _ = npm.run("--min-release-age", "3d", "--now", before)
    assert sent == 3
    assert report["cache"]["viewHits"] == 0


def test_a_held_back_release_becomes_eligible_later_without_a_request(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Policy is evaluated at the run's time: inside the window the held-back minor is proposed."""
    _validator_free(fake_registry)
    now = datetime.now(UTC)
    fake_registry.npm.add("fresh", {"1.0.0": OLD, "1.1.0": now - timedelta(days=3, hours=-2)})
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "package.json").write_text(json.dumps({"dependencies": {"fresh": "1.0.0"}}))
    args = [str(repo), "--cache", str(tmp_path / "c.db"), "--min-release-age", "3d"]
    args += ["--registry", f"npm={fake_registry.url('npm')}"]
    _, first, _ = _run(*args)
    (row,) = _rows(first)
    assert (row["status"], row["eligible"]) == ("held-back", None)
    assert [h["version"] for h in row["heldBack"]] == ["1.1.0"]
    fetched = row["metadata"]["lookup"]["catalog"]["fetchedAt"]
    fake_registry.reset_stats()
    _, later, _ = _run(*args, "--now", _at(fetched, timedelta(hours=3)))
    (row,) = _rows(later)
    assert _requests(fake_registry) == 0
    assert (row["status"], row["eligible"], row["heldBack"]) == ("outdated", "1.1.0", [])
    assert row["metadata"]["lookup"]["catalog"] == {
        **first["repositories"][0]["dependencies"][0]["metadata"]["lookup"]["catalog"],
        "reused": True,
    }


def _views(path: Path) -> list[tuple[str, str]]:
    with closing(sqlite3.connect(path)) as conn:
        return conn.execute(
            "SELECT datasource, package FROM catalog_views ORDER BY package"
        ).fetchall()


def test_a_failed_lookup_stores_no_view_and_a_damaged_view_is_a_miss(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A 404 leaves no view (asked again next run); a damaged view row is fetched again."""
    _validator_free(fake_registry)
    repo = _npm_checkout(tmp_path, fake_registry)
    deps = {"pkg-1a": "1.0.0", "pkg-2": "1.0.0", "missing-pkg": "1.0.0"}
    (repo / "package.json").write_text(json.dumps({"dependencies": deps}))
    cache = tmp_path / "c.db"
    args = [str(repo), "--cache", str(cache), "--min-release-age", "3d"]
    args += ["--registry", f"npm={fake_registry.url('npm')}"]
    code, first, _ = _run(*args)
    assert code == 3
    assert _views(cache) == [("npm", "pkg-1a"), ("npm", "pkg-2")]
    with closing(sqlite3.connect(cache)) as conn, conn:
        conn.execute("UPDATE catalog_views SET body = x'28b52ffd00' WHERE package = 'pkg-2'")
    at = _at(_catalogs(first)["pkg-1a"][1], timedelta(hours=1))
    fake_registry.reset_stats()
    code, report, _ = _run(*args, "--now", at)
    assert code == 3
    assert set(fake_registry.host("npm").requests_by_route) == {"GET /missing-pkg", "GET /pkg-2"}
    assert _catalogs(report)["pkg-1a"][0] is True
    assert _catalogs(report)["pkg-2"][0] is False
    assert report["cache"]["corruptBodies"] == 1
    assert _views(cache) == [("npm", "pkg-1a"), ("npm", "pkg-2")]  # stored again, intact


@pytest.mark.parametrize("authenticated_first", [True, False])
def test_views_of_an_authenticated_run_are_not_used_anonymously_and_the_other_way_round(
    fake_registry: FakeRegistry, tmp_path: Path, *, authenticated_first: bool
) -> None:
    """A view is scoped to the credential the request would carry (Basic from the URL here)."""
    _validator_free(fake_registry)
    repo = _npm_checkout(tmp_path, fake_registry)
    bare = fake_registry.url("npm")
    with_login = bare.replace("http://", f"http://{USER}:{PASSWORD}@")
    runs = [with_login, bare] if authenticated_first else [bare, with_login]
    base = [str(repo), "--cache", str(tmp_path / "c.db"), "--min-release-age", "3d"]
    _, first, _ = _run(*base, "--registry", f"npm={runs[0]}")
    at = _at(_catalogs(first)["pkg-1a"][1], timedelta(hours=1))
    fake_registry.reset_stats()
    _, second, _ = _run(*base, "--registry", f"npm={runs[1]}", "--now", at)
    npm = fake_registry.host("npm")
    assert npm.requests == 3
    assert npm.authorized_requests == (0 if authenticated_first else 3)
    assert {reused for reused, _ in _catalogs(second).values()} == {False}
    # Each identity reuses its own views.
    fake_registry.reset_stats()
    _, third, _ = _run(*base, "--registry", f"npm={runs[0]}", "--now", at)
    assert npm.requests == 0
    assert {reused for reused, _ in _catalogs(third).values()} == {True}
    with closing(sqlite3.connect(tmp_path / "c.db")) as conn:
        keys = [row[0] for row in conn.execute("SELECT key FROM catalog_views")]
    assert len(keys) == 6
    assert not [k for k in keys if PASSWORD in k or USER in k]
    token = base64.b64encode(f"{USER}:{PASSWORD}".encode()).decode()
    assert not [k for k in keys if token in k]


def _pypi(registry: FakeRegistry, repo: Path) -> list[str]:
    registry.pypi.add("requests", {"2.0.0": OLD, "2.1.0": OLD + timedelta(days=9)})
    (repo / "requirements.txt").write_text("requests==2.0.0\n")
    return ["--registry", f"pypi={registry.url('pypi')}"]


def _crates(registry: FakeRegistry, repo: Path) -> list[str]:
    # No pubtime in the index: the dates come lazily from the crates.io API, and are kept too.
    now = datetime.now(UTC)
    registry.crates.add("serde", {"1.0.0": OLD, "1.1.0": now - timedelta(days=1)}, pubtime=False)
    (repo / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n[dependencies]\nserde = "=1.0.0"\n'
    )
    return [
        *("--registry", f"crates={registry.url('crates-index')}"),
        *("--registry", f"crates-api={registry.url('crates-api')}"),
    ]


def _goproxy(registry: FakeRegistry, repo: Path) -> list[str]:
    registry.goproxy.add("example.com/lib", {"v1.0.0": OLD, "v1.2.0": OLD + timedelta(days=5)})
    (repo / "go.mod").write_text(
        "module example.com/app\n\ngo 1.21\n\nrequire example.com/lib v1.0.0\n"
    )
    return ["--registry", f"goproxy={registry.url('goproxy')}", "--go-freshness-secs", "0"]


def _docker(registry: FakeRegistry, repo: Path) -> list[str]:
    registry.oci.add("acme/app", dict.fromkeys(("1.0", "1.1")))
    host = registry.url("oci").removeprefix("http://")
    (repo / "Dockerfile").write_text(f"FROM {host}/acme/app:1.0\n")
    return ["--registry-freshness-secs", "0"]


def _github(registry: FakeRegistry, repo: Path) -> list[str]:
    registry.github.add_repo(
        "acme", "tools", tags={"v1.0.0": OLD, "v1.1.0": OLD + timedelta(days=3)}
    )
    workflows = repo / ".github" / "workflows"
    workflows.mkdir(parents=True)
    (workflows / "ci.yml").write_text(
        "on: push\njobs:\n  a:\n    runs-on: x\n    steps:\n      - uses: acme/tools@v1.0.0\n"
    )
    return ["--registry", f"github={registry.url('github')}"]


@pytest.mark.parametrize("setup", [_pypi, _crates, _goproxy, _docker, _github])
def test_every_datasource_reuses_its_view_without_any_request(
    fake_registry: FakeRegistry, tmp_path: Path, setup: Any
) -> None:
    """PyPI, crates (with lazy publish times), Go, image tags and GitHub tags reuse a view."""
    _validator_free(fake_registry)
    repo = tmp_path / "repo"
    repo.mkdir()
    args = [str(repo), "--cache", str(tmp_path / "c.db"), "--min-release-age", "3d"]
    args += setup(fake_registry, repo)
    env = {"GH_TOKEN": "STANDIN-gh-token-views", "GITHUB_TOKEN": ""}
    _, first, _ = _run(*args, env=env)
    rows = _rows(first)
    assert rows
    assert [r["status"] for r in rows if r["status"] in {"error", "unknown"}] == []
    assert _requests(fake_registry) > 0
    if setup is _crates:
        assert fake_registry.host("crates-api").requests > 0  # the lazy dates were asked
    stamps = [stamp for _, stamp in _catalogs(first).values()]
    fake_registry.reset_stats()
    _, second, _ = _run(*args, "--now", _at(min(stamps), timedelta(hours=1)), env=env)
    sent = {name: host.requests for name, host in fake_registry.hosts.items() if host.requests}
    assert sent == {}
    assert {reused for reused, _ in _catalogs(second).values()} == {True}
    # The same rows (dates included), but for the ages the reasons give at the later time.
    assert [_verdict(r) for r in _rows(second)] == [_verdict(r) for r in rows]


def _verdict(row: dict[str, Any]) -> dict[str, Any]:
    kept = {k: v for k, v in row.items() if k not in {"metadata", "reason", "heldBack"}}
    return kept | {"heldBack": [(h["version"], h["releasedAt"]) for h in row["heldBack"]]}


def test_a_reused_tag_list_never_freezes_the_digest_a_tag_points_at(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A digest-pinned image: its tag list comes from the view, its tag's digest is read anew."""
    _validator_free(fake_registry)
    pinned = "sha256:" + "a" * 64
    fake_registry.oci.add("acme/app", {"1.0": pinned, "1.1": None})
    repo = tmp_path / "repo"
    repo.mkdir()
    host = fake_registry.url("oci").removeprefix("http://")
    (repo / "Dockerfile").write_text(f"FROM {host}/acme/app:1.0@{pinned}\n")
    args = [str(repo), "--cache", str(tmp_path / "c.db"), "--min-release-age", "3d"]
    args += ["--registry-freshness-secs", "0"]
    _, first, _ = _run(*args)
    (row,) = _rows(first)
    assert row["currentDigest"] == pinned
    moved = "sha256:" + "b" * 64
    fake_registry.oci.add("acme/app", {"1.0": moved, "1.1": None})  # the tag moved meanwhile
    fake_registry.reset_stats()
    at = _at(row["metadata"]["lookup"]["catalog"]["fetchedAt"], timedelta(hours=1))
    _, second, _ = _run(*args, "--now", at)
    (row,) = _rows(second)
    routes = set(fake_registry.host("oci").requests_by_route)
    assert not [r for r in routes if "/tags/list" in r]
    assert "HEAD /v2/acme/app/manifests/1.0" in routes
    assert row["metadata"]["lookup"]["catalog"]["reused"] is True
    assert row["currentDigest"] == moved


def test_the_verbose_cache_line_says_how_many_catalogs_were_reused(npm: _Npm) -> None:
    """``-v`` prints the view hits on the cache line."""
    first, _, _ = npm.run("--min-release-age", "3d")
    at = _at(_catalogs(first)["pkg-1a"][1], timedelta(hours=1))
    args = ["run", *npm.args, "--min-release-age", "3d", "--now", at, "-v"]
    result = runner.invoke(app, args, catch_exceptions=False)
    assert result.exit_code == 0
    assert "0 fetched, 3 catalog views reused;" in result.stdout
    assert "no registry requests were sent" in result.stdout


def test_a_reused_view_that_gains_dates_is_updated_keeping_its_fetch_time(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A Go version dated lazily during a reusing run is kept; the next run asks nothing."""
    _validator_free(fake_registry)
    versions = {"v0.9.0": OLD, "v1.0.0": OLD + timedelta(days=1), "v1.2.0": OLD + timedelta(days=5)}
    fake_registry.goproxy.add("example.com/lib", versions)
    repo = tmp_path / "repo"
    repo.mkdir()
    go_mod = "module example.com/app\n\ngo 1.21\n\nrequire example.com/lib {}\n"
    (repo / "go.mod").write_text(go_mod.format("v1.0.0"))
    args = [str(repo), "--cache", str(tmp_path / "c.db"), "--min-release-age", "3d"]
    args += ["--registry", f"goproxy={fake_registry.url('goproxy')}", "--go-freshness-secs", "0"]
    _, first, _ = _run(*args)
    fetched = _catalogs(first)["example.com/lib"][1]
    at = _at(fetched, timedelta(hours=1))
    (repo / "go.mod").write_text(go_mod.format("v0.9.0"))  # a version not dated yet
    fake_registry.reset_stats()
    _, second, _ = _run(*args, "--now", at)
    goproxy = fake_registry.host("goproxy")
    assert set(goproxy.requests_by_route) == {"GET /example.com/lib/@v/v0.9.0.info"}
    (row,) = [r for r in _rows(second) if r["name"] == "example.com/lib"]
    assert row["currentReleasedAt"] == "2025-01-01T00:00:00Z"
    fake_registry.reset_stats()
    _, third, _ = _run(*args, "--now", at)
    assert goproxy.requests == 0
    assert _catalogs(third)["example.com/lib"] == (True, fetched)
    assert [_verdict(r) for r in _rows(third)] == [_verdict(r) for r in _rows(second)]


def test_offline_uses_a_view_of_any_age(npm: _Npm) -> None:
    """``--offline`` answers from views however old (also with a zero wait), sending nothing."""
    first, _, _ = npm.run("--min-release-age", "3d")
    catalogs = _catalogs(first)
    at = _at(catalogs["pkg-1a"][1], timedelta(days=30))
    for wait in ("3d", "0"):
        report, sent, _ = npm.run("--min-release-age", wait, "--now", at, "--offline")
        assert sent == 0, wait
        assert _catalogs(report) == {name: (True, stamp) for name, (_, stamp) in catalogs.items()}


def test_a_catalog_with_a_caveat_is_not_kept_as_a_view(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A partial failure (the Go new-major check failed) is looked up again next run."""
    _validator_free(fake_registry)
    fake_registry.goproxy.add("example.com/lib", {"v1.0.0": OLD, "v1.2.0": OLD})
    fake_registry.host("goproxy").server_error_next(9, route="GET /example.com/lib/v2/@v/list")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "go.mod").write_text(
        "module example.com/app\n\ngo 1.21\n\nrequire example.com/lib v1.0.0\n"
    )
    cache = tmp_path / "c.db"
    args = [str(repo), "--cache", str(cache), "--min-release-age", "3d"]
    args += ["--registry", f"goproxy={fake_registry.url('goproxy')}", "--go-freshness-secs", "0"]
    args += ["--request-deadline", "2"]  # the probe fails soon instead of backing off 7 s
    _, first, _ = _run(*args)
    (row,) = [r for r in _rows(first) if r["name"] == "example.com/lib"]
    assert "could not check for a newer major" in row["reason"]
    assert [package for _, package in _views(cache)] == []


def test_a_run_answered_from_views_does_not_warn_of_the_github_request_budget(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """No token: the first run warns before its GitHub requests; a run from views sends none."""
    _validator_free(fake_registry)
    repo = tmp_path / "repo"
    repo.mkdir()
    args = [str(repo), "--cache", str(tmp_path / "c.db"), "--min-release-age", "3d"]
    args += _github(fake_registry, repo)
    env = {"GH_TOKEN": "", "GITHUB_TOKEN": ""}
    _, first, stderr = _run(*args, env=env)
    assert "GH_TOKEN" in stderr
    fetched = next(iter(_catalogs(first).values()))[1]
    fake_registry.reset_stats()
    _, second, stderr = _run(*args, "--now", _at(fetched, timedelta(hours=1)), env=env)
    assert fake_registry.host("github").requests == 0
    assert {reused for reused, _ in _catalogs(second).values()} == {True}
    assert "GH_TOKEN" not in stderr


def test_offline_answers_with_http_entries_newer_than_the_view(npm: _Npm) -> None:
    """A zero-wait run refreshed the HTTP entries after the view was kept: offline is as new.

    The trial's case: a 3d run kept views, a release was published, a zero-wait run (which
    reads and stores no view) saw it; ``--offline`` must not answer from the older view.
    """
    first, _, _ = npm.run("--min-release-age", "3d")
    kept = _catalogs(first)["pkg-1a"][1]
    npm.registry.npm.add("pkg-1a", {"1.0.0": OLD, "1.1.0": OLD, "1.2.0": OLD + timedelta(days=31)})
    zero, sent, _ = npm.run()
    assert sent == 3
    assert {r["name"]: r["latest"] for r in _rows(zero)}["pkg-1a"] == "1.2.0"
    refreshed = _catalogs(zero)["pkg-1a"][1]
    assert refreshed > kept
    offline, sent, _ = npm.run("--offline", "--min-release-age", "3d")
    assert sent == 0
    assert {r["name"]: r["latest"] for r in _rows(offline)}["pkg-1a"] == "1.2.0"
    assert _catalogs(offline)["pkg-1a"] == (True, refreshed)
    # The zero-wait run refreshed all three, so no view is as new as its HTTP entries.
    assert offline["cache"]["viewHits"] == 0


def test_recheck_asks_upstream_past_fresh_http_entries(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``max-age=300`` and ETags (npm's own headers): a recheck revalidates what it matches.

    Without ``--recheck`` a fresh entry answers and a release published meanwhile is not seen;
    ``--recheck 'pkg-1a'`` sends that one lookup, conditionally (a 304 where nothing changed).
    """
    npm = _Npm(fake_registry, tmp_path)
    _, sent, _ = npm.run()
    assert sent == 3
    npm.registry.npm.add("pkg-1a", {"1.0.0": OLD, "1.1.0": OLD, "1.2.0": OLD + timedelta(days=31)})
    report, sent, _ = npm.run()
    assert sent == 0
    assert {r["name"]: r["latest"] for r in _rows(report)}["pkg-1a"] == "1.1.0"
    report, sent, routes = npm.run("--recheck", "pkg-1a")
    assert routes == {"GET /pkg-1a"}
    assert {r["name"]: r["latest"] for r in _rows(report)}["pkg-1a"] == "1.2.0"
    assert _catalogs(report)["pkg-1a"][0] is False
    report, sent, routes = npm.run("--recheck")
    assert routes == {"GET /pkg-1a", "GET /pkg-1b", "GET /pkg-2"}
    assert fake_registry.host("npm").not_modified == 3  # sent with the stored ETags


def test_cache_status_counts_views_and_their_ages(npm: _Npm, tmp_path: Path) -> None:
    """``cache status`` shows the stored views per datasource, with their fetch times and ages."""
    npm.run()  # a zero wait keeps no view
    empty = runner.invoke(
        app, ["cache", "status", "--cache", str(tmp_path / "c.db"), "--format", "json"]
    )
    assert json.loads(empty.stdout)["views"]["count"] == 0
    first, _, _ = npm.run("--min-release-age", "3d")
    stamps = sorted(stamp for _, stamp in _catalogs(first).values())
    args = ["cache", "status", "--cache", str(tmp_path / "c.db")]
    result = runner.invoke(app, [*args, "--format", "json"])
    assert result.exit_code == 0
    views = json.loads(result.stdout)["views"]
    assert (views["count"], set(views["by_datasource"])) == (3, {"npm"})
    assert views["by_datasource"]["npm"]["count"] == 3
    assert views["bytes"] > 0
    oldest = datetime.fromisoformat(views["oldest_fetched_at"])
    assert abs(oldest - datetime.fromisoformat(stamps[0]).replace(microsecond=0)) < timedelta(
        seconds=1
    )
    assert 0 <= views["oldest_age_seconds"] < 600
    table = runner.invoke(app, args)
    assert "catalog views   3" in table.stdout
    assert "npm           3, oldest" in table.stdout
