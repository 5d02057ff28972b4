"""``patchula run`` on container images end to end: the real plugins against the fake registry.

A checkout with a Dockerfile (an ``ARG`` default, stages, a digest-pinned ``FROM``, ``latest``),
a compose file and a workflow; the fake registry's OCI host stands for Docker Hub
(``--registry docker=…``, pull tokens required as on Docker Hub) and is also named directly as
``127.0.0.1:PORT/…``; its Docker Hub API host answers tag push times (``--registry
docker-hub=…``). What issue 13's "Must show" lists, seen from the user's side.
"""

from __future__ import annotations

import base64
import hashlib
import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import DATA_DIR, FakeRegistry

DIGEST_A = "sha256:" + "a" * 64
DIGEST_B = "sha256:" + "b" * 64
DIGEST_C = "sha256:" + "c" * 64
DIGEST_D = "sha256:" + "d" * 64
# A test stand-in for a registry password, never a real secret.
PASSWORD = "STANDIN-docker-password-e2e"  # noqa: S105 - a test stand-in
runner = CliRunner()

DOCKERFILE = f"""\
ARG PY_VERSION=3.12
FROM --platform=linux/amd64 python:${{PY_VERSION}}-slim AS builder
RUN pip install --no-cache-dir build
FROM node:20.11.1-alpine@{DIGEST_A} AS web
RUN npm ci
FROM builder AS test
FROM nginx
COPY --from=web /app /usr/share/nginx/html
"""
COMPOSE = """\
services:
  db:
    image: ${DB_IMAGE:-postgres:16.1}
  app:
    build: .
  local:
    image: {host}/acme/app:1.0
  cache:
    image: redis:7.2@{digest}
"""
WORKFLOW = """\
name: ci
on: push
jobs:
  test:
    runs-on: ubuntu-latest
    container: python:3.12-slim
    services:
      redis:
        image: redis:7.2
    steps:
      - uses: docker://alpine:3.19
"""


def _host(registry: FakeRegistry) -> str:
    return registry.url("oci").removeprefix("http://")


def _images(registry: FakeRegistry) -> None:
    oci = registry.oci
    oci.add("library/python", dict.fromkeys(("3.11-slim", "3.12-slim", "3.13-slim", "3.13")))
    oci.add("library/node", {"20.11.1-alpine": DIGEST_B, "20.11.1": None, "21.0.0": None})
    oci.add("library/nginx", {"latest": DIGEST_C, "1.27": None})
    oci.add("library/postgres", dict.fromkeys(("16.1", "16.2")))
    oci.add("library/redis", {"7.2": DIGEST_D, "7.4": DIGEST_A})
    oci.add("library/alpine", dict.fromkeys(("3.19", "3.20")))
    oci.add("acme/app", dict.fromkeys(("1.0", "1.1")))


def _checkout(root: Path, registry: FakeRegistry) -> Path:
    repo = root / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    (repo / "Dockerfile").write_text(DOCKERFILE)
    compose = COMPOSE.replace("{host}", _host(registry)).replace("{digest}", DIGEST_D)
    (repo / "compose.yaml").write_text(compose)
    (repo / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW)
    return repo


def _args(registry: FakeRegistry, *more: str) -> list[str]:
    return [
        "--format",
        "json",
        "--registry",
        f"docker={registry.url('oci')}",
        "--registry",
        f"docker-hub={registry.url('docker-hub')}",
        *more,
    ]


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(app, ["run", *args], env=env, catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout), result.stderr


def _rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    return [row for repo in report["repositories"] for row in repo["dependencies"]]


def _oci_routes(registry: FakeRegistry) -> dict[str, int]:
    host = registry.host("oci")
    with host.lock:
        return dict(host.requests_by_route)


def _digests(rows: list[dict[str, Any]]) -> list[tuple[Any, ...]]:
    return [
        (
            r["file"],
            r["line"],
            r["depType"],
            r["declared"],
            r["current"],
            r["latest"],
            r["updateType"],
            r["digest"],
            r["currentDigest"],
            r["newDigest"],
            r["status"],
        )
        for r in rows
    ]


