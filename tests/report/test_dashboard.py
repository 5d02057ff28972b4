"""The Markdown dependency dashboard (issue 15 item 5).

The golden file ``golden/dashboard.md`` is the whole dashboard of ``_report()``. After an
intended change to the layout, regenerate it and review the diff before committing::

    PATCHULA_REGENERATE_GOLDEN=1 .venv/bin/pytest -q tests/report/test_dashboard.py
"""

from __future__ import annotations

import json
import os
import re
from datetime import UTC, datetime, timedelta
from pathlib import Path

import pytest
from markdown_it import MarkdownIt

from patchula.http.fetcher import HostStats
from patchula.models import Dependency, Finding, HeldBack, ManifestProblem
from patchula.report.dashboard import (
    COLLAPSE_ROWS,
    COMMENT_LIMIT,
    age,
    code,
    package_page,
    policy_line,
    render_markdown,
)
from patchula.report.model import CacheReport, ScanReport, build_report
from patchula.report.render import render_json
from patchula.scan import CatalogInfo, RepoResult, Row, ScanResult
from patchula.settings import Settings

GOLDEN = Path(__file__).parent / "golden" / "dashboard.md"
NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)
FETCHED = NOW - timedelta(minutes=5)
VIEW = datetime(2026, 11, 30, 18, 30, tzinfo=UTC)  # a stored catalog view, reused this run
A = "sha256:" + "a" * 64
B = "sha256:" + "b" * 64


def _days(n: float) -> datetime:
    return NOW - timedelta(days=n)


def _dep(
    file: str,
    line: int,
    name: str,
    datasource: str,
    *,
    manager: str = "package_json",
    package_name: str | None = None,
    digest: str | None = None,
) -> Dependency:
    return Dependency(
        manager=manager,
        file=file,
        line=line,
        name=name,
        package_name=package_name or name,
        datasource=datasource,
        versioning="npm",
        dep_type="dependencies",
        declared="^1.0.0",
        constraint="^1.0.0",
        digest=digest,
    )


def _catalog(url: str, *, reused: bool = False) -> CatalogInfo:
    return CatalogInfo(
        fetched_at=VIEW if reused else FETCHED,
        reused=reused,
        source_url=url,
        time_source="registry",
    )


def _update(
    current: str, eligible: str, kind: str, released_days: float | None, **more: object
) -> Finding:
    return Finding(
        status="outdated",
        current=current,
        current_source="lockfile",
        latest=eligible,
        eligible=eligible,
        update_type=kind,  # type: ignore[arg-type]
        eligible_released_at=_days(released_days) if released_days is not None else None,
        **more,  # type: ignore[arg-type]
    )


DEPRECATED = (
    "current version is deprecated: use new-lib; latest 1.3.0 is deprecated (use new-lib); "
    "not proposed"
)
DOWN = "index.crates.io is unreachable (ConnectError): no answer this run"


