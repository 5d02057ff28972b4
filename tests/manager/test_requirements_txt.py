from __future__ import annotations

import codecs
from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import requirements_txt
from patchula.manager.base import ReadFile
from patchula.models import CompiledRequirements, Dependency, ExtractResult, ManifestProblem

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "requirements_txt"


def _no_read(path: str) -> str:
    raise ManifestError("no includes expected", file=path)


def _reader(case: str) -> tuple[list[str], ReadFile]:
    """Return a list of the paths read and a ``read`` callback rooted at the case directory."""
    seen: list[str] = []
    root = FIXTURES / case

    def read(path: str) -> str:
        seen.append(path)
        file = root / path
        if not file.is_file():
            raise ManifestError("file not found", file=path)
        return file.read_text(encoding="utf-8")

    return seen, read


def _extract(case: str, path: str = "requirements.txt") -> ExtractResult:
    _, read = _reader(case)
    return requirements_txt.extract(path, read(path), read)


def _rows(result: ExtractResult) -> list[tuple[str, int | None, str, str | None]]:
    return [(d.file, d.line, d.name, d.constraint) for d in result.dependencies]


def _problems(result: ExtractResult) -> list[tuple[str, int | None, str]]:
    return [(p.file, p.line, p.message) for p in result.problems]


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("requirements.txt", True),
        ("docs/requirements.txt", True),
        ("requirements.in", True),
        ("requirements-dev.txt", True),
        ("requirements_test.txt", True),
        ("test-requirements.txt", True),
        ("requirements-docs.in", True),
        ("requirements/dev.txt", True),
        ("requirements/pip.in", True),
        ("constraints.txt", True),
        ("src/requirements/prod.txt", True),
        ("requirements/nested/dev.txt", False),
        ("requirements/README.md", False),
        ("notes.txt", False),
        ("requirements.txt.orig", False),
        ("requirements", False),
        ("requirements.dev.txt", True),
        ("requirements1.txt", True),
        ("dev_requirements.txt", True),
        ("requirements-dev-py3.txt", True),
        ("requirements.pip", True),
        ("tools.in", True),
        ("ci/dev-tools.in", True),
        ("constraints-dev.txt", True),
        ("constraints.dev.txt", True),
        ("test_constraints.txt", True),
        ("MANIFEST.in", False),
        ("Makefile.in", False),
        ("configure.in", False),
        ("setup.cfg.in", False),
        ("requirements.md", False),
        ("my requirements.txt", False),
    ],
)
def test_matches_requirements_file_names(path: str, *, expected: bool) -> None:
    """Names as users write them match (Renovate's pattern, widened; pip-tools' ``*.in``)."""
    assert requirements_txt.matches(path) is expected


def test_one_package_gives_one_full_row() -> None:
    """A pinned requirement becomes one row with PEP 503 name, constraint and line."""
    result = _extract("one-package")
    assert result.dependencies == (
        Dependency(
            manager="requirements_txt",
            file="requirements.txt",
            line=1,
            name="requests",
            package_name="requests",
            datasource="pypi",
            versioning="pep440",
            dep_type="requirements",
            declared="==2.32.3",
            constraint="==2.32.3",
        ),
    )
    assert result.problems == ()
    assert result.included_files == ()


def test_empty_file_gives_nothing() -> None:
    """A 0-byte requirements file has no rows and no problems."""
    assert _extract("empty") == ExtractResult()


def test_real_pip_compiled_file_with_via_comments() -> None:
    """The readthedocs pip-compile output gives one row per pin at the pin's own line."""
    result = _extract("pip-compiled", "requirements/docs.txt")
    assert [(d.line, d.name, d.constraint) for d in result.dependencies] == [
        (7, "alabaster", "==1.0.0"),
        (9, "anyio", "==4.14.2"),
        (13, "babel", "==2.18.0"),
        (17, "certifi", "==2026.7.22"),
        (21, "charset-normalizer", "==3.4.9"),
        (23, "click", "==8.4.2"),
        (27, "colorama", "==0.4.6"),
        (29, "contourpy", "==1.3.3"),
        (31, "cycler", "==0.12.1"),
        (33, "docutils", "==0.21.2"),
    ]
    assert result.problems == ()


def test_hash_continuations_are_stripped_and_the_first_line_counts() -> None:
    """Per-requirement --hash options on continuation lines are dropped; markers survive."""
    result = _extract("hashes")
    assert [(d.line, d.name, d.constraint, d.markers) for d in result.dependencies] == [
        (7, "certifi", "==2024.8.30", None),
        (11, "charset-normalizer", "==3.4.0", None),
        (14, "requests", "==2.32.3", 'python_version >= "3.8"'),
    ]
    assert result.problems == ()


