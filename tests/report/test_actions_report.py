"""GitHub Actions rows in the report: ecosystem ``github-actions``, short commit SHAs in tables."""

from __future__ import annotations

import json
from datetime import UTC, datetime

from patchula.models import Dependency, Finding
from patchula.report.dashboard import render_markdown
from patchula.report.model import build_report, ecosystem
from patchula.report.render import (
    render_json,
    render_plain,
    short_digest,
    shorten_digests,
)
from patchula.scan import RepoResult, Row, ScanResult
from patchula.settings import Settings

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
PINNED = "c2742d15d5b9a192c72fb76ee2ba9e5e25bc9593"
NOW_SHA = "05dd50bea883fa0fd7f61dc55c983ff44ad7f8fb"
NEW = "8ff54bdcd4c9169717f774d19f7ed41a006ae2be"


def _row(manager: str, datasource: str, digest: str | None = None) -> Row:
    dep = Dependency(
        manager=manager,
        file=".github/workflows/ci.yml",
        line=7,
        name="actions/checkout",
        package_name="actions/checkout",
        datasource=datasource,
        versioning="docker",
        dep_type="action",
        declared=f"actions/checkout@{PINNED} # v4.2.2",
        constraint="v4.2.2",
        digest=digest,
    )
    finding = Finding(
        status="outdated",
        current="v4.2.2",
        current_source="pin",
        latest="v5.0.0",
        eligible="v5.0.0",
        update_type="major",
        digest=digest,
        current_digest=NOW_SHA,
        new_digest=NEW,
        reason=f"the comment says v4.2.2, but the pinned commit {PINNED} is not v4.2.2's "
        f"({NOW_SHA})",
    )
    return Row(dep, finding)


def test_the_ecosystem_of_action_rows_is_github_actions() -> None:
    """``github_actions`` rows on GitHub tags or releases; its image rows and others keep theirs."""
    assert ecosystem("github_actions", "github-tags") == "github-actions"
    assert ecosystem("github_actions", "github-releases") == "github-actions"
    assert ecosystem("github_actions", "docker") == "docker"
    assert ecosystem("dockerfile", "docker") == "docker"
    assert ecosystem("package_json", "npm") == "npm"


def _report() -> str:
    repo = RepoResult(target="app", root="/src/app", commit=None)
    repo.rows = [_row("github_actions", "github-tags", PINNED)]
    return render_json(build_report(ScanResult(NOW, [repo], {}), Settings(), {}))


def test_json_keeps_every_commit_in_full_and_counts_github_actions() -> None:
    """The JSON row: ecosystem, the reference as written, current, the pin and the SHA to pin."""
    report = json.loads(_report())
    [row] = report["repositories"][0]["dependencies"]
    assert (row["ecosystem"], row["datasource"], row["declared"]) == (
        "github-actions",
        "github-tags",
        f"actions/checkout@{PINNED} # v4.2.2",
    )
    assert (row["current"], row["digest"], row["currentDigest"], row["newDigest"]) == (
        "v4.2.2",
        PINNED,
        NOW_SHA,
        NEW,
    )
    assert PINNED in row["reason"]
    assert set(report["summary"]["byEcosystem"]) == {"github-actions"}


def test_short_commit_shas() -> None:
    """A commit SHA standing alone is ``abc1234…`` (git's 7 digits); longer hex runs are not."""
    assert short_digest(PINNED) == "c2742d1…"
    assert short_digest("a" * 64) == "aaaaaaa…"  # a SHA-256 repository's commit
    assert short_digest("a" * 41) == "a" * 41
    assert shorten_digests(f"o/r@{PINNED} # v4") == "o/r@c2742d1… # v4"
    assert shorten_digests("x" + PINNED) == "x" + PINNED  # part of a longer word
    assert shorten_digests("sha256:" + "b" * 64) == "sha256:bbbbbbbb…"  # images unchanged


def test_tables_show_short_commit_shas() -> None:
    """Plain and Markdown: the reference, current and eligible with ``abc1234…``, never 40 hex."""
    repo = RepoResult(target="app", root="/src/app", commit=None)
    repo.rows = [_row("github_actions", "github-tags", PINNED)]
    report = build_report(ScanResult(NOW, [repo], {}), Settings(), {})
    plain, markdown = render_plain(report, show_all=True), render_markdown(report)
    assert "actions/checkout@c2742d1… # v4.2.2" in plain  # the dashboard shows no declared
    for text in (plain, markdown):
        assert "v4.2.2@c2742d1…" in text
        assert "v5.0.0@8ff54bd…" in text
        assert "the pinned commit c2742d1… is not v4.2.2's (05dd50b…)" in text
        assert PINNED not in text
        assert NOW_SHA not in text
