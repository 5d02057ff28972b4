"""Node.js releases from the dist index: ``GET {base}/index.json`` (versions, dates, LTS names).

One JSON array, newest first, one object per release: ``version`` (``v22.12.0``), ``date``
(``YYYY-MM-DD``: a day, read as midnight UTC), ``lts`` (the LTS line's code name, such as
``Iron``, or ``false``) and per-platform file lists patchula does not read. mise's ``core:node``
reads the same index (``jdx/mise:src/plugins/core/node.rs``; registries.md §7); the base URL is
the mirror (``--registry node=URL``, default ``https://nodejs.org/dist``). The document is small
and stored raw (under the cache's body budget). LTS lines become the catalog's aliases
(``dist_tags``): ``lts`` (the newest LTS release) and ``lts/<name>`` (lower case, the newest of
that line), what ``node = "lts"`` / ``lts/iron`` and nvm's ``lts/*`` resolve to.
Source: https://nodejs.org/dist/index.json (the format nvm, fnm and mise read).
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import TYPE_CHECKING

import orjson
from msgspec.structs import replace

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

ID = "node"
DEFAULT_BASE_URL = "https://nodejs.org/dist"
TIME_SOURCE = "Node.js dist index.json date (day)"
# The raw index: small enough to keep as served (seed 003 counts it against the body budget).
REPRESENTATION = "raw"


def catalog_request(base_url: str, package_name: str) -> CatalogRequest:  # noqa: ARG001 - one index
    """The GET of the release index (the same for every name: there is one Node.js)."""
    return CatalogRequest(
        url=f"{base_url.rstrip('/')}/index.json",
        headers={"Accept": "application/json"},
        representation=REPRESENTATION,
        derive=None,
    )


def catalog_from(response: FetchResponse, package_name: str, url: str) -> Catalog:
    """The catalog in the answer to ``catalog_request``; raises like ``get_catalog``."""
    check_status(response, "the Node.js release index")
    catalog = parse(response.content, package_name=package_name, fetched_at=response.fetched_at)
    return replace(catalog, source_url=url, reused=response.cache == "fresh")


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Fetch and parse ``index.json``.

    Raises ``PackageNotFound`` on 404/410 and ``RegistryError`` on other non-2xx answers or a
    body that is not a JSON array of releases.
    """
    request = catalog_request(base_url, package_name)
    return await fetch_catalog(fetch, request, catalog_from, package_name)


def _day(value: object) -> datetime | None:
    if not isinstance(value, str):
        return None
    try:
        return datetime.strptime(value[:10], "%Y-%m-%d").replace(tzinfo=UTC)
    except ValueError:
        return None


def parse(content: bytes, *, package_name: str, fetched_at: datetime) -> Catalog:
    """Build the catalog from ``index.json``: releases oldest first, LTS aliases, latest.

    Entries that are no object with a ``vX.Y.Z`` ``version`` are skipped; a body with none
    raises ``RegistryError``. ``latest`` is the newest release (the ``latest`` alias: every
    index entry is a final release); a release of a major without LTS releases (``lts: false``
    throughout: odd majors, an even major before it enters LTS) is flagged ``prerelease``; the
    releases of an LTS line from before its LTS start (22.10.0, before 22.11.0 "Jod") are of
    that line, not flagged. As Renovate's ``node``
    versioning treats them as unstable ("Odd releases are unstable", "Even releases do not reach
    stability (LTS) immediately": docs.renovatebot.com/modules/versioning/node). A row declared
    on an LTS release is then measured against, and moved within, LTS releases only; a
    declaration on a Current release (``26``, ``latest``) against every release.
    """
    try:
        document = orjson.loads(content)
    except orjson.JSONDecodeError as exc:
        msg = f"the Node.js release index is not JSON: {exc}"
        raise RegistryError(msg) from None
    if not isinstance(document, list):
        msg = "the Node.js release index is not a JSON array"
        raise RegistryError(msg)
    entries: list[tuple[str, datetime | None, bool]] = []
    lines: dict[str, str] = {}
    for entry in document:
        if not isinstance(entry, dict):
            continue
        version = entry.get("version")
        if not isinstance(version, str) or not mise.is_valid(version):
            continue
        version = version.removeprefix("v")
        lts = entry.get("lts")
        in_lts = isinstance(lts, str) and bool(lts)
        entries.append((version, _day(entry.get("date")), in_lts))
        if isinstance(lts, str) and lts:
            name = lts.lower()
            if name not in lines or mise.compare(version, lines[name]) > 0:
                lines[name] = version
    # A major line with an LTS release is an LTS line, its releases from before the LTS start
    # (22.0.0-22.10.0) too: a row on one of them moves within LTS releases, as on 22.11.0. A
    # release of a major with none (odd majors, an even one while it is Current) is unstable.
    lts_majors = {version.split(".", 1)[0] for version, _, in_lts in entries if in_lts}
    releases = [
        Release(
            version=version, released_at=when, prerelease=version.split(".", 1)[0] not in lts_majors
        )
        for version, when, _ in entries
    ]
    if not releases:
        msg = "the Node.js release index lists no release"
        raise RegistryError(msg)
    releases.sort(key=lambda r: mise.sort_key(r.version))
    stable = [r.version for r in releases if mise.is_stable(r.version)]
    latest = stable[-1] if stable else None
    tags: list[tuple[str, str]] = []
    if latest is not None:
        tags.append(("latest", latest))
    if lines:
        tags.append(("lts", max(lines.values(), key=mise.sort_key)))
        tags.extend((f"lts/{name}", version) for name, version in sorted(lines.items()))
    return Catalog(
        datasource=ID,
        package_name=package_name,
        releases=tuple(releases),
        latest=latest,
        fetched_at=fetched_at,
        dist_tags=tuple(tags),
        time_source=TIME_SOURCE,
    )


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning=mise.ID,
    get_catalog=get_catalog,
    single_document=SingleDocument(request=catalog_request, build=catalog_from),
    release_times=None,  # the index dates every release
    get_digest=None,
    platform_digests=None,
    digest_terms=None,
    freshness_floor_representations=(),
    dependencies=None,
)