def test_real_uv_export_with_markers_and_a_git_url() -> None:
    """The djangoproject uv export keeps its win32 marker and skips the pinned git URL."""
    deps = {d.name: d for d in _extract("uv-export", "requirements/prod.txt").dependencies}
    assert deps["colorama"].markers == 'sys_platform == "win32"'
    assert deps["colorama"].line == 20
    push = deps["django-push"]
    assert push.skip_reason == "VCS requirement"
    assert push.declared == (
        "git+https://github.com/brutasse/django-push.git@22fda99641cfbd2f3075a723d92652a8e38220a5"
    )
    assert (push.constraint, push.line) == (None, 41)
    assert len(deps) == 15


def test_real_include_relative_to_the_including_file() -> None:
    """The readthedocs testing.in `-r pip.txt` resolves to requirements/pip.txt with its lines."""
    seen, read = _reader("includes")
    result = requirements_txt.extract(
        "requirements/testing.in", read("requirements/testing.in"), read
    )
    assert seen == ["requirements/testing.in", "requirements/pip.txt"]
    assert result.included_files == ("requirements/pip.txt",)
    assert _rows(result)[:5] == [
        ("requirements/pip.txt", 7, "amqp", "==5.3.1"),
        ("requirements/pip.txt", 9, "annotated-types", "==0.8.0"),
        ("requirements/pip.txt", 11, "anyio", "==4.14.2"),
        ("requirements/pip.txt", 13, "asgiref", "==3.12.1"),
        ("requirements/testing.in", 6, "docutils", "==0.21.2"),
    ]
    sphinx = next(d for d in result.dependencies if d.name == "sphinx")
    assert (sphinx.file, sphinx.line, sphinx.constraint) == ("requirements/testing.in", 8, None)
    assert len(result.dependencies) == 13


def test_root_file_that_is_only_an_include() -> None:
    """The readthedocs root requirements.txt pulls everything from requirements/pip.txt."""
    result = _extract("includes")
    assert result.included_files == ("requirements/pip.txt",)
    assert {d.file for d in result.dependencies} == {"requirements/pip.txt"}
    assert len(result.dependencies) == 4


def test_constraint_files_give_constraint_rows_including_their_own_includes() -> None:
    """Entries of a -c file, and of files it includes with -r, have dep_type constraint."""
    result = _extract("constraints")
    assert [(d.file, d.line, d.name, d.dep_type, d.constraint) for d in result.dependencies] == [
        ("constraints.txt", 1, "django", "constraint", "<5.0"),
        ("more-constraints.txt", 1, "celery", "constraint", "==5.4.0"),
        ("requirements.txt", 2, "django", "requirements", None),
        ("requirements.txt", 3, "celery", "requirements", None),
    ]
    assert result.included_files == ("constraints.txt", "more-constraints.txt")


def test_include_cycle_is_a_problem_at_the_closing_include() -> None:
    """A -r loop is reported once, at the include that closes it, and extraction finishes."""
    result = _extract("include-cycle")
    assert _problems(result) == [
        (
            "requirements/base.txt",
            2,
            "include cycle: requirements.txt -> requirements/base.txt -> requirements.txt",
        )
    ]
    assert _rows(result) == [
        ("requirements/base.txt", 1, "django", "==5.1"),
        ("requirements.txt", 3, "flask", "==3.0.3"),
    ]
    assert result.included_files == ("requirements/base.txt",)


def test_self_include_is_a_cycle() -> None:
    """A file including itself is a cycle problem, not an infinite loop."""
    result = _extract("self-include")
    assert _problems(result) == [
        ("requirements.txt", 2, "include cycle: requirements.txt -> requirements.txt")
    ]
    assert _rows(result) == [("requirements.txt", 1, "six", "==1.16.0")]


def test_diamond_includes_read_a_shared_file_once() -> None:
    """A file included from two places (also as -rFILE) is read and reported only once."""
    seen, read = _reader("diamond")
    result = requirements_txt.extract("requirements.txt", read("requirements.txt"), read)
    assert seen == ["requirements.txt", "a.txt", "common.txt", "b.txt"]
    assert _rows(result) == [
        ("common.txt", 1, "shared", "==3.0"),
        ("a.txt", 2, "alpha", "==1.0"),
        ("b.txt", 2, "beta", "==2.0"),
    ]
    assert result.problems == ()


