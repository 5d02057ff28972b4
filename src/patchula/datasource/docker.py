"""OCI distribution (Docker Registry v2) datasource: image tags, manifest digests, Hub tag dates.

Tags come from ``GET /v2/<repository>/tags/list?n=…``, following ``Link: <…>; rel="next"``
(RFC 8288) to the last page; each page is cached as the compact ``oci-tags-v1`` document and
the pages are stored together or not at all (a rate-limited page never leaves a short list).
Tags carry no dates: their age is unknown, except that Docker Hub's own tag API publishes
``tag_last_pushed`` (asked lazily, only for ``docker.io`` images). Digests come from a ``HEAD``
of the manifest (it spares Docker Hub's pull quota), falling back to a ``GET`` only when the
``HEAD`` gives none; a pinned digest that is not its tag's has the tag's index fetched
(``platform_digests``: is the pin one platform's manifest of it?). Every ``/v2/`` request
names its token scope ``repository:<name>:pull``.
Sources: ``opencontainers/distribution-spec:spec.md`` (name and tag grammar, tags list with
``n``/``last``/``Link``, manifests, ``Docker-Content-Digest``), image-spec ``descriptor.md``
(digest grammar), docs.docker.com Hub API reference (tags, ``tag_last_pushed``, rate limits).
"""

from __future__ import annotations

import functools
import hashlib
import re
from typing import TYPE_CHECKING, TypeVar, cast
from urllib.parse import quote

import msgspec

from patchula.datasource.base import (
    Datasource,
    LazyTimes,
    Unavailable,
    check_status,
    describe_decode_error,
    linked_pages,
    origin,
    parse_time,
    url_safe_name,
)
from patchula.errors import RegistryError
from patchula.http.auth import redact_url
from patchula.models import IMAGE_DIGESTS, Catalog, Release

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping, Sequence
    from datetime import datetime

    from patchula.datasource.base import Fetch, MethodFetch
    from patchula.models import FetchResponse

T = TypeVar("T")

ID = "docker"
DEFAULT_BASE_URL = "https://registry-1.docker.io"
# The ``patchula.versioning`` id of Docker tags (a string: versioning is its own plugin family).
DEFAULT_VERSIONING = "docker"
# Docker Hub's tag API (registry name ``docker-hub``), the one source of tag push times.
DEFAULT_HUB_URL = "https://hub.docker.com"
HUB_REGISTRY = "docker-hub"
DOCKER_HUB_HOST = "docker.io"
TAGS_REPRESENTATION = "oci-tags-v1"
# A GET of a manifest stores only the digest of its body (the header is kept beside it).
MANIFEST_DIGEST_REPRESENTATION = "oci-manifest-digest-v1"
# A GET of an index stores only its platform manifests (``platform_digests``).
INDEX_PLATFORMS_REPRESENTATION = "oci-index-platforms-v1"
# The one stored representation ``--registry-freshness-secs`` keeps fresh (validator-free only).
FRESHNESS_FLOOR_REPRESENTATIONS = (TAGS_REPRESENTATION,)
TIME_SOURCE = "none: OCI registry tags carry no dates (age unknown)"
HUB_TIME_SOURCE = (
    "none in OCI tags; Docker Hub tag_last_pushed when the policy asks: the tag's last push "
    "(tag freshness), not its first release"
)
CREDENTIAL_HINT = "~/.docker/config.json"
# What a Hub date is, as its row says (``dateSources``): the tag's last push, not a release.
HUB_DATE = "last-push"
# How a held-back tag's reason names that age (a re-push of a floating tag such as ``20``,
# or a rebuild of ``20.11.1`` on a new base image, restarts it: Docker Hub keeps no first push).
HUB_AGE = "last pushed {age} ago (Docker Hub's tag_last_pushed: a re-push restarts the wait)"
# Docker Hub's dates come from a separate, rate-limited API: asked only for the release-age
# verdict, never for libyears alone (libyears of images then stay unknown).
TIMES_FOR_LIBYEARS = False

