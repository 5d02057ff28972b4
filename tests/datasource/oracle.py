"""The decoding the npm and PyPI datasources used before msgspec (pydantic), as a test oracle."""

from __future__ import annotations

from datetime import UTC, datetime

from packaging.utils import canonicalize_name
from packaging.version import InvalidVersion, Version
from pydantic import BaseModel, ConfigDict, Field, JsonValue

from patchula.datasource import npm, pypi
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
    requires_python: str | None = Field(default=None, alias="requires-python")


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


def oracle_pypi_compact(content: bytes, package_name: str) -> dict[str, object]:
    """The ``pypi-project-v3`` document of a PEP 691 page, derived file by file, as it was.

    The pydantic decoding, each file's version found by ``pypi._file_version`` alone (no
    spelling lookup), each release's files gathered in a list, and its earliest upload time,
    yanked flag and Requires-Python (of its files not yanked, else of all: none when one file
    names none) computed from that list (the derivation before its single-pass form; the
    earliest upload time by parsing every one).
    """
    project = OracleProject.model_validate_json(content)
    normalised = canonicalize_name(package_name)
    spellings = project.versions
    if spellings is None:
        spellings = pypi._versions_from_filenames(project.files, normalised)  # type: ignore[arg-type]
    known: dict[Version, str] = {}
    for spelling in spellings:
        try:
            known.setdefault(Version(spelling), spelling)
        except InvalidVersion:
            continue
    files_of: dict[str, list[_OracleFile]] = {}
    for file in project.files:
        version = pypi._file_version(file.filename, normalised, known)
        if version is not None:
            files_of.setdefault(known[version], []).append(file)
    versions: list[str] = []
    times: list[int | None] = []
    yanked: list[str] = []
    no_files: list[str] = []
    pythons: list[str | None] = []
    for _, spelling in sorted(known.items()):
        files = files_of.get(spelling, [])
        live = [f for f in files if not (f.yanked is True or isinstance(f.yanked, str))]
        named = ["".join((f.requires_python or "").split()) for f in live or files]
        pythons.append(None if not named or "" in named else " || ".join(sorted(set(named))))
        stamps = [f.upload_time for f in files if f.upload_time]
        # The definition, not a shortcut: the earliest of the times that can be read.
        earliest = min((t for t in map(parse_time, stamps) if t is not None), default=None)
        versions.append(spelling)
        times.append(int(earliest.timestamp()) if earliest is not None else None)
        if not files:
            no_files.append(spelling)
        elif all(f.yanked is True or isinstance(f.yanked, str) for f in files):
            yanked.append(spelling)
    return {
        "name": normalised,
        "versions": versions,
        # Each known time after the previous known one (the first after the epoch).
        "times": [
            None if t is None else t - next((p for p in reversed(times[:i]) if p is not None), 0)
            for i, t in enumerate(times)
        ],
        "yanked": yanked,
        "noFiles": no_files,
        "requiresPython": [
            [index, value]
            for index, value in enumerate(pythons)
            if value != (pythons[index - 1] if index else None)
        ],
    }
