"""The warm path's compact-document parsers against plain per-release loops (issue 12, warm runs).

``pypi.parse_compact`` and ``times_from_epochs`` build their lists with C iterators; the
oracles here are the straightforward loops they replaced, run on generated documents (odd
versions, yanked and file-less releases, unknown and unusable times) and on the real pages.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from datetime import UTC, datetime

import orjson
import pytest
from packaging.version import InvalidVersion, Version

from patchula.datasource import pypi
from patchula.datasource.base import from_epoch, times_from_epochs
from patchula.errors import RegistryError
from patchula.models import Catalog, Release
from patchula.versioning import pep440
from tests.datasource.real import PYPI_DOCUMENTS, pypi_page

FETCHED_AT = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _oracle_sums(values: list[object]) -> list[object]:
    """PyPI's stored times are differences (pypi-project-v3): each number after the last sum."""
    sums: list[object] = []
    total: float = 0
    for value in values:
        if isinstance(value, int | float):
            total += value
            sums.append(total)
        else:
            sums.append(None)
    return sums


def _oracle_times(values: list[object]) -> list[datetime | None]:
    out: list[datetime | None] = []
    for value in values:
        if value is None:
            out.append(None)
            continue
        try:
            out.append(datetime.fromtimestamp(value, UTC))  # type: ignore[arg-type]
        except (TypeError, ValueError, OverflowError, OSError):
            out.append(None)  # not a number, or none a datetime holds
    return out


def _valid(text: str) -> bool:
    try:
        Version(text)
    except InvalidVersion:
        return False
    return True


def _oracle_pypi(content: bytes) -> Catalog:
    document = orjson.loads(content)
    rows = list(
        zip(document["versions"], _oracle_times(_oracle_sums(document["times"])), strict=True)
    )
    yanked, no_files = set(document["yanked"]), set(document["noFiles"])
    pythons: list[str | None] = [None] * len(document["versions"])
    last = -1
    for index, value in document["requiresPython"]:  # runs: each holds to the next
        if not last < index < len(pythons) or not (value is None or isinstance(value, str)):
            raise ValueError(index)
        pythons[index:] = [value] * (len(pythons) - index)
        last = index
    releases = [
        Release(
            str(raw), when, str(raw) in yanked, None, str(raw) not in no_files, requires_python=rp
        )
        for (raw, when), rp in zip(rows, pythons, strict=True)
        if _valid(str(raw))
    ]
    usable = [r for r in releases if r.installable and not r.yanked]
    stable = [r.version for r in usable if pep440.is_stable(r.version)]
    public = [v for v in stable if "+" not in v]
    latest = (public or stable)[-1] if stable else (usable[-1].version if usable else None)
    return Catalog(
        datasource="pypi",
        package_name="acme",
        releases=tuple(releases),
        latest=latest,
        fetched_at=FETCHED_AT,
        time_source=pypi.TIME_SOURCE,
        source_url="u",
        reused=True,
    )


_SPELLINGS = (
    *("1.0", "1.0.0", "2.0rc1", "0.9.dev3", "3.1.post2", "not a version", "1!2.0", "v4"),
    *("1.0+local", "9.0+cpu"),
)


def _document(rng: random.Random) -> dict[str, object]:
    count = rng.randrange(0, 12)
    versions: list[object] = [
        rng.choice((*_SPELLINGS, f"{rng.randrange(5)}.{rng.randrange(5)}")) for _ in range(count)
    ]
    if versions and rng.random() < 0.1:
        versions[0] = 7  # a number where a string belongs
    times: list[object] = [
        rng.choice((None, 1_700_000_000 + i, 1.5e9, True, "x", -5))
        if rng.random() < 0.3
        else 1_600_000_000 + 3600 * i
        for i in range(count)
    ]
    pick = [str(v) for v in versions]
    return {
        "name": "acme",
        "versions": versions,
        "times": times,
        "yanked": rng.sample(pick, rng.randrange(len(pick) + 1)) if rng.random() < 0.5 else [],
        "noFiles": rng.sample(pick, rng.randrange(len(pick) + 1)) if rng.random() < 0.5 else [],
        "requiresPython": [
            [i, rng.choice((None, ">=3.8", ">=3.9 || >=3.7"))]
            for i in range(count)
            if rng.random() < 0.4
        ],
    }


