"""``patchula report merge``: shard reports (``run --shard I/N --report``) → one report.

The merge itself is ``report.merge`` (pure); this reads the files (each bounded), prints or
writes the merged report in the format asked, and exits by the same table as ``run``
(``cli/exit_codes.py``) applied to the merged report: 3 when a shard's lookups failed, or the
shards did not cut one target list, or an owner could not be listed, or a share of the split
is in no report (``targets``: the merge warns, naming the reports or shares), 1 when its
findings match ``--fail-on`` (by default the level the shards were run with, from the first
report's options), 0 otherwise; 2 for a file that cannot be merged.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, get_args

import typer

from patchula.cli.exit_codes import EXIT_USAGE, exit_code, unjudged_note
from patchula.cli.help import ArgumentsCommand
from patchula.errors import ConfigError

if TYPE_CHECKING:
    from patchula.cli.run import LazyConsole
    from patchula.report.model import ScanReport

report_app = typer.Typer(help="Work with JSON reports of `patchula run`.", no_args_is_help=True)

# The most of one report file read: a share of tens of thousands of dependencies is some
# hundreds of megabytes of indented JSON; anything larger is not a report of ours.
REPORT_MAX_BYTES = 1024 * 1024 * 1024


@report_app.command("merge", cls=ArgumentsCommand)
def merge(
    files: Annotated[
        list[Path],
        typer.Argument(
            help="JSON reports (`patchula run --format json` or --report), e.g. shard-*.json.",
            metavar="REPORT",
            show_default=False,
        ),
    ],
    output_format: Annotated[
        str,
        typer.Option("--format", help="json, markdown or table.", metavar="FORMAT"),
    ] = "json",
    output: Annotated[
        Path | None,
        typer.Option(
            "--output", "-o", help="Write the merged report here, not on stdout.", metavar="PATH"
        ),
    ] = None,
    fail_on: Annotated[
        str | None,
        typer.Option(
            help="Findings of the merged report that exit 1, as for `patchula run`: none, "
            "major, outdated, held-back [default: the --fail-on the shards were run with].",
            metavar="LEVEL",
        ),
    ] = None,
    allow_unknown: Annotated[
        bool | None,
        typer.Option(
            "--allow-unknown/--no-allow-unknown",
            help="Under --fail-on, let rows whose status is unknown pass "
            "[default: as the shards were run].",
            show_default=False,
        ),
    ] = None,
    verbose: Annotated[
        int,
        typer.Option(
            "--verbose", "-v", count=True, show_default=False, help="Table: show every row."
        ),
    ] = 0,
) -> None:
    """Merge the reports of `patchula run --shard I/N` into one report of the same schema.

    Repositories are in the order of the whole target list when the shards cut one list (else
    of the files; one in two files: the later evaluated is kept, with a warning); totals are
    recounted from the rows, host and cache statistics added up. Shards that cut different
    target lists, or whose owner listing failed, and shares given by no report
    (``targets.missingShards``) are a warning and exit 3.
    """
    from patchula.cli.run import LazyConsole  # noqa: PLC0415 - lazy: start-up
    from patchula.report.merge import merge as merge_reports  # noqa: PLC0415 - lazy: start-up
    from patchula.report.merge import parse_report  # noqa: PLC0415 - lazy: start-up
    from patchula.settings import FailOn, OutputFormat  # noqa: PLC0415 - lazy: start-up

    err = LazyConsole()
    if output_format not in get_args(OutputFormat):
        _fail(err, f"--format: expected one of json, markdown, table, got {output_format!r}")
    levels = get_args(FailOn)
    if fail_on is not None and fail_on not in levels:
        _fail(err, f"--fail-on: expected one of none, major, outdated, held-back, got {fail_on!r}")
    try:
        reports = [(str(path), parse_report(read_report(path), str(path))) for path in files]
    except ConfigError as exc:
        _fail(err, str(exc))
    merged = merge_reports(reports)
    for warning in merged.warnings:
        err.print(f"patchula: warning: {warning}", markup=False, highlight=False)
    if fail_on is None:
        # As the shards were run (the first report's options): the merged shards exit as one
        # run over all their targets would have.
        recorded = merged.report.options.get("fail-on")
        fail_on = recorded if isinstance(recorded, str) and recorded in levels else "none"
    if allow_unknown is None:
        allow_unknown = merged.report.options.get("allow-unknown") is True
    code = exit_code(merged.report, fail_on, allow_unknown=allow_unknown)
    if (note := unjudged_note(merged.report, fail_on, allow_unknown=allow_unknown)) is not None:
        err.print(f"patchula: note: {note}", markup=False, highlight=False)
    try:
        _emit(merged.report, output_format, output, verbose)
        sys.stdout.flush()
    except BrokenPipeError:
        # The reader went away (`report merge … | head`): the exit code still says the verdict.
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
    except OSError as exc:
        _fail(err, f"cannot write {output or 'stdout'}: {exc.strerror or exc}")
    raise typer.Exit(code)


def read_report(path: Path) -> bytes:
    """The bytes of the report file ``path``, at most ``REPORT_MAX_BYTES``.

    Raises:
        ConfigError: it cannot be read, or is larger (the message names the file).
    """
    too_large = f"{path}: larger than {REPORT_MAX_BYTES} bytes, not a report"
    try:
        with path.open("rb") as handle:
            info = os.fstat(handle.fileno())
            # A regular file says its size: one too large is refused before it is read.
            if stat.S_ISREG(info.st_mode) and info.st_size > REPORT_MAX_BYTES:
                raise ConfigError(too_large)
            data = handle.read(REPORT_MAX_BYTES + 1)
    except OSError as exc:
        msg = f"{path}: cannot read: {exc.strerror or exc}"
        raise ConfigError(msg) from None
    if len(data) > REPORT_MAX_BYTES:  # a pipe or device that kept sending
        raise ConfigError(too_large)
    return data


def _emit(report: ScanReport, output_format: str, output: Path | None, verbose: int) -> None:
    """Print the report on stdout as ``run`` does, or write it to ``output`` (a table as text)."""
    from patchula.cli.run import _print, write_report  # noqa: PLC0415 - lazy: start-up
    from patchula.report.dashboard import render_markdown  # noqa: PLC0415 - lazy: start-up
    from patchula.report.render import render_json, render_plain  # noqa: PLC0415 - lazy: start-up
    from patchula.settings import Settings  # noqa: PLC0415 - lazy: start-up

    if output is None:
        _print(report, Settings.model_validate({"format": output_format, "verbose": verbose}))
        return
    if output_format == "json":
        text = render_json(report)
    elif output_format == "markdown":
        text = render_markdown(report)
    else:
        text = render_plain(report, show_all=verbose > 0)
    write_report(output, text)


def _fail(err: LazyConsole, message: str) -> NoReturn:
    """Say ``message`` as a usage error and exit 2."""
    err.print(f"patchula: error: {message}", markup=False, highlight=False)
    raise typer.Exit(EXIT_USAGE)
