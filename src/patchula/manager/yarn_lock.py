"""The yarn lockfile manager: ``yarn.lock`` of yarn classic (v1) and yarn berry (2+).

A yarn lockfile is keyed by declarations, not install paths: each entry lists the
``name@range`` descriptors that resolved to it, so a ``package.json`` row takes the version of
the entry its own descriptor names (``LockedPackage.descriptor``).
"""

from __future__ import annotations

import json
import posixpath
import re
from urllib.parse import unquote

from patchula.manager import paths
from patchula.manager.base import (
    ReadFile,
    load_yaml,
    nul_problem,
    strip_bom,
)
from patchula.models import ExtractResult, LockedPackage, Lockfile, ManifestProblem

ID = "yarn_lock"
DATASOURCE = "npm"
matches = paths.yarn_lock  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "npm"

# yarn's own test (berry's `parseSyml`, LEGACY_REGEXP): a file with this comment among its
# first comment lines is the v1 format; every other is YAML.
_V1_HEADER = re.compile(r"\A(?:#.*\r?\n)*?#\s+yarn\s+lockfile\s+v1\r?\n", re.IGNORECASE)
# `__metadata.version` of the berry lockfiles yarn 2.0 to 4.x write.
_KNOWN_BERRY_VERSIONS = frozenset({"4", "5", "6", "7", "8"})
_CLASSIC_KEY = re.compile(r'\s*("(?:[^"\\]|\\.)*"|[^,]+?)\s*(?:,|$)')
# An entry's `version` or `resolved` field (names and values plain or quoted).
_CLASSIC_FIELDS = ("  version ", '  "version" ', "  resolved ", '  "resolved" ')
_CLASSIC_FIELD = re.compile(r'  "?(version|resolved)"? +("(?:[^"\\]|\\.)*"|\S+)[ \t]*\r?')
# The berry fields an entry is matched by; every other line of an entry (dependency maps,
# checksums, bins) is blanked before parsing: see ``_berry_outline``.
_BERRY_OUTLINE = re.compile(r"^(?:[ \t]{3,}|[ \t]++(?!(?:version|resolution):)).*$", re.MULTILINE)
# Declared ranges that do not name a registry version: local, linked, git and URL specs.
_NOT_REGISTRY_SPECS = (
    "file:",
    "link:",
    "portal:",
    "workspace:",
    "exec:",
    "git+",
    "git:",
    "git@",
    "github:",
    "gitlab:",
    "bitbucket:",
    "http://",
    "https://",
)
# `resolved` values that do not come from a registry: git, local directories and tarballs.
_NOT_REGISTRY = ("git+", "git:", "git@", "github:", "gitlab:", "bitbucket:", "file:", "link:")


