"""The ``github-runners`` datasource: a static table of GitHub-hosted runner images."""

from __future__ import annotations

import pytest

from patchula.datasource import DATASOURCES
from patchula.datasource.github_runners import catalog
from patchula.errors import PackageNotFound
from patchula.runners import IMAGES, TABLE_DATE, known


def test_each_os_is_a_catalog_with_retired_images_deprecated_and_previews_prereleases() -> None:
    """Retired images carry GitHub's word as ``deprecated``; previews are prereleases."""
    ubuntu = catalog("ubuntu")
    assert ubuntu.latest == "24.04"
    assert ubuntu.fetched_at == TABLE_DATE
    releases = {r.version: r for r in ubuntu.releases}
    assert releases["26.04"].prerelease
    assert not releases["24.04"].prerelease
    assert releases["24.04"].deprecated is None
    assert releases["24.04"].released_at is None  # the table gives no dates: never invented
    assert releases["20.04"].deprecated == (
        "GitHub retired the ubuntu-20.04 runner image (2025-04): GitHub-hosted runners no"
        " longer run it, so a job that asks for it does not run"
    )
    assert [r.version for r in ubuntu.releases][:2] == ["16.04", "18.04"]  # oldest first
    assert catalog("windows").latest == "2025"
    assert catalog("macos").latest == "26"


def test_an_unknown_os_is_not_found_and_the_table_answers_known_labels() -> None:
    """Another OS is not found; ``known`` gives an image's status, ``None`` for no image."""
    with pytest.raises(PackageNotFound, match="not a GitHub-hosted runner OS"):
        catalog("freebsd")
    assert known("macos", "15-xlarge") == "stable"
    assert known("windows", "2019") == "retired"
    assert known("ubuntu", "24.04-16core") is None
    assert set(IMAGES) == {"ubuntu", "macos", "windows"}


@pytest.mark.anyio
async def test_the_datasource_makes_no_request() -> None:
    """The catalog comes from the table: the fetch facade is never called."""

    async def no_fetch(*_: object, **__: object) -> object:
        raise AssertionError("the runner table is static")

    source = DATASOURCES["github-runners"]
    found = await source.get_catalog(no_fetch, source.default_base_url, "macos")  # type: ignore[arg-type]
    assert found.datasource == "github-runners"
    assert "26-xlarge" in {r.version for r in found.releases}
