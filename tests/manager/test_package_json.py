from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path

import pytest

from patchula.errors import ManifestError
from patchula.manager import package_json
from patchula.models import Dependency, ExtractResult, ManifestProblem

FIXTURES = Path(__file__).parents[1] / "fixtures" / "manifests" / "package_json"


def _no_read(path: str) -> str:
    raise ManifestError("package.json has no includes", file=path)


def _extract(case: str, path: str = "package.json") -> ExtractResult:
    text = (FIXTURES / case / "package.json").read_text(encoding="utf-8")
    return package_json.extract(path, text, _no_read)


def _by_name(result: ExtractResult) -> dict[str, Dependency]:
    return {dep.name: dep for dep in result.dependencies}


@pytest.mark.parametrize(
    ("path", "expected"),
    [
        ("package.json", True),
        ("web/ui/package.json", True),
        ("node_modules/react/package.json", False),
        ("package-lock.json", False),
        ("package.json.bak", False),
        ("mypackage.json", False),
    ],
)
def test_matches_by_basename_outside_node_modules(path: str, *, expected: bool) -> None:
    """Only files named package.json that are not inside node_modules match."""
    assert package_json.matches(path) is expected


def test_one_package_gives_one_row_with_every_field() -> None:
    """A single dependency becomes one row with file, line, names, ids, type and constraint."""
    result = _extract("one-package", "app/package.json")
    assert result.dependencies == (
        Dependency(
            manager="package_json",
            file="app/package.json",
            line=5,
            name="left-pad",
            package_name="left-pad",
            datasource="npm",
            versioning="npm",
            dep_type="dependencies",
            declared="^1.3.0",
            constraint="^1.3.0",
        ),
    )
    assert result.project_name == "one-package"
    assert result.problems == ()
    assert result.lockfile is None


def test_all_four_sections_are_read_and_a_name_in_two_sections_gives_two_rows() -> None:
    """Each section is its own dep_type, and react in two sections is reported twice."""
    result = _extract("all-sections")
    rows = [(dep.name, dep.dep_type, dep.constraint, dep.line) for dep in result.dependencies]
    assert rows == [
        ("react", "dependencies", "^18.3.1", 4),
        ("lodash", "dependencies", "4.17.21", 5),
        ("typescript", "devDependencies", "~5.4.0", 8),
        ("fsevents", "optionalDependencies", ">=2.3.0 <3", 11),
        ("react", "peerDependencies", ">=17", 14),
    ]
    assert result.project_name == "@acme/all-sections"


def test_npm_aliases_look_up_their_target_with_the_range_after_the_at() -> None:
    """The real ruff playground aliases resolve to the alias target and its range."""
    deps = _by_name(_extract("npm-alias"))
    typescript = deps["typescript"]
    assert typescript.package_name == "@typescript/typescript6"
    assert typescript.declared == "npm:@typescript/typescript6@^6.0.2"
    assert typescript.constraint == "^6.0.2"
    assert typescript.line == 39
    native = deps["@typescript/native"]
    assert (native.package_name, native.constraint, native.line) == ("typescript", "^7.0.2", 31)
    assert len(deps) == 17  # with engines.npm
    assert {dep.dep_type for dep in deps.values()} == {"devDependencies", "engines"}
    assert (deps["npm"].dep_type, deps["npm"].constraint, deps["npm"].line) == (
        "engines",
        ">=11.10.0",
        7,
    )


@pytest.mark.parametrize(
    ("spec", "package_name", "constraint"),
    [
        ("npm:foo", "foo", None),
        ("npm:@scope/foo", "@scope/foo", None),
        ("npm:foo@", "foo", None),
        ("npm:@scope/foo@~1.2", "@scope/foo", "~1.2"),
        ("npm:foo@latest", "foo", "latest"),
    ],
)
def test_alias_without_range_accepts_any_version(
    spec: str, package_name: str, constraint: str | None
) -> None:
    """An alias target without a range has no constraint; a range or tag after @ is kept."""
    assert package_json.classify("alias", spec) == (package_name, constraint, None)


