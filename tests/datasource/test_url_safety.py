"""Defence in depth: no datasource builds a URL whose path could leave its base."""

from __future__ import annotations

from collections.abc import Callable

import pytest

from patchula.datasource import crates, docker, goproxy, npm, pypi
from patchula.errors import RegistryError

BUILDERS: dict[str, Callable[[str], str]] = {
    "npm": lambda name: npm.package_url("http://r.test/base", name),
    "pypi": lambda name: pypi.project_url("http://r.test/base", name),
    "crates": crates.index_path,
    "goproxy": lambda name: goproxy.module_url("http://r.test/base", name),
    "docker": lambda name: docker.repository_of(f"docker.io/library/{name}"),
}


@pytest.mark.parametrize("datasource", sorted(BUILDERS))
@pytest.mark.parametrize(
    "name",
    [
        "..",
        ".",
        "example.com/m/../../../admin/x",
        "@x/..",
        "%2e%2e",
        "a/%2E%2E/b",
        "%252e%252e",
        "a\\..\\b",
        "x\ud800",
        "a\nb",
        "",
    ],
)
def test_url_builders_refuse_dot_segments_surrogates_and_controls(
    datasource: str, name: str
) -> None:
    """A name giving a ``.``/``..`` segment after percent-decoding is a RegistryError."""
    with pytest.raises(RegistryError, match="refusing to request"):
        BUILDERS[datasource](name)


@pytest.mark.parametrize("datasource", sorted(BUILDERS))
def test_url_builders_refuse_a_name_over_the_length_bound(datasource: str) -> None:
    """A 10 MiB name (a registry's, never checked at extraction) is refused, shown cut short."""
    with pytest.raises(RegistryError) as caught:
        BUILDERS[datasource]("a" * 10 * 1024 * 1024)
    assert caught.value.reason.endswith("characters): longer than 256 characters")
    assert len(caught.value.reason) < 200


@pytest.mark.parametrize("datasource", sorted(BUILDERS))
def test_url_builders_accept_ordinary_names(datasource: str) -> None:
    """Dots inside a segment are fine (``lodash.merge``, ``gopkg.in/yaml.v3``)."""
    name = "gopkg.in/yaml.v3" if datasource == "goproxy" else "lodash.merge"
    assert "lodash" in BUILDERS[datasource](name) or "yaml" in BUILDERS[datasource](name)


@pytest.mark.anyio
async def test_get_catalog_refuses_before_any_request() -> None:
    """``get_catalog`` of a ``..`` module raises RegistryError and never calls the facade."""
    calls: list[str] = []

    async def fetch(url: str, **kwargs: object) -> object:
        calls.append(url)
        raise AssertionError("no request expected")

    with pytest.raises(RegistryError):
        await goproxy.get_catalog(fetch, "http://r.test/base", "example.com/../admin")  # type: ignore[arg-type]
    assert calls == []