# Tags asked per page; registries may answer fewer (and then say so with ``Link``).
PAGE_SIZE = 1000
# A longer tag list is refused with an error rather than read in part (never a short catalog).
MAX_PAGES = 100
MAX_TAGS = 100_000
# The media types a digest is asked for, multi-architecture ones first, so the answer is the
# index (list) digest users pin, not one platform's manifest (registries.md §5).
MANIFEST_ACCEPT = (
    "application/vnd.oci.image.index.v1+json, "
    "application/vnd.docker.distribution.manifest.list.v2+json, "
    "application/vnd.oci.image.manifest.v1+json, "
    "application/vnd.docker.distribution.manifest.v2+json"
)
_MANIFEST_HEADERS = {"Accept": MANIFEST_ACCEPT}
# HEAD answers that mean "no HEAD here": ask with GET instead.
_HEAD_REFUSED = frozenset({405, 501})
# Hub API: one request per asked tag up to this many, else its tag list pages (100 a page).
HUB_PER_TAG_MAX = 5
HUB_PAGE_SIZE = 100
HUB_MAX_PAGES = 10

# distribution-spec: a repository name is ``/``-separated components of lower-case letters
# and digits, joined inside a component by ``.``, ``_``, ``__`` or runs of ``-``.
_COMPONENT = r"[a-z0-9]+(?:(?:\.|_|__|-+)[a-z0-9]+)*"
_REPOSITORY = re.compile(rf"{_COMPONENT}(?:/{_COMPONENT})*")
_TAG = re.compile(r"[A-Za-z0-9_][A-Za-z0-9_.-]{0,127}")
# image-spec descriptor.md: ``algorithm ":" encoded``; sha256 and sha512 are lower-case hex.
_DIGEST = re.compile(r"(?P<algorithm>[a-z0-9]+(?:[+._-][a-z0-9]+)*):(?P<encoded>[a-zA-Z0-9=_-]+)")
_HEX_LENGTHS = {"sha256": 64, "sha512": 128}
_HEX = re.compile(r"[a-f0-9]+")


class _TagPage(msgspec.Struct, frozen=True):
    """One ``tags/list`` answer; ``tags`` is ``null`` for a repository without tags."""

    name: str | None = None
    tags: list[str] | None = None


class _HubTag(msgspec.Struct, frozen=True):
    """A Docker Hub API tag object: the fields a freshness scan reads."""

    name: str
    tag_last_pushed: str | None = None
    last_updated: str | None = None


class _HubPage(msgspec.Struct, frozen=True):
    """A Docker Hub API page of tags; ``next`` is an absolute URL or ``null``."""

    results: list[_HubTag] = msgspec.field(default_factory=list)
    next: str | None = None


_PAGE_DECODER = msgspec.json.Decoder(_TagPage)
_HUB_TAG_DECODER = msgspec.json.Decoder(_HubTag)
_HUB_PAGE_DECODER = msgspec.json.Decoder(_HubPage)


def repository_of(package_name: str) -> str:
    """Return the repository part of ``<host>/<repository>``.

    ``docker.io/library/python`` → ``library/python``; ``localhost:5000/a/b`` → ``a/b``.

    Raises ``RegistryError`` when there is no repository or it breaks the distribution-spec
    name grammar (it is never put into a URL then).
    """
    host, _, repository = url_safe_name(package_name).partition("/")
    if not host or _REPOSITORY.fullmatch(repository) is None:
        msg = f"refusing to request image {package_name!r}: not <host>/<repository>"
        raise RegistryError(msg)
    return repository


def scope_of(repository: str) -> str:
    """The token scope a pull of ``repository`` needs (distribution ``token.md``)."""
    return f"repository:{repository}:pull"


