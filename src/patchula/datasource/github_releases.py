"""GitHub releases datasource (Renovate's ``github-releases``): REST or GraphQL, merged into rows.

``GET {base}/repos/{owner}/{repo}/releases?per_page=100`` and the pages its ``Link`` header
names (same origin only, at most ``MAX_PAGES``), with ``Accept: application/vnd.github+json``
and ``X-GitHub-Api-Version: 2022-11-28``; the fetch facade sends the stored validators
(``If-None-Match``) and turns a 304 into the stored page. Each page is stored as the compact
``github-releases-v1`` document (tag, ``published_at``, prerelease flag; no assets, counters
or bodies), drafts left out. ``prerelease: true`` makes a release a prerelease whatever its
tag says (``Release.prerelease``). ``latest`` is ``None``: the list is in creation order, not
version order (a backport ``v1.13.5`` published after ``v1.14.0`` is listed first), and
``/releases/latest`` is not read, so the row's versioning picks the newest stable release, as
Renovate's lookup and mise's ``github:`` backend order releases by version.

Release heads and merges (seed 003, "SQLite cache"): upstream order is newest-first, never
inferred from versions or dates. The pages are merged into the cache's release rows through
the facade (``datasource.base.ReleaseRows``, implemented by ``http.fetcher.Fetcher`` over its
cache, so ``cache`` never imports ``http`` and the datasource gets only the facade): the first
page with ``after=None`` (its first item becomes the release head), each next page with the
previous page's last inserted version as ``after``, so a disjoint refresh prefix (more new
releases than a page holds) is told apart from history pagination. Reading stops at the first
release already stored; a warm run whose first page is unchanged (fresh, or a 304) and starts
with the stored head reads nothing more and answers from the rows. Merges wait, with the
pages' HTTP writes, for the pagination's clean end (``all_or_nothing``).

GraphQL (``POST {base}/graphql``; GitHub Enterprise Server ``/api/graphql``) is used only when
the fetch facade sends a token there (``graphql_token``: GitHub refuses anonymous GraphQL).
Then the history is ``RELEASES_QUERY`` pages of 100 (``CREATED_AT`` descending, cursors),
merged into their own release rows by the same ``merge_history``. ``graphql`` is the family's
one way to send a query: variables never spliced into the text, bodies bounded
(``MAX_QUERY_BYTES``), answers with ``errors`` (HTTP 200) mapped to ``RateLimited``,
``PackageNotFound``, ``PartialAnswerError`` or ``RegistryError`` and never stored.

Sources: registries.md §6; docs.github.com REST "Releases" (list, latest, ``make_latest``),
"Using pagination in the REST API", "Best practices" (conditional requests); GraphQL
"Rate limits and query limits", "Using pagination in the GraphQL API", object ``Release``;
GraphQL spec §7.1 (response format); seed 003 "SQLite cache".
"""

from __future__ import annotations

import re
from collections.abc import Awaitable, Callable, Mapping
from typing import TYPE_CHECKING, Any, TypeVar, cast

import msgspec

from patchula.datasource.base import (
    Datasource,
    ReleaseRow,
    ReleaseRows,
    check_status,
    credential_identity_of,
    credential_source_of,
    describe_decode_error,
    from_epoch,
    next_link,
    parse_time,
    release_rows_of,
    url_safe_name,
)
from patchula.errors import PackageNotFound, RegistryError
from patchula.http.auth import redact_text, redact_url
from patchula.http.flight import once_per_run
from patchula.http.governor import RateLimited
from patchula.models import Catalog, Release

if TYPE_CHECKING:
    from patchula.datasource.base import Fetch, MethodFetch
    from patchula.models import Derive, FetchResponse

T = TypeVar("T")

