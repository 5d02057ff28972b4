"""The bun lockfile manager: the text ``bun.lock`` (JSON with trailing commas).

``bun.lockb``, bun's binary format before 1.2, is not read: discovery lists it as an unread
lockfile whose warning gives the hint to write the text lockfile (``UNREAD_REASONS``).
"""

from __future__ import annotations

import re

from patchula.manager import paths
from patchula.manager.base import (
    JsonKeys,
    ReadFile,
    json_type,
    parse_json_object,
)
from patchula.models import ExtractResult, LockedPackage, Lockfile, ManifestProblem

ID = "bun_lock"
DATASOURCE = "npm"
matches = paths.bun_lock  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "npm"

_KNOWN_VERSIONS = (0, 1)
# A JSON string (kept), a comment, or a comma before a closing bracket (both blanked). The
# string and comment patterns are unrolled loops (no alternation per character: a fifth of
# the time), and an unterminated comment runs to the end, so every token is linear.
_JSONC = re.compile(
    r'("[^"\\\n]*(?:\\.[^"\\\n]*)*")'
    r"|//[^\n]*"
    r"|/\*[^*]*(?:\*+[^*/][^*]*)*(?:\*+/|\*+\Z|\Z)"
    r"|,(?=[ \t\r\n]*[}\]])"
)
_NOT_NEWLINE = re.compile(r"[^\n]")
_VERSION = re.compile(r"\d+\.\d+\.\d+(?:-[0-9A-Za-z.-]+)?(?:\+[0-9A-Za-z.-]+)?")


def json_text(text: str) -> str:
    """``text`` (JSONC: JSON with comments and trailing commas) as JSON of the same length.

    Comments and trailing commas become spaces (newlines kept), so offsets and lines are those
    of the original. Strings are kept as they are, whatever they hold.
    """
    cleaned = _blank_comments_and_commas(text)
    if cleaned != text and ("//" in text or "/*" in text):
        # A trailing comma followed by a comment is seen once the comment is blank.
        cleaned = _blank_comments_and_commas(cleaned)
    return cleaned


def _blank_comments_and_commas(text: str) -> str:
    parts: list[str] = []
    position = 0
    for match in _JSONC.finditer(text):
        if match.group(1) is None:  # strings are skipped over, kept as they are
            start, end = match.span()
            parts.extend((text[position:start], _NOT_NEWLINE.sub(" ", match.group())))
            position = end
    if not parts:
        return text
    parts.append(text[position:])
    return "".join(parts)


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the locked packages of a ``bun.lock`` (bun docs, "Lockfile").

    ``packages`` maps an install path (``a``, ``@s/a``, ``b/a`` for ``a`` inside ``b``; a first
    segment naming a workspace package stands for that workspace's directory) to an array
    whose first item is the resolved ``name@version``; ``workspace:``, git, tarball and local
    resolutions are left out. ``workspaces`` maps each member directory (``""`` the root) to
    its manifest.
    """
    cleaned = json_text(text)
    data, problem = parse_json_object(path, cleaned)
    if problem is not None:
        return ExtractResult(problems=(problem,))
    keys = JsonKeys(cleaned)
    problems: list[ManifestProblem] = []
    version = data.get("lockfileVersion")
    if version not in _KNOWN_VERSIONS or isinstance(version, bool):
        message = f"unknown lockfileVersion {version!r}; reading it as far as possible"
        problems.append(ManifestProblem(path, keys.line(("lockfileVersion",)), message, "warning"))
    workspaces = data.get("workspaces")
    members: dict[str, str] = {}  # workspace package name -> its directory
    directories = {""}
    if isinstance(workspaces, dict):
        for directory, manifest in workspaces.items():
            directories.add(directory)
            name = manifest.get("name") if isinstance(manifest, dict) else None
            if isinstance(name, str) and name and directory:
                members[name] = directory
    packages: list[LockedPackage] = []
    unusable: set[str] = set()
    entries = data.get("packages", {})
    if not isinstance(entries, dict):
        message = f"`packages` must be an object, got {json_type(entries)}"
        problems.append(ManifestProblem(path, keys.line(("packages",)), message))
        entries = {}
    for key, entry in entries.items():
        locked = _locked(entry)
        install_path = _install_path(key, members)
        if install_path is None:
            continue
        if locked is None:
            why = _unusable(entry)
            if why is not None:
                message = f"`packages` entry {key!r}: {why}; current from the range"
                problems.append(ManifestProblem(path, keys.line(("packages", key)), message))
                unusable.add(install_path)
            continue
        line = keys.line(("packages", key))
        packages.append(LockedPackage(locked[0], locked[1], line, install_path=install_path))
    lockfile = Lockfile(
        file=path,
        manager=ID,
        ecosystem=DATASOURCE,
        packages=tuple(packages),
        members=frozenset(directories),
        unusable=frozenset(unusable),
    )
    return ExtractResult(lockfile=lockfile, problems=tuple(problems))


def _locked(entry: object) -> tuple[str, str] | None:
    """``(name, version)`` of a ``packages`` entry resolved from a registry, else ``None``."""
    if not isinstance(entry, list) or not entry or not isinstance(entry[0], str):
        return None
    ident = entry[0]
    at = ident.find("@", 1)
    if at <= 0:
        return None
    name, version = ident[:at], ident[at + 1 :]
    if _VERSION.fullmatch(version) is None:  # workspace:, github:, git+, file:, a URL
        return None
    return name, version


def _unusable(entry: object) -> str | None:
    """Why a ``packages`` entry gives no version, or ``None`` for a non-registry resolution.

    bun writes each entry as an array whose first item is ``name@version``; a ``workspace:``,
    git, tarball or local resolution holds a ``:`` (or a ``/``) after the name.
    """
    if not isinstance(entry, list):
        return f'expected an array `["name@version", …]`, got {json_type(entry)}'
    if not entry or not isinstance(entry[0], str):
        got = json_type(entry[0]) if entry else "an empty array"
        return f"expected `name@version` first, got {got}"
    ident = entry[0]
    at = ident.find("@", 1)
    if at <= 0:
        return f"{ident[:80]!r} is not `name@version`"
    version = ident[at + 1 :]
    if ":" in version or "/" in version:
        return None
    return f"{version[:80]!r} is not a version"


def _install_path(key: str, members: dict[str, str]) -> str | None:
    """The install path of a ``packages`` key (``b/@s/a``: ``node_modules/b/node_modules/@s/a``)."""
    segments = key.split("/")
    names: list[str] = []
    index = 0
    while index < len(segments):
        segment = segments[index]
        if segment.startswith("@"):
            if index + 1 >= len(segments):
                return None
            segment = f"{segment}/{segments[index + 1]}"
            index += 1
        if not segment:
            return None
        names.append(segment)
        index += 1
    if not names:
        return None
    prefix = ""
    if len(names) > 1 and names[0] in members:
        prefix = members[names[0]] + "/"
        names = names[1:]
    return prefix + "/".join(f"node_modules/{name}" for name in names)
