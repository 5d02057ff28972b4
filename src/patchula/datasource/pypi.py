"""PyPI datasource: release list and upload times from the JSON Simple API (PEP 691 + PEP 700).

Why the Simple API and not the JSON API (``/pypi/<name>/json``): measured from one machine, the
Simple JSON document is about half the bytes (Django 317 KB against 620 KB, numpy 1.9 MB against
3.6 MB) and three to six times faster to fetch, and the JSON API's ``releases`` key, the only
place it lists every version, is deprecated. The Simple API lists every version (PEP 700
``versions``) and every file with its ``upload-time`` and PEP 592 ``yanked`` flag; a file's
version is read from its filename. Sources: ``pypa/packaging.python.org:
source/specifications/simple-repository-api.rst``; ``pypi/warehouse:docs/user/api/json.md``.
"""

from __future__ import annotations

import functools
import itertools
import operator
from datetime import datetime
from typing import TYPE_CHECKING
from urllib.parse import quote

import msgspec
import orjson
from packaging.utils import (
    InvalidSdistFilename,
    InvalidWheelFilename,
    canonicalize_name,
    parse_sdist_filename,
    parse_wheel_filename,
)
from packaging.version import InvalidVersion, Version

from patchula.datasource.base import (
    REASON_LIMIT,
    CatalogRequest,
    Datasource,
    Declared,
    SingleDocument,
    check_status,
    describe_decode_error,
    epoch_seconds,
    fetch_catalog,
    times_from_epochs,
    url_safe_name,
)
from patchula.errors import RegistryError
from patchula.models import Catalog, Release
from patchula.versioning import pep440
from patchula.versioning.base import has_long_number

if TYPE_CHECKING:
    from collections.abc import Iterable, Mapping

    from patchula.datasource.base import Fetch
    from patchula.models import FetchResponse

ID = "pypi"
DEFAULT_BASE_URL = "https://pypi.org"
TIME_SOURCE = "PyPI upload-time (PEP 700)"
REPRESENTATION = "pypi-project-v3"  # v2: per-release Requires-Python; v3: time deltas
# Where a credential for a package index goes (named in a 401/403 row).
CREDENTIAL_HINT = "PIP_INDEX_URL, pip.conf or ~/.netrc"

# Pin major version 1: PyPI serves HTML without this header and may add a v2 later.
_ACCEPT = "application/vnd.pypi.simple.v1+json"
_SUPPORTED_MAJOR = "1"
# Extensions of files that are neither wheels nor PEP 625 sdists (eggs, wininst, old archives).
_LEGACY_EXTENSIONS = (
    ".tar.gz",
    ".tar.bz2",
    ".tar.xz",
    ".tar.z",
    ".tgz",
    ".tbz",
    ".tar",
    ".zip",
    ".egg",
    ".exe",
    ".msi",
    ".rpm",
    ".dmg",
    ".deb",
    ".whl",
)


class _Meta(msgspec.Struct, frozen=True):
    api_version: str = msgspec.field(name="api-version")


class _File(msgspec.Struct, frozen=True):
    """One file entry, reduced to what dates a release and says whether it is yanked."""

    filename: str
    upload_time: str | None = msgspec.field(default=None, name="upload-time")
    # ``false``, ``true`` or a non-empty reason string (PEP 592 / PEP 691).
    yanked: bool | str = False
    # The file's Requires-Python (PEP 691 ``requires-python``, PEP 503 ``data-requires-python``).
    requires_python: str | None = msgspec.field(default=None, name="requires-python")

    @property
    def is_yanked(self) -> bool:
        """Return whether the file is yanked (``true`` or a reason string)."""
        return self.yanked is True or isinstance(self.yanked, str)


class _Project(msgspec.Struct, frozen=True):
    """The fields of a project page a freshness scan reads; msgspec skips the rest unbuilt."""

    meta: _Meta
    versions: list[str] | None = None
    files: list[_File] = msgspec.field(default_factory=list)


_DECODER = msgspec.json.Decoder(_Project)
# Dash-separated fields of a regular wheel filename: with and without a build tag.
_WHEEL_FIELDS = frozenset({5, 6})


