"""End to end: private registries through every credential source, and no secret ever shows."""

from __future__ import annotations

import base64
import json
import logging
import os
import socket
from collections.abc import Iterator
from datetime import UTC, datetime
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry
from tests.fake_registry.base import VirtualHost
from tests.fake_registry.npm import Npm

OLD = datetime(2025, 1, 1, tzinfo=UTC)

# Stand-ins planted in every source; none is a real credential.
SECRETS = {
    "user_npmrc": "STANDIN-user-npmrc-a1",
    "checkout_npmrc": "STANDIN-checkout-npmrc-b2",
    "env_expansion": "STANDIN-env-expansion-c3",
    "npm_config_registry": "STANDIN-npm-config-registry-d4",
    "pip_index_url": "STANDIN-pip-index-url-e5",
    "pip_conf": "STANDIN-pip-conf-f6",
    "registry_flag": "STANDIN-registry-flag-g7",
    "patchula_registry": "STANDIN-patchula-registry-h8",
    "config_registries": "STANDIN-config-registries-i9",
    "netrc": "STANDIN-netrc-j10",
    "github_token": "STANDIN-github-token-k11",
    "query_token": "STANDIN-query-token-l12",
}


def _basic(user: str, password: str) -> str:
    return "Basic " + base64.b64encode(f"{user}:{password}".encode()).decode()


def _encodings(secret: str) -> list[str]:
    """The secret and the forms it travels in (base64 of Basic auth pairs)."""
    users = ("npmuser", "pyuser", "gouser", "nuser")
    return [secret, *(base64.b64encode(f"{u}:{secret}".encode()).decode() for u in users)]


@pytest.fixture
def private_hosts() -> Iterator[dict[str, tuple[VirtualHost, Npm]]]:
    """Three private npm registries on their own loopback ports (acme, netrc, bad)."""
    made: dict[str, tuple[VirtualHost, Npm]] = {}
    try:
        for name in ("acme", "netrc", "bad"):
            host = VirtualHost(f"npm-{name}")
            npm = Npm(host.url)
            npm.add(f"@{name}/lib", {"1.0.0": OLD, "1.1.0": OLD})
            host.handler = npm.handle
            host.start()
            made[name] = (host, npm)
        yield made
    finally:
        for host, _ in made.values():
            host.stop()
        errors = [e for host, _ in made.values() for e in host.errors]
        assert not errors


def _closed_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def _checkout(root: Path, hosts: dict[str, tuple[VirtualHost, Npm]]) -> Path:
    repo = root / "repo"
    repo.mkdir()
    acme, bad = hosts["acme"][0].url, hosts["bad"][0].url
    (repo / ".npmrc").write_text(
        f"@acme:registry={acme}/\n"
        f"{acme.removeprefix('http:')}/:_authToken=${{ACME_TOKEN}}\n"
        f"@bad:registry={bad}/\n"
        f"{bad.removeprefix('http:')}/:_authToken={SECRETS['checkout_npmrc']}\n"
    )
    (repo / "package.json").write_text(
        json.dumps(
            {
                "dependencies": {
                    "left-pad": "^1.0.0",
                    "@acme/lib": "^1.0.0",
                    "@netrc/lib": "^1.0.0",
                    "@bad/lib": "^1.0.0",
                }
            }
        )
    )
    (repo / "requirements.txt").write_text("requests==2.31.0\n")
    (repo / "go.mod").write_text(
        "module example.com/app\n\ngo 1.22\n\nrequire golang.org/x/text v0.14.0\n"
    )
    (repo / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n\n[dependencies]\nserde = "1"\n'
    )
    return repo


