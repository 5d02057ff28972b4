"""Frozen values shared by every layer: dependencies, lockfiles, releases, catalogs, findings.

Times are timezone-aware UTC ``datetime`` values; a publish time the registry does not give is
``None`` (unknown), never invented.
"""

from __future__ import annotations

from collections.abc import Callable
from datetime import datetime
from typing import Literal, NamedTuple

import msgspec

# Turns a successful raw registry body into the compact document that is cached and parsed.
Derive = Callable[[bytes], bytes]
Status = Literal["up-to-date", "outdated", "held-back", "unknown", "skipped", "error"]
# ``digest``: the same tag, a new content digest (Renovate's update type of that name).
UpdateType = Literal["major", "minor", "patch", "digest"]
CurrentSource = Literal["lockfile", "pin", "range", "dist-tag"]


class Dependency(msgspec.Struct, frozen=True):
    """One declared dependency, as a manager found it in one manifest.

    ``file`` is relative to the repository root with POSIX separators; ``line`` is 1-based.
    ``declared`` is the value exactly as written (``^1.2``, ``>=2,<3``, ``npm:foo@^1``);
    ``constraint`` is the same requirement in the syntax of ``versioning`` (Poetry's ``^1.2``
    becomes ``>=1.2,<2.0``; an npm alias ``npm:foo@^1`` becomes ``^1``), or ``None`` when any
    version is accepted. ``package_name`` is the name to look up on ``datasource`` (the alias
    target for npm, the PEP 503 normalised name for Python). A dependency with a
    ``skip_reason`` is reported but never looked up. ``digest`` is a content digest the
    declaration pins (a container image's ``@sha256:…``), ``None`` when it pins none.

    Container images (datasource ``docker``): ``name`` is the image as written without tag or
    digest (``python``, ``ghcr.io/o/img``); ``package_name`` the canonical
    ``<registry host[:port]>/<repository>`` (Docker Hub: ``docker.io/library/python``);
    ``constraint`` the tag (``latest`` when neither a tag nor a digest is written, ``None``
    for a digest without a tag).

    ``note`` is a fact about the declaration that its row reports, whatever its verdict (a
    pnpm ``catalog:`` declaration: where its range came from); ``None`` when there is none.
    Tools (mise, asdf and version files; ``patchula.tools``): ``name`` is the tool as written
    (``nodejs``, ``cargo:flip-link``), ``backend`` the mise backend it resolved to
    (``core:node``, ``cargo:flip-link``, ``aqua:hashicorp/terraform``) and ``package_name``
    the name looked up on that backend's datasource; ``backend`` is ``None`` for every other
    row.
    """

    manager: str
    file: str
    line: int | None
    name: str
    package_name: str
    datasource: str
    versioning: str
    dep_type: str
    declared: str | None
    constraint: str | None
    skip_reason: str | None = None
    markers: str | None = None
    digest: str | None = None
    note: str | None = None
    backend: str | None = None
    # The extras a Python requirement names (``pa[socks]>=1``: ``("socks",)``), sorted.
    extras: tuple[str, ...] = ()
    # The installer may pick a prerelease for this row's range, as the manifest opts in: pip
    # ``--pre``, pipenv ``allow_prereleases``, Poetry ``allow-prereleases``, uv
    # ``prerelease = "allow"`` (the policy then takes current from every stability).
    prereleases: bool = False
    # The package index the manifest takes this package from alone, as it names it (``package
    # index 'pytorch'``: uv ``explicit = true``, Poetry ``priority = "explicit"``); the row is
    # skipped unless the run's PyPI registry is configured (``--registry pypi=URL``). Cargo:
    # the alternative registry a dependency names (``registry = "private-crates"``), looked up
    # on the index the checkout's .cargo/config.toml gives it.
    sole_index: str | None = None
    # Versions of ``package_name`` the manifest excludes (go.mod ``exclude``): never current's
    # replacement candidates nor latest (cmd/go modload.CheckAllowed).
    excluded: tuple[str, ...] = ()
    # The prefixes a tool's tags carry before its version (aqua ``version_prefix``: ``jq-``,
    # ``kustomize/``; ``""`` = a tag without one): only tags starting with one are its
    # versions, each the rest (``tools.strip_prefixes``). Empty: tags are versions as they are.
    version_prefixes: tuple[str, ...] = ()
    # What a tool's tags carry after its version (swift's ``swift-5.9.2-RELEASE``): only tags
    # that end with one are its versions, the suffix cut (``tools.strip_prefixes``).
    version_suffixes: tuple[str, ...] = ()
    # aqua's ``version_filter`` of a tool's package, an expr-lang expression on the whole tag
    # (``not (Version startsWith "varcon-")``): tags it is false for are none of its versions
    # (``tools.filter_tags``). ``None``: every tag.
    version_filter: str | None = None
    # The Pythons the project declaring this row supports, as a PEP 440 specifier set (PEP 621
    # ``requires-python``, Poetry's ``python`` dependency); ``None`` when the file says none.
    requires_python: str | None = None


