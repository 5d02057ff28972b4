"""Typed decoding of the real documents in ``benchmarks/data/`` (issue 12 item 3).

The oracle is the decoding the datasources used before msgspec: the same pydantic models,
validated with ``model_validate_json``. The msgspec decoders must give exactly its catalog.
"""

from __future__ import annotations

from datetime import UTC, datetime

import orjson
import pytest

from patchula.datasource import npm, pypi
from tests.datasource.oracle import OracleProject, oracle_npm_catalog, oracle_pypi_compact
from tests.datasource.real import NPM_DOCUMENTS, PYPI_DOCUMENTS, npm_packument, pypi_page

FETCHED_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


@pytest.mark.parametrize("name", NPM_DOCUMENTS)
def test_npm_catalog_equals_the_pydantic_decoding(name: str) -> None:
    """Every real packument gives exactly the catalog the pydantic decoding gave."""
    content = npm_packument(name)
    catalog = npm.parse(content, package_name=name, fetched_at=FETCHED_AT)
    assert catalog == oracle_npm_catalog(content, name, FETCHED_AT)


@pytest.mark.parametrize("name", PYPI_DOCUMENTS)
def test_pypi_page_decodes_like_pydantic(name: str) -> None:
    """Every real PEP 691 page decodes to the same api-version, versions and files as pydantic."""
    content = pypi_page(name)
    oracle = OracleProject.model_validate_json(content)
    decoded = pypi._DECODER.decode(content)
    assert decoded.meta.api_version == oracle.meta.api_version
    assert decoded.versions == oracle.versions
    assert [(f.filename, f.upload_time, f.yanked) for f in decoded.files] == [
        (f.filename, f.upload_time, f.yanked) for f in oracle.files
    ]


@pytest.mark.parametrize("name", PYPI_DOCUMENTS)
def test_pypi_compact_document_equals_the_file_by_file_derivation(name: str) -> None:
    """Every real page gives exactly the compact document of the file-by-file derivation."""
    content = pypi_page(name)
    assert orjson.loads(pypi.derive(content, package_name=name)) == oracle_pypi_compact(
        content, name
    )


def test_real_typescript_catalog_values() -> None:
    """The typescript packument: 3,478 releases, its latest tag and aware first publish time."""
    catalog = npm.parse(
        npm_packument("typescript"), package_name="typescript", fetched_at=FETCHED_AT
    )
    assert len(catalog.releases) == 3478
    assert catalog.latest == "7.0.2"
    first = catalog.releases[0]
    assert first.version == "0.8.0"
    assert first.released_at is not None
    assert first.released_at.tzinfo is UTC


def test_real_react_deprecated_false_is_not_deprecated() -> None:
    """React's five ``"deprecated": false`` manifests (0.14.10 …) are not deprecated."""
    catalog = npm.parse(npm_packument("react"), package_name="react", fetched_at=FETCHED_AT)
    assert catalog.release("15.7.0") is not None
    assert [r.version for r in catalog.releases if r.deprecated is not None] == []
    assert catalog.latest == "19.3.1"


def test_real_pypi_catalog_values() -> None:
    """The numpy page gives its releases with upload times; latest is a stable release."""
    catalog = pypi.parse(pypi_page("numpy"), package_name="numpy", fetched_at=FETCHED_AT)
    assert len(catalog.releases) > 100
    assert catalog.latest is not None
    assert all(r.released_at is not None for r in catalog.releases if r.installable)
