"""``patchula run`` on Python rows whose newer releases need a newer Python (Requires-Python).

Real-shaped data: zipp 3.16.0 and later need Python >=3.8, 3.21.0 and later >=3.9
(dependabot-core#8346); pytest 8.0 needs >=3.8, 8.4 >=3.9, 9.0 >=3.10 (dependabot-core#13424,
uv locks 8.3.5 for ``requires-python = ">=3.8"``).
"""

from __future__ import annotations

import json
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
from typer.testing import CliRunner

from patchula.cli import app
from tests.fake_registry import FakeRegistry

OLD = datetime(2023, 1, 1, tzinfo=UTC)
ZIPP = {
    "3.15.0": ">=3.7",
    "3.16.0": ">=3.8",
    "3.17.0": ">=3.8",
    "3.20.2": ">=3.8",
    "3.21.0": ">=3.9",
    "4.1.2": ">=3.9",
}
PYTEST = {
    "7.0.0": ">=3.6",
    "7.4.4": ">=3.7",
    "8.0.0": ">=3.8",
    "8.3.5": ">=3.8",
    "8.4.0": ">=3.9",
    "9.0.0": ">=3.10",
    "9.2.0": ">=3.10",
}


def _add(fake_registry: FakeRegistry, name: str, pythons: dict[str, str]) -> None:
    releases = {v: OLD + timedelta(days=30 * i) for i, v in enumerate(pythons)}
    fake_registry.pypi.add(name, releases, requires_python=pythons)


def _run(fake_registry: FakeRegistry, root: Path, registry: str = "pypi") -> dict[str, Any]:
    host = "crates-index" if registry == "crates" else registry
    result = CliRunner().invoke(
        app,
        [
            "run",
            str(root),
            "--no-cache",
            "--format",
            "json",
            "--registry",
            f"{registry}={fake_registry.url(host)}",
        ],
        catch_exceptions=False,
    )
    report: dict[str, Any] = json.loads(result.stdout)
    return report


def _rows(report: dict[str, Any]) -> list[dict[str, Any]]:
    rows: list[dict[str, Any]] = report["repositories"][0]["dependencies"]
    return rows


def _one(report: dict[str, Any], name: str) -> dict[str, Any]:
    (row,) = (row for row in _rows(report) if row["name"] == name)
    return row


def _view(row: dict[str, Any]) -> tuple[object, ...]:
    return (
        row["status"],
        row.get("current"),
        row.get("latest"),
        row.get("eligible"),
        row.get("reason"),
    )