class LockedPackage(msgspec.Struct, frozen=True):
    """One resolved package in a lockfile.

    ``install_path`` is where the package manager installs it, relative to the lockfile's
    directory (npm: ``node_modules/a``, ``packages/x/node_modules/a``); ``""`` when the lockfile
    has no notion of install paths (Python lockfiles). ``name`` is the registry name (the npm
    alias target, the PEP 503 normalised Python name). ``group`` is the ``dep_type`` of the
    manifest rows this entry was locked for when the lockfile locks each group apart
    (Pipfile.lock: ``packages``, ``dev-packages``, custom categories), else ``""``.
    ``descriptor`` is the declaration this entry resolves when the lockfile is keyed by
    declarations rather than install paths (yarn.lock: ``a@^1.2``, normalised by
    ``manager.yarn_lock.descriptor``), else ``""``.
    ``markers`` is the PEP 508 environment marker of the resolution fork this entry was locked
    for when the lockfile locks a package once per fork (uv.lock's per-entry
    ``resolution-markers``, several joined with ``or``), else ``""``: every environment.
    """

    name: str
    version: str
    line: int | None = None
    install_path: str = ""
    group: str = ""
    descriptor: str = ""
    markers: str = ""


class Lockfile(msgspec.Struct, frozen=True):
    """The locked versions one lockfile gives.

    ``ecosystem`` is the datasource id the names belong to (``npm``, ``pypi``). ``members`` lists
    the workspace members (Python project names, PEP 503 normalised) or member directories
    (npm, relative to the lockfile's directory, ``""`` for the root) the lockfile covers, or
    ``None`` when it covers only the manifest beside it. ``member_globs`` are workspace globs
    (``packages/*``) whose matching directories are members too, for lockfiles that do not list
    their members (yarn classic: the scan sets the ``workspaces`` of the ``package.json``
    beside the lockfile). ``unusable`` holds the install paths or descriptors (npm) of entries
    the lockfile has but whose version cannot be read (the manager reports each as a problem),
    so their rows say the lockfile did not give current rather than that it lacks them.
    ``transitive`` lists ``(name, version)`` of packages the lockfile locks beyond the
    manifests' own entries (pnpm's ``packages`` keys), for following dependencies of
    dependencies (``cache warm``); no row is matched against them. ``groups`` names the
    dependency groups the lock resolved when it says so and may leave some out (pdm.lock's
    ``[metadata] groups``: ``default`` is ``[project] dependencies``, other names are extras
    and groups, PEP 685 normalised), else ``None``: every table its tool locks.
    ``requires_python`` is the Python the lock says it was resolved for, as a PEP 440
    specifier set (Pipfile.lock ``_meta.requires``: ``==3.8.*``), else ``None``.
    """

    file: str
    manager: str
    ecosystem: str
    packages: tuple[LockedPackage, ...]
    members: frozenset[str] | None = None
    member_globs: tuple[str, ...] = ()
    unusable: frozenset[str] = frozenset()
    transitive: tuple[tuple[str, str], ...] = ()
    groups: frozenset[str] | None = None
    requires_python: str | None = None


class ManifestProblem(msgspec.Struct, frozen=True):
    """A problem met while reading a manifest: bad syntax, wrong types, an include cycle."""

    file: str
    line: int | None
    message: str
    severity: Literal["warning", "error"] = "error"


