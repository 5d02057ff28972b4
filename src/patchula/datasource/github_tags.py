"""GitHub tags datasource (Renovate's ``github-tags``, the one GitHub Actions use): REST, GraphQL.

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
``github-releases`` catalog, merged into release rows), else that of a release at the tag's
commit (a floating ``v7`` on ``v7.2.0``'s commit), else the tag's commit date
(``GET …/commits/{sha}``, committer date), at most ``MAX_COMMIT_LOOKUPS`` per call; each date
says which it is (``Dated``: ``release``, ``same-commit-release`` or ``commit``), and so does
its row. A commit the tag list names that GitHub answers 404 for is a failed date lookup of
that tag (``Unavailable``), never a tag without a date. The release and tag lists are read
once per run (``once_per_run``), however many rows and rounds ask.

``get_digest(fetch, base, "owner/repo", ref)`` is the commit a tag or branch points at now:
``GET …/git/matching-refs/tags/<ref>`` (exact ``refs/tags/<ref>`` only; an annotated tag's
object is followed through ``GET …/git/tags/{sha}`` to its commit), else
``GET …/git/ref/heads/<ref>`` for a branch, ``None`` when neither exists. A reused tag
catalog never freezes a tag's commit: the digest is read per ref, with its own freshness.

With a GitHub token (``github_releases.graphql_token``), GraphQL replaces REST: the tag
history is ``TAGS_QUERY`` pages of 100 refs, newest commit first, each with its commit and
commit date (annotated tags followed), merged into release rows (``graphql_history``; a stored
tag with a new commit is refreshed, never a stop), so dates need no commit lookups; and the
refs the rows need now are resolved together, one bounded query per repository and event-loop
turn (``resolve_refs``), a ref GraphQL names no commit for asked on REST. The stop at the
first stored tag trusts commit-date order: a tag put later on a commit older than the newest
stored one is not seen until the rows are gone (the cost of one page per warm run).

Sources: GitHub GraphQL reference (``Repository.ref``, ``refs``, ``Ref.target``, ``Tag``,
``Commit``); registries.md §6 and §8; docs.github.com REST "Repositories: list tags", "Git
references" (matching refs, get a reference), "Git tags", "Commits"; seed 003 "Catalog
views" (mutable tags).
"""

from __future__ import annotations

import re
import weakref
from typing import TYPE_CHECKING, cast
from urllib.parse import quote

import anyio
import anyio.lowlevel
import msgspec

