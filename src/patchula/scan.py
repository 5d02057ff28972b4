"""Orchestrates a run: targets → discover → extract → look up (anyio) → evaluate → ``ScanResult``.

Repositories are extracted ``concurrency`` at a time; registry lookups are started as soon as a
repository's dependencies are known and run in one task group for the whole run, bounded only
by the per-host limits of the fetch facade, so a repository slot is never held while waiting on
the network. Each (datasource, package) is looked up once per run however many repositories
declare it (single-flight) on the same registry with the same credentials: each checkout's
lookups use its own registries and credentials (its ``.npmrc`` over the user's, see
``credentials``). The lookup machinery (single-flight, batched answers from fresh cache entries,
lazy publish times, progress) is ``patchula.lookup``. Every failure becomes data: a manifest
problem or an ``error`` row.
"""

from __future__ import annotations

import codecs
import contextlib
import errno
import fnmatch
import functools
import gc
import json
import os
import posixpath
import re
import time
from collections import Counter
from collections.abc import Awaitable, Callable, Mapping, Sequence
from datetime import datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, Protocol, cast

import anyio
import anyio.abc
import anyio.lowlevel
import msgspec
from msgspec.structs import replace

from patchula.credentials import GITHUB_DATASOURCES, CheckoutAccess, RegistryAccess
from patchula.datasource import DATASOURCES
from patchula.discovery import (
    MAX_SYMLINK_HOPS,
    REMOTE_SYMLINK,
    UNREAD_LOCKFILES,
    UNREAD_REASONS,
    Discovery,
    Found,
    TreePath,
    Walk,
    directory_skipper,
    discover,
    discover_paths,
    read_regular,
    resolve_tree_path,
    tree_symlink_refusal,
)
from patchula.errors import (
    LookupFailed,
    ManifestError,
    NotCached,
    NotUtf8Error,
    PackageNotFound,
    RepositoryUnreadable,
)
from patchula.http.auth import redact_text
from patchula.http.flight import run_memo
from patchula.lookup import LookupKey, Lookups, Progress, ViewStore
from patchula.manager import MANAGERS
from patchula.manager.paths import RULES, is_constraints_name
from patchula.models import (
    IMAGE_DIGESTS,
    Catalog,
    CurrentSource,
    Dependency,
    DigestTerms,
    ExtractResult,
    Finding,
    LockedPackage,
    Lockfile,
    ManifestProblem,
    Status,
)
from patchula.names import has_lone_surrogate, length_problem, name_problem, shown_name
from patchula.policy import ReleaseAgePolicy
from patchula.policy.digest import pinned_digest, track_tag, unknown_pin
from patchula.policy.evaluate import excluded_note, without_excluded
from patchula.records import (
    RECORD_FORMAT,
    Extracted,
    Record,
    RecordKey,
    RecordStore,
    config_hash,
    decode,
    encode,
    is_commit,
    worktree_clean,
)
from patchula.settings import Settings
from patchula.targets import list_digest, select_shard
from patchula.tools import (
    ToolMapping,
    as_declared,
    filter_tags,
    is_tool,
    remap,
    strip_prefixes,
    with_overrides,
)
from patchula.versioning import VERSIONINGS
from patchula.versioning.base import MAX_NUMBER_DIGITS, has_long_number

if TYPE_CHECKING:
    from patchula.datasource.base import Fetch, MethodFetch
    from patchula.repos.github import BlobMemo, RepoTarget
    from patchula.repos.github import TreeEntry as RepoTreeEntry

# The rows an extraction gives (``records.Extracted``; the name the scan's code uses).
_Extracted = Extracted


class Row(msgspec.Struct, frozen=True):
    """One dependency with its verdict; ``lock_file`` names the lockfile that gave current."""

    dependency: Dependency
    finding: Finding
    lock_file: str | None = None
    catalog: CatalogInfo | None = None


class CatalogInfo(msgspec.Struct, frozen=True):
    """Where a catalog came from: when it was fetched, whether it was reused, time provenance."""

    fetched_at: datetime
    reused: bool
    source_url: str
    time_source: str


class RepoResult(msgspec.Struct):
    """Everything found in one repository."""

    target: str
    root: str
    commit: str | None
    files: list[str] = msgspec.field(default_factory=list)
    rows: list[Row] = msgspec.field(default_factory=list)
    problems: list[ManifestProblem] = msgspec.field(default_factory=list)
    # Files a manager reads that ignore-paths kept out (``Discovery.ignored``), in the target's
    # scope; ``ignored_complete`` is False when the walk stopped counting them.
    ignored: list[str] = msgspec.field(default_factory=list)
    ignored_complete: bool = True
    # Whether this run extracted the dependencies, or read an extraction record (repository,
    # commit and config hash) an earlier run stored; ``none``: the target could not be read at
    # all (``unread``: not found, empty, no permission, rate limited, not listed, malformed).
    extraction: Literal["fresh", "cached", "none"] = "fresh"
    # The target's place in the run's whole target list (``TargetList``), before ``--shard``.
    index: int | None = None

    def unread(self, reason: str) -> None:
        """Mark the target as not read at all, ``reason`` its one error problem."""
        self.problems.append(ManifestProblem(self.target, None, reason))
        self.extraction = "none"


class TargetList(msgspec.Struct, frozen=True):
    """The whole target list of a run, the one ``--shard`` cuts its share from.

    After ``github:OWNER/*`` expansion, repeats out (``_once``): ``count`` targets, whose
    canonical forms sorted have the ``digest`` (``targets.list_digest``); ``unlisted`` are the
    owners whose repositories could not be listed (each stands in the list as one target).
    """

    count: int
    digest: str
    unlisted: tuple[str, ...] = ()


class ScanResult(msgspec.Struct):
    """The outcome of a run, before rendering; ``evaluated_at`` is the one ``now`` of the run.

    ``view_hits`` counts the lookups a stored catalog view answered without any request.
    """

    evaluated_at: datetime
    repos: list[RepoResult]
    host_stats: dict[str, dict[str, object]]
    view_hits: int = 0
    targets: TargetList | None = None


class Clock(Protocol):
    """The clock a scan reads ``evaluated_at`` from (once per run)."""

    def now(self) -> datetime:
        """Return the current aware UTC time."""
        ...


def _go_skip(module: str, settings: Settings) -> str | None:
    """Why a Go module is not looked up on a proxy (GOPROXY off/direct, GONOPROXY), or ``None``.

    Patterns match a path prefix element by element, like the go command's
    ``module.MatchPrefixPatterns`` (``*.corp.example.com``, ``github.com/acme``).
    """
    if settings.go_proxy_off is not None:
        return settings.go_proxy_off
    parts = module.split("/")
    for pattern in settings.go_noproxy:
        width = len(pattern.rstrip("/").split("/"))
        prefix = "/".join(parts[:width])
        if len(parts) >= width and fnmatch.fnmatchcase(prefix, pattern.rstrip("/")):
            return f"private module (matches GONOPROXY/GOPRIVATE pattern {pattern!r})"
    return None


def _sole_index(dep: Dependency, index: str, registries: Mapping[str, str]) -> Dependency:
    """A row whose package comes only from a package index the manifest names (``sole_index``).

    Looked up on the run's PyPI registry only when one is configured (``--registry pypi=URL``,
    ``PIP_INDEX_URL``, pip.conf: the user may have pointed it at that index), with a note;
    public PyPI does not serve such an index's packages, so otherwise the row is skipped.
    """
    if dep.datasource in registries:
        note = f"only on {index}: looked up on the configured PyPI registry"
        return replace(dep, note="; ".join(part for part in (dep.note, note) if part))
    reason = (
        f"only on {index} (explicit): cannot be checked against the configured PyPI "
        f"(public PyPI); --registry {dep.datasource}=URL points the run at that index"
    )
    return replace(dep, skip_reason=reason)


def _routed(
    dep: Dependency, settings: Settings, view: CheckoutAccess
) -> tuple[Dependency, CheckoutAccess, str | None]:
    """``dep`` with the skip reasons and notes of where it is looked up, its view, an error.

    GONOPROXY/GOPRIVATE modules, a Python row's sole index (``_sole_index``), a crate's
    registry from the checkout's cargo config (``_crate_view``).
    """
    if dep.skip_reason is None and dep.datasource == "goproxy":
        reason = _go_skip(dep.package_name, settings)
        if reason is not None:
            dep = replace(dep, skip_reason=reason)
    if dep.skip_reason is None and dep.datasource == "crates":
        view, dep, error = _crate_view(dep, view)
        return dep, view, error
    if dep.skip_reason is None and dep.sole_index is not None:
        dep = _sole_index(dep, dep.sole_index, view.registries)
    return dep, view, None


def _crate_view(
    dep: Dependency, view: CheckoutAccess
) -> tuple[CheckoutAccess, Dependency, str | None]:
    """The view a crate's lookup uses, the row as the checkout's cargo config makes it, an error.

    ``.cargo/config.toml`` (``CheckoutAccess.crate_view``) decides the registry of a row naming
    one (``registry = "NAME"``, kept as ``sole_index``) and a replacement of crates.io: the
    row is skipped with the reason when that registry cannot be read (a git index, a
    local-registry or directory source, an undefined name), gets a note when crates.io is
    replaced, and the error names a replacement cycle or a damaged config file.
    """
    derived, source = view.crate_view(dep.file, dep.sole_index)
    if source.skip is not None:
        return view, replace(dep, skip_reason=source.skip), None
    if source.note is not None:
        dep = replace(dep, note="; ".join(part for part in (dep.note, source.note) if part))
    return derived, dep, source.error


def _pace_crates_api(throttle: Callable[[str, float], None], settings: Settings) -> None:
    """Apply crates.io's crawler policy: at most one web API request a second.

    It covers the API's URLs (``BASE/api/…``), not the host: a mirror serving the sparse index
    on the same host must not have every index lookup paced. Called before the run's first
    crates lookup (``Lookups.prepare``), so a run without Rust dependencies never imports the
    crates datasource.
    """
    from patchula.datasource import crates  # noqa: PLC0415 - lazy: start-up

    api = settings.registries.get("crates-api", crates.DEFAULT_API_URL)
    throttle(f"{api.rstrip('/')}/api/", crates.API_MIN_INTERVAL_SECONDS)


def _keep_go_fresh(keep_fresh: Callable[[Sequence[str], float], None], settings: Settings) -> None:
    """Keep the Go proxy's ``@v/list`` and ``@latest`` fresh ``go_freshness_secs`` at least.

    Called before the run's first Go lookup (``Lookups.prepare``): the representations are the
    goproxy datasource's, imported only then.
    """
    representations = DATASOURCES["goproxy"].freshness_floor_representations
    keep_fresh(representations, float(settings.go_freshness_secs))


def _keep_tag_lists_fresh(keep_fresh: Callable[..., None], settings: Settings) -> None:
    """Keep validator-free OCI tag lists fresh ``registry_freshness_secs`` at least.

    Seed 003, ``--registry-freshness-secs``: the floor covers only ``tags/list`` pages stored
    with neither ``ETag`` nor ``Last-Modified`` (pages that can be revalidated keep their
    upstream policy); zero leaves upstream freshness. Called before the run's first image
    lookup (``Lookups.prepare``), so the docker datasource is imported only then.
    """
    representations = DATASOURCES["docker"].freshness_floor_representations
    keep_fresh(representations, float(settings.registry_freshness_secs), unvalidated_only=True)


def freeze_startup_objects() -> None:
    """Keep the objects alive at start-up (imported modules, settings) out of the cyclic GC.

    For a short-lived process that is about to scan: a scan allocates hundreds of thousands of
    small objects, and every full collection would otherwise re-examine the ~45,000 objects of
    the imported libraries too (measured: ~30 ms each, some warm runs took 40% longer). After
    ``gc.freeze()`` (Python's own recommendation for this situation, ``gc`` module docs) a
    collection examines only what the scan made. The CLI calls it once before scanning; a
    library user may, but ``scan`` never does it behind their back. Only the first call of a
    process freezes anything (repeated scans in one process must not pin their garbage).
    No collection comes first: at start-up it found nothing to free (0 of ~43,000 objects)
    and cost a full pass over them on every run.

    It also raises the collector's first threshold to ``GC_YOUNG_THRESHOLD`` allocations
    (CPython's default is 700): a cold scan of 5,000 lookups made about 660 collections, 0.6-1 s
    of its 9-11 s of CPU, promoting the rows and catalogs it keeps into older generations that
    full collections then re-examine; with the higher threshold it makes about 8 (0.1 s).
    Only cyclic garbage waits longer (everything else is freed by reference counting), and
    at most ``GC_YOUNG_THRESHOLD`` new container objects' worth.
    """
    young, middle, oldest = gc.get_threshold()
    gc.set_threshold(max(young, GC_YOUNG_THRESHOLD), middle, oldest)
    if gc.get_freeze_count():
        return
    gc.freeze()


# Allocations (of container objects, net of frees) between young-generation collections
# during a scan: see ``freeze_startup_objects``.
GC_YOUNG_THRESHOLD = 50_000


async def scan(
    targets: Sequence[str],
    settings: Settings,
    fetch: Fetch,
    clock: Clock,
    on_progress: Progress | None = None,
    access: RegistryAccess | None = None,
    on_warning: Callable[[str], None] | None = None,
    *,
    views: ViewStore | None = None,
    on_finish: Callable[[LookupKey, Catalog | LookupFailed], None] | None = None,
    records: RecordStore | None = None,
) -> ScanResult:
    """Scan every target and return the result.

    ``targets`` (repeats are scanned once) are local paths — a checkout directory, a
    workspace member's directory (scanned from its workspace root, only the member's files
    reported), or one manifest file (see ``_resolve_target``) — or remote GitHub repositories,
    ``github:OWNER/REPO[@REF]`` and ``github:OWNER/*`` (expanded before ``--shard``; see
    ``_targets`` and ``_extract_remote``). A target that cannot be scanned (missing,
    malformed, a repository that cannot be read) is reported as a repository with one error
    problem; the other targets are still scanned. ``fetch`` is the
    run's fetch facade; ``access`` the run's registry credentials, which that facade must have
    been given as its ``credentials`` (default: only what ``settings`` holds, no user files).
    ``on_warning`` gets the run's warnings once each, as they arise: a run with GitHub lookups
    and no GitHub token is told so before its first GitHub request
    (``RegistryAccess.github_budget_warning``). ``views`` (the run's cache) keeps catalog
    views: read before any request for dependencies with a positive wait, written once every
    row is evaluated (``Lookups.save_views``); a ``--recheck`` pattern that matched no
    dependency is a warning. ``on_finish`` is told each catalog lookup's outcome as it ends
    (``Lookups.on_finish``: the lookup tasks' record). ``records`` (the run's cache; ``None``:
    no records, as with ``--no-cache``) keeps extraction records (``_extract_and_request``).
    A document several lookups read (a GitHub repository's release list) is fetched once
    per run (``http.flight.run_memo``).
    """
    with run_memo():
        return await _scan(
            targets,
            settings,
            fetch,
            clock,
            on_progress,
            access,
            on_warning,
            views=views,
            on_finish=on_finish,
            records=records,
        )


async def _scan(
    targets: Sequence[str],
    settings: Settings,
    fetch: Fetch,
    clock: Clock,
    on_progress: Progress | None,
    access: RegistryAccess | None,
    on_warning: Callable[[str], None] | None,
    *,
    views: ViewStore | None,
    on_finish: Callable[[LookupKey, Catalog | LookupFailed], None] | None,
    records: RecordStore | None,
) -> ScanResult:
    """``scan`` inside its run's memo."""
    if access is None:
        access = RegistryAccess(settings)
    evaluated_at = clock.now()
    policy = settings.release_age_policy()
    warn = None
    if on_warning is not None and not settings.offline:
        # Offline, nothing is sent: no request budget to warn about.
        warn = _Once(access.github_budget_warning, on_warning)
    if warn is not None and any(target.startswith(_GITHUB) for target in targets):
        warn()  # remote repositories are read from the GitHub API
    repos, todo, remote, whole = await _targets(targets, settings, fetch, access, on_warning)
    slots = anyio.Semaphore(settings.concurrency)
    throttle = getattr(fetch, "throttle", None)
    async with anyio.create_task_group() as tg:
        lookups = Lookups(tg, fetch, settings, access, views=views, now=evaluated_at)
        if throttle is not None:
            lookups.prepare["crates"] = functools.partial(_pace_crates_api, throttle, settings)
        keep_fresh = getattr(fetch, "keep_fresh", None)
        if keep_fresh is not None:
            lookups.prepare["goproxy"] = functools.partial(_keep_go_fresh, keep_fresh, settings)
            lookups.prepare["docker"] = functools.partial(
                _keep_tag_lists_fresh, keep_fresh, settings
            )
        lookups.on_progress = on_progress
        lookups.on_finish = on_finish
        if warn is not None:
            for datasource in GITHUB_DATASOURCES:
                lookups.prepare[datasource] = warn
        for repo, root, scope in todo:
            view = access.for_checkout(root)
            repo.problems.extend(
                ManifestProblem(".npmrc", None, warning, severity="warning")
                for warning in view.warnings
            )
            scan_repo = functools.partial(_scan_repo, scope=scope, records=records)
            tg.start_soon(
                scan_repo, repo, root, settings, policy, lookups, slots, evaluated_at, view
            )
        for repo, source in remote:
            scan_repo = functools.partial(_scan_repo, records=records)
            tg.start_soon(
                scan_repo, repo, source, settings, policy, lookups, slots, evaluated_at, None
            )
    await lookups.save_views()
    if on_warning is not None:
        for pattern in lookups.unmatched_rechecks():
            on_warning(
                f"--recheck {pattern!r} matched no dependency of this run: it is a package "
                "name or glob (such as 'pkg-*'); a bare --recheck after the targets, or "
                "--recheck='*', rechecks every dependency"
            )
    return ScanResult(
        evaluated_at=evaluated_at,
        repos=repos,
        host_stats={},
        view_hits=lookups.view_hits,
        targets=whole,
    )


async def _targets(
    targets: Sequence[str],
    settings: Settings,
    fetch: Fetch,
    access: RegistryAccess,
    on_warning: Callable[[str], None] | None = None,
) -> tuple[
    list[RepoResult],
    list[tuple[RepoResult, Path, _Scope]],
    list[tuple[RepoResult, _Remote]],
    TargetList,
]:
    """Every target's repository row, the checkouts and remote repositories to scan, the list.

    Organisation listings (``github:OWNER/*``) are expanded first: every shard of a CI matrix
    expands them alike, then takes its share of the whole list (``--shard``). Repeated targets
    are scanned once (``_once``: a checkout spelled several ways too), and the share is cut by
    each target's canonical form, so two spellings can never land in two shards. A target that
    cannot be scanned has its row with one error problem. An owner that could not be listed
    is kept by every shard whatever the cut (its list, and so its share, is incomplete: the
    owner's row must reach the merged report), with a warning telling to re-run the shard.
    """
    repos: list[RepoResult] = []
    todo: list[tuple[RepoResult, Path, _Scope]] = []
    remote: list[tuple[RepoResult, _Remote]] = []
    unlisted: dict[str, str] = {}
    if any(target.startswith(_GITHUB) for target in targets):
        targets = await _expand_owners(targets, settings, fetch, unlisted)
    # Repeats out before the cut: one repository named twice (listed and named, in another
    # case, a checkout by another path) is in one share only.
    resolved: dict[str, tuple[Path | None, str, _Scope]] = {}
    targets, identities = _once(targets, resolved, on_warning)
    whole = TargetList(len(identities), list_digest(identities), tuple(unlisted))
    index = {target: i for i, target in enumerate(targets)}
    if settings.shard is not None:
        chosen = set(select_shard(identities, *settings.shard))
        targets = [
            t for t, key in zip(targets, identities, strict=True) if key in chosen or t in unlisted
        ]
        _warn_unlisted(unlisted, settings.shard, on_warning)
    memo = None  # the run's blobs, shared by its remote repositories (made for the first)
    for target in targets:
        if target.startswith(_GITHUB):
            if memo is None:
                from patchula.repos.github import BlobMemo  # noqa: PLC0415 - lazy: start-up

                memo = BlobMemo()
            repo, source = _remote_target(target, settings, fetch, access, unlisted, memo)
            repo.index = index[target]
            repos.append(repo)
            if source is not None:
                remote.append((repo, source))
            else:
                repo.extraction = "none"
            continue
        root, problem, scope = resolved[target]
        commit = None
        if root is not None:
            try:
                commit = _head(root)
            except Exception as exc:  # noqa: BLE001 - the per-target guard (.git)
                root, problem = None, _internal("resolving", target, exc)
        repo = RepoResult(target=target, root=str(root or target), commit=commit)
        repo.index = index[target]
        repos.append(repo)
        if root is None:
            repo.unread(problem)
            continue
        todo.append((repo, root, scope))
    return repos, todo, remote, whole


