"""GitHub-hosted runner images (``runs-on: ubuntu-22.04``): a static table, no request.

GitHub publishes no machine-readable list of its hosted runner images; like Renovate's
``github-runners`` datasource (``renovatebot/renovate:lib/modules/datasource/github-runners``,
a table in code) this one ships the table, per OS (the package name: ``ubuntu``, ``macos``,
``windows``), each image version as written after the OS in its label (``24.04``,
``24.04-arm``, ``15-xlarge``, ``2025``). An image is stable, unstable (a public preview or
beta: a prerelease), deprecated (still runs, with brownouts, until its retirement) or retired
(GitHub-hosted runners no longer run it: a job that asks for it does not run). Versions follow
``docker`` versioning, so a variant (``-arm``, ``-intel``, ``-large``, ``-xlarge``) moves only
to the same variant of a newer image.

The table is ``patchula.runners.IMAGES`` (a leaf the manager reads too). Source and date:
Renovate's table at ``renovatebot/renovate`` commit of 2026-08-22 (stable,
unstable and deprecated images), and the retirement months announced on GitHub's changelog
(https://github.blog/changelog/label/actions/) and in ``actions/runner-images`` issues; the
catalog's ``fetched_at`` is that date. Images announced after it are unknown here: a label this
table does not know is skipped by the manager, never guessed. No release dates: every image's
age is unknown (the release-age policy decides, registries.md §0).
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from patchula.datasource.base import Datasource
from patchula.errors import PackageNotFound
from patchula.models import Catalog, Release
from patchula.runners import IMAGES, TABLE_DATE, Status

if TYPE_CHECKING:
    from patchula.datasource.base import Fetch

ID = "github-runners"
# Nothing is fetched: the images' home, for the report's source URL.
DEFAULT_BASE_URL = "https://github.com/actions/runner-images"
TIME_SOURCE = "patchula's runner image table (no release dates)"


def _release(os: str, version: str, status: Status, retired: str) -> Release:
    label = f"{os}-{version}"
    if status == "retired":
        message = (
            f"GitHub retired the {label} runner image ({retired}): GitHub-hosted runners no"
            " longer run it, so a job that asks for it does not run"
        )
    elif status == "deprecated":
        message = f"GitHub is retiring the {label} runner image (brownouts until it is removed)"
    else:
        message = None
    return Release(version, None, deprecated=message, prerelease=status == "unstable")


def catalog(package_name: str) -> Catalog:
    """The images of OS ``package_name`` (oldest first); ``PackageNotFound`` for another OS.

    ``latest`` is the newest stable image without a variant (``24.04``, ``26``, ``2025``).
    """
    images = IMAGES.get(package_name)
    if images is None:
        msg = f"{package_name!r} is not a GitHub-hosted runner OS (ubuntu, macos, windows)"
        raise PackageNotFound(msg)
    releases = tuple(_release(package_name, *image) for image in reversed(images))
    latest = next(
        (v for v, status, _ in images if status == "stable" and "-" not in v),
        None,
    )
    return Catalog(
        datasource=ID,
        package_name=package_name,
        releases=releases,
        latest=latest,
        fetched_at=TABLE_DATE,
        time_source=TIME_SOURCE,
        source_url=DEFAULT_BASE_URL,
    )


async def get_catalog(fetch: Fetch, base_url: str, package_name: str) -> Catalog:  # noqa: ARG001
    """The table's images of ``package_name`` (no request is made; see ``catalog``)."""
    return catalog(package_name)


DATASOURCE = Datasource(
    id=ID,
    default_base_url=DEFAULT_BASE_URL,
    default_versioning="docker",
    get_catalog=get_catalog,
    single_document=None,
    release_times=None,
    get_digest=None,
    platform_digests=None,
    digest_terms=None,
    freshness_floor_representations=(),
    dependencies=None,
)
