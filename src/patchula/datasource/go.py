"""Go toolchain releases from go.dev: ``GET {base}/dl/?mode=json&include=all``.

One JSON array, newest first, one object per release: ``version`` (``go1.22.3``, ``go1.23rc1``),
``stable`` (false for betas and release candidates) and per-platform ``files`` patchula does not
read (``golang/website:internal/dl/dl.go``; ``include=all`` lists every release, not only the
two supported lines). It gives **no release dates**: every release's publish time is unknown
(never invented; the release-age policy decides, registries.md §0). The base URL is
``--registry go=URL`` (default ``https://go.dev``). Stored compact as ``go-releases-v1``
(versions and stable flags: the files lists are most of the document's megabytes). mise's own
``core:go`` lists the Go repository's tags with ``git ls-remote`` (registries.md §7); go.dev's
list is the same releases over plain HTTP, with go.dev's own word on which are stable.
"""

from __future__ import annotations

import functools
from datetime import datetime
from typing import TYPE_CHECKING

import orjson

from patchula.datasource.base import (
    CatalogRequest,
    Datasource,
    SingleDocument,
    check_status,
    fetch_catalog,
)
from patchula.errors import RegistryError
from patchula.models import Catalog, Release
from patchula.versioning import mise

if TYPE_CHECKING:
    from patchula.datasource.base import Fetch
    from patchula.models import FetchResponse

ID = "go"
DEFAULT_BASE_URL = "https://go.dev"
TIME_SOURCE = "go.dev gives no release dates"
REPRESENTATION = "go-releases-v1"
PATH = "/dl/?mode=json&include=all"


def catalog_request(base_url: str, package_name: str) -> CatalogRequest:
    """The GET of the release list (the same for every name: these are Go's releases)."""
    return CatalogRequest(
        url=f"{base_url.rstrip('/')}{PATH}",
        headers={"Accept": "application/json"},
        representation=REPRESENTATION,
        derive=functools.partial(derive, package_name=package_name),
    )


def catalog_from(response: FetchResponse, package_name: str, url: str) -> Catalog:
    """The catalog in the answer to ``catalog_request``; raises like ``get_catalog``."""
    check_status(response, "the go.dev release list")
    return parse_compact(
        response.content,
        package_name=package_name,
        fetched_at=response.fetched_at,
        source_url=url,
        reused=response.cache == "fresh",
    )


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Fetch the release list (cached as ``go-releases-v1``).

    Raises ``PackageNotFound`` on 404/410 and ``RegistryError`` on other non-2xx answers or a
    body that is not a JSON array of releases.
    """
    request = catalog_request(base_url, package_name)
    return await fetch_catalog(fetch, request, catalog_from, package_name)


def derive(content: bytes, *, package_name: str) -> bytes:  # noqa: ARG001 - one list
    """Reduce the array to ``{"versions": [...], "unstable": [...]}`` (``go`` prefix dropped).

    Entries that are no object with a ``go<version>`` string are left out; none left raises
    ``RegistryError``.
    """
    try:
        document = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        msg = f"the go.dev release list is not JSON: {exc}"
        raise RegistryError(msg) from None
    if not isinstance(document, list):
        msg = "the go.dev release list is not a JSON array"
        raise RegistryError(msg)
    versions: list[str] = []
    unstable: list[str] = []
    for entry in document:
        if not isinstance(entry, dict):
            continue
        raw = entry.get("version")
        if not isinstance(raw, str) or not raw.startswith("go"):
            continue
        version = raw[2:]
        if not mise.is_valid(version):
            continue
        versions.append(version)
        if entry.get("stable") is not True:
            unstable.append(version)
    if not versions:
        msg = "the go.dev release list names no release"
        raise RegistryError(msg)
    return orjson.dumps({"versions": versions, "unstable": unstable})


def parse_compact(
    content: bytes,
    *,
    package_name: str,
    fetched_at: datetime,
    source_url: str = "",
    reused: bool = False,
) -> Catalog:
    """Build the catalog from a ``go-releases-v1`` document (publish times unknown).

    A release go.dev does not mark ``stable`` is a prerelease; ``latest`` is the newest stable.
    """
    try:
        document = orjson.loads(content)
        versions = [str(v) for v in document["versions"]]
        unstable = set(document["unstable"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        msg = f"unusable {REPRESENTATION} document"
        raise RegistryError(msg) from exc
    releases = sorted(
        (
            Release(version=v, released_at=None, prerelease=v in unstable or not mise.is_stable(v))
            for v in versions
        ),
        key=lambda r: mise.sort_key(r.version),
    )
    stable = [r.version for r in releases if not r.prerelease]
    return Catalog(
        datasource=ID,
        package_name=package_name,
        releases=tuple(releases),
        latest=stable[-1] if stable else None,
        fetched_at=fetched_at,
        time_source=TIME_SOURCE,
        source_url=source_url,
        reused=reused,
    )


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning=mise.ID,
    get_catalog=get_catalog,
    single_document=SingleDocument(request=catalog_request, build=catalog_from),
    release_times=None,  # go.dev dates no release; nothing to ask lazily
    get_digest=None,
    platform_digests=None,
    digest_terms=None,
    freshness_floor_representations=(),
    dependencies=None,
)
