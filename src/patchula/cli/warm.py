"""``patchula cache warm`` and ``cache retry``: lookup tasks worked through, with a progress bar.

Also the renderers of ``cache status`` and ``cache failed`` (JSON in the shapes of seed 000's
examples, a table otherwise). Imported when one of those commands runs (issue 12: start-up).
"""

from __future__ import annotations

import contextlib
import json
import re
import time
from collections.abc import Callable, Iterator, Sequence
from datetime import UTC, datetime
from functools import partial
from typing import TYPE_CHECKING, Any

import anyio
import anyio.to_thread
import msgspec

from patchula.cache import CacheError, tasks
from patchula.cli.run import LazyConsole, fetcher_factory, open_cache, registry_access
from patchula.clock import Clock, SystemClock

if TYPE_CHECKING:
    from patchula.cache import Cache, ViewSummary
    from patchula.scan import RepoResult, TargetDependency
    from patchula.settings import Settings
    from patchula.warm import TaskEvent, WarmResult

__all__ = [
    "WarmOutcome",
    "failed_json",
    "render_failed",
    "render_status",
    "status_json",
    "views_json",
    "warm",
]


def iso(epoch: float | None) -> str | None:
    """Epoch seconds as ``2026-02-02T10:30:00Z`` (``None`` stays ``None``)."""
    if epoch is None:
        return None
    moment = datetime.fromtimestamp(epoch, UTC).replace(microsecond=0)
    return moment.isoformat().replace("+00:00", "Z")


def status_json(summary: tasks.TaskSummary) -> dict[str, Any]:
    """``cache status --format json``: the seed's counts, the oldest pending, the next retry.

    ``{"pending": N, "in_progress": N, "completed": N, "failed": N, "oldest_pending":
    ISO-8601 | null, "next_retry_at": ISO-8601 | null}``; other keys may be added.
    """
    return {
        **{status: summary.counts.get(status, 0) for status in tasks.STATUSES},
        "oldest_pending": iso(summary.oldest_pending),
        "next_retry_at": iso(summary.next_retry),
        "dependencies_unknown": summary.dependencies_unknown,
    }


def failed_json(failed: Sequence[tasks.FailedTask]) -> list[dict[str, Any]]:
    """``cache failed --format json``: the seed's list, each with its datasource too.

    ``triggered_by`` is ``<checkout>:<manifest>`` for a target's dependency,
    ``<datasource>:<package>@<version>`` for a dependency of one, ``patchula run`` for a run's
    lookup; ``depth`` its distance from the target's manifest (0).
    """
    return [
        {
            "package": f.package,
            "datasource": f.datasource,
            "error": f.error,
            "attempts": f.attempts,
            "failed_at": iso(f.failed_at),
            "triggered_by": f.triggered_by,
            "depth": f.depth,
        }
        for f in failed
    ]


def views_json(summary: ViewSummary, now: float) -> dict[str, Any]:
    """The ``views`` key of ``cache status --format json``: stored catalog views and ages.

    ``{"count": N, "bytes": N, "oldest_fetched_at": ISO-8601 | null, "newest_fetched_at":
    ISO-8601 | null, "oldest_age_seconds": N | null, "by_datasource": {id: {"count", "bytes",
    "oldest_fetched_at", "newest_fetched_at", "oldest_age_seconds"}}}``; an age is ``now``
    (epoch seconds) minus the fetch time, never below 0.
    """

    def part(count: int, size: int, oldest: float | None, newest: float | None) -> dict[str, Any]:
        return {
            "count": count,
            "bytes": size,
            "oldest_fetched_at": iso(oldest),
            "newest_fetched_at": iso(newest),
            "oldest_age_seconds": None if oldest is None else max(round(now - oldest), 0),
        }

    found = summary.datasources.values()
    return {
        **part(
            summary.count,
            summary.bytes_stored,
            min((v.oldest_fetched_at for v in found), default=None),
            max((v.newest_fetched_at for v in found), default=None),
        ),
        "by_datasource": {
            name: part(v.count, v.bytes_stored, v.oldest_fetched_at, v.newest_fetched_at)
            for name, v in summary.datasources.items()
        },
    }