def test_a_row_for_python_3_7_is_offered_only_what_installs_on_3_7(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """dependabot-core#8346: ``zipp==3.15.0 ; python_version=='3.7'`` is up to date, not 4.1.2.

    The 3.8 row moves to 3.20.2, the newest release for 3.8; both show the registry's latest
    and say which release needs a newer Python.
    """
    _add(fake_registry, "zipp", ZIPP)
    (tmp_path / "requirements.txt").write_text(
        "zipp==3.15.0 ; python_version=='3.7'\nzipp==3.17.0 ; python_version>='3.8'\n"
    )
    old, new = _rows(_run(fake_registry, tmp_path))
    assert _view(old) == (
        "up-to-date",
        "3.15.0",
        "4.1.2",
        None,
        (
            '4.1.2 needs Python >=3.9; the row applies to Python 3.7 (python_version == "3.7"):'
            " not proposed"
        ),
    )
    assert old["versionsBehind"] == 0
    assert _view(new) == (
        "outdated",
        "3.17.0",
        "4.1.2",
        "3.20.2",
        (
            '4.1.2 needs Python >=3.9; the row applies to Python 3.8 (python_version >= "3.8"):'
            " not proposed"
        ),
    )
    assert new["versionsBehind"] == 1


def test_a_requirements_file_without_markers_is_not_bounded(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Without markers pip does not know the target Python: no guess, the newest is proposed."""
    _add(fake_registry, "zipp", ZIPP)
    (tmp_path / "requirements.txt").write_text(
        "zipp==3.15.0\nzipp==3.15.0 ; sys_platform == 'win32'\n"
    )
    for row in _rows(_run(fake_registry, tmp_path)):
        assert _view(row) == ("outdated", "3.15.0", "4.1.2", "4.1.2", None)


def test_the_project_requires_python_bounds_current_from_a_range(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """dependabot-core#13424: ``pytest>=7`` for ``requires-python >=3.8`` is 8.3.5, as uv locks."""
    _add(fake_registry, "pytest", PYTEST)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0.1"\nrequires-python = ">=3.8"\n'
        '[dependency-groups]\ntest = ["pytest>=7"]\n'
    )
    row = _one(_run(fake_registry, tmp_path), "pytest")
    assert (row["currentSource"], *_view(row)) == (
        "range",
        "up-to-date",
        "8.3.5",
        "9.2.0",
        None,
        (
            "9.2.0 needs Python >=3.10; the project supports Python 3.8 (requires-python >=3.8):"
            " not proposed"
        ),
    )


@pytest.mark.parametrize(
    ("table", "expected"),
    [
        # Poetry's python dependency: ^3.9 is >=3.9,<4.0, lowest 3.9.
        ('[tool.poetry.dependencies]\npython = "^3.9"\npytest = "7.4.4"\n', "8.4.0"),
        # PEP 621 wins over Poetry's python; the marker narrows further (lowest 3.10).
        (
            (
                '[project]\nname = "a"\nrequires-python = ">=3.8"\n'
                "dependencies = [\"pytest==7.4.4; python_version >= '3.10'\"]\n"
                '[tool.poetry.dependencies]\npython = "^3.9"\n'
            ),
            "9.2.0",
        ),
    ],
)
def test_poetry_python_and_markers_bound_together(
    fake_registry: FakeRegistry, tmp_path: Path, table: str, expected: str
) -> None:
    """The lowest Python both the project and the row's marker admit decides the candidates."""
    _add(fake_registry, "pytest", PYTEST)
    (tmp_path / "pyproject.toml").write_text(table)
    row = _one(_run(fake_registry, tmp_path), "pytest")
    assert (row["status"], row["eligible"]) == ("outdated", expected)


def test_a_poetry_python_restriction_bounds_its_row(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``{version = ">=3.15", python = "~3.7"}`` moves only within 3.7's releases.

    Each entry of a multiple-constraints list is bounded by its own ``python``.
    """
    _add(fake_registry, "zipp", ZIPP)
    _add(fake_registry, "pytest", PYTEST)
    (tmp_path / "pyproject.toml").write_text(
        '[tool.poetry]\nname = "demo"\n[tool.poetry.dependencies]\npython = ">=3.6"\n'
        'zipp = { version = ">=3.15", python = "~3.7" }\n'
        "pytest = [\n"
        '  { version = "7.0.0", python = "~3.7" },\n'
        '  { version = ">=7", python = ">=3.8,<3.10" },\n'
        "]\n"
    )
    report = _run(fake_registry, tmp_path)
    zipp = _one(report, "zipp")
    assert _view(zipp) == (
        "up-to-date",
        "3.15.0",
        "4.1.2",
        None,
        (
            '4.1.2 needs Python >=3.9; the row applies to Python 3.7 (python_version >= "3.7"'
            ' and python_version < "3.8"; the project: requires-python >=3.6): not proposed'
        ),
    )
    old, new = (row for row in _rows(report) if row["name"] == "pytest")
    assert (old["status"], old["current"], old["eligible"]) == ("outdated", "7.0.0", "7.4.4")
    assert (new["status"], new["current"]) == ("up-to-date", "8.3.5")
    assert new["reason"].startswith("9.2.0 needs Python >=3.10; the row applies to Python 3.8")


@pytest.mark.parametrize(
    ("files", "expected"),
    [
        # setuptools' [options] python_requires: current from the range is 3.8's newest.
        (
            {
                "setup.cfg": (
                    "[options]\npython_requires = >=3.8\ninstall_requires =\n    zipp>=3.15\n"
                )
            },
            ("range", "up-to-date", "3.20.2", "4.1.2", None, "3.8"),
        ),
        # Pipfile [requires] python_version: pipenv deploys on 3.7.
        (
            {"Pipfile": '[packages]\nzipp = ">=3.15"\n[requires]\npython_version = "3.7"\n'},
            ("range", "up-to-date", "3.15.0", "4.1.2", None, "3.7"),
        ),
        # No [requires] in the Pipfile, but the lock says what Python it was resolved for.
        (
            {
                "Pipfile": '[packages]\nzipp = ">=3.15"\n',
                "Pipfile.lock": (
                    '{"_meta": {"pipfile-spec": 6, "requires": {"python_version": "3.8"}},'
                    ' "default": {"zipp": {"version": "==3.16.0"}}, "develop": {}}'
                ),
            },
            ("lockfile", "outdated", "3.16.0", "4.1.2", "3.20.2", "3.8"),
        ),
        # hatch.toml: its environments install the project of the pyproject.toml beside it.
        (
            {
                "pyproject.toml": '[project]\nname = "app"\nrequires-python = ">=3.8"\n',
                "hatch.toml": '[envs.test]\ndependencies = ["zipp>=3.15"]\n',
            },
            ("range", "up-to-date", "3.20.2", "4.1.2", None, "3.8"),
        ),
    ],
)
def test_setup_cfg_and_pipfile_name_the_python(
    fake_registry: FakeRegistry,
    tmp_path: Path,
    files: dict[str, str],
    expected: tuple[object, ...],
) -> None:
    """setup.cfg, Pipfile and Pipfile.lock, hatch.toml: each names the Python it is judged for."""
    _add(fake_registry, "zipp", ZIPP)
    for name, text in files.items():
        (tmp_path / name).write_text(text)
    row = _one(_run(fake_registry, tmp_path), "zipp")
    python = expected[-1]
    assert (row["currentSource"], *_view(row)[:4]) == expected[:-1]
    assert f"4.1.2 needs Python >=3.9; the project supports Python {python} " in row["reason"]


def test_a_hatch_environments_python_bounds_its_rows(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``[tool.hatch.envs.py38] python = "3.8"``: that env's zipp moves to 3.8's newest.

    The project's own row is judged for its lowest Python (3.7), each environment for its own.
    """
    _add(fake_registry, "zipp", ZIPP)
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "app"\nrequires-python = ">=3.7"\ndependencies = ["zipp>=3.15"]\n'
        '[tool.hatch.envs.py38]\npython = "3.8"\ndependencies = ["zipp>=3.15"]\n'
        '[tool.hatch.envs.py39]\npython = "3.9"\ndependencies = ["zipp>=3.15"]\n'
    )
    rows = {row["depType"]: row for row in _rows(_run(fake_registry, tmp_path))}
    assert rows["project"]["current"] == "3.15.0"
    assert rows["hatch-env:py38"]["current"] == "3.20.2"
    assert rows["hatch-env:py39"]["current"] == "4.1.2"
    assert rows["hatch-env:py38"]["markers"] == 'python_version == "3.8"'
    assert rows["hatch-env:py38"]["reason"] == (
        '4.1.2 needs Python >=3.9; the row applies to Python 3.8 (python_version == "3.8"; the'
        " project: requires-python >=3.7): not proposed"
    )


def test_a_pin_that_needs_a_newer_python_says_so(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A pin is current whatever its Requires-Python; the row names the Python it needs."""
    _add(fake_registry, "zipp", ZIPP)
    (tmp_path / "requirements.txt").write_text("zipp==4.1.2 ; python_version == '3.7'\n")
    (row,) = _rows(_run(fake_registry, tmp_path))
    assert _view(row) == (
        "up-to-date",
        "4.1.2",
        "4.1.2",
        None,
        'current 4.1.2 needs Python >=3.9; the row applies to Python 3.7 (python_version == "3.7")',
    )


def test_a_range_no_release_for_its_python_satisfies_names_them(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``zipp>=3.16`` for Python 3.7: unknown, naming the matches and the Python they need."""
    _add(fake_registry, "zipp", ZIPP)
    (tmp_path / "requirements.txt").write_text(
        "zipp>=3.16 ; python_version < '3.8' and python_version >= '3.7'\n"
    )
    (row,) = _rows(_run(fake_registry, tmp_path))
    assert row["status"] == "unknown"
    assert row["reason"] == (
        "no usable release satisfies the range '>=3.16': 4.1.2, 3.21.0, 3.20.2, 3.17.0, 3.16.0"
        " match but need another Python (Requires-Python >=3.9); the row applies to Python 3.7"
        ' (python_version < "3.8" and python_version >= "3.7")'
    )


def test_every_match_yanked_is_named_not_called_unpublished(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Crates `allyank = "1"`, and a PyPI project whose every file is yanked (cargo's wording)."""
    fake_registry.crates.add("allyank", {"1.0.0": OLD, "1.1.0": OLD}, yanked={"1.0.0", "1.1.0"})
    fake_registry.crates.add(
        "yank", {"2.9.0": OLD, "3.0.0": OLD, "3.0.1": OLD}, yanked={"3.0.0", "3.0.1"}
    )
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "root"\nversion = "0.1.0"\n[dependencies]\nallyank = "1"\nyank = "3"\n'
    )
    report = _run(fake_registry, tmp_path, "crates")
    assert _one(report, "allyank")["reason"] == (
        "no usable release satisfies the range '1': 1.1.0, 1.0.0 match but are yanked"
    )
    assert _one(report, "yank")["reason"] == (
        "no usable release satisfies the range '3': 3.0.1, 3.0.0 match but are yanked"
    )
    pypi_root = tmp_path / "py"
    pypi_root.mkdir()
    fake_registry.pypi.add("allyanked", {"1.0": OLD, "2.0": OLD}, yanked={"1.0", "2.0"})
    (pypi_root / "requirements.txt").write_text("allyanked\n")
    (row,) = _rows(_run(fake_registry, pypi_root))
    assert (row["status"], row["reason"]) == (
        "unknown",
        "no usable release satisfies an unconstrained install: 2.0, 1.0 match but are yanked",
    )


def test_a_version_without_files_is_unknown_and_never_a_candidate(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """PEP 700 lets a version be listed with no files; pip never selects such a version."""
    fake_registry.pypi.add("nofiles", {"1.0": OLD, "2.0": OLD}, no_files={"1.0", "2.0"})
    fake_registry.pypi.add("somefiles", {"1.0": OLD, "1.5": OLD, "2.0": OLD}, no_files={"2.0"})
    (tmp_path / "requirements.txt").write_text("nofiles==1.0\nsomefiles==1.0\nnofiles>=1\n")
    pinned, other, ranged = _rows(_run(fake_registry, tmp_path))
    assert (pinned["status"], pinned["reason"]) == (
        "unknown",
        "pinned version 1.0 has no files on pypi: nothing to install; no release has files",
    )
    assert _view(other) == ("outdated", "1.0", "1.5", "1.5", None)
    assert (ranged["status"], ranged["reason"]) == (
        "unknown",
        (
            "no usable release satisfies the range '>=1': 2.0, 1.0 match but have no files"
            " (nothing to install)"
        ),
    )


def test_a_local_version_is_no_update_of_its_public_version(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``loctest==1.0`` with ``1.0+local``: up to date; a ``+cpu`` pin names the public 2.0.0."""
    fake_registry.pypi.add("loctest", {"1.0": OLD, "1.0+local": OLD + timedelta(days=1)})
    fake_registry.pypi.add("torch", {"2.0.0": OLD, "2.1.0": OLD + timedelta(days=1)})
    (tmp_path / "requirements.txt").write_text("loctest==1.0\ntorch==2.0.0+cpu\n")
    loctest, torch = _rows(_run(fake_registry, tmp_path))
    assert _view(loctest) == ("up-to-date", "1.0", "1.0", None, None)
    assert loctest["versionsBehind"] == 0
    assert (torch["status"], torch["reason"]) == (
        "unknown",
        (
            "pinned version 2.0.0+cpu is not in the pypi release list; its public version 2.0.0"
            " is: the +cpu build (a PEP 440 local version) comes from another index"
        ),
    )


def test_a_current_that_needs_a_newer_python_is_judged_where_it_installs(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Locked pytest 9.0.0 needs >=3.10 although the project supports 3.7: judged for 3.10.

    The project installs it only on 3.10 and later, so 9.2.0 (>=3.10) is an update it takes,
    while 9.3.0 (>=3.11) narrows it further and is not proposed (the trial's ruff case).
    """
    _add(fake_registry, "pytest", {**PYTEST, "9.3.0": ">=3.11"})
    (tmp_path / "pyproject.toml").write_text(
        '[project]\nname = "demo"\nversion = "0.1"\nrequires-python = ">=3.7"\n'
        '[dependency-groups]\ntest = ["pytest>=9.0,<10"]\n'
    )
    (tmp_path / "uv.lock").write_text(
        'version = 1\n[[package]]\nname = "pytest"\nversion = "9.0.0"\n'
        'source = { registry = "https://pypi.org/simple" }\n'
    )
    row = _one(_run(fake_registry, tmp_path), "pytest")
    judged = (
        "current 9.0.0 needs Python >=3.10: judged for Python 3.10, not 3.7 (the project"
        " supports Python 3.7 (requires-python >=3.7))"
    )
    assert (row["currentSource"], *_view(row)) == (
        "lockfile",
        "outdated",
        "9.0.0",
        "9.3.0",
        "9.2.0",
        (
            f"{judged}; 9.3.0 needs Python >=3.11; current 9.0.0 installs on Python 3.10 and"
            " later: not proposed"
        ),
    )
