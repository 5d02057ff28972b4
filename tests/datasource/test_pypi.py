"""The PyPI datasource: JSON Simple API request, filename versions, yanks, dates and latest."""

from __future__ import annotations

import json
import random
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING

import httpx
import orjson
import pytest
import respx
from packaging.version import Version

from patchula.datasource import pypi
from patchula.errors import PackageNotFound, RegistryError
from patchula.models import Catalog, Derive, FetchResponse, Release

if TYPE_CHECKING:
    from collections.abc import Iterator, Mapping

    from patchula.datasource.base import Fetch
from tests.datasource.base import httpx_fetch
from tests.datasource.oracle import oracle_pypi_compact

FIXTURES = Path(__file__).parent.parent / "fixtures" / "registry" / "pypi"
FETCHED_AT = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
BASE = pypi.DEFAULT_BASE_URL
SIMPLE_JSON = "application/vnd.pypi.simple.v1+json"


def _fixture(name: str) -> bytes:
    return (FIXTURES / name).read_bytes()


def _parse(content: bytes, package_name: str = "acme-widget") -> Catalog:
    return pypi.parse(content, package_name=package_name, fetched_at=FETCHED_AT)


def _utc(
    year: int, month: int, day: int, hour: int = 0, minute: int = 0, second: int = 0, micro: int = 0
) -> datetime:
    # Compact documents keep whole seconds: sub-second parts do not change a release age.
    del micro
    return datetime(year, month, day, hour, minute, second, tzinfo=UTC)


def _httpx_fetch(client: httpx.AsyncClient) -> Fetch:
    return httpx_fetch(client, FETCHED_AT)


class _FakeFetch:
    """A fetch facade that answers every URL with one canned response and records requests."""

    def __init__(self, content: bytes, headers: tuple[tuple[str, str], ...]) -> None:
        self.content = content
        self.headers = headers
        self.requests: list[tuple[str, dict[str, str]]] = []

    async def __call__(
        self,
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        representation: str = "raw",  # noqa: ARG002 - no cache here
        derive: Derive | None = None,
    ) -> FetchResponse:
        self.requests.append((url, dict(headers or {})))
        content = derive(self.content) if derive is not None else self.content
        return FetchResponse(200, url, self.headers, content, FETCHED_AT)


@pytest.fixture
def registry() -> Iterator[respx.MockRouter]:
    """Mock the registry; unmatched requests and unused routes fail the test."""
    with respx.mock(base_url=BASE, assert_all_mocked=True, assert_all_called=True) as router:
        yield router


@pytest.mark.anyio
async def test_requests_normalised_name_with_json_accept(registry: respx.MockRouter) -> None:
    """The project page is fetched at ``/simple/<normalised>/`` asking for the v1 JSON form."""
    route = registry.get("/simple/django/").respond(
        200, content=_fixture("django.json"), headers={"content-type": SIMPLE_JSON}
    )
    async with httpx.AsyncClient() as client:
        catalog = await pypi.get_catalog(_httpx_fetch(client), BASE, "Django")
    assert route.calls.last.request.headers["accept"] == SIMPLE_JSON
    assert catalog.source_url == "https://pypi.org/simple/django/"
    assert catalog.fetched_at == FETCHED_AT
    assert catalog.datasource == "pypi"
    assert catalog.package_name == "Django"
    assert catalog.latest == "5.0.4"


@pytest.mark.parametrize(
    ("base_url", "name", "url"),
    [
        (BASE, "Foo__Bar.baz", "https://pypi.org/simple/foo-bar-baz/"),
        (BASE + "/", "requests", "https://pypi.org/simple/requests/"),
        (
            "https://mirror.example/pypi",
            "Zope.Interface",
            "https://mirror.example/pypi/simple/zope-interface/",
        ),
    ],
)
def test_project_url(base_url: str, name: str, url: str) -> None:
    """The URL carries the PEP 503 normalised name and the trailing slash PyPI expects."""
    assert pypi.project_url(base_url, name) == url


