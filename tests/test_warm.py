"""``cache warm``'s worker pool against the fake registry: a graph, a cycle, depth, retries."""

from __future__ import annotations

import json
import sqlite3
from collections.abc import AsyncIterator, Mapping
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio
import anyio.lowlevel
import pytest

from patchula.cache import Cache, tasks
from patchula.cli.warm import failed_json
from patchula.credentials import RegistryAccess
from patchula.errors import NotCached, RegistryError
from patchula.http.fetcher import MAX_RETRIES, Fetcher, Timer
from patchula.lookup import Lookups
from patchula.models import Catalog, Release
from patchula.scan import extract_targets
from patchula.settings import Settings
from patchula.warm import (
    RECORD_BATCH,
    TaskRecorder,
    Warmer,
    _locked,
    choose_version,
    enqueue_targets,
    pins_of,
)
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)
EPOCH = datetime(2026, 11, 30, 12, 0, tzinfo=UTC)
# Requests one failed lookup attempt makes: the first and the fetcher's own retries of a 500.
REQUESTS_PER_ATTEMPT = MAX_RETRIES + 1


@dataclass
class FakeClock:
    """Wall time that moves only when the warmer sleeps (never really waiting)."""

    t: float = 0.0
    sleeps: list[float] = field(default_factory=list)

    def now(self) -> datetime:
        """The fake wall time."""
        return EPOCH + timedelta(seconds=self.t)

    async def sleep(self, seconds: float) -> None:
        """Move the clock ``seconds`` on at once."""
        self.sleeps.append(seconds)
        self.t += max(seconds, 0.0)
        await anyio.lowlevel.checkpoint()


async def _no_sleep(_seconds: float) -> None:
    """The fetcher's own back-off between retries of a 500 takes no time in these tests."""
    await anyio.lowlevel.checkpoint()


def _add(registry: FakeRegistry, name: str, deps: Mapping[str, str] | None = None) -> None:
    registry.npm.add(name, {"1.0.0": OLD, "1.1.0": OLD}, dependencies={"1.1.0": deps or {}})


def graph(registry: FakeRegistry) -> None:
    """Packages depending on others, a cycle, a chain of 13, one broken, one flaky."""
    _add(registry, "app-a", {"lib-b": "^1.0.0", "lib-c": "~1.1.0"})
    _add(registry, "lib-b", {"lib-c": "^1.0.0", "cyc-x": "^1.0.0"})
    _add(registry, "lib-c", {"flaky": "^1.0.0", "broken": "^1.0.0"})
    _add(registry, "cyc-x", {"cyc-y": "^1.0.0"})
    _add(registry, "cyc-y", {"cyc-x": "^1.0.0"})
    _add(registry, "flaky")
    _add(registry, "broken")
    for index in range(13):
        _add(registry, f"chain-{index}", {f"chain-{index + 1}": "^1.0.0"} if index < 12 else {})
    npm = registry.host("npm")
    npm.server_error_next(1000, 500, route="GET /broken")
    npm.server_error_next(2 * REQUESTS_PER_ATTEMPT, 500, route="GET /flaky")


def checkout(root: Path, deps: Mapping[str, str]) -> Path:
    """A checkout whose package.json declares ``deps``."""
    root.mkdir(parents=True, exist_ok=True)
    (root / "package.json").write_text(json.dumps({"dependencies": dict(deps)}))
    return root


@asynccontextmanager
async def warmer(
    registry: FakeRegistry,
    cache_path: Path,
    clock: FakeClock,
    *,
    workers: int = 5,
    max_depth: int = 10,
    npm_url: str | None = None,
    home: Path | None = None,
) -> AsyncIterator[Warmer]:
    """A Warmer on ``cache_path`` pointed at the fake registry, with the fake clock.

    With ``home``, npm's registry is that of ``home/.npmrc`` (then a checkout's wins).
    """
    npm = {} if home is not None else {"npm": npm_url or registry.url("npm")}
    settings = Settings(registries={**npm, "pypi": registry.url("pypi")})
    access = RegistryAccess(settings, home=home)
    async with Cache.open(cache_path) as cache:
        timer = Timer(monotonic=lambda: clock.t, wall=clock.now, sleep=_no_sleep)
        fetcher = Fetcher(cache=cache, credentials=access, timer=timer)
        try:
            yield Warmer(
                cache,
                fetcher,
                access,
                access.for_checkout(None),
                clock=clock,
                sleep=clock.sleep,
                workers=workers,
                max_depth=max_depth,
            )
        finally:
            await fetcher.aclose()


async def enqueue(w: Warmer, root: Path) -> list[int | None]:
    """Enqueue the dependencies ``root`` declares, looked up on the warmer's registries."""
    _, found = extract_targets([str(root)], Settings())
    new, views = enqueue_targets(found, w._access)
    w.pinned.update(pins_of(found))
    return await w.enqueue(new, views)


