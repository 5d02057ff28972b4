"""The ``.tool-versions`` manager: asdf's tool file (mise reads it too), one row per version.

A line is ``<tool> <version> [<version>…]`` separated by whitespace; ``#`` starts a comment,
on its own line or after the versions (``asdf-vm/asdf:docs/manage/configuration.md``). Every
version is a row (the first is asdf's primary, the rest fallbacks); ``system``, ``ref:`` and
``path:`` are skipped rows with why, ``prefix:``, ``latest`` and ``lts`` read as mise reads them
(registries.md §7). asdf plugin names resolve as mise unaliases them (``nodejs`` → ``node``).
"""

from __future__ import annotations

from patchula.manager import paths
from patchula.manager.base import ReadFile, nul_problem, strip_bom
from patchula.models import Dependency, ExtractResult, ManifestProblem
from patchula.tools import VERSIONING, tool_row

__all__ = ["DATASOURCE", "ID", "VERSIONING", "extract", "matches"]

ID = "tool_versions"
DATASOURCE = "node"  # the datasource most of its rows use; each row names its own
matches = paths.tool_versions  # the path rule: manager/paths.py (discovery imports no manager)
DEP_TYPE = "tool-versions"
FILE = paths.TOOL_VERSIONS_FILE
# asdf lists a primary version and a few fallbacks: a line with more is no tool line.
MAX_VERSIONS = 100


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
        words = raw.partition("#")[0].split()
        if not words:
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
