"""Lookup tasks at work: ``cache warm``'s worker pool, and the record of ``patchula run``'s lookups.

Seed 000 ("PyPI Cache Robustness Design") adapted as design.md §7 says: the queue is the
cache file's ``lookup_tasks`` table (``patchula.cache.tasks`` holds its SQL). ``Warmer``
enqueues a target's dependencies at depth 0 and runs a bounded pool: a dispatcher claims ready
tasks in batches of 10 (shallow first, then first in, first out; one ``UPDATE … RETURNING``),
``workers`` tasks work on them, each fetching the catalog through the fetch facade (per-host
limits, single-flight, the HTTP cache), choosing the version a fresh install would use and
enqueuing what that version depends on at depth + 1. ``TaskRecorder`` is the ``Lookups.on_finish``
hook of a run: every lookup's outcome, written in batches.
"""

from __future__ import annotations

import contextlib
import os
import re
import socket
import time
import uuid
from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Future
from functools import partial
from pathlib import Path
from typing import TYPE_CHECKING

import anyio
import anyio.abc
import msgspec
import orjson
from msgspec.structs import replace

from patchula.cache import CacheError, tasks
from patchula.datasource import DATASOURCES
from patchula.errors import (
    LookupFailed,
    NotCached,
    PackageNotFound,
    RegistryError,
    RegistryUnreachable,
)
from patchula.http.auth import redact_text
from patchula.http.caching import credential_digest
from patchula.http.flight import run_memo
from patchula.http.governor import RateLimited
from patchula.models import Dependency
from patchula.names import length_problem
from patchula.policy.evaluate import evaluate
from patchula.policy.release_age import ReleaseAgePolicy
from patchula.versioning import VERSIONINGS

if TYPE_CHECKING:
    import sqlite3

    from patchula.cache import Cache
    from patchula.clock import Clock
    from patchula.credentials import CheckoutAccess, RegistryAccess
    from patchula.datasource.base import CatalogRequest, Datasource, Declared, Fetch
    from patchula.lookup import LookupKey
    from patchula.models import Catalog
    from patchula.scan import TargetDependency
    from patchula.versioning.base import Versioning

__all__ = [
    "BATCH",
    "TaskEvent",
    "TaskRecorder",
    "WarmResult",
    "Warmer",
    "catalog_summary",
    "choose_version",
    "enqueue_targets",
    "pins_of",
    "transient",
]

# Ready tasks the dispatcher claims at once (the seed's batch).
BATCH = 10
# How long a claim holds without renewal (seconds); a live process renews every third of it.
LEASE_SECONDS = 300.0
# How often an idle dispatcher looks again while another process works on the queue (seconds).
POLL_SECONDS = 2.0
# Lookup outcomes of a run written per transaction (a run of 5,000 lookups: 20 transactions).
RECORD_BATCH = 256
# The most dependencies of one version enqueued (a hostile document naming a million is cut).
MAX_CHILDREN = 5000

Sleep = Callable[[float], Awaitable[None]]
# Tokens of the Warmers alive in this process: a lease of this process with another token
# was left by a Warmer that ended without finishing (it can be taken over at once).
_LIVE: set[str] = set()


def catalog_summary(catalog: Catalog, **more: object) -> str:
    """The ``result`` stored for a task: JSON ``{"latest", "releases", "fetchedAt", …more}``."""
    summary: dict[str, object] = {
        "latest": catalog.latest,
        "releases": len(catalog.releases),
        "fetchedAt": catalog.fetched_at.isoformat(),
    }
    summary.update(more)
    return orjson.dumps(summary).decode()


