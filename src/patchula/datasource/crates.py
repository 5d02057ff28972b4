"""crates.io sparse index datasource: versions, yanks and ``pubtime`` from one index file per crate.

The sparse index (``GET {base}/<prefix>/<name>``, lower-cased) holds one JSON line per published
version, yanked ones included. Since late 2025 entries may carry ``pubtime`` (UTC, seconds); an
entry without one has an unknown publish time, never an invented one. The crates.io web API's
``created_at`` is the fallback (``release_times``), asked only for the versions the policy needs
and throttled to the crawler policy's one request a second.
Sources: ``rust-lang/cargo:src/doc/src/reference/registry-index.md`` (paths, entry schema, 404/
410/451); crates.io pull requests 12315 and 12359 (``pubtime``).
"""

from __future__ import annotations

import functools
from datetime import UTC, datetime
from typing import TYPE_CHECKING
from urllib.parse import quote

import orjson
from msgspec.structs import replace

from patchula.datasource.base import (
    REASON_LIMIT,
    Datasource,
    Declared,
    LazyTimes,
    Unavailable,
    check_status,
    from_epoch,
    parse_time,
    url_safe_name,
)
from patchula.errors import PackageNotFound, RegistryError
from patchula.http.auth import redact_url
from patchula.models import Catalog, Release
from patchula.versioning import cargo as cargo_versioning

if TYPE_CHECKING:
    from collections.abc import Mapping, Sequence

    from patchula.datasource.base import Fetch

ID = "crates"
DEFAULT_BASE_URL = "https://index.crates.io"
TIME_SOURCE = "crates.io index pubtime, else the web API created_at"
# v2: lines cargo would not offer (another crate's name, an index schema ``v`` above 2, a
# ``yanked`` that is not a boolean) are dropped when deriving; v1 documents kept them.
REPRESENTATION = "cargo-index-v2"
# The highest index entry schema version cargo reads (``INDEX_V_MAX``); an entry with a higher
# ``v`` is ``IndexSummary::Unsupported``, never resolved. An absent ``v`` means 1.
INDEX_V_MAX = 2


