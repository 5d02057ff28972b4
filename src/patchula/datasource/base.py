"""The ``Datasource`` contract every datasource module satisfies, and the helpers they share.

A datasource module defines ``ID``, ``DEFAULT_BASE_URL``, ``parse(...) -> Catalog`` (pure: bytes
in, Catalog out, raising ``RegistryError`` on an unusable body), an
``async get_catalog(fetch, base_url, package_name) -> Catalog`` and one ``DATASOURCE``
(``Datasource``) naming all its abilities. It never opens sockets: the fetch facade is passed
in, and it maps HTTP outcomes to the ``LookupFailed`` tree (404/410 → ``PackageNotFound``,
other non-2xx → ``RegistryError``).
"""

from __future__ import annotations

import contextlib
import itertools
import re
from collections.abc import AsyncIterator, Callable, Iterable, Mapping, Sequence
from datetime import UTC, datetime
from typing import NamedTuple, Protocol, runtime_checkable
from urllib.parse import unquote, urljoin, urlsplit

import msgspec

from patchula.errors import PackageNotFound, RegistryError
from patchula.http.auth import redact_url
from patchula.models import Catalog, Derive, DigestTerms, FetchResponse
from patchula.names import MAX_NAME_LENGTH, has_lone_surrogate, shown_name

_CONTROL = re.compile(r"[\x00-\x1f\x7f]")  # C0 controls and DEL: never part of a package name
# Percent-decoding rounds undone when checking a name (``%252e`` is ``%2e`` is ``.``).
_DECODE_ROUNDS = 3


def url_safe_name(package_name: str) -> str:
    """Return ``package_name`` when it may go into a registry URL path; raise otherwise.

    Defence in depth behind the extraction checks (``patchula.names``): a name that would give
    a ``.`` or ``..`` path segment after percent-decoding (RFC 3986 §5.2.4 removes those, so the
    request would leave the configured base path), an empty one, one with a lone surrogate or
    a control character is refused, and so is one longer than ``MAX_NAME_LENGTH`` (a name a
    registry gave, such as a dependency of a dependency, never checked at extraction).

    Raises:
        RegistryError: the name is not safe to request.
    """
    if len(package_name) > MAX_NAME_LENGTH:
        msg = (
            f"refusing to request package name {shown_name(package_name)}: longer than"
            f" {MAX_NAME_LENGTH} characters"
        )
        raise RegistryError(msg)
    if not package_name or has_lone_surrogate(package_name):
        raise RegistryError(f"refusing to request an invalid package name {package_name!r}")
    decoded = package_name
    for _ in range(_DECODE_ROUNDS):
        decoded = unquote(decoded)
    segments = decoded.replace("\\", "/").split("/")
    if any(segment in {".", ".."} for segment in segments) or _CONTROL.search(decoded):
        raise RegistryError(f"refusing to request package name {package_name!r}: unsafe in a URL")
    return package_name


class Fetch(Protocol):
    """The fetch facade: GET ``url`` through the shared client, limits, single-flight and cache.

    ``representation`` names the versioned document stored for a success (``raw``, or a compact
    one such as ``npm-packument-v1``) and ``derive`` turns a successful raw body into it (run in
    a worker thread; it may raise ``RegistryError`` for an unusable body, which is then not
    stored). Raises ``RegistryUnreachable`` when no HTTP answer arrives; every HTTP status is
    returned (non-2xx bodies are returned raw).
    """

    async def __call__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        representation: str = "raw",
        derive: Derive | None = None,
    ) -> FetchResponse:
        """Return the response to ``GET url`` (redirects followed)."""
        ...