class CompiledRequirements(msgspec.Struct, frozen=True):
    """What a requirements file says of how pip-compile or ``uv pip compile`` wrote it.

    pip-tools' header (``# This file is autogenerated by pip-compile …``, then the command
    after ``#    ``) and uv's (``# This file was autogenerated by uv via the following
    command:``). ``tool`` is ``pip-compile`` or ``uv``; ``command`` the header's command line,
    as written (``None`` when the header has none). ``sources`` are the files the command names
    (``requirements.in``, ``pyproject.toml``), as written, relative to the directory it ran in;
    ``output`` its ``-o``/``--output-file`` as written (``None``: not given); ``custom`` is true
    when the command is not the tool's own (pip-tools' ``CUSTOM_COMPILE_COMMAND``, uv's
    ``UV_CUSTOM_COMPILE_COMMAND``: ``make requirements``), so it names no sources.
    ``via`` pairs a requirement's line with its annotation's entries (``-r requirements.in``,
    ``flask``, ``-c constraints.txt``), from ``# via`` comments in either annotation style.
    ``unsafe`` names (PEP 503 normalised) the packages pip-compile left out as unsafe without
    ``--allow-unsafe`` (``pip``, ``setuptools``): listed only as comments, never pinned.
    """

    tool: str
    command: str | None = None
    sources: tuple[str, ...] = ()
    output: str | None = None
    custom: bool = False
    via: tuple[tuple[int, tuple[str, ...]], ...] = ()
    unsafe: tuple[str, ...] = ()


class ExtractResult(msgspec.Struct, frozen=True):
    """What one manager extracted from one file.

    ``included_files`` lists other files (repository-relative) this one pulled in, such as a
    requirements file's ``-r`` includes, so discovery does not report them twice.
    ``workspaces`` are the workspace globs a manifest declares (``package.json``
    ``workspaces``), for lockfiles that do not list their members. ``project_version`` is the
    manifest's own version (``package.json`` ``version``), which decides whether a workspace
    links a member for a dependency's range. ``compiled`` says how pip-compile or
    ``uv pip compile`` wrote this requirements file (its header), ``None`` when it has no such
    header.
    """

    dependencies: tuple[Dependency, ...] = ()
    lockfile: Lockfile | None = None
    problems: tuple[ManifestProblem, ...] = ()
    included_files: tuple[str, ...] = ()
    project_name: str | None = None
    workspaces: tuple[str, ...] = ()
    project_version: str | None = None
    compiled: CompiledRequirements | None = None


class Release(NamedTuple):
    """One published version of a package.

    ``released_at`` is the registry's publish time (npm packument ``time[version]``, the
    earliest PyPI file upload time), ``None`` when the registry does not say. ``yanked``
    follows PEP 592 (every file of the release yanked); ``deprecated`` carries npm's
    deprecation message (empty messages mean "not deprecated" and are stored as ``None``).
    ``installable`` is false for a PyPI release that has no files, and, in the catalog a row
    with a Python bound is judged on (``policy.requires_python.bounded``), for a release whose
    ``requires_python`` excludes that Python (such a release keeps its ``requires_python``; a
    release without files has none). ``prerelease`` is true when
    the registry marks the release a prerelease whatever its version says (GitHub's
    author-set ``prerelease`` flag): the policy then treats it as a prerelease too.
    ``digest`` is what the version pointed at when the catalog was read (GitHub tags: the
    40-hex commit SHA), ``None`` when the catalog does not say; it can be stale for a moved
    tag (``Catalog.version_of_digest``).

    A named tuple rather than a frozen dataclass: a catalog holds every release of a package
    and a warm run builds tens of thousands of them; a tuple is made in half the time.
    """

    version: str
    released_at: datetime | None
    yanked: bool = False
    deprecated: str | None = None
    installable: bool = True
    prerelease: bool = False
    digest: str | None = None
    # Why the release was yanked or retracted (a Go ``retract`` comment), ``None`` when unsaid.
    yanked_reason: str | None = None
    # The Pythons a PyPI release installs on (Requires-Python of its files, PEP 440 specifiers;
    # several joined by `` || ``: any admits), ``None`` when it names none (every Python).
    requires_python: str | None = None


