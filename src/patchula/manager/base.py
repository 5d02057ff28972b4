"""What every manager module provides: a path-only matcher and a pure ``extract``.

A manager module defines ``ID`` (equal to its module name), ``DATASOURCE`` and ``VERSIONING``
(id strings), ``matches(path) -> bool`` that looks at the repository-relative POSIX path only,
and ``extract(path, text, read) -> ExtractResult``. ``extract`` never touches the file system:
files it must pull in (a requirements file's ``-r`` include) come through ``read``, which maps a
repository-relative path to its text and raises ``ManifestError`` when the file is missing,
outside the checkout, too large or not text. Problems in the file itself are returned as
``ManifestProblem`` values naming file and line, never raised, so one bad entry costs only itself.
"""

from __future__ import annotations

import functools
import gc
import json
import re
import threading
from bisect import bisect_right
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from itertools import accumulate
from json.scanner import make_scanner
from typing import Any, Protocol

import msgspec
import orjson
import tomli
from msgspec.structs import replace

from patchula.manager import paths
from patchula.models import Dependency, ExtractResult, ManifestProblem
from patchula.names import scrub_surrogates

ReadFile = Callable[[str], str]


class Manager(Protocol):
    """The shape of a manager module (checked against every module in ``MANAGERS``)."""

    ID: str
    DATASOURCE: str
    VERSIONING: str

    def matches(self, path: str) -> bool:
        """Return whether the repository-relative POSIX ``path`` is a file this manager reads."""
        ...

    def extract(self, path: str, text: str, read: ReadFile) -> ExtractResult:
        """Extract dependencies (or locked packages) from ``text``, the contents of ``path``."""
        ...


def line_of(text: str, offset: int) -> int:
    """Return the 1-based line number of character ``offset`` in ``text``.

    It counts from the start of ``text``: for one position only. A caller asking for many
    positions of one text (every package of a lockfile) builds a ``LineIndex`` once instead.
    """
    return text.count("\n", 0, max(0, offset)) + 1


class LineIndex:
    """1-based line numbers of character offsets in one text, a newline ending a line.

    Built in one pass over the text; each ``line`` is then a binary search over the line
    starts (O(log lines)), so giving every one of n packages its line is O(n log n) rather
    than the O(n x size) of counting newlines from offset 0 each time. ``line(o)`` equals
    ``line_of(text, o)`` for every ``o``.
    """

    __slots__ = ("_starts",)

    def __init__(self, text: str) -> None:
        """Index the start offset of every line of ``text``."""
        # Each line's length plus its newline, summed: the offset where the next line starts.
        # The text after the last newline starts a line but ends none: it adds no start.
        ended = text.split("\n")
        ended.pop()
        self._starts = list(accumulate(map((1).__add__, map(len, ended)), initial=0))

    def line(self, offset: int) -> int:
        """Return the 1-based line of character ``offset`` (negative offsets are line 1)."""
        return bisect_right(self._starts, max(0, offset))


class _CollectorPause:
    """Who holds the cyclic garbage collector paused, across the threads extracting files."""

    lock = threading.Lock()
    holders = 0
    was_enabled = False


@contextmanager
def collector_paused() -> Iterator[None]:
    """Pause Python's cyclic garbage collector while decoding and walking one large document.

    Decoding a 13 MB lockfile makes ~130,000 dicts that all stay alive until the walk is done;
    each collection the allocations trigger re-examines every one of them, so the collector's
    work grows with the square of the file (a 32,000-package package-lock spent a third more
    CPU per MB than a 1,000-package one; with the collector paused, the same per MB). Nothing
    made here is cyclic garbage (a decoded JSON or TOML tree has no cycles; reference counting
    frees it all), so the pause delays no reclamation. Extraction runs in worker threads: the
    collector is paused by the first holder and resumed by the last, and only if it was
    enabled before (a program that disabled it keeps it disabled).
    """
    pause = _CollectorPause
    with pause.lock:
        if not pause.holders:
            pause.was_enabled = gc.isenabled()
            gc.disable()
        pause.holders += 1
    try:
        yield
    finally:
        with pause.lock:
            pause.holders -= 1
            if not pause.holders and pause.was_enabled:
                gc.enable()


# --- Helpers shared by several managers (no I/O; text in, values out) -------------------------

_BOM = "\ufeff"


def strip_bom(text: str) -> str:
    """Return ``text`` without a leading byte-order mark (npm and pip both tolerate one)."""
    return text.removeprefix(_BOM)


def nul_problem(path: str, text: str) -> ManifestProblem | None:
    """Return a problem at the line of the first NUL character in ``text``, or ``None``.

    A NUL never appears in a text manifest; its presence means binary or corrupt content.
    """
    index = text.find("\x00")
    if index < 0:
        return None
    return ManifestProblem(
        path, line_of(text, index), "file contains NUL characters; not a text manifest"
    )


def parse_json_object(path: str, text: str) -> tuple[dict[str, object], ManifestProblem | None]:
    """Parse JSON text (RFC 8259) whose top level must be an object.

    Returns ``(object, None)``, or ``({}, problem)`` for NUL characters, an empty file, a syntax
    error (with the decoder's 1-based line) or a top level that is not an object. A leading
    byte-order mark is ignored.
    """
    nul = nul_problem(path, text)
    if nul is not None:
        return {}, nul
    text = strip_bom(text)
    if not text or text.isspace():  # not text.strip(): no copy of a 13 MB lockfile
        return {}, ManifestProblem(path, 1, "empty file; expected a JSON object")
    try:
        data = json.loads(text)
    except json.JSONDecodeError as exc:
        # json's messages end where its position begins ("Unterminated string starting at"):
        # the line is the problem's own, the column goes into the message.
        at = "" if exc.msg.endswith(" at") else " at"
        message = f"invalid JSON: {exc.msg}{at} column {exc.colno}"
        return {}, ManifestProblem(path, exc.lineno, message)
    except RecursionError:
        return {}, nesting_problem(path, text, "JSON")
    except ValueError:  # int() of a number over Python's digit limit (CVE-2020-10735)
        return {}, _too_long_number(path, text, "JSON")
    if not isinstance(data, dict):
        message = f"expected a JSON object at the top level, got {json_type(data)}"
        return {}, ManifestProblem(path, 1, message)
    return data, None