def _age(seconds: int | None) -> str:
    """``"3h 12m"``, ``"2d 4h"``, ``"45s"`` (``"-"`` for none)."""
    if seconds is None:
        return "-"
    days, rest = divmod(seconds, 86400)
    hours, rest = divmod(rest, 3600)
    minutes, secs = divmod(rest, 60)
    if days:
        return f"{days}d {hours}h"
    if hours:
        return f"{hours}h {minutes}m"
    return f"{minutes}m {secs}s" if minutes else f"{secs}s"


def render_status(status: dict[str, Any]) -> str:
    """``cache status`` as plain aligned lines (stable: no colour, no box)."""
    lines = [f"{name.replace('_', ' '):<16}{status[name]}" for name in tasks.STATUSES]
    lines.append(f"{'oldest pending':<16}{status['oldest_pending'] or '-'}")
    lines.append(f"{'next retry':<16}{status['next_retry_at'] or '-'}")
    unknown = status.get("dependencies_unknown", 0)
    if unknown:
        lines.append(
            f"{'deps unknown':<16}{unknown} completed (catalog stored; what their version needs"
            " could not be read: their dependencies are not warm)"
        )
    views = status.get("views")
    if views is not None:
        lines.append(f"{'catalog views':<16}{views['count']} ({views['bytes']} bytes)")
        for name, part in views["by_datasource"].items():
            newest = part["newest_fetched_at"]
            lines.append(
                f"  {printable(name):<14}{part['count']}, oldest {part['oldest_fetched_at']}"
                f" ({_age(part['oldest_age_seconds'])} old), newest {newest}"
            )
    return "\n".join(lines)


_CONTROL = re.compile(r"[\x00-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    r"""``text`` with each control character written ``\xNN`` (names come from registries).

    A terminal must not take an escape sequence in a package name as a command.
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m[0]):02x}", text)


def render_failed(failed: list[dict[str, Any]]) -> str:
    """``cache failed`` as a table, one task a line, the error last.

    Columns: package, datasource, attempts, failed at, depth, triggered by, error.
    """
    if not failed:
        return "no failed lookup tasks"
    headers = ("package", "datasource", "attempts", "failed at", "depth", "triggered by", "error")
    rows = [
        tuple(
            printable(cell)
            for cell in (
                f["package"],
                f["datasource"],
                str(f["attempts"]),
                f["failed_at"] or "-",
                str(f.get("depth", 0)),
                f.get("triggered_by") or "-",
                f["error"] or "",
            )
        )
        for f in failed
    ]
    widths = [max(len(h), *(len(r[i]) for r in rows)) for i, h in enumerate(headers[:-1])]
    out = ["  ".join(h.ljust(w) for h, w in zip(headers[:-1], widths, strict=True)) + "  error"]
    out += [
        "  ".join(c.ljust(w) for c, w in zip(r[:-1], widths, strict=True)) + "  " + r[-1]
        for r in rows
    ]
    return "\n".join(out)