class Catalog(msgspec.Struct, frozen=True):
    """The release list of one package from one datasource.

    ``latest`` is the registry's own notion of newest stable (npm ``dist-tags.latest``; PyPI
    newest non-yanked final release, else its newest prerelease), or ``None`` if the registry
    names none; a prerelease ``latest`` is replaced by the newest stable release for a stable
    current when the policy evaluates it. ``fetched_at``
    is when the catalog was retrieved or revalidated. ``time_source`` names where publish
    times come from, for the report (``npm packument time``, ``PyPI upload-time``). ``reused``
    is true when the catalog came from the cache without any request. ``lists_every_version``
    is false for registries whose list omits valid versions (the Go proxy's ``@v/list`` leaves
    out pseudo-versions), so a current version missing from it is not suspicious.
    ``successor`` names a newer major version published under another name (a Go module's
    ``/v2`` path) as ``"<name> <version>"``. ``caveat`` is a part of the lookup that failed
    while the releases were read (the check for such a successor): every row of this package
    reports it and counts as a failed lookup (``Finding.failed_lookup``). ``note`` is a fact
    every row of this package reports that is no failure (the Go proxy probed as many newer
    majors as it does at most; a deprecated Go module). ``path_latest`` is the latest of the
    package's own name when ``successor``'s releases were added (a Go module's own path).
    ``published_later`` are
    the versions left out of ``releases`` because they were published after the time the run
    evaluates (``--now`` in the past): known to exist, not yet released then.
    """

    datasource: str
    package_name: str
    releases: tuple[Release, ...]
    latest: str | None
    fetched_at: datetime
    dist_tags: tuple[tuple[str, str], ...] = ()
    time_source: str = ""
    source_url: str = ""
    reused: bool = False
    lists_every_version: bool = True
    successor: str | None = None
    caveat: str | None = None
    published_later: tuple[str, ...] = ()
    note: str | None = None
    path_latest: str | None = None

    def release(self, version: str) -> Release | None:
        """Return the release with exactly this version string, or ``None``."""
        for rel in self.releases:
            if rel.version == version:
                return rel
        return None

    def version_of_digest(self, digest: str) -> str | None:
        """Return the version whose ``digest`` is ``digest`` (case-insensitive), or ``None``.

        For a commit pin without a comment (``uses: o/r@<sha>``): the tag whose commit it is.
        Several tags often name one commit (``v4``, ``v4.2``, ``v4.2.2``): the one with the most
        dot-separated parts wins (the most precise), the first in catalog order among equals.
        The digests are as of ``fetched_at``: a caller checks the answer against the tag's
        commit now (the datasource's ``get_digest``) before relying on it.
        """
        wanted = digest.lower()
        best: str | None = None
        for rel in self.releases:
            if (
                rel.digest is not None
                and rel.digest.lower() == wanted
                and (best is None or rel.version.count(".") > best.count("."))
            ):
                best = rel.version
        return best

    def dist_tag(self, tag: str) -> str | None:
        """Return the version a dist-tag points at, or ``None``."""
        for name, version in self.dist_tags:
            if name == tag:
                return version
        return None


class DigestTerms(msgspec.Struct, frozen=True):
    """What a datasource's digests are, in the words its rows use, and what its catalog knows.

    ``digest``: what a pin names (``digest``: an OCI manifest digest; ``commit``: a git commit
    SHA). ``ref``: what a reference that is no version is taken for (``mutable tag`` for an
    image tag such as ``latest``; ``branch`` for a GitHub ref such as ``main`` that is no tag of
    the catalog). ``mismatch``: the note of a pin that is not what its tag points at now, with
    ``{tag}``, ``{pinned}`` and ``{now}`` filled in. ``absent``: why a digest lookup that gave
    none found nothing (a registry that answers without one; GitHub: no such tag or branch).
    ``catalog_digests``: each catalog
    ``Release.digest`` is that version's digest (GitHub tags and their commits), so a pin
    written without a tag can be found back (``Catalog.version_of_digest``) and a non-version
    ref told apart from a tag; image tag lists carry no digests. ``qualified``: ref prefixes
    that say what a ref is, whatever the catalog holds (GitHub: ``refs/tags/`` a ``tag``,
    ``refs/heads/`` a ``branch``).
    """

    digest: str = "digest"
    ref: str = "mutable tag"
    mismatch: str = "the digest of tag {tag} moved: pinned {pinned}, now {now}"
    absent: str = "the registry gave none"
    catalog_digests: bool = False
    qualified: tuple[tuple[str, str], ...] = ()


# Container images (OCI distribution): the terms every image row has used since issue 13.
IMAGE_DIGESTS = DigestTerms()


