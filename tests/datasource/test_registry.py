from __future__ import annotations

import importlib
import pkgutil
from pathlib import Path

import patchula.datasource
from patchula.datasource import DATASOURCES


def _folder_modules() -> set[str]:
    folder = Path(patchula.datasource.__file__).parent
    return {info.name for info in pkgutil.iter_modules([str(folder)])} - {"base"}


def test_map_equals_folder() -> None:
    """``DATASOURCES`` registers every module in ``datasource/`` except ``base``, and no other."""
    assert set(DATASOURCES) == _folder_modules()
    assert {"npm", "pypi"} <= set(DATASOURCES)


def test_id_equals_module_name() -> None:
    """Each datasource's ``ID`` is its module's name, so ids and files cannot drift apart."""
    for datasource_id, module in DATASOURCES.items():
        assert datasource_id == module.ID
        assert importlib.import_module(f"patchula.datasource.{datasource_id}") is module


def test_default_base_urls_are_https() -> None:
    """Every datasource names an https default registry without a trailing slash."""
    for ds in DATASOURCES.values():
        assert ds.DEFAULT_BASE_URL.startswith("https://")
        assert not ds.DEFAULT_BASE_URL.endswith("/")
    assert DATASOURCES["npm"].DEFAULT_BASE_URL == "https://registry.npmjs.org"
    assert DATASOURCES["pypi"].DEFAULT_BASE_URL == "https://pypi.org"
