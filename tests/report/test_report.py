"""The report model and its renderers."""

from __future__ import annotations

import gc
import io
import json
import tracemalloc
from datetime import UTC, datetime

import orjson
from rich.console import Console

from patchula.http.fetcher import HostStats
from patchula.http.governor import Governor, Timer, used_up
from patchula.models import Dependency, Finding, HeldBack, ManifestProblem
from patchula.report.dashboard import render_markdown
from patchula.report.model import build_report
from patchula.report.render import (
    render_json,
    render_plain,
    render_table,
    summary_line,
)
from patchula.scan import CatalogInfo, RepoResult, Row, ScanResult
from patchula.settings import Settings

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _dep(file: str, line: int, name: str = "django", markers: str | None = None) -> Dependency:
    return Dependency(
        manager="requirements_txt",
        file=file,
        line=line,
        name=name,
        package_name=name,
        datasource="pypi",
        versioning="pep440",
        dep_type="requirements",
        declared="==4.2",
        constraint="==4.2",
        markers=markers,
    )


def _result() -> ScanResult:
    outdated = Finding(
        status="outdated",
        current="4.2",
        current_source="pin",
        latest="6.1",
        eligible="6.0",
        update_type="major",
        versions_behind=12,
        libyears=2.5,
        held_back=(HeldBack("6.1", NOW, datetime(2026, 12, 3, tzinfo=UTC), "major", "young"),),
    )
    repo = RepoResult(target="web", root="/src/web", commit="0123456789abcdef")
    repo.rows = [
        Row(_dep("requirements/prod.txt", 3), outdated),
        Row(_dep("requirements/dev.txt", 7), outdated),
        Row(
            _dep("requirements/dev.txt", 9, "local"), Finding(status="skipped", reason="local path")
        ),
        Row(
            _dep("requirements/dev.txt", 10, "numpy", "sys_platform == 'linux'"),
            Finding(status="up-to-date", current="2.0", libyears=0.0),
        ),
    ]
    repo.problems = [ManifestProblem("package.json", 4, "invalid JSON")]
    return ScanResult(evaluated_at=NOW, repos=[repo], host_stats={})


def test_libyears_count_each_package_version_once_per_repository() -> None:
    """The same pin in two requirements files adds its libyears once."""
    report = build_report(_result(), Settings(), {})
    assert report.summary.libyears == 2.5
    assert report.summary.dependencies == 4
    assert report.summary.by_status.model_dump(by_alias=True) == {
        "up-to-date": 1,
        "outdated": 2,
        "held-back": 0,
        "unknown": 0,
        "skipped": 1,
        "error": 0,
    }


def test_json_uses_camel_case_and_schema_version() -> None:
    """The JSON report carries schemaVersion and camelCase keys with ISO times."""
    data = json.loads(render_json(build_report(_result(), Settings(), {})))
    dep = data["repositories"][0]["dependencies"][0]
    assert data["schemaVersion"] == "1"
    assert dep["heldBack"][0] == {
        "version": "6.1",
        "releasedAt": "2026-11-30T12:00:00Z",
        "eligibleAt": "2026-12-03T00:00:00Z",
        "updateType": "major",
        "reason": "young",
    }
    assert dep["currentSource"] == "pin"


def test_summary_line() -> None:
    """The summary line counts rows per status, libyears and manifest errors."""
    line = summary_line(build_report(_result(), Settings(), {}))
    assert line == (
        "4 dependencies in 1 repository: 1 up-to-date, 2 outdated, 1 skipped; 2.5 libyears; "
        "1 manifest error"
    )


def test_plain_table_groups_by_file_and_hides_up_to_date() -> None:
    """Piped output is plain ASCII grouped by file; hidden rows are counted; -v shows markers."""
    out = io.StringIO()
    render_table(build_report(_result(), Settings(), {}), Console(file=out, width=200))
    text = out.getvalue()
    assert "\x1b[" not in text
    assert text.index("requirements/dev.txt") < text.index("requirements/prod.txt")
    assert "held back: 6.1 (eligible 2026-12-03 00:00Z)" in text
    assert "(2 up-to-date or skipped rows hidden; -v shows them)" in text
    assert "numpy" not in text
    out = io.StringIO()
    render_table(
        build_report(_result(), Settings(), {}), Console(file=out, width=200), show_all=True
    )
    assert "when sys_platform == 'linux'" in out.getvalue()


