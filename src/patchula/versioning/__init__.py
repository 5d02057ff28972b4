"""Version schemes, one module per scheme; ``VERSIONINGS`` maps each id to its module."""

from __future__ import annotations

from typing import TYPE_CHECKING

from patchula.versioning import cargo, go, npm, pep440

if TYPE_CHECKING:
    from patchula.versioning.base import Versioning

VERSIONINGS: dict[str, Versioning] = {
    npm.ID: npm,
    pep440.ID: pep440,
    go.ID: go,
    cargo.ID: cargo,
}
