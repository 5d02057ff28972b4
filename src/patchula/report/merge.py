"""``patchula report merge``: shard reports (``run --shard I/N``) → one report of the same schema.

Pure: parsed reports in, one report and its warnings out; reading the files is the CLI's.
What each part of the merged report is:

- ``repositories``: every report's, ordered by their place in the whole target list
  (``targetIndex``) when every report carries one list (``targets``: equal counts and
  digests) and every repository its place, as the unsharded run orders them; else in the order
  the reports are given. A target present in more than one report is kept once, from the
  report evaluated later (a later file on a tie), with a warning (not for an owner that could
  not be listed: every shard where that failed keeps its row).
- ``targets``: the list of most reports (preferring those that listed every owner), with every
  report's unlisted owners and the reports whose list differs (``mismatched``). Either is a
  loud warning naming the reports and how many targets may be missing, and exit 3
  (``cli/exit_codes.py``): a shard that cut its share from another list may have left out
  targets the others left to it. Reports that each hold their whole list (unsharded runs, or
  merges of every share) miss nothing whatever their lists: the merged list is theirs
  together (one target per repository kept), with no warning and nothing ``mismatched``.
- ``targets.missingShards``: the shares of the split no report holds (a shard report holds its
  share, a merged report its split's shares but its own missing ones, any other report the
  whole list), and ``missingShardTargets`` the targets they hold as ``targets.select_shard``
  cuts ``count``: a loud warning and exit 3, kept when the merged report is merged again
  until the missing shares' reports are merged in with it.
- ``summary``: recomputed from the kept rows by ``model.summarize``, the code a run uses.
- ``hosts``: per host, counts add up (requests, responses per status, 304s, 429s, retries,
  cool-down seconds, errors, unvalidated documents, connections, TLS handshakes, connections
  per protocol); ``maxConcurrency`` is the highest peak of one shard (shards run apart: their
  peaks never met on one limit), ``cooldownRefusedSeconds`` the longest of one shard;
  ``protocol`` is derived again from the connections per
  protocol; ``unreachable`` the first shard's reason; a rate-limit budget (shared by every
  shard using one token) the newest reading: the latest ``resetAt`` window, its lowest
  ``remaining``.
- ``cache``: counts add up (hits, revalidations, misses, view hits, bytes stored in each
  shard's own cache, corrupt bodies, write failures); ``path`` is kept when every shard used
  the same file, else null; ``fallback`` the first shard's; warnings once each. Null when no
  shard used a cache.
- ``evaluatedAt``: the earliest shard's (the field's schema description says so).
- ``options``: the first report's, with ``shard`` null (the merged report covers every share).
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, cast

import msgspec
import orjson
from pydantic import ValidationError

from patchula.errors import ConfigError
from patchula.report.model import (
    SCHEMA_VERSION,
    CacheReport,
    HostReport,
    RateLimitReport,
    RepositoryReport,
    ScanReport,
    TargetList,
    spoken_protocol,
    summarize,
)
from patchula.settings import SHARD_MAX
from patchula.targets import list_digest

# Options expected to differ between the shards of one matrix (each job writes its own report
# file); any other difference is said, as the merged report keeps only the first's.
_PER_SHARD_OPTIONS = frozenset({"shard", "report", "dashboard", "format", "cache"})


class Merged(msgspec.Struct, frozen=True):
    """The merged report and what the merge found worth saying (one sentence each)."""

    report: ScanReport
    warnings: list[str] = msgspec.field(default_factory=list)


def parse_report(data: bytes, name: str) -> ScanReport:
    """Parse one report written by ``patchula run --format json`` / ``--report``.

    ``name`` (a file name) is what errors say. The ``schemaVersion`` is checked before the rest,
    so a report of another version is refused as such, naming both versions.

    A report of this version is validated from the bytes at once (no intermediate tree of
    Python objects: about 30% less memory on a large report); anything else is parsed again
    step by step, for an error that says what is wrong.

    Raises:
        ConfigError: not JSON, not a patchula report, or another ``schemaVersion``.
    """
    try:
        report = ScanReport.model_validate_json(data)
    except ValidationError:
        pass
    else:
        if report.schema_version == SCHEMA_VERSION:
            return report
    try:
        document = orjson.loads(data)
    except orjson.JSONDecodeError as exc:
        msg = f"{name}: not JSON ({exc})"
        raise ConfigError(msg) from None
    if not isinstance(document, dict) or "schemaVersion" not in document:
        msg = f"{name}: not a patchula report (no schemaVersion)"
        raise ConfigError(msg)
    version = document["schemaVersion"]
    if version != SCHEMA_VERSION:
        msg = (
            f"{name}: report schemaVersion {repr(version)[:40]}, this patchula reads "
            f"schemaVersion {SCHEMA_VERSION!r}"
        )
        raise ConfigError(msg)
    try:
        return ScanReport.model_validate(document)
    except ValidationError as exc:
        first = exc.errors(include_url=False, include_input=False)[0]
        where = ".".join(str(part) for part in first["loc"]) or "(top)"
        msg = (
            f"{name}: not a patchula report of schemaVersion {SCHEMA_VERSION}: "
            f"{where}: {first['msg']} ({exc.error_count()} errors)"
        )
        raise ConfigError(msg) from None


def merge(reports: Sequence[tuple[str, ScanReport]]) -> Merged:
    """Merge ``(name, report)`` pairs, in the order given, into one report (module docstring).

    Raises:
        ValueError: ``reports`` is empty.
    """
    if not reports:
        msg = "no report to merge"
        raise ValueError(msg)
    warnings = _shard_warnings(reports)
    unlisted = {owner for _, r in reports if r.targets is not None for owner in r.targets.unlisted}
    kept: dict[str, tuple[int, RepositoryReport]] = {}
    # (file first holding it, file repeating it) -> the targets repeated: one warning a pair.
    repeated: dict[tuple[int, int], list[str]] = {}
    for position, (_, report) in enumerate(reports):
        for repo in report.repositories:
            earlier = kept.get(repo.target)
            if earlier is None:
                kept[repo.target] = (position, repo)
                continue
            if repo.target not in unlisted:  # each shard whose listing failed keeps its row
                repeated.setdefault((earlier[0], position), []).append(repo.target)
            if report.evaluated_at >= reports[earlier[0]][1].evaluated_at:
                kept[repo.target] = (position, repo)
    for (before, after), again in repeated.items():
        warnings.append(_repeated(reports, before, after, again))
    repos = [repo for _, repo in kept.values()]
    targets, ordered = _target_list(reports, repos, warnings)
    targets = _missing_shards(reports, targets, warnings)
    if ordered:
        repos.sort(key=lambda repo: cast("int", repo.target_index))
    first = reports[0][1]
    options = {**first.options, "shard": None}
    offline = any(bool(r.options.get("offline")) for _, r in reports)
    merged = ScanReport.model_construct(
        schema_version=SCHEMA_VERSION,
        tool=first.tool,
        evaluated_at=min(r.evaluated_at for _, r in reports),
        options=options,
        summary=summarize(repos, offline=offline),
        repositories=repos,
        hosts=merge_hosts([r.hosts for _, r in reports]),
        cache=merge_caches([r.cache for _, r in reports]),
        targets=targets,
    )
    return Merged(merged, warnings)


def _target_list(
    reports: Sequence[tuple[str, ScanReport]],
    repos: Sequence[RepositoryReport],
    warnings: list[str],
) -> tuple[TargetList | None, bool]:
    """The merged ``targets``, and whether ``repos`` may be ordered by their ``targetIndex``.

    Says (in ``warnings``) the reports that cut another list than the others, the owners that
    could not be listed and where, and the reports that carry no list (older ones).
    """
    lists = [(_label(name, r), r.targets) for name, r in reports]
    bare = [name for name, t in lists if t is None]
    if bare:
        if len(bare) < len(lists):
            warnings.append(
                f"{_names(bare)} carry no target list (written by an older patchula): the merge "
                "cannot check that every shard cut its share from one list"
            )
        return None, False
    known = [(name, cast("TargetList", t)) for name, t in lists]
    groups: dict[tuple[int, str], list[tuple[str, TargetList]]] = {}
    for name, t in known:
        groups.setdefault((t.count, t.digest), []).append((name, t))
    # The list most shards cut, preferring shards that listed every owner, then the longer.
    (count, digest), chosen = max(
        groups.items(),
        key=lambda g: (sum(not t.unlisted for _, t in g[1]), len(g[1]), g[0][0]),
    )
    unlisted = list(dict.fromkeys(o for _, t in known for o in t.unlisted))
    mismatched = list(
        dict.fromkeys(
            [name for name, t in known if (t.count, t.digest) != (count, digest)]
            + [m for _, t in known for m in t.mismatched]
        )
    )
    if mismatched and all(_whole(r) for _, r in reports):
        # Every report holds its whole list (unsharded runs, or merges of every share): their
        # lists differ, but no share was cut from any of them, so nothing can be missing. The
        # merged list is theirs together: one target per repository kept (repeats once).
        targets = sorted(repo.target for repo in repos)
        merged = TargetList.model_construct(
            count=len(targets), digest=list_digest(targets), unlisted=unlisted, mismatched=[]
        )
        return merged, False
    if mismatched:
        # The reference list's own unlisted owners are targets of it; the others' are not.
        theirs = set(unlisted) - {o for _, t in chosen for o in t.unlisted}
        have = sum(1 for repo in repos if repo.target not in theirs)
        missing = max(0, count - have)
        cut = "; ".join(
            f"{_names([n for n, _ in group])}: {key[0]} targets ({key[1][:15]}…)"
            for key, group in groups.items()
            if key != (count, digest)
        )
        warnings.append(
            f"the merged report is incomplete: the shards did not cut one target list "
            f"({_names([n for n, _ in chosen])}: {count} targets ({digest[:15]}…); {cut}), so "
            f"up to {missing} of its {count} targets may be missing; re-run "
            f"{_names(mismatched)} (exit 3)"
        )
    for owner in unlisted:
        failed = [name for name, t in known if owner in t.unlisted]
        warnings.append(
            f"the merged report is incomplete: the repositories of {owner} could not be listed "
            f"in {_names(failed)}, whose share was cut from a list without them: they (and "
            "targets of that share) may be missing; re-run it once the owner can be listed "
            "(exit 3)"
        )
    merged = TargetList.model_construct(
        count=count, digest=digest, unlisted=unlisted, mismatched=mismatched
    )
    ordered = not mismatched and all(repo.target_index is not None for repo in repos)
    return merged, ordered


def _whole(report: ScanReport) -> bool:
    """Whether ``report`` holds every target of its list: no share, and none missing.

    An unsharded run, or a merge of every share of one list; not a shard, nor a merged report
    with missing shares or of shards that cut different lists.
    """
    targets = report.targets
    return (
        _shard(report.options) is None
        and targets is not None
        and not targets.missing_shards
        and not targets.mismatched
    )


def _label(name: str, report: ScanReport) -> str:
    """``shard-3.json (3/4)``: a report's file name, with its share when it is one."""
    shard = _shard(report.options)
    return f"{name} ({shard[0]}/{shard[1]})" if shard is not None else name