def rows(cache_path: Path) -> dict[str, tuple[str, int, int, str | None]]:
    """Package → (status, attempts, depth, error) of every task in the file."""
    with sqlite3.connect(cache_path) as conn:
        found = conn.execute(
            "SELECT package, status, attempts, depth, error_message FROM lookup_tasks"
        ).fetchall()
    return {r[0]: (r[1], r[2], r[3], r[4]) for r in found}


@pytest.mark.anyio
async def test_warm_follows_the_graph_with_retries_depth_and_bounded_concurrency(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A graph is warmed: a cycle once, depth 10 fails, flaky on try 3, broken fails after 3.

    The flaky package completes on its third attempt after 30 s and 60 s of back-off; no
    package is fetched twice; at most ``workers`` requests reach the registry at once.
    """
    graph(fake_registry)
    fake_registry.host("npm").latency = 0.02
    root = checkout(tmp_path / "repo", {"app-a": "^1.0.0", "chain-0": "^1.0.0"})
    clock = FakeClock()
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, clock, workers=3) as w:
        assert len(await enqueue(w, root)) == 2
        result = await w.run()
    found = rows(cache_path)
    assert clock.sleeps == [30.0, 60.0]
    assert found["flaky"] == ("completed", 3, 2, None)
    assert found["broken"][:3] == ("failed", 3, 2)
    assert "HTTP 500" in (found["broken"][3] or "")
    for index in range(10):
        assert found[f"chain-{index}"] == ("completed", 1, index, None)
    assert found["chain-10"] == (
        "failed",
        1,
        10,
        "depth 10 reaches the limit of 10 (--cache-max-depth, PATCHULA_CACHE_MAX_DEPTH)",
    )
    assert "chain-11" not in found
    for name in ("app-a", "lib-b", "lib-c", "cyc-x", "cyc-y"):
        assert found[name][0] == "completed"
    # lib-c is reached at ~1.1.0 and ^1.0.0: when the second comes after it completed, it is
    # completed a second time (the range resolved again, from the cache: no request).
    assert result.completed in {16, 17}
    assert (result.failed, result.retried) == (2, 4)
    assert result.events[-1].left == 0
    assert max(e.left for e in result.events) > 1
    npm = fake_registry.host("npm")
    with npm.lock:
        routes = dict(npm.requests_by_route)
        peak = npm.peak_concurrency
    # No package is fetched twice: each packument and version document once; the failing
    # ones once per request of their attempts.
    assert routes.pop("GET /broken") == 3 * REQUESTS_PER_ATTEMPT
    assert routes.pop("GET /flaky") == 2 * REQUESTS_PER_ATTEMPT + 1
    assert set(routes.values()) == {1}
    assert "GET /chain-10" not in routes
    assert 1 < peak <= 3
    async with Cache.open(cache_path) as cache:
        summary = await cache.task_job(tasks.summary)
        failed = failed_json(await cache.task_job(tasks.failed))
    assert summary.counts == {"pending": 0, "in_progress": 0, "completed": 16, "failed": 2}
    broken = next(f for f in failed if f["package"] == "broken")
    assert broken["attempts"] == 3
    assert broken["datasource"] == "npm"
    assert "HTTP 500" in broken["error"]


@pytest.mark.anyio
async def test_no_wait_stops_at_the_first_pass_leaving_retries_queued(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Without waiting, a failed attempt stays pending with its retry time; nothing sleeps."""
    _add(fake_registry, "broken")
    fake_registry.host("npm").server_error_next(1000, 500, route="GET /broken")
    root = checkout(tmp_path / "repo", {"broken": "^1.0.0"})
    clock = FakeClock()
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, clock) as w:
        await enqueue(w, root)
        result = await w.run(wait=False)
    assert clock.sleeps == []
    assert result.retried == 1
    assert rows(cache_path)["broken"][:2] == ("pending", 1)
    async with Cache.open(cache_path) as cache:
        summary = await cache.task_job(tasks.summary)
    assert summary.next_retry == (EPOCH + timedelta(seconds=30)).timestamp()


@pytest.mark.anyio
async def test_a_second_warm_finds_everything_warm_and_fetches_nothing(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Completed warm tasks are fresh: enqueueing the same targets opens no task."""
    _add(fake_registry, "app-a", {"lib-b": "^1.0.0"})
    _add(fake_registry, "lib-b")
    root = checkout(tmp_path / "repo", {"app-a": "^1.0.0"})
    clock = FakeClock()
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, clock) as w:
        await enqueue(w, root)
        await w.run()
    fake_registry.reset_stats()
    clock.t += 10.0  # a later warm: only the cache's fresh answers make its tasks needless
    async with warmer(fake_registry, cache_path, clock) as w:
        assert await enqueue(w, root) == [None]
        result = await w.run()
    assert result.completed == 0
    assert fake_registry.host("npm").requests == 0


@pytest.mark.anyio
async def test_python_requirements_follow_markers_and_extras(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A PyPI release's requires_dist: markers for this platform, and the extras asked for."""
    fake_registry.pypi.add(
        "web",
        {"2.0": OLD},
        requires_dist={
            "2.0": [
                "http-lib[socks]>=1",
                "never-here; python_version < '3.0'",
                "docs-only; extra == 'docs'",
            ]
        },
    )
    fake_registry.pypi.add(
        "http-lib",
        {"1.5": OLD},
        requires_dist={"1.5": ["socks-lib; extra == 'socks'", "other-extra; extra == 'x'"]},
    )
    fake_registry.pypi.add("socks-lib", {"0.1": OLD})
    root = tmp_path / "repo"
    root.mkdir()
    (root / "requirements.txt").write_text("web>=1\n")
    clock = FakeClock()
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, clock) as w:
        await enqueue(w, root)
        await w.run()
    found = rows(cache_path)
    assert sorted(found) == ["http-lib", "socks-lib", "web"]
    assert {name: r[0] for name, r in found.items()} == dict.fromkeys(found, "completed")
    assert found["socks-lib"][2] == 2