def project_url(base_url: str, package_name: str) -> str:
    """Return ``{base}/simple/<normalised-name>/`` (PEP 503 normalisation, trailing slash)."""
    name = quote(canonicalize_name(url_safe_name(package_name)), safe="")
    return f"{base_url.rstrip('/')}/simple/{name}/"


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:
    """Fetch the JSON Simple API page of ``package_name`` (cached as ``pypi-project-v3``).

    Raises ``PackageNotFound`` on 404/410 and ``RegistryError`` on other non-2xx answers, a
    non-JSON answer (a mirror serving only the HTML form) or an unusable body.
    """
    request = catalog_request(base_url, package_name)
    return await fetch_catalog(fetch, request, catalog_from, package_name)


def catalog_request(base_url: str, package_name: str) -> CatalogRequest:
    """The GET of ``package_name``'s PEP 691 JSON page, stored as ``pypi-project-v3``."""
    return CatalogRequest(
        url=project_url(base_url, package_name),
        headers={"Accept": _ACCEPT},
        representation=REPRESENTATION,
        derive=functools.partial(derive, package_name=package_name),
    )


def catalog_from(response: FetchResponse, package_name: str, url: str) -> Catalog:
    """The catalog in the answer to ``catalog_request`` (compact document in ``content``).

    Raises ``PackageNotFound`` on 404/410 and ``RegistryError`` on other non-2xx answers or a
    non-JSON answer (a mirror serving only the HTML form).
    """
    what = f"PyPI project {package_name!r}"
    check_status(response, what, credential_hint=CREDENTIAL_HINT)
    content_type = response.header("content-type")
    if content_type is not None and not _is_json(content_type):
        media_type = content_type.split(";", 1)[0].strip()[:REASON_LIMIT]
        msg = f"{what}: mirror did not serve the PEP 691 JSON form (got {media_type!r} from {url})"
        raise RegistryError(msg)
    return parse_compact(
        response.content,
        package_name=package_name,
        fetched_at=response.fetched_at,
        source_url=url,
        reused=response.cache == "fresh",
    )


def derive(content: bytes, *, package_name: str) -> bytes:
    """Reduce a PEP 691 JSON project page to the compact ``pypi-project-v3`` document.

    Versions come from ``versions`` (from the filenames when an api-version 1.0 page lacks it);
    versions that are not PEP 440 are dropped, and equal versions (``1.0``, ``1.0.0``) are kept
    once, under the first spelling. Per release: the earliest ``upload-time`` among its files,
    whether every file is yanked (PEP 592), whether it has files at all, and its
    Requires-Python (PEP 691 ``requires-python`` of its files, ``_joined_pythons``: what pip
    sees). Columnar, so it compresses well: ``{"name", "versions": [...] (ascending PEP 440),
    "times": [seconds since the previous known time | null, ...] (``_deltas``: the first from
    the epoch; small numbers compress far better than epoch seconds; v3),
    "yanked": [version, ...], "noFiles": [version, ...],
    "requiresPython": [[index, specifier | null], ...]}`` (v2; v1 had no ``requiresPython``):
    runs, each value holding from its index (into ``versions``) to the next run's, ``null``
    before the first (ascending versions change Requires-Python rarely: requests' 157 releases
    have 8 runs).
    Raises ``RegistryError`` on a body that is not a v1 JSON page (an HTML page included).
    """
    what = f"PyPI project {package_name!r}"
    if content.lstrip()[:1] == b"<":
        msg = f"{what}: mirror did not serve the PEP 691 JSON form (got HTML)"
        raise RegistryError(msg)
    try:
        project = _DECODER.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        msg = f"{what}: unusable Simple API page ({describe_decode_error(exc)})"
        raise RegistryError(msg) from exc
    api_version = project.meta.api_version
    if api_version.split(".", 1)[0] != _SUPPORTED_MAJOR:
        msg = f"{what}: unsupported Simple API version {api_version[:20]!r} (need 1.x)"
        raise RegistryError(msg)

    normalised_name = canonicalize_name(package_name)
    spellings = (
        project.versions
        if project.versions is not None
        else _versions_from_filenames(project.files, normalised_name)
    )
    # Each valid version under its first spelling, and each valid
    # spelling's first spelling: the version text of a regular wheel or sdist filename is
    # usually spelt exactly as in ``versions``, and a dictionary lookup then replaces parsing
    # it (a page holds thousands of files). One pass.
    known: dict[Version, str] = {}
    by_text: dict[str, str] = {}
    parse_version = _parse_version
    for text in spellings:
        version = parse_version(text)
        if version is not None:
            by_text[text] = known.setdefault(version, text)
    stamps_of, all_yanked, pythons = _files_by_release(
        project.files, normalised_name, by_text, known
    )
    versions: list[str] = []
    times: list[int | None] = []
    yanked: list[str] = []
    no_files: list[str] = []
    requires_python: list[str | None] = []
    for _, spelling in sorted(known.items()):
        versions.append(spelling)
        stamps = stamps_of.get(spelling)
        requires_python.append(pythons.get(spelling))
        if stamps is None:
            times.append(None)
            no_files.append(spelling)
            continue
        times.append(_earliest_epoch(stamps))
        if all_yanked[spelling]:
            yanked.append(spelling)
    compact = {
        "name": normalised_name,
        "versions": versions,
        "times": _deltas(times),
        "yanked": yanked,
        "noFiles": no_files,
        "requiresPython": _runs(requires_python),
    }
    return orjson.dumps(compact)


