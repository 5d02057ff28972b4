"""The dependencies of one version (``cache warm``): npm, PyPI, crates and Go documents."""

from __future__ import annotations

import json

import orjson
import pytest

from patchula.datasource import crates, goproxy, npm, pypi
from patchula.datasource.base import Declared
from patchula.errors import RegistryError

LINUX_311 = {
    "implementation_name": "cpython",
    "implementation_version": "3.11.7",
    "os_name": "posix",
    "platform_machine": "x86_64",
    "platform_python_implementation": "CPython",
    "platform_release": "",
    "platform_system": "Linux",
    "platform_version": "",
    "python_full_version": "3.11.7",
    "python_version": "3.11",
    "sys_platform": "linux",
}


def test_npm_keeps_the_run_time_dependencies_of_a_version_document() -> None:
    """``dependencies`` only (not dev or peer); a range that is no string is dropped."""
    document = {
        "name": "a",
        "version": "1.0.0",
        "dependencies": {"b": "^1.0.0", "c": {"odd": True}, "d": "~2.1"},
        "devDependencies": {"jest": "^29"},
        "peerDependencies": {"react": "*"},
    }
    derived = npm.derive_dependencies(json.dumps(document).encode())
    assert json.loads(derived) == [["b", "^1.0.0"], ["d", "~2.1"]]
    assert npm.derive_dependencies(b'{"name": "a"}') == b"[]"
    with pytest.raises(RegistryError, match="unusable npm version document"):
        npm.derive_dependencies(b"<html>")


def test_pypi_markers_are_evaluated_for_the_platform_and_the_extras_asked_for() -> None:
    """PEP 508 markers hold or not here; ``extra == 'x'`` only with extra x; names normalised."""
    requires = [
        "Requests[socks]>=2.0",
        "colorama; sys_platform == 'win32'",
        "tomli>=1; python_version < '3.11'",
        "typing_extensions; python_version >= '3.8'",
        "pytest; extra == 'test'",
        "not a requirement !!",
        "requests<3",
    ]
    found = pypi.requirements_in_effect(requires, frozenset(), LINUX_311)
    assert found == [
        Declared("requests", ">=2.0", ("socks",)),
        Declared("typing-extensions", ""),
    ]
    with_test = pypi.requirements_in_effect(requires, frozenset({"test"}), LINUX_311)
    assert [d.name for d in with_test] == ["requests", "typing-extensions", "pytest"]


def test_pypi_release_document_keeps_only_requires_dist_strings() -> None:
    """The stored form is the list of requirement strings; a null list is empty."""
    body = {"info": {"name": "a", "requires_dist": ["b>=1", 7, "c"]}, "urls": []}
    assert orjson.loads(pypi.derive_requires_dist(json.dumps(body).encode())) == ["b>=1", "c"]
    assert pypi.derive_requires_dist(b'{"info": {"requires_dist": null}}') == b"[]"


def test_crates_keeps_normal_non_optional_dependencies_per_version() -> None:
    """Dev, build and optional dependencies are left out; a renamed one is its package."""
    lines = [
        {
            "name": "a",
            "vers": "1.0.0",
            "deps": [
                {"name": "serde", "req": "^1", "kind": "normal", "optional": False},
                {"name": "proptest", "req": "^1", "kind": "dev"},
                {"name": "cc", "req": "^1", "kind": "build"},
                {"name": "tokio", "req": "^1", "optional": True},
                {"name": "json", "req": "^1", "package": "serde_json", "kind": None},
            ],
        },
        {"name": "a", "vers": "0.9.0", "deps": []},
    ]
    content = b"\n".join(json.dumps(line).encode() for line in lines) + b"\nnot json\n"
    assert orjson.loads(crates.derive_dependencies(content, package_name="a")) == {
        "1.0.0": [["serde", "^1"], ["serde_json", "^1"]],
        "0.9.0": [],
    }


def test_go_requires_come_from_lines_and_blocks() -> None:
    """``require`` lines and blocks, ``// indirect`` included, comments and replaces ignored."""
    go_mod = """module example.com/m

go 1.21

require golang.org/x/text v0.14.0 // a comment
require (
\tgithub.com/a/b v1.2.3
\tgithub.com/c/d v0.1.0 // indirect
\t// github.com/old/one v1.0.0
)

replace github.com/a/b => ../b
exclude github.com/c/d v0.0.1
"""
    assert goproxy.parse_requires(go_mod) == [
        Declared("golang.org/x/text", "v0.14.0"),
        Declared("github.com/a/b", "v1.2.3"),
        Declared("github.com/c/d", "v0.1.0"),
    ]
