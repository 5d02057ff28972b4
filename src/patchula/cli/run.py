"""``patchula run``: options → settings → one scan → printed results, ``--report``, exit code.

What only a run needs (settings, the scan, the cache, HTTP, the report, rich) is imported when
the command runs, not when the CLI is built: ``patchula --version`` imports none of it, and a
run imports HTTP only for its first request and rich only to draw (issue 12: start-up).
"""

from __future__ import annotations

import contextlib
import errno
import os
import sys
from collections.abc import Callable, Iterable, Mapping
from datetime import UTC, datetime
from pathlib import Path
from typing import IO, TYPE_CHECKING, Annotated, Any, Protocol

import typer

from patchula.cli.exit_codes import EXIT_USAGE, exit_code, unjudged_note
from patchula.cli.help import ArgumentsCommand
from patchula.errors import ConfigError
from patchula.manager import MANAGERS
from patchula.manager.paths import RULES

_SWITCH_INTERVAL = 0.0005  # seconds; see run(): the GIL back to the event loop sooner

if TYPE_CHECKING:
    import asyncio

    from rich.console import Console
    from typer._click import Context as ClickContext

    from patchula.cache import Cache
    from patchula.clock import Clock
    from patchula.credentials import RegistryAccess
    from patchula.errors import LookupFailed
    from patchula.http.fetcher import Fetcher
    from patchula.http.lazy import LazyFetcher
    from patchula.lookup import LookupKey
    from patchula.models import Catalog
    from patchula.report.model import CacheReport, HostReport, ScanReport
    from patchula.settings import Settings
    from patchula.warm import TaskRecorder


class LazyConsole:
    """rich's stderr console (soft-wrapped), made when something is first printed or asked.

    A run that says nothing on stderr and draws no progress bar never imports rich.
    """

    def __init__(self) -> None:
        self._console: Console | None = None

    @property
    def console(self) -> Console:
        """The console itself (made now if it was not yet)."""
        if self._console is None:
            from rich.console import Console  # noqa: PLC0415 - lazy: start-up

            self._console = Console(stderr=True, soft_wrap=True)
        return self._console

    @property
    def is_terminal(self) -> bool:
        """Whether stderr is a terminal, as rich decides (``FORCE_COLOR``, ``TTY_COMPATIBLE``)."""
        return _is_terminal(sys.stderr)

    def print(self, text: str, *, markup: bool, highlight: bool) -> None:
        """``Console.print`` of one message."""
        self.console.print(text, markup=markup, highlight=highlight)


class RunCommand(ArgumentsCommand):
    """``patchula run``'s click command: a bare ``--recheck`` means ``--recheck=*``.

    click has no optional option value for a repeatable option, so a ``--recheck`` that ends
    the command line or is followed by another option is given the value ``*`` (every
    dependency) before parsing; ``--recheck PATTERN`` and ``--recheck=PATTERN`` keep theirs.
    """

    def parse_args(self, ctx: ClickContext, args: list[str]) -> list[str]:
        """Rewrite bare ``--recheck`` flags, then parse as click does."""
        return super().parse_args(ctx, bare_recheck(args))


def bare_recheck(args: list[str]) -> list[str]:
    """``args`` with each ``--recheck`` not followed by a value written ``--recheck=*``."""
    out: list[str] = []
    for index, arg in enumerate(args):
        if arg == "--":
            return out + args[index:]
        following = args[index + 1] if index + 1 < len(args) else None
        if arg == "--recheck" and (following is None or following.startswith("-")):
            out.append("--recheck=*")
        else:
            out.append(arg)
    return out