def parse(
    content: bytes,
    *,
    package_name: str,
    fetched_at: datetime,
    source_url: str = "",
) -> Catalog:
    """Build the catalog of ``package_name`` from a PEP 691 JSON page (``derive``, then parse)."""
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
    """Build the catalog of ``package_name`` from a ``pypi-project-v3`` document.

    ``released_at`` is the earliest upload time, ``yanked`` means every file is yanked, a
    release without files is not ``installable``, ``requires_python`` is what pip sees of its
    files' Requires-Python; ``latest`` is the newest final release that is installable and not
    yanked (a public one before a local ``+label`` one), or, when the project has no such final
    release, the newest such prerelease (pip installs one then: PEP 440, "Handling of
    pre-releases").
    """
    try:
        document = orjson.loads(content)
        versions = list(document["versions"])
        whens = times_from_epochs(_undeltas(document["times"]))
        if len(versions) != len(whens):
            msg = "columns of different lengths"
            raise ValueError(msg)  # noqa: TRY301 - one message for every unusable document
        yanked = set(document["yanked"])
        no_files = set(document["noFiles"])
        pythons = _from_runs(document["requiresPython"], len(versions))
    except (orjson.JSONDecodeError, KeyError, TypeError, ValueError) as exc:
        msg = f"PyPI project {package_name!r}: unusable {REPRESENTATION} document"
        raise RegistryError(msg) from exc
    # Every field of ``Release`` in order, made by ``tuple.__new__`` from C iterators: the named
    # tuple's own ``__new__`` and a Python loop per release cost twice as much on a warm run's
    # thousands of releases. A version that is not PEP 440 is dropped (``_parse_version`` gives
    # ``None``, a ``Version`` is always true).
    spellings = list(map(str, versions))
    repeat = itertools.repeat
    no, yes, none = repeat(False), repeat(True), repeat(None)  # noqa: FBT003 - Release fields
    is_yanked = map(yanked.__contains__, spellings) if yanked else no
    has_files = map(operator.not_, map(no_files.__contains__, spellings)) if no_files else yes
    # ``strict=False``: the constant columns are endless; the lengths were checked above.
    fields = zip(
        spellings, whens, is_yanked, none, has_files, no, none, none, pythons, strict=False
    )
    made = map(tuple.__new__, repeat(Release), fields)
    releases: list[Release] = list(itertools.compress(made, map(_parse_version, spellings)))
    # The newest (last stored) installable, not yanked final release, else such prerelease:
    # looked for from the end, so a long history is not asked for stability release by release.
    # A local version (``1.0+local``, PEP 440) is a downstream build, not a newer release of its
    # public version: latest only when the project has no public final release.
    latest: str | None = None
    newest_local: str | None = None
    newest_prerelease: str | None = None
    for release in reversed(releases):
        if release.installable and not release.yanked:
            if pep440.is_stable(release.version):
                if "+" not in release.version:
                    latest = release.version
                    break
                if newest_local is None:
                    newest_local = release.version
            elif newest_prerelease is None:
                newest_prerelease = release.version
    latest = latest or newest_local
    return Catalog(
        datasource=ID,
        package_name=package_name,
        releases=tuple(releases),
        latest=latest if latest is not None else newest_prerelease,
        fetched_at=fetched_at,
        time_source=TIME_SOURCE,
        source_url=source_url,
        reused=reused,
    )


