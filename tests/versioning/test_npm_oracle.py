"""Property test: npm ranges agree with npm's node-semver and with the ``nodesemver`` port.

A seeded corpus (``npm_grammar.corpus``: 2,000 ranges by 48 versions) is evaluated three ways:
by ``patchula.versioning.npm``; by npm's own node-semver 7.8.5, whose answers are recorded in
``tests/fixtures/versioning/npm/node-semver-oracle.json``; and by ``nodesemver``, the Python
port the project used before (kept as a test dependency only). patchula must give node-semver's
answer on every validity, ``satisfies`` and ``max_satisfying`` question, and the port's answer
everywhere except where the port itself disagrees with node-semver — each such disagreement
must belong to one of the documented classes in ``PORT_DIVERGENCES`` (with a hand-checked case
each in ``test_port_divergences_follow_node_semver``).

To re-record the fixture after changing the generator (needs Node.js with ``semver``)::

    NODE_SEMVER=/usr/lib/node_modules/npm/node_modules/semver .venv/bin/python -m \
        tests.versioning.test_npm_oracle
"""

from __future__ import annotations

import functools
import hashlib
import json
import re
import subprocess
from pathlib import Path
from typing import Any

import nodesemver
import pytest

from patchula.versioning import npm
from patchula.versioning.base import has_long_number
from tests.versioning import npm_grammar

SEED = 20261201
RANGES = 2000
VERSIONS = 48
FIXTURES = Path(__file__).parent.parent / "fixtures" / "versioning" / "npm"
RECORD = FIXTURES / "node-semver-oracle.json"


# --- the port, called exactly as patchula called it before (the old versioning/npm.py) ----

_PORT_PREFIX = re.compile(r"^[=v\s]+")


@functools.cache
def _port_version(version: str) -> Any:
    cleaned = _PORT_PREFIX.sub("", version.strip())
    if not cleaned or has_long_number(cleaned):
        return None
    try:
        return nodesemver.make_semver(cleaned, loose=False)
    except ValueError:
        return None


@functools.cache
def _port_range(constraint: str) -> Any:
    if has_long_number(constraint):
        return None
    try:
        return nodesemver.make_range(constraint.strip(), loose=False)
    except ValueError:
        return None


def _port_matches(version: str, constraint: str) -> bool:
    parsed, semver_range = _port_version(version), _port_range(constraint)
    return parsed is not None and semver_range is not None and bool(semver_range.test(parsed))


def _port_max_satisfying(versions: list[str], constraint: str) -> str | None:
    best: str | None = None
    for version in versions:
        if _port_matches(version, constraint) and (
            best is None or npm.sort_key(version) > npm.sort_key(best)
        ):
            best = version
    return best


# --- the corpus and node-semver's recorded answers -----------------------------------------


def _corpus() -> tuple[list[str], list[str]]:
    return npm_grammar.corpus(SEED, RANGES, VERSIONS)


def _digest(ranges: list[str], versions: list[str]) -> str:
    return hashlib.sha256(json.dumps([ranges, versions]).encode()).hexdigest()


def _cleaned(version: str) -> str | None:
    """What patchula hands to a semver parser: ``semver.clean``'s prefix rule, bounded digits."""
    cleaned = npm._LENIENT_PREFIX.sub("", npm._trim(version))
    return None if not cleaned or has_long_number(cleaned) else cleaned


@functools.cache
def _recorded() -> list[tuple[bool, int, int]]:
    record = json.loads(RECORD.read_text())
    return [(bool(valid), int(mask, 16), best) for valid, mask, best in record["results"]]


