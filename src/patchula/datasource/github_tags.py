"""GitHub tags datasource (Renovate's ``github-tags``, the one GitHub Actions use) on REST.

Tags come from ``GET {base}/repos/{owner}/{repo}/tags?per_page=100`` and the pages its
``Link`` header names (same origin only, at most ``MAX_PAGES``), each stored as the compact
``github-tags-v1`` document (name and commit SHA only) and revalidated with its validators
(``If-None-Match`` → 304); all pages are stored together or not at all. GitHub orders this
list by name, not newest-first, so a new tag can appear anywhere in it: the list is read whole
(conditional requests), never merged into release rows with a stop at the first known tag,
which would miss it. Each ``Release.digest`` is the tag's commit SHA as listed
(``Catalog.version_of_digest`` finds the tag of a commit pin).

Tags carry no dates. ``release_times`` (asked lazily, only for the versions the policy needs)
takes the ``published_at`` of the GitHub release of that tag when there is one (the
``github-releases`` catalog, merged into release rows), else the tag's commit date
(``GET …/commits/{sha}``, committer date), at most ``MAX_COMMIT_LOOKUPS`` per call.

``get_digest(fetch, base, "owner/repo", ref)`` is the commit a tag or branch points at now:
``GET …/git/matching-refs/tags/<ref>`` (exact ``refs/tags/<ref>`` only; an annotated tag's
object is followed through ``GET …/git/tags/{sha}`` to its commit), else
``GET …/git/ref/heads/<ref>`` for a branch, ``None`` when neither exists. A reused tag
catalog never freezes a tag's commit: the digest is read per ref, with its own freshness.

Not here: GraphQL (``POST /graphql``, complete histories and bounded ref reads with a token);
``get_catalog`` and ``get_digest`` are the seams it replaces. Sources: registries.md §6 and
§8; docs.github.com REST "Repositories: list tags", "Git references" (matching refs, get a
reference), "Git tags", "Commits"; seed 003 "Catalog views" (mutable tags).
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING, cast
from urllib.parse import quote

import msgspec

from patchula.datasource import github_releases
from patchula.datasource.base import (
    Datasource,
    LazyTimes,
    ReleaseRow,
    check_status,
    next_link,
    parse_time,
)
from patchula.datasource.github_releases import (
    CREDENTIAL_HINT,
    DEFAULT_BASE_URL,
    DEFAULT_VERSIONING,
    HEADERS,
    PAGE_SIZE,
    REGISTRY,
    decode,
    repository_url,
)
from patchula.errors import PackageNotFound, RegistryError
from patchula.http.auth import redact_url
from patchula.models import Catalog, DigestTerms, Release

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence
    from datetime import datetime

    from patchula.datasource.base import Fetch, MethodFetch
    from patchula.models import FetchResponse

__all__ = ["DEFAULT_BASE_URL", "DEFAULT_VERSIONING", "REGISTRY"]

ID = "github-tags"
REPRESENTATION = "github-tags-v1"
TIME_SOURCE = (
    "GitHub release published_at when the tag has a release, else the tag's commit date "
    "(committer), asked only for the versions the policy needs"
)
MAX_PAGES = 100
# A pin is a commit; a ref that is no version is a branch unless the tag list names it; the tag
# beside a commit pin is the one its comment names (``uses: o/r@<sha> # v4.2.2``); each tag of
# the list carries its commit, so a pin without a comment is found back.
DIGEST_TERMS = DigestTerms(
    digest="commit",
    ref="branch",
    mismatch="the comment says {tag}, but the pinned commit {pinned} is not {tag}'s ({now})",
    absent="GitHub has no tag or branch of that name",
    catalog_digests=True,
)
# Commit dates asked per call at most (one request each): the rest stay unknown.
MAX_COMMIT_LOOKUPS = 10
# Annotated tags pointing at annotated tags are followed this many levels at most.
MAX_TAG_DEPTH = 4
# Dates are a release list plus a commit per tag: not asked for libyears alone (GitHub's
# anonymous budget is 60 requests an hour).
TIMES_FOR_LIBYEARS = False
# A commit SHA: 40 hex digits (SHA-1), or 64 in a SHA-256 repository.
_SHA = re.compile(r"[0-9a-f]{40}(?:[0-9a-f]{24})?")
# git check-ref-format: no control characters, space, ``~^:?*[\``, ``..``, ``@{``, no leading
# ``/`` or ``-``, no trailing ``/``, ``.`` or ``.lock``.
_BAD_REF = re.compile(r"[\x00-\x20\x7f~^:?*\[\\]|\.\.|@\{|^[/-]|[/.]$|\.lock$|//")


class _Commit(msgspec.Struct, frozen=True):
    sha: str


class _Tag(msgspec.Struct, frozen=True):
    """One REST tag object: its name and commit (tarball URLs and node ids are dropped)."""

    name: str
    commit: _Commit


class _Object(msgspec.Struct, frozen=True):
    type: str
    sha: str


class _Ref(msgspec.Struct, frozen=True):
    """A git reference (``git/matching-refs``, ``git/ref``) or an annotated tag's ``object``."""

    object: _Object
    ref: str = ""


