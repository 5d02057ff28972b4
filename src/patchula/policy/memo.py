"""What evaluating rows of one catalog shares: versions parsed once, picks and verdicts memoised.

A run evaluates the same package for every repository that declares it (100 repositories by 3
ranges of typescript is 300 rows on one catalog of 3,478 versions). ``CatalogView`` holds what
does not depend on the row: releases ordered by precedence with their stability and
installability, an index by version, the pool a fresh install picks from, and memos of each
distinct pick (per range), candidate list (per current and latest) and newest compatible
release (per current: which releases a user can move to depends on current, ``is_compatible``).
``EvaluationMemo`` finds the view of a catalog and the verdicts already given for it, bounded
so that a long process (many runs, a test session) holds at most ``max_catalogs`` catalogs and
``max_releases`` releases in views.

A catalog is recognised by identity first (the run hands every row of a package the same
``Catalog``), then by the shape the view depends on — versions, yanked, installable,
deprecated and the registry's prerelease flag, not publish times — so the copies with more
publish times filled in that lazy-time datasources (crates.io, the Go proxy) make for each row
share one view.
"""

from __future__ import annotations

import bisect
import functools
import operator
from collections import OrderedDict
from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from collections.abc import Callable
    from datetime import datetime

    from patchula.models import Catalog, Finding, Release
    from patchula.policy.release_age import ReleaseAgePolicy
    from patchula.versioning.base import Versioning

# (version, yanked, deprecated, installable, prerelease) of every release, in catalog order.
Shape = tuple[tuple[str, bool, str | None, bool, bool], ...]
# A row's verdict depends on nothing else of the dependency: (constraint, locked, policy, now,
# prereleases: whether the manifest opts the row in to prereleases, ``Dependency.prereleases``).
VerdictKey = tuple[str, str | None, "ReleaseAgePolicy", "datetime", bool]


DEFAULT_MAX_CATALOGS = 512
DEFAULT_MAX_RELEASES = 400_000


# What of a ``Release`` (a named tuple) a view depends on, by position: version, yanked,
# deprecated, installable and the registry's prerelease flag (``CatalogView._stable``). Read in C:
# a row of a catalog evaluated once pays for its shape.
_SHAPE_FIELDS = operator.itemgetter(0, 2, 3, 4, 5)


def _ANY(_version: str) -> bool:  # noqa: N802 - a constant predicate
    """Every prerelease is admitted (a scheme without ``admits_prerelease``)."""
    return True


def _shape(catalog: Catalog) -> Shape:
    return tuple(map(_SHAPE_FIELDS, catalog.releases))