ID = "github-releases"
# The registry name (``--registry github=URL``, ``GITHUB_API_URL``) both GitHub datasources use.
REGISTRY = "github"
DEFAULT_BASE_URL = "https://api.github.com"
# Renovate gives GitHub tags and releases Docker-like tag rules: ``v4`` → ``v5`` keeps precision.
DEFAULT_VERSIONING = "docker"
REPRESENTATION = "github-releases-v1"
# Where a GitHub token goes (``credentials.github_credential``), for a 401/403 row.
CREDENTIAL_HINT = "the GH_TOKEN or GITHUB_TOKEN environment variable"
TIME_SOURCE = "GitHub release published_at"
HEADERS = {"Accept": "application/vnd.github+json", "X-GitHub-Api-Version": "2022-11-28"}
PAGE_SIZE = 100
# A longer history is refused rather than read in part (never a short catalog).
MAX_PAGES = 100
# The release-row digest of a release its author marked a prerelease (rows carry no flag).
PRERELEASE = "prerelease"
# GitHub: an owner is 1-39 letters, digits or single hyphens; a repository 1-100 of
# letters, digits, ``.``, ``-``, ``_`` (not ``.`` or ``..``).
_OWNER = re.compile(r"[A-Za-z0-9](?:[A-Za-z0-9]|-(?=[A-Za-z0-9])){0,38}")
_REPO = re.compile(r"[A-Za-z0-9._-]{1,100}")
# A tag name as a release may carry it: no control characters, at most 255 characters.
_TAG = re.compile(r"[^\x00-\x20\x7f]{1,255}")


class _Release(msgspec.Struct, frozen=True):
    """One REST release object: the fields a freshness scan reads (the rest is dropped)."""

    tag_name: str
    draft: bool = False
    prerelease: bool = False
    published_at: str | None = None
    created_at: str | None = None


_RELEASES = msgspec.json.Decoder(list[_Release])
_COMPACT = msgspec.json.Decoder(list[tuple[str, float | None, bool]])


# --- GraphQL (``POST {graphql}``, a token required) -------------------------------------------

# The stored form of a GraphQL answer: its ``data`` only (answers with ``errors`` are never
# stored); the key names a digest of the query body, so each query has its own entry.
GRAPHQL_REPRESENTATION = "github-graphql-data-v1"
# A query body (query text and variables) over this is refused before it is sent.
MAX_QUERY_BYTES = 32 * 1024
# An error message from GitHub is shown at most this long, control characters dropped.
MESSAGE_LIMIT = 200
_CONTROL = re.compile(r"[\x00-\x1f\x7f]+")


class _GraphQLError(msgspec.Struct, frozen=True):
    """One entry of a GraphQL answer's ``errors`` (GraphQL spec §7.1.2; GitHub adds ``type``)."""

    message: str = ""
    type: str | None = None
    path: list[str | int] | None = None


class _GraphQLAnswer(msgspec.Struct, frozen=True):
    data: dict[str, Any] | None = None
    errors: list[_GraphQLError] | None = None


_GRAPHQL = msgspec.json.Decoder(_GraphQLAnswer)
_DATA = msgspec.json.Decoder(dict[str, Any])


class PartialAnswerError(RegistryError):
    """A GraphQL answer with ``data`` and ``errors`` at some of its fields (never stored).

    ``data`` is what GitHub did answer (the erring fields ``null``); ``paths`` the erring
    fields' paths. A caller that can use part of an answer (ref resolution, per alias) may;
    anything else treats it as the ``RegistryError`` it is.
    """

    def __init__(self, reason: str, data: dict[str, Any], paths: list[list[str | int]]) -> None:
        super().__init__(reason)
        self.data = data
        self.paths = paths


def graphql_url(base_url: str) -> str:
    """The GraphQL endpoint beside REST base ``base_url``: ``{base}/graphql``.

    GitHub Enterprise Server's ``https://<host>/api/v3`` has it at ``https://<host>/api/graphql``
    (the rule ``credentials.github_graphql_url`` scopes the token by; kept here so a lookup
    imports no configuration code).
    """
    base = base_url.rstrip("/")
    if base.endswith("/api/v3"):
        return f"{base.removesuffix('/v3')}/graphql"
    return f"{base}/graphql"