def _warn_unlisted(
    unlisted: Mapping[str, str],
    shard: tuple[int, int],
    on_warning: Callable[[str], None] | None,
) -> None:
    """Say that share ``shard`` was cut from a list lacking the ``unlisted`` owners' repos."""
    if on_warning is None:
        return
    i, n = shard
    for owner, reason in unlisted.items():
        on_warning(
            f"shard {i}/{n}: the repositories of {owner} could not be listed ({reason}): this "
            "shard's share was cut from an incomplete target list and may lack targets the "
            "other shards left to it; re-run this shard"
        )


class _Once:
    """Say ``message()`` (when not ``None``) through ``say`` the first time it is called."""

    def __init__(self, message: Callable[[], str | None], say: Callable[[str], None]) -> None:
        self._message: Callable[[], str | None] | None = message
        self._say = say

    def __call__(self) -> None:
        message, self._message = self._message, None
        if message is not None and (text := message()) is not None:
            self._say(text)


def _resolve_target(target: str) -> tuple[Path | None, str, _Scope]:
    """Return where ``target`` is scanned from and what of it is reported.

    ``(root, "", scope)``, or ``(None, reason, _WHOLE)`` when it cannot be used. A directory
    is a checkout of its own (``_WHOLE``) unless it is a member of a Cargo, npm, pnpm or uv
    workspace above it (``_workspace_root``): then the workspace root is scanned, so the member
    keeps the root's lockfile and inherited versions, and only the member's files are reported. A
    file is one manifest: the root is the nearest directory at or above it holding ``.git``,
    else the workspace root of its directory (an unpacked source tree), else that directory;
    only that file (with what it includes) and the lockfiles that cover it are read.
    """
    if target.startswith(_GITHUB):  # ``scan`` reads them (``_remote_target``); warm does not
        return (
            None,
            "this command does not read remote GitHub targets yet; clone it and pass the path",
            _WHOLE,
        )
    path = Path(target).expanduser()
    if not path.exists():  # also a symlink loop: ``exists`` is false for ELOOP
        if path.is_symlink():
            return None, _broken_link(path), _WHOLE
        return None, _missing(target), _WHOLE
    try:
        resolved = path.resolve()
    except (RuntimeError, OSError):  # a loop met while resolving (RuntimeError in 3.11)
        return None, "target path contains a symlink loop", _WHOLE
    if not resolved.is_dir():
        # A symlinked manifest is read by its own name (``requirements.txt -> deps.lst`` is a
        # requirements file), in its directory: the link itself is not followed for its name.
        # One that leaves the checkout is read where it points, as before (a link's own
        # directory could not read it).
        directory = path.absolute().parent.resolve()
        root = _checkout_root(directory) or _workspace_root(directory) or directory
        if resolved.is_relative_to(root):
            resolved = directory / path.name
        else:
            directory = resolved.parent
            root = _checkout_root(directory) or _workspace_root(directory) or directory
        return root, "", _Scope(file=resolved.relative_to(root).as_posix())
    workspace = _workspace_root(resolved)
    if workspace is None:
        return resolved, "", _WHOLE
    return workspace, "", _Scope(member=resolved.relative_to(workspace).as_posix())


# A GitHub repository's web or clone address, given where ``github:OWNER/REPO`` is meant.
_GITHUB_ADDRESS = re.compile(
    r"(?:https?://(?:www\.)?github\.com/|git@github\.com:|ssh://git@github\.com/)"
    r"([A-Za-z0-9-]+)/([A-Za-z0-9._-]+?)(?:\.git)?/?"
)


def _broken_link(path: Path) -> str:
    """Why the symlink ``path``, which names nothing that exists, cannot be scanned."""
    try:
        path.resolve(strict=True)
    except RuntimeError:  # Python 3.11's loop error (OSError ELOOP from 3.13)
        return "target path contains a symlink loop"
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            return "target path contains a symlink loop"
    return "target is a symlink to a path that does not exist"


def _missing(target: str) -> str:
    """Why the local path ``target`` cannot be scanned: it does not exist (with a hint)."""
    address = _GITHUB_ADDRESS.fullmatch(target)
    if address is not None:
        return (
            "target does not exist as a local path; for the GitHub repository write "
            f"github:{address[1]}/{address[2]}"
        )
    return "target does not exist"


class _Scope(msgspec.Struct, frozen=True):
    """What of a scanned root a target reports (repository-relative POSIX paths).

    ``file``: one manifest (a file target); ``member``: a workspace member's directory;
    neither: everything (``_WHOLE``).
    """

    file: str | None = None
    member: str | None = None

    def key(self) -> tuple[str | None, str | None]:
        """``(file, member)``: the scope as an extraction record's config hash takes it."""
        return self.file, self.member

    def reports(self, path: str) -> bool:
        """Whether the rows and problems of the extracted file ``path`` are reported."""
        if self.file is not None:
            return path == self.file
        if self.member is not None:
            return path.startswith(self.member + "/")
        return True

    def covers(self, path: str) -> bool:
        """Whether ``path`` is reported or lies in a directory above the scope (its lockfile)."""
        if self.reports(path):
            return True
        if self.file is not None:
            where = posixpath.dirname(self.file)
        elif self.member is not None:
            where = self.member
        else:
            return True
        return _covers(posixpath.dirname(path), where)


_WHOLE = _Scope()

# The most of an ancestor's Cargo.toml, package.json or pyproject.toml read to find whether a
# target directory is one of its workspace members.
WORKSPACE_MANIFEST_MAX_BYTES = 4 * 1024 * 1024


def _checkout_root(start: Path) -> Path | None:
    """The nearest directory at or above ``start`` holding ``.git`` (a directory or a file)."""
    for directory in (start, *start.parents):
        if (directory / ".git").exists():
            return directory
    return None


def _workspace_root(directory: Path) -> Path | None:
    """The workspace root above ``directory`` when it is a member, else ``None``.

    Looked for from the parent up to the checkout root (the nearest ``.git``; a directory that
    holds ``.git`` itself is a checkout, never a member), nearest first, as each tool does:
    Cargo a ``Cargo.toml`` with ``[workspace]`` whose ``members`` (minus ``exclude``) match
    (Cargo reference, "Workspaces"); npm a ``package.json`` whose ``workspaces`` match (npm
    docs, "workspaces"); pnpm a ``pnpm-workspace.yaml`` whose ``packages`` globs (minus the
    ``!`` ones) match (pnpm docs, "pnpm-workspace.yaml"; only the nearest such file at or
    above ``directory`` counts, as pnpm finds its workspace root); uv a ``pyproject.toml`` with
    ``[tool.uv.workspace]`` ``members`` (minus ``exclude``) (uv docs, "Workspaces"). The member
    must hold that tool's manifest.
    An unreadable or invalid ancestor manifest is not a workspace.
    """
    checkout = _checkout_root(directory)
    if checkout == directory:
        return None
    # pnpm's workspace is the nearest pnpm-workspace.yaml at or above (pnpm's
    # findWorkspaceDir): a directory holding one is a root of its own, and a farther one
    # never claims what a nearer one leaves out (web/ui/react-app's `packages: []`).
    pnpm_open = not (directory / "pnpm-workspace.yaml").is_file()
    for parent in directory.parents:
        rel = directory.relative_to(parent).as_posix()
        if any(_member_of(parent, rel, directory, kind) for kind in _WORKSPACE_KINDS):
            return parent
        if pnpm_open and (parent / "pnpm-workspace.yaml").is_file():
            pnpm_open = False
            if _pnpm_member_of(parent, rel, directory):
                return parent
        if parent == checkout:
            break
    return None


# (manifest, where its member globs are, where its excluded globs are).
_WORKSPACE_KINDS = (
    ("Cargo.toml", ("workspace", "members"), ("workspace", "exclude")),
    ("package.json", ("workspaces",), None),
    (
        "pyproject.toml",
        ("tool", "uv", "workspace", "members"),
        ("tool", "uv", "workspace", "exclude"),
    ),
)


def _member_of(
    parent: Path,
    rel: str,
    directory: Path,
    kind: tuple[str, tuple[str, ...], tuple[str, ...] | None],
) -> bool:
    """Whether ``directory`` (``rel`` below ``parent``) is a workspace member of ``kind``."""
    if not (directory / kind[0]).is_file():
        return False
    members, excluded = _workspace_globs(parent, kind)
    return _globs_match(members, rel) and not _globs_match(excluded, rel)


def _workspace_globs(
    parent: Path, kind: tuple[str, tuple[str, ...], tuple[str, ...] | None]
) -> tuple[object, object]:
    """``(member globs, excluded globs)`` that ``parent``'s manifest of ``kind`` declares.

    Each as written (a list when the manifest is usable); ``(None, None)`` when there is no
    such manifest or it cannot be read.
    """
    name, members_at, exclude_at = kind
    if not (parent / name).is_file():
        return None, None
    import tomllib  # noqa: PLC0415 - lazy: start-up (only workspace members are read here)

    try:
        text = read_regular(parent / name, name, WORKSPACE_MANIFEST_MAX_BYTES).decode("utf-8")
        data: object = json.loads(text) if name.endswith(".json") else tomllib.loads(text)
    except (ManifestError, UnicodeDecodeError, ValueError):
        return None, None
    members = _at(data, members_at)
    if isinstance(members, dict):  # npm (and yarn) also accept {"packages": [...]}
        members = members.get("packages")
    return members, _at(data, exclude_at) if exclude_at is not None else None


def _pnpm_member_of(parent: Path, rel: str, directory: Path) -> bool:
    """Whether ``directory`` is a member of the pnpm workspace ``parent/pnpm-workspace.yaml``."""
    workspace = parent / "pnpm-workspace.yaml"
    if not (directory / "package.json").is_file() or not workspace.is_file():
        return False
    from patchula.manager.base import load_yaml  # noqa: PLC0415 - lazy: only members pay

    try:
        raw = read_regular(workspace, workspace.name, WORKSPACE_MANIFEST_MAX_BYTES)
        documents, problem = load_yaml(workspace.name, raw.decode("utf-8"))
    except (ManifestError, UnicodeDecodeError):
        return False
    packages = documents[0].get("packages") if documents and problem is None else None
    if packages is None or packages.kind != "sequence":
        return False
    globs = [item.text() or "" for item in packages.entries()]
    included = [glob for glob in globs if not glob.startswith("!")]
    excluded = [glob[1:] for glob in globs if glob.startswith("!")]
    return _globs_match(included, rel) and not _globs_match(excluded, rel)


def _at(data: object, keys: tuple[str, ...]) -> object:
    for key in keys:
        if not isinstance(data, dict):
            return None
        data = data.get(key)
    return data


def _globs_match(patterns: object, rel: str) -> bool:
    """Whether a list of workspace globs (``crates/*``, ``packages/**``) matches ``rel``.

    Matched path segment by segment (``*`` never crosses ``/``; ``**`` spans any number of
    segments), as the glob crate (Cargo, uv) and npm's minimatch do. A glob written with a
    leading ``!`` excludes what it matches (``["packages/*", "!packages/legacy"]``), as npm's
    ``@npmcli/map-workspaces``, yarn, bun and pnpm read it (an even number of ``!`` cancels
    out); ``rel`` matches when some other glob includes it and no such glob excludes it.
    """
    if not isinstance(patterns, list):
        return False
    parts = rel.split("/")
    included = False
    for pattern in patterns:
        if not isinstance(pattern, str):
            continue
        cleaned = pattern.strip()
        bangs = len(cleaned) - len(cleaned.lstrip("!"))
        cleaned = cleaned[bangs:].removeprefix("./").rstrip("/")
        if not cleaned or not _segments_match(parts, cleaned.split("/")):
            continue
        if bangs % 2:
            return False
        included = True
    return included


def _segments_match(parts: list[str], pattern: list[str]) -> bool:
    if not pattern:
        return not parts
    if pattern[0] == "**":
        return any(_segments_match(parts[i:], pattern[1:]) for i in range(len(parts) + 1))
    return (
        bool(parts)
        and fnmatch.fnmatchcase(parts[0], pattern[0])
        and _segments_match(parts[1:], pattern[1:])
    )


async def _scan_repo(
    repo: RepoResult,
    root: Path | _Remote,
    settings: Settings,
    policy: ReleaseAgePolicy,
    lookups: Lookups,
    slots: anyio.Semaphore,
    now: datetime,
    view: CheckoutAccess | None,
    *,
    scope: _Scope = _WHOLE,
    records: RecordStore | None = None,
) -> None:
    """Scan one repository into ``repo``; any unexpected exception becomes a problem of it.

    ``root`` is a checkout (with its ``view``), or a remote repository (``_Remote``: its view
    comes from its own ``.npmrc``, read with its files). A remote repository that cannot be
    read (``RepositoryUnreadable``: not found, empty, no permission, rate limited) is the
    repository's one error problem, with the reason.

    The per-target guard: a bug met while walking, extracting or matching lockfiles costs this
    repository (its problem names the exception type), never the run. Each row has its own
    guard too (``_guarded_row``), so one row's evaluation bug costs only that row.

    Rows are kept in extraction order. Rows that may fetch publish times or digests while
    evaluated (datasources with ``release_times``: Go, crates; image rows that read a tag's
    digest) are evaluated concurrently, each in a task, so their requests run under the host
    limits instead of one row after another; the others only wait for lookups already in
    flight and are evaluated in place.
    """
    try:
        if isinstance(root, _Remote):
            extracted, view = await _extract_remote(repo, root, settings, lookups, slots, records)
        else:
            extracted = await _extract_and_request(
                repo, root, settings, lookups, slots, cast("CheckoutAccess", view), scope, records
            )
    except RepositoryUnreadable as exc:
        repo.unread(exc.reason)
        return
    except Exception as exc:  # noqa: BLE001 - the per-target guard: a bug costs this target only
        repo.extraction = "none"
        repo.problems.append(
            ManifestProblem(repo.target, None, _internal("scanning", repo.target, exc))
        )
        return
    rows: list[Row | None] = [None] * len(extracted)

    checkout_view = cast("CheckoutAccess", view)

    async def fill(index: int, item: _Extracted) -> None:
        rows[index] = await _guarded_row(item, settings, policy, lookups, now, checkout_view)

    concurrent: list[tuple[int, _Extracted]] = []
    inline: list[tuple[int, _Extracted]] = []
    for index, item in enumerate(extracted):
        sends = _lazy_times(item.dep.datasource) or _digest_use(item.dep) != "none"
        (concurrent if sends else inline).append((index, item))
    pending = iter(concurrent)

    async def work() -> None:
        # Workers share one iterator: no await between ``next`` and the row it hands out.
        for index, item in pending:
            await fill(index, item)

    async with anyio.create_task_group() as tg:
        for _ in range(min(len(concurrent), ROW_WORKERS)):
            tg.start_soon(work)
        for index, item in inline:
            await fill(index, item)
    repo.rows.extend(row for row in rows if row is not None)


# Rows of one repository evaluated at once when their evaluation may send requests (publish
# times, digests): enough to keep every host's limit busy, few enough that 100,000 image rows
# of one hostile Dockerfile are not 100,000 tasks (issue 13: 6.7 KB of memory a row).
ROW_WORKERS = 64


def _internal(doing: str, what: str, exc: BaseException) -> str:
    """``internal error DOING WHAT: TypeName: message`` (the reason of a guarded failure)."""
    return f"internal error {doing} {what}: {type(exc).__name__}: {exc}"


async def _extract_and_request(
    repo: RepoResult,
    root: Path,
    settings: Settings,
    lookups: Lookups,
    slots: anyio.Semaphore,
    view: CheckoutAccess,
    scope: _Scope = _WHOLE,
    records: RecordStore | None = None,
) -> list[_Extracted]:
    """Extract ``repo`` in a repository slot (from its record when it has one), then request.

    With ``records`` (the run's cache) a checkout at a known HEAD commit whose work tree is
    clean (``records.worktree_clean``) is answered by its extraction record (repository,
    commit, config hash): nothing is walked or read. Otherwise it is walked and extracted, and
    the record stored when the tree was clean (and HEAD unchanged) after the extraction.
    """
    async with slots:
        extracted, store = await _extract_local(repo, root, settings, scope, records)
        _request(extracted, settings, lookups, view)
        if store is not None:
            # After the lookups are requested: the clean check (a ``git status``, tens of
            # milliseconds) runs while their requests are in flight, not before them.
            await store()
    return extracted


async def _extract_local(
    repo: RepoResult,
    root: Path,
    settings: Settings,
    scope: _Scope,
    records: RecordStore | None,
) -> tuple[list[_Extracted], Callable[[], Awaitable[None]] | None]:
    """The extraction of the checkout at ``root``: from its record, or walked and read.

    With the extraction comes, when it may become a record, the coroutine function that
    stores it once the work tree proves clean at the same HEAD (``None``: nothing to store).
    """
    key = _local_key(repo, root, settings, scope) if records is not None else None
    if records is not None and key is not None:
        record = await _read_record(records, key)
        if (
            record is not None
            and await _clean(root, record.read, scope)
            and _head(root) == key.commit  # HEAD did not move while git looked
        ):
            return _restore(repo, record), None
    start = len(repo.problems)
    read: list[str] = []
    reader = _Recording(_Reader(root, settings.max_file_bytes), read)
    if scope.file is not None:
        found = _discover_file(root, scope.file, settings)
        size = _total_size(root, found)
    else:
        found, size = await _discover_sliced(root, settings)
    if size <= INLINE_EXTRACTION_BYTES:
        # A few small manifests parse in about a millisecond: a thread hand-off (and the
        # worker waiting for the GIL behind the event loop) would cost more than the work.
        extracted = _extract_repo(reader, settings, repo, found, scope)
    else:
        extracted = await anyio.to_thread.run_sync(
            _extract_repo, reader, settings, repo, found, scope
        )
    if records is None or key is None or not _recordable(reader, found):
        return extracted, None
    store_key, problems, files = key, repo.problems[start:], list(repo.files)

    async def store() -> None:
        # Clean after the extraction too, at the same HEAD: what was read is that commit's.
        if await _clean(root, read, scope) and _head(root) == store_key.commit:
            await _store_record(
                records, store_key, repo, 0, read, extracted, problems=problems, files=files
            )

    return extracted, store


class _Recording:
    """A reader that notes each file it is asked for (the record's ``read``), then reads it.

    ``transient`` turns true when a read failed for a reason the files' content does not
    decide (permissions, an I/O error, a blob GitHub did not give): such an extraction is not
    stored as a record, or the failure would outlive its cause.
    """

    def __init__(self, reader: Callable[[str], str], read: list[str]) -> None:
        self._reader = reader
        self._read = read
        self.transient = False

    def __call__(self, rel: str) -> str:
        self._read.append(rel)
        try:
            return self._reader(rel)
        except ManifestError as exc:
            if exc.message.startswith(_TRANSIENT_FAILURES):
                self.transient = True
            raise


# How the readers' and the walk's failures that the content does not decide begin: the local
# reader's ``cannot read: <strerror>``, the remote one's ``cannot read the file from GitHub``
# and blob refusals, the walk's ``unreadable directory`` / ``unreadable: …``.
_TRANSIENT_FAILURES = ("cannot read", "GitHub answered", "refusing to read", "unreadable")


def _recordable(reader: _Recording, found: Discovery) -> bool:
    """Whether an extraction through ``reader`` of ``found`` may be stored as a record."""
    refused = any(reason.startswith(_TRANSIENT_FAILURES) for _, reason in found.refused)
    return not reader.transient and not refused


def _local_key(repo: RepoResult, root: Path, settings: Settings, scope: _Scope) -> RecordKey | None:
    """The record key of a checkout: its resolved root, HEAD commit, config and scope hash.

    The root is the scanned directory: a subdirectory of a checkout keys its records apart
    from the checkout's own. ``None`` (no record) when HEAD is not a full commit id (no
    ``.git``, a damaged HEAD).
    """
    if not is_commit(repo.commit):
        return None
    return RecordKey(str(root), cast("str", repo.commit), config_hash(settings, *scope.key()))


def _head(root: Path) -> str | None:
    """The HEAD commit of the checkout holding ``root`` (``_checkout_root``), or ``None``.

    A subdirectory target (not a workspace member, so scanned as a root of its own) is at
    its enclosing checkout's commit, as a file target is.
    """
    try:
        checkout = _checkout_root(root)
    except OSError:  # an unreadable parent (EACCES): no commit, as with no ``.git``
        return None
    return read_commit(checkout) if checkout is not None else None


async def _clean(root: Path, read: Sequence[str], scope: _Scope) -> bool:
    """Whether the checkout holding ``root`` is clean for an extraction that read ``read``.

    ``read`` and the scope are relative to ``root``, which may lie below the checkout (a
    subdirectory target): git runs at the checkout with ``root``'s path as the prefix.
    """
    try:
        checkout = _checkout_root(root)
    except OSError:
        return False
    dirs = git_dirs(checkout) if checkout is not None else None
    if checkout is None or dirs is None:
        return False
    rel = root.relative_to(checkout).as_posix()
    prefix = "" if rel == "." else rel + "/"
    clean = functools.partial(
        worktree_clean, checkout, dirs[1], list(read), scope.file, prefix=prefix
    )
    return await anyio.to_thread.run_sync(clean)


