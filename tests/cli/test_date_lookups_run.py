"""``patchula run --min-release-age`` when a publish-date source does not know a version.

A 404 from a date source for a version its catalog just named (Docker Hub's tag API for a tag
the registry lists, GitHub's commit endpoint for the commit the tag list names) is a failed
date lookup, never "this release has no date": the row keeps the safe verdict for that
version (held back), says "publish times unavailable:" with the status and URL, counts as a
failed lookup (exit 3), and an older candidate whose date is known is still asked and proposed
(only the releases whose age is unknown are held). A floating tag at a release's commit takes
that release's date without a request, and each GitHub document is fetched once per run
(trial-fresh findings 2, 3 and 10).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry
from tests.fake_registry.github import GitHub

runner = CliRunner()
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
STAMP = "%Y-%m-%dT%H:%M:%SZ"
# No token of the machine running the tests reaches the fake (or the output).
_NO_TOKEN = {"GH_TOKEN": "", "GITHUB_TOKEN": "", "GITHUB_API_URL": ""}
WORKFLOW = """\
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
{steps}"""


def _run(repo: Path, *more: str, now: bool = True) -> tuple[int, dict[str, Any]]:
    """Run at ``NOW`` (``--now``), or at the real time (``now=False``: catalog views apply)."""
    args = ["run", str(repo), "--format", "json", *(("--now", NOW.isoformat()) if now else ())]
    args += ["--min-release-age", "3d", *more]
    result = runner.invoke(app, args, env=_NO_TOKEN, catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def _rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    """The rows of the report, without the workflow's ``runs-on`` runner row."""
    return [
        row
        for repo in report["repositories"]
        for row in repo["dependencies"]
        if row.get("depType") != "runs-on"
    ]


def _workflow(root: Path, *uses: str) -> Path:
    repo = root / "repo"
    (repo / ".github" / "workflows").mkdir(parents=True)
    steps = "".join(f"      - uses: {ref}\n" for ref in uses)
    (repo / ".github" / "workflows" / "ci.yml").write_text(WORKFLOW.format(steps=steps))
    return repo


def _sha(tag: str, repo: str = "checkout") -> str:
    return GitHub.commit_of("actions", repo, tag)


def _checkout_repo(registry: FakeRegistry) -> None:
    """``actions/checkout``: releases v6.0.0 (old), v7.1.0 (40 days), v7.2.0 (a day old).

    Floating tags as maintainers move them: ``v6`` at v6.0.0's commit, ``v7`` at v7.2.0's,
    and ``v8`` at a commit of its own that no release names (its date is the commit's).
    """
    registry.github.add_repo(
        "actions",
        "checkout",
        {
            "v7.2.0": NOW - timedelta(days=1),
            "v7.1.0": NOW - timedelta(days=40),
            "v6.0.0": NOW - timedelta(days=200),
        },
        tags={"v8": NOW - timedelta(hours=5), "v7": None, "v6": None},
    )
    registry.github.point_tag("actions", "checkout", "v7", _sha("v7.2.0"))
    registry.github.point_tag("actions", "checkout", "v6", _sha("v6.0.0"))


def _github(registry: FakeRegistry) -> list[str]:
    return ["--registry", f"github={registry.url('github')}"]


def _routes(registry: FakeRegistry, name: str) -> dict[str, int]:
    host = registry.host(name)
    with host.lock:
        return dict(host.requests_by_route)