def _files_by_release(
    files: list[_File],
    normalised_name: str,
    by_text: Mapping[str, str],
    known: Mapping[Version, str],
) -> tuple[dict[str, list[str]], dict[str, bool], dict[str, str | None]]:
    """What the files say per release (its first spelling), in one pass in page order.

    Returns the upload times present, whether every file is yanked and the Requires-Python
    (``_joined_pythons``), for each release that has a file. The regular wheel and sdist test
    of ``_filename_version_text`` is inlined (a page holds thousands of files); other files go
    through ``_file_version``.
    """
    stamps_of: dict[str, list[str]] = {}
    all_yanked: dict[str, bool] = {}
    canonical = _canonical
    # The Requires-Python values of each release's files that are not yanked, and of all its
    # files (``None``: a file that names none, so admits every Python).
    live_pythons: dict[str, set[str | None]] = {}
    any_pythons: dict[str, set[str | None]] = {}
    wheel_fields = _WHEEL_FIELDS
    for file in files:
        filename = file.filename
        spelling = None
        if filename.endswith(".whl"):
            parts = filename[:-4].split("-")
            if len(parts) in wheel_fields and canonical(parts[0]) == normalised_name:
                spelling = by_text.get(parts[1])
        elif filename.endswith(".tar.gz"):
            name, _, text = filename[:-7].rpartition("-")
            if name and canonical(name) == normalised_name:
                spelling = by_text.get(text)
        if spelling is None:
            version = _file_version(filename, normalised_name, known)
            if version is None:
                continue
            spelling = known[version]
        stamps = stamps_of.get(spelling)
        if stamps is None:
            stamps = stamps_of[spelling] = []
            all_yanked[spelling] = True
        if file.upload_time:
            stamps.append(file.upload_time)
        yanked_flag = file.yanked
        file_yanked = yanked_flag is True or isinstance(yanked_flag, str)
        if all_yanked[spelling]:
            all_yanked[spelling] = file_yanked
        # Whitespace means nothing in a specifier (PEP 440): dropped, the document is smaller.
        python = "".join((file.requires_python or "").split()) or None
        any_pythons.setdefault(spelling, set()).add(python)
        if not file_yanked:
            live_pythons.setdefault(spelling, set()).add(python)
    pythons = {
        spelling: _joined_pythons(live_pythons.get(spelling) or found)
        for spelling, found in any_pythons.items()
    }
    return stamps_of, all_yanked, pythons


def _deltas(times: list[int | None]) -> list[int | None]:
    """Each known time as seconds after the previous known one (the first: after the epoch).

    Unknown times stay ``None`` and are skipped over; ``_undeltas`` is the inverse. Releases in
    version order are mostly in time order too, so the differences are small (weeks, not
    decades: 6-7 digits instead of 10), which the cache's compression rewards.
    """
    out: list[int | None] = []
    previous = 0
    for time in times:
        if time is None:
            out.append(None)
            continue
        out.append(time - previous)
        previous = time
    return out


def _undeltas(deltas: object) -> list[object]:
    """The epoch seconds of ``_deltas``' list; ``TypeError`` when it is not a list.

    A damaged or hostile stored element that is no number stays unknown (``None``) and does not
    move the running time; what the sums give is checked by ``times_from_epochs`` (an absurd
    one leaves its release undated).
    """
    if not isinstance(deltas, list):
        msg = "times: not a list"
        raise TypeError(msg)
    if set(map(type, deltas)) <= {int}:
        # Every element a plain int (a document's usual case): summed in C, no Python loop.
        return list(itertools.accumulate(deltas))
    out: list[object] = []
    previous: float = 0
    for delta in deltas:
        if not isinstance(delta, int | float):
            out.append(None)
            continue
        previous += delta
        out.append(previous)
    return out