def test_the_version_used_is_the_newest_the_constraint_admits() -> None:
    """A fresh install's choice: the newest non-yanked match, else the registry's latest."""
    catalog = Catalog(
        datasource="npm",
        package_name="p",
        releases=(
            Release("1.0.0", None),
            Release("1.2.0", None),
            Release("1.3.0", None, yanked=True),
            Release("2.0.0", None),
        ),
        latest="2.0.0",
        fetched_at=EPOCH,
    )
    assert choose_version(catalog, "^1.0.0", "npm") == "1.2.0"
    assert choose_version(catalog, "", "npm") == "2.0.0"
    assert choose_version(catalog, "^9.0.0", "npm") == "2.0.0"


def test_the_version_used_is_the_one_npm_and_run_resolve() -> None:
    """``^1.0.0`` with dist-tags.latest 1.0.0 and 1.5.0 published: 1.0.0; a tag: its version."""
    catalog = Catalog(
        datasource="npm",
        package_name="p",
        releases=(
            Release("1.0.0", None),
            Release("1.5.0", None),
            Release("2.0.0-beta.1", None),
        ),
        latest="1.0.0",
        fetched_at=EPOCH,
        dist_tags=(("latest", "1.0.0"), ("next", "2.0.0-beta.1")),
    )
    assert choose_version(catalog, "^1.0.0", "npm") == "1.0.0"
    assert choose_version(catalog, "next", "npm") == "2.0.0-beta.1"
    assert choose_version(catalog, "~1.5.0", "npm") == "1.5.0"
    assert choose_version(catalog, "1.0.0", "npm") == "1.0.0"


@pytest.mark.anyio
async def test_a_run_records_every_lookup_in_batches(tmp_path: Path) -> None:
    """Lookups.on_finish → TaskRecorder: 600 outcomes in 3 writer jobs, each recorded once."""
    catalog = Catalog("npm", "p", (Release("1.0.0", None),), "1.0.0", EPOCH)
    async with Cache.open(tmp_path / "c.sqlite3") as cache:
        recorder = TaskRecorder(cache, FakeClock(), max_attempts=3)
        async with anyio.create_task_group() as tg:
            lookups = Lookups(tg, None, Settings(), RegistryAccess(Settings()))  # type: ignore[arg-type]
            lookups.on_finish = recorder
            jobs_before = cache._writer.jobs_done
            for index in range(2 * RECORD_BATCH + 88):
                key = ("npm", f"pkg-{index}", "https://registry.npmjs.org", 0)
                failed = index % 100 == 0
                lookups._finish(key, RegistryError("HTTP 500") if failed else catalog)
            await recorder.aclose()
        assert cache._writer.jobs_done - jobs_before == 3
        summary = await cache.task_job(tasks.summary)
    assert summary.counts == {"pending": 6, "in_progress": 0, "completed": 594, "failed": 0}
    assert recorder.recorded == 600


@pytest.mark.anyio
async def test_an_offline_miss_is_not_an_attempt(tmp_path: Path) -> None:
    """A lookup --offline could not answer from the cache is not recorded as a failure."""
    async with Cache.open(tmp_path / "c.sqlite3") as cache:
        recorder = TaskRecorder(cache, FakeClock(), max_attempts=3)
        recorder(("npm", "a", "https://registry.npmjs.org", 0), NotCached("not in cache (offline)"))
        recorder(("npm", "b", "https://registry.npmjs.org", 0), RegistryError("HTTP 500"))
        await recorder.aclose()
        summary = await cache.task_job(tasks.summary)
    assert summary.counts["pending"] == 1
    assert recorder.recorded == 1