def test_a_floating_tag_at_a_releases_commit_is_dated_by_that_release_without_a_request(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``@v6`` → ``v7``: v7 is v7.2.0's commit, so v7.2.0's ``published_at`` dates it.

    No commit is asked, and the commit endpoint answering 404 changes nothing.
    """
    fake_registry.github.add_repo(
        "actions",
        "checkout",
        {"v7.2.0": NOW - timedelta(days=1), "v6.0.0": NOW - timedelta(days=200)},
        tags=("v7", "v6"),
    )
    fake_registry.github.point_tag("actions", "checkout", "v7", _sha("v7.2.0"))
    fake_registry.github.point_tag("actions", "checkout", "v6", _sha("v6.0.0"))
    route = f"GET /repos/actions/checkout/commits/{_sha('v7.2.0')}"
    fake_registry.host("github").fail_next(5, 404, {}, b'{"message":"Not Found"}', route=route)
    repo = _workflow(tmp_path, "actions/checkout@v6")
    code, report = _run(repo, "--no-cache", *_github(fake_registry))
    [row] = _rows(report)
    assert (row["status"], row["current"], row["latest"], row["eligible"]) == (
        "held-back",
        "v6",
        "v7",
        None,
    )
    assert row["heldBack"] == [
        {
            "version": "v7",
            "releasedAt": (NOW - timedelta(days=1)).strftime(STAMP),
            "eligibleAt": (NOW + timedelta(days=2)).strftime(STAMP),
            "updateType": "major",
            "reason": "released 24h ago; major updates wait 72h",
        }
    ]
    assert row["dateSources"] == {"v7": "same-commit-release"}
    assert row["failedLookup"] is None
    assert not any("/commits/" in r for r in _routes(fake_registry, "github"))
    assert code == 0


def test_a_commit_date_404_is_a_failed_lookup_and_an_older_tag_is_still_proposed(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``@v6``: v8's commit (no release names it) answers 404; v7 (v7.2.0's commit) is too young.

    v7's date comes from v7.2.0 (a day old: held back by the wait); v8 is held back for its
    failed lookup, said with the status and URL, and the run exits 3. The wording is
    GitHub's, never an OCI image's.
    """
    _checkout_repo(fake_registry)
    v8 = _sha("v8")
    route = f"GET /repos/actions/checkout/commits/{v8}"
    fake_registry.host("github").fail_next(5, 404, {}, b'{"message":"Not Found"}', route=route)
    repo = _workflow(tmp_path, "actions/checkout@v6")
    code, report = _run(repo, "--no-cache", *_github(fake_registry))
    [row] = _rows(report)
    assert (row["status"], row["latest"], row["eligible"]) == ("held-back", "v8", None)
    held = {h["version"]: h for h in row["heldBack"]}
    assert held["v7"]["reason"] == "released 24h ago; major updates wait 72h"
    assert held["v8"]["releasedAt"] is None
    assert held["v8"]["reason"] == (
        "age unknown: its publish time could not be looked up (see publish times unavailable);"
        " major updates wait 72h"
    )
    url = f"{fake_registry.url('github')}/repos/actions/checkout/commits/{v8}"
    expected = (
        "publish times unavailable: GitHub repository 'actions/checkout' (commit dates): tag v8"
        f" names commit {v8[:12]}…, which GitHub does not know (HTTP 404 from {url})"
    )
    assert row["failedLookup"] == expected
    assert row["reason"].endswith(expected)
    assert "OCI" not in json.dumps(row)
    assert report["summary"]["failedLookups"] == 1
    assert code == 3


def test_an_older_tag_of_known_age_is_eligible_when_the_newest_ones_date_failed(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``@v6`` under a one-hour wait: v7 (a day old) is eligible, v8 is held back.

    v8's commit answers 404: held back for the failed lookup, and v7 below it, whose age
    v7.2.0's release gives, is still asked and proposed.
    """
    _checkout_repo(fake_registry)
    route = f"GET /repos/actions/checkout/commits/{_sha('v8')}"
    fake_registry.host("github").fail_next(5, 404, {}, b'{"message":"Not Found"}', route=route)
    repo = _workflow(tmp_path, "actions/checkout@v6")
    code, report = _run(repo, "--no-cache", *_github(fake_registry), "--min-release-age", "1h")
    [row] = _rows(report)
    assert (row["status"], row["latest"], row["eligible"]) == ("outdated", "v8", "v7")
    assert row["eligibleReleasedAt"] == (NOW - timedelta(days=1)).strftime(STAMP)
    assert [(h["version"], h["releasedAt"]) for h in row["heldBack"]] == [("v8", None)]
    assert row["failedLookup"].startswith("publish times unavailable: ")
    assert "HTTP 404" in row["failedLookup"]
    assert code == 3


def test_a_tag_without_a_date_says_so_in_githubs_words(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A commit GitHub answers without any date: "age unknown" in GitHub's words, no failure."""
    _checkout_repo(fake_registry)
    v8 = _sha("v8")
    body = json.dumps({"sha": v8, "commit": {"author": None, "committer": None}}).encode()
    route = f"GET /repos/actions/checkout/commits/{v8}"
    fake_registry.host("github").fail_next(5, 200, {}, body, route=route)
    repo = _workflow(tmp_path, "actions/checkout@v6")
    code, report = _run(repo, "--no-cache", *_github(fake_registry), "--min-release-age", "1h")
    [row] = _rows(report)
    assert (row["status"], row["eligible"]) == ("outdated", "v7")
    [held] = row["heldBack"]
    assert held["reason"] == (
        "age unknown: a GitHub tag has no date of its own, and no release or commit date was"
        " found; major updates wait 1h"
    )
    assert row["failedLookup"] is None
    assert code == 0


@pytest.mark.parametrize("cache", ["none", "file"])
def test_each_github_document_is_fetched_once_per_run(
    fake_registry: FakeRegistry, tmp_path: Path, cache: str
) -> None:
    """Eight ``uses:`` of two repositories: each tag and release list is one GET per run.

    The fake sends no ``max-age`` (as the trial's did): HTTP freshness alone would ask again
    for every row and every publish-time round.
    """
    _checkout_repo(fake_registry)
    fake_registry.github.add_repo(
        "actions",
        "setup-python",
        tags={"v5.0.0": NOW - timedelta(days=90), "v5.1.0": NOW - timedelta(days=1)},
    )
    fake_registry.host("github").cache_control = None
    repo = _workflow(
        tmp_path,
        "actions/checkout@v6",
        "actions/checkout@v6.0.0",
        "actions/checkout@v7",
        "actions/checkout@v7.1.0",
        f"actions/checkout@{_sha('v6.0.0')} # v6.0.0",
        "actions/setup-python@v5.0.0",
        "actions/setup-python@v5.0.0",
        "actions/setup-python@v5.1.0",
    )
    where = ["--no-cache"] if cache == "none" else ["--cache", str(tmp_path / "c.sqlite3")]
    code, report = _run(repo, *where, *_github(fake_registry))
    assert code == 0
    assert len(_rows(report)) == 8
    lists = {
        route: count
        for route, count in _routes(fake_registry, "github").items()
        if route.endswith(("/tags", "/releases"))
    }
    assert lists == {
        "GET /repos/actions/checkout/tags": 1,
        "GET /repos/actions/checkout/releases": 1,
        "GET /repos/actions/setup-python/tags": 1,
        "GET /repos/actions/setup-python/releases": 1,
    }
    assert report["summary"]["failedLookups"] == 0


# --- Docker Hub ---------------------------------------------------------------------------------

PYTHON_TAGS = ("3.12-slim-trixie", "3.13-slim-trixie", "3.14-slim-trixie", "3.15.0a2-slim-trixie")


def _python_image(registry: FakeRegistry, root: Path, pushed: dict[str, datetime]) -> Path:
    registry.oci.add("library/python", dict.fromkeys(PYTHON_TAGS))
    registry.docker_hub.add("library/python", pushed)
    repo = root / "repo"
    repo.mkdir()
    (repo / "Dockerfile").write_text("FROM python:3.12-slim-trixie\n")
    return repo


def _docker(registry: FakeRegistry) -> list[str]:
    return [
        "--registry",
        f"docker={registry.url('oci')}",
        "--registry",
        f"docker-hub={registry.url('docker-hub')}",
    ]


def test_a_docker_hub_404_for_the_newest_tag_fails_its_lookup_and_an_older_tag_is_eligible(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """The Hub does not know 3.14-slim-trixie (404); 3.13-slim-trixie is eight months old.

    3.13 is asked after 3.14 and proposed; 3.14 is held back for the failed lookup, with the
    404 and its URL; the run exits 3.
    """
    pushed = {
        "3.12-slim-trixie": NOW - timedelta(days=400),
        "3.13-slim-trixie": NOW - timedelta(days=240),
    }
    repo = _python_image(fake_registry, tmp_path, pushed)
    code, report = _run(repo, "--no-cache", *_docker(fake_registry))
    [row] = _rows(report)
    assert (row["status"], row["current"], row["latest"], row["eligible"]) == (
        "outdated",
        "3.12-slim-trixie",
        "3.14-slim-trixie",
        "3.13-slim-trixie",
    )
    assert row["updateType"] == "minor"
    assert row["eligibleReleasedAt"] == (NOW - timedelta(days=240)).strftime(STAMP)
    [held] = row["heldBack"]
    assert (held["version"], held["releasedAt"], held["eligibleAt"]) == (
        "3.14-slim-trixie",
        None,
        None,
    )
    assert held["reason"] == (
        "age unknown: its publish time could not be looked up (see publish times unavailable);"
        " minor updates wait 72h"
    )
    url = (
        f"{fake_registry.url('docker-hub')}"
        "/v2/namespaces/library/repositories/python/tags/3.14-slim-trixie"
    )
    expected = (
        "publish times unavailable: image 'docker.io/library/python' (Docker Hub API): tag"
        f" '3.14-slim-trixie', which the registry lists, is not known there (HTTP 404 from {url})"
    )
    assert row["failedLookup"] == expected
    assert report["summary"]["failedLookups"] == 1
    prefix = "GET /v2/namespaces/library/repositories/python/tags/"
    assert _routes(fake_registry, "docker-hub") == {
        f"{prefix}3.14-slim-trixie": 1,
        f"{prefix}3.13-slim-trixie": 1,
    }
    assert code == 3


def test_every_newer_tag_unknown_to_the_hub_holds_all_and_names_each(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Neither newer tag is known to the Hub: both held for failed lookups, both named."""
    repo = _python_image(fake_registry, tmp_path, {"3.12-slim-trixie": NOW - timedelta(days=400)})
    code, report = _run(repo, "--no-cache", *_docker(fake_registry))
    [row] = _rows(report)
    assert (row["status"], row["eligible"]) == ("held-back", None)
    assert [h["version"] for h in row["heldBack"]] == ["3.13-slim-trixie", "3.14-slim-trixie"]
    assert "tag '3.13-slim-trixie', which the registry lists" in row["failedLookup"]
    assert "tag '3.14-slim-trixie', which the registry lists" in row["failedLookup"]
    assert code == 3


def test_a_failed_tag_date_is_asked_again_by_the_next_run(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A failed date is never kept in the catalog view: once the Hub knows it, it is used.

    The second run reuses the first one's catalog view (no tag list request) and asks the
    Hub again for the tag whose date failed.
    """
    pushed = {
        "3.12-slim-trixie": NOW - timedelta(days=400),
        "3.13-slim-trixie": NOW - timedelta(days=240),
    }
    repo = _python_image(fake_registry, tmp_path, pushed)
    cache = ["--cache", str(tmp_path / "c.sqlite3")]
    first, _ = _run(repo, *cache, *_docker(fake_registry), now=False)
    assert first == 3
    fake_registry.docker_hub.add("library/python", {"3.14-slim-trixie": NOW - timedelta(days=30)})
    fake_registry.host("oci").reset_stats()
    fake_registry.host("docker-hub").reset_stats()
    code, report = _run(repo, *cache, *_docker(fake_registry), now=False)
    assert fake_registry.host("oci").requests == 0  # the view answered
    assert list(_routes(fake_registry, "docker-hub")) == [
        "GET /v2/namespaces/library/repositories/python/tags/3.14-slim-trixie"
    ]
    [row] = _rows(report)
    assert (row["status"], row["eligible"], row["failedLookup"]) == (
        "outdated",
        "3.14-slim-trixie",
        None,
    )
    assert code == 0


def test_a_failed_tag_date_never_shows_the_hub_credential(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A Hub base URL with a login: the failed lookup names the URL without the password."""
    secret = "STANDIN-hub-password-dates"  # noqa: S105 - a test stand-in, never a real secret
    repo = _python_image(fake_registry, tmp_path, {"3.12-slim-trixie": NOW - timedelta(days=400)})
    hub = fake_registry.url("docker-hub").replace("http://", f"http://user:{secret}@")
    args = ["--no-cache", "--registry", f"docker={fake_registry.url('oci')}"]
    args += ["--registry", f"docker-hub={hub}"]
    result = runner.invoke(
        app,
        ["run", str(repo), "--format", "json", "--min-release-age", "3d", *args],
        env=_NO_TOKEN,
        catch_exceptions=False,
    )
    assert result.exit_code == 3
    [row] = _rows(json.loads(result.stdout))
    assert "HTTP 404 from http://127.0.0.1:" in row["failedLookup"]
    assert secret not in result.stdout
    assert secret not in result.stderr