class WarmOutcome(msgspec.Struct):
    """What ``warm`` did and where the queue stands after it."""

    result: WarmResult
    status: dict[str, Any]
    enqueued: int = 0
    already_warm: int = 0
    retried: list[str] = msgspec.field(default_factory=list)
    problems: list[str] = msgspec.field(default_factory=list)

    def failed_tasks(self) -> list[dict[str, Any]]:
        """The tasks this run failed for good: ``{"package", "datasource", "error"}`` each."""
        return [
            {"package": e.package, "datasource": e.datasource, "error": e.error}
            for e in self.result.events
            if e.status == "failed"
        ]

    def json(self) -> dict[str, Any]:
        """``--format json``: this run's counts and ``status`` (``cache status``'s shape).

        Keys are snake_case like ``cache status``'s (the seed's); ``status`` holds its
        ``views`` key too. ``failed_tasks`` lists the tasks failed for good in this run,
        ``dependencies_unknown`` the packages completed whose dependencies could not be read.
        """
        return {
            "enqueued": self.enqueued,
            "already_warm": self.already_warm,
            "retried": self.retried,
            "completed": self.result.completed,
            "failed": self.result.failed,
            "retries": self.result.retried,
            "taken_back": self.result.taken_back,
            "failed_tasks": self.failed_tasks(),
            "dependencies_unknown": list(self.result.unknown_dependencies),
            "problems": self.problems,
            "status": self.status,
        }

    def summary(self) -> str:
        """What a table-format run prints at its end: failed tasks, unknowns, the count line."""
        s = self.status
        retries = self.result.retried
        lines = [
            f"failed: {printable(f['package'])} ({f['datasource']}): {printable(f['error'] or '')}"
            for f in self.failed_tasks()
        ]
        lines += [printable(u) for u in self.result.unknown_dependencies]
        unknown = len(self.result.unknown_dependencies)
        partly = f" ({unknown} of them without their dependencies: see above)" if unknown else ""
        lines.append(
            f"warmed: {self.result.completed} completed{partly}, {self.result.failed} failed, "
            f"{retries} {'attempt' if retries == 1 else 'attempts'} to retry; "
            f"{self.enqueued} enqueued from the targets, "
            f"{self.already_warm} already warm; queue: {s['pending']} pending, "
            f"{s['in_progress']} in progress, {s['completed']} completed, {s['failed']} failed"
        )
        return "\n".join(lines)


def warm(
    targets: Sequence[str],
    settings: Settings,
    *,
    wait: bool,
    retry: str | None = None,
    retry_all: bool = False,
) -> WarmOutcome:
    """Enqueue the targets' dependencies (or put failed tasks back) and work the queue.

    ``retry``: the package whose failed task goes back to pending first; ``retry_all``: every
    failed task. Raises ``CacheError`` when the cache file cannot hold the queue (in memory,
    or refusing writes) and ``ConfigError`` as settings do.
    """
    holder: list[WarmOutcome] = []
    anyio.run(partial(_warm, targets, settings, holder, wait=wait, retry=retry, all_=retry_all))
    return holder.pop()


async def _warm(
    targets: Sequence[str],
    settings: Settings,
    holder: list[WarmOutcome],
    *,
    wait: bool,
    retry: str | None,
    all_: bool,
) -> None:
    err = LazyConsole()
    cache = open_cache(settings.model_copy(update={"no_cache": False}), err)
    if cache is None:  # pragma: no cover - no_cache is forced off above
        raise CacheError("no cache")
    try:
        if cache.path is None:
            msg = f"the cache file cannot be used ({cache.fallback}); nothing to warm"
            raise CacheError(msg)
        holder.append(await _warm_with(cache, targets, settings, err, wait, retry, all_=all_))
    finally:
        await cache.aclose()