from patchula.datasource import github_releases
from patchula.datasource.base import (
    Datasource,
    Dated,
    LazyTimes,
    ReleaseRow,
    Unavailable,
    check_status,
    credential_identity_of,
    from_epoch,
    linked_pages,
    parse_time,
)
from patchula.datasource.github_releases import (
    CREDENTIAL_HINT,
    DEFAULT_BASE_URL,
    DEFAULT_VERSIONING,
    HEADERS,
    PAGE_SIZE,
    REGISTRY,
    PartialAnswerError,
    check_page,
    connection,
    decode,
    graphql,
    graphql_pages,
    graphql_token,
    graphql_url,
    merge_history,
    repository_url,
)
from patchula.errors import LookupFailed, PackageNotFound, RegistryError
from patchula.http.auth import redact_url
from patchula.http.flight import once_per_run
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
    "GitHub release published_at when the tag has a release (or is at a release's commit), "
    "else the tag's commit date (committer), asked only for the versions the policy needs"
)
# Where a tag's date came from, as its row says (``dateSources``): its GitHub release's
# ``published_at``, else its commit's committer date.
RELEASE_DATE = "release"
COMMIT_DATE = "commit"
# A tag without a release of its own on the commit of one (a floating ``v7`` moved to
# ``v7.2.0``): that release's ``published_at``.
SAME_COMMIT_RELEASE = "same-commit-release"
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
    qualified=(("refs/tags/", "tag"), ("refs/heads/", "branch")),
)
# Commit dates asked per call at most (one request each): the rest stay unknown.
MAX_COMMIT_LOOKUPS = 10
# Annotated tags pointing at annotated tags are followed this many levels at most.
MAX_TAG_DEPTH = 4
# A ``git/matching-refs`` answer (every tag starting with the name) longer than this is
# refused: a real prefix of one ref matches a few hundred at most.
MAX_MATCHING_REFS = 10_000
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
    page that is not an array of tag objects or has more than ``PAGE_SIZE`` (``check_page``).
    """
    page = decode(_TAGS, content, "GitHub tag list")
    check_page(len(page), "GitHub tag list")
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


# --- the tag history through GraphQL (a token required) ----------------------------------------

# Newest commit first: a new or moved tag (a floating ``v4`` follows its newest release) comes
# before the tags already stored. Tag objects are followed to their commit and its date.
TAGS_QUERY = (
    "query($owner: String!, $name: String!, $after: String) { "
    "repository(owner: $owner, name: $name) { "
    f'refs(refPrefix: "refs/tags/", first: {PAGE_SIZE}, after: $after, '
    "orderBy: {field: TAG_COMMIT_DATE, direction: DESC}) { "
    "nodes { name target { __typename oid ... on Commit { committedDate } "
    "... on Tag { target { __typename oid ... on Commit { committedDate } } } } } "
    "pageInfo { hasNextPage endCursor } } } }"
)
# The release rows of GraphQL tag histories: ``(tag, commit date epoch, commit sha)``.
GRAPHQL_SOURCE = "github-graphql-tags-v1"


class _GraphQLTarget(msgspec.Struct, frozen=True, rename={"kind": "__typename"}):
    kind: str = ""
    oid: str = ""
    committedDate: str | None = None  # noqa: N815 - GitHub's field name
    target: _GraphQLTarget | None = None


class _GraphQLRef(msgspec.Struct, frozen=True):
    name: str
    target: _GraphQLTarget | None = None


class _RefConnection(msgspec.Struct, frozen=True, rename="camel"):
    nodes: list[_GraphQLRef | None]
    page_info: github_releases.PageInfo


def graphql_tag_rows(
    data: Mapping[str, object], what: str = "GitHub tags"
) -> tuple[list[ReleaseRow], github_releases.PageInfo]:
    """One GraphQL ``refs`` page as rows ``(tag, commit date epoch, commit sha)``.

    A lightweight tag's target is its commit; an annotated tag's ``Tag`` target is followed
    once (a tag of a tag, a tree or a blob is left out, as are names no ref could have).
    """
    page = connection(data, "refs", _RefConnection, what)
    rows: list[ReleaseRow] = []
    for node in page.nodes:
        if node is None or not _safe_ref(node.name):
            continue
        target = node.target
        if target is not None and target.kind == "Tag":
            target = target.target
        if target is None or target.kind != "Commit" or not _SHA.fullmatch(target.oid.lower()):
            continue
        moment = parse_time(target.committedDate)
        rows.append((node.name, None if moment is None else moment.timestamp(), target.oid.lower()))
    return rows, page.page_info


def _name_and_commit(row: ReleaseRow) -> object:
    return row[0], row[2]


async def graphql_history(
    fetch: Fetch, base_url: str, package_name: str
) -> tuple[list[ReleaseRow], list[FetchResponse]]:
    """The tag history of ``owner/repo`` through GraphQL, merged into release rows.

    Pages of ``PAGE_SIZE`` refs, newest commit first (``TAGS_QUERY``), read until a tag that
    is stored with the same commit (``github_releases.merge_history``; a moved tag is refreshed,
    never a stop). Returns rows ``(tag, commit date epoch, commit sha)`` newest first and the
    responses. Read once per run (``once_per_run``): the catalog and the publish-time rounds
    share it. Raises like ``github_releases.graphql``, and ``RegistryError`` for more than
    ``MAX_PAGES`` pages.
    """
    repository_url(base_url, package_name)  # refuses a name that is not owner/repo
    key = _run_key("tags-graphql", fetch, graphql_url(base_url), base_url, package_name)
    return await once_per_run(fetch, key, lambda: _graphql_history(fetch, base_url, package_name))


async def _graphql_history(
    fetch: Fetch, base_url: str, package_name: str
) -> tuple[list[ReleaseRow], list[FetchResponse]]:
    repo = repository_url(base_url, package_name)
    what = f"GitHub repository {package_name!r} (tags)"
    pages = graphql_pages(
        fetch, base_url, package_name, TAGS_QUERY, lambda data: graphql_tag_rows(data, what), what
    )
    return await merge_history(
        fetch,
        pages,
        source=GRAPHQL_SOURCE,
        package=repo,
        what=what,
        listing="tag list",
        identity=_name_and_commit,
    )


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Return the tags of GitHub repository ``package_name`` (``owner/repo``).

    With a GitHub token the history comes through GraphQL (``graphql_history``: newest commit
    first, merged into release rows; a warm run reads one page), else from REST as follows.

    Tags in GitHub's order, each with an unknown publish time (``release_times`` supplies
    them) and its commit SHA as ``digest``; ``latest`` is ``None`` (tag rules pick it). Raises
    ``PackageNotFound`` on 404, ``RegistryError`` on other answers (a 401/403 names the token
    source), an unusable page, a ``Link`` to another origin or a loop, or more than
    ``MAX_PAGES`` pages; ``RateLimited`` from the governor.
    """
    if graphql_token(fetch, base_url) is not None:
        history, answers = await graphql_history(fetch, base_url, package_name)
        return Catalog(
            datasource=ID,
            package_name=package_name,
            releases=tuple(Release(name, None, digest=sha) for name, _, sha in history),
            latest=None,
            fetched_at=min(response.fetched_at for response in answers),
            time_source=TIME_SOURCE,
            source_url=graphql_url(base_url),
            reused=all(response.cache == "fresh" for response in answers),
        )
    repo = repository_url(base_url, package_name)
    first = f"{repo}/tags?per_page={PAGE_SIZE}"
    key = _run_key("tags", fetch, first, base_url, package_name)
    return await once_per_run(fetch, key, lambda: _rest_catalog(fetch, package_name, first))


