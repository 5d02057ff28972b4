"""The pip requirements file manager: requirements, constraints and `*.in` files, `-r`/`-c`."""

from __future__ import annotations

import codecs
import posixpath
import re
import shlex
from typing import TYPE_CHECKING, Literal
from urllib.parse import urlsplit

import msgspec
from msgspec.structs import replace
from packaging.requirements import InvalidRequirement
from packaging.utils import canonicalize_name

from patchula.errors import ManifestError
from patchula.manager import paths
from patchula.manager.base import (
    ReadFile,
    nul_problem,
    pep508_dependency,
    strip_bom,
    url_skip_reason,
)
from patchula.models import CompiledRequirements, Dependency, ExtractResult, ManifestProblem

if TYPE_CHECKING:
    from collections.abc import Iterator

ID = "requirements_txt"
DATASOURCE = "pypi"
matches = paths.requirements_txt  # the path rule: manager/paths.py (discovery imports no manager)
is_constraints_name = paths.is_constraints_name  # also by path alone: the scan asks it too
VERSIONING = "pep440"


# pip's COMMENT_RE (pip/_internal/req/req_file.py): `#` at line start or after whitespace.
_COMMENT = re.compile(r"(^|\s+)#.*$")
_URL = re.compile(r"[A-Za-z][A-Za-z0-9+.-]*://|file:", re.IGNORECASE)
_EGG = re.compile(r"[#&]egg=([A-Za-z0-9][A-Za-z0-9._-]*)")
_NAME = re.compile(r"[A-Za-z0-9]([A-Za-z0-9._-]*[A-Za-z0-9])?")
_ARCHIVE_SUFFIXES = (".whl", ".zip", ".tar.gz", ".tgz", ".tar.bz2", ".tar.xz", ".tar")
_MAX_PROBLEMS_PER_FILE = 20

# Options pip accepts in a requirements file
# (https://pip.pypa.io/en/stable/reference/requirements-file-format/#supported-options).
_INCLUDES = {"-r": "requirement", "--requirement": "requirement"}
_CONSTRAINTS = {"-c": "constraint", "--constraint": "constraint"}
_EDITABLE = frozenset({"-e", "--editable"})
_VALUED = frozenset(
    {
        "-i",
        "--index-url",
        "--extra-index-url",
        "-f",
        "--find-links",
        "--no-binary",
        "--only-binary",
        "--trusted-host",
        "--use-feature",
        "--global-option",
        "--config-settings",
        "--hash",
        *_INCLUDES,
        *_CONSTRAINTS,
        *_EDITABLE,
    }
)
_FLAGS = frozenset({"--no-index", "--prefer-binary", "--require-hashes", "--pre"})
# Options adding a source beside the index: pip may install a version only that source has,
# while the scan looks every package up on the run's PyPI registry, so each is a warning (its
# URL, which may carry a token, is never repeated).
_EXTRA_SOURCES = frozenset({"--extra-index-url", "-f", "--find-links"})
_NOT_FOLLOWED = (
    "not followed: packages are looked up on the run's PyPI registry (--registry pypi=URL), "
    "so a version only that source has is not in its release list"
)
# ``-i``/``--index-url`` replaces the index pip installs from (a private index or a mirror):
# the scan still looks packages up on the run's PyPI registry, so it is a warning of the same
# shape, unless it names PyPI's own index (pip's default, https://pypi.org/simple).
_INDEX_URL = frozenset({"-i", "--index-url"})
_INDEX_NOT_FOLLOWED = (
    "not followed: packages are looked up on the run's PyPI registry (--registry pypi=URL; "
    "point it at this index to look there), so a version only this index has is not in its "
    "release list"
)
_PYPI_HOSTS = frozenset({"pypi.org", "pypi.python.org"})

DepType = Literal["requirements", "constraint"]


_LEADING_NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]*")


