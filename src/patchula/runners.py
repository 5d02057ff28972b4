"""GitHub-hosted runner images: the table ``runs-on`` labels are judged on (no I/O).

One table shared by the ``github_actions`` manager (which labels are hosted images) and the
``github-runners`` datasource (their catalog); see that datasource's docstring for what each
status means. Source: ``TABLE_SOURCE``, as of ``TABLE_DATE``. Imports nothing of ours.
"""

from __future__ import annotations

from datetime import UTC, datetime
from typing import Literal

TABLE_DATE = datetime(2026, 8, 22, tzinfo=UTC)
TABLE_SOURCE = (
    "renovatebot/renovate lib/modules/datasource/github-runners (2026-08-22) and GitHub's"
    " changelog retirement announcements"
)

Status = Literal["stable", "unstable", "deprecated", "retired"]

# OS → (image version, status, when retired: a year-month as GitHub announced it), newest first.
IMAGES: dict[str, tuple[tuple[str, Status, str], ...]] = {
    "ubuntu": (
        ("26.04", "unstable", ""),
        ("26.04-arm", "unstable", ""),
        ("24.04", "stable", ""),
        ("24.04-arm", "stable", ""),
        ("22.04", "stable", ""),
        ("22.04-arm", "stable", ""),
        ("20.04", "retired", "2025-04"),
        ("18.04", "retired", "2023-04"),
        ("16.04", "retired", "2021-09"),
    ),
    "macos": (
        ("26", "stable", ""),
        ("26-intel", "stable", ""),
        ("26-xlarge", "stable", ""),
        ("15", "stable", ""),
        ("15-intel", "stable", ""),
        ("15-large", "stable", ""),
        ("15-xlarge", "stable", ""),
        ("14", "stable", ""),
        ("14-large", "stable", ""),
        ("14-xlarge", "stable", ""),
        ("13", "retired", "2025-12"),
        ("13-large", "retired", "2025-12"),
        ("13-xlarge", "retired", "2025-12"),
        ("12", "retired", "2024-12"),
        ("12-large", "retired", "2024-12"),
        ("11", "retired", "2024-06"),
        ("10.15", "retired", "2022"),
    ),
    "windows": (
        ("2025", "stable", ""),
        ("2022", "stable", ""),
        ("11-arm", "stable", ""),
        ("2019", "retired", "2025-06"),
        ("2016", "retired", "2022-03"),
    ),
}


def known(os: str, version: str) -> Status | None:
    """The status of the image ``os``-``version`` (``ubuntu``, ``22.04``), ``None`` if unknown."""
    for image, status, _ in IMAGES.get(os, ()):
        if image == version:
            return status
    return None