def choose_version(catalog: Catalog, constraint: str | None, versioning_id: str) -> str | None:
    """The version a fresh install of ``constraint`` resolves to in ``catalog``, else latest.

    The current version exactly as ``patchula run`` resolves it (``policy.evaluate``): an
    exact pin is that version (a Go requirement too: minimal version selection builds the
    version required, https://go.dev/ref/mod#minimal-version-selection); an npm range admitting
    ``dist-tags.latest`` installs it (npm-pick-manifest), else its newest non-deprecated,
    non-yanked match; a dist-tag (``next``) is the version it names. What ``run`` cannot
    resolve (a range nothing matches, an unknown tag) follows the registry's latest
    (``Catalog.latest``), else the newest stable release: its dependencies are warmed at
    least.

    The version is returned as the catalog spells it (``_as_published``): a locked or pinned
    version that names a release only up to build metadata (a Cargo.lock's
    ``0.11.0+wasi-snapshot-preview1`` read as the pin ``=0.11.0+…``, which Cargo matches
    ignoring the metadata) is that release, whose version document the registry keys by its
    full name.
    """
    versioning = VERSIONINGS[versioning_id]
    spec = (constraint or "").strip()
    dep = Dependency(
        manager="warm",
        file="",
        line=None,
        name=catalog.package_name,
        package_name=catalog.package_name,
        datasource=catalog.datasource,
        versioning=versioning_id,
        dep_type="",
        declared=spec or None,
        constraint=spec or None,
    )
    finding = evaluate(dep, catalog, versioning, ReleaseAgePolicy(), catalog.fetched_at)
    if finding.current is not None:
        return _as_published(catalog, finding.current, versioning)
    if catalog.latest is not None:
        return catalog.latest
    versions = [r.version for r in catalog.releases if not r.yanked]
    stable = [v for v in versions if versioning.is_stable(v)]
    return max(stable, key=versioning.sort_key) if stable else None


def _as_published(catalog: Catalog, version: str, versioning: Versioning) -> str:
    """``version`` as ``catalog`` spells the release it names.

    Itself when listed so, else the release of the same precedence (semver build metadata,
    PEP 440 normalisation), else itself.
    """
    names = [release.version for release in catalog.releases]
    if version in names or not versioning.is_valid(version):
        return version
    return next(
        (n for n in names if versioning.is_valid(n) and versioning.compare(n, version) == 0),
        version,
    )


# A registry's answer of this status may differ on the next attempt (rate limit, server error).
_TRANSIENT_STATUS = re.compile(r"\bHTTP (?:429|5\d\d)\b")


def transient(exc: LookupFailed) -> bool:
    """Whether a later attempt at the lookup that raised ``exc`` may succeed (back off, retry).

    Transient: no answer at all (``RegistryUnreachable``: DNS, refused, timeout, reset), a
    rate limit (``RateLimited``, HTTP 429) and a server error (HTTP 5xx, RFC 9110 §15.6).
    Permanent (one attempt, failed at once): a package the registry does not know (404/410),
    a name refused in a URL, another 4xx and a body that is not a usable document.
    """
    if isinstance(exc, RegistryUnreachable | RateLimited):
        return True
    if isinstance(exc, PackageNotFound):
        return False
    return isinstance(exc, RegistryError) and _TRANSIENT_STATUS.search(exc.reason) is not None


def _extras_of(constraint: str | None) -> tuple[frozenset[str], str]:
    """Split a ``[a,b]>=1`` constraint (a Python requirement's extras) into extras and spec."""
    text = (constraint or "").strip()
    if text.startswith("[") and "]" in text:
        inside, _, rest = text[1:].partition("]")
        return frozenset(e.strip() for e in inside.split(",") if e.strip()), rest.strip()
    return frozenset(), text


class TaskEvent(msgspec.Struct, frozen=True):
    """One task's attempt ended: ``status`` it is left in, the retry time (epoch s) if any.

    ``left`` counts the tasks still pending or in progress in the queue right after.
    """

    package: str
    datasource: str
    status: str
    attempts: int
    error: str | None = None
    next_retry_at: float | None = None
    left: int = 0  # tasks pending or in progress once this one ended (any process's)


class WarmResult(msgspec.Struct):
    """What one ``Warmer.run`` did: tasks it completed and failed, attempts that will retry."""

    completed: int = 0
    failed: int = 0
    retried: int = 0
    taken_back: int = 0
    events: list[TaskEvent] = msgspec.field(default_factory=list)
    # "dependencies of X@v unknown: <reason>" of tasks completed without their dependencies.
    unknown_dependencies: list[str] = msgspec.field(default_factory=list)