# pip's BOMS, in its order (pip/_internal/utils/encoding.py): the UTF-16 mark is looked for
# before the UTF-32 ones, and ``codecs.BOM_UTF16`` is the machine's own (little-endian on
# every platform pip's users run: x86, arm64).
_BOMS = (
    (codecs.BOM_UTF8, "utf-8"),
    (codecs.BOM_UTF16_LE, "utf-16"),
    (codecs.BOM_UTF16_BE, "utf-16-be"),
    (codecs.BOM_UTF32_BE, "utf-32-be"),
)
# pip's ENCODING_RE, looked for in the first two lines when they start with ``#`` (PEP 263).
_CODING = re.compile(rb"coding[:=]\s*([-\w.]+)")


def decode(data: bytes, path: str) -> str:
    """Decode a requirements file that is not UTF-8 as pip does, or raise ``ManifestError``.

    pip reads every requirements file, and each it includes, with ``auto_decode``
    (pip/_internal/utils/encoding.py, used by ``req_file.get_file_content``): a byte-order
    mark (UTF-8, UTF-16, UTF-32) chooses the codec, else a ``# -*- coding: NAME -*-`` comment
    in the first two lines, else the locale's encoding, which the scan takes to be UTF-8 (the
    default of every CI runner and of Python's UTF-8 mode; a file that is not UTF-8 fails
    there as here). A UTF-32-LE mark begins with the UTF-16-LE one, which pip looks for first:
    pip reads such a file as UTF-16 and fails on every line, so it is a problem saying so.
    The scan calls this only for a file that is not UTF-8 (``NotUtf8Error``): a UTF-8 file
    reads the same whatever its coding comment says, for the ASCII of requirements.
    """
    if data.startswith(codecs.BOM_UTF32_LE):
        message = (
            "UTF-32-LE text: pip reads it as UTF-16 (its byte-order mark begins with UTF-16's,"
            " which pip looks for first) and cannot parse it; save it as UTF-8"
        )
        raise ManifestError(message, file=path, line=1)
    for bom, encoding in _BOMS:
        if data.startswith(bom):
            return _decoded(data, len(bom), encoding, path)
    for number, line in enumerate(data.split(b"\n")[:2], 1):
        found = _CODING.search(line) if line.startswith(b"#") else None
        if found is not None:
            return _decoded(data, 0, found.group(1).decode("ascii"), path, number)
    return _decoded(data, 0, "utf-8", path)


def _decoded(data: bytes, start: int, encoding: str, path: str, coding_line: int = 1) -> str:
    """``data[start:]`` decoded as ``encoding``; a failure is a problem at its line."""
    try:
        return data[start:].decode(encoding)
    except LookupError:  # an unknown name, or no text encoding ("hex")
        message = f"coding comment names {encoding!r}, no text encoding: pip cannot read it"
        raise ManifestError(message, file=path, line=coding_line) from None
    except UnicodeDecodeError as exc:
        head = data[start : start + exc.start].decode(encoding, errors="replace")
        name = codecs.lookup(encoding).name.upper()
        offset = start + exc.start
        message = f"not {name} text (invalid byte 0x{data[offset]:02x} at offset {offset})"
        raise ManifestError(message, file=path, line=head.count("\n") + 1) from None


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:
    r"""Extract the requirements of a pip requirements file and of the files it includes.

    Follows pip's requirements file format
    (https://pip.pypa.io/en/stable/reference/requirements-file-format/): ``#`` comments,
    ``\`` continuations (a requirement's line is its first physical line), option lines
    (ignored), per-requirement options such as ``--hash`` (stripped). ``-r``/``-c`` includes
    are resolved relative to the including file and read through ``read``; their entries carry
    their own file and line, constraint files' entries have ``dep_type`` ``"constraint"``
    (also those of a file named as constraints, ``is_constraints_name``: pip installs nothing
    from a constraints file, so the scan makes no rows of them; they pin the requirements),
    and their paths are listed in ``included_files``. Requirements are PEP 508; editable,
    URL, VCS and path requirements are reported skipped. Invalid lines, unreadable or escaping
    includes and include cycles are problems; ``${VAR}`` references are kept as text. A file
    pip-compile or ``uv pip compile`` wrote has ``compiled`` set (``compiled_header``,
    ``via_annotations``): the scan pairs it with its sources.
    """
    walker = _Walker(read=read, visited={path})
    walker.visit(path, text, "constraint" if is_constraints_name(path) else "requirements", (path,))
    dependencies = walker.dependencies
    if walker.prereleases:
        # `--pre` is a global option: pip admits prereleases for every requirement it installs.
        dependencies = [replace(dep, prereleases=True) for dep in dependencies]
    return ExtractResult(
        dependencies=tuple(dependencies),
        problems=tuple(walker.problems),
        included_files=tuple(walker.included),
        compiled=_compiled(path, text, dependencies),
    )