def graphql_token(fetch: Fetch, base_url: str) -> str | None:
    """Where the token GraphQL would be sent with comes from (``GH_TOKEN``), else ``None``.

    GitHub's GraphQL API refuses anonymous callers, so without a token the REST path is used
    and no GraphQL request is ever sent (``datasource.base.CredentialProbe``).
    """
    return credential_source_of(fetch, graphql_url(base_url))


def _said(text: str) -> str:
    """A message GitHub wrote, safe for a row: one line, URLs redacted, bounded."""
    return redact_text(_CONTROL.sub(" ", text)).strip()[:MESSAGE_LIMIT]


def derive_graphql(content: bytes) -> bytes:
    """Keep a GraphQL answer's ``data``; refuse one with ``errors`` (so it is never stored).

    Raises ``RateLimited`` for a ``RATE_LIMITED`` error (GitHub answers a spent GraphQL budget
    with HTTP 200 and an ``errors`` array), ``PackageNotFound`` for ``NOT_FOUND`` at
    ``repository``, ``PartialAnswerError`` when ``data`` came with errors at some fields, and
    ``RegistryError`` for any other error or an answer that is not a GraphQL response.
    Source: GraphQL spec §7.1 (response format); docs.github.com "Rate limits and query
    limits for the GraphQL API".
    """
    answer = decode(_GRAPHQL, content, "GitHub GraphQL answer")
    errors = answer.errors or []
    if not errors:
        if answer.data is None:
            msg = "GitHub GraphQL answer: no data and no errors"
            raise RegistryError(msg)
        return msgspec.json.encode(answer.data)
    first = errors[0]
    said = "; ".join(dict.fromkeys(_said(e.message) for e in errors[:3] if e.message))
    said = said[:MESSAGE_LIMIT] or "no message"
    if any(e.type == "RATE_LIMITED" for e in errors):
        msg = f"GitHub GraphQL rate limit exceeded (RATE_LIMITED): {said}"
        raise RateLimited(msg)
    if any(e.type == "NOT_FOUND" and e.path == ["repository"] for e in errors):
        msg = f"GitHub repository not found (GraphQL NOT_FOUND): {said}"
        raise PackageNotFound(msg)
    kind = f" ({_said(first.type)[:40]})" if first.type else ""
    data = answer.data
    if data is not None and any(data.values()) and all(e.path for e in errors):
        paths = [list(e.path or []) for e in errors]
        msg = f"GitHub GraphQL answered in part{kind}: {said}"
        raise PartialAnswerError(msg, data, paths)
    msg = f"GitHub GraphQL refused the query{kind}: {said}"
    raise RegistryError(msg)


async def graphql(
    fetch: Fetch, base_url: str, query: str, variables: Mapping[str, object], *, what: str
) -> dict[str, Any]:
    """Send one GraphQL ``query`` with ``variables`` and return its ``data`` (``graphql_read``)."""
    return (await graphql_read(fetch, base_url, query, variables, what=what))[0]


async def graphql_read(
    fetch: Fetch, base_url: str, query: str, variables: Mapping[str, object], *, what: str
) -> tuple[dict[str, Any], FetchResponse]:
    """Send one GraphQL ``query`` with ``variables``; return its ``data`` and the response.

    ``POST {graphql_url(base_url)}`` with the REST headers and a JSON body (``query``,
    ``variables``: values are never spliced into the query text); at most
    ``MAX_QUERY_BYTES``. The answer is stored like a GET's, keyed by the body's digest, only
    without errors (``derive_graphql``). Raises what ``derive_graphql`` raises (the reason
    prefixed with ``what``), ``RegistryError`` for a non-2xx answer (a 401/403 names the token
    source, never the token) or an oversized query, ``RateLimited`` from the governor.
    """
    body = msgspec.json.encode({"query": query, "variables": dict(variables)})
    if len(body) > MAX_QUERY_BYTES:
        msg = f"{what}: the GraphQL query would be {len(body)} bytes (limit {MAX_QUERY_BYTES})"
        raise RegistryError(msg)
    method_fetch = cast("MethodFetch", fetch)
    try:
        response = await method_fetch(
            graphql_url(base_url),
            headers={**HEADERS, "Content-Type": "application/json"},
            representation=GRAPHQL_REPRESENTATION,
            derive=derive_graphql,
            method="POST",
            body=body,
        )
    except PartialAnswerError as exc:
        raise PartialAnswerError(f"{what}: {exc.reason}", exc.data, exc.paths) from None
    except RegistryError as exc:
        if not exc.reason.startswith("GitHub"):
            raise
        raise type(exc)(f"{what}: {exc.reason}") from None
    except PackageNotFound as exc:
        raise PackageNotFound(f"{what}: {exc.reason}") from None
    check_status(response, what, credential_hint=CREDENTIAL_HINT)
    return decode(_DATA, response.content, what), response


