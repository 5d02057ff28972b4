"""Go module proxy datasource: versions from ``@v/list``, retractions from the latest ``go.mod``.

Three requests per module (GOPROXY protocol, https://go.dev/ref/mod#goproxy-protocol):
``$base/$module/@v/list`` (tagged versions, one a line; pseudo-versions are never listed, so it is
empty for a module with only pseudo-versions), ``$base/$module/@latest`` (``{"Version", "Time"}``,
the one publish time known without a request per version) and the ``.mod`` of the version ``latest``
picks before retractions, whose ``retract`` directives mark versions retracted
(https://go.dev/ref/mod#go-mod-file-retract) and whose ``// Deprecated:`` module comment is the
catalog's note. Then the newer major module paths (``/vN``) are probed (``_probe_majors``). Module
paths and versions are case-encoded: an upper-case letter is sent as ``!`` + its lower-case form.
404 and 410 both mean "not found".
"""

from __future__ import annotations

import functools
import re
from typing import TYPE_CHECKING, TypeVar
from urllib.parse import quote

import anyio
import msgspec
import orjson
from msgspec.structs import replace

from patchula.datasource.base import (
    Datasource,
    Declared,
    LazyTimes,
    Unavailable,
    check_status,
    parse_time,
    url_safe_name,
)
from patchula.errors import LookupFailed, PackageNotFound, RegistryError
from patchula.models import Catalog, Release
from patchula.versioning import go as go_versioning

if TYPE_CHECKING:
    from collections.abc import Awaitable, Callable, Iterable, Mapping, Sequence
    from datetime import datetime

    from patchula.datasource.base import Fetch
    from patchula.models import FetchResponse

ID = "goproxy"
DEFAULT_BASE_URL = "https://proxy.golang.org"
TIME_SOURCE = "Go proxy .info time"
REPRESENTATION = "goproxy-list-v1"
# .info documents are cheap and cached for good: also fetch current's and latest's for libyears.
TIMES_FOR_LIBYEARS = True
# @latest is stored as its raw JSON under its own name, so a freshness floor can name it.
LATEST_REPRESENTATION = "goproxy-latest-raw"
# The two documents ``--go-freshness-secs`` keeps fresh for at least that long.
FRESHNESS_FLOOR_REPRESENTATIONS = (REPRESENTATION, LATEST_REPRESENTATION)

_T = TypeVar("_T")
_NOT_FOUND = frozenset({404, 410})
_FORBIDDEN = 403
_UPPER = re.compile(r"[A-Z]")
_INCOMPATIBLE = "+incompatible"
# A ``retract`` directive: the keyword, then space, ``(`` or ``[`` (the rest is its argument).
_RETRACT = re.compile(r"retract(?P<rest>(?:[\s(\[].*)?)")


class Retraction(msgspec.Struct, frozen=True):
    """One ``retract`` entry: the closed interval ``[low, high]`` (equal for a single version)."""

    low: str
    high: str
    rationale: str | None = None

    def covers(self, version: str) -> bool:
        """Return whether ``version`` lies in the interval (semver precedence, both ends in)."""
        key = go_versioning.sort_key(version)
        return bool(go_versioning.sort_key(self.low) <= key <= go_versioning.sort_key(self.high))


class LatestInfo(msgspec.Struct, frozen=True):
    """The ``@latest`` answer: a version and its commit time (``None`` when not given)."""

    version: str
    time: datetime | None


def module_path_escape(path: str) -> str:
    """Case-encode a module path or version: each upper-case letter becomes ``!`` + lower-case.

    ``github.com/BurntSushi/toml`` → ``github.com/!burnt!sushi/toml`` (golang.org/x/mod/module
    ``EscapePath``); the path itself is not validated.
    """
    return _UPPER.sub(lambda match: "!" + match[0].lower(), path)


def module_url(base_url: str, package_name: str) -> str:
    """Return ``$base/$escaped_module`` (no trailing slash) for the proxy endpoints."""
    escaped = quote(module_path_escape(url_safe_name(package_name)), safe="/!~")
    return f"{base_url.rstrip('/')}/{escaped}"


def proxy_chain(base_url: str) -> list[tuple[str, bool]]:
    """The proxies of a GOPROXY-style list, each with whether any error falls through to the next.

    ``https://a,https://b|https://c`` → ``[("https://a", False), ("https://b", True),
    ("https://c", False)]``: after a ``,`` the next proxy is tried only when the answer is not
    found (404/410), after a ``|`` on any error (https://go.dev/ref/mod#goproxy-protocol). The
    list ends at a ``direct`` or ``off`` entry (anything not http(s)): patchula never fetches
    from version control, so what the proxies before it answered stands. Always at least one
    entry (a lone base URL as given).
    """
    parts = re.split(r"([,|])", base_url)
    chain: list[tuple[str, bool]] = []
    for index in range(0, len(parts), 2):
        entry = parts[index].strip()
        if chain and not re.match(r"(?i)^https?://", entry):
            break  # ``direct``, ``off``: the go command's own fetch, not a proxy
        separator = parts[index + 1] if index + 1 < len(parts) else ""
        chain.append((entry, separator == "|"))
    return chain


