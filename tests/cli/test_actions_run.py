"""``patchula run`` on GitHub Actions workflows end to end: the real plugins, the fake GitHub.

A workflow with every kind of ``uses:`` (a tag, a floating ``@v4``, SHA pins with a matching
comment, a disagreeing comment and none, a branch, a non-version tag, a reusable workflow, a
``./local`` action, a ``docker://`` step) against the fake registry's GitHub host
(``--registry github=…``) and its OCI host (``--registry docker=…``). What issue 14's items 1
and 5 promise, seen from the user's side: rows with file and line, ecosystem
``github-actions``, the reference as written, current (and the pinned SHA), latest, the SHA to
pin (``newDigest``), release dates and held-back evidence; a warm run that sends only
conditional requests; a 401 that names the token source and never shows the token.
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
# A test stand-in for a GitHub token, never a real secret.
TOKEN = "STANDIN-gh-token-actions-e2e"  # noqa: S105 - a test stand-in
BRANCH_SHA = "b" * 40
UNKNOWN_SHA = "0123456789abcdef0123456789abcdef01234567"
WORKFLOWS = ".github/workflows"


def _sha(repo: str, tag: str) -> str:
    owner, name = repo.split("/")
    return GitHub.commit_of(owner, name, tag)


def _repos(registry: FakeRegistry) -> None:
    """Three repositories of actions.

    ``actions/checkout`` (releases, and the floating tags of each), ``acme/tools`` (a branch
    and a non-version tag), ``acme/workflows`` (tags only, no releases).
    """
    github = registry.github
    releases = {
        "v5.0.0": NOW - timedelta(days=1),  # too young for a 3-day minimum age
        "v4.3.0": NOW - timedelta(days=40),
        "v4.2.2": NOW - timedelta(days=100),
        "v4.2.1": NOW - timedelta(days=120),
        "v4.1.0": NOW - timedelta(days=200),
    }
    github.add_repo(
        "actions", "checkout", releases, tags=("v5", "v5.0", "v4", "v4.3", "v4.2", "v4.1")
    )
    # Floating tags point at the commit of the newest release they cover, as maintainers
    # move them: v4.2.2's commit is also v4.2's (and v4.3.0's is v4's and v4.3's).
    for floating, release in (
        ("v5", "v5.0.0"),
        ("v5.0", "v5.0.0"),
        ("v4", "v4.3.0"),
        ("v4.3", "v4.3.0"),
        ("v4.2", "v4.2.2"),
        ("v4.1", "v4.1.0"),
    ):
        github.point_tag("actions", "checkout", floating, _sha("actions/checkout", release))
    github.add_repo(
        "acme",
        "tools",
        {"v2.0.0": NOW - timedelta(days=30)},
        tags=("nightly",),
        branches={"main": BRANCH_SHA},
    )
    github.add_repo(
        "acme",
        "workflows",
        tags={"v1.2.0": NOW - timedelta(days=90), "v1.3.0": NOW - timedelta(days=9)},
    )
    registry.oci.add("library/alpine", dict.fromkeys(("3.19", "3.20")))
    # Docker Hub dates the image tags (a tag it did not know would be a failed date lookup).
    registry.docker_hub.add(
        "library/alpine", {"3.19": NOW - timedelta(days=300), "3.20": NOW - timedelta(days=1)}
    )


def _workflow() -> str:
    v422 = _sha("actions/checkout", "v4.2.2")
    v421 = _sha("actions/checkout", "v4.2.1")
    return f"""\
name: ci
on: push
jobs:
  build:
    runs-on: ubuntu-latest
    steps:
      - uses: actions/checkout@v4.1.0
      - uses: actions/checkout@v4
      - uses: actions/checkout@v4.2
      - uses: actions/checkout@{v422} # v4.2.2
      - uses: actions/checkout@{v421} # v4.2.2
      - uses: actions/checkout@{v422}
      - uses: actions/checkout@{UNKNOWN_SHA}
      - uses: acme/tools/lint@main
      - uses: acme/tools@nightly
      - uses: ./.github/actions/local
      - uses: docker://alpine:3.19
  release:
    uses: acme/workflows/.github/workflows/release.yml@v1.2.0