def test_markdown_dashboard() -> None:
    """The dashboard lists updates by type with their file and line, and manifest problems."""
    md = render_markdown(build_report(_result(), Settings(), {}))
    assert "### Major updates (2)\n" in md
    assert "| `django` | `4.2` | `6.0` | unknown | `requirements/prod.txt:3` |" in md
    assert "| `package.json:4` | error | `invalid JSON` |" in md


def test_markdown_dashboard_lists_up_to_date_rows_collapsed() -> None:
    """Up-to-date rows are in a collapsed section; skipped rows have their own table."""
    md = render_markdown(build_report(_result(), Settings(), {}))
    up_to_date = md.index("<details><summary>Up to date (1)</summary>")
    assert md.index("| `numpy` | `2.0` | `requirements/dev.txt:10` |") > up_to_date
    assert "| `local` | `requirements/dev.txt:9` | `local path` |" in md


def _surrogate_result() -> ScanResult:
    result = _result()
    repo = result.repos[0]
    repo.rows.append(
        Row(
            _dep("requirements/dev.txt", 12, "evil\ud800"),
            Finding(status="error", reason="internal error evaluating evil\ud800: boom \udfff"),
        )
    )
    repo.problems.append(ManifestProblem("package.json", 5, "unknown key \ud83d"))
    return result


def test_renderers_replace_lone_surrogates_with_the_replacement_character() -> None:
    """A lone surrogate that slips into a report is written as U+FFFD by every renderer."""
    report = build_report(_surrogate_result(), Settings(), {})
    data = json.loads(render_json(report))
    names = [d["name"] for d in data["repositories"][0]["dependencies"]]
    assert "evil\ufffd" in names
    assert data["repositories"][0]["problems"][-1]["message"] == "unknown key \ufffd"
    markdown = render_markdown(report)
    assert "evil\ufffd" in markdown
    markdown.encode("utf-8")
    out = io.StringIO()
    render_table(report, Console(file=out, width=200), show_all=True)
    text = out.getvalue()
    text.encode("utf-8")  # a terminal or pipe would raise UnicodeEncodeError here
    assert "boom \ufffd" in text


def _down_result() -> ScanResult:
    """Three rows whose host was found unreachable, one that failed otherwise, one outdated."""
    down = "index.crates.io is unreachable (ConnectError): no answer this run"
    repo = RepoResult(target="ruff", root="/src/ruff", commit=None)
    repo.rows = [
        Row(_dep("Cargo.toml", i, f"crate{i}"), Finding(status="error", reason=down))
        for i in range(1, 4)
    ]
    repo.rows.append(
        Row(_dep("Cargo.toml", 9, "odd"), Finding(status="error", reason="HTTP 500 from x.test"))
    )
    repo.rows.append(Row(_dep("requirements.txt", 1), _result().repos[0].rows[0].finding))
    return ScanResult(evaluated_at=NOW, repos=[repo], host_stats={})


def test_rows_of_an_unreachable_host_are_one_line_per_host_and_named_in_the_summary() -> None:
    """A down host's failed lookups become one table line; the summary names it; JSON keeps rows."""
    stats = {"index.crates.io": HostStats(requests=2, errors=3)}
    report = build_report(
        _down_result(), Settings(), stats, unreachable={"index.crates.io": "ConnectError"}
    )
    out = io.StringIO()
    render_table(report, Console(file=out, width=200))
    text = out.getvalue()
    assert "  index.crates.io unreachable (ConnectError): 3 lookups not done\n" in text
    assert "crate1" not in text
    assert "HTTP 500 from x.test" in text  # another failure stays a row of its own
    assert summary_line(report).endswith(
        "; index.crates.io unreachable (ConnectError): 3 lookups not done"
    )
    data = json.loads(render_json(report))
    assert data["hosts"]["index.crates.io"]["unreachable"] == "ConnectError"
    assert len(data["repositories"][0]["dependencies"]) == 5


def test_markdown_groups_the_rows_of_an_unreachable_host() -> None:
    """The Markdown dashboard lists a down host once per repository instead of each row."""
    stats = {"index.crates.io": HostStats(requests=2, errors=3)}
    report = build_report(_down_result(), Settings(), stats, unreachable={"index.crates.io": "DNS"})
    md = render_markdown(report)
    assert "\n- `index.crates.io unreachable (DNS): 3 lookups not done`\n" in md
    assert "crate2" not in md
    assert "| `odd` |" in md