def _compiled(path: str, text: str, dependencies: list[Dependency]) -> CompiledRequirements | None:
    """How pip-compile or uv compiled ``path`` (its header and ``# via`` annotations), if so.

    A file without a header (``--no-header``) but with annotations gives ``tool`` ``""``.
    """
    text = strip_bom(text)
    header = compiled_header(text)
    if header is None and "# via" not in text and "#via" not in text:
        return None
    own = {dep.line for dep in dependencies if dep.file == path and dep.line is not None}
    via = via_annotations(text, own)
    unsafe = unsafe_packages(text)
    if header is None:
        return CompiledRequirements(tool="", via=via, unsafe=unsafe) if via else None
    return replace(header, via=via, unsafe=unsafe)


# The headers pip-tools (piptools/writer.py) and uv (uv-resolver's requirements.txt writer)
# put at the top of what they compile; the command follows on a line of its own, ``#    cmd``.
_PIP_COMPILE_HEADER = re.compile(r"#\s*This file is autogenerated by pip-compile\b")
_UV_HEADER = re.compile(r"#\s*This file was autogenerated by uv\b")
_HEADER_COMMAND = re.compile(r"# {2,}(\S.*?)\s*")
_HEADER_LINES = 40  # a header is at the very top; nothing further down is one
# Options of pip-compile (pip-tools 7) and ``uv pip compile`` (uv 0.5-0.9) that take a value,
# so the value is not taken for a source file.
_COMPILE_VALUED_LONG = frozenset(
    {
        "--output-file",
        "--constraint",
        "--constraints",
        "--override",
        "--overrides",
        "--build-constraint",
        "--build-constraints",
        "--extra",
        "--index-url",
        "--extra-index-url",
        "--find-links",
        "--index",
        "--default-index",
        "--index-strategy",
        "--keyring-provider",
        "--pip-args",
        "--resolver",
        "--cache-dir",
        "--upgrade-package",
        "--unsafe-package",
        "--no-emit-package",
        "--trusted-host",
        "--allow-insecure-host",
        "--config",
        "--config-setting",
        "--annotation-style",
        "--newline",
        "--python",
        "--python-version",
        "--python-platform",
        "--prerelease",
        "--resolution",
        "--fork-strategy",
        "--exclude-newer",
        "--exclude-newer-package",
        "--group",
        "--only-group",
        "--no-group",
        "--format",
        "--no-binary",
        "--only-binary",
        "--torch-backend",
        "--link-mode",
        "--directory",
        "--project",
        "--build-deps-for",
        "--refresh-package",
        "--reinstall-package",
        "--no-build-isolation-package",
        "--color",
    }
)
_COMPILE_VALUED_SHORT = frozenset("ocifPpbC")
_COMPILE_OUTPUT = frozenset({"-o", "--output-file"})
# What a source of pip-compile / uv pip compile is: requirements files and project metadata.
_SOURCE_SUFFIXES = (".in", ".txt", ".toml", ".cfg", ".py")
_VIA = re.compile(r"#\s*via\b(.*)$")
_VIA_ENTRY = re.compile(r"\s+#\s+(\S.*?)\s*")


