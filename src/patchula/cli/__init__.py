"""The command line (typer): options → settings → one library call → render → exit code.

One module per command — ``run`` (``cli/run.py``), ``cache path``/``cache prune``
(``cli/cache.py``), ``report merge`` (``cli/report.py``), ``schema`` (``cli/schema.py``) —
and the exit-code table in one place (``cli/exit_codes.py``): 0 nothing matched
``--fail-on``, 1 findings matched ``--fail-on``, 2 usage or configuration error, 3 some
lookups failed.
"""

from __future__ import annotations

import gc
import logging
import os
import sys
import threading
from typing import Annotated, NoReturn

import typer

from patchula import __version__
from patchula.cli import cache, report, run, schema
from patchula.cli.exit_codes import (
    EXIT_FINDINGS,
    EXIT_LOOKUP_FAILED,
    EXIT_OK,
    EXIT_USAGE,
    exit_code,
)

__all__ = [
    "EXIT_FINDINGS",
    "EXIT_LOOKUP_FAILED",
    "EXIT_OK",
    "EXIT_USAGE",
    "app",
    "console_main",
    "exit_code",
    "main",
]

app = typer.Typer(
    name="patchula",
    help="Dependency freshness scanner: which dependencies are behind, by how much, and what a "
    "minimum-release-age policy holds back. Every run is a dry run.",
    no_args_is_help=True,
    add_completion=False,
    rich_markup_mode=None,
    pretty_exceptions_enable=False,
)


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


# Registered in the order of `patchula --help`: run, cache, report, schema.
app.command(name="run", cls=run.RunCommand)(run.run)
app.add_typer(cache.cache_app, name="cache")
app.add_typer(report.report_app, name="report")
app.command(name="schema")(schema.schema)


# The collector's first threshold from the start of a command: ``patchula.scan``'s
# ``GC_YOUNG_THRESHOLD`` (a test keeps them equal; importing the scan here would import it for
# ``--version`` too).
START_GC_YOUNG_THRESHOLD = 50_000


def main() -> None:
    """Console-script entry point.

    The collector's first threshold goes up to ``START_GC_YOUNG_THRESHOLD`` allocations before
    a command imports what it needs: those imports (pydantic, settings, the scan, the cache)
    make tens of thousands of objects that all stay alive, and with CPython's default of 700
    a ``run`` of a checkout without manifests made ~80 young and 7 middle collections, each
    freeing nothing (issue 12: start-up). ``scan.freeze_startup_objects`` keeps the same
    threshold for the scan itself, with the reasons and the bound on what waits longer.
    """
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(max(young, START_GC_YOUNG_THRESHOLD), middle, oldest)
    app()


def console_main() -> NoReturn:
    """The ``patchula`` console script and ``python -m patchula``: ``main``, then a prompt exit.

    ``main`` ends in ``SystemExit`` (typer's standalone mode); in-process callers (tests) keep
    that. A process that is about to end anyway does not need the interpreter's teardown,
    which frees every object the run made one at a time: 50-80 ms after the output of a
    40-dependency scan, 8% of its wall time (issue 12). ``leave`` ends it at once instead.
    """
    try:
        main()
    except SystemExit as exc:
        leave(exc.code)
    leave(0)


def leave(code: object) -> NoReturn:
    """End the process with ``code`` (``SystemExit``'s), skipping the interpreter's teardown.

    Only when nothing but the teardown is left: the exit status is an int (or ``None``: 0),
    the main thread is the only thread (anything else is waited for, as Python does), no
    profiler or tracer is installed (``python -m cProfile``, coverage: they write their
    results when the interpreter exits), and the standard streams flush (a failed flush takes
    Python's own path: its message and status 120). Logging is shut down first
    (``logging.shutdown``, the one exit handler patchula's imports register; a test keeps it
    so); then ``os._exit``. Otherwise ``SystemExit(code)``.
    """
    alone = threading.active_count() == 1
    watched = sys.gettrace() is not None or sys.getprofile() is not None
    if (code is None or type(code) is int) and alone and not watched:
        try:
            sys.stdout.flush()
            sys.stderr.flush()
        except (OSError, ValueError):
            pass
        else:
            logging.shutdown()
            os._exit(code or 0)
    raise SystemExit(code)