async def _read_record(records: RecordStore, key: RecordKey) -> Record | None:
    """The stored record of ``key`` when usable: typed, this format, every row checked.

    A record that does not decode, or holds a dependency a fresh extraction would have made a
    problem (``_dependency_problem``), is refused: a miss, overwritten by this run's
    extraction. A failing store is a miss too.
    """
    try:
        data = await records.get_extraction(key.repo, key.commit, key.config_hash)
    except Exception:  # noqa: BLE001 - a record is an optimisation: any failure is a miss
        return None
    record = decode(data) if data is not None else None
    if record is None:
        return None
    if any(_dependency_problem(item.dep) is not None for item in record.extracted):
        return None
    return record


def _restore(repo: RepoResult, record: Record) -> list[_Extracted]:
    """Fill ``repo`` with what ``record`` holds (files, problems) and return its rows."""
    repo.files.extend(record.files)
    repo.problems.extend(record.problems)
    repo.ignored.extend(record.ignored)
    repo.ignored_complete = record.ignored_complete
    repo.extraction = "cached"
    return list(record.extracted)


async def _store_record(
    records: RecordStore,
    key: RecordKey,
    repo: RepoResult,
    start: int,
    read: Sequence[str],
    extracted: list[_Extracted],
    npmrc: str | None = None,
    *,
    problems: list[ManifestProblem] | None = None,
    files: list[str] | None = None,
) -> None:
    """Store ``repo``'s extraction (its problems from ``start`` on) as the record of ``key``.

    ``problems`` and ``files``, when given, are the extraction's as they were when it ended
    (a record stored later must not take what the rows' evaluation added since).
    """
    record = Record(
        format=RECORD_FORMAT,
        files=list(repo.files) if files is None else files,
        read=list(dict.fromkeys(read)),
        problems=repo.problems[start:] if problems is None else problems,
        extracted=extracted,
        npmrc=npmrc,
        ignored=list(repo.ignored),
        ignored_complete=repo.ignored_complete,
    )
    data = encode(record)
    if data is None:
        return
    # A record is an optimisation: a store that fails costs the next run an extraction only.
    with contextlib.suppress(Exception):
        await records.put_extraction(key.repo, key.commit, key.config_hash, data)


def _request(
    extracted: list[_Extracted], settings: Settings, lookups: Lookups, view: CheckoutAccess
) -> None:
    """Request the lookups (catalogs, digests) of ``extracted``'s rows."""
    for item in extracted:
        dep = item.dep
        if dep.datasource == "goproxy" and _go_skip(dep.package_name, settings):
            continue
        if dep.skip_reason is None and dep.datasource == "crates":
            view_of, dep, error = _crate_view(dep, view)
            if error is not None or dep.skip_reason is not None:
                continue
        else:
            view_of = view
        if dep.skip_reason is None and dep.datasource in DATASOURCES:
            # A tool's resolved backend is its datasource and package name, so the lookup
            # (and the catalog view keyed like it) is scoped by the mise registry mapping.
            key = lookups.key(dep.datasource, dep.package_name, view_of)
            lookups.note(key, dep.name)
            use = _digest_use(dep)
            # A tag that is no version needs its digest, no catalog, unless the catalog
            # tells a tag from a branch (GitHub); a pin without a tag is found in it, and
            # an image's (``untagged``) is not looked up at all.
            if use == "untagged":
                continue
            if use != "tracked" or _catalog_digests(dep):
                lookups.request(key)
            if use in {"tracked", "pinned"}:
                lookups.request_digest(key, cast("str", dep.constraint))


_GITHUB = "github:"


def _once(
    targets: Sequence[str],
    resolved: dict[str, tuple[Path | None, str, _Scope]],
    on_warning: Callable[[str], None] | None = None,
) -> tuple[list[str], list[str]]:
    """``targets`` without repeats (the first spelling kept), and each one's canonical form.

    GitHub compares owner and repository names without case (a ref keeps its case): a remote
    target's canonical form is ``github:owner/name[@REF]`` in lower case. A local one is what
    it scans, its resolved root and scope (``_resolve_target``, stored in ``resolved`` for
    every local target kept): ``repos/x``, ``./repos/x``, ``repos/x/`` and its absolute path
    are one target, said in a warning. Its canonical form is the path it names relative to
    the working directory when inside it (the same on every CI runner whatever its directory),
    else absolute.
    """
    seen: dict[str, str] = {}
    repeats: dict[str, list[str]] = {}
    try:
        cwd = Path.cwd().resolve()
    except OSError:  # the working directory was removed: every local form stays absolute
        cwd = Path("/nonexistent-working-directory")
    for target in targets:
        if target.startswith(_GITHUB):
            key = _remote_identity(target)
        else:
            try:
                found = _resolve_target(target)
            except Exception as exc:  # noqa: BLE001 - the per-target guard (resolution)
                found = None, _internal("resolving", target, exc), _WHOLE
            key = _local_identity(target, *found, cwd)
            if key not in seen:
                resolved[target] = found
            elif seen[key] != target:
                repeats.setdefault(key, []).append(target)
        seen.setdefault(key, target)
    if on_warning is not None:
        for key, again in repeats.items():
            first, spellings = seen[key], ", ".join(dict.fromkeys(again))
            noun, verb = ("target", "names") if len(set(again)) == 1 else ("targets", "name")
            shown = first if key == first else f"{first} ({key})"
            on_warning(f"{noun} {spellings} {verb} what {shown} names: scanned once, as {first}")
    return list(seen.values()), list(seen)


def _remote_identity(target: str) -> str:
    """The canonical form of a ``github:`` target (``_once``): as parsed, owner/name folded.

    ``github:Acme/API.git`` and ``github:acme/api`` are one repository; a malformed target
    keeps its text (it becomes a row of its own).
    """
    from patchula.repos import github  # noqa: PLC0415 - lazy: start-up (remote targets only)

    try:
        parsed = github.parse_target(target)
    except ValueError:
        parsed = None
    text = target if parsed is None else parsed.text()
    path, at, ref = text.partition("@")
    return f"{path.lower()}{at}{ref}"


def _local_identity(target: str, root: Path | None, _problem: str, scope: _Scope, cwd: Path) -> str:
    """The canonical form of a local target (``_once``): what it scans, as a stable path."""
    if root is None:  # it cannot be resolved: its path as written, made absolute and normal
        path = Path(os.path.normpath(cwd / Path(target).expanduser()))
    else:
        path = root / (scope.file or scope.member or "")
    try:
        text = path.relative_to(cwd).as_posix()
    except ValueError:
        text = path.as_posix()
    # Never a remote target's form (a directory named ``github:acme``).
    return f"./{text}" if text.startswith(_GITHUB) else text


async def _expand_owners(
    targets: Sequence[str], settings: Settings, fetch: Fetch, unlisted: dict[str, str]
) -> list[str]:
    """``targets`` with each ``github:OWNER/*`` replaced by the owner's repositories.

    Listed with ``repos.github.list_repositories`` (forks and archived repositories only with
    ``--include-forks`` / ``--include-archived``), all owners at once. An owner that cannot be
    listed stays one target and its reason goes to ``unlisted``: it becomes a repository row,
    kept under ``--shard`` by every shard whose listing failed (``_targets``).
    """
    from patchula.repos import github  # noqa: PLC0415 - lazy: start-up (remote targets only)

    api = github.api_base(settings)
    owners: dict[str, str] = {}
    for target in targets:
        try:
            parsed = github.parse_target(target)
        except ValueError:
            continue  # reported as a malformed target (``_remote_target``)
        if isinstance(parsed, github.OwnerTarget):
            owners.setdefault(target, parsed.owner)
    listed: dict[str, list[str]] = {}

    async def expand(target: str, owner: str) -> None:
        try:
            found = await github.list_repositories(
                cast("MethodFetch", fetch),
                api,
                owner,
                include_forks=settings.include_forks,
                include_archived=settings.include_archived,
            )
        except (RepositoryUnreadable, LookupFailed) as exc:
            unlisted[target] = exc.reason
        except Exception as exc:  # noqa: BLE001 - the per-target guard: a bug costs this owner
            unlisted[target] = _internal("listing", target, exc)
        else:
            listed[target] = [repo.text() for repo in found]

    async with anyio.create_task_group() as tg:
        for target, owner in owners.items():
            tg.start_soon(expand, target, owner)
    out: list[str] = []
    for target in targets:
        out.extend(listed.get(target, [target]))
    return out


class _Remote(msgspec.Struct, frozen=True):
    """A remote repository to scan: its target, the REST base, the run's facade and access.

    ``blobs`` is the run's blob memo, one for all its remote repositories (``BlobMemo``).
    """

    target: RepoTarget
    api: str
    fetch: MethodFetch
    access: RegistryAccess
    blobs: BlobMemo


def _remote_target(
    target: str,
    settings: Settings,
    fetch: Fetch,
    access: RegistryAccess,
    unlisted: Mapping[str, str],
    blobs: BlobMemo,
) -> tuple[RepoResult, _Remote | None]:
    """The repository row of the remote ``target`` and what to scan (``None``: not scanned).

    A malformed target, or an owner listing that failed, is a row with one error problem.
    """
    from patchula.repos import github  # noqa: PLC0415 - lazy: start-up (remote targets only)

    api = github.api_base(settings)
    try:
        parsed = github.parse_target(target)
    except ValueError as exc:
        parsed, reason = None, str(exc)
    else:
        reason = unlisted.get(target, "")
        if isinstance(parsed, github.OwnerTarget):
            reason = reason or "the repositories of this owner were not listed"
    if not isinstance(parsed, github.RepoTarget) or reason:
        repo = RepoResult(target=target, root=target, commit=None)
        repo.unread(reason or "not a GitHub target")
        return repo, None
    repo = RepoResult(target=target, root=github.web_url(api, parsed), commit=None)
    return repo, _Remote(parsed, api, cast("MethodFetch", fetch), access, blobs)


def _remote_id(api: str, target: RepoTarget) -> str:
    """A remote repository's record identity: ``github:owner/name``, then the REST base.

    The base only off github.com (GHES, a mirror), without userinfo or query; names in lower
    case (GitHub compares them so).
    """
    from urllib.parse import urlsplit  # noqa: PLC0415 - lazy: start-up

    name = f"{_GITHUB}{target.owner.lower()}/{target.name.lower()}"
    parts = urlsplit(api)
    host = (parts.hostname or "").lower()
    if host == "api.github.com" and parts.path.rstrip("/") == "":
        return name
    port = f":{parts.port}" if parts.port is not None else ""
    return f"{name} {parts.scheme}://{host}{port}{parts.path.rstrip('/')}"


# At most this many blobs of one repository are read at once (the host limits bound requests;
# this bounds the tasks), and includes (``-r other.txt``) are followed this many rounds deep.
REMOTE_BLOB_CONCURRENCY = 32
REMOTE_INCLUDE_ROUNDS = 8


async def _extract_remote(
    repo: RepoResult,
    source: _Remote,
    settings: Settings,
    lookups: Lookups,
    slots: anyio.Semaphore,
    records: RecordStore | None,
) -> tuple[list[_Extracted], CheckoutAccess]:
    """Extract a remote repository in a repository slot, then request its lookups.

    The ref is resolved to a commit (one request, revalidated each run); with ``records`` a
    record of (repository, commit, config hash) ends the extraction there: no tree, no blob
    (its root ``.npmrc`` is read by blob SHA, from the cache). Otherwise the tree is read once,
    the paths selected as a walk would (``_Blobs.discover``: symlinks followed inside the tree,
    as in a checkout), only their blobs read (by SHA, concurrently) with the root ``.npmrc``,
    extracted from memory by the same code as a checkout, and the record stored.

    Raises:
        RepositoryUnreadable: the ref, the tree or the ``.npmrc`` cannot be read (the reason).
    """
    from patchula.repos import github  # noqa: PLC0415 - lazy: start-up (remote targets only)

    fetch, target = source.fetch, source.target
    async with slots:
        commit = await github.resolve_commit(fetch, source.api, target)
        repo.commit = commit
        key = None
        if records is not None:
            key = RecordKey(
                _remote_id(source.api, target), commit, config_hash(settings, None, None)
            )
            record = await _read_record(records, key)
            if record is not None:
                npmrc = None
                if record.npmrc is not None:
                    npmrc = github.TreeEntry(".npmrc", record.npmrc, None, "100644")
                view = await _remote_view(repo, source, npmrc)
                extracted = _restore(repo, record)
                _request(extracted, settings, lookups, view)
                return extracted, view
        skip = directory_skipper(settings.ignore_paths)
        # The listing keeps what the skip rules leave out (``discover_paths`` applies them):
        # a symlink into node_modules or an ignored directory resolves as in a checkout.
        tree = await github.read_tree(
            fetch, source.api, target, commit, skip_dir=skip, prune_listing=False
        )
        entries = {entry.path: entry for entry in tree.entries}
        npmrc = entries.get(".npmrc")
        if npmrc is not None and npmrc.mode == SYMLINK_MODE:
            npmrc = None  # a symlink: its blob is a path, not a config
        view = await _remote_view(repo, source, npmrc)
        start = len(repo.problems)
        blobs = _Blobs(source, entries, settings.max_file_bytes)
        found = await blobs.discover(settings)
        await blobs.read([item.path for item in found.files])
        read: list[str] = []
        for _ in range(REMOTE_INCLUDE_ROUNDS):
            trial = RepoResult(repo.target, repo.root, commit)
            read.clear()
            reader = _Recording(blobs.reader(), read)
            copy = Discovery(
                list(found.files),
                list(found.refused),
                dict(found.unread_lockfiles),
                ignored=list(found.ignored),
                ignored_complete=found.ignored_complete,
                unread_manifests=list(found.unread_manifests),
            )
            if blobs.size <= INLINE_EXTRACTION_BYTES:
                extracted = _extract_repo(reader, settings, trial, copy, _WHOLE)
            else:  # as for a checkout: large manifests are parsed off the event loop
                extracted = await anyio.to_thread.run_sync(
                    _extract_repo, reader, settings, trial, copy, _WHOLE
                )
            wanted = blobs.unread(read)
            if not wanted:
                break
            await blobs.read(wanted)  # files the managers included (``-r other.txt``)
        repo.files.extend(trial.files)
        repo.problems.extend(trial.problems)
        repo.ignored.extend(trial.ignored)
        repo.ignored_complete = trial.ignored_complete
        if records is not None and key is not None and _recordable(reader, found):
            npmrc_sha = npmrc.sha if npmrc is not None else None
            await _store_record(records, key, repo, start, read, extracted, npmrc_sha)
        _request(extracted, settings, lookups, view)
    return extracted, view


async def _remote_view(
    repo: RepoResult, source: _Remote, npmrc: RepoTreeEntry | None
) -> CheckoutAccess:
    """The registries and credentials of a remote repository: its root ``.npmrc`` over the user's.

    The ``.npmrc`` warnings are the repository's, as for a checkout. One that cannot be read is
    a warning too (the run-wide view is used).
    """
    from patchula.credentials import MAX_CONFIG_BYTES  # noqa: PLC0415 - beside its one use

    text = None
    if npmrc is not None:
        try:
            data = await source.blobs.read(
                source.fetch, source.api, source.target, npmrc, max_bytes=MAX_CONFIG_BYTES
            )
        except ManifestError as exc:
            repo.problems.append(ManifestProblem(".npmrc", None, exc.message, severity="warning"))
        else:
            text = data.decode("utf-8-sig", errors="replace")
    view = source.access.for_npmrc(text)
    repo.problems.extend(
        ManifestProblem(".npmrc", None, warning, severity="warning") for warning in view.warnings
    )
    return view


# The git mode of a symlink: its blob holds the link's target.
SYMLINK_MODE = "120000"
# The longest symlink target read (bytes): PATH_MAX on Linux.
SYMLINK_TARGET_MAX_BYTES = 4096


class _Blobs:
    """The blobs of one remote repository read so far (by path), and a reader over them.

    A symlink (mode ``120000``) is followed as a checkout's is: its blob is its target, and a
    path through it resolves (``discovery.resolve_tree_path``) to the entry it names, whose
    blob is read instead; a path leaving the tree, or a loop, is refused in a checkout's words.
    """

    def __init__(
        self, source: _Remote, entries: Mapping[str, RepoTreeEntry], max_bytes: int
    ) -> None:
        self._source = source
        self._entries = entries
        self._max = max_bytes
        self._data: dict[str, bytes | ManifestError] = {}
        self._links: dict[str, str | ManifestError] = {}
        self._directories: set[str] = set()
        for path in entries:
            directory = posixpath.dirname(path)
            while directory and directory not in self._directories:
                self._directories.add(directory)
                directory = posixpath.dirname(directory)

    @property
    def size(self) -> int:
        """The bytes of the blobs read so far."""
        return sum(len(data) for data in self._data.values() if isinstance(data, bytes))

    def _is_link(self, path: str) -> bool:
        entry = self._entries.get(path)
        return entry is not None and entry.mode == SYMLINK_MODE

    def _target(self, link: str) -> str | None:
        target = self._links.get(link)
        return target if isinstance(target, str) else None

    def _resolve(self, rel: str) -> TreePath:
        return resolve_tree_path(rel, self._is_link, self._target)

    def _wanted(self, rel: str) -> RepoTreeEntry | None:
        """The entry whose blob ``rel`` needs next (a file, or a link on the way), else ``None``."""
        resolved = self._resolve(rel)
        if resolved.failure == "pending" and resolved.link not in self._links:
            return self._entries[cast("str", resolved.link)]
        if resolved.path is None or resolved.path in self._data:
            return None
        entry = self._entries.get(resolved.path)
        return entry if entry is not None and entry.mode != SYMLINK_MODE else None

    def symlink_refusal(self, path: str) -> str | None:
        """Why the symlink ``path`` is not read (``discovery.tree_symlink_refusal``), or ``None``.

        Its target not read (the link's blob failed): that failure, naming nothing else.
        """
        resolved = self._resolve(path)
        if resolved.failure == "pending":
            failed = self._links.get(cast("str", resolved.link))
            return failed.message if isinstance(failed, ManifestError) else REMOTE_SYMLINK
        return tree_symlink_refusal(resolved, self._directories.__contains__)

    async def discover(self, settings: Settings) -> Discovery:
        """The discovery of the tree (``discovery.discover_paths``), its symlinks followed.

        A symlink a manager would read has its target read first (and the links on its way),
        then is resolved as a walk resolves a checkout's: nothing else is requested.
        """
        listed = [(path, entry.mode == SYMLINK_MODE) for path, entry in self._entries.items()]
        managers = settings.managers()
        asked: list[str] = []

        def ask(path: str) -> str:
            asked.append(path)
            return REMOTE_SYMLINK

        found = discover_paths(listed, settings.ignore_paths, managers, ask)
        if not asked:
            return found
        await self.read(asked)
        return discover_paths(listed, settings.ignore_paths, managers, self.symlink_refusal)

    def unread(self, paths: Sequence[str]) -> list[str]:
        """The paths of ``paths`` whose blob (or a symlink's on the way) is not read yet."""
        return [rel for rel in dict.fromkeys(paths) if self._wanted(rel) is not None]

    async def read(self, paths: Sequence[str]) -> None:
        """Read the blobs ``paths`` need (each SHA once), concurrently; failures kept per path.

        Symlinks on the way are read round by round (a chain's next link is known only once
        its previous one is), at most ``MAX_SYMLINK_HOPS`` rounds more than a plain read.
        """
        wanted = list(dict.fromkeys(paths))
        for _ in range(MAX_SYMLINK_HOPS + 1):
            entries = {e.path: e for e in map(self._wanted, wanted) if e is not None}
            if not entries:
                return
            await self._fetch(list(entries.values()))

    async def _fetch(self, entries: Sequence[RepoTreeEntry]) -> None:
        by_blob: dict[tuple[str, bool], list[RepoTreeEntry]] = {}
        for entry in entries:
            by_blob.setdefault((entry.sha, entry.mode == SYMLINK_MODE), []).append(entry)
        limiter = anyio.CapacityLimiter(REMOTE_BLOB_CONCURRENCY)
        source = self._source

        async def one(same: list[RepoTreeEntry]) -> None:
            link = same[0].mode == SYMLINK_MODE
            limit = SYMLINK_TARGET_MAX_BYTES if link else self._max
            async with limiter:
                try:
                    data: bytes | ManifestError = await source.blobs.read(
                        source.fetch, source.api, source.target, same[0], max_bytes=limit
                    )
                except ManifestError as exc:
                    data = exc
            for entry in same:
                if isinstance(data, ManifestError):
                    failure = ManifestError(data.message, file=entry.path)
                    (self._links if link else self._data)[entry.path] = failure
                elif link:
                    self._links[entry.path] = data.decode("utf-8", errors="replace")
                else:
                    self._data[entry.path] = data

        async with anyio.create_task_group() as tg:
            for same in by_blob.values():
                tg.start_soon(one, same)

    def reader(self) -> Callable[[str], str]:
        """A reader ``rel -> text`` over the blobs read, failing as ``_Reader`` does."""
        return functools.partial(self._read_one)

    def _read_one(self, rel: str) -> str:
        resolved = self._resolve(rel)
        if resolved.failure == "outside":
            raise ManifestError("path leaves the checkout", file=rel)
        if resolved.failure == "loop":
            raise ManifestError("symlink loop", file=rel)
        if resolved.path is None:  # a link on the way not read yet (the next round reads it)
            failed = self._links.get(cast("str", resolved.link))
            message = failed.message if isinstance(failed, ManifestError) else "file not found"
            raise ManifestError(message, file=rel)
        path = resolved.path
        found = self._data.get(path)
        if isinstance(found, ManifestError):
            raise ManifestError(found.message, file=rel)
        if found is not None:
            return manifest_text(found, rel)
        if not path or (path not in self._entries and path in self._directories):
            raise ManifestError("not a regular file (directory)", file=rel)
        # In the tree but not read yet: the next round reads it (``_extract_remote``).
        raise ManifestError("file not found", file=rel)


