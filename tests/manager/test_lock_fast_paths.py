"""The fast paths of lockfile extraction give exactly what the full, general path gives.

Each fast path is taken only for the text shape the tool itself writes; every test here runs
both the fast and the general path on the same text (generated, from the corpus, from the test
fixtures, and hostile variants) and compares whole extraction results, and checks that the
fast path really was taken where it should be (so the comparison is not vacuous).
"""

from __future__ import annotations

import gc
import json
import random
import tomllib
from collections.abc import Callable
from pathlib import Path

import pytest
import tomli

from benchmarks.lockfiles import package_lock as generated_package_lock
from benchmarks.lockfiles import poetry_lock as generated_poetry_lock
from patchula.errors import ManifestError
from patchula.manager import base, package_lock, poetry_lock
from patchula.models import ExtractResult

CORPUS = Path(__file__).parents[3] / "shared" / "corpus"
FIXTURES = Path(__file__).parents[1] / "fixtures"


def _no_read(path: str) -> str:
    raise ManifestError("lockfiles have no includes", file=path)


def _files(*names: str) -> list[Path]:
    found: list[Path] = []
    for root in (CORPUS, FIXTURES):
        for name in names:
            found.extend(p for p in root.rglob(name) if "node_modules" not in p.parts)
    return sorted(found)


Both = Callable[[pytest.MonkeyPatch, str, str], tuple[ExtractResult, ExtractResult, bool]]


def _same_on_files(monkeypatch: pytest.MonkeyPatch, both: Both, *names: str) -> int:
    """Assert ``both``'s two results agree on every corpus and fixture file named ``names``.

    Returns how many took the fast path; skips the test when there is no such file.
    """
    files = _files(*names)
    if not files:
        pytest.skip(f"no {' or '.join(names)} files")
    fast_count = 0
    for file in files:
        text = file.read_text(encoding="utf-8", errors="surrogateescape")
        fast, general, used = both(monkeypatch, text, str(file))
        assert fast == general, file
        fast_count += used
    return fast_count


# --- package-lock.json: member lines of npm's two-space layout ---------------------------------


_INDENTED_LIKE_NPM = base._indented_like_npm


def _npm_both(
    monkeypatch: pytest.MonkeyPatch, text: str, path: str = "package-lock.json"
) -> tuple[ExtractResult, ExtractResult, bool]:
    """(fast result, general result, whether the fast layout was used) for one text."""
    used: list[bool] = []
    # The real check, not what an earlier call of this helper in the same test patched in.
    real = _INDENTED_LIKE_NPM

    def spy(text: str, data: object) -> bool:
        used.append(real(text, data))
        return used[-1]

    monkeypatch.setattr(base, "_indented_like_npm", spy)
    fast = package_lock.extract(path, text, _no_read)
    monkeypatch.setattr(base, "_indented_like_npm", lambda _text, _data: False)
    general = package_lock.extract(path, text, _no_read)
    return fast, general, any(used)


