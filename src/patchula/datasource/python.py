"""CPython releases from python.org's release API: versions, release dates, prerelease flags.

``GET {base}/api/v2/downloads/release/?is_published=true`` answers one JSON array, one object
per release: ``name`` (``Python 3.12.4``), ``release_date`` (ISO 8601, UTC), ``pre_release``,
``is_published`` and more patchula does not read. Chosen over CPython's git tags because the
API gives every release its date in one request and marks prereleases itself (tags would need
a commit lookup per date), and its fields are documented where they are used: Renovate's
``python-version`` datasource reads this endpoint with this schema
(``renovatebot/renovate:lib/modules/datasource/python-version/{readme.md,schema.ts}``). The
base URL is ``--registry python=URL`` (default ``https://www.python.org``). Stored compact as
``python-releases-v1`` (versions, dates, prerelease flags).
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
    from_epoch,
    parse_time,
)
from patchula.errors import RegistryError
from patchula.models import Catalog, Release
from patchula.versioning import mise

if TYPE_CHECKING:
    from patchula.datasource.base import Fetch
    from patchula.models import FetchResponse

ID = "python"
DEFAULT_BASE_URL = "https://www.python.org"
TIME_SOURCE = "python.org release_date"
REPRESENTATION = "python-releases-v1"
PATH = "/api/v2/downloads/release/?is_published=true"
_NAME_PREFIX = "Python "


def catalog_request(base_url: str, package_name: str) -> CatalogRequest:
    """The GET of the release list (the same for every name: these are CPython's releases)."""
    return CatalogRequest(
        url=f"{base_url.rstrip('/')}{PATH}",
        headers={"Accept": "application/json"},
        representation=REPRESENTATION,
        derive=functools.partial(derive, package_name=package_name),
    )


def catalog_from(response: FetchResponse, package_name: str, url: str) -> Catalog:
    """The catalog in the answer to ``catalog_request``; raises like ``get_catalog``."""
    check_status(response, "the python.org release list")
    return parse_compact(
        response.content,
        package_name=package_name,
        fetched_at=response.fetched_at,
        source_url=url,
        reused=response.cache == "fresh",
    )


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Fetch the release list (cached as ``python-releases-v1``).

    Raises ``PackageNotFound`` on 404/410 and ``RegistryError`` on other non-2xx answers or a
    body that is not a JSON array of releases.
    """
    request = catalog_request(base_url, package_name)
    return await fetch_catalog(fetch, request, catalog_from, package_name)


def derive(content: bytes, *, package_name: str) -> bytes:  # noqa: ARG001 - one list
    """Reduce the API's array to ``{"versions": [...], "times": [...], "pre": [...]}``.

    Unpublished entries and names that are no ``Python <version>`` are left out; none left
    raises ``RegistryError``.
    """
    try:
        document = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        msg = f"the python.org release list is not JSON: {exc}"
        raise RegistryError(msg) from None
    if not isinstance(document, list):
        msg = "the python.org release list is not a JSON array"
        raise RegistryError(msg)
    versions: list[str] = []
    times: list[int | None] = []
    pre: list[str] = []
    for entry in document:
        if not isinstance(entry, dict) or entry.get("is_published") is False:
            continue
        name = entry.get("name")
        if not isinstance(name, str) or not name.startswith(_NAME_PREFIX):
            continue
        version = name[len(_NAME_PREFIX) :].strip()
        if not mise.is_valid(version):
            continue
        when = parse_time(entry.get("release_date"))
        versions.append(version)
        times.append(int(when.timestamp()) if when is not None else None)
        if entry.get("pre_release") is True:
            pre.append(version)
    if not versions:
        msg = "the python.org release list names no release"
        raise RegistryError(msg)
    return orjson.dumps({"versions": versions, "times": times, "pre": pre})


def parse_compact(
    content: bytes,
    *,
    package_name: str,
    fetched_at: datetime,
    source_url: str = "",
    reused: bool = False,
) -> Catalog:
    """Build the catalog from a ``python-releases-v1`` document.

    A release the API marks ``pre_release`` is a prerelease whatever its version says;
    ``latest`` is the newest release that is not one.
    """
    try:
        document = orjson.loads(content)
        rows = list(zip(document["versions"], document["times"], strict=True))
        pre = set(document["pre"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        msg = f"unusable {REPRESENTATION} document"
        raise RegistryError(msg) from exc
    releases = sorted(
        (
            Release(
                version=str(version),
                released_at=from_epoch(when),
                prerelease=version in pre or not mise.is_stable(str(version)),
            )
            for version, when in rows
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
    release_times=None,  # the list dates every release
    get_digest=None,
    platform_digests=None,
    digest_terms=None,
    freshness_floor_representations=(),
    dependencies=None,
)
