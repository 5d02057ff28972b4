"""The Go modules manager: ``go.mod`` requirements, replacements and Go toolchain lines."""

from __future__ import annotations

import re

import msgspec

from patchula.manager import paths
from patchula.manager.base import ReadFile, nul_problem, strip_bom
from patchula.models import Dependency, ExtractResult, ManifestProblem

ID = "go_mod"
DATASOURCE = "goproxy"
matches = paths.go_mod  # the path rule: manager/paths.py (discovery imports no manager)
VERSIONING = "go"

# The ``go`` and ``toolchain`` lines are Go releases, read on go.dev's release list (the ``go``
# datasource, mise's ``core:go`` source) with mise's version order, as Renovate's gomod
# manager reads them on its golang-version datasource (depTypes ``golang`` and ``toolchain``).
GO_DATASOURCE = "go"
GO_VERSIONING = "mise"
# Renovate does not propose updates to the ``go`` line by default (its go-mod-directive
# versioning reads ``go 1.22`` as ``^1.22``; docs.renovatebot.com/modules/manager/gomod,
# "Updating of Go mod and toolchain directives"): it is a floor, not a release in use.
GO_DIRECTIVE_SKIP = (
    "the go directive is the minimum Go language version the module needs "
    "(go.dev/ref/mod#go-mod-file-go), not a release to keep current: not checked, as "
    "Renovate leaves it by default (a toolchain line is checked)"
)
_DEFAULT_TOOLCHAIN_SKIP = "toolchain default names no Go release: nothing to compare"
_LOCAL_SKIP = "replaced by a local path"
# The zero pseudo-version (time 0001-01-01, revision 000000000000) names no commit: it is the
# placeholder written for a module that a `replace` provides (go.dev/ref/mod#pseudo-versions).
# Without a replace in this file (one in go.work or the main module does it), the go command
# cannot fetch it either, so the proxy is not asked.
PLACEHOLDER_VERSION = "v0.0.0-00010101000000-000000000000"
_PLACEHOLDER_SKIP = (
    f"placeholder version {PLACEHOLDER_VERSION}: provided by a replace outside this go.mod"
)
_MAX_PROBLEMS_PER_FILE = 20