"""


def _checkout(root: Path) -> Path:
    repo = root / "repo"
    (repo / WORKFLOWS).mkdir(parents=True)
    (repo / WORKFLOWS / "ci.yml").write_text(_workflow())
    # An image pinned by digest alone: no reverse lookup of image digests, still skipped.
    (repo / "Dockerfile").write_text("FROM alpine@sha256:" + "c" * 64 + "\n")
    return repo


def _args(registry: FakeRegistry, *more: str) -> list[str]:
    return [
        "--format",
        "json",
        "--now",
        NOW.isoformat(),
        "--min-release-age",
        "3d",
        "--registry",
        f"github={registry.url('github')}",
        "--registry",
        f"docker={registry.url('oci')}",
        "--registry",
        f"docker-hub={registry.url('docker-hub')}",
        *more,
    ]


# No token of the machine running the tests reaches the fake (or the output).
_NO_TOKEN = {"GH_TOKEN": "", "GITHUB_TOKEN": "", "GITHUB_API_URL": ""}


def _run(*args: str, env: dict[str, str] | None = None) -> tuple[int, dict[str, Any], str]:
    result = runner.invoke(
        app, ["run", *args], env={**_NO_TOKEN, **(env or {})}, catch_exceptions=False
    )
    return result.exit_code, json.loads(result.stdout), result.stderr


def _rows(report: dict[str, Any]) -> dict[tuple[str, int], dict[str, Any]]:
    rows = [row for repo in report["repositories"] for row in repo["dependencies"]]
    return {(row["file"], row["line"]): row for row in rows}


def _view(row: dict[str, Any]) -> tuple[Any, ...]:
    return (
        row["ecosystem"],
        row["depType"],
        row["current"],
        row["latest"],
        row["eligible"],
        row["updateType"],
        row["status"],
    )


CI = f"{WORKFLOWS}/ci.yml"


def test_every_kind_of_uses_reference_is_a_row_with_file_and_line(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Each reference's verdict, as a user reads it in the JSON report.

    Tags keep their precision, SHA pins take their comment's tag (checked against its commit
    now) or the tag at their commit, branches are tracked by their commit; held-back releases
    say when they become eligible, and each date whether a release or a commit gave it.
    """
    _repos(fake_registry)
    repo = _checkout(tmp_path)
    code, report, _ = _run(str(repo), *_args(fake_registry, "--cache", str(tmp_path / "c.db")))
    assert code == 0
    rows = _rows(report)
    v422 = _sha("actions/checkout", "v4.2.2")
    v421 = _sha("actions/checkout", "v4.2.1")
    v430 = _sha("actions/checkout", "v4.3.0")
    assert {key: _view(row) for key, row in rows.items()} == {
        # ``runs-on: ubuntu-latest`` moves by itself: a skipped runner row.
        (CI, 5): ("github-actions", "runs-on", None, None, None, None, "skipped"),
        # v5.0.0 is a day old: held back by the 3-day minimum age; v4.3.0 is eligible.
        (CI, 7): ("github-actions", "action", "v4.1.0", "v5.0.0", "v4.3.0", "minor", "outdated"),
        # A floating major ref proposes the next major (v5, held back: its commit is a day
        # old), never v4.3.0.
        (CI, 8): ("github-actions", "action", "v4", "v5", None, "major", "held-back"),
        (CI, 9): ("github-actions", "action", "v4.2", "v5.0", "v4.3", "minor", "outdated"),
        (CI, 10): ("github-actions", "action", "v4.2.2", "v5.0.0", "v4.3.0", "minor", "outdated"),
        (CI, 11): ("github-actions", "action", "v4.2.2", "v5.0.0", "v4.3.0", "minor", "outdated"),
        (CI, 12): ("github-actions", "action", "v4.2.2", "v5.0.0", "v4.3.0", "minor", "outdated"),
        (CI, 13): ("github-actions", "action", None, None, None, None, "unknown"),
        (CI, 14): ("github-actions", "action", "main", None, None, None, "up-to-date"),
        (CI, 15): ("github-actions", "action", "nightly", None, None, None, "up-to-date"),
        (CI, 16): ("github-actions", "action", None, None, None, None, "skipped"),
        # 3.20 was last pushed a day ago (Docker Hub): held back by the 3-day wait.
        (CI, 17): ("docker", "step", "3.19", "3.20", None, "minor", "held-back"),
        (CI, 19): (
            "github-actions", "reusable-workflow", "v1.2.0", "v1.3.0", "v1.3.0", "minor",
            "outdated",
        ),
        ("Dockerfile", 1): ("docker", "final", None, None, None, None, "skipped"),
    }  # fmt: skip
    # The reference as written (with the comment a tag was read from), the pin, the SHA to pin.
    matching = rows[CI, 10]
    assert matching["declared"] == f"actions/checkout@{v422} # v4.2.2"
    assert (matching["digest"], matching["currentDigest"], matching["newDigest"]) == (
        v422,
        v422,
        v430,
    )
    assert matching["reason"] is None
    assert (matching["name"], matching["packageName"]) == ("actions/checkout", "actions/checkout")
    disagreeing = rows[CI, 11]
    assert (disagreeing["digest"], disagreeing["currentDigest"], disagreeing["newDigest"]) == (
        v421,
        v422,
        v430,
    )
    assert disagreeing["reason"] == (
        f"the comment says v4.2.2, but the pinned commit {v421} is not v4.2.2's ({v422})"
    )
    bare = rows[CI, 12]
    assert bare["declared"] == f"actions/checkout@{v422}"
    assert bare["reason"] == "v4.2.2, the tag at the pinned commit"  # v4.2 names it too
    assert (bare["digest"], bare["currentDigest"], bare["newDigest"]) == (v422, v422, v430)
    assert rows[CI, 13]["reason"] == f"no tag points at the pinned commit {UNKNOWN_SHA}"
    assert rows[CI, 13]["digest"] == UNKNOWN_SHA
    branch = rows[CI, 14]
    assert (branch["name"], branch["packageName"]) == ("acme/tools/lint", "acme/tools")
    assert branch["reason"] == f"tracks the branch main (now {BRANCH_SHA})"
    assert branch["currentDigest"] == BRANCH_SHA
    nightly = _sha("acme/tools", "nightly")
    assert rows[CI, 15]["reason"] == f"tracks the tag nightly (now {nightly})"
    assert rows[CI, 16]["declared"] == "./.github/actions/local"
    assert rows[CI, 19]["name"] == "acme/workflows/.github/workflows/release.yml"
    assert rows["Dockerfile", 1]["reason"] == (
        "a digest without a tag: no tag to compare it with; not looked up"
    )
    # Held-back evidence: v5.0.0's release date and when it becomes eligible.
    [held] = rows[CI, 7]["heldBack"]
    assert (held["version"], held["releasedAt"], held["eligibleAt"]) == (
        "v5.0.0",
        (NOW - timedelta(days=1)).isoformat().replace("+00:00", "Z"),
        (NOW + timedelta(days=2)).isoformat().replace("+00:00", "Z"),
    )
    assert [h["version"] for h in rows[CI, 8]["heldBack"]] == ["v5"]
    assert rows[CI, 7]["eligibleReleasedAt"] == "2026-10-22T12:00:00Z"
    # Each date says where it came from: the tag's release, else the tag's commit.
    assert rows[CI, 7]["dateSources"] == {"v5.0.0": "release", "v4.3.0": "release"}
    # A floating tag has no release of its own: it is at v5.0.0's commit, dated by that
    # release without a commit request.
    assert rows[CI, 8]["dateSources"] == {"v5": "same-commit-release"}
    assert rows[CI, 8]["heldBack"][0]["releasedAt"] == held["releasedAt"]
    assert rows[CI, 19]["dateSources"] == {"v1.3.0": "commit"}  # a repository without any
    assert rows[CI, 14]["dateSources"] is None  # a branch shows no date
    counts = report["summary"]["byEcosystem"]
    assert set(counts) == {"docker", "github-actions"}