def _web() -> RepoResult:
    """A repository with each kind of row."""
    repo = RepoResult(target="github:acme/web", root="/src/web", commit="0123456789abcdef0123")
    npm = "https://registry.npmjs.org"
    repo.rows = [
        Row(
            _dep("package.json", 4, "@types/node", "npm"),
            _update("20.0.0", "22.1.0", "major", 100, libyears=0.8),
            catalog=_catalog(f"{npm}/@types%2fnode"),
        ),
        Row(
            _dep("package.json", 5, "lodash", "npm"),
            # Outdated, and its newest release is held back: listed in both sections.
            _update(
                "4.16.0",
                "4.17.21",
                "minor",
                400,
                held_back=(HeldBack("4.18.0", _days(1), _days(-2), "minor", "younger than 3d"),),
            ),
            catalog=_catalog("https://npm.corp.example/lodash"),  # a mirror: no public link
        ),
        Row(
            _dep("requirements.txt", 1, "requests", "pypi", manager="requirements_txt"),
            _update("2.31.0", "2.31.1", "patch", 1.5),
            catalog=_catalog("https://pypi.org/simple/requests/"),
        ),
        Row(
            _dep(
                "Dockerfile",
                1,
                "python",
                "docker",
                manager="dockerfile",
                package_name="docker.io/library/python",
                digest=A,
            ),
            Finding(
                status="outdated",
                current="3.13",
                current_source="pin",
                latest="3.13",
                update_type="digest",
                digest=A,
                current_digest=B,
            ),
            catalog=_catalog("https://registry-1.docker.io/v2/library/python/tags/list"),
        ),
        Row(
            _dep("package.json", 6, "left-pad", "npm"),
            Finding(
                status="held-back",
                current="1.3.0",
                current_source="lockfile",
                latest="1.4.0",
                held_back=(
                    HeldBack("1.3.1", _days(2), _days(-1), "patch", "younger than 3d"),
                    HeldBack("1.4.0", _days(1), _days(-2), "minor", "younger than 3d"),
                ),
            ),
            catalog=_catalog(f"{npm}/left-pad", reused=True),
        ),
        Row(
            _dep("package.json", 7, "mystery", "npm"),
            Finding(
                status="held-back",
                current="2.0.0",
                current_source="range",
                held_back=(HeldBack("2.1.0", None, None, "minor", "age unknown"),),
            ),
            catalog=_catalog(f"{npm}/mystery"),
        ),
        Row(
            _dep("package.json", 8, "ghost", "npm"),
            Finding(
                status="unknown",
                reason="lockfile version 9.9.9 is not in the npm release list",
                current="9.9.9",
                current_source="lockfile",
            ),
            catalog=_catalog(f"{npm}/ghost"),
        ),
        Row(
            _dep("package.json", 9, "does-not-exist", "npm"),
            Finding(status="error", reason="npm package 'does-not-exist': not found (HTTP 404)"),
        ),
        Row(_dep("Cargo.toml", 3, "serde", "crates", manager="cargo_toml"), Finding("error", DOWN)),
        Row(_dep("Cargo.toml", 4, "tokio", "crates", manager="cargo_toml"), Finding("error", DOWN)),
        Row(
            _dep("package.json", 10, "local", "npm"),
            Finding(status="skipped", reason="a file: dependency is not on a registry"),
        ),
        Row(
            _dep("requirements.txt", 2, "flask", "pypi", manager="requirements_txt"),
            Finding(status="up-to-date", current="3.1.0", current_source="range", libyears=0.0),
            catalog=_catalog("https://pypi.org/simple/flask/"),
        ),
        Row(
            _dep("web/ui/package.json", 3, "ui-kit", "npm"),
            Finding(
                status="up-to-date",
                reason="from the range: web/ui/pnpm-lock.yaml not read",
                current="2.4.0",
                current_source="range",
            ),
            catalog=_catalog(f"{npm}/ui-kit"),
        ),
        Row(
            _dep("package.json", 11, "old-lib", "npm"),
            Finding(
                status="up-to-date",
                reason=DEPRECATED,
                current="1.2.0",
                current_source="lockfile",
                latest="1.3.0",
            ),
            # The same release list as the row below: one list, counted once.
            catalog=_catalog(f"{npm}/old-lib", reused=True),
        ),
        Row(
            _dep("web/ui/package.json", 4, "old-lib", "npm"),
            Finding(
                status="up-to-date",
                reason=DEPRECATED,
                current="1.2.0",
                current_source="lockfile",
                latest="1.3.0",
            ),
            catalog=_catalog(f"{npm}/old-lib", reused=True),
        ),
    ]
    repo.problems = [ManifestProblem("broken/pyproject.toml", 5, "invalid TOML: expected '='")]
    return repo


