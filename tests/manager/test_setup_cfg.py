from __future__ import annotations

import configparser
from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import setup_cfg
from patchula.models import Dependency, ExtractResult

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "setup_cfg"


def _no_read(path: str) -> str:
    raise ManifestError("setup.cfg has no includes", file=path)


def _extract(case: str, path: str = "setup.cfg") -> ExtractResult:
    text = (FIXTURES / case / "setup.cfg").read_text(encoding="utf-8")
    return setup_cfg.extract(path, text, _no_read)


def _rows(result: ExtractResult) -> list[tuple[int | None, str, str, str | None]]:
    return [(d.line, d.dep_type, d.name, d.constraint) for d in result.dependencies]


def _problems(result: ExtractResult) -> list[tuple[int | None, str]]:
    return [(p.line, p.message) for p in result.problems]


def _line_of(case: str, written: str) -> int:
    """The 1-based line of the fixture ``case`` whose stripped text is ``written``."""
    lines = (FIXTURES / case / "setup.cfg").read_text(encoding="utf-8").splitlines()
    return next(n for n, line in enumerate(lines, 1) if line.strip() == written)


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("setup.cfg", True),
        ("packages/core/setup.cfg", True),
        ("setup.cfg.in", False),
        ("my-setup.cfg", False),
        ("setup.py", False),
    ],
)
def test_matches_setup_cfg_by_basename(path: str, *, expected: bool) -> None:
    """Only files named setup.cfg match (Renovate's setup-cfg pattern)."""
    assert setup_cfg.matches(path) is expected


def test_real_pytest_setup_cfg_gives_install_setup_and_extra_rows() -> None:
    """The pytest setup.cfg: install_requires with markers, setup_requires, the testing extra."""
    result = _extract("pytest", "src/setup.cfg")
    assert result.problems == ()
    assert result.project_name == "pytest"
    assert result.dependencies[3] == Dependency(
        manager="setup_cfg",
        file="src/setup.cfg",
        line=_line_of("pytest", 'colorama;sys_platform=="win32"'),
        name="colorama",
        package_name="colorama",
        datasource="pypi",
        versioning="pep440",
        dep_type="install",
        declared=None,
        constraint=None,
        markers='sys_platform == "win32"',
        requires_python=">=3.8",  # its [options] python_requires
    )
    assert _rows(result)[:9] == [
        (47, "install", "iniconfig", None),
        (48, "install", "packaging", None),
        (49, "install", "pluggy", "<2.0,>=1.3.0"),
        (50, "install", "colorama", None),
        (51, "install", "exceptiongroup", ">=1.0.0rc8"),
        (52, "install", "tomli", ">=1.0.0"),
        (57, "setup", "setuptools", None),
        (58, "setup", "setuptools-scm", ">=6.0"),
        (68, "extra:testing", "argcomplete", None),
    ]
    assert _line_of("pytest", "iniconfig") == 47
    assert _line_of("pytest", "xmlschema") == 76
    assert _rows(result)[-1] == (76, "extra:testing", "xmlschema", None)
    assert len(result.dependencies) == 17
    # [options] packages, [options.entry_points] and the [mypy] section are no requirements.
    assert {d.dep_type for d in result.dependencies} == {"install", "setup", "extra:testing"}


def test_real_skeleton_comments_tabs_and_continued_markers() -> None:
    r"""The jaraco/skeleton setup.cfg: comment lines dropped, tabs, a `\` marker continued."""
    result = _extract("jaraco-skeleton")
    assert result.problems == ()
    assert result.project_name == "skeleton"
    black_line = _line_of("jaraco-skeleton", "pytest-black >= 0.3.7; \\")
    assert _rows(result) == [
        (36, "extra:testing", "pytest", ">=6"),
        (37, "extra:testing", "pytest-checkdocs", ">=2.4"),
        (38, "extra:testing", "pytest-flake8", None),
        (black_line, "extra:testing", "pytest-black", ">=0.3.7"),
        (42, "extra:testing", "pytest-cov", None),
        (43, "extra:testing", "pytest-mypy", None),
        (46, "extra:testing", "pytest-enabler", ">=1.0.1"),
        (52, "extra:docs", "sphinx", None),
        (53, "extra:docs", "jaraco.packaging", ">=8.2"),
        (54, "extra:docs", "rst.linker", ">=1.9"),
    ]
    assert black_line == 39
    markers = {d.name: d.markers for d in result.dependencies}
    assert markers["pytest-black"] == 'platform_python_implementation != "PyPy"'
    assert markers["pytest-mypy"] == 'platform_python_implementation != "PyPy"'


def test_rows_agree_with_what_configparser_gives_setuptools() -> None:
    """Each row's requirement is one of the entries configparser's value holds for its key."""
    for case in ("pytest", "jaraco-skeleton"):
        text = (FIXTURES / case / "setup.cfg").read_text(encoding="utf-8")
        parser = configparser.ConfigParser()
        parser.optionxform = str  # type: ignore[assignment,method-assign]
        parser.read_string(text)
        values = " ".join(
            parser.get(section, key)
            for section in ("options", "options.extras_require")
            for key in parser.options(section)
        )
        lines = text.splitlines()
        for dep in setup_cfg.extract("setup.cfg", text, _no_read).dependencies:
            assert dep.name in values, dep
            assert dep.line is not None
            assert dep.name in lines[dep.line - 1], dep