def test_run_help_names_container_images() -> None:
    """The first line of ``patchula run --help`` names every kind of dependency read."""
    result = runner.invoke(app, ["run", "--help"], terminal_width=200)
    assert result.exit_code == 0
    assert "Report how far behind a checkout's dependencies are." in result.stdout
    said = " ".join(result.stdout.split())
    assert (
        "npm (with yarn, pnpm and bun lockfiles), Python (PyPI), Rust (crates.io), Go modules,"
        " container images, GitHub Actions and tool versions (mise, asdf, .nvmrc,"
        " .python-version)." in said
    )


def test_a_checkout_of_dockerfile_compose_and_workflow_images(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Every image row with its file and line, current and latest tags, and digests.

    The ``ARG`` default is substituted; ``FROM builder`` and ``COPY --from=web`` name stages,
    not images; ``compose.yaml``'s ``${DB_IMAGE:-postgres:16.1}`` is its default and a service
    with only ``build:`` is nothing; the pinned ``node`` tag was pushed again (a ``digest``
    update); ``redis:7.2@…`` still matches but 7.4 is newer (its digest named); ``nginx``
    tracks ``latest``; ``127.0.0.1:PORT/acme/app`` is reached over http.
    """
    _images(fake_registry)
    repo = _checkout(tmp_path, fake_registry)
    code, report, _ = _run(str(repo), *_args(fake_registry, "--cache", str(tmp_path / "c.db")))
    assert code == 0
    # The job's ``runs-on: ubuntu-latest`` is a skipped runner row, not an image.
    rows = [r for r in _rows(report) if r["depType"] != "runs-on"]
    host = _host(fake_registry)
    assert {r["ecosystem"] for r in rows} == {"docker"}
    assert _digests(rows) == [
        (".github/workflows/ci.yml", 6, "container", "python:3.12-slim", "3.12-slim",
         "3.13-slim", "minor", None, None, None, "outdated"),
        (".github/workflows/ci.yml", 9, "service", "redis:7.2", "7.2", "7.4", "minor", None,
         None, None, "outdated"),
        (".github/workflows/ci.yml", 11, "step", "alpine:3.19", "3.19", "3.20", "minor", None,
         None, None, "outdated"),
        ("Dockerfile", 2, "stage", "python:3.12-slim", "3.12-slim", "3.13-slim", "minor",
         None, None, None, "outdated"),
        ("Dockerfile", 4, "stage", f"node:20.11.1-alpine@{DIGEST_A}", "20.11.1-alpine",
         "20.11.1-alpine", "digest", DIGEST_A, DIGEST_B, DIGEST_B, "outdated"),
        ("Dockerfile", 7, "final", "nginx", "latest", None, None, None, DIGEST_C, None,
         "up-to-date"),
        ("compose.yaml", 3, "image", "postgres:16.1", "16.1", "16.2", "minor", None, None, None,
         "outdated"),
        ("compose.yaml", 7, "image", f"{host}/acme/app:1.0", "1.0", "1.1", "minor", None, None,
         None, "outdated"),
        ("compose.yaml", 9, "image", f"redis:7.2@{DIGEST_D}", "7.2", "7.4", "minor", DIGEST_D,
         DIGEST_D, DIGEST_A, "outdated"),
    ]  # fmt: skip
    by_line = {(r["file"], r["line"]): r for r in rows}
    node = by_line["Dockerfile", 4]
    assert node["reason"] == (
        f"the digest of tag 20.11.1-alpine moved: pinned {DIGEST_A}, now {DIGEST_B}"
    )
    assert by_line["Dockerfile", 7]["reason"] == f"tracks the mutable tag latest (now {DIGEST_C})"
    local = by_line["compose.yaml", 7]
    assert local["packageName"] == f"{host}/acme/app"
    assert local["metadata"]["lookup"]["catalog"]["sourceUrl"] == (
        f"http://{host}/v2/acme/app/tags/list?n=1000"
    )
    assert by_line["Dockerfile", 2]["packageName"] == "docker.io/library/python"
    # Digests by HEAD only; the one manifest pulled is the index of node's tag, whose digest
    # is not the pin: is the pin one of its platform manifests (it is not: the tag moved)?
    routes = _oci_routes(fake_registry)
    pulled = [r for r in routes if r.startswith("GET") and "/manifests/" in r]
    assert pulled == ["GET /v2/library/node/manifests/20.11.1-alpine"]
    assert routes["HEAD /v2/library/node/manifests/20.11.1-alpine"] >= 1


def test_a_second_run_within_the_freshness_floor_sends_no_tags_and_no_token_request(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Validator-free tag lists are kept ``--registry-freshness-secs`` (default 3600 s).

    The second run sends no tags request and, its token read from the disk cache, no token
    request and no 401 (its digest HEADs go out with the token at once); with
    ``--registry-freshness-secs 0`` every page of every tag list is fetched again.
    """
    _images(fake_registry)
    oci = fake_registry.host("oci")
    oci.validators = False
    oci.cache_control = None  # no upstream freshness: only the floor keeps a tag list
    fake_registry.oci.max_page_size = 2  # python 2 pages, node 2, the others 1 each: 8 pages
    repo = _checkout(tmp_path, fake_registry)
    args = _args(fake_registry, "--cache", str(tmp_path / "c.db"))
    first = _run(str(repo), *args)
    pages = sum(e.status == 200 and "/tags/list" in e.path for e in oci.log)
    assert pages == 8
    for run, more, tag_pages in ((2, (), 0), (3, ("--registry-freshness-secs", "0"), 8)):
        fake_registry.reset_stats()
        code, report, _ = _run(str(repo), *args, *more)
        assert (code, _digests(_rows(report))) == (first[0], _digests(_rows(first[1]))), run
        log = [(e.method, e.path, e.status) for e in oci.log]
        assert sum("/tags/list" in path for _, path, _ in log) == tag_pages, run
        assert [path for _, path, _ in log if path.startswith("/token")] == [], run
        assert [status for *_, status in log if status != 200] == [], run
        # node, nginx, redis 7.2 (pinned) and 7.4 (its newer tag's digest)
        assert sum(method == "HEAD" for method, *_ in log) == 4, run


def test_a_revoked_token_is_refreshed_once_for_sixteen_concurrent_lookups(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """16 pinned tags of one image: their 16 HEADs meet 401s, one token request serves all.

    Every pin still matches its tag; all but 1.15 have that newer tag to move to.
    """
    tags = {f"1.{n}": f"sha256:{n:064x}" for n in range(16)}
    fake_registry.oci.add("acme/app", tags)
    fake_registry.host("oci").cache_control = None  # each run revalidates its HEADs
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text("".join(f"FROM acme/app:{t}@{d}\n" for t, d in tags.items()))
    args = (str(repo), *_args(fake_registry, "--cache", str(tmp_path / "c.db")))
    _run(*args)
    fake_registry.oci.revoke_tokens()
    fake_registry.reset_stats()
    fake_registry.set_latency(0.02)  # the 16 HEADs overlap
    code, report, _ = _run(*args)
    assert code == 0
    rows = _rows(report)
    assert [r["status"] for r in rows] == ["outdated"] * 15 + ["up-to-date"]
    assert [r["currentDigest"] for r in rows] == list(tags.values())
    assert all(r["reason"] is None for r in rows)
    routes = _oci_routes(fake_registry)
    assert routes["GET /token"] == 1
    statuses = [e.status for e in fake_registry.host("oci").log if "/manifests/" in e.path]
    assert (statuses.count(401), len(statuses)) == (16, 32)


def test_a_pull_quota_429_fails_those_rows_at_once(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Docker Hub's pull-quota 429 ends the digest rows as errors at once, never up to date.

    The registry gives no digest header, so patchula GETs the manifest (a pull); the quota
    answer is not retried on the short back-off and the rows say why.
    """
    fake_registry.oci.add("library/python", {"3.13": DIGEST_A, "latest": DIGEST_B})
    fake_registry.oci.omit_digest_header = True
    fake_registry.oci.pull_quota_exhausted = True
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text(f"FROM python:3.13@{DIGEST_A}\nFROM python\n")
    code, report, _ = _run(str(repo), *_args(fake_registry, "--no-cache"))
    assert code == 3  # a lookup failed
    rows = _rows(report)
    assert [(r["status"], r["currentDigest"]) for r in rows] == [("error", None), ("error", None)]
    reasons = [r["reason"] for r in rows]
    assert all("Docker Hub pull quota exhausted" in reason for reason in reasons), reasons
    assert any("not retried" in reason for reason in reasons), reasons
    log = fake_registry.host("oci").log
    gets = sorted((e.path, e.status) for e in log if e.method == "GET" and "/manifests/" in e.path)
    # Each pull asked at most once (two in flight may both meet the quota), never retried.
    assert len(gets) == len(set(gets)) <= 2
    assert {status for _, status in gets} == {429}


def test_a_release_age_wait_asks_docker_hub_dates_only_for_the_needed_tags(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``--min-release-age 3d``: Docker Hub's ``tag_last_pushed`` of 3.13 and 3.14 only.

    3.14 was pushed a day ago (held back), 3.13 ten days ago (eligible); 3.12 (current) and
    the older or other-suffix tags are never asked. The dates are reported with their
    provenance.
    """
    tags = ("3.10", "3.11", "3.12", "3.13", "3.14", "3.13-slim", "3.14-slim")
    fake_registry.oci.add("library/python", dict.fromkeys(tags))
    now = datetime.now(UTC).replace(microsecond=0)
    pushed = {t: now - timedelta(days=100) for t in tags}
    pushed |= {"3.13": now - timedelta(days=10), "3.14": now - timedelta(days=1)}
    fake_registry.docker_hub.add("library/python", pushed)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text("FROM python:3.12\n")
    code, report, _ = _run(
        str(repo), *_args(fake_registry, "--no-cache", "--min-release-age", "3d")
    )
    assert code == 0
    [row] = _rows(report)
    stamp = "%Y-%m-%dT%H:%M:%SZ"
    assert (row["status"], row["current"], row["latest"], row["eligible"]) == (
        "outdated",
        "3.12",
        "3.14",
        "3.13",
    )
    assert row["eligibleReleasedAt"] == (now - timedelta(days=10)).strftime(stamp)
    assert row["heldBack"] == [
        {
            "version": "3.14",
            "releasedAt": (now - timedelta(days=1)).strftime(stamp),
            "eligibleAt": (now + timedelta(days=2)).strftime(stamp),
            "updateType": "minor",
            "reason": (
                "last pushed 24h ago (Docker Hub's tag_last_pushed: a re-push restarts the wait);"
                " minor updates wait 72h"
            ),
        }
    ]
    assert row["dateSources"] == {"3.13": "last-push", "3.14": "last-push"}
    assert row["metadata"]["lookup"]["catalog"]["timeSource"].startswith(
        "none in OCI tags; Docker Hub tag_last_pushed when the policy asks"
    )
    hub = fake_registry.host("docker-hub").requests_by_route
    prefix = "GET /v2/namespaces/library/repositories/python/tags/"
    assert sorted(hub) == [f"{prefix}3.13", f"{prefix}3.14"]


def _auth(user: str, password: str) -> str:
    return base64.b64encode(f"{user}:{password}".encode()).decode()


def test_a_docker_config_login_reaches_the_token_service_and_is_never_shown(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``DOCKER_CONFIG``'s login for ``127.0.0.1:PORT`` goes to that registry's token service.

    Neither the password, its ``auth`` value nor the token it bought appears in the report,
    the ``-vv`` logs or the cache file.
    """
    host = _host(fake_registry)
    fake_registry.oci.add("private/app", dict.fromkeys(("2.0", "2.1")))
    fake_registry.oci.token_credential = f"Basic {_auth('robot', PASSWORD)}"
    config = tmp_path / "docker-config"
    config.mkdir()
    auths = {"auths": {host: {"auth": _auth("robot", PASSWORD)}}}
    (config / "config.json").write_text(json.dumps(auths))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text(f"FROM {host}/private/app:2.0\n")
    cache = tmp_path / "c.db"
    result = runner.invoke(
        app,
        ["run", str(repo), *_args(fake_registry, "--cache", str(cache), "-vv")],
        env={"DOCKER_CONFIG": str(config)},
        catch_exceptions=False,
    )
    assert result.exit_code == 0, result.stderr
    [row] = _rows(json.loads(result.stdout))
    assert (row["status"], row["current"], row["latest"]) == ("outdated", "2.0", "2.1")
    assert fake_registry.host("oci").authorized_routes["GET /token"] == 1
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("c.db*"))
    secrets = [PASSWORD, _auth("robot", PASSWORD), *fake_registry.oci.issued]
    assert fake_registry.oci.issued
    for secret in secrets:
        assert secret not in result.stdout
        assert secret not in result.stderr
        assert secret.encode() not in stored


def test_an_unreachable_date_api_is_said_on_every_row_and_in_the_summary(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Docker Hub's tag API down: both rows of the image say so, and the summary names the host.

    The publish-time lookup of a package is asked once per run; its failure used to reach only
    the row that asked it. Both rows are held back for want of the push times the wait needs:
    failed lookups (exit 3), never only a mention in the summary.
    """
    fake_registry.oci.add("library/python", dict.fromkeys(("3.12", "3.13")))
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text("FROM python:3.12 AS a\nFROM python:3.12\n")
    args = ["--no-cache", "--min-release-age", "3d", "--request-deadline", "2"]
    args += ["--registry", f"docker={fake_registry.url('oci')}"]
    args += ["--registry", "docker-hub=http://127.0.0.1:9"]  # discard port: refused
    result = runner.invoke(app, ["run", str(repo), *args], catch_exceptions=False)
    assert result.exit_code == 3, result.stderr
    rows = [line for line in result.stdout.splitlines() if line.startswith("python")]
    assert len(rows) == 2
    for line in rows:
        assert "publish times unavailable: 127.0.0.1:9 is unreachable (ConnectError)" in line
    summary = result.stdout.strip().splitlines()[-1]
    assert "127.0.0.1:9 unreachable (ConnectError): what it gives is missing from the rows" in (
        summary
    )
    assert "2 dependencies with part of the lookup failed (failedLookup)" in summary
    result = runner.invoke(app, ["run", str(repo), *args, "--format", "json"])
    report = json.loads(result.stdout)
    assert report["summary"]["failedLookups"] == 2
    for d in report["repositories"][0]["dependencies"]:
        assert d["status"] == "held-back"
        assert d["failedLookup"].startswith(
            "publish times unavailable: 127.0.0.1:9 is unreachable (ConnectError)"
        )


def _nginx_index(tag: str) -> tuple[str, dict[str, str]]:
    """The bundled fixture's index digest of ``tag`` and its platform manifests."""
    fixture = json.loads((DATA_DIR / "oci" / "library-nginx.json").read_text())
    index = fixture["tags"][tag]
    body = json.dumps(index, separators=(",", ":")).encode()
    platforms = {
        f"{m['platform']['os']}/{m['platform']['architecture']}": m["digest"]
        for m in index["manifests"]
    }
    return "sha256:" + hashlib.sha256(body).hexdigest(), platforms


def test_a_pin_to_one_platforms_manifest_of_the_index_has_not_moved(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``nginx:1.26@<1.26's linux/amd64 manifest>``: the tag has not moved for the pin.

    Renovate keeps architecture-specific digests (renovatebot/renovate#16554): the newer tag
    1.27 is proposed at its own linux/amd64 manifest, never at its index digest.
    """
    index_126, platforms_126 = _nginx_index("1.26")
    index_127, platforms_127 = _nginx_index("1.27")
    amd64 = platforms_126["linux/amd64"]
    assert amd64 != index_126
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text(f"FROM nginx:1.26@{amd64}\n")
    code, report, _ = _run(str(repo), *_args(fake_registry))
    [row] = _rows(report)
    assert (row["status"], row["current"], row["eligible"], row["updateType"]) == (
        "outdated",
        "1.26",
        "1.27",
        "minor",
    )
    assert (row["digest"], row["currentDigest"]) == (amd64, amd64)
    assert row["newDigest"] == platforms_127["linux/amd64"] != index_127
    assert "moved" not in row["reason"]
    assert (
        f"pinned to the linux/amd64 manifest of tag 1.26's index (now {index_126})"
        in (row["reason"])
    )
    assert code == 0
    # Without a newer tag to move to, the pin is up to date.
    (repo / "Dockerfile").write_text(f"FROM nginx:1.27@{platforms_127['linux/arm64']}\n")
    code, report, _ = _run(str(repo), *_args(fake_registry))
    [row] = _rows(report)
    assert (row["status"], row["eligible"], row["newDigest"]) == ("up-to-date", None, None)
    assert row["currentDigest"] == platforms_127["linux/arm64"]
    assert "pinned to the linux/arm64 manifest of tag 1.27's index" in row["reason"]
    assert code == 0


def test_a_pin_that_is_no_manifest_of_the_index_has_moved(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A digest that is neither the index nor one of its manifests: the tag moved."""
    index_127, platforms_127 = _nginx_index("1.27")
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text(f"FROM nginx:1.27@{DIGEST_A}\n")
    code, report, _ = _run(str(repo), *_args(fake_registry))
    [row] = _rows(report)
    assert (row["status"], row["updateType"], row["newDigest"]) == ("outdated", "digest", index_127)
    assert f"the digest of tag 1.27 moved: pinned {DIGEST_A}, now {index_127}" in row["reason"]
    assert platforms_127["linux/amd64"] not in row["reason"]
    assert code == 0


def test_an_unreadable_index_leaves_the_pin_unsure_and_fails_the_run(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """The index could not be read: the row says it cannot tell, and the lookup failed."""
    _, platforms_127 = _nginx_index("1.27")
    route = "GET /v2/library/nginx/manifests/1.27"
    fake_registry.host("oci").fail_next(50, 500, {}, b"", route=route)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text(f"FROM nginx:1.27@{platforms_127['linux/amd64']}\n")
    code, report, _ = _run(str(repo), *_args(fake_registry, "--request-deadline", "2"))
    [row] = _rows(report)
    unsure = "whether the pinned digest is one of tag 1.27's platform manifests could not be read"
    assert row["failedLookup"].startswith(unsure)
    assert unsure in row["reason"]
    assert report["summary"]["failedLookups"] == 1
    assert code == 3


def test_a_floating_tag_re_pushed_yesterday_is_held_as_pushed_not_as_released(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``node:20-alpine`` re-pushed a day ago: held back, and the row says "last pushed".

    Docker Hub's ``tag_last_pushed`` is all a registry tells of a tag's age; a floating tag
    (``22-alpine``) is re-pushed with every release of its line and every base-image rebuild,
    so the JSON and the dashboard never call it "released 30h ago" (``dateSources`` ``last-push``,
    and the dashboard's dates and ages say "(last push)").
    """
    tags = ("18-alpine", "20-alpine", "22-alpine", "23-alpine", "latest")
    fake_registry.oci.add("library/node", dict.fromkeys(tags))
    now = datetime.now(UTC).replace(microsecond=0)
    pushed = {t: now - timedelta(days=400) for t in tags}
    pushed |= {"20-alpine": now - timedelta(days=10), "22-alpine": now - timedelta(hours=30)}
    fake_registry.docker_hub.add("library/node", pushed)
    repo = tmp_path / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text("FROM node:18-alpine\n")
    args = _args(fake_registry, "--no-cache", "--min-release-age", "3d")
    code, report, _ = _run(str(repo), *args)
    assert code == 0
    [row] = _rows(report)
    assert (row["status"], row["latest"], row["eligible"]) == ("outdated", "22-alpine", "20-alpine")
    [held] = row["heldBack"]
    assert (held["version"], held["reason"]) == (
        "22-alpine",
        (
            "last pushed 30h ago (Docker Hub's tag_last_pushed: a re-push restarts the wait);"
            " major updates wait 72h"
        ),
    )
    assert row["dateSources"] == {"20-alpine": "last-push", "22-alpine": "last-push"}
    dashboard = tmp_path / "dashboard.md"
    code, _, _ = _run(str(repo), *args, "--dashboard", str(dashboard))
    assert code == 0
    lines = dashboard.read_text().splitlines()
    eligible = next(line for line in lines if "| `20-alpine` |" in line)
    assert "| 10d (last push) |" in eligible
    held_row = next(line for line in lines if "| `22-alpine` |" in line)
    pushed_at = (now - timedelta(hours=30)).strftime("%Y-%m-%d %H:%MZ")
    assert f"| {pushed_at} (last push) |" in held_row
