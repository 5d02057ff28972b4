"""yarn, pnpm and bun lockfiles in a scan: which lock gives each package.json row its current."""

from __future__ import annotations

import json
import re
import shutil
from pathlib import Path
from typing import Any, get_args

import pytest
import yaml

from patchula.errors import ManifestError
from patchula.manager import MANAGERS
from patchula.models import CurrentSource, FetchResponse
from patchula.scan import RepoResult, _discover, _extract_repo, _Extracted
from patchula.settings import Settings
from tests.test_scan import NOW, PKGS, FakeFetch, _scan, _write

FIXTURES = Path(__file__).parent / "fixtures" / "manifests"
CORPUS = Path(__file__).parents[2] / "shared" / "corpus"


def _extract(root: Path) -> tuple[RepoResult, list[_Extracted]]:
    repo = RepoResult(target=str(root), root=str(root), commit=None)
    found, _ = _discover(root, Settings())
    return repo, _extract_repo(root, Settings(), repo, found)


def _locked(items: list[_Extracted]) -> dict[tuple[str, str], tuple[str | None, str | None]]:
    return {(e.dep.file, e.dep.name): (e.locked, e.lock_file) for e in items}


CLASSIC = """# yarn lockfile v1

"a@^1.0.0":
  version "1.0.0"

"a@>=1.0.0":
  version "1.0.0"
"""