def _owner_token() -> str:
    """``host:pid:random``: whose lease a claim is (the host and pid tell a gone process)."""
    return f"{socket.gethostname()}:{os.getpid()}:{uuid.uuid4().hex[:12]}"


def _gone(owner: str) -> bool:
    """Whether the process that took the lease ``owner`` has ended (known only on this host)."""
    host, _, rest = owner.partition(":")
    pid_text = rest.partition(":")[0]
    if host != socket.gethostname() or not pid_text.isdigit():
        return False  # another machine's: its lease lapses instead
    pid = int(pid_text)
    if pid == os.getpid():
        return owner not in _LIVE
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return True
    except OSError:
        return False  # alive (another user's: PermissionError), or unknowable
    return False


class Warmer:
    """``cache warm``'s dispatcher and worker pool over one cache's ``lookup_tasks``.

    ``fetch`` is the run's fetch facade (it gets ``access``'s credentials), ``default_view``
    the registries and credentials of tasks not enqueued by this process (retries, children
    of others' tasks). ``clock`` tells the time of claims and back-off, ``sleep`` waits for
    a retry (both injected in tests). ``on_event`` is told each attempt's end (the progress
    bar). ``workers`` (``PATCHULA_CACHE_WORKERS``) bounds the tasks worked on at once,
    ``max_depth`` fails a task that deep, ``max_attempts`` is a new task's limit.
    """

    def __init__(
        self,
        cache: Cache,
        fetch: Fetch,
        access: RegistryAccess,
        default_view: CheckoutAccess,
        *,
        clock: Clock,
        sleep: Sleep = anyio.sleep,
        workers: int = 5,
        max_depth: int = 10,
        max_attempts: int = 3,
        on_event: Callable[[TaskEvent], None] | None = None,
    ) -> None:
        self._cache = cache
        self._fetch = fetch
        self._access = access
        self._default_view = default_view
        self._clock = clock
        self._sleep = sleep
        self.workers = workers
        self.max_depth = max_depth
        self.max_attempts = max_attempts
        self.on_event = on_event
        self.owner = _owner_token()
        self._views: dict[int, CheckoutAccess] = {}
        self._checkouts: dict[str, CheckoutAccess] = {}
        self._active: set[int] = set()
        # Tasks completed since then were done by this warm: reached again, they need none.
        self._started = self._now()
        # Checkout root → (datasource, package) → the version its lockfiles lock (pins_of).
        self.pinned: dict[str, Mapping[tuple[str, str], str]] = {}

    def _now(self) -> float:
        return self._clock.now().timestamp()

    async def enqueue(
        self, new: Sequence[tasks.NewTask], views: Sequence[CheckoutAccess] | None = None
    ) -> list[int | None]:
        """Open tasks for ``new`` (de-duplicated: ``tasks.enqueue``); their ids or ``None``.

        ``views`` (one per task) are the registries and credentials each is looked up with.
        """
        chosen = list(views) if views is not None else [self._default_view] * len(new)
        new = await self._identified(new, chosen)
        now = self._now()
        ids = await self._cache.task_job(
            partial(
                tasks.enqueue,
                tasks=new,
                now=now,
                fresh_after=self._started,
                max_attempts=self.max_attempts,
            )
        )
        for ident, view in zip(ids, chosen, strict=True):
            if ident is not None:
                self._views.setdefault(ident, view)
        return ids

    async def _identified(
        self, new: Sequence[tasks.NewTask], views: Sequence[CheckoutAccess]
    ) -> list[tasks.NewTask]:
        """``new`` with the base URL, credential digest and freshness of each one's lookup.

        The base URL is the view's for the package (a checkout's ``.npmrc`` registry); the
        credential digest (``http.caching.credential_digest``, never the secret) that of the
        credential the view sends to the catalog URL. ``fresh``: the fetch facade holds a fresh
        answer to the catalog request (``fresh_many``; single-document datasources only, the
        others are always worked on: their catalog is several documents, read from the HTTP
        cache where fresh).
        """
        found: list[tasks.NewTask] = []
        asks: dict[int, list[tuple[int, CatalogRequest]]] = {}
        by_key: dict[int, CheckoutAccess] = {}
        for index, (task, view) in enumerate(zip(new, views, strict=True)):
            base_url = task.base_url or view.base_url(task.datasource, task.package)
            source = DATASOURCES.get(task.datasource)
            request: CatalogRequest | None = None
            if source is not None and source.single_document is not None:
                with contextlib.suppress(LookupFailed):  # a refused name: its task says so
                    request = source.single_document.request(base_url, task.package)
            credential = view.credentials.for_url(request.url if request else base_url)
            digest = credential_digest(credential.cache_identity if credential else None)
            found.append(replace(task, base_url=base_url, credential=digest))
            if request is not None:
                asks.setdefault(id(view), []).append((index, request))
                by_key[id(view)] = view
        fresh_many = getattr(self._fetch, "fresh_many", None)
        if fresh_many is None:
            return found
        for key, pairs in asks.items():
            with self._access.using(by_key[key]):
                answers = await fresh_many([(r.url, r.headers, r.representation) for _, r in pairs])
            for (index, _), answer in zip(pairs, answers, strict=True):
                if answer is not None and 200 <= answer.status < 300:  # noqa: PLR2004 - 2xx
                    found[index] = replace(found[index], fresh=True)
        return found

    def _view_of(self, task: tasks.Task) -> CheckoutAccess | str:
        """The registries and credentials ``task`` was enqueued with, or why they are gone.

        This process's own tasks keep the view they were enqueued with; another process's
        (a retry by a later ``cache warm``) read their checkout's ``.npmrc`` again. A checkout
        that no longer exists is a reason: its task is never asked of another registry.
        """
        view = self._views.get(task.id)
        if view is not None:
            return view
        root = task.checkout_root
        if root is None:
            return self._default_view
        if root not in self._checkouts:
            if not Path(root).is_dir():
                return (
                    f"the checkout {root} it was enqueued from is gone: its registry settings"
                    " (.npmrc) cannot be read, and it is not asked of another registry"
                )
            self._checkouts[root] = self._access.for_checkout(Path(root))
        return self._checkouts[root]

    async def run(self, *, wait: bool = True) -> WarmResult:
        """Work through the queue until nothing is left to do; what was done.

        With ``wait`` the run waits for retries that are due later (and for tasks another
        process works on); without, it stops once nothing is ready now. Tasks another process
        left ``in_progress`` are taken back first when that process has ended, or when its
        lease lapsed. A document several lookups read is fetched once per run
        (``http.flight.run_memo``). Raises ``CacheUnavailable`` when the queue cannot be
        written.
        """
        with run_memo():
            return await self._run(wait=wait)

    async def _run(self, *, wait: bool) -> WarmResult:
        """``run`` inside its run's memo."""
        result = WarmResult()
        _LIVE.add(self.owner)
        # Tasks an earlier warm failed at a lower depth limit are within this one's.
        await self._cache.task_job(
            partial(tasks.reopen_deeper, max_depth=self.max_depth, max_attempts=self.max_attempts)
        )
        send, receive = anyio.create_memory_object_stream[tasks.Task](BATCH)
        changed = anyio.Event()

        def wake() -> None:
            nonlocal changed
            changed.set()
            changed = anyio.Event()

        errors: list[Exception] = []

        async def work() -> None:
            try:
                async for task in receive:  # the workers share one stream
                    try:
                        await self._work(task, result)
                    finally:
                        self._active.discard(task.id)
                        wake()
            except Exception as exc:  # noqa: BLE001 - re-raised below, not as a group
                errors.append(exc)
                tg.cancel_scope.cancel()

        try:
            async with anyio.create_task_group() as tg:
                tg.start_soon(self._renew_leases)
                for _ in range(self.workers):
                    tg.start_soon(work)
                try:
                    async with send:
                        await self._dispatch(send, result, changed_event=lambda: changed, wait=wait)
                except Exception as exc:  # noqa: BLE001 - re-raised below, not as a group
                    errors.append(exc)
                tg.cancel_scope.cancel()
        finally:
            _LIVE.discard(self.owner)
            receive.close()
        if errors:
            # The queue could not be written (CacheUnavailable): said as itself. Claims held
            # are taken back by the next run once this process has ended.
            raise errors[0]
        return result

    async def _dispatch(
        self,
        send: anyio.abc.ObjectSendStream[tasks.Task],
        result: WarmResult,
        *,
        changed_event: Callable[[], anyio.Event],
        wait: bool,
    ) -> None:
        """Claim and hand out ready tasks until the queue has nothing left for this run.

        Tasks of ended processes are taken back first, and again at most every
        ``POLL_SECONDS`` (real time) while claiming.
        """
        next_take_back = 0.0
        while True:
            event = changed_event()
            if len(self._active) < self.workers:
                if time.monotonic() >= next_take_back:
                    result.taken_back += await self._take_back()
                    next_take_back = time.monotonic() + POLL_SECONDS
                now = self._now()
                claimed = await self._cache.task_job(
                    partial(
                        tasks.claim,
                        now=now,
                        owner=self.owner,
                        lease_until=now + LEASE_SECONDS,
                        limit=BATCH,
                    )
                )
                for task in claimed:
                    self._active.add(task.id)
                    await send.send(task)
                if claimed:
                    continue
            if self._active:
                await event.wait()  # a task ended: it may have enqueued children
                continue
            summary = await self._cache.task_job(tasks.summary)
            pending = summary.counts["pending"]
            others = summary.counts["in_progress"]
            if not wait or (pending == 0 and others == 0):
                return
            now = self._now()
            due = summary.next_retry
            if others == 0 and due is not None and due > now:
                await self._sleep(due - now)
            else:
                await self._sleep(POLL_SECONDS)

    async def _take_back(self) -> int:
        """Return tasks of ended processes and lapsed leases to the queue; how many."""
        owners = await self._cache.task_job(tasks.lease_owners)
        gone = [o for o in owners if o != self.owner and _gone(o)]
        return await self._cache.task_job(
            partial(tasks.reclaim, now=self._now(), owner=self.owner, gone=gone)
        )

    async def _renew_leases(self) -> None:
        """Renew this process's leases every third of ``LEASE_SECONDS`` of real time."""
        while True:
            await anyio.sleep(LEASE_SECONDS / 3)
            if self._active:
                with contextlib.suppress(Exception):  # a lapsed lease is taken over: no harm
                    await self._cache.task_job(
                        partial(
                            tasks.renew,
                            owner=self.owner,
                            ids=sorted(self._active),
                            until=self._now() + LEASE_SECONDS,
                        )
                    )

    async def _work(self, task: tasks.Task, result: WarmResult) -> None:
        """One attempt at ``task``: depth check, catalog, dependencies, children, outcome."""
        if task.depth >= self.max_depth:
            reason = (
                f"depth {task.depth} reaches the limit of {self.max_depth} "
                "(--cache-max-depth, PATCHULA_CACHE_MAX_DEPTH)"
            )
            await self._fail(task, reason, result, final=True)
            return
        source = DATASOURCES.get(task.datasource)
        if source is None:
            await self._fail(task, f"unknown datasource {task.datasource!r}", result, final=True)
            return
        if not await self._cache.task_job(
            partial(tasks.still_claimed, ident=task.id, owner=self.owner)
        ):
            return  # taken over while it waited for a worker: the other process does it
        view = self._view_of(task)
        if isinstance(view, str):
            await self._fail(task, view, result, final=True)
            return
        # Its own registry (a mirror, a checkout's .npmrc): a retry goes where the task went.
        base_url = task.base_url or view.base_url(task.datasource, task.package)
        try:
            with self._access.using(view):
                catalog = await source.get_catalog(self._fetch, base_url, task.package)
        except LookupFailed as exc:
            await self._fail(task, exc.reason, result, final=not transient(exc))
            return
        except Exception as exc:  # noqa: BLE001 - a datasource bug fails the task, not the pool
            why = f"internal error looking up {task.package}: {type(exc).__name__}: {exc}"
            await self._fail(task, why, result)
            return
        followed = await self._follow(task, source, catalog, view, base_url)
        if isinstance(followed, Retry):
            await self._fail(task, followed.reason, result)
            return
        # A parent whose registry the view no longer gives (a ``--registry`` mirror of the
        # process that enqueued it) keeps its children of the same datasource on that registry:
        # a private name is never asked of the public one (dependency confusion).
        inherited = (
            task.base_url
            if task.base_url and view.base_url(task.datasource, task.package) != task.base_url
            else ""
        )
        children = await self._identified(
            [
                replace(
                    child,
                    parent_id=task.id,
                    checkout_root=task.checkout_root,
                    base_url=inherited if child.datasource == task.datasource else "",
                )
                for child in followed.children[:MAX_CHILDREN]
            ],
            [view] * min(len(followed.children), MAX_CHILDREN),
        )
        unknown = followed.unknown
        summary = catalog_summary(
            catalog,
            version=followed.version,
            dependencies=len(followed.children),
            followed=len(children),
            **({"dependenciesUnknown": unknown} if unknown is not None else {}),
        )
        now = self._now()

        def finish(conn: sqlite3.Connection) -> tuple[list[int | None], str | None, int]:
            # Children and completion in one transaction: a kill between them loses neither.
            ids = tasks.enqueue(
                conn,
                children,
                now=now,
                fresh_after=self._started,
                max_attempts=self.max_attempts,
            )
            done = tasks.complete(
                conn,
                task.id,
                owner=self.owner,
                result=summary,
                now=now,
                handled=followed.handled,
                versions=followed.versions,
            )
            return ids, done, tasks.open_count(conn)

        ids, status, left = await self._cache.task_job(finish)
        for ident in [*ids, task.id]:
            if ident is not None:
                self._views.setdefault(ident, view)
        if status == "completed":
            result.completed += 1
            if unknown is not None:
                result.unknown_dependencies.append(unknown)
            self._told(_event(task, "completed", unknown, left=left), result)

    async def _follow(
        self,
        task: tasks.Task,
        source: Datasource,
        catalog: Catalog,
        view: CheckoutAccess,
        base_url: str,
    ) -> Followed | Retry:
        """The versions ``task``'s constraints resolve to and what they depend on (children).

        Each of the task's constraints (the one it was opened with and those it was reached
        with while open) is resolved; the dependencies of a version (with its extras) not
        followed before are read. A transient failure of a version document is a ``Retry``;
        a permanent one makes the dependencies unknown (the first reason is kept).
        """
        versioning = source.default_versioning
        out = Followed()
        for wanted in dict.fromkeys([task.constraint, *task.wanted]):
            extras, constraint = _extras_of(wanted)
            out.handled.append(wanted)
            version = choose_version(catalog, constraint, versioning)
            if version is None:
                continue
            out.version = out.version or version
            key = f"{version}[{','.join(sorted(extras))}]" if extras else version
            if key in task.followed_versions or key in out.versions:
                continue
            out.versions.append(key)
            if source.dependencies is None:
                continue
            with self._access.using(view):
                found = await _declared(
                    source, self._fetch, base_url, task.package, version, extras
                )
            if isinstance(found, Retry):
                return found
            if isinstance(found, str):
                # The catalog is stored: the package is warm, only what it needs is not known.
                out.unknown = out.unknown or (
                    f"dependencies of {task.package}@{version} unknown: {found}"
                )
                continue
            pins = self.pinned.get(task.checkout_root or "", {})
            out.children.extend(
                tasks.NewTask(
                    task.datasource,
                    d.name,
                    _with_extras(
                        d.extras,
                        _locked(task.datasource, pins[(task.datasource, d.name)])
                        if (task.datasource, d.name) in pins
                        else d.constraint,
                    ),
                    depth=task.depth + 1,
                    triggered_by=f"{task.datasource}:{task.package}@{version}",
                )
                for d in found
                # A name no registry has (``names.MAX_NAME_LENGTH``) is never queued nor stored.
                if length_problem(d.name) is None
            )
        return out

    async def _fail(
        self, task: tasks.Task, reason: str, result: WarmResult, *, final: bool = False
    ) -> None:
        now = self._now()
        reason = redact_text(reason)  # kept in the cache and shown: never a secret

        def fail(conn: sqlite3.Connection) -> tuple[str | None, int]:
            status = tasks.fail(conn, task.id, owner=self.owner, error=reason, now=now, final=final)
            return status, tasks.open_count(conn)

        status, left = await self._cache.task_job(fail)
        if status is None:
            return  # taken over meanwhile: the other process records it
        retry_at = None
        if status == "failed":
            result.failed += 1
        else:
            result.retried += 1
            retry_at = now + tasks.backoff(task.attempts)
        self._told(_event(task, status, reason, retry_at, left=left), result)

    def _told(self, event: TaskEvent, result: WarmResult) -> None:
        result.events.append(event)
        if self.on_event is not None:
            self.on_event(event)