@pytest.mark.parametrize(
    ("spec", "package_name", "constraint"),
    [
        ("npm:^1.2.3", "c", "^1.2.3"),
        ("npm:1.2.3", "c", "1.2.3"),
        ("npm:>=1.0.0 <2", "c", ">=1.0.0 <2"),
        ("npm:1.x || ^2.0.0-rc.1", "c", "1.x || ^2.0.0-rc.1"),
        ("npm:1.0.0 - 2.0.0", "c", "1.0.0 - 2.0.0"),
        ("npm:*", "c", "*"),
        # Names stay aliases, also when they start with a digit or look like `x`.
        ("npm:7zip-bin", "7zip-bin", None),
        ("npm:x", "x", None),
    ],
)
def test_npm_protocol_with_a_range_is_a_range_of_the_own_name(
    spec: str, package_name: str, constraint: str | None
) -> None:
    """`"c": "npm:^1.2.3"` (Yarn 2+/pnpm npm protocol) is the range ^1.2.3 of package c."""
    assert package_json.classify("c", spec) == (package_name, constraint, None)


def test_local_git_and_url_specs_are_skipped_with_a_reason() -> None:
    """file:, link:, workspace:, portal:, patch:, git, shorthand, URL and path specs are skipped."""
    deps = _extract("local-and-git-specs").dependencies
    reasons = {dep.name: dep.skip_reason for dep in deps}
    tagged = next(dep for dep in deps if dep.name == "git-https")
    assert (tagged.datasource, tagged.package_name, tagged.constraint) == (
        "github-tags",
        "acme/git-https",
        "v1.0.0",
    )
    assert reasons == {
        "local-file": "local file dependency",
        "linked": "linked local package",
        "in-workspace": "workspace protocol",
        "portal-pkg": "portal protocol",
        "patched": None,  # yarn's patch protocol: its base package (test_patch_is_its_base)
        "git-https": None,  # a GitHub tag: looked up on its tags (test_npm_git_run)
        "git-proto": "git dependency",
        "gh-prefix": "git dependency",
        "gh-shorthand": "git dependency (GitHub shorthand)",
        "bb": "git dependency",
        "gl": "git dependency",
        "tarball": "URL tarball dependency",
        "relative": "local path",
        "registry": None,
    }


@pytest.mark.parametrize(
    ("spec", "reason"),
    [
        (
            "jsr:@std/path@^1.0.0",
            "jsr: protocol: a JSR registry package (pnpm, yarn and deno read it; npm does not)",
        ),
        ("JSR:@std/path", "jsr: protocol: a JSR registry package (pnpm, yarn and deno read it;"),
        ("exec:./generate.js", "exec: protocol: yarn's exec protocol"),
        ("ftp://example.com/a-1.0.0.tgz", "ftp: protocol: not a version on the npm registry"),
        ("svn:trunk", "svn: protocol: not a version on the npm registry"),
        ("C:\\pkgs\\a", "local path"),
        ("vendor/pkgs/a", "local path"),
        ("a-1.0.0.tgz", "local path"),
        ("git+ssh://git@github.com/acme/a.git", "git dependency"),
        ("acme/a#semver:^1.0", "git dependency (GitHub shorthand)"),
    ],
)
def test_specs_npm_does_not_resolve_from_the_registry_are_skipped(spec: str, reason: str) -> None:
    """A protocol or path spec is skipped naming what it is, never looked up as the alias name.

    npm-package-arg reads ``<letters>:`` as a URL and installs only git and http(s) ones
    (``jsr:`` is pnpm's, yarn's and deno's); a spec with a slash is a hosted git shorthand or a
    directory.
    """
    package_name, constraint, skip_reason = package_json.classify("a4", spec)
    assert (package_name, constraint) == ("a4", None)
    assert skip_reason is not None
    assert skip_reason.startswith(reason)