def _plain_result() -> ScanResult:
    """Every column filled, an alias, a redacted secret, a surrogate and a down host's rows."""
    result = _surrogate_result()
    web = result.repos[0]
    web.rows.append(
        Row(
            Dependency(
                manager="package_json",
                file="package.json",
                line=3,
                name="lp",
                package_name="left-pad",
                datasource="npm",
                versioning="npm",
                dep_type="dependencies",
                declared="git+https://tok3n@github.com/a/b",
                constraint=None,
            ),
            Finding(
                status="error",
                reason="HTTP 401 from https://bob:hunter2@npm.test/lp",
                current="1.0.0",
                current_source="lockfile",
            ),
        )
    )
    down = _down_result().repos[0]
    return ScanResult(evaluated_at=NOW, repos=[web, down], host_stats={})


PLAIN = """\
web @ 0123456789ab
package.json
package       | type         | declared                       | current | via  | latest | eligible | update | behind | libyears | status | notes
--------------+--------------+--------------------------------+---------+------+--------+----------+--------+--------+----------+--------+--------------------------------------
lp (left-pad) | dependencies | git+https://***@github.com/a/b | 1.0.0   | lock |        |          |        |        |          | error  | HTTP 401 from https://***@npm.test/lp
requirements/dev.txt
package | type         | declared | current | via | latest | eligible | update | behind | libyears | status   | notes
--------+--------------+----------+---------+-----+--------+----------+--------+--------+----------+----------+--------------------------------------------
django  | requirements | ==4.2    | 4.2     | pin | 6.1    | 6.0      | major  | 12     | 2.50     | outdated | held back: 6.1 (eligible 2026-12-03 00:00Z)
evil\ufffd   | requirements | ==4.2    |         |     |        |          |        |        |          | error    | internal error evaluating evil\ufffd: boom \ufffd
requirements/prod.txt
package | type         | declared | current | via | latest | eligible | update | behind | libyears | status   | notes
--------+--------------+----------+---------+-----+--------+----------+--------+--------+----------+----------+--------------------------------------------
django  | requirements | ==4.2    | 4.2     | pin | 6.1    | 6.0      | major  | 12     | 2.50     | outdated | held back: 6.1 (eligible 2026-12-03 00:00Z)
  (2 up-to-date or skipped rows hidden; -v shows them)
  error: package.json:4: invalid JSON
  error: package.json:5: unknown key \ufffd

ruff
Cargo.toml
package | type         | declared | current | via | latest | eligible | update | behind | libyears | status | notes
--------+--------------+----------+---------+-----+--------+----------+--------+--------+----------+--------+---------------------
odd     | requirements | ==4.2    |         |     |        |          |        |        |          | error  | HTTP 500 from x.test
requirements.txt
package | type         | declared | current | via | latest | eligible | update | behind | libyears | status   | notes
--------+--------------+----------+---------+-----+--------+----------+--------+--------+----------+----------+--------------------------------------------
django  | requirements | ==4.2    | 4.2     | pin | 6.1    | 6.0      | major  | 12     | 2.50     | outdated | held back: 6.1 (eligible 2026-12-03 00:00Z)
  index.crates.io unreachable (ConnectError): 3 lookups not done

11 dependencies in 2 repositories: 1 up-to-date, 3 outdated, 1 skipped, 6 error; 5.0 libyears; 2 manifest errors; index.crates.io unreachable (ConnectError): 3 lookups not done
"""  # noqa: E501 - the exact table


def test_plain_renderer_output_is_exact() -> None:
    """Piped text: aligned columns, problems, down hosts grouped, secrets and surrogates hidden."""
    stats = {"index.crates.io": HostStats(requests=2, errors=3)}
    report = build_report(
        _plain_result(), Settings(), stats, unreachable={"index.crates.io": "ConnectError"}
    )
    assert render_plain(report) == PLAIN


def test_plain_renderer_prints_what_the_rich_table_prints_without_a_width() -> None:
    """The plain renderer and rich on an unbounded console give the same lines."""
    stats = {"index.crates.io": HostStats(requests=2, errors=3)}
    reports = [
        build_report(_result(), Settings(), {}),
        build_report(_surrogate_result(), Settings(), {}),
        build_report(_plain_result(), Settings(), stats, unreachable={"index.crates.io": "DNS"}),
        build_report(ScanResult(NOW, [RepoResult("e", "/e", None)], {}), Settings(), {}),
    ]
    for report in reports:
        for show_all in (False, True):
            out = io.StringIO()
            console = Console(file=out, width=1_000_000, no_color=True, soft_wrap=False)
            render_table(report, console, show_all=show_all)
            rich_lines = "".join(f"{line.rstrip()}\n" for line in out.getvalue().splitlines())
            assert render_plain(report, show_all=show_all) == rich_lines


