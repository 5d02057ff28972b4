"""Registry protocols, one module per registry; ``DATASOURCES`` maps each id to its module."""

from __future__ import annotations

from typing import TYPE_CHECKING

from patchula.datasource import crates, goproxy, npm, pypi

if TYPE_CHECKING:
    from patchula.datasource.base import Datasource

DATASOURCES: dict[str, Datasource] = {
    npm.ID: npm,
    pypi.ID: pypi,
    crates.ID: crates,
    goproxy.ID: goproxy,
}
