from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from patchula.errors import ManifestError
from patchula.manager import pnpm_lock
from patchula.models import ExtractResult, Lockfile

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "pnpm_lock"
CORPUS = Path(__file__).parents[3] / "shared" / "corpus"


def _no_read(path: str) -> str:
    raise ManifestError("lockfiles have no includes", file=path)


def _extract(case: str, path: str = "pnpm-lock.yaml") -> ExtractResult:
    text = (FIXTURES / case / "pnpm-lock.yaml").read_text(encoding="utf-8")
    return pnpm_lock.extract(path, text, _no_read)


def _lockfile(result: ExtractResult) -> Lockfile:
    assert result.lockfile is not None
    return result.lockfile


def _paths(result: ExtractResult) -> dict[str, tuple[str, str, int | None]]:
    return {p.install_path: (p.name, p.version, p.line) for p in _lockfile(result).packages}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("pnpm-lock.yaml", True),
        ("web/ui/pnpm-lock.yaml", True),
        ("node_modules/.pnpm/lock.yaml", False),
        ("node_modules/a/pnpm-lock.yaml", False),
        ("pnpm-workspace.yaml", False),
    ],
)
def test_matches_pnpm_lock_by_basename(path: str, *, expected: bool) -> None:
    """pnpm-lock.yaml matches anywhere but inside node_modules."""
    assert pnpm_lock.matches(path) is expected


def test_v9_workspaces_lock_each_importer_and_drop_peer_suffixes_and_links() -> None:
    """9.0: every importer is a member; peer suffixes go; a workspace link is no version."""
    result = _extract("v9-workspaces", "web/ui/pnpm-lock.yaml")
    assert result.problems == ()
    lockfile = _lockfile(result)
    assert lockfile.members == frozenset({"", "module/codemirror-promql", "module/lezer-promql"})
    paths = _paths(result)
    assert paths["node_modules/@typescript-eslint/eslint-plugin"] == (
        "@typescript-eslint/eslint-plugin",
        "8.66.0",
        14,
    )
    assert paths["module/codemirror-promql/node_modules/lru-cache"] == ("lru-cache", "11.5.2", 23)
    assert paths["module/lezer-promql/node_modules/jest"] == ("jest", "30.4.2", 96)
    assert "module/codemirror-promql/node_modules/@prometheus-io/lezer-promql" not in paths
    assert len(paths) == 27


def test_v6_single_project_alias_git_and_tarball() -> None:
    """6.0 without importers: the root's sections; /b@1 aliases lock b; git and tarballs are out."""
    result = _extract("v6-peer-suffix-alias-git-tarball")
    assert result.problems == ()
    assert _paths(result) == {
        "node_modules/react-dom": ("react-dom", "18.2.0", 8),
        "node_modules/string-width-cjs": ("string-width", "4.2.3", 11),
        "node_modules/typescript": ("typescript", "5.4.5", 22),
    }
    assert _lockfile(result).members == frozenset({""})


def test_v5_4_importers_with_specifiers_and_underscore_peer_suffix() -> None:
    """5.4: plain versions beside `specifiers`, `_peer` suffixes and /b/1.0.0 aliases."""
    result = _extract("v5.4-importers-peer-suffix")
    assert result.problems == ()
    assert _paths(result) == {
        "node_modules/prettier": ("prettier", "2.8.8", 9),
        "packages/app/node_modules/react-dom": ("react-dom", "18.2.0", 19),
        "packages/app/node_modules/string-width-cjs": ("string-width", "4.2.3", 20),
        "packages/app/node_modules/@types/react": ("@types/react", "18.0.28", 22),
    }
    assert _lockfile(result).members == frozenset({"", "packages/app"})


def test_v9_catalog_specifiers_lock_like_any_other() -> None:
    """Importers whose specifier is `catalog:` still record the version installed."""
    result = _extract("v9-catalogs")
    assert _paths(result) == {
        "packages/new/node_modules/react": ("react", "18.3.1", 23),
        "packages/old/node_modules/react": ("react", "17.0.2", 29),
    }


def test_pnpm_10_environment_document_is_passed_over() -> None:
    """The lockfile document is the last one holding lockfileVersion (pnpm 10's env document)."""
    assert _paths(_extract("env-document")) == {"node_modules/left-pad": ("left-pad", "1.3.0", 20)}


def test_not_a_mapping_is_a_problem() -> None:
    """A YAML list is no lockfile: a problem, no lockfile."""
    result = _extract("not-a-mapping")
    assert result.lockfile is None
    assert [p.message for p in result.problems] == ["expected a mapping with `lockfileVersion`"]