# How a row uses content digests (``_digest_use``).
DigestUse = Literal["none", "pinned", "tracked", "untagged", "found"]


def _digest_use(dep: Dependency) -> DigestUse:
    """Whether ``dep``'s row reads the current digest of its tag, and why.

    Only for datasources with ``get_digest`` (container images and GitHub actions:
    ``constraint`` is the tag, a SHA pin's comment tag). ``tracked``: the tag is not a version
    of its scheme (``latest``, ``stable``, a branch ``main``): the row tracks what the tag
    points at instead of versions. ``pinned``: a version tag with a pinned ``digest``: the
    digest is compared with the tag's current one. ``found``: a digest without a tag whose
    datasource's catalog names each version's digest (``DigestTerms.catalog_digests``: GitHub
    tags and their commits): the tag is found from the pin. ``untagged``: a digest without a
    tag and no such catalog (an image: nothing to compare it with). ``none``: no digest is
    read — a version tag without a pinned digest spares the registry (and Docker Hub's pull
    quota) the request.
    """
    if dep.datasource not in DATASOURCES or dep.versioning not in VERSIONINGS:
        return "none"
    if DATASOURCES[dep.datasource].get_digest is None:
        return "none"
    tag = (dep.constraint or "").strip()
    if not tag:
        if not dep.digest:
            return "none"
        return "found" if _catalog_digests(dep) else "untagged"
    scheme = VERSIONINGS[dep.versioning]
    # A scheme with ranges (npm's, for a ``github:o/r#semver:^1.2`` dependency) judges a range
    # on the tag list as any other; an image or action tag scheme has no ranges.
    ranged = getattr(scheme, "TAG_SCHEME", False) is not True and scheme.is_valid_constraint(tag)
    if not scheme.is_valid(tag) and not ranged:
        return "tracked"
    return "pinned" if dep.digest else "none"


def _terms(dep: Dependency) -> DigestTerms:
    """The words of ``dep``'s datasource for its digests (an image's, unless it names others)."""
    return DATASOURCES[dep.datasource].digest_terms or IMAGE_DIGESTS


def _catalog_digests(dep: Dependency) -> bool:
    """Whether ``dep``'s catalog names each version's digest (``DigestTerms.catalog_digests``)."""
    return _terms(dep).catalog_digests


async def _guarded_row(
    item: _Extracted,
    settings: Settings,
    policy: ReleaseAgePolicy,
    lookups: Lookups,
    now: datetime,
    view: CheckoutAccess,
) -> Row:
    """The row of ``item``; an unexpected exception evaluating it becomes its ``error`` row.

    The per-row guard: "internal error evaluating NAME: TypeName: message"; every other row
    (of this package too) still completes.
    """
    try:
        row = await _row(item, settings, policy, lookups, now, view)
    except Exception as exc:  # noqa: BLE001 - the per-row guard: a bug costs this row only
        failed = Finding(status="error", reason=_internal("evaluating", item.dep.name, exc))
        row = Row(item.dep, failed, item.lock_file)
    if row.dependency.digest is not None and row.finding.digest is None:
        # Every row of a digest-pinned reference names its digest, whatever its verdict.
        row = replace(row, finding=replace(row.finding, digest=row.dependency.digest))
    return row


async def _row(
    item: _Extracted,
    settings: Settings,
    policy: ReleaseAgePolicy,
    lookups: Lookups,
    now: datetime,
    view: CheckoutAccess,
) -> Row:
    locked, lock_file = item.locked, item.lock_file
    dep, view, error = _routed(item.dep, settings, view)
    if error is not None:
        return Row(dep, Finding(status="error", reason=error))
    if dep.skip_reason is not None:
        return Row(dep, Finding(status="skipped", reason=dep.skip_reason))
    if dep.datasource not in DATASOURCES or dep.versioning not in VERSIONINGS:
        # Extracted and shown, but this build cannot look it up: say so, without failing
        # the run (the dependency is known; its freshness is not).
        reason = f"{dep.datasource} lookups are not supported yet"
        return Row(dep, Finding(status="skipped", reason=reason))
    key = lookups.key(dep.datasource, dep.package_name, view)
    use = _digest_use(dep)
    tag = (dep.constraint or "").strip()
    if use == "untagged":
        reason = "a digest without a tag: no tag to compare it with; not looked up"
        return Row(dep, Finding(status="skipped", reason=reason))
    if use == "tracked":
        return Row(dep, await _tracked(dep, tag, lookups, key))
    catalog = await lookups.get(key)
    dep, key, catalog = await _go_package_module(dep, key, catalog, lookups, view)
    dep, catalog = _go_tool_own_path(dep, catalog)
    if isinstance(catalog, LookupFailed):
        # What the checkout itself says is still known: the locked version or exact pin.
        pin = VERSIONINGS[dep.versioning].exact_pin((dep.constraint or "").strip())
        source: CurrentSource | None = "lockfile" if locked else "pin" if pin else None
        # ``--offline`` with nothing cached failed nothing upstream: the freshness is unknown.
        status: Status = "unknown" if isinstance(catalog, NotCached) else "error"
        failed = Finding(
            status=status, reason=catalog.reason, current=locked or pin, current_source=source
        )
        return Row(dep, failed, lock_file)
    judged = dep
    if use == "found":
        pinned = cast("str", dep.digest)
        found = catalog.version_of_digest(pinned)
        if found is None:
            return Row(dep, unknown_pin(pinned, _terms(dep)), lock_file, _info(catalog))
        if not VERSIONINGS[dep.versioning].is_valid(found):
            tracked = await _tracked(dep, found, lookups, key, kind="tag")
            return Row(dep, tracked, lock_file, _info(catalog))
        judged, tag = replace(dep, constraint=found), found
    catalog, finding, forked = await _judged(judged, catalog, lookups, (policy, now, key), item)
    finding = _runner_spelling(dep, _go_toolchain_spelling(dep, finding))
    # A note speaks of the lockfile: it belongs to rows whose current came from it or from the
    # range for want of it, never to an exact pin.
    note = _lock_note(item, dep, finding)
    # A declaration's own note (a catalog's range) is said whatever gave current.
    note = "; ".join(part for part in (dep.note, note, forked) if part) or None
    if note:
        reason = f"{finding.reason}; {note}" if finding.reason else note
        finding = replace(finding, reason=reason)
    if use == "pinned":
        finding = await _judge_pinned_digest(finding, dep, tag, lookups, key)
        finding = _another_tags_pin(finding, dep, tag, catalog)
    elif use == "found":
        terms = _terms(dep)
        # The tag list's commits are as of its reading: the tag is checked against its commit
        # now, like a comment's tag (seed 003, "Catalog views": a reused list never freezes one).
        moved = f"{{tag}} no longer points at the pinned {terms.digest} {{pinned}} (now {{now}})"
        finding = await _judge_pinned_digest(finding, dep, tag, lookups, key, mismatch=moved)
        note = f"{tag}, the tag at the pinned {terms.digest}"
        finding = replace(finding, reason=f"{note}; {finding.reason}" if finding.reason else note)
    return Row(dep, finding, lock_file, _info(catalog))


async def _judged(
    dep: Dependency,
    catalog: Catalog,
    lookups: Lookups,
    how: tuple[ReleaseAgePolicy, datetime, LookupKey],
    item: _Extracted,
) -> tuple[Catalog, Finding, str | None]:
    """``_evaluated`` at ``item.locked``, or at each fork of a forked row (``_forked``)."""
    if item.forks and dep.datasource == "pypi":
        return await _forked(dep, catalog, lookups, how, item)
    policy, now, key = how
    view, finding = await _evaluated(dep, catalog, lookups, (policy, now, item.locked, key))
    return view, finding, None


# The order a forked row's forks are chosen in: the first that can move (``_forked``).
_FORK_RANK = {"outdated": 0, "held-back": 1, "error": 2, "unknown": 3}


async def _forked(
    dep: Dependency,
    catalog: Catalog,
    lookups: Lookups,
    how: tuple[ReleaseAgePolicy, datetime, LookupKey],
    item: _Extracted,
) -> tuple[Catalog, Finding, str]:
    """A row a Python lockfile locks once per fork, judged at each: ``(view, finding, note)``.

    Each fork (``Extracted.forks``) is judged for its own Python: its ``resolution-markers``
    joined to the row's markers (``policy.requires_python``: the lowest Python they admit),
    else the lowest its locked release's Requires-Python and the project admit. The row is the
    oldest fork that can move (outdated, then held back), else the oldest: up to date only
    when every fork is. The note names each fork with its Python and the one judged.
    """
    from patchula.policy import requires_python  # noqa: PLC0415 - Python rows only

    policy, now, key = how
    judged: list[tuple[str, str | None, Catalog, Finding]] = []
    for version, marker in item.forks:
        markers = dep.markers
        if marker:
            markers = f"({dep.markers}) and ({marker})" if dep.markers else marker
        fork = replace(dep, markers=markers)
        view, finding = await _evaluated(fork, catalog, lookups, (policy, now, version, key))
        bound = requires_python.bound_for(fork, catalog, version)
        judged.append((version, None if bound is None else bound.python, view, finding))
    version, python, view, finding = min(judged, key=lambda j: _FORK_RANK.get(j[3].status, 4))
    forks = [f"{v} (Python >= {p})" if p else v for v, p, _, _ in judged]
    named = f"{', '.join(forks[:-1])} and {forks[-1]}"
    note = f"{item.lock_file} locks {dep.package_name} {named}"
    if finding.status in {"outdated", "held-back"} and finding.eligible is not None:
        where = f" on Python >= {python}" if python else ""
        note += f"; judged at {version}, which {finding.eligible} replaces{where}"
    else:
        note += "; judged at each: none can move"
    return view, finding, note


# How many parent paths of a ``go:`` tool's package path are tried for its module.
MAX_GO_PACKAGE_PARENTS = 6


async def _go_package_module(
    dep: Dependency,
    key: LookupKey,
    catalog: Catalog | LookupFailed,
    lookups: Lookups,
    view: CheckoutAccess,
) -> tuple[Dependency, LookupKey, Catalog | LookupFailed]:
    """A ``go:`` tool named by a package path below its module: look up the module instead.

    ``go:github.com/acme/tool/cmd/tool`` is what ``go install`` takes; the proxy knows only the
    module. mise tries the path, then each parent until ``go list -m`` knows one
    (``trim_after_last_slash`` in jdx/mise ``src/backend/go.rs``); so does this, for a path
    the proxy does not know (404/410), at most ``MAX_GO_PACKAGE_PARENTS`` parents and never
    the bare host. The row then names the module as ``package_name`` and says whose package it
    is; with no module found it keeps the path's own not-found answer. Other rows as they are.
    """
    if not isinstance(catalog, PackageNotFound) or dep.datasource != "goproxy" or not is_tool(dep):
        return dep, key, catalog
    path = dep.package_name
    for _ in range(MAX_GO_PACKAGE_PARENTS):
        path = path.rpartition("/")[0]
        if "/" not in path:
            break
        parent_key = lookups.key(dep.datasource, path, view)
        found = await lookups.get(parent_key)
        if isinstance(found, PackageNotFound):
            continue
        note = f"{dep.package_name} is a package of the module {path}"
        moved = replace(
            dep, package_name=path, note="; ".join(part for part in (dep.note, note) if part)
        )
        return moved, parent_key, found
    return dep, key, catalog


def _runner_spelling(dep: Dependency, finding: Finding) -> Finding:
    """A ``runs-on`` image moves as its label: ``ubuntu-22.04`` is proposed ``ubuntu-24.04``."""
    if (
        dep.datasource == "github-runners"
        and finding.eligible is not None
        and finding.eligible != finding.current
    ):
        return replace(finding, proposed=f"{dep.package_name}-{finding.eligible}")
    return finding


def _go_toolchain_spelling(dep: Dependency, finding: Finding) -> Finding:
    """A go.mod toolchain is written ``toolchain go1.23.4``: the proposed value keeps its ``go``."""
    if dep.manager == "go_mod" and dep.dep_type == "toolchain" and finding.proposed:
        return replace(finding, proposed=f"go{finding.proposed}")
    return finding


def _go_tool_own_path(
    dep: Dependency, catalog: Catalog | LookupFailed
) -> tuple[Dependency, Catalog | LookupFailed]:
    """A mise ``go:`` tool is measured on its own module path; the new major's key is a note.

    mise installs ``go:example.com/m`` at 2.1.0 as ``go install example.com/m@v2.1.0``, which
    the go command refuses when v2 is the module ``example.com/m/v2``
    (https://go.dev/ref/mod#major-version-suffixes): a proposal the user can act on stays on
    the key's path (``goproxy.own_path_catalog``), and the row names the key that installs
    the new major, with the package path below the module kept (``go:example.com/m/v2/cmd/x``).
    Other rows, and catalogs without a newer major path, are returned as they are.
    """
    if (
        not isinstance(catalog, Catalog)
        or catalog.successor is None
        or dep.datasource != "goproxy"
        or not is_tool(dep)
    ):
        return dep, catalog
    from patchula.datasource import goproxy  # noqa: PLC0415 - lazy: start-up

    path, _, version = (catalog.successor or "").partition(" ")
    module = dep.package_name
    written = re.sub(r"\[[^\]]*\]$", "", dep.name.strip())
    tool = written.removeprefix("go:")
    below = tool[len(module) :] if written.startswith("go:") and tool.startswith(module) else ""
    # As the row shows versions (mise drops a tag's ``v``: ``v2.1.0`` → ``2.1.0``).
    shown = getattr(VERSIONINGS[dep.versioning], "shown", None)
    value = shown(version) if callable(shown) else version
    note = (
        f"{version} is the module {path}, which this key cannot install; "
        f'to move, write "go:{path}{below}" = "{value}"'
    )
    moved = replace(dep, note="; ".join(part for part in (dep.note, note) if part))
    return moved, goproxy.own_path_catalog(catalog)


async def _evaluated(
    dep: Dependency,
    catalog: Catalog,
    lookups: Lookups,
    how: tuple[ReleaseAgePolicy, datetime, str | None, LookupKey],
) -> tuple[Catalog, Finding]:
    """``lookups.evaluate`` of ``dep`` (``how``: policy, now, locked, key), its exclusions applied.

    go.mod ``exclude``: those versions are no candidates, nor latest, for this row, and the row
    names them where they changed the answer (``policy.evaluate.excluded_note``). A tool whose
    tags carry a prefix (aqua ``version_prefix``: ``jq-1.7.1``) is evaluated on those tags,
    stripped (``tools.strip_prefixes``), of those its aqua ``version_filter`` keeps
    (``tools.filter_tags``); the catalog view, the repository's, stays shared. A
    tool's proposal is written in the form declared (``tools.as_declared``: ``prefix:24``).
    A Python row with a Python bound (``policy.requires_python.python_bound``) is judged on the
    releases that install there, and says which newer ones need another Python.
    """
    catalog, finding = await _evaluated_excluding(
        dep,
        strip_prefixes(
            filter_tags(
                catalog,
                dep.version_filter,
                prefixes=dep.version_prefixes,
                pinned=dep.constraint,
            ),
            dep.version_prefixes,
            dep.version_suffixes,
        ),
        lookups,
        how,
    )
    if is_tool(dep) and finding.proposed is not None:
        # ``prefix:22`` is proposed as ``prefix:24``: what to write, in the form declared.
        finding = replace(finding, proposed=as_declared(dep.declared, finding.proposed))
    return catalog, finding


async def _evaluated_excluding(
    dep: Dependency,
    catalog: Catalog,
    lookups: Lookups,
    how: tuple[ReleaseAgePolicy, datetime, str | None, LookupKey],
) -> tuple[Catalog, Finding]:
    policy, now, locked, key = how
    if dep.datasource == "pypi" and (
        dep.requires_python or dep.markers or "!=" in (dep.constraint or "")
    ):
        return await _evaluated_python(dep, catalog, lookups, how)
    if not dep.excluded:
        return await lookups.evaluate(dep, catalog, policy, now, locked, key)
    versioning = VERSIONINGS[dep.versioning]
    # The required version itself stays in the list (else the row would call it unpublished);
    # the go command ignores a requirement on an excluded version: the row says so.
    required = (dep.constraint or "").strip()
    others = [version for version in dep.excluded if version != required]
    kept = without_excluded(catalog, others, versioning)
    evaluated, finding = await lookups.evaluate(dep, kept, policy, now, locked, key)
    notes = [finding.reason] if finding.reason else []
    if required in dep.excluded:
        notes.append(
            f"{required} itself is excluded by an exclude directive in {dep.file}: the go "
            "command ignores this requirement (go.dev/ref/mod#go-mod-file-exclude)"
        )
    said = excluded_note(catalog, others, finding.current, versioning, dep.file)
    if said is not None:
        notes.append(said)
    return evaluated, replace(finding, reason="; ".join(notes) or None)


async def _evaluated_python(
    dep: Dependency,
    catalog: Catalog,
    lookups: Lookups,
    how: tuple[ReleaseAgePolicy, datetime, str | None, LookupKey],
) -> tuple[Catalog, Finding]:
    """A PyPI row judged on the releases it can install: its Python's, and not ``!=``-excluded.

    Requires-Python: the releases that install on the lowest Python the row is installed on
    (``policy.requires_python``); ``!=`` clauses of its range: releases pip never selects for
    it (``policy.not_equal``). The pin or lock itself stays as it is, latest stays the
    registry's, and the row names what changed its answer. Imported here: ``packaging`` is
    for Python rows only (``report merge`` imports this module and no versioning).
    """
    from patchula.policy import not_equal, requires_python  # noqa: PLC0415

    policy, now, locked, key = how
    pin = VERSIONINGS[dep.versioning].exact_pin((dep.constraint or "").strip())
    keep = locked or pin
    kept = catalog
    bound = requires_python.bound_for(dep, catalog, keep)
    if bound is not None:
        kept = requires_python.bounded(catalog, bound.python, keep)
    exclusions = not_equal.clauses(dep.constraint)
    marked: list[str] = []
    if exclusions is not None:
        kept, marked = not_equal.excluding(kept, exclusions, keep)
    if bound is None and not marked:
        return await lookups.evaluate(dep, catalog, policy, now, locked, key)
    evaluated, finding = await lookups.evaluate(dep, kept, policy, now, locked, key)
    notes = [finding.reason] if finding.reason else []
    if bound is not None:
        notes.extend(requires_python.python_notes(finding, catalog, bound))
    said = not_equal.note(catalog, marked, finding.current, exclusions) if exclusions else None
    if said is not None:
        notes.append(said)
    return evaluated, replace(finding, reason="; ".join(notes) or None)


def _another_tags_pin(finding: Finding, dep: Dependency, tag: str, catalog: Catalog) -> Finding:
    """``finding`` saying whose the pin is when ``tag`` (a comment's) is not in the catalog.

    ``uses: o/r@<sha> # v9.9.9`` with no tag ``v9.9.9``: where the catalog names each tag's
    digest (``DigestTerms.catalog_digests``: GitHub) and one is the pinned commit, the row says
    so ("the pinned commit … is v4.2.2's in the tag list"): the comment is what is wrong.
    """
    if not _catalog_digests(dep) or dep.digest is None or catalog.release(tag) is not None:
        return finding
    found = catalog.version_of_digest(dep.digest)
    if found is None or found == tag:
        return finding
    note = f"the pinned {_terms(dep).digest} {dep.digest} is {found}'s in the tag list"
    return replace(finding, reason=f"{finding.reason}; {note}" if finding.reason else note)


def _info(catalog: Catalog) -> CatalogInfo:
    """Where ``catalog`` came from, for its row."""
    return CatalogInfo(
        fetched_at=catalog.fetched_at,
        reused=catalog.reused,
        source_url=catalog.source_url,
        time_source=catalog.time_source,
    )


