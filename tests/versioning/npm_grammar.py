"""A seeded generator of npm semver ranges and versions for the oracle property test.

It covers node-semver's range grammar (``range.bnf``): every primitive operator, ``~``, ``~>``
and ``^`` (0.x carets included), x-ranges (``x``, ``X``, ``*``, missing parts), hyphen ranges,
``||``, ``""``, build metadata, prereleases, the loose spellings npm accepts (``v1.2.3``,
``=1.2.3``, spaces after an operator) and invalid input. Numbers are kept small so that
generated versions and ranges meet often.
"""

from __future__ import annotations

import random

_PRE_IDS = ["alpha", "beta", "rc", "0", "1", "2", "10", "a1", "x-y", "-", "pre", "01", "1a"]
_BUILD_IDS = ["build", "1", "001", "sha-5114f85", "x"]
_SPACES = [" ", " ", " ", "  ", "\t", " \n "]
_GARBAGE = [
    "blerg",
    ">=",
    "<",
    "~>",
    "^",
    "1.x.3",
    "x.1",
    "*.1.2",
    "1.2.3.4",
    "01.2.3",
    "1.2.3-",
    "latest",
    "1.2.3 -",
    "- 1.2.3",
    ">=>1.0.0",
    "=>1.0.0",
    "!=1.0.0",
    "1.0.0 - 2.0.0 - 3.0.0",
    "a.b.c",
    "1.2+build",
    "1+b",
    "x+build",
    "~1.2.3+build",
    "1.2.3-+",
    "v",
    "=",
    "**",
    "1.2.*.*",
]


def _number(rng: random.Random) -> str:
    return str(rng.choice([0, 0, 1, 1, 2, 3]))


def _prerelease(rng: random.Random) -> str:
    return ".".join(rng.choice(_PRE_IDS) for _ in range(rng.choice([1, 1, 2])))


def _build(rng: random.Random) -> str:
    return ".".join(rng.choice(_BUILD_IDS) for _ in range(rng.choice([1, 2])))


def version(rng: random.Random) -> str:
    """One version string: mostly valid semver, some prereleases, build metadata and junk."""
    roll = rng.random()
    if roll < 0.06:
        return rng.choice(["1.2", "junk", "", "1.2.3.4", "01.0.0", "1.0.0-01", "v", "1.0.0-"])
    text = f"{_number(rng)}.{_number(rng)}.{_number(rng)}"
    if rng.random() < 0.4:
        text += f"-{_prerelease(rng)}"
    if rng.random() < 0.1:
        text += f"+{_build(rng)}"
    if rng.random() < 0.08:
        text = rng.choice(["v", "=", "= ", " v", "=v"]) + text
    return text


def _part(rng: random.Random) -> str:
    return rng.choice(["x", "X", "*"]) if rng.random() < 0.15 else _number(rng)


def partial(rng: random.Random) -> str:
    """A partial version as ranges write it: ``1``, ``1.2``, ``1.x``, ``1.2.3-rc.1+b``."""
    parts = [_part(rng) for _ in range(rng.choice([1, 2, 3, 3, 3]))]
    for i in range(1, len(parts)):
        # Mostly a wildcard stays wildcard (``1.x.x``); sometimes not (``1.x.3``, invalid).
        if not parts[i - 1].isdigit() and rng.random() < 0.85:
            parts[i] = rng.choice(["x", "X", "*"])
    text = ".".join(parts)
    if len(parts) == 3 and rng.random() < 0.3:
        text += f"-{_prerelease(rng)}"
    if rng.random() < 0.06:
        text += f"+{_build(rng)}"
    if rng.random() < 0.06:
        text = rng.choice(["v", "=", "v "]) + text
    return text


def _comparator(rng: random.Random) -> str:
    roll = rng.random()
    if roll < 0.05:
        return rng.choice(["*", "x", "X", ""])
    if roll < 0.1:
        return rng.choice(_GARBAGE)
    operator = rng.choice(["", "", "=", "<", "<=", ">", ">=", ">=", "~", "~>", "^", "^", "^"])
    gap = rng.choice(_SPACES) if operator and rng.random() < 0.15 else ""
    return f"{operator}{gap}{partial(rng)}"


def _set(rng: random.Random) -> str:
    if rng.random() < 0.15:
        return f"{partial(rng)}{rng.choice([' - ', ' - ', '  -  ', ' -'])}{partial(rng)}"
    count = rng.choice([1, 1, 1, 2, 2, 3])
    return rng.choice(_SPACES).join(_comparator(rng) for _ in range(count))


def constraint(rng: random.Random) -> str:
    """One range: one to three ``||`` alternatives, sometimes padded or empty."""
    count = rng.choice([1, 1, 1, 2, 2, 3])
    text = rng.choice([" || ", "||", " ||", "|| "]).join(_set(rng) for _ in range(count))
    if rng.random() < 0.05:
        text = rng.choice([" ", "\t", "\n"]) + text + rng.choice(["", " "])
    return text


def corpus(seed: int, ranges: int, versions: int) -> tuple[list[str], list[str]]:
    """``ranges`` ranges and a shared pool of ``versions`` versions, the same for one seed."""
    rng = random.Random(seed)  # noqa: S311 - reproducible test input, not secrets
    return [constraint(rng) for _ in range(ranges)], [version(rng) for _ in range(versions)]