def run(  # noqa: PLR0917 - one parameter per documented flag, as typer wants
    targets: Annotated[
        list[str] | None,
        typer.Argument(
            help=(
                "Local checkouts, workspace member directories or manifest files, or"
                " github:OWNER/REPO[@REF] and github:OWNER/* (default: .)."
            ),
            metavar="TARGET",
        ),
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
            # Every name of settings.REGISTRY_NAMES (not imported here: start-up; a test
            # holds the two together).
            help="NAME=URL base URL for a datasource (npm, pypi, crates, crates-api, goproxy, "
            "github, docker, docker-hub, node, python, go); "
            "repeatable. Userinfo in URL (https://user:pass@host) is sent as Basic auth to that "
            "URL only and never shown.",
        ),
    ] = None,
    insecure_registry: Annotated[
        list[str] | None,
        typer.Option(
            "--insecure-registry",
            metavar="HOST",
            help="An image registry host[:port] to reach over plain http (repeatable); "
            "loopback hosts always are.",
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
            "update); outdated (any outdated); held-back (any outdated or held back); under "
            "each, a dependency that could not be judged (unknown) too [default: none].",
            metavar="LEVEL",
        ),
    ] = None,
    allow_unknown: Annotated[  # noqa: FBT002 - a typer flag
        bool,
        typer.Option(
            "--allow-unknown",
            help="Under --fail-on, let dependencies that could not be judged (status unknown) "
            "pass; by default they exit 1 as findings do.",
        ),
    ] = False,
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
            help=(
                "Also list up-to-date and skipped rows, and print host and cache statistics "
                "(by default the table lists the rows that need attention)."
            ),
        ),
    ] = 0,
    quiet: Annotated[  # noqa: FBT002 - a typer flag
        bool, typer.Option("--quiet", "-q", help="Print only the summary line.")
    ] = False,
    cache: Annotated[
        Path | None,
        typer.Option(
            help="SQLite cache file [default: see `patchula cache path`].", metavar="PATH"
        ),
    ] = None,
    no_cache: Annotated[  # noqa: FBT002 - a typer flag
        bool, typer.Option("--no-cache", help="Neither read nor write the cache.")
    ] = False,
    cache_budget: Annotated[
        str | None,
        typer.Option(
            help="Compressed bytes of HTTP bodies kept [default: 256MiB].", metavar="SIZE"
        ),
    ] = None,
    go_freshness_secs: Annotated[
        int | None,
        typer.Option(
            help="Keep Go proxy @v/list and @latest fresh at least this long; 0 = upstream "
            "freshness [default: 3600].",
            metavar="N",
        ),
    ] = None,
    registry_freshness_secs: Annotated[
        int | None,
        typer.Option(
            help="Keep OCI tag lists sent without ETag and Last-Modified fresh at least this "
            "long; 0 = upstream freshness [default: 3600].",
            metavar="N",
        ),
    ] = None,
    request_deadline: Annotated[
        float | None,
        typer.Option(
            help="Seconds one registry request may take in all: attempts, redirects, back-off "
            "(0 < S <= 600) [default: 30].",
            metavar="SECONDS",
        ),
    ] = None,
    max_body_bytes: Annotated[
        str | None,
        typer.Option(
            help="Largest response body accepted, on the wire and decompressed [default: 256MiB].",
            metavar="SIZE",
        ),
    ] = None,
    enabled_managers: Annotated[
        list[str] | None,
        typer.Option(
            "--enabled-managers",
            metavar="ID[,ID]",
            help=f"Use only these managers ({', '.join(MANAGERS)}); repeatable [default: all].",
        ),
    ] = None,
    disabled_managers: Annotated[
        list[str] | None,
        typer.Option(
            "--disabled-managers",
            metavar="ID[,ID]",
            help="Leave these managers out, e.g. cargo_toml,cargo_lock; repeatable.",
        ),
    ] = None,
    offline: Annotated[  # noqa: FBT002 - a typer flag
        bool,
        typer.Option(
            "--offline",
            help="Answer from the cache alone, whatever its age; never open a connection. "
            "A dependency with nothing cached is unknown.",
        ),
    ] = False,
    recheck: Annotated[
        list[str] | None,
        typer.Option(
            "--recheck",
            metavar="[PATTERN]",
            help="Do not reuse stored catalog views: alone for every dependency, with a package "
            "name or glob (repeatable) for the matching ones only.",
        ),
    ] = None,
    dashboard: Annotated[
        Path | None,
        typer.Option(help="Also write the Markdown dependency dashboard here.", metavar="PATH"),
    ] = None,
    targets_file: Annotated[
        Path | None,
        typer.Option(
            help="Read more targets from FILE, one per line; '#' starts a comment.",
            metavar="FILE",
        ),
    ] = None,
    shard: Annotated[
        str | None,
        typer.Option(
            help="Scan only share I of N of the targets (stable: by a hash of each target), "
            "e.g. 2/4 in a CI matrix; merge the reports with `patchula report merge`.",
            metavar="I/N",
        ),
    ] = None,
    include_forks: Annotated[  # noqa: FBT002 - a typer flag
        bool, typer.Option("--include-forks", help="github:OWNER/* also scans forks.")
    ] = False,
    include_archived: Annotated[  # noqa: FBT002 - a typer flag
        bool,
        typer.Option("--include-archived", help="github:OWNER/* also scans archived repositories."),
    ] = False,
    now: Annotated[
        str | None,
        typer.Option(
            help="Evaluate the release-age policy as of this ISO 8601 time, e.g. "
            "2026-12-07T09:00:00Z (UTC when no offset is given) [default: now].",
            metavar="TIMESTAMP",
        ),
    ] = None,
) -> None:
    """Report how far behind a checkout's dependencies are.

    npm (with yarn, pnpm and bun lockfiles), Python (PyPI), Rust (crates.io), Go modules,
    container images, GitHub Actions and tool versions (mise, asdf, .nvmrc, .python-version).
    """
    cli: dict[str, Any] = {
        "concurrency": concurrency,
        "host_concurrency": host_concurrency,
        "registries": registry,
        "insecure_registries": insecure_registry,
        "format": output_format,
        "report": report,
        "fail_on": fail_on,
        "allow_unknown": allow_unknown or None,
        "min_release_age": min_release_age,
        "config": config,
        "verbose": verbose or None,
        "quiet": quiet or None,
        "cache": cache,
        "no_cache": no_cache or None,
        "cache_budget": cache_budget,
        "go_freshness_secs": go_freshness_secs,
        "registry_freshness_secs": registry_freshness_secs,
        "request_deadline": request_deadline,
        "max_body_bytes": max_body_bytes,
        "now": now,
        "offline": offline or None,
        "recheck": recheck or None,
        "dashboard": dashboard,
        "targets_file": targets_file,
        "shard": shard,
        "include_forks": include_forks or None,
        "include_archived": include_archived or None,
        "enabled_managers": ",".join(enabled_managers) if enabled_managers else None,
        "disabled_managers": ",".join(disabled_managers) if disabled_managers else None,
    }
    import anyio  # noqa: PLC0415 - lazy: start-up

    from patchula.scan import freeze_startup_objects  # noqa: PLC0415 - lazy: start-up
    from patchula.settings import load_settings  # noqa: PLC0415 - lazy: start-up

    err = LazyConsole()
    try:
        settings = load_settings(cli)
        if settings.verbose:
            for note in settings.notes:  # -v: how the sources of a setting were resolved
                err.print(f"patchula: {note}", markup=False, highlight=False)
        targets = list(targets or [])
        if settings.targets_file is not None:
            from patchula.targets import read_targets_file  # noqa: PLC0415 - lazy: start-up

            targets.extend(read_targets_file(settings.targets_file))
        elif not targets:
            targets = ["."]
        if settings.dashboard is not None:
            check_writable(settings.dashboard, "dashboard")
        # No output of the run may land on a file the run reads (nor may the cache, whose
        # recovery would move a manifest aside as a corrupt cache file).
        for what, path in (
            ("dashboard", settings.dashboard),
            ("report", settings.report),
            ("cache", None if settings.no_cache else settings.cache),
        ):
            if path is not None:
                check_not_scanned(path, targets, settings, what)
        freeze_startup_objects()
        # The report leaves the event loop through a holder, not as the task's return value:
        # CPython 3.11's asyncio.Runner checks its SIGINT handler with signal.getsignal, which
        # formats the handler (a partial holding the main task) into a ValueError message, and
        # a finished task's repr holds its result: every row of a large report, twice.
        holder: list[ScanReport] = []
        # The cache writer and deriver threads do Python work between their blocking calls;
        # with the default 5 ms switch interval the event loop, back from each socket call,
        # waits that long for the GIL (measured: 1.2 s of a 5,000-lookup run). A shorter
        # interval hands it back sooner; the scan's results do not depend on it.
        switch = sys.getswitchinterval()
        sys.setswitchinterval(min(switch, _SWITCH_INTERVAL))
        try:
            anyio.run(_run, targets, settings, err, holder)
        finally:
            sys.setswitchinterval(switch)
        result = holder.pop()
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
        code = exit_code(result, settings.fail_on, allow_unknown=settings.allow_unknown)
    raise typer.Exit(code)