def test_a_jsr_dependency_is_a_skipped_row_of_its_manifest() -> None:
    """``"a4": "jsr:@std/path@^1.0.0"`` gives a skipped row keeping the value as written."""
    text = json.dumps({"dependencies": {"a4": "jsr:@std/path@^1.0.0", "b": "^1.0.0"}})
    deps = _by_name(package_json.extract("package.json", text, _no_read))
    assert (deps["a4"].declared, deps["a4"].constraint) == ("jsr:@std/path@^1.0.0", None)
    assert deps["a4"].skip_reason is not None
    assert deps["a4"].skip_reason.startswith("jsr: protocol")
    assert (deps["b"].constraint, deps["b"].skip_reason) == ("^1.0.0", None)


def test_skipped_specs_keep_declared_and_have_no_constraint() -> None:
    """A skipped row still shows the value as written and carries no constraint."""
    deps = _by_name(_extract("local-and-git-specs"))
    assert deps["gh-prefix"].declared == "github:acme/gh-prefix#main"
    assert deps["gh-prefix"].constraint is None
    assert deps["gh-prefix"].line == 11


def test_workspace_protocol_from_a_real_pnpm_member_is_skipped() -> None:
    """Prometheus' codemirror-promql workspace:* dependency is skipped, the rest are kept."""
    result = _extract("workspace-protocol")
    deps = [dep for dep in result.dependencies if dep.skip_reason is not None]
    assert [(dep.name, dep.skip_reason, dep.line) for dep in deps] == [
        ("@prometheus-io/lezer-promql", "workspace protocol", 32),
    ]
    (node,) = [dep for dep in result.dependencies if dep.dep_type == "engines"]
    # engines.node is looked up on Node.js's release index, with npm's range rules.
    assert (node.datasource, node.package_name, node.constraint, node.line) == (
        "node",
        "node",
        (node.declared or "").strip(),
        69,
    )
    peers = [dep for dep in result.dependencies if dep.dep_type == "peerDependencies"]
    assert [(dep.name, dep.constraint) for dep in peers][:2] == [
        ("@codemirror/autocomplete", "^6.4.0"),
        ("@codemirror/language", "^6.3.0"),
    ]
    assert len(result.dependencies) == 27  # with engines.node
    assert result.project_name == "@prometheus-io/codemirror-promql"


def test_dist_tags_and_any_version_values() -> None:
    """Dist-tags stay the constraint, "" and "*" mean any version, and ranges pass through."""
    constraints = {dep.name: dep.constraint for dep in _extract("dist-tags").dependencies}
    assert constraints == {
        "tagged-latest": "latest",
        "tagged-next": "next",
        "tagged-beta": "beta",
        "empty-string": "*",
        "star": "*",
        "x-range": "x",
        "v-prefixed": "v1.2.3",
        "hyphen-range": "1.2.3 - 2.3.4",
        "or-range": "^1.0.0 || ^2.0.0",
    }
    deps = _by_name(_extract("dist-tags"))
    assert deps["empty-string"].declared == ""
    assert deps["tagged-next"].dep_type == "dependencies"
    assert deps["tagged-next"].skip_reason is None


def test_real_asdf_docs_manifest_without_a_name() -> None:
    """The asdf docs package.json has three devDependencies and no project name."""
    result = _extract("real-asdf-docs")
    rows = [(dep.name, dep.constraint, dep.line) for dep in result.dependencies]
    assert rows == [
        ("@types/node", "^26.1.0", 10),
        ("prettier", "^3.9.4", 11),
        ("vitepress", "^1.6.4", 12),
    ]
    assert result.project_name is None