class Followed(msgspec.Struct):
    """What one attempt followed: constraints resolved, versions read, children, unknowns."""

    handled: list[str | None] = msgspec.field(default_factory=list)
    versions: list[str] = msgspec.field(default_factory=list)
    children: list[tasks.NewTask] = msgspec.field(default_factory=list)
    version: str | None = None  # the first constraint's version (the result's "version")
    unknown: str | None = None


class Retry(msgspec.Struct, frozen=True):
    """A transient failure (or a datasource bug): the task's attempt failed, to retry."""

    reason: str


async def _declared(
    source: Datasource,
    fetch: Fetch,
    base_url: str,
    package: str,
    version: str,
    extras: frozenset[str],
) -> Sequence[Declared] | Retry | str:
    """What ``package@version`` depends on, a ``Retry``, or why it cannot be known (a str).

    A permanent failure of the version document (404, an unusable body) is a reason, not a
    failure of the package: its catalog was stored.
    """
    if source.dependencies is None:  # pragma: no cover - the caller checks
        return ()
    try:
        return await source.dependencies(fetch, base_url, package, version, extras=extras)
    except LookupFailed as exc:
        return Retry(exc.reason) if transient(exc) else exc.reason
    except Exception as exc:  # noqa: BLE001 - a datasource bug fails the task only
        return Retry(f"internal error looking up {package}: {type(exc).__name__}: {exc}")