def _plant(
    fake_registry: FakeRegistry, hosts: dict[str, tuple[VirtualHost, Npm]], tmp_path: Path
) -> tuple[Path, dict[str, str]]:
    """Plant every secret in its source; make each host require its own credential."""
    s = SECRETS
    home = Path(os.environ["HOME"])
    netrc_host, acme_host, bad_host = (hosts[n][0] for n in ("netrc", "acme", "bad"))
    (home / ".npmrc").write_text(
        f"@netrc:registry={netrc_host.url}/\n"
        f"{acme_host.url.removeprefix('http:')}/:_authToken={s['user_npmrc']}\n"
        f"_authToken={s['user_npmrc']}\n"
    )
    (home / ".netrc").write_text(f"machine 127.0.0.1 login nuser password {s['netrc']}\n")
    (home / ".config" / "pip").mkdir(parents=True)
    (home / ".config" / "pip" / "pip.conf").write_text(
        f"[global]\nindex-url = https://pyuser:{s['pip_conf']}@pip-conf.invalid/simple\n"
    )
    _checkout(tmp_path, hosts)
    pypi_url = fake_registry.url("pypi")
    go_url = fake_registry.url("goproxy")
    closed = f"http://127.0.0.1:{_closed_port()}/index"
    config = tmp_path / "patchula.toml"
    go_with_userinfo = go_url.replace("http://", f"http://gouser:{s['config_registries']}@")
    config.write_text(
        "[registries]\n"
        f'goproxy = "{go_with_userinfo}"\n'
        f'crates = "{closed}"\n'
        f'crates-api = "{fake_registry.url("crates-api")}"\n'
    )
    fake_registry.host("npm").required_authorization = _basic("npmuser", s["registry_flag"])
    fake_registry.host("pypi").required_authorization = _basic("pyuser", s["patchula_registry"])
    fake_registry.host("goproxy").required_authorization = _basic("gouser", s["config_registries"])
    acme_host.required_authorization = f"Bearer {s['env_expansion']}"
    netrc_host.required_authorization = _basic("nuser", s["netrc"])
    bad_host.required_authorization = "Bearer STANDIN-the-right-one"
    env = {
        "ACME_TOKEN": s["env_expansion"],
        "NPM_CONFIG_REGISTRY": f"https://npmuser:{s['npm_config_registry']}@npm-env.invalid/",
        "PIP_INDEX_URL": f"https://pyuser:{s['pip_index_url']}@pip-env.invalid/simple",
        "PATCHULA_REGISTRY": pypi_url.replace(
            "http://", f"pypi=http://pyuser:{s['patchula_registry']}@"
        ),
        "GITHUB_TOKEN": s["github_token"],
        "GITHUB_API_URL": fake_registry.url("github"),
        "NO_COLOR": "1",
    }
    return config, env


def test_every_secret_stays_hidden_and_goes_only_to_its_host(
    fake_registry: FakeRegistry,
    private_hosts: dict[str, tuple[VirtualHost, Npm]],
    tmp_path: Path,
    caplog: pytest.LogCaptureFixture,
) -> None:
    """Secrets planted in every source reach no output, report, cache byte or log record.

    And each registry saw the right ``Authorization`` (the fake answers 401 to anything else):
    ``--registry`` userinfo for npm, PATCHULA_REGISTRY userinfo for PyPI, config userinfo for
    the Go proxy, the checkout's ``${ACME_TOKEN}`` for @acme, ~/.netrc for @netrc, and the
    checkout's refused token for @bad, whose row names ./.npmrc.
    """
    s = SECRETS
    config, env = _plant(fake_registry, private_hosts, tmp_path)
    repo = tmp_path / "repo"
    npm_url = fake_registry.url("npm")
    bad_host = private_hosts["bad"][0]
    acme_host, netrc_host = private_hosts["acme"][0], private_hosts["netrc"][0]
    report = tmp_path / "out" / "report.json"
    flag = npm_url.replace("http://", f"npm=http://npmuser:{s['registry_flag']}@")
    base = ["run", str(repo), "--config", str(config), "--registry", flag, "-v"]
    runner = CliRunner()
    outputs: list[str] = []
    caplog.set_level(logging.DEBUG)
    for extra in (
        ["--format", "json", "--report", str(report)],
        ["--format", "table"],
        ["--format", "markdown"],
        ["--format", "json", "--no-cache"],
    ):
        result = runner.invoke(app, [*base, *extra], env=env, catch_exceptions=False)
        outputs += [result.stdout, result.stderr]
        assert result.exit_code == 3, result.output  # the unreachable and the refused rows
    data = json.loads(outputs[0])
    rows = {d["name"]: d for d in data["repositories"][0]["dependencies"]}
    assert {n: rows[n]["status"] for n in rows if rows[n]["status"] != "skipped"} == {
        "left-pad": "up-to-date",
        "@acme/lib": "up-to-date",
        "@netrc/lib": "up-to-date",
        "@bad/lib": "error",
        "requests": "outdated",
        "golang.org/x/text": "outdated",
        "serde": "error",
    }
    assert rows["@bad/lib"]["reason"] == (
        f"npm package '@bad/lib': HTTP 401 from {bad_host.url.removeprefix('http://')}: "
        "the credential from ./.npmrc was refused"
    )
    assert "unreachable" in rows["serde"]["reason"]
    assert data["options"]["registries"]["crates"].endswith("/index")
    assert data["options"]["registries"]["npm"] == npm_url

    # Each host got exactly its own credential (anything else is a 401 above), and only it.
    for host in (fake_registry.host("npm"), fake_registry.host("pypi"), acme_host, netrc_host):
        assert host.authorized_requests == host.requests > 0
        assert {entry.status for entry in host.log} <= {200, 304}
    assert bad_host.authorized_requests == bad_host.requests > 0
    assert fake_registry.host("github").requests == 0
    for name in ("crates-index", "crates-api", "oci", "github"):
        assert fake_registry.host(name).authorized_requests == 0

    cache_dir = Path(os.environ["PATCHULA_CACHE"]).parent
    blobs = [p.read_bytes() for p in cache_dir.rglob("*") if p.is_file()]
    assert any(b.startswith(b"SQLite format 3") for b in blobs)
    texts = [*outputs, report.read_text(), *(r.getMessage() for r in caplog.records)]
    for name, secret in s.items():
        for form in _encodings(secret):
            for text in texts:
                assert form not in text, f"{name} shown"
            for blob in blobs:
                assert form.encode() not in blob, f"{name} in the cache"