def json_type(value: object) -> str:
    """Name the JSON type of a parsed value for problem messages (``an array``, ``a number``)."""
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, int | float):
        return "a number"
    if isinstance(value, list):
        return "an array"
    if isinstance(value, dict):
        return "an object"
    if value is None:
        return "null"
    return "a string"


JsonPath = tuple[str | int, ...]
# JSON's insignificant whitespace (RFC 8259 §2) around the ``:`` after a key and the ``,`` or
# closing bracket after a value, and the C scanner of ``json`` (what ``json.loads`` runs): a
# value that is not on the way to a wanted key is skipped at the decoder's speed.
_JSON_SPACE = re.compile(r"[ \t\n\r]*")
_JSON_COLON = re.compile(r"[ \t\n\r]*:[ \t\n\r]*")
_JSON_NEXT = re.compile(r"[ \t\n\r]*(?:(,)[ \t\n\r]*|[}\]])")
# typeshed types the context as the scanner itself; the decoder is the documented context.
_JSON_SCAN = make_scanner(json.JSONDecoder())  # type: ignore[arg-type]


_NO_DATA = object()


def _indented_like_npm(text: str, data: object) -> bool:
    """Whether ``text`` is ``data`` exactly as ``JSON.stringify(data, null, 2)`` lays it out.

    An optional BOM before and one newline after are allowed. orjson's ``OPT_INDENT_2`` renders
    the same layout (``": "`` after a key, ``{}`` and ``[]`` for empty containers); a value it
    cannot render (an integer over 64 bits, a lone surrogate) means not this layout.
    """
    try:
        rendered = orjson.dumps(data, option=orjson.OPT_INDENT_2)
        written = strip_bom(text).encode()
    except (TypeError, UnicodeEncodeError):  # orjson.JSONEncodeError is a TypeError
        return False
    return written in {rendered, rendered + b"\n"}


@functools.lru_cache(maxsize=32)
def _layout_member(depth: int) -> re.Pattern[str]:
    """A member line at ``depth`` of npm's layout: its key (group 1) up to the value."""
    return re.compile("\n" + "  " * depth + r'("(?:[^"\\\n]|\\.)*"): ')


class JsonKeys:
    """The offsets (and lines) of object keys in a valid JSON text, found on demand.

    Paths hold object keys (``str``) and array indexes (``int``):
    ``("packages", "node_modules/a")``. A repeated key keeps its last offset, as ``json.loads``
    keeps the last value. Only the containers on the way to an asked path are read key by key
    (each once, then remembered); every other value is skipped by the C scanner of ``json``, so
    locating each of n packages is linear in the size of the text, not a Python loop over every
    token. The text must be JSON that ``json.loads`` accepted (a leading BOM is allowed).

    Given ``data``, the value ``json.loads`` made of ``text``, and when ``text`` is exactly
    that value laid out as ``JSON.stringify(value, null, 2)`` writes it (npm's own layout for
    ``package-lock.json``: two-space indent, one member a line, an optional final newline;
    checked by rendering ``data`` with orjson's ``OPT_INDENT_2`` and comparing), an object's
    members are the lines indented one level deeper than it, up to its closing line: a regular
    expression finds them without decoding any value (a 32,000-package lockfile was decoded a
    second time by the scanner). Any other text, or no ``data``, is read by the scanner. Both
    give the same offsets: in that layout no string holds a newline, no key repeats (the
    rendering of a dict has none) and a line's indent is twice its depth.
    """

    __slots__ = ("_key_lines", "_layout", "_lines", "_members", "_root", "_text")

    def __init__(self, text: str, data: object = _NO_DATA) -> None:
        """Locate the top-level value of ``text``; nothing else is read until asked."""
        self._text = text
        self._lines: LineIndex | None = None
        self._members: dict[int, dict[str | int, tuple[int | None, int]]] = {}
        self._root = _JSON_SPACE.match(text, 1 if text.startswith(_BOM) else 0).end()  # type: ignore[union-attr]
        self._layout = data is not _NO_DATA and _indented_like_npm(text, data)
        self._key_lines: dict[int, int] = {}  # line of a key or value offset (layout only)

    def offset(self, path: JsonPath) -> int | None:
        """Return the offset of the opening quote of the key at ``path``, or ``None``."""
        value, key = self._root, None
        for depth, step in enumerate(path):
            members = self._members.get(value)
            if members is None:
                members = self._members[value] = (
                    self._read_layout(value, depth) if self._layout else self._read(value)
                )
            found = members.get(step)
            if found is None:
                return None
            key, value = found
        return key

    def line(self, path: JsonPath) -> int | None:
        """Return the 1-based line of the key at ``path``, or ``None`` when there is none."""
        offset = self.offset(path)
        if offset is None:
            return None
        known = self._key_lines.get(offset)
        if known is not None:
            return known
        if self._lines is None:
            self._lines = LineIndex(self._text)
        return self._lines.line(offset)

    def _read_layout(self, at: int, depth: int) -> dict[str | int, tuple[int | None, int]]:
        """``_read`` of an object at ``depth`` of a text in npm's layout (see the class)."""
        text = self._text
        if not text.startswith("{", at) or text.startswith("{}", at):
            return self._read(at)  # an array (read by the scanner), or an empty object
        end = text.find("\n" + "  " * depth + "}", at)
        if end < 0:
            return self._read(at)
        members: dict[str | int, tuple[int | None, int]] = {}
        # Each member is on its own line: counting the newlines from one to the next numbers
        # them in one pass over the object (no index of the whole text's lines is built).
        lines = self._key_lines
        line = lines.get(at)
        if line is None:
            line = self._text.count("\n", 0, at) + 1
        count, before = text.count, at
        for match in _layout_member(depth + 1).finditer(text, at, end):
            raw, start = match.group(1), match.start(1)
            name = json.loads(raw) if "\\" in raw else raw[1:-1]
            line += count("\n", before, start)
            before = start
            value = match.end()
            members[name] = (start, value)
            # A key's line is its value's line too: the line a nested object starts on.
            lines[start] = lines[value] = line
        return members

    def _read(self, at: int) -> dict[str | int, tuple[int | None, int]]:
        """Map the members of the object or array starting at ``at`` to (key, value) offsets."""
        text, scan, colon, follow = self._text, _JSON_SCAN, _JSON_COLON.match, _JSON_NEXT.match
        members: dict[str | int, tuple[int | None, int]] = {}
        opening = text[at : at + 1]
        if opening not in {"{", "["}:
            return members
        pos = _JSON_SPACE.match(text, at + 1).end()  # type: ignore[union-attr]
        if text[pos : pos + 1] in {"}", "]"}:
            return members
        index = 0
        try:
            while True:
                if opening == "{":
                    name, after = scan(text, pos)
                    value = colon(text, after).end()  # type: ignore[union-attr]
                    members[name] = (pos, value)
                else:
                    value = pos
                    members[index] = (None, value)
                    index += 1
                _, end = scan(text, value)
                more = follow(text, end)
                if more is None or more.group(1) is None:
                    break
                pos = more.end()
        except (StopIteration, ValueError, TypeError, AttributeError):
            pass  # not valid JSON after all: the members read so far are what can be located
        return members