def _runs(values: list[str | None]) -> list[list[int | str | None]]:
    """``[[index, value], ...]`` where ``values`` changes (from ``None``), for the document."""
    runs: list[list[int | str | None]] = []
    previous: str | None = None
    for index, value in enumerate(values):
        if value != previous:
            runs.append([index, value])
            previous = value
    return runs


def _from_runs(runs: object, count: int) -> list[str | None]:
    """The ``count`` values of ``_runs``' runs; ``ValueError`` for runs that are not such."""
    if not isinstance(runs, list):
        msg = "requiresPython is not a list"
        raise TypeError(msg)
    values: list[str | None] = []
    value: str | None = None
    for run in runs:
        if (
            not isinstance(run, list)
            or len(run) != 2  # noqa: PLR2004 - [index, value]
            or type(run[0]) is not int
            or not len(values) <= run[0] < count
            or not (run[1] is None or isinstance(run[1], str))
        ):
            msg = f"unusable requiresPython run {run!r:.40}"
            raise ValueError(msg)
        values.extend([value] * (run[0] - len(values)))
        value = run[1]
    values.extend([value] * (count - len(values)))
    return values


def _joined_pythons(found: set[str | None]) -> str | None:
    """One release's Requires-Python from its files' values, as pip sees the release.

    pip installs a release on Python X when one of its candidate files admits X (files that
    are not yanked; all of them for a release whose every file is yanked, which pip still
    installs for a pin, PEP 592): ``None`` when a file names none (every Python), else the
    distinct values sorted and joined by `` || `` (no PEP 440 specifier holds ``|``).
    """
    if None in found:
        return None
    return " || ".join(sorted(value for value in found if value is not None)) or None


def _earliest_epoch(stamps: list[str]) -> int | None:
    """The earliest of ``stamps`` (``upload-time`` values) in whole epoch seconds.

    ``None`` when none can be read. PEP 700 times are RFC 3339 UTC strings: when they share one
    shape (``_one_shape``) the smallest is the earliest and only it is read (a page holds
    thousands of files); otherwise, or when it cannot be read, every one is.
    """
    if not stamps:
        return None
    if _one_shape(stamps):
        found = epoch_seconds(min(stamps))
        if found is not None:
            return found
    return min((e for e in map(epoch_seconds, stamps) if e is not None), default=None)


def _one_shape(stamps: list[str]) -> bool:
    """Whether the smallest of ``stamps`` (not empty) is certainly the earliest.

    True for one stamp, or for stamps of one length that all end in ``Z`` (UTC, as PyPI writes
    them); stamps with offsets (``+05:00``) or of mixed shapes do not sort by time as text.
    """
    first = len(stamps[0])
    return len(stamps) == 1 or all(len(s) == first and s.endswith("Z") for s in stamps)


def _is_json(content_type: str) -> bool:
    media_type = content_type.split(";", 1)[0].strip().lower()
    return media_type == "application/json" or media_type.endswith("+json")


def _file_version(filename: str, project: str, known: Mapping[Version, str]) -> Version | None:
    """Return the known version a file belongs to, or ``None``.

    Wheels and sdists are parsed by ``packaging``; other files (eggs, ``.exe``, ``.tar.bz2`` …)
    and sdists whose name splits ambiguously are matched as ``<name>-<version>`` against the
    known versions, preferring the longest match (``pytz-2014.1.1-py2.7.egg`` is 2014.1.1,
    not 2014.1).
    """
    if has_long_number(filename):
        return None  # no shorter prefix of an unusable version is the file's version
    version = _standard_filename_version(filename, project)
    if version is not None and version in known:
        return version
    for rest in _after_project_name(filename, project):
        for candidate in _version_prefixes(rest):
            version = _parse_version(candidate)
            if version is not None and version in known:
                return version
    return None


