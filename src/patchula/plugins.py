"""The plugin registries' mapping: an id → module table that imports a module on first use.

``MANAGERS``, ``VERSIONINGS`` and ``DATASOURCES`` are explicit id → module-path tables (the
registry tests check each equals its folder); a command imports only the plugins it uses, so
``patchula --version`` or a scan of a checkout without manifests imports none (issue 12: start-up).
Imports nothing of ours.
"""

from __future__ import annotations

import importlib
from collections.abc import Iterable, Iterator, Mapping
from typing import Any, TypeVar

T = TypeVar("T")


class LazyRegistry(Mapping[str, T]):
    """A read-only mapping of plugin ids to plugins, each imported when first looked up.

    ``modules`` maps each id to the dotted path of its module, in registry order; the value is
    the module itself, or its ``attribute`` when one is named (a datasource's ``DATASOURCE``).
    Keys, ``len`` and ``in`` import nothing; a lookup imports that one module (once; Python's
    import lock makes a concurrent first lookup safe); ``values()`` and ``items()`` import all.
    Raises ``KeyError`` for an unknown id, like a dict.
    """

    def __init__(self, modules: Mapping[str, str], attribute: str | None = None) -> None:
        self._modules = dict(modules)
        self._attribute = attribute
        self._loaded: dict[str, T] = {}

    def __getitem__(self, key: str) -> T:
        found = self._loaded.get(key)
        if found is None:
            # The module, or the one object it exports for the registry (never an ability probe).
            imported: Any = importlib.import_module(self._modules[key])
            found = imported if self._attribute is None else getattr(imported, self._attribute)
            self._loaded[key] = found
        return found

    def __iter__(self) -> Iterator[str]:
        return iter(self._modules)

    def __len__(self) -> int:
        return len(self._modules)

    def __contains__(self, key: object) -> bool:
        return key in self._modules

    def only(self, ids: Iterable[str]) -> LazyRegistry[T]:
        """The same registry narrowed to ``ids`` (unknown ids ignored), sharing what is loaded."""
        chosen = set(ids)
        narrowed: LazyRegistry[T] = LazyRegistry(
            {k: v for k, v in self._modules.items() if k in chosen}, self._attribute
        )
        narrowed._loaded = self._loaded  # shared: each plugin is imported once
        return narrowed

    def __repr__(self) -> str:
        return f"LazyRegistry({list(self._modules)!r})"