def parse_toml(path: str, text: str) -> tuple[dict[str, object] | None, ManifestProblem | None]:
    """Parse TOML 1.0 text into ``(table, None)``, or ``(None, problem)`` with the error's line.

    NUL characters are a problem; a leading byte-order mark is ignored. Parsed by ``tomli``
    (the compiled release of the parser ``tomllib`` was taken from; 3-4x faster on lockfiles)
    with the cyclic garbage collector paused (``collector_paused``).
    Older parsers put the position only in the message (``(at line N, column M)`` or
    ``(at end of document)``); tomli 2.1 and Python 3.14 add ``lineno``. Both are read.
    """
    nul = nul_problem(path, text)
    if nul is not None:
        return None, nul
    try:
        with collector_paused():  # a lockfile's table tree: see ``collector_paused``
            return tomli.loads(strip_bom(text)), None
    except tomli.TOMLDecodeError as exc:
        message = str(getattr(exc, "msg", "") or exc)
        line: int | None = getattr(exc, "lineno", None)
        where = _TOML_WHERE.search(message)
        if where is not None:
            message = message[: where.start()]
            if where.group(1) is not None:
                line = line or int(where.group(1))
            else:
                line = line or text.count("\n") + 1
        # At the end of the document, the last line with content: not the empty one after the
        # final newline (tomli numbers that one).
        last = strip_bom(text).rstrip().count("\n") + 1
        line = min(line, last) if line is not None else None
        return None, ManifestProblem(path, line, f"invalid TOML: {message.strip()}")
    except RecursionError:
        return None, nesting_problem(path, text, "TOML")
    except ValueError:  # int() of a number over Python's digit limit (CVE-2020-10735)
        return None, _too_long_number(path, text, "TOML")


_LONG_NUMBER = re.compile(r"[0-9_]{4300,}")

# What may hold a bracket that does not nest: strings (and TOML's comments), else a bracket.
_NESTING_TOKENS = {
    "JSON": re.compile(r'"(?:[^"\\]|\\.)*"?|[\[{]|[\]}]'),
    "TOML": re.compile(
        r'"""[\s\S]*?(?:"""|\Z)|\'\'\'[\s\S]*?(?:\'\'\'|\Z)|"(?:[^"\\\n]|\\.)*"?'
        r"|'[^'\n]*'?|#[^\n]*|[\[{]|[\]}]"
    ),
}


def nesting_problem(path: str, text: str, language: str) -> ManifestProblem:
    """The problem of a document nested deeper than the parser follows: at its deepest line.

    The line where the nesting first reaches its greatest depth (brackets in strings and
    comments do not count); the message gives that depth.
    """
    depth = deepest = 0
    at = 0
    for match in _NESTING_TOKENS[language].finditer(text):
        token = match.group()
        if token in {"[", "{"}:
            depth += 1
            if depth > deepest:
                deepest, at = depth, match.start()
        elif token in {"]", "}"}:
            depth = max(0, depth - 1)
    message = f"invalid {language}: nested too deeply ({deepest} levels of brackets)"
    return ManifestProblem(path, line_of(text, at) if deepest else None, message)


def _too_long_number(path: str, text: str, syntax: str) -> ManifestProblem:
    """The problem of a JSON or TOML number too long for Python's ``int()`` (at its line)."""
    match = _LONG_NUMBER.search(text)
    line = None if match is None else line_of(text, match.start())
    return ManifestProblem(path, line, f"invalid {syntax}: a number with too many digits")


_TOML_WHERE = re.compile(r"\s*\((?:at line (\d+), column \d+|at end of document)\)\s*$")
_TOML_KEY = r"""(?:"(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[A-Za-z0-9_-]+)"""
_TOML_HEADER = re.compile(
    rf"^[ \t]*(\[\[?)[ \t]*({_TOML_KEY}(?:[ \t]*\.[ \t]*{_TOML_KEY})*)[ \t]*\]\]?[ \t]*(?:#.*)?$"
)
_TOML_KEY_PART = re.compile(r""""((?:[^"\\]|\\.)*)"|'([^']*)'|([A-Za-z0-9_-]+)""")
_TOML_BARE_KEY = re.compile(r"[A-Za-z0-9_-]+")
_TOML_MULTILINE_QUOTES = re.compile(r'"""|\'\'\'')
# A line that may be a table header, without its newline: at the start of the text, and after
# a newline (the literal newline lets the regular expression engine skip to each line start).
_TOML_FIRST_LINE_HEAD = re.compile(r"[ \t]*\[[^\n]*")
_TOML_LINE_HEAD = re.compile(r"\n([ \t]*\[[^\n]*)")


def _header_candidates(text: str) -> Iterator[tuple[int, str]]:
    """``(offset, line)`` of each line of ``text`` whose first non-blank character is ``[``."""
    first = _TOML_FIRST_LINE_HEAD.match(text)
    if first is not None:
        yield 0, first.group()
    for match in _TOML_LINE_HEAD.finditer(text):
        yield match.start(1), match.group(1)


