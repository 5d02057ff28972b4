"""The versioned report (design.md §4): one pydantic tree, camelCase keys, published as JSON Schema.

``SCHEMA_VERSION`` changes when a key is removed or changes meaning; added keys keep it.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Mapping, Sequence
from datetime import UTC, datetime
from typing import Annotated, Any, Literal

from pydantic import BaseModel, ConfigDict, Field
from pydantic.alias_generators import to_camel
from pydantic.dataclasses import dataclass, rebuild_dataclass

from patchula import __version__
from patchula.errors import NOT_CACHED
from patchula.http.auth import redact_text, redact_url
from patchula.models import CurrentSource, Status, UpdateType
from patchula.scan import RepoResult, Row, ScanResult, constraints_only_files
from patchula.settings import Settings
from patchula.tools import MANAGERS as TOOL_MANAGERS
from patchula.tools import SETUP_ROWS

SCHEMA_VERSION = "1"
STATUSES: tuple[Status, ...] = (
    "up-to-date",
    "outdated",
    "held-back",
    "unknown",
    "skipped",
    "error",
)


# Schemas are built when first used, not at import: a run builds its report with
# ``model_construct`` from values it typed itself (``build_report``), so a plain table never
# builds the tree's validators or serializers, which cost more than the rest of an empty run's
# own code (issue 12: start-up). JSON, Markdown and ``patchula schema`` build them then.
_CONFIG = ConfigDict(alias_generator=to_camel, populate_by_name=True, defer_build=True)


class _Model(BaseModel):
    model_config = ConfigDict(**_CONFIG, frozen=True)


# The parts of the report repeated per dependency are pydantic dataclasses with slots rather
# than models: the same schema, validation and serialization, without a ``__dict__`` and a
# fields-set per instance (4.4 KB per row as models, measured with tracemalloc).


class Tool(_Model):
    """The program that wrote the report."""

    name: Literal["patchula"] = "patchula"
    version: str = __version__


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class HeldBackRelease:
    """A release newer than current that the release-age policy does not admit yet."""

    version: str
    released_at: Annotated[
        datetime | None, Field(description="Publish time; null when the registry gives none.")
    ]
    eligible_at: Annotated[
        datetime | None,
        Field(description="When the policy admits it; null when its age is unknown."),
    ]
    update_type: UpdateType | None
    reason: str


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class CatalogMeta:
    """Where the release list came from."""

    fetched_at: Annotated[
        datetime, Field(description="When the catalog was retrieved or revalidated.")
    ]
    reused: Annotated[
        bool,
        Field(
            description="True when the catalog came from the cache without any request: a "
            "catalog view, or HTTP entries still fresh (cache.viewHits counts the views)."
        ),
    ]
    source_url: str
    time_source: Annotated[
        str, Field(description="Provenance of publish times (e.g. 'npm packument time').")
    ]


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class LookupMeta:
    """Lookup metadata of one dependency."""

    catalog: CatalogMeta | None


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class DependencyMeta:
    """Metadata beside the verdict."""

    lookup: LookupMeta


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class DependencyReport:
    """One declared dependency and its verdict."""

    manager: str
    file: str
    line: int | None
    ecosystem: Annotated[
        str,
        Field(
            description="The datasource id, except 'github-actions' for GitHub Actions "
            "references (looked up on 'github-tags') and 'tool' for tool versions (mise, asdf "
            "and version files; their backend says where they were looked up)."
        ),
    ]
    datasource: str
    name: Annotated[
        str, Field(description="The name as declared (an npm alias key, a Python name as written).")
    ]
    package_name: Annotated[str, Field(description="The name looked up on the registry.")]
    dep_type: str
    declared: str | None
    markers: str | None
    current: str | None
    current_source: Annotated[
        CurrentSource | None, Field(description="lockfile, pin, range or dist-tag.")
    ]
    lock_file: str | None
    latest: str | None
    eligible: Annotated[str | None, Field(description="Newest release the policy admits now.")]
    update_type: UpdateType | None
    versions_behind: int | None
    current_released_at: datetime | None
    latest_released_at: datetime | None
    eligible_released_at: datetime | None
    libyears: float | None
    held_back: list[HeldBackRelease]
    major_available: Annotated[
        str | None,
        Field(
            description="A newer major version published under another name: '<name> <version>'."
        ),
    ] = None
    digest: Annotated[
        str | None,
        Field(
            description="The content digest the reference pins ('sha256:…'; a GitHub action's "
            "commit SHA); null when none."
        ),
    ] = None
    current_digest: Annotated[
        str | None,
        Field(
            description="What the current tag points at now, read from the registry; null when "
            "not read or unknown (never taken as unchanged)."
        ),
    ] = None
    new_digest: Annotated[
        str | None,
        Field(
            description="What the eligible tag points at, for a digest-pinned reference that "
            "is proposed a newer tag (tag and digest move together; for a GitHub action, the "
            "commit SHA to pin); null otherwise."
        ),
    ] = None
    date_sources: Annotated[
        dict[str, str] | None,
        Field(
            description="Where each date this row shows came from, by version (current, "
            "latest, eligible, held back), for datasources whose dates have several sources or "
            "a noteworthy one: 'release' (a GitHub release's published_at), "
            "'same-commit-release' (the published_at of the release at the tag's commit) or "
            "'commit' (the tag's commit date) for GitHub tags, 'last-push' (Docker Hub "
            "tag_last_pushed: the tag's last push, not its first release), 'index' (crates.io "
            "index pubtime) or "
            "'web-api' (crates.io web API created_at). Null when metadata.lookup.catalog."
            "timeSource says where every date comes from."
        ),
    ] = None
    backend: Annotated[
        str | None,
        Field(
            description="For a tool (ecosystem 'tool'): the mise backend its name resolved to "
            "through the mise registry mapping ('core:node', 'cargo:flip-link', "
            "'aqua:hashicorp/terraform'; the shipped mapping or [tool-registry] in config); "
            "null when it resolved to none (the row is skipped and says why) and for other rows."
        ),
    ] = None
    proposed: Annotated[
        str | None,
        Field(
            description="The value to write for the eligible release at the precision declared, "
            "for tool versions (mise '20' -> '22' when 22.12.0 is eligible; an exact pin gets "
            "the version); null otherwise."
        ),
    ] = None
    failed_lookup: Annotated[
        str | None,
        Field(
            description="The part of the lookup that failed although the row has a verdict on "
            "what was read (a Go module's check for a newer major path: the row may be behind "
            "more than it says; the publish times a release-age wait needed, 'publish times "
            "unavailable: …': a release held back, or admitted with unknown-age = 'admit', for "
            "its unknown age). Counted in summary.failedLookups (exit code 3), or in "
            "summary.notCached when --offline had no cached answer for it; null when the whole "
            "lookup succeeded."
        ),
    ] = None
    status: Status
    reason: str | None
    metadata: DependencyMeta


@dataclass(frozen=True, slots=True, kw_only=True, config=_CONFIG)
class Problem:
    """A manifest that could not be (fully) read."""

    file: str
    line: int | None
    message: str
    severity: Literal["warning", "error"]


class Extraction(_Model):
    """How the dependencies of a repository were obtained.

    ``source`` is ``fresh`` when this run extracted them, ``cached`` when they came from an
    extraction record (repository, commit, hash of the extraction config) an earlier run
    stored, ``none`` when the target could not be read at all; ``files`` are the manifest and
    lockfile paths read, ``constraints_files`` those of them that are pip constraints files by
    their name (``scan.constraints_only_files``): listed, but they give no rows.
    """

    source: Literal["fresh", "cached", "none"] = Field(
        "fresh",
        description="'fresh': extracted by this run; 'cached': from an extraction record an "
        "earlier run stored; 'none': the target could not be read at all (a repository not "
        "found or not visible, empty, without permission or rate limited, an owner that could "
        "not be listed, a malformed target, a path that does not exist): its one error "
        "problem, filed under the target, says why.",
    )
    files: list[str]
    constraints_files: list[str] = Field(
        default_factory=list,
        description="The files of 'files' that are pip constraints files by their name "
        "(constraints.txt, requirements/constraints-dev.in): pip installs nothing from a "
        "constraints file, so they give no dependency rows; their == pins are the current "
        "version of the requirements that read them with -c, their other specifiers narrow "
        "those requirements' range. A requirements file that another reads with -c is not "
        "one of them: it gives its own rows.",
    )
    ignored: list[str] = Field(
        default_factory=list,
        description="Manifests and lockfiles a manager would read that an ignore-paths glob "
        "kept out of the scan (by default Renovate's recommended ignorePaths: vendor, "
        "examples, test, tests, __tests__, __fixtures__), or a directory above them: not read, "
        "so their dependencies are not in this report. Set ignore-paths to read them.",
    )
    ignored_complete: bool = Field(
        default=True,
        description="False when discovery stopped looking inside ignored directories (after "
        "10,000 entries, a vendored tree): there may be more ignored files than 'ignored' "
        "lists.",
    )


class RepositoryReport(_Model):
    """One scanned repository."""

    target: str
    path: str
    commit: str | None
    extraction: Extraction
    problems: list[Problem]
    dependencies: list[DependencyReport]
    target_index: int | None = Field(
        default=None,
        description="The target's place (from 0) in the run's whole target list (see "
        "'targets'), before --shard took its share: patchula report merge orders the "
        "repositories of shards by it, as the unsharded run orders them.",
    )


class StatusCounts(_Model):
    """Dependencies per status."""

    up_to_date: int = Field(0, alias="up-to-date")
    outdated: int = 0
    held_back: int = Field(0, alias="held-back")
    unknown: int = 0
    skipped: int = 0
    error: int = 0


class Summary(_Model):
    """Aggregates over the whole run."""

    repositories: int
    dependencies: int
    by_status: StatusCounts
    by_ecosystem: dict[str, StatusCounts]
    libyears: float = Field(
        description="Sum of libyears where known, counting each package at each current version "
        "once per repository (the same pin in several files is one dependency of the project)."
    )
    libyears_unknown: int = Field(
        description="Dependencies behind latest whose libyears is unknown."
    )
    problems: int
    unreadable: int = Field(
        default=0,
        description="Repositories that could not be read at all (extraction.source 'none'); "
        "each has one error problem, counted in 'problems' too.",
    )
    failed_lookups: int = Field(
        description="Dependencies whose lookup failed: status 'error', or a verdict with a "
        "failedLookup (part of the lookup failed); not those counted in notCached."
    )
    not_cached: int = Field(
        default=0,
        description="--offline: dependencies whose catalog or digest the cache could not answer "
        "(status 'unknown', reason naming 'not in cache (offline)'), or one part of whose "
        "lookup it could not (failedLookup naming it); 0 online.",
    )


# What a host's connections spoke (ALPN: RFC 7301; plain http:// is always HTTP/1.1).
Protocol = Literal["h2", "http/1.1", "mixed"]


class RateLimitReport(_Model):
    """A rate-limit budget a host announced (GitHub's ``x-ratelimit-*`` headers)."""

    limit: int | None = Field(description="Requests allowed per window (x-ratelimit-limit).")
    remaining: int = Field(
        description="Requests left in the window when the run last heard (x-ratelimit-remaining)."
    )
    reset_at: datetime | None = Field(
        description="When the window ends (x-ratelimit-reset), UTC; null when not announced."
    )


class HostReport(_Model):
    """Request statistics for one registry host."""

    requests: int
    responses: dict[str, int]
    not_modified: int
    rate_limited: int
    retries: int
    cooldown_seconds: float = Field(
        description="Seconds of cool-down (429, rate-limit headers) its requests waited out, "
        "overlaps counted once; a longer one than patchula waits is cooldownRefusedSeconds."
    )
    cooldown_refused_seconds: float = Field(
        default=0.0,
        description="The longest cool-down it asked for that was over the 60 s patchula waits: "
        "not waited for; the lookups it would have held failed at once. 0 when none.",
    )
    errors: int
    max_concurrency: int
    unvalidated: int = Field(
        default=0,
        description="Documents it sent with neither validators (ETag, Last-Modified) nor "
        "freshness (Cache-Control max-age, Expires): the cache must fetch them again in full.",
    )
    unreachable: str | None = Field(
        default=None,
        description="Why the host was found unreachable this run (e.g. 'ConnectError'); its "
        "remaining lookups failed without a request. Null when it answered or was not tried.",
    )
    connections: int = Field(
        default=0,
        description="TCP connections opened to the host this run (not counting those through "
        "a proxy).",
    )
    tls_handshakes: int = Field(
        default=0, description="TLS handshakes completed with the host this run."
    )
    protocol: Protocol | None = Field(
        default=None,
        description="The protocol its connections spoke: 'h2' (HTTP/2, chosen by ALPN) or "
        "'http/1.1'; 'mixed' when some spoke each (see connectionsByProtocol); null when no "
        "connection was opened (every answer came from the cache, or through a proxy).",
    )
    connections_by_protocol: dict[str, int] = Field(
        default_factory=dict,
        description="Connections per protocol, e.g. {'h2': 1}.",
    )
    rate_limits: dict[str, RateLimitReport] = Field(
        default_factory=dict,
        description="The rate-limit budgets the host announced, per resource "
        "(x-ratelimit-resource: GitHub's 'core', 'graphql'; '' when unnamed); empty when none.",
    )


class CacheReport(_Model):
    """How the run used the SQLite cache."""

    path: str | None = Field(
        description="The database file; null for an in-memory cache, and in a merged report "
        "(patchula report merge) whose shards used different files."
    )
    hits: int = Field(description="Responses served fresh from the cache, without a request.")
    revalidated: int = Field(description="Stored bodies confirmed by a 304 (conditional request).")
    misses: int = Field(description="Documents fetched in full.")
    view_hits: int = Field(
        default=0,
        description="Lookups answered by a stored catalog view without any request "
        "(release-age reuse window, or --offline).",
    )
    bytes_stored: int = Field(
        description="Compressed bytes (HTTP bodies and catalog views) in the cache after the run."
    )
    corrupt_bodies: int = Field(
        description="Stored rows that could not be read (dropped and fetched again)."
    )
    write_failures: int = Field(
        default=0,
        description="Answers not stored because the database refused the write (e.g. busy).",
    )
    fallback: str | None = Field(
        default=None,
        description="Why the run used an in-memory cache instead of its file (path is then null).",
    )
    warnings: list[str]


class TargetList(_Model):
    """The whole target list of the run (or of the shards merged), the one --shard cuts."""

    count: int = Field(
        description="Targets in the list: after github:OWNER/* expansion, repeats counted once "
        "(one checkout spelled several ways, a repository named in another case), before "
        "--shard takes its share."
    )
    digest: str = Field(
        description="'sha256:' and the hex SHA-256 of the sorted list, one target a line ('\\n' "
        "after each, UTF-8), each target in its canonical form: a local path relative to the "
        "working directory when inside it (else absolute, symlinks resolved), "
        "'github:owner/name[@REF]' with owner and name in lower case. The shards of one matrix "
        "cut one list only when their counts and digests are equal."
    )
    unlisted: list[str] = Field(
        default_factory=list,
        description="Owners (github:OWNER/*) whose repositories could not be listed: each "
        "stands in the list as one target (its row says why), so the list lacks their "
        "repositories and a --shard share was cut from an incomplete list; re-run the shard. "
        "Merged: every shard's.",
    )
    mismatched: list[str] = Field(
        default_factory=list,
        description="In a merged report: the reports whose list differs from this one (the "
        "list of most shards that listed every owner), so targets may be missing; empty in "
        "a run's report. Either list non-empty makes the exit code 3.",
    )
    missing_shards: list[Annotated[str, Field(pattern=r"^[1-9][0-9]{0,5}/[1-9][0-9]{0,5}$")]] = (
        Field(
            default_factory=list,
            description="In a merged report: the --shard shares ('I/N') of the list that no "
            "merged report held (a matrix job that died before its report was uploaded), in "
            "order; their targets are not in the report. Merged again with the missing shares' "
            "reports, the report is whole. Empty in a run's report and when every share was "
            "merged; non-empty makes the exit code 3.",
        )
    )
    missing_shard_targets: int = Field(
        default=0,
        description="How many of the list's targets the missing shards hold (their sizes as "
        "--shard cuts the list of 'count' targets).",
    )


class ScanReport(_Model):
    """The whole report of one ``patchula run``, or of its shards merged (``report merge``)."""

    schema_version: str = SCHEMA_VERSION
    tool: Tool = Tool.model_construct()
    evaluated_at: datetime = Field(
        description="When the run evaluated the release-age policy (--now when given); in a "
        "merged report (patchula report merge), the earliest of its shards' times."
    )
    options: dict[str, Any]
    summary: Summary
    repositories: list[RepositoryReport]
    hosts: dict[str, HostReport]
    cache: CacheReport | None = Field(default=None, description="Null with --no-cache.")
    targets: TargetList | None = Field(
        default=None, description="The run's whole target list; null in older reports."
    )


def build_report(
    result: ScanResult,
    settings: Settings,
    hosts: dict[str, Any],
    cache: CacheReport | None = None,
    unreachable: Mapping[str, str] | None = None,
) -> ScanReport:
    """Turn a ``ScanResult`` into the versioned report model.

    ``hosts`` maps host name to the fetch facade's ``HostStats`` (any object with its fields);
    ``unreachable`` maps the hosts the facade found unreachable to why (``Fetcher.unreachable``).
    """
    down = unreachable or {}
    repos = [_repo(r) for r in result.repos]
    summary = summarize(repos, offline=settings.offline)
    options = settings.model_dump(
        mode="json", by_alias=True, exclude={"verbose", "quiet", "progress"}
    )
    # Userinfo never reaches Settings.registries (moved to credentials at parse time); a token
    # in a query string could: every URL the report shows is redacted.
    options["registries"] = {k: redact_text(v) for k, v in options["registries"].items()}
    return ScanReport.model_construct(
        evaluated_at=result.evaluated_at,
        options=options,
        summary=summary,
        repositories=repos,
        hosts={
            host: HostReport.model_construct(
                requests=s.requests,
                responses=dict(s.responses),
                not_modified=s.not_modified,
                rate_limited=s.rate_limited,
                retries=s.retries,
                cooldown_seconds=float(round(s.cooldown_seconds, 3)),
                cooldown_refused_seconds=float(
                    round(getattr(s, "cooldown_refused_seconds", 0.0), 3)
                ),
                errors=s.errors,
                max_concurrency=s.max_concurrency,
                unvalidated=s.unvalidated,
                unreachable=redact_text(down[host]) if host in down else None,
                connections=s.connections,
                tls_handshakes=s.tls_handshakes,
                protocol=spoken_protocol(s.protocols),
                connections_by_protocol=dict(sorted(s.protocols.items())),
                rate_limits=_rate_limits(getattr(s, "rate_limits", {})),
            )
            for host, s in sorted(hosts.items())
        },
        cache=cache,
        targets=_target_list(result),
    )


def _target_list(result: ScanResult) -> TargetList | None:
    whole = result.targets
    if whole is None:
        return None
    return TargetList.model_construct(
        count=whole.count, digest=whole.digest, unlisted=list(whole.unlisted), mismatched=[]
    )


def summarize(repos: Sequence[RepositoryReport], *, offline: bool) -> Summary:
    """The aggregates of ``repos``: what a run's report (``build_report``) says of its rows.

    One definition for a run and a merged report (``report.merge``), so shards merged add up
    to what one run over all their targets says. ``offline``: the run answered from the cache
    alone (only then are ``not in cache (offline)`` rows counted as ``notCached``).
    """
    all_rows = [d for r in repos for d in r.dependencies]
    by_ecosystem: dict[str, Counter[str]] = {}
    for dep in all_rows:
        by_ecosystem.setdefault(dep.ecosystem, Counter())[dep.status] += 1
    distinct = {
        (i, d.datasource, d.package_name, d.current): d.libyears
        for i, r in enumerate(repos)
        for d in r.dependencies
        if d.libyears is not None
    }
    libyears = sum(distinct.values())
    unknown_libyears = sum(
        1 for d in all_rows if d.libyears is None and d.status in {"outdated", "held-back"}
    )
    return Summary.model_construct(
        repositories=len(repos),
        dependencies=len(all_rows),
        by_status=_counts(Counter(d.status for d in all_rows)),
        by_ecosystem={k: _counts(v) for k, v in sorted(by_ecosystem.items())},
        libyears=float(round(libyears, 2)),
        libyears_unknown=unknown_libyears,
        problems=sum(len(r.problems) for r in repos),
        unreadable=sum(1 for r in repos if r.extraction.source == "none"),
        failed_lookups=sum(1 for d in all_rows if _failed(d, offline=offline)),
        not_cached=sum(1 for d in all_rows if offline and _not_cached(d)),
    )


def _not_cached(dep: DependencyReport) -> bool:
    """Whether the cache had no answer for ``dep`` or a part of its lookup (``NotCached``)."""
    if dep.failed_lookup is not None and NOT_CACHED in dep.failed_lookup:
        return True
    return dep.status == "unknown" and NOT_CACHED in (dep.reason or "")


def _failed(dep: DependencyReport, *, offline: bool) -> bool:
    """Whether ``dep`` counts as a failed lookup: an ``error`` row, or a ``failed_lookup``.

    ``--offline``, a part of the lookup the cache could not answer is ``notCached`` instead.
    """
    if dep.status == "error":
        return True
    return dep.failed_lookup is not None and not (offline and _not_cached(dep))


def _rate_limits(budgets: Mapping[str, Any]) -> dict[str, RateLimitReport]:
    """The report of the fetch facade's ``RateBudget`` per resource."""
    return {
        resource: RateLimitReport.model_construct(
            limit=b.limit,
            remaining=b.remaining,
            reset_at=datetime.fromtimestamp(b.reset, UTC) if b.reset is not None else None,
        )
        for resource, b in sorted(budgets.items())
    }


def spoken_protocol(protocols: Mapping[str, int]) -> Protocol | None:
    """The one protocol of ``protocols`` (connections per protocol), ``"mixed"``, or None."""
    spoken = [name for name, n in protocols.items() if n]
    if not spoken:
        return None
    if len(spoken) > 1:
        return "mixed"
    return "h2" if spoken[0] == "h2" else "http/1.1"


def _counts(counter: Counter[str]) -> StatusCounts:
    return StatusCounts.model_construct(
        up_to_date=counter.get("up-to-date", 0),
        outdated=counter.get("outdated", 0),
        held_back=counter.get("held-back", 0),
        unknown=counter.get("unknown", 0),
        skipped=counter.get("skipped", 0),
        error=counter.get("error", 0),
    )


def _repo(repo: RepoResult) -> RepositoryReport:
    rows = sorted(
        repo.rows, key=lambda r: (r.dependency.file, r.dependency.line or 0, r.dependency.name)
    )
    problems = sorted(repo.problems, key=lambda p: (p.file, p.line or 0, p.message))
    return RepositoryReport.model_construct(
        target=repo.target,
        path=repo.root,
        commit=repo.commit,
        extraction=Extraction.model_construct(
            source=repo.extraction,
            files=list(repo.files),
            constraints_files=constraints_only_files(repo.files),
            ignored=list(repo.ignored),
            ignored_complete=repo.ignored_complete,
        ),
        problems=[
            Problem(file=p.file, line=p.line, message=redact_text(p.message), severity=p.severity)
            for p in problems
        ],
        dependencies=[_row(r) for r in rows],
        target_index=repo.index,
    )


# A row's ecosystem is its datasource's id, except where one registry serves a manager whose
# dependencies users know by another name: GitHub tags and releases read for ``uses:``
# references are GitHub Actions (Renovate's ``github-actions`` manager); image rows of that
# manager stay ``docker``; package.json git dependencies read on GitHub tags stay ``npm``.
_ECOSYSTEMS = {
    ("github_actions", "github-tags"): "github-actions",
    ("github_actions", "github-releases"): "github-actions",
    ("github_actions", "github-runners"): "github-actions",
    # An npm git dependency on a GitHub tag (``github:o/r#v1.2.0``) is an npm dependency.
    ("package_json", "github-tags"): "npm",
}


def ecosystem(manager: str, datasource: str) -> str:
    """The ecosystem a row of ``manager`` looked up on ``datasource`` is counted under.

    Tool versions are ``tool`` whatever backend they resolved to (``cargo:x`` is read on
    crates.io, yet is a tool of the checkout, not a crate it depends on), and so are a
    workflow's ``actions/setup-*`` version inputs (``tools.SETUP_ROWS``).
    """
    if manager in TOOL_MANAGERS or (manager, datasource) in SETUP_ROWS:
        return "tool"
    return _ECOSYSTEMS.get((manager, datasource), datasource)


def _row(row: Row) -> DependencyReport:
    dep, f = row.dependency, row.finding
    catalog = (
        CatalogMeta(
            fetched_at=row.catalog.fetched_at,
            reused=row.catalog.reused,
            source_url=redact_url(row.catalog.source_url),
            time_source=row.catalog.time_source,
        )
        if row.catalog
        else None
    )
    return DependencyReport(
        manager=dep.manager,
        file=dep.file,
        line=dep.line,
        ecosystem=ecosystem(dep.manager, dep.datasource),
        datasource=dep.datasource,
        name=dep.name,
        package_name=dep.package_name,
        dep_type=dep.dep_type,
        declared=redact_text(dep.declared) if dep.declared else dep.declared,
        markers=dep.markers,
        current=f.current,
        current_source=f.current_source,
        lock_file=row.lock_file if f.current_source == "lockfile" else None,
        latest=f.latest,
        eligible=f.eligible,
        update_type=f.update_type,
        versions_behind=f.versions_behind,
        current_released_at=f.current_released_at,
        latest_released_at=f.latest_released_at,
        eligible_released_at=f.eligible_released_at,
        libyears=f.libyears,
        held_back=[
            HeldBackRelease(
                version=h.version,
                released_at=h.released_at,
                eligible_at=h.eligible_at,
                update_type=h.update_type,
                reason=h.reason,
            )
            for h in f.held_back
        ],
        major_available=f.major_available,
        digest=f.digest or dep.digest,
        current_digest=f.current_digest,
        new_digest=f.new_digest,
        date_sources=dict(f.date_sources) if f.date_sources else None,
        backend=dep.backend,
        proposed=f.proposed,
        failed_lookup=redact_text(f.failed_lookup) if f.failed_lookup else None,
        status=f.status,
        reason=redact_text(f.reason) if f.reason else f.reason,
        metadata=DependencyMeta(lookup=LookupMeta(catalog=catalog)),
    )


def prepare_rows() -> None:
    """Build now the validators of the classes repeated per row (``defer_build``).

    What the first row of a run's report builds otherwise; a report is the same either way.
    The CLI calls it while a scan waits for the network (issue 12: the tail of small scans).
    """
    for cls in (
        HeldBackRelease,
        CatalogMeta,
        LookupMeta,
        DependencyMeta,
        Problem,
        DependencyReport,
    ):
        # pydantic types the argument with a private protocol its dataclasses satisfy.
        rebuild_dataclass(cls)  # type: ignore[arg-type]


def prepare_serializers() -> None:
    """Build now the repository's and report's serializers, in ``render.json_chunks``'s order.

    What rendering a report as JSON builds otherwise (``defer_build``); the JSON is the same.
    """
    RepositoryReport.model_rebuild()
    ScanReport.model_rebuild()
