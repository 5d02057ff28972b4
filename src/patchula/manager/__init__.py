"""Managers: one module per manifest or lockfile kind, registered by id (= module name)."""

from __future__ import annotations

from patchula.manager import (
    cargo_lock,
    cargo_toml,
    go_mod,
    package_json,
    package_lock,
    pipfile,
    pipfile_lock,
    poetry_lock,
    pyproject,
    requirements_txt,
    uv_lock,
)
from patchula.manager.base import Manager

MANAGERS: dict[str, Manager] = {
    "package_json": package_json,
    "package_lock": package_lock,
    "requirements_txt": requirements_txt,
    "pyproject": pyproject,
    "uv_lock": uv_lock,
    "poetry_lock": poetry_lock,
    "pipfile": pipfile,
    "pipfile_lock": pipfile_lock,
    "cargo_toml": cargo_toml,
    "cargo_lock": cargo_lock,
    "go_mod": go_mod,
}

__all__ = ["MANAGERS", "Manager"]