@pytest.mark.anyio
async def test_crates_and_go_modules_follow_their_own_documents(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A crate's index line deps (normal kind) and a Go module's go.mod requires become tasks."""
    fake_registry.crates.add(
        "app-crate",
        {"1.0.0": OLD},
        deps={
            "1.0.0": [
                {"name": "dep-crate", "req": "^0.2", "kind": "normal"},
                {"name": "dev-crate", "req": "^1", "kind": "dev"},
            ]
        },
    )
    fake_registry.crates.add("dep-crate", {"0.2.1": OLD})
    fake_registry.goproxy.add(
        "example.com/app", {"v1.0.0": OLD}, go_mod_extra="require example.com/lib v1.1.0\n"
    )
    fake_registry.goproxy.add("example.com/lib", {"v1.1.0": OLD, "v1.2.0": OLD})
    root = tmp_path / "repo"
    root.mkdir()
    (root / "Cargo.toml").write_text(
        '[package]\nname = "me"\nversion = "0.1.0"\n\n[dependencies]\napp-crate = "1"\n'
    )
    (root / "go.mod").write_text(
        "module example.com/me\n\ngo 1.21\n\nrequire example.com/app v1.0.0\n"
    )
    clock = FakeClock()
    cache_path = tmp_path / "cache.sqlite3"
    settings = Settings(
        registries={
            "crates": fake_registry.url("crates-index"),
            "goproxy": fake_registry.url("goproxy"),
        }
    )
    access = RegistryAccess(settings)
    async with Cache.open(cache_path) as cache:
        timer = Timer(monotonic=lambda: clock.t, wall=clock.now, sleep=_no_sleep)
        fetcher = Fetcher(cache=cache, credentials=access, timer=timer)
        w = Warmer(
            cache, fetcher, access, access.for_checkout(None), clock=clock, sleep=clock.sleep
        )
        _, found = extract_targets([str(root)], settings)
        new, views = enqueue_targets(found, access)
        await w.enqueue(new, views)
        await w.run()
        await fetcher.aclose()
    found_rows = rows(cache_path)
    assert {name: r[0] for name, r in found_rows.items()} == {
        "app-crate": "completed",
        "dep-crate": "completed",
        "example.com/app": "completed",
        "example.com/lib": "completed",
    }
    assert found_rows["example.com/lib"][2] == 1
    with sqlite3.connect(cache_path) as conn:
        (result,) = conn.execute(
            "SELECT result FROM lookup_tasks WHERE package = 'example.com/lib'"
        ).fetchone()
    assert json.loads(result)["version"] == "v1.1.0"  # the version required, not the newest


def test_task_settings_come_from_flags_env_and_config(tmp_path: Path) -> None:
    """Workers 5, depth 10, attempts 3 by default; config < PATCHULA_CACHE_* < flag."""
    from patchula.errors import ConfigError  # noqa: PLC0415 - only here
    from patchula.settings import load_settings  # noqa: PLC0415 - only here

    defaults = load_settings({}, env={}, cwd=tmp_path)
    assert (defaults.cache_workers, defaults.cache_max_depth, defaults.cache_max_attempts) == (
        5,
        10,
        3,
    )
    (tmp_path / "patchula.toml").write_text(
        "cache-workers = 2\ncache-max-depth = 4\ncache-max-attempts = 6\n"
    )
    env = {"PATCHULA_CACHE_WORKERS": "7", "PATCHULA_CACHE_MAX_DEPTH": "8"}
    s = load_settings({"cache_workers": 9}, env=env, cwd=tmp_path)
    assert (s.cache_workers, s.cache_max_depth, s.cache_max_attempts) == (9, 8, 6)
    with pytest.raises(ConfigError, match="PATCHULA_CACHE_WORKERS"):
        load_settings({}, env={"PATCHULA_CACHE_WORKERS": "0"}, cwd=tmp_path)


@pytest.mark.anyio
async def test_a_version_naming_too_many_dependencies_is_followed_only_so_far(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """At most MAX_CHILDREN dependencies of one version become tasks; the result says how many."""
    monkeypatch.setattr("patchula.warm.MAX_CHILDREN", 3)
    _add(fake_registry, "wide", {f"d{i}": "^1.0.0" for i in range(5)})
    root = checkout(tmp_path / "repo", {"wide": "^1.0.0"})
    cache_path = tmp_path / "cache.sqlite3"
    clock = FakeClock()
    async with warmer(fake_registry, cache_path, clock, max_depth=1) as w:
        await enqueue(w, root)
        await w.run()
    found = rows(cache_path)
    assert sorted(found) == ["d0", "d1", "d2", "wide"]
    assert found["d0"][0] == "failed"  # depth 1 reaches the limit of 1: never fetched
    with sqlite3.connect(cache_path) as conn:
        (result,) = conn.execute(
            "SELECT result FROM lookup_tasks WHERE package = 'wide'"
        ).fetchone()
    assert (json.loads(result)["dependencies"], json.loads(result)["followed"]) == (5, 3)


@pytest.mark.anyio
async def test_a_queue_that_cannot_be_written_fails_the_run_as_itself(
    fake_registry: FakeRegistry, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """A refused task write ends the run with CacheUnavailable, not an exception group."""
    from patchula.cache import CacheUnavailable  # noqa: PLC0415 - only here

    _add(fake_registry, "app")
    root = checkout(tmp_path / "repo", {"app": "^1.0.0"})
    clock = FakeClock()
    async with warmer(fake_registry, tmp_path / "cache.sqlite3", clock) as w:
        await enqueue(w, root)
        real = w._cache.task_job

        async def refuse(run: object) -> object:
            if getattr(run, "func", None) is tasks.still_claimed:
                raise CacheUnavailable("database is locked")
            return await real(run)  # type: ignore[arg-type]

        monkeypatch.setattr(w._cache, "task_job", refuse)
        with pytest.raises(CacheUnavailable, match="locked"):
            await w.run()


@pytest.mark.anyio
async def test_a_hostile_dependency_name_fails_its_own_task_only(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A dependency named ``../x`` by a registry: its task fails unrequested; others go on."""
    _add(fake_registry, "app", {"../../admin": "^1.0.0", "ok": "^1.0.0"})
    _add(fake_registry, "ok")
    root = checkout(tmp_path / "repo", {"app": "^1.0.0"})
    clock = FakeClock()
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, clock) as w:
        await enqueue(w, root)
        await w.run()
    found = rows(cache_path)
    assert (found["app"][0], found["ok"][0]) == ("completed", "completed")
    assert found["../../admin"][0] == "failed"
    assert "unsafe in a URL" in (found["../../admin"][3] or "")
    with fake_registry.host("npm").lock:
        routes = dict(fake_registry.host("npm").requests_by_route)
    assert not any("admin" in route for route in routes)