class MethodFetch(Fetch, Protocol):
    """The fetch facade with a method: ``GET`` (the default), ``HEAD`` or ``POST`` with a body.

    What a datasource needs beyond documents — a ``HEAD`` for a container digest, a ``POST``
    of a GraphQL query (``body``, bytes; it must be safe to repeat: it is retried and cached
    like a GET). Cache and single-flight keys name the method and a digest of the body;
    redirects follow RFC 9110 §15.4 (307/308 keep method and body, 303 makes a POST a GET).
    A HEAD's ``content`` is empty. ``Fetch`` stays the GET-only shape, so GET-only facades
    (test doubles, adapters) keep satisfying it; ``http.fetcher.Fetcher`` satisfies both.

    ``scope`` names the registry token scope the request needs (the distribution token
    specification's ``repository:<name>:pull``): a bearer token cached for the URL's host and
    that scope is sent up front, and a ``401`` with a ``WWW-Authenticate: Bearer`` challenge is
    answered by fetching one. The token never enters a cache key, a log or a response.

    ``all_or_nothing()`` groups the requests made inside it: their cache writes are kept back
    and applied only when the block ends without an exception, so a paginated catalog whose
    page 2 failed stores none of its pages.
    """

    async def __call__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        representation: str = "raw",
        derive: Derive | None = None,
        method: str = "GET",
        body: bytes | None = None,
        scope: str | None = None,
    ) -> FetchResponse:
        """Return the response to ``method url`` (with ``body``; redirects followed)."""
        ...

    def all_or_nothing(self) -> contextlib.AbstractAsyncContextManager[None]:
        """A block whose requests' cache writes are applied together, or not at all."""
        ...


class CatalogRequest(msgspec.Struct, frozen=True):
    """The one GET a single-document datasource needs for a catalog (see ``SingleDocument``)."""

    url: str
    headers: Mapping[str, str]
    representation: str
    derive: Derive | None


async def fetch_catalog(
    fetch: Fetch,
    request: CatalogRequest,
    build: Callable[[FetchResponse, str, str], Catalog],
    package_name: str,
) -> Catalog:
    """Send ``request`` through ``fetch`` and ``build(response, package_name, url)`` its catalog."""
    response = await fetch(
        request.url,
        headers=request.headers,
        representation=request.representation,
        derive=request.derive,
    )
    return build(response, package_name, request.url)


class GetCatalog(Protocol):
    """Fetch and parse the release list of a package: ``(fetch, base_url, package_name)``.

    Raises ``LookupFailed`` subclasses (``PackageNotFound`` for 404/410, ``RegistryError`` for
    other non-2xx answers or unusable bodies, ``RegistryUnreachable`` from ``fetch``).
    """

    async def __call__(self, fetch: Fetch, base_url: str, package_name: str) -> Catalog:
        """Return the catalog of ``package_name`` on the registry at ``base_url``."""
        ...


# One stored release row: ``(version, published_at in epoch seconds or None, digest or None)``.
ReleaseRow = tuple[str, float | None, str | None]


@runtime_checkable
class ReleaseRows(Protocol):
    """The cache's release rows, reached through the fetch facade (seed 003, "SQLite cache").

    Release lists that upstream serves newest-first (GitHub releases) are merged into the
    cache's ``releases`` table instead of being re-read whole: ``http.fetcher.Fetcher``
    implements this over its ``Cache`` (``Cache.merge_releases``, ``merge_release_page``,
    ``release_heads``, ``releases``), so a datasource still gets only the facade passed in and
    ``cache`` never imports ``http``. A facade without a cache (or a test double without these
    methods) is no ``ReleaseRows``: the datasource then reads every page (``release_rows_of``).

    ``release_rows(source, package)`` → ``(head, rows)``: the stored release head and every
    stored row in upstream order (newest first), or ``None`` when the facade has no cache.
    ``merge_release_rows(source, package, items, after=…)`` merges one newest-first page
    (``after=None``: the first page, ``items[0]`` becomes the head; else the previous page's
    last inserted version, the anchor that tells a disjoint refresh prefix from history
    pagination). Inside ``MethodFetch.all_or_nothing`` merges wait, with the block's HTTP
    writes, for its clean end, so a failed pagination stores no release rows either.
    """

    async def release_rows(
        self, source: str, package: str
    ) -> tuple[ReleaseRow | None, list[ReleaseRow]] | None:
        """Return the stored head and rows of ``package`` from ``source`` (``None``: no cache)."""
        ...

    async def merge_release_rows(
        self, source: str, package: str, items: Sequence[ReleaseRow], *, after: str | None
    ) -> None:
        """Merge one newest-first page of ``items`` (see the class docstring)."""
        ...


