"""The lowest Python a row is judged for, and which releases install there (Requires-Python)."""

from __future__ import annotations

from datetime import UTC, datetime

import pytest
from msgspec.structs import replace

from patchula.models import Catalog, Dependency, Release
from patchula.policy.requires_python import _bound, admits, bounded, python_bound


@pytest.mark.parametrize(
    ("requires", "markers", "expected"),
    [
        (">=3.8", None, "3.8"),
        (">=3.8.1", None, "3.8.1"),  # flake8's floor: a project on >=3.8 cannot take it
        (">3.8", None, "3.8.1"),
        (">=3.8,<4.0", None, "3.8"),  # Poetry's ^3.8
        ("~=3.9 || >=3.12", None, "3.9"),
        (None, 'python_version == "3.7"', "3.7"),
        (None, 'python_full_version >= "3.8.10"', "3.8.10"),
        (None, 'python_version >= "3.9" and sys_platform == "win32"', "3.9"),
        (None, '"3.9" <= python_version', "3.9"),
        (">=3.8", 'python_version >= "3.10"', "3.10"),
        (">=3.8", 'python_version < "3.12"', "3.8"),
        # No lower bound: a marker bound only from above, or one another variable may satisfy.
        (None, 'python_version < "3.8"', None),
        (None, 'python_version >= "3.9" or sys_platform == "win32"', None),
        (None, 'sys_platform == "win32"', None),
        (None, "not a marker ==", None),
        # No Python satisfies both: no bound rather than a guess.
        (">=3.10", 'python_version < "3.8"', None),
        ("not a specifier", None, None),
    ],
)
def test_the_lowest_python(requires: str | None, markers: str | None, expected: str | None) -> None:
    """Uv and Dependabot judge a project for the lowest Python it supports."""
    bound = _bound(requires, markers)
    assert (bound.python if bound is not None else None) == expected


@pytest.mark.parametrize(
    ("requires", "markers", "basis"),
    [
        (">=3.8", None, "the project supports Python 3.8 (requires-python >=3.8)"),
        (
            ">=3.8",
            'python_version < "3.12"',
            "the project supports Python 3.8 (requires-python >=3.8)",
        ),
        # The marker, not the project, put the row on 3.10: the note says so.
        (
            ">=3.8",
            'python_version >= "3.10"',
            (
                'the row applies to Python 3.10 (python_version >= "3.10"; the project:'
                " requires-python >=3.8)"
            ),
        ),
        (
            None,
            'python_version >= "3.9"',
            'the row applies to Python 3.9 (python_version >= "3.9")',
        ),
    ],
)
def test_the_basis_names_what_set_the_python(
    requires: str | None, markers: str | None, basis: str
) -> None:
    """A note never credits the project's requires-python with a Python only the marker sets."""
    bound = _bound(requires, markers)
    assert bound is not None
    assert bound.basis == basis


def test_only_pypi_rows_are_bounded() -> None:
    """A row of another datasource names no Requires-Python, whatever its fields hold."""
    row = Dependency(
        manager="pyproject",
        file="pyproject.toml",
        line=1,
        name="x",
        package_name="x",
        datasource="pypi",
        versioning="pep440",
        dep_type="project",
        declared=">=1",
        constraint=">=1",
        requires_python=">=3.9",
    )
    bound = python_bound(row)
    assert bound == ("3.9", "the project supports Python 3.9 (requires-python >=3.9)", None)
    assert python_bound(replace(row, datasource="npm")) is None


@pytest.mark.parametrize(
    ("requires_python", "python", "expected"),
    [
        (None, "3.7", True),
        (">=3.8", "3.7", False),
        (">=3.8", "3.8", True),
        (">=3.9 || >=3.7", "3.7", True),  # files disagree: any admits
        ("!!garbage", "3.7", True),  # pip ignores an invalid Requires-Python
        ("==3.*", "3.13", True),
    ],
)
def test_admits(requires_python: str | None, python: str, expected: bool) -> None:  # noqa: FBT001
    """``packaging.specifiers`` decides, as pip does."""
    assert admits(requires_python, python) is expected


def test_bounded_marks_releases_for_another_python_not_installable_but_keeps_the_pin() -> None:
    """Latest stays the registry's; the kept pin and releases without files stay as they are."""
    at = datetime(2024, 1, 1, tzinfo=UTC)
    catalog = Catalog(
        datasource="pypi",
        package_name="zipp",
        releases=(
            Release("3.15.0", at, requires_python=">=3.7"),
            Release("3.16.0", at, requires_python=">=3.8"),
            Release("3.17.0", at, requires_python=">=3.8"),
            Release("3.18.0", None, installable=False),
        ),
        latest="3.17.0",
        fetched_at=at,
    )
    kept = bounded(catalog, "3.7", keep="3.16")
    assert [(r.version, r.installable) for r in kept.releases] == [
        ("3.15.0", True),
        ("3.16.0", True),
        ("3.17.0", False),
        ("3.18.0", False),
    ]
    assert kept.releases[2].requires_python == ">=3.8"
    assert kept.latest == "3.17.0"
    assert bounded(catalog, "3.7", keep="3.16") is kept  # rows of one package share it
    assert bounded(catalog, "3.9") is catalog  # nothing excluded: the catalog itself