@pytest.mark.anyio
@pytest.mark.parametrize("status", [404, 410])
async def test_missing_project(registry: respx.MockRouter, status: int) -> None:
    """A 404 or 410 answer means the project does not exist."""
    registry.get("/simple/nope/").respond(status, text="Not Found")
    async with httpx.AsyncClient() as client:
        with pytest.raises(PackageNotFound, match="PyPI project 'nope' not found"):
            await pypi.get_catalog(_httpx_fetch(client), BASE, "nope")


@pytest.mark.anyio
async def test_server_error(registry: respx.MockRouter) -> None:
    """A 5xx answer is a registry error naming the status."""
    registry.get("/simple/django/").respond(503, text="unavailable")
    async with httpx.AsyncClient() as client:
        with pytest.raises(RegistryError, match="HTTP 503"):
            await pypi.get_catalog(_httpx_fetch(client), BASE, "django")


@pytest.mark.anyio
async def test_html_answer_is_refused(registry: respx.MockRouter) -> None:
    """A mirror answering the HTML form instead of PEP 691 JSON is a registry error."""
    registry.get("/simple/acme-widget/").respond(
        200, content=_fixture("simple.html"), headers={"content-type": "text/html; charset=utf-8"}
    )
    async with httpx.AsyncClient() as client:
        with pytest.raises(RegistryError, match="mirror did not serve the PEP 691 JSON form"):
            await pypi.get_catalog(_httpx_fetch(client), BASE, "acme-widget")


@pytest.mark.anyio
@pytest.mark.parametrize(
    "headers",
    [
        (("content-type", SIMPLE_JSON),),
        (("content-type", "application/vnd.pypi.simple.latest+json"),),
        (("content-type", "application/json; charset=utf-8"),),
        (),
    ],
)
async def test_json_answers_are_accepted(headers: tuple[tuple[str, str], ...]) -> None:
    """Any JSON media type is parsed, and so is a body whose Content-Type is not given."""
    fetch = _FakeFetch(_fixture("django.json"), headers)
    catalog = await pypi.get_catalog(fetch, "https://mirror.example/", "django")
    assert fetch.requests == [
        ("https://mirror.example/simple/django/", {"Accept": SIMPLE_JSON}),
    ]
    assert catalog.latest == "5.0.4"


def test_real_django_page() -> None:
    """A trimmed real page gives PEP 440-sorted releases with yanks and fileless versions."""
    catalog = _parse(_fixture("django.json"), "django")
    assert catalog.releases == (
        Release("1.0.1", None, installable=False),
        Release("1.10a1", _utc(2016, 5, 20, 12, 16, 44, 951411)),
        Release("1.10", _utc(2016, 8, 1, 18, 32, 7, 351674)),
        Release("4.2.11", _utc(2024, 3, 4, 8, 56, 53, 184104), requires_python=">=3.8"),
        Release(
            "4.2.12", _utc(2024, 5, 6, 16, 41, 14, 599163), yanked=True, requires_python=">=3.8"
        ),
        Release("5.0.4", _utc(2024, 4, 3, 14, 56, 56, 206912), requires_python=">=3.10"),
        Release(
            "5.0.5", _utc(2024, 5, 6, 16, 46, 37, 863615), yanked=True, requires_python=">=3.10"
        ),
    )
    assert catalog.latest == "5.0.4"
    assert catalog.time_source == "PyPI upload-time (PEP 700)"
    assert catalog.dist_tags == ()


def test_real_pytz_page_with_legacy_files() -> None:
    """Legacy ``.tar.bz2``/``.zip``/``.egg`` files date their versions; invalid versions drop."""
    catalog = _parse(_fixture("pytz.json"), "pytz")
    assert [(r.version, r.released_at) for r in catalog.releases] == [
        ("2005r", _utc(2005, 12, 31, 9, 58, 54)),
        ("2013.7", _utc(2013, 10, 2, 4, 28, 31, 673258)),
        ("2014.1", _utc(2014, 3, 14, 9, 1, 48, 372879)),
        ("2014.1.1", _utc(2014, 3, 21, 6, 33, 8, 616119)),
        ("2026.6", _utc(2026, 10, 29, 9, 5, 45)),
    ]
    assert catalog.release("2005k") is None
    assert catalog.latest == "2026.6"