def test_plain_renderer_aligns_wide_characters_and_keeps_text_literal() -> None:
    """Wide characters count two cells; markup-like text stays; a tab or newline is a space."""
    result = _result()
    result.repos[0].rows = [
        Row(_dep("r.txt", 1, "中文"), Finding(status="error", reason="[bold]x[/]\tsee\nbelow")),
        Row(_dep("r.txt", 2, "ab"), Finding(status="error", reason="\x1b[31mred")),
    ]
    lines = render_plain(build_report(result, Settings(), {})).splitlines()
    assert lines[2].startswith("package | type ")
    assert lines[4].startswith("中文    | requirements |")
    assert lines[4].endswith("| error  | [bold]x[/] see below")
    assert lines[5].startswith("ab      | requirements |")
    assert lines[5].endswith("| error  |  [31mred")


def _many_rows(count: int) -> ScanResult:
    """``count`` rows of one repository, each with catalog metadata and a held-back release."""
    repo = RepoResult(target="big", root="/src/big", commit=None)
    finding = _result().repos[0].rows[0].finding
    catalog = CatalogInfo(NOW, reused=False, source_url="https://pypi.test/x", time_source="t")
    repo.rows = [
        Row(_dep("requirements.txt", i + 1, f"pkg-{i}"), finding, catalog=catalog)
        for i in range(count)
    ]
    return ScanResult(evaluated_at=NOW, repos=[repo], host_stats={})


def test_report_rows_take_little_memory() -> None:
    """A report row costs well under 1.5 KB (pydantic models took about 5 KB each)."""
    result = _many_rows(2000)
    build_report(result, Settings(), {})  # warm caches (validators, interned names)
    gc.collect()
    tracemalloc.start()
    try:
        before = tracemalloc.get_traced_memory()[0]
        report = build_report(result, Settings(), {})
        gc.collect()
        per_row = (tracemalloc.get_traced_memory()[0] - before) / 2000
    finally:
        tracemalloc.stop()
    assert len(report.repositories[0].dependencies) == 2000
    assert per_row < 1500


def test_json_is_the_same_document_as_a_dump_of_the_model() -> None:
    """Serialising the report directly gives the bytes a dump to Python values and orjson gave."""
    stats = {"index.crates.io": HostStats(requests=2, errors=3, cooldown_seconds=1.25)}
    for result in (_result(), _down_result(), _many_rows(3)):
        report = build_report(result, Settings(), stats, unreachable={"index.crates.io": "DNS"})
        dumped = report.model_dump(mode="json", by_alias=True)
        assert (
            render_json(report) == orjson.dumps(dumped, option=orjson.OPT_INDENT_2).decode() + "\n"
        )


def test_terminal_table_shows_checkout_and_registry_text_literally() -> None:
    """Markup in a path, package or reason is not interpreted; no escape sequence reaches the tty.

    A checkout may name a directory ``dir[bold]x[/bold]`` or declare ``^4 [red]``, a registry
    answer may carry ``ESC[31m``: rich would style the rest of the line, and a raw escape
    sequence would reach the user's terminal.
    """
    result = _result()
    result.repos[0].rows = [
        Row(
            _dep("dir[bold]x[/bold]/r.txt", 1, "pkg\x1b[31mred"),
            Finding(status="error", reason="[link]x[/link] \x1b]0;title\x07 [red]"),
        )
    ]
    result.repos[0].problems = [ManifestProblem("[bold]bad[/bold]\x1b[2J.txt", 3, "oops [red]")]
    out = io.StringIO()
    render_table(
        build_report(result, Settings(), {}),
        Console(file=out, width=250, force_terminal=True, color_system="truecolor"),
    )
    text = out.getvalue()
    assert "dir[bold]x[/bold]/r.txt" in text
    assert "pkg [31mred" in text  # the escape character is a space, the rest is literal
    assert "[link]x[/link]  ]0;title  [red]" in text
    assert "[bold]bad[/bold] [2J.txt:3: oops [red]" in text
    # rich's own styling (the status colour, bold heads) is the only escape sequence left.
    assert "\x1b[31mred" not in text
    assert "\x1b]0;" not in text
    assert "\x07" not in text
    assert "\x1b[2J" not in text