def _run_key(
    document: str, fetch: Fetch, url: str, base_url: str, package_name: str
) -> tuple[str, ...]:
    """The ``once_per_run`` key of one GitHub document of ``package_name`` (see there)."""
    identity = credential_identity_of(fetch, url)
    return (ID, document, base_url.rstrip("/"), package_name.lower(), identity)


async def _rest_catalog(fetch: Fetch, package_name: str, first: str) -> Catalog:
    """The REST tag list from its ``first`` page on (``get_catalog`` without a token)."""
    what = f"GitHub repository {package_name!r} (tags)"
    method_fetch = cast("MethodFetch", fetch)
    rows: dict[str, str | None] = {}
    responses: list[FetchResponse] = []
    async with method_fetch.all_or_nothing():
        pages = linked_pages(
            method_fetch,
            first,
            what=what,
            listing="tag list",
            max_pages=MAX_PAGES,
            representation=REPRESENTATION,
            derive=derive_tags,
            credential_hint=CREDENTIAL_HINT,
            headers=HEADERS,
        )
        async for response in pages:
            responses.append(response)
            for name, _, sha in parse_compact(response.content):
                rows.setdefault(name, sha)
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
) -> dict[str, Dated | Unavailable | None]:
    """Return the dates of the asked tags: their release's ``published_at``, else the commit's.

    The base is the registry ``github`` (default ``https://api.github.com``). In order:

    1. the release list (``github-releases``, newest pages merged into release rows) dates
       every tag that has a release (source ``RELEASE_DATE``);
    2. a tag at the same commit as a release (a floating ``v7`` moved to ``v7.2.0``'s commit)
       takes that release's ``published_at``, the earliest when several releases share the
       commit (source ``SAME_COMMIT_RELEASE``), without a request;
    3. the others, up to ``MAX_COMMIT_LOOKUPS``, their commit's committer date, else author
       date (source ``COMMIT_DATE``): from the GraphQL tag history with a token, else
       ``GET …/commits/{sha}`` of the commit the tag list names.

    The release and tag lists are read once per run (``once_per_run``), shared with the
    catalog lookup and every later round. Returns exactly the asked versions: ``Unavailable``
    for a tag whose commit GitHub answers 404 or 422 for (the tag list named it: a failed
    lookup of that tag, not a tag without a date), ``None`` where no date is known otherwise
    (no such tag, a commit lookup over the bound). A repository without releases has commit
    dates only. Raises ``LookupFailed`` like ``get_catalog`` for any other failure.
    """
    base = registries.get(REGISTRY) or DEFAULT_BASE_URL
    found: dict[str, Dated | Unavailable | None] = dict.fromkeys(versions)
    try:
        releases = await github_releases.get_catalog(fetch, base, package_name)
    except PackageNotFound:
        releases = None
    published = {
        r.version: r.released_at
        for r in (releases.releases if releases is not None else ())
        if r.released_at is not None
    }
    for version in found:
        if version in published:
            found[version] = Dated(published[version], RELEASE_DATE)
    missing = [version for version, dated in found.items() if dated is None]
    if not missing:
        return found
    if graphql_token(fetch, base) is not None:
        # The GraphQL tag history carries every tag's commit date: no commit lookups.
        history, _ = await graphql_history(fetch, base, package_name)
        commits = {name: sha for name, _, sha in history if sha is not None}
        dates = {name: moment for name, moment, _ in history}
        for version in _by_release_commit(missing, commits, published, found):
            moment = from_epoch(dates.get(version))
            found[version] = Dated(moment, COMMIT_DATE) if moment is not None else None
        return found
    tags = await get_catalog(fetch, base, package_name)
    commits = {r.version: r.digest for r in tags.releases if r.digest is not None}
    missing = _by_release_commit(missing, commits, published, found)
    repo = repository_url(base, package_name)
    what = f"GitHub repository {package_name!r} (commit dates)"
    for version in missing[:MAX_COMMIT_LOOKUPS]:
        sha = commits.get(version)
        if sha is None:
            continue
        response = await fetch(f"{repo}/commits/{sha}", headers=HEADERS)
        if response.status in {404, 422}:
            # The tag list names this commit, yet GitHub does not know it (it answers 422 "No
            # commit found for SHA" too): the date lookup failed, the tag is not undated.
            found[version] = Unavailable(
                f"{what}: tag {version} names commit {sha[:12]}…, which GitHub does not know"
                f" (HTTP {response.status} from {redact_url(response.url)})"
            )
            continue
        check_status(response, what, credential_hint=CREDENTIAL_HINT)
        detail = decode(_COMMIT, response.content, what).commit
        person = detail.committer or detail.author
        moment = parse_time(person.date if person is not None else None)
        found[version] = Dated(moment, COMMIT_DATE) if moment is not None else None
    return found