def test_the_corpus_is_the_recorded_one() -> None:
    """The generator still yields the corpus node-semver's answers were recorded for."""
    record = json.loads(RECORD.read_text())
    ranges, versions = _corpus()
    assert record["nodeSemver"] == "7.8.5"
    assert record["corpus"] == {"seed": SEED, "ranges": RANGES, "versions": VERSIONS}
    assert record["sha256"] == _digest(ranges, versions)
    assert len(record["results"]) == RANGES
    # The corpus exercises what it claims to: valid and invalid ranges, hits and misses.
    valid = [r for r, (ok, _, _) in zip(ranges, _recorded(), strict=True) if ok]
    assert 0.5 * RANGES < len(valid) < 0.95 * RANGES
    assert sum(best >= 0 for _, _, best in _recorded()) > 0.3 * RANGES
    for needle in ("||", " - ", "^0.", "~>", "x", "*", "+", "-alpha", "<=", ">", "v"):
        assert any(needle in r for r in valid), needle


def test_agrees_with_node_semver() -> None:
    """Validity, satisfies and max_satisfying equal node-semver's on every corpus question."""
    ranges, versions = _corpus()
    wrong: list[tuple[str, str, object, object]] = []
    for constraint, (valid, mask, best) in zip(ranges, _recorded(), strict=True):
        if npm.is_valid_constraint(constraint) != valid:
            wrong.append(("valid", constraint, npm.is_valid_constraint(constraint), valid))
        for i, version in enumerate(versions):
            expected = bool(mask >> i & 1)
            if npm.matches(version, constraint) != expected:
                wrong.append((version, constraint, not expected, expected))
        expected_max = versions[best] if best >= 0 else None
        if npm.max_satisfying(versions, constraint) != expected_max:
            got = npm.max_satisfying(versions, constraint)
            wrong.append(("max", constraint, got, expected_max))
    assert wrong == []


# Where the nodesemver port (0.9.1, an early node-semver) and node-semver 7.8.5 disagree;
# patchula follows node-semver. Each class is recognised from the range and version text.
PORT_DIVERGENCES: dict[str, str] = {
    "x-order": "a number after a wildcard (`1.x.3`, `x.1`) is invalid in node-semver 7.x",
    "build": "node-semver strips `+build` anywhere in a range (`1.2+b`, `x+b` are valid)",
    "double-star": "node-semver removes one `*` per comparator: `**` is invalid",
    "hyphen-prerelease": "the port mangles a prerelease identifier `-` (`^1.2.3--` is valid)",
    "any-alternative": "an alternative admitting any version makes the whole range `*` (7.x), "
    "so prereleases another alternative admitted no longer match",
    "prerelease-bound": "7.x upper bounds are `<X.Y.Z-0`, which refuse `X.Y.Z-pre` that the "
    "port's `<X.Y.Z` let through a prerelease comparator",
}


def _is_any(alternative: str) -> bool:
    sets = npm._parse_range(alternative)
    return sets is not None and sets[0][0] == ()


def _divergence(constraint: str, version: str | None) -> str | None:
    """The ``PORT_DIVERGENCES`` class a port/node-semver disagreement belongs to, if any."""
    if re.search(r"[xX*]\.(?:0|[1-9])", constraint):
        return "x-order"
    if "+" in constraint:
        return "build"
    if "**" in constraint:
        return "double-star"
    if re.search(r"--|\.-", constraint):
        return "hyphen-prerelease"
    if version is None:
        return None
    alternatives = constraint.split("||")
    if len(alternatives) > 1 and any(_is_any(a) for a in alternatives):
        return "any-alternative"
    if not npm.is_stable(version):
        return "prerelease-bound"
    return None


def test_agrees_with_the_nodesemver_port_except_documented_divergences() -> None:
    """Every answer equals the port's, unless node-semver differs in a documented way."""
    ranges, versions = _corpus()
    agreed = 0
    unexplained: list[tuple[str, str | None]] = []
    seen: set[str] = set()
    for constraint in ranges:
        valid = npm.is_valid_constraint(constraint)
        if valid != (_port_range(constraint) is not None):
            kind = _divergence(constraint, None)
            if kind is None:
                unexplained.append((constraint, None))
            seen.add(kind or "")
            continue
        for version in versions:
            if npm.matches(version, constraint) == _port_matches(version, constraint):
                agreed += 1
                continue
            kind = _divergence(constraint, version)
            if kind is None:
                unexplained.append((constraint, version))
            seen.add(kind or "")
        ours, port = (
            npm.max_satisfying(versions, constraint),
            _port_max_satisfying(versions, constraint),
        )
        if ours != port and not any(
            _divergence(constraint, v) for v in versions if v in {ours, port}
        ):
            unexplained.append((constraint, f"max {ours} != {port}"))
    assert unexplained == []
    assert agreed > 0.7 * RANGES * VERSIONS
    assert seen <= set(PORT_DIVERGENCES)


