"""End to end: a manifest's secrets reach no record, cache byte, report, stderr or log record.

Runs ``patchula run`` (twice: the second answered by the extraction record) and ``patchula
cache failed`` on a committed checkout whose manifests carry every kind of secret, in rows
(direct URLs, git URLs, a token in a ref) and in lines that fail to parse, while the run's own
credentials (``.npmrc`` ``_authToken``, ``PIP_INDEX_URL`` userinfo, ``GITHUB_TOKEN``) travel
as ``Authorization`` values to the loopback fake registry. Then the raw bytes of the cache file
and its ``-wal``, the JSON report, stdout and stderr (``-vv``) are searched for each secret.
"""

from __future__ import annotations

import base64
import json
import logging
import os
import shutil
import subprocess
from pathlib import Path

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

pytestmark = pytest.mark.skipif(shutil.which("git") is None, reason="needs a git executable")

# Letters and digits after the prefix, as many as a GitHub token has (36 with the suffix).
_TOKEN_BODY = "STANDIN0123456789abcdefghijklmnopq"  # noqa: S105 - a stand-in

# Stand-ins, none a real credential; each planted in one place.
SECRETS = {
    "failing_requirement_url": "STANDIN-failing-req-a1",
    "index_url_option": "STANDIN-index-url-b2",
    "unknown_option_url": "STANDIN-unknown-option-c3",
    "direct_url_dependency": "STANDIN-direct-url-d4",
    "git_url_token_user": "STANDIN-git-token-e5",
    "editable_git_password": "STANDIN-editable-git-f6",
    "npm_git_token": "STANDIN-npm-git-g7",
    "npm_tarball_password": "STANDIN-npm-tarball-h8",
    "npm_ref_github_token": f"ghp_{_TOKEN_BODY}i9",
    "npm_github_pat": f"github_pat_11{_TOKEN_BODY}_j10",
    "npmrc_auth_token": "STANDIN-npmrc-token-k11",
    "pip_index_url": "STANDIN-pip-index-url-l12",
    "github_token": f"ghp_{_TOKEN_BODY}m13",
    "failing_marker_url": "STANDIN-failing-marker-n14",
    "image_bare_userinfo": "STANDIN-image-userinfo-o15",
    "cargo_git_password": "STANDIN-cargo-git-p16",
    "failing_npm_name_url": "STANDIN-npm-bad-name-q17",
}


def _git(root: Path, *args: str) -> None:
    env = {k: v for k, v in os.environ.items() if not k.startswith("GIT_")}
    identity = ["-c", "user.name=t", "-c", "user.email=t@example.com", "-c", "commit.gpgsign=false"]
    subprocess.run(  # noqa: S603 - the test's own git commands
        ["git", *identity, *args],  # noqa: S607 - git from PATH, as the product finds it
        cwd=root,
        env=env,
        check=True,
        capture_output=True,
    )


def _forms(secret: str) -> list[str]:
    """The secret and the forms it travels in (Basic auth pairs in base64)."""
    return [secret, base64.b64encode(f"pu:{secret}".encode()).decode()]