def _filename_version_text(filename: str, project: str) -> str | None:
    """Return the version field of a regular wheel or ``.tar.gz`` sdist of ``project``.

    ``{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`` and
    ``{name}-{version}.tar.gz`` (binary distribution and sdist format specifications); the
    text is not validated here. ``None`` for other files or another project's name.
    """
    if filename.endswith(".whl"):
        parts = filename[:-4].split("-")
        if len(parts) in _WHEEL_FIELDS and _canonical(parts[0]) == project:
            return parts[1]
    elif filename.endswith(".tar.gz"):
        name, _, version_text = filename[:-7].rpartition("-")
        if name and _canonical(name) == project:
            return version_text
    return None


def _standard_filename_version(filename: str, project: str) -> Version | None:
    """Return the version in a wheel or sdist filename of ``project``, or ``None``.

    Fast path first (a page holds thousands of files): a wheel is
    ``{name}-{version}(-{build})?-{python}-{abi}-{platform}.whl`` and an sdist
    ``{name}-{version}.tar.gz`` (binary distribution and sdist format specifications); anything
    irregular goes through ``packaging``'s validating parsers.
    """
    text = _filename_version_text(filename, project)
    fast = _parse_version(text) if text is not None else None
    if fast is not None:
        return fast
    if has_long_number(filename):
        return None  # ``packaging`` would raise a bare ValueError past 4,300 digits
    try:
        if filename.endswith(".whl"):
            name, version, _, _ = parse_wheel_filename(filename)
        elif filename.endswith((".tar.gz", ".zip")):
            name, version = parse_sdist_filename(filename)
        else:
            return None
    except (InvalidWheelFilename, InvalidSdistFilename, InvalidVersion):
        return None
    return version if name == project else None


def _after_project_name(filename: str, project: str) -> list[str]:
    """Return what follows ``<name>-`` in ``filename`` (extension removed), for each split.

    A split counts when the part before the dash normalises to ``project``
    (``Acme.Widget-0.9.win32.exe`` → ``0.9.win32`` for ``acme-widget``).
    """
    stem = filename
    for extension in _LEGACY_EXTENSIONS:
        if stem.lower().endswith(extension):
            stem = stem[: -len(extension)]
            break
    return [
        stem[index + 1 :]
        for index, char in enumerate(stem)
        if char == "-" and canonicalize_name(stem[:index]) == project
    ]


def _version_prefixes(rest: str) -> list[str]:
    """Return the prefixes of ``rest`` that end at a ``.``/``-`` boundary, longest first."""
    cuts = [index for index, char in enumerate(rest) if char in ".-"]
    return [rest, *(rest[:index] for index in reversed(cuts) if index > 0)]


def _versions_from_filenames(files: Iterable[_File], project: str) -> list[str]:
    """Return the versions named by the files, for a page without PEP 700 ``versions``.

    Wheels and sdists give theirs; another file gives the longest valid version at the start
    of its first dash-separated field after the name (eggs and ``.exe`` escape dashes).
    """
    found: list[str] = []
    for file in files:
        if has_long_number(file.filename):
            continue  # its version is unusable, and ``5`` of ``5.99…`` is not its version
        version = _standard_filename_version(file.filename, project)
        if version is not None:
            found.append(str(version))
            continue
        for rest in _after_project_name(file.filename, project):
            field = rest.split("-", 1)[0]
            candidate = next(
                (c for c in _version_prefixes(field) if _parse_version(c) is not None), None
            )
            if candidate is not None:
                found.append(candidate)
                break
    return found


@functools.lru_cache(maxsize=65536)
def _canonical(name: str) -> str:
    return canonicalize_name(name)


@functools.lru_cache(maxsize=65536)
def _parse_version(text: str) -> Version | None:
    """The PEP 440 version ``text`` spells, ``None`` when invalid or unusable.

    A number longer than ``MAX_NUMBER_DIGITS`` is unusable, as in ``versioning.pep440``:
    ``packaging`` raises a bare ``ValueError`` past CPython's 4,300-digit ``int()`` limit, which
    would fail the whole project for one bogus entry.
    """
    if has_long_number(text):
        return None
    try:
        return Version(text)
    except InvalidVersion:
        return None


# A release's ``requires_dist`` (``cache warm``): the JSON list of PEP 508 strings as given.
DEPENDENCIES_REPRESENTATION = "pypi-requires-dist-v1"


