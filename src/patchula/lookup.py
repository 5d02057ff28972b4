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

Catalog views (seed 003, "Catalog views and release-age policy"): given a view store and the
run's time, a lookup whose effective wait is positive is first answered from a stored view
younger than ``clamp(waitHours - 1, 1, 24)`` hours, before the fresh-cache batch and before
any request (``--offline``: a view of any age); ``--recheck`` patterns bypass that for the
dependencies they match. ``save_views`` stores the run's successful catalogs, with the publish
times found lazily, once the rows are evaluated. Digests never come from a view.
"""

from __future__ import annotations

import contextlib
import functools
import re
from collections.abc import Callable, Mapping
from datetime import datetime, timedelta
from fnmatch import fnmatchcase
from typing import TYPE_CHECKING, Any, Protocol, cast

import anyio
import anyio.abc
import anyio.lowlevel
from msgspec.structs import replace

from patchula.credentials import CheckoutAccess, RegistryAccess
from patchula.datasource import DATASOURCES
from patchula.errors import LookupFailed
from patchula.http.caching import revalidating
from patchula.models import Catalog, Dependency, FetchResponse, Finding
from patchula.policy import ReleaseAgePolicy, evaluate
from patchula.policy.memo import EvaluationMemo
from patchula.policy.release_age import judge
from patchula.settings import Settings
from patchula.versioning import VERSIONINGS
from patchula.versioning.base import Versioning
from patchula.views import REPRESENTATION, ViewDocument, decode, encode, reusable
from patchula.views import view_key as catalog_view_key

if TYPE_CHECKING:
    from collections.abc import Sequence

    from patchula.cache import CatalogView
    from patchula.datasource.base import Dated, Fetch, SingleDocument, Unavailable

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
    answer: Mapping[str, datetime | Dated | Unavailable | None],
    known: dict[str, datetime | None],
    sources: dict[str, str],
    source: str | None,
    catalog: Catalog,
    failures: dict[str, str],
) -> None:
    """Keep a lazy lookup's ``answer`` in ``known`` and, per version it dates, the source.

    A ``Dated`` answer names its own source; a bare time has the datasource's ``source``. A
    version ``catalog`` dates already keeps that date (``_dated``), so no source is kept for
    it from the answer (crates.io's API pages date every version listed, pubtime or not). An
    ``Unavailable`` version stays undated and its reason goes to ``failures``.
    """
    # Imported here: the datasource base (its classes) is not needed by a run that looks
    # nothing up, and only a lazy publish-time lookup answers here (issue 12: start-up).
    from patchula.datasource.base import Dated, Unavailable  # noqa: PLC0415 - lazy: start-up

    dated = {r.version for r in catalog.releases if r.released_at is not None}
    for version, value in answer.items():
        if isinstance(value, Unavailable):
            known[version] = None
            failures[version] = value.reason
            continue
        at, said = (value.at, value.source) if isinstance(value, Dated) else (value, source)
        known[version] = at
        if at is not None and said is not None and version not in dated:
            sources[version] = said


def _date_sources(
    finding: Finding,
    sources: dict[str, str],
    catalog_source: str | None,
    named: Callable[[str], str | None],
) -> tuple[tuple[str, str], ...]:
    """``(version, source)`` of each date ``finding`` shows whose source is known, in row order.

    Current, latest, eligible, then the held-back releases; a date found lazily has the
    source it was found with (kept under the catalog's name of the version: ``named``), any
    other the catalog's (``LazyTimes.catalog_source``).
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
        source = sources.get(named(version) or version, catalog_source)
        if source is not None:
            found[version] = source
    return tuple(found.items())


def _restated(
    finding: Finding,
    shown: Mapping[str, str],
    source: str,
    dated: str,
    policy: ReleaseAgePolicy,
    now: datetime,
) -> Finding:
    """``finding`` with each held-back reason naming what a ``source`` date is (``dated``).

    A held-back release dated by ``source`` (``shown``: the row's ``dateSources``) is judged
    again with that wording: Docker Hub's ``tag_last_pushed`` is the tag's last push ("last
    pushed 24h ago …"), which a re-push of a floating tag (``node:20``) or a rebuild restarts,
    not its first release, so the row never calls it "released 24h ago".
    """
    held = tuple(
        replace(h, reason=judge(h.released_at, h.update_type, policy, now, dated=dated).reason)
        if h.released_at is not None and shown.get(h.version) == source
        else h
        for h in finding.held_back
    )
    return finding if held == finding.held_back else replace(finding, held_back=held)


def _times_needed(
    finding: Finding,
    catalog: Catalog,
    versioning: Versioning,
    asked: set[str],
    policy: ReleaseAgePolicy,
    *,
    for_libyears: bool,
) -> list[str]:
    """Versions whose publish time would change the verdict or the libyears, newest first.

    The newest held-back release of unknown age not asked for yet (the release-age policy:
    one round asks the newest, the next round the one below it when that stayed unknown),
    and the eligible release when the policy admitted it for its unknown age
    (``unknown-age = "admit"`` under a positive wait: its age, once known, may hold it back);
    with ``for_libyears`` also current, latest and eligible when a date is unknown (libyears
    go to the newest release the row can move to: latest, or eligible when latest is older or
    refused, or the newest held-back one).
    Versions already asked for are not asked again. The versions asked for are the catalog's
    (``v1.0.1``), not the row's (a scheme's ``shown`` drops the ``v``: a ``go:`` tool row's
    current reads ``1.0.1``), since the lookup asks the registry for them by name.
    """
    named = _catalog_names(catalog, versioning)
    wanted: list[str] = []
    if _admitted_unknown(finding, policy) and finding.eligible is not None:
        wanted.append(finding.eligible)
    for version, when in (
        (finding.current, finding.current_released_at),
        (finding.latest, finding.latest_released_at),
        (finding.eligible, finding.eligible_released_at),
    ):
        if not for_libyears:
            break
        if version is not None and when is None and named(version) is not None:
            wanted.append(version)
    # The newest held-back release of unknown age not asked yet: when the newest one's date
    # is unknown (none exists, or its lookup failed), an older one whose date is known may
    # still be eligible (only the releases whose age is unknown are held).
    unknown = [
        h.version
        for h in finding.held_back
        if h.released_at is None and named(h.version) not in asked
    ]
    if unknown:
        wanted.append(max(unknown, key=versioning.sort_key))
    found = (named(version) for version in dict.fromkeys(wanted))
    return [v for v in dict.fromkeys(found) if v is not None and v not in asked]


def _catalog_names(catalog: Catalog, versioning: Versioning) -> Callable[[str], str | None]:
    """The catalog's own name of a version as a row shows it, ``None`` when it has none.

    A row shows versions through its scheme's ``shown`` (mise: ``v1.0.1`` is ``1.0.1``); a
    scheme without one shows the catalog's names as they are, except a pin or lock spelled
    otherwise than its release (Cargo's ``=0.11.0+old`` for the index's ``0.11.0+new``: build
    metadata does not count, SemVer 2.0.0 §10), which is the catalog's release of the same
    precedence, as ``policy.evaluate`` finds it. Image tags are only themselves (``18.4`` and
    ``18.04`` are two images).
    """
    shown = getattr(versioning, "shown", None)
    names: dict[str, str] = {}
    by_key: dict[Any, str] = {}
    tags = getattr(versioning, "TAG_SCHEME", False) is True

    def named(version: str) -> str | None:
        if catalog.release(version) is not None:
            return version
        if shown is not None:
            if not names:  # built on the first miss only: most schemes show names as they are
                for release in catalog.releases:
                    names.setdefault(str(shown(release.version)), release.version)
            return names.get(version)
        if tags or not versioning.is_valid(version):
            return None
        if not by_key:  # built on the first miss only
            for release in catalog.releases:
                if versioning.is_valid(release.version):
                    by_key.setdefault(versioning.sort_key(release.version), release.version)
        return by_key.get(versioning.sort_key(version))

    return named


def _admitted_unknown(finding: Finding, policy: ReleaseAgePolicy) -> bool:
    """Whether ``finding``'s eligible release was admitted under a wait without a known age."""
    return (
        finding.eligible is not None
        and finding.eligible_released_at is None
        and policy.wait_for(finding.update_type) > timedelta(0)
    )


def _failed_times(
    finding: Finding,
    failed: str | None,
    unavailable: Mapping[str, str],
    named: Callable[[str], str | None],
    policy: ReleaseAgePolicy,
    now: datetime,
    *,
    for_libyears: bool,
) -> Finding:
    """``finding`` saying which of the publish times it lacks could not be looked up.

    ``failed`` is why the lookup of the package's times failed as a whole (every missing date
    of the row is then unavailable), ``unavailable`` why single versions' dates were
    (``Unavailable``, by catalog name: ``named``). The row's reason gains "publish times
    unavailable: …"; each held-back release whose date is unavailable says so instead of
    the datasource's "age unknown" reason (it is no release without a date); and when the
    verdict needed such a date (a release held back, or admitted by ``unknown-age``, for its
    unknown age) the row is a failed lookup (``failed_lookup``; exit code 3).
    """
    missing = _undated(finding, for_libyears=for_libyears)
    single = {
        version: unavailable[name]
        for version in missing
        if (name := named(version)) is not None and name in unavailable
    }
    reasons = list(dict.fromkeys(single.values()))
    if failed is not None and missing:
        reasons.insert(0, failed)
    if not reasons:
        return finding
    # Said on every row of this package whose dates it left unknown, not only on the row
    # whose lookup met the failure.
    note = f"publish times unavailable: {'; '.join(reasons)}"
    reason = f"{finding.reason}; {note}" if finding.reason else note
    needed = _verdict_dates(finding, policy)
    needed_reasons = [single[version] for version in needed if version in single]
    if failed is not None and needed:
        needed_reasons.insert(0, failed)
    # Held back (safe) or admitted by ``unknown-age``, the verdict lacks what the wait needed:
    # the run counts the row as a failed lookup.
    failure = (
        f"publish times unavailable: {'; '.join(dict.fromkeys(needed_reasons))}"
        if needed_reasons
        else None
    )
    failed_lookup = "; ".join(part for part in (finding.failed_lookup, failure) if part)
    held = tuple(
        replace(h, reason=judge(None, h.update_type, policy, now, _LOOKUP_FAILED).reason)
        if h.released_at is None and (failed is not None or h.version in single)
        else h
        for h in finding.held_back
    )
    return replace(finding, reason=reason, failed_lookup=failed_lookup or None, held_back=held)


# A held-back release's reason when its date lookup failed (the row's reason says how).
_LOOKUP_FAILED = "its publish time could not be looked up (see publish times unavailable)"


def _undated(finding: Finding, *, for_libyears: bool) -> list[str]:
    """The versions ``finding`` shows without the publish time a time lookup would give.

    Held-back releases and eligible without a date; with ``for_libyears`` also current and
    latest when the libyears are unknown for want of their dates.
    """
    shown = [h.version for h in finding.held_back if h.released_at is None]
    if finding.eligible is not None and finding.eligible_released_at is None:
        shown.append(finding.eligible)
    if for_libyears and finding.libyears is None and finding.current != finding.latest:
        for version, when in (
            (finding.current, finding.current_released_at),
            (finding.latest, finding.latest_released_at),
        ):
            if version is not None and when is None:
                shown.append(version)
    return list(dict.fromkeys(shown))


def _verdict_dates(finding: Finding, policy: ReleaseAgePolicy) -> list[str]:
    """The undated versions the verdict of ``finding`` rests on.

    A release held back for its unknown age, or the eligible one admitted for it
    (``unknown-age = "admit"``): a failed time lookup of one of them is a failed lookup of
    the row (``Finding.failed_lookup``), not only a libyears left unknown.
    """
    needed = [h.version for h in finding.held_back if h.released_at is None]
    if _admitted_unknown(finding, policy) and finding.eligible is not None:
        needed.append(finding.eligible)
    return needed


# Lookups answered from the cache per task (one reader job each; see ``Lookups._dispatch``).
FRESH_BATCH = 64

# A lookup: (datasource, package name, registry base URL, ``CheckoutAccess.key``). Checkouts
# whose .npmrc choose another registry or other credentials never share an answer.
LookupKey = tuple[str, str, str, int]
# A digest lookup: the package's lookup and the tag whose current digest is read.
DigestKey = tuple[LookupKey, str]


class ViewStore(Protocol):
    """Where catalog views are kept (``patchula.cache.Cache``)."""

    async def get_views(self, keys: Sequence[str]) -> Mapping[str, CatalogView | None]:
        """The stored view of each key, whatever its age, or ``None``."""
        ...

    async def put_views(self, views: Sequence[CatalogView]) -> int:
        """Store views (never resetting a newer one's age); return how many were written."""
        ...


class Lookups:
    """Run-wide single-flight of catalog lookups keyed by ``LookupKey``.

    The interface ``scan`` uses: ``key``, ``note``, ``request``, ``get``, ``evaluate``,
    ``save_views``, and the ``started``/``done`` counts reported through ``on_progress``.
    Tasks are started in ``tg`` (the run's task group); ``fetch`` is the run's fetch facade
    and ``access`` the credentials it was given, each lookup running under its checkout's view
    (``RegistryAccess.using``). ``views`` (a cache) and ``now`` (the run's evaluation time,
    ``--now`` when given) turn catalog-view reuse on; ``view_hits`` counts the lookups a view
    answered.
    """

    def __init__(
        self,
        tg: anyio.abc.TaskGroup,
        fetch: Fetch,
        settings: Settings,
        access: RegistryAccess,
        *,
        views: ViewStore | None = None,
        now: datetime | None = None,
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
        # Per key, the versions whose date the source should have had and did not, and why
        # (``Unavailable``): a failed lookup of those versions only.
        self._unavailable: dict[LookupKey, dict[str, str]] = {}
        self._time_locks: dict[LookupKey, anyio.Lock] = {}
        # Catalog views and verdicts shared by every row of this run, and only of this run.
        self._memo = EvaluationMemo()
        # Run once, before the first lookup of a datasource (``scan``: crates.io's pacing), so
        # what a datasource needs set up costs nothing in a run that never looks one up.
        self.prepare: dict[str, Callable[[], None]] = {}
        self._digests: dict[DigestKey, str | LookupFailed | None] = {}
        self._digest_events: dict[DigestKey, anyio.Event] = {}
        # The platform manifests of an index a tag names (``platforms``), read on demand.
        self._platforms: dict[DigestKey, dict[str, str] | LookupFailed] = {}
        self._platform_events: dict[DigestKey, anyio.Event] = {}
        # Catalog views: the store (None: no reuse), the run's time, the dependency names
        # each lookup serves (waits and --recheck patterns apply to them), the lookups waiting
        # for this turn's view read, and the lazy times each reused view came with.
        self._view_store = views if now is not None else None
        self._now = now
        self._wait = settings.release_age_policy().shortest_wait
        self._names: dict[LookupKey, set[str]] = {}
        self._view_pending: list[LookupKey] = []
        self._view_dispatching = False
        self._reused: dict[LookupKey, dict[str, datetime | None]] = {}
        # ``--offline``: the view of each lookup whose stored HTTP answers are read too; the
        # newer of the two answers (``_finish``).
        self._offline_views: dict[LookupKey, ViewDocument] = {}
        # ``--now``: each lookup's catalog as it stood then, and the catalog it was made from.
        self._as_of: dict[LookupKey, tuple[Catalog, Catalog]] = {}
        self.view_hits = 0

    def key(self, datasource: str, package: str, view: CheckoutAccess) -> LookupKey:
        """The lookup of ``package`` for a checkout with ``view``'s registries and credentials."""
        self._views.setdefault(view.key, view)
        return (datasource, package, view.base_url(datasource, package), view.key)

    def note(self, key: LookupKey, name: str) -> None:
        """Record that the dependency written ``name`` uses lookup ``key`` (before ``request``).

        Its wait and the ``--recheck`` patterns matching its name then apply to the lookup.
        """
        self._names.setdefault(key, set()).add(name)

    def _published_by(self, key: LookupKey, catalog: Catalog, now: datetime) -> Catalog:
        """``catalog`` as it stood at ``now`` when the run evaluates another time (``--now``).

        A past ``--now`` must not see releases published after it: they are left out, with the
        dist-tags naming them (``latest`` among them: the newest stable release published by
        then is latest). Releases of unknown date are kept. At the real time nothing changes,
        so only an explicit ``--now`` pays for the look; the answer is kept per catalog.
        """
        if self._settings.now is None:
            return catalog
        held = self._as_of.get(key)
        if held is not None and held[0] is catalog:
            return held[1]
        kept = tuple(r for r in catalog.releases if r.released_at is None or r.released_at <= now)
        out = catalog
        if len(kept) != len(catalog.releases):
            known = {r.version for r in kept}
            out = replace(
                catalog,
                releases=kept,
                latest=catalog.latest if catalog.latest in known else None,
                dist_tags=tuple((tag, v) for tag, v in catalog.dist_tags if v in known),
                published_later=tuple(
                    r.version for r in catalog.releases if r.version not in known
                ),
            )
        self._as_of[key] = (catalog, out)
        return out

    def wait_for(self, key: LookupKey) -> timedelta:
        """The effective wait of lookup ``key``: the shortest among the dependencies using it.

        Each dependency's is the policy's shortest update-class wait
        (``ReleaseAgePolicy.shortest_wait``); the policy is global today, so a per-package
        wait (a rule matching some names) slots in at ``_dependency_wait``.
        """
        names = self._names.get(key) or {key[1]}
        return min(self._dependency_wait(key, name) for name in names)

    def _dependency_wait(self, key: LookupKey, name: str) -> timedelta:  # noqa: ARG002 - per-package rules
        return self._wait

    def _rechecked(self, key: LookupKey) -> bool:
        """Whether a ``--recheck`` pattern matches the package or a dependency name of ``key``."""
        patterns = self._settings.recheck
        if not patterns:
            return False
        names = {key[1], *self._names.get(key, ())}
        return any(p == "*" or any(_matches(p, n, key[0]) for n in names) for p in patterns)

    def unmatched_rechecks(self) -> list[str]:
        """``--recheck`` patterns (other than ``*``) that matched no dependency of the run."""
        named = [(key[0], key[1]) for key in self._requested] + [
            (key[0], n) for key, more in self._names.items() for n in (key[1], *more)
        ]
        return [
            p
            for p in self._settings.recheck
            if p != "*" and not any(_matches(p, n, source) for source, n in named)
        ]

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
        unknown and says so in the reason; when the verdict needed them (a release held back
        or admitted for its unknown age) the row's ``failed_lookup`` says so too. A version
        whose date source did not know it (``Unavailable``: a 404 for a tag the catalog names)
        is such a failure for that version only: older releases are still asked, and one of
        known age may be eligible while the unknown one stays held back (``_failed_times``).
        """
        versioning = VERSIONINGS[dep.versioning]
        lazy = DATASOURCES[dep.datasource].release_times
        if lazy is None:
            catalog = self._published_by(key, catalog, now)
            return catalog, evaluate(dep, catalog, versioning, policy, now, locked, memo=self._memo)
        known = self._times.setdefault(key, {})
        sources = self._sources.setdefault(key, {})
        unavailable = self._unavailable.setdefault(key, {})
        async with self._time_locks.setdefault(key, anyio.Lock()):
            catalog = self._published_by(key, _dated(catalog, known), now)
            finding = evaluate(dep, catalog, versioning, policy, now, locked, memo=self._memo)
            try:
                for _ in range(MAX_TIME_ROUNDS):
                    wanted = _times_needed(
                        finding,
                        catalog,
                        versioning,
                        set(known),
                        policy,
                        for_libyears=lazy.for_libyears,
                    )
                    if not wanted:
                        break
                    known.update(dict.fromkeys(wanted))  # asked once, even if it fails
                    self._prepare(dep.datasource)  # a catalog from a view set nothing up yet
                    view = self._views[key[3]]
                    with self._access.using(view):
                        answer = await lazy.lookup(
                            self._fetch, view.registries, dep.package_name, wanted
                        )
                    _record(answer, known, sources, lazy.source, catalog, unavailable)
                    catalog = self._published_by(key, _dated(catalog, known), now)
                    finding = evaluate(
                        dep, catalog, versioning, policy, now, locked, memo=self._memo
                    )
            except LookupFailed as exc:
                self._time_failures[key] = exc.reason
            named = _catalog_names(catalog, versioning)
            finding = _failed_times(
                finding,
                self._time_failures.get(key),
                unavailable,
                named,
                policy,
                now,
                for_libyears=lazy.for_libyears,
            )
            shown = _date_sources(finding, sources, lazy.catalog_source, named)
            if shown:
                finding = replace(finding, date_sources=shown)
            if lazy.dated is not None and lazy.source is not None:
                finding = _restated(finding, dict(shown), lazy.source, lazy.dated, policy, now)
        return catalog, finding

    def request(self, key: LookupKey) -> None:
        """Start the lookup ``key`` unless it is started already."""
        datasource = key[0]
        if key in self._requested:
            return
        if self._view_store is None:
            # Set up first: should that raise, nothing is left started that no task will finish.
            self._prepare(datasource)
        self._requested.add(key)
        self.started += 1
        if self._view_store is not None and (
            self._settings.offline or self.wait_for(key) > timedelta(0)
        ):
            # Views first: the lookups requested in this event-loop turn are read together.
            self._view_pending.append(key)
            if not self._view_dispatching:
                self._view_dispatching = True
                self._tg.start_soon(self._reuse_views)
            return
        self._start(key)

    def _start(self, key: LookupKey) -> None:
        """Start answering ``key`` from the HTTP cache or the registry (no view).

        The datasource is set up here (``prepare``: crates.io's pacing, the GitHub no-token
        warning), so a run whose lookups all come from views warns of no request budget.
        """
        datasource = key[0]
        try:
            self._prepare(datasource)
        except Exception as exc:  # noqa: BLE001 - a set-up bug is this lookup's error row
            self._finish(key, _internal_error(key[1], exc))
            return
        if self._settings.recheck and self._rechecked(key):
            # ``--recheck``: upstream's answer now, past fresh HTTP entries too (sent
            # conditionally), never the fresh-cache batch.
            self._tg.start_soon(functools.partial(self._run, key, recheck=True))
            return
        if self._fresh_many is not None and _single_request(datasource) is not None:
            # Single-request datasources: the lookups requested in this event-loop turn are
            # first answered together from fresh cache entries, without a task each.
            self._pending.append(key)
            if not self._dispatching:
                self._dispatching = True
                self._tg.start_soon(self._dispatch)
        else:
            self._tg.start_soon(self._run, key)

    async def _reuse_views(self) -> None:
        """Answer this turn's view-eligible lookups from stored views; start the others.

        One read of the view store for the whole turn. A lookup a ``--recheck`` pattern
        matches, one without a usable view (missing, damaged, another representation, too
        old, stamped in the future) takes the normal path.
        """
        await anyio.lowlevel.checkpoint()  # let the rest of this turn's requests join
        self._view_dispatching = False
        keys, self._view_pending = self._view_pending, []
        wanted: dict[str, list[LookupKey]] = {}
        for key in keys:
            try:
                if self._rechecked(key):
                    self._start(key)
                    continue
                wanted.setdefault(self._view_key(key), []).append(key)
            except Exception:  # noqa: BLE001 - the normal path reports a name it cannot use
                self._start(key)
        found: Mapping[str, CatalogView | None] = {}
        if wanted:
            try:
                found = await cast("ViewStore", self._view_store).get_views(list(wanted))
            except Exception:  # noqa: BLE001 - views are an optimisation: look them up
                found = {}
        for name, waiting in wanted.items():
            for key in waiting:
                try:
                    document = self._view_of(key, found.get(name))
                except Exception:  # noqa: BLE001 - an unusable view is a miss, never a crash
                    document = None
                if document is None:
                    self._start(key)
                elif self._settings.offline:
                    # A zero-wait run may have stored newer HTTP answers than the view (it
                    # stores no view): offline reads both and answers with the newer.
                    self._offline_views[key] = document
                    self._start(key)
                else:
                    self.view_hits += 1
                    self._finish(key, self._adopt(key, document))

    def _view_key(self, key: LookupKey) -> str:
        """The view identity of lookup ``key``, with the credential the fetch would send.

        The credential is the one for the catalog's request URL (single-document
        datasources), else for the base URL; anonymous and authenticated views never mix.
        Raises ``LookupFailed`` for a name the datasource cannot put in a URL.
        """
        datasource, package, base_url, view = key
        document = _single_request(datasource)
        url = document.request(base_url, package).url if document is not None else base_url
        credential = self._views[view].credentials.for_url(url)
        identity = credential.cache_identity if credential is not None else None
        return catalog_view_key(datasource, base_url, package, identity)

    def _view_of(self, key: LookupKey, stored: CatalogView | None) -> ViewDocument | None:
        """The document of ``stored`` when it may answer ``key`` now, else ``None``."""
        if stored is None or stored.representation != REPRESENTATION:
            return None
        document = decode(stored.body)
        if document is None or document.catalog.datasource != key[0]:
            return None
        now = cast("datetime", self._now)
        wait = self.wait_for(key)
        if not reusable(document.catalog.fetched_at, now, wait, offline=self._settings.offline):
            return None
        return document

    def _adopt(self, key: LookupKey, document: ViewDocument) -> Catalog:
        """``key``'s catalog from the view ``document``, with the publish times it kept."""
        self._times[key] = dict(document.times)
        self._sources[key] = dict(document.sources)
        self._reused[key] = dict(document.times)
        return replace(document.catalog, reused=True)

    async def save_views(self) -> int:
        """Store the run's successful catalogs as views, in one batch; return how many.

        Called once the rows are evaluated, so the publish times found lazily (crates.io, the
        Go proxy) are in the view and a run reusing it asks for none. Only lookups whose
        effective wait is positive, never a failed lookup or a catalog with a ``caveat`` (a
        partial failure); a reused view only when it gained dates (its ``fetched_at`` kept).
        Times asked for in a failed time lookup are left out (asked again next time).
        """
        store = self._view_store
        if store is None:
            return 0
        # Here, not at the top: a run without a cache never imports the cache engine.
        from patchula.cache import CatalogView  # noqa: PLC0415 - lazy: start-up

        batch: list[CatalogView] = []
        for key, result in self._results.items():
            if not isinstance(result, Catalog) or result.caveat is not None:
                continue
            if self.wait_for(key) <= timedelta(0):
                continue
            times = dict(self._times.get(key, {}))
            if key in self._time_failures:
                times = {version: at for version, at in times.items() if at is not None}
            failed = self._unavailable.get(key, {})
            times = {version: at for version, at in times.items() if version not in failed}
            if self._reused.get(key) == times:
                continue
            try:
                body = encode(replace(result, reused=False), times, self._sources.get(key, {}))
                name = self._view_key(key)
            except Exception:  # noqa: BLE001, S112 - a view is an optimisation: skip it
                continue
            stamp = result.fetched_at.timestamp()
            batch.append(CatalogView(name, key[0], key[1], REPRESENTATION, body, stamp))
        try:
            return await store.put_views(batch)
        except Exception:  # noqa: BLE001 - the run's answers are complete without views
            return 0

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

    async def platforms(self, key: LookupKey, tag: str) -> dict[str, str] | LookupFailed:
        """The platform manifests of the index ``tag`` names (``Datasource.platform_digests``).

        ``{digest: platform}``, empty for a single-image manifest or a datasource without
        them, or the failure. Read once per (lookup, tag) per run, only when asked (a pinned
        digest that is not the tag's): every caller of one shares the read.
        """
        wanted = (key, tag)
        done = self._platforms.get(wanted)
        if done is not None:
            return done
        event = self._platform_events.get(wanted)
        if event is not None:
            await event.wait()
            return self._platforms[wanted]
        event = self._platform_events[wanted] = anyio.Event()
        datasource_id, package, base_url, view_key = key
        lookup = DATASOURCES[datasource_id].platform_digests
        result: dict[str, str] | LookupFailed = {}
        self.started += 1
        try:
            if lookup is not None:
                self._prepare(datasource_id)
                with self._access.using(self._views[view_key]):
                    result = await lookup(self._fetch, base_url, package, tag)
        except LookupFailed as exc:
            result = exc
        except Exception as exc:  # noqa: BLE001 - a datasource bug is a reason on the row
            result = _internal_error(f"{package}:{tag}", exc)
        self._platforms[wanted] = result
        self._progressed()
        self._platform_events.pop(wanted).set()
        return result

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

    async def _run(self, key: LookupKey, *, recheck: bool = False) -> None:
        datasource_id, package, base_url, view_key = key
        module = DATASOURCES[datasource_id]
        try:
            with (
                self._access.using(self._views[view_key]),
                revalidating() if recheck else contextlib.nullcontext(),
            ):
                result: Catalog | LookupFailed = await module.get_catalog(
                    self._fetch, base_url, package
                )
        except LookupFailed as exc:
            result = exc
        except Exception as exc:  # noqa: BLE001 - any datasource bug becomes an error row, not a crash
            result = _internal_error(package, exc)
        self._finish(key, result)

    def _finish(self, key: LookupKey, result: Catalog | LookupFailed) -> None:
        document = self._offline_views.pop(key, None)
        if document is not None and _view_wins(document.catalog, result):
            self.view_hits += 1
            result = self._adopt(key, document)
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


# Datasources whose names are case-insensitive (PyPI also folds ``-``, ``_`` and ``.``: PEP 503).
_CASELESS = frozenset({"pypi", "crates", "docker", "github-tags", "github-releases"})
_PEP503_SEPARATORS = re.compile(r"[-_.]+")


def _matches(pattern: str, name: str, datasource: str) -> bool:
    """Whether the ``--recheck`` glob ``pattern`` names ``name`` of ``datasource``.

    As written (``fnmatch.fnmatchcase``), except where the registry folds case: PyPI's names are
    compared normalised (PEP 503: lower case, runs of ``-_.`` one ``-``), crates.io's, image
    and GitHub repository names case-insensitively.
    """
    if datasource == "pypi":
        fold = _PEP503_SEPARATORS.sub
        return fnmatchcase(fold("-", name).lower(), fold("-", pattern).lower())
    if datasource in _CASELESS:
        return fnmatchcase(name.lower(), pattern.lower())
    return fnmatchcase(name, pattern)


def _view_wins(view: Catalog, stored: Catalog | LookupFailed) -> bool:
    """Offline, whether a view answers rather than the catalog the stored HTTP answers give.

    The newer answer wins: the view when the HTTP answers are missing (``NotCached``), older,
    or as old (the same snapshot, with the publish times found lazily and the answers never
    stored as HTTP entries, such as a 404 for a Go module's next major path); the HTTP answers
    when a zero-wait run refreshed them after the view was kept.
    """
    return isinstance(stored, LookupFailed) or view.fetched_at >= stored.fetched_at


def _single_request(datasource: str) -> SingleDocument | None:
    """How the datasource's catalog is one request, else ``None``."""
    return DATASOURCES[datasource].single_document


def _internal_error(package: str, exc: Exception) -> LookupFailed:
    """A datasource bug, as the failed lookup of ``package`` (an error row, not a crash)."""
    return LookupFailed(f"internal error looking up {package}: {type(exc).__name__}: {exc}")
