"""Registry protocols, one module per registry; ``DATASOURCES`` maps each id to its ``Datasource``.

Each module exports one ``DATASOURCE`` (``patchula.datasource.base.Datasource``) naming every
ability it has; callers ask the object, never the module (see README "Adding a datasource").
"""

from __future__ import annotations

from patchula.datasource import crates, goproxy, npm, pypi
from patchula.datasource.base import Datasource

DATASOURCES: dict[str, Datasource] = {
    ds.id: ds for ds in (npm.DATASOURCE, pypi.DATASOURCE, crates.DATASOURCE, goproxy.DATASOURCE)
}
