"""Property test: Poetry constraints, converted to PEP 440, admit what poetry-core admits.

A seeded corpus of generated Poetry constraints (carets, tildes, PEP 440 operators, bare and
wildcard versions, AND groups, ``||``/``|`` unions) is converted by
``manager.pyproject.poetry_constraint`` and checked against poetry-core's own parser
(``poetry.core.constraints.version.parse_constraint``, a test dependency only): every final
release of a version grid must be admitted by ``versioning.pep440.matches`` exactly when
poetry-core's constraint ``allows`` it, and ``max_satisfying`` must pick the newest final release
poetry-core allows. A constraint poetry-core refuses must not convert to a row either.

One divergence is known and allowed (``_diverges``): poetry-core reads ``!=V`` as ``<V || >V``,
and its ``>V`` leaves out V's post-releases (PEP 440's rule for ``>``), so ``!=2`` refuses
``2.0.post1``, which PEP 440's ``!=2`` admits. No PEP 440 AND of specifiers spells Poetry's
reading, and a post-release of an excluded version is rare.
"""

from __future__ import annotations

import itertools
import random

import pytest
from poetry.core.constraints.version import Version as PoetryVersion
from poetry.core.constraints.version import parse_constraint

from patchula.manager import pyproject
from patchula.versioning import pep440

SEED = 20261202
CASES = 1500

# Every final release of 1 to 3 components in 0..3 (and a few larger ones): the grid each
# converted constraint is checked on.
GRID = [
    ".".join(map(str, parts))
    for size in (1, 2, 3)
    for parts in itertools.product(range(4), repeat=size)
] + ["4.0.0", "10.1", "2.0.post1", "1.2.3.4"]


def _version(rng: random.Random) -> str:
    parts = [str(rng.choice([0, 0, 1, 1, 2, 3])) for _ in range(rng.choice([1, 2, 2, 3, 3]))]
    return ".".join(parts)


def _atom(rng: random.Random) -> str:
    version = _version(rng)
    kind = rng.choice(
        ["^", "~", "~=", ">=", ">", "<", "<=", "==", "!=", "", "=", "wild", "any", "^ "]
    )
    if kind == "wild":
        return f"{version}.*"
    if kind == "any":
        return "*"
    return f"{kind}{version}"


def _and_group(rng: random.Random) -> str:
    atoms = [_atom(rng) for _ in range(rng.choice([1, 1, 2, 2, 3]))]
    if len(atoms) > 1 and "*" in atoms:
        atoms = [a for a in atoms if a != "*"] or ["*"]
    return rng.choice([",", ", ", " "]).join(atoms)


def corpus() -> list[str]:
    """The seeded constraints under test (the same list on every run)."""
    rng = random.Random(SEED)  # noqa: S311 - a reproducible corpus, not a secret
    cases: list[str] = []
    while len(cases) < CASES:
        groups = [_and_group(rng) for _ in range(rng.choice([1, 2, 2, 3]))]
        cases.append(rng.choice([" || ", "||", " | "]).join(groups))
    return cases


def _poetry(spec: str) -> object | None:
    try:
        return parse_constraint(spec)
    except ValueError:  # ParseConstraintError and InvalidVersionError are ValueErrors
        return None


def _diverges(spec: str, differ: set[str]) -> bool:
    """The known divergence: only post-releases differ, and the constraint has a ``!=``."""
    return "!=" in spec and all(pep440.sort_key(v)[1].is_postrelease for v in differ)


@pytest.mark.parametrize("chunk", range(5))
def test_converted_constraints_admit_what_poetry_core_allows(chunk: int) -> None:
    """On every grid version, ``pep440.matches`` of the conversion equals poetry-core's answer."""
    cases = corpus()[chunk::5]
    checked = 0
    for spec in cases:
        oracle = _poetry(spec)
        try:
            converted = pyproject.poetry_constraint(spec)
        except ValueError:
            converted_ok = False
        else:
            converted_ok = True
        if oracle is None:
            # Poetry refuses it: no row may pretend to know its range.
            assert not converted_ok, (spec, converted)
            continue
        assert converted_ok, spec
        allowed = [v for v in GRID if oracle.allows(PoetryVersion.parse(v))]  # type: ignore[attr-defined]
        if converted is None:
            assert allowed == GRID, spec
            continue
        assert pep440.is_valid_constraint(converted), (spec, converted)
        ours = [v for v in GRID if pep440.matches(v, converted)]
        if ours != allowed and _diverges(spec, set(ours) ^ set(allowed)):
            continue
        assert ours == allowed, (spec, converted)
        newest = max(allowed, key=pep440.sort_key, default=None)
        assert pep440.max_satisfying(GRID, converted) == newest, (spec, converted)
        checked += 1
    assert checked > len(cases) // 2  # most generated cases are real constraints


def test_the_corpus_holds_unions_of_every_separator() -> None:
    """The generator really produces the OR forms under test (``||``, ``|``) and AND groups."""
    cases = corpus()
    assert sum(" || " in c for c in cases) > 300
    assert sum(" | " in c for c in cases) > 300
    assert sum("," in c for c in cases) > 300
