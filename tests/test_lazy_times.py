"""Publish times that registries do not give up front are fetched lazily, newest first."""

from __future__ import annotations

import importlib
from datetime import UTC, datetime, timedelta
from pathlib import Path
from typing import TYPE_CHECKING, Any, cast

import anyio
import pytest

from patchula.clock import FixedClock
from patchula.credentials import RegistryAccess
from patchula.datasource import DATASOURCES
from patchula.datasource.base import LazyTimes
from patchula.http.fetcher import Fetcher, make_client
from patchula.lookup import Lookups
from patchula.models import Catalog, Dependency, FetchResponse, Release
from patchula.policy.memo import EvaluationMemo
from patchula.scan import scan
from patchula.settings import Settings
from tests.fake_registry import FakeRegistry
from tests.faketime import FakeTime

if TYPE_CHECKING:
    from patchula.datasource.base import Fetch

NOW = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)


def _busy(registry: FakeRegistry, fetcher: Fetcher) -> bool:
    if any(s.in_flight for s in fetcher.stats.values()):
        return True
    return any(host._in_flight for host in registry.hosts.values())


@pytest.mark.anyio
async def test_crate_without_pubtime_costs_a_few_api_pages(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """300 versions without index pubtime: a few throttled API pages, never one per version."""
    versions = {f"1.{i}.0": NOW - timedelta(days=600 - 2 * i) for i in range(300)}
    versions["1.299.0"] = NOW - timedelta(hours=5)  # too young for a 3-day wait
    fake_registry.crates.add("bigcrate", versions, pubtime=False)
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "app"\n[dependencies]\nbigcrate = "=1.250.0"\n'
    )
    settings = Settings.model_validate(
        {
            "registries": {
                "crates": fake_registry.url("crates-index"),
                "crates-api": fake_registry.url("crates-api"),
            },
            "min_release_age": "3d",
        }
    )
    time = FakeTime(busy=lambda: _busy(fake_registry, fetcher))
    async with make_client() as client:
        fetcher = Fetcher(client, timer=time.timer())
        async with time.driving():
            result = await scan([str(tmp_path)], settings, fetcher, FixedClock(NOW))
    finding = result.repos[0].rows[0].finding
    assert (finding.current, finding.latest, finding.eligible) == ("1.250.0", "1.299.0", "1.298.0")
    assert [h.version for h in finding.held_back] == ["1.299.0"]
    assert finding.held_back[0].eligible_at == NOW - timedelta(hours=5) + timedelta(days=3)
    assert finding.libyears is not None
    # Every date the row shows came from the web API, and the row says so.
    assert finding.date_sources == (
        ("1.250.0", "web-api"),
        ("1.299.0", "web-api"),
        ("1.298.0", "web-api"),
    )
    api = fake_registry.host("crates-api")
    assert api.requests == 1  # the newest 100 versions hold current, latest and the candidates
    assert fake_registry.host("crates-index").requests == 1