def test_wrong_types_are_problems_and_good_entries_survive() -> None:
    """A non-string name is an error; a non-object section or non-string version is dropped.

    npm warns and drops those entries and installs the rest, so they are warnings.
    """
    result = _extract("wrong-types")
    dropped = "ignored, as npm does"
    assert [(p.line, p.message, p.severity) for p in result.problems] == [
        (2, "`name` must be a string, got a number", "error"),
        (3, f"`dependencies` must be an object, got an array; {dropped}", "warning"),
        (
            5,
            f"version of 'numeric' in `devDependencies` must be a string, got a number; {dropped}",
            "warning",
        ),
        (
            7,
            f"version of 'nothing' in `devDependencies` must be a string, got null; {dropped}",
            "warning",
        ),
        (9, f"`peerDependencies` must be an object, got a string; {dropped}", "warning"),
    ]
    assert [(dep.name, dep.line) for dep in result.dependencies] == [("fine", 6)]
    assert result.project_name is None


def test_bad_json_is_a_problem_at_the_decoder_line() -> None:
    """A missing comma is reported at the line json points to, and nothing is extracted."""
    result = _extract("not-json")
    assert result.problems == (
        ManifestProblem("package.json", 5, "invalid JSON: Expecting ',' delimiter at column 5"),
    )
    assert result.dependencies == ()


def test_empty_file_is_a_problem() -> None:
    """A 0-byte package.json is a problem on line 1, not a crash."""
    result = _extract("empty")
    assert result.problems == (
        ManifestProblem("package.json", 1, "empty file; expected a JSON object"),
    )


def test_top_level_array_is_a_problem() -> None:
    """A JSON document that is not an object is a problem."""
    result = _extract("not-an-object")
    assert [(p.line, p.message) for p in result.problems] == [
        (1, "expected a JSON object at the top level, got an array")
    ]


def test_nul_characters_are_a_problem_at_their_line() -> None:
    """Text holding NUL characters is reported as not a text manifest."""
    result = _extract("nul-bytes")
    assert [(p.line, p.message) for p in result.problems] == [
        (3, "file contains NUL characters; not a text manifest")
    ]
    assert result.dependencies == ()


@pytest.mark.parametrize(
    "text",
    ["\ufffd\ufffd\x01garbage", "[" * 100_000, "{} trailing", '{"dependencies": {"a": "^1"'],
)
def test_garbage_text_is_a_problem_not_an_exception(text: str) -> None:
    """Random, deeply nested or truncated text yields exactly one problem."""
    result = package_json.extract("package.json", text, _no_read)
    assert len(result.problems) == 1
    assert result.problems[0].message.startswith("invalid JSON")
    assert result.dependencies == ()


def test_byte_order_mark_is_ignored() -> None:
    """A leading UTF-8 byte-order mark does not stop parsing and keeps line numbers."""
    text = '\ufeff{\n  "dependencies": {\n    "a": "^1.0.0"\n  }\n}\n'
    result = package_json.extract("package.json", text, _no_read)
    assert [(dep.name, dep.line) for dep in result.dependencies] == [("a", 3)]
    assert result.problems == ()


PNPM_CATALOGS = Path(__file__).parents[1] / "fixtures" / "manifests" / "pnpm_lock" / "v9-catalogs"


def _reader(root: Path) -> Callable[[str], str]:
    def read(path: str) -> str:
        file = root / path
        if not file.is_file():
            raise ManifestError("file not found", file=path)
        return file.read_text(encoding="utf-8")

    return read


def test_catalog_specs_take_their_range_from_pnpm_workspace_yaml_and_say_so() -> None:
    """`catalog:` and `catalog:legacy` read the nearest pnpm-workspace.yaml; a miss is skipped."""
    read = _reader(PNPM_CATALOGS)
    new = package_json.extract("packages/new/package.json", read("packages/new/package.json"), read)
    (react,) = new.dependencies
    assert (react.declared, react.constraint, react.skip_reason) == ("catalog:", "^18.2.0", None)
    assert react.note == "range ^18.2.0 from the default catalog in pnpm-workspace.yaml, line 4"
    old = package_json.extract("packages/old/package.json", read("packages/old/package.json"), read)
    legacy, vue = old.dependencies
    assert (legacy.declared, legacy.constraint) == ("catalog:legacy", "^17.0.2")
    assert legacy.note == "range ^17.0.2 from catalog 'legacy' in pnpm-workspace.yaml, line 7"
    assert (vue.constraint, vue.note) == (None, None)
    assert vue.skip_reason == "catalog: vue is not in the default catalog of pnpm-workspace.yaml"