def _api() -> RepoResult:
    """A second repository: Go, crates, GitHub Actions and a namespaced Docker Hub image."""
    repo = RepoResult(target="github:acme/api", root="/src/api", commit=None)
    repo.rows = [
        Row(
            _dep(
                ".github/workflows/ci.yml",
                12,
                "actions/checkout",
                "github-tags",
                manager="github_actions",
            ),
            _update("v4.2.2", "v5.0.0", "major", 30),
            catalog=_catalog("https://api.github.com/repos/actions/checkout/tags"),
        ),
        Row(
            _dep("Cargo.toml", 2, "serde", "crates", manager="cargo_toml"),
            _update("1.0.100", "1.0.210", "patch", 20),
            catalog=_catalog("https://index.crates.io/se/rd/serde"),
        ),
        Row(
            _dep(
                "docker-compose.yml",
                3,
                "redis",
                "docker",
                manager="docker_compose",
                package_name="docker.io/bitnami/redis",
            ),
            _update("7.2", "7.4", "minor", 10),
            catalog=_catalog("https://registry-1.docker.io/v2/bitnami/redis/tags/list"),
        ),
        Row(
            _dep("go.mod", 5, "golang.org/x/net", "goproxy", manager="gomod"),
            _update("v0.20.0", "v0.21.0", "minor", 800),
            catalog=_catalog("https://proxy.golang.org/golang.org/x/net/@v/list"),
        ),
        Row(
            _dep("go.mod", 6, "ghcr.io/acme/tool", "docker", manager="gomod"),
            _update("1.0", "1.1", "minor", 3),
            catalog=_catalog("https://ghcr.io/v2/acme/tool/tags/list"),  # no page pattern
        ),
    ]
    return repo


def _report() -> ScanReport:
    settings = Settings.model_validate(
        {"min-release-age": "3d", "min-release-age-by-type": {"major": "14d"}}
    )
    result = ScanResult(evaluated_at=NOW, repos=[_web(), _api()], host_stats={})
    stats = {"index.crates.io": HostStats(requests=1, errors=2)}
    cache = CacheReport(
        path="/cache/patchula.sqlite3",
        hits=1,
        revalidated=0,
        misses=11,
        view_hits=1,
        bytes_stored=4096,
        corrupt_bodies=0,
        warnings=[],
    )
    return build_report(
        result, settings, stats, cache, unreachable={"index.crates.io": "ConnectError"}
    )


def test_dashboard_matches_the_golden_file() -> None:
    """Every kind of row in two repositories renders exactly as the golden file says."""
    text = render_markdown(_report())
    if os.environ.get("PATCHULA_REGENERATE_GOLDEN"):
        GOLDEN.parent.mkdir(exist_ok=True)
        GOLDEN.write_text(text, encoding="utf-8")
    assert text == GOLDEN.read_text(encoding="utf-8")
    # It renders as intended: every table row has its header's cells, sections are closed.
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    tables = re.findall(r"<table>(.*?)</table>", html, re.DOTALL)
    assert len(tables) == GOLDEN.read_text(encoding="utf-8").count("\n| --- ") == 14
    for table in tables:
        width = table.count("<th>")
        assert {row.count("<td>") for row in re.findall(r"<tr>(.*?)</tr>", table, re.DOTALL)} == {
            0,
            width,
        }
    assert html.count("<details>") == html.count("</details>") == 1
    assert (
        '<a href="https://www.npmjs.com/package/@types/node"><code>@types/node</code></a>' in html
    )


def test_a_report_read_back_from_json_renders_the_same_dashboard() -> None:
    """The dashboard depends on the report alone: a stored JSON report gives the same text."""
    report = _report()
    stored = ScanReport.model_validate(json.loads(render_json(report)))
    assert render_markdown(stored) == render_markdown(report)


def test_updates_are_grouped_by_type_in_order() -> None:
    """Major, minor, patch, digest; held back, unknown, errors, skipped, problems, up to date."""
    text = render_markdown(_report()).split("## `github:acme/api`")[0]
    titles = re.findall(r"^### (.+?) \(\d+\)$|<summary>(.+?) \(\d+\)</summary>", text, re.MULTILINE)
    assert [a or b for a, b in titles] == [
        "Major updates",
        "Minor updates",
        "Patch updates",
        "Digest updates",
        "Releases held back by the policy",
        "Unknown",
        "Errors",
        "Skipped",
        "Problems",
        "Up to date",
    ]


