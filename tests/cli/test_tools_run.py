"""``patchula run`` on mise / asdf / version files against the fake tool-release hosts."""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from patchula.settings import REGISTRY_NAMES
from tests.fake_registry import FakeRegistry

OLD = datetime(2024, 1, 1, tzinfo=UTC)
NOW = "2025-06-01T00:00:00Z"


def _node(registry: FakeRegistry) -> None:
    for version, lts, days in (
        ("20.0.0", None, 0),
        ("20.9.0", "Iron", 20),
        ("20.18.1", "Iron", 300),
        ("21.7.3", None, 120),
        ("22.11.0", "Jod", 310),
        ("22.12.0", "Jod", 330),
    ):
        registry.nodejs.add(version, OLD + timedelta(days=days), lts=lts)


def _run(registry: FakeRegistry, root: Path, *extra: str) -> tuple[int, dict[str, Any]]:
    args = ["run", str(root), "--format", "json", "--now", NOW]
    for name, host in (
        ("node", "nodejs"),
        ("python", "python-org"),
        ("go", "go-dev"),
        ("crates", "crates-index"),
        ("npm", "npm"),
        ("github", "github"),
    ):
        args += ["--registry", f"{name}={registry.url(host)}"]
    result = CliRunner().invoke(app, [*args, *extra], catch_exceptions=False)
    return result.exit_code, json.loads(result.stdout)


def _rows(report: dict[str, Any]) -> dict[tuple[str, str, str | None], dict[str, Any]]:
    return {
        (d["file"], d["name"], d["declared"]): d for d in report["repositories"][0]["dependencies"]
    }


