"""The pnpm lockfile manager: ``pnpm-lock.yaml`` (lockfileVersion 5.x, 6.x and 9.x).

pnpm locks each workspace package (an importer) apart: its direct dependencies with the
specifier they were resolved for and the version installed, which is what a ``package.json``
row needs. They become install paths (``packages/a/node_modules/b``), so the rows resolve the
way ``package-lock.json`` rows do.
"""

from __future__ import annotations

import posixpath
import re

from patchula.manager import paths
from patchula.manager.base import (
    ReadFile,
    YamlNode,
    load_yaml,
    nul_problem,
    strip_bom,
)
from patchula.models import ExtractResult, LockedPackage, Lockfile, ManifestProblem

ID = "pnpm_lock"
DATASOURCE = "npm"
matches = paths.pnpm_lock  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "npm"

_KNOWN_MAJORS = frozenset({"5", "6", "7", "9"})
_SECTIONS = ("dependencies", "devDependencies", "optionalDependencies")
# A registry version as pnpm writes it once its peer suffix is cut.
_VERSION = re.compile(r"v?\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?")
# The sections that hold every package of the lock (most of its bytes); no row needs them.
_HEAVY_SECTIONS = ("\npackages:", "\nsnapshots:")
_NEXT_SECTION = re.compile(r"\n(?=[^\s#])")
# A 5.x ``packages`` key: ``/name/1.2.3``, ``/@scope/name/1.2.3``, a ``_peer@1`` suffix after it.
_V5_KEY = re.compile(r"/((?:@[^/]+/)?[^/@]+)/([^/_]+)(?:_.*)?")


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the locked direct dependencies of each importer of a ``pnpm-lock.yaml``.

    Shapes (pnpm's ``lockfile-file`` formats): 9.x and 6.x ``importers.<dir>.<section>.<name>``
    with ``specifier`` and ``version``; 5.x ``importers.<dir>.specifiers`` beside
    ``<section>.<name>: <version>``; a lock without ``importers`` holds the root's sections at
    its top level. Versions lose their peer suffix (``1.2.3(react@18.2.0)``, 5.x
    ``1.2.3_react@18.2.0``); an alias's version names its target (9.x ``b@1.0.0``, 6.x
    ``/b@1.0.0``, 5.x ``/b/1.0.0``); ``link:``, ``file:``, git and tarball versions are left
    out. ``members`` are the importers' directories. YAML goes through ``load_yaml``.
    """
    nul = nul_problem(path, text)
    if nul is not None:
        return ExtractResult(problems=(nul,))
    text = strip_bom(text)
    documents, problem = load_yaml(path, _without_packages(text))
    if problem is not None:
        documents, problem = load_yaml(path, text)
    problems = [] if problem is None else [problem]
    root = _main_document(documents)
    if root is None:
        if problem is None:
            problems.append(ManifestProblem(path, 1, "expected a mapping with `lockfileVersion`"))
        return ExtractResult(problems=tuple(problems))
    version_node = root.get("lockfileVersion")
    version = version_node.text() if version_node is not None else None
    if version is None or version.split(".", 1)[0] not in _KNOWN_MAJORS:
        line = version_node.line if version_node is not None else root.line
        message = f"unknown lockfileVersion {version!r}; reading it as far as possible"
        problems.append(ManifestProblem(path, line, message, "warning"))
    packages: list[LockedPackage] = []
    unusable: set[str] = set()
    members: set[str] = {""}
    importers = root.get("importers")
    if importers is None:
        packages.extend(_importer(path, "", root, problems, unusable))
    elif importers.kind == "mapping":
        for directory, importer in importers.named():
            member = _member(directory)
            members.add(member)
            packages.extend(_importer(path, member, importer, problems, unusable))
    else:
        problems.append(ManifestProblem(path, importers.line, "`importers` must be a mapping"))
    lockfile = Lockfile(
        file=path,
        manager=ID,
        ecosystem=DATASOURCE,
        packages=tuple(packages),
        members=frozenset(members),
        unusable=frozenset(unusable),
        transitive=_package_keys(text),
    )
    return ExtractResult(lockfile=lockfile, problems=tuple(problems))


def _package_keys(text: str) -> tuple[tuple[str, str], ...]:
    """``(name, version)`` of each key of the ``packages`` section, read line by line.

    Every package the lock installs, for ``cache warm`` to follow the locked versions of
    dependencies of dependencies: 9.x ``name@1.2.3``, 6.x ``/name@1.2.3(peer@1)``, 5.x
    ``/name/1.2.3_peer@1``, quoted or not; pnpm writes each key at two spaces of indent. Keys
    that are no registry version (``link:``, tarballs) are left out. No YAML tree is built: the
    section is most of the file's bytes.
    """
    start = text.find("\npackages:")
    if start < 0:
        return ()
    following = _NEXT_SECTION.search(text, start + len("\npackages:"))
    end = len(text) if following is None else following.start()
    found: dict[tuple[str, str], None] = {}
    for line in text[start:end].splitlines()[1:]:
        if not line.startswith("  ") or line.startswith("   ") or not line.rstrip().endswith(":"):
            continue
        key = line.strip()[:-1].strip().strip("'\"").split("(", 1)[0]
        v5 = _V5_KEY.fullmatch(key)  # /name/1.2.3_peer@1: the peer suffix holds an "@"
        if v5 is not None and _VERSION.fullmatch(v5[2]):
            found[v5[1], v5[2].removeprefix("v")] = None
        elif (locked := _locked("", key)) is not None:
            found[locked] = None
    return tuple(found)


def _without_packages(text: str) -> str:
    """``text`` with its ``packages`` and ``snapshots`` sections blanked (lines kept).

    Those sections describe every package of the lock and are most of its bytes; the rows need
    the importers only. pnpm writes each top-level key at column 0, so a section ends where the
    next line at column 0 starts. A file this does not fit is parsed whole instead.
    """
    cuts: list[tuple[int, int]] = []
    for head in _HEAVY_SECTIONS:
        start = text.find(head)
        if start < 0:
            continue
        following = _NEXT_SECTION.search(text, start + len(head))
        end = len(text) if following is None else following.start()
        cuts.append((start + 1, end))
    if not cuts:
        return text
    parts: list[str] = []
    position = 0
    for start, end in sorted(cuts):
        if start < position:
            return text
        parts.extend((text[position:start], "\n" * text.count("\n", start, end)))
        position = end
    parts.append(text[position:])
    return "".join(parts)


def _main_document(documents: list[YamlNode]) -> YamlNode | None:
    """The lockfile document (pnpm 10 may put an environment document before it)."""
    found = None
    for document in documents:
        if document.kind == "mapping" and document.get("lockfileVersion") is not None:
            found = document
    return found


def _member(directory: str) -> str:
    cleaned = posixpath.normpath(directory or ".")
    return "" if cleaned == "." else cleaned


def _importer(
    path: str, member: str, importer: YamlNode, problems: list[ManifestProblem], unusable: set[str]
) -> list[LockedPackage]:
    """The locked direct dependencies of one importer (the workspace package at ``member``).

    An entry whose version is no string, or a string that is neither a registry version nor a
    non-registry one (``link:``, ``file:``, a git or tarball URL: they hold ``:`` or ``/``), is
    a problem at its line and its install path goes to ``unusable``.
    """
    found: list[LockedPackage] = []
    if importer.kind != "mapping":
        return found
    for section in _SECTIONS:
        entries = importer.get(section)
        if entries is None or entries.kind != "mapping":
            continue
        for alias, entry in entries.named():
            if entry.kind == "mapping":  # 6.x and 9.x: {specifier, version}
                version_node = entry.get("version")
                line = max(1, entry.line - 1)  # the name stands on the line above
            else:  # 5.x: the version itself
                version_node, line = entry, entry.line
            raw = version_node.text() if version_node is not None else None
            install_path = f"{member}/node_modules/{alias}" if member else f"node_modules/{alias}"
            locked = _locked(alias, raw or "")
            if locked is None:
                why = _unusable(version_node, raw)
                if why is not None:
                    where = f"importer {member or '.'!r}"
                    message = f"{section} entry {alias!r} of {where}: {why}; current from the range"
                    problems.append(ManifestProblem(path, line, message))
                    unusable.add(install_path)
                continue
            name, version = locked
            found.append(LockedPackage(name, version, line, install_path=install_path))
    return found


def _unusable(node: YamlNode | None, raw: str | None) -> str | None:
    """Why an importer entry's version is unusable, or ``None`` for a non-registry version."""
    if node is None:
        return "no `version`"
    if raw is None:
        shown = node.kind if node.kind != "scalar" else "null"
        return f"`version` must be a string, got a {shown}"
    if not node.quoted and raw.strip() and raw.strip().lstrip("-").replace(".", "", 1).isdigit():
        return f"`version` must be a string, got the number {raw.strip()}"
    if ":" in raw or "/" in raw:  # link:, file:, git and tarball versions: not a registry's
        return None
    return f"`version` {raw[:80]!r} is not a version"


def _locked(alias: str, raw: str) -> tuple[str, str] | None:
    """``(registry name, version)`` of an importer's version; ``None`` when not a registry one."""
    value = raw.strip().split("(", 1)[0]  # 6.x and 9.x peer suffix: 1.2.3(react@18.2.0)
    name = alias
    if value.startswith("/"):  # 5.x /b/1.0.0 and 6.x /b@1.0.0: an alias's target
        rest = value[1:]
        at = rest.find("@", 1)
        if at > 0:
            name, value = rest[:at], rest[at + 1 :]
        else:
            name, _, value = rest.rpartition("/")
    elif value.find("@", 1) > 0 and ":" not in value and _VERSION.match(value) is None:
        # 9.x b@1.0.0 (a version first is 5.x's own with its peer suffix: 1.0.0_react@18)
        at = value.find("@", 1)
        name, value = value[:at], value[at + 1 :]
    value = value.split("_", 1)[0]  # 5.x peer suffix: 1.2.3_react@18.2.0
    if not name or _VERSION.fullmatch(value) is None:
        return None
    return name, value.removeprefix("v")