def _quote_marks(text: str) -> list[tuple[int, str]]:
    """``(offset, mark)`` of the multi-line string quotes of ``text``, in order, non-overlapping."""
    found: list[tuple[int, str]] = []
    for mark in ('"""', "'''"):
        at = text.find(mark)
        while at >= 0:
            found.append((at, mark))
            at = text.find(mark, at + 3)
    found.sort()
    return found


class TomlTable(msgspec.Struct, frozen=True):
    """One table header of a TOML text: its key path and the character span of its body."""

    path: tuple[str, ...]
    array: bool
    start: int
    body: int
    end: int


def _toml_key_path(raw: str) -> tuple[str, ...]:
    parts: list[str] = []
    for match in _TOML_KEY_PART.finditer(raw):
        basic, literal, bare = match.groups()
        if basic is not None:
            parts.append(re.sub(r"\\(.)", r"\1", basic))
        else:
            parts.append(literal if literal is not None else bare)
    return tuple(parts)


@functools.lru_cache(maxsize=256)
def _toml_key_pattern(keys: tuple[str, ...]) -> re.Pattern[str]:
    """The pattern of a line assigning the dotted key ``keys`` (built once per key path)."""
    parts = []
    for key in keys:
        quoted = rf"""(?:"{re.escape(key)}"|'{re.escape(key)}')"""
        bare = re.escape(key) if _TOML_BARE_KEY.fullmatch(key) else None
        parts.append(f"(?:{bare}|{quoted[3:-1]})" if bare else quoted)
    return re.compile(r"^[ \t]*" + r"[ \t]*\.[ \t]*".join(parts) + r"[ \t]*=", re.MULTILINE)


class TomlLocator:
    """Best-effort line numbers for a TOML text, since ``tomllib`` gives none.

    It scans table headers line by line (skipping multi-line strings), then finds keys, dotted
    keys and quoted values inside a table's body. It is exact for ordinary files and returns
    the nearest enclosing definition (or ``None``) for unusual layouts such as inline tables.
    """

    def __init__(self, text: str) -> None:
        """Index the table headers and the line starts of ``text``."""
        self.text = text
        self.lines = LineIndex(text)
        self.tables: list[TomlTable] = []
        heads: list[tuple[tuple[str, ...], bool, int, int]] = []
        quote: str | None = None
        # Only the lines that may be headers and the multi-line quote marks matter: C-level
        # searches find them (a 14 MB lockfile has ~30,000 headers among ~450,000 lines; the
        # Python loop over every line was a second of CPU), then they are met in text order.
        parsed: dict[str, tuple[tuple[str, ...], bool] | None] = {}
        marks = iter(_quote_marks(text))
        mark = next(marks, None)
        for start, line in _header_candidates(text):
            while mark is not None and mark[0] < start:
                quote = mark[1] if quote is None else (None if mark[1] == quote else quote)
                mark = next(marks, None)
            if quote is None:
                # Lockfiles repeat a few header lines thousands of times: parse each once.
                if line in parsed:
                    head = parsed[line]
                else:
                    header = _TOML_HEADER.match(line.rstrip("\r"))
                    head = None
                    if header is not None:
                        head = (_toml_key_path(header.group(2)), header.group(1) == "[[")
                    parsed[line] = head
                if head is not None:
                    end = start + len(line)
                    body = end + 1 if text.startswith("\n", end) else end
                    heads.append((head[0], head[1], start, body))
        while mark is not None:
            quote = mark[1] if quote is None else (None if mark[1] == quote else quote)
            mark = next(marks, None)
        for index, (path, array, start, body) in enumerate(heads):
            end = heads[index + 1][2] if index + 1 < len(heads) else len(text)
            self.tables.append(TomlTable(path, array, start, body, end))
        first = heads[0][2] if heads else len(text)
        self.root = TomlTable((), array=False, start=0, body=0, end=first)

    def line(self, offset: int | None) -> int | None:
        """Return the 1-based line of ``offset``, passing ``None`` through."""
        return None if offset is None else self.lines.line(offset)

    def array_tables(self, path: tuple[str, ...]) -> list[TomlTable]:
        """Return the ``[[path]]`` headers in document order (element ``i`` is entry ``i``)."""
        return [table for table in self.tables if table.array and table.path == path]

    def find_key(self, table: TomlTable, keys: tuple[str, ...]) -> int | None:
        """Return the offset of the line assigning the (dotted) key ``keys`` in ``table``."""
        if not keys:
            return table.start
        match = _toml_key_pattern(keys).search(self.text, table.body, table.end)
        return None if match is None else match.start()

    def find(self, path: tuple[str, ...]) -> int | None:
        """Return the offset where ``path`` is defined: its own header, or a key in a parent table.

        Falls back to the deepest defined prefix of ``path``; ``None`` when none is found.
        """
        for depth in range(len(path), 0, -1):
            offset = self._find_exact(path[:depth])
            if offset is not None:
                return offset
        return None

    def _find_exact(self, path: tuple[str, ...]) -> int | None:
        for split in range(len(path), -1, -1):
            prefix, rest = path[:split], path[split:]
            candidates = (
                [self.root]
                if not prefix
                else [t for t in self.tables if t.path == prefix and not t.array]
            )
            for table in candidates:
                offset = self.find_key(table, rest)
                if offset is not None:
                    return offset
        return None

    def find_value(self, value: str, start: int, end: int | None = None) -> int | None:
        """Return the offset of the quoted string ``value`` first met in ``[start, end)``."""
        stop = len(self.text) if end is None else end
        found = [
            self.text.find(form, start, stop)
            for form in (json.dumps(value, ensure_ascii=False), f"'{value}'")
        ]
        hits = [offset for offset in found if offset >= 0]
        return min(hits) if hits else None


# Hosts of PyPI itself: a package source or index there is the registry the scan looks up.
PYPI_HOSTS = frozenset({"pypi.org", "pypi.python.org", "test.pypi.org"})


