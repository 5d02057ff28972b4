"""The ``ubuntu`` official image's tags: Docker tags whose stable releases are the LTS ones.

Renovate's ``config:recommended`` includes ``workarounds:ubuntuDockerVersioning``
(``lib/config/presets/internal/workarounds.ts``): ``ubuntu`` images are compared with its
``ubuntu`` versioning, whose stable releases are the long-term-support ones — ``YY.04`` of an
even year (``22.04``, ``24.04``; ubuntu.com/about/release-cycle); interim releases
(``24.10``, ``25.04``, ``25.10``) are supported nine months. Everything else is the
``docker`` scheme: a stable current moves only to LTS tags (``22.04`` → ``24.04``, not
``25.10``); an interim current may move to an LTS one. Codename tags (``jammy``) are no
versions; their date-stamped snapshots (``jammy-20240227``) order by date (``docker``).
"""

from __future__ import annotations

from patchula.versioning import docker
from patchula.versioning.docker import (
    TAG_SCHEME,
    admits_prerelease,
    compare,
    exact_pin,
    is_compatible,
    is_other_variant,
    is_valid,
    is_valid_constraint,
    looks_like_version,
    matches,
    max_satisfying,
    release_of,
    sort_key,
    update_type,
)

__all__ = [
    "ID",
    "TAG_SCHEME",
    "admits_prerelease",
    "compare",
    "exact_pin",
    "is_compatible",
    "is_other_variant",
    "is_stable",
    "is_valid",
    "is_valid_constraint",
    "looks_like_version",
    "matches",
    "max_satisfying",
    "sort_key",
    "update_type",
]

ID = "ubuntu_image"
_APRIL = 4
_MIN_PARTS = 2


def is_stable(version: str) -> bool:
    """Return whether ``version`` is an LTS tag (``22.04``, ``24.04.1``), or a stable snapshot.

    A date-stamped snapshot (``jammy-20240227``) is stable as the ``docker`` scheme says.
    """
    release = release_of(version)
    if release is None:
        return docker.is_stable(version) and docker.is_valid(version)
    return len(release) >= _MIN_PARTS and release[0] % 2 == 0 and release[1] == _APRIL