def test_two_checkouts_with_different_registries_do_not_share_an_answer(
    fake_registry: FakeRegistry,
    private_hosts: dict[str, tuple[VirtualHost, Npm]],
    tmp_path: Path,
) -> None:
    """The same package on two checkouts' .npmrc registries is looked up on each of them."""
    mirror_host, mirror = private_hosts["acme"]
    mirror.add("left-pad", {"1.0.0": OLD, "9.0.0": OLD})
    repos = []
    for name, registry in (("a", fake_registry.url("npm")), ("b", mirror_host.url)):
        repo = tmp_path / name
        repo.mkdir()
        (repo / ".npmrc").write_text(f"registry={registry}/\n")
        (repo / "package.json").write_text('{"dependencies": {"left-pad": "1.0.0"}}')
        repos.append(str(repo))
    result = CliRunner().invoke(app, ["run", *repos, "--format", "json"], catch_exceptions=False)
    data = json.loads(result.stdout)
    latest = {Path(r["target"]).name: r["dependencies"][0]["latest"] for r in data["repositories"]}
    assert latest == {"a": "1.3.0", "b": "9.0.0"}
    assert mirror_host.requests_by_route["GET /left-pad"] == 1
    assert fake_registry.host("npm").requests_by_route["GET /left-pad"] == 1


def test_anonymous_401_row_says_no_credential_is_configured(
    private_hosts: dict[str, tuple[VirtualHost, Npm]], tmp_path: Path
) -> None:
    """A private registry without a credential: the row says where to add one.

    The checkout's .npmrc line naming an unset variable is a warning of that repository.
    """
    host = private_hosts["acme"][0]
    host.required_authorization = "Bearer STANDIN-x"
    (tmp_path / ".npmrc").write_text(
        f"@acme:registry={host.url}\n//x.example/:_authToken=${{UNSET_STANDIN}}\n"
    )
    (tmp_path / "package.json").write_text('{"dependencies": {"@acme/lib": "^1.0.0"}}')
    result = CliRunner().invoke(app, ["run", str(tmp_path), "--format", "json"])
    repository = json.loads(result.stdout)["repositories"][0]
    row = repository["dependencies"][0]
    assert repository["problems"] == [
        {
            "file": ".npmrc",
            "line": None,
            "message": "./.npmrc line 2: environment variable UNSET_STANDIN is not set; "
            "//x.example/:_authToken is not used",
            "severity": "warning",
        }
    ]
    assert row["reason"] == (
        f"npm package '@acme/lib': HTTP 401 from {host.url.removeprefix('http://')}: "
        "no credential configured for it (add one to .npmrc or ~/.netrc)"
    )
    assert host.authorized_requests == 0