def _by_release_commit(
    missing: Sequence[str],
    commits: Mapping[str, str | None],
    published: Mapping[str, datetime],
    found: dict[str, Dated | Unavailable | None],
) -> list[str]:
    """Date each of ``missing`` at a release's commit by that release; return the others.

    ``commits`` maps tag → commit SHA (the tag list), ``published`` release tag →
    ``published_at``. A tag on the commit of several releases takes the earliest: its code
    was public from then on.
    """
    released: dict[str, datetime] = {}
    for tag, moment in published.items():
        sha = commits.get(tag)
        if sha is not None and (sha not in released or moment < released[sha]):
            released[sha] = moment
    left: list[str] = []
    for version in missing:
        sha = commits.get(version)
        at = released.get(sha) if sha is not None else None
        if at is not None:
            found[version] = Dated(at, SAME_COMMIT_RELEASE)
        else:
            left.append(version)
    return left


def _safe_ref(ref: str) -> bool:
    """Whether ``ref`` is a tag or branch name git allows (``git check-ref-format``)."""
    return 0 < len(ref) <= 255 and _BAD_REF.search(ref) is None  # noqa: PLR2004 - name bound


# --- ref resolution through GraphQL (a token required) -----------------------------------------

# Refs resolved per GraphQL query at most (two aliases each: the tag and the branch); a batch
# with more is sent as several queries.
MAX_REFS_PER_QUERY = 25


