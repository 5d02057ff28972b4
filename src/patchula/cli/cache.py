"""``patchula cache``: the SQLite cache file, its budget, and the lookup tasks in it.

``path``, ``prune`` and ``clear``; ``status``, ``failed``, ``warm`` and ``retry`` (seed 000's
visibility API on the command line, design.md §7).

The cache engine, settings and rich are imported when a command runs (issue 12: start-up).
"""

from __future__ import annotations

import json
import time
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Annotated, NoReturn, TypeVar

import typer

from patchula.cli.exit_codes import EXIT_USAGE
from patchula.cli.help import ArgumentsCommand
from patchula.errors import ConfigError

if TYPE_CHECKING:
    import sqlite3

    from patchula.cache import Cache
    from patchula.cli.warm import WarmOutcome
    from patchula.settings import Settings

T = TypeVar("T")

cache_app = typer.Typer(help="Inspect and maintain the SQLite cache.", no_args_is_help=True)


@cache_app.command("path")
def cache_path(
    cache: Annotated[Path | None, typer.Option(help="Cache file.", metavar="PATH")] = None,
    config: Annotated[Path | None, typer.Option(help="Config file.", metavar="PATH")] = None,
) -> None:
    """Print the cache file in use (from --cache, PATCHULA_CACHE, config, or the default)."""
    from rich.console import Console  # noqa: PLC0415 - lazy: start-up

    from patchula.cache import default_cache_path  # noqa: PLC0415 - lazy: start-up
    from patchula.settings import load_settings  # noqa: PLC0415 - lazy: start-up

    try:
        settings = load_settings({"config": config, "cache": cache})
    except ConfigError as exc:
        Console(stderr=True, soft_wrap=True).print(f"patchula: error: {exc}", markup=False)
        raise typer.Exit(EXIT_USAGE) from None
    typer.echo(str(settings.cache or default_cache_path()))


@cache_app.command("prune")
def cache_prune(
    cache: Annotated[Path | None, typer.Option(help="Cache file.", metavar="PATH")] = None,
    cache_budget: Annotated[
        str | None, typer.Option(help="Budget to prune to [default: 256MiB].", metavar="SIZE")
    ] = None,
) -> None:
    """Evict least recently used HTTP entries down to the budget and compact the file."""
    from rich.console import Console  # noqa: PLC0415 - lazy: start-up

    from patchula.cache import Cache, CacheError, default_cache_path  # noqa: PLC0415 - lazy: start-up
    from patchula.settings import load_settings  # noqa: PLC0415 - lazy: start-up

    err = Console(stderr=True, soft_wrap=True)
    try:
        settings = load_settings({"cache": cache, "cache_budget": cache_budget})
        path = settings.cache or default_cache_path()
        if not path.exists():
            typer.echo(f"no cache file at {path}; nothing to prune")
            return
        opened = Cache.open(path, budget_bytes=settings.cache_budget)
    except (ConfigError, CacheError) as exc:
        err.print(f"patchula: error: {exc}", markup=False, highlight=False)
        raise typer.Exit(EXIT_USAGE) from None
    try:
        freed = opened.prune()
        kept = opened.stats.bytes_stored
    finally:
        opened.close()
    typer.echo(f"freed {freed} bytes; {kept} compressed body bytes kept in {opened.path}")


@cache_app.command("clear")
def cache_clear(
    cache: Annotated[Path | None, typer.Option(help="Cache file.", metavar="PATH")] = None,
    config: Annotated[Path | None, typer.Option(help="Config file.", metavar="PATH")] = None,
) -> None:
    """Remove the cache file and its -wal/-shm (refused while another process has it open)."""
    from patchula.cache import CacheError, default_cache_path  # noqa: PLC0415 - lazy: start-up
    from patchula.cache.clear import clear  # noqa: PLC0415 - lazy: start-up

    settings = _settings({"cache": cache, "config": config})
    path = settings.cache or default_cache_path()
    try:
        cleared = clear(path)
    except CacheError as exc:
        _fail(str(exc))
    if cleared is None:
        typer.echo(f"no cache file at {path}; nothing to clear")
        return
    names = ", ".join(str(p) for p in cleared.files)
    typer.echo(f"removed {names} ({cleared.bytes} bytes)")
    if cleared.quarantined:
        count = len(cleared.quarantined)
        typer.echo(
            f"kept {count} quarantined {'copy' if count == 1 else 'copies'} of damaged caches "
            f"({path.name}.corrupt-*, for inspection): remove by hand when not needed"
        )


def _settings(cli: dict[str, object]) -> Settings:
    """Settings from the flags given (``None``: not given), or exit 2 naming the problem."""
    from rich.console import Console  # noqa: PLC0415 - lazy: start-up

    from patchula.settings import load_settings  # noqa: PLC0415 - lazy: start-up

    try:
        return load_settings(cli)
    except ConfigError as exc:
        Console(stderr=True, soft_wrap=True).print(
            f"patchula: error: {exc}", markup=False, highlight=False
        )
        raise typer.Exit(EXIT_USAGE) from None