def test_held_back_rows_say_when_the_catalog_was_fetched_and_that_it_was_reused() -> None:
    """The held-back row names the newest release, its dates and the reused view's fetch time."""
    text = render_markdown(_report())
    assert (
        "| [`left-pad`](https://www.npmjs.com/package/left-pad) | `1.3.0` |  "
        "| `1.4.0 (+1 older)` | 2026-11-30 12:00Z | 2026-12-03 12:00Z "
        "| 2026-11-30 18:30Z (reused) | `package.json:6` |  |"
    ) in text
    assert "| `2.1.0` | age unknown | age unknown | 2026-12-01 11:55Z |" in text


def test_held_back_section_counts_every_row_with_held_back_releases_and_says_so() -> None:
    """An outdated row whose newest release waits is listed in the section too.

    Its title and first line say it is about releases, so the top table's status count (2)
    cannot be misread.
    """
    text = render_markdown(_report())
    assert "| **total** | **20** | **9** | **2** |" in text
    assert "### Releases held back by the policy (3)\n\n" in text
    assert "### Held back" not in text
    assert (
        "3 dependencies have releases the policy does not admit yet: 2 with status held back "
        "(nothing proposed yet), 1 outdated (an older release is proposed)."
    ) in text
    assert (
        "| `lodash` | `4.16.0` | `4.17.21` | `4.18.0` | 2026-11-30 12:00Z | 2026-12-03 12:00Z "
        "| 2026-12-01 11:55Z | `package.json:5` |  |"
    ) in text


def test_up_to_date_and_held_back_rows_keep_their_notes() -> None:
    """A reason (a lockfile not read, a deprecated release) and current-from-the-range show."""
    lines = render_markdown(_report()).splitlines()
    assert (
        "| [`ui-kit`](https://www.npmjs.com/package/ui-kit) | `2.4.0` | `web/ui/package.json:3` "
        "| `from the range: web/ui/pnpm-lock.yaml not read` |"
    ) in lines
    assert (
        "| [`old-lib`](https://www.npmjs.com/package/old-lib) | `1.2.0` | `package.json:11` "
        f"| `{DEPRECATED}` |"
    ) in lines
    # currentSource "range" without a reason saying so: the note says it.
    assert (
        "| [`flask`](https://pypi.org/project/flask/) | `3.1.0` | `requirements.txt:2` "
        "| `current from the range` |"
    ) in lines
    held = next(line for line in lines if line.startswith("| [`mystery`]"))
    assert held.endswith("| `package.json:7` | `current from the range` |")


def test_notes_of_up_to_date_rows_are_escaped() -> None:
    """A hostile reason of an up-to-date row stays inert in its cell, like every other cell."""
    repo = RepoResult(target="t", root="/t", commit=None)
    repo.rows = [
        Row(
            _dep("package.json", 1, "a", "npm"),
            Finding(status="up-to-date", current="1.0.0", reason="x | <b>y</b> `z`"),
        )
    ]
    text = render_markdown(build_report(ScanResult(NOW, [repo], {}), Settings(), {}))
    assert "| `a` | `1.0.0` | `package.json:1` | `` x \\| <b>y</b> `z` `` |" in text


def test_release_lists_are_counted_once_each_and_the_views_are_named() -> None:
    """Distinct lists (datasource, package, URL), from the cache; viewHits said when known."""
    text = render_markdown(_report())
    assert (
        "Release lists: 2 of 15 answered from the cache without a request (1 lookup answered "
        "by stored catalog views); the oldest was fetched 2026-11-30 18:30Z."
    ) in text
    assert "reused from stored catalog views" not in text
    # With --no-cache the report has no cache section: nothing is said about views.
    repo = RepoResult(target="t", root="/t", commit=None)
    url = "https://registry.npmjs.org/a"
    repo.rows = [
        Row(
            _dep(f"{d}/package.json", 1, "a", "npm"),
            _update("1", "2", "major", 9),
            catalog=_catalog(url),
        )
        for d in ("x", "y")
    ]
    text = render_markdown(build_report(ScanResult(NOW, [repo], {}), Settings(), {}))
    assert "Release lists: 0 of 1 answered from the cache without a request; the oldest" in text