def descriptor(name: str, spec: str) -> str:
    """Return ``name@spec`` as a yarn lockfile keys it, for matching a declaration to an entry.

    yarn berry writes a range with its default protocol (``a@npm:^1.2``); classic writes the
    range as declared (``a@^1.2``). Both become ``a@^1.2``; an alias keeps its protocol
    (``a@npm:b@^1``), as do other protocols (``a@patch:…``).
    """
    value = spec.strip()
    if value.startswith("npm:") and "@" not in value[4:]:
        value = value[4:]
    return f"{name}@{value}"


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the locked packages of a ``yarn.lock`` (classic v1 or berry).

    Classic (yarn's ``lockfile/parse.js`` format): entries ``"a@^1", "a@^1.2":`` with
    ``version`` and ``resolved``. Berry (YAML, yarn's ``stringifySyml``): ``__metadata`` and
    entries ``"a@npm:^1, a@npm:^1.2":`` with ``version`` and ``resolution``; ``workspace:``
    resolutions name the member directories; ``patch:`` resolutions lock their base package;
    git, tarball and local resolutions are left out. One ``LockedPackage`` per descriptor, with
    the registry name (an alias's target) and the line of its entry. Classic lockfiles do not
    list their workspaces: the scan takes them from the ``package.json`` beside the lockfile
    (``Lockfile.member_globs``). An entry that gives no version (classic: no ``version``;
    berry: no ``resolution``, or a ``version`` or ``resolution`` that is no string) is a problem
    at its line and its descriptors go to ``Lockfile.unusable``. A berry lockfile that is not
    YAML, or not a mapping, gives no ``Lockfile`` (its rows say it was not read).
    """
    nul = nul_problem(path, text)
    if nul is not None:
        return ExtractResult(problems=(nul,))
    text = strip_bom(text)
    problems: list[ManifestProblem] = []
    members = {""}
    unusable: set[str] = set()
    if _V1_HEADER.match(text) or "__metadata:" not in text:
        packages: list[LockedPackage] | None = _read_classic(path, text, problems, unusable)
    else:
        packages = _read_berry(path, text, problems, members, unusable)
    if packages is None:  # not YAML, or no mapping: nothing of it can be trusted
        return ExtractResult(problems=tuple(problems))
    lockfile = Lockfile(
        file=path,
        manager=ID,
        ecosystem=DATASOURCE,
        packages=tuple(packages),
        members=frozenset(members),
        unusable=frozenset(unusable),
    )
    return ExtractResult(lockfile=lockfile, problems=tuple(problems))


def _split(key: str) -> tuple[str, str] | None:
    """``(name, range)`` of a descriptor ``name@range`` (a scoped name keeps its ``@``)."""
    at = key.find("@", 1)
    if at <= 0:
        return None
    return key[:at], key[at + 1 :]


def _alias_target(name: str, spec: str) -> str:
    """The registry name a range resolves from: an ``npm:b@^1`` alias's ``b``, else ``name``."""
    if spec.startswith("npm:"):
        target = _split(spec[4:])
        if target is not None:
            return target[0]
    return name


def _descriptors(key: str) -> list[str]:
    """The normalised descriptors of an entry's key (``"a@^1, a@^1.2"``)."""
    found = []
    for raw in key.split(","):
        parts = _split(_unquote(raw.strip()))
        if parts is not None:
            found.append(descriptor(*parts))
    return found


def _unusable_entry(
    path: str, line: int, descriptors: list[str], why: str, problems: list[ManifestProblem]
) -> set[str]:
    shown = ", ".join(descriptors[:3]) + (", …" if len(descriptors) > 3 else "")  # noqa: PLR2004 - a few
    message = f"entry {shown or '?'}: {why}; current from the range"
    problems.append(ManifestProblem(path, line, message))
    return set(descriptors)


def _read_classic(
    path: str, text: str, problems: list[ManifestProblem], unusable: set[str]
) -> list[LockedPackage]:
    """Read the entries of a v1 lockfile: only key lines and their ``version``/``resolved``.

    Every other line (dependency maps, integrity) is dropped unread: a lockfile of 32k
    packages is 300k lines, of which a third matter.
    """
    packages: list[LockedPackage] = []
    keys: list[str] = []
    entry_line = 0
    version: str | None = None
    resolved: str | None = None

    def finish() -> None:
        if keys and not version:
            found = [descriptor(*parts) for parts in map(_split, keys) if parts is not None]
            unusable.update(_unusable_entry(path, entry_line, found, "no `version`", problems))
        if keys and version and not _not_registry(resolved):
            for key in keys:
                parts = _split(key)
                if parts is None:
                    continue
                name, spec = parts
                if spec.lower().startswith(_NOT_REGISTRY_SPECS):
                    continue
                packages.append(
                    LockedPackage(
                        _alias_target(name, spec),
                        version,
                        entry_line,
                        descriptor=descriptor(name, spec),
                    )
                )

    for line, raw in _key_and_field_lines(text, _CLASSIC_FIELDS):
        if raw[0] == " ":
            field = _CLASSIC_FIELD.fullmatch(raw)
            if field is None:
                continue
            if field.group(1) == "version":
                version = _unquote(field.group(2))
            else:
                resolved = _unquote(field.group(2))
            continue
        finish()
        header = raw.rstrip()
        keys, entry_line, version, resolved = [], line, None, None
        if not header.endswith(":"):
            message = f"expected an entry `name@range:`, got {header[:80]!r}"
            problems.append(ManifestProblem(path, line, message))
            continue
        keys = _classic_keys(header[:-1])
        if not keys:
            problems.append(ManifestProblem(path, line, "unreadable entry key"))
    finish()
    return packages


def _key_and_field_lines(text: str, fields: tuple[str, ...]) -> list[tuple[int, str]]:
    """The 1-based numbers and texts of the lines at column 0 (no comment) or opening a field."""
    return [
        (number, line)
        for number, line in enumerate(text.split("\n"), 1)
        if line and (line[0] not in " \t#\r" or line.startswith(fields))
    ]


def _classic_keys(header: str) -> list[str]:
    keys = []
    for match in _CLASSIC_KEY.finditer(header):
        raw = match.group(1)
        if not raw:
            continue
        key = _unquote(raw)
        if key:
            keys.append(key)
    return keys


def _unquote(raw: str) -> str:
    if len(raw) >= 2 and raw[0] == raw[-1] == '"':  # noqa: PLR2004 - the two quotes
        if "\\" not in raw:
            return raw[1:-1]
        try:
            value = json.loads(raw)
        except ValueError:
            return raw[1:-1]
        return value if isinstance(value, str) else raw[1:-1]
    return raw


def _berry_outline(text: str) -> str:
    """The lines of a berry lockfile that locate its entries; every other line is blank.

    A lockfile of 32k packages is over 10 MB of YAML, mostly dependency maps a match never
    needs: building YAML nodes for all of it costs seconds. yarn writes each entry as a key at
    column 0 and fields indented by two spaces (``stringifySyml``), so keeping the keys and
    their ``version`` and ``resolution`` lines is the same document without the rest, and
    blank lines keep every line number. A file this does not fit is parsed whole instead.
    """
    return _BERRY_OUTLINE.sub("", text)


def _read_berry(
    path: str,
    text: str,
    problems: list[ManifestProblem],
    members: set[str],
    unusable: set[str],
) -> list[LockedPackage] | None:
    """Read a berry (YAML) lockfile's entries into locked packages and member directories.

    ``None`` when the file is not YAML or not a mapping (the problem says so).
    """
    bad: dict[str, str] = {}
    entries = _berry_lines(text)
    if entries is None:
        entries = _berry_yaml(path, _berry_outline(text), text, problems, bad)
    if entries is None:
        return None
    metadata = entries.pop("__metadata", None)
    shown = metadata[2] if metadata is not None else None
    if shown not in _KNOWN_BERRY_VERSIONS:
        line = metadata[0] if metadata is not None else None
        message = f"unknown yarn lockfile version {shown!r}; reading it as far as possible"
        problems.append(ManifestProblem(path, line, message, "warning"))
    packages: list[LockedPackage] = []
    bases: list[LockedPackage] = []
    for key, (line, resolution, version) in entries.items():
        why = bad.get(key) or ("no `resolution`" if resolution is None else None)
        if why is not None:
            unusable.update(_unusable_entry(path, line, _descriptors(key), why, problems))
            continue
        own, base = _berry_entry(key, line, resolution, version, members)
        packages.extend(own)
        bases.extend(base)
    # A patch's base range is its own only where no entry of its own locks it (yarn keeps one
    # for the base beside the patch, and that one's line is where the range is locked).
    written = {package.descriptor for package in packages}
    packages.extend(base for base in bases if base.descriptor not in written)
    return packages


# One berry entry: (line of its key, its `resolution`, its `version`).
_Entry = tuple[int, str | None, str | None]
_PLAIN_START = r"""[^\s"'#&*!|>{}\[\]%@`,?:-]"""
_BERRY_FIELDS = ("  version:", "  resolution:")
_BERRY_LINE = re.compile(
    rf"""(?:"((?:[^"\\]|\\.)*)"|({_PLAIN_START}.*?)):[ \t]*\r?"""
    rf"""|  (version|resolution): (?:"((?:[^"\\]|\\.)*)"|({_PLAIN_START}.*?))[ \t]*\r?"""
)


def _berry_lines(text: str) -> dict[str, _Entry] | None:
    """The entries of a berry lockfile written as yarn writes it, or ``None`` to read it as YAML.

    yarn's ``stringifySyml`` writes keys at column 0 and fields indented by two spaces, keys
    and values plain or double-quoted (JSON escapes), one per line: the key lines and their
    ``version`` and ``resolution`` lines are read so, which costs a tenth of building YAML nodes
    (the rest of an entry, as in ``_berry_outline``, is never needed). A line of another shape
    (single quotes, flow collections, anchors, tags, a comment after a value) sends the whole
    file to the YAML reader, so both readings agree.
    """
    entries: dict[str, _Entry] = {}
    key: str | None = None
    for line, raw in _key_and_field_lines(text, _BERRY_FIELDS):
        match = _BERRY_LINE.fullmatch(raw)
        if match is None:
            return None
        quoted_key, plain_key, field, quoted, plain = match.groups()
        if field is None:
            key = _json_string(quoted_key) if quoted_key is not None else plain_key
            if key is None or (plain_key is not None and not _plain_ok(plain_key)):
                return None
            entries.pop(key, None)  # a repeated key moves to where it last stood, as in YAML
            entries[key] = (line, None, None)
            continue
        value = _json_string(quoted) if quoted is not None else plain
        if key is None or value is None or (plain is not None and not _plain_ok(plain)):
            return None
        at, resolution, version = entries[key]
        if field == "version":
            entries[key] = (at, resolution, value)
        else:
            entries[key] = (at, value, version)
    return entries


def _plain_ok(value: str) -> bool:
    """Whether a plain scalar means its text in YAML (no ``: `` or `` #`` inside it)."""
    return ": " not in value and " #" not in value and not value.endswith(":")


def _json_string(body: str) -> str | None:
    if "\\" not in body:
        return body
    try:
        value = json.loads(f'"{body}"')
    except ValueError:
        return None
    return value if isinstance(value, str) else None


def _berry_yaml(
    path: str,
    outline: str,
    text: str,
    problems: list[ManifestProblem],
    bad: dict[str, str] | None = None,
) -> dict[str, _Entry] | None:
    """The entries of a berry lockfile read as YAML (the outline, else the whole text).

    ``None`` when it is not YAML or not a mapping; ``bad`` gets why each unusable entry is so.
    """
    bad = {} if bad is None else bad
    documents, problem = load_yaml(path, outline)
    if problem is not None:
        documents, problem = load_yaml(path, text)
    if problem is not None:
        problems.append(problem)
        return None
    if not documents or documents[0].kind != "mapping":
        line = documents[0].line if documents else 1
        problems.append(ManifestProblem(path, line, "expected a mapping of entries"))
        return None
    entries: dict[str, _Entry] = {}
    for key, entry in documents[0].named():
        if entry.kind != "mapping":
            entries[key] = (entry.line, None, None)
            if key != "__metadata":
                bad[key] = f"expected a mapping of fields, got a {entry.kind}"
            continue
        resolution, version = entry.get("resolution"), entry.get("version")
        for field_name, node in (("resolution", resolution), ("version", version)):
            if node is not None and node.text() is None:
                shown = "null" if node.kind == "scalar" else f"a {node.kind}"
                bad[key] = f"`{field_name}` must be a string, got {shown}"
        entries[key] = (
            max(1, entry.line - 1),  # the key stands on the line above its first field
            resolution.text() if resolution is not None else None,
            version.text() if version is not None else None,
        )
    return entries


def _berry_entry(
    key: str, line: int, resolution: str | None, written: str | None, members: set[str]
) -> tuple[list[LockedPackage], list[LockedPackage]]:
    """The packages of one berry entry: per descriptor of its key, and per patch's base range."""
    own: list[LockedPackage] = []
    bases: list[LockedPackage] = []
    locked = _registry_locator(resolution or "", members)
    if locked is None:
        return own, bases
    name, version = locked
    version = written or version
    for raw in key.split(","):
        parts = _split(raw.strip())
        if parts is None:
            continue
        alias, spec = parts
        own.append(LockedPackage(name, version, line, descriptor=descriptor(alias, spec)))
        if spec.startswith("patch:"):
            # `a@patch:a@npm%3A^1#…` is declared `patch:…`, whose row matches its base range.
            base = _split(unquote(spec[len("patch:") :].split("#", 1)[0]))
            if base is not None:
                bases.append(
                    LockedPackage(name, version, line, descriptor=descriptor(alias, base[1]))
                )
    return own, bases


def _registry_locator(resolution: str, members: set[str]) -> tuple[str, str] | None:
    """``(registry name, version)`` of a berry resolution, or ``None`` when not a registry one.

    ``a@npm:1.2.3`` is ``a`` at 1.2.3; ``a@patch:a@npm%3A1.2.3#…`` its base package;
    ``a@workspace:packages/a`` adds ``packages/a`` to ``members``.
    """
    parts = _split(resolution)
    if parts is None:
        return None
    name, reference = parts
    if reference.startswith("npm:"):
        version = reference[4:]
        return (name, version) if version else None
    if reference.startswith("patch:"):
        return _registry_locator(unquote(reference[6:].split("#", 1)[0]), set())
    if reference.startswith("workspace:"):
        members.add(_member(reference[len("workspace:") :]))
    return None


def _member(directory: str) -> str:
    cleaned = posixpath.normpath(directory or ".")
    return "" if cleaned == "." else cleaned


def _not_registry(resolved: str | None) -> bool:
    """Return whether a classic ``resolved`` value points somewhere other than a registry."""
    if not resolved:
        return False
    return resolved.lower().startswith(_NOT_REGISTRY) or "://" not in resolved