def test_missing_include_is_a_problem_naming_the_including_line() -> None:
    """A read failure becomes a problem at the -r line; the other requirements are kept."""
    result = _extract("missing-include")
    assert _problems(result) == [
        ("requirements.txt", 2, "cannot read included file 'does-not-exist.txt': file not found")
    ]
    assert [d.name for d in result.dependencies] == ["six", "attrs"]
    assert result.included_files == ()


def test_includes_escaping_the_repository_are_problems() -> None:
    """Relative escapes and absolute paths are refused; remote includes are a warning."""
    result = _extract("include-escapes", "sub/requirements.txt")
    assert [(p.line, p.message, p.severity) for p in result.problems] == [
        (1, "include '../../outside.txt' points outside the repository", "error"),
        (2, "include '/etc/requirements.txt' points outside the repository", "error"),
        (
            3,
            "remote include 'https://example.com/remote-requirements.txt' is not followed",
            "warning",
        ),
    ]
    assert _rows(result) == [("sub/requirements.txt", 4, "six", "==1.16.0")]


def test_option_lines_are_ignored_and_editables_skipped() -> None:
    """Binary options are silent, other indexes and extra sources warned of, -e rows skipped.

    ``--extra-index-url`` and ``--find-links`` add sources the scan does not read, ``-i``
    replaces PyPI with one: a version only they have would look unpublished, so each is a
    warning naming file and line, its URL never repeated. ``--index-url`` naming PyPI's own
    index (pip's default) is silent.
    """
    result = _extract("options")
    assert [(d.line, d.name, d.declared, d.skip_reason) for d in result.dependencies] == [
        (13, ".", ".", "editable requirement"),
        (
            14,
            "editable-pkg",
            "git+https://github.com/acme/editable-pkg.git@main#egg=editable-pkg",
            "editable requirement",
        ),
        (15, "./local/pkg", "./local/pkg", "editable requirement"),
        (18, "numpy", ">=1.26", None),
    ]
    extra = (
        "not followed: packages are looked up on the run's PyPI registry (--registry "
        "pypi=URL), so a version only that source has is not in its release list"
    )
    index = (
        "not followed: packages are looked up on the run's PyPI registry (--registry pypi=URL;"
        " point it at this index to look there), so a version only this index has is not in"
        " its release list"
    )
    assert [(p.file, p.line, p.message, p.severity) for p in result.problems][:2] == [
        ("requirements.txt", 2, f"option -i {index}", "warning"),
        ("requirements.txt", 3, f"option --extra-index-url {extra}", "warning"),
    ]
    assert [(p.line, p.message, p.severity) for p in result.problems][1:] == [
        (3, f"option --extra-index-url {extra}", "warning"),
        (4, f"option --find-links {extra}", "warning"),
        (5, f"option -f {extra}", "warning"),
        (16, "unknown option '--unknown-flag' ignored", "warning"),
        (17, "option '-r' needs a value", "error"),
    ]
    assert not any("example" in p.message for p in result.problems)


@pytest.mark.parametrize(
    ("line", "warned"),
    [
        ("--index-url https://pypi.org/simple/", False),
        ("-i https://pypi.python.org/simple", False),
        ("-ihttps://user:s3cret@pypi.internal.example/simple", True),
        ("--index-url=https://pypi.org/simple/../private", True),
        ("--index-url http://pypi.org/simple", True),
        ("--index-url https://token@pypi.org/simple", True),
        ("--index-url ${PIP_INDEX_URL}", True),
        ("--index-url https://[bad/simple", True),
    ],
)
def test_an_index_url_other_than_pypi_is_a_warning(line: str, *, warned: bool) -> None:
    """-i names the index pip installs from; the scan asks its PyPI registry: a warning."""
    text = f"attrs\n{line}\n"
    nothing: dict[str, str] = {}
    result = requirements_txt.extract("reqs/base.txt", text, nothing.__getitem__)
    problems = [(p.file, p.line, p.severity, p.message.split(":")[0]) for p in result.problems]
    option = line.split(" ", 1)[0].split("=", 1)[0]
    option = "-i" if option.startswith("-i") else option
    expected = [("reqs/base.txt", 2, "warning", f"option {option} not followed")]
    assert problems == (expected if warned else [])
    assert not any("s3cret" in p.message or "internal" in p.message for p in result.problems)


