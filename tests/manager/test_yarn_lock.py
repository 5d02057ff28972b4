from __future__ import annotations

from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import yarn_lock
from patchula.models import ExtractResult, Lockfile, ManifestProblem

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "yarn_lock"
CORPUS = Path(__file__).parents[3] / "shared" / "corpus"


LODASH_PATCH = "lodash-npm-4.17.21-6382451519.patch"


def _no_read(path: str) -> str:
    raise ManifestError("lockfiles have no includes", file=path)


def _extract(case: str, path: str = "yarn.lock") -> ExtractResult:
    text = (FIXTURES / case / "yarn.lock").read_text(encoding="utf-8")
    return yarn_lock.extract(path, text, _no_read)


def _lockfile(result: ExtractResult) -> Lockfile:
    assert result.lockfile is not None
    return result.lockfile


def _descriptors(result: ExtractResult) -> dict[str, tuple[str, str, int | None]]:
    return {p.descriptor: (p.name, p.version, p.line) for p in _lockfile(result).packages}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("yarn.lock", True),
        ("dev-docs/yarn.lock", True),
        ("node_modules/a/yarn.lock", False),
        ("yarn.lock.bak", False),
        ("package-lock.json", False),
    ],
)
def test_matches_yarn_lock_by_basename(path: str, *, expected: bool) -> None:
    """yarn.lock matches anywhere but inside node_modules."""
    assert yarn_lock.matches(path) is expected


def test_classic_entry_with_several_ranges_gives_each_range_its_version() -> None:
    """A v1 entry keyed by two or four ranges (quoted or not) locks each of them, at its line."""
    result = _extract("classic-multiple-ranges")
    assert result.problems == ()
    assert _descriptors(result) == {
        "@adobe/css-tools@^4.4.0": ("@adobe/css-tools", "4.4.2", 5),
        "@ampproject/remapping@^2.2.0": ("@ampproject/remapping", "2.3.0", 10),
        "@ampproject/remapping@^2.3.0": ("@ampproject/remapping", "2.3.0", 10),
        "ajv@^6.10.0": ("ajv", "6.12.6", 18),
        "ajv@^6.12.4": ("ajv", "6.12.6", 18),
        "ajv@^8.0.0": ("ajv", "8.17.1", 28),
        "ajv@^8.0.1": ("ajv", "8.17.1", 28),
        "ajv@^8.6.0": ("ajv", "8.17.1", 28),
        "ajv@^8.9.0": ("ajv", "8.17.1", 28),
    }
    lockfile = _lockfile(result)
    assert (lockfile.manager, lockfile.ecosystem, lockfile.members) == (
        "yarn_lock",
        "npm",
        frozenset({""}),
    )


def test_classic_alias_locks_its_target_and_git_file_and_tarball_entries_are_left_out() -> None:
    """`a@npm:b@^4` locks b; git, file: and tarball entries are no registry versions."""
    result = _extract("classic-aliases-and-git")
    assert _descriptors(result) == {
        "string-width-cjs@npm:string-width@^4.2.0": ("string-width", "4.2.3", 5),
        "left-pad@^1.3.0": ("left-pad", "1.3.0", 21),
    }


def test_berry_workspaces_patches_aliases_and_git() -> None:
    """Berry: workspace entries are members, patches lock their base, git is left out."""
    result = _extract("berry-workspaces-patches", "web/yarn.lock")
    assert result.problems == ()
    lockfile = _lockfile(result)
    assert lockfile.file == "web/yarn.lock"
    assert lockfile.members == frozenset({"", "packages/app"})
    assert _descriptors(result) == {
        "@babel/code-frame@^7.0.0": ("@babel/code-frame", "7.24.7", 18),
        "@babel/code-frame@^7.24.7": ("@babel/code-frame", "7.24.7", 18),
        "react@^18.2.0": ("react", "18.3.1", 34),
        "resolve@^1.22.0": ("resolve", "1.22.8", 43),
        "resolve@patch:resolve@npm%3A^1.22.0#optional!builtin<compat/resolve>": (
            "resolve",
            "1.22.8",
            52,
        ),
        f"lodash-patched@patch:lodash@npm%3A^4.17.21#~/.yarn/patches/{LODASH_PATCH}": (
            "lodash",
            "4.17.21",
            59,
        ),
        "lodash-patched@^4.17.21": ("lodash", "4.17.21", 59),
        "string-width-cjs@npm:string-width@^4.2.0": ("string-width", "4.2.3", 66),
    }


