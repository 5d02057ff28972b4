"""The ``hatch.toml`` manager: Hatch's own configuration file, its environments' dependencies."""

from __future__ import annotations

import posixpath

from patchula.errors import ManifestError
from patchula.manager import paths
from patchula.manager.base import ReadFile, TomlLocator, parse_toml, strip_bom
from patchula.manager.pyproject import DATASOURCE, VERSIONING, _Collector, _with_requires_python
from patchula.models import Dependency, ExtractResult

ID = "hatch_toml"
matches = paths.hatch_toml  # the path rule: manager/paths.py (discovery imports no manager)

__all__ = ["DATASOURCE", "ID", "VERSIONING", "extract", "matches"]


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:
    """Extract the dependencies of Hatch's environments from a ``hatch.toml``.

    Hatch reads its configuration from ``hatch.toml`` as from ``[tool.hatch]`` of
    ``pyproject.toml``, the file's tables without the ``tool.hatch`` prefix
    (https://hatch.pypa.io/latest/config/project-templates/ and
    https://hatch.pypa.io/latest/config/environment/overview/): each ``[envs.<env>]``
    ``dependencies`` and ``extra-dependencies`` (PEP 508 strings) are rows of
    ``hatch-env:<env>``, read as the pyproject manager reads ``[tool.hatch.envs.<env>]``
    (``pyproject._Collector.hatch_envs``: Hatch's context formatting skips a row, invalid
    requirements and wrong types are problems at their lines). Hatch resolves its
    environments itself, so no lockfile gives them a version. The rows carry the
    ``requires-python`` of the ``pyproject.toml`` beside the file (``read``; Hatch installs the
    project into its environments), when it has one; that file's own problems are its
    manager's to report. An empty file gives an empty result.
    """
    if not text.strip():
        return ExtractResult()
    data, problem = parse_toml(path, text)
    if data is None:
        return ExtractResult(problems=() if problem is None else (problem,))
    collector = _Collector(path, TomlLocator(strip_bom(text)), manager=ID)
    collector.hatch_envs(data, ("envs",))
    dependencies = _with_project_python(tuple(collector.dependencies), path, read)
    return ExtractResult(dependencies=dependencies, problems=tuple(collector.problems))


def _with_project_python(
    dependencies: tuple[Dependency, ...], path: str, read: ReadFile
) -> tuple[Dependency, ...]:
    """The rows, with the sibling ``pyproject.toml``'s ``requires-python`` when it has one."""
    if not dependencies:
        return dependencies
    sibling = posixpath.join(posixpath.dirname(path), "pyproject.toml")
    try:
        text = read(sibling)
    except (ManifestError, OSError, ValueError):
        return dependencies  # no pyproject.toml beside it (or unreadable): no project bound
    data, _ = parse_toml(sibling, text)
    if data is None:
        return dependencies
    scratch = _Collector(sibling, TomlLocator(strip_bom(text)))  # its problems are not ours
    project = data.get("project")
    tool = data.get("tool")
    poetry = tool.get("poetry") if isinstance(tool, dict) else None
    return _with_requires_python(
        dependencies,
        scratch,
        project if isinstance(project, dict) else {},
        poetry if isinstance(poetry, dict) else {},
    )
