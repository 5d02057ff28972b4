"""The Go module proxy datasource, against the loopback fake registry and pure parsers."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import UTC, datetime
from pathlib import Path

import orjson
import pytest

from patchula.datasource import goproxy
from patchula.datasource.base import Unavailable
from patchula.datasource.goproxy import Retraction
from patchula.errors import PackageNotFound, RegistryError, RegistryUnreachable
from patchula.http.fetcher import Fetcher, Timer, make_client
from patchula.models import Catalog, Derive, FetchResponse, Release
from tests.fake_registry import FakeRegistry
from tests.fake_registry.base import text_reply

FIXTURES = Path(__file__).parent.parent / "fixtures" / "registry" / "goproxy"
T1 = datetime(2024, 3, 1, 9, 30, tzinfo=UTC)
T2 = datetime(2024, 9, 14, 17, 5, 12, tzinfo=UTC)
T3 = datetime(2025, 1, 20, 8, 0, tzinfo=UTC)
FETCHED = datetime(2026, 11, 30, tzinfo=UTC)


async def _catalog(registry: FakeRegistry, module: str) -> Catalog:
    async with make_client() as client:
        return await goproxy.get_catalog(Fetcher(client), registry.url("goproxy"), module)


def _yanked(catalog: Catalog) -> list[tuple[str, bool]]:
    return [(release.version, release.yanked) for release in catalog.releases]


@pytest.mark.parametrize(
    ("path", "escaped"),
    [
        ("github.com/BurntSushi/toml", "github.com/!burnt!sushi/toml"),
        ("github.com/Azure/azure-sdk-for-go", "github.com/!azure/azure-sdk-for-go"),
        ("golang.org/x/mod", "golang.org/x/mod"),
        ("v1.0.0-RC1", "v1.0.0-!r!c1"),
    ],
)
def test_module_path_escape(path: str, escaped: str) -> None:
    """Every upper-case letter becomes ``!`` followed by its lower-case form."""
    assert goproxy.module_path_escape(path) == escaped


@pytest.mark.anyio
async def test_versions_and_latest(fake_registry: FakeRegistry) -> None:
    """Listed versions are sorted, only @latest's is dated, and latest is the top release."""
    fake_registry.goproxy.add(
        "example.com/widget", {"v1.1.0": T2, "v1.0.0": T1, "v1.2.0-rc.1": T3, "v0.9.0": None}
    )
    catalog = await _catalog(fake_registry, "example.com/widget")
    assert catalog.releases == (
        Release("v0.9.0", None),
        Release("v1.0.0", None),
        Release("v1.1.0", T2),
        Release("v1.2.0-rc.1", None),
    )
    assert catalog.latest == "v1.1.0"
    assert catalog.datasource == "goproxy"
    assert catalog.time_source == "Go proxy .info time"
    assert catalog.source_url == fake_registry.url("goproxy") + "/example.com/widget/@v/list"
    assert catalog.reused is False


@pytest.mark.anyio
async def test_exactly_four_requests_and_no_info(fake_registry: FakeRegistry) -> None:
    """One module costs list, @latest, one .mod and the /v2 probe; no ``.info`` per version."""
    fake_registry.goproxy.add(
        "example.com/many", {f"v1.{minor}.0": T1 for minor in range(12)} | {"v1.12.0": T3}
    )
    catalog = await _catalog(fake_registry, "example.com/many")
    host = fake_registry.host("goproxy")
    assert host.requests == 4
    assert dict(host.requests_by_route) == {
        "GET /example.com/many/@v/list": 1,
        "GET /example.com/many/@latest": 1,
        "GET /example.com/many/@v/v1.12.0.mod": 1,
        "GET /example.com/many/v2/@v/list": 1,
    }
    assert len(catalog.releases) == 13
    assert [r.version for r in catalog.releases if r.released_at is not None] == ["v1.12.0"]


@pytest.mark.anyio
async def test_case_encoded_module_path(fake_registry: FakeRegistry) -> None:
    """``github.com/BurntSushi/toml`` is requested as ``github.com/!burnt!sushi/toml``."""
    fake_registry.goproxy.add("github.com/BurntSushi/toml", {"v1.3.2": T1, "v1.4.0": T2})
    catalog = await _catalog(fake_registry, "github.com/BurntSushi/toml")
    assert set(fake_registry.host("goproxy").requests_by_route) == {
        "GET /github.com/!burnt!sushi/toml/@v/list",
        "GET /github.com/!burnt!sushi/toml/@latest",
        "GET /github.com/!burnt!sushi/toml/@v/v1.4.0.mod",
        "GET /github.com/!burnt!sushi/toml/v2/@v/list",
    }
    assert catalog.package_name == "github.com/BurntSushi/toml"
    assert catalog.latest == "v1.4.0"
    assert catalog.release("v1.4.0") == Release("v1.4.0", T2)


@pytest.mark.anyio
async def test_retracted_version_is_yanked_and_never_latest(fake_registry: FakeRegistry) -> None:
    """A version retracted in the latest go.mod is yanked and latest falls back below it."""
    fake_registry.goproxy.add(
        "example.com/retracting",
        {"v1.0.0": T1, "v1.1.0": T2, "v1.2.0": T3},
        retracted={"v1.2.0": "corrupts the cache on Windows"},
    )
    catalog = await _catalog(fake_registry, "example.com/retracting")
    assert _yanked(catalog) == [("v1.0.0", False), ("v1.1.0", False), ("v1.2.0", True)]
    assert catalog.latest == "v1.1.0"
    routes = fake_registry.host("goproxy").requests_by_route
    assert routes["GET /example.com/retracting/@v/v1.2.0.mod"] == 1