def _event(
    task: tasks.Task,
    status: str,
    error: str | None = None,
    retry_at: float | None = None,
    *,
    left: int = 0,
) -> TaskEvent:
    """The ``TaskEvent`` of ``task`` ending an attempt in ``status``."""
    return TaskEvent(task.package, task.datasource, status, task.attempts, error, retry_at, left)


# How a datasource's versioning writes "exactly this version" (a locked version is no range:
# Cargo reads a bare ``1.0.0`` as ``^1.0.0``, PEP 440 has no bare-version specifier).
_EXACT = {"crates": "={}", "pypi": "=={}"}


def _locked(datasource: str, version: str) -> str:
    """The constraint that admits only the locked ``version`` in ``datasource``'s versioning."""
    return _EXACT.get(datasource, "{}").format(version)


def _with_extras(extras: Sequence[str], constraint: str | None) -> str | None:
    """``[a,b]constraint`` for a requirement naming extras (``_extras_of`` splits it)."""
    return f"[{','.join(extras)}]{constraint or ''}" if extras else constraint


def pins_of(found: Sequence[TargetDependency]) -> dict[str, Mapping[tuple[str, str], str]]:
    """Checkout root → (datasource, package) → the version its lockfiles lock the package at.

    For ``Warmer.pinned``: a dependency of a dependency that the checkout's lockfile locks
    (package-lock ``packages``, yarn/pnpm/bun, poetry/uv, Cargo.lock) follows that version, as
    the install does; one locked at several versions, or unlocked, follows its range.
    """
    return {str(item.root): item.pinned for item in found}


