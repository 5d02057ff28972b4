"""``patchula cache path`` and ``patchula cache prune``: the SQLite cache file and its budget.

The cache engine, settings and rich are imported when a command runs (issue 12: start-up).
"""

from __future__ import annotations

from pathlib import Path
from typing import Annotated

import typer

from patchula.cli.exit_codes import EXIT_USAGE
from patchula.errors import ConfigError

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