def open_cache(settings: Settings, err: LazyConsole) -> Cache | None:
    """Open the run's cache, or ``None`` with ``--no-cache``.

    A cache that cannot be used (a newer patchula's schema, an unwritable or busy file) is
    replaced by an in-memory one, so the scan still completes; the reason is printed on
    stderr and kept as the cache's ``fallback`` (the report's ``cache.fallback``).
    """
    from patchula.cache import Cache, CacheError, default_cache_path  # noqa: PLC0415 - lazy: start-up
    from patchula.records import RECORD_FORMAT  # noqa: PLC0415 - lazy: start-up

    if settings.no_cache:
        return None
    path = settings.cache or default_cache_path()
    try:
        cache = Cache.open(path, budget_bytes=settings.cache_budget, record_format=RECORD_FORMAT)
    except CacheError as exc:
        cache = Cache.open(None, budget_bytes=settings.cache_budget, fallback=str(exc))
    for warning in cache.warnings:
        err.print(f"patchula: warning: {warning}", markup=False, highlight=False)
    return cache


class LazyRecorder:
    """The run's ``TaskRecorder`` (``Lookups.on_finish``), made at the first outcome it is told.

    A run that looks nothing up never imports the lookup-task machinery (``patchula.warm``,
    ``patchula.cache.tasks``) and has nothing to write when it closes (issue 12: start-up).
    """

    def __init__(self, cache: Cache, max_attempts: int) -> None:
        self._cache = cache
        self._max_attempts = max_attempts
        self._recorder: TaskRecorder | None = None

    def __call__(self, key: LookupKey, result: Catalog | LookupFailed) -> None:
        """Keep the outcome of the lookup ``key`` (``TaskRecorder.__call__``)."""
        if self._recorder is None:
            from patchula.clock import SystemClock  # noqa: PLC0415 - lazy: start-up
            from patchula.warm import TaskRecorder  # noqa: PLC0415 - lazy: start-up

            # Real time, not --now: the record says when lookups happened and retries are due.
            self._recorder = TaskRecorder(self._cache, SystemClock(), self._max_attempts)
        self._recorder(key, result)

    @property
    def recorded(self) -> int:
        """How many outcomes were written so far (0 before the first)."""
        return 0 if self._recorder is None else self._recorder.recorded

    async def aclose(self) -> None:
        """Write what is left and wait for every batch (``TaskRecorder.aclose``), if any."""
        if self._recorder is not None:
            await self._recorder.aclose()