def test_url_vcs_and_path_requirements_are_skipped_with_reasons() -> None:
    """Direct URLs, VCS URLs, local paths and file: URLs are reported but never looked up."""
    result = _extract("urls-and-paths")
    assert [(d.line, d.name, d.package_name, d.skip_reason) for d in result.dependencies] == [
        (1, "pip", "pip", "direct URL reference"),
        (2, "vcs-pkg", "vcs-pkg", "VCS requirement"),
        (3, "numpy", "numpy", "local path"),
        (4, ".", ".", "local path"),
        (5, "./local/project", "./local/project", "local path"),
        (6, "archive-pkg", "archive-pkg", "direct URL reference"),
        (7, "wheel_pkg", "wheel-pkg", "local path"),
        (8, "hgpkg", "hgpkg", "VCS requirement"),
        (9, "local-dep", "local-dep", "local path"),
    ]
    assert all(d.constraint is None for d in result.dependencies)
    assert result.dependencies[0].declared == "https://github.com/pypa/pip/archive/22.0.2.zip"


def test_invalid_lines_are_problems_and_the_rest_continue() -> None:
    """Each bad requirement is a problem at its line; valid lines around it are extracted."""
    result = _extract("invalid-lines")
    assert [(p.line, p.message.split(":")[0]) for p in result.problems] == [
        (3, "invalid requirement 'bar>=1<2'"),
        (5, "invalid requirement 'this is not valid'"),
    ]
    assert [(d.line, d.name, d.declared, d.constraint, d.markers) for d in result.dependencies] == [
        (1, "requests", ">=2.31", ">=2.31", None),
        (2, "foo", "foo==${FOO_VERSION}", None, None),
        (4, "django", "~= 5.2.0", "~=5.2.0", None),
        (6, "flask", ">= 3.0", ">=3.0", 'python_version >= "3.9"'),
    ]


def test_environment_variables_stay_as_text() -> None:
    """${VAR} references are not expanded: the URL keeps them and the row is skipped."""
    result = _extract("env-vars")
    assert [(d.name, d.declared, d.skip_reason) for d in result.dependencies] == [
        ("private-pkg", "https://${HOST}/private_pkg-1.0-py3-none-any.whl", "direct URL reference"),
        ("public", "==1.0", None),
    ]
    # The private index is a warning at its line (pip installs from it, the scan does not
    # look there), its URL and variables never repeated.
    assert [(p.line, p.severity, p.message.split(":")[0]) for p in result.problems] == [
        (1, "warning", "option --index-url not followed")
    ]
    assert "PYPI" not in result.problems[0].message


def test_continuations_and_comments_follow_pip() -> None:
    """Backslash joins keep the first line, # needs leading whitespace, a comment ends a join."""
    result = _extract("continuation")
    assert [(d.line, d.name, d.constraint) for d in result.dependencies] == [
        (2, "Django", "<5.0,>=4.2"),
        (5, "requests", "==2.31.0"),
        (6, "url-with-hash", None),
        (8, "Jinja2", None),
        (10, "MarkupSafe", "==2.1.5"),
    ]
    assert result.dependencies[1].package_name == "requests"
    assert result.dependencies[2].declared == "https://example.com/pkg-1.0.zip#sha256=abc"


def test_nul_characters_are_one_problem() -> None:
    """A file with NUL characters is one problem at the NUL's line and yields no rows."""
    result = _extract("nul-bytes")
    assert result.problems == (
        ManifestProblem("requirements.txt", 2, "file contains NUL characters; not a text manifest"),
    )
    assert result.dependencies == ()


def test_garbage_problems_are_capped_per_file() -> None:
    """Hundreds of invalid lines give 20 problems and one summary, not hundreds."""
    text = "\n".join(f"@@@ garbage {index} ???" for index in range(300))
    result = requirements_txt.extract("requirements.txt", text, _no_read)
    assert len(result.problems) == 21
    assert result.problems[0].line == 1
    assert result.problems[-1] == ManifestProblem(
        "requirements.txt", None, "more than 20 problems; the rest are not reported"
    )


def test_unbalanced_quotes_in_options_are_a_problem() -> None:
    """An option line shlex cannot split is a problem, not an exception."""
    result = requirements_txt.extract("requirements.txt", '--index-url "https://x\nsix\n', _no_read)
    assert [(p.line, p.message.split(":")[0]) for p in result.problems] == [
        (1, "cannot split options '--index-url \"https")
    ]
    assert [d.name for d in result.dependencies] == ["six"]