async def _tracked(
    dep: Dependency, tag: str, lookups: Lookups, key: LookupKey, kind: str | None = None
) -> Finding:
    """The verdict of ``dep`` tracking ``tag``, a ref that is no version, by its digest.

    What the ref is (``kind``) comes from the datasource: an image tag is its ``mutable tag``;
    where the catalog names every tag (``DigestTerms.catalog_digests``: GitHub) a ref it names
    is a ``tag``, any other one the datasource's ``ref`` (a ``branch``), and simply a ``ref``
    when the catalog could not be read. A qualified ref is what its prefix says
    (``DigestTerms.qualified``: ``refs/tags/v4.2.1`` a ``tag``).
    """
    terms = _terms(dep)
    if kind is None:
        kind = next((named for prefix, named in terms.qualified if tag.startswith(prefix)), None)
    if kind is None and terms.catalog_digests:
        catalog = await lookups.get(key)
        if isinstance(catalog, LookupFailed):
            kind = "ref"
        else:
            kind = "tag" if catalog.release(tag) is not None else terms.ref
    read = await lookups.digest(key, tag)
    tracked = track_tag(tag, dep.digest, read, terms=terms, kind=kind)
    looks = getattr(VERSIONINGS[dep.versioning], "looks_like_version", None)
    if tracked.status == "up-to-date" and looks is not None and looks(tag):
        # A version-shaped tag the scheme cannot read (``1.2.3.Final``) names one release for
        # good: its digest never moves, so "up to date" would stay true however old it gets.
        why = (
            f"{tag} looks like a version but is none the {dep.versioning} versioning reads: "
            "newer tags are not compared"
        )
        tracked = replace(tracked, status="unknown", reason=f"{why}; {tracked.reason}")
    return tracked


async def _judge_pinned_digest(
    finding: Finding,
    dep: Dependency,
    tag: str,
    lookups: Lookups,
    key: LookupKey,
    *,
    mismatch: str | None = None,
) -> Finding:
    """``finding`` with ``dep``'s pinned digest compared with what ``tag`` points at now.

    When a newer tag is proposed its digest is read too (``Finding.new_digest``: for a GitHub
    commit pin, the SHA to pin for that tag), at the same time as the current tag's (requested
    at extraction already, except for a tag found from the pin). A pin that is not the tag's
    digest may be one platform's manifest of the tag's image index (``platform_digests``):
    then the tag has not moved for it, and the newer tag's digest is that platform's manifest
    of its index (renovatebot/renovate#16554). An index that could not be read leaves it
    unsure: said on the row and counted as a failed lookup (``Finding.failed_lookup``).
    """
    eligible = finding.eligible
    proposed = eligible if eligible is not None and eligible != tag else None
    lookups.request_digest(key, tag)
    if proposed is not None:
        lookups.request_digest(key, proposed)
    current = await lookups.digest(key, tag)
    new = await lookups.digest(key, proposed) if proposed is not None else None
    pinned = cast("str", dep.digest)
    terms = _terms(dep)
    platform: str | None = None
    unsure: str | None = None
    if (
        isinstance(current, str)
        and current != pinned
        and DATASOURCES[dep.datasource].platform_digests is not None
    ):
        # Not the tag's index digest: perhaps one platform's manifest inside that index.
        found = await lookups.platforms(key, tag)
        if isinstance(found, LookupFailed):
            unsure = (
                f"whether the pinned {terms.digest} is one of tag {tag}'s platform manifests "
                f"could not be read: {found.reason}"
            )
        else:
            platform = found.get(pinned)
        if platform is not None and proposed is not None:
            new = await _platform_digest(lookups, key, proposed, platform)
    judged = pinned_digest(
        finding, tag, pinned, current, new, terms=terms, mismatch=mismatch, platform=platform
    )
    if unsure is not None:
        reason = f"{judged.reason}; {unsure}" if judged.reason else unsure
        failed = f"{judged.failed_lookup}; {unsure}" if judged.failed_lookup else unsure
        judged = replace(judged, reason=reason, failed_lookup=failed)
    return judged


async def _platform_digest(
    lookups: Lookups, key: LookupKey, tag: str, platform: str
) -> str | LookupFailed:
    """The digest of ``platform``'s manifest in the index ``tag`` names, or why there is none."""
    found = await lookups.platforms(key, tag)
    if isinstance(found, LookupFailed):
        return found
    digest = next((d for d, named in found.items() if named == platform), None)
    if digest is None:
        return LookupFailed(f"tag {tag} names no {platform} manifest")
    return digest


def _lazy_times(datasource: str) -> bool:
    """Whether rows of ``datasource`` may fetch publish times while evaluated (``release_times``).

    Asked of rows only, so only datasources that have rows are imported.
    """
    return datasource in DATASOURCES and DATASOURCES[datasource].release_times is not None


# Managers that read lockfiles (their results carry a ``Lockfile``).
LOCKFILE_MANAGERS = frozenset(
    {
        "package_lock",
        "yarn_lock",
        "pnpm_lock",
        "bun_lock",
        "uv_lock",
        "poetry_lock",
        "pdm_lock",
        "pipfile_lock",
        "cargo_lock",
    }
)


# Repositories whose manifests total at most this many bytes are extracted on the event loop.
INLINE_EXTRACTION_BYTES = 64 * 1024


# The longest the event loop walks a checkout before letting other work run (seconds).
WALK_SLICE_SECONDS = 0.002


def _discover(root: Path, settings: Settings) -> tuple[Discovery, int]:
    """Walk ``root`` (blocking): its manifests and their total size in bytes."""
    found = discover(root, settings.ignore_paths, settings.managers())
    return found, _total_size(root, found)


async def _discover_sliced(root: Path, settings: Settings) -> tuple[Discovery, int]:
    """``_discover`` on the event loop, in slices of at most ``WALK_SLICE_SECONDS``.

    The one git command a walk may run (``Walk.add_tracked``) runs in a worker thread.
    """
    walk = Walk(root, settings.ignore_paths, settings.managers())
    deadline = time.perf_counter() + WALK_SLICE_SECONDS
    for _ in walk.steps():
        if time.perf_counter() >= deadline:
            await anyio.lowlevel.checkpoint()
            deadline = time.perf_counter() + WALK_SLICE_SECONDS
    if walk.asks_git:  # ``git ls-files`` (bounded) waits off the event loop
        await anyio.to_thread.run_sync(walk.add_tracked)
    return walk.result, _total_size(root, walk.result)


# The lockfile managers that resolve each manifest manager's dependencies.
_LOCKS_OF = {
    "package_json": ("package_lock", "yarn_lock", "pnpm_lock", "bun_lock"),
    "cargo_toml": ("cargo_lock",),
    "pyproject": ("uv_lock", "poetry_lock", "pdm_lock"),
    "pipfile": ("pipfile_lock",),
}

# The endings of a file a user names as a target that no manager matches by name, read as a
# pip requirements file: pip reads any file given to ``-r``, whatever its name.
_REQUIREMENTS_SUFFIXES = (".txt", ".in", ".pip")


def _discover_file(root: Path, rel: str, settings: Settings) -> Discovery:
    """The discovery of a one-file target ``rel`` (below ``root``), without walking the checkout.

    The file is read by the enabled managers whose name rule matches it, else, ending in
    ``.txt``, ``.in`` or ``.pip``, as a pip requirements file; naming a file is asking for it,
    so ignore globs and ``.gitignore`` do not apply. A ``X.in`` brings the ``X.txt`` beside it,
    pip-compile's default output, read as its lockfile. Its lockfiles (``package-lock.json``,
    ``Cargo.lock``, ``uv.lock``, ``poetry.lock``, and those of formats not read yet) are looked
    for in its directory and every one above it up to ``root``; the lockfile matching then
    picks the one that covers it, as in a whole-checkout scan. A file no enabled manager reads
    is refused with that reason.
    """
    from patchula.manager import requirements_txt  # noqa: PLC0415 - lazy: start-up

    enabled = settings.managers()
    found = Discovery()
    managers = [m for m in enabled if RULES[m].matches(rel)]
    if not managers and rel.endswith(_REQUIREMENTS_SUFFIXES) and requirements_txt.ID in enabled:
        managers = [requirements_txt.ID]
    if not managers:
        found.refused.append((rel, "no enabled manager reads this file"))
        return found
    found.files.extend(Found(rel, manager) for manager in managers)
    if requirements_txt.ID in managers and rel.endswith(".in"):
        # pip-compile's default output beside it is the source's lockfile (``_PipCompiled``).
        output = rel[: -len(".in")] + ".txt"
        if (root / output).is_file():
            found.files.append(Found(output, requirements_txt.ID))
    locks = [lock for m in managers for lock in _LOCKS_OF.get(m, ()) if lock in enabled]
    ecosystems = {RULES[lock].datasource for lock in locks}
    directory = posixpath.dirname(rel)
    while True:
        try:
            names = sorted(e.name for e in os.scandir(root / directory) if e.is_file())
        except OSError:
            names = []
        for name in names:
            path = posixpath.join(directory, name)
            found.files.extend(
                Found(path, lock) for lock in locks if path != rel and RULES[lock].matches(path)
            )
            if UNREAD_LOCKFILES.get(name) in ecosystems:
                found.unread_lockfiles[path] = UNREAD_LOCKFILES[name]
        if not directory:
            break
        directory = posixpath.dirname(directory)
    if "package_json" in managers and "package_json" in enabled:
        found.files.extend(_npm_workspace_manifests(root, rel))
    found.files.sort(key=lambda f: (f.path.count("/"), f.path, f.manager))
    return found


# The most member manifests a file target's npm workspace is read with (a bound on the glob).
_MAX_WORKSPACE_MANIFESTS = 2000


def _npm_workspace_manifests(root: Path, rel: str) -> list[Found]:
    """The ``package.json`` files of the npm workspace a ``package.json`` target is a member of.

    The nearest ``package.json`` above ``rel`` (within ``root``) whose ``workspaces`` globs
    list ``rel``'s directory, and the member manifests those globs match (outside
    ``node_modules``; at most ``_MAX_WORKSPACE_MANIFESTS``). They are extracted with the target
    but not reported: the root's globs say which lockfile covers the member (yarn classic) and
    which of its dependencies are workspace packages, as when the member's directory is the
    target. Empty when the target is in no workspace.
    """
    directory = posixpath.dirname(rel)
    parent = directory
    while parent:
        parent = posixpath.dirname(parent)
        below = directory[len(parent) + 1 :] if parent else directory
        globs, _ = _workspace_globs(root / parent, _WORKSPACE_KINDS[1])  # ``workspaces``
        if not isinstance(globs, list) or not _globs_match(globs, below):
            continue
        found = [Found(posixpath.join(parent, "package.json"), "package_json")]
        seen = {rel, found[0].path}
        for pattern in globs:
            cleaned = (
                pattern.strip().removeprefix("./").rstrip("/") if isinstance(pattern, str) else ""
            )
            if not cleaned or cleaned.startswith("!"):
                continue
            for manifest in sorted((root / parent).glob(f"{cleaned}/package.json")):
                member = manifest.relative_to(root).as_posix()
                if "node_modules" in member.split("/") or member in seen:
                    continue
                if not _globs_match(
                    globs, posixpath.relpath(posixpath.dirname(member), parent or ".")
                ):
                    continue  # excluded by a ``!`` glob
                seen.add(member)
                found.append(Found(member, "package_json"))
                if len(found) > _MAX_WORKSPACE_MANIFESTS:
                    return found
        return found
    return []


def _total_size(root: Path, found: Discovery) -> int:
    size = 0
    for item in found.files:
        try:
            size += (root / item.path).stat().st_size
        except OSError:
            continue  # reported by the extraction that tries to read it
    return size


def _extract_files(
    found: Discovery,
    reader: Callable[[str], str],
    repo: RepoResult,
    scope: _Scope,
    tools: ToolMapping | None,
) -> list[tuple[str, ExtractResult]]:
    """Extract every file ``found`` lists: ``(path, result)`` of each that could be read.

    Lists the files ``scope`` shows in ``repo.files``, notes unreadable lockfiles in
    ``found.unread_lockfiles`` and warns of the manifests never read
    (``_unread_manifest_warnings``).
    """
    results: list[tuple[str, ExtractResult]] = []
    for item in found.files:
        shown = scope.reports(item.path) or (
            item.manager in LOCKFILE_MANAGERS and scope.covers(item.path)
        )
        if shown:
            repo.files.append(item.path)
        # A file outside the scope is still extracted (workspace siblings), its problems unshown.
        result = _extract_file(item, reader, repo if shown else RepoResult("", "", None), tools)
        if item.manager in LOCKFILE_MANAGERS and (result is None or result.lockfile is None):
            # An unreadable lockfile: its manifests' rows say current came from the range.
            found.unread_lockfiles[item.path] = RULES[item.manager].datasource
        if result is not None:
            results.append((item.path, result))
    _unread_manifest_warnings(found, results, repo, scope)
    return results


def _extract_repo(
    source: Path | Callable[[str], str],
    settings: Settings,
    repo: RepoResult,
    found: Discovery,
    scope: _Scope = _WHOLE,
    lockfiles_out: list[Lockfile] | None = None,
) -> list[_Extracted]:
    """Extract one discovered repository (blocking).

    ``source`` reads the repository's files: a checkout root (read by ``_Reader``), or any
    reader ``rel -> text`` that raises ``ManifestError`` naming the file as ``_Reader`` does
    (a remote repository's blobs held in memory), so every source gives the same rows and
    problems. Everything found is extracted (a member's workspace siblings and root still
    count), but only the rows and problems of files ``scope`` reports are kept, and only those
    files and the lockfiles above them are listed. ``lockfiles_out`` receives the lockfiles
    read (``cache warm`` pins transitive dependencies with them).

    What it gives is redacted (``_redacted``): no secret a manifest holds reaches a record, the
    cache, the report or a log through its rows or problems.
    """
    start = len(repo.problems)
    _walk_warnings(found, repo, scope)
    reader = _Reader(source, settings.max_file_bytes) if isinstance(source, Path) else source
    # Config's [tool-registry] over the shipped mise registry mapping (``tools``).
    results = _extract_files(found, reader, repo, scope, with_overrides(settings.tool_registry))
    lockfiles = _one_npm_lockfile_per_directory(
        _with_member_globs([r.lockfile for _, r in results if r.lockfile is not None], results),
        results,
        repo,
        set(repo.files),
    )
    (lockfiles_out if lockfiles_out is not None else []).extend(lockfiles)
    lock_indexes: _LockIndexes = {}
    # npm workspace packages are installed from the checkout, not the registry.
    npm_workspaces = _NpmWorkspaces.of(results)
    out: list[_Extracted] = []
    # A file pulled in by another's -r/-c is also discovered on its own: report each row and
    # each problem once. Only an identical dependency is the same row: one line may declare a
    # name twice (devDependencies and peerDependencies of a minified package.json, numpy under
    # two environment markers), and each declaration is a row of its own.
    seen: set[Dependency] = set()
    seen_problems: set[ManifestProblem] = set(repo.problems)
    inheritors = _workspace_inheritors(results)
    constraints = _PipConstraints.of(results)
    compiled = _pip_compiled(results, found, repo, scope, lockfiles_out)
    lock_pythons = {
        lock.file: lock.requires_python for lock in lockfiles if lock.requires_python is not None
    }
    listed = set(repo.files)
    for path, result in results:
        if path in listed:  # reported, or a lockfile above the scope
            repo.problems.extend(_new_problems(result.problems, seen_problems))
        if not scope.reports(path):
            continue
        for dep in result.dependencies:
            if dep in seen or constraints.not_a_row(dep):
                continue
            seen.add(dep)
            paired = compiled.row(dep, path)
            if paired is not None:
                if not isinstance(paired, bool):
                    out.append(paired)
                continue
            constrained = _tool_row(dep) or constraints.apply(dep, repo.problems)
            if isinstance(constrained, _Extracted):
                out.append(constrained)
                continue
            dep = constrained  # noqa: PLW2901 - the row is the constrained dependency
            local = npm_workspaces.skip_reason(dep)
            if local is not None:
                out.append(_Extracted(replace(dep, skip_reason=local)))
                continue
            try:
                locked, lock_file, note = _locked_version(
                    dep, result.project_name, lockfiles, lock_indexes
                )
            except Exception as exc:  # noqa: BLE001 - the per-file guard: current from the range
                message = _internal("matching lockfiles for", dep.name, exc)
                repo.problems.append(ManifestProblem(dep.file, dep.line, message))
                locked, lock_file, note = None, None, None
            if locked is None and note is None:
                locked, lock_file, note = _unlocked(dep, compiled, found)
            forks = _locked_forks(dep, locked, lock_file, lockfiles, lock_indexes)
            # A forked row's note is written when it is judged (``_forked``).
            out.append(
                _Extracted(
                    _with_lock_python(dep, lock_file, lock_pythons),
                    locked,
                    lock_file,
                    _with_inheritors(None if forks else note, dep, inheritors),
                    forks,
                )
            )
    repo.problems[start:] = [_redacted_problem(p) for p in repo.problems[start:]]
    return [_redacted(item) for item in out]


def _unlocked(
    dep: Dependency, compiled: _PipCompiled, found: Discovery
) -> tuple[str | None, str | None, str | None]:
    """``(locked, lock file, note)`` of a row no lockfile of its tools gave a version.

    A requirements file compiled from its project (pip-compile, ``uv pip compile``) pins it;
    else a lockfile of a format not read yet beside it is named ("from the range: … not read").
    """
    locked, lock_file, note = compiled.project_lock(dep)
    if locked is None and note is None and not _installed_unlocked(dep):
        unread = _nearest_unread(dep, found.unread_lockfiles)
        if unread is not None:
            note = f"from the range: {unread} not read"
    return locked, lock_file, note


def _redacted_problem(problem: ManifestProblem) -> ManifestProblem:
    """``problem`` with its message through ``redact_text`` (itself when nothing changed)."""
    message = redact_text(problem.message)
    return problem if message == problem.message else replace(problem, message=message)


def _redacted(item: _Extracted) -> _Extracted:
    """``item`` with every secret its text fields hold redacted (``redact_text``).

    A manifest may hold a secret in a row's text: a direct URL with userinfo
    (``pkg @ https://u:p@host/x.whl``), a git URL with a token (``git+https://TOKEN@github.com/…``),
    a token in a ref (``github:o/r#ghp_…``). The declared value, constraint, markers and notes
    are redacted once here, after the lockfiles were matched (a yarn.lock entry is keyed by the
    declared value as written), and before anything stores or shows the row; the name and
    package name are identities looked up as they are. Rows without a secret are kept as they
    are (the same object).
    """
    dep = item.dep
    fields = {}
    for name, value in (
        ("declared", dep.declared),
        ("constraint", dep.constraint),
        ("markers", dep.markers),
        ("note", dep.note),
    ):
        if value is not None:
            shown = redact_text(value)
            if shown != value:
                fields[name] = shown
    note = redact_text(item.note) if item.note is not None else None
    if not fields and note == item.note:
        return item
    return _Extracted(
        replace(dep, **fields) if fields else dep, item.locked, item.lock_file, note, item.forks
    )


def _with_lock_python(
    dep: Dependency, lock_file: str | None, lock_pythons: dict[str, str]
) -> Dependency:
    """``dep`` judged for the Python its lockfile was resolved for, when it names none itself.

    A Pipfile without ``[requires]`` whose ``Pipfile.lock`` says (``_meta.requires``, pipenv's
    copy of that table when it locked) was locked for that Python: its locked versions are
    what installs there. The manifest's own ``requires_python`` always wins. ``lock_pythons``
    maps each lockfile naming a Python (``Lockfile.requires_python``) to it.
    """
    if dep.requires_python is not None or lock_file is None:
        return dep
    python = lock_pythons.get(lock_file)
    return dep if python is None else replace(dep, requires_python=python)


# package.json override tables only the workspace root's manifest applies.
_ROOT_ONLY_OVERRIDES = frozenset({"overrides", "resolutions", "pnpm.overrides"})