class _TagObject(msgspec.Struct, frozen=True):
    """``git/tags/{sha}``: the annotated tag's target."""

    object: _Object


class _Person(msgspec.Struct, frozen=True):
    date: str | None = None


class _CommitDetail(msgspec.Struct, frozen=True):
    committer: _Person | None = None
    author: _Person | None = None


class _CommitAnswer(msgspec.Struct, frozen=True):
    """``commits/{sha}``: the commit's dates."""

    commit: _CommitDetail


_TAGS = msgspec.json.Decoder(list[_Tag])
_COMPACT = msgspec.json.Decoder(list[tuple[str, str]])
_REFS = msgspec.json.Decoder(list[_Ref])
_REF = msgspec.json.Decoder(_Ref)
_TAG_OBJECT = msgspec.json.Decoder(_TagObject)
_COMMIT = msgspec.json.Decoder(_CommitAnswer)


def derive_tags(content: bytes) -> bytes:
    """Reduce one ``/tags`` page to the compact ``github-tags-v1`` document.

    A JSON array of ``[name, commit sha]`` in the page's order; a tag whose name no
    reference could name or whose SHA is not hex is left out. Raises ``RegistryError`` for a
    page that is not an array of tag objects.
    """
    page = decode(_TAGS, content, "GitHub tag list")
    rows = [
        (tag.name, tag.commit.sha.lower())
        for tag in page
        if _BAD_REF.search(tag.name) is None
        and len(tag.name) <= 255  # noqa: PLR2004 - a tag name as a release may carry it
        and _SHA.fullmatch(tag.commit.sha.lower())
    ]
    return msgspec.json.encode(rows)