def _names(names: Sequence[str]) -> str:
    """``a.json``, ``a.json and b.json``, ``a.json, b.json and 3 more`` (at most five named)."""
    shown = list(names[:5])
    if len(names) > 5:  # noqa: PLR2004 - shown
        return f"{', '.join(shown)} and {len(names) - 5} more"
    if len(shown) == 1:
        return shown[0]
    return f"{', '.join(shown[:-1])} and {shown[-1]}"


def _repeated(
    reports: Sequence[tuple[str, ScanReport]], before: int, after: int, targets: list[str]
) -> str:
    """The warning for ``targets`` of report ``before`` that report ``after`` holds again."""
    (first_name, first), (name, report) = reports[before], reports[after]
    later = name if report.evaluated_at >= first.evaluated_at else first_name
    why = (
        "the later file, same evaluatedAt"
        if report.evaluated_at == first.evaluated_at
        else "evaluated later"
    )
    shown = ", ".join(targets[:5]) + (f" and {len(targets) - 5} more" if len(targets) > 5 else "")  # noqa: PLR2004 - shown
    where = f"in {name}, given twice" if name == first_name else f"in {first_name} and {name}"
    noun = "repository" if len(targets) == 1 else f"{len(targets)} repositories"
    verb = "is" if len(targets) == 1 else "are"
    return f"{noun} {shown} {verb} {where}: kept from {later} ({why})"