def enqueue_targets(
    found: Sequence[TargetDependency], access: RegistryAccess
) -> tuple[list[tasks.NewTask], list[CheckoutAccess]]:
    """Depth-0 tasks for the dependencies of the targets, with the view each is looked up with.

    The constraint is the locked version when a lockfile names one (the version in use),
    else the declared one; ``triggered_by`` is ``<checkout>:<manifest>``.
    """
    views: dict[str, CheckoutAccess] = {}
    new: list[tasks.NewTask] = []
    chosen: list[CheckoutAccess] = []
    for item in found:
        key = str(item.root)
        if key not in views:
            views[key] = access.for_checkout(item.root)
        dep = item.dep
        constraint = _locked(dep.datasource, item.locked) if item.locked else dep.constraint
        constraint = _with_extras(dep.extras, constraint)
        new.append(
            tasks.NewTask(
                dep.datasource,
                dep.package_name,
                constraint,
                triggered_by=f"{item.root}:{item.file}",
                checkout_root=key,
                # Asked for now: a task failed for good earlier is tried again.
                reopen_failed=True,
            )
        )
        chosen.append(views[key])
    return new, chosen


class TaskRecorder:
    """``Lookups.on_finish`` for ``patchula run``: every lookup's outcome, written in batches.

    Outcomes wait in memory and go to the cache's writer ``RECORD_BATCH`` at a time, each
    batch one job and one transaction (``tasks.record``): a run of 5,000 lookups is 20 writer
    jobs, not 5,000. A full batch is queued without waiting (``Cache.submit_task_job``; when
    the writer's queue is full it waits for the next outcome); ``aclose`` writes the rest and
    waits for all. A lookup ``--offline`` could not answer (``NotCached``) is no attempt at the
    registry and is not recorded. A write the cache refuses loses that batch of records only.
    """

    def __init__(self, cache: Cache, clock: Clock, max_attempts: int) -> None:
        self._cache = cache
        self._clock = clock
        self._max_attempts = max_attempts
        self._buffer: list[tasks.LookupOutcome] = []
        self._submitted: list[Future[None]] = []
        self.recorded = 0

    def __call__(self, key: LookupKey, result: Catalog | LookupFailed) -> None:
        """Keep the outcome of the lookup ``key`` (datasource, package, …)."""
        if isinstance(result, NotCached):
            return
        if isinstance(result, LookupFailed):
            outcome = tasks.LookupOutcome(
                key[0],
                key[1],
                None,
                redact_text(result.reason),  # kept in the cache: never a secret
                permanent=not transient(result),
                base_url=key[2],
            )
        else:
            outcome = tasks.LookupOutcome(
                key[0], key[1], catalog_summary(result), None, base_url=key[2]
            )
        self._buffer.append(outcome)
        if len(self._buffer) >= RECORD_BATCH:
            future = self._cache.submit_task_job(self._job(self._buffer))
            if future is not None:
                self._submitted.append(future)
                self.recorded += len(self._buffer)
                self._buffer = []

    def _job(self, batch: list[tasks.LookupOutcome]) -> Callable[[sqlite3.Connection], None]:
        return partial(
            tasks.record,
            outcomes=batch,
            now=self._clock.now().timestamp(),
            max_attempts=self._max_attempts,
        )

    async def aclose(self) -> None:
        """Write what is left and wait until every batch was written (or refused)."""
        batch, self._buffer = self._buffer, []
        with contextlib.suppress(CacheError):  # the record is best effort, like every write
            await self._cache.task_job(self._job(batch))
            self.recorded += len(batch)
        # The writer runs jobs in order: the batches queued earlier are done.
        for future in self._submitted:
            if future.done() and future.exception() is not None:
                self.recorded -= RECORD_BATCH
        self._submitted = []