def test_bidirectional_controls_are_spaces_in_every_table() -> None:
    """A right-to-left override in a name (U+202E) never reorders the terminal line."""
    result = _result()
    result.repos[0].rows = [
        Row(
            _dep("r.txt", 1, "checkout\u202e\u2066x"),
            Finding(status="error", reason="why\u200f\u061c"),
        )
    ]
    report = build_report(result, Settings(), {})
    out = io.StringIO()
    render_table(report, Console(file=out, width=250, force_terminal=True))
    for text in (out.getvalue(), render_plain(report), render_markdown(report)):
        assert not any(c in text for c in "\u202e\u2066\u200f\u061c")
        assert "checkout  x" in text


def _limited_result() -> tuple[ScanResult, str]:
    """Three GitHub rows failed by a used-up rate limit, one failed otherwise, one with a note.

    The reason is the governor's own (``used_up``); the row whose publish times it cost still
    has a verdict and stays a row.
    """
    reset = datetime(2026, 11, 30, 17, 42, tzinfo=UTC)
    limited = used_up("api.github.com", reset, "this token (GH_TOKEN)", NOW)
    repo = RepoResult(target="ci", root="/src/ci", commit=None)
    repo.rows = [
        Row(_action(i, f"acme/r{i}"), Finding(status="error", reason=limited)) for i in range(1, 4)
    ]
    repo.rows.append(
        Row(_action(9, "acme/odd"), Finding(status="error", reason="HTTP 500 from x.test"))
    )
    noted = Finding(
        status="outdated",
        current="v1",
        latest="v2",
        eligible="v2",
        reason=f"publish times unavailable: {limited}",
    )
    repo.rows.append(Row(_action(10, "acme/dated"), noted))
    return ScanResult(evaluated_at=NOW, repos=[repo], host_stats={}), limited


def _action(line: int, name: str) -> Dependency:
    return Dependency(
        manager="github_actions",
        file=".github/workflows/ci.yml",
        line=line,
        name=name,
        package_name=name,
        datasource="github-tags",
        versioning="docker",
        dep_type="action",
        declared=f"{name}@v1",
        constraint="v1",
    )


LIMITED_LINE = (
    "api.github.com rate limit for this token (GH_TOKEN) used up until 17:42Z: 3 lookups not done"
)


def test_rows_of_a_used_up_rate_limit_are_one_line_per_host_naming_the_reset() -> None:
    """Rows failed by a used-up limit: one table line with the reset and count; JSON keeps rows."""
    result, limited = _limited_result()
    stats = {"api.github.com": HostStats(requests=60, rate_limited=1)}
    report = build_report(result, Settings(), stats)
    out = io.StringIO()
    render_table(report, Console(file=out, width=200))
    text = out.getvalue()
    assert f"  {LIMITED_LINE}\n" in text
    assert "acme/r1" not in text
    assert "HTTP 500 from x.test" in text  # another failure stays a row of its own
    assert "acme/dated" in text  # a row with a verdict is shown, its note with it
    assert summary_line(report).endswith(f"; {LIMITED_LINE}")
    assert f"\n  {LIMITED_LINE}\n" in render_plain(report)
    markdown = render_markdown(report)
    assert f"\n- `{LIMITED_LINE}`\n" in markdown
    assert "acme/r2" not in markdown
    rows = json.loads(render_json(report))["repositories"][0]["dependencies"]
    assert len(rows) == 5
    assert [r["reason"] for r in rows[:3]] == [limited] * 3


def test_a_used_up_limit_on_another_day_and_one_lookup_are_worded_so() -> None:
    """A reset on another UTC day names its date; one row is ``1 lookup``; hosts with ports."""
    reset = datetime(2026, 12, 1, 1, 5, tzinfo=UTC)
    limited = used_up("127.0.0.1:8443", reset, "unauthenticated requests", NOW)
    repo = RepoResult(target="ci", root="/src/ci", commit=None)
    repo.rows = [Row(_action(1, "acme/r1"), Finding(status="error", reason=limited))]
    report = build_report(ScanResult(NOW, [repo], {}), Settings(), {})
    assert summary_line(report).endswith(
        "; 127.0.0.1:8443 rate limit for unauthenticated requests used up until "
        "2026-12-01 01:05Z: 1 lookup not done"
    )


