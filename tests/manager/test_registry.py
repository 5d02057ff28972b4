from __future__ import annotations

import inspect
from pathlib import Path

import pytest

from patchula import manager
from patchula.manager import MANAGERS
from patchula.manager.base import Manager
from patchula.manager.paths import RULES
from patchula.models import ExtractResult

PACKAGE_DIR = Path(manager.__file__).parent
DATASOURCES = {
    "npm": "npm",
    "pypi": "pep440",
    "crates": "cargo",
    "goproxy": "go",
    "docker": "docker",
    "github-tags": "docker",
    "node": "mise",  # tool managers: every row names its own datasource, all versioned "mise"
}


def test_managers_mapping_equals_the_module_files() -> None:
    """MANAGERS has exactly one entry per module file in manager/, besides base and __init__."""
    modules = {path.stem for path in PACKAGE_DIR.glob("*.py")} - {"__init__", "base", "paths"}
    assert set(MANAGERS) == modules


def test_the_path_rules_are_each_managers_own() -> None:
    """``paths.RULES`` is every manager's own ``matches`` and ``DATASOURCE``, in order.

    Discovery asks ``RULES``, so it finds exactly what each manager says it reads.
    """
    assert list(RULES) == list(MANAGERS)
    for manager_id, rule in RULES.items():
        module: Manager = MANAGERS[manager_id]
        assert rule.matches is module.matches, manager_id
        assert rule.datasource == module.DATASOURCE, manager_id


@pytest.mark.parametrize("manager_id", sorted(MANAGERS))
def test_each_manager_satisfies_the_protocol(manager_id: str) -> None:
    """Each module's ID is its name and it defines ids, matches and extract with the right shape."""
    module: Manager = MANAGERS[manager_id]
    assert manager_id == module.ID
    assert inspect.ismodule(module)
    assert module.__name__ == f"patchula.manager.{manager_id}"
    assert DATASOURCES[module.DATASOURCE] == module.VERSIONING
    assert list(inspect.signature(module.matches).parameters) == ["path"]
    assert list(inspect.signature(module.extract).parameters) == ["path", "text", "read"]


@pytest.mark.parametrize("manager_id", sorted(MANAGERS))
@pytest.mark.parametrize("text", ["", "\x00", "\ufffd\ufffd garbage \x7f {[", "[[[", "{"])
def test_every_manager_turns_garbage_into_problems_not_exceptions(
    manager_id: str, text: str
) -> None:
    """Empty, NUL and garbage text never raise from extract; they give problems or nothing."""
    result = MANAGERS[manager_id].extract("x", text, _no_read)
    assert isinstance(result, ExtractResult)
    if "\x00" in text:
        assert [p.message for p in result.problems] == [
            "file contains NUL characters; not a text manifest"
        ]


@pytest.mark.parametrize(
    ("path", "owner"),
    [
        ("web/package.json", "package_json"),
        ("web/package-lock.json", "package_lock"),
        ("requirements/dev.txt", "requirements_txt"),
        ("pyproject.toml", "pyproject"),
        ("uv.lock", "uv_lock"),
        ("poetry.lock", "poetry_lock"),
        ("examples/Pipfile", "pipfile"),
        ("examples/Pipfile.lock", "pipfile_lock"),
        ("docker/Dockerfile", "dockerfile"),
        ("Dockerfile.distroless", "dockerfile"),
        ("docker-compose.override.yml", "docker_compose"),
        ("dockerfiles/docker-compose-assets.yml", "docker_compose"),
        ("compose.yaml", "docker_compose"),
        (".github/workflows/ci.yml", "github_actions"),
        ("actions/setup/action.yaml", "github_actions"),
    ],
)
def test_each_file_kind_has_exactly_one_manager(path: str, owner: str) -> None:
    """Matchers do not overlap: each manifest kind is claimed by one manager only."""
    assert [mid for mid, module in MANAGERS.items() if module.matches(path)] == [owner]


def _no_read(path: str) -> str:
    raise AssertionError(path)