@pytest.mark.parametrize(
    ("filename", "expected"),
    [
        ("pytz-2014.1.1-py2.7.egg", "2014.1.1"),
        ("pytz-2014.1-py2.7.egg", "2014.1"),
        ("pytz-2014.1.1.tar.bz2", "2014.1.1"),
        ("pytz-2014.1.zip", "2014.1"),
        ("pytz-2005r.tar.bz2", "2005r"),
        ("pytz-2026.6-py2.py3-none-any.whl", "2026.6"),
        ("Django-1.10.tar.gz", "1.10"),
        ("acme-widget-0.9.win32-py2.7.exe", "0.9"),
        ("acme-widget-0.9.win-amd64.msi", "0.9"),
        ("Acme.Widget-0.9.tar.bz2", "0.9"),
        ("acme_widget-0.9.0-py2.7.egg", "0.9"),
        ("pytz-2005k.tar.bz2", None),
        ("other-2014.1.tar.gz", None),
        ("pytz-9.9.tar.gz", None),
        ("README.txt", None),
    ],
)
def test_file_version(filename: str, expected: str | None) -> None:
    """A filename's version is matched against the known versions, longest match first."""
    known = {Version(v): v for v in ["0.9", "1.10", "2005r", "2014.1", "2014.1.1", "2026.6"]}
    project = "acme-widget" if "cme" in filename else "django" if "Django" in filename else "pytz"
    version = pypi._file_version(filename, project, known)
    assert (known[version] if version is not None else None) == expected


def test_earliest_upload_time_across_files() -> None:
    """A release is dated by its earliest file, whatever the file kind or list order."""
    catalog = _parse(_fixture("acme-widget.json"))
    assert catalog.release("0.9") == Release("0.9", _utc(2019, 3, 2, 10, 0, 1))
    assert catalog.release("1.0") == Release(
        "1.0", _utc(2024, 12, 2, 16, 40, 5, 551201), requires_python=">=3.8"
    )


@pytest.mark.parametrize(
    "stamps",
    [
        # Same length, different offsets: the smallest text is not the earliest time.
        ("2020-01-01T08:00:00+00:00", "2020-01-01T10:00:00+05:00"),
        # The smallest text cannot be read; the others still date the release.
        ("2020-01-01T05:00:00Z", "1999-99-99T99:99:99Z"),
    ],
)
def test_the_earliest_upload_is_the_earliest_time_not_the_smallest_text(
    stamps: tuple[str, str],
) -> None:
    """A release is dated by its earliest readable upload time, whatever the offsets."""
    files = [
        {
            "filename": f"acme_widget-1.0-py3-none-any{i}.whl".replace("any0", "any"),
            "url": f"https://files.example/{i}",
            "hashes": {},
            "upload-time": stamp,
        }
        for i, stamp in enumerate(stamps)
    ]
    files[1]["filename"] = "acme_widget-1.0.tar.gz"
    page = {
        "meta": {"api-version": "1.1"},
        "name": "acme-widget",
        "versions": ["1.0"],
        "files": files,
    }
    catalog = _parse(json.dumps(page).encode())
    assert catalog.release("1.0") == Release("1.0", _utc(2020, 1, 1, 5))


def test_partially_yanked_release_is_not_yanked() -> None:
    """A release with one yanked wheel and a good sdist is still installable and not yanked."""
    catalog = _parse(_fixture("acme-widget.json"))
    assert catalog.release("1.1") == Release("1.1", _utc(2025, 1, 10, 9, 0), yanked=False)


