"""The Dockerfile manager: images of ``FROM``, ``COPY --from`` and the ``# syntax`` directive."""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Mapping

import msgspec
from msgspec.structs import replace

from patchula.manager import paths
from patchula.manager.base import (
    IMAGE_DATASOURCE,
    IMAGE_VERSIONING,
    ReadFile,
    image_row,
    nul_problem,
    shown,
    skipped_image_row,
    strip_bom,
)
from patchula.models import Dependency, ExtractResult, ManifestProblem

ID = "dockerfile"
DATASOURCE = IMAGE_DATASOURCE
matches = paths.dockerfile  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = IMAGE_VERSIONING

# BuildKit's parser directives: only at the very top, ``# name=value``
# (moby/buildkit frontend/dockerfile/parser/directives.go).
_DIRECTIVE = re.compile(r"#[ \t]*([a-zA-Z][a-zA-Z0-9]*)[ \t]*=[ \t]*(.+?)[ \t]*$")
_KNOWN_DIRECTIVES = frozenset({"syntax", "escape", "check"})
# A heredoc in RUN, COPY or ADD (parser.go heredoc handling): ``<<EOF``, ``<<-EOF``, ``<<"EOF"``.
_HEREDOC = re.compile(r"<<(-?)[ \t]*([\"']?)([A-Za-z_][A-Za-z0-9_]*)\2")
_HEREDOC_INSTRUCTIONS = frozenset({"RUN", "COPY", "ADD"})
_INSTRUCTION = re.compile(r"[ \t]*(\S+)[ \t]*", re.ASCII)
_VAR_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
_BARE_NAME = re.compile(r"[A-Za-z0-9_]+", re.ASCII)
_ARG_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*", re.ASCII)
# BuildKit's automatic platform ARGs, defined in the global scope for FROM lines
# (docs.docker.com/build/building/variables/#pre-defined-build-arguments).
_PLATFORM_ARGS = frozenset(
    {
        "BUILDPLATFORM",
        "BUILDOS",
        "BUILDARCH",
        "BUILDVARIANT",
        "TARGETPLATFORM",
        "TARGETOS",
        "TARGETARCH",
        "TARGETVARIANT",
    }
)
_MAX_PROBLEMS_PER_FILE = 20
# ``${A:-${B:-…}}`` deeper than this is no real Dockerfile; the lexer recurses once per level.
MAX_SUBSTITUTION_DEPTH = 32


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the images a Dockerfile pulls (docs.docker.com/reference/dockerfile).

    Each ``FROM`` image is a row, the last ``FROM`` of the file ``final`` and the others
    ``stage``; ``COPY --from=image`` is ``copy-from``, ``RUN --mount=…,from=image`` is
    ``mount-from`` and the ``# syntax=`` parser directive (the BuildKit frontend image)
    ``syntax``, as Renovate's dockerfile manager reads them. ``FROM scratch``, a
    ``FROM`` or ``--from`` naming an earlier stage (its ``AS`` name, any case, or its index)
    give nothing. Flags (``--platform=…``) are skipped. ``ARG`` lines before the first ``FROM``
    are substituted into ``FROM`` images as BuildKit's shell lexer does (``$V``, ``${V}``,
    ``${V:-w}``, ``${V-w}``, ``${V:+w}``, ``${V+w}``, ``${V:?m}``; quotes and the escape
    character); an image that needs a variable with no value (an ``ARG`` with no default, an
    undeclared or platform variable) is a skipped row naming it. Line continuations follow
    the ``# escape=`` directive; comments and heredoc bodies are not instructions. Rows carry
    the line of the image itself; an invalid reference is a problem at that line.
    """
    nul = nul_problem(path, text)
    if nul is not None:
        return ExtractResult(problems=(nul,))
    parser = _Parser(path)
    parser.parse(strip_bom(text))
    return ExtractResult(dependencies=tuple(parser.rows()), problems=tuple(parser.problems))


class _Logical(msgspec.Struct, frozen=True):
    """One instruction joined from its physical lines, with where each piece starts."""

    text: str
    offsets: tuple[int, ...]  # where each piece starts in ``text``, ascending
    lines: tuple[int, ...]  # the 1-based line of each piece

    def line(self, offset: int) -> int:
        """The line of the piece holding ``offset`` (a binary search: many pieces stay cheap)."""
        return self.lines[max(0, bisect_right(self.offsets, offset) - 1)]


class _Word(msgspec.Struct, frozen=True):
    text: str
    offset: int


class _Expanded(msgspec.Struct):
    """A word after substitution: its value, its display (unknown variables kept) and why not.

    Pieces are collected in lists and joined once: a long word costs linear time.
    """

    values: list[str] = msgspec.field(default_factory=list)
    displays: list[str] = msgspec.field(default_factory=list)
    missing: list[str] = msgspec.field(default_factory=list)
    error: str | None = None

    @property
    def value(self) -> str:
        return "".join(self.values)

    @property
    def display(self) -> str:
        return "".join(self.displays)

    def add(self, text: str) -> None:
        self.values.append(text)
        self.displays.append(text)


def _split_words(text: str, start: int, escape: str) -> list[_Word]:
    """Split at unquoted whitespace, keeping quotes and escapes in each word (for the lexer)."""
    words: list[_Word] = []
    index, end = start, len(text)
    while index < end:
        while index < end and text[index] in " \t\r\n":
            index += 1
        if index >= end:
            break
        begin, quote = index, ""
        while index < end:
            char = text[index]
            if quote:
                if char == escape and quote == '"' and index + 1 < end:
                    index += 1
                elif char == quote:
                    quote = ""
            elif char == escape and index + 1 < end:
                index += 1
            elif char in "\"'":
                quote = char
            elif char in " \t\r\n":
                break
            index += 1
        words.append(_Word(text[begin:index], begin))
    return words


class _Lexer:
    """BuildKit's shell lexer for one word (frontend/dockerfile/shell/lex.go), as images need it.

    ``env`` maps the declared variables to their values, ``None`` for an ``ARG`` without a
    default; a variable not in it is undeclared. Unset and undeclared variables expand as
    BuildKit expands them with no ``--build-arg`` (empty, or the ``:-`` word); a bare
    ``$V`` / ``${V}`` or a ``:?`` of one is recorded as missing, since the image then depends
    on a value given at build time.
    """

    def __init__(self, env: Mapping[str, str | None], escape: str) -> None:
        self.env = env
        self.escape = escape
        self.depth = 0

    def word(self, raw: str) -> _Expanded:
        out = _Expanded()
        index, end = 0, len(raw)
        while index < end:
            char = raw[index]
            if char == "'":
                close = raw.find("'", index + 1)
                close = end if close < 0 else close
                out.add(raw[index + 1 : close])
                index = close + 1
            elif char == '"':
                index = self._double_quoted(raw, index + 1, out)
            elif char == self.escape and index + 1 < end:
                out.add(raw[index + 1])
                index += 2
            elif char == "$":
                index = self._dollar(raw, index, out)
            else:
                out.add(char)
                index += 1
        return out

    def _double_quoted(self, raw: str, index: int, out: _Expanded) -> int:
        end = len(raw)
        while index < end and raw[index] != '"':
            char = raw[index]
            if char == self.escape and index + 1 < end and raw[index + 1] in {'"', "$", char}:
                out.add(raw[index + 1])
                index += 2
            elif char == "$":
                index = self._dollar(raw, index, out)
            else:
                out.add(char)
                index += 1
        return index + 1

    def _dollar(self, raw: str, index: int, out: _Expanded) -> int:
        """Expand the ``$`` reference at ``index``; return the index after it."""
        if raw.startswith("${", index):
            return self._braced(raw, index, out)
        bare = _BARE_NAME.match(raw, index + 1)
        if bare is None:
            out.add("$")
            return index + 1
        self._set(out, raw[index : bare.end()], self._lookup(bare.group(), out))
        return bare.end()

    def _braced(self, raw: str, index: int, out: _Expanded) -> int:
        close = _closing_brace(raw, index + 2, self.escape)
        if close < 0:
            out.error = f"missing '}}' in {shown(raw[index:])}"
            return len(raw)
        whole, inner = raw[index : close + 1], raw[index + 2 : close]
        name_match = _VAR_NAME.match(inner)
        if name_match is None:
            out.error = f"bad substitution {shown(whole)}"
            return close + 1
        name, rest = name_match.group(), inner[name_match.end() :]
        if not rest:
            self._set(out, whole, self._lookup(name, out))
            return close + 1
        colon = rest.startswith(":")
        operator, operand = (rest[1:2], rest[2:]) if colon else (rest[:1], rest[1:])
        if operator not in {"-", "+", "?"}:
            out.error = f"unsupported substitution {shown(whole)} (only :-, -, :+, +, :? and ?)"
            return close + 1
        value = self.env.get(name)
        is_set = value is not None and (value != "" or not colon)
        result: str | None
        if operator == "-":
            result = value if is_set and value is not None else self._nested(operand, out)
        elif operator == "+":
            result = self._nested(operand, out) if is_set else ""
        elif is_set:
            result = value
        else:  # ``?``: the build fails without a value, so the image needs one given to it
            out.missing.append(name)
            result = None
        self._set(out, whole, result)
        return close + 1

    def _nested(self, operand: str, out: _Expanded) -> str:
        if self.depth >= MAX_SUBSTITUTION_DEPTH:
            out.error = f"substitutions nested more than {MAX_SUBSTITUTION_DEPTH} levels deep"
            return ""
        self.depth += 1
        try:
            inner = self.word(operand)
        finally:
            self.depth -= 1
        out.missing.extend(inner.missing)
        out.error = out.error or inner.error
        return inner.value if not inner.missing else ""

    def _lookup(self, name: str, out: _Expanded) -> str | None:
        value = self.env.get(name)
        if value is None:
            out.missing.append(name)
        return value

    @staticmethod
    def _set(out: _Expanded, whole: str, value: str | None) -> None:
        out.values.append(value or "")
        out.displays.append(whole if value is None else value)


# The tokens that matter when looking for the ``}`` closing a ``${``: an escaped character,
# a nested ``${`` and a ``}`` (one pattern per escape character).
_BRACE_TOKENS = {
    escape: re.compile(re.escape(escape) + r".|\$\{|\}", re.DOTALL) for escape in ("\\", "`")
}


def _closing_brace(raw: str, index: int, escape: str) -> int:
    """The index of the ``}`` closing a ``${`` whose body starts at ``index`` (``-1``: none)."""
    depth = 1
    for mark in _BRACE_TOKENS[escape].finditer(raw, index):
        found = mark.group()
        if found == "${":
            depth += 1
        elif found == "}":
            depth -= 1
            if depth == 0:
                return mark.start()
    return -1


def _missing_reason(name: str, env: Mapping[str, str | None], reasons: Mapping[str, str]) -> str:
    """Why ``name`` has no value: an ARG without default, a default that needs one, or none."""
    if name in reasons:
        return reasons[name]
    if name in env:
        return f"ARG {name} has no default; its value comes from --build-arg"
    if name in _PLATFORM_ARGS:
        return f"${name} is set by the build platform (BuildKit's automatic platform ARGs)"
    return f"${name} is not declared by an ARG before the first FROM"


class _Stage(msgspec.Struct):
    names: set[str] = msgspec.field(default_factory=set)
    count: int = 0


class _Parser(msgspec.Struct):
    """Reads one Dockerfile instruction by instruction."""

    path: str
    escape: str = "\\"
    problems: list[ManifestProblem] = msgspec.field(default_factory=list)
    found: list[Dependency] = msgspec.field(default_factory=list)
    global_env: dict[str, str | None] = msgspec.field(default_factory=dict)
    stage_env: dict[str, str | None] = msgspec.field(default_factory=dict)
    # Why an ARG's default has no value.
    reasons: dict[str, str] = msgspec.field(default_factory=dict)
    stages: _Stage = msgspec.field(default_factory=_Stage)
    final: int | None = None  # index in ``found`` of the last FROM's row
    _count: int = 0

    def problem(self, line: int | None, message: str) -> None:
        self._count += 1
        if self._count <= _MAX_PROBLEMS_PER_FILE:
            self.problems.append(ManifestProblem(self.path, line, message))
        elif self._count == _MAX_PROBLEMS_PER_FILE + 1:
            message = f"more than {_MAX_PROBLEMS_PER_FILE} problems; the rest are not reported"
            self.problems.append(ManifestProblem(self.path, None, message))

    def rows(self) -> list[Dependency]:
        rows = list(self.found)
        if self.final is not None:
            rows[self.final] = replace(rows[self.final], dep_type="final")
        return rows

    def parse(self, text: str) -> None:
        lines = text.splitlines()
        first = self.directives(lines)
        for logical in self.instructions(lines, first):
            self.instruction(logical)

    def directives(self, lines: list[str]) -> int:
        """Read the parser directives at the top; return the index of the first other line.

        Leading blanks are allowed before the ``#`` and the name is case-insensitive
        (`` # EsCaPe=` ``), as BuildKit strips a line's leading whitespace before it looks for a
        directive (frontend/dockerfile/parser/parser.go, ``processLine``).
        """
        seen: set[str] = set()
        for index, raw in enumerate(lines):
            match = _DIRECTIVE.match(raw.lstrip(" \t"))
            if match is None or match.group(1).lower() not in _KNOWN_DIRECTIVES:
                return index
            name, value = match.group(1).lower(), match.group(2)
            if name in seen:
                return index  # a repeated directive is a comment (directives.go)
            seen.add(name)
            if name == "escape":
                if value not in {"\\", "`"}:
                    self.problem(index + 1, f"invalid escape directive {shown(value)}: use \\ or `")
                else:
                    self.escape = value
            elif name == "syntax":
                self.add(
                    image_row(value, manager=ID, file=self.path, line=index + 1, dep_type="syntax")
                )
        return len(lines)

    def instructions(self, lines: list[str], first: int) -> Iterator[_Logical]:
        """Join continued lines into instructions, skipping comments and heredoc bodies."""
        pieces: list[str] = []
        offsets: list[int] = []
        numbers: list[int] = []
        length = 0
        heredocs: list[tuple[str, bool]] = []
        for index in range(first, len(lines)):
            raw, number = lines[index], index + 1
            if heredocs:
                delimiter, strip_tabs = heredocs[0]
                if (raw.lstrip("\t") if strip_tabs else raw) == delimiter:
                    heredocs.pop(0)
                continue
            stripped = raw.lstrip(" \t")
            if not stripped or stripped.startswith("#"):
                continue  # also inside a continuation: comments and empty lines are skipped
            body = raw.rstrip(" \t")
            continued = body.endswith(self.escape)
            piece = body[:-1] if continued else raw
            offsets.append(length)
            numbers.append(number)
            pieces.append(piece)
            length += len(piece)
            if continued:
                continue
            logical = _Logical("".join(pieces), tuple(offsets), tuple(numbers))
            pieces, offsets, numbers, length = [], [], [], 0
            heredocs.extend(self.heredocs(logical.text))
            yield logical
        if pieces:
            yield _Logical("".join(pieces), tuple(offsets), tuple(numbers))

    @staticmethod
    def heredocs(text: str) -> list[tuple[str, bool]]:
        head = _INSTRUCTION.match(text)
        if head is None or head.group(1).upper() not in _HEREDOC_INSTRUCTIONS:
            return []
        return [(m.group(3), m.group(1) == "-") for m in _HEREDOC.finditer(text, head.end())]

    def instruction(self, logical: _Logical) -> None:
        head = _INSTRUCTION.match(logical.text)
        if head is None:
            return
        keyword = head.group(1).upper()
        if keyword == "FROM":
            self.from_line(logical, head.end())
        elif keyword == "ARG":
            self.arg_line(logical, head.end())
        elif keyword == "COPY":
            self.copy_line(logical, head.end())
        elif keyword == "RUN":
            self.run_line(logical, head.end())

    def add(self, row: Dependency | ManifestProblem) -> None:
        if isinstance(row, ManifestProblem):
            self.problem(row.line, row.message)
        else:
            self.found.append(row)

    def arg_line(self, logical: _Logical, start: int) -> None:
        in_stage = self.stages.count > 0
        env = self.stage_env if in_stage else self.global_env
        lexer = _Lexer(env, self.escape)
        for word in _split_words(logical.text, start, self.escape):
            raw_name, equals, raw_default = word.text.partition("=")
            if _ARG_NAME.fullmatch(raw_name) is None:
                self.problem(logical.line(word.offset), f"invalid ARG name {shown(raw_name)}")
                continue
            if equals:
                expanded = lexer.word(raw_default)
                env[raw_name] = None if expanded.missing else expanded.value
                if expanded.missing:  # the default itself needs a value: say which
                    inner = _missing_reason(expanded.missing[0], env, self.reasons)
                    self.reasons[raw_name] = f"ARG {raw_name}'s default needs a value: {inner}"
                else:
                    self.reasons.pop(raw_name, None)
            elif in_stage:
                # ``ARG NAME`` in a stage takes the global value (docs: "scope").
                env[raw_name] = self.global_env.get(raw_name)
            else:
                env[raw_name] = None

    def image_word(
        self, logical: _Logical, word: _Word, env: Mapping[str, str | None]
    ) -> _Expanded:
        expanded = _Lexer(env, self.escape).word(word.text)
        if expanded.error is not None:
            self.problem(logical.line(word.offset), expanded.error)
        return expanded

    def from_line(self, logical: _Logical, start: int) -> None:
        words = _split_words(logical.text, start, self.escape)
        line = logical.line(start)
        while words and words[0].text.startswith("--"):
            words.pop(0)  # --platform=… and any other flag
        alias: str | None = None
        if len(words) == 3 and words[1].text.lower() == "as":  # noqa: PLR2004 - image AS name
            alias = words[2].text.lower()
        elif len(words) != 1:
            self.problem(line, "FROM takes an image and an optional AS name")
            return
        self.stages.count += 1
        self.stage_env = {}
        self.reasons = {k: v for k, v in self.reasons.items() if k in self.global_env}
        self.final = None
        image = words[0]
        expanded = self.image_word(logical, image, self.global_env)
        if expanded.error is None:
            self.image(logical, image, expanded, "stage", self.global_env, last_from=True)
        if alias is not None:
            self.stages.names.add(alias)  # after the image: `FROM node AS node` pulls node

    def copy_line(self, logical: _Logical, start: int) -> None:
        for word in _split_words(logical.text, start, self.escape):
            if not word.text.startswith("--"):
                break
            if not word.text.startswith("--from="):
                continue
            value = _Word(word.text[len("--from=") :], word.offset + len("--from="))
            self.stage_image(logical, value, "copy-from")

    def run_line(self, logical: _Logical, start: int) -> None:
        """``RUN --mount=type=bind,from=image,…``: the image whose files are mounted."""
        for word in _split_words(logical.text, start, self.escape):
            if not word.text.startswith("--"):
                break
            if not word.text.startswith("--mount="):
                continue
            offset = word.offset + len("--mount=")
            for option in word.text[len("--mount=") :].split(","):
                key, equals, value = option.partition("=")
                if equals and key.strip().lower() == "from":
                    at = _Word(value, offset + len(key) + 1)
                    self.stage_image(logical, at, "mount-from")
                offset += len(option) + 1

    def stage_image(self, logical: _Logical, word: _Word, dep_type: str) -> None:
        """An image named inside a stage (``--from=``), expanded with the stage's ARGs."""
        env = {**self.global_env, **self.stage_env} if self.stages.count else self.global_env
        expanded = self.image_word(logical, word, env)
        if expanded.error is None:
            self.image(logical, word, expanded, dep_type, env, last_from=False)

    def image(
        self,
        logical: _Logical,
        word: _Word,
        expanded: _Expanded,
        dep_type: str,
        env: Mapping[str, str | None],
        *,
        last_from: bool,
    ) -> None:
        line = logical.line(word.offset)
        if expanded.missing:
            reason = _missing_reason(expanded.missing[0], env, self.reasons)
            self.found.append(
                skipped_image_row(
                    expanded.display,
                    manager=ID,
                    file=self.path,
                    line=line,
                    dep_type=dep_type,
                    reason=reason,
                )
            )
            self.final = len(self.found) - 1 if last_from else self.final
            return
        value = expanded.value
        is_stage_index = dep_type != "stage" and value.isdigit()
        # Stage names are compared after substitution, without case, as BuildKit does; an
        # image can never be named by an earlier stage's alias.
        if value.lower() == "scratch" or value.lower() in self.stages.names or is_stage_index:
            return
        row = image_row(value, manager=ID, file=self.path, line=line, dep_type=dep_type)
        self.add(row)
        if last_from and isinstance(row, Dependency):
            self.final = len(self.found) - 1