def _target_selection(depth: int) -> str:
    """``target { __typename oid ... on Tag { target { … } } }``, ``depth`` tags deep."""
    inner = "__typename oid"
    for _ in range(depth):
        inner = f"__typename oid ... on Tag {{ target {{ {inner} }} }}"
    return f"target {{ {inner} }}"


# An annotated tag's ``target`` is followed up to ``MAX_TAG_DEPTH`` tag objects to its commit.
_TAG_TARGET = _target_selection(MAX_TAG_DEPTH)


def refs_query(count: int) -> str:
    """The query resolving ``count`` refs of one repository: aliases ``t<i>`` and ``h<i>``.

    ``t<i>`` is ``refs/tags/<ref>`` (variable ``$t<i>``), followed through annotated tags;
    ``h<i>`` is ``refs/heads/<ref>`` (``$h<i>``). Ref names travel as variables, never in
    the query text. Source: GitHub GraphQL reference, ``Repository.ref(qualifiedName)``,
    ``Ref.target`` (``GitObject``: ``Commit``, ``Tag``).
    """
    names = [f"$t{i}: String!, $h{i}: String!" for i in range(count)]
    fields = [
        f"t{i}: ref(qualifiedName: $t{i}) {{ {_TAG_TARGET} }} "
        f"h{i}: ref(qualifiedName: $h{i}) {{ target {{ __typename oid }} }}"
        for i in range(count)
    ]
    return (
        f"query($owner: String!, $name: String!, {', '.join(names)}) {{ "
        f"repository(owner: $owner, name: $name) {{ {' '.join(fields)} }} }}"
    )


def _commit_of(ref: object) -> str | None:
    """The commit SHA a ``ref`` answer names (through tag objects), else ``None``."""
    target = ref.get("target") if isinstance(ref, dict) else None
    for _ in range(MAX_TAG_DEPTH + 1):
        if not isinstance(target, dict):
            return None
        kind, oid = target.get("__typename"), target.get("oid")
        if kind == "Commit" and isinstance(oid, str) and _SHA.fullmatch(oid.lower()):
            return oid.lower()
        if kind != "Tag":
            return None  # a tag of a tree or blob: the REST lookup says what it is
        target = target.get("target")
    return None


async def resolve_refs(
    fetch: Fetch, base_url: str, package_name: str, refs: Sequence[str]
) -> dict[str, str | None]:
    """Resolve ``refs`` (tags, else branches) of ``owner/repo`` in bounded GraphQL queries.

    One query per ``MAX_REFS_PER_QUERY`` refs (``refs_query``): a tag's commit through its
    annotated tag objects, else the branch's commit. Returns ref → commit SHA, or ``None``
    where GraphQL named no commit (no such ref, an object too deep, a field that erred in a
    partial answer): the caller asks REST for those. Raises ``PackageNotFound`` for an unknown
    repository, ``RateLimited`` and ``RegistryError`` like ``github_releases.graphql``.
    """
    repository_url(base_url, package_name)  # refuses a name that is not owner/repo
    owner, _, name = package_name.partition("/")
    what = f"GitHub repository {package_name!r} (refs)"
    found: dict[str, str | None] = {}
    unique = list(dict.fromkeys(refs))
    for start in range(0, len(unique), MAX_REFS_PER_QUERY):
        chunk = unique[start : start + MAX_REFS_PER_QUERY]
        variables: dict[str, object] = {"owner": owner, "name": name}
        for i, ref in enumerate(chunk):
            # A qualified ref (``refs/tags/v1``) is asked as written, under both aliases.
            qualified = qualified_ref(ref)[0] is not None
            variables[f"t{i}"] = ref if qualified else f"refs/tags/{ref}"
            variables[f"h{i}"] = ref if qualified else f"refs/heads/{ref}"
        try:
            data = await graphql(fetch, base_url, refs_query(len(chunk)), variables, what=what)
        except PartialAnswerError as partial:
            data = partial.data  # erring aliases are null: REST answers for them
        repository = data.get("repository")
        if not isinstance(repository, dict):
            msg = f"{what}: GitHub GraphQL answered no repository"
            raise RegistryError(msg)
        for i, ref in enumerate(chunk):
            found[ref] = _commit_of(repository.get(f"t{i}")) or _commit_of(repository.get(f"h{i}"))
    return found