def compiled_header(text: str) -> CompiledRequirements | None:
    """Read pip-compile's or uv's header from a requirements file; ``None`` when it has none.

    Only the leading comment block is looked at (pip-tools' ``writer.py`` and uv write the
    header first). The command line is split as a shell does; the tool's own options that take
    a value (``-o``/``--output-file``, ``-c``, ``--extra``, ``--python-version`` …) are passed
    over, and a positional argument ending in ``.in``, ``.txt``, ``.toml``, ``.cfg`` or ``.py``
    is a source. ``uv export`` writes the project's lock (its source is ``uv.lock``). A
    command that is not ``pip-compile`` (or ``python -m piptools compile``), ``uv pip compile``
    nor ``uv export`` is ``custom``: it names no sources.
    """
    lines = text.splitlines()[:_HEADER_LINES]
    tool = None
    for index, raw in enumerate(lines):
        line = raw.strip()
        if line and not line.startswith("#"):
            return None
        if _PIP_COMPILE_HEADER.match(line):
            tool = "pip-compile"
        elif _UV_HEADER.match(line):
            tool = "uv"
        if tool is not None:
            return _header_command(tool, lines[index + 1 :])
    return None


def _header_command(tool: str, rest: list[str]) -> CompiledRequirements:
    """The header's command, from the comment lines after its first line."""
    for raw in rest:
        if not raw.startswith("#"):
            break
        found = _HEADER_COMMAND.fullmatch(raw.rstrip())
        if found is not None:
            return _compile_arguments(tool, found.group(1))
    return CompiledRequirements(tool=tool)


def _compile_arguments(tool: str, command: str) -> CompiledRequirements:
    try:
        tokens = shlex.split(command)
    except ValueError:
        return CompiledRequirements(tool=tool, command=command, custom=True)
    head = [posixpath.basename(token.replace("\\", "/")) for token in tokens[:4]]
    if head[:1] == ["pip-compile"]:
        arguments = tokens[1:]
    elif head[:1] == ["uv"] and tokens[1:3] == ["pip", "compile"]:
        arguments = tokens[3:]
    elif head[:1] == ["uv"] and tokens[1:2] == ["export"]:
        # Written from the project's uv.lock (its groups and extras as asked), not compiled
        # from a requirements source: uv.lock is what it follows.
        return CompiledRequirements(tool=tool, command=command, sources=("uv.lock",))
    elif head[:1] and head[0].startswith("python") and tokens[1:4] == ["-m", "piptools", "compile"]:
        arguments = tokens[4:]
    else:
        return CompiledRequirements(tool=tool, command=command, custom=True)
    sources, output = _sources_and_output(arguments)
    return CompiledRequirements(tool=tool, command=command, sources=sources, output=output)


def _sources_and_output(arguments: list[str]) -> tuple[tuple[str, ...], str | None]:
    """The source files and the ``-o``/``--output-file`` of a compile command's arguments."""
    sources: list[str] = []
    output: str | None = None
    index = 0
    while index < len(arguments):
        arg = arguments[index]
        index += 1
        value: str | None = None
        if arg == "--":
            sources.extend(arguments[index:])
            break
        if arg.startswith("--"):
            option, equals, value = arg.partition("=")
            if not equals:
                value = None
                if option in _COMPILE_VALUED_LONG and index < len(arguments):
                    value, index = arguments[index], index + 1
        elif arg.startswith("-") and len(arg) > 1:
            option = arg[:2]
            if option[1] in _COMPILE_VALUED_SHORT:
                value = arg[2:] or None
                if value is None and index < len(arguments):
                    value, index = arguments[index], index + 1
        else:
            sources.append(arg)
            continue
        if option in _COMPILE_OUTPUT and value:
            output = value
    return tuple(s for s in sources if s.endswith(_SOURCE_SUFFIXES)), output