def _checkout(root: Path, registry: FakeRegistry) -> Path:
    s = SECRETS
    npm = registry.url("npm")
    repo = root / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / "requirements.txt").write_text(
        f"--index-url https://u:{s['index_url_option']}@mirror.example/simple\n"
        "requests==2.31.0\n"
        f"pkg @ https://u:{s['direct_url_dependency']}@files.example/pkg-1.0-py3-none-any.whl\n"
        f"git+https://{s['git_url_token_user']}@github.com/o/r.git#egg=r\n"
        f"-e git+https://x-access-token:{s['editable_git_password']}@github.com/o/r2.git#egg=r2\n"
        f"broken((( https://u:{s['failing_requirement_url']}@h.example/x\n"
        f"--frobnicate https://u:{s['unknown_option_url']}@h.example/simple\n"
    )
    (repo / "package.json").write_text(
        json.dumps(
            {
                "dependencies": {
                    "left-pad": "^1.0.0",
                    "pad-alias": "npm:left-pad@1.3.0",
                    "priv": f"git+https://{s['npm_git_token']}@github.com/o/priv.git#v1.0.0",
                    "tb": f"https://u:{s['npm_tarball_password']}@h.example/tb.tgz",
                    "gh": f"github:o/r#{s['npm_ref_github_token']}",
                    "pat": f"git+https://{s['npm_github_pat']}@github.com/o/p.git",
                    "bad name ": f"https://u:{s['failing_npm_name_url']}@h.example/y",
                }
            }
        )
    )
    (repo / ".npmrc").write_text(
        f"registry={npm}/\n{npm.removeprefix('http:')}/:_authToken={s['npmrc_auth_token']}\n"
    )
    (repo / "pyproject.toml").write_text(
        '[project]\nname = "app"\nversion = "1"\n'
        f'dependencies = ["bar>=1 ; bad marker https://u:{s["failing_marker_url"]}@h.example/"]\n'
    )
    (repo / "Dockerfile").write_text(
        f"FROM user:{s['image_bare_userinfo']}@registry.example/app:1.0\n"
    )
    (repo / "Cargo.toml").write_text(
        '[package]\nname = "a"\nversion = "0.1.0"\n\n[dependencies]\n'
        f'serde = {{ git = "https://u:{s["cargo_git_password"]}@gh.example/serde" }}\n'
    )
    (repo / ".github" / "workflows" / "ci.yml").write_text(
        "on: push\njobs:\n  b:\n    runs-on: ubuntu-latest\n    steps:\n"
        "      - uses: actions/checkout@v4\n"
    )
    repo.mkdir(exist_ok=True)
    _git(repo, "init", "-q")
    _git(repo, "add", "-A")
    _git(repo, "commit", "-q", "-m", "c")
    return repo


