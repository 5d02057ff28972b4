"""npm registry datasource: release list and publish times from the full packument.

The full packument (``GET /<name>``, ``Accept: application/json``) is the only npm document
that carries ``time[version]``; the abbreviated install document
(``application/vnd.npm.install-v1+json``) omits it.
Source: ``npm/registry:docs/responses/package-metadata.md``.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import quote

import msgspec
import orjson

from patchula.datasource.base import (
    CatalogRequest,
    Datasource,
    SingleDocument,
    check_status,
    describe_decode_error,
    fetch_catalog,
    parse_time,
    times_from_epochs,
    url_safe_name,
)
from patchula.errors import RegistryError
from patchula.models import Catalog, Release
from patchula.versioning import npm as npm_versioning

if TYPE_CHECKING:
    from patchula.datasource.base import Fetch
    from patchula.models import FetchResponse

ID = "npm"
DEFAULT_BASE_URL = "https://registry.npmjs.org"
TIME_SOURCE = "npm packument time"
REPRESENTATION = "npm-packument-v1"

# Where a credential for an npm registry goes (named in a 401/403 row).
CREDENTIAL_HINT = ".npmrc or ~/.netrc"

# The full document; the abbreviated one has no ``time`` map.
_ACCEPT = "application/json"


class _VersionManifest(msgspec.Struct, frozen=True):
    """One ``versions[v]`` entry, reduced to the one field a freshness scan reads.

    ``deprecated`` stays undecoded JSON (empty when absent): any value is allowed and only its
    kind matters, so a huge number or a deep structure there is never built.
    """

    deprecated: msgspec.Raw = msgspec.Raw()


class _Packument(msgspec.Struct, frozen=True):
    """The fields of a packument a freshness scan reads; msgspec skips the rest unbuilt."""

    name: str | None = None
    dist_tags: dict[str, str] = msgspec.field(default_factory=dict, name="dist-tags")
    versions: dict[str, _VersionManifest] = msgspec.field(default_factory=dict)
    # Version keys map to ISO timestamps; ``created``/``modified`` (and ``unpublished``, an
    # object) share the map, so values stay undecoded and only those of versions are read.
    time: dict[str, msgspec.Raw] = msgspec.field(default_factory=dict)


_DECODER = msgspec.json.Decoder(_Packument)


def package_url(base_url: str, package_name: str) -> str:
    """Return the packument URL; a scoped name's slash is sent as ``%2f`` (``@scope%2fpkg``).

    npm's own client escapes only that slash, in lower case, and leaves ``@`` literal
    (``npm/npm-package-arg:lib/npa.js``, ``escapedName``).
    """
    escaped = quote(url_safe_name(package_name), safe="@/").replace("/", "%2f")
    return f"{base_url.rstrip('/')}/{escaped}"


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Fetch the full packument of ``package_name`` (cached as ``npm-packument-v1``).

    Raises ``PackageNotFound`` on 404/410 and ``RegistryError`` on other non-2xx answers or an
    unusable body.
    """
    request = catalog_request(base_url, package_name)
    return await fetch_catalog(fetch, request, catalog_from, package_name)


def catalog_request(base_url: str, package_name: str) -> CatalogRequest:
    """The GET of ``package_name``'s packument, stored as ``npm-packument-v1``."""
    return CatalogRequest(
        url=package_url(base_url, package_name),
        headers={"Accept": _ACCEPT},
        representation=REPRESENTATION,
        derive=functools.partial(derive, package_name=package_name),
    )


def catalog_from(response: FetchResponse, package_name: str, url: str) -> Catalog:
    """The catalog in the answer to ``catalog_request`` (compact document in ``content``).

    Raises ``PackageNotFound`` on 404/410 and ``RegistryError`` on other non-2xx answers or an
    unusable document.
    """
    check_status(response, f"npm package {package_name!r}", credential_hint=CREDENTIAL_HINT)
    return parse_compact(
        response.content,
        package_name=package_name,
        fetched_at=response.fetched_at,
        source_url=url,
        reused=response.cache == "fresh",
    )