def via_annotations(text: str, lines: set[int]) -> tuple[tuple[int, tuple[str, ...]], ...]:
    """The ``# via`` annotations of the requirements starting at ``lines`` (line numbers).

    Both styles pip-compile and uv write: ``split`` (``    # via flask`` on the next line, or
    ``    # via`` then one ``    #   entry`` a line) and ``line`` (``pkg==1.0  # via a, b``),
    after any ``--hash`` continuation lines. Entries are as written: ``-r requirements.in``,
    ``-c constraints.txt``, ``flask``, ``project (pyproject.toml)``.
    """
    found: dict[int, list[str]] = {}
    current: int | None = None
    listing = False
    for number, raw in enumerate(text.splitlines(), 1):
        if number in lines:
            current, listing = number, False
            inline = raw.find(" #")
            head = _VIA.search(raw, inline) if inline >= 0 else None
            if head is not None:
                found.setdefault(number, []).extend(_entries(head.group(1)))
            continue
        stripped = raw.strip()
        if current is None or not stripped:
            listing = False
            continue
        if not stripped.startswith("#"):
            listing = False  # a --hash continuation, or an option line
            continue
        head = _VIA.match(stripped)
        if head is not None:
            entries = _entries(head.group(1))
            found.setdefault(current, []).extend(entries)
            listing = not entries
        elif listing and (entry := _VIA_ENTRY.fullmatch(raw)) is not None:
            found.setdefault(current, []).append(entry.group(1))
        else:
            listing = False
    return tuple((number, tuple(entries)) for number, entries in found.items() if entries)


# pip-tools' writer (piptools/writer.py, MESSAGE_UNSAFE): the packages after this line are
# commented out (``# pip``) unless ``--allow-unsafe`` pins them.
_UNSAFE_HEADER = "# The following packages are considered to be unsafe in a requirements file:"
_COMMENTED_NAME = re.compile(r"#\s*([A-Za-z0-9][A-Za-z0-9._-]*)\s*")


def unsafe_packages(text: str) -> tuple[str, ...]:
    """The packages a pip-compile output leaves out as unsafe (``# pip`` lines), normalised."""
    start = text.find(_UNSAFE_HEADER)
    if start < 0:
        return ()
    names: list[str] = []
    for raw in text[start + len(_UNSAFE_HEADER) :].splitlines()[1:]:
        found = _COMMENTED_NAME.fullmatch(raw.strip())
        if found is None:
            if raw.strip().startswith("#") or not raw.strip():
                continue
            break  # a pin (--allow-unsafe): not left out
        names.append(canonicalize_name(found.group(1)))
    return tuple(names)


def _entries(text: str) -> list[str]:
    return [part.strip() for part in text.split(",") if part.strip()]


def logical_lines(text: str) -> Iterator[tuple[int, str]]:
    """Yield ``(first physical line number, logical line)`` with comments removed.

    Mirrors pip's ``join_lines`` and ``ignore_comments``: a trailing backslash joins the next
    line (a comment line ends the join), then ``#`` comments are cut and blank lines dropped.
    """
    start = 0
    parts: list[str] = []
    for number, raw in enumerate(text.splitlines(), 1):
        is_comment = _COMMENT.match(raw) is not None
        if raw.endswith("\\") and not is_comment:
            if not parts:
                start = number
            parts.append(raw.strip("\\"))
            continue
        joined = raw if not is_comment else " " + raw
        if parts:
            yield start, _uncomment("".join([*parts, joined]))
            parts = []
        else:
            yield number, _uncomment(joined)
    if parts:
        yield start, _uncomment("".join(parts))


def _uncomment(line: str) -> str:
    return _COMMENT.sub("", line).strip()


def _split_args_options(line: str) -> tuple[str, str]:
    """Split a logical line into the requirement part and its options, as pip does."""
    tokens = line.split(" ")
    for index, token in enumerate(tokens):
        if token.startswith("-"):
            return " ".join(tokens[:index]).strip(), " ".join(tokens[index:])
    return line.strip(), ""