def release_rows_of(fetch: Fetch) -> ReleaseRows | None:
    """``fetch`` as a ``ReleaseRows`` when it offers the cache's release rows, else ``None``."""
    return fetch if isinstance(fetch, ReleaseRows) else None


@runtime_checkable
class CredentialProbe(Protocol):
    """Whether the fetch facade sends a credential to a URL, and from where (never its value).

    ``credential_source(url)`` → the source's name (``GH_TOKEN``, ``~/.npmrc``) or ``None``
    for an anonymous request. ``http.fetcher.Fetcher`` implements it over its credentials; a
    datasource asks it before choosing an API that refuses anonymous callers (GitHub GraphQL).
    A facade without it (a test double) counts as anonymous (``credential_source_of``).
    """

    def credential_source(self, url: str) -> str | None:
        """Return where the credential for ``url`` comes from, or ``None`` (anonymous)."""
        ...


def credential_source_of(fetch: Fetch, url: str) -> str | None:
    """The source of the credential ``fetch`` sends to ``url``; ``None`` when anonymous/unknown."""
    return fetch.credential_source(url) if isinstance(fetch, CredentialProbe) else None


@runtime_checkable
class CredentialIdentity(Protocol):
    """A digest naming the credential the fetch facade sends to a URL (``-``: anonymous).

    ``http.fetcher.Fetcher`` implements it with ``http.caching.credential_digest``: never the
    credential itself, so it may key a run's memo (``http.flight.once_per_run``) as it keys
    the cache.
    """

    def credential_identity(self, url: str) -> str:
        """Return the digest of the credential sent to ``url``, ``-`` when anonymous."""
        ...


def credential_identity_of(fetch: Fetch, url: str) -> str:
    """``fetch``'s ``CredentialIdentity`` of ``url``; a facade without one: its source name."""
    if isinstance(fetch, CredentialIdentity):
        return fetch.credential_identity(url)
    return credential_source_of(fetch, url) or "-"


class Dated(NamedTuple):
    """One version's publish time and where it came from, as a ``ReleaseTimesLookup`` gives it.

    ``at`` is an aware UTC time (``None``: unknown); ``source`` a short word the report shows
    beside the date (``Finding.date_sources``, JSON ``dateSources``), e.g. ``release`` (a
    GitHub release's ``published_at``) or ``commit`` (the tag's commit date).
    """

    at: datetime | None
    source: str


class Unavailable(NamedTuple):
    """A version whose publish time its date source should have given, and did not: why.

    Not "no date exists": the catalog names the version, yet the source that dates it does not
    know it (Docker Hub's tag API answering 404 for a tag the registry lists, GitHub answering
    404 for the commit the tag list names, a Go proxy's ``.info`` missing for a listed
    version). ``reason`` names the answer and the URL (redacted, ``redact_url``); the row
    holding the version back for its unknown age counts as a failed lookup.
    """

    reason: str


class ReleaseTimesLookup(Protocol):
    """Publish times of some versions, asked for lazily (only those a verdict or libyears need).

    ``(fetch, registries, package_name, versions)`` → version → aware UTC time, or ``Dated``
    (the time and its source) where the source differs per version (a GitHub tag's release,
    else its commit), ``Unavailable`` when the source should know the version and does not
    (a failed lookup of that version only: the others are still answered), ``None`` when no
    date exists (the registry publishes none, or a bound left it unasked). A bare time's
    source is ``LazyTimes.source``. ``registries`` is the checkout's datasource id → base URL
    map. Raises ``LookupFailed`` subclasses like ``GetCatalog`` when the source as a whole
    fails (an error status other than a per-version 404, unreachable, rate limited).
    """

    async def __call__(
        self,
        fetch: Fetch,
        registries: Mapping[str, str],
        package_name: str,
        versions: Sequence[str],
    ) -> Mapping[str, datetime | Dated | Unavailable | None]:
        """Return the publish times of ``versions`` (at least those, maybe more)."""
        ...


