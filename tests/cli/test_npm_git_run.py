"""``patchula run`` on npm git dependencies that name a GitHub tag (``github:o/r#v1.2.0``).

npm installs the repository at that commit-ish, ``#semver:<range>`` the highest tag in range
(docs.npmjs.com, package.json "Git URLs as Dependencies"); as Renovate's npm manager does, the
row is looked up on the repository's tags (``github-tags``, npm versioning). A branch or a
commit names no version: the row stays skipped.
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
_NO_TOKEN = {"GH_TOKEN": "", "GITHUB_TOKEN": "", "GITHUB_API_URL": ""}


def _run(registry: FakeRegistry, repo: Path) -> tuple[int, dict[str, dict[str, Any]]]:
    args = ["run", str(repo), "--format", "json", "--now", NOW.isoformat(), "--no-cache"]
    args += ["--registry", f"github={registry.url('github')}"]
    args += ["--registry", f"npm={registry.url('npm')}"]
    result = CliRunner().invoke(app, args, env=_NO_TOKEN, catch_exceptions=False)
    report = json.loads(result.stdout)
    return result.exit_code, {d["name"]: d for d in report["repositories"][0]["dependencies"]}


def test_github_tag_dependencies_are_looked_up_on_the_repositorys_tags(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A tag pin moves to the newest tag; a ``semver:`` range to its newest tag in range."""
    old = NOW - timedelta(days=300)
    fake_registry.github.add_repo(
        "acme",
        "widget",
        {"v1.2.0": old, "v1.3.0": old + timedelta(days=10), "v2.0.0": old + timedelta(days=20)},
        tags={"nightly": None},
    )
    fake_registry.npm.add("left-pad", {"1.3.0": old})
    (tmp_path / "package.json").write_text(
        json.dumps(
            {
                "dependencies": {
                    "widget": "github:acme/widget#v1.2.0",
                    "ranged": "git+https://github.com/acme/widget.git#semver:^1.2.0",
                    "branch": "acme/widget#main",
                    "commit": "acme/widget#0123456789abcdef0123456789abcdef01234567",
                    "left-pad": "1.3.0",
                }
            },
            indent=2,
        )
    )
    code, rows = _run(fake_registry, tmp_path)
    widget = rows["widget"]
    assert (widget["datasource"], widget["packageName"]) == ("github-tags", "acme/widget")
    assert widget["ecosystem"] == "npm"
    assert (widget["status"], widget["current"], widget["latest"], widget["updateType"]) == (
        "outdated",
        "v1.2.0",
        "v2.0.0",
        "major",
    )
    ranged = rows["ranged"]
    assert (ranged["declared"], ranged["current"], ranged["latest"]) == (
        "git+https://github.com/acme/widget.git#semver:^1.2.0",
        "v1.3.0",
        "v2.0.0",
    )
    for name in ("branch", "commit"):
        assert rows[name]["status"] == "skipped", rows[name]
        assert rows[name]["datasource"] == "npm"
    assert rows["left-pad"]["status"] == "up-to-date"
    assert code == 0


def test_a_lockfile_entry_of_a_github_tag_dependency_is_not_its_current(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """package-lock's ``version`` of a git dependency is its package.json's, not a tag.

    The tag the manifest names (``#v1.2.0``) stays current; a ``semver:`` range is what a
    fresh install of the tag list resolves to, and no "lockfile out of date" note appears.
    """
    old = NOW - timedelta(days=300)
    fake_registry.github.add_repo("acme", "widget", {"v1.2.0": old, "v1.3.0": old})
    specs = {"widget": "github:acme/widget#v1.2.0", "ranged": "github:acme/widget#semver:~1.2.0"}
    (tmp_path / "package.json").write_text(json.dumps({"name": "x", "dependencies": specs}))
    git = "git+ssh://git@github.com/acme/widget.git#" + "0" * 40
    packages: dict[str, Any] = {"": {"name": "x", "dependencies": specs}}
    packages["node_modules/widget"] = {"version": "7.7.7", "resolved": git}
    packages["node_modules/ranged"] = {"version": "7.7.8", "resolved": git}
    lock = {"name": "x", "lockfileVersion": 3, "requires": True, "packages": packages}
    (tmp_path / "package-lock.json").write_text(json.dumps(lock))
    _, rows = _run(fake_registry, tmp_path)
    assert (rows["widget"]["current"], rows["widget"]["currentSource"]) == ("v1.2.0", "pin")
    assert (rows["ranged"]["current"], rows["ranged"]["latest"]) == ("v1.2.0", "v1.3.0")
    assert "lockfile" not in (rows["ranged"]["reason"] or "")
