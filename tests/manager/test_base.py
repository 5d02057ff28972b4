from __future__ import annotations

import json
import random
import re

import pytest

from patchula.manager import package_lock
from patchula.manager.base import (
    _TOML_HEADER,
    JsonKeys,
    LineIndex,
    TomlLocator,
    _toml_key_path,
    line_of,
)


def _no_read(path: str) -> str:
    raise AssertionError(path)


@pytest.mark.parametrize(
    "text", ["", "one line", "a\nb\n", "\n\n\n", "a\r\nb\r\n\r\nc", "x\u2028y\nz\x0cw\n"]
)
def test_line_index_agrees_with_counting_newlines(text: str) -> None:
    """Every offset, before, inside and past the text, gets the line ``line_of`` counts."""
    index = LineIndex(text)
    got = [index.line(offset) for offset in range(-2, len(text) + 3)]
    assert got == [line_of(text, offset) for offset in range(-2, len(text) + 3)]


def test_line_index_lines_of_known_offsets() -> None:
    """Only a newline ends a line: line starts and the character after each newline."""
    index = LineIndex("ab\ncd\r\n\nef")
    assert [index.line(o) for o in (0, 2, 3, 5, 6, 7, 8, 9, 100)] == [1, 1, 2, 2, 2, 3, 4, 4, 4]


NESTED = """\ufeff{
  "a": {"b": [1, {"c": "}]\\"", "d": {}}, [{"e": 1}]],
     "b2"  :  "x"},
  "dup": 1,
  "esc\\u0041ped": null,
  "dup": {"inner": true}
}
"""


def test_json_keys_offsets_and_lines_of_nested_keys() -> None:
    """Keys anywhere are found at their quote; strings with brackets and escapes are skipped."""
    keys = JsonKeys(NESTED)
    assert NESTED[keys.offset(("a", "b", 1, "c")) or 0 :].startswith('"c"')
    assert keys.line(("a",)) == 2
    assert keys.line(("a", "b", 1, "d")) == 2
    assert keys.line(("a", "b", 2, 0, "e")) == 2
    assert keys.line(("a", "b2")) == 3
    assert keys.line(("escAped",)) == 5
    # A repeated key keeps its last offset, as json.loads keeps its last value.
    assert keys.line(("dup",)) == 6
    assert keys.line(("dup", "inner")) == 6


@pytest.mark.parametrize(
    "path",
    [("missing",), ("a", "b", 5), ("a", "b", 0, "x"), ("a", "b", 1), ("a", "b2", "x"), ()],
)
def test_json_keys_paths_that_name_no_key_are_none(path: tuple[str | int, ...]) -> None:
    """A missing key, an index past the end, a scalar's child or an array element is no key."""
    assert JsonKeys(NESTED).offset(path) is None


def test_package_lock_lines_on_a_large_generated_lock() -> None:
    """Each of 3,000 packages keeps the line of its own key (every entry is 8 lines here)."""
    packages: dict[str, object] = {"": {"name": "root"}}
    for i in range(3000):
        packages[f"node_modules/p{i}"] = {
            "version": f"1.0.{i}",
            "resolved": f"https://registry.npmjs.org/p{i}/-/p{i}-1.0.{i}.tgz",
            "dependencies": {"a": "^1", "b": "^2"},
        }
    text = json.dumps({"lockfileVersion": 3, "packages": packages}, indent=2)
    lockfile = package_lock.extract("package-lock.json", text, _no_read).lockfile
    assert lockfile is not None
    assert [p.line for p in lockfile.packages] == [7 + 8 * i for i in range(3000)]
    assert text.splitlines()[7 + 8 * 2999 - 1] == '    "node_modules/p2999": {'


def _reference_tables(text: str) -> list[tuple[tuple[str, ...], bool, int, int, int]]:
    """The table headers of ``text`` found line by line: the oracle of ``TomlLocator``.

    The locator's original algorithm: each line, unless inside a multi-line string, may be a
    header; each line's triple quotes then open or close a multi-line string.
    """
    heads: list[tuple[tuple[str, ...], bool, int, int]] = []
    offset, quote = 0, None
    for line in text.split("\n"):
        full = line + "\n"
        if quote is None and line.lstrip(" \t").startswith("["):
            header = _TOML_HEADER.match(line.rstrip("\r"))
            if header is not None:
                path = _toml_key_path(header.group(2))
                body = min(offset + len(full), len(text))
                heads.append((path, header.group(1) == "[[", offset, body))
        for mark in re.finditer(r'"""|\'\'\'', line):
            if quote is None:
                quote = mark.group()
            elif mark.group() == quote:
                quote = None
        offset += len(full)
    return [
        (path, array, start, body, heads[i + 1][2] if i + 1 < len(heads) else len(text))
        for i, (path, array, start, body) in enumerate(heads)
    ]


_PIECES = [
    "[a]\n",
    "[[b]]\n",
    'x = """\n',
    '"""\n',
    "y = '''\n",
    "'''\n",
    "[c] # c\n",
    "  [d.e]\r\n",
    "k = 1\n",
    '[ "q" . r ]\n',
    "[bad\n",
    'z = """ [e] """\n',
    '[f] """\n',
    "\n",
    "[g]",
    "\t[h]\n",
    'a = """x"""\n',
    'm = """\r\n[x]\r\n"""\n',
    '""""\n',
    "[k] '''\n",
    '[l]"""x"""\n',
    "[[package]]\n",
    '[package.dependencies]\npkg = ">=1"\n',
]


def test_toml_locator_finds_the_headers_the_line_by_line_scan_finds() -> None:
    """The C-level header and quote search agrees with a line-by-line scan on 20,000 texts."""
    rnd = random.Random(19)  # noqa: S311 - reproducible test input, not a secret
    pick = rnd.choice
    texts = ["".join(pick(_PIECES) for _ in range(rnd.randint(0, 16))) for _ in range(20_000)]
    disagreements = 0
    for text in texts:
        locator = TomlLocator(text)
        found = [(t.path, t.array, t.start, t.body, t.end) for t in locator.tables]
        disagreements += found != _reference_tables(text)
    assert disagreements == 0
    # A lockfile's headers, with their bodies' spans (the second [[package]] starts at 25).
    locator = TomlLocator('[[package]]\nname = "a"\n\n\n[[package]]\nname = "b"\n')
    assert [(t.path, t.start, t.body, t.end) for t in locator.tables] == [
        (("package",), 0, 12, 25),
        (("package",), 25, 37, 48),
    ]
