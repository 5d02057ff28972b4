"""Pure lookup decisions: current, latest, eligible, held back, update type, libyears.

No I/O and no wall clock: ``now`` is a parameter. The rules follow design.md §1 and §8:

* current = the locked version when a lockfile gives it, else the exact pin, else the version a
  fresh install resolves (npm prefers ``dist-tags.latest`` when the range admits it and avoids
  deprecated versions while the range admits another, like ``npm-pick-manifest``; pip takes the
  newest matching final release, a prerelease only when no final one matches, and skips yanked
  ones, PEP 440 and PEP 592);
* latest = the registry's own newest stable (npm ``dist-tags.latest``, PyPI newest non-yanked
  final release, or its newest prerelease when it has no final release); when the registry's
  latest is a prerelease (an npm ``latest`` tag set on ``1.0.0-pre1``) and current is stable,
  latest is the newest stable release instead (design §1: prereleases only for a prerelease
  current), and the row says which tag was set; for image tags (a scheme with ``TAG_SCHEME``,
  whose registries name no latest) latest is the newest release compatible with current, of
  current's stability;
* candidates = releases newer than current, compatible with it (``is_compatible``: an image on
  ``3.12-slim`` never moves to ``3.13``), not yanked, installable, not deprecated, of the same
  stability as current (prereleases only when current is one) and no newer than latest unless
  current already is (Renovate's rule for versions above ``latest``);
* eligible = the newest candidate the release-age policy admits now; every candidate it does not
  admit is held back with ``released_at`` and ``eligible_at``.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime, timedelta
from typing import Any, NamedTuple

from msgspec.structs import replace

from patchula.models import (
    Catalog,
    CurrentSource,
    Dependency,
    Finding,
    HeldBack,
    Release,
    Status,
    UpdateType,
)
from patchula.policy.memo import CatalogView, EvaluationMemo, releases_at
from patchula.policy.release_age import ReleaseAgePolicy, judge
from patchula.versioning.base import Versioning

# The process-wide default memo: bounded (policy/memo.py), keyed by catalog identity, so rows of
# one package share parsed versions, picks and verdicts, and nothing outlives its bounds.
MEMO = EvaluationMemo()

DAYS_PER_YEAR = 365.25
_NO_WAIT = timedelta(0)

# Why a candidate's age is unknown, in a held-back reason ("age unknown: …"): the registry's
# own words per datasource id (a string: datasources are their own plugin family), else
# ``_UNKNOWN_AGE``. A date lookup that failed says so instead (``lookup._failed_times``).
_UNKNOWN_AGE = "the registry gives no publish time"
_UNKNOWN_AGE_BY_DATASOURCE = {
    "docker": "an OCI image tag has no publish time in the registry",
    "github-tags": "a GitHub tag has no date of its own, and no release or commit date was found",
}


def evaluate(
    dep: Dependency,
    catalog: Catalog,
    versioning: Versioning,
    policy: ReleaseAgePolicy,
    now: datetime,
    locked: str | None = None,
    memo: EvaluationMemo | None = None,
) -> Finding:
    """Evaluate one dependency against its catalog at ``now``.

    ``locked`` is the version a lockfile records for this dependency, if any. Returns a
    ``Finding`` whose status is ``up-to-date``, ``outdated``, ``held-back`` or ``unknown`` (with
    a reason when current cannot be determined); this function never raises on bad versions.

    The verdict depends on the dependency only through its constraint and its prerelease
    opt-in (``Dependency.prereleases``), so it is memoised per (catalog, versioning,
    constraint, locked, policy, now, opt-in) in ``memo`` (default ``MEMO``), and
    the catalog's versions are parsed and ordered once for all its rows (``CatalogView``).
    """
    entry = (MEMO if memo is None else memo).entry(catalog, versioning)
    verdict_key = ((dep.constraint or "").strip(), locked, policy, now, dep.prereleases)
    finding = entry.verdicts.get(verdict_key)
    if finding is None:
        finding = _shown(_evaluate(dep, catalog, entry.view, policy, now, locked), versioning)
        entry.verdicts[verdict_key] = finding
    return finding


def _evaluate(
    dep: Dependency,
    catalog: Catalog,
    view: CatalogView,
    policy: ReleaseAgePolicy,
    now: datetime,
    locked: str | None,
) -> Finding:
    versioning = view.versioning
    resolved = _resolve_current(dep, catalog, view, locked)
    if isinstance(resolved, str):
        shown, _ = _select_latest(catalog, view, None)
        return Finding(
            status="unknown",
            reason=resolved,
            latest=shown,
            latest_released_at=_released_at(catalog, shown, view),
        )
    current, source = resolved
    current_rel = _find(catalog, current, view)
    latest, latest_note = _select_latest(catalog, view, current)
    latest_rel = _find(catalog, latest, view) if latest else None
    pseudo_time = _pseudo_time(versioning, current)
    if current_rel is None and (catalog.lists_every_version or pseudo_time is None):
        # A pin or lock naming a version the registry never published (or unpublished): any
        # verdict would be a guess, so say so instead of calling it up to date.
        where = "lockfile" if source == "lockfile" else "pinned"
        reason = (
            f"{where} version {current} is not in the {catalog.datasource} release list"
            + _local_note(catalog, current, view)
        )
        if source == "dist-tag":
            # npm-pick-manifest returns nothing for a tag naming an unlisted version (ETARGET).
            reason = (
                f"dist-tag {(dep.constraint or '').strip()!r} names {current}, which is not in"
                f" the {catalog.datasource} release list"
            )
        if current in catalog.published_later:
            # ``--now`` in the past: it exists, but was not published yet then.
            reason = (
                f"{where} version {current} was published after the evaluation time "
                f"({now.astimezone(UTC):%Y-%m-%dT%H:%M:%SZ}, --now): not released yet then"
            )
        return Finding(
            status="unknown",
            reason=reason,
            current=current,
            current_source=source,
            latest=latest,
            latest_released_at=latest_rel.released_at if latest_rel else None,
        )
    if (no_files := _without_files(catalog, current_rel, source, latest, latest_rel)) is not None:
        return no_files
    if not versioning.is_valid(current):
        # An image tag such as ``latest`` or a commit hash: no release is newer than it.
        return Finding(
            status="unknown",
            reason=f"{current!r} is not a {versioning.ID} version: no release compares to it",
            current=current,
            current_source=source,
        )

    candidates = _candidates(catalog, view, current, latest)
    withdrawn_note = None
    if current_rel is not None and current_rel.yanked and not candidates:
        # A yanked or retracted current with nothing newer is no up-to-date row: the newest
        # usable release is what to move to (the go command's @latest skips a retracted
        # current and moves back, https://go.dev/ref/mod#go-mod-file-retract).
        back = _usable_below(catalog, view, latest, current)
        if back is None:
            return Finding(
                status="unknown",
                reason=f"{_withdrawn(catalog, current_rel)}; {catalog.datasource} names no "
                "usable release to move to",
                current=current,
                current_source=source,
                current_released_at=current_rel.released_at,
            )
        candidates = [back]
        withdrawn_note = f"latest usable is {back.version}"
    unknown_age = _UNKNOWN_AGE_BY_DATASOURCE.get(catalog.datasource, _UNKNOWN_AGE)
    admitted, held = _admit(candidates, current, versioning, policy, now, unknown_age)
    eligible = admitted[-1] if admitted else None
    admitted_note = None
    if eligible is not None:
        # Releases below the one proposed hold nothing back.
        held = [h for h in held if versioning.compare(h.version, eligible.version) > 0]
        if eligible.released_at is None:
            # Admitted without a known age (``unknown_age = "admit"``): the row says so.
            kind = versioning.update_type(current, eligible.version)
            why = judge(None, kind, policy, now).reason
            admitted_note = f"{eligible.version}: {why}" if why else None

    status: Status
    if not candidates:
        status = "up-to-date"
    elif eligible is not None:
        status = "outdated"
    else:
        status = "held-back"
    target = eligible.version if eligible else (candidates[-1].version if candidates else None)
    update_type: UpdateType | None = versioning.update_type(current, target) if target else None
    proposed = _proposed(versioning, source, dep.constraint, eligible, catalog, view)
    lined = source == "dist-tag" and "/" in (dep.constraint or "") and _proposes(versioning)
    if proposed is None and eligible is not None and lined:
        # An alias of an older line (``lts/iron``) whose newest line's release is held back.
        why = f"no alias names {eligible.version} (the newest line's release is held back)"
        admitted_note = f"{admitted_note}; {why}" if admitted_note else why

    # What the registry's latest and a floating tag's proposal mean for this row.
    latest_note = "; ".join(
        note
        for note in (
            latest_note,
            _below_latest_note(catalog, view, current, current_rel, latest),
            _floating_notes(catalog, view, current, eligible),
        )
        if note
    )
    return Finding(
        status=status,
        reason=_notes(
            current_rel,
            latest_rel,
            latest,
            catalog,
            latest_note or None,
            admitted_note,
            withdrawn_note,
            _metadata_note(current, current_rel, versioning),
        ),
        current=current,
        current_source=source,
        latest=latest,
        eligible=eligible.version if eligible else None,
        update_type=update_type,
        versions_behind=0 if withdrawn_note else _behind(candidates, current, target, versioning),
        current_released_at=current_rel.released_at if current_rel else pseudo_time,
        latest_released_at=latest_rel.released_at if latest_rel else None,
        eligible_released_at=eligible.released_at if eligible else None,
        libyears=_libyears(
            current_rel.released_at if current_rel else pseudo_time,
            candidates[-1] if candidates else None,
            latest,
        ),
        held_back=tuple(held),
        major_available=catalog.successor,
        proposed=proposed,
        failed_lookup=catalog.caveat,
    )


def without_excluded(catalog: Catalog, excluded: Sequence[str], versioning: Versioning) -> Catalog:
    """``catalog`` without the releases a manifest excludes (go.mod ``exclude``).

    The go command's version queries skip excluded versions as they skip retracted ones
    (``cmd/go/internal/modload``, ``CheckAllowed``; https://go.dev/ref/mod#go-mod-file-exclude):
    they are never a candidate nor latest; latest falls to the newest stable release left that
    is not yanked (a ``+incompatible`` one only when latest was one). ``catalog`` itself when it
    holds none of them.
    """
    if not excluded:
        return catalog
    dropped = {version for version in excluded if catalog.release(version) is not None}
    if not dropped:
        return catalog
    releases = tuple(r for r in catalog.releases if r.version not in dropped)
    latest = catalog.latest
    if latest in dropped:
        incompatible = latest.endswith("+incompatible")
        usable = [
            r.version
            for r in releases
            if not r.yanked
            and not r.prerelease
            and versioning.is_stable(r.version)
            and (incompatible or not r.version.endswith("+incompatible"))
        ]
        latest = max(usable, key=versioning.sort_key, default=None)
    return replace(catalog, releases=releases, latest=latest)


def excluded_note(
    catalog: Catalog,
    excluded: Sequence[str],
    current: str | None,
    versioning: Versioning,
    where: str,
) -> str | None:
    """Name the excluded versions that change the answer: released, usable, newer than current.

    ``catalog`` is the one before ``without_excluded``; ``where`` the manifest that excludes
    them. ``None`` when no exclusion mattered.
    """
    if current is None or not versioning.is_valid(current):
        return None
    mattered = [
        version
        for version in excluded
        if (rel := catalog.release(version)) is not None
        and not rel.yanked
        and versioning.is_stable(version)
        and versioning.compare(version, current) > 0
    ]
    if not mattered:
        return None
    return f"{', '.join(mattered)} excluded by an exclude directive in {where}: not proposed"


# What a withdrawn release is called per datasource (a Go module version is retracted).
_WITHDRAWN_WORDS = {"goproxy": "retracted"}


def _without_files(
    catalog: Catalog,
    current_rel: Release | None,
    source: CurrentSource,
    latest: str | None,
    latest_rel: Release | None,
) -> Finding | None:
    """The ``unknown`` row of a current the registry lists without files, else ``None``.

    PEP 700 lets a PyPI project list a version with no files (all deleted): pip never selects
    a version it has no distribution file of, so nothing is installed at it. Such a release is
    not ``installable`` and names no ``requires_python`` (one excluded by the row's Python
    keeps its own, ``policy.requires_python.bounded``).
    """
    if (
        current_rel is None
        or current_rel.installable
        or current_rel.requires_python is not None
        or current_rel.yanked
    ):
        return None
    where = "locked" if source == "lockfile" else "pinned"
    anywhere = any(rel.installable for rel in catalog.releases)
    reason = (
        f"{where} version {current_rel.version} has no files on {catalog.datasource}: nothing"
        " to install" + ("" if anywhere else "; no release has files")
    )
    return Finding(
        status="unknown",
        reason=reason,
        current=current_rel.version,
        current_source=source,
        latest=latest,
        latest_released_at=latest_rel.released_at if latest_rel else None,
    )


def _local_note(catalog: Catalog, current: str, view: CatalogView) -> str:
    """``; its public version 2.0.0 is: …`` for an unlisted local pin (``2.0.0+cpu``), else ``""``.

    PEP 440 local versions are downstream builds that public indexes should not host: a pin
    on one (``torch==2.0.0+cpu``) is installed from another index (the PyTorch one), whose
    releases the row's catalog does not list (Renovate, renovatebot/pep440#1618). The row
    stays ``unknown``, naming the public release that exists.
    """
    versioning = view.versioning
    if versioning.ID != "pep440" or "+" not in current:
        return ""
    public, _, label = current.partition("+")
    index = view.find(public) if versioning.is_valid(public) else None
    if index is None:
        return ""
    return (
        f"; its public version {catalog.releases[index].version} is: the +{label} build"
        " (a PEP 440 local version) comes from another index"
    )


def _metadata_note(current: str, rel: Release | None, versioning: Versioning) -> str | None:
    """``0.11.0+old is published as 0.11.0+new …`` when only build metadata tells them apart.

    A Cargo pin or lock written with other build metadata than the release the registry lists
    (or with none, or the registry's without any) names that release: SemVer 2.0.0 §10 leaves
    build metadata out of precedence and Cargo ignores it in requirements. The row keeps what
    the manifest says as current and names the registry's spelling, so neither reads as a
    misquote. ``None`` for every other scheme and when the spellings agree.
    """
    if versioning.ID != "cargo" or rel is None or rel.version == current:
        return None
    if "+" not in current and "+" not in rel.version:
        return None
    return (
        f"{current} is published as {rel.version}: build metadata does not count"
        " (SemVer 2.0.0 §10; Cargo ignores it in requirements)"
    )


def _withdrawn(catalog: Catalog, rel: Release) -> str:
    """``current v1.2.0 is retracted: <rationale>`` (``yanked`` outside Go)."""
    word = _WITHDRAWN_WORDS.get(catalog.datasource, "yanked")
    why = f": {rel.yanked_reason}" if rel.yanked_reason else ""
    return f"current {rel.version} is {word}{why}"


def _usable_below(
    catalog: Catalog, view: CatalogView, latest: str | None, current: str
) -> Release | None:
    """The release a withdrawn current moves back to: latest, when usable and below current."""
    rel = _find(catalog, latest, view)
    if (
        rel is None
        or rel.yanked
        or not rel.installable
        or rel.deprecated is not None
        or view.versioning.compare(rel.version, current) >= 0
    ):
        return None
    return rel


def _admit(
    candidates: Sequence[Release],
    current: str,
    versioning: Versioning,
    policy: ReleaseAgePolicy,
    now: datetime,
    unknown_age: str = _UNKNOWN_AGE,
) -> tuple[list[Release], list[HeldBack]]:
    """Split ``candidates`` into the releases ``policy`` admits at ``now`` and those it holds.

    Both keep the candidates' order; a held one carries its update type and ``judge``'s
    reason.

    Under a policy without waits (the default) a release is admitted unless it is published
    after ``now`` (``judge``: ``now >= released_at + 0``; an unknown age is admitted when the
    wait is zero): no candidate is judged one by one unless one is published after ``now``;
    then every one is, by ``_admit_each`` (the general path, which gives the same answer).
    """
    zero = _NO_WAIT
    if policy.major != zero or policy.minor != zero or policy.patch != zero:
        return _admit_each(candidates, current, versioning, policy, now, unknown_age)
    admitted: list[Release] = []
    for rel in candidates:
        when = rel.released_at
        if when is not None and now < when:
            # Published after ``now``: rare (a clock behind the registry's); judged as usual.
            return _admit_each(candidates, current, versioning, policy, now, unknown_age)
        admitted.append(rel)
    return admitted, []


def _admit_each(
    candidates: Sequence[Release],
    current: str,
    versioning: Versioning,
    policy: ReleaseAgePolicy,
    now: datetime,
    unknown_age: str = _UNKNOWN_AGE,
) -> tuple[list[Release], list[HeldBack]]:
    """``_admit``, judging every candidate (``release_age.judge``) with its update type."""
    admitted: list[Release] = []
    held: list[HeldBack] = []
    for rel in candidates:
        kind = versioning.update_type(current, rel.version)
        verdict = judge(rel.released_at, kind, policy, now, unknown_age)
        if verdict.admitted:
            admitted.append(rel)
        else:
            held.append(
                HeldBack(
                    version=rel.version,
                    released_at=rel.released_at,
                    eligible_at=verdict.eligible_at,
                    update_type=kind,
                    reason=verdict.reason or "held back by the release-age policy",
                )
            )
    return admitted, held


def _shown(finding: Finding, versioning: Versioning) -> Finding:
    """``finding`` with its versions as the scheme writes them (``shown``: mise drops ``v``).

    mise lists a ``github:`` tool's tags without their ``v`` (``v0.11.0`` is ``0.11.0``), so a
    row's current, latest, eligible and held-back versions read alike whatever the tags carry.
    """
    shown = _traits(versioning).shown
    if shown is None:
        return finding

    def one(version: str | None) -> str | None:
        return None if version is None else str(shown(version))

    return replace(
        finding,
        current=one(finding.current),
        latest=one(finding.latest),
        eligible=one(finding.eligible),
        held_back=tuple(replace(h, version=str(shown(h.version))) for h in finding.held_back),
    )


def _proposes(versioning: Versioning) -> bool:
    """Whether the scheme proposes what to write at the declared precision (``propose``)."""
    return _traits(versioning).propose is not None


def _proposed(
    versioning: Versioning,
    source: CurrentSource,
    constraint: str | None,
    eligible: Release | None,
    catalog: Catalog,
    view: CatalogView,
) -> str | None:
    """What to write for the eligible release, for schemes with ``propose`` (mise).

    A declared range or pin keeps its precision (``20`` → ``22``) only when what that proposal
    resolves to today (mise's newest match) is the eligible release itself; when a newer
    release under it is held back (``26`` resolves to the held ``26.7.1``), the eligible
    release is proposed in full (``26.6.0``), which no install can move past. An alias
    (``lts/iron``, a dist-tag current) is proposed as the alias of the same family that names
    the eligible release (``lts/jod``), ``None`` when none does (its release is held back). A
    lockfile's current has nothing declared to rewrite.
    """
    propose = _traits(versioning).propose
    if propose is None or eligible is None or not constraint or not constraint.strip():
        return None
    constraint = constraint.strip()
    if source == "dist-tag":
        return _alias_for(catalog, constraint, eligible.version, view)
    if source not in {"range", "pin"}:
        return None
    proposed = propose(constraint, eligible.version)
    if not isinstance(proposed, str):
        return None
    if versioning.exact_pin(proposed) is None:
        resolves = view.pick(proposed, any_usable=False, choose=_pick)
        if resolves is not None and versioning.compare(resolves, eligible.version) != 0:
            prefix = "v" if constraint.startswith("v") else ""
            return prefix + eligible.version.removeprefix("v")
    return proposed


def _alias_for(catalog: Catalog, alias: str, version: str, view: CatalogView) -> str | None:
    """The alias of ``alias``'s family (``lts/…``) naming ``version``; ``None`` if no other does."""
    family, slash, _ = alias.lower().rpartition("/")
    if not slash:
        return None  # ``lts`` and ``latest`` move by themselves
    wanted = view.find(version)
    for name, tagged in catalog.dist_tags:
        if name.startswith(f"{family}/") and view.find(tagged) == wanted:
            return None if name == alias.lower() else name
    return None


def _resolve_current(
    dep: Dependency, catalog: Catalog, view: CatalogView, locked: str | None
) -> tuple[str, CurrentSource] | str:
    """Return ``(current, source)``, or a reason string when current cannot be determined."""
    versioning = view.versioning
    if locked is not None:
        if not versioning.is_valid(locked):
            return f"locked version {locked!r} is not a valid {versioning.ID} version"
        return locked, "lockfile"
    constraint = (dep.constraint or "").strip()
    if not constraint and _is_tag_scheme(versioning):
        # ``image@sha256:…`` without a tag: nothing a fresh install resolves by version.
        return "no tag is declared (pinned by digest only): there is no version to compare"
    if constraint:
        pin = versioning.exact_pin(constraint)
        spelled = _traits(versioning).spelled_pin
        if pin is not None and spelled is not None and spelled(constraint) is not None:
            return _spelled_release(pin, catalog, view)
        if pin is not None:
            return _tag_spelling(pin, catalog, view), "pin"
        if not versioning.is_valid_constraint(constraint):
            return _tagged_current(constraint, catalog, versioning)
    # npm-pick-manifest installs dist-tags.latest when the range is ``*`` (compared as a string:
    # a prerelease latest too; npm-package-arg reads ``""`` as ``*``, ``x`` stays a range that
    # admits no prerelease) or admits it, and ``versions[latest]`` exists and is not deprecated
    # (``preferred_set``: listed, not deprecated; a ``--now`` in the past leaves out what its
    # ``before`` would). Its engines check needs the user's Node version, which a scan does not
    # know; staged and policy-restricted versions are not in public packuments.
    if (
        catalog.datasource == "npm"
        and catalog.latest in view.preferred_set
        and (constraint in {"", "*"} or view.admits(catalog.latest, constraint))
    ):
        return catalog.latest, "range"
    # Deprecated versions are avoided only while the range admits another one: npm-pick-manifest
    # sorts them last and installs one rather than failing (``left-pad ~1.2.0``); the row then
    # flags the deprecated current.
    pools = [False] if len(view.preferred) == len(view.usable) else [False, True]
    choose = _pick_prereleases if dep.prereleases else _pick
    for any_usable in pools:
        chosen = view.pick(constraint, any_usable=any_usable, choose=choose)
        if chosen is not None:
            return chosen, "range"
    what = f"the range {constraint!r}" if constraint else "an unconstrained install"
    unusable = _unusable_matches(catalog, view, constraint)
    if unusable:
        return f"no usable release satisfies {what}: {unusable}"
    return f"no published release satisfies {what}"


# At most this many versions are named per kind of unusable match (the newest ones).
_NAMED_MATCHES = 5


def _unusable_matches(catalog: Catalog, view: CatalogView, constraint: str) -> str | None:
    """Name the releases ``constraint`` admits that no install takes, and why, or ``None``.

    Yanked (retracted) ones, as cargo's error names them ("candidate versions found which
    didn't match … yanked"), PyPI releases without files (pip has nothing to install), and
    releases whose Requires-Python excludes the row's Python (``policy.requires_python``: such
    a release is not installable but keeps its ``requires_python``). Newest first.
    """
    versioning = view.versioning
    word = _WITHDRAWN_WORDS.get(catalog.datasource, "yanked")
    kinds: dict[str, list[Release]] = {word: [], "files": [], "python": []}
    for rel in catalog.releases:
        if not versioning.is_valid(rel.version) or (
            constraint and not view.admits(rel.version, constraint)
        ):
            continue
        if rel.yanked:
            kinds[word].append(rel)
        elif not rel.installable:
            kinds["files" if rel.requires_python is None else "python"].append(rel)
    parts: list[str] = []
    for kind, found in kinds.items():
        if not found:
            continue
        found.sort(key=lambda rel: versioning.sort_key(rel.version), reverse=True)
        named = ", ".join(rel.version for rel in found[:_NAMED_MATCHES])
        if len(found) > _NAMED_MATCHES:
            named += f" and {len(found) - _NAMED_MATCHES} more"
        one = len(found) == 1
        match = "matches but" if one else "match but"
        if kind == "files":
            why = "has no files" if one else "have no files"
            parts.append(f"{named} {match} {why} (nothing to install)")
        elif kind == "python":
            needs = "needs" if one else "need"
            parts.append(
                f"{named} {match} {needs} another Python (Requires-Python "
                f"{found[0].requires_python})"
            )
        else:
            parts.append(f"{named} {match} {'is' if one else 'are'} {kind}")
    return "; ".join(parts) or None


def _spelled_release(
    pin: str, catalog: Catalog, view: CatalogView
) -> tuple[str, CurrentSource] | str:
    """The release spelled ``pin`` for an arbitrary equality ``===pin``, or why none is known.

    PEP 440 compares ``===`` as a string without normalisation (case aside, as ``packaging``
    does): a release spelled so is current; one equal only once normalised (``2013b`` for
    ``===2013b0``) is not that string, and installers differ on it (pip compares the string
    with each candidate's normalised version, uv both normalised), so the row cannot tell.
    """
    wanted = pin.lower()
    for release in catalog.releases:
        if release.version.lower() == wanted:
            return release.version, "pin"
    reason = (
        f"cannot tell the installed version: ==={pin} is arbitrary equality, a string"
        f" comparison without normalisation (PEP 440), and no release is spelled {pin!r}"
    )
    index = view.find(pin) if view.versioning.is_valid(pin) else None
    if index is None:
        return reason
    return f"{reason} ({catalog.releases[index].version!r} is the same version normalised)"


def _tag_spelling(pin: str, catalog: Catalog, view: CatalogView) -> str:
    """``pin`` as a tag catalog spells it: npm ``github:o/r#v1.2.0`` is current ``v1.2.0``.

    An exact pin is cleaned (``v1.2.0`` → ``1.2.0``) to be compared; on a GitHub tag list
    current is the tag as the repository names it, as latest is. Elsewhere ``pin`` itself.
    """
    if catalog.datasource != "github-tags":
        return pin
    found = _find(catalog, pin, view)
    return pin if found is None else found.version


def _tagged_current(
    constraint: str, catalog: Catalog, versioning: Versioning
) -> tuple[str, CurrentSource] | str:
    """The release the alias ``constraint`` names (a dist-tag, ``lts``), or why there is none.

    A scheme with ``unknown_alias`` (mise) words the reason itself: a tool has aliases and
    versions, not npm's ranges and dist-tags.
    """
    tagged = catalog.dist_tag(constraint)
    if tagged is not None:
        return tagged, "dist-tag"
    unknown = _traits(versioning).unknown_alias
    if unknown is not None:
        return str(unknown(constraint, [name for name, _ in catalog.dist_tags]))
    if catalog.dist_tags:
        return f"{constraint!r} is neither a valid range nor a dist-tag of this package"
    what = "tag" if _is_tag_scheme(versioning) else "range"
    return f"{constraint!r} is not a valid {versioning.ID} {what}"


def _pick(versions: list[str], constraint: str, versioning: Versioning) -> str | None:
    """Return what a fresh install of ``constraint`` (``""``: any version) picks, or ``None``.

    Any version is the newest stable one. Only pip falls back to the newest prerelease when
    there is no final release (PEP 440, "Handling of pre-releases"); a semver ``*`` never
    admits a prerelease (node-semver, Cargo).
    """
    if constraint:
        return versioning.max_satisfying(versions, constraint)
    valid = [v for v in versions if versioning.is_valid(v)]
    stable = max(
        (v for v in valid if versioning.is_stable(v)), key=versioning.sort_key, default=None
    )
    if stable is None and versioning.ID == "pep440":
        return max(valid, key=versioning.sort_key, default=None)
    return stable


def _pick_prereleases(versions: list[str], constraint: str, versioning: Versioning) -> str | None:
    """``_pick`` for a row opted in to prereleases (``Dependency.prereleases``).

    pip ``--pre`` filters with ``prereleases=True`` and installs the best remaining candidate
    (pip's ``PackageFinder``), Poetry's ``allow-prereleases`` "prefers the latest version
    (pre-release or stable)", pipenv's ``allow_prereleases`` passes ``--pre`` and uv's
    ``prerelease = "allow"`` "allows all pre-release versions": the newest release the range
    admits, of any stability. A scheme without ``max_satisfying_prereleases`` picks as usual.
    """
    picker = _traits(versioning).any_stability
    if picker is None:
        return _pick(versions, constraint, versioning)
    chosen = picker(versions, constraint)
    return chosen if isinstance(chosen, str) else None


def _select_latest(
    catalog: Catalog, view: CatalogView, current: str | None
) -> tuple[str | None, str | None]:
    """Return ``(latest, note)``: the latest a user on ``current`` is measured against.

    The registry's latest, unless it is a prerelease while current is stable (or unknown,
    ``None``): then the newest stable release that is not yanked and is installable, as design
    §1 offers prereleases only to a prerelease current. The note names the tag that was set
    (``dist-tags.latest is 1.0.0-pre1, a prerelease; ...``) or labels a prerelease latest that
    stands because the package has no stable release; ``None`` when there is nothing to say.

    Image tags (``TAG_SCHEME``): registries name no latest, and one that is named but not
    compatible with current is no latest for it; latest is then the newest release compatible
    with current, of its stability (``None`` while current is unknown or not a version).
    """
    versioning = view.versioning
    tagged = catalog.latest if catalog.latest and versioning.is_valid(catalog.latest) else None
    if _is_tag_scheme(versioning) and (
        tagged is None or current is None or not versioning.is_compatible(current, tagged)
    ):
        if current is None:
            return None, None
        newest = view.newest_compatible(current)
        return newest, _elsewhere_note(view, current, newest)
    if tagged is None:
        # The registry names no latest (GitHub's release list is in creation order, not version
        # order): the newest stable release by the row's versioning, as Renovate's lookup does.
        return view.newest_stable, None
    if catalog.lists_every_version and view.find(tagged) is None:
        # A latest naming a version the registry does not list (a ``dist-tags.latest`` left
        # behind by an unpublish): npm-pick-manifest ignores it (``versions[defaultVer]`` is
        # missing) and installs the newest matching version; so is latest the newest stable.
        tag = _latest_tag(catalog, tagged)
        as_npm = ", as npm does" if catalog.datasource == "npm" else ""
        note = (
            f"{tag} names {tagged}, which is not in the {catalog.datasource} release list:"
            f" ignored{as_npm}; latest shown is the newest stable release"
        )
        return view.newest_stable, note
    flagged = _flagged(catalog, tagged, view)
    if not flagged and versioning.is_stable(tagged):
        return tagged, None
    stable = view.newest_stable
    if stable is None:
        return (
            tagged,
            f"latest {tagged} is a prerelease: {catalog.datasource} has no stable release",
        )
    if current is not None and (
        not versioning.is_stable(current) or _flagged(catalog, current, view)
    ):
        return tagged, None
    if flagged:
        # The registry's own flag (GitHub's prerelease, a Node release outside an LTS line):
        # its catalog says so for every row, nothing a row needs to repeat.
        return stable, None
    tag = _latest_tag(catalog, tagged)
    return stable, f"{tag} is {tagged}, a prerelease; latest shown is the newest stable release"


# What a catalog's release digests are, per datasource, in a note (GitHub tags: commits).
_DIGEST_WORDS = {"github-tags": "commit"}


def _floating_notes(
    catalog: Catalog, view: CatalogView, current: str, eligible: Release | None
) -> str | None:
    """What a floating tag row needs said: a precise proposal, a floating tag that lags.

    Schemes with ``finer_line`` (image and action tags) only. A floating current (``v1``)
    proposed a precise tag because the newer line has no floating tag (``policy.memo``,
    ``stand_ins``) says so: "no floating v2 tag; pinning v2.0.0". A floating tag, current or
    proposed, that points at an older release of its line than the newest says that too
    (``_lag_note``). ``None`` when there is nothing to say.
    """
    traits = _traits(view.versioning)
    if traits.finer_line is None or traits.line_tag is None:
        return None
    notes = [_lag_note(catalog, view, current)]
    if eligible is not None and eligible.version != current:
        line = traits.finer_line(current, eligible.version)
        if line is not None:
            tag = traits.line_tag(current, line)
            notes.append(f"no floating {tag} tag; pinning {eligible.version}")
        else:
            notes.append(_lag_note(catalog, view, eligible.version))
    return "; ".join(note for note in notes if note) or None


def _lag_note(catalog: Catalog, view: CatalogView, tag: str) -> str | None:
    """``tag v2 points at v2.0.0's commit, not the newest v2.1.0's …`` for a lagging floating tag.

    Where the catalog names each release's digest (GitHub tags and their commits, as listed):
    the floating ``tag``'s digest is an older precise release's of its line (``v2.0.0``) while
    the newest of the line (``v2.1.0``) has another one, so a user on ``tag`` does not get
    the newest (GitHub's "Using tags for release management" asks maintainers to move the
    major tag with each release; many forget). A floating tag at a digest no release of its
    line has says nothing certain: ``None``, as for a tag at the newest or no floating tag.
    """
    rel = _find(catalog, tag, view)
    if rel is None or rel.digest is None:
        return None
    members = view.line_members(tag)
    if not members:
        return None
    releases = catalog.releases
    newest = releases[members[-1]]
    if newest.digest is None or newest.digest.lower() == rel.digest.lower():
        return None
    pinned = rel.digest.lower()
    same = [releases[i] for i in members if (releases[i].digest or "").lower() == pinned]
    if not same:
        return None
    word = _DIGEST_WORDS.get(catalog.datasource, "digest")
    return (
        f"tag {tag} points at {same[-1].version}'s {word}, not the newest {newest.version}'s"
        f" (a user on {tag} does not get {newest.version})"
    )


def _below_latest_note(
    catalog: Catalog,
    view: CatalogView,
    current: str,
    current_rel: Release | None,
    latest: str | None,
) -> str | None:
    """Say when npm's ``dist-tags.latest`` is not the newest stable release the row could see.

    npm follows ``dist-tags.latest`` (npm-pick-manifest installs it for ``*`` and any range
    admitting it; ``npm outdated``'s Latest column is it), which its publishers may leave on an
    older line: a backport ``2.9.5`` published after ``3.1.0`` gets it by default
    (``npm publish --tag``). Latest stays the tag, as npm has it. When it is below a listed,
    stable current: no downgrade is proposed (npm-check-updates proposes none, Renovate lets
    a current above latest move on to newer releases only) and the row names the newest
    stable release. When current is at or below it but a newer stable release exists above
    it (a major published without moving ``latest``): that release is not proposed, as
    ``npm outdated``, npm-check-updates' default target and Renovate do not, and the row
    names it. ``None`` for a catalog whose latest is no ``latest`` dist-tag.
    """
    versioning = view.versioning
    if (
        latest is None
        or catalog.latest != latest
        or catalog.dist_tag("latest") != latest
        or current_rel is None
        or current_rel.yanked
        or not versioning.is_stable(current)
    ):
        return None
    newest = view.newest_stable
    if newest is None:
        return None
    tag = "the registry's latest dist-tag"
    if versioning.compare(latest, current) < 0:
        return (
            f"{tag} is {latest}, below the current {current} (no downgrade is proposed);"
            f" newest stable is {newest}"
        )
    if versioning.compare(newest, latest) > 0:
        named = [name for name, version in catalog.dist_tags if version == newest]
        under = f" (dist-tag {', '.join(named)})" if named else ""
        return (
            f"newest stable is {newest}{under}, above {tag} {latest}: not proposed (npm"
            " follows dist-tags.latest)"
        )
    return None


def _elsewhere_note(view: CatalogView, current: str, newest: str | None) -> str | None:
    """``7.4.1-debian-12-r3 is newer, in another variant …`` when only other variants move on.

    Image tags move only within their variant (``is_compatible``); when a newer release than
    the newest of current's variant is tagged only in another one (Bitnami moving from
    ``debian-11`` to ``debian-12``, ``alpine3.18`` tags no longer published), the row names it
    rather than looking up to date in silence. ``None`` when nothing newer is elsewhere.
    """
    other = view.newest_elsewhere(current)
    if other is None or view.versioning.update_type(newest or current, other) is None:
        return None
    return (
        f"{other} is newer, in another variant (tags move only within their own;"
        f" the newest in this one is {newest or current})"
    )


def _latest_tag(catalog: Catalog, tagged: str) -> str:
    """What named ``tagged`` latest, for a note: ``dist-tags.latest`` or ``<datasource> latest``."""
    if catalog.dist_tag("latest") == tagged:
        return "dist-tags.latest"
    return f"{catalog.datasource} latest"


def _flagged(catalog: Catalog, version: str, view: CatalogView) -> bool:
    """Whether the registry flags ``version`` unstable whatever its string (``prerelease``)."""
    rel = _find(catalog, version, view)
    return rel is not None and rel.prerelease


def _is_tag_scheme(versioning: Versioning) -> bool:
    """Whether versions are image tags (``versioning.docker.TAG_SCHEME``): no ranges, no latest."""
    return _traits(versioning).tag_scheme


class _Traits(NamedTuple):
    """The optional parts of a versioning scheme, read once per scheme (``_traits``)."""

    tag_scheme: bool
    shown: Any
    propose: Any
    pseudo_time: Any
    unknown_alias: Any
    spelled_pin: Any
    any_stability: Any
    finer_line: Any
    line_tag: Any


# Each row asks a scheme for its optional parts several times; ``getattr`` of an attribute a
# module lacks raises and catches ``AttributeError`` (about a microsecond each), so the answers
# are kept per scheme object (a handful per process).
_TRAITS: dict[int, tuple[Versioning, _Traits]] = {}


def _traits(versioning: Versioning) -> _Traits:
    """``versioning``'s optional parts (``TAG_SCHEME``, ``shown``, ``propose`` …), memoised."""
    held = _TRAITS.get(id(versioning))
    if held is not None and held[0] is versioning:
        return held[1]
    traits = _Traits(
        tag_scheme=getattr(versioning, "TAG_SCHEME", False) is True,
        shown=getattr(versioning, "shown", None),
        propose=getattr(versioning, "propose", None),
        pseudo_time=getattr(versioning, "pseudo_time", None),
        unknown_alias=getattr(versioning, "unknown_alias", None),
        spelled_pin=getattr(versioning, "spelled_pin", None),
        any_stability=getattr(versioning, "max_satisfying_prereleases", None),
        finer_line=getattr(versioning, "finer_line", None),
        line_tag=getattr(versioning, "line_tag", None),
    )
    if len(_TRAITS) < _MAX_TRAITS:
        # Holding the scheme keeps its id() from being reused by another object meanwhile.
        _TRAITS[id(versioning)] = (versioning, traits)
    return traits


_MAX_TRAITS = 64


def _behind(
    candidates: list[Release], current: str, target: str | None, versioning: Versioning
) -> int:
    """How many releases the row is behind: its candidates, on the track it moves along.

    A prerelease current (``19.0.0-rc.1``) moving to a stable release counts the stable ones
    and the prereleases before the first of them (``19.0.0-rc.2``), not the prereleases of later
    lines (``19.1.0-canary-…`` nightlies): as many as a stable current would be behind, plus its
    own line's. A prerelease target (a prerelease-only package) counts every candidate.
    """
    if target is None or versioning.is_stable(current) or not versioning.is_stable(target):
        return len(candidates)
    first = next((c.version for c in candidates if versioning.is_stable(c.version)), None)
    return sum(
        1
        for c in candidates
        if versioning.is_stable(c.version)
        or (first is not None and versioning.compare(c.version, first) < 0)
    )


def _candidates(
    catalog: Catalog, view: CatalogView, current: str, latest: str | None
) -> list[Release]:
    """Return the releases a user on ``current`` could move to, oldest first by version.

    Newer than current and, unless current is above latest already, no newer than latest.
    """
    versioning = view.versioning
    ceiling = latest if latest is not None and versioning.compare(current, latest) <= 0 else None
    return releases_at(catalog, view.candidates(current, ceiling))


def _find(catalog: Catalog, version: str | None, view: CatalogView) -> Release | None:
    """Return the release equal to ``version`` in the scheme (``1.0`` equals ``1.0.0``).

    An image tag is only itself: ``18.4`` equals ``18.04`` in order, but is another image.
    """
    if version is None:
        return None
    index = view.find(version)
    if index is None:
        return None
    found = catalog.releases[index]
    return None if _is_tag_scheme(view.versioning) and found.version != version else found


def _released_at(catalog: Catalog, version: str | None, view: CatalogView) -> datetime | None:
    rel = _find(catalog, version, view)
    return rel.released_at if rel else None


def _pseudo_time(versioning: Versioning, version: str) -> datetime | None:
    """The commit time a Go pseudo-version carries (``None`` for other schemes and versions).

    Go proxies never list pseudo-versions, so this time stands in for a publish time.
    """
    reader = _traits(versioning).pseudo_time
    when = reader(version) if reader is not None else None
    return when if isinstance(when, datetime) else None


def _libyears(
    current_at: datetime | None, newest: Release | None, latest: str | None
) -> float | None:
    """Return libyears between current and ``newest``, the newest candidate (0 when none).

    design §1 measures from current to latest; latest is the newest candidate whenever the row
    can move to it (candidates stop at latest). When it cannot, the libyears follow what the
    row proposes (or holds back), as its status and ``versions_behind`` do, never a release
    it refuses: a prerelease current above the stable latest is measured against the newest
    prerelease of its line (Renovate: an unstable current is compared with newer unstable
    releases), a deprecated or yanked latest that is not proposed counts nothing, and a row
    with no candidate is 0 behind. ``None`` when a date is unknown, or nothing is newer and
    the registry names no latest.
    """
    if newest is None:
        return None if latest is None else 0.0
    if current_at is None or newest.released_at is None:
        return None
    seconds = (newest.released_at - current_at).total_seconds()
    return round(max(seconds, 0.0) / 86400 / DAYS_PER_YEAR, 4)


def _notes(
    current_rel: Release | None,
    latest_rel: Release | None,
    latest: str | None,
    catalog: Catalog,
    latest_note: str | None = None,
    admitted_note: str | None = None,
    withdrawn_note: str | None = None,
    metadata_note: str | None = None,
) -> str | None:
    """Return facts worth a user's attention: yanked or deprecated current or latest, caveat.

    ``admitted_note`` says the eligible release was admitted although its age is unknown;
    ``withdrawn_note`` what a yanked current with nothing newer moves back to;
    ``metadata_note`` how the registry spells current (``_metadata_note``).
    """
    notes: list[str] = []
    if metadata_note is not None:
        notes.append(metadata_note)
    if latest_note is not None:
        notes.append(latest_note)
    if admitted_note is not None:
        notes.append(admitted_note)
    if current_rel is not None and current_rel.yanked:
        notes.append(_withdrawn(catalog, current_rel))
    if withdrawn_note is not None:
        notes.append(withdrawn_note)
    if current_rel is not None and current_rel.deprecated is not None:
        notes.append(f"current version is deprecated: {current_rel.deprecated}")
    if latest is None:
        notes.append(f"{catalog.datasource} names no latest stable release")
    elif latest_rel is not None and latest_rel is not current_rel:
        if latest_rel.deprecated is not None:
            notes.append(f"latest {latest} is deprecated ({latest_rel.deprecated}); not proposed")
        elif latest_rel.yanked:
            word = _WITHDRAWN_WORDS.get(catalog.datasource, "yanked")
            notes.append(f"latest {latest} is {word}; not proposed")
    if catalog.caveat:
        notes.append(catalog.caveat)
    if catalog.note:
        notes.append(catalog.note)
    return "; ".join(notes) or None