@pytest.mark.anyio
async def test_retraction_only_release_is_retracted(fake_registry: FakeRegistry) -> None:
    """The release published only to retract (its own version in the interval) is retracted too."""
    fake_registry.goproxy.add(
        "example.com/oops",
        {"v1.0.0": T1, "v1.0.1": T2, "v1.0.2": T3},
        go_mod_extra="retract (\n\tv1.0.1 // broken\n\tv1.0.2 // contains retractions only\n)",
    )
    catalog = await _catalog(fake_registry, "example.com/oops")
    assert _yanked(catalog) == [("v1.0.0", False), ("v1.0.1", True), ("v1.0.2", True)]
    assert catalog.latest == "v1.0.0"


@pytest.mark.anyio
async def test_retraction_interval(fake_registry: FakeRegistry) -> None:
    """``retract [low, high]`` covers both ends and everything between, and nothing else."""
    fake_registry.goproxy.add(
        "example.com/interval",
        {"v1.0.0": T1, "v1.0.3": T1, "v1.0.5": T1, "v1.0.6": T2, "v1.1.0": T3},
        go_mod_extra="retract [v1.0.0, v1.0.5] // wrong branch",
    )
    catalog = await _catalog(fake_registry, "example.com/interval")
    assert [r.version for r in catalog.releases if r.yanked] == ["v1.0.0", "v1.0.3", "v1.0.5"]
    assert catalog.latest == "v1.1.0"


@pytest.mark.anyio
async def test_only_incompatible_versions_give_a_latest(fake_registry: FakeRegistry) -> None:
    """A module with only ``+incompatible`` versions (github.com/docker/docker) has a latest.

    The go command hides ``+incompatible`` versions only when a compatible version exists;
    here none does, so latest is the proxy's ``@latest``, the highest of them.
    """
    fake_registry.goproxy.add(
        "github.com/docker/docker",
        {"v20.10.27+incompatible": T1, "v27.3.1+incompatible": T2, "v28.5.2+incompatible": T3},
        latest="v28.5.2+incompatible",
    )
    catalog = await _catalog(fake_registry, "github.com/docker/docker")
    assert catalog.latest == "v28.5.2+incompatible"
    assert catalog.release("v28.5.2+incompatible") == Release("v28.5.2+incompatible", T3)


@pytest.mark.anyio
async def test_incompatible_shown_when_the_compatible_version_has_no_go_mod(
    fake_registry: FakeRegistry,
) -> None:
    """A v1 without a go.mod of its own beside ``+incompatible`` majors: they are shown.

    The proxy serves the one-line ``module`` stand-in for v1.13.1; the go command then keeps
    the ``+incompatible`` versions, and latest agrees with the proxy's ``@latest``.
    """
    fake_registry.goproxy.add(
        "github.com/docker/docker",
        {"v1.13.1": T1, "v20.10.27+incompatible": T2, "v27.3.1+incompatible": T3},
        latest="v27.3.1+incompatible",
        go_mod="module github.com/docker/docker\n",
    )
    catalog = await _catalog(fake_registry, "github.com/docker/docker")
    assert [r.version for r in catalog.releases] == [
        "v1.13.1",
        "v20.10.27+incompatible",
        "v27.3.1+incompatible",
    ]
    assert catalog.latest == "v27.3.1+incompatible"
    assert catalog.release("v27.3.1+incompatible") == Release("v27.3.1+incompatible", T3)
    routes = fake_registry.host("goproxy").requests_by_route
    assert routes["GET /github.com/docker/docker/@v/v1.13.1.mod"] == 1


@pytest.mark.anyio
async def test_incompatible_hidden_when_the_compatible_version_has_a_go_mod(
    fake_registry: FakeRegistry,
) -> None:
    """A compatible version with its own go.mod hides ``+incompatible``, whatever ``@latest`` says.

    The go command prefers it "even if offered by a proxy" (golang/go#34165).
    """
    fake_registry.goproxy.add(
        "github.com/russross/blackfriday",
        {"v1.5.2": T1, "v2.0.0+incompatible": T2},
        latest="v2.0.0+incompatible",
    )
    catalog = await _catalog(fake_registry, "github.com/russross/blackfriday")
    assert catalog.latest == "v1.5.2"


_INC2, _INC3 = "v2.0.0+incompatible", "v3.0.0+incompatible"


@pytest.mark.parametrize(
    ("versions", "at_latest", "has_go_mod", "retracted", "latest"),
    [
        ([_INC2, _INC3], None, None, (), _INC3),
        ([_INC2, _INC3], None, None, (_INC3,), _INC2),
        ([_INC2, "v3.0.0-rc.1+incompatible"], None, None, (), _INC2),
        (["v1.5.0", _INC2], None, None, (), "v1.5.0"),
        (["v1.5.0", _INC2], "v1.5.0", None, (), "v1.5.0"),
        (["v1.5.0", _INC2], _INC2, None, (), _INC2),
        (["v1.5.0", _INC2], _INC2, True, (), "v1.5.0"),
        (["v1.5.0", _INC2], "v1.5.0", False, (), _INC2),
        (["v1.5.0", _INC2], None, False, (), _INC2),
    ],
)
def test_incompatible_hidden_only_beside_a_compatible_go_mod(
    versions: list[str],
    at_latest: str | None,
    has_go_mod: bool | None,  # noqa: FBT001 - a parametrized value
    retracted: tuple[str, ...],
    latest: str,
) -> None:
    """``+incompatible`` versions are hidden only beside a compatible version with a go.mod.

    Unknown go.mod (``None``): the proxy's ``@latest`` decides.
    """
    catalog = goproxy.build_catalog(
        versions,
        package_name="example.com/lib",
        fetched_at=T3,
        latest=goproxy.LatestInfo(at_latest, T3) if at_latest else None,
        retractions=[Retraction(v, v) for v in retracted],
        compatible_has_go_mod=has_go_mod,
    )
    assert catalog.latest == latest


