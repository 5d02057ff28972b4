from __future__ import annotations

import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from patchula.plugins import LazyRegistry


@pytest.fixture
def plugins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Iterator[list[str]]:
    """Two importable plugin modules, ``lazy_plug_a`` and ``lazy_plug_b``, not imported yet."""
    names = ["lazy_plug_a", "lazy_plug_b"]
    for name in names:
        (tmp_path / f"{name}.py").write_text(f"ID = {name!r}\nTHING = object()\n")
        monkeypatch.delitem(sys.modules, name, raising=False)
    monkeypatch.syspath_prepend(str(tmp_path))
    yield names
    for name in names:
        sys.modules.pop(name, None)


def test_ids_are_known_without_importing(plugins: list[str]) -> None:
    """Keys, ``len`` and ``in`` import nothing; the order is the table's."""
    registry: LazyRegistry[object] = LazyRegistry({"b": "lazy_plug_b", "a": "lazy_plug_a"})
    assert (list(registry), len(registry), "a" in registry, "c" in registry) == (
        ["b", "a"],
        2,
        True,
        False,
    )
    assert [p for p in plugins if p in sys.modules] == []


def test_a_lookup_imports_that_module_once(plugins: list[str]) -> None:
    """``registry[id]`` imports only that module, and returns the same object every time."""
    registry: LazyRegistry[object] = LazyRegistry({"a": "lazy_plug_a", "b": "lazy_plug_b"})
    first = registry["a"]
    assert first is sys.modules["lazy_plug_a"]
    assert registry["a"] is first
    assert "lazy_plug_b" not in sys.modules
    with pytest.raises(KeyError):
        registry["c"]
    assert registry.get("c") is None


def test_an_attribute_registry_returns_the_exported_object(plugins: list[str]) -> None:
    """With ``attribute``, the value is that export of the module (a datasource's DATASOURCE)."""
    registry: LazyRegistry[object] = LazyRegistry({"a": "lazy_plug_a"}, attribute="THING")
    assert registry["a"] is sys.modules["lazy_plug_a"].THING


def test_only_narrows_and_shares_what_is_loaded(plugins: list[str]) -> None:
    """``only(ids)`` keeps the registry's order, drops unknown ids, imports nothing new."""
    registry: LazyRegistry[object] = LazyRegistry({"a": "lazy_plug_a", "b": "lazy_plug_b"})
    loaded = registry["b"]
    narrowed = registry.only(["b", "zzz"])
    assert list(narrowed) == ["b"]
    assert "lazy_plug_a" not in sys.modules
    assert narrowed["b"] is loaded
    assert dict(narrowed.items()) == {"b": loaded}
