"""Registry protocols, one module per registry; ``DATASOURCES`` maps each id to its ``Datasource``.

Each module exports one ``DATASOURCE`` (``patchula.datasource.base.Datasource``) naming every
ability it has; callers ask the object, never the module (see README "Adding a datasource").
A module is imported when its id is first looked up (``plugins.LazyRegistry``): a run makes no
lookup of a registry it needs nothing from, so it never imports that datasource.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from patchula.plugins import LazyRegistry

if TYPE_CHECKING:
    from patchula.datasource.base import Datasource

DATASOURCES: LazyRegistry[Datasource] = LazyRegistry(
    {
        # Renovate's ids may hold a hyphen (``github-tags``); the module's name has ``_``.
        ident: f"patchula.datasource.{ident.replace('-', '_')}"
        for ident in (
            "npm",
            "pypi",
            "crates",
            "goproxy",
            "docker",
            "github-tags",
            "github-releases",
            "github-runners",
            "node",
            "python",
            "go",
        )
    },
    attribute="DATASOURCE",
)
