from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import patchula.versioning
from patchula.versioning import VERSIONINGS


def _folder_modules() -> set[str]:
    folder = Path(patchula.versioning.__file__).parent
    return {info.name for info in pkgutil.iter_modules([str(folder)])} - {"base"}


def test_map_equals_folder() -> None:
    """``VERSIONINGS`` registers every module in ``versioning/`` except ``base``, and no other."""
    assert set(VERSIONINGS) == _folder_modules()
    assert {"npm", "pep440"} <= set(VERSIONINGS)


def test_id_equals_module_name() -> None:
    """Each versioning's ``ID`` is its module's name, so ids and files cannot drift apart."""
    for versioning_id, module in VERSIONINGS.items():
        assert versioning_id == module.ID
        assert importlib.import_module(f"patchula.versioning.{versioning_id}") is module