def test_unknown_lockfile_version_is_a_warning() -> None:
    """A lockfileVersion pnpm never wrote is a warning; importers are read anyway."""
    text = "lockfileVersion: '42.0'\nimporters:\n  .:\n    dependencies:\n      a: 1.0.0\n"
    result = pnpm_lock.extract("pnpm-lock.yaml", text, _no_read)
    assert [(p.line, p.severity) for p in result.problems] == [(1, "warning")]
    assert _paths(result) == {"node_modules/a": ("a", "1.0.0", 5)}


def test_packages_sections_are_not_parsed_but_lines_are_kept() -> None:
    """The packages and snapshots sections are blanked line for line; other sections remain."""
    text = "a: 1\npackages:\n  x: {}\n  y: {}\n\nsnapshots:\n  z: {}\nimporters: {}\n"
    blanked = pnpm_lock._without_packages(text)
    assert blanked == "a: 1\n\n\n\n\n\n\nimporters: {}\n"


def test_broken_yaml_in_packages_is_still_reported() -> None:
    """A syntax error the cut hides is found by parsing the whole file instead (never missed)."""
    text = (
        "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n      a: 1.0.0\n"
        "packages:\n  'x@1.0.0': [unclosed\n"
    )
    result = pnpm_lock.extract("pnpm-lock.yaml", text, _no_read)
    assert not [p for p in result.problems if p.severity == "error"]  # cut section: unparsed
    # Broken YAML outside the packages is a problem at its line.
    broken = pnpm_lock.extract("pnpm-lock.yaml", "lockfileVersion: [\n", _no_read)
    assert broken.lockfile is None
    assert broken.problems[0].message.startswith("invalid YAML")


def test_hostile_key_repeated_100k_times_and_alias_bomb_are_bounded() -> None:
    """A key repeated 100,000 times is one entry; an alias bomb shares nodes and ends quickly."""
    repeated = "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n"
    repeated += "      a: 1.0.0\n" * 100_000
    result = pnpm_lock.extract("pnpm-lock.yaml", repeated, _no_read)
    assert _paths(result) == {"node_modules/a": ("a", "1.0.0", 100_004)}
    bomb = ["lockfileVersion: '9.0'\n", "x0: &x0 [a, a, a, a, a, a, a, a, a, a]\n"]
    bomb += [f"x{i}: &x{i} [*x{i - 1}, *x{i - 1}, *x{i - 1}, *x{i - 1}]\n" for i in range(1, 60)]
    bomb.append("importers:\n  .:\n    dependencies:\n      a: *x59\n")
    result = pnpm_lock.extract("pnpm-lock.yaml", "".join(bomb), _no_read)
    assert _lockfile(result).packages == ()


def test_hostile_deep_nesting_is_a_problem() -> None:
    """Nesting past the YAML depth limit is a problem, not a recursion error."""
    text = "lockfileVersion: '9.0'\nimporters: " + "[" * 5000 + "]" * 5000 + "\n"
    result = pnpm_lock.extract("pnpm-lock.yaml", text, _no_read)
    assert result.lockfile is None
    assert "nested" in result.problems[0].message or "invalid YAML" in result.problems[0].message


@pytest.mark.skipif(not (CORPUS / "prometheus__prometheus").is_dir(), reason="corpus absent")
@pytest.mark.parametrize("rel", ["web/ui/pnpm-lock.yaml", "web/ui/react-app/pnpm-lock.yaml"])
def test_real_prometheus_lockfiles_give_every_importer_entry(rel: str) -> None:
    """Each real importer entry with a registry version is a locked package (checked by PyYAML)."""
    text = (CORPUS / "prometheus__prometheus" / rel).read_text(encoding="utf-8")
    result = pnpm_lock.extract(rel, text, _no_read)
    assert result.problems == ()
    expected = {}
    data = yaml.load(text, Loader=yaml.CSafeLoader)
    for directory, importer in data["importers"].items():
        for section in ("dependencies", "devDependencies", "optionalDependencies"):
            for name, entry in (importer.get(section) or {}).items():
                version = entry["version"].split("(")[0]
                if not version.startswith("link:"):
                    prefix = "" if directory == "." else f"{directory}/"
                    expected[f"{prefix}node_modules/{name}"] = version
    assert {p.install_path: p.version for p in _lockfile(result).packages} == expected
    assert len(expected) > 50