def _fail(message: str) -> NoReturn:
    from rich.console import Console  # noqa: PLC0415 - lazy: start-up

    Console(stderr=True, soft_wrap=True).print(
        f"patchula: error: {message}", markup=False, highlight=False
    )
    raise typer.Exit(EXIT_USAGE)


def _format(value: str | None) -> str:
    if value not in {None, "table", "json"}:
        _fail(f"--format: {value!r} is not one of table, json")
    return value or "table"


_NO_EVICTION = 1 << 62


def _read_cache(settings: Settings, read: Callable[[Cache], T]) -> T | None:
    """``read`` the opened cache file; ``None`` when there is no file (a usage error if unusable).

    No budget to enforce: looking at the queue or the views never evicts an entry.
    """
    from patchula.cache import Cache, CacheError, default_cache_path  # noqa: PLC0415 - lazy: start-up

    path = settings.cache or default_cache_path()
    if not path.exists():
        return None
    try:
        with Cache.open(path, budget_bytes=_NO_EVICTION, readers=0) as opened:
            return read(opened)
    except CacheError as exc:
        _fail(str(exc))


def _read_tasks(settings: Settings, read: Callable[[sqlite3.Connection], T]) -> T | None:
    """Run ``read`` (a ``cache.tasks`` query) on the cache file; ``None`` when there is none."""
    return _read_cache(settings, lambda opened: opened.task_job_sync(read))


CacheOption = Annotated[Path | None, typer.Option(help="Cache file.", metavar="PATH")]
ConfigOption = Annotated[Path | None, typer.Option(help="Config file.", metavar="PATH")]
FormatOption = Annotated[
    str | None,
    typer.Option("--format", help="table or json [default: table].", metavar="FORMAT"),
]


@cache_app.command("status")
def cache_status(
    cache: CacheOption = None, config: ConfigOption = None, output_format: FormatOption = None
) -> None:
    """Count lookup tasks per status (the oldest pending, the next retry due) and catalog views."""
    from patchula.cache import ViewSummary, tasks  # noqa: PLC0415 - lazy: start-up
    from patchula.cli.warm import (  # noqa: PLC0415 - lazy: start-up
        render_status,
        status_json,
        views_json,
    )

    fmt = _format(output_format)
    settings = _settings({"cache": cache, "config": config})
    # One opening of the file for both: the queue's counts and the views' summary.
    found = _read_cache(
        settings, lambda opened: (opened.task_job_sync(tasks.summary), opened.view_summary())
    )
    summary, views = found or (tasks.TaskSummary({}, None, None), ViewSummary({}))
    status = status_json(summary)
    status["views"] = views_json(views, time.time())
    typer.echo(json.dumps(status, indent=2) if fmt == "json" else render_status(status))


@cache_app.command("failed")
def cache_failed(
    cache: CacheOption = None, config: ConfigOption = None, output_format: FormatOption = None
) -> None:
    """List lookup tasks failed for good: package, datasource, error, attempts, failed at."""
    from patchula.cache import tasks  # noqa: PLC0415 - lazy: start-up
    from patchula.cli.warm import failed_json, render_failed  # noqa: PLC0415 - lazy: start-up

    fmt = _format(output_format)
    settings = _settings({"cache": cache, "config": config})
    failed = failed_json(_read_tasks(settings, tasks.failed) or [])
    typer.echo(json.dumps(failed, indent=2) if fmt == "json" else render_failed(failed))


def _warm_options(
    *,
    cache: Path | None,
    config: Path | None,
    registry: list[str] | None,
    host_concurrency: list[str] | None,
    cache_workers: int | None,
    cache_max_depth: int | None,
    cache_max_attempts: int | None,
    output_format: str | None,
    quiet: bool,
) -> Settings:
    return _settings(
        {
            "cache": cache,
            "config": config,
            "registries": registry,
            "host_concurrency": host_concurrency,
            "cache_workers": cache_workers,
            "cache_max_depth": cache_max_depth,
            "cache_max_attempts": cache_max_attempts,
            "format": _format(output_format),
            "quiet": quiet or None,
        }
    )


RegistryOption = Annotated[
    list[str] | None,
    typer.Option(
        "--registry", metavar="NAME=URL", help="NAME=URL base URL for a datasource (repeatable)."
    ),
]
HostOption = Annotated[
    list[str] | None,
    typer.Option(
        "--host-concurrency",
        metavar="HOST=N",
        help="HOST=N request limit for one host, 1-100 (repeatable) [default: 16].",
    ),
]
WorkersOption = Annotated[
    int | None,
    typer.Option(help="Lookup tasks worked on at once, 1-100 [default: 5].", metavar="N"),
]
DepthOption = Annotated[
    int | None,
    typer.Option(
        help="Depth of dependencies of dependencies that fails its task [default: 10].",
        metavar="N",
    ),
]
AttemptsOption = Annotated[
    int | None,
    typer.Option(help="Attempts before a task fails for good [default: 3].", metavar="N"),
]
NoWaitOption = Annotated[
    bool,
    typer.Option("--no-wait", help="Stop when nothing is ready now; leave later retries queued."),
]
QuietOption = Annotated[bool, typer.Option("--quiet", "-q", help="Print only the summary line.")]


