"""The decoding the npm and PyPI datasources used before msgspec (pydantic), as a test oracle."""

from __future__ import annotations

from datetime import UTC, datetime

from pydantic import BaseModel, ConfigDict, Field, JsonValue

from patchula.datasource import npm
from patchula.datasource.base import parse_time
from patchula.models import Catalog, Release
from patchula.versioning import npm as npm_versioning


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


class OracleProject(BaseModel):
    """A PEP 691 project page as the pydantic decoding read it."""

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


def oracle_npm_catalog(content: bytes, package_name: str, fetched_at: datetime) -> Catalog:
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
        fetched_at=fetched_at,
        dist_tags=tuple(sorted(packument.dist_tags.items())),
        time_source=npm.TIME_SOURCE,
    )