@pytest.mark.parametrize(
    ("kind", "constraint", "version", "node_semver"),
    [
        ("x-order", "1.x.3", "1.2.3", None),
        ("x-order", "x.1", "1.1.0", None),
        ("build", "1.2+build", "1.2.9", True),
        ("build", "x+build", "3.0.0", True),
        ("double-star", "**", "1.0.0", None),
        ("hyphen-prerelease", "^1.2.3--", "1.2.3--.1", True),
        ("any-alternative", "* || >=1.0.0-beta", "1.0.0-beta", False),
        ("any-alternative", "|| 1.0.0-beta", "1.0.0-beta", False),
        ("prerelease-bound", "^1.1.0-0.pre ~>1.0", "1.1.0-beta", False),
        ("prerelease-bound", "<1.2 >=1.2.0-alpha", "1.2.0-beta", False),
    ],
)
def test_port_divergences_follow_node_semver(
    kind: str,
    constraint: str,
    version: str,
    node_semver: bool | None,  # noqa: FBT001 - a table
) -> None:
    """Each documented divergence: patchula gives node-semver's answer (None: invalid range)."""
    assert _divergence(constraint, version) == kind
    if node_semver is None:
        assert not npm.is_valid_constraint(constraint)
        assert _port_range(constraint) is not None
        return
    assert npm.matches(version, constraint) is node_semver
    assert _port_matches(version, constraint) is not node_semver


@pytest.mark.parametrize(
    ("constraint", "version", "expected"),
    [
        # node-semver's white space is ECMAScript's: NBSP separates, U+0085 and U+001C do not.
        (">=1.0.0\xa0<2.0.0", "1.5.0", True),
        (">=1.0.0\x85<2.0.0", "1.5.0", False),
        ("\x1c1.0.0", "1.0.0", False),
        # Digits are ASCII only: U+0661 (Arabic-Indic digit one) is not a version number.
        ("\u0661.0.0", "1.0.0", False),
        # Versions are at most 256 characters and their numbers at most 2**53 - 1.
        (">=1.0.0", "1.0.0-" + "a" * 251, False),
        (">=1.0.0", "9007199254740991.0.0", True),
        (">=1.0.0", "9007199254740992.0.0", False),
        ("^9007199254740991.0.0", "9007199254740991.0.1", False),
    ],
)
def test_node_semver_bounds_and_white_space(
    constraint: str, version: str, *, expected: bool
) -> None:
    """Lengths, number bounds, digits and white space follow node-semver, not Python's ``re``."""
    assert npm.matches(version, constraint) is expected


def _record() -> None:
    """Re-record node-semver's answers for the corpus (run as a module; needs Node.js)."""
    ranges, versions = _corpus()
    request = json.dumps({"ranges": ranges, "versions": [_cleaned(v) for v in versions]})
    answer = subprocess.run(  # noqa: S603 - a fixed script under tests/fixtures
        ["node", str(FIXTURES / "oracle.js")],  # noqa: S607 - node from PATH, on purpose
        input=request,
        capture_output=True,
        text=True,
        check=True,
    )
    produced = json.loads(answer.stdout)
    record = {
        "nodeSemver": produced["nodeSemver"],
        "corpus": {"seed": SEED, "ranges": RANGES, "versions": VERSIONS},
        "sha256": _digest(ranges, versions),
        "results": produced["results"],
    }
    RECORD.write_text(json.dumps(record, separators=(",", ":")) + "\n")


if __name__ == "__main__":
    _record()