class DigestLookup(Protocol):
    """The content digest of one version (an OCI manifest digest: the ``docker`` datasource).

    ``(fetch, base_url, package_name, version)`` → digest string, or ``None`` when unknown (a
    caller then never calls a digest unchanged). Raises ``LookupFailed`` subclasses like
    ``GetCatalog``.
    """

    async def __call__(
        self, fetch: Fetch, base_url: str, package_name: str, version: str
    ) -> str | None:
        """Return the digest of ``package_name`` at ``version``."""
        ...


class PlatformDigestsLookup(Protocol):
    """The platform manifests of the image index a tag names (the ``docker`` datasource).

    ``(fetch, base_url, package_name, tag)`` → ``{digest: "os/architecture[/variant]"}``,
    empty when the tag names a single-image manifest. Raises ``LookupFailed`` subclasses.
    """

    async def __call__(
        self, fetch: Fetch, base_url: str, package_name: str, version: str
    ) -> dict[str, str]:
        """Return the platform manifests of ``package_name``'s index at ``version``."""
        ...


class Declared(NamedTuple):
    """One dependency a version declares: the name on the same datasource, its constraint.

    ``constraint`` is in the datasource's versioning syntax (``""``: any version); ``extras``
    the optional features a Python requirement names (``requests[socks]``), else empty.
    """

    name: str
    constraint: str
    extras: tuple[str, ...] = ()


class DependenciesLookup(Protocol):
    """The dependencies one version declares at run time, for ``cache warm`` (lookup tasks).

    ``(fetch, base_url, package_name, version, extras=…)`` → ``Declared`` entries in the
    registry's order, fetched from the per-version document the compact catalog
    representations drop (npm ``GET /<name>/<version>``, PyPI ``requires_dist``, a crates
    index line's ``deps``, a Go module's ``.mod``). ``extras`` are the Python extras the
    dependent asked for. Raises ``LookupFailed`` subclasses like ``GetCatalog``.
    """

    async def __call__(
        self,
        fetch: Fetch,
        base_url: str,
        package_name: str,
        version: str,
        *,
        extras: frozenset[str] = frozenset(),
    ) -> Sequence[Declared]:
        """Return what ``package_name`` at ``version`` depends on."""
        ...


class SingleDocument(msgspec.Struct, frozen=True):
    """How a datasource whose catalog is one document builds and reads that one GET.

    ``request(base_url, package_name)`` gives the ``CatalogRequest`` (raising ``LookupFailed``
    for a name it refuses to put in a URL); ``build(response, package_name, url)`` the catalog
    in its answer (raising like ``GetCatalog``). A scan can then answer many lookups at once
    from fresh cache entries without a task each.
    """

    request: Callable[[str, str], CatalogRequest]
    build: Callable[[FetchResponse, str, str], Catalog]


class LazyTimes(msgspec.Struct, frozen=True):
    """Publish times a datasource supplies apart from its catalog, and when they may be asked.

    ``for_libyears``: whether the dates of current and latest may be asked for libyears alone
    (``False`` when the lookup is costly, e.g. a throttled API: libyears then stay unknown).
    Where each date a row shows came from (``Finding.date_sources``): ``source`` names the
    source of the bare times ``lookup`` answers (``None``: the catalog's ``time_source`` says
    it, nothing per date), ``catalog_source`` that of the dates the catalog itself carries
    (``None``: it carries none, or they need no word). A ``Dated`` answer names its own.
    ``dated``: how a held-back release's reason names the age of a date ``lookup`` found
    with ``source`` (``policy.release_age.judge``'s ``dated``, ``{age}`` filled in), ``None``
    when it is a first release ("released 5h ago"); Docker Hub's dates are a tag's last push.
    """

    lookup: ReleaseTimesLookup
    for_libyears: bool
    source: str | None = None
    catalog_source: str | None = None
    dated: str | None = None