@pytest.mark.anyio
async def test_crate_dates_from_the_index_say_so_without_an_api_request(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Index ``pubtime`` dates every version: the row names ``index``; the API is never asked."""
    fake_registry.crates.add(
        "small", {"1.0.0": NOW - timedelta(days=90), "1.1.0": NOW - timedelta(days=1)}
    )
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "app"\n[dependencies]\nsmall = "=1.0.0"\n'
    )
    settings = Settings.model_validate(
        {
            "registries": {
                "crates": fake_registry.url("crates-index"),
                "crates-api": fake_registry.url("crates-api"),
            },
            "min_release_age": "3d",
        }
    )
    async with make_client() as client:
        result = await scan([str(tmp_path)], settings, Fetcher(client), FixedClock(NOW))
    finding = result.repos[0].rows[0].finding
    assert (finding.status, finding.current, finding.latest) == ("held-back", "1.0.0", "1.1.0")
    assert finding.date_sources == (("1.0.0", "index"), ("1.1.0", "index"))
    assert fake_registry.host("crates-api").requests == 0


@pytest.mark.anyio
async def test_go_module_asks_info_only_for_what_the_policy_needs(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Go: .info is fetched for current and the newest held-back candidates, not every version."""
    versions = {f"v1.{i}.0": NOW - timedelta(days=300 - i) for i in range(40)}
    versions["v1.39.0"] = NOW - timedelta(hours=2)
    versions["v1.38.0"] = NOW - timedelta(hours=30)
    fake_registry.goproxy.add("example.com/big", versions)
    (tmp_path / "go.mod").write_text(
        "module example.com/app\n\ngo 1.22\n\nrequire example.com/big v1.10.0\n"
    )
    settings = Settings.model_validate(
        {"registries": {"goproxy": fake_registry.url("goproxy")}, "min_release_age": "3d"}
    )
    async with make_client() as client:
        result = await scan([str(tmp_path)], settings, Fetcher(client), FixedClock(NOW))
    rows = {r.dependency.name: r.finding for r in result.repos[0].rows}
    finding = rows["example.com/big"]
    assert (finding.eligible, [h.version for h in finding.held_back]) == (
        "v1.37.0",
        ["v1.38.0", "v1.39.0"],
    )
    infos = sorted(
        r for r in fake_registry.host("goproxy").requests_by_route if r.endswith(".info")
    )
    assert infos == [
        "GET /example.com/big/@v/v1.10.0.info",
        "GET /example.com/big/@v/v1.37.0.info",
        "GET /example.com/big/@v/v1.38.0.info",
    ]


@pytest.mark.anyio
async def test_every_row_of_a_package_gets_the_times(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Times looked up for one row serve every row of that package: same verdict everywhere."""
    fake_registry.goproxy.add(
        "example.com/w", {"v0.6.2": NOW - timedelta(days=300), "v0.6.3": NOW - timedelta(days=30)}
    )
    for sub in ("a", "b", "c"):
        (tmp_path / sub).mkdir()
        (tmp_path / sub / "go.mod").write_text(
            f"module example.com/{sub}\n\nrequire example.com/w v0.6.2\n"
        )
    settings = Settings.model_validate(
        {"registries": {"goproxy": fake_registry.url("goproxy")}, "min_release_age": "3d"}
    )
    async with make_client() as client:
        result = await scan([str(tmp_path)], settings, Fetcher(client), FixedClock(NOW))
    rows = [r.finding for r in result.repos[0].rows if r.dependency.name == "example.com/w"]
    assert [(f.status, f.eligible, f.libyears is not None) for f in rows] == [
        ("outdated", "v0.6.3", True)
    ] * 3
    # One source of dates (the catalog's timeSource says it): no per-date word.
    assert {f.date_sources for f in rows} == {()}
    infos = [
        r for r in fake_registry.host("goproxy").requests_by_route.items() if r[0].endswith(".info")
    ]
    assert all(count == 1 for _, count in infos)


@pytest.mark.anyio
async def test_go_rows_of_one_repository_look_up_times_concurrently(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Three modules of one go.mod: their .info lookups are in flight together, rows in order."""
    names = ["example.com/c", "example.com/a", "example.com/b"]
    for name in names:
        fake_registry.goproxy.add(
            name, {"v1.0.0": NOW - timedelta(days=300), "v1.1.0": NOW - timedelta(days=30)}
        )
    (tmp_path / "go.mod").write_text(
        "module example.com/app\n\nrequire (\n"
        + "".join(f"\t{name} v1.0.0\n" for name in names)
        + ")\n"
    )
    settings = Settings.model_validate({"registries": {"goproxy": fake_registry.url("goproxy")}})
    asking: set[str] = set()
    all_asking = anyio.Event()
    async with make_client() as client:
        fetcher = Fetcher(client)

        async def fetch(url: str, **kwargs: Any) -> FetchResponse:
            if url.endswith(".info"):
                # Held until every module asks at once: rows evaluated one after another
                # would never get there (the guard below fails the test instead of hanging).
                asking.add(url.split("/@v/", maxsplit=1)[0])
                if len(asking) == len(names):
                    all_asking.set()
                await all_asking.wait()
            return await fetcher(url, **kwargs)

        with anyio.fail_after(2):
            result = await scan([str(tmp_path)], settings, fetch, FixedClock(NOW))
    rows = result.repos[0].rows
    assert [r.dependency.name for r in rows] == names
    assert [(r.finding.status, r.finding.libyears is not None) for r in rows] == [
        ("outdated", True)
    ] * 3


@pytest.mark.anyio
async def test_a_run_evaluates_with_its_own_memo_not_the_process_one(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Catalog views and verdicts live for one run: the process-wide memo is never consulted."""
    # The module, not the function ``patchula.policy`` re-exports under the same name.
    evaluate_module = importlib.import_module("patchula.policy.evaluate")

    class Refusing(EvaluationMemo):
        def entry(self, *_: object, **__: object) -> Any:
            raise AssertionError("the process-wide memo was used by a run")

    monkeypatch.setattr(evaluate_module, "MEMO", Refusing())
    fake_registry.npm.add("left-pad", {"1.0.0": NOW - timedelta(days=90)})
    for name in ("a", "b"):
        (tmp_path / name).mkdir()
        (tmp_path / name / "package.json").write_text('{"dependencies": {"left-pad": "^1.0.0"}}')
    settings = Settings.model_validate({"registries": {"npm": fake_registry.url("npm")}})
    async with make_client() as client:
        result = await scan(
            [str(tmp_path / "a"), str(tmp_path / "b")], settings, Fetcher(client), FixedClock(NOW)
        )
    findings = [repo.rows[0].finding for repo in result.repos]
    assert [(f.current, f.latest, f.status) for f in findings] == [
        ("1.0.0", "1.0.0", "up-to-date")
    ] * 2


@pytest.mark.anyio
async def test_a_date_the_catalog_has_keeps_its_source_when_a_lazy_answer_dates_it_too(
    monkeypatch: pytest.MonkeyPatch, tmp_path: Path
) -> None:
    """Index-dated 1.0.0 says ``index``; the lazily dated 1.1.0 and 1.2.0 say ``web-api``.

    The lazy answer dates every version (as crates.io's API pages do), 1.0.0 with another
    time: the catalog's own date and its source are kept.
    """
    index_date = NOW - timedelta(days=90)

    async def api_times(
        fetch: object, registries: object, package_name: str, versions: object
    ) -> dict[str, datetime | None]:
        return {
            "1.0.0": NOW - timedelta(days=91),
            "1.1.0": NOW - timedelta(days=30),
            "1.2.0": NOW - timedelta(hours=5),
        }

    crates = DATASOURCES["crates"]
    lazy = LazyTimes(api_times, for_libyears=False, source="web-api", catalog_source="index")
    monkeypatch.setattr(crates, "release_times", lazy)
    catalog = Catalog(
        datasource="crates",
        package_name="mixed",
        releases=(
            Release("1.0.0", index_date),
            Release("1.1.0", None),
            Release("1.2.0", None),
        ),
        latest="1.2.0",
        fetched_at=NOW,
    )
    dep = Dependency(
        manager="cargo_toml",
        file="Cargo.toml",
        line=4,
        name="mixed",
        package_name="mixed",
        datasource="crates",
        versioning="cargo",
        dep_type="dependencies",
        declared="=1.0.0",
        constraint="=1.0.0",
    )
    settings = Settings.model_validate({"min_release_age": "3d"})
    access = RegistryAccess(settings, env={}, home=tmp_path)
    async with anyio.create_task_group() as tg:
        lookups = Lookups(tg, cast("Fetch", object()), settings, access)
        key = lookups.key("crates", "mixed", access.for_checkout(None))
        policy = settings.release_age_policy()
        _, finding = await lookups.evaluate(dep, catalog, policy, NOW, None, key)
    assert (finding.current, finding.latest, finding.eligible) == ("1.0.0", "1.2.0", "1.1.0")
    assert finding.current_released_at == index_date
    assert finding.date_sources == (("1.0.0", "index"), ("1.2.0", "web-api"), ("1.1.0", "web-api"))


@pytest.mark.anyio
async def test_a_crate_pinned_with_other_build_metadata_is_dated_by_its_release(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``=0.11.0+old`` names the index's ``0.11.0+new``: current as written, its web-API date.

    Build metadata does not count (SemVer 2.0.0 §10): the row is that release, never behind it.
    """
    versions = {
        "0.10.0+new": NOW - timedelta(days=400),
        "0.11.0+new": NOW - timedelta(days=200),
        "0.12.0+new": NOW - timedelta(hours=5),
    }
    fake_registry.crates.add("wasi", versions, pubtime=False)
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "app"\n[dependencies]\nwasi = "=0.11.0+old"\n'
    )
    settings = Settings.model_validate(
        {
            "registries": {
                "crates": fake_registry.url("crates-index"),
                "crates-api": fake_registry.url("crates-api"),
            },
            "min_release_age": "3d",
        }
    )
    async with make_client() as client:
        result = await scan([str(tmp_path)], settings, Fetcher(client), FixedClock(NOW))
    finding = result.repos[0].rows[0].finding
    assert (finding.status, finding.current, finding.latest) == (
        "held-back",
        "0.11.0+old",
        "0.12.0+new",
    )
    assert [h.version for h in finding.held_back] == ["0.12.0+new"]
    assert finding.current_released_at == NOW - timedelta(days=200)
    assert finding.date_sources == (("0.11.0+old", "web-api"), ("0.12.0+new", "web-api"))
    assert finding.reason == (
        "0.11.0+old is published as 0.11.0+new: build metadata does not count"
        " (SemVer 2.0.0 §10; Cargo ignores it in requirements)"
    )
