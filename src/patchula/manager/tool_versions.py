"""The ``.tool-versions`` manager: asdf's tool file (mise reads it too), one row per version.

A line is ``<tool> <version> [<version>…]`` separated by whitespace; ``#`` starts a comment,
on its own line or after the versions (``asdf-vm/asdf:docs/manage/configuration.md``). Every
version is a row (the first is asdf's primary, the rest fallbacks); ``system``, ``ref:`` and
``path:`` are skipped rows with why, ``prefix:``, ``latest`` and ``lts`` read as mise reads them
(registries.md §7). asdf plugin names resolve as mise unaliases them (``nodejs`` → ``node``).
"""

from __future__ import annotations

import re

from patchula.manager import paths
from patchula.manager.base import ReadFile, nul_problem, strip_bom
from patchula.models import Dependency, ExtractResult, ManifestProblem
from patchula.tools import VERSIONING, tool_row

__all__ = ["DATASOURCE", "ID", "VERSIONING", "decode", "extract", "matches"]

ID = "tool_versions"
DATASOURCE = "node"  # the datasource most of its rows use; each row names its own
matches = paths.tool_versions  # the path rule: manager/paths.py (discovery imports no manager)
DEP_TYPE = "tool-versions"
FILE = paths.TOOL_VERSIONS_FILE
# asdf lists a primary version and a few fallbacks: a line with more is no tool line.
MAX_VERSIONS = 100
# A byte that is not UTF-8, as ``decode`` keeps it (PEP 383 surrogate escapes U+DC80-U+DCFF).
_ESCAPED_BYTE = re.compile("[\udc80-\udcff]")


def decode(data: bytes, path: str) -> str:  # noqa: ARG001 - the scan's decode hook signature
    """A ``.tool-versions`` that is not UTF-8, line by line as asdf's shell reads it.

    The scan calls this only for a file that is not UTF-8 (``NotUtf8Error``). asdf splits each
    line into words whatever its bytes, so one bad byte must not cost the file's other lines:
    undecodable bytes are kept as surrogate escapes (PEP 383), and ``extract`` reports each
    line holding one (outside a comment) as a problem naming the byte, reading every other.
    """
    return data.decode("utf-8", "surrogateescape")


def extract(path: str, text: str, read: ReadFile) -> ExtractResult:  # noqa: ARG001 - no includes
    """Extract one row per tool version (dep_type ``tool-versions``).

    A tool without a version is a problem naming its line; the other lines are still read.
    """
    nul = nul_problem(path, text)
    if nul is not None:
        return ExtractResult(problems=(nul,))
    rows: list[Dependency] = []
    problems: list[ManifestProblem] = []
    for number, raw in enumerate(strip_bom(text).splitlines(), 1):
        content = raw.partition("#")[0]
        words = content.split()
        if not words:
            continue
        escaped = _ESCAPED_BYTE.search(content)
        if escaped is not None:
            byte = ord(escaped.group()) - 0xDC00
            message = f"not UTF-8 text (invalid byte 0x{byte:02x}); this line is not read"
            problems.append(ManifestProblem(path, number, message))
            continue
        tool, versions = words[0], words[1:]
        if not versions:
            problems.append(ManifestProblem(path, number, f"tool {tool!r} has no version"))
            continue
        if len(versions) > MAX_VERSIONS:
            message = (
                f"tool {tool!r} has {len(versions)} versions (more than {MAX_VERSIONS}); not read"
            )
            problems.append(ManifestProblem(path, number, message))
            continue
        rows.extend(
            tool_row(
                manager=ID,
                file=path,
                line=number,
                tool=tool,
                version=version,
                dep_type=DEP_TYPE,
            )
            for version in versions
        )
    return ExtractResult(dependencies=tuple(rows), problems=tuple(problems))