def is_pypi_url(url: object) -> bool:
    """Whether ``url`` (a manifest's package source URL) is on PyPI's own hosts."""
    from urllib.parse import urlsplit  # noqa: PLC0415 - lazy: start-up

    try:
        host = urlsplit(url).hostname if isinstance(url, str) else None
    except ValueError:
        host = None
    return host in PYPI_HOSTS


def index_not_used(path: str, line: int | None, label: str) -> ManifestProblem:
    """The warning for a package source/index a manifest declares that lookups do not use.

    ``label`` names it as the manifest does (``package source 'private'``), never by URL,
    which may hold credentials.
    """
    message = (
        f"{label} is not used for lookups: packages are looked up on the "
        "configured PyPI base (--registry pypi=URL or PIP_INDEX_URL)"
    )
    return ManifestProblem(path, line, message, "warning")


def package_tables(
    path: str, data: dict[str, object], locator: TomlLocator
) -> tuple[list[tuple[dict[str, object], int | None]], list[ManifestProblem]]:
    """Return the ``[[package]]`` tables of a TOML lockfile with the line of each ``name`` key.

    Used by ``uv.lock`` and ``poetry.lock``; a ``package`` key that is not an array, and each
    element that is not a table, is a problem.
    """
    entries = data.get("package", [])
    if not isinstance(entries, list):
        line = locator.line(locator.find(("package",)))
        return [], [ManifestProblem(path, line, "`package` must be an array of tables")]
    headers = locator.array_tables(("package",))
    tables: list[tuple[dict[str, object], int | None]] = []
    problems: list[ManifestProblem] = []
    for index, entry in enumerate(entries):
        if not isinstance(entry, dict):
            line = locator.line(locator.find(("package",)))
            message = f"`package` element {index + 1} must be a table, got {entry!r}"
            problems.append(ManifestProblem(path, line, message))
            continue
        line = None
        if index < len(headers):
            header = headers[index]
            offset = locator.find_key(header, ("name",))
            line = locator.line(header.start if offset is None else offset)
        tables.append((entry, line))
    return tables, problems


def pep508_dependency(
    requirement: str,
    *,
    manager: str,
    file: str,
    line: int | None,
    dep_type: str,
    datasource: str,
    versioning: str,
) -> Dependency:
    """Build a dependency from one PEP 508 requirement string (``name[extras] spec ; marker``).

    ``declared`` is the specifier as written (parentheses of the ``name (>=1,<2)`` form
    dropped) or the URL of a ``name @ url`` requirement; ``constraint`` is the normalised
    ``SpecifierSet`` text or ``None`` when empty. URL requirements are skipped: VCS URLs
    (``git+`` …), ``file:`` URLs (local path) and other URLs (direct reference).

    Raises:
        InvalidRequirement: ``requirement`` is not valid PEP 508.
    """
    # packaging's parsers compile their grammar at import (about 25 ms): a scan of npm or
    # container manifests alone never needs them (issue 12: start-up).
    from packaging.requirements import InvalidRequirement, Requirement  # noqa: PLC0415 - lazy
    from packaging.utils import canonicalize_name  # noqa: PLC0415 - lazy: start-up

    simple = _simple_requirement(requirement)
    if simple is not None:
        name, constraint = simple
        return Dependency(
            manager=manager,
            file=file,
            line=line,
            name=name,
            package_name=canonicalize_name(name),
            datasource=datasource,
            versioning=versioning,
            dep_type=dep_type,
            declared=_written_specifier(requirement),
            constraint=constraint,
        )
    try:
        req = Requirement(requirement)
        markers = str(req.marker) if req.marker is not None else None
        constraint = None if req.url else str(req.specifier) or None
    except InvalidRequirement:
        raise
    except ValueError:  # packaging's int() of a number over Python's digit limit
        raise InvalidRequirement("a version number with too many digits") from None
    skip_reason: str | None = None
    if req.url:
        declared: str | None = req.url
        skip_reason = url_skip_reason(req.url)
    else:
        declared = _written_specifier(requirement)
    return Dependency(
        manager=manager,
        file=file,
        line=line,
        name=req.name,
        package_name=canonicalize_name(req.name),
        datasource=datasource,
        versioning=versioning,
        dep_type=dep_type,
        declared=declared,
        constraint=constraint,
        skip_reason=skip_reason,
        markers=markers,
        extras=tuple(sorted(req.extras)),
    )


# The common requirement: a name, then nothing or comma-separated ``OP VERSION`` clauses; no
# extras, markers, URL or parentheses. Spaces and tabs only, as packaging's tokenizer reads them.
_SIMPLE_REQUIREMENT = re.compile(
    r"[ \t]*([A-Za-z0-9](?:[A-Za-z0-9._-]*[A-Za-z0-9])?)[ \t]*"
    r"((?:===|==|~=|!=|<=|>=|<|>)[ \t]*[A-Za-z0-9.*+!_-]+[ \t]*"
    r"(?:,[ \t]*(?:===|==|~=|!=|<=|>=|<|>)[ \t]*[A-Za-z0-9.*+!_-]+[ \t]*)*)?"
)


def _simple_requirement(requirement: str) -> tuple[str, str | None] | None:
    """``(name, constraint)`` of a requirement of the common form, else ``None``.

    What ``Requirement`` gives for it (its name, ``str`` of its specifier, no extras, marker
    or URL), at a fifth of the cost: only the specifiers are parsed, by ``SpecifierSet``.
    ``None`` for any other form, and for any specifier ``SpecifierSet`` refuses: the caller
    then parses the whole requirement, and says why it is invalid
    (tests/manager/test_pep508_fast_path.py: equal on generated and real requirements).
    """
    match = _SIMPLE_REQUIREMENT.fullmatch(requirement)
    if match is None:
        return None
    from packaging.specifiers import SpecifierSet  # noqa: PLC0415 - lazy: see pep508_dependency

    specifiers = match.group(2)
    if specifiers is None:
        return match.group(1), None
    try:
        constraint = str(SpecifierSet(specifiers))
    except ValueError:  # InvalidSpecifier, or a number over Python's digit limit
        return None
    return match.group(1), constraint or None