class _NpmWorkspaces(msgspec.Struct, frozen=True):
    """The npm workspaces of a checkout: each root declaring ``workspaces``, and its members.

    A root is a ``package.json`` with ``workspaces`` globs; its members are the named
    ``package.json`` files below it whose directories the globs match. npm, yarn and bun link
    a workspace's own packages into it (docs.npmjs.com "workspaces"): a dependency declared
    by the root or a member that names another member is installed from the checkout. A
    manifest outside every workspace, or a name no member of its own workspace bears, is the
    registry's package, whatever other manifests of the checkout are named. (pnpm 9 and later
    link a workspace package only for the ``workspace:`` protocol by default, which the
    manager already skips.)
    """

    # Root directory ("" for the checkout's) -> (its globs, member name -> (manifest path,
    # its version)).
    roots: dict[str, tuple[list[str], dict[str, tuple[str, str | None]]]]

    @classmethod
    def of(cls, results: list[tuple[str, ExtractResult]]) -> _NpmWorkspaces:
        manifests = [(path, r) for path, r in results if posixpath.basename(path) == "package.json"]
        roots: dict[str, tuple[list[str], dict[str, tuple[str, str | None]]]] = {}
        for path, result in manifests:
            if result.workspaces:
                roots[posixpath.dirname(path)] = (list(result.workspaces), {})
        for path, result in manifests:
            if not result.project_name:
                continue
            directory = posixpath.dirname(path)
            for root, (globs, members) in roots.items():
                rel = _below(directory, root)
                if rel and _globs_match(globs, rel):
                    members.setdefault(result.project_name, (path, result.project_version))
        return cls(roots)

    def skip_reason(self, dep: Dependency) -> str | None:
        """Why ``dep`` is not looked up on the registry for its workspace, else ``None``.

        A workspace package it names (``member``), or an override of a member that npm, yarn
        and pnpm never apply (``ignored_override``).
        """
        where = self.member(dep) if dep.skip_reason is None and dep.datasource == "npm" else None
        if where is not None:
            return f"workspace package ({where})"
        return self.ignored_override(dep)

    def ignored_override(self, dep: Dependency) -> str | None:
        """Why an override ``dep`` declares in a workspace member is never applied, else ``None``.

        npm reads ``overrides`` only in the root ``package.json`` ("Overrides are only
        considered in the root package.json file for a project", docs.npmjs.com, package.json
        "overrides"); yarn ``resolutions`` and ``pnpm.overrides`` likewise apply from the
        workspace root only. A member's entries change no install: skipped, naming the root.
        """
        if dep.manager != "package_json" or dep.dep_type not in _ROOT_ONLY_OVERRIDES:
            return None
        directory = posixpath.dirname(dep.file)
        for root, (globs, _) in self.roots.items():
            rel = _below(directory, root)
            if rel and _globs_match(globs, rel):
                where = posixpath.join(root, "package.json")
                return (
                    f"{dep.dep_type} of a workspace member are ignored: only the root's"
                    f" ({where}) apply"
                )
        return None

    def member(self, dep: Dependency) -> str | None:
        """The manifest of the workspace package ``dep`` names, or ``None`` (the registry's)."""
        directory = posixpath.dirname(dep.file)
        for root, (globs, members) in self.roots.items():
            rel = _below(directory, root)
            if rel is None or (rel and not _globs_match(globs, rel)):
                continue  # ``dep`` is declared outside this workspace
            found = members.get(dep.package_name)
            if found is not None and found[0] != dep.file and _links(found[1], dep.constraint):
                return found[0]
        return None


def _links(version: str | None, constraint: str | None) -> bool:
    """Whether a workspace links a member at ``version`` for a dependency's ``constraint``.

    npm (arborist) and yarn link a workspace package when its version satisfies the range,
    and install the registry's package otherwise: a member ``1.1.0`` does not serve
    ``^2.0.0``. A member without a version, or a range npm semver does not read (a tag, a
    URL: those rows are skipped or looked up as before), counts as linked.
    """
    if version is None or not constraint:
        return True
    scheme = VERSIONINGS["npm"]
    if not scheme.is_valid(version) or not scheme.is_valid_constraint(constraint):
        return True
    return scheme.matches(version, constraint)


def _below(directory: str, root: str) -> str | None:
    """``directory`` relative to ``root`` ("" when equal), ``None`` when not inside it."""
    if directory == root:
        return ""
    if not root:
        return directory
    return directory[len(root) + 1 :] if directory.startswith(root + "/") else None


def _with_member_globs(
    lockfiles: list[Lockfile], results: list[tuple[str, ExtractResult]]
) -> list[Lockfile]:
    """``lockfiles`` with the workspace globs of the ``package.json`` beside each yarn lock.

    A yarn classic lockfile does not list the workspaces it covers; yarn takes them from the
    root manifest's ``workspaces``, and so does the matching.
    """
    globs = {
        posixpath.dirname(path): result.workspaces
        for path, result in results
        if result.workspaces and posixpath.basename(path) == "package.json"
    }
    return [
        replace(lock, member_globs=globs[posixpath.dirname(lock.file)])
        if lock.manager in _DESCRIPTOR_LOCKED and posixpath.dirname(lock.file) in globs
        else lock
        for lock in lockfiles
    ]


# The lockfile each `packageManager` tool writes (Corepack's names).
_LOCK_OF_TOOL = {"npm": "package_lock", "yarn": "yarn_lock", "pnpm": "pnpm_lock", "bun": "bun_lock"}


def _one_npm_lockfile_per_directory(
    lockfiles: list[Lockfile],
    results: list[tuple[str, ExtractResult]],
    repo: RepoResult,
    listed: set[str],
) -> list[Lockfile]:
    """``lockfiles`` with one npm lockfile format per directory; a warning names the others.

    Only one tool installs a directory's ``node_modules``: the one its ``package.json``
    names in ``packageManager`` (Corepack: ``pnpm@9.1.0``) when one of its lockfiles is
    there, else the first in ``_LOCKS_OF`` order (``package-lock.json``, ``yarn.lock``,
    ``pnpm-lock.yaml``, ``bun.lock``). The warning stands on the chosen lockfile when listed.
    """
    by_directory: dict[str, list[Lockfile]] = {}
    for lock in lockfiles:
        if lock.ecosystem == "npm":
            by_directory.setdefault(posixpath.dirname(lock.file), []).append(lock)
    dropped: set[int] = set()
    for directory, locks in by_directory.items():
        order = _LOCKS_OF["package_json"]
        managers = sorted({lock.manager for lock in locks}, key=order.index)
        if len(managers) < 2:  # noqa: PLR2004 - several formats only
            continue
        locks.sort(key=lambda lock: order.index(lock.manager))  # stable: same format, same order
        manifest = posixpath.join(directory, "package.json")
        tool = _package_manager(results, manifest)
        chosen = _LOCK_OF_TOOL.get(tool or "")
        why = f"`packageManager` names {tool}" if chosen in managers else "the first in order"
        if chosen not in managers:
            chosen = managers[0]
        kept = [lock for lock in locks if lock.manager == chosen]
        others = [lock.file for lock in locks if lock.manager != chosen]
        dropped.update(id(lock) for lock in locks if lock.manager != chosen)
        if kept[0].file in listed or manifest in listed:
            names = ", ".join(others)
            message = (
                f"several lockfiles cover {manifest}: {kept[0].file} is read ({why}), "
                f"{names} ignored"
            )
            repo.problems.append(ManifestProblem(kept[0].file, None, message, "warning"))
    return [lock for lock in lockfiles if id(lock) not in dropped]


def _package_manager(results: list[tuple[str, ExtractResult]], manifest: str) -> str | None:
    """The tool the ``packageManager`` of ``manifest`` names (``pnpm``), or ``None``."""
    for path, result in results:
        if path == manifest:
            for dep in result.dependencies:
                if dep.dep_type == "packageManager":
                    return dep.name
    return None


def _tool_row(dep: Dependency) -> _Extracted | None:
    """A tool's row as extracted: mise/asdf install it on their own, never from the checkout.

    No lockfile, pip constraint or workspace package of the checkout applies to it (an
    ``npm:widget-cli`` tool named like a workspace package is still the registry's package).
    ``None`` for every other row.
    """
    return _Extracted(dep) if is_tool(dep) else None


def _walk_warnings(found: Discovery, repo: RepoResult, scope: _Scope) -> None:
    """Add what the walk refused and the lockfiles it cannot read, in or above ``scope``.

    The files ``ignore-paths`` kept out are listed too (``RepoResult.ignored``), those in
    ``scope``: not a problem, but a report must not look complete when it is not.
    """
    repo.ignored.extend(path for path in found.ignored if scope.reports(path))
    repo.ignored_complete = repo.ignored_complete and found.ignored_complete
    for path, reason in found.refused:
        if scope.covers(path):
            repo.problems.append(ManifestProblem(path, None, reason, severity="warning"))
    message = (
        "lockfile format not read yet: current versions of its manifests "
        "are resolved from their ranges"
    )
    for path in found.unread_lockfiles:
        if scope.covers(path):
            reason = UNREAD_REASONS.get(posixpath.basename(path), message)
            repo.problems.append(ManifestProblem(path, None, reason, severity="warning"))


# Rows that declare what building a project needs, not what it requires: they do not stand for
# the requirements a setup.py beside them declares.
_BUILD_TYPES = frozenset({("pyproject", "build-system"), ("setup_cfg", "setup")})


def _unread_manifest_warnings(
    found: Discovery, results: list[tuple[str, ExtractResult]], repo: RepoResult, scope: _Scope
) -> None:
    """Warn of each ``setup.py`` (in ``scope``) whose directory declares no requirement else.

    setuptools runs ``setup.py`` to learn its ``install_requires``; the scan never runs or
    parses code (Renovate's setup.py support ran it too, then read it by regular expression),
    so a project declaring its requirements there alone would report nothing and look up to
    date. When no other manifest of its directory (``pyproject.toml``, ``setup.cfg``, a
    requirements file …) gave a Python row beyond build requirements, the report says the
    file was not read, as a warning at the file.
    """
    declared = {
        posixpath.dirname(path)
        for path, result in results
        if any(
            dep.datasource == "pypi" and (dep.manager, dep.dep_type) not in _BUILD_TYPES
            for dep in result.dependencies
        )
    }
    for path in found.unread_manifests:
        if scope.reports(path) and posixpath.dirname(path) not in declared:
            message = (
                "setup.py is not read (it is executable code): the requirements it declares"
                " are not in this report; declare them in pyproject.toml [project] or"
                " setup.cfg [options] to have them scanned"
            )
            repo.problems.append(ManifestProblem(path, None, message, "warning"))


def _new_problems(
    problems: Sequence[ManifestProblem], seen: set[ManifestProblem]
) -> list[ManifestProblem]:
    """The problems not ``seen`` yet (added to it): each is reported once."""
    new = [problem for problem in dict.fromkeys(problems) if problem not in seen]
    seen.update(new)
    return new


def constraints_only_files(files: Sequence[str]) -> list[str]:
    """The ``files`` of a repository that are pip constraints files by their name.

    The requirements manager reads a file named as constraints (``constraints.txt``,
    ``requirements/constraints-dev.in``: ``is_constraints_name``) as a constraints file even on
    its own, so it is listed but gives no rows: pip installs nothing from a constraints file
    (https://pip.pypa.io/en/stable/user_guide/#constraints-files); its pins are the current
    version of the requirements that read it with ``-c``. The report says so for each.
    """
    matches = RULES["requirements_txt"].matches
    return [path for path in files if matches(path) and is_constraints_name(path)]


class _PipConstraints(msgspec.Struct):
    """pip constraints (``-c`` files and files named as constraints) of one repository.

    pip installs nothing from a constraints file; its entries limit what the requirements
    install (https://pip.pypa.io/en/stable/user_guide/#constraints-files). So they are never
    rows: an exact pin ``==V`` makes ``V`` the current version of the requirement it applies
    to, any other specifier narrows the requirement's range.
    """

    # Each requirement: the constraint entries that apply to it (same walk, same package).
    applying: dict[Dependency, list[Dependency]]

    @classmethod
    def of(cls, results: list[tuple[str, ExtractResult]]) -> _PipConstraints:
        applying: dict[Dependency, list[Dependency]] = {}
        for _, result in results:
            # A manager's id is its module's name: compared without importing the module.
            pip = [d for d in result.dependencies if d.manager == "requirements_txt"]
            entries = [d for d in pip if d.dep_type == "constraint"]
            usable = [d for d in entries if d.skip_reason is None and d.constraint]
            for dep in pip:
                if dep.dep_type == "constraint" or dep.skip_reason is not None:
                    continue
                for entry in usable:
                    same = entry.package_name == dep.package_name
                    if same and entry.markers in {None, dep.markers}:
                        found = applying.setdefault(dep, [])
                        if entry not in found:
                            found.append(entry)
        return cls(applying)

    @staticmethod
    def not_a_row(dep: Dependency) -> bool:
        """Whether ``dep`` is a constraint entry: read by ``-c``, or of a constraints file.

        A requirements file in its own right that another file reads with ``-c`` (pip-tools'
        layered requirements: ``-c requirements.txt`` in ``dev-requirements.in``) still gives
        its own rows when discovered: ``pip install -r requirements.txt`` installs it, and its
        own walk's entries are requirements; only the including walk's copies are constraints.
        A file named as a constraints file (``is_constraints_name``) is read as one on its own
        too, so it gives no rows (``constraints_only_files`` lists it for the report).
        """
        return dep.manager == "requirements_txt" and dep.dep_type == "constraint"

    def apply(self, dep: Dependency, problems: list[ManifestProblem]) -> Dependency | _Extracted:
        """Return ``dep`` narrowed by its constraints, or its row pinned by one.

        A pin that the requirement does not admit makes pip fail ("ResolutionImpossible"): it
        is a problem at the requirement, and the row keeps its own range.
        """
        if not self.applying:
            return dep  # no constraints files (the usual case): no hash of ``dep`` either
        entries = self.applying.get(dep, [])
        scheme = VERSIONINGS.get(dep.versioning)
        if not entries or scheme is None:
            return dep
        ranges: list[str] = []
        # ``===V`` matches only a release spelled ``V`` (PEP 440 arbitrary equality): it
        # narrows the range, whose pick compares the strings, instead of pinning the value.
        spelled = getattr(scheme, "spelled_pin", None)
        for entry in entries:
            where = f"{entry.file}:{entry.line}" if entry.line else entry.file
            pin = scheme.exact_pin(entry.constraint or "")
            if pin is not None and spelled is not None and spelled(entry.constraint or ""):
                pin = None
            if pin is None:
                ranges.append(entry.constraint or "")
            elif not _admits(dep, pin):
                message = (
                    f"constraint {entry.name}{entry.constraint} ({where}) conflicts with"
                    f" {dep.name}{dep.constraint}: pip cannot install both"
                )
                problems.append(ManifestProblem(dep.file, dep.line, message))
            elif scheme.exact_pin((dep.constraint or "").strip()) is None:
                return _Extracted(dep, pin, entry.file, f"pinned by the constraint in {where}")
        if not ranges:
            return dep
        narrowed = ",".join(part for part in (dep.constraint, *ranges) if part)
        return replace(dep, constraint=narrowed)


# Managers whose files pip-compile and ``uv pip compile`` compile besides requirements files
# (pip-tools' METADATA_FILENAMES; setup.py is never read).
_PROJECT_SOURCES = frozenset({"pyproject", "setup_cfg"})


def _compiled_project_type(dep: Dependency) -> str | None:
    """``required`` or ``optional`` for a project row a compile of its file installs, else None.

    pyproject ``project`` and setup.cfg ``install`` rows are always compiled; ``optional:<x>``
    and ``extra:<x>`` rows with ``--extra x``/``--all-extras``, PEP 735 ``group:<x>`` rows
    with uv's ``--group``. Build requirements and tool tables are not what ``pip-compile
    pyproject.toml`` resolves.
    """
    if dep.manager not in _PROJECT_SOURCES:
        return None
    if dep.dep_type in {"project", "install"}:
        return "required"
    if dep.dep_type.startswith(("optional:", "extra:", "group:")):
        return "optional"
    return None


def _pip_compiled(
    results: list[tuple[str, ExtractResult]],
    found: Discovery,
    repo: RepoResult,
    scope: _Scope,
    lockfiles_out: list[Lockfile] | None,
) -> _PipCompiled:
    """Pair the repository's compiled requirements files (``_PipCompiled``).

    A compiled file of a reported source is listed among the repository's files, as the
    lockfiles above a scope are, and given to ``cache warm`` as a lockfile (``lockfiles_out``).
    """
    compiled = _PipCompiled.of(results, {item.path: item.manager for item in found.files})
    if lockfiles_out is not None:
        lockfiles_out.extend(compiled.lockfiles())
    for output, named in compiled.sources.items():
        if output not in repo.files and any(scope.reports(source) for source in named):
            repo.files.append(output)
    return compiled


class _PipCompiled(msgspec.Struct):
    """Requirements files pip-compile or ``uv pip compile`` wrote, paired with their sources.

    A compiled file (``requirements.txt``) is to its source (``requirements.in``) what a
    lockfile is to its manifest. It is paired with the sources its header's command names
    (``pip-compile --output-file=requirements.txt requirements.in``, ``uv pip compile
    requirements.in -o requirements.txt``), resolved from the directory the command ran in as
    Renovate's pip-compile manager infers it (the output's directory less the ``-o`` path's own
    directories; else the output's directory, else the root), and, failing a header that
    names sources, by pip-compile's default output name, ``X.in`` → ``X.txt`` beside it (as
    Dependabot pairs them). A header written for another file name (``-o`` names another
    basename) pairs by name only.

    A source's rows take their current version from the compiled file's ``==`` pin of the same
    package (judged at the oldest when the compiled files pin several: one per environment
    marker, or one source compiled for several platforms); the compiled file's rows of packages
    its sources declare are not rows of their own (reported once, as the source's row), and its
    other pins, the dependencies of dependencies (``# via flask``), are skipped rows of type
    ``indirect``, as Renovate's pip-compile manager leaves indirect dependencies disabled: they
    move when the file is compiled again. A file paired by name alone that has neither header
    nor ``# via`` annotations keeps those other pins as rows: nothing says they are indirect.
    """

    # Compiled file -> its paired sources (requirements files this repository read).
    sources: dict[str, tuple[str, ...]]
    # Source file -> the compiled files paired with it, in path order.
    outputs: dict[str, list[str]]
    # Compiled file -> package name -> its exact pins there (rows of that file).
    pins: dict[str, dict[str, list[Dependency]]]
    # Compiled file -> package names the walks of its sources declare (their includes too).
    direct: dict[str, set[str]]
    # Compiled file -> requirement line -> its ``# via`` entries.
    via: dict[str, dict[int, tuple[str, ...]]]
    # Compiled file -> the tool that wrote it, for the notes (``pip-compile``, ``uv``).
    tools: dict[str, str]
    # Compiled file -> the packages pip-compile left out of it as unsafe (``# pip``).
    unsafe: dict[str, tuple[str, ...]]

    @classmethod
    def of(
        cls, results: list[tuple[str, ExtractResult]], managers: Mapping[str, str]
    ) -> _PipCompiled:
        """Pair the compiled requirements files of one repository's ``results`` with sources."""
        pip = {
            path: result
            for path, result in results
            if managers.get(path) == "requirements_txt" or result.compiled is not None
        }
        # What a compile command may name: requirements files and project metadata.
        readable = {
            path: result
            for path, result in results
            if path in pip or managers.get(path) in _PROJECT_SOURCES
        }
        sources: dict[str, tuple[str, ...]] = {}
        for path, result in pip.items():
            header = result.compiled
            if header is None or header.custom or not header.sources:
                continue
            named = _compile_sources(path, header.sources, header.output, readable)
            if named:
                sources[path] = named
        claimed = {source for named in sources.values() for source in named}
        for path in pip:
            if not path.endswith(".in") or path in claimed:
                continue
            output = path[: -len(".in")] + ".txt"
            if output in pip and output not in sources and _may_name(pip[output], path):
                sources[output] = (path,)
        # A file compiled from another compiled file (``pip-compile requirements.txt -o
        # lock.txt``) is a source there: its own rows stay rows, locked by its output.
        for output in [o for o in sources if any(o in named for named in sources.values())]:
            del sources[output]
        if not sources:
            return cls({}, {}, {}, {}, {}, {}, {})
        outputs: dict[str, list[str]] = {}
        for output, named in sorted(sources.items()):
            for source in named:
                outputs.setdefault(source, []).append(output)
        pins: dict[str, dict[str, list[Dependency]]] = {}
        direct: dict[str, set[str]] = {}
        via: dict[str, dict[int, tuple[str, ...]]] = {}
        tools: dict[str, str] = {}
        unsafe: dict[str, tuple[str, ...]] = {}
        pep440 = VERSIONINGS["pep440"]
        for output, named in sources.items():
            own: dict[str, list[Dependency]] = {}
            for dep in pip[output].dependencies:
                exact = pep440.exact_pin((dep.constraint or "").strip())
                if dep.file == output and dep.skip_reason is None and exact is not None:
                    own.setdefault(dep.package_name, []).append(dep)
            pins[output] = own
            direct[output] = {
                dep.package_name
                for source in named
                for dep in readable[source].dependencies
                if dep.dep_type == "requirements" or _compiled_project_type(dep) is not None
            }
            header = pip[output].compiled
            via[output] = dict(header.via) if header is not None else {}
            # "" when paired by name alone: neither a header nor annotations say it was
            # compiled, so its other pins may be written by hand and stay rows.
            tools[output] = header.tool or "pip-compile" if header is not None else ""
            unsafe[output] = header.unsafe if header is not None else ()
        return cls(sources, outputs, pins, direct, via, tools, unsafe)

    def lockfiles(self) -> list[Lockfile]:
        """Each compiled file as the lockfile of its pins, for ``cache warm`` (``_pinned``)."""
        pep440 = VERSIONINGS["pep440"]
        return [
            Lockfile(
                file=output,
                manager="requirements_txt",
                ecosystem="pypi",
                packages=tuple(
                    LockedPackage(name, cast("str", pep440.exact_pin(dep.constraint or "")))
                    for name, deps in pins.items()
                    for dep in deps
                ),
            )
            for output, pins in self.pins.items()
        ]

    def project_lock(self, dep: Dependency) -> tuple[str | None, str | None, str | None]:
        """``(version, compiled file, note)`` of a project row a compile command named.

        A ``pyproject.toml`` or ``setup.cfg`` row; ``(None, None, None)`` when no compiled
        file names its file as a source. ``pip-compile pyproject.toml`` and ``uv pip compile
        pyproject.toml`` compile the project's dependencies, and its extras when asked
        (``--extra``, ``--all-extras``): a dependency the compiled file lacks is stale only for
        the project's own table (an extra's may simply not have been asked for).
        """
        kind = _compiled_project_type(dep)
        outputs = self.outputs.get(dep.file)
        if kind is None or not outputs or dep.skip_reason is not None:
            return None, None, None
        if kind == "optional" and not any(dep.package_name in self.pins[o] for o in outputs):
            return None, None, None
        paired = self._source_row(dep, outputs)
        return paired.locked, paired.lock_file, paired.note

    def row(self, dep: Dependency, walk: str) -> Extracted | bool | None:
        """What pairing makes of ``dep``, found in the walk of the file ``walk``.

        An ``Extracted`` (a source's row with its compiled pin, or a compiled file's indirect
        pin, skipped); ``True`` when it is no row (a compiled pin of a package a source
        declares: reported as the source's row); ``None`` when pairing does not concern it.
        """
        if not self.sources or dep.manager != "requirements_txt":
            return None
        if dep.file in self.sources:
            return self._compiled_row(dep, dep.file)
        outputs = self.outputs.get(dep.file) or self.outputs.get(walk)
        if not outputs or dep.dep_type != "requirements" or dep.skip_reason is not None:
            return None
        return self._source_row(dep, outputs)

    def _compiled_row(self, dep: Dependency, output: str) -> Extracted | bool | None:
        if dep.dep_type != "requirements" or dep.skip_reason is not None:
            return None
        if dep.package_name in self.direct[output]:
            return True
        if not self.tools[output]:
            return None
        named = self.sources[output]
        entries = self.via[output].get(dep.line or 0, ())
        requested = [e[2:].strip() for e in entries if e.startswith(("-r ", "-r\t"))]
        if any(not _names_one_of(path, named) for path in requested):
            # Required by a source this repository did not pair (or read): a direct
            # requirement of it, reported as the compiled file's own row.
            return None
        parents = [e for e in entries if not e.startswith("-")]
        shown = ", ".join(named)
        if requested:
            # ``# via -r requirements.in`` for a package the source no longer declares.
            reason = (
                f"pinned in {output} as a requirement of {', '.join(requested)} (# via -r), "
                f"which no longer declares it: {output} is out of date (compile it again); "
                "not looked up"
            )
        else:
            through = f" via {', '.join(parents)}" if parents else ""
            reason = (
                f"indirect dependency{through}, pinned by {self.tools[output]} in {output} for "
                f"{shown}; it moves when {output} is compiled again, so it is not looked up "
                "(as Renovate's pip-compile manager leaves indirect dependencies disabled)"
            )
        return Extracted(replace(dep, dep_type="indirect", skip_reason=reason))

    def _source_row(self, dep: Dependency, outputs: list[str]) -> Extracted:
        found = [(o, p) for o in outputs for p in self.pins[o].get(dep.package_name, [])]
        versions = [
            (o, cast("str", VERSIONINGS["pep440"].exact_pin(p.constraint or ""))) for o, p in found
        ]
        if not versions:
            left_out = [o for o in outputs if dep.package_name in self.unsafe[o]]
            if left_out:
                return Extracted(dep, None, None, _unsafe_note(dep, left_out[0]))
            where = " and ".join(outputs)
            stale = (
                f"not in {where}: current from the range; the compiled file is out of date "
                f"(compile {dep.file} again)"
            )
            if dep.markers is not None:
                stale += f", or its marker ({dep.markers}) leaves it out of what was compiled"
            return Extracted(dep, None, None, stale)
        admitted = [(o, v) for o, v in versions if _admits(dep, v)]
        if not admitted:
            first = versions[0][0]
            outside = _outside_note(
                first, dep, list(dict.fromkeys(v for o, v in versions if o == first))
            )
            return Extracted(dep, None, None, f"{outside}; compile {dep.file} again")
        ordered = sorted(admitted, key=lambda pair: _sort_key(dep)(pair[1]))
        output, version = ordered[0]
        others = list(dict.fromkeys(f"{v} ({o})" for o, v in ordered[1:] if v != version))
        note: str | None = None
        if others:
            note = (
                f"{output} pins {dep.package_name} {version}; also pinned at "
                f"{', '.join(others)}: judged at the oldest"
            )
        return Extracted(dep, version, output, note)