class PageInfo(msgspec.Struct, frozen=True, rename="camel"):
    """A GraphQL connection's ``pageInfo``: whether a next page exists, and its cursor."""

    has_next_page: bool = False
    end_cursor: str | None = None


class _GraphQLRelease(msgspec.Struct, frozen=True, rename="camel"):
    tag_name: str
    published_at: str | None = None
    is_prerelease: bool = False
    is_draft: bool = False


class _ReleaseConnection(msgspec.Struct, frozen=True, rename="camel"):
    nodes: list[_GraphQLRelease | None]
    page_info: PageInfo


def connection(data: Mapping[str, Any], field: str, kind: type[T], what: str) -> T:
    """``data.repository.<field>`` as ``kind``.

    Raises ``RegistryError`` when it has another shape or more than ``PAGE_SIZE`` nodes
    (``check_page``).
    """
    repository = data.get("repository")
    if not isinstance(repository, dict):
        msg = f"{what}: GitHub GraphQL answered no repository"
        raise RegistryError(msg)
    value = repository.get(field)
    nodes = value.get("nodes") if isinstance(value, dict) else None
    if isinstance(nodes, list):
        check_page(len(nodes), f"{what}: GraphQL {field}")
    try:
        return msgspec.convert(value, kind)
    except (msgspec.ValidationError, RecursionError) as exc:
        msg = f"{what}: unusable GraphQL answer ({describe_decode_error(exc)})"
        raise RegistryError(msg) from None


# Newest-first by creation (GraphQL orders releases by ``CREATED_AT`` or ``NAME`` only).
RELEASES_QUERY = (
    "query($owner: String!, $name: String!, $after: String) { "
    "repository(owner: $owner, name: $name) { "
    f"releases(first: {PAGE_SIZE}, after: $after, orderBy: {{field: CREATED_AT, direction: DESC}}) "
    "{ nodes { tagName publishedAt isPrerelease isDraft } "
    "pageInfo { hasNextPage endCursor } } } }"
)
# The release rows of GraphQL histories live apart from the REST pages' (another order).
GRAPHQL_SOURCE = "github-graphql-releases-v1"


def graphql_pages(
    fetch: Fetch,
    base_url: str,
    package_name: str,
    query: str,
    rows_of: Callable[[Mapping[str, Any]], tuple[list[ReleaseRow], PageInfo]],
    what: str,
) -> PageReader:
    """A ``PageReader`` of a GraphQL connection: ``query`` with ``$owner``, ``$name``, ``$after``.

    ``rows_of(data)`` gives a page's rows and its ``pageInfo``; the next cursor is
    ``endCursor`` while ``hasNextPage``.
    """
    owner, _, name = package_name.partition("/")

    async def read_page(cursor: str | None) -> Page:
        variables = {"owner": owner, "name": name, "after": cursor}
        data, response = await graphql_read(fetch, base_url, query, variables, what=what)
        rows, info = rows_of(data)
        following = info.end_cursor if info.has_next_page and info.end_cursor else None
        return response, rows, following

    return read_page