def _report(outcome: WarmOutcome, settings: Settings) -> None:
    """Print the outcome and exit: 0, or 3 when a task failed for good in this run."""
    from patchula.cli.exit_codes import EXIT_LOOKUP_FAILED, EXIT_OK  # noqa: PLC0415 - lazy

    if settings.format == "json":
        typer.echo(json.dumps(outcome.json(), indent=2))
    else:
        if not settings.quiet:
            for problem in outcome.problems:
                typer.echo(f"problem: {problem}", err=True)
        typer.echo(outcome.summary())
    failed = outcome.result.failed > 0 or bool(outcome.problems)
    raise typer.Exit(EXIT_LOOKUP_FAILED if failed else EXIT_OK)


def _run_warm(
    targets: list[str],
    settings: Settings,
    *,
    wait: bool,
    retry: str | None = None,
    retry_all: bool = False,
) -> WarmOutcome:
    from patchula.cache import CacheError  # noqa: PLC0415 - lazy: start-up
    from patchula.cli.run import check_not_scanned  # noqa: PLC0415 - lazy: start-up
    from patchula.cli.warm import warm  # noqa: PLC0415 - lazy: start-up

    try:
        if settings.cache is not None:  # never a manifest the targets' scan reads (run's rule)
            check_not_scanned(settings.cache, targets, settings, "cache")
        return warm(targets, settings, wait=wait, retry=retry, retry_all=retry_all)
    except (CacheError, ConfigError) as exc:
        _fail(str(exc))
    except KeyboardInterrupt:
        typer.echo("patchula: interrupted", err=True)
        raise typer.Exit(130) from None


@cache_app.command("warm", cls=ArgumentsCommand)
def cache_warm(  # noqa: PLR0917 - one parameter per documented flag, as typer wants
    targets: Annotated[
        list[str] | None,
        typer.Argument(
            help="Checkouts or manifest files whose dependencies (and theirs) are looked up; "
            "none: work through the queue only.",
            metavar="TARGET",
        ),
    ] = None,
    cache: CacheOption = None,
    config: ConfigOption = None,
    registry: RegistryOption = None,
    host_concurrency: HostOption = None,
    cache_workers: WorkersOption = None,
    cache_max_depth: DepthOption = None,
    cache_max_attempts: AttemptsOption = None,
    no_wait: NoWaitOption = False,  # noqa: FBT002 - a typer flag
    output_format: FormatOption = None,
    quiet: QuietOption = False,  # noqa: FBT002 - a typer flag
) -> None:
    """Fill the cache for the targets: every dependency, and theirs, as lookup tasks."""
    settings = _warm_options(
        cache=cache,
        config=config,
        registry=registry,
        host_concurrency=host_concurrency,
        cache_workers=cache_workers,
        cache_max_depth=cache_max_depth,
        cache_max_attempts=cache_max_attempts,
        output_format=output_format,
        quiet=quiet,
    )
    _report(_run_warm(targets or [], settings, wait=not no_wait), settings)


@cache_app.command("retry", cls=ArgumentsCommand)
def cache_retry(  # noqa: PLR0917 - one parameter per documented flag, as typer wants
    name: Annotated[
        str | None, typer.Argument(help="The package whose failed task to retry.", metavar="NAME")
    ] = None,
    retry_all: Annotated[  # noqa: FBT002 - a typer flag
        bool, typer.Option("--all", help="Retry every failed task.")
    ] = False,
    cache: CacheOption = None,
    config: ConfigOption = None,
    registry: RegistryOption = None,
    host_concurrency: HostOption = None,
    cache_workers: WorkersOption = None,
    cache_max_attempts: AttemptsOption = None,
    no_wait: NoWaitOption = False,  # noqa: FBT002 - a typer flag
    output_format: FormatOption = None,
    quiet: QuietOption = False,  # noqa: FBT002 - a typer flag
) -> None:
    """Put a package's failed task (or, with --all, every one) back to pending and run them."""
    if (name is None) == (not retry_all):
        _fail("give a package NAME or --all (not both)")
    settings = _warm_options(
        cache=cache,
        config=config,
        registry=registry,
        host_concurrency=host_concurrency,
        cache_workers=cache_workers,
        cache_max_depth=None,
        cache_max_attempts=cache_max_attempts,
        output_format=output_format,
        quiet=quiet,
    )
    outcome = _run_warm([], settings, wait=not no_wait, retry=name, retry_all=retry_all)
    if name is not None and not outcome.retried:
        _fail(f"no failed lookup task for {name!r} (see `patchula cache failed`)")
    _report(outcome, settings)