_VCS_PREFIXES = ("git+", "hg+", "svn+", "bzr+")
_REQUIREMENT_HEAD = re.compile(r"\s*[A-Za-z0-9][A-Za-z0-9._-]*\s*(?:\[[^\]]*\])?\s*")


def url_skip_reason(url: str) -> str:
    """Return why a Python requirement given by URL is not looked up (VCS, local, other URL)."""
    lowered = url.lower()
    if lowered.startswith(_VCS_PREFIXES):
        return "VCS requirement"
    if lowered.startswith("file:"):
        return "local path"
    return "direct URL reference"


def _written_specifier(requirement: str) -> str | None:
    head = _REQUIREMENT_HEAD.match(requirement)
    rest = requirement[head.end() :] if head is not None else ""
    rest = rest.split(";", 1)[0].strip()
    if rest.startswith("(") and rest.endswith(")"):
        rest = rest[1:-1].strip()
    return rest or None


def read_metadata_lock(
    path: str, text: str, key: str, known_majors: frozenset[str], label: str
) -> tuple[
    dict[str, object] | None, list[tuple[dict[str, object], int | None]], list[ManifestProblem]
]:
    """Parse a TOML lockfile whose format version is ``[metadata] <key>`` (poetry.lock, pdm.lock).

    Returns the document, the ``[[package]]`` tables with the line of each ``name`` key, and the
    problems: invalid TOML (then the document is ``None``) and, as a warning, a version whose
    major is not in ``known_majors`` (``label`` names it in the message: ``lock-version``).
    """
    data, problem = parse_toml(path, text)
    if data is None:
        return None, [], [] if problem is None else [problem]
    locator = TomlLocator(strip_bom(text))
    tables, problems = package_tables(path, data, locator)
    metadata = data.get("metadata")
    version = metadata.get(key) if isinstance(metadata, dict) else None
    if version is not None and str(version).split(".", 1)[0] not in known_majors:
        line = locator.line(locator.find(("metadata", key)))
        message = f"unknown {label} {version!r}; reading it as far as possible"
        problems.append(ManifestProblem(path, line, message, "warning"))
    return data, tables, problems


def read_lock_packages(
    path: str, text: str, known_versions: tuple[int, ...], label: str
) -> tuple[
    dict[str, object] | None, list[tuple[dict[str, object], int | None]], list[ManifestProblem]
]:
    """Parse a TOML lockfile with a top-level ``version`` and ``[[package]]`` tables.

    Returns the document, the package tables with the line of each ``name`` key, and the
    problems: invalid TOML (then the document is ``None``) and, as a warning, a ``version`` outside
    ``known_versions`` (``label`` names the format in the message, e.g. ``Cargo.lock``).
    """
    data, problem = parse_toml(path, text)
    if data is None:
        return None, [], [] if problem is None else [problem]
    locator = TomlLocator(strip_bom(text))
    tables, problems = package_tables(path, data, locator)
    version = data.get("version")
    if version is not None and (version not in known_versions or isinstance(version, bool)):
        line = locator.line(locator.find(("version",)))
        message = f"unknown {label} version {version!r}; reading it as far as possible"
        problems.append(ManifestProblem(path, line, message, "warning"))
    return data, tables, problems


# --- YAML documents (docker_compose, github_actions) -------------------------------------------

# Containers nested deeper than this are refused: libyaml's own limit (yaml_parser_t's
# max_nest_level), applied to the pure-Python parser too, whose scanner is quadratic in it.
YAML_MAX_DEPTH = 1000
# Nodes built plus keys copied by ``<<`` merges. Aliases share the node they name (never a
# copy), so an alias bomb costs its events; merges copy keys, and this bounds them.
YAML_BUDGET = 2_000_000
_YAML_NULLS = frozenset({"", "~", "null", "Null", "NULL"})
_YAML_FLOW_OPEN = re.compile(r"[\[{]")


class YamlNode(msgspec.Struct):
    """One node of a YAML document, with the 1-based line where it starts.

    ``kind`` is ``scalar``, ``sequence`` or ``mapping``. A scalar's ``value`` is its text
    (``None`` for a plain null: empty, ``~``, ``null``); ``quoted`` is true for a quoted or
    block scalar; ``tag`` is an explicit tag as written (``!reset``), kept as a name only: no
    node is ever constructed into a Python object (safe by design). A sequence has ``items``;
    a mapping has ``pairs`` keyed by each scalar key's text, the last of repeated keys winning
    (as docker compose and PyYAML keep it), with ``<<`` merge keys applied (YAML 1.1 merge
    type; explicit keys win over merged ones). A scalar's ``end_line`` (1-based) and
    ``end_column`` (0-based, in characters of the text after a leading BOM) are where its last
    character (a closing quote) ends, so a caller can read what follows it on that line, such
    as a trailing comment, which YAML parsers drop; both are 0 for other nodes.

    A node reached through an alias (``container: *img``) is the anchored node at the alias's
    line: its ``line`` and ``used_at`` are where the alias stands, and what ``get``,
    ``values`` and ``entries`` give of it is at that line too, so a problem or a row is
    reported where the value is used, not where its anchor was written (the anchor's
    ``end_line`` is kept: a trailing comment stands beside the anchored text).
    """

    kind: str
    line: int
    value: str | None = None
    quoted: bool = False
    tag: str | None = None
    items: list[YamlNode] = msgspec.field(default_factory=list)
    pairs: dict[str, YamlNode] = msgspec.field(default_factory=dict)
    end_line: int = 0
    end_column: int = 0
    used_at: int = 0

    def used(self, line: int) -> YamlNode:
        """This node as reached through an alias at ``line`` (a shallow copy; children shared)."""
        return replace(self, line=line, used_at=line)

    def _at_use(self, node: YamlNode) -> YamlNode:
        return node if not self.used_at else node.used(self.used_at)

    def get(self, key: str) -> YamlNode | None:
        """The value of ``key`` in a mapping node (``None`` when missing or not a mapping)."""
        found = self.pairs.get(key) if self.kind == "mapping" else None
        return None if found is None else self._at_use(found)

    def values(self) -> Iterator[YamlNode]:
        """A mapping's values in order (at the alias's line when reached through one)."""
        return (self._at_use(node) for node in self.pairs.values())

    def named(self) -> Iterator[tuple[str, YamlNode]]:
        """A mapping's keys and values in order (values as ``values`` gives them)."""
        return ((name, self._at_use(node)) for name, node in self.pairs.items())

    def entries(self) -> Iterator[YamlNode]:
        """A sequence's items in order (at the alias's line when reached through one)."""
        return (self._at_use(node) for node in self.items)

    def text(self) -> str | None:
        """A scalar's text (``None`` for a null or a node that is no scalar)."""
        return self.value if self.kind == "scalar" else None