class CatalogView:
    """The row-independent facts of one catalog under one versioning, computed once.

    Indices refer to ``catalog.releases``; a view serves every catalog of the same shape, so
    callers map indices through their own catalog (whose publish times may differ).
    """

    __slots__ = (
        "_admits",
        "_by_key",
        "_candidates",
        "_exact",
        "_flagged",
        "_keys",
        "_lines",
        "_movable",
        "_newest_compatible",
        "_newest_elsewhere",
        "_order",
        "_picks",
        "_stable",
        "_stand_ins",
        "_usable",
        "_versions",
        "newest_stable",
        "preferred",
        "preferred_set",
        "size",
        "usable",
        "versioning",
    )

    def __init__(self, catalog: Catalog, versioning: Versioning) -> None:
        """Parse and order the versions of ``catalog`` once (O(n log n) in its releases)."""
        self.versioning = versioning
        releases = catalog.releases
        self.size = len(releases)
        key, is_valid, is_stable = versioning.sort_key, versioning.is_valid, versioning.is_stable
        valid = [i for i, r in enumerate(releases) if is_valid(r.version)]
        keyed = sorted(((key(releases[i].version), i) for i in valid), key=lambda pair: pair[0])
        self._keys: list[Any] = [k for k, _ in keyed]
        self._order: list[int] = [i for _, i in keyed]
        self._versions: list[str] = [releases[i].version for i in self._order]
        # A release the registry marks a prerelease (GitHub's flag) is one whatever its version.
        self._stable: list[bool] = [
            is_stable(releases[i].version) and not releases[i].prerelease for i in self._order
        ]
        self._movable: list[bool] = [
            not r.yanked and r.installable and r.deprecated is None
            for r in (releases[i] for i in self._order)
        ]
        self._usable: list[bool] = [
            not r.yanked and r.installable for r in (releases[i] for i in self._order)
        ]
        self._exact: dict[str, int] = {}
        for i, r in enumerate(releases):
            self._exact.setdefault(r.version, i)
        # Versions the registry flags unstable whatever their string (a Node Current release).
        self._flagged: frozenset[str] = frozenset(r.version for r in releases if r.prerelease)
        self._by_key: dict[Any, int] = {}
        for i in valid:  # catalog order: the first of equal versions (1.0 and 1.0.0) is found
            self._by_key.setdefault(key(releases[i].version), i)
        usable = [r for r in releases if not r.yanked and r.installable]
        self.usable: list[str] = [r.version for r in usable]
        self.preferred: list[str] = [r.version for r in usable if r.deprecated is None]
        self.preferred_set: frozenset[str] = frozenset(self.preferred)
        # The newest stable release that is not yanked and is installable; the first of equals.
        self.newest_stable: str | None = None
        best: Any = None
        for r in usable:
            if (
                not r.prerelease
                and is_stable(r.version)
                and (best is None or key(r.version) > best)
            ):
                self.newest_stable, best = r.version, key(r.version)
        self._picks: dict[tuple[bool, str, object], str | None] = {}
        self._admits: dict[tuple[str, str], bool] = {}
        self._candidates: dict[tuple[str, str | None], tuple[int, ...]] = {}
        self._newest_compatible: dict[str, str | None] = {}
        self._newest_elsewhere: dict[str, str | None] = {}
        self._stand_ins: dict[str, frozenset[int]] = {}
        self._lines: dict[str, tuple[int, ...]] = {}

    def find(self, version: str) -> int | None:
        """Index of the release equal to ``version``: exactly, else in the scheme (``1.0``)."""
        exact = self._exact.get(version)
        if exact is not None or not self.versioning.is_valid(version):
            return exact
        return self._by_key.get(self.versioning.sort_key(version))

    def admits(self, version: str, constraint: str) -> bool:
        """``versioning.matches(version, constraint)``, memoised."""
        memo_key = (version, constraint)
        answer = self._admits.get(memo_key)
        if answer is None:
            answer = self._admits[memo_key] = self.versioning.matches(version, constraint)
        return answer

    def pick(
        self,
        constraint: str,
        *,
        any_usable: bool,
        choose: Callable[[list[str], str, Versioning], str | None],
    ) -> str | None:
        """What ``choose`` picks for ``constraint`` among the preferred (or all usable) versions.

        Memoised per ``choose`` too: a row opted in to prereleases picks by another rule.
        """
        memo_key = (any_usable, constraint, choose)
        if memo_key not in self._picks:
            pool = self.usable if any_usable else self.preferred
            self._picks[memo_key] = choose(pool, constraint, self.versioning)
        return self._picks[memo_key]

    def candidates(self, current: str, ceiling: str | None) -> tuple[int, ...]:
        """Indices of the releases above ``current`` up to ``ceiling`` one could move to.

        Not yanked, installable, not deprecated, compatible with current (``is_compatible``),
        of current's stability (prereleases only for a prerelease current); ordered by
        precedence, equal versions in catalog order.
        """
        memo_key = (current, ceiling)
        found = self._candidates.get(memo_key)
        if found is None:
            key = self.versioning.sort_key
            start = bisect.bisect_right(self._keys, key(current))
            stop = (
                len(self._keys)
                if ceiling is None
                else bisect.bisect_right(self._keys, key(ceiling))
            )
            unstable = self._unstable_gate(current)
            compatible = self.versioning.is_compatible
            stand_ins = self.stand_ins(current)
            found = tuple(
                self._order[p]
                for p in range(start, stop)
                if self._movable[p]
                and (self._stable[p] or (unstable is not None and unstable(self._versions[p])))
                and (compatible(current, self._versions[p]) or p in stand_ins)
            )
            self._candidates[memo_key] = found
        return found

    def newest_compatible(self, current: str) -> str | None:
        """The newest release a user on ``current`` could move to, or ``None``.

        Not yanked, installable and compatible with current; stable, or of any stability for
        a prerelease current; the highest by precedence (of equal versions, the last listed).
        """
        if current not in self._newest_compatible:
            unstable = self._unstable_gate(current)
            compatible = self.versioning.is_compatible
            stand_ins = self.stand_ins(current)
            self._newest_compatible[current] = next(
                (
                    self._versions[p]
                    for p in range(len(self._keys) - 1, -1, -1)
                    if self._usable[p]
                    and (self._stable[p] or (unstable is not None and unstable(self._versions[p])))
                    and (compatible(current, self._versions[p]) or p in stand_ins)
                ),
                None,
            )
        return self._newest_compatible[current]

    def newest_elsewhere(self, current: str) -> str | None:
        """The newest stable release in another variant than ``current``'s, or ``None``.

        Not yanked and installable, stable, and of the same shape as current in another
        variant (the scheme's ``is_other_variant``: image tags; ``None`` for schemes without
        variants). What a row that never moves across variants is measured against to say
        that newer releases are tagged elsewhere only.
        """
        other_variant = getattr(self.versioning, "is_other_variant", None)
        if other_variant is None:
            return None
        if current not in self._newest_elsewhere:
            self._newest_elsewhere[current] = next(
                (
                    self._versions[p]
                    for p in range(len(self._keys) - 1, -1, -1)
                    if self._usable[p]
                    and self._stable[p]
                    and other_variant(current, self._versions[p])
                ),
                None,
            )
        return self._newest_elsewhere[current]

    def stand_ins(self, current: str) -> frozenset[int]:
        """Positions of the precise tags that stand in for floating tags ``current`` lacks.

        For a floating tag (``v1``; the scheme's ``finer_line``: image and action tags): the
        stable, usable tags written with more components whose line at current's precision
        (``v2.0.0``: ``v2``) has no stable, usable tag of current's shape, the most precise of
        each such line (``v2.0.0`` and ``v2.1.0``, not ``v2.1``). A user on ``@v1`` can move to
        them; one on ``@v1`` with a ``v2`` tag moves to ``v2`` itself (``is_compatible``).
        Positions are in precedence order (``self._versions``); empty for other schemes and
        for a current that is no floating tag. Memoised per current.
        """
        found = self._stand_ins.get(current)
        if found is not None:
            return found
        finer = getattr(self.versioning, "finer_line", None)
        release_of = getattr(self.versioning, "release_of", None)
        if finer is None or release_of is None or not self.versioning.is_stable(current):
            found = frozenset()
        else:
            compatible = self.versioning.is_compatible
            floating: set[tuple[int, ...]] = set()
            lines: dict[tuple[int, ...], list[tuple[int, int]]] = {}
            for p, version in enumerate(self._versions):
                if not (self._usable[p] and self._stable[p]):
                    continue
                if compatible(current, version):
                    numbers = release_of(version)
                    if numbers is not None:
                        floating.add(tuple(numbers))
                    continue
                line = finer(current, version)
                if line is not None:
                    written = len(release_of(version) or ())
                    lines.setdefault(tuple(line), []).append((written, p))
            chosen: set[int] = set()
            for line, members in lines.items():
                if line in floating:
                    continue
                most = max(written for written, _ in members)
                chosen.update(p for written, p in members if written == most)
            found = frozenset(chosen)
        self._stand_ins[current] = found
        return found

    def line_members(self, tag: str) -> tuple[int, ...]:
        """Catalog indices of the most precise stable, usable tags of floating ``tag``'s line.

        ``v2`` → ``v2.0.0`` and ``v2.1.0`` (not ``v2.1``), in precedence order; empty when
        ``tag`` is no floating tag of a scheme with ``finer_line`` or its line has no precise
        tag. What a floating tag is measured against: it should point where the newest does.
        """
        found = self._lines.get(tag)
        if found is not None:
            return found
        finer = getattr(self.versioning, "finer_line", None)
        release_of = getattr(self.versioning, "release_of", None)
        own = release_of(tag) if release_of is not None else None
        members: list[tuple[int, int]] = []
        if finer is not None and own is not None and release_of is not None:
            for p, version in enumerate(self._versions):
                if self._usable[p] and self._stable[p] and finer(tag, version) == own:
                    members.append((len(release_of(version) or ()), p))
        most = max((written for written, _ in members), default=0)
        found = tuple(self._order[p] for written, p in members if written == most)
        self._lines[tag] = found
        return found

    def _unstable_gate(self, current: str) -> Callable[[str], bool] | None:
        """Which prereleases a user on ``current`` may move to, or ``None`` for none.

        None for a stable current. For a prerelease current (by its version, or flagged by the
        registry: a Node release outside an LTS line, a GitHub prerelease), every prerelease,
        unless the scheme says which (``admits_prerelease(current, other)``: image tags admit only
        prereleases of current's own release, as Renovate's ``ignoreUnstable`` does).
        """
        if self.versioning.is_stable(current) and current not in self._flagged:
            return None
        admits = getattr(self.versioning, "admits_prerelease", None)
        if admits is None:
            return _ANY
        return functools.partial(admits, current)


