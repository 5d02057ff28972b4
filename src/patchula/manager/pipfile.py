"""The ``Pipfile`` manager (pipenv): ``[packages]``, ``[dev-packages]`` and custom categories."""

from __future__ import annotations

import re
from collections.abc import Callable

from msgspec.structs import replace
from packaging.markers import InvalidMarker, Marker
from packaging.specifiers import InvalidSpecifier, SpecifierSet
from packaging.utils import canonicalize_name

from patchula.manager import paths
from patchula.manager.base import (
    ReadFile,
    TomlLocator,
    index_not_used,
    is_pypi_url,
    parse_toml,
    strip_bom,
    url_skip_reason,
)
from patchula.models import Dependency, ExtractResult, ManifestProblem

ID = "pipfile"
DATASOURCE = "pypi"
matches = paths.pipfile  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "pep440"

# Top-level tables of a Pipfile that are not package categories; every other table is one
# (https://pipenv.pypa.io/en/latest/pipfile.html, "Package Category Groups").
_NOT_CATEGORIES = frozenset({"source", "requires", "scripts", "pipenv"})
_PEP440_OPERATORS = ("===", "==", "!=", "~=", ">=", "<=", ">", "<")
# Package keys that take it off the index (pipenv's VCS and file requirements).
_VCS_KEYS = ("git", "hg", "svn", "bzr")
# PEP 508 environment markers pipenv accepts as keys of a package table, beside `markers`.
_MARKER_KEYS = (
    "os_name",
    "sys_platform",
    "platform_machine",
    "platform_python_implementation",
    "platform_release",
    "platform_system",
    "platform_version",
    "python_version",
    "python_full_version",
    "implementation_name",
    "implementation_version",
)
_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
# A package key may carry PEP 508 extras, ``"splinter[django]" = "*"``: pipenv writes the key
# into the pip requirement it installs (``requests[socks]==2.31``), so pip reads them.
_KEY = re.compile(r"(?P<name>[^\[\]\s]+)\s*(?:\[(?P<extras>[^\[\]]*)\])?")


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the packages of a ``Pipfile`` (TOML, https://pipenv.pypa.io/en/latest/pipfile.html).

    Every package of ``[packages]``, ``[dev-packages]`` and any custom category table becomes a
    row whose ``dep_type`` is the table's name. A value is ``"*"`` (any version), a version
    specifier (``">=2.7"``; a bare ``"1.2"`` is ``==1.2``, as pipenv reads it) or a table with
    ``version``, ``markers`` and PEP 508 marker keys (``sys_platform = "== 'linux'"``); tables
    with ``git``/``hg``/``svn``/``bzr``, ``path``, ``file`` or ``editable`` are skipped with the
    reason. A key may carry PEP 508 extras (``"splinter[django]" = "*"``, as pipenv passes the
    key to pip) and a table an ``extras`` list: the row is the package ``splinter`` with those
    extras. ``[[source]]`` indexes are not used for lookups (packages are looked up on the
    configured PyPI base): each source that is not PyPI is a warning naming the source, never
    its URL (which may hold credentials). ``[requires]`` ``python_full_version`` (else
    ``python_version``), the Python the project is deployed on, is every row's
    ``requires_python`` (``pipfile_python``). Wrong types and invalid specifiers are problems at
    their lines; the other packages are still read.
    """
    if not text.strip():
        return ExtractResult()
    data, problem = parse_toml(path, text)
    if data is None:
        return ExtractResult(problems=() if problem is None else (problem,))
    locator = TomlLocator(strip_bom(text))
    dependencies: list[Dependency] = []
    problems = _source_notes(path, data.get("source"), locator)
    for category, packages in data.items():
        if category in _NOT_CATEGORIES:
            continue
        if not isinstance(packages, dict):
            line = locator.line(locator.find((category,)))
            problems.append(ManifestProblem(path, line, f"`{category}` must be a table"))
            continue
        for name, value in packages.items():
            line = locator.line(locator.find((category, name)))
            row = _package(path, line, category, name, value)
            if isinstance(row, ManifestProblem):
                problems.append(row)
            else:
                dependencies.append(row)
    requires_python = pipfile_python(
        data.get("requires"), path, lambda *keys: locator.line(locator.find(keys)), problems
    )
    if requires_python is not None:
        dependencies = [replace(dep, requires_python=requires_python) for dep in dependencies]
    pipenv = data.get("pipenv")
    if isinstance(pipenv, dict) and pipenv.get("allow_prereleases") is True:
        # pipenv then resolves and installs with pip's --pre (Pipfile docs, "[pipenv]").
        dependencies = [replace(dep, prereleases=True) for dep in dependencies]
    return ExtractResult(dependencies=tuple(dependencies), problems=tuple(problems))


def pipfile_python(
    requires: object,
    path: str,
    line_of: Callable[..., int | None],
    problems: list[ManifestProblem],
) -> str | None:
    """The Pythons a Pipfile's ``[requires]`` names, as a PEP 440 specifier set, or ``None``.

    pipenv takes ``python_full_version`` (``"3.8.10"``: that release, ``==3.8.10``) before
    ``python_version`` (``"3.8"``: every 3.8 release, ``==3.8.*``); ``"*"`` names none
    (pipenv's ``Project.required_python_version``; https://pipenv.pypa.io/en/latest/pipfile.html,
    "[requires]"). A value written as a specifier (``">=3.8"``) is kept. ``Pipfile.lock``
    copies the table into ``_meta.requires``. ``line_of(*keys)`` is the line of the value at
    ``keys`` (``"requires", "python_version"``). An invalid value or a wrong type is a
    problem in ``problems`` and names no Python.
    """
    if requires is None:
        return None
    if not isinstance(requires, dict):
        problems.append(ManifestProblem(path, line_of("requires"), "`requires` must be a table"))
        return None
    for key, wildcard in (("python_full_version", False), ("python_version", True)):
        value = requires.get(key)
        if value is None:
            continue
        line = line_of("requires", key)
        text = value.strip() if isinstance(value, str) else None
        if text == "*":
            return None
        spec = _python_spec(text, wildcard=wildcard) if text else None
        if spec is None:
            shown = repr(value)[:80]
            problems.append(ManifestProblem(path, line, f"invalid `requires.{key}` {shown}"))
            return None
        return spec
    return None


def _python_spec(text: str, *, wildcard: bool) -> str | None:
    """``3.8`` → ``==3.8.*`` (``wildcard``) or ``==3.8``; a specifier stays; ``None``: invalid."""
    if not text.startswith(_PEP440_OPERATORS):
        if not re.fullmatch(r"\d+(\.\d+)*", text):
            return None
        text = f"=={text}.*" if wildcard else f"=={text}"
    try:
        spec = SpecifierSet(text)
    except InvalidSpecifier:
        return None
    return str(spec) or None


def _source_notes(path: str, sources: object, locator: TomlLocator) -> list[ManifestProblem]:
    """Warn once per ``[[source]]`` that is not PyPI: lookups do not go there."""
    if not isinstance(sources, list):
        return []
    headers = locator.array_tables(("source",))
    notes: list[ManifestProblem] = []
    for index, source in enumerate(sources):
        if not isinstance(source, dict):
            continue
        if is_pypi_url(source.get("url")):
            continue
        line = locator.line(headers[index].start) if index < len(headers) else None
        name = source.get("name")
        label = repr(name) if isinstance(name, str) else f"#{index + 1}"
        notes.append(index_not_used(path, line, f"package source {label}"))
    return notes


def _package(
    path: str, line: int | None, category: str, name: str, value: object
) -> Dependency | ManifestProblem:
    """The row of one Pipfile package, or the problem that prevents it."""
    key = _KEY.fullmatch(name.strip())
    extras = _extras(key.group("extras")) if key is not None else None
    if key is None or _NAME.fullmatch(key.group("name")) is None or extras is None:
        return ManifestProblem(path, line, f"invalid package name {name!r} in `{category}`")
    name = key.group("name")
    markers: str | None = None
    skip_reason: str | None = None
    if isinstance(value, str):
        declared: str | None = value
    elif isinstance(value, dict):
        declared, skip_reason = _table_source(value)
        markers = _markers(value)
        listed = value.get("extras")
        if isinstance(listed, list):
            extras |= {
                extra.strip() for extra in listed if isinstance(extra, str) and extra.strip()
            }
    else:
        return ManifestProblem(
            path, line, f"package {name!r} in `{category}` must be a string or a table"
        )
    constraint: str | None = None
    if skip_reason is None and declared is not None:
        try:
            constraint = pipenv_specifier(declared)
        except ValueError as exc:
            return ManifestProblem(path, line, f"invalid version {declared!r} for {name!r}: {exc}")
    return Dependency(
        manager=ID,
        file=path,
        line=line,
        name=name,
        package_name=canonicalize_name(name),
        datasource=DATASOURCE,
        versioning=VERSIONING,
        dep_type=category,
        declared=declared,
        constraint=constraint,
        skip_reason=skip_reason,
        markers=markers,
        extras=tuple(sorted(extras)),
    )


def _extras(written: str | None) -> set[str] | None:
    """The extras of a key's ``[a, b]`` (empty for none), ``None`` when one is not a name."""
    if written is None:
        return set()
    extras = {extra.strip() for extra in written.split(",")}
    extras.discard("")
    if any(_NAME.fullmatch(extra) is None for extra in extras):
        return None
    return extras


def _table_source(value: dict[str, object]) -> tuple[str | None, str | None]:
    """Return ``(declared, skip_reason)`` of a package table."""
    for key in _VCS_KEYS:
        location = value.get(key)
        if isinstance(location, str):
            return location, "VCS requirement"
    location = value.get("path")
    if isinstance(location, str):
        return location, "local path"
    location = value.get("file")
    if isinstance(location, str):
        is_url = "://" in location or location.lower().startswith("file:")
        return location, url_skip_reason(location) if is_url else "local path"
    version = value.get("version")
    declared = version if isinstance(version, str) else None
    if value.get("editable") is True:
        return declared, "editable requirement"
    return declared, None


def _markers(value: dict[str, object]) -> str | None:
    """Join ``markers`` and the PEP 508 marker keys of a package table with ``and``."""
    parts = [value["markers"]] if isinstance(value.get("markers"), str) else []
    parts.extend(f"{key} {value[key]}" for key in _MARKER_KEYS if isinstance(value.get(key), str))
    if not parts:
        return None
    joined = " and ".join(f"({part})" if len(parts) > 1 else str(part) for part in parts)
    try:
        return str(Marker(joined))
    except InvalidMarker:
        return joined


def pipenv_specifier(version: str) -> str | None:
    """Convert a Pipfile version to a PEP 440 specifier string (``None``: any version).

    ``"*"`` and ``""`` are any version; a value starting with a PEP 440 operator is kept
    (``">=2.7,<3"``, ``"==4.*"``); a bare version gets ``==`` (``"3.*"`` → ``==3.*``), as
    pipenv writes it into the requirement it installs (``dependency_as_pip_install_line`` in
    pipenv's ``utils/dependencies.py``).

    Raises:
        ValueError: the result is not a valid PEP 440 specifier.
    """
    text = version.strip()
    if text in {"", "*"}:
        return None
    if not text.startswith(_PEP440_OPERATORS):
        text = "==" + text
    try:
        return str(SpecifierSet(text)) or None
    except InvalidSpecifier as exc:
        message = f"not a valid PEP 440 specifier: {text!r}"
        raise ValueError(message) from exc