def test_berry_reads_the_same_through_yaml_as_line_by_line() -> None:
    """The line reader and the YAML reader give the same packages for a yarn-written lock."""
    text = (FIXTURES / "berry-workspaces-patches" / "yarn.lock").read_text(encoding="utf-8")
    fast = yarn_lock._berry_lines(text)
    assert fast is not None
    problems: list[ManifestProblem] = []
    slow = yarn_lock._berry_yaml("yarn.lock", yarn_lock._berry_outline(text), text, problems)
    assert problems == []
    assert slow is not None
    assert {k: v[1:] for k, v in fast.items()} == {k: v[1:] for k, v in slow.items()}
    assert {k: v[0] for k, v in fast.items()} == {k: v[0] for k, v in slow.items()}


def test_berry_not_written_by_yarn_goes_through_yaml() -> None:
    """Single quotes and an anchor are no yarn output: the YAML reader reads them."""
    text = (FIXTURES / "berry-not-yarn-shaped" / "yarn.lock").read_text(encoding="utf-8")
    assert yarn_lock._berry_lines(text) is None
    result = _extract("berry-not-yarn-shaped")
    assert result.problems == ()
    assert _descriptors(result) == {"left-pad@^1.3.0": ("left-pad", "1.3.0", 5)}


def test_unknown_berry_version_is_a_warning_and_still_read() -> None:
    """A __metadata version yarn never wrote is a warning; the entries are read anyway."""
    result = _extract("unknown-berry-version")
    assert [(p.line, p.severity, p.message) for p in result.problems] == [
        (1, "warning", "unknown yarn lockfile version '99'; reading it as far as possible")
    ]
    assert _descriptors(result) == {"left-pad@^1.3.0": ("left-pad", "1.3.0", 5)}


def test_empty_lockfile_locks_nothing() -> None:
    """An empty yarn.lock is a lockfile without packages, not a problem."""
    result = _extract("empty")
    assert result.problems == ()
    assert _lockfile(result).packages == ()


@pytest.mark.parametrize(
    ("text", "message"),
    [
        ("# yarn lockfile v1\nthis is not an entry\n", "expected an entry `name@range:`"),
        ("__metadata:\n  version: 8\n'a@npm:^1': [unclosed\n", "invalid YAML"),
        ("a@^1:\n  version \x00\n", "NUL characters"),
    ],
)
def test_garbage_is_a_problem_at_its_line(text: str, message: str) -> None:
    """A line that is no entry, broken YAML and NUL bytes are problems, never exceptions."""
    result = yarn_lock.extract("yarn.lock", text, _no_read)
    assert [p.message for p in result.problems if message in p.message]


@pytest.mark.parametrize(
    ("name", "spec", "expected"),
    [
        ("a", "^1.2", "a@^1.2"),
        ("a", "npm:^1.2", "a@^1.2"),
        ("a", " 1.2.3 ", "a@1.2.3"),
        ("a", "npm:b@^1", "a@npm:b@^1"),
        ("@s/a", "npm:@s/b@^1", "@s/a@npm:@s/b@^1"),
        ("a", "latest", "a@latest"),
    ],
)
def test_descriptor_is_what_both_formats_key_a_declaration_by(
    name: str, spec: str, expected: str
) -> None:
    """Berry's explicit npm: protocol and classic's bare range key the same descriptor."""
    assert yarn_lock.descriptor(name, spec) == expected


def test_hostile_key_repeated_100k_times_is_read_in_bounded_time() -> None:
    """One key repeated 100,000 times is one entry (the last), read without blowing up."""
    entry = '"a@^1.0.0":\n  version "1.0.{}"\n'
    text = "# yarn lockfile v1\n" + "".join(entry.format(i % 10) for i in range(100_000))
    result = yarn_lock.extract("yarn.lock", text, _no_read)
    packages = _lockfile(result).packages
    assert len(packages) == 100_000  # one per entry; the matching keeps the last
    assert packages[-1].version == "1.0.9"


def test_hostile_berry_alias_bomb_is_a_problem() -> None:
    """An alias bomb in a berry lockfile ends as a problem, never a hang or a crash."""
    lines = ["__metadata:\n  version: 8\n", "a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n"]
    lines += [f"a{i}: &a{i} [*a{i - 1}, *a{i - 1}, *a{i - 1}, *a{i - 1}]\n" for i in range(1, 40)]
    result = yarn_lock.extract("yarn.lock", "".join(lines), _no_read)
    assert _lockfile(result).packages == ()


@pytest.mark.skipif(not (CORPUS / "excalidraw__excalidraw").is_dir(), reason="corpus absent")
def test_real_excalidraw_lockfile_is_read_whole() -> None:
    """The corpus's excalidraw yarn.lock gives every entry's ranges, without a problem."""
    text = (CORPUS / "excalidraw__excalidraw" / "yarn.lock").read_text(encoding="utf-8")
    result = yarn_lock.extract("yarn.lock", text, _no_read)
    assert result.problems == ()
    found = _descriptors(result)
    assert found["@babel/preset-env@7.26.9"] == (
        "@babel/preset-env",
        "7.26.9",
        found["@babel/preset-env@7.26.9"][2],
    )
    assert len(found) > 1500
