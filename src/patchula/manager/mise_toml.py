"""The ``mise.toml`` manager: the ``[tools]`` table of mise's config files, one row per version.

Files (``jdx/mise:docs/configuration.md``): ``mise.toml``, ``.mise.toml``, ``mise.<env>.toml``
and ``mise.local.toml`` (also dotted), ``.config/mise.toml``, ``.config/mise/config.toml``,
``.mise/config.toml``, ``mise/config.toml`` and ``conf.d/*.toml`` under ``.config/mise/`` or
``.mise/``. Values (``jdx/mise:schema/mise.json``, registries.md §7): a string; a list of
versions, every one a row; a table with ``version`` (or ``prefix``, ``ref``, ``path`` as mise
reads them) plus options (``os``, ``postinstall`` …), kept out of the row. Keys may name a
backend (``"cargo:cargo-nextest"``) and carry ``[k=v]`` options; resolution is ``tools``'. The
file's own ``[tool_alias]`` (formerly ``[alias]``) entries that name a backend
(``mytool = "github:owner/repo"``) resolve its tools first, as mise gives them precedence over
the registry (``jdx/mise:docs/registry.md``); version aliases (``[alias.node.versions]``) are
not backends and are left alone.
"""

from __future__ import annotations

import json
import re

import msgspec

from patchula.manager import paths
from patchula.manager.base import ReadFile, TomlLocator, parse_toml, strip_bom
from patchula.models import Dependency, ExtractResult, ManifestProblem
from patchula.tools import VERSIONING, ToolMapping, shipped, tool_row

__all__ = ["DATASOURCE", "ID", "VERSIONING", "extract", "matches"]

ID = "mise_toml"
DATASOURCE = "node"  # the datasource most of its rows use; each row names its own
matches = paths.mise_toml  # the path rule: manager/paths.py (discovery imports no manager)
DEP_TYPE = "tools"

# A ``key =`` at the start of a line: bare, dotted, "basic" or 'literal' (TOML 1.0 keys).
_KEY_LINE = re.compile(r"""[ \t]*("(?:[^"\\\n]|\\.)*"|'[^'\n]*'|[A-Za-z0-9_-]+)[ \t]*=""")
_TABLE_KEYS = ("version", "prefix", "ref", "path")


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract one row per tool version of ``[tools]`` (dep_type ``tools``).

    A value that is none of mise's shapes is a problem naming the key and its line; the other
    tools are still read.
    """
    if not text.strip():
        return ExtractResult()
    data, problem = parse_toml(path, text)
    if data is None:
        return ExtractResult(problems=() if problem is None else (problem,))
    tools = data.get("tools")
    if tools is None:
        return ExtractResult()
    collector = _Collector(path, strip_bom(text), mapping=_aliases(data))
    if not isinstance(tools, dict):
        collector.problem(collector.header(), "`tools` must be a table")
        return collector.result()
    for name, value in tools.items():
        collector.tool(name, value)
    return collector.result()


def _aliases(data: dict[str, object]) -> ToolMapping | None:
    """The shipped mapping with this file's ``[tool_alias]``/``[alias]`` backends on top."""
    found: dict[str, str] = {}
    for key in ("alias", "tool_alias"):  # the newer name wins
        table = data.get(key)
        if isinstance(table, dict):
            found.update(
                {k: v.strip() for k, v in table.items() if isinstance(v, str) and ":" in v}
            )
    if not found:
        return None
    base = shipped()
    return ToolMapping(base.tools, base.aliases, base.aqua, base.source, base.date, found)


class _Collector(msgspec.Struct):
    path: str
    text: str
    mapping: ToolMapping | None = None
    rows: list[Dependency] = msgspec.field(default_factory=list)
    problems: list[ManifestProblem] = msgspec.field(default_factory=list)
    _lines: dict[str, int] | None = None
    _locator: TomlLocator | None = None

    def locator(self) -> TomlLocator:
        if self._locator is None:
            self._locator = TomlLocator(self.text)
        return self._locator

    def header(self) -> int | None:
        locator = self.locator()
        return locator.line(locator.find(("tools",)))

    def line(self, name: str) -> int | None:
        """The line of ``name`` in ``[tools]``: one pass over the table's lines, then a lookup."""
        if self._lines is None:
            self._lines = {}
            locator = self.locator()
            tables = [t for t in locator.tables if t.path == ("tools",) and not t.array]
            for table in tables:
                start = locator.line(table.body) or 1
                body = self.text[table.body : table.end].splitlines()
                for number, line in enumerate(body, start):
                    match = _KEY_LINE.match(line)
                    if match is not None:
                        self._lines.setdefault(_key(match.group(1)), number)
        found = self._lines.get(name)
        return found if found is not None else self.header()

    def problem(self, line: int | None, message: str) -> None:
        self.problems.append(ManifestProblem(self.path, line, message))

    def result(self) -> ExtractResult:
        return ExtractResult(dependencies=tuple(self.rows), problems=tuple(self.problems))

    def tool(self, name: str, value: object) -> None:
        values = value if isinstance(value, list) else [value]
        for item in values:
            version = self.version(name, item)
            if version is not None:
                self.add(name, version)

    def version(self, name: str, item: object) -> str | None:
        """The version of one value as mise reads it (``prefix:``/``ref:``/``path:`` kept)."""
        if isinstance(item, str):
            return item
        if isinstance(item, dict):
            for key in _TABLE_KEYS:
                given = item.get(key)
                if isinstance(given, str):
                    return given if key == "version" else f"{key}:{given}"
            message = (
                f"tool `{name}`: a table needs a string `version` (or `prefix`, `ref`, `path`)"
            )
            self.problem(self.line(name), message)
            return None
        message = (
            f"tool `{name}` must be a version string, a list or a table, not {type(item).__name__}"
        )
        self.problem(self.line(name), message)
        return None

    def add(self, name: str, version: str) -> None:
        self.rows.append(
            tool_row(
                manager=ID,
                file=self.path,
                line=self.line(name),
                tool=name,
                version=version,
                dep_type=DEP_TYPE,
                mapping=self.mapping,
            )
        )


def _key(raw: str) -> str:
    """A TOML key as written → its name (basic strings unescaped as JSON, close enough)."""
    if raw.startswith('"'):
        try:
            return str(json.loads(raw))
        except ValueError:
            return raw[1:-1]
    if raw.startswith("'"):
        return raw[1:-1]
    return raw