def test_links_only_for_the_public_registries() -> None:
    """Each public registry's page; a mirror, ghcr.io and a row without catalog get none."""
    rows = {d.name: d for r in _report().repositories for d in r.dependencies}
    assert package_page(rows["@types/node"]) == "https://www.npmjs.com/package/@types/node"
    assert package_page(rows["requests"]) == "https://pypi.org/project/requests/"
    assert package_page(rows["serde"]) == "https://crates.io/crates/serde"
    assert package_page(rows["python"]) == "https://hub.docker.com/_/python"
    assert package_page(rows["redis"]) == "https://hub.docker.com/r/bitnami/redis"
    assert package_page(rows["golang.org/x/net"]) == "https://pkg.go.dev/golang.org/x/net"
    assert package_page(rows["actions/checkout"]) == "https://github.com/actions/checkout"
    assert package_page(rows["lodash"]) is None  # npm.corp.example is a mirror
    assert package_page(rows["ghcr.io/acme/tool"]) is None
    assert package_page(rows["does-not-exist"]) is None  # no catalog: unknown source


def test_hostile_cells_are_escaped() -> None:
    """A name or reason with ``|``, HTML, backticks, links and newlines stays in its cell, inert."""
    repo = RepoResult(target="t", root="/t", commit=None)
    evil = "x|y<script>alert(1)</script>`code` [a](https://evil.example) www.evil.example\n| z |"
    repo.rows = [
        Row(
            _dep("package.json", 1, "a|b<img src=x onerror=alert(1)>", "npm"),
            Finding(status="error", reason=evil),
            catalog=_catalog("https://registry.npmjs.org/x"),
        ),
        Row(
            _dep("package.json", 2, "`` `evil", "npm"),
            Finding(status="skipped", reason="trailing `"),
        ),
    ]
    repo.problems = [ManifestProblem("a\nb.json", 1, "line\r\nbreak \u202eevil")]
    text = render_markdown(build_report(ScanResult(NOW, [repo], {}), Settings(), {}))
    lines = text.splitlines()
    error = next(line for line in lines if "alert(1)</script>" in line)
    # Three cells: every pipe inside a cell is escaped, so GFM sees four unescaped ones.
    assert len(re.findall(r"(?<!\\)\|", error)) == 4
    assert error == (
        "| `a\\|b<img src=x onerror=alert(1)>` | `package.json:1` "
        "| ``x\\|y<script>alert(1)</script>`code` [a](https://evil.example) www.evil.example "
        "\\| z \\|`` |"
    )
    assert "| ``` `` `evil ``` | `package.json:2` | `` trailing ` `` |" in lines
    assert "| `a b.json:1` | error | `line  break  evil` |" in lines
    assert "\u202e" not in text
    # Outside code spans only our own words: no HTML tag but <details> and <summary>.
    outside = re.sub(r"(`+).*?\1", "", text)
    assert set(re.findall(r"</?([a-z]+)", outside)) <= {"details", "summary"}
    # A hostile name never gets a link, even from the public registry.
    assert "](" not in outside
    # Parsed as GFM tables with raw HTML allowed (markdown-it-py, rich's own dependency):
    # every row keeps its cells, no tag or link of the input reaches the HTML.
    html = MarkdownIt("commonmark", {"html": True}).enable("table").render(text)
    assert "<script" not in html
    assert "<img" not in html
    assert "<a " not in html
    rows = re.findall(r"<tr>(.*?)</tr>", html, re.DOTALL)
    assert [row.count("<td>") for row in rows if "<td>" in row] == [8, 8, 3, 3, 3]
    assert "<code>x|y&lt;script&gt;alert(1)&lt;/script&gt;`code`" in html