@pytest.mark.parametrize("size", [0, 1, 7, 300])
def test_npm_layout_matches_the_scanner_on_generated_locks(
    monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """Generated lockfileVersion 3 locks (npm's layout) take the layout path, same result."""
    text = generated_package_lock(size)
    fast, general, used = _npm_both(monkeypatch, text)
    assert used
    assert fast == general
    assert fast.lockfile is not None
    assert len(fast.lockfile.packages) == size
    if size:
        first = fast.lockfile.packages[0]
        assert (first.name, first.line) == (
            "pkg-0",
            text.count("\n", 0, text.index('"node_modules/pkg-0"')) + 1,
        )


def test_npm_layout_matches_the_scanner_on_corpus_and_fixtures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every real npm lockfile of the corpus and the fixtures: identical results."""
    layouts = _same_on_files(monkeypatch, _npm_both, "package-lock.json", "npm-shrinkwrap.json")
    assert layouts  # npm writes its layout: at least the corpus locks take the fast path


HOSTILE_NPM = [
    # An escaped key: the rendering differs, so the scanner reads it.
    (
        '{\n  "lockfileVersion": 3,\n  "packages": {\n    "node_\\u006dodules/a": {\n'
        '      "version": "1.0.0"\n    }\n  }\n}\n'
    ),
    # A repeated key: the last one wins (json.loads), and its line is the last one's.
    (
        '{\n  "lockfileVersion": 3,\n  "packages": {\n'
        '    "node_modules/a": {\n      "version": "1.0.0"\n'
        '    },\n    "node_modules/a": {\n      "version": "2.0.0"\n    }\n  }\n}\n'
    ),
    # Keys with escapes that the layout keeps (quote, backslash, newline escape), non-ASCII.
    (
        '{\n  "lockfileVersion": 3,\n  "packages": {\n'
        '    "node_modules/a\\"b": {\n      "version": "1.0.0"\n'
        '    },\n    "node_modules/c\\\\d\\ne": {\n      "version": "2.0.0"\n    },\n'
        '    "node_modules/é": {\n      "version": "3.0.0"\n    }\n  }\n}\n'
    ),
    # A nested object whose lines look like members one level up (four spaces) in a minified
    # neighbour: not the layout, read by the scanner.
    (
        '{"lockfileVersion": 3, "packages": {"node_modules/a": {"version": "1.0.0", "x": "\\n    '
        '\\"node_modules/b\\": {"}}}'
    ),
    # Four-space indent (not npm's): the scanner.
    (
        '{\n    "lockfileVersion": 3,\n    "packages": {\n        "node_modules/a": {\n'
        '            "version": "1.0.0"\n        }\n    }\n}\n'
    ),
    # A BOM, no final newline, an empty entry and an empty packages object elsewhere.
    (
        '\ufeff{\n  "lockfileVersion": 3,\n  "packages": {\n    "": {},\n    "node_modules/a": {\n'
        '      "version": "1.0.0",\n      "dependencies": {}\n    }\n  }\n}'
    ),
    # Numbers the rendering cannot reproduce, NaN, a huge integer: the scanner.
    (
        '{\n  "lockfileVersion": 3,\n  "x": NaN,\n'
        '  "y": 1e5,\n  "z": 123456789012345678901234567890,\n'
        '  "packages": {\n    "node_modules/a": {\n      "version": "1.0.0"\n    }\n  }\n}\n'
    ),
    # A wrong-typed entry and version: problems at their lines.
    (
        '{\n  "lockfileVersion": 3,\n  "packages": {\n    "node_modules/a": 1,\n'
        '    "node_modules/b": {\n      "version": 2\n    }\n  }\n}\n'
    ),
    # v1 nested dependencies in the layout.
    (
        '{\n  "lockfileVersion": 1,\n  "dependencies": {\n    "a": {\n      "version": "1.0.0",\n'
        '      "dependencies": {\n        "b": {\n'
        '          "version": "2.0.0"\n        }\n      }\n'
        "    }\n  }\n}\n"
    ),
    # Invalid JSON stays an error at its line.
    (
        '{\n  "lockfileVersion": 3,\n  "packages": {\n'
        '    "node_modules/a": {\n      "version": "1.0.0",\n'
        "    }\n  }\n}\n"
    ),
]


@pytest.mark.parametrize("text", HOSTILE_NPM)
def test_npm_layout_matches_the_scanner_on_hostile_text(
    monkeypatch: pytest.MonkeyPatch, text: str
) -> None:
    """Escapes, repeats, foreign layouts, odd numbers and errors: the same result either way."""
    fast, general, _ = _npm_both(monkeypatch, text)
    assert fast == general


def test_npm_layout_lines_of_escaped_and_repeated_keys(monkeypatch: pytest.MonkeyPatch) -> None:
    """The layout path decodes escaped keys and numbers each member by its own line."""
    fast, general, used = _npm_both(monkeypatch, HOSTILE_NPM[2])
    assert used
    assert fast == general
    assert fast.lockfile is not None
    assert [(p.name, p.version, p.line) for p in fast.lockfile.packages] == [
        ('a"b', "1.0.0", 4),
        ("c\\d\ne", "2.0.0", 7),
        ("é", "3.0.0", 10),
    ]
    repeated, _, used = _npm_both(monkeypatch, HOSTILE_NPM[1])
    assert not used
    assert repeated.lockfile is not None
    assert [(p.version, p.line) for p in repeated.lockfile.packages] == [("2.0.0", 7)]


def test_npm_layout_is_only_the_exact_rendering() -> None:
    """The layout test accepts npm's rendering (with or without final newline, BOM) only."""
    data = {"a": {"b": [1, {}], "c": "é"}, "d": []}
    npm = json.dumps(data, indent=2, ensure_ascii=False)
    assert base._indented_like_npm(npm, data)
    assert base._indented_like_npm("\ufeff" + npm + "\n", data)
    assert not base._indented_like_npm(npm + "\n\n", data)
    assert not base._indented_like_npm(json.dumps(data, indent=4), data)
    assert not base._indented_like_npm(json.dumps(data, indent=2), data)
    assert not base._indented_like_npm('{"a": "\ud800"}', {"a": "\ud800"})


# --- poetry.lock: the layout Poetry writes, read without a TOML document ----------------------

POETRY_SEED = (
    "# This file is automatically @generated by Poetry 2.4.1 and should not be changed by hand.\n"
    "\n"
    "[[package]]\n"
    'name = "Anyio_X"\n'
    'version = "4.13.0"\n'
    'description = "A \\"quoted\\" word\ttab"\n'
    "optional = false\n"
    'groups = ["main"]\n'
    "files = [\n"
    '    {file = "anyio-4.13.0-py3-none-any.whl", hash = "sha256:08b3"},\n'
    '    {file = "anyio-4.13.0.tar.gz", hash = "sha256:334b"},\n'
    "]\n"
    "\n"
    "[package.dependencies]\n"
    'exceptiongroup = {version = ">=1.0.2", markers = "python_version < \\"3.11\\""}\n'
    '"zope.interface" = "*"\n'
    "\n"
    "[package.extras]\n"
    'trio = ["trio (>=0.32.0)"]\n'
    "\n"
    "[[package]]\n"
    'name = "local"\n'
    'version = "0.1.0"\n'
    "files = []\n"
    "\n"
    "[package.source]\n"
    'type = "directory"\n'
    'url = "../local"\n'
    "\n"
    "[[package]]\n"
    'name = "custom"\n'
    'version = "1.0"\n'
    "\n"
    "[package.source]\n"
    'type = "legacy"\n'
    'url = "https://example.org/simple"\n'
    'reference = "example"\n'
    "\n"
    "[metadata]\n"
    'lock-version = "2.1"\n'
    'python-versions = ">=3.10,<4.0"\n'
    'content-hash = "afaa"\n'
)


def _poetry_both(
    monkeypatch: pytest.MonkeyPatch, text: str, path: str = "poetry.lock"
) -> tuple[ExtractResult, ExtractResult, bool]:
    """(result, result with the TOML parser only, whether the layout scan read it)."""
    used = poetry_lock.scan_poetry_layout(base.strip_bom(text)) is not None
    fast = poetry_lock.extract(path, text, _no_read)
    monkeypatch.setattr(poetry_lock, "scan_poetry_layout", lambda _text: None)
    general = poetry_lock.extract(path, text, _no_read)
    monkeypatch.undo()
    return fast, general, used


@pytest.mark.parametrize("size", [0, 1, 9, 400])
def test_poetry_layout_matches_tomli_on_generated_locks(
    monkeypatch: pytest.MonkeyPatch, size: int
) -> None:
    """The benchmark's generated locks take the layout scan and extract the same packages."""
    fast, general, used = _poetry_both(monkeypatch, generated_poetry_lock(size))
    assert used
    assert fast == general
    assert fast.lockfile is not None
    assert len(fast.lockfile.packages) == size


def test_poetry_layout_reads_the_seed_like_tomli(monkeypatch: pytest.MonkeyPatch) -> None:
    """Names normalised, directory sources left out, legacy kept, name lines, no problems."""
    fast, general, used = _poetry_both(monkeypatch, POETRY_SEED)
    assert used
    assert fast == general
    assert fast.lockfile is not None
    assert [(p.name, p.version, p.line) for p in fast.lockfile.packages] == [
        ("anyio-x", "4.13.0", 4),
        ("custom", "1.0", 31),
    ]
    assert fast.problems == ()


def test_poetry_layout_matches_tomli_on_corpus_and_fixtures(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """Every poetry.lock of the corpus and the fixtures: identical results."""
    scanned = _same_on_files(monkeypatch, _poetry_both, "poetry.lock")
    assert scanned  # Poetry's own lock at least is in its layout


HOSTILE_POETRY = [
    # Repeated keys, tables and inline keys: TOML errors (tomli's message and line).
    POETRY_SEED.replace('version = "4.13.0"\n', 'version = "4.13.0"\nversion = "5"\n'),
    POETRY_SEED.replace("[package.extras]\n", "[package.dependencies]\n"),
    POETRY_SEED.replace('markers = "python', 'version = "python'),
    POETRY_SEED.replace('groups = ["main"]\n', 'groups = ["main"]\nextras = 1\n').replace(
        "[package.extras]", "[package.extras]"
    )
    + "",
    POETRY_SEED.replace("optional = false\n", "optional = false\nextras = 1\n"),
    POETRY_SEED + "[metadata]\nx = 1\n",
    POETRY_SEED.replace("[[package]]\n", "[package.extras]\nx = 1\n\n[[package]]\n", 1),
    "x = 1\n" + POETRY_SEED,
    POETRY_SEED + '[[package]]\nname = "late"\nversion = "1"\n',
    # Syntax errors: an unclosed string, a bad escape, a control character, a bad header.
    POETRY_SEED.replace('"4.13.0"', '"4.13.0'),
    POETRY_SEED.replace('"4.13.0"', '"4.13\\q.0"'),
    POETRY_SEED.replace('"4.13.0"', '"4.13\x01.0"'),
    POETRY_SEED.replace("[[package]]", "[[package]", 1),
    # Valid TOML off the layout: the parser reads it (same result by construction).
    POETRY_SEED.replace("\n", "\r\n"),
    POETRY_SEED.replace('name = "custom"', "name = 'custom'"),
    POETRY_SEED.replace('name = "local"\n', 'description = "x"\nname = "local"\n'),
    POETRY_SEED.replace('name = "Anyio_X"', "name = 3"),
    POETRY_SEED.replace('lock-version = "2.1"', 'lock-version = "9.0"'),
    POETRY_SEED.replace('type = "legacy"', "type = 7"),
    POETRY_SEED.replace('type = "directory"\n', 'type = "directory"\ntype = "git"\n'),
    POETRY_SEED.replace('"zope.interface"', '"zope"'),
    POETRY_SEED.replace('"zope.interface" = "*"', '"zope.interface" = "*"\n"zope.interface" = "1"'),
    "\ufeff" + POETRY_SEED.rstrip("\n"),
    "",
    "[[package]]\n",
    POETRY_SEED.replace('description = "A', 'description = "A, x = 1, x = 2'),
]


@pytest.mark.parametrize("index", range(len(HOSTILE_POETRY)))
def test_poetry_layout_matches_tomli_on_hostile_text(
    monkeypatch: pytest.MonkeyPatch, index: int
) -> None:
    """Repeats, syntax errors and valid text off the layout: the same result, errors kept."""
    text = HOSTILE_POETRY[index]
    fast, general, used = _poetry_both(monkeypatch, text)
    assert fast == general
    try:
        tomllib.loads(base.strip_bom(text))
    except tomllib.TOMLDecodeError:
        assert not used  # never accepted where the parser refuses
        assert any(p.message.startswith("invalid TOML") for p in fast.problems)


def test_poetry_layout_never_accepts_what_tomli_refuses(monkeypatch: pytest.MonkeyPatch) -> None:
    """Seeded mutations of the seed: the layout scan reads a text only if the parser does.

    A character removed, doubled or inserted, a line doubled or removed, 1,500 times.
    """
    rng = random.Random(12)  # noqa: S311 - reproducible test input, no secret
    alphabet = '"\\{}[]=, \n#\tax.1\x7f'
    scanned = 0
    for _ in range(1500):
        text = POETRY_SEED
        lines = text.split("\n")
        kind = rng.randrange(5)
        at = rng.randrange(len(text))
        if kind == 0:
            text = text[:at] + text[at + 1 :]
        elif kind == 1:
            text = text[:at] + text[at] + text[at:]
        elif kind == 2:
            text = text[:at] + rng.choice(alphabet) + text[at:]
        elif kind == 3:
            row = rng.randrange(len(lines))
            text = "\n".join([*lines[: row + 1], lines[row], *lines[row + 1 :]])
        else:
            row = rng.randrange(len(lines))
            text = "\n".join(lines[:row] + lines[row + 1 :])
        scan = poetry_lock.scan_poetry_layout(text)
        if scan is None:
            continue
        scanned += 1
        tomllib.loads(text)  # raises if the scan accepted a text TOML refuses
        fast, general, _ = _poetry_both(monkeypatch, text)
        assert fast == general, text
    assert scanned > 100


# --- The cyclic collector paused while a lockfile is decoded and walked ------------------------


def test_package_lock_walk_runs_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    """During the walk of the decoded lock the collector is off; afterwards it is on again."""
    seen: list[bool] = []
    real = package_lock._Reader.read_packages

    def spy(self: package_lock._Reader, entries: object) -> None:
        seen.append(gc.isenabled())
        real(self, entries)

    monkeypatch.setattr(package_lock._Reader, "read_packages", spy)
    assert gc.isenabled()
    result = package_lock.extract("package-lock.json", generated_package_lock(3), _no_read)
    assert result.lockfile is not None
    assert len(result.lockfile.packages) == 3
    assert seen == [False]
    assert gc.isenabled()


def test_collector_pause_nests_and_keeps_a_disabled_collector_disabled() -> None:
    """The last of nested (or concurrent) holders resumes it, and only if it was enabled."""
    assert gc.isenabled()
    with base.collector_paused():
        with base.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()  # the outer holder still holds it
    assert gc.isenabled()
    gc.disable()
    try:
        with base.collector_paused():
            assert not gc.isenabled()
        assert not gc.isenabled()
    finally:
        gc.enable()


def test_collector_pause_is_released_when_the_body_raises() -> None:
    """An exception inside the pause still resumes the collector."""
    with pytest.raises(RuntimeError), base.collector_paused():
        raise RuntimeError
    assert gc.isenabled()


def test_toml_is_parsed_with_the_collector_paused(monkeypatch: pytest.MonkeyPatch) -> None:
    """A Cargo.lock (any TOML) is decoded with the collector off, and it is on again after."""
    seen: list[bool] = []
    real = tomli.loads

    def spy(text: str) -> dict[str, object]:
        seen.append(gc.isenabled())
        parsed: dict[str, object] = real(text)
        return parsed

    monkeypatch.setattr(tomli, "loads", spy)
    data, problem = base.parse_toml("Cargo.lock", 'version = 3\n[[package]]\nname = "a"\n')
    assert problem is None
    assert data == {"version": 3, "package": [{"name": "a"}]}
    assert seen == [False]
    assert gc.isenabled()
    bad, problem = base.parse_toml("Cargo.lock", "version = \n")
    assert bad is None
    assert problem is not None
    assert problem.line == 1
    assert gc.isenabled()