def task_recorder(cache: Cache | None, settings: Settings) -> LazyRecorder | None:
    """The record of this run's lookups in the cache's lookup tasks (none without a cache)."""
    if cache is None:
        return None
    return LazyRecorder(cache, settings.cache_max_attempts)


async def _run(
    targets: list[str], settings: Settings, err: LazyConsole, holder: list[ScanReport]
) -> None:
    """Scan ``targets`` and append the report to ``holder`` (the coroutine returns nothing)."""
    cache = open_cache(settings, err)
    shown = len(cache.warnings) if cache is not None else 0
    try:
        holder.append(await _scan_with(targets, settings, err, cache))
    finally:
        if cache is not None:
            await cache.aclose()
            # Warnings the cache raised during the scan (a damaged row, a busy file), once each.
            for warning in cache.warnings[shown:]:
                err.print(f"patchula: warning: {warning}", markup=False, highlight=False)


def fetcher_factory(
    settings: Settings, access: RegistryAccess, cache: Cache | None, *, offline: bool
) -> Callable[[], Fetcher]:
    """What makes a command's fetch facade (for ``LazyFetcher``, at the first request).

    Host limits, deadline and body bound from ``settings``, credentials from ``access``,
    ``cache`` (``None``: no cache); ``offline`` answers from the cache alone.
    """

    def make_fetcher() -> Fetcher:
        from patchula.http.fetcher import Fetcher  # noqa: PLC0415 - lazy: start-up

        return Fetcher(
            credentials=access,
            host_limits=settings.host_concurrency,
            default_limit=settings.default_host_concurrency,
            cache=cache,
            request_deadline=settings.request_deadline,
            max_body_bytes=settings.max_body_bytes,
            offline=offline,
        )

    return make_fetcher


def registry_access(settings: Settings, err: LazyConsole) -> RegistryAccess:
    """The run's credential sources (``credentials``), read from this process's env and home.

    Their warnings (an unset ``${VAR}`` in ~/.npmrc, a damaged ~/.netrc) go to stderr; they
    name files, lines and variables, never a secret.
    """
    from patchula.credentials import RegistryAccess  # noqa: PLC0415 - lazy: start-up

    try:
        home: Path | None = Path.home()
    except RuntimeError:  # no HOME and no passwd entry: no user files to read
        home = None
    access = RegistryAccess(settings, env=os.environ, home=home)
    if not settings.quiet:
        for warning in access.warnings:
            err.print(f"patchula: warning: {warning}", markup=False, highlight=False)
    return access


