"""Version schemes, one module per scheme; ``VERSIONINGS`` maps each id to its module.

A scheme's module is imported when it is first looked up (``plugins.LazyRegistry``).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from patchula.plugins import LazyRegistry

if TYPE_CHECKING:
    from patchula.versioning.base import Versioning

# ``node_image`` and ``ubuntu_image``: Docker tags of the node and ubuntu official images, whose
# stable tags are their LTS lines (Renovate's workarounds presets).
VERSIONINGS: LazyRegistry[Versioning] = LazyRegistry(
    {
        scheme: f"patchula.versioning.{scheme}"
        for scheme in (
            "npm",
            "pep440",
            "go",
            "cargo",
            "docker",
            "mise",
            "node_image",
            "ubuntu_image",
        )
    }
)