@pytest.mark.parametrize(
    ("text", "stand_in"),
    [
        ("module example.com/lib\n", True),
        ('module "example.com/lib"\n', True),
        ("module example.com/lib\n\ngo 1.21\n", False),
        ("module example.com/other\n", False),
    ],
)
def test_stand_in_go_mod(text: str, stand_in: bool) -> None:  # noqa: FBT001 - parametrized
    """Only the one-line ``module <path>`` document is the stand-in for a missing go.mod."""
    assert goproxy.is_stand_in_go_mod(text, "example.com/lib") is stand_in


@pytest.mark.anyio
async def test_pseudo_version_only_module(fake_registry: FakeRegistry) -> None:
    """With an empty list the catalog is @latest's pseudo-version, dated by its Time."""
    pseudo = "v0.0.0-20240301093000-0123456789ab"
    fake_registry.goproxy.add("example.com/untagged", {pseudo: T1})
    catalog = await _catalog(fake_registry, "example.com/untagged")
    assert catalog.releases == (Release(pseudo, T1),)
    assert catalog.latest == pseudo
    assert fake_registry.host("goproxy").requests == 4  # with the /v2 probe


@pytest.mark.anyio
async def test_missing_latest_is_tolerated_with_a_list(fake_registry: FakeRegistry) -> None:
    """A 404 from @latest leaves every time unknown but the list still gives versions."""
    fake_registry.goproxy.add(
        "example.com/nolatest", {"v1.0.0": T1, "v1.1.0": T2}, latest="v9.9.9", retracted={"v1.1.0"}
    )
    catalog = await _catalog(fake_registry, "example.com/nolatest")
    assert catalog.releases == (Release("v1.0.0", None), Release("v1.1.0", None, yanked=True))
    assert catalog.latest == "v1.0.0"


@pytest.mark.anyio
@pytest.mark.parametrize("status", [404, 410])
async def test_unknown_module_is_not_found(fake_registry: FakeRegistry, status: int) -> None:
    """A 404 or 410 from the proxy means the module is not there."""
    fake_registry.goproxy.missing_status = status
    with pytest.raises(PackageNotFound, match=rf"'example.com/nope' not found \({status}"):
        await _catalog(fake_registry, "example.com/nope")


@pytest.mark.anyio
async def test_other_error_is_registry_error(fake_registry: FakeRegistry) -> None:
    """A 403 from the proxy is a registry error, not "not found"."""
    fake_registry.goproxy.add("example.com/forbidden", {"v1.0.0": T1})
    fake_registry.host("goproxy").fail_next(2, status=403, headers={})
    with pytest.raises(RegistryError, match="HTTP 403"):
        await _catalog(fake_registry, "example.com/forbidden")


def test_parse_retractions_fixture() -> None:
    """Single, interval, block and quoted entries are read with rationales; bad ones skipped."""
    go_mod = (FIXTURES / "retract-block.mod").read_text()
    assert goproxy.parse_retractions(go_mod) == (
        Retraction("v2.0.1", "v2.0.1", "published by accident"),
        Retraction("v2.1.0", "v2.1.3", "wrong branch"),
        Retraction("v2.4.0", "v2.4.0", "corrupts cache on Windows"),
        Retraction("v2.2.0", "v2.2.5", "published from wrong branch"),
        Retraction("v2.6.0", "v2.6.0", None),
        Retraction("v2.8.0", "v2.8.0", None),
    )


def test_build_catalog_with_fixture_retractions() -> None:
    """The fixture's retractions yank exactly the covered versions and latest skips them."""
    retractions = goproxy.parse_retractions((FIXTURES / "retract-block.mod").read_text())
    versions = ["v2.0.0", "v2.0.1", "v2.1.2", "v2.2.5", "v2.3.0", "v2.4.0", "v2.6.0", "v2.8.0"]
    catalog = goproxy.build_catalog(
        versions, package_name="example.com/widget/v2", fetched_at=FETCHED, retractions=retractions
    )
    assert [r.version for r in catalog.releases if not r.yanked] == ["v2.0.0", "v2.3.0"]
    assert catalog.latest == "v2.3.0"
    assert catalog.fetched_at == FETCHED


def test_derive_sorts_dedups_and_drops_invalid() -> None:
    """The compact list holds the unique valid versions in precedence order."""
    body = b"v1.10.0\nv1.2.0\n\nv1.2.0\nv1.2\nv2.0.0+incompatible\r\nv1.10.0-rc.1\nlatest\n"
    compact = goproxy.derive(body, package_name="example.com/m")
    assert orjson.loads(compact) == {
        "versions": ["v1.2.0", "v1.10.0-rc.1", "v1.10.0", "v2.0.0+incompatible"]
    }


def test_derive_rejects_non_utf8() -> None:
    """A list body that is not UTF-8 is an unusable document."""
    with pytest.raises(RegistryError, match="not UTF-8"):
        goproxy.derive(b"v1.0.0\n\xff\xfe", package_name="example.com/m")