def test_catalog_without_a_workspace_file_is_skipped_with_the_reason() -> None:
    """No pnpm-workspace.yaml above the manifest: the row is skipped, never looked up."""
    text = '{"dependencies": {"react": "catalog:"}}'
    (react,) = package_json.extract("apps/web/package.json", text, _no_read).dependencies
    assert react.skip_reason is not None
    assert "catalog:" in react.skip_reason


def test_bun_catalogs_in_the_root_package_json() -> None:
    """The bun runtime keeps catalogs in the root package.json (in `workspaces` or at the top)."""
    files = {
        "package.json": json.dumps(
            {
                "workspaces": {"packages": ["apps/*"], "catalog": {"react": "^19.0.0"}},
                "catalogs": {"testing": {"jest": "^30.0.0"}},
            }
        ),
        "apps/web/package.json": json.dumps(
            {"dependencies": {"react": "catalog:"}, "devDependencies": {"jest": "catalog:testing"}}
        ),
    }

    def read(path: str) -> str:
        if path not in files:
            raise ManifestError("file not found", file=path)
        return files[path]

    react, jest = package_json.extract(
        "apps/web/package.json", files["apps/web/package.json"], read
    ).dependencies
    assert (react.constraint, react.note) == (
        "^19.0.0",
        "range ^19.0.0 from the default catalog in package.json",
    )
    assert (jest.constraint, jest.note) == (
        "^30.0.0",
        "range ^30.0.0 from catalog 'testing' in package.json",
    )


def test_catalog_in_an_unreadable_workspace_file_names_it() -> None:
    """A broken pnpm-workspace.yaml is named in the skip reason of the rows that need it."""

    def read(path: str) -> str:
        if path == "pnpm-workspace.yaml":
            return "catalog: [unclosed\n"
        raise ManifestError("file not found", file=path)

    (react,) = package_json.extract(
        "a/package.json", '{"dependencies": {"r": "catalog:"}}', read
    ).dependencies
    assert react.skip_reason is not None
    assert react.skip_reason.startswith("catalog: pnpm-workspace.yaml not read (invalid YAML")


def test_patch_protocol_is_its_base_package_and_range() -> None:
    """`patch:a@npm%3A^1.2#./a.patch` is a row for a with range ^1.2 (yarn's patch protocol)."""
    (dep,) = package_json.extract(
        "package.json",
        '{"dependencies": {"lodash": "patch:lodash@npm%3A^4.17.21#~/.yarn/patches/l.patch"}}',
        _no_read,
    ).dependencies
    assert (dep.package_name, dep.constraint, dep.skip_reason) == ("lodash", "^4.17.21", None)


def test_renovate_extra_types_have_their_own_rows() -> None:
    """packageManager, engines, volta, overrides, resolutions and pnpm.overrides are rows."""
    result = _extract("extra-types")
    assert result.problems == ()
    # Node.js itself is looked up on its release index; the package managers are npm packages.
    assert {d.datasource for d in result.dependencies if d.name == "node"} == {"node"}
    rows = [
        (d.dep_type, d.name, d.package_name, d.constraint, d.skip_reason, d.line)
        for d in result.dependencies
        if d.dep_type != "dependencies"
    ]
    assert rows == [
        ("packageManager", "pnpm", "pnpm", "9.1.0", None, 3),
        ("engines", "node", "node", ">=18.12", None, 5),
        ("engines", "npm", "npm", ">=9", None, 6),
        ("engines", "pnpm", "pnpm", "^9.1.0", None, 7),
        ("engines", "yarn", "@yarnpkg/cli-dist", ">=4.0.0", None, 8),
        ("engines", "vscode", "vscode", None, "engine 'vscode': not an npm package", 9),
        ("volta", "node", "node", "20.11.1", None, 12),
        ("volta", "yarn", "yarn", "1.22.22", None, 13),
        ("overrides", "semver", "semver", "7.5.4", None, 19),
        ("overrides", "@babel/core", "@babel/core", "7.24.0", None, 20),
        ("overrides", "foo", "foo", "1.2.0", None, 22),
        ("overrides", "bar", "bar", "2.0.0", None, 23),
        ("overrides", "baz", "baz", None, "refers to the root's declaration of foo", 25),
        ("resolutions", "strip-ansi", "strip-ansi", "6.0.1", None, 28),
        ("resolutions", "@types/react", "@types/react", "18.2.0", None, 29),
        ("resolutions", "terser", "terser", "5.31.0", None, 30),
        ("pnpm.overrides", "qux", "qux", "^3.0.0", None, 34),
        ("pnpm.overrides", "child", "child", "2.1.0", None, 35),
        ("pnpm.overrides", "unwanted", "unwanted", None, "removes the dependency", 36),
    ]