async def _scan_with(
    targets: list[str], settings: Settings, err: LazyConsole, cache: Cache | None
) -> ScanReport:
    from patchula.clock import FixedClock, SystemClock  # noqa: PLC0415 - lazy: start-up
    from patchula.http.lazy import LazyFetcher  # noqa: PLC0415 - lazy: start-up
    from patchula.scan import constraints_only_files, scan  # noqa: PLC0415 - lazy: start-up

    access = registry_access(settings, err)
    recorder = task_recorder(cache, settings)

    make_fetcher = fetcher_factory(settings, access, cache, offline=settings.offline)

    # The fetcher is made at the first lookup (a run without one never imports it); it makes
    # the run's client (``make_client``) when the first request is sent, its reads bounded by
    # the request deadline, the one bound of time; the scan sets the Go proxy's freshness
    # floor (``--go-freshness-secs``) before the first Go lookup.
    def warn(message: str) -> None:
        # The run's warnings as they arise (a GitHub run without a token: before its first
        # GitHub request); --quiet keeps stderr for errors.
        if not settings.quiet:
            err.print(f"patchula: warning: {message}", markup=False, highlight=False)

    async with contextlib.aclosing(LazyFetcher(make_fetcher)) as fetcher:
        # --now moves only the policy's "now" (and evaluatedAt); HTTP freshness, deadlines
        # and back-off keep the real time of the fetcher's own timer.
        clock: Clock = FixedClock(settings.now) if settings.now is not None else SystemClock()
        # What the report needs is imported and built while the scan waits for answers.
        meanwhile = WhileWaiting(
            report_steps(settings, cache),
            lambda: any(stats.in_flight for stats in fetcher.stats.values()),
        )
        try:
            show_progress = (
                settings.format == "table"
                and not settings.quiet
                and settings.progress
                and err.is_terminal
            )
            if show_progress:
                from rich.progress import (  # noqa: PLC0415 - lazy: start-up
                    BarColumn,
                    MofNCompleteColumn,
                    Progress,
                    TextColumn,
                    TimeElapsedColumn,
                )

                with Progress(
                    TextColumn("looking up"),
                    BarColumn(),
                    MofNCompleteColumn(),
                    TimeElapsedColumn(),
                    console=err.console,
                    transient=True,
                ) as bar:
                    task = bar.add_task("lookups", total=None)
                    result = await scan(
                        targets,
                        settings,
                        fetcher,
                        clock,
                        on_progress=lambda done, total: bar.update(
                            task, completed=done, total=total
                        ),
                        access=access,
                        on_warning=warn,
                        views=cache,
                        on_finish=recorder,
                        records=cache,
                    )
            else:
                result = await scan(
                    targets,
                    settings,
                    fetcher,
                    clock,
                    access=access,
                    on_warning=warn,
                    views=cache,
                    on_finish=recorder,
                    records=cache,
                )
        finally:
            meanwhile.stop()
        if recorder is not None:
            await recorder.aclose()
        unused = sorted(set(settings.host_concurrency) - fetcher.limits_used())
        if unused and not settings.quiet:
            _note_unused_limits(unused, fetcher.stats, err)
        if settings.verbose:
            # -v: how many repositories an extraction record answered (nothing walked or read).
            cached = sum(repo.extraction == "cached" for repo in result.repos)
            err.print(
                f"patchula: {cached} of {len(result.repos)} repositories from extraction records "
                "(the cache's record of a git checkout at an unchanged commit: not read again)",
                markup=False,
                highlight=False,
            )
            # -v: the files listed that give no rows: constraints files by their name.
            for repo in result.repos:
                for path in constraints_only_files(repo.files):
                    err.print(
                        f"patchula: {repo.target}: {path}: a constraints file by its name: pip "
                        "installs nothing from it, so it gives no rows; its pins are the current "
                        "version of the requirements that read it with -c",
                        markup=False,
                        highlight=False,
                    )
            # -v: which requests --offline found nothing stored for (URLs redacted).
            for request in fetcher.not_cached:
                err.print(
                    f"patchula: offline: not in cache: {request}", markup=False, highlight=False
                )
        from patchula.report.model import build_report  # noqa: PLC0415 - lazy: start-up

        return build_report(
            result,
            settings,
            fetcher.stats,
            _cache_report(cache, fetcher, result.view_hits),
            unreachable=fetcher.unreachable,
        )


def report_steps(settings: Settings, cache: Cache | None) -> list[Callable[[], object]]:
    """What making and printing a run's report imports and builds first, in that order.

    The report model, its row validators (``report.model.prepare_rows``), the lookup-task
    record (with a cache: made at the first lookup outcome), the renderers and, for JSON
    (printed or ``--report``), the report's serializers (``prepare_serializers``). A step
    that never ran is done where it is first needed, as without these steps.
    """

    def model() -> None:
        import patchula.report.model  # noqa: F401, PLC0415 - lazy: start-up

    def rows() -> None:
        from patchula.report.model import prepare_rows  # noqa: PLC0415 - lazy: start-up

        prepare_rows()

    def record() -> None:
        import patchula.warm  # noqa: F401, PLC0415 - lazy: start-up

    def render() -> None:
        import patchula.report.render  # noqa: F401, PLC0415 - lazy: start-up

    def serializers() -> None:
        from patchula.report.model import prepare_serializers  # noqa: PLC0415 - lazy: start-up

        prepare_serializers()

    steps: list[Callable[[], object]] = [model, rows, record, render]
    if cache is None:
        steps.remove(record)
    if settings.format == "json" or settings.report is not None:
        steps.append(serializers)
    return steps


class WhileWaiting:
    """Run ``steps`` one at a time on the event loop while it waits for the network.

    A step runs when a ``PROBE``-second timer fires on time (the loop was idle: nothing to
    do but wait) and ``busy()`` (requests are on the network), so the work fills the wait
    for answers instead of coming before the first request or after the last answer (issue
    12: about 50 ms of a 40-dependency scan). While nothing is on the network (extraction,
    answers from the cache) the timer fires every ``QUIET`` seconds only: a run that sends
    nothing runs no step and wakes the loop rarely. A step that raises is left to fail where
    its work is first needed, as it would have. ``stop`` ends it; it must be made inside the
    running loop (asyncio: patchula's backend).
    """

    PROBE = 0.002
    QUIET = 0.01

    def __init__(self, steps: Iterable[Callable[[], object]], busy: Callable[[], bool]) -> None:
        self._steps = list(steps)
        self._busy = busy
        import asyncio  # noqa: PLC0415 - lazy: start-up (anyio.run imported it)

        self._loop = asyncio.get_running_loop()
        self._due = 0.0
        self._timer: asyncio.TimerHandle | None = None
        self._arm(self.QUIET)

    def _arm(self, delay: float) -> None:
        self._due = self._loop.time() + delay
        self._timer = self._loop.call_at(self._due, self._tick)

    def _tick(self) -> None:
        self._timer = None
        busy = self._busy()
        if busy and self._loop.time() - self._due < self.PROBE:
            step = self._steps.pop(0)
            with contextlib.suppress(Exception):
                step()
        if self._steps:
            self._arm(self.PROBE if busy else self.QUIET)

    def stop(self) -> None:
        """Run no further step."""
        self._steps.clear()
        if self._timer is not None:
            self._timer.cancel()
            self._timer = None