def test_yarn_classic_workspace_members_come_from_the_root_manifest(tmp_path: Path) -> None:
    """A member matched by the root's `workspaces` uses the root yarn.lock; a stray one does not."""
    _write(tmp_path, "package.json", json.dumps({"workspaces": ["packages/*"]}))
    _write(tmp_path, "packages/app/package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
    _write(tmp_path, "tools/x/package.json", json.dumps({"dependencies": {"a": ">=1.0.0"}}))
    _write(tmp_path, "yarn.lock", CLASSIC)
    _, items = _extract(tmp_path)
    assert _locked(items) == {
        ("packages/app/package.json", "a"): ("1.0.0", "yarn.lock"),
        ("tools/x/package.json", "a"): (None, None),
    }


def test_yarn_berry_members_come_from_workspace_resolutions(tmp_path: Path) -> None:
    """Berry lists its workspaces; their rows, patches and aliases resolve through it."""
    lock = (FIXTURES / "yarn_lock" / "berry-workspaces-patches" / "yarn.lock").read_text()
    _write(tmp_path, "yarn.lock", lock)
    _write(tmp_path, "package.json", json.dumps({"name": "monorepo"}))
    manifest = {
        "name": "@acme/app",
        "dependencies": {
            "react": "^18.2.0",
            "resolve": "npm:^1.22.0",
            "lodash-patched": (
                "patch:lodash@npm%3A^4.17.21#~/.yarn/patches/lodash-npm-4.17.21-6382451519.patch"
            ),
            "string-width-cjs": "npm:string-width@^4.2.0",
            "left-pad": "^1.3.0",
        },
    }
    _write(tmp_path, "packages/app/package.json", json.dumps(manifest))
    repo, items = _extract(tmp_path)
    assert repo.problems == []
    assert _locked(items) == {
        ("packages/app/package.json", "react"): ("18.3.1", "yarn.lock"),
        ("packages/app/package.json", "resolve"): ("1.22.8", "yarn.lock"),
        ("packages/app/package.json", "lodash-patched"): ("4.17.21", "yarn.lock"),
        ("packages/app/package.json", "string-width-cjs"): ("4.2.3", "yarn.lock"),
        ("packages/app/package.json", "left-pad"): (None, None),
    }


def test_pnpm_catalog_rows_say_where_their_range_came_from(tmp_path: Path) -> None:
    """A `catalog:` row is current from pnpm-lock.yaml and its reason names the catalog."""
    shutil.copytree(FIXTURES / "pnpm_lock" / "v9-catalogs", tmp_path, dirs_exist_ok=True)
    (tmp_path / "SOURCE.txt").unlink()
    packages = {"react": {"17.0.2": "2021-03-22T00:00:00Z", "18.3.1": "2024-04-26T00:00:00Z"}}
    repo = _scan([tmp_path], FakeFetch(packages)).repos[0]
    rows = {
        (r.dependency.file, r.dependency.name): (
            r.finding.current,
            r.finding.current_source,
            r.finding.reason,
        )
        for r in repo.rows
    }
    assert rows[("packages/new/package.json", "react")] == (
        "18.3.1",
        "lockfile",
        "range ^18.2.0 from the default catalog in pnpm-workspace.yaml, line 4",
    )
    current, source, reason = rows[("packages/old/package.json", "react")]
    assert (current, source) == ("17.0.2", "lockfile")
    assert reason is not None
    assert reason.endswith("range ^17.0.2 from catalog 'legacy' in pnpm-workspace.yaml, line 7")
    assert rows[("packages/old/package.json", "vue")][1] is None


def test_pnpm_member_row_never_takes_another_importers_version(tmp_path: Path) -> None:
    """A member's declaration its importer does not lock is unlocked, not the root's version."""
    lock = (
        "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n"
        "      a:\n        specifier: ^1.0.0\n        version: 1.0.0\n"
        "  packages/app: {}\n"
    )
    _write(tmp_path, "pnpm-lock.yaml", lock)
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
    _write(tmp_path, "packages/app/package.json", json.dumps({"peerDependencies": {"a": "^1"}}))
    _, items = _extract(tmp_path)
    assert _locked(items) == {
        ("package.json", "a"): ("1.0.0", "pnpm-lock.yaml"),
        ("packages/app/package.json", "a"): (None, None),
    }


def test_pnpm_member_target_is_scanned_from_its_workspace_root(tmp_path: Path) -> None:
    """`run packages/new` in a pnpm workspace: the root pnpm-lock.yaml and catalog apply."""
    shutil.copytree(FIXTURES / "pnpm_lock" / "v9-catalogs", tmp_path, dirs_exist_ok=True)
    (tmp_path / ".git").mkdir()
    packages = {"react": {"17.0.2": "2021-03-22T00:00:00Z", "18.3.1": "2024-04-26T00:00:00Z"}}
    [repo] = _scan([tmp_path / "packages" / "new"], FakeFetch(packages)).repos
    assert repo.root == str(tmp_path)
    assert [(r.dependency.file, r.finding.current, r.lock_file) for r in repo.rows] == [
        ("packages/new/package.json", "18.3.1", "pnpm-lock.yaml")
    ]
    _write(tmp_path, "pnpm-workspace.yaml", "packages:\n  - 'packages/*'\n  - '!packages/new'\n")
    [excluded] = _scan([tmp_path / "packages" / "new"], FakeFetch(packages)).repos
    assert excluded.root == str(tmp_path / "packages" / "new")


def test_only_the_nearest_pnpm_workspace_yaml_decides_membership(tmp_path: Path) -> None:
    """A directory with its own pnpm-workspace.yaml is a root; a nearer file's `[]` wins.

    pnpm takes the nearest pnpm-workspace.yaml at or above a project as its workspace root
    (prometheus' web/ui/react-app keeps `packages: []` below a root whose globs are others).
    """
    _write(tmp_path, "pnpm-workspace.yaml", "packages:\n  - 'apps/**'\n")
    _write(tmp_path, "package.json", json.dumps({"name": "root", "private": True}))
    (tmp_path / ".git").mkdir()
    own = {"dependencies": {"react": "^18.2.0"}}
    _write(tmp_path, "apps/legacy/package.json", json.dumps(own))
    _write(tmp_path, "apps/legacy/pnpm-workspace.yaml", "packages: []\n")
    _write(tmp_path, "apps/legacy/sub/package.json", json.dumps(own))
    _write(tmp_path, "apps/web/package.json", json.dumps(own))
    packages = {"react": {"18.3.1": "2024-04-26T00:00:00Z"}}
    roots = {
        name: _scan([tmp_path / "apps" / name], FakeFetch(packages)).repos[0].root
        for name in ("legacy", "legacy/sub", "web")
    }
    assert roots == {
        "legacy": str(tmp_path / "apps" / "legacy"),
        "legacy/sub": str(tmp_path / "apps" / "legacy" / "sub"),
        "web": str(tmp_path),
    }


def test_bun_lock_member_gets_its_own_nested_version(tmp_path: Path) -> None:
    """bun.lock's `@acme/app/react` is the member's react; the root's is node_modules/react."""
    lock = (FIXTURES / "bun_lock" / "workspaces-trailing-commas" / "bun.lock").read_text()
    _write(tmp_path, "bun.lock", lock)
    _write(tmp_path, "package.json", json.dumps({"devDependencies": {"typescript": "^5.4.0"}}))
    app = {"name": "@acme/app", "dependencies": {"react": "^17.0.0"}}
    _write(tmp_path, "packages/app/package.json", json.dumps(app))
    _, items = _extract(tmp_path)
    assert _locked(items) == {
        ("package.json", "typescript"): ("5.4.5", "bun.lock"),
        ("packages/app/package.json", "react"): ("17.0.2", "bun.lock"),
    }


class _WithNode(FakeFetch):
    """npm packuments, and Node.js's release index (``index.json``) for the ``node`` rows."""

    async def __call__(self, url: str, **kwargs: Any) -> FetchResponse:
        if url.endswith("/index.json"):
            self.calls[url] += 1
            index = [
                {"version": "v22.12.0", "date": "2024-12-03", "lts": "Jod"},
                {"version": "v20.18.1", "date": "2024-11-20", "lts": "Iron"},
                {"version": "v18.20.5", "date": "2024-11-12", "lts": "Hydrogen"},
            ]
            return FetchResponse(200, url, (), json.dumps(index).encode(), NOW)
        return await super().__call__(url, **kwargs)


def test_package_manager_and_engines_rows_are_looked_up(tmp_path: Path) -> None:
    """Package managers are npm packages (yarn 2+: @yarnpkg/cli-dist); node is Node's releases.

    ``@yarnpkg/cli`` lacks 4.1.0 (as on npm): yarn is found in the bundle Corepack downloads.
    """
    manifest = {
        "packageManager": "yarn@4.1.0+sha224.0123",
        "engines": {"node": "^20", "npm": ">=1.0.0"},
        "volta": {"node": "18.20.5"},
    }
    _write(tmp_path, "package.json", json.dumps(manifest))
    packages = {
        "@yarnpkg/cli-dist": {"4.1.0": "2024-01-01T00:00:00Z", "4.5.0": "2024-09-01T00:00:00Z"},
        "@yarnpkg/cli": {"4.0.2": "2023-11-01T00:00:00Z", "4.5.0": "2024-09-01T00:00:00Z"},
        "npm": {"1.0.0": "2020-01-01T00:00:00Z", "10.8.2": "2024-07-01T00:00:00Z"},
    }
    fetch = _WithNode(packages)
    repo = _scan([tmp_path], fetch).repos[0]
    rows = [
        (
            r.dependency.dep_type,
            r.dependency.datasource,
            r.dependency.package_name,
            r.finding.status,
            r.finding.current,
            r.finding.latest,
        )
        for r in repo.rows
    ]
    assert rows == [
        ("packageManager", "npm", "@yarnpkg/cli-dist", "outdated", "4.1.0", "4.5.0"),
        ("engines", "node", "node", "outdated", "20.18.1", "22.12.0"),
        ("engines", "npm", "npm", "up-to-date", "10.8.2", "10.8.2"),
        ("volta", "node", "node", "outdated", "18.20.5", "22.12.0"),
    ]
    # One lookup of Node's index for both node rows, never an npm packument named "node".
    assert [url for url in fetch.calls if "node" in url.rsplit("/", 1)[-1]] == []
    assert sum(n for url, n in fetch.calls.items() if url.endswith("/index.json")) == 1


def test_lockfile_outside_the_range_is_not_current(tmp_path: Path) -> None:
    """A yarn.lock out of sync with package.json gives no current; the row says why."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "^2.0.0"}}))
    _write(tmp_path, "yarn.lock", '# yarn lockfile v1\n\n"a@^2.0.0":\n  version "1.0.0"\n')
    finding = _scan([tmp_path], FakeFetch(PKGS)).repos[0].rows[0].finding
    assert (finding.current, finding.current_source) == ("2.0.0", "range")
    assert finding.reason == "yarn.lock locks a 1.0.0, outside ^2.0.0: current from the range"


# --- An outside trial: bad entries, stale lockfiles, several lockfiles in one directory --------

PNPM_BAD_VERSION = (
    "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n"
    "      a:\n        specifier: ^1.0.0\n        version: 12345\n"
)
BUN_STRING_ENTRY = (
    '{\n  "lockfileVersion": 1,\n  "workspaces": {"": {"dependencies": {"a": "^1.0.0"}}},\n'
    '  "packages": {\n    "a": "a@1.0.0",\n  }\n}\n'
)
BERRY_MAPPING_VERSION = (
    "__metadata:\n  version: 8\n  cacheKey: 10c0\n\n"
    '"a@npm:^1.0.0":\n  version: {a: 1}\n  resolution: "a@npm:1.0.0"\n'
)


@pytest.mark.parametrize(
    ("lock_name", "text", "line", "why"),
    [
        ("pnpm-lock.yaml", PNPM_BAD_VERSION, 5, "`version` must be a string, got the number 12345"),
        ("bun.lock", BUN_STRING_ENTRY, 5, "expected an array"),
        ("yarn.lock", BERRY_MAPPING_VERSION, 5, "`version` must be a string, got a mapping"),
    ],
    ids=["pnpm-number", "bun-string", "berry-mapping"],
)
def test_an_unusable_entry_is_a_problem_and_its_row_says_so(
    tmp_path: Path, lock_name: str, text: str, line: int, why: str
) -> None:
    """A lockfile that parses but whose entry gives no version: a problem, and a row note."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
    _write(tmp_path, lock_name, text)
    repo, items = _extract(tmp_path)
    errors = [(p.file, p.line, p.severity) for p in repo.problems if why in p.message]
    assert errors == [(lock_name, line, "error")], repo.problems
    [item] = items
    assert (item.locked, item.note) == (
        None,
        f"from the range: its entry in {lock_name} is unusable",
    )
    finding = _scan([tmp_path], FakeFetch(PKGS)).repos[0].rows[0].finding
    assert (finding.current, finding.current_source) == ("1.0.0", "range")
    assert finding.reason == f"from the range: its entry in {lock_name} is unusable"


def test_a_classic_entry_without_version_is_unusable(tmp_path: Path) -> None:
    """Yarn classic: an entry with `resolved` but no `version` is a problem at its line."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
    lock = '# yarn lockfile v1\n\n"a@^1.0.0":\n  resolved "https://r/a/-/a-1.0.0.tgz"\n'
    _write(tmp_path, "yarn.lock", lock)
    repo, items = _extract(tmp_path)
    assert [(p.line, p.message) for p in repo.problems] == [
        (3, "entry a@^1.0.0: no `version`; current from the range")
    ]
    assert items[0].note == "from the range: its entry in yarn.lock is unusable"


def test_berry_lock_that_is_not_yaml_reads_as_unread(tmp_path: Path) -> None:
    """Invalid YAML: the YAML error, the unread-lockfile note, and no bogus version warning."""
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "^1.0.0"}}))
    _write(tmp_path, "yarn.lock", '__metadata:\n  version: 8\n\n"a@npm:^1.0.0":\n  version: [1\n')
    repo, items = _extract(tmp_path)
    messages = [p.message for p in repo.problems]
    assert len(messages) == 1, messages
    assert "invalid YAML" in messages[0]
    assert items[0].note == "from the range: yarn.lock not read"


PACKAGE_LOCK_WITHOUT_A = json.dumps(
    {
        "lockfileVersion": 3,
        "packages": {"": {"dependencies": {"a": "^1.0.0"}}, "node_modules/b": {"version": "1.0.0"}},
    }
)
PNPM_WITHOUT_A = (
    "lockfileVersion: '9.0'\nimporters:\n  .:\n    dependencies:\n"
    "      b:\n        specifier: ^1.0.0\n        version: 1.0.0\n"
)
BERRY_OTHER_RANGE = (
    '__metadata:\n  version: 8\n\n"a@npm:^1.0.0":\n  version: 1.0.0\n  resolution: "a@npm:1.0.0"\n'
)


@pytest.mark.parametrize(
    ("lock_name", "text", "declared"),
    [
        ("yarn.lock", '# yarn lockfile v1\n\n"a@^1.0.0":\n  version "1.0.0"\n', "^1.0.1"),
        ("yarn.lock", BERRY_OTHER_RANGE, "^1.0.1"),
        ("pnpm-lock.yaml", PNPM_WITHOUT_A, "^1.0.0"),
        ("package-lock.json", PACKAGE_LOCK_WITHOUT_A, "^1.0.0"),
        ("bun.lock", '{"lockfileVersion": 1, "packages": {}}', "^1.0.0"),
    ],
    ids=["yarn-classic", "yarn-berry", "pnpm-9", "package-lock", "bun"],
)
def test_a_dependency_missing_from_its_lockfile_says_so(
    tmp_path: Path, lock_name: str, text: str, declared: str
) -> None:
    """A lockfile that covers package.json but lacks a row's declaration: the row says so."""
    manifest = {"dependencies": {"a": declared}, "peerDependencies": {"c": "^1.0.0"}}
    _write(tmp_path, "package.json", json.dumps(manifest))
    _write(tmp_path, lock_name, text)
    repo, items = _extract(tmp_path)
    assert repo.problems == []
    notes = {item.dep.name: (item.locked, item.note) for item in items}
    expected = f"not in {lock_name}: current from the range; the lockfile is out of date"
    assert notes == {"a": (None, expected), "c": (None, None)}  # a peer is not locked


def _three_locks(tmp_path: Path, manifest: dict[str, Any]) -> None:
    _write(tmp_path, "package.json", json.dumps({"dependencies": {"a": "^1.0.0"}, **manifest}))
    lock = {"lockfileVersion": 3, "packages": {"node_modules/a": {"version": "1.0.0"}}}
    _write(tmp_path, "package-lock.json", json.dumps(lock))
    _write(tmp_path, "yarn.lock", '# yarn lockfile v1\n\n"a@^1.0.0":\n  version "1.0.1"\n')
    pnpm = PNPM_WITHOUT_A.replace("b:", "a:").replace("version: 1.0.0", "version: 1.0.2")
    _write(tmp_path, "pnpm-lock.yaml", pnpm)


def test_package_manager_chooses_among_several_lockfiles(tmp_path: Path) -> None:
    """`packageManager: pnpm@9.1.0` beside three lockfiles: pnpm-lock.yaml gives current."""
    _three_locks(tmp_path, {"packageManager": "pnpm@9.1.0"})
    repo, items = _extract(tmp_path)
    assert _locked(items)[("package.json", "a")] == ("1.0.2", "pnpm-lock.yaml")
    assert [(p.file, p.severity, p.message) for p in repo.problems] == [
        (
            "pnpm-lock.yaml",
            "warning",
            (
                "several lockfiles cover package.json: pnpm-lock.yaml is read "
                "(`packageManager` names pnpm), package-lock.json, yarn.lock ignored"
            ),
        )
    ]


def test_several_lockfiles_without_package_manager_keep_the_order_and_warn(
    tmp_path: Path,
) -> None:
    """No `packageManager` (or one naming a tool without a lockfile here): package-lock.json."""
    for manifest in ({}, {"packageManager": "bun@1.1.0"}):
        _three_locks(tmp_path, manifest)
        repo, items = _extract(tmp_path)
        assert _locked(items)[("package.json", "a")] == ("1.0.0", "package-lock.json")
        assert [(p.file, p.severity, p.message) for p in repo.problems] == [
            (
                "package-lock.json",
                "warning",
                (
                    "several lockfiles cover package.json: package-lock.json is read "
                    "(the first in order), yarn.lock, pnpm-lock.yaml ignored"
                ),
            )
        ]


def test_pnpm_workspace_overrides_are_rows_of_that_file(tmp_path: Path) -> None:
    """The `overrides:` of pnpm-workspace.yaml (pnpm 10): `pnpm.overrides` rows at their lines."""
    _write(tmp_path, "package.json", json.dumps({"name": "root"}))
    workspace = (
        "packages:\n  - 'packages/*'\noverrides:\n  a: ^1.0.0\n  'b>c': 2.1.0\n"
        "  d: '-'\n  e: {x: 1}\n"
    )
    _write(tmp_path, "pnpm-workspace.yaml", workspace)
    _write(tmp_path, "packages/app/package.json", json.dumps({"name": "app"}))
    repo, items = _extract(tmp_path)
    rows = [
        (e.dep.file, e.dep.line, e.dep.dep_type, e.dep.name, e.dep.constraint, e.dep.skip_reason)
        for e in items
    ]
    assert rows == [
        ("pnpm-workspace.yaml", 4, "pnpm.overrides", "a", "^1.0.0", None),
        ("pnpm-workspace.yaml", 5, "pnpm.overrides", "c", "2.1.0", None),
        ("pnpm-workspace.yaml", 6, "pnpm.overrides", "d", None, "removes the dependency"),
    ]
    assert [(p.file, p.line, p.severity, p.message) for p in repo.problems] == [
        ("pnpm-workspace.yaml", 7, "warning", "override 'e' must be a string, got a mapping")
    ]
    finding = _scan([tmp_path], FakeFetch(PKGS)).repos[0].rows[0].finding
    assert (finding.current, finding.current_source) == ("1.0.0", "range")


# --- The corpus: current versions are the lockfiles' ----------------------------------------


def _copy_corpus(name: str, tmp_path: Path) -> Path:
    source = CORPUS / name
    if not source.is_dir():
        pytest.skip("corpus absent")
    root = tmp_path / name
    shutil.copytree(source, root)
    (root / ".git").mkdir()
    return root


def _classic_entries(text: str) -> dict[str, str]:
    """An independent reading of a yarn v1 lockfile: each key's descriptors to its version."""
    found: dict[str, str] = {}
    for block in text.split("\n\n"):
        header = re.search(r"^([^\s#].*):$", block, re.MULTILINE)
        version = re.search(r'^  version "([^"]+)"$', block, re.MULTILINE)
        if header and version:
            for key in header.group(1).split(", "):
                found[key.strip('"')] = version.group(1)
    return found


def test_excalidraw_rows_take_the_yarn_lock_versions(tmp_path: Path) -> None:
    """Every excalidraw row a yarn.lock covers has the version that lock gives its range."""
    root = _copy_corpus("excalidraw__excalidraw", tmp_path)
    repo, items = _extract(root)
    assert not [p for p in repo.problems if "lock" in p.file]
    assert not [e for e in items if e.note and "not read" in e.note]
    locks = {
        rel: _classic_entries((root / rel).read_text(encoding="utf-8"))
        for rel in ("yarn.lock", "dev-docs/yarn.lock")
    }
    checked = 0
    for item in items:
        dep = item.dep
        if (
            dep.datasource != "npm"
            or dep.skip_reason
            or dep.dep_type
            not in {
                "dependencies",
                "devDependencies",
            }
        ):
            continue
        assert item.lock_file in locks, (dep.file, dep.name)
        assert item.locked == locks[item.lock_file][f"{dep.name}@{dep.declared}"], dep.name
        checked += 1
    assert checked > 100


LOCKED_TYPES = frozenset({"dependencies", "devDependencies", "optionalDependencies"})


def test_prometheus_rows_take_the_pnpm_lock_versions(tmp_path: Path) -> None:
    """Every prometheus web/ui row has the version its importer in pnpm-lock.yaml records."""
    root = _copy_corpus("prometheus__prometheus", tmp_path)
    repo, items = _extract(root)
    assert not [p for p in repo.problems if "lock" in p.file]
    assert not [e for e in items if e.note and "not read" in e.note]
    checked = 0
    loaded: dict[str, dict[str, Any]] = {}
    for item in items:
        dep = item.dep
        if dep.datasource != "npm" or dep.skip_reason or dep.dep_type not in LOCKED_TYPES:
            continue
        assert item.lock_file is not None, (dep.file, dep.name)
        lock_dir = Path(item.lock_file).parent
        if item.lock_file not in loaded:
            text = (root / item.lock_file).read_text(encoding="utf-8")
            loaded[item.lock_file] = yaml.load(text, Loader=yaml.CSafeLoader)
        data = loaded[item.lock_file]
        member = Path(dep.file).parent.relative_to(lock_dir).as_posix()
        importer = data["importers"][member]
        entry = importer.get(dep.dep_type, {})[dep.name]
        assert item.locked == entry["version"].split("(")[0], dep.name
        checked += 1
    assert checked > 150
    # pnpm 10 keeps react-app's overrides in its pnpm-workspace.yaml: rows of that file.
    overrides = [e.dep for e in items if e.dep.dep_type == "pnpm.overrides"]
    assert overrides
    assert {dep.file for dep in overrides} == {"web/ui/react-app/pnpm-workspace.yaml"}


# --- Hostile lockfiles: a clear problem or a bounded reading, never a crash or a hang -------

TEN_MB = 10 * 1024 * 1024


def _no_read(path: str) -> str:
    raise ManifestError("lockfiles have no includes", file=path)


@pytest.mark.parametrize(
    ("manager_id", "path", "text", "expected"),
    [
        ("yarn_lock", "yarn.lock", "a" * TEN_MB, "expected an entry"),
        ("yarn_lock", "yarn.lock", "__metadata:\n  version: 8\nx: " + "[" * 3000, "invalid YAML"),
        ("pnpm_lock", "pnpm-lock.yaml", "a: " + "[" * TEN_MB, "invalid YAML"),
        (
            "pnpm_lock",
            "pnpm-lock.yaml",
            "".join(f"{' ' * i}k{i}:\n" for i in range(1200)),
            "invalid YAML",
        ),
        ("bun_lock", "bun.lock", "[" * TEN_MB, "invalid JSON"),
        ("bun_lock", "bun.lock", '{"packages": {' + '"a": 1, ' * 1_000_000 + "}}", None),
    ],
    ids=["yarn-10mb-line", "berry-deep", "pnpm-10mb-flow", "pnpm-deep-block", "bun-10mb", "bun-1m"],
)
def test_hostile_lockfiles_end_as_problems(
    manager_id: str, path: str, text: str, expected: str | None
) -> None:
    """10 MB of brackets, deep nesting, a key repeated a million times: a problem or nothing."""
    result = MANAGERS[manager_id].extract(path, text, _no_read)
    messages = [p.message for p in result.problems]
    if expected is None:
        assert result.lockfile is not None
        assert result.lockfile.packages == ()
    else:
        assert any(expected in message for message in messages), messages


# --- The README says what the code does ----------------------------------------------------

README = Path(__file__).parents[1] / "README.md"


def test_readme_lists_every_manager_id_and_the_json_current_sources() -> None:
    """`--enabled-managers` names every manager; `currentSource`'s values are the JSON's."""
    text = README.read_text(encoding="utf-8")
    row = next(line for line in text.splitlines() if line.startswith("| `--enabled-managers"))
    listed = re.findall(r"`([a-z_]+)`", row.split("ids of the table below:", 1)[1].split(")")[0])
    assert listed == list(MANAGERS)
    sentence = re.search(r"`currentSource` spells ([^;]+);", text.replace("\n", " "))
    assert sentence is not None
    assert re.findall(r"`([a-z-]+)`", sentence.group(1)) == list(get_args(CurrentSource))