@pytest.mark.parametrize(
    ("value", "package", "constraint", "reason"),
    [
        ("yarn@1.22.22", "yarn", "1.22.22", None),
        ("yarn@4.5.0+sha224.abc", "@yarnpkg/cli-dist", "4.5.0", None),
        ("npm@10.8.2", "npm", "10.8.2", None),
        ("yarn@https://example.com/yarn-4.tgz", "yarn", None, "package manager from a URL"),
        ("deno@2.0.0", "deno", None, "unknown package manager"),
    ],
)
def test_package_manager_names_the_npm_package_of_the_tool(
    value: str, package: str, constraint: str | None, reason: str | None
) -> None:
    """Corepack's hash is dropped; yarn 2+ is @yarnpkg/cli-dist, what Corepack downloads."""
    text = json.dumps({"packageManager": value})
    (dep,) = package_json.extract("package.json", text, _no_read).dependencies
    assert (dep.dep_type, dep.package_name, dep.constraint, dep.skip_reason) == (
        "packageManager",
        package,
        constraint,
        reason,
    )


@pytest.mark.parametrize(
    "text",
    [
        '{"packageManager": 9}',
        '{"packageManager": "pnpm"}',
        '{"engines": ["node"]}',
        '{"engines": {"npm": 9}}',
        '{"overrides": "x"}',
        '{"overrides": {"a": 1}}',
        '{"resolutions": []}',
        '{"pnpm": {"overrides": 3}}',
    ],
)
def test_wrong_types_in_extra_sections_are_warnings(text: str) -> None:
    """A wrong type in the extra sections is a warning naming it, never an exception."""
    result = package_json.extract("package.json", text, _no_read)
    assert result.dependencies == ()
    assert [p.severity for p in result.problems] == ["warning"]


def test_deeply_nested_overrides_are_bounded() -> None:
    """Overrides nested past the limit are a warning, not a recursion error."""
    text = '{"overrides": ' + '{"a": ' * 200 + '"1.0.0"' + "}" * 200 + "}"
    result = package_json.extract("package.json", text, _no_read)
    assert [p.message for p in result.problems if "nested" in p.message]


def test_workspaces_globs_are_given_to_the_scan() -> None:
    """`workspaces` as a list or as yarn's {packages: [...]} ends in ExtractResult.workspaces."""
    listed = package_json.extract("package.json", '{"workspaces": ["packages/*", 3]}', _no_read)
    nested = package_json.extract(
        "package.json", '{"workspaces": {"packages": ["apps/*"], "nohoist": ["x"]}}', _no_read
    )
    assert (listed.workspaces, nested.workspaces) == (("packages/*",), ("apps/*",))


def test_a_truncated_file_says_where_its_string_starts() -> None:
    """The decoder's "Unterminated string starting at" gets its column: the sentence ends."""
    text = '{\n  "dependencies": {"left-pad": "1.0'
    result = package_json.extract("package.json", text, _no_read)
    assert [(p.line, p.message) for p in result.problems] == [
        (2, "invalid JSON: Unterminated string starting at column 32")
    ]