@pytest.mark.parametrize(
    ("text", "lines"),
    [
        ("a==1\n", [(1, "a==1")]),
        ("a==1 \\\n  --hash=x\n", [(1, "a==1   --hash=x")]),
        ("# only a comment\n\n   \n", []),
        ("b # note\n#c\n", [(1, "b")]),
        ("c \\\n", [(1, "c")]),
    ],
)
def test_logical_lines_mirror_pip(text: str, lines: list[tuple[int, str]]) -> None:
    """Logical lines join continuations and drop comments and blank lines as pip does."""
    assert [item for item in requirements_txt.logical_lines(text) if item[1]] == lines


def test_crlf_line_endings_and_byte_order_mark() -> None:
    """CRLF line endings, a CRLF continuation and a leading BOM do not change rows or lines."""
    text = "\ufeffsix==1.16.0\r\n# comment\r\nattrs \\\r\n  >=24\r\n"
    result = requirements_txt.extract("requirements.txt", text, _no_read)
    assert _rows(result) == [
        ("requirements.txt", 1, "six", "==1.16.0"),
        ("requirements.txt", 3, "attrs", ">=24"),
    ]
    assert result.problems == ()


def test_environment_variables_are_skipped_not_expanded() -> None:
    """``${VAR}`` requirements are skipped with a reason; the scan's own environment is not read."""
    text = "requests==${REQUESTS_VERSION}\n${PKG}>=1\n"
    result = requirements_txt.extract("requirements.txt", text, _no_read)
    assert [(d.name, d.line, d.constraint) for d in result.dependencies] == [
        ("requests", 1, None),
        ("${PKG}>=1", 2, None),
    ]
    assert all(
        d.skip_reason and "environment variables" in d.skip_reason for d in result.dependencies
    )
    assert result.problems == ()


_TEXT = "django==4.2.0\r\n# café\r\n-r base.txt\r\nattrs\r\n"


@pytest.mark.parametrize(
    "data",
    [
        codecs.BOM_UTF16_LE + _TEXT.encode("utf-16-le"),  # `pip freeze > f` in PowerShell 5
        codecs.BOM_UTF16_BE + _TEXT.encode("utf-16-be"),
        codecs.BOM_UTF32_BE + _TEXT.encode("utf-32-be"),
        ("# -*- coding: latin-1 -*-\n" + _TEXT).encode("latin-1"),
        ("#!pip\n# vim: set fileencoding=cp1252 :\n" + _TEXT).encode("cp1252"),
    ],
    ids=["utf-16-le", "utf-16-be", "utf-32-be", "latin-1", "cp1252"],
)
def test_decode_reads_what_pip_auto_decode_reads(data: bytes) -> None:
    """Byte-order marks, then a coding comment in the first two lines (pip's auto_decode)."""
    text = requirements_txt.decode(data, "requirements.txt")
    assert text.endswith(_TEXT)
    result = requirements_txt.extract("requirements.txt", text, {"base.txt": "six\n"}.__getitem__)
    offset = text.count("\n", 0, text.index(_TEXT))
    assert [(d.file, d.line, d.name) for d in result.dependencies] == [
        ("requirements.txt", 1 + offset, "django"),
        ("base.txt", 1, "six"),
        ("requirements.txt", 4 + offset, "attrs"),
    ]


@pytest.mark.parametrize(
    ("data", "line", "message"),
    [
        (
            codecs.BOM_UTF32_LE + _TEXT.encode("utf-32-le"),
            1,
            "UTF-32-LE text: pip reads it as UTF-16",
        ),
        (b"attrs\n# caf\xe9\n", 2, "not UTF-8 text (invalid byte 0xe9 at offset 11)"),
        (b"# coding: nope\nattrs\xff\n", 1, "coding comment names 'nope', no text encoding"),
        (b"#\n# coding=hex\n\xff", 2, "coding comment names 'hex', no text encoding"),
        (codecs.BOM_UTF16_BE + "a\nb".encode("utf-16-be") + b"\xd8", 2, "not UTF-16-BE text"),
    ],
    ids=["utf-32-le", "not-utf-8", "unknown-coding", "no-text-coding", "odd-utf-16"],
)
def test_decode_failures_are_problems_at_their_line(data: bytes, line: int, message: str) -> None:
    """What pip cannot read is a ManifestError naming the file and line, never a guess."""
    with pytest.raises(ManifestError) as raised:
        requirements_txt.decode(data, "requirements.txt")
    assert (raised.value.file, raised.value.line) == ("requirements.txt", line)
    assert raised.value.message.startswith(message)


