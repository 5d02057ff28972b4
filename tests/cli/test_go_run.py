"""``patchula run`` on a Go module against the fake Go module proxy."""

from __future__ import annotations

import json
from datetime import UTC, datetime
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)

GO_MOD = """module example.com/app

go 1.22

require (
\tgithub.com/BurntSushi/toml v1.3.0
\tgolang.org/x/text v0.14.0 // indirect
\texample.com/pseudo v0.0.0-20240101000000-abcdefabcdef
)

replace example.com/local => ../local
"""


def test_go_module_end_to_end(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """Requires are looked up on the proxy: retracted versions skipped, pseudo-versions compared."""
    fake_registry.goproxy.add(
        "github.com/BurntSushi/toml",
        {"v1.3.0": OLD, "v1.3.2": OLD, "v1.4.0": OLD},
        retracted={"v1.4.0"},
    )
    fake_registry.goproxy.add("golang.org/x/text", {"v0.14.0": OLD, "v0.21.0": OLD})
    fake_registry.goproxy.add("example.com/pseudo", {"v0.1.0": OLD})
    (tmp_path / "go.mod").write_text(GO_MOD)
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(tmp_path),
            "--format",
            "json",
            "--registry",
            f"goproxy={fake_registry.url('goproxy')}",
        ],
        catch_exceptions=False,
    )
    report = json.loads(result.stdout)
    rows = {d["name"]: d for d in report["repositories"][0]["dependencies"]}
    toml = rows["github.com/BurntSushi/toml"]
    assert (toml["current"], toml["latest"], toml["eligible"], toml["updateType"]) == (
        "v1.3.0",
        "v1.3.2",
        "v1.3.2",
        "patch",
    )
    text = rows["golang.org/x/text"]
    assert (text["depType"], text["eligible"], text["updateType"]) == (
        "indirect",
        "v0.21.0",
        "minor",
    )
    pseudo = rows["example.com/pseudo"]
    assert (pseudo["status"], pseudo["eligible"]) == ("outdated", "v0.1.0")
    assert rows["go"]["status"] == "skipped"
    assert result.exit_code == 0
    routes = fake_registry.host("goproxy").requests_by_route
    # list, @latest and .mod for each module; .info only for the dates libyears needs
    assert sorted(r for r in routes if r.endswith(".info")) == [
        "GET /github.com/!burnt!sushi/toml/@v/v1.3.0.info",
        "GET /github.com/!burnt!sushi/toml/@v/v1.3.2.info",  # @latest named the retracted v1.4.0
        "GET /golang.org/x/text/@v/v0.14.0.info",
    ]
    assert fake_registry.host("goproxy").requests == 15  # and a /v2 probe per module
    assert toml["libyears"] == 0.0


def _go_run(fake_registry: FakeRegistry, repo: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    """``patchula run --format json`` of ``repo`` against the fake proxy: exit code and report."""
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(repo),
            "--format",
            "json",
            "--no-cache",
            "--registry",
            f"goproxy={fake_registry.url('goproxy')}",
            *extra,
        ],
        catch_exceptions=False,
    )
    return result.exit_code, json.loads(result.stdout)


def _table(fake_registry: FakeRegistry, repo: Path, *extra: str) -> tuple[int, str]:
    """The default table (no -v) of ``repo`` against the fake proxy: exit code and text."""
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(repo),
            "--no-cache",
            "--registry",
            f"goproxy={fake_registry.url('goproxy')}",
            *extra,
        ],
        catch_exceptions=False,
    )
    return result.exit_code, result.stdout


