"""The node, python and go datasources: trimmed real payloads in, catalogs out, bad ones refused."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pytest

from patchula.datasource import go, node, python
from patchula.errors import RegistryError
from patchula.models import FetchResponse

FIXTURES = Path(__file__).parents[1] / "fixtures" / "registry"
FETCHED = datetime(2025, 1, 1, tzinfo=UTC)


def test_node_index_versions_dates_and_lts_aliases() -> None:
    """index.json: v dropped, day dates, latest the newest release, LTS lines as aliases."""
    catalog = node.parse(
        (FIXTURES / "node" / "index.json").read_bytes(), package_name="node", fetched_at=FETCHED
    )
    assert [r.version for r in catalog.releases][:3] == ["18.20.5", "20.8.1", "20.9.0"]
    assert catalog.latest == "23.4.0"
    assert catalog.release("22.12.0").released_at == datetime(2024, 12, 3, tzinfo=UTC)  # type: ignore[union-attr]
    assert dict(catalog.dist_tags) == {
        "latest": "23.4.0",
        "lts": "22.12.0",
        "lts/hydrogen": "18.20.5",
        "lts/iron": "20.18.1",
        "lts/jod": "22.12.0",
    }


def test_node_flags_only_majors_without_lts_releases_unstable() -> None:
    """Only releases of a major with no LTS release are flagged, as Renovate's node versioning.

    22.10.0 (``lts: false``, before 22.11.0 "Jod") is of the LTS line 22; 23.x and 24.0.0 (no
    LTS release of their major yet) are flagged unstable.
    """
    body = (
        b'[{"version":"v24.0.0","date":"2025-05-06","lts":false},'
        b'{"version":"v23.4.0","date":"2024-12-10","lts":false},'
        b'{"version":"v22.11.0","date":"2024-10-29","lts":"Jod"},'
        b'{"version":"v22.10.0","date":"2024-10-16","lts":false}]'
    )
    catalog = node.parse(body, package_name="node", fetched_at=FETCHED)
    assert [(r.version, r.prerelease) for r in catalog.releases] == [
        ("22.10.0", False),
        ("22.11.0", False),
        ("23.4.0", True),
        ("24.0.0", True),
    ]


def test_node_request_is_the_raw_index_under_the_mirror() -> None:
    """One GET of {base}/index.json, stored raw (the small index, under the body budget)."""
    request = node.catalog_request("https://mirror.example/dist/", "node")
    assert (request.url, request.representation, request.derive) == (
        "https://mirror.example/dist/index.json",
        "raw",
        None,
    )


def test_python_org_releases_prereleases_and_unpublished() -> None:
    """Names become versions; pre_release marks prereleases; unpublished, non-CPython left out."""
    compact = python.derive(
        (FIXTURES / "python" / "release.json").read_bytes(), package_name="python"
    )
    catalog = python.parse_compact(compact, package_name="python", fetched_at=FETCHED)
    assert [(r.version, r.prerelease) for r in catalog.releases] == [
        ("3.7.9", False),
        ("3.12.0a1", True),
        ("3.12.0", False),
        ("3.12.2", False),
    ]
    assert catalog.latest == "3.12.2"
    assert catalog.release("3.12.0").released_at == datetime(2023, 10, 2, 12, 50, 9, tzinfo=UTC)  # type: ignore[union-attr]
    request = python.catalog_request("https://www.python.org", "python")
    assert request.url == "https://www.python.org/api/v2/downloads/release/?is_published=true"


def test_go_dev_versions_without_dates() -> None:
    """Go prefix dropped; stable false is a prerelease; no release has an invented date."""
    compact = go.derive((FIXTURES / "go" / "dl.json").read_bytes(), package_name="go")
    catalog = go.parse_compact(compact, package_name="go", fetched_at=FETCHED)
    assert [(r.version, r.prerelease) for r in catalog.releases] == [
        ("1.9.2rc2", True),
        ("1.20", False),
        ("1.21.0", False),
        ("1.22.10", False),
        ("1.23.4", False),
        ("1.24rc1", True),
    ]
    assert catalog.latest == "1.23.4"
    assert all(r.released_at is None for r in catalog.releases)
    assert len(compact) < (FIXTURES / "go" / "dl.json").stat().st_size  # files lists dropped


@pytest.mark.parametrize(
    "body",
    [
        b"",
        b"{}",
        b"[]",
        b'[{"version": 3}]',
        b"[" * 100_000,
        b'"x"',
        b'[{"version":"v9' + b"9" * 5000 + b'"}]',
    ],
)
def test_unusable_bodies_are_registry_errors(body: bytes) -> None:
    """A body that is not an array of releases is a RegistryError (an error row), never a crash."""
    with pytest.raises(RegistryError):
        node.parse(body, package_name="node", fetched_at=FETCHED)
    with pytest.raises(RegistryError):
        python.derive(body, package_name="python")
    with pytest.raises(RegistryError):
        go.derive(body, package_name="go")


def test_an_http_error_is_a_registry_error() -> None:
    """A 500 from the index names what failed."""
    response = FetchResponse(500, "https://nodejs.org/dist/index.json", (), b"", FETCHED)
    with pytest.raises(RegistryError, match=r"the Node\.js release index"):
        node.catalog_from(response, "node", response.url)