def test_file_directives_are_skipped_rows_naming_the_files() -> None:
    """`install_requires = file: requirements/base.in` is one skipped row at its line."""
    result = _extract("file-directive")
    assert result.problems == ()
    rows = [(d.line, d.dep_type, d.name, d.declared, d.skip_reason) for d in result.dependencies]
    reason = setup_cfg.FILE_DIRECTIVE_REASON
    assert rows == [
        (6, "install", "requirements/base.in", "file: requirements/base.in", reason),
        (
            7,
            "test",
            "requirements/test.in, requirements/extra.in",
            "file: requirements/test.in, requirements/extra.in",
            reason,
        ),
        (10, "extra:docs", "docs/requirements.txt", "file: docs/requirements.txt", reason),
        (11, "extra:yaml", "PyYAML", ">=6", None),
    ]


def test_a_one_line_value_is_split_at_semicolons_as_setuptools_does() -> None:
    """`a>=1; b<2; python_version<"3.10"`: rows a and b, and the marker part a problem."""
    result = _extract("one-line-markers")
    assert _rows(result) == [
        (2, "install", "requests", ">=2.31"),
        (2, "install", "urllib3", "<2"),
        (3, "setup", "setuptools", ">=61"),
        (3, "setup", "wheel", None),
        (6, "extra:socks", "PySocks", "!=1.5.7,>=1.5.6"),
    ]
    [(line, message)] = _problems(result)
    assert line == 2
    assert message.startswith("invalid requirement 'python_version<\"3.10\"': ")
    assert message.endswith(
        "(setuptools splits a one-line value at ';': write each requirement, with its marker,"
        " on a line of its own)"
    )


def test_a_duplicate_option_is_a_problem_at_its_line() -> None:
    """The configparser refuses a repeated option (strict, as setuptools reads): one problem."""
    result = _extract("duplicate-option")
    assert _problems(result) == [
        (7, "invalid setup.cfg: `install_requires` appears twice in [options]")
    ]
    assert result.dependencies == ()


def test_a_setting_before_any_section_is_a_problem_at_line_one() -> None:
    """A file whose first setting has no section header is refused whole, at line 1."""
    result = _extract("no-section-header")
    assert _problems(result) == [
        (1, "invalid setup.cfg: the first setting comes before any [section] header")
    ]


def test_a_line_that_is_no_setting_is_a_problem_at_its_line() -> None:
    """A stray line (no `=`, not indented) is configparser's ParsingError, at that line."""
    text = "[options]\ninstall_requires =\n    attrs\nnot a setting\n"
    result = setup_cfg.extract("setup.cfg", text, _no_read)
    assert _problems(result) == [
        (4, "invalid setup.cfg: a line that is no section header, setting or continuation")
    ]


def test_a_dashed_key_and_a_self_referential_extra() -> None:
    """`install-requires` is read as setuptools reads it; `name[extra]` of itself is skipped."""
    text = (
        "[metadata]\nname = Acme_Tools\n\n[options]\ninstall-requires =\n    attrs>=23\n"
        "[options.extras_require]\nall =\n    acme-tools[cli]\n    rich\n"
    )
    result = setup_cfg.extract("setup.cfg", text, _no_read)
    assert result.project_name == "acme-tools"
    assert [(d.line, d.dep_type, d.name, d.skip_reason) for d in result.dependencies] == [
        (6, "install", "attrs", None),
        (9, "extra:all", "acme-tools", setup_cfg.SELF_REFERENCE_REASON),
        (10, "extra:all", "rich", None),
    ]


def test_an_interpolation_error_costs_only_its_option() -> None:
    """A `%` configparser cannot interpolate is a problem at its key; other keys are read."""
    text = "[options]\ninstall_requires =\n    pct%bad\nsetup_requires = wheel\n"
    result = setup_cfg.extract("setup.cfg", text, _no_read)
    assert [line for line, _ in _problems(result)] == [2]
    assert _problems(result)[0][1].startswith("`install_requires` in [options]: ")
    assert _rows(result) == [(4, "setup", "wheel", None)]


@pytest.mark.parametrize("case", ["empty", "options-without-requirements"])
def test_files_without_requirements_give_nothing(case: str) -> None:
    """An empty file and one holding only other tools' sections give no rows, no problems."""
    assert _extract(case) == ExtractResult()


def test_a_trailing_comment_and_a_url_requirement() -> None:
    """` # …` after a requirement is dropped (pkg_resources); a `name @ url` is skipped."""
    text = (
        "[options]\ninstall_requires =\n    requests>=2.28  # HTTP\n"
        "    tool @ git+https://github.com/acme/tool.git@v1\n"
    )
    result = setup_cfg.extract("setup.cfg", text, _no_read)
    assert [(d.line, d.name, d.constraint, d.skip_reason) for d in result.dependencies] == [
        (3, "requests", ">=2.28", None),
        (4, "tool", None, "VCS requirement"),
    ]


@pytest.mark.parametrize(
    ("text", "expected", "problems"),
    [
        ("[options]\npython_requires = >=3.8\ninstall_requires =\n    zipp>=3\n", ">=3.8", []),
        # The dashed spelling setuptools still reads; a value spread over lines is one set.
        ("[options]\npython-requires = >=3.8,\n    <4\ninstall_requires = zipp\n", ">=3.8, <4", []),
        (
            "[options]\ninstall_requires = zipp\npython_requires = >=three\n",
            None,
            [(3, "invalid python_requires '>=three'")],
        ),
        ("[options]\ninstall_requires = zipp\n", None, []),
    ],
)
def test_python_requires_bounds_every_row(
    text: str, expected: str | None, problems: list[tuple[int, str]]
) -> None:
    """``[options] python_requires`` is the project's Requires-Python for each of its rows."""
    result = setup_cfg.extract("setup.cfg", text, _no_read)
    assert [(d.name, d.requires_python) for d in result.dependencies] == [("zipp", expected)]
    assert _problems(result) == problems