def test_rows_of_a_cool_down_over_the_bound_are_one_line_per_host() -> None:
    """An hour's Retry-After: the first and the queued rows are one line; the summary names it."""
    governor = Governor(Timer(monotonic=lambda: 0.0))
    governor.cool_down("registry.npmjs.org", 3600, "429 Too Many Requests")
    first = (
        "registry.npmjs.org is rate limited (429 Too Many Requests): the server asked to wait "
        "3600 s, more than the 60 s patchula waits, so the lookup failed without waiting"
    )
    reasons = [first] + [
        str(governor.over_bound("registry.npmjs.org", 3600 - i)) for i in range(1, 3)
    ]
    repo = RepoResult(target="web", root="/src/web", commit=None)
    repo.rows = [
        Row(_dep("requirements.txt", i, f"pkg{i}"), Finding(status="error", reason=reason))
        for i, reason in enumerate(reasons, start=1)
    ]
    report = build_report(ScanResult(NOW, [repo], {}), Settings(), {})
    line = (
        "registry.npmjs.org rate limited (429 Too Many Requests) for longer than the 60 s "
        "patchula waits: 3 lookups not done"
    )
    text = render_plain(report)
    assert f"\n  {line}\n" in text
    assert "pkg1" not in text
    assert summary_line(report).endswith(f"; {line}")


# --- repositories that could not be read -------------------------------------------------------


def _unread(target: str, reason: str) -> RepoResult:
    repo = RepoResult(target=target, root=target, commit=None)
    repo.unread(reason)
    return repo


NOT_FOUND = "repository not found, or not visible without a token (HTTP 404 from api.github.com)"


def test_unreadable_repositories_are_counted_apart_not_as_manifest_errors() -> None:
    """Five repositories that could not be read: said so, no "none found", libyears or errors."""
    repos = [_unread(f"github:acme/r{i}", NOT_FOUND) for i in range(5)]
    report = build_report(ScanResult(evaluated_at=NOW, repos=repos, host_stats={}), Settings(), {})
    assert summary_line(report) == (
        "0 dependencies in 5 repositories; 5 of 5 repositories could not be read"
    )
    data = json.loads(render_json(report))
    assert data["summary"]["unreadable"] == 5
    assert data["summary"]["problems"] == 5
    assert {repo["extraction"]["source"] for repo in data["repositories"]} == {"none"}
    head = render_markdown(report)
    assert (
        "**0** dependencies in **5** repositories; 5 of 5 repositories could not be read." in head
    )
    (totals,) = [line for line in head.splitlines() if "dependencies in" in line]
    assert "libyears" not in totals
    assert "manifest problem" not in head


def test_a_used_up_rate_limit_is_named_among_the_unreadable_repositories() -> None:
    """Repositories refused by a used-up token limit: how many, whose limit, until when."""
    reason = used_up(
        "api.github.com",
        datetime(2026, 11, 30, 13, 0, tzinfo=UTC),
        "this token (GH_TOKEN)",
        NOW,
    )
    result = _result()
    result.repos += [_unread("github:acme/a", reason), _unread("github:acme/b", reason)]
    result.repos.append(_unread("github:acme/gone", NOT_FOUND))
    line = summary_line(build_report(result, Settings(), {}))
    assert line == (
        "4 dependencies in 4 repositories: 1 up-to-date, 2 outdated, 1 skipped; "
        "3 of 4 repositories could not be read (2 as api.github.com rate limit for this token "
        "(GH_TOKEN) is used up until 13:00Z); 2.5 libyears; 1 manifest error"
    )


def test_libyears_are_left_out_when_no_dependency_was_evaluated() -> None:
    """Only skipped and failed rows: no "0.0 libyears" (nothing was compared with releases)."""
    repo = RepoResult(target="web", root="/src/web", commit=None)
    repo.rows = [
        Row(_dep("requirements.txt", 1), Finding(status="skipped", reason="local path")),
        Row(_dep("requirements.txt", 2, "x"), Finding(status="error", reason="HTTP 500")),
    ]
    report = build_report(ScanResult(evaluated_at=NOW, repos=[repo], host_stats={}), Settings(), {})
    assert summary_line(report) == "2 dependencies in 1 repository: 1 skipped, 1 error"
    assert json.loads(render_json(report))["summary"]["unreadable"] == 0


def _local_pins_result() -> ScanResult:
    """Five pins with local versions, each an unknown row with a long note (the trial's)."""
    repo = RepoResult(target="pins", root="/src/pins", commit=None)
    for line, (name, version) in enumerate(
        [
            ("attrs", "21.1.0+local"),
            ("torch", "2.0.0+cu118"),
            ("torchvision-nightly-build", "0.15.0+cu118.dev20230101"),
            ("six", "1.0+x"),
            ("idna", "3.0+y"),
        ],
        start=1,
    ):
        dep = Dependency(
            manager="requirements_txt",
            file="requirements.txt",
            line=line,
            name=name,
            package_name=name,
            datasource="pypi",
            versioning="pep440",
            dep_type="requirements",
            declared=f"=={version}",
            constraint=f"=={version}",
        )
        reason = f"pinned version {version} is not in the pypi release list"
        finding = Finding(
            status="unknown", reason=reason, current=version, current_source="pin", latest="25.3"
        )
        repo.rows.append(Row(dep, finding))
    return ScanResult(evaluated_at=NOW, repos=[repo], host_stats={})