class Datasource(msgspec.Struct):
    """Everything a datasource offers, each ability named (an absent one is ``None`` or empty).

    Modelled on Renovate's datasource base class (``getReleases``, ``getDigest``, default
    registry URLs and versioning, release-timestamp support declared in one place). Each
    datasource module exports one as ``DATASOURCE``; ``patchula.datasource.DATASOURCES`` maps
    ``id`` to it. Every field is required, so mypy names the one a new datasource forgot.

    - ``id``: the datasource id dependencies name (``Dependency.datasource``), its module name.
    - ``default_base_url``: the public registry (https, no trailing slash).
    - ``default_versioning``: the ``patchula.versioning.VERSIONINGS`` id its versions follow.
    - ``get_catalog``: the release list (every datasource has one).
    - ``single_document``: how the catalog is one GET (``SingleDocument``), or ``None`` when it
      takes several requests (index pages, a proxy chain).
    - ``release_times``: lazily fetched publish times (``LazyTimes``), or ``None`` when the
      catalog carries every date it can.
    - ``get_digest``: a version's digest, or ``None``.
    - ``platform_digests``: the platform manifests of the index a tag names (container
      images: a pin to one platform's manifest), or ``None``.
    - ``digest_terms``: what those digests are and how rows speak of them
      (``models.DigestTerms``), ``None`` without ``get_digest``.
    - ``freshness_floor_representations``: the stored representations a configured freshness
      floor keeps fresh (e.g. ``--go-freshness-secs``); empty when none.
    - ``dependencies``: the dependencies of one version, or ``None``.
    """

    id: str
    default_base_url: str
    default_versioning: str
    get_catalog: GetCatalog
    single_document: SingleDocument | None
    release_times: LazyTimes | None
    get_digest: DigestLookup | None
    platform_digests: PlatformDigestsLookup | None
    digest_terms: DigestTerms | None
    freshness_floor_representations: tuple[str, ...]
    dependencies: DependenciesLookup | None


# Where a user can put a credential for a registry that answered 401/403 to an anonymous request.
DEFAULT_CREDENTIAL_HINT = "a registry URL's userinfo or ~/.netrc"


def check_status(
    response: FetchResponse, what: str, *, credential_hint: str = DEFAULT_CREDENTIAL_HINT
) -> None:
    """Raise the ``LookupFailed`` subclass that an unsuccessful ``response`` stands for.

    ``what`` names the package for the message (e.g. ``npm package 'left-pad'``). URLs in the
    message are redacted (``redact_url``). A 401/403 names the credential source that was
    refused (``response.credential``, never its value) or, for an anonymous request, says none
    is configured and where one goes (``credential_hint``, e.g. ``.npmrc or ~/.netrc``); when
    a configured credential could not be used, it says why (``response.credential_unused``).
    """
    if 200 <= response.status < 300:  # noqa: PLR2004 - the 2xx class
        return
    url = redact_url(response.url)
    if response.status in {404, 410}:
        msg = f"{what} not found ({response.status} from {url})"
        raise PackageNotFound(msg)
    if response.status in {401, 403}:
        host = urlsplit(response.url).netloc.rpartition("@")[2]
        unused = response.credential_unused
        if response.credential is not None:
            why = f"the credential from {response.credential} was refused"
            why += f"; {unused}" if unused is not None else ""
        elif unused is not None:
            why = unused
        else:
            why = f"no credential configured for it (add one to {credential_hint})"
        msg = f"{what}: HTTP {response.status} from {host}: {why}"
        raise RegistryError(msg)
    msg = f"{what}: registry answered HTTP {response.status} ({url})"
    raise RegistryError(msg)


REASON_LIMIT = 200

# RFC 8288 §3: ``<target>`` then ``; name=value`` parameters (value a token or quoted string).
_LINK = re.compile(r'<(?P<target>[^>]*)>(?P<params>(?:[^,<"]|"(?:[^"\\]|\\.)*")*)')
_PARAM = re.compile(
    r";\s*(?P<name>[!#$%&'*+.^_`|~0-9A-Za-z-]+)\s*"
    r'(?:=\s*(?:"(?P<quoted>(?:[^"\\]|\\.)*)"|(?P<token>[^;,\s]*)))?'
)