def test_fully_yanked_release_is_yanked() -> None:
    """A release whose files are all yanked (``true`` or a reason) is yanked."""
    catalog = _parse(_fixture("acme-widget.json"))
    assert catalog.release("1.4") == Release("1.4", _utc(2025, 4, 1, 12, 0), yanked=True)


def test_release_without_files_is_not_installable() -> None:
    """A version listed without files is kept, not installable, undated and not yanked."""
    catalog = _parse(_fixture("acme-widget.json"))
    assert catalog.release("1.3") == Release("1.3", None, yanked=False, installable=False)


def test_files_without_upload_time_leave_the_date_unknown() -> None:
    """When no file of a release has an upload time, its publish time is unknown."""
    catalog = _parse(_fixture("acme-widget.json"))
    assert catalog.release("1.2") == Release("1.2", None)


def test_latest_skips_yanked_fileless_and_prereleases() -> None:
    """``latest`` is the newest final release that is installable and not yanked."""
    catalog = _parse(_fixture("acme-widget.json"))
    assert [r.version for r in catalog.releases] == [
        "0.9",
        "1.0",
        "1.1",
        "1.2",
        "1.3",
        "1.4",
        "2.0rc1",
    ]
    assert catalog.latest == "1.2"


def test_only_prereleases_latest_is_the_newest_prerelease() -> None:
    """A project with only pre and dev releases: ``latest`` is the newest of them.

    pip installs a prerelease when no final release exists (PEP 440, "Handling of
    pre-releases"), so that is the newest release a user can get.
    """
    catalog = _parse(_fixture("only-prereleases.json"), "acme-next")
    assert [r.version for r in catalog.releases] == ["0.1.dev3", "0.1a1", "0.1b1"]
    assert catalog.latest == "0.1b1"


def test_only_prereleases_latest_skips_yanked_and_fileless() -> None:
    """The prerelease fallback skips yanked and file-less prereleases like the final rule."""
    document = {
        "meta": {"api-version": "1.1"},
        "name": "acme-next",
        "versions": ["0.1a1", "0.1b1", "0.1rc1"],
        "files": [
            {
                "filename": f"acme_next-{version}-py3-none-any.whl",
                "url": f"https://files.example/acme_next-{version}-py3-none-any.whl",
                "hashes": {"sha256": "01"},
                "upload-time": "2025-01-01T00:00:00Z",
                "yanked": version == "0.1b1",
            }
            for version in ("0.1a1", "0.1b1")
        ],
    }
    catalog = _parse(json.dumps(document).encode(), "acme-next")
    assert catalog.latest == "0.1a1"


def test_versions_derived_from_filenames_without_pep700() -> None:
    """An api-version 1.0 page without ``versions`` has its versions read from the file names."""
    catalog = _parse(_fixture("api-1.0-no-versions.json"))
    assert catalog.releases == (
        Release("0.8", _utc(2018, 5, 1)),
        Release("0.9", _utc(2019, 3, 2, 10, 0, 5)),
        Release("1.0", None),
        Release("1.1", None, yanked=True),
    )
    assert catalog.latest == "1.0"


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (_fixture("api-2.0.json"), "unsupported Simple API version '2.0'"),
        (_fixture("no-meta.json"), "Field required at meta"),
        (b'{"meta": {"api-version": "1.1"}, "files": [{"filename": 7}]}', "at files.0.filename"),
        (b'{"meta": {"api-version": "1.1"}, "versions": ["1.0"], "files": [', "Invalid JSON"),
        (_fixture("simple.html"), "did not serve the PEP 691 JSON form"),
    ],
)
def test_unusable_page(content: bytes, reason: str) -> None:
    """A page of another major version, without meta, or not JSON is a registry error."""
    with pytest.raises(RegistryError, match=reason) as caught:
        _parse(content)
    assert caught.value.reason.startswith("PyPI project 'acme-widget': ")
    assert len(caught.value.reason) < 300