def _table_rows(text: str) -> list[list[list[str]]]:
    """The table's rows, each a list of its lines' cells (a folded row has several lines).

    A row starts at a line with a status (the status never folds; a long name may).
    """
    lines = text.splitlines()
    status = [cell.strip() for cell in lines[2].split(" | ")].index("status")
    rows: list[list[list[str]]] = []
    for line in lines[4:]:
        if " | " not in line:
            break
        cells = [cell.strip() for cell in line.split(" | ")]
        cells += [""] * (len(lines[2].split(" | ")) - len(cells))  # trailing blanks stripped
        if cells[status]:
            rows.append([])
        rows[-1].append(cells)
    return rows


def test_plain_table_with_a_width_folds_long_cells_and_never_cuts_them() -> None:
    """``COLUMNS=80`` piped: every word of every cell is kept, each table line fits in 80."""
    report = build_report(_local_pins_result(), Settings(), {})
    text = render_plain(report, width=80)
    lines = text.splitlines()
    assert [c.strip() for c in lines[2].split(" | ")] == [
        "package",
        "current",
        "latest",
        "eligible",
        "update",
        "status",
        "notes",
    ]
    assert max(len(line) for line in lines if " | " in line) <= 80
    rows = _table_rows(text)
    assert len(rows) == 5
    for row, dep in zip(rows, report.repositories[0].dependencies, strict=True):
        columns = list(zip(*row, strict=True))
        assert "".join(columns[0]) == dep.name  # a long name folds without a space
        assert "".join(columns[1]) == dep.current
        # Broken at spaces, and inside a word only where it is longer than the column.
        assert "".join(columns[6]).replace(" ", "") == (dep.reason or "").replace(" ", "")
        assert all(len(part) <= 8 for part in columns[6])
    result = _local_pins_result()
    del result.repos[0].rows[2]  # without the 25-cell name: the notes get the room left
    short = render_plain(build_report(result, Settings(), {}), width=80)
    assert max(len(line) for line in short.splitlines() if " | " in line) <= 80
    for row in _table_rows(short):
        notes = [cells[6] for cells in row]
        assert notes[0] == "pinned version"
        assert " ".join(notes).endswith(" is not in the pypi release list")  # words whole
        assert all(any(cells) for cells in row)  # no blank line inside a row


def test_plain_table_at_a_very_small_width_keeps_every_column_and_no_blank_lines() -> None:
    """``COLUMNS=40``: the columns a 40-column terminal shows all stay, folded; nothing is lost.

    The columns cannot fit in 40 cells even folded to their floors, so the table is wider than
    40 rather than cut, versions unfolded; a row is as many lines as its longest folded cell,
    none of them blank.
    """
    report = build_report(_local_pins_result(), Settings(), {})
    text = render_plain(report, width=40)
    lines = text.splitlines()
    assert [c.strip() for c in lines[2].split(" | ")] == [
        "package",
        "current",
        "latest",
        "eligible",
        "update",
        "status",
        "notes",
    ]
    assert lines[3].startswith("--")  # the rule right under the header, no empty line above it
    rows = _table_rows(text)
    for row, dep in zip(rows, report.repositories[0].dependencies, strict=True):
        columns = list(zip(*row, strict=True))
        assert columns[5][0] == "unknown"
        # Folding versions below 16 cells would not make it fit: only a longer one folds.
        assert "".join(columns[1]) == dep.current
        assert columns[1][0] == (dep.current or "")[:16]
        assert "".join(columns[6]).replace(" ", "") == (dep.reason or "").replace(" ", "")
        assert len(row) <= 10
        assert all(any(cells) for cells in row)
    assert "" not in lines[:-2]  # only the line before the summary is empty


def test_plain_table_with_a_wide_width_is_the_unfolded_table() -> None:
    """A width that holds every row gives the lines of the table without a width."""
    report = build_report(_plain_result(), Settings(), {})
    assert render_plain(report, width=1000) == render_plain(report)