@pytest.mark.parametrize(
    ("versions", "source"),
    [
        (["v1.0.0", "v1.1.0", "v1.2.0-rc.1"], "v1.1.0"),
        (["v1.2.0-rc.1", "v1.2.0-beta.2"], "v1.2.0-rc.1"),
        (["v1.5.0", "v2.0.0+incompatible"], "v1.5.0"),
        (["v2.0.0+incompatible"], "v2.0.0+incompatible"),
        ([], None),
    ],
)
def test_retraction_source(versions: list[str], source: str | None) -> None:
    """Retractions are read from the highest release, else the highest prerelease."""
    assert goproxy.retraction_source(versions) == source


@pytest.mark.anyio
async def test_unreachable_is_raised_unwrapped() -> None:
    """A transport failure on the concurrent @latest request surfaces as itself, not a group."""

    async def fetch(
        url: str,
        *,
        headers: Mapping[str, str] | None = None,
        representation: str = "raw",
        derive: Derive | None = None,
    ) -> FetchResponse:
        if url.endswith("/@latest"):
            msg = "ConnectError talking to proxy.golang.org"
            raise RegistryUnreachable(msg)
        content = b"v1.0.0\n"
        return FetchResponse(200, url, (), derive(content) if derive else content, FETCHED)

    with pytest.raises(RegistryUnreachable, match="ConnectError"):
        await goproxy.get_catalog(fetch, goproxy.DEFAULT_BASE_URL, "golang.org/x/mod")


@pytest.mark.parametrize(
    ("module", "successor"),
    [
        ("example.com/m", "example.com/m/v2"),
        ("example.com/m/v3", "example.com/m/v4"),
        ("example.com/m/v1", "example.com/m/v1/v2"),
        ("gopkg.in/yaml.v2", "gopkg.in/yaml.v3"),
    ],
)
def test_next_major_path(module: str, successor: str) -> None:
    """The next major version lives under the /vN+1 (or gopkg.in .vN+1) module path."""
    assert goproxy.next_major_path(module) == successor


@pytest.mark.anyio
async def test_new_major_module_path_is_reported(fake_registry: FakeRegistry) -> None:
    """A published /v2 module is reported as the successor with its newest stable version."""
    fake_registry.goproxy.add("example.com/lib", {"v1.0.0": T1})
    fake_registry.goproxy.add("example.com/lib/v2", {"v2.0.0": T1, "v2.1.0": T2, "v2.2.0-rc.1": T3})
    catalog = await _catalog(fake_registry, "example.com/lib")
    assert catalog.successor == "example.com/lib/v2 v2.1.0"
    # Its releases are the module's: a new major is a major update (Renovate's go datasource).
    assert catalog.latest == "v2.1.0"
    assert [r.version for r in catalog.releases] == ["v1.0.0", "v2.0.0", "v2.1.0", "v2.2.0-rc.1"]


@pytest.mark.anyio
async def test_successive_new_majors_are_probed_until_one_is_missing(
    fake_registry: FakeRegistry,
) -> None:
    """/v2, /v3 … are probed until a 404 (renovatebot/renovate#19112); the highest is reported."""
    fake_registry.goproxy.add("github.com/acme/retracty", {"v1.0.0": T1})
    fake_registry.goproxy.add("github.com/acme/retracty/v2", {"v2.1.0": T1})
    fake_registry.goproxy.add(
        "github.com/acme/retracty/v3", {"v3.0.0": T2, "v3.1.0": T3}, retracted={"v3.1.0": "oops"}
    )
    fake_registry.goproxy.add("github.com/acme/modv2/v2", {"v2.0.0": T1})
    fake_registry.goproxy.add("github.com/acme/modv2/v3", {"v3.0.0": T1})
    fake_registry.goproxy.add("github.com/acme/modv2/v4", {"v4.1.0": T2})
    fake_registry.goproxy.add("gopkg.in/yaml.v2", {"v2.4.0": T1})
    fake_registry.goproxy.add("gopkg.in/yaml.v3", {"v3.0.1": T2})

    retracty = await _catalog(fake_registry, "github.com/acme/retracty")
    assert retracty.successor == "github.com/acme/retracty/v3 v3.0.0"
    assert retracty.latest == "v3.0.0"
    assert [(r.version, r.yanked) for r in retracty.releases][-1] == ("v3.1.0", True)
    modv2 = await _catalog(fake_registry, "github.com/acme/modv2/v2")
    assert modv2.successor == "github.com/acme/modv2/v4 v4.1.0"
    yaml = await _catalog(fake_registry, "gopkg.in/yaml.v2")
    assert yaml.successor == "gopkg.in/yaml.v3 v3.0.1"
    assert (retracty.note, retracty.caveat) == (None, None)
    routes = fake_registry.host("goproxy").requests_by_route
    assert "GET /github.com/acme/retracty/v4/@v/list" in routes
    assert "GET /github.com/acme/modv2/v5/@v/list" in routes
    assert "GET /gopkg.in/yaml.v4/@v/list" in routes


