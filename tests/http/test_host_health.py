"""Host health: one failing URL on a host that answers others never condemns the whole host."""

from __future__ import annotations

from datetime import UTC, datetime, timedelta
from pathlib import Path

import anyio.lowlevel
import pytest

from patchula.clock import FixedClock
from patchula.http.fetcher import Fetcher, Timer, make_client
from patchula.models import Finding
from patchula.scan import scan
from patchula.settings import Settings
from tests.fake_registry import FakeRegistry

OLD = datetime(2025, 1, 1, tzinfo=UTC)
NEW = OLD + timedelta(days=30)
MODULES = 40
BROKEN = "example.com/m3"


async def _no_wait(_seconds: float) -> None:
    await anyio.lowlevel.checkpoint()


def _checkout(root: Path, modules: range) -> str:
    root.mkdir()
    requires = "".join(f"\texample.com/m{i} v1.0.0\n" for i in modules)
    (root / "go.mod").write_text(f"module example.com/app\n\ngo 1.21\n\nrequire (\n{requires})\n")
    return str(root)


@pytest.mark.anyio
async def test_one_resetting_go_list_fails_only_its_module(tmp_path: Path) -> None:
    """Go modules on one proxy, one @v/list resetting every time: only that module's row fails.

    Two scans share one fetcher (as lookups of one run do): the first meets the resetting
    module after the proxy has answered others; the second's lookups still get answers and
    publish times instead of "unreachable; not retried".
    """
    with FakeRegistry() as registry:
        for i in range(MODULES):
            registry.goproxy.add(f"example.com/m{i}", {"v1.0.0": OLD, "v1.1.0": NEW})
        goproxy = registry.host("goproxy")
        goproxy.reset_next(100, route=f"GET /{BROKEN}/@v/list")
        settings = Settings.model_validate({"registries": {"goproxy": goproxy.url}})
        findings: dict[str, Finding] = {}
        async with make_client() as client:
            fetcher = Fetcher(client, timer=Timer(sleep=_no_wait))  # back-off pauses instant
            for name, modules in (("first", range(MODULES // 2)), ("second", range(20, 40))):
                result = await scan(
                    [_checkout(tmp_path / name, modules)],
                    settings,
                    fetcher,
                    FixedClock(datetime.now(UTC)),
                )
                findings |= {
                    r.dependency.name: r.finding
                    for r in result.repos[0].rows
                    if r.dependency.name.startswith("example.com/")
                }
        assert registry.errors == []
    assert {name for name, f in findings.items() if f.status == "error"} == {BROKEN}
    assert "gave up after 3 retries" in (findings[BROKEN].reason or "")
    healthy = [f for name, f in findings.items() if name != BROKEN]
    assert len(healthy) == MODULES - 1
    assert {(f.status, f.latest, f.latest_released_at) for f in healthy} == {
        ("outdated", "v1.1.0", NEW)
    }
    assert goproxy.requests_by_route[f"GET /{BROKEN}/@v/list"] == 4