class _YamlRefusedError(Exception):
    """A document the builder refuses (too deep, too large, an undefined alias)."""

    def __init__(self, line: int | None, message: str) -> None:
        super().__init__(message)
        self.line = line
        self.message = message


def _yaml_loader() -> type:
    """The safe loader class to parse with: libyaml's (``CSafeLoader``) when PyYAML has it."""
    import yaml  # noqa: PLC0415 - lazy: only a YAML manager pays for the import

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _flow_too_deep(text: str) -> bool:
    """Whether flow brackets could nest past ``YAML_MAX_DEPTH`` (quotes not considered).

    Only the pure-Python parser needs it: libyaml stops at its own nesting limit.
    """
    if len(_YAML_FLOW_OPEN.findall(text)) <= YAML_MAX_DEPTH:
        return False
    depth = 0
    for char in text:
        if char in "[{":
            depth += 1
            if depth > YAML_MAX_DEPTH:
                return True
        elif char in "]}":
            depth = max(0, depth - 1)
    return False


def load_yaml(path: str, text: str) -> tuple[list[YamlNode], ManifestProblem | None]:
    """Parse every document of a YAML text into ``YamlNode`` trees with line numbers.

    Parsing runs PyYAML's event parser (libyaml's when present) with a safe loader and builds
    the tree itself: no tag constructs an object (``!!python/object`` is only a tag), an alias
    refers to the node its anchor names instead of copying it, nesting deeper than
    ``YAML_MAX_DEPTH`` and more than ``YAML_BUDGET`` nodes or merged keys are refused. Returns
    the documents and ``None``, or the documents read before the problem and that problem (a
    syntax error at its line, NUL characters, a document refused).
    """
    nul = nul_problem(path, text)
    if nul is not None:
        return [], nul
    import yaml  # noqa: PLC0415 - lazy: only a YAML manager pays for the import

    loader = _yaml_loader()
    # libyaml reads UTF-8 only: a lone surrogate (undecodable input) becomes U+FFFD, which no
    # image name admits, so such a value is a problem at its line and the rest is still read.
    text = scrub_surrogates(strip_bom(text))
    if loader is yaml.SafeLoader and _flow_too_deep(text):
        message = f"invalid YAML: nested more than {YAML_MAX_DEPTH} levels deep"
        return [], ManifestProblem(path, None, message)
    builder = _YamlBuilder()
    try:
        for event in yaml.parse(text, Loader=loader):
            builder.feed(event)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line = None if mark is None else mark.line + 1
        reason = " ".join(str(exc.problem or exc.context or "syntax error").split())
        return builder.documents, ManifestProblem(path, line, f"invalid YAML: {reason}")
    except yaml.YAMLError as exc:
        reason = " ".join(str(exc).split()) or "syntax error"
        return builder.documents, ManifestProblem(path, None, f"invalid YAML: {reason}")
    except _YamlRefusedError as exc:
        return builder.documents, ManifestProblem(path, exc.line, f"invalid YAML: {exc.message}")
    return builder.documents, None


class _Open(msgspec.Struct):
    """A collection being built: the node, a pending mapping key, and its ``<<`` merges."""

    node: YamlNode
    key: YamlNode | None = None
    merges: list[YamlNode] = msgspec.field(default_factory=list)
    expects_key: bool = True


class _YamlBuilder:
    """Builds ``YamlNode`` trees from PyYAML events without recursion.

    Events are dispatched on their exact type (one dictionary look-up, not a chain of
    ``isinstance`` tests): a lockfile of 32k packages is a million events.
    """

    def __init__(self) -> None:
        import yaml  # noqa: PLC0415 - already imported by load_yaml

        self.documents: list[YamlNode] = []
        self.anchors: dict[str, YamlNode] = {}
        self.stack: list[_Open] = []
        self.spent = 0
        self._handlers: dict[type, Callable[[Any], None]] = {
            yaml.ScalarEvent: self._scalar,
            yaml.MappingStartEvent: self._start,
            yaml.SequenceStartEvent: self._start,
            yaml.MappingEndEvent: self._end,
            yaml.SequenceEndEvent: self._end,
            yaml.AliasEvent: self._alias,
            yaml.DocumentStartEvent: self._document,
        }
        self._sequence_start = yaml.SequenceStartEvent

    def feed(self, event: object) -> None:
        handler = self._handlers.get(type(event))
        if handler is not None:
            handler(event)

    @staticmethod
    def _line(event: Any) -> int:  # noqa: ANN401 - a PyYAML event
        mark = event.start_mark
        return 1 if mark is None else mark.line + 1

    def _document(self, event: Any) -> None:  # noqa: ANN401, ARG002 - a PyYAML event
        self.anchors = {}  # anchors do not cross documents (YAML 1.2 §9.1)

    def _alias(self, event: Any) -> None:  # noqa: ANN401 - a PyYAML event
        line = self._line(event)
        found = self.anchors.get(event.anchor or "")
        if found is None:
            raise _YamlRefusedError(line, f"found undefined alias {event.anchor!r}")
        # At the alias's own line: what it brings is reported where it is used.
        self.add(found.used(line), line)

    def _scalar(self, event: Any) -> None:  # noqa: ANN401 - a PyYAML event
        line = self._line(event)
        plain = not event.style and event.implicit[0]  # libyaml's plain style is ""
        value = None if plain and event.value in _YAML_NULLS else event.value
        node = YamlNode("scalar", line, value=value, quoted=not plain, tag=event.tag)
        end = event.end_mark
        if end is not None:
            node.end_line, node.end_column = end.line + 1, end.column
        if event.anchor:
            self.anchors[event.anchor] = node
        self.add(node, line)

    def _start(self, event: Any) -> None:  # noqa: ANN401 - a PyYAML event
        line = self._line(event)
        if len(self.stack) >= YAML_MAX_DEPTH:
            raise _YamlRefusedError(line, f"nested more than {YAML_MAX_DEPTH} levels deep")
        kind = "sequence" if type(event) is self._sequence_start else "mapping"
        node = YamlNode(kind, line, tag=event.tag)
        if event.anchor:
            self.anchors[event.anchor] = node
        self.stack.append(_Open(node))

    def _end(self, event: Any) -> None:  # noqa: ANN401 - a PyYAML event
        done = self.stack.pop()
        self.merge(done)
        self.add(done.node, self._line(event), built=True)

    def anchor(self, event: object, node: YamlNode) -> None:
        anchor = getattr(event, "anchor", None)
        if anchor:
            self.anchors[anchor] = node

    def spend(self, count: int, line: int) -> None:
        self.spent += count
        if self.spent > YAML_BUDGET:
            raise _YamlRefusedError(line, f"more than {YAML_BUDGET} nodes and merged keys")

    def add(self, node: YamlNode, line: int, *, built: bool = False) -> None:
        """Put a finished node into the collection being built (or end a document with it)."""
        self.spend(0 if built else 1, line)
        if not self.stack:
            self.documents.append(node)
            return
        top = self.stack[-1]
        if top.node.kind == "sequence":
            top.node.items.append(node)
        elif top.expects_key:
            top.key, top.expects_key = node, False
        else:
            key, top.key, top.expects_key = top.key, None, True
            name = None if key is None or key.kind != "scalar" else key.value
            if name == "<<" and key is not None and not key.quoted:
                merged = node.items if node.kind == "sequence" else [node]
                top.merges.extend(m for m in merged if m.kind == "mapping")
            elif name is not None:
                top.node.pairs.pop(name, None)  # a repeated key moves to where it last stood
                top.node.pairs[name] = node

    def merge(self, done: _Open) -> None:
        # YAML 1.1 merge: the earlier of several merged mappings wins, explicit keys win all.
        for merged in done.merges:
            self.spend(len(merged.pairs), done.node.line)
            for name, value in merged.named():
                done.node.pairs.setdefault(name, value)