def _bare_host(host: str) -> str:
    """``host`` without a ``:port`` suffix (``host_key`` form)."""
    name, sep, port = host.rpartition(":")
    return name if sep and port.isdigit() else host


def _note_unused_limits(
    unused: list[str], contacted: Mapping[str, object], err: LazyConsole
) -> None:
    """Say which ``--host-concurrency`` limits governed no request, and why.

    A bare host's limit covers its ports unless a ``host:port`` entry is more specific: when
    requests went only to such ports, the host was contacted and the note says so.
    """
    never = [e for e in unused if e not in {_bare_host(h) for h in contacted} or ":" in e]
    for entry in unused:
        if entry in never:
            continue
        ports = sorted(h for h in contacted if _bare_host(h) == entry and h != entry)
        err.print(
            f"patchula: note: the --host-concurrency limit for {entry} governed no request: "
            f"{', '.join(ports)} had limits of their own",
            markup=False,
            highlight=False,
        )
    if never:
        err.print(
            f"patchula: note: no request went to {', '.join(never)}: "
            "its --host-concurrency limit was not used",
            markup=False,
            highlight=False,
        )


def _emit(report: ScanReport, settings: Settings) -> int:
    """Print the results, then write ``--report`` and ``--dashboard``; a failed write exits 2.

    The results come first, so a scan's output is never lost to an unwritable report path (a
    directory, a read-only one); the failure is then said on stderr, naming the path. Each
    file is tried even when the other failed.
    """
    from patchula.report.render import json_chunks  # noqa: PLC0415 - lazy: start-up

    _print(report, settings)
    code = exit_code(report, settings.fail_on, allow_unknown=settings.allow_unknown)
    if note := unjudged_note(report, settings.fail_on, allow_unknown=settings.allow_unknown):
        LazyConsole().print(f"patchula: note: {note}", markup=False, highlight=False)
    if settings.report is not None and not _write("report", settings.report, json_chunks, report):
        code = EXIT_USAGE
    if settings.dashboard is not None:
        from patchula.report.dashboard import render_markdown  # noqa: PLC0415 - lazy: start-up

        if not _write("dashboard", settings.dashboard, render_markdown, report):
            code = EXIT_USAGE
    return code


def _write(
    what: str, path: Path, render: Callable[[ScanReport], str | Iterable[str]], report: ScanReport
) -> bool:
    """Write ``render(report)`` to ``path``; say why on stderr and return False if it fails."""
    try:
        write_report(path, render(report))
    except OSError as exc:
        sys.stdout.flush()
        LazyConsole().print(
            f"patchula: error: cannot write {what} {path}: {exc.strerror or exc}",
            markup=False,
            highlight=False,
        )
        return False
    return True


def check_writable(path: Path, what: str) -> None:
    """Raise ``ConfigError`` when ``path`` can be known now not to be writable as a file.

    Known before scanning: ``path`` is a directory, a part of its parent path is a file, or
    the nearest existing directory (or the file itself) denies writing to this process
    (``os.access``). Anything else (a full disk, a FIFO nobody reads) shows when written.
    """
    if path.is_dir():
        msg = f"cannot write {what} {path}: it is a directory"
        raise ConfigError(msg)
    parent = path.parent
    while not parent.exists() and parent != parent.parent:
        parent = parent.parent
    if parent.exists() and not parent.is_dir():
        msg = f"cannot write {what} {path}: {parent} is not a directory"
        raise ConfigError(msg)
    target = path if path.exists() else parent
    if not os.access(target, os.W_OK):
        msg = f"cannot write {what} {path}: permission denied"
        raise ConfigError(msg)