def valid_digest(value: str | None) -> str | None:
    """Return ``value`` when it is a content digest, else ``None``.

    The image-spec grammar ``algorithm:encoded``; ``sha256`` must be 64 and ``sha512`` 128
    lower-case hex digits.
    """
    if value is None:
        return None
    value = value.strip()
    match = _DIGEST.fullmatch(value)
    if match is None:
        return None
    length = _HEX_LENGTHS.get(match["algorithm"])
    encoded = match["encoded"]
    if length is not None and (len(encoded) != length or _HEX.fullmatch(encoded) is None):
        return None
    return value


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Read every page of the tag list of ``package_name`` (``<host>/<repository>``).

    ``base_url`` is the registry chosen for the image's host (``https://registry-1.docker.io``
    or a mirror for ``docker.io``). Releases are the tags in the registry's order, each with
    an unknown publish time; ``latest`` is ``None`` (a registry names no newest tag). Pages
    are fetched one after another through ``Link`` (same origin only) and cached as
    ``oci-tags-v1``, all of them or none. Raises ``PackageNotFound`` on 404 (``NAME_UNKNOWN``),
    ``RegistryError`` on other non-2xx answers (401/403 naming ``~/.docker/config.json``), an
    unusable page, a ``Link`` to another origin or a loop, or a list longer than ``MAX_PAGES``
    pages or ``MAX_TAGS`` tags; ``RateLimited`` when a page is rate limited.
    """
    repository = repository_of(package_name)
    what = f"image {package_name!r}"
    first = f"{base_url.rstrip('/')}/v2/{repository}/tags/list?n={PAGE_SIZE}"
    # The run's facade (``Fetcher``, ``LazyFetcher``) is a ``MethodFetch``; ``GetCatalog``
    # names the GET-only shape every datasource shares.
    method_fetch = cast("MethodFetch", fetch)
    derive = functools.partial(derive_tags, repository=repository, what=what)
    tags: dict[str, None] = {}
    responses: list[FetchResponse] = []
    async with method_fetch.all_or_nothing():
        pages = linked_pages(
            method_fetch,
            first,
            what=what,
            listing="tag list",
            max_pages=MAX_PAGES,
            representation=TAGS_REPRESENTATION,
            derive=derive,
            credential_hint=CREDENTIAL_HINT,
            scope=scope_of(repository),
        )
        async for response in pages:
            responses.append(response)
            tags.update(dict.fromkeys(parse_tags_compact(response.content, repository=repository)))
            if len(tags) > MAX_TAGS:
                msg = f"{what}: the tag list is too long (more than {MAX_TAGS} tags); not read"
                raise RegistryError(msg)
    return Catalog(
        datasource=ID,
        package_name=package_name,
        releases=tuple(Release(version=tag, released_at=None) for tag in tags),
        latest=None,
        fetched_at=min(response.fetched_at for response in responses),
        time_source=HUB_TIME_SOURCE if is_docker_hub(package_name) else TIME_SOURCE,
        source_url=first,
        reused=all(response.cache == "fresh" for response in responses),
    )


def derive_tags(content: bytes, *, repository: str, what: str | None = None) -> bytes:
    """Reduce one ``tags/list`` page to the compact ``oci-tags-v1`` document.

    Keeps only the tags, in the registry's order, front-coded: one line per tag, ``<length of
    the prefix shared with the previous tag> <rest of the tag>`` (tags never hold a space or a
    newline), UTF-8. Tags that break the tag grammar (1-128 of ``A-Za-z0-9_.-``, not starting
    with ``.`` or ``-``) are dropped: no reference can name them. ``what`` names the image in
    messages (default ``image '<repository>'``). Raises ``RegistryError`` for a page that is
    not the documented JSON object, names another repository or holds more than ``MAX_TAGS``
    tags (refused before any is encoded: the whole list could not be read anyway).
    """
    what = what or f"image {repository!r}"
    try:
        page = _PAGE_DECODER.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        reason = describe_decode_error(exc, content=content)
        msg = f"{what}: unusable tag list page ({reason})"
        raise RegistryError(msg) from None
    if page.name is not None and page.name != repository:
        msg = f"{what}: the tag list page is for another repository ({page.name!r})"
        raise RegistryError(msg[:300])
    if len(page.tags or ()) > MAX_TAGS:
        msg = f"{what}: the tag list is too long (more than {MAX_TAGS} tags); not read"
        raise RegistryError(msg)
    return encode_tags(tag for tag in page.tags or () if _TAG.fullmatch(tag))


def encode_tags(tags: Iterable[str]) -> bytes:
    """Front-code ``tags`` as ``oci-tags-v1`` (see ``derive_tags``)."""
    lines: list[str] = []
    previous = ""
    for tag in tags:
        shared = 0
        for mine, theirs in zip(tag, previous, strict=False):
            if mine != theirs:
                break
            shared += 1
        lines.append(f"{shared} {tag[shared:]}")
        previous = tag
    return "\n".join(lines).encode()


def parse_tags_compact(content: bytes, *, repository: str) -> list[str]:
    """Decode an ``oci-tags-v1`` document to its tags; raises ``RegistryError`` when damaged."""
    tags: list[str] = []
    previous = ""
    try:
        for line in content.decode().split("\n") if content else ():
            count, _, rest = line.partition(" ")
            shared = int(count)
            if not 0 <= shared <= len(previous):
                raise ValueError(line)  # noqa: TRY301 - one message for every damaged line
            previous = previous[:shared] + rest
            tags.append(previous)
    except ValueError:
        msg = f"image {repository!r}: unusable {TAGS_REPRESENTATION} document"
        raise RegistryError(msg) from None
    return tags


async def get_digest(fetch: Fetch, base_url: str, package_name: str, version: str) -> str | None:
    """Return the manifest digest ``version`` (a tag, or a digest) of ``package_name`` names.

    ``HEAD {base}/v2/<repository>/manifests/<version>`` with the index types first in
    ``Accept`` (the top-level ``Docker-Content-Digest`` then names the multi-architecture
    index). Only when that answer has no valid digest header, or the registry refuses HEAD
    (405/501), the manifest is fetched (``GET``, which counts against Docker Hub's pull quota)
    and its header used, else the sha256 of its body. A cached HEAD revalidated by a 304 keeps
    the digest stored with it. ``None`` when no digest can be told (an empty manifest body):
    a caller must never call a digest unchanged then. Raises ``PackageNotFound`` on 404 (tag or
    image unknown), ``RateLimited`` at once on a pull-quota answer, ``RegistryError`` otherwise.
    """
    repository = repository_of(package_name)
    if _TAG.fullmatch(version) is None and valid_digest(version) is None:
        msg = f"refusing to request image {package_name!r} at {version!r}: not a tag or digest"
        raise RegistryError(msg)
    what = f"image {package_name!r} at {version!r}"
    url = f"{base_url.rstrip('/')}/v2/{repository}/manifests/{version}"
    method_fetch = cast("MethodFetch", fetch)  # see ``get_catalog``
    scope = scope_of(repository)
    head = await method_fetch(url, headers=_MANIFEST_HEADERS, method="HEAD", scope=scope)
    if head.status not in _HEAD_REFUSED:
        check_status(head, what, credential_hint=CREDENTIAL_HINT)
        found = valid_digest(head.header("docker-content-digest"))
        if found is not None:
            return found  # never a GET after a HEAD that answered: Docker Hub's pull quota
    response = await method_fetch(
        url,
        headers=_MANIFEST_HEADERS,
        representation=MANIFEST_DIGEST_REPRESENTATION,
        derive=body_digest,
        scope=scope,
    )
    check_status(response, what, credential_hint=CREDENTIAL_HINT)
    header = valid_digest(response.header("docker-content-digest"))
    return header or valid_digest(response.content.decode("ascii", "replace"))


class _Platform(msgspec.Struct, frozen=True):
    """An index entry's ``platform`` (image-spec ``image-index.md``)."""

    architecture: str = ""
    os: str = ""
    variant: str | None = None


class _IndexEntry(msgspec.Struct, frozen=True):
    """One ``manifests[]`` descriptor of an image index: its digest and platform."""

    digest: str = ""
    platform: _Platform | None = None


class _Index(msgspec.Struct, frozen=True):
    """An image index or manifest list; a single-image manifest has no ``manifests``."""

    manifests: list[_IndexEntry] | None = None


_INDEX_DECODER = msgspec.json.Decoder(_Index)


async def platform_digests(
    fetch: Fetch, base_url: str, package_name: str, version: str
) -> dict[str, str]:
    """The platform manifests of the index ``version`` (a tag) of ``package_name`` points at.

    ``{digest: "os/architecture[/variant]"}`` of each ``manifests[]`` entry of the image index
    (or Docker manifest list) the tag names; empty for a single-image manifest. Asked only
    when a pinned digest is not the tag's index digest: a pin to one platform's manifest of
    the index (``nginx:1.26@<the linux/amd64 manifest>``) has not moved, and a newer tag is
    re-pinned to the same platform's manifest (Renovate keeps architecture-specific digests:
    renovatebot/renovate#16554, closing #11409; image-spec ``image-index.md``). A ``GET`` of
    the manifest (a Docker Hub pull, as Renovate's own look at the index is), cached as the
    compact ``oci-index-platforms-v1`` document and revalidated by its ``ETag``. Raises
    ``LookupFailed`` subclasses like ``get_digest``.
    """
    repository = repository_of(package_name)
    if _TAG.fullmatch(version) is None:
        msg = f"refusing to request image {package_name!r} at {version!r}: not a tag"
        raise RegistryError(msg)
    what = f"image {package_name!r} at {version!r}"
    url = f"{base_url.rstrip('/')}/v2/{repository}/manifests/{version}"
    method_fetch = cast("MethodFetch", fetch)  # see ``get_catalog``
    response = await method_fetch(
        url,
        headers=_MANIFEST_HEADERS,
        representation=INDEX_PLATFORMS_REPRESENTATION,
        derive=functools.partial(derive_platforms, what=what),
        scope=scope_of(repository),
    )
    check_status(response, what, credential_hint=CREDENTIAL_HINT)
    return parse_platforms(response.content, what)


def derive_platforms(content: bytes, *, what: str = "image manifest") -> bytes:
    """``oci-index-platforms-v1``: one ``<digest> <os/architecture[/variant]>`` line per entry.

    Entries without a valid digest or a platform are left out; a manifest that is no index
    gives an empty document. Raises ``RegistryError`` for a body that is not a JSON manifest.
    """
    try:
        index = _INDEX_DECODER.decode(content) if content else _Index()
    except (msgspec.DecodeError, RecursionError) as exc:
        msg = f"{what}: unusable manifest ({describe_decode_error(exc)})"
        raise RegistryError(msg) from None
    lines = []
    for entry in index.manifests or ():
        found, platform = valid_digest(entry.digest), entry.platform
        if found is None or platform is None or not platform.os or not platform.architecture:
            continue
        name = f"{platform.os}/{platform.architecture}"
        name += f"/{platform.variant}" if platform.variant else ""
        if " " not in name and "\n" not in name:
            lines.append(f"{found} {name}")
    return "\n".join(lines).encode()


def parse_platforms(content: bytes, what: str = "image manifest") -> dict[str, str]:
    """Decode an ``oci-index-platforms-v1`` document; raises ``RegistryError`` when damaged."""
    found: dict[str, str] = {}
    for line in content.decode("utf-8", "replace").split("\n") if content else ():
        name, _, platform = line.partition(" ")
        if valid_digest(name) is None or not platform:
            msg = f"{what}: unusable {INDEX_PLATFORMS_REPRESENTATION} document"
            raise RegistryError(msg)
        found.setdefault(name, platform)
    return found


def body_digest(content: bytes) -> bytes:
    """``oci-manifest-digest-v1``: ``sha256:<hex>`` of a manifest body (empty for no body).

    The digest a registry that omits ``Docker-Content-Digest`` implies (distribution-spec:
    the digest of the manifest bytes as served).
    """
    if not content:
        return b""
    return f"sha256:{hashlib.sha256(content).hexdigest()}".encode()


def is_docker_hub(package_name: str) -> bool:
    """Whether ``package_name`` is a Docker Hub image (``docker.io/<namespace>/<name>``)."""
    return package_name.startswith(f"{DOCKER_HUB_HOST}/")


async def release_times(
    fetch: Fetch, registries: Mapping[str, str], package_name: str, versions: Sequence[str]
) -> dict[str, datetime | Unavailable | None]:
    """Return Docker Hub's ``tag_last_pushed`` for the asked tags of a ``docker.io`` image.

    Asked lazily, only for the tags the release-age verdict needs. It is the tag's *last*
    push (tag freshness: a re-pushed tag gets a new one), not its first release; an absent
    one falls back to ``last_updated`` (the same notion). Up to ``HUB_PER_TAG_MAX`` tags:
    ``GET {hub}/v2/namespaces/<ns>/repositories/<repo>/tags/<tag>`` each; more: the tag list
    (``page_size=100``, newest pushes first) through its same-origin ``next`` links, at most
    ``HUB_MAX_PAGES`` pages, until every asked tag is found. The Hub base is the registry
    ``docker-hub`` (default ``https://hub.docker.com``). Returns exactly the asked tags:
    ``Unavailable`` for a tag the Hub does not know (a 404 for it, or missing from the pages
    read: the registry's tag list named it, so the date lookup failed, naming the status and
    URL), ``None`` when the Hub's answer has no time, and ``None`` for all on any other
    registry (no request: OCI tags carry no dates). Its 429s (``Retry-After``,
    ``X-Retry-After``) go through the host's cool-down. Raises ``LookupFailed`` subclasses
    like ``get_catalog`` for any other failure.
    """
    found: dict[str, datetime | Unavailable | None] = dict.fromkeys(versions)
    path = repository_of(package_name).split("/") if is_docker_hub(package_name) else []
    wanted = [tag for tag in found if _TAG.fullmatch(tag)]
    if len(path) != 2 or not wanted:  # noqa: PLR2004 - Hub repositories are <namespace>/<name>
        return found
    base = registries.get(HUB_REGISTRY, DEFAULT_HUB_URL).rstrip("/")
    root = f"{base}/v2/namespaces/{path[0]}/repositories/{path[1]}/tags"
    what = f"image {package_name!r} (Docker Hub API)"
    if len(wanted) <= HUB_PER_TAG_MAX:
        for tag in wanted:
            response = await fetch(f"{root}/{quote(tag, safe='')}")
            if response.status == 404:  # noqa: PLR2004 - a tag the registry lists, unknown here
                found[tag] = Unavailable(
                    f"{what}: tag {tag!r}, which the registry lists, is not known there"
                    f" (HTTP 404 from {redact_url(response.url)})"
                )
                continue
            check_status(response, what)
            entry = _decode(_HUB_TAG_DECODER, response.content, what)
            found[tag] = parse_time(entry.tag_last_pushed or entry.last_updated)
        return found
    missing = set(wanted)
    first = f"{root}?page_size={HUB_PAGE_SIZE}&ordering=last_updated"
    url: str | None = first
    for _ in range(HUB_MAX_PAGES):
        if url is None or not missing:
            break
        response = await fetch(url)
        check_status(response, what)
        page = _decode(_HUB_PAGE_DECODER, response.content, what)
        for entry in page.results:
            if entry.name in missing:
                found[entry.name] = parse_time(entry.tag_last_pushed or entry.last_updated)
                missing.discard(entry.name)
        url = page.next if page.next and origin(page.next) == origin(base) else None
    where = "its tag list" if url is None else f"the first {HUB_MAX_PAGES} pages of its tag list"
    for tag in missing:
        found[tag] = Unavailable(
            f"{what}: tag {tag!r}, which the registry lists, is not in {where}"
            f" ({redact_url(first)})"
        )
    return found


def _decode(decoder: msgspec.json.Decoder[T], content: bytes, what: str) -> T:
    """Decode a Hub API document; raises ``RegistryError`` naming what was wrong."""
    try:
        return decoder.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        msg = f"{what}: unusable answer ({describe_decode_error(exc)})"
        raise RegistryError(msg) from None


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning=DEFAULT_VERSIONING,
    get_catalog=get_catalog,
    single_document=None,  # tag list pages, then a HEAD per digest and the Hub API for dates
    release_times=LazyTimes(
        lookup=release_times, for_libyears=TIMES_FOR_LIBYEARS, source=HUB_DATE, dated=HUB_AGE
    ),
    get_digest=get_digest,
    platform_digests=platform_digests,
    digest_terms=IMAGE_DIGESTS,
    freshness_floor_representations=FRESHNESS_FLOOR_REPRESENTATIONS,
    dependencies=None,
)
