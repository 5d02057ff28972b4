"""Renderers: JSON, a Markdown dashboard, or a table (rich on a TTY, plain when piped)."""

from __future__ import annotations

from collections.abc import Iterable
from datetime import datetime

import orjson
from rich import box
from rich.console import Console
from rich.table import Table
from rich.text import Text

from patchula.report.model import DependencyReport, RepositoryReport, ScanReport

STATUS_STYLE = {
    "up-to-date": "green",
    "outdated": "yellow",
    "held-back": "cyan",
    "unknown": "magenta",
    "skipped": "dim",
    "error": "bold red",
}


def render_json(report: ScanReport) -> str:
    """Return the report as indented JSON (camelCase keys, RFC 3339 UTC times)."""
    data = report.model_dump(mode="json", by_alias=True)
    return orjson.dumps(data, option=orjson.OPT_INDENT_2).decode() + "\n"


def summary_line(report: ScanReport) -> str:
    """Return the one-line summary: counts per status and total libyears."""
    s = report.summary
    counts = s.by_status.model_dump(by_alias=True)
    parts = [f"{n} {status}" for status, n in counts.items() if n]
    line = (
        f"{s.dependencies} dependencies in {s.repositories} "
        f"{'repository' if s.repositories == 1 else 'repositories'}: "
        f"{', '.join(parts) or 'none found'}; {s.libyears:.1f} libyears"
    )
    if s.libyears_unknown:
        line += f" (+{s.libyears_unknown} behind with unknown dates)"
    if s.problems:
        line += f"; {s.problems} manifest problem{'s' if s.problems != 1 else ''}"
    return line


def _when(value: datetime | None) -> str:
    return value.strftime("%Y-%m-%d %H:%M") + "Z" if value else "unknown"


def _notes(dep: DependencyReport) -> str:
    notes: list[str] = []
    if dep.held_back:
        held = ", ".join(
            f"{h.version} (eligible {_when(h.eligible_at)})"
            if h.eligible_at
            else f"{h.version} (age unknown)"
            for h in dep.held_back[-3:]
        )
        more = f" +{len(dep.held_back) - 3} more" if len(dep.held_back) > 3 else ""  # noqa: PLR2004
        notes.append(f"held back: {held}{more}")
    if dep.reason:
        notes.append(dep.reason)
    return "; ".join(notes)


def _visible(deps: Iterable[DependencyReport], *, show_all: bool) -> list[DependencyReport]:
    return [d for d in deps if show_all or d.status not in {"up-to-date", "skipped"}]


def render_table(report: ScanReport, console: Console, *, show_all: bool = False) -> None:
    """Print the report grouped by repository and file.

    Up-to-date and skipped rows are shown only with ``show_all``.

    On a terminal it uses colour and box drawing; otherwise (or with ``NO_COLOR``) plain columns.
    """
    plain = not console.is_terminal or console.no_color
    for repo in report.repositories:
        head = f"{repo.target}" + (f" @ {repo.commit[:12]}" if repo.commit else "")
        console.print(Text(head, style="" if plain else "bold"))
        rows = _visible(repo.dependencies, show_all=show_all)
        if not rows and not repo.problems:
            console.print(
                f"  all {len(repo.dependencies)} dependencies up to date"
                if repo.dependencies
                else "  no dependencies found"
            )
        by_file: dict[str, list[DependencyReport]] = {}
        for dep in rows:
            by_file.setdefault(dep.file, []).append(dep)
        for file, deps in by_file.items():
            table = Table(
                title=file,
                title_justify="left",
                box=box.ASCII2 if plain else box.SIMPLE_HEAVY,
                show_edge=not plain,
                pad_edge=False,
            )
            for col in (
                "package",
                "type",
                "declared",
                "current",
                "latest",
                "eligible",
                "update",
                "behind",
                "libyears",
                "status",
                "notes",
            ):
                table.add_column(col, overflow="fold")
            for dep in deps:
                table.add_row(
                    dep.name
                    if dep.name == dep.package_name
                    else f"{dep.name} ({dep.package_name})",
                    dep.dep_type,
                    dep.declared or "",
                    dep.current or "",
                    dep.latest or "",
                    dep.eligible or "",
                    dep.update_type or "",
                    "" if dep.versions_behind is None else str(dep.versions_behind),
                    "" if dep.libyears is None else f"{dep.libyears:.2f}",
                    Text(dep.status, style="" if plain else STATUS_STYLE[dep.status]),
                    _notes(dep),
                )
            console.print(table)
        _print_problems(repo, console)
        console.print()
    console.print(summary_line(report))


def _print_problems(repo: RepositoryReport, console: Console) -> None:
    for p in repo.problems:
        where = f"{p.file}:{p.line}" if p.line else p.file
        console.print(f"  {p.severity}: {where}: {p.message}", markup=False, highlight=False)


def render_markdown(report: ScanReport) -> str:
    """Return a Markdown dashboard: summary, then per repository the rows that need attention."""
    out = ["# Dependency freshness", "", summary_line(report), ""]
    out.append(f"Evaluated at {_when(report.evaluated_at)} by patchula {report.tool.version}.")
    out.append("")
    for repo in report.repositories:
        out.append(f"## {repo.target}" + (f" (`{repo.commit[:12]}`)" if repo.commit else ""))
        out.append("")
        rows = _visible(repo.dependencies, show_all=False)
        if rows:
            out.append("| file | package | current | latest | eligible | update | status | notes |")
            out.append("| --- | --- | --- | --- | --- | --- | --- | --- |")
            for d in rows:
                line = f"{d.file}:{d.line}" if d.line else d.file
                cells = [
                    line,
                    d.name,
                    d.current or "",
                    d.latest or "",
                    d.eligible or "",
                    d.update_type or "",
                    d.status,
                    _notes(d),
                ]
                out.append("| " + " | ".join(_md(c) for c in cells) + " |")
        else:
            out.append(f"All {len(repo.dependencies)} dependencies are up to date.")
        if repo.problems:
            out.extend(["", "Problems:", ""])
            out.extend(
                f"- `{p.file}{':' + str(p.line) if p.line else ''}`: {_md(p.message)}"
                for p in repo.problems
            )
        out.append("")
    return "\n".join(out)


def _md(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