def _ignored_result(count: int, *, complete: bool = True) -> ScanResult:
    repo = RepoResult(target="web", root="/src/web", commit=None)
    repo.ignored = [f"examples/app{i}/package.json" for i in range(count)]
    repo.ignored_complete = complete
    return ScanResult(evaluated_at=NOW, repos=[repo], host_stats={})


def test_manifests_ignore_paths_kept_out_are_said_in_every_format() -> None:
    """JSON lists them; the table and the dashboard count them and name the first three."""
    report = build_report(_ignored_result(4), Settings(), {})
    data = json.loads(render_json(report))
    extraction = data["repositories"][0]["extraction"]
    assert extraction["ignored"] == [f"examples/app{i}/package.json" for i in range(4)]
    assert extraction["ignoredComplete"] is True
    plain = render_plain(report)
    assert (
        "  no dependencies found\n  (4 manifests not scanned, under ignore-paths: "
        "examples/app0/package.json, examples/app1/package.json, examples/app2/package.json, …;"
        " set ignore-paths to read them)\n"
    ) in plain
    out = io.StringIO()
    render_table(report, Console(file=out, width=1_000_000, no_color=True, soft_wrap=False))
    assert "".join(f"{line.rstrip()}\n" for line in out.getvalue().splitlines()) == plain
    markdown = render_markdown(report)
    assert (
        "4 manifests not scanned, under ignore-paths: `examples/app0/package.json`, "
        "`examples/app1/package.json`, `examples/app2/package.json`, … "
        "(set `ignore-paths` to read them)."
    ) in markdown
    one = render_plain(build_report(_ignored_result(1, complete=False), Settings(), {}))
    assert (
        "(at least 1 manifest not scanned, under ignore-paths: examples/app0/package.json;"
    ) in one
    none = build_report(_ignored_result(0), Settings(), {})
    assert "not scanned" not in render_plain(none)
    assert "not scanned" not in render_markdown(none)


def test_plain_table_folds_notes_and_other_columns_before_the_package_name() -> None:
    """``COLUMNS=80``: the notes give way first, and a scoped npm name folds after its ``/``.

    The trial's excalidraw case: every ``@scope/name`` folded mid-word at 16 cells while a
    mostly empty notes column kept its width.
    """
    repo = RepoResult(target=".", root="/src/web", commit=None)
    names = ["@braintree/sanitize-url", "@excalidraw/laser-pointer", "@testing-library/jest-dom"]
    for line, name in enumerate(names, 1):
        dep = Dependency(
            manager="package_json",
            file="package.json",
            line=line,
            name=name,
            package_name=name,
            datasource="npm",
            versioning="npm",
            dep_type="dependencies",
            declared="6.0.2",
            constraint="6.0.2",
        )
        reason = "deprecated: use x" if line == 1 else None
        finding = Finding(
            status="outdated",
            reason=reason,
            current="6.0.2",
            current_source="pin",
            latest="7.1.0",
            eligible="7.1.0",
            update_type="major",
            versions_behind=3,
        )
        repo.rows.append(Row(dep, finding))
    report = build_report(ScanResult(evaluated_at=NOW, repos=[repo], host_stats={}), Settings(), {})
    text = render_plain(report, width=80)
    assert max(len(line) for line in text.splitlines() if " | " in line) <= 80
    lines = text.splitlines()[4:11]
    # The notes gave first; the names fold last, after their scope's "/": never mid-word.
    assert [line.split(" | ")[0].strip() for line in lines] == [
        "@braintree/",
        "sanitize-url",
        "",
        "@excalidraw/",
        "laser-pointer",
        "@testing-library/",
        "jest-dom",
    ]
    assert lines[0].endswith("| deprecat")  # the notes at their floor (8 cells)


def test_hidden_line_counts_up_to_date_rows_with_a_note() -> None:
    """A hidden up-to-date row that carries a note is counted, in the table and piped text."""
    result = _result()
    result.repos[0].rows.append(
        Row(
            _dep("requirements/dev.txt", 11, "yarn"),
            Finding(
                status="up-to-date",
                current="1.22.22",
                reason="newest stable is 4.5.0, above the registry's latest dist-tag 1.22.22",
            ),
        )
    )
    report = build_report(result, Settings(), {})
    line = "(3 up-to-date or skipped rows hidden, 1 of them up to date with a note; -v shows them)"
    out = io.StringIO()
    render_table(report, Console(file=out, width=200))
    assert line in out.getvalue()
    assert line in render_plain(report)
    assert "hidden" not in render_plain(report, show_all=True)