@pytest.mark.parametrize(
    ("content", "reason"),
    [
        (b'{"meta": {}}', "Field required at meta.api-version"),
        (b'{"meta": {"api-version": 1.1}}', "Expected str, got float at meta.api-version"),
        (
            b'{"meta": {"api-version": "1.1"}, "files": [{"filename": "a-1.tgz", "yanked": null}]}',
            "Expected bool | str, got null at files.0.yanked",
        ),
        (b'{"meta": {"api-version": "1.1"}, "versions": "1.0"}', "at versions"),
        (
            b'{"meta": {"api-version": "1.1"}, "x": ' + b"[" * 50_000 + b"]" * 50_000 + b"}",
            "recursion",
        ),
    ],
    ids=["no-api-version", "api-version-number", "yanked-null", "versions-string", "deep"],
)
def test_hostile_pages_are_registry_errors(content: bytes, reason: str) -> None:
    """Wrong types and nesting past the decoder's limit are short errors naming the place."""
    with pytest.raises(RegistryError) as caught:
        _parse(content)
    assert reason in caught.value.reason
    assert caught.value.reason.startswith("PyPI project 'acme-widget': unusable Simple API page (")
    assert len(caught.value.reason) < 300


def test_unread_fields_with_huge_numbers_are_skipped() -> None:
    """A 5,000-digit ``size`` (a field the scan never reads) does not make the page unusable."""
    huge = b"9" * 5000
    content = (
        b'{"meta": {"api-version": "1.1"}, "versions": ["1.0"], "files": [{"filename":'
        b' "acme_widget-1.0.tar.gz", "size": ' + huge + b', "upload-time": "2020-01-01T00:00Z"}]}'
    )
    assert _parse(content).releases == (Release("1.0", _utc(2020, 1, 1)),)


@pytest.mark.parametrize("digits", [200, 4000, 5000])
@pytest.mark.parametrize("listed", [True, False], ids=["versions", "filenames"])
def test_a_version_with_a_huge_number_is_dropped(digits: int, *, listed: bool) -> None:
    """``5.<digits nines>`` in ``versions`` or only in file names is dropped, never an error."""
    huge = "5." + "9" * digits
    names = ["1.0", "2.0", huge]
    files = [
        {"filename": f"acme_widget-{v}{ext}", "upload-time": "2020-01-01T00:00:00Z"}
        for v in names
        for ext in (".tar.gz", "-py3-none-any.whl", ".zip", "-py2.7.egg")
    ]
    page: dict[str, object] = {"meta": {"api-version": "1.1"}, "files": files}
    if listed:
        page["versions"] = names
    catalog = _parse(json.dumps(page).encode())
    # Not ``5`` either: a shorter prefix of the egg's version is not its version.
    assert [r.version for r in catalog.releases] == ["1.0", "2.0"]
    assert catalog.latest == "2.0"


def _random_page(rng: random.Random) -> tuple[bytes, str]:
    """A PEP 691 page of odd but valid shapes: spellings, file kinds, times and yanks mixed."""
    name = rng.choice(["acme-widget", "Acme.Widget", "acme_widget"])
    stem = rng.choice(["acme_widget", "Acme.Widget", "acme-widget", "ACME_widget"])
    listed = ["0.9", "1.0", "1.0.0", "1.1", "1.2rc1", "2.0.post1", "2005r", "3!1.0", "1.10"]
    versions = rng.sample(listed, rng.randint(0, len(listed)))
    stamps = [
        None,
        "",
        "2024-01-02T03:04:05Z",
        "2024-01-02T03:04:05.123456Z",
        "2023-12-31T23:00:00+02:00",
        "2024-05-06T07:08:09",
        "2024-05-06 07:08:09.5",
        "2024-01-02T03:04:05+09:00",  # earlier than the next one, though a larger string
        "2024-01-02T00:00:00Z",
        "1999-99-99T00:00:00Z",  # the smallest string of its shape, and no time
        "not a time",
    ]
    files = []
    for _ in range(rng.randint(0, 14)):
        version = rng.choice([*listed, "9.9", "1.0.0.0"])
        kind = rng.randrange(6)
        if kind == 0:
            filename = f"{stem}-{version}-py3-none-any.whl"
        elif kind == 1:
            filename = f"{stem}-{version}-1build-cp311-cp311-linux_x86_64.whl"
        elif kind == 2:
            filename = f"{stem}-{version}.tar.gz"
        elif kind == 3:
            filename = f"{stem}-{version}.zip"
        elif kind == 4:
            filename = f"{stem}-{version}-py2.7.egg"
        else:
            filename = f"other_project-{version}.tar.gz"
        entry: dict[str, object] = {"filename": filename, "url": "", "hashes": {}}
        stamp = rng.choice(stamps)
        if stamp is not None:
            entry["upload-time"] = stamp
        entry["yanked"] = rng.choice([False, False, True, "broken"])
        if rng.random() < 0.6:
            entry["requires-python"] = rng.choice([">=3.8", ">=3.9", ">=3.8", "", " "])
        files.append(entry)
    page: dict[str, object] = {"meta": {"api-version": "1.1"}, "name": name, "files": files}
    if rng.random() < 0.8:
        page["versions"] = versions
    return json.dumps(page).encode(), name