# --- Container images (dockerfile, docker_compose, github_actions) -----------------------------

IMAGE_DATASOURCE = paths.IMAGE_DATASOURCE
IMAGE_VERSIONING = "docker"
# Official images whose tags follow a narrower notion of stable (Renovate's config:recommended
# workarounds:nodeDockerVersioning and workarounds:ubuntuDockerVersioning): only LTS lines.
IMAGE_VERSIONINGS = {
    "docker.io/library/node": "node_image",
    "docker.io/library/ubuntu": "ubuntu_image",
}
_IMAGE_HEAD = re.compile(r"[^:@]*")


_SHOWN_CHARS = 80


def shown(text: str) -> str:
    """``repr(text)`` for a message, its start and its length when it is long (a report cell)."""
    if len(text) <= _SHOWN_CHARS:
        return repr(text)
    return f"{text[:60]!r}… ({len(text)} characters)"


def image_row(
    reference: str, *, manager: str, file: str, line: int | None, dep_type: str
) -> Dependency | ManifestProblem:
    """The row of one image reference (variables already substituted), or its problem.

    The Dependency shape of a container image (``models.Dependency``): ``name`` the image as
    written without tag or digest, ``package_name`` its canonical ``registry/repository``,
    ``constraint`` the tag (``latest`` when neither tag nor digest is written, ``None`` for a
    digest alone), ``declared`` the reference, ``digest`` the pinned digest. An invalid
    reference (``imageref.parse_image_reference``) is a problem naming the file and line: it
    can name no image to look up, unlike a skipped row, which still names one. The ``node``
    and ``ubuntu`` official images have their own versionings (``IMAGE_VERSIONINGS``: only
    their LTS lines are stable), any other image the ``docker`` one.
    """
    from patchula.imageref import (  # noqa: PLC0415 - lazy: a scan without images never needs it
        DEFAULT_TAG,
        InvalidImageReference,
        parse_image_reference,
    )

    try:
        ref = parse_image_reference(reference)
    except InvalidImageReference as exc:
        return ManifestProblem(file, line, f"invalid image reference {shown(reference)}: {exc}")
    constraint = ref.tag if ref.tag is not None or ref.digest is not None else DEFAULT_TAG
    return Dependency(
        manager=manager,
        file=file,
        line=line,
        name=ref.familiar,
        package_name=ref.canonical,
        datasource=IMAGE_DATASOURCE,
        versioning=IMAGE_VERSIONINGS.get(ref.canonical, IMAGE_VERSIONING),
        dep_type=dep_type,
        declared=reference,
        constraint=constraint,
        digest=ref.digest,
    )


def skipped_image_row(
    written: str, *, manager: str, file: str, line: int | None, dep_type: str, reason: str
) -> Dependency:
    """The skipped row of an image whose reference is not known here (a variable, an expression).

    ``declared`` is ``written`` (known variables substituted, unknown ones kept as written);
    when the name before any tag parses as an image, ``name`` and ``package_name`` are its own
    (``python:${VERSION}`` is still ``docker.io/library/python``), else both are ``written``.
    """
    name = package_name = written
    head = _IMAGE_HEAD.match(written)
    candidate = "" if head is None else head.group()
    if candidate and "$" not in candidate and "{" not in candidate:
        from patchula.imageref import (  # noqa: PLC0415 - lazy: see image_row
            InvalidImageReference,
            parse_image_reference,
        )

        try:
            ref = parse_image_reference(candidate)
        except InvalidImageReference:
            pass
        else:
            name, package_name = ref.familiar, ref.canonical
    return Dependency(
        manager=manager,
        file=file,
        line=line,
        name=name,
        package_name=package_name,
        datasource=IMAGE_DATASOURCE,
        versioning=IMAGE_VERSIONING,
        dep_type=dep_type,
        declared=written,
        constraint=None,
        skip_reason=reason,
    )