class _Walker(msgspec.Struct):
    """Walks one requirements file and its includes, collecting rows and problems."""

    read: ReadFile
    visited: set[str]
    dependencies: list[Dependency] = msgspec.field(default_factory=list)
    problems: list[ManifestProblem] = msgspec.field(default_factory=list)
    included: list[str] = msgspec.field(default_factory=list)
    prereleases: bool = False  # a `--pre` line in this file or one it includes
    _counts: dict[str, int] = msgspec.field(default_factory=dict)

    def problem(
        self,
        file: str,
        line: int | None,
        message: str,
        severity: Literal["warning", "error"] = "error",
    ) -> None:
        count = self._counts.get(file, 0) + 1
        self._counts[file] = count
        if count <= _MAX_PROBLEMS_PER_FILE:
            self.problems.append(ManifestProblem(file, line, message, severity))
        elif count == _MAX_PROBLEMS_PER_FILE + 1:
            message = f"more than {_MAX_PROBLEMS_PER_FILE} problems; the rest are not reported"
            self.problems.append(ManifestProblem(file, None, message))

    def visit(self, path: str, text: str, dep_type: DepType, stack: tuple[str, ...]) -> None:
        nul = nul_problem(path, text)
        if nul is not None:
            self.problems.append(nul)
            return
        for number, line in logical_lines(strip_bom(text)):
            if not line:
                continue
            requirement, options = _split_args_options(line)
            if requirement:
                self.requirement(path, number, requirement, dep_type)
            else:
                self.options(path, number, options, dep_type, stack)

    def requirement(self, path: str, number: int, text: str, dep_type: DepType) -> None:
        if _URL.match(text) or _looks_like_path(text):
            self.dependencies.append(_unnamed(path, number, text, dep_type, editable=False))
            return
        try:
            dependency = pep508_dependency(
                text,
                manager=ID,
                file=path,
                line=number,
                dep_type=dep_type,
                datasource=DATASOURCE,
                versioning=VERSIONING,
            )
        except InvalidRequirement as exc:
            if "${" in text:
                # pip expands ${VAR} from the installing environment; the scan must not guess
                # it (nor read its own environment into a report: it may hold tokens).
                self.dependencies.append(_env_dependent(path, number, text, dep_type))
                return
            reason = str(exc).splitlines()[0] if str(exc) else "invalid"
            self.problem(path, number, f"invalid requirement {text!r}: {reason}")
            return
        self.dependencies.append(dependency)

    def options(
        self, path: str, number: int, options: str, dep_type: DepType, stack: tuple[str, ...]
    ) -> None:
        try:
            tokens = shlex.split(options)
        except ValueError as exc:
            self.problem(path, number, f"cannot split options {options!r}: {exc}")
            return
        for option, value in _parse_options(tokens):
            if option not in _VALUED and option not in _FLAGS:
                self.problem(path, number, f"unknown option {option!r} ignored", "warning")
            elif option in _VALUED and value is None:
                self.problem(path, number, f"option {option!r} needs a value")
            elif value is None:
                self.prereleases = self.prereleases or option == "--pre"
            elif option in _EXTRA_SOURCES:
                self.problem(path, number, f"option {option} {_NOT_FOLLOWED}", "warning")
            elif option in _INDEX_URL and not _is_pypi_index(value):
                self.problem(path, number, f"option {option} {_INDEX_NOT_FOLLOWED}", "warning")
            elif option in _EDITABLE:
                dependency = _unnamed(path, number, value, dep_type, editable=True)
                self.dependencies.append(dependency)
            elif option in _INCLUDES or option in _CONSTRAINTS:
                nested: DepType = "constraint" if option in _CONSTRAINTS else dep_type
                self.include(path, number, value, nested, stack)

    def include(
        self, path: str, number: int, target: str, dep_type: DepType, stack: tuple[str, ...]
    ) -> None:
        if _URL.match(target):
            message = f"remote include {target!r} is not followed"
            self.problem(path, number, message, "warning")
            return
        joined = posixpath.normpath(posixpath.join(posixpath.dirname(path), target))
        if target.startswith("/") or joined == ".." or joined.startswith("../"):
            self.problem(path, number, f"include {target!r} points outside the repository")
            return
        if joined in stack:
            chain = " -> ".join([*stack[stack.index(joined) :], joined])
            self.problem(path, number, f"include cycle: {chain}")
            return
        if joined in self.visited:
            return
        self.visited.add(joined)
        try:
            text = self.read(joined)
        except (ManifestError, OSError, ValueError) as exc:
            reason = exc.message if isinstance(exc, ManifestError) else str(exc)
            self.problem(path, number, f"cannot read included file {target!r}: {reason}")
            return
        self.included.append(joined)
        self.visit(joined, text, dep_type, (*stack, joined))