def test_the_table_shows_short_commit_shas(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """``abc1234…`` for every commit in a table row: the reference, current, eligible, notes."""
    _repos(fake_registry)
    repo = _checkout(tmp_path)
    args = [a for a in _args(fake_registry, "--no-cache") if a not in {"--format", "json"}]
    result = runner.invoke(app, ["run", str(repo), *args, "-v"], env=_NO_TOKEN, terminal_width=400)
    v422 = _sha("actions/checkout", "v4.2.2")[:7]
    v421 = _sha("actions/checkout", "v4.2.1")[:7]
    v430 = _sha("actions/checkout", "v4.3.0")[:7]
    lines = result.stdout.splitlines()
    [disagreeing] = [line for line in lines if f"@{v421}… # v4.2.2" in line]
    assert f"v4.2.2@{v421}…" in disagreeing
    assert f"v4.3.0@{v430}…" in disagreeing
    assert f"the pinned commit {v421}… is not v4.2.2's ({v422}…)" in disagreeing
    assert f"tracks the branch main ({BRANCH_SHA[:7]}…)" not in result.stdout  # "now" stays
    assert f"tracks the branch main (now {BRANCH_SHA[:7]}…)" in result.stdout
    assert _sha("actions/checkout", "v4.2.1") not in result.stdout


def test_a_warm_run_sends_only_conditional_requests(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """The second run with the same cache revalidates (304) every GitHub page it reads."""
    _repos(fake_registry)
    github = fake_registry.host("github")
    github.cache_control = "max-age=0"  # stale at once: the warm run must revalidate
    repo = _checkout(tmp_path)
    args = _args(fake_registry, "--cache", str(tmp_path / "c.db"))
    code, cold, _ = _run(str(repo), *args)
    assert code == 0
    assert github.requests > 0
    github.reset_stats()
    code, warm, _ = _run(str(repo), *args)
    assert code == 0
    with github.lock:
        log = list(github.log)
    assert log
    assert {entry.status for entry in log} == {304}
    assert any("/tags" in entry.path for entry in log)
    assert any("/releases" in entry.path for entry in log)

    def verdicts(report: dict[str, Any]) -> dict[tuple[str, int], tuple[Any, ...]]:
        return {k: (*_view(r), r["newDigest"], r["reason"]) for k, r in _rows(report).items()}

    assert verdicts(warm) == verdicts(cold)


@pytest.mark.parametrize("variable", ["GH_TOKEN", "GITHUB_TOKEN"])
def test_a_refused_token_names_its_source_and_is_never_shown(
    fake_registry: FakeRegistry, tmp_path: Path, variable: str
) -> None:
    """GitHub's 401 to the token is an error row naming the variable; the token is nowhere."""
    _repos(fake_registry)
    fake_registry.host("github").required_authorization = "Bearer STANDIN-another-token"
    repo = _checkout(tmp_path)
    result = runner.invoke(
        app,
        ["run", str(repo), *_args(fake_registry, "--no-cache")],
        env={**_NO_TOKEN, variable: TOKEN},
        catch_exceptions=False,
    )
    assert result.exit_code == 3  # some lookups failed
    rows = _rows(json.loads(result.stdout))
    reason = rows[CI, 7]["reason"]
    assert rows[CI, 7]["status"] == "error"
    assert f"the credential from {variable} was refused" in reason
    assert "HTTP 401" in reason
    assert TOKEN not in result.stdout
    assert TOKEN not in result.stderr
    assert rows[CI, 17]["status"] == "held-back"  # the image step is not GitHub's


def test_without_a_token_a_401_says_where_one_goes(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """An anonymous 401 names the variables a token can be given in."""
    _repos(fake_registry)
    fake_registry.host("github").required_authorization = "Bearer STANDIN-another-token"
    repo = _checkout(tmp_path)
    code, report, _ = _run(str(repo), *_args(fake_registry, "--no-cache"))
    assert code == 3
    reason = _rows(report)[CI, 7]["reason"]
    assert "add one to the GH_TOKEN or GITHUB_TOKEN environment variable" in reason


def test_a_pin_whose_comment_names_no_tag_says_whose_commit_it_is(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``@<v4.2.2's sha> # v9.9.9``: ``unknown``, and the row names the tag the commit is."""
    _repos(fake_registry)
    v422 = _sha("actions/checkout", "v4.2.2")
    repo = tmp_path / "repo"
    (repo / WORKFLOWS).mkdir(parents=True)
    steps = (
        f"      - uses: actions/checkout@{v422} # v9.9.9\n"
        f"      - uses: actions/checkout@{UNKNOWN_SHA} # v9.9.9\n"
    )
    (repo / WORKFLOWS / "ci.yml").write_text(f"on: push\njobs:\n  a:\n    steps:\n{steps}")
    code, report, _ = _run(str(repo), *_args(fake_registry, "--no-cache"))
    rows = _rows(report)
    assert (code, rows[CI, 5]["status"], rows[CI, 5]["current"]) == (0, "unknown", "v9.9.9")
    assert rows[CI, 5]["reason"] == (
        "pinned version v9.9.9 is not in the github-tags release list; the commit of tag v9.9.9"
        " could not be read: GitHub has no tag or branch of that name;"
        f" the pinned commit {v422} is v4.2.2's in the tag list"
    )
    # A commit no tag has: nothing more to say.
    assert "in the tag list" not in rows[CI, 6]["reason"]


@pytest.mark.parametrize("token", ["", TOKEN])
def test_a_qualified_ref_is_worded_by_what_it_is(
    fake_registry: FakeRegistry, tmp_path: Path, token: str
) -> None:
    """``@refs/tags/v4.2.1`` is a tag, ``@refs/heads/main`` a branch, on REST and GraphQL."""
    _repos(fake_registry)
    repo = tmp_path / "repo"
    (repo / WORKFLOWS).mkdir(parents=True)
    steps = "".join(
        f"      - uses: {uses}\n"
        for uses in (
            "actions/checkout@refs/tags/v4.2.1",
            "acme/tools@refs/heads/main",
            "actions/checkout@refs/tags/v9.9.9",
            "acme/tools@refs/heads/v2.0.0",
        )
    )
    (repo / WORKFLOWS / "ci.yml").write_text(f"on: push\njobs:\n  a:\n    steps:\n{steps}")
    code, report, _ = _run(str(repo), *_args(fake_registry, "--no-cache"), env={"GH_TOKEN": token})
    rows = _rows(report)
    v421 = _sha("actions/checkout", "v4.2.1")
    assert code == 0
    assert rows[CI, 5]["reason"] == f"tracks the tag refs/tags/v4.2.1 (now {v421})"
    assert rows[CI, 6]["reason"] == f"tracks the branch refs/heads/main (now {BRANCH_SHA})"
    assert rows[CI, 7]["reason"] == (
        "the commit of tag refs/tags/v9.9.9 could not be read: GitHub has no tag or branch of"
        " that name"
    )
    # A branch named like a tag is never taken for the tag.
    assert rows[CI, 8]["reason"] == (
        "the commit of branch refs/heads/v2.0.0 could not be read: GitHub has no tag or branch"
        " of that name"
    )


def _floating_repos(registry: FakeRegistry) -> None:
    """Two repositories of floating tags.

    ``acme/setup``: ``v1`` at ``v1.2.3``, then ``v2.0.0`` with no ``v2`` tag; ``acme/lag``:
    ``v2`` left at ``v2.0.0``'s commit after ``v2.1.0``.
    """
    github = registry.github
    days = {"v1": 200, "v1.2.3": 200, "v2.0.0": 30}
    github.add_repo("acme", "setup", tags={t: NOW - timedelta(days=d) for t, d in days.items()})
    github.point_tag("acme", "setup", "v1", _sha("acme/setup", "v1.2.3"))
    days = {"v2": 90, "v2.0.0": 90, "v2.1.0": 10}
    github.add_repo("acme", "lag", tags={t: NOW - timedelta(days=d) for t, d in days.items()})
    github.point_tag("acme", "lag", "v2", _sha("acme/lag", "v2.0.0"))


FLOATING = "no floating v2 tag; pinning v2.0.0"
LAGGING = (
    "tag v2 points at v2.0.0's commit, not the newest v2.1.0's (a user on v2 does not get v2.1.0)"
)


@pytest.mark.parametrize("token", ["", TOKEN])
def test_floating_majors_are_proposed_in_full_or_named_behind_in_json_and_table(
    fake_registry: FakeRegistry, tmp_path: Path, token: str
) -> None:
    """``@v1`` without a ``v2`` tag is outdated to ``v2.0.0``; ``@v2`` behind ``v2.1.0`` says so.

    The JSON report's ``reason`` and the table's notes carry the same words, on REST and on
    GraphQL (with a token); the up-to-date row is in the table with ``-v``, as every one is.
    """
    _floating_repos(fake_registry)
    repo = tmp_path / "repo"
    (repo / WORKFLOWS).mkdir(parents=True)
    steps = "".join(f"      - uses: {uses}\n" for uses in ("acme/setup@v1", "acme/lag@v2"))
    (repo / WORKFLOWS / "ci.yml").write_text(f"on: push\njobs:\n  a:\n    steps:\n{steps}")
    args = _args(fake_registry, "--no-cache")
    code, report, _ = _run(str(repo), *args, env={"GH_TOKEN": token})
    rows = _rows(report)
    assert code == 0
    assert (_view(rows[CI, 5]), rows[CI, 5]["reason"]) == (
        ("github-actions", "action", "v1", "v2.0.0", "v2.0.0", "major", "outdated"),
        FLOATING,
    )
    assert (_view(rows[CI, 6]), rows[CI, 6]["reason"]) == (
        ("github-actions", "action", "v2", "v2", None, None, "up-to-date"),
        LAGGING,
    )
    table = [*args[:1], "table", *args[2:]]
    result = runner.invoke(
        app,
        ["run", str(repo), "-v", *table],
        env={**_NO_TOKEN, "GH_TOKEN": token, "COLUMNS": ""},
        catch_exceptions=False,
    )
    lines = result.stdout.splitlines()
    assert any("acme/setup" in line and FLOATING in line for line in lines), result.stdout
    assert any("acme/lag" in line and LAGGING in line for line in lines), result.stdout
