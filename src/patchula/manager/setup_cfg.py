"""The ``setup.cfg`` manager: setuptools' declarative ``[options]`` requirements."""

from __future__ import annotations

import configparser
import re

import msgspec
from packaging.requirements import InvalidRequirement
from packaging.utils import canonicalize_name

from patchula.manager import paths
from patchula.manager.base import ReadFile, nul_problem, pep508_dependency, strip_bom
from patchula.models import Dependency, ExtractResult, ManifestProblem
from patchula.versioning import pep440

ID = "setup_cfg"
DATASOURCE = "pypi"
matches = paths.setup_cfg  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "pep440"

# `[options]` keys holding requirement lists → their dep_type (Renovate's setup-cfg depTypes).
OPTION_TYPES = {"install_requires": "install", "setup_requires": "setup", "tests_require": "test"}
EXTRAS_SECTION = "options.extras_require"
# Why a `file:` directive gives no rows (setuptools reads the named files at build time).
FILE_DIRECTIVE_REASON = (
    "`file:` directive: setuptools reads these requirements from the named file(s) at build"
    " time; not followed (a requirements file is scanned on its own when discovery finds it)"
)
SELF_REFERENCE_REASON = "the project itself (self-referential extra)"

# configparser's own patterns (Lib/configparser.py: SECTCRE, OPTCRE, NONSPACECRE).
_SECTION = re.compile(r"\[(?P<header>.+)\]")
_OPTION = re.compile(r"(?P<option>.*?)\s*(?P<vi>[=:])\s*(?P<value>.*)$")
_NONSPACE = re.compile(r"\S")
_COMMENT_PREFIXES = ("#", ";")
_PROJECT_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    r"""Extract the requirements of a setuptools ``setup.cfg`` (declarative config).

    Reads ``[options]`` ``install_requires`` (dep_type ``install``), ``setup_requires``
    (``setup``) and ``tests_require`` (``test``), and each extra of
    ``[options.extras_require]`` (``extra:<name>``), Renovate's setup-cfg depTypes. The file
    is parsed as setuptools parses it (``setuptools.dist._parse_config_files``: the stdlib
    ``configparser.ConfigParser`` with case-kept option names; ``#`` and ``;`` start a
    full-line comment; an indented line continues the value; a dashed key
    ``install-requires`` is read as ``install_requires``, as setuptools still does), and each
    value as ``setuptools.config.setupcfg`` splits a requirement list
    (https://setuptools.pypa.io/en/latest/userguide/declarative_config.html): one entry a
    line, or a one-line value split at ``;``; lines starting with ``#`` dropped, then
    ``pkg_resources``-style ``␠#`` trailing comments dropped and ``\``-continued lines joined.
    Each row is at the line its requirement is written on. A ``file:`` directive is one
    skipped row (``FILE_DIRECTIVE_REASON``); an invalid requirement, a syntax error (at the
    line ``configparser`` names) or a duplicate section or option is a problem.
    ``project_name`` is ``[metadata] name``, PEP 503 normalised; a requirement naming it (a
    self-referential extra) is skipped. ``[options] python_requires`` (``python-requires``
    too), the project's Requires-Python, is every row's ``requires_python``
    (``policy.requires_python``); an invalid one is a problem at its line and bounds nothing.
    An empty file gives an empty result.
    """
    nul = nul_problem(path, text)
    if nul is not None:
        return ExtractResult(problems=(nul,))
    text = strip_bom(text)
    if not text.strip():
        return ExtractResult()
    parser = configparser.ConfigParser()
    parser.optionxform = str  # type: ignore[assignment,method-assign] # setuptools keeps case
    try:
        parser.read_string(text, source=path)
    except configparser.Error as exc:
        return ExtractResult(problems=(_syntax_problem(path, text, exc),))
    collector = _Collector(path, _ValueLines.of(text))
    if parser.has_section("options"):
        for key in parser.options("options"):
            dep_type = OPTION_TYPES.get(key.replace("-", "_"))
            if dep_type is not None:
                collector.option(parser, "options", key, dep_type)
    if parser.has_section(EXTRAS_SECTION):
        for extra in parser.options(EXTRAS_SECTION):
            collector.option(parser, EXTRAS_SECTION, extra, f"extra:{extra}")
    name = _metadata_name(parser)
    requires_python = collector.python_requires(parser)
    dependencies = tuple(
        msgspec.structs.replace(
            dep,
            skip_reason=SELF_REFERENCE_REASON
            if name is not None and dep.skip_reason is None and dep.package_name == name
            else dep.skip_reason,
            requires_python=requires_python,
        )
        for dep in collector.dependencies
    )
    return ExtractResult(
        dependencies=dependencies, problems=tuple(collector.problems), project_name=name
    )