async def _warm_with(
    cache: Cache,
    targets: Sequence[str],
    settings: Settings,
    err: LazyConsole,
    wait: bool,  # noqa: FBT001 - internal
    retry: str | None,
    *,
    all_: bool,
) -> WarmOutcome:
    from patchula.http.lazy import LazyFetcher  # noqa: PLC0415 - lazy: start-up
    from patchula.scan import extract_targets  # noqa: PLC0415 - lazy: start-up
    from patchula.warm import (  # noqa: PLC0415 - lazy
        Warmer,
        WarmResult,
        enqueue_targets,
        pins_of,
    )

    access = registry_access(settings, err)

    # ``cache warm`` fills the cache: it never answers from it alone.
    make_fetcher = fetcher_factory(settings, access, cache, offline=False)

    retried: list[int] = []
    if retry is not None or all_:
        retried = await cache.task_job(
            partial(
                tasks.retry,
                package=None if all_ else retry,
                max_attempts=settings.cache_max_attempts,
            )
        )
        if not retried and not targets:
            # Nothing was failed: say so without working through the rest of the queue.
            status = await _status_with_views(cache, await cache.task_job(tasks.summary))
            return WarmOutcome(result=WarmResult(), status=status)
    repos: list[RepoResult] = []
    found: list[TargetDependency] = []
    if targets:
        repos, found = await anyio.to_thread.run_sync(extract_targets, list(targets), settings)
    async with contextlib.aclosing(LazyFetcher(make_fetcher)) as fetcher:
        clock: Clock = SystemClock()
        warmer = Warmer(
            cache,
            fetcher,
            access,
            access.for_checkout(None),
            clock=clock,
            workers=settings.cache_workers,
            max_depth=settings.cache_max_depth,
            max_attempts=settings.cache_max_attempts,
        )
        new, views = enqueue_targets(found, access)
        warmer.pinned.update(pins_of(found))
        ids = await warmer.enqueue(new, views)
        with _progress(settings, err) as on_event:
            warmer.on_event = on_event
            result = await warmer.run(wait=wait)
    status = await _status_with_views(cache, await cache.task_job(tasks.summary))
    names = await cache.task_job(partial(_packages, ids=retried)) if retried else []
    return WarmOutcome(
        result=result,
        status=status,
        enqueued=len({i for i in ids if i is not None}),
        already_warm=sum(1 for i in ids if i is None),
        retried=names,
        problems=[
            f"{p.file}{f':{p.line}' if p.line else ''}: {p.message}"
            for repo in repos
            for p in repo.problems
            if p.severity == "error"
        ],
    )


async def _status_with_views(cache: Cache, summary: tasks.TaskSummary) -> dict[str, Any]:
    """``cache status --format json``'s dictionary: ``status_json`` with its ``views`` key."""
    status = status_json(summary)
    # ``view_summary`` blocks its thread (a read of the file): off the event loop.
    views = await anyio.to_thread.run_sync(cache.view_summary)
    status["views"] = views_json(views, time.time())
    return status


def _packages(conn: Any, ids: Sequence[int]) -> list[str]:  # noqa: ANN401 - an sqlite3 connection
    marks = ",".join("?" * len(ids))
    sql = f"SELECT package FROM lookup_tasks WHERE id IN ({marks}) ORDER BY package"  # noqa: S608 - placeholders only
    return [str(r[0]) for r in conn.execute(sql, list(ids)).fetchall()]


@contextlib.contextmanager
def _progress(settings: Settings, err: LazyConsole) -> Iterator[Callable[[TaskEvent], None] | None]:
    """A rich progress bar of pending / done / failed tasks on a terminal, else nothing."""
    show = settings.format == "table" and not settings.quiet and settings.progress
    if not (show and err.is_terminal):
        yield None
        return
    from rich.progress import (  # noqa: PLC0415 - lazy: start-up
        BarColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
    )

    counts = {"done": 0, "failed": 0, "retry": 0}
    with Progress(
        TextColumn("warming"),
        BarColumn(),
        TextColumn("{task.fields[line]}"),
        TimeElapsedColumn(),
        console=err.console,
        transient=True,
    ) as bar:
        task = bar.add_task("tasks", total=None, line="")

        def on_event(event: TaskEvent) -> None:
            key = {"completed": "done", "failed": "failed"}.get(event.status, "retry")
            counts[key] += 1
            line = (
                f"{event.left} pending, {counts['done']} done, {counts['failed']} failed, "
                f"{counts['retry']} to retry"
            )
            finished = counts["done"] + counts["failed"]
            bar.update(task, completed=finished, total=finished + event.left, line=line)

        yield on_event


def dump(value: object) -> str:
    """JSON for stdout (indented, as ``run --format json`` prints)."""
    return json.dumps(value, indent=2)