def test_mise_tools_resolve_through_their_backends(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A node "20" is the newest 20.x, proposed as "22"; cargo:, npm: and LTS names resolve."""
    _node(fake_registry)
    fake_registry.crates.add("flip-link", {"0.1.7": OLD, "0.1.9": OLD + timedelta(days=40)})
    fake_registry.npm.add("prettier", {"3.3.3": OLD, "3.4.2": OLD + timedelta(days=50)})
    fake_registry.python_org.add("3.12.7", OLD)
    fake_registry.python_org.add("3.12.8", OLD + timedelta(days=60))
    fake_registry.python_org.add("3.13.1", OLD + timedelta(days=70))
    fake_registry.python_org.add("3.14.0rc1", OLD + timedelta(days=80))
    fake_registry.go_dev.add("1.22.10")
    fake_registry.go_dev.add("1.23.4")
    fake_registry.go_dev.add("1.24rc1")
    (tmp_path / "mise.toml").write_text(
        '[tools]\nnode = "20"\n"cargo:flip-link" = "0.1.7"\n"npm:prettier" = "3.3.3"\n'
        'python = ["3.12", "3.13.1"]\ngo = { version = "prefix:1.22", os = ["linux"] }\n'
        'frobnicator = "1.0"\n'
    )
    (tmp_path / ".nvmrc").write_text("lts/iron\n")
    (tmp_path / ".tool-versions").write_text("nodejs lts # the newest LTS\nerlang ref:OTP-27\n")
    code, report = _run(fake_registry, tmp_path)
    rows = _rows(report)

    node = rows[("mise.toml", "node", "20")]
    assert (node["ecosystem"], node["datasource"], node["backend"]) == ("tool", "node", "core:node")
    assert (node["current"], node["currentSource"], node["latest"], node["eligible"]) == (
        "20.18.1",
        "range",
        "22.12.0",
        "22.12.0",
    )
    assert (node["proposed"], node["updateType"], node["status"]) == ("22", "major", "outdated")
    assert node["currentReleasedAt"] == "2024-10-27T00:00:00Z"

    iron = rows[(".nvmrc", "node", "lts/iron")]
    assert (iron["current"], iron["currentSource"], iron["latest"]) == (
        "20.18.1",
        "dist-tag",
        "22.12.0",
    )
    # An older LTS line moves to the newest line's alias, never to a pin.
    assert (iron["proposed"], iron["status"]) == ("lts/jod", "outdated")
    lts = rows[(".tool-versions", "nodejs", "lts")]
    assert (lts["backend"], lts["current"], lts["status"]) == ("core:node", "22.12.0", "up-to-date")

    flip = rows[("mise.toml", "cargo:flip-link", "0.1.7")]
    assert (flip["datasource"], flip["packageName"], flip["backend"]) == (
        "crates",
        "flip-link",
        "cargo:flip-link",
    )
    assert (flip["current"], flip["latest"], flip["proposed"]) == ("0.1.7", "0.1.9", "0.1.9")
    prettier = rows[("mise.toml", "npm:prettier", "3.3.3")]
    assert (prettier["ecosystem"], prettier["datasource"], prettier["latest"]) == (
        "tool",
        "npm",
        "3.4.2",
    )

    # Every version of a list is a row; a prerelease is never the newest 3.x.
    assert rows[("mise.toml", "python", "3.12")]["current"] == "3.12.8"
    assert rows[("mise.toml", "python", "3.12")]["proposed"] == "3.13"
    assert rows[("mise.toml", "python", "3.13.1")]["status"] == "up-to-date"
    go = rows[("mise.toml", "go", "prefix:1.22")]
    # The proposal keeps the declared form: ``prefix:1.22`` → ``prefix:1.23``.
    assert (go["current"], go["latest"], go["proposed"]) == ("1.22.10", "1.23.4", "prefix:1.23")
    assert go["currentReleasedAt"] is None  # go.dev dates no release; none is invented

    unmapped = rows[("mise.toml", "frobnicator", "1.0")]
    assert unmapped["status"] == "skipped"
    assert unmapped["backend"] is None
    assert "not in patchula's mise registry mapping" in unmapped["reason"]
    erlang = rows[(".tool-versions", "erlang", "ref:OTP-27")]
    assert (erlang["status"], erlang["reason"]) == (
        "skipped",
        "a VCS ref is not a release: no version to compare",
    )
    assert report["summary"]["byEcosystem"]["tool"]["outdated"] == 6
    assert code == 0


def test_config_override_changes_the_backend_and_the_catalog(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """[tool-registry] sends prettier to GitHub releases: another datasource, another catalog."""
    fake_registry.npm.add("prettier", {"3.3.3": OLD, "3.4.2": OLD + timedelta(days=50)})
    fake_registry.github.add_repo(
        "prettier", "prettier", {"3.5.0": OLD + timedelta(days=90), "3.3.3": OLD}
    )
    (tmp_path / "mise.toml").write_text('[tools]\nprettier = "3.3.3"\n')
    code, report = _run(fake_registry, tmp_path)
    (row,) = report["repositories"][0]["dependencies"]
    assert (row["backend"], row["datasource"], row["latest"]) == ("npm:prettier", "npm", "3.4.2")

    config = tmp_path / "patchula.toml"
    config.write_text('[tool-registry]\nprettier = "github:prettier/prettier"\n')
    fake_registry.reset_stats()
    code, report = _run(fake_registry, tmp_path, "--config", str(config))
    (row,) = report["repositories"][0]["dependencies"]
    assert (row["backend"], row["datasource"], row["packageName"]) == (
        "github:prettier/prettier",
        "github-releases",
        "prettier/prettier",
    )
    assert (row["latest"], row["proposed"]) == ("3.5.0", "3.5.0")
    assert row["metadata"]["lookup"]["catalog"]["sourceUrl"].startswith(fake_registry.url("github"))
    assert fake_registry.host("npm").requests == 0  # the npm catalog is not this row's
    assert code == 0


def test_hostile_tool_files_end_as_problems(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Deep nesting, odd encodings, oversized files and 20,000 tools: problems and rows, no crash.

    The tools are unmapped: skipped rows, no request (the managers' tests read 100,000; here the
    cost is the report's, per row).
    """
    (tmp_path / "mise.toml").write_text("[tools]\nnode = " + "[" * 50_000 + "]" * 50_000 + "\n")
    (tmp_path / ".tool-versions").write_bytes(b"nodejs 20\xff\xfe\n")
    (tmp_path / ".nvmrc").write_text("2" * 5000 + "\n")
    (tmp_path / ".python-version").write_text("3.12\n" * 10 + "x" * 2_000_000)
    many = tmp_path / "many"
    many.mkdir()
    (many / ".tool-versions").write_text("".join(f"tool{i} 1.{i}\n" for i in range(20_000)))
    monkeypatch.setenv("PATCHULA_MAX_FILE_BYTES", "1900000")
    code, report = _run(fake_registry, tmp_path)
    problems = {
        (p["file"], p["message"].split(":")[0]) for p in report["repositories"][0]["problems"]
    }
    assert ("mise.toml", "invalid TOML") in problems
    # Only the bad line is lost (here the file's one line).
    assert (
        ".tool-versions",
        "not UTF-8 text (invalid byte 0xff); this line is not read",
    ) in problems
    assert any(file == ".python-version" for file, _ in problems)  # over --max-file-bytes
    rows = report["repositories"][0]["dependencies"]
    (nvmrc,) = [d for d in rows if d["file"] == ".nvmrc"]  # a 5,000-digit version
    assert nvmrc["status"] == "skipped"
    assert "is not a node version" in nvmrc["reason"]
    assert sum(1 for d in rows if d["file"] == "many/.tool-versions") == 20_000
    assert all(d["status"] == "skipped" for d in rows if d["file"] == "many/.tool-versions")
    assert [(d["file"], d["reason"]) for d in rows if d["status"] == "error"] == []
    assert code == 3  # unreadable manifests (the 20,000-tool file is not one of them)


def test_a_tool_is_not_the_projects_package(fake_registry: FakeRegistry, tmp_path: Path) -> None:
    """An npm: tool named like a workspace package is still the registry's package (mise's)."""
    fake_registry.npm.add("widget-cli", {"1.0.0": OLD, "1.4.2": OLD + timedelta(days=50)})
    (tmp_path / "mise.toml").write_text('[tools]\n"npm:widget-cli" = "1"\n')
    (tmp_path / "package.json").write_text('{"name": "root", "workspaces": ["packages/*"]}')
    (tmp_path / "packages" / "cli").mkdir(parents=True)
    (tmp_path / "packages" / "cli" / "package.json").write_text(
        '{"name": "widget-cli", "version": "0.0.1"}'
    )
    code, report = _run(fake_registry, tmp_path)
    (tool,) = [d for d in report["repositories"][0]["dependencies"] if d["manager"] == "mise_toml"]
    assert (tool["status"], tool["current"], tool["currentSource"]) == (
        "up-to-date",
        "1.4.2",
        "range",
    )
    assert code == 0


def test_github_tools_take_the_newest_version_not_the_first_listed(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Releases listed in creation order (a backport first): latest is v1.14.0, shown as mise does.

    Current, latest, eligible and proposed all read without the tags' ``v`` (mise lists
    ``1.14.0``), whether the declaration carries one or not.
    """
    fake_registry.github.add_repo(
        "hashicorp",
        "terraform",
        {
            "v1.13.5": OLD + timedelta(days=30),
            "v1.14.0": OLD + timedelta(days=20),
            "v1.14.1-rc1": OLD + timedelta(days=25),
            "v1.13.4": OLD,
        },
        prerelease={"v1.14.1-rc1"},
    )
    (tmp_path / "mise.toml").write_text(
        '[tools]\n"github:hashicorp/terraform" = ["1.13", "v1.13.4", "1.14.0"]\n'
    )
    code, report = _run(fake_registry, tmp_path)
    rows = _rows(report)
    prefix = rows[("mise.toml", "github:hashicorp/terraform", "1.13")]
    assert (prefix["current"], prefix["latest"], prefix["eligible"], prefix["proposed"]) == (
        "1.13.5",
        "1.14.0",
        "1.14.0",
        "1.14",
    )
    assert (prefix["status"], prefix["updateType"]) == ("outdated", "minor")
    pinned = rows[("mise.toml", "github:hashicorp/terraform", "v1.13.4")]
    assert (pinned["current"], pinned["latest"], pinned["proposed"]) == (
        "1.13.4",
        "1.14.0",
        "v1.14.0",  # what to write keeps the declaration's own spelling
    )
    newest = rows[("mise.toml", "github:hashicorp/terraform", "1.14.0")]
    assert (newest["status"], newest["latest"]) == ("up-to-date", "1.14.0")
    assert code == 0


def test_run_help_names_every_registry() -> None:
    """``--registry`` help lists every name a base URL can be given for, tools' included."""
    result = CliRunner().invoke(app, ["run", "--help"], terminal_width=400)
    assert result.exit_code == 0
    text = " ".join(result.stdout.split())
    listed = text.split("base URL for a datasource (", 1)[1].split(")", 1)[0]
    assert [name.strip() for name in listed.split(",")] == list(REGISTRY_NAMES)


def _node_lines(registry: FakeRegistry) -> None:
    """Node lines up to a Current 26.x: 24.x is the newest LTS (Krypton), 25.x odd."""
    for version, lts, days in (
        ("20.18.1", "Iron", 0),
        ("22.10.0", None, 10),  # 22.x before it entered LTS
        ("22.12.0", "Jod", 40),
        ("23.11.0", None, 50),
        ("24.12.0", "Krypton", 60),
        ("24.13.1", "Krypton", 140),
        ("25.9.0", None, 100),
        ("26.7.1", None, 150),
    ):
        registry.nodejs.add(version, OLD + timedelta(days=days), lts=lts)


def test_node_aliases_track_their_release_and_lts_lines_move_within_lts(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``lts`` is up to date on the newest LTS; older lines and pins move to LTS, never to 26.x.

    A Current release (26.x, odd 25.x) is no LTS release (Renovate's node versioning: odd
    releases and even ones before LTS are unstable): a row on an LTS release is measured
    against the newest LTS (24.13.1); ``lts/iron`` proposes ``lts/krypton``; ``latest`` and
    ``26`` are on the Current line and up to date.
    """
    _node_lines(fake_registry)
    (tmp_path / "mise.toml").write_text(
        '[tools]\nnode = ["lts", "lts/iron", "20", "22.12.0", "latest", "26", "lts/hydrogen"]\n'
    )
    code, report = _run(fake_registry, tmp_path, "--fail-on", "major")
    rows = _rows(report)

    def row(declared: str) -> tuple[Any, ...]:
        found = rows[("mise.toml", "node", declared)]
        return (found["status"], found["current"], found["latest"], found["proposed"])

    assert row("lts") == ("up-to-date", "24.13.1", "24.13.1", None)
    assert row("lts/iron") == ("outdated", "20.18.1", "24.13.1", "lts/krypton")
    assert row("20") == ("outdated", "20.18.1", "24.13.1", "24")
    assert row("22.12.0") == ("outdated", "22.12.0", "24.13.1", "24.13.1")
    assert row("latest") == ("up-to-date", "26.7.1", "26.7.1", None)
    assert row("26") == ("up-to-date", "26.7.1", "26.7.1", None)
    hydrogen = rows[("mise.toml", "node", "lts/hydrogen")]
    assert hydrogen["status"] == "unknown"
    assert hydrogen["reason"].startswith(
        "'lts/hydrogen' is neither a version, a version prefix nor an alias of this tool"
    )
    assert "lts/krypton" in hydrogen["reason"]
    assert code == 1  # --fail-on major: the rows behind a major, not the lts row


def test_a_prefix_is_proposed_in_full_when_it_would_resolve_to_a_held_release(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """With a wait, ``22`` → 24.12.0 is eligible, 24.13.1 held: ``24`` would install the held one.

    The proposal is then the eligible release in full (``24.12.0``); ``lts/iron`` has no alias
    naming 24.12.0 (``lts/krypton`` is the held 24.13.1): nothing to propose yet.
    """
    _node_lines(fake_registry)
    (tmp_path / "mise.toml").write_text('[tools]\nnode = ["22", "lts/iron", "24"]\n')
    now = (OLD + timedelta(days=150)).strftime("%Y-%m-%dT%H:%M:%SZ")
    code, report = _run(fake_registry, tmp_path, "--now", now, "--min-release-age", "30d")
    rows = _rows(report)
    line = rows[("mise.toml", "node", "22")]
    assert (line["current"], line["eligible"]) == ("22.12.0", "24.12.0")
    assert line["proposed"] == "24.12.0"
    assert [h["version"] for h in line["heldBack"]] == ["24.13.1"]
    iron = rows[("mise.toml", "node", "lts/iron")]
    assert (iron["eligible"], iron["proposed"]) == ("24.12.0", None)
    assert "no alias names 24.12.0 (the newest line's release is held back)" in iron["reason"]
    same = rows[("mise.toml", "node", "24")]
    assert (same["status"], same["current"]) == ("up-to-date", "24.13.1")
    assert code == 0


def test_the_table_shows_the_proposal_at_the_declared_precision(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``20`` shows ``24 (24.13.1)``, ``lts/iron`` ``lts/krypton (24.13.1)``, a pin its version."""
    _node_lines(fake_registry)
    (tmp_path / "mise.toml").write_text('[tools]\nnode = ["20", "lts/iron", "22.12.0"]\n')
    args = ["run", str(tmp_path), "--format", "table", "--now", NOW]
    args += ["--registry", f"node={fake_registry.url('nodejs')}"]
    result = CliRunner().invoke(app, args, catch_exceptions=False)
    lines = {
        cells[2]: cells
        for line in result.stdout.splitlines()
        if len(cells := [c.strip() for c in line.split(" | ")]) > 6 and cells[0] == "node"
    }
    eligible = 6  # package, type, declared, current, via, latest, eligible
    assert lines["20"][eligible] == "24 (24.13.1)"
    assert lines["lts/iron"][eligible] == "lts/krypton (24.13.1)"
    assert lines["22.12.0"][eligible] == "24.13.1"


def test_a_go_backend_package_path_walks_up_to_its_module(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``go:<module>/cmd/tool``: the parents are tried until the proxy knows one, as mise does."""
    fake_registry.goproxy.add("github.com/acme/retracty", {"v1.0.0": OLD, "v1.1.0": OLD})
    (tmp_path / "mise.toml").write_text(
        '[tools]\n"go:github.com/acme/retracty/cmd/tool" = "1.0.0"\n'
    )
    code, report = _run(
        fake_registry, tmp_path, "--registry", f"goproxy={fake_registry.url('goproxy')}"
    )
    (row,) = report["repositories"][0]["dependencies"]
    assert (row["packageName"], row["current"], row["latest"], row["status"]) == (
        "github.com/acme/retracty",
        "1.0.0",
        "1.1.0",
        "outdated",
    )
    assert row["reason"] == (
        "github.com/acme/retracty/cmd/tool is a package of the module github.com/acme/retracty"
    )
    routes = fake_registry.host("goproxy").requests_by_route
    assert "GET /github.com/acme/retracty/cmd/tool/@v/list" in routes
    assert "GET /github.com/acme/retracty/cmd/@v/list" in routes
    assert code == 0


def test_a_go_backend_path_no_parent_of_which_is_a_module_stays_not_found(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """No parent is known either: the row keeps the not-found error of the path as written."""
    (tmp_path / "mise.toml").write_text('[tools]\n"go:example.com/none/cmd/tool" = "1.0.0"\n')
    code, report = _run(
        fake_registry, tmp_path, "--registry", f"goproxy={fake_registry.url('goproxy')}"
    )
    (row,) = report["repositories"][0]["dependencies"]
    assert (row["status"], row["packageName"]) == ("error", "example.com/none/cmd/tool")
    assert "example.com/none/cmd/tool" in row["reason"]
    routes = fake_registry.host("goproxy").requests_by_route
    assert "GET /example.com/none/@v/list" in routes
    assert "GET /example.com/@v/list" not in routes
    assert code == 3


def test_a_go_backend_tool_stays_on_its_module_path_and_names_the_new_key(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``go:example.com/m`` 1.2.0 moves to 1.3.0, not to /v2's 2.1.0 that ``go install`` refuses.

    The row names the new major and the key that installs it (a package path kept below it).
    """
    fake_registry.goproxy.add("example.com/m", {"v1.2.0": OLD, "v1.3.0": OLD})
    fake_registry.goproxy.add("example.com/m/v2", {"v2.0.0": OLD, "v2.1.0": OLD})
    (tmp_path / "mise.toml").write_text(
        '[tools]\n"go:example.com/m" = "1.2.0"\n"go:example.com/m/cmd/tool" = "1.3.0"\n'
    )
    _code, report = _run(
        fake_registry, tmp_path, "--registry", f"goproxy={fake_registry.url('goproxy')}"
    )
    rows = _rows(report)
    tool = rows[("mise.toml", "go:example.com/m", "1.2.0")]
    assert (tool["status"], tool["latest"], tool["eligible"], tool["updateType"]) == (
        "outdated",
        "1.3.0",
        "1.3.0",
        "minor",
    )
    assert tool["majorAvailable"] == "example.com/m/v2 v2.1.0"
    assert tool["reason"] == (
        "v2.1.0 is the module example.com/m/v2, which this key cannot install; "
        'to move, write "go:example.com/m/v2" = "2.1.0"'
    )
    package = rows[("mise.toml", "go:example.com/m/cmd/tool", "1.3.0")]
    assert (package["status"], package["latest"]) == ("up-to-date", "1.3.0")
    assert package["reason"].endswith('write "go:example.com/m/v2/cmd/tool" = "2.1.0"')


def test_aqua_tools_whose_tags_carry_a_prefix_are_looked_up_stripped(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """The tag ``jq-1.7.1`` is jq 1.7.1, ``kustomize/v5.4.1`` kustomize 5.4.1, ``api/…`` none.

    Only tags that start with the prefix count (aqua ``version_prefix``, as mise reads it);
    kustomize's older tags had none (its ``version_overrides``), so a bare ``v3.8.0`` counts too,
    but the monorepo's other modules (``api/v0.18.0``, ``kyaml/…``) never do.
    """
    fake_registry.github.add_repo(
        "jqlang",
        "jq",
        {
            "jq-1.8.0": OLD + timedelta(days=200),
            "jq-1.7.1": OLD + timedelta(days=10),
            "1.9.0": OLD + timedelta(days=250),  # not jq's tag scheme: not a version of jq
            "jq-1.7": OLD,
        },
    )
    fake_registry.github.add_repo(
        "kubernetes-sigs",
        "kustomize",
        {
            "api/v0.18.0": OLD + timedelta(days=300),
            "kustomize/v5.4.1": OLD + timedelta(days=100),
            "kyaml/v0.17.2": OLD + timedelta(days=90),
            "kustomize/v5.3.0": OLD + timedelta(days=20),
            "v3.8.0": OLD,
        },
    )
    (tmp_path / "mise.toml").write_text('[tools]\njq = "1.7.1"\nkustomize = ["5.3", "3"]\n')
    code, report = _run(fake_registry, tmp_path)
    rows = _rows(report)
    jq = rows[("mise.toml", "jq", "1.7.1")]
    assert (jq["datasource"], jq["packageName"], jq["backend"]) == (
        "github-releases",
        "jqlang/jq",
        "aqua:jqlang/jq",
    )
    assert (jq["current"], jq["latest"], jq["proposed"], jq["status"]) == (
        "1.7.1",
        "1.8.0",
        "1.8.0",
        "outdated",
    )
    assert jq["currentReleasedAt"] == "2024-01-11T00:00:00Z"
    kustomize = rows[("mise.toml", "kustomize", "5.3")]
    assert (kustomize["current"], kustomize["latest"], kustomize["proposed"]) == (
        "5.3.0",
        "5.4.1",
        "5.4",
    )
    old = rows[("mise.toml", "kustomize", "3")]
    assert (old["current"], old["latest"], old["proposed"]) == ("3.8.0", "5.4.1", "5")
    # One catalog for both rows of the repository: the view is the repository's.
    routes = fake_registry.host("github").requests_by_route
    assert sum(n for route, n in routes.items() if "/kustomize/releases" in route) == 1
    assert code == 0


def test_a_tool_mise_cannot_be_read_from_first_is_read_from_its_next_backend(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Poetry (vfox first, then pipx:poetry) is looked up on PyPI; the row says which and why."""
    fake_registry.pypi.add("poetry", {"1.8.3": OLD, "2.1.1": OLD + timedelta(days=100)})
    (tmp_path / ".tool-versions").write_text("poetry 1.8.3\n")
    code, report = _run(fake_registry, tmp_path, "--registry", f"pypi={fake_registry.url('pypi')}")
    (row,) = report["repositories"][0]["dependencies"]
    assert (row["backend"], row["datasource"], row["current"], row["latest"]) == (
        "pipx:poetry",
        "pypi",
        "1.8.3",
        "2.1.1",
    )
    assert row["reason"].startswith(
        "versions read from pipx:poetry: mise installs it with vfox:mise-plugins/vfox-poetry"
    )
    assert code == 0


def test_a_prefix_declaration_is_proposed_in_its_own_form(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``prefix:22`` is proposed as ``prefix:24``, as ``22`` is as ``24`` and a pin as a pin.

    ``lts`` and ``latest`` move by themselves (no proposal); ``lts/iron`` → ``lts/krypton``.
    """
    _node_lines(fake_registry)
    (tmp_path / "mise.toml").write_text(
        '[tools]\nnode = ["prefix:22", "22", "prefix:22.12.0", "lts", "lts/iron", "latest"]\n'
    )
    code, report = _run(fake_registry, tmp_path)
    rows = _rows(report)
    proposed = {declared: row["proposed"] for (_, _, declared), row in rows.items()}
    assert proposed == {
        "prefix:22": "prefix:24",
        "22": "24",
        "prefix:22.12.0": "prefix:24.13.1",
        "lts": None,
        "lts/iron": "lts/krypton",
        "latest": None,
    }
    assert rows[("mise.toml", "node", "prefix:22")]["current"] == "22.12.0"
    assert code == 0


def test_a_go_backend_tool_has_the_publish_times_of_its_versions(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A ``go:`` row shows ``1.0.1`` for ``v1.0.1``: its date is still asked (``.info``) by name.

    Dates of current (asked as ``v1.0.1``), latest and a held-back release come from the
    proxy's ``.info``, so libyears and the held release's age are known.
    """
    fake_registry.goproxy.add(
        "github.com/acme/tool",
        {
            "v1.0.0": OLD,
            "v1.0.1": OLD + timedelta(days=30),
            "v1.1.0": OLD + timedelta(days=365),
            "v1.2.0": OLD + timedelta(days=500),
        },
    )
    (tmp_path / "mise.toml").write_text('[tools]\n"go:github.com/acme/tool" = "1.0"\n')
    now = (OLD + timedelta(days=505)).strftime("%Y-%m-%dT%H:%M:%SZ")
    code, report = _run(
        fake_registry,
        tmp_path,
        "--registry",
        f"goproxy={fake_registry.url('goproxy')}",
        "--now",
        now,
        "--min-release-age",
        "30d",
    )
    (row,) = report["repositories"][0]["dependencies"]
    assert (row["current"], row["eligible"], row["status"]) == ("1.0.1", "1.1.0", "outdated")
    assert row["currentReleasedAt"] == "2024-01-31T00:00:00Z"
    assert row["libyears"] == pytest.approx(470 / 365.25, abs=0.001)  # 1.0.1 to 1.2.0
    assert [(h["version"], h["releasedAt"]) for h in row["heldBack"]] == [
        ("1.2.0", "2025-05-15T00:00:00Z")
    ]
    routes = fake_registry.host("goproxy").requests_by_route
    assert "GET /github.com/acme/tool/@v/v1.0.1.info" in routes
    assert not any(route.endswith("/@v/1.0.1.info") for route in routes)
    assert code == 0


def test_aqua_version_filter_leaves_out_the_tags_aqua_leaves_out(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Vault's filter `Version matches "^v..."`: a bare `2.0.0` tag is not vault's latest.

    kyverno's `not (Version matches "-(alpha|beta|rc)")` drops its rc tags from the listing,
    yet a pin on one is still judged from its own release (mise installs what is written).
    """
    fake_registry.github.add_repo(
        "hashicorp",
        "vault",
        {
            "2.0.0": OLD + timedelta(days=200),  # no `v`: the filter says it is none of vault's
            "v1.19.0": OLD + timedelta(days=100),
            "v1.18.1": OLD,
        },
    )
    fake_registry.github.add_repo(
        "kyverno",
        "kyverno",
        {
            "v1.13.0": OLD + timedelta(days=100),
            "v1.13.0-rc.1": OLD + timedelta(days=80),
            "v1.12.0": OLD,
        },
    )
    (tmp_path / "mise.toml").write_text('[tools]\nvault = "1.18.1"\nkyverno = "1.13.0-rc.1"\n')
    _, report = _run(fake_registry, tmp_path)
    rows = _rows(report)
    vault = rows[("mise.toml", "vault", "1.18.1")]
    assert (vault["current"], vault["latest"], vault["proposed"], vault["status"]) == (
        "1.18.1",
        "1.19.0",
        "1.19.0",
        "outdated",
    )
    kyverno = rows[("mise.toml", "kyverno", "1.13.0-rc.1")]
    assert (kyverno["current"], kyverno["latest"], kyverno["status"]) == (
        "1.13.0-rc.1",
        "1.13.0",
        "outdated",
    )
    assert kyverno["currentReleasedAt"] == "2024-03-21T00:00:00Z"


def test_a_yarn_1_pin_is_judged_on_the_yarn_1_line_not_against_berry(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """`yarn = "1.22.19"` is looked up as the npm package yarn; a yarn 4 pin stays on berry.

    berry's repository has no 1.x tag: judged there, the yarn 1 pin was no release at all.
    """
    fake_registry.npm.add(
        "yarn", {"1.22.19": OLD, "1.22.22": OLD + timedelta(days=60), "2.0.0-rc.1": OLD}
    )
    fake_registry.github.add_repo(
        "yarnpkg",
        "berry",
        {
            "@yarnpkg/cli/4.5.0": OLD + timedelta(days=200),
            "@yarnpkg/cli/4.1.0": OLD + timedelta(days=10),
            "@yarnpkg/core/4.1.0": OLD + timedelta(days=10),
        },
    )
    (tmp_path / "mise.toml").write_text('[tools]\nyarn = "1.22.19"\n')
    (tmp_path / ".tool-versions").write_text("yarn 4.1.0\n")
    _, report = _run(fake_registry, tmp_path)
    rows = _rows(report)
    classic = rows[("mise.toml", "yarn", "1.22.19")]
    assert (classic["backend"], classic["datasource"], classic["packageName"]) == (
        "npm:yarn",
        "npm",
        "yarn",
    )
    assert (classic["current"], classic["latest"], classic["proposed"], classic["status"]) == (
        "1.22.19",
        "1.22.22",
        "1.22.22",
        "outdated",
    )
    assert "yarn 2 and later is berry (@yarnpkg/cli)" in classic["reason"]
    berry = rows[(".tool-versions", "yarn", "4.1.0")]
    assert (berry["backend"], berry["packageName"]) == ("aqua:yarnpkg/berry", "yarnpkg/berry")
    assert (berry["current"], berry["latest"], berry["status"]) == ("4.1.0", "4.5.0", "outdated")


def _core_tool_repos(registry: FakeRegistry) -> None:
    """GitHub repositories of the core tools, in their real tag schemes."""
    day = timedelta(days=1)
    registry.github.add_repo(
        "oven-sh",
        "bun",
        {
            "canary": OLD + 300 * day,  # the rolling canary build: no ``bun-v``, no version
            "bun-v1.2.0-canary.3": OLD + 250 * day,  # not flagged: a prerelease by its name
            "bun-v1.1.30": OLD + 200 * day,
            "bun-v1.1.0": OLD,
        },
    )
    registry.github.add_repo(
        "erlang",
        "otp",
        {
            "OTP-27.0-rc1": OLD + 300 * day,
            "OTP-26.2.5": OLD + 150 * day,
            "OTP-26.2.1": OLD + 10 * day,
            "OTP-25.3.2.8": OLD + 5 * day,  # an older line's patch, published later
        },
        prerelease={"OTP-27.0-rc1"},
    )
    registry.github.add_repo(
        "swiftlang",
        "swift",
        {
            "swift-6.0.3-RELEASE": OLD + 200 * day,
            "swift-5.10.1-RELEASE": OLD + 100 * day,
            "swift-5.9.2-RELEASE": OLD,
        },
        tags=["swift-DEVELOPMENT-SNAPSHOT-2025-01-10-a"],
    )
    registry.github.add_repo(
        "elixir-lang",
        "elixir",
        {
            "v1.19.0-rc.0": OLD + 320 * day,
            "v1.18.4": OLD + 300 * day,
            "v1.16.0": OLD,
        },
        prerelease={"v1.19.0-rc.0"},
    )
    registry.github.add_repo(
        "rust-lang", "rust", {"1.87.0": OLD + 400 * day, "1.75.0": OLD + 10 * day}
    )
    registry.github.add_repo("denoland", "deno", {"v2.3.1": OLD + 450 * day, "v1.40.0": OLD})
    registry.github.add_repo(
        "ziglang", "zig", tags={"0.14.1": OLD + 400 * day, "0.13.0": OLD + 100 * day}
    )


def test_core_tools_are_read_from_their_github_releases_and_tags(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """bun, erlang, swift, elixir, rust, deno and zig: tag schemes stripped, prereleases aside."""
    _core_tool_repos(fake_registry)
    (tmp_path / ".tool-versions").write_text(
        "bun 1.1.0\nerlang 26.2.1\nswift 5.9.2\nelixir 1.16.0-otp-26\nrust 1.75.0\n"
        "deno 1.40.0\nzig 0.13.0\nruby 3.3.0\nrust nightly\n"
    )
    code, report = _run(fake_registry, tmp_path)
    rows = _rows(report)

    def verdict(name: str, declared: str) -> tuple[object, ...]:
        row = rows[(".tool-versions", name, declared)]
        return row["current"], row["latest"], row["proposed"], row["status"]

    # The canary build is neither the tag scheme nor stable: 1.1.30 is bun's latest.
    assert verdict("bun", "1.1.0") == ("1.1.0", "1.1.30", "1.1.30", "outdated")
    assert rows[(".tool-versions", "bun", "1.1.0")]["currentReleasedAt"] == "2024-01-01T00:00:00Z"
    # OTP-27.0-rc1 is a prerelease; 25.3.2.8, published later, is not newer.
    assert verdict("erlang", "26.2.1") == ("26.2.1", "26.2.5", "26.2.5", "outdated")
    assert verdict("swift", "5.9.2") == ("5.9.2", "6.0.3", "6.0.3", "outdated")
    elixir = rows[(".tool-versions", "elixir", "1.16.0-otp-26")]
    assert verdict("elixir", "1.16.0-otp-26") == ("1.16.0", "1.18.4", "1.18.4-otp-26", "outdated")
    assert "-otp-26" in elixir["reason"]
    assert verdict("rust", "1.75.0") == ("1.75.0", "1.87.0", "1.87.0", "outdated")
    assert verdict("deno", "1.40.0") == ("1.40.0", "2.3.1", "2.3.1", "outdated")
    zig = rows[(".tool-versions", "zig", "0.13.0")]
    assert (zig["datasource"], zig["current"], zig["latest"]) == ("github-tags", "0.13.0", "0.14.1")
    assert "codeberg.org/ziglang/zig" in zig["reason"]  # the GitHub tags may lag: said
    ruby = rows[(".tool-versions", "ruby", "3.3.0")]
    assert ruby["status"] == "skipped"
    assert "no release source read yet" in ruby["reason"]
    nightly = rows[(".tool-versions", "rust", "nightly")]
    assert (nightly["status"], nightly["datasource"]) == ("skipped", "github-releases")
    assert code == 0
