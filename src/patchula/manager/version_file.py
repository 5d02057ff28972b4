"""Single-tool version files, the ones each ecosystem's own version managers read.

``.nvmrc`` (nvm) and ``.node-version`` (nodenv, fnm, volta…) → ``node``; ``.python-version``
(pyenv: several lines allowed, each a version) → ``python``; ``.go-version`` (goenv) → ``go``;
``.ruby-version`` (rbenv, chruby; a ``ruby-`` prefix allowed) → ``ruby``;
``.terraform-version`` (tfenv) → ``terraform``. mise reads the same files as "idiomatic
version files" (``jdx/mise:registry/<tool>.toml`` ``idiomatic_files``). ``#`` starts a
comment. nvm's aliases read as mise reads them: ``node``/``stable`` the newest release,
``lts/*`` and ``lts/<name>`` the LTS lines. A value that is no version of the tool (a pyenv
virtualenv name, ``pypy3.10-7.3.12``, tfenv's ``latest:<regex>``) is a skipped row saying so.
"""

from __future__ import annotations

from msgspec.structs import replace

from patchula.manager import paths
from patchula.manager.base import ReadFile, nul_problem, strip_bom
from patchula.models import Dependency, ExtractResult, ManifestProblem
from patchula.tools import VERSIONING, tool_row
from patchula.versioning import mise

__all__ = ["DATASOURCE", "ID", "VERSIONING", "extract", "matches"]

ID = "version_file"
DATASOURCE = "node"  # the datasource most of its rows use; each row names its own
matches = paths.version_file  # the path rule: manager/paths.py (discovery imports no manager)

# File name → the tool it pins.
FILES = paths.VERSION_FILES
# Files read one version per line (pyenv); the others take their first value only.
_MULTI = frozenset({".python-version"})
_PREFIXES = {".ruby-version": "ruby-"}


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract the tool version(s) of a version file (dep_type the file name)."""
    nul = nul_problem(path, text)
    if nul is not None:
        return ExtractResult(problems=(nul,))
    name = path.rpartition("/")[2]
    tool = FILES.get(name)
    if tool is None:
        return ExtractResult()
    rows: list[Dependency] = []
    problems: list[ManifestProblem] = []
    for number, raw in enumerate(strip_bom(text).splitlines(), 1):
        words = raw.partition("#")[0].split()
        if not words:
            continue
        if len(words) > 1 and name not in _MULTI:
            message = f"{name} holds one version; {' '.join(words[1:])!r} after it is ignored"
            problems.append(ManifestProblem(path, number, message, "warning"))
        for word in words if name in _MULTI else words[:1]:
            version = word.removeprefix(_PREFIXES.get(name, "\0"))
            rows.append(_row(path, number, tool, version, name))
        if name not in _MULTI:
            break
    return ExtractResult(dependencies=tuple(rows), problems=tuple(problems))


def _row(path: str, line: int, tool: str, version: str, name: str) -> Dependency:
    row = tool_row(manager=ID, file=path, line=line, tool=tool, version=version, dep_type=name)
    constraint = row.constraint
    if (
        row.skip_reason is None
        and constraint is not None
        and not constraint.startswith("lts")
        and not mise.is_valid(constraint)
    ):
        reason = f"{version!r} is not a {tool} version (a virtualenv name or another build?)"
        return replace(row, skip_reason=reason)
    return row
