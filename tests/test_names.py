"""Package names and module paths by their ecosystems' rules (``patchula.names``)."""

from __future__ import annotations

import pytest

from patchula.names import (
    MAX_NAME_LENGTH,
    crate_name_problem,
    go_module_path_problem,
    has_lone_surrogate,
    name_problem,
    npm_name_problem,
    python_name_problem,
    scrub_surrogates,
    shown_name,
)


@pytest.mark.parametrize(
    "path",
    [
        "github.com/BurntSushi/toml",
        "golang.org/x/mod",
        "gopkg.in/yaml.v3",
        "github.com/go-chi/chi/v5",
        "example.com/a_b~c/d.e",
    ],
)
def test_valid_go_module_paths(path: str) -> None:
    """Real module paths pass ``module.CheckPath``'s rules."""
    assert go_module_path_problem(path) is None


@pytest.mark.parametrize(
    ("path", "problem"),
    [
        ("example.com/m/../../../admin/x", "invalid path element '..'"),
        ("example.com/./x", "invalid path element '.'"),
        ("example.com//x", "module path has a double slash"),
        ("example.com/x/", "module path has a trailing slash"),
        ("-example.com/x", "module path starts with a dash"),
        ("example.com/.hidden", "leading dot in path element '.hidden'"),
        ("example.com/x.", "trailing dot in path element 'x.'"),
        ("example.com/a b", "invalid character in path element 'a b'"),
        ("example.com/a%2f", "invalid character in path element 'a%2f'"),
        ("localhost/x", "missing dot in first path element 'localhost'"),
        ("Example.com/x", "invalid character in first path element 'Example.com'"),
        ("example.com/con/x", "disallowed path element 'con'"),
        ("example.com/x/v1", "invalid major version suffix 'v1'"),
        ("example.com/x/v02", "invalid major version suffix 'v02'"),
        ("", "module path is empty"),
    ],
)
def test_invalid_go_module_paths(path: str, problem: str) -> None:
    """Each rule of ``module.CheckPath`` refuses its own case, with a reason."""
    assert go_module_path_problem(path) == problem


@pytest.mark.parametrize(
    "name", ["left-pad", "@types/node", "JSONStream", "lodash.merge", "@a/b-c_d", "ga!(x)*'~"]
)
def test_valid_npm_names(name: str) -> None:
    """Names valid for old npm packages (legacy upper case and punctuation included) pass."""
    assert npm_name_problem(name) is None


@pytest.mark.parametrize(
    ("name", "problem"),
    [
        ("..", "name starts with a dot or an underscore"),
        ("../admin", "name starts with a dot or an underscore"),
        ("_private", "name starts with a dot or an underscore"),
        ("@x/..", "a name part starts with a dot"),
        ("@x/.y", "a name part starts with a dot"),
        ("a/b", "a name with a slash must be @scope/name"),
        ("@/b", "a name with a slash must be @scope/name"),
        ("@scope", "a scoped name must be @scope/name"),
        ("a b", "name contains characters that are not URL-safe"),
        ("a%2e", "name contains characters that are not URL-safe"),
        ("node_modules", "'node_modules' is a reserved name"),
        ("x" * 215, "name is longer than 214 characters"),
        ("", "name is empty"),
    ],
)
def test_invalid_npm_names(name: str, problem: str) -> None:
    """validate-npm-package-name's rules refuse names that would escape or mangle a URL."""
    assert npm_name_problem(name) == problem


def test_crate_and_python_names() -> None:
    """Crates: ASCII letters, digits, - and _ from a letter, at most 64; Python: PEP 508."""
    assert crate_name_problem("serde_json") is None
    assert crate_name_problem("../x") is not None
    assert crate_name_problem("1x") is not None
    assert crate_name_problem("x" * 65) == "crate name is longer than 64 characters"
    assert python_name_problem("zope.interface") is None
    assert python_name_problem("-/x") is not None


def test_lone_surrogates_are_found_and_scrubbed() -> None:
    """A lone surrogate makes any name invalid; scrubbing replaces it with U+FFFD."""
    assert has_lone_surrogate("pkg\ud800")
    assert not has_lone_surrogate("pkg\U0001f600")
    assert scrub_surrogates("a\udc00b") == "a\ufffdb"
    assert name_problem("npm", "pkg\ud800") == "invalid Unicode: lone surrogate"
    assert name_problem("docker", "anything/goes") is None


@pytest.mark.parametrize("datasource", ["npm", "pypi", "crates", "goproxy", "docker", "github"])
def test_a_name_over_the_length_bound_is_a_problem_in_every_ecosystem(datasource: str) -> None:
    """257 characters is too long for any datasource; npm's own limit, 214, still holds."""
    assert MAX_NAME_LENGTH == 256
    too_long = "a" * 257
    if datasource == "goproxy":
        too_long = "example.com/" + "a" * 245
    assert name_problem(datasource, too_long) == (
        "longer than 256 characters, the most any registry's names have"
    )
    assert name_problem("pypi", "a" * 256) is None
    assert name_problem("npm", "a" * 215) == "name is longer than 214 characters"


def test_a_long_name_is_shown_cut_short_with_its_length() -> None:
    """A message shows 60 characters of a long name and says how long it is."""
    assert shown_name("left-pad") == "'left-pad'"
    assert shown_name("a" * 200_000) == f"{'a' * 60!r}… (200,000 characters)"