def _lock_note(item: Extracted, dep: Dependency, finding: Finding) -> str | None:
    """The extraction's note of a row whose current came from its lockfile or its range.

    A note speaks of the lockfile: never of an exact pin. A pip-compile source's row (a
    requirements file, or a project file compiled) also says when its proposal lies outside
    its range (``_beyond_source_range``).
    """
    if finding.current_source not in {"range", "lockfile"}:
        return None
    if finding.current_source == "lockfile" and _compiled_lock(item):
        parts = (item.note, _beyond_source_range(dep, finding))
        return "; ".join(part for part in parts if part) or None
    return item.note


def _compiled_lock(item: Extracted) -> bool:
    """Whether ``item``'s current came from a compiled requirements file (``_PipCompiled``).

    Its own rows, and project rows whose lock is no ``*.lock`` file (uv, Poetry, pipenv).
    """
    manager, lock = item.dep.manager, item.lock_file or ""
    return manager == "requirements_txt" or (
        manager in _PROJECT_SOURCES and bool(lock) and not lock.endswith(".lock")
    )


def _beyond_source_range(dep: Dependency, finding: Finding) -> str | None:
    """Say so when a compiled pin's proposal needs the source's range widened first.

    pip-compile keeps to the source's specifiers (``--upgrade-package`` moves a pin only
    within them), so an eligible release outside ``requirements.in``'s range is an edit of
    that file before compiling again, as Renovate and Dependabot widen the range there.
    """
    eligible = finding.eligible
    if eligible is None or not (dep.constraint or "").strip() or _admits(dep, eligible):
        return None
    return (
        f"{eligible} is outside the range {dep.constraint} of {dep.file}: widen it there, "
        "then compile again"
    )


def _names_one_of(written: str, paths: Sequence[str]) -> bool:
    """Whether ``written`` (a path as a ``# via -r`` annotation gives it) names one of ``paths``.

    The annotation is relative to where the command ran, which the header may not say: a
    repository path ending in it (at a directory boundary) is taken to be it.
    """
    tail = posixpath.normpath(written.replace("\\", "/"))
    return any(path == tail or path.endswith("/" + tail) for path in paths)


def _unsafe_note(dep: Dependency, output: str) -> str:
    return (
        f"{output} leaves {dep.package_name} out as unsafe (pip-compile without "
        "--allow-unsafe): current from the range"
    )


def _may_name(result: ExtractResult, source: str) -> bool:
    """Whether a compiled file whose header's sources were not found may be ``source``'s.

    So when its header names no sources (none, ``--no-header``, a custom command), or names
    one of ``source``'s file name that is not where the header's paths lead from this root (a
    file target's directory, or a checkout whose root is not where the command ran).
    """
    header = result.compiled
    if header is None or header.custom or not header.sources:
        return True
    name = posixpath.basename(source)
    return any(posixpath.basename(s.replace("\\", "/")) == name for s in header.sources)


def _compile_sources(
    output: str, named: Sequence[str], output_arg: str | None, known: Mapping[str, object]
) -> tuple[str, ...]:
    """The repository-relative files of ``named`` (a compile command's sources) that exist.

    The command ran in a directory the header does not say: with ``-o DIR/NAME`` it is the
    output's directory less ``DIR`` (Renovate's ``inferCommandExecDir``); else, or when no
    source is found there, the output's directory, then the repository root. A path leaving
    the repository names nothing; ``-o`` naming another file name means the header was
    written for another file: no source.
    """
    output_dir = posixpath.dirname(output)
    tried: list[str] = []
    if output_arg is not None:
        arg = posixpath.normpath(output_arg.replace("\\", "/"))
        if posixpath.basename(arg) != posixpath.basename(output):
            return ()
        arg_dir = posixpath.dirname(arg)
        if arg_dir and not arg_dir.startswith("/") and not arg_dir.startswith(".."):
            if output_dir == arg_dir:
                tried.append("")
            elif output_dir.endswith("/" + arg_dir):
                tried.append(output_dir[: -len(arg_dir) - 1])
    tried += [output_dir, ""]
    for directory in dict.fromkeys(tried):
        found = []
        for source in named:
            joined = posixpath.normpath(posixpath.join(directory, source.replace("\\", "/")))
            if joined.startswith(("../", "/")) or joined in {"..", "."}:
                continue
            if joined in known and joined != output:
                found.append(joined)
        if found:
            return tuple(dict.fromkeys(found))
    return ()


def _with_inheritors(
    note: str | None, dep: Dependency, inheritors: dict[Dependency, list[str]]
) -> str | None:
    if dep not in inheritors:
        return note
    inherited = f"inherited by {', '.join(inheritors[dep])}"
    return f"{note}; {inherited}" if note else inherited


def _workspace_inheritors(results: list[tuple[str, ExtractResult]]) -> dict[Dependency, list[str]]:
    """Map each Cargo ``[workspace.dependencies]`` row to the packages that inherit it.

    A member's ``workspace = true`` entry is extracted as the root's declaration itself, so it
    is one row; every extra occurrence in a manifest's result (beyond the root's own
    declaration) is an inheritance by that manifest's package (its name, else its path).
    """
    found: dict[Dependency, list[str]] = {}
    for path, result in results:
        cargo = [dep for dep in result.dependencies if dep.manager == "cargo_toml"]
        if not cargo:
            continue  # the manager's module is imported only when it read something
        from patchula.manager import cargo_toml  # noqa: PLC0415 - lazy: start-up

        counts = Counter(dep for dep in cargo if dep.dep_type == cargo_toml.WORKSPACE_DEP_TYPE)
        for dep, count in counts.items():
            if count > (1 if dep.file == path else 0):
                found.setdefault(dep, []).append(result.project_name or path)
    return found


def _extract_file(
    item: Found,
    reader: Callable[[str], str],
    repo: RepoResult,
    tools: ToolMapping | None = None,
) -> ExtractResult | None:
    """Read and extract one file; a failure becomes a problem of ``repo`` and ``None``.

    The per-file guard: any exception of the manager costs only this file. Tool rows are
    resolved again through ``tools`` when config overrides the shipped mapping (managers know
    only the shipped one: they take no settings). What it extracted is then checked
    (``_checked``) before anything is looked up.
    """
    try:
        manager = MANAGERS[item.manager]
        decode: Callable[[bytes, str], str] | None = getattr(manager, "decode", None)
        read = reader if decode is None else _decoding(reader, decode)
        result = manager.extract(item.path, read(item.path), read)
        return _checked(result if tools is None else remap(result, tools))
    except ManifestError as exc:
        repo.problems.append(ManifestProblem(exc.file, exc.line, exc.message))
    except Exception as exc:  # noqa: BLE001 - a manager bug must cost only its own file
        message = f"{item.manager} failed: {type(exc).__name__}: {exc}"
        repo.problems.append(ManifestProblem(item.path, None, message))
    return None


def _decoding(
    reader: Callable[[str], str], decode: Callable[[bytes, str], str]
) -> Callable[[str], str]:
    """``reader``, with a file that is not UTF-8 decoded by the manager's ``decode``.

    A manager's ``decode(data, path)`` decodes its files as its tool does (pip's
    ``auto_decode`` for requirements files, their includes too), or raises ``ManifestError``.
    """

    def read(rel: str) -> str:
        try:
            return reader(rel)
        except NotUtf8Error as exc:
            return decode(exc.data, rel)

    return read


def _checked(result: ExtractResult) -> ExtractResult:
    """Move what cannot be looked up or shown out of ``result`` into problems naming file and line.

    A dependency whose name, declared value or constraint holds a lone surrogate ("invalid
    Unicode: lone surrogate"), and one to be looked up whose package name breaks its
    ecosystem's rules (``names.name_problem``: npm's, Go's ``module.CheckPath``, crates.io's,
    PEP 508), is a problem, never a request. Locked packages with a lone surrogate are dropped
    the same way, and so are a constraint or locked version with a number of more than
    ``MAX_NUMBER_DIGITS`` digits (invalid in every versioning), and a dependency or locked
    package whose name is longer than ``names.MAX_NAME_LENGTH`` (shown cut short). The same
    holds for every manager, so none can forget it.
    """
    deps: list[Dependency] = []
    problems = list(result.problems)
    for dep in result.dependencies:
        reason = _dependency_problem(dep)
        if reason is None:
            deps.append(dep)
        else:
            problems.append(ManifestProblem(dep.file, dep.line, reason))
    lockfile = result.lockfile
    if lockfile is not None:
        bad = [p for p in lockfile.packages if _locked_problem(p) is not None]
        for package in bad:
            shown = shown_name(package.name)
            message = f"locked package {shown}: {_locked_problem(package)}; ignored"
            problems.append(ManifestProblem(lockfile.file, package.line, message))
        if bad:
            kept = tuple(p for p in lockfile.packages if p not in bad)
            lockfile = replace(lockfile, packages=kept)
    if len(deps) == len(result.dependencies) and lockfile is result.lockfile:
        return result
    return replace(result, dependencies=tuple(deps), problems=tuple(problems), lockfile=lockfile)


_LONG = f"a number of more than {MAX_NUMBER_DIGITS} digits"


def _locked_problem(package: LockedPackage) -> str | None:
    if length_problem(package.name) is not None:
        return f"invalid name: {length_problem(package.name)}"
    if has_lone_surrogate(package.name + package.version):
        return "invalid Unicode: lone surrogate"
    if has_long_number(package.version):
        return f"invalid version: {_LONG}"
    return None


def _dependency_problem(dep: Dependency) -> str | None:
    """Why ``dep`` is a problem rather than a row, or ``None``."""
    for kind, name in (("name", dep.name), ("package name", dep.package_name)):
        too_long = length_problem(name)
        if too_long is not None:
            return f"invalid {kind} {shown_name(name)}: {too_long}; not looked up"
    for what, value in (
        ("name", dep.name),
        ("package name", dep.package_name),
        ("declared value", dep.declared),
        ("constraint", dep.constraint),
        ("markers", dep.markers),
    ):
        if value is not None and has_lone_surrogate(value):
            return f"invalid Unicode: lone surrogate in the {what} of {dep.name!r}"
    if dep.skip_reason is not None:
        return None
    if dep.constraint is not None and has_long_number(dep.constraint):
        return f"invalid version in {dep.name!r}: {_LONG}; not looked up"
    reason = name_problem(dep.datasource, dep.package_name)
    if reason is None:
        return None
    return f"invalid package name {dep.package_name!r} ({dep.datasource}): {reason}; not looked up"


def _manager_of(files: list[Found], path: str) -> str:
    return next(f.manager for f in files if f.path == path)


def _nearest_unread(dep: Dependency, unread: dict[str, str]) -> str | None:
    """Return the nearest unread lockfile of ``dep``'s ecosystem in its directory or above."""
    directory = posixpath.dirname(dep.file)
    while True:
        for path, ecosystem in unread.items():
            if ecosystem == dep.datasource and posixpath.dirname(path) == directory:
                return path
        if not directory:
            return None
        directory = posixpath.dirname(directory)


def _covers(lock_dir: str, manifest_dir: str) -> bool:
    return not lock_dir or manifest_dir == lock_dir or manifest_dir.startswith(lock_dir + "/")


# Manifests resolved through a workspace lockfile (uv.lock, poetry.lock, Pipfile.lock,
# Cargo.lock): the file beside them, or the outermost one whose workspace lists the project.
# Each is read only by its own tools' lockfiles (pipenv never reads pyproject.toml, uv and
# Poetry never read a Pipfile).
_WORKSPACE_LOCKED = {
    "pyproject": frozenset({"uv_lock", "poetry_lock", "pdm_lock"}),
    "pipfile": frozenset({"pipfile_lock"}),
    "cargo_toml": frozenset({"cargo_lock"}),
}


# The pyproject tables no lockfile locks, whatever it holds of the same package: PEP 517
# frontends install `[build-system] requires` afresh into an isolated build environment, and
# Hatch resolves its environments' dependencies itself (neither is in any lockfile), and uv's
# build constraints apply to build environments, which uv.lock does not lock. PDM's
# dev-dependency groups and resolution overrides are locked by pdm.lock alone (uv and Poetry
# never read those tables).
_UNLOCKED_PYPROJECT_TYPES = ("build-system", "hatch-env:", "uv-build-constraint")
_PDM_LOCKED_TYPES = ("pdm-dev:", "pdm-override")


def _installed_unlocked(dep: Dependency) -> bool:
    """Whether ``dep`` is a pyproject row no lockfile locks (current comes from its range)."""
    if dep.manager == "hatch_toml":
        return True  # Hatch resolves its environments itself
    return dep.manager == "pyproject" and dep.dep_type.startswith(_UNLOCKED_PYPROJECT_TYPES)


def _not_workspace_locked(dep: Dependency) -> bool:
    """Whether ``dep`` is a pyproject row no lockfile of its tools locks."""
    return _installed_unlocked(dep)


def _lock_managers_of(dep: Dependency) -> frozenset[str] | None:
    """The lockfile managers that may lock ``dep`` (``None``: none of a workspace kind)."""
    managers = _WORKSPACE_LOCKED.get(dep.manager)
    if managers is not None and dep.dep_type.startswith(_PDM_LOCKED_TYPES):
        return frozenset({"pdm_lock"})  # `[tool.pdm.dev-dependencies]`: PDM's own table
    return managers


def _locked_version(
    dep: Dependency,
    project_name: str | None,
    lockfiles: list[Lockfile],
    indexes: _LockIndexes | None = None,
) -> tuple[str | None, str | None, str | None]:
    """Find the version a lockfile records for ``dep``: ``(version, lockfile, note)``.

    ``indexes`` keeps each lockfile's packages grouped by install path and by name across the
    calls for one repository, so matching n dependencies to a lockfile of m packages costs
    O(n + m), not O(n x m).

    ``(None, None, None)`` when no lockfile covers it; ``(None, None, note)`` when the covering
    lockfile records only versions its requirement does not admit (a stale lock: Cargo's "a
    locked version is used only if it matches the requirement"), the note naming them. When it
    records several versions this dependency's requirement admits, the note names the others:
    Cargo.lock (one version per semver-incompatible requirement): the newest, the one cargo
    builds this requirement against; uv.lock and poetry.lock (one version per environment
    marker split): the oldest, as every one is installed in some environment and the row is
    as outdated as its oldest. npm lockfiles hold one version per install path, found as Node
    resolves ``node_modules``, so no choice arises there.

    npm: the nearest lockfile whose workspace includes the manifest's directory, resolved the
    way Node resolves ``node_modules`` (``package-lock.json``, ``pnpm-lock.yaml``,
    ``bun.lock``) or by the declaration's descriptor (``yarn.lock``). ``pyproject.toml``,
    ``Pipfile`` and ``Cargo.toml``: the
    outermost lockfile of their own tools whose workspace lists the project (uv and Cargo ignore
    a member's own lock), else the lockfile beside the manifest.
    """
    manifest_dir = posixpath.dirname(dep.file)
    candidates = [
        lf
        for lf in lockfiles
        if lf.ecosystem == dep.datasource and _covers(posixpath.dirname(lf.file), manifest_dir)
    ]
    if dep.datasource == "npm":
        for lock in sorted(
            candidates, key=lambda lf: len(posixpath.dirname(lf.file)), reverse=True
        ):
            lock_dir = posixpath.dirname(lock.file)
            member = posixpath.relpath(manifest_dir or ".", lock_dir or ".")
            member = "" if member == "." else member
            if member and not _is_member(lock, member):
                continue
            key: str | None  # where the row was looked for: a descriptor or an install path
            if lock.manager in _DESCRIPTOR_LOCKED:
                by_descriptor = _packages_by(lock, "descriptor", indexes)
                version, key = _descriptor_resolve(by_descriptor, dep)
            else:
                by_path = _packages_by(lock, "install_path", indexes)
                strict = lock.manager in _IMPORTER_LOCKED
                version, key = _npm_resolve(by_path, member, dep, strict=strict, lock=lock)
            if version is None:
                return None, None, _unlocked_note(lock, dep, key)
            if not _admits(dep, version):
                # `npm ci` refuses a lock out of sync with package.json.
                return None, None, _outside_note(lock.file, dep, [version])
            return version, lock.file, None
        return None, None, None
    lock_managers = _lock_managers_of(dep)
    if lock_managers is None or _not_workspace_locked(dep):
        return None, None, None
    candidates = [lf for lf in candidates if lf.manager in lock_managers]
    chosen: Lockfile | None = None
    for lock in sorted(candidates, key=lambda lf: len(posixpath.dirname(lf.file))):
        beside = posixpath.dirname(lock.file) == manifest_dir
        listed = lock.members is not None and project_name in lock.members
        if chosen is None and (beside or listed):
            chosen = lock
    if chosen is None:
        return None, None, None
    entries = _packages_by(chosen, "name", indexes).get(dep.package_name, [])
    # Pipfile.lock locks each category apart (`[packages]` at 1.3.1, `[dev-packages]` at 1.1.0):
    # a row takes its own group's entry when the lock has one.
    own = [p for p in entries if p.group and p.group == dep.dep_type]
    locked = list(dict.fromkeys(p.version for p in own or entries))
    # A lockfile may hold several versions of one package (Cargo keeps one per semver-
    # incompatible requirement), and a stale one a version the manifest no longer admits: only a
    # version this dependency's requirement admits is its own (cargo, uv and poetry re-lock
    # rather than install one that does not).
    versions = [v for v in locked if _admits(dep, v)]
    if not versions:
        if not locked:
            # The project itself (a self-referential extra, ``app[docs]``) or a workspace
            # member is no registry entry of the lockfile; any other row its tool locks is.
            itself = dep.package_name == project_name or dep.package_name in (chosen.members or ())
            return None, None, None if itself else _unlocked_note(chosen, dep, None)
        return None, None, _outside_note(chosen.file, dep, locked)
    if len(versions) > 1:
        version, note = _one_of_several(dep, chosen, versions)
        return version, chosen.file, note
    return versions[0], chosen.file, None


