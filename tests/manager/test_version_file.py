"""Single-tool version files: .nvmrc, .node-version, .python-version, .go-version, … ."""

from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import version_file

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "version_file"


def _no_read(path: str) -> str:
    raise ManifestError("not served", file=path)


@pytest.mark.parametrize(
    ("path", "tool", "backend"),
    [
        (".nvmrc", "node", "core:node"),
        ("web/.node-version", "node", "core:node"),
        (".python-version", "python", "core:python"),
        (".go-version", "go", "core:go"),
        (".ruby-version", "ruby", "core:ruby"),
        (".terraform-version", "terraform", "aqua:hashicorp/terraform"),
    ],
)
def test_each_file_pins_its_tool(path: str, tool: str, backend: str) -> None:
    """The file name says the tool; the row resolves through the mise registry mapping."""
    assert version_file.matches(path)
    (dep,) = version_file.extract(path, "1.2.3\n", _no_read).dependencies
    assert (dep.name, dep.backend, dep.dep_type, dep.line) == (
        tool,
        backend,
        path.rpartition("/")[2],
        1,
    )


def test_nvmrc_with_a_v_prefix_is_an_exact_pin() -> None:
    """`v20.11.1` pins 20.11.1 (nvm writes the v)."""
    text = (FIXTURES / "nvmrc" / ".nvmrc").read_text(encoding="utf-8")
    (dep,) = version_file.extract(".nvmrc", text, _no_read).dependencies
    assert (dep.declared, dep.constraint, dep.datasource) == ("v20.11.1", "v20.11.1", "node")


@pytest.mark.parametrize(
    ("text", "constraint"),
    [("lts/*\n", "lts"), ("lts/Iron\n", "lts/iron"), ("node\n", None), ("22\n", "22")],
)
def test_nvm_aliases_read_as_mise_reads_them(text: str, constraint: str | None) -> None:
    """Nvm's `lts/*`, `lts/<name>` and `node` are the LTS aliases and the newest release."""
    (dep,) = version_file.extract(".nvmrc", text, _no_read).dependencies
    assert (dep.constraint, dep.skip_reason) == (constraint, None)


def test_python_version_reads_every_line() -> None:
    """Pyenv reads several versions; a virtualenv name is a skipped row saying so."""
    text = (FIXTURES / "python-version" / ".python-version").read_text(encoding="utf-8")
    rows = [
        (d.line, d.constraint, d.skip_reason)
        for d in version_file.extract(".python-version", text, _no_read).dependencies
    ]
    assert rows == [
        (1, "3.12.4", None),
        (2, "3.11", None),
        (4, "my-venv", "'my-venv' is not a python version (a virtualenv name or another build?)"),
    ]


def test_ruby_prefix_and_extra_words() -> None:
    """`ruby-3.3.0` is 3.3.0; words after a single-version file's value are a warning."""
    (dep,) = version_file.extract(".ruby-version", "ruby-3.3.0\n", _no_read).dependencies
    assert dep.constraint == "3.3.0"
    result = version_file.extract(".nvmrc", "20 21\n", _no_read)
    assert [d.constraint for d in result.dependencies] == ["20"]
    assert [(p.severity, p.line) for p in result.problems] == [("warning", 1)]


def test_hostile_version_files() -> None:
    """Huge and NUL-holding files end as rows or problems, never exceptions."""
    many = version_file.extract(".python-version", "3.12.1\n" * 100_000, _no_read)
    assert len(many.dependencies) == 100_000
    nul = version_file.extract(".nvmrc", "2\x000\n", _no_read)
    assert [p.message for p in nul.problems] == [
        "file contains NUL characters; not a text manifest"
    ]
    assert version_file.extract(".go-version", "", _no_read).dependencies == ()
