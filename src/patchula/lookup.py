"""Run-wide registry lookups: single-flight, batched fresh answers, lazy publish times, progress.

``scan`` asks one ``Lookups`` per run for every dependency: ``key`` names a lookup (datasource,
package, registry base URL, credentials view), ``request`` starts it as soon as a repository's
dependencies are known, ``get`` waits for its ``Catalog`` (or the ``LookupFailed`` it ended
in) and ``evaluate`` gives the row's verdict, fetching the publish times it needs lazily. Each
key is looked up once per run however many repositories declare it; lookups of single-document
datasources requested in one event-loop turn are first answered together from fresh cache
entries (``fresh_many`` of a caching fetch facade). A datasource bug is a failed lookup (an
error row), never a crash. Every lookup ends in ``Lookups._finish``: the one place outcomes and
progress are recorded. Content digests (a container tag's manifest digest, the commit a GitHub
ref points at: ``get_digest``) are looked up the same way, once per (lookup, tag) per run:
``request_digest`` and ``digest``.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from dataclasses import replace
from datetime import datetime
from typing import TYPE_CHECKING, cast

import anyio
import anyio.abc
import anyio.lowlevel

from patchula.credentials import CheckoutAccess, RegistryAccess
from patchula.datasource import DATASOURCES
from patchula.datasource.base import Dated
from patchula.errors import LookupFailed
from patchula.models import Catalog, Dependency, FetchResponse, Finding
from patchula.policy import ReleaseAgePolicy, evaluate
from patchula.policy.memo import EvaluationMemo
from patchula.settings import Settings
from patchula.versioning import VERSIONINGS
from patchula.versioning.base import Versioning

if TYPE_CHECKING:
    from patchula.datasource.base import Fetch, SingleDocument

# ``(done, started)`` lookups, called each time one finishes.
Progress = Callable[[int, int], None]

# At most this many rounds of lazy publish-time lookups per dependency (each round asks for the
# newest release whose unknown age holds it back, plus current and latest for libyears).
MAX_TIME_ROUNDS = 6


def _dated(catalog: Catalog, known: dict[str, datetime | None]) -> Catalog:
    """Return ``catalog`` with the publish times looked up so far filled in."""
    if not any(known.values()):
        return catalog
    releases = tuple(
        r._replace(released_at=known[r.version])
        if r.released_at is None and known.get(r.version) is not None
        else r
        for r in catalog.releases
    )
    return replace(catalog, releases=releases)


def _record(
    answer: Mapping[str, datetime | Dated | None],
    known: dict[str, datetime | None],
    sources: dict[str, str],
    source: str | None,
    catalog: Catalog,
) -> None:
    """Keep a lazy lookup's ``answer`` in ``known`` and, per version it dates, the source.

    A ``Dated`` answer names its own source; a bare time has the datasource's ``source``. A
    version ``catalog`` dates already keeps that date (``_dated``), so no source is kept for
    it from the answer (crates.io's API pages date every version listed, pubtime or not).
    """
    dated = {r.version for r in catalog.releases if r.released_at is not None}
    for version, value in answer.items():
        at, said = (value.at, value.source) if isinstance(value, Dated) else (value, source)
        known[version] = at
        if at is not None and said is not None and version not in dated:
            sources[version] = said


def _date_sources(
    finding: Finding, sources: dict[str, str], catalog_source: str | None
) -> tuple[tuple[str, str], ...]:
    """``(version, source)`` of each date ``finding`` shows whose source is known, in row order.

    Current, latest, eligible, then the held-back releases; a date found lazily has the
    source it was found with, any other the catalog's (``LazyTimes.catalog_source``).
    """
    shown = [
        (finding.current, finding.current_released_at),
        (finding.latest, finding.latest_released_at),
        (finding.eligible, finding.eligible_released_at),
        *((h.version, h.released_at) for h in finding.held_back),
    ]
    found: dict[str, str] = {}
    for version, when in shown:
        if version is None or when is None or version in found:
            continue
        source = sources.get(version, catalog_source)
        if source is not None:
            found[version] = source
    return tuple(found.items())


def _times_needed(
    finding: Finding,
    catalog: Catalog,
    versioning: Versioning,
    asked: set[str],
    *,
    for_libyears: bool,
) -> list[str]:
    """Versions whose publish time would change the verdict or the libyears, newest first.

    The newest held-back release of unknown age (the release-age policy); with ``for_libyears``
    also current and latest when either date is unknown. Versions already asked for are not
    asked again.
    """
    wanted: list[str] = []
    for version, when in (
        (finding.current, finding.current_released_at),
        (finding.latest, finding.latest_released_at),
    ):
        if not for_libyears:
            break
        if version is not None and when is None and catalog.release(version) is not None:
            wanted.append(version)
    unknown = [h.version for h in finding.held_back if h.released_at is None]
    if unknown:
        wanted.append(max(unknown, key=versioning.sort_key))
    return [v for v in dict.fromkeys(wanted) if v not in asked]


def _missing_dates(finding: Finding, *, for_libyears: bool) -> bool:
    """Whether ``finding`` lacks a publish time that a time lookup would have given."""
    if any(h.released_at is None for h in finding.held_back):
        return True
    if finding.eligible is not None and finding.eligible_released_at is None:
        return True
    return for_libyears and finding.libyears is None and finding.current != finding.latest


# Lookups answered from the cache per task (one reader job each; see ``Lookups._dispatch``).
FRESH_BATCH = 64

# A lookup: (datasource, package name, registry base URL, ``CheckoutAccess.key``). Checkouts
# whose .npmrc choose another registry or other credentials never share an answer.
LookupKey = tuple[str, str, str, int]
# A digest lookup: the package's lookup and the tag whose current digest is read.
DigestKey = tuple[LookupKey, str]


class Lookups:
    """Run-wide single-flight of catalog lookups keyed by ``LookupKey``.

    The interface ``scan`` uses: ``key``, ``request``, ``get``, ``evaluate``, and the
    ``started``/``done`` counts reported through ``on_progress``. Tasks are started in ``tg``
    (the run's task group); ``fetch`` is the run's fetch facade and ``access`` the credentials
    it was given, each lookup running under its checkout's view (``RegistryAccess.using``).
    """

    def __init__(
        self, tg: anyio.abc.TaskGroup, fetch: Fetch, settings: Settings, access: RegistryAccess
    ) -> None:
        self._tg = tg
        self._fetch = fetch
        self._settings = settings
        self._access = access
        self._views: dict[int, CheckoutAccess] = {}
        self._results: dict[LookupKey, Catalog | LookupFailed] = {}
        self._requested: set[LookupKey] = set()
        # Answering many lookups from fresh cache entries at once (a fetch facade with a cache).
        self._fresh_many = getattr(fetch, "fresh_many", None)
        self._pending: list[LookupKey] = []
        self._dispatching = False
        # Made only for lookups someone waits on before they finish (a warm run has few).
        self._events: dict[LookupKey, anyio.Event] = {}
        self.started = 0
        self.done = 0
        self.on_progress: Progress | None = None
        # Told every catalog lookup's outcome as it finishes (the lookup tasks' record).
        self.on_finish: Callable[[LookupKey, Catalog | LookupFailed], None] | None = None
        self._times: dict[LookupKey, dict[str, datetime | None]] = {}
        # Where each lazily found date came from (``LazyTimes``), per lookup and version.
        self._sources: dict[LookupKey, dict[str, str]] = {}
        # Why the publish-time lookup of a key failed (asked once per run; every row says it).
        self._time_failures: dict[LookupKey, str] = {}
        self._time_locks: dict[LookupKey, anyio.Lock] = {}
        # Catalog views and verdicts shared by every row of this run, and only of this run.
        self._memo = EvaluationMemo()
        # Run once, before the first lookup of a datasource (``scan``: crates.io's pacing), so
        # what a datasource needs set up costs nothing in a run that never looks one up.
        self.prepare: dict[str, Callable[[], None]] = {}
        self._digests: dict[DigestKey, str | LookupFailed | None] = {}
        self._digest_events: dict[DigestKey, anyio.Event] = {}

    def key(self, datasource: str, package: str, view: CheckoutAccess) -> LookupKey:
        """The lookup of ``package`` for a checkout with ``view``'s registries and credentials."""
        self._views.setdefault(view.key, view)
        return (datasource, package, view.base_url(datasource, package), view.key)

    async def evaluate(
        self,
        dep: Dependency,
        catalog: Catalog,
        policy: ReleaseAgePolicy,
        now: datetime,
        locked: str | None,
        key: LookupKey,
    ) -> tuple[Catalog, Finding]:
        """Evaluate ``dep``, looking up publish times the verdict or libyears need, lazily.

        Times are kept per lookup ``key`` (a package on one registry, with one set of
        credentials), so every row of it (any file, any repository) gets the same dates; one
        row at a time asks, the others wait and reuse. A failed time lookup leaves those dates
        unknown and says so in the reason.
        """
        versioning = VERSIONINGS[dep.versioning]
        lazy = DATASOURCES[dep.datasource].release_times
        if lazy is None:
            return catalog, evaluate(dep, catalog, versioning, policy, now, locked, memo=self._memo)
        known = self._times.setdefault(key, {})
        sources = self._sources.setdefault(key, {})
        async with self._time_locks.setdefault(key, anyio.Lock()):
            catalog = _dated(catalog, known)
            finding = evaluate(dep, catalog, versioning, policy, now, locked, memo=self._memo)
            try:
                for _ in range(MAX_TIME_ROUNDS):
                    wanted = _times_needed(
                        finding,
                        catalog,
                        versioning,
                        set(known),
                        for_libyears=lazy.for_libyears,
                    )
                    if not wanted:
                        break
                    known.update(dict.fromkeys(wanted))  # asked once, even if it fails
                    view = self._views[key[3]]
                    with self._access.using(view):
                        answer = await lazy.lookup(
                            self._fetch, view.registries, dep.package_name, wanted
                        )
                    _record(answer, known, sources, lazy.source, catalog)
                    catalog = _dated(catalog, known)
                    finding = evaluate(
                        dep, catalog, versioning, policy, now, locked, memo=self._memo
                    )
            except LookupFailed as exc:
                self._time_failures[key] = exc.reason
            failed = self._time_failures.get(key)
            if failed is not None and _missing_dates(finding, for_libyears=lazy.for_libyears):
                # Said on every row of this package whose dates it left unknown, not only on
                # the row whose lookup met the failure.
                note = f"publish times unavailable: {failed}"
                reason = f"{finding.reason}; {note}" if finding.reason else note
                finding = replace(finding, reason=reason)
            shown = _date_sources(finding, sources, lazy.catalog_source)
            if shown:
                finding = replace(finding, date_sources=shown)
        return catalog, finding

    def request(self, key: LookupKey) -> None:
        """Start the lookup ``key`` unless it is started already."""
        datasource = key[0]
        if key in self._requested:
            return
        # Set up first: should that raise, nothing is left started that no task will finish.
        self._prepare(datasource)
        self._requested.add(key)
        self.started += 1
        if self._fresh_many is not None and _single_request(datasource) is not None:
            # Single-request datasources: the lookups requested in this event-loop turn are
            # first answered together from fresh cache entries, without a task each.
            self._pending.append(key)
            if not self._dispatching:
                self._dispatching = True
                self._tg.start_soon(self._dispatch)
        else:
            self._tg.start_soon(self._run, key)

    def _prepare(self, datasource: str) -> None:
        """Run what ``datasource`` needs set up, before its first lookup of any kind."""
        prepare = self.prepare.pop(datasource, None)
        if prepare is not None:
            prepare()

    def request_digest(self, key: LookupKey, tag: str) -> None:
        """Start reading the digest ``tag`` of the package of ``key`` points at, unless started.

        One read per (lookup, tag) per run, in its own task (concurrent with every other
        lookup); the datasource must have ``get_digest``.
        """
        wanted = (key, tag)
        if wanted in self._digests or wanted in self._digest_events:
            return
        self._prepare(key[0])
        self._digest_events[wanted] = anyio.Event()
        self.started += 1
        self._tg.start_soon(self._read_digest, wanted)

    async def digest(self, key: LookupKey, tag: str) -> str | LookupFailed | None:
        """The digest ``tag`` points at now, ``None`` when the registry gives none, or the failure.

        Started now if it was not requested yet; every caller of one (lookup, tag) shares it.
        """
        wanted = (key, tag)
        done = self._digests.get(wanted, _PENDING)
        if done is not _PENDING:
            return cast("str | LookupFailed | None", done)
        self.request_digest(key, tag)
        event = self._digest_events.get(wanted)
        if event is not None:
            await event.wait()
        return self._digests[wanted]

    async def _read_digest(self, wanted: DigestKey) -> None:
        (datasource_id, package, base_url, view_key), tag = wanted
        result: str | LookupFailed | None
        try:
            lookup = DATASOURCES[datasource_id].get_digest
            if lookup is None:
                msg = f"{datasource_id} has no digest lookup"
                raise TypeError(msg)  # noqa: TRY301 - the datasource-bug path below
            with self._access.using(self._views[view_key]):
                result = await lookup(self._fetch, base_url, package, tag)
        except LookupFailed as exc:
            result = exc
        except Exception as exc:  # noqa: BLE001 - a datasource bug is a reason on the row
            result = _internal_error(f"{package}:{tag}", exc)
        self._digests[wanted] = result
        self._progressed()
        self._digest_events.pop(wanted).set()

    async def _dispatch(self) -> None:
        """Answer this turn's pending lookups from fresh cache entries; start tasks for the rest.

        In chunks of ``FRESH_BATCH``, each its own task: the first chunk is parsed and its rows
        evaluated while the cache's reader threads still read the next ones.
        """
        await anyio.lowlevel.checkpoint()  # let the rest of this turn's requests join
        self._dispatching = False
        keys, self._pending = self._pending, []
        for start in range(0, len(keys), FRESH_BATCH):
            self._tg.start_soon(self._answer_from_cache, keys[start : start + FRESH_BATCH])

    async def _answer_from_cache(self, keys: list[LookupKey]) -> None:
        fresh_many = self._fresh_many
        requests = []
        built: list[LookupKey] = []
        for key in keys:
            datasource_id, package, base_url, _ = key
            document = cast("SingleDocument", _single_request(datasource_id))
            try:
                requests.append(document.request(base_url, package))
            except LookupFailed as exc:  # a name the datasource refuses to put in a URL
                self._finish(key, exc)
                continue
            except Exception as exc:  # noqa: BLE001 - a datasource bug is an error row
                self._finish(key, _internal_error(package, exc))
                continue
            built.append(key)
        keys = built
        answers: list[FetchResponse | None] = [None] * len(keys)
        # One batch per checkout view: the cache key of a request depends on its credential.
        for view_key in dict.fromkeys(k[3] for k in keys):
            index = [i for i, k in enumerate(keys) if k[3] == view_key]
            try:
                with self._access.using(self._views[view_key]):
                    found = await fresh_many(  # type: ignore[misc]
                        [
                            (requests[i].url, requests[i].headers, requests[i].representation)
                            for i in index
                        ]
                    )
            except Exception:  # noqa: BLE001, S112 - the cache is an optimisation: look them up
                continue
            for i, response in zip(index, found, strict=True):
                answers[i] = response
        for key, request, response in zip(keys, requests, answers, strict=True):
            if response is None:
                self._tg.start_soon(self._run, key)
                continue
            document = cast("SingleDocument", _single_request(key[0]))
            try:
                result: Catalog | LookupFailed = document.build(response, key[1], request.url)
            except LookupFailed as exc:
                result = exc
            except Exception as exc:  # noqa: BLE001 - a datasource bug is an error row
                result = _internal_error(key[1], exc)
            self._finish(key, result)

    async def get(self, key: LookupKey) -> Catalog | LookupFailed:
        """The result of the lookup ``key`` (started now if it was not yet)."""
        done = self._results.get(key)
        if done is not None:
            return done  # already looked up: no need to yield to the event loop again
        self.request(key)
        done = self._results.get(key)
        if done is None:
            event = self._events.get(key)
            if event is None:
                event = self._events[key] = anyio.Event()
            await event.wait()
        return self._results[key]

    async def _run(self, key: LookupKey) -> None:
        datasource_id, package, base_url, view_key = key
        module = DATASOURCES[datasource_id]
        try:
            with self._access.using(self._views[view_key]):
                result: Catalog | LookupFailed = await module.get_catalog(
                    self._fetch, base_url, package
                )
        except LookupFailed as exc:
            result = exc
        except Exception as exc:  # noqa: BLE001 - any datasource bug becomes an error row, not a crash
            result = _internal_error(package, exc)
        self._finish(key, result)

    def _finish(self, key: LookupKey, result: Catalog | LookupFailed) -> None:
        self._results[key] = result
        if self.on_finish is not None:
            self.on_finish(key, result)
        self._progressed()
        event = self._events.pop(key, None)
        if event is not None:
            event.set()

    def _progressed(self) -> None:
        """Count one finished lookup (catalog or digest) and report progress."""
        self.done += 1
        if self.on_progress is not None:
            self.on_progress(self.done, self.started)


# A digest not read yet (``None`` is an answer: the registry gave no digest).
_PENDING = object()


def _single_request(datasource: str) -> SingleDocument | None:
    """How the datasource's catalog is one request, else ``None``."""
    return DATASOURCES[datasource].single_document


def _internal_error(package: str, exc: Exception) -> LookupFailed:
    """A datasource bug, as the failed lookup of ``package`` (an error row, not a crash)."""
    return LookupFailed(f"internal error looking up {package}: {type(exc).__name__}: {exc}")