class HeldBack(msgspec.Struct, frozen=True):
    """A release newer than current that the release-age policy does not admit yet.

    ``eligible_at`` is ``released_at`` plus the wait for its update type; both are ``None``
    when the publish time is unknown (the policy then holds it back until the age is known).
    """

    version: str
    released_at: datetime | None
    eligible_at: datetime | None
    update_type: UpdateType | None
    reason: str


class Finding(msgspec.Struct, frozen=True):
    """The verdict for one dependency at one instant (``evaluated_at``).

    ``libyears`` is the time between the release of current and of latest, in years of
    365.25 days (Cox et al., ICSE 2015); ``None`` when either date is unknown. When the row
    cannot move to latest (latest older than a prerelease current, or deprecated and not
    proposed) it is measured to the newest release the row can move to (proposed or held
    back), 0 when there is none: never to a release the row refuses.
    ``versions_behind`` counts the releases newer than current up to and including latest that
    a user could move to (not yanked, not deprecated, same stability as current).

    Content digests (container images, ``sha256:…``): ``digest`` is the one the declaration
    pins (``Dependency.digest``); ``current_digest`` what the current tag points at now, read
    from the registry (``None`` when not read or unknown: never taken as "unchanged");
    ``new_digest`` what the eligible tag points at, read only for a digest-pinned reference
    that is proposed a newer tag (tag and digest change together, as Renovate proposes them).

    ``date_sources`` pairs each version whose date the row shows (current, latest, eligible,
    held back) with where that date came from, for datasources whose dates have several
    sources or a noteworthy one (``datasource.base.LazyTimes``: ``release`` or ``commit`` for
    a GitHub tag, ``last-push`` for a Docker Hub tag); empty when the catalog's
    ``time_source`` says where every date comes from.

    ``proposed`` is the value to write for the eligible release at the precision the
    declaration uses, for schemes that keep one (mise: ``20`` → ``22``, not ``22.12.0``);
    ``None`` when nothing is proposed or the scheme keeps no precision.

    ``failed_lookup`` says which part of the lookup failed although the verdict stands on what
    was read (a Go module's check for a newer major: the row may be behind a major it could not
    see; the publish times a release-age wait needed: a release held back, or admitted by
    ``unknown-age = "admit"``, for its unknown age); such a row counts as a failed lookup (exit
    3), whatever its status. ``None`` when the whole lookup succeeded.
    """

    status: Status
    reason: str | None = None
    current: str | None = None
    current_source: CurrentSource | None = None
    latest: str | None = None
    eligible: str | None = None
    update_type: UpdateType | None = None
    versions_behind: int | None = None
    current_released_at: datetime | None = None
    latest_released_at: datetime | None = None
    eligible_released_at: datetime | None = None
    libyears: float | None = None
    held_back: tuple[HeldBack, ...] = ()
    major_available: str | None = None
    digest: str | None = None
    current_digest: str | None = None
    new_digest: str | None = None
    date_sources: tuple[tuple[str, str], ...] = ()
    proposed: str | None = None
    failed_lookup: str | None = None


class FetchResponse(msgspec.Struct, frozen=True):
    """An HTTP response as the fetch facade hands it to a datasource.

    ``url`` is the final URL after redirects; ``headers`` keys are lower-case; ``fetched_at`` is
    when the response was received or last revalidated. ``content`` is the body in the requested
    representation (the derived compact document when a ``derive`` function was given and the
    answer was a success). ``cache`` says how it was obtained: ``fresh`` (served from the cache
    without a request), ``revalidated`` (a 304 confirmed the stored body), ``miss`` (fetched) or
    ``off`` (no cache in use). ``credential`` names the source of the credential the request
    carried (``~/.npmrc``, ``~/.netrc`` …; never the secret), ``None`` for an anonymous one.
    ``credential_unused``, on a 401/403 only, says why a credential configured for ``url`` was
    not sent (an unset ``${VAR}`` …; never the secret) or why a ``Bearer`` challenge got no
    token (a realm that is not http(s)), ``None`` when there was none.
    """

    status: int
    url: str
    headers: tuple[tuple[str, str], ...]
    content: bytes
    fetched_at: datetime
    cache: Literal["fresh", "revalidated", "miss", "off"] = "off"
    credential: str | None = None
    credential_unused: str | None = None

    def header(self, name: str) -> str | None:
        """Return the first value of header ``name`` (case-insensitive), or ``None``."""
        wanted = name.lower()
        for key, value in self.headers:
            if key == wanted:
                return value
        return None