def _metadata_name(parser: configparser.ConfigParser) -> str | None:
    try:
        name = parser.get("metadata", "name", raw=True, fallback=None)
    except configparser.Error:
        return None
    if isinstance(name, str) and _PROJECT_NAME.fullmatch(name.strip()):
        return canonicalize_name(name.strip())
    return None


def _syntax_problem(path: str, text: str, exc: configparser.Error) -> ManifestProblem:
    """The problem of a file ``configparser`` refuses, at the line it names (if any)."""
    line: int | None = getattr(exc, "lineno", None)
    errors = getattr(exc, "errors", None)  # ParsingError: [(line, text)], each line refused
    if line is None and errors:
        line = errors[0][0]
    if isinstance(exc, configparser.MissingSectionHeaderError):
        message = "invalid setup.cfg: the first setting comes before any [section] header"
    elif isinstance(exc, configparser.DuplicateSectionError):
        message = f"invalid setup.cfg: section [{exc.section}] appears twice"
    elif isinstance(exc, configparser.DuplicateOptionError):
        message = f"invalid setup.cfg: `{exc.option}` appears twice in [{exc.section}]"
    elif isinstance(exc, configparser.ParsingError):
        message = "invalid setup.cfg: a line that is no section header, setting or continuation"
    else:
        message = f"invalid setup.cfg: {str(exc).splitlines()[0]}"
    if line is not None:
        line = min(line, text.rstrip().count("\n") + 1)
    return ManifestProblem(path, line, message)


class _ValueLines(msgspec.Struct):
    """Where each option's value lines are: ``(section, option)`` → ``[(line, text)]``.

    Found the way ``configparser.RawConfigParser._read_inner`` reads them (full-line
    comments skipped, a line indented deeper than its option continues it, blank lines
    kept), so a value's entries are numbered by the lines they are written on.
    """

    lines: dict[tuple[str, str], list[tuple[int, str]]]

    @classmethod
    def of(cls, text: str) -> _ValueLines:
        found: dict[tuple[str, str], list[tuple[int, str]]] = {}
        section: str | None = None
        current: list[tuple[int, str]] | None = None
        indent = 0
        for number, raw in enumerate(text.splitlines(), start=1):
            stripped = raw.strip()
            if not stripped or stripped.startswith(_COMMENT_PREFIXES):
                continue
            first = _NONSPACE.search(raw)
            level = first.start() if first is not None else 0
            if current is not None and level > indent:
                current.append((number, stripped))
                continue
            indent = level
            header = _SECTION.match(stripped)
            if header is not None:
                section, current = header.group("header"), None
                continue
            option = _OPTION.match(stripped)
            if option is None or section is None:
                current = None
                continue
            current = [(number, option.group("value").strip())]
            found[(section, option.group("option").rstrip())] = current
        return cls(found)