def _shard_warnings(reports: Sequence[tuple[str, ScanReport]]) -> list[str]:
    """Say the patchula versions and options the shards do not agree on."""
    warnings: list[str] = []
    first_name, first = reports[0]
    for name, report in reports[1:]:
        if report.tool.version != first.tool.version:
            warnings.append(
                f"{name} was written by patchula {report.tool.version}, {first_name} by "
                f"{first.tool.version}"
            )
        differ = sorted(
            key
            for key in first.options.keys() | report.options.keys()
            if key not in _PER_SHARD_OPTIONS and first.options.get(key) != report.options.get(key)
        )
        if differ:
            warnings.append(
                f"{name} was run with other options than {first_name} "
                f"({', '.join(differ)}): the merged report shows {first_name}'s"
            )
    return warnings


def _missing_shards(
    reports: Sequence[tuple[str, ScanReport]],
    targets: TargetList | None,
    warnings: list[str],
) -> TargetList | None:
    """``targets`` with the shares of the split that no report holds (``missingShards``).

    A shard report holds its share; a merged report the shares of its split not in its own
    ``missingShards`` (so merging it with the missing shards' reports makes it whole); any
    other report (unsharded, or a merge of every share) holds the whole list. Shares of one
    split only: reports of several splits are said, their coverage not computed. How many
    targets the missing shares hold follows ``targets.select_shard``'s cut of ``count``. The
    missing shares are a warning (exit 3 when recorded; reports without a target list, from
    an older patchula, cannot record them).
    """
    splits: set[int] = set()
    held: set[int] = set()
    whole = False
    for _, report in reports:
        shard = _shard(report.options)
        shares = _held_shares(report.targets) if shard is None else (shard[1], {shard[0]})
        if shares is None:
            whole = True  # an unsharded report, or a merge of every share
        else:
            splits.add(shares[0])
            held |= shares[1]
    if len(splits) > 1:
        every = [f"{i}/{n}" for i, n in sorted(_shares(reports))]
        more = f" and {len(every) - 10} more" if len(every) > 10 else ""  # noqa: PLR2004 - shown
        warnings.append(
            f"the reports are shares of different splits: {', '.join(every[:10])}{more}"
        )
    if whole or len(splits) != 1:
        return targets
    [split] = splits
    if split > SHARD_MAX:  # a hand-edited report: never a list of a billion shares
        return targets
    missing = [i for i in range(1, split + 1) if i not in held]
    if not missing:
        return targets
    names = [f"{i}/{split}" for i in missing]
    shown = _names(names)
    if targets is None:
        warnings.append(
            f"shard {shown} not given: its targets are not in the report"
            if len(missing) == 1
            else f"shards {shown} not given: their targets are not in the report"
        )
        return None
    count = targets.count
    lost = sum(count * i // split - count * (i - 1) // split for i in missing)
    warnings.append(
        f"the merged report is incomplete: {'shard' if len(missing) == 1 else 'shards'} "
        f"{shown} not given: {lost} of the {count} targets {'is' if lost == 1 else 'are'} "
        "not in the report; merge "
        f"{'its report' if len(missing) == 1 else 'their reports'} too, or re-run "
        f"{'it' if len(missing) == 1 else 'them'} (exit 3)"
    )
    return targets.model_copy(update={"missing_shards": names, "missing_shard_targets": lost})


def _held_shares(targets: TargetList | None) -> tuple[int, set[int]] | None:
    """The split and the shares a merged report holds; None when it holds the whole list."""
    if targets is None or not targets.missing_shards:
        return None
    parts = {tuple(int(x) for x in share.split("/")) for share in targets.missing_shards}
    splits = {n for _, n in parts}
    if len(splits) != 1 or max(splits) > SHARD_MAX:  # hand-edited: as the whole list
        return None
    [split] = splits
    return split, set(range(1, split + 1)) - {i for i, _ in parts}


def _shares(reports: Sequence[tuple[str, ScanReport]]) -> set[tuple[int, int]]:
    """Every ``(I, N)`` the reports hold (a merged report: its split's shares not missing)."""
    shares: set[tuple[int, int]] = set()
    for _, report in reports:
        shard = _shard(report.options)
        held = _held_shares(report.targets) if shard is None else None
        if shard is not None:
            shares.add(shard)
        elif held is not None:
            shares |= {(i, held[0]) for i in held[1]}
    return shares


def _shard(options: Mapping[str, Any]) -> tuple[int, int] | None:
    """The ``(I, N)`` a report's options hold, or None (not a shard, or not readable)."""
    value = options.get("shard")
    if (
        isinstance(value, list | tuple)
        and len(value) == 2  # noqa: PLR2004 - I and N
        and all(isinstance(part, int) for part in value)
    ):
        return int(value[0]), int(value[1])
    return None


def merge_hosts(reports: Iterable[Mapping[str, HostReport]]) -> dict[str, HostReport]:
    """Per-host statistics of several runs as one (module docstring), sorted by host."""
    grouped: dict[str, list[HostReport]] = {}
    for hosts in reports:
        for host, stats in hosts.items():
            grouped.setdefault(host, []).append(stats)
    return {host: _merge_host(grouped[host]) for host in sorted(grouped)}


def _merge_host(parts: list[HostReport]) -> HostReport:
    responses: Counter[str] = Counter()
    by_protocol: Counter[str] = Counter()
    for part in parts:
        responses.update(part.responses)
        by_protocol.update(part.connections_by_protocol)
    return HostReport.model_construct(
        requests=sum(p.requests for p in parts),
        responses=dict(sorted(responses.items())),
        not_modified=sum(p.not_modified for p in parts),
        rate_limited=sum(p.rate_limited for p in parts),
        retries=sum(p.retries for p in parts),
        cooldown_seconds=float(round(sum(p.cooldown_seconds for p in parts), 3)),
        cooldown_refused_seconds=max(p.cooldown_refused_seconds for p in parts),
        errors=sum(p.errors for p in parts),
        max_concurrency=max(p.max_concurrency for p in parts),
        unvalidated=sum(p.unvalidated for p in parts),
        unreachable=next((p.unreachable for p in parts if p.unreachable is not None), None),
        connections=sum(p.connections for p in parts),
        tls_handshakes=sum(p.tls_handshakes for p in parts),
        protocol=spoken_protocol(by_protocol),
        connections_by_protocol=dict(sorted(by_protocol.items())),
        rate_limits=_merge_rate_limits(p.rate_limits for p in parts),
    )


def _merge_rate_limits(
    parts: Iterable[Mapping[str, RateLimitReport]],
) -> dict[str, RateLimitReport]:
    """The newest reading of each budget: the latest window, and the least left in it."""
    newest: dict[str, RateLimitReport] = {}
    for budgets in parts:
        for resource, budget in budgets.items():
            known = newest.get(resource)
            if known is None or _reading(budget) > _reading(known):
                newest[resource] = budget
    return dict(sorted(newest.items()))


def _reading(budget: RateLimitReport) -> tuple[float, int]:
    """Orders readings of one budget: a later window first, then fewer requests left."""
    reset = budget.reset_at.timestamp() if budget.reset_at is not None else float("-inf")
    return reset, -budget.remaining


def merge_caches(parts: Iterable[CacheReport | None]) -> CacheReport | None:
    """The cache statistics of several runs as one (module docstring); None if none had one."""
    used = [p for p in parts if p is not None]
    if not used:
        return None
    paths = {p.path for p in used}
    return CacheReport.model_construct(
        path=used[0].path if len(paths) == 1 else None,
        hits=sum(p.hits for p in used),
        revalidated=sum(p.revalidated for p in used),
        misses=sum(p.misses for p in used),
        view_hits=sum(p.view_hits for p in used),
        bytes_stored=sum(p.bytes_stored for p in used),
        corrupt_bodies=sum(p.corrupt_bodies for p in used),
        write_failures=sum(p.write_failures for p in used),
        fallback=next((p.fallback for p in used if p.fallback is not None), None),
        warnings=list(dict.fromkeys(w for p in used for w in p.warnings)),
    )