class _Batch(msgspec.Struct):
    """The refs of one repository asked in one event-loop turn, resolved by one query."""

    refs: list[str] = msgspec.field(default_factory=list)
    done: anyio.Event = msgspec.field(default_factory=anyio.Event)
    found: dict[str, str | None] | None = None
    failure: LookupFailed | None = None


# Open batches per fetch facade (a run's), per (base URL, repository): concurrent digest
# reads of one repository join the batch the first of them opened.
_BATCHES: weakref.WeakKeyDictionary[object, dict[tuple[str, str, str], _Batch]] = (
    weakref.WeakKeyDictionary()
)


async def _batched(fetch: Fetch, base_url: str, package_name: str, ref: str) -> str | None:
    """The commit of ``ref``, from one batch of this turn's refs (``None``: ask REST for it).

    The first caller opens the batch, lets the other tasks of this event-loop turn join it
    (one checkpoint), then sends ``resolve_refs`` for all of them; the others wait for it.
    Its failure (``LookupFailed``) is every member's; a batch that ended otherwise (its
    sender cancelled) leaves each member to REST.
    """
    try:
        open_batches = _BATCHES.setdefault(fetch, {})
    except TypeError:  # a facade that cannot be weakly referenced: no batching
        return (await resolve_refs(fetch, base_url, package_name, [ref]))[ref]
    # Lookups of checkouts with other credentials never share a query (its answer is theirs).
    key = (base_url.rstrip("/"), package_name.lower(), graphql_token(fetch, base_url) or "")
    batch = open_batches.get(key)
    if batch is not None:
        batch.refs.append(ref)
        await batch.done.wait()
    else:
        batch = open_batches[key] = _Batch([ref])
        try:
            await anyio.lowlevel.checkpoint()
            if open_batches.get(key) is batch:
                del open_batches[key]
            batch.found = await resolve_refs(fetch, base_url, package_name, batch.refs)
        except LookupFailed as exc:
            batch.failure = exc
        finally:
            if open_batches.get(key) is batch:
                del open_batches[key]
            batch.done.set()
    if batch.failure is not None:
        raise batch.failure
    return (batch.found or {}).get(ref)


async def get_digest(fetch: Fetch, base_url: str, package_name: str, version: str) -> str | None:
    """Return the commit SHA tag or branch ``version`` of ``owner/repo`` points at now.

    With a GitHub token for GraphQL (``github_releases.graphql_token``): the refs of the
    repository asked at once (the SHA pin's tag to check, the tag to propose) are resolved
    together in one bounded query (``resolve_refs``), annotated tags followed; what it names
    no commit for falls back to the REST lookup below. A tag catalog, reused or not, is never
    asked: a tag's commit has its own freshness (seed 003, "mutable tags"). Without a token,
    REST only. Raises like the REST lookup, and ``RateLimited``/``RegistryError`` for a
    GraphQL answer with errors (``github_releases.derive_graphql``).
    """
    if not _safe_ref(version):
        return None
    if graphql_token(fetch, base_url) is not None:
        sha = await _batched(fetch, base_url, package_name, version)
        if sha is not None:
            return sha
    return await rest_digest(fetch, base_url, package_name, version)