def check_not_scanned(
    path: Path, targets: list[str], settings: Settings, what: str = "dashboard"
) -> None:
    """Raise ``ConfigError`` when ``path`` is a file the scan of ``targets`` reads.

    ``what`` names the option: ``dashboard``, ``report`` or ``cache``.

    ``path`` is refused when it is an existing file (symlinks followed) inside the root a
    target is scanned from (``scan``'s own target resolution: a workspace member's root is
    its workspace root) and its repository-relative path is one a manager of the run matches
    (``Manager.matches``, as discovery asks) or a lockfile discovery knows but does not read
    (``bun.lockb``): writing the dashboard or report there would destroy the checkout's
    manifest or lockfile, and opening it as the cache would move it aside as a corrupt cache.
    A new file, or one no manager reads (``DEPENDENCIES.md``), is allowed.
    """
    try:
        if not path.is_file():
            return
        resolved = path.resolve()
    except (OSError, RuntimeError):  # a loop or an unreadable parent: check_writable's part
        return
    from patchula.discovery import UNREAD_LOCKFILES  # noqa: PLC0415 - lazy: start-up
    from patchula.scan import _resolve_target as resolve_target  # noqa: PLC0415 - lazy: start-up

    for target in targets:
        root, _, _ = resolve_target(target)
        if root is None or not resolved.is_relative_to(root):
            continue
        rel = resolved.relative_to(root).as_posix()
        readers = [m for m in settings.managers() if RULES[m].matches(rel)]
        if readers or resolved.name in UNREAD_LOCKFILES:
            reader = f"read by {', '.join(readers)}" if readers else "a lockfile"
            example = {"dashboard": "DEPENDENCIES.md", "report": "report.json"}.get(what)
            advice = (
                f"write it elsewhere (a new file such as {example} is fine)"
                if example
                else "choose a file the scan does not read"
            )
            verb = "use" if what == "cache" else "write"
            msg = (
                f"cannot {verb} {what} {path}: it is {rel} of target {target}, a file the scan "
                f"reads ({reader}); {advice}"
            )
            raise ConfigError(msg)


def write_report(path: Path, text: str | Iterable[str]) -> None:
    """Write ``text`` (or its pieces in order) to ``path``, never blocking on a FIFO unread.

    Parents are created. The file is opened with ``O_NONBLOCK``: a FIFO nobody reads fails at
    once (``ENXIO``) instead of hanging the run; one with a reader (``--report /dev/stdout``
    into a pipe) is then written normally. Raises ``OSError``.
    """
    path.parent.mkdir(parents=True, exist_ok=True)
    flags = os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0)
    try:
        fd = os.open(path, flags, 0o666)
    except OSError as exc:
        if exc.errno == errno.ENXIO:
            msg = "a FIFO that nobody reads"
            raise OSError(exc.errno, msg) from None
        raise
    with os.fdopen(fd, "w", encoding="utf-8") as handle:
        os.set_blocking(fd, True)  # opened: a reader exists, so writes may wait for it
        for piece in [text] if isinstance(text, str) else text:
            handle.write(piece)


def _print(report: ScanReport, settings: Settings) -> None:
    from patchula.report.render import (  # noqa: PLC0415 - lazy: start-up
        json_chunks,
        render_plain,
        render_table,
        summary_line,
    )

    show_all = settings.verbose > 0
    if settings.format == "json":
        # Repository by repository: the whole document is never held at once (json_chunks).
        for chunk in json_chunks(report):
            sys.stdout.write(chunk)
    elif settings.format == "markdown":
        from patchula.report.dashboard import render_markdown  # noqa: PLC0415 - lazy: start-up

        sys.stdout.write(render_markdown(report))
    elif settings.quiet:
        sys.stdout.write(summary_line(report) + "\n")
    elif _is_terminal(sys.stdout):
        from rich.console import Console  # noqa: PLC0415 - lazy: start-up

        console = Console(no_color=bool(os.environ.get("NO_COLOR")) or None)
        render_table(report, console, show_all=show_all)
        if settings.verbose:
            _print_hosts(report, console)
    else:
        # Piped: plain ASCII, no trailing blanks, by the plain renderer that aligns the columns
        # in one pass (and needs no rich). A log or file has no width: every line is printed
        # in full, unless COLUMNS asks for one: long cells then fold inside it, never cut
        # (rich's layout cropped a table whose columns' minimum widths overflowed it).
        lines = _Lines()
        width = _columns(default=0)
        sys.stdout.write(render_plain(report, show_all=show_all, width=width or None))
        if settings.verbose:
            _print_hosts(report, lines)
        sys.stdout.write("".join(f"{line.rstrip()}\n" for line in "".join(lines.text).splitlines()))


def _is_terminal(stream: IO[str]) -> bool:
    """Whether ``stream`` is a terminal, decided as rich's ``Console.is_terminal`` does.

    ``TTY_COMPATIBLE=0``/``1`` decides first, then ``FORCE_COLOR`` (non-empty: a terminal;
    https://force-color.org/), else whether the stream is a TTY. Deciding it here keeps rich out
    of piped runs (stdout: the rich table or the plain one; stderr: the progress bar or none).
    """
    compatible = os.environ.get("TTY_COMPATIBLE", "")
    if compatible in {"0", "1"}:
        return compatible == "1"
    force = os.environ.get("FORCE_COLOR")
    if force is not None:
        return force != ""
    try:
        return stream.isatty()
    except (AttributeError, ValueError):  # no stream, or a closed one
        return False