# Tokens of golang.org/x/mod/modfile's lexer: comments, interpreted and raw strings, the
# arrow, punctuation, and identifiers (which stop at whitespace, punctuation and ``//``).
_TOKEN = re.compile(
    r"""(?P<comment>//.*)"""
    r"""|(?P<string>"(?:[^"\\]|\\.)*"|`[^`]*`)"""
    r"""|(?P<arrow>=>)"""
    r"""|(?P<punct>[()\[\]{},])"""
    r"""|(?P<ident>(?:(?!//)[^\s()\[\]{},"`\x00-\x1f\x7f])+)"""
    r"""|(?P<bad>\S)"""
)
# A canonical Go module version (https://go.dev/ref/mod#versions); the versioning module
# checks the finer rules, a manager imports no versioning code (design §2). Numbers have at
# most 100 digits, as in every versioning (``int()`` refuses 4,301 and more).
_N = r"(?:0|[1-9][0-9]{0,99})"
_VERSION = re.compile(
    rf"v({_N})\.{_N}\.{_N}(?:-[0-9A-Za-z-]+(?:\.[0-9A-Za-z-]+)*)?(\+incompatible)?"
)
_MAJOR_SUFFIX = re.compile(r"/v([0-9]{1,100})$")
# A Go release as written on a ``go`` line (``1.21``, ``1.21.3``, ``1.21rc1``) and a
# toolchain name (``go1.21.3``, ``go1.22rc1-custom``): https://go.dev/doc/toolchain#version.
_GO_VERSION = re.compile(
    r"(?P<major>[0-9]+)\.(?P<minor>[0-9]+)(?:\.(?P<patch>[0-9]+))?(?:(?P<kind>rc|beta)(?P<n>[0-9]+))?"
)
_TOOLCHAIN = re.compile(rf"go(?P<version>{_GO_VERSION.pattern})(?:-\S+)?")
_KNOWN_VERBS = frozenset(
    {
        "module",
        "go",
        "toolchain",
        "godebug",
        "require",
        "exclude",
        "replace",
        "retract",
        "tool",
        "ignore",
    }
)
_BLOCK_VERBS = _KNOWN_VERBS - {"module", "go", "toolchain"}


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the requirements of one ``go.mod`` (https://go.dev/ref/mod#go-mod-file).

    ``require`` lines (single and block) give ``dep_type`` ``require``, or ``indirect`` with a
    ``// indirect`` comment; ``declared`` and ``constraint`` are the minimum version. The ``go``
    and ``toolchain`` lines give a ``go`` row (``golang``/``toolchain``) on go.dev's release
    list (``GO_DATASOURCE``), constraint the release without ``go`` (``1.22.1``, ``1.22rc1``);
    the ``golang`` row is skipped (``GO_DIRECTIVE_SKIP``), as Renovate leaves it. A ``replace``
    of a required module (for all its versions, or only the required one) makes the row look
    up the replacement path and version, keeping ``declared``; a replacement by a directory is
    skipped, and so is the placeholder ``v0.0.0-00010101000000-000000000000`` left without a
    replacement here (a go.work or main module replaces it). The versions an ``exclude``
    names for the path a row looks up are the row's ``excluded`` (the go command's version
    queries skip them, https://go.dev/ref/mod#go-mod-file-exclude). ``retract``, ``godebug``,
    ``tool`` and ``ignore`` are checked for shape only. ``project_name`` is the
    ``module`` path. Bad lines are problems.
    """
    nul = nul_problem(path, text)
    if nul is not None:
        return ExtractResult(problems=(nul,))
    parser = _Parser(path)
    parser.parse(strip_bom(text))
    return ExtractResult(
        dependencies=tuple(parser.dependencies()),
        problems=tuple(parser.problems),
        project_name=parser.module,
    )


class _Line(msgspec.Struct, frozen=True):
    number: int
    args: list[str]
    comment: str


class _Require(msgspec.Struct, frozen=True):
    line: int
    path: str
    version: str
    indirect: bool


class _Replace(msgspec.Struct, frozen=True):
    line: int
    new_path: str
    new_version: str | None


def _unquote(token: str) -> str:
    if token.startswith("`"):
        return token[1:-1]
    if token.startswith('"'):
        return re.sub(r"\\(.)", r"\1", token[1:-1])
    return token


def _tokenize(raw: str) -> tuple[list[str], str, str | None]:
    """Split one line into tokens (strings unquoted), its comment, and an error message."""
    tokens: list[str] = []
    comment = ""
    for match in _TOKEN.finditer(raw):
        kind, lexeme = match.lastgroup, match.group()
        if kind == "comment":
            comment = lexeme[2:].strip()
            break
        if kind == "bad":
            return tokens, comment, f"unexpected character {lexeme!r}"
        tokens.append(_unquote(lexeme) if kind == "string" else lexeme)
    return tokens, comment, None


def _is_indirect(comment: str) -> bool:
    # golang.org/x/mod/modfile isIndirect: the comment is "indirect" or starts "indirect;".
    return comment == "indirect" or comment.startswith("indirect;")


def _is_local(target: str) -> bool:
    # modfile.IsDirectoryPath: rooted, ./ or ../ relative, or a Windows drive path.
    return (
        target in {".", ".."}
        or target.startswith(("./", "../", "/", ".\\", "..\\", "\\"))
        or re.match(r"[A-Za-z]:[\\/]", target) is not None
    )


# Longer values are cut in messages: a 5,000-digit "version" should not fill a report cell.
_QUOTED_CHARS = 64


def _quoted(value: str) -> str:
    """``repr(value)``, cut to its first characters and its length when it is very long."""
    if len(value) <= _QUOTED_CHARS:
        return repr(value)
    return f"{value[:40]!r}… ({len(value)} characters)"


def _major_problem(module: str, version: str) -> str | None:
    """Say why ``version`` cannot belong to ``module`` (https://go.dev/ref/mod#major-version-suffixes)."""
    match = _VERSION.fullmatch(version)
    if match is None:
        return f"invalid module version {_quoted(version)}: must be of the form v1.2.3"
    major, incompatible = int(match[1]), match[2] is not None
    suffix = _MAJOR_SUFFIX.search(module)
    if suffix is not None and not module.startswith("gopkg.in/"):
        if incompatible:
            return f"{module} {version}: +incompatible is not allowed with a /v{suffix[1]} path"
        if major != int(suffix[1]):
            return f"{module} {version}: should be v{suffix[1]}, not v{major}"
    elif major >= 2 and not incompatible and not module.startswith("gopkg.in/"):  # noqa: PLR2004
        return f"{module} {version}: a v{major} module needs a /v{major} path or +incompatible"
    elif major < 2 and incompatible:  # noqa: PLR2004
        return f"{module} {version}: +incompatible needs major version 2 or higher"
    return None


class _Parser(msgspec.Struct):
    """Reads one go.mod line by line, keeping requirements, replacements and problems."""

    path: str
    module: str | None = None
    problems: list[ManifestProblem] = msgspec.field(default_factory=list)
    toolchain: list[Dependency] = msgspec.field(default_factory=list)
    requires: list[_Require] = msgspec.field(default_factory=list)
    replaces: dict[tuple[str, str | None], _Replace] = msgspec.field(default_factory=dict)
    excludes: dict[str, list[str]] = msgspec.field(default_factory=dict)
    _count: int = 0

    def problem(self, line: int | None, message: str) -> None:
        self._count += 1
        if self._count <= _MAX_PROBLEMS_PER_FILE:
            self.problems.append(ManifestProblem(self.path, line, message))
        elif self._count == _MAX_PROBLEMS_PER_FILE + 1:
            message = f"more than {_MAX_PROBLEMS_PER_FILE} problems; the rest are not reported"
            self.problems.append(ManifestProblem(self.path, None, message))

    def parse(self, text: str) -> None:
        block: str | None = None
        block_line = 0
        for number, raw in enumerate(text.splitlines(), 1):
            tokens, comment, error = _tokenize(raw)
            if error is not None:
                self.problem(number, error)
                continue
            if not tokens:
                continue
            if block is not None:
                if tokens == [")"]:
                    block = None
                else:
                    self.directive(block, _Line(number, tokens, comment))
                continue
            verb, args = tokens[0], tokens[1:]
            if args == ["("]:
                if verb not in _BLOCK_VERBS:
                    self.problem(number, f"unknown block type: {verb}")
                block, block_line = verb, number
                continue
            if args == ["(", ")"] and verb in _BLOCK_VERBS:
                continue
            self.directive(verb, _Line(number, args, comment))
        if block is not None:
            self.problem(block_line, f"{block} block is never closed with ')'")

    def directive(self, verb: str, line: _Line) -> None:
        handler = {
            "module": self.module_line,
            "go": self.go_line,
            "toolchain": self.toolchain_line,
            "require": self.require_line,
            "replace": self.replace_line,
            "exclude": self.exclude_line,
        }.get(verb)
        if handler is not None:
            handler(line)
        elif verb not in _KNOWN_VERBS:
            self.problem(line.number, f"unknown directive: {verb}")
        elif not line.args or "(" in line.args or ")" in line.args:
            # retract, godebug, tool and ignore need nothing but their arguments.
            self.problem(line.number, f"usage: {verb} needs arguments")

    def module_line(self, line: _Line) -> None:
        if len(line.args) != 1:
            self.problem(line.number, "usage: module module/path")
        elif self.module is not None:
            self.problem(line.number, "repeated module statement")
        else:
            self.module = line.args[0]

    def go_line(self, line: _Line) -> None:
        ok = len(line.args) == 1 and _GO_VERSION.fullmatch(line.args[0]) is not None
        if not ok:
            self.problem(line.number, "usage: go 1.23 (a Go release such as 1.21 or 1.22.1)")
            return
        self.toolchain.append(
            self.go_dependency(
                line.number, "golang", line.args[0], line.args[0], skip=GO_DIRECTIVE_SKIP
            )
        )

    def toolchain_line(self, line: _Line) -> None:
        match = _TOOLCHAIN.fullmatch(line.args[0]) if len(line.args) == 1 else None
        if len(line.args) == 1 and line.args[0] == "default":
            self.toolchain.append(
                self.go_dependency(
                    line.number, "toolchain", "default", None, skip=_DEFAULT_TOOLCHAIN_SKIP
                )
            )
        elif match is None:
            self.problem(line.number, "usage: toolchain go1.23.4 (a Go toolchain name)")
        else:
            # ``go1.21.3-custom`` is a build of the release go1.21.3: that release is compared.
            self.toolchain.append(
                self.go_dependency(line.number, "toolchain", line.args[0], match["version"])
            )

    def go_dependency(
        self,
        number: int,
        dep_type: str,
        declared: str,
        constraint: str | None,
        *,
        skip: str | None = None,
    ) -> Dependency:
        """A ``go``/``toolchain`` row; ``constraint``: the release as go.dev names it, sans go."""
        return Dependency(
            manager=ID,
            file=self.path,
            line=number,
            name="go",
            package_name="go",
            datasource=GO_DATASOURCE,
            versioning=GO_VERSIONING,
            dep_type=dep_type,
            declared=declared,
            constraint=constraint,
            skip_reason=skip,
        )

    def require_line(self, line: _Line) -> None:
        if len(line.args) != 2:  # noqa: PLR2004 - path and version
            self.problem(line.number, "usage: require module/path v1.2.3")
            return
        module, version = line.args
        message = _major_problem(module, version)
        if message is not None:
            self.problem(line.number, message)
            return
        self.requires.append(_Require(line.number, module, version, _is_indirect(line.comment)))

    def exclude_line(self, line: _Line) -> None:
        if len(line.args) != 2:  # noqa: PLR2004 - path and version
            self.problem(line.number, "usage: exclude module/path v1.2.3")
        elif _VERSION.fullmatch(line.args[1]) is None:
            self.problem(line.number, f"invalid module version {_quoted(line.args[1])}")
        else:
            versions = self.excludes.setdefault(line.args[0], [])
            if line.args[1] not in versions:
                versions.append(line.args[1])

    def replace_line(self, line: _Line) -> None:
        args = line.args
        arrow = args.index("=>") if "=>" in args else -1
        old, new = args[:arrow], args[arrow + 1 :]
        if arrow < 0 or len(old) not in {1, 2} or len(new) not in {1, 2}:
            self.problem(line.number, "usage: replace module/path [v1.2.3] => other/path v1.4.5")
            return
        for version in (*old[1:], *new[1:]):
            if _VERSION.fullmatch(version) is None:
                self.problem(line.number, f"invalid module version {_quoted(version)}")
                return
        if len(new) == 1 and not _is_local(new[0]):
            message = (
                "replacement module without version must be directory path "
                "(rooted or starting with ./ or ../)"
            )
            self.problem(line.number, message)
            return
        if len(new) == 2 and _is_local(new[0]):  # noqa: PLR2004 - path and version
            self.problem(line.number, "replacement directory cannot have a version")
            return
        key = (old[0], old[1] if len(old) == 2 else None)  # noqa: PLR2004 - path and version
        if key in self.replaces:
            shown = " ".join(part for part in key if part)
            self.problem(line.number, f"multiple replacements for {shown}")
            return
        self.replaces[key] = _Replace(line.number, new[0], new[1] if len(new) == 2 else None)  # noqa: PLR2004

    def dependencies(self) -> list[Dependency]:
        rows = list(self.toolchain)
        for require in self.requires:
            # A replacement of this exact version wins over one for all versions
            # (https://go.dev/ref/mod#go-mod-file-replace).
            replace = self.replaces.get((require.path, require.version)) or self.replaces.get(
                (require.path, None)
            )
            package_name, constraint, skip_reason = require.path, require.version, None
            if replace is not None and replace.new_version is None:
                skip_reason = _LOCAL_SKIP
            elif replace is not None and replace.new_version is not None:
                package_name, constraint = replace.new_path, replace.new_version
            if skip_reason is None and constraint == PLACEHOLDER_VERSION:
                skip_reason = _PLACEHOLDER_SKIP
            rows.append(
                Dependency(
                    manager=ID,
                    file=self.path,
                    line=require.line,
                    name=require.path,
                    package_name=package_name,
                    datasource=DATASOURCE,
                    versioning=VERSIONING,
                    dep_type="indirect" if require.indirect else "require",
                    declared=require.version,
                    constraint=constraint,
                    skip_reason=skip_reason,
                    excluded=tuple(self.excludes.get(package_name, ())),
                )
            )
        return sorted(rows, key=lambda row: row.line or 0)
