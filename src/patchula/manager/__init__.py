"""Managers: one module per manifest or lockfile kind, registered by id (= module name).

``MANAGERS`` imports a manager's module when it is first looked up (``plugins.LazyRegistry``):
the ids are known without importing any of them, and discovery asks each manager about a path
through ``manager.paths.RULES`` (its ``matches`` and datasource id), which imports none.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

from patchula.plugins import LazyRegistry

if TYPE_CHECKING:
    from patchula.manager.base import Manager

MANAGERS: LazyRegistry[Manager] = LazyRegistry(
    {
        manager_id: f"patchula.manager.{manager_id}"
        for manager_id in (
            "package_json",
            "package_lock",
            "yarn_lock",
            "pnpm_lock",
            "bun_lock",
            "requirements_txt",
            "pyproject",
            "setup_cfg",
            "hatch_toml",
            "uv_lock",
            "poetry_lock",
            "pdm_lock",
            "pipfile",
            "pipfile_lock",
            "cargo_toml",
            "cargo_lock",
            "go_mod",
            "dockerfile",
            "docker_compose",
            "github_actions",
            "mise_toml",
            "tool_versions",
            "version_file",
        )
    }
)

__all__ = ["MANAGERS", "Manager"]


def __getattr__(name: str) -> Any:  # noqa: ANN401 - PEP 562: the re-exported protocol
    # ``Manager`` lives in ``manager.base``, which imports ``packaging``: only on demand.
    if name == "Manager":
        from patchula.manager.base import Manager  # noqa: PLC0415 - lazy: start-up

        return Manager
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