def test_code_spans() -> None:
    """Fences outgrow the backticks inside; pipes are escaped only in table cells."""
    assert code("a`b") == "``a`b``"
    assert code("`a") == "`` `a ``"
    assert code("a|b") == "`a\\|b`"
    assert code("a|b", cell=False) == "`a|b`"
    assert code(" \n ") == ""
    assert code("x" * 500).endswith("…`")
    assert len(code("x" * 500)) == 302


def test_long_sections_are_collapsed() -> None:
    """A section with more than ``COLLAPSE_ROWS`` rows is a ``<details>``; a short one is not."""
    repo = RepoResult(target="many", root="/m", commit=None)
    repo.rows = [
        Row(_dep("package.json", i, f"pkg-{i:02}", "npm"), _update("1.0.0", "1.1.0", "minor", 9))
        for i in range(1, COLLAPSE_ROWS + 2)
    ]
    repo.rows.append(
        Row(_dep("package.json", 99, "one", "npm"), _update("1.0.0", "2.0.0", "major", 9))
    )
    text = render_markdown(build_report(ScanResult(NOW, [repo], {}), Settings(), {}))
    assert f"<details><summary>Minor updates ({COLLAPSE_ROWS + 1})</summary>\n\n| package" in text
    assert "### Major updates (1)" in text
    assert text.index("pkg-01") < text.index("pkg-02")  # report order, stable


def _big(repos: int, rows: int) -> ScanReport:
    out = []
    for r in range(repos):
        repo = RepoResult(target=f"repo-{r:03}", root=f"/r{r}", commit=None)
        repo.rows = [
            Row(_dep("package.json", i, f"package-number-{i:05}", "npm"), finding)
            for i in range(rows)
            for finding in (
                _update("1.0.0", "1.0.1", "patch", 9)
                if i % 3
                else Finding("up-to-date", current="1.0.0"),
            )
        ]
        repo.rows.append(
            Row(_dep("package.json", 99_999, "the-major", "npm"), _update("1", "2", "major", 9))
        )
        out.append(repo)
    return build_report(ScanResult(NOW, out, {}), Settings(), {})


def test_a_long_dashboard_is_cut_to_the_comment_limit_least_urgent_rows_first() -> None:
    """Over 65,536 characters: up-to-date rows go first, then patch rows; majors stay; noted."""
    report = _big(3, 1500)
    full = render_markdown(report, limit=None)
    assert len(full) > COMMENT_LIMIT
    text = render_markdown(report)
    assert len(text) <= COMMENT_LIMIT
    assert text.count("the-major") == 3  # every major update is kept
    note = next(line for line in text.splitlines() if line.startswith("**Truncated**"))
    assert note.startswith(
        "**Truncated** to 65,536 characters (GitHub's comment limit); not shown: 1500 "
        "up-to-date rows, "
    )
    assert note.endswith(
        "patch-update rows. The JSON report (`--format json`, `--report`) has every row."
    )
    assert "package-number-00000" not in text  # up to date: cut first
    assert "*1000 rows cut (see the note at the top).*" in text  # repo-002's patch rows
    assert "*145 more rows cut (see the note at the top).*" in text  # repo-000 keeps some
    assert text.count("<details>") == text.count("</details>")


def test_many_repositories_are_cut_whole_when_rows_are_not_enough() -> None:
    """When every row is cut and it is still too long, whole repositories go from the end."""
    report = _big(40, 3)
    text = render_markdown(report, limit=4000)
    assert len(text) <= 4000
    assert "repo-000" in text
    assert "repo-039" not in text
    assert re.search(r"\*\d+ more repositories cut \(see the note at the top\)\.\*", text)
    assert "## `repo-000`\n\n4 dependencies: 3 outdated, 1 up to date.\n\n*Its rows are cut" in text
    assert "**Truncated** to 4,000 characters; not shown: " in text