@pytest.mark.anyio
async def test_a_dependency_name_over_the_length_bound_is_never_queued(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A registry naming a 100,000-character dependency: no task, no request; others go on."""
    long_name = "a" * 100_000
    _add(fake_registry, "app", {long_name: "^1.0.0", "ok": "^1.0.0"})
    _add(fake_registry, "ok")
    root = checkout(tmp_path / "repo", {"app": "^1.0.0"})
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, FakeClock()) as w:
        await enqueue(w, root)
        await w.run()
    found = rows(cache_path)
    assert sorted(found) == ["app", "ok"]
    assert (found["app"][0], found["ok"][0]) == ("completed", "completed")
    with fake_registry.host("npm").lock:
        routes = dict(fake_registry.host("npm").requests_by_route)
    assert all(len(route) < 1_000 for route in routes)


@pytest.mark.anyio
async def test_permanent_errors_fail_at_once_and_transient_ones_back_off(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A 404 and an invalid body fail on their first attempt; a 503 is retried after 30 s."""
    _add(fake_registry, "gone")
    _add(fake_registry, "garbled")
    _add(fake_registry, "busy")
    npm = fake_registry.host("npm")
    npm.server_error_next(1000, 404, route="GET /gone")
    npm.fail_next(1000, 200, {}, b"{not json", route="GET /garbled")
    npm.server_error_next(REQUESTS_PER_ATTEMPT, 503, route="GET /busy")
    root = checkout(tmp_path / "repo", {"gone": "^1.0.0", "garbled": "^1.0.0", "busy": "^1.0.0"})
    clock = FakeClock()
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, clock) as w:
        await enqueue(w, root)
        await w.run()
    found = rows(cache_path)
    assert found["gone"][:2] == ("failed", 1)
    assert "not found (404" in (found["gone"][3] or "")
    assert found["garbled"][:2] == ("failed", 1)
    assert found["busy"][:2] == ("completed", 2)
    assert clock.sleeps == [30.0]


@pytest.mark.anyio
async def test_a_failed_version_document_completes_the_package_saying_so(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A 404 of the version document: the catalog is stored, its dependencies are unknown."""
    _add(fake_registry, "app", {"lib": "^1.0.0"})
    fake_registry.host("npm").server_error_next(1000, 404, route="GET /app/1.1.0")
    root = checkout(tmp_path / "repo", {"app": "^1.0.0"})
    clock = FakeClock()
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, clock) as w:
        await enqueue(w, root)
        result = await w.run()
    found = rows(cache_path)
    assert found["app"][:2] == ("completed", 1)
    assert "lib" not in found
    (unknown,) = result.unknown_dependencies
    assert unknown.startswith("dependencies of app@1.1.0 unknown: npm package 'app' version")
    assert "not found (404" in unknown
    with sqlite3.connect(cache_path) as conn:
        (stored,) = conn.execute("SELECT result FROM lookup_tasks WHERE package = 'app'").fetchone()
    assert json.loads(stored)["dependenciesUnknown"] == unknown
    # ``cache status`` says so afterwards too, not only this warm's output.
    with sqlite3.connect(cache_path) as conn:
        assert tasks.summary(conn).dependencies_unknown == 1


@pytest.mark.anyio
async def test_the_extras_of_a_direct_python_requirement_are_followed(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``pa[socks]>=1.0`` in requirements.txt: pa's requirements of extra ``socks`` are tasks."""
    fake_registry.pypi.add(
        "pa",
        {"1.2": OLD},
        requires_dist={"1.2": ["socks-lib; extra == 'socks'", "docs-lib; extra == 'docs'"]},
    )
    fake_registry.pypi.add("socks-lib", {"0.1": OLD})
    root = tmp_path / "repo"
    root.mkdir()
    (root / "requirements.txt").write_text("pa[socks]>=1.0\n")
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, FakeClock()) as w:
        await enqueue(w, root)
        await w.run()
    found = rows(cache_path)
    assert sorted(found) == ["pa", "socks-lib"]
    assert found["socks-lib"][:3] == ("completed", 1, 1)


