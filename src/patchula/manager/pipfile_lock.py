"""The ``Pipfile.lock`` manager (pipenv): the registry packages pipenv locked, per category."""

from __future__ import annotations

from packaging.utils import canonicalize_name

from patchula.manager import paths
from patchula.manager.base import (
    JsonKeys,
    ReadFile,
    json_type,
    parse_json_object,
)
from patchula.manager.pipfile import pipfile_python
from patchula.models import ExtractResult, LockedPackage, Lockfile, ManifestProblem

ID = "pipfile_lock"
DATASOURCE = "pypi"
matches = paths.pipfile_lock  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "pep440"

_KNOWN_SPECS = (6,)
# Pipfile.lock names the Pipfile's `[packages]` and `[dev-packages]` `default` and `develop`;
# custom categories keep their name (pipenv's get_pipfile_category_using_lockfile_section).
_GROUPS = {"default": "packages", "develop": "dev-packages"}
# Entries installed from elsewhere than an index carry one of these keys instead of a pin.
_NOT_REGISTRY = frozenset({"git", "hg", "svn", "bzr", "path", "file", "editable"})


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the locked packages of a ``Pipfile.lock`` (JSON written by pipenv).

    Every category object (``default``, ``develop``, custom categories; everything but
    ``_meta``) maps package names to entries; an entry whose ``version`` is an exact pin
    (``"==1.2.3"``) becomes a ``LockedPackage`` (PEP 503 normalised name, line of its key,
    ``group`` the Pipfile table it was locked for: ``packages``, ``dev-packages`` …); entries
    from git, a path, a file or editable are left out. ``members`` is ``None``: the
    lock covers the ``Pipfile`` beside it. A ``_meta.pipfile-spec`` other than 6 is a warning
    and the file is still read; invalid JSON and wrong types are problems.
    ``_meta.requires`` (pipenv's copy of the Pipfile's ``[requires]``) gives the lock's
    ``requires_python`` (``pipfile.pipfile_python``): the Python it was resolved for.
    """
    data, problem = parse_json_object(path, text)
    if problem is not None:
        return ExtractResult(problems=(problem,))
    keys_of = JsonKeys(text)

    def line(*keys: str) -> int | None:
        return keys_of.line(keys)

    problems: list[ManifestProblem] = []
    meta = data.get("_meta")
    spec = meta.get("pipfile-spec") if isinstance(meta, dict) else None
    if spec is not None and (spec not in _KNOWN_SPECS or isinstance(spec, bool)):
        message = f"unknown pipfile-spec {spec!r}; reading it as far as possible"
        problems.append(ManifestProblem(path, line("_meta", "pipfile-spec"), message, "warning"))
    packages: list[LockedPackage] = []
    for category, entries in data.items():
        if category == "_meta":
            continue
        if not isinstance(entries, dict):
            message = f"`{category}` must be an object, got {json_type(entries)}"
            problems.append(ManifestProblem(path, line(category), message))
            continue
        for name, entry in entries.items():
            if not isinstance(entry, dict):
                message = f"`{category}.{name}` must be an object, got {json_type(entry)}"
                problems.append(ManifestProblem(path, line(category, name), message))
                continue
            if _NOT_REGISTRY.intersection(entry):
                continue
            version = entry.get("version")
            if isinstance(version, str) and version.startswith("=="):
                pinned = version.lstrip("=").strip()
                if pinned:
                    where = line(category, name)
                    group = _GROUPS.get(category, category)
                    packages.append(
                        LockedPackage(canonicalize_name(name), pinned, where, "", group)
                    )
    requires = meta.get("requires") if isinstance(meta, dict) else None
    requires_python = pipfile_python(requires, path, lambda *keys: line("_meta", *keys), problems)
    lockfile = Lockfile(
        file=path,
        manager=ID,
        ecosystem=DATASOURCE,
        packages=tuple(packages),
        requires_python=requires_python,
    )
    return ExtractResult(lockfile=lockfile, problems=tuple(problems))