def test_checkout_user_and_password_win_over_the_users_token_for_that_registry(
    private_hosts: dict[str, tuple[VirtualHost, Npm]], tmp_path: Path
) -> None:
    """The checkout's ``username``/``_password`` for a registry replace ``~/.npmrc``'s token.

    npm merges config per key and would send the user file's token (a token ranks first).
    """
    host = private_hosts["acme"][0]
    password = "STANDIN-checkout-password-o15"  # noqa: S105
    host.required_authorization = _basic("u", password)
    dart = host.url.removeprefix("http:")
    home = Path(os.environ["HOME"])
    (home / ".npmrc").write_text(f"{dart}/:_authToken=STANDIN-HOMETOKEN-p16\n")
    encoded = base64.b64encode(password.encode()).decode()
    (tmp_path / ".npmrc").write_text(
        f"@acme:registry={host.url}/\n{dart}/:username=u\n{dart}/:_password={encoded}\n"
    )
    (tmp_path / "package.json").write_text('{"dependencies": {"@acme/lib": "^1.0.0"}}')
    result = CliRunner().invoke(app, ["run", str(tmp_path), "--format", "json"])
    row = json.loads(result.stdout)["repositories"][0]["dependencies"][0]
    assert (row["status"], row.get("reason")) == ("up-to-date", None)
    assert host.authorized_requests == host.requests == 1
    assert [entry.status for entry in host.log] == [200]