def _parse(content: bytes) -> Catalog:
    return pypi.parse_compact(
        content, package_name="acme", fetched_at=FETCHED_AT, source_url="u", reused=True
    )


def _outcome(convert: Callable[[], list[datetime | None]]) -> object:
    """The list, or the type of the exception (there should be none)."""
    try:
        return convert()
    except (OverflowError, ValueError, OSError) as exc:
        return type(exc)


def test_times_from_epochs_equals_the_per_value_loop() -> None:
    """Numbers, ``None``, bools, strings and overflows: the same list (or the same error)."""
    rng = random.Random(12)  # noqa: S311 - reproducible test data
    pool: list[object] = [
        *(None, 0, -1, 1.25, 1_700_000_000, True, False, "1", 10**30, [], 2.5e9),
        *(-(10**30), float("nan"), float("inf"), 253_402_300_800, -62_135_596_801),
    ]
    for _ in range(2000):
        values = [rng.choice(pool) for _ in range(rng.randrange(6))]
        expected = _outcome(lambda: _oracle_times(values))  # noqa: B023 - called at once
        assert _outcome(lambda: times_from_epochs(values)) == expected  # noqa: B023
        assert _outcome(lambda: times_from_epochs(iter(values))) == expected  # noqa: B023


def test_a_stored_time_no_datetime_holds_is_unknown_not_a_crash() -> None:
    """A damaged or hostile stored document: absurd epochs leave their releases undated."""
    absurd = [10**30, -(10**30), float("nan"), float("inf"), 253_402_300_800]
    assert times_from_epochs([*absurd, 0]) == [None] * len(absurd) + [
        datetime(1970, 1, 1, tzinfo=UTC)
    ]
    assert [from_epoch(value) for value in absurd] == [None] * len(absurd)
    content = (
        # Differences (pypi-project-v3): year 10000, then back to the epoch, then 1e300.
        b'{"name": "acme", "versions": ["1.0", "2.0", "3.0"],'
        b' "times": [253402300800, -253402300800, 1e300],'
        b' "yanked": [], "noFiles": [], "requiresPython": [[2, ">=3.8"]]}'
    )
    catalog = _parse(content)
    assert [(r.version, r.released_at) for r in catalog.releases] == [
        ("1.0", None),
        ("2.0", datetime(1970, 1, 1, tzinfo=UTC)),
        ("3.0", None),
    ]


def test_pypi_compact_parse_equals_the_per_release_loop() -> None:
    """Generated documents: invalid versions dropped, yanked and file-less flags, odd times."""
    rng = random.Random(7)  # noqa: S311 - reproducible test data
    for _ in range(1500):
        content = orjson.dumps(_document(rng))
        assert _parse(content) == _oracle_pypi(content)


@pytest.mark.parametrize("name", PYPI_DOCUMENTS)
def test_pypi_compact_parse_equals_the_loop_on_real_pages(name: str) -> None:
    """The compact documents of real PyPI pages parse to the loop's catalog."""
    content = pypi.derive(pypi_page(name), package_name=name)
    assert _parse(content) == _oracle_pypi(content)


@pytest.mark.parametrize(
    "document",
    [
        {"versions": ["1.0"], "times": [], "yanked": [], "noFiles": []},
        {"versions": 3, "times": [], "yanked": [], "noFiles": []},
        {"versions": [], "times": [], "yanked": [[1]], "noFiles": []},
        {"times": [], "yanked": [], "noFiles": []},
        {
            "versions": ["1.0"],
            "times": [0],
            "yanked": [],
            "noFiles": [],
            "requiresPython": [[1, None]],
        },
        {
            "versions": ["1.0"],
            "times": [0],
            "yanked": [],
            "noFiles": [],
            "requiresPython": [[0, 3]],
        },
        {
            "versions": ["1.0", "2.0"],
            "times": [0, 0],
            "yanked": [],
            "noFiles": [],
            "requiresPython": [[1, None], [0, None]],
        },
        {"versions": ["1.0"], "times": [0], "yanked": [], "noFiles": []},
    ],
)
def test_pypi_compact_parse_refuses_what_the_loop_refused(document: dict[str, object]) -> None:
    """Different lengths, a non-list, an unhashable flag, a missing column, a bad Python."""
    content = orjson.dumps(document)
    with pytest.raises((KeyError, TypeError, ValueError)):
        _oracle_pypi(content)
    with pytest.raises(RegistryError):
        _parse(content)