def test_pre_opts_every_requirement_of_the_install_in_to_prereleases() -> None:
    """``--pre`` is a global pip option: every row of the file and its includes opts in."""
    files = {"requirements.txt": "httpx\n-r base.txt\n", "base.txt": "--pre\nattrs>=21\n"}
    result = requirements_txt.extract("requirements.txt", files["requirements.txt"], files.get)  # type: ignore[arg-type]
    assert [(d.name, d.prereleases) for d in result.dependencies] == [
        ("httpx", True),
        ("attrs", True),
    ]
    plain = requirements_txt.extract("requirements.txt", "httpx\n--prefer-binary\n", _no_read)
    assert [(d.name, d.prereleases) for d in plain.dependencies] == [("httpx", False)]


def test_pip_compile_header_annotations_and_unsafe_packages() -> None:
    """A pip-compile output says its command, each pin's ``# via`` and what it left unsafe."""
    result = _extract("pip-compile-source")
    assert result.compiled == CompiledRequirements(
        tool="pip-compile",
        command="pip-compile --generate-hashes --output-file=requirements.txt requirements.in",
        sources=("requirements.in",),
        output="requirements.txt",
        via=(
            (7, ("flask",)),
            (11, ("requests",)),
            (15, ("flask",)),
            (19, ("-r requirements.in",)),
            (23, ("-r requirements.in",)),
            (27, ("requests",)),
        ),
        unsafe=("pip",),
    )
    assert [d.name for d in result.dependencies] == [
        "blinker",
        "certifi",
        "click",
        "flask",
        "requests",
        "urllib3",
    ]
    source = _extract("pip-compile-source", "requirements.in")
    assert source.compiled is None


def test_uv_pip_compile_header_and_line_style_annotations() -> None:
    """The header uv writes and ``pkg==1  # via a, b`` (annotation style ``line``) are read."""
    result = _extract("uv-pip-compile")
    assert result.compiled == CompiledRequirements(
        tool="uv",
        command="uv pip compile requirements.in -o requirements.txt --python-version 3.11",
        sources=("requirements.in",),
        output="requirements.txt",
        via=((3, ("django",)), (5, ("-r requirements.in",)), (7, ("django",))),
    )
    export = _extract("uv-export", "requirements/prod.txt").compiled
    assert export is not None
    assert (export.tool, export.sources, export.custom) == ("uv", ("uv.lock",), False)


@pytest.mark.parametrize(
    ("command", "sources", "output", "custom"),
    [
        ("pip-compile", (), None, False),
        ("pip-compile -o out/req.txt a.in b.in", ("a.in", "b.in"), "out/req.txt", False),
        ("pip-compile -oreq.txt --extra dev pyproject.toml", ("pyproject.toml",), "req.txt", False),
        (
            "pip-compile --python-version 3.11 -c constraints.txt -P flask req.in",
            ("req.in",),
            None,
            False,
        ),
        (
            "python3.12 -m piptools compile dev.in --output-file dev.txt",
            ("dev.in",),
            "dev.txt",
            False,
        ),
        ("uv pip compile --universal -c c.txt setup.cfg -o r.txt", ("setup.cfg",), "r.txt", False),
        ("/usr/local/bin/pip-compile -- -weird.in", ("-weird.in",), None, False),
        ("make requirements", (), None, True),
        ("pip-compile 'unbalanced", (), None, True),
    ],
)
def test_compile_commands_name_their_sources_and_output(
    command: str, sources: tuple[str, ...], output: str | None, *, custom: bool
) -> None:
    """Options taking a value never pass for sources; a custom command names none."""
    text = (
        "#\n# This file is autogenerated by pip-compile with Python 3.12\n"
        f"# by the following command:\n#\n#    {command}\n#\nflask==3.0.0\n"
    )
    header = requirements_txt.compiled_header(text)
    assert header is not None
    assert (header.sources, header.output, header.custom) == (sources, output, custom)
    assert header.command == command


def test_no_header_but_a_requirement_first_is_not_compiled() -> None:
    """Only the leading comment block is a header; a later copy of its words is not."""
    text = "flask==3.0.0\n# This file is autogenerated by pip-compile with Python 3.12\n"
    assert requirements_txt.compiled_header(text) is None
    assert requirements_txt.extract("r.txt", text, _no_read).compiled is None
    bare = "flask==3.0.0\n    # via -r requirements.in\n"  # --no-header, annotations kept
    compiled = requirements_txt.extract("r.txt", bare, _no_read).compiled
    assert compiled == CompiledRequirements(tool="", via=((1, ("-r requirements.in",)),))