def test_401_row_names_the_npmrc_line_whose_variable_is_unset(
    private_hosts: dict[str, tuple[VirtualHost, Npm]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """``${NPM_TOKEN}`` unset: the row says that line was not used, not "none configured".

    A second checkout without that line, asking the same registry anonymously, keeps its own
    reason: rows are never shared between checkouts that explain differently.
    """
    monkeypatch.delenv("NPM_TOKEN", raising=False)
    host = private_hosts["acme"][0]
    host.required_authorization = "Bearer STANDIN-q17"
    dart = host.url.removeprefix("http:")
    repos = {name: tmp_path / name for name in ("with_line", "without")}
    for name, repo in repos.items():
        repo.mkdir()
        line = f"{dart}/:_authToken=${{NPM_TOKEN}}\n" if name == "with_line" else ""
        (repo / ".npmrc").write_text(f"@acme:registry={host.url}/\n{line}")
        (repo / "package.json").write_text('{"dependencies": {"@acme/lib": "^1.0.0"}}')
    result = CliRunner().invoke(app, ["run", *map(str, repos.values()), "--format", "json"])
    reasons = {
        Path(r["target"]).name: r["dependencies"][0]["reason"]
        for r in json.loads(result.stdout)["repositories"]
    }
    shown = host.url.removeprefix("http://")
    assert reasons == {
        "with_line": f"npm package '@acme/lib': HTTP 401 from {shown}: the credential in "
        "./.npmrc line 2 was not used: environment variable NPM_TOKEN is not set",
        "without": f"npm package '@acme/lib': HTTP 401 from {shown}: "
        "no credential configured for it (add one to .npmrc or ~/.netrc)",
    }
    assert host.authorized_requests == 0


def test_401_row_names_the_refused_fallback_and_the_unused_line(
    private_hosts: dict[str, tuple[VirtualHost, Npm]],
    tmp_path: Path,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """With the checkout's line unusable, ~/.netrc's login is sent; its refusal names both."""
    monkeypatch.delenv("NPM_TOKEN", raising=False)
    host = private_hosts["acme"][0]
    host.required_authorization = "Bearer STANDIN-r18"
    netrc_password = "STANDIN-netrc-s19"  # noqa: S105
    home = Path(os.environ["HOME"])
    (home / ".netrc").write_text(f"machine 127.0.0.1 login nuser password {netrc_password}\n")
    (tmp_path / ".npmrc").write_text(
        f"@acme:registry={host.url}/\n{host.url.removeprefix('http:')}/:_authToken=${{NPM_TOKEN}}\n"
    )
    (tmp_path / "package.json").write_text('{"dependencies": {"@acme/lib": "^1.0.0"}}')
    result = CliRunner().invoke(app, ["run", str(tmp_path), "--format", "json"])
    row = json.loads(result.stdout)["repositories"][0]["dependencies"][0]
    assert row["reason"] == (
        f"npm package '@acme/lib': HTTP 401 from {host.url.removeprefix('http://')}: "
        "the credential from ~/.netrc was refused; the credential in ./.npmrc line 2 was not "
        "used: environment variable NPM_TOKEN is not set"
    )
    assert host.authorized_requests == host.requests == 1
    assert netrc_password not in result.stdout + result.stderr


def test_password_in_a_registry_url_is_sent_but_never_shown(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A password in ``--registry`` is sent as Basic auth but shown in no option, row or reason."""
    password = "STANDIN-flag-password-m13"  # noqa: S105
    npm = fake_registry.url("npm")
    fake_registry.host("npm").required_authorization = _basic("me", password)
    (tmp_path / "package.json").write_text(
        '{"dependencies": {"left-pad": "^1.0.0", "does-not-exist": "^1.0.0"}}'
    )
    flag = npm.replace("http://", f"npm=http://me:{password}@")
    result = CliRunner().invoke(
        app, ["run", str(tmp_path), "--format", "json", "--registry", flag, "-v"]
    )
    assert password not in result.stdout
    assert password not in result.stderr
    data = json.loads(result.stdout)
    assert data["options"]["registries"] == {"npm": npm}
    rows = {d["name"]: d for d in data["repositories"][0]["dependencies"]}
    assert rows["left-pad"]["metadata"]["lookup"]["catalog"]["sourceUrl"] == f"{npm}/left-pad"
    assert rows["does-not-exist"]["reason"] == (
        f"npm package 'does-not-exist' not found (404 from {npm}/does-not-exist)"
    )
    assert fake_registry.host("npm").authorized_routes == {
        "GET /left-pad": 1,
        "GET /does-not-exist": 1,
    }


def test_private_answers_are_reused_warm_and_never_served_anonymously(
    private_hosts: dict[str, tuple[VirtualHost, Npm]], tmp_path: Path
) -> None:
    """A warm run reuses a private answer; a run without the credential asks and is refused."""
    host = private_hosts["acme"][0]
    host.required_authorization = "Bearer STANDIN-warm-n14"
    npmrc = f"@acme:registry={host.url}\n{host.url.removeprefix('http:')}/:_authToken="
    (tmp_path / "package.json").write_text('{"dependencies": {"@acme/lib": "^1.0.0"}}')
    statuses = []
    for token in ("STANDIN-warm-n14", "STANDIN-warm-n14", ""):
        (tmp_path / ".npmrc").write_text(npmrc + token + "\n")
        result = CliRunner().invoke(app, ["run", str(tmp_path), "--format", "json"])
        statuses.append(json.loads(result.stdout)["repositories"][0]["dependencies"][0]["status"])
    assert statuses == ["up-to-date", "up-to-date", "error"]
    assert [entry.status for entry in host.log] == [200, 401]


def test_user_level_warnings_go_to_stderr_once(tmp_path: Path) -> None:
    """An unset ``${VAR}`` in ~/.npmrc is one stderr warning naming the file, line and variable."""
    home = Path(os.environ["HOME"])
    (home / ".npmrc").write_text("//r.example/:_authToken=${UNSET_USER_STANDIN}\n")
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / ".npmrc").write_text("fund=false\n")
    result = CliRunner().invoke(
        app, ["run", str(tmp_path / "a"), str(tmp_path / "b"), "--format", "json"]
    )
    assert result.stderr.count("UNSET_USER_STANDIN") == 1
    assert (
        "patchula: warning: ~/.npmrc line 1: environment variable UNSET_USER_STANDIN is not "
        "set; //r.example/:_authToken is not used"
    ) in result.stderr
    assert all(not r["problems"] for r in json.loads(result.stdout)["repositories"])


def test_a_query_in_a_registry_url_is_refused_without_showing_its_token(tmp_path: Path) -> None:
    """A base URL with ``?token=…`` would corrupt every request path: exit 2, token redacted."""
    token = SECRETS["query_token"]
    config = tmp_path / "patchula.toml"
    config.write_text(f'[registries]\ncrates = "http://127.0.0.1:9/index?token={token}"\n')
    result = CliRunner().invoke(app, ["run", str(tmp_path), "--config", str(config)])
    assert result.exit_code == 2
    assert "must not have a query" in result.stderr
    assert "token=***" in result.stderr
    assert token not in result.stdout + result.stderr


def test_a_password_in_a_declared_url_is_not_shown(tmp_path: Path) -> None:
    """A direct-URL requirement with userinfo is a skipped row whose declared value is redacted."""
    secret = "STANDIN-declared-url-m13"  # noqa: S105 - a stand-in, never a real credential
    (tmp_path / "requirements.txt").write_text(
        f"pkg @ https://user:{secret}@files.example.com/pkg-1.0.tar.gz\n"
    )
    result = CliRunner().invoke(app, ["run", str(tmp_path), "--no-cache", "--format", "json"])
    assert secret not in result.stdout + result.stderr
    [row] = json.loads(result.stdout)["repositories"][0]["dependencies"]
    assert row["status"] == "skipped"
    assert "https://***@files.example.com/pkg-1.0.tar.gz" in row["declared"]