def _parse_options(tokens: list[str]) -> Iterator[tuple[str, str | None]]:
    """Yield ``(option, value)`` pairs from shell-split option tokens.

    Accepts ``--opt value``, ``--opt=value``, ``-r value`` and ``-rvalue``; a value-taking
    option at the end of the line yields ``None`` as its value.
    """
    index = 0
    while index < len(tokens):
        token = tokens[index]
        index += 1
        if not token.startswith("-"):
            continue
        if token.startswith("--") and "=" in token:
            option, value = token.split("=", 1)
            yield option, value
        elif not token.startswith("--") and len(token) > 2:  # noqa: PLR2004 - `-rfile`
            yield token[:2], token[2:]
        elif token in _VALUED:
            value_token = tokens[index] if index < len(tokens) else None
            index += 1
            yield token, value_token
        else:
            yield token, None


def _is_pypi_index(url: str) -> bool:
    """Whether ``url`` is PyPI's own simple index (``https://pypi.org/simple``), pip's default."""
    try:
        parts = urlsplit(url)
        host = parts.hostname
    except ValueError:
        return False
    return (
        parts.scheme == "https"
        and host in _PYPI_HOSTS
        and parts.username is None
        and parts.port is None
        and parts.path.rstrip("/") == "/simple"
        and not parts.query
    )


def _looks_like_path(text: str) -> bool:
    """Return whether a requirement is a local path or archive, as pip's ``_looks_like_path``."""
    head = text.split(";", 1)[0].strip()
    if "@" in head:
        return False
    return "/" in head or "\\" in head or head.startswith(".") or head.endswith(_ARCHIVE_SUFFIXES)


def _unnamed(path: str, number: int, text: str, dep_type: DepType, *, editable: bool) -> Dependency:
    """Build the skipped row of an editable, URL or path requirement."""
    is_url = _URL.match(text) is not None
    # pip splits a URL's marker at "; " (a URL may contain ";") and a path's at ";".
    location, _, marker = text.partition("; " if is_url else ";")
    location = location.strip()
    if editable:
        reason = "editable requirement"
    elif is_url:
        reason = url_skip_reason(location)
    else:
        reason = "local path"
    name = _name_of(location)
    package_name = canonicalize_name(name) if _NAME.fullmatch(name) else name
    return Dependency(
        manager=ID,
        file=path,
        line=number,
        name=name,
        package_name=package_name,
        datasource=DATASOURCE,
        versioning=VERSIONING,
        dep_type=dep_type,
        declared=location,
        constraint=None,
        skip_reason=reason,
        markers=marker.strip() or None,
    )


def _env_dependent(path: str, number: int, text: str, dep_type: DepType) -> Dependency:
    """Build the skipped row of a requirement that uses ``${VAR}`` environment variables."""
    head = _LEADING_NAME.match(text)
    name = head.group(0) if head and "${" not in head.group(0) else text.split(maxsplit=1)[0]
    package_name = canonicalize_name(name) if _NAME.fullmatch(name) else name
    return Dependency(
        manager=ID,
        file=path,
        line=number,
        name=name,
        package_name=package_name,
        datasource=DATASOURCE,
        versioning=VERSIONING,
        dep_type=dep_type,
        declared=text,
        constraint=None,
        skip_reason="uses environment variables (${...}); their values are not known to the scan",
    )


def _name_of(location: str) -> str:
    """Name a URL or path requirement: ``#egg=name``, an archive's project name, or itself."""
    egg = _EGG.search(location)
    if egg is not None:
        return egg.group(1)
    basename = posixpath.basename(location.split("#", 1)[0].split("?", 1)[0].rstrip("/"))
    if basename.endswith(".whl"):
        return basename.split("-", 1)[0]
    for suffix in _ARCHIVE_SUFFIXES:
        if basename.endswith(suffix) and "-" in basename:
            return basename[: -len(suffix)].rsplit("-", 1)[0]
    return location