async def rest_digest(fetch: Fetch, base_url: str, package_name: str, version: str) -> str | None:
    """Return the commit SHA tag or branch ``version`` points at now, asked on REST.

    A tag first: ``git/matching-refs/tags/<ref>``, the entry that is exactly
    ``refs/tags/<ref>`` (prefix matches are other tags); a lightweight tag's object is the
    commit, an annotated tag's is followed through ``git/tags/{sha}`` (up to
    ``MAX_TAG_DEPTH`` levels) to it. Else a branch: ``git/ref/heads/<ref>`` (404: none). A
    fully qualified ``refs/tags/<tag>`` is only a tag, ``refs/heads/<branch>`` only a branch
    (``qualified_ref``). ``None`` when neither exists or the name is not a valid ref. Raises
    ``PackageNotFound`` when the repository is unknown, ``RegistryError`` for other failures
    (a 401/403 names the token source) and unusable answers: more than
    ``MAX_MATCHING_REFS`` refs, annotated tags that loop or nest deeper than ``MAX_TAG_DEPTH``.
    """
    if not _safe_ref(version):
        return None
    repo = repository_url(base_url, package_name)
    what = f"GitHub repository {package_name!r} (ref {version!r})"
    kind, short = qualified_ref(version)
    name = quote(short, safe="/")
    target: _Object | None = None
    if kind != "branch":
        response = await fetch(f"{repo}/git/matching-refs/tags/{name}", headers=HEADERS)
        check_status(response, what, credential_hint=CREDENTIAL_HINT)
        refs = decode(_REFS, response.content, what)
        if len(refs) > MAX_MATCHING_REFS:
            msg = f"{what}: GitHub answered more than {MAX_MATCHING_REFS} matching refs; not read"
            raise RegistryError(msg)
        wanted = f"refs/tags/{short}"
        target = next((r.object for r in refs if r.ref == wanted), None)
        target = await _follow_tags(fetch, repo, target, what)
    if target is None and kind != "tag":
        branch = await fetch(f"{repo}/git/ref/heads/{name}", headers=HEADERS)
        if branch.status == 404:  # noqa: PLR2004 - no such branch either
            return None
        check_status(branch, what, credential_hint=CREDENTIAL_HINT)
        target = decode(_REF, branch.content, what).object
    if target is None:
        return None
    if target.type != "commit":
        msg = f"{what}: names a {target.type[:20]!r} object, not a commit"
        raise RegistryError(msg)
    sha = target.sha.lower()
    if _SHA.fullmatch(sha) is None:
        msg = f"{what}: GitHub answered an unusable commit SHA"
        raise RegistryError(msg)
    return sha


async def _follow_tags(
    fetch: Fetch, repo: str, target: _Object | None, what: str
) -> _Object | None:
    """The object annotated tag ``target`` leads to, through ``git/tags/{sha}``.

    Raises ``RegistryError`` when the tag objects loop (a tag naming itself or an earlier one)
    or nest deeper than ``MAX_TAG_DEPTH``: git itself never writes a loop, so the answer is
    unusable, never "no such tag".
    """
    seen: set[str] = set()
    while target is not None and target.type == "tag":
        if target.sha in seen:
            msg = f"{what}: its annotated tag objects loop (at {target.sha[:40]!r}); not followed"
            raise RegistryError(msg)
        if len(seen) >= MAX_TAG_DEPTH:
            msg = f"{what}: annotated tags nested more than {MAX_TAG_DEPTH} deep; not followed"
            raise RegistryError(msg)
        seen.add(target.sha)
        answer = await fetch(f"{repo}/git/tags/{quote(target.sha, safe='')}", headers=HEADERS)
        check_status(answer, what, credential_hint=CREDENTIAL_HINT)
        target = decode(_TAG_OBJECT, answer.content, what).object
    return target


def qualified_ref(ref: str) -> tuple[str | None, str]:
    """What a fully qualified ref is, and its short name: ``refs/tags/v1`` → ``("tag", "v1")``.

    ``refs/heads/<name>`` is a ``branch``; any other ref is ``(None, ref)``: a tag, else a
    branch, as the runner resolves ``uses: owner/repo@<ref>`` (docs.github.com, "Workflow
    syntax": ``{owner}/{repo}@{ref}``, a branch, tag or SHA).
    """
    for prefix, kind in DIGEST_TERMS.qualified:
        if ref.startswith(prefix) and len(ref) > len(prefix):
            return kind, ref[len(prefix) :]
    return None, ref


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning=DEFAULT_VERSIONING,
    get_catalog=get_catalog,
    single_document=None,  # tag pages, then releases and commits for dates
    release_times=LazyTimes(lookup=release_times, for_libyears=TIMES_FOR_LIBYEARS),
    get_digest=get_digest,
    platform_digests=None,
    digest_terms=DIGEST_TERMS,
    freshness_floor_representations=(),
    dependencies=None,
)