def graphql_release_rows(
    data: Mapping[str, Any], what: str = "GitHub releases"
) -> tuple[list[ReleaseRow], PageInfo]:
    """One GraphQL ``releases`` page as rows (drafts and unusable tags left out)."""
    page = connection(data, "releases", _ReleaseConnection, what)
    rows: list[ReleaseRow] = []
    for node in page.nodes:
        if node is None or node.is_draft or _TAG.fullmatch(node.tag_name) is None:
            continue
        moment = parse_time(node.published_at)
        epoch = None if moment is None else moment.timestamp()
        rows.append((node.tag_name, epoch, PRERELEASE if node.is_prerelease else None))
    return rows, page.page_info


def repository_url(base_url: str, package_name: str) -> str:
    """``{base}/repos/{owner}/{repo}`` for ``package_name`` ``owner/repo``.

    ``base_url`` is used as given (``https://api.github.com``, or a GitHub Enterprise Server's
    ``https://ghe.example/api/v3``). Raises ``RegistryError`` for a name that is not
    ``owner/repo`` by GitHub's rules (it is never put into a URL then).
    """
    owner, _, repo = url_safe_name(package_name).partition("/")
    if _OWNER.fullmatch(owner) is None or _REPO.fullmatch(repo) is None or repo in {".", ".."}:
        msg = f"refusing to request GitHub repository {package_name!r}: not owner/repo"
        raise RegistryError(msg)
    return f"{base_url.rstrip('/')}/repos/{owner}/{repo}"


def check_page(count: int, what: str) -> None:
    """Refuse a page of more than ``PAGE_SIZE`` entries: raises ``RegistryError``.

    Every page is asked for ``PAGE_SIZE`` entries (REST ``per_page``, GraphQL ``first``: the
    largest GitHub serves), so a longer one is no GitHub answer; taking it would let one page
    carry a million tags past the ``MAX_PAGES`` bound (and every row of the package after).
    """
    if count > PAGE_SIZE:
        msg = f"{what}: a page of {count} entries, more than the {PAGE_SIZE} asked; not read"
        raise RegistryError(msg)


def decode(decoder: msgspec.json.Decoder[T], content: bytes, what: str) -> T:
    """Decode one GitHub JSON answer; raises ``RegistryError`` saying what was wrong with it."""
    try:
        return decoder.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        msg = f"{what}: unusable answer from GitHub ({describe_decode_error(exc)})"
        raise RegistryError(msg) from None


def derive_releases(content: bytes) -> bytes:
    """Reduce one ``/releases`` page to the compact ``github-releases-v1`` document.

    A JSON array of ``[tag, published_at epoch seconds or null, prerelease]`` in the page's
    order; drafts (no ``published_at``, only visible with push access) and tags that no
    reference could name are left out, as are assets, counters, bodies and URLs. Raises
    ``RegistryError`` for a page that is not an array of release objects or is longer than
    ``PAGE_SIZE`` (``check_page``).
    """
    page = decode(_RELEASES, content, "GitHub release list")
    check_page(len(page), "GitHub release list")
    rows: list[tuple[str, float | None, bool]] = []
    for release in page:
        if release.draft or _TAG.fullmatch(release.tag_name) is None:
            continue
        moment = parse_time(release.published_at)
        rows.append(
            (release.tag_name, None if moment is None else moment.timestamp(), release.prerelease)
        )
    return msgspec.json.encode(rows)


def parse_compact(content: bytes) -> list[ReleaseRow]:
    """Decode a ``github-releases-v1`` document to release rows (``PRERELEASE`` digests)."""
    rows = decode(_COMPACT, content, f"stored {REPRESENTATION} document")
    return [(tag, moment, PRERELEASE if pre else None) for tag, moment, pre in rows]


# One page of a newest-first history: the response read, its rows, the next page's cursor (a
# URL for REST, an ``endCursor`` for GraphQL) or ``None`` at the end.
Page = tuple["FetchResponse", list[ReleaseRow], str | None]
PageReader = Callable[[str | None], Awaitable[Page]]


def _by_name(row: ReleaseRow) -> object:
    return row[0]


