"""The ``node`` official image's tags: Docker tags whose stable releases are the even (LTS) majors.

Renovate's ``config:recommended`` includes ``workarounds:nodeDockerVersioning``
(``lib/config/presets/internal/workarounds.ts``): ``node`` images are compared with its
``node`` versioning, whose stable releases are the LTS lines — Node.js gives even majors long
term support, odd ones are short-lived "Current" releases (nodejs/release, "Release
schedule"). Everything else is the ``docker`` scheme (variants such as ``-alpine``,
components, order, update types): a stable current moves only to even majors
(``20-alpine`` → ``24-alpine``, not ``25-alpine``); an odd current may move to an even one.
An even major counts from its first release (Renovate waits for the date its LTS begins,
which a tag list does not give).
"""

from __future__ import annotations

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

ID = "node_image"


def is_stable(version: str) -> bool:
    """Return whether ``version`` is a stable tag of an even (LTS) major (``24``, not ``25``)."""
    release = release_of(version)
    return release is not None and release[0] % 2 == 0