async def along_chain(base_url: str, ask: Callable[[str], Awaitable[_T]]) -> _T:
    """``ask(proxy)`` along the GOPROXY-style list ``base_url`` (``proxy_chain``), as go does.

    The first answer wins. ``PackageNotFound`` (404/410) moves on to the next proxy after ``,``
    or ``|``; another ``LookupFailed`` only after ``|``. The last proxy's failure, or the first
    one that does not fall through, is raised as itself.
    """
    chain = proxy_chain(base_url)
    for index, (proxy, any_error) in enumerate(chain):
        last = index + 1 == len(chain)
        try:
            return await ask(proxy)
        except PackageNotFound:
            if last:
                raise
        except LookupFailed:
            if last or not any_error:
                raise
    msg = "no Go module proxy configured"  # unreachable: a chain has at least one entry
    raise PackageNotFound(msg)


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Look ``package_name`` up on the proxy, or on a GOPROXY-style list of proxies.

    ``base_url`` may be ``https://a,https://b|https://c``: after a ``,`` the next proxy is tried
    when the module is not found (404/410), after a ``|`` on any error, as the go command does
    (``along_chain``; https://go.dev/ref/mod#goproxy-protocol).
    """
    return await along_chain(
        base_url, lambda proxy: _catalog_from(fetch, proxy.strip(), package_name)
    )


async def _catalog_from(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Fetch ``@v/list`` (cached as ``goproxy-list-v1``), ``@latest`` and one ``.mod``.

    ``@latest`` may be missing (404/410) when the list names versions; with an empty list it is
    the only source of a version. Raises ``PackageNotFound`` when the module is not there
    (404/410) and ``RegistryError`` on other non-2xx answers or an unusable body. Never fetches
    ``.info`` per version: only the ``@latest`` version gets a publish time.
    """
    what = f"Go module {package_name!r}"
    root = module_url(base_url, package_name)
    list_url, latest_url = f"{root}/@v/list", f"{root}/@latest"
    listed, latest_response = await _both(
        fetch(
            list_url,
            representation=REPRESENTATION,
            derive=functools.partial(derive, package_name=package_name),
        ),
        fetch(latest_url, representation=LATEST_REPRESENTATION),
    )
    check_status(listed, what)
    every = _listed_versions(listed.content, package_name=package_name)
    versions = [v for v in every if fits_path(v, package_name)]
    if versions or len(every) == len(versions):
        latest = _latest_info(latest_response, what, module=package_name, required=not versions)
    else:  # a list of only versions of other major paths: @latest alone could answer
        latest = _latest_info(latest_response, what, module=package_name, required=False)
        if latest is None:
            foreign = ", ".join(every[-3:])
            msg = (
                f"{what}: the proxy lists only versions the go command cannot use on this path"
                f" ({foreign}; {_PATH_RULE})"
            )
            raise RegistryError(msg)

    used = [listed, latest_response]
    go_mod: str | None = None
    source = retraction_source(versions) or (latest.version if latest is not None else None)
    if source is not None:
        mod_response = await fetch(f"{root}/@v/{quote(module_path_escape(source), safe='!~+')}.mod")
        used.append(mod_response)
        if mod_response.status not in _NOT_FOUND:
            check_status(mod_response, f"{what} go.mod of {source}")
            go_mod = mod_response.content.decode("utf-8", errors="replace")
    # The retraction source is the latest compatible version when one is listed: its go.mod
    # also says whether the go command hides the +incompatible versions.
    compatible_has_go_mod = (
        not is_stand_in_go_mod(go_mod, package_name)
        if go_mod is not None and source is not None and not source.endswith(_INCOMPATIBLE)
        else None
    )
    catalog = build_catalog(
        versions,
        package_name=package_name,
        fetched_at=listed.fetched_at,
        latest=latest,
        retractions=parse_retractions(go_mod) if go_mod is not None else (),
        source_url=list_url,
        reused=all(response.cache == "fresh" for response in used),
        compatible_has_go_mod=compatible_has_go_mod,
    )
    deprecated = parse_deprecation(go_mod) if go_mod is not None else None
    if deprecated is not None:
        catalog = replace(catalog, note=deprecation_note(package_name, deprecated))
    named = [*versions, *([latest.version] if latest is not None else [])]
    shown = incompatible_visible(versions, latest, compatible_has_go_mod=compatible_has_go_mod)
    majors = await _newer_majors(
        fetch, base_url, package_name, named=named, incompatible_shown=shown
    )
    return with_newer_majors(catalog, majors)


# How many newer major module paths one lookup probes at most, one ``@v/list`` each
# (``_probe_majors`` says which): Renovate probes until one is missing, unbounded
# (renovatebot/renovate#19112), gomajor up to 100; a bound keeps a module that skipped majors
# (go-github is at /v7x) from costing a request per major, and the row says when it stopped.
MAX_MAJOR_PROBES = 8


class NewerMajor(msgspec.Struct, frozen=True):
    """One newer major module path the proxy lists: its versions and their retractions."""

    path: str
    versions: tuple[str, ...]
    retractions: tuple[Retraction, ...] = ()
    # The ``// Deprecated:`` text of the go.mod its retractions come from (``None``: none).
    deprecated: str | None = None


class NewerMajors(msgspec.Struct, frozen=True):
    """What probing the newer major paths found: the paths, a failure, the bound reached."""

    found: tuple[NewerMajor, ...] = ()
    failure: str | None = None
    bounded: str | None = None


def module_major(module: str) -> int | None:
    """Return the major version a module path stands for (``/vN`` or gopkg.in ``.vN``).

    ``example.com/m`` (v0 and v1 share the path) → 1; ``example.com/m/v3`` → 3;
    ``gopkg.in/yaml.v2`` → 2; ``None`` for a gopkg.in path without ``.vN``.
    """
    # At most 9 digits: a longer major is no real module (and int() of 4,301 digits raises).
    gopkg = re.fullmatch(r"gopkg\.in/.+\.v(\d{1,9})", module)
    if gopkg:
        return int(gopkg.group(1))
    if module.startswith("gopkg.in/"):
        return None
    suffix = re.fullmatch(r".+/v(\d{1,9})", module)
    if suffix and int(suffix.group(1)) >= 2:  # noqa: PLR2004 - /v0 and /v1 are not major suffixes
        return int(suffix.group(1))
    return 1


def major_path(module: str, major: int) -> str | None:
    """Return the path of ``module``'s major version ``major`` (https://go.dev/ref/mod#major-version-suffixes).

    ``(example.com/m/v2, 4)`` → ``example.com/m/v4``; ``(example.com/m/v2, 1)`` →
    ``example.com/m``; ``(gopkg.in/yaml.v2, 3)`` → ``gopkg.in/yaml.v3``. ``None`` when the path
    has no major (a gopkg.in path without ``.vN``).
    """
    gopkg = re.fullmatch(r"(gopkg\.in/.+\.v)\d{1,9}", module)
    if gopkg:
        return f"{gopkg.group(1)}{major}"
    if module.startswith("gopkg.in/"):
        return None
    suffix = re.fullmatch(r"(.+)/v(\d{1,9})", module)
    base = suffix.group(1) if suffix and int(suffix.group(2)) >= 2 else module  # noqa: PLR2004
    return base if major < 2 else f"{base}/v{major}"  # noqa: PLR2004 - v0/v1 share the path


def next_major_path(module: str) -> str | None:
    """Return the module path of the next major version (https://go.dev/ref/mod#major-version-suffixes).

    ``example.com/m`` → ``example.com/m/v2``; ``example.com/m/v3`` → ``example.com/m/v4``;
    ``gopkg.in/yaml.v2`` → ``gopkg.in/yaml.v3``.
    """
    major = module_major(module)
    return None if major is None else major_path(module, major + 1)


def version_path(module: str, version: str) -> str:
    """The module path ``version`` is published under: ``module``'s, or a newer major's.

    A catalog holds the versions of the newer major paths too (``with_newer_majors``); their
    ``.info`` lives under their own path. ``+incompatible`` versions belong to ``module``.
    """
    own = module_major(module)
    found = re.match(r"v(\d{1,9})\.", version)
    if own is None or found is None or version.endswith(_INCOMPATIBLE):
        return module
    major = max(int(found.group(1)), 1)
    if major <= own:
        return module
    return major_path(module, major) or module


def _probe_majors(module: str, named: Iterable[str], *, incompatible_shown: bool) -> list[int]:
    """The majors whose paths are probed first, in order; a miss among them ends nothing.

    A module's own list names the majors its tags reached: ``+incompatible`` tags (``v3.2.2
    +incompatible`` on ``github.com/golang-jwt/jwt``) belong to the unsuffixed path, so the
    first module path above them is ``/v4``, never ``/v2``; and a project that adopted modules
    without a major bump publishes ``/vN`` at the major of its last ``+incompatible`` tag
    (gomajor's fallback, icholy/gomajor ``modproxy.Latest``). So each major the list names
    above the path's own is probed, from the next major on, and so is the next major above
    the highest of them (``_newer_majors`` then goes on until a miss, as Renovate and gomajor
    do). When the go command shows the ``+incompatible`` versions (``incompatible_visible``),
    paths below the highest of them hold nothing newer and are skipped. A module whose list
    names no major above its own is probed from the next major only: one that jumped from v1
    to /v4 with no v2 or v3 tag anywhere is not found, as in Renovate and gomajor — finding
    it would cost every Go module requests for paths that do not exist.
    """
    own = module_major(module)
    if own is None:
        return []
    majors = {_major_of(version) for version in named}
    above = sorted(m for m in majors if m > own)
    floor = own + 1
    if incompatible_shown:
        shown = [_major_of(v) for v in named if v.endswith(_INCOMPATIBLE)]
        floor = max([floor, *shown])
    planned = {floor, *(m for m in above if m >= floor)}
    if above:
        planned.add(above[-1] + 1)
    return sorted(planned)


async def _newer_majors(
    fetch: Fetch,
    base_url: str,
    module: str,
    *,
    named: Sequence[str] = (),
    incompatible_shown: bool = False,
) -> NewerMajors:
    """Probe ``module``'s newer major paths (``_probe_majors``), then successive ones until a miss.

    ``named`` are the versions the module's list and ``@latest`` name. A miss (404/410, 403)
    below the last planned major is a gap; at or above it, it ends the probing, as
    Renovate does (renovatebot/renovate#19112, for #16663), at most ``MAX_MAJOR_PROBES``
    requests; an empty list counts as a miss. Each found path's retractions and deprecation
    come from the go.mod of its latest version (``retraction_source``). Another failure ends
    the probing with ``failure`` naming the path; what was found before it is kept.
    """
    planned = _probe_majors(module, named, incompatible_shown=incompatible_shown)
    if not planned:
        return NewerMajors()
    found: list[NewerMajor] = []
    major = planned[0]
    path = major_path(module, major)
    for _ in range(MAX_MAJOR_PROBES):
        path = major_path(module, major)
        if path is None:
            break
        try:
            newer = await _major_at(fetch, base_url, path)
        except LookupFailed as exc:
            failure = f"could not check for a newer major ({path}): {exc}"
            return NewerMajors(tuple(found), failure=failure)
        if newer is not None:
            found.append(newer)
        elif major >= planned[-1]:
            return NewerMajors(tuple(found))
        major = next((m for m in planned if m > major), major + 1)
    bounded = (
        f"newer majors probed up to {path} ({MAX_MAJOR_PROBES} at most): a newer one may exist"
    )
    return NewerMajors(tuple(found), bounded=bounded)


async def _major_at(fetch: Fetch, base_url: str, path: str) -> NewerMajor | None:
    """The versions the proxy lists for the major path ``path``; ``None`` when it has none."""
    root = module_url(base_url, path)
    listed = await fetch(
        f"{root}/@v/list",
        representation=REPRESENTATION,
        derive=functools.partial(derive, package_name=path),
    )
    # A 403 ends the probing too, as in Renovate: mirrors (Artifactory) answer it for a path
    # they do not hold; for the module's own path it is an error (``_catalog_from``).
    if listed.status in _NOT_FOUND or listed.status == _FORBIDDEN:
        return None
    check_status(listed, f"Go module {path!r}")
    # A proxy that lists every major under each path (Artifactory) would loop: keep this one's.
    major = max(module_major(path) or 1, 1)
    versions = tuple(
        v
        for v in parse_list_compact(listed.content, package_name=path)
        if _major_of(v) == major and not v.endswith(_INCOMPATIBLE)
    )
    if not versions:
        return None
    retractions: tuple[Retraction, ...] = ()
    deprecated = None
    source = retraction_source(versions)
    if source is not None:
        mod = await fetch(f"{root}/@v/{quote(module_path_escape(source), safe='!~+')}.mod")
        if mod.status not in _NOT_FOUND:
            check_status(mod, f"Go module {path!r} go.mod of {source}")
            text = mod.content.decode("utf-8", errors="replace")
            retractions, deprecated = parse_retractions(text), parse_deprecation(text)
    return NewerMajor(path, versions, retractions, deprecated)


def _major_of(version: str) -> int:
    found = re.match(r"v(\d{1,9})\.", version)
    return max(int(found.group(1)), 1) if found else 0


def with_newer_majors(catalog: Catalog, majors: NewerMajors) -> Catalog:
    """``catalog`` with the releases of the newer major paths, as one release list.

    Renovate lists a Go module's newer majors as its releases (renovatebot/renovate#19112), so
    a new major is a major update, as a crate's 1 → 2 is: ``latest`` becomes the newest stable,
    not retracted version of the newest major that has one, and ``successor`` names it with its
    path (``"<path> <version>"``), which a user must write to move. Retracted ones are yanked.
    A failed probe is the catalog's ``caveat``; the probing bound, its ``note`` (after a
    deprecation note already there), and so is the successor path's own deprecation.
    ``path_latest`` keeps the latest of ``catalog``'s own path, for a row that cannot move to
    another path (a mise ``go:`` tool, ``own_path_catalog``).
    """
    known = {release.version for release in catalog.releases}
    added = [
        Release(
            version=v,
            released_at=None,
            yanked=is_retracted(v, newer.retractions),
            yanked_reason=retraction_rationale(v, newer.retractions),
        )
        for newer in majors.found
        for v in newer.versions
        if v not in known
    ]
    successor = None
    successor_deprecated = None
    latest = catalog.latest
    for newer in majors.found:
        usable = [
            v
            for v in newer.versions
            if go_versioning.is_stable(v) and not is_retracted(v, newer.retractions)
        ]
        if usable:
            newest = max(usable, key=go_versioning.sort_key)
            successor = f"{newer.path} {newest}"
            successor_deprecated = (
                deprecation_note(newer.path, newer.deprecated) if newer.deprecated else None
            )
            latest = newest
    releases = tuple(
        sorted((*catalog.releases, *added), key=lambda r: go_versioning.sort_key(r.version))
    )
    notes = [part for part in (catalog.note, successor_deprecated, majors.bounded) if part]
    return replace(
        catalog,
        releases=releases,
        latest=latest,
        successor=successor,
        caveat=majors.failure,
        note="; ".join(notes) or None,
        path_latest=catalog.latest,
    )


def own_path_catalog(catalog: Catalog) -> Catalog:
    """``catalog`` without the releases of newer major paths: latest is its own path's.

    For a row that names its module path and cannot move to another one by changing the
    version: ``go install example.com/m@v2.1.0`` is refused when v2 is ``example.com/m/v2``
    (https://go.dev/ref/mod#major-version-suffixes), so a mise ``go:example.com/m`` tool is
    measured against ``example.com/m``'s own releases. ``successor`` is kept: the row still
    names the new major path. ``catalog`` itself when no newer major was added.
    """
    if catalog.datasource != ID or catalog.successor is None:
        return catalog
    module = catalog.package_name
    releases = tuple(r for r in catalog.releases if version_path(module, r.version) == module)
    return replace(catalog, releases=releases, latest=catalog.path_latest)


def parse_deprecation(go_mod: str) -> str | None:
    """The ``Deprecated:`` text of a go.mod's ``module`` comment, or ``None`` when there is none.

    The comment is the ``//`` lines right above the ``module`` directive and the one at its
    end; a paragraph in it that starts ``Deprecated:`` deprecates the module, and the rest of
    that paragraph is the message (golang.org/x/mod/modfile ``parseDeprecation``;
    https://go.dev/ref/mod#go-mod-file-module-deprecation). ``go list -m -u`` marks such a
    module ``(deprecated)``; the go command still upgrades it.
    """
    comments: list[str] = []
    for raw in go_mod.splitlines():
        line = raw.strip()
        if line.startswith("//"):
            comments.append(line[2:].strip())
            continue
        code, slashes, trailing = line.partition("//")
        if re.match(r"module[\s\"]", code.strip() + " "):
            if slashes:
                comments.append(trailing.strip())
            break
        comments = []
    else:
        return None
    text = "\n".join(comments)
    found = re.search(r"(?s)(?:^|\n\n)Deprecated: *(.*?)(?:$|\n\n)", text)
    if found is None:
        return None
    # An empty message deprecates nothing: the go command tests ``Deprecated != ""``.
    return " ".join(found.group(1).split()) or None


def deprecation_note(module: str, message: str) -> str:
    """The row note for a deprecated module path: ``module <path> is deprecated: <message>``."""
    return f"module {module} is deprecated: {message}"


async def _both(
    first: Awaitable[FetchResponse], second: Awaitable[FetchResponse]
) -> tuple[FetchResponse, FetchResponse]:
    """Await two fetches concurrently; a failure is re-raised as itself, not as a group.

    anyio task groups wrap every error in an ``ExceptionGroup``; callers catch
    ``RegistryUnreachable`` and ``RateLimited`` directly, so errors are kept and re-raised here
    (the first one's wins). Cancellation is not caught.
    """
    results: list[FetchResponse | None] = [None, None]
    errors: list[Exception | None] = [None, None]

    async def run(index: int, awaitable: Awaitable[FetchResponse]) -> None:
        try:
            results[index] = await awaitable
        except Exception as exc:  # noqa: BLE001 - re-raised below, unwrapped
            errors[index] = exc

    async with anyio.create_task_group() as group:
        group.start_soon(run, 0, first)
        group.start_soon(run, 1, second)
    for error in errors:
        if error is not None:
            raise error
    first_result, second_result = results
    assert first_result is not None  # noqa: S101 - set when no error was kept
    assert second_result is not None  # noqa: S101
    return first_result, second_result


def _latest_info(
    response: FetchResponse, what: str, *, module: str, required: bool
) -> LatestInfo | None:
    """Read ``@latest``; a missing or unusable one is tolerated unless it is ``required``.

    A version the go command cannot use on ``module``'s path (``fits_path``) is unusable.
    """
    if response.status in _NOT_FOUND and not required:
        return None
    check_status(response, what)
    info = parse_info(response.content)
    if info is not None and not fits_path(info.version, module):
        if required:
            named = info.version[:40]
            msg = f"{what}: @latest names {named}, not a version of this path ({_PATH_RULE})"
            raise RegistryError(msg)
        return None
    if info is None and required:
        msg = f"{what}: unusable @latest answer ({response.url})"
        raise RegistryError(msg)
    return info


# What ``fits_path`` checks, as a row says it.
_PATH_RULE = "a path without a /vN suffix takes v0, v1 or vN+incompatible; a /vN path only vN"
# The major version of a Go version: at most 9 digits (a longer one is no real module).
_VERSION_MAJOR = re.compile(r"v(0|[1-9][0-9]{0,8})\.")


def fits_path(version: str, module: str) -> bool:
    """Return whether the go command can use ``version`` as a version of the path ``module``.

    ``golang.org/x/mod/module.CheckPathMajor``, as ``go list -m -versions`` applies it: a path
    without a major suffix takes v0 and v1, and vN (N >= 2) only as ``+incompatible``; a
    ``/vN`` path, or gopkg.in's ``.vN``, only vN and never ``+incompatible`` (``modfetch``
    refuses it beside a major suffix), except the ``v0.0.0-`` pseudo-versions gopkg.in ``.v1``
    paths were once given. A gopkg.in path without ``.vN`` is not checked. A proxy lists only
    such versions; a broken or hostile one may list others (https://go.dev/ref/mod#major-version-suffixes).
    """
    found = _VERSION_MAJOR.match(version)
    if found is None:
        return False
    major = int(found.group(1))
    incompatible = version.endswith(_INCOMPATIBLE)
    own = module_major(module)
    if own is None:
        return True
    if module.startswith("gopkg.in/"):
        if own == 1 and version.startswith("v0.0.0-") and go_versioning.is_pseudo(version):
            return True
        return major == own and not incompatible
    if own >= 2:  # noqa: PLR2004 - /v0 and /v1 are not major suffixes
        return major == own and not incompatible
    return major >= 2 if incompatible else major <= 1  # noqa: PLR2004


def derive(content: bytes, *, package_name: str) -> bytes:
    """Reduce an ``@v/list`` body to the compact ``goproxy-list-v1`` document (JSON bytes).

    ``{"versions": [version, ...]}``: the valid Go versions of the list, unique, sorted by
    precedence (the proxy gives no order). Raises ``RegistryError`` when the body is not UTF-8.
    """
    try:
        text = content.decode("utf-8")
    except UnicodeDecodeError as exc:
        msg = f"Go module {package_name!r}: unusable @v/list (not UTF-8)"
        raise RegistryError(msg) from exc
    versions = {line.strip() for line in text.splitlines()}
    valid = sorted((v for v in versions if go_versioning.is_valid(v)), key=go_versioning.sort_key)
    return orjson.dumps({"versions": valid})


def parse_list_compact(content: bytes, *, package_name: str) -> list[str]:
    """Return the versions of a ``goproxy-list-v1`` document, in precedence order.

    Only the versions the go command can use on the path ``package_name`` (``fits_path``).
    Raises ``RegistryError`` on a damaged document.
    """
    return [
        version
        for version in _listed_versions(content, package_name=package_name)
        if fits_path(version, package_name)
    ]


def _listed_versions(content: bytes, *, package_name: str) -> list[str]:
    """Every valid Go version of a ``goproxy-list-v1`` document, in precedence order."""
    try:
        document = orjson.loads(content)
        versions = [str(version) for version in document["versions"]]
    except (orjson.JSONDecodeError, KeyError, TypeError) as exc:
        msg = f"Go module {package_name!r}: unusable {REPRESENTATION} document"
        raise RegistryError(msg) from exc
    return sorted((v for v in versions if go_versioning.is_valid(v)), key=go_versioning.sort_key)


def parse_info(content: bytes) -> LatestInfo | None:
    """Read an ``.info`` / ``@latest`` body; ``None`` when not JSON or without a valid version."""
    try:
        document = orjson.loads(content)
    except orjson.JSONDecodeError:
        return None
    if not isinstance(document, dict):
        return None
    version = document.get("Version")
    if not isinstance(version, str) or not go_versioning.is_valid(version):
        return None
    return LatestInfo(version, parse_time(document.get("Time")))


def parse_retractions(go_mod: str) -> tuple[Retraction, ...]:
    """Return the ``retract`` directives of a ``go.mod``: single versions, intervals, blocks.

    ``retract v1.0.1``, ``retract [v1.0.0, v1.0.5]`` and ``retract ( ... )`` with one entry a
    line; the trailing ``//`` comment is the rationale. Entries whose versions are not valid Go
    versions are skipped (the go command rejects such a go.mod; a scan keeps going).
    """
    found: list[Retraction] = []
    in_block = False
    for raw_line in go_mod.splitlines():
        code, _, comment = raw_line.partition("//")
        line = code.strip()
        rationale = comment.strip() or None
        if in_block:
            if line == ")":
                in_block = False
            elif line:
                found.extend(_entry(line, rationale))
            continue
        directive = _RETRACT.fullmatch(line)
        if directive is None:
            continue
        rest = directive["rest"].strip()
        if rest == "(":
            in_block = True
        elif rest.startswith("(") and rest.endswith(")"):
            found.extend(_entry(rest[1:-1].strip(), rationale))
        else:
            found.extend(_entry(rest, rationale))
    return tuple(found)


def _entry(text: str, rationale: str | None) -> list[Retraction]:
    """Parse one retract entry (``v1.2.3`` or ``[low, high]``); invalid ones give nothing."""
    if text.startswith("[") and text.endswith("]"):
        low, comma, high = text[1:-1].partition(",")
        if not comma:
            return []
        low, high = _unquote(low), _unquote(high)
    else:
        low = high = _unquote(text)
    if not (go_versioning.is_valid(low) and go_versioning.is_valid(high)):
        return []
    return [Retraction(low, high, rationale)]


def _unquote(token: str) -> str:
    token = token.strip()
    if len(token) >= 2 and token[0] == token[-1] == '"':  # noqa: PLR2004 - both quotes
        return token[1:-1]
    return token


def retraction_source(versions: Iterable[str]) -> str | None:
    """Return the version whose go.mod holds the retractions: ``latest`` before retractions.

    The highest release, else the highest prerelease (https://go.dev/ref/mod#go-mod-file-retract,
    "version queries"); ``+incompatible`` versions have no go.mod of their own, so they count
    only when nothing else is listed. ``None`` for an empty list.
    """
    listed = list(versions)
    compatible = [v for v in listed if not v.endswith(_INCOMPATIBLE)]
    for pool in ([v for v in compatible if go_versioning.is_stable(v)], compatible, listed):
        if pool:
            return max(pool, key=go_versioning.sort_key)
    return None


def is_retracted(version: str, retractions: Sequence[Retraction]) -> bool:
    """Return whether any retraction covers ``version``."""
    return any(retraction.covers(version) for retraction in retractions)


def retraction_rationale(version: str, retractions: Sequence[Retraction]) -> str | None:
    """The comment of the first retraction covering ``version`` (``None``: none, or unsaid)."""
    return next((r.rationale for r in retractions if r.covers(version) and r.rationale), None)


def incompatible_visible(
    versions: Sequence[str], latest: LatestInfo | None, *, compatible_has_go_mod: bool | None = None
) -> bool:
    """Return whether the go command shows the listed ``+incompatible`` versions.

    It hides them only beside a compatible version, and then only when the latest compatible
    version has a go.mod file of its own, not the ``module <path>`` stand-in a proxy serves for a
    version without one (``cmd/go/internal/modload/query.go``, ``versionHasGoMod``;
    https://go.dev/ref/mod#incompatible-versions). ``compatible_has_go_mod`` says which, or is
    ``None`` when that go.mod could not be read: then the proxy's own ``@latest`` decides
    (``+incompatible`` there means they are shown).
    """
    if all(version.endswith(_INCOMPATIBLE) for version in versions):
        return True
    if compatible_has_go_mod is not None:
        return not compatible_has_go_mod
    return latest is not None and latest.version.endswith(_INCOMPATIBLE)


def is_stand_in_go_mod(go_mod: str, module: str) -> bool:
    """Return whether ``go_mod`` is the one-line stand-in for a version without a go.mod.

    The go command and proxies serve a single ``module <path>`` line for such a version
    (``cmd/go/internal/modfetch``, ``LegacyGoMod``); a module's own go.mod has a ``go`` line or
    requirements besides.
    """
    return go_mod.strip() in {f"module {module}", f'module "{module}"'}


def build_catalog(
    versions: Sequence[str],
    *,
    package_name: str,
    fetched_at: datetime,
    latest: LatestInfo | None = None,
    retractions: Sequence[Retraction] = (),
    source_url: str = "",
    reused: bool = False,
    compatible_has_go_mod: bool | None = None,
) -> Catalog:
    """Assemble the catalog from the listed versions, ``@latest`` and the retractions.

    Releases are the listed versions (or ``@latest``'s version when the list is empty), in
    precedence order; retracted ones are ``yanked`` (a version that retracts itself included),
    with the retract comment as ``yanked_reason``.
    Only ``@latest``'s version has a ``released_at``. ``latest`` is the highest stable listed
    version that is not retracted, ``+incompatible`` ones only when the go command shows them
    (``incompatible_visible``, told by ``compatible_has_go_mod`` whether the latest compatible
    version has a go.mod of its own), else the highest such prerelease (the go command's
    ``latest`` query); with an empty list, ``@latest``'s version unless it is retracted.
    """
    names = list(versions)
    if not names and latest is not None:
        names = [latest.version]
    names.sort(key=go_versioning.sort_key)
    releases = tuple(
        Release(
            version=version,
            released_at=latest.time if latest is not None and latest.version == version else None,
            yanked=is_retracted(version, retractions),
            yanked_reason=retraction_rationale(version, retractions),
        )
        for version in names
    )
    if versions:
        show_incompatible = incompatible_visible(
            versions, latest, compatible_has_go_mod=compatible_has_go_mod
        )
        candidates = [
            release.version
            for release in releases
            if not release.yanked
            and go_versioning.is_stable(release.version)
            and (show_incompatible or not release.version.endswith(_INCOMPATIBLE))
        ]
        newest = candidates[-1] if candidates else None
        if newest is None:
            # No stable release: the go command's ``latest`` is the highest prerelease
            # (https://go.dev/ref/mod#version-queries), as PyPI's newest prerelease is there.
            pre = [
                release.version
                for release in releases
                if not release.yanked
                and (show_incompatible or not release.version.endswith(_INCOMPATIBLE))
            ]
            newest = pre[-1] if pre else None
    elif latest is not None and not is_retracted(latest.version, retractions):
        newest = latest.version
    else:
        newest = None
    return Catalog(
        datasource=ID,
        package_name=package_name,
        releases=releases,
        latest=newest,
        fetched_at=fetched_at,
        time_source=TIME_SOURCE,
        source_url=source_url,
        reused=reused,
        lists_every_version=False,  # @v/list never lists pseudo-versions
    )


async def release_times(
    fetch: Fetch, registries: Mapping[str, str], package_name: str, versions: Sequence[str]
) -> dict[str, datetime | Unavailable | None]:
    """Return the commit times the proxy's ``.info`` documents give for ``versions``.

    One ``GET $base/$module/@v/$version.info`` per wanted version, asked only for the versions
    the policy or libyears need (the caller goes newest first and stops early); ``.info`` is
    immutable, so the cache keeps it under its upstream policy. A GOPROXY-style list is walked
    per document as for the catalog (``along_chain``: the next proxy after a 404/410, or after
    any error behind a ``|``); a document no proxy has is ``Unavailable`` (the version came
    from the proxy's own list, so its missing ``.info`` is a failed date lookup, with the
    status and URL), a ``.info`` without a time ``None``. Raises the failure that does not
    fall through. Source: https://go.dev/ref/mod#goproxy-protocol.
    """
    base_url = registries.get(ID, DEFAULT_BASE_URL)
    found: dict[str, datetime | Unavailable | None] = {}
    for version in versions:
        ask = functools.partial(_info_time, fetch, package_name=package_name, version=version)
        try:
            found[version] = await along_chain(base_url, ask)
        except PackageNotFound as exc:
            found[version] = Unavailable(exc.reason)
    return found


async def _info_time(
    fetch: Fetch, proxy: str, *, package_name: str, version: str
) -> datetime | None:
    """The time ``proxy``'s ``.info`` gives ``version``; raises ``PackageNotFound`` on 404/410."""
    # A newer major's version (``with_newer_majors``) is dated under its own path.
    root = module_url(proxy, version_path(package_name, version))
    response = await fetch(f"{root}/@v/{quote(module_path_escape(version), safe='!~+')}.info")
    check_status(response, f"Go module {package_name!r} {version}")
    info = parse_info(response.content)
    return info.time if info is not None else None


_REQUIRE_LINE = re.compile(r'^\s*"?(?P<path>[^\s"]+)"?\s+"?(?P<version>v[^\s"]+)"?\s*$')


def parse_requires(go_mod: str) -> list[Declared]:
    """The ``require`` directives of a ``go.mod`` (single lines and blocks), in file order.

    Each is a module path and its minimum version (https://go.dev/ref/mod#go-mod-file-require);
    ``// indirect`` ones count too: with graph pruning (go ≥ 1.17) a module's go.mod lists
    every module its packages need. ``replace`` and ``exclude`` apply only to the main module
    and are ignored. Lines that do not parse are skipped; the first version of a path wins.
    """
    found: dict[str, Declared] = {}
    block = False
    for raw in go_mod.splitlines():
        line = raw.split("//", 1)[0].strip()
        if block:
            if line.startswith(")"):
                block = False
                continue
            text = line
        elif line.startswith("require"):
            rest = line.removeprefix("require").strip()
            if rest.startswith("("):
                block = True
                continue
            text = rest
        else:
            continue
        match = _REQUIRE_LINE.match(text)
        if match is not None:
            found.setdefault(match["path"], Declared(match["path"], match["version"]))
    return list(found.values())


async def dependencies(
    fetch: Fetch,
    base_url: str,
    package_name: str,
    version: str,
    *,
    extras: frozenset[str] = frozenset(),  # noqa: ARG001 - Go has no extras
) -> list[Declared]:
    """The requirements in ``package_name``'s ``go.mod`` at ``version`` (``@v/<version>.mod``).

    Along a GOPROXY-style list as the catalog is (``along_chain``). Raises ``PackageNotFound``
    on 404/410 from the last proxy asked, ``RegistryError`` otherwise.
    """

    async def go_mod(proxy: str) -> list[Declared]:
        root = module_url(proxy, package_name)
        response = await fetch(f"{root}/@v/{quote(module_path_escape(version), safe='!~+')}.mod")
        check_status(response, f"Go module {package_name!r} go.mod of {version}")
        return parse_requires(response.content.decode("utf-8", errors="replace"))

    return await along_chain(base_url, go_mod)


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning=go_versioning.ID,
    get_catalog=get_catalog,
    single_document=None,  # @v/list, @latest and a .mod, along a GOPROXY chain
    release_times=LazyTimes(lookup=release_times, for_libyears=TIMES_FOR_LIBYEARS),
    get_digest=None,
    platform_digests=None,
    digest_terms=None,
    freshness_floor_representations=FRESHNESS_FLOOR_REPRESENTATIONS,
    dependencies=dependencies,
)
