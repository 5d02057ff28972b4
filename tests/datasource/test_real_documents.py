"""Typed decoding of the real documents in ``benchmarks/data/`` (issue 12 item 3).

The oracle is the decoding the datasources used before msgspec: the same pydantic models,
validated with ``model_validate_json``. The msgspec decoders must give exactly its catalog.
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from patchula.datasource import npm, pypi
from patchula.datasource.base import parse_time
from patchula.models import Catalog, Release
from patchula.versioning import npm as npm_versioning
from tests.datasource.real import NPM_DOCUMENTS, PYPI_DOCUMENTS, npm_packument, pypi_page

FETCHED_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


class _OracleVersion(BaseModel):
    model_config = ConfigDict(frozen=True)

    deprecated: JsonValue = None


class _OraclePackument(BaseModel):
    model_config = ConfigDict(frozen=True)

    name: str | None = None
    dist_tags: dict[str, str] = Field(default_factory=dict, alias="dist-tags")
    versions: dict[str, _OracleVersion] = Field(default_factory=dict)
    time: dict[str, JsonValue] = Field(default_factory=dict)


class _OracleMeta(BaseModel):
    model_config = ConfigDict(frozen=True)

    api_version: str = Field(alias="api-version")


class _OracleFile(BaseModel):
    model_config = ConfigDict(frozen=True)

    filename: str
    upload_time: str | None = Field(default=None, alias="upload-time")
    yanked: bool | str = False


class _OracleProject(BaseModel):
    model_config = ConfigDict(frozen=True)

    meta: _OracleMeta
    versions: list[str] | None = None
    files: list[_OracleFile] = Field(default_factory=list)


def _oracle_deprecation(value: JsonValue) -> str | None:
    if value is None or value is False:
        return None
    if isinstance(value, str):
        return value if value.strip() else None
    return "deprecated"


def _whole_seconds(value: JsonValue) -> datetime | None:
    when = parse_time(value)
    return datetime.fromtimestamp(int(when.timestamp()), UTC) if when is not None else None


def _oracle_npm_catalog(content: bytes, package_name: str) -> Catalog:
    """The npm catalog as the pydantic decoding built it (publish times in whole seconds)."""
    packument = _OraclePackument.model_validate_json(content)
    releases = [
        Release(
            version,
            _whole_seconds(packument.time.get(version)),
            False,  # noqa: FBT003 - the positional shape of Release
            _oracle_deprecation(manifest.deprecated),
        )
        for version, manifest in packument.versions.items()
        if npm_versioning.is_valid(version)
    ]
    releases.sort(key=lambda release: npm_versioning.sort_key(release.version))
    return Catalog(
        datasource="npm",
        package_name=package_name,
        releases=tuple(releases),
        latest=packument.dist_tags.get("latest"),
        fetched_at=FETCHED_AT,
        dist_tags=tuple(sorted(packument.dist_tags.items())),
        time_source=npm.TIME_SOURCE,
    )


@pytest.mark.parametrize("name", NPM_DOCUMENTS)
def test_npm_catalog_equals_the_pydantic_decoding(name: str) -> None:
    """Every real packument gives exactly the catalog the pydantic decoding gave."""
    content = npm_packument(name)
    catalog = npm.parse(content, package_name=name, fetched_at=FETCHED_AT)
    assert catalog == _oracle_npm_catalog(content, name)


@pytest.mark.parametrize("name", PYPI_DOCUMENTS)
def test_pypi_page_decodes_like_pydantic(name: str) -> None:
    """Every real PEP 691 page decodes to the same api-version, versions and files as pydantic."""
    content = pypi_page(name)
    oracle = _OracleProject.model_validate_json(content)
    decoded = pypi._DECODER.decode(content)
    assert decoded.meta.api_version == oracle.meta.api_version
    assert decoded.versions == oracle.versions
    assert [(f.filename, f.upload_time, f.yanked) for f in decoded.files] == [
        (f.filename, f.upload_time, f.yanked) for f in oracle.files
    ]


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