async def merge_history(
    fetch: Fetch,
    read_page: PageReader,
    *,
    source: str,
    package: str,
    what: str,
    listing: str,
    identity: Callable[[ReleaseRow], object] = _by_name,
) -> tuple[list[ReleaseRow], list[FetchResponse]]:
    """Read a newest-first history page by page (``read_page(cursor)``), merged into the rows.

    Returns the whole history in upstream order (newest first) and the responses read. With
    release rows (``ReleaseRows``): a first page that was not refetched (fresh or 304) and
    starts with the stored head answers from the rows at once; otherwise pages are read until
    one holds a stored row (the same ``identity``: the name, or for tags name and commit), and
    merged (first page ``after=None``, then each with the previous page's last version as
    ``after``) when the block ends cleanly. A stored name whose ``identity`` changed (a moved
    tag) is not a stop: it is left out of the page merges (the cache's merge would stop at it
    and drop the newer rows after it) and refreshed on its own afterwards. Without rows,
    every page is read. Raises ``RegistryError`` for more than ``MAX_PAGES`` pages or a
    cursor that repeats, and what ``read_page`` raises.
    """
    method_fetch = cast("MethodFetch", fetch)
    store = release_rows_of(fetch)
    stored = await store.release_rows(source, package) if store is not None else None
    head, rows = stored if stored is not None else (None, [])
    known = {identity(row) for row in rows}
    names = {row[0] for row in rows}
    pages: list[list[ReleaseRow]] = []
    moved: list[ReleaseRow] = []
    responses: list[FetchResponse] = []
    versions: set[str] = set()
    seen: set[str | None] = set()
    cursor: str | None = None
    async with method_fetch.all_or_nothing():
        while True:
            if len(responses) >= MAX_PAGES:
                msg = f"{what}: the {listing} is too long (more than {MAX_PAGES} pages); not read"
                raise RegistryError(msg)
            seen.add(cursor)
            response, items, following = await read_page(cursor)
            responses.append(response)
            if (
                len(responses) == 1
                and response.cache in {"fresh", "revalidated"}
                and head is not None
                and rows
                and items
                and identity(items[0]) == identity(head)
            ):
                return rows, responses  # the head is unchanged: nothing newer to read
            page: list[ReleaseRow] = []
            met = False
            for item in items:
                if item[0] in versions:
                    continue  # listed again on the next page (offset pages shift): once
                versions.add(item[0])
                if identity(item) in known:
                    page.append(item)
                    met = True  # merged to refresh its date and digest; older ones are stored
                    break
                (moved if item[0] in names else page).append(item)
            pages.append(page)
            if met or following is None:
                break
            if following in seen:
                if "://" in following:
                    msg = f"{what}: the {listing}'s next-page links loop ({redact_url(following)})"
                else:
                    msg = f"{what}: the {listing}'s next-page cursors loop"
                raise RegistryError(msg)
            cursor = following
        if store is not None:
            await _merge_pages(store, source, package, pages, moved)
    fetched = [item for page in pages for item in page] + moved
    if store is not None and fetched:
        merged = await store.release_rows(source, package)
        stored_names = {row[0] for row in merged[1]} if merged is not None else set()
        if merged is not None and all(item[0] in stored_names for item in fetched):
            return merged[1], responses
    fresh = {item[0] for item in fetched}
    return fetched + [row for row in rows if row[0] not in fresh], responses


async def _merge_pages(
    store: ReleaseRows,
    source: str,
    package: str,
    pages: list[list[ReleaseRow]],
    moved: list[ReleaseRow],
) -> None:
    """Merge ``pages`` in order (each anchored after the previous one), then refresh ``moved``."""
    after: str | None = None
    for page in pages:
        if page:
            await store.merge_release_rows(source, package, page, after=after)
            after = page[-1][0]
    for item in moved:  # stored already: the merge refreshes its date and digest only
        await store.merge_release_rows(source, package, [item], after=item[0])


