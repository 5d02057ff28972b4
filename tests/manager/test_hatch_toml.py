"""The ``hatch.toml`` manager: Hatch's ``[envs.<env>]`` tables, read as ``[tool.hatch.envs]``."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import hatch_toml, pyproject
from patchula.manager.base import ReadFile

HATCH_TOML = (
    "[envs.default]\n"
    'dependencies = ["pytest>=7", "coverage[toml]>=6.5"]\n'
    "[envs.lint]\n"
    "detached = true\n"
    "extra-dependencies = [\n"
    '  "ruff==0.6.9",\n'
    "  \"mypy>=1 ; python_version >= '3.9'\",\n"
    '  "localpkg @ {root:uri}/localpkg",\n'
    '  "bad req ~",\n'
    "]\n"
    "[envs.docs]\n"
    'dependencies = "mkdocs"\n'
    "[version]\n"
    'path = "src/app/__about__.py"\n'
)


def _files(files: dict[str, str]) -> ReadFile:
    def read(path: str) -> str:
        if path not in files:
            raise ManifestError("no such file", file=path)
        return files[path]

    return read


@pytest.mark.parametrize(
    ("path", "expected"),
    [("hatch.toml", True), ("sub/dir/hatch.toml", True), ("hatch.toml.bak", False)],
)
def test_matches_hatch_toml_by_basename(path: str, *, expected: bool) -> None:
    """Only files named hatch.toml match."""
    assert hatch_toml.matches(path) is expected


def test_environments_give_rows_as_the_pyproject_tables_do() -> None:
    """Each env's dependencies and extra-dependencies are ``hatch-env:<env>`` rows at their lines.

    The same text under ``[tool.hatch]`` of a pyproject.toml gives the same rows.
    """
    result = hatch_toml.extract("sub/hatch.toml", HATCH_TOML, _files({}))
    rows = [
        (d.manager, d.line, d.dep_type, d.name, d.constraint, d.markers, d.skip_reason)
        for d in result.dependencies
    ]
    assert rows == [
        ("hatch_toml", 2, "hatch-env:default", "pytest", ">=7", None, None),
        ("hatch_toml", 2, "hatch-env:default", "coverage", ">=6.5", None, None),
        ("hatch_toml", 6, "hatch-env:lint", "ruff", "==0.6.9", None, None),
        ("hatch_toml", 7, "hatch-env:lint", "mypy", ">=1", 'python_version >= "3.9"', None),
        ("hatch_toml", 8, "hatch-env:lint", "localpkg", None, None, "local path"),
    ]
    assert [(p.file, p.line, p.message) for p in result.problems] == [
        (
            "sub/hatch.toml",
            9,
            (
                "invalid requirement 'bad req ~': Expected semicolon (after name with no version"
                " specifier) or end"
            ),
        ),
        ("sub/hatch.toml", 12, "`envs.docs.dependencies` must be an array of strings"),
    ]
    assert all(d.requires_python is None for d in result.dependencies)  # no pyproject beside it
    embedded = "".join(
        f"[tool.hatch.{line[1:]}" if line.startswith("[") else line
        for line in HATCH_TOML.splitlines(keepends=True)
    )
    same = pyproject.extract("pyproject.toml", embedded, _files({}))
    assert [(d.dep_type, d.name, d.constraint, d.skip_reason) for d in same.dependencies] == [
        (d.dep_type, d.name, d.constraint, d.skip_reason) for d in result.dependencies
    ]


def test_rows_carry_the_requires_python_of_the_pyproject_beside_it() -> None:
    """Hatch installs the project into its environments: its requires-python bounds them."""
    files = {"sub/pyproject.toml": '[project]\nname = "app"\nrequires-python = ">=3.9"\n'}
    result = hatch_toml.extract("sub/hatch.toml", HATCH_TOML, _files(files))
    assert {d.requires_python for d in result.dependencies} == {">=3.9"}
    # Its problems are the pyproject manager's to report, not this file's.
    broken = {"sub/pyproject.toml": '[project]\nrequires-python = "three"\n'}
    result = hatch_toml.extract("sub/hatch.toml", HATCH_TOML, _files(broken))
    assert {d.requires_python for d in result.dependencies} == {None}
    assert {p.file for p in result.problems} == {"sub/hatch.toml"}


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("", None),
        ("envs = 3\n", "`envs` must be a table"),
        ("[envs]\ndefault = 1\n", "`envs.default` must be a table"),
        ("[envs.x\n", "invalid TOML"),
    ],
)
def test_empty_wrong_types_and_bad_toml(text: str, message: str | None) -> None:
    """Nothing in an empty file; a wrong type or bad TOML is a problem naming the file."""
    result = hatch_toml.extract("hatch.toml", text, _files({}))
    assert result.dependencies == ()
    found = [(p.file, p.message) for p in result.problems]
    if message is None:
        assert found == []
    else:
        assert len(found) == 1
        assert found[0][0] == "hatch.toml"
        assert message in found[0][1]


@pytest.mark.parametrize(
    ("env", "expected"),
    [
        ('python = "3.10"\n', 'python_version == "3.10"'),
        ('python = "3.8.10"\n', 'python_full_version == "3.8.10"'),
        # A matrix makes one environment per Python: judged for the lowest of them.
        (
            '[[envs.test.matrix]]\npython = ["3.9", "3.12"]\n',
            'python_version == "3.9" or python_version == "3.12"',
        ),
        ('[[envs.test.matrix]]\npy = ["3.11"]\nversion = ["1", "2"]\n', 'python_version == "3.11"'),
        # No version: an interpreter name or path, or one Python of several that is none.
        ('python = "pypy3.10"\n', None),
        ('[[envs.test.matrix]]\npython = ["3.9", "pypy3.10"]\n', None),
        ("python = 3.10\n", None),
        ("", None),
    ],
)
def test_an_environments_python_bounds_its_rows(env: str, expected: str | None) -> None:
    """Hatch runs ``[envs.<env>] python`` (or each matrix Python): the rows' marker says so."""
    text = '[envs.test]\ndependencies = ["zipp>=3", "x ; sys_platform == \'linux\'"]\n' + env
    result = hatch_toml.extract("hatch.toml", text, _files({}))
    assert result.problems == ()
    zipp, other = result.dependencies
    assert zipp.markers == expected
    linux = 'sys_platform == "linux"'
    assert other.markers == (f"({expected}) and ({linux})" if expected else linux)