def next_link(response: FetchResponse, url: str, first: str, what: str, listing: str) -> str | None:
    """Return the ``rel="next"`` target of ``response``'s ``Link`` headers, resolved, or ``None``.

    Relative targets resolve against the page ``url`` (RFC 8288 §3.2, RFC 3986 §5). Raises
    ``RegistryError`` for a target on another origin (scheme, host, port) than ``first``, or
    with userinfo: a registry's pagination never leaves it, and following one would send the
    request's credential or token scope elsewhere. ``what`` and ``listing`` (``tag list``,
    ``release list``) word the message.
    """
    for value in (v for k, v in response.headers if k == "link"):
        for link in _LINK.finditer(value):
            rels: set[str] = set()
            for param in _PARAM.finditer(link["params"]):
                if param["name"].lower() == "rel":
                    rel = param["quoted"] if param["quoted"] is not None else param["token"]
                    rels.update(str(rel or "").lower().split())
            if "next" not in rels:
                continue
            target = urljoin(url, link["target"].strip())
            scheme = urlsplit(target).scheme.lower()
            if scheme not in {"http", "https"}:
                # Named by its scheme only, as a refused redirect is (the target may be a path).
                msg = (
                    f"{what}: the {listing}'s next page is a non-HTTP(S) location "
                    f"({(scheme or '?')[:16]!r}); not followed"
                )
                raise RegistryError(msg)
            # Userinfo in a link would become a credential the registry chose: refused too.
            if origin(target) != origin(first) or "@" in urlsplit(target).netloc:
                host = urlsplit(target).netloc.rpartition("@")[2] or "?"
                msg = f"{what}: the {listing}'s next page is on another host ({host}); not followed"
                raise RegistryError(msg)
            return str(target)
    return None


async def linked_pages(
    fetch: MethodFetch,
    first: str,
    *,
    what: str,
    listing: str,
    max_pages: int,
    representation: str,
    derive: Derive | None,
    credential_hint: str = DEFAULT_CREDENTIAL_HINT,
    headers: Mapping[str, str] | None = None,
    scope: str | None = None,
) -> AsyncIterator[FetchResponse]:
    """Yield each page of a ``Link``-paginated listing from ``first``, status-checked.

    Pages follow ``rel="next"`` (RFC 8288; ``next_link``: same origin only) one after another.
    Run it inside ``fetch.all_or_nothing()`` so a listing is stored whole or not at all.
    Raises ``RegistryError`` past ``max_pages`` pages or when the links loop, and what
    ``check_status`` raises for a non-2xx page (``what`` and ``listing`` word the messages).
    """
    seen: set[str] = set()
    url: str | None = first
    pages = 0
    while url is not None:
        if pages >= max_pages:
            msg = f"{what}: the {listing} is too long (more than {max_pages} pages); not read"
            raise RegistryError(msg)
        seen.add(url)
        response = await fetch(
            url, headers=headers, representation=representation, derive=derive, scope=scope
        )
        check_status(response, what, credential_hint=credential_hint)
        pages += 1
        yield response
        url = next_link(response, url, first, what, listing)
        if url is not None and url in seen:
            msg = f"{what}: the {listing}'s next-page links loop ({redact_url(url)})"
            raise RegistryError(msg)


def origin(url: str) -> tuple[str, str, int | None]:
    """``(scheme, host, port)`` of ``url``, the default port filled in."""
    parts = urlsplit(url)
    scheme = parts.scheme.lower()
    try:
        port = parts.port
    except ValueError:
        port = -1  # not a port: equal to no origin
    return scheme, (parts.hostname or "").lower(), port or {"http": 80, "https": 443}.get(scheme)


def parse_time(value: object) -> datetime | None:
    """Return an ISO-8601 / RFC 3339 timestamp as an aware UTC datetime.

    ``None`` when absent, not a string or unreadable. Registries write UTC (``...Z``); a
    timestamp without an offset is read as UTC too.
    """
    parsed = _aware(value)
    return None if parsed is None else parsed.astimezone(UTC)


def epoch_seconds(value: object) -> int | None:
    """``parse_time(value)`` in whole epoch seconds (truncated), ``None`` when it is ``None``.

    The compact documents' form of a publish time, without converting to UTC first (an aware
    time's epoch does not depend on its offset; one without an offset is UTC).
    """
    parsed = _aware(value)
    return None if parsed is None else int(parsed.timestamp())