async def read_history(
    fetch: Fetch,
    first: str,
    *,
    source: str,
    package: str,
    representation: str,
    derive: Derive,
    rows_of: Callable[[bytes], list[ReleaseRow]],
    what: str,
    listing: str,
) -> tuple[list[ReleaseRow], list[FetchResponse]]:
    """Read a newest-first REST history from ``first`` and its ``Link`` pages (``merge_history``).

    Raises ``LookupFailed`` like ``get_catalog`` (a ``Link`` to another origin, a loop, more
    than ``MAX_PAGES`` pages, an unusable page, a non-2xx answer).
    """
    method_fetch = cast("MethodFetch", fetch)

    async def read_page(cursor: str | None) -> Page:
        url = cursor or first
        response = await method_fetch(
            url, headers=HEADERS, representation=representation, derive=derive
        )
        check_status(response, what, credential_hint=CREDENTIAL_HINT)
        return response, rows_of(response.content), next_link(response, url, first, what, listing)

    return await merge_history(
        fetch, read_page, source=source, package=package, what=what, listing=listing
    )


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Return the releases of GitHub repository ``package_name`` (``owner/repo``).

    With a token for GraphQL, read there (``RELEASES_QUERY``; ``source_url`` is the GraphQL
    endpoint), else on REST. Releases in upstream order (newest first), their
    ``published_at``; drafts left out; an author-marked prerelease has ``prerelease=True``.
    ``latest`` is ``None`` (list order is creation order: the versioning picks it). Raises
    ``PackageNotFound`` on 404 (no such repository, or a private one without access),
    ``RegistryError`` on other answers (a 401/403 names the token source: ``GH_TOKEN`` or
    ``GITHUB_TOKEN``, or where one goes), an unusable page, a ``Link`` to another origin or
    a loop, more than ``MAX_PAGES`` pages; ``RateLimited`` from the governor. Read once per
    run (``once_per_run``): a ``github-releases`` row and the publish-time rounds of the
    ``github-tags`` rows of the repository share it.
    """
    repo = repository_url(base_url, package_name)
    first = f"{repo}/releases?per_page={PAGE_SIZE}"
    graph = graphql_token(fetch, base_url) is not None
    url = graphql_url(base_url) if graph else first
    identity = credential_identity_of(fetch, url)
    key = (ID, "releases", base_url.rstrip("/"), package_name.lower(), identity)
    return await once_per_run(fetch, key, lambda: _catalog(fetch, base_url, package_name))


async def _catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """``get_catalog`` itself, without the run's memo."""
    repo = repository_url(base_url, package_name)
    first = f"{repo}/releases?per_page={PAGE_SIZE}"
    what = f"GitHub repository {package_name!r} (releases)"
    if graphql_token(fetch, base_url) is not None:
        first = graphql_url(base_url)
        pages = graphql_pages(
            fetch,
            base_url,
            package_name,
            RELEASES_QUERY,
            lambda data: graphql_release_rows(data, what),
            what,
        )
        history, responses = await merge_history(
            fetch, pages, source=GRAPHQL_SOURCE, package=repo, what=what, listing="release list"
        )
    else:
        history, responses = await read_history(
            fetch,
            first,
            source=REPRESENTATION,
            package=repo,
            representation=REPRESENTATION,
            derive=derive_releases,
            rows_of=parse_compact,
            what=what,
            listing="release list",
        )
    releases = tuple(
        Release(version, from_epoch(moment), prerelease=digest == PRERELEASE)
        for version, moment, digest in history
    )
    return Catalog(
        datasource=ID,
        package_name=package_name,
        releases=releases,
        # Creation order is no version order: the row's versioning picks the newest.
        latest=None,
        fetched_at=min(response.fetched_at for response in responses),
        time_source=TIME_SOURCE,
        source_url=first,
        reused=all(response.cache == "fresh" for response in responses),
    )


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning=DEFAULT_VERSIONING,
    get_catalog=get_catalog,
    single_document=None,  # pages, merged into release rows
    release_times=None,  # every release carries its published_at
    get_digest=None,  # commits are the tags datasource's (``github-tags``)
    platform_digests=None,
    digest_terms=None,
    freshness_floor_representations=(),
    dependencies=None,
)
