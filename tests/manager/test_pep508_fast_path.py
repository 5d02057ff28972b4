"""``pep508_dependency``'s fast path for plain requirements equals the full ``Requirement`` parse.

The oracle builds every dependency through ``packaging.requirements.Requirement`` as before the
fast path existed; both must give the same ``Dependency`` or both refuse the requirement.
Inputs: generated from the pieces where the two could part (spacing, operators, wildcards,
local labels, epochs, odd names, commas, markers, extras, URLs), and every requirement line of
the repository's fixtures and the shared corpus.
"""

from __future__ import annotations

import random
from pathlib import Path

import pytest
import tomli
from packaging.requirements import InvalidRequirement, Requirement
from packaging.utils import canonicalize_name

from patchula.manager import base
from patchula.manager.base import pep508_dependency, url_skip_reason
from patchula.models import Dependency

ROOT = Path(__file__).resolve().parent.parent.parent
CORPUS = Path("/work/shared/corpus")


def _oracle(requirement: str) -> Dependency | type[Exception]:
    try:
        req = Requirement(requirement)
        markers = str(req.marker) if req.marker is not None else None
        constraint = None if req.url else str(req.specifier) or None
    except InvalidRequirement:
        return InvalidRequirement
    except ValueError:
        return InvalidRequirement
    return Dependency(
        manager="pip",
        file="requirements.txt",
        line=3,
        name=req.name,
        package_name=canonicalize_name(req.name),
        datasource="pypi",
        versioning="pep440",
        dep_type="prod",
        declared=req.url or base._written_specifier(requirement),
        constraint=constraint,
        skip_reason=url_skip_reason(req.url) if req.url else None,
        markers=markers,
        extras=tuple(sorted(req.extras)),
    )


def _ours(requirement: str) -> Dependency | type[Exception]:
    try:
        return pep508_dependency(
            requirement,
            manager="pip",
            file="requirements.txt",
            line=3,
            dep_type="prod",
            datasource="pypi",
            versioning="pep440",
        )
    except InvalidRequirement:
        return InvalidRequirement


_NAMES = ("requests", "Django", "zope.interface", "a", "a_b-c.d", "x1", "-bad", "bad-", "ok.", "9")
_OPS = ("==", "!=", ">=", "<=", ">", "<", "~=", "===", "=", "=>", "")
_VERSIONS = (
    "1.0",
    "1",
    "1.0.*",
    "1.*",
    "2.0rc1",
    "1!2.0",
    "1.0+local.7",
    "1.0+loc-al",
    "1.0.post1.dev2",
    "v1.0",
    "1.0a",
    "*",
    "1..0",
    "9" * 5000,
    "1.0-1",
    "01.02",
    "abc",
)
_GAPS = ("", " ", "\t", "  ", "\n")
_TAILS = ("", " ; python_version < '3.12'", ";os_name=='nt'", "[extra]", " @ https://x/y.whl", ",")


def _generated(rng: random.Random) -> str:
    clauses = [
        rng.choice(_OPS) + rng.choice(_GAPS) + rng.choice(_VERSIONS)
        for _ in range(rng.randrange(4))
    ]
    specifiers = (rng.choice(_GAPS) + "," + rng.choice(_GAPS)).join(clauses)
    if specifiers and rng.random() < 0.05:
        specifiers = f"({specifiers})"
    tail = rng.choice(_TAILS) if rng.random() < 0.2 else ""
    name = rng.choice(_NAMES)
    gap = rng.choice(_GAPS)
    return f"{rng.choice(_GAPS)}{name}{gap}{specifiers}{rng.choice(_GAPS)}{tail}"


def test_generated_requirements_parse_as_packaging_parses_them() -> None:
    """Thousands of plain and not-so-plain requirements: the same dependency or both invalid."""
    rng = random.Random(508)  # noqa: S311 - reproducible test data
    fast = 0
    for _ in range(20000):
        text = _generated(rng)
        assert _ours(text) == _oracle(text), text
        fast += base._simple_requirement(text) is not None
    assert fast > 1500  # the fast path was taken, and agreed


def _real_lines() -> list[str]:
    files = [*ROOT.glob("tests/fixtures/**/requirements*.txt")]
    if CORPUS.is_dir():
        files += CORPUS.glob("**/requirements*.txt")
    lines = []
    for path in [*ROOT.glob("tests/fixtures/**/pyproject.toml"), *CORPUS.glob("**/pyproject.toml")]:
        try:
            document = tomli.loads(path.read_text(errors="replace"))
        except tomli.TOMLDecodeError:
            continue
        project = document.get("project")
        if not isinstance(project, dict):
            continue
        optional = project.get("optional-dependencies")
        groups = [
            project.get("dependencies"),
            *(optional.values() if isinstance(optional, dict) else ()),
        ]
        lines += [
            text
            for group in groups
            if isinstance(group, list)
            for text in group
            if isinstance(text, str)
        ]
    for path in files:
        for line in path.read_text(errors="replace").splitlines():
            text = line.split(" #", 1)[0].strip()
            if text and not text.startswith(("#", "-")):
                lines.append(text)
    return lines


def test_real_requirement_lines_parse_as_packaging_parses_them() -> None:
    """Every requirements.txt line and PEP 621 dependency of the fixtures and the shared corpus."""
    lines = _real_lines()
    if not lines:
        pytest.skip("no requirements files found")
    for text in lines:
        assert _ours(text) == _oracle(text), text