class _Collector(msgspec.Struct):
    """Collects the rows and problems of one ``setup.cfg``."""

    path: str
    value_lines: _ValueLines
    dependencies: list[Dependency] = msgspec.field(default_factory=list)
    problems: list[ManifestProblem] = msgspec.field(default_factory=list)

    def option(
        self, parser: configparser.ConfigParser, section: str, key: str, dep_type: str
    ) -> None:
        """Add the rows of the requirement list at ``[section] key``."""
        written = self.value_lines.lines.get((section, key), [])
        key_line = written[0][0] if written else None
        try:
            value = parser.get(section, key)
        except configparser.InterpolationError as exc:
            message = f"`{key}` in [{section}]: {str(exc).splitlines()[0]}"
            self.problems.append(ManifestProblem(self.path, key_line, message))
            return
        if value.strip().startswith("file:"):
            self._file_directive(value.strip(), key_line, dep_type)
            return
        # setuptools' `_parse_list`: split at newlines when configparser's value has any (one
        # entry under the key is "\nentry"), else at `;`.
        one_line = "\n" not in value
        entries = value.split(";") if one_line else value.splitlines()
        cursor = 0
        pending: tuple[int | None, str] | None = None
        for raw in entries:
            entry = raw.strip()
            if not entry or entry.startswith("#"):
                continue
            line = key_line
            if not one_line:
                line, cursor = _line_of(entry, written, cursor, key_line)
            entry = entry.partition(" #")[0].strip()  # pkg_resources' drop_comment
            if pending is not None:
                line, entry = pending[0], pending[1] + " " + entry
                pending = None
            if entry.endswith("\\"):  # pkg_resources' join_continuation
                pending = (line, entry[:-1].strip())
                continue
            if entry:
                self._requirement(entry, line, dep_type, split=one_line and ";" in value)
        if pending is not None and pending[1]:
            self._requirement(pending[1], pending[0], dep_type, split=False)

    def python_requires(self, parser: configparser.ConfigParser) -> str | None:
        """``[options] python_requires``: the Pythons the project supports, or ``None``.

        setuptools writes it into the core metadata as ``Requires-Python``
        (https://setuptools.pypa.io/en/latest/userguide/declarative_config.html, ``options``
        table: ``python_requires``, a PEP 440 specifier set).
        """
        if not parser.has_section("options"):
            return None
        key = next(
            (k for k in parser.options("options") if k.replace("-", "_") == "python_requires"),
            None,
        )
        if key is None:
            return None
        written = self.value_lines.lines.get(("options", key), [])
        line = written[0][0] if written else None
        value = " ".join(parser.get("options", key, raw=True).split())
        if not value:
            return None
        if not pep440.is_valid_constraint(value) or pep440.UNION in value:
            message = f"invalid python_requires {value[:80]!r}"
            self.problems.append(ManifestProblem(self.path, line, message))
            return None
        return value

    def _requirement(self, entry: str, line: int | None, dep_type: str, *, split: bool) -> None:
        try:
            dependency = pep508_dependency(
                entry,
                manager=ID,
                file=self.path,
                line=line,
                dep_type=dep_type,
                datasource=DATASOURCE,
                versioning=VERSIONING,
            )
        except InvalidRequirement as exc:
            reason = str(exc).splitlines()[0] if str(exc) else "invalid"
            hint = (
                " (setuptools splits a one-line value at ';': write each requirement,"
                " with its marker, on a line of its own)"
                if split
                else ""
            )
            message = f"invalid requirement {entry!r}: {reason}{hint}"
            self.problems.append(ManifestProblem(self.path, line, message))
            return
        self.dependencies.append(dependency)

    def _file_directive(self, value: str, line: int | None, dep_type: str) -> None:
        files = ", ".join(part.strip() for part in value[len("file:") :].split(",") if part.strip())
        self.dependencies.append(
            Dependency(
                manager=ID,
                file=self.path,
                line=line,
                name=files or value,
                package_name=files or value,
                datasource=DATASOURCE,
                versioning=VERSIONING,
                dep_type=dep_type,
                declared=value,
                constraint=None,
                skip_reason=FILE_DIRECTIVE_REASON,
            )
        )


def _line_of(
    entry: str, written: list[tuple[int, str]], cursor: int, fallback: int | None
) -> tuple[int | None, int]:
    """The line of the next written value line holding ``entry`` from ``cursor``, and after."""
    for index in range(cursor, len(written)):
        number, text = written[index]
        if entry in text:
            return number, index + 1
    return fallback, cursor