class _ReleaseInfo(msgspec.Struct, frozen=True):
    requires_dist: list[msgspec.Raw] | None = None


class _Release(msgspec.Struct, frozen=True):
    info: _ReleaseInfo = msgspec.field(default_factory=_ReleaseInfo)


_RELEASE_DECODER = msgspec.json.Decoder(_Release)


def derive_requires_dist(content: bytes) -> bytes:
    """Reduce a JSON API release document to its ``info.requires_dist`` strings (JSON list).

    Raises ``RegistryError`` for a body that is no such document.
    """
    try:
        document = _RELEASE_DECODER.decode(content)
    except (msgspec.DecodeError, RecursionError) as exc:
        msg = f"unusable PyPI release document: {describe_decode_error(exc)}"
        raise RegistryError(msg) from None
    kept: list[str] = []
    for raw in document.info.requires_dist or ():
        try:
            kept.append(msgspec.json.decode(raw, type=str))
        except msgspec.ValidationError:
            continue  # not a string: no requirement
    return orjson.dumps(kept)


def requirements_in_effect(
    requires_dist: Iterable[str], extras: frozenset[str], environment: Mapping[str, str]
) -> list[Declared]:
    """The requirements of ``requires_dist`` whose markers hold, in order, first one per name.

    Markers are evaluated (PEP 508) in ``environment`` (``packaging.markers.
    default_environment()`` for the current platform) with ``extra`` set to each of ``extras``
    and to none: ``foo; extra == "socks"`` counts only when ``socks`` is asked for. An
    unparsable requirement is skipped. Names are PEP 503 normalised.
    """
    from packaging.markers import InvalidMarker, UndefinedComparison  # noqa: PLC0415 - warm only
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415

    found: dict[str, Declared] = {}
    for text in requires_dist:
        try:
            requirement = Requirement(text)
        except InvalidRequirement:
            continue
        marker = requirement.marker
        if marker is not None:
            try:
                holds = any(
                    marker.evaluate({**environment, "extra": extra})
                    for extra in ("", *sorted(extras))
                )
            except (InvalidMarker, UndefinedComparison):
                holds = False
            if not holds:
                continue
        name = canonicalize_name(requirement.name)
        found.setdefault(
            name, Declared(name, str(requirement.specifier), tuple(sorted(requirement.extras)))
        )
    return list(found.values())


async def dependencies(
    fetch: Fetch,
    base_url: str,
    package_name: str,
    version: str,
    *,
    extras: frozenset[str] = frozenset(),
) -> list[Declared]:
    """What ``package_name==version`` requires here, from ``/pypi/<name>/<version>/json``.

    ``requires_dist`` of the JSON API (``pypi/warehouse:docs/user/api/json.md``), markers
    evaluated for the current platform and ``extras`` (``requirements_in_effect``). Raises
    ``PackageNotFound`` on 404/410, ``RegistryError`` otherwise.
    """
    from packaging.markers import default_environment  # noqa: PLC0415 - warm only

    name = quote(canonicalize_name(url_safe_name(package_name)), safe="")
    url = f"{base_url.rstrip('/')}/pypi/{name}/{quote(url_safe_name(version), safe='')}/json"
    response = await fetch(
        url,
        headers={"Accept": "application/json"},
        representation=DEPENDENCIES_REPRESENTATION,
        derive=derive_requires_dist,
    )
    what = f"PyPI project {package_name!r} release {version}"
    check_status(response, what, credential_hint=CREDENTIAL_HINT)
    try:
        requires = msgspec.json.decode(response.content, type=list[str])
    except msgspec.DecodeError:
        msg = f"{what}: unusable stored requirements"
        raise RegistryError(msg) from None
    environment = {k: str(v) for k, v in default_environment().items()}
    return requirements_in_effect(requires, extras, environment)


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning=pep440.ID,
    get_catalog=get_catalog,
    single_document=SingleDocument(request=catalog_request, build=catalog_from),
    release_times=None,  # the catalog document carries every publish time it knows
    get_digest=None,
    platform_digests=None,
    digest_terms=None,
    freshness_floor_representations=(),
    dependencies=dependencies,
)
