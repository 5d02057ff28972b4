"""The node and ubuntu official images: only LTS lines are stable (Renovate's workarounds).

``workarounds:nodeDockerVersioning`` and ``workarounds:ubuntuDockerVersioning`` of Renovate's
``config:recommended``: ``node:20-alpine`` moves to ``24-alpine`` (not the odd ``25``),
``ubuntu:22.04`` to ``24.04`` (not the interim ``25.10``).
"""

from __future__ import annotations

from datetime import UTC, datetime

import pytest

from patchula.manager.base import image_row
from patchula.models import Catalog, Dependency, Release
from patchula.policy import ReleaseAgePolicy, evaluate
from patchula.policy.memo import EvaluationMemo
from patchula.versioning import VERSIONINGS, node_image, ubuntu_image

NOW = datetime(2026, 12, 1, 12, 0, tzinfo=UTC)


def _row(reference: str) -> Dependency:
    row = image_row(reference, manager="dockerfile", file="Dockerfile", line=1, dep_type="final")
    assert isinstance(row, Dependency)
    return row


def _verdict(reference: str, *tags: str) -> tuple[str | None, str | None, str | None]:
    dep = _row(reference)
    catalog = Catalog(
        datasource="docker",
        package_name=dep.package_name,
        releases=tuple(Release(tag, None) for tag in sorted(tags)),
        latest=None,
        fetched_at=NOW,
    )
    versioning = VERSIONINGS[dep.versioning]
    f = evaluate(dep, catalog, versioning, ReleaseAgePolicy(), NOW, memo=EvaluationMemo())
    return f.latest, f.eligible, f.update_type


NODE = ("20-alpine", "22-alpine", "23-alpine", "24-alpine", "25-alpine", "24", "25")
UBUNTU = ("20.04", "22.04", "23.10", "24.04", "24.10", "25.04", "25.10", "jammy", "noble")


def test_the_official_images_get_their_versionings_and_others_docker() -> None:
    """By canonical name: ``node``, ``library/node`` and ``docker.io/node`` alike."""
    assert {_row(r).versioning for r in ("node:20", "library/node:20", "docker.io/node:20")} == {
        "node_image"
    }
    assert _row("ubuntu:22.04").versioning == "ubuntu_image"
    assert _row("bitnami/node:20").versioning == "docker"
    assert _row("ghcr.io/acme/ubuntu:22.04").versioning == "docker"


def test_node_moves_to_the_newest_even_major() -> None:
    """``20-alpine`` → ``24-alpine``; an odd current may move to an even one."""
    assert _verdict("node:20-alpine", *NODE) == ("24-alpine", "24-alpine", "major")
    assert _verdict("node:22-alpine", *NODE) == ("24-alpine", "24-alpine", "major")
    assert _verdict("node:23-alpine", *NODE) == ("24-alpine", "24-alpine", "major")
    assert _verdict("node:24", *NODE) == ("24", None, None)


def test_ubuntu_moves_to_the_newest_lts() -> None:
    """``22.04`` → ``24.04``, never an interim release; an interim current to an LTS."""
    assert _verdict("ubuntu:22.04", *UBUNTU) == ("24.04", "24.04", "major")
    assert _verdict("ubuntu:23.10", *UBUNTU) == ("24.04", "24.04", "major")
    assert _verdict("ubuntu:24.04", *UBUNTU) == ("24.04", None, None)


@pytest.mark.parametrize(
    ("tag", "stable"),
    [("24", True), ("24.11.1-alpine3.20", True), ("25-alpine", False), ("24.0.0-rc.1", False)],
)
def test_node_stable_tags(tag: str, *, stable: bool) -> None:
    """Stable docker tags of even majors."""
    assert node_image.is_stable(tag) is stable


@pytest.mark.parametrize(
    ("tag", "stable"),
    [
        ("24.04", True),
        ("22.04.1", True),
        ("25.04", False),
        ("24.10", False),
        ("25.10", False),
        ("jammy-20240227", True),
        ("jammy", False),
    ],
)
def test_ubuntu_stable_tags(tag: str, *, stable: bool) -> None:
    """``YY.04`` of an even year, and date-stamped snapshots."""
    assert ubuntu_image.is_stable(tag) is stable