class _Entry:
    __slots__ = ("catalog", "verdicts", "versioning", "view")

    def __init__(self, catalog: Catalog, versioning: Versioning, view: CatalogView) -> None:
        self.catalog = catalog  # held so that its id() is not reused while the entry lives
        self.versioning = versioning
        self.view = view
        self.verdicts: dict[VerdictKey, Finding] = {}


class EvaluationMemo:
    """Bounded memo of catalog views and verdicts, least recently used out first.

    At most ``max_catalogs`` catalogs are remembered, holding at most ``max_releases``
    releases in all; a catalog bigger than that is evaluated without a memo.
    """

    def __init__(
        self,
        max_catalogs: int = DEFAULT_MAX_CATALOGS,
        max_releases: int = DEFAULT_MAX_RELEASES,
    ) -> None:
        """Make an empty memo with these bounds (counts of catalogs and of releases)."""
        self.max_catalogs = max_catalogs
        self.max_releases = max_releases
        self._entries: OrderedDict[tuple[int, int], _Entry] = OrderedDict()
        self._views: OrderedDict[tuple[int, Shape], CatalogView] = OrderedDict()
        self._view_releases = 0
        self._entry_releases = 0
        self.views_built = 0

    def entry(self, catalog: Catalog, versioning: Versioning) -> _Entry:
        """The memo entry of ``catalog`` under ``versioning``, made (and bounded) on first use."""
        ident = (id(catalog), id(versioning))
        entry = self._entries.get(ident)
        if entry is not None and entry.catalog is catalog and entry.versioning is versioning:
            self._entries.move_to_end(ident)
            return entry
        entry = _Entry(catalog, versioning, self._view(catalog, versioning))
        self._entries[ident] = entry
        self._entry_releases += entry.view.size
        while self._entries and (
            len(self._entries) > self.max_catalogs or self._entry_releases > self.max_releases
        ):
            _, evicted = self._entries.popitem(last=False)
            self._entry_releases -= evicted.view.size
        return entry  # evicted at once when it alone is above the bound: used for this row only

    def _view(self, catalog: Catalog, versioning: Versioning) -> CatalogView:
        shape_key = (id(versioning), _shape(catalog))
        view = self._views.get(shape_key)
        if view is not None and view.versioning is versioning:
            self._views.move_to_end(shape_key)
            return view
        view = CatalogView(catalog, versioning)
        self.views_built += 1
        if view.size > self.max_releases:
            return view  # too big to keep
        self._views[shape_key] = view
        self._view_releases += view.size
        while self._view_releases > self.max_releases or len(self._views) > self.max_catalogs:
            _, evicted = self._views.popitem(last=False)
            self._view_releases -= evicted.size
        return view

    def clear(self) -> None:
        """Forget every catalog and verdict."""
        self._entries.clear()
        self._views.clear()
        self._view_releases = 0
        self._entry_releases = 0


def releases_at(catalog: Catalog, indices: tuple[int, ...]) -> list[Release]:
    """The releases of ``catalog`` at ``indices`` (a view's answer, in this catalog's dates)."""
    releases = catalog.releases
    return [releases[i] for i in indices]
