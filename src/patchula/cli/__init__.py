"""The command line (typer): options → settings → one library call → render → exit code.

Exit codes, decided only in ``exit_code``: 0 nothing matched ``--fail-on``, 1 findings matched
``--fail-on``, 2 usage or configuration error, 3 some lookups failed.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path
from typing import Annotated, Any

import anyio
import orjson
import typer
from rich.console import Console
from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

from patchula import __version__
from patchula.clock import SystemClock
from patchula.errors import ConfigError
from patchula.http.fetcher import Fetcher, make_client
from patchula.report.model import ScanReport, build_report
from patchula.report.render import render_json, render_markdown, render_table, summary_line
from patchula.scan import scan
from patchula.settings import Settings, load_settings

EXIT_OK = 0
EXIT_FINDINGS = 1
EXIT_USAGE = 2
EXIT_LOOKUP_FAILED = 3

app = typer.Typer(
    name="patchula",
    help="Dependency freshness scanner: which dependencies are behind, by how much, and what a "
    "minimum-release-age policy holds back. Every run is a dry run.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


def exit_code(report: ScanReport, fail_on: str) -> int:
    """Map a report to the process exit code (the one table of design.md §3).

    Failed lookups and unreadable manifests or targets (3) win over findings (1).
    ``fail_on``: ``none`` never fails on findings;
    ``major`` fails when an outdated dependency's eligible update is major; ``outdated`` when any
    dependency is outdated; ``held-back`` when any is outdated or held back.
    """
    deps = [d for r in report.repositories for d in r.dependencies]
    if any(d.status == "error" for d in deps) or any(
        p.severity == "error" for r in report.repositories for p in r.problems
    ):
        return EXIT_LOOKUP_FAILED
    if fail_on == "major":
        hits = [d for d in deps if d.status == "outdated" and d.update_type == "major"]
    elif fail_on == "outdated":
        hits = [d for d in deps if d.status == "outdated"]
    elif fail_on == "held-back":
        hits = [d for d in deps if d.status in {"outdated", "held-back"}]
    else:
        hits = []
    return EXIT_FINDINGS if hits else EXIT_OK


def _version(value: bool) -> None:  # noqa: FBT001 - typer callback signature
    if value:
        typer.echo(f"patchula {__version__}")
        raise typer.Exit


@app.callback()
def _root(
    version: Annotated[  # noqa: FBT002 - a typer flag
        bool, typer.Option("--version", callback=_version, is_eager=True, help="Print the version.")
    ] = False,
) -> None:
    """Dependency freshness scanner."""


@app.command()
def run(  # noqa: PLR0917 - one parameter per documented flag, as typer wants
    targets: Annotated[
        list[str] | None,
        typer.Argument(help="Local checkouts to scan (default: .).", metavar="TARGET"),
    ] = None,
    concurrency: Annotated[
        int | None, typer.Option(help="Repositories scanned at once [default: 8].", metavar="N")
    ] = None,
    host_concurrency: Annotated[
        list[str] | None,
        typer.Option(
            "--host-concurrency",
            metavar="HOST=N",
            help="HOST=N request limit for one host, 1-100 (repeatable) [default: 16].",
        ),
    ] = None,
    registry: Annotated[
        list[str] | None,
        typer.Option(
            "--registry",
            metavar="NAME=URL",
            help="NAME=URL base URL for a datasource (npm, pypi); repeatable.",
        ),
    ] = None,
    output_format: Annotated[
        str | None,
        typer.Option(
            "--format", help="table, json or markdown [default: table].", metavar="FORMAT"
        ),
    ] = None,
    report: Annotated[
        Path | None, typer.Option(help="Also write the JSON report to this file.", metavar="PATH")
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            help="Findings that exit 1: none; major (an outdated dependency with a major "
            "update); outdated (any outdated); held-back (any outdated or held back) "
            "[default: none].",
            metavar="LEVEL",
        ),
    ] = None,
    min_release_age: Annotated[
        str | None,
        typer.Option(
            help="Minimum release age before an update is proposed, e.g. 72h, 3d [default: 0].",
            metavar="DURATION",
        ),
    ] = None,
    config: Annotated[
        Path | None,
        typer.Option(help="Config file (patchula.toml or a pyproject.toml).", metavar="PATH"),
    ] = None,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose",
            "-v",
            count=True,
            show_default=False,
            help="Show every row and host statistics.",
        ),
    ] = 0,
    quiet: Annotated[  # noqa: FBT002 - a typer flag
        bool, typer.Option("--quiet", "-q", help="Print only the summary line.")
    ] = False,
) -> None:
    """Scan checkouts and report how far behind their npm and Python dependencies are."""
    cli: dict[str, Any] = {
        "concurrency": concurrency,
        "host_concurrency": host_concurrency,
        "registries": registry,
        "format": output_format,
        "report": report,
        "fail_on": fail_on,
        "min_release_age": min_release_age,
        "config": config,
        "verbose": verbose or None,
        "quiet": quiet or None,
    }
    err = Console(stderr=True, soft_wrap=True)
    try:
        settings = load_settings(cli)
        result = anyio.run(_run, targets or ["."], settings, err)
    except ConfigError as exc:
        err.print(f"patchula: error: {exc}", markup=False, highlight=False)
        raise typer.Exit(EXIT_USAGE) from None
    except KeyboardInterrupt:
        err.print("patchula: interrupted", markup=False, highlight=False)
        raise typer.Exit(130) from None
    try:
        code = _emit(result, settings)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`patchula run | head`): not an error of the scan.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        code = exit_code(result, settings.fail_on)
    raise typer.Exit(code)


async def _run(targets: list[str], settings: Settings, err: Console) -> ScanReport:
    async with make_client() as client:
        fetcher = Fetcher(
            client,
            host_limits=settings.host_concurrency,
            default_limit=settings.default_host_concurrency,
        )
        show_progress = (
            settings.format == "table"
            and not settings.quiet
            and err.is_terminal
            and settings.progress
        )
        if show_progress:
            with Progress(
                TextColumn("looking up"),
                BarColumn(),
                MofNCompleteColumn(),
                TimeElapsedColumn(),
                console=err,
                transient=True,
            ) as bar:
                task = bar.add_task("lookups", total=None)
                result = await scan(
                    targets,
                    settings,
                    fetcher,
                    SystemClock(),
                    on_progress=lambda done, total: bar.update(task, completed=done, total=total),
                )
        else:
            result = await scan(targets, settings, fetcher, SystemClock())
        return build_report(result, settings, fetcher.stats)


def _emit(report: ScanReport, settings: Settings) -> int:
    if settings.report is not None:
        try:
            settings.report.parent.mkdir(parents=True, exist_ok=True)
            settings.report.write_text(render_json(report), encoding="utf-8")
        except OSError as exc:
            Console(stderr=True).print(
                f"patchula: error: cannot write report {settings.report}: {exc.strerror}"
            )
            return EXIT_USAGE
    if settings.format == "json":
        sys.stdout.write(render_json(report))
    elif settings.format == "markdown":
        sys.stdout.write(render_markdown(report) + "\n")
    elif settings.quiet:
        sys.stdout.write(summary_line(report) + "\n")
    else:
        console = Console(no_color=bool(os.environ.get("NO_COLOR")) or None)
        if not console.is_terminal:
            console = Console(width=200, no_color=True, highlight=False, soft_wrap=False)
        render_table(report, console, show_all=settings.verbose > 0)
        if settings.verbose:
            _print_hosts(report, console)
    return exit_code(report, settings.fail_on)


def _print_hosts(report: ScanReport, console: Console) -> None:
    for host, s in report.hosts.items():
        responses = ", ".join(f"{k}: {v}" for k, v in sorted(s.responses.items()))
        console.print(
            f"{host}: {s.requests} requests ({responses}); 304s {s.not_modified}, "
            f"429s {s.rate_limited}, retries {s.retries}, "
            f"cool-down {s.cooldown_seconds:.1f}s, peak concurrency {s.max_concurrency}",
            markup=False,
            highlight=False,
        )


@app.command()
def schema() -> None:
    """Print the JSON Schema of the report (``--format json``)."""
    document = ScanReport.model_json_schema(by_alias=True)
    sys.stdout.write(orjson.dumps(document, option=orjson.OPT_INDENT_2).decode() + "\n")


def main() -> None:
    """Console-script entry point."""
    app()