def index_path(name: str) -> str:
    """Return the sparse-index path of ``name``: ``1/a``, ``2/ab``, ``3/a/abc``, ``ab/cd/abcd``."""
    lower = url_safe_name(name).lower()
    if len(lower) <= 2:  # noqa: PLR2004 - the index's own length classes
        return f"{len(lower)}/{lower}"
    if len(lower) == 3:  # noqa: PLR2004
        return f"3/{lower[0]}/{lower}"
    return f"{lower[:2]}/{lower[2:4]}/{lower}"


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Fetch the index file of ``package_name`` (cached as ``cargo-index-v2``).

    Raises ``PackageNotFound`` on 404/410/451 and ``RegistryError`` on other non-2xx answers or
    an index file with no usable line.
    """
    url = f"{base_url.rstrip('/')}/{index_path(package_name)}"
    response = await fetch(
        url,
        representation=REPRESENTATION,
        derive=functools.partial(derive, package_name=package_name),
    )
    if response.status == 451:  # noqa: PLR2004 - Unavailable For Legal Reasons
        msg = f"crate {package_name!r} not available (451 from {url})"
        raise PackageNotFound(msg)
    check_status(response, f"crate {package_name!r}")
    catalog = parse_compact(
        response.content, package_name=package_name, fetched_at=response.fetched_at, source_url=url
    )
    return replace(catalog, reused=response.cache == "fresh")


def crate_key(name: str) -> str:
    """Return the form in which two crates.io names are the same crate.

    crates.io treats names as case-insensitive with ``-`` and ``_`` equivalent: ``Serde_JSON``
    and ``serde-json`` are one crate (crates.io's ``canon_crate_name``; cargo looks both
    spellings up in the index).
    """
    return name.lower().replace("-", "_")


def _line_problem(entry: object, crate: str) -> str | None:
    """Why cargo would not offer the index line ``entry`` for the crate keyed ``crate``.

    ``None`` for a usable line. Cargo skips a line that does not deserialise as an index entry
    (not an object, ``name`` or ``vers`` not strings, ``yanked`` not a boolean, ``v`` not an
    unsigned integer), one whose ``v`` is above ``INDEX_V_MAX`` (``IndexSummary::Unsupported``),
    and its query never matches a line that names another crate. Source:
    https://doc.rust-lang.org/cargo/reference/registry-index.html#json-schema.
    """
    if not isinstance(entry, dict):
        return "is not an index entry"
    name = entry.get("name")
    if not isinstance(name, str) or not isinstance(entry.get("vers"), str):
        return "is not an index entry"
    if crate_key(name) != crate:
        return "names another crate"
    yanked = entry.get("yanked")
    if yanked is not None and not isinstance(yanked, bool):
        return "has a yanked value that is not true or false"
    schema = entry.get("v")
    if schema is None:
        return None
    if isinstance(schema, bool) or not isinstance(schema, int) or schema < 0:
        return "has a v that is not an unsigned integer"
    if schema > INDEX_V_MAX:
        return f"has index schema v {schema}, above the {INDEX_V_MAX} cargo reads"
    return None


def _index_entries(content: bytes, package_name: str) -> tuple[list[dict[str, object]], str]:
    """The index lines of ``package_name`` that cargo would offer, and why the others were not.

    The reason is ``""`` when every non-blank line is usable, else counts in file order, e.g.
    ``"2 lines name another crate; 1 line is not JSON"``.
    """
    crate = crate_key(package_name)
    entries: list[dict[str, object]] = []
    dropped: dict[str, int] = {}
    for raw in content.splitlines():
        if not raw.strip():
            continue
        try:
            entry = orjson.loads(raw)
        except orjson.JSONDecodeError:
            problem: str | None = "is not JSON"
        else:
            problem = _line_problem(entry, crate)
        if problem is None:
            entries.append(entry)
        else:
            dropped[problem] = dropped.get(problem, 0) + 1
    reason = "; ".join(
        f"{count} line {problem}" if count == 1 else f"{count} lines {_plural(problem)}"
        for problem, count in dropped.items()
    )
    return entries, reason


def _plural(problem: str) -> str:
    """``problem`` (said of one line) said of several: ``names`` → ``name``, ``has`` → ``have``."""
    verb, _, rest = problem.partition(" ")
    plural = {"names": "name", "has": "have", "is": "are"}.get(verb, verb)
    return f"{plural} {rest}".replace(" an index entry", " index entries")


def derive(content: bytes, *, package_name: str) -> bytes:
    """Reduce an index file to the compact ``cargo-index-v2`` document.

    Keeps each line's version, publish time (epoch seconds or null) and yank flag; dependency
    lists, features and checksums are dropped. Lines cargo would not offer are skipped
    (``_line_problem``: not JSON objects, another crate's, an unsupported schema ``v``, a
    ``yanked`` that is not a boolean); a file without one usable line raises ``RegistryError``
    saying which lines were skipped and why. Shape: ``{"versions": [...], "times": [...],
    "yanked": [...]}``.
    """
    versions: list[str] = []
    times: list[int | None] = []
    yanked: list[str] = []
    entries, dropped = _index_entries(content, package_name)
    for entry in entries:
        version = str(entry["vers"])
        when = parse_time(entry.get("pubtime"))
        versions.append(version)
        times.append(int(when.timestamp()) if when is not None else None)
        if entry.get("yanked") is True:
            yanked.append(version)
    if not versions:
        msg = f"crate {package_name!r}: the index file has no usable version line"
        if dropped:
            msg += f" ({dropped[:REASON_LIMIT]})"
        raise RegistryError(msg)
    return orjson.dumps({"versions": versions, "times": times, "yanked": yanked})


def parse_compact(
    content: bytes,
    *,
    package_name: str,
    fetched_at: datetime,
    source_url: str = "",
) -> Catalog:
    """Build the catalog from a ``cargo-index-v2`` document.

    Yanked versions are kept but marked (never proposed); ``latest`` is the highest stable
    version that is not yanked (crates.io's ``max_stable_version``), else ``None``.
    """
    try:
        document = orjson.loads(content)
        rows = list(zip(document["versions"], document["times"], strict=True))
        yanked = set(document["yanked"])
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        msg = f"crate {package_name!r}: unusable {REPRESENTATION} document"
        raise RegistryError(msg) from exc
    releases = [
        Release(
            version=str(version),
            released_at=datetime.fromtimestamp(when, UTC)
            if isinstance(when, int)
            else from_epoch(when),
            yanked=version in yanked,
        )
        for version, when in rows
        if cargo_versioning.is_valid(str(version))
    ]
    releases.sort(key=lambda release: cargo_versioning.sort_key(release.version))
    stable = [r.version for r in releases if not r.yanked and cargo_versioning.is_stable(r.version)]
    return Catalog(
        datasource=ID,
        package_name=package_name,
        releases=tuple(releases),
        latest=stable[-1] if stable else None,
        fetched_at=fetched_at,
        time_source=TIME_SOURCE,
        source_url=source_url,
    )


# Each index line's normal, non-optional dependencies (``cache warm``), per version:
# JSON ``{"<version>": [[crate, requirement], …], …}``.
# v2: read from the lines ``derive`` keeps (v1 read every line with a ``vers``).
DEPENDENCIES_REPRESENTATION = "cargo-index-deps-v2"


def derive_dependencies(content: bytes, *, package_name: str) -> bytes:
    """Reduce an index file to each version's normal, non-optional dependencies.

    A dependency entry's ``kind`` is ``normal`` when absent or null (``dev`` and ``build`` are
    not linked into dependents); ``package`` names the crate when the dependency is renamed
    (https://doc.rust-lang.org/cargo/reference/registry-index.html#json-schema). Optional
    dependencies are left out: which features turn them on is the dependent's choice. Only
    the lines ``derive`` keeps are read (``_line_problem``).
    """
    found: dict[str, list[list[str]]] = {}
    entries, _ = _index_entries(content, package_name)
    for entry in entries:
        deps: list[list[str]] = []
        listed = entry.get("deps")
        for dep in listed if isinstance(listed, list) else ():
            if not isinstance(dep, dict) or dep.get("kind") not in {None, "normal"}:
                continue
            if dep.get("optional") is True:
                continue
            name = dep.get("package") or dep.get("name")
            if isinstance(name, str) and isinstance(dep.get("req", ""), str):
                deps.append([name, dep.get("req", "")])
        found[str(entry["vers"])] = deps
    return orjson.dumps(found)


async def dependencies(
    fetch: Fetch,
    base_url: str,
    package_name: str,
    version: str,
    *,
    extras: frozenset[str] = frozenset(),  # noqa: ARG001 - Cargo features are not followed
) -> list[Declared]:
    """The normal dependencies of ``package_name`` ``version`` from its sparse-index line.

    The index file is read again in its ``cargo-index-deps-v1`` form (the catalog's compact
    form drops ``deps``). Raises ``PackageNotFound`` on 404/410 or when the index has no such
    version, ``RegistryError`` otherwise.
    """
    url = f"{base_url.rstrip('/')}/{index_path(package_name)}"
    response = await fetch(
        url,
        representation=DEPENDENCIES_REPRESENTATION,
        derive=functools.partial(derive_dependencies, package_name=package_name),
    )
    what = f"crate {package_name!r}"
    check_status(response, what)
    try:
        table = orjson.loads(response.content)
    except orjson.JSONDecodeError:
        msg = f"{what}: unusable stored dependencies"
        raise RegistryError(msg) from None
    deps = table.get(version) if isinstance(table, dict) else None
    if not isinstance(deps, list):
        msg = f"{what}: version {version} is not in the index"
        raise PackageNotFound(msg)
    return [Declared(str(name), str(req)) for name, req in deps]


DEFAULT_API_URL = "https://crates.io"
# The ``crates-api`` registry of an alternative Cargo registry's lookups: crates.io's web API
# knows none of its crates (a namesake there is another crate), and the Cargo registry web API
# has no version list with dates, so its publish times are the index ``pubtime`` alone.
NO_WEB_API = "none:"
API_MIN_INTERVAL_SECONDS = 1.0  # crates.io crawler policy: at most one request per second
# The throttled web API is asked only when the release-age policy needs a date, never for
# libyears alone (libyears then stay unknown when the index has no pubtime).
TIMES_FOR_LIBYEARS = False
# Where a crate's date came from, as its row says (``dateSources``): the index ``pubtime``, or
# the web API ``created_at`` asked for want of one.
INDEX_DATE = "index"
API_DATE = "web-api"
_API_PAGE = 100
_API_MAX_PAGES = 5


async def release_times(
    fetch: Fetch, registries: Mapping[str, str], package_name: str, versions: Sequence[str]
) -> dict[str, datetime | Unavailable | None]:
    """Return publish times (the web API's ``created_at``) for the wanted ``versions``.

    Only asked for when the index gives no ``pubtime`` and the policy or libyears need one.
    Pages of the versions endpoint (newest first by semver, 100 a page) are read until every
    wanted version is found, at most five pages — never one request per version. The times of
    every version on the pages read are returned, not only the wanted ones. The API host is
    throttled to one request a second by the fetch facade. A wanted version the API does not
    list (the index does) is ``Unavailable``: a failed date lookup of that version, naming the
    first page's URL. Raises ``LookupFailed`` subclasses like ``get_catalog`` (a 404 for the
    crate: ``PackageNotFound``).
    Source: crates.io ``/api/v1/crates/<name>/versions`` (seek pagination, ``meta.next_page``).
    """
    base = registries.get("crates-api", DEFAULT_API_URL).rstrip("/")
    if base == NO_WEB_API.rstrip("/"):
        msg = (
            f"crate {package_name!r}: the alternative registry's index gives no pubtime, and "
            "patchula reads no web API but crates.io's"
        )
        raise RegistryError(msg)
    wanted = set(versions)
    found: dict[str, datetime | Unavailable | None] = dict.fromkeys(versions)
    query = f"?per_page={_API_PAGE}"
    root = f"{base}/api/v1/crates/{quote(url_safe_name(package_name), safe='')}/versions"
    read_all = False
    for _ in range(_API_MAX_PAGES):
        url = f"{root}{query}"
        response = await fetch(url, headers={"Accept": "application/json"})
        check_status(response, f"crate {package_name!r} (crates.io API)")
        try:
            page = orjson.loads(response.content)
            rows = [(str(v["num"]), v.get("created_at")) for v in page["versions"]]
            next_page = page.get("meta", {}).get("next_page")
        except (orjson.JSONDecodeError, KeyError, TypeError, AttributeError) as exc:
            msg = f"crate {package_name!r}: unusable crates.io API page"
            raise RegistryError(msg) from exc
        for version, created in rows:
            # Every version on a page read is kept: the caller asks again for fewer.
            found[version] = parse_time(created)
            wanted.discard(version)
        if not isinstance(next_page, str) or not next_page:
            read_all = True
            break
        if not wanted:
            break
        query = next_page if next_page.startswith("?") else f"?{next_page}"
    where = "its version list" if read_all else f"the first {_API_MAX_PAGES} pages of its versions"
    for version in wanted:
        found[version] = Unavailable(
            f"crate {package_name!r} (crates.io API): version {version}, which the index lists,"
            f" is not in {where} ({redact_url(f'{root}?per_page={_API_PAGE}')})"
        )
    return found


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning=cargo_versioning.ID,
    get_catalog=get_catalog,
    single_document=None,  # a sparse-index file, then the API only for missing pubtimes
    release_times=LazyTimes(
        lookup=release_times,
        for_libyears=TIMES_FOR_LIBYEARS,
        source=API_DATE,
        catalog_source=INDEX_DATE,
    ),
    get_digest=None,
    platform_digests=None,
    digest_terms=None,
    freshness_floor_representations=(),
    dependencies=dependencies,
)