def _bases(cache_path: Path, package: str) -> list[tuple[str, str]]:
    """(base URL, status) of each task of ``package``."""
    with sqlite3.connect(cache_path) as conn:
        found = conn.execute(
            "SELECT base_url, status FROM lookup_tasks WHERE package = ? ORDER BY id", (package,)
        ).fetchall()
    return [(r[0], r[1]) for r in found]


@pytest.mark.anyio
async def test_another_registry_is_another_task(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """Warm through 127.0.0.1, then through localhost: not "already warm", a task of its own."""
    _add(fake_registry, "app")
    root = checkout(tmp_path / "repo", {"app": "^1.0.0"})
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, FakeClock()) as w:
        await enqueue(w, root)
        await w.run()
    mirror = fake_registry.url("npm").replace("127.0.0.1", "localhost")
    async with warmer(fake_registry, cache_path, FakeClock(), npm_url=mirror) as w:
        (ident,) = await enqueue(w, root)
    assert ident is not None
    assert _bases(cache_path, "app") == [
        (fake_registry.url("npm").rstrip("/"), "completed"),
        (mirror.rstrip("/"), "pending"),
    ]


@pytest.mark.anyio
async def test_warm_is_what_the_cache_holds_not_a_completed_row(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """After the HTTP entries went (prune, eviction), a second warm fetches them again."""
    _add(fake_registry, "app", {"lib": "^1.0.0"})
    _add(fake_registry, "lib")
    root = checkout(tmp_path / "repo", {"app": "^1.0.0"})
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, FakeClock()) as w:
        await enqueue(w, root)
        await w.run()
    with sqlite3.connect(cache_path) as conn:
        conn.execute("DELETE FROM http_entries")
    fake_registry.reset_stats()
    async with warmer(fake_registry, cache_path, FakeClock(t=10.0)) as w:
        assert (await enqueue(w, root))[0] is not None
        result = await w.run()
    assert result.completed == 2
    with fake_registry.host("npm").lock:
        routes = dict(fake_registry.host("npm").requests_by_route)
    assert routes == {"GET /app": 1, "GET /app/1.1.0": 1, "GET /lib": 1, "GET /lib/1.1.0": 1}