def derive(content: bytes, *, package_name: str) -> bytes:
    """Reduce a full packument to the compact ``npm-packument-v1`` document (JSON bytes).

    Keeps every version's publish time and deprecation message, the dist-tags and the modified
    time; integrity, shasums, manifests and the rest are dropped. Columnar, so it compresses
    well: ``{"name", "distTags": {tag: version}, "modified", "versions": [version, ...],
    "times": [epoch seconds | null, ...], "deprecated": {version: message}}``. Raises
    ``RegistryError`` when the body is not JSON or not shaped like a packument.
    """
    try:
        packument = _DECODER.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        reason = describe_decode_error(exc)
        msg = f"npm package {package_name!r}: unusable packument ({reason})"
        raise RegistryError(msg) from exc
    modified = _text(packument.time.get("modified"))
    versions = list(packument.versions)
    deprecated = {
        version: message
        for version, manifest in packument.versions.items()
        if manifest.deprecated and (message := _deprecation(manifest.deprecated)) is not None
    }
    time = packument.time
    compact = {
        "name": packument.name,
        "distTags": packument.dist_tags,
        "modified": modified,
        "versions": versions,
        "times": [_epoch(time.get(version)) for version in versions],
        "deprecated": deprecated,
    }
    return orjson.dumps(compact)


def parse(
    content: bytes,
    *,
    package_name: str,
    fetched_at: datetime,
    source_url: str = "",
) -> Catalog:
    """Build the catalog of ``package_name`` from a full packument (``derive``, then parse)."""
    return parse_compact(
        derive(content, package_name=package_name),
        package_name=package_name,
        fetched_at=fetched_at,
        source_url=source_url,
    )


def parse_compact(
    content: bytes,
    *,
    package_name: str,
    fetched_at: datetime,
    source_url: str = "",
    reused: bool = False,
) -> Catalog:
    """Build the catalog of ``package_name`` from an ``npm-packument-v1`` document.

    Releases come from ``versions`` (versions that are not semver are dropped), sorted by semver
    precedence; ``released_at`` is ``time[version]`` or ``None``; ``latest`` is
    ``dist-tags.latest`` as the registry says, even when a higher version exists.
    """
    try:
        document = orjson.loads(content)
        tags = {str(k): str(v) for k, v in document["distTags"].items()}
        rows = list(zip(document["versions"], times_from_epochs(document["times"]), strict=True))
        deprecated = {str(k): str(v) for k, v in document["deprecated"].items()}
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError, AttributeError) as exc:
        msg = f"npm package {package_name!r}: unusable {REPRESENTATION} document"
        raise RegistryError(msg) from exc
    is_valid, sort_key = npm_versioning.is_valid, npm_versioning.sort_key
    releases: list[Release] = []
    for raw, when in rows:
        version = str(raw)
        if is_valid(version):
            message = deprecated.get(version) if deprecated else None
            releases.append(Release(version, when, False, message))  # noqa: FBT003
    releases.sort(key=lambda release: sort_key(release.version))
    return Catalog(
        datasource=ID,
        package_name=package_name,
        releases=tuple(releases),
        latest=tags.get("latest"),
        fetched_at=fetched_at,
        dist_tags=tuple(sorted(tags.items())),
        time_source=TIME_SOURCE,
        source_url=source_url,
        reused=reused,
    )


def _text(raw: msgspec.Raw | None) -> str | None:
    """Return undecoded JSON as a string when it is one (``None`` for any other value)."""
    if raw is None or not bytes(raw).startswith(b'"'):
        return None
    return msgspec.json.decode(raw, type=str)


def _epoch(raw: msgspec.Raw | None) -> int | None:
    when = parse_time(_text(raw))
    return int(when.timestamp()) if when is not None else None


def _deprecation(raw: msgspec.Raw) -> str | None:
    """Return the deprecation message; ``""`` un-deprecates, other non-strings say "deprecated".

    ``null`` and ``false`` (like an absent field) mean not deprecated.
    """
    text = bytes(raw)
    if text.startswith(b'"'):
        message = msgspec.json.decode(raw, type=str)
        return message if message.strip() else None
    if text in {b"null", b"false"}:
        return None
    return "deprecated"


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning=npm_versioning.ID,
    get_catalog=get_catalog,
    single_document=SingleDocument(request=catalog_request, build=catalog_from),
    release_times=None,  # the catalog document carries every publish time it knows
    get_digest=None,
    freshness_floor_representations=(),
    dependencies=None,
)