def test_no_secret_of_a_manifest_or_a_credential_is_persisted_or_shown(
    fake_registry: FakeRegistry, tmp_path: Path, caplog: pytest.LogCaptureFixture
) -> None:
    """Two runs (fresh, then from the record) and ``cache failed``: no secret in any byte.

    The rows still say what was declared (userinfo and tokens as ``***``), the problems still
    name the failing lines, and each registry saw its credential (the fake answers 401 to
    anything else): the secrets were used, only never kept or shown.
    """
    s = SECRETS
    repo = _checkout(tmp_path, fake_registry)
    pypi = fake_registry.url("pypi")
    fake_registry.host("npm").required_authorization = f"Bearer {s['npmrc_auth_token']}"
    basic = base64.b64encode(f"pu:{s['pip_index_url']}".encode()).decode()
    fake_registry.host("pypi").required_authorization = f"Basic {basic}"
    cache = tmp_path / "cache" / "patchula.sqlite3"
    report = tmp_path / "out" / "report.json"
    env = {
        "PIP_INDEX_URL": pypi.replace("http://", f"http://pu:{s['pip_index_url']}@") + "/simple",
        "GITHUB_TOKEN": s["github_token"],
        "GITHUB_API_URL": fake_registry.url("github"),
        "NO_COLOR": "1",
    }
    args = ["run", str(repo), "--cache", str(cache), "--format", "json", "--report", str(report)]
    for name, host in (("crates", "crates-index"), ("crates-api", "crates-api")):
        args += ["--registry", f"{name}={fake_registry.url(host)}"]
    caplog.set_level(logging.DEBUG)
    runner = CliRunner()
    texts: list[str] = []
    reports = []
    for _ in range(2):
        result = runner.invoke(app, [*args, "-vv"], env=env, catch_exceptions=False)
        texts += [result.stdout, result.stderr, report.read_text()]
        reports.append(json.loads(result.stdout)["repositories"][0])
    failed = runner.invoke(app, ["cache", "failed", "--cache", str(cache)], env=env)
    texts += [failed.stdout, failed.stderr, *(r.getMessage() for r in caplog.records)]

    # The second run was answered by the record the first stored; both say the same.
    assert [r["extraction"]["source"] for r in reports] == ["fresh", "cached"]
    shown = [
        [(d["name"], d["declared"], d["status"], d.get("reason")) for d in r["dependencies"]]
        for r in reports
    ]
    assert shown[0] == shown[1]
    assert reports[0]["problems"] == reports[1]["problems"]
    rows = {d["name"]: d for d in reports[1]["dependencies"]}
    assert rows["pkg"]["declared"] == "https://***@files.example/pkg-1.0-py3-none-any.whl"
    assert rows["r"]["declared"] == "git+https://***@github.com/o/r.git#egg=r"
    assert rows["priv"]["declared"] == "git+https://***@github.com/o/priv.git#v1.0.0"
    assert rows["gh"]["declared"] == "github:o/r#ghp_***"
    assert rows["pat"]["declared"] == "git+https://***@github.com/o/p.git"
    assert rows["serde"]["declared"] == "https://***@gh.example/serde"
    # An npm alias of an exact version is no userinfo: it is kept as written, and looked up.
    assert rows["pad-alias"]["declared"] == "npm:left-pad@1.3.0"
    assert rows["pad-alias"]["current"] == "1.3.0"
    # The credentials were sent where they belong: the rows looked up there are answered.
    assert (rows["left-pad"]["status"], rows["requests"]["status"]) == ("up-to-date", "outdated")
    assert rows["actions/checkout"]["status"] != "error"
    assert fake_registry.host("npm").authorized_requests == fake_registry.host("npm").requests > 0
    assert fake_registry.host("pypi").authorized_requests == fake_registry.host("pypi").requests
    assert fake_registry.host("github").authorized_requests > 0
    messages = {(p["file"], p["line"]): p["message"] for p in reports[1]["problems"]}
    assert "https://***@h.example/x" in messages[("requirements.txt", 6)]
    assert "https://***@h.example/" in messages[("pyproject.toml", 4)]
    assert "'***@registry.example/app:1.0'" in messages[("Dockerfile", 1)]

    blobs = {p.name: p.read_bytes() for p in cache.parent.iterdir() if p.is_file()}
    assert any(b.startswith(b"SQLite format 3") for b in blobs.values())
    for name, secret in s.items():
        for form in _forms(secret):
            for text in texts:
                assert form not in text, f"{name} shown"
            for file, blob in blobs.items():
                assert form.encode() not in blob, f"{name} in {file}"
    assert b"***@files.example" in b"".join(blobs.values())  # the record is in these bytes


def test_two_credentials_for_one_registry_url_do_not_share_a_private_answer(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A private packument fetched with one token is never answered to another token.

    design.md §3: cache keys carry a digest of the credential identity. The registry accepts
    only the first token; a run with the second asks it again (and is refused) instead of
    reading the first one's stored answer, and neither token is in the cache file.
    """
    npm = fake_registry.url("npm")
    first, second = "STANDIN-first-token-r18", "STANDIN-second-token-s19"
    fake_registry.host("npm").required_authorization = f"Bearer {first}"
    (tmp_path / "package.json").write_text('{"dependencies": {"left-pad": "^1.0.0"}}')
    cache = tmp_path / "c.sqlite3"
    statuses = []
    for token in (first, first, second):
        (tmp_path / ".npmrc").write_text(f"registry={npm}/\n{npm[5:]}/:_authToken={token}\n")
        result = CliRunner().invoke(
            app, ["run", str(tmp_path), "--format", "json", "--cache", str(cache)]
        )
        statuses.append(json.loads(result.stdout)["repositories"][0]["dependencies"][0]["status"])
    assert statuses == ["up-to-date", "up-to-date", "error"]
    # The second run revalidated (or reused) the first token's answer; the third was asked.
    assert [entry.status for entry in fake_registry.host("npm").log][-1] == 401
    data = b"".join(p.read_bytes() for p in tmp_path.glob("c.sqlite3*"))
    assert first.encode() not in data
    assert second.encode() not in data