@pytest.mark.anyio
async def test_the_major_probing_bound_is_said_on_the_catalog(
    fake_registry: FakeRegistry, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Probing stops after ``MAX_MAJOR_PROBES`` paths, and the catalog's note says so."""
    monkeypatch.setattr(goproxy, "MAX_MAJOR_PROBES", 2)
    fake_registry.goproxy.add("example.com/many", {"v1.0.0": T1})
    fake_registry.goproxy.add("example.com/many/v2", {"v2.0.0": T1})
    fake_registry.goproxy.add("example.com/many/v3", {"v3.0.0": T1})
    fake_registry.goproxy.add("example.com/many/v4", {"v4.0.0": T1})
    catalog = await _catalog(fake_registry, "example.com/many")
    assert catalog.successor == "example.com/many/v3 v3.0.0"
    assert catalog.note == (
        "newer majors probed up to example.com/many/v3 (2 at most): a newer one may exist"
    )
    assert "GET /example.com/many/v4/@v/list" not in fake_registry.host("goproxy").requests_by_route


def test_a_version_of_a_newer_major_is_dated_under_its_own_path() -> None:
    """``.info`` of a newer major's version is asked under that major's module path."""
    assert goproxy.version_path("example.com/m", "v1.2.0") == "example.com/m"
    assert goproxy.version_path("example.com/m", "v3.0.0") == "example.com/m/v3"
    assert goproxy.version_path("example.com/m", "v3.0.0+incompatible") == "example.com/m"
    assert goproxy.version_path("example.com/m/v2", "v4.1.0") == "example.com/m/v4"
    assert goproxy.version_path("gopkg.in/yaml.v2", "v3.0.1") == "gopkg.in/yaml.v3"


@pytest.mark.anyio
async def test_goproxy_list_falls_back_like_the_go_command() -> None:
    """``a,b``: b is asked when a lacks the module; ``a|b``: also when a fails; else a's error."""
    from tests.fake_registry import FakeRegistry  # noqa: PLC0415 - two registries, not the fixture

    with FakeRegistry() as first, FakeRegistry() as second:
        second.goproxy.add("example.com/only-second", {"v1.0.0": T1})
        a, b = first.url("goproxy"), second.url("goproxy")

        async def no_sleep(_seconds: float) -> None:
            """Retries back off instantly here."""

        async with make_client() as client:
            fetcher = Fetcher(client, timer=Timer(sleep=no_sleep))
            found = await goproxy.get_catalog(fetcher, f"{a},{b}", "example.com/only-second")
            assert found.latest == "v1.0.0"
            first.host("goproxy").server_error_next(20)
            with pytest.raises(RegistryError):
                await goproxy.get_catalog(fetcher, f"{a},{b}", "example.com/only-second")
            first.host("goproxy").server_error_next(20)
            piped = await goproxy.get_catalog(fetcher, f"{a}|{b}", "example.com/only-second")
            assert piped.latest == "v1.0.0"


@pytest.mark.anyio
async def test_failed_new_major_check_is_a_caveat_not_an_error(
    fake_registry: FakeRegistry,
) -> None:
    """The module's versions are known; a failing ``/v2`` probe is said on the row, not fatal."""
    fake_registry.goproxy.add("example.com/solid", {"v1.0.0": T1, "v1.1.0": T2})

    async with make_client() as client:
        fetcher = Fetcher(client)

        async def flaky_probe(
            url: str,
            *,
            headers: Mapping[str, str] | None = None,
            representation: str = "raw",
            derive: Derive | None = None,
        ) -> FetchResponse:
            if "/v2/" in url:
                msg = "goproxy.test is unreachable (ConnectError)"
                raise RegistryUnreachable(msg)
            return await fetcher(url, headers=headers, representation=representation, derive=derive)

        catalog = await goproxy.get_catalog(
            flaky_probe, fake_registry.url("goproxy"), "example.com/solid"
        )
    assert [r.version for r in catalog.releases] == ["v1.0.0", "v1.1.0"]
    assert catalog.latest == "v1.1.0"
    assert catalog.successor is None
    assert catalog.caveat == (
        "could not check for a newer major (example.com/solid/v2): "
        "goproxy.test is unreachable (ConnectError)"
    )


@pytest.mark.anyio
async def test_a_403_on_a_newer_major_path_ends_the_probing(fake_registry: FakeRegistry) -> None:
    """A mirror's 403 for a newer major path is "not here", as Renovate takes it, no failure."""
    fake_registry.goproxy.add("example.com/mirrored", {"v1.0.0": T1})
    fake_registry.goproxy.add("example.com/mirrored/v2", {"v2.0.0": T1})
    fake_registry.goproxy.add("example.com/mirrored/v3", {"v3.0.0": T1})
    fake_registry.host("goproxy").fail_next(
        1, 403, {}, route="GET /example.com/mirrored/v3/@v/list"
    )
    catalog = await _catalog(fake_registry, "example.com/mirrored")
    assert (catalog.successor, catalog.caveat) == ("example.com/mirrored/v2 v2.0.0", None)


def test_a_goproxy_list_is_read_like_the_go_command() -> None:
    """``,`` falls through on not-found only, ``|`` on any error; ``direct``/``off`` end it."""
    assert goproxy.proxy_chain("https://a,https://b|https://c") == [
        ("https://a", False),
        ("https://b", True),
        ("https://c", False),
    ]
    assert goproxy.proxy_chain("https://a|https://b,direct,https://c") == [
        ("https://a", True),
        ("https://b", False),
    ]
    assert goproxy.proxy_chain(" https://a ,off") == [("https://a", False)]
    assert goproxy.proxy_chain("https://only") == [("https://only", False)]


@pytest.mark.anyio
async def test_info_times_and_go_mods_fall_back_along_the_list_like_the_catalog() -> None:
    """``.info`` and ``.mod`` walk ``a,b`` / ``a|b`` as ``@v/list`` does: b answers for a.

    Only b has the module: after ``,`` its 404s fall through, so the times and requirements
    are b's (the first proxy alone gave none). A server error at a falls through after ``|``
    and is the failure after ``,``; a version neither has is ``Unavailable`` (a listed
    version's missing ``.info`` is a failed date lookup), naming the last proxy's 404.
    """
    from tests.fake_registry import FakeRegistry  # noqa: PLC0415 - two registries, not the fixture

    with FakeRegistry() as first, FakeRegistry() as second:
        second.goproxy.add(
            "example.com/only-second",
            {"v1.0.0": T1, "v1.1.0": T2},
            go_mod_extra="require example.com/dep v0.3.0\n",
        )
        a, b = first.url("goproxy"), second.url("goproxy")

        async def no_sleep(_seconds: float) -> None:
            """Retries back off instantly here."""

        async with make_client() as client:
            fetcher = Fetcher(client, timer=Timer(sleep=no_sleep))
            module, wanted = "example.com/only-second", ["v1.1.0", "v1.0.0", "v9.9.9"]
            times = await goproxy.release_times(fetcher, {"goproxy": f"{a},{b}"}, module, wanted)
            missing = Unavailable(
                f"Go module {module!r} v9.9.9 not found"
                f" (404 from {b}/example.com/only-second/v9/@v/v9.9.9.info)"
            )
            assert times == {"v1.1.0": T2, "v1.0.0": T1, "v9.9.9": missing}
            requires = await goproxy.dependencies(fetcher, f"{a},{b}", module, "v1.0.0")
            assert [(d.name, d.constraint) for d in requires] == [("example.com/dep", "v0.3.0")]
            first.host("goproxy").server_error_next(20)
            with pytest.raises(RegistryError, match="HTTP 503"):
                await goproxy.release_times(fetcher, {"goproxy": f"{a},{b}"}, module, ["v1.0.0"])
            first.host("goproxy").server_error_next(20)
            piped = await goproxy.release_times(fetcher, {"goproxy": f"{a}|{b}"}, module, wanted)
            assert piped == {"v1.1.0": T2, "v1.0.0": T1, "v9.9.9": missing}
        assert first.errors == second.errors == []
    assert "GET /example.com/only-second/@v/v1.0.0.info" in first.host("goproxy").requests_by_route


def _probed(registry: FakeRegistry) -> list[str]:
    """The ``@v/list`` paths asked, in request order, without the module's own."""
    host = registry.host("goproxy")
    return [r.removeprefix("GET /").removesuffix("/@v/list") for r in host.requests_by_route]


@pytest.mark.anyio
async def test_an_incompatible_module_is_probed_above_its_tags_major(
    fake_registry: FakeRegistry,
) -> None:
    """``jwt v3.2.2+incompatible``: /v3 (a gap), /v4, /v5, /v6 are probed; /v2 never is.

    The first module path above ``+incompatible`` tags of major 3 is /v4 (gomajor's reading);
    starting at /v2 stopped at its 404 and called the module up to date.
    """
    jwt = "github.com/golang-jwt/jwt"
    fake_registry.goproxy.add(jwt, {"v3.2.0+incompatible": T1, "v3.2.2+incompatible": T2})
    fake_registry.goproxy.add(f"{jwt}/v4", {"v4.0.0": T1, "v4.5.0": T2})
    fake_registry.goproxy.add(f"{jwt}/v5", {"v5.0.0": T2, "v5.2.1": T3})
    catalog = await _catalog(fake_registry, jwt)
    assert (catalog.successor, catalog.latest) == (f"{jwt}/v5 v5.2.1", "v5.2.1")
    assert catalog.path_latest == "v3.2.2+incompatible"
    lists = [p for p in _probed(fake_registry) if "/@" not in p and p != jwt]
    assert lists == [f"{jwt}/v3", f"{jwt}/v4", f"{jwt}/v5", f"{jwt}/v6"]
    assert (catalog.note, catalog.caveat) == (None, None)


@pytest.mark.anyio
async def test_go_redis_v6_incompatible_finds_v8(fake_registry: FakeRegistry) -> None:
    """``go-redis v6.15.9+incompatible``: /v7 and /v8 are found, without asking /v2 … /v5."""
    redis = "github.com/go-redis/redis"
    fake_registry.goproxy.add(redis, {"v6.15.9+incompatible": T1})
    fake_registry.goproxy.add(f"{redis}/v7", {"v7.4.1": T2})
    fake_registry.goproxy.add(f"{redis}/v8", {"v8.11.5": T3})
    catalog = await _catalog(fake_registry, redis)
    assert (catalog.successor, catalog.latest) == (f"{redis}/v8 v8.11.5", "v8.11.5")
    routes = fake_registry.host("goproxy").requests_by_route
    assert not any(f"{redis}/v{n}/@v/list" in r for n in range(2, 6) for r in routes)
    assert f"GET /{redis}/v9/@v/list" in routes


@pytest.mark.anyio
async def test_a_hidden_incompatible_major_makes_a_gap_the_probing_crosses(
    fake_registry: FakeRegistry,
) -> None:
    """v1 with a go.mod, a hidden ``v3.0.0+incompatible`` tag, and /v4: /v2 and /v3 are gaps."""
    fake_registry.goproxy.add("example.com/gap", {"v1.2.0": T1, "v3.0.0+incompatible": T2})
    fake_registry.goproxy.add("example.com/gap/v4", {"v4.1.0": T3})
    catalog = await _catalog(fake_registry, "example.com/gap")
    assert (catalog.successor, catalog.latest, catalog.path_latest) == (
        "example.com/gap/v4 v4.1.0",
        "v4.1.0",
        "v1.2.0",
    )
    routes = fake_registry.host("goproxy").requests_by_route
    for n in (2, 3, 4, 5):
        assert f"GET /example.com/gap/v{n}/@v/list" in routes
    assert "GET /example.com/gap/v6/@v/list" not in routes


@pytest.mark.anyio
async def test_a_hidden_incompatible_tag_is_never_offered_like_go_sqlite3(
    fake_registry: FakeRegistry,
) -> None:
    """go-sqlite3's stray ``v2.0.3+incompatible`` (gomajor #20): v1.14.x stays latest."""
    sqlite = "github.com/mattn/go-sqlite3"
    fake_registry.goproxy.add(
        sqlite, {"v1.14.16": T1, "v1.14.22": T2, "v2.0.3+incompatible": T1}, latest="v1.14.22"
    )
    catalog = await _catalog(fake_registry, sqlite)
    assert (catalog.latest, catalog.successor, catalog.note) == ("v1.14.22", None, None)
    routes = fake_registry.host("goproxy").requests_by_route
    assert [r for r in routes if r.endswith("/@v/list") and "/v" in r.split(sqlite)[1]] == [
        f"GET /{sqlite}/v2/@v/list",
        f"GET /{sqlite}/v3/@v/list",
    ]


@pytest.mark.anyio
async def test_a_jump_no_tag_announces_is_not_probed_for(fake_registry: FakeRegistry) -> None:
    """v1 tags only and a /v4 path: one /v2 probe, as Renovate and gomajor (documented limit)."""
    fake_registry.goproxy.add("example.com/jump", {"v1.0.0": T1})
    fake_registry.goproxy.add("example.com/jump/v4", {"v4.0.0": T1})
    catalog = await _catalog(fake_registry, "example.com/jump")
    assert (catalog.successor, catalog.latest) == (None, "v1.0.0")
    assert fake_registry.host("goproxy").requests == 4


@pytest.mark.parametrize(
    ("module", "named", "shown", "planned"),
    [
        ("example.com/m", ["v1.0.0"], False, [2]),
        ("example.com/m", ["v3.2.2+incompatible"], True, [3, 4]),
        ("example.com/m", ["v1.14.0", "v2.0.3+incompatible"], False, [2, 3]),
        (
            "example.com/m",
            ["v1.0.0", "v2.0.0+incompatible", "v3.1.0+incompatible"],
            False,
            [2, 3, 4],
        ),
        (
            "example.com/m",
            ["v1.13.1", "v17.0.0+incompatible", "v28.5.2+incompatible"],
            True,
            [28, 29],
        ),
        ("example.com/m/v2", ["v2.1.0"], False, [3]),
        ("gopkg.in/yaml.v2", ["v2.4.0"], False, [3]),
        ("gopkg.in/yaml", ["v1.0.0"], False, []),
    ],
)
def test_which_majors_are_probed_first(
    module: str,
    named: list[str],
    shown: bool,  # noqa: FBT001 - a parametrized value
    planned: list[int],
) -> None:
    """Each major the list names above the path's, then the next one; shown tags raise the floor."""
    assert goproxy._probe_majors(module, named, incompatible_shown=shown) == planned


@pytest.mark.anyio
async def test_a_module_with_only_prereleases_has_its_newest_prerelease_as_latest(
    fake_registry: FakeRegistry,
) -> None:
    """No stable version: latest is the highest prerelease, what ``@latest`` names too."""
    fake_registry.goproxy.add(
        "example.com/onlypre",
        {"v0.1.0-rc.1": T1, "v0.1.0-rc.2": T2, "v0.1.0-rc.3": T3},
        retracted={"v0.1.0-rc.3"},
    )
    catalog = await _catalog(fake_registry, "example.com/onlypre")
    assert catalog.latest == "v0.1.0-rc.2"


@pytest.mark.anyio
async def test_a_deprecated_module_is_said_without_another_request(
    fake_registry: FakeRegistry,
) -> None:
    """The latest go.mod's ``// Deprecated:`` comment is the catalog's note; still 4 requests."""
    fake_registry.goproxy.add(
        "example.com/depr",
        {"v1.0.0": T1, "v1.1.0": T2},
        deprecated="use example.com/depr2 instead.",
    )
    catalog = await _catalog(fake_registry, "example.com/depr")
    assert catalog.note == "module example.com/depr is deprecated: use example.com/depr2 instead."
    assert catalog.latest == "v1.1.0"
    assert fake_registry.host("goproxy").requests == 4


@pytest.mark.anyio
async def test_a_deprecated_successor_path_is_said_too(fake_registry: FakeRegistry) -> None:
    """The newest major path's own go.mod deprecation joins the catalog's note."""
    fake_registry.goproxy.add("example.com/lib", {"v1.0.0": T1})
    fake_registry.goproxy.add("example.com/lib/v2", {"v2.0.0": T2}, deprecated="moved to x.dev/lib")
    catalog = await _catalog(fake_registry, "example.com/lib")
    assert catalog.successor == "example.com/lib/v2 v2.0.0"
    assert catalog.note == "module example.com/lib/v2 is deprecated: moved to x.dev/lib"


@pytest.mark.parametrize(
    ("go_mod", "message"),
    [
        ("// Deprecated: use b instead.\nmodule a\n", "use b instead."),
        ("module a // Deprecated: use b\n\ngo 1.21\n", "use b"),
        (
            "// Package a does things.\n//\n// Deprecated: use b,\n// which is faster.\nmodule a\n",
            "use b, which is faster.",
        ),
        ('// Deprecated: gone\nmodule "a"\n', "gone"),
        ("// Deprecated: too far\n\nmodule a\n", None),
        ("// Deprecated:\nmodule a\n", None),
        ("// Not Deprecated: x\nmodule a\n", None),
        ("module a\n\n// Deprecated: after the module line\nrequire b v1.0.0\n", None),
        ("go 1.21\n", None),
    ],
)
def test_parse_deprecation(go_mod: str, message: str | None) -> None:
    """A ``Deprecated:`` paragraph of the comment above or beside ``module`` is the message."""
    assert goproxy.parse_deprecation(go_mod) == message


def test_own_path_catalog_keeps_the_module_path_and_names_the_successor() -> None:
    """A newer major's releases leave; latest is the path's own; the successor stays."""
    base = goproxy.build_catalog(
        ["v1.2.0", "v1.3.0"], package_name="example.com/m", fetched_at=FETCHED
    )
    majors = goproxy.NewerMajors((goproxy.NewerMajor("example.com/m/v2", ("v2.0.0", "v2.1.0")),))
    merged = goproxy.with_newer_majors(base, majors)
    assert merged.latest == "v2.1.0"
    own = goproxy.own_path_catalog(merged)
    assert [r.version for r in own.releases] == ["v1.2.0", "v1.3.0"]
    assert (own.latest, own.successor) == ("v1.3.0", "example.com/m/v2 v2.1.0")
    assert goproxy.own_path_catalog(base) is base


@pytest.mark.parametrize(
    ("version", "module", "fits"),
    [
        ("v1.2.0", "github.com/foo/bar", True),
        ("v0.3.0", "github.com/foo/bar", True),
        ("v0.0.0-20240101000000-abcdefabcdef", "github.com/foo/bar", True),
        ("v2.0.0", "github.com/foo/bar", False),
        ("v99999999999999999999.0.0", "github.com/foo/bar", False),
        ("v3.1.0+incompatible", "github.com/foo/bar", True),
        ("v1.0.0+incompatible", "github.com/foo/bar", False),
        ("v2.0.0", "github.com/foo/bar/v2", True),
        ("v2.1.0-rc.1", "github.com/foo/bar/v2", True),
        ("v1.2.0", "github.com/foo/bar/v2", False),
        ("v3.0.0", "github.com/foo/bar/v2", False),
        ("v2.0.0+incompatible", "github.com/foo/bar/v2", False),
        ("v2.4.0", "gopkg.in/yaml.v2", True),
        ("v3.0.0", "gopkg.in/yaml.v2", False),
        ("v1.0.0", "gopkg.in/yaml.v2", False),
        ("v0.0.0-20140101000000-abcdefabcdef", "gopkg.in/check.v1", True),
        ("v0.1.0", "gopkg.in/check.v1", False),
    ],
)
def test_fits_path_is_check_path_major(version: str, module: str, *, fits: bool) -> None:
    """A version fits a path as ``module.CheckPathMajor`` says (v0/v1 or +incompatible; vN)."""
    assert goproxy.fits_path(version, module) is fits


@pytest.mark.anyio
@pytest.mark.parametrize("huge", ["v2.0.0", "v99999999999999999999.0.0"])
async def test_a_list_naming_another_major_on_a_v1_path_is_filtered(
    fake_registry: FakeRegistry, huge: str
) -> None:
    """``@v/list`` of a v1 path listing v2.0.0: never a release; +incompatible stays."""
    versions = dict.fromkeys(("v1.0.0", "v1.2.0", huge, "v3.1.0+incompatible"), T1)
    fake_registry.goproxy.add("github.com/foo/bar", versions, latest="v1.2.0")
    catalog = await _catalog(fake_registry, "github.com/foo/bar")
    assert [r.version for r in catalog.releases] == ["v1.0.0", "v1.2.0", "v3.1.0+incompatible"]
    assert catalog.latest == "v1.2.0"


@pytest.mark.anyio
async def test_a_v2_path_keeps_only_v2_versions(fake_registry: FakeRegistry) -> None:
    """A /v2 path's list naming v1.5.0, v3.0.0 and v2.1.0+incompatible keeps only v2.x."""
    versions = dict.fromkeys(("v1.5.0", "v2.0.0", "v2.1.0+incompatible", "v3.0.0"), T1)
    fake_registry.goproxy.add("example.com/m/v2", versions, latest="v2.0.0")
    catalog = await _catalog(fake_registry, "example.com/m/v2")
    assert [r.version for r in catalog.releases] == ["v2.0.0"]
    assert catalog.latest == "v2.0.0"


@pytest.mark.anyio
async def test_a_latest_of_another_major_is_not_used(fake_registry: FakeRegistry) -> None:
    """An empty list and ``@latest`` naming v2.0.0 on a v1 path: an error saying why."""
    fake_registry.goproxy.add("example.com/m", {"v2.0.0": T1}, latest="v2.0.0")
    host = fake_registry.host("goproxy")
    handler = host.handler
    host.handler = lambda request: (
        text_reply("") if request.path.endswith("/@v/list") else handler(request)
    )
    with pytest.raises(RegistryError) as caught:
        await _catalog(fake_registry, "example.com/m")
    assert caught.value.reason == (
        "Go module 'example.com/m': @latest names v2.0.0, not a version of this path (a path"
        " without a /vN suffix takes v0, v1 or vN+incompatible; a /vN path only vN)"
    )


@pytest.mark.anyio
async def test_a_list_of_only_other_majors_without_latest_says_why(
    fake_registry: FakeRegistry,
) -> None:
    """Every listed version of another major and no usable ``@latest``: an error naming them."""
    fake_registry.goproxy.add("example.com/m", {"v2.0.0": T1, "v3.0.0": T1}, latest="v9.0.0")
    with pytest.raises(RegistryError) as caught:
        await _catalog(fake_registry, "example.com/m")
    assert caught.value.reason == (
        "Go module 'example.com/m': the proxy lists only versions the go command cannot use on"
        " this path (v2.0.0, v3.0.0; a path without a /vN suffix takes v0, v1 or"
        " vN+incompatible; a /vN path only vN)"
    )