def _aware(value: object) -> datetime | None:
    """An ISO-8601 string as an aware datetime in its own offset (none: UTC), else ``None``."""
    if not isinstance(value, str):
        return None
    try:
        parsed = datetime.fromisoformat(value)
    except ValueError:
        return None
    return parsed.replace(tzinfo=UTC) if parsed.tzinfo is None else parsed


def times_from_epochs(values: Iterable[object]) -> list[datetime | None]:
    """Return epoch seconds (as stored in compact documents) as aware UTC datetimes.

    ``None`` and anything that is not a representable number stay unknown (``None``). One call
    per document: a catalog holds hundreds of releases and a warm run reads thousands.
    """
    fromtimestamp = datetime.fromtimestamp
    values = values if isinstance(values, list) else list(values)
    if None not in values:
        # Every value a number (a document's usual case): converted in C, no Python loop.
        # Anything the loop below would treat otherwise raises here, and goes through it.
        with contextlib.suppress(TypeError, ValueError, OverflowError, OSError):
            return list(map(fromtimestamp, values, itertools.repeat(UTC)))
    out: list[datetime | None] = []
    append = out.append
    for value in values:
        if value is None:
            append(None)
            continue
        try:
            append(fromtimestamp(value, UTC))  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError, OSError):
            append(None)
    return out


def from_epoch(value: object) -> datetime | None:
    """Return epoch seconds (as stored in compact documents) as an aware UTC datetime.

    ``None`` for anything else, and for a number no datetime holds (before year 1, after 9999,
    NaN or infinite: a damaged or hostile stored document must not stop a run).
    """
    if isinstance(value, int | float) and not isinstance(value, bool):
        try:
            return datetime.fromtimestamp(value, UTC)
        except (ValueError, OverflowError, OSError):
            return None
    return None


# msgspec names a place as ``$.files[0].filename`` (``[...]`` for a map key it does not repeat).
_INDEX = re.compile(r"\[(\d+)\]")
_MISSING = "Object missing required field "


# The start of an HTML page (blanks, then ``<``): matched in place, never a copy of the body.
_HTML_START = re.compile(rb"\s*<")


def describe_decode_error(
    exc: msgspec.DecodeError | RecursionError, *, content: bytes | None = None
) -> str:
    """Return a one-line reason for a document msgspec could not decode, without its input.

    Given the undecodable ``content``, one that is an HTML page (a mirror's login or error
    page: its first non-blank byte is ``<``) reads ``HTML, not JSON``.

    Malformed JSON reads ``Invalid JSON: <what>``; a wrong shape names what was expected and
    where, with dotted places (``Expected str, got int at files.0.filename``, ``Field required at
    meta``; a map key msgspec does not repeat is ``*``); nesting past the decoder's recursion
    limit reads ``Invalid JSON: recursion limit exceeded``. At most ``REASON_LIMIT`` characters.
    """
    import msgspec  # noqa: PLC0415 - loaded by the datasource that decoded; keeps this leaf light

    if content is not None and _HTML_START.match(content) is not None:
        return "HTML, not JSON"
    if isinstance(exc, RecursionError):
        return "Invalid JSON: recursion limit exceeded"
    text = str(exc)
    if not isinstance(exc, msgspec.ValidationError):
        detail = text.removeprefix("JSON is malformed: ")
        return f"Invalid JSON: {detail[:1].lower()}{detail[1:]}"[:REASON_LIMIT]
    message, _, place = text.partition(" - at `")
    dotted = _INDEX.sub(r".\1", place.rstrip("`").replace("[...]", ".*"))
    where = [part for part in dotted.split(".")[1:] if part]  # the first part is ``$``
    if message.startswith(_MISSING):
        where.append(message.removeprefix(_MISSING).strip("`"))
        message = "Field required"
    reason = message.replace("`", "")
    return (f"{reason} at {'.'.join(where)}" if where else reason)[:REASON_LIMIT]