class _Printer(Protocol):
    """What the host lines are printed with: a rich ``Console`` or the piped ``_Lines``."""

    def print(self, text: str, *, markup: bool, highlight: bool) -> None:
        """Print one line of text."""


class _Lines:
    """The piped output's host lines: ``Console.print``'s shape, text kept as written."""

    def __init__(self) -> None:
        self.text: list[str] = []

    def print(self, text: str, *, markup: bool, highlight: bool) -> None:  # noqa: ARG002 - Console's shape
        """Keep ``text`` as one line (markup and highlighting never apply to piped text)."""
        self.text.append(f"{text}\n")


def _columns(default: int) -> int:
    """``COLUMNS`` (at least 40, at most 1000) when it is set to a number, else ``default``."""
    try:
        columns = int(os.environ.get("COLUMNS", ""))
    except ValueError:
        return default
    return min(max(columns, 40), 1000) if columns > 0 else default


def _print_hosts(report: ScanReport, console: _Printer) -> None:
    from patchula.report.render import unvalidated_line  # noqa: PLC0415 - lazy: start-up

    if not report.hosts:
        console.print("no registry requests were sent", markup=False, highlight=False)
    if report.cache is not None:
        c = report.cache
        memory = f"(in memory: {c.fallback})" if c.fallback else "(in memory)"
        console.print(
            f"cache {c.path or memory}: {c.hits} fresh hits, {c.revalidated} revalidated "
            f"(304), {c.misses} fetched, {c.view_hits} catalog views reused; "
            f"{c.bytes_stored} compressed bytes stored",
            markup=False,
            highlight=False,
        )
    for host, s in report.hosts.items():
        responses = ", ".join(f"{k}: {v}" for k, v in sorted(s.responses.items()))
        console.print(
            f"{host}: {s.requests} requests ({responses or 'no HTTP answer'}); "
            f"304s {s.not_modified}, 429s {s.rate_limited}, retries {s.retries}, "
            f"errors {s.errors}, {_cooldown(s)}, peak concurrency {s.max_concurrency}; "
            f"{_connections(s)}",
            markup=False,
            highlight=False,
        )
        if s.unvalidated:
            console.print(unvalidated_line(host, s.unvalidated), markup=False, highlight=False)
        for resource, budget in s.rate_limits.items():
            console.print(
                f"{host}: rate limit{f' ({resource})' if resource else ''} "
                f"{budget.remaining} of {budget.limit if budget.limit is not None else '?'} "
                f"left{_reset(budget.reset_at)}",
                markup=False,
                highlight=False,
            )


def _cooldown(s: HostReport) -> str:
    """``"cool-down 2 s"`` waited out; a longer one asked for is said not to have been waited."""
    from patchula.http.governor import (  # noqa: PLC0415 - lazy: start-up
        MAX_WAIT_SECONDS,
        seconds_text,
    )

    text = f"cool-down {seconds_text(s.cooldown_seconds)} s"
    if s.cooldown_refused_seconds:
        text += (
            f" (asked to wait {seconds_text(s.cooldown_refused_seconds)} s, more than the "
            f"{seconds_text(MAX_WAIT_SECONDS)} s patchula waits: not waited, its lookups failed)"
        )
    return text


def _reset(moment: datetime | None) -> str:
    """``", resets 17:42Z"`` (UTC), or nothing when the host did not say."""
    return f", resets {moment.astimezone(UTC):%Y-%m-%d %H:%MZ}" if moment is not None else ""


def _connections(s: HostReport) -> str:
    """``"connections 1 (h2), TLS handshakes 1"``; mixed protocols are counted each."""
    if not s.connections:
        return "no connections opened"
    protocol: str = s.protocol or "no protocol negotiated"
    if s.protocol == "mixed":
        protocol = ", ".join(f"{name} {n}" for name, n in s.connections_by_protocol.items())
    return f"connections {s.connections} ({protocol}), TLS handshakes {s.tls_handshakes}"


def _cache_report(
    cache: Cache | None, fetcher: LazyFetcher, view_hits: int = 0
) -> CacheReport | None:
    from patchula.report.model import CacheReport  # noqa: PLC0415 - lazy: start-up

    if cache is None:
        return None
    use = fetcher.cache_stats  # None: no lookup, so no hit, revalidation or miss
    # Constructed from the cache's own typed counters (``build_report`` says why).
    return CacheReport.model_construct(
        path=str(cache.path) if cache.path else None,
        hits=use.hits if use else 0,
        revalidated=use.revalidated if use else 0,
        misses=use.misses if use else 0,
        view_hits=view_hits,
        bytes_stored=cache.stats.bytes_stored,
        corrupt_bodies=cache.stats.corrupt_bodies,
        write_failures=cache.stats.write_failures,
        fallback=cache.fallback,
        warnings=list(cache.warnings),
    )