@pytest.mark.parametrize(
    ("options", "line"),
    [
        ({}, "**Policy:** no minimum release age."),
        ({"unknown-age": "admit"}, "**Policy:** no minimum release age."),
        (
            {"min-release-age": "P3D", "unknown-age": "admit"},
            (
                "**Policy:** minimum release age 3d for every update type; releases of "
                "unknown age are admitted."
            ),
        ),
        (
            {"min-release-age": "PT2H", "min-release-age-by-type": {"major": "P14D"}},
            (
                "**Policy:** minimum release age major 14d, minor 2h, patch 2h; releases of "
                "unknown age are held back."
            ),
        ),
        (
            {"min-release-age": "P0D", "min-release-age-by-type": {"major": "P14D"}},
            (
                "**Policy:** minimum release age major 14d, minor 0, patch 0; releases of "
                "unknown age are held back for major updates."
            ),
        ),
        (
            {"min-release-age": "PT1H", "min-release-age-by-type": {"patch": "PT0S"}},
            (
                "**Policy:** minimum release age major 1h, minor 1h, patch 0; releases of "
                "unknown age are held back for major and minor updates."
            ),
        ),
        ({"min-release-age": "nonsense"}, "**Policy:** no minimum release age."),
        (
            {"min-release-age-by-type": {"major": "P2D", "minor": "P2D", "patch": "P2D"}},
            (
                "**Policy:** minimum release age 2d for every update type; releases of "
                "unknown age are held back."
            ),
        ),
    ],
)
def test_policy_line(options: dict[str, object], line: str) -> None:
    """The waits per update type come from the report's options, as JSON wrote them."""
    assert policy_line(options) == line


def test_age() -> None:
    """Hours under two days, then days, then years; a future time is 0h."""
    assert age(NOW - timedelta(hours=5, minutes=59), NOW) == "5h"
    assert age(NOW - timedelta(days=12), NOW) == "12d"
    assert age(NOW - timedelta(days=800), NOW) == "2.2y"
    assert age(NOW + timedelta(hours=1), NOW) == "0h"
    assert age(None, NOW) == "unknown"


def test_a_tools_proposal_keeps_its_declared_precision() -> None:
    """``node = "20"`` is proposed ``24`` (resolving to 24.13.1), never the pin ``24.13.1``."""
    dep = Dependency(
        manager="mise_toml",
        file="mise.toml",
        line=2,
        name="node",
        package_name="node",
        datasource="node",
        versioning="mise",
        dep_type="tools",
        declared="20",
        constraint="20",
    )
    finding = _update("20.19.6", "24.13.1", "major", 40, proposed="24")
    repo = RepoResult(target=".", root=".", commit=None)
    repo.rows.append(Row(dep, finding, None, _catalog("https://nodejs.org/dist/index.json")))
    result = ScanResult(evaluated_at=NOW, repos=[repo], host_stats={})
    text = render_markdown(build_report(result, Settings(), {}, None))
    assert "| `node` | `20.19.6` | `24` (`24.13.1`) |" in text


def test_a_row_part_of_whose_lookup_failed_is_listed_under_errors() -> None:
    """An up-to-date row whose new-major check failed is in Errors, with what failed."""
    failure = "could not check for a newer major (gopkg.in/yaml.v3): HTTP 500"
    repo = RepoResult(target="github:acme/go", root="/src/go", commit="0123456789abcdef0123")
    repo.rows = [
        Row(
            _dep("go.mod", 3, "gopkg.in/yaml.v2", "goproxy", manager="go_mod"),
            Finding(
                status="up-to-date",
                current="v2.4.0",
                current_source="pin",
                latest="v2.4.0",
                reason=failure,
                failed_lookup=failure,
            ),
            None,
            _catalog("https://proxy.golang.org/gopkg.in/yaml.v2/@v/list"),
        )
    ]
    result = ScanResult(evaluated_at=NOW, repos=[repo], host_stats={})
    report = build_report(result, Settings(), {})
    assert report.summary.failed_lookups == 1
    text = render_markdown(report)
    errors = text[text.index("Errors") :]
    assert f"`{failure}`" in errors
    assert "gopkg.in/yaml.v2" in errors