def test_compact_document_equals_the_file_by_file_derivation() -> None:
    """The single-pass ``derive`` writes exactly the document of the file-by-file derivation."""
    rng = random.Random(691)  # noqa: S311 - reproducible test input, not a secret
    for _ in range(1500):
        content, name = _random_page(rng)
        assert orjson.loads(pypi.derive(content, package_name=name)) == oracle_pypi_compact(
            content, name
        ), content


def test_a_releases_requires_python_is_what_pip_sees_of_its_files() -> None:
    """Its files not yanked decide; all of them when every one is; a file naming none: any."""

    def file(name: str, python: str | None, *, yanked: bool = False) -> dict[str, object]:
        entry: dict[str, object] = {"filename": name, "url": "", "hashes": {}, "yanked": yanked}
        if python is not None:
            entry["requires-python"] = python
        return entry

    page = {
        "meta": {"api-version": "1.1"},
        "name": "zipp",
        "versions": ["1.0", "2.0", "3.0", "4.0"],
        "files": [
            file("zipp-1.0.tar.gz", ">=3.7"),
            file("zipp-1.0-py3-none-any.whl", ">=3.9", yanked=True),
            file("zipp-2.0.tar.gz", ">=3.8", yanked=True),
            file("zipp-2.0-py3-none-any.whl", ">=3.9", yanked=True),
            file("zipp-3.0.tar.gz", None),
            file("zipp-3.0-py3-none-any.whl", ">=3.9"),
            file("zipp-4.0.tar.gz", ">=3.10 "),
            file("zipp-4.0-py3-none-any.whl", ">=3.10"),
        ],
    }
    document = orjson.loads(pypi.derive(json.dumps(page).encode(), package_name="zipp"))
    assert document["requiresPython"] == [
        [0, ">=3.7"],
        [1, ">=3.8 || >=3.9"],
        [2, None],
        [3, ">=3.10"],
    ]
    catalog = _parse(json.dumps(page).encode(), "zipp")
    assert [r.requires_python for r in catalog.releases] == [
        ">=3.7",
        ">=3.8 || >=3.9",
        None,
        ">=3.10",
    ]
    assert pypi.REPRESENTATION == "pypi-project-v3"


def test_times_are_stored_as_differences_and_read_back_as_epochs() -> None:
    """The compact document keeps each known time after the previous known one; unknown stay."""
    epochs = [1_600_000_000, None, 1_600_604_800, 1_500_000_000, None]
    assert pypi._deltas(epochs) == [1_600_000_000, None, 604_800, -100_604_800, None]
    assert pypi._undeltas(pypi._deltas(epochs)) == epochs
    assert pypi._undeltas([]) == []
    assert pypi._undeltas([1, "2", 3]) == [1, None, 4]  # a damaged element stays unknown
    with pytest.raises(TypeError):
        pypi._undeltas({"a": 1})