def test_a_failed_new_major_check_is_a_failed_lookup(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A 500 on the next major's list: the row says so by default, failedLookups 1, exit 3."""
    fake_registry.goproxy.add("gopkg.in/yaml.v2", {"v2.4.0": OLD})
    fake_registry.goproxy.add("gopkg.in/yaml.v3", {"v3.0.1": OLD})
    (tmp_path / "go.mod").write_text("module example.com/app\n\nrequire gopkg.in/yaml.v2 v2.4.0\n")
    route = "GET /gopkg.in/yaml.v3/@v/list"
    fake_registry.host("goproxy").server_error_next(20, 500, route=route)

    code, report = _go_run(fake_registry, tmp_path, "--fail-on", "outdated")

    (row,) = report["repositories"][0]["dependencies"]
    assert row["failedLookup"].startswith("could not check for a newer major (gopkg.in/yaml.v3): ")
    assert "500" in row["failedLookup"]
    assert row["majorAvailable"] is None
    assert report["summary"]["failedLookups"] == 1
    assert code == 3

    fake_registry.host("goproxy").server_error_next(20, 500, route=route)
    code, table = _table(fake_registry, tmp_path)
    assert "could not check for a newer major" in table
    assert "gopkg.in/yaml.v2" in table
    assert code == 3


def test_a_go_new_major_is_a_major_update_like_a_crate_one(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """The newest major path's release is latest and eligible: outdated, major, by default."""
    fake_registry.goproxy.add("github.com/acme/retracty", {"v1.0.0": OLD, "v1.1.0": OLD})
    fake_registry.goproxy.add("github.com/acme/retracty/v2", {"v2.1.0": OLD})
    fake_registry.goproxy.add("github.com/acme/retracty/v3", {"v3.0.0": OLD})
    (tmp_path / "go.mod").write_text(
        "module example.com/app\n\nrequire github.com/acme/retracty v1.1.0\n"
    )

    code, report = _go_run(fake_registry, tmp_path, "--fail-on", "major")

    (row,) = report["repositories"][0]["dependencies"]
    assert (row["status"], row["latest"], row["eligible"], row["updateType"]) == (
        "outdated",
        "v3.0.0",
        "v3.0.0",
        "major",
    )
    assert row["majorAvailable"] == "github.com/acme/retracty/v3 v3.0.0"
    assert row["versionsBehind"] == 2
    assert row["latestReleasedAt"].startswith("2025-01-01T00:00:00")
    assert code == 1
    # Its publish time is read under its own path (for libyears and the release-age policy).
    routes = fake_registry.host("goproxy").requests_by_route
    assert "GET /github.com/acme/retracty/v3/@v/v3.0.0.info" in routes
    code, table = _table(fake_registry, tmp_path)
    assert "new major: github.com/acme/retracty/v3 v3.0.0" in table
    assert code == 0


def test_go_mod_exclude_keeps_a_version_from_being_proposed(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """An excluded version is neither latest nor eligible, and the row names the exclusion."""
    fake_registry.goproxy.add(
        "golang.org/x/text", {"v0.14.0": OLD, "v0.22.0": OLD, "v0.30.0": OLD, "v0.31.0": OLD}
    )
    (tmp_path / "go.mod").write_text(
        "module example.com/app\n\nrequire golang.org/x/text v0.14.0\n\n"
        "replace golang.org/x/text => golang.org/x/text v0.22.0\n\n"
        "exclude golang.org/x/text v0.31.0\n"
    )

    code, report = _go_run(fake_registry, tmp_path)

    (row,) = report["repositories"][0]["dependencies"]
    assert (row["current"], row["latest"], row["eligible"], row["versionsBehind"]) == (
        "v0.22.0",
        "v0.30.0",
        "v0.30.0",
        1,
    )
    assert row["reason"] == "v0.31.0 excluded by an exclude directive in go.mod: not proposed"
    assert code == 0


def test_a_retracted_current_with_nothing_newer_is_outdated(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``retract [v1.2.0, v1.2.1]`` on current v1.2.0: outdated toward v1.1.0, rationale kept."""
    fake_registry.goproxy.add(
        "github.com/acme/retracty",
        {"v1.1.0": OLD, "v1.2.0": OLD, "v1.2.1": OLD},
        go_mod_extra="retract [v1.2.0, v1.2.1] // leaks credentials in logs",
    )
    (tmp_path / "go.mod").write_text(
        "module example.com/app\n\nrequire github.com/acme/retracty v1.2.0\n"
    )

    code, report = _go_run(fake_registry, tmp_path, "--fail-on", "outdated")

    (row,) = report["repositories"][0]["dependencies"]
    assert (row["status"], row["current"], row["latest"], row["eligible"]) == (
        "outdated",
        "v1.2.0",
        "v1.1.0",
        "v1.1.0",
    )
    assert row["reason"] == (
        "current v1.2.0 is retracted: leaks credentials in logs; latest usable is v1.1.0"
    )
    assert code == 1
    code, table = _table(fake_registry, tmp_path)
    assert "is retracted: leaks credentials in logs" in table


def test_an_excluded_required_version_is_said_not_called_unpublished(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``exclude`` naming the required version: compared as usual, with the go command's rule."""
    fake_registry.goproxy.add("example.com/lib", {"v1.1.0": OLD, "v1.2.0": OLD})
    (tmp_path / "go.mod").write_text(
        "module example.com/app\n\nrequire example.com/lib v1.1.0\n\n"
        "exclude example.com/lib v1.1.0\n"
    )

    _, report = _go_run(fake_registry, tmp_path)

    (row,) = report["repositories"][0]["dependencies"]
    assert (row["status"], row["current"], row["eligible"]) == ("outdated", "v1.1.0", "v1.2.0")
    assert row["reason"] == (
        "v1.1.0 itself is excluded by an exclude directive in go.mod: the go command ignores "
        "this requirement (go.dev/ref/mod#go-mod-file-exclude)"
    )


def test_a_goproxy_list_dates_current_from_the_proxy_that_has_it(tmp_path: Path) -> None:
    """GOPROXY=a,b with the module only on b: current's ``.info`` date is b's, as its list is.

    The first proxy's 404 for the ``.info`` falls through to the second, as ``@v/list`` and
    ``@latest`` do, so the row has both dates and its libyears.
    """
    new = datetime(2026, 1, 1, tzinfo=UTC)
    with FakeRegistry() as first, FakeRegistry() as second:
        second.goproxy.add("example.com/lib", {"v1.0.0": OLD, "v1.1.0": new})
        (tmp_path / "go.mod").write_text(
            "module example.com/app\n\ngo 1.22\n\nrequire example.com/lib v1.0.0\n"
        )
        chain = f"{first.url('goproxy')},{second.url('goproxy')}"
        result = CliRunner(env={"GOPROXY": chain}).invoke(
            app, ["run", str(tmp_path), "--no-cache", "--format", "json"], catch_exceptions=False
        )
        assert first.errors == second.errors == []
        asked = first.host("goproxy").requests_by_route
    assert result.exit_code == 0
    report: dict[str, Any] = json.loads(result.stdout)
    row = next(
        d for d in report["repositories"][0]["dependencies"] if d["name"] == "example.com/lib"
    )
    assert (row["current"], row["latest"], row["status"]) == ("v1.0.0", "v1.1.0", "outdated")
    assert (row["currentReleasedAt"], row["latestReleasedAt"]) == (
        "2025-01-01T00:00:00Z",
        "2026-01-01T00:00:00Z",
    )
    assert row["libyears"] == 0.9993  # 365 days in Julian years
    assert asked["GET /example.com/lib/@v/v1.0.0.info"] == 1  # asked of a first, then of b


def test_incompatible_requires_see_their_newer_major_paths(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Jwt v3.2.2+incompatible → /v5 v5.2.1 and go-redis v6.15.9+incompatible → /v8 v8.11.5."""
    jwt, redis = "github.com/golang-jwt/jwt", "github.com/go-redis/redis"
    fake_registry.goproxy.add(jwt, {"v3.2.0+incompatible": OLD, "v3.2.2+incompatible": OLD})
    fake_registry.goproxy.add(f"{jwt}/v4", {"v4.0.0": OLD, "v4.5.0": OLD})
    fake_registry.goproxy.add(f"{jwt}/v5", {"v5.0.0": OLD, "v5.2.1": OLD})
    fake_registry.goproxy.add(redis, {"v6.15.9+incompatible": OLD})
    fake_registry.goproxy.add(f"{redis}/v7", {"v7.4.1": OLD})
    fake_registry.goproxy.add(f"{redis}/v8", {"v8.11.5": OLD})
    (tmp_path / "go.mod").write_text(
        f"module x\n\ngo 1.21\n\nrequire (\n\t{jwt} v3.2.2+incompatible\n"
        f"\t{redis} v6.15.9+incompatible\n)\n"
    )

    _, report = _go_run(fake_registry, tmp_path)

    rows = {d["name"]: d for d in report["repositories"][0]["dependencies"]}
    assert (rows[jwt]["status"], rows[jwt]["latest"], rows[jwt]["majorAvailable"]) == (
        "outdated",
        "v5.2.1",
        f"{jwt}/v5 v5.2.1",
    )
    assert (rows[redis]["latest"], rows[redis]["majorAvailable"]) == (
        "v8.11.5",
        f"{redis}/v8 v8.11.5",
    )
    _, table = _table(fake_registry, tmp_path)
    assert f"new major: {jwt}/v5 v5.2.1" in table


def test_a_prerelease_only_module_shows_its_prerelease_latest(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Latest agrees with ``@latest`` (v0.1.0-rc.2) and says so, as a prerelease-only PyPI row."""
    fake_registry.goproxy.add("example.com/onlypre", {"v0.1.0-rc.1": OLD, "v0.1.0-rc.2": OLD})
    (tmp_path / "go.mod").write_text(
        "module example.com/app\n\nrequire example.com/onlypre v0.1.0-rc.1\n"
    )

    _, report = _go_run(fake_registry, tmp_path)

    (row,) = report["repositories"][0]["dependencies"]
    assert (row["status"], row["latest"], row["eligible"]) == (
        "outdated",
        "v0.1.0-rc.2",
        "v0.1.0-rc.2",
    )
    assert row["reason"] == "latest v0.1.0-rc.2 is a prerelease: goproxy has no stable release"


def test_a_deprecated_module_is_noted_on_its_row(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``// Deprecated:`` in the latest go.mod is said on the row, as ``go list -m -u`` does."""
    fake_registry.goproxy.add(
        "example.com/depr",
        {"v1.0.0": OLD, "v1.1.0": OLD},
        deprecated="use example.com/depr2 instead.",
    )
    (tmp_path / "go.mod").write_text("module example.com/app\n\nrequire example.com/depr v1.0.0\n")

    _, report = _go_run(fake_registry, tmp_path)

    (row,) = report["repositories"][0]["dependencies"]
    assert (row["status"], row["eligible"]) == ("outdated", "v1.1.0")
    assert row["reason"] == "module example.com/depr is deprecated: use example.com/depr2 instead."
    assert (
        fake_registry.host("goproxy").requests_by_route["GET /example.com/depr/@v/v1.1.0.mod"] == 1
    )


def test_the_toolchain_line_is_looked_up_on_the_go_release_list(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``toolchain go1.21.5`` is compared with go.dev's list; ``go 1.21`` is left, as Renovate."""
    for version in ("1.21.5", "1.21.13", "1.23.4", "1.24rc1"):
        fake_registry.go_dev.add(version)
    (tmp_path / "go.mod").write_text("module example.com/app\n\ngo 1.21\n\ntoolchain go1.21.5\n")

    _, report = _go_run(fake_registry, tmp_path, "--registry", f"go={fake_registry.url('go-dev')}")

    golang, toolchain = report["repositories"][0]["dependencies"]
    assert (golang["depType"], golang["status"]) == ("golang", "skipped")
    assert golang["reason"].startswith("the go directive is the minimum Go language version")
    assert "as Renovate leaves it by default" in golang["reason"]
    assert (
        toolchain["depType"],
        toolchain["status"],
        toolchain["current"],
        toolchain["latest"],
        toolchain["eligible"],
        toolchain["proposed"],
        toolchain["updateType"],
    ) == ("toolchain", "outdated", "1.21.5", "1.23.4", "1.23.4", "go1.23.4", "minor")
    assert toolchain["datasource"] == "go"
    assert fake_registry.host("goproxy").requests == 0
