"""--request-deadline and --max-body-bytes: settings, validation, and a whole run that ends."""

from __future__ import annotations

import json
from collections.abc import Iterator
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from patchula.errors import ConfigError
from patchula.settings import load_settings
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)
runner = CliRunner()


def test_bounds_have_generous_defaults(tmp_path: Path) -> None:
    """Without options a request may take 30 s and a body 256 MiB."""
    settings = load_settings({}, env={}, cwd=tmp_path)
    assert (settings.request_deadline, settings.max_body_bytes) == (30.0, 256 * 1024 * 1024)


def test_bounds_come_from_flags_env_and_config(tmp_path: Path) -> None:
    """The flag beats PATCHULA_REQUEST_DEADLINE; sizes parse with units from any source."""
    (tmp_path / "patchula.toml").write_text('request-deadline = 5\nmax-body-bytes = "64MiB"\n')
    from_config = load_settings({}, env={}, cwd=tmp_path)
    assert (from_config.request_deadline, from_config.max_body_bytes) == (5.0, 64 * 1024**2)
    env = {"PATCHULA_REQUEST_DEADLINE": "2.5", "PATCHULA_MAX_BODY_BYTES": "1MB"}
    from_env = load_settings({}, env=env, cwd=tmp_path)
    assert (from_env.request_deadline, from_env.max_body_bytes) == (2.5, 1_000_000)
    from_flag = load_settings(
        {"request_deadline": 1.0, "max_body_bytes": "2KiB"}, env=env, cwd=tmp_path
    )
    assert (from_flag.request_deadline, from_flag.max_body_bytes) == (1.0, 2048)


@pytest.mark.parametrize(
    ("cli", "source"),
    [
        ({"request_deadline": 0}, "request-deadline"),
        ({"request_deadline": 601}, "request-deadline"),
        ({"max_body_bytes": "0"}, "max-body-bytes"),
        ({"max_body_bytes": "lots"}, "max-body-bytes"),
    ],
)
def test_out_of_range_bounds_are_configuration_errors(
    tmp_path: Path, cli: dict[str, object], source: str
) -> None:
    """A deadline outside (0, 600] s or a body bound below 1 byte is refused, naming the option."""
    with pytest.raises(ConfigError, match=source):
        load_settings(cli, env={}, cwd=tmp_path)


@pytest.fixture
def registry() -> Iterator[FakeRegistry]:
    """The fake registry with npm packages ``drips`` and ``fine``."""
    with FakeRegistry() as fake:
        for name in ("drips", "fine"):
            fake.npm.add(name, {"1.0.0": OLD, "1.1.0": OLD + timedelta(days=30)})
        yield fake
        assert fake.errors == []


def test_a_dripping_registry_ends_the_run_at_the_deadline(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    """A packument dripping 1 byte/s is an error row naming the deadline; the rest is right."""
    npm = registry.host("npm")
    npm.drip_next(100, 1.0, route="GET /drips")
    (tmp_path / "package.json").write_text(
        json.dumps({"dependencies": {"drips": "1.0.0", "fine": "1.0.0"}})
    )
    result = runner.invoke(
        app,
        [
            "run",
            str(tmp_path),
            "--no-cache",
            "--registry",
            f"npm={npm.url}",
            "--request-deadline",
            "1",
            "--format",
            "json",
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 3
    rows = {
        r["packageName"]: r for r in json.loads(result.stdout)["repositories"][0]["dependencies"]
    }
    assert (rows["fine"]["status"], rows["fine"]["latest"]) == ("outdated", "1.1.0")
    assert rows["drips"]["status"] == "error"
    assert "within 1 s (deadline)" in rows["drips"]["reason"]
    assert npm.requests_by_route["GET /drips"] == 1


def test_max_body_bytes_fails_only_the_oversized_lookup(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    """--max-body-bytes 64KiB: a 1 MiB packument is an error row naming the bound; exit 3."""
    npm = registry.host("npm")
    npm.huge_next(5, 1024 * 1024, route="GET /drips")
    (tmp_path / "package.json").write_text(
        json.dumps({"dependencies": {"drips": "1.0.0", "fine": "1.0.0"}})
    )
    result = runner.invoke(
        app,
        [
            *("run", str(tmp_path), "--no-cache", "--registry", f"npm={npm.url}"),
            *("--max-body-bytes", "64KiB", "--format", "json"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 3
    rows = {
        r["packageName"]: r for r in json.loads(result.stdout)["repositories"][0]["dependencies"]
    }
    assert rows["fine"]["status"] == "outdated"
    assert "Content-Length 1048576 over the 64 KiB limit" in rows["drips"]["reason"]


def test_reads_may_last_as_long_as_the_deadline(
    registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """--request-deadline 120: no per-read timeout shorter than the deadline cuts an attempt."""
    import httpx  # noqa: PLC0415 - only this test inspects the client

    from patchula.http import fetcher  # noqa: PLC0415
    from patchula.http.fetcher import make_client  # noqa: PLC0415

    made: list[httpx.Timeout] = []
    real = make_client

    def spy(timeout: float = 30.0) -> httpx.AsyncClient:
        client = real(timeout)
        made.append(client.timeout)
        return client

    # The fetcher makes the run's client when it sends the first request.
    monkeypatch.setattr(fetcher, "make_client", spy)
    (tmp_path / "package.json").write_text(json.dumps({"dependencies": {"fine": "1.0.0"}}))
    args = ["run", str(tmp_path), "--no-cache", "--registry", f"npm={registry.url('npm')}"]
    result = runner.invoke(app, [*args, "--request-deadline", "120"], catch_exceptions=False)
    assert result.exit_code == 0
    assert [(t.read, t.connect) for t in made] == [(120.0, 10.0)]


def test_a_host_that_sent_headers_is_never_unreachable_in_the_run(
    registry: FakeRegistry, tmp_path: Path
) -> None:
    """Six packuments whose headers come at once and bodies drip, two at a time, 0.5 s each.

    Three deadlines pass in a row: those rows name the deadline, the other three say the host
    is too slow, none calls it unreachable, and -v counts every request's 2xx answer (the
    tester's run said "no HTTP answer").
    """
    npm = registry.host("npm")
    names = [f"drip{i}" for i in range(6)]
    for name in names:
        registry.npm.add(name, {"1.0.0": OLD})
    npm.drip_next(6, 1.0)
    (tmp_path / "package.json").write_text(
        json.dumps({"dependencies": dict.fromkeys(names, "1.0.0")})
    )
    host = npm.url.removeprefix("http://")
    result = runner.invoke(
        app,
        [
            *("run", str(tmp_path), "--no-cache", "--registry", f"npm={npm.url}", "-v"),
            *("--request-deadline", "0.5", "--host-concurrency", f"{host}=2"),
        ],
        catch_exceptions=False,
    )
    assert result.exit_code == 3
    assert "unreachable" not in result.output
    assert result.output.count(f"no complete answer from {host} within 0.5 s (deadline)") == 3
    assert (
        f"{host} too slow (3 requests in a row ran out of the 0.5 s deadline): 3 lookups not done"
    ) in result.output
    sent = npm.requests
    assert 3 <= sent <= 4  # a wave of 2, then the slots the first two freed
    assert f"{host}: {sent} requests (2xx: {sent}); " in result.output
    assert "errors 6, " in result.output
