"""The ``poetry.lock`` manager: the registry packages Poetry resolved."""

from __future__ import annotations

import json
import re

from packaging.utils import canonicalize_name

from patchula.manager import paths
from patchula.manager.base import ReadFile, read_metadata_lock, strip_bom
from patchula.models import ExtractResult, LockedPackage, Lockfile

ID = "poetry_lock"
DATASOURCE = "pypi"
matches = paths.poetry_lock  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "pep440"

# lock-version majors this reader knows (Poetry 1.x wrote 1.x, Poetry ≥1.3 writes 2.x).
_KNOWN_MAJORS = frozenset({"1", "2"})
# `[package.source] type` values that are not a package index (`legacy` is a custom index).
_NOT_REGISTRY = frozenset({"git", "directory", "file", "url"})


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the locked packages of a ``poetry.lock`` (TOML written by Poetry).

    Every ``[[package]]`` with a ``name`` and a ``version`` becomes a ``LockedPackage`` (PEP 503
    normalised name, line of its ``name`` key) unless its ``[package.source]`` type is git,
    directory, file or url; PyPI and ``legacy`` (custom index) sources are kept. ``members``
    is ``None``: the lock covers the pyproject beside it. Invalid TOML is a problem with its
    line; an unknown ``[metadata] lock-version`` major is a warning and the rest is still read.

    A text in the layout Poetry writes is read by ``scan_poetry_layout`` (a third of the time:
    no TOML document is built); any other text by the TOML parser, with the same result.
    """
    body = strip_bom(text)
    scanned = scan_poetry_layout(body)
    if scanned is not None:
        kept = [
            LockedPackage(canonicalize_name(name), version, line)
            for name, version, kind, line in scanned
            if name and version and kind not in _NOT_REGISTRY
        ]
        lockfile = Lockfile(file=path, manager=ID, ecosystem=DATASOURCE, packages=tuple(kept))
        return ExtractResult(lockfile=lockfile)
    data, tables, problems = read_metadata_lock(
        path, text, "lock-version", _KNOWN_MAJORS, "lock-version"
    )
    if data is None:
        return ExtractResult(problems=tuple(problems))
    packages: list[LockedPackage] = []
    for entry, line in tables:
        name, version, source = entry.get("name"), entry.get("version"), entry.get("source")
        if not isinstance(name, str) or not name or not isinstance(version, str) or not version:
            continue
        if isinstance(source, dict) and source.get("type") in _NOT_REGISTRY:
            continue
        packages.append(LockedPackage(canonicalize_name(name), version, line))
    lockfile = Lockfile(file=path, manager=ID, ecosystem=DATASOURCE, packages=tuple(packages))
    return ExtractResult(lockfile=lockfile, problems=tuple(problems))


# --- The layout Poetry writes, read without building a TOML document ---------------------------
#
# Every line of such a file is one of: blank, a comment, a header ``[[package]]``,
# ``[package.NAME]``, ``[metadata]`` or ``[metadata.NAME]``, or ``key = value`` with a bare key
# or a quoted one without escapes that is not a bare key, and a value that is a basic string
# (escapes \b \t \n \f \r \" \\ only), a decimal integer, a boolean, an inline table of bare keys
# whose values are such strings (holding no brace), integers, booleans or flat arrays of them,
# or an array of strings and inline tables on one line or one element a line (four spaces, a
# comma after each). The whole text must match, and the table structure must be the one Poetry
# writes (checked by ``scan_poetry_layout``). All of it is valid TOML 1.0 whose values are
# the ones read here; anything else (multi-line or literal strings, dotted keys, floats, dates,
# other tables, CRLF line ends, other spacing) goes to the TOML parser.
_CTRL = r"\x00-\x08\x0a-\x1f\x7f"
# Strings as "unrolled loops" (a run of plain characters, then escape-and-run pairs): one
# regular-expression opcode per run instead of one alternation per character.
_STR = rf'"[^"\\{_CTRL}]*+(?:\\[btnfr"\\][^"\\{_CTRL}]*+)*+"'
_ISTR = rf'"[^"\\{{}}{_CTRL}]*+(?:\\[btnfr"\\][^"\\{{}}{_CTRL}]*+)*+"'  # holds no brace
_BARE = r"[A-Za-z0-9_-]++"
_QKEY = rf'"[^"\\{_CTRL}]*?[^A-Za-z0-9_\-"\\{_CTRL}][^"\\{_CTRL}]*+"'
_INT = r"(?:0|[1-9][0-9]{0,17})"
_ISCALAR = rf"(?:{_ISTR}|true|false|{_INT})"
_IVALUE = rf"(?:{_ISCALAR}|\[(?:{_ISCALAR}(?:, {_ISCALAR})*+)?\])"
_INLINE = rf"\{{(?:{_BARE} = {_IVALUE}(?:, {_BARE} = {_IVALUE})*+)?\}}"
_ELEM = rf"(?:{_STR}|{_INLINE})"
_VALUE = (
    rf"(?:{_STR}|true|false|{_INT}|{_INLINE}|\[(?:{_ELEM}(?:, {_ELEM})*+)?\]"
    rf"|\[\n(?: {{4}}{_ELEM},\n)++\])"
)
_HEAD = r"\[\[package\]\]|\[package\.[A-Za-z0-9_-]+\]|\[metadata(?:\.[A-Za-z0-9_-]+)?\]"
_POETRY_LAYOUT = re.compile(
    rf"(?:\n|#[^{_CTRL}]*+\n|(?:{_HEAD})\n|(?:{_BARE}|{_QKEY}) = {_VALUE}\n)*+"
)
# Headers and key lines in order, a string value kept (after a newline: the text is scanned
# with one in front). In a text of the layout, a key line's value that starts with a quote is
# one string up to the end of the line.
_POETRY_ROWS = re.compile(r'\n(?:(\[[^\n]*)|([A-Za-z0-9_-]+|"[^"\n]*") = ("[^\n]*)?)')
# Inline tables of two or more members, and their keys: a key repeated inside one is an error
# in TOML. Strings in inline tables hold no brace, so a match is one table; a string holding
# ", x = " is a false alarm, which only costs the TOML parser's time.
_INLINE_MANY = re.compile(r"\{[^{}\n]*, [^{}\n]*\}")
_INLINE_KEY = re.compile(r"(?:\{|, )([A-Za-z0-9_-]+) = ")
_PACKAGE_LINE = "\n[[package]]\n"


def _string(raw: str | None) -> str | None:
    """The value of a basic string as written (``None`` for a value that is no string)."""
    if not raw:
        return None
    # The escapes admitted are JSON's too; strict=False admits a tab, as TOML does.
    value: str = json.loads(raw, strict=False) if "\\" in raw else raw[1:-1]
    return value


Scanned = tuple[str | None, str | None, str | None, int]


def scan_poetry_layout(text: str) -> list[Scanned] | None:
    """Read a ``poetry.lock`` in the layout Poetry writes, or return ``None`` for any other text.

    Returns ``(name, version, source type, line of name)`` per ``[[package]]`` in order (each
    ``None`` when absent or not a string): what ``tomli.loads`` of the text gives, without
    building its document. Only when the text (no BOM) matches the line grammar above, each
    ``[[package]]`` header is followed by its ``name = `` line, the ``[[package]]`` blocks are
    followed by at most one ``[metadata]`` (before its own sub-tables), no table repeats a key
    or a sub-table, no sub-table has the name of a key of its table, no inline table repeats a
    key, no key comes before the first header, and ``[metadata] lock-version``, if present, is
    a string with a known major. Everything else is ``None``: the caller parses the text as
    TOML (whose errors and warnings carry the lines), so no text is read differently.
    """
    if not text.endswith("\n"):
        text += "\n"  # the last line's end changes nothing in TOML
    if _POETRY_LAYOUT.fullmatch(text) is None:
        return None
    text = "\n" + text  # every line now starts after a newline (line n is after the n-th)
    if text.count(_PACKAGE_LINE) != text.count(_PACKAGE_LINE + "name = "):
        return None
    for inline in _INLINE_MANY.findall(text):
        names = _INLINE_KEY.findall(inline)
        if len(set(names)) != len(names):
            return None
    packages = _package_rows(text)
    if packages is None:
        return None
    lines: list[int] = []
    line, before = 0, 0
    at = text.find(_PACKAGE_LINE)
    while at >= 0:
        line += text.count("\n", before, at + 1)
        before = at + 1
        lines.append(line + 1)  # the ``name`` line right below the header
        at = text.find(_PACKAGE_LINE, at + 1)
    if len(lines) != len(packages):
        return None
    return [
        (name, version, kind, at) for (name, version, kind), at in zip(packages, lines, strict=True)
    ]


def _package_rows(text: str) -> list[list[str | None]] | None:  # noqa: C901, PLR0912 - one pass
    """``[name, version, source type]`` per package, or ``None`` off Poetry's table structure."""
    packages: list[list[str | None]] = []
    current: list[str | None] = []
    table: str | None = None
    keys: set[str] = set()
    parent_keys: set[str] = set()
    subtables: set[str] = set()
    metadata = False
    for header, key, value in _POETRY_ROWS.findall(text):
        if header:
            if header == "[[package]]":
                if metadata:
                    return None
                current = [None, None, None]
                packages.append(current)
                table, keys, subtables = "package", set(), set()
                parent_keys = keys
            elif header.startswith("[package."):
                sub = header[9:-1]
                if metadata or not current or sub in subtables or sub in parent_keys:
                    return None
                subtables.add(sub)
                table, keys = ("source" if sub == "source" else "sub"), set()
            elif header == "[metadata]":
                if metadata:
                    return None
                metadata, table, keys, subtables = True, "metadata", set(), set()
                parent_keys = keys
            else:
                sub = header[10:-1]
                if not metadata or sub in subtables or sub in parent_keys:
                    return None
                subtables.add(sub)
                table, keys = "sub", set()
            continue
        if table is None or key in keys:
            return None
        keys.add(key)
        if table == "package":
            if key == "name":
                current[0] = _string(value)
            elif key == "version":
                current[1] = _string(value)
            elif key == "source":
                return None  # an inline source table: left to the TOML parser
        elif table == "source" and key == "type":
            current[2] = _string(value)
        elif table == "metadata" and key == "lock-version":
            lock = _string(value)
            if lock is None or lock.split(".", 1)[0] not in _KNOWN_MAJORS:
                return None  # the parser's path words the warning and finds its line
    return packages