def test_real_hatch_environments_as_a_hatch_toml() -> None:
    """dbt-postgres' Hatch tables as a hatch.toml: its pyproject.toml's rows, plus Pythons."""
    fixtures = Path(__file__).parents[1] / "fixtures" / "manifests"
    text = (fixtures / "hatch_toml" / "dbt-postgres" / "hatch.toml").read_text(encoding="utf-8")
    project = (fixtures / "pyproject" / "hatch-envs" / "pyproject.toml").read_text(encoding="utf-8")
    result = hatch_toml.extract("hatch.toml", text, _files({"pyproject.toml": project}))
    assert result.problems == ()
    embedded = pyproject.extract("pyproject.toml", project, _files({}))
    hatch_rows = [d for d in embedded.dependencies if d.dep_type.startswith("hatch-env:")]
    rows = [(d.dep_type, d.name, d.constraint, d.skip_reason) for d in result.dependencies]
    assert rows[: len(hatch_rows)] == [
        (d.dep_type, d.name, d.constraint, d.skip_reason) for d in hatch_rows
    ]
    assert rows[len(hatch_rows) :] == [("hatch-env:matrix-tests", "pytest", None, None)]
    markers = {d.dep_type: d.markers for d in result.dependencies}
    assert markers["hatch-env:typecheck"] == 'python_version == "3.11"'
    assert markers["hatch-env:matrix-tests"] == (
        'python_version == "3.9" or python_version == "3.12"'
    )
    assert markers["hatch-env:lint"] is None
    assert {d.requires_python for d in result.dependencies} == {">=3.8.0"}


def test_documented_forms() -> None:
    """Hatch's documented forms: context fields skipped, a matrix and a ``python`` as markers."""
    fixtures = Path(__file__).parents[1] / "fixtures" / "manifests" / "hatch_toml"
    text = (fixtures / "hatch-docs" / "hatch.toml").read_text(encoding="utf-8")
    result = hatch_toml.extract("hatch.toml", text, _files({}))
    assert result.problems == ()
    matrix = 'python_version == "3.9" or python_version == "3.10" or python_version == "3.11"'
    rows = [(d.line, d.dep_type, d.name, d.skip_reason, d.markers) for d in result.dependencies]
    assert rows == [
        (3, "hatch-env:default", "coverage", None, None),
        (4, "hatch-env:default", "pytest", None, None),
        (12, "hatch-env:test", "pytest-xdist", None, matrix),
        (13, "hatch-env:test", "localpkg", "local path", matrix),
        (14, "hatch-env:test", "pyyaml", pyproject.HATCH_CONTEXT_REASON, matrix),
        (25, "hatch-env:docs", "mkdocs", None, 'python_version == "3.12"'),
        (
            26,
            "hatch-env:docs",
            "mkdocs-material",
            None,
            '(python_version == "3.12") and (platform_system != "Windows")',
        ),
    ]