def _locked_forks(
    dep: Dependency,
    locked: str | None,
    lock_file: str | None,
    lockfiles: list[Lockfile],
    indexes: _LockIndexes,
) -> tuple[tuple[str, str], ...]:
    """``(version, marker)`` of each fork a Python lockfile locks ``dep`` at, oldest first.

    ``()`` unless ``lock_file`` is a uv.lock or poetry.lock locking several versions ``dep``
    admits (one per environment-marker split, each installed in some environment: every one is
    judged, ``_forked``). The marker is the entry's uv ``resolution-markers`` (several entries
    of one version: ``or`` of theirs; one without: ``""``, every environment).
    """
    if locked is None or dep.datasource != "pypi":
        return ()
    lock = next((lf for lf in lockfiles if lf.file == lock_file), None)
    if lock is None or lock.manager not in {"uv_lock", "poetry_lock"}:
        return ()
    entries = _packages_by(lock, "name", indexes).get(dep.package_name, [])
    markers: dict[str, list[str]] = {}
    for entry in entries:
        if _admits(dep, entry.version):
            markers.setdefault(entry.version, []).append(entry.markers)
    if len(markers) < 2:  # noqa: PLR2004 - one version is no fork
        return ()
    ordered = sorted(markers, key=_sort_key(dep))
    return tuple(
        (
            version,
            ""
            if "" in markers[version]
            else " or ".join(f"({m})" for m in dict.fromkeys(markers[version]))
            if len(set(markers[version])) > 1
            else markers[version][0],
        )
        for version in ordered
    )


def _one_of_several(dep: Dependency, lock: Lockfile, versions: list[str]) -> tuple[str, str]:
    """The version of ``versions`` (all locked by ``lock``, all admitted) ``dep`` is judged at.

    Returns ``(version, note)``, the note naming the others.
    """
    if lock.manager == "cargo_lock":
        # Cargo locks one version per semver-incompatible requirement and builds each edge
        # against the highest compatible version the graph holds (the resolver tries
        # candidates newest first and prefers locked ones), so a requirement spanning several
        # locked versions (``"0"`` over 0.0.3 and 0.1.0) is at the newest; the older ones are
        # another requirement's. The lock does not say whose edge is whose: the note says so.
        ordered = sorted(versions, key=_sort_key(dep), reverse=True)
        others = ", ".join(ordered[1:])
        note = (
            f"{lock.file} also locks {dep.package_name} {others}, which {dep.constraint} "
            "admits too; judged at the newest locked (cargo builds against the highest "
            "compatible version)"
        )
        return ordered[0], note
    # uv locks one version per environment-marker split, and each is installed somewhere:
    # every one is judged, so the row is as far behind as the oldest, naming the others.
    ordered = sorted(versions, key=_sort_key(dep))
    others = ", ".join(ordered[1:])
    return ordered[
        0
    ], f"{lock.file} also locks {dep.package_name} {others}; judged at the oldest locked"


# The package.json sections every npm lockfile locks (npm, yarn, pnpm and bun install all
# three): a row of one the covering lockfile lacks means the lockfile is out of date. Peer
# dependencies, engines, overrides and the package manager are not installed from it.
_LOCKED_SECTIONS = frozenset({"dependencies", "devDependencies", "optionalDependencies"})
# The pyproject tables (``dep_type``; a trailing ``:`` takes every extra or group) each Python
# lockfile locks. ``uv lock`` locks [project] dependencies, every extra and every dependency
# group, and [tool.uv] dev-dependencies (docs.astral.sh/uv/concepts/projects/layout/#the-
# lockfile, .../dependencies/#development-dependencies), never Poetry's tables. ``poetry
# lock`` locks its own tables with every group, optional ones too (python-poetry.org/docs/
# managing-dependencies/), and since Poetry 2 [project] and its extras, since 2.2 PEP 735
# [dependency-groups]; not uv's. ``pipenv lock`` locks every Pipfile category (any dep_type).
_PYTHON_LOCKED_SECTIONS = {
    "uv_lock": ("project", "optional:", "group:", "uv-dev"),
    "poetry_lock": ("poetry", "poetry-dev", "poetry-group:", "project", "optional:", "group:"),
    # `pdm lock` locks [project] dependencies, every extra, PEP 735 dependency groups and its
    # own [tool.pdm.dev-dependencies] groups (pdm-project.org/latest/usage/dependency/).
    "pdm_lock": ("project", "optional:", "group:", "pdm-dev:"),
}


def _locks(lock: Lockfile, dep_type: str) -> bool:
    """Whether ``lock``'s tool locks rows of ``dep_type``, so a missing one means it is stale."""
    if lock.ecosystem == "npm":
        return dep_type in _LOCKED_SECTIONS
    if lock.manager == "pipfile_lock":
        return True
    return any(
        dep_type.startswith(section) if section.endswith(":") else dep_type == section
        for section in _PYTHON_LOCKED_SECTIONS.get(lock.manager, ())
    )


def _unlocked_note(lock: Lockfile, dep: Dependency, key: str | None) -> str | None:
    """The note of a row the covering ``lock`` gives no version (``None``: none due).

    ``key`` is the install path or descriptor an npm row was looked for under: an entry the
    manager found unusable (``Lockfile.unusable``, a problem names its line), else missing.
    A row of a table the lockfile's tool locks (``_locks``) that it lacks means the lockfile
    is out of date (npm, yarn, pnpm, bun, uv, Poetry, pipenv alike); a Python row with an
    environment marker may also be left out by a lock whose environments the marker excludes
    (uv and Poetry drop one disjoint with ``requires-python``; pipenv resolves on one machine).
    """
    if key is not None and key in lock.unusable:
        return f"from the range: its entry in {lock.file} is unusable"
    if dep.skip_reason is not None or not _locks(lock, dep.dep_type):
        return None
    group = _pdm_group(dep.dep_type)
    if lock.groups is not None and group not in lock.groups:
        return f"from the range: {lock.file} does not lock group {group!r} (its [metadata] groups)"
    stale = f"not in {lock.file}: current from the range; the lockfile is out of date"
    if dep.markers is None:
        return stale
    return (
        f"{stale}, or its marker ({dep.markers}) leaves it out of every environment the"
        " lockfile resolves for"
    )


def _pdm_group(dep_type: str) -> str:
    """The PDM group of a pyproject row type: ``project`` → ``default``, ``group:x`` → ``x``."""
    if dep_type == "project":
        return "default"
    # PEP 503/685 normalisation, as pdm_lock applies packaging's canonicalize_name to the groups.
    return re.sub(r"[-_.]+", "-", dep_type.partition(":")[2] or dep_type).lower()


def _outside_note(lock_file: str, dep: Dependency, versions: list[str]) -> str:
    shown = ", ".join(sorted(versions, key=_sort_key(dep)))
    where = f"{lock_file} locks {dep.package_name} {shown}, outside {dep.constraint}"
    return f"{where}: current from the range"


def _admits(dep: Dependency, version: str) -> bool:
    """Whether ``dep``'s declared requirement admits the locked ``version``.

    No requirement, or one its scheme cannot read, admits every version. A locked prerelease is
    taken as locked: the lock tool chose it on purpose (``cargo update --precise``, uv's
    ``prerelease = "allow"``), although a range alone would not pick it.
    """
    scheme = VERSIONINGS.get(dep.versioning)
    constraint = (dep.constraint or "").strip()
    if scheme is None or not constraint or not scheme.is_valid_constraint(constraint):
        return True
    if scheme.matches(version, constraint):
        return True
    return scheme.is_valid(version) and not scheme.is_stable(version)


def _sort_key(dep: Dependency) -> Callable[[str], Any]:
    """The version order of ``dep``'s scheme (plain string order for an unknown scheme)."""
    scheme = VERSIONINGS.get(dep.versioning)
    return scheme.sort_key if scheme is not None else str


# Per repository: (id of a Lockfile, attribute) -> its packages grouped by that attribute.
_LockIndexes = dict[tuple[int, str], dict[str, list[LockedPackage]]]


def _packages_by(
    lock: Lockfile, attribute: str, indexes: _LockIndexes | None
) -> dict[str, list[LockedPackage]]:
    """``lock``'s packages grouped by ``install_path`` or ``name`` (lockfile order kept)."""
    key = (id(lock), attribute)
    grouped = indexes.get(key) if indexes is not None else None
    if grouped is None:
        grouped = {}
        for package in lock.packages:
            grouped.setdefault(getattr(package, attribute), []).append(package)
        if indexes is not None:
            indexes[key] = grouped
    return grouped


# npm lockfiles keyed by declarations (``LockedPackage.descriptor``), not install paths.
_DESCRIPTOR_LOCKED = frozenset({"yarn_lock"})
# npm lockfiles that lock each workspace package's own declarations apart (pnpm's importers):
# a member's row never takes what another importer locked.
_IMPORTER_LOCKED = frozenset({"pnpm_lock"})


def _is_member(lock: Lockfile, member: str) -> bool:
    """Whether the directory ``member`` (relative to the lockfile's) is one of its workspaces."""
    if lock.members is not None and member in lock.members:
        return True
    return _globs_match(list(lock.member_globs), member)


def _descriptor_resolve(
    by_descriptor: dict[str, list[LockedPackage]], dep: Dependency
) -> tuple[str | None, str]:
    """``(version, descriptor)``: what a yarn lockfile resolved ``dep``'s ``name@range`` to.

    The version is ``None`` when the lockfile has no entry for it. A ``patch:`` declaration is
    its base range's (yarn locks the patched package at the version of its base); an alias's
    entry must lock the alias's target.
    """
    from patchula.manager import yarn_lock  # noqa: PLC0415 - lazy: start-up

    spec = (dep.declared or "").strip()
    if spec.startswith("patch:"):
        spec = dep.constraint or ""
    key = yarn_lock.descriptor(dep.name, spec)
    entries = by_descriptor.get(key)
    if not entries:
        return None, key
    entry = entries[-1]
    return (entry.version if entry.name == dep.package_name else None), key


def _npm_resolve(
    by_path: dict[str, list[LockedPackage]],
    member: str,
    dep: Dependency,
    *,
    strict: bool = False,
    lock: Lockfile | None = None,
) -> tuple[str | None, str | None]:
    """Resolve ``dep`` the way Node does: ``member/node_modules/<name>``, then each parent's.

    ``(version, install path)``; the version is ``None`` when no entry gives one, the path is
    then the unusable entry of ``lock`` met on the way (it hides its parents' as the installed
    package would), else ``None``. ``strict``: only the member's own ``node_modules`` (pnpm
    links no other).
    """
    unusable = lock.unusable if lock is not None else frozenset()
    directory = member
    while True:
        path = f"{directory}/node_modules/{dep.name}" if directory else f"node_modules/{dep.name}"
        entries = by_path.get(path)
        if entries:
            entry = entries[-1]  # a repeated install path: the last entry, as json.loads keeps
            return (entry.version if entry.name == dep.package_name else None), None
        if path in unusable:
            return None, path
        if not directory or strict:
            return None, None
        directory = posixpath.dirname(directory)


class _Reader:
    """Reads repository files for managers: inside the checkout, regular, size-capped, UTF-8.

    Every read goes through ``read_regular``: a FIFO, socket, device, directory or symlink loop
    is a ``ManifestError`` naming the file, never a blocked or crashed run.
    """

    def __init__(self, root: Path, max_bytes: int) -> None:
        self._root = root
        self._max = max_bytes

    def __call__(self, rel: str) -> str:
        try:
            path = (self._root / rel).resolve()
        except RuntimeError:  # a symlink loop (Python 3.11; 3.13 raises OSError)
            raise ManifestError("symlink loop", file=rel) from None
        except OSError as exc:
            raise ManifestError(f"cannot read: {exc.strerror}", file=rel) from None
        try:
            path.relative_to(self._root)
        except ValueError:
            raise ManifestError("path leaves the checkout", file=rel) from None
        return manifest_text(read_regular(path, rel, self._max), rel)


def manifest_text(data: bytes, rel: str) -> str:
    """The text of the manifest ``rel`` whose bytes are ``data``, as every reader gives it.

    UTF-8 with an optional byte-order mark (dropped). Raises ``ManifestError`` naming ``rel``
    and the line: invalid UTF-8 (the offending byte and its offset: ``NotUtf8Error``, which
    keeps the bytes for a manager that decodes them itself), a NUL byte (binary).
    """
    bom = len(codecs.BOM_UTF8) if data.startswith(codecs.BOM_UTF8) else 0
    try:
        text = data[bom:].decode("utf-8")
    except UnicodeDecodeError as exc:
        offset = bom + exc.start  # in the file, byte-order mark included
        line = data.count(b"\n", 0, offset) + 1
        msg = f"not UTF-8 text (invalid byte 0x{data[offset]:02x} at offset {offset})"
        raise NotUtf8Error(msg, file=rel, line=line, data=data) from None
    if "\x00" in text:
        line = text.count("\n", 0, text.index("\x00")) + 1
        raise ManifestError("binary content (NUL byte)", file=rel, line=line)
    return text


# The most of a ``.git`` metadata file read (HEAD, a ref, ``commondir``); ``packed-refs`` may
# hold every tag of a large repository and gets the manifest limit.
GIT_FILE_MAX_BYTES = 64 * 1024


def _git_text(path: Path, max_bytes: int = GIT_FILE_MAX_BYTES) -> str | None:
    """The stripped text of a regular ``.git`` file, or ``None`` (missing, FIFO, too big …)."""
    try:
        data = read_regular(path, path.name, max_bytes)
    except ManifestError:
        return None
    return data.decode("utf-8", errors="replace").strip()


def read_commit(root: Path, max_bytes: int = 16 * 1024 * 1024) -> str | None:
    """Return the checked-out commit by reading ``.git`` (no git binary needed), or ``None``.

    Only regular files are read (``read_regular``): a ``.git``, ``HEAD``, ref or ``packed-refs``
    that is a FIFO, a directory or a symlink loop gives ``None`` and never blocks.
    ``max_bytes`` bounds ``packed-refs``.
    """
    try:
        return _read_commit(root, max_bytes)
    except (OSError, RuntimeError, ValueError):  # a loop in a gitdir/commondir path, a bad path
        return None


def git_dirs(root: Path) -> tuple[Path, Path] | None:
    """The git directory of the checkout at ``root`` and its common directory, or ``None``.

    ``.git`` is a directory, or a file ``gitdir: <path>`` (worktrees, submodules); a worktree's
    ``commondir`` names the directory that holds the shared refs and ``info/``.
    """
    try:
        git = root / ".git"
        if not git.is_dir():  # worktrees and submodules: a file "gitdir: <path>"
            content = _git_text(git)
            if content is None or not content.startswith("gitdir:"):
                return None
            git = (root / content.removeprefix("gitdir:").strip()).resolve()
        common = git
        commondir = _git_text(git / "commondir")
        if commondir is not None:
            common = (git / commondir).resolve()
    except (OSError, RuntimeError, ValueError):  # a loop in a gitdir/commondir path, a bad path
        return None
    return git, common


def _read_commit(root: Path, max_bytes: int) -> str | None:
    dirs = git_dirs(root)
    if dirs is None:
        return None
    git, common = dirs
    head = _git_text(git / "HEAD")
    if head is None:
        return None
    if not head.startswith("ref:"):
        return head or None
    ref = head.removeprefix("ref:").strip()
    found = _git_text(git / ref)
    if found is not None:
        return found or None
    if common != git:
        found = _git_text(common / ref)
        if found is not None:
            return found or None
    packed = _git_text(common / "packed-refs", max_bytes)
    for line in (packed or "").splitlines():
        sha, _, name = line.partition(" ")
        if name == ref:
            return sha
    return None


class TargetDependency(msgspec.Struct, frozen=True):
    """A dependency a target declares, as ``cache warm`` enqueues it (``extract_targets``).

    ``root`` is the checkout it was found in (its ``.npmrc`` chooses registries), ``file``
    the manifest, ``locked`` the version its lockfile names (``None``: unlocked).
    ``pinned`` maps (datasource, package) to the one version the checkout's lockfiles lock it
    at (a package locked at several versions is left out), for its dependencies' dependencies.
    """

    root: Path
    file: str
    dep: Dependency
    locked: str | None
    pinned: Mapping[tuple[str, str], str] = msgspec.field(default_factory=dict)


def extract_targets(
    targets: Sequence[str], settings: Settings
) -> tuple[list[RepoResult], list[TargetDependency]]:
    """Resolve, walk and extract ``targets`` as ``scan`` does, without any lookup.

    Returns every target's ``RepoResult`` (its problems: a target that cannot be read, a
    malformed manifest) and the dependencies ``scan`` would look up, in extraction order:
    skipped ones, unknown datasources, Go modules kept off the proxy, crates of an alternative
    Cargo registry (``registry = "NAME"``: ``cache warm`` does not read .cargo/config.toml)
    and untagged digests are left out. Blocking (walks the file system): run it in a worker thread.
    """
    repos: list[RepoResult] = []
    found_deps: list[TargetDependency] = []
    for target in dict.fromkeys(targets):
        try:
            root, problem, scope = _resolve_target(target)
        except Exception as exc:  # noqa: BLE001 - the per-target guard, as in ``scan``
            root, problem, scope = None, _internal("resolving", target, exc), _WHOLE
        repo = RepoResult(target=target, root=str(root or target), commit=None)
        repos.append(repo)
        if root is None:
            repo.problems.append(ManifestProblem(target, None, problem))
            continue
        try:
            if scope.file is not None:
                found = _discover_file(root, scope.file, settings)
            else:
                found, _ = _discover(root, settings)
            lockfiles: list[Lockfile] = []
            extracted = _extract_repo(root, settings, repo, found, scope, lockfiles)
        except Exception as exc:  # noqa: BLE001 - the per-target guard, as in ``scan``
            repo.problems.append(ManifestProblem(target, None, _internal("scanning", target, exc)))
            continue
        pinned = _pinned(lockfiles)
        for item in extracted:
            dep = item.dep
            if dep.skip_reason is not None or dep.datasource not in DATASOURCES:
                continue
            if dep.datasource == "goproxy" and _go_skip(dep.package_name, settings):
                continue
            if dep.datasource == "crates" and dep.sole_index not in {None, "crates-io"}:
                continue  # an alternative registry's crate: never asked of crates.io
            if _digest_use(dep) == "untagged":
                continue
            found_deps.append(TargetDependency(root, dep.file, dep, item.locked, pinned))
    return repos, found_deps


def _pinned(lockfiles: Sequence[Lockfile]) -> dict[tuple[str, str], str]:
    """(datasource, package) → the one version ``lockfiles`` lock it at (several: left out)."""
    seen: dict[tuple[str, str], set[str]] = {}
    for lockfile in lockfiles:
        for package in lockfile.packages:
            seen.setdefault((lockfile.ecosystem, package.name), set()).add(package.version)
        for name, version in lockfile.transitive:
            seen.setdefault((lockfile.ecosystem, name), set()).add(version)
    return {key: next(iter(found)) for key, found in seen.items() if len(found) == 1}