def parse_compact(content: bytes) -> list[ReleaseRow]:
    """Decode a ``github-tags-v1`` document to rows ``(name, None, commit sha)``."""
    return [(name, None, sha) for name, sha in decode(_COMPACT, content, REPRESENTATION)]


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Return the tags of GitHub repository ``package_name`` (``owner/repo``).

    Tags in GitHub's order, each with an unknown publish time (``release_times`` supplies
    them) and its commit SHA as ``digest``; ``latest`` is ``None`` (tag rules pick it). Raises
    ``PackageNotFound`` on 404, ``RegistryError`` on other answers (a 401/403 names the token
    source), an unusable page, a ``Link`` to another origin or a loop, or more than
    ``MAX_PAGES`` pages; ``RateLimited`` from the governor.
    """
    repo = repository_url(base_url, package_name)
    first = f"{repo}/tags?per_page={PAGE_SIZE}"
    what = f"GitHub repository {package_name!r} (tags)"
    method_fetch = cast("MethodFetch", fetch)
    rows: dict[str, str | None] = {}
    responses: list[FetchResponse] = []
    seen: set[str] = set()
    url: str | None = first
    async with method_fetch.all_or_nothing():
        while url is not None:
            if len(responses) >= MAX_PAGES:
                msg = f"{what}: the tag list is too long (more than {MAX_PAGES} pages); not read"
                raise RegistryError(msg)
            seen.add(url)
            response = await method_fetch(
                url, headers=HEADERS, representation=REPRESENTATION, derive=derive_tags
            )
            check_status(response, what, credential_hint=CREDENTIAL_HINT)
            responses.append(response)
            for name, _, sha in parse_compact(response.content):
                rows.setdefault(name, sha)
            url = next_link(response, url, first, what, "tag list")
            if url is not None and url in seen:
                msg = f"{what}: the tag list's next-page links loop ({redact_url(url)})"
                raise RegistryError(msg)
    return Catalog(
        datasource=ID,
        package_name=package_name,
        releases=tuple(Release(name, None, digest=sha) for name, sha in rows.items()),
        latest=None,
        fetched_at=min(response.fetched_at for response in responses),
        time_source=TIME_SOURCE,
        source_url=first,
        reused=all(response.cache == "fresh" for response in responses),
    )


async def release_times(
    fetch: Fetch, registries: Mapping[str, str], package_name: str, versions: Sequence[str]
) -> dict[str, datetime | None]:
    """Return the dates of the asked tags: their release's ``published_at``, else the commit's.

    The base is the registry ``github`` (default ``https://api.github.com``). The release
    list (``github-releases``, newest pages merged into release rows: a warm run costs one
    conditional request) dates every tag that has a release; for up to ``MAX_COMMIT_LOOKUPS``
    others the tag's commit (from the tag list) is asked for its committer date (else author
    date). Returns exactly the asked versions, ``None`` where unknown (no such tag, a commit
    lookup over the bound). A repository without releases has commit dates only. Raises
    ``LookupFailed`` like ``get_catalog``.
    """
    base = registries.get(REGISTRY) or DEFAULT_BASE_URL
    found: dict[str, datetime | None] = dict.fromkeys(versions)
    try:
        releases = await github_releases.get_catalog(fetch, base, package_name)
    except PackageNotFound:
        releases = None
    if releases is not None:
        for release in releases.releases:
            if release.version in found and release.released_at is not None:
                found[release.version] = release.released_at
    missing = [version for version, moment in found.items() if moment is None]
    if not missing:
        return found
    tags = await get_catalog(fetch, base, package_name)
    repo = repository_url(base, package_name)
    what = f"GitHub repository {package_name!r} (commit dates)"
    for version in missing[:MAX_COMMIT_LOOKUPS]:
        tag = tags.release(version)
        if tag is None or tag.digest is None:
            continue
        response = await fetch(f"{repo}/commits/{tag.digest}", headers=HEADERS)
        if response.status in {404, 422}:  # the commit is gone (force-pushed away)
            continue
        check_status(response, what, credential_hint=CREDENTIAL_HINT)
        detail = decode(_COMMIT, response.content, what).commit
        person = detail.committer or detail.author
        found[version] = parse_time(person.date if person is not None else None)
    return found


def _safe_ref(ref: str) -> bool:
    """Whether ``ref`` is a tag or branch name git allows (``git check-ref-format``)."""
    return 0 < len(ref) <= 255 and _BAD_REF.search(ref) is None  # noqa: PLR2004 - name bound


async def get_digest(fetch: Fetch, base_url: str, package_name: str, version: str) -> str | None:
    """Return the commit SHA tag or branch ``version`` of ``owner/repo`` points at now.

    A tag first: ``git/matching-refs/tags/<ref>``, the entry that is exactly
    ``refs/tags/<ref>`` (prefix matches are other tags); a lightweight tag's object is the
    commit, an annotated tag's is followed through ``git/tags/{sha}`` (up to
    ``MAX_TAG_DEPTH`` levels) to it. Else a branch: ``git/ref/heads/<ref>`` (404: none).
    ``None`` when neither exists or the name is not a valid ref. Raises ``PackageNotFound``
    when the repository is unknown, ``RegistryError`` for other failures (a 401/403 names
    the token source) and unusable answers.
    """
    if not _safe_ref(version):
        return None
    repo = repository_url(base_url, package_name)
    what = f"GitHub repository {package_name!r} (ref {version!r})"
    name = quote(version, safe="/")
    response = await fetch(f"{repo}/git/matching-refs/tags/{name}", headers=HEADERS)
    check_status(response, what, credential_hint=CREDENTIAL_HINT)
    wanted = f"refs/tags/{version}"
    target = next(
        (r.object for r in decode(_REFS, response.content, what) if r.ref == wanted), None
    )
    for _ in range(MAX_TAG_DEPTH):
        if target is None or target.type != "tag":
            break
        answer = await fetch(f"{repo}/git/tags/{quote(target.sha, safe='')}", headers=HEADERS)
        check_status(answer, what, credential_hint=CREDENTIAL_HINT)
        target = decode(_TAG_OBJECT, answer.content, what).object
    if target is None:
        branch = await fetch(f"{repo}/git/ref/heads/{name}", headers=HEADERS)
        if branch.status == 404:  # noqa: PLR2004 - no such branch either
            return None
        check_status(branch, what, credential_hint=CREDENTIAL_HINT)
        target = decode(_REF, branch.content, what).object
    if target.type != "commit":
        msg = f"{what}: names a {target.type[:20]!r} object, not a commit"
        raise RegistryError(msg)
    sha = target.sha.lower()
    if _SHA.fullmatch(sha) is None:
        msg = f"{what}: GitHub answered an unusable commit SHA"
        raise RegistryError(msg)
    return sha


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning=DEFAULT_VERSIONING,
    get_catalog=get_catalog,
    single_document=None,  # tag pages, then releases and commits for dates
    release_times=LazyTimes(lookup=release_times, for_libyears=TIMES_FOR_LIBYEARS),
    get_digest=get_digest,
    digest_terms=DIGEST_TERMS,
    freshness_floor_representations=(),
    dependencies=None,
)