@pytest.mark.anyio
async def test_a_target_failed_for_good_is_tried_again_by_a_new_warm(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A new ``cache warm`` asks for its targets now: a failed task is reopened, attempts reset."""
    root = checkout(tmp_path / "repo", {"late": "^1.0.0"})
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, FakeClock()) as w:
        await enqueue(w, root)
        await w.run()
    assert rows(cache_path)["late"][:2] == ("failed", 1)
    _add(fake_registry, "late")
    async with warmer(fake_registry, cache_path, FakeClock()) as w:
        assert (await enqueue(w, root))[0] is not None
        await w.run()
    assert rows(cache_path)["late"] == ("completed", 1, 0, None)


@pytest.mark.anyio
async def test_a_queued_retry_goes_to_the_checkouts_registry_or_fails(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A retry by a later warm uses the checkout's .npmrc registry; a gone checkout fails it.

    The user's npm registry is a closed loopback port: asking it would be the dependency
    confusion the stored base URL prevents.
    """
    _add(fake_registry, "private-a")
    _add(fake_registry, "private-b")
    npm = fake_registry.host("npm")
    npm.server_error_next(REQUESTS_PER_ATTEMPT * 2, 503, route="GET /private-a")
    npm.server_error_next(REQUESTS_PER_ATTEMPT, 503, route="GET /private-b")
    keep = checkout(tmp_path / "keep", {"private-a": "^1.0.0"})
    gone = checkout(tmp_path / "gone", {"private-b": "^1.0.0"})
    for root in (keep, gone):
        (root / ".npmrc").write_text(f"registry={fake_registry.url('npm')}\n")
    cache_path = tmp_path / "cache.sqlite3"
    home = tmp_path / "home"
    home.mkdir()
    (home / ".npmrc").write_text("registry=http://127.0.0.1:9/\n")
    clock = FakeClock()
    async with warmer(fake_registry, cache_path, clock, home=home) as w:
        await enqueue(w, keep)
        await enqueue(w, gone)
        await w.run(wait=False)
    assert rows(cache_path)["private-a"][:2] == ("pending", 1)
    (gone / ".npmrc").unlink()
    (gone / "package.json").unlink()
    gone.rmdir()
    clock.t += 3600
    async with warmer(fake_registry, cache_path, clock, home=home) as w:
        await w.run()
    found = rows(cache_path)
    assert found["private-a"][:2] == ("completed", 3)
    assert found["private-b"][0] == "failed"
    assert f"the checkout {gone} it was enqueued from is gone" in (found["private-b"][3] or "")


@pytest.mark.anyio
async def test_a_package_reached_at_another_version_follows_that_versions_dependencies(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``shared`` at ^1 (1.1.0 needs one-dep) and ^2 (2.0.0 needs two-dep): both followed."""
    fake_registry.npm.add(
        "shared",
        {"1.1.0": OLD, "2.0.0": OLD},
        dependencies={"1.1.0": {"one-dep": "^1.0.0"}, "2.0.0": {"two-dep": "^1.0.0"}},
    )
    _add(fake_registry, "uses-one", {"shared": "^1.0.0"})
    _add(fake_registry, "uses-two", {"shared": "^2.0.0"})
    _add(fake_registry, "one-dep")
    _add(fake_registry, "two-dep")
    root = checkout(tmp_path / "repo", {"uses-one": "^1.0.0", "uses-two": "^1.0.0"})
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, FakeClock(), workers=1) as w:
        await enqueue(w, root)
        await w.run()
    found = rows(cache_path)
    assert {name: r[0] for name, r in found.items()} == dict.fromkeys(
        ["uses-one", "uses-two", "shared", "one-dep", "two-dep"], "completed"
    )
    with sqlite3.connect(cache_path) as conn:
        (followed,) = conn.execute(
            "SELECT followed FROM lookup_tasks WHERE package = 'shared'"
        ).fetchone()
    assert sorted(json.loads(followed)["versions"]) == ["1.1.0", "2.0.0"]
    with fake_registry.host("npm").lock:
        routes = dict(fake_registry.host("npm").requests_by_route)
    assert routes["GET /shared"] == 1


@pytest.mark.anyio
async def test_a_dependency_of_a_dependency_follows_the_checkouts_lockfile(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """package-lock locks lib at 1.0.0 (its range admits 1.1.0): lib@1.0.0's needs are followed."""
    _add(fake_registry, "app", {"lib": "^1.0.0"})
    fake_registry.npm.add(
        "lib",
        {"1.0.0": OLD, "1.1.0": OLD},
        dependencies={"1.0.0": {"old-dep": "^1.0.0"}, "1.1.0": {"new-dep": "^1.0.0"}},
    )
    _add(fake_registry, "old-dep")
    _add(fake_registry, "new-dep")
    root = checkout(tmp_path / "repo", {"app": "^1.0.0"})
    lock = {
        "name": "repo",
        "lockfileVersion": 3,
        "packages": {
            "": {"dependencies": {"app": "^1.0.0"}},
            "node_modules/app": {"version": "1.1.0"},
            "node_modules/lib": {"version": "1.0.0"},
        },
    }
    (root / "package-lock.json").write_text(json.dumps(lock))
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, FakeClock()) as w:
        await enqueue(w, root)
        await w.run()
    found = rows(cache_path)
    assert sorted(found) == ["app", "lib", "old-dep"]
    assert found["old-dep"][0] == "completed"


@pytest.mark.anyio
async def test_a_retry_keeps_its_dependencies_on_the_mirror_it_was_enqueued_for(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """A ``--registry`` mirror's task retried by a later warm without it: its children stay.

    The later process's npm registry is a closed loopback port (the user's ~/.npmrc): asking
    it for the private child would be the dependency confusion the inherited base URL prevents.
    """
    _add(fake_registry, "late", {"private-child": "^1.0.0"})
    _add(fake_registry, "private-child")
    fake_registry.host("npm").server_error_next(REQUESTS_PER_ATTEMPT, 503, route="GET /late")
    root = checkout(tmp_path / "repo", {"late": "^1.0.0"})
    cache_path = tmp_path / "cache.sqlite3"
    clock = FakeClock()
    async with warmer(fake_registry, cache_path, clock) as w:  # npm = the mirror (a flag)
        await enqueue(w, root)
        await w.run(wait=False)
    assert rows(cache_path)["late"][0] == "pending"
    home = tmp_path / "home"
    home.mkdir()
    (home / ".npmrc").write_text("registry=http://127.0.0.1:9/\n")
    clock.t += 3600
    async with warmer(fake_registry, cache_path, clock, home=home) as w:
        await w.run()
    found = rows(cache_path)
    assert found["late"][0] == "completed"
    assert found["private-child"][0] == "completed", found["private-child"]


def test_a_locked_version_is_followed_exactly_in_every_versioning() -> None:
    """Cargo reads a bare ``1.0.0`` as ``^1.0.0`` and PEP 440 has no bare version: pinned."""
    assert [_locked(d, "1.0.0") for d in ("crates", "pypi", "npm", "goproxy")] == [
        "=1.0.0",
        "==1.0.0",
        "1.0.0",
        "1.0.0",
    ]
    for datasource, versioning in (("crates", "cargo"), ("pypi", "pep440")):
        catalog = Catalog(
            datasource=datasource,
            package_name="p",
            releases=(Release("1.0.0", None), Release("1.2.0", None)),
            latest="1.2.0",
            fetched_at=EPOCH,
        )
        assert choose_version(catalog, _locked(datasource, "1.0.0"), versioning) == "1.0.0"


@pytest.mark.parametrize(
    "constraint", ["=0.11.0+wasi-snapshot-preview1", "=0.11.0", "=0.11.0+other", "~0.11.0"]
)
def test_the_version_followed_is_spelled_as_the_registry_publishes_it(constraint: str) -> None:
    """A pin or lock naming a crate up to build metadata follows the release the index names."""
    catalog = Catalog(
        datasource="crates",
        package_name="wasi",
        releases=(
            Release("0.10.0+wasi-snapshot-preview1", None),
            Release("0.11.0+wasi-snapshot-preview1", None),
        ),
        latest="0.11.0+wasi-snapshot-preview1",
        fetched_at=EPOCH,
    )
    assert choose_version(catalog, constraint, "cargo") == "0.11.0+wasi-snapshot-preview1"


@pytest.mark.anyio
async def test_a_larger_depth_limit_takes_up_tasks_a_smaller_one_failed(
    fake_registry: FakeRegistry, tmp_path: Path
) -> None:
    """``--cache-max-depth 1`` fails the grandchildren; a warm with 10 completes them."""
    _add(fake_registry, "top", {"mid": "^1.0.0"})
    _add(fake_registry, "mid", {"leaf": "^1.0.0"})
    _add(fake_registry, "leaf")
    root = checkout(tmp_path / "repo", {"top": "^1.0.0"})
    cache_path = tmp_path / "cache.sqlite3"
    clock = FakeClock()
    async with warmer(fake_registry, cache_path, clock, max_depth=1) as w:
        await enqueue(w, root)
        await w.run()
    assert rows(cache_path)["mid"][0] == "failed"
    async with warmer(fake_registry, cache_path, clock, max_depth=10) as w:
        await enqueue(w, root)
        await w.run()
    found = rows(cache_path)
    assert {name: r[0] for name, r in found.items()} == dict.fromkeys(
        ["top", "mid", "leaf"], "completed"
    )


@pytest.mark.anyio
@pytest.mark.parametrize(
    "packages",
    [
        # 9.x keys, a peer suffix on one; 6.x keys; 5.x keys
        (
            "packages:\n\n  app@1.1.0:\n    resolution: {integrity: sha512-a}\n\n"
            "  lib@1.0.0(react@18.2.0):\n    resolution: {integrity: sha512-b}\n"
        ),
        (
            "packages:\n\n  /app@1.1.0:\n    resolution: {integrity: sha512-a}\n"
            "  '/lib@1.0.0':\n    resolution: {integrity: sha512-b}\n"
        ),
        "packages:\n\n  /app/1.1.0:\n    dev: false\n  /lib/1.0.0_react@18.2.0:\n    dev: false\n",
    ],
)
async def test_a_pnpm_lock_pins_dependencies_of_dependencies(
    fake_registry: FakeRegistry, tmp_path: Path, packages: str
) -> None:
    """pnpm-lock.yaml's ``packages`` keys lock lib at 1.0.0: lib@1.0.0's needs are followed."""
    _add(fake_registry, "app", {"lib": "^1.0.0"})
    fake_registry.npm.add(
        "lib",
        {"1.0.0": OLD, "1.1.0": OLD},
        dependencies={"1.0.0": {"old-dep": "^1.0.0"}, "1.1.0": {"new-dep": "^1.0.0"}},
    )
    _add(fake_registry, "old-dep")
    _add(fake_registry, "new-dep")
    root = checkout(tmp_path / "repo", {"app": "^1.0.0"})
    (root / "pnpm-lock.yaml").write_text(
        "lockfileVersion: '9.0'\n\nimporters:\n\n  .:\n    dependencies:\n      app:\n"
        "        specifier: ^1.0.0\n        version: 1.1.0\n\n" + packages
    )
    cache_path = tmp_path / "cache.sqlite3"
    async with warmer(fake_registry, cache_path, FakeClock()) as w:
        await enqueue(w, root)
        await w.run()
    found = rows(cache_path)
    assert sorted(found) == ["app", "lib", "old-dep"]


def test_an_alternative_registry_crate_is_not_warmed(tmp_path: Path) -> None:
    """``registry = "corp"``: its name is never asked of crates.io; crates.io's crates are."""
    (tmp_path / "Cargo.toml").write_text(
        '[package]\nname = "app"\nversion = "0.1.0"\n[dependencies]\n'
        'secret-crate = { version = "1", registry = "corp" }\nserde = "1"\n'
        'regex = { version = "1", registry = "crates-io" }\n'
    )
    _, found = extract_targets([str(tmp_path)], Settings())
    assert [item.dep.package_name for item in found] == ["serde", "regex"]
